/*
 * progress.h — how a pipeline stage reports its progress to whoever runs it (the CLI's live
 * line on a terminal, a test that wants to stop a run at a chosen point).
 */
#ifndef DREAM_PROGRESS_H
#define DREAM_PROGRESS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Called by stage after each item (or batch of items) it has finished and committed: done of
 * total items of this run so far. */
typedef void (*dream_progress_fn)(void *ud, const char *stage, size_t done, size_t total);

#ifdef __cplusplus
}
#endif
#endif
