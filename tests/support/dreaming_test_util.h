/*
 * dreaming_test_util.h — helpers shared by the Dreaming stages' tests (include after cmocka.h).
 */
#ifndef DREAM_TESTS_DREAMING_TEST_UTIL_H
#define DREAM_TESTS_DREAMING_TEST_UTIL_H

#include "dream/model.h"
#include "dream/store.h"
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The one integer a query returns (a count, usually). */
static inline int64_t test_store_scalar(dream_store *s, const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Points the seam at the tiny Gemma 4 of the tiny_models fixture, with no adapters, one thread. */
/* The seam on the tiny random Gemma 4, one thread; no_grammar as DREAM_GRAMMAR=0. */
static inline void test_seam_use_tiny_gemma_grammar(int width, int n_ctx, bool no_grammar)
{
    char model[4096], adapters[4096];
    const char *b = getenv("DREAM_TEST_BUILD");
    assert_non_null(b);
    snprintf(model, sizeof model, "%s/models/tiny-gemma4.gguf", b);
    snprintf(adapters, sizeof adapters, "%s/no-adapters-here", b);
    struct dream_seam_config c;
    dream_seam_default_config(&c);
    c.model_path = model;
    c.adapters_dir = adapters;
    c.width = width;
    c.n_ctx = n_ctx;
    c.n_threads = 1;
    c.no_grammar = no_grammar;
    assert_int_equal(dream_seam_configure(&c), 0);
}

static inline void test_seam_use_tiny_gemma(int width, int n_ctx) { test_seam_use_tiny_gemma_grammar(width, n_ctx, false); }

/* Stores n four-message conversations "noise-<k>" (openai-jsonl) for the noise tests. */
static inline void test_store_put_noise_conversations(dream_store *s, int n)
{
    const char *texts[] = {"How do I repot a <plant>?", "Use a pot one size up and fresh soil.", "And water it after?",
                           "Yes, water it once, then let it drain."};
    for (int k = 0; k < n; k++) {
        struct dream_message m[4];
        char ids[4][32], id[32];
        for (int i = 0; i < 4; i++) {
            snprintf(ids[i], sizeof ids[i], "c%d-m%d", k, i);
            m[i] = (struct dream_message){i % 2 ? "assistant" : "user", ids[i], 0, texts[i]};
        }
        snprintf(id, sizeof id, "noise-%d", k);
        struct dream_conversation conv = {.source = "openai-jsonl", .id = id, .title = id, .updated_ms = 1000 + k, .messages = m, .n_messages = 4};
        assert_int_equal(dream_store_put(s, &conv, &(enum dream_store_outcome){0}), 0);
    }
}

#endif
