#!/bin/sh
# schedule_cli.sh — `dream schedule` / `dream unschedule` / `dream status` end to end, with a
# temporary HOME and fake `systemctl` and `crontab` that this test puts first on PATH (they log
# their arguments and keep the crontab in a file), so no real timer or crontab is touched.
# argv: DREAM_BINARY WORK_DIR.
set -u
dream=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin" "$work/home" "$work/dh/wiki/articles" "$work/empty" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
log=$work/log cron=$work/crontab units=$work/home/.config/systemd/user
cat > "$work/bin/systemctl" <<FAKE
#!/bin/sh
echo "systemctl \$*" >> '$log'
[ "\$2" = is-enabled ] && [ -f '$work/timer-off' ] && { echo disabled; exit 1; }
[ -f '$work/systemd-broken' ] && { echo "Failed to connect to bus: No medium found" >&2; exit 1; }
exit 0
FAKE
cat > "$work/bin/crontab" <<FAKE
#!/bin/sh
echo "crontab \$*" >> '$log'
[ "\$1" = "-l" ] && [ -f '$work/cron-unreadable' ] && { echo "crontab: cannot open your crontab: Permission denied" >&2; exit 1; }
if [ "\$1" = "-l" ]; then [ -f '$cron' ] && { cat '$cron'; exit 0; }; echo "no crontab for tester" >&2; exit 1; fi
[ "\$1" = "-" ] && cat > '$cron'
FAKE
chmod +x "$work/bin/systemctl" "$work/bin/crontab"
run() { env -u XDG_CONFIG_HOME HOME="$work/home" DREAM_HOME="$work/dh" PATH="$work/bin:/usr/bin:/bin" DREAM_THREADS=3 HF_HOME="$work/hf" \
        DREAM_BACKEND=http://127.0.0.1:9/v1 DREAM_BACKEND_KEY=sekrit "$dream" "$@" 2>&1; }
has() { printf '%s\n' "$1" | grep -qF -- "$2" || fail "missing '$2' in:
$1"; }

# bad times are usage errors
for t in 24:00 12:60 7 ab 12:5 ""; do
    out=$(run schedule --at "$t"); rc=$?
    [ $rc -eq 2 ] || fail "--at '$t': exit $rc (want 2): $out"
    has "$out" "is not a time of day: give HH:MM"
done
out=$(run schedule); [ $? -eq 2 ] || fail "no --at: $out"

# systemd: unit files, daemon-reload, enable --now
out=$(run schedule --at 3:30); rc=$?
[ $rc -eq 0 ] || fail "schedule: exit $rc: $out"
has "$out" "dream schedule: daily at 03:30 by the systemd user timer $units/dream.timer"
has "$(cat "$units/dream.timer")" "OnCalendar=*-*-* 03:30:00"
has "$(cat "$units/dream.timer")" "Persistent=true"
has "$(cat "$units/dream.timer")" "WantedBy=timers.target"
svc=$(cat "$units/dream.service")
has "$svc" "Type=oneshot"
has "$svc" "Environment=\"DREAM_HOME=$work/dh\""
# the model's settings and the backend travel with the job; the backend's key never does
has "$svc" "Environment=\"DREAM_THREADS=3\""
has "$svc" "Environment=\"HF_HOME=$work/hf\""
has "$svc" "Environment=\"DREAM_BACKEND=http://127.0.0.1:9/v1\""
printf '%s\n' "$svc" | grep -q sekrit && fail "the backend key was written into the unit: $svc"
has "$out" "DREAM_BACKEND_KEY is set but not written into the job"
has "$out" "loginctl enable-linger"
has "$out" "Claude Code deletes its session logs after 30 days"
has "$svc" "ExecStart=-$dream ingest --from claude-code --from codex --from pi"
has "$svc" "ExecStart=$dream run"
[ "$(cat "$log")" = "crontab -l
systemctl --user daemon-reload
systemctl --user enable --now dream.timer
crontab -l" ] || fail "systemd calls: $(cat "$log")"
# a reschedule that fails (systemd without a user manager, and no crontab to fall back on) leaves
# the working job as it was (before, its unit files were deleted, and status still named it)
touch "$work/systemd-broken" && mv "$work/bin/crontab" "$work/crontab.away"
again=$(run schedule --at 05:00); rc=$?
[ $rc -ne 0 ] || fail "a reschedule that cannot work: exit 0: $again"
has "$(cat "$units/dream.timer")" "OnCalendar=*-*-* 03:30:00"
[ -f "$units/dream.service" ] || fail "the working job's service unit is gone"
rm "$work/systemd-broken" && mv "$work/crontab.away" "$work/bin/crontab"
: > "$log"
out=$(run status); has "$out" "schedule: daily at 03:30 (systemd)"
printf '%s\n' "$out" | grep -q "not enabled" && fail "status doubts an enabled timer: $out"
printf '%s\n' "$out" | grep -q "another memory" && fail "status doubts its own job: $out"
# one job per user: a schedule or unschedule from another DREAM_HOME leaves this memory's job as it
# is and names the memory it dreams (before, it replaced or removed it without a word)
other() { env -u XDG_CONFIG_HOME HOME="$work/home" DREAM_HOME="$work/dh2" PATH="$work/bin:/usr/bin:/bin" "$dream" "$@" 2>&1; }
out=$(other schedule --at 01:00); rc=$?
[ $rc -eq 1 ] || fail "schedule over another memory's job: exit $rc: $out"
has "$out" "dream schedule: the nightly job dreams another memory (DREAM_HOME=$work/dh), not this one; there is one job per user"
has "$out" "add --force to replace it"
out=$(other unschedule); rc=$?
[ $rc -eq 1 ] || fail "unschedule of another memory's job: exit $rc: $out"
has "$out" "dream unschedule: the nightly job dreams another memory (DREAM_HOME=$work/dh)"
has "$out" "add --force to remove it"
has "$(cat "$units/dream.timer")" "OnCalendar=*-*-* 03:30:00"
has "$(cat "$units/dream.service")" "Environment=\"DREAM_HOME=$work/dh\""
# the default memory is named as such
out=$(env -u XDG_CONFIG_HOME -u DREAM_HOME HOME="$work/home" PATH="$work/bin:/usr/bin:/bin" "$dream" unschedule 2>&1); rc=$?
[ $rc -eq 1 ] || fail "unschedule from the default memory: exit $rc: $out"
has "$out" "dreams another memory (DREAM_HOME=$work/dh)"
# with --force the job is replaced, and status here says so (before, it still named its own
# schedule as the live one)
out=$(other schedule --at 01:00 --force) || fail "schedule --force from another DREAM_HOME: $out"
has "$(cat "$units/dream.service")" "Environment=\"DREAM_HOME=$work/dh2\""
out=$(run status); has "$out" "schedule: daily at 03:30 (systemd); but the job now dreams another memory"
out=$(run unschedule); rc=$?
[ $rc -eq 1 ] || fail "unschedule of dh2's job from dh: exit $rc: $out"
has "$out" "(DREAM_HOME=$work/dh2)"
[ -f "$units/dream.timer" ] || fail "another memory's job was removed without --force"
out=$(run schedule --at 3:30); rc=$?
[ $rc -eq 1 ] || fail "taking the job back without --force: exit $rc: $out"
out=$(run schedule --at 3:30 --force) || fail "taking the job back: $out"
out=$(run status); printf '%s\n' "$out" | grep -q "another memory" && fail "status after taking the job back: $out"
has "$(cat "$log")" "systemctl --user is-enabled dream.timer"
# the timer disabled behind dream's back: status asks systemd, not only its own state file
touch "$work/timer-off"
out=$(run status); has "$out" "schedule: daily at 03:30 (systemd); but the timer is not enabled now"
out=$(run status --json); has "$out" "\"live\":false"
rm "$work/timer-off"
out=$(run status --json); has "$out" "\"schedule\":{\"installed\":true,\"via\":\"systemd\",\"at\":\"03:30\""

# unschedule: disabled, files gone, status says none
: > "$log"
out=$(run unschedule); [ $? -eq 0 ] || fail "unschedule: $out"
has "$out" "dream unschedule: removed (systemd: $units/dream.timer)"
[ ! -e "$units/dream.timer" ] && [ ! -e "$units/dream.service" ] || fail "unit files left behind"
has "$(cat "$log")" "systemctl --user disable --now dream.timer"
out=$(run status); has "$out" "schedule: none (dream schedule --at HH:MM)"
out=$(run unschedule); has "$out" "dream unschedule: nothing was scheduled"

# systemd there but without a user manager: cron instead, the person's own lines kept
touch "$work/systemd-broken"
printf '0 9 * * 1 /usr/bin/backup --weekly\n# dream schedule moved to 04:00 by me\n' > "$cron"
out=$(run schedule --at 23:05); rc=$?
[ $rc -eq 0 ] || fail "cron fallback: exit $rc: $out"
has "$out" "systemd passed over: systemctl --user daemon-reload failed (exit status 1): Failed to connect to bus"
has "$out" "daily at 23:05 by a crontab line"
[ ! -e "$units/dream.service" ] || fail "unit file left after the systemd failure"
has "$(cat "$cron")" "0 9 * * 1 /usr/bin/backup --weekly"
grep -q sekrit "$cron" && fail "the backend key was written into the crontab: $(cat "$cron")"
has "$(cat "$cron")" "5 23 * * * DREAM_HOME='$work/dh' DREAM_THREADS='3' DREAM_BACKEND='http://127.0.0.1:9/v1' HF_HOME='$work/hf' '$dream' ingest --from claude-code --from codex --from pi >>'$work/dh/cache/schedule.log' 2>&1; DREAM_HOME='$work/dh' DREAM_THREADS='3' DREAM_BACKEND='http://127.0.0.1:9/v1' HF_HOME='$work/hf' '$dream' run >>'$work/dh/cache/schedule.log' 2>&1 # dream schedule"
out=$(run status); has "$out" "schedule: daily at 23:05 (cron)"
printf '%s\n' "$out" | grep -q "is gone" && fail "status doubts a crontab line that is there: $out"
mv "$cron" "$cron.kept"
out=$(run status); has "$out" "schedule: daily at 23:05 (cron); but its crontab line is gone"
mv "$cron.kept" "$cron"
# scheduling again replaces the line
out=$(run schedule --at 04:00) || fail "reschedule: $out"
[ "$(grep -c ' # dream schedule$' "$cron")" -eq 1 ] || fail "two dream lines: $(cat "$cron")"
has "$(cat "$cron")" "0 4 * * * "
out=$(run status); has "$out" "schedule: daily at 04:00 (cron)"
# a crontab that cannot be read is not an empty one: neither scheduling nor unscheduling
# rewrites it (it would have become dream's line alone)
touch "$work/cron-unreadable"
before=$(cat "$cron"); : > "$log"
out=$(run schedule --at 05:00); rc=$?
[ $rc -ne 0 ] || fail "schedule over an unreadable crontab: exit 0: $out"
has "$out" "crontab -l failed (exit status 1): crontab: cannot open your crontab: Permission denied: the crontab was not read, so it is left as it is"
out=$(run unschedule); rc=$?
[ $rc -ne 0 ] || fail "unschedule over an unreadable crontab: exit 0: $out"
has "$out" "crontab -l failed (exit status 1)"
[ "$(cat "$cron")" = "$before" ] || fail "an unreadable crontab was rewritten: $(cat "$cron")"
grep -q "crontab -$" "$log" && fail "crontab - ran over an unreadable crontab: $(cat "$log")"
rm "$work/cron-unreadable"
out=$(run status); has "$out" "schedule: daily at 04:00 (cron)"
out=$(run unschedule); has "$out" "dream unschedule: removed (cron: crontab)"
# the person's comment that names the tag is theirs (before, it went with dream's line)
[ "$(cat "$cron")" = "0 9 * * 1 /usr/bin/backup --weekly
# dream schedule moved to 04:00 by me" ] || fail "unschedule touched other lines: $(cat "$cron")"

# a relative path is carried made absolute (the job starts in the home directory, not here);
# a relative XDG_* directory is not carried (dream and systemd ignore one)
out=$(cd "$work" && env -u XDG_CONFIG_HOME HOME="$work/home" DREAM_HOME=./dh DREAM_MODEL=models/m.gguf XDG_DATA_HOME=rel PATH="$work/bin:/usr/bin:/bin" \
      "$dream" schedule --at 01:00 2>&1); rc=$?
[ $rc -eq 0 ] || fail "schedule with relative paths: exit $rc: $out"
has "$(cat "$cron")" "0 1 * * * DREAM_HOME='$work/dh' DREAM_MODEL='$work/models/m.gguf' '$dream' ingest --from claude-code --from codex --from pi >>'$work/dh/cache/schedule.log' 2>&1;"
grep -q "XDG_DATA_HOME" "$cron" && fail "a relative XDG_DATA_HOME was carried: $(cat "$cron")"
out=$(run unschedule); has "$out" "dream unschedule: removed (cron: crontab)"

# neither systemctl nor crontab
out=$(env HOME="$work/home" DREAM_HOME="$work/dh" PATH="$work/empty" "$dream" schedule --at 03:00 2>&1); rc=$?
[ $rc -eq 1 ] || fail "no scheduler: exit $rc: $out"
has "$out" "neither systemctl nor crontab is on PATH"
echo "PASS: dream schedule: systemd timer, cron fallback, unschedule, status"
