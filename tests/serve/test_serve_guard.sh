#!/usr/bin/env bash
# What `dream serve` lets in, with curl against the real server: a Host that is not this
# machine is refused (403: DNS rebinding) unless --allow-host / DREAM_ALLOW_HOSTS names it; an
# Origin that is not the server's own is refused (403) unless --cors / DREAM_CORS names it, and
# then the answer carries Access-Control-Allow-Origin and Vary: Origin; a POST body that is not
# application/json is refused (415: a web page's "simple" request) before anything runs, which
# the store's stage_state proves; OPTIONS answers a preflight for an allowed origin (204) and
# refuses one for another; every 405 names the methods in Allow. Requests without Origin (curl,
# SDKs) are untouched.
# Usage: test_serve_guard.sh DREAM MODEL VAULT WORKDIR (the store is the Dreaming fixture corpus's)
set -euo pipefail
DREAM=$1 MODEL=$2 VAULT=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK"
. "$(dirname "$0")/../support/serve_harness.sh"
export DREAM_HOME=$WORK/home DREAM_WIKI=$VAULT
unset DREAM_ALLOW_HOSTS DREAM_CORS DREAM_API_KEY
"$DREAM" ingest "$(dirname "$VAULT")/dreaming/corpus" >"$WORK/ingest.log" 2>&1 || { cat "$WORK/ingest.log" >&2; fail "dream ingest"; }
STORE=$WORK/home/memory.sqlite
[ -f "$STORE" ] || fail "no store at $STORE after dream ingest"

# req NAME WANT_STATUS PATH [curl args...]: the body lands in $WORK/NAME.json, the headers in $WORK/NAME.h
req() {
  local name=$1 want=$2 path=$3; shift 3
  local code
  code=$(curl -s -o "$WORK/$name.json" -D "$WORK/$name.h" -w '%{http_code}' "$@" "http://127.0.0.1:$PORT$path")
  [ "$code" = "$want" ] || fail "$name: $path: HTTP $code (want $want): $(cat "$WORK/$name.json")"
}
# header NAME FIELD: the value of a response header (the last one of that name), without CR
header() { sed -n "s/^$2: *//Ip" "$WORK/$1.h" | tr -d '\r' | tail -n 1; }
no_header() { ! grep -qi "^$2:" "$WORK/$1.h" || fail "$1: the answer has a $2 header: $(cat "$WORK/$1.h")"; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
message() { json "$WORK/$1.json" "d['error']['message']"; }
# says NAME TEXT: the error message holds TEXT, and the error is in the server's shape
says() {
  json "$WORK/$1.json" "d['error']['type']" | grep -q invalid_request_error || fail "$1: not the server's error shape: $(cat "$WORK/$1.json")"
  message "$1" | grep -qF -- "$2" || fail "$1: the message does not say '$2': $(message "$1")"
}
runs() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from stage_state').fetchone()[0])" "$STORE"; }

# ---- the defaults: this machine only ----
start_server "$WORK/serve.log" --parallel 2
for h in "127.0.0.1:$PORT" 127.0.0.1 "localhost:$PORT" localhost LocalHost "[::1]:$PORT" "[::1]"; do
  req host_ok 200 /v1/memory/status -H "Host: $h"
done
req host_bad 403 /v1/memory/status -H 'Host: evil.example'
says host_bad "Host 'evil.example' is not allowed"
says host_bad "--allow-host evil.example"
req host_bad_port 403 /v1/models -H "Host: evil.example:$PORT"
says host_bad_port "Host 'evil.example' is not allowed"
req host_other_ip 403 /v1/models -H 'Host: 10.1.2.3'  # a loopback bind answers for loopback names only
req host_garbled 400 /v1/models -H 'Host: local host'
says host_garbled "is not a host name"
req host_rebind 403 /mcp -H 'Host: 127.0.0.1.evil.example' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
req host_rebind_chat 403 /v1/chat/completions -H 'Host: evil.example' -H 'Content-Type: application/json' -d '{"messages":[]}'
# two Host headers (a loopback one first, then another): RFC 9112 wants 400; only the first was
# checked and the request answered
twohost=$(python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(b'GET /v1/memory/status HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nHost: evil.example\\r\\nConnection: close\\r\\n\\r\\n')
print(s.recv(65536).decode('latin-1').split('\\r\\n')[0])" "$PORT")
case "$twohost" in *" 400 "*) ;; *) fail "two Host headers: $twohost (want 400)";; esac
# raw WHAT REQUEST: the status line the server answers a request sent as it is
raw() { python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode('unicode_escape').encode('latin-1'))
print(s.recv(65536).decode('latin-1').split('\r\n')[0])" "$PORT" "$1"; }
# two Content-Length headers that disagree (request smuggling behind a proxy): RFC 9112 wants
# 400; the first was used and the request answered
twolen=$(raw 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{}{}')
case "$twolen" in *" 400 "*) ;; *) fail "two Content-Length headers: $twolen (want 400)";; esac
# HTTP/1.1 without Host: RFC 9112 wants 400; it was answered with the memory's data
nohost=$(raw 'GET /v1/memory/status HTTP/1.1\r\nConnection: close\r\n\r\n')
case "$nohost" in *" 400 "*) ;; *) fail "HTTP/1.1 without Host: $nohost (want 400)";; esac

echo "ok: Host: the loopback names with and without the port 200; evil.example, another address, a rebinding name 403; two Host headers, two Content-Lengths, HTTP/1.1 without Host 400"

req origin_bad 403 /v1/memory/status -H 'Origin: http://evil.example'
says origin_bad "Origin 'http://evil.example' is not allowed"
says origin_bad "--cors http://evil.example"
no_header origin_bad Access-Control-Allow-Origin
req origin_other_port 403 /v1/models -H 'Origin: http://localhost:6274'  # another local page is another origin
req origin_mcp 403 /mcp -H 'Origin: https://evil.example' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
req origin_null 403 /v1/models -H 'Origin: null'
says origin_null "serve the page from an http(s) origin"
req origin_same 200 /v1/memory/status -H "Origin: http://127.0.0.1:$PORT"
req origin_same_localhost 200 /v1/models -H "Host: localhost:$PORT" -H "Origin: http://localhost:$PORT"
no_header origin_same Access-Control-Allow-Origin
[ "$(header origin_same Vary)" = Origin ] || fail "origin_same: no Vary: Origin: $(cat "$WORK/origin_same.h")"
echo "ok: Origin: another site, another local port, null 403 (on /mcp too); the server's own origin 200"

# a page's simple request: text/plain (no preflight) must not start a run
[ "$(runs)" = 0 ] || fail "the store has stage_state rows before any run"
req plain_run 415 /v1/memory/dream -H 'Content-Type: text/plain' -d '{"stage":"segment","limit":1,"stream":false}'
says plain_run "Content-Type 'text/plain' is not accepted"
says plain_run "application/json"
req form_run 415 /v1/memory/dream -d '{"stage":"segment","limit":1,"stream":false}'  # curl -d: x-www-form-urlencoded
says form_run "application/x-www-form-urlencoded"
req none_run 415 /v1/memory/dream -H 'Content-Type:' -d '{"stage":"segment","limit":1,"stream":false}'
says none_run "no Content-Type"
req plain_chat 415 /v1/chat/completions -H 'Content-Type: text/plain;charset=UTF-8' -d '{"messages":[{"role":"user","content":"hi"}]}'
req plain_mcp 415 /mcp -H 'Content-Type: text/plain' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
req plain_ask 415 /v1/memory/ask -H 'Content-Type: multipart/form-data; boundary=x' -d '{"question":"x"}'
req json_prefix 415 /v1/memory/ask -H 'Content-Type: application/jsonx' -d '{"question":"x"}'
sleep 1
[ "$(runs)" = 0 ] || fail "a POST refused with 415 started a run: stage_state has $(runs) rows"
req json_charset 200 /mcp -H 'Content-Type: Application/JSON; charset=utf-8' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
req json_run 200 /v1/memory/dream -H 'Content-Type: application/json' -d '{"stage":"segment","limit":1,"stream":false}'
[ "$(runs)" -gt 0 ] || fail "the same run with application/json left no stage_state rows, so the 415 check above proves nothing"
echo "ok: text/plain, form, multipart, none 415 and no run (stage_state empty); application/json (any case, charset) runs"

# OPTIONS and 405
req options_plain 204 /v1/chat/completions -X OPTIONS
[ "$(header options_plain Allow)" = 'POST, OPTIONS' ] || fail "OPTIONS: Allow is '$(header options_plain Allow)'"
req options_bad 403 /v1/chat/completions -X OPTIONS -H 'Origin: http://evil.example' -H 'Access-Control-Request-Method: POST'
no_header options_bad Access-Control-Allow-Origin
no_header options_bad Access-Control-Allow-Methods
req options_unknown 404 /v1/nothing -X OPTIONS
req m405_status 405 /v1/memory/status -X POST -H 'Content-Type: application/json' -d '{}'
[ "$(header m405_status Allow)" = 'GET, HEAD, OPTIONS' ] || fail "405 on /v1/memory/status: Allow is '$(header m405_status Allow)'"
req m405_mcp 405 /mcp
[ "$(header m405_mcp Allow)" = 'POST, OPTIONS' ] || fail "405 on GET /mcp: Allow is '$(header m405_mcp Allow)'"
req m405_chat 405 /v1/chat/completions -X DELETE
[ "$(header m405_chat Allow)" = 'POST, OPTIONS' ] || fail "405 on DELETE /v1/chat/completions: Allow is '$(header m405_chat Allow)'"
says m405_chat "DELETE is not allowed on /v1/chat/completions"
# a POST-only path under the GET prefix /v1/memory/ is POST-only: it was routed to the read
# tools on GET ("no read tool 'dream'") and its Allow named GET and HEAD too
for p in dream ask; do
  req "options_$p" 204 "/v1/memory/$p" -X OPTIONS
  [ "$(header "options_$p" Allow)" = 'POST, OPTIONS' ] || fail "OPTIONS /v1/memory/$p: Allow is '$(header "options_$p" Allow)'"
  req "get_$p" 405 "/v1/memory/$p"
  [ "$(header "get_$p" Allow)" = 'POST, OPTIONS' ] || fail "GET /v1/memory/$p: Allow is '$(header "get_$p" Allow)'"
done
# a second Origin or Content-Length is no bad Host: each duplicate names its own header
req two_origins 400 /v1/models -H "Origin: http://127.0.0.1:$PORT" -H "Origin: http://127.0.0.1:$PORT"
says two_origins "more than one Origin header"
[ "$(json "$WORK/two_origins.json" "d['error']['code']")" = duplicate_header ] || fail "two Origin headers: code $(json "$WORK/two_origins.json" "d['error']['code']")"
# HEAD: what GET answers, without the body (RFC 9110 9.3.2: a server that takes GET takes HEAD);
# it was a 405 that named GET alone
req get_models 200 /v1/models
req head_models 200 /v1/models -I
# curl -I writes the headers where the body would go: the raw reply shows whether a body followed
headbody=$(python3 -c "
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.sendall(b'HEAD /v1/models HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n')
got = b''
while True:
    b = s.recv(65536)
    if not b: break
    got += b
head, _, body = got.partition(b'\\r\\n\\r\\n')
print(head.split(b'\\r\\n')[0].decode(), len(body))
" "$PORT")
[ "$headbody" = "HTTP/1.1 200 OK 0" ] || fail "HEAD /v1/models: '$headbody' (want the status line of a 200 and a body of 0 bytes)"
[ "$(header head_models Content-Type)" = "$(header get_models Content-Type)" ] || fail "HEAD /v1/models: Content-Type '$(header head_models Content-Type)', GET's is '$(header get_models Content-Type)'"
[ "$(header head_models Content-Length)" = "$(wc -c <"$WORK/get_models.json" | tr -d ' ')" ] || fail "HEAD /v1/models: Content-Length '$(header head_models Content-Length)' is not the GET body's length"
req head_status 200 /v1/memory/status -I
req head_miss 404 /v1/memory/read?name=No_such_article -I
req head_mcp 405 /mcp -I
[ "$(header head_mcp Allow)" = 'POST, OPTIONS' ] || fail "405 on HEAD /mcp: Allow is '$(header head_mcp Allow)'"
echo "ok: OPTIONS 204 with Allow, a preflight from another origin 403, 405 with Allow, HEAD as GET without a body"
stop_server "$WORK/serve.log"

# ---- --allow-host and --cors (they replace what the environment says) ----
DREAM_ALLOW_HOSTS=env.lan DREAM_CORS=http://env.example start_server "$WORK/flags.log" --parallel 2 --allow-host dream.lan --allow-host Box.Local \
  --cors http://localhost:5173 --cors https://app.example
req flag_host 200 /v1/memory/status -H 'Host: dream.lan'
req flag_host_port 200 /v1/memory/status -H "Host: dream.lan:$PORT"
req flag_host_case 200 /v1/models -H 'Host: box.local'
req flag_host_still_local 200 /v1/models -H "Host: localhost:$PORT"
req flag_host_env 403 /v1/models -H 'Host: env.lan'
req flag_host_other 403 /v1/models -H 'Host: evil.example'
req cors_get 200 /v1/memory/status -H 'Origin: http://localhost:5173'
[ "$(header cors_get Access-Control-Allow-Origin)" = http://localhost:5173 ] || fail "cors_get: $(cat "$WORK/cors_get.h")"
[ "$(header cors_get Vary)" = Origin ] || fail "cors_get: no Vary: Origin: $(cat "$WORK/cors_get.h")"
req cors_mcp 200 /mcp -H 'Origin: https://app.example' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"ping"}'
[ "$(header cors_mcp Access-Control-Allow-Origin)" = https://app.example ] || fail "cors_mcp: $(cat "$WORK/cors_mcp.h")"
req cors_error 404 /v1/memory/read?name=Nothing -H 'Origin: http://localhost:5173'  # errors carry it too: the page can read them
[ "$(header cors_error Access-Control-Allow-Origin)" = http://localhost:5173 ] || fail "cors_error: $(cat "$WORK/cors_error.h")"
req cors_env 403 /v1/models -H 'Origin: http://env.example'
req cors_other 403 /v1/models -H 'Origin: http://localhost:5174'
no_header cors_other Access-Control-Allow-Origin
req preflight 204 /v1/chat/completions -X OPTIONS -H 'Origin: http://localhost:5173' -H 'Access-Control-Request-Method: POST' \
  -H 'Access-Control-Request-Headers: content-type, authorization, x-stainless-lang'
[ "$(header preflight Access-Control-Allow-Origin)" = http://localhost:5173 ] || fail "preflight: $(cat "$WORK/preflight.h")"
[ "$(header preflight Access-Control-Allow-Methods)" = 'POST, OPTIONS' ] || fail "preflight methods: $(cat "$WORK/preflight.h")"
header preflight Access-Control-Allow-Headers | grep -qi 'authorization' || fail "preflight headers: $(cat "$WORK/preflight.h")"
header preflight Access-Control-Allow-Headers | grep -qi 'x-stainless-lang' || fail "preflight headers: $(cat "$WORK/preflight.h")"
[ "$(header preflight Vary)" = Origin ] || fail "preflight: no Vary: Origin"
[ -n "$(header preflight Access-Control-Max-Age)" ] || fail "preflight: no Access-Control-Max-Age"
req preflight_get 204 /v1/memory/search -X OPTIONS -H 'Origin: https://app.example' -H 'Access-Control-Request-Method: GET'
[ "$(header preflight_get Access-Control-Allow-Methods)" = 'GET, HEAD, OPTIONS' ] || fail "preflight_get: $(cat "$WORK/preflight_get.h")"
req preflight_bad 403 /v1/chat/completions -X OPTIONS -H 'Origin: http://localhost:5174' -H 'Access-Control-Request-Method: POST'
says preflight_bad "Origin 'http://localhost:5174' is not allowed"
no_header preflight_bad Access-Control-Allow-Origin
echo "ok: --allow-host names 200 (any case, any port), the environment's replaced; --cors origins 200 with ACAO and Vary, preflight 204; others 403"
stop_server "$WORK/flags.log"

# ---- the environment alone ----
DREAM_ALLOW_HOSTS='env.lan, env2.lan' DREAM_CORS=http://env.example start_server "$WORK/env.log" --parallel 2
req env_host 200 /v1/models -H 'Host: env2.lan'
req env_cors 200 /v1/models -H 'Host: env.lan' -H 'Origin: http://env.example'
[ "$(header env_cors Access-Control-Allow-Origin)" = http://env.example ] || fail "env_cors: $(cat "$WORK/env_cors.h")"
stop_server "$WORK/env.log"
echo "ok: DREAM_ALLOW_HOSTS and DREAM_CORS"

# ---- bad lists are refused at start, naming the entry ----
refused() { # refused WHAT RC TEXT ARGS...: dream serve must exit with RC and say TEXT
  local what=$1 want=$2 text=$3; shift 3
  local rc=0
  "$DREAM" serve --model "$MODEL" --port 0 "$@" >"$WORK/refused.log" 2>&1 </dev/null || rc=$?
  [ "$rc" = "$want" ] || fail "$what: dream serve exited with $rc (want $want): $(cat "$WORK/refused.log")"
  grep -qF -- "$text" "$WORK/refused.log" || fail "$what: the refusal does not say '$text': $(cat "$WORK/refused.log")"
}
refused 'cors *' 1 "--cors '*'" --cors '*'
refused 'cors null' 1 "--cors 'null'" --cors null
refused 'cors with a path' 1 "--cors 'http://a.example/app'" --cors http://a.example/app
refused 'cors without a scheme' 1 "--cors 'a.example'" --cors a.example
refused 'allow-host with a port' 1 "--allow-host 'a.example:8080'" --allow-host a.example:8080
refused 'allow-host with a slash' 1 "--allow-host 'http://a.example'" --allow-host http://a.example
refused 'allow-host empty' 2 "--allow-host needs a value" --allow-host
DREAM_CORS='http://ok.example,*' refused 'DREAM_CORS with *' 1 "'*'"
echo "ok: *, null, a path, no scheme, a port, a URL refused at start with the entry named"
echo "PASS: dream serve's Host, Origin, Content-Type, OPTIONS and Allow rules"
