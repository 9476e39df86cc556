/* test_read.c — the read tools (dream/read.h) on the hand-written vault tests/data/vault and
 * a store made by the Dreaming fixture (tests/data/dreaming through segment → extract → resolve
 * → route with the scripted fake). argv: VAULT_DIR DREAMING_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dreaming_fixture.h"
#include "dream/error.h"
#include "dream/read.h"
#include "dream/store.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *vault_dir, *dreaming_dir;
static char tmpdir[256], store_path[400];

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return system(cmd);
}

/* The fixture store, made once for the whole run. */
static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-read-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(store_path, sizeof store_path, "%s/memory.sqlite", tmpdir);
    dream_store *s = NULL;
    char corpus[400], wiki[400];
    snprintf(corpus, sizeof corpus, "%s/corpus", dreaming_dir);
    snprintf(wiki, sizeof wiki, "%s/wiki", dreaming_dir);
    if (dream_store_open(store_path, &s)) return -1;
    int rc = fixture_ingest(s, corpus);
    if (!rc) rc = fixture_run_pipeline(s, wiki, 0, NULL, NULL);
    dream_store_close(s);
    return rc;
}

static int group_teardown(void **state)
{
    (void)state;
    return sh("rm -rf '%s'", tmpdir);
}

static dream_reader *open_reader(const char *wiki, const char *store)
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

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "(none)";
}

static size_t compact_size(const json_t *v)
{
    char *s = json_dumps(v, JSON_COMPACT);
    size_t n = strlen(s);
    free(s);
    return n;
}

/* True when the array arr holds the string s. */
static bool has(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) return true;
    return false;
}

static void expect_resolves(dream_reader *r, const char *name, const char *stem, const char *how)
{
    json_t *o = NULL;
    int rc = dream_read_resolve(r, name, &o);
    if (rc || strcmp(str(o, "stem"), stem) || (how && strcmp(str(o, "matched"), how))) {
        char *s = json_dumps(o, 0);
        fail_msg("resolve '%s': rc %d, %s (want %s by %s)", name, rc, s, stem, how ? how : "any");
    }
    json_decref(o);
}

static void test_read_resolve_by_stem_title_alias_and_normal_form(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    expect_resolves(r, "Sourdough", "Sourdough", "stem");
    expect_resolves(r, "home solar panels", "Home_Solar_Panels", "stem"); /* link rules: case, spaces */
    expect_resolves(r, "natural leaven", "Sourdough", "alias");             /* infobox aliases */
    expect_resolves(r, "Wild Yeast Bread", "Sourdough", "alias");
    expect_resolves(r, "The Balcony Garden", "Balcony_garden", NULL);       /* a leading article dropped */
    expect_resolves(r, "balcony-garden", "Balcony_garden", "squeezed");     /* punctuation and spaces ignored */
    json_t *o = NULL;
    assert_int_equal(dream_read_resolve(r, "rooftop solar", &o), 0);
    assert_string_equal(str(o, "status"), "article");
    assert_string_equal(str(o, "kind"), "project");
    assert_string_equal(str(o, "type"), "energy system");
    /* the lead, clipped, with footnote markers dropped */
    assert_non_null(strstr(str(o, "lead"), "installed in spring 2024."));
    assert_null(strstr(str(o, "lead"), "[^"));
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_resolve_miss_names_near_candidates(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_resolve(r, "sourdogh", &o), DREAM_ENOTFOUND); /* a typo */
    assert_string_equal(str(o, "status"), "missing");
    assert_string_equal(str(json_array_get(json_object_get(o, "candidates"), 0), "stem"), "Sourdough");
    assert_non_null(strstr(dream_error_last(), "near: Sourdough"));
    json_decref(o);
    assert_int_equal(dream_read_resolve(r, "cello", &o), DREAM_ENOTFOUND); /* one shared word */
    assert_string_equal(str(json_array_get(json_object_get(o, "candidates"), 0), "stem"), "Cello_Practice");
    json_decref(o);
    assert_int_equal(dream_read_resolve(r, "quantum chromodynamics", &o), DREAM_ENOTFOUND);
    assert_int_equal(json_array_size(json_object_get(o, "candidates")), 0);
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_resolve_uses_pipeline_names_and_captured_subjects(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, store_path);
    /* surface forms the pipeline folded into an entity that has an article */
    expect_resolves(r, "Levain", "Sourdough", "pipeline");
    expect_resolves(r, "bike repair", "Bicycle_Maintenance", "pipeline");
    expect_resolves(r, "CELLO", "Cello_Practice", "pipeline");
    /* a subject captured without an article: found, with where it came up */
    json_t *o = NULL;
    assert_int_equal(dream_read_resolve(r, "kayak trip", &o), 0);
    assert_string_equal(str(o, "status"), "captured");
    assert_string_equal(str(o, "name"), "Kayak Trip");
    assert_int_equal(json_integer_value(json_object_get(o, "chunks")), 1);
    json_t *m = json_array_get(json_object_get(o, "mentions"), 0);
    assert_string_equal(str(m, "title"), "A weekend on the lake");
    assert_string_equal(str(m, "label"), "a kayak weekend");
    assert_int_equal(strlen(str(m, "cite")), 8);
    json_decref(o);
    /* a miss lists captured subjects near it */
    assert_int_equal(dream_read_resolve(r, "chess", &o), DREAM_ENOTFOUND);
    assert_string_equal(str(json_array_get(json_object_get(o, "captured_near"), 0), "name"), "Chess Openings");
    json_decref(o);
    dream_reader_close(r);
}

/* A vault in tmpdir/<name> holding a copy of the fixture articles. */
static void copy_vault(const char *name, char *dir, size_t n)
{
    snprintf(dir, n, "%s/%s", tmpdir, name);
    assert_int_equal(sh("rm -rf '%s' && mkdir -p '%s' && cp -r '%s/articles' '%s/articles'", dir, dir, vault_dir, dir), 0);
}

/* A subject whose article the person deleted by hand is still where it came up: resolve found
 * nothing ("no article named"), as if it had never been talked about. */
static void test_read_resolve_a_deleted_articles_subject_shows_where_it_came_up(void **state)
{
    (void)state;
    char dir[4200], cmd[8600];
    copy_vault("deleted", dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "rm '%s/articles/Sourdough.md'", dir);
    assert_int_equal(system(cmd), 0);
    dream_reader *r = open_reader(dir, store_path);
    json_t *o = NULL;
    assert_int_equal(dream_read_resolve(r, "Sourdough", &o), 0);
    assert_string_equal(str(o, "status"), "captured");
    assert_true(json_integer_value(json_object_get(o, "chunks")) >= 1);
    json_decref(o);
    dream_reader_close(r);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_read_default_read_stays_under_the_budget(void **state)
{
    (void)state;
    char dir[400], path[500];
    copy_vault("big", dir, sizeof dir);
    /* an article with a 3 KB lead and 80 long section titles: 20 KB in all */
    FILE *f;
    snprintf(path, sizeof path, "%s/articles/Long_subject.md", dir);
    assert_non_null(f = fopen(path, "w"));
    fputs("# Long subject\n\n**Long subject** is", f);
    for (int i = 0; i < 300; i++) fputs(" a long lead", f);
    fputs(".\n", f);
    for (int i = 0; i < 80; i++) fprintf(f, "\n## Section number %d with a rather long title about many things\n\nBody text of section %d goes here.\n", i, i);
    fclose(f);
    dream_reader *r = open_reader(dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_article(r, "Long_subject", false, &o), 0);
    size_t js = compact_size(o);
    char *text = dream_read_text("read", o);
    if (js > DREAM_READ_BUDGET || strlen(text) > DREAM_READ_BUDGET) fail_msg("default read: %zu bytes JSON, %zu text", js, strlen(text));
    assert_true(json_integer_value(json_object_get(o, "more_sections")) > 0);
    assert_true(json_array_size(json_object_get(o, "sections")) >= 5);
    assert_true(json_integer_value(json_object_get(o, "bytes")) > 8192);
    free(text);
    json_decref(o);
    /* whole, over the limit: the table of contents and a note, never the 20 KB */
    assert_int_equal(dream_read_article(r, "Long_subject", true, &o), 0);
    assert_true(json_is_true(json_object_get(o, "too_big")));
    assert_null(json_object_get(o, "text"));
    assert_true(compact_size(o) <= DREAM_READ_BUDGET + 200);
    json_decref(o);
    /* whole, small: exactly the file */
    assert_int_equal(dream_read_article(r, "Cello_Practice", true, &o), 0);
    char *want = NULL;
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", dir);
    assert_non_null(f = fopen(path, "rb"));
    want = calloc(1, 8192);
    assert_true(fread(want, 1, 8191, f) > 0);
    fclose(f);
    assert_string_equal(str(o, "text"), want);
    free(want);
    json_decref(o);
    /* every fixture article's default read is small */
    for (size_t i = 0; i < 6; i++) {
        const char *names[] = {"Sourdough", "Home_Cooking", "Balcony_garden", "Home_Solar_Panels", "Bicycle_Maintenance", "Cello_Practice"};
        assert_int_equal(dream_read_article(r, names[i], false, &o), 0);
        assert_true(compact_size(o) <= DREAM_READ_BUDGET);
        assert_null(json_object_get(o, "text"));
        json_decref(o);
    }
    dream_reader_close(r);
}

static void expect_missing(dream_reader *r, const char *name)
{
    json_t *o = NULL;
    int rc = dream_read_article(r, name, true, &o);
    if (rc != DREAM_ENOTFOUND) fail_msg("'%s' gave %d, not 'not found'", name, rc);
    assert_null(json_object_get(o, "text"));
    json_decref(o);
}

static void test_read_names_never_escape_the_wiki(void **state)
{
    (void)state;
    char dir[400], path[600], target[600];
    copy_vault("escape", dir, sizeof dir);
    /* a secret next to the wiki, a link to it from articles/, and a link that stays inside */
    snprintf(path, sizeof path, "%s/secret.md", tmpdir);
    write_file(path, "# Secret\n\nThe password is HUNTER2SECRET.\n");
    snprintf(path, sizeof path, "%s/articles/Leak.md", dir);
    snprintf(target, sizeof target, "%s/secret.md", tmpdir);
    assert_int_equal(symlink(target, path), 0);
    snprintf(path, sizeof path, "%s/Meta", dir);
    assert_int_equal(sh("mkdir -p '%s'", path), 0);
    snprintf(path, sizeof path, "%s/Meta/Inside.md", dir);
    write_file(path, "# Inside\n\nA page linked from articles.\n");
    snprintf(path, sizeof path, "%s/articles/Inside.md", dir);
    assert_int_equal(symlink("../Meta/Inside.md", path), 0);
    dream_reader *r = open_reader(dir, "");
    char abs[600];
    snprintf(abs, sizeof abs, "%s/secret.md", tmpdir);
    expect_missing(r, "../secret");
    expect_missing(r, "../secret.md");
    expect_missing(r, "../../secret");
    expect_missing(r, abs);
    expect_missing(r, "/etc/passwd");
    expect_missing(r, "Leak");
    expect_missing(r, "articles/../../secret");
    json_t *o = NULL;
    assert_int_equal(dream_read_search(r, "HUNTER2SECRET", 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 0);
    json_decref(o);
    assert_int_equal(dream_read_list(r, 0, 0, &o), 0);
    assert_false(has(json_object_get(o, "articles"), "Leak"));
    assert_true(has(json_object_get(o, "articles"), "Inside"));
    json_decref(o);
    assert_int_equal(dream_read_status(r, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "skipped")), 1);
    json_decref(o);
    assert_int_equal(dream_read_article(r, "Inside", true, &o), 0);
    assert_non_null(strstr(str(o, "text"), "A page linked from articles."));
    json_decref(o);
    dream_reader_close(r);
}

/* A redirect page leads to its target: resolve and read of the redirect's name gave the redirect
 * itself (an empty lead, no word of where it points), so an agent stopped at a dead end. Section,
 * links and infobox follow it too; a loop of redirects, or one to no article, stays itself. */
static void test_read_follows_a_redirect_page(void **state)
{
    (void)state;
    char dir[400], path[600];
    copy_vault("redirect", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/articles/Levain.md", dir);
    write_file(path, "# Levain\n\n*Redirects to [[Sourdough]].*\n");
    snprintf(path, sizeof path, "%s/articles/Starter.md", dir);
    write_file(path, "# Starter\n\n*Redirects to [[Levain]].*\n");
    snprintf(path, sizeof path, "%s/articles/Loop_a.md", dir);
    write_file(path, "# Loop a\n\n*Redirects to [[Loop b]].*\n");
    snprintf(path, sizeof path, "%s/articles/Loop_b.md", dir);
    write_file(path, "# Loop b\n\n*Redirects to [[Loop a]].*\n");
    snprintf(path, sizeof path, "%s/articles/Gone.md", dir);
    write_file(path, "# Gone\n\n*Redirects to [[Nowhere at all]].*\n");
    dream_reader *r = open_reader(dir, "");
    json_t *o = NULL;
    static const char *const names[] = {"Levain", "starter"};
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(dream_read_resolve(r, names[k], &o), 0);
        assert_string_equal(str(o, "stem"), "Sourdough");
        assert_string_equal(str(o, "redirected_from"), k ? "Starter" : "Levain");
        assert_true(strlen(str(o, "lead")) > 20);
        json_decref(o);
        assert_int_equal(dream_read_article(r, names[k], false, &o), 0);
        assert_string_equal(str(o, "stem"), "Sourdough");
        json_decref(o);
    }
    assert_int_equal(dream_read_infobox(r, "Levain", &o), 0);
    assert_string_equal(str(o, "stem"), "Sourdough");
    json_decref(o);
    assert_int_equal(dream_read_resolve(r, "Sourdough", &o), 0);
    assert_null(json_object_get(o, "redirected_from"));
    json_decref(o);
    static const char *const stay[] = {"Loop_a", "Gone"};
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(dream_read_resolve(r, stay[k], &o), 0);
        assert_string_equal(str(o, "status"), "article");
        assert_true(strncmp(str(o, "stem"), k ? "Gone" : "Loop_", k ? 4 : 5) == 0);
        json_decref(o);
    }
    dream_reader_close(r);
}

/* Past the 25 a group shows, links left out are counted by target: each of 30 red links written
 * twice counted its repeats (10 "more" for 5 left out). */
static void test_read_links_left_out_are_counted_once_each(void **state)
{
    (void)state;
    char dir[400], path[600], text[1024] = "# Many\n\n**Many** links.\n\n";
    copy_vault("many", dir, sizeof dir);
    for (int i = 0; i < 30; i++) snprintf(text + strlen(text), sizeof text - strlen(text), "[[R%d]] [[R%d]] ", i, i);
    strcat(text, "\n");
    snprintf(path, sizeof path, "%s/articles/Many.md", dir);
    write_file(path, text);
    dream_reader *r = open_reader(dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_links(r, "Many", &o), 0);
    assert_int_equal(json_array_size(json_object_get(o, "redlinks")), 25);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "more"), "redlinks")), 5);
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_bytes_that_are_not_utf8_still_give_json(void **state)
{
    (void)state;
    char dir[400], path[600];
    copy_vault("latin1", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/articles/Cafe.md", dir);
    write_file(path, "# Cafe\n\nThe **caf\xe9** on the corner serves cr\xe8me.\n\n## Menu\n\nTea[^1].\n\n## References\n\n[^1]: `conv:0a0b0c0d#1` (2024-01-01, \xff)\n");
    snprintf(path, sizeof path, "%s/articles/Bad\xff.md", dir); /* a file name no JSON string can carry */
    write_file(path, "# Bad\n");
    dream_reader *r = open_reader(dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_article(r, "Cafe", true, &o), 0);
    assert_non_null(strstr(str(o, "text"), "The **caf?** on the corner serves cr?me."));
    json_decref(o);
    assert_int_equal(dream_read_article(r, "Cafe", false, &o), 0);
    assert_non_null(strstr(str(o, "lead"), "caf?"));
    json_decref(o);
    assert_int_equal(dream_read_section(r, "Cafe", "menu", &o), 0);
    assert_string_equal(str(json_array_get(json_object_get(o, "references"), 0), "text"), "`conv:0a0b0c0d#1` (2024-01-01, ?)");
    json_decref(o);
    assert_int_equal(dream_read_resolve(r, "caf\xe9 \xc3", &o), DREAM_ENOTFOUND);
    assert_non_null(strstr(str(o, "error"), "no article named 'caf? ?'"));
    json_decref(o);
    assert_int_equal(dream_read_call(r, "no\xfftool", NULL, &o), DREAM_EINVAL);
    assert_non_null(strstr(str(o, "error"), "no read tool 'no?tool'"));
    json_decref(o);
    assert_int_equal(dream_read_status(r, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "skipped")), 1);
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_section_gives_subsections_and_their_citations(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_section(r, "Sourdough", "starter", &o), 0);
    const char *t = str(o, "text");
    assert_true(strncmp(t, "## Starter\n", 11) == 0);
    assert_non_null(strstr(t, "### Feeding schedule"));
    assert_null(strstr(t, "## Baking"));
    json_t *refs = json_object_get(o, "references");
    assert_int_equal(json_array_size(refs), 3);
    assert_string_equal(str(json_array_get(refs, 2), "text"), "`conv:77e0aa01#1` (2024-02-10, Levain or starter)");
    json_decref(o);
    /* by title, and a leading '#' */
    assert_int_equal(dream_read_section(r, "Sourdough", "Feeding schedule", &o), 0);
    assert_true(strncmp(str(o, "text"), "### Feeding schedule\n", 21) == 0);
    assert_int_equal(json_array_size(json_object_get(o, "references")), 2);
    json_decref(o);
    assert_int_equal(dream_read_section(r, "sourdough", "#baking", &o), 0);
    assert_string_equal(str(o, "anchor"), "baking");
    json_decref(o);
    /* every tool takes any name resolve knows */
    assert_int_equal(dream_read_section(r, "natural leaven", "baking", &o), 0);
    assert_string_equal(str(o, "stem"), "Sourdough");
    json_decref(o);
    /* an unknown anchor lists the article's anchors */
    assert_int_equal(dream_read_section(r, "Sourdough", "nope", &o), DREAM_ENOTFOUND);
    assert_true(has(json_object_get(o, "anchors"), "feeding-schedule"));
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_links_grouped_outbound_and_inbound(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_links(r, "Sourdough", &o), 0);
    json_t *ob = json_object_get(o, "outbound");
    assert_true(has(json_object_get(ob, "series"), "Home_Cooking"));
    assert_true(has(json_object_get(ob, "see_also"), "Balcony_garden"));
    assert_int_equal(json_array_size(json_object_get(ob, "prose")), 0); /* categories are not links */
    json_t *in = json_object_get(o, "inbound");
    assert_int_equal(json_array_size(in), 1);
    assert_string_equal(str(json_array_get(in, 0), "stem"), "Home_Cooking");
    assert_string_equal(str(json_array_get(in, 0), "via"), "main");
    json_decref(o);
    assert_int_equal(dream_read_links(r, "Home_Cooking", &o), 0);
    ob = json_object_get(o, "outbound");
    assert_true(has(json_object_get(ob, "main"), "Sourdough"));
    assert_true(has(json_object_get(ob, "prose"), "Balcony_garden")); /* [[balcony garden]] resolved */
    json_decref(o);
    assert_int_equal(dream_read_links(r, "Bicycle_Maintenance", &o), 0);
    assert_true(has(json_object_get(o, "redlinks"), "Chain Lube"));
    json_decref(o);
    assert_int_equal(dream_read_links(r, "Balcony_garden", &o), 0);
    assert_true(has(json_object_get(json_object_get(o, "outbound"), "infobox"), "Home_Solar_Panels"));
    json_decref(o);
    dream_reader_close(r);
}

/* links and list --series on an article of 4 MB and 240,000 links, its series banner at the
 * top, a line of 2,000 links, a *Main article line at the very end: each link's group comes
 * from its own line, found in time linear in the text (a rescan of the text from its start for
 * every link took minutes here, past the test's timeout). */
static void test_read_links_of_a_huge_article_are_grouped_by_their_line(void **state)
{
    (void)state;
    char dir[400], path[500];
    copy_vault("huge", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/articles/Huge.md", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("# Huge\n\n*Part of a series on [[Home Cooking]].*\n\nA lead about elephants.\n\n## Links\n\n", f);
    for (int i = 0; i < 120000; i++) fprintf(f, "See [[Sourdough]] and [[Balcony garden]] item %d.\n", i);
    for (int i = 0; i < 2000; i++) fputs("[[Cello Practice]] ", f);
    fputs("\n\n*Main article: [[Bicycle Maintenance]]*\n", f);
    fclose(f);
    dream_reader *r = open_reader(dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_links(r, "Huge", &o), 0);
    json_t *ob = json_object_get(o, "outbound");
    assert_int_equal(json_array_size(json_object_get(ob, "series")), 1);
    assert_true(has(json_object_get(ob, "series"), "Home_Cooking"));
    assert_int_equal(json_array_size(json_object_get(ob, "main")), 1);
    assert_true(has(json_object_get(ob, "main"), "Bicycle_Maintenance"));
    assert_int_equal(json_array_size(json_object_get(ob, "prose")), 3);
    assert_true(has(json_object_get(ob, "prose"), "Sourdough"));
    assert_true(has(json_object_get(ob, "prose"), "Balcony_garden"));
    assert_true(has(json_object_get(ob, "prose"), "Cello_Practice"));
    json_decref(o);
    assert_int_equal(dream_read_members(r, "series", "Home Cooking", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 2); /* Huge and Sourdough */
    assert_string_equal(str(json_array_get(json_object_get(o, "members"), 0), "stem"), "Huge");
    json_decref(o);
    assert_int_equal(dream_read_members(r, "series", "Bicycle Maintenance", 0, 0, &o), 0); /* a *Main line is no banner */
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 0);
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_infobox_and_membership(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL;
    assert_int_equal(dream_read_infobox(r, "Balcony_garden", &o), 0);
    json_t *f = json_object_get(o, "fields");
    assert_int_equal(json_array_size(f), 5);
    assert_string_equal(str(json_array_get(f, 2), "key"), "location");
    assert_string_equal(str(json_array_get(f, 2), "value"), "south-facing balcony");
    /* the front matter's aliases, listed as the infobox listed them before they moved there */
    assert_string_equal(str(json_array_get(f, 4), "key"), "aliases");
    assert_string_equal(str(json_array_get(f, 4), "value"), "container garden, balcony planters");
    json_decref(o);
    assert_int_equal(dream_read_members(r, "category", "hobbies", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 3);
    assert_string_equal(str(json_array_get(json_object_get(o, "members"), 0), "stem"), "Bicycle_Maintenance");
    assert_non_null(strstr(str(json_array_get(json_object_get(o, "members"), 0), "lead"), "road bike"));
    json_decref(o);
    assert_int_equal(dream_read_members(r, "category", "Category:Home_projects", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 2);
    json_decref(o);
    assert_int_equal(dream_read_members(r, "type", "Container Garden", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 1);
    json_decref(o);
    assert_int_equal(dream_read_members(r, "kind", "domain", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 4);
    json_decref(o);
    assert_int_equal(dream_read_members(r, "series", "Home Cooking", 0, 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "members"), 0), "stem"), "Sourdough");
    json_decref(o);
    assert_int_equal(dream_read_members(r, "colour", "red", 0, 0, &o), DREAM_EINVAL);
    json_decref(o);
    assert_int_equal(dream_read_list(r, 1, 2, &o), 0);
    assert_int_equal(json_array_size(json_object_get(o, "articles")), 2);
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "articles"), 0)), "Bicycle_Maintenance");
    assert_int_equal(json_integer_value(json_object_get(o, "more")), 3);
    json_decref(o);
    dream_reader_close(r);
}

static void test_read_search_ranks_by_distinct_terms(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, store_path);
    json_t *o = NULL;
    assert_int_equal(dream_read_search(r, "the derailleur and chain", 0, &o), 0);
    assert_true(has(json_object_get(o, "terms"), "derailleur"));
    assert_false(has(json_object_get(o, "terms"), "the")); /* stopwords dropped */
    json_t *res = json_object_get(o, "results");
    assert_string_equal(str(json_array_get(res, 0), "stem"), "Bicycle_Maintenance");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(res, 0), "matched")), 2);
    json_t *line = json_array_get(json_object_get(o, "lines"), 0);
    assert_string_equal(str(line, "stem"), "Bicycle_Maintenance");
    json_decref(o);
    /* terms in the stem break a tie of distinct terms */
    assert_int_equal(dream_read_search(r, "garden", 0, &o), 0);
    assert_string_equal(str(json_array_get(json_object_get(o, "results"), 0), "stem"), "Balcony_garden");
    json_decref(o);
    /* captured subjects are searchable too */
    assert_int_equal(dream_read_search(r, "kayak", 0, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 0);
    assert_string_equal(str(json_array_get(json_object_get(o, "captured"), 0), "name"), "Kayak Trip");
    json_decref(o);
    /* a query of stopwords only is one term */
    assert_int_equal(dream_read_search(r, "the", 0, &o), 0);
    assert_true(has(json_object_get(o, "terms"), "the"));
    assert_true(json_integer_value(json_object_get(o, "total")) > 0);
    assert_true(compact_size(o) <= DREAM_READ_BUDGET);
    json_decref(o);
    dream_reader_close(r);
}

/* Commits every file of the repository at dir with message. */
static void commit_all(git_repository *repo, const char *message)
{
    git_index *idx;
    git_oid tree_id, id, parent_id;
    git_tree *tree;
    git_signature *sig;
    git_commit *parent = NULL;
    assert_int_equal(git_repository_index(&idx, repo), 0);
    assert_int_equal(git_index_add_all(idx, NULL, 0, NULL, NULL), 0);
    assert_int_equal(git_index_write(idx), 0);
    assert_int_equal(git_index_write_tree(&tree_id, idx), 0);
    assert_int_equal(git_tree_lookup(&tree, repo, &tree_id), 0);
    assert_int_equal(git_signature_now(&sig, "test", "test@localhost"), 0);
    if (git_reference_name_to_id(&parent_id, repo, "HEAD") == 0) assert_int_equal(git_commit_lookup(&parent, repo, &parent_id), 0);
    const git_commit *parents[1] = {parent};
    assert_int_equal(git_commit_create(&id, repo, "HEAD", sig, sig, NULL, message, tree, parent ? 1 : 0, parents), 0);
    git_commit_free(parent);
    git_signature_free(sig);
    git_tree_free(tree);
    git_index_free(idx);
}

static void test_read_status_counts_and_last_memory_commit(void **state)
{
    (void)state;
    char dir[400], path[600];
    copy_vault("status", dir, sizeof dir);
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_init(&repo, dir, 0), 0);
    commit_all(repo, "Initialize the wiki\n");
    snprintf(path, sizeof path, "%s/articles/Extra.md", dir);
    write_file(path, "# Extra\n\nA new page.\n");
    commit_all(repo, "memory: synthesis (1 created)\n\nDetails.\n");
    snprintf(path, sizeof path, "%s/articles/Extra.md", dir);
    write_file(path, "# Extra\n\nA hand edit.\n");
    commit_all(repo, "hand edit of Extra\n");
    git_repository_free(repo);
    git_libgit2_shutdown();
    /* a schedule recorded in the config directory */
    char home[500];
    snprintf(home, sizeof home, "%s/home", tmpdir);
    assert_int_equal(sh("mkdir -p '%s/config' && printf 'via=systemd\\nat=03:30\\nfile=x\\n' > '%s/config/schedule'", home, home), 0);
    setenv("DREAM_HOME", home, 1);
    dream_reader *r = open_reader(dir, store_path);
    json_t *o = NULL;
    assert_int_equal(dream_read_status(r, &o), 0);
    assert_int_equal(json_integer_value(json_object_get(o, "articles")), 7);
    assert_int_equal(json_integer_value(json_object_get(o, "stubs")), 1);
    assert_true(json_is_true(json_object_get(o, "git")));
    json_t *last = json_object_get(o, "last_commit");
    assert_string_equal(str(last, "subject"), "memory: synthesis (1 created)");
    assert_int_equal(strlen(str(last, "id")), 12);
    assert_int_equal(json_integer_value(json_object_get(o, "conversations")), 13);
    assert_int_equal(json_integer_value(json_object_get(o, "chunks")), 18);
    json_t *ent = json_object_get(o, "entities");
    assert_int_equal(json_integer_value(json_object_get(ent, "total")), 9);
    assert_int_equal(json_integer_value(json_object_get(ent, "article")), 5);
    assert_int_equal(json_integer_value(json_object_get(ent, "captured")), 4);
    json_t *sch = json_object_get(o, "schedule");
    assert_true(json_is_true(json_object_get(sch, "installed")));
    assert_string_equal(str(sch, "at"), "03:30");
    assert_true(compact_size(o) <= DREAM_READ_BUDGET);
    char *text = dream_read_text("status", o);
    assert_non_null(strstr(text, "last memory commit: "));
    assert_non_null(strstr(text, "13 conversations"));
    assert_non_null(strstr(text, "schedule: daily at 03:30 (systemd)"));
    free(text);
    json_decref(o);
    dream_reader_close(r);
    /* a shallow clone: its oldest commit's parent is not there (before, the walk sorted by time
     * wanted it, and status said "none") */
    char shallow[500];
    snprintf(shallow, sizeof shallow, "%s-shallow", dir);
    assert_int_equal(sh("rm -rf '%s' && git clone -q --depth 2 'file://%s' '%s'", shallow, dir, shallow), 0);
    r = open_reader(shallow, store_path);
    assert_int_equal(dream_read_status(r, &o), 0);
    assert_string_equal(str(json_object_get(o, "last_commit"), "subject"), "memory: synthesis (1 created)");
    json_decref(o);
    dream_reader_close(r);
    unsetenv("DREAM_HOME");
}

static void test_read_call_dispatches_and_refuses_bad_arguments(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL, *args = json_pack("{ss ss}", "name", "Sourdough", "anchor", "baking");
    assert_int_equal(dream_read_call(r, "section", args, &o), 0);
    assert_string_equal(str(o, "anchor"), "baking");
    json_decref(o);
    assert_int_equal(dream_read_call(r, "frobnicate", args, &o), DREAM_EINVAL);
    assert_non_null(strstr(str(o, "error"), "no read tool 'frobnicate'"));
    json_decref(o);
    json_decref(args);
    args = json_pack("{ss}", "limit", "ten");
    assert_int_equal(dream_read_call(r, "list", args, &o), DREAM_EINVAL);
    json_decref(o);
    assert_int_equal(dream_read_call(r, "read", args, &o), DREAM_EINVAL); /* no name */
    assert_non_null(strstr(str(o, "error"), "read needs an article name"));
    json_decref(o);
    json_decref(args);
    args = json_pack("{ss ss}", "type", "bread", "limit", "2");
    assert_int_equal(dream_read_call(r, "category", args, &o), 0);
    assert_string_equal(str(o, "by"), "type");
    json_decref(o);
    json_decref(args);
    /* a missing wiki is named with what to do */
    struct dream_reader_params p = {.wiki = "/nonexistent/wiki", .store = ""};
    dream_reader *none = NULL;
    assert_int_equal(dream_reader_open(&p, &none), DREAM_ENOTFOUND);
    assert_non_null(strstr(dream_error_last(), "dream init --wiki /nonexistent/wiki"));
    dream_reader_close(r);
}

/* list takes the CLI's filters itself (issue 18 item 10): list with a category, type, kind or
 * series is that membership, paged by limit and offset; two filters are refused, not one of
 * them silently dropped; and each tool names the arguments it takes. */
static void test_read_list_applies_member_filters_and_pages(void **state)
{
    (void)state;
    dream_reader *r = open_reader(vault_dir, "");
    json_t *o = NULL, *args = json_pack("{ss}", "category", "Hobbies");
    assert_int_equal(dream_read_call(r, "list", args, &o), 0);
    assert_string_equal(str(o, "by"), "category");
    assert_int_equal(json_integer_value(json_object_get(o, "total")), 3);
    assert_int_equal(json_array_size(json_object_get(o, "members")), 3);
    assert_null(json_object_get(o, "articles"));
    json_decref(o);
    json_decref(args);
    args = json_pack("{ss ss ss}", "category", "Hobbies", "limit", "1", "offset", "1");
    assert_int_equal(dream_read_call(r, "list", args, &o), 0);
    assert_int_equal(json_array_size(json_object_get(o, "members")), 1);
    assert_string_equal(str(json_array_get(json_object_get(o, "members"), 0), "stem"), "Cello_Practice");
    assert_int_equal(json_integer_value(json_object_get(o, "offset")), 1);
    assert_int_equal(json_integer_value(json_object_get(o, "more")), 1);
    json_decref(o);
    assert_int_equal(dream_read_call(r, "category", args, &o), 0); /* the same for the category tool */
    assert_int_equal(json_array_size(json_object_get(o, "members")), 1);
    json_decref(o);
    json_decref(args);
    args = json_pack("{ss ss}", "category", "Hobbies", "kind", "domain");
    assert_int_equal(dream_read_call(r, "list", args, &o), DREAM_EINVAL);
    assert_non_null(strstr(str(o, "error"), "not both category and kind"));
    json_decref(o);
    json_decref(args);
    assert_int_equal(dream_read_call(r, "category", NULL, &o), DREAM_EINVAL);
    json_decref(o);
    /* the arguments each tool takes, in the order the docs give them */
    const char *const *a = dream_read_tool_args("list");
    assert_non_null(a);
    const char *want[] = {"category", "type", "kind", "series", "limit", "offset", NULL};
    for (size_t i = 0; want[i]; i++) assert_string_equal(a[i], want[i]);
    assert_null(a[6]);
    assert_string_equal(dream_read_tool_args("section")[1], "anchor");
    assert_null(dream_read_tool_args("status")[0]);
    assert_null(dream_read_tool_args("frobnicate"));
    dream_reader_close(r);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s VAULT_DIR DREAMING_DIR\n", argv[0]);
        return 2;
    }
    vault_dir = argv[1];
    dreaming_dir = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_resolve_by_stem_title_alias_and_normal_form),
        cmocka_unit_test(test_read_resolve_miss_names_near_candidates),
        cmocka_unit_test(test_read_resolve_uses_pipeline_names_and_captured_subjects),
        cmocka_unit_test(test_read_resolve_a_deleted_articles_subject_shows_where_it_came_up),
        cmocka_unit_test(test_read_default_read_stays_under_the_budget),
        cmocka_unit_test(test_read_names_never_escape_the_wiki),
        cmocka_unit_test(test_read_follows_a_redirect_page),
        cmocka_unit_test(test_read_links_left_out_are_counted_once_each),
        cmocka_unit_test(test_read_bytes_that_are_not_utf8_still_give_json),
        cmocka_unit_test(test_read_section_gives_subsections_and_their_citations),
        cmocka_unit_test(test_read_links_grouped_outbound_and_inbound),
        cmocka_unit_test(test_read_links_of_a_huge_article_are_grouped_by_their_line),
        cmocka_unit_test(test_read_infobox_and_membership),
        cmocka_unit_test(test_read_search_ranks_by_distinct_terms),
        cmocka_unit_test(test_read_status_counts_and_last_memory_commit),
        cmocka_unit_test(test_read_call_dispatches_and_refuses_bad_arguments),
        cmocka_unit_test(test_read_list_applies_member_filters_and_pages),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
