#!/usr/bin/env bash
# fuzz.sh BIN_DIR SECONDS — runs every libFuzzer binary in BIN_DIR for SECONDS on its corpus
# (fuzz/corpus/<name>, new inputs kept in BIN_DIR/../work/<name>); crashers are left in
# BIN_DIR/../artifacts/, each fuzzer's log in BIN_DIR/../<name>.log. Exits non-zero if any
# fuzzer found a crash, leak or undefined behaviour.
set -uo pipefail
bin=$1 secs=${2:-60}
cd "$(dirname "$0")/.."
out=$(dirname "$bin")
mkdir -p "$out/work" "$out/artifacts"
bad=0
for f in "$bin"/fuzz_*; do
  name=$(basename "$f"); name=${name#fuzz_}
  mkdir -p "$out/work/$name"
  echo "fuzz: $name for ${secs}s"
  if ! "$f" "$out/work/$name" "fuzz/corpus/$name" -max_total_time="$secs" -max_len=65536 \
       -artifact_prefix="$out/artifacts/$name-" -print_final_stats=1 >"$out/$name.log" 2>&1; then
    echo "fuzz: $name FAILED (see $out/$name.log and $out/artifacts/)"
    bad=1
  else
    grep -E '^Done|stat::number_of_executed_units' "$out/$name.log" | head -1
  fi
done
exit $bad
