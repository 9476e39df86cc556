/*
 * segment.h — the segment stage: cutting conversations into single-topic chunks (spec §6.1).
 *
 * The stage pulls its work from the store: every conversation whose current revision has not
 * been segmented (new, or grown since: see dream_store_put), oldest first. It asks the seam's
 * `chunk` stage, several conversations per dream_call_local_batch, for a JSON list of chunks
 * anchored on message ids; parses the answer tolerantly; repairs anchors to real messages; and
 * stores each chunk as a pointer (conversation, first and last message position, label), never
 * as a copy of text. Each conversation is written in one transaction, so the stage can be killed
 * at any moment and resumed without loss or duplicates.
 *
 * Per conversation the store keeps the revision segmented, attempts, and the last error: an
 * answer that cannot be used is a failed attempt, and after max_attempts failures at one
 * revision the conversation is marked failed and left alone until its content changes.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_SEGMENT_H
#define DREAM_SEGMENT_H

#include "dream/progress.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dream_segment_params {
    const char *wiki_dir;   /* the vault whose Meta pages (Chunking, Topics_to_Ignore) are inlined;
                               NULL: the seeded defaults */
    int64_t conversation;   /* only this conversation (store row id); 0 = all */
    size_t limit;           /* at most this many conversations; 0 = no limit */
    size_t batch;           /* conversations per dream_call_local_batch (default 8) */
    int max_attempts;       /* failed attempts before a conversation is marked failed (default 3) */
    int max_tokens;         /* answer budget per call (default 4096) */
    size_t window_bytes;    /* a conversation whose transcript is larger is segmented in windows
                               of about this many bytes, merged at the seams (default 16000);
                               0 = never */
    size_t window_overlap;  /* messages each window repeats from the one before (default 2) */
    size_t snap_reach;      /* a cut between two chunks may move this many messages each way, to
                               the same role's message where the words before and after it have
                               least in common (default 6; 0 = cuts stay where the model put them;
                               DREAM_SNAP=0 sets 0) */
    double snap_margin;     /* ... only when that place's cohesion is below the model's cut's by
                               this much (a cosine; default 0.1) */
    size_t max_prompt_bytes; /* a prompt larger than this fails at once (no retries); 0 = no limit */
    bool dry_run;           /* count the work; call nothing, write nothing */
    dream_progress_fn on_progress; /* may be NULL: told after each batch is stored */
    void *progress_ud;
};

void dream_segment_default_params(struct dream_segment_params *params);

struct dream_segment_result {
    size_t eligible;  /* conversations that needed segmenting (after limit) */
    size_t segmented; /* answers accepted and stored */
    size_t skipped;   /* nothing to segment (no assistant message or no text): marked done */
    size_t failed;    /* failed attempts in this run */
    size_t gave_up;   /* conversations marked failed in this run */
    size_t chunks;    /* chunks stored in this run */
    size_t moved;     /* cuts moved to where the words change (snap_reach) */
    size_t cued;      /* cuts the person's own words placed ("Changing the subject: ..."): moved there, or made there */
};

/* Runs the stage once over the eligible conversations. A bad answer, or a call that failed for
 * its own prompt (DREAM_ETOOBIG), is a failed attempt recorded against its conversation and
 * counted. Returns an error when the store fails, or when a whole batch got no answer for
 * another reason (no model, a broken backend): then the run stops and no attempt is charged. */
int dream_segment_run(dream_store *store, const struct dream_segment_params *params, struct dream_segment_result *result);

/* A stored chunk: messages first..last (positions, inclusive) of a conversation. */
struct dream_chunk {
    int64_t id;
    int64_t conversation;
    int64_t first, last;
    int64_t revision; /* the conversation revision it was cut from */
    char *label;
};

/* The chunks of conversation (store row id) in order of first position. The caller frees *out
 * with dream_chunks_free. */
int dream_segment_chunks(dream_store *store, int64_t conversation, struct dream_chunk **out, size_t *n);
void dream_chunks_free(struct dream_chunk *chunks, size_t n);

#ifdef __cplusplus
}
#endif
#endif
