#!/usr/bin/env python3
"""augment.py — records that can only be answered by reading the prompt (train/README.md, step 2b).

The first training run (docs/BENCHMARKS.md, "dream-mini") showed the model memorising the train
catalogue's subjects instead of copying names from the prompt: on held-out subjects it answered
names it had seen in training (entity answer loss 1.1 on train, 7.7 held out), and it could not
copy message ids (UUIDs of ~20 SentencePiece pieces each). Two rewrites of every record fix the
incentive without changing what the pipeline accepts:

  1. chunk answers give each anchor as its message position (the transcript shows
     "(id: X, position N)", and the segment parser takes a number as a position);
  2. every word of every subject name of the corpora (names and surfaces, from each corpus's
     truth.json) is replaced, consistently within one record (prompt and answer alike, case
     kept), by a pseudo-word drawn from a seeded syllable generator: a new name every record,
     so the only way to answer is to copy it from the prompt.

  augment.py --truths LIST_OF_TRUTH_JSON --seed S [--stages S,..] [--rewritten-only] IN.jsonl... > OUT.jsonl
Writes each record twice: as recorded (positions only) and rewritten (positions and names).
--stages keeps only those stages' records; --rewritten-only writes just the rewritten copy, so
runs with other seeds add copies of a stage with fresh names (training run 3: three more copies
of every entity record, the stage whose answers are names copied from the prompt).
Deterministic from the seed and the input order.
"""
import argparse
import json
import random
import re
import sys

SYL_ON = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p", "pr", "r", "s",
          "sh", "st", "t", "tr", "v", "w", "z", ""]
SYL_NU = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"]
SYL_CO = ["", "", "n", "r", "l", "s", "m", "th", "x", "nd", "rt", "k"]
KEEP = set("a an the of and or in on at to for my our your his her their with by from de la le".split())


def pseudo(rng, like):
    n = 1 + (len(like) > 4) + (len(like) > 8)
    w = "".join(rng.choice(SYL_ON) + rng.choice(SYL_NU) + rng.choice(SYL_CO) for _ in range(n))
    if like[:1].isupper():
        w = w[:1].upper() + w[1:]
    if like.isupper() and len(like) > 1:
        w = w.upper()
    if any(ch.isdigit() for ch in like):  # model numbers such as "SU-40": keep their shape
        w = re.sub(r"\d", lambda m: str(rng.randrange(10)), like)
    return w


POS_RE = re.compile(r"\[(?:user|assistant)\] \(id: ([^,]+), position (\d+)\)")


def positions(rec):
    if rec["stage"] != "chunk":
        return rec
    pos = {m.group(1): int(m.group(2)) for m in POS_RE.finditer(rec["user"])}
    try:
        ans = json.loads(rec["answer"])
    except ValueError:
        return rec
    for ch in ans.get("chunks", []):
        for k in ("start_message_id", "end_message_id"):
            if isinstance(ch.get(k), str) and ch[k] in pos:
                ch[k] = pos[ch[k]]
    return dict(rec, answer=json.dumps(ans, ensure_ascii=False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--truths", required=True, help="a file listing truth.json paths")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stages", help="comma list: keep only these stages' records")
    ap.add_argument("--rewritten-only", action="store_true",
                    help="write only the rewritten copy (extra copies of a stage, with fresh names, from another seed)")
    ap.add_argument("records", nargs="+")
    a = ap.parse_args()
    words = set()
    for path in open(a.truths).read().split():
        t = json.load(open(path, encoding="utf-8"))
        for s in t["subjects"]:
            for form in [s["name"]] + s.get("surface", []):
                for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]*[A-Za-z0-9]|[A-Za-z]", form):
                    if w.lower() not in KEEP and len(w) >= 3:
                        words.add(w.lower())
    word_re = re.compile(r"[A-Za-z][A-Za-z0-9'-]*[A-Za-z0-9]|[A-Za-z]")

    class Pattern:  # every word of the text that is a name word (a set lookup, not a huge regex)
        @staticmethod
        def sub(fn, text):
            return word_re.sub(lambda m: fn(m) if m.group(0).lower() in words else m.group(0), text)

    pattern = Pattern()
    rng = random.Random(a.seed)
    keep = set(a.stages.split(",")) if a.stages else None
    out = sys.stdout
    for path in a.records:
        for line in open(path, encoding="utf-8"):
            rec = positions(json.loads(line))
            if keep is not None and rec["stage"] not in keep:
                continue
            if not a.rewritten_only:
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
            mapping = {}

            def sub(m):
                w = m.group(0)
                key = w.lower()
                if key not in mapping:
                    mapping[key] = pseudo(rng, key)
                r = mapping[key]
                if w.isupper() and len(w) > 1:
                    return r.upper()
                return r[:1].upper() + r[1:] if w[:1].isupper() else r

            new = dict(rec, user=pattern.sub(sub, rec["user"]), answer=pattern.sub(sub, rec["answer"]))
            if rec.get("system"):
                new["system"] = pattern.sub(sub, rec["system"])
            out.write(json.dumps(new, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
