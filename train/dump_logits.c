/*
 * dump_logits.c — the parity check's probe into llama.cpp: decodes one prompt (token ids) with a
 * GGUF and prints the top K logits of its last position, so check_parity.sh can compare them with
 * ref_forward.py's. Same settings as dream's exact serial path (flash attention off, prefill in
 * chunks of 512, one thread count for every ubatch). Not part of the product; check_parity.sh
 * compiles it against the pinned llama.cpp build.
 *
 * usage: dump_logits MODEL.gguf K ID ID ...   → one JSON line: {"top": [[id, logit], ...]}
 */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static bool no_progress(float progress, void *ud)
{
    (void)progress;
    (void)ud;
    return true;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dump_logits MODEL.gguf K ID...\n");
        return 2;
    }
    int k = atoi(argv[2]), n = argc - 3;
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.progress_callback = no_progress;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        fprintf(stderr, "dump_logits: cannot load %s\n", argv[1]);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n + 256);
    cp.n_batch = 512;
    cp.n_ubatch = 512;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.n_threads = cp.n_threads_batch = 2;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    llama_token *ids = malloc((size_t)n * sizeof *ids);
    if (!ctx || !ids) {
        fprintf(stderr, "dump_logits: cannot make a context\n");
        return 1;
    }
    for (int i = 0; i < n; i++) ids[i] = atoi(argv[3 + i]);
    for (int at = 0; at < n; at += 512) {
        int len = n - at < 512 ? n - at : 512;
        if (llama_decode(ctx, llama_batch_get_one(ids + at, len)) != 0) {
            fprintf(stderr, "dump_logits: llama_decode failed\n");
            return 1;
        }
    }
    const float *logits = llama_get_logits_ith(ctx, -1);
    int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    printf("{\"top\": [");
    char *taken = calloc((size_t)n_vocab, 1);
    for (int j = 0; j < k && taken; j++) {
        int best = -1;
        for (int t = 0; t < n_vocab; t++)
            if (!taken[t] && (best < 0 || logits[t] > logits[best])) best = t;
        taken[best] = 1;
        printf("%s[%d, %.6f]", j ? ", " : "", best, (double)logits[best]);
    }
    printf("]}\n");
    free(taken);
    free(ids);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
