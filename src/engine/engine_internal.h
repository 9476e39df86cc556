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
};

/* Initialises llama.cpp's backends and routes its log through dream_log; safe to call many
 * times from any thread. */
void engine_backend_init(void);

/* Sets a context's adapter set to {adapter at scale}; NULL or scale 0 clears it (adapter.c). */
int engine_set_adapter(struct llama_context *ctx, dream_adapter *adapter, float scale);

/* Builds the model's special-token table (at load). */
int engine_specials_build(dream_model *m);

#endif
