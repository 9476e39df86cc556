/* stage_state.h — per-stage, per-item work state in the store (table stage_state): the revision
 * an item was done at, failed attempts and the last error, so that no item is retried forever. */
#ifndef DREAM_STORE_STAGE_STATE_H
#define DREAM_STORE_STAGE_STATE_H

#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Records item as done at revision (attempts reset). Call inside the transaction that writes the
 * item's results. */
int stage_state_done(dream_store *store, const char *stage, int64_t item, int64_t revision, int64_t now_ms);

/* Records a failed attempt at revision with error: attempts grow (restart at 1 for a new
 * revision); at max_attempts, or at once when final, the item is marked failed. *gave_up tells
 * which. */
int stage_state_fail(dream_store *store, const char *stage, int64_t item, int64_t revision, const char *error, int max_attempts,
                     bool final, int64_t now_ms, bool *gave_up);

/* stage_state_fail now, counted the way every stage reports it: *failed grows by one, and
 * *gave_up too when the item is marked failed. On an error nothing is counted. */
int stage_state_fail_counted(dream_store *store, const char *stage, int64_t item, int64_t revision, const char *error, int max_attempts,
                             bool final, size_t *failed, size_t *gave_up);

#endif
