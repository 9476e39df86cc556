/* cmd_run.c — `dream run`: run the Dreaming's stages over the store (segment, extract, resolve,
 * route, in that order). */
#include "cli.h"

#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/paths.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "dream/vault.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char cmd_run_summary[] = "dream: run the pipeline's stages over the stored conversations";

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: dream run [--stage segment|extract|resolve|route] [--limit N] [--conversation CITE] [--dry-run]\n"
            "                 [--batch N] [--store PATH] [--wiki DIR]\n"
            "\n"
            "Runs the Dreaming's stages over the conversations in the store, oldest first. Each\n"
            "stage takes only the work still to do, so a run can be stopped at any moment and run\n"
            "again. Stages built so far: segment (cut conversations into single-topic chunks),\n"
            "extract (the subjects each chunk is about), resolve (fold their names into entities),\n"
            "route (an entity in two or more chunks gets an article; the rest are captured).\n"
            "\n"
            "options:\n"
            "  --stage NAME        run only this stage (default: every stage available)\n"
            "  --limit N           at most N items per stage\n"
            "  --conversation CITE only this conversation (its citation hash, as in conv:CITE)\n"
            "  --dry-run           print what would run; call no model, write nothing\n"
            "  --batch N           conversations (or chunks) per batched model call (default 8)\n"
            "  --store PATH        the store (default: ~/.cache/dream/memory.sqlite, or\n"
            "                      $DREAM_HOME/cache/memory.sqlite)\n"
            "  --wiki DIR          the wiki whose Meta pages are inlined (default: the wiki path;\n"
            "                      the built-in policy when it has not been set up)\n"
            "  -h, --help          this text\n"
            "\n"
            "Exit status: 0 when the run finished (failed model answers are recorded and counted),\n"
            "1 when the store failed, 2 for a usage error.\n");
}

struct run_opts {
    const char *stage, *store_path, *wiki, *conversation;
    long limit, batch;
    bool dry_run;
};

/* Parses argv into o; returns -1 after printing help, 2 on a usage error, else 0. */
static int run_parse(int argc, char **argv, struct run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_wants_help(a)) {
            run_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--dry-run")) {
            o->dry_run = true;
        } else if (!strcmp(a, "--limit") || !strcmp(a, "--batch")) {
            if (!cli_parse_int("run", a, val, !strcmp(a, "--batch") ? 1 : 0, 1000000000L, !strcmp(a, "--limit") ? &o->limit : &o->batch))
                return 2;
            i++;
        } else if (!strcmp(a, "--stage") || !strcmp(a, "--store") || !strcmp(a, "--wiki") || !strcmp(a, "--conversation")) {
            if (!val) {
                fprintf(stderr, "dream run: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--stage")) o->stage = val;
            else if (!strcmp(a, "--store")) o->store_path = val;
            else if (!strcmp(a, "--wiki")) o->wiki = val;
            else o->conversation = val;
            i++;
        } else {
            fprintf(stderr, "dream run: unknown argument '%s'\n", a);
            run_usage(stderr);
            return 2;
        }
    }
    if (o->stage && strcmp(o->stage, "segment") != 0 && strcmp(o->stage, "extract") != 0 && strcmp(o->stage, "resolve") != 0 &&
        strcmp(o->stage, "route") != 0) {
        fprintf(stderr, "dream run: unknown or not yet built stage '%s' (built: segment, extract, resolve, route)\n", o->stage);
        return 2;
    }
    return 0;
}

static double run_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool run_wants(const struct run_opts *o, const char *stage)
{
    return !o->stage || strcmp(o->stage, stage) == 0;
}

static int run_segment(dream_store *store, const struct dream_segment_params *p, bool dry_run)
{
    struct dream_segment_result r;
    double t0 = run_now_s();
    int rc = dream_segment_run(store, p, &r);
    if (rc) return rc;
    double dt = run_now_s() - t0;
    if (dry_run) {
        printf("segment: %zu conversation(s) would be segmented (dry run: nothing called or written)\n", r.eligible);
    } else {
        printf("segment: %zu conversation(s): %zu segmented into %zu chunk(s), %zu skipped (nothing to cut), "
               "%zu failed attempt(s), %zu given up; %.1f s (%.2f conversations/s)\n",
               r.eligible, r.segmented, r.chunks, r.skipped, r.failed, r.gave_up, dt, dt > 0 ? (double)r.eligible / dt : 0.0);
    }
    return DREAM_OK;
}

static int run_extract(dream_store *store, const struct run_opts *o, int64_t conversation)
{
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.wiki_dir = o->wiki;
    p.conversation = conversation;
    p.limit = (size_t)o->limit;
    p.batch = (size_t)o->batch;
    p.dry_run = o->dry_run;
    struct dream_extract_result r;
    double t0 = run_now_s();
    int rc = dream_extract_run(store, &p, &r);
    if (rc) return rc;
    double dt = run_now_s() - t0;
    if (o->dry_run) {
        printf("extract: %zu chunk(s) would be extracted (dry run: nothing called or written)\n", r.eligible);
    } else {
        printf("extract: %zu chunk(s): %zu with %zu name(s), %zu with nothing usable, %zu failed attempt(s), %zu given up; "
               "%.1f s (%.2f chunks/s)\n",
               r.eligible, r.extracted, r.mentions, r.empty, r.failed, r.gave_up, dt, dt > 0 ? (double)r.eligible / dt : 0.0);
    }
    return DREAM_OK;
}

static int run_resolve(dream_store *store, bool dry_run)
{
    struct dream_resolve_result r;
    int rc = dream_resolve_run(store, dry_run, &r);
    if (rc) return rc;
    if (dry_run) printf("resolve: %zu name(s) would be resolved (dry run: nothing written)\n", r.mentions);
    else printf("resolve: %zu name(s): %zu joined a known entity, %zu new entit(ies)\n", r.mentions, r.folded, r.minted);
    return DREAM_OK;
}

static int run_route(dream_store *store, bool dry_run)
{
    struct dream_route_result r;
    int rc = dream_route_run(store, dry_run, &r);
    if (rc) return rc;
    printf("route: %zu entit(ies): %zu with an article (%zu new), %zu captured%s\n", r.entities, r.articles, r.newly, r.captured,
           dry_run ? " (dry run: nothing written)" : "");
    return DREAM_OK;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o = {.batch = 8};
    int prc = run_parse(argc, argv, &o);
    if (prc) return prc < 0 ? 0 : prc;

    char *store_dflt = NULL, *wiki_dflt = NULL;
    int rc;
    if (!o.store_path) {
        if ((rc = dream_paths_store(&store_dflt))) return cli_fail("run", rc);
        o.store_path = store_dflt;
    }
    if (!o.wiki && dream_paths_wiki_dir(&wiki_dflt) == 0) {
        /* The default wiki only when it was set up; otherwise the built-in policy pages. */
        char meta[4096];
        snprintf(meta, sizeof meta, "%s/Meta", wiki_dflt);
        FILE *probe = fopen(meta, "r");
        if (probe) {
            fclose(probe);
            o.wiki = wiki_dflt;
        }
    }
    dream_store *store = NULL;
    if ((rc = dream_store_open(o.store_path, &store))) {
        free(store_dflt);
        free(wiki_dflt);
        return cli_fail("run", rc);
    }

    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.wiki_dir = o.wiki;
    p.limit = (size_t)o.limit;
    p.batch = (size_t)o.batch;
    p.dry_run = o.dry_run;
    if (o.conversation) {
        const char *cite = strncmp(o.conversation, "conv:", 5) == 0 ? o.conversation + 5 : o.conversation;
        struct dream_store_conversation *c;
        if ((rc = dream_store_get_by_cite(store, cite, &c))) goto fail;
        p.conversation = c->rowid;
        dream_store_conversation_free(c);
    }

    rc = DREAM_OK;
    if (run_wants(&o, "segment")) rc = run_segment(store, &p, o.dry_run);
    if (!rc && run_wants(&o, "extract")) rc = run_extract(store, &o, p.conversation);
    if (!rc && run_wants(&o, "resolve")) rc = run_resolve(store, o.dry_run);
    if (!rc && run_wants(&o, "route")) rc = run_route(store, o.dry_run);
    if (rc) goto fail;
    dream_store_close(store);
    free(store_dflt);
    free(wiki_dflt);
    return 0;
fail:
    dream_store_close(store);
    free(store_dflt);
    free(wiki_dflt);
    return cli_fail("run", rc);
}
