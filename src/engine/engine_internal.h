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
};

struct dream_session {
    dream_model *model;
    struct llama_context *ctx;
    struct dream_session_params params;
    int n_ctx;
    struct llama_sampler_seq_config *samplers; /* device sampling for seq 0, or NULL */
};

/* Initialises llama.cpp's backends and routes its log through dream_log; safe to call many
 * times from any thread. */
void engine_backend_init(void);

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

#endif
