/* routes.c — the server's endpoints: one row per route (see serve_internal.h). */
#include "serve_internal.h"

#include <stddef.h>

const struct serve_route serve_routes[] = {
    {"POST", "/v1/chat/completions", serve_chat_completions},
    {"GET", "/v1/models", serve_models},
    {"POST", "/v1/memory/dream", serve_dream_run},
    {"GET", "/v1/memory/", serve_memory},
    {NULL, NULL, NULL},
};
