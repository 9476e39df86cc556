/* fuzz_search_query.c — the search query compiler (dream_search_compile): any bytes give either
 * DREAM_EINVAL with a "bad search query" message and no expression, or an expression that
 * FTS5 accepts: it runs against a real FTS5 table of the store's schema without a syntax error.
 * Never a crash or a leak. */
#include "dream/error.h"
#include "dream/search.h"
#include "dream/store.h"
#include "store_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *db;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db) {
        static dream_store *store; /* lives as long as the fuzzer */
        if (dream_store_open(":memory:", &store) != 0) abort();
        db = store_db(store);
        if (sqlite3_exec(db,
                         "INSERT INTO search_sections (id, stem, anchor, cites, title, heading, text)"
                         " VALUES (1, 'Cafe', 'bow-hold', '', 'Café', 'bow hold', 'the starter is fed with rye flour');"
                         "INSERT INTO search (rowid, title, section, text) SELECT id, title, heading, text FROM search_sections;",
                         NULL, NULL, NULL) != SQLITE_OK)
            abort();
    }
    char *q = malloc(size + 1);
    if (!q) return 0;
    memcpy(q, data, size);
    q[size] = '\0';
    char *match = NULL;
    int rc = dream_search_compile(q, &match);
    if (rc == DREAM_EINVAL) {
        if (match || strncmp(dream_error_last(), "bad search query", 16) != 0) abort();
    } else if (rc == DREAM_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM search WHERE search MATCH ?", -1, &st, NULL) != SQLITE_OK) abort();
        sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) abort(); /* an FTS5 syntax error would be SQLITE_ERROR here */
        sqlite3_finalize(st);
    } else if (rc != DREAM_ENOMEM) {
        abort();
    }
    free(match);
    free(q);
    return 0;
}
