#!/usr/bin/env bash
# ent_real.sh OUT.bin VOCAB_MODEL CORPUS_DIR... — an entity adapter's data with the names as the
# person wrote them: the entity records of each CORPUS_DIR/rec/records.jsonl (train/record.sh's
# output), in the order given, not rewritten by augment.py, tokenized as dream-dataset
# --names-from-text does (train/README.md, "Entity records with real names").
#
# Why: every entity adapter so far learned on augment.py's pseudo-word copies ("Klaithrart"), where
# the one odd word of a chunk is its subject. On the samples, written by a person, run 13 then
# names an odd common word ("traps", "doubling", " november") instead of the subject.
set -euo pipefail
OUT=${1:?usage: ent_real.sh OUT.bin VOCAB_MODEL CORPUS_DIR...}
VOCAB=${2:?usage: ent_real.sh OUT.bin VOCAB_MODEL CORPUS_DIR...}
shift 2
BIN=${BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/bin}
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
for d in "$@"; do
    python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if json.loads(line)["stage"] == "entity":
        sys.stdout.write(line)
' "$d/rec/records.jsonl"
done > "$TMP"
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages entity "$TMP" -o "$OUT"
