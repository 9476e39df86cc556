#!/usr/bin/env bash
# make_data.sh — dream-mini's training and held-out records (train/README.md, steps 1–3).
#
#   bash train/make_data.sh OUT_DIR [N_TRAIN] [N_HELDOUT]
#
# Generates N_TRAIN corpora of the train catalogue (seeds 1..N_TRAIN, default 96) and
# N_HELDOUT of the heldout catalogue (seeds 1001.., default 8), dreams each through the real
# pipeline against the ground-truth oracle (train/record.sh; JOBS at a time, default 4), then
# tokenizes the records exactly as the seam renders them (dream-dataset) into OUT_DIR/train.bin
# and OUT_DIR/val.bin. Deterministic: the same arguments give the same records and tokens.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: make_data.sh OUT_DIR [N_TRAIN] [N_HELDOUT]}
N_TRAIN=${2:-96}
N_HELDOUT=${3:-8}
JOBS=${JOBS:-4}
BIN=${BIN:-$ROOT/build/bin}
VOCAB=${VOCAB:-$OUT/vocab-model.gguf}
mkdir -p "$OUT"

one() { # catalogue seed
    local dir=$OUT/$1-$2
    python3 "${GEN:-$ROOT/train/gen_corpus.py}" --seed "$2" --catalogue "$1" --out "$dir/corpus" >/dev/null
    if ! bash "$ROOT/train/record.sh" "$dir/corpus" "$dir/rec" >"$dir/record.log" 2>&1; then
        echo "make_data: $1 seed $2 failed (see $dir/record.log)" >&2
        return 1
    fi
    echo "make_data: $1 seed $2: $(wc -l <"$dir/rec/records.jsonl") records"
}
export -f one
export OUT ROOT
{ seq 1 "$N_TRAIN" | sed 's/^/train /'; seq 1001 $((1000 + N_HELDOUT)) | sed 's/^/heldout /'; } |
    xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1"'

# a random-weight model with dream-mini's vocabulary and chat template: the tokenizer of the
# records (its weights are never used)
"$BIN/dream-make-model" --arch llama --vocab phi3 --preset tiny --seed 1 -o "$VOCAB" >/dev/null
ls "$OUT"/train-*/rec/records.jsonl | sort -V > "$OUT/train.list"
ls "$OUT"/heldout-*/rec/records.jsonl | sort -V > "$OUT/val.list"
"$BIN/dream-dataset" --model "$VOCAB" $(cat "$OUT/train.list") -o "$OUT/train.bin"
"$BIN/dream-dataset" --model "$VOCAB" $(cat "$OUT/val.list") -o "$OUT/val.bin"
