/*
 * serve.h — `dream serve`: the model and the memory over HTTP.
 *
 * An OpenAI-compatible server on libmicrohttpd: POST /v1/chat/completions (streaming by
 * server-sent events or not) and GET /v1/models. Every request shares the seam's one model; a
 * single worker thread owns the scheduler and batches the requests waiting at each round
 * together. Errors use OpenAI's shape {"error":{"message","type","param","code"}}.
 *
 * GET /v1/memory/<tool> answers with the read tools of dream/read.h (resolve, read, section,
 * links, infobox, list, category, search, status) on the default wiki (DREAM_WIKI, DREAM_HOME,
 * ...): the same JSON as the CLI verbs' --json, with the verb's options as query parameters
 * (dream_read_tool_args names them; the README lists them); 404 for an unknown article with its
 * near candidates, 400 for a bad argument or tool, or a parameter the tool does not take.
 *
 * POST /v1/memory/dream runs the Dreaming (dream/pipeline.h) on the server's store and wiki,
 * under the run lock `dream run` takes (409 while another run holds it), with its progress as
 * server-sent events (start, progress, stage, then done or error); see src/serve/dream.c.
 *
 * Web pages are kept out (src/serve/guard.c): a Host other than localhost, 127.0.0.1, [::1], the
 * bound address or an allow_hosts name is a 403 (DNS rebinding); so is an Origin other than the
 * server's own or a cors_origins one (those are answered with Access-Control-Allow-Origin and
 * Vary: Origin, and their OPTIONS preflights with 204); a POST body that is not
 * application/json is a 415; a 405 names the path's methods in Allow.
 */
#ifndef DREAM_SERVE_H
#define DREAM_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dream_serve_params {
    const char *host;      /* IPv4 address or "localhost" (default 127.0.0.1) */
    int port;              /* default 8080; 0 picks a free port (dream_server_port says which) */
    const char *api_key;   /* bearer token every request must carry; NULL = none. A bind that
                              is not loopback needs one (default: $DREAM_API_KEY) */
    size_t max_body;       /* request body limit in bytes (default 1 MiB); more is a 413 */
    int max_tokens;        /* the largest max_tokens a request may ask for (default 4096);
                              also the default when a request gives none */
    int max_connections;   /* concurrent connections (default 64); more are refused */
    unsigned idle_timeout; /* seconds a connection may stay silent before its request is whole
                              (and between a keep-alive connection's requests) before it is
                              closed, so that idle clients cannot hold every slot (default 30,
                              or $DREAM_IDLE_TIMEOUT; 0: never). An answer being made or streamed
                              is never cut by it, however long the model takes */
    const char *store_path; /* the store (default: dream_paths_store()) */
    const char *wiki_dir;   /* the wiki (default: dream_paths_wiki_dir(); the pipeline's writing
                               stages only when it has been set up) */
    const char *allow_hosts; /* names a request's Host may give besides localhost, 127.0.0.1,
                                [::1] and the bound address, separated by commas or spaces
                                (default: $DREAM_ALLOW_HOSTS); any other Host is a 403 */
    const char *cors_origins; /* web origins (scheme://host[:port]) whose pages may call the
                                 server, as for allow_hosts (default: $DREAM_CORS); a request
                                 from any other page (its Origin header) is a 403 */
};
void dream_serve_default_params(struct dream_serve_params *params);

typedef struct dream_server dream_server;

/* Checks the parameters (a non-loopback host without an API key is refused), loads the model
 * and starts listening. */
int dream_server_start(const struct dream_serve_params *params, dream_server **out);
int dream_server_port(const dream_server *server);
/* Stops listening, ends the streams in flight, and frees the server. */
void dream_server_stop(dream_server *server);

#ifdef __cplusplus
}
#endif
#endif
