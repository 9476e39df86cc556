#!/usr/bin/env bash
# gpu_long.sh — one base-model schedule over two GPU commands (train/README.md, step 4, long form).
#
#   bash train/gpu_long.sh start    DATA_DIR OUT_DIR CKPT_DIR MINUTES EXTRA_SECONDS
#   bash train/gpu_long.sh continue DATA_DIR OUT_DIR CKPT_DIR MINUTES
#   bash train/gpu_long.sh from-gguf DATA_DIR OUT_DIR CONFIG_JSON MINUTES GGUF [TRAIN.PY OPTIONS]
#
# A command may run 10 minutes; a schedule of ~19 minutes of training runs as two. `start` trains
# from the seed with the cosine fitted to its own budget plus EXTRA_SECONDS, and keeps the f16
# weights and the optimizer state in CKPT_DIR (on the GPU machine: it stays there while the
# machine is held; the weights also come back in OUT_DIR). `continue` picks up at the step the
# first command stopped, with the same schedule, from CKPT_DIR. Without a checkpoint it stops at
# once (exit 3) rather than spend the command on a fresh schedule.
set -euo pipefail
mode=${1:?usage: gpu_long.sh start|continue DATA_DIR OUT_DIR CKPT_DIR MINUTES [EXTRA_SECONDS]}
DATA=${2:?usage}; OUT=${3:?usage}; CK=${4:?usage}; MIN=${5:?usage}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"; [ "$mode" = from-gguf ] || mkdir -p "$CK"
common=(--data "$DATA/train.bin.xz" --val "$DATA/val.bin.xz" --batch-tokens 131072 --lr 2e-3 --warmup 50
        --log-every 100 --eval-every 1500)
[ "$mode" = from-gguf ] || common+=(--state "$CK/opt.pt")
case $mode in
start)
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    python3 train/train.py "${common[@]}" --out "$CK/dream-mini" --minutes "$MIN" --seed 1 --fit-extra-s "${6:?EXTRA_SECONDS}"
    ;;
continue)
    if [ ! -f "$CK/dream-mini.json" ] || [ ! -f "$CK/opt.pt" ]; then
        echo "gpu_long: no checkpoint in $CK (the machine was given back): nothing continued" >&2
        exit 3
    fi
    read -r at total < <(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["train"]; print(t["steps"], t["schedule_steps"])' "$CK/dream-mini.json")
    echo "gpu_long: continuing at step $at of $total"
    cp "$CK/dream-mini.json" "$CK/first.json"
    python3 train/train.py "${common[@]}" --init "$CK/dream-mini" --out "$CK/dream-mini" --minutes "$MIN" --seed 2 \
        --start-step "$at" --steps "$total"
    ;;
from-gguf)
    # A later session: the f16 weights (59 MB) and the data do not fit the 64 MiB carried, a
    # Q8_0 GGUF in the tree does. The optimizer restarts (warmup, peak 1e-3); a short smoke run
    # on the held-out data first, so a broken option costs seconds, not the command.
    CFG=$4; GG=${6:?GGUF}; shift 6; mkdir -p /tmp/gpu_long_smoke
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    python3 train/train.py --data "$DATA/val.bin.xz" --out /tmp/gpu_long_smoke/x --minutes 0.6 --reserve-s 5 --no-check \
        --init-gguf "$GG" --init-config "$CFG" --log-every 5 --steps 10 "$@" | tail -4
    python3 train/train.py "${common[@]}" --init-gguf "$GG" --init-config "$CFG" --out "$OUT/dream-mini" \
        --minutes "$MIN" --seed 3 --lr 1e-3 "$@"
    ls -la "$OUT"
    exit 0
    ;;
*) echo "gpu_long: unknown mode $mode" >&2; exit 2 ;;
esac
cp "$CK"/dream-mini.json "$CK"/dream-mini.bin.* "$OUT"/
[ -f "$CK/first.json" ] && cp "$CK/first.json" "$OUT/dream-mini-first.json"
ls -la "$OUT"
