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
 * total items of this run so far; and by the stages that call a model once before their first
 * item with done 0, so a watcher knows the whole of the work while the first batch runs. */
typedef void (*dream_progress_fn)(void *ud, const char *stage, size_t done, size_t total);

/* The report before the first item (none when there is no work). */
static inline void dream_progress_begin(dream_progress_fn fn, void *ud, const char *stage, size_t total)
{
    if (fn && total) fn(ud, stage, 0, total);
}

#ifdef __cplusplus
}
#endif
#endif
