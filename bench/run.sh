#!/usr/bin/env bash
# run.sh — `make bench`: every benchmark of dream side by side with llama.cpp's own tools on the
# same model file, in one run. Results go to build/bench/results.txt (docs/BENCHMARKS.md quotes
# them with this command). BENCH_THREADS (default: all cores), BENCH_SCALE (prompt/output length
# factor of the dreaming mix, default 1.0), BENCH_N (calls per workload, default 16),
# BENCH_WIDTHS (default 2,4,8,16), BENCH_PIPELINE_CONVS (conversations of the end-to-end replay
# run, default 4).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(tail -n1 build/deps.env)"
BIN=build/bin
OUT=build/bench
mkdir -p "$OUT" build/models
THREADS=${BENCH_THREADS:-$(nproc)}
SCALE=${BENCH_SCALE:-1.0}
N=${BENCH_N:-16}
WIDTHS=${BENCH_WIDTHS:-2,4,8,16}
# A 177M-parameter Gemma 4 shape (12 layers, n_embd 512, the real 262,144-token vocabulary), Q8_0.
MODEL=${BENCH_MODEL:-build/models/bench-gemma4-177m-q8_0.gguf}
if [ ! -f "$MODEL" ]; then
  "$BIN/dream-make-model" --arch gemma4 --preset 300m --layers 12 --embd 512 --heads 4 --kv-heads 1 --head-dim 128 \
    --head-dim-swa 64 --ff 2048 --shared-kv 4 --type q8_0 --seed 7 -o "$MODEL"
fi
TINY=build/models/tiny-gemma4.gguf
[ -f "$TINY" ] || "$BIN/dream-make-model" --arch gemma4 --preset tiny --type q8_0 --seed 1 -o "$TINY"

log=$OUT/results.txt
{
  echo "# dream benchmarks — $(date -u +%F) — $(nproc) cores — threads=$THREADS"
  echo
  echo "## chat-template render (Gemma 4 prompt, ~4,000-token chunk) vs one 32-token greedy call (tiny Gemma 4)"
  "$BIN/bench_template"
  "$BIN/dream" generate --model "$TINY" --chat "Summarize my week." --max-tokens 32 --threads "$THREADS" --stats 2>&1 >/dev/null | tail -1
  echo
  echo "## seam: serial vs batched ($MODEL, scale=$SCALE)"
  for w in dreaming dreaming-policy uniform shared-prefix; do
    "$BIN/bench_seam" --model "$MODEL" --workload "$w" --n "$N" --widths "$WIDTHS" --threads "$THREADS" --scale "$SCALE"
    echo
  done
  echo "## stages: extract through the seam, DREAM_MEMORY_BATCH=1 vs 4 (tiny Gemma 4)"
  "$BIN/bench_stages" --model "$TINY" --n 32 --width 4 --batch 8 --max-tokens 32 --threads "$THREADS"
  echo
  echo "## flash attention on, exact on the CPU (one thread for single tokens, prefixes in whole 64-row tiles; docs/EXACTNESS.md)"
  "$BIN/bench_seam" --model "$MODEL" --workload dreaming --n "$N" --widths "$WIDTHS" --threads "$THREADS" --scale "$SCALE" --flash-attn
  echo
  echo "## dream-mini's dreaming mix, flash attention off and on (the seam's choice for it)"
  "$BIN/bench_seam" --model models/dream-mini.gguf --workload dreaming --n 16 --widths 2,4,8 --threads "$THREADS"
  "$BIN/bench_seam" --model models/dream-mini.gguf --workload dreaming --n 16 --widths 2,4,8 --threads "$THREADS" --flash-attn
  echo
  echo "## the whole pipeline, ingest to wikify, replay mode ($MODEL, ${BENCH_PIPELINE_CONVS:-4} generated conversations; bench/pipeline.sh)"
  MODEL="$MODEL" CONVS="${BENCH_PIPELINE_CONVS:-4}" THREADS="$THREADS" bash bench/pipeline.sh | grep -E '^PIPELINE-'
  echo
  echo "## the whole pipeline on dream-mini's own answers (models/dream-mini.gguf, 12 generated conversations, 3 nights)"
  MODEL=models/dream-mini.gguf REPLAY=0 CONVS=12 NIGHTS=3 THREADS="$THREADS" OUT=build/bench/pipeline-mini bash bench/pipeline.sh | grep -E '^PIPELINE-'
  echo
  echo "## ingest (generated ChatGPT exports)"
  bash bench/ingest.sh
  echo
  echo "## serving: dream serve vs llama-server -np 16 (200 requests, 16 concurrent, tiny Gemma 4)"
  bash bench/serve.sh
  echo
  echo "## quality: dream-mini over the held-out corpus and the sample conversations (bench/quality.sh)"
  bash bench/quality.sh
  echo
  echo "## llama.cpp's own tools on the same model file"
  "$LLAMA_BUILD/bin/llama-bench" -m "$MODEL" -p 512 -n 128 -t "$THREADS" -fa 0 -r 2 2>/dev/null
  "$LLAMA_BUILD/bin/llama-batched-bench" -m "$MODEL" -c 20480 -b 2048 -ub 512 -npp 256 -ntg 64 -npl 1,8 -t "$THREADS" -tb "$THREADS" -fa off 2>/dev/null | grep -E '^\|'
  "$LLAMA_BUILD/bin/llama-batched-bench" -m "$MODEL" -c 20480 -b 2048 -ub 512 -npp 1024 -ntg 32 -npl 8 -pps -t "$THREADS" -tb "$THREADS" -fa off 2>/dev/null | grep -E '^\|'
} 2>&1 | tee "$log"
echo "bench: results in $log"
