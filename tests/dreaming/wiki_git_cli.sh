#!/usr/bin/env bash
# wiki_git_cli.sh DREAM CORPUS DIR — dream commits to the wiki's git repository only where git
# itself would, and never loses what git holds no commit of (`dream forget`, which commits):
# - a rebase half way, a detached HEAD, git's index lock: refused with the reason and what to do,
#   nothing changed (before, dream committed anyway, and the next `git checkout`, `git rebase
#   --abort` or `git commit` brought the forgotten files back);
# - a staged change in an article forget edits, a change not even staged in one it removes:
#   refused, nothing changed (before, the index kept the forgotten text, or the edit was lost);
# - a line the person wrote under the footnotes keeps the article (before, it went with it);
# - a lock a killed dream commit left (its marker in .git) is removed, one younger than that is not;
# - the commit is the person's as git names them: GIT_CONFIG_GLOBAL, GIT_COMMITTER_NAME.
set -u
dream=$1 corpus=$2 dir=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/home"
export DREAM_HOME="$dir" HOME="$dir/home"
unset DREAM_WIKI GIT_CONFIG_GLOBAL GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
git config --global user.name "Home User" && git config --global user.email home@example.org || fail "git config"
store="$dir/memory.sqlite" wiki="$dir/wiki"
g() { git -C "$wiki" "$@"; }

"$dream" init --quiet || fail "dream init"
"$dream" ingest "$corpus" >/dev/null 2>&1 || fail "dream ingest"
hash=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT cite FROM conversations WHERE title = 'Levain or starter'\").fetchone()[0])" "$store") ||
    fail "no hash for the conversation"
cat > "$wiki/articles/Levain.md" <<MD
# Levain

**Levain** is what the person calls a starter.[^1]

## References

[^1]: \`conv:$hash#p401\` (2024-09-14, Levain or starter)
MD
g add articles/Levain.md && g commit -qm "my article" || fail "git commit"
# its transcript note (the sources stage needs no model)
DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run --stage sources >/dev/null 2>&1 || fail "run --stage sources"
note=$(g ls-tree -r HEAD --name-only | grep "($hash)\.md$") || fail "no transcript note of conv:$hash"
# a hand edit staged, and another not staged, in an article a stage rewrites (sources links its
# footnote again): both go into the stage's commit, and the index follows it. Before, the index
# kept the staged text, so git status showed the commit undone, and the person's next `git
# commit` undid it (their unstaged line and dream's link with it).
cat > "$wiki/articles/Levain.md" <<MD
# Levain

**Levain** is what the person calls a starter.[^1]

My staged line.

## References

[^1]: \`conv:$hash#p401\` (2024-09-14, Levain or starter)
MD
g add articles/Levain.md || fail "git add"
sed -i 's/^My staged line\.$/My staged line.\n\nMy unstaged line./' "$wiki/articles/Levain.md"
DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run --stage sources >/dev/null 2>&1 || fail "run --stage sources over a staged edit"
g show HEAD:articles/Levain.md | grep -q "^My unstaged line\.$" || fail "the stage's commit lacks the unstaged line: $(g show HEAD:articles/Levain.md)"
g show HEAD:articles/Levain.md | grep -q "Sources/" || fail "the stage did not link the footnote: $(g show HEAD:articles/Levain.md)"
[ -z "$(g status --porcelain)" ] || fail "the index does not follow the stage's commit: $(g status --porcelain; g diff --cached)"
g show HEAD~1:articles/Levain.md > "$wiki/articles/Levain.md" && g commit -qam "my lines out again" || fail "taking the lines out"
sum() { sha256sum "$store" "$wiki/articles/Levain.md" | awk '{print $1}' | tr '\n' ' '; g rev-parse HEAD; }

# refused: $1 names the case, $2 what the error must say; nothing may change
refused() {
    local before out rc
    before=$(sum)
    out=$("$dream" forget "$hash" 2>&1); rc=$?
    [ $rc = 1 ] || fail "$1: exit $rc (want 1): $out"
    grep -q -- "$2" <<<"$out" || fail "$1: the error does not say \"$2\": $out"
    grep -q "then run dream" <<<"$out" || fail "$1: the error does not say what to do: $out"
    [ "$(sum)" = "$before" ] || fail "$1: the store or the wiki changed"
    echo "refused ($1): $out"
}

g checkout -q --detach || fail "detach"
refused "detached HEAD" "has a detached HEAD"
# dream run says so before any model is read (this one does not exist)
out=$(DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run 2>&1); rc=$?
[ $rc = 1 ] && grep -q "has a detached HEAD" <<<"$out" || fail "dream run on a detached HEAD: exit $rc: $out"
g checkout -q - || fail "back to the branch"

echo "a note" > "$wiki/notes.txt" && g add notes.txt && g commit -qm "a note" || fail "git commit"
GIT_SEQUENCE_EDITOR="sed -i s/^pick/edit/" g rebase -q -i HEAD~1 >/dev/null 2>&1 || fail "git rebase -i"
refused "rebase half way" "in the middle of a rebase"
g rebase --abort || fail "git rebase --abort"

touch "$wiki/.git/index.lock"
refused "index lock" "locked by git (.*index.lock exists)"
rm -f "$wiki/.git/index.lock"
# a lock held for a moment (an editor's git status) is waited out
touch "$wiki/.git/index.lock" && { sleep 0.5; rm -f "$wiki/.git/index.lock"; } &
out=$(DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run --stage sources 2>&1) || fail "a lock held for a moment: $out"
wait

sed -i 's/calls a starter/calls their starter/' "$wiki/articles/Levain.md" && g add articles/Levain.md
refused "staged edit" "articles/Levain.md has changes staged in git"
g reset -q || fail "git reset"
refused "unstaged edit in a removed article" "articles/Levain.md has changes git holds no commit of"
g checkout -- articles/Levain.md && echo "My own line." >> "$wiki/articles/Levain.md" && g commit -qam "my line" || fail "git commit"

# a killed dream commit: its marker and the index lock of that moment are removed; a branch lock
# taken 400 s after the marker is a git command of the person's, and is left alone
marker="$wiki/.git/dream-commit-in-progress"
touch -d "-400 seconds" "$marker" "$wiki/.git/index.lock" && touch "$wiki/.git/refs/heads/$(g symbolic-ref --short HEAD).lock"
refused "a younger branch lock" "locked by git (.*refs/heads/.*\.lock exists)"
[ -e "$wiki/.git/index.lock" ] && fail "the killed commit's index lock is still there"
rm -f "$wiki/.git/refs/heads/"*.lock
touch "$marker" "$wiki/.git/index.lock"

printf '[user]\n\tname = Glob Al\n\temail = glob@example.org\n' > "$dir/global.gitconfig"
out=$(GIT_CONFIG_GLOBAL="$dir/global.gitconfig" GIT_COMMITTER_NAME="Env Committer" "$dream" forget "$hash" 2>&1) || fail "forget: $out"
echo "$out"
grep -q "removed .*index.lock left by an interrupted commit" <<<"$out" || fail "the killed commit's lock is not reported removed: $out"
[ -e "$marker" ] && fail "the marker is still there"
[ -e "$wiki/articles/Levain.md" ] || fail "the article with the person's own line under its footnotes was removed"
grep -q "^My own line\.$" "$wiki/articles/Levain.md" || fail "the person's line is gone: $(cat "$wiki/articles/Levain.md")"
grep -q "$hash" "$wiki/articles/Levain.md" && fail "the article still names conv:$hash"
[ "$(g log -1 --format='%an <%ae> / %cn')" = "Glob Al <glob@example.org> / Env Committer" ] ||
    fail "the commit's names: $(g log -1 --format='%an <%ae> / %cn')"
[ -z "$(g status --porcelain)" ] || fail "the tree is not clean after forget: $(g status --porcelain)"
# a write killed between its temporary file and the rename: the next stage removes the file of
# a process no longer running, and leaves a running one's (this shell's)
sleep 0 & dead=$!; wait $dead
echo partial > "$wiki/articles/Levain.md.tmp.$dead" && echo partial > "$wiki/articles/Levain.md.tmp.$$" || fail "temporary files"

# a dream commit killed after it moved the branch, before it wrote the index: the index is at
# the commit before (forget's changes look undone to git, and a plain `git commit` would undo
# them). The next dream command that commits brings the index up to HEAD (sources needs no model).
g read-tree HEAD^ && g rev-parse HEAD^ > "$marker" || fail "simulating the killed commit"
[ -n "$(g status --porcelain)" ] || fail "the simulated index is not stale"
out=$(DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run --stage sources 2>&1) || fail "run --stage sources: $out"
grep -q "caught up with the interrupted commit" <<<"$out" || fail "the catch-up is not reported: $out"
[ -e "$wiki/articles/Levain.md.tmp.$dead" ] && fail "a killed write's temporary file is still there"
[ -e "$wiki/articles/Levain.md.tmp.$$" ] || fail "a running process's temporary file was removed"
rm -f "$wiki/articles/Levain.md.tmp.$$"
[ -z "$(g status --porcelain)" ] || fail "the index did not catch up with HEAD: $(g status --porcelain)"

# a commit killed before it moved the branch (the marker names HEAD itself as the commit it was
# made on): nothing is owed, and what the person staged stays (before, the index was "caught
# up" against the last memory commit, undoing their staging)
g checkout -q HEAD^ -- articles/Levain.md && g rev-parse HEAD > "$marker" || fail "simulating the earlier kill"
out=$(DREAM_MODEL="$dir/no-such-model.gguf" "$dream" run --stage sources 2>&1) || fail "run --stage sources: $out"
grep -q "caught up" <<<"$out" && fail "a catch-up for a commit that never moved the branch: $out"
g diff --cached --name-only | grep -qx articles/Levain.md || fail "the person's staged file was unstaged"
g checkout -q HEAD -- articles/Levain.md || fail "git checkout"

# a forget killed after the store's commit, its transcript note still in HEAD (gone from disk):
# forget again takes it out, where it said "no conversation" and left the conversation's text
g ls-tree -r HEAD --name-only | grep -q "($hash)\.md$" && fail "forget left the transcript note in HEAD"
g checkout -q "$(g log --format=%H --diff-filter=A -1 -- "$note")" -- "$note" && g commit -qm "the note back" && rm -f "$wiki/$note" ||
    fail "simulating the killed forget"
out=$("$dream" forget "$hash" 2>&1) || fail "forget of the note left behind: $out"
g ls-tree -r HEAD --name-only | grep -q "($hash)\.md$" && fail "the transcript note is still in HEAD: $out"

echo "PASS: wiki git: refused where git would refuse, nothing lost, the killed commit's lock cleared, the person's names"
