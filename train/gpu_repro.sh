#!/usr/bin/env bash
# gpu_repro.sh — do two training runs with the same arguments write the same weights? On the GPU
# machine, from the repo root (train/README.md, "Bit for bit"):
#
#   bash train/gpu_repro.sh DATA.bin.xz LORA_DATA.bin.xz OUT [STEPS]
#
# Trains the mini shape from scratch on DATA for STEPS steps (default 40) four times: twice with
# --deterministic, twice without; then a LoRA adapter (entity) of models/dream-mini.gguf on
# LORA_DATA, twice each way. Prints the sha256 of each run's weight files and whether the pairs
# agree, and each run's training speed.
set -euo pipefail
DATA=${1:?usage: gpu_repro.sh DATA.bin.xz LORA_DATA.bin.xz OUT [STEPS]}
LDATA=${2:?usage}
OUT=${3:?usage}
STEPS=${4:-40}
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
mkdir -p "$OUT"
run() { # NAME FLAGS...
  local name=$1; shift
  python3 train/train.py --out "$OUT/$name/w" --steps "$STEPS" --minutes 4 --seed 1 --no-check --log-every 10 "$@" >"$OUT/$name.log" 2>&1 ||
    { tail -20 "$OUT/$name.log"; exit 1; }
  local sum
  sum=$(cat "$OUT/$name"/w.bin* | sha256sum | cut -c1-16)
  printf '%-10s %s  %s\n' "$name" "$sum" "$(grep -E '^step ' "$OUT/$name.log" | tail -1 | grep -oE '[0-9,]+ tok/s')"
  echo "$sum" >"$OUT/$name.sum"
}
same() { if cmp -s "$OUT/$1.sum" "$OUT/$2.sum"; then echo "$1 = $2: the same bytes"; else echo "$1 != $2: different bytes"; fi; }
base=(--data "$DATA")
lora=(--data "$LDATA" --init-gguf models/dream-mini.gguf --init-config models/dream-mini.json --lora entity --rank 16)
run base-det-1 "${base[@]}" --deterministic
run base-det-2 "${base[@]}" --deterministic
run base-1 "${base[@]}"
run base-2 "${base[@]}"
run lora-det-1 "${lora[@]}" --deterministic
run lora-det-2 "${lora[@]}" --deterministic
run lora-1 "${lora[@]}"
run lora-2 "${lora[@]}"
same base-det-1 base-det-2
same base-1 base-2
same lora-det-1 lora-det-2
same lora-1 lora-2
