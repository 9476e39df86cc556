/* segment_answer.h — reading the chunk stage's answer: a tolerant JSON parse into raw chunks
 * whose anchors are not yet checked against the conversation (segment.c repairs them). */
#ifndef DREAM_DREAMING_SEGMENT_ANSWER_H
#define DREAM_DREAMING_SEGMENT_ANSWER_H

#include <stddef.h>

/* An anchor as the model wrote it: a message id (string) or a message position (integer). */
struct segment_anchor {
    char *id;           /* malloc'd; NULL when the model gave a number */
    long long position; /* meaningful when id is NULL */
};

struct segment_raw_chunk {
    struct segment_anchor start, end;
    char *label; /* malloc'd, whitespace-trimmed; "" when the model gave none */
};

struct segment_answer {
    struct segment_raw_chunk *chunks;
    size_t n;
};

/* Parses text (len bytes, need not be NUL-terminated). Accepts, in order: the whole text as JSON;
 * the text inside a ``` / ```json fence; the span from the first '{' or '[' to the last '}' or
 * ']'. The JSON may be {"chunks": [...]}, a bare array of chunk objects, or one chunk object.
 * A chunk object names its anchors start_message_id / end_message_id (also *_uuid, start / end)
 * and its label (also title). An empty list is a valid answer. DREAM_EFORMAT (message says what
 * was wrong) when nothing parses or a chunk lacks an anchor. The caller frees *out with
 * segment_answer_free, also after an error. */
int segment_answer_parse(const char *text, size_t len, struct segment_answer *out);

void segment_answer_free(struct segment_answer *a);

/* The grammar (GBNF, dream/grammar.h) of a chunk answer about the n messages at positions
 * first..first+n-1 whose ids are ids[0..n): {"chunks": [...]} with at most min(n, 64) chunks,
 * each {"start_message_id": A, "end_message_id": A, "label": "..."} where every anchor A is one
 * of those ids (a JSON string) or positions (a JSON integer), and the label at most 120 bytes
 * without quotes, backslashes or control characters; JSON whitespace bounded. Every answer it
 * allows parses with segment_answer_parse into anchors that name messages of the window. *out
 * is malloc'd. */
int segment_answer_grammar(const char *const *ids, size_t n, size_t first, char **out);

/* The same answer shape as a JSON schema (the text of one object), for a remote server that
 * reads response_format: {"chunks": [...]} with at most min(n, 64) chunk objects of exactly the
 * three members, each anchor one of the ids (a string) or positions (an integer), the label a
 * string of at most 120 characters. *out is malloc'd. */
int segment_answer_schema(const char *const *ids, size_t n, size_t first, char **out);

#endif
