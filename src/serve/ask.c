/* ask.c — POST /v1/memory/ask: `dream ask` over HTTP (dream/ask.h), the same library call and
 * the same JSON as `dream ask --json`. The body is {"question": "..."}; the wiki and store are
 * the server's. The answer's one model call goes through the seam like every stage call.
 * Status: 200 with the answer (nothing on file is an answer too); 400 for a body that is not
 * {"question": string} or a bad question; 404 when there is no wiki. */
#include "serve_handlers.h"

#include "dream/ask.h"
#include "dream/error.h"
#include "dream/read.h"
#include "util/utf8.h"

#include <string.h>

enum MHD_Result serve_ask(struct serve_request *rq)
{
    json_error_t je;
    json_t *b = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
    json_t *q = json_object_get(b, "question");
    if (!b || !json_is_object(b) || !json_is_string(q)) {
        json_decref(b);
        return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument",
                                 "the body must be a JSON object {\"question\": \"...\"}%s%s", b ? "" : ": ", b ? "" : serve_json_why(&je));
    }
    const char *key;
    json_t *v;
    json_object_foreach(b, key, v) if (strcmp(key, "question") != 0)
    {
        enum MHD_Result r = serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument",
                                              "unknown member '%.*s' (the body is {\"question\": \"...\"})", utf8_cut(key, 60), key);
        json_decref(b);
        return r;
    }
    dream_reader *r = NULL;
    enum MHD_Result reply;
    if (!serve_reader_open(rq, false, &r, &reply)) {
        json_decref(b);
        return reply;
    }
    json_t *out = NULL;
    int rc = dream_ask(r, json_string_value(q), NULL, &out);
    dream_reader_close(r);
    json_decref(b);
    if (!rc) return serve_reply_json(rq, MHD_HTTP_OK, out);
    if (rc == DREAM_EINVAL) return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument", "%s", dream_error_last());
    return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", "ask_failed", "%s", dream_error_last());
}
