/* gbnf_match.h — whether a GBNF grammar accepts a whole text, asked of llama.cpp's own grammar
 * sampler (not of the engine under test): the text's tokens go through it one at a time, each
 * one asked about alone and then accepted, and end-of-generation is asked about at the end. */
#ifndef DREAM_TESTS_GBNF_MATCH_H
#define DREAM_TESTS_GBNF_MATCH_H

#include <stdbool.h>
#include <stddef.h>

/* True when gbnf (start symbol root) allows text, complete; false with why (cap bytes) saying
 * where it stopped. model: a GGUF whose vocabulary spells the text (read once per path). */
bool gbnf_match(const char *model, const char *gbnf, const char *text, char *why, size_t cap);

#endif
