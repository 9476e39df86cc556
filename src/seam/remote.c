/* remote.c — the remote backend: stage calls as OpenAI-compatible chat completions over HTTP
 * (libcurl multi), so a large corpus can be dreamed on a fleet of model servers.
 *
 * A batch of n calls becomes n requests with at most max_parallel in flight; out[i] answers
 * in[i] whatever order they finish in. A transient failure (no connection, a timeout, a dropped
 * connection, HTTP 429 or 5xx) is retried after backoff_ms, doubled per attempt, up to
 * max_retries times; anything else fails that call alone. Temperature is always 0. A call's
 * answer grammar goes in the request field the server reads (llama-server's `grammar`, vLLM's
 * `guided_grammar`), so the server decodes under the same constraint as the embedded engine. */
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
    int max_parallel, max_retries, backoff_ms;
    long timeout_s;
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

struct transfer {
    size_t index;
    char *body;
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

/* The request's JSON, or NULL with the error set: a turn that is not valid UTF-8 (JSON cannot
 * carry it) fails the call instead of being left out of the request. */
static char *request_body(const struct remote *r, const char *system, const char *user, const char *grammar, int max_tokens)
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
    if (req && grammar && r->grammar_field && json_object_set_new(req, r->grammar_field, json_string(grammar))) {
        json_decref(req);
        dream_error_set(DREAM_EFORMAT, "the answer grammar is not valid UTF-8 (or memory ran out)");
        return NULL;
    }
    char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!s) dream_error_set(DREAM_ENOMEM, "out of memory");
    return s;
}

static int start(CURLM *multi, const struct remote *r, struct transfer *t)
{
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

/* The answer text of a chat completion reply; an error names what the server said. */
static int parse_reply(const struct remote *r, const struct transfer *t, long http, char **out)
{
    json_error_t je;
    json_t *root = json_loadb(t->reply.data ? t->reply.data : "", t->reply.len, 0, &je);
    json_t *msg = json_object_get(json_object_get(root, "error"), "message");
    int rc = 0;
    if (http != 200)
        rc = dream_error_set(DREAM_EIO, "%s answered HTTP %ld: %s", r->endpoint, http,
                             json_is_string(msg) ? json_string_value(msg) : "(no error message)");
    else {
        json_t *content = json_object_get(json_object_get(json_array_get(json_object_get(root, "choices"), 0), "message"), "content");
        if (!json_is_string(content))
            rc = dream_error_set(DREAM_EFORMAT, "%s answered 200 without choices[0].message.content (%s)", r->endpoint,
                                 root ? "a JSON object of another shape" : je.text);
        else if (!(*out = strdup(json_string_value(content)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    json_decref(root);
    return rc;
}

static int remote_call(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *o, char **out)
{
    struct remote *r = ud;
    const char *dflt = dream_stage_default_system(stage);
    struct transfer *ts = calloc(n ? n : 1, sizeof *ts);
    CURLM *multi = curl_multi_init();
    int first_err = 0;
    if (!ts || !multi) first_err = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !first_err; i++) {
        out[i] = NULL;
        ts[i].index = i;
        ts[i].body = request_body(r, in[i].system ? in[i].system : dflt, in[i].user, in[i].grammar ? in[i].grammar : o->grammar, o->max_tokens);
        if (!ts[i].body) first_err = dream_error_wrap(dream_error_code(), "stage '%s', input %zu", stage, i);
    }
    size_t left = first_err ? 0 : n;
    size_t next = 0; /* calls before next have started at least once */
    int running = 0;
    while (left > 0) {
        long now = now_ms();
        /* retries first (they are older), then new calls, up to max_parallel in flight */
        for (size_t i = 0; i < next && running < r->max_parallel; i++)
            if (!ts[i].running && !ts[i].finished && ts[i].not_before <= now) {
                if (start(multi, r, &ts[i])) goto fatal;
                running++;
            }
        while (next < n && running < r->max_parallel) {
            if (start(multi, r, &ts[next++])) goto fatal;
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
            t->finished = true;
            left--;
            int e;
            if (cc != CURLE_OK)
                e = dream_error_set(DREAM_EIO, "stage '%s' call %zu to %s failed after %d attempts: %s", stage, t->index, r->endpoint,
                                    t->attempts, curl_easy_strerror(cc));
            else e = parse_reply(r, t, http, &out[t->index]);
            if (e && !first_err) first_err = dream_error_wrap(e, "stage '%s', input %zu", stage, t->index);
            seam_call_done(t->index);
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
    if (!*field || !strcmp(field, "none")) field = NULL;
    if (field) r->grammar_field = strdup(field);
    r->max_parallel = p.max_parallel > 0 ? p.max_parallel : 8;
    r->max_retries = p.max_retries >= 0 ? p.max_retries : 5;
    r->backoff_ms = p.backoff_ms > 0 ? p.backoff_ms : 200;
    r->timeout_s = p.timeout_s > 0 ? p.timeout_s : 600;
    if (!r->endpoint || !r->model || (p.api_key && !r->auth) || (field && !r->grammar_field)) {
        remote_destroy(r);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    struct dream_backend b = {.name = "remote", .call = remote_call, .destroy = remote_destroy, .ud = r};
    return dream_seam_set_backend(&b);
}
