#!/usr/bin/env bash
# make_stage_data.sh — fresh corpora for one stage's LoRA adapter (train/README.md, step 2i):
# corpora of seeds the base model never saw, recorded through the real pipeline against the
# oracle (train/record.sh), augmented (positions; a pseudo-word copy of each record, and one more
# pseudo-word copy of each entity record), tokenized per stage.
#
#   bash train/make_stage_data.sh OUT_DIR
#
# Seeds (environment, as seq arguments): PLAIN="221 300" (plain train catalogue), CASUAL="2321 2400"
# (casual train), VAL_PLAIN="1009 1012" and VAL_CASUAL="3005 3008" (the heldout catalogue; not the
# corpora bench/eval.py scores). JOBS (default 2) corpora at a time. CASUAL_ARGS: more gen_corpus.py
# options for the casual corpora, as make_mix.sh takes them (default none). Writes OUT_DIR/chunk.bin,
# ent.bin and val.bin (+ .json piece tables and .bin.xz): on two shared cores about 13 minutes of
# records and 2 of augment and tokens (2026-12-05: 7,360 chunk records, 16.3M tokens, 2.6 MB as
# xz; 13,368 entity records, 17.2M tokens, 2.3 MB; val 1,601 records of every stage).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: make_stage_data.sh OUT_DIR}
BIN=${BIN:-$ROOT/build/bin}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
one() { # catalogue seed style
    local dir=$OUT/$1-$2
    local extra=()
    if [ "$3" = casual ]; then dir=$OUT/c$1-$2; read -r -a extra <<<"$CASUAL_ARGS"; fi
    python3 "$ROOT/train/gen_corpus.py" --seed "$2" --catalogue "$1" --style "$3" "${extra[@]}" --out "$dir/corpus" >/dev/null &&
        bash "$ROOT/train/record.sh" "$dir/corpus" "$dir/rec" >"$dir/record.log" 2>&1 ||
        { echo "make_stage_data: $1 seed $2 ($3) failed (see $dir/record.log)" >&2; return 1; }
}
export -f one
CASUAL_ARGS=${CASUAL_ARGS:-}
export OUT ROOT CASUAL_ARGS
# shellcheck disable=SC2086
{ seq ${PLAIN:-221 300} | sed 's/^/train /; s/$/ plain/'
  seq ${CASUAL:-2321 2400} | sed 's/^/train /; s/$/ casual/'
  seq ${VAL_PLAIN:-1009 1012} | sed 's/^/heldout /; s/$/ plain/'
  seq ${VAL_CASUAL:-3005 3008} | sed 's/^/heldout /; s/$/ casual/'; } |
    xargs -P "${JOBS:-2}" -L 1 bash -c 'one "$0" "$1" "$2"'

A=$OUT/aug
mkdir -p "$A"
set_of() { # name glob
    find "$OUT" -maxdepth 1 -type d -name "$2" | sort -V > "$A/$1.dirs"
    sed 's|$|/corpus/truth.json|' "$A/$1.dirs" > "$A/$1.truths"
    sed 's|$|/rec/records.jsonl|' "$A/$1.dirs" > "$A/$1.recs"
}
set_of tr '*train-*'
set_of va '*heldout-*'
# shellcheck source=train/aug.sh
. "$ROOT/train/aug.sh"
aug tr 1 "$A/tr-1.jsonl"
aug tr 2 "$A/tr-ent-2.jsonl" --stages entity --rewritten-only
aug va 1 /dev/stdout | awk 'NR % 2 == 1' > "$A/va.jsonl"
VOCAB=$OUT/vocab-model.gguf
"$BIN/dream-make-model" --arch llama --vocab phi3 --preset tiny --seed 1 -o "$VOCAB" >/dev/null
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages chunk "$A/tr-1.jsonl" -o "$OUT/chunk.bin"
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages entity "$A/tr-1.jsonl" "$A/tr-ent-2.jsonl" -o "$OUT/ent.bin"
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages chunk,entity,route,section,synthesis,editor,answer \
    "$A/va.jsonl" -o "$OUT/val.bin"
for f in chunk ent val; do xz -9 -T2 -kf "$OUT/$f.bin"; done
ls -l "$OUT"/*.bin.xz
