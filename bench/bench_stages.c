/* bench_stages.c — a Dreaming stage's throughput through the seam, serial vs batched, in one run.
 *
 * Builds two identical stores of N chunks (N four-message conversations, one chunk each), then
 * runs the extract stage over each through the real seam on the same model: once with the seam's
 * width from DREAM_MEMORY_BATCH=1 (every call alone), once with DREAM_MEMORY_BATCH=W (calls of a
 * batch decoded together). The stage side is the same in both (B chunks per
 * dream_call_local_batch); only the seam's width differs. The model is loaded and warmed up
 * before each timing. Prints one line:
 *   STAGE-BENCH stage=extract chunks=N max_tokens=M stage_batch=B serial=X/s batched_wW=Y/s ratio=R
 *               names=A/B stored_names_equal=yes|no
 * stored_names_equal compares every name the two runs stored (greedy decoding: batching must not
 * change answers); with a random-weight model most answers hold no clean name, so it says little
 * there. The scheduler's counters (prompt tokens, those served from shared prefixes, tokens
 * generated) go to stderr.
 *
 * With --repeat R the serial and batched runs alternate R times (fresh stores each time), so a
 * change in the machine's load touches both sides alike; the line then gives the median of the
 * R ratios and the medians of the two rates.
 *
 * With --stage fold it measures FOLD instead: two stores of N chunks spread over 12 routed
 * entities, each with a small article in a fresh vault, folded with the seam at width W both
 * times: once one (article, chunk) pair per round (--batch 1: each phase's call holds one pair's
 * questions, as FOLD asked before rounds), once with rounds of B pairs of distinct articles (each
 * phase one call across the round). Prints
 *   STAGE-BENCH stage=fold chunks=N articles=A max_tokens=M width=W pair_at_a_time=X/s rounds_bB=Y/s
 *               ratio=R articles_equal=yes|no
 * articles_equal compares every article the two runs left (exact decoding: rounds must not
 * change what is written).
 *
 * usage: bench_stages [--stage extract|fold] [--model PATH] [--n N] [--width W] [--batch B] [--max-tokens M] [--threads T] [--repeat R] */
#include "dream/article.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, int rc)
{
    fprintf(stderr, "bench_stages: %s: %s\n", what, rc ? dream_error_last() : "failed");
    exit(1);
}

static const char *const subjects[] = {"repotting a fig tree",   "tuning a cello",          "baking rye bread",
                                       "fixing a bicycle brake", "planning a hiking route", "learning chess endgames",
                                       "insulating an attic",    "brewing cold coffee",     "sharpening kitchen knives",
                                       "training for a 10k run", "knitting a scarf",        "setting up a fish tank"};
#define N_SUBJECTS ((int)(sizeof subjects / sizeof subjects[0]))
/* The article title of each subject (fold). */
static const char *const titles[] = {"Fig Tree",      "Cello",      "Rye Bread",     "Bicycle Brake", "Hiking Route", "Chess Endgames",
                                     "Attic Insulation", "Cold Brew", "Kitchen Knives", "Running",      "Knitting",     "Fish Tank"};

/* N conversations about varied everyday subjects, one chunk each (messages 0..3). */
static void make_store(const char *path, int n)
{
    unlink(path);
    dream_store *s;
    int rc = dream_store_open(path, &s);
    if (rc) die("opening the store", rc);
    for (int k = 0; k < n; k++) {
        const char *subj = subjects[k % (int)(sizeof subjects / sizeof subjects[0])];
        char t[4][512], ids[4][32], id[32];
        snprintf(t[0], sizeof t[0], "I need help with %s. Where do I start, and what do I need to buy first?", subj);
        snprintf(t[1], sizeof t[1],
                 "For %s, start small: gather the basic tools, read one good guide, and try it once on a weekend. "
                 "Keep notes of what worked so the second attempt goes faster.",
                 subj);
        snprintf(t[2], sizeof t[2], "How long does %s usually take for a beginner? (case %d)", subj, k);
        snprintf(t[3], sizeof t[3], "Most beginners need a few sessions of %s before it feels natural; plan for a month.", subj);
        struct dream_message m[4];
        for (int i = 0; i < 4; i++) {
            snprintf(ids[i], sizeof ids[i], "b%d-%d", k, i);
            m[i] = (struct dream_message){i % 2 ? "assistant" : "user", ids[i], 0, t[i]};
        }
        snprintf(id, sizeof id, "bench-%03d", k);
        struct dream_conversation c = {.source = "openai-jsonl", .id = id, .title = id, .updated_ms = 1000 + k, .messages = m, .n_messages = 4};
        enum dream_store_outcome out;
        if ((rc = dream_store_put(s, &c, &out))) die("storing a conversation", rc);
    }
    dream_store_close(s);
    /* The chunks, as the segment stage would store them (one per conversation). */
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "INSERT INTO chunks (conversation, first_position, last_position, label, revision, created_at) "
                     "SELECT id, 0, message_count - 1, 'bench chunk', revision, 0 FROM conversations",
                     NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_stages: writing chunks to %s: %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_close(db);
}

/* Every stored name, in a fixed order, as one string (malloc'd). */
static char *names_of(const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT chunk, normal FROM chunk_mentions ORDER BY chunk, normal", -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_stages: reading %s: %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
    size_t cap = 1024, len = 0;
    char *out = calloc(1, cap);
    while (out && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        size_t need = len + strlen(name) + 32;
        if (need > cap) {
            while (cap < need) cap *= 2;
            char *grown = realloc(out, cap);
            if (!grown) break;
            out = grown;
        }
        len += (size_t)snprintf(out + len, cap - len, "%lld:%s\n", (long long)sqlite3_column_int64(st, 0), name);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The seam on model at width (DREAM_MEMORY_BATCH), loaded and warmed up. */
static void seam_up(const char *model, int width, int threads)
{
    char w[16];
    snprintf(w, sizeof w, "%d", width);
    setenv("DREAM_MEMORY_BATCH", w, 1);
    struct dream_seam_config c;
    dream_seam_default_config(&c);
    c.model_path = model;
    c.adapters_dir = "/nonexistent/dream-bench-no-adapters";
    c.n_threads = threads;
    int rc = dream_seam_configure(&c);
    if (rc) die("configuring the seam", rc);
    struct dream_local_input in = {.user = "Name the subject of: a question about bread."};
    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = 4;
    char *warm = NULL;
    if ((rc = dream_call_local("entity", &in, &opts, &warm))) die("warming up the model", rc);
    free(warm);
}

/* Runs extract over the store at path with the seam's width from DREAM_MEMORY_BATCH=width;
 * returns chunks per second (model load and warm-up not counted). */
static double run_extract(const char *path, const char *model, int width, int batch, int max_tokens, int threads, size_t *names)
{
    seam_up(model, width, threads);
    dream_store *s;
    int rc = dream_store_open(path, &s);
    if (rc) die("opening the store", rc);
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.batch = (size_t)batch;
    p.max_tokens = max_tokens;
    struct dream_extract_result r;
    double t0 = now_s();
    if ((rc = dream_extract_run(s, &p, &r))) die("running extract", rc);
    double dt = now_s() - t0;
    struct dream_batch_stats bs = dream_seam_batch_stats();
    dream_store_close(s);
    dream_seam_shutdown();
    if (bs.prompt_tokens)
        fprintf(stderr, "bench_stages: width %d: scheduler: %ld prompt tokens (%ld from shared prefixes), %ld generated in %ld steps\n", width,
                bs.prompt_tokens, bs.saved_tokens, bs.generated, bs.steps);
    *names = r.mentions;
    fprintf(stderr, "bench_stages: width %d: %zu chunks in %.2f s (%zu with names, %zu empty, %zu failed attempts)\n", width, r.eligible, dt,
            r.extracted, r.empty, r.failed);
    return dt > 0 ? (double)r.eligible / dt : 0;
}

/* The fold bench's setup on top of make_store: the 12 subjects as entities routed to articles,
 * each chunk mentioning its subject, and a fresh vault with one short article per subject (a
 * lead and two sections citing a seed note), none of the chunks seen yet. */
static void make_fold_store(const char *path, const char *wiki, int n)
{
    make_store(path, n);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) die("opening the store", 0);
    char sql[1024];
    for (int k = 0; k < N_SUBJECTS && k < n; k++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO pipeline_entities (id, name, normal, squeezed, route, article_title, chunk_count, created_at) "
                 "VALUES (%d, '%s', 'subject %d', 'subject%d', 'article', '%s', 1, 0)",
                 k + 1, titles[k], k, k, titles[k]);
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
            fprintf(stderr, "bench_stages: writing entities to %s: %s\n", path, sqlite3_errmsg(db));
            exit(1);
        }
    }
    snprintf(sql, sizeof sql,
             "INSERT INTO chunk_mentions (chunk, normal, surface, entity) SELECT ch.id, 'subject ' || ((c.updated_at - 1000) %% %d), "
             "'subject', ((c.updated_at - 1000) %% %d) + 1 FROM chunks ch JOIN conversations c ON c.id = ch.conversation",
             N_SUBJECTS, N_SUBJECTS);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_stages: writing mentions to %s: %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_close(db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", wiki);
    if (system(cmd) != 0) die("removing the old vault", 0);
    int rc = dream_vault_init(wiki, NULL, NULL, NULL);
    if (rc) die("making the vault", rc);
    for (int k = 0; k < N_SUBJECTS && k < n; k++) {
        char *stem = dream_article_stem(titles[k]);
        char file[400];
        snprintf(file, sizeof file, "%s/articles/%s.md", wiki, stem);
        free(stem);
        FILE *f = fopen(file, "w");
        if (!f) die("writing an article", 0);
        fprintf(f,
                "# %s\n\n**%s** is a project the person took up: %s.[^1]\n\n## Getting Started\n\nThe person first asked what to "
                "buy and read one guide before trying %s on a weekend.[^1]\n\n## Progress\n\nThe person kept notes after each "
                "session so the next one went faster.[^1]\n\n## References\n\n[^1]: `conv:%08x#seed-%d` (2020-01-01, Seed note %d)\n",
                titles[k], titles[k], subjects[k], subjects[k], 0xa11ce00u + (unsigned)k, k, k);
        fclose(f);
    }
}

/* Every article of wiki as "name\ntext" blocks (malloc'd). */
static char *articles_of(const char *wiki)
{
    char dir[300], cmd[400];
    snprintf(dir, sizeof dir, "%s/articles", wiki);
    snprintf(cmd, sizeof cmd, "cd '%s' && for f in $(ls *.md | sort); do echo \"=== $f\"; cat \"$f\"; done", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 4096, len = 0, got;
    char *out = malloc(cap);
    while (out && (got = fread(out + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *g = realloc(out, cap *= 2);
            if (!g) break;
            out = g;
        }
    }
    pclose(p);
    if (out) out[len] = '\0';
    return out;
}

/* Folds the store at path into wiki with the seam at width and `batch` pairs a round; returns
 * chunks per second (model load and warm-up not counted). */
static double run_fold(const char *path, const char *wiki, const char *model, int width, int batch, int max_tokens, int threads)
{
    seam_up(model, width, threads);
    dream_store *s;
    int rc = dream_store_open(path, &s);
    if (rc) die("opening the store", rc);
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = wiki;
    p.batch = (size_t)batch;
    p.max_tokens = max_tokens;
    struct dream_synth_result r;
    double t0 = now_s();
    if ((rc = dream_synth_fold(s, &p, &r))) die("running fold", rc);
    double dt = now_s() - t0;
    struct dream_batch_stats bs = dream_seam_batch_stats();
    dream_store_close(s);
    dream_seam_shutdown();
    if (bs.prompt_tokens)
        fprintf(stderr, "bench_stages: fold, %d pair(s) a round: scheduler: %ld prompt tokens (%ld from shared prefixes), %ld generated in %ld steps\n",
                batch, bs.prompt_tokens, bs.saved_tokens, bs.generated, bs.steps);
    fprintf(stderr, "bench_stages: fold, %d pair(s) a round: %zu chunks in %.2f s (%zu patched, %zu new sections, %zu leads, %zu refused, %zu nowhere)\n",
            batch, r.eligible, dt, r.patched, r.new_sections, r.lead_patches, r.rejected, r.unrouted);
    return dt > 0 ? (double)r.eligible / dt : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts a copy). */
static double median(const double *v, int n)
{
    double c[99];
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *model = "build/models/tiny-gemma4.gguf", *stage = "extract";
    int n = 32, width = 4, batch = 8, max_tokens = 32, threads = 0, repeat = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: bench_stages [--stage extract|fold] [--model PATH] [--n N] [--width W] [--batch B] [--max-tokens M] [--threads T] [--repeat R]\n");
            return 2;
        }
        if (!strcmp(argv[i], "--model")) model = v;
        else if (!strcmp(argv[i], "--stage")) stage = v;
        else if (!strcmp(argv[i], "--n")) n = atoi(v);
        else if (!strcmp(argv[i], "--width")) width = atoi(v);
        else if (!strcmp(argv[i], "--batch")) batch = atoi(v);
        else if (!strcmp(argv[i], "--max-tokens")) max_tokens = atoi(v);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
        else if (!strcmp(argv[i], "--repeat")) repeat = atoi(v);
        else {
            fprintf(stderr, "bench_stages: unknown option '%s'\n", argv[i]);
            return 2;
        }
        i++;
    }
    if (strcmp(stage, "extract") != 0 && strcmp(stage, "fold") != 0) {
        fprintf(stderr, "bench_stages: --stage is extract or fold, not '%s'\n", stage);
        return 2;
    }
    if (n < 1 || width < 2 || batch < 1 || max_tokens < 1 || threads < 0 || repeat < 1 || repeat > 99) {
        fprintf(stderr, "bench_stages: --n, --batch, --max-tokens must be positive, --width at least 2, --repeat 1 to 99\n");
        return 2;
    }
    char dir[] = "/tmp/dream-bench-stages-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char serial_path[64], batched_path[64];
    snprintf(serial_path, sizeof serial_path, "%s/serial.sqlite", dir);
    snprintf(batched_path, sizeof batched_path, "%s/batched.sqlite", dir);
    double serial[99], batched[99], ratio[99];
    size_t names_serial = 0, names_batched = 0;
    bool same = true;
    if (!strcmp(stage, "fold")) {
        char serial_wiki[64], batched_wiki[64];
        snprintf(serial_wiki, sizeof serial_wiki, "%s/serial-wiki", dir);
        snprintf(batched_wiki, sizeof batched_wiki, "%s/batched-wiki", dir);
        for (int r = 0; r < repeat; r++) {
            make_fold_store(serial_path, serial_wiki, n);
            make_fold_store(batched_path, batched_wiki, n);
            serial[r] = run_fold(serial_path, serial_wiki, model, width, 1, max_tokens, threads);
            batched[r] = run_fold(batched_path, batched_wiki, model, width, batch, max_tokens, threads);
            ratio[r] = serial[r] > 0 ? batched[r] / serial[r] : 0.0;
            char *a = articles_of(serial_wiki), *b = articles_of(batched_wiki);
            same = same && a && b && strcmp(a, b) == 0;
            free(a);
            free(b);
            if (repeat > 1) fprintf(stderr, "bench_stages: round %d: ratio %.2fx\n", r + 1, ratio[r]);
        }
        printf("STAGE-BENCH stage=fold chunks=%d articles=%d max_tokens=%d width=%d repeat=%d pair_at_a_time=%.2f/s rounds_b%d=%.2f/s "
               "ratio=%.2fx articles_equal=%s\n",
               n, n < N_SUBJECTS ? n : N_SUBJECTS, max_tokens, width, repeat, median(serial, repeat), batch, median(batched, repeat),
               median(ratio, repeat), same ? "yes" : "no");
    }
    for (int r = 0; !strcmp(stage, "extract") && r < repeat; r++) {
        make_store(serial_path, n);
        make_store(batched_path, n);
        serial[r] = run_extract(serial_path, model, 1, batch, max_tokens, threads, &names_serial);
        batched[r] = run_extract(batched_path, model, width, batch, max_tokens, threads, &names_batched);
        ratio[r] = serial[r] > 0 ? batched[r] / serial[r] : 0.0;
        char *a = names_of(serial_path), *b = names_of(batched_path);
        same = same && a && b && strcmp(a, b) == 0;
        free(a);
        free(b);
        if (repeat > 1) fprintf(stderr, "bench_stages: round %d: ratio %.2fx\n", r + 1, ratio[r]);
    }
    if (!strcmp(stage, "extract"))
        printf("STAGE-BENCH stage=extract chunks=%d max_tokens=%d stage_batch=%d repeat=%d serial=%.2f/s batched_w%d=%.2f/s ratio=%.2fx "
               "names=%zu/%zu stored_names_equal=%s\n",
               n, max_tokens, batch, repeat, median(serial, repeat), width, median(batched, repeat), median(ratio, repeat), names_serial,
               names_batched, same ? "yes" : "no");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
