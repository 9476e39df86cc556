/* test_segment_noise.c — the segment stage on the tiny random-weight Gemma 4 through the real
 * seam (engine, template, batching). Its answers are noise; the test proves noise is handled:
 * nothing crashes, unusable answers become failed attempts up to the retry limit, every
 * conversation ends done or failed, and the store stays consistent. Under the chunk answer's
 * grammar (the default) even noise is a valid answer: every conversation is segmented at the
 * first attempt into chunks over its own messages; without it (DREAM_GRAMMAR=0) none is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/model.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "segment_answer.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A store in memory holding n noise conversations. */
static dream_store *noise_store(int n)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    test_store_put_noise_conversations(s, n);
    return s;
}

static void test_segment_noise_is_recorded_not_fatal(void **state)
{
    (void)state;
    test_seam_use_tiny_gemma(2, 4096);
    dream_store *s = noise_store(3);
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.max_tokens = 32;
    p.max_attempts = 2;
    p.batch = 3;
    for (int run = 0; run < 2; run++) {
        struct dream_segment_result r;
        assert_int_equal(dream_segment_run(s, &p, &r), 0);
        assert_int_equal(r.segmented + r.failed + r.skipped, r.eligible);
    }
    /* Greedy noise is the same on the retry, so two runs settle every conversation. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'segment' AND status IN ('done', 'failed')"), 3);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE status = 'failed' AND (last_error IS NULL OR attempts <> 2)"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks k JOIN conversations c ON c.id = k.conversation "
                               "WHERE k.first_position < 0 OR k.last_position >= c.message_count OR k.first_position > k.last_position"),
                     0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    assert_int_equal(r.eligible, 0);
    dream_store_close(s);
    dream_seam_shutdown();
}

/* Segments 3 noise conversations in one run with the grammar on or off; returns the result. */
static struct dream_segment_result segment_once(bool grammar)
{
    test_seam_use_tiny_gemma_grammar(3, 4096, !grammar);
    dream_store *s = noise_store(3);
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.max_tokens = grammar ? 1024 : 96;
    p.batch = 3;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    if (grammar)
        assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks k JOIN conversations c ON c.id = k.conversation "
                                              "WHERE k.first_position < 0 OR k.last_position >= c.message_count OR k.first_position > k.last_position"),
                         0);
    dream_store_close(s);
    dream_seam_shutdown();
    return r;
}

static void test_segment_noise_is_valid_under_the_grammar(void **state)
{
    (void)state;
    struct dream_segment_result on = segment_once(true), off = segment_once(false);
    printf("segment answers of the random model: %zu of %zu valid under the grammar, %zu of %zu without\n", on.segmented, on.eligible,
           off.segmented, off.eligible);
    assert_int_equal(on.eligible, 3);
    assert_int_equal(on.segmented, 3);
    assert_int_equal(on.failed, 0);
    assert_int_equal(off.segmented, 0);
}

/* What a run of the stage told its watchers, in order: the seam's events (c: a call began,
 * d: an input of it ended) and the stage's progress (p). */
static char timeline[512];
static void note(char kind, size_t done, size_t n)
{
    size_t len = strlen(timeline);
    if (kind == 'c') snprintf(timeline + len, sizeof timeline - len, "c%zu ", n);
    else snprintf(timeline + len, sizeof timeline - len, "%c%zu/%zu ", kind, done, n);
}
static void on_seam(void *ud, const struct dream_seam_event *ev)
{
    (void)ud;
    if (ev->kind == DREAM_SEAM_CALLS_START) note('c', 0, ev->n);
    else if (ev->kind == DREAM_SEAM_CALL_DONE) note('d', ev->done, ev->n);
}
static void on_items(void *ud, const char *stage, size_t done, size_t total)
{
    (void)ud;
    assert_string_equal(stage, "segment");
    note('p', done, total);
}

/* Progress as dream run shows it: the stage says how much work it has before the first batch,
 * and each model call of a batch is reported as it ends, one by one with its count (d1/3, d2/3,
 * d3/3), before the batch's conversations are reported done; never only once a batch is over. */
static void test_segment_reports_each_call_before_its_batch_is_done(void **state)
{
    (void)state;
    test_seam_use_tiny_gemma(3, 4096);
    dream_store *s = noise_store(6);
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.max_tokens = 1024;
    p.batch = 3;
    p.on_progress = on_items;
    timeline[0] = 0;
    dream_seam_set_watch(on_seam, NULL);
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    dream_seam_set_watch(NULL, NULL);
    printf("segment timeline: %s\n", timeline);
    assert_int_equal(r.segmented, 6);
    assert_string_equal(timeline, "p0/6 c3 d1/3 d2/3 d3/3 p3/6 c3 d1/3 d2/3 d3/3 p6/6 ");
    dream_store_close(s);
    dream_seam_shutdown();
}

/* The per-call grammar takes ids with quotes, backslashes, newlines and non-ASCII text: llama.cpp
 * accepts it, and every answer under it parses into anchors that are those ids or positions. */
static void test_segment_grammar_escapes_ids_and_keeps_anchors_in_range(void **state)
{
    (void)state;
    test_seam_use_tiny_gemma(1, 4096);
    const char *ids[] = {"m\"1", "back\\slash", "new\nline", "日本-3", "{\"json\": 4}"};
    enum { N = sizeof ids / sizeof ids[0] };
    char *grammar = NULL;
    assert_int_equal(segment_answer_grammar(ids, N, 7, &grammar), 0);
    const char *users[] = {"Split this: [user] (id: m\"1, position 7) hello", "Chunks, please.", "{\"chunks\": ["};
    for (size_t u = 0; u < sizeof users / sizeof users[0]; u++) {
        struct dream_local_input in = {.user = users[u], .grammar = grammar};
        struct dream_call_opts o = dream_call_default_opts();
        o.max_tokens = 1024;
        char *out = NULL;
        assert_int_equal(dream_call_local("chunk", &in, &o, &out), 0);
        struct segment_answer a;
        assert_int_equal(segment_answer_parse(out, strlen(out), &a), 0);
        for (size_t i = 0; i < a.n; i++) {
            const struct segment_anchor *an[2] = {&a.chunks[i].start, &a.chunks[i].end};
            for (int k = 0; k < 2; k++) {
                bool known = !an[k]->id && an[k]->position >= 7 && an[k]->position < 7 + N;
                for (size_t j = 0; an[k]->id && j < N; j++) known = known || !strcmp(an[k]->id, ids[j]);
                assert_true(known);
            }
        }
        printf("answer %zu under the chunk grammar: %zu chunk(s): %.120s\n", u, a.n, out);
        segment_answer_free(&a);
        free(out);
    }
    free(grammar);
    dream_seam_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_segment_noise_is_recorded_not_fatal),
                                       cmocka_unit_test(test_segment_noise_is_valid_under_the_grammar),
                                       cmocka_unit_test(test_segment_reports_each_call_before_its_batch_is_done),
                                       cmocka_unit_test(test_segment_grammar_escapes_ids_and_keeps_anchors_in_range)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
