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
echo "PASS: dream help VERB is VERB --help for every verb; typos get their verb"
