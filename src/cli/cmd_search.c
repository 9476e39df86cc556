/* cmd_search.c — `dream search`: full-text search of the articles and every message (a read tool: dream/read.h). */
#include "cli_read.h"

const char cmd_search_summary[] = "full-text search: articles and sections first, then every message";

static const struct cli_read_verb cmd_search_verb = {
    "search", "search", "WORDS... [--conversations] [--since DAY] [--until DAY] [--limit N] [options]",
    "Searches the store's full-text index (BM25): articles' leads and sections and captured\n"
    "subjects first, then every message of every conversation. Each hit has its citation\n"
    "(conv:HASH#MSG), its date and a snippet with the matches in **bold**. Every word must\n"
    "match; \"a phrase\" in quotes, photo* for a prefix, OR between alternatives, -word to\n"
    "exclude one. Case and accents do not matter. Without a store, the articles' text is\n"
    "scanned instead (ranked by how many of the words each holds).",
    3, CLI_READ_OPT_LIMIT | CLI_READ_OPT_SEARCH,
};

int cmd_search(int argc, char **argv)
{
    return cli_read_main(&cmd_search_verb, argc, argv);
}
