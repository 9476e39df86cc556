/* mcp_stdio.c — MCP's stdio transport (see dream/mcp.h): one JSON-RPC message a line in, one
 * answer a line out. A message is never split across lines because jansson's compact output
 * escapes every newline inside strings. */
#include "dream/mcp.h"

#include "dream/error.h"

#include <stdlib.h>
#include <string.h>

/* Writes one answer as a line and flushes: 0, or DREAM_EIO / DREAM_ENOMEM. Takes reply. */
static int mcp_stdio_write(FILE *out, json_t *reply)
{
    char *text = json_dumps(reply, JSON_COMPACT);
    json_decref(reply);
    if (!text) return dream_error_set(DREAM_ENOMEM, "out of memory writing an MCP answer");
    int bad = fputs(text, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF;
    free(text);
    return bad ? dream_error_set(DREAM_EIO, "writing an MCP answer to stdout failed (the client closed it?)") : 0;
}

int dream_mcp_stdio(dream_mcp *m, FILE *in, FILE *out)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (!rc && (n = getline(&line, &cap, in)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
        size_t skip = strspn(line, " \t");
        if ((size_t)n <= skip) continue;
        json_t *reply = NULL;
        if (n > DREAM_MCP_MAX_MESSAGE) {
            reply = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", DREAM_MCP_INVALID_REQUEST, "message",
                              "the message is over 1 MiB, the most this server reads");
            if (!reply) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        } else if (dream_mcp_handle(m, line, (size_t)n, &reply) == DREAM_ENOMEM) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory handling an MCP message");
        }
        if (reply) rc = mcp_stdio_write(out, reply);
    }
    free(line);
    return rc;
}
