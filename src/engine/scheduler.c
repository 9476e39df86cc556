/* scheduler.c — continuous batching of independent greedy generations on one context.
 *
 * One llama.cpp context with per-sequence KV streams serves `width` sequences (seq ids
 * 0..width-1) and `prefix_slots` cached prefixes (seq ids width..). Why streams and not one
 * unified pool: in a pool, a sequence's cells sit at other indices than they would alone, and
 * the attention sums then round differently, so greedy answers drift from the serial decode.
 * In its own stream a sequence's cells are where the serial decode puts them.
 *
 * A step decodes a token for every decoding sequence (one token per stream, as in the serial
 * decode) and then prefill chunks, each its own llama_decode and aligned as the serial decode
 * aligns them, so every row is computed by the same kernels on the same inputs.
 * tests/engine/test_scheduler.c checks token identity at widths 1–16.
 *
 * Length-aware waves (issue 16): llama.cpp sizes a ubatch's KV view by its fullest stream, so
 * every sequence of a ubatch attends over the longest one's cells: one 6k-token call made each
 * short call beside it cost a 6k-token decode. A step's decode is therefore cut into waves, runs
 * of consecutive ids with similar KV lengths, each its own llama_decode, wherever the attention
 * saved outweighs one more pass over the weights (wave_cells); compaction refills freed slots so
 * that similar lengths stay adjacent. A stream's cells do not depend on its wave, so neither do
 * the answers.
 *
 * Outside the exact configuration (kv_unified, for GPUs) all sequences share one KV pool and a
 * step is ONE llama_decode: a token for every decoding sequence, then prompt tokens of admitted
 * sequences up to the step budget, as llama-server packs its slots. */
#include "engine_internal.h"

#include "dream/error.h"
#include "dream/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum slot_state { SLOT_IDLE, SLOT_PREFILL, SLOT_DECODE };

struct slot {
    enum slot_state state;
    int req;          /* request index */
    int pos;          /* next position to fill */
    int max_new;
    int logit_index;  /* this step's decode-batch index, or -1 */
    dream_token next; /* the token to feed at the next decode */
};

struct prefix_entry {
    dream_token *tokens;
    int len; /* 0 = free */
    long last_used;
    const dream_adapter *adapter; /* the adapter set it was computed under */
    float scale;
};

struct dream_batcher {
    dream_model *model;
    struct llama_context *ctx;
    struct dream_batch_params p;
    struct slot *slots;
    struct prefix_entry *prefixes;
    long clock;
    struct dream_batch_stats stats;
    const dream_adapter *adapter; /* the current adapter set */
    float scale;
    bool fa_cpu; /* flash attention on the CPU: prefixes cut and reused by its rules */
    struct llama_sampler_seq_config *samplers; /* device greedy sampling for seqs 0..width-1, or NULL */
    bool samplers_detached;                    /* for a run that picks its own tokens */
    /* the running dream_batcher_run's per-request answer grammars (NULL: none) and statuses */
    struct engine_grammar **grammar;
    int *status;
    llama_token_data *scratch; /* the grammar's vocabulary-sized buffer, kept across runs */
};

struct dream_batch_params dream_batch_default_params(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    struct dream_batch_params p = {
        .width = 8,
        .seq_ctx = 4096,
        .step_tokens = -1,
        .n_threads = cores > 0 ? (int)cores : 1,
        .flash_attn = 0,
        .prefix_reuse = true,
        .prefix_min = 64,
        .prefix_slots = -1,
        .kv_unified = false,
        .device_sampling = -1,
        .compact = true,
        .wave_cells = -1,
    };
    return p;
}

int dream_batcher_new(dream_model *model, const struct dream_batch_params *params, dream_batcher **out)
{
    *out = NULL;
    struct dream_batch_params p = params ? *params : dream_batch_default_params();
    if (p.prefix_slots < 0 || p.prefix_slots > 64) /* auto: one per sequence, 2..16 */
        p.prefix_slots = p.width < 2 ? 2 : p.width > 16 ? 16 : p.width;
    if (!p.prefix_reuse) p.prefix_slots = 0;
    if (p.width < 1 || p.width + p.prefix_slots > 256)
        return dream_error_set(DREAM_EINVAL, "batch width %d (+%d prefix slots) is outside 1..256", p.width, p.prefix_slots);
    if (p.step_tokens < 2) p.step_tokens = model->on_gpu ? DREAM_STEP_TOKENS_GPU : DREAM_STEP_TOKENS_CPU;
    if (p.step_tokens < p.width) p.step_tokens = p.width;
    if (p.n_threads <= 0) p.n_threads = dream_batch_default_params().n_threads;
    if (p.seq_ctx <= 0) p.seq_ctx = 4096;
    if (p.prefix_min < 1) p.prefix_min = 1;
    int n_seq = p.width + p.prefix_slots;

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)p.seq_ctx * (uint32_t)n_seq;
    cp.n_batch = (uint32_t)p.step_tokens;
    cp.n_ubatch = (uint32_t)p.step_tokens;
    cp.n_seq_max = (uint32_t)n_seq;
    cp.kv_unified = p.kv_unified;
    cp.n_threads = engine_decode_threads(model, p.flash_attn, p.n_threads); /* as the session's */
    cp.n_threads_batch = p.n_threads;
    cp.flash_attn_type = p.flash_attn < 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO
                         : p.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                                        : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;

    dream_batcher *b = calloc(1, sizeof *b);
    if (!b) return dream_error_set(DREAM_ENOMEM, "out of memory");
    b->slots = calloc((size_t)p.width, sizeof *b->slots);
    b->prefixes = calloc((size_t)p.prefix_slots + 1, sizeof *b->prefixes);
    if (engine_device_sampling(model, p.device_sampling)) {
        b->samplers = engine_samplers_new(p.width);
        cp.samplers = b->samplers;
        cp.n_samplers = b->samplers ? (size_t)p.width : 0;
    }
    b->ctx = b->slots && b->prefixes ? llama_init_from_model(model->model, cp) : NULL;
    if (!b->ctx) {
        dream_batcher_free(b);
        return dream_error_set(DREAM_EMODEL, "llama.cpp could not create a batch context (%d sequences of %d cells) for %s",
                               n_seq, p.seq_ctx, model->path);
    }
    b->model = model;
    b->fa_cpu = engine_fa_cpu(model, p.flash_attn);
    /* With streams each holds seq_ctx cells; a unified pool holds them all, and each sequence
     * is still held to the seq_ctx it asked for, so the pool always has room for every one. */
    if (!p.kv_unified) p.seq_ctx = (int)llama_n_ctx_seq(b->ctx);
    if (p.wave_cells < 0) p.wave_cells = model->on_gpu ? DREAM_WAVE_CELLS_GPU : DREAM_WAVE_CELLS_CPU;
    b->p = p;
    *out = b;
    return 0;
}

void dream_batcher_free(dream_batcher *b)
{
    if (!b) return;
    if (b->ctx) llama_free(b->ctx);
    engine_samplers_free(b->samplers, b->p.width);
    for (int i = 0; b->prefixes && i < b->p.prefix_slots; i++) free(b->prefixes[i].tokens);
    free(b->prefixes);
    free(b->slots);
    free(b->scratch);
    free(b);
}

struct dream_batch_stats dream_batcher_stats(const dream_batcher *b) { return b->stats; }

struct dream_batch_params dream_batcher_params(const dream_batcher *b) { return b->p; }

int dream_batcher_set_adapter(dream_batcher *b, dream_adapter *adapter, float scale)
{
    if (!adapter) scale = 0.0f;
    int rc = engine_set_adapter(b->ctx, adapter, scale);
    if (rc) return rc;
    b->adapter = scale != 0.0f ? adapter : NULL;
    b->scale = scale;
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void batch_add(struct llama_batch *bt, dream_token t, int pos, int seq, bool logits)
{
    int i = bt->n_tokens++;
    bt->token[i] = t;
    bt->pos[i] = pos;
    bt->n_seq_id[i] = 1;
    bt->seq_id[i][0] = seq;
    bt->logits[i] = logits;
}

/* The end of the prefill chunk that starts at pos: the next multiple of the step size, as the
 * serial decode cuts its prefill. */
static int chunk_end(const dream_batcher *b, int pos, int n_prompt)
{
    int end = (pos / b->p.step_tokens + 1) * b->p.step_tokens;
    return end < n_prompt ? end : n_prompt;
}

/* Prefills tokens[from..to) of seq in serial-aligned chunks; logits for the last token when
 * want_logits (then the logits are at batch index *logit_index of the last call). */
static int prefill(dream_batcher *b, struct llama_batch *bt, const dream_token *tokens, int from, int to, int seq,
                   bool want_logits, int *logit_index)
{
    double t0 = now_ms();
    for (int at = from; at < to;) {
        int end = chunk_end(b, at, to);
        bt->n_tokens = 0;
        for (int i = at; i < end; i++) batch_add(bt, tokens[i], i, seq, want_logits && i == to - 1);
        int d = llama_decode(b->ctx, *bt);
        if (d != 0) return dream_error_set(DREAM_EMODEL, "llama_decode failed prefilling positions %d..%d (code %d)", at, end, d);
        b->stats.prefill_tokens += end - at;
        if (logit_index) *logit_index = end - at - 1;
        at = end;
    }
    b->stats.prefill_ms += now_ms() - t0;
    return 0;
}

static void prefix_drop(dream_batcher *b, int k)
{
    llama_memory_seq_rm(llama_get_memory(b->ctx), b->p.width + k, -1, -1);
    free(b->prefixes[k].tokens);
    b->prefixes[k] = (struct prefix_entry){0};
}

/* The longest cached prefix that is a proper prefix of prompt (a token is left to produce the
 * first logits); -1 when none. */
static int prefix_find(dream_batcher *b, const struct dream_tokens *prompt)
{
    int best = -1;
    for (int k = 0; k < b->p.prefix_slots; k++) {
        struct prefix_entry *e = &b->prefixes[k];
        if (!e->len || e->len >= prompt->n || e->adapter != b->adapter || e->scale != b->scale) continue;
        if (memcmp(e->tokens, prompt->ids, (size_t)e->len * sizeof *e->tokens)) continue;
        if (best < 0 || e->len > b->prefixes[best].len) best = k;
    }
    return best;
}

/* Under flash attention on the CPU a row's sums depend on its chunk's length class
 * (engine_internal.h): one token, a few rows, or ENGINE_FA_TILE_ROWS and more. */
static int fa_class(int rows)
{
    return rows <= 1 ? 0 : rows < ENGINE_FA_TILE_ROWS ? 1 : 2;
}

/* The unit prefixes are cut in under flash attention on the CPU: a tile, or the whole step
 * when the step is not a multiple of one (then every cut falls where the serial chunks do). */
static int fa_unit(const dream_batcher *b)
{
    return b->p.step_tokens % ENGINE_FA_TILE_ROWS ? b->p.step_tokens : ENGINE_FA_TILE_ROWS;
}

/* How much of a cached prefix of have tokens a prompt of n tokens reuses: all of it, except
 * under flash attention on the CPU, where the chunk left after it must have the length class
 * of the serial chunk holding the same rows. Prefixes are then cut in whole units
 * (plan_prefixes), so the prefix's own last chunk is tiled as the serial one is, and backing
 * off a unit at a time ends, at worst, at the serial chunk's start. */
static int fa_reuse(const dream_batcher *b, int have, int n)
{
    if (!b->fa_cpu) return have;
    int c = b->p.step_tokens, u = fa_unit(b), r = have - have % u;
    int start = r / c * c, end = start + c < n ? start + c : n;
    while (r > start && fa_class(end - r) != fa_class(end - start)) r -= u; /* u divides r - start */
    return r;
}

/* Computes tokens[0..len) once into a prefix stream, evicting the least recently used. */
static int prefix_make(dream_batcher *b, struct llama_batch *bt, const dream_token *tokens, int len)
{
    int k = 0;
    for (int i = 0; i < b->p.prefix_slots; i++) {
        if (!b->prefixes[i].len) {
            k = i;
            break;
        }
        if (b->prefixes[i].last_used < b->prefixes[k].last_used) k = i;
    }
    if (b->prefixes[k].len) prefix_drop(b, k);
    dream_token *copy = malloc((size_t)len * sizeof *copy);
    if (!copy) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memcpy(copy, tokens, (size_t)len * sizeof *copy);
    int rc = prefill(b, bt, tokens, 0, len, b->p.width + k, false, NULL);
    if (rc) {
        free(copy);
        llama_memory_seq_rm(llama_get_memory(b->ctx), b->p.width + k, -1, -1);
        return rc;
    }
    b->prefixes[k] = (struct prefix_entry){.tokens = copy, .len = len, .last_used = ++b->clock, .adapter = b->adapter, .scale = b->scale};
    return 0;
}

static int lcp(const struct dream_tokens *a, const struct dream_tokens *c)
{
    int k = 0;
    while (k < a->n && k < c->n && a->ids[k] == c->ids[k]) k++;
    return k;
}

/* Orders request indices by their prompts' tokens, so prompts sharing a prefix are adjacent
 * (qsort_r comparator; ctx is the prompts array). */
static int cmp_prompt(const void *x, const void *y, void *ctx)
{
    const struct dream_tokens *prompts = ctx;
    const struct dream_tokens *a = &prompts[*(const int *)x], *c = &prompts[*(const int *)y];
    int k = lcp(a, c);
    if (k < a->n && k < c->n) return a->ids[k] < c->ids[k] ? -1 : 1;
    return (a->n > c->n) - (a->n < c->n);
}

/* Chooses the prefixes worth computing once in this run: groups of adjacent (sorted) prompts
 * sharing at least prefix_min tokens, the best by tokens saved, up to prefix_slots of them. */
static int plan_prefixes(dream_batcher *b, struct llama_batch *bt, const struct dream_tokens *prompts, const int *status, int n)
{
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    if (!idx) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!status[i]) idx[m++] = i;
    qsort_r(idx, (size_t)m, sizeof *idx, cmp_prompt, (void *)prompts);
    int made = 0, rc = 0;
    for (int round = 0; round < b->p.prefix_slots && !rc; round++) {
        long best_gain = 0;
        int best_start = -1, best_len = 0;
        for (int s = 0; s + 1 < m; s++) {
            int len = 1 << 30;
            for (int e = s + 1; e < m; e++) {
                int k = lcp(&prompts[idx[e - 1]], &prompts[idx[e]]);
                if (k < len) len = k;
                /* a proper prefix of every member, and not a 1-token prefill after it */
                for (int q = s; q <= e; q++)
                    if (prompts[idx[q]].n - 1 < len) len = prompts[idx[q]].n - 1;
                if (len % b->p.step_tokens == b->p.step_tokens - 1) len--;
                if (b->fa_cpu) len -= len % fa_unit(b); /* whole tiles (fa_reuse) */
                if (len < b->p.prefix_min) break;
                long gain = (long)len * (e - s);
                struct dream_tokens head = {.ids = prompts[idx[s]].ids, .n = len + 1};
                int have = prefix_find(b, &head);
                if (have >= 0 && b->prefixes[have].len >= len) gain = 0; /* already cached */
                if (gain > best_gain) {
                    best_gain = gain;
                    best_start = s;
                    best_len = len;
                }
            }
        }
        if (best_start < 0) break;
        rc = prefix_make(b, bt, prompts[idx[best_start]].ids, best_len);
        made++;
    }
    free(idx);
    if (made) dream_log(DREAM_LOG_DEBUG, "batch: %d shared prefixes computed", made);
    return rc;
}

/* Frees request req's grammar, if any, counting its picks. */
static void grammar_release(dream_batcher *b, int req)
{
    if (!b->grammar || !b->grammar[req]) return;
    engine_grammar_counts(b->grammar[req], b->stats.grammar_picks);
    engine_grammar_free(b->grammar[req]);
    b->grammar[req] = NULL;
}

static int finish(dream_batcher *b, struct slot *s, const struct dream_gen_params *gp, struct dream_gen_result *res, int n_gen)
{
    llama_memory_seq_rm(llama_get_memory(b->ctx), (int)(s - b->slots), -1, -1);
    res->n_tokens = n_gen;
    s->state = SLOT_IDLE;
    grammar_release(b, s->req);
    int rc = dream_detokenize(b->model, res->tokens, n_gen, &res->text);
    if (!rc && gp->on_done) gp->on_done(gp->hook_ud, s->req);
    return rc;
}

/* Takes the argmax at batch index i for slot s; finishes the request or moves it to decode. */
static int take_token(dream_batcher *b, struct slot *s, int i, const struct dream_gen_params *gp, struct dream_gen_result *out,
                      int *n_gen, int *running)
{
    dream_token best = b->samplers && !b->samplers_detached ? llama_get_sampled_token_ith(b->ctx, i) : LLAMA_TOKEN_NULL;
    if (best == LLAMA_TOKEN_NULL) {
        const float *logits = llama_get_logits_ith(b->ctx, i);
        if (!logits) return dream_error_set(DREAM_EMODEL, "llama.cpp returned no logits for a batched sequence");
        int n_vocab = llama_vocab_n_tokens(b->model->vocab);
        best = 0;
        struct engine_grammar *g = b->grammar ? b->grammar[s->req] : NULL;
        if (g) {
            int e = engine_grammar_pick(g, logits, &b->scratch, &best);
            if (e) { /* this request fails alone; the run goes on */
                b->status[s->req] = dream_error_wrap(e, "request %d, after %d generated tokens", s->req, n_gen[s->req]);
                dream_log(DREAM_LOG_WARN, "%s", dream_error_last());
                (*running)--;
                llama_memory_seq_rm(llama_get_memory(b->ctx), (int)(s - b->slots), -1, -1);
                s->state = SLOT_IDLE;
                grammar_release(b, s->req);
                if (gp->on_done) gp->on_done(gp->hook_ud, s->req);
                return 0;
            }
        } else if (gp->choose) best = gp->choose(gp->hook_ud, s->req, logits, n_vocab);
        else {
            for (int v = 1; v < n_vocab; v++)
                if (logits[v] > logits[best]) best = v;
            int e = engine_logit_check(b->model, logits, best);
            if (e) return e; /* the model, not this request: the whole run fails */
        }
    }
    struct dream_gen_result *res = &out[s->req];
    if (gp->forced && (best = engine_forced_token(&gp->forced[s->req], n_gen[s->req])) == LLAMA_TOKEN_NULL) {
        res->stopped_at_eog = true; /* the forced answer is spent: it ends as at end-of-generation */
        (*running)--;
        return finish(b, s, gp, res, n_gen[s->req]);
    }
    bool eog = !gp->ignore_eog && llama_vocab_is_eog(b->model->vocab, best), stop = false;
    if (eog) res->stopped_at_eog = true;
    else {
        res->tokens[n_gen[s->req]++] = best;
        if (b->grammar && b->grammar[s->req]) engine_grammar_accept(b->grammar[s->req], best);
        b->stats.generated++;
        if (gp->on_token) stop = !gp->on_token(gp->hook_ud, s->req, best);
    }
    if (eog || stop || n_gen[s->req] >= s->max_new) {
        (*running)--;
        return finish(b, s, gp, res, n_gen[s->req]);
    }
    s->state = SLOT_DECODE;
    s->next = best;
    return 0;
}

/* Starts a batch with one token for every decoding sequence of slots [from, to) (its
 * logit_index set; -1 for every other slot); returns how many. */
static int add_decode_tokens(dream_batcher *b, struct llama_batch *bt, int from, int to)
{
    bt->n_tokens = 0;
    for (int k = 0; k < b->p.width; k++) {
        struct slot *s = &b->slots[k];
        s->logit_index = -1;
        if (s->state != SLOT_DECODE || k < from || k >= to) continue;
        s->logit_index = bt->n_tokens;
        batch_add(bt, s->next, s->pos++, k, true);
    }
    return bt->n_tokens;
}

/* The KV cells llama.cpp's view of a decoding slot's stream spans when it decodes its next
 * token (at s->pos): the used cells padded to 256, at least 256 (llama_kv_cache::get_n_kv). */
static long slot_cells(const dream_batcher *b, const struct slot *s)
{
    long n = ((long)s->pos + 1 + 255) / 256 * 256;
    return n > b->p.seq_ctx ? b->p.seq_ctx : n;
}

/* Cuts the decoding sequences of slots[0..width) into waves, each a run of consecutive
 * decoding slot ids (the only sequences llama.cpp puts in one ubatch). A run is cut where the
 * waves' attention (each wave's sequences times its fullest stream's cells) plus wave_cells per
 * wave is least: a dynamic program over the run, exact for any order of lengths. Writes the
 * waves' bounds [start[w], end[w]) (NULL: not wanted) and returns that least cost in cells;
 * wave_cells 0 keeps each run whole. *n_waves: how many. */
static long plan_waves(const dream_batcher *b, const struct slot *slots, int *start, int *end, int *n_waves_out)
{
    int n_waves = 0, width = b->p.width;
    long W = b->p.wave_cells, total = 0;
    for (int lo = 0; lo < width;) {
        if (slots[lo].state != SLOT_DECODE) {
            lo++;
            continue;
        }
        int hi = lo;
        while (hi < width && slots[hi].state == SLOT_DECODE) hi++;
        if (W <= 0) {
            long widest = 0;
            for (int k = lo; k < hi; k++)
                if (slot_cells(b, &slots[k]) > widest) widest = slot_cells(b, &slots[k]);
            total += widest * (hi - lo);
            if (start) start[n_waves] = lo, end[n_waves] = hi;
            n_waves++;
            lo = hi;
            continue;
        }
        /* best[j]: cheapest cover of [lo, lo + j); cut[j]: where its last wave starts */
        long best[257];
        int cut[257];
        best[0] = 0;
        for (int j = 1; j <= hi - lo; j++) {
            long widest = 0;
            best[j] = -1;
            for (int i = j - 1; i >= 0; i--) { /* last wave [lo + i, lo + j) */
                long c = slot_cells(b, &slots[lo + i]);
                if (c > widest) widest = c;
                long cost = best[i] + W + (long)(j - i) * widest;
                if (best[j] < 0 || cost < best[j]) best[j] = cost, cut[j] = i;
            }
        }
        total += best[hi - lo];
        int first = n_waves;
        for (int j = hi - lo; j > 0; j = cut[j], n_waves++)
            if (start) start[n_waves] = lo + cut[j], end[n_waves] = lo + j;
        for (int a = first, z = n_waves - 1; start && a < z; a++, z--) { /* back into slot order */
            int t = start[a];
            start[a] = start[z], start[z] = t;
            t = end[a];
            end[a] = end[z], end[z] = t;
        }
        lo = hi;
    }
    *n_waves_out = n_waves;
    return total;
}

/* One token for every decoding sequence: one llama_decode per wave (plan_waves), or one for
 * all when waves are off (llama.cpp then makes a ubatch of each run of consecutive ids).
 * Counts the step's ubatches and the cells they attend over. *n_decode: tokens decoded. */
static int decode_step(dream_batcher *b, struct llama_batch *bt, const struct dream_gen_params *gp, struct dream_gen_result *out, int *n_gen,
                       int *running, int *n_decode)
{
    int start[256], end[256], n_waves = 0;
    long cost = plan_waves(b, b->slots, start, end, &n_waves);
    *n_decode = 0;
    if (n_waves == 0) return 0;
    double t0 = now_ms();
    /* the plan's cost is the cells its waves attend over, plus wave_cells a wave when on */
    b->stats.decode_cells += cost - (b->p.wave_cells > 0 ? b->p.wave_cells * (long)n_waves : 0);
    for (int w = 0; w < n_waves; w++)
        for (int k = start[w]; k < end[w]; k++) b->stats.decode_cells_own += slot_cells(b, &b->slots[k]);
    b->stats.decode_runs += n_waves;
    b->stats.steps++;
    /* waves off: the whole step in one call */
    int calls = b->p.wave_cells > 0 ? n_waves : 1;
    int rc = 0;
    for (int w = 0; w < calls && !rc; w++) {
        int from = b->p.wave_cells > 0 ? start[w] : 0, to = b->p.wave_cells > 0 ? end[w] : b->p.width;
        int n = add_decode_tokens(b, bt, from, to);
        *n_decode += n;
        double t1 = now_ms();
        int d = llama_decode(b->ctx, *bt);
        double t2 = now_ms();
        if (d != 0) rc = dream_error_set(DREAM_EMODEL, "llama_decode failed in a decode step of %d sequences (code %d)", n, d);
        for (int k = from; k < to && !rc; k++)
            if (b->slots[k].logit_index >= 0) rc = take_token(b, &b->slots[k], b->slots[k].logit_index, gp, out, n_gen, running);
        b->stats.step_call_ms += t2 - t1;
        b->stats.step_wait_ms += now_ms() - t2;
    }
    b->stats.step_ms += now_ms() - t0;
    return rc;
}

/* One step of the unified layout: a token for every decoding sequence, then prompt tokens of
 * prefilling sequences (in slot order) up to the step budget, all in one llama_decode. */
static int unified_step(dream_batcher *b, struct llama_batch *bt, const struct dream_tokens *prompts, const struct dream_gen_params *gp,
                        struct dream_gen_result *out, int *n_gen, int *running)
{
    double t0 = now_ms();
    int n_decode = add_decode_tokens(b, bt, 0, b->p.width);
    for (int k = 0; k < b->p.width && bt->n_tokens < b->p.step_tokens; k++) {
        struct slot *s = &b->slots[k];
        if (s->state != SLOT_PREFILL) continue;
        const struct dream_tokens *pr = &prompts[s->req];
        int take = pr->n - s->pos, room = b->p.step_tokens - bt->n_tokens;
        if (take > room) take = room;
        for (int i = s->pos; i < s->pos + take; i++) batch_add(bt, pr->ids[i], i, k, i == pr->n - 1);
        s->pos += take;
        b->stats.prefill_tokens += take;
        if (s->pos == pr->n) s->logit_index = bt->n_tokens - 1;
    }
    if (bt->n_tokens == 0) return 0;
    int d = llama_decode(b->ctx, *bt);
    if (d != 0)
        return dream_error_set(DREAM_EMODEL, "llama_decode failed in a step of %d tokens (%d decoding) (code %d)", bt->n_tokens, n_decode, d);
    int rc = 0;
    for (int k = 0; k < b->p.width && !rc; k++)
        if (b->slots[k].logit_index >= 0) rc = take_token(b, &b->slots[k], b->slots[k].logit_index, gp, out, n_gen, running);
    if (n_decode > 0) {
        b->stats.steps++;
        b->stats.step_ms += now_ms() - t0;
    } else b->stats.prefill_ms += now_ms() - t0;
    return rc;
}

/* Moves the sequence of slot from into the free slot to (the stream buffer is copied whole;
 * cells keep their indices, so answers are unchanged). */
static void slot_move(dream_batcher *b, int from, int to)
{
    llama_memory_t mem = llama_get_memory(b->ctx);
    llama_memory_seq_cp(mem, from, to, -1, -1);
    llama_memory_seq_rm(mem, from, -1, -1);
    b->slots[to] = b->slots[from];
    b->slots[from] = (struct slot){.state = SLOT_IDLE, .logit_index = -1};
    b->stats.moves++;
}

/* With waves on: which decoding slot above hole should fill it. The highest one (top) fills it
 * in one move; any other, x, takes two (x into the hole, top into x's place) and is chosen only
 * when the layout it leaves decodes in cheaper waves (plan_waves) at every later step: a long
 * call moving down beside the other long ones, say, instead of a short call landing among them.
 * Widths above 64 keep the one move (the search is cubic in the width). */
static int fill_choice(const dream_batcher *b, int hole, int top)
{
    int width = b->p.width, best = top, n;
    if (b->p.wave_cells <= 0 || width > 64) return top;
    struct slot trial[64];
    memcpy(trial, b->slots, (size_t)width * sizeof *trial);
    trial[hole] = trial[top];
    trial[top].state = SLOT_IDLE;
    long best_cost = plan_waves(b, trial, NULL, NULL, &n);
    for (int x = hole + 1; x < top; x++) {
        if (b->slots[x].state != SLOT_DECODE) continue;
        memcpy(trial, b->slots, (size_t)width * sizeof *trial);
        trial[hole] = trial[x];
        trial[x] = trial[top];
        trial[top].state = SLOT_IDLE;
        long cost = plan_waves(b, trial, NULL, NULL, &n);
        if (cost < best_cost) best_cost = cost, best = x;
    }
    return best;
}

/* Keeps the layout [decoding][prefilling][idle] by moving sequences down into free slots.
 * llama.cpp puts only consecutive sequence ids of a per-stream cache into one ubatch, and every
 * ubatch reads all the weights again: a decode step over slots {0, 5, 9} costs three weight
 * passes, where {0, 1, 2} costs one. A move copies the whole stream buffer and happens only when
 * a sequence finishes. With waves on, the sequence that fills a hole is chosen so that sequences
 * of similar length stay next to each other (fill_choice). */
static void compact(dream_batcher *b)
{
    for (;;) {
        int hole = -1, from = -1;
        for (int k = 0; k < b->p.width && hole < 0; k++)
            if (b->slots[k].state == SLOT_IDLE) hole = k;
        if (hole < 0) return;
        for (int j = b->p.width - 1; j > hole && from < 0; j--) /* the highest decoding one above */
            if (b->slots[j].state == SLOT_DECODE) from = j;
        if (from >= 0) {
            int x = fill_choice(b, hole, from);
            if (x != from) {
                slot_move(b, x, hole);
                hole = x;
            }
        }
        for (int j = b->p.width - 1; j > hole && from < 0; j--) /* else the highest prefilling one */
            if (b->slots[j].state == SLOT_PREFILL) from = j;
        if (from < 0) return;
        slot_move(b, from, hole);
    }
}

/* Checks requests [from, to) alone (a bad one fails alone, its status set and its message
 * logged) and readies their outputs; returns how many can run. */
static int check_requests(dream_batcher *b, const struct dream_tokens *prompts, const int *max_tokens, const struct dream_gen_params *params,
                          struct dream_gen_result *out, int *status, int from, int to)
{
    struct dream_gen_params gp = *params;
    int n_vocab = llama_vocab_n_tokens(b->model->vocab);
    int waiting = 0;
    memset(out + from, 0, (size_t)(to - from) * sizeof *out);
    for (int i = from; i < to; i++) {
        const struct dream_tokens *pr = &prompts[i];
        int want = max_tokens ? max_tokens[i] : gp.max_tokens;
        status[i] = 0;
        if (want < 0) status[i] = dream_error_set(DREAM_EINVAL, "request %d: max_tokens is %d", i, want);
        else if (pr->n <= 0) status[i] = dream_error_set(DREAM_EINVAL, "request %d: the prompt is empty", i);
        else if (pr->n >= b->p.seq_ctx)
            status[i] = dream_error_set(DREAM_ETOOBIG,
                                        "request %d: the prompt has %d tokens but a batched sequence holds %d; shorten it or raise the context",
                                        i, pr->n, b->p.seq_ctx);
        for (int k = 0; !status[i] && k < pr->n; k++)
            if (pr->ids[k] < 0 || pr->ids[k] >= n_vocab)
                status[i] = dream_error_set(DREAM_EINVAL, "request %d: token %d at position %d is outside the vocabulary", i, pr->ids[k], k);
        if (!status[i] && gp.forced) {
            char whose[32];
            snprintf(whose, sizeof whose, "request %d", i);
            status[i] = engine_forced_check(b->model, &gp.forced[i], whose);
        }
        const char *grammar = gp.grammars && gp.grammars[i] ? gp.grammars[i] : gp.grammar;
        if (!status[i] && grammar) {
            int e = engine_grammar_new(b->model, grammar, &b->grammar[i]);
            if (e) status[i] = dream_error_wrap(e, "request %d", i);
        }
        if (!status[i]) {
            int room = b->p.seq_ctx - pr->n;
            out[i].tokens = malloc(((size_t)(want < room ? want : room) + 1) * sizeof *out[i].tokens);
            if (!out[i].tokens) status[i] = dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        if (status[i]) {
            grammar_release(b, i);
            dream_log(DREAM_LOG_WARN, "%s", dream_error_last());
            if (gp.on_done) gp.on_done(gp.hook_ud, i);
        } else {
            out[i].n_prompt = pr->n;
            waiting++;
            b->stats.prompt_tokens += pr->n;
        }
    }
    return waiting;
}

/* Attaches (on) or detaches the device samplers: a run whose caller picks tokens from the
 * logits (a choose hook) needs the raw logits, which llama.cpp skips for a sampled sequence. */
static void device_sampling_attach(dream_batcher *b, bool on)
{
    if (!b->samplers || b->samplers_detached == !on) return;
    for (int k = 0; k < b->p.width; k++) llama_set_sampler(b->ctx, k, on ? b->samplers[k].sampler : NULL);
    b->samplers_detached = !on;
}

int dream_batcher_run(dream_batcher *b, const struct dream_tokens *prompts, int n, const struct dream_gen_params *params,
                      const int *max_tokens, struct dream_gen_result *out, int *status)
{
    struct dream_gen_params gp = params ? *params : dream_gen_default_params();
    if (n < 0) return dream_error_set(DREAM_EINVAL, "bad batch: %d requests", n);
    /* any grammar in this run (joining requests may bring their own) */
    bool grammar = gp.grammar || (gp.grammars && gp.more);
    for (int i = 0; gp.grammars && !grammar && i < n; i++) grammar = gp.grammars[i] != NULL;
    if (grammar && gp.ignore_eog)
        return dream_error_set(DREAM_EINVAL, "an answer grammar ends the answer at end-of-generation; it cannot be used with ignore_eog");
    if (grammar && gp.forced)
        return dream_error_set(DREAM_EINVAL, "forced answers (replay) are not decoded under answer grammars; give one or the other");
    int cap = gp.more && gp.capacity > n ? gp.capacity : n;
    llama_memory_t mem = llama_get_memory(b->ctx);
    struct llama_batch bt = llama_batch_init(b->p.step_tokens, 0, 1);
    int *n_gen = calloc((size_t)cap + 1, sizeof *n_gen);
    if (!n_gen) {
        llama_batch_free(bt);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    b->status = status;
    if (grammar && !(b->grammar = calloc((size_t)cap + 1, sizeof *b->grammar))) {
        free(n_gen);
        llama_batch_free(bt);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    device_sampling_attach(b, !gp.choose && !grammar);
    int waiting = check_requests(b, prompts, max_tokens, &gp, out, status, 0, n);

    int rc = b->p.prefix_slots > 0 && waiting >= 2 ? plan_prefixes(b, &bt, prompts, status, n) : 0;
    /* Admission order: the most work first (longest-processing-time first), so that long
     * generations overlap with the rest instead of running alone at the end. A generated token
     * costs about as much as 16 prompt tokens. Ties keep the callers' order. */
    int *order = malloc(((size_t)cap + 1) * sizeof *order);
    if (!order) rc = rc ? rc : dream_error_set(DREAM_ENOMEM, "out of memory");
    for (int i = 0; order && i < n; i++) order[i] = i;
    for (int i = 1; order && i < n; i++) { /* insertion sort: stable, n is small */
        int r = order[i], j = i;
        long key = (long)(max_tokens ? max_tokens[r] : gp.max_tokens) * 16 + prompts[r].n;
        while (j > 0) {
            int q = order[j - 1];
            long kq = (long)(max_tokens ? max_tokens[q] : gp.max_tokens) * 16 + prompts[q].n;
            if (kq >= key) break;
            order[j] = q;
            j--;
        }
        order[j] = r;
    }
    int next_req = 0, running = 0, n_order = n;
    while (!rc) {
        if (gp.more && waiting == 0 && n < cap && running < b->p.width) { /* room: let requests join */
            int n2 = gp.more(gp.hook_ud, n);
            if (n2 > cap) n2 = cap;
            if (n2 > n) {
                waiting += check_requests(b, prompts, max_tokens, &gp, out, status, n, n2);
                while (n < n2) order[n_order++] = n++;
            }
        }
        if (waiting == 0 && running == 0) break;
        double t_admit = now_ms();
        if (!b->p.kv_unified && b->p.compact) compact(b);
        /* Admit into the lowest free sequences (consecutive ids decode in one ubatch). */
        for (int k = 0; k < b->p.width && waiting > 0 && !rc; k++) {
            struct slot *s = &b->slots[k];
            if (s->state != SLOT_IDLE) continue;
            while (next_req < n_order && status[order[next_req]]) next_req++;
            int req = order[next_req];
            const struct dream_tokens *pr = &prompts[req];
            int want = max_tokens ? max_tokens[req] : gp.max_tokens;
            int room = b->p.seq_ctx - pr->n;
            int pf = prefix_find(b, pr);
            int reuse = 0;
            if (pf >= 0) reuse = fa_reuse(b, b->prefixes[pf].len, pr->n);
            if (reuse > 0) {
                /* a stream is copied whole; the cells past what this prompt reuses go */
                llama_memory_seq_cp(mem, b->p.width + pf, k, -1, -1);
                if (reuse < b->prefixes[pf].len) llama_memory_seq_rm(mem, k, reuse, -1);
                b->prefixes[pf].last_used = ++b->clock;
                b->stats.saved_tokens += reuse;
            }
            *s = (struct slot){.state = SLOT_PREFILL, .req = req, .pos = reuse, .max_new = want < room ? want : room, .logit_index = -1};
            next_req++;
            waiting--;
            running++;
            if (s->max_new == 0) rc = finish(b, s, &gp, &out[s->req], 0), running--;
        }
        b->stats.admit_ms += now_ms() - t_admit;

        if (b->p.kv_unified) {
            rc = rc ? rc : unified_step(b, &bt, prompts, &gp, out, n_gen, &running);
            continue;
        }

        /* One decode token for every decoding sequence, in waves of similar KV length. */
        int n_decode = 0;
        if (!rc) rc = decode_step(b, &bt, &gp, out, n_gen, &running, &n_decode);

        /* Prefill chunks, each its own llama_decode, up to the step budget. */
        int budget = b->p.step_tokens - n_decode;
        for (int k = 0; k < b->p.width && !rc; k++) {
            struct slot *s = &b->slots[k];
            if (s->state != SLOT_PREFILL) continue;
            if (budget <= 0 && n_decode > 0) break;
            const struct dream_tokens *pr = &prompts[s->req];
            int end = chunk_end(b, s->pos, pr->n);
            int li = -1;
            rc = prefill(b, &bt, pr->ids, s->pos, end, k, end == pr->n, &li);
            budget -= end - s->pos;
            s->pos = end;
            if (!rc && end == pr->n) rc = take_token(b, s, li, &gp, out, n_gen, &running);
            if (budget <= 0) break;
        }
    }
    llama_batch_free(bt);
    free(order);
    if (rc) {
        for (int k = 0; k < b->p.width; k++) {
            if (b->slots[k].state != SLOT_IDLE) llama_memory_seq_rm(mem, k, -1, -1);
            b->slots[k].state = SLOT_IDLE;
        }
        for (int i = 0; i < n; i++) dream_gen_result_free(&out[i]);
    }
    for (int i = 0; i < n && !rc; i++)
        if (status[i]) dream_gen_result_free(&out[i]);
    for (int i = 0; b->grammar && i < n; i++) grammar_release(b, i);
    if (b->grammar)
        dream_log(DREAM_LOG_DEBUG, "batch: tokens under answer grammars so far: %ld by the argmax, %ld among the 32 best, %ld over the whole vocabulary",
                  b->stats.grammar_picks[0], b->stats.grammar_picks[1], b->stats.grammar_picks[2]);
    free(b->grammar);
    b->grammar = NULL;
    b->status = NULL;
    free(n_gen);
    return rc;
}
