/*
 * engine.h — the engine layer: the only code that talks to llama.cpp.
 *
 * A dream_model is a loaded GGUF (weights, vocabulary, chat template). A dream_session is one
 * llama.cpp context on it, used for the exact serial greedy decode. Functions return 0 or a
 * negative dream_status with dream_error_last() set (include/dream/error.h).
 */
#ifndef DREAM_ENGINE_H
#define DREAM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t dream_token;
typedef struct dream_model dream_model;
typedef struct dream_session dream_session;

/* The default model: ggml-org/gemma-4-E4B-it-GGUF, gemma-4-E4B-it-Q4_K_M.gguf. */
#define DREAM_DEFAULT_MODEL_REPO "ggml-org/gemma-4-E4B-it-GGUF"
#define DREAM_DEFAULT_MODEL_FILE "gemma-4-E4B-it-Q4_K_M.gguf"

/* Finds the model to load: explicit_path (if non-NULL), else $DREAM_MODEL, else the Hugging Face
 * hub cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). On success *out is a
 * malloc'd path the caller frees. DREAM_ENOTFOUND lists every place looked at and the command
 * that downloads the default model; we never download anything ourselves. */
int dream_model_resolve(const char *explicit_path, char **out);

/* True when llama.cpp was built with a GPU backend that can take model layers. */
bool dream_engine_has_gpu(void);

struct dream_model_params {
    int n_gpu_layers; /* layers offloaded to a GPU; -1 = all (default), 0 = CPU only */
    bool vocab_only;  /* load the tokenizer and metadata only */
};
struct dream_model_params dream_model_default_params(void);

/* Loads a GGUF. Checks the file's magic and size first so that a missing, truncated or non-GGUF
 * file is a clear error naming the path, not a crash. */
int dream_model_load(const char *path, const struct dream_model_params *params, dream_model **out);
void dream_model_free(dream_model *model);

const char *dream_model_path(const dream_model *model);
const char *dream_model_arch(const dream_model *model);        /* general.architecture */
bool dream_model_meta_bool(const dream_model *model, const char *key); /* a GGUF bool key that is true */
const char *dream_model_chat_template(const dream_model *model); /* NULL when the GGUF has none */
int dream_model_n_vocab(const dream_model *model);
int dream_model_n_ctx_train(const dream_model *model);
/* The flash_attn setting (dream_session_params) for a requested one: requested itself when it
 * is 0 or 1; below 0, the setting that runs this model fastest while exact: 1 (on) on a GPU, and for
 * a model on the CPU whose weights are under DREAM_FA_CPU_MAX_BYTES, else 0. On a GPU
 * (where exactness is not promised) it made the whole pipeline 1.12x faster on the E4B shape
 * (3,497 against 3,123 conversations an hour, H100; docs/BENCHMARKS.md). On the
 * CPU, flash attention is exact under the engine's rules (docs/EXACTNESS.md), which put
 * single-token steps on one thread: faster for small models (dream-mini's dreaming mix: 1.5x
 * serial, 1.9x batched; a 177M model's: 1.3x), slower for a 4.8 GB one, whose single-token
 * decode needs every core's memory bandwidth (2.8x slower on one thread; docs/BENCHMARKS.md).
 * The limit lies above the largest model measured faster (203 MB). */
#define DREAM_FA_CPU_MAX_BYTES (512ull << 20)
int dream_model_flash_attn_choice(const dream_model *model, int requested);
dream_token dream_model_bos(const dream_model *model);          /* -1 when none */
dream_token dream_model_eos(const dream_model *model);
bool dream_model_add_bos(const dream_model *model);
bool dream_model_is_eog(const dream_model *model, dream_token token);
bool dream_model_is_control(const dream_model *model, dream_token token);
/* The text of a token as the vocabulary stores it ("<bos>"), for template variables. */
const char *dream_model_token_text(const dream_model *model, dream_token token);

/* A growable array of tokens; a zeroed struct is empty. */
struct dream_tokens {
    dream_token *ids;
    int n;
    int cap;
};
void dream_tokens_free(struct dream_tokens *tokens);
int dream_tokens_push(struct dream_tokens *tokens, dream_token token);

/* Appends the tokens of text[0..len) to out. add_special: add BOS/EOS as the vocabulary says.
 * parse_special: control-token strings in the text become control tokens. */
int dream_tokenize(const dream_model *model, const char *text, size_t len, bool add_special,
                   bool parse_special, struct dream_tokens *out);

/* A byte range [begin, end) of a rendered prompt that came from caller data. */
struct dream_span {
    size_t begin;
    size_t end;
};

/* Tokenizes a rendered chat prompt: the template's own text with special-token parsing on, the
 * caller-data spans (sorted, non-overlapping) with it off, so conversation text can never
 * produce a control token. No BOS is added (the template writes it); if the result starts with
 * two BOS tokens, one is dropped. Appends to out. */
int dream_tokenize_prompt(const dream_model *model, const char *text, size_t len,
                          const struct dream_span *data_spans, size_t n_spans, struct dream_tokens *out);

/* Writes the text of one token into buf (no NUL); returns its length, or -(needed) when len is
 * too small. special=false renders control tokens as nothing. */
int dream_token_to_piece(const dream_model *model, dream_token token, bool special, char *buf, int len);

/* Concatenates the pieces of tokens (control tokens not rendered) into a malloc'd string. */
int dream_detokenize(const dream_model *model, const dream_token *tokens, int n, char **out);

struct dream_session_params {
    int n_ctx;         /* context size in tokens; 0 = min(training context, 8192) */
    int n_batch;       /* prefill chunk: the most prompt tokens decoded at once (default 512) */
    int n_threads;     /* used for every ubatch, prefill and decode alike (default: cores) */
    int flash_attn;    /* 0 off (default: the exact configuration, docs/EXACTNESS.md), 1 on,
                          -1 llama.cpp's own choice (auto) */
    int device_sampling; /* greedy argmax taken on the device, so only the token id comes back
                            instead of every logit: -1 auto (on when the model runs on a GPU,
                            default), 0 off (the host argmax of the exact configuration), 1 on */
};
struct dream_session_params dream_session_default_params(void);

int dream_session_new(dream_model *model, const struct dream_session_params *params, dream_session **out);
void dream_session_free(dream_session *session);
int dream_session_n_ctx(const dream_session *session);

struct dream_gen_params {
    int max_tokens;   /* stop after this many generated tokens (default 256) */
    bool ignore_eog;  /* benchmark mode: keep going past end-of-generation tokens */
    bool digest;      /* compute logits_digest (reads every logit of every step; off by default) */
    /* Optional hooks of dream_batcher_run (NULL: none; the serial decode ignores them). req is
     * the request's index in the run. choose picks the next token from that step's logits
     * instead of the argmax (sampling); on_token sees each generated token (not EOG) and ends
     * that request there by returning false (stop strings, a client that went away). */
    dream_token (*choose)(void *ud, int req, const float *logits, int n_vocab);
    bool (*on_token)(void *ud, int req, dream_token token);
    /* Requests that join a running dream_batcher_run: called between steps while a sequence is
     * free and no request waits, with the run's current count n; it may write more requests at
     * prompts[n..] and max_tokens[n..] (the arrays, and out and status, have room for
     * `capacity`) and returns the new count (n when none arrived; never blocks). With nothing
     * running and nothing returned, the run ends. */
    int (*more)(void *ud, int n);
    int capacity;
    /* Called once per request of dream_batcher_run as soon as out[req] and status[req] are
     * final (a request refused at the start included), so a caller can answer it while the
     * run goes on. Not called for requests a failing run abandons. */
    void (*on_done)(void *ud, int req);
    void *hook_ud;
    /* An answer grammar: GBNF (llama.cpp's grammars/README.md), start symbol `root`, or NULL.
     * Each step takes the greedy token among those the grammar allows next (the argmax is tried
     * first; the vocabulary is masked only when the grammar rejects it, which picks the same
     * token as masking first), control tokens other than end-of-generation are never allowed,
     * and end-of-generation only once the grammar is complete. A grammar llama.cpp cannot parse
     * is DREAM_EINVAL; a state where the grammar allows no token is DREAM_EFORMAT; both fail
     * that request alone. Not with ignore_eog; a request under a grammar is greedy (choose is
     * not called for it). */
    const char *grammar;
    /* dream_batcher_run only: request i's grammar (overrides grammar; NULL entries: grammar),
     * or NULL: every request uses grammar. With more, it has room for capacity entries and
     * more writes the joining requests' entries too. */
    const char *const *grammars;
    /* Replay (forced decoding): the answer of request req is forced[req] (dream_generate is
     * request 0), token by token, then end-of-generation, as if the model had chosen them.
     * Every step is computed as in a real generation (prefill, one decode per token, the
     * logits and the token choice), but the forced token is the one kept and fed back, so a
     * benchmark does a real model's work while the stages see scripted answers. max_tokens
     * and the context still cut it. NULL: none (the normal decode). Not with a grammar; with
     * more, it has room for capacity entries and more writes the joining requests' too. */
    const struct dream_tokens *forced;
};
struct dream_gen_params dream_gen_default_params(void);

struct dream_gen_result {
    char *text;            /* the generated text; control tokens not rendered; EOG not included */
    dream_token *tokens;   /* the generated tokens (EOG not included) */
    int n_tokens;
    int n_prompt;          /* prompt tokens decoded */
    bool stopped_at_eog;   /* false when max_tokens stopped it */
    double prefill_ms;
    double decode_ms;
    uint64_t logits_digest; /* with params.digest: FNV-1a over the bits of every step's logits */
};
void dream_gen_result_free(struct dream_gen_result *result);

/* The exact serial greedy decode: clears the session's memory, prefills the prompt in chunks of
 * n_batch, then decodes one token per step, taking the argmax (lowest id wins ties) and stopping
 * at any end-of-generation token or max_tokens. An empty prompt, or one that leaves no room in
 * the context, is a clear error. */
int dream_generate(dream_session *session, const dream_token *prompt, int n_prompt,
                   const struct dream_gen_params *params, struct dream_gen_result *out);

/* Samples a token from logits at temperature (> 0) within the smallest set of most likely
 * tokens whose probability reaches top_p (0 < top_p <= 1); *rng is the caller's generator
 * state (any seed; advanced on each call), so a seed gives the same tokens again. */
dream_token dream_sample_token(const float *logits, int n_vocab, float temperature, float top_p, uint64_t *rng);

/*
 * LoRA adapters. An adapter is checked against the model when loaded (its GGUF must say
 * general.type "adapter", the model's architecture, and shapes that fit the model's weights);
 * a mismatch is a clear error, never a crash. An adapter set on a session or batcher applies
 * to every following decode until it is cleared (NULL).
 */
typedef struct dream_adapter dream_adapter;
int dream_adapter_load(dream_model *model, const char *path, dream_adapter **out);
void dream_adapter_free(dream_adapter *adapter);
const char *dream_adapter_path(const dream_adapter *adapter);
int dream_session_set_adapter(dream_session *session, dream_adapter *adapter, float scale);

/*
 * The continuous-batching scheduler: N independent greedy generations on one context.
 *
 * Every sequence has its own KV stream (llama.cpp's non-unified cache), so a sequence attends
 * over exactly the cells it would have alone. Each step decodes one token for every running
 * sequence, in one llama_decode per wave of similar KV lengths (wave_cells), then prefills
 * admitted requests in chunks aligned as the serial decode aligns them (multiples of
 * step_tokens from position 0); requests join and leave at
 * any step and queue for a free sequence, never failing for lack of room; a request that can
 * never fit a sequence fails alone. With prefix_reuse, the longest token prefixes shared by
 * several requests of a run are computed once into spare streams and copied to each sequence
 * that starts with them; they are kept across runs (least recently used out). In the exact
 * configuration (flash attention off, equal thread counts, Q8_0 weights on CPU;
 * docs/EXACTNESS.md) every output equals dream_generate's with the same step size.
 */
typedef struct dream_batcher dream_batcher;

struct dream_batch_params {
    int width;         /* sequences decoded together (default 8) */
    int seq_ctx;       /* KV cells of each sequence: prompt + output must fit (default 4096) */
    int step_tokens;   /* prefill chunk and step budget; below 2 (default -1): by the device,
                          DREAM_STEP_TOKENS_CPU (the serial n_batch, which exactness needs) or
                          _GPU */
    int n_threads;     /* for every step (default: cores) */
    int flash_attn;    /* as dream_session_params */
    bool prefix_reuse; /* share identical token prefixes (default true) */
    int prefix_min;    /* shortest prefix worth sharing, in tokens (default 64) */
    int prefix_slots;  /* prefixes kept; -1 (default): as many as the width, 2..16, since a
                          fold round asks a group of questions per article, each group on its
                          own chunk (each slot is one more KV stream of seq_ctx cells) */
    bool kv_unified;   /* one KV pool shared by all sequences, and every step packs decode tokens
                          and several sequences' prefill into one llama_decode (as llama-server).
                          Faster on a GPU, but a sequence's cells then sit at other indices than
                          in the serial decode, so answers may differ: off by default (per-sequence
                          streams, the exact configuration; docs/EXACTNESS.md) */
    int device_sampling; /* as dream_session_params (-1 auto: on when the model runs on a GPU) */
    bool compact;      /* per-stream layout: move sequences down into free slots so decoding ids
                          stay consecutive, one ubatch per step (default true; false only to
                          measure what it saves) */
    int wave_cells;    /* per-stream layout: length-aware decode waves. llama.cpp makes every
                          sequence of a ubatch attend over as many KV cells as its fullest stream,
                          so a step that decodes a 6k-token call with short ones makes each short
                          one pay 6k cells. A step is cut into waves of similar KV length (each
                          its own llama_decode, one more pass over the weights) wherever that
                          saves more than wave_cells cells of attention, the price of one more
                          pass in cells; a freed slot is refilled so that sequences of similar
                          length stay on consecutive ids (a wave is such a run). 0: one wave per
                          step (the scheduling before issue 16);
                          -1 (default): by the device, DREAM_WAVE_CELLS_CPU or _GPU. Answers do
                          not change: a sequence's stream is the same in any wave */
};

/* The wave_cells defaults (docs/BENCHMARKS.md, issue 16, "Length-aware decode waves"). On the
 * 2-core CPU an extra wave costs ~7.6 ms, as much as ~16k cells of attention (0.46 us each), and
 * lost even at that threshold (width 8, dreaming mix): off. On the H200 (bench/gpu.sh waves,
 * 2026-12-04, E4B shape, flash attention) every threshold lost or tied: 128 calls at width 32,
 * flat 2.65x serial, waves at 65536 cells 2.47x, at 32768 2.36x; from those steps a cell of
 * attention costs ~3.4 ns and an extra ubatch ~8.7 ms (~2.5M cells), so the cells a flat step
 * wastes (~58k) are worth ~0.2 ms of a 24 ms step. Off on the GPU too; a caller can still set
 * wave_cells. */
#define DREAM_WAVE_CELLS_CPU 0
#define DREAM_WAVE_CELLS_GPU 0
/* The step_tokens defaults. On the CPU the serial decode's chunk (512), which exactness needs.
 * On the H200 (bench/gpu.sh steps, 2026-12-05, E4B shape, flash attention, dreaming mix of 128
 * calls at width 32, one run each against one serial run of 58.40 s) a 1024-token step took
 * 20.90 s against 22.63 s at 512 (2.79x serial against 2.58x): fewer steps carry a prefill
 * chunk, and the prefill-only decodes took 5.2 s instead of 6.3 s. 2048 was not reached in that
 * command. Exactness is a CPU promise only (docs/EXACTNESS.md), so the GPU may differ. */
#define DREAM_STEP_TOKENS_CPU 512
#define DREAM_STEP_TOKENS_GPU 1024
struct dream_batch_params dream_batch_default_params(void);

struct dream_batch_stats {
    long prompt_tokens;   /* prompt tokens of all requests */
    long prefill_tokens;  /* prompt tokens actually computed */
    long saved_tokens;    /* prompt tokens served from a shared prefix */
    long steps;           /* decode steps */
    long generated;       /* tokens generated */
    long decode_runs;     /* ubatches of the decode steps: runs of consecutive decoding sequence
                             ids, cut further into waves (per-stream layout: llama.cpp makes one
                             ubatch, one pass over the weights, of each) */
    long moves;           /* sequences moved to another slot to keep those runs whole */
    long decode_cells;    /* KV cells attended over in decode steps: for each ubatch, its
                             sequences times its fullest stream's cells (256-cell padded, as
                             llama.cpp sizes the view) */
    long decode_cells_own; /* the same if each sequence attended over its own cells only: the
                              floor that length-aware waves approach */
    long grammar_picks[3]; /* tokens chosen under answer grammars: the argmax was allowed; one of
                              the 32 best was; only a look over the whole vocabulary found one */
    double step_ms;       /* wall time in steps that decode (token choice included) */
    double prefill_ms;    /* wall time in prefill-only llama_decode calls */
    /* where a decode step's wall time goes (per-stream layout); on a GPU llama_decode queues the
     * work and returns, so the GPU's time shows where the host waits for it: */
    double step_call_ms;  /* inside the decode steps' llama_decode (the graph built, its inputs
                             set, and any wait for work queued before) */
    double step_wait_ms;  /* reading the step's tokens: the wait for the GPU, then the choice */
    double admit_ms;      /* between steps: slot moves (compaction) and admission (prefix copies) */
};

int dream_batcher_new(dream_model *model, const struct dream_batch_params *params, dream_batcher **out);
void dream_batcher_free(dream_batcher *b);

/* Runs n requests to completion. out[i] answers prompts[i]; max_tokens (NULL = params') gives
 * each request its own budget; status[i] is 0 or the error of that request alone (its message
 * is logged). Returns 0 unless the whole run failed. */
int dream_batcher_run(dream_batcher *b, const struct dream_tokens *prompts, int n, const struct dream_gen_params *params,
                      const int *max_tokens, struct dream_gen_result *out, int *status);

/* Sets (adapter non-NULL) or clears the adapter for the following runs. Cached prefixes are
 * kept per adapter set: a prefix computed under one set is never used under another. */
int dream_batcher_set_adapter(dream_batcher *b, dream_adapter *adapter, float scale);

/* Counters since the batcher was made. */
struct dream_batch_stats dream_batcher_stats(const dream_batcher *b);
/* The parameters the batcher runs with, the ones left to the device (-1) resolved. */
struct dream_batch_params dream_batcher_params(const dream_batcher *b);

#ifdef __cplusplus
}
#endif
#endif
