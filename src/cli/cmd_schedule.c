/* cmd_schedule.c — `dream schedule --at HH:MM`: dream every night (dream/schedule.h). */
#include "cli.h"

#include "dream/error.h"
#include "dream/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_schedule_summary[] = "dream every night at a set time (systemd user timer, else cron)";

static void schedule_usage(FILE *f)
{
    fprintf(f, "usage: dream schedule --at HH:MM\n"
               "\n"
               "Installs a daily job that reads new agent sessions from their default places\n"
               "(dream ingest --from claude-code --from codex --from pi) and then runs the pipeline\n"
               "(dream run). It is a systemd user timer (~/.config/systemd/user/dream.timer, run at\n"
               "the next boot when a night was missed) where systemd is there, else a crontab line\n"
               "(the crontab's other lines are kept). The job keeps the DREAM_* variables set now, so\n"
               "it dreams into the same wiki. Scheduling again replaces it; `dream unschedule`\n"
               "removes it; `dream status` shows it. There is one job per user: a job that dreams\n"
               "another memory (another DREAM_HOME) is replaced only with --force.\n"
               "\n"
               "options:\n"
               "  --at HH:MM   the time of day, 24-hour clock (e.g. 03:30)\n"
               "  --force      replace a job that dreams another memory\n"
               "  -h, --help   this text\n");
}

int cli_schedule_guard(const char *verb, bool force)
{
    char *home = NULL;
    int other = dream_schedule_other(&home);
    if (other == 1 && !force) {
        fprintf(stderr,
                "dream %s: the nightly job dreams another memory (%s%s), not this one; there is one job per user: "
                "run `dream %s` with that DREAM_HOME, or add --force to %s it\n",
                verb, home[0] ? "DREAM_HOME=" : "", home[0] ? home : "the default memory, no DREAM_HOME", verb,
                strcmp(verb, "schedule") == 0 ? "replace" : "remove");
        free(home);
        return 1;
    }
    free(home);
    return 0;
}

int cmd_schedule(int argc, char **argv)
{
    const char *at = NULL;
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            schedule_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--at") == 0 && cli_option_value(argc, argv, i)) {
            at = argv[++i];
        } else if (strcmp(argv[i], "--force") == 0) {
            force = true;
        } else {
            fprintf(stderr, "dream schedule: unknown argument '%s'\n", argv[i]);
            schedule_usage(stderr);
            return 2;
        }
    }
    if (!at) {
        fprintf(stderr, "dream schedule: when? give --at HH:MM\n");
        schedule_usage(stderr);
        return 2;
    }
    int hour, minute;
    if (dream_schedule_parse_time(at, &hour, &minute)) {
        fprintf(stderr, "dream schedule: %s\n", dream_error_last());
        return 2;
    }
    if (cli_schedule_guard("schedule", force)) return 1;
    struct dream_schedule_result res;
    int rc = dream_schedule_install(hour, minute, NULL, &res);
    if (rc) return cli_fail("schedule", rc);
    if (res.note[0]) fprintf(stderr, "dream schedule: %s; using cron\n", res.note);
    if (strcmp(res.via, "systemd") == 0) {
        printf("dream schedule: daily at %02d:%02d by the systemd user timer %s\n", hour, minute, res.file);
        const char *user = getenv("USER");
        printf("  a user timer runs only while you are logged in, unless `loginctl enable-linger %s` lets it run without a session\n",
               user && user[0] ? user : "$USER");
    } else {
        printf("dream schedule: daily at %02d:%02d by a crontab line (crontab -l shows it)\n", hour, minute);
    }
    printf("  Claude Code deletes its session logs after 30 days by default (cleanupPeriodDays in ~/.claude/settings.json):\n"
           "  a nightly ingest reads them in time; raise that setting to keep the originals longer\n");
    const char *key = getenv("DREAM_BACKEND_KEY");
    if (key && key[0])
        fprintf(stderr, "dream schedule: DREAM_BACKEND_KEY is set but not written into the job (a secret does not belong in a unit "
                        "file or a crontab line): give the backend's key to the job some other way, or use a backend without one\n");
    return 0;
}
