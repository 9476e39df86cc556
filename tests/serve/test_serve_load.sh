#!/usr/bin/env bash
# The sanitizer build of `dream serve` under a short concurrent load (bench/serve_load): no
# request may fail, and on SIGTERM the server must exit 0 with no ASan/LSan/UBSan report.
# Usage: test_serve_load.sh DREAM SERVE_LOAD MODEL LOG
set -euo pipefail
DREAM=$1 LOAD=$2 MODEL=$3 LOG=$4
. "$(dirname "$0")/../support/serve_harness.sh"
start_server "$LOG" --parallel 8
"$LOAD" --url "http://127.0.0.1:$PORT" --n 48 --concurrency 12 --max-tokens 8 --label "dream serve (sanitized)"
# a client that goes away mid-stream must not leak its job
curl -sN -m 1 "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"go on"}],"max_tokens":400,"temperature":0,"stream":true}' >/dev/null || true
stop_server "$LOG"
echo "ok: 48 requests, 12 concurrent, no errors; clean sanitized exit"
