#!/usr/bin/env bash
# Starts `dream serve` on a free port with MODEL and runs the remote-backend test against it.
# Usage: test_remote.sh DREAM TEST_REMOTE MODEL LOG
set -euo pipefail
DREAM=$1 TEST=$2 MODEL=$3 LOG=$4
"$DREAM" serve --model "$MODEL" --port 0 --parallel 4 >"$LOG" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  port=$(sed -n 's/.*listening on http:\/\/[0-9.]*:\([0-9]*\).*/\1/p' "$LOG")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || { cat "$LOG" >&2; echo "FAIL: dream serve exited" >&2; exit 1; }
  sleep 0.25
done
[ -n "$port" ] || { echo "FAIL: dream serve did not listen within 60 s" >&2; exit 1; }
"$TEST" "http://127.0.0.1:$port" "$MODEL"
