/* session.c — a llama.cpp context and the exact serial greedy decode. */
#include "engine_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "util/buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct dream_session_params dream_session_default_params(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    struct dream_session_params p = {
        .n_ctx = 0,
        .n_batch = 512,
        .n_threads = cores > 0 ? (int)cores : 1,
        .flash_attn = 0,
        .device_sampling = -1,
    };
    return p;
}

struct dream_gen_params dream_gen_default_params(void)
{
    struct dream_gen_params p = {.max_tokens = 256, .ignore_eog = false, .digest = false};
    return p;
}

int dream_session_new(dream_model *model, const struct dream_session_params *params, dream_session **out)
{
    *out = NULL;
    struct dream_session_params p = params ? *params : dream_session_default_params();
    if (p.n_batch <= 0) p.n_batch = 512;
    if (p.n_threads <= 0) p.n_threads = dream_session_default_params().n_threads;
    int train = llama_model_n_ctx_train(model->model);
    if (p.n_ctx <= 0) p.n_ctx = train > 0 && train < 8192 ? train : 8192;

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)p.n_ctx;
    cp.n_batch = (uint32_t)p.n_batch;
    cp.n_ubatch = (uint32_t)p.n_batch;
    cp.n_seq_max = 1;
    /* equal counts: part of the exact configuration; one for single tokens under flash
     * attention on the CPU (engine_internal.h) */
    cp.n_threads = engine_decode_threads(model, p.flash_attn, p.n_threads);
    cp.n_threads_batch = p.n_threads;
    cp.flash_attn_type = p.flash_attn < 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO
                         : p.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                                        : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;

    dream_session *s = calloc(1, sizeof *s);
    if (!s) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (engine_device_sampling(model, p.device_sampling)) {
        s->samplers = engine_samplers_new(1);
        if (!s->samplers) {
            free(s);
            return dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        cp.samplers = s->samplers;
        cp.n_samplers = 1;
    }
    s->ctx = llama_init_from_model(model->model, cp);
    if (!s->ctx) {
        engine_samplers_free(s->samplers, 1);
        free(s);
        return dream_error_set(DREAM_EMODEL, "llama.cpp could not create a context of %d tokens for %s (out of memory? try a smaller context)",
                               p.n_ctx, model->path);
    }
    /* llama.cpp pads a small context up and caps the batch at the context asked: the prefill's
     * chunks are the batch the context really has (a larger one aborts in llama_decode) */
    int nb = (int)llama_n_batch(s->ctx), nub = (int)llama_n_ubatch(s->ctx);
    if (nub > 0 && nub < nb) nb = nub;
    if (nb > 0 && nb < p.n_batch) p.n_batch = nb;
    s->model = model;
    s->params = p;
    s->n_ctx = (int)llama_n_ctx(s->ctx);
    *out = s;
    return 0;
}

void dream_session_free(dream_session *s)
{
    if (!s) return;
    if (s->ctx) llama_free(s->ctx);
    engine_samplers_free(s->samplers, 1);
    free(s);
}

int dream_session_n_ctx(const dream_session *s) { return s->n_ctx; }

void dream_gen_result_free(struct dream_gen_result *r)
{
    free(r->text);
    free(r->tokens);
    memset(r, 0, sizeof *r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* argmax with the lowest id winning ties (strict >), as llama.cpp's greedy sampler; folds the
 * logits into *digest when digest is non-NULL. */
static dream_token argmax(const float *logits, int n, uint64_t *digest)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    if (!digest) return best;
    uint64_t h = *digest;
    const unsigned char *b = (const unsigned char *)logits;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    *digest = h;
    return best;
}

int engine_logit_check(const dream_model *m, const float *logits, dream_token best)
{
    if (isfinite(logits[best])) return 0;
    return dream_error_set(DREAM_EMODEL,
                           "the model %s gives logits that are not numbers (%s): the file is damaged, or a setting in it is (rope base, norm "
                           "epsilon); re-download or re-make it",
                           m->path, isnan(logits[best]) ? "NaN" : "infinite");
}

int engine_forced_check(const dream_model *m, const struct dream_tokens *forced, const char *whose)
{
    int n_vocab = llama_vocab_n_tokens(m->vocab);
    if (forced->n < 0) return dream_error_set(DREAM_EINVAL, "%s: the forced answer has %d tokens", whose, forced->n);
    for (int k = 0; k < forced->n; k++)
        if (forced->ids[k] < 0 || forced->ids[k] >= n_vocab)
            return dream_error_set(DREAM_EINVAL, "%s: forced token %d at position %d is outside the vocabulary (0..%d)", whose, forced->ids[k], k,
                                   n_vocab - 1);
    return 0;
}

dream_token engine_forced_token(const struct dream_tokens *forced, int k) { return k < forced->n ? forced->ids[k] : LLAMA_TOKEN_NULL; }

int dream_generate(dream_session *s, const dream_token *prompt, int n_prompt, const struct dream_gen_params *params,
                   struct dream_gen_result *out)
{
    memset(out, 0, sizeof *out);
    struct dream_gen_params gp = params ? *params : dream_gen_default_params();
    if (n_prompt <= 0) return dream_error_set(DREAM_EINVAL, "the prompt is empty: give at least one token of input");
    if (gp.max_tokens < 0) return dream_error_set(DREAM_EINVAL, "max_tokens is %d; it must be 0 or more", gp.max_tokens);
    int n_vocab = llama_vocab_n_tokens(s->model->vocab);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= n_vocab)
            return dream_error_set(DREAM_EINVAL, "prompt token %d at position %d is outside the vocabulary (0..%d)", prompt[i], i, n_vocab - 1);
    if (gp.digest && s->samplers)
        return dream_error_set(DREAM_EINVAL, "a logits digest needs the host argmax; make the session with device_sampling = 0");
    if (gp.grammar && gp.ignore_eog)
        return dream_error_set(DREAM_EINVAL, "an answer grammar ends the answer at end-of-generation; it cannot be used with ignore_eog");
    if (gp.forced && gp.grammar)
        return dream_error_set(DREAM_EINVAL, "a forced answer (replay) is not decoded under an answer grammar; give one or the other");
    if (gp.forced) {
        int e = engine_forced_check(s->model, gp.forced, "the call");
        if (e) return e;
    }
    if (n_prompt >= s->n_ctx)
        return dream_error_set(DREAM_ETOOBIG,
                               "the prompt has %d tokens but the context holds %d (and at least one must be left to generate); shorten the input or raise the context size",
                               n_prompt, s->n_ctx);

    struct engine_grammar *grammar = NULL;
    if (gp.grammar) {
        int g = engine_grammar_new(s->model, gp.grammar, &grammar);
        if (g) return g;
    }
    /* the grammar picks from the logits: the device sampler, which leaves none, is set aside */
    bool detached = grammar && s->samplers;
    if (detached) llama_set_sampler(s->ctx, 0, NULL);
    llama_token_data *scratch = NULL;

    llama_memory_clear(llama_get_memory(s->ctx), true);
    int room = s->n_ctx - n_prompt;
    int max_new = gp.max_tokens < room ? gp.max_tokens : room;

    out->tokens = malloc(((size_t)max_new + 1) * sizeof *out->tokens);
    if (!out->tokens) {
        if (detached) llama_set_sampler(s->ctx, 0, s->samplers[0].sampler);
        engine_grammar_free(grammar);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    out->n_prompt = n_prompt;
    uint64_t digest = 1469598103934665603ULL;

    /* Prefill in chunks of n_batch; only the last chunk's last token needs logits. */
    double t0 = now_ms();
    struct llama_batch batch = llama_batch_init(s->params.n_batch, 0, 1);
    int rc = 0;
    for (int at = 0; at < n_prompt && !rc; at += s->params.n_batch) {
        int n = n_prompt - at < s->params.n_batch ? n_prompt - at : s->params.n_batch;
        batch.n_tokens = n;
        for (int i = 0; i < n; i++) {
            batch.token[i] = prompt[at + i];
            batch.pos[i] = at + i;
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = 0;
            batch.logits[i] = at + i == n_prompt - 1;
        }
        int d = llama_decode(s->ctx, batch);
        if (d != 0) rc = dream_error_set(DREAM_EMODEL, "llama_decode failed during prefill at token %d (code %d)", at, d);
    }
    /* llama_decode only queues the work on a GPU: wait for the prefill here, so that its time is
     * prefill_ms and not the first token's share of decode_ms (costs nothing: reading the first
     * token waits for it anyway; on a CPU the work is already done). */
    if (!rc) llama_synchronize(s->ctx);
    double t1 = now_ms();
    out->prefill_ms = t1 - t0;

    int n_gen = 0;
    int last_index = (n_prompt - 1) % s->params.n_batch;
    while (!rc && n_gen < max_new) {
        dream_token t = s->samplers && !detached ? llama_get_sampled_token_ith(s->ctx, last_index) : LLAMA_TOKEN_NULL;
        if (t == LLAMA_TOKEN_NULL) {
            const float *logits = llama_get_logits_ith(s->ctx, last_index);
            if (!logits) {
                rc = dream_error_set(DREAM_EMODEL, "llama.cpp returned no logits at step %d", n_gen);
                break;
            }
            t = argmax(logits, n_vocab, gp.digest ? &digest : NULL);
            if ((rc = engine_logit_check(s->model, logits, t))) break;
            if (grammar && (rc = engine_grammar_pick(grammar, logits, &scratch, &t))) {
                rc = dream_error_wrap(rc, "after %d generated tokens", n_gen);
                break;
            }
        }
        if (gp.forced && (t = engine_forced_token(gp.forced, n_gen)) == LLAMA_TOKEN_NULL) {
            out->stopped_at_eog = true; /* the forced answer is spent: it ends as at end-of-generation */
            break;
        }
        if (!gp.ignore_eog && llama_vocab_is_eog(s->model->vocab, t)) {
            out->stopped_at_eog = true;
            break;
        }
        out->tokens[n_gen++] = t;
        if (grammar) engine_grammar_accept(grammar, t);
        if (n_gen == max_new) break;
        batch.n_tokens = 1;
        batch.token[0] = t;
        batch.pos[0] = n_prompt + n_gen - 1;
        batch.n_seq_id[0] = 1;
        batch.seq_id[0][0] = 0;
        batch.logits[0] = 1;
        last_index = 0;
        int d = llama_decode(s->ctx, batch);
        if (d != 0) rc = dream_error_set(DREAM_EMODEL, "llama_decode failed at generated token %d (code %d)", n_gen, d);
    }
    llama_batch_free(batch);
    if (detached) llama_set_sampler(s->ctx, 0, s->samplers[0].sampler);
    if (grammar) {
        long picks[3] = {0};
        engine_grammar_counts(grammar, picks);
        dream_log(DREAM_LOG_DEBUG, "generate: tokens under the answer grammar: %ld by the argmax, %ld among the 32 best, %ld over the whole vocabulary",
                  picks[0], picks[1], picks[2]);
    }
    engine_grammar_free(grammar);
    free(scratch);
    out->decode_ms = now_ms() - t1;
    out->n_tokens = n_gen;
    out->logits_digest = gp.digest ? digest : 0;
    if (!rc) rc = dream_detokenize(s->model, out->tokens, n_gen, &out->text);
    if (rc) dream_gen_result_free(out);
    return rc;
}
