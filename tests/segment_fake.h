/* segment_fake.h — the scripted chunk-stage answer the segment tests' fake backends give. */
#ifndef DREAM_TESTS_SEGMENT_FAKE_H
#define DREAM_TESTS_SEGMENT_FAKE_H

/* The good answer to a chunk prompt: one chunk per user turn, from it to the message before the
 * next user turn, labelled "topic at <position>", wrapped in a fence with prose around it (as
 * small models answer). Deterministic: reads only the prompt's transcript lines
 * "[role] (id: ID, position N)". The caller frees the result. */
char *fake_chunk_answer(const char *prompt);

#endif
