/* test_serve_dream.c — POST /v1/memory/dream on a real server (libmicrohttpd, in this process)
 * with a real HTTP client (libcurl), over the Dreaming fixture corpus with the scripted fake
 * backend answering every stage (the tiny model is loaded for the server, never asked).
 *
 * The streamed events name every stage in order (start, progress, stage) and end with done;
 * the store then holds exactly the chunks and entities of tests/data/dreaming/EXPECTED.txt,
 * and the store and articles equal those of the same run made directly (dream_pipeline_run).
 * While the run works, a second POST gets 409 naming the lock, status shows the run, and a dry
 * run still answers; a lock held by another run is a 409 too; bad bodies are 400s. Chat
 * requests that keep joining a running batch do not starve a stage call (it gets its turn once
 * the requests already running end). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/error.h"
#include "dream/model.h"
#include "dream/pipeline.h"
#include "dream/serve.h"
#include "dream/store.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"

#include <curl/curl.h>
#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *data_dir, *model_path;
static char root[4096];
static dream_server *srv;
static int port;

struct site {
    char dir[4096], store[4096], wiki[4096];
};
static struct site served, direct;

/* ---- files ---- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* A wiki set up with `dream init`, the fixture's alias seeds, and a store holding the corpus. */
static int site_make(struct site *s, const char *name)
{
    snprintf(s->dir, sizeof s->dir, "%s/%s", root, name);
    snprintf(s->store, sizeof s->store, "%s/memory.sqlite", s->dir);
    snprintf(s->wiki, sizeof s->wiki, "%s/wiki", s->dir);
    if (mkdir(s->dir, 0755) || dream_vault_init(s->wiki, NULL, NULL, NULL)) return -1;
    char from[4096], to[4200];
    snprintf(from, sizeof from, "%s/wiki/Meta/Aliases.md", data_dir);
    snprintf(to, sizeof to, "%s/Meta/Aliases.md", s->wiki);
    char *seeds = slurp(from);
    FILE *f = fopen(to, "wb");
    if (!seeds || !f) return -1;
    fputs(seeds, f);
    fclose(f);
    free(seeds);
    char corpus[4096];
    snprintf(corpus, sizeof corpus, "%s/corpus", data_dir);
    dream_store *st;
    if (dream_store_open(s->store, &st)) return -1;
    int rc = fixture_ingest(st, corpus);
    dream_store_close(st);
    return rc;
}

static char *site_tables(const struct site *s)
{
    dream_store *st;
    if (dream_store_open(s->store, &st)) return NULL;
    char *t = fixture_dump_tables(st);
    dream_store_close(st);
    return t;
}

/* The articles of a site, name and text, sorted by name. */
static char *site_articles(const struct site *s)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/articles", s->wiki);
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char p[4500];
            snprintf(p, sizeof p, "%s/%s", dir, names[i]->d_name);
            char *t = slurp(p);
            size_t need = strlen(names[i]->d_name) + (t ? strlen(t) : 0) + 16;
            while (len + need >= cap) out = realloc(out, cap *= 2);
            len += (size_t)sprintf(out + len, "== %s\n%s", names[i]->d_name, t ? t : "");
            free(t);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

/* ---- the client ---- */

struct reply {
    long status;
    char *body;
    size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct reply *r = ud;
    r->body = realloc(r->body, r->len + size * n + 1);
    memcpy(r->body + r->len, p, size * n);
    r->len += size * n;
    r->body[r->len] = 0;
    return size * n;
}

static struct reply http(const char *method, const char *path, const char *body)
{
    struct reply r = {0};
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    struct curl_slist *type = body ? curl_slist_append(NULL, "Content-Type: application/json") : NULL;
    if (body) curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (type) curl_easy_setopt(c, CURLOPT_HTTPHEADER, type);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 300L);
    CURLcode cc = curl_easy_perform(c);
    if (cc != CURLE_OK) fprintf(stderr, "%s %s: %s\n", method, path, curl_easy_strerror(cc));
    assert_int_equal(cc, CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    curl_easy_cleanup(c);
    curl_slist_free_all(type);
    if (!r.body) r.body = calloc(1, 1);
    return r;
}

/* The events of an SSE body: [{"event": name, "data": object}, ...]. */
static json_t *sse_events(const char *body)
{
    json_t *all = json_array();
    const char *p = body;
    while (*p) {
        const char *end = strstr(p, "\n\n");
        if (!end) break;
        char name[64] = "";
        json_t *data = NULL;
        for (const char *line = p; line < end;) {
            const char *nl = memchr(line, '\n', (size_t)(end - line));
            if (!nl) nl = end;
            if (!strncmp(line, "event: ", 7)) snprintf(name, sizeof name, "%.*s", (int)(nl - line - 7), line + 7);
            else if (!strncmp(line, "data: ", 6)) data = json_loadb(line + 6, (size_t)(nl - line - 6), 0, NULL);
            line = nl + 1;
        }
        assert_non_null(data);
        json_array_append_new(all, json_pack("{ss so}", "event", name, "data", data));
        p = end + 2;
    }
    return all;
}

/* ---- the fake's brake: the first model call waits until the test lets it go ---- */

static pthread_mutex_t brake_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t brake_cv = PTHREAD_COND_INITIALIZER;
static bool brake_armed, brake_entered, brake_released;

static void brake(const char *stage)
{
    (void)stage;
    pthread_mutex_lock(&brake_mu);
    if (brake_armed) {
        brake_armed = false;
        brake_entered = true;
        pthread_cond_broadcast(&brake_cv);
        while (!brake_released) pthread_cond_wait(&brake_cv, &brake_mu);
    }
    pthread_mutex_unlock(&brake_mu);
}

static void *stream_client(void *arg)
{
    struct reply *r = arg;
    *r = http("POST", "/v1/memory/dream", "{\"batch\": 3}");
    return NULL;
}

/* Starts a streamed run (on thread *t, its reply in *r) whose first model call waits for
 * release_brake(); returns once the run is in that call, holding the lock. */
static void start_braked_run(struct reply *r, pthread_t *t)
{
    pthread_mutex_lock(&brake_mu);
    brake_armed = true;
    brake_entered = brake_released = false;
    pthread_mutex_unlock(&brake_mu);
    dreaming_fake_on_call = brake;
    assert_int_equal(pthread_create(t, NULL, stream_client, r), 0);
    pthread_mutex_lock(&brake_mu);
    while (!brake_entered) pthread_cond_wait(&brake_cv, &brake_mu);
    pthread_mutex_unlock(&brake_mu);
}

static void release_brake(void)
{
    pthread_mutex_lock(&brake_mu);
    brake_released = true;
    pthread_cond_broadcast(&brake_cv);
    pthread_mutex_unlock(&brake_mu);
}

static size_t count_of(json_t *stage_obj, const char *name)
{
    return (size_t)json_integer_value(json_object_get(json_object_get(stage_obj, "counts"), name));
}

/* ---- tests ---- */

static void test_bad_bodies_are_400s_naming_the_field(void **state)
{
    (void)state;
    struct {
        const char *body, *says;
    } bad[] = {
        {"{\"stage\": \"dreamy\"}", "unknown stage 'dreamy'"},
        {"{\"stage\": \"dreamy\"}", "wikify, sources)"}, /* every stage named, sources too */
        {"{\"stage\": \"segment\", \"stage\": \"wikify\"}", "duplicate object key"}, /* not the last one silently */
        {"{\"limit\": \"ten\"}", "'limit' has the wrong type"},
        {"{\"batch\": 0}", "'batch' has the wrong type or is out of range"},
        {"{\"dry\": true}", "unknown field 'dry'"},
        {"[1, 2]", "must be a JSON object"},
        {"{\"stage\": ", "must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct reply r = http("POST", "/v1/memory/dream", bad[i].body);
        if (!strstr(r.body, bad[i].says)) fprintf(stderr, "body %s -> %ld %s\n", bad[i].body, r.status, r.body);
        assert_int_equal(r.status, 400);
        assert_non_null(strstr(r.body, bad[i].says));
        assert_non_null(strstr(r.body, "\"invalid_request_error\""));
        free(r.body);
    }
    assert_int_equal(dreaming_fake_calls, 0); /* no run started */
    /* A conversation the store does not hold: 404 naming it, after no stage ran. */
    struct reply r = http("POST", "/v1/memory/dream", "{\"conversation\": \"conv:0123456789ab\", \"stream\": false}");
    if (r.status != 404) fprintf(stderr, "unknown conversation -> %ld %s\n", r.status, r.body);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "0123456789ab"));
    assert_non_null(strstr(r.body, "\"stages\":[]"));
    free(r.body);
    assert_int_equal(dreaming_fake_calls, 0);
}

static void test_streamed_run_is_the_whole_pipeline_and_a_second_run_waits(void **state)
{
    (void)state;
    struct reply streamed;
    pthread_t t;
    start_braked_run(&streamed, &t);

    /* The run is in its first model call and holds the lock. */
    struct reply busy = http("POST", "/v1/memory/dream", "{}");
    assert_int_equal(busy.status, 409);
    assert_non_null(strstr(busy.body, "\"run_in_progress\""));
    char lock[4200];
    snprintf(lock, sizeof lock, "%s.lock", served.store);
    assert_non_null(strstr(busy.body, lock));
    free(busy.body);
    assert_int_equal(dream_run_lock_holder(served.store), (long)getpid());
    struct reply st = http("GET", "/v1/memory/status", NULL);
    assert_int_equal(st.status, 200);
    json_t *sj = json_loads(st.body, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(sj, "running"), "pid")), (json_int_t)getpid());
    json_decref(sj);
    free(st.body);
    /* A dry run takes no lock: it answers, every stage marked dry. */
    struct reply dry = http("POST", "/v1/memory/dream", "{\"dry_run\": true, \"stream\": false}");
    assert_int_equal(dry.status, 200);
    json_t *dj = json_loads(dry.body, 0, NULL);
    assert_true(json_is_true(json_object_get(dj, "ok")));
    assert_int_equal(json_array_size(json_object_get(dj, "stages")), 10); /* segment ... wikify, sources */
    size_t k;
    json_t *v;
    json_array_foreach(json_object_get(dj, "stages"), k, v) assert_true(json_is_true(json_object_get(v, "dry_run")));
    json_decref(dj);
    free(dry.body);

    release_brake();
    pthread_join(t, NULL);
    dreaming_fake_on_call = NULL;

    /* The events: each stage in order, start → progress* → stage; then done. */
    assert_int_equal(streamed.status, 200);
    json_t *ev = sse_events(streamed.body);
    size_t n = json_array_size(ev), at = 0, progress = 0;
    for (size_t s = 0; dream_pipeline_stages[s]; s++) {
        const char *want = dream_pipeline_stages[s];
        json_t *e = json_array_get(ev, at++);
        assert_string_equal(json_string_value(json_object_get(e, "event")), "start");
        assert_string_equal(json_string_value(json_object_get(json_object_get(e, "data"), "stage")), want);
        while (at < n && !strcmp(json_string_value(json_object_get(json_array_get(ev, at), "event")), "progress")) {
            json_t *d = json_object_get(json_array_get(ev, at++), "data");
            assert_string_equal(json_string_value(json_object_get(d, "stage")), want);
            assert_true(json_integer_value(json_object_get(d, "done")) <= json_integer_value(json_object_get(d, "total")));
            progress++;
        }
        e = json_array_get(ev, at++);
        assert_string_equal(json_string_value(json_object_get(e, "event")), "stage");
        json_t *d = json_object_get(e, "data");
        assert_string_equal(json_string_value(json_object_get(d, "stage")), want);
        assert_false(json_is_true(json_object_get(d, "skipped")));
        assert_int_equal(strncmp(json_string_value(json_object_get(d, "summary")), want, strlen(want)), 0);
    }
    assert_true(progress >= 4); /* segment, extract, resolve and the writers report as they go */
    json_t *done = json_array_get(ev, at++);
    assert_int_equal(at, n);
    assert_string_equal(json_string_value(json_object_get(done, "event")), "done");
    assert_true(json_is_false(json_object_get(json_object_get(done, "data"), "stopped")));
    json_t *stages = json_object_get(json_object_get(done, "data"), "stages");
    assert_int_equal(json_array_size(stages), 10);
    assert_int_equal(count_of(json_array_get(stages, 0), "chunks"), 18);
    assert_int_equal(count_of(json_array_get(stages, 4), "created"), 5);
    assert_true(count_of(json_array_get(stages, 4), "committed") >= 5);
    json_decref(ev);
    free(streamed.body);
    assert_int_equal(dream_run_lock_holder(served.store), 0);

    /* The store holds what the fixture expects. */
    char expected[4200];
    snprintf(expected, sizeof expected, "%s/EXPECTED.txt", data_dir);
    dream_store *s;
    assert_int_equal(dream_store_open(served.store, &s), 0);
    char *got = fixture_describe(s), *want = fixture_expected(expected, "chunk entity");
    dream_store_close(s);
    if (strcmp(got, want)) fprintf(stderr, "--- expected ---\n%s--- got ---\n%s", want, got);
    assert_string_equal(got, want);
    free(got);
    free(want);
}

static void test_served_run_equals_the_direct_run(void **state)
{
    (void)state;
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    assert_int_equal(dream_seam_set_backend(&fake), 0);
    struct dream_pipeline_params p;
    dream_pipeline_default_params(&p);
    p.store_path = direct.store;
    p.wiki_dir = direct.wiki;
    p.batch = 3;
    assert_int_equal(dream_pipeline_run(&p), 0);
    char *a = site_tables(&served), *b = site_tables(&direct);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    char *aa = site_articles(&served), *ba = site_articles(&direct);
    assert_true(strstr(aa, "== Sourdough.md\n") != NULL);
    assert_string_equal(aa, ba);

    /* A second served run finds nothing to do and changes nothing. */
    long calls = dreaming_fake_calls;
    struct reply again = http("POST", "/v1/memory/dream", "{\"stream\": false}");
    assert_int_equal(again.status, 200);
    assert_int_equal(dreaming_fake_calls, calls);
    char *a2 = site_tables(&served), *aa2 = site_articles(&served);
    assert_string_equal(a2, a);
    assert_string_equal(aa2, aa);
    free(again.body);
    free(a);
    free(b);
    free(aa);
    free(ba);
    free(a2);
    free(aa2);
}

static void test_a_lock_held_by_another_run_is_a_409(void **state)
{
    (void)state;
    int fd;
    assert_int_equal(dream_run_lock(served.store, &fd), 0); /* as a `dream run` process would */
    struct reply r = http("POST", "/v1/memory/dream", "{\"stage\": \"route\"}");
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(r.body, "another dream run"));
    free(r.body);
    dream_run_unlock(fd);
    r = http("POST", "/v1/memory/dream", "{\"stage\": \"route\", \"stream\": false}");
    assert_int_equal(r.status, 200);
    json_t *j = json_loads(r.body, 0, NULL);
    assert_int_equal(json_array_size(json_object_get(j, "stages")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "stages"), 0), "stage")), "route");
    json_decref(j);
    free(r.body);
}

/* What dream_run_lock_holder does to look (a shared flock, let go at once), held a moment. */
static void *probe_lock(void *arg)
{
    int *ready = arg;
    char path[4200];
    snprintf(path, sizeof path, "%s.lock", served.store);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0) {
        atomic_store((atomic_int *)ready, 1);
        usleep(20 * 1000);
        flock(fd, LOCK_UN);
    } else {
        atomic_store((atomic_int *)ready, -1);
    }
    if (fd >= 0) close(fd);
    return NULL;
}

/* A status request looks at the run lock; a run that starts while one looks is not refused.
 * Before, it was: "another dream run is working on this store", with none running. */
static void test_a_run_is_not_refused_while_status_looks_at_the_lock(void **state)
{
    (void)state;
    int fd;
    assert_int_equal(dream_run_lock(served.store, &fd), 0); /* the lock file exists */
    dream_run_unlock(fd);
    atomic_int ready = 0;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, probe_lock, &ready), 0);
    while (atomic_load(&ready) == 0) usleep(100);
    assert_int_equal(atomic_load(&ready), 1);
    assert_int_equal(dream_run_lock(served.store, &fd), 0);
    dream_run_unlock(fd);
    pthread_join(t, NULL);
}

/* ---- chat and stage calls share the model: a stream of chat requests cannot starve a stage ---- */

#define CHAT_POOL 1100 /* more than DREAM_CHAT_JOIN_MAX: without turns, the run ends only there */
static struct dream_chat_request chat_pool[CHAT_POOL];
static const struct dream_chat_message chat_hi[] = {{"user", "Say something."}};
static atomic_int chat_taken;
static atomic_bool chat_stop;

static struct dream_chat_request *chat_supply(void *ud)
{
    (void)ud;
    if (atomic_load(&chat_stop)) return NULL;
    int k = atomic_load(&chat_taken);
    if (k >= CHAT_POOL) return NULL;
    atomic_store(&chat_taken, k + 1);
    return &chat_pool[k];
}

static void *chat_client(void *arg)
{
    (void)arg;
    while (!atomic_load(&chat_stop) && atomic_load(&chat_taken) < CHAT_POOL) dream_seam_chat_join(NULL, 0, chat_supply, NULL);
    return NULL;
}

static void test_a_stage_call_gets_its_turn_between_joining_chat_requests(void **state)
{
    (void)state;
    for (int i = 0; i < CHAT_POOL; i++)
        chat_pool[i] = (struct dream_chat_request){.messages = chat_hi, .n_messages = 1, .max_tokens = 4};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, chat_client, NULL), 0);
    while (atomic_load(&chat_taken) < 4) usleep(1000); /* the chat run is going, requests joining */
    int before = atomic_load(&chat_taken);
    struct dream_local_input in = {.user = "Chunk: I repaired the bicycle chain today."};
    char *out = NULL;
    int rc = dream_call_local_batch("entity", &in, 1, NULL, &out);
    int after = atomic_load(&chat_taken);
    atomic_store(&chat_stop, true);
    pthread_join(t, NULL);
    assert_int_equal(rc, 0);
    assert_non_null(out);
    free(out);
    fprintf(stderr, "stage call waited while %d chat request(s) joined (of %d supplied in all)\n", after - before, atomic_load(&chat_taken));
    /* The call waits for the requests already running (a few), not for the supply to end. */
    assert_true(after - before < 64);
    for (int i = 0; i < CHAT_POOL; i++) assert_true(i >= atomic_load(&chat_taken) || chat_pool[i].status == 0);
}

static void *stopper(void *arg)
{
    (void)arg;
    dream_server_stop(srv); /* waits for the running stage */
    return NULL;
}

/* Last: stopping the server while a run works lets the running stage finish, starts no other,
 * and ends the stream with done, "stopped": true. */
static void test_stopping_the_server_ends_the_run_after_its_stage(void **state)
{
    (void)state;
    /* fresh work for segment: one more conversation in the store */
    char more[4200];
    snprintf(more, sizeof more, "%s/grown", data_dir);
    dream_store *st;
    assert_int_equal(dream_store_open(served.store, &st), 0);
    assert_int_equal(fixture_ingest(st, more), 0);
    dream_store_close(st);
    struct reply streamed;
    pthread_t client, stop;
    start_braked_run(&streamed, &client);
    assert_int_equal(pthread_create(&stop, NULL, stopper, NULL), 0);
    usleep(200 * 1000); /* the stop is waiting for the run */
    release_brake();
    pthread_join(client, NULL);
    pthread_join(stop, NULL);
    srv = NULL;
    dreaming_fake_on_call = NULL;
    assert_int_equal(streamed.status, 200);
    json_t *ev = sse_events(streamed.body);
    json_t *last = json_array_get(ev, json_array_size(ev) - 1);
    assert_string_equal(json_string_value(json_object_get(last, "event")), "done");
    json_t *d = json_object_get(last, "data");
    assert_true(json_is_true(json_object_get(d, "stopped")));
    assert_int_equal(json_array_size(json_object_get(d, "stages")), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(d, "stages"), 0), "stage")), "segment");
    json_decref(ev);
    free(streamed.body);
    assert_int_equal(dream_run_lock_holder(served.store), 0);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_serve_dream DATA_DIR MODEL\n");
        return 2;
    }
    data_dir = argv[1];
    model_path = argv[2];
    const char *b = getenv("DREAM_TEST_BUILD");
    snprintf(root, sizeof root, "%s/serve-dream-XXXXXX", b ? b : "/tmp");
    if (!mkdtemp(root) || site_make(&served, "served") || site_make(&direct, "direct")) {
        fprintf(stderr, "test_serve_dream: setting up under %s failed: %s\n", root, dream_error_last());
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct dream_seam_config cfg;
    dream_seam_default_config(&cfg);
    cfg.model_path = model_path;
    cfg.n_ctx = 512;
    cfg.width = 2;
    cfg.n_threads = 1;
    struct dream_serve_params sp;
    dream_serve_default_params(&sp);
    sp.port = 0;
    sp.api_key = NULL;
    sp.store_path = served.store;
    sp.wiki_dir = served.wiki;
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    if (dream_seam_configure(&cfg) || dream_server_start(&sp, &srv) || dream_seam_set_backend(&fake)) {
        fprintf(stderr, "test_serve_dream: starting the server failed: %s\n", dream_error_last());
        return 1;
    }
    port = dream_server_port(srv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_bodies_are_400s_naming_the_field),
        cmocka_unit_test(test_streamed_run_is_the_whole_pipeline_and_a_second_run_waits),
        cmocka_unit_test(test_served_run_equals_the_direct_run),
        cmocka_unit_test(test_a_lock_held_by_another_run_is_a_409),
        cmocka_unit_test(test_a_run_is_not_refused_while_status_looks_at_the_lock),
        cmocka_unit_test(test_a_stage_call_gets_its_turn_between_joining_chat_requests),
        cmocka_unit_test(test_stopping_the_server_ends_the_run_after_its_stage),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (srv) dream_server_stop(srv);
    dream_seam_set_backend(NULL);
    dream_seam_shutdown();
    curl_global_cleanup();
    if (!failed) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0) return 1;
    }
    return failed;
}
