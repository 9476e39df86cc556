/* article_draft.c — cleaning a model's draft before it goes into an article (spec §6.5 step 6).
 * Works line by line with the article's own fence scanner, so what counts as a fence, a
 * heading or a definition is the same here as in the parser. */
#include "article_internal.h"

#include "dream/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct draft_line {
    const char *s, *e; /* without the newline */
};

static void draft_note(dream_article_note_fn note, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void draft_note(dream_article_note_fn note, void *ud, const char *fmt, ...)
{
    if (!note) return;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    note(ud, msg);
}

static bool blank_line(const struct draft_line *l)
{
    for (const char *p = l->s; p < l->e; p++)
        if (!isspace((unsigned char)*p)) return false;
    return true;
}

/* The anchor of a heading line's text. */
static char *line_anchor(const struct draft_line *l, int level)
{
    char *t = art_strndup_trim(l->s + level, l->e);
    if (!t) return NULL;
    char *an = dream_article_anchor(t);
    free(t);
    return an;
}

static bool is_tail_heading(const struct draft_line *l, int level)
{
    char *an = line_anchor(l, level);
    bool r = an && (strcmp(an, "references") == 0 || strcmp(an, "see-also") == 0 || strcmp(an, "notes") == 0);
    free(an);
    return r;
}

/* Appends line [s, e) with markers whose label is not a number removed (code spans kept). */
static int put_prose(struct dbuf *b, const char *s, const char *e, size_t *dropped)
{
    for (const char *p = s; p < e;) {
        if (*p == '`') {
            const char *q = p;
            while (q < e && *q == '`') q++;
            size_t n = (size_t)(q - p);
            const char *close = NULL;
            for (const char *r = q; r < e;) {
                if (*r != '`') {
                    r++;
                    continue;
                }
                const char *k = r;
                while (k < e && *k == '`') k++;
                if ((size_t)(k - r) == n) {
                    close = k;
                    break;
                }
                r = k;
            }
            const char *to = close ? close : q;
            if (dbuf_append(b, p, (size_t)(to - p))) return -1;
            p = to;
            continue;
        }
        if (*p == '[' && p + 2 < e && p[1] == '^') {
            const char *q = p + 2;
            bool digits = true;
            while (q < e && *q != ']' && *q != '[' && !isspace((unsigned char)*q)) {
                if (*q < '0' || *q > '9') digits = false;
                q++;
            }
            if (q < e && *q == ']' && q > p + 2 && (!digits || p[2] == '0')) {
                (*dropped)++;
                p = q + 1;
                continue;
            }
        }
        if (dbuf_putc(b, *p)) return -1;
        p++;
    }
    return 0;
}

int dream_article_sanitize_draft(const char *draft, const char *heading, char **out,
                                 dream_article_note_fn note, void *ud)
{
    *out = NULL;
    if (!draft) draft = "";
    size_t len = strlen(draft);
    size_t cap = 16, n = 0;
    struct draft_line *L = malloc(cap * sizeof *L);
    if (!L) return dream_error_set(DREAM_ENOMEM, "out of memory cleaning a draft");
    for (const char *p = draft; p < draft + len || (n == 0 && p == draft);) {
        size_t off = (size_t)(p - draft);
        const char *nl = off < len ? memchr(p, '\n', len - off) : NULL;
        const char *e = nl ? nl : draft + len;
        const char *ce = e;
        while (ce > p && ce[-1] == '\r') ce--;
        if (n == cap) {
            struct draft_line *q = realloc(L, (cap *= 2) * sizeof *L);
            if (!q) {
                free(L);
                return dream_error_set(DREAM_ENOMEM, "out of memory cleaning a draft");
            }
            L = q;
        }
        L[n++] = (struct draft_line){p, ce};
        if (!nl) break;
        p = nl + 1;
    }
    /* the non-blank range */
    size_t first = 0, last = n;
    while (first < last && blank_line(&L[first])) first++;
    while (last > first && blank_line(&L[last - 1])) last--;
    /* a draft wrapped whole in one fence (```, ```markdown, ```md, ```text) is unwrapped */
    if (last - first >= 2) {
        char ch;
        size_t fl = art_fence_open(L[first].s, L[first].e, &ch);
        if (fl) {
            const char *is = L[first].s;
            while (*is == ' ') is++;
            char *info = art_strndup_trim(is + fl, L[first].e);
            bool prose = info && (!info[0] || strcmp(info, "markdown") == 0 || strcmp(info, "md") == 0 ||
                                  strcmp(info, "text") == 0);
            free(info);
            /* the last line closes it, and what lies between is balanced on its own (so the
             * draft is not two code blocks with prose between them) */
            bool inner_open = false;
            char ich = 0;
            size_t ilen = 0;
            for (size_t i = first + 1; i + 1 < last; i++) {
                if (inner_open) {
                    if (art_fence_close(L[i].s, L[i].e, ich, ilen)) inner_open = false;
                } else if ((ilen = art_fence_open(L[i].s, L[i].e, &ich)) != 0) {
                    inner_open = true;
                }
            }
            if (prose && !inner_open && art_fence_close(L[last - 1].s, L[last - 1].e, ch, fl)) {
                draft_note(note, ud, "unwrapped a draft the model put inside a code fence");
                first++;
                last--;
            }
        }
    }
    struct dbuf b = {0};
    bool in = false, skip_block = false, pending_blank = false, first_content = true;
    char fch = 0;
    size_t flen = 0, defs = 0, markers = 0;
    char *want = heading ? dream_article_anchor(heading) : NULL;
    for (size_t i = first; i < last; i++) {
        const struct draft_line *l = &L[i];
        if (in) {
            if (art_fence_close(l->s, l->e, fch, flen)) in = false;
            if (!skip_block) {
                if (pending_blank && dbuf_putc(&b, '\n')) goto oom;
                pending_blank = false;
                if (dbuf_append(&b, l->s, (size_t)(l->e - l->s)) || dbuf_putc(&b, '\n')) goto oom;
            }
            if (!in) skip_block = false;
            continue;
        }
        char ch;
        size_t fl = art_fence_open(l->s, l->e, &ch);
        if (fl) {
            in = true;
            fch = ch;
            flen = fl;
            const char *is = l->s;
            while (*is == ' ') is++;
            char *info = art_strndup_trim(is + fl, l->e);
            if (!info) goto oom;
            skip_block = strcmp(info, "info") == 0;
            free(info);
            if (skip_block) {
                draft_note(note, ud, "removed an infobox block from the draft");
                continue;
            }
            if (pending_blank && dbuf_putc(&b, '\n')) goto oom;
            pending_blank = false;
            first_content = false;
            if (dbuf_append(&b, l->s, (size_t)(l->e - l->s)) || dbuf_putc(&b, '\n')) goto oom;
            continue;
        }
        if (blank_line(l)) {
            if (b.len) pending_blank = true;
            continue;
        }
        int level = art_heading_level(l->s, l->e);
        if (level) {
            if (is_tail_heading(l, level)) {
                draft_note(note, ud, "cut the draft at a '%.*s' heading: the article's tail is the program's to write",
                           (int)(l->e - l->s), l->s);
                break;
            }
            if (first_content) {
                char *an = line_anchor(l, level);
                bool repeat = level == 1 || (an && want && strcmp(an, want) == 0);
                free(an);
                if (repeat) {
                    draft_note(note, ud, "dropped a first line repeating the heading");
                    first_content = false;
                    continue;
                }
            }
        }
        first_content = false;
        if (art_is_def_line(l->s, l->e)) {
            defs++;
            continue;
        }
        if (pending_blank && dbuf_putc(&b, '\n')) goto oom;
        pending_blank = false;
        if (put_prose(&b, l->s, l->e, &markers) || dbuf_putc(&b, '\n')) goto oom;
    }
    if (in && !skip_block) {
        for (size_t k = 0; k < flen; k++)
            if (dbuf_putc(&b, fch)) goto oom;
        if (dbuf_putc(&b, '\n')) goto oom;
        draft_note(note, ud, "closed a code fence the draft left open");
    }
    if (defs) draft_note(note, ud, "removed %zu footnote definition line(s): definitions are written by the program", defs);
    if (markers) draft_note(note, ud, "removed %zu footnote marker(s) whose label is not a number", markers);
    free(want);
    free(L);
    *out = dbuf_take(&b);
    return *out ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory cleaning a draft");
oom:
    free(want);
    free(L);
    dbuf_free(&b);
    return dream_error_set(DREAM_ENOMEM, "out of memory cleaning a draft");
}
