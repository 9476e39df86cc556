#!/usr/bin/env bash
# GET /v1/memory/<tool> on `dream serve`, with curl: every read tool on the hand-written vault
# (tests/data/vault) and a store of the Dreaming fixture corpus (tests/data/dreaming/corpus),
# the same JSON as the CLI's --json, 404 with near candidates for an unknown article, 400 for a
# bad argument or tool, and no way to read outside the wiki; the full-text search; and
# POST /v1/memory/ask (the tiny model answers noise: the silence rule and budgets must hold).
# Usage: test_serve_memory.sh DREAM MODEL VAULT WORKDIR
set -euo pipefail
DREAM=$1 MODEL=$2 VAULT=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK"
. "$(dirname "$0")/../support/serve_harness.sh"
export DREAM_WIKI=$VAULT DREAM_HOME=$WORK/home
"$DREAM" ingest "$(dirname "$VAULT")/dreaming/corpus" >"$WORK/ingest.log" 2>&1 || { cat "$WORK/ingest.log" >&2; fail "dream ingest"; }
start_server "$WORK/serve.log" --parallel 2
URL=http://127.0.0.1:$PORT/v1/memory
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
get() { # get NAME PATH_AND_QUERY WANT_STATUS
  local code
  code=$(curl -s -o "$WORK/$1.json" -w '%{http_code}' "$URL/$2")
  [ "$code" = "$3" ] || fail "GET $2: HTTP $code (want $3): $(cat "$WORK/$1.json")"
}
same_as_cli() { # same_as_cli NAME CLI_ARGS...: the HTTP body equals the CLI's --json
  local name=$1; shift
  "$DREAM" "$@" --json > "$WORK/$name.cli.json" || true
  python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a!=b)" "$WORK/$name.json" "$WORK/$name.cli.json" \
    || fail "$name: HTTP and CLI differ: $(cat "$WORK/$name.json") vs $(cat "$WORK/$name.cli.json")"
}

get resolve 'resolve?name=natural%20leaven' 200
[ "$(json "$WORK/resolve.json" "d['stem']")" = Sourdough ] || fail "resolve: $(cat "$WORK/resolve.json")"
same_as_cli resolve resolve natural leaven
get read 'read?name=Sourdough' 200
[ "$(json "$WORK/read.json" "len(d['sections'])")" = 6 ] || fail "read: $(cat "$WORK/read.json")"
[ "$(wc -c < "$WORK/read.json")" -le 2048 ] || fail "default read over 2 KB"
same_as_cli read read Sourdough
get whole 'read?name=Sourdough&whole=1' 200
cmp -s <(json "$WORK/whole.json" "d['text']") <(cat "$VAULT/articles/Sourdough.md"; echo) || fail "whole read is not the file"
get section 'section?name=Sourdough&anchor=feeding-schedule' 200
[ "$(json "$WORK/section.json" "d['references'][0]['label']")" = 2 ] || fail "section: $(cat "$WORK/section.json")"
get links 'links?name=Sourdough' 200
[ "$(json "$WORK/links.json" "d['inbound'][0]['via']")" = main ] || fail "links: $(cat "$WORK/links.json")"
same_as_cli links links Sourdough
get infobox 'infobox?name=Home_Solar_Panels' 200
[ "$(json "$WORK/infobox.json" "d['fields'][2]['value']")" = installed ] || fail "infobox: $(cat "$WORK/infobox.json")"
get list 'list?limit=2&offset=1' 200
[ "$(json "$WORK/list.json" "d['articles']")" = "['Bicycle_Maintenance', 'Cello_Practice']" ] || fail "list: $(cat "$WORK/list.json")"
get category 'category?category=Home%20projects' 200
[ "$(json "$WORK/category.json" "d['total']")" = 2 ] || fail "category: $(cat "$WORK/category.json")"
# list takes the CLI's filters (dream list --category/--type/--kind/--series, --limit, --offset),
# and the server applies them
get listcat 'list?category=Hobbies' 200
[ "$(json "$WORK/listcat.json" "[m['stem'] for m in d['members']]")" = "['Bicycle_Maintenance', 'Cello_Practice', 'Sourdough']" ] \
  || fail "list?category=Hobbies did not filter: $(cat "$WORK/listcat.json")"
same_as_cli listcat list --category Hobbies
get listkind 'list?kind=project' 200
[ "$(json "$WORK/listkind.json" "(d['by'], [m['stem'] for m in d['members']])")" = "('kind', ['Balcony_garden', 'Home_Solar_Panels'])" ] \
  || fail "list?kind=project: $(cat "$WORK/listkind.json")"
get listpage 'list?category=Hobbies&limit=1&offset=1' 200
[ "$(json "$WORK/listpage.json" "(d['total'], d['offset'], [m['stem'] for m in d['members']], d['more'])")" = "(3, 1, ['Cello_Practice'], 1)" ] \
  || fail "list?category=Hobbies&limit=1&offset=1: $(cat "$WORK/listpage.json")"
same_as_cli listpage list --category Hobbies --limit 1 --offset 1
get listtwo 'list?category=Hobbies&kind=domain' 400
json "$WORK/listtwo.json" "d['error']['message']" | grep -q "one of category, type, kind or series, not both category and kind" \
  || fail "two filters: $(cat "$WORK/listtwo.json")"
# an unknown parameter is named, with the ones the endpoint takes
get typo 'list?nmae=x' 400
[ "$(json "$WORK/typo.json" "d['error']['message']")" = "unknown parameter 'nmae' for /v1/memory/list; it takes: category, type, kind, series, limit, offset" ] \
  || fail "unknown parameter: $(cat "$WORK/typo.json")"
[ "$(json "$WORK/typo.json" "(d['error']['code'], d['error']['param'])")" = "('unknown_parameter', 'nmae')" ] || fail "unknown parameter shape: $(cat "$WORK/typo.json")"
# a parameter without a name: the error's param is "", every time (before, the buffer it came
# from was never terminated, so it held stray heap bytes, or the reply was a 500 or nothing)
for i in 1 2 3 4 5; do
  get noname 'list?=x' 400
  [ "$(json "$WORK/noname.json" "(d['error']['code'], d['error']['param'])")" = "('unknown_parameter', '')" ] \
    || fail "a nameless parameter, try $i: $(cat "$WORK/noname.json")"
done
get typo2 'section?name=Sourdough&anchr=feeding-schedule' 400
json "$WORK/typo2.json" "d['error']['message']" | grep -q "unknown parameter 'anchr' for /v1/memory/section; it takes: name, anchor" \
  || fail "unknown parameter on section: $(cat "$WORK/typo2.json")"
get typo3 'search?q=bow' 400
json "$WORK/typo3.json" "d['error']['message']" | grep -q "it takes: query, limit, conversations, since, until" || fail "search?q=: $(cat "$WORK/typo3.json")"
get statusarg 'status?verbose=1' 400
json "$WORK/statusarg.json" "d['error']['message']" | grep -q "/v1/memory/status takes no parameters" || fail "status?verbose: $(cat "$WORK/statusarg.json")"
get twice 'read?name=Sourdough&name=Cello_Practice' 400
json "$WORK/twice.json" "d['error']['message']" | grep -q "parameter 'name' is given twice" || fail "a parameter twice: $(cat "$WORK/twice.json")"
# a NUL byte in a value is refused, not cut short (before, name=Sourdough%00x read Sourdough)
get nul 'read?name=Sourdough%00../../x' 400
json "$WORK/nul.json" "d['error']['message']" | grep -q "holds a NUL byte" || fail "a NUL in a value: $(cat "$WORK/nul.json")"
# a flag's value is one of the words that say on or off (before, whole=banana was silently off)
get badflag 'read?name=Sourdough&whole=banana' 400
json "$WORK/badflag.json" "d['error']['message']" | grep -q "the flag 'whole' is on with no value, 1, true or yes" || fail "whole=banana: $(cat "$WORK/badflag.json")"
get flagoff 'read?name=Sourdough&whole=no' 200
get bareflag 'read?name=Sourdough&whole' 200
json "$WORK/bareflag.json" "'text' in d" | grep -q True || fail "read?whole (no value) is not a whole read: $(cat "$WORK/bareflag.json")"
get search 'search?query=derailleur%20limit' 200
[ "$(json "$WORK/search.json" "d['results'][0]['stem']")" = Bicycle_Maintenance ] || fail "search: $(cat "$WORK/search.json")"
[ "$(json "$WORK/search.json" "d['results'][0]['cite']")" = 'conv:4f4f4f4f#1' ] || fail "search cite: $(cat "$WORK/search.json")"
[ "$(json "$WORK/search.json" "d['conversations'][0]['cite'][:5]")" = 'conv:' ] || fail "search conversations: $(cat "$WORK/search.json")"
same_as_cli search search derailleur limit
get searchconv 'search?query=%22derailleur%20limit%22&conversations=1' 200
[ "$(json "$WORK/searchconv.json" "('results' in d, len(d['conversations']))")" = '(False, 1)' ] || fail "search --conversations: $(cat "$WORK/searchconv.json")"
get searchspan 'search?query=sourdough&conversations=1&since=2024-01-10&until=2024-01-10' 200 # that day's messages only
json "$WORK/searchspan.json" "len(d['conversations']) > 0 and all(c['date'] == '2024-01-10' for c in d['conversations'])" | grep -q True \
  || fail "search --since/--until: $(cat "$WORK/searchspan.json")"
get badquery 'search?query=%22bow%20hold' 400
json "$WORK/badquery.json" "d['error']['message']" | grep -q "bad search query '\"bow hold': the quote at byte 0 is never closed" || fail "bad query: $(cat "$WORK/badquery.json")"
get badsince 'search?query=bow&since=yesterday' 400
# POST /v1/memory/ask: nothing on file needs no model; a question with reads makes one call
ask() { # ask NAME BODY WANT_STATUS
  local code
  code=$(curl -s -o "$WORK/$1.json" -w '%{http_code}' -H 'Content-Type: application/json' -d "$2" "$URL/ask")
  [ "$code" = "$3" ] || fail "POST /v1/memory/ask $2: HTTP $code (want $3): $(cat "$WORK/$1.json")"
}
# a key given twice is refused, not answered by its last value
ask askdup '{"question": "What is my passport number?", "question": "x"}' 400
json "$WORK/askdup.json" "d['error']['message']" | grep -q "duplicate object key" || fail "ask, a key twice: $(cat "$WORK/askdup.json")"
ask asknone '{"question": "What is my passport number?"}' 200
[ "$(json "$WORK/asknone.json" "(d['answered'], d['answer'], d['model_calls'])")" = "(False, 'Nothing on file about that.', 0)" ] || fail "ask: $(cat "$WORK/asknone.json")"
ask askchain '{"question": "How often do I oil the bike chain?"}' 200
json "$WORK/askchain.json" "all(r['bytes'] <= 2048 for r in d['reads']) and d['context_bytes'] < 8192 and d['model_calls'] == 1 and len(d['reads']) > 0" | grep -q True \
  || fail "ask budgets: $(cat "$WORK/askchain.json")"
for c in $(json "$WORK/askchain.json" "' '.join(x['cite'] for x in d['citations'])"); do
  grep -q "\`$c\`" "$VAULT"/articles/*.md || fail "ask cited $c, which no article cites"
done
json "$WORK/askchain.json" "d['answered'] == (len(d['citations']) > 0)" | grep -q True || fail "ask silence rule: $(cat "$WORK/askchain.json")"
ask askbad '{"query": "x"}' 400
ask askbad2 'not json' 400
get status 'status' 200
[ "$(json "$WORK/status.json" "d['articles']")" = 6 ] || fail "status: $(cat "$WORK/status.json")"

# errors: unknown article (404, OpenAI's shape, near candidates), bad arguments and tools (400)
get missing 'read?name=sourdogh' 404
[ "$(json "$WORK/missing.json" "d['error']['code']")" = not_found ] || fail "404 shape: $(cat "$WORK/missing.json")"
[ "$(json "$WORK/missing.json" "d['candidates'][0]['stem']")" = Sourdough ] || fail "404 candidates: $(cat "$WORK/missing.json")"
get noname 'read' 400
get badlimit 'list?limit=ten' 400
get badtool 'frobnicate?name=x' 400
[ "$(json "$WORK/badtool.json" "d['error']['type']")" = invalid_request_error ] || fail "400 shape: $(cat "$WORK/badtool.json")"
# no way out of the wiki
for n in '..%2F..%2Fetc%2Fpasswd' '%2Fetc%2Fpasswd' '..%2Fwiki%2Farticles%2FSourdough' '..%2Farticles%2FSourdough.md'; do
  get trav "read?name=$n&whole=1" 404
  grep -q 'root:' "$WORK/trav.json" && fail "read outside the wiki with $n"
done
# a name is matched against the wiki's articles, never opened as a path: the article's own path,
# as an Obsidian link may write it, names the article
get bypath 'read?name=articles%2FSourdough.md' 200
[ "$(json "$WORK/bypath.json" "d['stem']")" = Sourdough ] || fail "articles/Sourdough.md: $(cat "$WORK/bypath.json")"
get post 'status' 200
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/status")
[ "$code" = 405 ] || fail "POST /v1/memory/status: HTTP $code (want 405)"

stop_server "$WORK/serve.log"

# before `dream init`: status answers (wiki_exists false, the store still shown), as `dream
# status` does; a tool that reads articles is a 404 that names the wiki
DREAM_WIKI=$WORK/no-wiki-yet start_server "$WORK/serve-nowiki.log"
URL=http://127.0.0.1:$PORT/v1/memory
get nowiki 'status' 200
[ "$(json "$WORK/nowiki.json" "d['wiki_exists']")" = False ] || fail "status without a wiki: $(cat "$WORK/nowiki.json")"
get nowikilist 'list' 404
grep -q "no-wiki-yet" "$WORK/nowikilist.json" || fail "list without a wiki: $(cat "$WORK/nowikilist.json")"
stop_server "$WORK/serve-nowiki.log"
echo "PASS: GET /v1/memory: every read tool, 404 with candidates, 400s, no path out, status before init"
