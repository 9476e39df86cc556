/*
 * test_tools.c — dream-make-model and dream-make-adapter: determinism, models that llama.cpp loads
 * and decodes with the expected shape, vocabulary and chat template, adapters that change logits
 * exactly when they should, and clear errors.
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
    tt_expect_error(cmd, "unknown --arch 'llama9'", "gemma4 or qwen3");
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
    };
    return cmocka_run_group_tests(tests, tt_setup, tt_teardown);
}
