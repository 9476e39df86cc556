/* cmd_mcp.c — `dream mcp`: the read tools for agents over the Model Context Protocol on stdio
 * (dream/mcp.h). stdout carries only protocol messages; anything else goes to stderr. */
#include "cli.h"

#include "dream/mcp.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_mcp_summary[] = "serve the read tools to agents over MCP (stdio)";

static void usage(FILE *f)
{
    fprintf(f, "usage: dream mcp [--wiki DIR] [--store PATH]\n\n"
               "Speaks the Model Context Protocol (JSON-RPC 2.0, one message a line) on stdin and stdout,\n"
               "for agents: tools resolve, read, section, links, infobox, list, category, search and\n"
               "status, the read tools of `dream <verb> --json`. Ends when stdin closes. Set it up with\n"
               "  claude mcp add dream -- dream mcp\n"
               "`dream serve` serves the same over HTTP at POST /mcp.\n\n"
               "  --wiki DIR    the wiki (default: $DREAM_WIKI, $DREAM_HOME/wiki, ~/.local/share/dream/wiki)\n"
               "  --store PATH  the store, for captured subjects and counts (default: the data directory's memory.sqlite)\n"
               "  -h, --help    this text\n");
}

int cmd_mcp(int argc, char **argv)
{
    struct dream_mcp_params p;
    dream_mcp_default_params(&p);
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(argv[i], "--wiki") || !strcmp(argv[i], "--store")) && cli_option_value(argc, argv, i)) {
            if (argv[i][2] == 'w') p.wiki = argv[++i];
            else p.store = argv[++i];
        } else {
            fprintf(stderr, "dream mcp: %s '%s'\n", argv[i][0] == '-' && !cli_option_value(argc, argv, i) ? "missing value or unknown option" : "unknown argument", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    /* an agent's client starts the server and shows its stderr at most in a log: a --store that is
     * not there is said once here (it is no error: the client may be set up before the first
     * ingest), and each tool that needs it says so */
    struct stat st;
    if (p.store && p.store[0] && stat(p.store, &st) != 0)
        fprintf(stderr, "dream mcp: note: no store at %s yet (a typo?): the conversations tool and the counts answer without one "
                        "until `dream ingest --store %s` makes it\n", p.store, p.store);
    dream_mcp *m = dream_mcp_new(&p);
    if (!m) {
        fprintf(stderr, "dream mcp: out of memory\n");
        return 1;
    }
    int rc = dream_mcp_stdio(m, stdin, stdout);
    dream_mcp_free(m);
    return rc ? cli_fail("mcp", rc) : 0;
}
