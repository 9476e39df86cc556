/* test_remote.c — the seam's remote backend.
 *
 * Against a scripted flaky server in this process (libmicrohttpd): transient failures (503,
 * 429, a dropped connection) are retried with backoff, a 400 fails that call alone, answers
 * keep their order although they finish out of order, and no more than max_parallel requests
 * are ever in flight. Against a real `dream serve` (its URL in argv[1], started by
 * test_remote.sh on the same model file, argv[2]): remote batch answers equal the embedded
 * engine's answers for the same inputs, also under answer grammars, which go to the server in the
 * request field it reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/model.h"

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *serve_url, *model_path;

/* ---- the scripted server ---- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int n_requests, in_flight, max_in_flight;
static char last_system[256];
static double last_temperature = -1;
static char last_grammar_field[64], last_grammar[512]; /* the request's grammar field, "" when none */
static char last_response_format[2048]; /* the request's response_format as JSON, "" when none */
static bool refuse_response_format;     /* answer 400 to a request that has one */

struct upload {
    char *data;
    size_t len;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *body)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result scripted(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                                const char *data, size_t *size, void **con_cls)
{
    struct upload *u = *con_cls;
    if (!u) {
        *con_cls = calloc(1, sizeof *u);
        return MHD_YES;
    }
    if (*size) {
        u->data = realloc(u->data, u->len + *size + 1);
        memcpy(u->data + u->len, data, *size);
        u->len += *size;
        u->data[u->len] = 0;
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&mu);
    int nth = ++n_requests;
    if (++in_flight > max_in_flight) max_in_flight = in_flight;
    pthread_mutex_unlock(&mu);
    json_t *req = json_loadb(u->data ? u->data : "", u->len, 0, NULL);
    json_t *msgs = json_object_get(req, "messages");
    const char *user = json_string_value(json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "content"));
    const char *sys = json_array_size(msgs) == 2 ? json_string_value(json_object_get(json_array_get(msgs, 0), "content")) : "";
    pthread_mutex_lock(&mu);
    snprintf(last_system, sizeof last_system, "%s", sys ? sys : "");
    last_temperature = json_number_value(json_object_get(req, "temperature"));
    last_grammar_field[0] = last_grammar[0] = last_response_format[0] = 0;
    json_t *rf = json_object_get(req, "response_format");
    char *rf_text = rf ? json_dumps(rf, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (rf_text) snprintf(last_response_format, sizeof last_response_format, "%s", rf_text);
    free(rf_text);
    bool refuse_rf = rf && refuse_response_format;
    static const char *const fields[] = {"grammar", "guided_grammar", "json_schema"};
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        json_t *g = json_object_get(req, fields[k]);
        if (!g) continue;
        snprintf(last_grammar_field, sizeof last_grammar_field, "%s", fields[k]);
        snprintf(last_grammar, sizeof last_grammar, "%s", json_is_string(g) ? json_string_value(g) : "(not a string)");
    }
    pthread_mutex_unlock(&mu);
    enum MHD_Result ok;
    /* later inputs answer sooner, so completion order is the reverse of input order */
    int idx = user && !strncmp(user, "input ", 6) ? atoi(user + 6) : 0;
    usleep((useconds_t)(20000 * (8 - idx % 8)));
    if (nth == 1) ok = reply(c, 503, "{\"error\":{\"message\":\"warming up\"}}");
    else if (nth == 2) ok = reply(c, 429, "{\"error\":{\"message\":\"slow down\"}}");
    else if (nth == 3) ok = MHD_NO; /* drops the connection */
    else if (user && !strcmp(user, "refuse me")) ok = reply(c, 400, "{\"error\":{\"message\":\"no such thing\"}}");
    else if (refuse_rf) ok = reply(c, 400, "{\"error\":{\"message\":\"unknown field: response_format\"}}");
    else {
        json_t *ans = json_pack("{s:[{s:{s:s, s:s+}}]}", "choices", "message", "role", "assistant", "content", "echo: ", user ? user : "");
        char *s = json_dumps(ans, 0);
        ok = reply(c, 200, s);
        free(s);
        json_decref(ans);
    }
    json_decref(req);
    pthread_mutex_lock(&mu);
    in_flight--;
    pthread_mutex_unlock(&mu);
    return ok;
}

static void done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode why)
{
    struct upload *u = *con_cls;
    if (u) free(u->data);
    free(u);
    *con_cls = NULL;
}

/* Starts the scripted server on a free loopback port; url gets its base URL. */
static struct MHD_Daemon *start_scripted(char *url, size_t cap)
{
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, scripted, NULL,
                                            MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
    assert_non_null(d);
    snprintf(url, cap, "http://127.0.0.1:%u/", MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
    return d;
}

static void test_remote_retries_transient_errors_keeps_order_and_bounds_concurrency(void **state)
{
    char url[128];
    struct MHD_Daemon *d = start_scripted(url, sizeof url);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = url;
    p.max_parallel = 3;
    p.backoff_ms = 10;
    assert_int_equal(dream_seam_use_remote(&p), 0);

    enum { N = 10 };
    struct dream_local_input in[N];
    char users[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(users[i], sizeof users[i], "input %d", i);
        in[i] = (struct dream_local_input){.user = users[i]};
    }
    char *out[N];
    assert_int_equal(dream_call_local_batch("entity", in, N, NULL, out), 0);
    for (int i = 0; i < N; i++) {
        char want[64];
        snprintf(want, sizeof want, "echo: input %d", i);
        assert_string_equal(out[i], want);
        free(out[i]);
    }
    assert_int_equal(n_requests, N + 3); /* three transient failures, each retried once */
    assert_true(max_in_flight <= 3);
    assert_true(max_in_flight >= 2); /* and it did run requests side by side */
    assert_string_equal(last_system, dream_stage_default_system("entity"));
    assert_true(last_temperature == 0.0);

    /* a 400 is not retried and fails only its own call */
    struct dream_local_input mixed[3] = {{.user = "input 1"}, {.user = "refuse me"}, {.user = "input 2"}};
    char *o3[3];
    int before = n_requests;
    int rc = dream_call_local_batch("route", mixed, 3, NULL, o3);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(dream_error_last(), "no such thing"));
    assert_int_equal(n_requests - before, 3);
    assert_string_equal(o3[0], "echo: input 1");
    assert_null(o3[1]);
    assert_string_equal(o3[2], "echo: input 2");
    free(o3[0]);
    free(o3[2]);

    /* nothing listening: retried, then a clear error naming the endpoint */
    MHD_stop_daemon(d);
    p.max_retries = 2;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    char *o1 = NULL;
    rc = dream_call_local("entity", &in[0], NULL, &o1);
    assert_int_not_equal(rc, 0);
    assert_null(o1);
    assert_non_null(strstr(dream_error_last(), "after 3 attempts"));
    assert_non_null(strstr(dream_error_last(), "/v1/chat/completions"));
    dream_seam_set_backend(NULL);
}

/* A turn that is not valid UTF-8 cannot be sent as JSON: the call fails naming it, and no
 * request goes out (it used to go out with the user turn left out). */
static void test_remote_fails_a_turn_that_is_not_utf8(void **state)
{
    char url[128];
    struct MHD_Daemon *d = start_scripted(url, sizeof url);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = url;
    p.backoff_ms = 10;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    pthread_mutex_lock(&mu);
    int before = n_requests;
    pthread_mutex_unlock(&mu);
    struct dream_local_input in = {.user = "a price cut inside a euro sign: 12 \xe2\x82"};
    char *out = NULL;
    assert_int_equal(dream_call_local("entity", &in, NULL, &out), DREAM_EFORMAT);
    assert_null(out);
    assert_non_null(strstr(dream_error_last(), "user turn"));
    assert_non_null(strstr(dream_error_last(), "UTF-8"));
    pthread_mutex_lock(&mu);
    assert_int_equal(n_requests, before);
    pthread_mutex_unlock(&mu);
    dream_seam_set_backend(NULL);
    MHD_stop_daemon(d);
}

/* A call's answer grammar goes in the field the server reads: `grammar` by default (llama-server,
 * dream serve), the configured one (vLLM's guided_grammar), or none at all. */
static void test_remote_sends_the_answer_grammar(void **state)
{
    char url[128];
    struct MHD_Daemon *d = start_scripted(url, sizeof url);
    pthread_mutex_lock(&mu);
    n_requests = 3; /* past the scripted transient failures */
    pthread_mutex_unlock(&mu);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = url;
    p.backoff_ms = 10;
    struct dream_local_input in[2] = {{.user = "input 0"}, {.user = "input 1", .grammar = dream_grammar_names}};
    struct dream_call_opts o = dream_call_default_opts();
    o.grammar = dream_grammar_yes_no;
    static const char *const field[] = {NULL, "guided_grammar", "none"};
    for (int f = 0; f < 3; f++) {
        p.grammar_field = field[f];
        assert_int_equal(dream_seam_use_remote(&p), 0);
        char *out = NULL;
        assert_int_equal(dream_call_local("route", &in[0], &o, &out), 0);
        free(out);
        pthread_mutex_lock(&mu);
        if (f == 2) assert_string_equal(last_grammar_field, "");
        else {
            assert_string_equal(last_grammar_field, f == 0 ? "grammar" : "guided_grammar");
            assert_string_equal(last_grammar, dream_grammar_yes_no);
        }
        pthread_mutex_unlock(&mu);
        /* an input's own grammar wins over the call's */
        assert_int_equal(dream_call_local("route", &in[1], &o, &out), 0);
        free(out);
        pthread_mutex_lock(&mu);
        if (f < 2) assert_string_equal(last_grammar, dream_grammar_names);
        pthread_mutex_unlock(&mu);
        /* no grammar, no field */
        assert_int_equal(dream_call_local("route", &in[0], NULL, &out), 0);
        free(out);
        pthread_mutex_lock(&mu);
        assert_string_equal(last_grammar_field, "");
        pthread_mutex_unlock(&mu);
    }
    dream_seam_set_backend(NULL);
    MHD_stop_daemon(d);
}

/* A JSON answer's shape, as a grammar and as the same JSON schema. */
static const char json_grammar[] = "root ::= \"{\\\"a\\\": \" (\"1\" | \"2\") \"}\"\n";
static const char json_schema[] = "{\"type\":\"object\",\"properties\":{\"a\":{\"enum\":[1,2]}},\"required\":[\"a\"],\"additionalProperties\":false}";

/* Runs f(ud) with stderr going to a file; returns what it wrote (malloc'd). */
static char *capture_stderr(void (*f)(void *ud), void *ud)
{
    char path[] = "/tmp/dream-remote-stderr-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    f(ud);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    off_t n = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)n + 1);
    assert_int_equal(pread(fd, text, (size_t)n, 0), n);
    close(fd);
    unlink(path);
    return text;
}

static int start_requests(void)
{
    pthread_mutex_lock(&mu);
    int n = n_requests;
    pthread_mutex_unlock(&mu);
    return n;
}

/* Three inputs of a JSON answer, in one batch, all answered. */
static void three_schema_calls(void *ud)
{
    (void)ud;
    struct dream_local_input in[3];
    for (int i = 0; i < 3; i++) in[i] = (struct dream_local_input){.user = "input 1", .grammar = json_grammar, .json_schema = json_schema};
    char *out[3];
    assert_int_equal(dream_call_local_batch("chunk", in, 3, NULL, out), 0);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(out[i], "echo: input 1");
        free(out[i]);
    }
}

/* A JSON answer's schema goes as response_format (named after the stage, strict) in place of its
 * grammar; DREAM_BACKEND_GRAMMAR=none sends neither, json_schema only the schemas. A server that
 * answers 400 to response_format and 200 without it gets the grammar instead, for the rest of
 * the run, after one warning; a 400 for another reason is the call's own error and teaches
 * nothing. */
static void test_remote_sends_the_json_schema_and_falls_back_on_400(void **state)
{
    char url[128];
    struct MHD_Daemon *d = start_scripted(url, sizeof url);
    pthread_mutex_lock(&mu);
    n_requests = 3; /* past the scripted transient failures */
    refuse_response_format = false;
    pthread_mutex_unlock(&mu);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = url;
    p.backoff_ms = 10;
    p.grammar_field = NULL;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    struct dream_local_input json = {.user = "input 0", .grammar = json_grammar, .json_schema = json_schema};
    struct dream_local_input line = {.user = "input 0", .grammar = dream_grammar_yes_no};
    char *out = NULL;
    assert_int_equal(dream_call_local("chunk", &json, NULL, &out), 0);
    free(out);
    char want[1024];
    snprintf(want, sizeof want, "{\"json_schema\":{\"name\":\"chunk\",\"schema\":%s,\"strict\":true},\"type\":\"json_schema\"}",
             "{\"additionalProperties\":false,\"properties\":{\"a\":{\"enum\":[1,2]}},\"required\":[\"a\"],\"type\":\"object\"}");
    pthread_mutex_lock(&mu);
    assert_string_equal(last_response_format, want);
    assert_string_equal(last_grammar_field, ""); /* not both: llama-server refuses that */
    pthread_mutex_unlock(&mu);

    static const char *const field[] = {"none", "json_schema"};
    for (int f = 0; f < 2; f++) {
        p.grammar_field = field[f];
        assert_int_equal(dream_seam_use_remote(&p), 0);
        assert_int_equal(dream_call_local("chunk", &json, NULL, &out), 0);
        free(out);
        pthread_mutex_lock(&mu);
        assert_string_equal(last_response_format, f == 0 ? "" : want);
        assert_string_equal(last_grammar_field, "");
        pthread_mutex_unlock(&mu);
        assert_int_equal(dream_call_local("route", &line, NULL, &out), 0);
        free(out);
        pthread_mutex_lock(&mu);
        assert_string_equal(last_grammar_field, ""); /* json_schema sends no GBNF */
        pthread_mutex_unlock(&mu);
    }

    /* a server that does not take response_format */
    pthread_mutex_lock(&mu);
    refuse_response_format = true;
    pthread_mutex_unlock(&mu);
    p.grammar_field = NULL;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    int before = start_requests();
    char *err = capture_stderr(three_schema_calls, NULL);
    int sent = start_requests() - before;
    assert_true(sent >= 4 && sent <= 6); /* each refused one once more, without the schema */
    const char *warn = strstr(err, "warning: ");
    assert_non_null(warn);
    assert_non_null(strstr(warn, "does not take response_format"));
    assert_non_null(strstr(warn, "unknown field: response_format"));
    assert_null(strstr(warn + 1, "warning: ")); /* said once */
    free(err);
    pthread_mutex_lock(&mu);
    assert_string_equal(last_response_format, "");
    assert_string_equal(last_grammar_field, "grammar");
    assert_string_equal(last_grammar, json_grammar);
    pthread_mutex_unlock(&mu);
    before = start_requests();
    assert_int_equal(dream_call_local("chunk", &json, NULL, &out), 0); /* remembered: one request, no schema */
    free(out);
    assert_int_equal(start_requests() - before, 1);
    pthread_mutex_lock(&mu);
    assert_string_equal(last_response_format, "");
    assert_string_equal(last_grammar_field, "grammar");
    refuse_response_format = false;
    pthread_mutex_unlock(&mu);

    /* a 400 that is not about the schema: tried once without it, still refused, nothing learned */
    assert_int_equal(dream_seam_use_remote(&p), 0);
    struct dream_local_input bad = {.user = "refuse me", .grammar = json_grammar, .json_schema = json_schema};
    before = start_requests();
    assert_int_not_equal(dream_call_local("chunk", &bad, NULL, &out), 0);
    assert_null(out);
    assert_non_null(strstr(dream_error_last(), "no such thing"));
    assert_int_equal(start_requests() - before, 2);
    assert_int_equal(dream_call_local("chunk", &json, NULL, &out), 0);
    free(out);
    pthread_mutex_lock(&mu);
    assert_string_equal(last_response_format, want);
    pthread_mutex_unlock(&mu);
    dream_seam_set_backend(NULL);
    MHD_stop_daemon(d);
}

/* What the watcher heard: the order inputs were reported in, and how many requests the server
 * still held at each report. */
static size_t reported[16], still_in_flight[16];
static int n_reported;
static void remote_watch(void *ud, const struct dream_seam_event *ev)
{
    (void)ud;
    if (ev->kind != DREAM_SEAM_CALL_DONE || n_reported >= 16) return;
    pthread_mutex_lock(&mu);
    still_in_flight[n_reported] = (size_t)in_flight;
    pthread_mutex_unlock(&mu);
    reported[n_reported++] = ev->index;
}

/* Each input is reported to the watcher as its answer arrives, while the others are still at the
 * server: the scripted server answers the last input first. */
static void test_remote_reports_each_call_as_it_finishes(void **state)
{
    char url[128];
    struct MHD_Daemon *d = start_scripted(url, sizeof url);
    pthread_mutex_lock(&mu);
    n_requests = 3;
    pthread_mutex_unlock(&mu);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = url;
    p.max_parallel = 8;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    enum { N = 8 };
    struct dream_local_input in[N];
    char users[N][32], *out[N];
    for (int i = 0; i < N; i++) {
        snprintf(users[i], sizeof users[i], "input %d", i);
        in[i] = (struct dream_local_input){.user = users[i]};
    }
    n_reported = 0;
    dream_seam_set_watch(remote_watch, NULL);
    assert_int_equal(dream_call_local_batch("entity", in, N, NULL, out), 0);
    dream_seam_set_watch(NULL, NULL);
    for (int i = 0; i < N; i++) free(out[i]);
    assert_int_equal(n_reported, N);
    assert_int_equal(reported[0], N - 1); /* the first to answer */
    assert_true(still_in_flight[0] >= 1); /* reported before the batch was over */
    dream_seam_set_backend(NULL);
    MHD_stop_daemon(d);
}

static void test_remote_rejects_a_url_that_is_not_http(void **state)
{
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = "ftp://example.org";
    assert_int_equal(dream_seam_use_remote(&p), DREAM_EINVAL);
    assert_non_null(strstr(dream_error_last(), "http://"));
}

/* ---- against dream serve ---- */
static void test_remote_batch_equals_local_answers(void **state)
{
    if (!serve_url) {
        fail_msg("no dream serve URL given (run through test_remote.sh)");
        return;
    }
    struct dream_seam_config c;
    dream_seam_default_config(&c);
    c.model_path = model_path;
    c.width = 4;
    assert_int_equal(dream_seam_configure(&c), 0);
    const char *users[] = {"Alice met Bob in Paris to talk about the Rust compiler.",
                           "My sourdough starter died again; I think the kitchen is too cold.",
                           "We moved the dream project from Python to C last spring.",
                           "Notes on the Kubernetes upgrade and the flaky ingress controller.",
                           "Call Grandma on Sunday about the trip to Lisbon.",
                           "Why does my bike chain skip in the highest gear?"};
    enum { N = sizeof users / sizeof users[0] };
    struct dream_local_input in[N];
    for (int i = 0; i < N; i++) in[i] = (struct dream_local_input){.user = users[i], .system = i == 2 ? "Answer in one word." : NULL};
    struct dream_call_opts o = dream_call_default_opts();
    o.max_tokens = 20;
    char *local[N], *remote[N];
    assert_int_equal(dream_call_local_batch("entity", in, N, &o, local), 0);
    struct dream_remote_params p;
    dream_remote_default_params(&p);
    p.url = serve_url;
    p.max_parallel = 4;
    assert_int_equal(dream_seam_use_remote(&p), 0);
    assert_int_equal(dream_call_local_batch("entity", in, N, &o, remote), 0);
    for (int i = 0; i < N; i++) {
        assert_non_null(local[i]);
        assert_true(strlen(local[i]) > 0);
        assert_string_equal(remote[i], local[i]);
        free(local[i]);
        free(remote[i]);
    }
    /* under answer grammars, which dream serve reads from the request's grammar field */
    o.max_tokens = 120;
    o.grammar = dream_grammar_yes_no;
    in[1].grammar = dream_grammar_names;
    in[4].grammar = dream_grammar_section_name;
    assert_int_equal(dream_call_local_batch("entity", in, N, &o, remote), 0);
    dream_seam_set_backend(NULL);
    assert_int_equal(dream_call_local_batch("entity", in, N, &o, local), 0);
    for (int i = 0; i < N; i++) {
        assert_string_equal(remote[i], local[i]);
        if (i != 1 && i != 4) assert_true(!strcmp(local[i], "yes") || !strcmp(local[i], "no") || !strcmp(local[i], "Yes") || !strcmp(local[i], "No"));
        free(local[i]);
        free(remote[i]);
    }
    /* a JSON answer: dream serve refuses its response_format (it decodes only under a grammar),
     * so the backend sends the grammar instead, and the answers are the local ones */
    o.grammar = NULL;
    for (int i = 0; i < N; i++) in[i].grammar = json_grammar, in[i].json_schema = json_schema;
    assert_int_equal(dream_call_local_batch("chunk", in, N, &o, local), 0);
    assert_int_equal(dream_seam_use_remote(&p), 0);
    assert_int_equal(dream_call_local_batch("chunk", in, N, &o, remote), 0);
    dream_seam_set_backend(NULL);
    for (int i = 0; i < N; i++) {
        assert_string_equal(remote[i], local[i]);
        assert_true(!strcmp(local[i], "{\"a\": 1}") || !strcmp(local[i], "{\"a\": 2}"));
        free(local[i]);
        free(remote[i]);
    }
    dream_seam_shutdown();
}

int main(int argc, char **argv)
{
    serve_url = argc > 1 ? argv[1] : NULL;
    model_path = argc > 2 ? argv[2] : NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_remote_rejects_a_url_that_is_not_http),
        cmocka_unit_test(test_remote_fails_a_turn_that_is_not_utf8),
        cmocka_unit_test(test_remote_retries_transient_errors_keeps_order_and_bounds_concurrency),
        cmocka_unit_test(test_remote_sends_the_answer_grammar),
        cmocka_unit_test(test_remote_sends_the_json_schema_and_falls_back_on_400),
        cmocka_unit_test(test_remote_reports_each_call_as_it_finishes),
        cmocka_unit_test(test_remote_batch_equals_local_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
