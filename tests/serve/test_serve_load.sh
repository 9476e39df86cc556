#!/usr/bin/env bash
# The sanitizer build of `dream serve` under a short concurrent load (bench/serve_load): no
# request may fail, and on SIGTERM the server must exit 0 with no ASan/LSan/UBSan report.
# Usage: test_serve_load.sh DREAM SERVE_LOAD MODEL LOG
set -euo pipefail
DREAM=$1 LOAD=$2 MODEL=$3 LOG=$4
"$DREAM" serve --model "$MODEL" --port 0 --parallel 8 >"$LOG" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
port=
for _ in $(seq 1 240); do
  port=$(sed -n 's/.*listening on http:\/\/[0-9.]*:\([0-9]*\).*/\1/p' "$LOG")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || { cat "$LOG" >&2; echo "FAIL: dream serve exited" >&2; exit 1; }
  sleep 0.25
done
[ -n "$port" ] || { echo "FAIL: dream serve did not listen within 60 s" >&2; exit 1; }
"$LOAD" --url "http://127.0.0.1:$port" --n 48 --concurrency 12 --max-tokens 8 --label "dream serve (sanitized)"
# a client that goes away mid-stream must not leak its job
curl -sN -m 1 "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"go on"}],"max_tokens":400,"temperature":0,"stream":true}' >/dev/null || true
kill -TERM $pid
rc=0; wait $pid || rc=$?
trap - EXIT
if [ $rc != 0 ] || grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$LOG"; then
  cat "$LOG" >&2; echo "FAIL: dream serve exited with $rc or reported a sanitizer error" >&2; exit 1
fi
echo "ok: 48 requests, 12 concurrent, no errors; clean sanitized exit"
