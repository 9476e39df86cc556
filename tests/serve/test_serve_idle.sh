#!/usr/bin/env bash
# Idle connections cannot hold `dream serve`: with --max-connections 4, four clients that
# connect and send nothing, half a request line, or a body shorter than its Content-Length
# take every slot, and a fifth client is turned away; once they have been silent for the
# idle timeout (DREAM_IDLE_TIMEOUT=2 here) the server closes them and the fifth is answered.
# Answers that take their time are not cut: a streamed chat answer and a keep-alive
# connection's second request, each past the timeout, still come whole.
# Usage: test_serve_idle.sh DREAM MODEL WORKDIR
set -euo pipefail
DREAM=$1 MODEL=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
. "$(dirname "$0")/../support/serve_harness.sh"
export DREAM_HOME=$WORK/home
unset DREAM_ALLOW_HOSTS DREAM_CORS DREAM_API_KEY
export DREAM_IDLE_TIMEOUT=2
start_server "$WORK/serve.log" --max-connections 4 --parallel 2

python3 - "$PORT" <<'PY' || fail "idle connections"
import socket, sys, time, urllib.request
port = int(sys.argv[1])

def get(timeout):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=timeout) as r:
            return r.status
    except Exception as e:
        return repr(e)

holders = []
for first in (b"", b"GET /v1/mod", b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", b""):
    s = socket.create_connection(("127.0.0.1", port))
    if first:
        s.sendall(first)
    holders.append(s)
time.sleep(0.5)
full = get(1)
if full == 200:
    sys.exit(f"a fifth client was answered while four connections held the limit of 4: the test proves nothing")
t0 = time.time()
while time.time() - t0 < 30:
    if get(2) == 200:
        break
    time.sleep(0.5)
else:
    sys.exit("no client was answered 30 s after four idle connections took every slot (no idle timeout?)")
for i, s in enumerate(holders):
    s.settimeout(5)
    try:
        left = s.recv(4096)
    except socket.timeout:
        sys.exit(f"idle connection {i} is still open after the timeout")
    except ConnectionResetError:
        left = b""
    if i < 2 and left:
        sys.exit(f"idle connection {i} got an answer to a request it never finished: {left[:80]!r}")
print(f"ok: a fifth client refused while 4 idle connections held the slots, answered {time.time() - t0:.1f} s later")
PY

# a keep-alive connection: one request, silent for less than the timeout, then another
python3 - "$PORT" <<'PY' || fail "keep-alive"
import http.client, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
for _ in range(2):
    c.request("GET", "/v1/models")
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
    time.sleep(1)
print("ok: a keep-alive connection's requests, a second apart, both answered")
PY

# a streamed chat answer: it runs as long as it must (the timeout is for silence before the
# answer, not for the model's time)
code=$(curl -s -N -o "$WORK/stream.txt" -w '%{http_code}' -m 300 "http://127.0.0.1:$PORT/v1/chat/completions" \
  -H 'Content-Type: application/json' \
  -d '{"messages":[{"role":"user","content":"Count from one to forty in words."}],"max_tokens":200,"stream":true}')
[ "$code" = 200 ] || fail "streamed chat: HTTP $code: $(cat "$WORK/stream.txt")"
grep -q 'data: \[DONE\]' "$WORK/stream.txt" || fail "the streamed answer was cut before [DONE]: $(tail -c 400 "$WORK/stream.txt")"
echo "ok: a streamed chat answer came whole"

stop_server "$WORK/serve.log"
echo "PASS: dream serve closes idle connections and serves the next client"
