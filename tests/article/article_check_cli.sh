#!/bin/sh
# article_check_cli.sh — `dream check` end to end. argv: DREAM_BINARY DATA_DIR WORK_DIR.
# A clean vault (the fixture articles) passes with a one-line summary; a vault with one
# violation of each kind fails and names every one as FILE:LINE: message.
set -u
dream=$1 data=$2 work=$3
rm -rf "$work" && mkdir -p "$work/clean" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# a home of its own: the default store it checks is never the person's
export DREAM_HOME="$work/home"
unset DREAM_WIKI

cp -r "$data/articles" "$work/clean/articles" || exit 1
out=$("$dream" check --wiki "$work/clean" 2>&1); rc=$?
[ $rc -eq 0 ] || fail "clean vault: exit $rc: $out"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "clean vault: more than one line: $out"
printf '%s\n' "$out" | grep -q "^dream check: 7 article(s) in .*/articles, all clean$" || fail "clean vault summary: $out"

# DREAM_WIKI is the default wiki
out=$(DREAM_WIKI="$work/clean" "$dream" check --quiet 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] || fail "--quiet on a clean vault: exit $rc: $out"

b="$data/vault-broken/articles"
out=$("$dream" check --wiki "$data/vault-broken" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "broken vault: exit $rc (want 1): $out"
expect() {
    printf '%s\n' "$out" | grep -qF -- "$1" || fail "broken vault: missing '$1' in:
$out"
}
expect "$b/Title_mismatch.md:1: the H1 'Another title' does not match the file name (expected '# Title mismatch')"
expect "$b/Second_h1.md:5: a second H1 'Stray': an article has exactly one; make it '## Stray'"
expect "$b/Unclosed_fence.md:5: a code fence opened here is never closed"
expect "$b/Unclosed_fence.md:3: footnote marker [^1] has no definition"
expect "$b/Tail_order.md:9: '## See also' comes after '## References'"
expect "$b/Undefined_marker.md:3: footnote marker [^2] has no definition"
expect "$b/Unused_definition.md:8: footnote definition [^2] is never cited in the text"
expect "$b/Out_of_order.md:3: footnote [^2] is cited where [^1] is expected"
expect "$b/Old_provenance.md:7: footnote [^1] is not in the form [[Sources/NOTE#^BLOCK|conv:HASH#MSG]] or \`conv:HASH#MSG\`, then (YYYY-MM-DD or undated, title)"
expect "$b/Dead_source_link.md:8: link [[Sources/2024-01-01 A conversation (aaaaaaaa)#^m9]] lands on no message"
expect "$b/Dead_source_link.md:9: link [[Sources/2024-01-02 Gone (bbbbbbbb)#^m1]] lands on no message"
expect "$b/Redlink.md:3: link [[Nowhere Article]] points to no article"
expect "$b/Two_infoboxes.md:7: a second infobox"
expect "$b/Duplicate_section.md:9: a second section named 'Setup': section names must differ"
expect "problem(s) in 12 of 13 article(s)"
printf '%s\n' "$out" | grep -q "Dead_source_link.md:7:" && fail "a footnote link that lands was reported: $out"
printf '%s\n' "$out" | grep -q "Clean_one.md" && fail "Clean_one.md reported: $out"
printf '%s\n' "$out" | grep -q "Category:Things" && fail "a category link was reported: $out"

# an article moved into a folder of articles/ (Obsidian lets the person file it): dream reads and
# writes articles/ itself only, so the article is out of every read verb and night's edit; check
# names it and where it belongs, and leaves a non-article file in a folder alone
cp -r "$work/clean" "$work/foldered" && mkdir -p "$work/foldered/articles/Baking/Old" "$work/foldered/articles/.obsidian" || exit 1
moved=Street_photography.md
mv "$work/foldered/articles/$moved" "$work/foldered/articles/Baking/Old/" || exit 1
echo "notes" > "$work/foldered/articles/Baking/photo.txt"
echo "# Hidden" > "$work/foldered/articles/.obsidian/Hidden.md"
out=$("$dream" check --wiki "$work/foldered" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "an article in a folder: exit $rc (want 1): $out"
printf '%s
' "$out" | grep -qF "$work/foldered/articles/Baking/Old/$moved:1: an article in a folder of articles/: dream reads and writes only the articles directly in $work/foldered/articles, so read, search, ask and the nightly run do not see this one; move it back to $work/foldered/articles/$moved (Obsidian links by name, so [[links]] to it keep working)" ||
    fail "the article in a folder is not named: $out"
printf '%s
' "$out" | grep -qF "photo.txt" && fail "a file that is not an article was reported: $out"
printf '%s
' "$out" | grep -qF "Hidden.md" && fail "a file in a hidden folder was reported: $out"

# not a wiki
out=$("$dream" check --wiki "$work/nowhere" 2>&1); rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q "is not a directory" || fail "missing wiki: exit $rc: $out"
# the store: every footnote's message held, and every text value valid UTF-8, or each bad one
# named by table, row and column
"$dream" ingest --store "$work/s.sqlite" "$data/ingest/openai/chats.jsonl" >/dev/null 2>&1 || fail "ingest into $work/s.sqlite"
cited=$(python3 -c "import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print('%s#%s' % db.execute('SELECT c.cite, m.source_id FROM conversations c JOIN messages m ON m.conversation = c.id ORDER BY c.id, m.position').fetchone())" "$work/s.sqlite") ||
    fail "python3 could not read the store"
conv=${cited%%#*}
mkdir -p "$work/cited/articles" "$work/empty/articles" || exit 1
printf '# Cited\n\n**Cited** holds three claims.[^1] One cites a message the store lacks.[^2] One a conversation.[^3]\n\n## References\n\n[^1]: `conv:%s` (2024-01-01, Knots)\n[^2]: `conv:%s#99` (2024-01-01, Knots)\n[^3]: `conv:abcdef12#1` (2024-01-01, Elsewhere)\n' \
    "$cited" "$conv" >"$work/cited/articles/Cited.md" || exit 1
out=$("$dream" check --wiki "$work/cited" --store "$work/s.sqlite" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "footnotes citing what the store lacks: exit $rc (want 1): $out"
expect "$work/cited/articles/Cited.md:8: footnote [^2] cites conv:$conv#99, which the store does not hold: the store holds conversation conv:$conv but no message 99 of it"
expect "$work/cited/articles/Cited.md:9: footnote [^3] cites conv:abcdef12#1, which the store does not hold: the store holds no conversation conv:abcdef12"
printf '%s\n' "$out" | grep -q "Cited.md:7:" && fail "a footnote whose message the store holds was reported: $out"
expect "2 problem(s) in 1 of 1 article(s)"
# a --store that names nothing is an error, and no store is made there
out=$("$dream" check --wiki "$work/cited" --store "$work/typo.sqlite" 2>&1); rc=$?
[ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF "no store at $work/typo.sqlite" || fail "a missing --store: exit $rc: $out"
[ -e "$work/typo.sqlite" ] && fail "dream check made a store at $work/typo.sqlite"
# without the store, the same article is clean (no default store in this home)
out=$("$dream" check --wiki "$work/cited" 2>&1); rc=$?
[ $rc -eq 0 ] || fail "no store: exit $rc: $out"
out=$("$dream" check --wiki "$work/empty" --store "$work/s.sqlite" 2>&1); rc=$?
[ $rc -eq 0 ] || fail "clean store: exit $rc: $out"
printf '%s\n' "$out" | grep -q "^dream check: the store $work/s.sqlite: all its text is valid UTF-8$" || fail "clean store summary: $out"
python3 -c "import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# the trigger that keeps the search index needs dream's own tokenizer, which Python lacks
db.execute('DROP TRIGGER search_message_re')
db.execute(\"UPDATE messages SET text = CAST(X'68C3' AS TEXT) WHERE conversation = 1 AND position = 0\")
db.commit()" "$work/s.sqlite" || fail "python3 could not write the bad row"
out=$("$dream" check --wiki "$work/empty" --store "$work/s.sqlite" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "bad store: exit $rc (want 1): $out"
printf '%s\n' "$out" | grep -qF "$work/s.sqlite: table messages, row conversation=1, position=0, column text: not valid UTF-8 from byte 1 on" ||
    fail "the bad row is not named: $out"
printf '%s\n' "$out" | grep -qF "1 text value(s) of the store $work/s.sqlite are not valid UTF-8" || fail "no store summary: $out"
# a wiki dream init set up whose articles/ is gone (git keeps no empty folder: a clone, or the
# last article removed) holds no article: check, status and list said there was no wiki
DREAM_HOME="$work/bare" "$dream" init --quiet || fail "init of a bare wiki"
rm -rf "$work/bare/wiki/articles"
out=$(DREAM_HOME="$work/bare" "$dream" check 2>&1) || fail "check of a wiki without articles/: $out"
printf '%s\n' "$out" | grep -q "0 article(s) in .*, all clean" || fail "check of a wiki without articles/: $out"
out=$(DREAM_HOME="$work/bare" "$dream" status 2>&1) || fail "status of a wiki without articles/: $out"
printf '%s\n' "$out" | grep -q "^articles: 0 " || fail "status of a wiki without articles/: $out"
echo "PASS: dream check: clean vault clean, 13 kinds of violation named, an article in a folder named, footnotes citing what the store lacks named, invalid UTF-8 in the store named"
