#!/usr/bin/env bash
# gpu_run.sh — dream-mini's training on the GPU machine, in one command (train/README.md, step 4).
#
#   bash train/gpu_run.sh DATA_DIR OUT_DIR [BASE_MINUTES] [LORA_MINUTES]
#
# DATA_DIR holds train.bin.xz/.json and val.bin.xz/.json (train/make_data.sh, then xz). Trains
# the base model (BASE_MINUTES, default 6.3), then picks the stage with the highest held-out
# answer loss and trains one LoRA adapter for it on that stage's records (LORA_MINUTES, default
# 2.2). Both budgets are wall-clock for the whole step, so the command ends inside 10 minutes.
set -euo pipefail
DATA=${1:?usage: gpu_run.sh DATA_DIR OUT_DIR [BASE_MINUTES] [LORA_MINUTES]}
OUT=${2:?usage}
BASE_MIN=${3:-6.3}
LORA_MIN=${4:-2.2}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
python3 train/train.py --data "$DATA/train.bin.xz" --val "$DATA/val.bin.xz" --out "$OUT/dream-mini" \
    --minutes "$BASE_MIN" --seed 1 --batch-tokens 131072 --lr 2e-3 --warmup 50 --log-every 100 --eval-every 1000
stage=$(python3 - "$OUT/dream-mini.json" <<'PY'
import json, sys
per = json.load(open(sys.argv[1]))["train"]["val_per_stage"]
print(max(per, key=per.get))
PY
)
echo "gpu_run: the worst stage on held-out data (answer loss): $stage"
python3 train/train.py --data "$DATA/train.bin.xz" --val "$DATA/val.bin.xz" --init "$OUT/dream-mini" \
    --lora "$stage" --rank 16 --out "$OUT/lora-$stage" --minutes "$LORA_MIN" --seed 1 --log-every 100
