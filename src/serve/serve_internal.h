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
 * path under it (rq->subpath is the rest). A handler runs only after the core's checks (guard.c
 * and server.c's on_headers): the Host and Origin are allowed, the token is right, and a POST
 * body was sent as application/json. OPTIONS and 405 (with Allow) are the core's. */
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
    const char *version; /* "HTTP/1.1", "HTTP/1.0" */
    const char *path;
    const char *subpath; /* the path after a prefix route ("" for an exact route) */
    const char *body;    /* NUL-terminated; "" when none */
    size_t body_len;
    const char *cors_origin; /* the Origin --cors let in, which every reply names; NULL for none */
    const char *allow;       /* the path's methods, for a 405's Allow header; NULL when unknown */
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
/* What is wrong with a body jansson refused (je), in words for the client: its own text, but
 * for a \u0000, which jansson names by a flag of its API. */
const char *serve_json_why(const json_error_t *je);

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
/* Queues r (the caller still destroys it) with the headers every reply carries: Vary: Origin,
 * Access-Control-Allow-Origin for an origin --cors let in, and Allow on a 405. Every reply goes
 * through it. */
enum MHD_Result serve_queue(struct serve_request *rq, unsigned status, struct MHD_Response *r);

/* guard.c: who may talk to the server. The core refuses, before anything else runs, a Host
 * that names no one of these (403: DNS rebinding), an Origin that is neither the server's own
 * nor let in by --cors (403), and a POST body that is not application/json (415). */
struct serve_guard {
    char **hosts;       /* --allow-host / DREAM_ALLOW_HOSTS, lowercase */
    size_t n_hosts;
    char **origins;     /* --cors / DREAM_CORS */
    size_t n_origins;
    char *bound;        /* the address listened on */
    bool any_address;   /* bound to 0.0.0.0: an IPv4 address in Host is this machine's */
};
/* Reads the two lists (entries separated by commas or white space; NULL for none) into g.
 * DREAM_EINVAL naming a bad entry: a host with a port, scheme or path; an origin that is not
 * scheme://host[:port], or '*' or 'null'. g needs serve_guard_free after a success only. */
int serve_guard_init(struct serve_guard *g, const char *bound, const char *hosts, const char *origins);
void serve_guard_free(struct serve_guard *g);
/* The host of a Host header value (name, IPv4 or [IPv6], then an optional :port) lowercased
 * into name; false when the value is not of that form or the name is cap bytes or more. */
bool serve_guard_host_name(const char *host, char *name, size_t cap);
/* Whether a Host header value names this server: localhost, 127.0.0.1, [::1], the bound address
 * (and any IPv4 address when that is 0.0.0.0) or a --allow-host name; any port, any case. */
bool serve_guard_host_allowed(const struct serve_guard *g, const char *host);
enum serve_origin {
    SERVE_ORIGIN_NONE,    /* no Origin: not a web page's request (curl, SDKs, agents) */
    SERVE_ORIGIN_SAME,    /* http:// and the request's own Host: a page of this server */
    SERVE_ORIGIN_CORS,    /* an origin --cors names: answered with Access-Control-Allow-Origin */
    SERVE_ORIGIN_REFUSED, /* any other page */
};
/* Whether an Origin value is scheme://host[:port], as a browser writes one (what --cors takes). */
bool serve_guard_origin_form(const char *origin);
/* What an Origin header value is to this server; host is the request's Host value (NULL when
 * it sent none), already allowed. */
enum serve_origin serve_guard_origin(const struct serve_guard *g, const char *origin, const char *host);
/* Whether a Content-Type value is application/json (any case, parameters such as charset
 * allowed). */
bool serve_guard_json_type(const char *content_type);
/* Whether an Access-Control-Request-Headers value is a list of header names, safe to send back
 * as Access-Control-Allow-Headers. */
bool serve_guard_header_list(const char *list);

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
    struct serve_guard guard;  /* guard.c: the Host and Origin lists */
};

/* Makes text valid UTF-8 for JSON: invalid bytes become U+FFFD. Appends to out (jansson needs
 * valid UTF-8). */
int serve_utf8_clean(const char *text, size_t len, struct dbuf *out);
/* The length of text's longest prefix that does not end inside an incomplete UTF-8 sequence
 * (the rest may be completed by the next token). */
size_t serve_utf8_complete(const char *text, size_t len);

#endif
