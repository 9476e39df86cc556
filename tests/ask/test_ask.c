/* test_ask.c — `dream ask` (dream/ask.h) over the hand-written vault (tests/data/vault) and a
 * real store made from the Dreaming fixture corpus, with the scripted fake answering the
 * "answer" stage from what it was given (tests/support/dreaming_fake.c).
 *
 * An answer comes from the reads and cites footnotes that are the articles' own citations;
 * every read stays under 2 KB and the context under 8 KB; a question nothing answers is
 * "nothing on file" (without a model call when nothing was read); a preamble and markers of
 * footnotes not given are removed; an answer that cites nothing, or shares no word with the
 * question, is silence; the CLI prints the
 * answer and its footnotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/ask.h"
#include "dream/error.h"
#include "dream/model.h"
#include "dream/read.h"
#include "dream/store.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *vault_dir, *dreaming_dir, *dream_bin;
static char tmpdir[256], store_path[400];

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-ask-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(store_path, sizeof store_path, "%s/memory.sqlite", tmpdir);
    char corpus[400], seeds[400];
    snprintf(corpus, sizeof corpus, "%s/corpus", dreaming_dir);
    snprintf(seeds, sizeof seeds, "%s/wiki", dreaming_dir);
    dream_store *s = NULL;
    if (dream_store_open(store_path, &s)) return -1;
    int rc = fixture_ingest(s, corpus);
    if (!rc) rc = fixture_run_pipeline(s, seeds, 0, NULL, NULL);
    dream_store_close(s);
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    return rc ? rc : dream_seam_set_backend(&fake);
}

static int group_teardown(void **state)
{
    (void)state;
    dream_seam_set_backend(NULL);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "(none)";
}

static dream_reader *open_reader(void)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    p.wiki = vault_dir;
    p.store = store_path;
    dream_reader *r = NULL;
    assert_int_equal(dream_reader_open(&p, &r), 0);
    return r;
}

static json_t *ask(const char *question)
{
    dream_reader *r = open_reader();
    json_t *out = NULL;
    long before = dreaming_fake_calls;
    int rc = dream_ask(r, question, NULL, &out);
    if (rc) fail_msg("ask '%s': %s", question, dream_error_last());
    dream_reader_close(r);
    if (getenv("ASK_DEBUG")) {
        char *d = json_dumps(out, JSON_INDENT(1));
        fprintf(stderr, "%s\n", d);
        free(d);
    }
    /* budgets, always: no read over 2 KB, the context under 8 KB, at most one model call */
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(out, "reads"), i, v) assert_true(json_integer_value(json_object_get(v, "bytes")) <= 2048);
    assert_true(json_integer_value(json_object_get(out, "context_bytes")) < 8192);
    assert_true(dreaming_fake_calls - before == json_integer_value(json_object_get(out, "model_calls")));
    return out;
}

/* The definition text of the footnote of article stem that cites cite ("conv:H#M"), or NULL. */
static bool article_cites(const char *stem, const char *cite)
{
    char path[600], needle[200];
    snprintf(path, sizeof path, "%s/articles/%s.md", vault_dir, stem);
    snprintf(needle, sizeof needle, "]: `%s` (", cite);
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, needle) != NULL;
    fclose(f);
    return found;
}

static void test_ask_answers_from_the_reads_with_real_citations(void **state)
{
    (void)state;
    json_t *o = ask("How often do I oil the bike chain?");
    assert_true(json_is_true(json_object_get(o, "answered")));
    const char *a = str(o, "answer");
    /* the fact, as the article states it, with its footnote renumbered to the context's */
    assert_string_equal(a, "They clean and oil the chain every two weeks and adjust the derailleur themselves[^1].");
    assert_non_null(strstr(a, "[^1]"));
    assert_null(strstr(a, "notes"));
    json_t *c = json_array_get(json_object_get(o, "citations"), 0);
    assert_int_equal(json_integer_value(json_object_get(c, "n")), 1);
    assert_true(article_cites("Bicycle_Maintenance", str(c, "cite")));
    /* it read small: the lead, the infobox and a section of the article the search found */
    json_t *r0 = json_array_get(json_object_get(o, "reads"), 0);
    assert_string_equal(str(r0, "kind"), "lead");
    assert_string_equal(str(r0, "stem"), "Bicycle_Maintenance");
    bool chain = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(o, "reads"), i, v) chain = chain || !strcmp(str(v, "anchor"), "chain");
    assert_true(chain);
    assert_int_equal(json_integer_value(json_object_get(o, "model_calls")), 1);
    json_decref(o);
}

static void test_ask_resolves_a_name_in_the_question(void **state)
{
    (void)state;
    /* "natural leaven" is an alias of Sourdough: resolved, not searched */
    json_t *o = ask("What flour do I feed the natural leaven?");
    json_t *r0 = json_array_get(json_object_get(o, "reads"), 0);
    assert_string_equal(str(r0, "stem"), "Sourdough");
    assert_true(json_is_true(json_object_get(o, "answered")));
    assert_non_null(strstr(str(o, "answer"), "rye flour"));
    json_t *c = json_array_get(json_object_get(o, "citations"), 0);
    assert_true(article_cites("Sourdough", str(c, "cite")));
    json_decref(o);
}

static void test_ask_says_nothing_on_file(void **state)
{
    (void)state;
    /* nothing holds these words: no read, no model call */
    json_t *o = ask("What is my passport number?");
    assert_false(json_is_true(json_object_get(o, "answered")));
    assert_string_equal(str(o, "answer"), DREAM_ASK_NOTHING);
    assert_int_equal(json_array_size(json_object_get(o, "citations")), 0);
    assert_int_equal(json_array_size(json_object_get(o, "reads")), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "model_calls")), 0);
    json_decref(o);
    /* something was read (the word matches) but nothing answers: the model's NOTHING ON FILE */
    o = ask("Which brand of cello strings did the luthier recommend?");
    assert_false(json_is_true(json_object_get(o, "answered")));
    assert_string_equal(str(o, "answer"), DREAM_ASK_NOTHING);
    assert_true(json_array_size(json_object_get(o, "reads")) > 0);
    assert_int_equal(json_integer_value(json_object_get(o, "model_calls")), 1);
    json_decref(o);
}

/* ask, with the fake's answer to the "answer" stage put through wrap (a printf format of the
 * sentence it would give) */
static json_t *ask_wrapped(const char *wrap, const char *question)
{
    dreaming_fake_answer_wrap = wrap;
    json_t *o = ask(question);
    dreaming_fake_answer_wrap = NULL;
    return o;
}

static void test_ask_drops_a_preamble_and_footnotes_it_was_not_given(void **state)
{
    (void)state;
    json_t *o = ask_wrapped("According to your notes, %s[^99]", "How often do I oil the bike chain?");
    const char *a = str(o, "answer");
    assert_true(strncmp(a, "They clean and oil the chain", 28) == 0);
    assert_null(strstr(a, "[^99]"));
    assert_int_equal(json_array_size(json_object_get(o, "citations")), 1);
    json_decref(o);
    /* an answer that cites nothing it was given is silence */
    o = ask_wrapped("The chain is oiled weekly[^7].%.0s", "How often do I oil the bike chain?");
    assert_false(json_is_true(json_object_get(o, "answered")));
    assert_string_equal(str(o, "answer"), DREAM_ASK_NOTHING);
    json_decref(o);
    /* an answer about something else, citing a footnote it was given, answers another
     * question: silence (it shares no word with this one) */
    o = ask_wrapped("Alice's birthday is on July 12[^1].%.0s", "How often do I oil the bike chain?");
    assert_false(json_is_true(json_object_get(o, "answered")));
    assert_string_equal(str(o, "answer"), DREAM_ASK_NOTHING);
    assert_int_equal(json_array_size(json_object_get(o, "citations")), 0);
    json_decref(o);
    /* the same footnote with a word of the question, inflected, is an answer */
    o = ask_wrapped("Oiling happens every two weeks[^1].%.0s", "How often do I oil the bike chain?");
    assert_true(json_is_true(json_object_get(o, "answered")));
    json_decref(o);
}

static void test_ask_reads_messages_when_no_article_holds_it(void **state)
{
    (void)state;
    /* "Tax Return" is a captured subject: only the conversation holds it */
    json_t *o = ask("What should I keep for the freelance tax return?");
    const json_t *msg = NULL;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(o, "reads"), i, v) if (!msg && !strcmp(str(v, "kind"), "message")) msg = v;
    assert_non_null(msg);
    assert_true(strncmp(str(msg, "cite"), "conv:", 5) == 0);
    assert_true(json_is_true(json_object_get(o, "answered")));
    assert_non_null(strstr(str(o, "answer"), "tax return as a freelancer"));
    assert_string_equal(str(json_array_get(json_object_get(o, "citations"), 0), "cite"), str(msg, "cite"));
    json_decref(o);
}

static void test_ask_refuses_bad_questions(void **state)
{
    (void)state;
    dream_reader *r = open_reader();
    json_t *out = NULL;
    assert_int_equal(dream_ask(r, "", NULL, &out), DREAM_EINVAL);
    assert_string_equal(dream_error_last(), "ask needs a question");
    assert_int_equal(dream_ask(r, "bad \xff byte", NULL, &out), DREAM_EINVAL);
    assert_string_equal(dream_error_last(), "the question is not valid UTF-8");
    assert_null(out);
    dream_reader_close(r);
}

/* A read budget under what a clipped read needs (its "…" is 3 bytes) is raised to a floor, not
 * obeyed into a write past the read's end: every read still fits the budget it reports. */
static void test_ask_small_read_budgets_stay_in_bounds(void **state)
{
    (void)state;
    for (size_t max = 1; max <= 8; max++) {
        dream_reader *r = open_reader();
        struct dream_ask_params p = {.max_read = max};
        json_t *out = NULL;
        assert_int_equal(dream_ask(r, "How often do I oil the bike chain?", &p, &out), 0);
        dream_reader_close(r);
        size_t i;
        json_t *v;
        assert_true(json_array_size(json_object_get(out, "reads")) > 0);
        json_array_foreach(json_object_get(out, "reads"), i, v) assert_true(json_integer_value(json_object_get(v, "bytes")) <= 256);
        json_decref(out);
    }
}

static void test_ask_cli_prints_the_answer(void **state)
{
    (void)state;
    char cmd[2000], out[4096] = "";
    /* nothing on file needs no model, so the CLI runs without one */
    snprintf(cmd, sizeof cmd, "'%s' ask What is my passport number --wiki '%s' --store '%s' 2>&1", dream_bin, vault_dir, store_path);
    FILE *f = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    assert_int_equal(pclose(f), 0);
    assert_string_equal(out, DREAM_ASK_NOTHING "\n");
    snprintf(cmd, sizeof cmd, "'%s' ask --json What is my passport number --wiki '%s' --store '%s' 2>&1", dream_bin, vault_dir, store_path);
    f = popen(cmd, "r");
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    assert_int_equal(pclose(f), 0);
    assert_non_null(strstr(out, "\"answered\":false"));
    assert_non_null(strstr(out, "\"reads\":[]"));
    snprintf(cmd, sizeof cmd, "'%s' ask >/dev/null 2>&1", dream_bin);
    assert_int_equal(WEXITSTATUS(system(cmd)), 2);
}

/* The prompt of the last answer call, for tests that read what the model was given. */
static char captured[16384];
static const char *capture_reply = DREAM_ASK_NOTHING;

static int capture_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts, char **out)
{
    (void)ud, (void)opts;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(stage, "answer")) snprintf(captured, sizeof captured, "%s", in[i].user);
        out[i] = strdup(capture_reply);
    }
    return 0;
}

/* Stores the conversation id (title) of messages m[0..n) in the test store. */
static void put_conversation(const char *id, const char *title, struct dream_message *m, size_t n)
{
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    struct dream_conversation c = {"openai-jsonl", id, title, m[0].time_ms, m[n - 1].time_ms, "test", m, n};
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    dream_store_close(s);
}

/* dream_ask with the capturing backend answering reply; the prompt is in captured after. */
static json_t *ask_captured(const char *question, const char *reply)
{
    struct dream_backend cap = {.name = "capture", .call = capture_call};
    assert_int_equal(dream_seam_set_backend(&cap), 0);
    captured[0] = '\0';
    capture_reply = reply;
    dream_reader *r = open_reader();
    json_t *out = NULL;
    int rc = dream_ask(r, question, NULL, &out);
    dream_reader_close(r);
    capture_reply = DREAM_ASK_NOTHING;
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    assert_int_equal(dream_seam_set_backend(&fake), 0);
    assert_int_equal(rc, 0);
    if (getenv("ASK_DEBUG")) fprintf(stderr, "%s\n", captured);
    return out;
}

/* A message hit is read with the reply it got: the assistant's next message, cited as footnotes
 * cite it and dated by its own day. Before, the person's next message was given as "the assistant
 * replied" (the tool-call reply between them ingest leaves out), under the hit's date, and a
 * message without a fit id was cited by its raw id ("##2") where footnotes say "#m2". */
static void test_ask_reads_a_message_with_the_reply_it_got(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "q1", 1722556600000, "My ferret is called Quimby."}, /* 2024-08-01 23:56 */
        {"user", "q2", 1722556660000, "I think they smell, honestly."},
        {"assistant", "a1", 1722556700000, "They do; a weekly bath helps."},
        {"user", "has space", 1722556740000, "Quimby sleeps in the wardrobe."}, /* 23:59 */
        {"assistant", "a2", 1722556860000, "Wardrobes are cosy for a ferret."}, /* 2024-08-02 00:01 */
    };
    put_conversation("ask-reply", "Pets", m, 5);
    json_decref(ask_captured("What is Quimby called and where does Quimby sleep?", DREAM_ASK_NOTHING));
    assert_non_null(strstr(captured, "My ferret is called Quimby."));
    assert_null(strstr(captured, "The assistant replied: I think they smell"));
    assert_non_null(strstr(captured, "The assistant replied: Wardrobes are cosy for a ferret."));
    /* the reply cited under its own day; the message with no fit id as "#m3" */
    assert_non_null(strstr(captured, "#a2` (2024-08-02, Pets)"));
    assert_non_null(strstr(captured, "#m3` (2024-08-01, Pets)"));
    assert_null(strstr(captured, "##has space"));
}

/* An emoji, an arrow or curly quotes in a question are no part of its words: the kombucha's
 * message is read and the answer that names Zelda is an answer. Before, an emoji joined the
 * words' OR search as a term with no word and the search failed ("nothing on file", no model
 * call); curly quotes stayed on the word ("“Zelda”" matched nothing, and the answer's “Zelda”
 * shared no word with the question). */
static void test_ask_question_with_emoji_and_curly_quotes(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "z1", 1725184800000, "My kombucha culture is called Zelda and lives in the airing cupboard."},
        {"assistant", "z2", 1725184860000, "A warm cupboard suits a kombucha culture well."},
    };
    put_conversation("ask-zelda", "Kombucha", m, 2);
    static const char *const questions[] = {
        "Which kombucha is Zelda? \U0001F375",
        "\U0001F375 Zelda \u2192 kombucha?",
        "Which kombucha is \u201cZelda\u201d?",
        "Zelda\u2019s kombucha?",
    };
    for (size_t i = 0; i < sizeof questions / sizeof questions[0]; i++) {
        json_t *out = ask_captured(questions[i], "\u201cZelda\u201d lives in the airing cupboard.[^1]");
        if (!strstr(captured, "called Zelda") || !json_is_true(json_object_get(out, "answered")))
            fprintf(stderr, "question %zu (%s): answered %d\n%s\n", i, questions[i], json_is_true(json_object_get(out, "answered")), captured);
        assert_non_null(strstr(captured, "called Zelda"));
        assert_true(json_is_true(json_object_get(out, "answered")));
        json_decref(out);
    }
}

/* A stored message's own "[^1]" is no footnote of the read: the model is shown "[ ^1]", so an
 * answer that copies it cannot cite footnote 1 (another source) for it. */
static void test_ask_message_markers_are_not_footnotes(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "b1", 1725184800000, "My brew log for the scoby says it grew a layer [^1]."},
        {"assistant", "b2", 1725184860000, "A new scoby layer is a good sign [^2]."},
    };
    put_conversation("ask-scoby", "Scoby", m, 2);
    json_decref(ask_captured("Scoby brew log?", DREAM_ASK_NOTHING));
    if (!strstr(captured, "grew a layer [ ^1].")) fprintf(stderr, "%s\n", captured);
    assert_non_null(strstr(captured, "grew a layer [ ^1]."));
    assert_non_null(strstr(captured, "good sign [ ^2]."));
    assert_null(strstr(captured, "layer [^1]."));
}

/* The answer shares a word with the question as the search finds words: accents and case
 * aside. "Which cafe..." read the café message, then its answer "café" counted as sharing no
 * word with the question and became "nothing on file". */
static void test_ask_answer_shares_a_word_accents_aside(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "f1", 1725184800000, "My favourite caf\u00e9 is the Caf\u00e9 Cr\u00e8me by the station."},
        {"assistant", "f2", 1725184860000, "Good coffee there."},
    };
    put_conversation("ask-cafe", "Coffee", m, 2);
    static const char *const questions[] = {"Which cafe do I prefer?", "Which CAF\u00c9 do I prefer?", "Which caf\u00e9 do I prefer?"};
    for (size_t i = 0; i < sizeof questions / sizeof questions[0]; i++) {
        json_t *out = ask_captured(questions[i], "Your favourite caf\u00e9 is the Caf\u00e9 Cr\u00e8me.[^1]");
        if (!json_is_true(json_object_get(out, "answered"))) fprintf(stderr, "%s:\n%s\n", questions[i], captured);
        assert_non_null(strstr(captured, "Cr\u00e8me by the station"));
        assert_true(json_is_true(json_object_get(out, "answered")));
        json_decref(out);
    }
}

/* A reply the search found (and read) before the person's message it answers is not read a
 * second time as that message's reply. */
static void test_ask_reads_a_reply_once(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "w1", 1725184800000, "I bought a wombat plush."},
        {"assistant", "w2", 1725184860000, "A wombat plush! Wombat fans love a wombat plush; wombat, wombat."},
    };
    put_conversation("ask-wombat", "Plush", m, 2);
    json_decref(ask_captured("Which wombat plush?", DREAM_ASK_NOTHING));
    const char *first = strstr(captured, "Wombat fans love");
    if (!first || strstr(first + 1, "Wombat fans love")) fprintf(stderr, "%s\n", captured);
    assert_non_null(first);
    assert_null(strstr(first + 1, "Wombat fans love"));
    assert_non_null(strstr(captured, "I bought a wombat plush."));
}

/* A question in Japanese (no spaces between words) reads the message that holds its words, and
 * an answer that names them is an answer. Before, the whole question was one "word", the search
 * found nothing and ask said nothing on file without asking the model. */
static void test_ask_reads_a_question_in_a_script_without_spaces(void **state)
{
    (void)state;
    struct dream_message m[] = {
        {"user", "j1", 1725184800000, "うちの犬の名前はポチです。柴犬です。"},
        {"assistant", "j2", 1725184860000, "いい名前ですね。"},
    };
    put_conversation("ask-ja", "犬", m, 2);
    json_t *out = ask_captured("犬の名前は?", "名前はポチです。[^1]");
    assert_non_null(strstr(captured, "うちの犬の名前はポチです。"));
    assert_true(json_is_true(json_object_get(out, "answered")));
    assert_non_null(strstr(str(out, "answer"), "ポチ"));
    json_decref(out);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s VAULT_DIR DREAMING_DATA_DIR DREAM\n", argv[0]);
        return 2;
    }
    vault_dir = argv[1];
    dreaming_dir = argv[2];
    dream_bin = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ask_answers_from_the_reads_with_real_citations),
        cmocka_unit_test(test_ask_question_with_emoji_and_curly_quotes),
        cmocka_unit_test(test_ask_reads_a_reply_once),
        cmocka_unit_test(test_ask_answer_shares_a_word_accents_aside),
        cmocka_unit_test(test_ask_message_markers_are_not_footnotes),
        cmocka_unit_test(test_ask_resolves_a_name_in_the_question),
        cmocka_unit_test(test_ask_says_nothing_on_file),
        cmocka_unit_test(test_ask_drops_a_preamble_and_footnotes_it_was_not_given),
        cmocka_unit_test(test_ask_reads_messages_when_no_article_holds_it),
        cmocka_unit_test(test_ask_refuses_bad_questions),
        cmocka_unit_test(test_ask_small_read_budgets_stay_in_bounds),
        cmocka_unit_test(test_ask_cli_prints_the_answer),
        cmocka_unit_test(test_ask_reads_a_message_with_the_reply_it_got),
        cmocka_unit_test(test_ask_reads_a_question_in_a_script_without_spaces),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
