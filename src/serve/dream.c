/* dream.c — POST /v1/memory/dream: runs the Dreaming (dream/pipeline.h) on the server's store
 * and wiki, the run `dream run` makes, under the same run lock.
 *
 * The handler takes the run lock itself, so a store another run is working on (here or in a
 * `dream run` process) is answered at once with 409. The run then goes on in a thread of its
 * own, which calls the model through the seam like every stage (chat requests and stage calls
 * take turns on the one model). Its progress is sent as server-sent events:
 *
 *   event: start     data: {"stage"}
 *   event: progress  data: {"stage","done","total"}
 *   event: stage     data: {"stage","skipped","dry_run","seconds","counts":{...},"summary"}
 *   event: done      data: {"ok":true,"stopped","stages":[<each stage event's object>]}
 *   event: error     data: {"error":{"message","type","param","code"},"stages":[...]}
 *
 * With "stream": false the reply is the done (200) or error object once the run ends (404 for
 * an unknown conversation, 500 when a stage failed). A
 * client that goes away does not stop the run: what it does is stored either way, and every
 * stage is resumable. A stopping server lets the running stage finish and starts no other
 * ("stopped": true in the done object; the next run goes on from there).
 *
 * The body (optional, JSON): {"stage","limit","batch","dry_run","conversation","tie_break",
 * "engagement","stream"}, as `dream run`'s options. */
#include "serve_handlers.h"

#include "dream/error.h"
#include "dream/log.h"
#include "dream/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One run: written by its thread, read by the connection that asked for it. */
struct dream_run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;            /* the thread and the connection */
    struct dbuf events;  /* the SSE text so far */
    json_t *stages;      /* the stage reports so far */
    json_t *final;       /* the done or error object, once the run has ended */
    bool ended;
    int rc;              /* the run's status, once ended */
    struct serve_dream_body body; /* the run's parameters (body.p), strings owned here */
    int lock_fd;
    struct serve_dream *owner;
};

struct serve_dream {
    pthread_mutex_t mu;
    pthread_cond_t idle; /* signalled when a run's thread ends */
    int running;         /* run threads alive (detached; at most one holds the lock) */
    int streams;         /* event streams not yet closed */
    bool stopping;
};

static void run_unref(struct dream_run *r)
{
    pthread_mutex_lock(&r->mu);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (!last) return;
    dbuf_free(&r->events);
    json_decref(r->stages);
    json_decref(r->final);
    serve_dream_body_free(&r->body);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

/* Appends one event (takes the reference to data) and wakes the reader. Under r->mu. */
static void run_event_locked(struct dream_run *r, const char *name, json_t *data)
{
    char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
    if (text) dbuf_printf(&r->events, "event: %s\ndata: %s\n\n", name, text);
    free(text);
    json_decref(data);
    pthread_cond_broadcast(&r->cv);
}

static void run_event(struct dream_run *r, const char *name, json_t *data)
{
    pthread_mutex_lock(&r->mu);
    run_event_locked(r, name, data);
    pthread_mutex_unlock(&r->mu);
}

static void on_start(void *ud, const char *stage) { run_event(ud, "start", json_pack("{ss}", "stage", stage)); }

static void on_progress(void *ud, const char *stage, size_t done, size_t total)
{
    run_event(ud, "progress", json_pack("{ss sI sI}", "stage", stage, "done", (json_int_t)done, "total", (json_int_t)total));
}

static void on_stage(void *ud, const struct dream_stage_report *rep)
{
    struct dream_run *r = ud;
    json_t *counts = json_object();
    for (size_t i = 0; counts && i < rep->n_counts; i++) json_object_set_new(counts, rep->counts[i].name, json_integer((json_int_t)rep->counts[i].value));
    json_t *o = json_pack("{ss sb sb sf so ss}", "stage", rep->stage, "skipped", rep->skipped, "dry_run", rep->dry_run, "seconds", rep->seconds,
                          "counts", counts ? counts : json_object(), "summary", rep->summary);
    pthread_mutex_lock(&r->mu);
    if (o) json_array_append(r->stages, o);
    run_event_locked(r, "stage", o);
    pthread_mutex_unlock(&r->mu);
}

static bool should_stop(void *ud)
{
    struct serve_dream *d = ud;
    pthread_mutex_lock(&d->mu);
    bool stop = d->stopping;
    pthread_mutex_unlock(&d->mu);
    return stop;
}

static void *run_thread(void *arg)
{
    struct dream_run *r = arg;
    int rc = dream_pipeline_run(&r->body.p);
    dream_run_unlock(r->lock_fd);
    pthread_mutex_lock(&r->mu);
    if (rc) {
        dream_log(DREAM_LOG_WARN, "POST /v1/memory/dream: %s", dream_error_last());
        struct dbuf clean = {0};
        const char *msg = dream_error_last();
        serve_utf8_clean(msg, strlen(msg), &clean);
        bool theirs = rc == DREAM_EINVAL || rc == DREAM_ENOTFOUND; /* the request named something wrong */
        r->final = json_pack("{s:{s:s, s:s, s:n, s:s}, s:O}", "error", "message", clean.data ? clean.data : "the run failed", "type",
                             theirs ? "invalid_request_error" : "server_error", "param", "code",
                             rc == DREAM_EBUSY ? "run_in_progress" : rc == DREAM_ENOTFOUND ? "not_found" : theirs ? "invalid_argument" : "run_failed",
                             "stages", r->stages);
        dbuf_free(&clean);
    } else {
        /* fewer stages than asked for: the server was stopping and the run ended early */
        r->final = json_pack("{sb sb sO}", "ok", 1, "stopped", should_stop(r->owner), "stages", r->stages);
    }
    json_incref(r->final);
    run_event_locked(r, rc ? "error" : "done", r->final);
    r->rc = rc;
    r->ended = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    struct serve_dream *d = r->owner;
    run_unref(r);
    pthread_mutex_lock(&d->mu);
    d->running--;
    pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- the SSE reply ------------------------------------------------------------------------- */

struct dream_stream {
    struct dream_run *r;
    size_t sent;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct dream_stream *st = cls;
    struct dream_run *r = st->r;
    pthread_mutex_lock(&r->mu);
    while (st->sent >= r->events.len && !r->ended) pthread_cond_wait(&r->cv, &r->mu);
    size_t n = r->events.len - st->sent;
    if (n > max) n = max;
    if (n) memcpy(buf, r->events.data + st->sent, n);
    st->sent += n;
    pthread_mutex_unlock(&r->mu);
    return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_done(void *cls)
{
    struct dream_stream *st = cls;
    struct serve_dream *d = st->r->owner;
    run_unref(st->r);
    free(st);
    pthread_mutex_lock(&d->mu);
    d->streams--;
    pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->mu);
}

/* ---- the handler ----------------------------------------------------------------------------- */

int serve_dream_parse(const char *body, size_t len, struct serve_dream_body *out, char *err, size_t errlen)
{
    *out = (struct serve_dream_body){.stream = true};
    dream_pipeline_default_params(&out->p);
    if (!len) return 0;
    json_error_t je;
    json_t *b = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    if (!b || !json_is_object(b)) {
        snprintf(err, errlen, "the body must be a JSON object (or empty)%s%s", b ? "" : ": ", b ? "" : serve_json_why(&je));
        json_decref(b);
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(b, key, v)
    {
        bool ok = true;
        if (!strcmp(key, "stage") || !strcmp(key, "conversation")) {
            ok = json_is_string(v);
            if (ok && !strcmp(key, "stage") && dream_pipeline_stage_check(json_string_value(v))) {
                snprintf(err, errlen, "%s", dream_error_last());
                dream_error_clear();
                goto fail;
            }
            char **dst = !strcmp(key, "stage") ? &out->stage : &out->conversation;
            if (ok) {
                free(*dst);
                *dst = strdup(json_string_value(v));
            }
        } else if (!strcmp(key, "limit") || !strcmp(key, "batch") || !strcmp(key, "engagement")) {
            json_int_t n = json_integer_value(v);
            ok = json_is_integer(v) && n >= (strcmp(key, "batch") ? 0 : 1) && n <= 1000000;
            if (ok && !strcmp(key, "limit")) out->p.limit = (size_t)n;
            else if (ok && !strcmp(key, "batch")) out->p.batch = (size_t)n;
            else if (ok) out->p.engagement = (int)n;
        } else if (!strcmp(key, "dry_run") || !strcmp(key, "tie_break") || !strcmp(key, "stream")) {
            ok = json_is_boolean(v);
            if (ok && !strcmp(key, "dry_run")) out->p.dry_run = json_is_true(v);
            else if (ok && !strcmp(key, "tie_break")) out->p.tie_break = json_is_true(v);
            else if (ok) out->stream = json_is_true(v);
        } else {
            snprintf(err, errlen, "unknown field '%s' (this endpoint takes stage, limit, batch, dry_run, conversation, tie_break, engagement, stream)",
                     key);
            goto fail;
        }
        if (!ok) {
            snprintf(err, errlen, "'%s' has the wrong type or is out of range (stage and conversation are strings; limit, batch (>= 1) and "
                                  "engagement are integers up to 1000000; dry_run, tie_break and stream are booleans)",
                     key);
            goto fail;
        }
    }
    json_decref(b);
    out->p.stage = out->stage;
    out->p.conversation = out->conversation;
    return 0;
fail:
    json_decref(b);
    serve_dream_body_free(out);
    return -1;
}

void serve_dream_body_free(struct serve_dream_body *b)
{
    free(b->stage);
    free(b->conversation);
    b->stage = b->conversation = NULL;
    b->p.stage = b->p.conversation = NULL;
}

enum MHD_Result serve_dream_run(struct serve_request *rq)
{
    struct dream_server *s = rq->server;
    struct serve_dream *d = s->dream;
    struct dream_run *r = calloc(1, sizeof *r);
    if (!r || !(r->stages = json_array())) {
        free(r);
        return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "out of memory");
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->refs = 1;
    r->lock_fd = -1;
    r->owner = d;
    char err[512];
    if (serve_dream_parse(rq->body, rq->body_len, &r->body, err, sizeof err)) {
        run_unref(r);
        return serve_reply_error(rq, MHD_HTTP_BAD_REQUEST, "invalid_request_error", "invalid_argument", "%s", err);
    }
    r->body.p.store_path = s->store_path;
    r->body.p.wiki_dir = s->wiki_dir;
    r->body.p.on_start = on_start;
    r->body.p.on_stage = on_stage;
    r->body.p.stage_ud = r;
    r->body.p.on_progress = on_progress;
    r->body.p.progress_ud = r;
    r->body.p.stop = should_stop;
    r->body.p.stop_ud = d;
    if (!r->body.p.dry_run) {
        if (dream_run_lock(s->store_path, &r->lock_fd)) {
            int code = dream_error_code();
            run_unref(r);
            if (code == DREAM_EBUSY) return serve_reply_error(rq, MHD_HTTP_CONFLICT, "conflict_error", "run_in_progress", "%s", dream_error_last());
            return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "%s", dream_error_last());
        }
        r->body.p.lock_held = true;
    }

    pthread_mutex_lock(&d->mu);
    if (d->stopping) {
        pthread_mutex_unlock(&d->mu);
        dream_run_unlock(r->lock_fd);
        run_unref(r);
        return serve_reply_error(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "server_error", "stopping", "the server is stopping");
    }
    r->refs = 2;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int prc = pthread_create(&t, &attr, run_thread, r);
    pthread_attr_destroy(&attr);
    if (!prc) d->running++;
    pthread_mutex_unlock(&d->mu);
    if (prc) {
        dream_run_unlock(r->lock_fd);
        r->refs = 1;
        run_unref(r);
        return serve_reply_error(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "server_error", NULL, "could not start the run's thread");
    }

    if (r->body.stream) {
        struct dream_stream *st = calloc(1, sizeof *st);
        if (!st) {
            run_unref(r);
            return MHD_NO;
        }
        st->r = r;
        pthread_mutex_lock(&d->mu);
        d->streams++;
        pthread_mutex_unlock(&d->mu);
        return serve_reply_stream(rq, stream_read, st, stream_done); /* stream_done runs even when this fails */
    }
    pthread_mutex_lock(&r->mu);
    while (!r->ended) pthread_cond_wait(&r->cv, &r->mu);
    json_t *final = json_incref(r->final);
    int rc = r->rc;
    pthread_mutex_unlock(&r->mu);
    run_unref(r);
    unsigned status = !rc                    ? MHD_HTTP_OK
                      : rc == DREAM_EINVAL    ? MHD_HTTP_BAD_REQUEST
                      : rc == DREAM_ENOTFOUND ? MHD_HTTP_NOT_FOUND
                      : rc == DREAM_EBUSY     ? MHD_HTTP_CONFLICT
                                              : MHD_HTTP_INTERNAL_SERVER_ERROR;
    return serve_reply_json(rq, status, final);
}

int serve_dream_start(struct dream_server *s)
{
    s->dream = calloc(1, sizeof *s->dream);
    if (!s->dream) return dream_error_set(DREAM_ENOMEM, "out of memory");
    pthread_mutex_init(&s->dream->mu, NULL);
    pthread_cond_init(&s->dream->idle, NULL);
    return 0;
}

/* No new run starts; waits for the running ones, which stop before their next stage, and (up
 * to 5 s) for their streams to be sent. */
void serve_dream_stop(struct dream_server *s)
{
    struct serve_dream *d = s->dream;
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    while (d->running > 0) pthread_cond_wait(&d->idle, &d->mu);
    /* then give the streams a moment to send their last events (a client that stopped
     * reading is not waited for long) */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (d->streams > 0 && pthread_cond_timedwait(&d->idle, &d->mu, &until) == 0) {
    }
    pthread_mutex_unlock(&d->mu);
}

void serve_dream_free(struct dream_server *s)
{
    if (!s->dream) return;
    pthread_cond_destroy(&s->dream->idle);
    pthread_mutex_destroy(&s->dream->mu);
    free(s->dream);
    s->dream = NULL;
}
