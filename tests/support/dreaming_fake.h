/* dreaming_fake.h — the scripted fake backend of the Dreaming fixture corpus
 * (tests/data/dreaming): answers the chunk and entity stages deterministically from the prompt,
 * by a fixed lexicon of trigger phrases (see dreaming_fake.c and tests/data/dreaming/EXPECTED.txt). */
#ifndef DREAM_TESTS_DREAMING_FAKE_H
#define DREAM_TESTS_DREAMING_FAKE_H

#include "dream/model.h"

#include <stddef.h>

/* The chunk stage's answer: a chunk starts at each user message whose subject (the subject of
 * the earliest trigger phrase in it) differs from the open chunk's; a user message with no
 * trigger, and every assistant message, continues the open chunk. Labels name the subject. */
char *dreaming_fake_chunk(const char *prompt);

/* The entity stage's answer: the lexicon's answer line for every trigger phrase in the chunk
 * text (in lexicon order, each once), or "NONE". */
char *dreaming_fake_entities(const char *prompt);

/* A dream_backend call answering "chunk" and "entity" as above, the writing stages and
 * "answer" (any other stage: an error).
 * Counts calls in dreaming_fake_calls; calls dreaming_fake_on_call (when set) first, with the
 * stage (the kill-and-resume test stops the process there); sleeps dreaming_fake_delay_us. */
int dreaming_fake_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                       char **out);
extern long dreaming_fake_calls;
extern void (*dreaming_fake_on_call)(const char *stage);
extern unsigned dreaming_fake_delay_us;
/* Lines the synthesis stage's infobox answer (CREATE) ends with, when set (NULL: none). */
extern const char *dreaming_fake_infobox_extra;
/* Text every prose answer of the writing stages ends with, when set (NULL: none): CREATE's
 * section drafts and lead, FOLD's patches (of a section, a new section or the lead), RECONCILE's
 * section rewrites and WIKIFY's tightened sections. */
extern const char *dreaming_fake_prose_extra;
/* The answer stage (dream ask) answers with the note sentence sharing the most words (two at
 * least) with the question, else NOTHING ON FILE; when set, this format (one %s) wraps it. */
extern const char *dreaming_fake_answer_wrap;

#endif
