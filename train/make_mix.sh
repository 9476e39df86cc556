#!/usr/bin/env bash
# make_mix.sh — a training mix of dream-mini from scratch, every step in one command
# (train/README.md, step 2f; run 8 was made with it).
#
#   bash train/make_mix.sh OUT_DIR
#
# 1. The corpora of runs 5-7 (gen_corpus.py): plain train seeds 1-N_PLAIN but 78, plain held-out
#    1001-1008, casual train 2001-2320, casual held-out 3001-3004; each dreamed through the real
#    pipeline against the oracle (record.sh, restated prose, pinned footnotes), then asked its
#    questions (record_ask.sh). JOBS at a time (default 4). A corpus already recorded is kept.
# 2. augment.py: --seed 1 over every record set (positions; a copy with pseudo-word names), and
#    extra entity copies with fresh names (--stages entity --rewritten-only, seeds
#    ENT_SEEDS_CASUAL over the casual sets, ENT_SEEDS_PLAIN over the plain ones).
# 3. The plain train records sampled (random.Random(7), a line kept when random() < PLAIN_FRAC),
#    then everything tokenized by dream-dataset --names-from-text with the answer stage:
#    OUT_DIR/train.bin(.xz), val.bin(.xz), ent.bin(.xz) (the entity copies alone, for the adapter).
#
# Environment: JOBS, N_PLAIN (default 220: runs 5-7's), PLAIN_FROM (default 1: the plain train
# seeds are PLAIN_FROM-N_PLAIN), CASUAL (the casual train seeds as seq arguments, as
# make_stage_data.sh takes them; default "2001 2320"; a continuation's fresh mix takes seeds no
# earlier mix, adapter set or held-out set used), PLAIN_FRAC (default 0.55: run 7's),
# ENT_SEEDS_CASUAL (default "2 3 4 5"), ENT_SEEDS_PLAIN (default "2"), CASUAL_ARGS (more gen_corpus.py options for the casual corpora, as
# "--named-intros wide"; default none), BIN (default build/bin). Deterministic: the same environment
# gives byte-identical .bin files, since record.sh sorts its records (the seam's parallel calls
# reach the oracle in any order). Run 8's data was made before that sort, so its record order,
# and with it augment.py's pseudo-names and the sampling, followed the arrival order: the same
# records, not the same bytes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:?usage: make_mix.sh OUT_DIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
JOBS=${JOBS:-4}
N_PLAIN=${N_PLAIN:-220}
PLAIN_FROM=${PLAIN_FROM:-1}
CASUAL=${CASUAL:-2001 2320}
PLAIN_FRAC=${PLAIN_FRAC:-0.55}
ENT_SEEDS_CASUAL=${ENT_SEEDS_CASUAL:-2 3 4 5}
ENT_SEEDS_PLAIN=${ENT_SEEDS_PLAIN:-2}
BIN=${BIN:-$ROOT/build/bin}
CASUAL_ARGS=${CASUAL_ARGS:-} # more gen_corpus.py options for the casual corpora (e.g. --named-intros wide)
STAGES=chunk,entity,route,section,synthesis,editor,answer

one() { # catalogue seed style
    local cat=$1 seed=$2 style=$3 dir
    local extra=()
    dir=$OUT/$cat-$seed
    if [ "$style" = casual ]; then dir=$OUT/c$cat-$seed; read -r -a extra <<<"$CASUAL_ARGS"; fi
    if [ -s "$dir/rec/ask-records.jsonl" ]; then return 0; fi
    python3 "$ROOT/train/gen_corpus.py" --seed "$seed" --catalogue "$cat" --style "$style" "${extra[@]}" --out "$dir/corpus" >/dev/null
    if ! DREAM=$BIN/dream bash "$ROOT/train/record.sh" "$dir/corpus" "$dir/rec" >"$dir/record.log" 2>&1; then
        echo "make_mix: $cat seed $seed ($style) failed (see $dir/record.log)" >&2
        return 1
    fi
    if ! DREAM=$BIN/dream bash "$ROOT/train/record_ask.sh" "$dir/corpus" "$dir/rec" >"$dir/ask.log" 2>&1; then
        echo "make_mix: $cat seed $seed ($style) ask failed (see $dir/ask.log)" >&2
        return 1
    fi
    echo "make_mix: $cat seed $seed ($style): $(cat "$dir/rec/records.jsonl" "$dir/rec/ask-records.jsonl" | wc -l) records"
}
export -f one
export OUT ROOT BIN CASUAL_ARGS
# shellcheck disable=SC2086
{ seq "$PLAIN_FROM" "$N_PLAIN" | grep -vx 78 | sed 's/^/train /; s/$/ plain/'
  seq 1001 1008 | sed 's/^/heldout /; s/$/ plain/'
  seq $CASUAL | sed 's/^/train /; s/$/ casual/'
  seq 3001 3004 | sed 's/^/heldout /; s/$/ casual/'; } |
    xargs -P "$JOBS" -L 1 bash -c 'one "$0" "$1" "$2"'

# --- 2. augment ------------------------------------------------------------------------------
A=$OUT/aug
mkdir -p "$A"
set_of() { # name glob [min-seed max-seed]: the truths and the record files of one set, in seed order
    find -L "$OUT" -maxdepth 1 -type d -name "$2" | sort -V |
        awk -v lo="${3:-0}" -v n="${4:-0}" '{ k = split($0, a, "-"); if (n == 0 || (a[k] + 0 >= lo && a[k] + 0 <= n)) print }' > "$A/$1.dirs"
    sed 's|$|/corpus/truth.json|' "$A/$1.dirs" > "$A/$1.truths"
    sed 's|$|/rec/records.jsonl|' "$A/$1.dirs" > "$A/$1.recs"
    sed 's|$|/rec/ask-records.jsonl|' "$A/$1.dirs" >> "$A/$1.recs"
}
set_of plain 'train-*' "$PLAIN_FROM" "$N_PLAIN" # only the seeds asked for, should OUT hold more
# shellcheck disable=SC2086
set_of casual 'ctrain-*' $CASUAL
set_of plainval 'heldout-*'
set_of casualval 'cheldout-*'
# shellcheck source=train/aug.sh
. "$ROOT/train/aug.sh"
aug plain 1 "$A/plain-1.jsonl"
aug casual 1 "$A/casual-1.jsonl"
# the entity copies of the seeds asked for (never whatever an earlier run with more seeds left in $A)
ENT_FILES=
for s in $ENT_SEEDS_CASUAL; do aug casual "$s" "$A/casual-ent-$s.jsonl" --stages entity --rewritten-only; ENT_FILES+=" $A/casual-ent-$s.jsonl"; done
for s in $ENT_SEEDS_PLAIN; do aug plain "$s" "$A/plain-ent-$s.jsonl" --stages entity --rewritten-only; ENT_FILES+=" $A/plain-ent-$s.jsonl"; done
# held out: positions, real names (the odd lines of --seed 1: each record's unrewritten copy)
for set in plainval casualval; do aug "$set" 1 /dev/stdout | awk 'NR % 2 == 1' > "$A/$set.jsonl"; done

# --- 3. the mix --------------------------------------------------------------------------------
python3 - "$A/plain-1.jsonl" "$PLAIN_FRAC" > "$A/plain-1-sampled.jsonl" <<'PY'
import random, sys
rng = random.Random(7)
frac = float(sys.argv[2])
for line in open(sys.argv[1], encoding="utf-8"):
    if rng.random() < frac:
        sys.stdout.write(line)
PY
VOCAB=$OUT/vocab-model.gguf
"$BIN/dream-make-model" --arch llama --vocab phi3 --preset tiny --seed 1 -o "$VOCAB" >/dev/null
# shellcheck disable=SC2086
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages "$STAGES" \
    "$A/plain-1-sampled.jsonl" "$A/casual-1.jsonl" $ENT_FILES -o "$OUT/train.bin"
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages "$STAGES" \
    "$A/plainval.jsonl" "$A/casualval.jsonl" -o "$OUT/val.bin"
# shellcheck disable=SC2086
"$BIN/dream-dataset" --model "$VOCAB" --names-from-text --stages entity $ENT_FILES -o "$OUT/ent.bin"
for f in train val ent; do xz -9 -T2 -kf "$OUT/$f.bin"; done
ls -l "$OUT"/*.bin.xz
