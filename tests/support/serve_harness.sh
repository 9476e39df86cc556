# serve_harness.sh — what the shell tests of `dream serve` share; sourced after DREAM and MODEL
# are set: fail, a server on a free port, and its clean stop. The EXIT trap it sets stops a
# server the test leaves running.

fail() { echo "FAIL: $*" >&2; exit 1; }

SERVER_PID=
serve_harness_cleanup() { [ -n "$SERVER_PID" ] && kill -TERM "$SERVER_PID" 2>/dev/null || true; }
trap serve_harness_cleanup EXIT

# start_server LOG [args...]: `dream serve --model $MODEL --port 0 args...` in the background,
# its output in LOG; returns once it listens, with PORT and SERVER_PID set.
start_server() {
  local log=$1; shift
  : >"$log" # before the server's shell opens it: the poll below must find the file
  "$DREAM" serve --model "$MODEL" --port 0 "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 240); do
    PORT=$(sed -n 's/.*listening on http:\/\/[0-9.]*:\([0-9]*\).*/\1/p' "$log")
    [ -n "$PORT" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; fail "dream serve exited before listening"; }
    sleep 0.25
  done
  cat "$log" >&2; fail "dream serve did not listen within 60 s"
}

# stop_server LOG: SIGTERM; the exit status must be 0 and LOG free of sanitizer reports.
stop_server() {
  local log=$1
  kill -TERM "$SERVER_PID"
  local rc=0; wait "$SERVER_PID" || rc=$?
  SERVER_PID=
  [ "$rc" = 0 ] || { cat "$log" >&2; fail "dream serve exited with status $rc on SIGTERM"; }
  if grep -q -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log"; then cat "$log" >&2; fail "sanitizer report in $log"; fi
}
