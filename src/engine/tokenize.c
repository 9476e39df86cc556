/* tokenize.c — text to tokens and back, and the injection-safe prompt tokenizer.
 *
 * A rendered chat prompt mixes the template's own text (which must produce control tokens such
 * as <|turn> or <bos>) with caller data (conversation text, which must never produce one).
 * dream_tokenize_prompt partitions the text as llama.cpp's own special-token pass does —
 * longest special string first, left to right — but only inside template text, then tokenizes
 * every stretch between special tokens as plain text. For a prompt whose data holds no
 * special-token string the result equals llama_tokenize(text, parse_special=true); data that
 * does hold one is cut inside each occurrence, so it stays text.
 *
 * A model trained from scratch on a narrow corpus (dream-mini) never saw most of its
 * vocabulary: every unseen token's embedding row ended where training pushed them all, so the
 * model can neither read nor write one (a held-out name that is one token, " Antoine", comes
 * back as "iums"), while a name of several pieces it knows is copied. Such a GGUF lists those
 * tokens under dream.untrained_tokens (dream-make-model --mark-untrained). Each is then
 * tokenized as the longest trained pieces of its text, left to right, the way the model saw
 * every name it did learn, and the answer grammars never offer one (grammar.c). */
#include "engine_internal.h"

#include "dream/error.h"

#include <stdlib.h>
#include <string.h>

void dream_tokens_free(struct dream_tokens *t)
{
    free(t->ids);
    t->ids = NULL;
    t->n = t->cap = 0;
}

static int tokens_reserve(struct dream_tokens *t, int extra)
{
    if (extra < 0 || t->n > INT32_MAX - extra) return dream_error_set(DREAM_ETOOBIG, "too many tokens");
    if (t->n + extra <= t->cap) return 0;
    int cap = t->cap ? t->cap : 64;
    while (cap < t->n + extra) cap = cap > INT32_MAX / 2 ? t->n + extra : cap * 2;
    dream_token *p = realloc(t->ids, (size_t)cap * sizeof *p);
    if (!p) return dream_error_set(DREAM_ENOMEM, "out of memory for %d tokens", cap);
    t->ids = p;
    t->cap = cap;
    return 0;
}

int dream_tokens_push(struct dream_tokens *t, dream_token tok)
{
    if (tokens_reserve(t, 1)) return DREAM_ENOMEM;
    t->ids[t->n++] = tok;
    return 0;
}

int dream_tokenize(const dream_model *m, const char *text, size_t len, bool add_special, bool parse_special,
                   struct dream_tokens *out)
{
    if (len > INT32_MAX / 2) return dream_error_set(DREAM_ETOOBIG, "text of %zu bytes is too long to tokenize", len);
    /* Upper bound: one token per byte, plus BOS/EOS. */
    int cap = (int)len + 4;
    if (tokens_reserve(out, cap)) return DREAM_ENOMEM;
    int n = llama_tokenize(m->vocab, text, (int32_t)len, out->ids + out->n, cap, add_special, parse_special);
    if (n < 0) {
        if (n == INT32_MIN || tokens_reserve(out, -n)) return dream_error_set(DREAM_ETOOBIG, "tokenizing %zu bytes overflowed", len);
        n = llama_tokenize(m->vocab, text, (int32_t)len, out->ids + out->n, -n, add_special, parse_special);
        if (n < 0) return dream_error_set(DREAM_EMODEL, "llama_tokenize failed on %zu bytes", len);
    }
    if (m->split_start) {
        /* rewrite the untrained tokens as their pieces, right to left in place */
        int extra = 0;
        for (int i = out->n; i < out->n + n; i++) {
            dream_token t = out->ids[i];
            int k = m->split_start[t + 1] - m->split_start[t];
            if (k) extra += k - 1;
        }
        if (extra) {
            if (tokens_reserve(out, n + extra)) return DREAM_ENOMEM;
            int w = out->n + n + extra;
            for (int r = out->n + n - 1; r >= out->n; r--) {
                dream_token t = out->ids[r];
                int a = m->split_start[t], b = m->split_start[t + 1];
                if (a == b) out->ids[--w] = t;
                else
                    while (b > a) out->ids[--w] = m->split_ids[--b];
            }
            n += extra;
        }
    }
    out->n += n;
    return 0;
}

/* A trained piece: its vocabulary text (llama.cpp's own form, "▁" for a space in SentencePiece
 * vocabularies), so pieces joined give the token's text and detokenize to its bytes. */
struct piece {
    const char *text;
    int len;
    dream_token id;
};

static int cmp_piece(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    int c = memcmp(x->text, y->text, (size_t)(x->len < y->len ? x->len : y->len));
    return c ? c : x->len - y->len;
}

int engine_untrained_build(dream_model *m, const int32_t *ids, size_t n, const char *path)
{
    int n_vocab = llama_vocab_n_tokens(m->vocab);
    m->untrained = calloc((size_t)n_vocab, sizeof *m->untrained);
    m->split_start = calloc((size_t)n_vocab + 1, sizeof *m->split_start);
    struct piece *pieces = malloc((size_t)n_vocab * sizeof *pieces);
    int rc = 0;
    if (!m->untrained || !m->split_start || !pieces) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        if (ids[i] < 0 || ids[i] >= n_vocab)
            rc = dream_error_set(DREAM_EFORMAT,
                                 "%s: dream.untrained_tokens lists token %d, outside its vocabulary of %d tokens; re-make the model with dream-make-model --mark-untrained",
                                 path, (int)ids[i], n_vocab);
        else m->untrained[ids[i]] = true;
    }
    /* the pieces: normal tokens the model learned, sorted by text */
    int n_pieces = 0;
    for (int t = 0; !rc && t < n_vocab; t++) {
        const char *text = llama_vocab_get_text(m->vocab, t);
        if (m->untrained[t] || !text || !*text || !(llama_vocab_get_attr(m->vocab, t) & LLAMA_TOKEN_ATTR_NORMAL)) continue;
        pieces[n_pieces++] = (struct piece){.text = text, .len = (int)strlen(text), .id = t};
    }
    if (!rc) qsort(pieces, (size_t)n_pieces, sizeof *pieces, cmp_piece);
    /* each untrained token: the longest piece its text starts with, then the same on the rest;
     * one with no such cover (a character no trained piece holds) stays whole */
    struct dream_tokens split = {0};
    for (int t = 0; !rc && t < n_vocab; t++) {
        m->split_start[t] = split.n;
        const char *text = llama_vocab_get_text(m->vocab, t);
        if (!m->untrained[t] || !text) continue;
        int len = (int)strlen(text), at = 0, first = split.n;
        while (at < len) {
            const struct piece *hit = NULL;
            for (int k = len - at; k > 0 && !hit; k--) {
                struct piece key = {.text = text + at, .len = k};
                hit = bsearch(&key, pieces, (size_t)n_pieces, sizeof *pieces, cmp_piece);
            }
            if (!hit) break;
            if ((rc = dream_tokens_push(&split, hit->id))) break;
            at += hit->len;
        }
        if (at < len) split.n = first;
    }
    if (!rc) m->split_start[n_vocab] = split.n;
    free(pieces);
    if (rc) {
        dream_tokens_free(&split);
        free(m->untrained);
        free(m->split_start);
        m->untrained = NULL;
        m->split_start = NULL;
        return rc;
    }
    m->split_ids = split.ids;
    return 0;
}

static int cmp_special(const void *a, const void *b)
{
    const struct engine_special *x = a, *y = b;
    if (x->len != y->len) return y->len - x->len; /* longest first, as llama.cpp's cache */
    return x->id - y->id;
}

int engine_specials_build(dream_model *m)
{
    int n_vocab = llama_vocab_n_tokens(m->vocab);
    int n = 0;
    for (int id = 0; id < n_vocab; id++) {
        int attr = llama_vocab_get_attr(m->vocab, id);
        if (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNKNOWN)) n++;
    }
    m->specials = calloc((size_t)n + 1, sizeof *m->specials);
    m->by_byte = calloc((size_t)n + 1, sizeof *m->by_byte);
    if (!m->specials || !m->by_byte) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int k = 0;
    for (int id = 0; id < n_vocab; id++) {
        int attr = llama_vocab_get_attr(m->vocab, id);
        if (!(attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_USER_DEFINED | LLAMA_TOKEN_ATTR_UNKNOWN))) continue;
        const char *text = llama_vocab_get_text(m->vocab, id);
        if (!text || !*text) continue;
        m->specials[k++] = (struct engine_special){.text = text, .len = (int)strlen(text), .id = id, .attr = attr};
    }
    m->n_specials = k;
    qsort(m->specials, (size_t)k, sizeof *m->specials, cmp_special);
    int count[256] = {0};
    for (int i = 0; i < k; i++) count[(unsigned char)m->specials[i].text[0]]++;
    m->byte_start[0] = 0;
    for (int b = 0; b < 256; b++) m->byte_start[b + 1] = m->byte_start[b] + count[b];
    int fill[256];
    memcpy(fill, m->byte_start, sizeof fill);
    for (int i = 0; i < k; i++) m->by_byte[fill[(unsigned char)m->specials[i].text[0]]++] = i;
    return 0;
}

/* A special-token occurrence chosen by the partition. */
struct match {
    size_t pos;
    int len;
    int special; /* index into m->specials */
};

static int cmp_match_rank(const void *a, const void *b)
{
    const struct match *x = a, *y = b;
    if (x->len != y->len) return y->len - x->len;
    if (x->special != y->special) return x->special - y->special;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_match_pos(const void *a, const void *b)
{
    const struct match *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Is byte i inside a caller-data span? spans are sorted; *hint walks forward. */
static bool in_data(const struct dream_span *s, size_t n, size_t i, size_t *hint)
{
    while (*hint < n && s[*hint].end <= i) (*hint)++;
    return *hint < n && s[*hint].begin <= i && i < s[*hint].end;
}

static bool range_touches_data(const struct dream_span *s, size_t n, size_t a, size_t b)
{
    for (size_t k = 0; k < n; k++)
        if (s[k].begin < b && a < s[k].end) return true;
    return false;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Tokenizes the plain stretch text[a, b) as text. Each occurrence of a special-token string that
 * overlaps caller data is cut after its first byte, so not even a USER_DEFINED token (which
 * llama.cpp matches in plain text too) can come out of conversation text. */
static int tokenize_plain(const dream_model *m, const char *text, size_t a, size_t b,
                          const struct dream_span *spans, size_t n_spans, struct dream_tokens *out)
{
    if (a >= b) return 0;
    size_t start = a;
    if (range_touches_data(spans, n_spans, a, b)) {
        for (size_t i = a; i < b; i++) {
            unsigned char c = (unsigned char)text[i];
            for (int j = m->byte_start[c]; j < m->byte_start[c + 1]; j++) {
                const struct engine_special *s = &m->specials[m->by_byte[j]];
                if ((size_t)s->len > b - i || memcmp(text + i, s->text, (size_t)s->len) != 0) continue;
                if (!range_touches_data(spans, n_spans, i, i + (size_t)s->len)) continue;
                int rc = dream_tokenize(m, text + start, i + 1 - start, false, false, out);
                if (rc) return rc;
                start = i + 1;
                break;
            }
        }
    }
    return dream_tokenize(m, text + start, b - start, false, false, out);
}

int dream_tokenize_prompt(const dream_model *m, const char *text, size_t len, const struct dream_span *spans,
                          size_t n_spans, struct dream_tokens *out)
{
    for (size_t k = 0; k < n_spans; k++)
        if (spans[k].begin > spans[k].end || spans[k].end > len || (k && spans[k].begin < spans[k - 1].end))
            return dream_error_set(DREAM_EINVAL, "data span %zu [%zu,%zu) is out of order or outside the %zu-byte prompt", k,
                                   spans[k].begin, spans[k].end, len);
    int first = out->n;

    /* 1. Every occurrence of a special string that lies wholly in template text. */
    struct match *cand = NULL;
    size_t n_cand = 0, cap_cand = 0;
    size_t hint = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (m->byte_start[c] == m->byte_start[c + 1] || in_data(spans, n_spans, i, &hint)) continue;
        for (int j = m->byte_start[c]; j < m->byte_start[c + 1]; j++) {
            int si = m->by_byte[j];
            const struct engine_special *s = &m->specials[si];
            if ((size_t)s->len > len - i || memcmp(text + i, s->text, (size_t)s->len) != 0) continue;
            if (range_touches_data(spans, n_spans, i, i + (size_t)s->len)) continue;
            if (n_cand == cap_cand) {
                cap_cand = cap_cand ? cap_cand * 2 : 32;
                struct match *p = realloc(cand, cap_cand * sizeof *p);
                if (!p) {
                    free(cand);
                    return dream_error_set(DREAM_ENOMEM, "out of memory");
                }
                cand = p;
            }
            cand[n_cand++] = (struct match){.pos = i, .len = s->len, .special = si};
        }
    }

    /* 2. Choose as llama.cpp does: longest string first, each left to right, no overlaps. */
    qsort(cand, n_cand, sizeof *cand, cmp_match_rank);
    size_t n_keep = 0;
    for (size_t i = 0; i < n_cand; i++) {
        bool overlaps = false;
        for (size_t j = 0; j < n_keep && !overlaps; j++)
            overlaps = cand[i].pos < cand[j].pos + (size_t)cand[j].len && cand[j].pos < cand[i].pos + (size_t)cand[i].len;
        if (!overlaps) cand[n_keep++] = cand[i];
    }
    qsort(cand, n_keep, sizeof *cand, cmp_match_pos);

    /* 3. Emit: plain stretches as text, chosen occurrences as their token (with the LSTRIP /
     *    RSTRIP whitespace rules of their attributes). */
    int rc = 0;
    size_t at = 0;
    for (size_t i = 0; i < n_keep && !rc; i++) {
        const struct engine_special *s = &m->specials[cand[i].special];
        size_t end = cand[i].pos;
        if (s->attr & LLAMA_TOKEN_ATTR_LSTRIP)
            while (end > at && is_space(text[end - 1])) end--;
        rc = tokenize_plain(m, text, at, end, spans, n_spans, out);
        if (!rc) rc = dream_tokens_push(out, s->id);
        at = cand[i].pos + (size_t)s->len;
        if (s->attr & LLAMA_TOKEN_ATTR_RSTRIP)
            while (at < len && is_space(text[at])) at++;
    }
    if (!rc) rc = tokenize_plain(m, text, at, len, spans, n_spans, out);
    free(cand);
    if (rc) return rc;

    /* 4. The template writes BOS; a second one (template + caller) is dropped. */
    dream_token bos = llama_vocab_bos(m->vocab);
    if (bos >= 0 && out->n - first >= 2 && out->ids[first] == bos && out->ids[first + 1] == bos) {
        memmove(out->ids + first + 1, out->ids + first + 2, (size_t)(out->n - first - 2) * sizeof *out->ids);
        out->n--;
    }
    return 0;
}

int dream_token_to_piece(const dream_model *m, dream_token t, bool special, char *buf, int len)
{
    return llama_token_to_piece(m->vocab, t, buf, len, 0, special);
}

int dream_detokenize(const dream_model *m, const dream_token *tokens, int n, char **out)
{
    *out = NULL;
    size_t cap = 256, used = 0;
    char *s = malloc(cap);
    if (!s) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        char piece[256];
        int k = llama_token_to_piece(m->vocab, tokens[i], piece, sizeof piece, 0, false);
        char *big = NULL;
        if (k < 0) {
            big = malloc((size_t)-k);
            if (!big) {
                free(s);
                return dream_error_set(DREAM_ENOMEM, "out of memory");
            }
            k = llama_token_to_piece(m->vocab, tokens[i], big, -k, 0, false);
        }
        const char *src = big ? big : piece;
        if (k > 0) {
            if (used + (size_t)k + 1 > cap) {
                while (used + (size_t)k + 1 > cap) cap *= 2;
                char *p = realloc(s, cap);
                if (!p) {
                    free(big);
                    free(s);
                    return dream_error_set(DREAM_ENOMEM, "out of memory");
                }
                s = p;
            }
            memcpy(s + used, src, (size_t)k);
            used += (size_t)k;
        }
        free(big);
    }
    s[used] = '\0';
    *out = s;
    return 0;
}
