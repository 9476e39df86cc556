/*
 * ingest_common.h — what the importers share: the run's context, a conversation being built,
 * JSON reading with repair and error positions, and time parsing (ingest_common.c).
 *
 * An importer reads one file (an istream) and hands each conversation to ingest_emit, which
 * checks it, stores it in one transaction and counts the outcome. Problems with the input are
 * reported through ingest_skip and never returned; an importer returns non-zero only when the
 * store itself failed (then the run stops).
 *
 * These helpers know nothing of the dispatcher (ingest.c) or of any importer: the dispatcher
 * finds the importers through importers.h, and the importers stand on this header alone.
 */
#ifndef DREAM_INGEST_COMMON_H
#define DREAM_INGEST_COMMON_H

#include "istream.h"

#include "dream/ingest.h"
#include "dream/store.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Longest JSONL line or array element (one conversation) kept; longer ones are skipped. */
#define INGEST_MAX_ITEM ((size_t)512 << 20)

struct ingest_ctx {
    dream_store *store;
    const struct dream_ingest_params *params;
    struct dream_ingest_stats *stats;
    const char *path;          /* the file as named in messages ("x.zip!conversations.json") */
    enum dream_format format;  /* of the file being read */
    char file_hash[65];        /* SHA-256 of the file (openai-jsonl provenance) */
    bool repaired;             /* the conversation being read had bytes repaired */
    int since_progress;        /* conversations since the last progress call */
};

struct ingest_msg {
    const char *role; /* "user" or "assistant" (static) */
    char *id;
    int64_t time_ms;
    char *text;
};

struct ingest_conv {
    char *id;
    char *title;
    int64_t created_ms, updated_ms;
    struct ingest_msg *msgs;
    size_t n, cap;
};

void conv_free(struct ingest_conv *c); /* frees the contents and zeroes c */
int conv_set_id(struct ingest_conv *c, const char *id);
int conv_set_title(struct ingest_conv *c, const char *title); /* NULL or blank leaves it unset */
/* Appends a message; text is trimmed of surrounding whitespace and a message left empty is
 * dropped (not an error). Copies every string. */
int conv_add(struct ingest_conv *c, const char *role, const char *id, int64_t time_ms, const char *text, size_t len);
/* Appends text to the last message when it has the same role, else adds a message. */
int conv_add_or_merge(struct ingest_conv *c, const char *role, const char *id, int64_t time_ms, const char *text,
                      size_t len, bool merge);

/* Stores c (derives a missing title from the first user message and missing times from the
 * messages), counts the outcome, reports empty and duplicate conversations. where names the
 * place in the file. Returns 0, or the store's error (fatal). c is left as it was. */
int ingest_emit(struct ingest_ctx *ctx, struct ingest_conv *c, const char *where);

/* Reports a skip (counted in stats and passed to on_skip). */
void ingest_skip(struct ingest_ctx *ctx, enum dream_skip_reason why, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Notes one more conversation for progress reporting. */
void ingest_tick(struct ingest_ctx *ctx);

/* Replaces invalid UTF-8 with U+FFFD and JSON escapes jansson refuses (\u0000, lone surrogates)
 * with \uFFFD. Sets *repaired when something changed. DREAM_ENOMEM only. */
int ingest_repair(struct dbuf *b, bool *repaired);

/* Repairs and parses one JSON text that starts on line/byte offset of the file. On a syntax
 * error returns NULL with msg (size n) set to "line L, column C (byte B): <jansson's text>". */
json_t *ingest_parse(struct ingest_ctx *ctx, struct dbuf *b, uint64_t line, uint64_t offset, char *msg, size_t n);

/* Reads a top-level JSON array, calling fn for each element with where = "path:line L". An element
 * that is malformed or too big is skipped and reported; a truncated array is reported and ends the
 * file. fn returns non-zero only for a fatal error. */
int ingest_json_array(struct ingest_ctx *ctx, struct istream *in,
                      int (*fn)(struct ingest_ctx *ctx, json_t *elem, const char *where));

/* Reads a JSONL file, calling fn for every line holding JSON (and, unless per_line, only for
 * objects). per_line: each line is its own conversation, so a malformed line is reported and
 * skipped and the next one read. Otherwise the lines together make one conversation (a session
 * log): a malformed unterminated last line (a log still being written) is ignored; any other
 * malformed or overlong line (a writer killed half way through it, the next line glued on) is
 * reported and left out, the rest read, and *damaged set (damaged may be NULL), so that a tree of
 * entries can bridge what it took. A file that cannot be read to its end sets *broken: it is
 * reported, and the caller must not store the conversation. */
int ingest_jsonl_each(struct ingest_ctx *ctx, struct istream *in, bool per_line, int (*fn)(void *ud, json_t *obj, uint64_t line),
                      void *ud, bool *broken, bool *damaged);

/* Times: Unix ms from an ISO 8601 string ("2024-05-01T12:00:00.123Z", offsets allowed), 0 when it
 * is not one. */
int64_t ingest_time_iso(const char *s);
/* Unix ms from a JSON number of seconds (or of ms when it is larger than 1e11) or an ISO string;
 * 0 for anything else. */
int64_t ingest_time_json(const json_t *v);

/* The string member key of obj, or NULL. */
const char *ingest_str(const json_t *obj, const char *key);

/* Appends the text of an Anthropic/OpenAI-style content value to out: a string, or the "text"
 * of every block whose "type" is one of types (NULL-terminated). Blocks are joined by a blank
 * line. */
int ingest_content_text(const json_t *content, const char *const *types, struct dbuf *out);

#endif
