#!/bin/sh
# interrupt_cli.sh — Ctrl-C (SIGINT) or SIGTERM while `dream run` works: before, the process
# died with nothing said (on a terminal, the status line left half drawn). It now says it was
# interrupted and that the next `dream run` goes on from there, and still dies by the signal
# (exit 130 or 143, as a shell expects). The run is held in its first model call by a backend
# that takes the connection and never answers; python3 gives dream a default SIGINT (a background
# job of a non-interactive shell inherits it ignored, and an ignored SIGINT stays ignored).
# argv: DREAM_BINARY CORPUS_DIR WORK_DIR.
set -u
dream=$1 corpus=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
export DREAM_HOME="$work/home"
unset DREAM_BACKEND DREAM_MODEL
"$dream" ingest "$corpus" >/dev/null 2>&1 || fail "ingest of $corpus"
python3 - "$work" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1] + "/port", "w").write(str(s.getsockname()[1]))
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    open(sys.argv[1] + "/connected", "a").write("x")
PY
server=$!
trap 'kill $server 2>/dev/null' EXIT
i=0; while [ ! -s "$work/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$work/port") || fail "the silent backend did not start"

for sig in INT TERM; do
    rm -f "$work/connected"
    python3 -c "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])" \
        "$dream" run --stage segment --backend "http://127.0.0.1:$port" >"$work/out" 2>"$work/err" &
    pid=$!
    i=0; while [ ! -s "$work/connected" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$work/connected" ] || { kill -9 $pid; fail "SIG$sig: dream run never called the backend: $(cat "$work/err")"; }
    kill -$sig $pid
    wait $pid
    rc=$?
    want=130; [ $sig = TERM ] && want=143
    [ $rc -eq $want ] || fail "SIG$sig: exit $rc, want $want (death by the signal): $(cat "$work/err")"
    grep -q "^dream run: interrupted; what it finished is kept, and the next dream run goes on from there$" "$work/err" ||
        fail "SIG$sig: no word of the interruption on stderr: $(cat "$work/err")"
done
echo "PASS: dream run interrupted"
