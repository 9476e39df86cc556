/* bench_ask.c — the `dream ask` benchmark (issue 15): the fixture corpus (tests/data/dreaming)
 * dreamed into a vault by the whole pipeline (dream_pipeline_run) with the scripted fake, then
 * every question of bench/data/ask/questions.json asked through dream_ask, scored
 * deterministically:
 *   points      every expected point (a substring, case-insensitive) in the answer;
 *   citations   every citation the answer gives is a stored conversation's message;
 *   silence     a negative control answers "nothing on file"; an answer always cites;
 *   budgets     no read over 2 KB, no context at 8 KB or more; the mean context reported.
 * The answers come from the scripted fake (it answers with the note sentence sharing the most
 * words with the question), or with --backend URL from a model behind an OpenAI-compatible
 * server (dream serve --model models/dream-mini.gguf). --check exits 1 when a negative control
 * is answered, a citation is not real or a budget is broken.
 * Usage: bench_ask DATA_DIR QUESTIONS.json [--dir DIR] [--backend URL] [--check] [--verbose] */
#include "dream/ask.h"
#include "dream/error.h"
#include "dream/model.h"
#include "dream/pipeline.h"
#include "dream/read.h"
#include "dream/store.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n)) return true;
    return false;
}

/* The citation "conv:HASH#MSG" names a stored message. */
static bool citation_real(dream_store *s, const char *cite)
{
    const char *hash = strncmp(cite, "conv:", 5) == 0 ? cite + 5 : NULL, *msg = strchr(cite, '#');
    if (!hash || !msg) return false;
    char h[80];
    snprintf(h, sizeof h, "%.*s", (int)(msg - hash), hash);
    struct dream_store_conversation *c = NULL;
    if (dream_store_get_by_cite(s, h, &c)) {
        dream_error_clear();
        return false;
    }
    bool found = false;
    for (size_t i = 0; i < c->n_messages && !found; i++) found = !strcmp(c->messages[i].id, msg + 1);
    dream_store_conversation_free(c);
    return found;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_ask DATA_DIR QUESTIONS.json [--dir DIR] [--backend URL] [--check] [--verbose]\n");
        return 2;
    }
    const char *data = argv[1], *qpath = argv[2], *dir = "build/bench/ask", *backend = NULL;
    bool check = false, verbose = false;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else if (!strcmp(argv[i], "--check")) check = true;
        else if (!strcmp(argv[i], "--verbose")) verbose = true;
        else return fprintf(stderr, "bench_ask: unknown argument '%s'\n", argv[i]), 2;
    }
    json_error_t je;
    json_t *qs = json_load_file(qpath, 0, &je);
    if (!qs) return fprintf(stderr, "bench_ask: %s:%d: %s\n", qpath, je.line, je.text), 2;
    char cmd[1200], store_path[1100], wiki[1100], corpus[1100], from[1100], to[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) return 1;
    snprintf(store_path, sizeof store_path, "%s/memory.sqlite", dir);
    snprintf(wiki, sizeof wiki, "%s/wiki", dir);
    snprintf(corpus, sizeof corpus, "%s/corpus", data);
    snprintf(from, sizeof from, "%s/wiki/Meta/Aliases.md", data);
    snprintf(to, sizeof to, "%s/Meta/Aliases.md", wiki);
    dream_store *s = NULL;
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    int rc = dream_vault_init(wiki, NULL, NULL, NULL);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    if (!rc && system(cmd) != 0) rc = DREAM_EIO;
    if (!rc) rc = dream_store_open(store_path, &s);
    if (!rc) rc = fixture_ingest(s, corpus);
    dream_store_close(s);
    s = NULL;
    if (!rc) rc = dream_seam_set_backend(&fake);
    struct dream_pipeline_params pp;
    dream_pipeline_default_params(&pp);
    pp.store_path = store_path;
    pp.wiki_dir = wiki;
    pp.batch = 3;
    if (!rc) rc = dream_pipeline_run(&pp); /* the vault, dreamed by the scripted fake */
    if (!rc && backend) {
        dream_seam_set_backend(NULL);
        struct dream_remote_params rp;
        dream_remote_default_params(&rp);
        rp.url = backend;
        rc = dream_seam_use_remote(&rp);
    }
    if (!rc) rc = dream_store_open(store_path, &s);
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    p.wiki = wiki;
    p.store = store_path;
    dream_reader *r = NULL;
    if (!rc) rc = dream_reader_open(&p, &r);
    if (rc) return fprintf(stderr, "bench_ask: %s\n", dream_error_last()), 1;

    size_t n_pos = 0, n_neg = 0, pos_ok = 0, neg_ok = 0, n_cites = 0, cites_real = 0, uncited = 0, n_reads = 0, over_read = 0, over_ctx = 0;
    size_t ctx_sum = 0, ctx_max = 0, read_max = 0, calls = 0;
    size_t i;
    json_t *q;
    printf("%-58s %-8s %6s %5s %6s  %s\n", "question", "kind", "score", "reads", "ctx B", "answer");
    json_array_foreach(json_object_get(qs, "questions"), i, q) {
        const char *question = json_string_value(json_object_get(q, "question"));
        bool negative = json_is_true(json_object_get(q, "negative"));
        json_t *o = NULL;
        if (dream_ask(r, question, NULL, &o)) return fprintf(stderr, "bench_ask: '%s': %s\n", question, dream_error_last()), 1;
        bool answered = json_is_true(json_object_get(o, "answered"));
        const char *answer = json_string_value(json_object_get(o, "answer"));
        bool ok;
        if (negative) {
            n_neg++;
            ok = !answered;
            neg_ok += ok;
        } else {
            n_pos++;
            ok = answered;
            size_t k;
            json_t *pt;
            json_array_foreach(json_object_get(q, "points"), k, pt) ok = ok && contains_ci(answer, json_string_value(pt));
            pos_ok += ok;
        }
        size_t k;
        json_t *v;
        json_array_foreach(json_object_get(o, "citations"), k, v) {
            n_cites++;
            cites_real += citation_real(s, json_string_value(json_object_get(v, "cite")));
        }
        if (answered && !json_array_size(json_object_get(o, "citations"))) uncited++;
        json_array_foreach(json_object_get(o, "reads"), k, v) {
            size_t b = (size_t)json_integer_value(json_object_get(v, "bytes"));
            n_reads++;
            over_read += b > 2048;
            if (b > read_max) read_max = b;
        }
        size_t ctx = (size_t)json_integer_value(json_object_get(o, "context_bytes"));
        calls += (size_t)json_integer_value(json_object_get(o, "model_calls"));
        over_ctx += ctx >= 8192;
        if (ctx) ctx_sum += ctx;
        if (ctx > ctx_max) ctx_max = ctx;
        printf("%-58.58s %-8s %6s %5zu %6zu  %.70s\n", question, negative ? "negative" : "point", ok ? "ok" : "MISS",
               json_array_size(json_object_get(o, "reads")), ctx, answer);
        if (verbose) {
            char *d = json_dumps(o, JSON_INDENT(1));
            printf("%s\n", d);
            free(d);
        }
        json_decref(o);
    }
    printf("points: %zu/%zu questions with every point (%.0f%%)\n", pos_ok, n_pos, n_pos ? 100.0 * (double)pos_ok / (double)n_pos : 0);
    printf("negative controls answered 'nothing on file': %zu/%zu (%.0f%%)\n", neg_ok, n_neg, n_neg ? 100.0 * (double)neg_ok / (double)n_neg : 0);
    printf("citations real: %zu/%zu; answers without a citation: %zu\n", cites_real, n_cites, uncited);
    printf("budgets: %zu reads, largest %zu B, %zu over 2048 B; context mean %.0f B over %zu model call(s), largest %zu B, %zu at 8192 B or more\n",
           n_reads, read_max, over_read, calls ? (double)ctx_sum / (double)calls : 0, calls, ctx_max, over_ctx);
    dream_reader_close(r);
    dream_store_close(s);
    json_decref(qs);
    dream_seam_set_backend(NULL);
    if (check && (neg_ok != n_neg || cites_real != n_cites || uncited || over_read || over_ctx)) return 1;
    return 0;
}
