/* test_segment_noise.c — the segment stage on the tiny random-weight Gemma 4 through the real
 * seam (engine, template, batching). Its answers are noise; the test proves noise is handled:
 * nothing crashes, unusable answers become failed attempts up to the retry limit, every
 * conversation ends done or failed, and the store stays consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/model.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_segment_noise_is_recorded_not_fatal(void **state)
{
    (void)state;
    test_seam_use_tiny_gemma(2, 4096);

    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    test_store_put_noise_conversations(s, 3);
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_segment_noise_is_recorded_not_fatal)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
