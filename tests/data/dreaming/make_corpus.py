#!/usr/bin/env python3
"""Writes the Dreaming fixture corpus (tests/data/dreaming/corpus/) in three ingest formats.

Thirteen short conversations about five recurring, invented-neutral subjects (sourdough baking,
bicycle upkeep, a balcony garden, cello practice, home solar panels) plus a few one-off subjects.
The words that the scripted fake backend (tests/support/dreaming_fake.c) recognises are listed in
EXPECTED.txt next to this script, with the chunks, entities and routes the pipeline must produce.
Run from anywhere: python3 make_corpus.py  (the output is committed; rerun only after edits).
"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")

# (title, ISO date or None, [user, assistant, user, assistant, ...])
CLAUDE = [
    ("Feeding a new sourdough starter", "2024-01-10T09:00:00", [
        "I started a sourdough starter five days ago. How often should I feed it?",
        "Twice a day at room temperature; discard half of it before each feeding.",
        "It smells a bit like nail polish. Is that a problem?",
        "That smell means it is hungry. Feed it more often and it settles down.",
        "Different question: my bicycle maintenance is overdue. What should I check first?",
        "Tyre pressure, then the brakes, then clean and oil the chain."]),
    ("Thirty minutes of cello practice", "2024-02-03T18:30:00", [
        "I have thirty minutes a day for cello practice. How should I split them?",
        "Ten minutes of scales, ten of studies, ten of pieces you enjoy.",
        "Should I record myself?",
        "Yes, once a week; you will hear intonation problems you miss while playing."]),
    ("Planning a balcony garden", "2024-03-15T10:00:00", [
        "I want to start a balcony garden this spring. It faces south.",
        "South is ideal: tomatoes, peppers and herbs all like full sun.",
        "How many hours of sun do they need?",
        "At least six hours of direct sun a day.",
        "Also, I am thinking about solar panels for the house roof.",
        "Check the roof's orientation and shading first, then get two quotes."]),
    ("A weekend on the lake", "2024-04-20T08:00:00", [
        "We are planning a kayak weekend on the lake. What should we pack?",
        "Dry bags, a spare paddle, sunscreen and a whistle each.",
        "Back to bread: my sour-dough loaf came out flat.",
        "A flat loaf usually means it was baked past its peak; bake when it has doubled."]),
    ("Tools for a long ride", "2024-05-02T07:15:00", [
        "Which tools do I need for bike repair on a long ride?",
        "A multitool, tyre levers, a spare tube and a mini pump.",
        "And if the derailleur gets knocked out of line?",
        "Bend the hanger back gently, then adjust the limit screws."]),
]

PI = [
    ("After the first lesson", "2024-06-01T17:00:00", "0198d001-0000-7000-8000-000000000001", [
        "After my first cello lesson my left hand aches. Is that normal?",
        "Yes, for the first weeks; keep the thumb relaxed and take breaks.",
        "Any warm-up you recommend?",
        "Slow open-string bowing and finger taps for five minutes."]),
    ("Yellow leaves and a flickering display", "2024-07-12T12:00:00", "0198d002-0000-7000-8000-000000000002", [
        "My balcony tomatoes have yellow leaves at the bottom.",
        "Lower leaves yellow first when the plant needs nitrogen; feed it weekly.",
        "Could the inverter of my home solar setup be failing if its display flickers?",
        "A flickering display often points to a loose connection; call the installer."]),
    ("Openings for a beginner", "2024-08-30T20:00:00", "0198d003-0000-7000-8000-000000000003", [
        "What are good chess openings for a beginner?",
        "The Italian Game and the London System are both easy to learn.",
        "Which one is better against aggressive players?",
        "The London System: solid and hard to attack early.",
        "And what should I study after that?",
        "Basic endgames, king and pawn first."]),
    ("Levain or starter", "2024-09-14T06:45:00", "0198d004-0000-7000-8000-000000000004", [
        "Is levain the same thing as a starter?",
        "Mostly: it is a portion of starter built up for one bake.",
        "Nothing else today, thanks.",
        "Enjoy the bake."]),
]

# openai-jsonl has no dates: these sort after every dated conversation, in line order.
OPENAI = [
    ["My teacher says my bow hold is too stiff.",
     "Let the weight of the arm go into the string; the fingers only balance the stick."],
    ["Do balcony planters need drainage holes?",
     "Yes, and a layer of gravel at the bottom helps.",
     "How do I file a tax return as a freelancer?",
     "Keep every invoice and receipt, and register for the self-employed form."],
    ["What does the derailleur limit screw do?",
     "It stops the chain from falling off the largest or smallest sprocket."],
    ["Hello!",
     "Hello! How can I help today?"],
]


def ms(iso):
    import datetime
    return int(datetime.datetime.fromisoformat(iso).replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def iso_z(t):
    import datetime
    return datetime.datetime.fromtimestamp(t / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


# A later export in which "Planning a balcony garden" has grown by one exchange (grown/): only
# its last chunk changes, so only that chunk may be extracted again.
GROWN = {2: ["One more thing about the home solar setup: is a battery worth it?",
             "Only if you use most of your power in the evening."]}


def claude(grown=False):
    convs = []
    for k, (title, date, texts) in enumerate(CLAUDE):
        if grown and k not in GROWN:
            continue
        if grown:
            texts = texts + GROWN[k]
        t0 = ms(date)
        msgs = []
        for i, text in enumerate(texts):
            stamp = iso_z(t0 + i * 60000)
            msgs.append({"uuid": "dr-c%d-m%d" % (k + 1, i), "sender": "human" if i % 2 == 0 else "assistant",
                         "text": text, "content": [{"type": "text", "text": text}],
                         "created_at": stamp, "updated_at": stamp, "attachments": [], "files": []})
        convs.append({"uuid": "d0e1f2a3-0000-4000-8000-00000000000%d" % (k + 1), "name": title, "summary": "",
                      "created_at": iso_z(t0), "updated_at": iso_z(t0 + (len(texts) - 1) * 60000),
                      "account": {"uuid": "acc-fixture"}, "chat_messages": msgs})
    where = os.path.join(HERE, "grown", "claude") if grown else os.path.join(OUT, "claude")
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, "conversations.json"), "w") as f:
        json.dump(convs, f, indent=1, ensure_ascii=False)
        f.write("\n")


def pi():
    os.makedirs(os.path.join(OUT, "pi"), exist_ok=True)
    for k, (title, date, sid, texts) in enumerate(PI):
        t0 = ms(date)
        lines = [{"type": "session", "version": 3, "id": sid, "timestamp": iso_z(t0), "cwd": "/home/user"},
                 {"type": "session_info", "timestamp": iso_z(t0), "name": title}]
        parent = None
        for i, text in enumerate(texts):
            mid = "p%d%02d" % (k + 1, i + 1)
            t = t0 + i * 60000
            if i % 2 == 0:
                message = {"role": "user", "content": text, "timestamp": t}
            else:
                message = {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": t}
            lines.append({"type": "message", "id": mid, "parentId": parent, "timestamp": iso_z(t), "message": message})
            parent = mid
        name = "%s_%s.jsonl" % (iso_z(t0).replace(":", "-").replace(".", "-"), sid)
        with open(os.path.join(OUT, "pi", name), "w") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")


def openai():
    os.makedirs(os.path.join(OUT, "openai"), exist_ok=True)
    with open(os.path.join(OUT, "openai", "chats.jsonl"), "w") as f:
        for texts in OPENAI:
            msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
            f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    claude()
    claude(grown=True)
    pi()
    openai()
