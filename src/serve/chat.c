/* chat.c — POST /v1/chat/completions and GET /v1/models.
 *
 * Connection threads parse a request into a job and queue it; one worker thread runs the seam's
 * scheduler, and whenever a sequence is free the scheduler pulls the next waiting job, so a
 * request joins the running batch at the next step instead of waiting for the others to finish
 * (continuous batching across clients). The worker feeds each job's text as it is generated and
 * answers each job as soon as it ends; a streaming connection sends the text on as server-sent
 * events, a plain one waits for its own end. */
#include "serve_handlers.h"

#include "dream/error.h"
#include "dream/log.h"
#include "dream/model.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define CHAT_MAX_STOPS 4
#define CHAT_MAX_MESSAGES 4096

struct chat_job {
    int refs; /* guarded by serve_chat.mu, as is everything below `queued` */
    /* the request (read-only once queued) */
    json_t *json; /* owns the strings messages point into */
    struct dream_chat_message *messages;
    size_t n_messages;
    int max_tokens;
    float temperature, top_p;
    uint64_t seed;
    char *stops[CHAT_MAX_STOPS];
    int n_stops;
    const char *grammar; /* GBNF (llama-server's `grammar` field), in json; NULL: none */
    bool stream, include_usage;
    char id[40];
    long created;
    /* progress */
    struct chat_job *next;
    pthread_cond_t cv;
    struct dbuf text; /* generated so far (cut at a stop string) */
    bool stopped_by_string;
    bool done, cancelled;
    bool cut_by_stop; /* the server's shutdown cut the answer short */
    int status;
    char error[256];
    int n_prompt, n_completion;
    bool stopped_at_eog;
    /* owned by the worker while the job runs */
    struct dream_chat_request req;
    struct hook_ctx {
        struct serve_chat *c;
        struct chat_job *j;
    } hook;
    struct chat_job *run_next; /* the worker's list of the jobs it took in this run */
};

struct serve_chat {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* the worker waits here for jobs */
    struct chat_job *head, *tail;
    bool stopping;
    pthread_t worker;
    bool started;
    unsigned long counter;
};

static void job_unref(struct serve_chat *c, struct chat_job *j)
{
    pthread_mutex_lock(&c->mu);
    bool last = --j->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (!last) return;
    json_decref(j->json);
    free(j->messages);
    for (int i = 0; i < j->n_stops; i++) free(j->stops[i]);
    dbuf_free(&j->text);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* The worker's text hook (under c->mu): appends, then cuts at the first stop string. */
static bool job_on_text(void *ud, const char *piece, size_t len)
{
    struct hook_ctx *h = ud;
    struct chat_job *j = h->j;
    pthread_mutex_lock(&h->c->mu);
    bool go = !j->cancelled && !h->c->stopping; /* a stopping server cuts running answers short */
    if (h->c->stopping && !j->cancelled) j->cut_by_stop = true;
    size_t old = j->text.len;
    if (go && dbuf_append(&j->text, piece, len)) go = false;
    for (int i = 0; go && i < j->n_stops; i++) {
        size_t sl = strlen(j->stops[i]);
        size_t from = old >= sl ? old - sl + 1 : 0;
        char *hit = j->text.len >= sl ? memmem(j->text.data + from, j->text.len - from, j->stops[i], sl) : NULL;
        if (hit) {
            j->text.len = (size_t)(hit - j->text.data);
            j->text.data[j->text.len] = 0;
            j->stopped_by_string = true;
            go = false;
        }
    }
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&h->c->mu);
    return go;
}

/* A job's results are final: publish them, wake its connection, drop the queue's reference. */
static void job_finish(struct serve_chat *c, struct chat_job *j, int rc, const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (j->done) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    j->status = rc ? rc : j->req.status;
    snprintf(j->error, sizeof j->error, "%s", rc ? why : j->req.error_message);
    if (!j->status && j->cut_by_stop) { /* not a "length" finish: the answer is not whole */
        j->status = DREAM_EBUSY;
        snprintf(j->error, sizeof j->error, "the server shut down before the answer was complete: send the request again once it is back");
    }
    j->n_prompt = j->req.n_prompt;
    j->n_completion = j->req.n_completion;
    j->stopped_at_eog = j->req.stopped_at_eog;
    j->done = true;
    bool left = j->cancelled;
    int n = j->n_completion;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&c->mu);
    if (left) dream_log(DREAM_LOG_INFO, "chat: %s stopped after %d generated token(s): its client went away", j->id, n);
    job_unref(c, j);
}

static void job_on_done(void *ud)
{
    struct hook_ctx *h = ud;
    job_finish(h->c, h->j, 0, "");
}

struct worker_run {
    struct serve_chat *c;
    struct chat_job *taken; /* every job handed to the seam in this run */
};

/* The seam's join hook: the next waiting job that is still wanted, or NULL (never blocks). */
static struct dream_chat_request *worker_more(void *ud)
{
    struct worker_run *w = ud;
    struct serve_chat *c = w->c;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        struct chat_job *j = c->stopping ? NULL : c->head;
        if (j) {
            c->head = j->next;
            if (!c->head) c->tail = NULL;
            j->next = NULL;
        }
        bool cancelled = j && j->cancelled;
        if (cancelled) j->done = true; /* its client went away while it waited */
        else if (j) j->refs++;         /* the worker's own, until the run is over */
        pthread_mutex_unlock(&c->mu);
        if (!j) return NULL;
        if (cancelled) {
            job_unref(c, j);
            continue;
        }
        j->hook = (struct hook_ctx){c, j};
        j->req = (struct dream_chat_request){.messages = j->messages, .n_messages = j->n_messages, .max_tokens = j->max_tokens,
                                             .temperature = j->temperature, .top_p = j->top_p, .seed = j->seed, .grammar = j->grammar,
                                             .on_text = job_on_text, .on_done = job_on_done, .ud = &j->hook};
        j->run_next = w->taken;
        w->taken = j;
        return &j->req;
    }
}

static void *worker_main(void *arg)
{
    struct serve_chat *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (!c->head && !c->stopping) pthread_cond_wait(&c->cv, &c->mu);
        bool stop = c->stopping;
        pthread_mutex_unlock(&c->mu);
        if (stop) break;
        struct worker_run w = {.c = c};
        int rc = dream_seam_chat_join(NULL, 0, worker_more, &w);
        const char *why = rc ? dream_error_last() : "";
        if (rc) dream_log(DREAM_LOG_ERROR, "serve: a batch failed: %s", why);
        /* every job is answered by now unless the run failed before reaching it */
        for (struct chat_job *j = w.taken, *next; j; j = next) {
            next = j->run_next;
            job_finish(c, j, rc, why);
            job_unref(c, j); /* the worker's */
        }
    }
    return NULL;
}

int serve_chat_start(struct dream_server *s)
{
    struct serve_chat *c = calloc(1, sizeof *c);
    if (!c) return dream_error_set(DREAM_ENOMEM, "out of memory");
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    s->chat = c;
    if (pthread_create(&c->worker, NULL, worker_main, c)) return dream_error_set(DREAM_EINTERNAL, "could not start the server's worker thread");
    c->started = true;
    return 0;
}

/* Ends every job (queued ones fail, running ones are cut short) and joins the worker. The
 * struct stays until serve_chat_free: connection threads may still hold jobs. */
void serve_chat_stop(struct dream_server *s)
{
    struct serve_chat *c = s->chat;
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    for (struct chat_job *j = c->head, *next; j; j = next) {
        next = j->next;
        j->cancelled = j->done = true;
        j->status = DREAM_EBUSY; /* 503 */
        snprintf(j->error, sizeof j->error, "the server is shutting down: send the request again once it is back");
        pthread_cond_broadcast(&j->cv);
        j->refs--; /* the queue's reference; the connection still holds its own */
    }
    c->head = c->tail = NULL;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (c->started) pthread_join(c->worker, NULL);
    c->started = false;
}

void serve_chat_free(struct dream_server *s)
{
    struct serve_chat *c = s->chat;
    if (!c) return;
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    s->chat = NULL;
}

/* ---- parsing the request ---- */

static const char *role_name(const char *role)
{
    if (!strcmp(role, "system") || !strcmp(role, "developer")) return "system";
    if (!strcmp(role, "user")) return "user";
    if (!strcmp(role, "assistant")) return "assistant";
    return NULL;
}

/* *t = now + ms, as pthread_cond_timedwait reads it (CLOCK_REALTIME). */
static void chat_in_ms(struct timespec *t, long ms)
{
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_nsec += ms * 1000000L;
    if (t->tv_nsec >= 1000000000L) t->tv_sec++, t->tv_nsec -= 1000000000L;
}

/* Whether the client on fd has closed its side: the socket reads as ended (a pipelined next
 * request reads as data, which is not an end) or reports a hang-up or an error. A client that
 * only shuts down its sending side and still waits reads the same, so it is taken as gone too,
 * as llama-server's HTTP layer takes it; HTTP clients keep their side open for the answer. */
static bool chat_client_gone(int fd)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&pf, 1, 0) <= 0) return false;
    if (pf.revents & (POLLHUP | POLLERR | POLLRDHUP)) return true;
    char b;
    ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Fills j from the request body; on a bad request writes the message into err and returns -1. */
static int parse_request(const struct dream_serve_params *sp, struct chat_job *j, char *err, size_t errlen, const char **param)
{
    json_t *root = j->json;
    if (!json_is_object(root)) return snprintf(err, errlen, "the request body must be a JSON object"), -1;
    json_t *msgs = json_object_get(root, "messages");
    *param = "messages";
    if (!json_is_array(msgs) || json_array_size(msgs) == 0)
        return snprintf(err, errlen, "'messages' must be a non-empty array of {\"role\", \"content\"} objects"), -1;
    if (json_array_size(msgs) > CHAT_MAX_MESSAGES) return snprintf(err, errlen, "at most %d messages are accepted", CHAT_MAX_MESSAGES), -1;
    j->n_messages = json_array_size(msgs);
    j->messages = calloc(j->n_messages, sizeof *j->messages);
    if (!j->messages) return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < j->n_messages; i++) {
        json_t *m = json_array_get(msgs, i), *role = json_object_get(m, "role"), *content = json_object_get(m, "content");
        const char *r = json_is_string(role) ? role_name(json_string_value(role)) : NULL;
        if (!r)
            return snprintf(err, errlen, "messages[%zu].role must be \"system\", \"developer\", \"user\" or \"assistant\"", i), -1;
        j->messages[i].role = r;
        if (json_is_string(content)) j->messages[i].content = json_string_value(content);
        else if (json_is_null(content) || !content) j->messages[i].content = "";
        else if (json_is_array(content)) {
            /* text parts are joined; the joined string is kept in the message object */
            struct dbuf t = {0};
            for (size_t k = 0; k < json_array_size(content); k++) {
                json_t *part = json_array_get(content, k), *type = json_object_get(part, "type"), *text = json_object_get(part, "text");
                if (!json_is_string(type) || strcmp(json_string_value(type), "text") || !json_is_string(text)) {
                    dbuf_free(&t);
                    return snprintf(err, errlen, "messages[%zu].content[%zu]: only {\"type\":\"text\",\"text\":...} parts are supported", i, k), -1;
                }
                dbuf_puts(&t, json_string_value(text));
            }
            json_t *joined = json_string(t.data ? t.data : "");
            dbuf_free(&t);
            if (!joined || json_object_set_new(m, "content", joined)) return snprintf(err, errlen, "out of memory"), -1;
            j->messages[i].content = json_string_value(joined);
        } else return snprintf(err, errlen, "messages[%zu].content must be a string or an array of text parts", i), -1;
    }
    json_t *v;
    *param = "max_tokens";
    j->max_tokens = sp->max_tokens;
    if (!(v = json_object_get(root, "max_tokens")) || json_is_null(v)) v = json_object_get(root, "max_completion_tokens");
    if (v && !json_is_null(v)) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > sp->max_tokens)
            return snprintf(err, errlen, "max_tokens must be an integer from 1 to %d (this server's limit, dream serve --max-tokens)",
                            sp->max_tokens), -1;
        j->max_tokens = (int)json_integer_value(v);
    }
    *param = "temperature";
    j->temperature = 1.0f; /* OpenAI's default */
    if ((v = json_object_get(root, "temperature")) && !json_is_null(v)) {
        if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 2)
            return snprintf(err, errlen, "temperature must be a number from 0 to 2 (0 = greedy)"), -1;
        j->temperature = (float)json_number_value(v);
    }
    *param = "top_p";
    j->top_p = 1.0f;
    if ((v = json_object_get(root, "top_p")) && !json_is_null(v)) {
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1)
            return snprintf(err, errlen, "top_p must be a number in (0, 1]"), -1;
        j->top_p = (float)json_number_value(v);
    }
    *param = "seed";
    if ((v = json_object_get(root, "seed")) && !json_is_null(v)) {
        if (!json_is_integer(v)) return snprintf(err, errlen, "seed must be an integer"), -1;
        j->seed = (uint64_t)json_integer_value(v);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        j->seed = (uint64_t)ts.tv_nsec * 6364136223846793005ull + (uint64_t)ts.tv_sec;
    }
    *param = "n";
    if ((v = json_object_get(root, "n")) && !json_is_null(v) && !(json_is_integer(v) && json_integer_value(v) == 1))
        return snprintf(err, errlen, "only n = 1 is supported"), -1;
    *param = "stop";
    if ((v = json_object_get(root, "stop")) && !json_is_null(v)) {
        if (json_is_string(v)) v = json_pack("[O]", v);
        else json_incref(v);
        bool ok = json_is_array(v) && json_array_size(v) <= CHAT_MAX_STOPS;
        for (size_t k = 0; ok && k < json_array_size(v); k++) {
            json_t *sv = json_array_get(v, k);
            ok = json_is_string(sv) && json_string_length(sv) > 0 && json_string_length(sv) <= 256;
            if (ok && !(j->stops[j->n_stops++] = strdup(json_string_value(sv)))) ok = false;
        }
        json_decref(v);
        if (!ok) return snprintf(err, errlen, "stop must be a string or an array of up to %d non-empty strings of at most 256 bytes", CHAT_MAX_STOPS), -1;
    }
    *param = "stream";
    if ((v = json_object_get(root, "stream")) && !json_is_null(v)) {
        if (!json_is_boolean(v)) return snprintf(err, errlen, "stream must be true or false"), -1;
        j->stream = json_is_true(v);
    }
    json_t *so = json_object_get(root, "stream_options");
    j->include_usage = json_is_true(json_object_get(so, "include_usage"));
    *param = "grammar";
    if ((v = json_object_get(root, "grammar")) && !json_is_null(v)) {
        if (!json_is_string(v) || !json_string_length(v)) return snprintf(err, errlen, "grammar must be a non-empty GBNF string"), -1;
        j->grammar = json_string_value(v);
    }
    /* a client that asks for structured output must not get free text back in silence: the
     * remote backend, told so, sends the answer's grammar instead */
    *param = "response_format";
    if ((v = json_object_get(root, "response_format")) && !json_is_null(v)) {
        const char *type = json_string_value(json_object_get(v, "type"));
        if (!json_is_object(v) || !type || strcmp(type, "text") != 0)
            return snprintf(err, errlen,
                            "response_format of type \"%s\" is not supported: dream serve decodes only under a GBNF answer grammar; "
                            "send it in `grammar` (or give response_format {\"type\": \"text\"})",
                            type ? type : "(none)"), -1;
    }
    *param = NULL;
    return 0;
}

int serve_chat_check(const struct dream_serve_params *p, const char *body, size_t len, char *err, size_t errlen)
{
    json_error_t jerr;
    struct chat_job j = {0};
    const char *param = NULL;
    int rc = -1;
    if (!(j.json = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr))) snprintf(err, errlen, "not valid JSON: %s", serve_json_why(&jerr));
    else rc = parse_request(p, &j, err, errlen, &param);
    json_decref(j.json);
    free(j.messages);
    for (int i = 0; i < j.n_stops; i++) free(j.stops[i]);
    return rc;
}

/* ---- replies ---- */

static json_t *usage_json(const struct chat_job *j)
{
    return json_pack("{s:i, s:i, s:i}", "prompt_tokens", j->n_prompt, "completion_tokens", j->n_completion, "total_tokens",
                     j->n_prompt + j->n_completion);
}

static const char *finish_reason(const struct chat_job *j)
{
    return j->stopped_at_eog || j->stopped_by_string ? "stop" : "length";
}

/* A request's own fault (a prompt over the context, a grammar that does not compile or that the
 * answer dead-ends in) is 400; a shutdown that cut the answer short 503; the rest 500. */
static unsigned error_status(int code)
{
    return code == DREAM_EINVAL || code == DREAM_ETOOBIG || code == DREAM_EFORMAT ? 400 : code == DREAM_EBUSY ? 503 : 500;
}

/* The length of text that can be sent now: not a possible start of a stop string, not a split
 * character. */
static size_t sendable(const struct chat_job *j)
{
    size_t n = j->text.len;
    if (j->done) return n;
    for (int i = 0; i < j->n_stops; i++) {
        size_t sl = strlen(j->stops[i]);
        for (size_t k = sl - 1; k > 0; k--)
            if (k <= j->text.len && !memcmp(j->text.data + j->text.len - k, j->stops[i], k)) {
                if (j->text.len - k < n) n = j->text.len - k;
                break;
            }
    }
    return serve_utf8_complete(j->text.data ? j->text.data : "", n);
}

struct chat_stream {
    struct serve_chat *c;
    struct chat_job *j;
    const char *model;
    size_t sent;       /* bytes of j->text sent */
    bool began, ended; /* role chunk sent; [DONE] queued */
    struct dbuf out;   /* SSE bytes not yet handed to MHD */
    size_t out_at;
};

static void sse_event(struct chat_stream *st, json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!s) return;
    dbuf_printf(&st->out, "data: %s\n\n", s);
    free(s);
}

static json_t *chunk(struct chat_stream *st, json_t *delta, const char *finish)
{
    return json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:o, s:s?}]}", "id", st->j->id, "object", "chat.completion.chunk", "created",
                     (json_int_t)st->j->created, "model", st->model, "choices", "index", 0, "delta", delta, "finish_reason", finish);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct chat_stream *st = cls;
    if (st->out_at >= st->out.len) {
        if (st->ended) return MHD_CONTENT_READER_END_OF_STREAM;
        dbuf_reset(&st->out);
        st->out_at = 0;
        struct chat_job *j = st->j;
        pthread_mutex_lock(&st->c->mu);
        while (st->began && !j->done && sendable(j) <= st->sent) pthread_cond_wait(&j->cv, &st->c->mu);
        size_t upto = sendable(j);
        struct dbuf piece = {0};
        if (upto > st->sent) serve_utf8_clean(j->text.data + st->sent, upto - st->sent, &piece);
        st->sent = upto > st->sent ? upto : st->sent;
        bool done = j->done;
        pthread_mutex_unlock(&st->c->mu);
        if (!st->began) {
            sse_event(st, chunk(st, json_pack("{s:s, s:s}", "role", "assistant", "content", ""), NULL));
            st->began = true;
        }
        if (piece.len) sse_event(st, chunk(st, json_pack("{s:s}", "content", piece.data), NULL));
        dbuf_free(&piece);
        if (done) {
            if (j->status) {
                sse_event(st, json_pack("{s:{s:s, s:s, s:n, s:n}}", "error", "message", j->error[0] ? j->error : "generation failed", "type",
                                        error_status(j->status) == 400 ? "invalid_request_error" : "server_error", "param", "code"));
            } else {
                sse_event(st, chunk(st, json_object(), finish_reason(j)));
                if (j->include_usage) {
                    json_t *u = json_pack("{s:s, s:s, s:I, s:s, s:[], s:o}", "id", j->id, "object", "chat.completion.chunk", "created",
                                          (json_int_t)j->created, "model", st->model, "choices", "usage", usage_json(j));
                    sse_event(st, u);
                }
            }
            dbuf_puts(&st->out, "data: [DONE]\n\n");
            st->ended = true;
        }
        if (!st->out.len) return MHD_CONTENT_READER_END_WITH_ERROR; /* out of memory */
    }
    size_t n = st->out.len - st->out_at;
    if (n > max) n = max;
    memcpy(buf, st->out.data + st->out_at, n);
    st->out_at += n;
    return (ssize_t)n;
}

static void stream_done(void *cls)
{
    struct chat_stream *st = cls;
    pthread_mutex_lock(&st->c->mu);
    st->j->cancelled = true; /* a client that left early stops its generation */
    pthread_mutex_unlock(&st->c->mu);
    job_unref(st->c, st->j);
    dbuf_free(&st->out);
    free(st);
}

enum MHD_Result serve_chat_completions(struct serve_request *rq)
{
    struct dream_server *s = rq->server;
    struct serve_chat *c = s->chat;
    json_error_t jerr;
    json_t *root = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return serve_reply_error(rq, 400, "invalid_request_error", "invalid_json",
                                 "the request body is %s: %s at line %d, column %d",
                                 strstr(jerr.text, "JSON_ALLOW_NUL") ? "JSON this server cannot take" : "not valid JSON", serve_json_why(&jerr),
                                 jerr.line, jerr.column);
    struct chat_job *j = calloc(1, sizeof *j);
    if (!j) {
        json_decref(root);
        return serve_reply_error(rq, 500, "server_error", NULL, "out of memory");
    }
    j->json = root;
    j->refs = 1;
    pthread_cond_init(&j->cv, NULL);
    char err[512];
    const char *param = NULL;
    if (parse_request(&s->p, j, err, sizeof err, &param)) {
        job_unref(c, j);
        return param ? serve_reply_error_param(rq, 400, "invalid_value", param, "%s", err)
                     : serve_reply_error(rq, 400, "invalid_request_error", NULL, "%s", err);
    }
    j->created = (long)time(NULL);
    pthread_mutex_lock(&c->mu);
    bool stopping = c->stopping;
    if (!stopping) {
        snprintf(j->id, sizeof j->id, "chatcmpl-%lx%08lx", (unsigned long)j->created, ++c->counter);
        j->refs++; /* the queue's */
        if (c->tail) c->tail->next = j;
        else c->head = j;
        c->tail = j;
        pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    if (stopping) {
        job_unref(c, j);
        return serve_reply_error(rq, 503, "server_error", NULL, "the server is shutting down");
    }
    /* Waits for the answer (a plain request) or its first text (a stream: so a request the worker
     * refuses, a prompt over the context or a grammar that does not compile, is a 400 before any
     * event, not a 200 stream carrying the error), looking at the client's socket every 200 ms: a
     * client that went away (timed out, gave up) stops its generation as a streaming one does,
     * rather than holding its batch slot to max_tokens. Every token wakes this wait too; a deadline
     * already past makes it return at once with ETIMEDOUT. */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(rq->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int fd = ci ? ci->connect_fd : -1;
    bool gone = false;
    pthread_mutex_lock(&c->mu);
    struct timespec look;
    chat_in_ms(&look, 200);
    while (!j->done && !(j->stream && j->text.len)) {
        if (pthread_cond_timedwait(&j->cv, &c->mu, &look) != ETIMEDOUT || j->done) continue;
        if (!gone && fd >= 0 && chat_client_gone(fd)) gone = j->cancelled = true; /* the worker drops it at its next token */
        chat_in_ms(&look, 200);
    }
    bool refused = j->done && j->status && !j->text.len;
    pthread_mutex_unlock(&c->mu);
    if (gone) {
        job_unref(c, j);
        return MHD_NO; /* nobody to answer */
    }
    if (j->stream && !refused) {
        struct chat_stream *st = calloc(1, sizeof *st);
        if (!st) {
            pthread_mutex_lock(&c->mu);
            j->cancelled = true;
            pthread_mutex_unlock(&c->mu);
            job_unref(c, j);
            return MHD_NO;
        }
        *st = (struct chat_stream){.c = c, .j = j, .model = s->model_name};
        return serve_reply_stream(rq, stream_read, st, stream_done);
    }
    enum MHD_Result ok;
    if (j->status) {
        unsigned code = error_status(j->status);
        ok = serve_reply_error(rq, code, code == 400 ? "invalid_request_error" : "server_error", NULL, "%s",
                               j->error[0] ? j->error : "generation failed");
    } else {
        struct dbuf text = {0};
        serve_utf8_clean(j->text.data ? j->text.data : "", j->text.len, &text);
        json_t *resp = json_pack("{s:s, s:s, s:I, s:s, s:[{s:i, s:{s:s, s:s}, s:s}], s:o}", "id", j->id, "object", "chat.completion",
                                 "created", (json_int_t)j->created, "model", s->model_name, "choices", "index", 0, "message", "role",
                                 "assistant", "content", text.data ? text.data : "", "finish_reason", finish_reason(j), "usage",
                                 usage_json(j));
        dbuf_free(&text);
        ok = resp ? serve_reply_json(rq, 200, resp) : serve_reply_error(rq, 500, "server_error", NULL, "out of memory");
    }
    job_unref(c, j);
    return ok;
}

enum MHD_Result serve_models(struct serve_request *rq)
{
    struct dream_server *s = rq->server;
    json_t *list = json_pack("{s:s, s:[{s:s, s:s, s:I, s:s}]}", "object", "list", "data", "id", s->model_name, "object", "model", "created",
                             (json_int_t)0, "owned_by", "dream");
    return serve_reply_json(rq, 200, list);
}
