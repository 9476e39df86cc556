/* test_extract_noise.c — the extract, resolve and route stages on the tiny random-weight Gemma 4
 * through the real seam (engine, template, batching). Its answers are noise; the test proves
 * noise is handled: nothing crashes, every chunk ends done or failed, whatever was kept is a
 * clean name with a normal form, and resolve and route leave the store consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/entity.h"
#include "dream/extract.h"
#include "dream/model.h"
#include "dream/store.h"
#include "entity_name.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_extract_noise_is_recorded_not_fatal(void **state)
{
    (void)state;
    test_seam_use_tiny_gemma(2, 4096);

    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    test_store_put_noise_conversations(s, 3);
    /* Chunks as the segment stage would store them (its own noise test covers it). */
    assert_int_equal(store_exec(s, "INSERT INTO chunks (conversation, first_position, last_position, label, revision, created_at) "
                                   "SELECT id, 0, 1, 'first', revision, 0 FROM conversations UNION ALL "
                                   "SELECT id, 2, 3, 'second', revision, 0 FROM conversations",
                                "inserting chunks"),
                     0);
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.max_tokens = 32;
    p.max_attempts = 2;
    p.batch = 3;
    for (int run = 0; run < 2; run++) {
        struct dream_extract_result r;
        assert_int_equal(dream_extract_run(s, &p, &r), 0);
        assert_int_equal(r.extracted + r.empty + r.failed, r.eligible);
    }
    /* Greedy noise is the same on the retry, so two runs settle every chunk. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract' AND status IN ('done', 'failed')"), 6);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE status = 'failed' AND (last_error IS NULL OR attempts <> 2)"), 0);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM chunk_mentions WHERE normal = '' OR length(CAST(surface AS BLOB)) > %d", ENTITY_NAME_MAX);
    assert_int_equal(test_store_scalar(s, sql), 0);
    struct dream_resolve_result rr;
    assert_int_equal(dream_resolve_run(s, NULL, &rr), 0);
    struct dream_route_result rt;
    assert_int_equal(dream_route_run(s, NULL, &rt), 0);
    assert_int_equal(rt.articles + rt.captured, rt.entities);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE entity IS NULL"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), 0);
    assert_int_equal(r.eligible, 0);
    dream_store_close(s);
    dream_seam_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_extract_noise_is_recorded_not_fatal)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
