#!/usr/bin/env bash
# gpu_scratch.sh — dream-mini from its seed, bit for bit: the base in two or three GPU commands,
# then its adapters in one more (train/README.md, "From the seed").
#
#   bash train/gpu_scratch.sh first    DATA_DIR OUT_DIR CKPT_DIR STEPS STOP_AT MINUTES
#   bash train/gpu_scratch.sh second   DATA_DIR OUT_DIR CKPT_DIR MINUTES [STOP_AT]
#   bash train/gpu_scratch.sh adapters STAGE_DIR OUT_DIR CKPT_DIR MINUTES_EACH CHUNK_STEPS ENTITY_STEPS
#   bash train/gpu_scratch.sh splitcheck DATA_DIR OUT_DIR CKPT_DIR   (the split itself, twice, in a minute)
#   bash train/gpu_scratch.sh pack OUT_DIR      (on the device, last: a base and its adapters in one call)
#   bash train/gpu_scratch.sh unpack DIR        (here, on what came back)
#
# A command may run 10 minutes, and a base from scratch wants about twenty. `first` trains from
# the seed under --deterministic, one cosine of STEPS steps, and stops at step STOP_AT (a step
# count, not a time: so a rerun stops at the same place whatever the GPU's speed); it keeps the
# f16 weights and the optimizer state with the float32 master weights in CKPT_DIR, on the GPU
# machine, which holds them while it is held. Run `second` right after: it picks up where the
# last command stopped and runs to STEPS, or stops again at its own STOP_AT for a third command.
# SEED (default 2) orders its records, and DATA_DIR may be another mix: the cosine goes on over it.
# A continuation: `first` with BASE_GGUF and BASE_CONFIG starts from that Q8_0 base (a finished
# run's GGUF, itself repeatable) with a fresh optimizer and its own cosine, in record order SEED
# (default 1); STOP_AT 0 runs it to STEPS. LR (default 2e-3, the from-seed run's) is the peak of
# the cosine in `first` and `second` alike, so give both the same.
# `adapters` trains the chunk and entity LoRAs on the base's matrices rounded through Q8_0 exactly
# as dream-make-model --type q8_0 rounds them (--init-q8), so each adapter learns on the very base
# the seam mounts it on. With BASE_GGUF (and BASE_CONFIG, its dream-weights .json) it reads that
# Q8_0 GGUF instead of CKPT_DIR: the same matrices, so the adapters may train in a later session
# than the base. Everything is under --deterministic with fixed step counts: the same data and
# arguments on the same kind of GPU write the same bytes. DATA_DIR holds train.bin.xz and
# val.bin.xz (train/make_mix.sh); STAGE_DIR chunk.bin.xz, ent.bin.xz and val.bin.xz
# (train/make_stage_data.sh).
set -euo pipefail
mode=${1:?usage: gpu_scratch.sh first|second|adapters|splitcheck DATA_DIR OUT_DIR CKPT_DIR ...}
case $mode in
pack)
    # OUT_DIR as the device gives files back (at most 8, each at most 16 MiB, 64 MiB in all): each
    # weights part xz-compressed (a base's four parts and two adapters come to 60 MB, against 68 MB
    # raw), the .json and .log files in one meta.tar. `unpack` undoes it here.
    cd "${2:?usage: gpu_scratch.sh pack OUT_DIR}"
    shopt -s nullglob
    # Python's lzma, not the xz program, which the device image need not have; a file per process
    python3 - *.bin.* <<'PY'
import concurrent.futures, lzma, os, sys
def pack(f):
    with open(f, "rb") as i, lzma.open(f + ".xz", "wb", preset=6) as o:
        o.write(i.read())
    os.remove(f)
with concurrent.futures.ProcessPoolExecutor(8) as ex:
    list(ex.map(pack, sys.argv[1:]))
PY
    set -- *.json *.log; tar cf meta.tar "$@" && rm -f -- "$@"
    ls -la; exit 0 ;;
unpack)
    cd "${2:?usage: gpu_scratch.sh unpack DIR}"
    tar xf meta.tar && rm meta.tar
    printf '%s\0' *.bin.*.xz | xargs -0 -n1 -P8 xz -d --
    sha256sum -- *.bin.*; exit 0 ;;
esac
DATA=${2:?usage}; OUT=${3:?usage}; CK=${4:?usage}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p "$OUT" "$CK"
TF=${TRAIN_FILE:-train.bin.xz}
VAL=(); [ -f "$DATA/val.bin.xz" ] && VAL=(--val "$DATA/val.bin.xz")  # optional: the held-out loss
GGUF=() # the base as a finished run's Q8_0 GGUF, when one is given
[ -n "${BASE_GGUF:-}" ] &&
    GGUF=(--init-gguf "$BASE_GGUF" --init-config "${BASE_CONFIG:?BASE_CONFIG: the dream-weights .json of BASE_GGUF}")
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
base=(--batch-tokens 131072 --lr "${LR:-2e-3}" --warmup 50 --prompt-loss 0.3 --prompt-frac 0.1 --log-every 200
      --deterministic --state "$CK/state.pt" --out "$CK/dream-mini" --no-check)
case $mode in
first)
    STEPS=${5:?STEPS}; STOP=${6:?STOP_AT}; MIN=${7:?MINUTES}
    rm -f "$CK/state.pt"
    python3 train/train.py --data "$DATA/$TF" "${VAL[@]}" "${base[@]}" "${GGUF[@]}" \
        --seed "${SEED:-1}" --steps "$STEPS" --stop-at "$STOP" --minutes "$MIN"
    cp "$CK/dream-mini.json" "$OUT/dream-mini-first.json"
    if [ "$STOP" = 0 ]; then # ran to the end: the weights come back too
        cp "$CK"/dream-mini.json "$CK"/dream-mini.bin.* "$OUT"/
        sha256sum "$OUT"/dream-mini.bin.*
    fi
    ;;
splitcheck)
    # 24 steps on the held-out records as first (stop at 12) + second, twice: the two runs must
    # write the same bytes, or the two-command form is not reproducible and `first` is not worth
    # its nine minutes.
    for k in 1 2; do
        c=$CK/split$k
        TRAIN_FILE=val.bin.xz bash "$0" first "$DATA" "$c/out" "$c" 24 12 1.5 >"$OUT/split$k.log" 2>&1
        TRAIN_FILE=val.bin.xz bash "$0" second "$DATA" "$c/out" "$c" 1.5 >>"$OUT/split$k.log" 2>&1
        sha256sum "$c"/out/dream-mini.bin.* | awk '{print $1}' | sha256sum | sed "s/ .*/  split run $k/"
    done | tee "$OUT/split.sha"
    [ "$(awk '{print $1}' "$OUT/split.sha" | sort -u | wc -l)" = 1 ] && echo "gpu_scratch: the split is bit for bit" \
        || { echo "gpu_scratch: the two split runs differ" >&2; exit 1; }
    exit 0
    ;;
second)
    MIN=${5:?MINUTES}; STOP=${6:-0}
    if [ ! -f "$CK/dream-mini.json" ] || [ ! -f "$CK/state.pt" ]; then
        echo "gpu_scratch: no checkpoint in $CK (the machine was given back): run first again" >&2
        exit 3
    fi
    read -r at total < <(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["train"]; print(t["steps"], t["schedule_steps"])' "$CK/dream-mini.json")
    echo "gpu_scratch: continuing at step $at of $total"
    cp "$CK/dream-mini.json" "$OUT/dream-mini-first.json"
    python3 train/train.py --data "$DATA/$TF" "${VAL[@]}" "${base[@]}" \
        --init "$CK/dream-mini" --seed "${SEED:-2}" --start-step "$at" --steps "$total" --stop-at "$STOP" --minutes "$MIN"
    cp "$CK"/dream-mini.json "$CK"/dream-mini.bin.* "$OUT"/
    sha256sum "$OUT"/dream-mini.bin.*
    ;;
adapters)
    MIN=${5:?MINUTES}; NC=${6:?CHUNK_STEPS}; NE=${7:?ENTITY_STEPS}
    INIT=("${GGUF[@]}")
    if [ ${#INIT[@]} = 0 ]; then
        [ -f "$CK/dream-mini.json" ] || { echo "gpu_scratch: no base in $CK" >&2; exit 3; }
        INIT=(--init "$CK/dream-mini" --init-q8)
    fi
    for pair in "chunk chunk $NC" "entity ent $NE"; do
        set -- $pair
        python3 train/train.py --data "$DATA/$2.bin.xz" "${VAL[@]}" "${INIT[@]}" \
            --lora "$1" --rank 16 --out "$OUT/lora-$1" --seed 1 --eval-every 0 --log-every 100 \
            --deterministic --steps "$3" --minutes "$MIN" --no-check
    done
    sha256sum "$OUT"/lora-*.bin.*
    ;;
*) echo "gpu_scratch: unknown mode $mode" >&2; exit 2 ;;
esac
ls -la "$OUT"
