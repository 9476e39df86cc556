#!/bin/sh
# model_cli.sh — --model PATH means the same on every verb that loads a model (run, ask, generate,
# tokenize, serve): each documents it alike, each refuses a path that names no file, and run and
# ask call the model it names (with no $DREAM_MODEL and an empty Hugging Face cache, where they
# would otherwise find none), even when $DREAM_BACKEND points elsewhere.
# argv: DREAM_BINARY TINY_MODEL CORPUS_DIR VAULT_DIR WORK_DIR.
set -u
dream=$1 model=$2 corpus=$3 vault=$4 work=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
has() { printf '%s\n' "$1" | grep -qF -- "$2" || fail "missing '$2' in:
$1"; }
# No model anywhere but where --model says; the tiny model's context is too small for the
# stages' prompts, so every call fails at once as a recorded failed attempt (the test is quick).
run() { env -u DREAM_MODEL -u DREAM_BACKEND DREAM_HOME="$work/home" HF_HUB_CACHE="$work/no-hub" DREAM_ADAPTERS="$work/no-adapters" \
        DREAM_THREADS=1 "$@" 2>&1; }
missing=$work/no-such-model.gguf

for v in run ask generate tokenize serve; do
    help=$("$dream" "$v" --help) || fail "dream $v --help: exit $?"
    printf '%s\n' "$help" | grep -q -- '--model PATH  *the GGUF model file (default: \$DREAM_MODEL, then the Hugging Face cache)$' ||
        fail "dream $v --help does not document --model PATH as the others do:
$help"
done
for args in "run" "ask what" "generate --prompt hi" "tokenize hi" "serve --port 0"; do
    # shellcheck disable=SC2086
    out=$(run "$dream" $args --model "$missing"); rc=$?
    [ $rc -eq 1 ] || fail "dream $args --model MISSING: exit $rc (want 1): $out"
    has "$out" "model file $missing does not exist (given with --model)"
    # the same path from $DREAM_MODEL is named as coming from there, not from --model (run
    # loads no model with nothing to do, ask none without a wiki: both are checked below)
    case $args in run | ask*) continue ;; esac
    # shellcheck disable=SC2086
    out=$(run env DREAM_MODEL="$missing" "$dream" $args); rc=$?
    [ $rc -eq 1 ] || fail "DREAM_MODEL=MISSING dream $args: exit $rc (want 1): $out"
    has "$out" "model file $missing does not exist (given by DREAM_MODEL)"
done

run "$dream" ingest "$corpus" >/dev/null || fail "ingest of $corpus"
out=$(run "$dream" run --stage segment --limit 2 --dry-run --model "$model"); rc=$?
[ $rc -eq 0 ] || fail "run --dry-run --model: exit $rc: $out"
has "$out" "segment: 2 conversation(s) would be segmented"
out=$(run "$dream" run --stage segment --limit 2); rc=$?
[ $rc -eq 1 ] || fail "run with no model anywhere: exit $rc (want 1): $out"
has "$out" "no model found"
out=$(run env DREAM_MODEL="$missing" "$dream" run --stage segment --limit 2); rc=$?
[ $rc -eq 1 ] || fail "DREAM_MODEL=MISSING dream run: exit $rc (want 1): $out"
has "$out" "model file $missing does not exist (given by DREAM_MODEL)"
out=$(run env DREAM_CTX=256 DREAM_BACKEND=http://127.0.0.1:1 "$dream" run --stage segment --limit 2 --model "$model"); rc=$?
[ $rc -eq 0 ] || fail "run --model: exit $rc: $out"
has "$out" "segment: 2 conversation(s): 0 segmented into 0 chunk(s), 0 skipped (nothing to cut), 2 failed attempt(s)"
out=$(run "$dream" run --model "$model" --backend http://127.0.0.1:1); rc=$?
[ $rc -eq 2 ] || fail "run --model --backend: exit $rc (want 2): $out"
has "$out" "give --model PATH (a local model) or --backend URL (a server), not both"

out=$(run "$dream" ask --wiki "$vault" --store "" what about sourdough); rc=$?
[ $rc -eq 1 ] || fail "ask with no model anywhere: exit $rc (want 1): $out"
has "$out" "no model found"
out=$(run env DREAM_MODEL="$missing" "$dream" ask --wiki "$vault" --store "" what about sourdough); rc=$?
[ $rc -eq 1 ] || fail "DREAM_MODEL=MISSING dream ask: exit $rc (want 1): $out"
has "$out" "model file $missing does not exist (given by DREAM_MODEL)"
out=$(run env DREAM_BACKEND=http://127.0.0.1:1 "$dream" ask --wiki "$vault" --store "" --model "$model" what about sourdough); rc=$?
[ $rc -eq 0 ] || fail "ask --model: exit $rc: $out"

out=$(run "$dream" generate --model "$model" --prompt hello --max-tokens 2); rc=$?
[ $rc -eq 0 ] || fail "generate --model: exit $rc: $out"
out=$(run "$dream" tokenize --model "$model" hello); rc=$?
[ $rc -eq 0 ] && [ -n "$out" ] || fail "tokenize --model: exit $rc: $out"
echo "PASS: --model PATH on run, ask, generate, tokenize and serve"
