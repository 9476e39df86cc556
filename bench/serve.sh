#!/usr/bin/env bash
# serve.sh — the serve load test: dream serve and llama-server (built from the pinned tree,
# -np 16) on the same model file under the same load (bench/serve_load: 200 requests, 16
# concurrent, 32 tokens each, temperature 0). Prints both result lines and the ratio.
# Needs a release build in build/ (make build DREAM_DEPS_TOOLS=1 builds llama-server too).
# SERVE_N, SERVE_CONC, SERVE_TOKENS, SERVE_MODEL, BENCH_THREADS override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(tail -n1 build/deps.env)"
BIN=${SERVE_BIN:-build/bin}
N=${SERVE_N:-200} CONC=${SERVE_CONC:-16} TOK=${SERVE_TOKENS:-32}
THREADS=${BENCH_THREADS:-$(nproc)}
MODEL=${SERVE_MODEL:-build/models/tiny-gemma4.gguf}
[ -f "$MODEL" ] || "$BIN/dream-make-model" --arch gemma4 --preset tiny --type q8_0 --seed 42 -o "$MODEL"
LLAMA_SERVER=$LLAMA_BUILD/bin/llama-server
[ -x "$LLAMA_SERVER" ] || { echo "serve.sh: $LLAMA_SERVER is missing; run DREAM_DEPS_TOOLS=1 make deps" >&2; exit 1; }
OUT=build/bench
mkdir -p "$OUT"
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true' EXIT

wait_ready() { # URL LOG
  for _ in $(seq 1 600); do
    curl -sf "$1/v1/models" >/dev/null 2>&1 && return 0
    kill -0 $pid 2>/dev/null || { cat "$2" >&2; exit 1; }
    sleep 0.2
  done
  echo "serve.sh: $1 did not come up" >&2; exit 1
}
run_load() { # URL LABEL
  "$BIN/serve_load" --url "$1" --n "$CONC" --concurrency "$CONC" --max-tokens "$TOK" --label warmup >/dev/null
  "$BIN/serve_load" --url "$1" --n "$N" --concurrency "$CONC" --max-tokens "$TOK" --label "$2"
}

PORT=${SERVE_PORT:-18431}
"$BIN/dream" serve --model "$MODEL" --port $PORT --parallel 16 --ctx 2048 --threads "$THREADS" >"$OUT/dream-serve.log" 2>&1 &
pid=$!
wait_ready http://127.0.0.1:$PORT "$OUT/dream-serve.log"
d=$(run_load http://127.0.0.1:$PORT "dream serve --parallel 16")
kill $pid; wait $pid 2>/dev/null || true; pid=

"$LLAMA_SERVER" -m "$MODEL" --port $PORT -np 16 -c $((16 * 2048)) -t "$THREADS" -tb "$THREADS" -fa off --no-webui >"$OUT/llama-server.log" 2>&1 &
pid=$!
wait_ready http://127.0.0.1:$PORT "$OUT/llama-server.log"
l=$(run_load http://127.0.0.1:$PORT "llama-server -np 16")
kill $pid; wait $pid 2>/dev/null || true; pid=

echo "$d"
echo "$l"
tput() { sed -n 's/.* \([0-9.]*\) req\/s.*/\1/p' <<<"$1"; }
p50() { sed -n 's/.*p50 \([0-9.]*\) s.*/\1/p' <<<"$1"; }
awk -v a="$(tput "$d")" -v b="$(tput "$l")" -v c="$(p50 "$d")" -v e="$(p50 "$l")" \
  'BEGIN { printf "ratio dream/llama-server: throughput %.2fx, p50 latency %.2fx\n", a / b, c / e }'
