#!/usr/bin/env bash
# replay_cli.sh DREAM MODEL SRC DIR — `dream run --replay` forwards the ground-truth backend's
# answers through the embedded model. A tiny generated corpus (train/gen_corpus.py) is dreamed
# twice from the same oracle (train/oracle.py): once with `--backend` (the oracle's answers taken
# as they are) and once with `--replay` on the tiny random-weight model (every answer tokenized
# and decoded as forced tokens through the seam's scheduler). The two wikis must hold the same
# articles, byte for byte, and there must be some: a replay that let the model's own choice
# through, lost or cut an answer, or decoded nothing writes other articles (or none). The replay
# run must also have loaded the model, and `dream check` must pass on its wiki. The backend run
# keeps a trace (`--trace`): it must hold exactly the calls the oracle recorded for that run.
set -u
dream=$1 model=$2 src=$3 dir=$4
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "python3 is needed for the oracle"
rm -rf "$dir"
mkdir -p "$dir"
python3 "$src/train/gen_corpus.py" --seed 5 --catalogue train --conversations 3 --out "$dir/corpus" >/dev/null || fail "gen_corpus"

python3 "$src/train/oracle.py" --truth "$dir/corpus/truth.json" --records "$dir/records.jsonl" --port 0 --port-file "$dir/oracle.port" \
    2>"$dir/oracle.log" &
oracle=$!
trap 'kill -TERM $oracle 2>/dev/null; wait $oracle 2>/dev/null' EXIT
for _ in $(seq 1 300); do
    [ -s "$dir/oracle.port" ] && break
    kill -0 $oracle 2>/dev/null || fail "the oracle did not start: $(cat "$dir/oracle.log")"
    sleep 0.1
done
url=http://127.0.0.1:$(cat "$dir/oracle.port")

dream_home() { # NAME RUN-ARGS...: a fresh home, the corpus ingested, one whole run
    local name=$1
    shift
    export DREAM_HOME=$dir/$name
    "$dream" init --quiet || fail "$name: dream init"
    "$dream" ingest "$dir/corpus" >"$dir/$name.ingest.log" 2>&1 || fail "$name: dream ingest: $(cat "$dir/$name.ingest.log")"
    DREAM_ADAPTERS=$dir/no-adapters DREAM_THREADS=2 "$dream" -v run "$@" >"$dir/$name.log" 2>&1 || fail "$name: dream run: $(tail -20 "$dir/$name.log")"
}
dream_home backend --backend "$url" --trace "$dir/backend.trace"
dream_home replay --replay "$url" --model "$model"
cat "$dir/replay.log" | grep -E '^[a-z]+:' | head -20

grep -q "tiny-gemma4" "$dir/replay.log" || fail "the replay run never loaded the model: $(head -5 "$dir/replay.log")"
articles() { (cd "$1" && find . -path ./.git -prune -o -path ./Meta -prune -o -name '*.md' -print | sort); }
a=$(articles "$dir/backend/wiki")
n=$(grep -c . <<<"$a")
[ "$n" -ge 2 ] || fail "the backend run wrote only $n file(s); the test needs a corpus that makes some: $a"
b=$(articles "$dir/replay/wiki")
[ "$a" = "$b" ] || fail "the replay run wrote other articles than the oracle's answers imply: $(diff <(echo "$a") <(echo "$b"))"
diff -r -x .git "$dir/backend/wiki" "$dir/replay/wiki" >"$dir/wiki.diff" || fail "the articles differ: $(head -40 "$dir/wiki.diff")"
DREAM_HOME=$dir/replay "$dream" check >"$dir/check.log" 2>&1 || fail "dream check on the replay wiki: $(tail -20 "$dir/check.log")"
# the backend run's trace holds every call the oracle answered, as the oracle recorded it
python3 - "$dir/backend.trace" "$dir/records.jsonl" <<'PY' || fail "the trace is not the oracle's record of the backend run"
import json, sys
key = lambda r: json.dumps([r["stage"], r["system"], r["user"], r["answer"]])
trace = sorted(key(json.loads(l)) for l in open(sys.argv[1]))
records = sorted(key(json.loads(l)) for l in open(sys.argv[2]))
# the oracle recorded the backend run and then the replay run, which made the same calls
assert trace, "an empty trace"
assert records == sorted(trace * 2), (len(trace), len(records))
print(f"trace: {len(trace)} calls, each one the oracle answered")
PY
# bad input: a trace file that cannot be written stops the run before any model call, naming it
out=$(DREAM_HOME=$dir/backend "$dream" run --backend "$url" --trace "$dir/no-such-dir/t.jsonl" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "no-such-dir/t.jsonl" <<<"$out" || fail "an unwritable --trace gave exit $rc: $out"
# bad input: a replay URL that is not http(s) is a usage error naming it
out=$("$dream" run --replay ftp://nowhere 2>&1); rc=$?
[ $rc = 2 ] && grep -q "ftp://nowhere" <<<"$out" || fail "a bad --replay URL gave exit $rc: $out"
echo "PASS: replay forwards the oracle's answers ($n files, identical)"
