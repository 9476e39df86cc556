/* cmd_serve.c — `dream serve`: the OpenAI-compatible HTTP server on the one local model. */
#include "cli.h"

#include "dream/error.h"
#include "dream/model.h"
#include "dream/serve.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_serve_summary[] = "serve the model over an OpenAI-compatible HTTP API";

static void usage(FILE *f)
{
    fprintf(f, "usage: dream serve [--model PATH] [--host ADDR] [--port N] [--parallel N] [--ctx N]\n"
               "                   [--max-tokens N] [--max-body BYTES] [--max-connections N] [--idle-timeout S]\n"
               "                   [--store PATH] [--wiki DIR] [--allow-host NAME]... [--cors ORIGIN]...\n\n"
               "Serves POST /v1/chat/completions (streaming or not) and GET /v1/models. Requests\n"
               "share the one model and are decoded together by the batching scheduler.\n"
               "GET /v1/memory/<tool>?...: the read tools (resolve, read, section, links, infobox,\n"
               "list, category, search, status) on the wiki, as `dream <verb> --json`, with the verb's\n"
               "options as query parameters (e.g. /v1/memory/list?category=Hobbies&limit=10).\n"
               "POST /v1/memory/dream: runs the pipeline (as `dream run`; body e.g. {\"stage\":\"segment\",\n"
               "\"limit\":10,\"dry_run\":true}) with its progress as server-sent events, under the same\n"
               "run lock (409 while another run works on the store).\n"
               "POST /mcp: the read tools over the Model Context Protocol (as `dream mcp`, streamable HTTP).\n"
               "Web pages: a request whose Host is not localhost, 127.0.0.1, [::1], the --host address or an\n"
               "--allow-host name is refused (403), and so is one from a page of another origin unless --cors\n"
               "names it; a POST body must be sent as Content-Type: application/json (else 415).\n"
               "Stops on SIGINT or SIGTERM.\n\n"
               "  --model PATH          " CLI_MODEL_HELP "\n"
               "  --host ADDR           IPv4 address to listen on (default 127.0.0.1); any address that is\n"
               "                        not loopback needs DREAM_API_KEY, which clients send as a bearer token\n"
               "  --port N              TCP port (default 8080; 0 picks a free one and prints it)\n"
               "  --parallel N          sequences decoded together (default 16)\n"
               "  --ctx N               context cells per sequence (default DREAM_CTX, else 8192)\n"
               "  --max-tokens N        the most a request may ask for, and the default (default 4096)\n"
               "  --max-body BYTES      the largest request body (default 1048576)\n"
               "  --max-connections N   concurrent connections (default 64)\n"
               "  --idle-timeout S      close a connection silent for S seconds before its request is whole or\n"
               "                        between requests (default DREAM_IDLE_TIMEOUT, else 30; 0: never); an\n"
               "                        answer being made or streamed is never cut\n"
               "  --threads N           CPU threads (default DREAM_THREADS, else all cores)\n"
               "  --store PATH          the store (default $DREAM_HOME/memory.sqlite, else ~/.local/share/dream/...)\n"
               "  --wiki DIR            the wiki (default DREAM_WIKI, else $DREAM_HOME/wiki, else ~/.local/share/dream/wiki)\n"
               "  --allow-host NAME     one more name clients may reach the server by (the Host header; any port);\n"
               "                        repeatable (default DREAM_ALLOW_HOSTS, names separated by commas)\n"
               "  --cors ORIGIN         let the pages of ORIGIN (scheme://host[:port], e.g. http://localhost:5173)\n"
               "                        call the server: answered with Access-Control-Allow-Origin; repeatable\n"
               "                        (default DREAM_CORS, origins separated by commas)\n");
}

/* Appends value to list, a comma-separated list in a buffer of cap bytes; false when it does
 * not fit. */
static bool list_add(char *list, size_t cap, const char *value)
{
    size_t had = strlen(list);
    return (size_t)snprintf(list + had, cap - had, "%s%s", had ? "," : "", value) < cap - had;
}

int cmd_serve(int argc, char **argv)
{
    struct dream_serve_params p;
    dream_serve_default_params(&p);
    struct dream_seam_config cfg;
    dream_seam_default_config(&cfg);
    long port = p.port, parallel = 16, ctx = 0, max_tokens = p.max_tokens, max_body = (long)p.max_body, max_conn = p.max_connections,
         threads = 0, idle = (long)p.idle_timeout;
    struct {
        const char *name;
        long min, max, *val;
    } nums[] = {{"--port", 0, 65535, &port},
                {"--parallel", 1, 128, &parallel},
                {"--ctx", 256, 1 << 20, &ctx},
                {"--max-tokens", 1, DREAM_MAX_OUTPUT_TOKENS, &max_tokens},
                {"--max-body", 64, 1L << 30, &max_body},
                {"--max-connections", 1, 100000, &max_conn},
                {"--idle-timeout", 0, 86400, &idle},
                {"--threads", 1, 1024, &threads}};
    char hosts[4096] = "", origins[4096] = ""; /* --allow-host and --cors add up, and replace the environment's */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = cli_option_value(argc, argv, i);
        if (cli_wants_help(a)) {
            usage(stdout);
            return 0;
        }
        char *list = !strcmp(a, "--allow-host") ? hosts : !strcmp(a, "--cors") ? origins : NULL;
        if (list && (!v || !*v)) {
            fprintf(stderr, "dream serve: %s needs a value\n", a);
            return 2;
        }
        if (list && !list_add(list, sizeof hosts, argv[++i])) {
            fprintf(stderr, "dream serve: more %s values than fit in %zu bytes\n", a, sizeof hosts);
            return 2;
        }
        if (list) continue;
        const char **str = !v                         ? NULL
                           : !strcmp(a, "--model") ? &cfg.model_path
                           : !strcmp(a, "--host")  ? &p.host
                           : !strcmp(a, "--store") ? &p.store_path
                           : !strcmp(a, "--wiki")  ? &p.wiki_dir
                                                   : NULL;
        if (str) {
            *str = argv[++i];
            continue;
        }
        size_t k = 0;
        while (k < sizeof nums / sizeof nums[0] && strcmp(a, nums[k].name)) k++;
        if (k == sizeof nums / sizeof nums[0]) {
            fprintf(stderr, "dream serve: unknown option or missing value '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (!cli_parse_int("serve", a, v, nums[k].min, nums[k].max, nums[k].val)) return 2;
        i++;
    }
    if (hosts[0]) p.allow_hosts = hosts;
    if (origins[0]) p.cors_origins = origins;
    cfg.width = (int)parallel;
    if (ctx) cfg.n_ctx = (int)ctx;
    if (threads) cfg.n_threads = (int)threads;
    p.port = (int)port;
    p.max_tokens = (int)max_tokens;
    p.max_body = (size_t)max_body;
    p.max_connections = (int)max_conn;
    p.idle_timeout = (unsigned)idle;

    /* Signals are taken by sigwait here, so every thread the server starts blocks them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    int rc = dream_seam_configure(&cfg);
    dream_server *srv = NULL;
    if (!rc) rc = dream_server_start(&p, &srv);
    if (rc) {
        dream_seam_shutdown();
        return cli_fail("serve", rc);
    }
    fprintf(stderr, "dream serve: listening on http://%s:%d (model %s, %ld parallel%s)\n", p.host, dream_server_port(srv),
            cfg.model_path ? cfg.model_path : "from DREAM_MODEL or the cache", parallel, p.api_key ? ", API key required" : "");
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "dream serve: %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
    dream_server_stop(srv);
    dream_seam_shutdown();
    return 0;
}
