/* test_article.c — the article module: parse into a tree, write back byte for byte, edit,
 * footnotes, the gate and check. argv[1]: the fixture articles directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dream/article.h"
#include "dream/error.h"
#include "util/file.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fixtures;

static char *read_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures, name);
    char *data = NULL;
    assert_int_equal(file_read_all(path, 0, &data, len), 0);
    return data;
}

static dream_article *parse_str(const char *s)
{
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(s, strlen(s), &a), 0);
    return a;
}

static void assert_roundtrip(const char *data, size_t len)
{
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(data, len, &a), 0);
    char *out = NULL;
    size_t olen = 0;
    assert_int_equal(dream_article_write(a, &out, &olen), 0);
    assert_int_equal(olen, len);
    assert_memory_equal(out, data, len);
    free(out);
    dream_article_free(a);
}

static void test_article_parses_the_tree_of_a_full_article(void **state)
{
    size_t len;
    char *data = read_fixture("Fujifilm_X100V.md", &len);
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(data, len, &a), 0);
    assert_string_equal(dream_article_title(a), "Fujifilm X100V");
    assert_false(dream_article_is_stub(a));
    assert_true(dream_article_has_infobox(a));
    assert_int_equal(dream_article_infobox_count(a), 7);
    assert_string_equal(dream_article_infobox_get(a, "chosen_over"), "[[Ricoh_GR_III|Ricoh GR III]]");
    assert_string_equal(dream_article_infobox_get(a, "aliases"), "X100V, the little Fuji");
    assert_non_null(strstr(dream_article_lead(a), "The **Fujifilm X100V** is"));
    /* Purchase, Settings, Autofocus, History, See also, References */
    assert_int_equal(dream_article_section_count(a), 6);
    assert_string_equal(dream_article_section(a, 1)->title, "Settings");
    assert_int_equal(dream_article_section(a, 2)->level, 3);
    assert_int_equal(dream_article_section(a, 3)->kind, DREAM_SECTION_HISTORY);
    assert_int_equal(dream_article_section(a, 4)->kind, DREAM_SECTION_SEE_ALSO);
    assert_int_equal(dream_article_section(a, 5)->kind, DREAM_SECTION_REFERENCES);
    assert_int_equal(dream_article_section_end(a, 1), 3); /* Settings holds Autofocus */
    assert_int_equal(dream_article_section_end(a, 0), 1);
    assert_int_equal(dream_article_section_end(a, 5), 6);
    dream_article *copy = NULL;
    assert_int_equal(dream_article_clone(a, &copy), 0);
    assert_string_equal(dream_article_text(copy, NULL), dream_article_text(a, NULL));
    dream_article_free(copy);
    assert_int_equal(dream_article_section_find(a, "see-also"), 4);
    assert_int_equal(dream_article_section_find(a, "See Also"), 4);
    /* the fenced "# not a heading" and "[^9]" are not parsed */
    assert_non_null(strstr(dream_article_section(a, 1)->body, "# not a heading"));
    assert_int_equal(dream_article_footnote_count(a), 3);
    const struct dream_article_footnote *f = dream_article_footnote(a, 1);
    assert_string_equal(f->cite.conv, "8b7e0f44");
    assert_string_equal(f->cite.msg, "11");
    assert_string_equal(f->cite.date, "2024-03-02");
    assert_string_equal(f->cite.title, "JPEG recipes");
    assert_true(f->well_formed);
    for (size_t i = 0; i < dream_article_ref_count(a); i++) assert_int_not_equal(dream_article_ref(a, i)->number, 9);
    assert_int_equal(dream_article_footnote_find(a, "c0ffee12", "2"), 3);
    assert_int_equal(dream_article_footnote_find(a, "c0ffee12", "3"), 0);
    /* links: one in the infobox, one in Purchase, two in See also */
    assert_int_equal(dream_article_link_count(a), 4);
    const struct dream_article_link *l = dream_article_link(a, 3);
    assert_string_equal(l->target, "Street_photography");
    assert_string_equal(l->display, "street shooting");
    assert_true(l->in_see_also);
    assert_false(dream_article_link(a, 1)->in_see_also);
    dream_article_free(a);
    free(data);
    (void)state;
}

static void test_article_write_gives_back_every_fixture_byte_for_byte(void **state)
{
    DIR *d = opendir(fixtures);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t len;
        char *data = read_fixture(e->d_name, &len);
        assert_roundtrip(data, len);
        free(data);
        n++;
    }
    closedir(d);
    assert_true(n >= 3);
    (void)state;
}

static void test_article_write_keeps_malformed_input_verbatim(void **state)
{
    static const char *cases[] = {
        "",
        "no heading at all\n",
        "no newline at the end",
        "preface\n# Title\nlead\n## A\nbody",
        "# T\n```info\nkey: v\n## swallowed by the unclosed fence\n",
        "## only a section\n[^1]: dangling\n",
        "# T\r\n\r\nlead[^x]\r\n## A\r\n[[link|]] {{t|a}} `[^2]` ``code `` [[\n",
        "# A\n# B\n### deep\n####### seven\n#nospace\n",
        "~~~\n# in tilde fence\n```\n~~~\n# out\n",
        "\n\n\n# T\n\n\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) assert_roundtrip(cases[i], strlen(cases[i]));
    static const char nul[] = "# T\n\0## A\nb\n";
    assert_roundtrip(nul, sizeof nul - 1);
    (void)state;
}

static void test_article_footnote_add_reuses_then_appends_to_references(void **state)
{
    dream_article *a = parse_str("# T\n\nLead[^1].\n\n## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, One)\n");
    struct dream_citation same = {"aaaaaaaa", "1", "2024-01-01", "One", NULL};
    struct dream_citation other = {"bbbbbbbb", "7", "2024-02-02", "Two `quoted`", NULL};
    int n = 0;
    assert_int_equal(dream_article_footnote_add(a, &same, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(dream_article_footnote_add(a, &other, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(dream_article_text(a, NULL),
                        "# T\n\nLead[^1].\n\n## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, One)\n"
                        "[^2]: `conv:bbbbbbbb#7` (2024-02-02, Two  quoted )\n");
    dream_article_free(a);
    /* no References yet: the section is created at the end */
    a = parse_str("# T\n\nLead.\n\n## Body\n\nText.\n");
    assert_int_equal(dream_article_footnote_add(a, &other, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(dream_article_text(a, NULL), "# T\n\nLead.\n\n## Body\n\nText.\n\n## References\n\n"
                                                     "[^1]: `conv:bbbbbbbb#7` (2024-02-02, Two  quoted )\n");
    struct dream_citation bad = {"bbbbbbbb", NULL, NULL, NULL, NULL};
    assert_int_equal(dream_article_footnote_add(a, &bad, &n), DREAM_EINVAL);
    dream_article_free(a);
    (void)state;
}

/* A source with no date is cited "(undated, title)", never a made-up 0000-00-00; that reads back
 * as a well-formed footnote without a date, and so does the 0000-00-00 older versions wrote. */
static void test_article_undated_citation_says_undated(void **state)
{
    struct dream_citation undated = {"cccccccc", "m0", NULL, "No date", NULL};
    char *def = dream_citation_format(&undated);
    assert_string_equal(def, "`conv:cccccccc#m0` (undated, No date)");
    free(def);
    undated.date = "";
    def = dream_citation_format(&undated);
    assert_string_equal(def, "`conv:cccccccc#m0` (undated, No date)");
    free(def);
    dream_article *a = parse_str("# T\n\nLead[^1][^2][^3].\n\n## References\n\n[^1]: `conv:cccccccc#m0` (undated, No date)\n"
                                 "[^2]: `conv:dddddddd#m1` (0000-00-00, Old writer)\n[^3]: `conv:eeeeeeee#m2` (undatedx, Bad)\n");
    const struct dream_article_footnote *f = dream_article_footnote(a, 0);
    assert_true(f->well_formed);
    assert_null(f->cite.date);
    assert_string_equal(f->cite.title, "No date");
    f = dream_article_footnote(a, 1);
    assert_true(f->well_formed);
    assert_null(f->cite.date);
    assert_string_equal(f->cite.title, "Old writer");
    assert_false(dream_article_footnote(a, 2)->well_formed);
    /* added to an article: the definition says undated */
    struct dream_citation more = {"ffffffff", "m3", NULL, "Later", NULL};
    int n = 0;
    assert_int_equal(dream_article_footnote_add(a, &more, &n), 0);
    assert_int_equal(n, 4);
    assert_non_null(strstr(dream_article_text(a, NULL), "[^4]: `conv:ffffffff#m3` (undated, Later)\n"));
    dream_article_free(a);
    (void)state;
}

static void test_article_section_edits_keep_the_grammar_order(void **state)
{
    dream_article *a = parse_str("# T\n\nLead.\n\n## A\n\nOne.\n\n## See also\n\n- [[X]]\n\n## References\n\n");
    size_t at = 0;
    assert_int_equal(dream_article_section_insert(a, 2, "B", "Two.", &at), 0);
    assert_int_equal(at, 1);
    assert_int_equal(dream_article_section_insert(a, 2, "History", "- Previously x.", &at), 0);
    assert_int_equal(at, 2);
    assert_int_equal(dream_article_section_insert(a, 2, "Notes", "A note.", &at), 0);
    assert_int_equal(at, 4);
    assert_string_equal(dream_article_text(a, NULL), "# T\n\nLead.\n\n## A\n\nOne.\n\n## B\n\nTwo.\n\n## History\n\n"
                                                     "- Previously x.\n\n## See also\n\n- [[X]]\n\n## Notes\n\nA note.\n\n"
                                                     "## References\n\n");
    assert_int_equal(dream_article_section_set_body(a, 0, "\nOne, rewritten.\n\n"), 0);
    assert_string_equal(dream_article_section(a, 0)->body, "\nOne, rewritten.\n\n");
    assert_int_equal(dream_article_section_remove(a, 1), 0);
    assert_int_equal(dream_article_section_find(a, "B"), -1);
    assert_int_equal(dream_article_set_lead(a, "New lead."), 0);
    assert_string_equal(dream_article_lead(a), "New lead.\n");
    assert_int_equal(dream_article_infobox_set(a, "type", "camera"), 0);
    assert_int_equal(dream_article_infobox_set(a, "kind", "thing"), 0);
    assert_int_equal(dream_article_infobox_set(a, "type", "compact camera"), 0);
    assert_int_equal(dream_article_set_stub(a, true), 0);
    assert_true(strncmp(dream_article_text(a, NULL), "# T\n{{stub}}\n```info\ntype: compact camera\nkind: thing\n```\n\nNew lead.\n", 64) == 0);
    assert_int_equal(dream_article_infobox_set(a, "type", NULL), 0);
    assert_null(dream_article_infobox_get(a, "type"));
    assert_int_equal(dream_article_set_stub(a, false), 0);
    assert_false(dream_article_is_stub(a));
    dream_article_free(a);
    (void)state;
}

/* A link written as Obsidian also reads it, with the file's folder or extension, or with its
 * pipe escaped inside a table, resolves to the article (before, each was a redlink, and the
 * article got no inbound link from it). */
static void test_article_links_written_with_the_path_resolve(void **state)
{
    const char *stems[] = {"Gus", "Rust_language"};
    assert_int_equal(dream_article_resolve_link(stems, 2, "Gus.md"), 0);
    assert_int_equal(dream_article_resolve_link(stems, 2, "articles/Rust language"), 1);
    assert_int_equal(dream_article_resolve_link(stems, 2, "articles/rust_language.MD"), 1);
    assert_int_equal(dream_article_resolve_link(stems, 2, "Other/Gus"), -1);
    assert_int_equal(dream_article_resolve_link(stems, 2, ".md"), -1);
    const char *text = "# Linker\n\n| a |\n|---|\n| [[Gus\\|G]] |\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    assert_int_equal(dream_article_link_count(a), 1);
    assert_string_equal(dream_article_link(a, 0)->target, "Gus");
    assert_string_equal(dream_article_link(a, 0)->display, "G");
    dream_article_free(a);
    (void)state;
}

/* A file some editors save with a UTF-8 byte order mark reads as without it: its front matter's
 * aliases and its H1 were lost (the mark made the first line neither "---" nor "# Title"). */
static void test_article_byte_order_mark_is_not_text(void **state)
{
    const char *text = "\xef\xbb\xbf---\naliases:\n  - Gussy\n---\n# Gus\n\nLead.\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    assert_string_equal(dream_article_title(a), "Gus");
    assert_int_equal(dream_article_alias_count(a), 1);
    assert_string_equal(dream_article_alias(a, 0), "Gussy");
    dream_article_free(a);
    text = "\xef\xbb\xbf# Gus\n\nLead.\n";
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    assert_string_equal(dream_article_title(a), "Gus");
    assert_int_equal(dream_article_check(a, NULL, NULL, NULL), 0);
    dream_article_free(a);
    (void)state;
}

static void count_problems(void *ud, int line, const char *message)
{
    (void)line;
    (void)message;
    (*(int *)ud)++;
}

/* A merge the person left unresolved (a synced vault, two machines) is named by dream check and
 * edited by no stage: before, check passed it and wikify committed both sides with the markers.
 * A line of '=' alone (a setext underline) is no conflict. */
static void test_article_unresolved_merge_is_not_edited(void **state)
{
    const char *text = "# Gus\n\n<<<<<<< HEAD\n**Gus** is my starter.\n=======\n**Gus** is a starter.\n>>>>>>> laptop\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    int fence = -1;
    assert_int_equal(dream_article_editable(a, &fence), DREAM_EFORMAT);
    assert_non_null(strstr(dream_error_last(), "merge conflict (<<<<<<< on line 3)"));
    dream_error_clear();
    int n = 0;
    assert_true(dream_article_check(a, NULL, count_problems, &n) >= 1);
    assert_true(n >= 1);
    dream_article_free(a);
    text = "# Gus\n\nTitle\n=======\n\nText.\n";
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    assert_int_equal(dream_article_editable(a, NULL), 0);
    dream_article_free(a);
    (void)state;
}

static void test_article_anchor_and_stem_rules(void **state)
{
    char *s = dream_article_anchor("  Film Simulations & Recipes (2024) ");
    assert_string_equal(s, "film-simulations-recipes-2024");
    free(s);
    /* a heading with no ASCII letter or digit keeps its characters (before, every such heading
     * had the empty anchor, and only the first could be read); one with some keeps the ASCII
     * rule, so no anchor an article already has changes */
    const char *cases[][2] = {{"Русский", "Русский"}, {"日本語 — 概要", "日本語-概要"}, {"日本語 2024", "2024"}, {"Café", "caf"}, {"!!!", "!!!"}, {"«Ёж» \xff x", "x"},
                              {"«Ёж» \xff", "Ёж"}, {" ? ?  ", "?-?"}, {"\xf0\x9f\x8d\x9e \xff", "\xf0\x9f\x8d\x9e"}, {"\xff\xfe", ""}, {"", ""}, {"\x01!\x7f?\t", "!-?"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        s = dream_article_anchor(cases[i][0]);
        assert_string_equal(s, cases[i][1]);
        free(s);
    }
    const char *langs = "# Langs\n\nLead.\n\n## Русский\n\nRussian text.\n\n## 日本語\n\nJapanese text.\n";
    dream_article *la = NULL;
    assert_int_equal(dream_article_parse(langs, strlen(langs), &la), 0);
    long li = dream_article_section_find(la, "日本語");
    assert_true(li >= 0);
    assert_string_equal(dream_article_section(la, (size_t)li)->title, "日本語");
    dream_article_free(la);
    /* headings of no letter each have their own anchor (before, all had the empty one: only the
     * first could be read, and any unknown name of no letter read it) */
    const char *marks = "# Marks\n\nLead.\n\n## ???\n\nqmarks\n\n## !!!\n\nbangs\n";
    assert_int_equal(dream_article_parse(marks, strlen(marks), &la), 0);
    li = dream_article_section_find(la, "!!!");
    assert_true(li >= 0);
    assert_string_equal(dream_article_section(la, (size_t)li)->title, "!!!");
    assert_int_equal(dream_article_section_find(la, "%%"), -1);
    assert_int_equal(dream_article_section_find(la, ""), -1);
    dream_article_free(la);
    s = dream_article_stem(" ..a/b: c?  d_ ");
    assert_string_equal(s, "a-b_c_d");
    free(s);
    s = dream_article_stem("???");
    assert_string_equal(s, "entity");
    free(s);
    const char *stems[] = {"Fujifilm_X100V", "Ricoh_GR_III"};
    assert_int_equal(dream_article_resolve_link(stems, 2, "Fujifilm X100V"), 0);
    assert_int_equal(dream_article_resolve_link(stems, 2, "ricoh gr iii"), 1);
    assert_int_equal(dream_article_resolve_link(stems, 2, "Leica"), -1);
    const char *w = "one two[^1] three\n```\nnot counted\n```\n## Head\n";
    assert_int_equal(dream_article_words(w, strlen(w)), 4);
    (void)state;
}

static dream_article *fixture(const char *name)
{
    size_t len;
    char *data = read_fixture(name, &len);
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(data, len, &a), 0);
    free(data);
    return a;
}

static void test_article_parses_banner_categories_table_and_redirect(void **state)
{
    dream_article *a = fixture("Film_simulations.md");
    assert_int_equal(dream_article_category_count(a), 2);
    assert_string_equal(dream_article_category(a, 0), "Photography techniques");
    assert_string_equal(dream_article_infobox_get(a, "kind"), "domain");
    assert_true(strncmp(dream_article_lead(a), "**Film simulations** are", 24) == 0);
    assert_false(dream_article_is_redirect(a));
    /* `Classic Negative` is a code span, the table is prose: markers [^1] [^1] [^2] [^2] */
    assert_int_equal(dream_article_ref_count(a), 4);
    dream_article_free(a);
    a = fixture("X100V.md");
    assert_true(dream_article_is_redirect(a));
    assert_string_equal(dream_article_lead(a), "");
    assert_int_equal(dream_article_link_count(a), 1);
    dream_article_free(a);
    (void)state;
}

static bool has_reason(const struct dream_gate_verdict *v, const char *needle)
{
    for (size_t i = 0; i < v->n_reasons; i++)
        if (strstr(v->reasons[i], needle)) return true;
    return false;
}

static void test_gate_accepts_a_clean_patch(void **state)
{
    dream_article *before = fixture("Ricoh_GR_III.md");
    dream_article *after = fixture("Ricoh_GR_III.md");
    /* the order a patch uses: number the citation, then place its marker */
    struct dream_citation c = {"0123abcd", "3", "2024-04-01", "Second thoughts", NULL};
    int n;
    assert_int_equal(dream_article_footnote_add(after, &c, &n), 0);
    assert_int_equal(n, 2);
    long i = dream_article_section_find(after, "Comparison");
    assert_int_equal(dream_article_section_set_body(after, (size_t)i,
                                                    "\nThe user found its 28 mm lens too wide for portraits[^1], but "
                                                    "ideal for streets[^2].\n\n"),
                     0);
    const char *touched[] = {"comparison"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    for (size_t k = 0; k < v.n_reasons; k++) fprintf(stderr, "unexpected: %s\n", v.reasons[k]);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}

static void test_gate_rejects_lost_citation(void **state)
{
    dream_article *before = fixture("Street_photography.md");
    dream_article *after = fixture("Street_photography.md");
    long i = dream_article_section_find(after, "Habits");
    assert_int_equal(dream_article_section_set_body(after, (size_t)i, "\nThe user walks one neighbourhood per morning and keeps the ISO on auto[^1]. "
                                                                     "They avoid photographing children without asking a parent.\n\n"),
                     0);
    struct dream_gate_verdict v;
    const char *touched[] = {"habits"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    /* [^3]'s definition is now never cited: both rules say so */
    assert_true(has_reason(&v, "[^3] is never cited"));
    dream_gate_verdict_free(&v);
    /* the definition removed too: the citation itself is lost */
    long r = dream_article_section_find_kind(after, DREAM_SECTION_REFERENCES);
    assert_int_equal(dream_article_section_set_body(after, (size_t)r, "\n[^1]: `conv:aa11bb22#1` (2023-11-05, Morning walks with a camera)\n"
                                                                     "[^2]: `conv:3fa9c2d1#9` (2024-01-12, Choosing a travel camera)\n"),
                     0);
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "citation conv:aa11bb22#7 (footnote [^3] before) is lost"));
    dream_gate_verdict_free(&v);
    /* an ERROR correction may let that conversation go */
    const char *vanish[] = {"aa11bb22"};
    p.may_vanish = vanish;
    p.n_may_vanish = 1;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}

static void test_gate_word_floor_applies_to_each_touched_section(void **state)
{
    dream_article *before = fixture("Fujifilm_X100V.md");
    dream_article *after = fixture("Fujifilm_X100V.md");
    /* Purchase (24 words) cut to 6: the whole article barely shrinks, the section does. */
    long i = dream_article_section_find(after, "Purchase");
    assert_int_equal(dream_article_section_set_body(after, (size_t)i, "\nThe user compared it first[^1][^3].\n\n"), 0);
    const char *touched[] = {"purchase"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "section 'purchase' shrank to 5 words from 26"));
    dream_gate_verdict_free(&v);
    /* the same edit judged as touching another section only: Purchase is not floor-checked */
    const char *other[] = {"settings"};
    p.touched = other;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}

static void test_gate_tolerates_what_before_already_had(void **state)
{
    /* an imported article: an older provenance form and two sections with one name */
    const char *old = "# T\n\nLead[^1].\n\n## Setup\n\nOne two three four.\n\n## Setup\n\nFive six.\n\n"
                      "## References\n\n[^1]: `conv:aaaaaaaa` (2024-01-01, Old form)\n";
    dream_article *before = parse_str(old);
    assert_int_equal(dream_article_check(before, NULL, NULL, NULL), 2);
    dream_article *after = NULL;
    assert_int_equal(dream_article_clone(before, &after), 0);
    struct dream_citation c = {"bbbbbbbb", "4", "2024-02-02", "New", NULL};
    int n;
    assert_int_equal(dream_article_footnote_add(after, &c, &n), 0);
    assert_int_equal(n, 2);
    /* a longer lead shifts every line below it */
    assert_int_equal(dream_article_set_lead(after, "Lead[^1].\nA second line of lead[^2]."), 0);
    const char *touched[] = {DREAM_ARTICLE_LEAD_ANCHOR};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    for (size_t k = 0; k < v.n_reasons; k++) fprintf(stderr, "unexpected: %s\n", v.reasons[k]);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    /* but a new definition in the old form is refused */
    dream_article_free(after);
    after = parse_str("# T\n\nLead[^1][^2].\n\n## Setup\n\nOne two three four.\n\n## Setup\n\nFive six.\n\n"
                      "## References\n\n[^1]: `conv:aaaaaaaa` (2024-01-01, Old form)\n[^2]: `conv:bbbbbbbb` (2024-02-02, New)\n");
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_int_equal(v.n_reasons, 1);
    assert_true(has_reason(&v, "definition [^2] is not in the form"));
    dream_gate_verdict_free(&v);
    dream_article_free(after);
    dream_article_free(before);
    (void)state;
}

static void test_gate_rejects_broken_grammar(void **state)
{
    dream_article *before = fixture("Ricoh_GR_III.md");
    dream_article *after = fixture("Ricoh_GR_III.md");
    long i = dream_article_section_find(after, "Comparison");
    assert_int_equal(dream_article_section_set_body(after, (size_t)i, "\nThe user found its 28 mm lens too wide for portraits[^1].\n\n```\nunclosed\n"), 0);
    const char *touched[] = {"comparison"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "never closed"));
    assert_true(has_reason(&v, "References' is gone"));
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}


static void test_article_categories_are_front_matter_tags(void **state)
{
    dream_article *a = parse_str("# T\n{{stub}}\n```info\ntype: x\n```\nLead.\n");
    const char *cats[] = {"Cameras", "Travel gear", "Food & Drink", "2024", "!!!"};
    assert_int_equal(dream_article_set_categories(a, cats, 5), 0);
    /* a tag holds no space nor '&'; digits alone get a '_'; a name with nothing a tag holds goes */
    assert_string_equal(dream_article_text(a, NULL), "---\ntags:\n  - Cameras\n  - Travel_gear\n  - Food_Drink\n  - _2024\n---\n\n"
                                                     "# T\n{{stub}}\n```info\ntype: x\n```\nLead.\n");
    assert_int_equal(dream_article_category_count(a), 4);
    assert_string_equal(dream_article_category(a, 1), "Travel gear");
    assert_string_equal(dream_article_category(a, 3), "2024");
    assert_int_equal(dream_article_link_count(a), 0); /* a tag is no link Obsidian could leave dead */
    assert_int_equal(dream_article_check(a, &(struct dream_article_check_params){.stems = cats, .n_stems = 0}, NULL, NULL), 0);
    const char *bad[] = {"a\nb"};
    assert_int_equal(dream_article_set_categories(a, bad, 1), DREAM_EINVAL);
    assert_int_equal(dream_article_set_categories(a, NULL, 0), 0);
    assert_int_equal(dream_article_category_count(a), 0);
    /* the block held nothing else: it goes whole */
    assert_string_equal(dream_article_text(a, NULL), "\n# T\n{{stub}}\n```info\ntype: x\n```\nLead.\n");
    dream_article_free(a);
    (void)state;
}

/* The tag mapping is one-to-one on the names dream keeps, and its way back undoes it. */
static void test_article_category_tag_mapping_is_reversible(void **state)
{
    static const char *const names[] = {"Home Cooking", "Photography/Film", "Été", "2024", "C-3PO"};
    static const char *const tags[] = {"Home_Cooking", "Photography/Film", "Été", "_2024", "C-3PO"};
    for (size_t i = 0; i < 5; i++) {
        char *t = dream_category_tag(names[i]), *back = dream_tag_category(t);
        assert_string_equal(t, tags[i]);
        assert_string_equal(back, names[i]);
        free(t);
        free(back);
    }
    char *t = dream_category_tag("Home_Cooking"); /* '_' and ' ' are one character in names */
    assert_string_equal(t, "Home_Cooking");
    free(t);
    assert_null(dream_category_tag(" & "));
    char *c = dream_tag_category("#Home_Cooking");
    assert_string_equal(c, "Home Cooking");
    free(c);
    (void)state;
}

/* Obsidian's property editor writes lists its own way, people write them others: each reads as
 * the same aliases and tags; the person's other keys and comments stay byte for byte. */
static void test_article_front_matter_reads_every_list_form(void **state)
{
    const char *text = "---\ntitle: Kept as is\naliases:\n  - levain\n  - \"sour: dough\"\n-   'it''s'\ntags: [Home_Cooking, \"#Bread\"]\n"
                       "# a YAML comment, not a heading\ncssclasses:\n  - wide\n---\n\n# Sourdough\n\n```info\ntype: pastime\n"
                       "aliases: wild yeast, levain\n```\n\nLead [[x]].\n";
    dream_article *a = parse_str(text);
    assert_int_equal(dream_article_front_matter_len(a), strstr(text, "\n\n# Sourdough") + 1 - text);
    assert_string_equal(dream_article_title(a), "Sourdough");
    assert_int_equal(dream_article_section_count(a), 0);
    assert_int_equal(dream_article_alias_count(a), 4); /* the front matter's, then the old infobox line's new one */
    assert_string_equal(dream_article_alias(a, 0), "levain");
    assert_string_equal(dream_article_alias(a, 1), "sour: dough");
    assert_string_equal(dream_article_alias(a, 2), "it's");
    assert_string_equal(dream_article_alias(a, 3), "wild yeast");
    assert_int_equal(dream_article_category_count(a), 2);
    assert_string_equal(dream_article_category(a, 0), "Home Cooking");
    assert_string_equal(dream_article_category(a, 1), "Bread");
    assert_int_equal(dream_article_link_count(a), 1);
    assert_string_equal(dream_article_lead(a), "Lead [[x]].\n");
    assert_roundtrip(text, strlen(text));
    assert_int_equal(dream_article_check(a, NULL, NULL, NULL), 0);
    /* one scalar: an alias; tags split on commas and blanks */
    dream_article *b = parse_str("---\naliases: Just one, with a comma\ntags: a, b c\n---\n# T\n");
    assert_int_equal(dream_article_alias_count(b), 1);
    assert_string_equal(dream_article_alias(b, 0), "Just one, with a comma");
    assert_int_equal(dream_article_category_count(b), 3);
    dream_article_free(b);
    /* a NUL byte inside a flow list (a corrupt file; the article fuzzer's find) ends its item and
     * is passed over: the list reads on, where it had looped, appending without end */
    static const char nul_list[] = "---\naliases: [a,\0b]\n---\n# T\n";
    b = NULL;
    assert_int_equal(dream_article_parse(nul_list, sizeof nul_list - 1, &b), 0);
    assert_int_equal(dream_article_alias_count(b), 2);
    assert_string_equal(dream_article_alias(b, 0), "a");
    assert_string_equal(dream_article_alias(b, 1), "b");
    dream_article_free(b);
    /* "---" that never closes is no front matter (Obsidian reads none either) */
    b = parse_str("---\naliases:\n  - x\n# T\n");
    assert_int_equal(dream_article_front_matter_len(b), 0);
    assert_int_equal(dream_article_alias_count(b), 0);
    dream_article_free(b);
    /* setting the aliases rewrites that key alone, and drops the old infobox line */
    const char *names[] = {"levain", "sour: dough", "true", "2024-01-01", "it's", "#hash"};
    assert_int_equal(dream_article_set_aliases(a, names, 6), 0);
    assert_string_equal(dream_article_text(a, NULL),
                        "---\ntitle: Kept as is\naliases:\n  - levain\n  - \"sour: dough\"\n  - \"true\"\n  - \"2024-01-01\"\n  - it's\n"
                        "  - \"#hash\"\ntags: [Home_Cooking, \"#Bread\"]\n# a YAML comment, not a heading\ncssclasses:\n  - wide\n---\n\n"
                        "# Sourdough\n\n```info\ntype: pastime\n```\n\nLead [[x]].\n");
    assert_int_equal(dream_article_alias_count(a), 6);
    assert_string_equal(dream_article_alias(a, 5), "#hash");
    dream_article_free(a);
    (void)state;
}

/* An article of the older format moves to this one with nothing else touched, and a second
 * migration is a no-op. */
static void test_article_migrate_moves_the_old_header_only(void **state)
{
    const char *old = "# Sourdough\n\ncategories: [[Category:Hobbies]], [[Category:Home Cooking]]\n\n```info\ntype: pastime\nkind: thing\n"
                      "aliases: sour-dough, levain\n```\n\nThe person's own  words,  spaced as they like.[^1]\n\n## References\n\n"
                      "[^1]: `conv:67195f89#p401` (2024-09-14, Levain or starter)\n";
    dream_article *a = parse_str(old);
    assert_int_equal(dream_article_category_count(a), 2);
    assert_int_equal(dream_article_alias_count(a), 2);
    bool changed = false;
    assert_int_equal(dream_article_migrate(a, &changed), 0);
    assert_true(changed);
    assert_string_equal(dream_article_text(a, NULL),
                        "---\naliases:\n  - sour-dough\n  - levain\ntags:\n  - Hobbies\n  - Home_Cooking\n---\n\n# Sourdough\n\n"
                        "```info\ntype: pastime\nkind: thing\n```\n\nThe person's own  words,  spaced as they like.[^1]\n\n## References\n\n"
                        "[^1]: `conv:67195f89#p401` (2024-09-14, Levain or starter)\n");
    assert_int_equal(dream_article_alias_count(a), 2);
    assert_string_equal(dream_article_category(a, 1), "Home Cooking");
    assert_int_equal(dream_article_check(a, NULL, NULL, NULL), 0);
    assert_int_equal(dream_article_migrate(a, &changed), 0);
    assert_false(changed);
    /* what migration writes is what normalize keeps, the tail reorder included */
    size_t len = 0;
    char *was = strdup(dream_article_text(a, &len));
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_string_equal(dream_article_text(a, NULL), was);
    assert_int_equal(dream_article_section_insert(a, 2, "History", "- Before.[^1]\n", NULL), 0);
    assert_int_equal(dream_article_section_insert(a, 2, "Body", "Text.\n", NULL), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_int_equal(strncmp(dream_article_text(a, NULL), was, 80), 0);
    assert_int_equal(dream_article_alias_count(a), 2);
    free(was);
    /* an infobox that held only aliases goes with them */
    dream_article *b = parse_str("# T\n\n```info\naliases: x\n```\n\nLead.\n");
    assert_int_equal(dream_article_migrate(b, &changed), 0);
    assert_string_equal(dream_article_text(b, NULL), "---\naliases:\n  - x\n---\n\n# T\n\nLead.\n");
    dream_article_free(b);
    dream_article_free(a);
    (void)state;
}

static bool fake_blocks(void *ud, const char *note, const char *block)
{
    (void)ud;
    return strcmp(note, "Sources/2024-09-14 Levain or starter (67195f89)") == 0 && (!block || strcmp(block, "p401") == 0);
}

/* A footnote's key may be a link to the message in its transcript note: it reads as the same
 * citation, is written from a citation with a note, switches form leaving the rest as it was,
 * and check says when a link lands on no message. */
static void test_article_footnote_links_to_its_message(void **state)
{
    struct dream_citation c = {.conv = "67195f89", .msg = "p401", .date = "2024-09-14", .title = "Levain [or] starter",
                               .note = "Sources/2024-09-14 Levain or starter (67195f89)"};
    char *def = dream_citation_format(&c);
    assert_string_equal(def, "[[Sources/2024-09-14 Levain or starter (67195f89)#^p401|conv:67195f89#p401]] (2024-09-14, Levain (or) starter)");
    free(def);
    /* a title's #word is no tag and its %% no comment in Obsidian (before, "#sourdough" went to
     * the tag pane from every footnote citing the conversation, and %% hid the rest of the line) */
    c.title = "A sluggish #sourdough starter, C# and 100%% %% done";
    def = dream_citation_format(&c);
    assert_non_null(strstr(def, "(2024-09-14, A sluggish \\#sourdough starter, C# and 100% % done)"));
    free(def);
    c.title = "Levain [or] starter";
    dream_article *a = parse_str("# T\n\nLead[^1][^2].\n\n## References\n\n"
                                 "[^1]: [[Sources/2024-09-14 Levain or starter (67195f89)#^p401|conv:67195f89#p401]] (2024-09-14, Levain or starter)\n"
                                 "[^2]: [[Sources/2024-09-14 Levain or starter (67195f89)#^p999|conv:67195f89#p999]] (2024-09-14, Levain or starter)\n");
    const struct dream_article_footnote *f = dream_article_footnote(a, 0);
    assert_true(f->well_formed);
    assert_int_equal(f->n_conv, 1);
    assert_string_equal(f->cite.conv, "67195f89");
    assert_string_equal(f->cite.msg, "p401");
    assert_string_equal(f->cite.date, "2024-09-14");
    assert_string_equal(f->cite.title, "Levain or starter");
    assert_string_equal(f->cite.note, "Sources/2024-09-14 Levain or starter (67195f89)");
    assert_string_equal(f->block, "p401");
    assert_int_equal(dream_article_footnote_find(a, "67195f89", "p401"), 1);
    /* the link is no graph edge: it is not a redlink among the articles */
    assert_true(dream_article_link_is_meta(dream_article_link(a, 0)->target));
    const char *stems[] = {"T"};
    struct dream_article_check_params cp = {.stem = "T", .stems = stems, .n_stems = 1};
    assert_int_equal(dream_article_check(a, &cp, NULL, NULL), 0);
    cp.block_exists = fake_blocks;
    assert_int_equal(dream_article_check(a, &cp, NULL, NULL), 1); /* ^p999 is no message of the note */
    /* the plain form and back: only the key changes */
    assert_int_equal(dream_article_footnote_set_note(a, 1, NULL), 0);
    assert_non_null(strstr(dream_article_text(a, NULL), "[^2]: `conv:67195f89#p999` (2024-09-14, Levain or starter)\n"));
    assert_int_equal(dream_article_check(a, &cp, NULL, NULL), 0);
    assert_int_equal(dream_article_footnote_set_note(a, 1, "Sources/Other (67195f89)"), 0);
    assert_non_null(strstr(dream_article_text(a, NULL), "[^2]: [[Sources/Other (67195f89)#^p999|conv:67195f89#p999]] (2024-09-14, Levain or starter)\n"));
    assert_int_equal(dream_article_footnote_set_note(a, 1, "Bad#name"), DREAM_EINVAL);
    /* a link without a block, or with a conv key that is no citation, is not well-formed */
    dream_article *b = parse_str("# T\n\nA[^1][^2].\n\n## References\n\n[^1]: [[Sources/X|conv:67195f89#p401]] (2024-09-14, t)\n"
                                 "[^2]: [[Sources/X#^p_1|conv:67195f89#p401]] (2024-09-14, t)\n");
    assert_false(dream_article_footnote(b, 0)->well_formed);
    assert_false(dream_article_footnote(b, 1)->well_formed);
    dream_article_free(b);
    dream_article_free(a);
    (void)state;
}

/* Block ids hold only what Obsidian allows, and two messages never share one; note names are
 * valid file names on every system and unique by the hash. */
static void test_article_block_ids_and_note_names(void **state)
{
    char *b = dream_citation_block_id("dr-c1-m0");
    assert_string_equal(b, "dr-c1-m0");
    free(b);
    char *x = dream_citation_block_id("msg_01.a"), *y = dream_citation_block_id("msg-01-a");
    assert_string_not_equal(x, y);
    assert_int_equal(strncmp(x, "msg-01-a-", 9), 0);
    for (const char *p = x; *p; p++) assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
    free(x);
    free(y);
    char *n = dream_source_note("67195f89", "2024-09-14", "  ..What is C#? a/b: [x] | \"q\" *\n");
    assert_string_equal(n, "Sources/2024-09-14 What is C a b x q (67195f89)");
    free(n);
    n = dream_source_note("67195f89", "2024-09-14", "Starting a CLI %% to log %%% bakes");
    assert_string_equal(n, "Sources/2024-09-14 Starting a CLI % to log % bakes (67195f89)");
    free(n);
    n = dream_source_note("67195f89", NULL, "");
    assert_string_equal(n, "Sources/undated conversation (67195f89)");
    free(n);
    char longt[200];
    memset(longt, 'a', sizeof longt - 3);
    memcpy(longt + 59, "\xc3\xa9", 2); /* a two-byte character across the cut: it goes whole */
    longt[sizeof longt - 3] = '\0';
    n = dream_source_note("67195f89", "2024-09-14", longt);
    assert_int_equal(strlen(n), strlen("Sources/2024-09-14  (67195f89)") + 59);
    free(n);
    n = dream_source_note("67195f89", "2024-09-14", longt + 1);
    assert_int_equal(strlen(n), strlen("Sources/2024-09-14  (67195f89)") + 60);
    free(n);
    (void)state;
}

static void test_gate_new_section_and_lead(void **state)
{
    dream_article *before = fixture("Ricoh_GR_III.md");
    dream_article *after = fixture("Ricoh_GR_III.md");
    /* a new section has no floor, but must be there */
    const char *touched[] = {"low-light", DREAM_ARTICLE_LEAD_ANCHOR};
    struct dream_gate_params p = {.touched = touched, .n_touched = 2};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "touched section 'low-light' is missing"));
    dream_gate_verdict_free(&v);
    size_t at;
    assert_int_equal(dream_article_section_insert(after, 2, "Low light", "Usable to ISO 6400[^1].", &at), 0);
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    /* the lead cut to a stump fails the floor on the lead */
    assert_int_equal(dream_article_set_lead(after, "A compact[^1]."), 0);
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "section '__lead__' shrank to 2 words"));
    dream_gate_verdict_free(&v);
    /* a new article (no before) is judged on its own */
    assert_int_equal(dream_article_gate(NULL, before, NULL, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}

static size_t high_water(void *ud, const char *anchor)
{
    (void)ud;
    return strcmp(anchor, "comparison") == 0 ? 40 : 0;
}

static void test_gate_baseline_stops_nightly_erosion(void **state)
{
    /* Each night's tightening keeps 80% of the night before: fine against a 70% floor night by
     * night, but not against the section's high-water mark (spec §12.23). */
    dream_article *before = parse_str("# T\n\nLead[^1].\n\n## Comparison\n\none two three four five six seven eight nine ten[^1].\n\n"
                                      "## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n");
    dream_article *after = parse_str("# T\n\nLead[^1].\n\n## Comparison\n\none two three four five six seven eight[^1].\n\n"
                                     "## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n");
    const char *touched[] = {"comparison"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    struct dream_gate_verdict v;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    p.baseline = high_water;
    assert_int_equal(dream_article_gate(before, after, &p, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "shrank to 8 words from 40"));
    dream_gate_verdict_free(&v);
    dream_article_free(before);
    dream_article_free(after);
    (void)state;
}

/* An article the person keeps elsewhere behind a link, or private: a write goes to the file the
 * link names (the link stays a link) and keeps the file's permission bits. Before, the write's
 * rename put a new 0644 file in place of the link, and the real file kept what was written
 * over (what dream forget had taken out, say). */
static void test_write_file_keeps_a_link_and_the_permissions(void **state)
{
    char dir[] = "/tmp/dream-test-article-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char real[300], link_[300], other[300];
    snprintf(real, sizeof real, "%s/kept/Ricoh_GR_III.md", dir);
    snprintf(link_, sizeof link_, "%s/Ricoh_GR_III.md", dir);
    snprintf(other, sizeof other, "%s/Private.md", dir);
    char kept[300];
    snprintf(kept, sizeof kept, "%s/kept", dir);
    assert_int_equal(mkdir(kept, 0755), 0);
    const char *old = "# Ricoh GR III\n\nOld text.\n";
    assert_int_equal(file_write_atomic(real, old, strlen(old)), 0);
    assert_int_equal(chmod(real, 0600), 0);
    assert_int_equal(symlink("kept/Ricoh_GR_III.md", link_), 0);
    dream_article *a = fixture("Ricoh_GR_III.md");
    assert_int_equal(dream_article_write_file(a, link_), 0);
    struct stat st;
    assert_int_equal(lstat(link_, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(real, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    char *text = NULL;
    assert_int_equal(file_read_all(real, 1 << 20, &text, NULL), 0);
    assert_string_equal(text, dream_article_text(a, NULL));
    free(text);
    /* a private file of its own keeps 0600 */
    assert_int_equal(file_write_atomic(other, "x\n", 2), 0);
    assert_int_equal(chmod(other, 0600), 0);
    assert_int_equal(dream_article_write_file(a, other), 0);
    assert_int_equal(stat(other, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    dream_article_free(a);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    (void)state;
}

static void test_replace_file_writes_only_accepted_edits_over_an_unchanged_file(void **state)
{
    char dir[] = "/tmp/dream-test-article-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/Ricoh_GR_III.md", dir);
    dream_article *before = fixture("Ricoh_GR_III.md");
    struct dream_gate_verdict v;
    /* create: only where no file is */
    assert_int_equal(dream_article_replace_file(path, NULL, before, NULL, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    assert_int_equal(dream_article_replace_file(path, NULL, before, NULL, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "already exists"));
    dream_gate_verdict_free(&v);
    /* a good patch goes through */
    dream_article *after = fixture("Ricoh_GR_III.md");
    const char *touched[] = {"comparison"};
    struct dream_gate_params p = {.touched = touched, .n_touched = 1};
    long i = dream_article_section_find(after, "Comparison");
    assert_int_equal(dream_article_section_set_body(after, (size_t)i, "\nThe user found its 28 mm lens too wide for portraits and tight rooms[^1].\n\n"), 0);
    assert_int_equal(dream_article_replace_file(path, before, after, &p, &v), 0);
    assert_true(v.accepted);
    dream_gate_verdict_free(&v);
    dream_article *disk = NULL;
    assert_int_equal(dream_article_read_file(path, &disk), 0);
    assert_non_null(strstr(dream_article_text(disk, NULL), "tight rooms"));
    /* a hand edit since the read: nothing is written */
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("A line the person added.\n", f);
    fclose(f);
    dream_article *again = fixture("Ricoh_GR_III.md");
    assert_int_equal(dream_article_replace_file(path, disk, again, NULL, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "changed on disk since it was read"));
    dream_gate_verdict_free(&v);
    dream_article_free(disk);
    assert_int_equal(dream_article_read_file(path, &disk), 0);
    assert_non_null(strstr(dream_article_text(disk, NULL), "A line the person added."));
    /* a rejected edit writes nothing either */
    dream_article *bad = parse_str("# Ricoh GR III\n\nNothing cited.\n");
    assert_int_equal(dream_article_replace_file(path, disk, bad, NULL, &v), 0);
    assert_false(v.accepted);
    assert_true(has_reason(&v, "is lost"));
    dream_gate_verdict_free(&v);
    dream_article *now = NULL;
    assert_int_equal(dream_article_read_file(path, &now), 0);
    assert_string_equal(dream_article_text(now, NULL), dream_article_text(disk, NULL));
    dream_article_free(now);
    dream_article_free(bad);
    dream_article_free(again);
    dream_article_free(disk);
    dream_article_free(after);
    dream_article_free(before);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    (void)state;
}

static void test_check_reports_duplicate_section_names_and_nul_edits_are_refused(void **state)
{
    dream_article *a = parse_str("# T\n\nLead.\n\n## Setup\n\nx\n\n## setup\n\ny\n");
    assert_int_equal(dream_article_check(a, NULL, NULL, NULL), 1);
    dream_article_free(a);
    static const char nul[] = "# T\n\nLe\0ad.\n";
    assert_int_equal(dream_article_parse(nul, sizeof nul - 1, &a), 0);
    assert_int_equal(dream_article_set_lead(a, "x"), DREAM_EFORMAT);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_int_equal(dream_article_set_lead(a, "New."), 0);
    assert_string_equal(dream_article_text(a, NULL), "# T\n\nNew.\n");
    dream_article_free(a);
    (void)state;
}

/* ---- drafts -------------------------------------------------------------------------------- */

static char *clean(const char *draft, const char *heading)
{
    char *out = NULL;
    assert_int_equal(dream_article_sanitize_draft(draft, heading, &out, NULL, NULL), 0);
    return out;
}

static void test_sanitize_draft_keeps_prose_and_drops_what_the_program_writes(void **state)
{
    char *o = clean("```markdown\r\n## Purchase\r\n\r\nThe user ordered it[^1] after a month[^note].\r\n\r\n\r\n"
                    "```info\r\ntype: camera\r\n```\r\nMore text `[^x] stays in code`[^2].\r\n"
                    "[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\r\n\r\n## References\r\n\r\n[^1]: junk\r\n```\r\n",
                    "Purchase");
    assert_string_equal(o, "The user ordered it[^1] after a month.\n\nMore text `[^x] stays in code`[^2].\n");
    free(o);
    /* a fence the model opened and never closed is closed; a heading that is not a repeat stays */
    o = clean("Intro.\n\n### Detail\n\n```sh\nls -l\n", "Purchase");
    assert_string_equal(o, "Intro.\n\n### Detail\n\n```sh\nls -l\n```\n");
    free(o);
    /* a draft that is only the tail, or empty, leaves nothing */
    o = clean("## See also\n\n- [[X]]\n", NULL);
    assert_string_equal(o, "");
    free(o);
    o = clean("", NULL);
    assert_string_equal(o, "");
    free(o);
    /* inside a code block nothing is touched */
    o = clean("Text.\n\n~~~\n[^a]: not a definition\n## References\n~~~\n", NULL);
    assert_string_equal(o, "Text.\n\n~~~\n[^a]: not a definition\n## References\n~~~\n");
    free(o);
    (void)state;
}

/* ---- normalize ------------------------------------------------------------------------- */

struct notes {
    char text[4096];
    int n;
};

static void on_note(void *ud, const char *note)
{
    struct notes *ns = ud;
    ns->n++;
    strncat(ns->text, note, sizeof ns->text - strlen(ns->text) - 2);
    strncat(ns->text, "\n", sizeof ns->text - strlen(ns->text) - 1);
}

static char *normalized(const char *in, const struct dream_article_normalize_params *p, struct notes *ns)
{
    dream_article *a = parse_str(in);
    assert_int_equal(dream_article_normalize(a, p, ns ? on_note : NULL, ns), 0);
    char *out = NULL;
    assert_int_equal(dream_article_write(a, &out, NULL), 0);
    dream_article_free(a);
    return out;
}

static void test_normalize_renumbers_merges_and_gathers_footnotes(void **state)
{
    const char *in = "# T\n\nFirst[^7] and second[^b] and again[^7]. Orphan[^9].\n\n"
                     "## Body\n\nSame message twice[^4].\n\n[^b]: `conv:bbbbbbbb#2` (2024-01-02, B)\n\n"
                     "## References\n\n[^7]: `conv:aaaaaaaa#1` (2024-01-01, A)\n"
                     "[^4]: `conv:aaaaaaaa#1` (2024-01-01, A)\n[^5]: `conv:cccccccc#3` (2024-01-03, unused)\n";
    struct notes ns = {0};
    char *out = normalized(in, NULL, &ns);
    assert_string_equal(out, "# T\n\nFirst[^1] and second[^2] and again[^1]. Orphan.\n\n"
                             "## Body\n\nSame message twice[^1].\n\n"
                             "## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n"
                             "[^2]: `conv:bbbbbbbb#2` (2024-01-02, B)\n");
    assert_non_null(strstr(ns.text, "removed footnote marker [^9]"));
    assert_non_null(strstr(ns.text, "merged footnote [^4] into [^1]"));
    assert_non_null(strstr(ns.text, "removed footnote definition [^5]"));
    free(out);
    (void)state;
}

static void test_normalize_closes_an_unclosed_fence_before_the_heading_it_swallowed(void **state)
{
    char *out = normalized("# T\n\nLead.\n\n```\ncode line\n## Next\n\nText.\n", NULL, NULL);
    assert_string_equal(out, "# T\n\nLead.\n\n```\ncode line\n```\n\n## Next\n\nText.\n");
    free(out);
    out = normalized("# T\n\nLead.\n~~~~\n\n\n## Next\nText.\n", NULL, NULL);
    assert_string_equal(out, "# T\n\nLead.\n\n## Next\n\nText.\n");
    free(out);
    (void)state;
}

/* A CR alone is a line end, as CommonMark and Obsidian read one: normalize makes it LF. It was
 * kept inside its line, and a heading holding one ("## #\r #", found by fuzz_article) came out
 * of a second normalize different from the first. */
static void test_normalize_reads_a_lone_cr_as_a_line_end(void **state)
{
    char *out = normalized("# T\r\rLead.\rMore.\r\n\n## A\rText.\n", NULL, NULL);
    assert_string_equal(out, "# T\n\nLead.\nMore.\n\n## A\n\nText.\n");
    char *again = normalized(out, NULL, NULL);
    assert_string_equal(again, out);
    free(again);
    free(out);
    out = normalized("## #\r #", NULL, NULL);
    again = normalized(out, NULL, NULL);
    assert_string_equal(again, out);
    assert_null(strchr(out, '\r'));
    free(again);
    free(out);
    (void)state;
}

static void test_normalize_orders_the_tail_and_merges_duplicates(void **state)
{
    const char *in = "# T\n\nLead.\n\n## References\n\n## See also\n\n- [[A]]\n\n## Body one\n\nx\n\n"
                     "## See also\n\n- [[B]]\n- [[A]]\n\n## History\n\n- h\n\n### Detail\n\nd\n";
    char *out = normalized(in, NULL, NULL);
    assert_string_equal(out, "# T\n\nLead.\n\n## Body one\n\nx\n\n## History\n\n- h\n\n### Detail\n\nd\n\n"
                             "## See also\n\n- [[A]]\n- [[B]]\n\n## References\n");
    free(out);
    (void)state;
}

static char *resolve_fixture(void *ud, const char *target)
{
    static const char *stems[] = {"Fujifilm_X100V", "Ricoh_GR_III", "Street_photography", "Bread_baking",
                                  "Sourdough_starter", "Film_simulations", "X100V"};
    (void)ud;
    long i = dream_article_resolve_link(stems, 7, target);
    return i < 0 ? NULL : strdup(stems[i]);
}

static void test_normalize_infobox_title_links_and_stub(void **state)
{
    const char *in = "# Old title  \r\n```info\naliases: a, b\nowned: yes\nkind: gadget\ntype: camera\nowned: no\n```\n"
                     "The thing[^1]. Like [[ricoh gr iii#Comparison]] and [[Leica]].\n"
                     "## References\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n";
    struct dream_article_normalize_params p = {.stem = "Fujifilm_X100V", .resolve = resolve_fixture, .manage_stub = true};
    struct notes ns = {0};
    char *out = normalized(in, &p, &ns);
    assert_string_equal(out, "# Fujifilm X100V\n\n{{stub}}\n```info\ntype: camera\nkind: thing\nowned: yes\naliases: a, b\n```\n"
                             "The thing[^1]. Like [[Ricoh_GR_III#Comparison|ricoh gr iii]] and [[Leica]].\n\n"
                             "## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n");
    assert_non_null(strstr(ns.text, "redlink [[Leica]]"));
    assert_non_null(strstr(ns.text, "kind 'gadget'"));
    assert_non_null(strstr(ns.text, "marked as a stub"));
    free(out);
    (void)state;
}

/* The stub marker is the wiki's, for the articles it writes (each cites a conversation). A short
 * article of the person's own (no footnote citing one), linked by the link stage, was given a
 * {{stub}} line it never had; and one over the threshold lost the marker its writer put there. */
static void test_normalize_leaves_the_stub_marker_of_the_persons_own_article(void **state)
{
    struct dream_article_normalize_params p = {.stem = "Garden", .resolve = resolve_fixture, .manage_stub = true};
    static const char *const own[] = {
        "# Garden\n\nMy plot by the river. See [[Leica]].\n",
        "# Garden\n\nMy plot by the river[^1].\n\n## References\n\n[^1]: my own note, not a conversation\n",
        "# Garden\n\n{{stub}}\nMy plot by the river. " /* over the threshold's words, in two sections */
        "It gets the morning sun and the evening shade, and the soil is heavy clay that holds water well into June. "
        "Tomatoes, beans and squash go in each year.\n\n## Beds\n\nThree raised beds.\n\n## Tools\n\nA spade and a fork.\n",
    };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        struct notes ns = {0};
        char *out = normalized(own[i], &p, &ns);
        assert_string_equal(out, own[i]);
        free(out);
    }
    /* the wiki's own short article is still marked */
    struct notes ns = {0};
    char *out = normalized("# Garden\n\nMy plot by the river[^1].\n\n## References\n\n[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n", &p, &ns);
    assert_non_null(strstr(out, "{{stub}}"));
    free(out);
    (void)state;
}

static void test_normalize_leaves_clean_fixtures_unchanged(void **state)
{
    DIR *d = opendir(fixtures);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t len;
        char *data = read_fixture(e->d_name, &len);
        char stem[256];
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(e->d_name) - 3), e->d_name);
        struct dream_article_normalize_params p = {.stem = stem, .resolve = resolve_fixture, .manage_stub = true};
        dream_article *a = NULL;
        assert_int_equal(dream_article_parse(data, len, &a), 0);
        struct notes ns = {0};
        assert_int_equal(dream_article_normalize(a, &p, on_note, &ns), 0);
        size_t olen;
        const char *out = dream_article_text(a, &olen);
        if (olen != len || memcmp(out, data, len) != 0) fprintf(stderr, "%s changed:\n%s\n---\n%s", e->d_name, ns.text, out);
        assert_int_equal(olen, len);
        assert_memory_equal(out, data, len);
        /* and a clean fixture passes check */
        assert_int_equal(dream_article_check(a, &(struct dream_article_check_params){.stem = stem}, NULL, NULL), 0);
        dream_article_free(a);
        free(data);
    }
    closedir(d);
    (void)state;
}

/* ---- the property: over fixtures and mutations of them --------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *snippets[] = {
    "```", "~~~", "```info\n", "## ", "### Sub\n", "# Second\n", "[^1]", "[^2]", "[^x]", "[^1]: `conv:aaaaaaaa#1` (2024-01-01, A)\n",
    "[^3]: `conv:aaaaaaaa#1` (2024-01-01, A)\n", "[^2]: plain note\n", "[[", "]]", "[[A|b]]", "{{stub}}\n", "{{", "}}",
    "\n", "\n\n\n", "  ", "\t", "\r\n", "`", "``", "## References\n", "## See also\n- [[X]]\n", "## History\n",
    "categories: [[Category:Cameras]]\n", "*Part of a series on [[Photography]].*\n", "key: value\n", "#", "\0",
    "*Redirects to [[B]].*\n", "kind: robot\n", "## Notes\n",
};

static void footnote_problem(void *ud, int line, const char *message)
{
    if (!strstr(message, "footnote")) return; /* grammar problems are the checker's to report */
    if (strstr(message, "`conv:` citations") || strstr(message, "is not in the form")) return;
    fail_msg("%s: after normalize, line %d: %s", (const char *)ud, line, message);
}

static void check_property(const char *data, size_t len, const char *what)
{
    assert_roundtrip(data, len);
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(data, len, &a), 0);
    struct dream_article_normalize_params p = {.stem = "Some_title", .manage_stub = true};
    assert_int_equal(dream_article_normalize(a, &p, NULL, NULL), 0);
    size_t l1;
    const char *t1 = dream_article_text(a, &l1);
    char *once = malloc(l1 + 1);
    memcpy(once, t1, l1 + 1);
    assert_int_equal(dream_article_normalize(a, &p, NULL, NULL), 0);
    size_t l2;
    const char *t2 = dream_article_text(a, &l2);
    if (l1 != l2 || memcmp(once, t2, l1) != 0)
        fprintf(stderr, "not idempotent (%s):\n--- input\n%.*s\n--- once\n%s\n--- twice\n%s\n", what, (int)len, data, once, t2);
    assert_int_equal(l1, l2);
    assert_memory_equal(once, t2, l1);
    /* after normalize the footnotes are bijective and contiguous; only malformed provenance
     * (which normalize cannot invent) may remain */
    dream_article_check(a, NULL, footnote_problem, (void *)what);
    free(once);
    dream_article_free(a);
}

static void test_article_property_roundtrip_and_idempotent_normalize(void **state)
{
    DIR *d = opendir(fixtures);
    assert_non_null(d);
    struct dirent *e;
    char *texts[32];
    size_t lens[32], nt = 0;
    while ((e = readdir(d)) && nt < 32) {
        if (e->d_name[0] == '.') continue;
        texts[nt] = read_fixture(e->d_name, &lens[nt]);
        check_property(texts[nt], lens[nt], e->d_name);
        nt++;
    }
    closedir(d);
    /* DREAM_ARTICLE_MUTATIONS raises the count for a longer local run */
    size_t iterations = getenv("DREAM_ARTICLE_MUTATIONS") ? (size_t)strtoul(getenv("DREAM_ARTICLE_MUTATIONS"), NULL, 10) : 3000;
    for (size_t it = 0; it < iterations; it++) {
        size_t k = next_rand() % nt;
        char buf[16384];
        size_t len = lens[k] < sizeof buf ? lens[k] : sizeof buf;
        memcpy(buf, texts[k], len);
        int edits = 1 + (int)(next_rand() % 6);
        for (int m = 0; m < edits; m++) {
            size_t at = len ? next_rand() % (len + 1) : 0;
            switch (next_rand() % 3) {
            case 0: { /* insert a snippet */
                const char *sn = snippets[next_rand() % (sizeof snippets / sizeof snippets[0])];
                size_t sl = sn[0] ? strlen(sn) : 1;
                if (len + sl >= sizeof buf) break;
                memmove(buf + at + sl, buf + at, len - at);
                memcpy(buf + at, sn, sl);
                len += sl;
                break;
            }
            case 1: { /* delete a span */
                size_t dl = next_rand() % 40;
                if (at + dl > len) dl = len - at;
                memmove(buf + at, buf + at + dl, len - at - dl);
                len -= dl;
                break;
            }
            default: { /* duplicate a span elsewhere */
                size_t from = len ? next_rand() % len : 0, dl = next_rand() % 80;
                if (from + dl > len) dl = len - from;
                if (len + dl >= sizeof buf) break;
                char tmp[80];
                memcpy(tmp, buf + from, dl);
                memmove(buf + at + dl, buf + at, len - at);
                memcpy(buf + at, tmp, dl);
                len += dl;
            }
            }
        }
        char what[64];
        snprintf(what, sizeof what, "mutation %zu", it);
        check_property(buf, len, what);
    }
    for (size_t i = 0; i < nt; i++) free(texts[i]);
    (void)state;
}

/* ---- forgetting conversations (issue 18.3) ---------------------------------------------- */

/* The text of a after forgetting convs (then normalized, as dream forget does), malloc'd. */
static char *forget_text(const char *text, const char *const *convs, size_t n, struct dream_article_forget_result *r)
{
    dream_article *a = parse_str(text);
    assert_int_equal(dream_article_forget(a, convs, n, r), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    char *out = NULL;
    assert_int_equal(dream_article_write(a, &out, NULL), 0);
    dream_article_free(a);
    return out;
}

static const char forget_article[] =
    "# Tea\n\n"
    "**Tea** is what the person drinks at work.[^1] They switched to green tea in May.[^2]\n\n"
    "## Brewing\n\n"
    "The person brews at 80 °C, e.g. for sencha. They steep it two minutes.[^2] Both shops sell it loose.[^1][^3]\n\n"
    "- Kettle: a gooseneck one.[^2]\n"
    "- Cups: two, from \"Kyoto\".[^3]\n\n"
    "## Shops\n\n"
    "The tea shop on Elm Street sells sencha.[^2]\n\n"
    "## References\n\n"
    "[^1]: `conv:aaaa1111#m1` (2024-01-02, Work habits)\n"
    "[^2]: `conv:bbbb2222#m4` (2024-05-10, Green tea)\n"
    "[^3]: `conv:cccc3333#m0` (2024-06-01, Cups)\n";

static void test_article_forget_takes_out_the_claims_only_a_conversation_supports(void **state)
{
    (void)state;
    const char *gone[] = {"bbbb2222"};
    struct dream_article_forget_result r;
    char *t = forget_text(forget_article, gone, 1, &r);
    /* its sentences go (with the uncited one that leads up to a claim of its own), its list item
     * goes, a section left empty goes, a shared sentence keeps the other footnotes */
    const char *want = "# Tea\n\n"
                       "**Tea** is what the person drinks at work.[^1]\n\n"
                       "## Brewing\n\n"
                       "Both shops sell it loose.[^1][^2]\n\n"
                       "- Cups: two, from \"Kyoto\".[^2]\n\n"
                       "## References\n\n"
                       "[^1]: `conv:aaaa1111#m1` (2024-01-02, Work habits)\n"
                       "[^2]: `conv:cccc3333#m0` (2024-06-01, Cups)\n";
    if (strcmp(t, want)) fprintf(stderr, "--- got ---\n%s", t);
    assert_string_equal(t, want);
    assert_true(r.changed);
    assert_true(r.cited);
    assert_int_equal(r.sentences, 5); /* green tea, 80 °C, two minutes, kettle, Elm Street */
    assert_int_equal(r.citations, 4);
    assert_int_equal(r.sections, 1);
    free(t);
}

static void test_article_forget_keeps_other_citations_of_a_shared_sentence(void **state)
{
    (void)state;
    const char *gone[] = {"aaaa1111"};
    struct dream_article_forget_result r;
    char *t = forget_text(forget_article, gone, 1, &r);
    assert_non_null(strstr(t, "Both shops sell it loose.[^2]")); /* [^1] went; [^3] is the second now */
    assert_null(strstr(t, "drinks at work"));
    assert_null(strstr(t, "aaaa1111"));
    assert_non_null(strstr(t, "They switched to green tea in May.[^1]"));
    assert_int_equal(r.sentences, 1);
    assert_int_equal(r.citations, 2);
    free(t);
}

static void test_article_forget_reports_an_article_left_with_nothing_cited(void **state)
{
    (void)state;
    const char *gone[] = {"aaaa1111", "bbbb2222", "cccc3333"};
    struct dream_article_forget_result r;
    char *t = forget_text(forget_article, gone, 3, &r);
    assert_true(r.changed);
    assert_false(r.cited);
    assert_null(strstr(t, "conv:"));
    free(t);
    /* a conversation it does not cite changes nothing */
    const char *other[] = {"dddd4444"};
    dream_article *a = parse_str(forget_article);
    assert_int_equal(dream_article_forget(a, other, 1, &r), 0);
    assert_false(r.changed);
    assert_true(r.cited);
    size_t len;
    const char *same = dream_article_text(a, &len);
    assert_int_equal(len, strlen(forget_article));
    assert_memory_equal(same, forget_article, len);
    dream_article_free(a);
}

/* Taking a marker out can leave a heading ("[^1]## Notes" becomes "## Notes"), so the article
 * reads back with more sections than it had: the sections the edits touched must be found again
 * by where their headings went, not by their old index (make fuzz: a read past the end of the
 * per-section flags). */
static void test_article_forget_when_an_edit_makes_a_heading(void **state)
{
    (void)state;
    const char *text = "# Bread\n\n"
                       "**Bread** is baked weekly.[^2]\n\n"
                       "## Oven\n\n"
                       "A hot oven.[^1]\n\n"
                       "## References\n\n"
                       "[^1]: `conv:aaaa1111#m1` (2024-01-02, Rye)\n"
                       "[^1]## Notes\n"
                       "[^1]## More\n"
                       "[^2]: `conv:bbbb2222#m4` (2024-05-10, Baking)\n";
    const char *gone[] = {"aaaa1111"};
    struct dream_article_forget_result r;
    char *t = forget_text(text, gone, 1, &r);
    assert_true(r.changed);
    assert_true(r.cited);
    assert_int_equal(r.sections, 1); /* Oven, which the edits emptied; not the two new ones */
    assert_null(strstr(t, "aaaa1111"));
    assert_null(strstr(t, "## Oven"));
    assert_non_null(strstr(t, "**Bread** is baked weekly.[^1]"));
    assert_non_null(strstr(t, "## Notes\n"));
    assert_non_null(strstr(t, "## More\n"));
    assert_non_null(strstr(t, "[^1]: `conv:bbbb2222#m4`"));
    free(t);
}

/* An embedded or linked attachment (![[pic.png]], [[notes.pdf]]) is a file Obsidian finds
 * anywhere in the vault, not an article: check called it a link to no article (no
 * articles/pic.png.md), so a vault with one picture could never be clean. An article's name with
 * a dot in it ([[Node.js]]) is still checked. */
static void test_check_leaves_attachment_links_alone(void **state)
{
    (void)state;
    static const char text[] = "# T\n\nA sketch: ![[roof sketch.png]] and the manual [[manual.PDF|pdf]], from [[Node.js]].\n";
    dream_article *a;
    assert_int_equal(dream_article_parse(text, sizeof text - 1, &a), 0);
    const char *stems[] = {"T"};
    size_t n = 0;
    int problems = dream_article_check(a, &(struct dream_article_check_params){.stems = stems, .n_stems = 1}, count_problems, &n);
    assert_int_equal(problems, 1); /* Node.js alone */
    dream_article_free(a);
}

int main(int argc, char **argv)
{
    fixtures = argc > 1 ? argv[1] : "tests/data/articles";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_leaves_attachment_links_alone),
        cmocka_unit_test(test_article_parses_the_tree_of_a_full_article),
        cmocka_unit_test(test_article_write_gives_back_every_fixture_byte_for_byte),
        cmocka_unit_test(test_article_write_keeps_malformed_input_verbatim),
        cmocka_unit_test(test_write_file_keeps_a_link_and_the_permissions),
        cmocka_unit_test(test_article_footnote_add_reuses_then_appends_to_references),
        cmocka_unit_test(test_article_undated_citation_says_undated),
        cmocka_unit_test(test_article_section_edits_keep_the_grammar_order),
        cmocka_unit_test(test_article_anchor_and_stem_rules),
        cmocka_unit_test(test_article_links_written_with_the_path_resolve),
        cmocka_unit_test(test_article_byte_order_mark_is_not_text),
        cmocka_unit_test(test_article_unresolved_merge_is_not_edited),
        cmocka_unit_test(test_article_parses_banner_categories_table_and_redirect),
        cmocka_unit_test(test_gate_accepts_a_clean_patch),
        cmocka_unit_test(test_gate_rejects_lost_citation),
        cmocka_unit_test(test_gate_word_floor_applies_to_each_touched_section),
        cmocka_unit_test(test_gate_rejects_broken_grammar),
        cmocka_unit_test(test_gate_tolerates_what_before_already_had),
        cmocka_unit_test(test_article_categories_are_front_matter_tags),
        cmocka_unit_test(test_article_category_tag_mapping_is_reversible),
        cmocka_unit_test(test_article_front_matter_reads_every_list_form),
        cmocka_unit_test(test_article_migrate_moves_the_old_header_only),
        cmocka_unit_test(test_article_footnote_links_to_its_message),
        cmocka_unit_test(test_article_block_ids_and_note_names),
        cmocka_unit_test(test_gate_new_section_and_lead),
        cmocka_unit_test(test_gate_baseline_stops_nightly_erosion),
        cmocka_unit_test(test_replace_file_writes_only_accepted_edits_over_an_unchanged_file),
        cmocka_unit_test(test_check_reports_duplicate_section_names_and_nul_edits_are_refused),
        cmocka_unit_test(test_sanitize_draft_keeps_prose_and_drops_what_the_program_writes),
        cmocka_unit_test(test_normalize_renumbers_merges_and_gathers_footnotes),
        cmocka_unit_test(test_normalize_closes_an_unclosed_fence_before_the_heading_it_swallowed),
        cmocka_unit_test(test_normalize_reads_a_lone_cr_as_a_line_end),
        cmocka_unit_test(test_normalize_orders_the_tail_and_merges_duplicates),
        cmocka_unit_test(test_normalize_infobox_title_links_and_stub),
        cmocka_unit_test(test_normalize_leaves_the_stub_marker_of_the_persons_own_article),
        cmocka_unit_test(test_normalize_leaves_clean_fixtures_unchanged),
        cmocka_unit_test(test_article_property_roundtrip_and_idempotent_normalize),
        cmocka_unit_test(test_article_forget_takes_out_the_claims_only_a_conversation_supports),
        cmocka_unit_test(test_article_forget_keeps_other_citations_of_a_shared_sentence),
        cmocka_unit_test(test_article_forget_reports_an_article_left_with_nothing_cited),
        cmocka_unit_test(test_article_forget_when_an_edit_makes_a_heading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
