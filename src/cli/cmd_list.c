/* cmd_list.c — `dream list`: the wiki's articles, or the members of a category, type, kind or series (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_list_summary[] = "the wiki's articles, or the members of a category, type, kind or series";

static const struct cli_read_verb cmd_list_verb = {
    "list", "list", "[--category C | --type T | --kind K | --series S] [options]",
    "Lists the wiki's articles by stem (100 at a time), or the members of a category, type,\n"
    "kind or series with a short lead each.",
    0, CLI_READ_OPT_PAGE | CLI_READ_OPT_MEMBERS,
};

int cmd_list(int argc, char **argv)
{
    return cli_read_main(&cmd_list_verb, argc, argv);
}
