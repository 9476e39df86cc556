/* fuzz_mcp.c — the MCP server's JSON-RPC handling on any bytes: every message is answered with a
 * well-formed JSON-RPC response (jsonrpc "2.0", an id, exactly one of result and error, an error
 * with an integer code and a message), a batch with an array of them, or not at all; a refusal
 * of the whole message (DREAM_EFORMAT) is always a -32700 or -32600; never a crash or a leak. The
 * wiki does not exist, so tool calls end in tool errors. */
#include "dream/error.h"
#include "dream/mcp.h"

#include <stdint.h>
#include <string.h>

static void check_response(const json_t *r)
{
    if (!json_is_object(r)) __builtin_trap();
    if (!json_is_string(json_object_get(r, "jsonrpc")) || strcmp(json_string_value(json_object_get(r, "jsonrpc")), "2.0")) __builtin_trap();
    if (!json_object_get(r, "id")) __builtin_trap();
    json_t *res = json_object_get(r, "result"), *err = json_object_get(r, "error");
    if (!res == !err) __builtin_trap();
    if (err && (!json_is_integer(json_object_get(err, "code")) || !json_is_string(json_object_get(err, "message")))) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int stateless = 0; stateless < 2; stateless++) {
        struct dream_mcp_params p;
        dream_mcp_default_params(&p);
        p.wiki = "/nonexistent/dream-fuzz-wiki";
        p.store = "";
        p.stateless = stateless;
        dream_mcp *m = dream_mcp_new(&p);
        if (!m) return 0;
        json_t *reply = NULL;
        int rc = dream_mcp_handle(m, (const char *)data, size, &reply);
        if (rc != 0 && rc != DREAM_EFORMAT && rc != DREAM_ENOMEM) __builtin_trap();
        if (rc == DREAM_EFORMAT) {
            int code = (int)json_integer_value(json_object_get(json_object_get(reply, "error"), "code"));
            if (code != DREAM_MCP_PARSE_ERROR && code != DREAM_MCP_INVALID_REQUEST) __builtin_trap();
        }
        if (json_is_array(reply)) {
            size_t i;
            json_t *one;
            if (json_array_size(reply) == 0) __builtin_trap();
            json_array_foreach(reply, i, one) check_response(one);
        } else if (reply) {
            check_response(reply);
        }
        json_decref(reply);
        dream_mcp_free(m);
    }
    return 0;
}
