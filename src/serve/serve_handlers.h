/* serve_handlers.h — the server's handlers: the endpoints routes.c lists and the services whose
 * start, stop and free it hands to the core. Each handler file includes this header; the core
 * (server.c) does not. */
#ifndef DREAM_SERVE_HANDLERS_H
#define DREAM_SERVE_HANDLERS_H

#include "serve_internal.h"

#include "dream/pipeline.h"

#include <stdbool.h>
#include <stddef.h>

/* chat.c */
int serve_chat_start(struct dream_server *s);
void serve_chat_stop(struct dream_server *s);
void serve_chat_free(struct dream_server *s);
enum MHD_Result serve_chat_completions(struct serve_request *rq);
enum MHD_Result serve_models(struct serve_request *rq);

/* memory.c: GET /v1/memory/<tool>, the read tools (dream/read.h) */
enum MHD_Result serve_memory(struct serve_request *rq);
/* Opens a reader on the server's wiki and store into *r (the caller closes it; wiki_optional:
 * a wiki not yet created is no error, for status); on failure
 * replies (404 when there is no wiki, else 500) into *reply and returns false. */
struct dream_reader;
bool serve_reader_open(struct serve_request *rq, bool wiki_optional, struct dream_reader **r, enum MHD_Result *reply);

/* ask.c: POST /v1/memory/ask. */
enum MHD_Result serve_ask(struct serve_request *rq);

/* mcp_http.c: POST /mcp, the read tools over the Model Context Protocol (dream/mcp.h) */
enum MHD_Result serve_mcp(struct serve_request *rq);

/* dream.c: POST /v1/memory/dream, the pipeline with its progress as server-sent events */
int serve_dream_start(struct dream_server *s);
void serve_dream_stop(struct dream_server *s);
void serve_dream_free(struct dream_server *s);
enum MHD_Result serve_dream_run(struct serve_request *rq);
/* The endpoint's body (the fuzzer's entry): 0 with out filled (free it with
 * serve_dream_body_free), or -1 with the 400's message in err and nothing to free. */
struct serve_dream_body {
    struct dream_pipeline_params p; /* p.stage and p.conversation point at the strings below */
    char *stage, *conversation;
    bool stream;
};
int serve_dream_parse(const char *body, size_t len, struct serve_dream_body *out, char *err, size_t errlen);
void serve_dream_body_free(struct serve_dream_body *b);

/* Parses and checks a chat completion request body as the endpoint does (the fuzzer's entry):
 * 0, or -1 with the 400's message in err. */
int serve_chat_check(const struct dream_serve_params *p, const char *body, size_t len, char *err, size_t errlen);

#endif
