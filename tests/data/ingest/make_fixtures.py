#!/usr/bin/env python3
"""Writes the ingest fixtures in this directory (invented content, no real person's data).

Run from this directory: python3 make_fixtures.py. The files it writes are committed; the
expected normalized results live in expected/ and are checked by tests/ingest/test_ingest.c.
"""
import json, os, zipfile

def w(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

def jsonl(path, rows):
    w(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

# ---------------------------------------------------------------- ChatGPT
def node(nid, parent, children, msg):
    return {"id": nid, "parent": parent, "children": children, "message": msg}

def msg(mid, role, text, t, ctype="text", recipient="all", meta=None, parts=None, name=None):
    content = {"content_type": ctype}
    if ctype in ("text", "multimodal_text"):
        content["parts"] = parts if parts is not None else [text]
    else:
        content["text"] = text
    return {"id": mid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": t,
            "update_time": None, "content": content, "status": "finished_successfully",
            "end_turn": True, "weight": 1.0, "metadata": meta or {}, "recipient": recipient}

t0 = 1717236000.0  # 2024-06-01T10:00:00Z
kiln = {
    "title": "Glaze firing schedule",
    "create_time": t0, "update_time": t0 + 900,
    "mapping": {
        "root": node("root", None, ["sys"], None),
        "sys": node("sys", "root", ["u1"], msg("sys", "system", "", t0, meta={"is_visually_hidden_from_conversation": True})),
        "u1": node("u1", "sys", ["a1"], msg("u1", "user", "What cone should I fire a stoneware glaze to? My kiln is a small electric one.", t0 + 10)),
        "a1": node("a1", "u1", ["u2a", "u2b"], msg("a1", "assistant", "Most mid-fire stoneware glazes mature at cone 6 (about 1222 °C). Check the glaze label first.", t0 + 20)),
        # The first attempt at the follow-up, later edited: not on the visible branch.
        "u2a": node("u2a", "a1", ["a2a"], msg("u2a", "user", "And how fast should I ramp?", t0 + 30)),
        "a2a": node("a2a", "u2a", [], msg("a2a", "assistant", "Ramp at 80 °C per hour.", t0 + 40)),
        # The edited follow-up: the visible branch, with a tool call in between.
        "u2b": node("u2b", "a1", ["a2b_tool"], msg("u2b", "user", "And how fast should I ramp to cone 6? Here is my kiln's log.", t0 + 50,
                                                    ctype="multimodal_text",
                                                    parts=[{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-AbC"},
                                                           "And how fast should I ramp to cone 6? Here is my kiln's log."])),
        "a2b_tool": node("a2b_tool", "u2b", ["tool1"], msg("a2b_tool", "assistant", "import pandas as pd\nlog = pd.read_csv('kiln.csv')", t0 + 60, ctype="code", recipient="python")),
        "tool1": node("tool1", "a2b_tool", ["a2b"], msg("tool1", "tool", "   temp\n0  20\n1  600", t0 + 70, ctype="execution_output", name="python")),
        "a2b": node("a2b", "tool1", ["u3"], msg("a2b", "assistant", "Your log shows a fast first stage. Try 100 °C/h to 600 °C, then 150 °C/h to cone 6, with a 10-minute hold — Kegel sagen: Geduld!", t0 + 80)),
        "u3": node("u3", "a2b", ["a3"], msg("u3", "user", "Danke! 🙏", t0 + 90)),
        "a3": node("a3", "u3", [], msg("a3", "assistant", "Gern geschehen — good luck with the firing.", t0 + 100)),
    },
    "moderation_results": [], "current_node": "a3", "plugin_ids": None,
    "conversation_id": "6650a1b2-0000-4000-8000-00000000c0de", "conversation_template_id": None,
    "gizmo_id": None, "is_archived": False, "safe_urls": [], "default_model_slug": "gpt-4o",
    "id": "6650a1b2-0000-4000-8000-00000000c0de",
}
t1 = 1717322400.0
walk = {
    "title": "Dog walking routes",
    "create_time": t1, "update_time": t1 + 60,
    "mapping": {
        "r": node("r", None, ["m1"], None),
        "m1": node("m1", "r", ["m2"], msg("m1", "user", "Suggest a 30 minute loop for an older dog.", t1)),
        "m2": node("m2", "m1", [], msg("m2", "assistant", "Pick a flat route with shade and a water stop halfway.", t1 + 5)),
    },
    "current_node": "m2", "id": "6650a1b2-0000-4000-8000-00000000d06e",
    "conversation_id": "6650a1b2-0000-4000-8000-00000000d06e",
}
# A conversation holding only a system node: skipped as empty.
empty = {"title": "New chat", "create_time": t1, "update_time": t1, "current_node": "s",
         "mapping": {"s": node("s", None, [], msg("s", "system", "", t1))}, "id": "6650a1b2-0000-4000-8000-0000000e0000"}
chatgpt = [kiln, walk, empty]
w("chatgpt/conversations.json", json.dumps(chatgpt, ensure_ascii=False, indent=1))

def zip_export(path, files):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(name, data)

zip_export("chatgpt-export.zip", [("user.json", '{"id": "user-x"}'), ("chat.html", "<html></html>"),
                                   ("conversations.json", json.dumps(chatgpt, ensure_ascii=False)),
                                   ("message_feedback.json", "[]")])

# The same export a month later: the dog-walk conversation grew, the kiln one is gone from it.
walk2 = json.loads(json.dumps(walk))
walk2["update_time"] = t1 + 3600
walk2["mapping"]["m2"]["children"] = ["m3"]
walk2["mapping"]["m3"] = node("m3", "m2", ["m4"], msg("m3", "user", "She gets tired on hills. Any alternative?", t1 + 3000))
walk2["mapping"]["m4"] = node("m4", "m3", [], msg("m4", "assistant", "Try the river path: level, and benches every few hundred metres.", t1 + 3005))
walk2["current_node"] = "m4"
w("chatgpt-later/conversations.json", json.dumps([walk2], ensure_ascii=False, indent=1))

# ---------------------------------------------------------------- Claude.ai
claude = [
    {"uuid": "1b7c0f3e-5a8d-4c2b-9e61-0c0ffee00001", "name": "Reading list for a long train trip",
     "summary": "", "created_at": "2024-07-03T08:15:00.000000Z", "updated_at": "2024-07-03T08:40:12.500000Z",
     "account": {"uuid": "acc-1"},
     "chat_messages": [
         {"uuid": "c1m1", "sender": "human", "text": "I have nine hours on a train to Kraków. Three novels?",
          "content": [{"type": "text", "text": "I have nine hours on a train to Kraków. Three novels?"}],
          "created_at": "2024-07-03T08:15:00.000000Z", "updated_at": "2024-07-03T08:15:00.000000Z",
          "attachments": [{"file_name": "shelf.txt", "file_type": "text/plain", "file_size": 52,
                           "extracted_content": "Already read:\nSolaris\nThe Remains of the Day"}],
          "files": [{"file_name": "shelf.txt"}]},
         {"uuid": "c1m2", "sender": "assistant", "text": "",
          "content": [{"type": "thinking", "thinking": "They liked Lem..."},
                      {"type": "text", "text": "Since you liked Solaris: *The Cyberiad*."},
                      {"type": "tool_use", "name": "web_search", "input": {"query": "Tokarczuk"}},
                      {"type": "tool_result", "content": [{"type": "text", "text": "results..."}]},
                      {"type": "text", "text": "Then Tokarczuk's *Flights* — fitting for a journey."}],
          "created_at": "2024-07-03T08:15:30.000000Z", "updated_at": "2024-07-03T08:15:30.000000Z",
          "attachments": [], "files": []},
         {"uuid": "c1m3", "sender": "human", "text": "Great, and one light one?", "content": [],
          "created_at": "2024-07-03T08:40:00.000000Z", "attachments": [], "files": []},
         {"uuid": "c1m4", "sender": "assistant", "text": "*Three Men in a Boat* — short chapters, easy to pick up.",
          "content": [{"type": "text", "text": "*Three Men in a Boat* — short chapters, easy to pick up."}],
          "created_at": "2024-07-03T08:40:12.500000Z", "attachments": [], "files": []},
     ]},
    {"uuid": "1b7c0f3e-5a8d-4c2b-9e61-0c0ffee00002", "name": "", "created_at": "2024-07-05T19:00:00Z",
     "updated_at": "2024-07-05T19:00:00Z", "chat_messages": []},
]
w("claude/conversations.json", json.dumps(claude, ensure_ascii=False, indent=2))
zip_export("claude-export.zip", [("conversations.json", json.dumps(claude, ensure_ascii=False)),
                                  ("projects.json", "[]"), ("users.json", "[]")])

# ---------------------------------------------------------------- Claude Code
S = "5d1e2f3a-4b5c-4d6e-8f70-a1b2c3d4e5f6"
def cc(uuid, parent, typ, message=None, ts="2024-08-10T09:00:00.000Z", **extra):
    row = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/ana/code/plotter",
           "sessionId": S, "version": "1.0.70", "gitBranch": "main", "type": typ, "uuid": uuid, "timestamp": ts}
    if message is not None:
        row["message"] = message
    row.update(extra)
    return row
A = lambda mid, blocks: {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4", "content": blocks,
                         "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 5}}
U = lambda content: {"role": "user", "content": content}
rows = [
    {"type": "summary", "summary": "Pen plotter G-code speed fix", "leafUuid": "e12"},
    {"type": "file-history-snapshot", "messageId": "x", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
    cc("e0", None, "user", U("Caveat: The messages below were generated by the user while running local commands. DO NOT respond."), isMeta=True),
    cc("e1", "e0", "user", U("<command-name>/clear</command-name>\n<command-message>clear</command-message>")),
    cc("e2", "e1", "user", U("My pen plotter draws wobbly circles. The G-code feed rate is F3000 — too fast?"), ts="2024-08-10T09:01:00.000Z"),
    cc("e3", "e2", "assistant", A("msg_01", [{"type": "thinking", "thinking": "Look at the file", "signature": "sig"}]), ts="2024-08-10T09:01:05.000Z"),
    cc("e4", "e3", "assistant", A("msg_01", [{"type": "text", "text": "Likely. Let me look at the generator."}]), ts="2024-08-10T09:01:06.000Z"),
    cc("e5", "e4", "assistant", A("msg_01", [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "gen.py"}}]), ts="2024-08-10T09:01:07.000Z"),
    cc("e6", "e5", "user", U([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "FEED = 3000\n"}]), toolUseResult={"type": "text"}, ts="2024-08-10T09:01:08.000Z"),
    cc("e7", "e6", "assistant", A("msg_02", [{"type": "text", "text": "gen.py hard-codes FEED = 3000 mm/min. Try 1200 for curves."}]), ts="2024-08-10T09:01:20.000Z"),
    # A rewind: the person edits their next message; e8a's branch is abandoned.
    cc("e8a", "e7", "user", U("ok do it"), ts="2024-08-10T09:02:00.000Z"),
    cc("e9a", "e8a", "assistant", A("msg_03", [{"type": "text", "text": "Done (abandoned branch)."}]), ts="2024-08-10T09:02:05.000Z"),
    # A sub-agent's line in the same file: never part of the thread.
    cc("sc1", "e7", "user", U("Sub-agent task: grep for FEED"), isSidechain=True),
    cc("e8", "e7", "user", U("Make it 1200 but keep 3000 for straight lines — ça marche?"), ts="2024-08-10T09:03:00.000Z"),
    cc("e9", "e8", "assistant", A("msg_04", [{"type": "text", "text": "Oui: curves now use F1200, straight segments F3000."}]), ts="2024-08-10T09:03:30.000Z"),
    # Compaction: the boundary has no parent, only a logical one; the summary message is dropped.
    cc("e10", None, "system", None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid="e9",
       compactMetadata={"trigger": "auto", "preTokens": 150000}, ts="2024-08-10T10:00:00.000Z"),
    cc("e11", "e10", "user", U("This session is being continued from a previous conversation that ran out of context. Summary: ..."), isCompactSummary=True, ts="2024-08-10T10:00:01.000Z"),
    cc("e12", "e11", "user", U("Circles look perfect now. Thanks!"), ts="2024-08-10T10:05:00.000Z"),
]
jsonl("claude-code/-home-ana-code-plotter/" + S + ".jsonl", rows)
# A sub-agent file: all sidechain, nothing to keep.
jsonl("claude-code/-home-ana-code-plotter/agent-7f3e.jsonl",
      [dict(cc("s1", None, "user", U("grep FEED")), isSidechain=True, agentId="7f3e")])

# ---------------------------------------------------------------- Codex
C = "0197a3c4-1111-7222-8333-944455556666"
def cx(ts, typ, payload):
    return {"timestamp": ts, "type": typ, "payload": payload}
def cmsg(role, text, kind):
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
rows = [
    cx("2025-06-01T14:00:00.000Z", "session_meta", {"id": C, "timestamp": "2025-06-01T14:00:00.000Z", "cwd": "/home/ana/code/budget",
                                                    "originator": "codex_cli_rs", "cli_version": "0.20.0", "instructions": None,
                                                    "git": {"commit_hash": "abc", "branch": "main"}}),
    cx("2025-06-01T14:00:00.100Z", "response_item", cmsg("developer", "<permissions instructions>sandbox...</permissions instructions>", "input_text")),
    cx("2025-06-01T14:00:00.200Z", "response_item", cmsg("user", "<user_instructions>\nAlways use tabs.\n</user_instructions>", "input_text")),
    cx("2025-06-01T14:00:00.300Z", "response_item", cmsg("user", "<environment_context>\n  <cwd>/home/ana/code/budget</cwd>\n</environment_context>", "input_text")),
    cx("2025-06-01T14:00:01.000Z", "turn_context", {"cwd": "/home/ana/code/budget", "approval_policy": "on-request", "model": "gpt-5"}),
    cx("2025-06-01T14:00:02.000Z", "response_item", cmsg("user", "Add a CSV export to the budget report (amounts in €).", "input_text")),
    cx("2025-06-01T14:00:02.100Z", "event_msg", {"type": "user_message", "message": "Add a CSV export to the budget report (amounts in €)."}),
    cx("2025-06-01T14:00:05.000Z", "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}], "encrypted_content": "gAAAA"}),
    cx("2025-06-01T14:00:06.000Z", "response_item", {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "call_1"}),
    cx("2025-06-01T14:00:07.000Z", "response_item", {"type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"report.py\\n\"}"}),
    cx("2025-06-01T14:00:20.000Z", "response_item", cmsg("assistant", "Added `--csv` to report.py; amounts are written with two decimals and a `currency` column.", "output_text")),
    cx("2025-06-01T14:00:21.000Z", "event_msg", {"type": "token_count", "info": None}),
    cx("2025-06-01T14:01:00.000Z", "response_item", cmsg("user", "Use a semicolon separator, my spreadsheet is German.", "input_text")),
    cx("2025-06-01T14:01:10.000Z", "response_item", cmsg("assistant", "Done: `--csv` now writes `;`-separated values with decimal commas.", "output_text")),
]
jsonl("codex/2025/06/01/rollout-2025-06-01T14-00-00-" + C + ".jsonl", rows)

# ---------------------------------------------------------------- pi
P = "0198b2a1-aaaa-7bbb-8ccc-0123456789ab"
def pe(eid, parent, role, content, ts_ms, **extra):
    m = {"role": role, "content": content, "timestamp": ts_ms}
    m.update(extra)
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": "2025-03-02T11:00:00.000Z", "message": m}
rows = [
    {"type": "session", "version": 3, "id": P, "timestamp": "2025-03-02T11:00:00.000Z", "cwd": "/home/ana/code/garden"},
    {"type": "model_change", "id": "a0000001", "parentId": None, "timestamp": "2025-03-02T11:00:00.000Z", "provider": "anthropic", "modelId": "claude-sonnet-4"},
    pe("a0000002", "a0000001", "user", "When should I sow tomatoes indoors in Leipzig?", 1740913200000),
    pe("a0000003", "a0000002", "assistant", [{"type": "thinking", "thinking": "Last frost mid-May"},
                                             {"type": "text", "text": "Mid-March: about eight weeks before the last frost (mid-May)."},
                                             {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "plan.md"}}], 1740913210000,
       api="anthropic-messages", provider="anthropic", model="claude-sonnet-4", stopReason="toolUse"),
    pe("a0000004", "a0000003", "toolResult", [{"type": "text", "text": "# plan"}], 1740913211000, toolCallId="t1", toolName="read", isError=False),
    # Branch: first follow-up abandoned (the person went back to a0000004 and asked again).
    pe("a0000005", "a0000004", "user", "And peppers?", 1740913300000),
    pe("a0000006", "a0000005", "assistant", [{"type": "text", "text": "Peppers: late February."}], 1740913310000),
    {"type": "branch_summary", "id": "a0000007", "parentId": "a0000004", "timestamp": "2025-03-02T11:10:00.000Z", "fromId": "a0000006", "summary": "Asked about peppers."},
    pe("a0000008", "a0000007", "user", [{"type": "text", "text": "And chillies? They're slow 🌶️"}, {"type": "image", "data": "iVBOR", "mimeType": "image/png"}], 1740913800000),
    {"type": "compaction", "id": "a0000009", "parentId": "a0000008", "timestamp": "2025-03-02T11:11:00.000Z", "summary": "Sowing dates.", "firstKeptEntryId": "a0000008", "tokensBefore": 50000},
    pe("a000000a", "a0000009", "assistant", [{"type": "text", "text": "Chillies: early February, with bottom heat."}], 1740913810000),
    {"type": "session_info", "id": "a000000b", "parentId": "a000000a", "timestamp": "2025-03-02T11:12:00.000Z", "name": "Seed sowing calendar"},
]
jsonl("pi/--home-ana-code-garden--/2025-03-02T11-00-00-000Z_" + P + ".jsonl", rows)
# Version 1: no ids, linear.
rows = [
    {"type": "session", "id": "0197f000-0000-7000-8000-000000000001", "timestamp": "2024-11-20T07:30:00.000Z", "cwd": "/home/ana"},
    {"type": "message", "timestamp": "2024-11-20T07:30:01.000Z", "message": {"role": "user", "content": "Convert 3/4 cup of flour to grams.", "timestamp": 1732087801000}},
    {"type": "message", "timestamp": "2024-11-20T07:30:03.000Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "About 95 g of all-purpose flour."}], "timestamp": 1732087803000}},
]
jsonl("pi-v1/2024-11-20T07-30-00-000Z_0197f000-0000-7000-8000-000000000001.jsonl", rows)

# ---------------------------------------------------------------- OpenAI JSONL
rows = [
    {"messages": [{"role": "system", "content": "You are a helpful assistant."},
                  {"role": "user", "content": "Name a knot for tying a tarp to a tree."},
                  {"role": "assistant", "content": "A taut-line hitch: it stays adjustable under load."}]},
    {"messages": [{"role": "user", "content": "What's the weather in Oslo?"},
                  {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "{\"temp\": 4}"},
                  {"role": "assistant", "content": [{"type": "text", "text": "It's 4 °C in Oslo — bring a jacket."}], "weight": 1}],
     "tools": []},
    {"custom_id": "req-3", "method": "POST", "url": "/v1/chat/completions",
     "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Translate 'good morning' to Japanese."},
                                                    {"role": "assistant", "content": "おはようございます (ohayō gozaimasu)."}]}},
]
jsonl("openai/chats.jsonl", rows)

# A ChatGPT export whose conversations.json is stored, not deflated.
with zipfile.ZipFile("chatgpt-export-stored.zip", "w", zipfile.ZIP_STORED) as z:
    z.writestr("Export/conversations.json", json.dumps([walk], ensure_ascii=False))
