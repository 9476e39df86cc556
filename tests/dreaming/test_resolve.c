/* test_resolve.c — the resolve stage's extras (spec §6.3, DESIGN §5): alias seeds read from the
 * vault's Meta/Aliases page, applied before anything is minted (placeholders and malformed lines
 * skipped, the seeded page lists none), and the optional model tie-break, asked only when a
 * name's distinctive words point at two or more entities, folding only on exactly one "yes",
 * off unless asked for. The model is a scripted fake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/vault.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[4096];
static int n_convs;

/* ---- the fake: the tie-break question ---- */

enum tie_mode { TIE_YES_IF_B_HAS, TIE_ALWAYS_YES, TIE_BROKEN };
static enum tie_mode tie_mode;
static const char *tie_word; /* TIE_YES_IF_B_HAS: "yes" when name B contains it */
static int tie_questions;
static char tie_last_prompt[1024];

static int fake_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                     char **out)
{
    (void)ud;
    assert_string_equal(stage, "resolve");
    assert_true(opts->max_tokens <= 16); /* a one-word answer */
    for (size_t i = 0; i < n; i++) {
        assert_non_null(in[i].system);
        assert_non_null(strstr(in[i].system, "yes or no"));
        tie_questions++;
        snprintf(tie_last_prompt, sizeof tie_last_prompt, "%s", in[i].user);
        const char *b = strstr(in[i].user, "Name B: ");
        assert_non_null(b);
        bool yes = tie_mode == TIE_ALWAYS_YES;
        if (tie_mode == TIE_YES_IF_B_HAS) { /* the word must be on name B's line */
            size_t line = strcspn(b, "\n");
            const char *hit = strstr(b, tie_word);
            yes = hit && hit < b + line;
        }
        out[i] = tie_mode == TIE_BROKEN ? NULL : strdup(yes ? "Yes." : "no");
    }
    if (tie_mode == TIE_BROKEN) return dream_error_set(DREAM_ENOTFOUND, "no fake model here");
    return 0;
}

static int setup(void **state)
{
    dream_store *s;
    if (dream_store_open(":memory:", &s)) return -1;
    struct dream_backend fake = {.name = "tie-fake", .call = fake_call};
    if (dream_seam_set_backend(&fake)) return -1;
    tie_mode = TIE_YES_IF_B_HAS;
    tie_word = "Cello";
    tie_questions = 0;
    n_convs = 0;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    dream_store_close(*state);
    dream_seam_set_backend(NULL);
    return 0;
}

/* A new chunk (in a conversation of its own, later than every earlier one: the person says user,
 * the assistant answers assistant) mentioning the names in surfaces (NULL-terminated). Returns
 * the chunk id. put_chunk: the same with a question and an answer that name nothing. */
static int64_t put_chunk_said(dream_store *s, const char *user, const char *assistant, const char *const *surfaces)
{
    struct dream_message m[2] = {{"user", "u", 0, user}, {"assistant", "a", 0, assistant}};
    char id[32];
    snprintf(id, sizeof id, "conv-%d", n_convs);
    struct dream_conversation c = {.source = "pi", .id = id, .title = id, .updated_ms = 1000 + n_convs, .messages = m, .n_messages = 2};
    n_convs++;
    assert_int_equal(dream_store_put(s, &c, &(enum dream_store_outcome){0}), 0);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO chunks (conversation, first_position, last_position, label, revision, created_at) "
             "SELECT id, 0, 1, 'x', 1, 0 FROM conversations WHERE source_id = '%s'",
             id);
    assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    int64_t chunk = sqlite3_last_insert_rowid(store_db(s));
    for (const char *const *p = surfaces; p && *p; p++) {
        char *normal;
        assert_int_equal(dream_entity_normal_form(*p, &normal), 0);
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(store_db(s), "INSERT INTO chunk_mentions (chunk, normal, surface) VALUES (?, ?, ?)", -1, &st, NULL),
                         SQLITE_OK);
        sqlite3_bind_int64(st, 1, chunk);
        sqlite3_bind_text(st, 2, normal, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, *p, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        free(normal);
    }
    return chunk;
}

static int64_t put_chunk(dream_store *s, const char *const *surfaces) { return put_chunk_said(s, "question", "answer", surfaces); }

/* The name of the entity the mention surface of chunk resolved to ("" when unresolved). */
static const char *entity_of(dream_store *s, int64_t chunk, const char *surface)
{
    static char name[256];
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s),
                                        "SELECT coalesce(e.name, '') FROM chunk_mentions m LEFT JOIN pipeline_entities e ON e.id = m.entity "
                                        "WHERE m.chunk = ? AND m.surface = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, chunk);
    sqlite3_bind_text(st, 2, surface, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return name;
}

/* A wiki directory whose Meta/Aliases.md holds text. Returns its path (static). */
static const char *wiki_with_aliases(const char *text)
{
    static char w[4200];
    static int n;
    snprintf(w, sizeof w, "%s/wiki-%d", tmp_root, n++);
    char meta[4300], page[4400];
    snprintf(meta, sizeof meta, "%s/Meta", w);
    assert_int_equal(mkdir(w, 0755), 0);
    assert_int_equal(mkdir(meta, 0755), 0);
    snprintf(page, sizeof page, "%s/Aliases.md", meta);
    FILE *f = fopen(page, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return w;
}

static struct dream_resolve_result resolve(dream_store *s, const char *wiki, bool tie_break)
{
    struct dream_resolve_params p;
    dream_resolve_default_params(&p);
    p.wiki_dir = wiki;
    p.tie_break = tie_break;
    struct dream_resolve_result r;
    assert_int_equal(dream_resolve_run(s, &p, &r), 0);
    return r;
}

/* ---- alias seeds ---- */

static void test_resolve_alias_seed_folds_before_minting_under_the_seed_spelling(void **state)
{
    dream_store *s = *state;
    const char *w = wiki_with_aliases("# Aliases\n\nProse lines are not seeds: Word: other.\n"
                                      "- <Canonical Name>: <alias one>, <alias two>\n"
                                      "- Sourdough: levain ,  wild yeast starter\n"
                                      "- Broken line without a colon\n"
                                      "* Bicycle Maintenance: bike repair\n"
                                      "- Other Thing: levain\n" /* a second claim on levain: the first wins */
                                      "```\n- Fenced: not a seed\n```\n");
    /* The alias comes first: without the seed it would mint "Levain". */
    int64_t c1 = put_chunk(s, (const char *const[]){"Levain", "Prose lines are not seeds", NULL});
    int64_t c2 = put_chunk(s, (const char *const[]){"Wild-Yeast Starter", "sourdough", "Bike Repair", "Fenced", NULL});
    int64_t c3 = put_chunk(s, (const char *const[]){"alias one", NULL});
    struct dream_resolve_result r = resolve(s, w, false);
    assert_string_equal(entity_of(s, c1, "Levain"), "Sourdough");
    assert_string_equal(entity_of(s, c2, "Wild-Yeast Starter"), "Sourdough"); /* squeezed form of the alias */
    assert_string_equal(entity_of(s, c2, "sourdough"), "Sourdough");
    assert_string_equal(entity_of(s, c2, "Bike Repair"), "Bicycle Maintenance");
    assert_string_equal(entity_of(s, c2, "Fenced"), "Fenced");                 /* a fenced line is no seed */
    assert_string_equal(entity_of(s, c3, "alias one"), "alias one");           /* a placeholder is no seed */
    assert_string_equal(entity_of(s, c1, "Prose lines are not seeds"), "Prose lines are not seeds");
    assert_int_equal(r.seeded, 4);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE name IN ('Other Thing', 'Broken line without a colon')"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities"), 5);
}

/* ---- spreading a known name over the chunks that hold it ---- */

/* How many mentions chunk holds. */
static long mentions_of(dream_store *s, int64_t chunk)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM chunk_mentions WHERE chunk = %lld", (long long)chunk);
    return (long)test_store_scalar(s, sql);
}

static void test_resolve_spreads_a_known_name_over_the_persons_chunks(void **state)
{
    dream_store *s = *state;
    /* the model named these where they were the topic */
    int64_t met = put_chunk_said(s, "Yesterday I met Leonard at the market.", "Nice.", (const char *const[]){"Leonard", NULL});
    int64_t dance = put_chunk_said(s, "I practise fan dance twice a week.", "Good.", (const char *const[]){"fan dance", NULL});
    int64_t old = put_chunk_said(s, "I have an old bike.", "Oil the chain.", (const char *const[]){"old", NULL});
    int64_t next = put_chunk_said(s, "Next, I sand the table. Next step: paint.", "Use 120 grit.", (const char *const[]){"Next", "Next step", NULL});
    /* and missed them here */
    int64_t both = put_chunk_said(s, "leonard came to the Fan Dance class.", "Great.", NULL);
    int64_t again = put_chunk_said(s, "My old phone broke. Next I buy one. Next step is the case.", "Which one?", NULL);
    int64_t told = put_chunk_said(s, "What should I bring?", "Ask Leonard about the fan dance.", NULL);
    int64_t longer = put_chunk_said(s, "Leonardo painted; the fan dancers rested.", "Indeed.", NULL);
    /* a lower-case name the person introduces as one ("called crumb") spreads; "crumbs" is another word */
    int64_t tool = put_chunk_said(s, "I'm writing a small command-line tool called crumb.", "Nice.", (const char *const[]){"crumb", NULL});
    int64_t used = put_chunk_said(s, "Add a report subcommand to crumb, please.", "Done.", NULL);
    int64_t crumbs = put_chunk_said(s, "The crumbs of the loaf were open.", "Good.", NULL);
    struct dream_resolve_result r = resolve(s, NULL, false);
    assert_int_equal(r.mentions, 6);
    assert_string_equal(entity_of(s, used, "crumb"), "crumb");
    assert_int_equal(mentions_of(s, crumbs), 0);
    assert_int_equal(mentions_of(s, tool), 1);
    /* a name written mid-sentence capitalised, and one of two words, in any case */
    assert_string_equal(entity_of(s, both, "Leonard"), "Leonard");
    assert_string_equal(entity_of(s, both, "fan dance"), "fan dance");
    assert_int_equal(mentions_of(s, both), 2);
    /* a common word the model picked, and names capitalised only where a sentence starts */
    assert_int_equal(mentions_of(s, again), 0);
    /* the assistant's words, and a longer word, are not the person naming it */
    assert_int_equal(mentions_of(s, told), 0);
    assert_int_equal(mentions_of(s, longer), 0);
    assert_int_equal(mentions_of(s, met) + mentions_of(s, dance) + mentions_of(s, old) + mentions_of(s, next), 5);
    assert_int_equal(r.spread, 3);
    /* run again: nothing new */
    r = resolve(s, NULL, false);
    assert_int_equal(r.mentions, 0);
    assert_int_equal(r.spread, 0);
    /* so Leonard recurs, and route gives him an article */
    struct dream_route_result rr;
    assert_int_equal(dream_route_run(s, NULL, &rr), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE route = 'article'"), 3);
    assert_int_equal(test_store_scalar(s, "SELECT chunk_count FROM pipeline_entities WHERE name = 'Leonard'"), 2);
    /* a re-export replaces the chunks that named him (their mentions go with them), and a new
     * conversation names him where the model did not: he is still a subject with an article,
     * so the new chunk is his too (before, the names came from the mentions alone, and he was
     * forgotten, his article never patched again) */
    char sql[200];
    snprintf(sql, sizeof sql, "DELETE FROM chunks WHERE id IN (%lld, %lld)", (long long)met, (long long)both);
    assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions m JOIN pipeline_entities e ON e.id = m.entity WHERE e.name = 'Leonard'"), 0);
    int64_t later = put_chunk_said(s, "Then Leonard brought tea to the studio.", "Lovely.", NULL);
    r = resolve(s, NULL, false);
    assert_string_equal(entity_of(s, later, "Leonard"), "Leonard");
}

static void test_resolve_seeded_aliases_page_lists_no_aliases(void **state)
{
    dream_store *s = *state;
    char w[4200];
    snprintf(w, sizeof w, "%s/init-wiki", tmp_root);
    struct dream_vault_init_result vr;
    assert_int_equal(dream_vault_init(w, &vr, NULL, NULL), 0);
    const char *page = dream_vault_seed_meta("Aliases");
    assert_non_null(page);
    assert_non_null(strstr(page, "- <Canonical Name>: <alias one>, <alias two>"));
    int64_t c = put_chunk(s, (const char *const[]){"alias one", "Canonical Name", NULL});
    struct dream_resolve_result r = resolve(s, w, false);
    assert_int_equal(r.seeded, 0);
    assert_int_equal(r.minted, 2);
    assert_string_equal(entity_of(s, c, "alias one"), "alias one");
}

/* ---- the tie-break ---- */

/* Two entities, "Cello Practice" and "Piano Lessons", then "Cello Lessons": "cello" points at
 * the first, "lessons" at the second. Returns the chunk of "Cello Lessons". */
static int64_t two_candidates(dream_store *s)
{
    put_chunk(s, (const char *const[]){"Cello Practice", "Piano Lessons", NULL});
    assert_int_equal(resolve(s, NULL, true).minted, 2);
    assert_int_equal(tie_questions, 0); /* nothing to break a tie between yet */
    return put_chunk(s, (const char *const[]){"Cello Lessons", NULL});
}

static void test_resolve_tie_break_off_by_default_mints(void **state)
{
    dream_store *s = *state;
    unsetenv("DREAM_RESOLVE_TIE_BREAK");
    struct dream_resolve_params p;
    dream_resolve_default_params(&p);
    assert_false(p.tie_break);
    setenv("DREAM_RESOLVE_TIE_BREAK", "1", 1);
    dream_resolve_default_params(&p);
    assert_true(p.tie_break);
    unsetenv("DREAM_RESOLVE_TIE_BREAK");
    int64_t c = two_candidates(s);
    struct dream_resolve_result r = resolve(s, NULL, false);
    assert_int_equal(tie_questions, 0);
    assert_int_equal(r.minted, 1);
    assert_string_equal(entity_of(s, c, "Cello Lessons"), "Cello Lessons");
}

static void test_resolve_tie_break_folds_on_exactly_one_yes(void **state)
{
    dream_store *s = *state;
    int64_t c = two_candidates(s);
    struct dream_resolve_result r = resolve(s, NULL, true);
    assert_int_equal(tie_questions, 2); /* one question per candidate */
    assert_int_equal(r.asked, 2);
    assert_int_equal(r.tie_folds, 1);
    assert_int_equal(r.minted, 0);
    assert_string_equal(entity_of(s, c, "Cello Lessons"), "Cello Practice");
    assert_non_null(strstr(tie_last_prompt, "Name A: \"Cello Lessons\""));
    /* A name with one candidate never asks: layer 3 folds it. */
    int64_t c2 = put_chunk(s, (const char *const[]){"Piano", NULL});
    resolve(s, NULL, true);
    assert_int_equal(tie_questions, 2);
    assert_string_equal(entity_of(s, c2, "Piano"), "Piano Lessons");
}

static void test_resolve_tie_break_mints_on_two_yes_or_none(void **state)
{
    dream_store *s = *state;
    int64_t c = two_candidates(s);
    tie_mode = TIE_ALWAYS_YES;
    struct dream_resolve_result r = resolve(s, NULL, true);
    assert_int_equal(r.asked, 2);
    assert_int_equal(r.minted, 1);
    assert_string_equal(entity_of(s, c, "Cello Lessons"), "Cello Lessons");
    tie_mode = TIE_YES_IF_B_HAS;
    tie_word = "Drums";
    int64_t c2 = put_chunk(s, (const char *const[]){"Practice Lessons", NULL});
    /* "lessons" now has two owners; only "practice" is distinctive: one candidate, no question,
     * and "lessons" is not that candidate's word, so a new entity is minted. */
    r = resolve(s, NULL, true);
    assert_int_equal(r.asked, 0);
    assert_string_equal(entity_of(s, c2, "Practice Lessons"), "Practice Lessons");
}

static void test_resolve_tie_break_without_a_model_stops_and_keeps_the_mention(void **state)
{
    dream_store *s = *state;
    int64_t c = two_candidates(s);
    tie_mode = TIE_BROKEN;
    struct dream_resolve_params p;
    dream_resolve_default_params(&p);
    p.tie_break = true;
    struct dream_resolve_result r;
    assert_int_not_equal(dream_resolve_run(s, &p, &r), 0);
    assert_non_null(strstr(dream_error_last(), "Cello Lessons"));
    assert_string_equal(entity_of(s, c, "Cello Lessons"), ""); /* still unresolved: retried next run */
    tie_mode = TIE_YES_IF_B_HAS;
    resolve(s, NULL, true);
    assert_string_equal(entity_of(s, c, "Cello Lessons"), "Cello Practice");
}

/* DREAM_RESOLVE_TIE_BREAK reads as a switch: "false", "no" and "off" turned the tie-break on (any
 * value but "0" did). */
static void test_resolve_tie_break_variable_reads_as_a_switch(void **state)
{
    (void)state;
    static const struct {
        const char *v;
        bool on;
    } cases[] = {{"1", true}, {"true", true}, {"yes", true}, {"on", true}, {"0", false}, {"false", false}, {"no", false}, {"off", false}, {"", false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        setenv("DREAM_RESOLVE_TIE_BREAK", cases[k].v, 1);
        struct dream_resolve_params p;
        dream_resolve_default_params(&p);
        if (p.tie_break != cases[k].on) fprintf(stderr, "DREAM_RESOLVE_TIE_BREAK=%s\n", cases[k].v);
        assert_int_equal(p.tie_break, cases[k].on);
    }
    unsetenv("DREAM_RESOLVE_TIE_BREAK");
}

int main(void)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    snprintf(tmp_root, sizeof tmp_root, "%s/tmp-resolve-XXXXXX", b ? b : "/tmp");
    if (!mkdtemp(tmp_root)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_tie_break_variable_reads_as_a_switch),
        cmocka_unit_test_setup_teardown(test_resolve_alias_seed_folds_before_minting_under_the_seed_spelling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_seeded_aliases_page_lists_no_aliases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_tie_break_off_by_default_mints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_tie_break_folds_on_exactly_one_yes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_tie_break_mints_on_two_yes_or_none, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_tie_break_without_a_model_stops_and_keeps_the_mention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_spreads_a_known_name_over_the_persons_chunks, setup, teardown),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0) rc = 1;
    return rc;
}
