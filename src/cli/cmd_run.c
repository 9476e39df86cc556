/* cmd_run.c — `dream run`: the Dreaming's stages over the store, in order (dream/pipeline.h does
 * the run; this file parses the options and draws the progress). */
#include "cli.h"
#include "run_progress.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "dream/pipeline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_run_summary[] = "dream: run the pipeline's stages over the stored conversations";

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: dream run [--stage segment|extract|resolve|route|create|fold|reconcile|link|wikify|sources] [--limit N] [--conversation CITE] [--dry-run]\n"
            "                 [--batch N] [--store PATH] [--wiki DIR] [--tie-break] [--engagement N] [--retry]\n"
            "                 [--model PATH | --backend URL] [--replay URL] [--trace FILE]\n"
            "\n"
            "Runs the Dreaming's stages over the conversations in the store, oldest first. Each\n"
            "stage takes only the work still to do, so a run can be stopped at any moment and run\n"
            "again. Stages built so far: segment (cut conversations into single-topic chunks),\n"
            "extract (the subjects each chunk is about), resolve (fold their names into entities;\n"
            "a known name the person writes in another chunk names that chunk's subject too),\n"
            "route (an entity in two or more chunks gets an article; the rest are captured),\n"
            "create (write the article of every routed entity that has none: outline, sections,\n"
            "lead, infobox, each claim footnoted to its conversation and message), fold (each\n"
            "article's new chunks patched into the sections they belong to, or a new section),\n"
            "reconcile (an article's infobox and prose brought to its latest-dated statement; a\n"
            "changed position leaves a ## History line citing both), link (mentions of other\n"
            "articles become [[links]] and ## See also is rebuilt; no model), wikify (each\n"
            "changed article's sections tightened, every citation kept), sources (a transcript\n"
            "note under Sources/ for every cited conversation, each footnote linked to its message;\n"
            "no model).\n"
            "The writing stages need a wiki set up with `dream init`; each run commits exactly\n"
            "the articles it wrote, with a `memory: ` subject. A wiki of the older format (a\n"
            "categories line, infobox aliases, unlinked footnotes) is migrated first, once, in its\n"
            "own `memory: migrate` commit.\n"
            "\n"
            "options:\n"
            "  --stage NAME        run only this stage (default: every stage available)\n"
            "  --limit N           at most N items per stage\n"
            "  --conversation CITE only this conversation (its citation hash, as in conv:CITE)\n"
            "  --dry-run           print what would run; call no model, write nothing\n"
            "  --retry             first give every item a stage gave up on (three failed attempts;\n"
            "                      `dream status` counts them) a fresh set of attempts: after the\n"
            "                      cause is fixed (a larger DREAM_CTX, another model)\n"
            "  --batch N           conversations (or chunks) per batched model call (default 8)\n"
            "  --store PATH        the store (default: ~/.local/share/dream/memory.sqlite,\n"
            "                      $XDG_DATA_HOME/dream/memory.sqlite, or $DREAM_HOME/memory.sqlite)\n"
            "  --wiki DIR          the wiki: articles are written there, its Meta pages inlined, its Meta/Aliases\n"
            "                      seeds resolve (default: the wiki path; the built-in policy when\n"
            "                      it has not been set up)\n"
            "  --tie-break         resolve: when a name's distinctive words point at two or more\n"
            "                      entities, ask the model which one (yes/no each); off by default\n"
            "                      (also DREAM_RESOLVE_TIE_BREAK=1)\n"
            "  --engagement N      route: an entity in one chunk still gets an article when its\n"
            "                      chunks hold N or more of your own messages; 0 = off (default;\n"
            "                      also DREAM_ROUTE_ENGAGEMENT)\n"
            "  --model PATH        " CLI_MODEL_HELP "\n"
            "  --backend URL       send model calls to an OpenAI-compatible server (dream serve,\n"
            "                      llama-server, vLLM) instead of the embedded model (default:\n"
            "                      $DREAM_BACKEND, unless --model is given; $DREAM_BACKEND_KEY,\n"
            "                      $DREAM_BACKEND_MODEL)\n"
            "  --replay URL        benchmarks: the embedded model prefills every call's real prompt and\n"
            "                      decodes, as forced tokens, the answer this OpenAI-compatible server\n"
            "                      gives (train/oracle.py): a real model's work, scripted answers\n"
            "                      (also DREAM_REPLAY; not with --backend)\n"
            "  --trace FILE        append every model call (stage, system, user, answer) to FILE, one\n"
            "                      JSON object a line, to read what the model answered (also\n"
            "                      DREAM_TRACE)\n"
            "  -h, --help          this text\n"
            "\n"
            "While it runs, stderr says when the model loads and how long that took, and shows each\n"
            "stage's progress: items done, items per second, the model calls of the batch in flight\n"
            "as each one finishes, and the time left (ETA). On a terminal that is one line redrawn\n"
            "in place; elsewhere (a pipe, a log) a plain line at most every 10 s\n"
            "($DREAM_PROGRESS_EVERY seconds; 0: none). Every stage ends with one summary line on\n"
            "stdout.\n"
            "\n"
            "One run at a time works on a store: a run takes the lock <store>.lock (a dry run does\n"
            "not) and a second run, here or in `dream serve`, stops at once and names the holder.\n"
            "\n"
            "Exit status: 0 when the run finished (failed model answers are recorded and counted),\n"
            "1 when the store failed, another run holds the lock or the --model file is missing,\n"
            "2 for a usage error.\n");
}

struct run_opts {
    const char *stage, *store_path, *wiki, *conversation, *model, *backend, *replay, *trace;
    long limit, batch, engagement;
    bool dry_run, tie_break, engagement_set, retry;
};

/* Parses argv into o; returns -1 after printing help, 2 on a usage error, else 0. */
static int run_parse(int argc, char **argv, struct run_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = cli_option_value(argc, argv, i);
        if (cli_wants_help(a)) {
            run_usage(stdout);
            return -1;
        } else if (!strcmp(a, "--dry-run")) {
            o->dry_run = true;
        } else if (!strcmp(a, "--tie-break")) {
            o->tie_break = true;
        } else if (!strcmp(a, "--retry")) {
            o->retry = true;
        } else if (!strcmp(a, "--engagement")) {
            if (!cli_parse_int("run", a, val, 0, 1000000L, &o->engagement)) return 2;
            o->engagement_set = true;
            i++;
        } else if (!strcmp(a, "--limit") || !strcmp(a, "--batch")) {
            if (!cli_parse_int("run", a, val, !strcmp(a, "--batch") ? 1 : 0, 1000000000L, !strcmp(a, "--limit") ? &o->limit : &o->batch))
                return 2;
            i++;
        } else if (!strcmp(a, "--stage") || !strcmp(a, "--store") || !strcmp(a, "--wiki") || !strcmp(a, "--conversation") ||
                   !strcmp(a, "--model") || !strcmp(a, "--backend") || !strcmp(a, "--replay") || !strcmp(a, "--trace")) {
            if (!val) {
                fprintf(stderr, "dream run: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--stage")) o->stage = val;
            else if (!strcmp(a, "--store")) o->store_path = val;
            else if (!strcmp(a, "--wiki")) o->wiki = val;
            else if (!strcmp(a, "--model")) o->model = val;
            else if (!strcmp(a, "--backend")) o->backend = val;
            else if (!strcmp(a, "--replay")) o->replay = val;
            else if (!strcmp(a, "--trace")) o->trace = val;
            else o->conversation = val;
            i++;
        } else {
            fprintf(stderr, "dream run: unknown argument '%s'\n", a);
            run_usage(stderr);
            return 2;
        }
    }
    if (o->replay && strncmp(o->replay, "http://", 7) && strncmp(o->replay, "https://", 8)) {
        fprintf(stderr, "dream run: --replay URL '%s' must start with http:// or https:// (e.g. http://127.0.0.1:8080)\n", o->replay);
        return 2;
    }
    const char *env_backend = getenv("DREAM_BACKEND");
    if (o->replay && (o->backend || (!o->model && env_backend && *env_backend))) {
        fprintf(stderr, "dream run: --replay drives the embedded model; it does not go with --backend (or DREAM_BACKEND)\n");
        return 2;
    }
    if (o->stage && dream_pipeline_stage_check(o->stage)) {
        fprintf(stderr, "dream run: %s\n", dream_error_last());
        return 2;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts o = {.batch = 8};
    int prc = run_parse(argc, argv, &o);
    if (prc) return prc < 0 ? 0 : prc;

    /* the seam reads DREAM_REPLAY when it is configured, which cli_model_select does next */
    if (o.replay && setenv("DREAM_REPLAY", o.replay, 1)) return cli_fail("run", dream_error_set(DREAM_ENOMEM, "out of memory"));
    if (o.trace && setenv("DREAM_TRACE", o.trace, 1)) return cli_fail("run", dream_error_set(DREAM_ENOMEM, "out of memory"));
    /* a trace file that cannot be written stops the run before any model call (the seam would
     * fail every call, each counted as a failed attempt) */
    const char *trace = getenv("DREAM_TRACE");
    if (!o.dry_run && trace && *trace) {
        FILE *tf = fopen(trace, "a");
        if (!tf) {
            fprintf(stderr, "dream run: cannot append to the trace file %s: %s; name a file in a directory that exists and can be written\n", trace,
                    strerror(errno));
            return 2;
        }
        fclose(tf);
    }
    /* a dry run calls no model: --model and --backend are accepted and not looked at */
    if (!o.dry_run && (prc = cli_model_select("run", o.model, o.backend))) return prc;
    char *store_dflt = NULL;
    int rc;
    if (!o.store_path) {
        if ((rc = dream_paths_store(&store_dflt))) return cli_fail("run", rc);
        o.store_path = store_dflt;
    }
    struct run_progress pr;
    run_progress_init(&pr, (size_t)o.batch);
    struct dream_pipeline_params p;
    dream_pipeline_default_params(&p);
    p.store_path = o.store_path;
    p.wiki_dir = o.wiki;
    p.stage = o.stage;
    p.conversation = o.conversation;
    p.limit = (size_t)o.limit;
    p.batch = (size_t)o.batch;
    p.dry_run = o.dry_run;
    p.tie_break = o.tie_break;
    size_t retried = 0;
    p.retry = o.retry;
    p.retried = &retried;
    if (o.engagement_set) p.engagement = (int)o.engagement;
    p.on_progress = run_progress_items;
    p.progress_ud = &pr;
    p.on_start = run_progress_stage_start;
    p.on_stage = run_progress_stage_done;
    p.stage_ud = &pr;
    if (!o.dry_run) dream_seam_set_watch(run_progress_watch, &pr);
    if (!o.dry_run) cli_on_interrupt("dream run: interrupted; what it finished is kept, and the next dream run goes on from there\n");
    rc = dream_pipeline_run(&p);
    dream_seam_set_watch(NULL, NULL);
    run_progress_end(&pr);
    if (o.retry && !o.dry_run && (!rc || retried))
        printf("retry: %zu item(s) a stage had given up on were given a fresh set of attempts\n", retried);
    free(store_dflt);
    return rc ? cli_fail("run", rc) : 0;
}
