#!/usr/bin/env python3
"""nights.py — a generated corpus cut by date into nightly slices, as a person's nightly job sees it.

    python3 train/nights.py CORPUS_DIR OUT_DIR NIGHTS

CORPUS_DIR is what train/gen_corpus.py wrote (export files + truth.json). The conversations,
oldest first, are cut into NIGHTS slices; slice k is written to OUT_DIR/k/ as export files of the
same formats (the truth names each conversation's file), one line per night on stdout. Used by
train/record.sh and bench/pipeline.sh.
"""
import json, os, sys
if len(sys.argv) != 4 or not sys.argv[3].isdigit() or int(sys.argv[3]) < 1:
    sys.exit(f"usage: nights.py CORPUS_DIR OUT_DIR NIGHTS (NIGHTS a whole number >= 1; got {sys.argv[3:]!r})")
corpus, out, nights = sys.argv[1], sys.argv[2], int(sys.argv[3])
truth = json.load(open(os.path.join(corpus, "truth.json"), encoding="utf-8"))
convs = sorted(truth["conversations"], key=lambda c: (c.get("date") or "", c["id"]))
n = len(convs)
slices = [convs[n * k // nights: n * (k + 1) // nights] for k in range(nights)]
exports = {}
for c in convs:
    exports.setdefault(c["file"], None)
for f in exports:
    with open(os.path.join(corpus, f), encoding="utf-8") as fh:
        exports[f] = json.load(fh)
def conv_id(x):
    return x.get("id") or x.get("conversation_id") or x.get("uuid")
for k, sl in enumerate(slices, 1):
    ids = {c["id"] for c in sl}
    for f, data in exports.items():
        keep = [x for x in data if conv_id(x) in ids]
        if not keep:
            continue
        path = os.path.join(out, str(k), f)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(keep, fh, ensure_ascii=False)
    got = sum(1 for f, data in exports.items() for x in data if conv_id(x) in ids)
    if got != len(ids):
        sys.exit(f"nights.py: night {k}: {len(ids) - got} conversation(s) of truth.json are in no export file")
    print(f"night {k}: {len(sl)} conversation(s), {sl[0]['date'] if sl else '-'} to {sl[-1]['date'] if sl else '-'}")
