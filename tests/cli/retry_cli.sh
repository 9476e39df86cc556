#!/bin/sh
# retry_cli.sh — items a stage gave up on can be tried again once the cause is fixed: with a
# context too small for any segment prompt (DREAM_CTX=256), three runs give every conversation
# up; `dream status` says so and names `dream run --retry`; a run without it does nothing; a run
# with it at the default context segments them all. Before --retry, nothing but deleting the
# store brought them back.
# argv: DREAM_BINARY MODEL CORPUS_DIR WORK_DIR.
set -u
dream=$1 model=$2 corpus=$3 work=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || exit 1
export DREAM_HOME="$work/home" DREAM_MODEL="$model" DREAM_ADAPTERS="$work/no-adapters" DREAM_THREADS=2
unset DREAM_BACKEND DREAM_CTX
"$dream" init --quiet || fail "init"
"$dream" ingest "$corpus" >/dev/null 2>&1 || fail "ingest"
n=$(sqlite3 "$DREAM_HOME/memory.sqlite" "select count(*) from conversations" 2>/dev/null || python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from conversations').fetchone()[0])" "$DREAM_HOME/memory.sqlite")
[ "$n" -ge 1 ] || fail "nothing ingested"
for i in 1 2 3; do DREAM_CTX=256 "$dream" run --stage segment >"$work/small$i.log" 2>&1; done
out=$("$dream" status 2>&1)
printf '%s\n' "$out" | grep -q "segment: 0 of $n conversations done ($n given up; once the cause is fixed, dream run --retry tries them again)" \
    || fail "status after three runs at DREAM_CTX=256: $out"
"$dream" run --stage segment >"$work/plain.log" 2>&1 || fail "a run without --retry: $(cat "$work/plain.log")"
grep -q "segment: 0 conversation(s)" "$work/plain.log" || fail "a run without --retry took given-up conversations: $(cat "$work/plain.log")"
"$dream" run --stage segment --retry >"$work/retry.log" 2>&1 || fail "dream run --retry: $(cat "$work/retry.log")"
grep -q "retry: $n item(s) a stage had given up on were given a fresh set of attempts" "$work/retry.log" || fail "--retry did not say what it did: $(cat "$work/retry.log")"
grep -q "segment: $n conversation(s): $n segmented" "$work/retry.log" || fail "--retry did not segment them: $(cat "$work/retry.log")"
out=$("$dream" status 2>&1)
printf '%s\n' "$out" | grep -q "given up" && fail "status still counts given-up conversations: $out"
echo "PASS: dream run --retry tries again what a stage gave up on"
