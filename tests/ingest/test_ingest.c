/* test_ingest.c — the importers against realistic fixtures (tests/data/ingest, written by
 * make_fixtures.py there, with their expected normalized results in expected/), idempotent
 * re-ingest, and every kind of bad input the issue lists.
 *
 * argv[1] is the fixture directory. DREAM_UPDATE_EXPECTED=1 rewrites expected/ from the current
 * output instead of comparing (review the diff before committing it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "istream.h"
#include "store_internal.h"
#include "zip.h"

#include "dream/error.h"
#include "dream/ingest.h"
#include "dream/store.h"
#include "util/buf.h"
#include "util/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *data_dir;

/* What the on_skip callback saw. */
struct skips {
    int n;
    char last_where[1200];
    char last_reason[1200];
    enum dream_skip_reason last_why;
};

static void on_skip(void *user, enum dream_skip_reason why, const char *where, const char *reason)
{
    struct skips *s = user;
    s->n++;
    s->last_why = why;
    snprintf(s->last_where, sizeof s->last_where, "%s", where);
    snprintf(s->last_reason, sizeof s->last_reason, "%s", reason);
}

static struct dream_ingest_params params_with(struct skips *s)
{
    struct dream_ingest_params p = dream_ingest_default_params();
    p.on_skip = on_skip;
    p.user = s;
    return p;
}

static char *fixture(const char *rel)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", data_dir, rel);
    return path;
}

/* noinline: inlined at -O2, gcc 12 mistakes the returned buffer for a pointer to the local
 * `data` (-Wdangling-pointer false positive). */
__attribute__((noinline)) static char *read_fixture(const char *rel, size_t *len)
{
    char *data = NULL;
    assert_int_equal(file_read_all(fixture(rel), 0, &data, len), 0);
    return data;
}

/* A canonical text dump of every conversation in the store. */
static char *dump_store(dream_store *store)
{
    sqlite3 *db = store_db(store);
    sqlite3_stmt *st;
    struct dbuf out = {0};
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT c.source, c.source_id, c.title, coalesce(c.created_at, 0), "
                                        "coalesce(c.updated_at, 0), m.position, m.role, m.source_id, "
                                        "coalesce(m.created_at, 0), m.text FROM conversations c JOIN messages m "
                                        "ON m.conversation = c.id ORDER BY c.source, c.source_id, m.position",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_int(st, 5) == 0)
            dbuf_printf(&out, "== %s %s\ntitle: %s\ncreated %lld updated %lld\n", sqlite3_column_text(st, 0),
                        sqlite3_column_text(st, 1), sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3),
                        sqlite3_column_int64(st, 4));
        dbuf_printf(&out, "[%d] %s %s %lld\n", sqlite3_column_int(st, 5), sqlite3_column_text(st, 6),
                    sqlite3_column_text(st, 7), sqlite3_column_int64(st, 8));
        const char *text = (const char *)sqlite3_column_text(st, 9);
        for (const char *p = text; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            dbuf_puts(&out, "  | ");
            dbuf_append(&out, p, n);
            dbuf_putc(&out, '\n');
            p += n + (nl ? 1 : 0);
        }
    }
    sqlite3_finalize(st);
    return dbuf_take(&out);
}

/* Ingests rel into a fresh store and compares the dump with expected/<name>.txt. */
static void check_golden(const char *rel, const char *name, enum dream_format force)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    p.format = force;
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture(rel), &p, &stats), 0);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 0);
    char *got = dump_store(store);
    char exp_rel[256];
    snprintf(exp_rel, sizeof exp_rel, "expected/%s.txt", name);
    const char *update = getenv("DREAM_UPDATE_EXPECTED");
    if (update && !strcmp(update, "1")) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/expected", data_dir);
        assert_int_equal(file_mkdirs(dir, 0755), 0);
        assert_int_equal(file_write_atomic(fixture(exp_rel), got, strlen(got)), 0);
    } else {
        size_t len;
        char *want = read_fixture(exp_rel, &len);
        if (strcmp(got, want)) fprintf(stderr, "--- got for %s:\n%s\n--- expected:\n%s\n", rel, got, want);
        assert_string_equal(got, want);
        free(want);
    }
    free(got);
    dream_store_close(store);
}

static void test_chatgpt_export_matches_expected(void **state)
{
    check_golden("chatgpt/conversations.json", "chatgpt", DREAM_FORMAT_AUTO);
    check_golden("chatgpt-export.zip", "chatgpt", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_claude_export_matches_expected(void **state)
{
    check_golden("claude/conversations.json", "claude", DREAM_FORMAT_AUTO);
    check_golden("claude-export.zip", "claude", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_claude_code_session_matches_expected(void **state)
{
    check_golden("claude-code", "claude-code", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_codex_rollout_matches_expected(void **state)
{
    check_golden("codex", "codex", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_pi_sessions_v1_and_v3_match_expected(void **state)
{
    check_golden("pi", "pi", DREAM_FORMAT_AUTO);
    check_golden("pi-v1", "pi-v1", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_openai_jsonl_matches_expected(void **state)
{
    check_golden("openai/chats.jsonl", "openai", DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_chatgpt_follows_current_node_branch(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture("chatgpt/conversations.json"), NULL, &stats), 0);
    struct dream_store_conversation *c;
    assert_int_equal(dream_store_get(store, "chatgpt", "6650a1b2-0000-4000-8000-00000000c0de", &c), 0);
    static const char *const ids[] = {"u1", "a1", "u2b", "a2b", "u3", "a3"};
    assert_int_equal(c->n_messages, 6);
    for (size_t i = 0; i < 6; i++) assert_string_equal(c->messages[i].id, ids[i]);
    /* The edited-away branch, the system node and the tool traffic are not there. */
    for (size_t i = 0; i < c->n_messages; i++) {
        assert_null(strstr(c->messages[i].text, "80 °C per hour"));
        assert_null(strstr(c->messages[i].text, "pandas"));
    }
    dream_store_conversation_free(c);
    dream_store_close(store);
    (void)state;
}

static void test_ingest_same_export_twice_changes_nothing(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats first = {0}, second = {0};
    assert_int_equal(dream_ingest_path(store, data_dir, NULL, &first), 0);
    assert_true(first.added >= 10);
    struct dream_store_counts before, after;
    assert_int_equal(dream_store_count(store, &before), 0);
    assert_int_equal(dream_ingest_path(store, data_dir, NULL, &second), 0);
    assert_int_equal(second.added, 0);
    assert_int_equal(second.changed, 0);
    assert_int_equal(second.unchanged, first.added + first.changed + first.unchanged);
    assert_int_equal(dream_store_count(store, &after), 0);
    assert_int_equal(after.conversations, before.conversations);
    assert_int_equal(after.messages, before.messages);
    dream_store_close(store);
    (void)state;
}

static void test_later_export_updates_grown_conversation_and_keeps_missing_ones(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats s1 = {0}, s2 = {0}, s3 = {0};
    assert_int_equal(dream_ingest_path(store, fixture("chatgpt"), NULL, &s1), 0);
    assert_int_equal(s1.added, 2);
    struct dream_store_conversation *before;
    assert_int_equal(dream_store_get(store, "chatgpt", "6650a1b2-0000-4000-8000-00000000d06e", &before), 0);
    assert_int_equal(dream_ingest_path(store, fixture("chatgpt-later"), NULL, &s2), 0);
    assert_int_equal(s2.changed, 1);
    assert_int_equal(s2.added, 0);
    struct dream_store_conversation *after;
    assert_int_equal(dream_store_get(store, "chatgpt", "6650a1b2-0000-4000-8000-00000000d06e", &after), 0);
    assert_int_equal(after->n_messages, 4);
    assert_int_equal(after->reprocess_from, 2);
    assert_string_equal(after->cite, before->cite);
    assert_int_equal(after->rowid, before->rowid);
    /* The kiln conversation, absent from the later export, is still there. */
    struct dream_store_conversation *kiln;
    assert_int_equal(dream_store_get(store, "chatgpt", "6650a1b2-0000-4000-8000-00000000c0de", &kiln), 0);
    /* Reading the older export again does not roll the grown conversation back. */
    assert_int_equal(dream_ingest_path(store, fixture("chatgpt"), NULL, &s3), 0);
    assert_int_equal(s3.changed, 0);
    dream_store_conversation_free(before);
    dream_store_conversation_free(after);
    dream_store_conversation_free(kiln);
    dream_store_close(store);
    (void)state;
}

static void test_truncated_json_names_file_and_keeps_store(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture("claude"), NULL, &stats), 0);
    size_t len;
    char *json = read_fixture("chatgpt/conversations.json", &len);
    /* Cut inside the second conversation. */
    char *second = strstr(json, "Dog walking routes");
    assert_non_null(second);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats s2 = {0};
    assert_int_equal(dream_ingest_buffer(store, "cut/conversations.json", json, (size_t)(second - json) + 40, &p, &s2), 0);
    assert_int_equal(s2.added, 1);
    assert_int_equal(s2.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_non_null(strstr(sk.last_where, "cut/conversations.json"));
    assert_non_null(strstr(sk.last_reason, "truncated"));
    assert_non_null(strstr(sk.last_reason, "line"));
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(store, &n), 0);
    assert_int_equal(n.conversations, 2); /* the Claude one from before, and the first ChatGPT one */
    free(json);
    dream_store_close(store);
    (void)state;
}

/* The first and the last of three one-message ChatGPT conversations (lines 2-3 and 6-7 of an
 * export whose second conversation the test writes on lines 4-5). */
#define CHATGPT_CONV_A                                                                                                              \
    "{\"id\": \"a\", \"current_node\": \"n\", \"mapping\": {\"n\": {\"id\": \"n\", \"parent\": null,\n"                                   \
    "  \"message\": {\"id\": \"n\", \"author\": {\"role\": \"user\"}, \"content\": {\"content_type\": \"text\", \"parts\": [\"one\"]}}}}},\n"
#define CHATGPT_CONV_C                                                                                                              \
    "{\"id\": \"c\", \"current_node\": \"n\", \"mapping\": {\"n\": {\"id\": \"n\", \"parent\": null,\n"                                   \
    "  \"message\": {\"id\": \"n\", \"author\": {\"role\": \"user\"}, \"content\": {\"content_type\": \"text\", \"parts\": [\"three\"]}}}}}\n"

/* text, a ChatGPT export, ingested as file name into a fresh in-memory store; what ingest skipped
 * in *sk, its counts in *st. */
static dream_store *ingest_chatgpt_text(const char *name, const char *text, size_t len, struct skips *sk, struct dream_ingest_stats *st)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_params p = params_with(sk);
    p.format = DREAM_FORMAT_CHATGPT;
    assert_int_equal(dream_ingest_buffer(store, name, text, len, &p, st), 0);
    return store;
}

/* A stray quote in one conversation throws the element scan's count off to the end of the file;
 * the report names the byte the JSON broke at (its line and column), not "the file is truncated"
 * at its last byte, so the person can fix it. */
static void test_a_stray_quote_is_reported_where_the_json_breaks(void **state)
{
    static const char text[] = "[\n" CHATGPT_CONV_A
                               "{\"id\": \"b\", \"current_node\": \"n\", \"mapping\": {\"n\": {\"id\": \"n\", \"parent\": null,\n"
                               "  \"message\": {\"id\": \"n\", \"author\": {\"role\": \"user\"}, \"content\": {\"content_type\": \"text\", \"parts\": [\"a cat? \"BRANCHQ\"]}}}}},\n"
                               CHATGPT_CONV_C "]\n";
    struct skips sk = {0};
    struct dream_ingest_stats st = {0};
    dream_store *store = ingest_chatgpt_text("q/conversations.json", text, sizeof text - 1, &sk, &st);
    assert_int_equal(st.added, 1);
    assert_int_equal(st.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_null(strstr(sk.last_reason, "truncated"));
    assert_non_null(strstr(sk.last_reason, "at line 5, column"));
    assert_non_null(strstr(sk.last_reason, "starts on line 4"));
    dream_store_close(store);
    (void)state;
}

static void test_malformed_conversation_is_reported_with_line_and_next_is_read(void **state)
{
    static const char text[] = "[\n" CHATGPT_CONV_A "{\"id\": \"b\", \"mapping\": {\n  \"x\": [1,,2]}},\n" CHATGPT_CONV_C "]\n";
    struct skips sk = {0};
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingest_chatgpt_text("bad.json", text, sizeof text - 1, &sk, &stats);
    assert_int_equal(stats.added, 2);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_string_equal(sk.last_where, "bad.json:4");
    assert_non_null(strstr(sk.last_reason, "line 5"));
    dream_store_close(store);
    (void)state;
}

/* Finds the central directory entry named name in a ZIP image; returns its offset. */
static size_t find_central_entry(const char *zip, size_t len, const char *name)
{
    for (size_t i = 0; i + 46 < len; i++) {
        if (memcmp(zip + i, "PK\1\2", 4)) continue;
        size_t nlen = (unsigned char)zip[i + 28] | (unsigned char)zip[i + 29] << 8;
        if (nlen == strlen(name) && i + 46 + nlen <= len && !memcmp(zip + i + 46, name, nlen)) return i;
    }
    fail_msg("no central entry %s", name);
    return 0;
}

static void test_truncated_zip_is_reported_and_keeps_store(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture("claude-export.zip"), NULL, &stats), 0);
    size_t len;
    char *zip = read_fixture("chatgpt-export.zip", &len);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats s2 = {0};
    assert_int_equal(dream_ingest_buffer(store, "download.zip", zip, len / 2, &p, &s2), 0);
    assert_int_equal(s2.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_non_null(strstr(sk.last_where, "download.zip"));
    assert_non_null(strstr(sk.last_reason, "ZIP"));
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(store, &n), 0);
    assert_int_equal(n.conversations, 1);
    free(zip);
    dream_store_close(store);
    (void)state;
}

static void test_zip_member_inflating_past_declared_size_is_refused(void **state)
{
    size_t len;
    char *zip = read_fixture("chatgpt-export.zip", &len);
    size_t at = find_central_entry(zip, len, "conversations.json");
    /* Declare a smaller uncompressed size than the data inflates to: a zip bomb's lie. */
    zip[at + 24] = 100;
    zip[at + 25] = zip[at + 26] = zip[at + 27] = 0;
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "bomb.zip", zip, len, &p, &stats), 0);
    assert_int_equal(stats.added, 0);
    assert_true(stats.skipped[DREAM_SKIP_MALFORMED] >= 1);
    assert_non_null(strstr(sk.last_reason, "declared size"));
    free(zip);
    dream_store_close(store);
    (void)state;
}

static void test_zip_member_with_wrong_crc_is_refused(void **state)
{
    size_t len;
    char *zip = read_fixture("chatgpt-export-stored.zip", &len);
    size_t at = find_central_entry(zip, len, "Export/conversations.json");
    zip[at + 16] ^= 0x5a;
    struct zip *z;
    assert_int_equal(zip_open_mem(zip, len, "crc.zip", &z), 0);
    size_t member;
    assert_int_equal(zip_find(z, "conversations.json", &member), 0);
    struct istream s;
    assert_int_equal(istream_open_zip(&s, z, member), 0);
    int c;
    while ((c = istream_getc(&s)) >= 0) {}
    assert_int_equal(c, -2);
    assert_non_null(strstr(dream_error_last(), "CRC"));
    istream_close(&s);
    zip_close(z);
    free(zip);
    (void)state;
}

/* The JSON array ends before the member's last byte is read, so the CRC-32 check at the end of
 * the member never ran, and a damaged export that still parsed replaced what the store held. A
 * member is checked whole before anything of it is stored. */
static void test_zip_member_with_wrong_crc_stores_nothing(void **state)
{
    size_t len;
    char *zip = read_fixture("chatgpt-export-stored.zip", &len);
    size_t at = find_central_entry(zip, len, "Export/conversations.json");
    zip[at + 16] ^= 0x5a;
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "crc.zip", zip, len, &p, &stats), 0);
    assert_int_equal(stats.added, 0);
    assert_true(stats.skipped[DREAM_SKIP_MALFORMED] >= 1);
    assert_non_null(strstr(sk.last_reason, "CRC-32"));
    assert_non_null(strstr(sk.last_reason, "conversations.json"));
    free(zip);
    dream_store_close(store);
    (void)state;
}

static void test_stored_zip_member_in_a_folder_is_read(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture("chatgpt-export-stored.zip"), NULL, &stats), 0);
    assert_int_equal(stats.added, 1);
    dream_store_close(store);
    (void)state;
}

/* Windows PowerShell 5.1's Compress-Archive writes member names with backslashes
 * ("Export\\conversations.json"), against the ZIP format's forward slashes: such an export was
 * refused as "a ZIP without conversations.json". */
static void test_zip_member_named_with_backslashes_is_read(void **state)
{
    size_t len;
    char *zip = read_fixture("chatgpt-export-stored.zip", &len);
    static const char name[] = "Export/conversations.json";
    int renamed = 0;
    for (size_t i = 0; i + sizeof name - 1 <= len; i++)
        if (!memcmp(zip + i, name, sizeof name - 1)) {
            zip[i + 6] = '\\';
            renamed++;
        }
    assert_int_equal(renamed, 2); /* the local header and the central directory */
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "windows.zip", zip, len, NULL, &stats), 0);
    assert_int_equal(stats.added, 1);
    for (int k = 0; k < DREAM_SKIP_COUNT; k++) assert_int_equal(stats.skipped[k], 0);
    dream_store_close(store);
    free(zip);
    (void)state;
}

/* A JSONL file saved with a UTF-8 byte order mark (as some Windows editors do): detection took
 * it, but its first line then failed to parse (a Claude Code session lost whole). */
static void test_jsonl_with_a_byte_order_mark_is_read(void **state)
{
    static const char text[] = "\xef\xbb\xbf{\"messages\": [{\"role\": \"user\", \"content\": \"first\"}]}\n"
                               "{\"messages\": [{\"role\": \"user\", \"content\": \"second\"}]}\n";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "bom.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 2);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 0);
    dream_store_close(store);
    (void)state;
}

/* The number of stored conversations. */
static int stored_conversations(dream_store *store)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT count(*) FROM conversations", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* OpenAI JSONL has no ids. They were the file's hash and a line number, so a line added to the
 * file gave every conversation in it a new id: all stored twice, and a forgotten one back. A
 * conversation's id is now its own content's hash, and a store that holds one by the old id
 * keeps it. */
static void test_openai_jsonl_ids_survive_a_line_added_and_forget(void **state)
{
    static const char a[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"alpha tarp\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"beta rope\"}]}\n";
    static const char b[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"alpha tarp\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"beta rope\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"gamma knot\"}]}\n";
    char dir[] = "/tmp/dream-test-jsonl-XXXXXX", path[300];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/memory.sqlite", dir);
    dream_store *store;
    assert_int_equal(dream_store_open(path, &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "chats.jsonl", a, sizeof a - 1, NULL, &stats), 0);
    assert_int_equal(stats.added, 2);
    memset(&stats, 0, sizeof stats);
    assert_int_equal(dream_ingest_buffer(store, "chats.jsonl", b, sizeof b - 1, NULL, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stored_conversations(store), 3);
    /* forgotten stays forgotten when the file grows again */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT c.source, c.source_id FROM conversations c JOIN messages m ON m.conversation = c.id "
                                                         "WHERE m.text = 'beta rope'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char src[64], id[128];
    snprintf(src, sizeof src, "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(id, sizeof id, "%s", (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(store_db(store), "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(store_forgotten_add(store, src, id), 0);
    char del[400];
    snprintf(del, sizeof del, "DELETE FROM conversations WHERE source = '%s' AND source_id = '%s'", src, id);
    assert_int_equal(sqlite3_exec(store_db(store), del, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(store_db(store), "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(stored_conversations(store), 2);
    static const char c[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"delta hitch\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"alpha tarp\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"beta rope\"}]}\n"
                            "{\"messages\": [{\"role\": \"user\", \"content\": \"gamma knot\"}]}\n";
    memset(&stats, 0, sizeof stats);
    assert_int_equal(dream_ingest_buffer(store, "chats.jsonl", c, sizeof c - 1, NULL, &stats), 0);
    assert_int_equal(stats.added, 1); /* delta alone */
    assert_int_equal(stored_conversations(store), 3);
    dream_store_close(store);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    (void)state;
}

static void test_invalid_utf8_is_repaired_and_counted(void **state)
{
    static const char text[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"caf\xe9 and \\ud800 and \\u0000!\"},"
                               " {\"role\": \"assistant\", \"content\": \"ok \xf0\x9f\x8d\x9e\"}]}\n"
                               "{\"messages\": [{\"role\": \"user\", \"content\": \"clean\"}]}\n";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "utf8.jsonl", text, sizeof text - 1, NULL, &stats), 0);
    assert_int_equal(stats.added, 2);
    assert_int_equal(stats.repaired, 1);
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(store, &n), 0);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT text FROM messages WHERE position = 0 AND text LIKE 'caf%'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "caf\xef\xbf\xbd and \xef\xbf\xbd and \xef\xbf\xbd!");
    sqlite3_finalize(st);
    dream_store_close(store);
    (void)state;
}

static void test_duplicate_ids_in_one_export_keep_the_first(void **state)
{
    static const char text[] =
        "[{\"id\": \"same\", \"title\": \"first\", \"current_node\": \"n\", \"mapping\": {\"n\": {\"id\": \"n\", \"parent\": null,"
        " \"message\": {\"id\": \"n\", \"author\": {\"role\": \"user\"}, \"content\": {\"content_type\": \"text\", \"parts\": [\"one\"]}}}}},"
        " {\"id\": \"same\", \"title\": \"second\", \"current_node\": \"n\", \"mapping\": {\"n\": {\"id\": \"n\", \"parent\": null,"
        " \"message\": {\"id\": \"n\", \"author\": {\"role\": \"user\"}, \"content\": {\"content_type\": \"text\", \"parts\": [\"two\"]}}}}}]";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "dup.json", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.skipped[DREAM_SKIP_DUPLICATE], 1);
    assert_int_equal(sk.last_why, DREAM_SKIP_DUPLICATE);
    struct dream_store_conversation *c;
    assert_int_equal(dream_store_get(store, "chatgpt", "same", &c), 0);
    assert_string_equal(c->title, "first");
    dream_store_conversation_free(c);
    dream_store_close(store);
    (void)state;
}

static void test_empty_conversations_are_skipped_and_counted(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_path(store, fixture("claude/conversations.json"), &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.skipped[DREAM_SKIP_EMPTY], 1);
    assert_int_equal(sk.last_why, DREAM_SKIP_EMPTY);
    assert_non_null(strstr(sk.last_reason, "1b7c0f3e-5a8d-4c2b-9e61-0c0ffee00002"));
    dream_store_close(store);
    (void)state;
}

static void test_conversation_of_300k_tokens_is_ingested(void **state)
{
    /* About 4 characters per token: 1.2 MB of text in one message, and a long reply. */
    struct dbuf line = {0};
    dbuf_puts(&line, "{\"messages\": [{\"role\": \"user\", \"content\": \"");
    for (int i = 0; i < 120000; i++) dbuf_puts(&line, "dough rest ");
    dbuf_puts(&line, "\"}, {\"role\": \"assistant\", \"content\": \"");
    for (int i = 0; i < 30000; i++) dbuf_puts(&line, "ok then ");
    dbuf_puts(&line, "\"}]}\n");
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "long.jsonl", line.data, line.len, NULL, &stats), 0);
    assert_int_equal(stats.added, 1);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT length(text) FROM messages WHERE position = 0", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 120000 * 11 - 1);
    sqlite3_finalize(st);
    dbuf_free(&line);
    dream_store_close(store);
    (void)state;
}

static void test_format_is_detected_from_content(void **state)
{
    static const struct {
        const char *rel;
        enum dream_format want;
    } cases[] = {
        {"chatgpt/conversations.json", DREAM_FORMAT_CHATGPT},
        {"claude/conversations.json", DREAM_FORMAT_CLAUDE},
        {"claude-code/-home-ana-code-plotter/5d1e2f3a-4b5c-4d6e-8f70-a1b2c3d4e5f6.jsonl", DREAM_FORMAT_CLAUDE_CODE},
        {"codex/2025/06/01/rollout-2025-06-01T14-00-00-0197a3c4-1111-7222-8333-944455556666.jsonl", DREAM_FORMAT_CODEX},
        {"pi/--home-ana-code-garden--/2025-03-02T11-00-00-000Z_0198b2a1-aaaa-7bbb-8ccc-0123456789ab.jsonl", DREAM_FORMAT_PI},
        {"openai/chats.jsonl", DREAM_FORMAT_OPENAI_JSONL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *data = read_fixture(cases[i].rel, &len);
        assert_int_equal(dream_format_detect(data, len), cases[i].want);
        /* A head cut short still says enough. */
        assert_int_equal(dream_format_detect(data, len < 300 ? len : 300), cases[i].want);
        free(data);
    }
    assert_int_equal(dream_format_detect("hello", 5), DREAM_FORMAT_AUTO);
    assert_int_equal(dream_format_detect("{\"name\": \"x\"}\n", 14), DREAM_FORMAT_AUTO);
    (void)state;
}

static void test_forced_format_reads_what_detection_cannot(void **state)
{
    /* A pi v1 header with neither cwd nor version is not recognisable; --format pi reads it. */
    static const char text[] = "{\"type\":\"session\",\"id\":\"s-1\",\"timestamp\":\"2024-01-01T00:00:00Z\"}\n"
                               "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "s.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.skipped[DREAM_SKIP_UNSUPPORTED], 1);
    assert_non_null(strstr(sk.last_reason, "--format"));
    p.format = DREAM_FORMAT_PI;
    assert_int_equal(dream_ingest_buffer(store, "s.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    dream_store_close(store);
    (void)state;
}

static void test_session_log_unfinished_last_line_is_ignored(void **state)
{
    size_t len;
    char *log = read_fixture("claude-code/-home-ana-code-plotter/5d1e2f3a-4b5c-4d6e-8f70-a1b2c3d4e5f6.jsonl", &len);
    struct dbuf b = {0};
    dbuf_append(&b, log, len);
    dbuf_puts(&b, "{\"parentUuid\":\"e12\",\"type\":\"assistant\",\"uuid\":\"e13\",\"mess");
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "live.jsonl", b.data, b.len, NULL, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 0);
    dbuf_free(&b);
    free(log);
    dream_store_close(store);
    (void)state;
}

/* Claude Code's interruption markers ("[Request interrupted by user]", and "... for tool use"
 * inside a content array) are not messages; a message that only quotes one is. */
static void test_claude_code_interruption_markers_are_not_messages(void **state)
{
    static const char text[] =
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"s-int\",\"timestamp\":\"2025-01-02T10:00:00Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"Why does my bread collapse in the oven?\"}}\n"
        "{\"type\":\"assistant\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"s-int\",\"timestamp\":\"2025-01-02T10:00:05Z\","
        "\"message\":{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Probably over-proofing.\"}]}}\n"
        "{\"type\":\"user\",\"uuid\":\"u3\",\"parentUuid\":\"u2\",\"sessionId\":\"s-int\",\"timestamp\":\"2025-01-02T10:00:06Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"[Request interrupted by user]\"}}\n"
        "{\"type\":\"user\",\"uuid\":\"u4\",\"parentUuid\":\"u3\",\"sessionId\":\"s-int\",\"timestamp\":\"2025-01-02T10:00:07Z\","
        "\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user for tool use]\"}]}}\n"
        "{\"type\":\"user\",\"uuid\":\"u5\",\"parentUuid\":\"u4\",\"sessionId\":\"s-int\",\"timestamp\":\"2025-01-02T10:00:08Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"What does [Request interrupted by user] mean in my log?\"}}\n";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = DREAM_FORMAT_CLAUDE_CODE;
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "s-int.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(store, &n), 0);
    assert_int_equal(n.messages, 3);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT group_concat(role || ':' || text, '|') FROM messages", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "user:Why does my bread collapse in the oven?|assistant:Probably over-proofing.|"
                                                                  "user:What does [Request interrupted by user] mean in my log?");
    sqlite3_finalize(st);
    dream_store_close(store);
    (void)state;
}

/* A fresh in-memory store with text (file name) read into it as format; *stats what ingest
 * counted (may be NULL). */
static dream_store *ingested_as(enum dream_format format, const char *name, const char *text, size_t len, struct dream_ingest_stats *stats)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = format;
    struct dream_ingest_stats local = {0};
    assert_int_equal(dream_ingest_buffer(store, name, text, len, &p, stats ? stats : &local), 0);
    return store;
}

/* The messages of one stored conversation as "role:text|...", in order. */
static char *stored_thread(dream_store *store, const char *source, const char *id)
{
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, source, id, &c), 0);
    struct dbuf b = {0};
    for (size_t i = 0; i < c->n_messages; i++) dbuf_printf(&b, "%s%s:%s", i ? "|" : "", c->messages[i].role, c->messages[i].text);
    dream_store_conversation_free(c);
    return dbuf_take(&b);
}

/* What Claude Code writes as user and assistant lines that nobody said: shell mode's echoes
 * (`! ls`: <bash-input>, <bash-stdout>, <bash-stderr>), a background task's notice, and the
 * synthetic reply it writes for an API error. And a summary line about another session (a
 * resumed file starts with those) is not this session's title. */
static void test_claude_code_shell_echoes_and_api_errors_are_not_messages(void **state)
{
    static const char text[] =
        "{\"type\":\"summary\",\"summary\":\"Kubernetes ingress TLS debugging\",\"leafUuid\":\"elsewhere\"}\n"
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:00Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"<bash-input>cat ~/.ssh/config</bash-input>\"}}\n"
        "{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:01Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"<bash-stdout>Host prod</bash-stdout><bash-stderr></bash-stderr>\"}}\n"
        "{\"type\":\"user\",\"uuid\":\"u3\",\"parentUuid\":\"u2\",\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:02Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"Why does ssh ignore my config file?\"}}\n"
        "{\"type\":\"assistant\",\"uuid\":\"u4\",\"parentUuid\":\"u3\",\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:03Z\","
        "\"isApiErrorMessage\":true,\"message\":{\"id\":\"x1\",\"model\":\"<synthetic>\",\"role\":\"assistant\","
        "\"content\":[{\"type\":\"text\",\"text\":\"API Error: 529 overloaded\"}]}}\n"
        "{\"type\":\"user\",\"uuid\":\"u5\",\"parentUuid\":\"u4\",\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:04Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"<task-notification>Task done</task-notification>\"}}\n"
        "{\"type\":\"assistant\",\"uuid\":\"u6\",\"parentUuid\":\"u5\",\"sessionId\":\"s-sh\",\"timestamp\":\"2025-01-02T10:00:05Z\","
        "\"message\":{\"id\":\"m2\",\"model\":\"claude-sonnet-4\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Check its permissions.\"}]}}\n";
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-sh.jsonl", text, sizeof text - 1, &stats);
    char *t = stored_thread(store, "claude-code", "s-sh");
    assert_string_equal(t, "user:Why does ssh ignore my config file?|assistant:Check its permissions.");
    free(t);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, "claude-code", "s-sh", &c), 0);
    assert_null(strstr(c->title, "Kubernetes"));
    dream_store_conversation_free(c);
    dream_store_close(store);
    (void)state;
}

/* Appends one Claude Code line of session s-cc: type ("user" or "assistant", also the message's
 * role), uuid, parentUuid (NULL: null), the message's id (NULL: none) and its content as JSON. */
static void cc_append_in(struct dbuf *b, const char *session, const char *type, const char *uuid, const char *parent, const char *msgid,
                         const char *content)
{
    dbuf_printf(b, "{\"type\":\"%s\",\"uuid\":\"%s\",\"parentUuid\":%s%s%s,\"sessionId\":\"%s\",\"timestamp\":\"2025-01-02T10:00:00Z\","
                   "\"message\":{\"role\":\"%s\"",
                type, uuid, parent ? "\"" : "", parent ? parent : "null", parent ? "\"" : "", session, type);
    if (msgid) dbuf_printf(b, ",\"id\":\"%s\"", msgid);
    dbuf_printf(b, ",\"content\":%s}}\n", content);
}

static void cc_append(struct dbuf *b, const char *type, const char *uuid, const char *parent, const char *msgid, const char *content)
{
    cc_append_in(b, "s-cc", type, uuid, parent, msgid, content);
}

static int64_t replaced_rows(dream_store *store)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(store), "SELECT count(*) FROM replaced_messages", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Claude Code writes, at times, a parentUuid naming an entry it never wrote. The thread ran back
 * from the last entry and stopped there, so every message before it was left out, with exit 0;
 * and when the session had been ingested before it grew so, its earlier messages left the store
 * as "replaced". An entry whose parent the file does not hold hangs from the entry before it in
 * the file, as one whose parent a damaged line took. */
static void test_claude_code_parent_the_file_lacks_keeps_the_thread(void **state)
{
    struct dbuf b = {0};
    cc_append(&b, "user", "u1", NULL, NULL, "\"Which numbat facts do you know?\"");
    cc_append(&b, "assistant", "a1", "u1", "m1", "[{\"type\":\"text\",\"text\":\"They eat termites.\"}]");
    cc_append(&b, "user", "u2", "a1", NULL, "\"How many a day?\"");
    cc_append(&b, "assistant", "a2", "u2", "m2", "[{\"type\":\"text\",\"text\":\"About twenty thousand.\"}]");
    size_t first = b.len;
    cc_append(&b, "user", "u3", "phantom-never-written", NULL, "\"Where do they live?\"");
    cc_append(&b, "assistant", "a3", "u3", "m3", "[{\"type\":\"text\",\"text\":\"In south-west Australia.\"}]");
    static const char want[] = "user:Which numbat facts do you know?|assistant:They eat termites.|user:How many a day?|"
                               "assistant:About twenty thousand.|user:Where do they live?|assistant:In south-west Australia.";
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-cc.jsonl", b.data, b.len, &stats);
    char *t = stored_thread(store, "claude-code", "s-cc");
    assert_string_equal(t, want);
    free(t);
    dream_store_close(store);
    /* the same session ingested before it grew: the grown file adds, and replaces nothing */
    store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-cc.jsonl", b.data, first, NULL);
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = DREAM_FORMAT_CLAUDE_CODE;
    memset(&stats, 0, sizeof stats);
    assert_int_equal(dream_ingest_buffer(store, "s-cc.jsonl", b.data, b.len, &p, &stats), 0);
    assert_int_equal(stats.changed, 1);
    t = stored_thread(store, "claude-code", "s-cc");
    assert_string_equal(t, want);
    free(t);
    assert_int_equal(replaced_rows(store), 0);
    dream_store_close(store);
    dbuf_free(&b);
    (void)state;
}

/* What an editor or Claude Code puts in a user line beside what the person typed is left out
 * block by block, not line by line: a <system-reminder> block before the prompt dropped the
 * whole message, and the VS Code extension's <ide_opened_file> block was kept as the person's
 * words (and became the title). A slash command's arguments are the person's words too. */
static void test_claude_code_person_text_is_read_block_by_block(void **state)
{
    struct dbuf b = {0};
    cc_append(&b, "user", "u1", NULL, NULL,
              "[{\"type\":\"text\",\"text\":\"<ide_opened_file>The user opened the file /home/a/secret/plan.md in the IDE. This may or may "
              "not be related to the current task.</ide_opened_file>\"},{\"type\":\"text\",\"text\":\"Help me plan the loan repayments\"}]");
    cc_append(&b, "assistant", "a1", "u1", "m1", "[{\"type\":\"text\",\"text\":\"Start with the rate.\"}]");
    cc_append(&b, "user", "u2", "a1", NULL,
              "[{\"type\":\"text\",\"text\":\"<system-reminder>The TodoWrite tool hasn't been used recently.</system-reminder>\"},"
              "{\"type\":\"text\",\"text\":\"Now draft an email to the bank about the loan\"}]");
    cc_append(&b, "assistant", "a2", "u2", "m2", "[{\"type\":\"text\",\"text\":\"Here is a draft.\"}]");
    cc_append(&b, "user", "u3", "a2", NULL,
              "\"<command-message>review is running…</command-message>\\n<command-name>/review</command-name>\\n"
              "<command-args>check the interest rate table carefully</command-args>\"");
    cc_append(&b, "assistant", "a3", "u3", "m3", "[{\"type\":\"text\",\"text\":\"The table looks right.\"}]");
    cc_append(&b, "user", "u4", "a3", NULL, "\"<command-name>/clear</command-name>\\n<command-message>clear</command-message>\\n<command-args></command-args>\"");
    cc_append(&b, "user", "u5", "u4", NULL,
              "\"<system-reminder>\\nAs you answer, keep the style.\\n</system-reminder>\\n\\nAnd the fees: are they fixed?\"");
    cc_append(&b, "assistant", "a5", "u5", "m5", "[{\"type\":\"text\",\"text\":\"They are fixed.\"}]");
    cc_append(&b, "user", "u6", "a5", NULL,
              "[{\"type\":\"text\",\"text\":\"<ide_selection>The user selected lines 3 to 4 of /home/a/plan.md</ide_selection>\"}]");
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-cc.jsonl", b.data, b.len, NULL);
    char *t = stored_thread(store, "claude-code", "s-cc");
    assert_string_equal(t, "user:Help me plan the loan repayments|assistant:Start with the rate.|"
                           "user:Now draft an email to the bank about the loan|assistant:Here is a draft.|"
                           "user:/review check the interest rate table carefully|assistant:The table looks right.|"
                           "user:And the fees: are they fixed?|assistant:They are fixed.");
    free(t);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, "claude-code", "s-cc", &c), 0);
    assert_null(strstr(c->title, "ide_opened_file"));
    dream_store_conversation_free(c);
    dream_store_close(store);
    dbuf_free(&b);
    (void)state;
}

/* A nightly ingest reads live sessions: an assistant turn of two blocks (two lines, one message
 * id) caught after its first line grows by the second. That is the turn going on, not an edit:
 * before, its first block was kept as a message "replaced by a later export". */
static void test_claude_code_turn_caught_mid_write_grows_without_a_replacement(void **state)
{
    struct dbuf b = {0};
    cc_append(&b, "user", "u1", NULL, NULL, "\"Tell me about giraffes\"");
    cc_append(&b, "assistant", "a1", "u1", "m1", "[{\"type\":\"text\",\"text\":\"Giraffes answer part A.\"}]");
    size_t first = b.len;
    cc_append(&b, "assistant", "a1b", "a1", "m1", "[{\"type\":\"text\",\"text\":\"Giraffes answer part B.\"}]");
    cc_append(&b, "user", "u2", "a1b", NULL, "\"And their necks?\"");
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-cc.jsonl", b.data, first, NULL);
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = DREAM_FORMAT_CLAUDE_CODE;
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "s-cc.jsonl", b.data, b.len, &p, &stats), 0);
    assert_int_equal(stats.changed, 1);
    char *t = stored_thread(store, "claude-code", "s-cc");
    assert_string_equal(t, "user:Tell me about giraffes|assistant:Giraffes answer part A.\n\nGiraffes answer part B.|user:And their necks?");
    free(t);
    assert_int_equal(replaced_rows(store), 0);
    dream_store_close(store);
    dbuf_free(&b);
    (void)state;
}

/* A resumed Claude Code session (claude --resume) is a new log under a new session id that
 * repeats the earlier session's messages, uuids and all, before its own. Both were stored whole:
 * every message of the first twice, in search, in the chunks, and a subject said once counted as
 * one that recurs. The messages another session of the store already holds, at the start of a
 * log, are left to it, in whichever order the two logs are read. */
static void test_claude_code_resumed_session_is_not_stored_twice(void **state)
{
    struct dbuf a = {0}, r = {0};
    static const char *const lines[][5] = {
        {"user", "u1", NULL, NULL, "\"Which numbat facts do you know?\""},
        {"assistant", "a1", "u1", "m1", "[{\"type\":\"text\",\"text\":\"They eat termites.\"}]"},
        {"user", "u2", "a1", NULL, "\"How many a day?\""},
        {"assistant", "a2", "u2", "m2", "[{\"type\":\"text\",\"text\":\"About twenty thousand.\"}]"},
    };
    for (size_t i = 0; i < 4; i++) {
        cc_append_in(&a, "s-first", lines[i][0], lines[i][1], lines[i][2], lines[i][3], lines[i][4]);
        cc_append_in(&r, "s-resumed", lines[i][0], lines[i][1], lines[i][2], lines[i][3], lines[i][4]);
    }
    cc_append_in(&r, "s-resumed", "user", "u3", "a2", NULL, "\"Where do they live?\"");
    cc_append_in(&r, "s-resumed", "assistant", "a3", "u3", "m3", "[{\"type\":\"text\",\"text\":\"In south-west Australia.\"}]");
    static const char first[] = "user:Which numbat facts do you know?|assistant:They eat termites.|user:How many a day?|"
                                "assistant:About twenty thousand.";
    for (int order = 0; order < 2; order++) {
        dream_store *store;
        assert_int_equal(dream_store_open(":memory:", &store), 0);
        struct dream_ingest_params p = dream_ingest_default_params();
        p.format = DREAM_FORMAT_CLAUDE_CODE;
        for (int pass = 0; pass < 2; pass++) {
            struct dream_ingest_stats st1 = {0}, st2 = {0};
            const struct dbuf *one = order ? &r : &a, *two = order ? &a : &r;
            assert_int_equal(dream_ingest_buffer(store, order ? "s-resumed.jsonl" : "s-first.jsonl", one->data, one->len, &p, &st1), 0);
            assert_int_equal(dream_ingest_buffer(store, order ? "s-first.jsonl" : "s-resumed.jsonl", two->data, two->len, &p, &st2), 0);
            /* the second pass finds nothing new, and nothing is skipped as damaged or a duplicate */
            assert_int_equal(st1.added + st2.added, pass ? 0 : order ? 1 : 2);
            assert_int_equal(st1.changed + st2.changed, 0);
            assert_int_equal(st1.unchanged + st2.unchanged, pass ? 2 : order ? 1 : 0);
            for (int k = 0; k < DREAM_SKIP_COUNT; k++) assert_int_equal(st1.skipped[k] + st2.skipped[k], 0);
        }
        struct dream_store_counts n;
        assert_int_equal(dream_store_count(store, &n), 0);
        assert_int_equal(n.messages, 6);
        char *t = stored_thread(store, "claude-code", order ? "s-resumed" : "s-first");
        assert_string_equal(t, order ? "user:Which numbat facts do you know?|assistant:They eat termites.|user:How many a day?|"
                                       "assistant:About twenty thousand.|user:Where do they live?|assistant:In south-west Australia."
                                     : first);
        free(t);
        if (!order) {
            t = stored_thread(store, "claude-code", "s-resumed");
            assert_string_equal(t, "user:Where do they live?|assistant:In south-west Australia.");
            free(t);
        }
        dream_store_close(store);
    }
    dbuf_free(&a);
    dbuf_free(&r);
    (void)state;
}

/* A log holding the lines of two sessions: its own (the file is named after it), then another's,
 * as Claude Code writes when /resume puts a session's lines into the wrong log. The file took its
 * id from its first line and its thread from its last: the second session's messages were stored
 * under the first one's id, and the first one's were lost. Each is its own conversation, whether
 * the second starts afresh or hangs from the first's last entry (then its copy of the first is
 * left to the first). */
static void test_claude_code_log_holding_two_sessions_keeps_both(void **state)
{
    for (int hang = 0; hang < 2; hang++) {
        struct dbuf b = {0};
        cc_append_in(&b, "aaaa", "user", "u1", NULL, NULL, "\"Alpha question about zebras\"");
        cc_append_in(&b, "aaaa", "assistant", "a1", "u1", "m1", "[{\"type\":\"text\",\"text\":\"Zebras have stripes.\"}]");
        cc_append_in(&b, "bbbb", "user", "v1", hang ? "a1" : NULL, NULL, "\"Beta question about kiwis\"");
        cc_append_in(&b, "bbbb", "assistant", "b1", "v1", "m2", "[{\"type\":\"text\",\"text\":\"Kiwis cannot fly.\"}]");
        struct dream_ingest_stats stats = {0};
        dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "aaaa.jsonl", b.data, b.len, &stats);
        assert_int_equal(stats.added, 2);
        char *t = stored_thread(store, "claude-code", "aaaa");
        assert_string_equal(t, "user:Alpha question about zebras|assistant:Zebras have stripes.");
        free(t);
        t = stored_thread(store, "claude-code", "bbbb");
        assert_string_equal(t, "user:Beta question about kiwis|assistant:Kiwis cannot fly.");
        free(t);
        dream_store_close(store);
        dbuf_free(&b);
    }
    (void)state;
}

/* A timestamp naming a day the month does not have (2024-02-30, 2023-02-29) is no time at all,
 * as any other malformed one: before, timegm rolled it over into March, and the message was
 * stored (and cited) under a day nobody wrote it on. 2024-02-29 is a real day. */
static void test_a_timestamp_on_a_day_the_month_lacks_is_unknown(void **state)
{
    static const char text[] =
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"s-day\",\"timestamp\":\"2024-02-30T10:00:00Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"Which day is it?\"}}\n"
        "{\"type\":\"assistant\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"sessionId\":\"s-day\",\"timestamp\":\"2023-02-29T10:00:00Z\","
        "\"message\":{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Not that one.\"}]}}\n"
        "{\"type\":\"user\",\"uuid\":\"u3\",\"parentUuid\":\"u2\",\"sessionId\":\"s-day\",\"timestamp\":\"2024-02-29T10:00:00Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"And this one?\"}}\n";
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "s-day.jsonl", text, sizeof text - 1, NULL);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, "claude-code", "s-day", &c), 0);
    assert_int_equal(c->n_messages, 3);
    assert_int_equal(c->messages[0].time_ms, 0);
    assert_int_equal(c->messages[1].time_ms, 0);
    assert_int_equal(c->messages[2].time_ms, 1709200800000);
    dream_store_conversation_free(c);
    dream_store_close(store);
    (void)state;
}

static void count_bad_text(void *ud, const struct dream_store_bad_text *bad)
{
    (void)bad;
    (*(size_t *)ud)++;
}

/* A file name that is not UTF-8 (a Latin-1 "café") gave the stored origin, and for a session log
 * whose lines carry no id the conversation's id, bytes that break any reader of the store as text
 * (dream check named them). They are stored with U+FFFD for each bad byte, as message text is. */
static void test_a_file_name_not_in_utf8_stores_valid_text(void **state)
{
    static const char text[] =
        "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"timestamp\":\"2025-01-02T10:00:00Z\","
        "\"message\":{\"role\":\"user\",\"content\":\"Is this file name a problem?\"}}\n";
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingested_as(DREAM_FORMAT_CLAUDE_CODE, "/tmp/caf\xe9.jsonl", text, sizeof text - 1, &stats);
    assert_int_equal(stats.added, 1);
    size_t bad = 0, n_bad = 0;
    assert_int_equal(dream_store_check_text(store, count_bad_text, &bad, &n_bad), 0);
    assert_int_equal(n_bad, 0);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, "claude-code", "caf\xef\xbf\xbd", &c), 0);
    dream_store_conversation_free(c);
    /* the same file again is the same conversation */
    memset(&stats, 0, sizeof stats);
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = DREAM_FORMAT_CLAUDE_CODE;
    assert_int_equal(dream_ingest_buffer(store, "/tmp/caf\xe9.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.unchanged, 1);
    dream_store_close(store);
    (void)state;
}

/* A folder of sessions reached through a symbolic link (~/.claude/projects/proj linked to where
 * the person keeps it) is read: it was passed over without a word, so those sessions were never
 * ingested, the nightly job included. A link back up the tree, or a second way into a folder
 * already read, is not read again. */
static void test_a_symlinked_folder_is_read_once(void **state)
{
    char root[] = "/tmp/dream-test-ingest-links-XXXXXX";
    assert_non_null(mkdtemp(root));
    size_t len;
    char *log = read_fixture("claude-code/-home-ana-code-plotter/5d1e2f3a-4b5c-4d6e-8f70-a1b2c3d4e5f6.jsonl", &len);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/elsewhere/proj' '%s/projects' && ln -s '%s/elsewhere/proj' '%s/projects/proj' && "
             "ln -s .. '%s/projects/up' && ln -s '%s/elsewhere/proj' '%s/projects/again'", root, root, root, root, root, root, root);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/elsewhere/proj/5d1e2f3a-4b5c-4d6e-8f70-a1b2c3d4e5f6.jsonl", root);
    assert_int_equal(file_write_atomic(cmd, log, len), 0);
    free(log);
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    struct dream_ingest_stats stats = {0};
    snprintf(cmd, sizeof cmd, "%s/projects", root);
    assert_int_equal(dream_ingest_path(store, cmd, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.files, 1);
    assert_int_equal(sk.n, 0);
    dream_store_close(store);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    (void)state;
}

/* A session log damaged in the middle (a writer killed half way through a line, the next line
 * glued onto the fragment) loses that line, not the session: the line is reported, and every
 * other message is stored. Before, the whole session was skipped on every ingest from then on. */
static void test_session_log_damaged_middle_line_is_left_out_and_the_rest_read(void **state)
{
    size_t len;
    char *log = read_fixture("codex/2025/06/01/rollout-2025-06-01T14-00-00-0197a3c4-1111-7222-8333-944455556666.jsonl", &len);
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "rollout.jsonl", log, len, NULL, &stats), 0);
    struct dream_store_counts whole;
    assert_int_equal(dream_store_count(store, &whole), 0);
    dream_store_close(store);
    char *third = strchr(strchr(log, '\n') + 1, '\n') + 1;
    third[0] = 'x'; /* corrupt line 3 */
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    memset(&stats, 0, sizeof stats);
    assert_int_equal(dream_ingest_buffer(store, "rollout.jsonl", log, len, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_string_equal(sk.last_where, "rollout.jsonl:3");
    assert_non_null(strstr(sk.last_reason, "left out"));
    struct dream_store_counts n;
    assert_int_equal(dream_store_count(store, &n), 0);
    assert_int_equal(n.conversations, 1);
    assert_true(n.messages >= whole.messages - 1 && n.messages > 1);
    free(log);
    dream_store_close(store);

    /* in a tree of entries (pi, Claude Code) the lines after the damage still reach the ones
     * before it: a parent the damage took is bridged by the entry before it in the file */
    static const char pi[] =
        "{\"type\":\"session\",\"version\":3,\"id\":\"p-torn\",\"timestamp\":\"2025-03-02T11:00:00Z\",\"cwd\":\"/x\"}\n"
        "{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2025-03-02T11:00:00Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"When should I sow tomatoes?\"}]}}\n"
        "{\"type\":\"message\",\"id\":\"m2\",\"parentId\":\"m1\",\"timestamp\":\"2025-03-02T11:01:00Z\",\"mess"
        "{\"type\":\"message\",\"id\":\"m3\",\"parentId\":\"m2\",\"timestamp\":\"2025-03-02T11:02:00Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"And peppers?\"}]}}\n"
        "{\"type\":\"message\",\"id\":\"m4\",\"parentId\":\"m3\",\"timestamp\":\"2025-03-02T11:03:00Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Late February.\"}]}}\n"
        "{\"type\":\"message\",\"id\":\"m5\",\"parentId\":\"m4\",\"timestamp\":\"2025-03-02T11:04:00Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Thanks.\"}]}}\n";
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    memset(&sk, 0, sizeof sk);
    memset(&stats, 0, sizeof stats);
    p.format = DREAM_FORMAT_PI;
    assert_int_equal(dream_ingest_buffer(store, "torn.jsonl", pi, sizeof pi - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_string_equal(sk.last_where, "torn.jsonl:3");
    char *t = stored_thread(store, "pi", "p-torn");
    assert_string_equal(t, "user:When should I sow tomatoes?|assistant:Late February.|user:Thanks.");
    free(t);
    dream_store_close(store);
    (void)state;
}

/* pi's session_info entry (the session named with /name) is a node of the tree: the next entry
 * names it as its parent. It was taken out of the tree, so everything said before the naming
 * was cut off (and, for a session stored before, replaced). */
static void test_pi_session_named_midway_keeps_what_came_before(void **state)
{
    static const char pi[] =
        "{\"type\":\"session\",\"version\":3,\"id\":\"p-named\",\"timestamp\":\"2025-03-02T11:00:00Z\",\"cwd\":\"/x\"}\n"
        "{\"type\":\"message\",\"id\":\"m1\",\"parentId\":null,\"timestamp\":\"2025-03-02T11:00:00Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"When should I sow tomatoes?\"}]}}\n"
        "{\"type\":\"message\",\"id\":\"m2\",\"parentId\":\"m1\",\"timestamp\":\"2025-03-02T11:01:00Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Mid-March.\"}]}}\n"
        "{\"type\":\"session_info\",\"id\":\"s1\",\"parentId\":\"m2\",\"timestamp\":\"2025-03-02T11:02:00Z\",\"name\":\"Tomatoes\"}\n"
        "{\"type\":\"message\",\"id\":\"m3\",\"parentId\":\"s1\",\"timestamp\":\"2025-03-02T11:03:00Z\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"And peppers?\"}]}}\n";
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingested_as(DREAM_FORMAT_PI, "named.jsonl", pi, sizeof pi - 1, &stats);
    char *t = stored_thread(store, "pi", "p-named");
    assert_string_equal(t, "user:When should I sow tomatoes?|assistant:Mid-March.|user:And peppers?");
    free(t);
    struct dream_store_conversation *c = NULL;
    assert_int_equal(dream_store_get(store, "pi", "p-named", &c), 0);
    assert_string_equal(c->title, "Tomatoes");
    dream_store_conversation_free(c);
    dream_store_close(store);
    (void)state;
}

/* ChatGPT's voice mode writes each turn as multimodal_text whose parts are objects: the words
 * are in an audio_transcription part (beside the audio pointer). They were dropped, and a voice
 * conversation was skipped as empty. */
static void test_chatgpt_voice_transcriptions_are_messages(void **state)
{
    static const char text[] =
        "[{\"title\":\"Voice chat\",\"create_time\":1700000000,\"update_time\":1700000100,\"id\":\"v1\",\"current_node\":\"b\","
        "\"mapping\":{\"a\":{\"id\":\"a\",\"parent\":null,\"children\":[\"b\"],\"message\":{\"id\":\"a\",\"author\":{\"role\":\"user\"},"
        "\"create_time\":1700000000,\"recipient\":\"all\",\"content\":{\"content_type\":\"multimodal_text\",\"parts\":["
        "{\"content_type\":\"audio_transcription\",\"text\":\"How long do I rest a steak?\",\"direction\":\"in\"},"
        "{\"content_type\":\"audio_asset_pointer\",\"asset_pointer\":\"sediment://file_1\",\"size_bytes\":1000}]}}},"
        "\"b\":{\"id\":\"b\",\"parent\":\"a\",\"children\":[],\"message\":{\"id\":\"b\",\"author\":{\"role\":\"assistant\"},"
        "\"create_time\":1700000050,\"recipient\":\"all\",\"content\":{\"content_type\":\"multimodal_text\",\"parts\":["
        "{\"content_type\":\"audio_transcription\",\"text\":\"About five minutes.\",\"direction\":\"out\"}]}}}}}]";
    struct dream_ingest_stats stats = {0};
    dream_store *store = ingested_as(DREAM_FORMAT_CHATGPT, "conversations.json", text, sizeof text - 1, &stats);
    assert_int_equal(stats.added, 1);
    char *t = stored_thread(store, "chatgpt", "v1");
    assert_string_equal(t, "user:How long do I rest a steak?|assistant:About five minutes.");
    free(t);
    dream_store_close(store);
    (void)state;
}

static void test_openai_malformed_line_is_skipped_and_next_read(void **state)
{
    static const char text[] = "{\"messages\": [{\"role\": \"user\", \"content\": \"one\"}]}\n"
                               "{\"messages\": [{\"role\": \"user\", \"content\": \"two\"}\n"
                               "{\"messages\": [{\"role\": \"user\", \"content\": \"three\"}]}\n";
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct skips sk = {0};
    struct dream_ingest_params p = params_with(&sk);
    p.format = DREAM_FORMAT_OPENAI_JSONL;
    struct dream_ingest_stats stats = {0};
    assert_int_equal(dream_ingest_buffer(store, "chats.jsonl", text, sizeof text - 1, &p, &stats), 0);
    assert_int_equal(stats.added, 2);
    assert_int_equal(stats.skipped[DREAM_SKIP_MALFORMED], 1);
    assert_string_equal(sk.last_where, "chats.jsonl:2");
    dream_store_close(store);
    (void)state;
}

static void test_unknown_file_in_a_directory_is_skipped_as_unsupported(void **state)
{
    dream_store *store;
    assert_int_equal(dream_store_open(":memory:", &store), 0);
    struct dream_ingest_stats stats = {0};
    static const char text[] = "{\"theme\": \"dark\"}";
    assert_int_equal(dream_ingest_buffer(store, "settings.json", text, sizeof text - 1, NULL, &stats), 0);
    assert_int_equal(stats.skipped[DREAM_SKIP_UNSUPPORTED], 1);
    assert_int_equal(stats.conversations, 0);
    assert_int_equal(dream_ingest_path(store, fixture("no-such-dir"), NULL, &stats), DREAM_ENOTFOUND);
    dream_store_close(store);
    (void)state;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_ingest FIXTURE_DIR\n");
        return 2;
    }
    data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chatgpt_export_matches_expected),
        cmocka_unit_test(test_claude_export_matches_expected),
        cmocka_unit_test(test_claude_code_session_matches_expected),
        cmocka_unit_test(test_claude_code_interruption_markers_are_not_messages),
        cmocka_unit_test(test_claude_code_parent_the_file_lacks_keeps_the_thread),
        cmocka_unit_test(test_claude_code_person_text_is_read_block_by_block),
        cmocka_unit_test(test_claude_code_turn_caught_mid_write_grows_without_a_replacement),
        cmocka_unit_test(test_claude_code_resumed_session_is_not_stored_twice),
        cmocka_unit_test(test_claude_code_log_holding_two_sessions_keeps_both),
        cmocka_unit_test(test_codex_rollout_matches_expected),
        cmocka_unit_test(test_pi_sessions_v1_and_v3_match_expected),
        cmocka_unit_test(test_openai_jsonl_matches_expected),
        cmocka_unit_test(test_chatgpt_follows_current_node_branch),
        cmocka_unit_test(test_ingest_same_export_twice_changes_nothing),
        cmocka_unit_test(test_later_export_updates_grown_conversation_and_keeps_missing_ones),
        cmocka_unit_test(test_truncated_json_names_file_and_keeps_store),
        cmocka_unit_test(test_malformed_conversation_is_reported_with_line_and_next_is_read),
        cmocka_unit_test(test_truncated_zip_is_reported_and_keeps_store),
        cmocka_unit_test(test_zip_member_inflating_past_declared_size_is_refused),
        cmocka_unit_test(test_zip_member_with_wrong_crc_is_refused),
        cmocka_unit_test(test_zip_member_with_wrong_crc_stores_nothing),
        cmocka_unit_test(test_stored_zip_member_in_a_folder_is_read),
        cmocka_unit_test(test_zip_member_named_with_backslashes_is_read),
        cmocka_unit_test(test_jsonl_with_a_byte_order_mark_is_read),
        cmocka_unit_test(test_openai_jsonl_ids_survive_a_line_added_and_forget),
        cmocka_unit_test(test_invalid_utf8_is_repaired_and_counted),
        cmocka_unit_test(test_duplicate_ids_in_one_export_keep_the_first),
        cmocka_unit_test(test_empty_conversations_are_skipped_and_counted),
        cmocka_unit_test(test_conversation_of_300k_tokens_is_ingested),
        cmocka_unit_test(test_format_is_detected_from_content),
        cmocka_unit_test(test_forced_format_reads_what_detection_cannot),
        cmocka_unit_test(test_session_log_unfinished_last_line_is_ignored),
        cmocka_unit_test(test_session_log_damaged_middle_line_is_left_out_and_the_rest_read),
        cmocka_unit_test(test_pi_session_named_midway_keeps_what_came_before),
        cmocka_unit_test(test_claude_code_shell_echoes_and_api_errors_are_not_messages),
        cmocka_unit_test(test_a_file_name_not_in_utf8_stores_valid_text),
        cmocka_unit_test(test_a_timestamp_on_a_day_the_month_lacks_is_unknown),
        cmocka_unit_test(test_a_stray_quote_is_reported_where_the_json_breaks),
        cmocka_unit_test(test_a_symlinked_folder_is_read_once),
        cmocka_unit_test(test_chatgpt_voice_transcriptions_are_messages),
        cmocka_unit_test(test_openai_malformed_line_is_skipped_and_next_read),
        cmocka_unit_test(test_unknown_file_in_a_directory_is_skipped_as_unsupported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
