/* segment_snap.c — putting a chunk's cut where the conversation's words change (segment_snap.h). */
#include "segment_snap.h"

#include "dream/error.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void segment_snap_default_params(struct snap_params *p)
{
    p->reach = 6;
    p->window = 2;
    p->margin = 0.1;
}

/* Words that say nothing of a topic: function words and the small talk of a chat. Sorted, for
 * bsearch. */
static const char *const snap_stop[] = {
    "about", "again", "also",  "and",   "any",   "are",   "back",  "been",  "being", "but",   "can",    "could", "did",
    "does",  "don",   "each",  "few",   "for",   "from",  "get",   "good",  "got",   "great", "had",    "has",   "have",
    "her",   "here",  "hey",   "his",   "how",   "into",  "its",   "just",  "know",  "like",  "made",   "make",  "may",
    "might", "more",  "most",  "must",  "need",  "new",   "not",   "now",   "okay",  "one",   "only",   "other", "our",
    "over",  "own",   "really", "same", "shall", "she",   "should", "some", "such",  "sure",  "than",   "thank", "thanks",
    "that",  "the",   "their", "them",  "then",  "there", "these", "they",  "think", "this",  "those",  "too",   "two",
    "under", "very",  "want",  "was",   "well",  "were",  "what",  "when",  "where", "which", "who",    "whom",  "whose",
    "why",   "will",  "with",  "would", "yes",   "you",   "your",
};

struct snap_key {
    const char *s;
    size_t len;
};

static int snap_stop_cmp(const void *key, const void *elem)
{
    const struct snap_key *k = key;
    const char *w = *(const char *const *)elem;
    size_t wl = strlen(w);
    int c = memcmp(k->s, w, k->len < wl ? k->len : wl);
    if (c) return c;
    return k->len < wl ? -1 : k->len > wl;
}

static bool snap_is_stop(const char *w, size_t len)
{
    struct snap_key k = {w, len};
    return bsearch(&k, snap_stop, sizeof snap_stop / sizeof *snap_stop, sizeof *snap_stop, snap_stop_cmp) != NULL;
}

static inline char snap_lower(unsigned char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

static inline bool snap_letter(char c) { return c >= 'a' && c <= 'z'; }

/* The longest word is cut here: enough for any real word, and a run of letters longer than this
 * (a pasted hash, base64) counts as one word of its first bytes. */
#define SNAP_WORD_MAX 48

size_t segment_snap_words(const char *text, size_t len, unsigned long long *out, size_t cap)
{
    size_t n = 0;
    char w[SNAP_WORD_MAX];
    size_t i = 0;
    while (text && i < len) {
        if (!snap_letter(snap_lower((unsigned char)text[i]))) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < len) {
            char c = snap_lower((unsigned char)text[j]);
            if (!snap_letter(c) && c != '\'' && c != '-') break;
            j++;
        }
        size_t wl = j - i < SNAP_WORD_MAX ? j - i : SNAP_WORD_MAX;
        for (size_t k = 0; k < wl; k++) w[k] = snap_lower((unsigned char)text[i + k]);
        if (j - i >= 3 && !snap_is_stop(w, wl)) {
            uint64_t h = 1469598103934665603ull; /* FNV-1a */
            for (size_t k = 0; k < wl; k++) h = (h ^ (unsigned char)w[k]) * 1099511628211ull;
            if (n < cap) out[n] = h;
            n++;
        }
        i = j;
    }
    return n;
}

/* Phrases with which a person says the conversation turns to another topic. Each is matched
 * as written (lower case), so "something else" counts only where a punctuation mark ends it. */
static const char *const snap_cues[] = {
    "changing the subject", "change of subject",  "change the subject", "different topic",     "another topic",
    "next topic",           "new topic",          "other topic",        "different subject",   "another subject",
    "unrelated question",   "unrelated note",     "totally unrelated",  "completely unrelated", "separate question",
    "separate topic",       "different question", "switching gears",    "switch gears",        "changing gears",
    "on another note",      "on a different note", "on a separate note", "different area",      "something else.",
    "something else:",      "something else \xe2\x80\x94", "something else -", "something else,",
};

bool segment_snap_cue(const char *text)
{
    char head[SNAP_CUE_BYTES + 1];
    size_t n = 0;
    for (; text && text[n] && n < SNAP_CUE_BYTES; n++) head[n] = snap_lower((unsigned char)text[n]);
    head[n] = '\0';
    for (size_t k = 0; k < sizeof snap_cues / sizeof *snap_cues; k++) {
        const char *at = strstr(head, snap_cues[k]);
        /* a cue starts a word: "a different topic", not "indifferent topic" */
        if (at && (at == head || !snap_letter(at[-1]))) return true;
    }
    return false;
}

static bool snap_is_user(const char *role) { return role && strcmp(role, "user") == 0; }

static int snap_u64_cmp(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

/* The words of every message, hashed: message i's are words[at[i] .. at[i + 1]). */
struct snap_text {
    unsigned long long *words;
    size_t *at;
    unsigned long long *left, *right; /* scratch for the two sides of a cut */
};

/* The cosine of two sorted multisets of hashes: the dot product of their counts over the
 * product of their norms. */
static double snap_cosine(const unsigned long long *a, size_t na, const unsigned long long *b, size_t nb)
{
    if (na == 0 || nb == 0) return 0.0;
    double dot = 0, qa = 0, qb = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        size_t ca = 0, cb = 0;
        unsigned long long v;
        if (j >= nb || (i < na && a[i] <= b[j])) v = a[i];
        else v = b[j];
        while (i < na && a[i] == v) ca++, i++;
        while (j < nb && b[j] == v) cb++, j++;
        dot += (double)ca * (double)cb;
        qa += (double)ca * (double)ca;
        qb += (double)cb * (double)cb;
    }
    return dot / sqrt(qa * qb);
}

/* How much the `window` messages before the cut at c and the `window` from c on have in common. */
static double snap_score(struct snap_text *t, size_t n, size_t window, size_t c)
{
    size_t a0 = c > window ? c - window : 0, b1 = c + window < n ? c + window : n;
    size_t na = t->at[c] - t->at[a0], nb = t->at[b1] - t->at[c];
    memcpy(t->left, t->words + t->at[a0], na * sizeof *t->left);
    memcpy(t->right, t->words + t->at[c], nb * sizeof *t->right);
    qsort(t->left, na, sizeof *t->left, snap_u64_cmp);
    qsort(t->right, nb, sizeof *t->right, snap_u64_cmp);
    return snap_cosine(t->left, na, t->right, nb);
}

/* X then Y, one run of messages: Y starts after X does, right after X ends or on X's last. */
static bool snap_chained(const struct snap_range *x, const struct snap_range *y)
{
    return x->first < y->first && x->last <= y->first && x->last + 1 >= y->first;
}

static bool snap_same_role(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

int segment_snap(const char *const *roles, const char *const *texts, size_t n, struct snap_range *r, size_t nr, const struct snap_params *p,
                 size_t *moved, size_t *cued)
{
    *moved = 0;
    *cued = 0;
    if (nr < 2 || n < 2 || p->reach == 0 || p->window == 0) return DREAM_OK;
    struct snap_text t = {0};
    int rc = DREAM_OK;
    size_t total = 0;
    size_t *lens = calloc(n, sizeof *lens);
    t.at = calloc(n + 1, sizeof *t.at);
    if (!lens || !t.at) goto oom;
    /* k words take at least 3k letters and k - 1 separators, so a text of len bytes holds at most
     * (len + 1) / 4: room enough to read every text once. */
    for (size_t i = 0; i < n; i++) {
        lens[i] = texts[i] ? strlen(texts[i]) : 0;
        total += (lens[i] + 1) / 4;
    }
    t.words = malloc((total ? total : 1) * sizeof *t.words);
    t.left = malloc((total ? total : 1) * sizeof *t.left);
    t.right = malloc((total ? total : 1) * sizeof *t.right);
    if (!t.words || !t.left || !t.right) goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t room = (lens[i] + 1) / 4, got = segment_snap_words(texts[i], lens[i], t.words + t.at[i], room);
        t.at[i + 1] = t.at[i] + (got < room ? got : room);
    }

    for (size_t j = 1; j < nr; j++) {
        struct snap_range *a = &r[j - 1], *b = &r[j];
        if (!snap_chained(a, b)) continue;
        size_t cut = b->first;
        if (cut >= n) continue;
        /* the person said the topic changes here: the cut stays */
        if (snap_is_user(roles[cut]) && segment_snap_cue(texts[cut])) continue;
        size_t lo = a->first + 1;
        size_t hi = j + 1 < nr ? r[j + 1].first - 1 : b->last;
        if (hi > b->last) hi = b->last;
        if (hi >= n) hi = n - 1;
        if (cut > p->reach && cut - p->reach > lo) lo = cut - p->reach;
        if (cut + p->reach < hi) hi = cut + p->reach;
        /* the person's message that says the topic changes, nearest the model's cut, takes it
         * (the earlier of two as near); else the place where the words change most */
        size_t cue = SIZE_MAX;
        for (size_t c = lo; c <= hi; c++) {
            size_t dc = c > cut ? c - cut : cut - c, dq = cue > cut ? cue - cut : cut - cue;
            if (c != cut && snap_is_user(roles[c]) && segment_snap_cue(texts[c]) && (cue == SIZE_MAX || dc < dq)) cue = c;
        }
        if (cue != SIZE_MAX) {
            a->last = a->last + cue - cut;
            b->first = cue;
            (*cued)++;
            continue;
        }
        double own = snap_score(&t, n, p->window, cut), best = own;
        size_t at = cut;
        for (size_t c = lo; c <= hi; c++) {
            if (c == cut || !snap_same_role(roles[c], roles[cut])) continue;
            double s = snap_score(&t, n, p->window, c);
            size_t dc = c > cut ? c - cut : cut - c, dat = at > cut ? at - cut : cut - at;
            if (s < best || (s == best && dc < dat)) best = s, at = c;
        }
        if (at == cut || best > own - p->margin) continue;
        a->last = a->last + at - cut; /* a->last >= cut - 1 and at >= 1: never below zero */
        b->first = at;
        (*moved)++;
    }
    goto done;
oom:
    rc = dream_error_set(DREAM_ENOMEM, "out of memory");
done:
    free(lens);
    free(t.at);
    free(t.words);
    free(t.left);
    free(t.right);
    return rc;
}
