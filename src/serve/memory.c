/* memory.c — GET /v1/memory/<tool>: the read tools (dream/read.h) over HTTP, the same library
 * calls and the same JSON as the CLI verbs' --json. Arguments are query parameters: name,
 * anchor, whole, query, limit, offset, since, until, conversations (search), and one of
 * category/type/kind/series for /v1/memory/category. The wiki and store are the server's (dream serve --wiki/--store; by
 * default DREAM_WIKI, DREAM_HOME, ...). An article name is only ever matched against the wiki's listed articles, so no
 * parameter can name a path. Status: 200 with the tool's object; 404 for an unknown article
 * (OpenAI's error shape plus the tool's "candidates"/"captured_near"/"anchors"); 400 for a bad
 * or missing argument or an unknown tool. */
#include "serve_handlers.h"

#include "dream/error.h"
#include "dream/read.h"

#include <string.h>

static const char *const memory_args[] = {"name", "anchor", "whole", "query", "limit", "offset", "category", "type", "kind",
                                          "series", "since", "until", "conversations", NULL};

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

bool serve_reader_open(struct serve_request *rq, dream_reader **r, enum MHD_Result *reply)
{
    struct dream_reader_params p;
    dream_reader_default_params(&p);
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
    for (size_t i = 0; memory_args[i]; i++) {
        const char *v = serve_query(rq, memory_args[i]);
        if (!v) continue;
        json_t *s = json_string(v);
        if (!s) {
            json_decref(args);
            return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument",
                                     "the query parameter '%s' is not valid UTF-8", memory_args[i]);
        }
        json_object_set_new(args, memory_args[i], s);
    }
    dream_reader *r = NULL;
    enum MHD_Result reply;
    if (!serve_reader_open(rq, &r, &reply)) {
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
