/*
 * store_internal.h — what the parts above the store (ingest, dreaming, read)
 * need from the store beyond the public API: the raw connection and the schema's migrations.
 */
#ifndef DREAM_STORE_INTERNAL_H
#define DREAM_STORE_INTERNAL_H

#include "dream/store.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/* How long a connection waits for another's write lock (sqlite3_busy_timeout). */
#define STORE_BUSY_MS 10000

/* The connection; owned by the store. */
sqlite3 *store_db(dream_store *store);

/* Sets the last error to "<what> in the store <path>: <SQLite's message>"; returns DREAM_EIO. */
int store_sql_error(dream_store *store, const char *what);

/* Wall-clock milliseconds since the epoch: the store's timestamps. */
int64_t store_now_ms(void);

/* Runs SQL that returns no rows; on failure sets the last error naming what and returns
 * DREAM_EIO. */
int store_exec(dream_store *store, const char *sql, const char *what);

/* Registers dream_snippet(search, open, close, ellipsis, tokens) on db (store_snippet.c): a
 * hit's snippet in time linear in its row, where FTS5's snippet() is quadratic in its matches.
 * 0, or -1 when this SQLite's FTS5 refuses it. */
int store_snippet_register(sqlite3 *db);

/* db's FTS5 API (SQLite hands it out through `SELECT fts5(?)`), or NULL. */
fts5_api *store_fts5(sqlite3 *db);

/* Registers the search index's tokenizer "dream" on db (store_tokenize.c); 0, or -1. */
int store_tokenizer_register(sqlite3 *db);

/* Schema migrations: store_migrations[i] takes the schema from version i to version i + 1.
 * Later stages add their tables and columns by appending here (never editing an entry that
 * has shipped). store_migration_count equals DREAM_STORE_SCHEMA_VERSION. */
extern const char *const store_migrations[];
extern const int store_migration_count;

/* The search index (dream/search.h) since migration 9: an FTS5 table that holds no copy of the
 * text (external content): what a snippet shows FTS5 reads through the view search_source,
 * from the rows that hold it (messages, pipeline_entities, search_sections), found by the
 * search row id through the expression indexes migration 9 makes (a row's date is read where
 * it is kept, by the query: src/read/read_search.c). The triggers
 * keep it, giving FTS5 the old text of a row they take out ('delete'), since the view no longer
 * has it then. dream_search_rebuild and migration 9 share the table and the fill: the rows are
 * read from the view in one pass ('rebuild'), with a 16 MB pending-terms buffer rather than
 * FTS5's 1 MB (each flush is a segment to merge later; set back after). */
/* The index's tokenizer and its arguments, separated by spaces: the table's, and the one
 * dream_search_compile asks whether a query's term holds a word at all. Since migration 11 our
 * own "dream" (store_tokenize.c: unicode61 with each CJK character a token), registered on
 * every connection the store opens. */
#define STORE_SEARCH_TOKENIZE "dream remove_diacritics 2"
#define STORE_SEARCH_TABLE_SQL                                                                                          \
    "CREATE VIRTUAL TABLE search USING fts5(title, section, text, content = search_source, content_rowid = id,"        \
    " tokenize = '" STORE_SEARCH_TOKENIZE "');"
/* Migrations 7 and 9 (shipped, so never edited): SQLite's unicode61. */
#define STORE_SEARCH_TOKENIZE_V7 "unicode61 remove_diacritics 2"
#define STORE_SEARCH_TABLE_V9_SQL                                                                                       \
    "CREATE VIRTUAL TABLE search USING fts5(title, section, text, content = search_source, content_rowid = id,"        \
    " tokenize = '" STORE_SEARCH_TOKENIZE_V7 "');"
#define STORE_SEARCH_FILL_SQL                                                                                           \
    "INSERT INTO search (search, rank) VALUES ('hashsize', 16777216);"                                                 \
    "INSERT INTO search (search) VALUES ('rebuild');"                                                                   \
    "INSERT INTO search (search, rank) VALUES ('hashsize', 1048576);"
/* The table and fill of migration 7 (shipped, so never edited): a copy of the text, SQLite's
 * unicode61 tokenizer. */
#define STORE_SEARCH_TABLE_V7_SQL                                                                                       \
    "CREATE VIRTUAL TABLE search USING fts5(title, section, text, date UNINDEXED,"                                     \
    " tokenize = '" STORE_SEARCH_TOKENIZE_V7 "');"
#define STORE_SEARCH_FILL_V7_SQL                                                                                        \
    "INSERT INTO search (rowid, title, section, text, date)"                                                            \
    " SELECT (1 << 50) + m.conversation * 16777216 + m.position, '', '', m.text, coalesce(m.created_at, c.created_at)" \
    " FROM messages m JOIN conversations c ON c.id = m.conversation WHERE m.position < 16777216;"                      \
    "INSERT INTO search (rowid, title, section, text, date)"                                                            \
    " SELECT (1 << 48) + id, name, '', '', NULL FROM pipeline_entities WHERE route IS NOT 'article';"

/* Records, in the caller's transaction, that the conversation (source, id) was forgotten, so
 * that dream_store_put does not write it again. What is kept is a key that names it without
 * holding its id: SHA-256 of "forgotten", source and id (so not the citation hash either). */
int store_forgotten_add(dream_store *store, const char *source, const char *id);

/* Remembers each message of the conversation (rowid) that has an id in its export as forgotten,
 * by a one-way key of its source, id and text: a Claude Code session that resumed the forgotten
 * one repeats those messages at its start, and ingest leaves them out (store_messages_forgotten).
 * Call before the messages are deleted, in the same transaction. */
int store_forgotten_add_messages(dream_store *store, int64_t conversation);

/* How many of the first n messages (ids and texts, of source), from the first on, were
 * forgotten (*lead). */
int store_messages_forgotten(dream_store *store, const char *source, const char *const *msg_ids, const char *const *texts, size_t n,
                             size_t *lead);

/* Whether the store holds the conversation (source, id), or forgot it: 1, 0, or a negative
 * status. */
int store_id_known(dream_store *store, const char *source, const char *id);

/* How many of the first n messages (ids and texts) are held by one other conversation of source
 * than id, the one whose own first message is the first of them (a resumed session's log repeats
 * the session it resumes from its start): *held, 0 when none; *other that conversation's id in its source (NULL when
 * none; the caller frees it). 0, or a negative status. */
int store_messages_held_elsewhere(dream_store *store, const char *source, const char *id, const char *const *msg_ids,
                                  const char *const *texts, size_t n, size_t *held, char **other);

/* Per-run duplicate detection (in a TEMP table, so memory stays bounded). store_seen_reset
 * forgets everything; store_seen_mark returns 1 when (source, id) was not yet marked, 0 when
 * it was, or a negative status. */
int store_seen_reset(dream_store *store);
int store_seen_mark(dream_store *store, const char *source, const char *id);

#endif
