/* cmd_run.c — `dream run`: run the Dreaming's stages over the store (segment, extract, resolve,
 * route, in that order). */
#include "cli.h"

#include "dream/model.h"

#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/paths.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cmd_run_summary[] = "dream: run the pipeline's stages over the stored conversations";

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: dream run [--stage segment|extract|resolve|route|create|fold|reconcile|link|wikify] [--limit N] [--conversation CITE] [--dry-run]\n"
            "                 [--batch N] [--store PATH] [--wiki DIR] [--tie-break] [--engagement N]\n"
            "\n"
            "Runs the Dreaming's stages over the conversations in the store, oldest first. Each\n"
            "stage takes only the work still to do, so a run can be stopped at any moment and run\n"
            "again. Stages built so far: segment (cut conversations into single-topic chunks),\n"
            "extract (the subjects each chunk is about), resolve (fold their names into entities),\n"
            "route (an entity in two or more chunks gets an article; the rest are captured),\n"
            "create (write the article of every routed entity that has none: outline, sections,\n"
            "lead, infobox, each claim footnoted to its conversation and message), fold (each\n"
            "article's new chunks patched into the sections they belong to, or a new section),\n"
            "reconcile (an article's infobox and prose brought to its latest-dated statement; a\n"
            "changed position leaves a ## History line citing both), link (mentions of other\n"
            "articles become [[links]] and ## See also is rebuilt; no model), wikify (each\n"
            "changed article's sections tightened, every citation kept).\n"
            "The writing stages need a wiki set up with `dream init`; each run commits exactly\n"
            "the articles it wrote, with a `memory: ` subject.\n"
            "\n"
            "options:\n"
            "  --stage NAME        run only this stage (default: every stage available)\n"
            "  --limit N           at most N items per stage\n"
            "  --conversation CITE only this conversation (its citation hash, as in conv:CITE)\n"
            "  --dry-run           print what would run; call no model, write nothing\n"
            "  --batch N           conversations (or chunks) per batched model call (default 8)\n"
            "  --store PATH        the store (default: ~/.cache/dream/memory.sqlite, or\n"
            "                      $DREAM_HOME/cache/memory.sqlite)\n"
            "  --wiki DIR          the wiki: articles are written there, its Meta pages inlined, its Meta/Aliases\n"
            "                      seeds resolve (default: the wiki path; the built-in policy when\n"
            "                      it has not been set up)\n"
            "  --tie-break         resolve: when a name's distinctive words point at two or more\n"
            "                      entities, ask the model which one (yes/no each); off by default\n"
            "                      (also DREAM_RESOLVE_TIE_BREAK=1)\n"
            "  --engagement N      route: an entity in one chunk still gets an article when its\n"
            "                      chunks hold N or more of your own messages; 0 = off (default;\n"
            "                      also DREAM_ROUTE_ENGAGEMENT)\n"
            "  --backend URL       send model calls to an OpenAI-compatible server (dream serve,\n"
            "                      llama-server, vLLM) instead of the embedded model (default:\n"
            "                      $DREAM_BACKEND; $DREAM_BACKEND_KEY, $DREAM_BACKEND_MODEL)\n"
            "  -h, --help          this text\n"
            "\n"
            "On a terminal, each stage shows its progress (items done, items per second) on\n"
            "stderr while it runs; every stage ends with one summary line on stdout.\n"
            "\n"
            "Exit status: 0 when the run finished (failed model answers are recorded and counted),\n"
            "1 when the store failed, 2 for a usage error.\n");
}

struct run_opts {
    const char *stage, *store_path, *wiki, *conversation, *backend;
    long limit, batch, engagement;
    bool dry_run, tie_break, engagement_set;
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
        } else if (!strcmp(a, "--tie-break")) {
            o->tie_break = true;
        } else if (!strcmp(a, "--engagement")) {
            if (!cli_parse_int("run", a, val, 0, 1000000L, &o->engagement)) return 2;
            o->engagement_set = true;
            i++;
        } else if (!strcmp(a, "--limit") || !strcmp(a, "--batch")) {
            if (!cli_parse_int("run", a, val, !strcmp(a, "--batch") ? 1 : 0, 1000000000L, !strcmp(a, "--limit") ? &o->limit : &o->batch))
                return 2;
            i++;
        } else if (!strcmp(a, "--stage") || !strcmp(a, "--store") || !strcmp(a, "--wiki") || !strcmp(a, "--conversation") ||
                   !strcmp(a, "--backend")) {
            if (!val) {
                fprintf(stderr, "dream run: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--stage")) o->stage = val;
            else if (!strcmp(a, "--store")) o->store_path = val;
            else if (!strcmp(a, "--wiki")) o->wiki = val;
            else if (!strcmp(a, "--backend")) o->backend = val;
            else o->conversation = val;
            i++;
        } else {
            fprintf(stderr, "dream run: unknown argument '%s'\n", a);
            run_usage(stderr);
            return 2;
        }
    }
    if (o->stage && strcmp(o->stage, "segment") != 0 && strcmp(o->stage, "extract") != 0 && strcmp(o->stage, "resolve") != 0 &&
        strcmp(o->stage, "route") != 0 && strcmp(o->stage, "create") != 0 && strcmp(o->stage, "fold") != 0 && strcmp(o->stage, "reconcile") != 0 &&
        strcmp(o->stage, "link") != 0 && strcmp(o->stage, "wikify") != 0) {
        fprintf(stderr, "dream run: unknown or not yet built stage '%s' (built: segment, extract, resolve, route, create, fold, reconcile, link, wikify)\n",
                o->stage);
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

/* The live progress line: on a terminal only, redrawn in place on stderr at most every 0.1 s. */
struct run_progress {
    bool tty;
    bool drawn;
    double t0, last;
};

static void run_progress_start(struct run_progress *pr)
{
    pr->t0 = run_now_s();
    pr->last = 0;
    pr->drawn = false;
}

static void run_progress_show(void *ud, const char *stage, size_t done, size_t total)
{
    struct run_progress *pr = ud;
    if (!pr->tty) return;
    double now = run_now_s();
    if (done < total && now - pr->last < 0.1) return;
    pr->last = now;
    double dt = now - pr->t0;
    fprintf(stderr, "\r%s: %zu/%zu (%.0f%%), %.2f/s\033[K", stage, done, total, total ? 100.0 * (double)done / (double)total : 100.0,
            dt > 0 ? (double)done / dt : 0.0);
    fflush(stderr);
    pr->drawn = true;
}

/* Clears the live line before the stage's summary. */
static void run_progress_end(struct run_progress *pr)
{
    if (pr->tty && pr->drawn) fputs("\r\033[K", stderr);
    pr->drawn = false;
}

static bool run_wants(const struct run_opts *o, const char *stage)
{
    return !o->stage || strcmp(o->stage, stage) == 0;
}

static int run_segment(dream_store *store, struct dream_segment_params *p, bool dry_run, struct run_progress *pr)
{
    struct dream_segment_result r;
    double t0 = run_now_s();
    run_progress_start(pr);
    p->on_progress = run_progress_show;
    p->progress_ud = pr;
    int rc = dream_segment_run(store, p, &r);
    run_progress_end(pr);
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

static int run_extract(dream_store *store, const struct run_opts *o, int64_t conversation, struct run_progress *pr)
{
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.wiki_dir = o->wiki;
    p.conversation = conversation;
    p.limit = (size_t)o->limit;
    p.batch = (size_t)o->batch;
    p.dry_run = o->dry_run;
    p.on_progress = run_progress_show;
    p.progress_ud = pr;
    struct dream_extract_result r;
    double t0 = run_now_s();
    run_progress_start(pr);
    int rc = dream_extract_run(store, &p, &r);
    run_progress_end(pr);
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

static int run_resolve(dream_store *store, const struct run_opts *o, struct run_progress *pr)
{
    struct dream_resolve_params p;
    dream_resolve_default_params(&p);
    p.wiki_dir = o->wiki;
    p.dry_run = o->dry_run;
    if (o->tie_break) p.tie_break = true;
    p.on_progress = run_progress_show;
    p.progress_ud = pr;
    struct dream_resolve_result r;
    double t0 = run_now_s();
    run_progress_start(pr);
    int rc = dream_resolve_run(store, &p, &r);
    run_progress_end(pr);
    if (rc) return rc;
    double dt = run_now_s() - t0;
    if (o->dry_run) {
        printf("resolve: %zu name(s) would be resolved (dry run: nothing written)\n", r.mentions);
    } else {
        printf("resolve: %zu name(s): %zu joined a known entity (%zu by an alias seed%s), %zu new entit(ies); %.1f s (%.2f names/s)\n",
               r.mentions, r.folded, r.seeded, p.tie_break ? "" : "; tie-break off", r.minted, dt, dt > 0 ? (double)r.mentions / dt : 0.0);
        if (p.tie_break) printf("resolve: tie-break: %zu question(s) asked, %zu name(s) folded by the answer\n", r.asked, r.tie_folds);
    }
    return DREAM_OK;
}

static int run_route(dream_store *store, const struct run_opts *o)
{
    struct dream_route_params p;
    dream_route_default_params(&p);
    p.dry_run = o->dry_run;
    if (o->engagement_set) p.min_user_messages = (int)o->engagement;
    struct dream_route_result r;
    double t0 = run_now_s();
    int rc = dream_route_run(store, &p, &r);
    if (rc) return rc;
    double dt = run_now_s() - t0;
    printf("route: %zu entit(ies): %zu with an article (%zu new", r.entities, r.articles, r.newly);
    if (p.min_user_messages > 0) printf(", %zu by the engagement gate of %d message(s)", r.engaged, p.min_user_messages);
    printf("), %zu captured%s; %.1f s (%.2f entities/s)\n", r.captured, o->dry_run ? " (dry run: nothing written)" : "", dt,
           dt > 0 ? (double)r.entities / dt : 0.0);
    return DREAM_OK;
}

/* create and fold: the writing stages, on the wiki (which must be set up). */
static int run_synth(dream_store *store, const struct run_opts *o, const char *stage, struct run_progress *pr)
{
    if (!o->wiki) {
        printf("%s: skipped: no wiki set up (run `dream init`, or give --wiki DIR)\n", stage);
        return DREAM_OK;
    }
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = o->wiki;
    p.limit = (size_t)o->limit;
    p.batch = (size_t)o->batch;
    p.dry_run = o->dry_run;
    p.on_progress = run_progress_show;
    p.progress_ud = pr;
    struct dream_synth_result r;
    double t0 = run_now_s();
    run_progress_start(pr);
    bool create = strcmp(stage, "create") == 0, reconcile = strcmp(stage, "reconcile") == 0, link = strcmp(stage, "link") == 0,
         wikify = strcmp(stage, "wikify") == 0;
    int rc = create ? dream_synth_create(store, &p, &r)
             : reconcile ? dream_synth_reconcile(store, &p, &r)
             : link ? dream_synth_link(store, &p, &r)
             : wikify ? dream_synth_wikify(store, &p, &r)
                    : dream_synth_fold(store, &p, &r);
    run_progress_end(pr);
    if (rc) return rc;
    double dt = run_now_s() - t0;
    if (wikify && o->dry_run) {
        printf("wikify: %zu changed article(s) would be tightened (dry run: nothing called or written)\n", r.eligible);
    } else if (wikify) {
        printf("wikify: %zu changed article(s): %zu tightened, %zu answer(s) refused; %zu file(s) committed; %.1f s\n", r.eligible,
               r.wikified, r.rejected, r.committed, dt);
    } else if (link && o->dry_run) {
        printf("link: %zu article(s) would be scanned for mentions (dry run: nothing written)\n", r.eligible);
    } else if (link) {
        printf("link: %zu article(s): %zu changed (links, See also); %zu file(s) committed; %.1f s\n", r.eligible, r.linked, r.committed, dt);
    } else if (reconcile && o->dry_run) {
        printf("reconcile: %zu article(s) would be reconciled (dry run: nothing called or written)\n", r.eligible);
    } else if (reconcile) {
        printf("reconcile: %zu article(s): %zu changed, %zu history line(s), %zu answer(s) refused; %zu file(s) committed; %.1f s\n",
               r.eligible, r.reconciled, r.history, r.rejected, r.committed, dt);
    } else if (o->dry_run && create) {
        printf("create: %zu article(s) would be written (dry run: nothing called or written)\n", r.eligible);
    } else if (o->dry_run) {
        printf("fold: %zu new chunk(s) would be routed into their articles (dry run: nothing called or written)\n", r.eligible);
    } else if (create) {
        printf("create: %zu entit(ies): %zu article(s) written, %zu stub(s), %zu failed attempt(s), %zu answer(s) refused; "
               "%zu file(s) committed; %.1f s (%.2f articles/s)\n",
               r.eligible, r.created, r.stubs, r.failed, r.rejected, r.committed, dt, dt > 0 ? (double)(r.created + r.stubs) / dt : 0.0);
    } else {
        printf("fold: %zu chunk(s): %zu section(s) patched, %zu new section(s), %zu lead(s) rewritten, %zu went nowhere, "
               "%zu answer(s) refused; %zu file(s) committed; %.1f s (%.2f chunks/s)\n",
               r.eligible, r.patched, r.new_sections, r.lead_patches, r.unrouted, r.rejected, r.committed, dt,
               dt > 0 ? (double)r.eligible / dt : 0.0);
    }
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
    if (!o.dry_run && (o.backend || (getenv("DREAM_BACKEND") && *getenv("DREAM_BACKEND")))) {
        struct dream_remote_params rp;
        dream_remote_default_params(&rp);
        if (o.backend) rp.url = o.backend;
        if ((rc = dream_seam_use_remote(&rp))) goto fail;
    }
    struct run_progress pr = {.tty = isatty(STDERR_FILENO) == 1};
    if (run_wants(&o, "segment")) rc = run_segment(store, &p, o.dry_run, &pr);
    if (!rc && run_wants(&o, "extract")) rc = run_extract(store, &o, p.conversation, &pr);
    if (!rc && run_wants(&o, "resolve")) rc = run_resolve(store, &o, &pr);
    if (!rc && run_wants(&o, "route")) rc = run_route(store, &o);
    if (!rc && run_wants(&o, "create")) rc = run_synth(store, &o, "create", &pr);
    if (!rc && run_wants(&o, "fold")) rc = run_synth(store, &o, "fold", &pr);
    if (!rc && run_wants(&o, "reconcile")) rc = run_synth(store, &o, "reconcile", &pr);
    if (!rc && run_wants(&o, "link")) rc = run_synth(store, &o, "link", &pr);
    if (!rc && run_wants(&o, "wikify")) rc = run_synth(store, &o, "wikify", &pr);
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
