/* cmd_read.c — `dream read`: an article's lead and table of contents (--whole: all of it) (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_read_summary[] = "an article's lead and table of contents (--whole: all of it)";

static const struct cli_read_verb cmd_read_verb = {
    "read", "read", "ARTICLE [--whole] [options]",
    "Prints an article's title, lead and table of contents (the small default: read one\n"
    "section next), or with --whole the whole text when it is at most 8 KB.",
    1, CLI_READ_OPT_WHOLE,
};

int cmd_read(int argc, char **argv)
{
    return cli_read_main(&cmd_read_verb, argc, argv);
}
