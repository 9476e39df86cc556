/* synth_pin.c — every footnote points at the message that says the sentence.
 *
 * A writing stage cites a note (a chunk of a conversation) by one marker, and the marker's
 * definition names the chunk's first message of the person. A sentence often comes from a later
 * message of the same chunk ("I switched the finish to lacquer" three turns in), so that
 * definition sends the reader to the wrong place. Pinning re-cites each sentence, marker by
 * marker, to the message of the cited chunk that shares the most of the sentence's content words
 * (among the messages its source's text shows: what the model read, synth_src.msgs);
 * the chunk's own message keeps the citation on a tie or on a single shared word, and nothing
 * moves outside the chunk the model chose. The program, not the model, decides which message:
 * deterministic, and the same for every model. */
#include "synth_internal.h"

#include "../util/buf.h"
#include "dream/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- content words ------------------------------------------------------------------------- */

/* Words that say nothing about a claim: never counted (sorted, for bsearch). */
static const char *const pin_stop[] = {
    "about", "after", "all", "also", "and", "any", "are", "before", "but", "can", "could", "did", "does", "each", "for",
    "from", "had", "has", "have", "her", "here", "him", "his", "how", "into", "its", "just", "more", "most", "much",
    "not", "now", "one", "only", "our", "over", "own", "person", "she", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "too", "under", "very", "was", "were", "what", "when",
    "where", "which", "while", "who", "why", "will", "with", "would", "you", "your",
};

static int pin_cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int pin_cmp_u32(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

static bool pin_wordch(unsigned char c) { return isalnum(c) || c >= 0x80; }

/* Content words as sorted hashes (synth_internal.h). */
long synth_words(const char *text, size_t len, unsigned **out)
{
    size_t cap = 16, n = 0;
    unsigned *w = malloc(cap * sizeof *w);
    if (!w) return -1;
    for (size_t i = 0; i < len;) {
        if (text[i] == '[' && i + 1 < len && text[i + 1] == '^') { /* a marker is no word */
            while (i < len && text[i] != ']') i++;
            continue;
        }
        if (!pin_wordch((unsigned char)text[i])) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < len && pin_wordch((unsigned char)text[i])) i++;
        size_t n_w = i - s;
        if (n_w < 3) continue;
        char low[24];
        const char *key = low;
        if (n_w < sizeof low) {
            for (size_t k = 0; k < n_w; k++) low[k] = (char)tolower((unsigned char)text[s + k]);
            low[n_w] = '\0';
            if (bsearch(&key, pin_stop, sizeof pin_stop / sizeof pin_stop[0], sizeof pin_stop[0], pin_cmp_str)) continue;
        }
        unsigned h = 2166136261u;
        for (size_t k = 0; k < n_w; k++) h = (h ^ (unsigned char)tolower((unsigned char)text[s + k])) * 16777619u;
        if (n == cap) {
            unsigned *g = realloc(w, 2 * cap * sizeof *w);
            if (!g) {
                free(w);
                return -1;
            }
            w = g, cap *= 2;
        }
        w[n++] = h;
    }
    qsort(w, n, sizeof *w, pin_cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || w[k - 1] != w[i]) w[k++] = w[i];
    *out = w;
    return (long)k;
}

size_t synth_words_shared(const unsigned *a, size_t na, const unsigned *b, size_t nb)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        if (a[i] == b[j]) n++, i++, j++;
        else if (a[i] < b[j]) i++;
        else j++;
    }
    return n;
}

bool synth_words_has(const unsigned *w, size_t n, unsigned h)
{
    return bsearch(&h, w, n, sizeof *w, pin_cmp_u32) != NULL;
}

const struct dream_article_footnote *synth_footnote_numbered(const dream_article *a, int number)
{
    for (size_t f = 0; f < dream_article_footnote_count(a); f++)
        if (dream_article_footnote(a, f)->number == number) return dream_article_footnote(a, f);
    return NULL;
}

/* ---- markers and sentences ------------------------------------------------------------------ */

bool synth_marker_at(const char *text, size_t i, size_t *end)
{
    if (text[i] != '[' || text[i + 1] != '^' || !isdigit((unsigned char)text[i + 2])) return false;
    size_t e = i + 2;
    while (isdigit((unsigned char)text[e])) e++;
    /* the labels the article numbers (label_number in article.c): no leading zero, at most six
     * digits. Every caller reads the number with atoi, so another label would be read as a real
     * one's number ([^4294967297] wraps onto [^1], [^01] is [^1]) */
    if (text[e] != ']' || text[i + 2] == '0' || e - (i + 2) > 6) return false;
    *end = e + 1;
    return true;
}

size_t synth_sentences(const char *text, struct synth_span *out, size_t max)
{
    size_t n = 0, i = 0;
    while (text[i] && n < max) {
        while (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') i++;
        if (!text[i]) break;
        size_t from = i, end = 0;
        while (text[i] && text[i] != '\n') {
            if (strchr(".!?", text[i])) {
                size_t e = i + 1, m;
                while (synth_marker_at(text, e, &m)) e = m;
                if (!text[e] || text[e] == ' ' || text[e] == '\n') {
                    end = e;
                    break;
                }
            }
            i++;
        }
        if (!end) end = i; /* a line without an end mark */
        out[n++] = (struct synth_span){from, end - from};
        i = end;
    }
    return n;
}

/* ---- a source's messages ------------------------------------------------------------------ */

void synth_src_words_free(struct synth_src_words *p, size_t n_msgs)
{
    for (size_t i = 0; p->w && i < n_msgs; i++) free(p->w[i]);
    free(p->w);
    free(p->n);
}

int synth_src_words_of(const struct synth_src *s, struct synth_src_words *p)
{
    if (p->done) return DREAM_OK;
    p->done = true;
    p->w = calloc(s->n_msgs + 1, sizeof *p->w);
    p->n = calloc(s->n_msgs + 1, sizeof *p->n);
    if (!p->w || !p->n) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->n_msgs; i++) {
        long nw = synth_words(s->text + s->msgs[i].at, s->msgs[i].len, &p->w[i]);
        if (nw < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
        p->n[i] = (size_t)nw;
    }
    return DREAM_OK;
}

/* Fewer shared words than this are chance ("came back" and "bend it back"), never a reason to
 * move a citation. */
#define PIN_MIN_SHARED 2

/* The message of source s (its words p) that best says the sentence (its words w[0..nw)), or -1
 * to keep the chunk's own message (s->msg): only a message sharing strictly more words, and at least
 * PIN_MIN_SHARED, moves the citation; on a tie between others, the person's message, then the
 * earlier one. */
static long pin_best(const struct synth_src *s, const struct synth_src_words *p, const unsigned *w, size_t nw)
{
    size_t cur_score = 0;
    for (size_t i = 0; i < s->n_msgs; i++)
        if (strcmp(s->msgs[i].id, s->msg) == 0) cur_score = synth_words_shared(w, nw, p->w[i], p->n[i]);
    long best = -1;
    size_t best_score = cur_score < PIN_MIN_SHARED - 1 ? PIN_MIN_SHARED - 1 : cur_score;
    for (size_t i = 0; i < s->n_msgs; i++) {
        size_t sc = synth_words_shared(w, nw, p->w[i], p->n[i]);
        if (sc > best_score || (best >= 0 && sc == best_score && s->msgs[i].user && !s->msgs[best].user)) {
            best = (long)i;
            best_score = sc;
        }
    }
    return best >= 0 && strcmp(s->msgs[best].id, s->msg) == 0 ? -1 : best;
}

/* ---- the article --------------------------------------------------------------------------- */

/* A marker to re-cite: in region (0: the lead, k: section k-1), the marker at [at, at+len). */
struct pin_edit {
    size_t region, at, len;
    size_t src, msg; /* the new citation: source src's chunk message msg */
    int number;      /* its footnote number, once added */
};

/* Whether text[0..i) ends in a marker [^N]. */
static bool pin_ends_marker(const char *text, size_t i)
{
    if (i < 4 || text[i - 1] != ']') return false;
    size_t k = i - 1;
    while (k > 0 && isdigit((unsigned char)text[k - 1])) k--;
    return k < i - 1 && k >= 2 && text[k - 1] == '^' && text[k - 2] == '[';
}

/* Where the sentence before the marker run starting at text[run] begins: after a line break,
 * the previous sentence's markers, or its end and a space. */
static size_t pin_sentence_start(const char *text, size_t run)
{
    size_t i = run;
    while (i > 0 && text[i - 1] && strchr(".!?", text[i - 1])) i--; /* its own end */
    while (i > 0) {
        char c = text[i - 1];
        if (c == '\n' || pin_ends_marker(text, i)) break;
        if (i >= 2 && c == ' ' && strchr(".!?", text[i - 2])) break;
        i--;
    }
    return i;
}

static int pin_region(const dream_article *a, const char *text, size_t region, const struct synth_src *src, size_t n_src,
                      struct synth_src_words *words, int only, struct pin_edit **edits, size_t *n_edits, size_t *cap)
{
    int rc = DREAM_OK;
    size_t len = strlen(text);
    for (size_t i = 0; !rc && i + 3 < len; i++) {
        size_t e;
        if (!synth_marker_at(text, i, &e)) continue;
        e--; /* at its ']' */
        int number = atoi(text + i + 2);
        if (only > 0 && number != only) continue;
        /* the definition, and the source whose chunk it cites */
        const struct dream_article_footnote *fn = synth_footnote_numbered(a, number);
        if (!fn || !fn->cite.conv || !fn->cite.msg) continue;
        size_t s = n_src;
        for (size_t k = 0; k < n_src && s == n_src; k++)
            if (strcmp(src[k].cite, fn->cite.conv) == 0 && strcmp(src[k].msg, fn->cite.msg) == 0) s = k;
        if (s == n_src) continue; /* a citation of no source at hand: left as it is */
        size_t run = i;
        while (pin_ends_marker(text, run)) { /* markers before this one, in the same run */
            run--;
            while (text[run] != '[') run--;
        }
        size_t from = pin_sentence_start(text, run);
        if ((rc = synth_src_words_of(&src[s], &words[s]))) break;
        unsigned *w = NULL;
        long nw = synth_words(text + from, run - from, &w);
        if (nw < 0) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        long best = nw ? pin_best(&src[s], &words[s], w, (size_t)nw) : -1;
        free(w);
        if (best < 0) continue;
        if (*n_edits == *cap) {
            size_t nc = *cap ? 2 * *cap : 16;
            struct pin_edit *g = realloc(*edits, nc * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *edits = g, *cap = nc;
        }
        (*edits)[(*n_edits)++] = (struct pin_edit){region, i, e + 1 - i, s, (size_t)best, 0};
    }
    return rc;
}

int synth_pin_citations(dream_article *a, const struct synth_src *src, size_t n_src, int only)
{
    if (!n_src) return DREAM_OK;
    size_t n_sec = dream_article_section_count(a);
    char **texts = calloc(n_sec + 1, sizeof *texts); /* the regions' text before any change */
    struct synth_src_words *words = calloc(n_src, sizeof *words);
    struct pin_edit *edits = NULL;
    size_t n_edits = 0, cap = 0;
    int rc = texts && words ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t r = 0; !rc && r <= n_sec; r++) {
        const char *t = NULL;
        if (r == 0) {
            t = dream_article_lead(a);
        } else {
            const struct dream_article_section *sec = dream_article_section(a, r - 1);
            if (sec->kind == DREAM_SECTION_REFERENCES || sec->kind == DREAM_SECTION_SEE_ALSO) continue;
            t = sec->body;
        }
        if (!t || !strstr(t, "[^")) continue;
        if (!(texts[r] = strdup(t))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else rc = pin_region(a, texts[r], r, src, n_src, words, only, &edits, &n_edits, &cap);
    }
    /* a definition for each new (source, message), then each region with its markers swapped */
    for (size_t k = 0; !rc && k < n_edits; k++) {
        struct dream_citation c = synth_src_citation(&src[edits[k].src]);
        c.msg = src[edits[k].src].msgs[edits[k].msg].id;
        rc = dream_article_footnote_add(a, &c, &edits[k].number);
    }
    for (size_t r = 0; !rc && n_edits && r <= n_sec; r++) {
        if (!texts[r]) continue;
        struct dbuf b = {0};
        size_t done = 0;
        bool changed = false;
        for (size_t k = 0; !rc && k < n_edits; k++) {
            if (edits[k].region != r) continue;
            rc = dbuf_append(&b, texts[r] + done, edits[k].at - done);
            if (!rc) rc = dbuf_printf(&b, "[^%d]", edits[k].number);
            done = edits[k].at + edits[k].len;
            changed = true;
        }
        if (!rc && changed) rc = dbuf_puts(&b, texts[r] + done);
        if (!rc && changed) rc = r == 0 ? dream_article_set_lead(a, b.data) : dream_article_section_set_body(a, r - 1, b.data);
        dbuf_free(&b);
    }
    for (size_t r = 0; texts && r <= n_sec; r++) free(texts[r]);
    for (size_t k = 0; words && k < n_src; k++) synth_src_words_free(&words[k], src[k].n_msgs);
    free(texts);
    free(words);
    free(edits);
    return rc;
}
