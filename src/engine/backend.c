/* backend.c — one-time llama.cpp initialisation and its log, routed through dream_log.
 *
 * llama.cpp's own messages are noise to a person using dream: they are shown only at -v
 * (errors and warnings) and -vv (everything). Our own errors say what went wrong. */
#include "engine_internal.h"

#include "dream/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static _Thread_local enum ggml_log_level last_level = GGML_LOG_LEVEL_INFO;
static _Thread_local char last_error[256]; /* the last error line llama.cpp logged on this thread */

void engine_log_error_clear(void) { last_error[0] = 0; }
const char *engine_log_error_last(void) { return last_error; }

static void llama_log_to_dream(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_CONT) level = last_level;
    else last_level = level;
    if (level == GGML_LOG_LEVEL_ERROR) {
        snprintf(last_error, sizeof last_error, "%s", text);
        size_t n = strlen(last_error);
        while (n && (last_error[n - 1] == '\n' || last_error[n - 1] == ' ')) last_error[--n] = 0;
    }
    enum dream_log_level want;
    switch (level) {
    case GGML_LOG_LEVEL_ERROR:
    case GGML_LOG_LEVEL_WARN: want = DREAM_LOG_INFO; break;
    default: want = DREAM_LOG_DEBUG; break;
    }
    if (want < dream_log_get_level()) return;
    fputs(text, stderr);
}

static void backend_init_once(void)
{
    llama_log_set(llama_log_to_dream, NULL);
    llama_backend_init();
}

void engine_backend_init(void) { pthread_once(&backend_once, backend_init_once); }

bool dream_engine_has_gpu(void)
{
    engine_backend_init();
    return llama_supports_gpu_offload();
}

bool engine_device_sampling(const dream_model *m, int setting)
{
    return setting > 0 || (setting < 0 && m->on_gpu);
}

struct llama_sampler_seq_config *engine_samplers_new(int n_seq)
{
    struct llama_sampler_seq_config *cfg = calloc((size_t)n_seq, sizeof *cfg);
    for (int i = 0; cfg && i < n_seq; i++) {
        cfg[i].seq_id = i;
        cfg[i].sampler = llama_sampler_chain_init(llama_sampler_chain_default_params());
        if (!cfg[i].sampler) {
            engine_samplers_free(cfg, i);
            return NULL;
        }
        llama_sampler_chain_add(cfg[i].sampler, llama_sampler_init_greedy());
    }
    return cfg;
}

void engine_samplers_free(struct llama_sampler_seq_config *cfg, int n_seq)
{
    for (int i = 0; cfg && i < n_seq; i++) llama_sampler_free(cfg[i].sampler);
    free(cfg);
}
