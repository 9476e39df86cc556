/* server.c — the HTTP side: libmicrohttpd with a thread per connection, bearer-token check,
 * body limit, routing through serve_routes[], and replies in OpenAI's shapes. */
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
    };
}

/* Per-connection state across the access handler's calls. */
struct conn_state {
    struct dbuf body;
    bool too_big;
};

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
    enum MHD_Result ok = MHD_queue_response(rq->conn, status, r);
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
    enum MHD_Result ok = MHD_queue_response(rq->conn, MHD_HTTP_OK, r);
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

static enum MHD_Result route(struct serve_request *rq)
{
    bool path_known = false;
    for (const struct serve_route *r = serve_routes; r->path; r++) {
        size_t n = strlen(r->path);
        bool prefix = n > 0 && r->path[n - 1] == '/';
        bool match = prefix ? !strncmp(rq->path, r->path, n) : !strcmp(rq->path, r->path);
        if (!match) continue;
        path_known = true;
        if (strcmp(rq->method, r->method)) continue;
        rq->subpath = prefix ? rq->path + n : "";
        return r->handler(rq);
    }
    if (path_known)
        return serve_reply_error(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "invalid_request_error", "method_not_allowed",
                                 "%s is not allowed on %s", rq->method, rq->path);
    return serve_reply_error(rq, MHD_HTTP_NOT_FOUND, "invalid_request_error", "not_found",
                             "no endpoint at %s %s; this server has POST /v1/chat/completions, GET /v1/models, GET /v1/memory/<tool> and POST /v1/memory/dream", rq->method, rq->path);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    struct dream_server *s = cls;
    struct serve_request rq = {.conn = conn, .server = s, .method = method, .path = url, .body = ""};
    struct conn_state *st = *con_cls;
    if (!st) { /* the headers have arrived */
        if (!authorized(s, conn))
            return serve_reply_error(&rq, MHD_HTTP_UNAUTHORIZED, "invalid_request_error", "invalid_api_key",
                                     "a valid API key is required: send the header 'Authorization: Bearer <DREAM_API_KEY>'");
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->p.max_body)
            return serve_reply_error(&rq, 413, "invalid_request_error", "body_too_large",
                                     "the request body has %s bytes; this server takes at most %zu (dream serve --max-body)", cl, s->p.max_body);
        st = calloc(1, sizeof *st);
        if (!st) return MHD_NO;
        *con_cls = st;
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        if (!st->too_big && st->body.len + *upload_size > s->p.max_body) st->too_big = true;
        if (!st->too_big && dbuf_append(&st->body, upload, *upload_size)) return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (st->too_big)
        return serve_reply_error(&rq, 413, "invalid_request_error", "body_too_large",
                                 "the request body is over %zu bytes, the most this server takes (dream serve --max-body)", s->p.max_body);
    if (st->body.data) {
        rq.body = st->body.data;
        rq.body_len = st->body.len;
    }
    return route(&rq);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode why)
{
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
    s->p = p;
    s->host = strdup(host);
    s->api_key = p.api_key ? strdup(p.api_key) : NULL;
    s->wiki_dir = p.wiki_dir ? strdup(p.wiki_dir) : NULL;
    int rc = p.store_path ? ((s->store_path = strdup(p.store_path)) ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory"))
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
                                 (unsigned)p.max_connections, MHD_OPTION_END);
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
    free(s);
}
