/* cmd_reindex.c — `dream reindex`: check or rebuild the store's full-text search index. */
#include "cli.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "dream/search.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

const char cmd_reindex_summary[] = "rebuild (or --check) the full-text search index";

static void reindex_usage(FILE *f)
{
    fprintf(f, "usage: dream reindex [--check] [--store PATH] [--wiki DIR]\n"
               "\n"
               "Rebuilds the store's search index whole, from every stored message, captured subject\n"
               "and article of the wiki. Ingest and the stages keep it current; use this when\n"
               "`dream reindex --check` says it is damaged.\n"
               "\n"
               "options:\n"
               "  --check       only check the index (FTS5's integrity check); exit 1 when damaged\n"
               "  --store PATH  the store (default: the data directory's memory.sqlite)\n"
               "  --wiki DIR    the wiki whose articles to index (default: $DREAM_WIKI, ...)\n"
               "  -h, --help    this text\n");
}

int cmd_reindex(int argc, char **argv)
{
    const char *store_arg = NULL, *wiki_arg = NULL;
    bool check = false;
    for (int i = 1; i < argc; i++) {
        if (cli_wants_help(argv[i])) {
            reindex_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--check")) {
            check = true;
        } else if ((!strcmp(argv[i], "--store") || !strcmp(argv[i], "--wiki")) && cli_option_value(argc, argv, i)) {
            if (argv[i][2] == 's') store_arg = argv[++i];
            else wiki_arg = argv[++i];
        } else {
            fprintf(stderr, "dream reindex: unknown argument '%s'\n", argv[i]);
            reindex_usage(stderr);
            return 2;
        }
    }
    char *store_path = NULL, *wiki = NULL;
    int rc = store_arg ? ((store_path = strdup(store_arg)) ? 0 : DREAM_ENOMEM) : dream_paths_store(&store_path);
    if (rc) return cli_fail("reindex", rc);
    struct stat st;
    if (stat(store_path, &st) != 0) {
        fprintf(stderr, "dream reindex: no store at %s: run `dream ingest` first, or point --store at one\n", store_path);
        free(store_path);
        return 1;
    }
    if (wiki_arg) wiki = strdup(wiki_arg);
    else if (dream_paths_wiki_dir(&wiki) != 0) dream_error_clear();
    dream_store *store = NULL;
    rc = dream_store_open(store_path, &store);
    int status = 0;
    if (rc) {
        status = cli_fail("reindex", rc);
    } else if (check) {
        rc = dream_search_check(store);
        if (rc) status = cli_fail("reindex", rc);
        else printf("the search index of %s is sound\n", store_path);
    } else {
        struct dream_search_rebuild_stats s;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        struct stat ws;
        const char *w = wiki && stat(wiki, &ws) == 0 ? wiki : NULL;
        rc = dream_search_rebuild(store, w, &s);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (rc) status = cli_fail("reindex", rc);
        else
            printf("indexed %zu message(s), %zu captured subject(s), %zu article(s)%s: %.1f MB of text in %.2f s\n", s.messages, s.subjects,
                   s.articles, w ? "" : " (no wiki)", (double)s.text_bytes / 1e6, sec);
    }
    dream_store_close(store);
    free(store_path);
    free(wiki);
    return status;
}
