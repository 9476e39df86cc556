#!/usr/bin/env python3
"""ask_questions.py — the questions train/record_ask.sh asks of a dreamed corpus.

  ask_questions.py --truth TRUTH.json --wiki WIKI_DIR > questions.json

For each subject of the truth that has an article in WIKI_DIR: one question about the subject as a
whole ("What do I know about Killdeer?") and one per fact key, up to three ("What is Killdeer's
finish?"); then negatives, whose gold answer is NOTHING ON FILE: two about an attribute no fact
of a subject gives ("What is Killdeer's serial number?"), one personal question nothing answers,
and two about names the corpus never mentions (an everyday thing, a pseudo-word). Each question is written with its subject id and key, which the
oracle (--questions) answers from. Deterministic from the truth's seed.
"""
import argparse
import glob
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import Truth  # noqa: E402

ABOUT = ["What do I know about {n}?", "Tell me about {n}.", "What have I said about {n}?", "Remind me about {n}."]
KEYED = ["What is {n}'s {k}?", "What did I say about the {k} of {n}?", "Remind me: what's the {k} for {n}?",
         "What about the {k} of {n}?"]
ELSEWHERE = ["my kayak", "the piano lessons", "my accountant", "the greenhouse", "my telescope", "the book club",
             "my sailing trip", "the chess club", "my electric scooter", "the wedding speech"]
ABSENT = ["shoe size", "phone number", "licence plate", "favourite song", "serial number", "middle name",
          "warranty number", "password", "blood type", "insurance policy number"]
PERSONAL = ["What is my passport number?", "Which airline did I fly last spring?", "What is my bank's sort code?",
            "Which dentist did I see last year?", "What did I get for my tenth birthday?", "How tall is my neighbour?"]
SYL = ["bra", "mo", "tel", "vin", "ka", "dro", "sen", "lu", "fa", "rik", "po", "zen", "gar", "thi", "wen"]


def titles(wiki):
    out = []
    for path in sorted(glob.glob(os.path.join(wiki, "articles", "*.md"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# "):
                    out.append(line[2:].strip())
                    break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--truth", required=True)
    ap.add_argument("--wiki", required=True)
    a = ap.parse_args()
    t = Truth(a.truth)
    rng = random.Random(f"dream-ask/{t.raw.get('seed')}/{t.raw.get('catalogue')}")
    qs, seen = [], set()

    def add(q, sid, key):
        if q not in seen:
            seen.add(q)
            qs.append({"question": q, "subject": sid, "key": key})

    for title in titles(a.wiki):
        sid = t.subject_for_name(title)
        if sid is None:
            continue
        name = t.subjects[sid]["name"]
        add(rng.choice(ABOUT).format(n=name), sid, None)
        keys = list(dict.fromkeys(f["key"] for f in t.subjects[sid]["facts"] if f.get("key")))
        rng.shuffle(keys)
        for k in keys[:3]:
            add(rng.choice(KEYED).format(n=name, k=k.replace("_", " ")), sid, k)
    others = [x for x in ELSEWHERE if t.subject_for_name(x) is None and not any(
        re.search(r"\b" + re.escape(w) + r"\b", json.dumps(t.raw), re.I) for w in x.split()[-1:])]
    for x in rng.sample(others, min(1, len(others))):
        add(rng.choice(ABOUT).format(n=x), None, None)
    subjects = [q["subject"] for q in qs if q["subject"]]
    for sid in rng.sample(sorted(set(subjects)), min(2, len(set(subjects)))):
        add(rng.choice(KEYED).format(n=t.subjects[sid]["name"], k=rng.choice(ABSENT)), sid, "absent")
    add(rng.choice(PERSONAL), None, None)
    word = "".join(rng.choice(SYL) for _ in range(3)).capitalize()
    if t.subject_for_name(word) is None:
        add(rng.choice(ABOUT).format(n=word), None, None)
    json.dump(qs, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
