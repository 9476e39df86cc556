/* memory.c — GET /v1/memory/<tool>: the read tools (dream/read.h) over HTTP, the same library
 * calls and the same JSON as the CLI verbs' --json. Arguments are query parameters, the ones
 * dream_read_tool_args names for the tool, which are the CLI verb's options: resolve, links,
 * infobox: name; read: name, whole; section: name, anchor; list (and category, which needs a
 * filter): category, type, kind or series, limit, offset; search: query, limit, conversations,
 * since, until; status: none. A flag (whole, conversations) is on with no value, 1, true or yes.
 * The wiki and store are the server's (dream serve --wiki/--store; by default DREAM_WIKI,
 * DREAM_HOME, ...). An article name is only ever matched against the wiki's listed articles, so
 * no parameter can name a path. Status: 200 with the tool's object; 404 for an unknown article
 * (OpenAI's error shape plus the tool's "candidates"/"captured_near"/"anchors"); 400 for a bad
 * or missing argument, a parameter the tool does not take (named, with the ones it does) or
 * given twice, or an unknown tool. */
#include "serve_handlers.h"

#include "dream/error.h"
#include "dream/read.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The query parameters gathered into the tool's arguments. The first that cannot be one stops
 * the walk: bad_key names it and problem says why. */
struct memory_query {
    const char *const *takes; /* the tool's parameters */
    json_t *args;
    const char *bad_key;
    enum { MEMORY_ARG_OK, MEMORY_ARG_UNKNOWN, MEMORY_ARG_TWICE, MEMORY_ARG_NOT_UTF8, MEMORY_ARG_NUL, MEMORY_ARG_FLAG, MEMORY_ARG_NOMEM } problem;
};

/* Whether v is a flag's value: on with none, 1, true or yes; off with 0, false or no. */
static bool memory_flag_value(const char *v)
{
    static const char *const words[] = {"", "1", "true", "yes", "0", "false", "no", NULL};
    for (size_t i = 0; words[i]; i++)
        if (!strcasecmp(v, words[i])) return true;
    return false;
}

static enum MHD_Result memory_query_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size, const char *value,
                                        size_t value_size)
{
    (void)kind;
    struct memory_query *q = cls;
    q->bad_key = key;
    bool known = false;
    for (size_t i = 0; q->takes[i] && !known; i++) known = strcmp(key, q->takes[i]) == 0;
    if (!known) q->problem = MEMORY_ARG_UNKNOWN;
    else if (strlen(key) != key_size || (value && strlen(value) != value_size)) q->problem = MEMORY_ARG_NUL; /* %00: not cut short */
    else if ((!strcmp(key, "whole") || !strcmp(key, "conversations")) && value && !memory_flag_value(value)) q->problem = MEMORY_ARG_FLAG;
    else if (json_object_get(q->args, key)) q->problem = MEMORY_ARG_TWICE;
    else {
        json_t *v = json_string(value ? value : ""); /* "?whole" with no value is the flag on */
        if (!v) q->problem = MEMORY_ARG_NOT_UTF8;
        else if (json_object_set_new(q->args, key, v)) q->problem = MEMORY_ARG_NOMEM;
    }
    return q->problem == MEMORY_ARG_OK ? MHD_YES : MHD_NO;
}

/* 400 for the first query parameter the tool cannot take. */
static enum MHD_Result memory_bad_query(struct serve_request *rq, const struct memory_query *q)
{
    const char *key = q->bad_key;
    switch (q->problem) {
    case MEMORY_ARG_UNKNOWN: {
        char takes[256] = "";
        for (size_t i = 0; q->takes[i]; i++) snprintf(takes + strlen(takes), sizeof takes - strlen(takes), "%s%s", i ? ", " : "", q->takes[i]);
        if (!takes[0])
            return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "unknown_parameter", key, "unknown parameter '%.60s': %s takes no parameters",
                                           key, rq->path);
        return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "unknown_parameter", key, "unknown parameter '%.60s' for %s; it takes: %s", key,
                                       rq->path, takes);
    }
    case MEMORY_ARG_TWICE:
        return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "invalid_argument", key,
                                       "the parameter '%.60s' is given twice; give it once", key);
    case MEMORY_ARG_NUL:
        return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "invalid_argument", key,
                                       "the query parameter '%.60s' holds a NUL byte (%%00); send it without one", key);
    case MEMORY_ARG_FLAG:
        return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "invalid_argument", key,
                                       "the flag '%.60s' is on with no value, 1, true or yes, and off with 0, false or no", key);
    case MEMORY_ARG_NOT_UTF8:
        return serve_reply_error_param(rq, MHD_HTTP_BAD_REQUEST, "invalid_argument", key, "the query parameter '%.60s' is not valid UTF-8", key);
    case MEMORY_ARG_OK:
    case MEMORY_ARG_NOMEM: break;
    }
    return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
}

/* OpenAI's error shape around a read tool's error object, keeping its other members. */
static enum MHD_Result memory_error(struct serve_request *rq, unsigned status, const char *type, const char *code, json_t *res)
{
    const char *msg = json_string_value(json_object_get(res, "error"));
    json_t *body = json_pack("{s:{s:s, s:s, s:n, s:s}}", "error", "message", msg ? msg : dream_error_last(), "type", type, "param", "code", code);
    const char *key;
    json_t *v;
    json_object_foreach(res, key, v) if (strcmp(key, "error") != 0) json_object_set(body, key, v);
    json_decref(res);
    if (!body) return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
    return serve_reply_json(rq, status, body);
}

bool serve_reader_open(struct serve_request *rq, bool wiki_optional, dream_reader **r, enum MHD_Result *reply)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
    p.wiki_optional = wiki_optional;
    if (rq->server->wiki_dir) p.wiki = rq->server->wiki_dir;
    p.store = rq->server->store_path;
    int rc = dream_reader_open(&p, r);
    if (!rc) return true;
    *reply = serve_reply_error(rq, rc == DREAM_ENOTFOUND ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
                               rc == DREAM_ENOTFOUND ? "invalid_request_error" : "server_error", rc == DREAM_ENOTFOUND ? "no_wiki" : NULL, "%s",
                               dream_error_last());
    return false;
}

enum MHD_Result serve_memory(struct serve_request *rq)
{
    const char *tool = rq->subpath;
    json_t *args = json_object();
    if (!args) return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
    const char *const *takes = dream_read_tool_args(tool);
    if (takes) { /* an unknown tool is refused by dream_read_call, which lists the tools */
        struct memory_query q = {.takes = takes, .args = args, .bad_key = NULL, .problem = MEMORY_ARG_OK};
        MHD_get_connection_values_n(rq->conn, MHD_GET_ARGUMENT_KIND, memory_query_arg, &q);
        if (q.problem != MEMORY_ARG_OK) {
            enum MHD_Result bad = memory_bad_query(rq, &q);
            json_decref(args);
            return bad;
        }
    }
    dream_reader *r = NULL;
    enum MHD_Result reply;
    if (!serve_reader_open(rq, dream_read_tool_wiki_optional(tool), &r, &reply)) {
        json_decref(args);
        return reply;
    }
    json_t *res = NULL;
    int rc = dream_read_call(r, tool, args, &res);
    dream_reader_close(r);
    json_decref(args);
    if (rc == 0 && res) return serve_reply_json(rq, MHD_HTTP_OK, res);
    if (!res) res = json_pack("{ss}", "error", dream_error_last());
    if (rc == DREAM_ENOTFOUND) return memory_error(rq, MHD_HTTP_NOT_FOUND, "invalid_request_error", "not_found", res);
    if (rc == DREAM_EINVAL) return memory_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument", res);
    return memory_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", "read_failed", res);
}
