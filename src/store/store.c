/* store.c — the SQLite memory store (see include/dream/store.h). */
#include "store_internal.h"

#include "dream/error.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dream_store {
    sqlite3 *db;
    char *path;
    int version;
};

/* Citation hashes start at this many hex digits and grow by two on a collision. */
#define STORE_CITE_MIN 8

sqlite3 *store_db(dream_store *store) { return store->db; }

const char *dream_store_path(const dream_store *store) { return store->path; }

int dream_store_schema_version(dream_store *store) { return store->version; }

/* Sets the last error from the connection's message; returns DREAM_EIO. */
static int store_fail(dream_store *store, const char *what)
{
    return dream_error_set(DREAM_EIO, "store %s: %s: %s", store->path, what, sqlite3_errmsg(store->db));
}

int store_exec(dream_store *store, const char *sql, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(store->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    int rc = dream_error_set(DREAM_EIO, "store %s: %s: %s", store->path, what, msg ? msg : sqlite3_errmsg(store->db));
    sqlite3_free(msg);
    return rc;
}

int store_sql_error(dream_store *store, const char *what)
{
    return dream_error_set(DREAM_EIO, "%s in the store %s: %s", what, store->path, sqlite3_errmsg(store->db));
}

int64_t store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int store_prepare(dream_store *store, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v2(store->db, sql, -1, st, NULL) != SQLITE_OK) return store_fail(store, "preparing a statement");
    return 0;
}

/* Reads PRAGMA user_version into store->version. */
static int store_read_version(dream_store *store)
{
    sqlite3_stmt *st;
    if (store_prepare(store, "PRAGMA user_version", &st)) return DREAM_EIO;
    int rc = sqlite3_step(st);
    store->version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : store_fail(store, "reading the schema version");
}

/* Applies every migration past the current version, each in its own transaction together with
 * the version bump, so a crash leaves the store at some whole version. */
static int store_migrate(dream_store *store)
{
    if (store_read_version(store)) return DREAM_EIO;
    if (store->version > store_migration_count)
        return dream_error_set(DREAM_EFORMAT,
                               "store %s has schema version %d, newer than this dream knows (%d); "
                               "use a newer dream, or point --store elsewhere",
                               store->path, store->version, store_migration_count);
    while (store->version < store_migration_count) {
        int v = store->version;
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        if (store_exec(store, "BEGIN IMMEDIATE", "starting a migration")) return DREAM_EIO;
        if (store_exec(store, store_migrations[v], "migrating the schema") || store_exec(store, bump, "migrating the schema")) {
            sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
            return dream_error_wrap(DREAM_EIO, "migrating schema version %d to %d", v, v + 1);
        }
        if (store_exec(store, "COMMIT", "committing a migration")) return DREAM_EIO;
        store->version = v + 1;
    }
    return 0;
}

/* Creates the directory that will hold path (no-op for a bare file name). */
static int store_mkdir_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = file_mkdirs(dir, 0700);
    free(dir);
    return rc;
}

/* --store may name any file: one SQLite cannot read, or the database of another program (tables,
 * and no schema version of ours), is refused before the connection's setup writes to it. */
static int store_refuse_foreign(dream_store *store)
{
    static const char sql[] = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' "
                              "AND (SELECT user_version FROM pragma_user_version) = 0 ORDER BY name LIMIT 1";
    static const char what[] = "give --store the path of a dream store, or of a file that does not exist yet; nothing was written to it";
    sqlite3_stmt *st = NULL;
    int step = sqlite3_prepare_v2(store->db, sql, -1, &st, NULL) == SQLITE_OK ? sqlite3_step(st) : SQLITE_ERROR;
    int rc = 0;
    if (step == SQLITE_ROW)
        rc = dream_error_set(DREAM_EFORMAT, "%s is a SQLite database but not a dream store (it has a table \"%s\" and no dream schema version): %s",
                             store->path, (const char *)sqlite3_column_text(st, 0), what);
    else if (step != SQLITE_DONE && (sqlite3_errcode(store->db) == SQLITE_NOTADB || sqlite3_errcode(store->db) == SQLITE_CORRUPT))
        rc = dream_error_set(DREAM_EFORMAT, "%s is not a dream store (%s): %s", store->path, sqlite3_errmsg(store->db), what);
    else if (step != SQLITE_DONE) /* a folder the user may not write to, a full disk, a lock: not the file's fault */
        rc = dream_error_set(DREAM_EIO, "cannot open the store %s (%s): dream writes the store and the files SQLite keeps beside it "
                                        "(%s-wal, %s-shm), so the user running it needs write access to the file and its folder",
                             store->path, sqlite3_errmsg(store->db), store->path, store->path);
    sqlite3_finalize(st);
    return rc;
}

int dream_store_open(const char *path, dream_store **out)
{
    *out = NULL;
    bool mem = !strcmp(path, ":memory:");
    if (!mem && store_mkdir_parent(path)) return dream_error_wrap(DREAM_EIO, "creating the store's directory for %s", path);
    dream_store *store = calloc(1, sizeof *store);
    if (!store || !(store->path = strdup(path))) {
        free(store);
        return dream_error_set(DREAM_ENOMEM, "out of memory opening the store");
    }
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path, &store->db, flags, NULL) != SQLITE_OK) {
        int rc = dream_error_set(DREAM_EIO, "cannot open the store %s: %s", path,
                                 store->db ? sqlite3_errmsg(store->db) : "out of memory");
        dream_store_close(store);
        return rc;
    }
    sqlite3_busy_timeout(store->db, STORE_BUSY_MS);
    if (store_snippet_register(store->db) || store_tokenizer_register(store->db)) {
        int rc = dream_error_set(DREAM_EIO, "cannot open the store %s: this SQLite's FTS5 does not take dream's snippet or tokenizer (%s)", path,
                                 sqlite3_errmsg(store->db));
        dream_store_close(store);
        return rc;
    }
    if (!mem && store_refuse_foreign(store)) {
        int rc = dream_error_code();
        dream_store_close(store);
        return rc;
    }
    /* A 16 MB page cache rather than SQLite's 2 MB: a search over a common word scores 20,000
     * rows through the index's pages, and with 2 MB it took half as long again (bench_search). */
    const char *setup = mem ? "PRAGMA foreign_keys = ON;"
                            : "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384;";
    if (store_exec(store, setup, "setting up the connection") || store_migrate(store) ||
        store_exec(store, "CREATE TEMP TABLE IF NOT EXISTS ingest_seen (source TEXT, id TEXT, PRIMARY KEY (source, id))",
                   "creating the duplicate tracker")) {
        dream_store_close(store);
        return dream_error_code() ? dream_error_code() : DREAM_EIO;
    }
    *out = store;
    return 0;
}

void dream_store_close(dream_store *store)
{
    if (!store) return;
    sqlite3_close(store->db);
    free(store->path);
    free(store);
}

int store_seen_reset(dream_store *store) { return store_exec(store, "DELETE FROM temp.ingest_seen", "resetting the duplicate tracker"); }

int store_seen_mark(dream_store *store, const char *source, const char *id)
{
    sqlite3_stmt *st;
    if (store_prepare(store, "INSERT OR IGNORE INTO temp.ingest_seen (source, id) VALUES (?, ?)", &st)) return DREAM_EIO;
    sqlite3_bind_text(st, 1, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_fail(store, "tracking duplicates");
    return sqlite3_changes(store->db) ? 1 : 0;
}

/* The content hash: title and every message's role, id, time and text, each field ended by a
 * NUL so no two different conversations feed the same bytes. */
static void store_content_hash(const struct dream_conversation *c, char hex[65])
{
    struct sha256 s;
    uint8_t d[32];
    sha256_init(&s);
    sha256_update(&s, c->title, strlen(c->title) + 1);
    for (size_t i = 0; i < c->n_messages; i++) {
        const struct dream_message *m = &c->messages[i];
        char t[32];
        int tn = snprintf(t, sizeof t, "%lld", (long long)m->time_ms);
        sha256_update(&s, m->role, strlen(m->role) + 1);
        sha256_update(&s, m->id, strlen(m->id) + 1);
        sha256_update(&s, t, (size_t)tn + 1);
        sha256_update(&s, m->text, strlen(m->text) + 1);
    }
    sha256_final(&s, d);
    sha256_hex(d, hex);
}

/* A one-way key of the forgotten table: SHA-256 of the parts, each but the last followed by its
 * NUL. A conversation's is ("forgotten", source, id); a message's ("forgotten message", source,
 * its id in the export, its text), so the two never meet. */
static void store_forgotten_key(const char *const *parts, size_t n, char hex[65])
{
    struct sha256 s;
    uint8_t d[32];
    sha256_init(&s);
    for (size_t i = 0; i < n; i++) sha256_update(&s, parts[i], strlen(parts[i]) + (i + 1 < n));
    sha256_final(&s, d);
    sha256_hex(d, hex);
}

/* Inserts key into the forgotten table with st ("INSERT OR IGNORE ..."), reset and bound here. */
static int store_forgotten_put(dream_store *store, sqlite3_stmt *st, const char *key, int64_t now, const char *what)
{
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, now);
    return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(store, what);
}

int store_forgotten_add(dream_store *store, const char *source, const char *id)
{
    char key[65];
    store_forgotten_key((const char *const[]){"forgotten", source, id}, 3, key);
    sqlite3_stmt *st;
    if (store_prepare(store, "INSERT OR IGNORE INTO forgotten (key, forgotten_at) VALUES (?, ?)", &st)) return DREAM_EIO;
    int rc = store_forgotten_put(store, st, key, store_now_ms(), "recording a forgotten conversation");
    sqlite3_finalize(st);
    return rc;
}

int store_forgotten_add_messages(dream_store *store, int64_t conversation)
{
    sqlite3_stmt *sel, *ins;
    if (store_prepare(store,
                      "SELECT c.source, m.source_id, m.text FROM messages m JOIN conversations c ON c.id = m.conversation "
                      "WHERE m.conversation = ? AND m.source_id <> ''",
                      &sel))
        return DREAM_EIO;
    if (store_prepare(store, "INSERT OR IGNORE INTO forgotten (key, forgotten_at) VALUES (?, ?)", &ins)) {
        sqlite3_finalize(sel);
        return DREAM_EIO;
    }
    sqlite3_bind_int64(sel, 1, conversation);
    int64_t now = store_now_ms();
    int rc = 0, step;
    while (!rc && (step = sqlite3_step(sel)) == SQLITE_ROW) {
        char key[65];
        store_forgotten_key((const char *const[]){"forgotten message", (const char *)sqlite3_column_text(sel, 0),
                                                  (const char *)sqlite3_column_text(sel, 1), (const char *)sqlite3_column_text(sel, 2)},
                            4, key);
        rc = store_forgotten_put(store, ins, key, now, "recording a forgotten message");
    }
    if (!rc && step != SQLITE_DONE) rc = store_fail(store, "reading a forgotten conversation's messages");
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return rc;
}

int store_messages_forgotten(dream_store *store, const char *source, const char *const *msg_ids, const char *const *texts, size_t n,
                             size_t *lead)
{
    *lead = 0;
    if (!n) return 0;
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT 1 FROM forgotten WHERE key = ?", &st)) return DREAM_EIO;
    int step = SQLITE_ROW;
    size_t k = 0;
    for (; k < n && msg_ids[k][0]; k++) {
        char key[65];
        store_forgotten_key((const char *const[]){"forgotten message", source, msg_ids[k], texts[k]}, 4, key);
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
        if ((step = sqlite3_step(st)) != SQLITE_ROW) break;
    }
    sqlite3_finalize(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE) return store_fail(store, "looking up forgotten messages");
    *lead = k;
    return 0;
}

/* Whether sql (up to two text parameters a and b; b may be NULL) finds a row: 1, 0, or a
 * negative status naming what. */
static int store_row_exists(dream_store *store, const char *sql, const char *a, const char *b, const char *what)
{
    sqlite3_stmt *st;
    if (store_prepare(store, sql, &st)) return DREAM_EIO;
    sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    if (b) sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    sqlite3_finalize(st);
    return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : store_fail(store, what);
}

/* Whether (source, id) was forgotten: 1, 0, or a negative status. */
static int store_is_forgotten(dream_store *store, const char *source, const char *id)
{
    char key[65];
    store_forgotten_key((const char *const[]){"forgotten", source, id}, 3, key);
    return store_row_exists(store, "SELECT 1 FROM forgotten WHERE key = ?", key, NULL, "looking up forgotten conversations");
}

int store_id_known(dream_store *store, const char *source, const char *id)
{
    int f = store_is_forgotten(store, source, id);
    return f != 0 ? f
                  : store_row_exists(store, "SELECT 1 FROM conversations WHERE source = ? AND source_id = ?", source, id,
                                     "looking up a conversation");
}

/* Chooses the citation hash for a new conversation: the shortest prefix (from 8 hex digits,
 * growing by 2) of SHA-256(source NUL id) that no stored conversation holds. */
static int store_assign_cite(dream_store *store, const char *source, const char *id, char cite[65])
{
    struct sha256 s;
    uint8_t d[32];
    char hex[65];
    sha256_init(&s);
    sha256_update(&s, source, strlen(source) + 1);
    sha256_update(&s, id, strlen(id));
    sha256_final(&s, d);
    sha256_hex(d, hex);
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT 1 FROM conversations WHERE cite = ?", &st)) return DREAM_EIO;
    for (int len = STORE_CITE_MIN; len <= 64; len += 2) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, hex, len, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
            memcpy(cite, hex, (size_t)len);
            cite[len] = '\0';
            sqlite3_finalize(st);
            return 0;
        }
        if (rc != SQLITE_ROW) {
            sqlite3_finalize(st);
            return store_fail(store, "checking a citation hash");
        }
    }
    sqlite3_finalize(st);
    return dream_error_set(DREAM_EINTERNAL, "conversation %s/%s: its full SHA-256 citation hash is taken", source, id);
}

static void store_bind_time(sqlite3_stmt *st, int i, int64_t ms)
{
    if (ms) sqlite3_bind_int64(st, i, ms);
    else sqlite3_bind_null(st, i);
}

/* Messages are inserted this many to a statement: the search index's triggers run inside the
 * statement, and FTS5 writes what it holds as a new segment at the start of each statement
 * (a savepoint), so one statement per message made a segment per message to merge later. */
#define STORE_MESSAGES_PER_INSERT 64

/* "INSERT INTO messages ... VALUES (...), ..." of n rows, prepared into *st. */
static int store_prepare_insert(dream_store *store, size_t n, sqlite3_stmt **st)
{
    struct dbuf sql = {0};
    int rc = dbuf_puts(&sql, "INSERT INTO messages (conversation, position, role, source_id, created_at, text) VALUES ");
    for (size_t i = 0; !rc && i < n; i++) rc = dbuf_puts(&sql, i ? ", (?, ?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?, ?)");
    if (rc) return dream_error_set(DREAM_ENOMEM, "out of memory");
    rc = store_prepare(store, sql.data, st);
    dbuf_free(&sql);
    return rc;
}

/* Inserts messages[from..n) of c under conversation rowid. */
static int store_insert_messages(dream_store *store, int64_t rowid, const struct dream_conversation *c, size_t from)
{
    sqlite3_stmt *full = NULL, *st = NULL;
    int rc = 0;
    for (size_t i = from; !rc && i < c->n_messages;) {
        size_t k = c->n_messages - i < STORE_MESSAGES_PER_INSERT ? c->n_messages - i : STORE_MESSAGES_PER_INSERT;
        if (k == STORE_MESSAGES_PER_INSERT) rc = full ? 0 : store_prepare_insert(store, k, &full);
        else rc = store_prepare_insert(store, k, &st);
        if (rc) break;
        sqlite3_stmt *ins = k == STORE_MESSAGES_PER_INSERT ? full : st;
        sqlite3_reset(ins);
        for (size_t j = 0; j < k; j++, i++) {
            const struct dream_message *m = &c->messages[i];
            int b = (int)j * 6;
            sqlite3_bind_int64(ins, b + 1, rowid);
            sqlite3_bind_int64(ins, b + 2, (int64_t)i);
            sqlite3_bind_text(ins, b + 3, m->role, -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, b + 4, m->id, -1, SQLITE_STATIC);
            store_bind_time(ins, b + 5, m->time_ms);
            sqlite3_bind_text(ins, b + 6, m->text, -1, SQLITE_STATIC);
        }
        if (sqlite3_step(ins) != SQLITE_DONE) rc = store_fail(store, "inserting messages");
    }
    sqlite3_finalize(full);
    sqlite3_finalize(st);
    return rc;
}

/* The first position at which the stored messages of rowid differ from c's (n when all of c's
 * messages are stored unchanged and nothing follows them). */
static int store_first_difference(dream_store *store, int64_t rowid, const struct dream_conversation *c, size_t *out)
{
    sqlite3_stmt *st;
    if (store_prepare(store,
                      "SELECT role, source_id, coalesce(created_at, 0), text FROM messages "
                      "WHERE conversation = ? ORDER BY position",
                      &st))
        return DREAM_EIO;
    sqlite3_bind_int64(st, 1, rowid);
    size_t i = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && i < c->n_messages) {
        const struct dream_message *m = &c->messages[i];
        const char *role = (const char *)sqlite3_column_text(st, 0);
        const char *id = (const char *)sqlite3_column_text(st, 1);
        const char *text = (const char *)sqlite3_column_text(st, 3);
        if (!role || !id || !text || strcmp(role, m->role) || strcmp(id, m->id) ||
            sqlite3_column_int64(st, 2) != m->time_ms || strcmp(text, m->text))
            break;
        i++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return store_fail(store, "reading stored messages");
    *out = i;
    return 0;
}

/* Keeps the messages of rowid from position from on that c does not carry on (an edited
 * message, what followed it, a dropped tail) in replaced_messages, before they are deleted: a
 * text kept already has its revision brought up to this one instead of a second copy. A message
 * c carries on under its id with more text after it (a turn read while it was still being
 * written: Claude Code writes an answer block by block) is carried on, not replaced. */
static int store_keep_replaced(dream_store *store, int64_t rowid, int64_t revision, const struct dream_conversation *c, size_t from)
{
    sqlite3_stmt *old, *same = NULL, *ins = NULL;
    if (store_prepare(store, "SELECT position, role, source_id, created_at, text FROM messages WHERE conversation = ?1 AND position >= ?2", &old))
        return DREAM_EIO;
    int rc = store_prepare(store, "UPDATE replaced_messages SET revision = ?4 WHERE conversation = ?1 AND source_id = ?2 AND text = ?3", &same);
    if (!rc)
        rc = store_prepare(store,
                           "INSERT INTO replaced_messages (conversation, source_id, revision, position, role, created_at, text, replaced_at) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                           &ins);
    sqlite3_bind_int64(old, 1, rowid);
    sqlite3_bind_int64(old, 2, (int64_t)from);
    int64_t now = store_now_ms();
    int step;
    while (!rc && (step = sqlite3_step(old)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(old, 2), *text = (const char *)sqlite3_column_text(old, 4);
        if (!id || !text) continue;
        bool carried = false;
        for (size_t i = from; i < c->n_messages && !carried; i++)
            carried = !strcmp(c->messages[i].id, id) && !strncmp(c->messages[i].text, text, strlen(text));
        if (carried) continue;
        sqlite3_reset(same);
        sqlite3_bind_int64(same, 1, rowid);
        sqlite3_bind_text(same, 2, id, -1, SQLITE_STATIC);
        sqlite3_bind_text(same, 3, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(same, 4, revision);
        if (sqlite3_step(same) != SQLITE_DONE) rc = store_fail(store, "keeping a replaced message");
        if (rc || sqlite3_changes(store->db) > 0) continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, rowid);
        sqlite3_bind_text(ins, 2, id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 3, revision);
        sqlite3_bind_int64(ins, 4, sqlite3_column_int64(old, 0));
        sqlite3_bind_value(ins, 5, sqlite3_column_value(old, 1));
        sqlite3_bind_value(ins, 6, sqlite3_column_value(old, 3));
        sqlite3_bind_text(ins, 7, text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 8, now);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = store_fail(store, "keeping a replaced message");
    }
    if (!rc && step != SQLITE_DONE) rc = store_fail(store, "reading the messages an export replaces");
    sqlite3_finalize(old);
    sqlite3_finalize(same);
    sqlite3_finalize(ins);
    return rc;
}

static int store_put_tx(dream_store *store, const struct dream_conversation *c, const char *hash, enum dream_store_outcome *outcome)
{
    int gone = store_is_forgotten(store, c->source, c->id);
    if (gone < 0) return gone;
    if (gone) {
        *outcome = DREAM_STORE_FORGOTTEN;
        return 0;
    }
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT id, content_hash, reprocess_from, coalesce(updated_at, 0), revision FROM conversations WHERE source = ? AND source_id = ?",
                      &st))
        return DREAM_EIO;
    sqlite3_bind_text(st, 1, c->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rc = store_fail(store, "looking up a conversation");
        sqlite3_finalize(st);
        return rc;
    }
    int64_t now = store_now_ms();
    if (rc == SQLITE_ROW) {
        int64_t rowid = sqlite3_column_int64(st, 0);
        const char *old_hash = (const char *)sqlite3_column_text(st, 1);
        bool same = old_hash && !strcmp(old_hash, hash);
        bool had_pending = sqlite3_column_type(st, 2) != SQLITE_NULL;
        int64_t pending = sqlite3_column_int64(st, 2);
        int64_t stored_updated = sqlite3_column_int64(st, 3), revision = sqlite3_column_int64(st, 4);
        sqlite3_finalize(st);
        /* An older export of a conversation never overwrites a newer one. */
        bool older = c->updated_ms && stored_updated && c->updated_ms < stored_updated;
        if (same || older) {
            *outcome = DREAM_STORE_UNCHANGED;
            return 0;
        }
        size_t from = 0;
        if (store_first_difference(store, rowid, c, &from)) return DREAM_EIO;
        int64_t redo = (int64_t)from;
        if (had_pending && pending < redo) redo = pending;
        if (store_keep_replaced(store, rowid, revision, c, from)) return DREAM_EIO;
        sqlite3_stmt *del;
        if (store_prepare(store, "DELETE FROM messages WHERE conversation = ? AND position >= ?", &del)) return DREAM_EIO;
        sqlite3_bind_int64(del, 1, rowid);
        sqlite3_bind_int64(del, 2, (int64_t)from);
        rc = sqlite3_step(del);
        sqlite3_finalize(del);
        if (rc != SQLITE_DONE) return store_fail(store, "replacing changed messages");
        if (store_insert_messages(store, rowid, c, from)) return DREAM_EIO;
        /* a replaced text this export carries again (a branch switched back to) is current, not replaced */
        if (store_prepare(store,
                          "DELETE FROM replaced_messages WHERE conversation = ?1 AND EXISTS (SELECT 1 FROM messages m WHERE "
                          "m.conversation = ?1 AND m.source_id = replaced_messages.source_id AND m.text = replaced_messages.text)",
                          &del))
            return DREAM_EIO;
        sqlite3_bind_int64(del, 1, rowid);
        rc = sqlite3_step(del);
        sqlite3_finalize(del);
        if (rc != SQLITE_DONE) return store_fail(store, "clearing replaced messages that are current again");
        if (store_prepare(store,
                          "UPDATE conversations SET title = ?, created_at = ?, updated_at = ?, content_hash = ?, "
                          "message_count = ?, changed_at = ?, revision = revision + 1, reprocess_from = ?, origin = ? "
                          "WHERE id = ?",
                          &st))
            return DREAM_EIO;
        sqlite3_bind_text(st, 1, c->title, -1, SQLITE_STATIC);
        store_bind_time(st, 2, c->created_ms);
        store_bind_time(st, 3, c->updated_ms);
        sqlite3_bind_text(st, 4, hash, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, (int64_t)c->n_messages);
        sqlite3_bind_int64(st, 6, now);
        sqlite3_bind_int64(st, 7, redo);
        sqlite3_bind_text(st, 8, c->origin, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 9, rowid);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return store_fail(store, "updating a conversation");
        *outcome = DREAM_STORE_CHANGED;
        return 0;
    }
    sqlite3_finalize(st);
    char cite[65];
    if (store_assign_cite(store, c->source, c->id, cite)) return dream_error_code();
    if (store_prepare(store,
                      "INSERT INTO conversations (source, source_id, cite, title, created_at, updated_at, content_hash, "
                      "message_count, ingested_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      &st))
        return DREAM_EIO;
    sqlite3_bind_text(st, 1, c->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cite, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, c->title, -1, SQLITE_STATIC);
    store_bind_time(st, 5, c->created_ms);
    store_bind_time(st, 6, c->updated_ms);
    sqlite3_bind_text(st, 7, hash, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, (int64_t)c->n_messages);
    sqlite3_bind_int64(st, 9, now);
    sqlite3_bind_text(st, 10, c->origin, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return store_fail(store, "inserting a conversation");
    if (store_insert_messages(store, sqlite3_last_insert_rowid(store->db), c, 0)) return DREAM_EIO;
    *outcome = DREAM_STORE_NEW;
    return 0;
}

int dream_store_put(dream_store *store, const struct dream_conversation *c, enum dream_store_outcome *outcome)
{
    if (!c->source || !c->id || !c->id[0] || !c->title || c->n_messages == 0)
        return dream_error_set(DREAM_EINVAL, "a conversation needs a source, an id, a title and at least one message");
    for (size_t i = 0; i < c->n_messages; i++) {
        const struct dream_message *m = &c->messages[i];
        if (!m->role || (strcmp(m->role, "user") && strcmp(m->role, "assistant")) || !m->id || !m->text)
            return dream_error_set(DREAM_EINVAL, "conversation %s/%s: message %zu needs role user|assistant, an id and text",
                                   c->source, c->id, i);
    }
    char hash[65];
    store_content_hash(c, hash);
    if (store_exec(store, "BEGIN IMMEDIATE", "starting a transaction")) return DREAM_EIO;
    int rc = store_put_tx(store, c, hash, outcome);
    if (rc) {
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return dream_error_wrap(rc, "storing conversation %s/%s", c->source, c->id);
    }
    if (store_exec(store, "COMMIT", "committing a conversation")) {
        sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
        return DREAM_EIO;
    }
    return 0;
}

static char *store_col_strdup(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return strdup(s ? s : "");
}

int store_messages_held_elsewhere(dream_store *store, const char *source, const char *id, const char *const *msg_ids,
                                  const char *const *texts, size_t n, size_t *held, char **other)
{
    *held = 0;
    *other = NULL;
    if (!n) return 0;
    sqlite3_stmt *st;
    if (store_prepare(store,
                      "SELECT m.conversation, c.source_id FROM messages m JOIN conversations c ON c.id = m.conversation "
                      "WHERE m.source_id = ?1 AND m.position = 0 AND m.text = ?2 AND c.source = ?3 AND c.source_id <> ?4 ORDER BY m.conversation LIMIT 1",
                      &st))
        return DREAM_EIO;
    sqlite3_bind_text(st, 1, msg_ids[0], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, texts[0], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    int64_t conv = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc == SQLITE_ROW && !(*other = store_col_strdup(st, 1))) rc = SQLITE_NOMEM;
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return rc == SQLITE_NOMEM ? dream_error_set(DREAM_ENOMEM, "out of memory") : store_fail(store, "looking up messages");
    if (store_prepare(store, "SELECT 1 FROM messages WHERE source_id = ?1 AND conversation = ?2 AND text = ?3", &st)) {
        free(*other);
        *other = NULL;
        return DREAM_EIO;
    }
    size_t k = 1;
    for (; k < n; k++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, msg_ids[k], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, conv);
        sqlite3_bind_text(st, 3, texts[k], -1, SQLITE_STATIC);
        if ((rc = sqlite3_step(st)) != SQLITE_ROW) break;
    }
    sqlite3_finalize(st);
    if (k < n && rc != SQLITE_DONE) {
        free(*other);
        *other = NULL;
        return store_fail(store, "looking up messages");
    }
    *held = k;
    return 0;
}

void dream_store_conversation_free(struct dream_store_conversation *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n_messages; i++) {
        free((char *)c->messages[i].role);
        free((char *)c->messages[i].id);
        free((char *)c->messages[i].text);
    }
    free(c->messages);
    free(c->source);
    free(c->id);
    free(c->cite);
    free(c->title);
    free(c);
}

static int store_load_messages(dream_store *store, struct dream_store_conversation *c)
{
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT role, source_id, coalesce(created_at, 0), text FROM messages WHERE conversation = ? ORDER BY position", &st))
        return DREAM_EIO;
    sqlite3_bind_int64(st, 1, c->rowid);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (c->n_messages == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct dream_message *m = realloc(c->messages, ncap * sizeof *m);
            if (!m) {
                sqlite3_finalize(st);
                return dream_error_set(DREAM_ENOMEM, "out of memory reading messages");
            }
            c->messages = m;
            cap = ncap;
        }
        struct dream_message *m = &c->messages[c->n_messages];
        m->role = store_col_strdup(st, 0);
        m->id = store_col_strdup(st, 1);
        m->time_ms = sqlite3_column_int64(st, 2);
        m->text = store_col_strdup(st, 3);
        c->n_messages++;
        if (!m->role || !m->id || !m->text) {
            sqlite3_finalize(st);
            return dream_error_set(DREAM_ENOMEM, "out of memory reading messages");
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : store_fail(store, "reading messages");
}

static int store_get_where(dream_store *store, const char *where, const char *a, const char *b, struct dream_store_conversation **out)
{
    *out = NULL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT id, source, source_id, cite, title, coalesce(created_at, 0), coalesce(updated_at, 0), ingested_at, "
             "revision, coalesce(reprocess_from, -1) FROM conversations WHERE %s",
             where);
    sqlite3_stmt *st;
    if (store_prepare(store, sql, &st)) return DREAM_EIO;
    sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    if (b) sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        sqlite3_finalize(st);
        return dream_error_set(DREAM_ENOTFOUND, "no conversation %s%s%s in the store", a, b ? "/" : "", b ? b : "");
    }
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return store_fail(store, "reading a conversation");
    }
    struct dream_store_conversation *c = calloc(1, sizeof *c);
    if (!c) {
        sqlite3_finalize(st);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    c->rowid = sqlite3_column_int64(st, 0);
    c->source = store_col_strdup(st, 1);
    c->id = store_col_strdup(st, 2);
    c->cite = store_col_strdup(st, 3);
    c->title = store_col_strdup(st, 4);
    c->created_ms = sqlite3_column_int64(st, 5);
    c->updated_ms = sqlite3_column_int64(st, 6);
    c->ingested_ms = sqlite3_column_int64(st, 7);
    c->revision = sqlite3_column_int64(st, 8);
    c->reprocess_from = sqlite3_column_int64(st, 9);
    sqlite3_finalize(st);
    if (!c->source || !c->id || !c->cite || !c->title) {
        dream_store_conversation_free(c);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    if ((rc = store_load_messages(store, c))) {
        dream_store_conversation_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int dream_store_get(dream_store *store, const char *source, const char *id, struct dream_store_conversation **out)
{
    return store_get_where(store, "source = ?1 AND source_id = ?2", source, id, out);
}

int dream_store_get_by_cite(dream_store *store, const char *cite, struct dream_store_conversation **out)
{
    return store_get_where(store, "cite = ?1", cite, NULL, out);
}

char *dream_store_message_cite_id(const char *source_id, int64_t position)
{
    bool ok = source_id && *source_id && strlen(source_id) <= 80;
    for (const char *c = source_id; ok && *c; c++) ok = (*c >= '0' && *c <= '9') || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z') || strchr("-_.:", *c);
    if (ok) return strdup(source_id);
    char buf[32];
    snprintf(buf, sizeof buf, "m%lld", (long long)position);
    return strdup(buf);
}

/* The text of the message of conversation conv that msg cites, from table (messages or
 * replaced_messages, the latest revision first): by source id, else, msg "m" and a position, the
 * message there whose source id a citation cannot carry. DREAM_ENOTFOUND when none. */
static int store_cited_in(dream_store *store, const char *table, int64_t conv, const char *msg, char **text)
{
    static const char *const order[] = {"position", "revision DESC, rowid DESC"};
    bool replaced = strcmp(table, "messages") != 0;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT source_id, position, text FROM %s WHERE conversation = ?1 AND (source_id = ?2 OR position = ?3) ORDER BY %s",
             table, order[replaced]);
    int64_t pos = -1;
    if (msg[0] == 'm' && msg[1] >= '0' && msg[1] <= '9' && strlen(msg) < 19 && strspn(msg + 1, "0123456789") == strlen(msg + 1))
        pos = strtoll(msg + 1, NULL, 10);
    sqlite3_stmt *st;
    if (store_prepare(store, sql, &st)) return DREAM_EIO;
    sqlite3_bind_int64(st, 1, conv);
    sqlite3_bind_text(st, 2, msg, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, pos);
    int rc = DREAM_ENOTFOUND, step;
    char *by_pos = NULL;
    while (rc == DREAM_ENOTFOUND && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0), *t = (const char *)sqlite3_column_text(st, 2);
        if (!t) continue;
        if (id && !strcmp(id, msg)) { /* by its own id: that wins over a position */
            free(by_pos);
            by_pos = NULL;
            rc = (*text = strdup(t)) ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        char *as = by_pos ? NULL : dream_store_message_cite_id(id, sqlite3_column_int64(st, 1));
        if (as && !strcmp(as, msg) && !(by_pos = strdup(t))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        free(as);
    }
    if (rc == DREAM_ENOTFOUND && step != SQLITE_DONE && step != SQLITE_ROW) rc = store_fail(store, "reading a cited message");
    sqlite3_finalize(st);
    if (rc == DREAM_ENOTFOUND && by_pos) {
        *text = by_pos;
        return DREAM_OK;
    }
    free(by_pos);
    return rc;
}

int dream_store_cited_message(dream_store *store, const char *cite, const char *msg, char **text, bool *replaced)
{
    *text = NULL;
    *replaced = false;
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT id FROM conversations WHERE cite = ?", &st)) return DREAM_EIO;
    sqlite3_bind_text(st, 1, cite, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    int64_t conv = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (step == SQLITE_DONE) return dream_error_set(DREAM_ENOTFOUND, "the store holds no conversation conv:%s", cite);
    if (step != SQLITE_ROW) return store_fail(store, "reading a cited conversation");
    int rc = store_cited_in(store, "messages", conv, msg, text);
    if (rc == DREAM_ENOTFOUND && !(rc = store_cited_in(store, "replaced_messages", conv, msg, text))) *replaced = true;
    if (rc == DREAM_ENOTFOUND) return dream_error_set(DREAM_ENOTFOUND, "the store holds conversation conv:%s but no message %s of it", cite, msg);
    return rc;
}

int dream_store_count(dream_store *store, struct dream_store_counts *out)
{
    sqlite3_stmt *st;
    if (store_prepare(store, "SELECT (SELECT count(*) FROM conversations), (SELECT count(*) FROM messages)", &st)) return DREAM_EIO;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->conversations = sqlite3_column_int64(st, 0);
        out->messages = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : store_fail(store, "counting rows");
}
