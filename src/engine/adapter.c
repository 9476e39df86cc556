/* adapter.c — LoRA adapters: checked loading and setting them on a context. */
#include "engine_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/file.h"

#include <errno.h>
#include <gguf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dream_adapter {
    struct llama_adapter_lora *lora;
    char *path;
};

/* Reads the adapter's header: it must be a LoRA adapter for the model's architecture. */
static int check_adapter_header(const dream_model *m, const char *path)
{
    if (!file_exists(path)) return dream_error_set(DREAM_ENOTFOUND, "adapter %s does not exist", path);
    if (access(path, R_OK) != 0) return dream_error_set(DREAM_EIO, "cannot open adapter %s: %s", path, strerror(errno)); /* not damaged: unreadable */
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (!g) return dream_error_set(DREAM_EFORMAT, "adapter %s is not a readable GGUF file (damaged or not an adapter); remake it", path);
    /* a truncated file reads as a header whose tensors run past its end: said so, rather than
     * llama.cpp's failure read as an adapter made for another model */
    int rc = engine_gguf_extents(g, path, "adapter ", "remake it");
    if (rc) {
        gguf_free(g);
        return rc;
    }
    int64_t k_type = gguf_find_key(g, "general.type");
    int64_t k_arch = gguf_find_key(g, "general.architecture");
    const char *type = k_type >= 0 && gguf_get_kv_type(g, k_type) == GGUF_TYPE_STRING ? gguf_get_val_str(g, k_type) : "";
    const char *arch = k_arch >= 0 && gguf_get_kv_type(g, k_arch) == GGUF_TYPE_STRING ? gguf_get_val_str(g, k_arch) : "";
    if (strcmp(type, "adapter") != 0)
        rc = dream_error_set(DREAM_EFORMAT, "%s is not a LoRA adapter (general.type is '%s', not 'adapter')", path, type);
    else if (strcmp(arch, m->arch) != 0)
        rc = dream_error_set(DREAM_EINVAL, "adapter %s was made for architecture '%s' but the model %s is '%s'; make the adapter for this model",
                             path, arch, m->path, m->arch);
    gguf_free(g);
    return rc;
}

int dream_adapter_load(dream_model *m, const char *path, dream_adapter **out)
{
    *out = NULL;
    engine_backend_init();
    int rc = check_adapter_header(m, path);
    if (rc) return rc;
    dream_adapter *a = calloc(1, sizeof *a);
    if (!a) return dream_error_set(DREAM_ENOMEM, "out of memory");
    a->path = strdup(path);
    a->lora = llama_adapter_lora_init(m->model, path);
    if (!a->lora || !a->path) {
        free(a->path);
        free(a);
        return dream_error_set(DREAM_EINVAL,
                               "adapter %s does not fit the model %s (its tensors name weights the model lacks or have other shapes); make the adapter for this model (run with -v for llama.cpp's reason)",
                               path, m->path);
    }
    dream_log(DREAM_LOG_INFO, "loaded adapter %s", path);
    *out = a;
    return 0;
}

void dream_adapter_free(dream_adapter *a)
{
    if (!a) return;
    llama_adapter_lora_free(a->lora);
    free(a->path);
    free(a);
}

const char *dream_adapter_path(const dream_adapter *a) { return a->path; }

/* Sets the context's whole adapter set to {a at scale}, or clears it. */
int engine_set_adapter(struct llama_context *ctx, dream_adapter *a, float scale)
{
    struct llama_adapter_lora *set[1];
    float scales[1] = {scale};
    int rc;
    if (a && scale != 0.0f) {
        set[0] = a->lora;
        rc = llama_set_adapters_lora(ctx, set, 1, scales);
    } else {
        rc = llama_set_adapters_lora(ctx, NULL, 0, NULL);
    }
    return rc == 0 ? 0 : dream_error_set(DREAM_EMODEL, "llama.cpp refused to set the adapter %s (code %d)", a ? a->path : "(none)", rc);
}

int dream_session_set_adapter(dream_session *s, dream_adapter *a, float scale) { return engine_set_adapter(s->ctx, a, scale); }
