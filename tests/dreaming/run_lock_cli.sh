#!/usr/bin/env bash
# run_lock_cli.sh DREAM FLOCK CORPUS DIR — the run lock seen from the command line.
# While another process holds <store>.lock (flock(1) here, as a second `dream run` would),
# `dream run` exits 1 at once with a message naming the lock and runs no stage; `dream status`
# says a run is in progress; a dry run still works (it takes no lock). Once the lock is free,
# status says nothing runs and the same run goes through.
set -u
dream=$1 flock=$2 corpus=$3 dir=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
export DREAM_HOME="$dir"
# A first run on a home that has nothing yet makes the store's directory for its lock.
out=$("$dream" run --stage route 2>&1) || fail "a run on an empty home: $out"
[ -f "$dir/memory.sqlite.lock" ] || fail "no lock file at $dir/memory.sqlite.lock"
"$dream" init --quiet || fail "dream init"
"$dream" ingest "$corpus" >/dev/null || fail "dream ingest"
lock="$dir/memory.sqlite.lock"

out=$("$flock" "$lock" "$dream" run --stage route 2>&1); rc=$?
echo "$out"
[ "$rc" = 1 ] || fail "a locked run exited $rc, not 1"
grep -q "another dream run is working on this store; it holds $lock" <<<"$out" || fail "the message does not name the lock"
grep -q "^route:" <<<"$out" && fail "the route stage ran while the lock was held"

out=$("$flock" "$lock" "$dream" status 2>&1) || fail "dream status under the lock: $out"
echo "$out"
grep -q "^running: a dream run is in progress" <<<"$out" || fail "status does not show the run in progress"
out=$("$flock" "$lock" "$dream" run --stage segment --dry-run 2>&1) || fail "a dry run under the lock: $out"
grep -q "segment: 13 conversation(s) would be segmented" <<<"$out" || fail "the dry run did not count the work: $out"

out=$("$dream" status --json) || fail "dream status --json"
grep -q '"running": *null' <<<"$out" || fail "status still shows a run after the lock was freed: $out"
out=$("$dream" run --stage route 2>&1) || fail "the run after the lock was freed: $out"
echo "$out"
grep -q "^route: 0 entit(ies)" <<<"$out" || fail "route did not run"
echo "PASS: run lock: a second run is refused naming $lock, status shows the holder, dry runs and later runs work"
