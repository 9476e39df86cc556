/* model.c — finding, checking and loading a GGUF model; its metadata. */
#include "engine_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/buf.h"
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <gguf.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Appends "  - <what>: <where> (<why>)" to the list of places looked at. */
static void looked(struct dbuf *l, const char *what, const char *where, const char *why)
{
    if (why) dbuf_printf(l, "\n  - %s: %s (%s)", what, where, why);
    else dbuf_printf(l, "\n  - %s: %s", what, where);
}

/* Looks in one hub cache for models--ggml-org--gemma-4-E4B-it-GGUF/snapshots/<any>/<file>. */
static char *find_in_hub(const char *hub, struct dbuf *l)
{
    char snaps[4096];
    snprintf(snaps, sizeof snaps, "%s/models--ggml-org--gemma-4-E4B-it-GGUF/snapshots", hub);
    DIR *d = opendir(snaps);
    if (!d) {
        looked(l, "Hugging Face cache", snaps, "no such directory");
        return NULL;
    }
    char *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[4096 + 512];
        snprintf(p, sizeof p, "%s/%s/%s", snaps, e->d_name, DREAM_DEFAULT_MODEL_FILE);
        if (file_exists(p)) found = strdup(p);
    }
    closedir(d);
    if (!found) {
        char p[4096 + 64];
        snprintf(p, sizeof p, "%s/*/%s", snaps, DREAM_DEFAULT_MODEL_FILE);
        looked(l, "Hugging Face cache", p, "no snapshot has the file");
    }
    return found;
}

int dream_model_resolve(const char *explicit_path, char **out)
{
    *out = NULL;
    if (explicit_path && *explicit_path) {
        if (!file_exists(explicit_path))
            return dream_error_set(DREAM_ENOTFOUND, "model file %s does not exist (given with --model)", explicit_path);
        *out = strdup(explicit_path);
        return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    const char *env = getenv("DREAM_MODEL");
    if (env && *env) {
        if (!file_exists(env))
            return dream_error_set(DREAM_ENOTFOUND, "model file %s does not exist (given by DREAM_MODEL)", env);
        *out = strdup(env);
        return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    struct dbuf l = {0};
    looked(&l, "--model", "not given", NULL);
    looked(&l, "DREAM_MODEL", "not set", NULL);
    char hub[4096];
    const char *hf_hub = getenv("HF_HUB_CACHE");
    const char *hf_home = getenv("HF_HOME");
    const char *home = getenv("HOME");
    if (hf_hub && *hf_hub) snprintf(hub, sizeof hub, "%s", hf_hub);
    else if (hf_home && *hf_home) snprintf(hub, sizeof hub, "%s/hub", hf_home);
    else snprintf(hub, sizeof hub, "%s/.cache/huggingface/hub", home ? home : "");
    *out = find_in_hub(hub, &l);
    if (*out) {
        dbuf_free(&l);
        return 0;
    }
    int rc = dream_error_set(DREAM_ENOTFOUND,
                             "no model found. Looked at:%s\n"
                             "Download the default model (dream never downloads anything itself) with:\n"
                             "  hf download %s %s\n"
                             "or pass --model PATH / set DREAM_MODEL to any GGUF file.",
                             l.data ? l.data : "", DREAM_DEFAULT_MODEL_REPO, DREAM_DEFAULT_MODEL_FILE);
    dbuf_free(&l);
    return rc;
}

struct dream_model_params dream_model_default_params(void)
{
    struct dream_model_params p = {.n_gpu_layers = -1, .vocab_only = false};
    return p;
}

/* The integer value of key k, whatever integer type it has; false for another type. */
static bool kv_int(const struct gguf_context *g, int64_t k, int64_t *v)
{
    switch (gguf_get_kv_type(g, k)) {
    case GGUF_TYPE_UINT8: *v = gguf_get_val_u8(g, k); return true;
    case GGUF_TYPE_INT8: *v = gguf_get_val_i8(g, k); return true;
    case GGUF_TYPE_UINT16: *v = gguf_get_val_u16(g, k); return true;
    case GGUF_TYPE_INT16: *v = gguf_get_val_i16(g, k); return true;
    case GGUF_TYPE_UINT32: *v = gguf_get_val_u32(g, k); return true;
    case GGUF_TYPE_INT32: *v = gguf_get_val_i32(g, k); return true;
    case GGUF_TYPE_UINT64: *v = (int64_t)gguf_get_val_u64(g, k); return true;
    case GGUF_TYPE_INT64: *v = gguf_get_val_i64(g, k); return true;
    default: return false;
    }
}

/* The settings in a model's metadata that llama.cpp asserts on, or that make every logit NaN,
 * checked first so that a damaged file is an error naming it rather than an abort or an answer
 * decoded from NaNs: <arch>.block_count in 1..512, every norm epsilon finite and not negative,
 * the rope base finite and positive, and no token text twice in the vocabulary. */
static int check_hparams(const struct gguf_context *g, const char *path)
{
    int64_t ka = gguf_find_key(g, "general.architecture");
    if (ka < 0 || gguf_get_kv_type(g, ka) != GGUF_TYPE_STRING) return 0; /* llama.cpp says what is missing */
    const char *arch = gguf_get_val_str(g, ka);
    char key[256];
    snprintf(key, sizeof key, "%s.block_count", arch);
    int64_t kb = gguf_find_key(g, key), v = 0;
    if (kb >= 0 && (!kv_int(g, kb, &v) || v < 1 || v > 512))
        return dream_error_set(DREAM_EFORMAT, "%s is damaged: %s is %" PRId64 " (a model has 1 to 512 layers); re-download or re-make it", path, key, v);
    for (int64_t k = 0; k < gguf_get_n_kv(g); k++) {
        const char *name = gguf_get_key(g, k);
        size_t n = strlen(name);
        bool eps = n > 7 && !strcmp(name + n - 7, "epsilon"), rope = strstr(name, ".rope.freq_base") != NULL;
        if (!eps && !rope) continue;
        float f = gguf_get_kv_type(g, k) == GGUF_TYPE_FLOAT32 ? gguf_get_val_f32(g, k) : NAN;
        if (!isfinite(f) || f < 0 || (rope && f == 0))
            return dream_error_set(DREAM_EFORMAT, "%s is damaged: %s is %g (%s); re-download or re-make it", path, name, (double)f,
                                   rope ? "a rope base is a positive number" : "an epsilon is a small positive number");
    }
    int64_t kt = gguf_find_key(g, "tokenizer.ggml.tokens");
    if (kt < 0 || gguf_get_kv_type(g, kt) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, kt) != GGUF_TYPE_STRING) return 0;
    size_t nt = gguf_get_arr_n(g, kt), cap = 1;
    while (cap < nt * 2) cap <<= 1;
    int64_t *seen = malloc(cap * sizeof *seen); /* open addressing over token ids, -1 empty */
    if (!seen) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memset(seen, 0xff, cap * sizeof *seen);
    int rc = 0;
    for (size_t i = 0; i < nt && !rc; i++) {
        const char *t = gguf_get_arr_str(g, kt, i);
        uint64_t h = 1469598103934665603ULL;
        for (const unsigned char *c = (const unsigned char *)t; *c; c++) h = (h ^ *c) * 1099511628211ULL;
        size_t j = (size_t)h & (cap - 1);
        for (; seen[j] >= 0; j = (j + 1) & (cap - 1))
            if (!strcmp(gguf_get_arr_str(g, kt, (size_t)seen[j]), t)) {
                rc = dream_error_set(DREAM_EFORMAT, "%s is damaged: tokens %" PRId64 " and %zu of its vocabulary are both '%.40s'; re-download or re-make it",
                                     path, seen[j], i, t);
                break;
            }
        seen[j] = (int64_t)i;
    }
    free(seen);
    return rc;
}

int engine_gguf_extents(const struct gguf_context *g, const char *path, const char *what, const char *fix)
{
    struct stat st;
    if (stat(path, &st) != 0) return dream_error_set(DREAM_EIO, "cannot read %s%s: %s", what, path, strerror(errno));
    size_t data_off = gguf_get_data_offset(g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        size_t end = data_off + gguf_get_tensor_offset(g, i) + gguf_get_tensor_size(g, i);
        if (end > (size_t)st.st_size)
            return dream_error_set(DREAM_EFORMAT, "%s%s is truncated: tensor '%s' ends at byte %zu but the file has %lld bytes; %s", what, path,
                                   gguf_get_tensor_name(g, i), end, (long long)st.st_size, fix);
    }
    return 0;
}

/* Checks that path is a complete GGUF file before llama.cpp maps it: the magic, a parseable
 * header, and every tensor's data inside the file (a truncated file would otherwise fault when
 * a tensor is first touched). From the same header read, *untrained (malloc'd, or NULL) gets
 * the ids of the key dream.untrained_tokens, which llama.cpp's metadata API cannot return. */
static int check_gguf(const char *path, bool vocab_only, int32_t **untrained, size_t *n_untrained)
{
    *untrained = NULL;
    *n_untrained = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return dream_error_set(errno == ENOENT ? DREAM_ENOTFOUND : DREAM_EIO, "cannot open model %s: %s", path, strerror(errno));
    char magic[4] = {0};
    size_t got = fread(magic, 1, 4, f);
    fclose(f);
    if (got != 4 || memcmp(magic, "GGUF", 4) != 0)
        return dream_error_set(DREAM_EFORMAT, "%s is not a GGUF model file (it does not start with 'GGUF'); pass a .gguf file", path);
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (!g)
        return dream_error_set(DREAM_EFORMAT, "%s is a damaged GGUF file: its header cannot be read (truncated or corrupt?); re-download or re-make it", path);
    int rc0 = vocab_only ? 0 : engine_gguf_extents(g, path, "", "re-download or re-make it");
    if (!rc0) rc0 = check_hparams(g, path);
    if (rc0) {
        gguf_free(g);
        return rc0;
    }
    int64_t k = gguf_find_key(g, "dream.untrained_tokens");
    if (k >= 0) {
        if (gguf_get_kv_type(g, k) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, k) != GGUF_TYPE_INT32) {
            gguf_free(g);
            return dream_error_set(DREAM_EFORMAT, "%s: dream.untrained_tokens is not an array of int32 token ids; re-make the model with dream-make-model --mark-untrained", path);
        }
        size_t n_arr = gguf_get_arr_n(g, k);
        if (n_arr && !(*untrained = malloc(n_arr * sizeof **untrained))) {
            gguf_free(g);
            return dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        if (n_arr) memcpy(*untrained, gguf_get_arr_data(g, k), n_arr * sizeof **untrained);
        *n_untrained = n_arr;
    }
    gguf_free(g);
    return 0;
}

int dream_model_load(const char *path, const struct dream_model_params *params, dream_model **out)
{
    *out = NULL;
    struct dream_model_params p = params ? *params : dream_model_default_params();
    engine_backend_init(); /* first, so that gguf's own complaints go through our log */
    int32_t *untrained;
    size_t n_untrained;
    int rc = check_gguf(path, p.vocab_only, &untrained, &n_untrained);
    if (rc) return rc;

    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = p.n_gpu_layers;
    mp.vocab_only = p.vocab_only;
    dream_model *m = calloc(1, sizeof *m);
    if (!m) {
        free(untrained);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    m->path = strdup(path);
    m->model = llama_model_load_from_file(path, mp);
    if (!m->model || !m->path) {
        free(untrained);
        dream_model_free(m);
        return dream_error_set(DREAM_EMODEL, "llama.cpp could not load %s (unsupported architecture or damaged file; run with -v to see why)", path);
    }
    m->vocab = llama_model_get_vocab(m->model);
    m->on_gpu = !p.vocab_only && p.n_gpu_layers != 0 && llama_supports_gpu_offload();
    if (llama_model_meta_val_str(m->model, "general.architecture", m->arch, sizeof m->arch) < 0) m->arch[0] = '\0';
    const char *tmpl = llama_model_chat_template(m->model, NULL);
    if (tmpl) m->chat_template = strdup(tmpl);
    rc = engine_specials_build(m);
    if (!rc && untrained) rc = engine_untrained_build(m, untrained, n_untrained, path);
    free(untrained);
    if (rc) {
        dream_model_free(m);
        return rc;
    }
    dream_log(DREAM_LOG_INFO, "loaded %s (%s, %d tokens)", path, m->arch, llama_vocab_n_tokens(m->vocab));
    *out = m;
    return 0;
}

void dream_model_free(dream_model *m)
{
    if (!m) return;
    if (m->model) llama_model_free(m->model);
    free(m->specials);
    free(m->by_byte);
    free(m->gram_by_first);
    free(m->gram_eog);
    free(m->untrained);
    free(m->split_start);
    free(m->split_ids);
    free(m->chat_template);
    free(m->path);
    free(m);
}

const char *dream_model_path(const dream_model *m) { return m->path; }
const char *dream_model_arch(const dream_model *m) { return m->arch; }

bool dream_model_meta_bool(const dream_model *m, const char *key)
{
    char v[8];
    return llama_model_meta_val_str(m->model, key, v, sizeof v) >= 0 && !strcmp(v, "true");
}
const char *dream_model_chat_template(const dream_model *m) { return m->chat_template; }
int dream_model_n_vocab(const dream_model *m) { return llama_vocab_n_tokens(m->vocab); }
int dream_model_n_ctx_train(const dream_model *m) { return llama_model_n_ctx_train(m->model); }
int dream_model_flash_attn_choice(const dream_model *m, int requested)
{
    if (requested >= 0) return requested;
    return m->on_gpu || llama_model_size(m->model) < DREAM_FA_CPU_MAX_BYTES;
}
dream_token dream_model_bos(const dream_model *m) { return llama_vocab_bos(m->vocab); }
dream_token dream_model_eos(const dream_model *m) { return llama_vocab_eos(m->vocab); }
bool dream_model_add_bos(const dream_model *m) { return llama_vocab_get_add_bos(m->vocab); }
bool dream_model_is_eog(const dream_model *m, dream_token t) { return llama_vocab_is_eog(m->vocab, t); }
bool dream_model_is_control(const dream_model *m, dream_token t) { return llama_vocab_is_control(m->vocab, t); }

const char *dream_model_token_text(const dream_model *m, dream_token t)
{
    if (t < 0 || t >= llama_vocab_n_tokens(m->vocab)) return "";
    return llama_vocab_get_text(m->vocab, t);
}
