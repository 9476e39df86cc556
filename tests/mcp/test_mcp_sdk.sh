#!/usr/bin/env bash
# dream's MCP server with real clients: the official MCP TypeScript SDK client (mcp_sdk.mjs)
# over stdio (`dream mcp`) and streamable HTTP (`dream serve`, POST /mcp), then curl for what an
# SDK client never sends: malformed JSON-RPC, a notification (202), GET (405), an unknown
# protocol version (400), a page of another origin (403: the core's Origin rule, which the
# transport's spec requires), text/plain (415), and the bearer token on a keyed server.
# Usage: test_mcp_sdk.sh DREAM MODEL VAULT NODE_MODULES WORKDIR
set -euo pipefail
DREAM=$1 MODEL=$2 VAULT=$3 NODE_MODULES=$4 WORK=$5
rm -rf "$WORK" && mkdir -p "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../support/serve_harness.sh"
[ -n "$NODE_MODULES" ] && [ -f "$NODE_MODULES/@modelcontextprotocol/sdk/package.json" ] \
  || fail "the MCP SDK client is not installed ('$NODE_MODULES'): run 'make test', whose dependency step (scripts/deps.sh) installs it"
export DREAM_WIKI=$VAULT DREAM_HOME=$WORK/home

# stdio: the SDK spawns `dream mcp`
node "$HERE/mcp_sdk.mjs" "$NODE_MODULES" stdio "$DREAM" "$VAULT" || fail "the MCP SDK client over stdio"
# stdio by hand: a malformed line is answered -32700 and the next line still served; EOF ends it with 0
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,' '{"jsonrpc":"2.0","id":2,"method":"ping"}' | "$DREAM" mcp --wiki "$VAULT" --store '' 2>"$WORK/stdio.err") \
  || fail "dream mcp exited with $? at EOF: $(cat "$WORK/stdio.err")"
[ "$(printf '%s\n' "$out" | sed -n 1p | python3 -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])')" = -32700 ] || fail "stdio: malformed line: $out"
[ "$(printf '%s\n' "$out" | sed -n 2p)" = '{"jsonrpc":"2.0","id":2,"result":{}}' ] || fail "stdio: ping after a malformed line: $out"
if "$DREAM" mcp --bogus </dev/null 2>"$WORK/usage.err"; then fail "dream mcp --bogus succeeded"; fi
grep -q "usage: dream mcp" "$WORK/usage.err" || fail "dream mcp --bogus does not print the usage"
echo "ok: stdio by hand: -32700 for a malformed line, the next served, exit 0 at EOF, usage on a bad option"

# post NAME BODY WANT_STATUS [curl args...]: POST /mcp; the body lands in $WORK/NAME.json
post() {
  local name=$1 body=$2 want=$3; shift 3
  local code
  code=$(curl -s -o "$WORK/$name.json" -w '%{http_code}' -H 'Content-Type: application/json' \
         -H 'Accept: application/json, text/event-stream' "$@" --data-binary "$body" "$URL")
  [ "$code" = "$want" ] || fail "POST /mcp $name: HTTP $code (want $want): $(cat "$WORK/$name.json")"
}
rpc_code() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["error"]["code"])' "$WORK/$1.json"; }

start_server "$WORK/serve.log" --parallel 2 --store "$WORK/none.sqlite"
URL=http://127.0.0.1:$PORT/mcp
node "$HERE/mcp_sdk.mjs" "$NODE_MODULES" http "$URL" || fail "the MCP SDK client over HTTP"
post parse '{"jsonrpc":"2.0","id":1,"method":' 400
[ "$(rpc_code parse)" = -32700 ] || fail "malformed JSON: $(cat "$WORK/parse.json")"
post invalid '{"jsonrpc":"2.0","id":1}' 400
[ "$(rpc_code invalid)" = -32600 ] || fail "invalid request: $(cat "$WORK/invalid.json")"
post method '{"jsonrpc":"2.0","id":1,"method":"resources/list"}' 200
[ "$(rpc_code method)" = -32601 ] || fail "unknown method: $(cat "$WORK/method.json")"
post params '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}' 200
[ "$(rpc_code params)" = -32602 ] || fail "unknown tool: $(cat "$WORK/params.json")"
post notification '{"jsonrpc":"2.0","method":"notifications/initialized"}' 202
[ ! -s "$WORK/notification.json" ] || fail "a notification got a body: $(cat "$WORK/notification.json")"
post version '{"jsonrpc":"2.0","id":1,"method":"ping"}' 400 -H 'MCP-Protocol-Version: 1999-01-01'
post version_ok '{"jsonrpc":"2.0","id":1,"method":"ping"}' 200 -H 'MCP-Protocol-Version: 2025-06-18'
post origin '{"jsonrpc":"2.0","id":1,"method":"ping"}' 403 -H 'Origin: https://evil.example'
post origin_local '{"jsonrpc":"2.0","id":1,"method":"ping"}' 403 -H 'Origin: http://localhost:6274' # another local page is another origin
post origin_ok '{"jsonrpc":"2.0","id":1,"method":"ping"}' 200 -H "Origin: http://127.0.0.1:$PORT"
code=$(curl -s -o "$WORK/plain.json" -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL")
[ "$code" = 415 ] || fail "POST /mcp as text/plain: HTTP $code (want 415): $(cat "$WORK/plain.json")"
post miss '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"name":"Sourdoh"}}}' 200
python3 - "$WORK/miss.json" <<'PY' || fail "a miss over HTTP: $(cat "$WORK/miss.json")"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r["isError"] is True, r
assert json.loads(r["content"][0]["text"])["candidates"][0]["stem"] == "Sourdough", r
PY
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL")
[ "$code" = 405 ] || fail "GET /mcp: HTTP $code (want 405: no server-initiated stream)"
echo "ok: POST /mcp by hand: 400 -32700/-32600, -32601, -32602, 202 for a notification, 400 for an unknown version, 403 for another origin, 415 for text/plain, GET 405"
stop_server "$WORK/serve.log"

# a keyed server: the bearer token rule of every endpoint
DREAM_API_KEY=s3cret start_server "$WORK/key.log" --parallel 2 --store "$WORK/none.sqlite" --host 0.0.0.0 --cors http://localhost:6274
URL=http://127.0.0.1:$PORT/mcp
post nokey '{"jsonrpc":"2.0","id":1,"method":"ping"}' 401
post key '{"jsonrpc":"2.0","id":1,"method":"ping"}' 200 -H 'Authorization: Bearer s3cret'
post key_origin '{"jsonrpc":"2.0","id":1,"method":"ping"}' 403 -H 'Authorization: Bearer s3cret' -H 'Origin: https://evil.example' # the token does not let another page in
post key_cors '{"jsonrpc":"2.0","id":1,"method":"ping"}' 200 -H 'Authorization: Bearer s3cret' -H 'Origin: http://localhost:6274'
node "$HERE/mcp_sdk.mjs" "$NODE_MODULES" http "$URL" s3cret || fail "the MCP SDK client with the bearer token"
echo "ok: keyed server: 401 without the token, the SDK client with it; another origin 403 even with it, a --cors one 200"
stop_server "$WORK/key.log"
echo "PASS: MCP over stdio and HTTP"
