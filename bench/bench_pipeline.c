/* bench_pipeline.c — the whole pipeline's throughput, ingest to wikify, in replay mode or on a
 * model's own answers.
 *
 * In a fresh DREAM_HOME it sets up the wiki, loads the model (not timed), and for each EXPORT
 * given (a night: a file or directory of exports) ingests it and runs every stage of the
 * pipeline (dream_pipeline_run, as `dream run`), as a person's nightly job would.
 * With --replay URL the seam is in replay mode (dream_seam_config.replay_url): every stage
 * call's real prompt is prefilled on the model and the answer the replay server
 * (train/oracle.py) gives for it is decoded token by token as forced tokens, batched as the
 * pipeline batches. So the stages write real articles and the model does the work a real model
 * of its shape would do. Without --replay the model answers for itself (greedy, under the
 * answer grammars, as `dream run`): the figures of a model that reads, such as dream-mini.
 * bench/pipeline.sh makes the corpus and runs the oracle.
 *
 * Prints one line per figure (key=value; times in seconds):
 *   PIPELINE-BENCH conversations=N            conversations ingested
 *   PIPELINE-BENCH conv_per_hour=X            N over ingest + pipeline, the replay server's time left out
 *   PIPELINE-BENCH conv_per_hour_wall=X       the same with that time in
 *   PIPELINE-BENCH model_busy_share=P         model time / (ingest + pipeline - replay)
 *   PIPELINE-STAGE stage=S seconds=X share=P model=X replay=X other=X calls=C inputs=I single_calls=K single=X
 *                                             per stage over all nights (ingest included); other = the
 *                                             stage's time outside the seam (SQLite, git, parsing, the
 *                                             gate); single = the time in calls of one input
 *   PIPELINE-BENCH ..._tokens=N               prompt, prefilled, saved (prefix cache), generated
 *   PIPELINE-BENCH peak_rss_mib=X             the process's peak resident memory
 *   PIPELINE-BENCH articles=N                 articles in the wiki after the run
 *
 * usage: bench_pipeline --model PATH [--replay URL] --home DIR [--threads T] [--width W] [--batch B] EXPORT... (one per night) */
#include "dream/error.h"
#include "dream/ingest.h"
#include "dream/model.h"
#include "dream/paths.h"
#include "dream/pipeline.h"
#include "dream/store.h"
#include "dream/vault.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_STAGES 16

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, int rc)
{
    fprintf(stderr, "bench_pipeline: %s: %s\n", what, rc ? dream_error_last() : "failed");
    exit(1);
}

/* One stage's account: its report's seconds and what the seam did while it ran. */
struct stage_row {
    char name[32];
    double seconds;
    struct dream_seam_stats seam; /* the difference over the stage */
};

struct run {
    struct stage_row rows[MAX_STAGES];
    int n;
    struct dream_seam_stats at_start;
};

/* a + sign * b, field by field */
static struct dream_seam_stats seam_add(struct dream_seam_stats a, struct dream_seam_stats b, int sign)
{
    return (struct dream_seam_stats){
        .calls = a.calls + sign * b.calls,
        .inputs = a.inputs + sign * b.inputs,
        .single_calls = a.single_calls + sign * b.single_calls,
        .call_ms = a.call_ms + sign * b.call_ms,
        .single_ms = a.single_ms + sign * b.single_ms,
        .replay_ms = a.replay_ms + sign * b.replay_ms,
        .prompt_tokens = a.prompt_tokens + sign * b.prompt_tokens,
        .prefill_tokens = a.prefill_tokens + sign * b.prefill_tokens,
        .saved_tokens = a.saved_tokens + sign * b.saved_tokens,
        .generated = a.generated + sign * b.generated,
    };
}

static void on_start(void *ud, const char *stage)
{
    (void)stage;
    struct run *r = ud;
    r->at_start = dream_seam_stats();
}

/* The row of stage name (added when new; NULL when the table is full). */
static struct stage_row *stage_row(struct run *r, const char *name)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->rows[i].name, name)) return &r->rows[i];
    if (r->n == MAX_STAGES) return NULL;
    struct stage_row *row = &r->rows[r->n++];
    snprintf(row->name, sizeof row->name, "%s", name);
    return row;
}

static void on_stage(void *ud, const struct dream_stage_report *rep)
{
    struct run *r = ud;
    printf("%s\n", rep->summary);
    struct stage_row *row = stage_row(r, rep->stage);
    if (!row) return;
    row->seconds += rep->seconds;
    row->seam = seam_add(row->seam, seam_add(dream_seam_stats(), r->at_start, -1), 1);
}

/* Markdown files under dir, not counting .git, Meta/ and Sources/ (the wiki's articles). */
static long count_articles(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || (depth == 0 && (!strcmp(e->d_name, "Meta") || !strcmp(e->d_name, "Sources")))) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        size_t len = strlen(e->d_name);
        if (S_ISDIR(st.st_mode)) n += count_articles(path, depth + 1);
        else if (len > 3 && !strcmp(e->d_name + len - 3, ".md")) n++;
    }
    closedir(d);
    return n;
}

static int parse_int(const char *flag, const char *v, int lo, int hi)
{
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x < lo || x > hi) {
        fprintf(stderr, "bench_pipeline: %s '%s' is not an integer in %d..%d\n", flag, v ? v : "", lo, hi);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *replay = NULL, *home = NULL;
    int threads = 0, width = 0, batch = 8;
    const char *exports[64];
    int n_exports = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--model") && v) model = argv[++i];
        else if (!strcmp(a, "--replay") && v) replay = argv[++i];
        else if (!strcmp(a, "--home") && v) home = argv[++i];
        else if (!strcmp(a, "--threads")) threads = parse_int(a, v, 1, 1024), i++;
        else if (!strcmp(a, "--width")) width = parse_int(a, v, 1, 128), i++;
        else if (!strcmp(a, "--batch")) batch = parse_int(a, v, 1, 1000000), i++;
        else if (a[0] != '-' && n_exports < 64) exports[n_exports++] = a;
        else {
            fprintf(stderr, "bench_pipeline: unknown argument '%s'\n"
                            "usage: bench_pipeline --model PATH [--replay URL] --home DIR [--threads T] [--width W] [--batch B] EXPORT...\n", a);
            return 2;
        }
    }
    if (!model || !home || !n_exports) {
        fprintf(stderr, "usage: bench_pipeline --model PATH [--replay URL] --home DIR [--threads T] [--width W] [--batch B] EXPORT...\n");
        return 2;
    }
    if (mkdir(home, 0700) && errno != EEXIST) {
        fprintf(stderr, "bench_pipeline: cannot create --home '%s': %s\n", home, strerror(errno));
        return 1;
    }
    DIR *hd = opendir(home);
    int entries = 0;
    for (struct dirent *e; hd && (e = readdir(hd));) entries += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (hd) closedir(hd);
    if (entries) {
        fprintf(stderr, "bench_pipeline: --home '%s' is not empty; give a fresh directory (the run writes a store and a wiki there)\n", home);
        return 2;
    }
    setenv("DREAM_HOME", home, 1);
    unsetenv("DREAM_WIKI");

    char *wiki = NULL, *store_path = NULL;
    int rc = dream_paths_wiki_dir(&wiki);
    if (!rc) rc = dream_paths_store(&store_path);
    if (rc) die("paths", rc);
    struct dream_vault_init_result vr;
    if ((rc = dream_vault_init(wiki, &vr, NULL, NULL))) die("setting up the wiki", rc);

    struct dream_seam_config cfg;
    dream_seam_default_config(&cfg);
    cfg.model_path = model;
    cfg.replay_url = replay; /* NULL: the model's own answers */
    if (threads) cfg.n_threads = threads;
    if (width) cfg.width = width;
    if ((rc = dream_seam_configure(&cfg))) die("the seam", rc);
    double t0 = now_s();
    if ((rc = dream_seam_load(NULL, NULL))) die("loading the model", rc);
    printf("PIPELINE-BENCH mode=%s\n", replay ? "replay" : "answers");
    printf("PIPELINE-BENCH model_load_s=%.2f\n", now_s() - t0);

    /* each night: ingest its exports, then the whole pipeline */
    struct run run = {0};
    struct stage_row *ingest = stage_row(&run, "ingest");
    struct dream_pipeline_params pp;
    dream_pipeline_default_params(&pp);
    pp.store_path = store_path;
    pp.wiki_dir = wiki;
    pp.batch = (size_t)batch;
    pp.on_start = on_start;
    pp.on_stage = on_stage;
    pp.stage_ud = &run;
    struct dream_ingest_stats is = {0};
    double t_ingest = 0, t_run = 0;
    struct dream_seam_stats s0 = dream_seam_stats();
    for (int night = 0; night < n_exports; night++) {
        double t = now_s();
        dream_store *store = NULL;
        if ((rc = dream_store_open(store_path, &store))) die("opening the store", rc);
        struct dream_ingest_params ip = dream_ingest_default_params();
        size_t before = is.added;
        if ((rc = dream_ingest_path(store, exports[night], &ip, &is))) die(exports[night], rc);
        dream_store_close(store);
        t = now_s() - t;
        t_ingest += t;
        ingest->seconds += t;
        printf("== night %d: %zu conversation(s) added from %s (%.2f s)\n", night + 1, is.added - before, exports[night], t);
        t = now_s();
        if ((rc = dream_pipeline_run(&pp))) die("the pipeline", rc);
        t_run += now_s() - t;
    }
    if (!is.added) die("the exports hold no conversation", 0);
    struct dream_seam_stats tot = seam_add(dream_seam_stats(), s0, -1);

    double wall = t_ingest + t_run, replay_s = tot.replay_ms / 1e3, model_s = (tot.call_ms - tot.replay_ms) / 1e3;
    printf("PIPELINE-BENCH conversations=%zu\n", is.added);
    printf("PIPELINE-BENCH nights=%d\n", n_exports);
    printf("PIPELINE-BENCH wall_s=%.2f\n", wall);
    printf("PIPELINE-BENCH replay_server_s=%.2f\n", replay_s);
    printf("PIPELINE-BENCH conv_per_hour=%.1f\n", (double)is.added * 3600.0 / (wall - replay_s));
    printf("PIPELINE-BENCH conv_per_hour_wall=%.1f\n", (double)is.added * 3600.0 / wall);
    printf("PIPELINE-BENCH model_busy_s=%.2f\n", model_s);
    printf("PIPELINE-BENCH other_s=%.2f\n", wall - replay_s - model_s);
    printf("PIPELINE-BENCH model_busy_share=%.1f%%\n", 100.0 * model_s / (wall - replay_s));
    for (int i = 0; i < run.n; i++) {
        const struct stage_row *r = &run.rows[i];
        double m = (r->seam.call_ms - r->seam.replay_ms) / 1e3, rp = r->seam.replay_ms / 1e3;
        printf("PIPELINE-STAGE stage=%s seconds=%.2f share=%.1f%% model=%.2f replay=%.2f other=%.2f calls=%ld inputs=%ld single_calls=%ld "
               "single=%.2f\n",
               r->name, r->seconds, 100.0 * (r->seconds - rp) / (wall - replay_s), m, rp, r->seconds - m - rp, r->seam.calls, r->seam.inputs,
               r->seam.single_calls, r->seam.single_ms / 1e3);
    }
    printf("PIPELINE-BENCH prompt_tokens=%ld\n", tot.prompt_tokens);
    printf("PIPELINE-BENCH prefilled_tokens=%ld\n", tot.prefill_tokens);
    printf("PIPELINE-BENCH saved_tokens=%ld\n", tot.saved_tokens);
    printf("PIPELINE-BENCH generated_tokens=%ld\n", tot.generated);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("PIPELINE-BENCH peak_rss_mib=%.1f\n", (double)ru.ru_maxrss / 1024.0);
    printf("PIPELINE-BENCH articles=%ld\n", count_articles(wiki, 0));
    dream_seam_shutdown();
    free(wiki);
    free(store_path);
    return 0;
}
