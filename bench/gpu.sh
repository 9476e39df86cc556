#!/usr/bin/env bash
# gpu.sh build|run|waves|steps|widths|single|pipeline — the GPU benchmarks (docs/BENCHMARKS.md), on a CUDA machine from the repo root.
#   build: llama.cpp with CUDA for sm_90 (from the source bench/gpu_pack.sh packed into .devsrc/,
#          node-llama-cpp's tarball in .devdl/ or the npm registry), dream's engine-only build, and the Gemma-4-E4B-shape model (random weights,
#          Q4_K, 4.56B parameters).
#   run:   llama.cpp's llama-bench / llama-batched-bench and dream's bench_seam on that model.
#   waves: length-aware decode waves (issue 16) at 65536 cells (the estimated break-even x 2) and
#          two other thresholds ('16w32768', '16w131072') against flat steps ('16f', the default
#          until this is measured), alternated in one process.
#   steps: the dreaming mix (N=128 calls, width W=32, flat) at step budgets FIRST=1024, STEPS="2048 4096",
#          and the serial path with prefill chunks 512 and SERIAL_STEPS=2048.
#   widths: the dreaming mix at widths 32/64/128 (128 calls) and 16/32 (32 calls), and the single
#          call's decode against llama-bench tg128 at depth 512.
#   single: the single call's decode against llama-bench tg128 at depth 512, REPS times in turn.
#   pipeline: bench_pipeline (the whole pipeline, replay mode) on that model: a full build of
#          dream (not engine-only), CONVS conversations (default 32), seam width WIDTH (16),
#          flash attention FAS (default "1", the seam's GPU choice; "1 0" both ways).
# Outputs under $OUT (default build/gpu-out).
set -euo pipefail
cd "$(dirname "$0")/.."
# The builds and the model live outside the working tree: the device tool copies a fresh tree for
# each command and drops ignored paths in it (a .devbuild/ there was gone at the next command,
# 2026-12-05), while /tmp stays as long as the machine is held, so `build` in one command and
# `steps` in the next, chained, reuse it.
export DREAM_DEPS_CACHE=${DREAM_DEPS_CACHE:-/tmp/dream-devbuild} DREAM_SKIP_APT=1 DREAM_CUDA=1 DREAM_DEPS_TOOLS=${DREAM_DEPS_TOOLS:-bench}
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT" "$DREAM_DEPS_CACHE/dl"
B=$DREAM_DEPS_CACHE/dream
MODEL=$DREAM_DEPS_CACHE/e4b-q4_k.gguf
# What bench/gpu_pack.sh packed into .devsrc/ on a machine with registries: the pinned llama.cpp
# source, and the memory layer's -dev packages for a device that has none of them.
if [ -f .devsrc/llama.tar.xz ] && [ ! -f "$DREAM_DEPS_CACHE"/src/llama.cpp-*/.dream-ok ]; then
  mkdir -p "$DREAM_DEPS_CACHE/src" && tar -xJf .devsrc/llama.tar.xz -C "$DREAM_DEPS_CACHE/src"
  for d in "$DREAM_DEPS_CACHE"/src/llama.cpp-*/; do touch "$d/.dream-ok"; done
fi
if [ -f .devsrc/sysroot.tar.xz ] && ! pkg-config --exists libgit2; then
  SR=$DREAM_DEPS_CACHE/sysroot
  if [ ! -d "$SR" ]; then
    tar -xJf .devsrc/sysroot.tar.xz -C "$DREAM_DEPS_CACHE"
    sed -i "s|@SR@|$SR|" "$SR"/pc/*.pc
    mkdir -p "$SR/lib"   # only the libraries this machine lacks are loaded from the carried copies
    for f in "$SR"/all/*; do ldconfig -p | grep -q "[[:space:]]$(basename "$f") " || ln -sf "$f" "$SR/lib/"; done
  fi
  export PKG_CONFIG_PATH=$SR/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} LD_LIBRARY_PATH=$SR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export LDFLAGS="-Wl,-rpath-link,$SR/all${LDFLAGS:+ $LDFLAGS}"
fi
# The single call: llama-bench tg128 at depth 512 ($1 repetitions), then dream's serial decode
# after uniform 512-token prompts (8 calls of 128 tokens), timed from the prefill's end.
single_call() {
  "$LLAMA_BUILD/bin/llama-bench" -m "$MODEL" -p 0 -n 128 -d 512 -ngl 99 -fa 1 -r "$1" 2>/dev/null | grep -E '^\| .*tg128'
  "$B/bin/bench_seam" --model "$MODEL" --workload uniform --uniform-shape 512,128 --n 8 --widths 0 --flash-attn | grep -E '^serial'
}
case ${1:-} in
build)
  [ -f .devdl/node-llama-cpp-3.22.1.tgz ] && cp -n .devdl/node-llama-cpp-3.22.1.tgz "$DREAM_DEPS_CACHE/dl/"
  bash scripts/deps.sh > "$DREAM_DEPS_CACHE/env"
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DDREAM_ENGINE_ONLY=ON -DDREAM_CUDA=ON -DDREAM_WERROR=OFF \
    -DLLAMA_SRC="$LLAMA_SRC" -DLLAMA_BUILD="$LLAMA_BUILD" > "$OUT/cmake.log"
  cmake --build "$B" -j "$(nproc)" > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
  [ -f "$MODEL" ] || "$B/bin/dream-make-model" --arch gemma4 --preset e4b --type q4_k --seed 7 -o "$MODEL"
  ;;
run)
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  S=$B/bin/bench_seam
  # tg128 at depth 512 too: the serial path decodes after a prompt, so that is its fair reference
  "$LLAMA_BUILD/bin/llama-bench" -m "$MODEL" -p 512 -n 128 -d 0,512 -ngl 99 -fa 1 -r 3 2>/dev/null
  # the exact layout (per-sequence streams) and the unified pool, on the same workloads
  "$S" --model "$MODEL" --workload uniform --uniform-shape 512,128 --n 32 --widths 8,32 --flash-attn
  "$S" --model "$MODEL" --workload uniform --uniform-shape 512,128 --n 32 --widths 8,32 --flash-attn --unified
  "$S" --model "$MODEL" --workload dreaming --n 32 --widths 8,16 --flash-attn
  "$S" --model "$MODEL" --workload dreaming --n 32 --widths 8,16,32 --flash-attn --unified
  "$S" --model "$MODEL" --workload dreaming --n 32 --widths 16 --flash-attn --unified --host-sampling
  "$S" --model "$MODEL" --workload dreaming --n 128 --widths 16,32 --flash-attn
  # the same calls with each stage's head as long as the pipeline's real prompts share
  "$S" --model "$MODEL" --workload dreaming-policy --n 32 --widths 8,16 --flash-attn
  "$S" --model "$MODEL" --workload dreaming-policy --n 128 --widths 16,32 --flash-attn
  "$S" --model "$MODEL" --workload shared-prefix --n 32 --widths 8,32 --flash-attn
  "$LLAMA_BUILD/bin/llama-batched-bench" -m "$MODEL" -c 32768 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 1,8,16,32 -ngl 99 -fa on 2>/dev/null | grep -E '^\|'
  ;;
waves)
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  S=$B/bin/bench_seam
  "$S" --model "$MODEL" --workload dreaming --n 32 --widths 16f,16w65536,16w32768,16w131072,16f,16w65536 --flash-attn
  "$S" --model "$MODEL" --workload dreaming --n 128 --widths 32f,32w65536,32w32768,32w131072,32f,32w65536 --flash-attn
  "$S" --model "$MODEL" --workload long-short --n 32 --widths 16f,16w65536,16w32768,16f,16w65536 --flash-attn --no-serial
  ;;
steps)
  # The step budget (prefill chunk = n_batch = n_ubatch; 512 on the CPU, the serial path's so the
  # CPU stays exact): on the H200 about half of the 128-call mix's batched time is prefill
  # (139k tokens at ~14k tok/s), which larger ubatches may speed up. Exactness is a CPU promise
  # only, so the GPU default differs: 1024 won over 512 (2026-12-05; DREAM_STEP_TOKENS_GPU).
  # N calls (128) at width W (32): serial once with its 512 chunk and batched at FIRST (1024) in one
  # process, then batched at each of STEPS (2048 4096) against it, then the serial path alone with
  # each chunk of SERIAL_STEPS (2048: what a GPU's serial path would gain from a larger chunk).
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  S=$B/bin/bench_seam
  N=${N:-128} W=${W:-32}
  [ -z "${FIRST-1024}" ] ||   # FIRST= (empty): no serial 512 run, the batched steps alone
    "$S" --model "$MODEL" --workload dreaming --n "$N" --widths "${W}f" --flash-attn --step "${FIRST-1024}" | grep -E '^(serial|batched|SEAM)'
  for st in ${STEPS-2048 4096}; do
    "$S" --model "$MODEL" --workload dreaming --n "$N" --widths "${W}f" --flash-attn --step "$st" --no-serial | grep -E '^(batched|SEAM)'
  done
  for ss in ${SERIAL_STEPS-2048}; do
    "$S" --model "$MODEL" --workload dreaming --n "$N" --widths 0 --flash-attn --serial-step "$ss" | grep -E '^serial'
  done
  ;;
widths)
  # The dreaming mix at its widest widths (issue 16's "at its best width"): N=128 calls serial once,
  # then batched at WIDTHS128 (32f,64f,128f) in one process; N=32 calls at WIDTHS32 (16f,32f); and
  # single-call decode against llama-bench tg128 at depth 512 (uniform 512-token prompts, serial).
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  S=$B/bin/bench_seam
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  single_call 3
  "$S" --model "$MODEL" --workload dreaming --n 32 --widths "${WIDTHS32:-16f,32f}" --flash-attn | grep -E '^(serial|batched|SEAM)'
  "$S" --model "$MODEL" --workload dreaming --n 128 --widths "${WIDTHS128:-32f,64f,128f}" --flash-attn | grep -E '^(serial|batched|SEAM)'
  ;;
single)
  # The single call REPS (3) times in turn, llama-bench with 5 repetitions each.
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
  for r in $(seq "${REPS:-3}"); do single_call 5; done
  ;;
pipeline)
  # The whole pipeline in replay mode (bench/pipeline.sh) on the E4B shape. The memory layer needs
  # the -dev packages the engine-only build goes without, and python3 for the oracle; a corpus
  # made where wordnet-base is installed can be given as CORPUS.
  eval "$(tail -n1 "$DREAM_DEPS_CACHE/env")"
  missing=$(for p in sqlite3 jansson libgit2 libcurl libmicrohttpd libutf8proc cmocka; do pkg-config --exists $p || printf '%s ' $p; done)
  [ -z "$missing" ] || { echo "gpu.sh pipeline: these -dev packages are missing: $missing(the memory layer needs them)" >&2; exit 1; }
  F=$DREAM_DEPS_CACHE/dream-full
  cmake -S . -B "$F" -DCMAKE_BUILD_TYPE=Release -DDREAM_CUDA=ON -DDREAM_WERROR=OFF \
    -DLLAMA_SRC="$LLAMA_SRC" -DLLAMA_BUILD="$LLAMA_BUILD" -DDREAM_NODE_MODULES="${DREAM_NODE_MODULES:-}" > "$OUT/cmake-full.log"
  cmake --build "$F" -j "$(nproc)" --target bench_pipeline > "$OUT/build-full.log" 2>&1 || { tail -30 "$OUT/build-full.log"; exit 1; }
  # FAS (default "1", the seam's GPU choice since 2026-12-06: dream_model_flash_attn_choice) sets
  # DREAM_FLASH_ATTN for each run; FAS="1 0" measures the pipeline both ways, one after the other.
  for fa in ${FAS:-1}; do
    echo "== DREAM_FLASH_ATTN=$fa"
    DREAM_FLASH_ATTN=$fa BIN=$F/bin MODEL=$MODEL CONVS=${CONVS:-32} WIDTH=${WIDTH:-16} OUT=$OUT/pipeline-fa$fa bash bench/pipeline.sh |
      tee "$OUT/pipeline-fa$fa.txt"
  done
  ;;
*) echo "usage: bench/gpu.sh build|run|waves|steps|widths|single|pipeline" >&2; exit 2 ;;
esac
