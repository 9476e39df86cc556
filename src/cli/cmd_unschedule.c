/* cmd_unschedule.c — `dream unschedule`: remove the nightly job `dream schedule` installed. */
#include "cli.h"

#include "dream/schedule.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char cmd_unschedule_summary[] = "remove the nightly job that `dream schedule` installed";

int cmd_unschedule(int argc, char **argv)
{
    bool force = false;
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            printf("usage: dream unschedule [--force]\n\nRemoves the systemd user timer or crontab line that `dream schedule` installed.\n"
                   "A job that dreams another memory (another DREAM_HOME) is removed only with --force.\n");
            return 0;
        }
        if (strcmp(argv[i], "--force") == 0) {
            force = true;
            continue;
        }
        fprintf(stderr, "dream unschedule: unknown argument '%s'\nusage: dream unschedule [--force]\n", argv[i]);
        return 2;
    }
    if (cli_schedule_guard("unschedule", force)) return 1;
    struct dream_schedule_result res;
    int rc = dream_schedule_remove(&res);
    if (rc) return cli_fail("unschedule", rc);
    if (res.via[0]) printf("dream unschedule: removed (%s: %s)\n", res.via, res.file);
    else printf("dream unschedule: nothing was scheduled\n");
    return 0;
}
