/* cmd_status.c — `dream status`: what the memory holds, when it last changed, the schedule (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_status_summary[] = "what the memory holds, when it last changed, the schedule";

static const struct cli_read_verb cmd_status_verb = {
    "status", "status", "[options]",
    "Shows what the memory holds: articles, the store's conversations, chunks and entities, how\n"
    "far the segment and extract stages are through them, the last `memory:` commit, and the\n"
    "nightly schedule. Before the wiki exists it shows the store and how to create the wiki.",
    0, CLI_READ_NO_WIKI_OK,
};

int cmd_status(int argc, char **argv)
{
    return cli_read_main(&cmd_status_verb, argc, argv);
}
