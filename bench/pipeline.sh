#!/usr/bin/env bash
# pipeline.sh — the whole pipeline end to end in replay mode (bench_pipeline.c), from the repo
# root: a generated corpus (train/gen_corpus.py --catalogue train, cached under the output
# directory), its ground-truth backend (train/oracle.py) on a free port, and bench_pipeline over
# it. Prints bench_pipeline's lines (PIPELINE-BENCH / PIPELINE-STAGE, one figure each).
# REPLAY=0: no oracle, the model answers for itself (a model that reads: dream-mini).
#
# Environment: BIN (default build/bin), MODEL (required), CONVS (conversations, default 4),
# NIGHTS (the conversations cut by date into this many nightly runs, train/nights.py; default 1:
# the whole history at once, which never folds; 2 or more fold later chunks into articles),
# SEED (default 1), THREADS (default: all cores), WIDTH (the seam's batch width; default the
# seam's own), BATCH (conversations or chunks per stage call, default 8), OUT (work directory,
# default build/bench/pipeline), CORPUS (a corpus made beforehand, e.g. where wordnet-base is
# installed, for a machine without it; default OUT/corpus-sSEED-nCONVS, made when missing),
# REPLAY (1, the default: the oracle's answers forced; 0: the model's own), ADAPTERS (the
# adapters directory the seam mounts; default none).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build/bin}
MODEL=${MODEL:?pipeline.sh: set MODEL to a GGUF (bench/run.sh makes the 177M shape)}
CONVS=${CONVS:-4}
SEED=${SEED:-1}
THREADS=${THREADS:-$(nproc)}
BATCH=${BATCH:-8}
OUT=${OUT:-build/bench/pipeline}
NIGHTS=${NIGHTS:-1}
for v in CONVS SEED THREADS BATCH NIGHTS; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "pipeline.sh: $v='${!v}' is not a whole number" >&2; exit 2; }
done
[ -f "$MODEL" ] || { echo "pipeline.sh: MODEL '$MODEL' is not a file" >&2; exit 2; }
[ -x "$BIN/bench_pipeline" ] || { echo "pipeline.sh: no $BIN/bench_pipeline (make build)" >&2; exit 1; }
mkdir -p "$OUT"
CORPUS=${CORPUS:-$OUT/corpus-s$SEED-n$CONVS}
[ -f "$CORPUS/truth.json" ] || python3 train/gen_corpus.py --seed "$SEED" --catalogue train --conversations "$CONVS" --out "$CORPUS" >/dev/null

rm -rf "$OUT/home" "$OUT/nights" "$OUT/oracle.port" "$OUT"/records.jsonl*
python3 train/nights.py "$CORPUS" "$OUT/nights" "$NIGHTS" >/dev/null
NIGHT_DIRS=()
for k in $(seq 1 "$NIGHTS"); do [ -d "$OUT/nights/$k" ] && NIGHT_DIRS+=("$OUT/nights/$k"); done
ARGS=(--model "$MODEL" --home "$OUT/home" --threads "$THREADS" --batch "$BATCH")
[ -n "${WIDTH:-}" ] && ARGS+=(--width "$WIDTH")
if [ "${REPLAY:-1}" = 0 ]; then
  DREAM_ADAPTERS="${ADAPTERS:-$OUT/no-adapters}" "$BIN/bench_pipeline" "${ARGS[@]}" "${NIGHT_DIRS[@]}"
  exit
fi
python3 train/oracle.py --truth "$CORPUS/truth.json" --records "$OUT/records.jsonl" --port 0 --port-file "$OUT/oracle.port" \
  2>"$OUT/oracle.log" &
ORACLE=$!
trap 'kill -TERM $ORACLE 2>/dev/null || true; wait $ORACLE 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  [ -s "$OUT/oracle.port" ] && break
  kill -0 "$ORACLE" 2>/dev/null || { cat "$OUT/oracle.log" >&2; echo "pipeline.sh: the oracle did not start" >&2; exit 1; }
  sleep 0.1
done
[ -s "$OUT/oracle.port" ] || { echo "pipeline.sh: the oracle did not write its port in 30 s" >&2; exit 1; }
ARGS+=(--replay "http://127.0.0.1:$(cat "$OUT/oracle.port")")
DREAM_ADAPTERS="${ADAPTERS:-$OUT/no-adapters}" "$BIN/bench_pipeline" "${ARGS[@]}" "${NIGHT_DIRS[@]}"
