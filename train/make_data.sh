#!/usr/bin/env bash
# make_data.sh — dream-mini's training and held-out records (train/README.md, steps 1–3).
#
#   bash train/make_data.sh OUT_DIR [N_TRAIN] [N_HELDOUT] [N_CASUAL] [N_CASUAL_HELDOUT]
#
# Generates N_TRAIN corpora of the train catalogue (seeds 1..N_TRAIN, default 96) and
# N_HELDOUT of the heldout catalogue (seeds 1001.., default 8), dreams each through the real
# pipeline against the ground-truth oracle (train/record.sh; JOBS at a time, default 4), then
# tokenizes the records exactly as the seam renders them (dream-dataset) into OUT_DIR/train.bin
# and OUT_DIR/val.bin. N_CASUAL / N_CASUAL_HELDOUT (default 0; run 6 used 320 and 4) add corpora of
# gen_corpus.py's casual style (seeds 2001.. of the train catalogue, 3001.. of the heldout one;
# directories ctrain-S and cheldout-S), tokenized with the others.
# Deterministic: the same arguments give the same records and tokens.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: make_data.sh OUT_DIR [N_TRAIN] [N_HELDOUT]}
N_TRAIN=${2:-96}
N_HELDOUT=${3:-8}
N_CASUAL=${4:-0}
N_CASUAL_HELDOUT=${5:-0}
JOBS=${JOBS:-4}
BIN=${BIN:-$ROOT/build/bin}
VOCAB=${VOCAB:-$OUT/vocab-model.gguf}
mkdir -p "$OUT"

one() { # catalogue seed [style]
    local dir=$OUT/$1-$2 style=${3:-plain}
    [ "$style" = casual ] && dir=$OUT/c$1-$2
    python3 "${GEN:-$ROOT/train/gen_corpus.py}" --seed "$2" --catalogue "$1" --style "$style" --out "$dir/corpus" >/dev/null
    if ! bash "$ROOT/train/record.sh" "$dir/corpus" "$dir/rec" >"$dir/record.log" 2>&1; then
        echo "make_data: $1 seed $2 failed (see $dir/record.log)" >&2
        return 1
    fi
    echo "make_data: $1 seed $2: $(wc -l <"$dir/rec/records.jsonl") records"
}
export -f one
export OUT ROOT
{ seq 1 "$N_TRAIN" | sed 's/^/train /'; seq 1001 $((1000 + N_HELDOUT)) | sed 's/^/heldout /'
  if [ "$N_CASUAL" -gt 0 ]; then seq 2001 $((2000 + N_CASUAL)) | sed 's/^/train /; s/$/ casual/'; fi
  if [ "$N_CASUAL_HELDOUT" -gt 0 ]; then seq 3001 $((3000 + N_CASUAL_HELDOUT)) | sed 's/^/heldout /; s/$/ casual/'; fi; } |
    xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1" "${2:-plain}"'

# a random-weight model with dream-mini's vocabulary and chat template: the tokenizer of the
# records (its weights are never used)
"$BIN/dream-make-model" --arch llama --vocab phi3 --preset tiny --seed 1 -o "$VOCAB" >/dev/null
# (a style with no corpora leaves its glob unmatched: find lists only what exists)
find "$OUT" -path "$OUT/*train-*/rec/records.jsonl" | sort -V > "$OUT/train.list"
find "$OUT" -path "$OUT/*heldout-*/rec/records.jsonl" | sort -V > "$OUT/val.list"
"$BIN/dream-dataset" --model "$VOCAB" $(cat "$OUT/train.list") -o "$OUT/train.bin"
"$BIN/dream-dataset" --model "$VOCAB" $(cat "$OUT/val.list") -o "$OUT/val.bin"
