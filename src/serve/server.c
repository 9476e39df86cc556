/* server.c — the HTTP side: libmicrohttpd with a thread per connection; when a request's
 * headers arrive, in this order: the Host and Origin checks (guard.c), OPTIONS, the bearer
 * token, the route (404, or 405 with Allow), a POST body's Content-Type (415) and the body
 * limit (413); then the body, the handler, and replies in OpenAI's shapes. */
#include "serve_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "dream/model.h"
#include "dream/paths.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* $DREAM_IDLE_TIMEOUT as seconds (0..86400), else the default. */
static unsigned idle_timeout_default(void)
{
    const char *v = getenv("DREAM_IDLE_TIMEOUT");
    char *end = NULL;
    unsigned long n = v && *v ? strtoul(v, &end, 10) : 0;
    return v && *v && !*end && n <= 86400 ? (unsigned)n : 30;
}

void dream_serve_default_params(struct dream_serve_params *p)
{
    const char *key = getenv("DREAM_API_KEY");
    *p = (struct dream_serve_params){
        .host = "127.0.0.1",
        .port = 8080,
        .api_key = key && *key ? key : NULL,
        .max_body = 1 << 20,
        .max_tokens = 4096,
        .max_connections = 64,
        .idle_timeout = idle_timeout_default(),
        .store_path = NULL,
        .wiki_dir = NULL,
        .allow_hosts = getenv("DREAM_ALLOW_HOSTS"),
        .cors_origins = getenv("DREAM_CORS"),
    };
}

/* How much of a body over --max-body is read and thrown away before the 413 is sent anyway. */
#define SERVE_DISCARD_MAX ((size_t)4 << 20)

/* Per-connection state across the access handler's calls. */
struct conn_state {
    struct dbuf body;
    bool too_big;     /* over --max-body: the rest is counted and thrown away */
    bool answered;    /* its 413 queued before the body ended */
    size_t discarded; /* bytes thrown away */
    const struct serve_route *route; /* matched when the headers arrived */
    size_t subpath_at;               /* where rq.subpath begins in the path */
    const char *cors_origin;         /* MHD's copy of the Origin header, when --cors let it in */
};

enum MHD_Result serve_queue(struct serve_request *rq, unsigned status, struct MHD_Response *r)
{
    MHD_add_response_header(r, "Vary", "Origin");
    if (rq->cors_origin) MHD_add_response_header(r, "Access-Control-Allow-Origin", rq->cors_origin);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED && rq->allow) MHD_add_response_header(r, "Allow", rq->allow);
    if (status == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    return MHD_queue_response(rq->conn, status, r);
}

enum MHD_Result serve_reply_json(struct serve_request *rq, unsigned status, json_t *body)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text) return MHD_NO;
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ok = serve_queue(rq, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_error(struct serve_request *rq, unsigned status, const char *type, const char *code, const char *param,
                                   const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    struct dbuf clean = {0}, clean_param = {0};
    serve_utf8_clean(msg, strlen(msg), &clean);
    if (param) serve_utf8_clean(param, strlen(param), &clean_param);
    json_t *err = json_pack("{s:{s:s, s:s, s:s?, s:s?}}", "error", "message", clean.data ? clean.data : "error", "type", type, "param",
                            param ? (clean_param.data ? clean_param.data : "") : NULL, "code", code);
    dbuf_free(&clean);
    dbuf_free(&clean_param);
    return serve_reply_json(rq, status, err);
}

enum MHD_Result serve_reply_error(struct serve_request *rq, unsigned status, const char *type, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ok = reply_error(rq, status, type, code, NULL, fmt, ap);
    va_end(ap);
    return ok;
}

enum MHD_Result serve_reply_error_param(struct serve_request *rq, unsigned status, const char *code, const char *param, const char *fmt,
                                        ...)
{
    va_list ap;
    va_start(ap, fmt);
    enum MHD_Result ok = reply_error(rq, status, "invalid_request_error", code, param, fmt, ap);
    va_end(ap);
    return ok;
}

enum MHD_Result serve_reply_stream(struct serve_request *rq, MHD_ContentReaderCallback read, void *cls, MHD_ContentReaderFreeCallback done)
{
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, read, cls, done);
    if (!r) {
        done(cls);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    enum MHD_Result ok = serve_queue(rq, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* Compares without an early exit, so the time taken does not tell how much of a guess was right. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < la; i++) d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
    return d == 0;
}

static bool authorized(struct dream_server *s, struct MHD_Connection *c)
{
    if (!s->api_key) return true;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7)) return false;
    return same_secret(h + 7, s->api_key);
}

/* The route for method and path, or NULL; allow gets the methods the path takes ("GET, HEAD,
 * OPTIONS"), or "" when no route has the path. HEAD takes a GET route: the handler answers as
 * for GET and libmicrohttpd sends the headers without the body (RFC 9110, 9.3.2). *subpath_at:
 * where the path after a prefix route's begins (the path's length for an exact route). */
static const struct serve_route *route_find(const char *method, const char *path, char *allow, size_t cap, size_t *subpath_at)
{
    const struct serve_route *found = NULL;
    if (!strcmp(method, MHD_HTTP_METHOD_HEAD)) method = MHD_HTTP_METHOD_GET;
    allow[0] = 0;
    /* a path an exact route names is that route's alone: /v1/memory/dream is not the GET
     * prefix /v1/memory/'s too */
    bool exact = false;
    for (const struct serve_route *r = serve_routes; r->path && !exact; r++) exact = r->path[strlen(r->path) - 1] != '/' && !strcmp(path, r->path);
    for (const struct serve_route *r = serve_routes; r->path; r++) {
        size_t n = strlen(r->path);
        bool prefix = n > 0 && r->path[n - 1] == '/';
        bool match = prefix ? !exact && !strncmp(path, r->path, n) : !strcmp(path, r->path);
        if (!match) continue;
        if (!strstr(allow, r->method)) {
            bool get = !strcmp(r->method, MHD_HTTP_METHOD_GET);
            snprintf(allow + strlen(allow), cap - strlen(allow), "%s, %s", r->method, get ? "HEAD, " : "");
        }
        if (found || strcmp(method, r->method)) continue;
        found = r;
        *subpath_at = prefix ? n : strlen(path);
    }
    if (allow[0]) snprintf(allow + strlen(allow), cap - strlen(allow), "OPTIONS");
    return found;
}

/* OPTIONS on a known path: a CORS preflight when a page sent it (its origin already let in),
 * else the methods in Allow. 204 either way. */
static enum MHD_Result reply_options(struct serve_request *rq, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Allow", allow);
    const char *want = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
    if (want && rq->cors_origin) {
        /* The origin is one the person named, so the headers its page asks for (an SDK's own
         * among them) are let through as asked. */
        const char *asked = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Access-Control-Request-Headers");
        MHD_add_response_header(r, "Access-Control-Allow-Methods", allow);
        MHD_add_response_header(r, "Access-Control-Allow-Headers",
                                serve_guard_header_list(asked) ? asked : "Authorization, Content-Type, MCP-Protocol-Version");
        MHD_add_response_header(r, "Access-Control-Max-Age", "600");
    }
    enum MHD_Result ok = serve_queue(rq, MHD_HTTP_NO_CONTENT, r);
    MHD_destroy_response(r);
    return ok;
}

static const char *header(struct MHD_Connection *c, const char *name) { return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name); }

struct header_count {
    const char *name;
    int n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct header_count *c = cls;
    (void)kind;
    (void)value;
    if (key && !strcasecmp(key, c->name)) c->n++;
    return MHD_YES;
}

/* How many times the request carries header name. */
static int header_times(struct MHD_Connection *conn, const char *name)
{
    struct header_count c = {name, 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &c);
    return c.n;
}

/* The checks made when a request's headers have arrived (see the top of this file). A refusal
 * is queued here; otherwise the connection's state is made and the body read next. */
static enum MHD_Result on_headers(struct dream_server *s, struct serve_request *rq, void **con_cls)
{
    struct MHD_Connection *conn = rq->conn;
    const char *host = header(conn, MHD_HTTP_HEADER_HOST);
    /* one Host, one Origin: with two, the checks would read one and something after us the other */
    const char *twice = header_times(conn, MHD_HTTP_HEADER_HOST) > 1        ? "Host"
                        : header_times(conn, "Origin") > 1                     ? "Origin"
                        : header_times(conn, MHD_HTTP_HEADER_CONTENT_LENGTH) > 1 ? "Content-Length"
                                                                               : NULL;
    if (twice)
        return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", strcmp(twice, "Host") ? "duplicate_header" : "bad_host",
                                 "the request carries more than one %s header: send one", twice);
    if (!host && rq->version && !strcmp(rq->version, MHD_HTTP_VERSION_1_1))
        return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "bad_host",
                                 "an HTTP/1.1 request must carry a Host header (RFC 9112): send the host of the URL");
    if (host && !serve_guard_host_allowed(&s->guard, host)) {
        char name[256];
        if (!serve_guard_host_name(host, name, sizeof name))
            return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "bad_host",
                                     "the Host header '%.200s' is not a host name: send host[:port], the name or address of the URL", host);
        return serve_reply_error(rq, MHD_HTTP_FORBIDDEN, "invalid_request_error", "host_not_allowed",
                                 "Host '%s' is not allowed; start dream serve with --allow-host %s to allow it (this server answers to "
                                 "localhost, 127.0.0.1, [::1] and the address it listens on, so that a web page cannot reach it under a "
                                 "name of its own: DNS rebinding)",
                                 name, name);
    }
    const char *origin = header(conn, "Origin");
    switch (serve_guard_origin(&s->guard, origin, host)) {
    case SERVE_ORIGIN_REFUSED:
        if (!serve_guard_origin_form(origin)) /* 'null' (a sandboxed frame, a local file), or no origin at all */
            return serve_reply_error(rq, MHD_HTTP_FORBIDDEN, "invalid_request_error", "origin_not_allowed",
                                     "Origin '%.200s' is not allowed: only pages of an origin named with --cors may use this server; "
                                     "serve the page from an http(s) origin and start dream serve with --cors ORIGIN",
                                     origin);
        return serve_reply_error(rq, MHD_HTTP_FORBIDDEN, "invalid_request_error", "origin_not_allowed",
                                 "Origin '%.200s' is not allowed: a web page of another origin may not use this server; start dream "
                                 "serve with --cors %.200s to allow it",
                                 origin, origin);
    case SERVE_ORIGIN_CORS: rq->cors_origin = origin; break;
    case SERVE_ORIGIN_NONE:
    case SERVE_ORIGIN_SAME: break;
    }
    char allow[64];
    size_t subpath_at = 0;
    const struct serve_route *route = route_find(rq->method, rq->path, allow, sizeof allow, &subpath_at);
    rq->allow = allow[0] ? allow : NULL;
    bool options = !strcmp(rq->method, MHD_HTTP_METHOD_OPTIONS);
    if (options && rq->allow) return reply_options(rq, allow); /* before the token: a preflight never carries one */
    if (!authorized(s, conn))
        return serve_reply_error(rq, MHD_HTTP_UNAUTHORIZED, "invalid_request_error", "invalid_api_key",
                                 "a valid API key is required: send the header 'Authorization: Bearer <DREAM_API_KEY>'");
    if (!route && rq->allow)
        return serve_reply_error(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed",
                                 "%s is not allowed on %s (it takes %s)", rq->method, rq->path, allow);
    if (!route)
        return serve_reply_error(rq, MHD_HTTP_NOT_FOUND, "invalid_request_error", "not_found",
                                 "no endpoint at %s %s; this server has POST /v1/chat/completions, GET /v1/models, GET /v1/memory/<tool>, "
                                 "POST /v1/memory/ask, POST /v1/memory/dream and POST /mcp",
                                 rq->method, rq->path);
    const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH), *type = header(conn, MHD_HTTP_HEADER_CONTENT_TYPE);
    bool has_body = (cl && strtoull(cl, NULL, 10) > 0) || header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (!strcmp(rq->method, MHD_HTTP_METHOD_POST) && (has_body || type) && !serve_guard_json_type(type)) {
        if (!type)
            return serve_reply_error(rq, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_media_type",
                                     "no Content-Type was sent: POST %s takes a JSON body; send the header 'Content-Type: application/json'",
                                     rq->path);
        return serve_reply_error(rq, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "invalid_request_error", "unsupported_media_type",
                                 "Content-Type '%.200s' is not accepted: POST %s takes a JSON body; send the header 'Content-Type: "
                                 "application/json'",
                                 type, rq->path);
    }
    if (cl && strtoull(cl, NULL, 10) > s->p.max_body)
        return serve_reply_error(rq, 413, "invalid_request_error", "body_too_large",
                                 "the request body has %s bytes; this server takes at most %zu (dream serve --max-body)", cl, s->p.max_body);
    struct conn_state *st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    st->route = route;
    st->subpath_at = subpath_at;
    st->cors_origin = rq->cors_origin;
    *con_cls = st;
    return MHD_YES;
}

/* 413 for a body that went past max bytes as it came (a chunked one: no length to refuse up front). */
static enum MHD_Result reply_too_big(struct serve_request *rq, size_t max)
{
    return serve_reply_error(rq, 413, "invalid_request_error", "body_too_large",
                             "the request body is over %zu bytes, the most this server takes (dream serve --max-body)", max);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    struct dream_server *s = cls;
    struct conn_state *st = *con_cls;
    struct serve_request rq = {.conn = conn,
                               .server = s,
                               .method = method,
                               .version = version,
                               .path = url,
                               .subpath = "",
                               .body = "",
                               .body_len = 0,
                               .cors_origin = st ? st->cors_origin : NULL,
                               .allow = NULL};
    if (!st) return on_headers(s, &rq, con_cls);
    if (*upload_size) { /* a piece of the body */
        if (!st->too_big && st->body.len + *upload_size > s->p.max_body) {
            st->too_big = true;
            dbuf_free(&st->body);
        }
        if (st->too_big) {
            /* thrown away as it comes; the 413 follows the body's end, so that a client that
             * sends its whole body before it reads gets it. A chunked body has no length to refuse
             * up front: one that goes on past SERVE_DISCARD_MAX more is answered now and the
             * connection closed, rather than read for as long as the client sends. */
            st->discarded += *upload_size;
            *upload_size = 0;
            if (st->discarded <= SERVE_DISCARD_MAX || st->answered) return MHD_YES;
            st->answered = true;
            return reply_too_big(&rq, s->p.max_body);
        }
        if (dbuf_append(&st->body, upload, *upload_size)) return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (st->too_big) return st->answered ? MHD_YES : reply_too_big(&rq, s->p.max_body);
    if (st->body.data) {
        rq.body = st->body.data;
        rq.body_len = st->body.len;
    }
    rq.subpath = url + st->subpath_at;
    /* The request is whole: from here the connection waits on the answer (a model call, a run,
     * a stream with minutes between events), not on the client, so the idle timeout is off
     * until the request completes (on_done). libmicrohttpd counts a content reader's wait for
     * its next piece as silence, and would cut a stream. */
    if (s->p.idle_timeout) MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    return st->route->handler(&rq);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
    struct dream_server *s = cls;
    /* A keep-alive connection waits for its next request: silence counts again. */
    if (why == MHD_REQUEST_TERMINATED_COMPLETED_OK && s->p.idle_timeout)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, s->p.idle_timeout);
    struct conn_state *st = *con_cls;
    if (!st) return;
    dbuf_free(&st->body);
    free(st);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') msg[--n] = 0;
    dream_log(DREAM_LOG_WARN, "http: %s", msg);
}

static bool is_loopback(const struct in_addr *a) { return (ntohl(a->s_addr) >> 24) == 127; }

int dream_server_start(const struct dream_serve_params *params, dream_server **out)
{
    *out = NULL;
    struct dream_serve_params p;
    if (params) p = *params;
    else dream_serve_default_params(&p);
    const char *host = p.host && *p.host ? p.host : "127.0.0.1";
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p.port)};
    if (!strcmp(host, "localhost")) host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1)
        return dream_error_set(DREAM_EINVAL, "--host '%s' is not an IPv4 address (give e.g. 127.0.0.1 or 0.0.0.0)", host);
    if (p.port < 0 || p.port > 65535) return dream_error_set(DREAM_EINVAL, "--port %d is outside 0..65535", p.port);
    if (!is_loopback(&addr.sin_addr) && !p.api_key)
        return dream_error_set(DREAM_EINVAL,
                               "refusing to listen on %s without an API key: anyone who can reach it could use the model; "
                               "set DREAM_API_KEY (clients then send 'Authorization: Bearer <key>'), or bind 127.0.0.1",
                               host);
    if (p.max_body < 64) p.max_body = 64;
    if (p.max_tokens < 1) p.max_tokens = 1;
    if (p.max_connections < 1) p.max_connections = 1;

    dream_server *s = calloc(1, sizeof *s);
    if (!s) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = serve_guard_init(&s->guard, host, p.allow_hosts, p.cors_origins);
    if (rc) {
        free(s);
        return rc;
    }
    s->p = p;
    s->p.allow_hosts = s->p.cors_origins = NULL; /* the caller's strings; the guard holds copies */
    s->host = strdup(host);
    s->api_key = p.api_key ? strdup(p.api_key) : NULL;
    s->wiki_dir = p.wiki_dir ? strdup(p.wiki_dir) : NULL;
    rc = p.store_path ? ((s->store_path = strdup(p.store_path)) ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory"))
                      : dream_paths_store(&s->store_path);
    if (!rc) rc = dream_seam_load(&s->model_name, &s->seq_ctx);
    for (const struct serve_service *v = serve_services; !rc && v->name; v++) rc = v->start(s);
    if (rc) {
        dream_server_stop(s);
        return rc;
    }
    s->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                                 on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
                                 (const struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED, on_done, s, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)p.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, p.idle_timeout, MHD_OPTION_END);
    if (!s->daemon) {
        dream_server_stop(s);
        return dream_error_set(DREAM_EIO, "could not listen on %s:%d (is the port taken? try --port)", host, p.port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : p.port;
    *out = s;
    return 0;
}

int dream_server_port(const dream_server *s) { return s->port; }

void dream_server_stop(dream_server *s)
{
    if (!s) return;
    for (const struct serve_service *v = serve_services; v->name; v++) v->stop(s); /* first: ends what streams wait on */
    if (s->daemon) MHD_stop_daemon(s->daemon);
    for (const struct serve_service *v = serve_services; v->name; v++) v->free(s);
    free(s->store_path);
    free(s->wiki_dir);
    free(s->host);
    free(s->api_key);
    serve_guard_free(&s->guard);
    free(s);
}

const char *serve_json_why(const json_error_t *je)
{
    return strstr(je->text, "JSON_ALLOW_NUL") ? "a string holds \\u0000 (a NUL character), which no text the model or the memory reads can carry: leave it out"
                                             : je->text;
}
