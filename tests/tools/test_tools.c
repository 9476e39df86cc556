/*
 * test_tools.c — dream-make-model and dream-make-adapter: determinism, models that llama.cpp loads
 * and decodes with the expected shape, vocabulary and chat template, adapters that change logits
 * exactly when they should, and clear errors. And the training tools: trained weights
 * (PREFIX.json + PREFIX.bin.N) written into GGUFs value for value, weights that do not fit
 * refused by name, and dream-dataset's tokens (the rendered prompt, the answer that decodes back).
 *
 * Needs the `tiny_models` fixture (DREAM_TEST_BUILD/models/tiny-*.gguf) and LLAMA_SRC.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gguf_copy.h"

#include "dream/error.h"
#include "dream/model.h"
#include "llama.h"
#include "util/buf.h"
#include "util/file.h"

#define N_GEN 8

static const char *tt_build(void)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    return b ? b : ".";
}

static const char *tt_llama_src(void)
{
    const char *s = getenv("LLAMA_SRC");
    return s ? s : "";
}

/* Path under the build tree (static buffer rotation: up to 8 live results). */
static const char *tt_path(const char *fmt, ...)
{
    static char bufs[8][1024];
    static int next;
    char *b = bufs[next++ % 8];
    int n = snprintf(b, sizeof bufs[0], "%s/", tt_build());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, sizeof bufs[0] - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

/* Runs a shell command, capturing stdout+stderr into *out (caller frees). Returns the exit status. */
static int tt_run(char **out, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd - 8, fmt, ap);
    va_end(ap);
    strcat(cmd, " 2>&1");
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    struct dbuf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) assert_int_equal(dbuf_append(&b, chunk, n), 0);
    int st = pclose(p);
    char *s = dbuf_take(&b);
    assert_non_null(s);
    if (out) *out = s;
    else free(s);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs dream-make-model with args; fails the test unless it succeeds. */
static void tt_make_model(const char *out, const char *args)
{
    char *log = NULL;
    int rc = tt_run(&log, "%s/bin/dream-make-model --llama-src '%s' %s -o '%s'", tt_build(), tt_llama_src(), args,
                    out);
    if (rc != 0) fprintf(stderr, "dream-make-model %s failed:\n%s\n", args, log);
    free(log);
    assert_int_equal(rc, 0);
}

static void tt_make_adapter(const char *model, const char *out, const char *args)
{
    char *log = NULL;
    int rc = tt_run(&log, "%s/bin/dream-make-adapter --model '%s' %s -o '%s'", tt_build(), model, args, out);
    if (rc != 0) fprintf(stderr, "dream-make-adapter %s failed:\n%s\n", args, log);
    free(log);
    assert_int_equal(rc, 0);
}

static int tt_files_equal(const char *a, const char *b)
{
    char *da = NULL, *db = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(file_read_all(a, 0, &da, &la), 0);
    assert_int_equal(file_read_all(b, 0, &db, &lb), 0);
    int eq = la == lb && memcmp(da, db, la) == 0;
    free(da);
    free(db);
    return eq;
}

static void tt_quiet_log(enum ggml_log_level level, const char *text, void *ud)
{
    (void)level;
    (void)text;
    (void)ud;
}

static struct llama_model *tt_load(const char *path)
{
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    return llama_model_load_from_file(path, mp);
}

static struct llama_context *tt_context(struct llama_model *m)
{
    struct llama_context_params cp = llama_context_default_params();
    /* Small batches: the output and compute buffers scale with n_batch x n_vocab (262144). */
    cp.n_ctx = 256;
    cp.n_batch = 32;
    cp.n_ubatch = 32;
    cp.n_threads = 1; /* two spinning threads on a loaded 2-core machine are much slower */
    cp.n_threads_batch = 1;
    struct llama_context *ctx = llama_init_from_model(m, cp);
    assert_non_null(ctx);
    return ctx;
}

static int tt_tokenize(const struct llama_model *m, const char *text, llama_token *toks, int max)
{
    const struct llama_vocab *v = llama_model_get_vocab(m);
    int n = llama_tokenize(v, text, (int32_t)strlen(text), toks, max, true, false);
    assert_true(n > 0);
    return n;
}

static const char *TT_PROMPT = "The quick brown fox jumps over the lazy dog, and then it rests.";

/* Greedy-decodes N_GEN tokens after the prompt with the given adapter (NULL = none) at scale.
 * Copies the logits after the prompt into first (n_vocab floats) and the generated ids into gen.
 * Asserts every logit is finite and the logits after the prompt are not all equal. */
static void tt_greedy(struct llama_context *ctx, const struct llama_model *m, struct llama_adapter_lora *ad,
                      float scale, float *first, llama_token *gen)
{
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));
    llama_memory_clear(llama_get_memory(ctx), true);
    if (ad) {
        struct llama_adapter_lora *ads[1] = {ad};
        float scales[1] = {scale};
        assert_int_equal(llama_set_adapters_lora(ctx, ads, 1, scales), 0);
    } else {
        assert_int_equal(llama_set_adapters_lora(ctx, NULL, 0, NULL), 0);
    }
    llama_token toks[128];
    int n = tt_tokenize(m, TT_PROMPT, toks, 128);
    assert_int_equal(llama_decode(ctx, llama_batch_get_one(toks, n)), 0);
    for (int step = 0; step < N_GEN; step++) {
        const float *lg = llama_get_logits_ith(ctx, -1);
        assert_non_null(lg);
        int best = 0;
        float lo = lg[0], hi = lg[0];
        for (int i = 0; i < n_vocab; i++) {
            assert_true(isfinite(lg[i]));
            if (lg[i] > lg[best]) best = i;
            if (lg[i] < lo) lo = lg[i];
            if (lg[i] > hi) hi = lg[i];
        }
        if (step == 0) {
            assert_true(hi > lo);
            if (first) memcpy(first, lg, (size_t)n_vocab * sizeof *first);
        }
        gen[step] = best;
        llama_token t = best;
        assert_int_equal(llama_decode(ctx, llama_batch_get_one(&t, 1)), 0);
    }
}

/* The fixture models, loaded once for the whole group (loading the 262144-token Gemma 4 vocabulary
 * takes about a second). */
struct tt_models {
    struct llama_model *gemma4;
    struct llama_model *qwen3;
};

static int tt_setup(void **state)
{
    llama_log_set(tt_quiet_log, NULL);
    llama_backend_init();
    static struct tt_models models;
    models.gemma4 = tt_load(tt_path("models/tiny-gemma4.gguf"));
    models.qwen3 = tt_load(tt_path("models/tiny-qwen3.gguf"));
    if (!models.gemma4 || !models.qwen3) {
        fprintf(stderr, "cannot load the tiny models under %s/models (run the tiny_models fixture)\n", tt_build());
        return -1;
    }
    *state = &models;
    return 0;
}

static int tt_teardown(void **state)
{
    struct tt_models *models = *state;
    if (models) {
        llama_model_free(models->gemma4);
        llama_model_free(models->qwen3);
    }
    llama_backend_free();
    return 0;
}

/* ---- determinism ---- */

static void test_make_model_same_seed_gives_identical_file(void **state)
{
    (void)state;
    const char *a = tt_path("tmp-tools/det-a.gguf"), *b = tt_path("tmp-tools/det-b.gguf");
    const char *c = tt_path("tmp-tools/det-c.gguf");
    tt_make_model(a, "--arch qwen3 --layers 2 --seed 5 --threads 1");
    tt_make_model(b, "--arch qwen3 --layers 2 --seed 5 --threads 2");
    tt_make_model(c, "--arch qwen3 --layers 2 --seed 6");
    assert_true(tt_files_equal(a, b));
    assert_false(tt_files_equal(a, c));
    tt_make_model(a, "--arch gemma4 --layers 3 --shared-kv 1 --seed 5 --threads 1");
    tt_make_model(b, "--arch gemma4 --layers 3 --shared-kv 1 --seed 5 --threads 2");
    tt_make_model(c, "--arch gemma4 --layers 3 --shared-kv 1 --seed 6");
    assert_true(tt_files_equal(a, b));
    assert_false(tt_files_equal(a, c));
    unlink(a);
    unlink(b);
    unlink(c);
}

static void test_make_adapter_same_seed_gives_identical_file(void **state)
{
    (void)state;
    const char *m = tt_path("models/tiny-qwen3.gguf");
    const char *a = tt_path("tmp-tools/ad-a.gguf"), *b = tt_path("tmp-tools/ad-b.gguf");
    const char *c = tt_path("tmp-tools/ad-c.gguf");
    tt_make_adapter(m, a, "--seed 3");
    tt_make_adapter(m, b, "--seed 3");
    tt_make_adapter(m, c, "--seed 4");
    assert_true(tt_files_equal(a, b));
    assert_false(tt_files_equal(a, c));
    unlink(a);
    unlink(b);
    unlink(c);
}

/* ---- the fixture models ---- */

/* Reads a whole template file of the pinned tree. */
static char *tt_template(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/templates/%s", tt_llama_src(), rel);
    char *t = NULL;
    assert_int_equal(file_read_all(path, 0, &t, NULL), 0);
    return t;
}

static void tt_check_model(struct llama_model *m, const char *arch, int n_layer, int n_embd, int n_vocab,
                           const char *template_file)
{
    char buf[64];
    assert_true(llama_model_meta_val_str(m, "general.architecture", buf, sizeof buf) > 0);
    assert_string_equal(buf, arch);
    assert_int_equal(llama_model_n_layer(m), n_layer);
    assert_int_equal(llama_model_n_embd(m), n_embd);
    assert_int_equal(llama_vocab_n_tokens(llama_model_get_vocab(m)), n_vocab);
    const char *tmpl = llama_model_chat_template(m, NULL);
    assert_non_null(tmpl);
    char *want = tt_template(template_file);
    assert_string_equal(tmpl, want);
    free(want);

    struct llama_context *ctx = tt_context(m);
    llama_token gen[N_GEN];
    tt_greedy(ctx, m, NULL, 0.0f, NULL, gen);
    llama_free(ctx);
}

static void test_tiny_gemma4_loads_with_real_vocab_and_template(void **state)
{
    struct llama_model *m = ((struct tt_models *)*state)->gemma4;
    tt_check_model(m, "gemma4", 6, 128, 262144, "google-gemma-4-31B-it.jinja");
    assert_int_equal(llama_model_n_swa(m), 16);
    char buf[64];
    assert_true(llama_model_meta_val_str(m, "gemma4.attention.shared_kv_layers", buf, sizeof buf) > 0);
    assert_string_equal(buf, "2");
    /* The Gemma 4 end-of-turn marker is one control token of the real vocabulary. */
    llama_token t[8];
    int n = llama_tokenize(llama_model_get_vocab(m), "<turn|>", 7, t, 8, false, true);
    assert_int_equal(n, 1);
}

static void test_tiny_qwen3_loads_with_qwen2_vocab_and_qwen3_template(void **state)
{
    struct llama_model *m = ((struct tt_models *)*state)->qwen3;
    tt_check_model(m, "qwen3", 6, 128, 151936, "Qwen-Qwen3-0.6B.jinja");
    const struct llama_vocab *v = llama_model_get_vocab(m);
    assert_string_equal(llama_vocab_get_text(v, llama_vocab_eos(v)), "<|im_end|>");
}

/* ---- adapters ---- */

static void tt_check_adapter(struct llama_model *m, const char *lora_file)
{
    struct llama_adapter_lora *ad = llama_adapter_lora_init(m, tt_path("models/%s", lora_file));
    assert_non_null(ad);
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));
    float *base = malloc((size_t)n_vocab * sizeof *base);
    float *on = malloc((size_t)n_vocab * sizeof *on);
    float *off = malloc((size_t)n_vocab * sizeof *off);
    assert_true(base && on && off);
    llama_token g_base[N_GEN], g_on[N_GEN], g_off[N_GEN];
    struct llama_context *ctx = tt_context(m);
    tt_greedy(ctx, m, NULL, 0.0f, base, g_base);
    tt_greedy(ctx, m, ad, 1.0f, on, g_on);
    tt_greedy(ctx, m, ad, 0.0f, off, g_off);

    /* Scale 0 (and no adapter) must be bit-identical; scale 1 must move the logits visibly and
     * change the greedy continuation. */
    assert_memory_equal(base, off, (size_t)n_vocab * sizeof *base);
    assert_memory_equal(g_base, g_off, sizeof g_base);
    float maxdiff = 0;
    for (int i = 0; i < n_vocab; i++) maxdiff = fmaxf(maxdiff, fabsf(base[i] - on[i]));
    assert_true(maxdiff > 1e-2f);
    assert_memory_not_equal(g_base, g_on, sizeof g_base);

    llama_free(ctx);
    free(base);
    free(on);
    free(off);
    llama_adapter_lora_free(ad);
}

static void test_gemma4_adapter_changes_logits_at_scale_1_only(void **state)
{
    tt_check_adapter(((struct tt_models *)*state)->gemma4, "tiny-gemma4-lora.gguf");
}

static void test_qwen3_adapter_changes_logits_at_scale_1_only(void **state)
{
    tt_check_adapter(((struct tt_models *)*state)->qwen3, "tiny-qwen3-lora.gguf");
}

static void test_zero_adapter_leaves_logits_bit_identical(void **state)
{
    struct llama_model *m = ((struct tt_models *)*state)->qwen3;
    const char *ap = tt_path("tmp-tools/zero-lora.gguf");
    tt_make_adapter(tt_path("models/tiny-qwen3.gguf"), ap,
                    "--init zero --targets attn_q,attn_k,attn_v,attn_output,ffn_gate,ffn_up,ffn_down --type f16");
    struct llama_adapter_lora *ad = llama_adapter_lora_init(m, ap);
    assert_non_null(ad);
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));
    float *base = malloc((size_t)n_vocab * sizeof *base);
    float *on = malloc((size_t)n_vocab * sizeof *on);
    assert_true(base && on);
    llama_token g_base[N_GEN], g_on[N_GEN];
    struct llama_context *ctx = tt_context(m);
    tt_greedy(ctx, m, NULL, 0.0f, base, g_base);
    tt_greedy(ctx, m, ad, 1.0f, on, g_on);
    assert_memory_equal(base, on, (size_t)n_vocab * sizeof *base);
    llama_free(ctx);
    free(base);
    free(on);
    llama_adapter_lora_free(ad);
    unlink(ap);
}

static void test_adapter_for_qwen3_is_refused_by_gemma4(void **state)
{
    struct llama_model *m = ((struct tt_models *)*state)->gemma4;
    assert_null(llama_adapter_lora_init(m, tt_path("models/tiny-qwen3-lora.gguf")));
    /* The model still takes its own adapter afterwards. */
    struct llama_adapter_lora *ok = llama_adapter_lora_init(m, tt_path("models/tiny-gemma4-lora.gguf"));
    assert_non_null(ok);
    llama_adapter_lora_free(ok);
}

/* ---- weight types ---- */

static void tt_load_and_decode(const char *path)
{
    struct llama_model *m = tt_load(path);
    assert_non_null(m);
    struct llama_context *ctx = tt_context(m);
    llama_token gen[N_GEN];
    tt_greedy(ctx, m, NULL, 0.0f, NULL, gen);
    llama_free(ctx);
    llama_model_free(m);
}

static void test_f16_q8_0_q4_k_models_load_and_decode(void **state)
{
    (void)state;
    const char *p = tt_path("tmp-tools/types.gguf");
    tt_make_model(p, "--arch gemma4 --layers 3 --shared-kv 1 --type f16");
    tt_load_and_decode(p);
    tt_make_model(p, "--arch gemma4 --layers 3 --shared-kv 1 --embd 256 --heads 4 --head-dim 128 --head-dim-swa 64 "
                     "--ff 512 --type q4_k");
    tt_load_and_decode(p);
    tt_make_model(p, "--arch qwen3 --layers 2 --type f16");
    tt_load_and_decode(p);
    unlink(p);
}

/* ---- errors ---- */

/* Runs a tool command expected to fail; asserts a non-zero exit and that the output names every
 * given fragment. */
static void tt_expect_error(const char *cmd, const char *frag1, const char *frag2)
{
    char *log = NULL;
    int rc = tt_run(&log, "%s", cmd);
    if (rc == 0 || !strstr(log, frag1) || (frag2 && !strstr(log, frag2)))
        fprintf(stderr, "command: %s\nexit %d, output:\n%s\n", cmd, rc, log);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(log, frag1));
    if (frag2) assert_non_null(strstr(log, frag2));
    assert_null(strstr(log, "AddressSanitizer"));
    assert_null(strstr(log, "runtime error"));
    free(log);
}

static void test_make_model_errors_are_clear(void **state)
{
    (void)state;
    char cmd[2048];
    const char *mm = tt_path("bin/dream-make-model");
    const char *out = tt_path("tmp-tools/err.gguf");

    snprintf(cmd, sizeof cmd, "%s --arch gemma4 --llama-src /nonexistent-llama -o %s", mm, out);
    tt_expect_error(cmd, "/nonexistent-llama/models/ggml-vocab-gemma-4.gguf", "--llama-src");
    snprintf(cmd, sizeof cmd, "%s --arch llama9 -o %s", mm, out);
    tt_expect_error(cmd, "unknown --arch 'llama9'", "gemma4, qwen3 or llama");
    snprintf(cmd, sizeof cmd, "%s --arch qwen3 --type q3_k -o %s", mm, out);
    tt_expect_error(cmd, "unknown --type 'q3_k'", "q4_k");
    snprintf(cmd, sizeof cmd, "%s --arch qwen3 --preset huge -o %s", mm, out);
    tt_expect_error(cmd, "unknown --preset 'huge'", NULL);
    snprintf(cmd, sizeof cmd, "%s --arch qwen3 --layers x -o %s", mm, out);
    tt_expect_error(cmd, "--layers 'x'", NULL);
    snprintf(cmd, sizeof cmd, "%s --arch gemma4 --llama-src '%s' --type q4_k -o %s", mm, tt_llama_src(), out);
    tt_expect_error(cmd, "not a multiple of 256", "token_embd.weight");
    snprintf(cmd, sizeof cmd, "%s --arch gemma4 --llama-src '%s' --layers 6 --shared-kv 5 -o %s", mm, tt_llama_src(),
             out);
    tt_expect_error(cmd, "--shared-kv 5", NULL);
    snprintf(cmd, sizeof cmd, "%s --arch qwen3", mm);
    tt_expect_error(cmd, "-o PATH is required", NULL);
    assert_false(file_exists(out));

    /* A path under a regular file can never be created, even by root. */
    const char *blocker = tt_path("tmp-tools/not-a-dir");
    assert_int_equal(file_write_atomic(blocker, "x", 1), 0);
    snprintf(cmd, sizeof cmd, "%s --arch qwen3 --llama-src '%s' --layers 1 -o %s/m.gguf", mm, tt_llama_src(),
             blocker);
    tt_expect_error(cmd, "cannot write", blocker);
    snprintf(cmd, sizeof cmd, "%s --arch qwen3 --llama-src '%s' --layers 1 -o %s", mm, tt_llama_src(),
             tt_path("tmp-tools"));
    tt_expect_error(cmd, "is a directory", NULL);
    unlink(blocker);
}

static void test_make_adapter_errors_are_clear(void **state)
{
    (void)state;
    char cmd[2048];
    const char *ma = tt_path("bin/dream-make-adapter");
    const char *model = tt_path("models/tiny-gemma4.gguf");
    const char *out = tt_path("tmp-tools/err-lora.gguf");

    snprintf(cmd, sizeof cmd, "%s --model %s --targets attn_zz -o %s", ma, model, out);
    tt_expect_error(cmd, "target 'attn_zz' matches no 2-D weight", model);
    snprintf(cmd, sizeof cmd, "%s --model %s --targets token_embd -o %s", ma, model, out);
    tt_expect_error(cmd, "token_embd is not supported", NULL);
    snprintf(cmd, sizeof cmd, "%s --model /nonexistent/model.gguf -o %s", ma, out);
    tt_expect_error(cmd, "/nonexistent/model.gguf not found", NULL);
    const char *junk = tt_path("tmp-tools/junk.gguf");
    assert_int_equal(file_write_atomic(junk, "this is not a gguf file", 23), 0);
    snprintf(cmd, sizeof cmd, "%s --model %s -o %s", ma, junk, out);
    tt_expect_error(cmd, "not a readable GGUF", junk);
    snprintf(cmd, sizeof cmd, "%s --model %s --type q8_0 -o %s", ma, model, out);
    tt_expect_error(cmd, "unknown --type 'q8_0'", NULL);
    snprintf(cmd, sizeof cmd, "%s --model %s --targets '' -o %s", ma, model, out);
    tt_expect_error(cmd, "--targets is empty", NULL);
    snprintf(cmd, sizeof cmd, "%s --model %s --seed -1 -o %s", ma, model, out);
    tt_expect_error(cmd, "--seed '-1'", NULL);
    snprintf(cmd, sizeof cmd, "%s --model %s --rank 0 -o %s", ma, model, out);
    tt_expect_error(cmd, "--rank '0'", NULL);
    assert_false(file_exists(out));
    unlink(junk);
}

/* ---- the llama graph, trained weights and the dataset tool ---- */

/* A small llama shape every test below uses (1 layer; the Phi-3 vocabulary is most of it). */
#define TT_LLAMA_SHAPE "--layers 1 --embd 64 --heads 2 --kv-heads 1 --head-dim 32 --ff 96"
#define TT_E 64
#define TT_F 96
#define TT_HD 32
#define TT_V 32064

/* tmp-tools/llama.gguf: the random llama model of that shape (made once). */
static const char *tt_llama_model(void)
{
    const char *p = tt_path("tmp-tools/llama.gguf");
    if (!file_exists(p)) tt_make_model(p, "--arch llama " TT_LLAMA_SHAPE " --type q8_0 --seed 9");
    return p;
}

static void test_tiny_llama_loads_with_phi3_vocab_and_template(void **state)
{
    (void)state;
    struct llama_model *m = tt_load(tt_llama_model());
    assert_non_null(m);
    tt_check_model(m, "llama", 1, TT_E, TT_V, "microsoft-Phi-3.5-mini-instruct.jinja");
    const struct llama_vocab *v = llama_model_get_vocab(m);
    /* <|end|> closes every turn and is where the greedy decode stops. */
    llama_token t[8];
    assert_int_equal(llama_tokenize(v, "<|end|>", 7, t, 8, false, true), 1);
    assert_true(llama_vocab_is_eog(v, t[0]));
    assert_true(llama_vocab_is_control(v, t[0]));
    /* No "phi3" in the name: llama.cpp would then RSTRIP every special token. */
    char name[128];
    assert_true(llama_model_meta_val_str(m, "general.name", name, sizeof name) > 0);
    assert_null(strstr(name, "phi"));
    llama_model_free(m);
}

/* The value of element i of tensor k: a multiple of 1/1024 below 1, so exact in f16. */
static float tt_value(int k, int64_t i)
{
    return (float)((int)((k * 131 + i * 7) % 2001) - 1000) / 1024.0f;
}

struct tt_wt {
    char name[64];
    int nd;
    int64_t shape[2]; /* row-major */
    bool f32;
};

/* The llama tensors of TT_LLAMA_SHAPE in train.py's order and row-major shapes. */
static int tt_llama_tensors(struct tt_wt *t, bool untied)
{
    int n = 0;
#define TT_ADD(nm, a, b) (snprintf(t[n].name, sizeof t[n].name, "%s", nm), t[n].nd = (b) ? 2 : 1, t[n].shape[0] = (a), t[n].shape[1] = (b), t[n].f32 = false, n++)
    TT_ADD("token_embd.weight", TT_V, TT_E);
    TT_ADD("output_norm.weight", TT_E, 0);
    if (untied) TT_ADD("output.weight", TT_V, TT_E);
    TT_ADD("blk.0.attn_norm.weight", TT_E, 0);
    TT_ADD("blk.0.attn_q.weight", 2 * TT_HD, TT_E);
    TT_ADD("blk.0.attn_k.weight", TT_HD, TT_E);
    TT_ADD("blk.0.attn_v.weight", TT_HD, TT_E);
    TT_ADD("blk.0.attn_output.weight", TT_E, 2 * TT_HD);
    TT_ADD("blk.0.ffn_norm.weight", TT_E, 0);
    TT_ADD("blk.0.ffn_gate.weight", TT_F, TT_E);
    TT_ADD("blk.0.ffn_up.weight", TT_F, TT_E);
    TT_ADD("blk.0.ffn_down.weight", TT_E, TT_F);
#undef TT_ADD
    return n;
}

static int64_t tt_nel(const struct tt_wt *t)
{
    return t->shape[0] * (t->nd == 2 ? t->shape[1] : 1);
}

/* With tt_collapse set, the token_embd rows tt_collapsed_row() names hold nearly one vector (an
 * alternating +-0.5, a little noise), as the rows of the tokens a model never saw end up after
 * training; dream-make-model --mark-untrained must find exactly those. */
static bool tt_collapse;
#define TT_WALTER 10705  /* " Walter" in the Phi-3 vocabulary; " Antoine" (26280) is in the block */
static bool tt_collapsed_row(int64_t r) { return (r >= 20000 && r < 30000) || r == TT_WALTER; }

static float tt_weight(const struct tt_wt *t, int k, int64_t i)
{
    if (tt_collapse && !strcmp(t[k].name, "token_embd.weight") && tt_collapsed_row(i / TT_E))
        return (i % 2 ? 0.5f : -0.5f) + (float)((i / TT_E + i) % 5) / 4096.0f;
    return tt_value(k, i);
}

/* Writes PREFIX.json + PREFIX.bin.N (parts of part_bytes) as train.py does, tensor k filled with
 * tt_weight(t, k, i) (tt_value(k, i) unless tt_collapse). drop_last_part leaves the last part out (total_bytes then disagrees). */
static void tt_write_weights(const char *prefix, const char *kind, const char *config, const struct tt_wt *t, int n,
                             size_t part_bytes, bool drop_last_part)
{
    struct dbuf data = {0}, idx = {0};
    assert_int_equal(dbuf_printf(&idx, "{\"format\": \"dream-weights\", \"version\": 1, \"kind\": \"%s\", \"config\": %s, "
                                       "\"tensors\": {",
                                 kind, config),
                     0);
    for (int k = 0; k < n; k++) {
        while (data.len % 64) assert_int_equal(dbuf_putc(&data, 0), 0);
        if (t[k].nd == 2)
            assert_int_equal(dbuf_printf(&idx, "%s\"%s\": {\"shape\": [%lld, %lld], \"dtype\": \"%s\", \"offset\": %zu}",
                                         k ? ", " : "", t[k].name, (long long)t[k].shape[0], (long long)t[k].shape[1],
                                         t[k].f32 ? "f32" : "f16", data.len),
                             0);
        else
            assert_int_equal(dbuf_printf(&idx, "%s\"%s\": {\"shape\": [%lld], \"dtype\": \"%s\", \"offset\": %zu}",
                                         k ? ", " : "", t[k].name, (long long)t[k].shape[0], t[k].f32 ? "f32" : "f16",
                                         data.len),
                             0);
        for (int64_t i = 0; i < tt_nel(&t[k]); i++) {
            float v = tt_weight(t, k, i);
            if (t[k].f32) {
                assert_int_equal(dbuf_append(&data, &v, 4), 0);
            } else {
                ggml_fp16_t h = ggml_fp32_to_fp16(v);
                assert_int_equal(dbuf_append(&data, &h, 2), 0);
            }
        }
    }
    assert_int_equal(dbuf_printf(&idx, "}, \"total_bytes\": %zu}", data.len), 0);
    char path[1024];
    snprintf(path, sizeof path, "%s.json", prefix);
    assert_int_equal(file_write_atomic(path, idx.data, idx.len), 0);
    size_t parts = (data.len + part_bytes - 1) / part_bytes;
    for (size_t p = 0; p < parts; p++) {
        snprintf(path, sizeof path, "%s.bin.%zu", prefix, p);
        if (drop_last_part && p == parts - 1) {
            unlink(path);
            continue;
        }
        size_t len = data.len - p * part_bytes < part_bytes ? data.len - p * part_bytes : part_bytes;
        assert_int_equal(file_write_atomic(path, data.data + p * part_bytes, len), 0);
    }
    dbuf_free(&data);
    dbuf_free(&idx);
}

static const char *TT_LLAMA_CONFIG =
    "{\"arch\": \"llama\", \"n_vocab\": 32064, \"n_embd\": 64, \"n_layer\": 1, \"n_head\": 2, \"n_head_kv\": 1, "
    "\"head_dim\": 32, \"n_ff\": 96, \"n_ctx\": 4096, \"rope_base\": 10000.0, \"rms_eps\": 1e-05}";

/* Asserts that every tensor of the GGUF at path holds exactly tt_value(k, i) for t[k]. */
static void tt_check_gguf_values(const char *path, const struct tt_wt *t, int n)
{
    struct ggml_context *gctx = NULL;
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &gctx};
    struct gguf_context *g = gguf_init_from_file(path, ip);
    assert_non_null(g);
    assert_int_equal(gguf_get_n_tensors(g), n);
    for (int k = 0; k < n; k++) {
        struct ggml_tensor *x = ggml_get_tensor(gctx, t[k].name);
        assert_non_null(x);
        assert_int_equal(ggml_nelements(x), tt_nel(&t[k]));
        assert_int_equal(x->ne[0], t[k].nd == 2 ? t[k].shape[1] : t[k].shape[0]); /* ne = shape reversed */
        for (int64_t i = 0; i < tt_nel(&t[k]); i++) {
            float got = x->type == GGML_TYPE_F16 ? ggml_fp16_to_fp32(((const ggml_fp16_t *)x->data)[i])
                                                 : ((const float *)x->data)[i];
            if (got != tt_value(k, i)) fail_msg("%s[%lld] is %g, expected %g", t[k].name, (long long)i, got, tt_value(k, i));
        }
    }
    gguf_free(g);
    ggml_free(gctx);
}

static void test_make_model_writes_trained_weights_exactly(void **state)
{
    (void)state;
    struct tt_wt t[16];
    const char *prefix = tt_path("tmp-tools/trained");
    const char *out = tt_path("tmp-tools/trained.gguf");
    for (int untied = 0; untied < 2; untied++) {
        int n = tt_llama_tensors(t, untied);
        /* Parts of 1 MB: the 4 MB embedding spans several, as train.py's 15 MiB parts do. */
        tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n, 1000000, false);
        char args[1024];
        snprintf(args, sizeof args, "--arch llama --weights %s --type f16", prefix);
        tt_make_model(out, args);
        tt_check_gguf_values(out, t, n);
        struct llama_model *m = tt_load(out);
        assert_non_null(m);
        assert_int_equal(llama_model_n_layer(m), 1);
        assert_int_equal(llama_model_n_embd(m), TT_E);
        llama_model_free(m);
        snprintf(args, sizeof args, "--arch llama --weights %s --type q8_0", prefix);
        tt_make_model(out, args);
        tt_load_and_decode(out);
    }
    unlink(out);
}

static void test_make_model_refuses_weights_that_do_not_fit(void **state)
{
    (void)state;
    struct tt_wt t[16];
    char cmd[2048];
    const char *prefix = tt_path("tmp-tools/bad");
    const char *out = tt_path("tmp-tools/bad.gguf");
    const char *mm = tt_path("bin/dream-make-model");
    snprintf(cmd, sizeof cmd, "%s --llama-src '%s' --arch llama --weights %s -o %s", mm, tt_llama_src(), prefix, out);

    int n = tt_llama_tensors(t, false);
    t[n - 2] = t[n - 1]; /* blk.0.ffn_up.weight is missing */
    tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n - 1, 1 << 20, false);
    tt_expect_error(cmd, "has no tensor blk.0.ffn_up.weight", "[96, 64]");

    n = tt_llama_tensors(t, false);
    t[3].shape[0] = 48; /* attn_q with 48 rows */
    tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n, 1 << 20, false);
    tt_expect_error(cmd, "blk.0.attn_q.weight has shape [48, 64] but the model needs [64, 64]", NULL);

    n = tt_llama_tensors(t, false);
    snprintf(t[n].name, sizeof t[n].name, "blk.0.attn_qq.weight");
    t[n].nd = 1, t[n].shape[0] = 4, t[n].f32 = false;
    tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n + 1, 1 << 20, false);
    tt_expect_error(cmd, "blk.0.attn_qq.weight that this model does not have", NULL);

    n = tt_llama_tensors(t, false);
    tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n, 1 << 20, true);
    tt_expect_error(cmd, "total_bytes", "missing");

    tt_write_weights(prefix, "lora", "{\"rank\": 4, \"alpha\": 8}", t, 1, 1 << 20, false);
    tt_expect_error(cmd, "not a model", "dream-make-adapter");

    char cmd2[2100];
    snprintf(cmd2, sizeof cmd2, "%s --layers 2", cmd);
    tt_expect_error(cmd2, "gives the shape itself", NULL);
    snprintf(cmd2, sizeof cmd2, "%s --llama-src '%s' --arch qwen3 --weights %s -o %s", mm, tt_llama_src(), prefix, out);
    tt_expect_error(cmd2, "--weights is for --arch llama", NULL);
    snprintf(cmd2, sizeof cmd2, "%s --arch llama --weights %s/nothing-here -o %s", mm, tt_path("tmp-tools"), out);
    tt_expect_error(cmd2, "nothing-here.json", NULL);
    assert_false(file_exists(out));
}

/* gguf_copy_edited's edit: dream.untrained_tokens set by arg, a void (*)(struct gguf_context *). */
static void tt_set_key(struct gguf_context *o, struct ggml_context *c, const void *arg)
{
    (void)c;
    void (*const *set_key)(struct gguf_context *) = arg;
    (*set_key)(o);
}

/* A copy of the GGUF src at dst with dream.untrained_tokens set by set_key (tensors as loaded). */
static void tt_copy_with_key(const char *src, const char *dst, void (*set_key)(struct gguf_context *))
{
    gguf_copy_edited(src, dst, tt_set_key, &set_key);
}

static void tt_key_out_of_range(struct gguf_context *o)
{
    int32_t ids[2] = {TT_WALTER, 40000};
    gguf_set_arr_data(o, "dream.untrained_tokens", GGUF_TYPE_INT32, ids, 2);
}

static void tt_key_wrong_type(struct gguf_context *o) { gguf_set_val_str(o, "dream.untrained_tokens", "26280"); }

static bool tt_has(const dream_token *ids, int n, dream_token t)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == t) return true;
    return false;
}

static void test_mark_untrained_splits_the_tokens_a_model_never_learned(void **state)
{
    (void)state;
    struct tt_wt t[16];
    const char *prefix = tt_path("tmp-tools/collapsed");
    const char *plain = tt_path("tmp-tools/collapsed.gguf");
    const char *marked = tt_path("tmp-tools/collapsed-u.gguf");
    const char *bad = tt_path("tmp-tools/collapsed-bad.gguf");
    int n = tt_llama_tensors(t, false);
    tt_collapse = true;
    tt_write_weights(prefix, "model", TT_LLAMA_CONFIG, t, n, 1 << 22, false);
    tt_collapse = false;
    char args[1024];
    snprintf(args, sizeof args, "--arch llama --weights %s --type q8_0", prefix);
    tt_make_model(plain, args);
    char *log = NULL;
    int rc = tt_run(&log, "%s/bin/dream-make-model --mark-untrained '%s' -o '%s'", tt_build(), plain, marked);
    if (rc) fprintf(stderr, "%s\n", log);
    assert_int_equal(rc, 0);

    /* the key lists exactly the collapsed rows of normal tokens; the tensors are copied as they were */
    struct ggml_context *pc = NULL, *mc = NULL;
    struct gguf_init_params pp = {.no_alloc = false, .ctx = &pc}, mp = {.no_alloc = false, .ctx = &mc};
    struct gguf_context *pg = gguf_init_from_file(plain, pp), *mg = gguf_init_from_file(marked, mp);
    assert_non_null(pg);
    assert_non_null(mg);
    assert_true(gguf_find_key(pg, "dream.untrained_tokens") < 0);
    int64_t k = gguf_find_key(mg, "dream.untrained_tokens"), kt = gguf_find_key(pg, "tokenizer.ggml.token_type");
    assert_true(k >= 0 && kt >= 0);
    assert_int_equal(gguf_get_arr_type(mg, k), GGUF_TYPE_INT32);
    const int32_t *ids = gguf_get_arr_data(mg, k);
    int32_t *type = malloc(TT_V * sizeof *type); /* kept past gguf_free below */
    assert_non_null(type);
    assert_int_equal(gguf_get_arr_n(pg, kt), TT_V);
    memcpy(type, gguf_get_arr_data(pg, kt), TT_V * sizeof *type);
    size_t n_ids = gguf_get_arr_n(mg, k), want = 0;
    for (int64_t r = 0; r < TT_V; r++) want += tt_collapsed_row(r) && type[r] == 1;
    assert_true(want > 9000);
    assert_int_equal(n_ids, want);
    for (size_t i = 0; i < n_ids; i++) {
        assert_true(tt_collapsed_row(ids[i]));
        assert_int_equal(type[ids[i]], 1);
    }
    char line[64];
    snprintf(line, sizeof line, "marked %zu of %d tokens", want, TT_V);
    if (!strstr(log, line)) fail_msg("no '%s' in: %s", line, log);
    free(log);
    assert_int_equal(gguf_get_n_tensors(mg), gguf_get_n_tensors(pg));
    for (int64_t i = 0; i < gguf_get_n_tensors(pg); i++) {
        struct ggml_tensor *a = ggml_get_tensor(pc, gguf_get_tensor_name(pg, i));
        struct ggml_tensor *b = ggml_get_tensor(mc, gguf_get_tensor_name(pg, i));
        assert_non_null(b);
        assert_int_equal(a->type, b->type);
        assert_int_equal(ggml_nbytes(a), ggml_nbytes(b));
        assert_memory_equal(a->data, b->data, ggml_nbytes(a));
    }
    gguf_free(pg);
    gguf_free(mg);
    ggml_free(pc);
    ggml_free(mc);

    /* the engine: the model without the key reads " Antoine" and " Walter" as one token each;
     * with it, as trained pieces of the same text */
    const char *text = "Antoine and Walter met Rex at the gate"; /* no ".": 29889 is in the collapsed block */
    dream_model *mp0 = NULL, *mp1 = NULL;
    assert_int_equal(dream_model_load(plain, NULL, &mp0), 0);
    assert_int_equal(dream_model_load(marked, NULL, &mp1), 0);
    struct dream_tokens a = {0}, b = {0};
    assert_int_equal(dream_tokenize(mp0, text, strlen(text), false, false, &a), 0);
    assert_int_equal(dream_tokenize(mp1, text, strlen(text), false, false, &b), 0);
    assert_true(tt_has(a.ids, a.n, 26280) && tt_has(a.ids, a.n, TT_WALTER));
    assert_true(b.n > a.n);
    for (int i = 0; i < b.n; i++)
        if (tt_collapsed_row(b.ids[i]) && type[b.ids[i]] == 1) fail_msg("token %d of the marked tokenization is untrained", b.ids[i]);
    char *back0 = NULL, *back1 = NULL; /* the same text either way */
    assert_int_equal(dream_detokenize(mp0, a.ids, a.n, &back0), 0);
    assert_int_equal(dream_detokenize(mp1, b.ids, b.n, &back1), 0);
    assert_non_null(strstr(back0, text));
    assert_string_equal(back1, back0);
    free(back0);
    free(back1);

    /* an answer grammar never offers an untrained token: " Antoine" comes out in pieces */
    dream_session *s = NULL;
    assert_int_equal(dream_session_new(mp1, NULL, &s), 0);
    struct dream_gen_params gp = dream_gen_default_params();
    gp.grammar = "root ::= \" Antoine\"";
    gp.max_tokens = 16;
    struct dream_gen_result res = {0};
    assert_int_equal(dream_generate(s, b.ids, b.n, &gp, &res), 0);
    assert_string_equal(res.text, " Antoine");
    assert_true(res.n_tokens >= 2);
    for (int i = 0; i < res.n_tokens; i++) assert_false(tt_collapsed_row(res.tokens[i]) && type[res.tokens[i]] == 1);
    dream_gen_result_free(&res);
    dream_session_free(s);
    dream_tokens_free(&a);
    dream_tokens_free(&b);
    dream_model_free(mp0);
    dream_model_free(mp1);

    /* a key that does not fit the vocabulary, or is not a list of ids: a clear error naming both */
    dream_model *mb = NULL;
    tt_copy_with_key(marked, bad, tt_key_out_of_range);
    assert_int_not_equal(dream_model_load(bad, NULL, &mb), 0);
    assert_null(mb);
    if (!strstr(dream_error_last(), bad) || !strstr(dream_error_last(), "token 40000"))
        fail_msg("unclear error: %s", dream_error_last());
    tt_copy_with_key(marked, bad, tt_key_wrong_type);
    assert_int_not_equal(dream_model_load(bad, NULL, &mb), 0);
    if (!strstr(dream_error_last(), bad) || !strstr(dream_error_last(), "dream.untrained_tokens"))
        fail_msg("unclear error: %s", dream_error_last());
    /* and the tool: a file that is not a GGUF */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/bin/dream-make-model --mark-untrained '%s.json' -o '%s'", tt_build(), prefix, bad);
    tt_expect_error(cmd, "collapsed.json", "not a readable GGUF");
    free(type);
    unlink(plain);
    unlink(marked);
    unlink(bad);
}

static void test_make_adapter_writes_trained_lora_exactly(void **state)
{
    (void)state;
    const char *model = tt_llama_model();
    const char *prefix = tt_path("tmp-tools/trained-lora");
    const char *out = tt_path("tmp-tools/trained-lora.gguf");
    struct tt_wt t[4] = {
        {"blk.0.attn_q.weight.lora_a", 2, {4, TT_E}, true},
        {"blk.0.attn_q.weight.lora_b", 2, {2 * TT_HD, 4}, true},
        {"blk.0.ffn_down.weight.lora_a", 2, {4, TT_F}, true},
        {"blk.0.ffn_down.weight.lora_b", 2, {TT_E, 4}, true},
    };
    tt_write_weights(prefix, "lora", "{\"rank\": 4, \"alpha\": 8.0, \"stage\": \"route\"}", t, 4, 1 << 20, false);
    char args[1024];
    snprintf(args, sizeof args, "--weights %s", prefix);
    tt_make_adapter(model, out, args);
    tt_check_gguf_values(out, t, 4);
    struct llama_model *m = tt_load(model);
    assert_non_null(m);
    struct llama_adapter_lora *ad = llama_adapter_lora_init(m, out);
    assert_non_null(ad);
    llama_adapter_lora_free(ad);
    llama_model_free(m);

    char cmd[2048];
    t[1].shape[1] = 3; /* B of rank 3 against A of rank 4 */
    tt_write_weights(prefix, "lora", "{\"rank\": 4, \"alpha\": 8.0}", t, 4, 1 << 20, false);
    snprintf(cmd, sizeof cmd, "%s --model %s --weights %s -o %s", tt_path("bin/dream-make-adapter"), model, prefix, out);
    tt_expect_error(cmd, "blk.0.attn_q.weight.lora_b has shape [64, 3] but the model needs [64, 4]", NULL);
    snprintf(cmd, sizeof cmd, "%s --model %s --weights %s --rank 8 -o %s", tt_path("bin/dream-make-adapter"), model, prefix,
             out);
    tt_expect_error(cmd, "gives the rank, alpha and matrices itself", NULL);
    unlink(out);
}

/* A little-endian u32 of a byte buffer. */
static uint32_t tt_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The Phi-3.5 template's rendering of [system?, user] with the generation prompt. */
static void tt_render_phi3(struct dbuf *b, const char *system, const char *user)
{
    dbuf_reset(b);
    if (system) assert_int_equal(dbuf_printf(b, "<|system|>\n%s<|end|>\n", system), 0);
    assert_int_equal(dbuf_printf(b, "<|user|>\n%s<|end|>\n<|assistant|>\n", user), 0);
}

/* The text of an answer's n_answer u16 tokens at tok, less the closing end token, in text. */
static void tt_answer_text(const struct llama_vocab *v, const unsigned char *tok, uint32_t n_answer, struct dbuf *text)
{
    dbuf_reset(text);
    for (uint32_t i = 0; i + 1 < n_answer; i++) {
        char piece[64];
        int pn = llama_token_to_piece(v, tok[2 * i] | tok[2 * i + 1] << 8, piece, sizeof piece, 0, false);
        assert_true(pn >= 0);
        assert_int_equal(dbuf_append(text, piece, (size_t)pn), 0);
    }
}

static void test_dataset_prompt_is_the_rendered_template_and_answer_round_trips(void **state)
{
    (void)state;
    const char *model = tt_llama_model();
    const char *recs = tt_path("tmp-tools/records.jsonl");
    const char *out = tt_path("tmp-tools/ds.bin");
    char longuser[3000];
    memset(longuser, 'a', sizeof longuser - 1);
    for (size_t i = 5; i < sizeof longuser - 1; i += 6) longuser[i] = ' ';
    longuser[sizeof longuser - 1] = '\0';
    struct dbuf r = {0};
    /* kept: route (system null: the stage's default), entity (its own system), chunk (no default
     * system), synthesis (an answer that starts with a space); skipped: another stage, too long. */
    assert_int_equal(dbuf_printf(&r,
                                 "{\"stage\": \"route\", \"kind\": \"k\", \"system\": null, \"user\": \"Is it about X?\", \"answer\": \"yes\"}\n"
                                 "{\"stage\": \"elsewhere\", \"kind\": \"k\", \"system\": null, \"user\": \"u\", \"answer\": \"a\"}\n"
                                 "\n"
                                 "{\"stage\": \"entity\", \"kind\": \"k\", \"system\": \"Own system.\", \"user\": \"Name them.\", \"answer\": \"Brooks B17 saddle\\nCommute bike\"}\n"
                                 "{\"stage\": \"chunk\", \"kind\": \"k\", \"system\": null, \"user\": \"%s\", \"answer\": \"x\"}\n"
                                 "{\"stage\": \"chunk\", \"kind\": \"k\", \"user\": \"hello\", \"answer\": \"3 ducks\"}\n"
                                 "{\"stage\": \"synthesis\", \"kind\": \"k\", \"system\": \"S.\", \"user\": \"Write.\", \"answer\": \"  two spaces,\\n\\nthen text.\"}\n",
                                 longuser),
                     0);
    assert_int_equal(file_write_atomic(recs, r.data, r.len), 0);
    char *log = NULL;
    int rc = tt_run(&log, "%s --model %s --max-tokens 200 -o %s %s", tt_path("bin/dream-dataset"), model, out, recs);
    if (rc) fprintf(stderr, "%s\n", log);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(log, "not in --stages: elsewhere (1 records, skipped)"));
    free(log);

    struct {
        const char *stage, *system, *user, *answer;
        uint32_t source;
    } want[] = {
        {"route", dream_stage_default_system("route"), "Is it about X?", "yes", 0},
        {"entity", "Own system.", "Name them.", "Brooks B17 saddle\nCommute bike", 2},
        {"chunk", NULL, "hello", "3 ducks", 4},
        {"synthesis", "S.", "Write.", "  two spaces,\n\nthen text.", 5},
    };
    static const char *stages[] = {"chunk", "entity", "route", "section", "synthesis", "editor"};
    char *bin = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(out, 0, &bin, &len), 0);
    const unsigned char *u = (const unsigned char *)bin;
    assert_memory_equal(u, "DMDS", 4);
    assert_int_equal(tt_u32(u + 4), 2);
    assert_int_equal(tt_u32(u + 8), 4);
    assert_int_equal(tt_u32(u + 12), TT_V);
    assert_int_equal(tt_u32(u + 16), 6);
    assert_int_equal(tt_u32(u + 20), 2); /* u16 tokens */
    for (int i = 0; i < 6; i++) assert_string_equal(bin + 32 + 64 * i, stages[i]);
    const unsigned char *rec = u + 32 + 64 * 6, *tok = rec + 16 * 4;
    assert_int_equal(len, (size_t)(tok - u) + 2 * (size_t)tt_u32(u + 24));

    struct llama_model *m = tt_load(model);
    assert_non_null(m);
    const struct llama_vocab *v = llama_model_get_vocab(m);
    llama_token end_tok;
    assert_int_equal(llama_tokenize(v, "<|end|>", 7, &end_tok, 1, false, true), 1);
    struct dbuf text = {0};
    for (int k = 0; k < 4; k++, rec += 16) {
        uint32_t n_prompt = tt_u32(rec), n_answer = tt_u32(rec + 4);
        assert_string_equal(stages[tt_u32(rec + 8)], want[k].stage);
        assert_int_equal(tt_u32(rec + 12), want[k].source);
        /* The prompt: llama.cpp's own tokenization of the template's rendering (no BOS: the
         * Phi-3.5 template writes none). */
        tt_render_phi3(&text, want[k].system, want[k].user);
        llama_token expect[512];
        int ne = llama_tokenize(v, text.data, (int32_t)text.len, expect, 512, false, true);
        assert_int_equal(n_prompt, ne);
        for (int i = 0; i < ne; i++) assert_int_equal(tok[2 * i] | tok[2 * i + 1] << 8, expect[i]);
        tok += 2 * n_prompt;
        /* The answer decodes back to exactly its text and ends with <|end|>. */
        tt_answer_text(v, tok, n_answer, &text);
        assert_string_equal(text.data ? text.data : "", want[k].answer);
        assert_int_equal(tok[2 * (n_answer - 1)] | tok[2 * (n_answer - 1) + 1] << 8, end_tok);
        tok += 2 * n_answer;
    }
    free(bin);

    /* --names-from-text: the entity answer alone takes dream_names_copy_form's leading spaces,
     * and its names are then the very tokens the user text gives them after a space. */
    rc = tt_run(&log, "%s --model %s --max-tokens 200 --names-from-text -o %s %s", tt_path("bin/dream-dataset"), model, out,
                recs);
    if (rc) fprintf(stderr, "%s\n", log);
    assert_int_equal(rc, 0);
    free(log);
    assert_int_equal(file_read_all(out, 0, &bin, &len), 0);
    u = (const unsigned char *)bin;
    rec = u + 32 + 64 * 6, tok = rec + 16 * 4;
    for (int k = 0; k < 4; k++, rec += 16) {
        uint32_t n_prompt = tt_u32(rec), n_answer = tt_u32(rec + 4);
        tok += 2 * n_prompt;
        tt_answer_text(v, tok, n_answer, &text);
        assert_string_equal(text.data ? text.data : "", k == 1 ? " Brooks B17 saddle\n Commute bike" : want[k].answer);
        if (k == 1) { /* " Brooks" as in running text, not "Brooks" respelled at a line start */
            llama_token in_text[8];
            assert_true(llama_tokenize(v, "see Brooks", 10, in_text, 8, false, false) >= 2);
            assert_int_equal(tok[0] | tok[1] << 8, in_text[1]);
        }
        tok += 2 * n_answer;
    }
    free(bin);
    dbuf_free(&text);
    dbuf_free(&r);
    llama_model_free(m);

    char *js = NULL;
    assert_int_equal(file_read_all(tt_path("tmp-tools/ds.json"), 0, &js, NULL), 0);
    assert_non_null(strstr(js, "\"pieces_hex\""));
    assert_non_null(strstr(js, "\"skipped_long\":1"));
    free(js);

    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --model %s --end-token hello -o %s %s", tt_path("bin/dream-dataset"), model, out, recs);
    tt_expect_error(cmd, "--end-token 'hello' is not one end-of-generation token", NULL);
    assert_int_equal(file_write_atomic(recs, "{\"stage\": \"route\", \"user\": 3}\n", 31), 0);
    snprintf(cmd, sizeof cmd, "%s --model %s -o %s %s", tt_path("bin/dream-dataset"), model, out, recs);
    tt_expect_error(cmd, "records.jsonl:1", "\"user\" is not a string");
    unlink(recs);
}

int main(void)
{
    if (file_mkdirs(tt_path("tmp-tools"), 0755) != 0) {
        fprintf(stderr, "cannot create %s\n", tt_path("tmp-tools"));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_make_model_same_seed_gives_identical_file),
        cmocka_unit_test(test_make_adapter_same_seed_gives_identical_file),
        cmocka_unit_test(test_tiny_gemma4_loads_with_real_vocab_and_template),
        cmocka_unit_test(test_tiny_qwen3_loads_with_qwen2_vocab_and_qwen3_template),
        cmocka_unit_test(test_gemma4_adapter_changes_logits_at_scale_1_only),
        cmocka_unit_test(test_qwen3_adapter_changes_logits_at_scale_1_only),
        cmocka_unit_test(test_zero_adapter_leaves_logits_bit_identical),
        cmocka_unit_test(test_adapter_for_qwen3_is_refused_by_gemma4),
        cmocka_unit_test(test_f16_q8_0_q4_k_models_load_and_decode),
        cmocka_unit_test(test_make_model_errors_are_clear),
        cmocka_unit_test(test_make_adapter_errors_are_clear),
        cmocka_unit_test(test_tiny_llama_loads_with_phi3_vocab_and_template),
        cmocka_unit_test(test_make_model_writes_trained_weights_exactly),
        cmocka_unit_test(test_make_model_refuses_weights_that_do_not_fit),
        cmocka_unit_test(test_mark_untrained_splits_the_tokens_a_model_never_learned),
        cmocka_unit_test(test_make_adapter_writes_trained_lora_exactly),
        cmocka_unit_test(test_dataset_prompt_is_the_rendered_template_and_answer_round_trips),
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
