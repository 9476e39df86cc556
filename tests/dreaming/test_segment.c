/* test_segment.c — the segment stage over the store, driven by a scripted fake backend that
 * answers the chunk stage deterministically from the prompt: expected chunks, the tolerant
 * parse, anchor repair, failed attempts and the retry limit, idempotent re-runs, and
 * re-segmentation of a grown conversation. Also runs over the ingest fixtures and the sample
 * corpus. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/util/buf.h"
#include "../src/util/utf8.h"
#include "dream/error.h"
#include "dream/ingest.h"
#include "dream/model.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "segment_answer.h"
#include "segment_fake.h"
#include "segment_snap.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ingest_dir, *examples_dir;

/* ---- the fake backend ---- */

enum fake_mode { FAKE_GOOD, FAKE_GARBAGE, FAKE_EMPTY, FAKE_OUT_OF_RANGE, FAKE_CALL_FAILS, FAKE_NO_MODEL, FAKE_SCRIPT, FAKE_POSITIONS };
static enum fake_mode fake_mode;
static const char *fake_script; /* the answer in FAKE_SCRIPT mode */
static int fake_calls, fake_inputs;
static size_t fake_biggest_prompt; /* bytes of the largest user turn seen */

static int fake_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                     char **out)
{
    (void)ud;
    (void)opts;
    fake_calls++;
    assert_string_equal(stage, "chunk");
    for (size_t i = 0; i < n; i++) {
        fake_inputs++;
        if (strlen(in[i].user) > fake_biggest_prompt) fake_biggest_prompt = strlen(in[i].user);
        assert_non_null(in[i].system); /* the chunk stage passes its own system text */
        switch (fake_mode) {
        case FAKE_GOOD: out[i] = fake_chunk_answer(in[i].user, false); break;
        case FAKE_POSITIONS: out[i] = fake_chunk_answer(in[i].user, true); break;
        case FAKE_GARBAGE: out[i] = strdup("I think this conversation is about many things."); break;
        case FAKE_EMPTY: out[i] = strdup(""); break;
        case FAKE_OUT_OF_RANGE:
            out[i] = strdup("{\"chunks\":[{\"start_message_id\": 0, \"end_message_id\": 999, \"label\": \"x\"}]}");
            break;
        case FAKE_CALL_FAILS:
        case FAKE_NO_MODEL: out[i] = NULL; break;
        case FAKE_SCRIPT: out[i] = strdup(fake_script); break;
        }
    }
    if (fake_mode == FAKE_CALL_FAILS) return dream_error_set(DREAM_ETOOBIG, "the prompt is larger than the fake context");
    if (fake_mode == FAKE_NO_MODEL) return dream_error_set(DREAM_ENOTFOUND, "no fake model found");
    return 0;
}

static int setup(void **state)
{
    dream_store *s;
    if (dream_store_open(":memory:", &s)) return -1;
    struct dream_backend fake = {.name = "fake", .call = fake_call};
    if (dream_seam_set_backend(&fake)) return -1;
    fake_mode = FAKE_GOOD;
    fake_script = NULL;
    fake_calls = fake_inputs = 0;
    fake_biggest_prompt = 0;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    dream_store_close(*state);
    dream_seam_set_backend(NULL);
    return 0;
}

/* ---- helpers ---- */

/* Puts a conversation of the n texts, alternating user/assistant, ids "<prefix>-<i>". */
static int64_t put_texts(dream_store *s, const char *id, const char *const *texts, size_t n, int64_t updated, const char *prefix)
{
    struct dream_message m[16];
    char ids[16][64];
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%s-%zu", prefix, i);
        m[i] = (struct dream_message){.role = i % 2 ? "assistant" : "user", .id = ids[i], .time_ms = updated, .text = texts[i]};
    }
    struct dream_conversation c = {.source = "openai-jsonl", .id = id, .title = id, .created_ms = 1000, .updated_ms = updated,
                                   .messages = m, .n_messages = n};
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "openai-jsonl", id, &got), 0);
    int64_t rowid = got->rowid;
    dream_store_conversation_free(got);
    return rowid;
}

/* Puts a conversation of n messages "message <i> of <id>". */
static int64_t put_conv(dream_store *s, const char *id, size_t n, int64_t updated, const char *prefix)
{
    char texts[16][64];
    const char *t[16];
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        snprintf(texts[i], sizeof texts[i], "message %zu of %s", i, id);
        t[i] = texts[i];
    }
    return put_texts(s, id, t, n, updated, prefix);
}

static void assert_store_consistent(dream_store *s)
{
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* Every chunk points inside its conversation. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks k JOIN conversations c ON c.id = k.conversation "
                                   "WHERE k.first_position < 0 OR k.last_position >= c.message_count "
                                   "OR k.first_position > k.last_position"),
                     0);
}

static struct dream_segment_result run(dream_store *s)
{
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.batch = 3;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    return r;
}

/* ---- tests ---- */

static void test_segment_cuts_one_chunk_per_user_turn(void **state)
{
    dream_store *s = *state;
    int64_t a = put_conv(s, "conv-a", 6, 2000, "a");
    int64_t b = put_conv(s, "conv-b", 2, 3000, "b");
    struct dream_segment_result r = run(s);
    assert_int_equal(r.eligible, 2);
    assert_int_equal(r.segmented, 2);
    assert_int_equal(r.chunks, 4);
    assert_int_equal(r.failed, 0);
    assert_int_equal(fake_calls, 1); /* both in one batch */
    struct dream_chunk *ch;
    size_t n;
    assert_int_equal(dream_segment_chunks(s, a, &ch, &n), 0);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(ch[i].first, 2 * i);
        assert_int_equal(ch[i].last, 2 * i + 1);
        char want[32];
        snprintf(want, sizeof want, "topic at %zu", 2 * i);
        assert_string_equal(ch[i].label, want);
    }
    dream_chunks_free(ch, n);
    assert_int_equal(dream_segment_chunks(s, b, &ch, &n), 0);
    assert_int_equal(n, 1);
    dream_chunks_free(ch, n);
    struct dream_stage_state st;
    assert_int_equal(dream_stage_state_get(s, "segment", a, &st), 0);
    assert_string_equal(st.status, "done");
    assert_int_equal(st.revision, 1);
    free(st.last_error);
    assert_store_consistent(s);
}

static void test_segment_rerun_is_a_noop(void **state)
{
    dream_store *s = *state;
    put_conv(s, "conv-a", 4, 2000, "a");
    run(s);
    int64_t before = test_store_scalar(s, "SELECT count(*) FROM chunks");
    fake_calls = 0;
    struct dream_segment_result r = run(s);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(fake_calls, 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks"), before);
}

static void test_segment_bad_answers_are_failed_attempts_until_the_limit(void **state)
{
    dream_store *s = *state;
    const enum fake_mode bad[] = {FAKE_GARBAGE, FAKE_EMPTY, FAKE_OUT_OF_RANGE, FAKE_CALL_FAILS};
    const char *const why[] = {"no chunk list", "empty", "999", "larger than the fake context"};
    for (size_t k = 0; k < 4; k++) {
        char id[32];
        snprintf(id, sizeof id, "bad-%zu", k);
        int64_t c = put_conv(s, id, 4, 2000 + (int64_t)k, id);
        fake_mode = bad[k];
        for (int attempt = 1; attempt <= 3; attempt++) {
            struct dream_segment_result r = run(s);
            assert_int_equal(r.eligible, 1);
            assert_int_equal(r.failed, 1);
            assert_int_equal(r.segmented, 0);
            assert_int_equal(r.gave_up, attempt == 3 ? 1 : 0);
            struct dream_stage_state st;
            assert_int_equal(dream_stage_state_get(s, "segment", c, &st), 0);
            assert_string_equal(st.status, attempt == 3 ? "failed" : "pending");
            assert_int_equal(st.attempts, attempt);
            assert_non_null(st.last_error);
            assert_non_null(strstr(st.last_error, why[k]));
            free(st.last_error);
        }
        /* No endless retries: a failed conversation is left alone until its content changes. */
        assert_int_equal(run(s).eligible, 0);
        assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks"), 0);
        assert_store_consistent(s);
    }
}

static void on_bad_text(void *ud, const struct dream_store_bad_text *bad)
{
    (void)ud;
    fprintf(stderr, "invalid UTF-8: %s %s %s\n", bad->table, bad->row, bad->column);
}

static void test_segment_error_quoting_the_answer_cuts_between_characters(void **state)
{
    /* The error quotes the answer's first 60 bytes; byte 60 is the second of "é". Cut through,
     * the stored last_error held a lone 0xC3 (issue 18.5), which Python's sqlite3 cannot read. */
    dream_store *s = *state;
    int64_t c = put_conv(s, "cut", 4, 2000, "m");
    char answer[128];
    memset(answer, 'x', 59);
    snprintf(answer + 59, sizeof answer - 59, "\xC3\xA9 and then no chunk list at all");
    fake_mode = FAKE_SCRIPT;
    fake_script = answer;
    assert_int_equal(run(s).failed, 1);
    struct dream_stage_state st;
    assert_int_equal(dream_stage_state_get(s, "segment", c, &st), 0);
    assert_non_null(st.last_error);
    assert_int_equal(utf8_valid_prefix(st.last_error, strlen(st.last_error)), strlen(st.last_error));
    /* the whole character goes, and the quote says it was cut */
    char want[80];
    memset(want, 'x', 59);
    snprintf(want + 59, sizeof want - 59, "...");
    assert_non_null(strstr(st.last_error, want));
    free(st.last_error);
    /* the store's own check finds nothing to name */
    size_t bad = 99;
    assert_int_equal(dream_store_check_text(s, on_bad_text, NULL, &bad), 0);
    assert_int_equal(bad, 0);
}

static void test_segment_failed_conversation_retried_after_it_grows(void **state)
{
    dream_store *s = *state;
    int64_t c = put_conv(s, "conv", 4, 2000, "m");
    fake_mode = FAKE_GARBAGE;
    for (int i = 0; i < 3; i++) run(s);
    fake_mode = FAKE_GOOD;
    assert_int_equal(run(s).eligible, 0);
    put_conv(s, "conv", 6, 3000, "m");
    struct dream_segment_result r = run(s);
    assert_int_equal(r.segmented, 1);
    struct dream_stage_state st;
    assert_int_equal(dream_stage_state_get(s, "segment", c, &st), 0);
    assert_string_equal(st.status, "done");
    assert_int_equal(st.attempts, 0);
    assert_int_equal(st.revision, 2);
    free(st.last_error);
}

static void test_segment_grown_conversation_is_resegmented_keeping_unchanged_chunks(void **state)
{
    dream_store *s = *state;
    int64_t c = put_conv(s, "conv", 4, 2000, "m");
    run(s);
    struct dream_chunk *ch;
    size_t n;
    assert_int_equal(dream_segment_chunks(s, c, &ch, &n), 0);
    assert_int_equal(n, 2);
    int64_t first_id = ch[0].id;
    dream_chunks_free(ch, n);

    put_conv(s, "conv", 8, 5000, "m"); /* two more exchanges */
    struct dream_segment_result r = run(s);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.segmented, 1);
    assert_int_equal(dream_segment_chunks(s, c, &ch, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ch[0].id, first_id); /* the unchanged range keeps its row */
    assert_int_equal(ch[3].first, 6);
    assert_int_equal(ch[3].last, 7);
    for (size_t i = 0; i < n; i++) assert_int_equal(ch[i].revision, 2);
    dream_chunks_free(ch, n);
    assert_store_consistent(s);
}

static void test_segment_repairs_anchors(void **state)
{
    dream_store *s = *state;
    /* Message ids "msg-0000000000-<i>": a long shared stem, so prefix repair must not snap to it. */
    int64_t c = put_conv(s, "conv-x", 8, 2000, "msg-0000000000");
    fake_mode = FAKE_SCRIPT;
    /* inverted range (3..1 → 1..3); conversation id as start → 0; a position (5); a trailing gap
     * (ends at 6 of 0..7 → extended to 7); a duplicate range dropped; a single object wrapper. */
    fake_script = "[{\"start_message_id\": \"conv-x\", \"end_message_id\": \"msg-0000000000-0\", \"label\": \"  one \"},"
                  " {\"start\": \"msg-0000000000-3\", \"end\": \"msg-0000000000-1\", \"title\": \"two\"},"
                  " {\"start_message_id\": 5, \"end_message_id\": \"6\", \"label\": \"three\"},"
                  " {\"start_message_id\": 5, \"end_message_id\": \"6\", \"label\": \"dup\"}]";
    struct dream_segment_result r = run(s);
    assert_int_equal(r.segmented, 1);
    assert_int_equal(r.chunks, 3);
    struct dream_chunk *ch;
    size_t n;
    assert_int_equal(dream_segment_chunks(s, c, &ch, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(ch[0].first, 0);
    assert_int_equal(ch[0].last, 0);
    assert_string_equal(ch[0].label, "one");
    assert_int_equal(ch[1].first, 1);
    assert_int_equal(ch[1].last, 3);
    assert_string_equal(ch[1].label, "two");
    assert_int_equal(ch[2].first, 5);
    assert_int_equal(ch[2].last, 7);
    dream_chunks_free(ch, n);
}

static void test_segment_prefix_repair_only_past_the_shared_stem(void **state)
{
    dream_store *s = *state;
    int64_t c = put_conv(s, "conv-y", 4, 2000, "msg-0000000000");
    fake_mode = FAKE_SCRIPT;
    /* Only the stem every id shares: must not snap to any message (spec §12 item 16). */
    fake_script = "{\"chunks\": [{\"start_message_id\": \"msg-0000000000-9\", \"end_message_id\": \"msg-0000000000-3\", \"label\": \"x\"}]}";
    struct dream_segment_result r = run(s);
    assert_int_equal(r.failed, 1);
    struct dream_stage_state st;
    assert_int_equal(dream_stage_state_get(s, "segment", c, &st), 0);
    assert_non_null(strstr(st.last_error, "names no message"));
    free(st.last_error);

    /* A distinctive id garbled only in its tail is repaired. */
    int64_t d = put_conv(s, "conv-z", 2, 3000, "uuid");
    (void)d;
    dream_store_put(s,
                    &(struct dream_conversation){
                        .source = "openai-jsonl", .id = "conv-w", .title = "w", .updated_ms = 4000,
                        .messages = (struct dream_message[]){{"user", "5f2a9c1e-aaaa", 0, "q"}, {"assistant", "b71d03ff-bbbb", 0, "a"}},
                        .n_messages = 2},
                    &(enum dream_store_outcome){0});
    fake_script = "{\"chunks\": [{\"start_message_id\": \"5f2a9c1e-aaXX\", \"end_message_id\": \"b71d03ff-bbbb\", \"label\": \"w\"}]}";
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    struct dream_store_conversation *w;
    assert_int_equal(dream_store_get(s, "openai-jsonl", "conv-w", &w), 0);
    p.conversation = w->rowid;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    assert_int_equal(r.segmented, 1);
    dream_store_conversation_free(w);
}

static void test_segment_missing_model_stops_the_run_without_charging_attempts(void **state)
{
    dream_store *s = *state;
    put_conv(s, "conv-a", 4, 2000, "a");
    fake_mode = FAKE_NO_MODEL;
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), DREAM_ENOTFOUND);
    assert_non_null(strstr(dream_error_last(), "no fake model"));
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state"), 0);
    fake_mode = FAKE_GOOD;
    assert_int_equal(run(s).segmented, 1);
}

/* Puts a conversation of n messages of text_len bytes each; users sometimes ask twice in a row. */
static int64_t put_long_conv(dream_store *s, const char *id, size_t n, size_t text_len)
{
    struct dream_message *m = calloc(n, sizeof *m);
    char (*ids)[32] = calloc(n, sizeof *ids);
    char *text = malloc(text_len + 1);
    assert_true(m && ids && text);
    memset(text, 'w', text_len);
    text[text_len] = '\0';
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%s-%zu", id, i);
        bool user = i % 2 == 0 || i % 7 == 3;
        m[i] = (struct dream_message){user ? "user" : "assistant", ids[i], 0, text};
    }
    struct dream_conversation c = {.source = "pi", .id = id, .title = id, .updated_ms = 100, .messages = m, .n_messages = n};
    assert_int_equal(dream_store_put(s, &c, &(enum dream_store_outcome){0}), 0);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "pi", id, &got), 0);
    int64_t rowid = got->rowid;
    dream_store_conversation_free(got);
    free(m);
    free(ids);
    free(text);
    return rowid;
}

/* Segments conversation id (n messages) with the given window size; returns its chunks as text. */
static char *segment_as_text(size_t n, size_t text_len, size_t window_bytes, size_t *inputs, size_t *biggest)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    int64_t c = put_long_conv(s, "long", n, text_len);
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.window_bytes = window_bytes;
    fake_inputs = 0;
    fake_biggest_prompt = 0;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    assert_int_equal(r.segmented, 1);
    *inputs = (size_t)fake_inputs;
    *biggest = fake_biggest_prompt;
    struct dream_chunk *ch;
    size_t nc;
    assert_int_equal(dream_segment_chunks(s, c, &ch, &nc), 0);
    struct dbuf b = {0};
    for (size_t i = 0; i < nc; i++) dbuf_printf(&b, "%lld-%lld %s\n", (long long)ch[i].first, (long long)ch[i].last, ch[i].label);
    dream_chunks_free(ch, nc);
    dream_store_close(s);
    return dbuf_take(&b);
}

static void test_segment_windows_merge_to_the_unwindowed_chunks(void **state)
{
    (void)state;
    size_t in1, in2, big1, big2;
    char *whole = segment_as_text(120, 300, 0, &in1, &big1);
    char *windowed = segment_as_text(120, 300, 6000, &in2, &big2);
    assert_int_equal(in1, 1);
    assert_true(in2 > 5);
    assert_true(big2 < 6000 + 4096); /* a window's transcript, plus instructions and policy */
    assert_string_equal(windowed, whole);
    /* Anchors given as the positions the transcript shows are positions in the conversation,
     * not in the window. */
    fake_mode = FAKE_POSITIONS;
    char *by_position = segment_as_text(120, 300, 6000, &in2, &big2);
    assert_string_equal(by_position, whole);
    free(by_position);
    free(whole);
    free(windowed);
}

/* A conversation of about 300,000 tokens (1.2 MB of text) is asked about in windows whose prompts
 * stay within the window budget, and every message ends up in a chunk. */
static void test_segment_giant_conversation_in_bounded_windows(void **state)
{
    (void)state;
    size_t inputs, biggest;
    char *chunks = segment_as_text(2400, 500, 24000, &inputs, &biggest);
    assert_true(inputs >= 40);
    assert_true(biggest < 24000 + 4096);
    assert_non_null(strstr(chunks, "0-"));
    assert_non_null(strstr(chunks, "-2399 "));
    free(chunks);
}

static void test_segment_skips_conversation_without_assistant(void **state)
{
    dream_store *s = *state;
    struct dream_message m[] = {{"user", "u0", 0, "hello"}, {"user", "u1", 0, "anyone?"}};
    struct dream_conversation c = {.source = "openai-jsonl", .id = "lonely", .title = "", .updated_ms = 10, .messages = m, .n_messages = 2};
    assert_int_equal(dream_store_put(s, &c, &(enum dream_store_outcome){0}), 0);
    struct dream_segment_result r = run(s);
    assert_int_equal(r.skipped, 1);
    assert_int_equal(fake_inputs, 0);
    assert_int_equal(run(s).eligible, 0);
}

static void test_segment_dry_run_touches_nothing(void **state)
{
    dream_store *s = *state;
    put_conv(s, "conv-a", 4, 2000, "a");
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.dry_run = true;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(fake_calls, 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state"), 0);
}

static void test_segment_limit_walks_oldest_first(void **state)
{
    dream_store *s = *state;
    int64_t newer = put_conv(s, "newer", 2, 9000, "n");
    int64_t older = put_conv(s, "older", 2, 1000, "o");
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.limit = 1;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    struct dream_stage_state st;
    assert_int_equal(dream_stage_state_get(s, "segment", older, &st), 0);
    assert_string_equal(st.status, "done");
    assert_int_equal(dream_stage_state_get(s, "segment", newer, &st), 0);
    assert_string_equal(st.status, "none");
}

static void test_segment_over_fixture_and_sample_corpus(void **state)
{
    dream_store *s = *state;
    struct dream_ingest_params ip = dream_ingest_default_params();
    struct dream_ingest_stats stats = {0};
    const char *const dirs[] = {ingest_dir, examples_dir};
    for (size_t i = 0; i < 2; i++) dream_ingest_path(s, dirs[i], &ip, &stats); /* malformed fixtures are skipped */
    int64_t convs = test_store_scalar(s, "SELECT count(*) FROM conversations");
    assert_true(convs >= 12);
    struct dream_segment_result r = run(s);
    assert_int_equal((int64_t)r.eligible, convs);
    assert_int_equal(r.failed, 0);
    assert_int_equal((int64_t)(r.segmented + r.skipped), convs);
    assert_true(r.chunks >= r.segmented);
    /* Each segmented conversation is covered to its last message. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM conversations c JOIN stage_state s ON s.item = c.id AND s.stage = 'segment' "
                                   "WHERE s.status = 'done' AND EXISTS (SELECT 1 FROM chunks k WHERE k.conversation = c.id) AND "
                                   "(SELECT max(last_position) FROM chunks k WHERE k.conversation = c.id) <> c.message_count - 1"),
                     0);
    assert_store_consistent(s);
    fake_calls = 0;
    assert_int_equal(run(s).eligible, 0);
    assert_int_equal(fake_calls, 0);
}

/* ---- cuts where the words change (segment_snap.h) ---- */

/* Two topics of four messages each, the second starting at position 4. */
static const char *const two_topics[] = {
    "My sourdough starter smells sour and the flour sits on top. Should I feed the starter more flour?",
    "Feed the sourdough starter equal weights of flour and water; a sour smell means the starter is hungry.",
    "The starter doubled after the flour feed. How warm should the sourdough rise be?",
    "A sourdough starter rises best when warm; keep the flour and the starter jar near the oven.",
    "My bicycle chain squeaks on the commute and the tyres look worn.",
    "Oil the bicycle chain after a wet commute and check the tyres for worn tread.",
    "The chain stopped squeaking. Which tyres suit a commute bicycle in winter?",
    "For a winter commute, wider tyres with studs keep the bicycle steady; oil the chain weekly.",
};

/* Runs the stage over conversation conv alone, the fake answering script, cuts moved within reach. */
static struct dream_segment_result run_script(dream_store *s, int64_t conv, const char *script, size_t reach)
{
    fake_mode = FAKE_SCRIPT;
    fake_script = script;
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.conversation = conv;
    p.snap_reach = reach;
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, &p, &r), 0);
    return r;
}

/* Stores two_topics as conversation `name`, has the fake answer two chunks a0-a1 and b0-b1, runs
 * the stage with the given snap reach, and checks the cuts it moved and the chunks it stored. */
static void stage_case(dream_store *s, const char *name, int a0, int a1, int b0, int b1, size_t reach, size_t want_moved, int64_t w0,
                       int64_t w1, int64_t w2, int64_t w3)
{
    int64_t conv = put_texts(s, name, two_topics, 8, 2000, name);
    char script[256];
    snprintf(script, sizeof script,
             "{\"chunks\": [{\"start_message_id\": %d, \"end_message_id\": %d, \"label\": \"first\"},"
             " {\"start_message_id\": %d, \"end_message_id\": %d, \"label\": \"second\"}]}",
             a0, a1, b0, b1);
    struct dream_segment_result r = run_script(s, conv, script, reach);
    assert_int_equal(r.moved, want_moved);
    struct dream_chunk *ch;
    size_t n;
    assert_int_equal(dream_segment_chunks(s, conv, &ch, &n), 0);
    assert_int_equal(n, 2);
    int64_t got[4] = {ch[0].first, ch[0].last, ch[1].first, ch[1].last};
    int64_t want[4] = {w0, w1, w2, w3};
    assert_memory_equal(got, want, sizeof got);
    assert_string_equal(ch[1].label, "second");
    dream_chunks_free(ch, n);
}

/* The model cuts an exchange early (at 2) or late (at 6): the stage stores the cut at 4, where
 * the words change, and counts it; a cut already there stays; with snap_reach 0 every cut stays
 * where the model put it. */
static void test_segment_moves_a_cut_to_where_the_words_change(void **state)
{
    dream_store *s = *state;
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    assert_int_equal(p.snap_reach, 6);
    stage_case(s, "early", 0, 1, 2, 7, p.snap_reach, 1, 0, 3, 4, 7);
    stage_case(s, "late", 0, 6, 6, 7, p.snap_reach, 1, 0, 4, 4, 7); /* sharing one message, now the cut's */
    stage_case(s, "right", 0, 3, 4, 7, p.snap_reach, 0, 0, 3, 4, 7);
    stage_case(s, "kept", 0, 1, 2, 7, 0, 0, 0, 1, 2, 7);
    assert_store_consistent(s);
}

/* Runs segment_snap over 8 messages (user, assistant, ...) with the chunks given as "a-b c-d ...",
 * and checks how many cuts moved and the chunks it leaves, in the same form. */
static void snap_case_cued(const char *const *texts, const char *given, size_t want_moved, size_t want_cued, const char *want)
{
    const char *roles[8];
    for (size_t i = 0; i < 8; i++) roles[i] = i % 2 ? "assistant" : "user";
    struct snap_range r[8];
    size_t nr = 0;
    for (const char *q = given; *q && nr < 8; nr++) {
        char *end;
        r[nr].first = strtoul(q, &end, 10);
        r[nr].last = strtoul(end + 1, &end, 10);
        q = *end ? end + 1 : end;
    }
    struct snap_params p;
    segment_snap_default_params(&p);
    size_t moved = 99, cued = 99;
    assert_int_equal(segment_snap(roles, texts, 8, r, nr, &p, &moved, &cued), 0);
    char got[128] = "";
    for (size_t i = 0; i < nr; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu-%zu", i ? " " : "", r[i].first, r[i].last);
    assert_string_equal(got, want);
    assert_int_equal(moved, want_moved);
    assert_int_equal(cued, want_cued);
}

static void snap_case(const char *const *texts, const char *given, size_t want_moved, const char *want)
{
    snap_case_cued(texts, given, want_moved, 0, want);
}

/* What the cut is judged by, and what it leaves alone. */
static void test_segment_snap_words_and_limits(void **state)
{
    (void)state;
    /* Words: case folded; function words, one- and two-letter words gone; other bytes separate. */
    unsigned long long w[16], v[16];
    const char *t = "The Sourdough starter's FLOUR, and the flour; caf\xc3\xa9 x2abc it's";
    size_t n = segment_snap_words(t, strlen(t), w, 16);
    assert_int_equal(n, 7); /* sourdough starter's flour flour caf abc it's */
    assert_true(w[2] == w[3]);
    assert_int_equal(segment_snap_words("sourdough", 9, v, 16), 1);
    assert_true(v[0] == w[0]);
    assert_int_equal(segment_snap_words(t, strlen(t), w, 2), 7); /* the count, beyond the cap */
    const char *stop = "What would you think about this? They were really good, thanks, and we have more than that. OK.";
    assert_int_equal(segment_snap_words(stop, strlen(stop), w, 16), 0);
    assert_int_equal(segment_snap_words(NULL, 0, w, 16), 0);

    /* Early and late cuts move to 4; the earlier chunk follows, sharing the cut's message if it did. */
    snap_case(two_topics, "0-1 2-7", 1, "0-3 4-7");
    snap_case(two_topics, "0-6 6-7", 1, "0-4 4-7");
    snap_case(two_topics, "0-3 4-7", 0, "0-3 4-7");
    /* Cuts move left to right, each within its neighbours' (already moved) starts, so every chunk
     * keeps a message: the cut at 6 goes to 4, and the one at 7 (an assistant's) can then go no
     * lower than 5, where the words change least among the assistant's messages it may take. */
    snap_case(two_topics, "0-5 6-6 7-7", 2, "0-3 4-4 5-7");
    /* Only onto a message of the cut's role: the words change most at the user's 4, which a cut on
     * an assistant's message (3) may not take, and no other assistant's message is clearly less
     * cohesive than 3, so it stays. */
    snap_case(two_topics, "0-2 3-7", 0, "0-2 3-7");
    /* Neighbours that overlap, nest or leave a gap keep their cut as the model gave it; a chained
     * pair beside them still has its cut moved, never before the chunk it follows starts. */
    snap_case(two_topics, "0-5 2-5 6-7", 1, "0-5 2-3 4-7");
    snap_case(two_topics, "0-7 2-3", 0, "0-7 2-3");
    snap_case(two_topics, "0-0 2-7", 0, "0-0 2-7");
    /* Text without words of this kind (another script, digits) moves nothing. */
    const char *other[8];
    for (size_t i = 0; i < 8; i++) other[i] = i < 4 ? "\xd0\xbf\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 2024" : "\xe4\xbd\xa0\xe5\xa5\xbd 42";
    snap_case(other, "0-1 2-7", 0, "0-1 2-7");
    /* One topic throughout: no place is clearly less cohesive than the model's, so the cut stays. */
    const char *same[8];
    for (size_t i = 0; i < 8; i++) same[i] = two_topics[i % 4];
    snap_case(same, "0-1 2-7", 0, "0-1 2-7");
}

/* Where the person says the topic changes ("Changing the subject: ..."), the cut goes there: a
 * cut on such a message stays whatever the words say, the nearest one within reach takes a cut,
 * before any place the words suggest, and only the person's (the user's) messages count. */
static void test_segment_snap_takes_the_person_s_topic_change(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool cue;
    } phrases[] = {
        {"Changing the subject: my bicycle chain squeaks.", true},
        {"Got it, thanks. Okay, next topic. Back to fan dance.", true},
        {"While I have you \xe2\x80\x94 something else. Something came up with Leonard.", true},
        {"UNRELATED QUESTION. Which tyres suit winter?", true},
        {"On another note, the oven is broken.", true},
        {"Also, totally separate question: my app keeps its data in SQLite.", true},
        {"I need something else for the garden than a rake.", false},
        {"That is an indifferent topic to me.", false},
        {"Which flour should I feed the starter, and how often, and at what temperature, given that my kitchen is cold? "
         "Different topic: the bike.",
         false}, /* past the opening bytes */
        {"", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++) {
        if (segment_snap_cue(phrases[i].text) != phrases[i].cue) fprintf(stderr, "phrase %zu\n", i);
        assert_int_equal(segment_snap_cue(phrases[i].text), phrases[i].cue);
    }
    const char *cued[8], *one[8];
    for (size_t i = 0; i < 8; i++) cued[i] = two_topics[i], one[i] = two_topics[i % 4];
    cued[4] = "Changing the subject: my bicycle chain squeaks on the commute and the tyres look worn.";
    snap_case_cued(cued, "0-1 2-7", 0, 1, "0-3 4-7");
    snap_case_cued(cued, "0-6 6-7", 0, 1, "0-4 4-7");
    snap_case_cued(cued, "0-3 4-7", 0, 0, "0-3 4-7");
    /* one topic throughout, but the person says it changes at 6: the cut goes there from 2, and
     * one there stays (the words would move neither) */
    one[6] = "Different topic: the starter doubled after the flour feed. How warm should the sourdough rise be?";
    snap_case_cued(one, "0-1 2-7", 0, 1, "0-5 6-7");
    snap_case_cued(one, "0-5 6-7", 0, 0, "0-5 6-7");
    /* the words alone would move the cut at 6 to 4; the person's cue at 6 keeps it */
    const char *both[8];
    for (size_t i = 0; i < 8; i++) both[i] = two_topics[i];
    both[6] = "Different topic: the chain stopped squeaking. Which tyres suit a commute bicycle in winter?";
    snap_case_cued(both, "0-5 6-7", 0, 0, "0-5 6-7");
    /* the assistant's words do not count */
    const char *asst[8];
    for (size_t i = 0; i < 8; i++) asst[i] = one[i % 4];
    asst[5] = "Changing the subject: feed the starter again tomorrow.";
    snap_case_cued(asst, "0-1 2-7", 0, 0, "0-1 2-7");
}

/* A chunk the model gave whole is split where the person says the topic changes, both parts
 * with its label; with snap_reach 0 the model's chunk stays as it gave it. */
static void test_segment_splits_a_chunk_where_the_person_changes_the_subject(void **state)
{
    dream_store *s = *state;
    const char *texts[8];
    for (size_t i = 0; i < 8; i++) texts[i] = two_topics[i];
    texts[4] = "Changing the subject: my bicycle chain squeaks on the commute and the tyres look worn.";
    for (size_t reach = 0; reach < 7; reach += 6) {
        char name[32];
        snprintf(name, sizeof name, "split-%zu", reach);
        int64_t conv = put_texts(s, name, texts, 8, 2000, name);
        struct dream_segment_result r =
            run_script(s, conv, "{\"chunks\": [{\"start_message_id\": 0, \"end_message_id\": 7, \"label\": \"whole\"}]}", reach);
        assert_int_equal(r.cued, reach ? 1 : 0);
        assert_int_equal(r.chunks, reach ? 2 : 1);
        struct dream_chunk *ch;
        size_t n;
        assert_int_equal(dream_segment_chunks(s, conv, &ch, &n), 0);
        assert_int_equal(n, reach ? 2 : 1);
        assert_int_equal(ch[0].first, 0);
        assert_int_equal(ch[0].last, reach ? 3 : 7);
        assert_string_equal(ch[0].label, "whole");
        if (reach) {
            assert_int_equal(ch[1].first, 4);
            assert_int_equal(ch[1].last, 7);
            assert_string_equal(ch[1].label, "whole");
        }
        dream_chunks_free(ch, n);
    }
    assert_store_consistent(s);
}

static void test_segment_answer_parse_tolerates_wrappers(void **state)
{
    (void)state;
    const char *const ok[] = {
        "{\"chunks\": []}",
        "```json\n{\"chunks\": [{\"start_message_id\": \"a\", \"end_message_id\": \"b\", \"label\": \"l\"}]}\n```",
        "Sure! {\"chunks\": [{\"start_message_id\": \"a\", \"end_message_id\": \"b\"}]} Hope it helps.",
        "{\"start_message_id\": \"a\", \"end_message_id\": \"b\", \"label\": \"one\"}",
        "[{\"start\": 1, \"end\": 2}]",
        "```\n[{\"start\": 1, \"end\": 2}]",
    };
    const size_t want[] = {0, 1, 1, 1, 1, 1};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct segment_answer a;
        assert_int_equal(segment_answer_parse(ok[i], strlen(ok[i]), &a), 0);
        assert_int_equal(a.n, want[i]);
        segment_answer_free(&a);
    }
    const char *const bad[] = {"", "no json here", "{\"chunks\": [{\"label\": \"x\"}]}", "{\"chunks\": 3}", "[1, 2]",
                               "{\"chunks\": [{\"start\": true, \"end\": 1}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct segment_answer a;
        assert_int_equal(segment_answer_parse(bad[i], strlen(bad[i]), &a), DREAM_EFORMAT);
        segment_answer_free(&a);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_segment INGEST_FIXTURES_DIR EXAMPLES_DIR\n");
        return 2;
    }
    ingest_dir = argv[1];
    examples_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_segment_cuts_one_chunk_per_user_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_rerun_is_a_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_bad_answers_are_failed_attempts_until_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_error_quoting_the_answer_cuts_between_characters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_failed_conversation_retried_after_it_grows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_grown_conversation_is_resegmented_keeping_unchanged_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_repairs_anchors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_prefix_repair_only_past_the_shared_stem, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_missing_model_stops_the_run_without_charging_attempts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_windows_merge_to_the_unwindowed_chunks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_giant_conversation_in_bounded_windows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_skips_conversation_without_assistant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_dry_run_touches_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_limit_walks_oldest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_segment_over_fixture_and_sample_corpus, setup, teardown),
        cmocka_unit_test(test_segment_snap_takes_the_person_s_topic_change),
        cmocka_unit_test_setup_teardown(test_segment_splits_a_chunk_where_the_person_changes_the_subject, setup, teardown),
        cmocka_unit_test(test_segment_answer_parse_tolerates_wrappers),
        cmocka_unit_test_setup_teardown(test_segment_moves_a_cut_to_where_the_words_change, setup, teardown),
        cmocka_unit_test(test_segment_snap_words_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
