/*
 * ask.h — `dream ask`: a question answered from the memory in one model call (issue 15).
 *
 * The part src/ask/ (docs/ARCHITECTURE.md): the read flow the memory was designed for, above
 * the read tools and the seam. It finds candidates (the question's names resolved, then the
 * full-text search), reads small — an article's lead, its infobox and one or two sections the
 * search pointed at; a message when no article holds the words — then makes one call of the
 * seam stage "answer" with only what it read, numbered as footnotes. The answer continues the
 * person's memory in its own voice (no "according to your notes"), cites the footnotes it used,
 * or says that nothing is on file. It may include read, seam, article, store and util; the CLI
 * (`dream ask`) and the server (POST /v1/memory/ask) use it.
 *
 * The silence rule: nothing read, the model's NOTHING ON FILE, or an answer that cites none of
 * the footnotes it was given all give the answer DREAM_ASK_NOTHING and no citations; markers
 * of footnotes it was not given are dropped from the answer.
 *
 * Budgets: no single read over max_read bytes (2048), the whole context (the reads, their
 * footnotes and the instructions) under max_context bytes (8192).
 */
#ifndef DREAM_ASK_H
#define DREAM_ASK_H

#include "dream/read.h"

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The answer when nothing on file answers the question. */
#define DREAM_ASK_NOTHING "Nothing on file about that."

/* The longest question dream_ask takes, in bytes (the CLI joins its words up to this). */
#define DREAM_ASK_QUESTION_MAX 2000

struct dream_ask_params {
    size_t max_read;    /* bytes per read; 0 means 2048, under 256 means 256 */
    size_t max_context; /* bytes of the whole prompt; 0 means 8192 */
    size_t max_reads;   /* 0 means 6 */
};

void dream_ask_default_params(struct dream_ask_params *p);

/* Answers question from what r holds. *out: {"question","answer","answered": bool,
 * "citations": [{"n","cite": "conv:HASH#MSG","date","title"}] (those the answer used, in the
 * order it used them), "reads": [{"kind": "lead"|"infobox"|"section"|"message","stem"?,
 * "anchor"?,"cite"?,"bytes"}],"context_bytes","model_calls": 0|1}. A question that is empty
 * or not valid UTF-8 is DREAM_EINVAL; a failed model call is its error (with *out NULL). */
int dream_ask(dream_reader *r, const char *question, const struct dream_ask_params *p, json_t **out);

/* The user turn of the "answer" stage for question over the numbered reads (exposed for the
 * tests and the benchmark). malloc'd. */
char *dream_ask_prompt(const char *question, const char *reads);

#ifdef __cplusplus
}
#endif
#endif
