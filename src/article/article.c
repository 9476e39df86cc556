/* article.c — parse and write one article; its views and edits (include/dream/article.h). */
#include "article_internal.h"

#include "dream/error.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers ----------------------------------------------------------------------- */

/* Parts are NUL-terminated strings, so a NUL byte in the input would cut them short: for such
 * input (not an article a person or the program writes) the writer falls back to the text and
 * edits are refused until normalize has removed the NULs. */
static bool has_nul(const dream_article *a)
{
    return memchr(a->text, '\0', a->len) != NULL;
}

/* Edits need text whose structure they can place things in: no NUL bytes, no code fence that
 * never closes (anything added after its opener would vanish inside it), and no merge the person
 * left unresolved (an edit would commit both sides and the markers). */
int dream_article_editable(const dream_article *a, int *fence_line)
{
    if (fence_line) *fence_line = a->unclosed_fence_line;
    if (has_nul(a)) {
        if (fence_line) *fence_line = 0;
        return dream_error_set(DREAM_EFORMAT, "the article holds NUL bytes; normalize it before editing");
    }
    if (a->conflict_line) {
        if (fence_line) *fence_line = 0;
        return dream_error_set(DREAM_EFORMAT, "the article holds an unresolved merge conflict (<<<<<<< on line %d); resolve it before dream edits it",
                               a->conflict_line);
    }
    if (a->unclosed_fence_line)
        return dream_error_set(DREAM_EFORMAT,
                               "the code fence opened on line %d never closes, so an edit after it would vanish "
                               "inside it; normalize the article (it closes the fence) before editing",
                               a->unclosed_fence_line);
    return 0;
}

static int refuse_unsafe(const dream_article *a)
{
    return dream_article_editable(a, NULL);
}

static bool is_blank_span(const char *s, const char *e)
{
    for (; s < e; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\f' && *s != '\v') return false;
    return true;
}

char *art_strndup_trim(const char *s, const char *e)
{
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    char *r = malloc((size_t)(e - s) + 1);
    if (!r) return NULL;
    memcpy(r, s, (size_t)(e - s));
    r[e - s] = '\0';
    return r;
}

static char *dup_span(const char *s, const char *e)
{
    char *r = malloc((size_t)(e - s) + 1);
    if (!r) return NULL;
    memcpy(r, s, (size_t)(e - s));
    r[e - s] = '\0';
    return r;
}

/* Case-insensitive ASCII prefix test on [s, e). */
static bool span_prefix_ci(const char *s, const char *e, const char *p)
{
    size_t n = strlen(p);
    if ((size_t)(e - s) < n) return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)p[i])) return false;
    return true;
}

size_t art_fence_open(const char *s, const char *e, char *ch)
{
    int indent = 0;
    while (s < e && *s == ' ' && indent < 4) s++, indent++;
    if (indent > 3 || s >= e || (*s != '`' && *s != '~')) return 0;
    char c = *s;
    size_t n = 0;
    while (s + n < e && s[n] == c) n++;
    if (n < 3) return 0;
    /* A backtick fence's info string may not contain a backtick (CommonMark). */
    if (c == '`')
        for (const char *p = s + n; p < e; p++)
            if (*p == '`') return 0;
    *ch = c;
    return n;
}

bool art_fence_close(const char *s, const char *e, char ch, size_t n)
{
    int indent = 0;
    while (s < e && *s == ' ' && indent < 4) s++, indent++;
    if (indent > 3) return false;
    size_t k = 0;
    while (s + k < e && s[k] == ch) k++;
    return k >= n && is_blank_span(s + k, e);
}

int art_heading_level(const char *s, const char *e)
{
    int n = 0;
    while (s + n < e && s[n] == '#' && n < 7) n++;
    if (n < 1 || n > 6) return 0;
    if (s + n == e || s[n] == ' ' || s[n] == '\t' || s[n] == '\r') return n;
    return 0;
}

/* The heading text of a heading line: markers and an optional closing run of '#' removed. */
static char *heading_text(const char *s, const char *e, int level)
{
    s += level;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    const char *t = e;
    while (t > s && t[-1] == '#') t--;
    if (t < e && (t == s || t[-1] == ' ' || t[-1] == '\t')) e = t;
    return art_strndup_trim(s, e);
}

enum dream_article_section_kind art_section_kind(int level, const char *title)
{
    if (level != 2) return DREAM_SECTION_BODY;
    if (strcasecmp(title, "History") == 0) return DREAM_SECTION_HISTORY;
    if (strcasecmp(title, "See also") == 0) return DREAM_SECTION_SEE_ALSO;
    if (strcasecmp(title, "Notes") == 0) return DREAM_SECTION_NOTES;
    if (strcasecmp(title, "References") == 0) return DREAM_SECTION_REFERENCES;
    return DREAM_SECTION_BODY;
}

/* Whether the bytes at s[0..n) start a letter or digit of a script past ASCII, its length into
 * *k (1 when not: a byte to pass over). Punctuation and symbols are not: the Latin-1 signs,
 * general punctuation through the symbol blocks, CJK punctuation, the small and fullwidth forms'
 * punctuation, and the pictographs. A coarse table, but a fixed one: an anchor must not depend on
 * the locale. */
static bool anchor_letter(const char *s, size_t n, size_t *k)
{
    const unsigned char *u = (const unsigned char *)s;
    int len = u[0] >= 0x80 ? utf8_seq_len(u, n) : 0;
    *k = len > 0 ? (size_t)len : 1;
    if (len < 2) return false;
    uint32_t c = (uint32_t)(u[0] & (0x7F >> len));
    for (int i = 1; i < len; i++) c = c << 6 | (u[i] & 0x3F);
    return !((c >= 0xA0 && c <= 0xBF) || c == 0xD7 || c == 0xF7 || (c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
             (c >= 0xFE30 && c <= 0xFE6F) || (c >= 0xFF00 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) || c >= 0x1F000);
}

char *dream_article_anchor(const char *heading)
{
    size_t n = strlen(heading);
    char *r = malloc(n + 1);
    if (!r) return NULL;
    size_t o = 0;
    bool dash = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)tolower((unsigned char)heading[i]);
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && o > 0) r[o++] = '-';
            dash = false;
            r[o++] = (char)c;
        } else {
            dash = true;
        }
    }
    /* No ASCII letter or digit ("Русский", "日本語"): the heading's own letters, so that two such
     * headings do not share the empty anchor. Only then, so that no anchor an article already
     * has changes. */
    if (o == 0) {
        dash = false;
        for (size_t i = 0, k; i < n; i += k) {
            if (!anchor_letter(heading + i, n - i, &k)) {
                dash = true;
                continue;
            }
            if (dash && o > 0) r[o++] = '-';
            dash = false;
            memcpy(r + o, heading + i, k);
            o += k;
        }
    }
    /* No letter at all ("???", "!!!", a pictograph): every character but the spaces and control
     * characters, each run of those one '-', so such a section can be read and an unknown name
     * finds none. */
    if (o == 0) {
        dash = false;
        for (size_t i = 0; i < n;) {
            int k = utf8_seq_len((const unsigned char *)heading + i, n - i);
            unsigned char c = (unsigned char)heading[i];
            if (k <= 0 || c <= ' ' || c == 0x7f) { /* spaces and control characters, a NUL among them */
                dash = k > 0 || dash;
                i++;
                continue;
            }
            if (dash && o > 0) r[o++] = '-';
            dash = false;
            memcpy(r + o, heading + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        }
    }
    r[o] = '\0';
    return r;
}

static int label_number(const char *label)
{
    if (!label[0] || label[0] == '0' || strlen(label) > 6) return 0;
    int n = 0;
    for (const char *p = label; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        n = n * 10 + (*p - '0');
    }
    return n;
}

/* ---- the index of one parse -------------------------------------------------------------- */

static void free_footnote(struct dream_article_footnote *f)
{
    free((char *)f->label);
    free((char *)f->text);
    free((char *)f->cite.conv);
    free((char *)f->cite.msg);
    free((char *)f->cite.date);
    free((char *)f->cite.title);
    free((char *)f->cite.note);
    free((char *)f->block);
}

static void art_clear(dream_article *a)
{
    free(a->text);
    free(a->lines);
    free(a->fm_raw);
    free(a->front);
    free(a->h1_raw);
    free(a->title);
    for (size_t i = 0; i < a->n_items; i++) free(a->items[i].raw);
    free(a->items);
    for (size_t i = 0; i < a->n_secs; i++) {
        free(a->secs[i].heading_raw);
        free(a->secs[i].body);
        free(a->secs[i].title);
        free(a->secs[i].anchor);
    }
    free(a->secs);
    free(a->lead);
    for (size_t i = 0; i < a->n_fields; i++) {
        free((char *)a->fields[i].key);
        free((char *)a->fields[i].value);
    }
    free(a->fields);
    for (size_t i = 0; i < a->n_notes; i++) free_footnote(&a->notes[i]);
    free(a->notes);
    free(a->key_from);
    free(a->key_to);
    for (size_t i = 0; i < a->n_aliases; i++) free(a->aliases[i]);
    free(a->aliases);
    for (size_t i = 0; i < a->n_cats; i++) free(a->cats[i]);
    free(a->cats);
    for (size_t i = 0; i < a->n_refs; i++) free((char *)a->refs[i].label);
    free(a->refs);
    for (size_t i = 0; i < a->n_links; i++) {
        free((char *)a->links[i].target);
        free((char *)a->links[i].section);
        free((char *)a->links[i].display);
    }
    free(a->links);
    for (size_t i = 0; i < a->n_tmpls; i++) {
        free((char *)a->tmpls[i].name);
        free((char *)a->tmpls[i].args);
    }
    free(a->tmpls);
    memset(a, 0, sizeof *a);
}

/* Grows *arr (of elements of size sz) so that one more fits; 0 or -1. */
static int grow(void **arr, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, nc * sz);
    if (!p) return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

/* A block id's characters: what Obsidian allows in one. */
static bool block_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

void art_parse_citation_at(struct dream_article_footnote *f, size_t *key_from, size_t *key_to)
{
    const char *t = f->text;
    f->n_conv = 0;
    f->well_formed = false;
    *key_from = *key_to = 0;
    const char *first = NULL, *first_end = NULL; /* the key's "conv:HASH#MSG" */
    const char *key_end = NULL;                  /* where the key ends (after ` or ]]) */
    bool link_ok = true;
    /* the link form: [[NOTE#^BLOCK|conv:HASH#MSG]] at the start */
    if (t[0] == '[' && t[1] == '[') {
        const char *close = strstr(t + 2, "]]");
        const char *bar = close ? memchr(t + 2, '|', (size_t)(close - t - 2)) : NULL;
        if (bar && strncmp(bar + 1, "conv:", 5) == 0) {
            first = bar + 1;
            first_end = close;
            key_end = close + 2;
            f->n_conv++;
            const char *hash = memchr(t + 2, '#', (size_t)(bar - t - 2));
            f->cite.note = art_strndup_trim(t + 2, hash ? hash : bar);
            if (hash && hash[1] == '^') f->block = dup_span(hash + 2, bar);
            link_ok = f->cite.note && f->cite.note[0] && f->block && f->block[0];
            for (const char *c = f->block; link_ok && *c; c++) link_ok = block_char(*c);
            for (const char *c = first; link_ok && c < first_end; c++) link_ok = *c != '[' && *c != ' ';
        }
    }
    for (const char *p = key_end ? key_end : t; *p; p++) {
        if (*p != '`') continue;
        const char *q = strchr(p + 1, '`');
        if (!q) break;
        if (strncmp(p + 1, "conv:", 5) == 0) {
            if (!first) first = p + 1, first_end = q, key_end = q + 1;
            f->n_conv++;
        }
        p = q;
    }
    if (!first) return;
    *key_from = (size_t)((f->block || f->cite.note ? t : first - 1) - t);
    *key_to = (size_t)(key_end - t);
    const char *h = first + 5, *hash_end = h;
    while (hash_end < first_end && *hash_end != '#') hash_end++;
    f->cite.conv = dup_span(h, hash_end);
    if (hash_end < first_end) f->cite.msg = dup_span(hash_end + 1, first_end);
    /* ` (YYYY-MM-DD, title)` or ` (undated, title)` right after the key. */
    const char *p = key_end;
    bool rest_ok = false;
    if (p[0] == ' ' && p[1] == '(') {
        p += 2;
        const char *d = p;
        size_t dl = 0; /* the date's length: 10, or that of "undated"; 0 when it is neither */
        if (strncmp(d, DREAM_CITATION_UNDATED, strlen(DREAM_CITATION_UNDATED)) == 0) {
            dl = strlen(DREAM_CITATION_UNDATED);
        } else {
            bool date_ok = strlen(d) >= 10;
            for (int i = 0; date_ok && i < 10; i++)
                date_ok = (i == 4 || i == 7) ? d[i] == '-' : isdigit((unsigned char)d[i]) != 0;
            if (date_ok) dl = 10;
        }
        /* 0000-00-00 is how older versions wrote "undated" */
        if (dl == 10 && strncmp(d, "0000-00-00", 10) != 0) f->cite.date = dup_span(d, d + 10);
        size_t tl = strlen(p);
        if (dl && d[dl] == ',' && d[dl + 1] == ' ' && tl > dl + 3 && p[tl - 1] == ')') {
            f->cite.title = dup_span(d + dl + 2, p + tl - 1);
            rest_ok = f->cite.title && f->cite.title[0];
        }
    }
    bool hash_ok = f->cite.conv && strlen(f->cite.conv) >= 8;
    for (const char *c = f->cite.conv; hash_ok && *c; c++)
        hash_ok = (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f');
    bool msg_ok = f->cite.msg && f->cite.msg[0];
    for (const char *c = f->cite.msg; msg_ok && *c; c++)
        msg_ok = isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.' || *c == ':';
    f->well_formed = *key_from == 0 && f->n_conv == 1 && hash_ok && msg_ok && rest_ok && link_ok;
}

struct scan {
    dream_article *a;
    size_t cap_notes, cap_refs, cap_links, cap_tmpls;
    bool oom;
    long see_also_from, see_also_to; /* byte range of the See also section, -1 */
};

/* For "[[...]]" or "{{...}}" opening at i on a line ending at e: the index of the closing pair,
 * or 0 when it does not close on the line, is empty, or another opener comes first. */
static size_t pair_close(const char *t, size_t i, size_t e, char open, char close)
{
    if (t[i] != open || i + 1 >= e || t[i + 1] != open) return 0;
    size_t j = i + 2;
    while (j + 1 < e && !(t[j] == close && t[j + 1] == close) && !(t[j] == open && t[j + 1] == open)) j++;
    return j + 1 < e && t[j] == close && t[j + 1] == close && j > i + 2 ? j : 0;
}

/* Indexes the markers, links and templates of line [s, e) (line number ln), skipping code spans. */
static void scan_inline(struct scan *sc, size_t s, size_t e, int ln, bool refs)
{
    dream_article *a = sc->a;
    const char *t = a->text;
    for (size_t i = s; i < e && !sc->oom; i++) {
        if (t[i] == '`') {
            size_t n = 0;
            while (i + n < e && t[i + n] == '`') n++;
            /* find a run of exactly n backticks later on the line */
            size_t j = i + n, close = 0;
            while (j < e) {
                if (t[j] == '`') {
                    size_t k = 0;
                    while (j + k < e && t[j + k] == '`') k++;
                    if (k == n) {
                        close = j + k;
                        break;
                    }
                    j += k;
                } else {
                    j++;
                }
            }
            i = close ? close - 1 : i + n - 1;
            continue;
        }
        if (refs && t[i] == '[' && i + 2 < e && t[i + 1] == '^') {
            size_t j = i + 2;
            while (j < e && t[j] != ']' && t[j] != '[' && !isspace((unsigned char)t[j])) j++;
            if (j < e && t[j] == ']' && j > i + 2) {
                if (grow((void **)&a->refs, a->n_refs, &sc->cap_refs, sizeof *a->refs)) {
                    sc->oom = true;
                    return;
                }
                struct dream_article_ref *r = &a->refs[a->n_refs];
                r->label = dup_span(t + i + 2, t + j);
                if (!r->label) {
                    sc->oom = true;
                    return;
                }
                r->number = label_number(r->label);
                r->line = ln;
                r->offset = i;
                a->n_refs++;
                i = j;
                continue;
            }
        }
        size_t j;
        if ((j = pair_close(t, i, e, '[', ']'))) {
            if (grow((void **)&a->links, a->n_links, &sc->cap_links, sizeof *a->links)) {
                sc->oom = true;
                return;
            }
            struct dream_article_link *l = &a->links[a->n_links];
            memset(l, 0, sizeof *l);
            const char *cs = t + i + 2, *ce = t + j;
            const char *bar = memchr(cs, '|', (size_t)(ce - cs));
            const char *te = bar ? bar : ce;
            if (bar && bar > cs && bar[-1] == '\\') te--; /* [[T\|alias]]: the pipe escaped, as in a table */
            const char *hash = memchr(cs, '#', (size_t)(te - cs));
            l->target = art_strndup_trim(cs, hash ? hash : te);
            if (hash) l->section = art_strndup_trim(hash + 1, te);
            if (bar) l->display = art_strndup_trim(bar + 1, ce);
            if (!l->target || (hash && !l->section) || (bar && !l->display)) {
                free((char *)l->target);
                free((char *)l->section);
                free((char *)l->display);
                sc->oom = true;
                return;
            }
            l->line = ln;
            l->offset = i;
            l->len = j + 2 - i;
            l->in_see_also = sc->see_also_from >= 0 && (long)i >= sc->see_also_from && (long)i < sc->see_also_to;
            a->n_links++;
            i = j + 1;
            continue;
        }
        if ((j = pair_close(t, i, e, '{', '}'))) {
            if (grow((void **)&a->tmpls, a->n_tmpls, &sc->cap_tmpls, sizeof *a->tmpls)) {
                sc->oom = true;
                return;
            }
            struct dream_article_template *m = &a->tmpls[a->n_tmpls];
            const char *cs = t + i + 2, *ce = t + j;
            const char *bar = memchr(cs, '|', (size_t)(ce - cs));
            m->name = art_strndup_trim(cs, bar ? bar : ce);
            m->args = bar ? dup_span(bar + 1, ce) : NULL;
            if (!m->name || (bar && !m->args)) {
                free((char *)m->name);
                free((char *)m->args);
                sc->oom = true;
                return;
            }
            m->line = ln;
            a->n_tmpls++;
            i = j + 1;
        }
    }
}

/* A footnote definition line: "[^label]:" at the start. Returns the label end or 0. */
static size_t def_label_end(const char *t, size_t s, size_t e)
{
    if (e - s < 5 || t[s] != '[' || t[s + 1] != '^') return 0;
    size_t j = s + 2;
    while (j < e && t[j] != ']' && t[j] != '[' && !isspace((unsigned char)t[j])) j++;
    if (j >= e - 1 || t[j] != ']' || t[j + 1] != ':' || j == s + 2) return 0;
    return j;
}

bool art_is_def_line(const char *s, const char *e)
{
    return def_label_end(s, 0, (size_t)(e - s)) != 0;
}

static int add_item(dream_article *a, size_t *cap, enum art_item_kind kind, size_t s, size_t e, int line)
{
    if (grow((void **)&a->items, a->n_items, cap, sizeof *a->items)) return -1;
    char *raw = dup_span(a->text + s, a->text + e);
    if (!raw) return -1;
    a->items[a->n_items++] = (struct art_item){kind, raw, line};
    return 0;
}

static enum art_item_kind header_line_kind(const char *s, const char *e)
{
    if (is_blank_span(s, e)) return ART_BLANK;
    char *tr = art_strndup_trim(s, e);
    enum art_item_kind k = ART_LEAD;
    if (!tr) return k;
    if (strcasecmp(tr, "{{stub}}") == 0) k = ART_STUB;
    else if (span_prefix_ci(tr, tr + strlen(tr), "*Part of a series on") ||
             span_prefix_ci(tr, tr + strlen(tr), "_Part of a series on"))
        k = ART_BANNER;
    else if (span_prefix_ci(tr, tr + strlen(tr), "categories:")) k = ART_CATEGORIES;
    else if (span_prefix_ci(tr, tr + strlen(tr), "*Redirects to [[")) k = ART_REDIRECT;
    free(tr);
    return k;
}

static bool is_info_opener(const char *s, const char *e)
{
    char ch;
    size_t n = art_fence_open(s, e, &ch);
    if (!n) return false;
    while (*s == ' ') s++;
    char *info = art_strndup_trim(s + n, e);
    bool r = info && strcmp(info, "info") == 0;
    free(info);
    return r;
}

static int parse_infobox_fields(dream_article *a, size_t li_first, size_t li_last)
{
    size_t cap = 0;
    for (size_t li = li_first; li <= li_last && li < a->n_lines; li++) {
        const struct art_line *L = &a->lines[li];
        const char *s = a->text + L->start, *e = a->text + L->end;
        const char *colon = memchr(s, ':', (size_t)(e - s));
        if (!colon) continue;
        if (grow((void **)&a->fields, a->n_fields, &cap, sizeof *a->fields)) return -1;
        struct dream_article_field *f = &a->fields[a->n_fields];
        f->key = art_strndup_trim(s, colon);
        f->value = art_strndup_trim(colon + 1, e);
        f->line = (int)li + 1;
        if (!f->key || !f->value) {
            free((char *)f->key);
            free((char *)f->value);
            return -1;
        }
        a->n_fields++;
    }
    return 0;
}

/* Splits the text into lines and marks fences and headings. */
static int split_lines(dream_article *a)
{
    size_t cap = 0;
    const char *t = a->text;
    size_t pos = 0;
    bool in = false;
    char fch = 0;
    size_t flen = 0;
    size_t opener = 0;
    a->fm_len = art_front_matter_span(t, a->len, &a->fm_lines);
    while (pos < a->len) {
        const char *nl = memchr(t + pos, '\n', a->len - pos);
        size_t end = nl ? (size_t)(nl - t) : a->len;
        if (grow((void **)&a->lines, a->n_lines, &cap, sizeof *a->lines)) return -1;
        struct art_line *L = &a->lines[a->n_lines];
        *L = (struct art_line){pos, end, nl ? end + 1 : a->len, false, false, 0};
        if (a->n_lines < a->fm_lines) {
            L->fenced = true; /* front matter: YAML, hidden from every Markdown rule */
        } else if (in) {
            L->fenced = true;
            if (art_fence_close(t + pos, t + end, fch, flen)) {
                L->delim = true;
                in = false;
            }
        } else {
            char ch;
            size_t n = art_fence_open(t + pos, t + end, &ch);
            if (n) {
                in = true;
                fch = ch;
                flen = n;
                L->fenced = L->delim = true;
                opener = a->n_lines;
            } else {
                L->heading = art_heading_level(t + pos, t + end);
            }
        }
        a->n_lines++;
        pos = L->next;
    }
    a->unclosed_fence_line = in ? (int)opener + 1 : 0;
    /* a merge left unresolved: a "<<<<<<<" line with a ">>>>>>>" line after it */
    a->conflict_line = 0;
    for (size_t i = 0, open = 0; i < a->n_lines && !a->conflict_line; i++) {
        const struct art_line *L = &a->lines[i];
        if (L->end - L->start >= 7 && !memcmp(t + L->start, "<<<<<<<", 7) && !open) open = i + 1;
        else if (open && L->end - L->start >= 7 && !memcmp(t + L->start, ">>>>>>>", 7)) a->conflict_line = (int)open;
    }
    return 0;
}

int art_reparse(dream_article *a, const char *text, size_t len)
{
    art_clear(a);
    a->infobox_item = -1;
    a->text = malloc(len + 1);
    if (!a->text) goto oom;
    if (len) memcpy(a->text, text, len);
    a->text[len] = '\0';
    a->len = len;
    if (split_lines(a)) goto oom;

    const char *t = a->text;
    size_t li = 0, n = a->n_lines;
    /* The H1: the first heading, when it is of level 1. */
    size_t first_heading = n;
    for (size_t i = 0; i < n; i++)
        if (a->lines[i].heading) {
            first_heading = i;
            break;
        }
    size_t header_from = a->fm_lines;
    if (a->fm_len && !(a->fm_raw = dup_span(t, t + a->fm_len))) goto oom;
    if (first_heading < n && a->lines[first_heading].heading == 1) {
        const struct art_line *L = &a->lines[first_heading];
        a->front = dup_span(t + a->fm_len, t + L->start);
        a->h1_raw = dup_span(t + L->start, t + L->next);
        a->title = heading_text(t + L->start, t + L->end, 1);
        a->h1_line = (int)first_heading + 1;
        if (!a->front || !a->h1_raw || !a->title) goto oom;
        header_from = first_heading + 1;
    } else {
        a->front = dup_span(t + a->fm_len, t + a->fm_len);
        if (!a->front) goto oom;
    }
    /* Header items up to the next heading. */
    size_t icap = 0;
    li = header_from;
    while (li < n && !a->lines[li].heading) {
        const struct art_line *L = &a->lines[li];
        if (L->delim) {
            size_t j = li + 1; /* the closing delimiter, or n when the fence never closes */
            while (j < n && !a->lines[j].delim) j++;
            /* j: the closing delimiter or n */
            size_t last = j < n ? j : n - 1;
            bool info = is_info_opener(t + L->start, t + L->end);
            if (add_item(a, &icap, info ? ART_INFOBOX : ART_CODE, L->start, a->lines[last].next, (int)li + 1)) goto oom;
            if (info) {
                a->n_infobox++;
                if (a->infobox_item < 0) {
                    a->infobox_item = (int)a->n_items - 1;
                    if (li + 1 <= last && parse_infobox_fields(a, li + 1, j < n ? j - 1 : last)) goto oom;
                }
            }
            li = last + 1;
            continue;
        }
        enum art_item_kind k = header_line_kind(t + L->start, t + L->end);
        if (add_item(a, &icap, k, L->start, L->next, (int)li + 1)) goto oom;
        li++;
    }
    /* Sections. */
    size_t scap = 0;
    while (li < n) {
        const struct art_line *H = &a->lines[li];
        size_t j = li + 1;
        while (j < n && !a->lines[j].heading) j++;
        size_t body_end = j < n ? a->lines[j].start : a->len;
        if (grow((void **)&a->secs, a->n_secs, &scap, sizeof *a->secs)) goto oom;
        struct art_section *S = &a->secs[a->n_secs];
        memset(S, 0, sizeof *S);
        a->n_secs++;
        S->heading_raw = dup_span(t + H->start, t + H->next);
        S->body = dup_span(t + H->next, t + body_end);
        S->title = heading_text(t + H->start, t + H->end, H->heading);
        S->anchor = S->title ? dream_article_anchor(S->title) : NULL;
        if (!S->heading_raw || !S->body || !S->title || !S->anchor) goto oom;
        S->pub = (struct dream_article_section){H->heading, S->title, S->anchor, S->body, (int)li + 1,
                                                art_section_kind(H->heading, S->title)};
        li = j;
    }

    /* Inline index: definitions, markers, links, templates. */
    struct scan sc = {.a = a, .see_also_from = -1, .see_also_to = -1};
    for (size_t i = 0; i < a->n_secs; i++)
        if (a->secs[i].pub.kind == DREAM_SECTION_SEE_ALSO && sc.see_also_from < 0) {
            size_t s = a->lines[a->secs[i].pub.line - 1].start;
            sc.see_also_from = (long)s;
            sc.see_also_to = (long)(s + strlen(a->secs[i].heading_raw) + strlen(a->secs[i].body));
        }
    size_t info_from = 0, info_to = 0; /* lines inside the infobox, 1-based inclusive */
    if (a->infobox_item >= 0) {
        info_from = (size_t)a->items[a->infobox_item].line + 1;
        size_t k = 0;
        for (const char *p = a->items[a->infobox_item].raw; *p; p++) k += *p == '\n';
        info_to = (size_t)a->items[a->infobox_item].line + k - 1;
    }
    for (size_t i = 0; i < n && !sc.oom; i++) {
        const struct art_line *L = &a->lines[i];
        bool in_info = i + 1 >= info_from && i + 1 <= info_to && !L->delim;
        if (L->fenced && !in_info) continue;
        if (L->heading) {
            scan_inline(&sc, L->start, L->end, (int)i + 1, true);
            continue;
        }
        size_t le = def_label_end(t, L->start, L->end);
        if (le && !in_info) {
            if (grow((void **)&a->notes, a->n_notes, &sc.cap_notes, sizeof *a->notes)) goto oom;
            struct dream_article_footnote *f = &a->notes[a->n_notes];
            memset(f, 0, sizeof *f);
            a->n_notes++;
            f->label = dup_span(t + L->start + 2, t + le);
            f->text = art_strndup_trim(t + le + 2, t + L->end);
            if (!f->label || !f->text) goto oom;
            f->number = label_number(f->label);
            f->line = (int)i + 1;
            size_t kf, kt;
            art_parse_citation_at(f, &kf, &kt);
            size_t *nf = realloc(a->key_from, a->n_notes * sizeof *nf);
            if (nf) a->key_from = nf;
            size_t *nt = nf ? realloc(a->key_to, a->n_notes * sizeof *nt) : NULL;
            if (!nt) goto oom;
            a->key_to = nt;
            /* the key's span in the text: the definition's text starts after "]:" and blanks */
            size_t text_at = le + 2;
            while (text_at < L->end && isspace((unsigned char)t[text_at])) text_at++;
            a->key_from[a->n_notes - 1] = kt ? text_at + kf : 0;
            a->key_to[a->n_notes - 1] = kt ? text_at + kt : 0;
            scan_inline(&sc, le + 2, L->end, (int)i + 1, false);
            continue;
        }
        scan_inline(&sc, L->start, L->end, (int)i + 1, true);
    }
    if (sc.oom) goto oom;
    if (art_front_index(a)) goto oom;
    return 0;
oom:
    art_clear(a);
    a->infobox_item = -1;
    return dream_error_set(DREAM_ENOMEM, "out of memory parsing an article");
}

bool dream_article_file_holds(const char *disk, size_t len, const char *text, size_t tlen)
{
    if (len >= 3 && !memcmp(disk, "\xef\xbb\xbf", 3)) disk += 3, len -= 3;
    return len == tlen && memcmp(disk, text, len) == 0;
}

int dream_article_parse(const char *text, size_t len, dream_article **out)
{
    *out = NULL;
    dream_article *a = calloc(1, sizeof *a);
    if (!a) return dream_error_set(DREAM_ENOMEM, "out of memory parsing an article");
    if (text && len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) { /* a byte order mark some editors write: not text */
        text += 3;
        len -= 3;
    }
    int rc = art_reparse(a, text ? text : "", text ? len : 0);
    if (rc) {
        free(a);
        return rc;
    }
    *out = a;
    return 0;
}

int dream_article_clone(const dream_article *a, dream_article **out)
{
    return dream_article_parse(a->text, a->len, out);
}

int dream_article_read_file(const char *path, dream_article **out)
{
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = file_read_all(path, 64u << 20, &data, &len);
    if (rc) return rc;
    rc = dream_article_parse(data, len, out);
    free(data);
    return rc;
}

void dream_article_free(dream_article *a)
{
    if (!a) return;
    art_clear(a);
    free(a);
}

/* Concatenates the parts in order: this is the writer. */
static int render_parts(const dream_article *a, struct dbuf *b)
{
    if (a->fm_raw && dbuf_puts(b, a->fm_raw)) return -1;
    if (a->front && dbuf_puts(b, a->front)) return -1;
    if (a->h1_raw && dbuf_puts(b, a->h1_raw)) return -1;
    for (size_t i = 0; i < a->n_items; i++)
        if (dbuf_puts(b, a->items[i].raw)) return -1;
    for (size_t i = 0; i < a->n_secs; i++)
        if (dbuf_puts(b, a->secs[i].heading_raw) || dbuf_puts(b, a->secs[i].body)) return -1;
    return 0;
}


int dream_article_write(const dream_article *a, char **out, size_t *len)
{
    struct dbuf b = {0};
    if (has_nul(a)) {
        if (dbuf_append(&b, a->text, a->len)) return dream_error_code();
    } else if (render_parts(a, &b)) {
        dbuf_free(&b);
        return dream_error_code();
    }
    if (len) *len = b.len;
    *out = dbuf_take(&b);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory writing an article");
}

int dream_article_write_file(const dream_article *a, const char *path)
{
    char *t = NULL;
    size_t n = 0;
    int rc = dream_article_write(a, &t, &n);
    if (rc) return rc;
    rc = file_write_atomic(path, t, n);
    free(t);
    return rc;
}

const char *dream_article_text(const dream_article *a, size_t *len)
{
    if (len) *len = a->len;
    return a->text;
}

int dream_article_set_text(dream_article *a, const char *text, size_t len)
{
    /* a copy first: text may be (a view into) the article's own text, which the re-parse frees */
    char *copy = malloc(len + 1);
    if (!copy) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (len) memcpy(copy, text, len);
    int rc = art_reparse(a, copy, len);
    free(copy);
    return rc;
}

int art_rerender(dream_article *a)
{
    struct dbuf b = {0};
    if (render_parts(a, &b)) {
        dbuf_free(&b);
        return dream_error_code();
    }
    int rc = art_reparse(a, b.data ? b.data : "", b.len);
    dbuf_free(&b);
    return rc;
}

/* ---- header ------------------------------------------------------------------------------ */

const char *dream_article_title(const dream_article *a)
{
    return a->h1_raw ? a->title : NULL;
}

static char *line_with_nl(const char *s)
{
    size_t n = strlen(s);
    bool nl = n > 0 && s[n - 1] == '\n';
    char *r = malloc(n + 2);
    if (!r) return NULL;
    memcpy(r, s, n);
    if (!nl) r[n++] = '\n';
    r[n] = '\0';
    return r;
}

static int no_newline(const char *what, const char *s)
{
    if (!s || strchr(s, '\n') || strchr(s, '\r'))
        return dream_error_set(DREAM_EINVAL, "%s must be one line without newlines (got '%.*s')", what,
                               s ? utf8_cut(s, 60) : 6, s ? s : "(null)");
    return 0;
}

int dream_article_set_title(dream_article *a, const char *title)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (no_newline("an article title", title)) return DREAM_EINVAL;
    struct dbuf b = {0};
    if (dbuf_printf(&b, "# %s\n", title)) return dream_error_code();
    free(a->h1_raw);
    a->h1_raw = dbuf_take(&b);
    if (!a->h1_raw) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return art_rerender(a);
}

bool dream_article_is_stub(const dream_article *a)
{
    for (size_t i = 0; i < a->n_items; i++)
        if (a->items[i].kind == ART_STUB) return true;
    return false;
}

bool dream_article_is_redirect(const dream_article *a)
{
    for (size_t i = 0; i < a->n_items; i++)
        if (a->items[i].kind == ART_REDIRECT) return true;
    return false;
}

static int insert_item(dream_article *a, size_t at, enum art_item_kind kind, const char *raw)
{
    struct art_item *p = realloc(a->items, (a->n_items + 1) * sizeof *p);
    if (!p) return dream_error_set(DREAM_ENOMEM, "out of memory");
    a->items = p;
    char *r = strdup(raw);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memmove(&a->items[at + 1], &a->items[at], (a->n_items - at) * sizeof *p);
    a->items[at] = (struct art_item){kind, r, 0};
    a->n_items++;
    return 0;
}

static void remove_item(dream_article *a, size_t at)
{
    free(a->items[at].raw);
    memmove(&a->items[at], &a->items[at + 1], (a->n_items - at - 1) * sizeof *a->items);
    a->n_items--;
}

void art_remove_item_tidy(dream_article *a, size_t at)
{
    remove_item(a, at);
    /* the blank line after it goes too when one is left before it (or the H1 is) */
    if (at < a->n_items && a->items[at].kind == ART_BLANK && (at == 0 || a->items[at - 1].kind == ART_BLANK)) remove_item(a, at);
}

/* Makes sure the H1 line (when there is one) and the last part end with a newline, so that a
 * part inserted after them starts on a line of its own. */
static int ensure_h1_newline(dream_article *a)
{
    if (a->h1_raw && a->h1_raw[0] && a->h1_raw[strlen(a->h1_raw) - 1] != '\n') {
        char *r = line_with_nl(a->h1_raw);
        if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
        free(a->h1_raw);
        a->h1_raw = r;
    }
    return 0;
}

int dream_article_set_stub(dream_article *a, bool stub)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (stub == dream_article_is_stub(a)) return 0;
    if (!stub) {
        for (size_t i = a->n_items; i-- > 0;)
            if (a->items[i].kind == ART_STUB) remove_item(a, i);
        return art_rerender(a);
    }
    if (ensure_h1_newline(a)) return dream_error_code();
    if (insert_item(a, 0, ART_STUB, "{{stub}}\n")) return dream_error_code();
    if (!a->h1_raw) {
        /* keep the stub after the front */
    }
    return art_rerender(a);
}

const char *dream_article_lead(const dream_article *a)
{
    dream_article *m = (dream_article *)a; /* the cache is not part of the value */
    if (m->lead) return m->lead;
    long first = -1, last = -1;
    for (size_t i = 0; i < a->n_items; i++)
        if (a->items[i].kind == ART_LEAD) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    struct dbuf b = {0};
    for (long i = first; first >= 0 && i <= last; i++) {
        enum art_item_kind k = a->items[i].kind;
        if ((k == ART_LEAD || k == ART_BLANK || k == ART_CODE) && dbuf_puts(&b, a->items[i].raw)) {
            dbuf_free(&b);
            return "";
        }
    }
    m->lead = dbuf_take(&b);
    return m->lead ? m->lead : "";
}

int dream_article_set_lead(dream_article *a, const char *text)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (!text) return dream_error_set(DREAM_EINVAL, "set_lead: text is NULL");
    long first = -1, last = -1;
    for (size_t i = 0; i < a->n_items; i++)
        if (a->items[i].kind == ART_LEAD) {
            if (first < 0) first = (long)i;
            last = (long)i;
        }
    size_t at;
    if (first >= 0) {
        for (long i = last; i >= first; i--) {
            enum art_item_kind k = a->items[i].kind;
            if (k == ART_LEAD || k == ART_BLANK || k == ART_CODE) remove_item(a, (size_t)i);
        }
        at = (size_t)first;
    } else {
        /* after the last structural item of the header, with a blank line before */
        at = 0;
        for (size_t i = 0; i < a->n_items; i++)
            if (a->items[i].kind != ART_BLANK) at = i + 1;
        if (ensure_h1_newline(a)) return dream_error_code();
        if (at > 0 && a->items[at - 1].raw[0] && a->items[at - 1].raw[strlen(a->items[at - 1].raw) - 1] != '\n') {
            char *r = line_with_nl(a->items[at - 1].raw);
            if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
            free(a->items[at - 1].raw);
            a->items[at - 1].raw = r;
        }
        if (text[0] && (a->h1_raw || at > 0)) {
            if (insert_item(a, at, ART_BLANK, "\n")) return dream_error_code();
            at++;
        }
    }
    if (text[0]) {
        char *r = line_with_nl(text);
        if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
        bool need_blank_after = (at >= a->n_items || a->items[at].kind != ART_BLANK) && a->n_secs > 0;
        int rc = insert_item(a, at, ART_LEAD, r);
        free(r);
        if (rc) return rc;
        if (need_blank_after && insert_item(a, at + 1, ART_BLANK, "\n")) return dream_error_code();
    }
    return art_rerender(a);
}

/* ---- infobox ----------------------------------------------------------------------------- */

bool dream_article_has_infobox(const dream_article *a) { return a->infobox_item >= 0; }
size_t dream_article_infobox_count(const dream_article *a) { return a->n_fields; }

const struct dream_article_field *dream_article_infobox_field(const dream_article *a, size_t i)
{
    return i < a->n_fields ? &a->fields[i] : NULL;
}

const char *dream_article_infobox_get(const dream_article *a, const char *key)
{
    for (size_t i = 0; i < a->n_fields; i++)
        if (strcmp(a->fields[i].key, key) == 0) return a->fields[i].value;
    return NULL;
}

int dream_article_infobox_set(dream_article *a, const char *key, const char *value)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (!key || !key[0] || strchr(key, ':') || no_newline("an infobox key", key))
        return dream_error_set(DREAM_EINVAL, "infobox key '%s' must be non-empty, one line, without ':'",
                               key ? key : "(null)");
    if (value && no_newline("an infobox value", value)) return DREAM_EINVAL;
    if (a->infobox_item < 0) {
        if (!value) return 0;
        size_t at = 0;
        for (size_t i = 0; i < a->n_items; i++) {
            enum art_item_kind k = a->items[i].kind;
            if (k == ART_STUB || k == ART_BANNER || k == ART_CATEGORIES) at = i + 1;
            else if (k != ART_BLANK) break;
        }
        if (ensure_h1_newline(a)) return dream_error_code();
        struct dbuf b = {0};
        if (dbuf_printf(&b, "```info\n%s: %s\n```\n", key, value)) return dream_error_code();
        if (at > 0 && a->items[at - 1].raw[strlen(a->items[at - 1].raw) - 1] != '\n') {
            char *r = line_with_nl(a->items[at - 1].raw);
            if (!r) {
                dbuf_free(&b);
                return dream_error_set(DREAM_ENOMEM, "out of memory");
            }
            free(a->items[at - 1].raw);
            a->items[at - 1].raw = r;
        }
        int rc = insert_item(a, at, ART_INFOBOX, b.data);
        dbuf_free(&b);
        if (rc) return rc;
        return art_rerender(a);
    }
    /* Rewrite the block's lines. */
    struct art_item *it = &a->items[a->infobox_item];
    struct dbuf b = {0};
    const char *p = it->raw;
    bool done = false;
    const char *first_nl = strchr(p, '\n');
    if (!first_nl) { /* "```info" with nothing after: unclosed at the end of the file */
        if (dbuf_puts(&b, p) || dbuf_putc(&b, '\n')) goto oom;
        p += strlen(p);
    } else {
        if (dbuf_append(&b, p, (size_t)(first_nl + 1 - p))) goto oom;
        p = first_nl + 1;
    }
    /* the closing delimiter, when present, is the last line */
    const char *close = NULL;
    {
        size_t n = strlen(p);
        const char *e = p + n;
        if (e > p && e[-1] == '\n') e--;
        const char *ls = e;
        while (ls > p && ls[-1] != '\n') ls--;
        char ch = 0;
        size_t fl = art_fence_open(it->raw, first_nl ? first_nl : it->raw + strlen(it->raw), &ch);
        if (fl && art_fence_close(ls, e, ch, fl) && ls < p + n) close = ls;
    }
    const char *body_end = close ? close : p + strlen(p);
    while (p < body_end) {
        const char *nl = memchr(p, '\n', (size_t)(body_end - p));
        const char *le = nl ? nl : body_end;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        bool match = false;
        if (colon) {
            char *k = art_strndup_trim(p, colon);
            if (!k) goto oom;
            match = strcmp(k, key) == 0;
            free(k);
        }
        if (match) {
            if (value && !done && dbuf_printf(&b, "%s: %s\n", key, value)) goto oom;
            done = true;
        } else {
            if (dbuf_append(&b, p, (size_t)(le - p)) || dbuf_putc(&b, '\n')) goto oom;
        }
        p = nl ? nl + 1 : body_end;
    }
    if (value && !done && dbuf_printf(&b, "%s: %s\n", key, value)) goto oom;
    if (close) {
        if (dbuf_puts(&b, close)) goto oom;
    } else {
        if (dbuf_puts(&b, "```\n")) goto oom;
    }
    free(it->raw);
    it->raw = dbuf_take(&b);
    if (!it->raw) return dream_error_set(DREAM_ENOMEM, "out of memory");
    return art_rerender(a);
oom:
    dbuf_free(&b);
    return dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* ---- sections ---------------------------------------------------------------------------- */

size_t dream_article_section_count(const dream_article *a) { return a->n_secs; }

const struct dream_article_section *dream_article_section(const dream_article *a, size_t i)
{
    return i < a->n_secs ? &a->secs[i].pub : NULL;
}

long dream_article_section_find(const dream_article *a, const char *name)
{
    char *an = dream_article_anchor(name);
    if (!an) return -1;
    long r = -1;
    for (size_t i = 0; an[0] && i < a->n_secs && r < 0; i++) /* the empty anchor names no section */
        if (strcmp(a->secs[i].anchor, an) == 0) r = (long)i;
    free(an);
    return r;
}

size_t dream_article_section_end(const dream_article *a, size_t i)
{
    if (i >= a->n_secs) return a->n_secs;
    size_t j = i + 1;
    while (j < a->n_secs && a->secs[j].pub.level > a->secs[i].pub.level) j++;
    return j;
}

long dream_article_section_find_kind(const dream_article *a, enum dream_article_section_kind kind)
{
    for (size_t i = 0; i < a->n_secs; i++)
        if (a->secs[i].pub.kind == kind) return (long)i;
    return -1;
}

int dream_article_section_set_body(dream_article *a, size_t i, const char *body)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (i >= a->n_secs || !body) return dream_error_set(DREAM_EINVAL, "section %zu does not exist", i);
    char *r = body[0] ? line_with_nl(body) : strdup("");
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    free(a->secs[i].body);
    a->secs[i].body = r;
    return art_rerender(a);
}

/* Ensures the part before position `at` (a section index) ends in a blank line. */
static int end_with_blank_line(dream_article *a, size_t at)
{
    char **last = NULL;
    if (at > 0) last = &a->secs[at - 1].body;
    else if (a->n_items) last = &a->items[a->n_items - 1].raw;
    else if (a->h1_raw) last = &a->h1_raw;
    if (!last) return 0;
    /* an empty section body: the heading line is what precedes */
    if (at > 0 && !(*last)[0]) last = &a->secs[at - 1].heading_raw;
    size_t n = strlen(*last);
    const char *add = n == 0 ? "" : (*last)[n - 1] != '\n' ? "\n\n" : (n >= 2 && (*last)[n - 2] == '\n') ? "" : "\n";
    if (last == &a->h1_raw || last == &a->secs[at > 0 ? at - 1 : 0].heading_raw) add = n && (*last)[n - 1] != '\n' ? "\n" : "";
    if (!add[0]) return 0;
    char *r = malloc(n + 3);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memcpy(r, *last, n);
    strcpy(r + n, add);
    free(*last);
    *last = r;
    return 0;
}

int dream_article_section_insert(dream_article *a, int level, const char *title, const char *body,
                                 size_t *index_out)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (level < 2 || level > 6) return dream_error_set(DREAM_EINVAL, "section level %d is not 2..6", level);
    if (no_newline("a section title", title)) return DREAM_EINVAL;
    if (!title[0]) return dream_error_set(DREAM_EINVAL, "a section title may not be empty");
    enum dream_article_section_kind kind = art_section_kind(level, title);
    /* The first tail section that must come after the new one. */
    size_t at = a->n_secs;
    for (size_t i = 0; i < a->n_secs; i++) {
        enum dream_article_section_kind k = a->secs[i].pub.kind;
        if (k != DREAM_SECTION_BODY && (kind == DREAM_SECTION_BODY || k > kind)) {
            at = i;
            break;
        }
    }
    struct art_section *p = realloc(a->secs, (a->n_secs + 1) * sizeof *p);
    if (!p) return dream_error_set(DREAM_ENOMEM, "out of memory");
    a->secs = p;
    if (end_with_blank_line(a, at)) return dream_error_code();
    struct dbuf h = {0}, b = {0};
    if (dbuf_printf(&h, "%.*s %s\n", level, "######", title)) return dream_error_code();
    if (body && body[0]) {
        size_t bl = strlen(body);
        if (dbuf_putc(&b, '\n') || dbuf_puts(&b, body) || (body[bl - 1] != '\n' && dbuf_putc(&b, '\n'))) {
            dbuf_free(&h);
            return dream_error_code();
        }
    }
    if (at < a->n_secs && dbuf_putc(&b, '\n')) {
        dbuf_free(&h);
        return dream_error_code();
    }
    char *hr = dbuf_take(&h), *br = dbuf_take(&b);
    if (!hr || !br) {
        free(hr);
        free(br);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    memmove(&a->secs[at + 1], &a->secs[at], (a->n_secs - at) * sizeof *a->secs);
    memset(&a->secs[at], 0, sizeof a->secs[at]);
    a->secs[at].heading_raw = hr;
    a->secs[at].body = br;
    a->n_secs++;
    /* where the heading lands in the new text */
    size_t offset = (a->fm_raw ? strlen(a->fm_raw) : 0) + strlen(a->front) + (a->h1_raw ? strlen(a->h1_raw) : 0);
    for (size_t i = 0; i < a->n_items; i++) offset += strlen(a->items[i].raw);
    for (size_t i = 0; i < at; i++) offset += strlen(a->secs[i].heading_raw) + strlen(a->secs[i].body);
    size_t old_len = a->len;
    char *old = malloc(old_len + 1);
    if (!old) return dream_error_set(DREAM_ENOMEM, "out of memory");
    memcpy(old, a->text, old_len + 1);
    int rc = art_rerender(a);
    if (rc) {
        free(old);
        return rc;
    }
    for (size_t i = 0; i < a->n_secs; i++)
        if (a->lines[a->secs[i].pub.line - 1].start == offset) {
            if (index_out) *index_out = i;
            free(old);
            return 0;
        }
    /* the heading fell inside a code fence that never closes: leave the article as it was */
    int line = a->unclosed_fence_line;
    rc = art_reparse(a, old, old_len);
    free(old);
    if (rc) return rc;
    return dream_error_set(DREAM_EFORMAT,
                           "cannot add section '%s': it would fall inside the code fence opened on line %d, "
                           "which never closes (normalize closes it)",
                           title, line);
}

int dream_article_section_remove(dream_article *a, size_t i)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (i >= a->n_secs) return dream_error_set(DREAM_EINVAL, "section %zu does not exist", i);
    free(a->secs[i].heading_raw);
    free(a->secs[i].body);
    free(a->secs[i].title);
    free(a->secs[i].anchor);
    memmove(&a->secs[i], &a->secs[i + 1], (a->n_secs - i - 1) * sizeof *a->secs);
    a->n_secs--;
    return art_rerender(a);
}

/* ---- footnotes, links, templates ---------------------------------------------------------- */

size_t dream_article_footnote_count(const dream_article *a) { return a->n_notes; }
const struct dream_article_footnote *dream_article_footnote(const dream_article *a, size_t i)
{
    return i < a->n_notes ? &a->notes[i] : NULL;
}
size_t dream_article_ref_count(const dream_article *a) { return a->n_refs; }
const struct dream_article_ref *dream_article_ref(const dream_article *a, size_t i)
{
    return i < a->n_refs ? &a->refs[i] : NULL;
}
size_t dream_article_link_count(const dream_article *a) { return a->n_links; }
const struct dream_article_link *dream_article_link(const dream_article *a, size_t i)
{
    return i < a->n_links ? &a->links[i] : NULL;
}
size_t dream_article_template_count(const dream_article *a) { return a->n_tmpls; }
const struct dream_article_template *dream_article_template(const dream_article *a, size_t i)
{
    return i < a->n_tmpls ? &a->tmpls[i] : NULL;
}

int dream_article_footnote_find(const dream_article *a, const char *conv, const char *msg)
{
    for (size_t i = 0; i < a->n_notes; i++) {
        const struct dream_article_footnote *f = &a->notes[i];
        if (!f->number || !f->cite.conv || strcmp(f->cite.conv, conv) != 0) continue;
        if (msg && (!f->cite.msg || strcmp(f->cite.msg, msg) != 0)) continue;
        return f->number;
    }
    return 0;
}

/* The citation key of c: the link to its note, or the plain backticked key. */
static int citation_key(struct dbuf *b, const struct dream_citation *c)
{
    const char *conv = c->conv ? c->conv : "", *msg = c->msg ? c->msg : "";
    if (!c->note) return dbuf_printf(b, "`conv:%s#%s`", conv, msg);
    char *block = dream_citation_block_id(msg);
    int rc = block ? dbuf_printf(b, "[[%s#^%s|conv:%s#%s]]", c->note, block, conv, msg) : DREAM_ENOMEM;
    free(block);
    return rc;
}

char *dream_citation_format(const struct dream_citation *c)
{
    struct dbuf b = {0};
    const char *title = c->title && c->title[0] ? c->title : "conversation";
    if (citation_key(&b, c) || dbuf_printf(&b, " (%s, ", c->date && c->date[0] ? c->date : DREAM_CITATION_UNDATED)) {
        dbuf_free(&b);
        return NULL;
    }
    /* the title is shown, not read: what Obsidian would take for Markdown of the vault goes or is
     * escaped (a #word would be a tag in the tag pane; %% opens a comment that hides the rest) */
    for (const char *p = title; *p; p++) {
        char ch = (*p == '\n' || *p == '\r' || *p == '`') ? ' ' : *p == '[' ? '(' : *p == ']' ? ')' : *p;
        if (ch == '%' && p > title && p[-1] == '%') continue;
        if ((ch == '#' && p[1] && p[1] != ' ' && dbuf_putc(&b, '\\')) || dbuf_putc(&b, ch)) return NULL;
    }
    if (dbuf_putc(&b, ')')) return NULL;
    return dbuf_take(&b);
}

int dream_article_footnote_set_note(dream_article *a, size_t i, const char *note)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (i >= a->n_notes || !a->notes[i].well_formed)
        return dream_error_set(DREAM_EINVAL, "footnote %zu is not a well-formed citation; its link is left as it is", i);
    if (note && (!note[0] || strpbrk(note, "#|[]\n")))
        return dream_error_set(DREAM_EINVAL, "'%s' cannot be a note's name in a link", note);
    const struct dream_article_footnote *f = &a->notes[i];
    struct dream_citation c = {.conv = f->cite.conv, .msg = f->cite.msg, .note = note};
    struct dbuf b = {0};
    int rc = dbuf_append(&b, a->text, a->key_from[i]);
    if (!rc) rc = citation_key(&b, &c);
    if (!rc) rc = dbuf_append(&b, a->text + a->key_to[i], a->len - a->key_to[i]);
    if (!rc) rc = art_reparse(a, b.data, b.len);
    dbuf_free(&b);
    return rc ? dream_error_set(DREAM_ENOMEM, "out of memory") : 0;
}

int dream_article_footnote_set_title(dream_article *a, size_t i, const char *title)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (i >= a->n_notes || !a->notes[i].well_formed)
        return dream_error_set(DREAM_EINVAL, "footnote %zu is not a well-formed citation; its title is left as it is", i);
    const struct dream_article_footnote *f = &a->notes[i];
    struct dream_citation c = {.conv = f->cite.conv, .msg = f->cite.msg, .date = f->cite.date, .title = title, .note = f->cite.note};
    char *def = dream_citation_format(&c);
    if (!def) return dream_error_set(DREAM_ENOMEM, "out of memory");
    /* a well-formed definition is its key and "(DATE, title)" to the line's end */
    const char *nl = memchr(a->text + a->key_from[i], '\n', a->len - a->key_from[i]);
    size_t end = nl ? (size_t)(nl - a->text) : a->len;
    struct dbuf b = {0};
    int rc = dbuf_append(&b, a->text, a->key_from[i]);
    if (!rc) rc = dbuf_puts(&b, def);
    if (!rc) rc = dbuf_append(&b, a->text + end, a->len - end);
    free(def);
    if (!rc) rc = art_reparse(a, b.data, b.len);
    dbuf_free(&b);
    return rc ? dream_error_set(DREAM_ENOMEM, "out of memory") : 0;
}

bool dream_citation_is_placeholder(const char *conv)
{
    return conv && (strcmp(conv, "00000000") == 0 || strcmp(conv, "00000001") == 0);
}

int dream_article_footnote_add(dream_article *a, const struct dream_citation *c, int *number)
{
    if (refuse_unsafe(a)) return DREAM_EFORMAT;
    if (!c || !c->conv || !c->conv[0] || !c->msg || !c->msg[0] || strchr(c->conv, '`') || strchr(c->msg, '`') ||
        strchr(c->msg, '\n') || strchr(c->conv, '\n') || strchr(c->msg, ' '))
        return dream_error_set(DREAM_EINVAL, "a citation needs a conversation hash and a message id (got '%s#%s')",
                               c && c->conv ? c->conv : "", c && c->msg ? c->msg : "");
    int have = dream_article_footnote_find(a, c->conv, c->msg);
    if (have) {
        *number = have;
        return 0;
    }
    int max = 0;
    for (size_t i = 0; i < a->n_notes; i++)
        if (a->notes[i].number > max) max = a->notes[i].number;
    for (size_t i = 0; i < a->n_refs; i++)
        if (a->refs[i].number > max) max = a->refs[i].number;
    char *def = dream_citation_format(c);
    if (!def) return dream_error_set(DREAM_ENOMEM, "out of memory");
    long ri = dream_article_section_find_kind(a, DREAM_SECTION_REFERENCES);
    int rc = 0;
    if (ri < 0) {
        size_t idx;
        if ((rc = dream_article_section_insert(a, 2, "References", NULL, &idx))) goto out;
        ri = (long)idx;
    }
    {
        /* append after the last non-blank line of the References body */
        const char *body = a->secs[ri].body;
        size_t n = strlen(body), keep = n;
        while (keep > 0 && (body[keep - 1] == '\n' || body[keep - 1] == ' ' || body[keep - 1] == '\t' ||
                            body[keep - 1] == '\r'))
            keep--;
        /* keep whole lines: back up to the end of the last non-blank line */
        while (keep < n && body[keep] != '\n') keep++;
        struct dbuf b = {0};
        bool empty = true;
        for (size_t i = 0; i < keep; i++)
            if (!isspace((unsigned char)body[i])) empty = false;
        if (empty) {
            if (dbuf_printf(&b, "\n[^%d]: %s\n", max + 1, def)) rc = dream_error_code();
        } else if (dbuf_append(&b, body, keep) || (keep < n ? 0 : dbuf_putc(&b, '\n')) ||
                   (keep < n && dbuf_putc(&b, '\n')) || dbuf_printf(&b, "[^%d]: %s\n", max + 1, def)) {
            rc = dream_error_code();
        }
        /* what followed the definitions (blank lines before a next section) stays */
        if (!rc && keep < n) {
            size_t rest = keep + 1;
            if (rest < n && dbuf_append(&b, body + rest, n - rest)) rc = dream_error_code();
        }
        if (rc) {
            dbuf_free(&b);
            goto out;
        }
        free(a->secs[ri].body);
        a->secs[ri].body = dbuf_take(&b);
        if (!a->secs[ri].body) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = art_rerender(a))) goto out;
    }
    *number = max + 1;
out:
    free(def);
    return rc;
}

bool dream_article_link_is_meta(const char *target)
{
    return strncasecmp(target, "conv:", 5) == 0 || strncasecmp(target, "Category:", 9) == 0 ||
           strncmp(target, DREAM_SOURCES_DIR "/", sizeof DREAM_SOURCES_DIR) == 0;
}

char *dream_article_stem(const char *title)
{
    struct dbuf b = {0};
    const char *s = title ? title : "";
    while (isspace((unsigned char)*s)) s++;
    const char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) e--;
    for (const char *p = s; p < e; p++) {
        char c = *p;
        if (c == '/' || c == '\\') c = '-';
        else if (isspace((unsigned char)c)) c = '_';
        else if (strchr("<>:\"|?*", c)) continue;
        if (c == '_' && b.len && b.data[b.len - 1] == '_') continue;
        if (dbuf_putc(&b, c)) return NULL;
    }
    size_t from = 0;
    while (from < b.len && b.data[from] == '.') from++;
    while (from < b.len && (b.data[from] == '-' || b.data[from] == '_' || b.data[from] == '.')) from++;
    size_t to = b.len;
    while (to > from && (b.data[to - 1] == '-' || b.data[to - 1] == '_')) to--;
    char *r;
    if (to == from) r = strdup("entity");
    else r = dup_span(b.data + from, b.data + to);
    dbuf_free(&b);
    return r;
}

/* Case-insensitive compare where ' ' and '_' are equal. */
static bool eq_fold(const char *a, const char *b, bool ci)
{
    for (; *a && *b; a++, b++) {
        char x = *a == ' ' ? '_' : *a, y = *b == ' ' ? '_' : *b;
        if (ci) {
            x = (char)tolower((unsigned char)x);
            y = (char)tolower((unsigned char)y);
        }
        if (x != y) return false;
    }
    return *a == *b;
}

static long resolve_link_as_is(const char *const *stems, size_t n, const char *target)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(stems[i], target) == 0) return (long)i;
    for (size_t i = 0; i < n; i++)
        if (eq_fold(stems[i], target, false)) return (long)i;
    for (size_t i = 0; i < n; i++)
        if (eq_fold(stems[i], target, true)) return (long)i;
    return -1;
}

long dream_article_resolve_link(const char *const *stems, size_t n, const char *target)
{
    long r = resolve_link_as_is(stems, n, target);
    if (r >= 0) return r;
    /* as Obsidian reads a link written with the file's path: [[articles/Gus]], [[Gus.md]] */
    size_t len = strlen(target), from = 0;
    if (len > 9 && !strncmp(target, "articles/", 9)) from = 9;
    if (len - from > 3 && !strcasecmp(target + len - 3, ".md")) len -= 3;
    if (from == 0 && len == strlen(target)) return -1;
    char *bare = strndup(target + from, len - from);
    if (!bare) return -1;
    r = resolve_link_as_is(stems, n, bare);
    free(bare);
    return r;
}

size_t dream_article_words(const char *text, size_t len)
{
    size_t words = 0, pos = 0;
    bool in = false;
    char fch = 0;
    size_t flen = 0;
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        const char *s = text + pos, *e = text + end;
        if (in) {
            if (art_fence_close(s, e, fch, flen)) in = false;
        } else if ((flen = art_fence_open(s, e, &fch)) != 0) {
            in = true;
        } else {
            int h = art_heading_level(s, e);
            if (h) s += h;
            /* a word: a whitespace-separated token with a letter or digit (or a non-ASCII
             * byte) in it, so that punctuation left beside a marker is not a word */
            bool word = false;
            for (const char *p = s; p <= e; p++) {
                bool sp = p == e || isspace((unsigned char)*p);
                if (!sp && *p == '[' && p + 1 < e && p[1] == '^') {
                    const char *q = p + 2;
                    while (q < e && *q != ']' && !isspace((unsigned char)*q)) q++;
                    if (q < e && *q == ']') {
                        p = q;
                        continue;
                    }
                }
                if (sp) {
                    if (word) words++;
                    word = false;
                } else if (isalnum((unsigned char)*p) || (unsigned char)*p >= 0x80) {
                    word = true;
                }
            }
        }
        pos = nl ? end + 1 : len;
    }
    return words;
}
