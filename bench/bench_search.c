/* bench_search.c — the full-text search index (issue 15) at the scale: a store of
 * --messages messages (10 per conversation, words drawn Zipf-like from a 20,000-word
 * vocabulary) and a wiki of --articles articles (a lead, five sections, footnotes), both
 * generated with a fixed seed. It reports:
 *   - ingest: the store written with the index kept by its triggers (incremental), MB/s;
 *   - build: dream_search_rebuild over all of it, --builds times (the first over the index
 *     the triggers made), MB/s of text indexed (target >= 20): each, and the median;
 *   - growth: the store's size with the index and after dropping it (VACUUM), bytes;
 *   - queries: the median and worst of each query shape through the read tool
 *     (dream_read_search_index: sync check, two ranked queries, snippets), ms (target <= 50),
 *     and "unwindowed": the two ranked FTS5 queries alone over every match (no rank window);
 *     two with --since (half the messages are newer), whose date is looked up per matching row;
 *   - with --variants N: the FTS5 options tried for the build, side by side on the same store,
 *     N times each: the index made again from search_source in one transaction, its size, and
 *     two queries on it (the ranked messages query over every match of the commonest word, and
 *     a phrase); then dream_search_rebuild puts the index back.
 *   - with --paste N (default 300,000; 0: none): one more message of N words, one three-word
 *     line pasted over and over, and the query for its word among the others: its snippet
 *     (FTS5's own snippet() took minutes on such a row; dream_snippet reads only its window).
 * Usage: bench_search [--messages N] [--articles N] [--dir DIR] [--repeat N] [--builds N] [--variants N] [--paste N] */
#include "dream/error.h"
#include "dream/read.h"
#include "dream/search.h"
#include "dream/store.h"
#include "store_internal.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define VOCAB 20000
static char words[VOCAB][16];
static double cdf[VOCAB];

static void make_vocab(void)
{
    static const char *const syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fu", "go", "hi", "ja", "ze", "po",
                                      "qua", "ri", "sto", "tre", "ul", "wa", "xe", "yo", "bra", "cle", "dro", "fla", "gri", "plu"};
    double sum = 0;
    for (int i = 0; i < VOCAB; i++) {
        int n = 2 + (int)(next() % 3);
        words[i][0] = '\0';
        for (int k = 0; k < n; k++) strcat(words[i], syl[next() % 30]);
        sum += 1.0 / (i + 1);
        cdf[i] = sum;
    }
    for (int i = 0; i < VOCAB; i++) cdf[i] /= sum;
    /* a few real words at known ranks, for the queries */
    strcpy(words[3], "sourdough");
    strcpy(words[40], "derailleur");
    strcpy(words[400], "cello");
    strcpy(words[4000], "inverter");
    strcpy(words[15000], "quokka");
}

static const char *word(void)
{
    double u = (double)(next() % 1000000) / 1e6;
    int lo = 0, hi = VOCAB - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cdf[mid] < u) lo = mid + 1;
        else hi = mid;
    }
    return words[lo];
}

static void sentence(char *out, size_t cap, int n)
{
    size_t l = 0;
    for (int i = 0; i < n && l + 20 < cap; i++) l += (size_t)snprintf(out + l, cap - l, "%s%s", i ? " " : "", word());
    snprintf(out + l, cap - l, ".");
}

static long file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A way to build the index: its table and how it is filled (both run in one transaction). */
struct variant {
    const char *name, *table, *fill;
};

#define HASH16 "INSERT INTO search (search, rank) VALUES ('hashsize', 16777216);"
#define REBUILD "INSERT INTO search (search) VALUES ('rebuild');"
#define COPY_IN "INSERT INTO search (rowid, title, section, text) SELECT id, title, section, text FROM search_source;"
static const struct variant variants[] = {
    {"as built (16 MB buffer)", STORE_SEARCH_TABLE_SQL, STORE_SEARCH_FILL_SQL},
    {"FTS5's own 1 MB buffer", STORE_SEARCH_TABLE_SQL, REBUILD},
    {"64 MB buffer", STORE_SEARCH_TABLE_SQL, "INSERT INTO search (search, rank) VALUES ('hashsize', 67108864);" REBUILD},
    {"16 MB + pgsz 8000", STORE_SEARCH_TABLE_SQL, HASH16 "INSERT INTO search (search, rank) VALUES ('pgsz', 8000);" REBUILD},
    {"16 MB + automerge 0", STORE_SEARCH_TABLE_SQL, HASH16 "INSERT INTO search (search, rank) VALUES ('automerge', 0);" REBUILD},
    {"1 MB + crisismerge 64", STORE_SEARCH_TABLE_SQL, "INSERT INTO search (search, rank) VALUES ('crisismerge', 64);" REBUILD},
    {"16 MB + 'optimize' after", STORE_SEARCH_TABLE_SQL, HASH16 REBUILD "INSERT INTO search (search) VALUES ('optimize');"},
    {"16 MB + detail=column",
     "CREATE VIRTUAL TABLE search USING fts5(title, section, text, content = search_source, content_rowid = id, detail = column,"
     " tokenize = 'unicode61 remove_diacritics 2');",
     HASH16 REBUILD},
    {"16 MB, a copy of the text (as before)", "CREATE VIRTUAL TABLE search USING fts5(title, section, text, tokenize = 'unicode61 remove_diacritics 2');",
     HASH16 COPY_IN},
    {"16 MB, contentless (no snippets)",
     "CREATE VIRTUAL TABLE search USING fts5(title, section, text, content = '', tokenize = 'unicode61 remove_diacritics 2');", HASH16 COPY_IN},
};

/* ms of sql's rows (the last column of the last row into *v), or -1 with the error printed into
 * err. */
static double time_query(sqlite3 *db, const char *sql, char *err, size_t cap)
{
    sqlite3_stmt *st;
    double a = now_s();
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, cap, "%s", sqlite3_errmsg(db));
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) snprintf(err, cap, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? (now_s() - a) * 1000 : -1;
}

/* FTS5's own tables of the index, and what else the store keeps for it. */
#define FTS5_TABLES "'search_data', 'search_idx', 'search_content', 'search_docsize', 'search_config'"
#define INDEX_EXTRAS "'messages_search_id', 'pipeline_entities_search_id', 'search_sections', 'search_sections_stem', 'search_articles'"

/* Each variant n times: build, size, the two queries. */
static int run_variants(dream_store *s, long n, size_t text_bytes)
{
    sqlite3 *db = store_db(s);
    sqlite3_stmt *x;
    if (sqlite3_prepare_v2(db, "SELECT name, sum(pgsize) FROM dbstat WHERE name IN (" INDEX_EXTRAS ") GROUP BY name ORDER BY name", -1, &x, NULL) == SQLITE_OK)
        while (sqlite3_step(x) == SQLITE_ROW) printf("kept for the index besides FTS5's tables: %s %.1f MB\n", sqlite3_column_text(x, 0), (double)sqlite3_column_int64(x, 1) / 1e6);
    sqlite3_finalize(x);
    printf("%-40s %8s %8s %9s %10s %10s\n", "build variant (one transaction)", "build s", "MB/s", "index MB", "bepo ms", "phrase ms");
    for (long k = 0; k < n; k++) {
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            double a = now_s();
            if (store_exec(s, "BEGIN IMMEDIATE; DROP TABLE search;", "bench") || store_exec(s, variants[v].table, "bench") ||
                store_exec(s, variants[v].fill, "bench") || store_exec(s, "COMMIT", "bench"))
                return fprintf(stderr, "%s: %s\n", variants[v].name, dream_error_last()), 1;
            double t = now_s() - a;
            sqlite3_stmt *st;
            double mb = 0;
            if (sqlite3_prepare_v2(db, "SELECT sum(pgsize) FROM dbstat WHERE name IN (" FTS5_TABLES ")", -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW)
                mb = (double)sqlite3_column_int64(st, 0) / 1e6;
            sqlite3_finalize(st);
            char err[200] = "", perr[200] = "";
            double q = time_query(db, "SELECT rowid FROM search WHERE search MATCH 'bepo' AND rowid >= 1125899906842624 ORDER BY bm25(search) LIMIT 6", err,
                                  sizeof err);
            double ph = time_query(db, "SELECT count(*) FROM search WHERE search MATCH '\"sourdough cello\"'", perr, sizeof perr);
            char qs[32], ps[32];
            snprintf(qs, sizeof qs, q < 0 ? "error" : "%.1f", q);
            snprintf(ps, sizeof ps, ph < 0 ? "error" : "%.1f", ph);
            printf("%-40s %8.2f %8.1f %9.1f %10s %10s%s%s\n", variants[v].name, t, (double)text_bytes / 1e6 / t, mb, qs, ps, ph < 0 ? "  " : "", ph < 0 ? perr : "");
        }
    }
    struct dream_search_rebuild_stats st;
    return dream_search_rebuild(s, NULL, &st) ? (fprintf(stderr, "%s\n", dream_error_last()), 1) : 0;
}

int main(int argc, char **argv)
{
    long n_messages = 100000, n_articles = 2000, repeat = 9, builds = 3, n_variants = 0, paste = 300000;
    const char *dir = "build/bench/search";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--messages")) n_messages = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--articles")) n_articles = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
        else if (!strcmp(argv[i], "--repeat")) repeat = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--builds")) builds = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--variants")) n_variants = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--paste")) paste = atol(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_search [--messages N] [--articles N] [--dir DIR] [--repeat N] [--builds N] [--variants N] [--paste N]\n");
            return 2;
        }
    }
    make_vocab();
    char cmd[1200], store_path[1100], wiki[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/wiki/articles'", dir, dir);
    if (system(cmd) != 0) return 1;
    snprintf(store_path, sizeof store_path, "%s/memory.sqlite", dir);
    snprintf(wiki, sizeof wiki, "%s/wiki", dir);
    dream_store *s = NULL;
    if (dream_store_open(store_path, &s)) return fprintf(stderr, "%s\n", dream_error_last()), 1;

    /* ingest: conversations of 10 messages, each in its own transaction (dream_store_put),
     * indexed by the triggers as they are stored */
    double t0 = now_s();
    size_t text_bytes = 0;
    static char texts[10][2048];
    for (long c = 0; c < n_messages / 10; c++) {
        struct dream_message m[10];
        char ids[10][16], id[32], title[128];
        for (int k = 0; k < 10; k++) {
            sentence(texts[k], sizeof texts[k], 20 + (int)(next() % 60));
            snprintf(ids[k], sizeof ids[k], "m%d", k);
            m[k] = (struct dream_message){k % 2 ? "assistant" : "user", ids[k], 1700000000000 + c * 60000 + k * 1000, texts[k]};
            text_bytes += strlen(texts[k]);
        }
        snprintf(id, sizeof id, "c%ld", c);
        sentence(title, sizeof title, 4);
        struct dream_conversation conv = {"openai-jsonl", id, title, m[0].time_ms, m[9].time_ms, "bench", m, 10};
        enum dream_store_outcome o;
        if (dream_store_put(s, &conv, &o)) return fprintf(stderr, "%s\n", dream_error_last()), 1;
    }
    double t_ingest = now_s() - t0;
    /* one pasted log: a message of --paste words, one three-word line over and over, so that a
     * query for its word matches it --paste/3 times (a snippet's cost grows with the matches) */
    if (paste > 0) {
        struct dbuf pb = {0};
        for (long w = 0; w < paste / 3; w++) dbuf_puts(&pb, "pastedword ipsum dolor ");
        struct dream_message pm = {"user", "m0", 1800000000000, pb.data ? pb.data : ""};
        struct dream_conversation pc = {"openai-jsonl", "pasted", "pasted log", pm.time_ms, pm.time_ms, "bench", &pm, 1};
        enum dream_store_outcome o;
        if (dream_store_put(s, &pc, &o)) return fprintf(stderr, "%s\n", dream_error_last()), 1;
        printf("pasted: one message of %ld words (%.1f MB)\n", paste, (double)pb.len / 1e6);
        dbuf_free(&pb);
    }

    /* articles */
    size_t article_bytes = 0;
    for (long a = 0; a < n_articles; a++) {
        char path[1300], buf[16384], line[1024];
        snprintf(path, sizeof path, "%s/articles/Bench_%05ld.md", wiki, a);
        size_t l = (size_t)snprintf(buf, sizeof buf, "# Bench %05ld\n\n```info\ntype: bench\nkind: domain\n```\n\n", a);
        sentence(line, sizeof line, 40);
        l += (size_t)snprintf(buf + l, sizeof buf - l, "**Bench %05ld** %s[^1]\n", a, line);
        for (int k = 0; k < 5; k++) {
            sentence(line, sizeof line, 50 + (int)(next() % 40));
            l += (size_t)snprintf(buf + l, sizeof buf - l, "\n## Part %d %s\n\n%s[^%d]\n", k + 1, word(), line, k % 2 + 1);
        }
        l += (size_t)snprintf(buf + l, sizeof buf - l, "\n## References\n\n[^1]: `conv:%08lx#m0` (2024-01-%02ld, bench)\n[^2]: `conv:%08lx#m1` (2024-02-%02ld, bench)\n",
                              (unsigned long)a, a % 28 + 1, (unsigned long)a + 1, a % 28 + 1);
        FILE *f = fopen(path, "w");
        if (!f || fwrite(buf, 1, l, f) != l) return 1;
        fclose(f);
        article_bytes += l;
    }

    printf("corpus: %ld messages (%.1f MB), %ld articles (%.1f MB)\n", n_messages, (double)text_bytes / 1e6, n_articles, (double)article_bytes / 1e6);
    printf("ingest with the index kept by triggers: %.2f s, %.1f MB/s of message text\n", t_ingest, (double)text_bytes / 1e6 / t_ingest);

    /* build: the whole index again, --builds times */
    struct dream_search_rebuild_stats st;
    if (builds < 1) builds = 1;
    double *tb = calloc((size_t)builds, sizeof *tb);
    for (long b = 0; tb && b < builds; b++) {
        t0 = now_s();
        if (dream_search_rebuild(s, wiki, &st)) return fprintf(stderr, "%s\n", dream_error_last()), 1;
        tb[b] = now_s() - t0;
        printf("build %ld (dream_search_rebuild): %zu messages, %zu articles, %zu sections, %.1f MB of text in %.2f s: %.1f MB/s\n", b + 1, st.messages,
               st.articles, st.sections, (double)st.text_bytes / 1e6, tb[b], (double)st.text_bytes / 1e6 / tb[b]);
    }
    if (!tb) return 1;
    qsort(tb, (size_t)builds, sizeof *tb, cmp_double);
    printf("build median of %ld: %.2f s, %.1f MB/s (target >= 20)\n", builds, tb[builds / 2], (double)st.text_bytes / 1e6 / tb[builds / 2]);
    free(tb);
    store_exec(s, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE)", "bench");
    long with_index = file_size(store_path);

    /* queries, through the read tool */
    struct dream_reader_params rp;
    dream_reader_default_params(&rp);
    rp.wiki = wiki;
    rp.store = store_path;
    dream_reader *r = NULL;
    t0 = now_s();
    if (dream_reader_open(&rp, &r)) return fprintf(stderr, "%s\n", dream_error_last()), 1;
    double t_open = now_s() - t0;
    printf("reader open (lists and parses %ld articles; once per command or request): %.1f ms\n", n_articles, t_open * 1000);
    static const char *const queries[] = {"sourdough",        "derailleur cello",  "inverter",      "quokka",
                                          "\"sourdough cello\"", "infl* sourdough", "cello OR quokka", "sourdough -derailleur",
                                          words[1],           "pastedword",     NULL};
    printf("%-26s %9s %9s %12s  %s\n", "query", "median ms", "max ms", "unwindowed", "hits (articles, messages)");
    double worst = 0;
    for (size_t q = 0; queries[q]; q++) {
        double *t = calloc((size_t)repeat, sizeof *t);
        json_t *o = NULL;
        for (long k = 0; k < repeat; k++) {
            struct dream_read_search_params sp;
            dream_read_search_default_params(&sp);
            sp.query = queries[q];
            json_decref(o);
            o = NULL;
            double a = now_s();
            if (dream_read_search_index(r, &sp, &o)) return fprintf(stderr, "%s: %s\n", queries[q], dream_error_last()), 1;
            t[k] = (now_s() - a) * 1000;
        }
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        /* the two ranked FTS5 queries alone, without sync and snippets */
        char *match = NULL;
        dream_search_compile(queries[q], &match);
        double a = now_s();
        for (int part = 0; part < 2; part++) {
            sqlite3_stmt *stq;
            sqlite3_prepare_v2(store_db(s), "SELECT rowid FROM search WHERE search MATCH ? AND rowid >= ? AND rowid < ? ORDER BY bm25(search, 10.0, 5.0, 1.0) LIMIT 6",
                               -1, &stq, NULL);
            sqlite3_bind_text(stq, 1, match, -1, SQLITE_STATIC);
            sqlite3_bind_int64(stq, 2, part ? DREAM_SEARCH_MESSAGE_BASE : 0);
            sqlite3_bind_int64(stq, 3, part ? INT64_MAX : DREAM_SEARCH_MESSAGE_BASE);
            while (sqlite3_step(stq) == SQLITE_ROW) {
            }
            sqlite3_finalize(stq);
        }
        double fts = (now_s() - a) * 1000;
        free(match);
        printf("%-26s %9.2f %9.2f %12.2f  %zu, %zu\n", queries[q], t[repeat / 2], t[repeat - 1], fts, json_array_size(json_object_get(o, "results")),
               json_array_size(json_object_get(o, "conversations")));
        if (t[repeat / 2] > worst) worst = t[repeat / 2];
        json_decref(o);
        free(t);
    }
    printf("worst median query: %.2f ms (target <= 50)\n", worst);
    /* with --since: each matching row's date is looked up */
    static const char *const dated[] = {"sourdough", "cello", NULL};
    int64_t since = 1700000000000 + (n_messages / 10) * 60000 / 2;
    for (size_t q = 0; dated[q]; q++) {
        double *t = calloc((size_t)repeat, sizeof *t);
        json_t *o = NULL;
        for (long k = 0; t && k < repeat; k++) {
            struct dream_read_search_params sp;
            dream_read_search_default_params(&sp);
            sp.query = dated[q];
            sp.since_ms = since;
            json_decref(o);
            o = NULL;
            double a = now_s();
            if (dream_read_search_index(r, &sp, &o)) return fprintf(stderr, "%s: %s\n", dated[q], dream_error_last()), 1;
            t[k] = (now_s() - a) * 1000;
        }
        if (!t) return 1;
        qsort(t, (size_t)repeat, sizeof *t, cmp_double);
        char label[64];
        snprintf(label, sizeof label, "%s --since (half)", dated[q]);
        printf("%-26s %9.2f %9.2f %12s  %zu, %zu\n", label, t[repeat / 2], t[repeat - 1], "", json_array_size(json_object_get(o, "results")),
               json_array_size(json_object_get(o, "conversations")));
        json_decref(o);
        free(t);
    }
    dream_reader_close(r);
    if (n_variants > 0 && run_variants(s, n_variants, st.text_bytes)) return 1;

    /* growth: the same store without the index */
    store_exec(s,
               "DROP TABLE search; DROP INDEX IF EXISTS messages_search_id; DROP INDEX IF EXISTS pipeline_entities_search_id;"
               " DELETE FROM search_sections; DELETE FROM search_articles; VACUUM; PRAGMA wal_checkpoint(TRUNCATE)",
               "bench");
    long without = file_size(store_path);
    printf("store: %.1f MB with the index, %.1f MB without (VACUUM): the index adds %.1f MB (%.2fx the store, %.2fx the text)\n",
           (double)with_index / 1e6, (double)without / 1e6, (double)(with_index - without) / 1e6, (double)with_index / (double)without,
           (double)(with_index - without) / (double)(text_bytes + article_bytes));
    dream_store_close(s);
    return 0;
}
