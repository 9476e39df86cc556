/* synth_lead.c — the lead follows a change the body tells (reconcile's first step).
 *
 * The lead is the article's verdict: reconcile checks the infobox against it, and a reader stops
 * there. Fold moves it only when the model routes a note to the lead, and a small model often
 * routes a change ("they rewrote Gosling in Zig instead of TypeScript") to a body section alone,
 * so the article contradicts itself: the body says Zig, the lead still "is writing Gosling in
 * TypeScript". This step finds such a lead sentence and puts the body's own sentence in its
 * place, markers and all: no model call, no new words, and a citation that already says it.
 *
 * A body sentence S tells a change when it holds a cue (no longer, instead of, rather than,
 * switched from, used to, previously...); the words after the cue, up to the end of the clause,
 * are the old position (Y). A lead sentence L is stale against S when L tells no past of its own,
 * holds every content word of Y (the subject's own name words aside), does not already hold what
 * S says new, and S's note is dated no earlier than L's; a lead that already says S somewhere is
 * left as it is. And S goes up only when a message it cites holds at least half of what it says
 * new: the lead is what a reader trusts first, so it takes no sentence its own note does not back. The lead's first sentence (the one that
 * defines the subject in bold) is never replaced, and a replacement that would leave one of L's
 * footnotes cited nowhere is not made (the gate would refuse the whole article for it). */
#include "synth_internal.h"

#include "../util/buf.h"
#include "dream/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LEAD_MAX_SENTENCES 64

/* Cues of a change: the old position follows the cue (for the last four, up to " to "). */
enum { LEAD_CUE_INSTEAD = 1, LEAD_CUE_RATHER = 2, LEAD_CUE_FROM = 6 }; /* "instead of ", "rather than ", the first "... from " */
static const char *const lead_change[] = {"no longer ", "instead of ", "rather than ", "previously ", "formerly ", "used to ",
                                          "switched from ", "moved from ", "changed from ", "went from "};
/* Cues that a sentence tells the past (it asserts nothing as current). */
static const char *const lead_past[] = {"no longer", "instead of", "rather than", "previous", "formerly", "originally", "used to",
                                        "switched", " was ", " were ", " had ", "earlier", "anymore", "any more"};

static const char *lead_find(const char *s, size_t len, const char *cue)
{
    size_t n = strlen(cue);
    for (size_t i = 0; i + n <= len; i++)
        if (strncasecmp(s + i, cue, n) == 0 && (i == 0 || !isalnum((unsigned char)cue[0]) || !isalnum((unsigned char)s[i - 1])))
            return s + i;
    return NULL;
}

/* lead_find for a whole word: the cue must also end where a word ends (" now" is not "nowhere"). */
static const char *lead_find_word(const char *s, size_t len, const char *cue)
{
    size_t n = strlen(cue);
    for (const char *at; (at = lead_find(s, len, cue)); len -= (size_t)(at + 1 - s), s = at + 1)
        if ((size_t)(at - s) + n == len || !isalnum((unsigned char)at[n])) return at;
    return NULL;
}

static bool lead_tells_past(const char *s, size_t len)
{
    char buf[1024];
    size_t n = len < sizeof buf - 3 ? len : sizeof buf - 3; /* padded, so " was " matches at the edges */
    buf[0] = ' ';
    memcpy(buf + 1, s, n);
    buf[n + 1] = ' ';
    buf[n + 2] = '\0';
    for (size_t i = 0; i < sizeof lead_past / sizeof lead_past[0]; i++)
        if (lead_find(buf, n + 2, lead_past[i])) return true;
    return false;
}

/* Where the clause that runs from s[from] ends: at a clause mark or a joining word, and with
 * adverbials, also before a trailing "for the winter", "every ...". */
static size_t lead_clause_end(const char *s, size_t from, size_t len, bool adverbials)
{
    static const char *const stops[] = {" and ", " but ", " so ", " because ", " since ", " now", " these days", " for now"};
    static const char *const adverbs[] = {" for ", " during ", " every ", " each ", " this ", " last ", " in the winter", " in the summer"};
    size_t to = from;
    while (to < len && !strchr(",;.!?()[\n", s[to])) to++;
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
        const char *st = lead_find_word(s + from, to - from, stops[k]);
        if (st) to = (size_t)(st - s);
    }
    for (size_t k = 0; adverbials && k < sizeof adverbs / sizeof adverbs[0]; k++) {
        const char *st = lead_find(s + from, to - from, adverbs[k]);
        if (st) to = (size_t)(st - s);
    }
    return to;
}

/* The old position a sentence tells: the words after its first change cue up to the clause's
 * end (for "switched from Y to X", up to " to "). Its span in *y; false when S tells no change.
 * With cue: the change cue's index in lead_change and its offset in s. */
static bool lead_old_position_cue(const char *s, size_t len, struct synth_span *y, size_t *cue, size_t *cue_at)
{
    for (size_t c = 0; c < sizeof lead_change / sizeof lead_change[0]; c++) {
        const char *at = lead_find(s, len, lead_change[c]);
        if (!at) continue;
        if (cue) *cue = c, *cue_at = (size_t)(at - s);
        size_t from = (size_t)(at - s) + strlen(lead_change[c]), to = lead_clause_end(s, from, len, false);
        if (c >= LEAD_CUE_FROM) { /* from Y to X */
            const char *st = lead_find(s + from, to - from, " to ");
            if (st) to = (size_t)(st - s);
        }
        /* "used to and ..." is a broken sentence, not a change: no old position in it */
        static const char *const joins[] = {"and ", "or ", "but ", "to ", "so "};
        for (size_t k = 0; k < sizeof joins / sizeof joins[0] && to > from; k++)
            if (strncasecmp(s + from, joins[k], strlen(joins[k])) == 0) to = from;
        if (to > from) {
            *y = (struct synth_span){from, to - from};
            return true;
        }
    }
    return false;
}

static bool lead_old_position(const char *s, size_t len, struct synth_span *y) { return lead_old_position_cue(s, len, y, NULL, NULL); }

/* The latest date of the footnotes text[0..len) cites (YYYY-MM-DD), or NULL when none is dated. */
static const char *lead_date(const dream_article *a, const char *text, size_t len)
{
    const char *best = NULL;
    for (size_t i = 0, e; i + 3 < len; i++) {
        if (!synth_marker_at(text, i, &e)) continue;
        const struct dream_article_footnote *fn = synth_footnote_numbered(a, atoi(text + i + 2));
        if (fn && fn->cite.date && (!best || strcmp(fn->cite.date, best) > 0)) best = fn->cite.date;
    }
    return best;
}

/* How many times marker [^num] is used in text[0..len) (definitions "[^num]:" not counted). */
size_t synth_marker_uses(const char *text, size_t len, int num)
{
    size_t k = 0;
    for (size_t i = 0, e; i + 3 < len; i++)
        if (synth_marker_at(text, i, &e) && e <= len && atoi(text + i + 2) == num && text[e] != ':') k++;
    return k;
}

/* Whether every footnote the old lead used is still used by the article once the lead is new
 * (the uses outside the lead, plus the new lead's). */
static bool lead_keeps_markers(const char *whole, const char *old, const char *neu)
{
    size_t lo = strlen(old), ln = strlen(neu), lw = strlen(whole);
    for (size_t i = 0, e; i + 3 < lo; i++) {
        if (!synth_marker_at(old, i, &e)) continue;
        int num = atoi(old + i + 2);
        if (synth_marker_uses(whole, lw, num) - synth_marker_uses(old, lo, num) + synth_marker_uses(neu, ln, num) == 0) return false;
    }
    return true;
}

/* A body sentence that tells a change. Its text and date are its own copies: a replacement sets
 * the lead, which re-parses the article and frees every section body and footnote, and the
 * sentences found before are still read after it (the sentence put at the lead's end). */
struct lead_change_s {
    char *text; /* the sentence; s spans all of it */
    struct synth_span s, y;
    unsigned *sw, *yw; /* content words of the sentence and of the old position */
    size_t nsw, nyw;
    char *date;
    bool used;
};

/* Whether one of the messages S cites holds at least half of what S says new (its words but the
 * old position's, the subject's and the cue's). */
static bool lead_grounded(const dream_article *a, const struct lead_change_s *c, const unsigned *tw, size_t ntw, const unsigned *cw,
                          size_t ncw, synth_held_fn held, void *ud)
{
    unsigned fresh[64];
    size_t nf = 0;
    for (size_t j = 0; j < c->nsw && nf < 64; j++)
        if (!synth_words_has(c->yw, c->nyw, c->sw[j]) && !synth_words_has(tw, ntw, c->sw[j]) && !synth_words_has(cw, ncw, c->sw[j])) fresh[nf++] = c->sw[j];
    const char *st = c->text + c->s.at;
    for (size_t i = 0, e; nf && i + 3 < c->s.len; i++) {
        if (!synth_marker_at(st, i, &e)) continue;
        const struct dream_article_footnote *fn = synth_footnote_numbered(a, atoi(st + i + 2));
        if (fn && fn->cite.conv && fn->cite.msg && 2 * held(ud, fn->cite.conv, fn->cite.msg, fresh, nf) >= nf) return true;
    }
    return false;
}

int synth_lead_follow_body(dream_article *a, synth_held_fn held, void *ud, size_t *replaced)
{
    *replaced = 0;
    const char *lead0 = dream_article_lead(a);
    if (!lead0 || !*lead0) return DREAM_OK;
    char *lead = strdup(lead0);
    unsigned *tw = NULL;
    const char *title = dream_article_title(a);
    long ntw = synth_words(title ? title : "", title ? strlen(title) : 0, &tw);
    struct lead_change_s *ch = NULL;
    size_t n_ch = 0, cap = 0;
    int rc = lead && ntw >= 0 ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    /* the body's sentences that tell a change */
    for (size_t s = 0; !rc && s < dream_article_section_count(a); s++) {
        const struct dream_article_section *sec = dream_article_section(a, s);
        if (sec->kind != DREAM_SECTION_BODY) continue;
        struct synth_span sp[LEAD_MAX_SENTENCES];
        size_t n = synth_sentences(sec->body, sp, LEAD_MAX_SENTENCES);
        for (size_t k = 0; !rc && k < n; k++) {
            struct synth_span y;
            const char *st = sec->body + sp[k].at;
            if (!lead_old_position(st, sp[k].len, &y) || !strstr(st, "[^")) continue;
            if (n_ch == cap) {
                size_t nc = cap ? 2 * cap : 8;
                struct lead_change_s *g = realloc(ch, nc * sizeof *g);
                if (!g) {
                    rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                    break;
                }
                ch = g, cap = nc;
            }
            struct lead_change_s *c = &ch[n_ch++];
            const char *date = lead_date(a, st, sp[k].len);
            *c = (struct lead_change_s){.text = strndup(st, sp[k].len), .s = {0, sp[k].len}, .y = y, .date = date ? strdup(date) : NULL};
            long nsw = synth_words(st, sp[k].len, &c->sw), nyw = synth_words(st + y.at, y.len, &c->yw);
            if (nsw < 0 || nyw < 0 || !c->text || (date && !c->date)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            c->nsw = nsw < 0 ? 0 : (size_t)nsw;
            c->nyw = nyw < 0 ? 0 : (size_t)nyw;
        }
    }
    /* each lead sentence after the first, against them; the new lead in b */
    struct dbuf b = {0};
    struct synth_span ls[LEAD_MAX_SENTENCES];
    size_t n_ls = !rc && n_ch ? synth_sentences(lead, ls, LEAD_MAX_SENTENCES) : 0;
    size_t done = 0;
    const char *whole = dream_article_text(a, NULL);
    unsigned *all = NULL, *cw = NULL; /* the whole lead's words; the cues' */
    static const char cues[] = "no longer instead rather previously formerly used switched moved changed went";
    long nall = n_ls ? synth_words(lead, strlen(lead), &all) : 0, ncw = synth_words(cues, sizeof cues - 1, &cw);
    if (nall < 0 || ncw < 0) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 1; !rc && i < n_ls; i++) {
        const char *l = lead + ls[i].at;
        if (lead_tells_past(l, ls[i].len)) continue;
        unsigned *lw = NULL;
        long nlw = synth_words(l, ls[i].len, &lw);
        if (nlw < 0) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        const char *ldate = lead_date(a, l, ls[i].len);
        struct lead_change_s *best = NULL;
        for (size_t k = 0; k < n_ch; k++) {
            struct lead_change_s *c = &ch[k];
            if (c->used || !c->date || (ldate && strcmp(c->date, ldate) < 0)) continue;
            /* the old position: every content word of it (the subject's name aside) in L */
            size_t ny = 0, in_l = 0;
            for (size_t j = 0; j < c->nyw; j++) {
                if (synth_words_has(tw, (size_t)ntw, c->yw[j])) continue;
                ny++;
                in_l += synth_words_has(lw, (size_t)nlw, c->yw[j]);
            }
            if (!ny || in_l < ny) continue;
            /* what S says new (its words but the old position's, the subject's and the cue's)
             * is not all in L already, and not all elsewhere in the lead: a lead that already
             * says S (fold put it there) is left alone, since S twice would be worse, and
             * dropping L could take the lead under the gate's word floor */
            size_t fresh = 0, unsaid = 0;
            for (size_t j = 0; j < c->nsw; j++) {
                unsigned h = c->sw[j];
                if (synth_words_has(c->yw, c->nyw, h) || synth_words_has(tw, (size_t)ntw, h) || synth_words_has(cw, (size_t)ncw, h)) continue;
                fresh += !synth_words_has(lw, (size_t)nlw, h);
                unsaid += !synth_words_has(all, (size_t)nall, h);
            }
            if (!fresh || !unsaid) continue;
            if (!best || strcmp(c->date, best->date) >= 0) best = c;
        }
        free(lw);
        if (!best) continue;
        /* L's footnotes stay cited: by S, or outside L */
        bool kept = true;
        for (size_t j = 0, e; kept && j + 3 < ls[i].len; j++) {
            if (!synth_marker_at(l, j, &e)) continue;
            int num = atoi(l + j + 2);
            kept = synth_marker_uses(best->text + best->s.at, best->s.len, num) > 0 ||
                   synth_marker_uses(whole, strlen(whole), num) > synth_marker_uses(l, ls[i].len, num);
        }
        if (!kept) continue;
        /* S goes to the lead only when a message it cites says its new position */
        if (held && !lead_grounded(a, best, tw, (size_t)ntw, cw, (size_t)ncw, held, ud)) continue;
        best->used = true;
        rc = dbuf_append(&b, lead + done, ls[i].at - done);
        const char *st = best->text + best->s.at;
        if (!rc) rc = dbuf_printf(&b, "%c%.*s", islower((unsigned char)st[0]) ? toupper((unsigned char)st[0]) : st[0], (int)best->s.len - 1, st + 1);
        done = ls[i].at + ls[i].len;
        ++*replaced;
    }
    if (!rc && *replaced) rc = dbuf_puts(&b, lead + done);
    /* two replacements may together drop a footnote each kept alone: then none is made */
    if (!rc && *replaced && !lead_keeps_markers(whole, lead, b.data)) *replaced = 0;
    if (!rc && *replaced) rc = dream_article_set_lead(a, b.data);
    dbuf_free(&b);
    /* a change the lead says nothing of (no content word of its sentence in the lead, the
     * subject's and the cue's aside), dated no earlier than anything the lead cites: the latest
     * such sentence goes at the end of a lead of at most three sentences (a lead has 2-4), when a
     * message it cites says its new position */
    struct synth_span lsp[LEAD_MAX_SENTENCES];
    if (!rc && n_ch && synth_sentences(dream_article_lead(a), lsp, LEAD_MAX_SENTENCES) <= 3) {
        char *cur = strdup(dream_article_lead(a));
        unsigned *lw = NULL;
        long nlw = cur ? synth_words(cur, strlen(cur), &lw) : -1;
        if (nlw < 0) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        const char *ldate = rc ? NULL : lead_date(a, cur, strlen(cur));
        struct lead_change_s *best = NULL;
        for (size_t k = 0; !rc && k < n_ch; k++) {
            struct lead_change_s *c = &ch[k];
            if (c->used || !c->date || (ldate && strcmp(c->date, ldate) < 0)) continue;
            size_t own = 0, shared = 0;
            for (size_t j = 0; j < c->nsw; j++) {
                if (synth_words_has(tw, (size_t)ntw, c->sw[j]) || synth_words_has(cw, (size_t)ncw, c->sw[j])) continue;
                own++;
                shared += synth_words_has(lw, (size_t)nlw, c->sw[j]);
            }
            if (!own || shared) continue;
            if (held && !lead_grounded(a, c, tw, (size_t)ntw, cw, (size_t)ncw, held, ud)) continue;
            if (!best || strcmp(c->date, best->date) >= 0) best = c;
        }
        if (!rc && best) {
            struct dbuf n = {0};
            const char *st = best->text + best->s.at;
            size_t cl = strlen(cur);
            while (cl && isspace((unsigned char)cur[cl - 1])) cl--;
            rc = dbuf_printf(&n, "%.*s %c%.*s", (int)cl, cur, islower((unsigned char)st[0]) ? toupper((unsigned char)st[0]) : st[0], (int)best->s.len - 1,
                             st + 1);
            if (!rc) rc = dream_article_set_lead(a, n.data);
            if (!rc) ++*replaced;
            dbuf_free(&n);
        }
        free(lw);
        free(cur);
    }
    for (size_t k = 0; k < n_ch; k++) {
        free(ch[k].text);
        free(ch[k].date);
        free(ch[k].sw);
        free(ch[k].yw);
    }
    free(ch);
    free(all);
    free(cw);
    free(tw);
    free(lead);
    return rc;
}

/* The body sentence that tells value as a past position (synth_told_as_past): its section,
 * its span, the old position's span in it and its change cue; false when there is none. */
static bool lead_told(const dream_article *a, const char *value, size_t *section, struct synth_span *sent, struct synth_span *old,
                      size_t *cue, size_t *cue_at)
{
    unsigned *vw = NULL;
    long nvw = synth_words(value, strlen(value), &vw);
    bool told = false;
    for (size_t s = 0; nvw > 0 && !told && s < dream_article_section_count(a); s++) {
        const struct dream_article_section *sec = dream_article_section(a, s);
        if (sec->kind != DREAM_SECTION_BODY) continue;
        struct synth_span sp[LEAD_MAX_SENTENCES], y;
        size_t n = synth_sentences(sec->body, sp, LEAD_MAX_SENTENCES);
        for (size_t k = 0; !told && k < n; k++) {
            unsigned *yw = NULL;
            size_t c = 0, c_at = 0;
            if (!lead_old_position_cue(sec->body + sp[k].at, sp[k].len, &y, &c, &c_at)) continue;
            long nyw = synth_words(sec->body + sp[k].at + y.at, y.len, &yw);
            told = nyw > 0 && synth_words_shared(vw, (size_t)nvw, yw, (size_t)nyw) == (size_t)nvw;
            free(yw);
            if (told) *section = s, *sent = sp[k], *old = y, *cue = c, *cue_at = c_at;
        }
    }
    free(vw);
    return told;
}

/* text[from..to) without the spaces, commas and footnote markers at its ends, malloc'd when it
 * is one to eight words with no marker inside; else NULL. */
static char *lead_phrase(const char *text, size_t from, size_t to)
{
    for (;;) {
        while (from < to && strchr(" ,;:", text[from])) from++;
        while (to > from && strchr(" ,;:", text[to - 1])) to--;
        size_t e;
        bool cut = false;
        for (size_t i = from; i + 3 < to + 1 && !cut; i++) /* a marker that ends the phrase */
            if (synth_marker_at(text, i, &e) && e >= to) to = i, cut = true;
        if (!cut) break;
    }
    if (to <= from) return NULL;
    size_t words = 1;
    for (size_t i = from; i < to; i++) {
        if (text[i] == '[' || text[i] == '\n' || text[i] == '*') return NULL;
        words += text[i] == ' ';
    }
    return words <= 8 ? strndup(text + from, to - from) : NULL;
}

/* Where value's shape (its numbers free, the rest as written, case aside) starts at text[i]:
 * the index past the match, or 0. "£32 a month" matches "£115 a month". */
static size_t lead_shape_at(const char *value, const char *text, size_t i, size_t len)
{
    size_t v = 0;
    if (i > 0 && isalnum((unsigned char)text[i - 1])) return 0;
    while (value[v]) {
        if (isdigit((unsigned char)value[v])) {
            while (isdigit((unsigned char)value[v]) || ((value[v] == '.' || value[v] == ',') && isdigit((unsigned char)value[v + 1]))) v++;
            if (i >= len || !isdigit((unsigned char)text[i])) return 0;
            while (i < len && (isdigit((unsigned char)text[i]) || ((text[i] == '.' || text[i] == ',') && i + 1 < len && isdigit((unsigned char)text[i + 1]))))
                i++;
            continue;
        }
        if (i >= len || tolower((unsigned char)value[v]) != tolower((unsigned char)text[i])) return 0;
        v++, i++;
    }
    return i < len && isalnum((unsigned char)text[i]) ? 0 : i;
}

char *synth_past_successor(const dream_article *a, const char *value, bool *told)
{
    size_t sec_i, cue, cue_at;
    struct synth_span st, y;
    bool is_told = lead_told(a, value, &sec_i, &st, &y, &cue, &cue_at);
    if (told) *told = is_told;
    if (!is_told) return NULL;
    const char *body = dream_article_section(a, sec_i)->body, *s = body + st.at;
    char *out = NULL;
    if (cue == LEAD_CUE_INSTEAD || cue == LEAD_CUE_RATHER) {
        /* "... moved it to X instead of Y": the phrase after the clause's first to / at / in */
        size_t from = 0;
        for (size_t i = 0; i < cue_at; i++)
            if (strchr(",;:", s[i])) from = i + 1;
        static const char *const preps[] = {" to ", " at ", " in "};
        size_t best = cue_at, plen = 0;
        for (size_t k = 0; k < sizeof preps / sizeof preps[0]; k++) {
            const char *p = lead_find(s + from, cue_at - from, preps[k]);
            if (p && (size_t)(p - s) < best) best = (size_t)(p - s), plen = strlen(preps[k]);
        }
        if (plen) out = lead_phrase(s, best + plen, cue_at);
    } else if (cue >= LEAD_CUE_FROM && y.at + y.len + 4 <= st.len && !strncasecmp(s + y.at + y.len, " to ", 4)) {
        /* "switched from Y to X": the phrase after " to ", up to the clause's end */
        size_t from = y.at + y.len + 4;
        out = lead_phrase(s, from, lead_clause_end(s, from, st.len, true));
    }
    if (out && (!strcasecmp(out, value) || strstr(out, value))) {
        free(out);
        out = NULL;
    }
    if (out) return out;
    /* a same-shaped value ("£115 a month" for "£32 a month") a body sentence states, no earlier
     * than the sentence that tells the old one; the latest such, the later one on a tie */
    bool digit = false, other = false;
    for (const char *v = value; *v; v++) {
        if (isdigit((unsigned char)*v)) digit = true;
        else if (!isspace((unsigned char)*v) && *v != '.' && *v != ',') other = true;
    }
    if (!digit || !other) return NULL;
    const char *told_date = lead_date(a, s, st.len), *best_date = NULL;
    for (size_t k = 0; k < dream_article_section_count(a); k++) {
        const struct dream_article_section *sec = dream_article_section(a, k);
        if (sec->kind != DREAM_SECTION_BODY) continue;
        struct synth_span sp[LEAD_MAX_SENTENCES];
        size_t n = synth_sentences(sec->body, sp, LEAD_MAX_SENTENCES);
        for (size_t j = 0; j < n; j++) {
            const char *t = sec->body + sp[j].at;
            if (t == s || lead_tells_past(t, sp[j].len)) continue;
            const char *d = lead_date(a, t, sp[j].len);
            if (!d || (told_date && strcmp(d, told_date) < 0) || (best_date && strcmp(d, best_date) < 0)) continue;
            for (size_t i = 0; i < sp[j].len; i++) {
                size_t e = lead_shape_at(value, t, i, sp[j].len);
                if (!e || (e - i == strlen(value) && !strncasecmp(t + i, value, e - i))) continue;
                char *c = strndup(t + i, e - i);
                if (!c) break;
                free(out);
                out = c, best_date = d;
                break;
            }
        }
    }
    return out;
}

bool synth_told_as_past(const dream_article *a, const char *value, size_t *section)
{
    size_t cue, cue_at;
    struct synth_span st, y;
    return lead_told(a, value, section, &st, &y, &cue, &cue_at);
}

/* Where the sentence that holds msg[i] starts: just past the last ". ", "! ", "? " or line break
 * before i (0 when none). */
static size_t msg_sentence_start(const char *msg, size_t i)
{
    size_t from = 0;
    for (size_t k = 0; k < i; k++) {
        if (msg[k] == '\n') from = k + 1;
        else if (strchr(".!?", msg[k]) && (msg[k + 1] == ' ' || msg[k + 1] == '\n')) from = k + 1;
    }
    while (from < i && isspace((unsigned char)msg[from])) from++;
    return from;
}

/* The first of cues (" is now ", " is ", ...) in s[from..to), the longest at that place: the
 * index past it, or 0 when none. */
static size_t msg_first_cue(const char *s, size_t from, size_t to, const char *const *cues, size_t n)
{
    size_t best = 0, best_at = to;
    for (size_t k = 0; k < n; k++) {
        const char *p = lead_find(s + from, to - from, cues[k]);
        size_t at = p ? (size_t)(p - s) : to, end = at + strlen(cues[k]);
        if (p && (at < best_at || (at == best_at && end > best))) best_at = at, best = end;
    }
    return best;
}

/* Where text[0..len) ends without a closing " now", " these days", " again" or " at the
 * moment" ("feature-complete now"); len when none. */
static size_t msg_adverb_end(const char *text, size_t len)
{
    static const char *const tails[] = {" now", " these days", " again", " at the moment"};
    for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
        size_t t = strlen(tails[k]);
        if (len > t && !strncasecmp(text + len - t, tails[k], t)) len -= t;
    }
    return len;
}

/* A phrase that ends in such an adverb loses it (msg_adverb_end). */
static void msg_trim_adverb(char *p)
{
    if (p) p[msg_adverb_end(p, strlen(p))] = '\0';
}

/* The words of value before a cue "X, not V" (msg[sent..cue_at) its clause) that take value's
 * place, when value has a number: as many words as value has right before the cue, each holding
 * a digit where value's does ("November 12, not July 17"); at most eight. malloc'd or NULL. */
static char *msg_not_shaped(const char *msg, size_t sent, size_t cue_at, const char *value)
{
    size_t nv = 0, end = cue_at, from = cue_at;
    bool digit[16], any = false;
    for (const char *v = value; *v && nv < 16;) {
        while (*v == ' ') v++;
        if (!*v) break;
        digit[nv] = false;
        for (; *v && *v != ' '; v++) digit[nv] |= isdigit((unsigned char)*v) != 0;
        any |= digit[nv++];
    }
    if (!any || nv > 8) return NULL;
    while (end > sent && msg[end - 1] == ' ') end--;
    end = sent + msg_adverb_end(msg + sent, end - sent); /* "3 kg now, not 7 kg" */
    from = end;
    for (size_t w = nv; w-- > 0;) {
        size_t e = from;
        while (from > sent && msg[from - 1] != ' ') from--;
        if (from == e) return NULL;
        bool d = false;
        for (size_t k = from; k < e; k++) d |= isdigit((unsigned char)msg[k]) != 0;
        if (d != digit[w]) return NULL;
        if (w) {
            if (from <= sent) return NULL;
            from--;
        }
    }
    return strndup(msg + from, end - from);
}

/* The words of "my sister lives there — not brother" (msg[sent..cue_at)) that stand where a
 * sentence of said put value ("my brother lives there"): the clause ends as that sentence ends
 * after value, and the phrase runs from the word that came before value to there. Sentences
 * that negate value ("not brother") say no position. malloc'd or NULL. */
static char *msg_not_restated(const char *msg, size_t sent, size_t cue_at, const char *value, const char *said)
{
    size_t n = strlen(value), end = cue_at;
    while (end > sent && strchr(" ,;", msg[end - 1])) end--;
    for (size_t i = 0; said && said[i]; i++) {
        if (strncasecmp(said + i, value, n) != 0 || (i && isalnum((unsigned char)said[i - 1])) || isalnum((unsigned char)said[i + n])) continue;
        size_t st = msg_sentence_start(said, i);
        if (i >= 4 && !strncasecmp(said + i - 4, "not ", 4)) continue;
        /* what follows value up to its sentence's end, and the word before it */
        size_t tail = i + n, te = tail;
        while (said[te] && !strchr(".!?\n", said[te])) te++;
        size_t pb = i;
        while (pb > st && said[pb - 1] == ' ') pb--;
        size_t pw = pb;
        while (pw > st && said[pw - 1] != ' ') pw--;
        if (pw == pb) continue; /* value opens its sentence: no word to find the place by */
        size_t tl = te - tail;
        while (tl && said[tail + tl - 1] == ' ') tl--;
        if (tl > end - sent || strncasecmp(msg + end - tl, said + tail, tl) != 0) continue;
        size_t stop = end - tl, wl = pb - pw;
        /* the last stand-alone copy of that word before the tail */
        size_t at = 0;
        for (size_t k = sent; k + wl <= stop; k++)
            if (!strncasecmp(msg + k, said + pw, wl) && (k == sent || msg[k - 1] == ' ') && msg[k + wl] == ' ') at = k + wl + 1;
        if (!at || at >= stop) continue;
        char *out = lead_phrase(msg, at, stop);
        if (out && !strcasestr(out, value)) return out;
        free(out);
    }
    return NULL;
}

char *synth_message_successor(const char *msg, const char *value, const char *said, bool *correction)
{
    enum { INSTEAD, NO_LONGER, MIXED, NOT };
    static const struct {
        const char *cue;
        int kind;
    } cues[] = {{"instead of ", INSTEAD}, {"rather than ", INSTEAD}, {"no longer ", NO_LONGER}, {"mixed it up with ", MIXED},
                {"confused it with ", MIXED},  {", not ", NOT},          {" \xe2\x80\x94 not ", NOT}, {" \xe2\x80\x93 not ", NOT},
                {" - not ", NOT},             {"; not ", NOT}};
    static const char *const preps[] = {"", "in ", "at ", "on ", "to ", "for ", "with "};
    if (correction) *correction = false;
    size_t n = strlen(value), len = strlen(msg);
    if (n < 2) return NULL;
    char *out = NULL;
    for (size_t i = 0; !out && i + n <= len; i++) {
        if (strncasecmp(msg + i, value, n) != 0 || (i && isalnum((unsigned char)msg[i - 1])) || isalnum((unsigned char)msg[i + n])) continue;
        /* the cue right before the value, a preposition between them allowed ("instead of in the shed") */
        int kind = -1;
        size_t cue_at = 0;
        for (size_t c = 0; kind < 0 && c < sizeof cues / sizeof cues[0]; c++)
            for (size_t q = 0; kind < 0 && q < sizeof preps / sizeof preps[0]; q++) {
                size_t cl = strlen(cues[c].cue), pl = strlen(preps[q]);
                if (i < cl + pl || strncasecmp(msg + i - pl, preps[q], pl) || strncasecmp(msg + i - pl - cl, cues[c].cue, cl)) continue;
                size_t at = i - pl - cl;
                if (at && isalnum((unsigned char)cues[c].cue[0]) && isalnum((unsigned char)msg[at - 1])) continue; /* a word cue starts a word */
                kind = cues[c].kind, cue_at = at;
            }
        if (kind < 0) continue;
        size_t sent = msg_sentence_start(msg, cue_at);
        if (kind == INSTEAD) {
            /* "moved on to X instead of V", "use it for X rather than V": the phrase after the
             * clause's first to / at / in / for, else after its "is" */
            size_t from = sent;
            for (size_t k = sent; k < cue_at; k++)
                if (strchr(",;:", msg[k])) from = k + 1;
            static const char *const pcues[] = {" to ", " at ", " in ", " for "};
            static const char *const vcues[] = {" is now ", " are now ", " is ", " are "};
            size_t e = msg_first_cue(msg, from, cue_at, pcues, sizeof pcues / sizeof pcues[0]);
            if (!e) e = msg_first_cue(msg, from, cue_at, vcues, sizeof vcues / sizeof vcues[0]);
            if (e) out = lead_phrase(msg, e, cue_at);
        } else if (kind == NO_LONGER) {
            /* "Matthew is now waiting for a repair, no longer V": the clause before the comma,
             * after its "is (now)" */
            size_t comma = cue_at;
            while (comma > sent && msg[comma - 1] == ' ') comma--;
            if (comma <= sent || msg[comma - 1] != ',') continue;
            comma--;
            size_t from = sent;
            for (size_t k = sent; k < comma; k++)
                if (strchr(",;:", msg[k])) from = k + 1;
            static const char *const vcues[] = {" is now ", " are now ", "'s now ", " is ", " are "};
            size_t e = msg_first_cue(msg, from ? from - 1 : from, comma, vcues, sizeof vcues / sizeof vcues[0]);
            if (e) out = lead_phrase(msg, e, comma);
        } else if (kind == NOT) {
            /* "Cornelius's birthday is November 12, not July 17", "my sister lives there — not
             * brother, as I said before": a correction, unless the clause says "now" */
            out = msg_not_shaped(msg, sent, cue_at, value);
            if (!out) out = msg_not_restated(msg, sent, cue_at, value, said);
            if (out && correction) *correction = !lead_find_word(msg + sent, cue_at - sent, " now") && strncasecmp(msg + sent, "now ", 4);
        } else {
            /* "I spend £115 a month on it. I mixed it up with £32 a month.": the sentence before
             * the cue's; a same-shaped value when the value has a number, else the phrase after
             * its "is (on)" */
            if (sent < 2) continue;
            size_t prev_end = sent;
            while (prev_end > 0 && (isspace((unsigned char)msg[prev_end - 1]) || strchr(".!?", msg[prev_end - 1]))) prev_end--;
            size_t prev = msg_sentence_start(msg, prev_end);
            bool digit = false;
            for (const char *v = value; *v; v++) digit |= isdigit((unsigned char)*v) != 0;
            if (digit) {
                for (size_t k = prev; !out && k < prev_end; k++) {
                    size_t e = lead_shape_at(value, msg, k, prev_end);
                    if (e && !(e - k == n && !strncasecmp(msg + k, value, n))) out = strndup(msg + k, e - k);
                }
            }
            if (!out) {
                static const char *const vcues[] = {" is on ", " is in ", " is at ", " is now ", " is "};
                size_t e = msg_first_cue(msg, prev ? prev - 1 : prev, prev_end, vcues, sizeof vcues / sizeof vcues[0]);
                if (e) out = lead_phrase(msg, e, prev_end);
            }
            if (out && correction) *correction = true;
        }
        msg_trim_adverb(out);
        if (out && (!*out || strcasestr(out, value) || strcasestr(value, out))) {
            free(out);
            out = NULL;
            if (correction) *correction = false;
        }
    }
    return out;
}
