#!/bin/sh
# help_cli.sh — `dream help VERB` prints exactly what `dream VERB --help` prints, for every verb
# `dream --help` lists; a mistyped verb exits 2 naming the verb it most likely meant, and a word
# near no verb gets no guess. argv: DREAM_BINARY.
set -u
dream=$1
fail() { echo "FAIL: $*"; exit 1; }
has() { printf '%s\n' "$1" | grep -qF -- "$2" || fail "missing '$2' in:
$1"; }

verbs=$("$dream" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
[ "$(printf '%s\n' "$verbs" | wc -l)" -ge 15 ] || fail "dream --help lists too few verbs: $verbs"
for v in $verbs; do
    want=$("$dream" "$v" --help) || fail "dream $v --help: exit $?"
    got=$("$dream" help "$v") || fail "dream help $v: exit $?"
    [ "$got" = "$want" ] || fail "dream help $v differs from dream $v --help"
    has "$got" "usage: dream $v"
done
[ "$("$dream" help)" = "$("$dream" --help)" ] || fail "dream help alone is not dream --help"
[ "$("$dream" help help)" = "$("$dream" --help)" ] || fail "dream help help is not dream --help (it said: unknown verb 'help')"
has "$("$dream" --help)" "'dream help <verb>'"

# typos: exit 2, the verb it meant
for typo in rnu:run staus:status ingset:ingest reed:read hlep:help serach:search; do
    out=$("$dream" "${typo%%:*}" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream ${typo%%:*}: exit $rc (want 2)"
    has "$out" "dream: unknown verb '${typo%%:*}' (did you mean '${typo#*:}'?)"
done
out=$("$dream" help rnu 2>&1); rc=$?
[ $rc -eq 2 ] || fail "dream help rnu: exit $rc (want 2)"
has "$out" "did you mean 'run'?"
# nothing near: no guess
for word in xyzzy q banana; do
    out=$("$dream" "$word" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream $word: exit $rc (want 2)"
    has "$out" "dream: unknown verb '$word'; 'dream --help' lists the verbs"
done
out=$("$dream" help run status 2>&1); [ $? -eq 2 ] || fail "dream help with two verbs: $out"
# a path option given "" (an unset variable) is a usage error that writes nothing: SQLite took ""
# for a temporary store (ingest said it kept 8 conversations, and kept none), and run --wiki ""
# wrote at the filesystem's root
tmp=$(mktemp -d) || fail "mktemp"
for args in "ingest --store '' $tmp" "run --wiki ''" "run --store ''" "forget --wiki '' deadbeef" "reindex --store ''" "init --wiki ''"; do
    out=$(DREAM_HOME="$tmp/home" eval "\"$dream\" $args" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream $args: exit $rc (want 2): $out"
    has "$out" "is empty: give it a value, or leave the option out"
    [ -e "$tmp/home" ] && fail "dream $args wrote $tmp/home"
done
# after --, "--store" and "" are words; and a read verb takes --store "" for no store
out=$(DREAM_HOME="$tmp/home" "$dream" forget -- --store '' 2>&1)
case "$out" in *"is empty"*) fail "forget -- --store '': $out" ;; esac
out=$(DREAM_HOME="$tmp/home" "$dream" search --store '' x 2>&1)
case "$out" in *"is empty"*) fail "search --store '': $out" ;; esac
# an option given last without its value is named as such by every verb (some said "unknown
# argument '--at'")
for args in "schedule --at" "init --wiki" "check --store" "reindex --wiki" "tokenize --model" "search x --limit"; do
    out=$(DREAM_HOME="$tmp/home" eval "\"$dream\" $args" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream $args: exit $rc (want 2): $out"
    has "$out" "${args##* } needs a value"
done
# ... and one given another option for its value: `run --trace --dry-run` ran for real, tracing
# into a file named --dry-run; `init --wiki --quiet` made a wiki named --quiet
mkdir -p "$tmp/cwd"
for args in "run --stage link --trace --dry-run" "init --wiki --quiet" "ingest --store --format $tmp" "forget --source --dry-run" \
            "search x --limit --json" "run --store --dry-run"; do
    out=$(cd "$tmp/cwd" && DREAM_HOME="$tmp/home2" eval "\"$dream\" $args" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream $args: exit $rc (want 2): $out"
    opt=$(printf '%s\n' $args | awk 'prev ~ /^--/ && $0 ~ /^--/ {print prev; exit} {prev=$0}')
    has "$out" "$opt needs a value"
    [ -z "$(ls -A "$tmp/cwd")" ] || fail "dream $args wrote $(ls -A "$tmp/cwd")"
    [ -e "$tmp/home2" ] && fail "dream $args made $tmp/home2"
done
# what is printed must reach stdout: a full disk said nothing and exited 0
if [ -w /dev/full ]; then
    for args in "--help" "status" "list --help"; do
        out=$(DREAM_HOME="$tmp/home" eval "\"$dream\" $args" 2>&1 >/dev/full); rc=$?
        [ $rc -eq 1 ] || fail "dream $args >/dev/full: exit $rc (want 1): $out"
        has "$out" "writing to stdout failed"
    done
fi
# --model "" names no file on the verbs that read a model too (it fell back to DREAM_MODEL)
for args in "ask x --model ''" "tokenize --model '' hi" "generate --model '' --prompt hi"; do
    out=$(DREAM_HOME="$tmp/home" eval "\"$dream\" $args" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream $args: exit $rc (want 2): $out"
    has "$out" "--model is empty"
done
# one question limit: the CLI let up to 2,046 bytes through and ask then refused over 2,000
q2000=$(printf 'x%.0s' $(seq 2000))
for q in "${q2000}y" "$q2000 $(printf 'y%.0s' $(seq 99))"; do
    out=$(DREAM_HOME="$tmp/home" "$dream" ask $q --model "$tmp/none.gguf" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "dream ask (${#q} bytes): exit $rc (want 2): $out"
    has "$out" "over 2000 bytes"
done
out=$(DREAM_HOME="$tmp/home" "$dream" ask "$q2000" --model "$tmp/none.gguf" 2>&1)
case $out in *"over 2000 bytes"*) fail "dream ask (2,000 bytes) was refused as too long: $out" ;; esac
# a --store named that is not there is a typo (status said "store: none", ask answered without it)
for args in "status --store '$tmp/no.sqlite'" "search x --store '$tmp/no.sqlite'" "ask x --store '$tmp/no.sqlite'"; do
    out=$(DREAM_HOME="$tmp/home" eval "\"$dream\" $args" 2>&1); rc=$?
    [ $rc -eq 1 ] || fail "dream $args: exit $rc (want 1): $out"
    has "$out" "no store at $tmp/no.sqlite"
done
# a store whose folder the user may not write to (SQLite keeps its -wal and -shm files there) was
# called "not a dream store"; as root, run the reader as nobody (else: skipped, and said so)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    DREAM_HOME="$tmp/ro" "$dream" ingest "$(dirname "$0")/../data/ingest/openai/chats.jsonl" >/dev/null 2>&1 || fail "ingest for the read-only folder"
    chown -R 65534:65534 "$tmp/ro"; chown 0:0 "$tmp/ro"; chmod 755 "$tmp/ro" "$tmp"
    # a copy of the binary nobody may run: the build tree may sit under a folder only root enters
    cp "$dream" "$tmp/dream-nobody"; chmod 755 "$tmp/dream-nobody"
    out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp "$tmp/dream-nobody" search the --conversations --store "$tmp/ro/memory.sqlite" 2>&1)
    case $out in *"not a dream store"*) fail "a store in a read-only folder was called not a dream store: $out" ;; esac
    has "$out" "write access to the file and its folder"
else
    echo "help_cli: skipped the read-only folder check (needs root and setpriv to run as another user)"
fi
# a name over the words' buffer is refused as too long (it was cut, here inside the é, and
# then called invalid UTF-8)
long=$(printf 'a%.0s' $(seq 4094))é
out=$(DREAM_HOME="$tmp/home" "$dream" read "$long" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "dream read (4,096-byte name): exit $rc (want 2): $out"
has "$out" "the name is over 4095 bytes"
# mcp serves with a --store that is not there (a client may be set up before the first ingest),
# and says so on stderr once, where it said nothing at all
out=$(DREAM_HOME="$tmp/home" "$dream" mcp --store "$tmp/no.sqlite" </dev/null 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || fail "dream mcp --store MISSING: exit $rc (want 0): $out"
has "$out" "no store at $tmp/no.sqlite yet"
# a search of the conversations reads the store alone: it asked for a wiki before dream init
DREAM_HOME="$tmp/convs" "$dream" ingest "$(dirname "$0")/../data/ingest/openai/chats.jsonl" >/dev/null 2>&1 || fail "ingest for search --conversations"
out=$(DREAM_HOME="$tmp/convs" "$dream" search the --conversations 2>&1) || fail "search --conversations with no wiki yet: $out"
has "$out" "message hit(s)"
# an article saved in another encoding: check names it, and a read verb's index update keeps the
# store UTF-8 (search wrote the byte into the store, and check then failed on the store instead)
DREAM_HOME="$tmp/convs" "$dream" init --quiet || fail "init for the Latin-1 article"
printf '# Bin\n\n**Bin** has a caf\351 byte.\n' > "$tmp/convs/wiki/articles/Bin.md"
DREAM_HOME="$tmp/convs" "$dream" search bin >/dev/null 2>&1 || fail "search over a Latin-1 article"
out=$(DREAM_HOME="$tmp/convs" "$dream" check 2>&1); rc=$?
[ $rc -eq 1 ] || fail "check with a Latin-1 article: exit $rc (want 1): $out"
has "$out" "Bin.md:3: not valid UTF-8 from byte 24 on (0xe9)"
has "$out" "all its text is valid UTF-8"
# --option=value is --option value (every verb refused it as an unknown option)
DREAM_HOME="$tmp/eq" "$dream" ingest --store="$tmp/eq/given.sqlite" "$(dirname "$0")/../data/ingest/openai/chats.jsonl" >/dev/null 2>&1 ||
    fail "ingest --store=PATH"
[ -f "$tmp/eq/given.sqlite" ] || fail "ingest --store=PATH made no store at PATH"
out=$(DREAM_HOME="$tmp/eq" "$dream" list --wiki="$tmp/nowhere" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "list --wiki=DIR: exit $rc (want 1): $out"
has "$out" "no wiki at $tmp/nowhere"
# a dry run writes nothing, not even the store it would read (it made it, and its directory)
out=$(DREAM_HOME="$tmp/dry" "$dream" run --dry-run 2>&1) || fail "run --dry-run with no store yet: $out"
has "$out" "0 conversation(s) would be segmented"
[ -e "$tmp/dry" ] && fail "run --dry-run made $(ls -R "$tmp/dry")"
# after --, a path that starts with '-' is a path (ingest refused -- as an unknown option)
mkdir -p "$tmp/dash" && cp "$(dirname "$0")/../data/ingest/openai/chats.jsonl" "$tmp/dash/-chats.jsonl" || fail "copying -chats.jsonl"
out=$(cd "$tmp/dash" && DREAM_HOME="$tmp/dashhome" "$dream" ingest -- -chats.jsonl 2>&1) || fail "ingest -- -chats.jsonl: $out"
has "$out" "3 new"
# forget takes one --source and one --before (a second took the first's place without a word)
out=$(DREAM_HOME="$tmp/home" "$dream" forget --source chatgpt --source claude --dry-run 2>&1); rc=$?
[ $rc -eq 2 ] || fail "forget --source twice: exit $rc (want 2): $out"
has "$out" "--source is given twice"
# a --wiki dream init never set up is refused before any model work
out=$(DREAM_HOME="$tmp/home" "$dream" run --wiki "$tmp/no wiki" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "run --wiki (not set up): exit $rc: $out"
has "$out" "is not a wiki dream init set up"
[ -e "$tmp/no wiki" ] && fail "run --wiki (not set up) made the directory"
rm -rf "$tmp"
echo "PASS: dream help VERB is VERB --help for every verb; typos get their verb"
