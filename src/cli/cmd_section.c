/* cmd_section.c — `dream section`: one section of an article, with the footnotes it cites (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_section_summary[] = "one section of an article, with the footnotes it cites";

static const struct cli_read_verb cmd_section_verb = {
    "section", "section", "ARTICLE ANCHOR [options]",
    "Prints one section of an article (with its subsections) and the footnote definitions it\n"
    "cites. ANCHOR is the heading's anchor (as `dream read` lists them) or its title.",
    2, 0,
};

int cmd_section(int argc, char **argv)
{
    return cli_read_main(&cmd_section_verb, argc, argv);
}
