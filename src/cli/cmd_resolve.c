/* cmd_resolve.c — `dream resolve`: find the article for a name or alias (near candidates on a miss) (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_resolve_summary[] = "find the article for a name or alias (near candidates on a miss)";

static const struct cli_read_verb cmd_resolve_verb = {
    "resolve", "resolve", "NAME [options]",
    "Finds the article for a name or alias (stem, title, infobox aliases, and every name the\n"
    "pipeline folded into the subject) and prints its title and lead. On a miss, prints the near\n"
    "candidates, and a subject the pipeline captured without an article (with the conversations\n"
    "it came up in). Exits 1 when nothing matches.",
    1, 0,
};

int cmd_resolve(int argc, char **argv)
{
    return cli_read_main(&cmd_resolve_verb, argc, argv);
}
