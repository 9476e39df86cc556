/* article_forget.c — removing from an article what only some conversations support (see
 * dream_article_forget in dream/article.h): `dream forget` takes a conversation out of the wiki
 * claim by claim, so what other conversations support stays as it was written. */
#include "article_internal.h"

#include "../util/buf.h"
#include "dream/error.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One replacement of the text's bytes [from, to) by with (NULL: nothing). */
struct fg_edit {
    size_t from, to;
    char *with;
};

struct fg {
    dream_article *a;
    const char *const *convs;
    size_t n_convs;
    bool *gone_note;   /* per definition: it cites a forgotten conversation */
    bool *ref_done;    /* per marker: a block edit took care of it */
    long *line_sec;    /* per line: its section, -1 for the header */
    bool *lead_line;   /* per line: a prose line of the header */
    bool *touched;     /* per section (and [n_secs] for the header) */
    struct fg_edit *edits;
    size_t n_edits, cap_edits;
    struct dream_article_forget_result res;
};

static bool fg_forgotten(const struct fg *g, const char *conv)
{
    for (size_t i = 0; conv && i < g->n_convs; i++)
        if (strcmp(g->convs[i], conv) == 0) return true;
    return false;
}

/* The definition of label (the first of that label), or -1. */
static long fg_note_of(const dream_article *a, const char *label)
{
    for (size_t i = 0; i < a->n_notes; i++)
        if (strcmp(a->notes[i].label, label) == 0) return (long)i;
    return -1;
}

/* Whether marker r cites only what is forgotten (its definition cites a forgotten conversation). */
static bool fg_ref_gone(const struct fg *g, const struct dream_article_ref *r)
{
    long k = fg_note_of(g->a, r->label);
    return k >= 0 && g->gone_note[k];
}

static int fg_edit(struct fg *g, size_t from, size_t to, const char *with, size_t with_len)
{
    if (g->n_edits == g->cap_edits) {
        size_t cap = g->cap_edits ? 2 * g->cap_edits : 16;
        struct fg_edit *e = realloc(g->edits, cap * sizeof *e);
        if (!e) return dream_error_set(DREAM_ENOMEM, "out of memory");
        g->edits = e;
        g->cap_edits = cap;
    }
    char *w = NULL;
    if (with && !(w = strndup(with, with_len))) return dream_error_set(DREAM_ENOMEM, "out of memory");
    g->edits[g->n_edits++] = (struct fg_edit){from, to, w};
    return DREAM_OK;
}

/* The line holding byte offset (the last line starting at or before it). */
static size_t fg_line_of(const dream_article *a, size_t offset)
{
    size_t lo = 0, hi = a->n_lines;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (a->lines[mid].start <= offset) lo = mid;
        else hi = mid;
    }
    return lo;
}

static void fg_touch(struct fg *g, size_t line)
{
    long s = g->line_sec[line];
    g->touched[s < 0 ? g->a->n_secs : (size_t)s] = true;
}

/* The length of the list marker (or table or quote opener) that starts a block at s, with its
 * indentation and the space after it; 0 for a plain prose line. */
static size_t fg_item_prefix(const char *s, const char *e)
{
    const char *p = s;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    const char *m = p;
    if (p < e && (*p == '-' || *p == '*' || *p == '+' || *p == '>') && (p + 1 == e || p[1] == ' ')) p++;
    else {
        while (p < e && isdigit((unsigned char)*p)) p++;
        if (p > m && p < e && (*p == '.' || *p == ')') && (p + 1 == e || p[1] == ' ')) p++;
        else p = m;
    }
    if (p == m) return 0;
    while (p < e && *p == ' ') p++;
    return (size_t)(p - s);
}

/* Whether line li may hold claims: prose of the lead or of a body, History or Notes section. */
static bool fg_prose_line(const struct fg *g, size_t li)
{
    const dream_article *a = g->a;
    const struct art_line *L = &a->lines[li];
    const char *s = a->text + L->start, *e = a->text + L->end;
    if (L->fenced || L->heading) return false;
    bool blank = true;
    for (const char *p = s; p < e && blank; p++) blank = isspace((unsigned char)*p) != 0;
    if (blank || art_is_def_line(s, e)) return false;
    long sec = g->line_sec[li];
    if (sec < 0) return g->lead_line[li];
    enum dream_article_section_kind k = a->secs[sec].pub.kind;
    return k == DREAM_SECTION_BODY || k == DREAM_SECTION_HISTORY || k == DREAM_SECTION_NOTES;
}

/* Words before a '.' that do not end a sentence. */
static bool fg_abbreviation(const char *t, size_t start, size_t dot)
{
    static const char *const words[] = {"e.g", "i.e", "vs", "cf", "dr", "mr", "mrs", "ms", "st", "no", "approx", "fig", "ca"};
    size_t w = dot;
    while (w > start && (isalpha((unsigned char)t[w - 1]) || t[w - 1] == '.')) w--;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == dot - w && strncasecmp(t + w, words[i], dot - w) == 0) return true;
    return false;
}

/* The end of the marker "[^label]" at i, or 0. */
static size_t fg_marker_end(const char *t, size_t i, size_t e)
{
    if (i + 3 >= e || t[i] != '[' || t[i + 1] != '^') return 0;
    size_t j = i + 2;
    while (j < e && t[j] != ']' && t[j] != '[' && !isspace((unsigned char)t[j])) j++;
    return j < e && t[j] == ']' && j > i + 2 ? j + 1 : 0;
}

/* Where the sentence starting at s (in a block ending at e) ends: after its closing '.', '!' or
 * '?', the quotes and brackets that close with it and the markers right after it, when
 * whitespace (not before a lowercase word) or the block's end follows; else e. Links, code
 * spans and markers are passed over whole. */
static size_t fg_sentence_end(const char *t, size_t s, size_t e)
{
    for (size_t i = s; i < e; i++) {
        size_t j;
        if (t[i] == '`') {
            size_t n = 0;
            while (i + n < e && t[i + n] == '`') n++;
            const char *close = NULL;
            for (size_t k = i + n; k + n <= e && !close; k++)
                if (memcmp(t + k, t + i, n) == 0 && (k + n == e || t[k + n] != '`')) close = t + k;
            if (close) i = (size_t)(close - t) + n - 1;
            else i += n - 1;
            continue;
        }
        if (t[i] == '[' && i + 1 < e && t[i + 1] == '[') {
            const char *close = strstr(t + i + 2, "]]");
            if (close && (size_t)(close - t) + 2 <= e) i = (size_t)(close - t) + 1;
            continue;
        }
        if ((j = fg_marker_end(t, i, e))) {
            i = j - 1;
            continue;
        }
        if (t[i] != '.' && t[i] != '!' && t[i] != '?') continue;
        if (t[i] == '.' && fg_abbreviation(t, s, i)) continue;
        j = i + 1;
        for (;;) {
            size_t m;
            if (j < e && strchr("\"')]*_", t[j])) j++;
            else if (j + 2 < e && (unsigned char)t[j] == 0xE2 && (unsigned char)t[j + 1] == 0x80 &&
                     ((unsigned char)t[j + 2] == 0x9D || (unsigned char)t[j + 2] == 0x99))
                j += 3; /* ” or ’ */
            else if ((m = fg_marker_end(t, j, e))) j = m;
            else break;
        }
        if (j == e) return e;
        if (!isspace((unsigned char)t[j])) continue;
        size_t k = j;
        while (k < e && isspace((unsigned char)t[k])) k++;
        if (k < e && islower((unsigned char)t[k])) continue;
        return j;
    }
    return e;
}

enum fg_fate { FG_UNCITED, FG_KEEP, FG_GONE };

struct fg_sentence {
    size_t s, e;
    enum fg_fate fate; /* by its own markers */
    bool drop;
};

/* One block of prose [bs, be) (a paragraph, or one list item or table row): its sentences are
 * kept, cut of their forgotten markers, or removed. */
static int fg_block(struct fg *g, size_t bs, size_t be, size_t next_line_start)
{
    dream_article *a = g->a;
    const char *t = a->text;
    size_t pre = fg_item_prefix(t + bs, t + be);
    struct fg_sentence *sv = NULL;
    size_t n = 0, cap = 0;
    int rc = DREAM_OK;
    for (size_t p = bs + pre; p < be;) {
        while (p < be && isspace((unsigned char)t[p])) p++;
        if (p >= be) break;
        size_t e = fg_sentence_end(t, p, be);
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            struct fg_sentence *g2 = realloc(sv, cap * sizeof *g2);
            if (!g2) {
                free(sv);
                return dream_error_set(DREAM_ENOMEM, "out of memory");
            }
            sv = g2;
        }
        sv[n++] = (struct fg_sentence){p, e, FG_UNCITED, false};
        p = e;
    }
    /* the markers of each sentence */
    bool any = false;
    for (size_t r = 0; r < a->n_refs; r++) {
        const struct dream_article_ref *ref = &a->refs[r];
        if (ref->offset < bs || ref->offset >= be) continue;
        g->ref_done[r] = true;
        bool gone = fg_ref_gone(g, ref);
        any |= gone;
        for (size_t i = 0; i < n; i++) {
            if (ref->offset < sv[i].s || ref->offset >= sv[i].e) continue;
            if (!gone) sv[i].fate = FG_KEEP;
            else if (sv[i].fate == FG_UNCITED) sv[i].fate = FG_GONE;
        }
    }
    if (!any) {
        free(sv);
        return DREAM_OK;
    }
    /* an uncited sentence goes with the claim it leads up to (else the one it follows) */
    for (size_t i = 0; i < n; i++) {
        long k = (long)i;
        while (k < (long)n && sv[k].fate == FG_UNCITED) k++;
        if (k == (long)n)
            for (k = (long)i; k >= 0 && sv[k].fate == FG_UNCITED; k--) continue;
        sv[i].drop = k >= 0 && sv[k].fate == FG_GONE;
    }
    struct dbuf b = {0};
    size_t kept = 0;
    rc = dbuf_append(&b, t + bs, pre);
    for (size_t i = 0; !rc && i < n; i++) {
        if (sv[i].drop) {
            g->res.sentences++;
            continue;
        }
        size_t gap_from = i ? sv[i - 1].e : bs + pre;
        if (kept++) rc = dbuf_append(&b, t + gap_from, sv[i].s - gap_from);
        /* the sentence, without its forgotten markers */
        size_t from = sv[i].s;
        for (size_t r = 0; !rc && r < a->n_refs; r++) {
            const struct dream_article_ref *ref = &a->refs[r];
            if (ref->offset < sv[i].s || ref->offset >= sv[i].e || !fg_ref_gone(g, ref)) continue;
            rc = dbuf_append(&b, t + from, ref->offset - from);
            from = ref->offset + strlen(ref->label) + 3;
            g->res.citations++;
        }
        if (!rc) rc = dbuf_append(&b, t + from, sv[i].e - from);
    }
    for (size_t i = 0; i < n; i++)
        if (sv[i].drop)
            for (size_t r = 0; r < a->n_refs; r++)
                if (a->refs[r].offset >= sv[i].s && a->refs[r].offset < sv[i].e && fg_ref_gone(g, &a->refs[r])) g->res.citations++;
    if (!rc) rc = kept ? fg_edit(g, bs, be, b.data ? b.data : "", b.len) : fg_edit(g, bs, next_line_start, NULL, 0);
    if (!rc) fg_touch(g, fg_line_of(a, bs));
    dbuf_free(&b);
    free(sv);
    return rc;
}

/* The blocks of prose, each given to fg_block. */
static int fg_blocks(struct fg *g)
{
    const dream_article *a = g->a;
    int rc = DREAM_OK;
    for (size_t li = 0; !rc && li < a->n_lines;) {
        if (!fg_prose_line(g, li)) {
            li++;
            continue;
        }
        size_t first = li++;
        const char *t = a->text;
        bool table = t[a->lines[first].start] == '|';
        while (!table && li < a->n_lines && fg_prose_line(g, li) && g->line_sec[li] == g->line_sec[first] &&
               !fg_item_prefix(t + a->lines[li].start, t + a->lines[li].end) && t[a->lines[li].start] != '|')
            li++;
        rc = fg_block(g, a->lines[first].start, a->lines[li - 1].end, a->lines[li - 1].next);
    }
    return rc;
}

/* Forgotten markers outside prose (a heading, the infobox, See also) and forgotten definitions. */
static int fg_rest(struct fg *g)
{
    const dream_article *a = g->a;
    int rc = DREAM_OK;
    for (size_t r = 0; !rc && r < a->n_refs; r++) {
        if (g->ref_done[r] || !fg_ref_gone(g, &a->refs[r])) continue;
        size_t from = a->refs[r].offset;
        rc = fg_edit(g, from, from + strlen(a->refs[r].label) + 3, NULL, 0);
        g->res.citations++;
        fg_touch(g, fg_line_of(a, from));
    }
    for (size_t i = 0; !rc && i < a->n_notes; i++) {
        if (!g->gone_note[i]) continue;
        const struct art_line *L = &a->lines[a->notes[i].line - 1];
        rc = fg_edit(g, L->start, L->next, NULL, 0);
    }
    return rc;
}

static int fg_cmp_edit(const void *x, const void *y)
{
    const struct fg_edit *a = x, *b = y;
    return a->from < b->from ? -1 : a->from > b->from;
}

/* The text with every edit made, into a. The text reads back afresh, and an edit can change its
 * sections (taking a marker out of "[^1]## B" leaves a heading), so the touched flags move to
 * the sections that read back at the place where a touched one's heading went; a section whose
 * heading an edit took out, or that only the new reading has, is untouched. */
static int fg_apply(struct fg *g)
{
    dream_article *a = g->a;
    qsort(g->edits, g->n_edits, sizeof *g->edits, fg_cmp_edit);
    size_t n_old = a->n_secs;
    size_t *head = malloc((n_old + 1) * sizeof *head); /* per old section: its heading's offset after the edits */
    if (!head) return dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_old; i++) head[i] = a->lines[a->secs[i].pub.line - 1].start;
    struct dbuf b = {0};
    size_t at = 0, s = 0; /* s: the first old section whose heading is not placed yet */
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i <= g->n_edits; i++) {
        const struct fg_edit *e = i < g->n_edits ? &g->edits[i] : NULL;
        size_t from = e ? e->from : a->len;
        if (from < at) continue; /* inside an edit already made (a line both ways removed) */
        for (; s < n_old && head[s] < from; s++) head[s] = b.len + (head[s] - at);
        rc = dbuf_append(&b, a->text + at, from - at);
        if (!e) break;
        if (!rc && e->with) rc = dbuf_puts(&b, e->with);
        for (; s < n_old && head[s] < e->to; s++) head[s] = SIZE_MAX;
        at = e->to;
    }
    bool *touched = NULL;
    if (!rc) rc = dream_article_set_text(a, b.data ? b.data : "", b.len);
    if (!rc && !(touched = calloc(a->n_secs + 1, sizeof *touched))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t j = 0; !rc && j < a->n_secs; j++)
        for (size_t i = 0; i < n_old && !touched[j]; i++)
            touched[j] = g->touched[i] && head[i] == a->lines[a->secs[j].pub.line - 1].start;
    if (!rc) {
        free(g->touched);
        g->touched = touched;
    }
    dbuf_free(&b);
    free(head);
    return rc;
}

/* Sections the edits left without prose (nor subsections) go, from the last up, so that a
 * parent emptied that way goes too. */
static int fg_empty_sections(struct fg *g)
{
    dream_article *a = g->a;
    int rc = DREAM_OK;
    for (size_t i = a->n_secs; !rc && i-- > 0;) {
        const struct dream_article_section *s = &a->secs[i].pub;
        bool prose = s->kind == DREAM_SECTION_BODY || s->kind == DREAM_SECTION_HISTORY || s->kind == DREAM_SECTION_NOTES;
        bool blank = true;
        for (const char *p = s->body; *p && blank; p++) blank = isspace((unsigned char)*p) != 0;
        if (!g->touched[i] || !prose || !blank || dream_article_section_end(a, i) != i + 1) continue;
        int level = s->level;
        for (size_t j = i; j-- > 0;)
            if (a->secs[j].pub.level < level) {
                g->touched[j] = true;
                break;
            }
        rc = dream_article_section_remove(a, i);
        g->res.sections++;
    }
    return rc;
}

int dream_article_forget(dream_article *a, const char *const *convs, size_t n_convs, struct dream_article_forget_result *out)
{
    memset(out, 0, sizeof *out);
    if (dream_article_editable(a, NULL)) return DREAM_EFORMAT;
    struct fg g = {.a = a, .convs = convs, .n_convs = n_convs};
    g.gone_note = calloc(a->n_notes + 1, sizeof *g.gone_note);
    g.ref_done = calloc(a->n_refs + 1, sizeof *g.ref_done);
    g.line_sec = calloc(a->n_lines + 1, sizeof *g.line_sec);
    g.lead_line = calloc(a->n_lines + 1, sizeof *g.lead_line);
    g.touched = calloc(a->n_secs + 1, sizeof *g.touched);
    int rc = g.gone_note && g.ref_done && g.line_sec && g.lead_line && g.touched ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    bool any = false;
    for (size_t i = 0; !rc && i < a->n_notes; i++) any |= g.gone_note[i] = fg_forgotten(&g, a->notes[i].cite.conv);
    if (!rc && any) {
        for (size_t i = 0; i < a->n_items; i++)
            if (a->items[i].kind == ART_LEAD && a->items[i].line >= 1) g.lead_line[a->items[i].line - 1] = true;
        long sec = -1;
        for (size_t li = 0; li < a->n_lines; li++) {
            while ((size_t)(sec + 1) < a->n_secs && (size_t)a->secs[sec + 1].pub.line == li + 1) sec++;
            g.line_sec[li] = sec;
        }
        rc = fg_blocks(&g);
        if (!rc) rc = fg_rest(&g);
        if (!rc) rc = fg_apply(&g);
        if (!rc) rc = fg_empty_sections(&g);
        g.res.changed = true;
    }
    for (size_t i = 0; i < g.n_edits; i++) free(g.edits[i].with);
    free(g.edits);
    free(g.gone_note);
    free(g.ref_done);
    free(g.line_sec);
    free(g.lead_line);
    free(g.touched);
    if (rc) return rc;
    for (size_t r = 0; r < a->n_refs && !g.res.cited; r++) {
        long k = fg_note_of(a, a->refs[r].label);
        g.res.cited = k >= 0 && a->notes[k].cite.conv && !dream_citation_is_placeholder(a->notes[k].cite.conv);
    }
    *out = g.res;
    return DREAM_OK;
}
