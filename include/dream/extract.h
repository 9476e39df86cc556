/*
 * extract.h — the extract stage: the subjects each chunk is about (spec §6.2, with §12 item 17
 * fixed).
 *
 * The stage pulls its work from the store: every chunk not yet extracted at its current
 * revision, oldest conversation first, then in message order. It asks the seam's `entity` stage,
 * several chunks per dream_call_local_batch, for subject names one per line; cleans each line
 * (list markers, emphasis, quotes, trailing punctuation, headers, prose, "NONE") and stores the
 * names with their canonical normal form (NFC + casefold + squeezed whitespace) in
 * chunk_mentions, one row per distinct normal form per chunk. A chunk whose answer names nothing
 * usable is marked done with no mentions, so it is never asked again until it changes. An empty
 * answer or a failed call is a failed attempt; after max_attempts the chunk is marked failed.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_EXTRACT_H
#define DREAM_EXTRACT_H

#include "dream/progress.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dream_extract_params {
    const char *wiki_dir;  /* the vault whose Meta/Entities page is inlined; NULL: the seeded default */
    int64_t conversation;  /* only the chunks of this conversation (store row id); 0 = all */
    size_t limit;          /* at most this many chunks; 0 = no limit */
    size_t batch;          /* chunks per dream_call_local_batch (default 8) */
    int max_attempts;      /* failed attempts before a chunk is marked failed (default 3) */
    int max_tokens;        /* answer budget per call (default 256) */
    size_t text_cap;       /* a message longer than this is shown cut (default 4000 bytes; 0 = never) */
    size_t chunk_cap;      /* a chunk's transcript is shown up to about this many bytes, then cut
                              with a note, so its prompt fits the seam's context (default 16000;
                              0 = never) */
    bool dry_run;          /* count the work; call nothing, write nothing */
    dream_progress_fn on_progress; /* may be NULL: told after each batch is stored */
    void *progress_ud;
};

void dream_extract_default_params(struct dream_extract_params *params);

struct dream_extract_result {
    size_t eligible;  /* chunks that needed extracting (after limit) */
    size_t extracted; /* answers with at least one name, stored */
    size_t empty;     /* answers with nothing usable: marked done with no names */
    size_t failed;    /* failed attempts in this run */
    size_t gave_up;   /* chunks marked failed in this run */
    size_t mentions;  /* names stored in this run */
    size_t unnamed;   /* names copied from the chunk that the person's own messages do not hold,
                         left out (only when the model copies names from the text) */
};

/* Runs the stage once over the eligible chunks. Returns an error when the store fails, or when a
 * whole batch got no answer for a reason not of its prompts (no model, a broken backend): then
 * the run stops and no attempt is charged. */
int dream_extract_run(dream_store *store, const struct dream_extract_params *params, struct dream_extract_result *result);

/* The canonical normal form of a subject name (NFC, casefold, squeezed whitespace, one leading
 * article or possessive and a trailing "'s" dropped). *out is malloc'd; the caller frees it. */
int dream_entity_normal_form(const char *name, char **out);

#ifdef __cplusplus
}
#endif
#endif
