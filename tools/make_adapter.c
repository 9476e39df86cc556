/*
 * make_adapter.c — dream-make-adapter: writes a LoRA adapter GGUF for a given model file, with
 * random or zero matrices, so adapter loading, switching and per-stage mounting can be tested
 * without training anything.
 *
 * Format (llama.cpp's LoRA loader): general.type = "adapter", general.architecture = the model's,
 * adapter.type = "lora", adapter.lora.alpha; for each adapted weight W [n_in, n_out] (ggml order)
 * two tensors W.lora_a [n_in, rank] and W.lora_b [rank, n_out]. The effect on W·x is
 * (alpha / rank) * scale * B·(A·x).
 *
 * With --weights PREFIX the matrices are trained ones (train/train.py --lora writes PREFIX.json
 * kind "lora" + PREFIX.bin[.N]: W.lora_a of row-major shape [rank, n_in] and W.lora_b of
 * [n_out, rank], config.rank and config.alpha), checked against the model's weights.
 */
#include "gguf_writer.h"
#include "weights.h"

#include "dream/error.h"
#include "util/file.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ma_opts {
    const char *model;
    const char *out;
    long rank;
    float alpha; /* NAN = the rank (an effective multiplier of 1) */
    const char *targets;
    bool zero;
    float scale_init;
    uint64_t seed;
    enum ggml_type type;
    const char *weights; /* trained LoRA weights PREFIX, or NULL (random / zero) */
    bool random_opts;    /* an option of the random adapter was given */
};

static void ma_usage(FILE *f)
{
    fprintf(f,
            "usage: dream-make-adapter --model MODEL.gguf -o OUT.gguf [options]\n"
            "       dream-make-adapter --model MODEL.gguf --weights PREFIX -o OUT.gguf [--type T]\n"
            "\n"
            "Writes a LoRA adapter GGUF for MODEL (its general.architecture and weight shapes),\n"
            "deterministic from the seed. Adapted weight W gains (alpha/rank) * scale * B*A.\n"
            "With --weights, the trained adapter of PREFIX.json + PREFIX.bin[.N] (train/train.py\n"
            "--lora): its rank, alpha and matrices; every W.lora_a/W.lora_b pair must fit MODEL.\n"
            "\n"
            "  --model PATH      the base model GGUF (required)\n"
            "  -o, --output PATH the adapter GGUF to write (required)\n"
            "  --rank R          LoRA rank (default 8)\n"
            "  --alpha A         adapter.lora.alpha (default: the rank, so alpha/rank = 1)\n"
            "  --targets LIST    comma-separated weight names matched by suffix: attn_q matches every\n"
            "                    blk.N.attn_q.weight; a name with .weight is matched as given\n"
            "                    (default attn_q,attn_v; e.g. attn_q,attn_k,attn_v,attn_output,\n"
            "                    ffn_gate,ffn_up,ffn_down,output). token_embd is not supported.\n"
            "  --init random|zero  random: A and B random; zero: A random, B zero (a no-op adapter,\n"
            "                    as a fresh PEFT adapter). Default random.\n"
            "  --scale-init X    magnitude of B: with input of unit RMS, B*A*x has RMS about X\n"
            "                    (default 0.5); A has standard deviation 1/sqrt(n_in)\n"
            "  --seed N          random seed (default 1)\n"
            "  --type f32|f16    tensor type (default f32)\n"
            "  --weights PREFIX  trained matrices instead of random ones (not with --rank, --alpha,\n"
            "                    --targets, --init, --scale-init or --seed: the file says them)\n"
            "  -h, --help        this help\n");
}

enum { OPT_MODEL = 256, OPT_RANK, OPT_ALPHA, OPT_TARGETS, OPT_INIT, OPT_SCALE_INIT, OPT_SEED, OPT_TYPE, OPT_WEIGHTS };

/* Parses a finite float option value; reports the option and value on error. */
static int ma_parse_float(const char *opt, const char *s, float *out)
{
    char *end = NULL;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return dream_error_set(DREAM_EINVAL, "%s '%s' is not a finite number", opt, s);
    *out = v;
    return 0;
}

/* Fills o from argv. Returns 0, 1 when --help was printed, or DREAM_EINVAL with a message. */
static int ma_parse_args(int argc, char **argv, struct ma_opts *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, 0, OPT_MODEL},
        {"rank", required_argument, 0, OPT_RANK},
        {"alpha", required_argument, 0, OPT_ALPHA},
        {"targets", required_argument, 0, OPT_TARGETS},
        {"init", required_argument, 0, OPT_INIT},
        {"scale-init", required_argument, 0, OPT_SCALE_INIT},
        {"seed", required_argument, 0, OPT_SEED},
        {"type", required_argument, 0, OPT_TYPE},
        {"weights", required_argument, 0, OPT_WEIGHTS},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    o->rank = 8;
    o->alpha = NAN;
    o->targets = "attn_q,attn_v";
    o->scale_init = 0.5f;
    o->seed = 1;
    o->type = GGML_TYPE_F32;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        int rc = 0;
        char *end = NULL;
        if (c == OPT_RANK || c == OPT_ALPHA || c == OPT_TARGETS || c == OPT_INIT || c == OPT_SCALE_INIT || c == OPT_SEED)
            o->random_opts = true;
        switch (c) {
        case 'h': ma_usage(stdout); return 1;
        case 'o': o->out = optarg; break;
        case OPT_MODEL: o->model = optarg; break;
        case OPT_WEIGHTS: o->weights = optarg; break;
        case OPT_TARGETS: o->targets = optarg; break;
        case OPT_RANK:
            errno = 0;
            o->rank = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || o->rank < 1 || o->rank > 65536)
                return dream_error_set(DREAM_EINVAL, "--rank '%s' is not a whole number in [1, 65536]", optarg);
            break;
        case OPT_ALPHA: rc = ma_parse_float("--alpha", optarg, &o->alpha); break;
        case OPT_SCALE_INIT: rc = ma_parse_float("--scale-init", optarg, &o->scale_init); break;
        case OPT_INIT:
            if (strcmp(optarg, "random") == 0) o->zero = false;
            else if (strcmp(optarg, "zero") == 0) o->zero = true;
            else return dream_error_set(DREAM_EINVAL, "unknown --init '%s'; use random or zero", optarg);
            break;
        case OPT_TYPE:
            if (strcmp(optarg, "f32") == 0) o->type = GGML_TYPE_F32;
            else if (strcmp(optarg, "f16") == 0) o->type = GGML_TYPE_F16;
            else return dream_error_set(DREAM_EINVAL, "unknown --type '%s'; use f32 or f16", optarg);
            break;
        case OPT_SEED: rc = gw_parse_seed(optarg, &o->seed); break;
        case ':': return dream_error_set(DREAM_EINVAL, "option %s needs a value; see --help", argv[optind - 1]);
        default: return dream_error_set(DREAM_EINVAL, "unknown option '%s'; see --help", argv[optind - 1]);
        }
        if (rc) return rc;
    }
    if (optind < argc) return dream_error_set(DREAM_EINVAL, "unexpected argument '%s'; see --help", argv[optind]);
    if (!o->model) return dream_error_set(DREAM_EINVAL, "--model PATH is required (the base model GGUF)");
    if (!o->out) return dream_error_set(DREAM_EINVAL, "-o PATH is required (the adapter GGUF to write)");
    if (o->weights && o->random_opts)
        return dream_error_set(DREAM_EINVAL,
                               "--weights %s gives the rank, alpha and matrices itself; drop --rank, --alpha, "
                               "--targets, --init, --scale-init and --seed",
                               o->weights);
    return 0;
}

/* True when tensor name matches target: "attn_q" matches "*.attn_q.weight" and "attn_q.weight";
 * a target ending in ".weight" matches that suffix after a '.' or the whole name. */
static bool ma_target_matches(const char *name, const char *target, size_t tlen)
{
    char want[GGML_MAX_NAME + 16];
    bool has_weight = tlen >= 7 && memcmp(target + tlen - 7, ".weight", 7) == 0;
    int n = snprintf(want, sizeof want, "%.*s%s", (int)tlen, target, has_weight ? "" : ".weight");
    if (n < 0 || (size_t)n >= sizeof want) return false;
    size_t nlen = strlen(name), wlen = (size_t)n;
    if (nlen == wlen) return strcmp(name, want) == 0;
    return nlen > wlen && name[nlen - wlen - 1] == '.' && strcmp(name + nlen - wlen, want) == 0;
}

/* Adds lora_a/lora_b for every 2-D weight of the model that a target matches, in the model's tensor
 * order. Every target must match at least one weight. */
static int ma_add_tensors(struct gw_list *l, const struct gguf_context *model, const struct ma_opts *o)
{
    const char *p = o->targets;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t tlen = comma ? (size_t)(comma - p) : strlen(p);
        if (tlen == 0)
            return dream_error_set(DREAM_EINVAL, "--targets '%s' has an empty entry", o->targets);
        if (tlen >= 10 && memcmp(p, "token_embd", 10) == 0)
            return dream_error_set(DREAM_EINVAL,
                                   "--targets: token_embd is not supported (llama.cpp stores its LoRA transposed); "
                                   "adapt attention or FFN weights instead");
        int matched = 0;
        for (int64_t i = 0; i < gguf_get_n_tensors(model); i++) {
            const char *name = gguf_get_tensor_name(model, i);
            if (!ma_target_matches(name, p, tlen)) continue;
            const int64_t *ne = gguf_get_tensor_ne(model, i);
            if (ne[1] <= 1 || ne[2] != 1 || ne[3] != 1) continue; /* only 2-D weights can be adapted */
            for (size_t k = 0; k < l->len; k++)
                if (strncmp(l->items[k].name, name, strlen(name)) == 0 && l->items[k].name[strlen(name)] == '.')
                    return dream_error_set(DREAM_EINVAL, "--targets '%s' names %s twice", o->targets, name);
            int64_t a_ne[4] = {ne[0], o->rank, 1, 1};
            int64_t b_ne[4] = {o->rank, ne[1], 1, 1};
            /* A: unit-RMS input -> each of the rank outputs has unit RMS. B: rank inputs of unit RMS
             * -> outputs of RMS scale_init. */
            float a_std = (float)(1.0 / sqrt((double)ne[0]));
            float b_std = o->zero ? 0.0f : o->scale_init / (float)sqrt((double)o->rank);
            int rc = gw_list_add(l, o->type, 2, a_ne, GW_FILL_RANDOM, a_std, "%s.lora_a", name);
            if (!rc)
                rc = gw_list_add(l, o->type, 2, b_ne, o->zero ? GW_FILL_CONST : GW_FILL_RANDOM, b_std, "%s.lora_b",
                                 name);
            if (rc) return rc;
            matched++;
        }
        if (!matched)
            return dream_error_set(DREAM_EINVAL,
                                   "target '%.*s' matches no 2-D weight of %s (weights are named like "
                                   "blk.0.attn_q.weight; try attn_q, attn_k, attn_v, attn_output, ffn_up, ...)",
                                   (int)tlen, p, o->model);
        p += tlen;
        if (*p == ',') p++;
    }
    if (l->len == 0) return dream_error_set(DREAM_EINVAL, "--targets is empty; name at least one weight (e.g. attn_q)");
    return 0;
}

/* Adds the trained pair W.lora_a / W.lora_b of every 2-D weight W of the model that w holds, in
 * the model's tensor order, each checked against W's shape and the rank. */
static int ma_add_trained(struct gw_list *l, const struct gguf_context *model, struct dw_weights *w,
                          const struct ma_opts *o, long rank)
{
    for (int64_t i = 0; i < gguf_get_n_tensors(model); i++) {
        const char *name = gguf_get_tensor_name(model, i);
        const int64_t *ne = gguf_get_tensor_ne(model, i);
        char a_name[GGML_MAX_NAME + 8], b_name[GGML_MAX_NAME + 8];
        snprintf(a_name, sizeof a_name, "%s.lora_a", name);
        snprintf(b_name, sizeof b_name, "%s.lora_b", name);
        bool has_a = dw_find(w, a_name) != NULL, has_b = dw_find(w, b_name) != NULL;
        if (!has_a && !has_b) continue;
        if (ne[1] <= 1 || ne[2] != 1 || ne[3] != 1)
            return dream_error_set(DREAM_EFORMAT, "%s.json adapts %s, which is not a 2-D weight of %s", o->weights, name,
                                   o->model);
        int64_t a_ne[4] = {ne[0], rank, 1, 1};
        int64_t b_ne[4] = {rank, ne[1], 1, 1};
        struct dw_tensor *a = NULL, *b = NULL;
        int rc = dw_expect(w, a_name, 2, a_ne, &a);
        if (!rc) rc = dw_expect(w, b_name, 2, b_ne, &b);
        if (!rc) rc = gw_list_add_data(l, o->type, 2, a_ne, a->data, a->data_type, "%s", a_name);
        if (!rc) rc = gw_list_add_data(l, o->type, 2, b_ne, b->data, b->data_type, "%s", b_name);
        if (rc) return dream_error_wrap(rc, "model %s", o->model);
    }
    int rc = dw_check_all_used(w);
    if (!rc && l->len == 0) rc = dream_error_set(DREAM_EFORMAT, "%s.json holds no LoRA tensors", o->weights);
    return rc;
}

static int ma_run(const struct ma_opts *o)
{
    if (!file_exists(o->model))
        return dream_error_set(DREAM_ENOTFOUND, "model %s not found; make one with dream-make-model", o->model);
    struct gguf_init_params ip = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *model = gguf_init_from_file(o->model, ip);
    if (!model) return dream_error_set(DREAM_EFORMAT, "%s is not a readable GGUF model file", o->model);
    int64_t k = gguf_find_key(model, "general.architecture");
    if (k < 0 || gguf_get_kv_type(model, k) != GGUF_TYPE_STRING) {
        gguf_free(model);
        return dream_error_set(DREAM_EFORMAT, "%s has no general.architecture; is it a model GGUF?", o->model);
    }
    char arch[64];
    snprintf(arch, sizeof arch, "%s", gguf_get_val_str(model, k));

    struct gguf_context *meta = gguf_init_empty();
    struct gw_list l = {0};
    struct dw_weights w = {0};
    int rc = 0;
    if (!meta) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto out;
    }
    float alpha = isnan(o->alpha) ? (float)o->rank : o->alpha;
    long rank = o->rank;
    if (o->weights) {
        rc = dw_load(o->weights, &w);
        if (rc) {
            dream_error_wrap(rc, "--weights %s", o->weights);
            goto out;
        }
        double a = 0;
        if (strcmp(w.kind, "lora") != 0)
            rc = dream_error_set(DREAM_EINVAL, "%s.json holds a %s, not a LoRA adapter; give model weights to dream-make-model",
                                 o->weights, w.kind);
        if (!rc) rc = dw_config_int(&w, "rank", 1, 65536, &rank);
        if (!rc) rc = dw_config_float(&w, "alpha", &a);
        alpha = (float)a;
        if (rc) goto out;
    }
    gguf_set_val_str(meta, "general.architecture", arch);
    gguf_set_val_str(meta, "general.type", "adapter");
    gguf_set_val_str(meta, "adapter.type", "lora");
    gguf_set_val_f32(meta, "adapter.lora.alpha", alpha);
    rc = o->weights ? ma_add_trained(&l, model, &w, o, rank) : ma_add_tensors(&l, model, o);
    uint64_t bytes = 0;
    /* A few threads at most: adapters are small. */
    if (!rc) rc = gw_write(o->out, meta, &l, o->seed, 2, &bytes);
    if (!rc) {
        int64_t params = gw_list_nelements(&l);
        printf("dream-make-adapter: arch=%s weights=%zu rank=%ld alpha=%g init=%s params=%" PRId64
               " type=%s bytes=%" PRIu64 " path=%s\n",
               arch, l.len / 2, rank, (double)alpha, o->weights ? "trained" : o->zero ? "zero" : "random", params,
               ggml_type_name(o->type), bytes, o->out);
    }
out:
    gw_list_free(&l);
    dw_free(&w);
    if (meta) gguf_free(meta);
    gguf_free(model);
    return rc;
}

int main(int argc, char **argv)
{
    struct ma_opts o;
    gw_quiet_ggml_logs();
    int rc = ma_parse_args(argc, argv, &o);
    if (rc == 1) return 0;
    if (rc == 0) rc = ma_run(&o);
    if (rc) {
        fprintf(stderr, "dream-make-adapter: %s\n", dream_error_last());
        return rc == DREAM_EINVAL ? 2 : 1;
    }
    return 0;
}
