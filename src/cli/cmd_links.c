/* cmd_links.c — `dream links`: an article's outbound links (grouped) and inbound links (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_links_summary[] = "an article's outbound links (grouped) and inbound links";

static const struct cli_read_verb cmd_links_verb = {
    "links", "links", "ARTICLE [options]",
    "Prints the articles an article links to, grouped by where the link is (infobox, series,\n"
    "main article, see also, prose), its red links, and the articles that link to it.",
    1, 0,
};

int cmd_links(int argc, char **argv)
{
    return cli_read_main(&cmd_links_verb, argc, argv);
}
