/* cmd_infobox.c — `dream infobox`: an article's infobox fields (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_infobox_summary[] = "an article's infobox fields";

static const struct cli_read_verb cmd_infobox_verb = {
    "infobox", "infobox", "ARTICLE [options]",
    "Prints an article's infobox as key: value lines: facts to read, not a filter.",
    1, 0,
};

int cmd_infobox(int argc, char **argv)
{
    return cli_read_main(&cmd_infobox_verb, argc, argv);
}
