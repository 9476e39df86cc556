/* test_dreaming_fixture.c — segment → extract → resolve → route over the fixture corpus
 * (tests/data/dreaming: 13 conversations in 3 formats about 5 recurring subjects), with the
 * scripted fake backend of tests/support/dreaming_fake.c. The chunks (message ranges and labels), the
 * entities (canonical names and the surface forms folded into each) and the routes must equal
 * tests/data/dreaming/EXPECTED.txt exactly; a second run changes nothing; the engagement gate
 * promotes exactly the engaged one-off; without the alias seeds the aliases mint entities of
 * their own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/entity.h"
#include "dream/extract.h"
#include "dream/model.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "dreaming_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir; /* tests/data/dreaming */
static char corpus[4096], wiki[4096], expected_path[4096];

static int setup(void **state)
{
    dream_store *s;
    if (dream_store_open(":memory:", &s)) return -1;
    if (fixture_ingest(s, corpus)) return -1;
    dreaming_fake_calls = 0;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    dream_store_close(*state);
    return 0;
}

/* Prints both texts when they differ, so a failure shows what changed. */
static void assert_text_equal(const char *got, const char *want)
{
    if (strcmp(got, want) != 0) fprintf(stderr, "--- expected ---\n%s--- got ---\n%s", want, got);
    assert_string_equal(got, want);
}

static void test_fixture_corpus_has_three_formats_and_twelve_conversations(void **state)
{
    dream_store *s = *state;
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM conversations"), 13);
    assert_int_equal(test_store_scalar(s, "SELECT count(DISTINCT source) FROM conversations"), 3);
    assert_true(test_store_scalar(s, "SELECT min(n) FROM (SELECT count(*) AS n FROM conversations GROUP BY source)") >= 4);
}

static void test_fixture_pipeline_gives_expected_chunks_entities_routes(void **state)
{
    dream_store *s = *state;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    char *got = fixture_describe(s);
    char *want = fixture_expected(expected_path, "chunk entity");
    assert_non_null(got);
    assert_non_null(want);
    assert_true(strlen(want) > 1000); /* the expectations were read, not an empty file */
    assert_text_equal(got, want);
    free(got);
    free(want);
    /* Every chunk was extracted at its revision; none failed. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract' AND status = 'done'"),
                     test_store_scalar(s, "SELECT count(*) FROM chunks"));
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE status <> 'done'"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE entity IS NULL"), 0);
}

/* Progress events, as "stage done/total" lines. */
static char progress_log[4096];
static void record_progress(void *ud, const char *stage, size_t done, size_t total)
{
    (void)ud;
    size_t len = strlen(progress_log);
    snprintf(progress_log + len, sizeof progress_log - len, "%s %zu/%zu\n", stage, done, total);
}

static void test_fixture_stages_report_progress_after_each_batch(void **state)
{
    dream_store *s = *state;
    progress_log[0] = '\0';
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, record_progress, NULL), 0);
    /* 13 conversations in batches of 3; 18 chunks in batches of 4 (each stage says first how
     * much work it has); 17 chunks with names, one resolve transaction each; route once
     * (reported by the fixture runner). */
    assert_text_equal(progress_log, "segment 0/13\nsegment 3/13\nsegment 6/13\nsegment 9/13\nsegment 12/13\nsegment 13/13\n"
                                    "extract 0/18\nextract 4/18\nextract 8/18\nextract 12/18\nextract 16/18\nextract 18/18\n"
                                    "resolve 1/17\nresolve 2/17\nresolve 3/17\nresolve 4/17\nresolve 5/17\nresolve 6/17\n"
                                    "resolve 7/17\nresolve 8/17\nresolve 9/17\nresolve 10/17\nresolve 11/17\nresolve 12/17\n"
                                    "resolve 13/17\nresolve 14/17\nresolve 15/17\nresolve 16/17\nresolve 17/17\nroute 1/1\n");
}

static void test_fixture_second_run_changes_nothing(void **state)
{
    dream_store *s = *state;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    char *before = fixture_dump_tables(s);
    long calls = dreaming_fake_calls;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    assert_int_equal(dreaming_fake_calls, calls); /* no model call: nothing left to do */
    char *after = fixture_dump_tables(s);
    assert_non_null(before);
    assert_non_null(after);
    assert_text_equal(after, before);
    free(before);
    free(after);
}

static void test_fixture_engagement_gate_promotes_the_engaged_one_off(void **state)
{
    dream_store *s = *state;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE route = 'article'"), 5);
    /* Off by default: the dry run with the gate counts what it would add, and writes nothing. */
    struct dream_route_params p;
    dream_route_default_params(&p);
    assert_int_equal(p.min_user_messages, 0);
    setenv("DREAM_ROUTE_ENGAGEMENT", "3", 1);
    dream_route_default_params(&p);
    assert_int_equal(p.min_user_messages, 3);
    setenv("DREAM_ROUTE_ENGAGEMENT", "three", 1); /* not a number: a warning, and the gate stays off */
    dream_route_default_params(&p);
    assert_int_equal(p.min_user_messages, 0);
    unsetenv("DREAM_ROUTE_ENGAGEMENT");
    p.min_user_messages = 3;
    p.dry_run = true;
    struct dream_route_result r;
    assert_int_equal(dream_route_run(s, &p, &r), 0);
    assert_int_equal(r.newly, 1);
    assert_int_equal(r.engaged, 1);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE route = 'article'"), 5);
    p.dry_run = false;
    assert_int_equal(dream_route_run(s, &p, &r), 0);
    assert_int_equal(r.articles, 6);
    char *want = fixture_expected(expected_path, "engaged");
    assert_non_null(want);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s),
                                        "SELECT name FROM pipeline_entities WHERE route = 'article' AND chunk_count < 2 ORDER BY name", -1,
                                        &st, NULL),
                     SQLITE_OK);
    char got[1024] = "";
    while (sqlite3_step(st) == SQLITE_ROW) {
        strcat(got, "engaged ");
        strncat(got, (const char *)sqlite3_column_text(st, 0), 200);
        strcat(got, "\n");
    }
    sqlite3_finalize(st);
    assert_text_equal(got, want);
    free(want);
    /* A gate of 4 would have promoted nothing: the engaged chunk holds exactly 3 user messages. */
    p.min_user_messages = 4;
    p.dry_run = true;
    assert_int_equal(dream_route_run(s, &p, &r), 0);
    assert_int_equal(r.newly, 0);
}

/* Calls per stage, counted by the fake. */
static int chunk_calls, entity_calls;
static void count_call(const char *stage)
{
    if (!strcmp(stage, "chunk")) chunk_calls++;
    else if (!strcmp(stage, "entity")) entity_calls++;
}

static void test_fixture_grown_conversation_redoes_only_its_changed_chunk(void **state)
{
    dream_store *s = *state;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    int64_t kept_chunk = test_store_scalar(s, "SELECT ch.id FROM chunks ch JOIN conversations c ON c.id = ch.conversation "
                                              "WHERE c.title = 'Planning a balcony garden' AND ch.first_position = 0");
    /* A later export where that conversation grew by one exchange about its last subject. */
    char grown[4200];
    snprintf(grown, sizeof grown, "%s/grown", data_dir);
    assert_int_equal(fixture_ingest(s, grown), 0);
    assert_int_equal(test_store_scalar(s, "SELECT revision FROM conversations WHERE title = 'Planning a balcony garden'"), 2);
    chunk_calls = entity_calls = 0;
    dreaming_fake_on_call = count_call;
    assert_int_equal(fixture_run_pipeline(s, wiki, 0, NULL, NULL), 0);
    dreaming_fake_on_call = NULL;
    assert_int_equal(chunk_calls, 1);  /* only the grown conversation is segmented again */
    assert_int_equal(entity_calls, 1); /* and only its changed chunk (4-5 became 4-7) extracted again */
    assert_int_equal(test_store_scalar(s, "SELECT ch.id FROM chunks ch JOIN conversations c ON c.id = ch.conversation "
                                          "WHERE c.title = 'Planning a balcony garden' AND ch.first_position = 0"),
                     kept_chunk);
    char *got = fixture_describe(s);
    assert_non_null(got);
    assert_non_null(strstr(got, "chunk Planning a balcony garden | 4-7 | home solar power | Home Solar Panels\n"));
    assert_non_null(strstr(got, "entity Home Solar Panels | article | 2 chunk(s) | Home Solar Panels, Home solar\n"));
    assert_null(strstr(got, "| 4-5 | home solar power"));
    free(got);
}

static void test_fixture_without_alias_seeds_aliases_mint_their_own(void **state)
{
    dream_store *s = *state;
    assert_int_equal(fixture_run_pipeline(s, NULL, 0, NULL, NULL), 0);
    /* "Levain" and "bike repair" share no word with their subjects: only the seeds fold them. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE name IN ('Levain', 'bike repair')"), 2);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities"), 11);
    assert_int_equal(test_store_scalar(s, "SELECT chunk_count FROM pipeline_entities WHERE name = 'Sourdough'"), 2);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR (tests/data/dreaming)\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    snprintf(corpus, sizeof corpus, "%s/corpus", data_dir);
    snprintf(wiki, sizeof wiki, "%s/wiki", data_dir);
    snprintf(expected_path, sizeof expected_path, "%s/EXPECTED.txt", data_dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fixture_corpus_has_three_formats_and_twelve_conversations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_pipeline_gives_expected_chunks_entities_routes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_stages_report_progress_after_each_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_second_run_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_engagement_gate_promotes_the_engaged_one_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_grown_conversation_redoes_only_its_changed_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fixture_without_alias_seeds_aliases_mint_their_own, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
