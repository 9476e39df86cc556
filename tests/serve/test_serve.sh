#!/usr/bin/env bash
# `dream serve` with real clients: curl (plain, streaming, bad JSON, too large, unknown path,
# API key on a non-loopback bind) and the official `openai` npm package, installed here at test
# time. Greedy answers must equal `dream generate --chat` on the same input.
# Usage: test_serve.sh DREAM MODEL WORKDIR
set -euo pipefail
DREAM=$1 MODEL=$2 WORK=$3
mkdir -p "$WORK"
. "$(dirname "$0")/../support/serve_harness.sh"

# json FILE EXPR: a value from a JSON file (python's json module; EXPR indexes d).
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

USER_TEXT="Hello there, how are you?"
EXPECT=$("$DREAM" generate --model "$MODEL" --chat "$USER_TEXT" --max-tokens 24)
[ -n "$EXPECT" ] || fail "dream generate --chat printed nothing"
printf '%s' "$EXPECT" >"$WORK/expect.txt"

DREAM_LOG=info start_server "$WORK/serve.log" --parallel 4
URL=http://127.0.0.1:$PORT
JSON_TYPE='Content-Type: application/json' # every POST body must say so (415 otherwise: tests/serve/test_serve_guard.sh)
body=$(python3 -c 'import json,sys; print(json.dumps({"model":"x","messages":[{"role":"user","content":sys.argv[1]}],"temperature":0,"max_tokens":24}))' "$USER_TEXT")

# models
code=$(curl -s -o "$WORK/models.json" -w '%{http_code}' "$URL/v1/models")
[ "$code" = 200 ] || fail "GET /v1/models: HTTP $code"
[ "$(json "$WORK/models.json" "d['data'][0]['id']")" = tiny-gemma4 ] || fail "GET /v1/models: $(cat "$WORK/models.json")"

# non-streaming: the greedy answer of dream generate --chat, with usage counts
code=$(curl -s -o "$WORK/plain.json" -w '%{http_code}' "$URL/v1/chat/completions" -H 'Content-Type: application/json' -d "$body")
[ "$code" = 200 ] || fail "plain completion: HTTP $code: $(cat "$WORK/plain.json")"
json "$WORK/plain.json" "d['choices'][0]['message']['content']" >"$WORK/plain.txt"
[ "$(cat "$WORK/plain.txt")" = "$EXPECT" ] || fail "plain completion differs from dream generate --chat: '$(cat "$WORK/plain.txt")' vs '$EXPECT'"
[ "$(json "$WORK/plain.json" "d['usage']['completion_tokens']")" -ge 1 ] || fail "usage.completion_tokens missing"
[ "$(json "$WORK/plain.json" "d['usage']['total_tokens'] == d['usage']['prompt_tokens'] + d['usage']['completion_tokens']")" = True ] \
  || fail "usage does not add up: $(cat "$WORK/plain.json")"
echo "ok: plain completion equals dream generate --chat ($(json "$WORK/plain.json" "d['usage']"))"

# streaming: data: chunks ending in data: [DONE], deltas joined = the same answer
sbody=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["stream"]=True; print(json.dumps(d))' "$body")
curl -sN "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$sbody" >"$WORK/stream.txt"
[ "$(tail -n 2 "$WORK/stream.txt" | head -n 1)" = "data: [DONE]" ] || fail "the stream does not end with data: [DONE]: $(tail -c 300 "$WORK/stream.txt")"
python3 - "$WORK/stream.txt" "$WORK/expect.txt" <<'PY' || fail "streamed answer check failed"
import json, sys
events = [l[6:] for l in open(sys.argv[1]).read().split('\n') if l.startswith('data: ')]
assert events[-1] == '[DONE]', events[-1]
chunks = [json.loads(e) for e in events[:-1]]
assert all(c['object'] == 'chat.completion.chunk' for c in chunks)
assert len(chunks) >= 4, f"only {len(chunks)} chunks: not streamed token by token"
text = ''.join(c['choices'][0]['delta'].get('content', '') for c in chunks if c['choices'])
expect = open(sys.argv[2]).read()
assert text == expect, (text, expect)
assert chunks[-1]['choices'][0]['finish_reason'] in ('stop', 'length')
print(f"ok: streamed {len(chunks)} chunks, joined text equals dream generate --chat")
PY

# a stop string cuts the answer before it
stop=$(python3 -c 'import sys; w=sys.argv[1]; print(w[len(w)//2:len(w)//2+3])' "$EXPECT")
stbody=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["stop"]=[sys.argv[2]]; print(json.dumps(d))' "$body" "$stop")
curl -s "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$stbody" >"$WORK/stop.json"
python3 - "$WORK/stop.json" "$WORK/expect.txt" "$stop" <<'PY' || fail "stop string check failed"
import json, sys
d = json.load(open(sys.argv[1])); expect = open(sys.argv[2]).read(); stop = sys.argv[3]
got = d['choices'][0]['message']['content']
assert got == expect[:expect.index(stop)], (got, stop)
assert d['choices'][0]['finish_reason'] == 'stop'
print(f"ok: stop string {stop!r} cut the answer to {len(got)} bytes")
PY

# a stop string at the very start: an empty answer, every time (before, the empty text's buffer
# was never terminated: stray heap bytes came back as the content, or a 500 "out of memory")
st0body=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["stop"]=[sys.argv[2][:2]]; print(json.dumps(d))' "$body" "$EXPECT")
for i in 1 2 3 4 5; do
  code=$(curl -s -o "$WORK/stop0.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$st0body")
  [ "$code" = 200 ] || fail "a stop string at the start, try $i: HTTP $code: $(cat "$WORK/stop0.json")"
  [ "$(json "$WORK/stop0.json" "repr(d['choices'][0]['message']['content'])")" = "''" ] \
    || fail "a stop string at the start, try $i: content is not empty: $(cat "$WORK/stop0.json")"
done
echo "ok: a stop string at the start gives an empty answer"

# a client that gives up on a plain (non-streaming) request stops its generation, as a streaming
# one does (before, it ran on to max_tokens holding its batch slot); the server says so at info
curl -s --max-time 1 "$URL/v1/chat/completions" -H "$JSON_TYPE" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4096,"grammar":"root ::= \"a\" root"}' >/dev/null || true
for _ in $(seq 1 600); do grep -q "its client went away" "$WORK/serve.log" && break; sleep 0.1; done
left=$(sed -n 's/.*stopped after \([0-9]*\) generated token(s): its client went away.*/\1/p' "$WORK/serve.log" | head -n 1)
[ -n "$left" ] || fail "a plain request whose client left was not stopped: $(tail -n 5 "$WORK/serve.log")"
[ "$left" -lt 4096 ] || fail "a plain request whose client left ran to max_tokens ($left)"
echo "ok: a plain request whose client left after 1 s stopped after $left of 4096 tokens"

# errors in OpenAI's shape
check_error() { # NAME EXPECTED_CODE FILE
  python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['error']; assert e['message'] and e['type']=='invalid_request_error', e" "$3" \
    || fail "$1: not OpenAI's error shape: $(cat "$3")"
  echo "ok: $1 -> $2 $(json "$3" "d['error']['message']")"
}
code=$(curl -s -o "$WORK/bad.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d '{"messages": [')
[ "$code" = 400 ] || fail "malformed JSON: HTTP $code"; check_error "malformed JSON" 400 "$WORK/bad.json"
code=$(curl -s -o "$WORK/bad2.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d '{"messages":[{"role":"wizard","content":"x"}]}')
[ "$code" = 400 ] || fail "bad role: HTTP $code"; check_error "bad role" 400 "$WORK/bad2.json"
code=$(curl -s -o "$WORK/bad3.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":100000}')
[ "$code" = 400 ] || fail "max_tokens over the limit: HTTP $code"; check_error "max_tokens over the limit" 400 "$WORK/bad3.json"
[ "$(json "$WORK/bad3.json" "(d['error']['code'], d['error']['param'])")" = "('invalid_value', 'max_tokens')" ] \
  || fail "max_tokens over the limit: the error does not name the parameter: $(cat "$WORK/bad3.json")"
head -c 1100000 /dev/zero | tr '\0' a >"$WORK/big.txt"
code=$(curl -s -o "$WORK/big.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" --data-binary @"$WORK/big.txt")
[ "$code" = 413 ] || fail "body over --max-body: HTTP $code"; check_error "body too large (Content-Length)" 413 "$WORK/big.json"
code=$(curl -s -o "$WORK/big2.json" -w '%{http_code}' -H 'Transfer-Encoding: chunked' "$URL/v1/chat/completions" -H "$JSON_TYPE" --data-binary @"$WORK/big.txt")
[ "$code" = 413 ] || fail "chunked body over --max-body: HTTP $code"; check_error "body too large (chunked)" 413 "$WORK/big2.json"
# a chunked body that goes on and on: a few MiB past the limit the server answers 413 and closes
# the connection (the 413 may be lost to the reset of a client that is still sending); before, it
# read on for as long as the client sent: 428 MB in 8 s, no answer
python3 - "$PORT" <<'PY' || fail "an endless chunked body was not cut off at --max-body"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
piece = b"10000\r\n" + b"a" * 65536 + b"\r\n"
sent, reply, closed = 0, b"", False
s.settimeout(0.05)
end = time.time() + 60
while time.time() < end and sent < 64 * 2**20 and not reply:
    try:
        s.sendall(piece)
        sent += 65536
    except OSError:  # the server closed its side
        closed = True
        break
    try:
        reply = s.recv(4096)
    except socket.timeout:
        pass
s.settimeout(5)
try:
    while b"\r\n" not in reply:
        more = s.recv(4096)
        if not more:
            break
        reply += more
except OSError:
    closed = True
line = reply.split(b"\r\n")[0].decode("latin-1")
assert " 413 " in line or (closed and not reply), (line, sent)
assert sent < 24 * 2**20, f"{sent} bytes went in before the server stopped reading"
print(f"ok: an endless chunked body was cut off after {sent // 1024} KiB: {line or 'connection closed'}")
PY
code=$(curl -s -o "$WORK/nf.json" -w '%{http_code}' "$URL/v1/nothing/here")
[ "$code" = 404 ] || fail "unknown path: HTTP $code"; check_error "unknown path" 404 "$WORK/nf.json"

# concurrent requests are batched and each still gets its own greedy answer
cpids=()
for i in 1 2 3 4 5 6; do curl -s "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$body" -o "$WORK/conc$i.json" & cpids+=($!); done
for p in "${cpids[@]}"; do wait "$p"; done
for i in 1 2 3 4 5 6; do
  [ "$(json "$WORK/conc$i.json" "d['choices'][0]['message']['content']")" = "$EXPECT" ] || fail "concurrent request $i: $(cat "$WORK/conc$i.json")"
done
echo "ok: 6 concurrent requests each equal dream generate --chat"

# continuous batching across clients: a short request that arrives while a long one streams joins
# the running batch and is answered at once, not after the long one ends
lbody=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["max_tokens"]=200; d["stream"]=True; print(json.dumps(d))' "$body")
curl -sN "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$lbody" >"$WORK/long.txt" & lpid=$!
chunks() { grep -c '^data: {' "$WORK/long.txt" 2>/dev/null || true; }
for _ in $(seq 1 3000); do [ "$(chunks)" -ge 3 ] && break; sleep 0.1; done
[ "$(chunks)" -ge 3 ] || fail "the long stream did not start"
shbody=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["max_tokens"]=2; print(json.dumps(d))' "$body")
curl -s "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$shbody" -o "$WORK/short.json"
at_short=$(chunks)
done_at_short=$(grep -c '^data: \[DONE\]' "$WORK/long.txt" || true)
wait "$lpid"
total=$(chunks)
[ "$total" -ge 150 ] || fail "this check needs a long answer, but the 200-token request streamed only $total chunks"
[ "$done_at_short" = 0 ] || fail "the short request was answered only after the long stream ended: it did not join the running batch"
short=$(json "$WORK/short.json" "d['choices'][0]['message']['content']")
case "$EXPECT" in "$short"*) ;; *) fail "the joined request's answer '$short' is not the start of '$EXPECT'";; esac
echo "ok: a 2-token request joined a running 200-token stream and was answered after $at_short of its $total chunks"

# a \u0000 in a string is valid JSON the server cannot use: a 400 that says so in words, not by
# the JSON library's flag name
code=$(curl -s -o "$WORK/nul.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d '{"messages":[{"role":"user","content":"a\u0000b"}],"max_tokens":2}')
[ "$code" = 400 ] || fail "a NUL in the content: HTTP $code"; check_error "a NUL in the content" 400 "$WORK/nul.json"
grep -q "NUL character" "$WORK/nul.json" && ! grep -q "JSON_ALLOW_NUL" "$WORK/nul.json" || fail "a NUL in the content: $(cat "$WORK/nul.json")"

# a grammar that does not compile is the request's fault, streamed or not: 400 before any event
# (a stream was a 200 carrying the error as an event), and so is one the answer dead-ends in
# (a 500 server_error before)
code=$(curl -s -o "$WORK/badg.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"grammar":"root ::= (","stream":true}')
[ "$code" = 400 ] || fail "a stream with a bad grammar: HTTP $code: $(head -c 300 "$WORK/badg.json")"; check_error "a stream with a bad grammar" 400 "$WORK/badg.json"
code=$(curl -s -o "$WORK/deadg.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"grammar":"root ::= \"a\" [\\x00] \"bc\""}')
[ "$code" = 400 ] || fail "a grammar the answer dead-ends in: HTTP $code: $(cat "$WORK/deadg.json")"; check_error "a grammar the answer dead-ends in" 400 "$WORK/deadg.json"

# the official openai npm client, installed now
NPM_DIR=$WORK/npm
if [ ! -f "$NPM_DIR/node_modules/openai/package.json" ]; then
  command -v npm >/dev/null || fail "npm is not installed; it is needed to install the openai client (apt-get install npm)"
  mkdir -p "$NPM_DIR"
  (cd "$NPM_DIR" && npm install --no-audit --no-fund --silent openai@7.59.0 >"$WORK/npm.log" 2>&1) \
    || { cat "$WORK/npm.log" >&2; fail "npm install openai@7.59.0 failed (is the npm registry reachable?); the openai client test cannot run"; }
fi
node "$(dirname "$0")/serve_openai.mjs" "$NPM_DIR/node_modules" "$URL/v1" "$USER_TEXT" >"$WORK/openai.jsonl" \
  || fail "the openai client failed against dream serve"
python3 - "$WORK/openai.jsonl" "$WORK/expect.txt" <<'PY' || fail "openai client answers differ"
import json, sys
expect = open(sys.argv[2]).read()
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r['kind'] for r in rows] == ['plain', 'stream'], rows
for r in rows:
    assert r['content'] == expect, (r['kind'], r['content'], expect)
    assert r['usage']['completion_tokens'] >= 1 and r['finish'] in ('stop', 'length'), r
print(f"ok: openai client plain and streaming ({rows[1]['chunks']} chunks) equal dream generate --chat")
PY
# an answer the shutdown cuts short is an error, not a "length" finish that looks complete
curl -s -o "$WORK/cut.json" -w '%{http_code}' "$URL/v1/chat/completions" -H "$JSON_TYPE" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4096,"grammar":"root ::= \"a\" root"}' >"$WORK/cut.code" &
cut_pid=$!
curl -sN "$URL/v1/chat/completions" -H "$JSON_TYPE" \
  -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4096,"stream":true,"grammar":"root ::= \"a\" root"}' >"$WORK/cut.sse" &
cuts_pid=$!
for _ in $(seq 1 300); do [ "$(grep -c '"content"' "$WORK/cut.sse" 2>/dev/null)" -ge 3 ] && break; sleep 0.1; done
stop_server "$WORK/serve.log"
wait "$cut_pid" "$cuts_pid" || true
[ "$(cat "$WORK/cut.code")" = 503 ] || fail "a plain answer cut by the shutdown: HTTP $(cat "$WORK/cut.code"): $(head -c 300 "$WORK/cut.json")"
grep -q "shut" "$WORK/cut.json" || fail "the cut answer's error does not say the server shut down: $(cat "$WORK/cut.json")"
grep -q '"finish_reason":"length"' "$WORK/cut.sse" && fail "a stream cut by the shutdown ends as a length finish: $(tail -c 300 "$WORK/cut.sse")"
grep -q '"error"' "$WORK/cut.sse" || fail "a stream cut by the shutdown carries no error event: $(tail -c 300 "$WORK/cut.sse")"
echo "ok: SIGTERM stops the server cleanly; the answers it cut short say so (503, an error event)"

# a non-loopback bind: refused without a key; with one, requests need the bearer token
if DREAM_API_KEY= "$DREAM" serve --model "$MODEL" --host 0.0.0.0 --port 0 >"$WORK/nokey.log" 2>&1; then fail "a 0.0.0.0 bind without DREAM_API_KEY started"; fi
grep -q "DREAM_API_KEY" "$WORK/nokey.log" || fail "the refusal does not say to set DREAM_API_KEY: $(cat "$WORK/nokey.log")"
echo "ok: 0.0.0.0 without a key refused: $(tail -n1 "$WORK/nokey.log")"
DREAM_API_KEY=s3cret start_server "$WORK/key.log" --parallel 4 --host 0.0.0.0
URL=http://127.0.0.1:$PORT
code=$(curl -s -D "$WORK/nokey.h" -o "$WORK/nokey.json" -w '%{http_code}' "$URL/v1/models")
[ "$code" = 401 ] || fail "no token on a keyed server: HTTP $code"; check_error "no token" 401 "$WORK/nokey.json"
grep -qi '^WWW-Authenticate: Bearer' "$WORK/nokey.h" || fail "a 401 without WWW-Authenticate: Bearer (RFC 9110): $(cat "$WORK/nokey.h")"
code=$(curl -s -o "$WORK/wrong.json" -w '%{http_code}' -H 'Authorization: Bearer s3creT' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$body")
[ "$code" = 401 ] || fail "wrong token: HTTP $code"; check_error "wrong token" 401 "$WORK/wrong.json"
code=$(curl -s -o "$WORK/right.json" -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$URL/v1/chat/completions" -H "$JSON_TYPE" -d "$body")
[ "$code" = 200 ] || fail "right token: HTTP $code"
[ "$(json "$WORK/right.json" "d['choices'][0]['message']['content']")" = "$EXPECT" ] || fail "keyed answer differs"
DREAM_API_KEY=s3cret node "$(dirname "$0")/serve_openai.mjs" "$NPM_DIR/node_modules" "$URL/v1" "$USER_TEXT" >/dev/null \
  || fail "the openai client with the key failed"
echo "ok: keyed server: no/wrong token 401, right token 200 (curl and openai client)"
stop_server "$WORK/key.log"
echo "PASS"
