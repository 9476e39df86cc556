/* stage_state.c — per-stage, per-item work state (see stage_state.h). */
#include "stage_state.h"

#include "dream/error.h"
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int stage_state_done(dream_store *store, const char *stage, int64_t item, int64_t revision, int64_t now_ms)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "INSERT INTO stage_state (stage, item, revision, status, attempts, last_error, updated_at) "
                           "VALUES (?, ?, ?, 'done', 0, NULL, ?) ON CONFLICT (stage, item) DO UPDATE SET "
                           "revision = excluded.revision, status = 'done', attempts = 0, last_error = NULL, "
                           "updated_at = excluded.updated_at",
                           -1, &st, NULL) != SQLITE_OK)
        return store_sql_error(store, "recording a finished item");
    sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, item);
    sqlite3_bind_int64(st, 3, revision);
    sqlite3_bind_int64(st, 4, now_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(store, "recording a finished item");
    sqlite3_finalize(st);
    return rc;
}

int stage_state_fail(dream_store *store, const char *stage, int64_t item, int64_t revision, const char *error, int max_attempts,
                     bool final, int64_t now_ms, bool *gave_up)
{
    sqlite3_stmt *st;
    int attempts = 0;
    if (sqlite3_prepare_v2(store_db(store), "SELECT attempts FROM stage_state WHERE stage = ? AND item = ? AND revision = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return store_sql_error(store, "reading an item's attempts");
    sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, item);
    sqlite3_bind_int64(st, 3, revision);
    if (sqlite3_step(st) == SQLITE_ROW) attempts = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    attempts++;
    *gave_up = final || attempts >= max_attempts;
    if (sqlite3_prepare_v2(store_db(store),
                           "INSERT INTO stage_state (stage, item, revision, status, attempts, last_error, updated_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (stage, item) DO UPDATE SET revision = excluded.revision, "
                           "status = excluded.status, attempts = excluded.attempts, last_error = excluded.last_error, "
                           "updated_at = excluded.updated_at",
                           -1, &st, NULL) != SQLITE_OK)
        return store_sql_error(store, "recording a failed attempt");
    sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, item);
    sqlite3_bind_int64(st, 3, revision);
    sqlite3_bind_text(st, 4, *gave_up ? "failed" : "pending", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, attempts);
    sqlite3_bind_text(st, 6, error ? error : "unknown error", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 7, now_ms);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(store, "recording a failed attempt");
    sqlite3_finalize(st);
    return rc;
}

int stage_state_fail_counted(dream_store *store, const char *stage, int64_t item, int64_t revision, const char *error, int max_attempts,
                             bool final, size_t *failed, size_t *gave_up)
{
    bool gave = false;
    int rc = stage_state_fail(store, stage, item, revision, error, max_attempts, final, store_now_ms(), &gave);
    if (rc) return rc;
    ++*failed;
    if (gave) ++*gave_up;
    return DREAM_OK;
}

int dream_stage_state_get(dream_store *store, const char *stage, int64_t item, struct dream_stage_state *state)
{
    memset(state, 0, sizeof *state);
    strcpy(state->status, "none");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT status, revision, attempts, last_error FROM stage_state WHERE stage = ? AND item = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return store_sql_error(store, "reading an item's state");
    sqlite3_bind_text(st, 1, stage, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, item);
    int rc = DREAM_OK;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        snprintf(state->status, sizeof state->status, "%s", (const char *)sqlite3_column_text(st, 0));
        state->revision = sqlite3_column_int64(st, 1);
        state->attempts = sqlite3_column_int(st, 2);
        const unsigned char *e = sqlite3_column_text(st, 3);
        if (e && !(state->last_error = strdup((const char *)e))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    } else if (step != SQLITE_DONE) {
        rc = store_sql_error(store, "reading an item's state");
    }
    sqlite3_finalize(st);
    return rc;
}

int dream_stage_state_retry(dream_store *store, size_t *n)
{
    *n = 0;
    if (sqlite3_exec(store_db(store), "UPDATE stage_state SET status = 'pending', attempts = 0 WHERE status = 'failed'", NULL, NULL, NULL) !=
        SQLITE_OK)
        return store_sql_error(store, "giving the items given up a fresh set of attempts");
    *n = (size_t)sqlite3_changes(store_db(store));
    return DREAM_OK;
}
