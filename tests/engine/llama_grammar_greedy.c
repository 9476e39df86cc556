/* llama_grammar_greedy.c — the reference for grammar-constrained greedy decoding, written only
 * with llama.cpp's own API (a test helper, as llama-simple is for plain greedy): a sampler chain
 * that masks first — a logit bias of -inf on control and unknown tokens other than
 * end-of-generation, llama.cpp's grammar sampler, then its greedy sampler — over the whole
 * vocabulary at every step.
 *
 * usage: llama_grammar_greedy MODEL N_PREDICT GRAMMAR_FILE PROMPT
 * Tokenizes PROMPT with BOS and special parsing, decodes it in 512-token chunks on one thread,
 * flash attention off, and prints the generated token ids, one per line, then "eog" when an
 * end-of-generation token ended the answer. */
#include <llama.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL N_PREDICT GRAMMAR_FILE PROMPT\n", argv[0]);
        return 2;
    }
    int n_predict = atoi(argv[2]);
    char *gbnf = slurp(argv[3]);
    if (!gbnf) return 2;
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    int n_vocab = llama_vocab_n_tokens(vocab);

    const char *prompt = argv[4];
    int cap = (int)strlen(prompt) + 16;
    llama_token *toks = malloc((size_t)cap * sizeof *toks);
    int n_prompt = llama_tokenize(vocab, prompt, (int)strlen(prompt), toks, cap, true, true);
    if (n_prompt <= 0) return 1;

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n_prompt + n_predict + 8);
    cp.n_batch = cp.n_ubatch = 512;
    cp.n_seq_max = 1;
    cp.n_threads = cp.n_threads_batch = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;

    llama_logit_bias *bias = malloc((size_t)n_vocab * sizeof *bias);
    int n_bias = 0;
    for (int t = 0; t < n_vocab; t++)
        if (!llama_vocab_is_eog(vocab, t) && (llama_vocab_get_attr(vocab, t) & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)))
            bias[n_bias++] = (llama_logit_bias){.token = t, .bias = -INFINITY};
    struct llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(chain, llama_sampler_init_logit_bias(n_vocab, n_bias, bias));
    struct llama_sampler *grammar = llama_sampler_init_grammar(vocab, gbnf, "root");
    if (!grammar) {
        fprintf(stderr, "the grammar does not parse\n");
        return 1;
    }
    llama_sampler_chain_add(chain, grammar);
    llama_sampler_chain_add(chain, llama_sampler_init_greedy());

    for (int at = 0; at < n_prompt; at += 512) {
        int n = n_prompt - at < 512 ? n_prompt - at : 512;
        if (llama_decode(ctx, llama_batch_get_one(toks + at, n))) return 1;
    }
    for (int i = 0; i < n_predict; i++) {
        llama_token t = llama_sampler_sample(chain, ctx, -1);
        if (llama_vocab_is_eog(vocab, t)) {
            printf("eog\n");
            break;
        }
        printf("%d\n", t);
        if (llama_decode(ctx, llama_batch_get_one(&t, 1))) return 1;
    }
    llama_sampler_free(chain);
    llama_free(ctx);
    llama_model_free(model);
    free(bias);
    free(toks);
    free(gbnf);
    return 0;
}
