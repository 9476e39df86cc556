#!/usr/bin/env bash
# Starts `dream serve` on a free port with MODEL and runs the remote-backend test against it.
# Usage: test_remote.sh DREAM TEST_REMOTE MODEL LOG
set -euo pipefail
DREAM=$1 TEST=$2 MODEL=$3 LOG=$4
. "$(dirname "$0")/../support/serve_harness.sh"
start_server "$LOG" --parallel 4
"$TEST" "http://127.0.0.1:$PORT" "$MODEL"
