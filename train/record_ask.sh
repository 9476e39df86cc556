#!/usr/bin/env bash
# record_ask.sh — `dream ask` records for dream-mini's answer stage (train/README.md, step 2d).
#
#   bash train/record_ask.sh CORPUS_DIR OUT_DIR
#
# OUT_DIR is what train/record.sh left for the same corpus (its DREAM_HOME, OUT_DIR/home, dreamed
# by the oracle). Questions are written from the truth (train/ask_questions.py: about each
# subject with an article, about its facts by key, and about names the corpus never mentions);
# each goes through the real `dream ask --backend` (search, reads, the prompt) to train/oracle.py,
# whose gold answer is the notes' sentence stating the asked fact with its marker, the lead's
# first sentences for "what do I know about X", or NOTHING ON FILE. Records land in
# OUT_DIR/ask-records.jsonl. Exit status 0 when every question got a gold answer.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: bash train/record_ask.sh CORPUS_DIR OUT_DIR" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CORPUS=$(cd "$1" && pwd)
OUT=$(cd "$2" && pwd)
DREAM=${DREAM:-$ROOT/build/bin/dream}
export DREAM_HOME=$OUT/home
unset DREAM_WIKI DREAM_BACKEND DREAM_BACKEND_KEY DREAM_BACKEND_MODEL
[ -f "$DREAM_HOME/memory.sqlite" ] || { echo "record_ask.sh: no dreamed home in $OUT (run train/record.sh first)" >&2; exit 1; }
RECORDS=$OUT/ask-records.jsonl
rm -f "$RECORDS" "$RECORDS".* "$OUT/ask.port" "$OUT/ask-oracle.log"
python3 "$ROOT/train/ask_questions.py" --truth "$CORPUS/truth.json" --wiki "$DREAM_HOME/wiki" > "$OUT/ask-questions.json"
python3 "$ROOT/train/oracle.py" --truth "$CORPUS/truth.json" --questions "$OUT/ask-questions.json" --records "$RECORDS" \
    --port 0 --port-file "$OUT/ask.port" 2>"$OUT/ask-oracle.log" &
ORACLE=$!
trap 'kill $ORACLE 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$OUT/ask.port" ] && break; sleep 0.1; done
URL=http://127.0.0.1:$(cat "$OUT/ask.port")
python3 -c 'import json,sys; [print(q["question"]) for q in json.load(open(sys.argv[1]))]' "$OUT/ask-questions.json" |
    while IFS= read -r q; do "$DREAM" ask "$q" --backend "$URL" >/dev/null; done
kill $ORACLE; wait $ORACLE 2>/dev/null || true
trap - EXIT
python3 - "$RECORDS.stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"record_ask: {s['records']} answer records, {s['unknown']} unknown, {s['unanswerable']} unanswerable")
sys.exit(1 if s["unknown"] or s["unanswerable"] else 0)
PY
