/*
 * make_model.c — dream-make-model: writes a random-weight GGUF of a real architecture (Gemma 4,
 * Qwen3, or Llama with the Phi-3 vocabulary) with the real tokenizer and chat template from the
 * pinned llama.cpp tree, so the engine, scheduler, adapters and benchmarks can run on a genuine
 * model graph without downloading weights. With --weights it writes trained weights instead
 * (train/train.py's PREFIX.json + PREFIX.bin[.N]): that is how dream-mini becomes a GGUF.
 *
 * The output is a pure function of the arguments (and the weights): the same arguments give a
 * byte-identical file.
 */
#include "gguf_writer.h"
#include "weights.h"

#include "dream/error.h"
#include "util/file.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DREAM_LLAMA_SRC
#define DREAM_LLAMA_SRC ""
#endif

/* Gemma 4 places one full-attention layer after every five sliding-window layers. */
#define MM_SWA_PERIOD 6
#define MM_GEMMA4_TEMPLATE "models/templates/google-gemma-4-31B-it.jinja"
#define MM_GEMMA4_VOCAB "models/ggml-vocab-gemma-4.gguf"
#define MM_QWEN3_TEMPLATE "models/templates/Qwen-Qwen3-0.6B.jinja"
#define MM_QWEN3_VOCAB "models/ggml-vocab-qwen2.gguf"
#define MM_PHI3_TEMPLATE "models/templates/microsoft-Phi-3.5-mini-instruct.jinja"
#define MM_PHI3_VOCAB "models/ggml-vocab-phi-3.gguf"
/* dream-mini's hyper-parameters of the llama graph (random llama models use them too). */
#define MM_LLAMA_ROPE_BASE 10000.0
#define MM_LLAMA_RMS_EPS 1e-5

struct mm_shape {
    int layers, embd, heads, kv_heads, head_dim, head_dim_swa, ff, window, shared_kv, ctx;
};

struct mm_preset {
    const char *name;
    struct mm_shape shape;
    const char *what;
};

/* Shapes. Q4_K needs every matrix row (n_embd, heads*head_dim, n_ff) to be a multiple of 256. */
static const struct mm_preset mm_presets[] = {
    {"tiny", {6, 128, 2, 1, 64, 32, 256, 16, 2, 4096},
     "fast test model (gemma4: 34M params, 52 MB at Q8_0, the embedding is most of it).\n"
     "            F16/Q8_0 only; for Q4_K add --embd 256 --heads 4 --head-dim 128 --head-dim-swa 64 --ff 512"},
    {"300m", {12, 768, 4, 1, 256, 128, 3072, 512, 6, 32768},
     "CPU benchmark model (gemma4: 299M params, 201M of them the 262144x768 embedding;\n"
     "            333 MB at Q8_0, 184 MB at Q4_K)"},
    {"e4b", {42, 2560, 8, 2, 512, 256, 10240, 512, 18, 131072},
     "the Gemma-4-E4B shape without per-layer embeddings (gemma4: 4.56B params,\n"
     "            ~2.6 GB at Q4_K, ~4.8 GB at Q8_0; Q4_K takes minutes on a few cores)"},
    {"mini", {8, 384, 6, 2, 64, 64, 1536, 512, 0, 8192},
     "the dream-mini shape (llama: 29.6M params tied, 32 MB at Q8_0; --untied 41.9M, 45 MB)"},
};

struct mm_opts {
    const char *arch;
    const char *vocab;   /* llama: the vocabulary (phi3); gemma4 and qwen3 have their own */
    const char *weights; /* trained weights PREFIX (PREFIX.json + PREFIX.bin[.N]), or NULL */
    bool untied;         /* llama: a separate output.weight (random models; weights say it themselves) */
    bool names_from_text; /* write dream.names_from_text: the entity stage copies names from the chunk */
    double rope_base, rms_eps;
    const char *preset;
    struct mm_shape shape;
    int set[10]; /* which shape fields were given on the command line, by option index */
    enum ggml_type type;
    uint64_t seed;
    const char *llama_src;
    const char *out;
    int threads;
    const char *mark;    /* --mark-untrained IN: copy IN with dream.untrained_tokens, or NULL */
    double untrained_cos;
};

static void mm_usage(FILE *f)
{
    fprintf(f,
            "usage: dream-make-model --arch gemma4|qwen3|llama -o PATH [options]\n"
            "       dream-make-model --arch llama --weights PREFIX -o PATH [--type T]\n"
            "       dream-make-model --mark-untrained IN.gguf -o PATH [--untrained-cos C]\n"
            "\n"
            "Writes a random-weight GGUF of a real architecture, deterministic from the seed\n"
            "(the same arguments give a byte-identical file). Noise text, real graph.\n"
            "With --weights, the trained weights of PREFIX.json + PREFIX.bin (or the parts\n"
            "PREFIX.bin.0, .1, ...) as train/train.py writes them; the shape comes from the file.\n"
            "\n"
            "  --arch A          gemma4: the real Gemma 4 tokenizer (262144 tokens, " MM_GEMMA4_VOCAB ")\n"
            "                    and chat template (" MM_GEMMA4_TEMPLATE "), sliding-window\n"
            "                    layers (5 sliding : 1 full) and shared-KV tail layers.\n"
            "                    qwen3: the qwen2 tokenizer (151936 tokens, " MM_QWEN3_VOCAB ")\n"
            "                    and the Qwen3 chat template (" MM_QWEN3_TEMPLATE ");\n"
            "                    sliding-window and shared-KV fields are ignored, output tied.\n"
            "                    llama: the llama graph (RoPE on adjacent pairs, SwiGLU, GQA, RMS\n"
            "                    norm eps %g, rope base %g) with --vocab phi3 (the default): the\n"
            "                    Phi-3 tokenizer (32064 tokens, " MM_PHI3_VOCAB ")\n"
            "                    and the Phi-3.5 chat template (" MM_PHI3_TEMPLATE ").\n"
            "                    Output tied unless --untied. The shape of dream-mini: --preset mini.\n"
            "  --vocab V         llama only: phi3 (the only one)\n"
            "  --weights PREFIX  llama only: trained weights instead of random ones; config.* in\n"
            "                    PREFIX.json gives the shape, rope base and norm eps, and the output\n"
            "                    is untied when it holds output.weight. Every tensor must be there\n"
            "                    with the model's shape, and nothing else.\n"
            "  --untied          llama, random weights: a separate output.weight\n"
            "  --names-from-text mark the model as one that cannot copy a name reliably: the\n"
            "                    entity stage then decodes its names under a grammar of the chunk's\n"
            "                    own words (GGUF key dream.names_from_text; dream-mini has it)\n"
            "  --mark-untrained IN\n"
            "                    copy the GGUF IN (tensors byte for byte) with the GGUF key\n"
            "                    dream.untrained_tokens: the normal tokens whose embedding row never\n"
            "                    moved away from where training pushed every unseen row. A model\n"
            "                    trained from scratch on a narrow corpus can neither read nor write\n"
            "                    those; the engine tokenizes each as its trained pieces. A row is\n"
            "                    untrained when its cosine with the mean of such rows is >= C: the\n"
            "                    mean of all rows first, then the mean of the rows it marked.\n"
            "  --untrained-cos C the threshold (default 0.95)\n"
            "  --preset P        shape preset (default tiny):\n",
            MM_LLAMA_RMS_EPS, MM_LLAMA_ROPE_BASE);
    for (size_t i = 0; i < sizeof mm_presets / sizeof mm_presets[0]; i++) {
        const struct mm_shape *s = &mm_presets[i].shape;
        fprintf(f,
                "      %-5s %s\n"
                "            layers %d, embd %d, heads %d, kv-heads %d, head-dim %d, head-dim-swa %d, ff %d,\n"
                "            window %d, shared-kv %d, ctx %d\n",
                mm_presets[i].name, mm_presets[i].what, s->layers, s->embd, s->heads, s->kv_heads, s->head_dim,
                s->head_dim_swa, s->ff, s->window, s->shared_kv, s->ctx);
    }
    fprintf(f,
            "  --layers N --embd N --heads N --kv-heads N --head-dim N --head-dim-swa N --ff N\n"
            "  --window N --shared-kv N --ctx N\n"
            "                    override one field of the preset (head-dim = full-attention layers,\n"
            "                    head-dim-swa = sliding layers, shared-kv = tail layers reusing KV)\n"
            "  --type T          matrix type: f32, f16, q8_0 (default) or q4_k; norms stay F32.\n"
            "                    Q8_0 needs matrix rows divisible by 32, Q4_K by 256.\n"
            "  --seed N          random seed (default 1)\n"
            "  --threads N       worker threads (default: all CPUs; does not change the output)\n"
            "  --llama-src DIR   the pinned llama.cpp source tree (default: $LLAMA_SRC, else the\n"
            "                    tree this program was built against%s%s)\n"
            "  -o, --output PATH the GGUF to write (its directory is created if missing)\n"
            "  -h, --help        this help\n"
            "\n"
            "Weights: uniform random, std 1/sqrt(rows' length) (token_embd 0.5/sqrt(embd)); every\n"
            "norm, rope_freqs and layer_output_scale is 1.0. Gemma 4 layer i is full attention when\n"
            "i %% 6 == 5, and the last two KV-owning layers are forced sliding, full (as llama.cpp\n"
            "requires when --shared-kv > 0).\n"
            "\n"
            "Prints one line: arch, layers, params, type, bytes, path.\n",
            DREAM_LLAMA_SRC[0] ? ": " : "", DREAM_LLAMA_SRC);
}

/* Parses a non-negative integer option value in [lo, hi]; reports the option and value on error. */
static int mm_parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return dream_error_set(DREAM_EINVAL, "%s '%s' is not a whole number in [%ld, %ld]", opt, s, lo, hi);
    *out = v;
    return 0;
}

static int mm_parse_type(const char *s, enum ggml_type *out)
{
    if (strcmp(s, "f32") == 0) *out = GGML_TYPE_F32;
    else if (strcmp(s, "f16") == 0) *out = GGML_TYPE_F16;
    else if (strcmp(s, "q8_0") == 0) *out = GGML_TYPE_Q8_0;
    else if (strcmp(s, "q4_k") == 0) *out = GGML_TYPE_Q4_K;
    else return dream_error_set(DREAM_EINVAL, "unknown --type '%s'; use f32, f16, q8_0 or q4_k", s);
    return 0;
}

enum { OPT_LAYERS = 256, OPT_EMBD, OPT_HEADS, OPT_KV_HEADS, OPT_HEAD_DIM, OPT_HEAD_DIM_SWA, OPT_FF, OPT_WINDOW,
       OPT_SHARED_KV, OPT_CTX, OPT_ARCH, OPT_PRESET, OPT_TYPE, OPT_SEED, OPT_LLAMA_SRC, OPT_THREADS, OPT_VOCAB,
       OPT_WEIGHTS, OPT_UNTIED, OPT_NAMES_FROM_TEXT, OPT_MARK_UNTRAINED, OPT_UNTRAINED_COS };

/* Fills o from argv. Returns 0, 1 when --help was printed, or DREAM_EINVAL with a message. */
static int mm_parse_args(int argc, char **argv, struct mm_opts *o)
{
    static const struct option longopts[] = {
        {"layers", required_argument, 0, OPT_LAYERS},
        {"embd", required_argument, 0, OPT_EMBD},
        {"heads", required_argument, 0, OPT_HEADS},
        {"kv-heads", required_argument, 0, OPT_KV_HEADS},
        {"head-dim", required_argument, 0, OPT_HEAD_DIM},
        {"head-dim-swa", required_argument, 0, OPT_HEAD_DIM_SWA},
        {"ff", required_argument, 0, OPT_FF},
        {"window", required_argument, 0, OPT_WINDOW},
        {"shared-kv", required_argument, 0, OPT_SHARED_KV},
        {"ctx", required_argument, 0, OPT_CTX},
        {"arch", required_argument, 0, OPT_ARCH},
        {"preset", required_argument, 0, OPT_PRESET},
        {"type", required_argument, 0, OPT_TYPE},
        {"seed", required_argument, 0, OPT_SEED},
        {"llama-src", required_argument, 0, OPT_LLAMA_SRC},
        {"threads", required_argument, 0, OPT_THREADS},
        {"vocab", required_argument, 0, OPT_VOCAB},
        {"weights", required_argument, 0, OPT_WEIGHTS},
        {"untied", no_argument, 0, OPT_UNTIED},
        {"names-from-text", no_argument, 0, OPT_NAMES_FROM_TEXT},
        {"mark-untrained", required_argument, 0, OPT_MARK_UNTRAINED},
        {"untrained-cos", required_argument, 0, OPT_UNTRAINED_COS},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    long vals[10] = {0};
    bool preset_given = false;
    memset(o, 0, sizeof *o);
    o->preset = "tiny";
    o->type = GGML_TYPE_Q8_0;
    o->seed = 1;
    o->threads = gw_default_threads();
    o->untrained_cos = 0.95;
    bool cos_given = false;
    const char *env = getenv("LLAMA_SRC");
    o->llama_src = env && *env ? env : DREAM_LLAMA_SRC;

    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        int rc = 0;
        long v = 0;
        switch (c) {
        case 'h': mm_usage(stdout); return 1;
        case 'o': o->out = optarg; break;
        case OPT_ARCH: o->arch = optarg; break;
        case OPT_PRESET:
            o->preset = optarg;
            preset_given = true;
            break;
        case OPT_VOCAB: o->vocab = optarg; break;
        case OPT_WEIGHTS: o->weights = optarg; break;
        case OPT_UNTIED: o->untied = true; break;
        case OPT_NAMES_FROM_TEXT: o->names_from_text = true; break;
        case OPT_MARK_UNTRAINED: o->mark = optarg; break;
        case OPT_UNTRAINED_COS: {
            char *end = NULL;
            o->untrained_cos = strtod(optarg, &end);
            cos_given = true;
            if (end == optarg || *end || !(o->untrained_cos > 0.0 && o->untrained_cos < 1.0))
                rc = dream_error_set(DREAM_EINVAL, "--untrained-cos '%s' is not a number between 0 and 1", optarg);
            break;
        }
        case OPT_TYPE: rc = mm_parse_type(optarg, &o->type); break;
        case OPT_LLAMA_SRC: o->llama_src = optarg; break;
        case OPT_SEED: rc = gw_parse_seed(optarg, &o->seed); break;
        case OPT_THREADS:
            rc = mm_parse_int("--threads", optarg, 1, 32, &v);
            o->threads = (int)v;
            break;
        case ':': return dream_error_set(DREAM_EINVAL, "option %s needs a value; see --help", argv[optind - 1]);
        case '?': return dream_error_set(DREAM_EINVAL, "unknown option '%s'; see --help", argv[optind - 1]);
        default: {
            int idx = c - OPT_LAYERS;
            const char *name = longopts[idx].name;
            char opt[32];
            snprintf(opt, sizeof opt, "--%s", name);
            long lo = (c == OPT_SHARED_KV) ? 0 : 1;
            rc = mm_parse_int(opt, optarg, lo, 1L << 22, &v);
            vals[idx] = v;
            o->set[idx] = 1;
        }
        }
        if (rc) return rc;
    }
    if (optind < argc) return dream_error_set(DREAM_EINVAL, "unexpected argument '%s'; see --help", argv[optind]);
    if (o->mark) {
        if (!o->out) return dream_error_set(DREAM_EINVAL, "-o PATH is required (the GGUF file to write)");
        if (o->arch || o->weights) return dream_error_set(DREAM_EINVAL, "--mark-untrained copies a GGUF; drop --arch and --weights");
        return 0;
    }
    if (cos_given) return dream_error_set(DREAM_EINVAL, "--untrained-cos goes with --mark-untrained");
    if (!o->arch) return dream_error_set(DREAM_EINVAL, "--arch is required (gemma4, qwen3 or llama); see --help");
    if (strcmp(o->arch, "gemma4") != 0 && strcmp(o->arch, "qwen3") != 0 && strcmp(o->arch, "llama") != 0)
        return dream_error_set(DREAM_EINVAL, "unknown --arch '%s'; use gemma4, qwen3 or llama", o->arch);
    if (!o->out) return dream_error_set(DREAM_EINVAL, "-o PATH is required (the GGUF file to write)");
    bool llama = strcmp(o->arch, "llama") == 0;
    if (o->vocab && !llama)
        return dream_error_set(DREAM_EINVAL, "--vocab is for --arch llama; %s has its own vocabulary", o->arch);
    if (llama && !o->vocab) o->vocab = "phi3";
    if (llama && strcmp(o->vocab, "phi3") != 0)
        return dream_error_set(DREAM_EINVAL, "unknown --vocab '%s'; use phi3", o->vocab);
    if ((o->weights || o->untied) && !llama)
        return dream_error_set(DREAM_EINVAL, "%s is for --arch llama", o->weights ? "--weights" : "--untied");
    if (o->weights) {
        bool any_shape = preset_given || o->untied;
        for (int i = 0; i < 10; i++) any_shape |= o->set[i] != 0;
        if (any_shape)
            return dream_error_set(DREAM_EINVAL,
                                   "--weights %s gives the shape itself (config.* and its tensors); drop --preset, "
                                   "--untied and the shape options",
                                   o->weights);
    }
    o->rope_base = llama ? MM_LLAMA_ROPE_BASE : 1000000.0;
    o->rms_eps = llama ? MM_LLAMA_RMS_EPS : 1e-6;

    const struct mm_preset *p = NULL;
    for (size_t i = 0; i < sizeof mm_presets / sizeof mm_presets[0]; i++)
        if (strcmp(mm_presets[i].name, o->preset) == 0) p = &mm_presets[i];
    if (!p) return dream_error_set(DREAM_EINVAL, "unknown --preset '%s'; use tiny, 300m, e4b or mini", o->preset);
    o->shape = p->shape;
    int *fields[10] = {&o->shape.layers, &o->shape.embd, &o->shape.heads, &o->shape.kv_heads, &o->shape.head_dim,
                       &o->shape.head_dim_swa, &o->shape.ff, &o->shape.window, &o->shape.shared_kv, &o->shape.ctx};
    for (int i = 0; i < 10; i++)
        if (o->set[i]) *fields[i] = (int)vals[i];
    return 0;
}

/* Checks the shape against what the architecture's loader and graph accept. */
static int mm_check_shape(const struct mm_opts *o)
{
    const struct mm_shape *s = &o->shape;
    bool gemma = strcmp(o->arch, "gemma4") == 0;
    if (s->heads % s->kv_heads != 0)
        return dream_error_set(DREAM_EINVAL, "--heads %d is not a multiple of --kv-heads %d", s->heads, s->kv_heads);
    if (s->head_dim % 2 != 0)
        return dream_error_set(DREAM_EINVAL, "--head-dim %d must be even (RoPE rotates pairs)", s->head_dim);
    if (!gemma) return 0;
    if (s->head_dim_swa % 2 != 0)
        return dream_error_set(DREAM_EINVAL, "--head-dim-swa %d must be even (RoPE rotates pairs)", s->head_dim_swa);
    if (s->shared_kv >= s->layers)
        return dream_error_set(DREAM_EINVAL, "--shared-kv %d must be less than --layers %d", s->shared_kv,
                               s->layers);
    if (s->shared_kv > 0 && s->layers - s->shared_kv < 2)
        return dream_error_set(DREAM_EINVAL,
                               "--shared-kv %d leaves %d layer(s) with their own KV; Gemma 4 needs at least 2 "
                               "(one sliding, one full) for the shared layers to reuse",
                               s->shared_kv, s->layers - s->shared_kv);
    return 0;
}

/* Layer i of a Gemma 4 model is a sliding-window layer: five sliding then one full, except that with
 * shared KV the last two KV-owning layers must be sliding then full (the shared layers reuse them). */
static bool mm_gemma4_is_swa(const struct mm_shape *s, int i)
{
    int n_kv = s->layers - s->shared_kv;
    if (s->shared_kv > 0 && i == n_kv - 1) return false;
    if (s->shared_kv > 0 && i == n_kv - 2) return true;
    return i % MM_SWA_PERIOD != MM_SWA_PERIOD - 1;
}

/* Joins the llama.cpp tree and a relative path into a malloc'd string (NULL on allocation failure). */
static char *mm_path(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

/* Copies every tokenizer.* key of the vocabulary GGUF at path into meta and sets the chat template
 * from template_path. *n_vocab receives the token count. Errors name the file and how to fix it. */
static int mm_copy_tokenizer(struct gguf_context *meta, const char *vocab_path, const char *template_path,
                             int64_t *n_vocab)
{
    if (!file_exists(vocab_path))
        return dream_error_set(DREAM_ENOTFOUND,
                               "vocabulary file %s not found; pass --llama-src DIR (or set LLAMA_SRC) to the "
                               "pinned llama.cpp source tree, which `bash scripts/deps.sh` prints",
                               vocab_path);
    struct gguf_init_params ip = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *vocab = gguf_init_from_file(vocab_path, ip);
    if (!vocab) return dream_error_set(DREAM_EFORMAT, "%s is not a readable GGUF file", vocab_path);
    int64_t tok = gguf_find_key(vocab, "tokenizer.ggml.tokens");
    if (tok < 0 || gguf_get_kv_type(vocab, tok) != GGUF_TYPE_ARRAY) {
        gguf_free(vocab);
        return dream_error_set(DREAM_EFORMAT, "%s has no tokenizer.ggml.tokens array", vocab_path);
    }
    *n_vocab = (int64_t)gguf_get_arr_n(vocab, tok);

    /* Copy all pairs into a scratch context, drop the non-tokenizer ones, then copy the rest. */
    struct gguf_context *tmp = gguf_init_empty();
    if (!tmp) {
        gguf_free(vocab);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    gguf_set_kv(tmp, vocab);
    gguf_free(vocab);
    for (int64_t i = gguf_get_n_kv(tmp) - 1; i >= 0; i--) {
        const char *key = gguf_get_key(tmp, i);
        if (strncmp(key, "tokenizer.", 10) != 0 || strcmp(key, "tokenizer.chat_template") == 0) {
            char k[256];
            snprintf(k, sizeof k, "%s", key);
            gguf_remove_key(tmp, k);
        }
    }
    gguf_set_kv(meta, tmp);
    gguf_free(tmp);

    char *tmpl = NULL;
    size_t tlen = 0;
    int rc = file_read_all(template_path, 1 << 20, &tmpl, &tlen);
    if (rc)
        return dream_error_wrap(rc, "reading the chat template (pass --llama-src DIR to the pinned llama.cpp tree)");
    if (strlen(tmpl) != tlen) {
        free(tmpl);
        return dream_error_set(DREAM_EFORMAT, "chat template %s contains a NUL byte", template_path);
    }
    gguf_set_val_str(meta, "tokenizer.chat_template", tmpl);
    free(tmpl);
    return 0;
}

/* Index of the token whose text is exactly s in meta's tokenizer.ggml.tokens, or -1. */
static int64_t mm_find_token(const struct gguf_context *meta, const char *s)
{
    int64_t k = gguf_find_key(meta, "tokenizer.ggml.tokens");
    if (k < 0) return -1;
    size_t n = gguf_get_arr_n(meta, k);
    for (size_t i = 0; i < n; i++)
        if (strcmp(gguf_get_arr_str(meta, k, i), s) == 0) return (int64_t)i;
    return -1;
}

/* The llama_ftype number recorded in general.file_type (descriptive only). */
static uint32_t mm_file_type(enum ggml_type t)
{
    switch (t) {
    case GGML_TYPE_F16: return 1;   /* MOSTLY_F16 */
    case GGML_TYPE_Q8_0: return 7;  /* MOSTLY_Q8_0 */
    case GGML_TYPE_Q4_K: return 15; /* MOSTLY_Q4_K_M */
    default: return 0;
    }
}

static void mm_set_u32(struct gguf_context *m, const char *arch, const char *key, uint32_t v)
{
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    gguf_set_val_u32(m, k, v);
}

static void mm_set_f32(struct gguf_context *m, const char *arch, const char *key, float v)
{
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    gguf_set_val_f32(m, k, v);
}

/* The general.* keys and the hyper-parameters both architectures share. */
static void mm_common_meta(struct gguf_context *m, const struct mm_opts *o)
{
    const struct mm_shape *s = &o->shape;
    char name[128];
    /* Never "phi3" or "phi-3" in the name: llama.cpp then gives every special token RSTRIP, which
     * changes how prompts tokenize (llama-vocab.cpp, "set attributes by model name"). */
    if (o->weights) {
        const char *base = strrchr(o->weights, '/');
        snprintf(name, sizeof name, "dream weights %s", base ? base + 1 : o->weights);
        char lower[sizeof name];
        for (size_t i = 0; i < sizeof name; i++) lower[i] = (char)tolower((unsigned char)name[i]);
        if (strstr(lower, "phi3") || strstr(lower, "phi-3")) snprintf(name, sizeof name, "dream weights");
    } else {
        snprintf(name, sizeof name, "dream random %s %s seed %" PRIu64, o->arch, o->preset, o->seed);
    }
    gguf_set_val_str(m, "general.architecture", o->arch);
    gguf_set_val_str(m, "general.type", "model");
    gguf_set_val_str(m, "general.name", name);
    gguf_set_val_u32(m, "general.file_type", mm_file_type(o->type));
    gguf_set_val_u32(m, "general.quantization_version", GGML_QNT_VERSION);
    if (o->names_from_text) gguf_set_val_bool(m, "dream.names_from_text", true);
    mm_set_u32(m, o->arch, "context_length", (uint32_t)s->ctx);
    mm_set_u32(m, o->arch, "embedding_length", (uint32_t)s->embd);
    mm_set_u32(m, o->arch, "block_count", (uint32_t)s->layers);
    mm_set_u32(m, o->arch, "feed_forward_length", (uint32_t)s->ff);
    mm_set_u32(m, o->arch, "attention.head_count", (uint32_t)s->heads);
    mm_set_u32(m, o->arch, "attention.head_count_kv", (uint32_t)s->kv_heads);
    mm_set_u32(m, o->arch, "attention.key_length", (uint32_t)s->head_dim);
    mm_set_u32(m, o->arch, "attention.value_length", (uint32_t)s->head_dim);
    mm_set_u32(m, o->arch, "rope.dimension_count", (uint32_t)s->head_dim);
    mm_set_f32(m, o->arch, "rope.freq_base", (float)o->rope_base);
    mm_set_f32(m, o->arch, "attention.layer_norm_rms_epsilon", (float)o->rms_eps);
}

static int mm_gemma4_meta(struct gguf_context *m, const struct mm_opts *o)
{
    const struct mm_shape *s = &o->shape;
    mm_set_u32(m, "gemma4", "attention.key_length_swa", (uint32_t)s->head_dim_swa);
    mm_set_u32(m, "gemma4", "attention.value_length_swa", (uint32_t)s->head_dim_swa);
    mm_set_u32(m, "gemma4", "rope.dimension_count_swa", (uint32_t)s->head_dim_swa);
    mm_set_f32(m, "gemma4", "rope.freq_base_swa", 10000.0f);
    mm_set_u32(m, "gemma4", "attention.sliding_window", (uint32_t)s->window);
    bool *pattern = malloc((size_t)s->layers * sizeof *pattern);
    if (!pattern) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (int i = 0; i < s->layers; i++) pattern[i] = mm_gemma4_is_swa(s, i);
    gguf_set_arr_data(m, "gemma4.attention.sliding_window_pattern", GGUF_TYPE_BOOL, pattern, (size_t)s->layers);
    free(pattern);
    mm_set_u32(m, "gemma4", "attention.shared_kv_layers", (uint32_t)s->shared_kv);
    mm_set_u32(m, "gemma4", "embedding_length_per_layer_input", 0);
    mm_set_f32(m, "gemma4", "final_logit_softcapping", 30.0f);
    return 0;
}

/* Adds a matrix [n_in, n_out] with random values of standard deviation 1/sqrt(n_in), so each output
 * of a unit-variance input has roughly unit variance and activations stay finite. */
static int mm_matrix(struct gw_list *l, enum ggml_type type, int64_t n_in, int64_t n_out, const char *fmt, int layer)
{
    int64_t ne[4] = {n_in, n_out, 1, 1};
    return gw_list_add(l, type, 2, ne, GW_FILL_RANDOM, (float)(1.0 / sqrt((double)n_in)), fmt, layer);
}

/* Adds a 1-D F32 tensor of n ones (norm weights, rope_freqs, output scales). */
static int mm_ones(struct gw_list *l, int64_t n, const char *fmt, int layer)
{
    int64_t ne[4] = {n, 1, 1, 1};
    return gw_list_add(l, GGML_TYPE_F32, 1, ne, GW_FILL_CONST, 1.0f, fmt, layer);
}

/* Adds token_embd [E, n_vocab] (also the tied output projection). Rows have norm 0.5, not 1: Gemma
 * scales embeddings by sqrt(E), so with unit rows a wide model's final state keeps enough of the
 * input token's own row that the tied output re-emits the last token forever (the self-logit
 * sqrt(E) * |row|^2 / sqrt(|row|^2 + 2 * layers) beats the ~4.9 * |row| best random logit when
 * E >= 768). At 0.5 the self-logit stays below the random maximum for every preset. */
static int mm_token_embd(struct gw_list *l, enum ggml_type type, int64_t E, int64_t n_vocab)
{
    int64_t ne[4] = {E, n_vocab, 1, 1};
    return gw_list_add(l, type, 2, ne, GW_FILL_RANDOM, (float)(0.5 / sqrt((double)E)), "token_embd.weight");
}

static int mm_gemma4_tensors(struct gw_list *l, const struct mm_opts *o, int64_t n_vocab)
{
    const struct mm_shape *s = &o->shape;
    const enum ggml_type t = o->type;
    const int64_t E = s->embd, F = s->ff, H = s->heads, KV = s->kv_heads;
    int rc = mm_token_embd(l, t, E, n_vocab);
    if (!rc) rc = mm_ones(l, E, "output_norm.weight", 0);
    bool any_full = false;
    for (int i = 0; i < s->layers; i++) any_full |= !mm_gemma4_is_swa(s, i);
    if (!rc && any_full) rc = mm_ones(l, s->head_dim / 2, "rope_freqs.weight", 0);
    const int n_kv = s->layers - s->shared_kv;
    for (int i = 0; i < s->layers && !rc; i++) {
        const int64_t hd = mm_gemma4_is_swa(s, i) ? s->head_dim_swa : s->head_dim;
        const bool own_kv = i < n_kv;
        rc = mm_ones(l, E, "blk.%d.attn_norm.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, hd * H, "blk.%d.attn_q.weight", i);
        if (!rc && own_kv) rc = mm_matrix(l, t, E, hd * KV, "blk.%d.attn_k.weight", i);
        if (!rc && own_kv) rc = mm_matrix(l, t, E, hd * KV, "blk.%d.attn_v.weight", i);
        if (!rc) rc = mm_matrix(l, t, hd * H, E, "blk.%d.attn_output.weight", i);
        if (!rc) rc = mm_ones(l, hd, "blk.%d.attn_q_norm.weight", i);
        if (!rc && own_kv) rc = mm_ones(l, hd, "blk.%d.attn_k_norm.weight", i);
        if (!rc) rc = mm_ones(l, E, "blk.%d.post_attention_norm.weight", i);
        if (!rc) rc = mm_ones(l, 1, "blk.%d.layer_output_scale.weight", i);
        if (!rc) rc = mm_ones(l, E, "blk.%d.ffn_norm.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, F, "blk.%d.ffn_gate.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, F, "blk.%d.ffn_up.weight", i);
        if (!rc) rc = mm_matrix(l, t, F, E, "blk.%d.ffn_down.weight", i);
        if (!rc) rc = mm_ones(l, E, "blk.%d.post_ffw_norm.weight", i);
    }
    return rc;
}

static int mm_qwen3_tensors(struct gw_list *l, const struct mm_opts *o, int64_t n_vocab)
{
    const struct mm_shape *s = &o->shape;
    const enum ggml_type t = o->type;
    const int64_t E = s->embd, F = s->ff, hd = s->head_dim, H = s->heads, KV = s->kv_heads;
    /* The output projection is tied to token_embd, as in the small Qwen3 models. */
    int rc = mm_token_embd(l, t, E, n_vocab);
    if (!rc) rc = mm_ones(l, E, "output_norm.weight", 0);
    for (int i = 0; i < s->layers && !rc; i++) {
        rc = mm_ones(l, E, "blk.%d.attn_norm.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, hd * H, "blk.%d.attn_q.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, hd * KV, "blk.%d.attn_k.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, hd * KV, "blk.%d.attn_v.weight", i);
        if (!rc) rc = mm_matrix(l, t, hd * H, E, "blk.%d.attn_output.weight", i);
        if (!rc) rc = mm_ones(l, hd, "blk.%d.attn_q_norm.weight", i);
        if (!rc) rc = mm_ones(l, hd, "blk.%d.attn_k_norm.weight", i);
        if (!rc) rc = mm_ones(l, E, "blk.%d.ffn_norm.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, F, "blk.%d.ffn_gate.weight", i);
        if (!rc) rc = mm_matrix(l, t, E, F, "blk.%d.ffn_up.weight", i);
        if (!rc) rc = mm_matrix(l, t, F, E, "blk.%d.ffn_down.weight", i);
    }
    return rc;
}

/* Adds one llama tensor: from the trained weights w when given (which must hold it with exactly
 * this shape), else random with standard deviation std, or ones when std is 0 (norms, F32). */
static int mm_llama_add(struct gw_list *l, struct dw_weights *w, enum ggml_type type, int n_dims, int64_t n0,
                        int64_t n1, float std, const char *fmt, int layer)
{
    char name[GGML_MAX_NAME];
    snprintf(name, sizeof name, fmt, layer);
    int64_t ne[4] = {n0, n_dims > 1 ? n1 : 1, 1, 1};
    if (std == 0.0f) type = GGML_TYPE_F32;
    if (w) {
        struct dw_tensor *t = NULL;
        int rc = dw_expect(w, name, n_dims, ne, &t);
        return rc ? rc : gw_list_add_data(l, type, n_dims, ne, t->data, t->data_type, "%s", name);
    }
    if (std == 0.0f) return gw_list_add(l, type, n_dims, ne, GW_FILL_CONST, 1.0f, "%s", name);
    return gw_list_add(l, type, n_dims, ne, GW_FILL_RANDOM, std, "%s", name);
}

/* The llama graph's tensors (src/models/llama.cpp in the pinned tree): no biases, no q/k norms,
 * output tied to token_embd unless untied. Random values as the other architectures'. */
static int mm_llama_tensors(struct gw_list *l, const struct mm_opts *o, int64_t n_vocab, struct dw_weights *w)
{
    const struct mm_shape *s = &o->shape;
    const enum ggml_type t = o->type;
    const int64_t E = s->embd, F = s->ff, hd = s->head_dim, H = s->heads, KV = s->kv_heads;
    const float e_std = (float)(1.0 / sqrt((double)E)), a_std = (float)(1.0 / sqrt((double)(hd * H)));
    const float f_std = (float)(1.0 / sqrt((double)F));
    int rc = mm_llama_add(l, w, t, 2, E, n_vocab, 0.5f * e_std, "token_embd.weight", 0);
    if (!rc) rc = mm_llama_add(l, w, t, 1, E, 1, 0.0f, "output_norm.weight", 0);
    if (!rc && o->untied) rc = mm_llama_add(l, w, t, 2, E, n_vocab, e_std, "output.weight", 0);
    for (int i = 0; i < s->layers && !rc; i++) {
        rc = mm_llama_add(l, w, t, 1, E, 1, 0.0f, "blk.%d.attn_norm.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, E, hd * H, e_std, "blk.%d.attn_q.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, E, hd * KV, e_std, "blk.%d.attn_k.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, E, hd * KV, e_std, "blk.%d.attn_v.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, hd * H, E, a_std, "blk.%d.attn_output.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 1, E, 1, 0.0f, "blk.%d.ffn_norm.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, E, F, e_std, "blk.%d.ffn_gate.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, E, F, e_std, "blk.%d.ffn_up.weight", i);
        if (!rc) rc = mm_llama_add(l, w, t, 2, F, E, f_std, "blk.%d.ffn_down.weight", i);
    }
    if (!rc && w) rc = dw_check_all_used(w);
    return rc;
}

/* Takes the shape and hyper-parameters of trained weights from their config (train/train.py
 * writes every key) into o. */
static int mm_weights_config(struct mm_opts *o, struct dw_weights *w)
{
    if (strcmp(w->kind, "model") != 0)
        return dream_error_set(DREAM_EINVAL, "%s.json holds a %s, not a model; give LoRA weights to dream-make-adapter",
                               o->weights, w->kind);
    const char *arch = NULL;
    int rc = dw_config_str(w, "arch", &arch);
    if (!rc && strcmp(arch, o->arch) != 0)
        rc = dream_error_set(DREAM_EINVAL, "%s.json is a %s model, not --arch %s", o->weights, arch, o->arch);
    static const char *const keys[] = {"n_layer", "n_embd", "n_head", "n_head_kv", "head_dim", "n_ff", "n_ctx"};
    int *fields[] = {&o->shape.layers, &o->shape.embd, &o->shape.heads, &o->shape.kv_heads, &o->shape.head_dim,
                     &o->shape.ff, &o->shape.ctx};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !rc; i++) {
        long v = 0;
        rc = dw_config_int(w, keys[i], 1, 1L << 22, &v);
        *fields[i] = (int)v;
    }
    if (!rc) rc = dw_config_float(w, "rope_base", &o->rope_base);
    if (!rc) rc = dw_config_float(w, "rms_eps", &o->rms_eps);
    if (!rc && (o->rope_base <= 0 || o->rms_eps <= 0))
        rc = dream_error_set(DREAM_EFORMAT, "%s.json: config.rope_base and config.rms_eps must be > 0", o->weights);
    o->untied = dw_find(w, "output.weight") != NULL;
    return rc;
}

/* Qwen3's instruct models end a turn with <|im_end|> and add no BOS; the qwen2 vocabulary file
 * says <|endoftext|> and leaves add_bos unset, so set both as a real Qwen3 GGUF has them. */
static int mm_qwen3_tokenizer_fixups(struct gguf_context *m, const char *vocab_path)
{
    int64_t im_end = mm_find_token(m, "<|im_end|>");
    if (im_end < 0)
        return dream_error_set(DREAM_EFORMAT, "%s has no <|im_end|> token; is it the qwen2 vocabulary?", vocab_path);
    gguf_set_val_u32(m, "tokenizer.ggml.eos_token_id", (uint32_t)im_end);
    gguf_set_val_bool(m, "tokenizer.ggml.add_bos_token", false);
    return 0;
}

static int mm_run(struct mm_opts *o)
{
    struct dw_weights w = {0};
    bool have_weights = false;
    int rc = 0;
    if (o->weights) {
        rc = dw_load(o->weights, &w);
        if (rc) return dream_error_wrap(rc, "--weights %s", o->weights);
        have_weights = true;
        rc = mm_weights_config(o, &w);
    }
    if (!rc) rc = mm_check_shape(o);
    if (rc) {
        dw_free(&w);
        return rc;
    }
    if (!o->llama_src || !o->llama_src[0]) {
        dw_free(&w);
        return dream_error_set(DREAM_EINVAL,
                               "the llama.cpp source tree is unknown; pass --llama-src DIR or set LLAMA_SRC "
                               "(`bash scripts/deps.sh` prints it)");
    }
    bool gemma = strcmp(o->arch, "gemma4") == 0, llama = strcmp(o->arch, "llama") == 0;
    char *vocab = mm_path(o->llama_src, gemma ? MM_GEMMA4_VOCAB : llama ? MM_PHI3_VOCAB : MM_QWEN3_VOCAB);
    char *tmpl = mm_path(o->llama_src, gemma ? MM_GEMMA4_TEMPLATE : llama ? MM_PHI3_TEMPLATE : MM_QWEN3_TEMPLATE);
    struct gguf_context *meta = gguf_init_empty();
    struct gw_list l = {0};
    if (!vocab || !tmpl || !meta) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto out;
    }
    mm_common_meta(meta, o);
    if (gemma) rc = mm_gemma4_meta(meta, o);
    int64_t n_vocab = 0;
    if (!rc) rc = mm_copy_tokenizer(meta, vocab, tmpl, &n_vocab);
    if (!rc && !gemma && !llama) rc = mm_qwen3_tokenizer_fixups(meta, vocab);
    if (!rc && have_weights) {
        long nv = 0;
        rc = dw_config_int(&w, "n_vocab", 1, 1L << 24, &nv);
        if (!rc && nv != n_vocab)
            rc = dream_error_set(DREAM_EFORMAT, "%s.json: config.n_vocab is %ld but the %s vocabulary (%s) has %lld tokens",
                                 o->weights, nv, o->vocab, vocab, (long long)n_vocab);
    }
    if (!rc) {
        if (gemma) rc = mm_gemma4_tensors(&l, o, n_vocab);
        else if (llama) rc = mm_llama_tensors(&l, o, n_vocab, have_weights ? &w : NULL);
        else rc = mm_qwen3_tensors(&l, o, n_vocab);
    }
    /* Check every shape before writing anything, so a bad --type fails fast with the first culprit. */
    for (size_t i = 0; i < l.len && !rc; i++) {
        rc = gw_check_shape(&l.items[i]);
        if (rc)
            dream_error_wrap(rc, "--arch %s %s %s --type %s", o->arch, o->weights ? "--weights" : "--preset",
                             o->weights ? o->weights : o->preset, ggml_type_name(o->type));
    }
    uint64_t bytes = 0;
    if (!rc) rc = gw_write(o->out, meta, &l, o->seed, o->threads, &bytes);
    if (!rc) {
        int64_t params = gw_list_nelements(&l);
        printf("dream-make-model: arch=%s layers=%d params=%" PRId64 " (%.1fM) type=%s bytes=%" PRIu64 " path=%s\n",
               o->arch, o->shape.layers, params, (double)params / 1e6, ggml_type_name(o->type), bytes, o->out);
    }
out:
    gw_list_free(&l);
    if (meta) gguf_free(meta);
    free(vocab);
    free(tmpl);
    dw_free(&w);
    return rc;
}

/* Cosine of row with c. */
static double mm_cos(const float *row, const double *c, int64_t n)
{
    double dot = 0, a = 0, b = 0;
    for (int64_t i = 0; i < n; i++) {
        dot += row[i] * c[i];
        a += (double)row[i] * row[i];
        b += c[i] * c[i];
    }
    return a > 0 && b > 0 ? dot / sqrt(a * b) : 0.0;
}

/* Row r of the embedding e as f32 in buf. */
static void mm_embd_row(const struct ggml_tensor *e, int64_t r, float *buf)
{
    const void *src = (const char *)e->data + r * e->nb[1];
    if (e->type == GGML_TYPE_F32) memcpy(buf, src, (size_t)e->ne[0] * sizeof *buf);
    else ggml_get_type_traits(e->type)->to_float(src, buf, e->ne[0]);
}

/* out = the mean of the rows whose cosine with ref is >= c (every row when ref is NULL); hit[r]
 * (when not NULL) says which rows those were. */
static void mm_embd_mean(const struct ggml_tensor *e, float *buf, const double *ref, double c, double *out, unsigned char *hit)
{
    int64_t E = e->ne[0], n = 0;
    memset(out, 0, (size_t)E * sizeof *out);
    for (int64_t r = 0; r < e->ne[1]; r++) {
        mm_embd_row(e, r, buf);
        bool in = !ref || mm_cos(buf, ref, E) >= c;
        if (hit) hit[r] = in;
        if (!in) continue;
        for (int64_t i = 0; i < E; i++) out[i] += buf[i];
        n++;
    }
    for (int64_t i = 0; n && i < E; i++) out[i] /= (double)n;
}

/* --mark-untrained: see the usage. */
static int mm_mark_untrained(const struct mm_opts *o)
{
    struct ggml_context *ctx = NULL;
    struct gguf_init_params gp = {.no_alloc = false, .ctx = &ctx};
    struct gguf_context *g = gguf_init_from_file(o->mark, gp);
    if (!g) return dream_error_set(DREAM_EFORMAT, "--mark-untrained %s: not a readable GGUF file (missing, truncated or corrupt)", o->mark);
    int rc = 0;
    float *buf = NULL;
    double *mean = NULL;
    unsigned char *hit = NULL;
    int32_t *ids = NULL;
    struct gguf_context *out_g = NULL;
    struct ggml_tensor *e = ggml_get_tensor(ctx, "token_embd.weight");
    int64_t kt = gguf_find_key(g, "tokenizer.ggml.token_type");
    const struct ggml_type_traits *tr = e ? ggml_get_type_traits(e->type) : NULL;
    if (!e || e->ne[2] != 1 || e->ne[3] != 1) {
        rc = dream_error_set(DREAM_EFORMAT, "--mark-untrained %s: no 2-D token_embd.weight tensor", o->mark);
        goto out;
    }
    if (e->type != GGML_TYPE_F32 && !tr->to_float) {
        rc = dream_error_set(DREAM_EFORMAT, "--mark-untrained %s: token_embd.weight has type %s, which has no conversion to f32", o->mark,
                             ggml_type_name(e->type));
        goto out;
    }
    int64_t E = e->ne[0], V = e->ne[1];
    if (kt < 0 || gguf_get_kv_type(g, kt) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, kt) != GGUF_TYPE_INT32 ||
        (int64_t)gguf_get_arr_n(g, kt) != V) {
        rc = dream_error_set(DREAM_EFORMAT, "--mark-untrained %s: tokenizer.ggml.token_type is missing or does not have one int32 per embedding row (%lld)",
                             o->mark, (long long)V);
        goto out;
    }
    const int32_t *type = gguf_get_arr_data(g, kt);
    buf = malloc((size_t)E * sizeof *buf);
    mean = malloc(2 * (size_t)E * sizeof *mean); /* two means of E values each */
    hit = malloc((size_t)V);
    ids = malloc((size_t)V * sizeof *ids);
    if (!buf || !mean || !hit || !ids) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto out;
    }
    /* the mean of every row, then the mean of the rows near it; the marks are the rows near that
     * (the last call's mean is not needed) */
    double *all = mean, *near = mean + E;
    mm_embd_mean(e, buf, NULL, o->untrained_cos, all, NULL);
    mm_embd_mean(e, buf, all, o->untrained_cos, near, NULL);
    mm_embd_mean(e, buf, near, o->untrained_cos, all, hit);
    int64_t n = 0;
    for (int64_t r = 0; r < V; r++)
        if (hit[r] && type[r] == 1 /* LLAMA_TOKEN_TYPE_NORMAL */) ids[n++] = (int32_t)r;
    /* a new context: the same keys and tensors (in order, their data as loaded), and the marks */
    out_g = gguf_init_empty();
    if (!out_g) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto out;
    }
    gguf_set_kv(out_g, g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) gguf_add_tensor(out_g, ggml_get_tensor(ctx, gguf_get_tensor_name(g, i)));
    gguf_set_arr_data(out_g, "dream.untrained_tokens", GGUF_TYPE_INT32, ids, (size_t)n);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->out, (long)getpid()) >= (int)sizeof tmp) {
        rc = dream_error_set(DREAM_EINVAL, "-o %s: path too long", o->out);
        goto out;
    }
    if (!gguf_write_to_file(out_g, tmp, false)) {
        remove(tmp);
        rc = dream_error_set(DREAM_EIO, "cannot write %s (disk full or no permission?)", tmp);
        goto out;
    }
    if (rename(tmp, o->out) != 0) {
        rc = dream_error_set(DREAM_EIO, "cannot rename %s to %s: %s", tmp, o->out, strerror(errno));
        remove(tmp);
        goto out;
    }
    printf("dream-make-model: marked %lld of %lld tokens untrained (cosine >= %g with the mean untrained row) path=%s\n",
           (long long)n, (long long)V, o->untrained_cos, o->out);
out:
    free(buf);
    free(mean);
    free(hit);
    free(ids);
    if (out_g) gguf_free(out_g);
    gguf_free(g);
    if (ctx) ggml_free(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    struct mm_opts o;
    gw_quiet_ggml_logs();
    int rc = mm_parse_args(argc, argv, &o);
    if (rc == 1) return 0;
    if (rc == 0) rc = o.mark ? mm_mark_untrained(&o) : mm_run(&o);
    if (rc) {
        fprintf(stderr, "dream-make-model: %s\n", dream_error_last());
        return rc == DREAM_EINVAL ? 2 : 1;
    }
    return 0;
}
