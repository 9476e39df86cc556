#!/usr/bin/env bash
# dream_mini_eval.sh — the quality benchmark's short version (bench/eval.py) in `make test`:
# dreams tests/data/mini-heldout (a held-out corpus of train/gen_corpus.py: seed 2002, the
# heldout catalogue, whose subjects dream-mini never saw) with the committed dream-mini and its
# committed adapter(s) (models/adapters, mounted by the seam as `make demo` mounts them) on the
# CPU, then holds every DREAM-EVAL measure to a fixed threshold. Greedy decoding on the CPU is
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
