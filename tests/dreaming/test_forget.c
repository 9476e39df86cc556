/* test_forget.c — `dream forget` (issue 18.3) over the fixture corpus dreamt into a real wiki (a
 * git repository) and a real store file: after forgetting, nothing of the conversation is left
 * in the wiki (no file names its hash), in the store (no row, no search hit, not even its text in
 * the file's bytes), a later run of the stages does not write it back, the other articles are
 * byte for byte what they were, and the change is one commit "memory: forget ...". A dry run and
 * bad arguments change nothing at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/util/buf.h"
#include "../src/util/file.h"
#include "dream/article.h"
#include "dream/error.h"
#include "dream/forget.h"
#include "dream/ingest.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "dreaming_test_util.h"
#include "git_test_util.h"

#include <dirent.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *data_dir; /* tests/data/dreaming */
static char seeds_wiki[4096];

struct ctx {
    char root[4096], wiki[4096], store_path[4200];
    dream_store *store;
};

#define MAX_ARTICLES 32

/* The articles of the wiki, each file's name and text. */
struct snapshot {
    size_t n;
    char name[MAX_ARTICLES][256];
    char *text[MAX_ARTICLES];
};

static void use_fake(void)
{
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    assert_int_equal(dream_seam_set_backend(&fake), 0);
}

static void stage(struct ctx *c, int (*run)(dream_store *, const struct dream_synth_params *, struct dream_synth_result *))
{
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = c->wiki;
    use_fake();
    int rc = run(c->store, &p, NULL);
    if (rc) fprintf(stderr, "stage: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
}

static void ingest(struct ctx *c, const char *sub)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/corpus/%s", data_dir, sub);
    assert_int_equal(fixture_ingest(c->store, dir), 0);
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
}

/* The Dreaming as far as it goes with the fake: every stage that writes, then links. */
static void dream_all(struct ctx *c)
{
    stage(c, dream_synth_create);
    stage(c, dream_synth_fold);
    stage(c, dream_synth_link);
}

static int setup(void **state)
{
    struct ctx *c = calloc(1, sizeof *c);
    const char *b = getenv("DREAM_TEST_BUILD");
    char parent[4096];
    snprintf(parent, sizeof parent, "%s/tests", b ? b : "/tmp");
    mkdir(parent, 0755);
    snprintf(c->root, sizeof c->root, "%s/forget-XXXXXX", parent);
    if (!mkdtemp(c->root)) return -1;
    snprintf(c->wiki, sizeof c->wiki, "%s/wiki", c->root);
    snprintf(c->store_path, sizeof c->store_path, "%s/memory.sqlite", c->root);
    if (dream_vault_init(c->wiki, NULL, NULL, NULL)) return -1;
    if (dream_store_open(c->store_path, &c->store)) return -1;
    ingest(c, "claude");
    ingest(c, "pi");
    stage(c, dream_synth_create);
    ingest(c, "openai");
    dream_all(c);
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    struct ctx *c = *state;
    dream_store_close(c->store);
    dream_seam_set_backend(NULL);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->root);
    if (system(cmd) != 0) return -1;
    free(c);
    return 0;
}

static void put_article(struct ctx *c, const char *stem, const char *text)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/%s.md", c->wiki, stem);
    assert_int_equal(file_write_atomic(path, text, strlen(text)), 0);
}

static char *slurp(const char *path)
{
    char *t = NULL;
    size_t len;
    return file_read_all(path, 0, &t, &len) ? NULL : t;
}

static void snap(struct ctx *c, struct snapshot *s)
{
    memset(s, 0, sizeof *s);
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/articles", c->wiki);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".md") != 0) continue;
        assert_true(s->n < MAX_ARTICLES);
        snprintf(s->name[s->n], 256, "%s", e->d_name);
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        s->text[s->n] = slurp(path);
        assert_non_null(s->text[s->n++]);
    }
    closedir(d);
}

static void snap_free(struct snapshot *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->text[i]);
}

/* The text of name in s, or NULL. */
static const char *snap_get(const struct snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name)) return s->text[i];
    return NULL;
}

/* Whether text names conv:<hash> (and not a longer hash). */
static bool names_hash(const char *text, const char *hash)
{
    char needle[64];
    snprintf(needle, sizeof needle, "conv:%s", hash);
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++) {
        char after = p[strlen(needle)];
        if (!((after >= '0' && after <= '9') || (after >= 'a' && after <= 'f'))) return true;
    }
    return false;
}

/* Some file of the wiki (outside .git) holds needle. */
static bool wiki_holds(struct ctx *c, const char *needle)
{
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "grep -rqF --exclude-dir=.git -- '%s' '%s'", needle, c->wiki);
    return system(cmd) == 0;
}

/* The store's file (and its WAL) holds needle's bytes. */
static bool store_file_holds(struct ctx *c, const char *needle)
{
    char cmd[4600];
    snprintf(cmd, sizeof cmd, "cat '%s' '%s-wal' 2>/dev/null | grep -qaF -- '%s'", c->store_path, c->store_path, needle);
    return system(cmd) == 0;
}

static char *git_head_message(struct ctx *c) { return test_git_head_message(c->wiki); }

static int git_head_has(struct ctx *c, const char *rel) { return test_git_head_has(c->wiki, rel); }

static void count_problem(void *ud, int line, const char *message)
{
    fprintf(stderr, "  line %d: %s\n", line, message);
    (*(size_t *)ud)++;
}

/* Every article passes dream check's rules (links against the wiki as it is). */
static void assert_vault_checks(const struct snapshot *s)
{
    char *stems[MAX_ARTICLES];
    for (size_t i = 0; i < s->n; i++) stems[i] = strndup(s->name[i], strlen(s->name[i]) - 3);
    for (size_t i = 0; i < s->n; i++) {
        dream_article *a;
        assert_int_equal(dream_article_parse(s->text[i], strlen(s->text[i]), &a), 0);
        struct dream_article_check_params p = {.stem = stems[i], .stems = (const char *const *)stems, .n_stems = s->n};
        size_t problems = 0;
        dream_article_check(a, &p, count_problem, &problems);
        if (problems) fprintf(stderr, "%s: %zu problem(s)\n%s", s->name[i], problems, s->text[i]);
        assert_int_equal(problems, 0);
        dream_article_free(a);
    }
    for (size_t i = 0; i < s->n; i++) free(stems[i]);
}

static int64_t scalar_text(struct ctx *c, const char *sql, const char *arg)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store), sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The text of the first message of the conversation hash (malloc'd). */
static char *first_message(struct ctx *c, const char *hash)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store),
                                        "SELECT m.text FROM messages m JOIN conversations k ON k.id = m.conversation WHERE k.cite = ?1 "
                                        "ORDER BY m.position LIMIT 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *t = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return t;
}

static int forget(struct ctx *c, const char *const *hashes, size_t n, const char *source, const char *before, bool dry_run,
                  struct dream_forget_result *r)
{
    struct dream_forget_params p;
    dream_forget_default_params(&p);
    p.conversations = hashes;
    p.n_conversations = n;
    p.source = source;
    p.before = before;
    p.wiki_dir = c->wiki;
    p.dry_run = dry_run;
    return dream_forget(c->store, &p, r);
}

/* Everything of hash is gone from the store: rows, derived rows, search hits, bytes. */
static void assert_store_forgot(struct ctx *c, const char *hash, const char *message)
{
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE cite = ?1", hash), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM messages WHERE conversation NOT IN (SELECT id FROM conversations)"), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM chunks WHERE conversation NOT IN (SELECT id FROM conversations)"), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM stage_state WHERE stage = 'segment' AND item NOT IN (SELECT id FROM conversations)"), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM stage_state WHERE (stage = 'extract' OR stage LIKE 'fold/%') "
                                                 "AND item NOT IN (SELECT id FROM chunks)"),
                     0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM pipeline_entities e WHERE NOT EXISTS (SELECT 1 FROM chunk_mentions m "
                                                 "WHERE m.entity = e.id)"),
                     0);
    /* the search index has no message row left of a conversation that is gone, nor an article
     * row citing it */
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM search WHERE rowid >= (1 << 50) AND (rowid - (1 << 50)) / 16777216 NOT IN "
                                                 "(SELECT id FROM conversations)"),
                     0);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM search_sections WHERE ' ' || cites || ' ' LIKE '% ' || ?1 || '%'", hash), 0);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM search WHERE text LIKE '%' || ?1 || '%'", message), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM replaced_messages WHERE conversation NOT IN (SELECT id FROM conversations)"), 0);
    /* and not left behind in free pages or the WAL either */
    assert_false(store_file_holds(c, message));
}

static void test_forget_takes_a_conversation_out_of_the_store_and_the_wiki(void **state)
{
    struct ctx *c = *state;
    const char *hash = "67195f89"; /* "Levain or starter": cited by Sourdough only */
    char *message = first_message(c, hash);
    assert_true(strlen(message) > 20);
    assert_true(store_file_holds(c, message));
    assert_true(wiki_holds(c, hash));
    struct snapshot before;
    snap(c, &before);
    const char *sourdough_before = snap_get(&before, "Sourdough.md");
    assert_non_null(sourdough_before);
    assert_true(names_hash(sourdough_before, hash));

    struct dream_forget_result r;
    const char *hashes[] = {"conv:67195f89"};
    int rc = forget(c, hashes, 1, NULL, NULL, false, &r);
    if (rc) fprintf(stderr, "forget: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    assert_int_equal(r.conversations, 1);
    assert_true(r.messages > 0);
    assert_int_equal(r.edited, 1);
    assert_int_equal(r.removed, 0);
    assert_int_equal(r.committed, 2); /* Sourdough, and the conversation's transcript note gone */

    /* the wiki: no file names it, not even by its file name (the transcript note); Sourdough
     * keeps its other citations; nothing else changed */
    assert_false(wiki_holds(c, hash));
    char find[4700];
    snprintf(find, sizeof find, "find '%s' -path '*/.git' -prune -o -name '*%s*' -print | grep -q .", c->wiki, hash);
    assert_int_not_equal(system(find), 0);
    struct snapshot after;
    snap(c, &after);
    assert_int_equal(after.n, before.n);
    for (size_t i = 0; i < before.n; i++) {
        const char *now = snap_get(&after, before.name[i]);
        assert_non_null(now);
        if (!names_hash(before.text[i], hash)) assert_string_equal(now, before.text[i]); /* byte for byte */
    }
    const char *sourdough = snap_get(&after, "Sourdough.md");
    assert_string_not_equal(sourdough, sourdough_before);
    assert_true(names_hash(sourdough, "717766a6"));
    assert_true(names_hash(sourdough, "302f8d62"));
    assert_null(strstr(sourdough, "Levain"));
    assert_vault_checks(&after);

    /* one commit, titled so, holding the edit */
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: forget conv:67195f89\n", 29) == 0);
    assert_non_null(strstr(m, "articles/Sourdough.md"));
    assert_null(strstr(m, "Levain")); /* the history keeps no title */
    free(m);
    assert_int_equal(git_head_has(c, "articles/Sourdough.md"), 1);

    assert_store_forgot(c, hash, message);

    /* ingest, reading the same export again, does not bring it back */
    char pi[4200];
    snprintf(pi, sizeof pi, "%s/corpus/pi", data_dir);
    int64_t n_before = test_store_scalar(c->store, "SELECT count(*) FROM conversations");
    assert_int_equal(fixture_ingest(c->store, pi), 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM conversations"), n_before);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE cite = ?1", hash), 0);
    assert_false(store_file_holds(c, hash)); /* the key it is remembered by is not its hash */
    /* the stages, run again, have nothing of it to write back */
    assert_int_equal(fixture_run_pipeline(c->store, seeds_wiki, 0, NULL, NULL), 0);
    dream_all(c);
    assert_false(wiki_holds(c, hash));
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE cite = ?1", hash), 0);
    free(message);
    snap_free(&before);
    snap_free(&after);
}

static void test_forget_removes_an_article_left_with_nothing_cited_and_its_links(void **state)
{
    struct ctx *c = *state;
    /* Home_Solar_Panels cites only these two; Balcony_garden cites them and one more. The person
     * wrote an article that links to it, and a redirect to it. */
    const char *hashes[] = {"91c02d8f", "6280818b"};
    put_article(c, "Roof_Work",
                "# Roof Work\n\n**Roof work** waits for the [[Home_Solar_Panels|solar panels]] and for the starter to rest.[^1]\n\n"
                "## Plans\n\nMy sketch of the roof, with the panels page shown in it: ![[Home_Solar_Panels]]\n\n"
                "## See also\n\n- [[Home_Solar_Panels]]\n- [[Sourdough]]\n\n## References\n\n"
                "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    put_article(c, "Solar", "# Solar\n\n*Redirects to [[Home_Solar_Panels]].*\n");
    struct snapshot before;
    snap(c, &before);
    assert_non_null(snap_get(&before, "Home_Solar_Panels.md"));
    struct dream_forget_result r;
    int rc = forget(c, hashes, 2, NULL, NULL, false, &r);
    if (rc) fprintf(stderr, "forget: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    assert_int_equal(r.conversations, 2);
    assert_int_equal(r.removed, 2); /* the article and the redirect to it */
    assert_int_equal(r.unlinked, 1);

    /* an embed of the removed article becomes its text too, without the embed's "!" (it was left
     * before the text: "!Home_Solar_Panels") */
    struct snapshot after;
    snap(c, &after);
    assert_null(snap_get(&after, "Home_Solar_Panels.md"));
    assert_int_equal(git_head_has(c, "articles/Home_Solar_Panels.md"), 0);
    for (size_t i = 0; i < after.n; i++) {
        assert_null(strstr(after.text[i], "[[Home_Solar_Panels")); /* no link to what is gone */
        assert_false(names_hash(after.text[i], hashes[0]));
        assert_false(names_hash(after.text[i], hashes[1]));
        const char *was = snap_get(&before, after.name[i]);
        assert_non_null(was);
        if (!names_hash(was, hashes[0]) && !names_hash(was, hashes[1]) && !strstr(was, "[[Home_Solar_Panels"))
            assert_string_equal(after.text[i], was);
    }
    assert_null(snap_get(&after, "Solar.md"));
    assert_string_equal(snap_get(&after, "Roof_Work.md"),
                        "# Roof Work\n\n{{stub}}\n\n**Roof work** waits for the solar panels and for the starter to rest.[^1]\n\n"
                        "## Plans\n\nMy sketch of the roof, with the panels page shown in it: Home_Solar_Panels\n\n"
                        "## See also\n\n- [[Sourdough]]\n\n## References\n\n"
                        "[^1]: `conv:717766a6#dr-c1-m0` (2024-01-10, Feeding a new sourdough starter)\n");
    const char *balcony = snap_get(&after, "Balcony_garden.md");
    assert_non_null(balcony);
    assert_true(names_hash(balcony, "71b81381"));
    assert_vault_checks(&after);
    char *m = git_head_message(c);
    assert_true(strncmp(m, "memory: forget 2 conversation(s): conv:91c02d8f, conv:6280818b\n", 63) == 0);
    assert_non_null(strstr(m, "articles/Home_Solar_Panels.md (removed)"));
    free(m);
    for (size_t i = 0; i < after.n; i++) {
        char rel[300];
        snprintf(rel, sizeof rel, "articles/%s", after.name[i]);
        assert_int_equal(git_head_has(c, rel), 1); /* every change committed */
    }
    assert_false(wiki_holds(c, "91c02d8f"));
    assert_false(wiki_holds(c, "6280818b"));
    snap_free(&before);
    snap_free(&after);
}

/* An article whose every citation goes is removed only when nothing else is left in it: a
 * section the person wrote by hand, with no footnote, is theirs, and the article stays with it
 * (before, the file went, their section with it, in the forget commit). */
static void test_forget_keeps_an_article_with_the_persons_own_section(void **state)
{
    struct ctx *c = *state;
    const char *hashes[] = {"91c02d8f", "6280818b"}; /* all Home_Solar_Panels cites */
    struct snapshot before;
    snap(c, &before);
    const char *was = snap_get(&before, "Home_Solar_Panels.md");
    assert_non_null(was);
    const char *refs = strstr(was, "## References");
    assert_non_null(refs);
    char text[16384];
    snprintf(text, sizeof text, "%.*s## My notes\n\nThe installer's number is on the fridge. Call before March.\n\n%s", (int)(refs - was), was, refs);
    put_article(c, "Home_Solar_Panels", text);
    struct dream_forget_result r;
    assert_int_equal(forget(c, hashes, 2, NULL, NULL, false, &r), 0);
    struct snapshot after;
    snap(c, &after);
    const char *now = snap_get(&after, "Home_Solar_Panels.md");
    assert_non_null(now);
    assert_non_null(strstr(now, "## My notes\n\nThe installer's number is on the fridge. Call before March.\n"));
    assert_false(names_hash(now, hashes[0]));
    assert_false(names_hash(now, hashes[1]));
    assert_int_equal(git_head_has(c, "articles/Home_Solar_Panels.md"), 1);
    snap_free(&before);
    snap_free(&after);
}

/* A message a later export replaced is the conversation's all the same: forgetting the
 * conversation takes the text the store kept of it, from the rows and from the file's bytes. */
static void test_forget_takes_the_messages_a_later_export_replaced(void **state)
{
    struct ctx *c = *state;
    const char *hash = "67195f89";
    char *message = first_message(c, hash);
    int64_t n_messages = scalar_text(c, "SELECT count(*) FROM messages m JOIN conversations k ON k.id = m.conversation WHERE k.cite = ?1", hash);
    enum dream_store_outcome o;
    assert_int_equal(fixture_put_edited(c->store, hash, 0, "p401-edited", "Is a levain really just a starter by another name?", &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM replaced_messages r JOIN conversations k ON k.id = r.conversation WHERE k.cite = ?1", hash), 1);
    assert_true(store_file_holds(c, message));

    struct dream_forget_result r;
    const char *hashes[] = {hash};
    assert_int_equal(forget(c, hashes, 1, NULL, NULL, false, &r), 0);
    assert_int_equal(r.conversations, 1);
    assert_int_equal(r.messages, n_messages + 1); /* the replaced one counts */
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM replaced_messages"), 0);
    assert_store_forgot(c, hash, message);
    free(message);
}

/* One Claude Code log line of session, as `claude` writes it. */
static void cc_line(struct dbuf *b, const char *session, const char *type, const char *uuid, const char *parent, const char *text)
{
    dbuf_printf(b, "{\"type\":\"%s\",\"uuid\":\"%s\",\"parentUuid\":%s%s%s,\"sessionId\":\"%s\",\"timestamp\":\"2025-01-02T10:00:00Z\","
                   "\"message\":{\"role\":\"%s\",\"content\":\"%s\"}}\n",
                type, uuid, parent ? "\"" : "", parent ? parent : "null", parent ? "\"" : "", session, type, text);
}

static void cc_ingest(struct ctx *c, const char *name, const struct dbuf *b)
{
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = DREAM_FORMAT_CLAUDE_CODE;
    struct dream_ingest_stats st = {0};
    assert_int_equal(dream_ingest_buffer(c->store, name, b->data, b->len, &p, &st), 0);
}

/* A resumed Claude Code session (claude --resume) is a new log that repeats the session it resumes,
 * uuids and all, before its own turns; ingest leaves those to the earlier session. Once the person
 * forgot the earlier session, the next read of the resumed log (grown by a turn, as every night)
 * stored the repeated messages under its own id: what was forgotten came back. They stay
 * forgotten, and so does the forgotten log itself, read again; the resumed session's own turns
 * stay. */
static void test_forget_keeps_a_resumed_sessions_copy_out(void **state)
{
    struct ctx *c = *state;
    static const char *const first[][4] = {
        {"user", "f1", NULL, "What did the vet say about the quokka bite?"},
        {"assistant", "f2", "f1", "Keep the bite clean and watch it for three days."},
    };
    struct dbuf a = {0}, r = {0};
    for (size_t i = 0; i < 2; i++) {
        cc_line(&a, "s-first", first[i][0], first[i][1], first[i][2], first[i][3]);
        cc_line(&r, "s-resumed", first[i][0], first[i][1], first[i][2], first[i][3]);
    }
    cc_line(&r, "s-resumed", "user", "r1", "f2", "Which plants do wombats eat?");
    cc_line(&r, "s-resumed", "assistant", "r2", "r1", "Mostly native grasses and roots.");
    cc_ingest(c, "s-first.jsonl", &a);
    cc_ingest(c, "s-resumed.jsonl", &r);
    const char *quokka = "%quokka bite%";
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM messages WHERE text LIKE ?1", quokka), 1);

    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store), "SELECT cite FROM conversations WHERE source_id = 's-first'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *hash = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    struct dream_forget_result res;
    const char *hashes[] = {hash};
    assert_int_equal(forget(c, hashes, 1, NULL, NULL, false, &res), 0);
    assert_int_equal(res.conversations, 1);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM messages WHERE text LIKE ?1", quokka), 0);

    cc_line(&r, "s-resumed", "user", "r3", "r2", "And how far do they roam?");
    for (int pass = 0; pass < 2; pass++) {
        cc_ingest(c, "s-resumed.jsonl", &r);
        cc_ingest(c, "s-first.jsonl", &a);
        assert_int_equal(scalar_text(c, "SELECT count(*) FROM messages WHERE text LIKE ?1", quokka), 0);
        assert_int_equal(scalar_text(c, "SELECT count(*) FROM messages WHERE text LIKE ?1", "%Keep the bite clean%"), 0);
        assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE source_id = ?1", "s-first"), 0);
        assert_int_equal(scalar_text(c, "SELECT count(*) FROM messages m JOIN conversations k ON k.id = m.conversation "
                                        "WHERE k.source_id = ?1",
                                     "s-resumed"),
                         3);
    }
    assert_false(store_file_holds(c, "quokka bite"));
    free(hash);
    dbuf_free(&a);
    dbuf_free(&r);
}

/* The store's file, its WAL and every file of the wiki (HEAD included), as one string. */
static char *fingerprint(struct ctx *c)
{
    char cmd[9000], out[4300];
    snprintf(out, sizeof out, "%s/fingerprint.txt", c->root);
    snprintf(cmd, sizeof cmd,
             "(cat '%s' '%s-wal' 2>/dev/null | sha256sum; cd '%s' && find . -path ./.git/index -prune -o -type f -print0 | LC_ALL=C sort -z | "
             "xargs -0 sha256sum) > '%s'",
             c->store_path, c->store_path, c->wiki, out);
    assert_int_equal(system(cmd), 0);
    return slurp(out);
}

static void test_forget_dry_run_changes_nothing(void **state)
{
    struct ctx *c = *state;
    /* a quiet store: what is committed checkpointed, so the bytes compared are the whole of it */
    dream_store_close(c->store);
    assert_int_equal(dream_store_open(c->store_path, &c->store), 0);
    char *before = fingerprint(c);
    const char *hashes[] = {"91c02d8f", "6280818b"};
    struct dream_forget_result r;
    assert_int_equal(forget(c, hashes, 2, NULL, NULL, true, &r), 0);
    /* it says what it would do */
    assert_int_equal(r.conversations, 2);
    assert_int_equal(r.removed, 1);
    assert_true(r.messages > 0);
    assert_int_equal(r.committed, 0);
    assert_int_equal(forget(c, NULL, 0, "pi", NULL, true, &r), 0);
    assert_true(r.conversations > 0);
    char *after = fingerprint(c);
    assert_string_equal(after, before);
    free(before);
    free(after);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE cite = ?1", "91c02d8f"), 1);
}

static void test_forget_bad_arguments_are_errors_that_change_nothing(void **state)
{
    struct ctx *c = *state;
    dream_store_close(c->store);
    assert_int_equal(dream_store_open(c->store_path, &c->store), 0);
    char *before = fingerprint(c);
    struct dream_forget_result r;
    const char *unknown[] = {"conv:deadbeef"};
    assert_int_equal(forget(c, unknown, 1, NULL, NULL, false, &r), DREAM_ENOTFOUND);
    assert_non_null(strstr(dream_error_last(), "conv:deadbeef"));
    /* one known and one unknown: still nothing */
    const char *mixed[] = {"67195f89", "deadbeef"};
    assert_int_equal(forget(c, mixed, 2, NULL, NULL, false, &r), DREAM_ENOTFOUND);
    static const char *const bad_days[] = {"2024-02-30", "2024-13-01", "24-01-01", "yesterday", "2024-1-1", ""};
    for (size_t i = 0; i < sizeof bad_days / sizeof bad_days[0]; i++) {
        assert_int_equal(forget(c, NULL, 0, NULL, bad_days[i], false, &r), DREAM_EINVAL);
        assert_non_null(strstr(dream_error_last(), "YYYY-MM-DD"));
    }
    assert_int_equal(forget(c, NULL, 0, "chatgtp", NULL, false, &r), DREAM_ENOTFOUND);
    assert_non_null(strstr(dream_error_last(), "chatgtp"));
    assert_non_null(strstr(dream_error_last(), "pi ("));      /* the sources it does have */
    assert_int_equal(forget(c, mixed, 1, "pi", NULL, false, &r), DREAM_EINVAL); /* both ways at once */
    assert_int_equal(forget(c, NULL, 0, NULL, NULL, false, &r), DREAM_EINVAL);  /* neither */
    /* nothing before the first conversation: no error, nothing forgotten */
    assert_int_equal(forget(c, NULL, 0, NULL, "2000-01-01", false, &r), 0);
    assert_int_equal(r.conversations, 0);
    char *after = fingerprint(c);
    assert_string_equal(after, before);
    free(before);
    free(after);
}

static void test_forget_by_source_and_day(void **state)
{
    struct ctx *c = *state;
    int64_t pi = scalar_text(c, "SELECT count(*) FROM conversations WHERE source = ?1", "pi");
    int64_t all = test_store_scalar(c->store, "SELECT count(*) FROM conversations");
    int64_t old = test_store_scalar(c->store, "SELECT count(*) FROM conversations WHERE source = 'pi' AND coalesce(updated_at, created_at) < "
                                              "1719792000000"); /* 2024-07-01 */
    assert_true(old > 0 && old < pi);
    struct dream_forget_result r;
    int rc = forget(c, NULL, 0, "pi", "2024-07-01", false, &r);
    if (rc) fprintf(stderr, "forget: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    assert_int_equal((int64_t)r.conversations, old);
    assert_int_equal(scalar_text(c, "SELECT count(*) FROM conversations WHERE source = ?1", "pi"), pi - old);
    char *m = git_head_message(c);
    if (r.committed) assert_true(strncmp(m, "memory: forget", 14) == 0 && strstr(m, "from pi before 2024-07-01"));
    free(m);
    rc = forget(c, NULL, 0, "pi", NULL, false, &r);
    assert_int_equal(rc, 0);
    assert_int_equal((int64_t)r.conversations, pi - old);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM conversations"), all - pi);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM conversations WHERE source = 'pi'"), 0);
    struct snapshot after;
    snap(c, &after);
    assert_vault_checks(&after);
    snap_free(&after);
}

/* A forget killed after its store transaction leaves its writes journaled, a removal among
 * them; the next writing stage's recovery finishes them and commits (here: the removal). */
static void test_forget_removal_cut_short_is_finished_by_recovery(void **state)
{
    struct ctx *c = *state;
    char path[4300];
    snprintf(path, sizeof path, "%s/articles/Home_Solar_Panels.md", c->wiki);
    char *text = slurp(path);
    assert_non_null(text);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store),
                                        "INSERT INTO synth_writes (path, before_text, text, state, stage, removes) "
                                        "VALUES ('articles/Home_Solar_Panels.md', ?1, '', 'pending', 'forget', 1)",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    size_t committed = 0;
    assert_int_equal(dream_synth_recover(c->store, c->wiki, &committed), 0);
    assert_int_equal(committed, 1);
    assert_false(access(path, F_OK) == 0);
    assert_int_equal(git_head_has(c, "articles/Home_Solar_Panels.md"), 0);
    char *m = git_head_message(c);
    assert_non_null(strstr(m, "articles/Home_Solar_Panels.md (removed)"));
    free(m);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);
    /* a removal whose file changed since (a hand edit) is undone, not done */
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    assert_int_equal(sqlite3_exec(store_db(c->store),
                                  "INSERT INTO synth_writes (path, before_text, text, state, stage, removes) "
                                  "VALUES ('articles/Sourdough.md', 'not what the file holds', '', 'pending', 'forget', 1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(dream_synth_recover(c->store, c->wiki, &committed), 0);
    assert_true(access(path, F_OK) == 0);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM synth_writes"), 0);
    free(text);
}

/* The search index's blocks (its segments' pages), as one string of their ids and bytes. */
static char *index_blocks(struct ctx *c)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(c->store), "SELECT id, hex(block) FROM search_data WHERE id > 10 ORDER BY id", -1, &st, NULL),
                     SQLITE_OK);
    struct dbuf b = {0};
    while (sqlite3_step(st) == SQLITE_ROW) dbuf_printf(&b, "%lld:%s\n", (long long)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    return b.data ? dbuf_take(&b) : strdup("");
}

/* A forget cut short after the store's transaction (killed in its article writes or its
 * commit; here every commit after the one that deletes the conversation is refused, as a kill
 * would leave them) left every word of the conversation in the search index: a deletion only
 * adds a segment marking index entries deleted, and the merge that drops them (fg_scrub) came at
 * the very end. The merge is now in the deletion's own transaction: the index the cut-short
 * forget leaves is merged already (one more merge changes none of its blocks). */
static bool forget_deleted_a_conversation;
static void note_deletes(void *ud, int op, const char *db, const char *table, sqlite3_int64 rowid)
{
    (void)ud, (void)db, (void)rowid;
    if (op == SQLITE_DELETE && !strcmp(table, "conversations")) forget_deleted_a_conversation = true;
}
static int refuse_commits_after_the_deletion(void *ud)
{
    int *seen = ud;
    if (!forget_deleted_a_conversation) return 0;
    return (*seen)++ > 0;
}

static void test_forget_cut_short_after_the_store_leaves_no_word_in_the_index(void **state)
{
    struct ctx *c = *state;
    int seen = 0;
    forget_deleted_a_conversation = false;
    sqlite3_update_hook(store_db(c->store), note_deletes, NULL);
    sqlite3_commit_hook(store_db(c->store), refuse_commits_after_the_deletion, &seen);
    struct dream_forget_result r;
    const char *hashes[] = {"conv:67195f89"};
    int rc = forget(c, hashes, 1, NULL, NULL, false, &r);
    sqlite3_commit_hook(store_db(c->store), NULL, NULL);
    sqlite3_update_hook(store_db(c->store), NULL, NULL);
    assert_int_not_equal(rc, 0); /* cut short */
    dream_error_clear();
    assert_true(seen > 1);
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM conversations WHERE cite = '67195f89'"), 0);
    char *left = index_blocks(c);
    assert_int_equal(sqlite3_exec(store_db(c->store), "INSERT INTO search (search) VALUES ('optimize')", NULL, NULL, NULL), SQLITE_OK);
    char *merged = index_blocks(c);
    assert_true(strlen(left) > 0);
    if (strcmp(left, merged)) fprintf(stderr, "the index held deleted entries: %zu bytes of blocks, %zu once merged\n", strlen(left) / 2, strlen(merged) / 2);
    assert_string_equal(left, merged);
    free(left);
    free(merged);
}

/* A --wiki that is no wiki dream init set up (a typo) is refused before the store is touched:
 * the conversations left the store while the real wiki kept citing them, and forgetting them
 * again found "no conversation". */
static void test_forget_with_a_wiki_that_is_none_changes_nothing(void **state)
{
    struct ctx *c = *state;
    char nowiki[4300];
    snprintf(nowiki, sizeof nowiki, "%s-typo", c->wiki);
    struct dream_forget_params p;
    dream_forget_default_params(&p);
    const char *hashes[] = {"conv:67195f89"};
    p.conversations = hashes;
    p.n_conversations = 1;
    p.wiki_dir = nowiki;
    struct dream_forget_result r;
    int rc = dream_forget(c->store, &p, &r);
    assert_int_equal(rc, DREAM_ENOTFOUND);
    assert_non_null(strstr(dream_error_last(), "is not a wiki dream init set up"));
    dream_error_clear();
    assert_int_equal(test_store_scalar(c->store, "SELECT count(*) FROM conversations WHERE cite = '67195f89'"), 1);
    assert_true(access(nowiki, F_OK) != 0);
}

/* An article saved with a byte order mark (a Windows editor): the parser leaves the mark out,
 * the file on disk holds it, and so every write to it was refused as "changed on disk since it
 * was read": forget left the forgotten sentence and its dead footnote in place, every time it
 * was run. A file that holds the text after a mark holds the text. */
static void test_forget_edits_an_article_saved_with_a_byte_order_mark(void **state)
{
    struct ctx *c = *state;
    char path[4300], cmd[9000];
    snprintf(path, sizeof path, "%s/articles/Sourdough.md", c->wiki);
    char *text = slurp(path);
    assert_non_null(text);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("\xef\xbb\xbf", f);
    fputs(text, f);
    fclose(f);
    free(text);
    snprintf(cmd, sizeof cmd, "git -C '%s' -c user.name=t -c user.email=t@example.org commit -qam 'saved with a BOM'", c->wiki);
    assert_int_equal(system(cmd), 0);
    struct dream_forget_result r;
    const char *hashes[] = {"conv:67195f89"};
    int rc = forget(c, hashes, 1, NULL, NULL, false, &r);
    if (rc) fprintf(stderr, "forget: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    assert_int_equal(r.edited, 1);
    assert_int_equal(r.left, 0);
    text = slurp(path);
    assert_false(names_hash(text, "67195f89"));
    free(text);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_forget DREAMING_DATA_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    snprintf(seeds_wiki, sizeof seeds_wiki, "%s/wiki", data_dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forget_takes_a_conversation_out_of_the_store_and_the_wiki, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_removes_an_article_left_with_nothing_cited_and_its_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_takes_the_messages_a_later_export_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_keeps_an_article_with_the_persons_own_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_dry_run_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_bad_arguments_are_errors_that_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_by_source_and_day, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_removal_cut_short_is_finished_by_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_cut_short_after_the_store_leaves_no_word_in_the_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_with_a_wiki_that_is_none_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_edits_an_article_saved_with_a_byte_order_mark, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forget_keeps_a_resumed_sessions_copy_out, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
