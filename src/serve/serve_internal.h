/* serve_internal.h — the server's core, what every file of it shares: the request a handler
 * sees, replies, the server's state, and the two tables the core runs from (routes.c): the routes,
 * and the services that start with the server and stop with it.
 *
 * The core (server.c) knows no handler by name: it matches a request against serve_routes[] and
 * starts and stops what serve_services[] lists, so the handlers (serve_handlers.h) depend on the
 * core and never the other way round.
 *
 * Adding an endpoint: write `enum MHD_Result my_handler(struct serve_request *rq)` in its own
 * file, declare it in serve_handlers.h and add one row to serve_routes[] in routes.c (and one to
 * serve_services[] when it keeps state of its own). A route whose path ends in '/' matches every
 * path under it (rq->subpath is the rest). */
#ifndef DREAM_SERVE_INTERNAL_H
#define DREAM_SERVE_INTERNAL_H

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

/* A part of the server with state of its own (a worker, a running pipeline). The core calls
 * every start in table order when the server starts (the first failure stops the server), every
 * stop before the HTTP daemon stops (a stop ends what is waiting on the part, so that open
 * connections can finish), and every free after it. stop and free must be safe on a part that
 * never started. */
struct serve_service {
    const char *name;
    int (*start)(struct dream_server *s);
    void (*stop)(struct dream_server *s);
    void (*free)(struct dream_server *s);
};
extern const struct serve_service serve_services[]; /* ends with a row of NULLs */

/* Replies. Each queues the response on rq->conn and returns MHD's result. serve_reply_json
 * takes the reference to body. */
enum MHD_Result serve_reply_json(struct serve_request *rq, unsigned status, json_t *body);
/* OpenAI's error shape; type e.g. "invalid_request_error", code may be NULL. */
enum MHD_Result serve_reply_error(struct serve_request *rq, unsigned status, const char *type, const char *code,
                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same, an invalid_request_error about one named parameter (the shape's "param"). */
enum MHD_Result serve_reply_error_param(struct serve_request *rq, unsigned status, const char *code, const char *param,
                                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A server-sent-events reply: read is MHD's content reader (return bytes written,
 * MHD_CONTENT_READER_END_OF_STREAM, or _WITH_ERROR), done frees cls when the connection ends. */
enum MHD_Result serve_reply_stream(struct serve_request *rq, MHD_ContentReaderCallback read, void *cls,
                                   MHD_ContentReaderFreeCallback done);

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

/* Makes text valid UTF-8 for JSON: invalid bytes become U+FFFD. Appends to out (jansson needs
 * valid UTF-8). */
int serve_utf8_clean(const char *text, size_t len, struct dbuf *out);
/* The length of text's longest prefix that does not end inside an incomplete UTF-8 sequence
 * (the rest may be completed by the next token). */
size_t serve_utf8_complete(const char *text, size_t len);

#endif
