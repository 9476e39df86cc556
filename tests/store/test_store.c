/* test_store.c — the SQLite store: schema and migrations, idempotent writes, updates in place,
 * citation hashes, and where the store lives (paths). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dream/error.h"
#include "dream/paths.h"
#include "dream/store.h"
#include "store_internal.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dream-test-store-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    (void)state;
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    assert_int_equal(system(cmd), 0);
    (void)state;
    return 0;
}

static const struct dream_message three[] = {
    {"user", "m1", 1000, "How long should sourdough bulk ferment?"},
    {"assistant", "m2", 2000, "Four to six hours at 24 °C, until it has grown by half."},
    {"user", "m3", 3000, "Thanks!"},
};

static struct dream_conversation conv_of(const char *id, const struct dream_message *m, size_t n, int64_t updated)
{
    return (struct dream_conversation){.source = "chatgpt", .id = id, .title = "Bulk fermentation", .created_ms = 1000,
                                       .updated_ms = updated, .origin = "test", .messages = m, .n_messages = n};
}

static void test_store_open_creates_schema_with_wal_and_foreign_keys(void **state)
{
    char path[400];
    snprintf(path, sizeof path, "%s/sub/dir/memory.sqlite", tmpdir);
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    assert_int_equal(dream_store_schema_version(s), DREAM_STORE_SCHEMA_VERSION);
    dream_store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), DREAM_STORE_SCHEMA_VERSION);
    sqlite3_finalize(st);
    sqlite3_close(db);
    (void)state;
}

static void test_store_refuses_a_newer_schema(void **state)
{
    char path[400];
    snprintf(path, sizeof path, "%s/newer.sqlite", tmpdir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), DREAM_EFORMAT);
    assert_null(s);
    assert_non_null(strstr(dream_error_last(), "999"));
    (void)state;
}

/* --store may name any file: a SQLite database of something else is refused before anything is
 * written to it (before, it got dream's twenty tables beside its own, and WAL mode). */
static void test_store_refuses_another_programs_database(void **state)
{
    char path[400];
    snprintf(path, sizeof path, "%s/notes.db", tmpdir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), DREAM_EFORMAT);
    assert_null(s);
    assert_non_null(strstr(dream_error_last(), path));
    assert_non_null(strstr(dream_error_last(), "not a dream store"));
    assert_non_null(strstr(dream_error_last(), "notes"));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1); /* notes alone */
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
    sqlite3_finalize(st);
    sqlite3_close(db);
    /* a file that is not SQLite at all is refused too, and left as it was */
    snprintf(path, sizeof path, "%s/export.json", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[{\"title\": \"not a database\"}]\n", f);
    fclose(f);
    assert_int_not_equal(dream_store_open(path, &s), 0);
    assert_null(s);
    assert_non_null(strstr(dream_error_last(), path));
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, 30);
    (void)state;
}

static void test_store_reopen_keeps_conversations(void **state)
{
    char path[400];
    snprintf(path, sizeof path, "%s/reopen.sqlite", tmpdir);
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_NEW);
    dream_store_close(s);
    assert_int_equal(dream_store_open(path, &s), 0);
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(s, &n), 0);
    assert_int_equal(n.conversations, 1);
    assert_int_equal(n.messages, 3);
    dream_store_close(s);
    (void)state;
}

static void test_store_same_conversation_twice_is_unchanged(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_NEW);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_UNCHANGED);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "chatgpt", "c1", &got), 0);
    assert_int_equal(got->revision, 1);
    assert_int_equal(got->reprocess_from, -1);
    assert_int_equal(got->n_messages, 3);
    assert_string_equal(got->messages[1].text, three[1].text);
    assert_int_equal(got->messages[1].time_ms, 2000);
    dream_store_conversation_free(got);
    dream_store_close(s);
    (void)state;
}

static void test_store_grown_conversation_updates_in_place_and_marks_reprocessing(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    struct dream_conversation c = conv_of("c1", three, 2, 2000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_store_conversation *before;
    assert_int_equal(dream_store_get(s, "chatgpt", "c1", &before), 0);
    c = conv_of("c1", three, 3, 3000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    struct dream_store_conversation *after;
    assert_int_equal(dream_store_get(s, "chatgpt", "c1", &after), 0);
    assert_int_equal(after->rowid, before->rowid);
    assert_string_equal(after->cite, before->cite);
    assert_int_equal(after->revision, 2);
    assert_int_equal(after->reprocess_from, 2); /* only the new message needs new work */
    assert_int_equal(after->n_messages, 3);
    assert_int_equal(after->updated_ms, 3000);
    dream_store_conversation_free(before);
    dream_store_conversation_free(after);
    dream_store_close(s);
    (void)state;
}

static void test_store_edited_message_reprocesses_from_the_edit(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_message edited[3] = {three[0], {"assistant", "m2b", 2500, "Until it has doubled."}, three[2]};
    c = conv_of("c1", edited, 2, 3000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "chatgpt", "c1", &got), 0);
    assert_int_equal(got->reprocess_from, 1);
    assert_int_equal(got->n_messages, 2);
    assert_string_equal(got->messages[1].id, "m2b");
    dream_store_conversation_free(got);
    dream_store_close(s);
    (void)state;
}

/* A later export that edits a message or drops the tail does not lose what the earlier one
 * said: the messages it replaced stay, so a footnote that cites one still finds its text. A
 * message the new export carries unchanged is not kept twice, an export that swings back and
 * forth keeps each old text once, and forgetting the conversation takes them all. */
static void test_store_replaced_messages_stay_for_their_citations(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "chatgpt", "c1", &got), 0);
    char cite[65];
    snprintf(cite, sizeof cite, "%s", got->cite);
    dream_store_conversation_free(got);

    struct dream_message edited[3] = {three[0], {"assistant", "m2", 2000, "Until it has doubled."}, three[2]};
    c = conv_of("c1", edited, 3, 4000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    char *text = NULL;
    bool replaced = false;
    assert_int_equal(dream_store_cited_message(s, cite, "m2", &text, &replaced), 0);
    assert_string_equal(text, "Until it has doubled.");
    assert_false(replaced);
    free(text);
    c = conv_of("c1", three, 1, 5000); /* the tail dropped */
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(dream_store_cited_message(s, cite, "m3", &text, &replaced), 0);
    assert_string_equal(text, "Thanks!");
    assert_true(replaced);
    free(text);
    assert_int_equal(dream_store_cited_message(s, cite, "m2", &text, &replaced), 0);
    assert_string_equal(text, "Until it has doubled.");
    assert_true(replaced);
    free(text);
    assert_int_equal(dream_store_cited_message(s, cite, "m1", &text, &replaced), 0);
    assert_false(replaced);
    free(text);
    c = conv_of("c1", three, 3, 6000); /* back to the first version: its m2 is current again */
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(dream_store_cited_message(s, cite, "m2", &text, &replaced), 0);
    assert_string_equal(text, three[1].text);
    assert_false(replaced);
    free(text);
    /* and no longer kept as replaced (its transcript note listed it under "Replaced by a later
     * export" while it was the conversation's own again): only "Until it has doubled." is */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT group_concat(text, '|') FROM replaced_messages", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "Until it has doubled.");
    sqlite3_finalize(st);
    c = conv_of("c1", edited, 3, 7000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT count(*), group_concat(text, '|') FROM replaced_messages", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1); /* m2's first text, once: "Until..." and "Thanks!" are current */
    assert_string_equal((const char *)sqlite3_column_text(st, 1), three[1].text);
    sqlite3_finalize(st);
    assert_int_equal(dream_store_cited_message(s, cite, "m9", &text, &replaced), DREAM_ENOTFOUND);
    assert_null(text);
    assert_int_equal(dream_store_cited_message(s, "00000000", "m1", &text, &replaced), DREAM_ENOTFOUND);
    dream_error_clear();
    /* an id a citation cannot carry is cited by its position, before and after it is replaced */
    static const struct dream_message odd[] = {{"user", "id with spaces/1", 1000, "Odd ids happen."}, {"assistant", "", 2000, "So do empty ones."}};
    c = conv_of("c2", odd, 2, 3000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(dream_store_get(s, "chatgpt", "c2", &got), 0);
    char cite2[65];
    snprintf(cite2, sizeof cite2, "%s", got->cite);
    dream_store_conversation_free(got);
    char *id = dream_store_message_cite_id(odd[1].id, 1);
    assert_string_equal(id, "m1");
    free(id);
    id = dream_store_message_cite_id("msg-7_a.b:c", 1);
    assert_string_equal(id, "msg-7_a.b:c");
    free(id);
    assert_int_equal(dream_store_cited_message(s, cite2, "m1", &text, &replaced), 0);
    assert_string_equal(text, "So do empty ones.");
    free(text);
    c = conv_of("c2", odd, 1, 4000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(dream_store_cited_message(s, cite2, "m1", &text, &replaced), 0);
    assert_string_equal(text, "So do empty ones.");
    assert_true(replaced);
    free(text);
    assert_int_equal(dream_store_cited_message(s, cite2, "m0", &text, &replaced), 0);
    assert_string_equal(text, "Odd ids happen.");
    assert_false(replaced);
    free(text);
    assert_int_equal(sqlite3_exec(store_db(s), "DELETE FROM conversations", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT count(*) FROM replaced_messages", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    dream_store_close(s);
    (void)state;
}

/* Messages go in 64 to a statement (so the search index's triggers write one segment per
 * conversation, not one per message): a conversation of 150 messages, then the same with
 * message 100 on edited, is stored whole and in order, and indexed once per message. */
static void test_store_long_conversation_is_stored_whole_and_indexed_in_batches(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    enum { N = 150 };
    static struct dream_message m[N];
    static char ids[N][16], texts[N][64];
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "m%d", i);
        snprintf(texts[i], sizeof texts[i], "batchword number %d", i);
        m[i] = (struct dream_message){i % 2 ? "assistant" : "user", ids[i], 1000 + i, texts[i]};
    }
    struct dream_conversation c = conv_of("long", m, N, 5000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    snprintf(texts[100], sizeof texts[100], "an edited reply");
    c = conv_of("long", m, N, 6000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_CHANGED);
    struct dream_store_conversation *got;
    assert_int_equal(dream_store_get(s, "chatgpt", "long", &got), 0);
    assert_int_equal(got->n_messages, N);
    for (int i = 0; i < N; i++) {
        assert_string_equal(got->messages[i].id, ids[i]);
        assert_string_equal(got->messages[i].text, texts[i]);
    }
    assert_int_equal(got->reprocess_from, 100);
    dream_store_conversation_free(got);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT (SELECT count(*) FROM search WHERE search MATCH 'batchword'),"
                                                     " (SELECT count(*) FROM search WHERE search MATCH 'edited')", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), N - 1);
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    sqlite3_finalize(st);
    dream_store_close(s);
    (void)state;
}

static void test_store_older_version_does_not_roll_back_a_newer_one(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    c = conv_of("c1", three, 2, 2000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    assert_int_equal(o, DREAM_STORE_UNCHANGED);
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(s, &n), 0);
    assert_int_equal(n.messages, 3);
    dream_store_close(s);
    (void)state;
}

static void test_store_citation_hash_collision_lengthens_it(void **state)
{
    /* SHA-256("chatgpt\0conv-7115") and SHA-256("chatgpt\0conv-22251") share their first 8 hex
     * digits (c323d431), then differ. */
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    enum dream_store_outcome o;
    struct dream_conversation a = conv_of("conv-7115", three, 1, 1000);
    struct dream_conversation b = conv_of("conv-22251", three, 1, 1000);
    assert_int_equal(dream_store_put(s, &a, &o), 0);
    assert_int_equal(dream_store_put(s, &b, &o), 0);
    struct dream_store_conversation *ga, *gb;
    assert_int_equal(dream_store_get(s, "chatgpt", "conv-7115", &ga), 0);
    assert_int_equal(dream_store_get(s, "chatgpt", "conv-22251", &gb), 0);
    assert_string_equal(ga->cite, "c323d431");
    assert_string_equal(gb->cite, "c323d43148");
    struct dream_store_conversation *by;
    assert_int_equal(dream_store_get_by_cite(s, "c323d43148", &by), 0);
    assert_string_equal(by->id, "conv-22251");
    dream_store_conversation_free(by);
    dream_store_conversation_free(ga);
    dream_store_conversation_free(gb);
    dream_store_close(s);
    (void)state;
}

static void test_store_citation_hash_depends_on_source_and_full_id(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    enum dream_store_outcome o;
    /* Two UUIDv7-style ids with the same first 8 hex digits (mlx-bun's collision) stay apart. */
    struct dream_conversation a = conv_of("0198b2a1-aaaa-7bbb-8ccc-000000000001", three, 1, 1000);
    struct dream_conversation b = conv_of("0198b2a1-aaaa-7bbb-8ccc-000000000002", three, 1, 1000);
    assert_int_equal(dream_store_put(s, &a, &o), 0);
    assert_int_equal(dream_store_put(s, &b, &o), 0);
    assert_int_equal(o, DREAM_STORE_NEW);
    struct dream_store_conversation *ga, *gb;
    assert_int_equal(dream_store_get(s, "chatgpt", a.id, &ga), 0);
    assert_int_equal(dream_store_get(s, "chatgpt", b.id, &gb), 0);
    assert_string_not_equal(ga->cite, gb->cite);
    assert_int_equal(strlen(ga->cite), 8);
    dream_store_conversation_free(ga);
    dream_store_conversation_free(gb);
    dream_store_close(s);
    (void)state;
}

static void test_store_rejected_conversation_leaves_store_untouched(void **state)
{
    dream_store *s;
    assert_int_equal(dream_store_open(":memory:", &s), 0);
    enum dream_store_outcome o;
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct dream_message bad[2] = {three[0], {"tool", "t", 0, "output"}};
    c = conv_of("c1", bad, 2, 4000);
    assert_int_equal(dream_store_put(s, &c, &o), DREAM_EINVAL);
    c = conv_of("c2", three, 0, 4000);
    assert_int_equal(dream_store_put(s, &c, &o), DREAM_EINVAL);
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(s, &n), 0);
    assert_int_equal(n.conversations, 1);
    assert_int_equal(n.messages, 3);
    dream_store_close(s);
    (void)state;
}

static void test_paths_dream_home_puts_everything_under_one_directory(void **state)
{
    setenv("DREAM_HOME", "/srv/dh", 1);
    unsetenv("DREAM_WIKI");
    unsetenv("DREAM_ADAPTERS");
    char *p;
    assert_int_equal(dream_paths_store(&p), 0);
    assert_string_equal(p, "/srv/dh/memory.sqlite");
    free(p);
    assert_int_equal(dream_paths_wiki_dir(&p), 0);
    assert_string_equal(p, "/srv/dh/wiki");
    free(p);
    assert_int_equal(dream_paths_config_dir(&p), 0);
    assert_string_equal(p, "/srv/dh/config");
    free(p);
    assert_int_equal(dream_paths_adapters_dir(&p), 0);
    assert_string_equal(p, "/srv/dh/cache/adapters");
    free(p);
    setenv("DREAM_WIKI", "/notes/wiki", 1);
    assert_int_equal(dream_paths_wiki_dir(&p), 0);
    assert_string_equal(p, "/notes/wiki");
    free(p);
    unsetenv("DREAM_HOME");
    unsetenv("DREAM_WIKI");
    (void)state;
}

static void test_paths_default_to_xdg_under_home(void **state)
{
    unsetenv("DREAM_HOME");
    unsetenv("DREAM_WIKI");
    unsetenv("DREAM_ADAPTERS");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/ana", 1);
    char *p;
    assert_int_equal(dream_paths_store(&p), 0);
    assert_string_equal(p, "/home/ana/.local/share/dream/memory.sqlite");
    free(p);
    assert_int_equal(dream_paths_data_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.local/share/dream");
    free(p);
    assert_int_equal(dream_paths_adapters_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.cache/dream/adapters");
    free(p);
    assert_int_equal(dream_paths_wiki_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.local/share/dream/wiki");
    free(p);
    assert_int_equal(dream_paths_config_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.config/dream");
    free(p);
    /* the store follows XDG_DATA_HOME, never XDG_CACHE_HOME: cache cleaners empty the cache */
    setenv("XDG_CACHE_HOME", "/var/cache/ana/", 1);
    setenv("XDG_DATA_HOME", "/srv/data/ana/", 1);
    assert_int_equal(dream_paths_store(&p), 0);
    assert_string_equal(p, "/srv/data/ana/dream/memory.sqlite");
    free(p);
    assert_int_equal(dream_paths_adapters_dir(&p), 0);
    assert_string_equal(p, "/var/cache/ana/dream/adapters");
    free(p);
    /* a relative XDG_* path is not one (the XDG spec: ignore it), or the store would move with
     * the directory a command is started in */
    setenv("XDG_CACHE_HOME", "cache", 1);
    setenv("XDG_DATA_HOME", "./data", 1);
    setenv("XDG_CONFIG_HOME", "conf/", 1);
    assert_int_equal(dream_paths_store(&p), 0);
    assert_string_equal(p, "/home/ana/.local/share/dream/memory.sqlite");
    free(p);
    assert_int_equal(dream_paths_wiki_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.local/share/dream/wiki");
    free(p);
    assert_int_equal(dream_paths_adapters_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.cache/dream/adapters");
    free(p);
    assert_int_equal(dream_paths_config_dir(&p), 0);
    assert_string_equal(p, "/home/ana/.config/dream");
    free(p);
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("XDG_CONFIG_HOME");
    (void)state;
}

/* ---- invalid UTF-8 in the store (issue 18.5) ------------------------------------------------ */

struct bad_seen {
    char lines[8][200];
    size_t n;
};

static void on_bad(void *ud, const struct dream_store_bad_text *bad)
{
    struct bad_seen *seen = ud;
    if (seen->n < 8) snprintf(seen->lines[seen->n++], 200, "%s|%s|%s|%zu", bad->table, bad->row, bad->column, bad->offset);
}

static void test_store_check_names_each_row_of_invalid_utf8(void **state)
{
    char path[400];
    snprintf(path, sizeof path, "%s/bad-text.sqlite", tmpdir);
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    struct dream_conversation c = conv_of("c1", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    struct bad_seen seen = {0};
    size_t n = 99;
    assert_int_equal(dream_store_check_text(s, on_bad, &seen, &n), 0);
    assert_int_equal(n, 0); /* "24 °C" and the rest: multi-byte, and valid */
    dream_store_close(s);
    /* what a cut through a character used to leave: a lone lead byte, and a stray continuation
     * (written as any tool writing the store must: with the index's tokenizer registered, since
     * the triggers that keep the index fire) */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(store_tokenizer_register(db), 0);
    assert_int_equal(sqlite3_exec(db,
                                  "UPDATE messages SET text = CAST(X'68616C66C3' AS TEXT) WHERE position = 1;"
                                  "UPDATE conversations SET title = CAST(X'4F6BA9' AS TEXT)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(dream_store_open(path, &s), 0);
    assert_int_equal(dream_store_check_text(s, on_bad, &seen, &n), 0);
    dream_store_close(s);
    /* each named once by table, key and column (the search index's copies are not counted) */
    assert_int_equal(n, 2);
    assert_int_equal(seen.n, 2);
    assert_string_equal(seen.lines[0], "conversations|id=1|title|2");
    assert_string_equal(seen.lines[1], "messages|conversation=1, position=1|text|4");
    (void)state;
}

/* ---- moving a store from the cache directory (issue 18) ------------------------------------ */

/* stderr goes to a file between begin and end; end returns what was written (malloc'd). */
static int saved_stderr = -1;
static char stderr_file[400];

static void stderr_begin(void)
{
    snprintf(stderr_file, sizeof stderr_file, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    saved_stderr = dup(2);
    FILE *f = fopen(stderr_file, "w");
    assert_non_null(f);
    dup2(fileno(f), 2);
    fclose(f);
}

static char *stderr_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    FILE *f = fopen(stderr_file, "r");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static bool exists(const char *fmt, const char *a)
{
    char path[600];
    snprintf(path, sizeof path, fmt, a);
    return access(path, F_OK) == 0;
}

/* XDG_CACHE_HOME=<cache>, XDG_DATA_HOME=<data> (under tmpdir/<name> when NULL); the old and the
 * new store paths into old/new. */
static void use_dirs(const char *name, const char *cache, char old[400], char new_[400])
{
    char c[400], d[400];
    snprintf(c, sizeof c, "%s/%s/cache", tmpdir, name);
    snprintf(d, sizeof d, "%s/%s/data", tmpdir, name);
    unsetenv("DREAM_HOME");
    setenv("XDG_CACHE_HOME", cache ? cache : c, 1);
    setenv("XDG_DATA_HOME", d, 1);
    snprintf(old, 400, "%s/dream/memory.sqlite", cache ? cache : c);
    snprintf(new_, 400, "%s/dream/memory.sqlite", d);
}

static void done_dirs(void)
{
    unsetenv("XDG_CACHE_HOME");
    unsetenv("XDG_DATA_HOME");
    unsetenv("DREAM_HOME");
}

/* dream_paths_store, with what it wrote on stderr in *err (malloc'd). */
static int store_path(char **p, char **err)
{
    *p = NULL;
    stderr_begin();
    int rc = dream_paths_store(p);
    *err = stderr_end();
    return rc;
}

/* A store at path holding conversation id, left as a killed process leaves it: what it committed
 * sits in its -wal, not yet checkpointed into the main file. */
static void make_store_with_wal(const char *path, const char *id)
{
    static int made;
    char stage[400];
    snprintf(stage, sizeof stage, "%s/stage-%d.sqlite", tmpdir, ++made);
    dream_store *s;
    assert_int_equal(dream_store_open(stage, &s), 0);
    struct dream_conversation c = conv_of(id, three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(s, &c, &o), 0);
    /* copied while open: the copy has the WAL beside a main file that lacks the conversation */
    char cmd[1800];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s' && cp '%s-wal' '%s-wal' && test -s '%s-wal'", path, stage, path,
             stage, path, path);
    assert_int_equal(system(cmd), 0);
    dream_store_close(s);
}

/* The conversation id with its three messages is in the store at path. */
static void assert_has_conversation(const char *path, const char *id)
{
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    struct dream_store_conversation *got = NULL;
    assert_int_equal(dream_store_get(s, "chatgpt", id, &got), 0);
    assert_int_equal(got->n_messages, 3);
    assert_string_equal(got->messages[1].text, three[1].text);
    dream_store_conversation_free(got);
    dream_store_close(s);
}

static void test_paths_store_moves_an_old_store_with_what_its_wal_holds(void **state)
{
    char old[400], new_[400], *p, *err;
    use_dirs("move", NULL, old, new_);
    make_store_with_wal(old, "c-old");
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(p, new_);
    /* said once, naming both places */
    assert_non_null(strstr(err, "moved the store"));
    assert_non_null(strstr(err, old));
    assert_non_null(strstr(err, new_));
    free(err);
    /* nothing is left at the old place: no second live copy, no WAL to replay */
    assert_false(exists("%s", old));
    assert_false(exists("%s-wal", old));
    assert_false(exists("%s-shm", old));
    assert_false(exists("%s.lock", old));
    assert_has_conversation(new_, "c-old");
    free(p);
    /* a second use finds it in place and says nothing */
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(err, "");
    free(err);
    free(p);
    done_dirs();
    (void)state;
}

static void test_paths_store_moves_across_file_systems(void **state)
{
    /* /dev/shm is another file system than /tmp on most Linux machines; where it is not, the
     * link of the test above covers the move. */
    struct stat a, b;
    if (stat("/dev/shm", &b) != 0 || stat(tmpdir, &a) != 0 || a.st_dev == b.st_dev) {
        skip();
        return;
    }
    char shm[64];
    snprintf(shm, sizeof shm, "/dev/shm/dream-test-store-XXXXXX");
    assert_non_null(mkdtemp(shm));
    char old[400], new_[400], *p, *err;
    use_dirs("far", shm, old, new_);
    make_store_with_wal(old, "c-far");
    assert_int_equal(store_path(&p, &err), 0);
    assert_non_null(strstr(err, "moved the store"));
    free(err);
    assert_false(exists("%s", old));
    assert_false(exists("%s-wal", old));
    assert_false(exists("%s.moving", new_));
    assert_has_conversation(new_, "c-far");
    free(p);
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", shm);
    assert_int_equal(system(rm), 0);
    done_dirs();
    (void)state;
}

static void test_paths_store_never_overwrites_a_new_store_with_an_old_one(void **state)
{
    char old[400], new_[400], *p, *err;
    use_dirs("both", NULL, old, new_);
    make_store_with_wal(old, "c-old");
    make_store_with_wal(new_, "c-new");
    char sum_before[800], sum_after[800];
    snprintf(sum_before, sizeof sum_before, "cat '%s' '%s-wal' | sha256sum > '%s/old.sum'", old, old, tmpdir);
    assert_int_equal(system(sum_before), 0);
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(p, new_);
    free(p);
    /* the warning names both */
    assert_non_null(strstr(err, "two stores"));
    assert_non_null(strstr(err, old));
    assert_non_null(strstr(err, new_));
    free(err);
    /* the old one is left byte for byte, WAL and all; the new one keeps its own data only */
    snprintf(sum_after, sizeof sum_after, "cat '%s' '%s-wal' | sha256sum | cmp -s - '%s/old.sum'", old, old, tmpdir);
    assert_int_equal(system(sum_after), 0);
    assert_has_conversation(new_, "c-new");
    dream_store *s;
    assert_int_equal(dream_store_open(new_, &s), 0);
    struct dream_store_conversation *got = NULL;
    assert_int_equal(dream_store_get(s, "chatgpt", "c-old", &got), DREAM_ENOTFOUND);
    dream_store_close(s);
    done_dirs();
    (void)state;
}

static void test_paths_store_is_not_moved_while_another_process_has_it_open(void **state)
{
    char old[400], new_[400], *p, *err;
    use_dirs("busy", NULL, old, new_);
    dream_store *held;
    assert_int_equal(dream_store_open(old, &held), 0);
    struct dream_conversation c = conv_of("c-held", three, 3, 3000);
    enum dream_store_outcome o;
    assert_int_equal(dream_store_put(held, &c, &o), 0);
    assert_int_equal(store_path(&p, &err), DREAM_EBUSY);
    free(err);
    assert_null(p);
    assert_non_null(strstr(dream_error_last(), old));
    assert_non_null(strstr(dream_error_last(), "another process"));
    /* nothing moved: the one live store is still the old one, whole */
    assert_false(exists("%s", new_));
    dream_store_close(held);
    assert_has_conversation(old, "c-held");
    /* once it is closed, the next use moves it */
    assert_int_equal(store_path(&p, &err), 0);
    free(err);
    free(p);
    assert_false(exists("%s", old));
    assert_has_conversation(new_, "c-held");
    done_dirs();
    (void)state;
}

/* The cache directory a link to the data directory (a person keeping the old store safe from
 * cache cleaners): the old and the new store are one file under one name, reached two ways.
 * Before, that looked like a move cut short between its link and its unlink, and the unlink
 * took the only copy. */
static void test_paths_store_reached_through_a_linked_cache_is_left_alone(void **state)
{
    char old[400], new_[400], dir[400], *p, *err;
    use_dirs("linked-cache", NULL, old, new_);
    make_store_with_wal(new_, "c-linked");
    snprintf(dir, sizeof dir, "%s/linked-cache/cache", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(dir, sizeof dir, "%s/linked-cache/cache/dream", tmpdir);
    assert_int_equal(symlink("../data/dream", dir), 0);
    assert_true(exists("%s", old));
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(p, new_);
    assert_string_equal(err, ""); /* nothing to move, nothing said */
    free(err);
    free(p);
    assert_true(exists("%s", new_));
    assert_has_conversation(new_, "c-linked");
    done_dirs();
    (void)state;
}

/* The old store a link to where the person keeps it: the store stays there, and the new place
 * is a link to it. Before, the link itself was moved, and a relative one then named nothing. */
static void test_paths_store_that_is_a_link_stays_where_it_points(void **state)
{
    char old[400], new_[400], kept[400], *p, *err;
    use_dirs("linked-store", NULL, old, new_);
    snprintf(kept, sizeof kept, "%s/linked-store/elsewhere/memory.sqlite", tmpdir);
    make_store_with_wal(kept, "c-kept");
    char dir[400];
    snprintf(dir, sizeof dir, "%s/linked-store/cache/dream", tmpdir);
    char cmd[500];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(symlink("../../elsewhere/memory.sqlite", old), 0);
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(p, new_);
    assert_non_null(strstr(err, kept)); /* says where the store is */
    free(err);
    free(p);
    struct stat st;
    assert_int_equal(lstat(new_, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(kept, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_not_equal(lstat(old, &st), 0); /* the old link is gone */
    assert_has_conversation(new_, "c-kept");
    /* a second use finds it in place and says nothing */
    assert_int_equal(store_path(&p, &err), 0);
    assert_string_equal(err, "");
    free(err);
    free(p);
    done_dirs();
    (void)state;
}

static void test_paths_store_under_dream_home_moves_from_its_cache(void **state)
{
    char home[400], old[400], new_[400], *p, *err;
    snprintf(home, sizeof home, "%s/dh", tmpdir);
    snprintf(old, sizeof old, "%s/cache/memory.sqlite", home);
    snprintf(new_, sizeof new_, "%s/memory.sqlite", home);
    setenv("DREAM_HOME", home, 1);
    make_store_with_wal(old, "c-dh");
    assert_int_equal(store_path(&p, &err), 0);
    assert_non_null(strstr(err, "moved the store"));
    free(err);
    assert_string_equal(p, new_);
    free(p);
    assert_false(exists("%s", old));
    assert_has_conversation(new_, "c-dh");
    done_dirs();
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_open_creates_schema_with_wal_and_foreign_keys),
        cmocka_unit_test(test_store_refuses_a_newer_schema),
        cmocka_unit_test(test_store_refuses_another_programs_database),
        cmocka_unit_test(test_store_reopen_keeps_conversations),
        cmocka_unit_test(test_store_same_conversation_twice_is_unchanged),
        cmocka_unit_test(test_store_grown_conversation_updates_in_place_and_marks_reprocessing),
        cmocka_unit_test(test_store_edited_message_reprocesses_from_the_edit),
        cmocka_unit_test(test_store_replaced_messages_stay_for_their_citations),
        cmocka_unit_test(test_store_long_conversation_is_stored_whole_and_indexed_in_batches),
        cmocka_unit_test(test_store_older_version_does_not_roll_back_a_newer_one),
        cmocka_unit_test(test_store_citation_hash_collision_lengthens_it),
        cmocka_unit_test(test_store_citation_hash_depends_on_source_and_full_id),
        cmocka_unit_test(test_store_rejected_conversation_leaves_store_untouched),
        cmocka_unit_test(test_store_check_names_each_row_of_invalid_utf8),
        cmocka_unit_test(test_paths_dream_home_puts_everything_under_one_directory),
        cmocka_unit_test(test_paths_default_to_xdg_under_home),
        cmocka_unit_test(test_paths_store_moves_an_old_store_with_what_its_wal_holds),
        cmocka_unit_test(test_paths_store_moves_across_file_systems),
        cmocka_unit_test(test_paths_store_never_overwrites_a_new_store_with_an_old_one),
        cmocka_unit_test(test_paths_store_is_not_moved_while_another_process_has_it_open),
        cmocka_unit_test(test_paths_store_under_dream_home_moves_from_its_cache),
        cmocka_unit_test(test_paths_store_reached_through_a_linked_cache_is_left_alone),
        cmocka_unit_test(test_paths_store_that_is_a_link_stays_where_it_points),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
