#!/usr/bin/env bash
# record.sh — dream-mini's training records from the real pipeline (train/README.md, step 2).
#
#   bash train/record.sh CORPUS_DIR OUT_DIR
#
# CORPUS_DIR is what train/gen_corpus.py wrote (export files + truth.json). In a fresh
# DREAM_HOME under OUT_DIR this runs `dream init`, ingests the corpus, starts train/oracle.py (the
# ground-truth backend) on a free port, runs `dream run --backend` over the whole pipeline, then
# `dream check` (which must pass), stops the oracle and prints the records per prompt kind and
# what `dream status` says. Every stage call lands in OUT_DIR/records.jsonl,
# sorted (byte order), so the same corpus gives the same file.
#
# The conversations are dreamed in NIGHTS rounds (default 3), oldest first: night k ingests the
# k-th slice of the conversations by date and runs the pipeline, as a person's nightly job would.
# One round (NIGHTS=1) writes every article at once and never folds; later nights fold new
# chunks into existing articles, so the fold, lead patch, new section and reconcile prompts get
# recorded too.
#
# Environment: DREAM (the binary; default build/bin/dream), NIGHTS, TIE_BREAK (1: ask the
# resolve tie-break questions, the default; 0: off), BATCH (dream run --batch). Several corpora
# may be recorded at once: each run has its own DREAM_HOME and its own oracle port.
#
# Exit status: 0 when the run finished, the wiki checks clean and no prompt was unknown or
# unanswerable; 1 otherwise (the summary says what failed).
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: bash train/record.sh CORPUS_DIR OUT_DIR" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CORPUS=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
DREAM=${DREAM:-$ROOT/build/bin/dream}
NIGHTS=${NIGHTS:-3}
TIE_BREAK=${TIE_BREAK:-1}
BATCH=${BATCH:-8}
TRUTH=$CORPUS/truth.json
[ -x "$DREAM" ] || { echo "record.sh: no dream binary at $DREAM (make build)" >&2; exit 1; }
[ -f "$TRUTH" ] || { echo "record.sh: no truth.json in $CORPUS" >&2; exit 1; }

# a fresh home: nothing of an earlier run, nothing of the caller's environment
export DREAM_HOME=$OUT/home
unset DREAM_WIKI DREAM_BACKEND DREAM_BACKEND_KEY DREAM_BACKEND_MODEL DREAM_ROUTE_ENGAGEMENT DREAM_RESOLVE_TIE_BREAK
# The oracle's chunk answers are the truth's cuts: record them as they are, not moved to where the
# words change (segment_snap.c moves about 2% of true cuts), so a recording made now is the one the
# committed weights were trained on.
export DREAM_SNAP=0
rm -rf "$DREAM_HOME" "$OUT/nights" "$OUT"/records.jsonl* "$OUT"/run-*.log "$OUT"/oracle.log "$OUT"/oracle.port
mkdir -p "$DREAM_HOME"
RECORDS=$OUT/records.jsonl
STORE=$DREAM_HOME/memory.sqlite

"$DREAM" init --quiet

# the nights: the conversations cut by date into NIGHTS slices, each slice written as export
# files of the same formats (the truth names each conversation's file)
python3 "$ROOT/train/nights.py" "$CORPUS" "$OUT/nights" "$NIGHTS"

# the oracle, on a port of its own
python3 "$ROOT/train/oracle.py" --truth "$TRUTH" --records "$RECORDS" --port 0 --port-file "$OUT/oracle.port" \
    2>"$OUT/oracle.log" &
ORACLE=$!
stop_oracle() {
    if [ -n "${ORACLE:-}" ] && kill -0 "$ORACLE" 2>/dev/null; then
        kill -TERM "$ORACLE" 2>/dev/null || true
        wait "$ORACLE" 2>/dev/null || true
    fi
    ORACLE=
}
trap stop_oracle EXIT
for _ in $(seq 1 300); do
    [ -s "$OUT/oracle.port" ] && break
    kill -0 "$ORACLE" 2>/dev/null || { cat "$OUT/oracle.log" >&2; echo "record.sh: the oracle did not start" >&2; exit 1; }
    sleep 0.1
done
PORT=$(cat "$OUT/oracle.port")
URL=http://127.0.0.1:$PORT
RUN_FLAGS=(--backend "$URL" --batch "$BATCH")
[ "$TIE_BREAK" = 1 ] && RUN_FLAGS+=(--tie-break)

status=0
for night in $(ls "$OUT/nights" | sort -n); do
    echo "== night $night"
    "$DREAM" ingest "$OUT/nights/$night" >"$OUT/ingest-$night.log" 2>&1 || { cat "$OUT/ingest-$night.log"; status=1; }
    tail -n 1 "$OUT/ingest-$night.log"
    if ! "$DREAM" -v run "${RUN_FLAGS[@]}" >"$OUT/run-$night.log" 2>&1; then
        echo "record.sh: dream run failed on night $night" >&2
        status=1
    fi
    grep -E '^(segment|extract|resolve|route|create|fold|reconcile|link|wikify):' "$OUT/run-$night.log" | sed 's/^/   /'
    grep -viE '^(segment|extract|resolve|route|create|fold|reconcile|link|wikify):' "$OUT/run-$night.log" | head -n 20 | sed 's/^/   ! /' || true
done

echo "== dream check"
if ! "$DREAM" check; then
    echo "record.sh: dream check FAILED" >&2
    status=1
fi
stop_oracle
# The seam sends a batch's calls in parallel, so the oracle writes them in the order they
# arrive; sorted, the same corpus gives the same file on every run (augment.py's names and
# make_mix.sh's sampling follow the order, so the training data does too).
LC_ALL=C sort -o "$RECORDS" "$RECORDS"

echo "== records ($RECORDS)"
if python3 - "$RECORDS.stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for k, v in s["by_kind"].items():
    print(f"   {k:18} {v}")
print(f"   {'total':18} {s['records']}")
print(f"   unknown prompt kinds: {s['unknown']}, unanswerable prompts: {s['unanswerable']}"
      + (f"; warnings: {s['warnings']}" if s["warnings"] else ""))
sys.exit(1 if s["unknown"] or s["unanswerable"] else 0)
PY
then :; else status=1; fi

echo "== refused answers and failed items (the store)"
if command -v sqlite3 >/dev/null; then
    sqlite3 -separator ' | ' "$STORE" \
        "SELECT stage, status, attempts, substr(coalesce(last_error, ''), 1, 160) FROM stage_state
         WHERE status <> 'done' OR attempts > 0 ORDER BY stage, item" | sed 's/^/   /'
    echo "   $(sqlite3 "$STORE" "SELECT count(*) FROM stage_state WHERE status <> 'done' OR attempts > 0") item(s) with a failed attempt"
fi
grep -hvE '^(segment|extract|resolve|route|create|fold|reconcile|link|wikify): ' "$OUT"/run-*.log |
    grep -E 'refused|rejected|failed|unresolved|gate' | sed 's/^/   /' | head -n 40 || true

echo "== dream status"
"$DREAM" status | sed 's/^/   /'
exit $status
