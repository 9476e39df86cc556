#!/usr/bin/env bash
# ingest.sh — the ingest benchmark: generated ChatGPT-format exports of 50 and 200 MB, ingested
# into a fresh store, then the 200 MB one again (all unchanged). Reports MB/s and peak RSS
# (GNU time's maximum resident set size), so memory growth with export size is visible; and
# the 50 MB one zipped, as ChatGPT ships it.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build/bench
mkdir -p "$OUT"
for mb in 50 200; do
  f=$OUT/chatgpt-$mb.json
  [ -f "$f" ] || /usr/bin/python3 bench/gen_chatgpt_export.py "$mb" "$f"
done
run() { # label file store
  local t0 t1 rss
  t0=$(date +%s.%N)
  /usr/bin/time -f '%M' -o "$OUT/rss.txt" build/bin/dream ingest --format chatgpt --store "$3" "$2" >/dev/null
  t1=$(date +%s.%N)
  rss=$(cat "$OUT/rss.txt")
  awk -v l="$1" -v s="$(stat -c %s "$2")" -v a="$t0" -v b="$t1" -v r="$rss" \
    'BEGIN { printf "INGEST-BENCH %s: %.1f MB in %.2f s = %.1f MB/s, peak RSS %.1f MiB\n", l, s/1e6, b-a, s/1e6/(b-a), r/1024 }'
}
rm -f "$OUT"/ingest-*.sqlite*
run "50MB fresh" "$OUT/chatgpt-50.json" "$OUT/ingest-50.sqlite"
run "200MB fresh" "$OUT/chatgpt-200.json" "$OUT/ingest-200.sqlite"
run "200MB again (unchanged)" "$OUT/chatgpt-200.json" "$OUT/ingest-200.sqlite"
# the 50 MB export as ChatGPT ships it, conversations.json in a deflated ZIP: the member is read
# twice, once whole for its CRC-32 before anything is stored, once to import it
z=$OUT/chatgpt-50.zip
[ -f "$z" ] || /usr/bin/python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED).write(sys.argv[1], "conversations.json")' "$OUT/chatgpt-50.json" "$z"
run "50MB zipped, fresh" "$z" "$OUT/ingest-50z.sqlite"
