/*
 * engine_internal.h — what the engine's files share: the model and session structs, the
 * one-time backend initialisation. Only src/engine includes llama.h.
 */
#ifndef DREAM_ENGINE_INTERNAL_H
#define DREAM_ENGINE_INTERNAL_H

#include "dream/engine.h"

#include <llama.h>

/* A special token as the tokenizer partitions it: CONTROL, USER_DEFINED or UNKNOWN. */
struct engine_special {
    const char *text;
    int len;
    dream_token id;
    int attr; /* enum llama_token_attr bits */
};

struct dream_model {
    struct llama_model *model;
    const struct llama_vocab *vocab;
    char *path;
    char arch[64];
    char *chat_template; /* NULL when the GGUF has none */
    bool on_gpu;         /* layers were offloaded to a GPU (then sampling can run there too) */
    /* special tokens sorted by text length (longest first), and for each first byte the
     * index range of those that start with it (the same order within a bucket) */
    struct engine_special *specials;
    int n_specials;
    int *by_byte;          /* indices into specials, grouped by first byte */
    int byte_start[257];   /* bucket b is by_byte[byte_start[b] .. byte_start[b+1]) */
    /* for answer grammars (grammar.c), built on first use: the tokens an answer may hold other
     * than end-of-generation, grouped by the first byte of their text (id order within a
     * group), a token whose whole text is byte b for each b (-1: none), and the EOG tokens */
    dream_token *gram_by_first;
    int gram_first_start[257];
    dream_token gram_byte_token[256];
    dream_token *gram_eog;
    int gram_n_eog;
    /* tokens the model never learned (GGUF key dream.untrained_tokens; tokenize.c): untrained[t]
     * is true for each, and the tokenizer writes t as split_ids[split_start[t] ..
     * split_start[t + 1]), the trained pieces of its text (an empty range: t has none and stays).
     * All NULL for a model without the key. */
    bool *untrained;
    int *split_start;
    dream_token *split_ids;
};

struct dream_session {
    dream_model *model;
    struct llama_context *ctx;
    struct dream_session_params params;
    int n_ctx;
    struct llama_sampler_seq_config *samplers; /* device sampling for seq 0, or NULL */
};

/* Flash attention on the CPU, kept exact (docs/EXACTNESS.md). ggml's CPU kernel takes one of
 * three paths for a stream's query rows: a ubatch of one token and one stream with 512 or more
 * KV cells splits the cells across threads and adds the partial sums; fewer than
 * ENGINE_FA_TILE_ROWS rows go through the one-row path; more go through the tiled path. Each
 * path sums a row in its own order, but within a path a row's sums depend on that row alone.
 * So the serial and batched decodes agree when every row takes the same path in both:
 * single-token ubatches run on one thread (one partial sum: the one-row path's order), and a
 * shared prefix is cut and reused only where the chunk it leaves has the path the serial
 * chunk had (scheduler.c, fa_reuse). ENGINE_FA_TILE_ROWS is ggml's GGML_FA_TILE_Q at the
 * pinned commit. */
#define ENGINE_FA_TILE_ROWS 64

/* Whether a context of model with this flash_attn setting (dream_session_params) runs
 * flash attention on the CPU under the rules above: explicitly on, and no GPU. */
static inline bool engine_fa_cpu(const dream_model *model, int flash_attn)
{
    return flash_attn == 1 && !model->on_gpu;
}

/* The thread count for single-token ubatches (llama.cpp's n_threads; longer ubatches use
 * n_threads_batch): one under flash attention on the CPU, else threads. */
static inline int engine_decode_threads(const dream_model *model, int flash_attn, int threads)
{
    return engine_fa_cpu(model, flash_attn) ? 1 : threads;
}

/* Initialises llama.cpp's backends and routes its log through dream_log; safe to call many
 * times from any thread. */
void engine_backend_init(void);

/* 0 when every tensor of the GGUF g (read from path) lies inside the file; else DREAM_EFORMAT:
 * "<what><path> is truncated: tensor ... ; <fix>" (a truncated file faults when a tensor is
 * first touched, or fails in llama.cpp for another reason than its own). */
struct gguf_context;
int engine_gguf_extents(const struct gguf_context *g, const char *path, const char *what, const char *fix);

/* 0 when the chosen token's logit is finite; else DREAM_EMODEL naming m's file. A NaN or an
 * infinity there (all logits NaN make every argmax token 0) is a damaged model, not an answer:
 * decoding on would write whatever token 0 or the grammar's first choice spells. */
int engine_logit_check(const dream_model *m, const float *logits, dream_token best);

/* The last error line llama.cpp logged on this thread ("" when none since the clear). */
void engine_log_error_clear(void);
const char *engine_log_error_last(void);

/* Greedy decoding under an answer grammar (grammar.c). new: DREAM_EINVAL naming llama.cpp's
 * reason when the GBNF does not parse (builds m's first-byte table on first use). pick: the greedy token among those the grammar allows
 * next (same as masking the vocabulary first, but asking about the argmax first); *scratch is
 * the caller's n_vocab-entry buffer, allocated on first need (free it with free()); DREAM_EFORMAT
 * when the grammar allows no token. accept: advances the grammar over a picked token (never an
 * end-of-generation token). */
struct engine_grammar;
int engine_grammar_new(dream_model *m, const char *gbnf, struct engine_grammar **out);
void engine_grammar_free(struct engine_grammar *g);
int engine_grammar_pick(struct engine_grammar *g, const float *logits, llama_token_data **scratch, dream_token *out);

void engine_grammar_accept(struct engine_grammar *g, dream_token t);
/* Adds g's picks to picks: by the argmax alone, within the best 32 tokens, over the whole
 * vocabulary (nothing when g is NULL). */
void engine_grammar_counts(const struct engine_grammar *g, long picks[3]);

/* Replay (dream_gen_params.forced; session.c). check: DREAM_EINVAL naming the token and its
 * position when the forced answer holds one outside m's vocabulary. token: what the forced
 * answer puts at generated position k, or LLAMA_TOKEN_NULL once it is spent (the answer ends
 * there, as at end-of-generation). */
int engine_forced_check(const dream_model *m, const struct dream_tokens *forced, const char *whose);
dream_token engine_forced_token(const struct dream_tokens *forced, int k);

/* Sets a context's adapter set to {adapter at scale}; NULL or scale 0 clears it (adapter.c). */
int engine_set_adapter(struct llama_context *ctx, dream_adapter *adapter, float scale);

/* Device-side greedy sampling (llama.cpp's backend sampling): whether setting (-1 auto, 0 off,
 * 1 on) turns it on for m, and the per-sequence configs for seq ids 0..n_seq-1, each a chain
 * holding llama.cpp's greedy sampler, to pass in llama_context_params. The chains must outlive
 * the context: free them after llama_free. */
bool engine_device_sampling(const dream_model *m, int setting);
struct llama_sampler_seq_config *engine_samplers_new(int n_seq);
void engine_samplers_free(struct llama_sampler_seq_config *cfg, int n_seq);

/* Builds the model's special-token table (at load). */
int engine_specials_build(dream_model *m);
/* Reads the untrained tokens ids[0..n) into m->untrained and their trained pieces into
 * m->split_start / m->split_ids (tokenize.c). */
int engine_untrained_build(dream_model *m, const int32_t *ids, size_t n, const char *path);

#endif
