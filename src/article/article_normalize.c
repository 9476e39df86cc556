/* article_normalize.c — NORMALIZE (spec §6.9): deterministic, idempotent, never fatal.
 *
 * Passes, each text to text through the one parser: line endings; unbalanced fences; footnotes;
 * links, infobox, H1, tail order, stub; whitespace. The passes run until the text stops
 * changing (twice for any input the tests and the fuzzer have seen), so a second call is a
 * no-op by construction and by test. */
#include "article_internal.h"

#include "dream/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct norm {
    dream_article *a;
    const struct dream_article_normalize_params *p;
    dream_article_note_fn note;
    void *ud;
    bool quiet; /* later rounds of the fixpoint repeat no notes */
};

static void say(struct norm *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct norm *n, const char *fmt, ...)
{
    if (!n->note || n->quiet) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n->note(n->ud, msg);
}

static int oom(void) { return dream_error_set(DREAM_ENOMEM, "out of memory normalizing an article"); }

/* An edit refused because a pass left a fence open is retried in the next round of the
 * fixpoint, after the fence pass: not an error of normalize. */
static int soft(int rc)
{
    if (rc != DREAM_EFORMAT) return rc;
    dream_error_clear();
    return 0;
}

/* Re-parses a from b (taking b's data). */
static int adopt(dream_article *a, struct dbuf *b)
{
    int rc = art_reparse(a, b->data ? b->data : "", b->len);
    dbuf_free(b);
    return rc;
}

/* ---- A: line endings and NUL bytes ----------------------------------------------------- */

static int pass_bytes(struct norm *n)
{
    dream_article *a = n->a;
    if (!memchr(a->text, '\r', a->len) && !memchr(a->text, '\0', a->len)) return 0;
    struct dbuf b = {0};
    size_t crs = 0, nuls = 0;
    for (size_t i = 0; i < a->len; i++) {
        char c = a->text[i];
        if (c == '\0') {
            nuls++;
            continue;
        }
        if (c == '\r') {
            /* a run of CRs that ends the line goes, whole (CRLF, or CR CR LF from a double
             * conversion); a CR alone is a line end of its own, as CommonMark (and Obsidian)
             * read one: LF */
            size_t j = i;
            while (j < a->len && a->text[j] == '\r') j++;
            crs++;
            if (j == a->len || a->text[j] == '\n') {
                i = j - 1;
                continue;
            }
            c = '\n';
        }
        if (dbuf_putc(&b, c)) return oom();
    }
    if (crs) say(n, "line endings: %zu CR line end(s) made LF", crs);
    if (nuls) say(n, "removed %zu NUL byte(s)", nuls);
    return adopt(a, &b);
}

/* ---- B: unbalanced fences ------------------------------------------------------------- */

static int pass_fences(struct norm *n)
{
    dream_article *a = n->a;
    for (size_t guard = 0; a->unclosed_fence_line && guard < 64; guard++) {
        size_t k = (size_t)a->unclosed_fence_line - 1;
        const char *t = a->text;
        size_t j = k + 1;
        while (j < a->n_lines && !art_heading_level(t + a->lines[j].start, t + a->lines[j].end)) j++;
        bool blank = true;
        for (size_t i = k + 1; i < j && blank; i++)
            for (size_t c = a->lines[i].start; c < a->lines[i].end; c++)
                if (!isspace((unsigned char)t[c])) blank = false;
        struct dbuf b = {0};
        if (blank) {
            /* a fence that wraps nothing: drop its line */
            if (dbuf_append(&b, t, a->lines[k].start) ||
                dbuf_append(&b, t + a->lines[k].next, a->len - a->lines[k].next))
                goto fail;
            say(n, "removed an empty unclosed code fence (line %zu)", k + 1);
        } else {
            char ch = '`';
            size_t fl = art_fence_open(t + a->lines[k].start, t + a->lines[k].end, &ch);
            if (fl < 3) fl = 3;
            size_t at = j < a->n_lines ? a->lines[j].start : a->len;
            if (dbuf_append(&b, t, at)) goto fail;
            if (b.len && b.data[b.len - 1] != '\n' && dbuf_putc(&b, '\n')) goto fail;
            for (size_t i = 0; i < fl; i++)
                if (dbuf_putc(&b, ch)) goto fail;
            if (dbuf_putc(&b, '\n') || dbuf_append(&b, t + at, a->len - at)) goto fail;
            say(n, "closed the code fence opened on line %zu %s", k + 1,
                j < a->n_lines ? "before the heading it swallowed" : "at the end");
        }
        if (adopt(a, &b)) return dream_error_code();
        continue;
    fail:
        dbuf_free(&b);
        return oom();
    }
    return 0;
}

/* ---- C: footnotes ---------------------------------------------------------------------- */

/* The key that makes two definitions the same citation. */
static char *cite_key(const struct dream_article_footnote *f)
{
    struct dbuf b = {0};
    if (f->cite.conv) {
        if (dbuf_printf(&b, "conv:%s#%s", f->cite.conv, f->cite.msg ? f->cite.msg : "")) return NULL;
    } else if (dbuf_printf(&b, "text:%s", f->text)) {
        return NULL;
    }
    return dbuf_take(&b);
}

static int pass_footnotes(struct norm *n)
{
    dream_article *a = n->a;
    size_t nd = a->n_notes, nr = a->n_refs;
    if (!nd && !nr) return 0;
    int rc = 0;
    long *def_of_ref = calloc(nr + 1, sizeof *def_of_ref);   /* def index or -1 */
    int *num_of_def = calloc(nd + 1, sizeof *num_of_def);     /* new number of each def, 0 = dropped */
    long *winner = calloc(nd + 1, sizeof *winner);            /* def that carries number k+1 */
    char **keys = calloc(nd + 1, sizeof *keys);
    if (!def_of_ref || !num_of_def || !winner || !keys) {
        rc = oom();
        goto out;
    }
    for (size_t i = 0; i < nd; i++)
        if (!(keys[i] = cite_key(&a->notes[i]))) {
            rc = oom();
            goto out;
        }
    int next = 0;
    bool changed = false;
    for (size_t r = 0; r < nr; r++) {
        def_of_ref[r] = -1;
        for (size_t d = 0; d < nd && def_of_ref[r] < 0; d++)
            if (strcmp(a->notes[d].label, a->refs[r].label) == 0) def_of_ref[r] = (long)d;
        if (def_of_ref[r] < 0) {
            say(n, "removed footnote marker [^%s] (line %d): it has no definition", a->refs[r].label, a->refs[r].line);
            changed = true;
            continue;
        }
        size_t d = (size_t)def_of_ref[r];
        if (num_of_def[d]) continue;
        /* same citation as a definition already numbered? */
        int num = 0;
        for (int k = 0; k < next && !num; k++)
            if (strcmp(keys[winner[k]], keys[d]) == 0) num = k + 1;
        if (num) {
            say(n, "merged footnote [^%s] into [^%d]: they cite the same message", a->notes[d].label, num);
            changed = true;
        } else {
            winner[next] = (long)d;
            num = ++next;
        }
        num_of_def[d] = num;
        if (a->notes[d].number != num) changed = true;
    }
    long ri = dream_article_section_find_kind(a, DREAM_SECTION_REFERENCES);
    int ref_from = ri >= 0 ? a->secs[ri].pub.line : 0;
    int ref_to = ri >= 0 && (size_t)ri + 1 < a->n_secs ? a->secs[ri + 1].pub.line : (int)a->n_lines + 1;
    int last_num = 0;
    for (size_t d = 0; d < nd; d++) {
        if (!num_of_def[d]) {
            bool dup = false;
            for (size_t e = 0; e < d && !dup; e++) dup = strcmp(a->notes[e].label, a->notes[d].label) == 0;
            if (dup) say(n, "removed a second definition of [^%s] (line %d)", a->notes[d].label, a->notes[d].line);
            else say(n, "removed footnote definition [^%s] (line %d): nothing cites it", a->notes[d].label, a->notes[d].line);
            changed = true;
            continue;
        }
        if (a->notes[d].line < ref_from || a->notes[d].line >= ref_to || num_of_def[d] < last_num) changed = true;
        last_num = num_of_def[d];
    }
    if (!changed) goto out;

    /* The definitions in number order, taken before the rewrite drops their lines. */
    struct dbuf defs = {0}, b = {0};
    for (int k = 0; k < next; k++)
        if (dbuf_printf(&defs, "[^%d]: %s\n", k + 1, a->notes[winner[k]].text)) goto oom_b;
    /* Rewrite: definition lines out, markers renumbered or removed. */
    const char *t = a->text;
    size_t pos = 0, r = 0;
    for (size_t d = 0; d <= nd; d++) {
        size_t ls = d < nd ? a->lines[a->notes[d].line - 1].start : a->len;
        size_t le = d < nd ? a->lines[a->notes[d].line - 1].next : a->len;
        for (; r < nr && a->refs[r].offset < ls; r++) {
            size_t off = a->refs[r].offset, rl = strlen(a->refs[r].label) + 3;
            if (dbuf_append(&b, t + pos, off - pos)) goto oom_b;
            if (def_of_ref[r] >= 0 && dbuf_printf(&b, "[^%d]", num_of_def[def_of_ref[r]])) goto oom_b;
            pos = off + rl;
        }
        if (dbuf_append(&b, t + pos, ls - pos)) goto oom_b;
        pos = le;
    }
    if ((rc = adopt(a, &b))) {
        dbuf_free(&defs);
        goto out;
    }
    /* a marker removed from the start of a line can leave a fence line behind */
    if ((rc = pass_fences(n))) {
        dbuf_free(&defs);
        goto out;
    }
    ri = dream_article_section_find_kind(a, DREAM_SECTION_REFERENCES);
    if (ri < 0 && next) {
        size_t idx;
        if ((rc = dream_article_section_insert(a, 2, "References", NULL, &idx))) {
            dbuf_free(&defs);
            goto out;
        }
        ri = (long)idx;
    }
    if (ri >= 0) {
        /* what else References held (not definitions) stays, after them */
        const char *body = a->secs[ri].body;
        const char *s0 = body, *e0 = body + strlen(body);
        while (s0 < e0 && isspace((unsigned char)*s0)) s0++;
        while (e0 > s0 && isspace((unsigned char)e0[-1])) e0--;
        if (dbuf_putc(&b, '\n') || (defs.len && dbuf_append(&b, defs.data, defs.len))) goto oom_b;
        if (e0 > s0 && (dbuf_putc(&b, '\n') || dbuf_append(&b, s0, (size_t)(e0 - s0)) || dbuf_putc(&b, '\n'))) goto oom_b;
        if ((size_t)ri + 1 < a->n_secs && dbuf_putc(&b, '\n')) goto oom_b;
        free(a->secs[ri].body);
        a->secs[ri].body = dbuf_take(&b);
        if (!a->secs[ri].body) goto oom_b;
        rc = art_rerender(a);
    }
    dbuf_free(&defs);
    goto out;
oom_b:
    dbuf_free(&b);
    dbuf_free(&defs);
    rc = oom();
out:
    for (size_t i = 0; keys && i < nd; i++) free(keys[i]);
    free(keys);
    free(def_of_ref);
    free(num_of_def);
    free(winner);
    return rc;
}

/* ---- D: links, infobox, H1, tail order, stub ------------------------------------------- */

static int pass_links(struct norm *n)
{
    dream_article *a = n->a;
    if (!n->p || !n->p->resolve || !a->n_links) return 0;
    struct dbuf b = {0};
    size_t pos = 0;
    bool changed = false;
    for (size_t i = 0; i < a->n_links; i++) {
        const struct dream_article_link *l = &a->links[i];
        if (!l->target[0] || dream_article_link_is_meta(l->target)) continue;
        char *stem = n->p->resolve(n->p->resolve_ud, l->target);
        if (!stem) {
            say(n, "redlink [[%s]] (line %d): no such article", l->target, l->line);
            continue;
        }
        if (strcmp(stem, l->target) != 0 && !strchr(stem, ']') && !strchr(stem, '|') && !strchr(stem, '\n')) {
            const char *display = l->display ? l->display : l->target;
            if (dbuf_append(&b, a->text + pos, l->offset - pos) || dbuf_printf(&b, "[[%s", stem) ||
                (l->section && dbuf_printf(&b, "#%s", l->section)) || dbuf_printf(&b, "|%s]]", display)) {
                free(stem);
                dbuf_free(&b);
                return oom();
            }
            pos = l->offset + l->len;
            say(n, "link [[%s]] (line %d) now names its article [[%s]]", l->target, l->line, stem);
            changed = true;
        }
        free(stem);
    }
    if (!changed) return 0;
    if (dbuf_append(&b, a->text + pos, a->len - pos)) {
        dbuf_free(&b);
        return oom();
    }
    return adopt(a, &b);
}

static int key_rank(const char *k)
{
    if (strcmp(k, "type") == 0) return 0;
    if (strcmp(k, "kind") == 0) return 1;
    if (strcmp(k, "aliases") == 0) return 3;
    return 2;
}

struct infoline {
    const char *s; /* the line, with its newline */
    size_t len;
    char *key;     /* NULL for a line without ':' */
    size_t order;
};

static int cmp_infoline(const void *x, const void *y)
{
    const struct infoline *a = x, *b = y;
    if (!a->key || !b->key) {
        if (!a->key && !b->key) return a->order < b->order ? -1 : 1;
        return a->key ? -1 : 1; /* keyless lines go last */
    }
    int ra = key_rank(a->key), rb = key_rank(b->key);
    if (ra != rb) return ra - rb;
    int c = ra == 2 ? strcmp(a->key, b->key) : 0;
    if (c) return c;
    return a->order < b->order ? -1 : 1;
}

static bool valid_kind(const char *v)
{
    static const char *kinds[] = {"thing", "person", "domain", "project", "standard"};
    for (size_t i = 0; i < 5; i++)
        if (strcmp(v, kinds[i]) == 0) return true;
    return false;
}

static int pass_infobox(struct norm *n)
{
    dream_article *a = n->a;
    if (a->infobox_item < 0) return 0;
    struct art_item *it = &a->items[a->infobox_item];
    const char *raw = it->raw;
    const char *first_nl = strchr(raw, '\n');
    if (!first_nl) return 0;
    /* closing line: the last line, when the block is closed */
    size_t total = strlen(raw);
    const char *end = raw + total;
    const char *last_start = end;
    if (last_start > raw && last_start[-1] == '\n') last_start--;
    while (last_start > raw && last_start[-1] != '\n') last_start--;
    const char *body = first_nl + 1;
    const char *body_end = last_start > body ? last_start : body;
    char ch = '`';
    size_t fl = art_fence_open(raw, first_nl, &ch);
    const char *le = end > last_start && end[-1] == '\n' ? end - 1 : end;
    if (!(fl && last_start >= body && art_fence_close(last_start, le, ch, fl))) body_end = end; /* unclosed */
    size_t cap = 0, cnt = 0;
    struct infoline *L = NULL;
    int rc = 0;
    for (const char *p = body; p < body_end;) {
        const char *nl = memchr(p, '\n', (size_t)(body_end - p));
        const char *e = nl ? nl + 1 : body_end;
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct infoline *q = realloc(L, nc * sizeof *q);
            if (!q) {
                rc = oom();
                goto out;
            }
            L = q;
            cap = nc;
        }
        const char *colon = memchr(p, ':', (size_t)(e - p));
        L[cnt] = (struct infoline){p, (size_t)(e - p), colon ? art_strndup_trim(p, colon) : NULL, cnt};
        if (colon && !L[cnt].key) {
            rc = oom();
            goto out;
        }
        cnt++;
        p = e;
    }
    struct infoline *sorted = malloc((cnt + 1) * sizeof *sorted);
    if (!sorted) {
        rc = oom();
        goto out;
    }
    if (cnt) {
        memcpy(sorted, L, cnt * sizeof *L);
        qsort(sorted, cnt, sizeof *sorted, cmp_infoline);
    }
    struct dbuf b = {0};
    bool changed = false;
    if (dbuf_append(&b, raw, (size_t)(body - raw))) goto oom_b;
    for (size_t i = 0; i < cnt; i++) {
        if (sorted[i].order != i) changed = true;
        bool dup = false;
        for (size_t j = 0; j < i && sorted[i].key && !dup; j++) dup = sorted[j].key && strcmp(sorted[j].key, sorted[i].key) == 0;
        if (dup) {
            say(n, "infobox: dropped a second '%s' line", sorted[i].key);
            changed = true;
            continue;
        }
        if (sorted[i].key && strcmp(sorted[i].key, "kind") == 0) {
            const char *colon = memchr(sorted[i].s, ':', sorted[i].len);
            char *v = art_strndup_trim(colon + 1, sorted[i].s + sorted[i].len);
            if (!v) goto oom_b;
            bool ok = valid_kind(v);
            if (!ok) say(n, "infobox: kind '%s' is not thing, person, domain, project or standard; made it thing", v);
            free(v);
            if (!ok) {
                if (dbuf_puts(&b, "kind: thing\n")) goto oom_b;
                changed = true;
                continue;
            }
        }
        if (dbuf_append(&b, sorted[i].s, sorted[i].len)) goto oom_b;
        if (sorted[i].s[sorted[i].len - 1] != '\n' && dbuf_putc(&b, '\n')) goto oom_b;
    }
    if (dbuf_puts(&b, body_end)) goto oom_b;
    free(sorted);
    if (changed) {
        say(n, "infobox: keys put in order (type, kind, the rest alphabetically, aliases last)");
        free(it->raw);
        it->raw = dbuf_take(&b);
        rc = it->raw ? art_rerender(a) : oom();
    } else {
        dbuf_free(&b);
    }
    goto out;
oom_b:
    dbuf_free(&b);
    free(sorted);
    rc = oom();
out:
    for (size_t i = 0; i < cnt; i++) free(L[i].key);
    free(L);
    return rc;
}

static int pass_title(struct norm *n)
{
    dream_article *a = n->a;
    if (!n->p || !n->p->stem || !n->p->stem[0]) return 0;
    char *want = strdup(n->p->stem);
    if (!want) return oom();
    for (char *c = want; *c; c++)
        if (*c == '_') *c = ' ';
    int rc = 0;
    if (!a->h1_raw || strcmp(a->title, want) != 0) {
        say(n, "H1 set to '%s' (from the file name)", want);
        rc = soft(dream_article_set_title(a, want));
    }
    free(want);
    return rc;
}

/* One unit of the tail reorder: a level <= 2 section and the deeper sections under it. */
struct unit {
    size_t from, to; /* section range */
    enum dream_article_section_kind kind;
};

/* Appends the lines of body that are not already in dst (blank lines aside). */
static int merge_lines(struct dbuf *dst, const char *body)
{
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        bool blank = true;
        for (size_t i = 0; i < len; i++)
            if (!isspace((unsigned char)p[i])) blank = false;
        bool have = false;
        if (!blank && dst->data) {
            for (const char *q = dst->data; *q && !have;) {
                const char *qn = strchr(q, '\n');
                size_t ql = qn ? (size_t)(qn - q) : strlen(q);
                have = ql == len && memcmp(q, p, len) == 0;
                q = qn ? qn + 1 : q + ql;
            }
        }
        if (!blank && !have) {
            if (dst->len && dst->data[dst->len - 1] != '\n' && dbuf_putc(dst, '\n')) return -1;
            if (dbuf_append(dst, p, len) || dbuf_putc(dst, '\n')) return -1;
        }
        p = nl ? nl + 1 : p + len;
    }
    return 0;
}

static int pass_tail(struct norm *n)
{
    dream_article *a = n->a;
    if (dream_article_is_redirect(a) || !a->n_secs) return 0;
    struct unit *u = calloc(a->n_secs, sizeof *u);
    size_t *order = calloc(a->n_secs, sizeof *order);
    if (!u || !order) {
        free(u);
        free(order);
        return oom();
    }
    size_t nu = 0;
    for (size_t i = 0; i < a->n_secs;) {
        size_t j = i + 1;
        if (a->secs[i].pub.level <= 2)
            while (j < a->n_secs && a->secs[j].pub.level > 2) j++;
        u[nu++] = (struct unit){i, j, a->secs[i].pub.level == 2 ? a->secs[i].pub.kind : DREAM_SECTION_BODY};
        i = j;
    }
    /* order: body units as they are, then each meta kind; duplicates of a kind merge into the
     * first (their deeper sections follow it) */
    size_t no = 0;
    for (size_t k = 0; k < nu; k++)
        if (u[k].kind == DREAM_SECTION_BODY) order[no++] = k;
    for (int kind = DREAM_SECTION_HISTORY; kind <= DREAM_SECTION_REFERENCES; kind++)
        for (size_t k = 0; k < nu; k++)
            if ((int)u[k].kind == kind) order[no++] = k;
    bool moved = false;
    for (size_t k = 0; k < no; k++)
        if (order[k] != k) moved = true;
    size_t dups = 0;
    for (size_t k = 1; k < no; k++)
        if (u[order[k]].kind != DREAM_SECTION_BODY && u[order[k]].kind == u[order[k - 1]].kind) dups++;
    int rc = 0;
    if (moved || dups) {
        struct dbuf b = {0};
        bool fail = false;
        if (a->fm_raw && dbuf_puts(&b, a->fm_raw)) fail = true;
        if (a->front && dbuf_puts(&b, a->front)) fail = true;
        if (a->h1_raw && dbuf_puts(&b, a->h1_raw)) fail = true;
        for (size_t i = 0; i < a->n_items && !fail; i++) fail = dbuf_puts(&b, a->items[i].raw) != 0;
        for (size_t k = 0; k < no && !fail; k++) {
            const struct unit *x = &u[order[k]];
            bool merge_head = x->kind != DREAM_SECTION_BODY && (k == 0 || u[order[k - 1]].kind != x->kind);
            if (!merge_head && x->kind != DREAM_SECTION_BODY) continue; /* merged below */
            if (b.len && b.data[b.len - 1] != '\n' && dbuf_putc(&b, '\n')) fail = true;
            if (merge_head) {
                /* heading, then the merged bodies line-deduplicated, then every deeper section */
                struct dbuf body = {0};
                for (size_t m = k; m < no && u[order[m]].kind == x->kind && !fail; m++) {
                    if (m > k) say(n, "merged a second '## %s' into the first", a->secs[u[order[m]].from].title);
                    if (m == k) {
                        /* the first body without its trailing blank lines, so merged lines join it */
                        const char *fb = a->secs[x->from].body;
                        size_t fl = strlen(fb);
                        while (fl && isspace((unsigned char)fb[fl - 1])) fl--;
                        fail = dbuf_append(&body, fb, fl) || (fl && dbuf_putc(&body, '\n'));
                    } else {
                        fail = merge_lines(&body, a->secs[u[order[m]].from].body) != 0;
                    }
                }
                if (!fail && body.len) fail = dbuf_putc(&body, '\n') != 0;
                if (!fail) fail = dbuf_puts(&b, a->secs[x->from].heading_raw) || dbuf_puts(&b, body.data ? body.data : "");
                dbuf_free(&body);
                for (size_t m = k; m < no && u[order[m]].kind == x->kind && !fail; m++)
                    for (size_t s = u[order[m]].from + 1; s < u[order[m]].to && !fail; s++) {
                        if (b.len && b.data[b.len - 1] != '\n' && dbuf_putc(&b, '\n')) fail = true;
                        fail = fail || dbuf_puts(&b, a->secs[s].heading_raw) || dbuf_puts(&b, a->secs[s].body);
                    }
            } else {
                for (size_t s = x->from; s < x->to && !fail; s++) {
                    if (b.len && b.data[b.len - 1] != '\n' && dbuf_putc(&b, '\n')) fail = true;
                    fail = fail || dbuf_puts(&b, a->secs[s].heading_raw) || dbuf_puts(&b, a->secs[s].body);
                }
            }
        }
        if (fail) {
            dbuf_free(&b);
            rc = oom();
        } else {
            if (moved) say(n, "sections put in order: body, History, See also, Notes, References");
            rc = adopt(a, &b);
        }
    }
    free(u);
    free(order);
    return rc;
}

/* Stub threshold (spec §3.3): fewer than 2 body sections or fewer than 40 words of prose. */
static bool below_stub_threshold(const dream_article *a)
{
    size_t body = 0, words = 0;
    const char *lead = dream_article_lead(a);
    words += dream_article_words(lead, strlen(lead));
    for (size_t i = 0; i < a->n_secs; i++) {
        const struct dream_article_section *s = &a->secs[i].pub;
        if (s->kind == DREAM_SECTION_BODY && s->level >= 2) body++;
        if (s->kind != DREAM_SECTION_REFERENCES && s->kind != DREAM_SECTION_SEE_ALSO)
            words += dream_article_words(s->body, strlen(s->body));
    }
    return body < 2 || words < 40;
}

/* Whether a footnote of a cites a conversation: every article the Dreaming writes does; one that
 * does not is the person's own. */
static bool cites_a_conversation(const dream_article *a)
{
    for (size_t i = 0; i < dream_article_footnote_count(a); i++)
        if (dream_article_footnote(a, i)->n_conv > 0) return true;
    return false;
}

static int pass_stub(struct norm *n)
{
    dream_article *a = n->a;
    if (dream_article_is_redirect(a)) return 0;
    bool had = dream_article_is_stub(a);
    /* the person's own article (nothing cited) keeps its marker, or its lack of one: a short note
     * of theirs that a stage links to or from is not the wiki's stub */
    bool want = n->p && n->p->manage_stub && cites_a_conversation(a) ? below_stub_threshold(a) : had;
    /* the marker's place is right after the H1: an existing one elsewhere moves there */
    bool placed = false;
    for (size_t i = 0; i < a->n_items; i++) {
        if (a->items[i].kind == ART_STUB) {
            placed = true;
            break;
        }
        if (a->items[i].kind != ART_BLANK) break;
    }
    size_t stubs = 0;
    for (size_t i = 0; i < a->n_items; i++) stubs += a->items[i].kind == ART_STUB;
    if (want == had && (!want || (placed && stubs == 1))) return 0;
    if (want != had) say(n, want ? "marked as a stub (below the stub threshold)" : "no longer a stub");
    int rc = had ? soft(dream_article_set_stub(a, false)) : 0;
    if (rc) return rc;
    return want ? soft(dream_article_set_stub(a, true)) : 0;
}

/* ---- E: whitespace ---------------------------------------------------------------------- */

static int pass_whitespace(struct norm *n)
{
    dream_article *a = n->a;
    struct dbuf b = {0};
    bool pending_blank = false;
    for (size_t i = 0; i < a->n_lines; i++) {
        const struct art_line *L = &a->lines[i];
        const char *s = a->text + L->start, *e = a->text + L->end;
        bool inside = L->fenced && !L->delim;
        if (!inside)
            while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\f' || e[-1] == '\v')) e--;
        bool blank = !inside && e == s;
        if (blank) {
            if (b.len) pending_blank = true;
            continue;
        }
        if (L->heading && b.len) pending_blank = true;
        if (pending_blank && dbuf_putc(&b, '\n')) goto fail;
        pending_blank = false;
        if (L->heading) {
            /* canonical heading line: markers, one space, the text */
            int lv = L->heading;
            const char *ts = s + lv, *te = e;
            while (ts < te && (*ts == ' ' || *ts == '\t')) ts++;
            const char *h = te;
            while (h > ts && h[-1] == '#') h--;
            if (h < te && (h == ts || h[-1] == ' ' || h[-1] == '\t')) te = h;
            while (te > ts && (te[-1] == ' ' || te[-1] == '\t')) te--;
            if (dbuf_append(&b, s, (size_t)lv)) goto fail;
            if (te > ts && (dbuf_putc(&b, ' ') || dbuf_append(&b, ts, (size_t)(te - ts)))) goto fail;
            if (dbuf_putc(&b, '\n')) goto fail;
            pending_blank = true;
            continue;
        }
        if (dbuf_append(&b, s, (size_t)(e - s)) || dbuf_putc(&b, '\n')) goto fail;
    }
    if (b.len == a->len && memcmp(b.data ? b.data : "", a->text, a->len) == 0) {
        dbuf_free(&b);
        return 0;
    }
    return adopt(a, &b);
fail:
    dbuf_free(&b);
    return oom();
}

/* ---- the whole ---------------------------------------------------------------------------- */

static int one_round(struct norm *n)
{
    int rc;
    if ((rc = pass_bytes(n)) || (rc = pass_fences(n)) || (rc = pass_footnotes(n)) || (rc = pass_links(n)) ||
        (rc = pass_infobox(n)) || (rc = pass_title(n)) || (rc = pass_tail(n)) || (rc = pass_stub(n)) ||
        (rc = pass_whitespace(n)))
        return rc;
    return 0;
}

int dream_article_normalize(dream_article *a, const struct dream_article_normalize_params *p,
                            dream_article_note_fn note, void *ud)
{
    struct norm n = {a, p, note, ud, false};
    for (int round = 0; round < 4; round++) {
        char *before = malloc(a->len + 1);
        if (!before) return oom();
        memcpy(before, a->text, a->len + 1);
        size_t blen = a->len;
        int rc = one_round(&n);
        bool same = rc == 0 && blen == a->len && memcmp(before, a->text, blen) == 0;
        free(before);
        if (rc) return rc;
        if (same) return 0;
        n.quiet = true;
    }
    n.quiet = false;
    say(&n, "normalize did not settle after 4 rounds; the text may still change on the next call");
    return 0;
}
