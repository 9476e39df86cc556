/* remote.c — the remote backend: stage calls as OpenAI-compatible chat completions over HTTP
 * (libcurl multi), so a large corpus can be dreamed on a fleet of model servers.
 *
 * A batch of n calls becomes n requests with at most max_parallel in flight; out[i] answers
 * in[i] whatever order they finish in. A transient failure (no connection, a timeout, a dropped
 * connection, HTTP 429 or 5xx) is retried after backoff_ms, doubled per attempt, up to
 * max_retries times; anything else fails that call alone. Temperature is always 0. A call's
 * answer grammar goes in the request field the server reads (llama-server's `grammar`, vLLM's
 * `guided_grammar`), so the server decodes under the same constraint as the embedded engine;
 * an answer that is JSON goes as its JSON schema in `response_format` instead, which OpenAI's
 * API, vLLM, llama-server and Ollama all read. A server that refuses response_format (an HTTP
 * 400 that the same request without it does not get) is sent the grammar for the rest of the
 * run, after one warning. */
#include "seam_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/buf.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct remote {
    char *endpoint; /* .../v1/chat/completions */
    char *auth;     /* "Authorization: Bearer ..." or NULL */
    char *model;
    char *grammar_field; /* NULL: answer grammars are not sent */
    bool schemas;        /* answers' JSON schemas go as response_format */
    bool schema_refused; /* learned in this run: the server takes no response_format */
    int max_parallel, max_retries, backoff_ms;
    long timeout_s;
    bool silent; /* replay's fetch of gold answers: the engine reports the calls done, not this */
};

void dream_remote_default_params(struct dream_remote_params *p)
{
    const char *key = getenv("DREAM_BACKEND_KEY"), *model = getenv("DREAM_BACKEND_MODEL"), *grammar = getenv("DREAM_BACKEND_GRAMMAR");
    *p = (struct dream_remote_params){
        .url = getenv("DREAM_BACKEND"),
        .api_key = key && *key ? key : NULL,
        .model = model && *model ? model : "dream",
        .max_parallel = 8,
        .max_retries = 5,
        .backoff_ms = 200,
        .timeout_s = 600,
        .grammar_field = grammar && *grammar ? grammar : "grammar",
    };
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* What every request of one call shares. */
struct call_ctx {
    const char *stage, *dflt_system;
    const struct dream_call_opts *opts;
};

struct transfer {
    size_t index;
    const struct dream_local_input *in;
    char *body;
    bool with_schema;    /* body carries response_format */
    bool schema_dropped; /* it got a 400 with it: sent once more without */
    char *schema_error;  /* what the server said to the request with it */
    CURL *easy;
    struct curl_slist *headers;
    struct dbuf reply;
    int attempts;
    long not_before; /* ms: when a retry may start */
    bool running, finished;
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    struct transfer *t = ud;
    return dbuf_append(&t->reply, p, size * n) ? 0 : size * n;
}

/* The request's response_format for an answer of this JSON schema (an object's text). */
static json_t *response_format(const char *stage, const char *schema)
{
    json_t *obj = json_loads(schema, 0, NULL);
    if (!json_is_object(obj)) {
        json_decref(obj);
        dream_error_set(DREAM_EINVAL, "stage '%s': the answer's JSON schema is not a JSON object", stage);
        return NULL;
    }
    json_t *rf = json_pack("{s:s, s:{s:s, s:b, s:o}}", "type", "json_schema", "json_schema", "name", stage, "strict", 1, "schema", obj);
    if (!rf) dream_error_set(DREAM_ENOMEM, "out of memory");
    return rf;
}

/* The request's JSON, or NULL with the error set: a turn that is not valid UTF-8 (JSON cannot
 * carry it) fails the call instead of being left out of the request. With a schema (NULL:
 * none) response_format carries it and the grammar is left out: a server that reads both
 * (llama-server) refuses a request that has both. */
static char *request_body(const struct remote *r, const char *stage, const char *system, const char *user, const char *grammar,
                          const char *schema, int max_tokens)
{
    json_t *msgs = json_array(), *sys = NULL, *usr = json_pack("{s:s, s:s}", "role", "user", "content", user);
    if (system) sys = json_pack("{s:s, s:s}", "role", "system", "content", system);
    if (!msgs || !usr || (system && !sys)) {
        json_decref(msgs);
        json_decref(usr);
        json_decref(sys);
        dream_error_set(DREAM_EFORMAT, "the %s turn of the request is not valid UTF-8 (or memory ran out)", usr ? "system" : "user");
        return NULL;
    }
    if (sys) json_array_append_new(msgs, sys);
    json_array_append_new(msgs, usr);
    json_t *req = json_pack("{s:s, s:o, s:f, s:i, s:b}", "model", r->model, "messages", msgs, "temperature", 0.0, "max_tokens", max_tokens,
                            "stream", 0);
    if (req && schema) {
        json_t *rf = response_format(stage, schema);
        if (!rf || json_object_set_new(req, "response_format", rf)) {
            json_decref(req);
            return NULL;
        }
    } else if (req && grammar && r->grammar_field && json_object_set_new(req, r->grammar_field, json_string(grammar))) {
        json_decref(req);
        dream_error_set(DREAM_EFORMAT, "the answer grammar is not valid UTF-8 (or memory ran out)");
        return NULL;
    }
    char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!s) dream_error_set(DREAM_ENOMEM, "out of memory");
    return s;
}

/* (Re)builds t's request: with its input's JSON schema unless the server has refused those. */
static int transfer_body(const struct remote *r, const struct call_ctx *x, struct transfer *t)
{
    const struct dream_local_input *in = t->in;
    const char *schema = r->schemas && !r->schema_refused && !t->schema_dropped ? in->json_schema : NULL;
    free(t->body);
    t->body = request_body(r, x->stage, in->system ? in->system : x->dflt_system, in->user, in->grammar ? in->grammar : x->opts->grammar,
                           schema, x->opts->max_tokens);
    t->with_schema = schema != NULL;
    return t->body ? 0 : dream_error_wrap(dream_error_code(), "stage '%s', input %zu", x->stage, t->index);
}

static int start(CURLM *multi, const struct remote *r, const struct call_ctx *x, struct transfer *t)
{
    if (t->with_schema && (r->schema_refused || t->schema_dropped) && transfer_body(r, x, t)) return dream_error_code();
    dbuf_reset(&t->reply);
    if (!t->easy && !(t->easy = curl_easy_init())) return dream_error_set(DREAM_ENOMEM, "curl_easy_init failed");
    curl_easy_reset(t->easy);
    if (!t->headers) {
        t->headers = curl_slist_append(NULL, "Content-Type: application/json");
        if (r->auth) t->headers = curl_slist_append(t->headers, r->auth);
    }
    curl_easy_setopt(t->easy, CURLOPT_URL, r->endpoint);
    curl_easy_setopt(t->easy, CURLOPT_HTTPHEADER, t->headers);
    curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, t->body);
    curl_easy_setopt(t->easy, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(t->easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(t->easy, CURLOPT_TIMEOUT, r->timeout_s);
    curl_easy_setopt(t->easy, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(t->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(t->easy, CURLOPT_PRIVATE, t);
    t->attempts++;
    t->running = true;
    return curl_multi_add_handle(multi, t->easy) == CURLM_OK ? 0 : dream_error_set(DREAM_EIO, "curl_multi_add_handle failed");
}

static bool transient(CURLcode cc, long http)
{
    if (cc == CURLE_OK) return http == 429 || http >= 500;
    return cc == CURLE_COULDNT_CONNECT || cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
           cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE || cc == CURLE_COULDNT_RESOLVE_HOST;
}

/* What the server said in its error reply (malloc'd; NULL when out of memory). */
static char *reply_error(const struct transfer *t)
{
    json_t *root = json_loadb(t->reply.data ? t->reply.data : "", t->reply.len, 0, NULL);
    json_t *msg = json_object_get(json_object_get(root, "error"), "message");
    char *s = strdup(json_is_string(msg) ? json_string_value(msg) : "(no error message)");
    json_decref(root);
    return s;
}

/* The answer text of a chat completion reply; an error names what the server said. */
static int parse_reply(const struct remote *r, const struct transfer *t, long http, char **out)
{
    if (http != 200) {
        char *msg = reply_error(t);
        int rc = dream_error_set(DREAM_EIO, "%s answered HTTP %ld: %s", r->endpoint, http, msg ? msg : "(out of memory)");
        free(msg);
        return rc;
    }
    json_error_t je;
    json_t *root = json_loadb(t->reply.data ? t->reply.data : "", t->reply.len, 0, &je);
    int rc = 0;
    json_t *content = json_object_get(json_object_get(json_array_get(json_object_get(root, "choices"), 0), "message"), "content");
    if (!json_is_string(content))
        rc = dream_error_set(DREAM_EFORMAT, "%s answered 200 without choices[0].message.content (%s)", r->endpoint,
                             root ? "a JSON object of another shape" : je.text);
    else if (!(*out = strdup(json_string_value(content)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    json_decref(root);
    return rc;
}

/* A request that got a 400 with response_format and then a 200 without it: the server takes
 * no response_format, so none is sent for the rest of the run (said once). */
static void schema_refused(struct remote *r, const struct transfer *t)
{
    if (r->schema_refused) return;
    r->schema_refused = true;
    dream_log(DREAM_LOG_WARN,
              "%s answered HTTP 400 to a request with the answer's JSON schema in response_format (\"%s\") and 200 to the same "
              "request without it, so it does not take response_format: for the rest of this run the answers' grammars %s",
              r->endpoint, t->schema_error ? t->schema_error : "",
              r->grammar_field ? "go in place of their JSON schemas" : "are not sent either (DREAM_BACKEND_GRAMMAR is json_schema)");
}

static int remote_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *o, char **out)
{
    struct remote *r = ud;
    struct call_ctx x = {.stage = stage, .dflt_system = dream_stage_default_system(stage), .opts = o};
    struct transfer *ts = calloc(n ? n : 1, sizeof *ts);
    CURLM *multi = curl_multi_init();
    int first_err = 0;
    if (!ts || !multi) first_err = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !first_err; i++) {
        out[i] = NULL;
        ts[i].index = i;
        ts[i].in = &in[i];
        first_err = transfer_body(r, &x, &ts[i]);
    }
    size_t left = first_err ? 0 : n;
    size_t next = 0; /* calls before next have started at least once */
    int running = 0;
    while (left > 0) {
        long now = now_ms();
        /* retries first (they are older), then new calls, up to max_parallel in flight */
        for (size_t i = 0; i < next && running < r->max_parallel; i++)
            if (!ts[i].running && !ts[i].finished && ts[i].not_before <= now) {
                if (start(multi, r, &x, &ts[i])) goto fatal;
                running++;
            }
        while (next < n && running < r->max_parallel) {
            if (start(multi, r, &x, &ts[next++])) goto fatal;
            running++;
        }
        int still;
        curl_multi_perform(multi, &still);
        CURLMsg *m;
        int q;
        while ((m = curl_multi_info_read(multi, &q))) {
            if (m->msg != CURLMSG_DONE) continue;
            struct transfer *t;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&t);
            CURLcode cc = m->data.result;
            long http = 0;
            curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
            curl_multi_remove_handle(multi, t->easy);
            t->running = false;
            running--;
            if (transient(cc, http) && t->attempts <= r->max_retries) {
                long wait = (long)r->backoff_ms << (t->attempts - 1 < 16 ? t->attempts - 1 : 16);
                dream_log(DREAM_LOG_INFO, "remote: stage '%s' call %zu: %s; retry %d of %d in %ld ms", stage, t->index,
                          cc ? curl_easy_strerror(cc) : "HTTP error", t->attempts, r->max_retries, wait);
                t->not_before = now_ms() + wait;
                continue;
            }
            if (cc == CURLE_OK && http == 400 && t->with_schema && !t->schema_dropped) {
                /* perhaps the server does not take response_format: once more without it */
                t->schema_dropped = true;
                t->schema_error = reply_error(t);
                dream_log(DREAM_LOG_INFO, "remote: stage '%s' call %zu: HTTP 400 with response_format (%s); again without it", stage,
                          t->index, t->schema_error ? t->schema_error : "");
                t->not_before = 0;
                continue;
            }
            t->finished = true;
            left--;
            int e;
            if (cc != CURLE_OK)
                e = dream_error_set(DREAM_EIO, "stage '%s' call %zu to %s failed after %d attempts: %s", stage, t->index, r->endpoint,
                                    t->attempts, curl_easy_strerror(cc));
            else e = parse_reply(r, t, http, &out[t->index]);
            if (!e && t->schema_dropped) schema_refused(r, t);
            if (e && !first_err) first_err = dream_error_wrap(e, "stage '%s', input %zu", stage, t->index);
            if (!r->silent) seam_call_done(t->index);
        }
        if (left > 0) curl_multi_poll(multi, NULL, 0, 50, NULL);
    }
    goto done;
fatal:
    if (!first_err) first_err = dream_error_code() ? dream_error_code() : DREAM_EIO;
done:
    for (size_t i = 0; ts && i < n; i++) {
        if (ts[i].easy) {
            if (ts[i].running) curl_multi_remove_handle(multi, ts[i].easy);
            curl_easy_cleanup(ts[i].easy);
        }
        curl_slist_free_all(ts[i].headers);
        dbuf_free(&ts[i].reply);
        free(ts[i].body);
        free(ts[i].schema_error);
    }
    if (multi) curl_multi_cleanup(multi);
    free(ts);
    return first_err;
}

static void remote_destroy(void *ud)
{
    struct remote *r = ud;
    free(r->endpoint);
    free(r->auth);
    free(r->model);
    free(r->grammar_field);
    free(r);
}

int dream_seam_use_remote(const struct dream_remote_params *params)
{
    struct dream_backend b;
    int rc = seam_remote_new(params, false, &b);
    return rc ? rc : dream_seam_set_backend(&b);
}

int seam_remote_new(const struct dream_remote_params *params, bool silent, struct dream_backend *out)
{
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    if (params) p = *params;
    const char *url = p.url;
    if (!url || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
        return dream_error_set(DREAM_EINVAL, "the backend URL '%s' must start with http:// or https:// (e.g. http://127.0.0.1:8080)",
                               url ? url : "");
    static bool curl_ready;
    if (!curl_ready) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl_ready = true;
    }
    struct remote *r = calloc(1, sizeof *r);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t len = strlen(url);
    while (len && url[len - 1] == '/') len--;
    bool has_v1 = len >= 3 && !strncmp(url + len - 3, "/v1", 3);
    struct dbuf e = {0};
    dbuf_printf(&e, "%.*s%s/chat/completions", (int)len, url, has_v1 ? "" : "/v1");
    r->endpoint = dbuf_take(&e);
    if (p.api_key) {
        struct dbuf a = {0};
        dbuf_printf(&a, "Authorization: Bearer %s", p.api_key);
        r->auth = dbuf_take(&a);
    }
    r->model = strdup(p.model ? p.model : "dream");
    const char *field = p.grammar_field ? p.grammar_field : "grammar";
    r->schemas = strcmp(field, "none") != 0;
    if (!*field || !strcmp(field, "none") || !strcmp(field, "json_schema")) field = NULL;
    if (field) r->grammar_field = strdup(field);
    r->max_parallel = p.max_parallel > 0 ? p.max_parallel : 8;
    r->max_retries = p.max_retries >= 0 ? p.max_retries : 5;
    r->backoff_ms = p.backoff_ms > 0 ? p.backoff_ms : 200;
    r->timeout_s = p.timeout_s > 0 ? p.timeout_s : 600;
    if (!r->endpoint || !r->model || (p.api_key && !r->auth) || (field && !r->grammar_field)) {
        remote_destroy(r);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    r->silent = silent;
    *out = (struct dream_backend){.name = "remote", .call = remote_call, .destroy = remote_destroy, .ud = r};
    return 0;
}
