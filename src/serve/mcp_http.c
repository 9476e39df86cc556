/* mcp_http.c — POST /mcp: the Model Context Protocol's streamable HTTP transport (dream/mcp.h)
 * without server-initiated messages. Each POST carries one JSON-RPC message (or batch) and is
 * answered with application/json: 200 with the answer, 202 with no body when there is nothing to
 * answer (notifications, responses), 400 when the body is not JSON-RPC at all or names a protocol
 * version this server does not speak (MCP-Protocol-Version). No session is kept: every request
 * stands alone, so there is no Mcp-Session-Id, and GET (a stream of server messages) and DELETE
 * (ending a session) are answered 405 by the core. What the transport's spec asks of every
 * server, checking Origin against DNS rebinding (403), is the core's, as are the Host check, the
 * bearer token, the JSON Content-Type and the body limit: the same for every endpoint. */
#include "serve_handlers.h"

#include "dream/error.h"
#include "dream/mcp.h"

#include <string.h>

/* A JSON-RPC error with a null id, as the HTTP status's body. */
static enum MHD_Result mcp_http_refuse(struct serve_request *rq, unsigned status, const char *msg)
{
    return serve_reply_json(rq, status, json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
                                                  DREAM_MCP_INVALID_REQUEST, "message", msg));
}

enum MHD_Result serve_mcp(struct serve_request *rq)
{
    const char *version = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (version && !dream_mcp_version_supported(version))
        return mcp_http_refuse(rq, MHD_HTTP_BAD_REQUEST, "unsupported MCP-Protocol-Version; this server speaks " DREAM_MCP_LATEST_VERSION
                                                         ", 2025-06-18, 2025-03-26 and 2024-11-05");
    struct dream_mcp_params p;
    dream_mcp_default_params(&p);
    p.wiki = rq->server->wiki_dir;
    p.store = rq->server->store_path;
    p.stateless = true;
    dream_mcp *m = dream_mcp_new(&p);
    if (!m) return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
    json_t *reply = NULL;
    int rc = dream_mcp_handle(m, rq->body, rq->body_len, &reply);
    dream_mcp_free(m);
    if (rc == DREAM_ENOMEM) return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
    if (!reply) {
        struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
        enum MHD_Result ok = serve_queue(rq, MHD_HTTP_ACCEPTED, r);
        MHD_destroy_response(r);
        return ok;
    }
    return serve_reply_json(rq, rc == DREAM_EFORMAT ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_OK, reply);
}
