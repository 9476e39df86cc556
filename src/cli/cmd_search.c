/* cmd_search.c — `dream search`: search the articles' text (ranked; a last resort) (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_search_summary[] = "search the articles' text (ranked; a last resort)";

static const struct cli_read_verb cmd_search_verb = {
    "search", "search", "WORDS... [--limit N] [options]",
    "Searches the articles' text (last resort: resolve and read come first). Articles are\n"
    "ranked by how many of the words they hold, then words in the name, then occurrences;\n"
    "sample lines show where, with the section anchor.",
    3, CLI_READ_OPT_LIMIT,
};

int cmd_search(int argc, char **argv)
{
    return cli_read_main(&cmd_search_verb, argc, argv);
}
