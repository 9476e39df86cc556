/* test_search.c — the full-text search index (dream/search.h) and the read tool over it, on a
 * real SQLite store: the fixture corpus ingested and dreamed (segment..route) by the scripted
 * fake, a copy of the hand-written vault (tests/data/vault) as the wiki, and conversations
 * written here for what the corpus lacks (diacritics, phrases, dates).
 *
 * The query compiler turns every input into quoted FTS5 strings or a clear error naming the
 * query; messages are indexed by the transaction that stores them (and leave with them);
 * articles are indexed by the stages' writes and synced with hand edits; hits carry their
 * citation, date and snippet; an old store is migrated with its messages indexed; a damaged
 * index is found by the check and repaired by the rebuild. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/article.h"
#include "dream/error.h"
#include "dream/read.h"
#include "dream/search.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "store_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *vault_src, *dreaming_dir;
static char tmpdir[256], store_path[400], wiki[400];

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(dream_store *s, const char *id, const char *title, int64_t ms, const char *const *texts, size_t n)
{
    struct dream_message m[8];
    char ids[8][32];
    for (size_t i = 0; i < n; i++) {
        snprintf(ids[i], sizeof ids[i], "%s-m%zu", id, i);
        m[i] = (struct dream_message){i % 2 ? "assistant" : "user", ids[i], ms + (int64_t)i * 1000, texts[i]};
    }
    struct dream_conversation c = {"openai-jsonl", id, title, ms, ms, "test", m, n};
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-search-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(store_path, sizeof store_path, "%s/memory.sqlite", tmpdir);
    snprintf(wiki, sizeof wiki, "%s/wiki", tmpdir);
    if (sh("cp -r '%s' '%s'", vault_src, wiki)) return -1;
    dream_store *s = NULL;
    char corpus[400], seeds[400];
    snprintf(corpus, sizeof corpus, "%s/corpus", dreaming_dir);
    snprintf(seeds, sizeof seeds, "%s/wiki", dreaming_dir);
    if (dream_store_open(store_path, &s)) return -1;
    int rc = fixture_ingest(s, corpus);
    if (!rc) rc = fixture_run_pipeline(s, seeds, 0, NULL, NULL);
    dream_store_close(s);
    return rc;
}

static int group_teardown(void **state)
{
    (void)state;
    return sh("rm -rf '%s'%s", tmpdir, "");
}

static dream_reader *open_reader_on(const char *store)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    p.wiki = wiki;
    p.store = store;
    dream_reader *r = NULL;
    int rc = dream_reader_open(&p, &r);
    if (rc) fprintf(stderr, "open: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

static dream_reader *open_reader(void) { return open_reader_on(store_path); }

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "(none)";
}

/* Runs the search tool through dream_read_call on the store; fails the test on an error. */
static json_t *search_in(const char *store, const char *query, const char *more_key, const char *more_value)
{
    dream_reader *r = open_reader_on(store);
    json_t *args = json_pack("{ss}", "query", query), *out = NULL;
    if (more_key) json_object_set_new(args, more_key, json_string(more_value));
    int rc = dream_read_call(r, "search", args, &out);
    if (rc) {
        char *s = json_dumps(out, 0);
        fail_msg("search '%s': rc %d %s", query, rc, s);
    }
    json_decref(args);
    dream_reader_close(r);
    return out;
}

static json_t *search(const char *query, const char *more_key, const char *more_value) { return search_in(store_path, query, more_key, more_value); }

/* Writes at path a store as schema version `version` wrote it: the migrations up to it, then
 * rows (SQL). */
static void make_old_store(const char *path, int version, const char *rows)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 0; v < version; v++) assert_int_equal(sqlite3_exec(db, store_migrations[v], NULL, NULL, NULL), SQLITE_OK);
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version);
    assert_int_equal(sqlite3_exec(db, rows, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, bump, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static size_t count_conv(const json_t *o) { return json_array_size(json_object_get(o, "conversations")); }

/* True when some conversation hit's snippet holds s. */
static bool conv_snippet_has(const json_t *o, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(o, "conversations"), i, v) if (strstr(str(v, "snippet"), s)) return true;
    return false;
}

static void expect_compiles(const char *q, const char *want)
{
    char *m = NULL;
    int rc = dream_search_compile(q, &m);
    if (rc || strcmp(m, want)) fail_msg("compile '%s': rc %d '%s' (want '%s') %s", q, rc, m ? m : "", want, rc ? dream_error_last() : "");
    free(m);
}

static void expect_refused(const char *q, const char *why)
{
    char *m = NULL;
    int rc = dream_search_compile(q, &m);
    if (rc != DREAM_EINVAL || !strstr(dream_error_last(), why)) fail_msg("compile '%s': rc %d '%s' (want a refusal with '%s')", q, rc, dream_error_last(), why);
    assert_null(m);
}

static void test_search_compile_quotes_every_term(void **state)
{
    (void)state;
    expect_compiles("sourdough starter", "((\"sourdough\" AND \"starter\"))");
    expect_compiles("\"bow hold\" cello*", "((\"bow hold\" AND \"cello\"*))");
    expect_compiles("kayak OR canoe", "((\"kayak\")) OR ((\"canoe\"))");
    expect_compiles("bread -rye NOT spelt", "((\"bread\") NOT \"rye\" NOT \"spelt\")");
    expect_compiles("a AND b", "((\"a\" AND \"b\"))");
    /* FTS5 syntax in the input is text: it cannot reach FTS5 as an operator */
    expect_compiles("title:x NEAR(y) ^z c++ ; DROP", "((\"title:x\" AND \"NEAR(y)\" AND \"^z\" AND \"c++\" AND \"DROP\"))");
    expect_compiles("& sourdough !!", "((\"sourdough\"))"); /* punctuation alone finds nothing: dropped */
    expect_compiles("café", "((\"café\"))");
}

/* A term the tokenizer (unicode61) finds no word in is dropped whatever its script: non-ASCII
 * punctuation, symbols and emoji as ASCII punctuation is, else it reaches FTS5 as an empty
 * phrase and the whole AND matches nothing. Letters and digits of any script stay. */
static void test_search_compile_drops_terms_without_letters_or_digits(void **state)
{
    (void)state;
    expect_compiles("bread \u2014", "((\"bread\"))");                             /* em dash */
    expect_compiles("\u00ab bread \u00bb \u2026 \u00b7", "((\"bread\"))");     /* guillemets, ellipsis, middle dot */
    expect_compiles("bread \U0001F35E \u2764\ufe0f", "((\"bread\"))");          /* emoji, with a variation selector */
    expect_compiles("bread \u20ac \u00a9 \u3002", "((\"bread\"))");             /* euro, copyright, ideographic stop */
    expect_compiles("\u201cbread\u201d", "((\"\u201cbread\u201d\"))");           /* a word in curly quotes is a word */
    expect_compiles("\u65e5\u672c \u00df \u0663", "((\"\u65e5\u672c\" AND \"\u00df\" AND \"\u0663\"))"); /* CJK, sharp s, Arabic-Indic 3 */
    expect_compiles("e\u0301", "((\"e\u0301\"))");                               /* a letter and its combining accent */
    expect_refused("\u2014 \U0001F35E", "no words to search for");
    /* a dropped term takes its OR with it: `dream ask` joins a question's words with OR, and one
     * emoji among them made the whole search "OR needs words on both sides" */
    expect_compiles("hydration OR \U0001F35E OR Gus", "((\"hydration\")) OR ((\"Gus\"))");
    expect_compiles("\U0001F35E OR hydration", "((\"hydration\"))");
    expect_compiles("hydration OR \u2192", "((\"hydration\"))");
    expect_compiles("hydration OR \U0001F35E OR \u2192 OR Gus", "((\"hydration\")) OR ((\"Gus\"))");
    /* and end to end: the dash no longer empties the hits */
    json_t *o = search("starter \u2014", "conversations", "1");
    assert_true(count_conv(o) >= 1);
    json_decref(o);
}

static void test_search_compile_refuses_bad_syntax_naming_the_query(void **state)
{
    (void)state;
    expect_refused("\"bow hold", "bad search query '\"bow hold': the quote at byte 0 is never closed");
    expect_refused("OR kayak", "OR needs words on both sides");
    expect_refused("kayak OR", "OR needs words on both sides");
    expect_refused("kayak OR OR canoe", "OR needs words on both sides");
    expect_refused("-rye", "only excludes words");
    expect_refused("bread OR -rye", "only excludes words");
    expect_refused("*", "alone it means nothing");
    expect_refused("!!! ...", "no words to search for");
    expect_refused("", "no words to search for");
    expect_refused("bread NOT", "NOT needs a word after it");
    expect_refused("bad \xff byte", "not valid UTF-8");
    char many[400] = "";
    for (int i = 0; i < 33; i++) strcat(many, "w ");
    expect_refused(many, "more than 32 words");
}

static void test_search_finds_messages_with_citation_date_and_snippet(void **state)
{
    (void)state;
    json_t *o = search("starter five days", "conversations", "1");
    assert_null(json_object_get(o, "results")); /* messages only */
    assert_int_equal(count_conv(o), 1);
    json_t *h = json_array_get(json_object_get(o, "conversations"), 0);
    /* the citation is the conversation's hash and the message's own id, as footnotes cite */
    assert_true(strncmp(str(h, "cite"), "conv:", 5) == 0);
    assert_non_null(strstr(str(h, "cite"), "#dr-c1-m0"));
    assert_string_equal(str(h, "date"), "2024-01-10");
    assert_string_equal(str(h, "role"), "user");
    assert_string_equal(str(h, "conversation"), "Feeding a new sourdough starter");
    assert_non_null(strstr(str(h, "snippet"), "**starter** **five** **days**"));
    /* the hash is a real conversation's */
    char hash[64];
    snprintf(hash, sizeof hash, "%.*s", (int)(strchr(str(h, "cite"), '#') - str(h, "cite") - 5), str(h, "cite") + 5);
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get_by_cite(s, hash, &c), 0);
    assert_string_equal(c->messages[0].id, "dr-c1-m0");
    dream_store_conversation_free(c);
    dream_store_close(s);
    json_decref(o);
}

static void test_search_folds_case_and_diacritics_phrases_and_prefixes(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    const char *a[] = {"We met at the Café Crème in Zürich, near the lake.", "Noted."};
    const char *b[] = {"Zurich trains run late; the lake was calm and the cafe crowded.", "Ok."};
    put(s, "diacritics-a", "Zürich trip", 1717200000000, a, 2); /* 2024-06-01 */
    put(s, "diacritics-b", "Trains", 1733011200000, b, 2);      /* 2024-12-01 */
    dream_store_close(s);
    json_t *o = search("CAFE zurich", "conversations", "1");
    assert_int_equal(count_conv(o), 2); /* case and accents folded both ways */
    json_decref(o);
    o = search("café crème", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    assert_true(conv_snippet_has(o, "**Café** **Crème**"));
    json_decref(o);
    o = search("\"the lake was calm\"", "conversations", "1"); /* a phrase: in that order */
    assert_int_equal(count_conv(o), 1);
    json_decref(o);
    o = search("\"lake the\"", "conversations", "1");
    assert_int_equal(count_conv(o), 0);
    json_decref(o);
    o = search("zür* crowd*", "conversations", "1"); /* prefixes */
    assert_int_equal(count_conv(o), 1);
    assert_true(conv_snippet_has(o, "**crowded**"));
    json_decref(o);
    o = search("zurich -trains", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    assert_true(conv_snippet_has(o, "**Zürich**"));
    json_decref(o);
    /* more matches than the rank window: ranked among the most recently stored */
    dream_reader *r = open_reader();
    struct dream_read_search_params sp;
    dream_read_search_default_params(&sp);
    sp.query = "zurich";
    sp.conversations_only = true;
    sp.rank_window = 1;
    assert_int_equal(dream_read_search_index(r, &sp, &o), 0);
    assert_int_equal(count_conv(o), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "conversations"), 0), "date"), "2024-12-01");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "ranked_among"), "newest")), 1);
    json_decref(o);
    sp.rank_window = 0;
    assert_int_equal(dream_read_search_index(r, &sp, &o), 0);
    assert_int_equal(count_conv(o), 2);
    assert_null(json_object_get(o, "ranked_among"));
    json_decref(o);
    dream_reader_close(r);
    /* dates: --since and --until take days, both included */
    o = search("zurich", "since", "2024-07-01");
    assert_int_equal(count_conv(o), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "conversations"), 0), "date"), "2024-12-01");
    json_decref(o);
    o = search("zurich", "until", "2024-06-01");
    assert_int_equal(count_conv(o), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "conversations"), 0), "date"), "2024-06-01");
    json_decref(o);
}

/* A snippet shows the window around the match, wherever it is in the message, with ellipses
 * where the message goes on, a phrase in one pair of marks and words side by side in a pair
 * each; a pasted log repeating the word thousands of times gives the same short snippet (its
 * time, which FTS5's snippet() made quadratic in the matches, is bench_search's --paste). */
static void test_search_snippet_shows_the_match_window_wherever_it_is(void **state)
{
    (void)state;
    size_t cap = 200000;
    char *deep = malloc(cap), *paste = malloc(cap);
    assert_non_null(deep);
    assert_non_null(paste);
    deep[0] = paste[0] = '\0';
    for (int i = 0; i < 600; i++) strcat(deep, "filler ");
    strcat(deep, "then the quillwort grew back fast. ");
    for (int i = 0; i < 600; i++) strcat(deep, "filler ");
    for (int i = 0; i < 6000; i++) strcat(paste, "pastedword ipsum dolor ");
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    const char *a[] = {deep, "Noted."}, *b[] = {paste, "Ok."};
    put(s, "snippet-deep", "Deep", 1717200000000, a, 2);
    put(s, "snippet-paste", "Paste", 1717200000000, b, 2);
    const char *c[] = {"A quarzolith in a message whose id no footnote could carry.", "Ok."};
    put(s, "no fit id", "Ids", 1717200000000, c, 2); /* its ids hold a space */
    dream_store_close(s);
    /* a hit is cited as footnotes cite the message: "m" and its position (before, "#no fit id-m0") */
    json_t *ids = search("quarzolith", "conversations", "1");
    const char *cite = str(json_array_get(json_object_get(ids, "conversations"), 0), "cite");
    assert_true(strlen(cite) > 3 && strcmp(cite + strlen(cite) - 3, "#m0") == 0);
    json_decref(ids);
    json_t *o = search("quillwort", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    const char *sn = str(json_array_get(json_object_get(o, "conversations"), 0), "snippet");
    assert_true(strncmp(sn, "…", strlen("…")) == 0);
    assert_non_null(strstr(sn, "then the **quillwort** grew back fast."));
    assert_true(strlen(sn) > strlen("…") && strcmp(sn + strlen(sn) - strlen("…"), "…") == 0);
    json_decref(o);
    o = search("\"ipsum dolor\" pastedword", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    sn = str(json_array_get(json_object_get(o, "conversations"), 0), "snippet");
    assert_true(strncmp(sn, "**pastedword** **ipsum dolor** **pastedword** **ipsum dolor**", 61) == 0);
    assert_true(strlen(sn) < 240);
    json_decref(o);
    /* what holds the rest back is named: the limit (a higher --limit shows more), or the 2 KB
     * budget (where it would not: before, both said "more: --limit") */
    o = search("pastedword OR quillwort", "limit", "1");
    assert_string_equal(str(json_object_get(o, "more"), "by"), "limit");
    json_decref(o);
    o = search("the", "limit", "30");
    assert_string_equal(str(json_object_get(o, "more"), "by"), "budget");
    json_decref(o);
    free(deep);
    free(paste);
}

/* Chinese and Japanese write no spaces between words: each Han, Hiragana and Katakana character
 * is a token of the index (the tokenizer "dream"), so a word of theirs is found wherever it
 * stands, as a phrase of its characters, and not the same characters in another order. Before,
 * unicode61 made each clause one token, and only the whole clause matched. */
static void test_search_finds_words_in_scripts_without_spaces(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    const char *a[] = {"うちの犬の名前はポチです。柴犬です。", "ポチはいい名前ですね。"};
    const char *b[] = {"我住在北京，周末去东城吃烤鸭。", "好的。"};
    /* one unicode61 token of kana and a folded accent: its pieces' offsets cannot be exact */
    const char *m[] = {"I love カフェCafé very much, said the quokkafan.", "Ok."};
    put(s, "cjk-ja", "犬", 1717200000000, a, 2);
    put(s, "cjk-zh", "周末", 1717200000000, b, 2);
    put(s, "cjk-mixed", "Cafe", 1717200000000, m, 2);
    dream_store_close(s);
    /* its snippet is the text (before, the offsets went back and the snippet came out empty) */
    json_t *mx = search("quokkafan カフェ", "conversations", "1");
    assert_int_equal(count_conv(mx), 1);
    assert_true(conv_snippet_has(mx, "I love "));
    assert_true(conv_snippet_has(mx, "**quokkafan**"));
    json_decref(mx);
    json_t *o = search("ポチ", "conversations", "1");
    assert_int_equal(count_conv(o), 2);
    assert_true(conv_snippet_has(o, "**ポチ**です"));
    json_decref(o);
    o = search("柴犬", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    json_decref(o);
    o = search("烤鸭 北京", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    assert_true(conv_snippet_has(o, "**北京**"));
    json_decref(o);
    o = search("京北", "conversations", "1"); /* the characters, not in that order */
    assert_int_equal(count_conv(o), 0);
    json_decref(o);
}

static void test_search_bad_input_is_a_clear_error(void **state)
{
    (void)state;
    dream_reader *r = open_reader();
    json_t *args = json_pack("{ss}", "query", "\"unclosed phrase"), *out = NULL;
    assert_int_equal(dream_read_call(r, "search", args, &out), DREAM_EINVAL);
    assert_non_null(strstr(str(out, "error"), "bad search query '\"unclosed phrase': the quote at byte 0 is never closed"));
    assert_null(strstr(str(out, "error"), "fts5"));
    json_decref(out);
    json_decref(args);
    args = json_pack("{ss ss}", "query", "kayak", "since", "June");
    assert_int_equal(dream_read_call(r, "search", args, &out), DREAM_EINVAL);
    assert_string_equal(str(out, "error"), "since must be a day written YYYY-MM-DD, not 'June'");
    json_decref(out);
    json_decref(args);
    dream_reader_close(r);
}

static void test_search_ranks_article_sections_first_with_their_citations(void **state)
{
    (void)state;
    json_t *o = search("derailleur limit", NULL, NULL);
    json_t *h = json_array_get(json_object_get(o, "results"), 0);
    assert_string_equal(str(h, "kind"), "section");
    assert_string_equal(str(h, "stem"), "Bicycle_Maintenance");
    assert_string_equal(str(h, "anchor"), "derailleur");
    assert_string_equal(str(h, "section"), "Derailleur");
    /* the section's markers cite [^2]; its definition is the hit's citation and date */
    dream_reader *r = open_reader();
    json_t *sec = NULL;
    assert_int_equal(dream_read_section(r, "Bicycle_Maintenance", "derailleur", &sec), 0);
    const char *def = json_string_value(json_object_get(json_array_get(json_object_get(sec, "references"), 0), "text"));
    assert_non_null(def);
    assert_string_equal(str(h, "cite"), "conv:4f4f4f4f#1");
    assert_string_equal(str(h, "date"), "2024-07-01");
    assert_non_null(strstr(def, "`conv:4f4f4f4f#1` (2024-07-01,"));
    json_decref(sec);
    dream_reader_close(r);
    assert_non_null(strstr(str(h, "snippet"), "**limit**"));
    /* messages come after, in their own list: the conversation that asked about it */
    assert_true(conv_snippet_has(o, "**derailleur** **limit**"));
    json_decref(o);
    /* a captured subject (no article) is a hit too */
    o = search("kayak", NULL, NULL);
    h = json_array_get(json_object_get(o, "results"), 0);
    assert_string_equal(str(h, "kind"), "subject");
    assert_string_equal(str(h, "name"), "Kayak Trip");
    json_decref(o);
}

/* A section hit's citation and date are those of the sentence its snippet shows, not the
 * section's first footnote: the marker after the matched word. */
static void test_search_hit_cites_the_matched_sentence(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/articles/Two_claims.md", wiki);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# Two claims\n\n**Two claims** is a subject with an aardvark in it.[^1] Later a pangolin moved in.[^2]\n\n"
          "## Burrows\n\nThe aardvark digs.[^1] The pangolin rolls up.[^2]\n\n"
          "## References\n\n[^1]: `conv:1a2b3c4d#m1` (2024-01-05, Early)\n[^2]: `conv:5e6f7a8b#m9` (2024-06-20, Later)\n", f);
    fclose(f);
    static const struct {
        const char *query, *anchor, *cite, *date;
    } cases[] = {
        {"pangolin moved", "", "conv:5e6f7a8b#m9", "2024-06-20"},
        {"aardvark subject", "", "conv:1a2b3c4d#m1", "2024-01-05"},
        {"pangolin rolls", "burrows", "conv:5e6f7a8b#m9", "2024-06-20"},
        {"aardvark digs", "burrows", "conv:1a2b3c4d#m1", "2024-01-05"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *o = search(cases[i].query, NULL, NULL);
        json_t *h = json_array_get(json_object_get(o, "results"), 0);
        assert_non_null(h);
        if (strcmp(str(h, "anchor"), cases[i].anchor) || strcmp(str(h, "cite"), cases[i].cite) || strcmp(str(h, "date"), cases[i].date))
            fprintf(stderr, "%s: anchor %s cite %s date %s snippet %s\n", cases[i].query, str(h, "anchor"), str(h, "cite"), str(h, "date"),
                    str(h, "snippet"));
        assert_string_equal(str(h, "anchor"), cases[i].anchor);
        assert_string_equal(str(h, "cite"), cases[i].cite);
        assert_string_equal(str(h, "date"), cases[i].date);
        json_decref(o);
    }
    assert_int_equal(unlink(path), 0);
}

static void test_search_follows_hand_edits_of_the_wiki(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", wiki);
    json_t *o = search("xylophonist", NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(o, "results")), 0);
    json_decref(o);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("\n## Teachers\n\nThe xylophonist next door gave one lesson.\n", f);
    fclose(f);
    o = search("xylophonist", NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(o, "results")), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "results"), 0), "anchor"), "teachers");
    json_decref(o);
    assert_int_equal(unlink(path), 0); /* a removed article leaves the index */
    o = search("xylophonist", NULL, NULL);
    assert_int_equal(json_array_size(json_object_get(o, "results")), 0);
    json_decref(o);
}

/* Writes text at path with the modification time sec.nsec. */
static void write_with_mtime(const char *path, const char *text, time_t sec, long nsec)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    struct timespec t[2] = {{sec, nsec}, {sec, nsec}};
    assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static size_t hits(const char *query)
{
    json_t *o = search(query, NULL, NULL);
    size_t n = json_array_size(json_object_get(o, "results"));
    json_decref(o);
    return n;
}

/* A hand edit that keeps the byte count is found even when its file's time is the same second
 * as what was indexed (the time is compared to the nanosecond), and even the same nanosecond
 * when that is recent at indexing (a coarse clock or filesystem: then the text is compared). */
static void test_search_follows_a_hand_edit_in_the_same_second(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/articles/Same_second.md", wiki);
    write_with_mtime(path, "# Same second\n\nThe walrus sleeps.\n", 1577836800, 100); /* 2020-01-01 */
    assert_int_equal(hits("walrus"), 1);
    write_with_mtime(path, "# Same second\n\nThe narwhal sings.\n", 1577836800, 200); /* same size, same second */
    assert_int_equal(hits("narwhal"), 1);
    assert_int_equal(hits("walrus"), 0);
    time_t later = time(NULL) + 3600; /* a time not yet past when indexed: never trusted alone */
    write_with_mtime(path, "# Same second\n\nThe octopus swims.\n", later, 0);
    assert_int_equal(hits("octopus"), 1);
    write_with_mtime(path, "# Same second\n\nThe penguin dives.\n", later, 0); /* same size, same nanosecond */
    assert_int_equal(hits("penguin"), 1);
    assert_int_equal(hits("octopus"), 0);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(hits("penguin"), 0);
}

static void test_search_index_follows_the_store_in_its_transactions(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    const char *v1[] = {"My quokka photo was blurry.", "Use a faster shutter."};
    put(s, "changing", "Quokka", 1717200000000, v1, 2);
    const char *v2[] = {"My quokka photo was blurry.", "Try a wombat lens instead."};
    put(s, "changing", "Quokka", 1717300000000, v2, 2); /* a changed conversation: message 1 replaced */
    dream_store_close(s);
    json_t *o = search("shutter", "conversations", "1");
    assert_int_equal(count_conv(o), 0); /* the replaced message left the index with its row */
    json_decref(o);
    o = search("wombat", "conversations", "1");
    assert_int_equal(count_conv(o), 1);
    json_decref(o);
}

/* What an old store holds in the tests below: a conversation of one message, a captured subject. */
#define OLD_STORE_ROWS                                                                                                  \
    "INSERT INTO conversations (id, source, source_id, cite, title, content_hash, message_count, ingested_at)"          \
    " VALUES (1, 'pi', 'x', 'abcd1234', 'Old', 'h', 1, 0);"                                                             \
    "INSERT INTO messages VALUES (1, 0, 'user', 'm0', 1700000000000, 'an archaeopteryx fossil');"                      \
    "INSERT INTO pipeline_entities (name, normal, squeezed, route, created_at)"                                         \
    " VALUES ('Fossil Hunting', 'fossil hunting', 'fossilhunting', 'captured', 0);"

/* A store as version 6 wrote it (before the index), holding a conversation: opening it
 * migrates it and the message is found. */
static void test_search_migrates_an_older_store_with_its_messages(void **state)
{
    (void)state;
    char old[500];
    snprintf(old, sizeof old, "%s/v6.sqlite", tmpdir);
    make_old_store(old, 6, OLD_STORE_ROWS);
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(old, &s), 0);
    assert_int_equal(dream_store_schema_version(s), DREAM_STORE_SCHEMA_VERSION);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT rowid FROM search WHERE search MATCH 'archaeopteryx OR fossil' ORDER BY rowid", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t subject = sqlite3_column_int64(st, 0);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_true(sqlite3_column_int64(st, 0) == DREAM_SEARCH_MESSAGE_BASE + 1 * DREAM_SEARCH_POSITION_SPAN + 0);
    assert_true(subject == DREAM_SEARCH_SUBJECT_BASE + 1);
    sqlite3_finalize(st);
    assert_int_equal(dream_search_check(s), 0);
    dream_store_close(s);
}

static int64_t count_rows(dream_store *s, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void test_search_check_finds_damage_and_rebuild_repairs_it(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    assert_int_equal(dream_search_check(s), 0);
    int64_t before = count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'sourdough'");
    assert_true(before > 0);
    /* damage: the index's segments lose their data */
    assert_int_equal(sqlite3_exec(store_db(s), "UPDATE search_data SET block = zeroblob(40) WHERE id > 10", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(dream_search_check(s), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "rebuild it with `dream reindex`"));
    struct dream_search_rebuild_stats st;
    assert_int_equal(dream_search_rebuild(s, wiki, &st), 0);
    assert_int_equal(dream_search_check(s), 0);
    assert_true(st.messages == (size_t)count_rows(s, "SELECT count(*) FROM messages"));
    assert_true(st.articles >= 5);
    assert_true(st.subjects >= 1);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'sourdough'") == before);
    /* the articles are back too, without a reader's sync */
    assert_true(count_rows(s, "SELECT count(*) FROM search_sections WHERE stem = 'Bicycle_Maintenance' AND anchor = 'derailleur'") == 1);
    dream_store_close(s);
}

/* dream reindex takes the articles the reader takes, by the same rule: a link out of the wiki
 * (to a file of secrets, say) and a name that is not UTF-8 are left out; a link that stays in
 * the wiki is an article. */
static void test_search_rebuild_reads_only_what_the_reader_reads(void **state)
{
    (void)state;
    char outside[500], link[600], badname[600], inner[600];
    snprintf(outside, sizeof outside, "%s/outside.md", tmpdir);
    FILE *f = fopen(outside, "w");
    assert_non_null(f);
    fputs("# Outside\n\nThe password is zanzibarite.\n", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/articles/Outside.md", wiki);
    assert_int_equal(symlink(outside, link), 0);
    snprintf(badname, sizeof badname, "%s/articles/Bad\xffname.md", wiki);
    f = fopen(badname, "w");
    assert_non_null(f);
    fputs("# Badname\n\nA quetzalcoatlite lives here.\n", f);
    fclose(f);
    snprintf(inner, sizeof inner, "%s/articles/Inner_link.md", wiki);
    assert_int_equal(symlink("Sourdough.md", inner), 0);
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    struct dream_search_rebuild_stats st;
    assert_int_equal(dream_search_rebuild(s, wiki, &st), 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'zanzibarite'") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search_articles WHERE stem = 'Outside'") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'quetzalcoatlite'") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search_articles WHERE stem = 'Inner_link'") == 1);
    assert_true(st.articles == (size_t)count_rows(s, "SELECT count(*) FROM search_articles"));
    dream_reader *r = open_reader();
    json_t *o = NULL;
    assert_int_equal(dream_read_list(r, 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), (json_int_t)st.articles); /* the reader's count */
    json_decref(o);
    dream_reader_close(r);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(unlink(badname), 0);
    assert_int_equal(unlink(inner), 0);
    assert_int_equal(dream_search_rebuild(s, wiki, NULL), 0);
    dream_store_close(s);
}

/* The index's entries (term, column, offset, row) into the temp table name, an article's row
 * named by its stem and anchor (a rebuild numbers the sections anew). */
static void snapshot_index(dream_store *s, const char *name)
{
    char sql[1024];
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS temp.search_terms; CREATE VIRTUAL TABLE temp.search_terms USING fts5vocab(main, search, instance);"
             "DROP TABLE IF EXISTS temp.%s; CREATE TEMP TABLE %s AS SELECT t.term, t.col, t.offset,"
             " CASE WHEN t.doc < (1 << 48) THEN s.stem || '#' || s.anchor ELSE t.doc END AS row"
             " FROM temp.search_terms t LEFT JOIN search_sections s ON s.id = t.doc;"
             "DROP TABLE temp.search_terms",
             name, name);
    char *err = NULL;
    if (sqlite3_exec(store_db(s), sql, NULL, NULL, &err) != SQLITE_OK) fail_msg("snapshot: %s", err);
}

/* Asserts that the index holds exactly what a rebuild from the store and the wiki makes: the
 * triggers and the article writes gave FTS5 the right text to take out ('delete' is trusted:
 * wrong text would leave stale entries, which FTS5's integrity check cannot see in a table
 * without its own copy of the text). */
static void assert_index_is_as_rebuilt(dream_store *s)
{
    snapshot_index(s, "kept");
    struct dream_search_rebuild_stats st;
    assert_int_equal(dream_search_rebuild(s, wiki, &st), 0);
    snapshot_index(s, "rebuilt");
    assert_true(count_rows(s, "SELECT count(*) FROM temp.kept") > 100);
    int64_t missing = count_rows(s, "SELECT count(*) FROM (SELECT * FROM temp.rebuilt EXCEPT SELECT * FROM temp.kept)");
    int64_t stale = count_rows(s, "SELECT count(*) FROM (SELECT * FROM temp.kept EXCEPT SELECT * FROM temp.rebuilt)");
    if (missing || stale) fail_msg("the kept index differs from a rebuild: %lld entries missing, %lld stale", (long long)missing, (long long)stale);
    assert_int_equal(dream_search_check(s), 0);
}

/* Every way a row of the index changes (a conversation changed and taken out, a message edited
 * in place, a subject renamed, routed to an article and back, deleted; an article synced)
 * leaves the index as a rebuild would make it. */
static void test_search_triggers_keep_the_index_as_a_rebuild_makes_it(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    const char *v1[] = {"A walrus on the pier.", "It sleeps all day.", "Walruses snore."};
    const char *v2[] = {"A walrus on the pier.", "It woke at noon."};
    put(s, "churn", "Walrus", 1717200000000, v1, 3);
    put(s, "churn", "Walrus", 1717300000000, v2, 2);
    put(s, "gone", "Gone", 1717400000000, v1, 3);
    assert_int_equal(sqlite3_exec(store_db(s),
                                  "UPDATE messages SET text = 'the walrus was a seal after all'"
                                  " WHERE conversation = (SELECT id FROM conversations WHERE source_id = 'churn') AND position = 0;"
                                  "DELETE FROM conversations WHERE source_id = 'gone';"
                                  "INSERT INTO pipeline_entities (name, normal, squeezed, route, created_at)"
                                  " VALUES ('Walrus Watching', 'walrus watching', 'walruswatching', 'captured', 0),"
                                  " ('Seal Spotting', 'seal spotting', 'sealspotting', 'captured', 0),"
                                  " ('Otter Notes', 'otter notes', 'otternotes', 'captured', 0),"
                                  " ('Puffin Colony', 'puffin colony', 'puffincolony', 'article', 0);"
                                  "UPDATE pipeline_entities SET name = 'River Otters' WHERE normal = 'otter notes';"
                                  "UPDATE pipeline_entities SET route = 'article' WHERE normal = 'seal spotting';"
                                  "UPDATE pipeline_entities SET route = 'captured' WHERE normal = 'puffin colony';"
                                  "UPDATE pipeline_entities SET route = 'article', name = 'Puffins' WHERE normal = 'puffin colony';"
                                  "UPDATE pipeline_entities SET route = 'captured' WHERE normal = 'puffin colony';"
                                  "DELETE FROM pipeline_entities WHERE normal = 'walrus watching';",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    json_t *o = search("walrus", NULL, NULL); /* a reader's sync writes the articles' rows */
    assert_int_equal(count_conv(o), 1);
    json_decref(o);
    assert_index_is_as_rebuilt(s);
    dream_store_close(s);
}

/* A rebuild is one transaction: one that fails half way (here at an article, after the old
 * index was dropped and the messages indexed again) leaves the old index as it was, as a crash
 * would. */
static void test_search_rebuild_that_fails_leaves_the_old_index(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    snapshot_index(s, "before");
    int64_t sections = count_rows(s, "SELECT count(*) FROM search_sections");
    assert_int_equal(sqlite3_exec(store_db(s),
                                  "CREATE TEMP TRIGGER fail_rebuild BEFORE INSERT ON main.search_articles WHEN new.stem = 'Sourdough'"
                                  " BEGIN SELECT RAISE(ABORT, 'a failure injected half way'); END;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(dream_search_rebuild(s, wiki, NULL), DREAM_EIO);
    assert_non_null(strstr(dream_error_last(), "a failure injected half way"));
    assert_int_equal(sqlite3_exec(store_db(s), "DROP TRIGGER temp.fail_rebuild", NULL, NULL, NULL), SQLITE_OK);
    snapshot_index(s, "after");
    assert_true(count_rows(s, "SELECT count(*) FROM temp.before") > 100);
    assert_true(count_rows(s, "SELECT count(*) FROM (SELECT * FROM temp.before EXCEPT SELECT * FROM temp.after)") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM (SELECT * FROM temp.after EXCEPT SELECT * FROM temp.before)") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search_sections") == sections);
    assert_int_equal(dream_search_check(s), 0);
    dream_store_close(s);
}

/* --since and --until read each row's date where it is kept: a message's own time, else its
 * conversation's; a section's newest cited date; a subject has none, so a bound leaves it out. */
static void test_search_dates_come_from_the_rows_that_hold_them(void **state)
{
    (void)state;
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    struct dream_message m[] = {{"user", "u0", 0, "Bitter orange marmalade wants a long boil."}}; /* no time of its own */
    struct dream_conversation c = {"openai-jsonl", "undated", "Marmalade", 1677628800000 /* 2023-03-01 */, 1677628800000, "test", m, 1};
    enum dream_store_outcome out;
    assert_int_equal(dream_store_put(s, &c, &out), 0);
    dream_store_close(s);
    json_t *o = search("marmalade", "since", "2023-03-01");
    assert_int_equal(count_conv(o), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "conversations"), 0), "date"), "2023-03-01");
    json_decref(o);
    o = search("marmalade", "since", "2023-03-02");
    assert_int_equal(count_conv(o), 0);
    json_decref(o);
    o = search("derailleur limit", "until", "2024-07-01");
    assert_string_equal(str(json_array_get(json_object_get(o, "results"), 0), "anchor"), "derailleur");
    json_decref(o);
    o = search("derailleur limit", "since", "2024-07-02");
    for (size_t i = 0; i < json_array_size(json_object_get(o, "results")); i++)
        assert_string_not_equal(str(json_array_get(json_object_get(o, "results"), i), "anchor"), "derailleur");
    json_decref(o);
    o = search("kayak", NULL, NULL);
    assert_string_equal(str(json_array_get(json_object_get(o, "results"), 0), "kind"), "subject");
    json_decref(o);
    o = search("kayak", "since", "2000-01-01");
    for (size_t i = 0; i < json_array_size(json_object_get(o, "results")); i++)
        assert_string_not_equal(str(json_array_get(json_object_get(o, "results"), i), "kind"), "subject");
    json_decref(o);
}

/* A store as version 8 wrote it (the index holding a copy of every text, kept by the old
 * triggers, an article's rows in it): opening it makes the index again once, without the copy;
 * its messages and subjects are found at once, its articles after a reader's sync, and what it
 * holds is what a rebuild makes. */
static void test_search_migrates_a_version_8_store_to_an_index_without_copies(void **state)
{
    (void)state;
    char old[500];
    snprintf(old, sizeof old, "%s/v8.sqlite", tmpdir);
    make_old_store(old, 8,
                   OLD_STORE_ROWS
                   "INSERT INTO messages VALUES (1, 1, 'assistant', 'm1', NULL, 'Solnhofen limestone, Bavaria');"
                   "UPDATE conversations SET message_count = 2, created_at = 1700000000000;"
                   "INSERT INTO search_sections (id, stem, anchor, cites, date) VALUES (1, 'Bicycle_Maintenance', 'derailleur', '', '2024-07-01');"
                   "INSERT INTO search (rowid, title, section, text) VALUES (1, 'Bicycle Maintenance', 'Derailleur', 'limit screws');"
                   "INSERT INTO search_articles VALUES ('Bicycle_Maintenance', 0, 1, 'x');");
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(old, &s), 0);
    assert_int_equal(dream_store_schema_version(s), DREAM_STORE_SCHEMA_VERSION);
    assert_true(count_rows(s, "SELECT count(*) FROM sqlite_schema WHERE name = 'search_content'") == 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'archaeopteryx'") == 1);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'bavaria'") == 1);
    assert_true(count_rows(s, "SELECT rowid FROM search WHERE search MATCH 'fossil hunting'") == DREAM_SEARCH_SUBJECT_BASE + 1);
    assert_true(count_rows(s, "SELECT count(*) FROM search_articles") == 0); /* the next sync writes them again */
    dream_store_close(s);
    json_t *o = search_in(old, "archaeopteryx", NULL, NULL);
    assert_int_equal(count_conv(o), 1);
    assert_non_null(strstr(str(json_array_get(json_object_get(o, "conversations"), 0), "snippet"), "**archaeopteryx**"));
    json_decref(o);
    o = search_in(old, "derailleur limit", NULL, NULL);
    assert_string_equal(str(json_array_get(json_object_get(o, "results"), 0), "anchor"), "derailleur");
    json_decref(o);
    assert_int_equal(dream_store_open(old, &s), 0); /* opened again: nothing more to migrate */
    assert_int_equal(dream_store_schema_version(s), DREAM_STORE_SCHEMA_VERSION);
    assert_index_is_as_rebuilt(s);
    dream_store_close(s);
}

/* CREATE writes articles through synth_write, which indexes each in the transaction that
 * journals it: the rows are there before any reader syncs. */
static void test_search_stage_writes_are_indexed_in_their_transaction(void **state)
{
    (void)state;
    char dir[400], w2[450], s2[450], corpus[400], seeds[400];
    snprintf(dir, sizeof dir, "%s/created", tmpdir);
    snprintf(w2, sizeof w2, "%s/wiki", dir);
    snprintf(s2, sizeof s2, "%s/memory.sqlite", dir);
    snprintf(corpus, sizeof corpus, "%s/corpus", dreaming_dir);
    snprintf(seeds, sizeof seeds, "%s/wiki", dreaming_dir);
    assert_int_equal(dream_vault_init(w2, NULL, NULL, NULL), 0);
    dream_store *s = NULL;
    assert_int_equal(dream_store_open(s2, &s), 0);
    assert_int_equal(fixture_ingest(s, corpus), 0);
    assert_int_equal(fixture_run_pipeline(s, seeds, 0, NULL, NULL), 0);
    assert_true(count_rows(s, "SELECT count(*) FROM search_articles") == 0);
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    assert_int_equal(dream_seam_set_backend(&fake), 0);
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = w2;
    struct dream_synth_result res;
    assert_int_equal(dream_synth_create(s, &p, &res), 0);
    dream_seam_set_backend(NULL);
    assert_true(count_rows(s, "SELECT count(*) FROM search_articles") == 5);
    assert_true(count_rows(s, "SELECT count(*) FROM search_sections WHERE stem = 'Sourdough'") >= 2);
    assert_true(count_rows(s, "SELECT count(*) FROM search WHERE search MATCH 'starter' AND rowid < 281474976710656") >= 1);
    /* what was recorded is the file as written */
    char path[600];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", w2);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_true(count_rows(s, "SELECT bytes FROM search_articles WHERE stem = 'Sourdough'") == size);
    dream_store_close(s);
}

/* A sync that cannot take the store (another writer holds it) says so: the ROLLBACK after the
 * failed BEGIN wrote its own error over the real one ("cannot rollback - no transaction is
 * active"), and the reader's warning blamed the wrong thing. */
static void test_search_sync_busy_store_says_busy(void **state)
{
    char dir[] = "/tmp/dream-test-search-busy-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.sqlite", dir);
    dream_store *store;
    assert_int_equal(dream_store_open(path, &store), 0);
    sqlite3 *other;
    assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_busy_timeout(store_db(store), 20);
    const char *text = "# Kayak\n\nA boat.\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    const char *stems[] = {"Kayak"};
    const dream_article *arts[] = {a};
    int64_t mtimes[] = {1};
    size_t changed = 0;
    assert_int_not_equal(dream_search_sync(store, stems, arts, mtimes, 1, &changed), 0);
    assert_null(strstr(dream_error_last(), "cannot rollback"));
    assert_non_null(strstr(dream_error_last(), "locked"));
    dream_error_clear();
    dream_article_free(a);
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    dream_store_close(store);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    (void)state;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s VAULT_DIR DREAMING_DATA_DIR\n", argv[0]);
        return 2;
    }
    vault_src = argv[1];
    dreaming_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_compile_quotes_every_term),
        cmocka_unit_test(test_search_compile_refuses_bad_syntax_naming_the_query),
        cmocka_unit_test(test_search_compile_drops_terms_without_letters_or_digits),
        cmocka_unit_test(test_search_finds_messages_with_citation_date_and_snippet),
        cmocka_unit_test(test_search_folds_case_and_diacritics_phrases_and_prefixes),
        cmocka_unit_test(test_search_snippet_shows_the_match_window_wherever_it_is),
        cmocka_unit_test(test_search_finds_words_in_scripts_without_spaces),
        cmocka_unit_test(test_search_bad_input_is_a_clear_error),
        cmocka_unit_test(test_search_ranks_article_sections_first_with_their_citations),
        cmocka_unit_test(test_search_hit_cites_the_matched_sentence),
        cmocka_unit_test(test_search_follows_hand_edits_of_the_wiki),
        cmocka_unit_test(test_search_follows_a_hand_edit_in_the_same_second),
        cmocka_unit_test(test_search_index_follows_the_store_in_its_transactions),
        cmocka_unit_test(test_search_migrates_an_older_store_with_its_messages),
        cmocka_unit_test(test_search_check_finds_damage_and_rebuild_repairs_it),
        cmocka_unit_test(test_search_rebuild_reads_only_what_the_reader_reads),
        cmocka_unit_test(test_search_stage_writes_are_indexed_in_their_transaction),
        cmocka_unit_test(test_search_triggers_keep_the_index_as_a_rebuild_makes_it),
        cmocka_unit_test(test_search_rebuild_that_fails_leaves_the_old_index),
        cmocka_unit_test(test_search_dates_come_from_the_rows_that_hold_them),
        cmocka_unit_test(test_search_migrates_a_version_8_store_to_an_index_without_copies),
        cmocka_unit_test(test_search_sync_busy_store_says_busy),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
