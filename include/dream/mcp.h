/*
 * mcp.h — the memory's read tools for agents over the Model Context Protocol (issue 14): JSON-RPC
 * 2.0 messages in, JSON-RPC messages out. `dream mcp` speaks it over stdio (one message a line);
 * `dream serve` over streamable HTTP at POST /mcp (src/serve/mcp_http.c).
 *
 * The part src/mcp/ (docs/ARCHITECTURE.md): mcp.c (the JSON-RPC methods and the tool table) and
 * mcp_stdio.c (the stdio loop). It may include read and util; serve and the CLI use it.
 *
 * Methods: initialize (version negotiation: the client's protocol version when it is one of
 * DREAM_MCP_VERSIONS, else the latest), ping, tools/list, tools/call; notifications
 * (notifications/initialized, notifications/cancelled, ...) get no answer. The tools are the read
 * tools of dream/read.h (resolve, read, section, links, infobox, list, category, search, status)
 * with small JSON Schemas for their arguments; a call's result is the read tool's JSON object as
 * one text content item, within the read budgets. A tool that finds nothing, or arguments that do
 * not fit the schema, give a result with isError true carrying the read tool's error object (its
 * near "candidates" included); only a malformed message, an unknown method or tool, or malformed
 * params are JSON-RPC errors (-32700, -32600, -32601, -32602).
 */
#ifndef DREAM_MCP_H
#define DREAM_MCP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The protocol versions spoken, newest first (initialize answers the first when the client's
 * is not among them). */
#define DREAM_MCP_LATEST_VERSION "2025-11-25"
#define DREAM_MCP_VERSIONS {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL}

/* The largest message the stdio loop reads (a longer line is answered -32600 and skipped). */
#define DREAM_MCP_MAX_MESSAGE (1 << 20)

/* JSON-RPC 2.0 error codes. */
enum dream_mcp_code {
    DREAM_MCP_PARSE_ERROR = -32700,
    DREAM_MCP_INVALID_REQUEST = -32600,
    DREAM_MCP_METHOD_NOT_FOUND = -32601,
    DREAM_MCP_INVALID_PARAMS = -32602,
    DREAM_MCP_INTERNAL_ERROR = -32603,
};

struct dream_mcp_params {
    const char *wiki;  /* the vault; NULL: the default (dream_reader_params) */
    const char *store; /* the store; NULL: the default; "": none */
    bool stateless;    /* true (HTTP): every request stands alone; false (stdio): requests other
                          than initialize and ping are refused until initialize has been answered */
};

void dream_mcp_default_params(struct dream_mcp_params *p);

typedef struct dream_mcp dream_mcp;

/* A session (the strings in p are copied). NULL on allocation failure. Free with dream_mcp_free. */
dream_mcp *dream_mcp_new(const struct dream_mcp_params *p);
void dream_mcp_free(dream_mcp *m);

/* Handles one JSON-RPC message (or batch) of len bytes. Returns 0 and sets *reply to the answer
 * (the caller json_decref()s it), or to NULL when nothing is to be answered (notifications,
 * responses). Returns DREAM_EFORMAT, *reply still set to the error response, when the message as
 * a whole was not JSON (-32700) or not a JSON-RPC message (-32600), so HTTP can answer 400;
 * DREAM_ENOMEM with *reply NULL when memory ran out. */
int dream_mcp_handle(dream_mcp *m, const char *msg, size_t len, json_t **reply);

/* Whether version is one of DREAM_MCP_VERSIONS (HTTP checks the MCP-Protocol-Version header). */
bool dream_mcp_version_supported(const char *version);

/* The stdio transport: reads newline-delimited messages from in until EOF, writes each answer as
 * one line of compact JSON to out (flushed). Blank lines are skipped. 0 at EOF, DREAM_EIO when
 * writing fails, DREAM_ENOMEM. */
int dream_mcp_stdio(dream_mcp *m, FILE *in, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
