/* segment_fake.h — the scripted chunk-stage answer the segment tests' fake backends give. */
#ifndef DREAM_TESTS_SEGMENT_FAKE_H
#define DREAM_TESTS_SEGMENT_FAKE_H

#include <stdbool.h>

/* The good answer to a chunk prompt: one chunk per user turn, from it to the message before the
 * next user turn, labelled "topic at <position>", wrapped in a fence with prose around it (as
 * small models answer). Deterministic: reads only the prompt's transcript lines
 * "[role] (id: ID, position N)". With positions, anchors are the shown positions (numbers)
 * instead of message ids. The caller frees the result. */
char *fake_chunk_answer(const char *prompt, bool positions);

#endif
