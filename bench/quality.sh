#!/usr/bin/env bash
# quality.sh — the Dreaming's quality benchmark with dream-mini (bench/eval.py): dreams the
# held-out corpus (bench/data/heldout: train/gen_corpus.py --seed 2001 --catalogue heldout, whose
# subjects the model never saw), the casual-style held-out corpora (bench/data/casual-heldout/S:
# train/gen_corpus.py --seed S --catalogue heldout --style casual, S = 3001..3004) and the bundled
# sample conversations, with the base model and
# with the committed adapter(s), and prints the DREAM-EVAL lines and each run's wall time; on the
# generated corpora it then asks the dreamed wiki questions (bench/ask_eval.py: `dream ask` with
# the same model, scored against the truth).
#
#   bash bench/quality.sh [MODEL [ADAPTERS]]   (defaults models/dream-mini.gguf, models/adapters)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin
MODEL=${1:-models/dream-mini.gguf}
ADAPTERS=${2:-models/adapters}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

one() { # corpus-name input-dir truth adapters-dir
    local home=$WORK/$1
    rm -rf "$home"
    mkdir -p "$home"
    DREAM_HOME=$home "$BIN/dream" init --quiet
    DREAM_HOME=$home "$BIN/dream" ingest "$2" >/dev/null 2>&1
    local t0=$(date +%s%N)
    DREAM_HOME=$home DREAM_MODEL=$MODEL DREAM_ADAPTERS=$4 "$BIN/dream" run >"$home.log" 2>&1 || { cat "$home.log"; return 1; }
    local t1=$(date +%s%N)
    python3 bench/eval.py --dream "$BIN/dream" --truth "$3" --home "$home" --corpus "$1"
    echo "DREAM-EVAL corpus=$1 measure=run_seconds value=$(( (t1 - t0) / 1000000000 ))"
    case $1 in sample-*) ;; *)
        DREAM_ADAPTERS=$4 python3 bench/ask_eval.py --dream "$BIN/dream" --truth "$3" --home "$home" --corpus "$1" --model "$MODEL" ;;
    esac
}
one heldout-base bench/data/heldout bench/data/heldout/truth.json "$WORK/none"
one sample-base examples/conversations bench/data/sample-truth.json "$WORK/none"
for c in bench/data/casual-heldout/*/; do
    one "casual-$(basename "$c")-base" "$c" "$c/truth.json" "$WORK/none"
done
if ls "$ADAPTERS"/memory-*.gguf >/dev/null 2>&1; then
    one heldout-adapter bench/data/heldout bench/data/heldout/truth.json "$ADAPTERS"
    one sample-adapter examples/conversations bench/data/sample-truth.json "$ADAPTERS"
    for c in bench/data/casual-heldout/*/; do
        one "casual-$(basename "$c")-adapter" "$c" "$c/truth.json" "$ADAPTERS"
    done
fi
