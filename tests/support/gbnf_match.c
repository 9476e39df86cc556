/* gbnf_match.c — see gbnf_match.h. */
#include "gbnf_match.h"

#include <llama.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void gm_quiet(enum ggml_log_level level, const char *text, void *ud)
{
    (void)ud;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

/* The vocabulary of path, loaded once (a test asks many questions of one model). */
static const struct llama_vocab *gm_vocab(const char *path)
{
    static char loaded[4096];
    static struct llama_model *model;
    if (model && !strcmp(loaded, path)) return llama_model_get_vocab(model);
    if (model) llama_model_free(model);
    llama_log_set(gm_quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    model = llama_model_load_from_file(path, mp);
    snprintf(loaded, sizeof loaded, "%s", path);
    return model ? llama_model_get_vocab(model) : NULL;
}

/* Whether the grammar allows token t next (asked about alone: its logit stays finite). */
static bool gm_allows(struct llama_sampler *g, llama_token t)
{
    llama_token_data d = {.id = t, .logit = 0.0f, .p = 0.0f};
    llama_token_data_array cur = {.data = &d, .size = 1, .selected = -1, .sorted = false};
    llama_sampler_apply(g, &cur);
    return isfinite(d.logit);
}

bool gbnf_match(const char *model, const char *gbnf, const char *text, char *why, size_t cap)
{
    const struct llama_vocab *v = gm_vocab(model);
    if (!v) return snprintf(why, cap, "cannot read the vocabulary of %s", model), false;
    int len = (int)strlen(text), n_cap = len + 8;
    llama_token *toks = malloc((size_t)n_cap * sizeof *toks);
    int n = toks ? llama_tokenize(v, text, len, toks, n_cap, false, false) : -1;
    struct llama_sampler *g = n >= 0 ? llama_sampler_init_grammar(v, gbnf, "root") : NULL;
    bool ok = g != NULL;
    if (!ok) snprintf(why, cap, n < 0 ? "cannot tokenize the text" : "llama.cpp rejects the grammar");
    size_t at = 0; /* bytes of text consumed */
    for (int i = 0; ok && i < n; i++) {
        char piece[256];
        int k = llama_token_to_piece(v, toks[i], piece, sizeof piece, 0, false);
        if (k < 0 || at + (size_t)k > (size_t)len || memcmp(text + at, piece, (size_t)k)) {
            snprintf(why, cap, "the tokens do not spell the text at byte %zu", at);
            ok = false;
        } else if (!gm_allows(g, toks[i])) {
            snprintf(why, cap, "the grammar refuses the text at byte %zu: \"%.40s\"", at, text + at);
            ok = false;
        } else {
            llama_sampler_accept(g, toks[i]);
            at += (size_t)k;
        }
    }
    if (ok && at != (size_t)len) snprintf(why, cap, "the tokens spell %zu of the text's %d bytes", at, len), ok = false;
    if (ok && !gm_allows(g, llama_vocab_eos(v))) snprintf(why, cap, "the grammar does not allow the text to end there"), ok = false;
    if (g) llama_sampler_free(g);
    free(toks);
    return ok;
}
