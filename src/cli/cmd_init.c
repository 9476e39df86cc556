/* cmd_init.c — `dream init`: create the wiki (vault) with its policy pages and git repository. */
#include "cli.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "dream/vault.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_init_summary[] = "create the memory wiki (articles, policy pages, git repository)";

static void init_usage(FILE *f)
{
    fprintf(f,
            "usage: dream init [--wiki DIR] [--no-sources | --sources] [--quiet]\n"
            "\n"
            "Creates the wiki the Dreaming writes: articles/, Meta/ (policy pages the pipeline reads;\n"
            "edit them to change its behaviour), Talk/, README.md, .gitignore, and a git repository\n"
            "with an initial commit. The Dreaming adds Sources/: a transcript note of each\n"
            "conversation a footnote cites, so a footnote's link opens the message it names.\n"
            "\n"
            "Running it again is safe: missing files are restored, and a file you changed is kept\n"
            "as it is (it says which).\n"
            "\n"
            "options:\n"
            "  --wiki DIR   where (default: ~/.local/share/dream/wiki, $DREAM_WIKI, or\n"
            "               $DREAM_HOME/wiki)\n"
            "  --no-sources keep no transcripts in the wiki: footnotes cite `conv:HASH#MSG`\n"
            "               without a link (the git setting dream.sources=false of the wiki's\n"
            "               repository; the next run removes notes already written)\n"
            "  --sources    keep them again (dream.sources=true)\n"
            "  --quiet      print nothing but errors\n"
            "  -h, --help   this text\n");
}

struct init_ui {
    bool quiet;
};

static void init_on_file(void *ud, const char *rel, enum dream_vault_file_state st)
{
    struct init_ui *ui = ud;
    if (st == DREAM_VAULT_KEPT) printf("kept %s (you changed it; not overwritten)\n", rel);
    else if (st == DREAM_VAULT_CREATED && !ui->quiet) printf("created %s\n", rel);
}

int cmd_init(int argc, char **argv)
{
    const char *wiki = NULL;
    struct init_ui ui = {false};
    int sources = -1; /* -1: leave the setting as it is */
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            init_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--wiki") == 0 && cli_option_value(argc, argv, i)) {
            wiki = argv[++i];
        } else if (strcmp(argv[i], "--no-sources") == 0 || strcmp(argv[i], "--sources") == 0) {
            sources = strcmp(argv[i], "--sources") == 0;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            ui.quiet = true;
        } else {
            fprintf(stderr, "dream init: unknown argument '%s'\n", argv[i]);
            init_usage(stderr);
            return 2;
        }
    }
    char *dflt = NULL;
    if (!wiki) {
        int rc = dream_paths_wiki_dir(&dflt);
        if (rc) return cli_fail("init", rc);
        wiki = dflt;
    }
    struct dream_vault_init_result res;
    int rc = dream_vault_init(wiki, &res, init_on_file, &ui);
    if (!rc && sources >= 0) rc = dream_vault_set_sources(wiki, sources == 1);
    if (rc) {
        free(dflt);
        return cli_fail("init", rc);
    }
    if (sources >= 0 && !ui.quiet)
        printf("transcript notes (Sources/): %s\n", sources ? "kept; the next run writes them" : "off; the next run removes any written");
    if (!ui.quiet) {
        if (res.created == 0 && !res.repo_created)
            printf("the wiki at %s is already set up (%d file(s) as seeded, %d kept)\n", wiki, res.same, res.kept);
        else
            printf("wiki ready at %s: %d file(s) created, %d kept%s\n", wiki, res.created, res.kept,
                   res.repo_created ? ", git repository created" : "");
    }
    free(dflt);
    return 0;
}
