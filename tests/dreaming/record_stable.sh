#!/usr/bin/env bash
# record_stable.sh DREAM SRC DIR — the same history dreamed twice gives the same bytes. A casual
# generated corpus (train/gen_corpus.py --style casual --seed 2145: four nights, where reconcile's
# lead step both replaces a stale lead sentence and appends a later change) is recorded twice
# through train/record.sh, the real pipeline against the ground-truth oracle, as make_mix.sh
# records the training data. The two records files and the two wikis' articles must be
# byte-identical, and there must be articles. It failed while that lead step read section bodies
# freed by its own replacement: the append happened on some runs and not others (and ASan
# stopped the run).
set -u
dream=$1 src=$2 dir=$3
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "python3 is needed for the oracle"
rm -rf "$dir"
mkdir -p "$dir"
python3 "$src/train/gen_corpus.py" --seed 2145 --catalogue train --style casual --out "$dir/corpus" >/dev/null || fail "gen_corpus"
for k in 1 2; do
    DREAM=$dream bash "$src/train/record.sh" "$dir/corpus" "$dir/rec$k" >"$dir/record$k.log" 2>&1 ||
        fail "record $k: $(tail -20 "$dir/record$k.log")"
done
n=$(wc -l <"$dir/rec1/records.jsonl")
[ "$n" -gt 0 ] || fail "no records"
arts=$(ls "$dir/rec1/home/wiki/articles" 2>/dev/null | wc -l)
[ "$arts" -gt 0 ] || fail "no articles"
grep -q "lead sentence(s) replaced" "$dir/rec1/run-3.log" || fail "reconcile did not run on night 3"
cmp -s "$dir/rec1/records.jsonl" "$dir/rec2/records.jsonl" ||
    fail "the two recordings differ: $(diff "$dir/rec1/records.jsonl" "$dir/rec2/records.jsonl" | head -c 600)"
diff -r "$dir/rec1/home/wiki/articles" "$dir/rec2/home/wiki/articles" >"$dir/articles.diff" ||
    fail "the two wikis differ: $(head -c 600 "$dir/articles.diff")"
echo "PASS: record stable ($n records, $arts articles, byte-identical twice)"
