/* sample.c — temperature and nucleus (top-p) sampling from one step's logits, for requests
 * that ask for it (the server at temperature > 0). Greedy decoding never comes here. */
#include "dream/engine.h"

#include <math.h>
#include <stdlib.h>

/* xorshift64*: small, seedable, good enough to pick tokens; a zero state is moved off zero. */
static uint64_t next_u64(uint64_t *s)
{
    if (!*s) *s = 0x9E3779B97F4A7C15ull;
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

struct cand {
    float p;
    int id;
};

static int by_prob_desc(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

dream_token dream_sample_token(const float *logits, int n_vocab, float temperature, float top_p, uint64_t *rng)
{
    int best = 0;
    for (int v = 1; v < n_vocab; v++)
        if (logits[v] > logits[best]) best = v;
    if (!(temperature > 0.0f) || n_vocab < 2) return best;
    if (!(top_p > 0.0f) || top_p > 1.0f) top_p = 1.0f;
    struct cand *c = malloc((size_t)n_vocab * sizeof *c);
    if (!c) return best; /* out of memory: the most likely token is still a valid answer */
    double sum = 0;
    for (int v = 0; v < n_vocab; v++) {
        c[v].id = v;
        c[v].p = (float)exp(((double)logits[v] - logits[best]) / temperature);
        sum += c[v].p;
    }
    qsort(c, (size_t)n_vocab, sizeof *c, by_prob_desc);
    /* the nucleus: the fewest top tokens whose mass reaches top_p */
    int n = 0;
    double mass = 0;
    while (n < n_vocab && (n == 0 || mass < top_p * sum)) mass += c[n++].p;
    double r = (double)(next_u64(rng) >> 11) / 9007199254740992.0 * mass;
    dream_token pick = c[n - 1].id;
    for (int i = 0; i < n; i++) {
        r -= c[i].p;
        if (r < 0) {
            pick = c[i].id;
            break;
        }
    }
    free(c);
    return pick;
}
