#!/usr/bin/env bash
# forget_cli.sh DREAM CORPUS DIR — `dream forget` from the command line (issue 18.3): it is in
# the verb list and has --help; bad arguments are clear errors that change nothing; a dry run
# lists the conversations and changes nothing; a real run takes the conversation out of the store
# and out of the wiki (an article that cites only it is removed) in one commit.
set -u
dream=$1 corpus=$2 dir=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
export DREAM_HOME="$dir"
unset DREAM_WIKI
store="$dir/memory.sqlite"

"$dream" --help | grep -q "^  forget " || fail "forget is not in dream --help"
"$dream" forget --help | grep -q "^usage: dream forget" || fail "dream forget --help"
"$dream" forget >/dev/null 2>&1; [ $? = 2 ] || fail "no arguments: want exit 2"

"$dream" init --quiet || fail "dream init"
"$dream" ingest "$corpus" >/dev/null 2>&1 || fail "dream ingest"
hash=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT cite FROM conversations WHERE title = 'Levain or starter'\").fetchone()[0])" "$store") ||
    fail "no hash for the conversation"
# the person's article that cites only that conversation
cat > "$dir/wiki/articles/Levain.md" <<MD
# Levain

**Levain** is what the person calls a starter.[^1]

## References

[^1]: \`conv:$hash#p401\` (2024-09-14, Levain or starter)
MD
git -C "$dir/wiki" add articles/Levain.md && git -C "$dir/wiki" -c user.name=t -c user.email=t@t commit -qm "my article" || fail "git commit"
sum() { sha256sum "$store" "$dir/wiki/articles/Levain.md" | awk '{print $1}' | tr '\n' ' '; git -C "$dir/wiki" rev-parse HEAD; }
before=$(sum)

out=$("$dream" forget deadbeef 2>&1); rc=$?
[ $rc = 1 ] || fail "unknown conversation: exit $rc (want 1): $out"
grep -q "no conversation conv:deadbeef" <<<"$out" || fail "unknown conversation not named: $out"
out=$("$dream" forget --before 2024-02-30 2>&1); rc=$?
[ $rc = 2 ] || fail "bad day: exit $rc (want 2): $out"
grep -q "YYYY-MM-DD" <<<"$out" || fail "bad day not explained: $out"
out=$("$dream" forget --source chatgtp 2>&1); rc=$?
[ $rc = 1 ] || fail "unknown source: exit $rc (want 1): $out"
grep -q "its sources: claude" <<<"$out" || fail "the known sources are not listed: $out"
out=$("$dream" forget "$hash" --source pi 2>&1); rc=$?
[ $rc = 2 ] || fail "hash and --source: exit $rc (want 2): $out"
out=$("$dream" forget "conv:$hash" --dry-run 2>&1) || fail "dry run: $out"
echo "$out"
grep -q "^conversation conv:$hash \"Levain or starter\" (pi, 2024-09-14" <<<"$out" || fail "the dry run does not list the conversation: $out"
grep -q "^articles/Levain.md: would remove the article" <<<"$out" || fail "the dry run does not list the article: $out"
grep -q "(dry run: nothing changed)" <<<"$out" || fail "the dry run does not say so: $out"
[ "$(sum)" = "$before" ] || fail "a bad argument or the dry run changed the store or the wiki"

out=$("$dream" forget "$hash" 2>&1) || fail "forget: $out"
echo "$out"
grep -q "^forgot 1 conversation(s): 4 message(s)" <<<"$out" || fail "the summary: $out"
[ -e "$dir/wiki/articles/Levain.md" ] && fail "the article citing only it is still there"
grep -rq --exclude-dir=.git "$hash" "$dir/wiki" && fail "the wiki still names conv:$hash"
[ "$(git -C "$dir/wiki" log -1 --format=%s)" = "memory: forget conv:$hash" ] || fail "the commit: $(git -C "$dir/wiki" log -1 --format=%s)"
git -C "$dir/wiki" ls-files --error-unmatch articles/Levain.md >/dev/null 2>&1 && fail "the article is still in git's index"
left=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM conversations WHERE cite = ?', (sys.argv[2],)).fetchone()[0])" "$store" "$hash")
[ "$left" = 0 ] || fail "the store still has conv:$hash"
out=$("$dream" forget "$hash" 2>&1); rc=$?
[ $rc = 1 ] || fail "forgetting it twice: exit $rc (want 1): $out"
echo "PASS: dream forget: listed, --help, clear errors, a dry run that changes nothing, one commit"
