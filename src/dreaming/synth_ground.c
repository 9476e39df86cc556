/* synth_ground.c — a footnoted sentence says something its note says, or it goes.
 *
 * Every claim of an article is footnoted to the message it came from; pinning (synth_pin.c)
 * moves a footnote to the message of its chunk that says the sentence best. But a model also
 * writes sentences no note at hand says anything of ("The person has written 117 tests for
 * parake." over a chunk that never mentions tests): a footnote on such a sentence sends the
 * reader to a message that does not back it, and the memory holds an invented claim.
 *
 * After pinning, a sentence whose footnotes all cite sources at hand (the chunks the model was
 * shown) and which shares no content word with any of their messages, the subject's own name
 * words aside, is unfounded. If another source at hand has a message sharing at least
 * PIN_MIN_SHARED of its words, the sentence is cited to that message instead (the model took the
 * claim from a note it saw, and cited the wrong one); otherwise it is dropped. The lead's first
 * sentence, which defines the subject, is never dropped, but repaired (gr_define); a body section
 * left without prose goes with it. The test is lenient on purpose: one shared word keeps a sentence, so a paraphrase
 * stays, and only a claim with nothing in common with its source goes. A small model that
 * cannot spell a name (dream_seam_names_from_text: dream-mini) was trained on prose that
 * restates its note, every word of it from the source; it does not paraphrase, and its prose
 * grammar (synth_prose_grammar) makes the names it writes the notes' own, which then lets a
 * sentence of a few borrowed names and nonsense share a word. So for it a sentence must share 2
 * in 5 of its content words (the subject's aside) with one message it cites.
 *
 * One thing is not left to chance: a name. A word the model capitalised where no sentence starts
 * (the subject's own title words aside) must be in a message of a source the sentence cites, or
 * the sentence is unfounded too: "Gus used to live in Abilene." over notes that never say
 * Abilene shares "used" and "live" with them and still invents a place. A small model garbles
 * the names it copies ("Adpenide" for Adelaide, "Nic" for Leonard), and a memory that states the
 * wrong name is worse than one that leaves the sentence out. */
#include "synth_internal.h"

#include "dream/grammar.h"
#include "dream/model.h"

#include "../util/buf.h"
#include "dream/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GR_MAX_SENTENCES 128
#define GR_MIN_SHARED 2 /* as pinning's PIN_MIN_SHARED: fewer is chance */

/* The source at hand a footnote cites (its conversation, and a message that source shows), or
 * n_src when none; *msg: that message's index in the source. */
static size_t gr_source(const dream_article *a, int number, const struct synth_src *src, size_t n_src, size_t *msg)
{
    const struct dream_article_footnote *fn = synth_footnote_numbered(a, number);
    for (size_t k = 0; fn && fn->cite.conv && fn->cite.msg && k < n_src; k++) {
        if (strcmp(src[k].cite, fn->cite.conv) != 0) continue;
        for (size_t m = 0; m < src[k].n_msgs; m++)
            if (strcmp(src[k].msgs[m].id, fn->cite.msg) == 0) {
                *msg = m;
                return k;
            }
    }
    return n_src;
}

/* What to do with one sentence. */
enum gr_verdict { GR_KEEP, GR_DROP, GR_RECITE };

/* The names of sentence s[0..len): words the model wrote capitalised where no sentence starts
 * (not the first word, not after . ! ? : or a quote), outside [[links]] and markers, that are
 * content words (synth_words) and not words of the subject's title tw. Their hashes go to
 * names[0..*n) (at most cap). */
static void gr_names(const char *s, size_t len, const unsigned *tw, size_t ntw, unsigned *names, size_t *n, size_t cap)
{
    *n = 0;
    bool first = true;
    for (size_t i = 0; i < len && *n < cap;) {
        if (s[i] == '[' && i + 1 < len && (s[i + 1] == '^' || s[i + 1] == '[')) { /* a marker or a link: no name of ours */
            while (i < len && s[i] != ']') i++;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && c < 0x80) {
            i++;
            continue;
        }
        size_t at = i;
        while (i < len && (isalnum((unsigned char)s[i]) || (unsigned char)s[i] >= 0x80)) i++;
        size_t j = at;
        while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '*')) j--;
        bool starts = first || j == 0 || strchr(".!?:;\"(\n", s[j - 1]);
        first = false;
        if (starts || !isupper(c)) continue;
        unsigned *w = NULL;
        long nw = synth_words(s + at, i - at, &w);
        if (nw == 1 && !synth_words_has(tw, ntw, w[0])) names[(*n)++] = w[0];
        free(w);
    }
}

/* Whether message m of source k (its words g) holds every name of names[0..n). */
static bool gr_holds_names(const struct synth_src_words *g, size_t m, const unsigned *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!synth_words_has(g->w[m], g->n[m], names[i])) return false;
    return true;
}

bool synth_broken_marker(const char *s, size_t len)
{
    for (size_t i = 1; i < len; i++) {
        if (s[i] != ']' || !isdigit((unsigned char)s[i - 1])) continue;
        size_t j = i - 1;
        while (j > 0 && isdigit((unsigned char)s[j - 1])) j--;
        bool head = j > 0 && (s[j - 1] == '[' || (s[j - 1] == '^' && j > 1 && s[j - 2] == '['));
        if (!head) return true;
    }
    return false;
}

/* The verdict on sentence s[0..len) (its markers inside), with cited[k] set for each source k
 * its markers cite (the caller clears cited); for GR_RECITE, the source and message in *to_src,
 * *to_msg. only > 0: only a sentence carrying marker only is judged. */
static int gr_judge_cited(const dream_article *a, const char *s, size_t len, const unsigned *tw, size_t ntw, const struct synth_src *src,
                          size_t n_src, struct synth_src_words *g, int only, bool restate, bool *cited, enum gr_verdict *v,
                          size_t *to_src, size_t *to_msg)
{
    *v = GR_KEEP;
    bool any = false, has_only = only <= 0, at_hand = true;
    for (size_t i = 0, e; i + 3 < len; i++) {
        if (!synth_marker_at(s, i, &e)) continue;
        int num = atoi(s + i + 2);
        size_t m;
        size_t k = gr_source(a, num, src, n_src, &m);
        any = true;
        has_only |= num == only;
        if (k == n_src) at_hand = false;
        else cited[k] = true;
    }
    if (!any || !has_only || !at_hand) return DREAM_OK;
    /* a note's cut mark copied ("Part of the draw of Ta [...]).") ends a sentence the model
     * could not finish from what it saw */
    if (memmem(s, len, SYNTH_CUT_MARK, strlen(SYNTH_CUT_MARK))) {
        *v = GR_DROP;
        return DREAM_OK;
    }
    /* the sentence's words, the subject's name words aside */
    unsigned *w = NULL;
    long nw = synth_words(s, len, &w);
    if (nw < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t k2 = 0;
    for (long j = 0; j < nw; j++)
        if (!synth_words_has(tw, ntw, w[j])) w[k2++] = w[j];
    int rc = DREAM_OK;
    size_t best_k = n_src, best_m = 0, best = GR_MIN_SHARED - 1;
    /* a name no note at hand holds ("Jessica's birthday" where the notes tell Cornelius's) is
     * invented, whatever words the rest shares */
    unsigned names[16];
    size_t n_names = 0;
    gr_names(s, len, tw, ntw, names, &n_names, sizeof names / sizeof names[0]);
    bool said = k2 == 0, named = n_names == 0; /* a sentence of name words alone says nothing to test */
    for (size_t k = 0; !rc && !(said && named) && k < n_src; k++) {
        if ((rc = synth_src_words_of(&src[k], &g[k]))) break;
        for (size_t m = 0; m < src[k].n_msgs; m++) {
            size_t sh = synth_words_shared(w, k2, g[k].w[m], g[k].n[m]);
            bool holds = gr_holds_names(&g[k], m, names, n_names);
            /* a restating model's sentence says its message's words: 2 in 5 of its own at least */
            if (cited[k] && sh > 0 && (!restate || 5 * sh >= 2 * k2)) said = true;
            if (cited[k] && holds) named = true;
            if (!cited[k] && sh > best && holds) best = sh, best_k = k, best_m = m;
        }
    }
    bool founded = said && named;
    free(w);
    if (rc || founded) return rc;
    if (best_k < n_src) {
        *v = GR_RECITE;
        *to_src = best_k;
        *to_msg = best_m;
    } else {
        *v = GR_DROP;
    }
    return DREAM_OK;
}

/* Whether any message of any source at hand shares one of the words w[0..n). */
static int gr_any_holds(const struct synth_src *src, size_t n_src, struct synth_src_words *g, const unsigned *w, size_t n, bool *holds)
{
    *holds = false;
    for (size_t k = 0; k < n_src && !*holds; k++) {
        int rc = synth_src_words_of(&src[k], &g[k]);
        if (rc) return rc;
        for (size_t m = 0; m < src[k].n_msgs && !*holds; m++) *holds = synth_words_shared(w, n, g[k].w[m], g[k].n[m]) > 0;
    }
    return DREAM_OK;
}

/* The lead's defining sentence s[0..len) repaired, into *out (NULL: nothing to repair). It is
 * never dropped, so what a small model invents in it is taken out instead: a bold subject that
 * shares no word with the title ("**Gusan diet** is ..." in the article Gus), or has a word no note
 * at hand holds ("**Benjamin Deon**" in the article Antonio Deon), becomes the title,
 * and a parenthesis whose words no note at hand holds ("the person's starter (a rowboat)") goes,
 * with the space before it. */
static int gr_define(const char *s, size_t len, const char *title, const unsigned *tw, size_t ntw, const struct synth_src *src, size_t n_src,
                     struct synth_src_words *g, char **out)
{
    *out = NULL;
    struct dbuf b = {0};
    bool changed = false;
    int rc = DREAM_OK;
    size_t i = 0;
    /* the bold subject */
    const char *open = memmem(s, len, "**", 2);
    const char *close = open ? memmem(open + 2, len - (size_t)(open + 2 - s), "**", 2) : NULL;
    if (close && close > open + 2) {
        unsigned *w = NULL;
        long nw = synth_words(open + 2, (size_t)(close - open - 2), &w);
        if (nw < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
        bool invented = nw > 0 && synth_words_shared(w, (size_t)nw, tw, ntw) == 0;
        /* or a word beside the title's that no note holds ("**Benjamin Deon**" for Antonio Deon) */
        for (long j = 0; !rc && !invented && j < nw; j++) {
            bool held = true;
            if (!synth_words_has(tw, ntw, w[j])) rc = gr_any_holds(src, n_src, g, &w[j], 1, &held);
            invented = !held;
        }
        if (!rc && invented && *title) {
            rc = dbuf_append(&b, s, (size_t)(open + 2 - s));
            if (!rc) rc = dbuf_puts(&b, title);
            i = (size_t)(close - s);
            changed = true;
        }
        free(w);
    }
    /* parentheses no note holds */
    while (!rc && i < len) {
        const char *p = memchr(s + i, '(', len - i);
        const char *q = p ? memchr(p, ')', len - (size_t)(p - s)) : NULL;
        if (!q) break;
        unsigned *w = NULL;
        long nw = synth_words(p + 1, (size_t)(q - p - 1), &w);
        if (nw < 0) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        size_t k2 = 0;
        for (long j = 0; j < nw; j++)
            if (!synth_words_has(tw, ntw, w[j])) w[k2++] = w[j];
        bool holds = true;
        if (!rc && k2) rc = gr_any_holds(src, n_src, g, w, k2, &holds);
        free(w);
        size_t from = (size_t)(p - s), to = (size_t)(q - s) + 1;
        if (!rc && !holds) {
            while (from > i && s[from - 1] == ' ') from--;
            rc = dbuf_append(&b, s + i, from - i);
            changed = true;
        } else if (!rc) {
            rc = dbuf_append(&b, s + i, to - i);
        }
        i = to;
    }
    if (!rc && changed) rc = dbuf_append(&b, s + i, len - i);
    if (!rc && changed && !(*out = dbuf_take(&b))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    dbuf_free(&b);
    return rc;
}

/* The word of title that w[0..n) is a garbled copy of ("Parake" or "Parakeet" for Parrot), or
 * NULL (its length in *tn): w begins with at least three letters of it, and at least half of
 * it, but is another word, not it with an ending ("Parrots"). */
static const char *gr_garbled(const char *w, size_t n, const char *title, size_t *tn)
{
    for (const char *t = title; *t;) {
        if (!isalnum((unsigned char)*t)) {
            t++;
            continue;
        }
        const char *e = t;
        while (isalnum((unsigned char)*e) || (unsigned char)*e >= 0x80) e++;
        size_t len = (size_t)(e - t), p = 0;
        while (p < len && p < n && tolower((unsigned char)w[p]) == tolower((unsigned char)t[p])) p++;
        bool ending = p == len && n <= len + 2;
        if (p >= 3 && 2 * p >= len && !ending) {
            *tn = len;
            return t;
        }
        t = e;
    }
    return NULL;
}

/* Whether s[0..len) contrasts a phrase with itself: a change cue ("instead of", "rather than")
 * with the same words, case aside, right before it as after it up to the clause's end ("at 7 kg
 * instead of 7 kg": a garble of two positions, whatever its note holds). */
static bool gr_self_contrast(const char *s, size_t len)
{
    static const char *const cues[] = {" instead of ", " rather than "};
    for (size_t c = 0; c < sizeof cues / sizeof cues[0]; c++) {
        size_t cl = strlen(cues[c]);
        for (size_t i = 0; i + cl <= len; i++) {
            if (strncasecmp(s + i, cues[c], cl) != 0) continue;
            size_t a = i + cl, e = a;
            while (e < len && !strchr(",;.!?[(\n", s[e])) e++;
            while (e > a && s[e - 1] == ' ') e--;
            size_t n = e - a;
            if (!n || n > i || strncasecmp(s + i - n, s + a, n) != 0) continue;
            if (i - n == 0 || !isalnum((unsigned char)s[i - n - 1])) return true;
        }
    }
    return false;
}

/* A sentence s[0..len) that starts with a garbled copy of a title word ("Parake is feature-complete
 * now.[^3]" in the article Parrot): a small model's copying error, which the title word repairs,
 * into *out, when a note the sentence cites says it (one of its other words is in the message a
 * marker cites); when none does, *drop ("Parakeet is in beta" over notes that say no such thing).
 * A word a note at hand holds is the person's own, not a garble. *out NULL: nothing to do. */
static int gr_retitle(const dream_article *a, const char *s, size_t len, const char *title, const unsigned *tw, size_t ntw,
                      const struct synth_src *src, size_t n_src, struct synth_src_words *g, char **out, bool *drop)
{
    *out = NULL;
    *drop = false;
    size_t at = 0;
    while (at < len && (s[at] == ' ' || s[at] == '*' || s[at] == '"')) at++;
    size_t e = at;
    while (e < len && (isalnum((unsigned char)s[e]) || (unsigned char)s[e] >= 0x80)) e++;
    size_t tn = 0;
    const char *tw_at = e > at && isupper((unsigned char)s[at]) ? gr_garbled(s + at, e - at, title, &tn) : NULL;
    if (!tw_at) return DREAM_OK;
    unsigned *w = NULL;
    long nw = synth_words(s + at, e - at, &w);
    if (nw < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
    bool held = false;
    int rc = nw == 1 ? gr_any_holds(src, n_src, g, w, 1, &held) : DREAM_OK;
    free(w);
    if (rc || held || nw != 1) return rc;
    /* the rest of the sentence, title words aside, against each message its markers cite */
    nw = synth_words(s + e, len - e, &w);
    if (nw < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t k2 = 0;
    for (long j = 0; j < nw; j++)
        if (!synth_words_has(tw, ntw, w[j])) w[k2++] = w[j];
    bool said = false;
    for (size_t i = 0, end; !rc && !said && i + 3 < len; i++) {
        if (!synth_marker_at(s, i, &end)) continue;
        size_t m, k = gr_source(a, atoi(s + i + 2), src, n_src, &m);
        if (k == n_src || (rc = synth_src_words_of(&src[k], &g[k]))) continue;
        said = synth_words_shared(w, k2, g[k].w[m], g[k].n[m]) > 0;
    }
    free(w);
    if (rc) return rc;
    if (!said) {
        *drop = true;
        return DREAM_OK;
    }
    struct dbuf b = {0};
    rc = dbuf_append(&b, s, at);
    if (!rc) rc = dbuf_append(&b, tw_at, tn);
    if (!rc) rc = dbuf_append(&b, s + e, len - e);
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    *out = dbuf_take(&b);
    return *out ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* gr_judge_cited with cited (n_src flags, all false) cleared again for the next sentence. */
static int gr_judge(const dream_article *a, const char *s, size_t len, const unsigned *tw, size_t ntw, const struct synth_src *src,
                    size_t n_src, struct synth_src_words *g, int only, bool restate, bool *cited, enum gr_verdict *v, size_t *to_src,
                    size_t *to_msg)
{
    int rc = gr_judge_cited(a, s, len, tw, ntw, src, n_src, g, only, restate, cited, v, to_src, to_msg);
    memset(cited, 0, n_src * sizeof *cited);
    return rc;
}

/* text with each run of markers replaced by [^number], once. malloc'd, or NULL. */
static char *gr_recite(const char *s, size_t len, int number)
{
    struct dbuf b = {0};
    int rc = DREAM_OK;
    for (size_t i = 0, e; !rc && i < len;) {
        if (synth_marker_at(s, i, &e) && e <= len) {
            while (synth_marker_at(s, e, &e) && e <= len) {}
            rc = dbuf_printf(&b, "[^%d]", number);
            i = e;
            continue;
        }
        rc = dbuf_append(&b, s + i, 1);
        i++;
    }
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

int synth_drop_unfounded(dream_article *a, const struct synth_src *src, size_t n_src, int only, size_t *dropped, size_t *recited)
{
    *dropped = *recited = 0;
    if (!n_src) return DREAM_OK;
    bool restate = dream_seam_names_from_text(); /* a small model trained to restate its notes */
    size_t n_sec = dream_article_section_count(a);
    char **texts = calloc(n_sec + 1, sizeof *texts);
    struct synth_src_words *g = calloc(n_src, sizeof *g);
    bool *cited = calloc(n_src, sizeof *cited); /* per sentence: the sources its markers cite */
    unsigned *tw = NULL;
    /* a copy: adding a footnote renders the article again, and its title with it */
    char *title = dream_article_title(a) ? strdup(dream_article_title(a)) : NULL;
    long ntw = synth_words(title ? title : "", title ? strlen(title) : 0, &tw);
    int rc = texts && g && cited && ntw >= 0 && (title || !dream_article_title(a)) ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t r = 0; !rc && r <= n_sec; r++) {
        const char *t = r == 0 ? dream_article_lead(a) : NULL;
        if (r > 0 && dream_article_section(a, r - 1)->kind == DREAM_SECTION_BODY) t = dream_article_section(a, r - 1)->body;
        if (t && strstr(t, "[^") && !(texts[r] = strdup(t))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    /* each region, sentence by sentence: new footnotes first (they may add ## References, after
     * every region), then the new texts */
    char **out = calloc(n_sec + 1, sizeof *out);
    bool *emptied = calloc(n_sec + 1, sizeof *emptied);
    if (!rc && (!out || !emptied)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t r = 0; !rc && r <= n_sec; r++) {
        if (!texts[r]) continue;
        const char *t = texts[r];
        struct synth_span sp[GR_MAX_SENTENCES];
        size_t n = synth_sentences(t, sp, GR_MAX_SENTENCES);
        struct dbuf b = {0};
        size_t done = 0, kept = 0;
        bool changed = false, fresh = true; /* fresh: done is where a line or a dropped sentence ended */
        for (size_t k = 0; !rc && k < n; k++) {
            enum gr_verdict v = GR_KEEP;
            size_t to_src = 0, to_msg = 0;
            if (r == 0 && k == 0 && only <= 0) { /* the lead's defining sentence stays, repaired */
                char *fixed = NULL;
                rc = gr_define(t + sp[k].at, sp[k].len, title ? title : "", tw, (size_t)ntw, src, n_src, g, &fixed);
                if (!rc && fixed) {
                    changed = true;
                    rc = dbuf_append(&b, t + done, sp[k].at - done);
                    if (!rc) rc = dbuf_puts(&b, fixed);
                    done = sp[k].at + sp[k].len;
                }
                free(fixed);
                kept++;
                continue;
            }
            /* a garbled title where the sentence starts: repaired, then judged as it reads now */
            char *fixed = NULL;
            bool garbled = false;
            if (!(r == 0 && k == 0))
                rc = gr_retitle(a, t + sp[k].at, sp[k].len, title ? title : "", tw, (size_t)ntw, src, n_src, g, &fixed, &garbled);
            const char *sen = fixed ? fixed : t + sp[k].at;
            size_t slen = fixed ? strlen(fixed) : sp[k].len;
            if (!rc && (garbled || gr_self_contrast(sen, slen) || synth_broken_marker(sen, slen))) v = GR_DROP;
            else if (!rc && !(r == 0 && k == 0)) rc = gr_judge(a, sen, slen, tw, (size_t)ntw, src, n_src, g, only, restate, cited, &v, &to_src, &to_msg);
            if (!rc && v == GR_KEEP && fixed) { /* kept as repaired */
                changed = true;
                rc = dbuf_append(&b, t + done, sp[k].at - done);
                if (!rc) rc = dbuf_puts(&b, fixed);
                done = sp[k].at + sp[k].len;
                fresh = false;
            }
            if (rc || v == GR_KEEP) {
                free(fixed);
                kept++;
                continue;
            }
            changed = true;
            /* the text up to this sentence; a dropped one takes the space before it along */
            size_t upto = sp[k].at;
            if (v == GR_DROP)
                while (upto > done && (t[upto - 1] == ' ' || t[upto - 1] == '\t')) upto--;
            rc = dbuf_append(&b, t + done, upto - done);
            if (!rc && v == GR_RECITE) {
                struct dream_citation c = synth_src_citation(&src[to_src]);
                c.msg = src[to_src].msgs[to_msg].id;
                int number = 0;
                rc = dream_article_footnote_add(a, &c, &number);
                char *s = rc ? NULL : gr_recite(sen, slen, number);
                if (!rc && !s) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                if (!rc) rc = dbuf_puts(&b, s);
                free(s);
                ++*recited;
                kept++;
                fresh = false;
            } else if (!rc) {
                ++*dropped;
                /* a dropped first sentence of a line takes the space after it instead */
                bool first = (upto == done && fresh) || (upto > 0 && t[upto - 1] == '\n');
                fresh = true;
                if (first) {
                    size_t e = sp[k].at + sp[k].len;
                    while (t[e] == ' ' || t[e] == '\t') e++;
                    done = e;
                    free(fixed);
                    continue;
                }
            }
            free(fixed);
            done = sp[k].at + sp[k].len;
        }
        if (!rc && changed) rc = dbuf_puts(&b, t + done);
        if (!rc && changed) {
            out[r] = dbuf_take(&b);
            if (!out[r]) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            emptied[r] = r > 0 && kept == 0 && dream_article_section_end(a, r - 1) == r; /* no subsections under it */
        }
        dbuf_free(&b);
    }
    for (size_t r = 0; !rc && r <= n_sec; r++)
        if (out[r] && !emptied[r]) rc = r == 0 ? dream_article_set_lead(a, out[r]) : dream_article_section_set_body(a, r - 1, out[r]);
    for (size_t r = n_sec; !rc && r > 0; r--)
        if (emptied[r]) rc = dream_article_section_remove(a, r - 1);
    for (size_t r = 0; texts && r <= n_sec; r++) free(texts[r]);
    for (size_t r = 0; out && r <= n_sec; r++) free(out[r]);
    for (size_t k = 0; g && k < n_src; k++) synth_src_words_free(&g[k], src[k].n_msgs);
    free(texts);
    free(out);
    free(emptied);
    free(cited);
    free(g);
    free(tw);
    free(title);
    return rc;
}

/* ---- infobox values ------------------------------------------------------------------------ */

/* An infobox field is a claim too, and one without a footnote to pin: the model that writes
 * "lives_in: Toronto" for a subject whose notes never say Toronto, or "birthday: July 15" for a
 * sourdough starter, states it as plainly as a true one. A fact stays only when every content
 * word of its value is a word of the title or of a note the model was shown (as written, or with
 * a plural "s" added or taken away); a value of no content word ("5", "yes") stays. Two kinds of
 * key are not facts of the notes: a label (`type`) names what the subject is in words of its own
 * ("sourdough starter" for Gus), so one held word is enough, and a garble ("sourd
 * containingcker") has none; a stance (`status`, `opinion`) is a judgement, which reconcile keeps
 * in line with the lead. A [[link]] is not read: links are checked before (a link to no article
 * is reduced to its text, which then is). */

long synth_notes_words(const char *title, const struct synth_src *src, size_t n_src, unsigned **out)
{
    struct dbuf b = {0};
    int rc = dbuf_printf(&b, "%s\n", title ? title : "");
    for (size_t i = 0; !rc && i < n_src; i++) rc = dbuf_printf(&b, "%s\n", src[i].text ? src[i].text : "");
    long n = rc ? -1 : synth_words(b.data, b.len, out);
    dbuf_free(&b);
    return n;
}

int synth_prose_grammar(const char *title, const struct synth_src *src, size_t n_src, const char *start, char **out)
{
    *out = NULL;
    struct dbuf b = {0};
    int rc = dbuf_printf(&b, "%s\n", title ? title : "");
    for (size_t i = 0; !rc && i < n_src; i++) rc = dbuf_printf(&b, "%s\n", src[i].text ? src[i].text : "");
    if (!rc && !(*out = dream_grammar_prose_from(b.data, b.len, start))) rc = DREAM_ENOMEM;
    dbuf_free(&b);
    return rc ? dream_error_set(DREAM_ENOMEM, "out of memory") : DREAM_OK;
}

/* Whether the word w[0..n) (a run of word bytes) is held: no content word (*content false), or
 * in held[0..n_held). */
static int gr_word_held(const char *w, size_t n, const unsigned *held, size_t n_held, bool *ok, bool *content)
{
    unsigned *h = NULL;
    long k = synth_words(w, n, &h);
    if (k < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
    *content = k > 0;
    *ok = k == 0 || synth_words_has(held, n_held, h[0]);
    free(h);
    if (*ok || n + 2 > 64) return DREAM_OK;
    /* the plural "s" added or taken away */
    char alt[64];
    size_t m = n;
    memcpy(alt, w, n);
    if (n > 3 && (w[n - 1] == 's' || w[n - 1] == 'S')) m = n - 1;
    else alt[m++] = 's';
    k = synth_words(alt, m, &h);
    if (k < 0) return dream_error_set(DREAM_ENOMEM, "out of memory");
    *ok = k > 0 && synth_words_has(held, n_held, h[0]);
    free(h);
    return DREAM_OK;
}

/* The word of s at or after *i (a run of word bytes): its start, its length in *n; NULL at the end. */
static const char *gr_next_word(const char *s, size_t *i, size_t *n)
{
    while (s[*i] && !(isalnum((unsigned char)s[*i]) || (unsigned char)s[*i] >= 0x80)) (*i)++;
    if (!s[*i]) return NULL;
    size_t st = *i;
    while (s[*i] && (isalnum((unsigned char)s[*i]) || (unsigned char)s[*i] >= 0x80)) (*i)++;
    *n = *i - st;
    return s + st;
}

static bool gr_is_number(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)w[i])) return false;
    return n > 0;
}

/* Whether w[0..n) is a content word (synth_words holds it); a number is not. */
static bool gr_is_content(const char *w, size_t n)
{
    if (!w || gr_is_number(w, n)) return false;
    unsigned *h = NULL;
    long k = synth_words(w, n, &h);
    free(h);
    return k > 0;
}

static bool gr_same_word(const char *a, size_t na, const char *b, size_t nb)
{
    return a && b && na == nb && !strncasecmp(a, b, na);
}

bool synth_numbers_placed(const char *value, const char *text)
{
    const char *prev = NULL, *w, *next;
    size_t i = 0, pn = 0, n = 0, nn = 0;
    for (w = gr_next_word(value, &i, &n); w; prev = w, pn = n, w = next, n = nn) {
        size_t j = i;
        next = gr_next_word(value, &j, &nn);
        i = j;
        if (!gr_is_number(w, n)) continue;
        bool left = gr_is_content(prev, pn), right = next && gr_is_content(next, nn);
        if (!left && !right) continue;
        /* an occurrence of the number in text with the same content word on each side value has one */
        bool found = false;
        const char *tp = NULL, *tw, *tn;
        size_t k = 0, tpn = 0, tl = 0, tnl = 0;
        for (tw = gr_next_word(text, &k, &tl); tw && !found; tp = tw, tpn = tl, tw = tn, tl = tnl) {
            size_t m = k;
            tn = gr_next_word(text, &m, &tnl);
            k = m;
            found = tl == n && !memcmp(tw, w, n) && (!left || gr_same_word(tp, tpn, prev, pn)) &&
                    (!right || gr_same_word(tn, tnl, next, nn));
        }
        if (!found) return false;
    }
    return true;
}

int synth_value_held(const char *key, const char *value, const unsigned *held, size_t n_held, bool *ok)
{
    /* a value that runs on into the prompt's frame ("... questions:[user] Now") is a leak,
     * however many of its words a note holds (the notes are transcripts, [user] lines and all) */
    *ok = !synth_prompt_frame(value);
    if (!*ok) return DREAM_OK;
    if (key && (!strcmp(key, "status") || !strcmp(key, "opinion"))) return DREAM_OK;
    bool label = key && !strcmp(key, "type"), any = false, words = false;
    for (size_t i = 0; value[i] && (label || *ok);) {
        unsigned char c = (unsigned char)value[i];
        if (c == '[' && value[i + 1] == '[') { /* a link to an article: the article holds it */
            const char *end = strstr(value + i, "]]");
            i = end ? (size_t)(end - value) + 2 : strlen(value);
            continue;
        }
        if (!(isalnum(c) || c >= 0x80)) {
            i++;
            continue;
        }
        size_t s = i;
        while (value[i] && (isalnum((unsigned char)value[i]) || (unsigned char)value[i] >= 0x80)) i++;
        bool one = true, content = false;
        int rc = gr_word_held(value + s, i - s, held, n_held, &one, &content);
        if (rc) return rc;
        *ok = *ok && one;
        any = any || (one && content);
        words = words || content;
    }
    if (label) *ok = any || !words;
    return DREAM_OK;
}

int synth_value_grounded(const char *key, const char *value, const unsigned *held, size_t n_held, const char *text, bool *ok)
{
    int rc = synth_value_held(key, value, held, n_held, ok);
    bool stance = key && (!strcmp(key, "type") || !strcmp(key, "status") || !strcmp(key, "opinion"));
    if (!rc && *ok && !stance) *ok = synth_numbers_placed(value, text);
    return rc;
}
