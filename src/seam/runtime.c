/* runtime.c — the seam's one runtime: lazy model, serial session, batcher, stage adapters, the
 * operation lock, and the backend switch. */
#include "seam_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/buf.h"
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct stage_adapter {
    char stage[64];
    dream_adapter *adapter; /* NULL: looked for, none installed */
};

/* The runtime singleton. Everything in it is touched only with op_lock held. */
static struct {
    bool configured;
    struct dream_seam_config cfg;
    char *model_path, *adapters_dir;
    dream_model *model;
    dream_template *tmpl;
    dream_session *session;
    dream_batcher *batcher;
    struct stage_adapter adapters[32];
    int n_adapters;
    struct dream_backend backend; /* call == NULL: the embedded engine */
    char *replay_url;
    struct dream_backend replay;  /* call != NULL: replay answers come from here (cfg.replay_url) */
    char replay_error[512];       /* why cfg.replay_url was refused ("": it was not); every call fails with it */
    char *trace_path;
    FILE *trace;                  /* cfg.trace_path opened for appending; NULL: no trace */
    char trace_error[512];        /* why cfg.trace_path could not be opened ("": it could); every call fails with it */
    struct dream_seam_stats stats;
    dream_seam_watch_fn watch;    /* NULL: nobody watches */
    void *watch_ud;
    /* the call in progress, for the watcher: which of its inputs have been reported finished */
    const char *call_stage;
    size_t call_n, call_done;
    bool *call_finished;
} rt;
static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;

/* Stage calls waiting for op_lock. A chat run (the server's) holds the lock while requests keep
 * joining it, and a mutex hands itself to whoever asks first, so without turns a steady stream
 * of chat requests would keep the pipeline's calls waiting. While a call waits, a chat run
 * admits no new request (its batch drains and it returns), and the next chat run lets the
 * waiting call take the lock first. */
static atomic_int calls_waiting;
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER; /* a waiting call took op_lock */

static void op_lock_for_call(void)
{
    atomic_fetch_add(&calls_waiting, 1);
    pthread_mutex_lock(&op_lock);
    pthread_mutex_lock(&turn_mu);
    atomic_fetch_sub(&calls_waiting, 1);
    pthread_cond_broadcast(&turn_cv);
    pthread_mutex_unlock(&turn_mu);
}

/* A chat run's way in: after every stage call already waiting. */
static void op_lock_for_chat(void)
{
    pthread_mutex_lock(&turn_mu);
    while (atomic_load(&calls_waiting) > 0) pthread_cond_wait(&turn_cv, &turn_mu);
    pthread_mutex_unlock(&turn_mu);
    pthread_mutex_lock(&op_lock);
}

struct dream_call_opts dream_call_default_opts(void)
{
    struct dream_call_opts o = {.max_tokens = DREAM_DEFAULT_MAX_TOKENS, .ignore_eog = false, .adapter_scale = 1.0f, .grammar = NULL};
    return o;
}

static int env_int(const char *name, int dflt, int lo, int hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) {
        dream_log(DREAM_LOG_WARN, "%s=%s is not an integer in %d..%d; using %d", name, v, lo, hi, dflt);
        return dflt;
    }
    return (int)x;
}

void dream_seam_default_config(struct dream_seam_config *c)
{
    static _Thread_local char adapters[4096];
    const char *a = getenv("DREAM_ADAPTERS"), *home = getenv("DREAM_HOME"), *h = getenv("HOME");
    if (a && *a) snprintf(adapters, sizeof adapters, "%s", a);
    else if (home && *home) snprintf(adapters, sizeof adapters, "%s/cache/adapters", home);
    else snprintf(adapters, sizeof adapters, "%s/.cache/dream/adapters", h ? h : "");
    *c = (struct dream_seam_config){
        .model_path = NULL, /* dream_model_resolve reads $DREAM_MODEL, and says so when it names no file */
        .adapters_dir = adapters,
        .width = env_int("DREAM_MEMORY_BATCH", dream_engine_has_gpu() ? DREAM_DEFAULT_BATCH_WIDTH_GPU : DREAM_DEFAULT_BATCH_WIDTH_CPU, 1, 128),
        .n_ctx = env_int("DREAM_CTX", 8192, 256, 1 << 20),
        .n_threads = env_int("DREAM_THREADS", 0, 0, 1024),
        .n_gpu_layers = -1,
        .flash_attn = env_int("DREAM_FLASH_ATTN", -1, -1, 1),
        .no_grammar = getenv("DREAM_GRAMMAR") && !strcmp(getenv("DREAM_GRAMMAR"), "0"),
        .replay_url = getenv("DREAM_REPLAY") && *getenv("DREAM_REPLAY") ? getenv("DREAM_REPLAY") : NULL,
        .trace_path = getenv("DREAM_TRACE") && *getenv("DREAM_TRACE") ? getenv("DREAM_TRACE") : NULL,
    };
}

/* Frees everything loaded; keeps the configuration and the backend. */
static void runtime_unload(void)
{
    for (int i = 0; i < rt.n_adapters; i++) dream_adapter_free(rt.adapters[i].adapter);
    rt.n_adapters = 0;
    dream_batcher_free(rt.batcher);
    dream_session_free(rt.session);
    dream_template_free(rt.tmpl);
    dream_model_free(rt.model);
    rt.batcher = NULL;
    rt.session = NULL;
    rt.tmpl = NULL;
    rt.model = NULL;
}

/* The replay server's client, for cfg.replay_url (none when it is NULL). It sends no answer
 * constraints: the server answers from its own truth. */
static int replay_connect(const char *url)
{
    if (rt.replay.destroy) rt.replay.destroy(rt.replay.ud);
    memset(&rt.replay, 0, sizeof rt.replay);
    free(rt.replay_url);
    rt.replay_url = NULL;
    if (!url) return 0;
    struct dream_remote_params rp;
    dream_remote_default_params(&rp);
    rp.url = url;
    rp.grammar_field = "none";
    int rc = seam_remote_new(&rp, true, &rt.replay);
    if (rc) return dream_error_wrap(rc, "replay (DREAM_REPLAY)");
    if (!(rt.replay_url = strdup(url))) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return 0;
}

/* Opens path for appending as the trace (closing any earlier one); NULL: no trace. */
static int trace_open(const char *path)
{
    if (rt.trace) fclose(rt.trace);
    free(rt.trace_path);
    rt.trace = NULL;
    rt.trace_path = NULL;
    if (!path) return 0;
    if (!(rt.trace = fopen(path, "a")))
        return dream_error_set(DREAM_EIO, "trace file %s (DREAM_TRACE): %s; name a file in a directory that exists and can be written", path,
                               strerror(errno));
    if (!(rt.trace_path = strdup(path))) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return 0;
}

/* Appends the n calls of stage to the trace, one JSON line each, and flushes it: a run that
 * stops half way leaves every call it made. */
static void trace_calls(const char *stage, const struct dream_local_input *in, size_t n, char *const *out)
{
    const char *dflt = dream_stage_default_system(stage);
    for (size_t i = 0; i < n; i++) {
        const char *system = in[i].system ? in[i].system : dflt;
        json_t *o = json_pack("{s:s, s:s?, s:s, s:s?}", "stage", stage, "system", system, "user", in[i].user, "answer", out[i]);
        char *line = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
        if (line) fprintf(rt.trace, "%s\n", line);
        else dream_log(DREAM_LOG_WARN, "trace %s: stage '%s', input %zu is not valid UTF-8 and was left out", rt.trace_path, stage, i);
        free(line);
        json_decref(o);
    }
    if (fflush(rt.trace)) dream_log(DREAM_LOG_WARN, "trace %s: %s", rt.trace_path, strerror(errno));
}

/* Takes configuration c. A bad replay URL or trace file fails it, and every call after fails
 * with the same error (instead of running without them) until a configuration without it is
 * taken. */
static int configure_locked(const struct dream_seam_config *c)
{
    runtime_unload();
    free(rt.model_path);
    free(rt.adapters_dir);
    rt.cfg = *c;
    rt.model_path = c->model_path ? strdup(c->model_path) : NULL;
    rt.adapters_dir = c->adapters_dir ? strdup(c->adapters_dir) : NULL;
    rt.cfg.model_path = rt.model_path;
    rt.cfg.adapters_dir = rt.adapters_dir;
    if (rt.cfg.width < 1) rt.cfg.width = 1;
    int rc = replay_connect(c->replay_url);
    rt.cfg.replay_url = rt.replay_url;
    snprintf(rt.replay_error, sizeof rt.replay_error, "%s", rc ? dream_error_last() : "");
    int trc = trace_open(c->trace_path);
    rt.cfg.trace_path = rt.trace_path;
    snprintf(rt.trace_error, sizeof rt.trace_error, "%s", trc ? dream_error_last() : "");
    rt.configured = true;
    return rc ? rc : trc;
}

int dream_seam_configure(const struct dream_seam_config *c)
{
    pthread_mutex_lock(&op_lock);
    int rc = configure_locked(c);
    pthread_mutex_unlock(&op_lock);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void watch_emit(const struct dream_seam_event *ev)
{
    if (rt.watch) rt.watch(rt.watch_ud, ev);
}

static int stage_adapter(const char *stage, dream_adapter **out);
static int check_stage(const char *stage);
static int runtime_adapters_check(void);

/* Loads the model, its template and the serial session on first use, and every adapter
 * installed for it; the watcher hears when loading starts and how long it took. */
static int runtime_load(void)
{
    if (!rt.configured) {
        struct dream_seam_config c;
        dream_seam_default_config(&c);
        configure_locked(&c);
    }
    if (*rt.replay_error) return dream_error_set(DREAM_EINVAL, "%s", rt.replay_error);
    if (rt.model) return 0;
    char *path = NULL;
    int rc = dream_model_resolve(rt.cfg.model_path, &path);
    if (rc) return rc;
    struct dream_model_params mp = dream_model_default_params();
    mp.n_gpu_layers = rt.cfg.n_gpu_layers;
    double t0 = now_s();
    watch_emit(&(struct dream_seam_event){.kind = DREAM_SEAM_MODEL_LOADING, .model = path});
    rc = dream_model_load(path, &mp, &rt.model);
    if (!rc) watch_emit(&(struct dream_seam_event){.kind = DREAM_SEAM_MODEL_LOADED, .model = path, .seconds = now_s() - t0});
    free(path);
    if (!rc) rc = seam_parse_template(rt.model, &rt.tmpl);
    if (!rc) {
        struct dream_session_params sp = dream_session_default_params();
        sp.n_ctx = rt.cfg.n_ctx;
        if (rt.cfg.n_threads > 0) sp.n_threads = rt.cfg.n_threads;
        sp.flash_attn = dream_model_flash_attn_choice(rt.model, rt.cfg.flash_attn);
        rc = dream_session_new(rt.model, &sp, &rt.session);
    }
    if (!rc) rc = runtime_adapters_check();
    if (rc) runtime_unload();
    return rc;
}

/* Every adapter installed for the model, loaded with it (op_lock held, the model loaded): one
 * made for another model, damaged, or unreadable fails the load, naming its file, so `dream run`
 * stops at its first call, before any stage has written, instead of at the stage that mounts it
 * after earlier stages committed. An adapters directory that is a file or cannot be read is an
 * error too; a missing one mounts nothing (the default place has none until adapters are
 * installed), with a warning when DREAM_ADAPTERS names it (a typo). */
static int runtime_adapters_check(void)
{
    const char *d = rt.cfg.adapters_dir;
    if (!d || !*d) return 0;
    const char *env = getenv("DREAM_ADAPTERS");
    bool named = env && !strcmp(env, d);
    DIR *dir = opendir(d);
    if (!dir) {
        if (errno == ENOENT) {
            /* the default place may be missing (no adapters installed); one named may be a typo */
            if (named) dream_log(DREAM_LOG_WARN, "DREAM_ADAPTERS names %s, which does not exist: no adapters are mounted", d);
            return 0;
        }
        return dream_error_set(DREAM_EIO, "the adapters directory %s%s %s: give DREAM_ADAPTERS a directory of memory-<stage>.gguf files, or unset it",
                               d, named ? " (DREAM_ADAPTERS)" : "", errno == ENOTDIR ? "is not a directory" : strerror(errno));
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        if (n <= 12 || strncmp(e->d_name, "memory-", 7) || strcmp(e->d_name + n - 5, ".gguf")) continue;
        char stage[64];
        if (n - 12 >= sizeof stage) continue;
        memcpy(stage, e->d_name + 7, n - 12);
        stage[n - 12] = '\0';
        if (check_stage(stage)) {
            dream_error_clear();
            continue;
        }
        if (strcmp(stage, "chunk") && !dream_stage_default_system(stage))
            dream_log(DREAM_LOG_WARN, "%s/%s is for a stage dream does not have ('%s'): no call mounts it", d, e->d_name, stage);
        dream_adapter *a;
        rc = stage_adapter(stage, &a);
    }
    closedir(dir);
    return rc;
}

static int runtime_batcher(void)
{
    if (rt.batcher) return 0;
    struct dream_batch_params bp = dream_batch_default_params();
    bp.width = rt.cfg.width;
    bp.seq_ctx = rt.cfg.n_ctx;
    if (rt.cfg.n_threads > 0) bp.n_threads = rt.cfg.n_threads;
    bp.flash_attn = dream_model_flash_attn_choice(rt.model, rt.cfg.flash_attn);
    return dream_batcher_new(rt.model, &bp, &rt.batcher);
}

/* The stage's adapter (memory-<stage>.gguf), loaded once; *out NULL when none is installed. */
static int stage_adapter(const char *stage, dream_adapter **out)
{
    *out = NULL;
    for (int i = 0; i < rt.n_adapters; i++)
        if (!strcmp(rt.adapters[i].stage, stage)) {
            *out = rt.adapters[i].adapter;
            return 0;
        }
    if (rt.n_adapters == (int)(sizeof rt.adapters / sizeof rt.adapters[0]) || !rt.cfg.adapters_dir) return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/memory-%s.gguf", rt.cfg.adapters_dir, stage);
    dream_adapter *a = NULL;
    if (file_exists(path)) {
        int rc = dream_adapter_load(rt.model, path, &a);
        if (rc) return dream_error_wrap(rc, "the adapter for stage '%s'", stage);
    }
    struct stage_adapter *e = &rt.adapters[rt.n_adapters++];
    snprintf(e->stage, sizeof e->stage, "%s", stage);
    e->adapter = a;
    *out = a;
    return 0;
}

static int check_stage(const char *stage)
{
    if (!stage || !*stage || strlen(stage) >= 64) return dream_error_set(DREAM_EINVAL, "a stage name of 1 to 63 characters is required");
    for (const char *p = stage; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
            return dream_error_set(DREAM_EINVAL, "stage name '%s' may use only a-z, 0-9, '-' and '_'", stage);
    return 0;
}

static int check_opts(const char *stage, const struct dream_call_opts *o)
{
    if (o->max_tokens < 0 || o->max_tokens > DREAM_MAX_OUTPUT_TOKENS)
        return dream_error_set(DREAM_EINVAL, "max_tokens %d is outside 0..%d", o->max_tokens, DREAM_MAX_OUTPUT_TOKENS);
    if (o->grammar && o->ignore_eog)
        return dream_error_set(DREAM_EINVAL, "stage '%s': an answer grammar ends at end-of-generation, so it cannot run with ignore_eog", stage);
    return 0;
}

/* What a batched call keeps of each failed request: its own message, captured when the batcher
 * reports it done (the thread's last error is that request's then). */
struct batch_errors {
    const int *status;
    char **message;
};

static void batch_done(void *ud, int req)
{
    struct batch_errors *e = ud;
    if (e->status[req] && !e->message[req]) e->message[req] = strdup(dream_error_last());
    seam_call_done((size_t)req);
}

/* Starts the watcher's account of a call of n inputs of stage (op_lock held). */
static int calls_begin(const char *stage, size_t n)
{
    rt.call_finished = calloc(n ? n : 1, sizeof *rt.call_finished);
    if (!rt.call_finished) return dream_error_set(DREAM_ENOMEM, "out of memory");
    rt.call_stage = stage;
    rt.call_n = n;
    rt.call_done = 0;
    watch_emit(&(struct dream_seam_event){.kind = DREAM_SEAM_CALLS_START, .stage = stage, .n = n});
    return 0;
}

void seam_call_done(size_t i)
{
    if (!rt.call_finished || i >= rt.call_n || rt.call_finished[i]) return;
    rt.call_finished[i] = true;
    rt.call_done++;
    watch_emit(&(struct dream_seam_event){.kind = DREAM_SEAM_CALL_DONE, .stage = rt.call_stage, .index = i, .done = rt.call_done, .n = rt.call_n});
}

/* Ends the account: inputs nobody reported (a backend that answers all at once, calls that
 * failed before decoding) are reported finished now. */
static void calls_end(void)
{
    for (size_t i = 0; rt.call_finished && i < rt.call_n; i++) seam_call_done(i);
    free(rt.call_finished);
    rt.call_finished = NULL;
    rt.call_stage = NULL;
    rt.call_n = rt.call_done = 0;
}


/* Replay: asks the replay server for the answers of the n inputs (sent as the remote backend
 * sends them) and tokenizes each into forced[i] as plain text, as the model would have generated
 * it. An input whose answer could not be had is not decoded (prompts[i] emptied) and its error
 * is returned. */
static int replay_answers(const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *o,
                          struct dream_tokens *prompts, struct dream_tokens *forced)
{
    char **gold = calloc(n ? n : 1, sizeof *gold);
    if (!gold) return dream_error_set(DREAM_ENOMEM, "out of memory");
    double t0 = now_s();
    int first_err = rt.replay.call(rt.replay.ud, stage, in, n, o, gold);
    if (first_err) first_err = dream_error_wrap(first_err, "replay from %s", rt.replay_url);
    rt.stats.replay_ms += (now_s() - t0) * 1e3;
    for (size_t i = 0; i < n; i++) {
        int e = gold[i] ? dream_tokenize(rt.model, gold[i], strlen(gold[i]), false, false, &forced[i]) : 0;
        if (e && !first_err) first_err = dream_error_wrap(e, "stage '%s', input %zu: the replayed answer", stage, i);
        if (!gold[i] || e) prompts[i].n = 0; /* not decoded */
        free(gold[i]);
    }
    free(gold);
    return first_err;
}

/* The embedded engine: n calls of one stage, with its adapter set for the whole operation and
 * always cleared afterwards, also on error. */
static int engine_calls(const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *o, char **out)
{
    int rc = runtime_load();
    if (rc) return rc;
    dream_adapter *a = NULL;
    if ((rc = stage_adapter(stage, &a))) return rc;
    const char *dflt = dream_stage_default_system(stage);
    struct dream_tokens *prompts = calloc(n ? n : 1, sizeof *prompts);
    struct dream_tokens *forced = rt.replay.call ? calloc(n ? n : 1, sizeof *forced) : NULL;
    if (!prompts || (rt.replay.call && !forced)) {
        free(prompts);
        free(forced);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    int first_err = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = NULL;
        int e = seam_prompt_tokens(rt.model, rt.tmpl, in[i].system ? in[i].system : dflt, in[i].user, &prompts[i]);
        if (e && !first_err) first_err = dream_error_wrap(e, "stage '%s', input %zu", stage, i);
        if (!e && prompts[i].n >= rt.cfg.n_ctx) {
            if (!first_err)
                first_err = dream_error_set(DREAM_ETOOBIG,
                                            "stage '%s', input %zu: the prompt has %d tokens but the context holds %d; split the input or raise DREAM_CTX",
                                            stage, i, prompts[i].n, rt.cfg.n_ctx);
            prompts[i].n = 0; /* not decoded */
        }
    }
    if (forced) {
        int e = replay_answers(stage, in, n, o, prompts, forced);
        if (e && !first_err) first_err = e;
    }
    struct dream_gen_params gp = dream_gen_default_params();
    gp.max_tokens = o->max_tokens;
    gp.ignore_eog = o->ignore_eog;
    gp.grammar = forced ? NULL : o->grammar;
    gp.forced = forced;
    struct dream_batch_stats before = rt.batcher ? dream_batcher_stats(rt.batcher) : (struct dream_batch_stats){0};
    bool batched = rt.cfg.width > 1 && n > 1 && !first_err;
    if (batched && !(rc = runtime_batcher())) {
        struct dream_gen_result *res = calloc(n, sizeof *res);
        int *status = calloc(n, sizeof *status);
        const char **grammars = calloc(n, sizeof *grammars);
        char **message = calloc(n, sizeof *message);
        struct batch_errors errs = {.status = status, .message = message};
        if (!res || !status || !grammars || !message) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        for (size_t i = 0; i < n && !rc; i++) grammars[i] = forced ? NULL : in[i].grammar;
        gp.grammars = grammars;
        gp.on_done = batch_done;
        gp.hook_ud = &errs;
        if (!rc) rc = dream_batcher_set_adapter(rt.batcher, a, o->adapter_scale);
        if (!rc) rc = dream_batcher_run(rt.batcher, prompts, (int)n, &gp, NULL, res, status);
        dream_batcher_set_adapter(rt.batcher, NULL, 0.0f);
        struct dream_batch_stats after = dream_batcher_stats(rt.batcher);
        rt.stats.prompt_tokens += after.prompt_tokens - before.prompt_tokens;
        rt.stats.prefill_tokens += after.prefill_tokens - before.prefill_tokens;
        rt.stats.saved_tokens += after.saved_tokens - before.saved_tokens;
        rt.stats.generated += after.generated - before.generated;
        for (size_t i = 0; i < n && !rc; i++) {
            if (status[i] && !first_err)
                first_err = dream_error_set(status[i], "stage '%s', input %zu: %s", stage, i, message[i] ? message[i] : "failed in the batch");
            out[i] = status[i] ? NULL : res[i].text;
            res[i].text = NULL;
            dream_gen_result_free(&res[i]);
        }
        for (size_t i = 0; message && i < n; i++) free(message[i]);
        free(message);
        free(grammars);
        free(res);
        free(status);
    } else if (!rc) {
        rc = dream_session_set_adapter(rt.session, a, o->adapter_scale);
        for (size_t i = 0; i < n && !rc; i++) {
            if (!prompts[i].n) continue; /* its render failed: already reported */
            struct dream_gen_result r;
            gp.grammar = forced ? NULL : in[i].grammar ? in[i].grammar : o->grammar;
            gp.forced = forced ? &forced[i] : NULL;
            int e = dream_generate(rt.session, prompts[i].ids, prompts[i].n, &gp, &r);
            seam_call_done(i);
            if (e) {
                if (!first_err) first_err = dream_error_wrap(e, "stage '%s', input %zu", stage, i);
                continue;
            }
            rt.stats.prompt_tokens += prompts[i].n;
            rt.stats.prefill_tokens += prompts[i].n;
            rt.stats.generated += r.n_tokens;
            out[i] = r.text;
            r.text = NULL;
            dream_gen_result_free(&r);
        }
        dream_session_set_adapter(rt.session, NULL, 0.0f);
    }
    for (size_t i = 0; i < n; i++) {
        dream_tokens_free(&prompts[i]);
        if (forced) dream_tokens_free(&forced[i]);
    }
    free(prompts);
    free(forced);
    return rc ? rc : first_err;
}

/* One call of n inputs through the installed backend or the embedded engine (op_lock held). */
static int calls_run(const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *o, char **out)
{
    if (*rt.trace_error) return dream_error_set(DREAM_EIO, "%s", rt.trace_error);
    int rc = calls_begin(stage, n);
    if (rc) return rc;
    double t0 = now_s();
    if (rt.backend.call) rc = rt.backend.call(rt.backend.ud, stage, in, n, o, out);
    else rc = engine_calls(stage, in, n, o, out); /* one input: always the serial path */
    double ms = (now_s() - t0) * 1e3;
    if (rt.trace) trace_calls(stage, in, n, out);
    rt.stats.calls++;
    rt.stats.inputs += (long)n;
    rt.stats.call_ms += ms;
    if (n == 1) {
        rt.stats.single_calls++;
        rt.stats.single_ms += ms;
    }
    calls_end();
    return rc;
}

/* With no_grammar configured, clears o's grammar and says that the inputs' must go too (with
 * op_lock held). */
static bool grammars_off(struct dream_call_opts *o)
{
    if (!rt.configured) {
        struct dream_seam_config c;
        dream_seam_default_config(&c);
        configure_locked(&c);
    }
    if (!rt.cfg.no_grammar) return false;
    o->grammar = NULL;
    return true;
}

int dream_call_local_batch(const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                           char **out)
{
    struct dream_call_opts o = opts ? *opts : dream_call_default_opts();
    int rc = check_stage(stage);
    if (!rc) rc = check_opts(stage, &o);
    for (size_t i = 0; i < n && !rc; i++) {
        out[i] = NULL;
        if (!in[i].user) rc = dream_error_set(DREAM_EINVAL, "stage '%s', input %zu has no user text", stage, i);
    }
    if (rc) return rc;
    op_lock_for_call();
    struct dream_local_input *plain = NULL;
    if (grammars_off(&o) && n && (plain = malloc(n * sizeof *plain))) {
        for (size_t i = 0; i < n; i++) plain[i] = (struct dream_local_input){.system = in[i].system, .user = in[i].user};
        in = plain;
    }
    rc = calls_run(stage, in, n, &o, out);
    pthread_mutex_unlock(&op_lock);
    free(plain);
    return rc;
}

int dream_call_local(const char *stage, const struct dream_local_input *in, const struct dream_call_opts *opts, char **out)
{
    *out = NULL;
    struct dream_call_opts o = opts ? *opts : dream_call_default_opts();
    int rc = check_stage(stage);
    if (!rc) rc = check_opts(stage, &o);
    if (!rc && !in->user) rc = dream_error_set(DREAM_EINVAL, "stage '%s': the input has no user text", stage);
    if (rc) return rc;
    op_lock_for_call();
    struct dream_local_input plain = {.system = in->system, .user = in->user};
    if (grammars_off(&o)) in = &plain;
    rc = calls_run(stage, in, 1, &o, out);
    pthread_mutex_unlock(&op_lock);
    return rc;
}

void dream_seam_shutdown(void)
{
    pthread_mutex_lock(&op_lock);
    runtime_unload();
    pthread_mutex_unlock(&op_lock);
}

struct dream_batch_stats dream_seam_batch_stats(void)
{
    pthread_mutex_lock(&op_lock);
    struct dream_batch_stats st = {0};
    if (rt.batcher) st = dream_batcher_stats(rt.batcher);
    pthread_mutex_unlock(&op_lock);
    return st;
}

struct dream_seam_stats dream_seam_stats(void)
{
    pthread_mutex_lock(&op_lock);
    struct dream_seam_stats st = rt.stats;
    pthread_mutex_unlock(&op_lock);
    return st;
}

void dream_seam_set_watch(dream_seam_watch_fn fn, void *ud)
{
    pthread_mutex_lock(&op_lock);
    rt.watch = fn;
    rt.watch_ud = ud;
    pthread_mutex_unlock(&op_lock);
}

int dream_seam_set_backend(const struct dream_backend *b)
{
    pthread_mutex_lock(&op_lock);
    if (rt.backend.destroy) rt.backend.destroy(rt.backend.ud);
    if (b) rt.backend = *b;
    else memset(&rt.backend, 0, sizeof rt.backend);
    pthread_mutex_unlock(&op_lock);
    return 0;
}

/* What the batcher's hooks need to reach each chat request, by batch position. */
struct chat_hooks {
    struct dream_chat_request **req; /* batch position → request */
    uint64_t *rng;
    struct dream_tokens *prompts;
    int *max_tokens;
    const char **grammars;
    int seq_ctx;
    struct dream_chat_request *(*more)(void *ud);
    void *more_ud;
    struct dream_gen_result *res;
    int *status;
    bool *done; /* results filled and on_done called */
};

/* Fills request req's results from the batcher's; once. */
static void chat_results(struct chat_hooks *h, int req)
{
    struct dream_chat_request *r = h->req[req];
    if (h->done[req]) return;
    h->done[req] = true;
    if (h->status[req]) {
        r->status = h->status[req];
        /* called when the batcher reports it, the thread's last error is this request's own */
        const char *why = dream_error_code() == h->status[req] ? dream_error_last() : "";
        if (*why) snprintf(r->error_message, sizeof r->error_message, "%s", why);
        else snprintf(r->error_message, sizeof r->error_message, "the request failed in the batch (%s)", dream_status_str(h->status[req]));
    } else {
        r->n_completion = h->res[req].n_tokens;
        r->stopped_at_eog = h->res[req].stopped_at_eog;
    }
    if (r->on_done) r->on_done(r->ud);
}

static void chat_on_done(void *ud, int req) { chat_results(ud, req); }

static dream_token chat_choose(void *ud, int req, const float *logits, int n_vocab)
{
    struct chat_hooks *h = ud;
    const struct dream_chat_request *r = h->req[req];
    return dream_sample_token(logits, n_vocab, r->temperature, r->top_p, &h->rng[req]);
}

static bool chat_on_token(void *ud, int req, dream_token token)
{
    struct chat_hooks *h = ud;
    struct dream_chat_request *r = h->req[req];
    if (!r->on_text) return true;
    char small[256];
    char *piece = small;
    int k = dream_token_to_piece(rt.model, token, false, small, sizeof small);
    if (k < 0) {
        piece = malloc((size_t)-k);
        if (!piece) return false;
        k = dream_token_to_piece(rt.model, token, false, piece, -k);
    }
    bool go = r->on_text(r->ud, piece, k > 0 ? (size_t)k : 0);
    if (piece != small) free(piece);
    return go;
}

static void chat_fail(struct dream_chat_request *r, int rc)
{
    r->status = rc;
    snprintf(r->error_message, sizeof r->error_message, "%s", dream_error_last());
}

/* Renders and tokenizes r into batch position m; 0, or r has failed alone (its status set). */
static int chat_admit(struct chat_hooks *h, struct dream_chat_request *r, int m)
{
    r->status = 0;
    r->error_message[0] = 0;
    r->n_prompt = r->n_completion = 0;
    r->stopped_at_eog = false;
    memset(&h->prompts[m], 0, sizeof h->prompts[m]);
    int e = r->max_tokens < 0 ? dream_error_set(DREAM_EINVAL, "max_tokens is %d; give 0 or more", r->max_tokens) : 0;
    if (!e && !r->n_messages) e = dream_error_set(DREAM_EINVAL, "the conversation has no messages");
    if (!e) e = seam_chat_tokens(rt.model, rt.tmpl, r->messages, r->n_messages, &h->prompts[m]);
    if (!e && h->prompts[m].n >= h->seq_ctx)
        e = dream_error_set(DREAM_ETOOBIG, "the conversation has %d tokens but the context holds %d; shorten it", h->prompts[m].n, h->seq_ctx);
    if (e) {
        chat_fail(r, e);
        dream_tokens_free(&h->prompts[m]);
        if (r->on_done) r->on_done(r->ud);
        return e;
    }
    r->n_prompt = h->prompts[m].n;
    h->req[m] = r;
    h->max_tokens[m] = r->max_tokens;
    h->grammars[m] = r->grammar;
    h->rng[m] = r->seed;
    return 0;
}

/* The batcher's join hook: the next waiting request that renders, at position n. */
static int chat_more(void *ud, int n)
{
    struct chat_hooks *h = ud;
    if (atomic_load(&calls_waiting) > 0) return n; /* a stage call waits: let this batch drain */
    for (struct dream_chat_request *r; (r = h->more(h->more_ud));)
        if (!chat_admit(h, r, n)) return n + 1;
    return n;
}

static int chat_run(struct dream_chat_request *reqs, size_t n, struct dream_chat_request *(*more)(void *ud), void *ud)
{
    if (!n && !more) return 0;
    op_lock_for_chat();
    int rc = runtime_load();
    if (!rc) rc = runtime_batcher();
    size_t cap = n + (more ? DREAM_CHAT_JOIN_MAX : 0) + 1;
    struct chat_hooks h = {.req = calloc(cap, sizeof *h.req), .rng = calloc(cap, sizeof *h.rng), .prompts = calloc(cap, sizeof *h.prompts),
                           .max_tokens = calloc(cap, sizeof *h.max_tokens), .grammars = calloc(cap, sizeof *h.grammars),
                           .seq_ctx = rt.cfg.n_ctx, .more = more, .more_ud = ud};
    int *status = h.status = calloc(cap, sizeof *status);
    struct dream_gen_result *res = h.res = calloc(cap, sizeof *res);
    h.done = calloc(cap, sizeof *h.done);
    if (!rc && (!h.req || !h.rng || !h.prompts || !h.max_tokens || !h.grammars || !status || !res || !h.done)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    int m = 0; /* requests that go to the batcher */
    for (size_t i = 0; i < n && !rc; i++)
        if (!chat_admit(&h, &reqs[i], m)) m++;
    if (!rc && m == 0 && more) m = chat_more(&h, 0);
    if (!rc && m > 0) {
        struct dream_gen_params gp = dream_gen_default_params();
        gp.choose = chat_choose;
        gp.on_token = chat_on_token;
        gp.more = more ? chat_more : NULL;
        gp.on_done = chat_on_done;
        gp.capacity = (int)cap - 1;
        gp.grammars = h.grammars;
        gp.hook_ud = &h;
        rc = dream_batcher_set_adapter(rt.batcher, NULL, 0.0f);
        /* the batcher writes joined requests' prompts and budgets into h's arrays, so it is
         * given those arrays, and m grows as they join */
        if (!rc) rc = dream_batcher_run(rt.batcher, h.prompts, m, &gp, h.max_tokens, res, status);
        int failed = rc;
        for (int k = 0; k < (int)cap - 1 && h.req[k]; k++) {
            if (failed && !h.done[k]) { /* abandoned by a failing run: its out[] is already freed */
                chat_fail(h.req[k], failed);
                h.done[k] = true;
                if (h.req[k]->on_done) h.req[k]->on_done(h.req[k]->ud);
                continue;
            }
            chat_results(&h, k);
            if (!failed) dream_gen_result_free(&res[k]);
        }
    }
    for (size_t i = 0; h.prompts && i < cap; i++) dream_tokens_free(&h.prompts[i]);
    free(h.req);
    free(h.rng);
    free(h.prompts);
    free(h.max_tokens);
    free(h.grammars);
    free(status);
    free(res);
    free(h.done);
    pthread_mutex_unlock(&op_lock);
    return rc;
}

int dream_seam_chat(struct dream_chat_request *reqs, size_t n) { return chat_run(reqs, n, NULL, NULL); }

int dream_seam_chat_join(struct dream_chat_request *reqs, size_t n, struct dream_chat_request *(*more)(void *ud), void *ud)
{
    return chat_run(reqs, n, more, ud);
}

bool dream_seam_names_from_text(void)
{
    const char *env = getenv("DREAM_NAMES_FROM_TEXT");
    if (env && *env) return strcmp(env, "0") != 0;
    pthread_mutex_lock(&op_lock);
    bool on = false;
    /* a remote or scripted backend has no GGUF to ask; a model that fails to load fails the
     * stage's own call next, with its error */
    if (!rt.backend.call && !runtime_load()) on = !rt.cfg.no_grammar && dream_model_meta_bool(rt.model, "dream.names_from_text");
    pthread_mutex_unlock(&op_lock);
    return on;
}

int dream_seam_load(const char **name, int *seq_ctx)
{
    static char base[256];
    pthread_mutex_lock(&op_lock);
    int rc = runtime_load();
    if (!rc) rc = runtime_batcher();
    if (!rc) {
        const char *p = dream_model_path(rt.model), *slash = strrchr(p, '/');
        snprintf(base, sizeof base, "%s", slash ? slash + 1 : p);
        char *dot = strrchr(base, '.');
        if (dot && !strcmp(dot, ".gguf")) *dot = 0;
        if (name) *name = base;
        if (seq_ctx) *seq_ctx = rt.cfg.n_ctx;
    }
    pthread_mutex_unlock(&op_lock);
    return rc;
}
