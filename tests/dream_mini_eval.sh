#!/usr/bin/env bash
# dream_mini_eval.sh — the quality benchmark's short version (bench/eval.py) in `make test`:
# dreams tests/data/mini-heldout (a held-out corpus of train/gen_corpus.py: seed 2002, the
# heldout catalogue, whose subjects dream-mini never saw) with the committed dream-mini and its
# committed adapter(s) (models/adapters, mounted by the seam through DREAM_ADAPTERS) on the CPU,
# then the bundled sample conversations as `make demo` dreams them (the base model alone), and
# holds the DREAM-EVAL measures to fixed thresholds. Greedy decoding on the CPU is
# exact, so the figures are the same on every run of this machine kind; the thresholds sit a
# margin under them (docs/BENCHMARKS.md records the figures).
#
#   dream_mini_eval.sh DREAM_BIN SOURCE_DIR
set -euo pipefail
DREAM=$1
SRC=$2
MODEL=$SRC/models/dream-mini.gguf
[ -f "$MODEL" ] || { echo "dream_mini_eval: $MODEL is missing (it is committed: git checkout -- models/)" >&2; exit 1; }
HOME_DIR=$(mktemp -d)
trap 'rm -rf "$HOME_DIR"' EXIT
export DREAM_HOME=$HOME_DIR
unset DREAM_BACKEND DREAM_ADAPTERS DREAM_WIKI
"$DREAM" init --quiet
"$DREAM" ingest "$SRC/tests/data/mini-heldout" >/dev/null
DREAM_MODEL=$MODEL DREAM_ADAPTERS=$SRC/models/adapters "$DREAM" run
python3 "$SRC/bench/eval.py" --dream "$DREAM" --truth "$SRC/tests/data/mini-heldout/truth.json" --home "$HOME_DIR" \
    --corpus mini-heldout $(cat "$SRC/tests/data/mini-heldout/THRESHOLDS")

# The bundled sample conversations as `make demo` dreams them (scripts/demo.sh: the base model,
# no adapter): the recurring subjects it finds must get articles, and the wiki must check clean.
SAMPLE_HOME=$HOME_DIR/sample
mkdir -p "$SAMPLE_HOME/no-adapters"
export DREAM_HOME=$SAMPLE_HOME
"$DREAM" init --quiet
"$DREAM" ingest "$SRC/examples/conversations" >/dev/null
DREAM_MODEL=$MODEL DREAM_ADAPTERS=$SAMPLE_HOME/no-adapters "$DREAM" run
python3 "$SRC/bench/eval.py" --dream "$DREAM" --truth "$SRC/bench/data/sample-truth.json" --home "$SAMPLE_HOME" \
    --corpus samples --min articles=2 --min route_precision=1 --min segment_valid=100 --max leaks=0 --max check_problems=0
