/* spread.c — a chunk that names a known subject in the person's own words is about it too.
 *
 * The model names a chunk's subjects, and a small one often names only one of several: "Leonard"
 * is extracted from the one chunk where he is the whole topic and missed in the three where the
 * person mentions him beside something else, so he never recurs and never gets an article. After
 * resolve, every name already extracted and resolved (and every subject with an article) is
 * looked for in the person's messages of the other chunks (the store's full-text index first, then an exact match): where it occurs as
 * whole words, the chunk gets a mention of that entity too, and route counts it like any other.
 *
 * Only a name that reads as a name is spread: one of two or more words in lower case ("fan
 * dance"), one the person writes capitalised where a sentence does not start ("I met Leonard",
 * "a trip to Great Falls"), not at the start of a sentence only ("Next step: ..."), or one the
 * person introduces as a name ("a command-line tool called crumb", "its name is parrot"). A common
 * word a small model picked as a subject ("old", "watch", "context") stays where the model put it.
 * The assistant's messages are not searched: what the person said is what the memory is about (the
 * extract stage's rule for copied names). */
#include "dream/entity.h"

#include "../names/entity_name.h"
#include "dream/error.h"
#include "store_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPREAD_MIN_BYTES 3            /* shorter names are not looked for */
#define SPREAD_MSG_BASE (1LL << 50)   /* a message's rowid in the search index (store_schema.c) */
#define SPREAD_MSG_POSITIONS 16777216 /* positions per conversation in that rowid */

/* Whether text introduces name as a name: "called NAME", "named NAME", "name is NAME", "call it NAME". */
static bool sp_introduced(const char *text, const char *name)
{
    static const char *const cues[] = {"called ", "named ", "name is ", "call it ", "calling it "};
    char buf[256];
    for (size_t k = 0; k < sizeof cues / sizeof cues[0]; k++) {
        int n = snprintf(buf, sizeof buf, "%s%s", cues[k], name);
        bool mid;
        if (n > 0 && (size_t)n < sizeof buf && entity_name_in_text(text, buf, &mid)) return true;
    }
    return false;
}

/* Spreads one name (surface, of entity) over the chunks whose person messages hold it. */
static int sp_one(dream_store *store, sqlite3_stmt *match, sqlite3_stmt *msg, sqlite3_stmt *chunk, sqlite3_stmt *add, const char *surface,
                  int64_t entity, size_t *added)
{
    char *normal = NULL;
    int rc = entity_name_normal(surface, &normal);
    if (rc) { /* not a name the store could hold (invalid UTF-8): nothing to spread */
        dream_error_clear();
        return DREAM_OK;
    }
    /* two or more words in lower case ("fan dance") read as a name; a capitalised one must be
     * written so mid-sentence too ("Next step" at sentence starts is no name) */
    bool lower = true;
    for (const char *c = surface; *c && lower; c++) lower = !isupper((unsigned char)*c);
    bool multiword = strchr(surface, ' ') != NULL && lower, mid_any = false;
    /* the phrase query: the name in double quotes, its own quotes doubled */
    size_t n = strlen(surface);
    char *q = malloc(2 * n + 16);
    if (!q) {
        free(normal);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    char *w = q;
    w += sprintf(w, "text : \"");
    for (const char *s = surface; *s; s++) {
        if (*s == '"') *w++ = '"';
        *w++ = *s;
    }
    strcpy(w, "\"");
    int64_t *chunks = NULL;
    size_t nc = 0, cap = 0;
    sqlite3_reset(match);
    sqlite3_bind_text(match, 1, q, -1, SQLITE_STATIC);
    int step;
    while (!rc && (step = sqlite3_step(match)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(match, 0) - SPREAD_MSG_BASE;
        if (id < 0) continue;
        sqlite3_reset(msg);
        sqlite3_bind_int64(msg, 1, id / SPREAD_MSG_POSITIONS);
        sqlite3_bind_int64(msg, 2, id % SPREAD_MSG_POSITIONS);
        if (sqlite3_step(msg) != SQLITE_ROW) continue; /* an assistant's message, or gone */
        bool mid = false;
        const char *text = (const char *)sqlite3_column_text(msg, 0);
        if (!entity_name_in_text(text, surface, &mid)) continue;
        mid_any |= mid || (!mid_any && !multiword && sp_introduced(text, surface)); /* the cues only while still needed */
        sqlite3_reset(chunk);
        sqlite3_bind_int64(chunk, 1, id / SPREAD_MSG_POSITIONS);
        sqlite3_bind_int64(chunk, 2, id % SPREAD_MSG_POSITIONS);
        if (sqlite3_step(chunk) != SQLITE_ROW) continue; /* not cut into chunks yet */
        if (nc == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *g = realloc(chunks, cap * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            chunks = g;
        }
        chunks[nc++] = sqlite3_column_int64(chunk, 0);
    }
    if (!rc && step != SQLITE_DONE && step != SQLITE_ROW) rc = store_sql_error(store, "looking for a known name in the messages");
    sqlite3_reset(match);
    for (size_t i = 0; !rc && (multiword || mid_any) && i < nc; i++) {
        sqlite3_reset(add);
        sqlite3_bind_int64(add, 1, chunks[i]);
        sqlite3_bind_text(add, 2, normal, -1, SQLITE_STATIC);
        sqlite3_bind_text(add, 3, surface, -1, SQLITE_STATIC);
        sqlite3_bind_int64(add, 4, entity);
        if (sqlite3_step(add) != SQLITE_DONE) rc = store_sql_error(store, "adding a mention of a known name");
        else *added += (size_t)sqlite3_changes(store_db(store));
    }
    sqlite3_reset(add);
    free(chunks);
    free(q);
    free(normal);
    return rc;
}

int resolve_spread(dream_store *store, size_t *added)
{
    *added = 0;
    sqlite3 *db = store_db(store);
    sqlite3_stmt *names = NULL, *match = NULL, *msg = NULL, *chunk = NULL, *add = NULL;
    int rc = DREAM_OK;
    /* the names the model gave, and every subject with an article by its own name: a re-export
     * that replaces a conversation's chunks takes their mentions along, and a subject named only
     * there would be forgotten, its article never patched again */
    if (sqlite3_prepare_v2(db,
                           "SELECT surface, entity FROM chunk_mentions WHERE entity IS NOT NULL"
                           " UNION SELECT name, id FROM pipeline_entities WHERE route = 'article' ORDER BY 1, 2",
                           -1, &names, NULL) ||
        sqlite3_prepare_v2(db, "SELECT rowid FROM search WHERE search MATCH ?1 AND rowid >= (1 << 50) ORDER BY rowid", -1, &match, NULL) ||
        sqlite3_prepare_v2(db, "SELECT text FROM messages WHERE conversation = ?1 AND position = ?2 AND role = 'user'", -1, &msg, NULL) ||
        sqlite3_prepare_v2(db, "SELECT id FROM chunks WHERE conversation = ?1 AND ?2 BETWEEN first_position AND last_position", -1, &chunk,
                           NULL) ||
        sqlite3_prepare_v2(db,
                           "INSERT OR IGNORE INTO chunk_mentions (chunk, normal, surface, entity) SELECT ?1, ?2, ?3, ?4 "
                           "WHERE NOT EXISTS (SELECT 1 FROM chunk_mentions WHERE chunk = ?1 AND entity = ?4)",
                           -1, &add, NULL))
        rc = store_sql_error(store, "preparing the search for known names");
    bool began = !rc && !(rc = store_exec(store, "BEGIN IMMEDIATE", "starting the mention spread"));
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(names)) == SQLITE_ROW) {
        const char *surface = (const char *)sqlite3_column_text(names, 0);
        if (!surface || strlen(surface) < SPREAD_MIN_BYTES) continue;
        rc = sp_one(store, match, msg, chunk, add, surface, sqlite3_column_int64(names, 1), added);
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing the known names");
    sqlite3_finalize(names);
    sqlite3_finalize(match);
    sqlite3_finalize(msg);
    sqlite3_finalize(chunk);
    sqlite3_finalize(add);
    if (!rc) rc = store_exec(store, "COMMIT", "committing the mention spread");
    else if (began) store_exec(store, "ROLLBACK", "rolling back the mention spread");
    return rc;
}
