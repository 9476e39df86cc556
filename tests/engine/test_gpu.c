/* test_gpu.c — the seam's engine on a GPU: the tiny Gemma 4 fully offloaded, serial and batched.
 * Where llama.cpp has no GPU backend or no device (CI, this project's CPU machines), the test is
 * skipped and says so (ctest counts exit code 77 as skipped). On a GPU, exactness is not
 * promised (docs/EXACTNESS.md): the test requires that every call answers, and reports the
 * agreement between batched and serial. */
#include "dream/engine.h"
#include "dream/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (!dream_engine_has_gpu()) {
        printf("SKIPPED: no GPU here (llama.cpp built without CUDA, or no device); the GPU path is measured by bench/gpu.sh on the H200\n");
        return 77;
    }
    if (argc < 2) return 2;
    struct dream_model_params mp = dream_model_default_params();
    mp.n_gpu_layers = -1;
    dream_model *m = NULL;
    if (dream_model_load(argv[1], &mp, &m)) {
        fprintf(stderr, "FAIL load: %s\n", dream_error_last());
        return 1;
    }
    enum { N = 8 };
    struct dream_tokens prompts[N];
    int agree = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        memset(&prompts[i], 0, sizeof prompts[i]);
        for (int k = 0; k < 50 + 100 * i; k++) dream_tokens_push(&prompts[i], 1000 + (k * 7919 + i * 31) % 20000);
    }
    struct dream_session *s = NULL;
    struct dream_batcher *b = NULL;
    struct dream_batch_params bp = dream_batch_default_params();
    bp.width = 4;
    if (dream_session_new(m, NULL, &s) || dream_batcher_new(m, &bp, &b)) {
        fprintf(stderr, "FAIL context: %s\n", dream_error_last());
        return 1;
    }
    struct dream_gen_params gp = dream_gen_default_params();
    gp.max_tokens = 16;
    gp.ignore_eog = true;
    struct dream_gen_result serial[N], batched[N];
    int status[N];
    for (int i = 0; i < N; i++) bad |= dream_generate(s, prompts[i].ids, prompts[i].n, &gp, &serial[i]) != 0;
    bad |= dream_batcher_run(b, prompts, N, &gp, NULL, batched, status) != 0;
    for (int i = 0; i < N && !bad; i++) {
        bad |= status[i] != 0 || batched[i].n_tokens != 16 || serial[i].n_tokens != 16;
        agree += !bad && !memcmp(serial[i].tokens, batched[i].tokens, 16 * sizeof(dream_token));
        dream_gen_result_free(&serial[i]);
        dream_gen_result_free(&batched[i]);
    }
    printf("GPU: %d of %d batched calls agree with the serial decode (not promised on a GPU)\n", agree, N);
    for (int i = 0; i < N; i++) dream_tokens_free(&prompts[i]);
    dream_batcher_free(b);
    dream_session_free(s);
    dream_model_free(m);
    return bad;
}
