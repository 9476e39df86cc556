/*
 * schedule.h — the nightly dream (issue 6): a job that ingests new sessions from the agents'
 * default locations (`dream ingest --from claude-code --from codex --from pi`) and then runs the
 * pipeline (`dream run`) once a day at a set time.
 *
 * Where systemd is there (systemctl on PATH and `systemctl --user daemon-reload` works), the job
 * is a user service and timer, $XDG_CONFIG_HOME/systemd/user/dream.{service,timer} (default
 * ~/.config/systemd/user), enabled with `systemctl --user enable --now dream.timer`; the timer is
 * Persistent, so a night missed while the machine was off runs at the next boot. Otherwise it is
 * one crontab line tagged "# dream schedule" (the person's other lines are kept as they are).
 * The job carries the DREAM_* variables set when it was scheduled (DREAM_HOME, DREAM_WIKI,
 * DREAM_MODEL, ...), so it dreams into the same wiki.
 *
 * What was installed is recorded in <config dir>/schedule (lines via=, at=, file=), which
 * `dream status` shows. Functions return 0 or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_SCHEDULE_H
#define DREAM_SCHEDULE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Parses "HH:MM" (hour 0-23, one or two digits; minute 00-59, two digits). DREAM_EINVAL with a
 * message naming the value otherwise. */
int dream_schedule_parse_time(const char *text, int *hour, int *minute);

struct dream_schedule_result {
    char via[16];    /* "systemd" or "cron" ("" when nothing was there, for remove) */
    char file[4096]; /* the timer file, or "crontab" */
    char note[512];  /* why systemd was passed over, when it was; else "" */
};

/* Installs (or replaces) the daily job at hour:minute that runs the dream binary at dream_path
 * (an absolute path; NULL: this executable). DREAM_ENOTFOUND when neither systemctl nor crontab
 * is available; DREAM_EIO when writing a unit file or running one of them fails. */
int dream_schedule_install(int hour, int minute, const char *dream_path, struct dream_schedule_result *out);

/* Removes the job installed by dream_schedule_install (both kinds are looked for; a missing one
 * is not an error). out->via is "" when there was nothing to remove. */
int dream_schedule_remove(struct dream_schedule_result *out);

/* Asks the scheduler itself whether the job recorded as via ("systemd" or "cron") is in place:
 * `systemctl --user is-enabled dream.timer` succeeds, or the crontab holds dream's line. 1 in
 * place, 0 not, -1 when it cannot tell (the tool is not on PATH or cannot run). */
int dream_schedule_live(const char *via);

/* Whether the job recorded as via dreams this memory: the DREAM_HOME it carries is this
 * process's (or both are the default). There is one job per user, and a schedule made from
 * another DREAM_HOME replaces it while this one's record stays. 1 yes, 0 another memory's, -1
 * when it cannot tell. */
int dream_schedule_ours(const char *via);

/* Whether the job in place (systemd's unit or the crontab line, whichever is there) dreams
 * another memory than this process's DREAM_HOME: 1 with *home its DREAM_HOME (malloc'd; "" for
 * the default memory), 0 when no job is there or it is this memory's, -1 when it cannot tell.
 * `dream schedule` and `dream unschedule` ask before replacing or removing it. */
int dream_schedule_other(char **home);

#ifdef __cplusplus
}
#endif
#endif
