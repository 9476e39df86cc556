#!/usr/bin/env bash
# fuzz.sh BIN_DIR SECONDS — runs every libFuzzer binary in BIN_DIR for SECONDS on its corpus
# (fuzz/corpus/<name>, new inputs kept in build/fuzz/work/<name>); crashers are left in
# build/fuzz/artifacts/. Exits non-zero if any fuzzer found a crash, leak or undefined behaviour.
set -uo pipefail
bin=$1 secs=${2:-60}
cd "$(dirname "$0")/.."
mkdir -p build/fuzz/work build/fuzz/artifacts
bad=0
for f in "$bin"/fuzz_*; do
  name=$(basename "$f"); name=${name#fuzz_}
  mkdir -p "build/fuzz/work/$name"
  echo "fuzz: $name for ${secs}s"
  if ! "$f" "build/fuzz/work/$name" "fuzz/corpus/$name" -max_total_time="$secs" -max_len=65536 \
       -artifact_prefix="build/fuzz/artifacts/$name-" -print_final_stats=1 >"build/fuzz/$name.log" 2>&1; then
    echo "fuzz: $name FAILED (see build/fuzz/$name.log and build/fuzz/artifacts/)"
    bad=1
  else
    grep -E '^Done|stat::number_of_executed_units' "build/fuzz/$name.log" | head -1
  fi
done
exit $bad
