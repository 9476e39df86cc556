/* serve_internal.h — what the server's files share: the request a handler sees, replies, and
 * the route table.
 *
 * Adding an endpoint: write `enum MHD_Result my_handler(struct serve_request *rq)` in its own
 * file and add one row to serve_routes[] in routes.c. A route whose path ends in '/' matches
 * every path under it (rq->subpath is the rest). */
#ifndef DREAM_SERVE_INTERNAL_H
#define DREAM_SERVE_INTERNAL_H

#include "dream/pipeline.h"
#include "dream/serve.h"
#include "util/buf.h"

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>

struct serve_request {
    struct MHD_Connection *conn;
    struct dream_server *server;
    const char *method;
    const char *path;
    const char *subpath; /* the path after a prefix route ("" for an exact route) */
    const char *body;    /* NUL-terminated; "" when none */
    size_t body_len;
};

typedef enum MHD_Result (*serve_handler)(struct serve_request *rq);

struct serve_route {
    const char *method; /* "GET", "POST" */
    const char *path;   /* exact, or a prefix when it ends in '/' */
    serve_handler handler;
};
extern const struct serve_route serve_routes[]; /* ends with a row of NULLs */

/* Replies. Each queues the response on rq->conn and returns MHD's result. serve_reply_json
 * takes the reference to body. */
enum MHD_Result serve_reply_json(struct serve_request *rq, unsigned status, json_t *body);
/* OpenAI's error shape; type e.g. "invalid_request_error", code may be NULL. */
enum MHD_Result serve_reply_error(struct serve_request *rq, unsigned status, const char *type, const char *code,
                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A server-sent-events reply: read is MHD's content reader (return bytes written,
 * MHD_CONTENT_READER_END_OF_STREAM, or _WITH_ERROR), done frees cls when the connection ends. */
enum MHD_Result serve_reply_stream(struct serve_request *rq, MHD_ContentReaderCallback read, void *cls,
                                   MHD_ContentReaderFreeCallback done);
/* A query argument, or NULL. */
const char *serve_query(struct serve_request *rq, const char *key);

/* The server's state that handlers use. */
struct serve_chat; /* chat.c: the request queue and its worker */
struct dream_server {
    struct dream_serve_params p;
    char *host, *api_key;
    struct MHD_Daemon *daemon;
    int port;
    const char *model_name;
    int seq_ctx;
    struct serve_chat *chat;
    char *store_path;          /* the store the pipeline and the read tools use */
    char *wiki_dir;            /* NULL: the default wiki */
    struct serve_dream *dream; /* dream.c: POST /v1/memory/dream */
};

/* chat.c */
int serve_chat_start(struct dream_server *s);
void serve_chat_stop(struct dream_server *s);
void serve_chat_free(struct dream_server *s);
enum MHD_Result serve_chat_completions(struct serve_request *rq);
enum MHD_Result serve_models(struct serve_request *rq);

/* memory.c: GET /v1/memory/<tool>, the read tools (dream/read.h) */
enum MHD_Result serve_memory(struct serve_request *rq);

/* dream.c: POST /v1/memory/dream, the pipeline with its progress as server-sent events */
int serve_dream_start(struct dream_server *s);
void serve_dream_stop(struct dream_server *s);
void serve_dream_free(struct dream_server *s);
enum MHD_Result serve_dream_run(struct serve_request *rq);
/* The endpoint's body (the fuzzer's entry): 0 with out filled (free it with
 * serve_dream_body_free), or -1 with the 400's message in err and nothing to free. */
struct serve_dream_body {
    struct dream_pipeline_params p; /* p.stage and p.conversation point at the strings below */
    char *stage, *conversation;
    bool stream;
};
int serve_dream_parse(const char *body, size_t len, struct serve_dream_body *out, char *err, size_t errlen);
void serve_dream_body_free(struct serve_dream_body *b);

/* Parses and checks a chat completion request body as the endpoint does (the fuzzer's entry):
 * 0, or -1 with the 400's message in err. */
int serve_chat_check(const struct dream_serve_params *p, const char *body, size_t len, char *err, size_t errlen);

/* Makes text valid UTF-8 for JSON: invalid bytes become U+FFFD. Appends to out (jansson needs
 * valid UTF-8). */
int serve_utf8_clean(const char *text, size_t len, struct dbuf *out);
/* The length of text's longest prefix that does not end inside an incomplete UTF-8 sequence
 * (the rest may be completed by the next token). */
size_t serve_utf8_complete(const char *text, size_t len);

#endif
