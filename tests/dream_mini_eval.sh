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
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset DREAM_BACKEND DREAM_ADAPTERS DREAM_WIKI

one() { # corpus input-dir truth adapters-dir eval.py-thresholds...
    local name=$1 input=$2 truth=$3 adapters=$4
    shift 4
    export DREAM_HOME=$WORK/$name
    mkdir -p "$DREAM_HOME"
    "$DREAM" init --quiet
    "$DREAM" ingest "$input" >/dev/null
    DREAM_MODEL=$MODEL DREAM_ADAPTERS=$adapters "$DREAM" run
    python3 "$SRC/bench/eval.py" --dream "$DREAM" --truth "$truth" --home "$DREAM_HOME" --corpus "$name" "$@"
}

one mini-heldout "$SRC/tests/data/mini-heldout" "$SRC/tests/data/mini-heldout/truth.json" "$SRC/models/adapters" \
    $(cat "$SRC/tests/data/mini-heldout/THRESHOLDS")
# The bundled sample conversations as `make demo` dreams them (scripts/demo.sh: dream-mini with
# the committed adapters): the recurring subjects it finds must get articles, and the wiki must
# check clean. dream-mini writes three articles here: Gus (the sourdough starter), River path
# (the bike commute's route, named in both commute conversations) and Rust (the language the
# person is learning, which resolve's spreading of known names makes recur). The truth names the
# sourdough and the bike commute but not the language, so route precision is 2/3
# (docs/BENCHMARKS.md, "Tokens dream-mini never learned").
one samples "$SRC/examples/conversations" "$SRC/bench/data/sample-truth.json" "$SRC/models/adapters" \
    --min articles=3 --min route_precision=0.6 --min segment_valid=100 --max leaks=0 --max check_problems=0
