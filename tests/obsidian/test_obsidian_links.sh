#!/usr/bin/env bash
# The vault the pipeline made (test_synthesis's test_pipeline_vault_for_obsidian keeps it) read by
# Obsidian's rules with a Markdown parser that is not dream's (obsidian_links.mjs): every link
# must resolve and every footnote land on its message. Then the same reader on two broken copies
# must say so: a link spelled the way only dream resolves it, and a footnote to no block.
# Usage: test_obsidian_links.sh VAULT NODE_MODULES WORKDIR
set -euo pipefail
VAULT=$1 NODE_MODULES=$2 WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*"; exit 1; }
[ -n "$NODE_MODULES" ] && [ -f "$NODE_MODULES/@flowershow/remark-wiki-link/package.json" ] \
  || fail "the Markdown parser is not installed ('$NODE_MODULES'): run 'make test', whose dependency step (scripts/deps.sh) installs it"
[ -d "$VAULT/Sources" ] || fail "no vault at $VAULT: test_synthesis makes it"
rm -rf "$WORK" && mkdir -p "$WORK"
ln -s "$NODE_MODULES" "$WORK/node_modules" # the reader's bare imports resolve from its own folder
cp "$HERE/obsidian_links.mjs" "$WORK/"

out=$(node "$WORK/obsidian_links.mjs" "$VAULT") || fail "the pipeline's vault: $out"
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep '^OBSIDIAN-LINKS ')
n=${line#*resolved=}; n=${n%% *}; m=${line#*total=}
[ "$n" = "$m" ] && [ "$m" -gt 0 ] || fail "not every link resolves: $line"

# what Obsidian leaves dead must be found dead
cp -r "$VAULT" "$WORK/broken"
printf '\nSee also [[balcony garden]].\n' >> "$WORK/broken/articles/Sourdough.md"
sed -i 's/#^p401|/#^p999|/' "$WORK/broken/articles/Sourdough.md"
if bad=$(node "$WORK/obsidian_links.mjs" "$WORK/broken"); then fail "a broken vault passed: $bad"; fi
printf '%s\n' "$bad" | grep -q "\[\[balcony garden\]\] does not resolve: no such note" || fail "the dead link was not found: $bad"
printf '%s\n' "$bad" | grep -q "does not land on its message" || fail "the footnote to no block was not found: $bad"
echo "PASS: every link of the pipeline's vault resolves by Obsidian's rules, every footnote lands on its message"
