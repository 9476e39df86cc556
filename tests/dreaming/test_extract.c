/* test_extract.c — the extract, resolve and route stages over the store, driven by a scripted
 * fake backend: the chunk stage answers as in test_segment (one chunk per user turn); the entity
 * stage answers from the chunk text it is shown. Proves: names per chunk, line cleaning, normal
 * forms folding variants into one entity, nothing-usable chunks marked done, bad answers as
 * failed attempts up to the limit, re-runs as no-ops, and routing by recurrence over the whole
 * store (a subject in two chunks gets an article, a one-off is captured and stays findable). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/ingest.h"
#include "dream/model.h"
#include "../src/util/utf8.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "entity_name.h"
#include "segment_fake.h"
#include "store_internal.h"
#include "dreaming_test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *examples_dir;

/* ---- the fake backend ---- */

/* ECHO: each chunk line "name: X" is answered as the line X ("NONE" when there is none).
 * KEYWORDS: subjects of the sample corpus found in the chunk text. */
enum fake_mode { FAKE_ECHO, FAKE_KEYWORDS, FAKE_SCRIPT, FAKE_EMPTY, FAKE_NO_MODEL };
static enum fake_mode fake_mode;
static const char *fake_script;
static int fake_entity_calls;
static char *fake_last_prompt; /* the last entity prompt seen */

/* The chunk text of an entity prompt, [*start, *end). */
static void fake_chunk_text(const char *prompt, const char **start, const char **end)
{
    const char *s = strstr(prompt, "--- Conversation chunk ---\n");
    assert_non_null(s);
    *start = s + strlen("--- Conversation chunk ---\n");
    *end = strstr(*start, "--- end chunk ---");
    assert_non_null(*end);
}

static char *fake_echo(const char *prompt)
{
    const char *s, *e;
    fake_chunk_text(prompt, &s, &e);
    char *out = calloc(1, (size_t)(e - s) + 8);
    assert_non_null(out);
    for (const char *p = s; p < e && (p = strstr(p, "name: ")) && p < e;) {
        p += strlen("name: ");
        size_t len = strcspn(p, "\n");
        strncat(out, p, len);
        strcat(out, "\n");
        p += len;
    }
    if (!*out) strcpy(out, "NONE");
    return out;
}

static bool fake_has(const char *s, const char *e, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = s; p + n <= e; p++)
        if (strncasecmp(p, word, n) == 0) return true;
    return false;
}

static char *fake_keywords(const char *prompt)
{
    const char *s, *e;
    fake_chunk_text(prompt, &s, &e);
    char out[256] = "";
    if (fake_has(s, e, "sourdough") || fake_has(s, e, "starter")) strcat(out, "- **Sourdough**\n");
    if (fake_has(s, e, "commute") || fake_has(s, e, "bike")) strcat(out, "2. Bike commute.\n");
    if (fake_has(s, e, "crumb")) strcat(out, "\"crumb\"\n");
    if (fake_has(s, e, "kayak")) strcat(out, "Kayak trip\n");
    return strdup(*out ? out : "NONE");
}

static int fake_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                     char **out)
{
    (void)ud;
    (void)opts;
    if (strcmp(stage, "chunk") == 0) {
        for (size_t i = 0; i < n; i++) out[i] = fake_chunk_answer(in[i].user, false);
        return 0;
    }
    assert_string_equal(stage, "entity");
    assert_null(in[0].system); /* the entity stage's default system turn */
    fake_entity_calls++;
    free(fake_last_prompt);
    fake_last_prompt = strdup(in[n - 1].user);
    assert_non_null(fake_last_prompt);
    for (size_t i = 0; i < n; i++) {
        switch (fake_mode) {
        case FAKE_ECHO: out[i] = fake_echo(in[i].user); break;
        case FAKE_KEYWORDS: out[i] = fake_keywords(in[i].user); break;
        case FAKE_SCRIPT: out[i] = strdup(fake_script); break;
        case FAKE_EMPTY: out[i] = strdup("  \n"); break;
        case FAKE_NO_MODEL: out[i] = NULL; break;
        }
    }
    if (fake_mode == FAKE_NO_MODEL) return dream_error_set(DREAM_ENOTFOUND, "no fake model found");
    return 0;
}

static int setup(void **state)
{
    dream_store *s;
    if (dream_store_open(":memory:", &s)) return -1;
    struct dream_backend fake = {.name = "fake", .call = fake_call};
    if (dream_seam_set_backend(&fake)) return -1;
    fake_mode = FAKE_ECHO;
    fake_script = NULL;
    fake_entity_calls = 0;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    dream_store_close(*state);
    dream_seam_set_backend(NULL);
    free(fake_last_prompt);
    fake_last_prompt = NULL;
    return 0;
}

/* ---- helpers ---- */

/* Puts a two-message conversation (user text, assistant "noted") updated at time updated. */
static int64_t put_conv(dream_store *s, const char *id, const char *user_text, int64_t updated)
{
    char id0[64], id1[64];
    snprintf(id0, sizeof id0, "%s-0", id);
    snprintf(id1, sizeof id1, "%s-1", id);
    struct dream_message m[2] = {
        {.role = "user", .id = id0, .time_ms = updated, .text = user_text},
        {.role = "assistant", .id = id1, .time_ms = updated, .text = "noted"},
    };
    struct dream_conversation c = {.source = "openai-jsonl", .id = id, .title = id, .created_ms = 1000, .updated_ms = updated,
                                   .messages = m, .n_messages = 2};
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "openai-jsonl", id, &got), 0);
    int64_t rowid = got->rowid;
    dream_store_conversation_free(got);
    return rowid;
}

static void segment_all(dream_store *s)
{
    struct dream_segment_result r;
    assert_int_equal(dream_segment_run(s, NULL, &r), 0);
    assert_int_equal(r.failed, 0);
}

static struct dream_extract_result extract(dream_store *s, int64_t conversation, int max_attempts)
{
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.conversation = conversation;
    if (max_attempts) p.max_attempts = max_attempts;
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), 0);
    return r;
}

static struct dream_resolve_result resolve(dream_store *s)
{
    struct dream_resolve_result r;
    assert_int_equal(dream_resolve_run(s, NULL, &r), 0);
    return r;
}

static struct dream_route_result route(dream_store *s)
{
    struct dream_route_result r;
    assert_int_equal(dream_route_run(s, NULL, &r), 0);
    return r;
}

/* Asserts name resolves to an entity routed as want ("article" with title, or "captured") over
 * chunks chunks. */
static void assert_routed(dream_store *s, const char *name, const char *want, const char *title, int64_t chunks)
{
    struct dream_entity *e = NULL;
    assert_int_equal(dream_entity_find(s, name, &e), 0);
    assert_non_null(e->route);
    assert_string_equal(e->route, want);
    if (title) {
        assert_non_null(e->article_title);
        assert_string_equal(e->article_title, title);
    } else {
        assert_null(e->article_title);
    }
    assert_int_equal(e->chunk_count, chunks);
    dream_entity_free(e);
}

/* ---- tests ---- */

static void test_extract_name_cleaning(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int kind;
        const char *name;
    } cases[] = {
        {"Sourdough", ENTITY_LINE_NAME, "Sourdough"},
        {"  - **Bike commute**  ", ENTITY_LINE_NAME, "Bike commute"},
        {"* Rust", ENTITY_LINE_NAME, "Rust"},
        {"3. \"Crumb\".", ENTITY_LINE_NAME, "Crumb"},
        {"12) `borrow checker`;", ENTITY_LINE_NAME, "borrow checker"},
        {"\xe2\x80\xa2 \xe2\x80\x9cOven spring\xe2\x80\x9d", ENTITY_LINE_NAME, "Oven spring"},
        {"_Hydration_!", ENTITY_LINE_NAME, "Hydration"},
        {"C++", ENTITY_LINE_NAME, "C++"},
        {"NONE", ENTITY_LINE_NONE, NULL},
        {"- none.", ENTITY_LINE_NONE, NULL},
        {"N/A", ENTITY_LINE_NONE, NULL},
        {"", ENTITY_LINE_SKIP, NULL},
        {"   ", ENTITY_LINE_SKIP, NULL},
        {"Here are the subjects:", ENTITY_LINE_SKIP, NULL},
        {"- ***", ENTITY_LINE_SKIP, NULL},
        {"I think this conversation is about many different things at once.", ENTITY_LINE_SKIP, NULL},
        {"Averyveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryveryverylongname", ENTITY_LINE_SKIP, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *name = NULL;
        int kind = entity_name_clean(cases[i].line, strlen(cases[i].line), &name);
        if (kind != cases[i].kind) fail_msg("line '%s': kind %d, want %d", cases[i].line, kind, cases[i].kind);
        if (cases[i].name) assert_string_equal(name, cases[i].name);
        else assert_null(name);
        free(name);
    }
}

static void test_extract_normal_forms_fold_case_space_and_composition(void **state)
{
    (void)state;
    static const char *const same[] = {"Sourdough", "sourdough ", "SOURDOUGH", "  Sour_dough", "The sourdough", "my sourdough",
                                       "Sourdough's"};
    static const char *const want[] = {"sourdough", "sourdough", "sourdough", "sour dough", "sourdough", "sourdough", "sourdough"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char *n = NULL;
        assert_int_equal(dream_entity_normal_form(same[i], &n), 0);
        assert_string_equal(n, want[i]);
        free(n);
    }
    /* Precomposed and decomposed é, and internal runs of spaces, meet. */
    char *a = NULL, *b = NULL;
    assert_int_equal(dream_entity_normal_form("Cr\xc3\xa8me  Br\xc3\xbbl\xc3\xa9\x65", &a), 0);
    assert_int_equal(dream_entity_normal_form("CRE\xcc\x80ME BRU\xcc\x82LE\xcc\x81\x45", &b), 0);
    assert_string_equal(a, b);
    free(a);
    free(b);
    char *bad = NULL;
    assert_int_equal(dream_entity_normal_form("\xff\xfe", &bad), DREAM_EINVAL);
    assert_null(bad);
}

static void test_extract_resolve_route_fold_variants_and_route_by_recurrence(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough\nname: - **Bike commute**\nname: Sourdough.", 2000);
    put_conv(s, "b", "name: sourdough \nname: 1. \"Crumb\"", 3000);
    put_conv(s, "c", "name: SOURDOUGH\nname: Kayak trip", 4000);
    put_conv(s, "d", "name: Bike-commute", 5000);
    segment_all(s);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunks"), 4);

    struct dream_extract_result x = extract(s, 0, 0);
    assert_int_equal(x.eligible, 4);
    assert_int_equal(x.extracted, 4);
    assert_int_equal(x.mentions, 7); /* "Sourdough" twice in chunk a counts once */
    assert_int_equal(x.failed, 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE normal = 'sourdough'"), 3);

    struct dream_resolve_result r = resolve(s);
    assert_int_equal(r.mentions, 7);
    assert_int_equal(r.minted, 4); /* sourdough, bike commute, crumb, kayak trip */
    assert_int_equal(r.folded, 3); /* two later sourdoughs, and "Bike-commute" by its squeezed form */

    struct dream_route_result rt = route(s);
    assert_int_equal(rt.entities, 4);
    assert_int_equal(rt.articles, 2);
    assert_int_equal(rt.newly, 2);
    assert_int_equal(rt.captured, 2);
    assert_routed(s, "sourdough", "article", "Sourdough", 3);
    assert_routed(s, "Bike Commute", "article", "Bike commute", 2);
    assert_routed(s, "crumb", "captured", NULL, 1);
    assert_routed(s, "Kayak  Trip", "captured", NULL, 1);

    /* Nothing new: every stage is a no-op. */
    int calls = fake_entity_calls;
    x = extract(s, 0, 0);
    assert_int_equal(x.eligible, 0);
    assert_int_equal(fake_entity_calls, calls);
    assert_int_equal(resolve(s).mentions, 0);
    rt = route(s);
    assert_int_equal(rt.newly, 0);
    assert_int_equal(rt.articles, 2);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities"), 4);

    /* Recurrence is counted over the whole store: a later run scoped to one new conversation
     * that mentions crumb once more routes crumb to an article. */
    int64_t e = put_conv(s, "e", "name: crumb", 6000);
    segment_all(s);
    x = extract(s, e, 0);
    assert_int_equal(x.eligible, 1);
    assert_int_equal(resolve(s).folded, 1);
    rt = route(s);
    assert_int_equal(rt.newly, 1);
    assert_routed(s, "Crumb", "article", "Crumb", 2);
    assert_routed(s, "kayak trip", "captured", NULL, 1);
    struct dream_entity *none = NULL;
    assert_int_equal(dream_entity_find(s, "Unicycle", &none), DREAM_ENOTFOUND);
    assert_null(none);
}

static void test_extract_nothing_usable_is_done_not_retried(void **state)
{
    dream_store *s = *state;
    int64_t a = put_conv(s, "a", "hello there", 2000);
    int64_t b = put_conv(s, "b", "name: Here are the subjects:\nname: - ***", 3000);
    segment_all(s);
    struct dream_extract_result x = extract(s, 0, 0);
    assert_int_equal(x.eligible, 2);
    assert_int_equal(x.empty, 2);
    assert_int_equal(x.mentions, 0);
    assert_int_equal(x.failed, 0);
    int64_t ids[2] = {a, b};
    for (size_t i = 0; i < 2; i++) {
        int64_t chunk = 0;
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT id FROM chunks WHERE conversation = ?", -1, &st, NULL), SQLITE_OK);
        sqlite3_bind_int64(st, 1, ids[i]);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        chunk = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        struct dream_stage_state ss;
        assert_int_equal(dream_stage_state_get(s, "extract", chunk, &ss), 0);
        assert_string_equal(ss.status, "done");
        free(ss.last_error);
    }
    int calls = fake_entity_calls;
    assert_int_equal(extract(s, 0, 0).eligible, 0);
    assert_int_equal(fake_entity_calls, calls);
}

/* Names copied from the text (DREAM_NAMES_FROM_TEXT=1) are kept only when the person's own
 * messages hold them: of "crumb" (the person's), "noted" (the assistant's) and "Everything"
 * (nobody's), crumb alone is stored and two are counted unnamed. A model that writes its own
 * canonical names (the switch off) keeps all three. */
static void test_extract_copied_names_must_be_the_persons(void **state)
{
    dream_store *s = *state;
    int64_t a = put_conv(s, "a", "My crumb project needs a logo.", 2000);
    segment_all(s);
    fake_mode = FAKE_SCRIPT;
    fake_script = "crumb\nnoted\nEverything\n";
    setenv("DREAM_NAMES_FROM_TEXT", "1", 1);
    struct dream_extract_result x = extract(s, a, 0);
    unsetenv("DREAM_NAMES_FROM_TEXT");
    assert_int_equal(x.mentions, 1);
    assert_int_equal(x.unnamed, 2);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE surface = 'crumb'"), 1);
    int64_t b = put_conv(s, "b", "My crumb project needs a logo.", 3000);
    segment_all(s);
    setenv("DREAM_NAMES_FROM_TEXT", "0", 1);
    x = extract(s, b, 0);
    unsetenv("DREAM_NAMES_FROM_TEXT");
    assert_int_equal(x.mentions, 3);
    assert_int_equal(x.unnamed, 0);
}

static void test_extract_empty_answers_are_failed_attempts_until_the_limit(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    int64_t chunk = test_store_scalar(s, "SELECT id FROM chunks");
    fake_mode = FAKE_EMPTY;
    struct dream_extract_result x = extract(s, 0, 2);
    assert_int_equal(x.failed, 1);
    assert_int_equal(x.gave_up, 0);
    struct dream_stage_state ss;
    assert_int_equal(dream_stage_state_get(s, "extract", chunk, &ss), 0);
    assert_string_equal(ss.status, "pending");
    assert_int_equal(ss.attempts, 1);
    assert_non_null(ss.last_error);
    assert_non_null(strstr(ss.last_error, "answered nothing"));
    free(ss.last_error);
    x = extract(s, 0, 2);
    assert_int_equal(x.failed, 1);
    assert_int_equal(x.gave_up, 1);
    assert_int_equal(dream_stage_state_get(s, "extract", chunk, &ss), 0);
    assert_string_equal(ss.status, "failed");
    free(ss.last_error);
    /* Given up: not asked again, and nothing was stored. */
    fake_mode = FAKE_ECHO;
    assert_int_equal(extract(s, 0, 2).eligible, 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions"), 0);
}

static void test_extract_missing_model_stops_the_run_without_charging_attempts(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    fake_mode = FAKE_NO_MODEL;
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), DREAM_ENOTFOUND);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract'"), 0);
    fake_mode = FAKE_ECHO;
    assert_int_equal(extract(s, 0, 0).extracted, 1);
}

static void test_extract_dry_run_touches_nothing(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.dry_run = true;
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), 0);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(fake_entity_calls, 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract'"), 0);
}

static void test_extract_resegmented_chunk_is_extracted_again(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    assert_int_equal(extract(s, 0, 0).extracted, 1);
    /* The conversation changes: its chunk is cut again at the new revision, and its old names go. */
    put_conv(s, "a", "name: Bike commute", 2500);
    segment_all(s);
    struct dream_extract_result x = extract(s, 0, 0);
    assert_int_equal(x.eligible, 1);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions"), 1);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE normal = 'bike commute'"), 1);
}

static void test_resolve_distinctive_tokens_fold_only_when_unambiguous(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Bike commute\nname: Rust project\nname: Rust language\nname: Crumb", 2000);
    put_conv(s, "b", "name: the commute\nname: Winter commute\nname: Rust\nname: project crumb", 3000);
    segment_all(s);
    assert_int_equal(extract(s, 0, 0).mentions, 8);
    struct dream_resolve_result r = resolve(s);
    /* "the commute" folds into bike commute ("commute" belongs to it alone); "winter commute"
     * has a token bike commute lacks; "rust" is claimed by two entities; "project crumb" points
     * at two different entities: each of those is minted rather than fused. */
    assert_int_equal(r.folded, 1);
    assert_int_equal(r.minted, 7);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions m JOIN pipeline_entities e ON e.id = m.entity "
                                   "WHERE m.normal = 'commute' AND e.normal = 'bike commute'"),
                     1);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE normal IN ('winter commute', 'rust', 'project crumb')"), 3);
    route(s);
    assert_routed(s, "Bike commute", "article", "Bike commute", 2);
}

static void test_extract_long_chunk_is_shown_cut(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.chunk_cap = 5;
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), 0);
    assert_int_equal(r.extracted, 1);
    assert_non_null(strstr(fake_last_prompt, "name: Sourdough"));
    assert_non_null(strstr(fake_last_prompt, "[... the rest of this chunk is not shown]"));
    assert_null(strstr(fake_last_prompt, "noted"));
}

/* A message cut at text_cap is cut before a character, never inside one: a prompt that is not
 * valid UTF-8 cannot be sent to a remote backend (train/oracle.py saw empty prompts). */
static void test_extract_message_cut_keeps_utf8_whole(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough\nCr\xc3\xa8me br\xc3\xbbl\xc3\xa9" "e", 2000);
    segment_all(s);
    struct dream_extract_params p;
    dream_extract_default_params(&p);
    p.text_cap = 19; /* "name: Sourdough\nCr" is 18 bytes; the 19th starts the two-byte e-grave */
    struct dream_extract_result r;
    assert_int_equal(dream_extract_run(s, &p, &r), 0);
    assert_non_null(strstr(fake_last_prompt, "name: Sourdough\nCr\n[... 13 more bytes not shown]"));
    for (const unsigned char *q = (const unsigned char *)fake_last_prompt; *q;) {
        int n = utf8_seq_len(q, strlen((const char *)q));
        assert_true(n > 0);
        q += n;
    }
}

static void test_extract_state_goes_with_a_deleted_chunk(void **state)
{
    dream_store *s = *state;
    put_conv(s, "a", "name: Sourdough", 2000);
    segment_all(s);
    assert_int_equal(extract(s, 0, 0).extracted, 1);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract'"), 1);
    /* Its row id may be reused by a chunk of another conversation at a lower revision, which must
     * then be extracted: no state, and no names, may outlive the chunk. */
    assert_int_equal(store_exec(s, "DELETE FROM chunks", "deleting chunks"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM stage_state WHERE stage = 'extract'"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions"), 0);
}

static void test_extract_over_the_sample_corpus_routes_its_recurring_subjects(void **state)
{
    dream_store *s = *state;
    struct dream_ingest_params ip = dream_ingest_default_params();
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(s, examples_dir, &ip, &stats), 0);
    put_conv(s, "one-off", "We planned a kayak trip for the spring.", 9000000000000);
    segment_all(s);
    fake_mode = FAKE_KEYWORDS;
    struct dream_extract_result x = extract(s, 0, 0);
    assert_true(x.eligible >= 4);
    assert_int_equal(x.failed, 0);
    assert_int_equal((int64_t)(x.extracted + x.empty), test_store_scalar(s, "SELECT count(*) FROM chunks"));
    resolve(s);
    route(s);
    struct dream_entity *e = NULL;
    static const char *const recurring[] = {"Sourdough", "bike commute", "Crumb"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(dream_entity_find(s, recurring[i], &e), 0);
        if (strcmp(e->route, "article") != 0) fail_msg("%s: routed %s over %lld chunk(s)", recurring[i], e->route, (long long)e->chunk_count);
        assert_true(e->chunk_count >= 2);
        dream_entity_free(e);
    }
    assert_routed(s, "Kayak trip", "captured", NULL, 1);
    /* Every mention is resolved, every entity routed. */
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM chunk_mentions WHERE entity IS NULL"), 0);
    assert_int_equal(test_store_scalar(s, "SELECT count(*) FROM pipeline_entities WHERE route IS NULL"), 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_extract EXAMPLES_DIR\n");
        return 2;
    }
    examples_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_extract_name_cleaning),
        cmocka_unit_test(test_extract_normal_forms_fold_case_space_and_composition),
        cmocka_unit_test_setup_teardown(test_extract_resolve_route_fold_variants_and_route_by_recurrence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_nothing_usable_is_done_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_copied_names_must_be_the_persons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_empty_answers_are_failed_attempts_until_the_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_missing_model_stops_the_run_without_charging_attempts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_dry_run_touches_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_resegmented_chunk_is_extracted_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_distinctive_tokens_fold_only_when_unambiguous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_message_cut_keeps_utf8_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_long_chunk_is_shown_cut, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_state_goes_with_a_deleted_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_over_the_sample_corpus_routes_its_recurring_subjects, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
