/* test_synthesis.c — the writing stages over the fixture corpus (tests/data/dreaming) with the
 * scripted fake: CREATE on the first part of the corpus, then, after the rest arrives, FOLD of
 * the new chunks into the articles. The vault must equal tests/data/dreaming/golden/ file by
 * file (set DREAM_UPDATE_GOLDEN=1 to rewrite it after a deliberate change, then review the
 * diff); every article passes dream check's rules; each run commits exactly what it wrote with
 * a `memory: ` subject; a second run changes nothing; a hand edit survives; noise answers
 * leave no file or a valid stub. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/util/buf.h"
#include "../src/util/file.h"
#include "dream/article.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "dreaming_test_util.h"
#include "gbnf_match.h"
#include "git_test_util.h"
#include "synth_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *data_dir; /* tests/data/dreaming */
static char seeds_wiki[4096], golden[4096];

struct ctx {
    char root[4096], wiki[4096];
    dream_store *store;
};

static void sh(const char *fmt, const char *a)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, fmt, a, a);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    struct ctx *c = calloc(1, sizeof *c);
    const char *b = getenv("DREAM_TEST_BUILD");
    snprintf(c->root, sizeof c->root, "%s/tests/synthesis-XXXXXX", b ? b : "/tmp");
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/tests", b ? b : "/tmp");
    mkdir(parent, 0755);
    if (!mkdtemp(c->root)) return -1;
    snprintf(c->wiki, sizeof c->wiki, "%s/wiki", c->root);
    if (dream_vault_init(c->wiki, NULL, NULL, NULL)) return -1;
    if (dream_store_open(":memory:", &c->store)) return -1;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct ctx *c = *state;
    dream_store_close(c->store);
    dream_seam_set_backend(NULL);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->root);
    if (system(cmd) != 0) return -1;
    free(c);
    return 0;
}

static void ingest(struct ctx *c, const char *sub)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/corpus/%s", data_dir, sub);
    assert_int_equal(fixture_ingest(c->store, dir), 0);
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
}

static void use_fake(void)
{
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    assert_int_equal(dream_seam_set_backend(&fake), 0);
}

static struct dream_synth_result create(struct ctx *c)
{
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.batch = 3;
    struct dream_synth_result r;
    use_fake();
    int rc = dream_synth_create(c->store, &p, &r);
    if (rc) fprintf(stderr, "create: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

static struct dream_synth_result fold(struct ctx *c)
{
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r;
    use_fake();
    int rc = dream_synth_fold(c->store, &p, &r);
    if (rc) fprintf(stderr, "fold: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

/* The sorted *.md names of dir. */
static size_t list_md(const char *dir, char names[][256], size_t cap)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < cap) {
        size_t l = strlen(e->d_name);
        if (l > 3 && strcmp(e->d_name + l - 3, ".md") == 0) snprintf(names[n++], 256, "%s", e->d_name);
    }
    if (d) closedir(d);
    qsort(names, n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

static char *slurp(const char *path)
{
    char *t = NULL;
    size_t len;
    if (file_read_all(path, 0, &t, &len)) return NULL;
    return t;
}

/* articles/ of the wiki equals golden/<phase>/ file by file (or rewrites it). */
static void assert_golden(struct ctx *c, const char *phase)
{
    char have_dir[4200], want_dir[4200];
    snprintf(have_dir, sizeof have_dir, "%s/articles", c->wiki);
    snprintf(want_dir, sizeof want_dir, "%s/%s", golden, phase);
    static char have[64][256], want[64][256];
    size_t nh = list_md(have_dir, have, 64);
    if (getenv("DREAM_UPDATE_GOLDEN")) {
        char cmd[9000];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/*.md '%s'/", want_dir, want_dir, have_dir, want_dir);
        assert_int_equal(system(cmd), 0);
    }
    size_t nw = list_md(want_dir, want, 64);
    for (size_t i = 0; i < nh || i < nw; i++) {
        if (i >= nh || i >= nw || strcmp(have[i], want[i]) != 0)
            fprintf(stderr, "article lists differ at %zu: have %s, golden %s\n", i, i < nh ? have[i] : "-", i < nw ? want[i] : "-");
        assert_true(i < nh && i < nw);
        assert_string_equal(have[i], want[i]);
        char hp[4600], wp[4600];
        snprintf(hp, sizeof hp, "%s/%s", have_dir, have[i]);
        snprintf(wp, sizeof wp, "%s/%s", want_dir, want[i]);
        char *h = slurp(hp), *w = slurp(wp);
        assert_non_null(h);
        assert_non_null(w);
        if (strcmp(h, w) != 0) fprintf(stderr, "--- golden %s ---\n%s--- got ---\n%s", wp, w, h);
        assert_string_equal(h, w);
        free(h);
        free(w);
    }
    assert_true(nh > 0);
}

static void count_problem(void *ud, int line, const char *message)
{
    fprintf(stderr, "  line %d: %s\n", line, message);
    (*(size_t *)ud)++;
}

/* Every article passes dream check's rules (grammar, footnotes, links against the vault). */
static void assert_vault_checks(struct ctx *c)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/articles", c->wiki);
    static char names[64][256];
    size_t n = list_md(dir, names, 64);
    char *stems[64];
    for (size_t i = 0; i < n; i++) stems[i] = strndup(names[i], strlen(names[i]) - 3);
    for (size_t i = 0; i < n; i++) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        dream_article *a;
        assert_int_equal(dream_article_read_file(path, &a), 0);
        struct dream_article_check_params p = {.stem = stems[i], .stems = (const char *const *)stems, .n_stems = n};
        size_t problems = 0;
        dream_article_check(a, &p, count_problem, &problems);
        if (problems) fprintf(stderr, "%s: %zu problem(s)\n", path, problems);
        assert_int_equal(problems, 0);
        dream_article_free(a);
    }
    for (size_t i = 0; i < n; i++) free(stems[i]);
}

static char *git_head_message(struct ctx *c) { return test_git_head_message(c->wiki); }

static int git_head_has(struct ctx *c, const char *rel) { return test_git_head_has(c->wiki, rel); }

static void test_create_writes_the_golden_articles_and_commits_them(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    /* the person's own uncommitted edit elsewhere in the vault */
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/Meta/Entities.md", c->wiki);
    FILE *f = fopen(meta, "a");
    assert_non_null(f);
    fputs("\nMy own note, not committed yet.\n", f);
    fclose(f);

    struct dream_synth_result r = create(c);
    assert_int_equal(r.eligible, 5);
    assert_int_equal(r.created, 5);
    assert_int_equal(r.stubs, 0);
    assert_int_equal(r.committed, 5 + 8); /* the articles, and a transcript note per cited conversation */
    assert_int_equal(r.unheld, 5); /* the fake's type "pastime", a word no note holds */
    assert_golden(c, "create");
    assert_vault_checks(c);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: create 5 article(s)\n", 28) == 0);
    free(m);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);
    assert_int_equal(git_head_has(c, "Meta/Entities.md"), -1); /* the person's edit is not ours to commit */
    /* the commit holds the transcript each footnote links to, with the cited message's block */
    assert_int_equal(git_head_has(c, "Sources/2024-09-14 Levain or starter (67195f89).md"), 1);
    char note[4300];
    snprintf(note, sizeof note, "%s/Sources/2024-09-14 Levain or starter (67195f89).md", c->wiki);
    char *nt = slurp(note);
    assert_non_null(nt);
    assert_non_null(strstr(nt, " ^p401\n\n````text\nIs levain the same thing as a starter"));
    free(nt);
    /* ledgers: every chunk of the five entities routed to its article, and folded into a section */
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed"), 11);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_folded"), 11);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed WHERE write_seq IS NOT NULL"), 0);

    /* a second run has nothing to do */
    long calls = dreaming_fake_calls;
    r = create(c);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(dreaming_fake_calls, calls);
    m = git_head_message(c);
    assert_true(strncmp(m, "memory: create 5 article(s)\n", 28) == 0);
    free(m);
}

/* An article the person renamed or deleted is not written again: create wrote it once (its
 * chunks are in the ledger), and a file missing now is the person's doing. Before, the next run
 * wrote and committed it again beside the renamed one. */
/* A wiki without articles/ (git keeps no empty folder: the person removed the last article, or
 * cloned the wiki elsewhere): create failed on every article ("cannot create .../articles/X.md.tmp"),
 * and every later run with it. The folder is made again. */
static void test_create_makes_the_articles_folder_again(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/articles'", c->wiki);
    assert_int_equal(system(cmd), 0);
    struct dream_synth_result r = create(c);
    assert_int_equal(r.created, 5);
    assert_golden(c, "create");
    assert_vault_checks(c);
}

static void test_create_does_not_bring_back_a_renamed_or_deleted_article(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && git mv articles/Sourdough.md articles/Levain.md && git rm -q articles/Cello_Practice.md && "
             "git -c user.name=t -c user.email=t@localhost commit -qm 'mine'", c->wiki);
    assert_int_equal(system(cmd), 0);
    long calls = dreaming_fake_calls;
    struct dream_synth_result r = create(c);
    assert_int_equal(r.created, 0);
    assert_int_equal(r.committed, 0);
    assert_int_equal(dreaming_fake_calls, calls);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 0);
    assert_int_equal(git_head_has(c, "articles/Cello_Practice.md"), 0);
    snprintf(cmd, sizeof cmd, "%s/articles/Sourdough.md", c->wiki);
    assert_int_not_equal(access(cmd, F_OK), 0);
    /* a re-export that replaces the conversations' chunks takes the ledger rows along (ON DELETE
     * CASCADE): create's own record still says it wrote them (before, both came back) */
    assert_int_equal(sqlite3_exec(store_db(c->store), "DELETE FROM chunk_folded", NULL, NULL, NULL), SQLITE_OK);
    r = create(c);
    assert_int_equal(r.created, 0);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 0);
    assert_int_equal(git_head_has(c, "articles/Cello_Practice.md"), 0);
}

static void test_fold_patches_new_chunks_into_sections_and_keeps_a_hand_edit(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_synth_result r = create(c);
    assert_int_equal(r.created, 5);
    r = fold(c);
    assert_int_equal(r.eligible, 0); /* every chunk was seen at creation */
    /* the person edits an article by hand (not committed) */
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(t);
    char *at = strstr(t, "\n## References");
    assert_non_null(at);
    struct dbuf b = {0};
    dbuf_printf(&b, "%.*s\n## My Own Notes\n\nI play in the evening, after work.\n%s", (int)(at - t), t, at);
    assert_int_equal(file_write_atomic(path, b.data, b.len), 0);
    dbuf_free(&b);
    free(t);

    ingest(c, "openai");
    r = create(c);
    assert_int_equal(r.eligible, 0);
    r = fold(c);
    assert_int_equal(r.eligible, 3); /* the bow hold, the planters, the derailleur */
    assert_int_equal(r.patched, 1);      /* the planters: into the balcony garden's section */
    assert_int_equal(r.new_sections, 2); /* the bow hold and the derailleur fit no section */
    assert_int_equal(r.rejected, 0);
    assert_int_equal(r.committed, 3 + 3); /* and the notes of the three new conversations */
    assert_golden(c, "fold");
    assert_vault_checks(c);
    t = slurp(path);
    assert_non_null(strstr(t, "I play in the evening, after work."));
    free(t);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: fold 3 chunk(s) into 3 article(s)\n", 42) == 0);
    free(m);
    assert_int_equal(git_head_has(c, "articles/Cello_Practice.md"), 1);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed"), 14);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_folded"), 14);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_folded WHERE section = 'notes-on-cello-practice'"), 1);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);

    /* nothing new: no call, no commit */
    long calls = dreaming_fake_calls;
    r = fold(c);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(dreaming_fake_calls, calls);

    /* wikify tightens the five articles of routed entities (the fake drops "the person"), then
     * has nothing to do until one changes */
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    use_fake();
    assert_int_equal(dream_synth_wikify(c->store, &p, &r), 0);
    assert_int_equal(r.eligible, 5);
    assert_int_equal(r.wikified, 5);
    assert_int_equal(r.rejected, 0);
    assert_golden(c, "wikify");
    assert_vault_checks(c);
    t = slurp(path);
    assert_non_null(strstr(t, "I play in the evening, after work.")); /* the hand edit is still there */
    free(t);
    calls = dreaming_fake_calls;
    use_fake();
    assert_int_equal(dream_synth_wikify(c->store, &p, &r), 0);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(dreaming_fake_calls, calls);
    /* the high-water marks hold what the sections had before tightening */
    assert_true(test_store_scalar(c->store, "SELECT count(*) FROM section_high_water WHERE article = 'Cello_Practice'") >= 3);
}

/* A model that answers the writing stages with junk of every kind drafts can hold. */
static int garbage_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                        char **out)
{
    static const char *const junk[] = {
        "```info\ntype: x\n```\n# Heading\n[^x]: `conv:zz` junk\n",
        "Here is the section you asked for: the user is asking about bread.[^1]",
        "## References\n[^1]: `conv:00000000#0` (2020-01-01, x)\n",
        "",
        "```\nan unclosed fence [^999]\n## See also\n",
        "yes\n\n# Two\n# Titles\n{{stub}}\n",
    };
    if (!strcmp(stage, "chunk") || !strcmp(stage, "entity")) return dreaming_fake_call(ud, stage, in, n, opts, out);
    for (size_t i = 0; i < n; i++) out[i] = strdup(junk[(i + strlen(in[i].user)) % (sizeof junk / sizeof junk[0])]);
    return 0;
}

static void test_junk_answers_leave_no_file_or_a_valid_stub(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_backend junk = {.name = "junk", .call = garbage_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r;
    for (int attempt = 1; attempt <= 3; attempt++) {
        assert_int_equal(dream_seam_set_backend(&junk), 0);
        assert_int_equal(dream_synth_create(c->store, &p, &r), 0);
        assert_int_equal(r.eligible, 5);
        assert_int_equal(r.failed, 5);
        char names[8][256], dir[4200];
        snprintf(dir, sizeof dir, "%s/articles", c->wiki);
        size_t n = list_md(dir, names, 8);
        /* two failed attempts write nothing; the last allowed one writes a stub made by the code */
        assert_int_equal(n, attempt < 3 ? 0 : 5);
        assert_int_equal(r.stubs, attempt < 3 ? 0 : 5);
    }
    assert_vault_checks(c);
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(strstr(t, "{{stub}}"));
    assert_non_null(strstr(t, "[^3]: [[Sources/")); /* every source cited, linked to its message */
    free(t);
    /* folding junk into them changes no file; each chunk is given up after three tries */
    ingest(c, "openai");
    for (int attempt = 1; attempt <= 3; attempt++) {
        char *before = slurp(path);
        assert_int_equal(dream_seam_set_backend(&junk), 0);
        assert_int_equal(dream_synth_fold(c->store, &p, &r), 0);
        if (r.eligible != 3)
            fprintf(stderr, "chunks %lld routed %lld articles %lld\n", (long long)test_store_scalar(c->store, "SELECT count(*) FROM chunks"),
                    (long long)test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed"),
                    (long long)test_store_scalar(c->store, "SELECT count(*) FROM pipeline_entities WHERE route='article'"));
        assert_int_equal(r.eligible, 3);
        assert_int_equal(r.patched + r.new_sections + r.lead_patches, 0);
        char *after = slurp(path);
        assert_string_equal(before, after);
        free(before);
        free(after);
        assert_vault_checks(c);
    }
    assert_int_equal(dream_seam_set_backend(&junk), 0);
    assert_int_equal(dream_synth_fold(c->store, &p, &r), 0);
    assert_int_equal(r.eligible, 0);
}

static void assert_dream_check(struct ctx *c);

/* A model whose every section and lead draft narrates the task first ("Here is the section you
 * asked for:"), the fixture fake otherwise; with leaky_always, the prose-only retry leaks too. */
static bool leaky_always;
static long leaky_first, leaky_retries;
static const char *leaky_form = "Here is the section you asked for: %s"; /* the draft's leak around it */

static int leaky_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                      char **out)
{
    int rc = dreaming_fake_call(ud, stage, in, n, opts, out);
    if (rc || strcmp(stage, "synthesis") != 0) return rc;
    for (size_t i = 0; i < n; i++) {
        const char *u = in[i].user;
        if (!strstr(u, "Write the prose of this one section") && !strstr(u, "Write the lead of this article")) continue;
        bool retry = strstr(u, "Answer with the prose itself and nothing else") != NULL;
        if (retry) leaky_retries++;
        else leaky_first++;
        if (retry && !leaky_always) continue;
        struct dbuf b = {0};
        dbuf_printf(&b, leaky_form, out[i]);
        free(out[i]);
        out[i] = dbuf_take(&b);
    }
    return 0;
}

/* One create run over the claude and pi fixtures' entities, with every first section and lead
 * draft leaking as form says (and every retry too, with always); r: its result. */
static void leaky_create(struct ctx *c, const char *form, bool always, struct dream_synth_result *r)
{
    struct dream_backend leaky = {.name = "leaky-first", .call = leaky_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.batch = 3;
    leaky_form = form;
    leaky_always = always;
    leaky_first = leaky_retries = 0;
    assert_int_equal(dream_seam_set_backend(&leaky), 0);
    assert_int_equal(dream_synth_create(c->store, &p, r), 0);
    leaky_form = "Here is the section you asked for: %s";
    assert_true(leaky_first > 5);                  /* every section and the five leads */
    assert_int_equal(leaky_retries, leaky_first); /* each asked again exactly once */
    assert_int_equal((long)r->retried, leaky_first);
}

/* A model that says each section draft twice over: the fixture fake's draft, then the same
 * again. */
static int twice_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                      char **out)
{
    int rc = dreaming_fake_call(ud, stage, in, n, opts, out);
    if (rc || strcmp(stage, "synthesis") != 0) return rc;
    for (size_t i = 0; i < n; i++) {
        if (!strstr(in[i].user, "Write the prose of this one section")) continue;
        struct dbuf b = {0};
        dbuf_printf(&b, "%s %s", out[i], out[i]);
        free(out[i]);
        out[i] = dbuf_take(&b);
    }
    return 0;
}

/* Section drafts that say every sentence twice give exactly the golden articles: once pinned,
 * each second saying cites what the first does and goes. */
static void test_create_drops_what_a_draft_says_twice(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_backend twice = {.name = "twice", .call = twice_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.batch = 3;
    assert_int_equal(dream_seam_set_backend(&twice), 0);
    struct dream_synth_result r;
    assert_int_equal(dream_synth_create(c->store, &p, &r), 0);
    assert_int_equal(r.created, 5);
    assert_golden(c, "create");
    assert_vault_checks(c);
}

/* Spec §6.5 step 7: a leaky draft is asked again once with a prose-only instruction. Drafts that
 * leak the first time and not the second give exactly the golden articles; drafts that leak
 * both times are dropped (nothing written) after one retry each. */
static void test_create_retries_a_leaky_draft_once_prose_only(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_synth_result r;
    leaky_create(c, "Here is the section you asked for: %s", true, &r);
    assert_int_equal(r.created, 0);
    assert_int_equal(r.failed, 5);
    char names[8][256], dir[4200];
    snprintf(dir, sizeof dir, "%s/articles", c->wiki);
    assert_int_equal(list_md(dir, names, 8), 0);

    leaky_create(c, "Here is the section you asked for: %s", false, &r);
    assert_int_equal(r.rejected, 0);
    assert_int_equal(r.created, 5);
    assert_golden(c, "create");
    assert_vault_checks(c);
    assert_dream_check(c);
}

/* A small model can also run on into the prompt's own frame: a transcript's role line ("... over
 * a[user] The person is learning tai chi", seen from a dream-mini run) or a note's header. Such
 * a draft is leaky too: asked again once, and the clean retry gives the golden articles. */
static void frame_leak_case(struct ctx *c, const char *form)
{
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_synth_result r;
    leaky_create(c, form, false, &r);
    assert_int_equal(r.created, 5);
    assert_golden(c, "create");
    assert_dream_check(c);
}

static void test_create_retries_a_draft_that_runs_into_a_role_line(void **state)
{
    frame_leak_case(*state, "%s (with someone who stay over a[user] The person");
}

static void test_create_retries_a_draft_that_runs_into_a_note_header(void **state)
{
    frame_leak_case(*state, "%s\n--- Note (2 of 3) ---");
}

/* the quoting of an edit prompt's current text (a lead written as "**Know D>>> the person's ...") */
static void test_create_retries_a_draft_that_runs_into_a_text_quote(void **state)
{
    frame_leak_case(*state, "%s D>>> the person's");
}

static struct dream_synth_result reconcile(struct ctx *c)
{
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r;
    use_fake();
    int rc = dream_synth_reconcile(c->store, &p, &r);
    if (rc) fprintf(stderr, "reconcile: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

/* Records the newest chunk not yet folded as folded into article's section, so that reconcile
 * takes the article up (it reconciles an article with new folds). */
static void fold_new_chunk(struct ctx *c, const char *article, const char *section)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO chunk_folded (chunk, article, section) SELECT max(id), '%s', '%s' FROM chunks "
             "WHERE id NOT IN (SELECT chunk FROM chunk_folded)",
             article, section);
    assert_int_equal(sqlite3_exec(store_db(c->store), sql, NULL, NULL, NULL), SQLITE_OK);
}

/* One two-message conversation about the cello, dated day (ms). */
static void put_cello(struct ctx *c, const char *id, int64_t day_ms, const char *user, const char *assistant)
{
    char m0[64], m1[64];
    snprintf(m0, sizeof m0, "%s-m0", id);
    snprintf(m1, sizeof m1, "%s-m1", id);
    struct dream_message m[2] = {{"user", m0, day_ms, user}, {"assistant", m1, day_ms + 60000, assistant}};
    struct dream_conversation conv = {.source = "claude", .id = id, .title = id, .created_ms = day_ms, .updated_ms = day_ms + 60000,
                                      .messages = m, .n_messages = 2};
    assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
}

#define JAN_05 1704412800000LL
#define FEB_10 1707523200000LL
#define JUN_20 1718841600000LL

/* Self-healing: morning practice (C1), a lesson (C2), then a note that the person switched to the
 * evening (C3). With C3 the latest, the lead, the infobox and a History line move to the
 * evening, citing both notes; with the dates of C1 and C3 swapped, the morning stays current. */
static char *self_heal(struct ctx *c, bool swapped)
{
    put_cello(c, "cello-morning", swapped ? JUN_20 : JAN_05, "I keep my cello practice in the morning before work.",
              "Mornings suit practice: the hands are fresh.");
    put_cello(c, "cello-lesson", FEB_10, "My cello lesson went well; the teacher liked the scales of my cello practice.", "Good scales make everything easier.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    struct dream_synth_result r = create(c);
    if (r.created != 1) fprintf(stderr, "create: %zu eligible, %zu failed, %zu refused\n", r.eligible, r.failed, r.rejected);
    assert_int_equal(r.created, 1);
    r = reconcile(c); /* a new article: its fields agree with its lead */
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.reconciled, 0);
    put_cello(c, "cello-evening", swapped ? JAN_05 : JUN_20, "An update on cello practice: I switched, and now I practise in the evening after work.",
              "Evenings work if you warm up first.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    r = fold(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.lead_patches, 1);
    r = reconcile(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(reconcile(c).eligible, 0);
    assert_vault_checks(c);
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    return slurp(path);
}

/* CREATE's infobox answer names a key more than once (a small model lists a changed field once
 * for each note): the value of the latest-dated note that holds it stays, wherever the answer
 * put it, and a value no note holds does not count. With the dates swapped, the other value. */
static void infobox_repeat(struct ctx *c, bool swapped)
{
    put_cello(c, "cello-morning", swapped ? JUN_20 : JAN_05, "I keep my cello practice in the morning before work.",
              "Mornings suit practice: the hands are fresh.");
    put_cello(c, "cello-lesson", FEB_10, "My cello lesson went well; the teacher liked the scales of my cello practice.", "Good scales make everything easier.");
    put_cello(c, "cello-evening", swapped ? JAN_05 : JUN_20, "An update on cello practice: I switched, and now I practise in the evening after work.",
              "Evenings work if you warm up first.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    dreaming_fake_infobox_extra = "practice_time: morning\npractice_time: evening\npractice_time: Torontoton\n"
                                  "warm_up: evening\nwarm_up: morning\nteacher_liked: scales\n";
    struct dream_synth_result r = create(c);
    dreaming_fake_infobox_extra = NULL;
    assert_int_equal(r.created, 1);
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    const char *later = swapped ? "morning" : "evening", *earlier = swapped ? "evening" : "morning";
    char want[3][64], not[2][64];
    snprintf(want[0], sizeof want[0], "\npractice_time: %s\n", later);
    snprintf(want[1], sizeof want[1], "\nwarm_up: %s\n", later);
    snprintf(want[2], sizeof want[2], "\nteacher_liked: scales\n");
    snprintf(not[0], sizeof not[0], "practice_time: %s", earlier);
    snprintf(not[1], sizeof not[1], "warm_up: %s", earlier);
    bool ok = strstr(t, want[0]) && strstr(t, want[1]) && strstr(t, want[2]) && !strstr(t, not[0]) && !strstr(t, not[1]) && !strstr(t, "Torontoton");
    if (!ok) fprintf(stderr, "%s", t);
    assert_true(ok);
    assert_null(strstr(strstr(t, "practice_time:") + 1, "practice_time:")); /* one line a key */
    assert_vault_checks(c);
    assert_dream_check(c);
    free(t);
}

static void test_create_infobox_keeps_the_latest_notes_value_of_a_repeated_key(void **state) { infobox_repeat(*state, false); }
static void test_create_infobox_repeated_key_follows_the_dates_not_the_order(void **state) { infobox_repeat(*state, true); }

/* The footnote number citing message msg in text, or 0. */
static int cite_of(const char *text, const char *msg)
{
    char pat[128];
    snprintf(pat, sizeof pat, "#%s]] (", msg); /* the key as a link's text */
    const char *at = strstr(text, pat);
    snprintf(pat, sizeof pat, "#%s` (", msg); /* the plain key */
    if (!at) at = strstr(text, pat);
    while (at && at > text && !(at[0] == '\n' && at[1] == '[')) at--;
    return at ? atoi(at + 3) : 0;
}

static void test_self_healing_moves_the_claim_to_the_later_note(void **state)
{
    struct ctx *c = *state;
    char *t = self_heal(c, false);
    int old = cite_of(t, "cello-morning-m0"), neu = cite_of(t, "cello-evening-m0");
    assert_true(old > 0 && neu > 0 && old != neu);
    assert_non_null(strstr(t, "current_routine: evening"));
    assert_null(strstr(t, "current_routine: morning"));
    assert_non_null(strstr(t, "The person practises in the evening."));
    char line[200];
    snprintf(line, sizeof line, "## History\n\n- Previously morning[^%d]; as of 2024-06-20 evening[^%d].\n", old, neu);
    if (!strstr(t, line)) fprintf(stderr, "want %s in:\n%s", line, t);
    assert_non_null(strstr(t, line));
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: reconcile 1 article(s) (1 history line(s))\n", 51) == 0);
    free(m);
    assert_dream_check(c);
    free(t);
}

static void test_self_healing_with_the_dates_swapped_keeps_the_later_morning(void **state)
{
    struct ctx *c = *state;
    char *t = self_heal(c, true);
    int old = cite_of(t, "cello-evening-m0"), neu = cite_of(t, "cello-morning-m0");
    assert_true(old > 0 && neu > 0 && old != neu); /* both notes cited */
    if (!strstr(t, "current_routine: morning")) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, "current_routine: morning"));
    assert_null(strstr(t, "current_routine: evening"));
    assert_non_null(strstr(t, "The person practises in the morning."));
    char past[120];
    snprintf(past, sizeof past, "Earlier, the person practised in the evening.[^%d]", old);
    assert_non_null(strstr(t, past));
    /* the person's position still changed over time (evening, then morning): History says so,
     * citing both notes, as in the other date order */
    char line[200];
    snprintf(line, sizeof line, "## History\n\n- Previously evening[^%d]; as of 2024-06-20 morning[^%d].\n", old, neu);
    if (!strstr(t, line)) fprintf(stderr, "want %s in:\n%s", line, t);
    assert_non_null(strstr(t, line));
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: reconcile 1 article(s) (1 history line(s))\n", 51) == 0);
    free(m);
    assert_dream_check(c);
    free(t);
}

static void put_article(struct ctx *c, const char *stem, const char *text)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    assert_int_equal(file_write_atomic(path, text, strlen(text)), 0);
}

/* One writing stage with the default parameters over c's wiki; it must succeed. */
static struct dream_synth_result run_stage(struct ctx *c, const char *name,
                                           int (*stage)(dream_store *, const struct dream_synth_params *, struct dream_synth_result *))
{
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r;
    int rc = stage(c->store, &p, &r);
    if (rc) fprintf(stderr, "%s: %s\n", name, dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

static struct dream_synth_result link_run(struct ctx *c)
{
    return run_stage(c, "link", dream_synth_link);
}

/* ... and the person's own See also lines (an annotation, a link outside the wiki, a bare link to
 * a note that is no article yet) stay as they wrote them, first; only dream's bare "- [[stem]]"
 * lines are rebuilt. Before, every line went, and then every bare one. */
static void test_link_wraps_first_mentions_and_rebuilds_see_also(void **state)
{
    struct ctx *c = *state;
    put_article(c, "Sourdough",
                "# Sourdough\n\n**Sourdough** is bread the person bakes; its starter lives next to the Balcony Garden.[^1]\n\n"
                "## Starter\n\nThe starter smells of nail polish when hungry, says the person, who also rides a bicycle.[^1] A second "
                "mention of the balcony garden stays plain, and `bicycle` in code is never linked.\n\n## See also\n\n- [[Cello_Practice]]\n"
                "- [[Cello Practice]] — my other evening habit\n- [A starter guide](https://example.com/starter)\n- [[rye plan.pdf]]\n\n"
                "## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    put_article(c, "Balcony_garden",
                "# Balcony garden\n\n**Balcony garden** is where the person grows tomatoes.[^1]\n\n## References\n\n"
                "[^1]: `conv:6280818b#dr-c3-m0` (2024-03-15, Planning a balcony garden)\n");
    put_article(c, "Bicycle_Maintenance",
                "# Bicycle Maintenance\n\n```info\nkind: thing\naliases: bicycle, bike repair\n```\n\n**Bicycle Maintenance** is the "
                "person's chore before a long ride.[^1]\n\n## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n");
    put_article(c, "Cello_Practice",
                "# Cello Practice\n\n**Cello Practice** takes thirty minutes a day.[^1]\n\n## References\n\n"
                "[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n");
    struct dream_synth_result r = link_run(c);
    assert_int_equal(r.eligible, 4);
    assert_int_equal(r.linked, 1);
    assert_int_equal(r.committed, 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    const char *want =
        "# Sourdough\n\n{{stub}}\n\n**Sourdough** is bread the person bakes; its starter lives next to the [[Balcony_garden|Balcony Garden]].[^1]\n\n"
        "## Starter\n\nThe starter smells of nail polish when hungry, says the person, who also rides a [[Bicycle_Maintenance|bicycle]].[^1] A "
        "second mention of the balcony garden stays plain, and `bicycle` in code is never linked.\n\n## See also\n\n"
        "- [[Cello_Practice|Cello Practice]] — my other evening habit\n- [A starter guide](https://example.com/starter)\n- [[rye plan.pdf]]\n"
        "- [[Balcony_garden]]\n"
        "- [[Bicycle_Maintenance]]\n\n## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new "
        "sourdough starter)\n";
    if (strcmp(t, want) != 0) fprintf(stderr, "--- want ---\n%s--- got ---\n%s", want, t);
    assert_string_equal(t, want);
    free(t);
    assert_vault_checks(c);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: link 1 article(s)\n", 26) == 0);
    free(m);
    r = link_run(c); /* idempotent */
    assert_int_equal(r.linked, 0);
}

/* The person's own text holds mentions a link may not go into: a URL, a Markdown link's text, a
 * tag, math, an HTML attribute, an indented code block, an Obsidian comment (on one line or
 * several), a math block and a table row (whose cell a link's | would split). The link stage put
 * [[...]] into every one of them. Each stays as written; the plain mention after them is linked. */
static void test_link_leaves_urls_tags_math_html_comments_and_tables_alone(void **state)
{
    struct ctx *c = *state;
    const char *own = "## My notes\n\n"
                      "Read https://www.bicycle.example/guide and [the bicycle book](https://example.com/b) first.\n"
                      "Tagged #bicycle, with $bicycle + 1$ and <span title=\"bicycle\">a span</span>.\n\n"
                      "    indented code: bicycle\n\n"
                      "%% remember: bicycle %%\n\n"
                      "%%\na comment over lines: bicycle\n%%\n\n"
                      "$$\nbicycle^2\n$$\n\n"
                      "| day | ride |\n| --- | --- |\n| Mon | bicycle to work |\n\n";
    struct dbuf a = {0};
    dbuf_printf(&a, "# Sourdough\n\n**Sourdough** is bread the person bakes.[^1]\n\n%s"
                    "## Starter\n\nThe person rides a bicycle to the bakery.[^1]\n\n## References\n\n"
                    "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n",
                own);
    put_article(c, "Sourdough", a.data);
    put_article(c, "Bicycle_Maintenance",
                "# Bicycle Maintenance\n\n```info\nkind: thing\naliases: bicycle, bike repair\n```\n\n**Bicycle Maintenance** is the "
                "person's chore before a long ride.[^1]\n\n## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n");
    struct dream_synth_result r = link_run(c);
    assert_int_equal(r.linked, 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    if (!strstr(t, own)) fprintf(stderr, "--- the person's section changed ---\n%s", t);
    assert_non_null(strstr(t, own));
    assert_non_null(strstr(t, "The person rides a [[Bicycle_Maintenance|bicycle]] to the bakery."));
    free(t);
    dbuf_free(&a);
    assert_vault_checks(c);
}

/* Mentions linked in the opposite order to the articles' names: the first run listed them in
 * See also by name, the next by where they stand in the text, and committed the reordering (and,
 * with it, any edit of the person's in that file). A second run changes nothing. */
static void test_link_twice_changes_nothing_the_second_time(void **state)
{
    struct ctx *c = *state;
    put_article(c, "Sourdough",
                "# Sourdough\n\n**Sourdough** is bread the person bakes before a bicycle ride to the balcony garden.[^1]\n\n"
                "## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    put_article(c, "Balcony_garden",
                "# Balcony garden\n\n**Balcony garden** is where the person grows tomatoes.[^1]\n\n## References\n\n"
                "[^1]: `conv:6280818b#dr-c3-m0` (2024-03-15, Planning a balcony garden)\n");
    put_article(c, "Bicycle_Maintenance",
                "# Bicycle Maintenance\n\n```info\nkind: thing\naliases: bicycle\n```\n\n**Bicycle Maintenance** is the "
                "person's chore before a long ride.[^1]\n\n## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n");
    assert_int_equal(link_run(c).linked, 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(strstr(t, "## See also\n\n- [[Bicycle_Maintenance]]\n- [[Balcony_garden]]\n"));
    free(t);
    struct dream_synth_result r = link_run(c);
    assert_int_equal(r.linked, 0);
    assert_int_equal(r.committed, 0);
}

/* See also from shared chunks (spec §6.10 co-occurrence): no article mentions another, but the
 * routing ledger says chunk 1 went to Tea_Blends and Kettle_Descaling, chunks 2 and 3 to
 * Tea_Blends and Garden_Shed, chunk 4 to Rope_Knots alone. Each article lists those it shares a
 * chunk with, most shared first; Rope_Knots shares nothing, is mentioned nowhere, and appears
 * nowhere (and gets no See also of its own). */
static void test_link_lists_articles_that_share_a_chunk(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude"); /* real chunks for the ledger rows to point at */
    assert_true(test_store_scalar(c->store, "SELECT count(*) FROM chunks") >= 4);
    put_article(c, "Tea_Blends",
                "# Tea Blends\n\n**Tea Blends** are what the person mixes on Sundays.[^1]\n\n## Mixing\n\nThe person mixes black leaves with "
                "dried orange peel.[^1]\n\n## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Sunday mixing)\n");
    put_article(c, "Kettle_Descaling",
                "# Kettle Descaling\n\n**Kettle Descaling** is done with citric acid once a month.[^1]\n\n## References\n\n"
                "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Sunday mixing)\n");
    put_article(c, "Garden_Shed",
                "# Garden Shed\n\n**Garden Shed** is where the person dries orange peel.[^1]\n\n## References\n\n"
                "[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Drying peel)\n");
    const char *rope = "# Rope Knots\n\n**Rope Knots** are practised with a short length of cord.[^1]\n\n## References\n\n"
                       "[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Knots for a boat)\n";
    put_article(c, "Rope_Knots", rope);
    char *err = NULL;
    int rc = sqlite3_exec(store_db(c->store),
                          "WITH k(n, id) AS (SELECT row_number() OVER (ORDER BY id), id FROM chunks) "
                          "INSERT INTO chunk_routed (chunk, article) SELECT id, 'Tea_Blends' FROM k WHERE n IN (1, 2, 3) "
                          "UNION ALL SELECT id, 'Kettle_Descaling' FROM k WHERE n = 1 "
                          "UNION ALL SELECT id, 'Garden_Shed' FROM k WHERE n IN (2, 3) "
                          "UNION ALL SELECT id, 'Rope_Knots' FROM k WHERE n = 4",
                          NULL, NULL, &err);
    if (rc) fprintf(stderr, "ledger rows: %s\n", err);
    sqlite3_free(err);
    assert_int_equal(rc, SQLITE_OK);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed"), 7);

    struct dream_synth_result r = link_run(c);
    assert_int_equal(r.eligible, 4);
    assert_int_equal(r.linked, 3);
    assert_int_equal(r.rejected, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Tea_Blends.md", c->wiki);
    char *t = slurp(path);
    if (!strstr(t, "## See also\n\n- [[Garden_Shed]]\n- [[Kettle_Descaling]]\n\n## References")) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, "## See also\n\n- [[Garden_Shed]]\n- [[Kettle_Descaling]]\n\n## References"));
    assert_null(strstr(t, "Rope_Knots"));
    free(t);
    snprintf(path, sizeof path, "%s/articles/Kettle_Descaling.md", c->wiki);
    t = slurp(path);
    if (!strstr(t, "## See also\n\n- [[Tea_Blends]]\n\n## References")) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, "## See also\n\n- [[Tea_Blends]]\n\n## References"));
    assert_null(strstr(t, "Garden_Shed"));
    assert_null(strstr(t, "Rope_Knots"));
    free(t);
    snprintf(path, sizeof path, "%s/articles/Garden_Shed.md", c->wiki);
    t = slurp(path);
    assert_non_null(strstr(t, "## See also\n\n- [[Tea_Blends]]\n\n## References"));
    assert_null(strstr(t, "Kettle_Descaling"));
    assert_null(strstr(t, "Rope_Knots"));
    free(t);
    snprintf(path, sizeof path, "%s/articles/Rope_Knots.md", c->wiki);
    t = slurp(path);
    assert_string_equal(t, rope); /* untouched: no See also of its own */
    free(t);
    assert_vault_checks(c);
    assert_dream_check(c);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: link 3 article(s)\n", 26) == 0);
    free(m);
    r = link_run(c); /* idempotent */
    assert_int_equal(r.linked, 0);

    /* the person takes Kettle_Descaling out of Tea_Blends' See also and commits: it stays out
     * (link put it back on every run); Garden_Shed stays, and a new co-occurrence still comes in */
    snprintf(path, sizeof path, "%s/articles/Tea_Blends.md", c->wiki);
    t = slurp(path);
    char *at = strstr(t, "- [[Kettle_Descaling]]\n");
    assert_non_null(at);
    memmove(at, at + strlen("- [[Kettle_Descaling]]\n"), strlen(at + strlen("- [[Kettle_Descaling]]\n")) + 1);
    assert_int_equal(file_write_atomic(path, t, strlen(t)), 0);
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "cd '%s' && git -c user.name=t -c user.email=t@localhost commit -qam 'not that one'", c->wiki);
    assert_int_equal(system(cmd), 0);
    r = link_run(c);
    assert_int_equal(r.linked, 0);
    char *t2 = slurp(path);
    assert_string_equal(t2, t);
    free(t2);
    free(t);
    assert_int_equal(sqlite3_exec(store_db(c->store),
                                  "INSERT INTO chunk_routed (chunk, article) SELECT id, 'Rope_Knots' FROM chunks ORDER BY id LIMIT 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    r = link_run(c);
    t = slurp(path);
    assert_non_null(strstr(t, "- [[Garden_Shed]]\n"));
    assert_non_null(strstr(t, "- [[Rope_Knots]]\n"));
    assert_null(strstr(t, "Kettle_Descaling"));
    free(t);
}

static struct dream_synth_result wikify(struct ctx *c)
{
    return run_stage(c, "wikify", dream_synth_wikify);
}

static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
    return n;
}

/* Spec §6.11 (b): the fake proposes a changed value for every field written (a [[link]] among
 * them), a new first_noted, the lexicon's other names as aliases and a category. Only what is
 * missing is added: type and the linked teacher keep their values, the aliases are a union
 * (what was written first, no duplicate, never the title), the category goes in, still one
 * infobox. The person's own article is not touched; a second run makes no call. */
static void test_wikify_refresh_adds_new_facts_and_keeps_written_values(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    put_article(c, "Cello_Practice",
                "# Cello Practice\n\n```info\ntype: pastime\nkind: thing\nteacher: [[Maestro_Lee]]\naliases: my cello, Bow Hold\n```\n\n"
                "**Cello Practice** takes thirty minutes a day.[^1] It follows each cello lesson.[^1]\n\n## References\n\n"
                "[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n");
    const char *own = "# Maestro Lee\n\nMy cello teacher, who wants me to play Bach by the summer.\n";
    put_article(c, "Maestro_Lee", own);
    use_fake();
    long calls = dreaming_fake_calls;
    struct dream_synth_result r = wikify(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(dreaming_fake_calls, calls + 1); /* one batched call */
    assert_int_equal(r.wikified, 1);
    assert_int_equal(r.refreshed, 1);
    assert_int_equal(r.rejected, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    /* the person's aliases (of the older infobox form) move to the front matter, the new one after them */
    const char *want = "---\naliases:\n  - my cello\n  - Bow Hold\n  - cello lesson\ntags:\n  - Hobbies\n---\n\n"
                       "# Cello Practice\n\n{{stub}}\n\n```info\ntype: pastime\nkind: thing\n"
                       "first_noted: 2024-02-03\nteacher: [[Maestro_Lee]]\n```\n\n"
                       "**Cello Practice** takes thirty minutes a day.[^1] It follows each cello lesson.[^1]\n\n## References\n\n"
                       "[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n";
    if (strcmp(t, want) != 0) fprintf(stderr, "--- want ---\n%s--- got ---\n%s", want, t);
    assert_string_equal(t, want);
    assert_null(strstr(t, "(revised)"));
    free(t);
    snprintf(path, sizeof path, "%s/articles/Maestro_Lee.md", c->wiki);
    t = slurp(path);
    assert_string_equal(t, own);
    free(t);
    assert_vault_checks(c);
    assert_dream_check(c);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: wikify 1 article(s)\n", 28) == 0);
    free(m);
    calls = dreaming_fake_calls;
    r = wikify(c);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(dreaming_fake_calls, calls);
}

/* The refresh's answer adds a field whose value the body tells as past. */
static int past_field_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                           char **out)
{
    int rc = dreaming_fake_call(ud, stage, in, n, opts, out);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!out[i] || !strstr(in[i].user, "Update the infobox of this article")) continue;
        size_t len = strlen(out[i]);
        char *more = malloc(len + 64);
        assert_non_null(more);
        snprintf(more, len + 64, "%sfrequency: every Saturday morning\n", out[i]);
        free(out[i]);
        out[i] = more;
    }
    return rc;
}

/* A new field whose value the body tells as past never goes in as it is: it takes the later
 * position the sentence says, or, where code cannot take one, the field is left out. */
static void test_wikify_refresh_takes_the_later_position_of_a_past_value(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    static const struct {
        const char *body, *want, *never;
    } cases[] = {
        {"They switched their practice to every weekday evening instead of every Saturday morning.[^1]", "frequency: every weekday evening\n",
         "every Saturday morning\n"},
        {"They no longer practise every Saturday morning.[^1]", NULL, "frequency:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "# Cello Practice\n\n```info\ntype: pastime\nkind: thing\n```\n\n**Cello Practice** takes thirty minutes a day.[^1]\n\n"
                 "## Routine\n\n%s\n\n## References\n\n[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n",
                 cases[i].body);
        put_article(c, "Cello_Practice", t);
        struct dream_backend be = {.name = "past-field", .call = past_field_call};
        assert_int_equal(dream_seam_set_backend(&be), 0);
        struct dream_synth_result r = wikify(c);
        assert_int_equal(r.eligible, 1);
        char path[4300];
        snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
        char *got = slurp(path);
        if ((cases[i].want && !strstr(got, cases[i].want)) || strstr(got, cases[i].never)) fprintf(stderr, "case %zu:\n%s", i, got);
        if (cases[i].want) assert_non_null(strstr(got, cases[i].want));
        assert_null(strstr(got, cases[i].never));
        free(got);
    }
    assert_dream_check(c);
}

/* An article without an infobox gets exactly one, right after the H1 (and the stub and
 * categories lines), before the lead. */
static void test_wikify_refresh_gives_exactly_one_infobox_after_the_h1(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    put_article(c, "Sourdough",
                "# Sourdough\n\n**Sourdough** is the subject of the person's bread baking, from a starter fed on 2024-01-10.[^1] "
                "The starter is a levain.[^1]\n\n"
                "## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    use_fake();
    struct dream_synth_result r = wikify(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.refreshed, 1);
    /* the fake's alias "sour-dough" is no word of the article, its type "subject" only one of the
     * defining sentence, which grounding never drops and so is no ground */
    assert_int_equal(r.unheld, 2);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    const char *want = "---\naliases:\n  - levain\ntags:\n  - Hobbies\n---\n\n"
                       "# Sourdough\n\n{{stub}}\n```info\nfirst_noted: 2024-01-10\n"
                       "```\n\n**Sourdough** is the subject of the person's bread baking, from a starter fed on 2024-01-10.[^1] The "
                       "starter is a levain.[^1]\n\n"
                       "## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n";
    if (strcmp(t, want) != 0) fprintf(stderr, "--- want ---\n%s--- got ---\n%s", want, t);
    assert_string_equal(t, want);
    assert_int_equal(count_of(t, "```info"), 1);
    free(t);
    assert_vault_checks(c);
    assert_dream_check(c);
}

/* Refresh answers no infobox may take: leaky, stray prose or headings, markers, code, broken
 * links, keys that are not snake_case, bad aliases or categories, only a kind, nothing. */
static const char *const refresh_junk[] = {
    "type: tool\nHere is the infobox for the article.",
    "```info\ntype: tool\n```\n# Bicycle Maintenance\n",
    "I'm sorry: I cannot help with that.",
    "type: tool\nstatus: active[^1]",
    "type: tool\nmaker: [[Shimano\n",
    "type: `tool`",
    "Type Of Thing: tool",
    "type: tool\naliases: bike]], wrench",
    "category: [[Category:Tools|x]]",
    "kind: person",
    "",
    "yes",
};
/* A fenced answer with a capitalized key and links, which the parser takes. */
static const char *const refresh_linked[] = {"```info\nTeacher: [[Maestro Lee]]\nchosen_over: [[Violin Lessons|the violin]]\n```\n"};
static const char *const *refresh_script; /* the answer of every editor call */
static size_t refresh_junk_at;

static int refresh_script_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                             char **out)
{
    (void)ud;
    (void)opts;
    if (strcmp(stage, "editor") != 0) return dream_error_set(DREAM_ENOTFOUND, "no stage '%s' here", stage);
    for (size_t i = 0; i < n; i++) out[i] = strdup(refresh_script[refresh_junk_at]);
    return 0;
}

static void test_wikify_refresh_refuses_junk_and_leaves_the_file_byte_identical(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    const char *text = "# Bicycle Maintenance\n\n```info\nkind: thing\n```\n\n**Bicycle Maintenance** is the person's chore before a long "
                       "ride.[^1]\n\n## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n";
    put_article(c, "Bicycle_Maintenance", text);
    struct dream_backend junk = {.name = "refresh-junk", .call = refresh_script_call};
    refresh_script = refresh_junk;
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Bicycle_Maintenance.md", c->wiki);
    for (refresh_junk_at = 0; refresh_junk_at < sizeof refresh_junk / sizeof refresh_junk[0]; refresh_junk_at++) {
        assert_int_equal(sqlite3_exec(store_db(c->store), "DELETE FROM stage_state WHERE stage = 'wikify'", NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(dream_seam_set_backend(&junk), 0);
        struct dream_synth_result r = wikify(c);
        assert_int_equal(r.eligible, 1);
        if (r.rejected != 1) fprintf(stderr, "junk answer %zu was not refused: %s\n", refresh_junk_at, refresh_junk[refresh_junk_at]);
        assert_int_equal(r.rejected, 1);
        assert_int_equal(r.wikified + r.refreshed + r.committed, 0);
        char *t = slurp(path);
        assert_string_equal(t, text);
        free(t);
    }
    assert_dream_check(c);
    /* an article edits refuse (a fence that never closes) is left as it is, and the run goes on */
    const char *unclosed = "# Cello Practice\n\n**Cello Practice** takes thirty minutes a day.[^1]\n\n```\nscales, then Bach\n\n"
                           "## References\n\n[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n";
    put_article(c, "Cello_Practice", unclosed);
    use_fake();
    struct dream_synth_result r = wikify(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.wikified, 0);
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    assert_string_equal(t, unclosed);
    free(t);
}

/* The editor's tightened section with a footnote marker's tail and no head ("on 1] The person")
 * is refused: the section stays as it was (the model had merged a stray "1]" line into prose). */
static int tighten_broken_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                               char **out)
{
    (void)ud;
    (void)opts;
    if (strcmp(stage, "editor") != 0) return dream_error_set(DREAM_ENOTFOUND, "no stage '%s' here", stage);
    for (size_t i = 0; i < n; i++)
        out[i] = strdup(strstr(in[i].user, "Current text:") ? "The person oils the chain on 1] The person rides before a long ride.[^1]" : "");
    return 0;
}

static void test_wikify_refuses_a_tightened_section_with_a_broken_marker(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    const char *text = "# Bicycle Maintenance\n\n**Bicycle Maintenance** is the person's chore before a long ride.[^1]\n\n## Care\n\n"
                       "The person oils the chain and checks the tyres before a long ride.[^1]\n\n## References\n\n"
                       "[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n";
    put_article(c, "Bicycle_Maintenance", text);
    struct dream_backend broken = {.name = "tighten-broken", .call = tighten_broken_call};
    assert_int_equal(dream_seam_set_backend(&broken), 0);
    struct dream_synth_result r = wikify(c);
    assert_int_equal(r.eligible, 1);
    assert_int_equal(r.wikified + r.committed, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Bicycle_Maintenance.md", c->wiki);
    char *t = slurp(path);
    assert_string_equal(t, text);
    free(t);
    use_fake();
}

/* A new field's [[link]] stays when it names an article and is reduced to its text when it names
 * none (dream check allows no redlink); a fenced answer is accepted, its keys lowercased. */
static void test_wikify_refresh_keeps_links_to_articles_only(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    put_article(c, "Maestro_Lee", "# Maestro Lee\n\nMy cello teacher.\n");
    put_article(c, "Cello_Practice",
                "# Cello Practice\n\n**Cello Practice** takes thirty minutes a day.[^1] It is chosen over the violin.[^1]\n\n## References\n\n"
                "[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n");
    refresh_script = refresh_linked;
    refresh_junk_at = 0;
    struct dream_backend scripted = {.name = "refresh-scripted", .call = refresh_script_call};
    assert_int_equal(dream_seam_set_backend(&scripted), 0);
    struct dream_synth_result r = wikify(c);
    assert_int_equal(r.refreshed, 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    if (!strstr(t, "```info\nchosen_over: the violin\nteacher: [[Maestro_Lee|Maestro Lee]]\n```\n")) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, "```info\nchosen_over: the violin\nteacher: [[Maestro_Lee|Maestro Lee]]\n```\n"));
    free(t);
    assert_vault_checks(c);
    assert_dream_check(c);
}

/* The tiny model of the tiny_models fixture: its vocabulary spells the texts gbnf_match asks about. */
static void tiny_model_path(char *out, size_t cap)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    assert_non_null(b);
    snprintf(out, cap, "%s/models/tiny-gemma4.gguf", b);
}

/* The refresh prompt of every article of the golden wikify vault (the fixture's own articles),
 * malloc'd, into prompts[0..*n). */
static void golden_refresh_prompts(char **prompts, size_t cap, size_t *n)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/wikify", golden);
    static char names[64][256];
    size_t k = list_md(dir, names, 64);
    *n = 0;
    for (size_t i = 0; i < k && *n < cap; i++) {
        char path[4600], stem[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(stem, sizeof stem, "%.*s", (int)(strlen(names[i]) - 3), names[i]);
        dream_article *a = NULL;
        assert_int_equal(dream_article_read_file(path, &a), 0);
        assert_non_null(prompts[(*n)++] = synth_refresh_prompt(seeds_wiki, stem, a));
        dream_article_free(a);
    }
    assert_true(*n >= 3);
}

/* The refresh grammar takes every fixture answer the parser takes and none it refuses: the
 * scripted fake's answer to every golden article's refresh prompt (kept fields with new values,
 * [[links]], dates, aliases, a category), the fenced answer with a capitalized key, and the
 * junk. So decoding under it loses no answer the stage would have used. */
static void test_refresh_grammar_takes_what_the_parser_takes_of_the_fixtures(void **state)
{
    (void)state;
    char model[4096], why[256];
    tiny_model_path(model, sizeof model);
    char *g = dream_grammar_infobox_refresh();
    assert_non_null(g);
    char *prompts[16];
    size_t n;
    golden_refresh_prompts(prompts, 16, &n);
    size_t taken = 0;
    for (size_t i = 0; i < n; i++) {
        struct dream_local_input in = {.user = prompts[i]};
        char *answer = NULL;
        assert_int_equal(dreaming_fake_call(NULL, "editor", &in, 1, NULL, &answer), 0);
        struct synth_refresh r;
        assert_true(synth_parse_refresh(answer, &r));
        synth_refresh_free(&r);
        if (!gbnf_match(model, g, answer, why, sizeof why)) fail_msg("the grammar refuses the fake's answer (%s):\n%s", why, answer);
        taken++;
        free(answer);
        free(prompts[i]);
    }
    struct synth_refresh r;
    assert_true(synth_parse_refresh(refresh_linked[0], &r));
    synth_refresh_free(&r);
    if (!gbnf_match(model, g, refresh_linked[0], why, sizeof why)) fail_msg("the grammar refuses the fenced answer (%s)", why);
    for (size_t i = 0; i < sizeof refresh_junk / sizeof refresh_junk[0]; i++) {
        assert_false(synth_parse_refresh(refresh_junk[i], &r));
        if (gbnf_match(model, g, refresh_junk[i], why, sizeof why)) fail_msg("the grammar takes junk answer %zu: %s", i, refresh_junk[i]);
    }
    /* the edges: values and names the parser skips as saying nothing (after cutting what it
     * cuts from their ends), the kind, and a key of the lines of their own */
    static const char *const skipped[] = {"type: unknown", "type: N/A \"", "kind: thing", "aliases: none", "category: Unclear",
                                          "type: none ", "aliases: x, - ", "alias: x"};
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (gbnf_match(model, g, skipped[i], why, sizeof why)) fail_msg("the grammar takes \"%s\", which says nothing or is no field", skipped[i]);
    static const char *const kept[] = {"type: nonesuch", "type: n/a b", "kinds: two", "aliases: bow hold , cello lesson", "type: -5 °C",
                                       "named_after: [[Ada Lovelace]] (1815)", "type: Ελληνικά", "category: Hobbies\n"};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        assert_true(synth_parse_refresh(kept[i], &r));
        synth_refresh_free(&r);
        if (!gbnf_match(model, g, kept[i], why, sizeof why)) fail_msg("the grammar refuses \"%s\" (%s)", kept[i], why);
    }
    printf("the refresh grammar takes the fake's %zu answers and the fenced one, and none of %zu junk answers\n", taken,
           sizeof refresh_junk / sizeof refresh_junk[0]);
    free(g);
}

/* The tiny random-weight model under the refresh grammar: the refresh parser takes every answer
 * (before the grammar, noise was refused), and greedy decoding stays exact under it: the same
 * answers one call at a time and batched through the scheduler. */
static void test_refresh_grammar_noise_answers_are_taken_serial_and_batched(void **state)
{
    (void)state;
    char *g = dream_grammar_infobox_refresh();
    assert_non_null(g);
    char *prompts[16];
    size_t n;
    golden_refresh_prompts(prompts, 16, &n);
    struct dream_local_input in[16];
    for (size_t i = 0; i < n; i++) in[i] = (struct dream_local_input){.user = prompts[i], .grammar = g};
    struct dream_call_opts o = dream_call_default_opts();
    o.max_tokens = 6000; /* the grammar's longest answer, so no answer is cut by the budget */
    char *serial[16], *batched[16];
    test_seam_use_tiny_gemma(4, 12288);
    assert_int_equal(dream_seam_set_backend(NULL), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(dream_call_local("editor", &in[i], &o, &serial[i]), 0);
    assert_int_equal(dream_call_local_batch("editor", in, n, &o, batched), 0);
    assert_true(dream_seam_batch_stats().steps > 0);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(serial[i], batched[i]);
        struct synth_refresh r;
        if (!synth_parse_refresh(serial[i], &r)) fail_msg("the parser refuses noise answer %zu:\n%s", i, serial[i]);
        printf("noise refresh answer %zu: %zu field(s), %zu alias(es), %zu categor(ies): \"%.60s\"\n", i, r.n, r.n_alias, r.n_cat, serial[i]);
        synth_refresh_free(&r);
        free(serial[i]);
        free(batched[i]);
    }
    /* the same noise in free text: the parser refuses it */
    size_t taken = 0;
    o.max_tokens = 200;
    for (size_t i = 0; i < n; i++) in[i].grammar = NULL;
    assert_int_equal(dream_call_local_batch("editor", in, n, &o, batched), 0);
    for (size_t i = 0; i < n; i++) {
        struct synth_refresh r;
        if (synth_parse_refresh(batched[i], &r)) taken++, synth_refresh_free(&r);
        free(batched[i]);
        free(prompts[i]);
    }
    printf("refresh answers of the random model the parser takes: %zu of %zu under the grammar, %zu of %zu without\n", n, n, taken, n);
    assert_int_equal(taken, 0);
    dream_seam_shutdown();
    free(g);
}

/* CREATE's infobox answer proposes [[links]] (dream check allows no redlink). A link stays when
 * its article exists when the new article is written: in the vault before the run
 * (Maestro_Lee, the person's own) or written earlier in this run (Sourdough, the oldest
 * entity, is written first); it becomes the text it shows when it names no article (Violin
 * Lessons) or one this run writes later (Home_Solar_Panels, the newest), since that one may
 * yet fail to be written and an infobox value is never revisited. That text is then a value like
 * any other: it stays only where the article's notes hold its words ("solar" only in Home Solar
 * Panels'; "Violin Lessons" in none), as the fake's type "pastime" stays in none. The vault
 * passes dream check. */
static void test_create_infobox_links_only_to_articles_that_exist(void **state)
{
    struct ctx *c = *state;
    const char *own = "# Maestro Lee\n\nMy cello teacher.\n";
    put_article(c, "Maestro_Lee", own);
    ingest(c, "claude");
    ingest(c, "pi");
    dreaming_fake_infobox_extra = "teacher: [[Maestro Lee]]\nchosen_over: [[Violin Lessons|the one]]\nneighbour: [[Violin Lessons]]\n"
                                  "paired_with: [[Sourdough]]\nlater: [[Home Solar Panels|solar]]\n";
    struct dream_synth_result r = create(c);
    dreaming_fake_infobox_extra = NULL;
    assert_int_equal(r.created, 5);
    assert_int_equal(r.unheld, 5 + 5 + 4); /* type: pastime and neighbour everywhere, later but in one */
    static const char *const stems[] = {"Sourdough", "Cello_Practice", "Balcony_garden", "Bicycle_Maintenance", "Home_Solar_Panels"};
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stems[i]);
        char *t = slurp(path);
        assert_non_null(t);
        const char *box = strstr(t, "```info\n"), *end = box ? strstr(box + 8, "```\n") : NULL;
        if (!box || !end) fprintf(stderr, "%s", t);
        assert_true(box && end);
        char info[2048];
        snprintf(info, sizeof info, "%.*s", (int)(end - box), box);
        bool solar = !strcmp(stems[i], "Home_Solar_Panels");
        bool ok = strstr(info, "\nteacher: [[Maestro_Lee|Maestro Lee]]\n") && strstr(info, "\nchosen_over: the one\n") &&
                  !strstr(info, "neighbour") && !strstr(info, "type:") && !strstr(info, "Violin") &&
                  (solar ? strstr(info, "\nlater: solar\n") != NULL : !strstr(info, "later")) &&
                  strstr(info, i == 0 ? "\npaired_with: Sourdough\n" : "\npaired_with: [[Sourdough]]\n") && !strstr(info, "[[Home");
        if (!ok) fprintf(stderr, "--- %s ---\n%s", stems[i], t);
        assert_true(ok);
        free(t);
    }
    assert_vault_checks(c);
    assert_dream_check(c);
}

/* An infobox value one note holds stays; one whose words only the notes together hold goes:
 * "levain flat" takes "levain" from the 2024-09-14 note and "flat" from the 2024-04-20 one, the
 * shape of a small model's "birthday: November 17" from "July 17" and a later "November 12". */
static void test_create_infobox_value_is_held_by_one_note(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    dreaming_fake_infobox_extra = "started: five days ago\nfed: levain flat\n";
    struct dream_synth_result r = create(c);
    dreaming_fake_infobox_extra = NULL;
    assert_int_equal(r.created, 5);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(t);
    const char *box = strstr(t, "```info\n"), *end = box ? strstr(box + 8, "```\n") : NULL;
    assert_true(box && end);
    bool ok = strstr(box, "\nstarted: five days ago\n") && strstr(box, "\nstarted: five days ago\n") < end &&
              (!strstr(box, "fed:") || strstr(box, "fed:") > end);
    if (!ok) fprintf(stderr, "%s", t);
    assert_true(ok);
    free(t);
    assert_dream_check(c);
}

/* ---- links a model answer adds ---------------------------------------------------------- */

/* What every prose answer of the fake ends with below: two links to no article and one to the
 * person's own article Maestro_Lee. dream check allows no link to a missing article, so the
 * first two must be written as the text they show and the third kept (normalize spells it
 * [[Maestro_Lee|Maestro Lee]]). */
static const char model_links[] = "See [[No Such Article|shown text]], [[No Such Thing]] and [[Maestro Lee]].";
static const char model_links_written[] = "See shown text, No Such Thing and [[Maestro_Lee|Maestro Lee]].";

/* The article stem's text (malloc'd); it holds the model's links as written (at least `least`
 * times) and no link to the missing articles. */
static char *assert_model_links(struct ctx *c, const char *stem, size_t least)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    char *t = slurp(path);
    assert_non_null(t);
    bool ok = count_of(t, model_links_written) >= least && !strstr(t, "[[No Such") && !strstr(t, "[[No_Such");
    if (!ok) fprintf(stderr, "--- %s (want %zu x '%s') ---\n%s", stem, least, model_links_written, t);
    assert_true(ok);
    return t;
}

/* The person's hand-written link to an article that does not exist, in a section of their own. */
#define HAND_LINK "[[My Old Teacher]]"
static const char hand_section[] = "## My Own Notes\n\nI play in the evening, after work, as " HAND_LINK " taught me long ago.\n\n";

/* Inserts section (a heading and its body) into the article stem just before ## References. */
static void hand_insert(struct ctx *c, const char *stem, const char *section)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    char *t = slurp(path);
    assert_non_null(t);
    char *at = strstr(t, "## References");
    assert_non_null(at);
    struct dbuf b = {0};
    dbuf_printf(&b, "%.*s%s%s", (int)(at - t), t, section, at);
    assert_int_equal(file_write_atomic(path, b.data, b.len), 0);
    dbuf_free(&b);
    free(t);
}

struct hand_problems {
    size_t hand, other;
};

static void hand_problem(void *ud, int line, const char *message)
{
    struct hand_problems *h = ud;
    if (strstr(message, HAND_LINK)) {
        h->hand++;
    } else {
        fprintf(stderr, "  line %d: %s\n", line, message);
        h->other++;
    }
}

/* The person's hand-written link in stem is still there, untouched, and is the only thing dream
 * check's rules find in the vault; once the person fixes it, `dream check` passes. */
static void assert_only_the_hand_link_is_missing(struct ctx *c, const char *stem)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/articles", c->wiki);
    static char names[64][256];
    size_t n = list_md(dir, names, 64);
    char *stems[64];
    for (size_t i = 0; i < n; i++) stems[i] = strndup(names[i], strlen(names[i]) - 3);
    struct hand_problems h = {0};
    for (size_t i = 0; i < n; i++) {
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        dream_article *a;
        assert_int_equal(dream_article_read_file(path, &a), 0);
        struct dream_article_check_params p = {.stem = stems[i], .stems = (const char *const *)stems, .n_stems = n};
        size_t before = h.hand;
        dream_article_check(a, &p, hand_problem, &h);
        if (h.hand > before) assert_string_equal(stems[i], stem);
        dream_article_free(a);
    }
    for (size_t i = 0; i < n; i++) free(stems[i]);
    assert_int_equal(h.hand, 1);
    assert_int_equal(h.other, 0);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    char *t = slurp(path);
    char *at = strstr(t, HAND_LINK);
    assert_non_null(at);
    memmove(at, at + 2, strlen(at + 2) + 1);               /* the person writes the name plain */
    at = strstr(at, "]]");
    memmove(at, at + 2, strlen(at + 2) + 1);
    assert_int_equal(file_write_atomic(path, t, strlen(t)), 0);
    free(t);
    assert_dream_check(c);
}

/* CREATE: every section draft and the lead end with the model's links. Those to no article are
 * written as their text, the one to the person's article stays; so does one to an article of
 * this run written earlier (Sourdough, the oldest), while one to an article this run writes
 * later (Home_Solar_Panels, the newest: it may yet fail) becomes its text, except in that
 * article itself, which exists once written. The vault passes dream check. */
static void test_create_writes_model_links_to_no_article_as_text(void **state)
{
    struct ctx *c = *state;
    put_article(c, "Maestro_Lee", "# Maestro Lee\n\nMy cello teacher.\n");
    ingest(c, "claude");
    ingest(c, "pi");
    dreaming_fake_prose_extra = "See [[No Such Article|shown text]], [[No Such Thing]] and [[Maestro Lee]]. Also [[Sourdough|bread]] and "
                                "[[Home Solar Panels|solar]].";
    struct dream_synth_result r = create(c);
    dreaming_fake_prose_extra = NULL;
    assert_int_equal(r.created, 5);
    static const char *const stems[] = {"Sourdough", "Cello_Practice", "Balcony_garden", "Bicycle_Maintenance", "Home_Solar_Panels"};
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
        char *t = assert_model_links(c, stems[i], 2); /* the lead and at least one section */
        bool ok = strstr(t, "Also [[Sourdough|bread]] and ") &&
                  strstr(t, i == 4 ? "and [[Home_Solar_Panels|solar]]." : "and solar.") && (i == 4 || !strstr(t, "[[Home"));
        if (!ok) fprintf(stderr, "--- %s ---\n%s", stems[i], t);
        assert_true(ok);
        free(t);
    }
    assert_vault_checks(c);
    assert_dream_check(c);
}

/* FOLD: the patches of sections (the person's own among them), a new section and a lead patch
 * (a note saying the practice moved to the evening) all end with the model's links: written as
 * text where they name no article; the person's own link to a missing article is left as it is. */
static void test_fold_writes_model_links_to_no_article_as_text(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    put_article(c, "Maestro_Lee", "# Maestro Lee\n\nMy cello teacher.\n");
    hand_insert(c, "Cello_Practice", hand_section);
    ingest(c, "openai");
    put_cello(c, "cello-june", JUN_20, "An update on cello practice: I switched, and now I practise in the evening after work.",
              "Evenings work if you warm up first.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    dreaming_fake_prose_extra = model_links;
    struct dream_synth_result r = fold(c);
    dreaming_fake_prose_extra = NULL;
    fprintf(stderr, "fold: %zu eligible, %zu patched, %zu new sections, %zu leads, %zu refused\n", r.eligible, r.patched, r.new_sections,
            r.lead_patches, r.rejected);
    assert_true(r.patched >= 1);
    assert_true(r.new_sections >= 1);
    assert_int_equal(r.lead_patches, 1);
    assert_int_equal(r.rejected, 0);
    free(assert_model_links(c, "Balcony_garden", 1));
    free(assert_model_links(c, "Bicycle_Maintenance", 1));
    char *t = assert_model_links(c, "Cello_Practice", 2);
    assert_non_null(strstr(t, "## My Own Notes\n\nI play in the evening, after work, as " HAND_LINK " taught me long ago."));
    dream_article *a;
    assert_int_equal(dream_article_parse(t, strlen(t), &a), 0);
    if (!strstr(dream_article_lead(a), model_links_written)) fprintf(stderr, "lead: %s\n", dream_article_lead(a));
    assert_non_null(strstr(dream_article_lead(a), model_links_written)); /* the lead patch */
    dream_article_free(a);
    free(t);
    assert_only_the_hand_link_is_missing(c, "Cello_Practice");
}

/* RECONCILE: the person's own section states the morning as current, with a link of theirs to a
 * missing article; after the note that practice moved to the evening, reconcile has the model
 * rewrite it, and the rewrite ends with the model's links. */
static void test_reconcile_writes_model_links_to_no_article_as_text(void **state)
{
    struct ctx *c = *state;
    put_cello(c, "cello-morning", JAN_05, "I keep my cello practice in the morning before work.", "Mornings suit practice: the hands are fresh.");
    put_cello(c, "cello-lesson", FEB_10, "My cello lesson went well; the teacher liked the scales of my cello practice.", "Good scales make everything easier.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    assert_int_equal(create(c).created, 1);
    assert_int_equal(reconcile(c).reconciled, 0);
    put_article(c, "Maestro_Lee", "# Maestro Lee\n\nMy cello teacher.\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    const char *m = strstr(t, "practises in the morning.[^");
    assert_non_null(m);
    char routine[256];
    snprintf(routine, sizeof routine, "## Routine\n\nThe slot is morning, as " HAND_LINK " advised.[^%d]\n\n", atoi(m + 27));
    free(t);
    hand_insert(c, "Cello_Practice", routine);
    put_cello(c, "cello-evening", JUN_20, "An update on cello practice: I switched, and now I practise in the evening after work.",
              "Evenings work if you warm up first.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    assert_int_equal(fold(c).lead_patches, 1);
    dreaming_fake_prose_extra = model_links;
    struct dream_synth_result r = reconcile(c);
    dreaming_fake_prose_extra = NULL;
    assert_int_equal(r.reconciled, 1);
    t = assert_model_links(c, "Cello_Practice", 1);
    assert_non_null(strstr(t, "current_routine: evening"));
    const char *rewritten = strstr(t, "## Routine\n\nThe slot is morning no longer, evening now, as " HAND_LINK " advised.[^");
    if (!rewritten) fprintf(stderr, "%s", t);
    assert_non_null(rewritten);
    assert_non_null(strstr(rewritten, model_links_written));
    free(t);
    assert_only_the_hand_link_is_missing(c, "Cello_Practice");
}

/* WIKIFY: every tightened section ends with the model's links, the person's own section (with
 * their link to a missing article) among them. */
static void test_wikify_writes_model_links_to_no_article_as_text(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    put_article(c, "Maestro_Lee", "# Maestro Lee\n\nMy cello teacher.\n");
    hand_insert(c, "Cello_Practice", hand_section);
    dreaming_fake_prose_extra = model_links;
    struct dream_synth_result r = wikify(c);
    dreaming_fake_prose_extra = NULL;
    assert_int_equal(r.eligible, 5);
    assert_int_equal(r.wikified, 5);
    static const char *const stems[] = {"Sourdough", "Cello_Practice", "Balcony_garden", "Bicycle_Maintenance", "Home_Solar_Panels"};
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) free(assert_model_links(c, stems[i], 1));
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    /* the person's own section, which cites nothing, is theirs: wikify leaves it as they wrote
     * it (before, it was tightened too, and a real model's rewording lost what they wrote) */
    const char *own = strstr(t, hand_section);
    if (!own) fprintf(stderr, "%s", t);
    assert_non_null(own);
    free(t);
    assert_only_the_hand_link_is_missing(c, "Cello_Practice");
}

/* A section of the person's that holds "[^" only in code (a regex `[^a-z0-9]`, a fenced block
 * showing a footnote) cites nothing: wikify sent it to the model as one of dream's (it looked for
 * the two characters anywhere), and a rewording the gate let through would have replaced it. */
static void test_wikify_leaves_a_section_with_footnote_text_only_in_code(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    static const char own[] = "## Regex Notes\n\nI match anything but letters and digits with `[^a-z0-9]+` in my own scripts, every day.\n\n"
                              "```md\nA claim.[^1]\n\n[^1]: where it came from\n```\n\n";
    hand_insert(c, "Cello_Practice", own);
    dreaming_fake_prose_extra = model_links;
    wikify(c);
    dreaming_fake_prose_extra = NULL;
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    if (!strstr(t, own)) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, own));
    free(t);
}

/* A tightened section may not cite what the section did not: the model's draft with a footnote
 * marker of its own ("[^7]", on a claim nobody made) is refused and the section stays as it was
 * (before, only the old markers were checked, and a real model put a claim the person wrote on
 * an unrelated message). */
static void test_wikify_refuses_a_tightening_that_adds_a_footnote(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    dreaming_fake_prose_extra = "It also cures rust.[^7]";
    struct dream_synth_result r = wikify(c);
    dreaming_fake_prose_extra = NULL;
    assert_true(r.rejected >= 5);
    static const char *const stems[] = {"Sourdough", "Cello_Practice", "Balcony_garden", "Bicycle_Maintenance", "Home_Solar_Panels"};
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stems[i]);
        char *t = slurp(path);
        assert_non_null(t);
        assert_null(strstr(t, "cures rust"));
        free(t);
    }
}

/* ---- an article no edit can be placed in ------------------------------------------------ */

/* A person's hand edit left a code fence open on line 13 (it hides the References heading and
 * anything an edit would add after it). The lead states the morning while the infobox says
 * evening (reconcile would correct it), mentions Sourdough (link would wrap it), a body section
 * says "the person wrote:" (wikify would tighten it), and the cello chunks are unseen (fold
 * would patch it): every stage would edit it, and every edit of such an article is refused. */
static const char unclosed_cello[] =
    "# Cello Practice\n\n```info\ncurrent_routine: evening\n```\n\n**Cello Practice** happens in the morning.[^1] Its notes also "
    "mention Sourdough.\n\n## Routine\n\nOn 2024-02-03 the person wrote: \"I practise scales first, then Bach\".[^1]\n\n```\nscales, "
    "then Bach\n\n## References\n\n[^1]: `conv:53e2d70f#dr-c2-m0` (2024-02-03, Thirty minutes of cello practice)\n";
static const char plain_sourdough[] =
    "# Sourdough\n\n```info\ncurrent_routine: evening\n```\n\n**Sourdough** is baked in the morning, says the person who also "
    "practises Cello Practice.[^1]\n\n## Starter\n\nOn 2024-01-10 the person wrote: \"I feed the starter flour and water every "
    "morning\".[^1]\n\n## References\n\n[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n";

static char stderr_file[4400];
static int stderr_saved = -1;

/* Sends stderr to a file under c->root until stderr_text() (the warnings a stage logs). */
static void stderr_capture(struct ctx *c)
{
    fflush(stderr);
    snprintf(stderr_file, sizeof stderr_file, "%s/stderr.txt", c->root);
    int fd = open(stderr_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    stderr_saved = dup(2);
    assert_true(stderr_saved >= 0);
    assert_true(dup2(fd, 2) >= 0);
    close(fd);
}

/* What stderr got since stderr_capture (also passed on to the real stderr); malloc'd. */
static char *stderr_text(void)
{
    fflush(stderr);
    dup2(stderr_saved, 2);
    close(stderr_saved);
    stderr_saved = -1;
    char *t = slurp(stderr_file);
    assert_non_null(t);
    fputs(t, stderr);
    return t;
}

/* The corpus (the cello and sourdough entities routed to articles), the odd Cello_Practice and
 * a plain Sourdough; both with a folded chunk so reconcile takes them up. */
static void put_unclosed_and_plain(struct ctx *c)
{
    ingest(c, "claude");
    ingest(c, "pi");
    put_article(c, "Cello_Practice", unclosed_cello);
    put_article(c, "Sourdough", plain_sourdough);
    assert_int_equal(sqlite3_exec(store_db(c->store),
                                  "INSERT INTO chunk_folded (chunk, article, section) SELECT min(id), 'Cello_Practice', '__lead__' FROM chunks "
                                  "UNION ALL SELECT min(id), 'Sourdough', '__lead__' FROM chunks",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
}

/* The stage ran to the end: the odd article is byte-identical, counted skipped once, and the
 * warning names its file and the fence's line and says what to do; Sourdough was written. */
static void assert_skipped_unclosed(struct ctx *c, const char *stage, const struct dream_synth_result *r, const char *log)
{
    char path[4300], want[4400];
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    char *t = slurp(path);
    assert_string_equal(t, unclosed_cello);
    free(t);
    assert_int_equal(r->skipped, 1);
    snprintf(want, sizeof want, "%s: skipped %s:13: ", stage, path);
    if (!strstr(log, want)) fprintf(stderr, "want \"%s\" in the log\n", want);
    assert_non_null(strstr(log, want));
    assert_non_null(strstr(log, "never closes"));
    assert_non_null(strstr(log, "close the fence"));
    assert_int_equal(count_of(log, "Cello_Practice.md"), 1); /* one warning, not one per chunk or edit */
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    t = slurp(path);
    if (!strcmp(t, plain_sourdough)) fprintf(stderr, "%s did not write Sourdough\n", stage);
    assert_string_not_equal(t, plain_sourdough);
    free(t);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);
    assert_int_equal(git_head_has(c, "articles/Cello_Practice.md"), 0);
}

/* Runs one stage with stderr captured; it must return 0. */
static struct dream_synth_result run_captured(struct ctx *c, const char *name,
                                              int (*stage)(dream_store *, const struct dream_synth_params *, struct dream_synth_result *),
                                              char **log)
{
    use_fake();
    stderr_capture(c);
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r = {0};
    int rc = stage(c->store, &p, &r);
    *log = stderr_text();
    if (rc) fprintf(stderr, "%s: %s\n", name, dream_error_last());
    assert_int_equal(rc, 0);
    return r;
}

static void test_wikify_skips_an_article_with_an_unclosed_fence(void **state)
{
    struct ctx *c = *state;
    put_unclosed_and_plain(c);
    char *log;
    struct dream_synth_result r = run_captured(c, "wikify", dream_synth_wikify, &log);
    assert_int_equal(r.eligible, 2);
    assert_int_equal(r.wikified, 1);
    assert_skipped_unclosed(c, "wikify", &r, log);
    free(log);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(strstr(t, "they wrote:"));
    free(t);
    /* once the person closes the fence, the next run takes the article up */
    const char *fixed_at = strstr(unclosed_cello, "then Bach\n\n## References");
    assert_non_null(fixed_at);
    char fixed[2048];
    snprintf(fixed, sizeof fixed, "%.*sthen Bach\n```\n\n%s", (int)(fixed_at - unclosed_cello), unclosed_cello, fixed_at + strlen("then Bach\n\n"));
    put_article(c, "Cello_Practice", fixed);
    r = run_captured(c, "wikify", dream_synth_wikify, &log);
    free(log);
    assert_int_equal(r.skipped, 0);
    assert_int_equal(r.wikified, 1);
    snprintf(path, sizeof path, "%s/articles/Cello_Practice.md", c->wiki);
    t = slurp(path);
    assert_non_null(strstr(t, "they wrote:"));
    free(t);
}

static void test_fold_skips_an_article_with_an_unclosed_fence(void **state)
{
    struct ctx *c = *state;
    put_unclosed_and_plain(c);
    char *log;
    struct dream_synth_result r = run_captured(c, "fold", dream_synth_fold, &log);
    assert_true(r.patched + r.new_sections + r.lead_patches > 0);
    assert_skipped_unclosed(c, "fold", &r, log);
    free(log);
    /* the cello chunks stay unseen: the next run warns again, until the fence is closed */
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunk_routed WHERE article = 'Cello_Practice'"), 0);
    r = run_captured(c, "fold", dream_synth_fold, &log);
    assert_int_equal(r.skipped, 1);
    free(log);
}

static void test_reconcile_skips_an_article_with_an_unclosed_fence(void **state)
{
    struct ctx *c = *state;
    put_unclosed_and_plain(c);
    char *log;
    struct dream_synth_result r = run_captured(c, "reconcile", dream_synth_reconcile, &log);
    assert_int_equal(r.reconciled, 1);
    assert_skipped_unclosed(c, "reconcile", &r, log);
    free(log);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(strstr(t, "current_routine: morning"));
    free(t);
}

static void test_link_skips_an_article_with_an_unclosed_fence(void **state)
{
    struct ctx *c = *state;
    put_unclosed_and_plain(c);
    char *log;
    struct dream_synth_result r = run_captured(c, "link", dream_synth_link, &log);
    assert_int_equal(r.linked, 1);
    assert_skipped_unclosed(c, "link", &r, log);
    free(log);
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *t = slurp(path);
    assert_non_null(strstr(t, "[[Cello_Practice|Cello Practice]]"));
    free(t);
}

/* `dream check` (the binary) over the wiki exits 0. */
static void assert_dream_check(struct ctx *c)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    assert_non_null(b);
    char cmd[9000];
    /* the store is in memory: a home of its own, so that no default store is checked */
    snprintf(cmd, sizeof cmd, "DREAM_HOME='%s/home' '%s/bin/dream' check --wiki '%s' --quiet", c->root, b, c->wiki);
    int st = system(cmd);
    if (st != 0) fprintf(stderr, "dream check failed on %s\n", c->wiki);
    assert_int_equal(st, 0);
}

static const char *const all_stems[] = {"Balcony_garden", "Bicycle_Maintenance", "Cello_Practice", "Home_Solar_Panels", "Sourdough"};

static struct dream_synth_result sources_run(struct ctx *c) { return run_stage(c, "sources", dream_synth_sources); }
static struct dream_synth_result migrate_run(struct ctx *c) { return run_stage(c, "migrate", dream_synth_migrate); }

/* The text of the article at stem. */
static char *article_text(struct ctx *c, const char *stem)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    char *t = slurp(path);
    assert_non_null(t);
    return t;
}

/* HEAD's commit id, as text. */
static void git_head_id(struct ctx *c, char out[GIT_OID_HEXSZ + 1])
{
    git_libgit2_init();
    git_repository *repo;
    git_oid id;
    assert_int_equal(git_repository_open(&repo, c->wiki), 0);
    assert_int_equal(git_reference_name_to_id(&id, repo, "HEAD"), 0);
    git_oid_tostr(out, GIT_OID_HEXSZ + 1, &id);
    git_repository_free(repo);
    git_libgit2_shutdown();
}

/* The *.md files under wiki/Sources. */
static size_t count_notes(struct ctx *c)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/Sources", c->wiki);
    static char names[64][256];
    return list_md(dir, names, 64);
}

/* A vault of the older format (a categories line, the aliases in the infobox, footnotes without
 * links) is migrated by one call, in one `memory: migrate` commit: front matter, tags, every
 * footnote linked to its message in a transcript note; the person's uncommitted hand edit is kept
 * byte for byte; a second call changes nothing. */
static void test_migrate_moves_an_old_vault_once_keeping_a_hand_edit(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    ingest(c, "openai");
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s/old-format/'*.md '%s/articles/' && cd '%s' && git add articles && "
             "git -c user.name=t -c user.email=t@localhost commit -qm 'an old vault'", data_dir, c->wiki, c->wiki);
    assert_int_equal(system(cmd), 0);
    /* the person's own edit, not committed */
    char *t = article_text(c, "Sourdough");
    const char *at = strstr(t, "**Sourdough** is");
    assert_non_null(at);
    struct dbuf b = {0};
    dbuf_printf(&b, "%.*s**Sourdough**, my  weekend bread, is%s", (int)(at - t), t, at + strlen("**Sourdough** is"));
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    assert_int_equal(file_write_atomic(path, b.data, b.len), 0);
    dbuf_free(&b);
    free(t);

    struct dream_synth_result r = migrate_run(c);
    assert_int_equal(r.migrated, 5);
    assert_int_equal(r.relinked, 5);
    assert_int_equal(r.rejected, 0);
    size_t notes = count_notes(c);
    assert_true(notes >= 5);
    assert_int_equal(r.committed, 5 + notes);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: migrate 5 article(s) to the Obsidian format", 51) == 0);
    free(m);
    for (size_t i = 0; i < 5; i++) {
        t = article_text(c, all_stems[i]);
        assert_true(strncmp(t, "---\n", 4) == 0);
        assert_non_null(strstr(t, "\ntags:\n  - Hobbies\n"));
        assert_null(strstr(t, "categories:"));
        assert_null(strstr(t, "[[Category:"));
        assert_null(strstr(t, "`conv:")); /* every footnote is a link now */
        assert_non_null(strstr(t, "]: [[Sources/"));
        free(t);
    }
    t = article_text(c, "Sourdough");
    assert_non_null(strstr(t, "aliases:\n  - sour-dough\n  - levain\n"));
    assert_null(strstr(t, "\naliases: "));
    assert_non_null(strstr(t, "**Sourdough**, my  weekend bread, is something")); /* the hand edit, as it was */
    free(t);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);
    assert_vault_checks(c);
    assert_dream_check(c);

    /* once: a second call finds nothing to do and makes no commit */
    char head[GIT_OID_HEXSZ + 1], again[GIT_OID_HEXSZ + 1];
    git_head_id(c, head);
    t = article_text(c, "Cello_Practice");
    r = migrate_run(c);
    assert_int_equal(r.eligible, 0);
    assert_int_equal(r.migrated + r.relinked + r.sources_removed + r.committed, 0);
    git_head_id(c, again);
    assert_string_equal(head, again);
    char *t2 = article_text(c, "Cello_Practice");
    assert_string_equal(t, t2);
    free(t);
    free(t2);

    /* a conversation retitled by a later export: its note gets the new name and the footnotes
     * follow, and the commit says so (it said "migrate 1 article(s) to the Obsidian format" of a
     * vault migrated already) */
    assert_int_equal(sqlite3_exec(store_db(c->store), "UPDATE conversations SET title = 'Retitled by a later export' WHERE id = "
                                                      "(SELECT min(id) FROM conversations)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    r = migrate_run(c);
    assert_int_equal(r.migrated, 0);
    assert_true(r.relinked >= 1);
    m = git_head_message(c);
    assert_true(strncmp(m, "memory: sources: ", 17) == 0);
    free(m);
    /* and the footnote shows the new title after its new link (it kept the old one) */
    bool shown = false;
    for (size_t i = 0; i < 5 && !shown; i++) {
        t = article_text(c, all_stems[i]);
        shown = strstr(t, "Retitled by a later export (") && strstr(t, ", Retitled by a later export)\n");
        free(t);
    }
    assert_true(shown);
}

/* SOURCES keeps Sources/ to what the footnotes cite: a note nothing cites goes, a conversation
 * whose title changed gets the note of its new name and its footnotes follow, and with the
 * vault's dream.sources off every link becomes the plain key again and every note goes; each
 * time dream check finds every link landing, and a second run changes nothing. */
/* An article the person moved into a folder of articles/ (Obsidian lets them: articles/Pets/…)
 * still cites its conversations: sources read only the files right under articles/, took its transcript notes for
 * notes nothing cites and removed them, and its footnotes' links went dead. */
static void test_sources_keep_the_notes_an_article_in_a_subfolder_cites(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    size_t notes = count_notes(c);
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p articles/Food && git mv articles/Sourdough.md articles/Food/Sourdough.md && "
             "git -c user.name=t -c user.email=t@localhost commit -qm 'into a folder'", c->wiki);
    assert_int_equal(system(cmd), 0);
    struct dream_synth_result r = sources_run(c);
    assert_int_equal(r.sources_removed, 0);
    assert_int_equal(count_notes(c), notes);
}

static void test_sources_follow_the_citations_and_the_setting(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    size_t notes = count_notes(c);
    assert_int_equal(notes, 8); /* create's commit holds them already */
    struct dream_synth_result r = sources_run(c);
    assert_int_equal(r.sources, notes);
    assert_int_equal(r.relinked + r.sources_removed + r.committed, 0);

    /* a note nothing cites */
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf -- '---\\ndream: transcript\\nconversation: \"conv:deadbeef\"\\n---\\n\\n# Stale\\n' > 'Sources/2020-01-01 Stale (deadbeef).md' && "
             "git add Sources && git -c user.name=t -c user.email=t@localhost commit -qm stale", c->wiki);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(git_head_has(c, "Sources/2020-01-01 Stale (deadbeef).md"), 1);
    r = sources_run(c);
    assert_int_equal(r.sources_removed, 1);
    assert_int_equal(r.committed, 1);
    assert_int_equal(git_head_has(c, "Sources/2020-01-01 Stale (deadbeef).md"), 0);
    assert_int_equal(count_notes(c), notes);

    /* the person's own files under Sources/ are theirs: not removed, not committed, not taken
     * out of HEAD (a note's name alone is not enough: dream's notes say so in their front matter) */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf 'mine\\n' > Sources/kept.md && printf 'png' > Sources/diagram.png && mkdir -p Sources/mine && "
             "printf 'mine\\n' > Sources/mine/notes.md && printf 'mine\\n' > 'Sources/2021-02-02 My own (abcdef12).md' && "
             "git add Sources && git -c user.name=t -c user.email=t@localhost commit -qm mine && printf 'draft\\n' > Sources/draft.md",
             c->wiki);
    assert_int_equal(system(cmd), 0);
    r = sources_run(c);
    assert_int_equal(r.sources_removed, 0);
    const char *own[] = {"Sources/kept.md", "Sources/diagram.png", "Sources/mine/notes.md", "Sources/2021-02-02 My own (abcdef12).md"};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        assert_int_equal(git_head_has(c, own[i]), 1);
        snprintf(cmd, sizeof cmd, "%s/%s", c->wiki, own[i]);
        assert_int_equal(access(cmd, F_OK), 0);
    }
    snprintf(cmd, sizeof cmd, "%s/Sources/draft.md", c->wiki);
    assert_int_equal(access(cmd, F_OK), 0);
    assert_int_equal(git_head_has(c, "Sources/draft.md"), 0);
    /* an article dream may not edit now (a code fence the person is still typing) keeps the
     * notes it cites: before, it was passed over before its citations were counted */
    snprintf(cmd, sizeof cmd, "cd '%s' && printf '\\n```\\nhalf typed\\n' >> articles/Sourdough.md", c->wiki);
    assert_int_equal(system(cmd), 0);
    r = sources_run(c);
    assert_int_equal(r.sources_removed, 0);
    assert_int_equal(git_head_has(c, "Sources/2024-09-14 Levain or starter (67195f89).md"), 1);
    snprintf(cmd, sizeof cmd, "cd '%s' && git checkout -q -- articles/Sourdough.md", c->wiki);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && git rm -q -r Sources/kept.md Sources/diagram.png Sources/mine 'Sources/2021-02-02 My own (abcdef12).md' && "
             "rm -f Sources/draft.md && git -c user.name=t -c user.email=t@localhost commit -qm 'not mine'", c->wiki);
    assert_int_equal(system(cmd), 0);

    /* the conversation's title changed in the store (a re-import) */
    sqlite3_exec(store_db(c->store), "UPDATE conversations SET title = 'Levain, or starter?' WHERE cite = '67195f89'", NULL, NULL, NULL);
    r = sources_run(c);
    assert_int_equal(r.relinked, 1);
    assert_int_equal(r.sources, notes);
    assert_int_equal(r.sources_removed, 1);
    assert_int_equal(r.committed, 3); /* the article, its new note, the old one gone */
    char *t = article_text(c, "Sourdough");
    assert_non_null(strstr(t, "[[Sources/2024-09-14 Levain, or starter (67195f89)#^p401|conv:67195f89#p401]]"));
    free(t);
    assert_int_equal(git_head_has(c, "Sources/2024-09-14 Levain, or starter (67195f89).md"), 1);
    assert_int_equal(git_head_has(c, "Sources/2024-09-14 Levain or starter (67195f89).md"), 0);
    assert_dream_check(c);
    r = sources_run(c);
    assert_int_equal(r.relinked + r.sources_removed + r.committed, 0);

    /* the person wants no transcripts */
    assert_int_equal(dream_vault_set_sources(c->wiki, false), 0);
    r = sources_run(c);
    assert_int_equal(r.relinked, 5);
    assert_int_equal(r.sources_removed, notes);
    assert_int_equal(count_notes(c), 0);
    for (size_t i = 0; i < 5; i++) {
        t = article_text(c, all_stems[i]);
        assert_null(strstr(t, "[[Sources/"));
        assert_non_null(strstr(t, "]: `conv:"));
        free(t);
    }
    assert_int_equal(git_head_has(c, "Sources/2024-09-14 Levain, or starter (67195f89).md"), 0);
    assert_dream_check(c);
    r = sources_run(c);
    assert_int_equal(r.relinked + r.sources + r.sources_removed + r.committed, 0);
    /* and new footnotes are written without a link */
    ingest(c, "openai");
    r = fold(c);
    assert_true(r.patched + r.new_sections > 0);
    assert_int_equal(count_notes(c), 0);
    t = article_text(c, "Cello_Practice");
    assert_null(strstr(t, "[[Sources/"));
    free(t);
}

/* An article the person made a symbolic link (to a file elsewhere in the vault, or outside it)
 * stays a link in git: the write goes through the link (file_write_atomic), and the commit
 * records the link as a link and the text where it lives, so HEAD and the working tree agree
 * (before, the link's path was committed as a regular file: git status showed a type change,
 * and a checkout or clone would have replaced the person's link with a copy). */
static void test_a_symlinked_article_stays_a_link_in_git(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p Notes '%s/outside' && git mv articles/Sourdough.md Notes/Sourdough.md && ln -s ../Notes/Sourdough.md articles/Sourdough.md && "
             "mv articles/Cello_Practice.md '%s/outside/Cello_Practice.md' && ln -s '%s/outside/Cello_Practice.md' articles/Cello_Practice.md && "
             "git add articles Notes && git -c user.name=t -c user.email=t@localhost commit -qm 'my links' && test -z \"$(git status --porcelain)\"",
             c->wiki, c->root, c->root, c->root);
    assert_int_equal(system(cmd), 0);
    /* a re-import renames both articles' conversations: sources relinks their footnotes */
    sqlite3_exec(store_db(c->store), "UPDATE conversations SET title = title || ' again'", NULL, NULL, NULL);
    struct dream_synth_result r = sources_run(c);
    assert_true(r.relinked >= 2);
    char *t = article_text(c, "Sourdough"), *t2 = article_text(c, "Cello_Practice");
    assert_non_null(strstr(t, " again ("));
    assert_non_null(strstr(t2, " again ("));
    free(t);
    free(t2);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && test -L articles/Sourdough.md && test -L articles/Cello_Practice.md && "
             "git ls-tree HEAD articles/Sourdough.md articles/Cello_Practice.md | grep -c '^120000 ' | grep -qx 2 && "
             "git show HEAD:Notes/Sourdough.md | grep -q ' again (' && test -z \"$(git status --porcelain)\"",
             c->wiki);
    int st = system(cmd);
    if (st) {
        snprintf(cmd, sizeof cmd, "cd '%s' && git status --short && git ls-tree HEAD articles/ Notes/", c->wiki);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(st, 0);
}

/* An article of the person's that their git rules ignore and that was never committed stays out
 * of git when a stage edits it (before, the sources stage's relinked footnote committed it, and
 * with it whatever private text it held, under dream's name). */
static void test_an_ignored_article_of_the_persons_stays_out_of_git(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && echo articles/Private.md >> .git/info/exclude && printf '# Private\n\n**Private** notes: my bank PIN hint.[^1]\n\n"
             "## References\n\n[^1]: `conv:67195f89#p401` (2024-09-14, Levain or starter)\n' > articles/Private.md",
             c->wiki);
    assert_int_equal(system(cmd), 0);
    sqlite3_exec(store_db(c->store), "UPDATE conversations SET title = title || ' again'", NULL, NULL, NULL);
    sources_run(c);
    char *t = article_text(c, "Private");
    assert_non_null(strstr(t, " again")); /* the stage did edit it */
    free(t);
    snprintf(cmd, sizeof cmd, "cd '%s' && ! git cat-file -e HEAD:articles/Private.md 2>/dev/null && git cat-file -e HEAD:articles/Sourdough.md", c->wiki);
    assert_int_equal(system(cmd), 0);
}

/* A later export that edits a cited message (a new id for the edit, as ChatGPT gives one) does
 * not cut the footnote that cites the old one loose: the transcript note keeps the replaced
 * message under its own heading with its block, so the link still lands (dream check). */
static void test_sources_keep_a_cited_message_a_later_export_replaced(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    char *t = article_text(c, "Sourdough");
    assert_non_null(strstr(t, "#^p401|conv:67195f89#p401]]"));
    free(t);
    enum dream_store_outcome o;
    assert_int_equal(fixture_put_edited(c->store, "67195f89", 0, "p401-edited", "Is a levain really just a starter by another name?", &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    sources_run(c);
    char path[4300];
    snprintf(path, sizeof path, "%s/Sources/2024-09-14 Levain or starter (67195f89).md", c->wiki);
    t = slurp(path);
    assert_non_null(t);
    const char *now = strstr(t, "Is a levain really just a starter by another name?"), *heading = strstr(t, "\n## Replaced by a later export\n");
    const char *old = strstr(t, "`p401` · 2024-09-14 06:45 ^p401\n\n````text\nIs levain the same thing as a starter?\n````\n");
    assert_non_null(now);
    assert_non_null(strstr(t, "`p401-edited` · 2024-09-14 06:45 ^p401-edited\n"));
    assert_non_null(heading);
    assert_non_null(old);
    assert_true(now < heading && heading < old);
    assert_null(strstr(heading + 1, "Mostly: it is a portion of starter")); /* what the export carries on is not repeated */
    free(t);
    assert_dream_check(c);
}

/* The whole writing pipeline over the fixture corpus with the scripted fake: the vault it leaves
 * passes dream check (every footnote's link lands on its message) and is kept at
 * DREAM_TEST_BUILD/tests/obsidian-vault for test_obsidian_links, which reads it by Obsidian's
 * rules with a Markdown parser of its own. */
static void test_pipeline_vault_for_obsidian(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    ingest(c, "openai");
    fold(c);
    reconcile(c);
    /* the person's own article: mentions (one by an alias), a link to a heading, a link spelled
     * as dream resolves it but Obsidian would not ([[balcony garden]]: no such file name) */
    put_article(c, "Weekend_Routine",
                "# Weekend Routine\n\n**Weekend Routine** is what the person does on Saturdays: they feed the starter, water the Balcony "
                "Garden and oil the bike repair kit.[^1] See [[Sourdough#Levain Or Starter]] and [[balcony garden]].\n\n## References\n\n"
                "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    link_run(c);
    wikify(c);
    struct dream_synth_result r = sources_run(c);
    char *t = article_text(c, "Weekend_Routine");
    assert_non_null(strstr(t, "[[Balcony_garden|balcony garden]]"));
    assert_non_null(strstr(t, "## See also"));
    assert_non_null(strstr(t, "[^1]: [[Sources/2024-01-10 Feeding a new sourdough starter (717766a6)#^dr-c1-m0|conv:717766a6#dr-c1-m0]]"));
    free(t);
    assert_int_equal(r.rejected, 0);
    assert_vault_checks(c);
    assert_dream_check(c);
    const char *b = getenv("DREAM_TEST_BUILD");
    assert_non_null(b);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/tests/obsidian-vault' && mkdir -p '%s/tests/obsidian-vault' && cp -r '%s/articles' '%s/Sources' '%s/Meta' "
             "'%s/tests/obsidian-vault/'", b, b, c->wiki, c->wiki, c->wiki, b);
    assert_int_equal(system(cmd), 0);
}

/* The writing stages on the tiny random-weight Gemma 4 (answers are noise), over entities that
 * part 1 found with the fake: every run leaves a vault dream check passes, and the work settles. */
static void test_noise_never_corrupts_the_vault(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    test_seam_use_tiny_gemma(4, 4096);
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.max_tokens = 40;
    p.batch = 5;
    struct dream_synth_result r;
    for (int run = 0; run < 3; run++) {
        assert_int_equal(dream_seam_set_backend(NULL), 0);
        assert_int_equal(dream_synth_create(c->store, &p, &r), 0);
        fprintf(stderr, "noise create run %d: %zu eligible, %zu written, %zu stubs, %zu failed, %zu refused\n", run + 1, r.eligible,
                r.created, r.stubs, r.failed, r.rejected);
        assert_int_equal(r.created + r.failed, r.eligible); /* a stub is written on a failed last attempt */
        assert_true(r.stubs <= r.failed);
        assert_vault_checks(c);
        assert_dream_check(c);
    }
    assert_int_equal(dream_synth_create(c->store, &p, &r), 0);
    assert_int_equal(r.eligible, 0); /* three attempts settle every entity */
    ingest(c, "openai");
    for (int run = 0; run < 3; run++) {
        assert_int_equal(dream_seam_set_backend(NULL), 0);
        assert_int_equal(dream_synth_fold(c->store, &p, &r), 0);
        fprintf(stderr, "noise fold run %d: %zu eligible, %zu patched, %zu new sections, %zu leads, %zu refused, %zu nowhere\n", run + 1,
                r.eligible, r.patched, r.new_sections, r.lead_patches, r.rejected, r.unrouted);
        assert_vault_checks(c);
        assert_dream_check(c);
    }
    assert_int_equal(dream_synth_fold(c->store, &p, &r), 0);
    assert_int_equal(r.eligible, 0);
    /* and the rest of the writing stages on the same noise */
    assert_int_equal(dream_synth_reconcile(c->store, &p, &r), 0);
    fprintf(stderr, "noise reconcile: %zu eligible, %zu changed, %zu refused\n", r.eligible, r.reconciled, r.rejected);
    assert_int_equal(dream_synth_link(c->store, &p, &r), 0);
    assert_int_equal(dream_synth_wikify(c->store, &p, &r), 0);
    fprintf(stderr, "noise wikify: %zu eligible, %zu tightened, %zu refused\n", r.eligible, r.wikified, r.rejected);
    assert_vault_checks(c);
    assert_dream_check(c);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);
    dream_seam_shutdown();
}

/* Counts the fold stage's batched calls (a wrapper around the fixture fake): calls, and the most
 * distinct articles one section-route call asked about. */
static long fb_calls, fb_widest;

static int counting_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                         char **out)
{
    fb_calls++;
    if (!strcmp(stage, "section")) {
        static const char mark[] = "--- end of note ---\n\nArticle: \"";
        const char *titles[256];
        size_t lens[256], nt = 0;
        for (size_t i = 0; i < n; i++) {
            const char *t = strstr(in[i].user, mark);
            assert_non_null(t);
            t += sizeof mark - 1;
            size_t len = strcspn(t, "\"");
            bool seen = false;
            for (size_t j = 0; j < nt && !seen; j++) seen = lens[j] == len && !strncmp(titles[j], t, len);
            if (!seen && nt < 256) titles[nt] = t, lens[nt++] = len;
        }
        if ((long)nt > fb_widest) fb_widest = (long)nt;
    }
    return dreaming_fake_call(ud, stage, in, n, opts, out);
}

static void put_cello(struct ctx *c, const char *id, int64_t day_ms, const char *user, const char *assistant);

/* The fixture through create, then the rest of the corpus and two more cello notes (three chunks
 * for one article, one each for two others) folded with `batch` pairs a round; the calls counted. */
static struct dream_synth_result fold_counted(struct ctx *c, size_t batch, long *calls, long *widest)
{
    ingest(c, "claude");
    ingest(c, "pi");
    assert_int_equal(create(c).created, 5);
    ingest(c, "openai");
    put_cello(c, "cello-june", 1718841600000LL, "An update on cello practice: I switched, and now I practise in the evening after work.",
              "Evenings work if you warm up first.");
    put_cello(c, "cello-july", 1721433600000LL, "My cello lesson went well; the teacher liked the scales of my cello practice.",
              "Good scales make everything easier.");
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.batch = batch;
    struct dream_backend counting = {.name = "counting-fake", .call = counting_call};
    assert_int_equal(dream_seam_set_backend(&counting), 0);
    fb_calls = fb_widest = 0;
    struct dream_synth_result r;
    int rc = dream_synth_fold(c->store, &p, &r);
    if (rc) fprintf(stderr, "fold: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    *calls = fb_calls;
    *widest = fb_widest;
    assert_vault_checks(c);
    return r;
}

/* FOLD fills the batch width: a round asks the section-route questions of several articles in
 * one call (and each later phase likewise), so it makes fewer batched calls than one pair at a
 * time, and writes byte for byte the same articles (the pairs of one article stay in order). */
static void test_fold_batches_the_pairs_of_distinct_articles(void **state)
{
    struct ctx *one = *state, *wide = NULL;
    assert_int_equal(setup((void **)&wide), 0);
    long calls1, widest1, calls8, widest8;
    struct dream_synth_result r1 = fold_counted(one, 1, &calls1, &widest1);
    struct dream_synth_result r8 = fold_counted(wide, 8, &calls8, &widest8);
    fprintf(stderr, "fold: %zu chunk(s) into articles: %ld batched calls one pair at a time, %ld with rounds of 8 (widest section "
            "call: %ld article(s))\n", r8.eligible, calls1, calls8, widest8);
    assert_int_equal(r1.eligible, 5);
    assert_int_equal(r8.eligible, 5);
    assert_int_equal(widest1, 1);
    assert_true(widest8 >= 3); /* the cello, the balcony garden and the bicycle in one section call */
    assert_true(calls8 < calls1);
    assert_int_equal(r8.patched, r1.patched);
    assert_int_equal(r8.new_sections, r1.new_sections);
    assert_int_equal(r8.lead_patches, r1.lead_patches);
    assert_int_equal(r8.rejected, r1.rejected);
    assert_int_equal(r8.unrouted, r1.unrouted);
    assert_int_equal(r8.committed, r1.committed);
    assert_true(r8.patched + r8.new_sections + r8.lead_patches >= 3);
    /* the same articles, byte for byte */
    char d1[4200], d8[4200];
    snprintf(d1, sizeof d1, "%s/articles", one->wiki);
    snprintf(d8, sizeof d8, "%s/articles", wide->wiki);
    static char n1[64][256], n8[64][256];
    size_t c1 = list_md(d1, n1, 64), c8 = list_md(d8, n8, 64);
    assert_int_equal(c1, c8);
    for (size_t i = 0; i < c1; i++) {
        assert_string_equal(n1[i], n8[i]);
        char p1[4600], p8[4600];
        snprintf(p1, sizeof p1, "%s/%s", d1, n1[i]);
        snprintf(p8, sizeof p8, "%s/%s", d8, n8[i]);
        char *t1 = slurp(p1), *t8 = slurp(p8);
        assert_non_null(t1);
        assert_non_null(t8);
        assert_string_equal(t1, t8);
        free(t1);
        free(t8);
    }
    assert_int_equal(teardown((void **)&wide), 0);
}

/* An article whose body tells a change (spelt instead of rye) while its lead still says rye;
 * lead2 is the lead's second sentence, body the body's sentence, d1 and d2 the dates of notes 1
 * and 2, key2 the citation key of note 2. */
static char *stale_lead(const char *lead2, const char *body, const char *d1, const char *d2, const char *key2)
{
    size_t cap = 1024 + strlen(lead2) + strlen(body);
    char *t = malloc(cap);
    assert_non_null(t);
    assert_true(snprintf(t, cap,
                         "# Sourdough\n\n**Sourdough** is bread the person bakes at home.[^1] %s Baking happens on Saturdays.[^1]\n\n"
                         "## Starter\n\n%s\n\n## References\n\n"
                         "[^1]: `conv:717766a6#dr-c1-m0` (%s, Feeding a new sourdough starter)\n"
                         "[^2]: `%s` (%s, Spelt)\n",
                         lead2, body, d1, key2, d2) < (int)cap);
    return t;
}

#define STALE_L "The person feeds the starter with rye flour every morning.[^1]"
#define STALE_S "they now feed the starter with spelt flour instead of rye flour.[^2]"

/* Reconcile's lead step through the stage: the stale lead sentence gives way to the body's own
 * sentence (capitalised, its marker with it) since the message it cites says spelt; the article
 * is committed and checks clean, and a second run has nothing to do. A body sentence whose
 * message does not say it stays out of the lead. */
static void test_reconcile_lead_takes_up_the_change_the_body_tells(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_message m[1] = {{"user", "spelt-m0", 1714633200000LL, "Since April the starter gets spelt flour, not rye."}};
    struct dream_conversation conv = {.source = "claude", .id = "spelt", .title = "Spelt", .created_ms = 1714633200000LL,
                                      .updated_ms = 1714633200000LL, .messages = m, .n_messages = 1};
    assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
    struct dream_store_conversation *sc = NULL;
    assert_int_equal(dream_store_get(c->store, "claude", "spelt", &sc), 0);
    char key[96], path[4300];
    snprintf(key, sizeof key, "conv:%s#spelt-m0", sc->cite);
    dream_store_conversation_free(sc);
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    /* cited to a message about bike tools: the lead stays */
    char *t = stale_lead(STALE_L, STALE_S, "2024-01-10", "2024-05-02", "conv:8f504e46#dr-c5-m0");
    put_article(c, "Sourdough", t);
    const char *fold = "INSERT INTO chunk_folded (chunk, article, section) SELECT max(id), 'Sourdough', 'starter' FROM chunks "
                       "WHERE id NOT IN (SELECT chunk FROM chunk_folded)";
    assert_int_equal(sqlite3_exec(store_db(c->store), fold, NULL, NULL, NULL), SQLITE_OK);
    struct dream_synth_result r = reconcile(c);
    assert_int_equal(r.lead_patches, 0);
    char *now = slurp(path);
    assert_string_equal(now, t);
    free(now);
    free(t);
    /* cited to the message that says spelt: it moves up */
    t = stale_lead(STALE_L, STALE_S, "2024-01-10", "2024-05-02", key);
    put_article(c, "Sourdough", t);
    free(t);
    assert_int_equal(sqlite3_exec(store_db(c->store), fold, NULL, NULL, NULL), SQLITE_OK);
    r = reconcile(c);
    assert_int_equal(r.reconciled, 1);
    assert_int_equal(r.lead_patches, 1);
    t = slurp(path);
    const char *want = "**Sourdough** is bread the person bakes at home.[^1] They now feed the starter with spelt flour instead of rye "
                       "flour.[^2] Baking happens on Saturdays.[^1]\n";
    if (!strstr(t, want)) fprintf(stderr, "%s", t);
    assert_non_null(strstr(t, want));
    assert_null(strstr(t, "rye flour every morning"));
    assert_non_null(strstr(t, "## Starter\n\nthey now feed the starter with spelt flour")); /* the body as it was */
    free(t);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);
    assert_dream_check(c);
    assert_int_equal(reconcile(c).eligible, 0);
}

static int cost_asked;

/* The fixture fake, but every field check of `cost` is answered "£115 a month", whatever the
 * prompt says: the stage must take it only where its text states that value as current. */
static bool cost_keeps; /* the model answers KEEP */
static int cost_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                     char **out)
{
    int rc = dreaming_fake_call(ud, stage, in, n, opts, out);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!strstr(in[i].user, "Does the field still agree with the lead?") || !strstr(in[i].user, "Infobox field: cost: ")) continue;
        cost_asked++;
        free(out[i]);
        out[i] = strdup(cost_keeps ? "KEEP" : "£115 a month");
    }
    return rc;
}

/* A field reconcile's stance keys leave out (cost) is checked when the body tells its value as
 * the past ("used to cost"), against the lead and the section that tells it: the later amount
 * the section states is taken; without such a sentence the field is not asked about, and an
 * answer the text does not state is refused. */
static void test_reconcile_checks_a_field_the_body_tells_as_past(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    static const struct {
        const char *body, *want;
        int asked;
        bool keeps;
    } cases[] = {
        {"Flour used to cost them about £32 a month.[^1] They spend roughly £115 a month on flour now.[^2]", "cost: £115 a month", 1, false},
        {"Flour costs them about £32 a month.[^1] They bake every Saturday.[^2]", "cost: £32 a month", 0, false},
        {"Flour used to cost them about £32 a month.[^1] They bake every Saturday.[^2]", "cost: £32 a month", 1, false},
        /* the model keeps a value the body tells as past: the body's later same-shaped amount */
        {"Flour used to cost them about £32 a month.[^1] They spend roughly £115 a month on flour now.[^2]", "cost: £115 a month", 1, true},
        /* ... but not an amount from an earlier note than the one that tells the change */
        {"They spend roughly £115 a month on flour.[^1] Flour used to cost them about £32 a month.[^2]", "cost: £32 a month", 1, true},
    };
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[2048];
        snprintf(t, sizeof t,
                 "# Sourdough\n\n```info\ncost: £32 a month\n```\n\n**Sourdough** is bread the person bakes at home.[^1]\n\n"
                 "## Costs\n\n%s\n\n## References\n\n"
                 "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
                 "[^2]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n",
                 cases[i].body);
        put_article(c, "Sourdough", t);
        fold_new_chunk(c, "Sourdough", "costs");
        struct dream_backend be = {.name = "cost", .call = cost_call};
        assert_int_equal(dream_seam_set_backend(&be), 0);
        cost_asked = 0;
        cost_keeps = cases[i].keeps;
        struct dream_synth_params p;
        dream_synth_default_params(&p);
        p.wiki_dir = c->wiki;
        struct dream_synth_result r;
        assert_int_equal(dream_synth_reconcile(c->store, &p, &r), 0);
        assert_int_equal(r.eligible, 1);
        assert_int_equal(cost_asked, cases[i].asked);
        char *now = slurp(path);
        if (!strstr(now, cases[i].want)) fprintf(stderr, "case %zu:\n%s", i, now);
        assert_non_null(strstr(now, cases[i].want));
        free(now);
    }
    assert_dream_check(c);
}

/* synth_past_successor: the position that replaced a value the body tells as past, where the
 * sentence says it in words code can take, or a same-shaped amount no earlier; else none. */
static void test_past_successor_takes_the_body_s_later_position(void **state)
{
    (void)state;
    static const struct {
        const char *body, *value, *want; /* want NULL: none */
    } cases[] = {
        {"The person did tai chi at home.[^1] They moved their tai chi to a studio in the old town instead of home.[^2]", "home",
         "a studio in the old town"},
        {"For swan dive they switched to a wishing cap instead of a sailor cap.[^2]", "a sailor cap", "a wishing cap"},
        {"Antonio now works at a community workshop rather than a design studio.[^2]", "a design studio", "a community workshop"},
        {"They rewrote Gosling in Zig instead of TypeScript.[^2]", "TypeScript", "Zig"},
        {"They switched from the river path to the lit street route for the winter.[^2]", "the river path", "the lit street route"},
        {"They switched from clock golf to nowcasting for the winter.[^2]", "clock golf", "nowcasting"},
        {"Now they do it most evenings instead of three times a week.[^2]", "three times a week", NULL},
        {"Flour used to cost them about £32 a month.[^1] They spend roughly £115 a month on flour now.[^2]", "£32 a month", "£115 a month"},
        {"They spend roughly £115 a month on flour.[^1] Flour used to cost them about £32 a month.[^2]", "£32 a month", NULL},
        {"Flour used to cost them about £32 a month.[^1] They spend £32 a month on rye.[^2]", "£32 a month", NULL},
        {"The person does tai chi at home.[^1] They moved it to a studio.[^2]", "home", NULL},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t,
                 "# Tai chi\n\n**Tai chi** is a practice of the person's.[^1]\n\n## Practice\n\n%s\n\n## References\n\n"
                 "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
                 "[^2]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n",
                 cases[i].body);
        dream_article *a = NULL;
        assert_int_equal(dream_article_parse(t, strlen(t), &a), 0);
        char *got = synth_past_successor(a, cases[i].value, NULL);
        if (cases[i].want ? !got || strcmp(got, cases[i].want) : got != NULL)
            fprintf(stderr, "case %zu: got \"%s\", want \"%s\"\n", i, got ? got : "(none)", cases[i].want ? cases[i].want : "(none)");
        bad += cases[i].want ? !got || strcmp(got, cases[i].want) : got != NULL;
        free(got);
        dream_article_free(a);
    }
    assert_int_equal(bad, 0);
}

/* synth_message_successor: what the person's own message says replaced a value ("X instead of V",
 * "is now X, no longer V", "X. I mixed it up with V", "X, not V"), and whether it corrects a mistake; none
 * where the words give no phrase code can take, or the value is not what the cue contrasts. */
static void test_message_successor_reads_the_person_s_own_words(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *value, *want; /* want NULL: none */
        bool correction;
        const char *said; /* the person's other words (NULL: none) */
    } cases[] = {
        {"Antonio has moved on to touch football instead of clock golf. I wrapped it in gingham.", "clock golf", "touch football", false, NULL},
        {"Matthew is now waiting for a repair, no longer back in regular use. What should I watch?", "back in regular use",
         "waiting for a repair", false, NULL},
        {"Update: parrot is feature-complete now, no longer a rough prototype.", "a rough prototype", "feature-complete", false, NULL},
        {"These days I use my coffee table for storing canary grasses instead of storing common boxes.", "storing common boxes",
         "storing canary grasses", false, NULL},
        {"I moved Josef: now I keep it in the woodshed instead of in the dining room.", "the dining room", "the woodshed", false, NULL},
        {"Small correction to what I told you before: I spend roughly £115 a month on swan dive. I mixed it up with £32 a month.",
         "£32 a month", "£115 a month", true, NULL},
        {"Update on Karen. Karen's birthday is on August 3. I mixed it up with October 10.", "October 10", "August 3", true, NULL},
        {"The starter gets spelt at the bakery rather than rye.", "rye", "the bakery", false, NULL},
        /* nothing code can take */
        {"Now I do swan dive most evenings instead of three times a week.", "three times a week", NULL, false, NULL},
        {"I no longer play clock golf.", "clock golf", NULL, false, NULL},
        {"Clock golf is what Antonio plays every Sunday.", "clock golf", NULL, false, NULL},
        {"He moved on to touch football instead of clock golfing.", "clock golf", NULL, false, NULL},
        {"I mixed it up with £32 a month.", "£32 a month", NULL, false, NULL},
        {"I spend £32 a month. I mixed it up with £32 a month.", "£32 a month", NULL, false, NULL},
        {"It went to clock golf instead of clock golf.", "clock golf", NULL, false, NULL},
        {"", "clock golf", NULL, false, NULL},
        /* "X, not V": V's shape right before the cue, or where the person's earlier sentence put V */
        {"I need to correct myself \u2014 I need to remember that Cornelius's birthday is November 12, not July 17.", "July 17", "November 12",
         true, NULL},
        {"The vet says Antoine weighs 3 kg now, not 7 kg.", "7 kg", "3 kg", false, NULL},
        {"Antonio has moved on to nowcasting instead of clock golf.", "clock golf", "nowcasting", false, NULL},
        {"I keep it in the nowhere-room instead of in the dining room.", "the dining room", "the nowhere-room", false, NULL},
        /* "nowhere" is not "now": the clause still corrects */
        {"Sorry, nowhere near what I said: Antoine weighs 3 kg, not 7 kg.", "7 kg", "3 kg", true, NULL},
        {"Correction: Part of the draw of Taegu is that my sister lives there \u2014 not brother, as I said before.", "brother", "sister", true,
         "Part of the draw of Taegu is that my brother lives there.\nCorrection: Part of the draw of Taegu is that my sister lives "
         "there \u2014 not brother, as I said before.\n"},
        {"My bike is a Giant, not Trek.", "Trek", "Giant", true, "I ride a Trek. My bike is a Trek."},
        /* no earlier sentence, one that goes on differently, one that only negates V, no shape */
        {"Correction: Part of the draw of Taegu is that my sister lives there \u2014 not brother, as I said before.", "brother", NULL, false, NULL},
        {"Correction: my sister lives there \u2014 not brother.", "brother", NULL, false, "My brother visits Taegu often."},
        {"Correction: my sister lives there \u2014 not brother.", "brother", NULL, false, "It is my sister, not brother, who lives there."},
        {"It is on Friday, not July 17.", "July 17", NULL, false, NULL},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool corr = !cases[i].correction;
        char *got = synth_message_successor(cases[i].msg, cases[i].value, cases[i].said, &corr);
        bool ok = cases[i].want ? got && !strcmp(got, cases[i].want) && corr == cases[i].correction : got == NULL && !corr;
        if (!ok) fprintf(stderr, "case %zu: got \"%s\" (%d), want \"%s\"\n", i, got ? got : "(none)", corr, cases[i].want ? cases[i].want : "(none)");
        bad += !ok;
        free(got);
    }
    assert_int_equal(bad, 0);
}

/* Reconcile takes a field's later position from the person's own words: a user message of a
 * conversation the article cites that names the subject and says "X instead of V". The field
 * becomes X, the lead's and the body's sentences that stated V are told with X (capitalized as V
 * was) and cited to that message (a new footnote), and History keeps the trajectory; no model call decides it. The same words from
 * the assistant, or in a message that does not name the subject, change nothing. */
static void test_reconcile_takes_the_later_position_the_person_told(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    static const struct {
        const char *id, *role, *text;
        bool taken;
    } cases[] = {
        {"sd-told", "user", "I switched the sourdough starter to spelt flour instead of rye flour.", true},
        {"sd-asst", "assistant", "I switched the sourdough starter to spelt flour instead of rye flour.", false},
        {"sd-unnamed", "user", "I switched it to spelt flour instead of rye flour.", false},
    };
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char m0[64], m1[64];
        snprintf(m0, sizeof m0, "%s-m0", cases[i].id);
        snprintf(m1, sizeof m1, "%s-m1", cases[i].id);
        struct dream_message m[2] = {{"user", m0, 1714633200000LL, "A question about bread tins for Saturdays."},
                                     {cases[i].role, m1, 1714633260000LL, cases[i].text}};
        struct dream_conversation conv = {.source = "claude", .id = cases[i].id, .title = "Bread tins", .created_ms = 1714633200000LL,
                                          .updated_ms = 1714633260000LL, .messages = m, .n_messages = 2};
        assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
        struct dream_store_conversation *sc = NULL;
        assert_int_equal(dream_store_get(c->store, "claude", cases[i].id, &sc), 0);
        char cite[16];
        snprintf(cite, sizeof cite, "%s", sc->cite);
        dream_store_conversation_free(sc);
        char t[2048];
        snprintf(t, sizeof t,
                 "# Sourdough\n\n```info\nflour: rye flour\n```\n\n**Sourdough** is bread the person bakes at home.[^1] The starter's flour "
                 "is rye flour.[^1]\n\n## Baking\n\nRye flour is what the starter gets.[^1] Baking happens on Saturdays.[^2]\n\n"
                 "## References\n\n"
                 "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
                 "[^2]: `conv:%s#%s` (2024-05-02, Bread tins)\n",
                 cite, m0);
        put_article(c, "Sourdough", t);
        fold_new_chunk(c, "Sourdough", "baking");
        struct dream_synth_result r = reconcile(c);
        assert_int_equal(r.eligible, 1);
        char *now = slurp(path);
        if (!cases[i].taken) {
            if (strcmp(now, t)) fprintf(stderr, "case %zu:\n%s", i, now);
            assert_string_equal(now, t);
            free(now);
            continue;
        }
        char want_fn[128];
        /* the footnotes renumbered in reading order: the told message is [^2] */
        snprintf(want_fn, sizeof want_fn, "[^2]: `conv:%s#%s` (2024-05-02, Bread tins)", cite, m1);
        bool ok = strstr(now, "flour: spelt flour\n") && strstr(now, "at home.[^1] The starter's flour is spelt flour.[^2]\n") &&
                  !strstr(now, "is rye flour") && strstr(now, "\n\nSpelt flour is what the starter gets.[^2] Baking") &&
                  strstr(now, "- Previously rye flour[^1]; as of 2024-05-02 spelt flour[^2].") &&
                  strstr(now, want_fn);
        if (!ok) fprintf(stderr, "case %zu:\n%s", i, now);
        assert_true(ok);
        free(now);
        assert_int_equal(r.reconciled, 1);
        assert_int_equal(r.history, 1);
        assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);
        assert_dream_check(c);
    }
    /* a lead sentence whose other footnote nothing else cites keeps its words (restating it would
     * drop that citation); the body's sentence and the field still take the later value */
    {
        struct dream_store_conversation *sc = NULL;
        assert_int_equal(dream_store_get(c->store, "claude", "sd-told", &sc), 0);
        char t[2048];
        snprintf(t, sizeof t,
                 "# Sourdough\n\n```info\nflour: rye flour\n```\n\n**Sourdough** is bread the person bakes at home.[^1] The starter's flour "
                 "is rye flour.[^1][^3]\n\n## Baking\n\nRye flour is what the starter gets.[^1] Baking happens on Saturdays.[^2]\n\n"
                 "## References\n\n"
                 "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
                 "[^2]: `conv:%s#sd-told-m0` (2024-05-02, Bread tins)\n"
                 "[^3]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n",
                 sc->cite);
        dream_store_conversation_free(sc);
        put_article(c, "Sourdough", t);
        fold_new_chunk(c, "Sourdough", "baking");
        struct dream_synth_result r = reconcile(c);
        assert_int_equal(r.reconciled, 1);
        char *now = slurp(path);
        bool ok = strstr(now, "flour: spelt flour\n") && strstr(now, "The starter's flour is rye flour.") &&
                  strstr(now, "Spelt flour is what the starter gets.") && strstr(now, "conv:8f504e46#dr-c5-m0");
        if (!ok) fprintf(stderr, "lone footnote:\n%s", now);
        assert_true(ok);
        free(now);
        assert_dream_check(c);
    }
}

/* A correction that restates the person's earlier sentence with one word changed ("my sister
 * lives there — not brother, as I said before", after "my brother lives there"): reconcile takes
 * sister for the field from the two messages, with no model call; the same correction without
 * the earlier sentence among the cited conversations leaves the article as it was. */
static void test_reconcile_takes_a_correction_that_restates_the_earlier_sentence(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    assert_int_equal(sqlite3_exec(store_db(c->store),
                                  "INSERT INTO pipeline_entities (name, normal, squeezed, route, created_at, article_title) "
                                  "VALUES ('Taegu', 'taegu', 'taegu', 'article', 0, 'Taegu')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    static const struct {
        const char *id, *earlier;
        bool taken;
    } cases[] = {
        {"tg-said", "Part of the draw of Taegu is that my brother lives there.", true},
        {"tg-other", "Taegu has good food markets, my brother says.", false},
    };
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Taegu.md", c->wiki);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cite[2][16], ids[2][64], m[2][64], r1[64];
        const char *texts[2] = {cases[i].earlier,
                                "Correction: Part of the draw of Taegu is that my sister lives there \u2014 not brother, as I said before."};
        for (int k = 0; k < 2; k++) {
            snprintf(ids[k], sizeof ids[k], "%s-%d", cases[i].id, k);
            snprintf(m[k], sizeof m[k], "%s-m0", ids[k]);
            snprintf(r1, sizeof r1, "%s-m1", ids[k]);
            int64_t t0 = 1738000000000LL + k * 172800000LL;
            struct dream_message msg[2] = {{"user", m[k], t0, texts[k]}, {"assistant", r1, t0 + 60000, "Noted."}};
            struct dream_conversation conv = {.source = "claude", .id = ids[k], .title = "Taegu", .created_ms = t0, .updated_ms = t0 + 60000,
                                              .messages = msg, .n_messages = 2};
            assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
            struct dream_store_conversation *sc = NULL;
            assert_int_equal(dream_store_get(c->store, "claude", ids[k], &sc), 0);
            snprintf(cite[k], sizeof cite[k], "%s", sc->cite);
            dream_store_conversation_free(sc);
        }
        char t[2048];
        snprintf(t, sizeof t,
                 "# Taegu\n\n```info\nconnection: brother\n```\n\n**Taegu** is a city the person plans a long stay in.[^1] Part of the draw "
                 "is that their sister lives there.[^2]\n\n## Connections\n\nTheir brother lives in Taegu.[^1]\n\n## References\n\n"
                 "[^1]: `conv:%s#%s` (2025-01-27, Taegu)\n[^2]: `conv:%s#%s` (2025-01-29, Taegu)\n",
                 cite[0], m[0], cite[1], m[1]);
        put_article(c, "Taegu", t);
        fold_new_chunk(c, "Taegu", "connections");
        struct dream_synth_result r = reconcile(c);
        assert_int_equal(r.eligible, 1);
        char *now = slurp(path);
        bool ok = cases[i].taken ? strstr(now, "connection: sister\n") && !strstr(now, "connection: brother") : !strcmp(now, t);
        if (!ok) fprintf(stderr, "case %zu:\n%s", i, now);
        assert_true(ok);
        free(now);
        assert_int_equal(r.reconciled, cases[i].taken);
        assert_dream_check(c);
    }
}

/* A model's rewrite of a section that still states the old value, boiled down below the gate's
 * word floor, is left out (the section stays as it was, reported unresolved): the field still
 * takes the later position the person told. Before, the short section made the gate refuse the
 * whole edit, the field's change with it. */
static void test_reconcile_keeps_the_field_when_a_section_rewrite_is_too_short(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_message m[2] = {{"user", "sd-brief-m0", 1714633200000LL, "A question about bread tins for Saturdays."},
                                 {"user", "sd-brief-m1", 1714633260000LL, "I switched the sourdough starter to spelt flour instead of rye flour."}};
    struct dream_conversation conv = {.source = "claude", .id = "sd-brief", .title = "Bread tins", .created_ms = 1714633200000LL,
                                      .updated_ms = 1714633260000LL, .messages = m, .n_messages = 2};
    assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
    struct dream_store_conversation *sc = NULL;
    assert_int_equal(dream_store_get(c->store, "claude", "sd-brief", &sc), 0);
    char t[2048], path[4300];
    snprintf(t, sizeof t,
             "# Sourdough\n\n```info\nflour: rye flour\n```\n\n**Sourdough** is bread the person bakes at home.[^1] Baking happens on "
             "Saturdays.[^2]\n\n## Feeding\n\nBriefly, rye flour is what feeds the starter each morning, with a long rest on the counter "
             "and a spoon of honey for every bake.[^1]\n\n## References\n\n"
             "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
             "[^2]: `conv:%s#sd-brief-m0` (2024-05-02, Bread tins)\n",
             sc->cite);
    dream_store_conversation_free(sc);
    put_article(c, "Sourdough", t);
    fold_new_chunk(c, "Sourdough", "feeding");
    struct dream_synth_result r = reconcile(c);
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *now = slurp(path);
    bool ok = strstr(now, "flour: spelt flour\n") && strstr(now, "\n\nBriefly, rye flour is what feeds the starter each morning") &&
              !strstr(now, "Now spelt flour");
    if (!ok) fprintf(stderr, "%s", now);
    assert_true(ok);
    free(now);
    assert_int_equal(r.reconciled, 1);
    assert_int_equal(r.rejected, 0);
    assert_dream_check(c);
}

static size_t held_all(void *ud, const char *conv, const char *msg, const unsigned *w, size_t nw)
{
    (void)ud, (void)conv, (void)msg, (void)w;
    return nw;
}

static size_t held_one(void *ud, const char *conv, const char *msg, const unsigned *w, size_t nw)
{
    (void)ud, (void)conv, (void)msg, (void)w;
    return nw > 2 ? 1 : 0; /* of spelt, feed, starter: under half */
}

/* synth_lead_follow_body leaves the lead as it is whenever it cannot tell that the body's
 * sentence is the later position of what the lead says, or its message does not say it. */
static void test_lead_follow_leaves_what_it_cannot_tell(void **state)
{
    (void)state;
    static const struct {
        const char *why, *lead2, *body, *d1, *d2;
        size_t want;
    } cases[] = {
        {"the change, in a later note", STALE_L, STALE_S, "2024-01-10", "2024-05-02", 1},
        {"the change, in the same note", STALE_L, "They now feed the starter with spelt flour instead of rye flour.[^1]", "2024-01-10",
         "2024-05-02", 1},
        {"the body's note is the earlier one", STALE_L, STALE_S, "2024-05-02", "2024-01-10", 0},
        {"the lead already says it", "The person feeds the starter with rye flour every morning.[^1] They now feed it with spelt flour.[^2]",
         STALE_S, "2024-01-10", "2024-05-02", 0},
        {"the lead tells it as the past", "The person was feeding the starter with rye flour every morning.[^1]", STALE_S, "2024-01-10",
         "2024-05-02", 0},
        {"the lead names another flour", "The person feeds the starter with wheat flour every morning.[^1]", STALE_S, "2024-01-10",
         "2024-05-02", 0},
        {"the body tells no change", STALE_L, "They now feed the starter with spelt flour.[^2]", "2024-01-10", "2024-05-02", 0},
        {"a broken sentence, not a change", STALE_L, "They used to and the person feed the starter with rye flour every morning.[^2]",
         "2024-01-10", "2024-05-02", 0},
        {"the lead's footnote would be cited nowhere", "The person feeds the starter with rye flour every morning.[^2]",
         "They now feed the starter with spelt flour instead of rye flour.[^1]", "2024-01-10", "2024-01-10", 0},
    };
    for (size_t i = 0; i <= sizeof cases / sizeof cases[0]; i++) {
        bool last = i == sizeof cases / sizeof cases[0]; /* the first case, its message not saying it */
        size_t k = last ? 0 : i;
        char *t = stale_lead(cases[k].lead2, cases[k].body, cases[k].d1, cases[k].d2, "conv:8f504e46#dr-c5-m0");
        dream_article *a = NULL;
        assert_int_equal(dream_article_parse(t, strlen(t), &a), 0);
        size_t n = 99, want = last ? 0 : cases[k].want;
        assert_int_equal(synth_lead_follow_body(a, last ? held_one : held_all, NULL, &n), 0);
        if (n != want) fprintf(stderr, "case \"%s\"%s: %zu replaced, want %zu\n%s", cases[k].why, last ? " (held_one)" : "", n, want, dream_article_text(a, NULL));
        assert_int_equal(n, want);
        if (!n) assert_string_equal(dream_article_text(a, NULL), t);
        dream_article_free(a);
        free(t);
    }
    /* the stale sentence that defines the subject (the lead's first) is never replaced */
    static const char first[] = "# Sourdough\n\n**Sourdough** is fed with rye flour every morning.[^1] Baking happens on Saturdays.[^1]\n\n"
                                "## Starter\n\nThey now feed it with spelt flour instead of rye flour.[^2]\n\n## References\n\n"
                                "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n"
                                "[^2]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(first, strlen(first), &a), 0);
    size_t n = 99;
    assert_int_equal(synth_lead_follow_body(a, held_all, NULL, &n), 0);
    assert_int_equal(n, 0);
    assert_string_equal(dream_article_text(a, NULL), first);
    dream_article_free(a);
}

/* synth_lead_follow_body adds a change the lead says nothing of at the lead's end: the body's
 * latest change sentence, when no content word of it (the subject's and the cue's aside) is in
 * the lead, it is dated no earlier than the lead's notes, a message it cites says it, and the
 * lead has at most three sentences (a lead has two to four). */
static void test_lead_follow_adds_a_change_the_lead_says_nothing_of(void **state)
{
    (void)state;
#define FEED_S "they switched their starter feeding to twice a day instead of once a day.[^2]"
#define CLASS_L "They are learning it through a class on Tuesdays.[^1]"
    static const struct {
        const char *why, *lead2, *body, *d1, *d2;
        bool held, want;
    } cases[] = {
        {"a later change of another aspect", CLASS_L, FEED_S, "2024-01-10", "2024-05-02", true, true},
        {"the change is dated before the lead's note", CLASS_L, FEED_S, "2024-05-02", "2024-01-10", true, false},
        {"the lead speaks of the aspect (baking)", CLASS_L, "They switched their baking to twice a day instead of once a day.[^2]",
         "2024-01-10", "2024-05-02", true, false},
        {"its message does not say it", CLASS_L, FEED_S, "2024-01-10", "2024-05-02", false, false},
        {"no change told", CLASS_L, "They feed the starter twice a day.[^2]", "2024-01-10", "2024-05-02", true, false},
        {"a lead of four sentences already", CLASS_L " Their oven is a gas one.[^1]", FEED_S, "2024-01-10", "2024-05-02", true, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = stale_lead(cases[i].lead2, cases[i].body, cases[i].d1, cases[i].d2, "conv:8f504e46#dr-c5-m0");
        dream_article *a = NULL;
        assert_int_equal(dream_article_parse(t, strlen(t), &a), 0);
        size_t n = 99;
        assert_int_equal(synth_lead_follow_body(a, cases[i].held ? held_all : held_one, NULL, &n), 0);
        if (n != (cases[i].want ? 1u : 0u)) fprintf(stderr, "case \"%s\": %zu, want %d\n%s", cases[i].why, n, cases[i].want, dream_article_text(a, NULL));
        assert_int_equal(n, cases[i].want ? 1 : 0);
        if (cases[i].want) {
            const char *lead = dream_article_lead(a);
            const char *want_end = "Baking happens on Saturdays.[^1] They switched their starter feeding to twice a day instead of once a day.[^2]";
            size_t ll = strlen(lead);
            while (ll && isspace((unsigned char)lead[ll - 1])) ll--;
            assert_true(ll >= strlen(want_end));
            assert_memory_equal(lead + ll - strlen(want_end), want_end, strlen(want_end));
            assert_true(strncmp(lead, "**Sourdough** is bread the person bakes at home.[^1]", 52) == 0);
        } else {
            assert_string_equal(dream_article_text(a, NULL), t);
        }
        dream_article_free(a);
        free(t);
    }
#undef FEED_S
#undef CLASS_L
}

/* Pinning: a sentence's footnote moves to the message of its chunk that says it (the assistant's
 * answer three turns in, the person's question), and stays on the chunk's own message on a tie, on
 * a single shared word, or when the marker cites something else; `only` pins one marker alone. */
static void test_pin_cites_the_message_that_says_the_sentence(void **state)
{
    struct ctx *c = *state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/corpus/claude", data_dir);
    assert_int_equal(fixture_ingest(c->store, dir), 0);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store), "SELECT id FROM conversations WHERE cite = '8f504e46'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    /* the chunk of all four messages, as the stages read it (its own message: the person's first) */
    struct synth_src *src = calloc(1, sizeof *src);
    assert_non_null(src);
    *src = (struct synth_src){.conversation = sqlite3_column_int64(st, 0), .first = 0, .last = 3, .cite = strdup("8f504e46"),
                              .title = strdup("Tools for a long ride")};
    sqlite3_finalize(st);
    assert_int_equal(synth_src_messages(c->store, src, 0), 0);
    assert_string_equal(src->msg, "dr-c5-m0");
    assert_int_equal(src->n_msgs, 4);
    static const char text[] =
        "# Bicycle Maintenance\n\n"
        "**Bicycle Maintenance** is a chore the person came back to.[^1] To fix a derailleur knocked out of line, bend the hanger "
        "back gently and adjust the limit screws.[^1] They asked about bike repair tools for a long ride.[^1]\n\n"
        "## Tools\n\nA spare tube and tyre levers go on every long ride.[^2][^1] They knocked it back.[^1]\n\n"
        "## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n"
        "[^2]: `conv:717766a6#dr-c1-m4` (2024-01-10, Feeding a new sourdough starter)\n";
    static const char want[] =
        "# Bicycle Maintenance\n\n"
        "**Bicycle Maintenance** is a chore the person came back to.[^1] To fix a derailleur knocked out of line, bend the hanger "
        "back gently and adjust the limit screws.[^2] They asked about bike repair tools for a long ride.[^1]\n\n"
        "## Tools\n\nA spare tube and tyre levers go on every long ride.[^3][^4] They knocked it back.[^1]\n\n"
        "## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n"
        "[^2]: `conv:8f504e46#dr-c5-m3` (2024-05-02, Tools for a long ride)\n"
        "[^3]: `conv:717766a6#dr-c1-m4` (2024-01-10, Feeding a new sourdough starter)\n"
        "[^4]: `conv:8f504e46#dr-c5-m1` (2024-05-02, Tools for a long ride)\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    /* only marker 2 (a citation of no source at hand): nothing moves */
    assert_int_equal(synth_pin_citations(a, src, 1, 2), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_string_equal(dream_article_text(a, NULL), text);
    assert_int_equal(synth_pin_citations(a, src, 1, 0), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_string_equal(dream_article_text(a, NULL), want);
    /* a second pin finds every sentence where it belongs */
    assert_int_equal(synth_pin_citations(a, src, 1, 0), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    assert_string_equal(dream_article_text(a, NULL), want);
    dream_article_free(a);
    synth_src_free(src, 1);
}


/* The chunk of conversation cite from message first to last, as the stages read it. */
static void src_of(struct ctx *c, struct synth_src *s, const char *cite, int64_t first, int64_t last)
{
    char q[160];
    snprintf(q, sizeof q, "SELECT id FROM conversations WHERE cite = '%s'", cite);
    *s = (struct synth_src){.conversation = test_store_scalar(c->store, q), .first = first, .last = last, .cite = strdup(cite),
                            .title = strdup(cite)};
    assert_int_equal(synth_src_messages(c->store, s, 0), 0);
}

/* Grounding: with the bike-repair chunk and the sourdough chunk at hand, a sentence cited to the
 * bike chunk that shares no word with it goes to the sourdough message that says it, or is
 * dropped when no note at hand says it; a sentence sharing one word stays; the lead's defining
 * sentence and a sentence citing a note not at hand stay whatever they say; a section left
 * without prose goes; with `only`, only sentences carrying that marker are judged. */
static void test_unfounded_sentences_go_or_find_their_note(void **state)
{
    struct ctx *c = *state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/corpus/claude", data_dir);
    assert_int_equal(fixture_ingest(c->store, dir), 0);
    struct synth_src *src = calloc(2, sizeof *src);
    assert_non_null(src);
    src_of(c, &src[0], "8f504e46", 0, 3); /* bike tools: dr-c5-m0..m3 */
    src_of(c, &src[1], "717766a6", 0, 3); /* the sourdough starter: dr-c1-m0..m3 */
    static const char text[] =
        "# Bicycle Maintenance\n\n"
        "**Bicycle Maintenance** is a hobby of gears and grease.[^1] They sing in a choir on Fridays.[^1] A spare tube goes on every "
        "ride.[^1]\n\n"
        "## Tools\n\nThey discard half of the starter before each feeding.[^1] Their kayak is green.[^2] Cycling is joyful.[^1]\n\n"
        "## Choir\n\nThey sing bass.[^1]\n\n"
        "## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n"
        "[^2]: `conv:9a9a9a9a#x-m0` (2024-04-20, A weekend on the lake)\n";
    static const char want[] =
        "# Bicycle Maintenance\n\n"
        "**Bicycle Maintenance** is a hobby of gears and grease.[^1] A spare tube goes on every ride.[^1]\n\n"
        "## Tools\n\nThey discard half of the starter before each feeding.[^2] Their kayak is green.[^3]\n\n"
        "## References\n\n[^1]: `conv:8f504e46#dr-c5-m0` (2024-05-02, Tools for a long ride)\n"
        "[^2]: `conv:717766a6#dr-c1-m1` (2024-01-10, 717766a6)\n"
        "[^3]: `conv:9a9a9a9a#x-m0` (2024-04-20, A weekend on the lake)\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    size_t dropped = 9, recited = 9;
    /* only marker 2 (a note not at hand): nothing is judged unfounded */
    assert_int_equal(synth_drop_unfounded(a, src, 2, 2, &dropped, &recited), 0);
    assert_int_equal(dropped + recited, 0);
    assert_string_equal(dream_article_text(a, NULL), text);
    assert_int_equal(synth_drop_unfounded(a, src, 2, 0, &dropped, &recited), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    if (strcmp(dream_article_text(a, NULL), want) != 0) fprintf(stderr, "%s", dream_article_text(a, NULL));
    assert_string_equal(dream_article_text(a, NULL), want);
    assert_int_equal(dropped, 3); /* the choir twice (one a whole section), cycling */
    assert_int_equal(recited, 1);
    /* a second pass finds nothing more */
    assert_int_equal(synth_drop_unfounded(a, src, 2, 0, &dropped, &recited), 0);
    assert_int_equal(dropped + recited, 0);
    dream_article_free(a);
    synth_src_free(src, 2);
}

/* One source of one message of the person's, for the grounding tests. */
static void one_msg_src(struct synth_src *s, const char *cite, const char *id, const char *title, const char *said)
{
    char text[256];
    snprintf(text, sizeof text, "[user] %s\n", said);
    s->cite = strdup(cite);
    s->msg = strdup(id);
    s->text = strdup(text);
    s->date = strdup("2024-05-02");
    s->title = strdup(title);
    s->msgs = calloc(1, sizeof *s->msgs);
    assert_non_null(s->msgs);
    s->msgs[0] = (struct synth_src_msg){.id = strdup(id), .user = true, .at = 7, .len = strlen(text) - 8};
    s->n_msgs = 1;
}

/* Grounds text against src[0..n) (synth_drop_unfounded, then normalize) and checks the result
 * is want, with the counts of sentences dropped and re-cited. */
static void assert_grounded(const char *text, const struct synth_src *src, size_t n, const char *want, size_t want_dropped, size_t want_recited)
{
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, strlen(text), &a), 0);
    size_t dropped = 9, recited = 9;
    assert_int_equal(synth_drop_unfounded(a, src, n, 0, &dropped, &recited), 0);
    assert_int_equal(dream_article_normalize(a, NULL, NULL, NULL), 0);
    if (strcmp(dream_article_text(a, NULL), want) != 0) fprintf(stderr, "%s", dream_article_text(a, NULL));
    assert_string_equal(dream_article_text(a, NULL), want);
    assert_int_equal(dropped, want_dropped);
    assert_int_equal(recited, want_recited);
    dream_article_free(a);
}

/* assert_grounded against one note: conversation 0000000a, message m0, the person saying said. */
static void assert_grounded_one(const char *title, const char *said, const char *text, const char *want, size_t want_dropped,
                                size_t want_recited)
{
    struct synth_src *src = calloc(1, sizeof *src);
    assert_non_null(src);
    one_msg_src(&src[0], "0000000a", "m0", title, said);
    assert_grounded(text, src, 1, want, want_dropped, want_recited);
    synth_src_free(src, 1);
}

/* Grounding with more sources than a small table would hold (an article of 70 chunks): a
 * sentence citing the 70th says what it says and stays; one citing it that no source says goes. */
static void test_unfounded_with_seventy_sources(void **state)
{
    (void)state;
    enum { N = 70 };
    struct synth_src *src = calloc(N, sizeof *src);
    assert_non_null(src);
    for (size_t k = 0; k < N; k++) {
        char cite[16], id[16];
        snprintf(cite, sizeof cite, "%08zx", k + 1);
        snprintf(id, sizeof id, "m%zu", k);
        one_msg_src(&src[k], cite, id, "Kiln day", k == N - 1 ? "The glaze on the teapot cracked in the kiln." : "Nothing of note today.");
    }
    static const char text[] = "# Pottery\n\n**Pottery** is a hobby.[^1] The glaze cracked in the kiln.[^1] They sail on Sundays.[^1]\n\n"
                               "## References\n\n[^1]: `conv:00000046#m69` (2024-05-02, Kiln day)\n";
    static const char want[] = "# Pottery\n\n**Pottery** is a hobby.[^1] The glaze cracked in the kiln.[^1]\n\n"
                               "## References\n\n[^1]: `conv:00000046#m69` (2024-05-02, Kiln day)\n";
    assert_grounded(text, src, N, want, 1, 0);
    synth_src_free(src, N);
}

/* An infobox value is a claim: a fact stays when the title or the notes hold every content word
 * of it (a plural "s" either way), a label (type) when they hold one, a stance (status, opinion)
 * always; a value of no content word stays; a [[link]] is not read. The values below are the
 * ones dream-mini wrote for a sourdough starter (Gus) over notes that never say them. */
/* A number of an infobox value must stand beside the words it stands beside in the note: a small
 * model joins the month of a corrected date to the day of the wrong one. */
static void test_infobox_numbers_stand_where_the_note_puts_them(void **state)
{
    (void)state;
    const char *note = "[user] I need to correct myself: Cornelius's birthday is November 12, not July 17. "
                       "He weighs 3 kg now and I feed him 1:2:2 twice a day, at 75% hydration. Route 66 trip.";
    static const struct {
        const char *value;
        bool placed;
    } cases[] = {
        {"November 12", true},
        {"November 17", false},      /* the 17 of July */
        {"July 12", false},
        {"july 17", true},           /* case aside */
        {"12 November", false},      /* the word on the other side */
        {"3 kg", true},              /* no content word beside it: anywhere */
        {"5 kg", true},              /* not this rule's to judge (synth_value_held is) */
        {"75%", true},
        {"1:2:2 twice", true},
        {"1:2:2 daily", false},
        {"Route 66", true},
        {"Route 67", false},
        {"the pantry", true},        /* no number */
        {"", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool got = synth_numbers_placed(cases[i].value, note);
        if (got != cases[i].placed) fprintf(stderr, "\"%s\": %d\n", cases[i].value, got);
        assert_true(got == cases[i].placed);
    }
}

static void test_infobox_values_are_held_by_the_notes(void **state)
{
    (void)state;
    struct synth_src *src = calloc(2, sizeof *src);
    assert_non_null(src);
    one_msg_src(&src[0], "0000000a", "m0", "Starter", "My sourdough starter, Gus, has gone sluggish since I moved him to the pantry.");
    one_msg_src(&src[1], "0000000b", "m1", "Loaves", "I bake two loaves on Sundays at 75% hydration.");
    unsigned *held = NULL;
    long n = synth_notes_words("Gus", src, 2, &held);
    assert_true(n > 0);
    static const struct {
        const char *key, *value;
        bool held;
    } cases[] = {
        {"lives_in", "Toronto):", false},             /* no note says Toronto */
        {"birthday", "July 15", false},
        {"location", "the pantry", true},
        {"bakes", "loaves on Sunday", true},          /* the plural "s" added */
        {"bakes", "two loaf", false},                 /* only an "s" either way */
        {"homes", "pantries", false},
        {"rooms", "pantrys", true},                   /* ...taken away */
        {"bakes", "two loaves on Mondays", false},    /* one word no note holds is enough */
        {"hydration", "75%", true},                   /* no content word */
        {"type", "sourdough culture", true},          /* a label: one held word */
        {"type", "sourd containingcker", false},      /* a garble holds none */
        {"type", "sourdough culture:[user] Now", false}, /* the prompt's frame: a leak, held words or not */
        {"opinion", "loves it --- end chunk", false},
        {NULL, "Gus <<<", false},
        {"status", "active", true},                   /* a stance */
        {"opinion", "loves it", true},
        {"fed_by", "[[Maestro Lee]]", true},          /* a link is checked as a link */
        {"fed_by", "Maestro Lee", false},
        {NULL, "Gus the starter", true},              /* an alias */
        {NULL, "Augustus", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool ok = !cases[i].held;
        assert_int_equal(synth_value_held(cases[i].key, cases[i].value, held, (size_t)n, &ok), 0);
        if (ok != cases[i].held) fprintf(stderr, "%s: %s\n", cases[i].key ? cases[i].key : "(alias)", cases[i].value);
        assert_true(ok == cases[i].held);
    }
    free(held);
    synth_src_free(src, 2);
}

/* A name the model wrote (capitalised mid-sentence) that no message its footnote cites holds is
 * invented, however many other words the sentence shares: the sentence goes, or is cited to the
 * note that holds the name and says it. Sentence starts, the subject's own name, [[links]] and
 * the lead's defining sentence are not judged by it. */
static void test_grounding_refuses_a_name_no_note_holds(void **state)
{
    (void)state;
    struct synth_src *src = calloc(2, sizeof *src);
    assert_non_null(src);
    one_msg_src(&src[0], "0000000a", "m0", "Market day", "I met Leonard at the market in Laredo.");
    one_msg_src(&src[1], "0000000b", "m1", "Market day", "Karen met Leonard at the market last year.");
    static const char text[] =
        "# Leonard\n\n**Leonard** is a neighbour from Springfield.[^1] He met Jessica at the market.[^1] He met Karen at the "
        "market.[^1] They walk to the market in Laredo.[^1]\n\n"
        "## Market\n\nLeonard goes to the market.[^1] He knows [[Karen]] from the market.[^1] Everyone at the market calls him "
        "Leonard.[^1]\n\n"
        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Market day)\n";
    static const char want[] =
        "# Leonard\n\n**Leonard** is a neighbour from Springfield.[^1] He met Karen at the market.[^2] They walk to the market in "
        "Laredo.[^1]\n\n"
        "## Market\n\nLeonard goes to the market.[^1] He knows [[Karen]] from the market.[^1] Everyone at the market calls him "
        "Leonard.[^1]\n\n"
        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Market day)\n[^2]: `conv:0000000b#m1` (2024-05-02, Market day)\n";
    assert_grounded(text, src, 2, want, 1, 1); /* Jessica goes; Karen's note holds her and says it */
    synth_src_free(src, 2);
}

/* A sentence that starts with a garbled copy of the title ("Parake" in the article Parrot) is
 * repaired when the message it cites says the rest, and goes when it does not; the title with an
 * ending, and a word a note holds, are no garbles. */
static void test_grounding_repairs_a_garbled_title_where_a_sentence_starts(void **state)
{
    (void)state;
    assert_grounded_one("Parrot progress", "I host Parrot on a cheap VPS; it is feature-complete. Parasols help.",
                        "# Parrot\n\n**Parrot** is the person's script collection.[^1] Parake is feature-complete now.[^1] Parakeet is in "
                        "beta.[^1] Parrots run on a cheap VPS.[^1] Parasols help on a cheap VPS.[^1]\n\n"
                        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Parrot progress)\n",
                        "# Parrot\n\n**Parrot** is the person's script collection.[^1] Parrot is feature-complete now.[^1] Parrots run on "
                        "a cheap VPS.[^1] Parasols help on a cheap VPS.[^1]\n\n"
                        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Parrot progress)\n",
                        1, 0);
}

/* A small model that restates its notes (DREAM_NAMES_FROM_TEXT, as dream-mini's GGUF says): a
 * sentence must share 2 in 5 of its content words with the message it cites, the subject's name
 * aside; one borrowed word among nonsense ("Out of Medellin is really into ...") is not enough,
 * though it is for a model that may paraphrase. */
static void test_grounding_holds_a_restating_model_to_its_words(void **state)
{
    (void)state;
    static const char text[] =
        "# Cornelius\n\n**Cornelius** is the person's cousin.[^1]\n\n## Location\n\n"
        "Cornelius now lives in Dayton instead of Medellin.[^1] Out of Medellin is really into skate cancan spare biscuits.[^1]\n\n"
        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Cornelius moved)\n";
    static const char kept[] =
        "# Cornelius\n\n**Cornelius** is the person's cousin.[^1]\n\n## Location\n\n"
        "Cornelius now lives in Dayton instead of Medellin.[^1]\n\n"
        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Cornelius moved)\n";
    const char *said = "My cousin Cornelius moved: he now lives in Dayton instead of Medellin.";
    assert_int_equal(setenv("DREAM_NAMES_FROM_TEXT", "0", 1), 0);
    assert_grounded_one("Cornelius moved", said, text, text, 0, 0);
    assert_int_equal(setenv("DREAM_NAMES_FROM_TEXT", "1", 1), 0);
    assert_grounded_one("Cornelius moved", said, text, kept, 1, 0);
    assert_int_equal(unsetenv("DREAM_NAMES_FROM_TEXT"), 0);
}

/* A sentence that copies a note's cut mark is unfinished: it goes, whatever words it shares. */
static void test_grounding_drops_a_sentence_with_a_cut_mark(void **state)
{
    (void)state;
    assert_grounded_one("Bake day", "My sourdough starter, Gus, has gone sluggish in the pantry. [...]",
                        "# Gus\n\n**Gus** is the person's sourdough starter.[^1]\n\n## Care\n\nGus has gone sluggish in the [...].[^1] "
                        "Gus sits in the pantry.[^1]\n\n## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                        "# Gus\n\n**Gus** is the person's sourdough starter.[^1]\n\n## Care\n\nGus sits in the pantry.[^1]\n\n"
                        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                        1, 0);
}

/* A sentence with a broken footnote marker ("on 1] The person feeds him", a marker's tail
 * without its "[^") is a garble that would show its stray bracket to the reader: it goes, though
 * its note holds the words; a number in brackets ("tray[1]") is no marker and stays. */
static void test_grounding_drops_a_sentence_with_a_broken_marker(void **state)
{
    (void)state;
    assert_grounded_one("Bake day", "My sourdough starter, Gus, sits on a tray in the pantry. I feed him rye.",
                        "# Gus\n\n**Gus** is the person's sourdough starter.[^1]\n\n## Care\n\nGus sits on a tray on 1] The person "
                        "feed him rye.[^1] Gus sits in the pantry.[^1] Gus sits on tray[1] in the pantry.[^1]\n\n## References\n\n"
                        "[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                        "# Gus\n\n**Gus** is the person's sourdough starter.[^1]\n\n## Care\n\nGus sits in the pantry.[^1] Gus sits on "
                        "tray[1] in the pantry.[^1]\n\n## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                        1, 0);
}

/* A sentence whose change cue contrasts a phrase with itself ("at 7 kg instead of 7 kg", a
 * model's garble of "3 kg instead of 7 kg") says nothing and goes, though its note holds every
 * word; the note's own sentence stays, as does a real contrast. */
static void test_grounding_drops_a_sentence_that_contrasts_a_value_with_itself(void **state)
{
    (void)state;
    assert_grounded_one("Vet visit", "The vet says Antoine is now 3 kg instead of 7 kg.",
                        "# Antoine\n\n**Antoine** is the person's dog.[^1] The vet weighed Antoine at 7 kg instead of 7 kg.[^1] The vet says "
                        "Antoine is now 3 kg instead of 7 kg.[^1]\n\n## Health\n\nAntoine is 7 KG rather than 7 kg, the vet says.[^1]\n\n"
                        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Vet visit)\n",
                        "# Antoine\n\n**Antoine** is the person's dog.[^1] The vet says Antoine is now 3 kg instead of 7 kg.[^1]\n\n"
                        "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Vet visit)\n",
                        2, 0);
}

/* The lead's defining sentence is never dropped but repaired: a bold subject sharing no word
 * with the title, or with a word no note holds, becomes the title, and a parenthesis no note
 * holds goes; one that shares a word with the title, or a parenthesis a note says, stays. */
static void test_grounding_repairs_the_defining_sentence(void **state)
{
    (void)state;
    struct synth_src *src = calloc(1, sizeof *src);
    assert_non_null(src);
    one_msg_src(&src[0], "0000000a", "m0", "Bake day", "My sourdough starter, Gus, has gone sluggish in the pantry.");
    assert_grounded("# Gus\n\n**Gusan diet** is the person's sourdough starter (a rowboat), kept in the pantry (a cool one).[^1]\n\n"
                    "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                    src, 1,
                    "# Gus\n\n**Gus** is the person's sourdough starter, kept in the pantry.[^1]\n\n"
                    "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                    0, 0);
    /* a bold subject with the title's word and one no note holds */
    assert_grounded("# Gus\n\n**Benjamin Gus** is the person's sourdough starter.[^1]\n\n"
                    "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                    src, 1,
                    "# Gus\n\n**Gus** is the person's sourdough starter.[^1]\n\n"
                    "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n",
                    0, 0);
    static const char kept[] = "# Gus\n\n**Gus the starter** is the person's sourdough starter (sluggish of late).[^1]\n\n"
                               "## References\n\n[^1]: `conv:0000000a#m0` (2024-05-02, Bake day)\n";
    assert_grounded(kept, src, 1, kept, 0, 0);
    synth_src_free(src, 1);
}

/* synth_src_fit: sources over the budget lose their last messages, the longest first, down to
 * their cited message; what is left is a prefix of the text that ends where a message began. */
static void test_fit_trims_the_longest_source_to_its_cited_message(void **state)
{
    struct ctx *c = *state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/corpus/claude", data_dir);
    assert_int_equal(fixture_ingest(c->store, dir), 0);
    int64_t conv = test_store_scalar(c->store, "SELECT id FROM conversations WHERE cite = '8f504e46'");
    struct synth_src *src = calloc(2, sizeof *src);
    assert_non_null(src);
    src[0] = (struct synth_src){.conversation = conv, .first = 0, .last = 3};
    src[1] = (struct synth_src){.conversation = conv, .first = 2, .last = 3};
    assert_int_equal(synth_src_messages(c->store, &src[0], 0), 0);
    assert_int_equal(synth_src_messages(c->store, &src[1], 0), 0);
    assert_int_equal(src[0].n_msgs, 4);
    assert_int_equal(src[1].n_msgs, 2);
    char *whole = strdup(src[0].text);
    size_t len0 = strlen(src[0].text), len1 = strlen(src[1].text);
    struct synth_src *both[] = {&src[0], &src[1]};
    /* within the budget: nothing changes */
    synth_src_fit(both, 2, len0 + len1);
    assert_int_equal(src[0].n_msgs, 4);
    assert_string_equal(src[0].text, whole);
    /* one byte over: the longer source loses its last message, and only that */
    synth_src_fit(both, 2, len0 + len1 - 1);
    assert_int_equal(src[0].n_msgs, 3);
    assert_int_equal(src[1].n_msgs, 2);
    assert_null(strstr(src[0].text, "limit screws"));
    assert_non_null(strstr(src[0].text, "knocked out of line"));
    assert_int_equal(strncmp(src[0].text, whole, strlen(src[0].text)), 0);
    assert_int_equal(whole[strlen(src[0].text)], '[');               /* cut where m3's "[assistant] " began */
    assert_int_equal(src[0].text[strlen(src[0].text) - 1], '\n');
    /* no budget at all: each keeps its cited message (the person's first) and those before it */
    synth_src_fit(both, 2, 1);
    assert_int_equal(src[0].n_msgs, 1);
    assert_string_equal(src[0].msgs[0].id, src[0].msg);
    assert_non_null(strstr(src[0].text, "long ride"));
    assert_null(strstr(src[0].text, "multitool"));
    assert_int_equal(src[1].n_msgs, 1);
    assert_non_null(strstr(src[1].text, "derailleur"));
    free(whole);
    synth_src_free(src, 2);
}

/* A chunk is each entity's source only from where the person first names it to where they turn
 * to another of the chunk's subjects for good. */
static int64_t focus_entity(dream_store *s, const char *name)
{
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO pipeline_entities (name, normal, squeezed, route, created_at) VALUES ('%s', lower('%s'), "
             "replace(lower('%s'), ' ', ''), 'article', 0)", name, name, name);
    assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    return sqlite3_last_insert_rowid(store_db(s));
}

static int64_t focus_chunk(dream_store *s, const char *conv, int64_t first, int64_t last, const int64_t *entities)
{
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO chunks (conversation, first_position, last_position, label, revision, created_at) "
             "SELECT id, %lld, %lld, 'x', 1, 0 FROM conversations WHERE source_id = '%s'", (long long)first, (long long)last, conv);
    assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    int64_t chunk = sqlite3_last_insert_rowid(store_db(s));
    for (const int64_t *e = entities; *e; e++) {
        snprintf(sql, sizeof sql, "INSERT INTO chunk_mentions (chunk, normal, surface, entity) SELECT %lld, normal, name, id "
                 "FROM pipeline_entities WHERE id = %lld", (long long)chunk, (long long)*e);
        assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    }
    return chunk;
}

/* The one source of entity: its first and last position, and its text. */
static void focus_source(dream_store *s, int64_t entity, int64_t first, int64_t last, const char *has, const char *lacks)
{
    struct synth_src *src;
    size_t n;
    assert_int_equal(synth_entity_sources(s, entity, NULL, true, &src, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(src[0].first, first);
    assert_int_equal(src[0].last, last);
    assert_non_null(strstr(src[0].text, has));
    if (lacks) assert_null(strstr(src[0].text, lacks));
    synth_src_free(src, n);
}

static void test_sources_of_a_chunk_of_several_subjects_keep_each_its_part(void **state)
{
    struct ctx *c = *state;
    struct dream_message m[] = {
        {"user", "u0", 0, "I practise fan dance on Saturday mornings."},  {"assistant", "a1", 0, "Warm up first."},
        {"user", "u2", 0, "Also, Leonard moved to a design studio."},     {"assistant", "a3", 0, "A big change."},
        {"user", "u4", 0, "How do I ask him about it?"},                  {"assistant", "a5", 0, "Just ask."},
        {"user", "u6", 0, "Back to fan dance: I now go every weekday."},  {"assistant", "a7", 0, "Rest on Sundays."},
        {"user", "u8", 0, "And Laredo is best in spring, I think now."},  {"assistant", "a9", 0, "Spring is mild there."},
    };
    struct dream_conversation conv = {.source = "pi", .id = "several", .title = "Catching up", .updated_ms = 1000, .messages = m,
                                      .n_messages = 10};
    assert_int_equal(dream_store_put(c->store, &conv, &(enum dream_store_outcome){0}), 0);
    int64_t dance = focus_entity(c->store, "fan dance"), leonard = focus_entity(c->store, "Leonard"), laredo = focus_entity(c->store, "Laredo");
    focus_chunk(c->store, "several", 0, 9, (const int64_t[]){dance, leonard, laredo, 0});
    /* fan dance comes back after Leonard, so his part stays in its source; Laredo's does not */
    focus_source(c->store, dance, 0, 7, "every weekday", "Laredo");
    focus_source(c->store, leonard, 2, 5, "design studio", "Saturday mornings");
    focus_source(c->store, laredo, 8, 9, "best in spring", "fan dance");
    /* a chunk of one subject starts where the person names it; one where the person never names
     * the entity stays whole */
    struct dream_message one[] = {{"user", "v0", 0, "Thanks for the tips."}, {"assistant", "b1", 0, "Anytime."},
                                  {"user", "v2", 0, "My tai chi class moved to the old town."}, {"assistant", "b3", 0, "Nice."}};
    struct dream_conversation conv2 = {.source = "pi", .id = "one", .title = "Tai chi", .updated_ms = 2000, .messages = one, .n_messages = 4};
    assert_int_equal(dream_store_put(c->store, &conv2, &(enum dream_store_outcome){0}), 0);
    int64_t tai = focus_entity(c->store, "tai chi"), cycling = focus_entity(c->store, "cycling");
    focus_chunk(c->store, "one", 0, 3, (const int64_t[]){tai, 0});
    focus_source(c->store, tai, 2, 3, "old town", "Thanks for the tips");
    struct dream_message inferred[] = {{"user", "w0", 0, "My bike chain squeaks."}, {"assistant", "c1", 0, "Oil it."},
                                       {"user", "w2", 0, "Leonard says so too."}, {"assistant", "c3", 0, "He is right."}};
    struct dream_conversation conv3 = {.source = "pi", .id = "inferred", .title = "Chain", .updated_ms = 3000, .messages = inferred,
                                       .n_messages = 4};
    assert_int_equal(dream_store_put(c->store, &conv3, &(enum dream_store_outcome){0}), 0);
    focus_chunk(c->store, "inferred", 0, 3, (const int64_t[]){cycling, leonard, 0});
    focus_source(c->store, cycling, 0, 3, "chain squeaks", NULL);
}

/* synth_sanitize keeps one of a phrase a looping model wrote again and again, and nothing else. */
static void sanitized_is(const char *draft, const char *want)
{
    char *got = synth_sanitize(draft, NULL);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_sanitize_keeps_one_of_a_repeated_phrase(void **state)
{
    (void)state;
    sanitized_is("**Laredo** is a city (in Texas on the Rio Grande to the Rio Grande to the Rio Grande to the Rio Grande).[^1]",
                 "**Laredo** is a city (in Texas on the Rio Grande to the Rio Grande).[^1]");
    sanitized_is("The person bakes every Sunday every Sunday every Sunday.", "The person bakes every Sunday.");
    /* one word twice, a sentence with its marker twice, and a phrase on two lines stay */
    sanitized_is("They had had enough, bye bye.", "They had had enough, bye bye.");
    sanitized_is("Gus is fed daily.[^1] Gus is fed daily.[^1]", "Gus is fed daily.[^1] Gus is fed daily.[^1]");
    sanitized_is("the river path\nthe river path", "the river path\nthe river path");
}

/* synth_drop_repeated_sentences: a sentence whose content words and markers an earlier one of
 * the draft already holds goes, with the spaces before it (and its line, when it had one to
 * itself); one that adds a word, cites another note, or has under three content words stays. */
static void test_drop_repeated_sentences_keeps_what_adds(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
        size_t dropped;
    } cases[] = {
        {"The person has written 117 tests for Parrot.[^2] They have written 117 tests for Parrot.[^2]",
         "The person has written 117 tests for Parrot.[^2]", 1},
        {"**Parrot** is a tool the person writes.[^1] The person has written 117 tests for Parrot.[^2] They have written 117 tests for "
         "Parrot.[^2] Parrot uses SQLite.[^2]",
         "**Parrot** is a tool the person writes.[^1] The person has written 117 tests for Parrot.[^2] Parrot uses SQLite.[^2]", 1},
        {"For swan dive they switched to a wishing cap instead of a sailor cap.[^2]\nThe person switched to a wishing cap instead of a "
         "sailor cap.[^2]\nThey dive at the lido.[^3]",
         "For swan dive they switched to a wishing cap instead of a sailor cap.[^2]\nThey dive at the lido.[^3]", 1},
        {"Gus is fed daily.[^1] Gus is fed daily.[^1]", "Gus is fed daily.[^1]", 1},
        /* another note, a new word, too few words: all stay */
        {"They have written 117 tests for Parrot.[^2] They have written 117 tests for Parrot.[^3]",
         "They have written 117 tests for Parrot.[^2] They have written 117 tests for Parrot.[^3]", 0},
        {"They have written 117 tests for Parrot.[^2] They have written 117 unit tests for Parrot.[^2]",
         "They have written 117 tests for Parrot.[^2] They have written 117 unit tests for Parrot.[^2]", 0},
        {"They love it.[^1] They love it.[^1]", "They love it.[^1] They love it.[^1]", 0},
        /* a label the article does not number is not [^1] (atoi made 4294967297 and 01 into 1,
         * and the second sentence went with the only [^1]: the synthesis fuzzer's find) */
        {"The oven runs hot.[^4294967297] The oven runs hot.[^1]", "The oven runs hot.[^4294967297] The oven runs hot.[^1]", 0},
        {"The oven runs hot.[^01] The oven runs hot.[^1]", "The oven runs hot.[^01] The oven runs hot.[^1]", 0},
        {"", "", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = strdup(cases[i].in);
        size_t n = synth_drop_repeated_sentences(t);
        if (strcmp(t, cases[i].want) || n != cases[i].dropped) fprintf(stderr, "case %zu: %zu \"%s\"\n", i, n, t);
        assert_string_equal(t, cases[i].want);
        assert_int_equal(n, cases[i].dropped);
        free(t);
    }
}

/* Counts dream check's "points to no article" problems. */
static void count_redlink(void *ud, int line, const char *message)
{
    (void)line;
    if (strstr(message, "points to no article")) (*(size_t *)ud)++;
}

/* synth_unlink_new_redlinks leaves no new link to a missing article, even one that only the
 * closing normalize forms: there a footnote marker with no definition goes, and the brackets
 * around where it was close into a link (the synthesis fuzzer's find). The person's own link to
 * no article stays. */
static void test_unlink_new_redlinks_sees_a_link_normalize_forms(void **state)
{
    (void)state;
    static const char own[] = "# T\n\n**T** is a thing, says [[Hand]].\n";
    static const char text[] = "# T\n\n**T** is a thing, says [[Hand]].\n\n## Notes\n\n``[[``[^6]`[[Gone]]]]\n";
    dream_article *before = NULL, *after = NULL;
    assert_int_equal(dream_article_parse(own, sizeof own - 1, &before), 0);
    assert_int_equal(dream_article_parse(text, sizeof text - 1, &after), 0);
    size_t unlinked = 0;
    assert_int_equal(synth_unlink_new_redlinks(after, before, "/nonexistent/dream-test-wiki", "T", &unlinked), 0);
    static const char *const vault[] = {"T", "Hand"};
    struct dream_article_check_params cp = {.stem = "T", .stems = vault, .n_stems = 2};
    size_t red = 0;
    dream_article_check(after, &cp, count_redlink, &red);
    if (red) fprintf(stderr, "left: %s\n", dream_article_text(after, NULL));
    assert_int_equal(red, 0);
    assert_non_null(strstr(dream_article_text(after, NULL), "says [[Hand]]."));
    assert_true(unlinked >= 1);
    dream_article_free(before);
    dream_article_free(after);
}

/* The sources of one section prompt are fitted to section_budget: with the least budget a section
 * prompt shows each source only up to its cited message, and the articles are still written. */
static long section_prompts, section_later;

static int section_spy_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                            char **out)
{
    for (size_t i = 0; !strcmp(stage, "synthesis") && i < n; i++)
        if (strstr(in[i].user, "Write the prose of this one section")) {
            section_prompts++;
            section_later += strstr(in[i].user, "limit screws") != NULL || strstr(in[i].user, "multitool") != NULL;
        }
    return dreaming_fake_call(ud, stage, in, n, opts, out);
}

static void test_create_fits_section_sources_to_the_budget(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    ingest(c, "pi");
    struct dream_backend spy = {.name = "section-spy", .call = section_spy_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    p.dry_run = false;
    p.no_commit = true;
    struct dream_synth_result r;
    section_prompts = section_later = 0;
    p.section_budget = 1;
    assert_int_equal(dream_seam_set_backend(&spy), 0);
    assert_int_equal(dream_synth_create(c->store, &p, &r), 0);
    assert_true(section_prompts > 0);
    assert_int_equal(section_later, 0); /* the ride's later messages were cut */
    assert_int_equal(r.created, 5);
    char path[4200];
    snprintf(path, sizeof path, "%s/articles/Bicycle_Maintenance.md", c->wiki);
    assert_int_equal(access(path, F_OK), 0);
}

/* A model call that fails outright stops the run with the error (spec: no answer at all), and
 * frees what the phases built once: the section prompts of a failed call are not freed again. */
static int section_fail_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                             char **out)
{
    if (!strcmp(stage, "synthesis") && n && strstr(in[0].user, "Write the prose of this one section"))
        return dream_error_set(DREAM_EIO, "the backend answered 400");
    return dreaming_fake_call(ud, stage, in, n, opts, out);
}

static void test_create_stops_cleanly_when_the_section_call_fails(void **state)
{
    struct ctx *c = *state;
    ingest(c, "claude");
    struct dream_backend failing = {.name = "section-fails", .call = section_fail_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    struct dream_synth_result r;
    assert_int_equal(dream_seam_set_backend(&failing), 0);
    assert_int_not_equal(dream_synth_create(c->store, &p, &r), 0);
    assert_non_null(strstr(dream_error_last(), "400"));
    char names[8][256], dir[4200];
    snprintf(dir, sizeof dir, "%s/articles", c->wiki);
    assert_int_equal(list_md(dir, names, 8), 0);
}

/* The lead step replaces a stale lead sentence and then appends another change the lead says
 * nothing of. Setting the new lead re-parses the article, so the body sentences found before
 * must not be read from the old section bodies: they were (ASan: heap-use-after-free), and the
 * real pipeline appended the second sentence on some runs and not on others (the article of
 * train/gen_corpus.py --style casual --seed 2145, recorded again: another lead, another file). */
static void test_lead_step_appends_after_a_replacement(void **state)
{
    (void)state;
    static const char text[] =
        "---\n"
        "tags:\n"
        "  - Towns\n"
        "---\n"
        "\n"
        "# Pine Bluff\n"
        "\n"
        "{{stub}}\n"
        "\n"
        "```info\n"
        "type: town\n"
        "kind: thing\n"
        "stay: a rented flat near the cathedral\n"
        "trip_budget: €2150\n"
        "```\n"
        "\n"
        "**Pine Bluff** is a town the person travels to for work (a town in southeast central Arkansas on the Arkansas River).[^1] In Pine Bluff they stay in a rented flat near the cathedral.[^1] A trip to Pine Bluff costs them about €2150.[^2]\n"
        "\n"
        "## Accommodation\n"
        "\n"
        "In Pine Bluff they used to stay in a rented flat near the cathedral.[^1] The person's favourite time to be in Pine Bluff was the shoulder season.[^3] A trip to Pine Bluff costs them about €2150.[^2] They usually travel to Pine Bluff by bus.[^4] Now they stay in a hostel near the old town in Pine Bluff instead of a rented flat near the cathedral.[^4] They have come round to thinking Pine Bluff is best in winter instead of the shoulder season.[^5]\n"
        "\n"
        "## References\n"
        "\n"
        "[^1]: [[Sources/2025-08-06 Pine Bluff accommodation advice (f542a668)#^2b573be9-5711-40c2-902a-35009459cf66|conv:f542a668#2b573be9-5711-40c2-902a-35009459cf66]] (2025-08-06, Pine Bluff: accommodation advice)\n"
        "[^2]: [[Sources/2025-09-21 Odds and ends (04e0ddd6)#^1b6af951-95af-41a4-90e0-10750fb68c4f|conv:04e0ddd6#1b6af951-95af-41a4-90e0-10750fb68c4f]] (2025-09-21, Odds and ends)\n"
        "[^3]: [[Sources/2025-08-06 Pine Bluff accommodation advice (f542a668)#^fd9280f7-627d-45e9-9ae6-1e1fdb767f27|conv:f542a668#fd9280f7-627d-45e9-9ae6-1e1fdb767f27]] (2025-08-06, Pine Bluff: accommodation advice)\n"
        "[^4]: [[Sources/2025-09-21 Odds and ends (04e0ddd6)#^75329d51-cf83-463a-9121-2f66841c39d9|conv:04e0ddd6#75329d51-cf83-463a-9121-2f66841c39d9]] (2025-09-21, Odds and ends)\n"
        "[^5]: [[Sources/2025-09-21 Odds and ends (04e0ddd6)#^8417a9ed-02b2-4360-9880-bc5ee78029d2|conv:04e0ddd6#8417a9ed-02b2-4360-9880-bc5ee78029d2]] (2025-09-21, Odds and ends)\n";
    dream_article *a = NULL;
    assert_int_equal(dream_article_parse(text, sizeof text - 1, &a), DREAM_OK);
    size_t replaced = 0;
    assert_int_equal(synth_lead_follow_body(a, held_all, NULL, &replaced), DREAM_OK);
    assert_int_equal(replaced, 2);
    const char *lead = dream_article_lead(a);
    assert_non_null(strstr(lead, "Now they stay in a hostel near the old town in Pine Bluff instead of a rented flat near the cathedral.[^4]"));
    assert_null(strstr(lead, "In Pine Bluff they stay in a rented flat"));
    const char *end = "They have come round to thinking Pine Bluff is best in winter instead of the shoulder season.[^5]";
    size_t n = strlen(lead), m = strlen(end);
    while (n && (lead[n - 1] == '\n' || lead[n - 1] == ' ')) n--;
    assert_true(n >= m && memcmp(lead + n - m, end, m) == 0);
    dream_article_free(a);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    snprintf(seeds_wiki, sizeof seeds_wiki, "%s/wiki", data_dir);
    snprintf(golden, sizeof golden, "%s/golden", data_dir);
    if (argc > 2 && strcmp(argv[2], "noise") == 0) {
        const struct CMUnitTest noise[] = {cmocka_unit_test_setup_teardown(test_noise_never_corrupts_the_vault, setup, teardown)};
        return cmocka_run_group_tests(noise, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_writes_the_golden_articles_and_commits_them, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_makes_the_articles_folder_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_does_not_bring_back_a_renamed_or_deleted_article, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fold_patches_new_chunks_into_sections_and_keeps_a_hand_edit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_junk_answers_leave_no_file_or_a_valid_stub, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_retries_a_leaky_draft_once_prose_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_retries_a_draft_that_runs_into_a_role_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_retries_a_draft_that_runs_into_a_note_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_retries_a_draft_that_runs_into_a_text_quote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_healing_moves_the_claim_to_the_later_note, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_healing_with_the_dates_swapped_keeps_the_later_morning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_infobox_keeps_the_latest_notes_value_of_a_repeated_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_infobox_repeated_key_follows_the_dates_not_the_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_wraps_first_mentions_and_rebuilds_see_also, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_leaves_urls_tags_math_html_comments_and_tables_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_twice_changes_nothing_the_second_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_lists_articles_that_share_a_chunk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refresh_adds_new_facts_and_keeps_written_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refresh_gives_exactly_one_infobox_after_the_h1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refresh_refuses_junk_and_leaves_the_file_byte_identical, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refuses_a_tightened_section_with_a_broken_marker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refresh_keeps_links_to_articles_only, setup, teardown),
        cmocka_unit_test(test_refresh_grammar_takes_what_the_parser_takes_of_the_fixtures),
        cmocka_unit_test(test_refresh_grammar_noise_answers_are_taken_serial_and_batched),
        cmocka_unit_test_setup_teardown(test_fold_batches_the_pairs_of_distinct_articles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_skips_an_article_with_an_unclosed_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fold_skips_an_article_with_an_unclosed_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_skips_an_article_with_an_unclosed_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_skips_an_article_with_an_unclosed_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_moves_an_old_vault_once_keeping_a_hand_edit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sources_follow_the_citations_and_the_setting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sources_keep_the_notes_an_article_in_a_subfolder_cites, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sources_keep_a_cited_message_a_later_export_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_symlinked_article_stays_a_link_in_git, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_ignored_article_of_the_persons_stays_out_of_git, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_refuses_a_tightening_that_adds_a_footnote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_vault_for_obsidian, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_infobox_links_only_to_articles_that_exist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_infobox_value_is_held_by_one_note, setup, teardown),
        cmocka_unit_test(test_infobox_values_are_held_by_the_notes),
        cmocka_unit_test(test_infobox_numbers_stand_where_the_note_puts_them),
        cmocka_unit_test_setup_teardown(test_create_writes_model_links_to_no_article_as_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fold_writes_model_links_to_no_article_as_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_writes_model_links_to_no_article_as_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_writes_model_links_to_no_article_as_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wikify_leaves_a_section_with_footnote_text_only_in_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pin_cites_the_message_that_says_the_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_lead_takes_up_the_change_the_body_tells, setup, teardown),
        cmocka_unit_test(test_lead_follow_leaves_what_it_cannot_tell),
        cmocka_unit_test_setup_teardown(test_unfounded_sentences_go_or_find_their_note, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grounding_refuses_a_name_no_note_holds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grounding_repairs_the_defining_sentence, setup, teardown),
        cmocka_unit_test(test_unfounded_with_seventy_sources),
        cmocka_unit_test_setup_teardown(test_reconcile_checks_a_field_the_body_tells_as_past, setup, teardown),
        cmocka_unit_test(test_past_successor_takes_the_body_s_later_position),
        cmocka_unit_test(test_message_successor_reads_the_person_s_own_words),
        cmocka_unit_test_setup_teardown(test_reconcile_takes_the_later_position_the_person_told, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_takes_a_correction_that_restates_the_earlier_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconcile_keeps_the_field_when_a_section_rewrite_is_too_short, setup, teardown),
        cmocka_unit_test(test_lead_follow_adds_a_change_the_lead_says_nothing_of),
        cmocka_unit_test_setup_teardown(test_wikify_refresh_takes_the_later_position_of_a_past_value, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fit_trims_the_longest_source_to_its_cited_message, setup, teardown),
        cmocka_unit_test(test_grounding_drops_a_sentence_with_a_cut_mark),
        cmocka_unit_test(test_grounding_drops_a_sentence_that_contrasts_a_value_with_itself),
        cmocka_unit_test(test_grounding_drops_a_sentence_with_a_broken_marker),
        cmocka_unit_test(test_grounding_holds_a_restating_model_to_its_words),
        cmocka_unit_test(test_grounding_repairs_a_garbled_title_where_a_sentence_starts),
        cmocka_unit_test(test_sanitize_keeps_one_of_a_repeated_phrase),
        cmocka_unit_test(test_drop_repeated_sentences_keeps_what_adds),
        cmocka_unit_test(test_unlink_new_redlinks_sees_a_link_normalize_forms),
        cmocka_unit_test(test_lead_step_appends_after_a_replacement),
        cmocka_unit_test_setup_teardown(test_create_drops_what_a_draft_says_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sources_of_a_chunk_of_several_subjects_keep_each_its_part, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_fits_section_sources_to_the_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_stops_cleanly_when_the_section_call_fails, setup, teardown),
    };
    (void)sh;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
