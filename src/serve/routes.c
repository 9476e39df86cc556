/* routes.c — the server's tables (see serve_internal.h): one row per endpoint, and one per
 * service that starts and stops with the server. The only file that names both the core's
 * tables and the handlers. */
#include "serve_handlers.h"

#include <stddef.h>

const struct serve_route serve_routes[] = {
    {"POST", "/v1/chat/completions", serve_chat_completions},
    {"GET", "/v1/models", serve_models},
    {"POST", "/v1/memory/dream", serve_dream_run},
    {"POST", "/v1/memory/ask", serve_ask},
    {"GET", "/v1/memory/", serve_memory},
    {"POST", "/mcp", serve_mcp},
    {NULL, NULL, NULL},
};

/* In this order: the chat worker stops first, ending every stream waiting on it; then a running
 * pipeline finishes its stage and its stream ends. */
const struct serve_service serve_services[] = {
    {"chat", serve_chat_start, serve_chat_stop, serve_chat_free},
    {"dream", serve_dream_start, serve_dream_stop, serve_dream_free},
    {NULL, NULL, NULL, NULL},
};
