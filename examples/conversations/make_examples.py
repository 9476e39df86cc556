#!/usr/bin/env python3
"""Writes the bundled sample corpus: invented conversations of one invented person, Mara, in three
export formats (ChatGPT, Claude.ai, Claude Code). Three subjects recur across conversations and
formats, and some facts change over time (her dough's hydration, her commute route), so the
Dreaming has articles to create, patch and reconcile. `make demo` ingests this directory.

Run from this directory: python3 make_examples.py
"""
import json, os
from datetime import datetime, timezone

def ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

# ------------------------------------------------------------------ ChatGPT
def chatgpt_conv(cid, title, start, turns):
    t = ts(start)
    mapping = {"root": {"id": "root", "parent": None, "children": [], "message": None}}
    parent = "root"
    for i, (role, text) in enumerate(turns):
        nid = f"{cid[:8]}-n{i}"
        mapping[parent]["children"].append(nid)
        mapping[nid] = {"id": nid, "parent": parent, "children": [],
                        "message": {"id": nid, "author": {"role": role, "name": None, "metadata": {}},
                                    "create_time": t + 60 * i, "update_time": None,
                                    "content": {"content_type": "text", "parts": [text]},
                                    "status": "finished_successfully", "end_turn": True, "weight": 1.0,
                                    "metadata": {}, "recipient": "all"}}
        parent = nid
    return {"title": title, "create_time": t, "update_time": t + 60 * len(turns), "mapping": mapping,
            "current_node": parent, "id": cid, "conversation_id": cid, "is_archived": False,
            "moderation_results": [], "plugin_ids": None, "gizmo_id": None, "safe_urls": []}

chatgpt = [
    chatgpt_conv("a1f0c3d2-1111-4aaa-9bbb-000000000001", "Reviving a sluggish sourdough starter", "2024-03-02T08:10:00Z", [
        ("user", "My sourdough starter, Gus, has gone sluggish since I moved him to the pantry. He used to double in six hours, now it takes twelve. I feed him 1:1:1 with white bread flour."),
        ("assistant", "A cooler pantry slows the yeast and bacteria. Try keeping Gus somewhere around 24–26 °C, and switch to a 1:2:2 feed (starter:flour:water) twice a day for a few days. Adding 10–20% whole rye flour to the feed gives the culture more nutrients and usually brings the rise back."),
        ("user", "I'll try rye. Should I discard every time?"),
        ("assistant", "Yes — keep only what you need for the next feed, otherwise the acidity builds up and the starter stays slow. Once Gus doubles reliably in 4–6 hours, go back to your usual schedule."),
    ]),
    chatgpt_conv("a1f0c3d2-1111-4aaa-9bbb-000000000002", "Bike commute along the river", "2024-03-10T18:30:00Z", [
        ("user", "I want to start cycling to work. It's 12 km from my flat in Lindenau to the office at the harbour. I have an old steel touring bike. Is that realistic three days a week?"),
        ("assistant", "Very realistic: 12 km is 35–45 minutes at an easy pace. Start with two days a week for the first fortnight, check the tyres and brakes before the first ride, and plan a route along the river path — it avoids the tram tracks on the main road."),
        ("user", "The river path is unlit in winter though."),
        ("assistant", "Then fit a proper front light (at least 400 lumens for unlit paths) and a rear light that stays on in rain. Many commuters use the river path in summer and switch to a lit street route from November to February."),
    ]),
    chatgpt_conv("a1f0c3d2-1111-4aaa-9bbb-000000000003", "Starting a Rust CLI to log my bakes", "2024-04-05T21:00:00Z", [
        ("user", "I'm learning Rust and want a small side project: a command-line tool called crumb that logs my sourdough bakes (flour, water, salt, starter, times) and computes hydration. How should I structure it?"),
        ("assistant", "A good first layout: `src/main.rs` parses arguments with `clap`, `src/bake.rs` holds a `Bake` struct with a `hydration()` method, and `src/store.rs` reads and writes the log as JSON lines with `serde`. Keep the maths in `bake.rs` so you can unit-test it without touching files."),
        ("user", "Hydration is water divided by flour, right? Does the starter count?"),
        ("assistant", "Strictly, yes: a 100% hydration starter adds equal parts flour and water, so add half the starter's weight to each side. crumb can report both the simple figure and the 'total' one that includes the starter."),
    ]),
    chatgpt_conv("a1f0c3d2-1111-4aaa-9bbb-000000000004", "Raising dough hydration", "2024-05-18T09:45:00Z", [
        ("user", "My loaves have been at 70% hydration for months. I'd like a more open crumb. Can I jump to 78%?"),
        ("assistant", "Go up in steps: try 75% first. Higher hydration needs stronger gluten, so add a set of coil folds in the first two hours of bulk fermentation and expect the dough to be stickier when shaping."),
        ("user", "I did 75% this weekend with three sets of coil folds and it was the best loaf so far. Gus is back to doubling in five hours too."),
        ("assistant", "That's a good sign both for the starter and for your technique. Keep 75% as your new base recipe and only go higher once shaping at 75% feels easy."),
    ]),
]
write("chatgpt/conversations.json", json.dumps(chatgpt, ensure_ascii=False, indent=1) + "\n")

# ------------------------------------------------------------------ Claude.ai
def claude_conv(cid, name, start, turns):
    t = ts(start)
    msgs = []
    for i, (sender, text) in enumerate(turns):
        when = datetime.fromtimestamp(t + 90 * i, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
        msgs.append({"uuid": f"{cid[:8]}-m{i}", "sender": sender, "text": text,
                     "content": [{"type": "text", "text": text}], "created_at": when, "updated_at": when,
                     "attachments": [], "files": []})
    end = datetime.fromtimestamp(t + 90 * len(turns), timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    return {"uuid": cid, "name": name, "summary": "", "created_at": msgs[0]["created_at"], "updated_at": end,
            "account": {"uuid": "mara-account"}, "chat_messages": msgs}

claude = [
    claude_conv("c2e8b4a6-2222-4ccc-8ddd-000000000001", "Oven spring and the Dutch oven", "2024-04-20T16:00:00Z", [
        ("human", "My sourdough loaves come out flat even though Gus, my starter, is lively again. I bake at 230 °C on a tray with a pan of water underneath."),
        ("assistant", "Flat loaves with an active starter usually point to shaping or steam. A preheated Dutch oven (250 °C, lid on for the first 20 minutes, then 230 °C lid off for 20–25) traps the loaf's own steam far better than a water pan, and tighter shaping with a good surface tension helps the loaf rise up instead of out."),
        ("human", "I have a cast-iron pot. Should I proof in the fridge?"),
        ("assistant", "Yes: a cold retard of 12–16 hours at 4 °C makes the dough easier to score and usually improves oven spring. Bake straight from the fridge into the hot pot."),
    ]),
    claude_conv("c2e8b4a6-2222-4ccc-8ddd-000000000002", "Winter bike commute and chain care", "2024-11-12T07:20:00Z", [
        ("human", "I've been commuting by bike three days a week since spring — 12 km each way. Now it's November and the river path is dark and muddy, so I've switched to the Karl-Heine-Straße route, which is lit. My chain is squeaking after every wet ride."),
        ("assistant", "Switching to the lit route for winter is sensible. For the chain: wipe it with a dry rag after wet rides, and use a wet lube rather than a dry one until spring — apply a drop per link the evening before, then wipe off the excess. Mudguards will also keep a lot of grit off the drivetrain."),
        ("human", "Should I get studded tyres?"),
        ("assistant", "Only if your route regularly ices over. Leipzig's main streets are usually gritted, so wider tyres at slightly lower pressure are often enough; studs make sense if you ride the river path in frost."),
    ]),
    claude_conv("c2e8b4a6-2222-4ccc-8ddd-000000000003", "crumb: borrow checker fight", "2024-06-02T20:15:00Z", [
        ("human", "In crumb, my Rust bake logger, I keep a `Vec<Bake>` and want to return a reference to the bake with the highest hydration, but I also want to push a new bake afterwards. The borrow checker complains."),
        ("assistant", "The returned `&Bake` borrows the vector, so you can't push while it's alive. Either finish using the reference before pushing, return an index (`usize`) instead of a reference, or clone the small struct. For crumb an index is the most idiomatic: `fn best(&self) -> Option<usize>`."),
        ("human", "Index it is. I also switched the log from JSON lines to SQLite with rusqlite."),
        ("assistant", "Then let SQLite answer it: `SELECT id FROM bakes ORDER BY water * 1.0 / flour DESC LIMIT 1` — no borrow at all, and crumb's queries stay in one place."),
    ]),
]
write("claude/conversations.json", json.dumps(claude, ensure_ascii=False, indent=2) + "\n")

# ------------------------------------------------------------------ Claude Code
S = "7c1d9e20-3333-4eee-8fff-000000000001"
rows = [{"type": "summary", "summary": "crumb: add a hydration report command", "leafUuid": "k9"}]
def cc(uuid, parent, typ, ts_, content, msg_id=None):
    message = ({"role": "user", "content": content} if typ == "user" else
               {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4",
                "content": content, "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/mara/code/crumb",
            "sessionId": S, "version": "1.0.80", "gitBranch": "main", "type": typ, "message": message,
            "uuid": uuid, "timestamp": ts_}
rows += [
    cc("k1", None, "user", "2024-07-14T10:00:00.000Z", "Add a `crumb report` subcommand that prints each bake's date, hydration and a note, newest first. Hydration should include the starter (assume 100% hydration starter)."),
    cc("k2", "k1", "assistant", "2024-07-14T10:00:05.000Z", [{"type": "text", "text": "I'll look at how bakes are stored first."}], "msg_k2"),
    cc("k3", "k2", "assistant", "2024-07-14T10:00:06.000Z", [{"type": "tool_use", "id": "toolu_k3", "name": "Read", "input": {"file_path": "src/store.rs"}}], "msg_k2"),
    cc("k4", "k3", "user", "2024-07-14T10:00:07.000Z", [{"type": "tool_result", "tool_use_id": "toolu_k3", "content": "pub fn open(path: &Path) -> rusqlite::Result<Connection> { ... }"}]),
    cc("k5", "k4", "assistant", "2024-07-14T10:01:30.000Z", [{"type": "text", "text": "Added `crumb report`: it queries bakes newest first and computes total hydration as (water + starter/2) / (flour + starter/2). A bake with 500 g flour, 360 g water and 100 g starter reports 75.5%."}], "msg_k5"),
    cc("k6", "k5", "user", "2024-07-14T10:03:00.000Z", "Round it to whole percent and show the starter's name too — mine is called Gus."),
    cc("k7", "k6", "assistant", "2024-07-14T10:04:00.000Z", [{"type": "text", "text": "Done: hydration is rounded to a whole percent, and a new `starter` column (default \"Gus\") is printed after the date. I added a migration for the existing database."}], "msg_k7"),
    cc("k8", "k7", "user", "2024-07-14T10:06:00.000Z", "Perfect. My commit message: 'report: hydration incl. starter'."),
    cc("k9", "k8", "assistant", "2024-07-14T10:06:10.000Z", [{"type": "text", "text": "Committed as 'report: hydration incl. starter'."}], "msg_k9"),
]
write("claude-code/-home-mara-code-crumb/" + S + ".jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
