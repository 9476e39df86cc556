#!/usr/bin/env python3
"""gen_chatgpt_export.py MB OUT — writes a ChatGPT-format conversations.json of about MB
megabytes (deterministic: seed 1) for the ingest benchmark. Each conversation is a linear
mapping tree of 4-40 messages with current_node at its leaf; text is invented filler."""
import json, random, sys

def main():
    target = int(sys.argv[1]) * 1_000_000
    out = sys.argv[2]
    rnd = random.Random(1)
    words = ("sourdough starter hydration bike commute tyre pressure rust borrow checker async "
             "kiln glaze cone garden tomato budget travel visa recipe oven steam crumb").split()
    written = 0
    with open(out, "w", encoding="utf-8") as f:
        f.write("[")
        i = 0
        while written < target:
            t0 = 1.6e9 + i * 3600
            n = rnd.randint(4, 40)
            mapping = {"root": {"id": "root", "parent": None, "children": ["m0"], "message": None}}
            for k in range(n):
                role = "user" if k % 2 == 0 else "assistant"
                text = " ".join(rnd.choice(words) for _ in range(rnd.randint(20, 300)))
                mapping[f"m{k}"] = {
                    "id": f"m{k}", "parent": "root" if k == 0 else f"m{k-1}",
                    "children": [f"m{k+1}"] if k + 1 < n else [],
                    "message": {"id": f"m{k}", "author": {"role": role}, "create_time": t0 + k,
                                "content": {"content_type": "text", "parts": [text]},
                                "status": "finished_successfully", "metadata": {}, "recipient": "all"}}
            conv = {"title": f"Conversation {i}", "create_time": t0, "update_time": t0 + n,
                    "mapping": mapping, "current_node": f"m{n-1}",
                    "id": f"bench-{i:08d}", "conversation_id": f"bench-{i:08d}"}
            s = ("," if i else "") + json.dumps(conv, ensure_ascii=False)
            f.write(s)
            written += len(s.encode())
            i += 1
        f.write("]")
    print(f"wrote {out}: {written / 1e6:.1f} MB, {i} conversations")

main()
