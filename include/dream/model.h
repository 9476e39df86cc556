/*
 * model.h — the model-call seam: every pipeline stage calls one shared local model here.
 *
 * One runtime per process: one model, loaded lazily on the first call (thread-safe), one serial
 * context and one batching context on it, and a per-stage LoRA adapter when one is installed.
 * Each stage input {system?, user} is rendered through the model's own chat template with the
 * generation prompt, tokenized so that the input's text can never produce a control token, and
 * decoded greedily and exactly.
 *
 *   dream_call_local        one call on the exact serial path
 *   dream_call_local_batch  N independent calls of ONE stage, order-preserving (out[i] answers
 *                           in[i]); through the continuous-batching scheduler when the width
 *                           (DREAM_MEMORY_BATCH) is > 1 and N > 1, else a loop on the serial
 *                           path. In the exact configuration the answers are the same either
 *                           way (docs/EXACTNESS.md).
 *
 * Whole calls are serialized by one operation lock: the adapter state belongs to one call at a
 * time, and concurrent callers wait their turn rather than fail.
 */
#ifndef DREAM_MODEL_H
#define DREAM_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "dream/engine.h"
#include "dream/template.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runaway backstop: no stage asks for more; a finished answer stops at end-of-generation. */
#define DREAM_MAX_OUTPUT_TOKENS 64000
#define DREAM_DEFAULT_MAX_TOKENS 256
/* The batch width when DREAM_MEMORY_BATCH is not set: the width the dreaming-mix benchmark
 * showed best (docs/BENCHMARKS.md, "Choosing the width"): 4 on a 2-core CPU, 8 on the H200. */
#define DREAM_DEFAULT_BATCH_WIDTH_CPU 4
#define DREAM_DEFAULT_BATCH_WIDTH_GPU 8

/* A stage's input. system NULL → the stage's default system turn (none for unknown stages and
 * for `chunk`, which passes its own exact system text) → user-only. grammar: this call's answer
 * grammar (see dream_call_opts), when it is built per call; NULL: the options'. json_schema:
 * the same answer shape as a JSON schema (an object's text), for an answer that is JSON, or
 * NULL: the remote backend sends it as response_format, which more servers read than a GBNF
 * grammar; the embedded engine decodes under grammar and does not read it. */
struct dream_local_input {
    const char *system;
    const char *user;
    const char *grammar;
    const char *json_schema;
};

struct dream_call_opts {
    int max_tokens;      /* default DREAM_DEFAULT_MAX_TOKENS; at most DREAM_MAX_OUTPUT_TOKENS */
    bool ignore_eog;     /* benchmarks only: run to max_tokens */
    float adapter_scale; /* the stage adapter's scale (default 1; 0 = base model) */
    /* The answer's grammar (GBNF, start symbol `root`; dream/grammar.h has the stages' shapes),
     * or NULL for free text. The embedded engine decodes under it (still greedy and exact:
     * the same tokens serial and batched); the remote backend sends it where the server takes
     * one. A grammar llama.cpp rejects, or one that dead-ends, fails that call with an error
     * naming the stage. Not with ignore_eog. */
    const char *grammar;
};
struct dream_call_opts dream_call_default_opts(void);

/* The runtime's settings; dream_seam_default_config() reads the environment:
 * DREAM_MODEL, DREAM_ADAPTERS (else $DREAM_HOME/cache/adapters, else ~/.cache/dream/adapters),
 * DREAM_MEMORY_BATCH (width), DREAM_CTX (cells per sequence), DREAM_THREADS, DREAM_FLASH_ATTN,
 * DREAM_GRAMMAR, DREAM_REPLAY, DREAM_TRACE. */
struct dream_seam_config {
    const char *model_path;   /* NULL: resolved as dream_model_resolve(NULL) */
    const char *adapters_dir; /* where memory-<stage>.gguf files live */
    int width;                /* batch width; 1 = always serial */
    int n_ctx;                /* KV cells per sequence (default 8192) */
    int n_threads;            /* 0 = all cores */
    int n_gpu_layers;         /* -1 = all (default) */
    int flash_attn;           /* -1 (default): dream_model_flash_attn_choice (on on a GPU, and
                                 for a small model on the CPU, such as dream-mini); 0 off; 1 on. Exact on the
                                 CPU either way (docs/EXACTNESS.md): DREAM_FLASH_ATTN */
    bool no_grammar;          /* answers in free text, the stages' grammars ignored (to measure
                                 what they change): DREAM_GRAMMAR=0 */
    /* Replay (benchmarks: bench_pipeline, `dream run --replay`): the embedded engine first asks
     * this OpenAI-compatible server (train/oracle.py) for every call's answer, then prefills the
     * call's real prompt and decodes that answer token by token as forced tokens, serial or
     * batched as usual (dream_gen_params.forced): a real model's work, scripted answers. Answer
     * grammars are not applied (the answers are the server's). NULL: off (DREAM_REPLAY). */
    const char *replay_url;
    /* Trace: every stage call's inputs and answers appended to this file, one JSON object a
     * line, {"stage", "system" (the call's system turn, the stage's default included; null:
     * none), "user", "answer" (null: the call failed)} (the fields of train/'s records.jsonl),
     * embedded engine or remote backend alike:
     * to read what a model answered. A file that cannot be opened for appending fails every
     * call with an error naming it. NULL: off (DREAM_TRACE). */
    const char *trace_path;
};
void dream_seam_default_config(struct dream_seam_config *config);

/* Replaces the configuration; takes effect at the next call (shuts the runtime down first).
 * Strings are copied. */
int dream_seam_configure(const struct dream_seam_config *config);

/* The default system turn of a stage, or NULL. The registry: chunk (none), entity, route,
 * section, synthesis, editor, answer (dream ask); any other name has none. */
const char *dream_stage_default_system(const char *stage);

/* One call. *out is the answer (malloc'd; the caller frees it). */
int dream_call_local(const char *stage, const struct dream_local_input *in, const struct dream_call_opts *opts, char **out);

/* n calls of one stage; out[i] answers in[i] (each malloc'd, or NULL where that call failed:
 * then the return value is that call's error, and the others still hold their answers). */
int dream_call_local_batch(const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                           char **out);

/* Frees the model, contexts and adapters; the next call loads them again. */
void dream_seam_shutdown(void);

/* Counters of the runtime's scheduler (zeros when it has not batched). */
struct dream_batch_stats dream_seam_batch_stats(void);

/* What the seam has done since the process started, serial and batched together (the embedded
 * engine's figures; a remote or scripted backend counts calls and time only). */
struct dream_seam_stats {
    long calls;           /* dream_call_local / dream_call_local_batch calls */
    long inputs;          /* stage inputs in them */
    long single_calls;    /* calls of one input: where a stage hands the seam one at a time */
    double call_ms;       /* wall time inside the calls (waiting for the operation lock excluded) */
    double single_ms;     /* of which in calls of one input */
    double replay_ms;     /* of which fetching replay answers (not the model's work) */
    long prompt_tokens;   /* prompt tokens of every call */
    long prefill_tokens;  /* of which computed */
    long saved_tokens;    /* of which served from a shared prefix */
    long generated;       /* tokens generated (forced ones included) */
};
struct dream_seam_stats dream_seam_stats(void);

/*
 * Watching the seam work (dream run's live line), so a long call is never minutes of silence.
 * The watcher gets these events on the calling thread, with the seam's lock held (so it must
 * not call into the seam); the event's strings are valid during the call only:
 *   DREAM_SEAM_MODEL_LOADING  the embedded model starts loading (model: its file)
 *   DREAM_SEAM_MODEL_LOADED   it has loaded (seconds: how long that took); none when it fails
 *   DREAM_SEAM_CALLS_START    a call of n inputs of stage begins (dream_call_local: n = 1)
 *   DREAM_SEAM_CALL_DONE      input index of that call is finished, answered or failed; done
 *                             counts the finished ones (1..n, each input once). Sent as each
 *                             input finishes while the others still decode (the embedded
 *                             engine's scheduler, the remote backend); a backend that answers
 *                             all at once has its inputs reported when it returns.
 */
enum dream_seam_event_kind { DREAM_SEAM_MODEL_LOADING, DREAM_SEAM_MODEL_LOADED, DREAM_SEAM_CALLS_START, DREAM_SEAM_CALL_DONE };
struct dream_seam_event {
    enum dream_seam_event_kind kind;
    const char *stage;  /* CALLS_START, CALL_DONE */
    size_t index;       /* CALL_DONE */
    size_t done, n;     /* CALLS_START (done 0), CALL_DONE */
    const char *model;  /* MODEL_LOADING, MODEL_LOADED */
    double seconds;     /* MODEL_LOADED */
};
typedef void (*dream_seam_watch_fn)(void *ud, const struct dream_seam_event *event);

/* Installs the watcher of every later call (NULL: none). */
void dream_seam_set_watch(dream_seam_watch_fn fn, void *ud);

/*
 * The prompt path, shared by the stages, `dream generate --chat` and the server: renders
 * [system?, user] with the model's chat template (add_generation_prompt on, bos/eos from the
 * vocabulary) and tokenizes it injection-safely (dream_tokenize_prompt).
 */
int dream_prompt_tokens(dream_model *model, const char *system, const char *user, struct dream_tokens *out);

/*
 * Chat for the server: whole conversations through the runtime's model and scheduler (never a
 * stage adapter), rendered by the same prompt path, all requests of one call batched together
 * under the operation lock. Roles must be names the program chose ("system", "user",
 * "assistant"); contents are caller data and can never produce a control token.
 */
struct dream_chat_request {
    const struct dream_chat_message *messages;
    size_t n_messages;
    int max_tokens;    /* at most this many tokens (also bounded by the context) */
    float temperature; /* 0: greedy (exact); > 0: sampled with top_p and seed */
    float top_p;
    uint64_t seed;
    const char *grammar; /* an answer grammar (GBNF, as dream_call_opts'), or NULL; with one the
                            request is greedy whatever its temperature */
    /* Called on the calling thread with the text of each generated token (control tokens
     * render as nothing); returning false ends this request there. May be NULL. */
    bool (*on_text)(void *ud, const char *text, size_t len);
    /* Called on the calling thread once this request's results below are final, possibly
     * while others still run (the server answers it then). May be NULL. */
    void (*on_done)(void *ud);
    void *ud;
    /* Results. status is 0 or this request's own error (its message in error_message). */
    int status;
    char error_message[256];
    int n_prompt;
    int n_completion;
    bool stopped_at_eog; /* false: max_tokens, the context, or on_text ended it */
};

/* Runs n chat requests to completion (order-free; each has its own results). Returns 0 unless the
 * whole run failed (no model, a decode error). */
int dream_seam_chat(struct dream_chat_request *reqs, size_t n);

/* As dream_seam_chat, and while the run goes on more requests join it at any step (continuous
 * batching across clients): whenever a sequence is free, more(ud) is called and returns the
 * next waiting request, or NULL when none waits now (it must not block). A returned request
 * must stay valid until this call returns; its results are filled as the others'. At most
 * DREAM_CHAT_JOIN_MAX join one call; after that they wait for the next. */
#define DREAM_CHAT_JOIN_MAX 1024
int dream_seam_chat_join(struct dream_chat_request *reqs, size_t n, struct dream_chat_request *(*more)(void *ud), void *ud);

/* Loads the model now (the server does this before it listens, so a missing model fails at
 * start); *name gets the model file's name without directory or extension (static storage),
 * *seq_ctx the context cells of one batched sequence. */
int dream_seam_load(const char **name, int *seq_ctx);

/* Whether the entity stage should decode its names under dream_grammar_names_from (names
 * copied from the chunk): the embedded model's GGUF says dream.names_from_text (dream-mini
 * does: it writes names of its own shape otherwise); DREAM_NAMES_FROM_TEXT=1/0 overrides.
 * Loads the model when it is not loaded yet; false with a remote or scripted backend. */
bool dream_seam_names_from_text(void);

/*
 * Backends. The embedded engine is the default; a backend installed here receives every call
 * instead (the remote OpenAI-compatible endpoint; a scripted fake in tests). call answers n
 * inputs of one stage into out[0..n); the watcher (dream_seam_set_watch) hears of each input as
 * the remote backend finishes it, of a scripted one's when its call returns.
 */
struct dream_backend {
    const char *name;
    int (*call)(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                char **out);
    void (*destroy)(void *ud);
    void *ud;
};
/* Installs backend (copied), or restores the embedded engine with NULL. */
int dream_seam_set_backend(const struct dream_backend *backend);

/*
 * The remote backend: stage calls go to an OpenAI-compatible endpoint (`dream serve`,
 * llama-server, vLLM) as chat completions at temperature 0, [system?, user] as the stages send
 * them. url is the server's base ("http://host:8080" or ".../v1"). Batches keep their order;
 * at most max_parallel requests are in flight; transient failures (no connection, timeouts,
 * 429, 5xx) are retried with exponential backoff up to max_retries times.
 */
struct dream_remote_params {
    const char *url;
    const char *api_key;   /* sent as a bearer token when non-NULL (default: $DREAM_BACKEND_KEY) */
    const char *model;     /* the "model" field (default: $DREAM_BACKEND_MODEL, else "dream") */
    int max_parallel;      /* default 8 */
    int max_retries;       /* default 5 */
    int backoff_ms;        /* first retry delay, doubled each retry (default 200) */
    long timeout_s;        /* per request (default 600) */
    /* The request field that carries a call's answer grammar (GBNF): "grammar" (llama-server's),
     * "guided_grammar" (vLLM's), "json_schema" for none but the JSON schemas below (a server
     * that reads OpenAI's structured outputs and refuses fields it does not know), or "none":
     * no answer constraint at all (default: $DREAM_BACKEND_GRAMMAR, else "grammar").
     * An input with a json_schema is sent it as response_format ({"type": "json_schema"}) in
     * place of its grammar, unless this is "none". A server that answers such a request with
     * HTTP 400 and the same request without it with 200 does not take response_format: a
     * warning says so, and for the rest of the run (this backend) the grammar goes instead. */
    const char *grammar_field;
};
void dream_remote_default_params(struct dream_remote_params *params);
/* Installs the remote backend (strings copied); a URL that is not http(s) is a clear error. */
int dream_seam_use_remote(const struct dream_remote_params *params);

#ifdef __cplusplus
}
#endif
#endif
