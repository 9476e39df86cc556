#!/bin/sh
# progress_cli.sh — what `dream run` shows while it works (issue 18, item 7). On a pipe stderr gets
# plain lines only: no carriage return or terminal escape, the model's loading said in a line of
# its own with how long it took, and, with DREAM_PROGRESS_EVERY, progress lines that count the
# batch's model calls; by default none in a run this short. On a terminal (script(1) gives stderr
# a pty) one status line is redrawn in place with the calls of the batch in flight. stdout holds
# the stage's summary line and nothing else, on a pipe as before.
# argv: DREAM_BINARY TINY_MODEL CORPUS_DIR WORK_DIR [SCRIPT_PROGRAM].
set -u
dream=$1 model=$2 corpus=$3 work=$4 script_prog=${5:-}
rm -rf "$work" && mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
has() { grep -qF -- "$2" "$1" || fail "missing '$2' in $1:
$(cat "$1")"; }
# The tiny model's context is too small for the stages' prompts: every call fails at once (a
# recorded failed attempt), so the run takes seconds and still goes through the seam.
env_run() { env -u DREAM_BACKEND DREAM_HOME="$work/home" DREAM_MODEL="$model" DREAM_ADAPTERS="$work/no-adapters" DREAM_THREADS=1 \
            DREAM_CTX=256 "$@"; }
summary="segment: 4 conversation(s): 0 segmented into 0 chunk(s), 0 skipped (nothing to cut), 4 failed attempt(s)"
# stdout: the stage's summary line alone ("..., 0 given up, 0 cut(s) put where the person says the topic changes, 0 moved to
# where the words change; 1.5 s (2.65 conversations/s)")
only_summary() { [ "$(wc -l <"$1")" -eq 1 ] && case "$(cat "$1")" in "$summary, "*) true ;; *) false ;; esac ||
                 fail "stdout is not the summary line alone: $(cat "$1")"; }
ingest() { rm -rf "$work/home" && env_run "$dream" ingest "$corpus" >/dev/null || fail "ingest of $corpus"; }

ingest
env_run env DREAM_PROGRESS_EVERY=0.000001 "$dream" run --stage segment --limit 4 --batch 2 >"$work/out" 2>"$work/err" ||
    fail "dream run on a pipe: exit $?: $(cat "$work/err")"
if tr -d '\n' <"$work/err" | grep -q "$(printf '[\r\033]')"; then fail "a carriage return or an escape on a pipe's stderr:
$(od -c "$work/err" | head -20)"; fi
has "$work/err" "dream: loading the model $model"
grep -q '^dream: the model is loaded ([0-9.]* s)$' "$work/err" || fail "no 'the model is loaded (N s)' line: $(cat "$work/err")"
has "$work/err" "segment: 0/4 (0%)"
has "$work/err" "segment: 2/4 (50%)"
grep -q '^segment: 0/4 (0%), batch [0-2]/2 calls$' "$work/err" || fail "no line counting the first batch's calls: $(cat "$work/err")"
only_summary "$work/out"

ingest
env_run "$dream" run --stage segment --limit 4 --batch 2 >"$work/out" 2>"$work/err" || fail "dream run on a pipe: exit $?"
if grep -q 'segment: [0-9]' "$work/err"; then fail "progress lines in a run shorter than DREAM_PROGRESS_EVERY's default: $(cat "$work/err")"; fi
if tr -d '\n' <"$work/err" | grep -q "$(printf '[\r\033]')"; then fail "a carriage return or an escape on a pipe's stderr"; fi
has "$work/err" "dream: loading the model"
only_summary "$work/out"

if [ -n "$script_prog" ]; then
    ingest
    env_run "$script_prog" -qec "'$dream' run --stage segment --limit 4 --batch 2" /dev/null >"$work/tty" 2>&1 || fail "dream run on a pty: exit $?"
    has "$work/tty" "$(printf '\rsegment: 2/4 (50%%)')"
    grep -q 'batch [0-2]/2 calls' "$work/tty" || fail "no status line counting the batch's calls: $(cat -v "$work/tty")"
    has "$work/tty" "$summary"
    grep -q "$(printf '\r\033\\[Ksegment: 4 conversation')" "$work/tty" || fail "the status line is not cleared before the summary"
fi
echo "PASS: dream run progress"
