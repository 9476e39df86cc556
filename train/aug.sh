# aug.sh — sourced by train/make_mix.sh and train/make_stage_data.sh: their shared augment step.
# aug SET SEED OUT [augment.py flags]: train/augment.py over the records listed in $A/SET.recs,
# with the truths of $A/SET.truths, into OUT ($ROOT and $A set by the caller).
aug() {
    local set=$1 seed=$2 out=$3
    shift 3
    # shellcheck disable=SC2046
    python3 "$ROOT/train/augment.py" --truths "$A/$set.truths" --seed "$seed" "$@" $(cat "$A/$set.recs") > "$out"
}
