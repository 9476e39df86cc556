/* grammar.c — greedy decoding under an answer grammar (llama.cpp's grammar sampler).
 *
 * The token chosen is the argmax (lowest id on a tie) over the tokens the grammar allows next.
 * Whether the grammar allows a token does not depend on which other tokens are asked about
 * (llama.cpp walks each candidate through the grammar's stacks alone), so we can ask about the
 * best tokens first and stop at the first allowed one: the argmax alone, then the best
 * GRAMMAR_TOP by logit, and only when all of those are rejected the whole vocabulary. Each
 * answer is the one masking the whole vocabulary first would give; on a 262k vocabulary the
 * first question is about 1 token, not 262,144.
 *
 * The whole vocabulary is asked about by first byte: a token whose text is one byte b is allowed
 * exactly when some continuation starting with b is (a lead byte of a longer character counts
 * as the start of one), so when the grammar rejects that one-byte token it rejects every token
 * whose text starts with b, and those are not asked about. End-of-generation tokens are allowed
 * by the grammar's state, not their text, and are always asked about. */
#include "engine_internal.h"

#include "dream/error.h"
#include "util/utf8.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GRAMMAR_TOP 32

struct engine_grammar {
    dream_model *model;
    struct llama_sampler *sampler;
    int n_vocab;
    long picks[3]; /* tokens picked by the argmax alone, within the best GRAMMAR_TOP, over all */
};

static bool grammar_never_in(const dream_model *m, dream_token t);

/* Builds m's first-byte table (see dream_model) once. */
static int grammar_table(dream_model *m)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    int rc = 0, n = llama_vocab_n_tokens(m->vocab);
    if (!m->gram_by_first) {
        unsigned char *first = malloc((size_t)n + 1);
        dream_token *by = malloc(((size_t)n + 1) * sizeof *by), *eog = malloc(((size_t)n + 1) * sizeof *eog);
        int count[257] = {0}, n_eog = 0;
        if (!first || !by || !eog) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        for (int b = 0; b < 256; b++) m->gram_byte_token[b] = -1;
        for (int t = 0; !rc && t < n; t++) {
            char piece[8];
            /* the text the grammar reads: llama.cpp's own piece, control tokens rendered (a
             * longer piece than the buffer says so, and its first bytes are all we need) */
            int k = llama_token_to_piece(m->vocab, t, piece, sizeof piece, 0, true);
            if (k < 0) {
                char *big = malloc((size_t)-k);
                if (!big) {
                    rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                    break;
                }
                k = llama_token_to_piece(m->vocab, t, big, -k, 0, true);
                piece[0] = k > 0 ? big[0] : 0;
                free(big);
            }
            first[t] = 0; /* 0: no text, or a leading NUL; llama.cpp rejects both */
            if (llama_vocab_is_eog(m->vocab, t)) eog[n_eog++] = t;
            else if (!grammar_never_in(m, t) && k != 0 && piece[0]) {
                first[t] = (unsigned char)piece[0];
                count[first[t]]++;
                if (k == 1 && m->gram_byte_token[first[t]] < 0) m->gram_byte_token[first[t]] = t;
            }
        }
        if (!rc) {
            m->gram_first_start[0] = 0;
            for (int b = 0; b < 256; b++) m->gram_first_start[b + 1] = m->gram_first_start[b] + (b ? count[b] : 0);
            int at[256];
            for (int b = 0; b < 256; b++) at[b] = m->gram_first_start[b];
            for (int t = 0; t < n; t++)
                if (first[t]) by[at[first[t]]++] = t;
            m->gram_by_first = by;
            m->gram_eog = eog;
            m->gram_n_eog = n_eog;
            by = eog = NULL;
        }
        free(first);
        free(by);
        free(eog);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

int engine_grammar_new(dream_model *m, const char *gbnf, struct engine_grammar **out)
{
    *out = NULL;
    if (!gbnf || !*gbnf) return dream_error_set(DREAM_EINVAL, "the answer grammar is empty");
    int t = grammar_table(m);
    if (t) return t;
    struct engine_grammar *g = calloc(1, sizeof *g);
    if (!g) return dream_error_set(DREAM_ENOMEM, "out of memory");
    engine_log_error_clear();
    g->sampler = llama_sampler_init_grammar(m->vocab, gbnf, "root");
    if (!g->sampler) {
        free(g);
        const char *why = engine_log_error_last();
        size_t n = strcspn(gbnf, "\n"), shown = utf8_prefix(gbnf, n, 60);
        return dream_error_set(DREAM_EINVAL, "llama.cpp rejected the answer grammar (%s; grammar: \"%.*s%s\")",
                               *why ? why : "a syntax error, printed above", (int)shown, gbnf, gbnf[shown] ? "..." : "");
    }
    g->model = m;
    g->n_vocab = llama_vocab_n_tokens(m->vocab);
    *out = g;
    return 0;
}

void engine_grammar_free(struct engine_grammar *g)
{
    if (!g) return;
    llama_sampler_free(g->sampler);
    free(g);
}

/* Tokens an answer may never hold: control and unknown tokens render as nothing in the answer
 * text, while the grammar would read their literal text (Gemma 4's <|"|> as a quote), so the
 * text and the grammar's view of it would part. End-of-generation is the grammar's to allow. */
static bool grammar_never_in(const dream_model *m, dream_token t)
{
    if (llama_vocab_is_eog(m->vocab, t)) return false;
    if (m->untrained && m->untrained[t]) return true; /* the model never learned it (tokenize.c) */
    return (llama_vocab_get_attr(m->vocab, t) & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)) != 0;
}

static bool grammar_never(const struct engine_grammar *g, dream_token t) { return grammar_never_in(g->model, t); }

/* Asks the grammar about cand[0..n) (ids set): afterwards cand[i].logit is finite exactly when
 * the grammar allows cand[i].id next. */
static void grammar_ask(struct engine_grammar *g, llama_token_data *cand, size_t n)
{
    for (size_t i = 0; i < n; i++) cand[i].logit = 0.0f;
    llama_token_data_array arr = {.data = cand, .size = n, .selected = -1, .sorted = false};
    llama_sampler_apply(g->sampler, &arr);
}

/* True when (la, a) ranks before (lb, b): a higher logit, or the same and a lower id. */
static bool ranks_before(float la, int a, float lb, int b) { return la > lb || (la == lb && a < b); }

int engine_grammar_pick(struct engine_grammar *g, const float *logits, llama_token_data **scratch, dream_token *out)
{
    int n = g->n_vocab;
    /* 1. the argmax alone */
    int best = 0;
    for (int v = 1; v < n; v++)
        if (logits[v] > logits[best]) best = v;
    int bad = engine_logit_check(g->model, logits, best);
    if (bad) return bad;
    llama_token_data one = {.id = best};
    if (!grammar_never(g, best)) {
        grammar_ask(g, &one, 1);
        if (isfinite(one.logit)) {
            g->picks[0]++;
            *out = best;
            return 0;
        }
    }
    /* 2. the best GRAMMAR_TOP tokens in rank order (insertion into a short sorted list) */
    llama_token_data top[GRAMMAR_TOP];
    int k = 0;
    for (int v = 0; v < n; v++) {
        if (k == GRAMMAR_TOP && !ranks_before(logits[v], v, top[k - 1].p, top[k - 1].id)) continue;
        if (grammar_never(g, v)) continue;
        int j = k < GRAMMAR_TOP ? k++ : k - 1;
        while (j > 0 && ranks_before(logits[v], v, top[j - 1].p, top[j - 1].id)) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = (llama_token_data){.id = v, .p = logits[v]}; /* p holds the logit while logit is asked */
    }
    grammar_ask(g, top, (size_t)k);
    for (int i = 0; i < k; i++)
        if (isfinite(top[i].logit)) {
            g->picks[1]++;
            *out = top[i].id;
            return 0;
        }
    if (k < GRAMMAR_TOP) goto dead_end; /* that was every token an answer may hold */
    /* 3. the whole vocabulary: first the one-byte tokens, then the tokens of every first byte
     * the grammar did not reject, and the end-of-generation tokens */
    if (!*scratch && !(*scratch = malloc(((size_t)n + 256) * sizeof **scratch))) return dream_error_set(DREAM_ENOMEM, "out of memory");
    llama_token_data *all = *scratch;
    const dream_model *md = g->model;
    size_t m = 0;
    for (int b = 1; b < 256; b++)
        if (md->gram_byte_token[b] >= 0) all[m++] = (llama_token_data){.id = md->gram_byte_token[b]};
    grammar_ask(g, all, m);
    bool open[256] = {false};
    for (int b = 1; b < 256; b++) open[b] = md->gram_byte_token[b] < 0; /* no probe: ask them all */
    for (size_t i = 0; i < m; i++)
        if (isfinite(all[i].logit)) {
            char c;
            llama_token_to_piece(md->vocab, all[i].id, &c, 1, 0, true);
            open[(unsigned char)c] = true;
        }
    m = 0;
    for (int b = 1; b < 256; b++)
        for (int j = open[b] ? md->gram_first_start[b] : 0; open[b] && j < md->gram_first_start[b + 1]; j++)
            all[m++] = (llama_token_data){.id = md->gram_by_first[j]};
    for (int j = 0; j < md->gram_n_eog; j++) all[m++] = (llama_token_data){.id = md->gram_eog[j]};
    grammar_ask(g, all, m);
    int pick = -1;
    for (size_t i = 0; i < m; i++)
        if (isfinite(all[i].logit) && (pick < 0 || ranks_before(logits[all[i].id], all[i].id, logits[pick], pick))) pick = all[i].id;
    if (pick >= 0) {
        g->picks[2]++;
        *out = pick;
        return 0;
    }
dead_end:
    return dream_error_set(DREAM_EFORMAT, "the answer grammar allows no token here (a grammar that can dead-end; fix the grammar)");
}

void engine_grammar_accept(struct engine_grammar *g, dream_token t) { llama_sampler_accept(g->sampler, t); }

void engine_grammar_counts(const struct engine_grammar *g, long picks[3])
{
    for (int i = 0; i < 3; i++) picks[i] += g ? g->picks[i] : 0;
}
