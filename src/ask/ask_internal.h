/* ask_internal.h — what ask.c shares with its fuzzer (fuzz/ask/fuzz_ask_answer.c): the reads'
 * marker renumbering and the cleaning of the model's answer. Not part of the public API. */
#ifndef DREAM_ASK_INTERNAL_H
#define DREAM_ASK_INTERNAL_H

#include "dream/article.h"
#include "dream/ask.h"

#include <stdbool.h>
#include <stddef.h>

#define ASK_MAX_SOURCES 40

/* The footnotes the context gives the model, numbered from 1. */
struct ask_sources {
    char *cite[ASK_MAX_SOURCES]; /* "conv:HASH#MSG" */
    char *line[ASK_MAX_SOURCES]; /* "[^n]: `conv:HASH#MSG` (date, title)" */
    char *date[ASK_MAX_SOURCES], *title[ASK_MAX_SOURCES];
    size_t n;
};

void ask_sources_free(struct ask_sources *s);

/* text with each marker [^label] of a renumbered to its source number in s (a marker without a
 * citation dropped; a NULL: markers kept as they are) and each [[link]] as the text it shows,
 * clipped to max bytes (max at least 4) at a line or sentence end when one is near; malloc'd,
 * NULL when out of memory. */
char *ask_renumber(const char *text, const dream_article *a, struct ask_sources *s, size_t max);

/* The answer made safe: a leading "According to your notes," dropped, markers of footnotes not
 * given (k > n_sources or listed[k] false; listed has n_sources + 1 entries) removed; the
 * numbers it cites, in order, each once, into used (at most ASK_MAX_SOURCES). Malloc'd. */
char *ask_clean_answer(const char *raw, const bool *listed, size_t n_sources, size_t *used, size_t *n_used);

#endif
