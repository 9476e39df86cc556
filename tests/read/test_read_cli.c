/* test_read_cli.c — the read verbs end to end: the built `dream` on the hand-written vault
 * (tests/data/vault) with a store made by the Dreaming fixture, asserting the printed output
 * and exit status. argv: DREAM_BINARY VAULT_DIR DREAMING_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dreaming_fixture.h"
#include "dream/store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *dream_bin, *vault_dir, *dreaming_dir;
static char tmpdir[256], opts[1024];
static char out[1 << 16];

/* Runs `dream <args> <opts>` (opts: --wiki and --store of the fixture) with stdout and stderr
 * captured into out; returns the exit status. */
static int dream(const char *fmt, ...)
{
    char args[2048], full[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "'%s' %s %s >'%s/out' 2>&1", dream_bin, args, opts, tmpdir);
    int st = system(full);
    char path[400];
    snprintf(path, sizeof path, "%s/out", tmpdir);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    if (f) fclose(f);
    out[n] = '\0';
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define EXPECT(needle)                                                                                                 \
    do {                                                                                                               \
        if (!strstr(out, needle)) fail_msg("missing '%s' in:\n%s", needle, out);                                       \
    } while (0)

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-read-cli-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    char store[400], corpus[400], wiki[400];
    snprintf(store, sizeof store, "%s/memory.sqlite", tmpdir);
    snprintf(corpus, sizeof corpus, "%s/corpus", dreaming_dir);
    snprintf(wiki, sizeof wiki, "%s/wiki", dreaming_dir);
    dream_store *s = NULL;
    if (dream_store_open(store, &s)) return -1;
    int rc = fixture_ingest(s, corpus);
    if (!rc) rc = fixture_run_pipeline(s, wiki, 0, NULL, NULL);
    dream_store_close(s);
    /* DREAM_HOME keeps the default config (schedule state) inside the test's directory */
    snprintf(opts, sizeof opts, "--wiki '%s' --store '%s'", vault_dir, store);
    char home[400];
    snprintf(home, sizeof home, "%s/home", tmpdir);
    setenv("DREAM_HOME", home, 1);
    return rc;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd);
}

static void test_cli_resolve_alias_pipeline_name_and_miss(void **state)
{
    (void)state;
    assert_int_equal(dream("resolve natural leaven"), 0);
    EXPECT("Sourdough (Sourdough, domain, bread)\n**Sourdough** is bread raised by a starter");
    EXPECT("next: dream read Sourdough\n");
    assert_int_equal(dream("resolve bike repair"), 0); /* a name only the pipeline knows */
    EXPECT("Bicycle Maintenance (Bicycle_Maintenance, domain, routine)");
    assert_int_equal(dream("resolve Kayak Trip"), 0);
    EXPECT("Kayak Trip: a captured subject with no article yet, in 1 chunk(s):\n  conv:");
    EXPECT(" A weekend on the lake: a kayak weekend\n");
    /* unknown: exit 1 with the near candidates, articles and captured subjects */
    assert_int_equal(dream("resolve sourdogh"), 1);
    EXPECT("dream resolve: no article named 'sourdogh'; near: Sourdough\ndid you mean:\n  Sourdough (Sourdough)\n");
    assert_int_equal(dream("resolve chess"), 1);
    EXPECT("captured subjects (no article yet):\n  Chess Openings (1 chunk(s))\n");
    assert_int_equal(dream("resolve chess --json"), 1);
    json_t *o = json_loads(out, 0, NULL);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "status")), "missing");
    json_decref(o);
}

static void test_cli_read_default_is_small_and_whole_is_the_file(void **state)
{
    (void)state;
    assert_int_equal(dream("read Sourdough"), 0);
    EXPECT("# Sourdough (Sourdough, 1283 bytes)\n\n**Sourdough** is bread");
    EXPECT("- Starter  #starter\n  - Feeding schedule  #feeding-schedule\n- Baking  #baking\n");
    EXPECT("next: dream section Sourdough ANCHOR\n");
    assert_true(strlen(out) < 2048);
    assert_null(strstr(out, "cast-iron")); /* no body text by default */
    assert_int_equal(dream("read Sourdough --json"), 0);
    assert_true(strlen(out) < 2048);
    json_t *o = json_loads(out, 0, NULL);
    assert_non_null(o);
    assert_int_equal(json_array_size(json_object_get(o, "sections")), 6);
    json_decref(o);
    assert_int_equal(dream("read Sourdough --whole"), 0);
    EXPECT("Loaves bake in a preheated cast-iron pot");
    EXPECT("[^3]: `conv:77e0aa01#1` (2024-02-10, Levain or starter)\n");
    assert_int_equal(dream("read ../secret"), 1);
    EXPECT("dream read: no article named '../secret'");
    assert_int_equal(dream("read /etc/passwd --whole"), 1);
    assert_null(strstr(out, "root:"));
    assert_int_equal(dream("read"), 2);
    EXPECT("which article? give its name");
}

static void test_cli_section_links_infobox(void **state)
{
    (void)state;
    assert_int_equal(dream("section Sourdough feeding-schedule"), 0);
    EXPECT("### Feeding schedule\n\nThe user feeds it once a day");
    EXPECT("\n\n[^2]: `conv:5a1b2c3d#4` (2024-01-05, Feeding a new sourdough starter)\n[^3]: ");
    assert_int_equal(dream("section Sourdough Nowhere"), 1);
    EXPECT("dream section: no section 'Nowhere' in Sourdough");
    EXPECT("sections: starter feeding-schedule baking history see-also references\n");
    assert_int_equal(dream("links Sourdough"), 0);
    assert_string_equal(out, "Sourdough\n  series: Home_Cooking\n  see_also: Home_Cooking Balcony_garden\n  inbound: Home_Cooking (main)\n");
    assert_int_equal(dream("links Bicycle_Maintenance"), 0);
    EXPECT("  redlinks: [[Chain Lube]]\n");
    assert_int_equal(dream("infobox Home_Solar_Panels"), 0);
    assert_string_equal(out, "type: energy system\nkind: project\nstatus: installed\naliases: rooftop solar\n");
    assert_int_equal(dream("infobox Home_Solar_Panels --json"), 0);
    EXPECT("\"note\":\"facts to read, not a filter\"");
}

static void test_cli_list_membership_search_status(void **state)
{
    (void)state;
    assert_int_equal(dream("list"), 0);
    assert_string_equal(out, "Balcony_garden\nBicycle_Maintenance\nCello_Practice\nHome_Cooking\nHome_Solar_Panels\nSourdough\n");
    assert_int_equal(dream("list --limit 2 --offset 1"), 0);
    assert_string_equal(out, "Bicycle_Maintenance\nCello_Practice\n...and 3 more (--offset)\n");
    /* an offset past the end is an empty page (before: exit 2, "whole numbers from 0 to 999999",
     * for an offset the option itself had taken) */
    assert_int_equal(dream("list --offset 1000000 --json"), 0);
    EXPECT("\"articles\":[]");
    assert_int_equal(dream("list --category 'Home projects'"), 0);
    EXPECT("category Home projects: 2 article(s)\n  Balcony_garden · The **balcony garden** is a set of planters");
    EXPECT("\n  Home_Solar_Panels · ");
    assert_int_equal(dream("list --kind domain --json"), 0);
    EXPECT("\"by\":\"kind\",\"value\":\"domain\",\"total\":4");
    /* the full-text index: the article's section first with its citation, then the message */
    /* words the article already sets in bold are not bolded twice (it showed "****Cello practice****") */
    assert_int_equal(dream("search '\"cello practice\"' --json"), 0);
    EXPECT("**Cello practice** is");
    assert_null(strstr(out, "****"));
    assert_int_equal(dream("search derailleur limit"), 0);
    EXPECT("1 article hit(s)\n  Bicycle_Maintenance#derailleur 2024-07-01 conv:4f4f4f4f#1: The **limit** screws stop the chain");
    EXPECT("1 message hit(s)\n  conv:");
    EXPECT(" user in \"What does the derailleur limit screw do?\": What does the **derailleur** **limit** screw do?\n");
    assert_int_equal(dream("search 'derail*' --conversations --json"), 0);
    EXPECT("\"match\":\"((\\\"derail\\\"*))\"");
    assert_null(strstr(out, "\"results\""));
    assert_int_equal(dream("search kayak"), 0);
    EXPECT("  captured subject Kayak Trip (1 chunk(s)): **Kayak** Trip\n");
    assert_int_equal(dream("search '\"bow hold'"), 2);
    EXPECT("dream search: bad search query '\"bow hold': the quote at byte 0 is never closed");
    assert_int_equal(dream("search kayak --since 2024-13-01"), 2);
    EXPECT("since must be a day written YYYY-MM-DD, not '2024-13-01'");
    assert_int_equal(dream("search kayak --until 2024-02-31"), 2); /* not 2 March */
    EXPECT("until must be a day written YYYY-MM-DD, not '2024-02-31'");
    assert_int_equal(dream("search"), 2);
    /* the index checked and rebuilt whole: the same hits after */
    assert_int_equal(dream("reindex --check"), 0);
    EXPECT("is sound\n");
    assert_int_equal(dream("reindex"), 0);
    EXPECT(" captured subject(s), 6 article(s): ");
    assert_int_equal(dream("search derailleur limit"), 0);
    EXPECT("1 article hit(s)\n  Bicycle_Maintenance#derailleur 2024-07-01 conv:4f4f4f4f#1: ");
    assert_int_equal(dream("status"), 0);
    EXPECT("articles: 6 (1 stubs, 0 redirects)\n");
    EXPECT("13 conversations, ");
    EXPECT("18 chunks, 9 entities (5 with an article, 4 captured)\n");
    EXPECT("  segment: 13 of 13 conversations done\n  extract: 18 of 18 chunks done\n");
    EXPECT("schedule: none (dream schedule --at HH:MM)\n");
    assert_int_equal(dream("status --json"), 0);
    json_t *o = json_loads(out, 0, NULL);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "articles")), 6);
    json_decref(o);
    assert_int_equal(dream("status --bogus"), 2);
    EXPECT("dream status: unknown option '--bogus'");
}

/* Before `dream init`: status still shows the store (counts and how far the stages are) and
 * says how to create the wiki, exit 0; the other read verbs still name the missing wiki. */
static void test_cli_status_without_a_wiki_shows_the_store(void **state)
{
    (void)state;
    char saved[sizeof opts], store[400], line[1200];
    snprintf(saved, sizeof saved, "%s", opts);
    snprintf(store, sizeof store, "%s/memory.sqlite", tmpdir);
    snprintf(opts, sizeof opts, "--wiki '%s/not-yet' --store '%s'", tmpdir, store);
    assert_int_equal(dream("status"), 0);
    snprintf(line, sizeof line, "wiki: none yet at %s/not-yet: `dream init --wiki %s/not-yet` creates it, then `dream run` writes its articles\n",
             tmpdir, tmpdir);
    EXPECT(line);
    EXPECT("13 conversations, ");
    EXPECT("  segment: 13 of 13 conversations done\n  extract: 18 of 18 chunks done\n");
    EXPECT("schedule: none");
    if (strstr(out, "articles:")) fail_msg("an article count for a wiki that is not there:\n%s", out);
    assert_int_equal(dream("status --json"), 0);
    json_t *o = json_loads(out, 0, NULL);
    assert_non_null(o);
    assert_true(json_is_false(json_object_get(o, "wiki_exists")));
    assert_int_equal(json_integer_value(json_object_get(o, "conversations")), 13);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(o, "progress"), "segment"), "done")), 13);
    json_decref(o);
    assert_int_equal(dream("resolve Kayak"), 1);
    EXPECT("no wiki at ");
    /* a wiki path that is not UTF-8 (a Latin-1 "café") is shown with U+FFFD, not refused as
     * "out of memory" */
    snprintf(opts, sizeof opts, "--wiki '%s/caf\xe9' --store '%s'", tmpdir, store);
    assert_int_equal(dream("status --json"), 0);
    o = json_loads(out, 0, NULL);
    assert_non_null(o);
    snprintf(line, sizeof line, "%s/caf\xef\xbf\xbd", tmpdir);
    assert_string_equal(json_string_value(json_object_get(o, "wiki")), line);
    json_decref(o);
    snprintf(opts, sizeof opts, "%s", saved);
}

/* An argument that is not valid UTF-8 is a usage error naming the option (exit 2), never
 * dropped: a dropped --category would list every article, a dropped --since every day. */
static void test_cli_argument_not_utf8_is_refused(void **state)
{
    (void)state;
    assert_int_equal(dream("list --category \"$(printf 'Caf\\351')\""), 2);
    EXPECT("dream list: the value of --category is not valid UTF-8");
    if (strstr(out, "Balcony_garden")) fail_msg("listed articles for a --category it could not read:\n%s", out);
    assert_int_equal(dream("list --series \"$(printf '\\377')\""), 2);
    EXPECT("dream list: the value of --series is not valid UTF-8");
    assert_int_equal(dream("search kayak --since \"$(printf '\\377')\""), 2);
    EXPECT("dream search: the value of --since is not valid UTF-8");
    if (strstr(out, "Kayak Trip")) fail_msg("searched with a --since it could not read:\n%s", out);
    assert_int_equal(dream("search \"$(printf 'kayak \\377')\""), 2);
    EXPECT("dream search: the query is not valid UTF-8");
    assert_int_equal(dream("read \"$(printf 'Sourdough\\377')\""), 2);
    EXPECT("dream read: the article name is not valid UTF-8");
    assert_int_equal(dream("section Sourdough \"$(printf '\\377')\""), 2);
    EXPECT("dream section: the section is not valid UTF-8");
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s DREAM_BINARY VAULT_DIR DREAMING_DIR\n", argv[0]);
        return 2;
    }
    dream_bin = argv[1];
    vault_dir = argv[2];
    dreaming_dir = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_resolve_alias_pipeline_name_and_miss),
        cmocka_unit_test(test_cli_read_default_is_small_and_whole_is_the_file),
        cmocka_unit_test(test_cli_section_links_infobox),
        cmocka_unit_test(test_cli_list_membership_search_status),
        cmocka_unit_test(test_cli_status_without_a_wiki_shows_the_store),
        cmocka_unit_test(test_cli_argument_not_utf8_is_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
