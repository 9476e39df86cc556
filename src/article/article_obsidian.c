/* article_obsidian.c — what Obsidian reads in an article (include/dream/article.h): the YAML
 * front matter with its `aliases` and `tags`, categories as tags, the old header forms they
 * replace, and the names a footnote's link uses (transcript notes, block ids).
 *
 * The front matter is YAML, and dream reads only the small part of it that it writes and that
 * Obsidian's property editor writes: top-level `key: value` lines, a value that is a block list
 * (`- item` lines), a flow list (`[a, "b"]`) or one scalar, plain, 'single' or "double" quoted.
 * Every other line is the person's, kept byte for byte; an edit rewrites only its own key. */
#include "article_internal.h"

#include "dream/error.h"
#include "util/buf.h"
#include "util/sha256.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the block ---------------------------------------------------------------------------- */

/* True when [s, e) is "---" with nothing but blanks after it. */
static bool is_dashes(const char *s, const char *e)
{
    if (e - s < 3 || strncmp(s, "---", 3) != 0) return false;
    for (s += 3; s < e; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r') return false;
    return true;
}

size_t art_front_matter_span(const char *t, size_t len, size_t *lines)
{
    *lines = 0;
    const char *nl = memchr(t, '\n', len);
    if (!nl || !is_dashes(t, nl)) return 0;
    size_t n = 1;
    for (const char *p = nl + 1; p < t + len;) {
        const char *q = memchr(p, '\n', (size_t)(t + len - p));
        const char *e = q ? q : t + len;
        n++;
        if (is_dashes(p, e)) {
            *lines = n;
            return (size_t)((q ? q + 1 : e) - t);
        }
        p = q ? q + 1 : e;
    }
    return 0; /* never closed: not front matter (Obsidian reads none either) */
}

size_t dream_article_front_matter_len(const dream_article *a) { return a->fm_len; }

/* ---- YAML scalars ------------------------------------------------------------------------- */

/* Appends the UTF-8 of code point u. */
static int put_utf8(struct dbuf *b, unsigned long u)
{
    char c[4];
    size_t n;
    if (u < 0x80) c[0] = (char)u, n = 1;
    else if (u < 0x800) c[0] = (char)(0xC0 | (u >> 6)), c[1] = (char)(0x80 | (u & 0x3F)), n = 2;
    else if (u < 0x10000)
        c[0] = (char)(0xE0 | (u >> 12)), c[1] = (char)(0x80 | ((u >> 6) & 0x3F)), c[2] = (char)(0x80 | (u & 0x3F)), n = 3;
    else
        c[0] = (char)(0xF0 | (u >> 18)), c[1] = (char)(0x80 | ((u >> 12) & 0x3F)), c[2] = (char)(0x80 | ((u >> 6) & 0x3F)),
        c[3] = (char)(0x80 | (u & 0x3F)), n = 4;
    return dbuf_append(b, c, n);
}

/* The scalar starting at s (before e) decoded into b; *end is where it stopped. stop holds the
 * characters that end a plain scalar (",]" inside a flow list, "" elsewhere). */
static int yaml_scalar(const char *s, const char *e, const char *stop, struct dbuf *b, const char **end)
{
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    int rc = 0;
    if (s < e && *s == '"') {
        for (s++; s < e && *s != '"' && !rc; s++) {
            if (*s != '\\' || s + 1 >= e) {
                rc = dbuf_putc(b, *s);
                continue;
            }
            char c = *++s;
            int hex = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
            if (hex && e - s > hex) {
                unsigned long u = 0;
                for (int i = 1; i <= hex; i++) u = u * 16 + (unsigned long)(isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10) & 15);
                rc = put_utf8(b, u);
                s += hex;
                continue;
            }
            rc = dbuf_putc(b, c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == '0' ? ' ' : c);
        }
        *end = s < e ? s + 1 : e;
        return rc;
    }
    if (s < e && *s == '\'') {
        for (s++; s < e && !rc; s++) {
            if (*s == '\'') {
                if (s + 1 < e && s[1] == '\'') {
                    rc = dbuf_putc(b, '\'');
                    s++;
                    continue;
                }
                break;
            }
            rc = dbuf_putc(b, *s);
        }
        *end = s < e ? s + 1 : e;
        return rc;
    }
    const char *p = s;
    while (p < e && !strchr(stop, *p) && !(*p == '#' && p > s && (p[-1] == ' ' || p[-1] == '\t'))) p++;
    *end = p;
    while (p > s && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r')) p--;
    return dbuf_append(b, s, (size_t)(p - s));
}

/* A plain scalar YAML reads back as the same string: a letter or '_' first (no number, date,
 * or indicator), then letters, digits and a few quiet marks, no edge blank, no reserved word. */
static bool yaml_plain_ok(const char *s)
{
    static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
    unsigned char c0 = (unsigned char)s[0];
    if (!(isalpha(c0) || c0 == '_' || c0 >= 0x80)) return false;
    size_t n = strlen(s);
    if (s[n - 1] == ' ') return false;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!(isalnum(c) || c >= 0x80 || strchr(" _-.'()/&+", c))) return false;
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(s, words[i]) == 0) return false;
    return true;
}

/* s as a YAML scalar: plain when that reads back as s, else double-quoted (JSON's escapes are
 * YAML's too). */
static int yaml_put(struct dbuf *b, const char *s)
{
    if (yaml_plain_ok(s)) return dbuf_puts(b, s);
    int rc = dbuf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        if (*p == '"' || *p == '\\') rc = dbuf_putc(b, '\\') || dbuf_putc(b, (char)*p);
        else if (*p == '\t') rc = dbuf_puts(b, "\\t");
        else if (*p < 0x20 || *p == 0x7f) rc = dbuf_printf(b, "\\u%04x", *p);
        else rc = dbuf_putc(b, (char)*p);
    }
    return rc || dbuf_putc(b, '"');
}

/* ---- top-level keys ----------------------------------------------------------------------- */

/* One top-level entry of the front matter: a key line and its continuation lines, or a line of
 * something else (a comment, a stray line), as a byte range of the text. */
struct fm_entry {
    size_t from, to;       /* whole lines */
    char *key;             /* NULL for a line that is no key */
    size_t value, key_end; /* the inline value's start, and the key line's end */
};

static bool is_blank_line(const char *s, const char *e)
{
    for (; s < e; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

/* The entries of the body [from, to) of text; malloc'd (keys too); NULL with *n 0 when empty. */
static struct fm_entry *fm_entries(const char *t, size_t from, size_t to, size_t *n, bool *oom)
{
    struct fm_entry *v = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t p = from; p < to;) {
        const char *nl = memchr(t + p, '\n', to - p);
        size_t e = nl ? (size_t)(nl - t) : to, next = nl ? e + 1 : to;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            struct fm_entry *g = realloc(v, cap * sizeof *g);
            if (!g) goto fail;
            v = g;
        }
        struct fm_entry *en = &v[(*n)++];
        *en = (struct fm_entry){p, next, NULL, e, e};
        const char *colon = memchr(t + p, ':', e - p);
        char c0 = t[p];
        if (colon && c0 != ' ' && c0 != '\t' && c0 != '-' && c0 != '#' && ((size_t)(colon - t) + 1 == e || colon[1] == ' ' || colon[1] == '\t' || colon[1] == '\r')) {
            const char *ks = t + p, *ke = colon;
            if ((*ks == '"' || *ks == '\'') && ke - ks >= 2 && ke[-1] == *ks) ks++, ke--;
            if (!(en->key = art_strndup_trim(ks, ke))) goto fail;
            en->value = (size_t)(colon + 1 - t);
            /* continuation: indented lines, and '-' items under a key with no inline value */
            bool empty = is_blank_line(colon + 1, t + e) || colon[1 + strspn(colon + 1, " \t")] == '#';
            while (next < to) {
                const char *q = memchr(t + next, '\n', to - next);
                size_t qe = q ? (size_t)(q - t) : to;
                char c = t[next];
                if (!(c == ' ' || c == '\t' || (c == '-' && empty)) || is_blank_line(t + next, t + qe)) break;
                next = q ? qe + 1 : to;
            }
            en->to = next;
        }
        p = next;
    }
    return v;
fail:
    *oom = true;
    for (size_t i = 0; i < *n; i++) free(v[i].key);
    free(v);
    *n = 0;
    return NULL;
}

static void fm_entries_free(struct fm_entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].key);
    free(v);
}

/* Appends item to the list *v of *n unless it is empty or there already (case aside). */
static int list_add(char ***v, size_t *n, const char *item)
{
    if (!item[0]) return 0;
    for (size_t i = 0; i < *n; i++)
        if (strcasecmp((*v)[i], item) == 0) return 0;
    char **g = realloc(*v, (*n + 1) * sizeof *g);
    if (!g) return -1;
    *v = g;
    if (!(g[*n] = strdup(item))) return -1;
    (*n)++;
    return 0;
}

/* The items of entry en's value into *v: block items, a flow list, or one scalar (split on
 * commas and blanks when split). tags: '#' taken off and made category names. */
static int fm_list(const char *t, const struct fm_entry *en, bool tags, char ***v, size_t *n)
{
    const char *s = t + en->value, *e = t + en->key_end;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    struct dbuf b = {0};
    int rc = 0;
    size_t want = 0; /* items to add: each is NUL-separated in b */
    if (s < e && *s == '[') {
        for (const char *p = s + 1; p < e && *p != ']' && !rc;) {
            const char *stop;
            rc = yaml_scalar(p, e, ",]", &b, &stop) || dbuf_putc(&b, '\0');
            want++;
            if (stop == p && *p != ',' && *p != ']') stop++; /* a NUL ends a scalar: pass it */
            p = stop;
            while (p < e && (*p == ' ' || *p == '\t')) p++;
            if (p < e && *p == ',') p++;
        }
    } else if (s < e && *s != '#' && *s != '|' && *s != '>' && !is_blank_line(s, e)) {
        const char *stop;
        rc = yaml_scalar(s, e, "", &b, &stop) || dbuf_putc(&b, '\0');
        want++;
        if (tags && !rc)
            for (size_t i = 0; i < b.len; i++)
                if (b.data[i] == ',' || b.data[i] == ' ') b.data[i] = '\0', want++;
    } else {
        for (size_t p = en->key_end + 1; p < en->to && !rc;) {
            const char *nl = memchr(t + p, '\n', en->to - p);
            size_t le = nl ? (size_t)(nl - t) : en->to;
            const char *q = t + p;
            while (q < t + le && (*q == ' ' || *q == '\t')) q++;
            if (q < t + le && *q == '-' && (q + 1 == t + le || q[1] == ' ' || q[1] == '\t')) {
                const char *stop;
                rc = yaml_scalar(q + 1, t + le, "", &b, &stop) || dbuf_putc(&b, '\0');
                want++;
            }
            p = nl ? le + 1 : en->to;
        }
    }
    for (size_t i = 0, at = 0; !rc && i < want && at < b.len; i++) {
        const char *item = b.data + at;
        at += strlen(item) + 1;
        if (tags) {
            char *cat = dream_tag_category(item);
            rc = !cat || list_add(v, n, cat);
            free(cat);
        } else {
            char *tr = art_strndup_trim(item, item + strlen(item));
            rc = !tr || list_add(v, n, tr);
            free(tr);
        }
    }
    dbuf_free(&b);
    return rc ? -1 : 0;
}

int art_front_index(dream_article *a)
{
    if (a->fm_len) {
        const char *t = a->text;
        size_t body = (size_t)(strchr(t, '\n') + 1 - t), end = a->lines[a->fm_lines - 1].start;
        size_t n = 0;
        bool oom = false;
        struct fm_entry *v = fm_entries(t, body, end, &n, &oom);
        if (oom) return -1;
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (!v[i].key) continue;
            if (strcmp(v[i].key, "aliases") == 0) rc = fm_list(t, &v[i], false, &a->aliases, &a->n_aliases);
            else if (strcmp(v[i].key, "tags") == 0) rc = fm_list(t, &v[i], true, &a->cats, &a->n_cats);
        }
        fm_entries_free(v, n);
        if (rc) return -1;
    }
    /* the older forms: the infobox's aliases line, the header's categories line */
    for (size_t i = 0; i < a->n_fields; i++) {
        if (strcmp(a->fields[i].key, "aliases") != 0) continue;
        for (const char *p = a->fields[i].value; *p;) {
            const char *c = strchr(p, ',');
            const char *e = c ? c : p + strlen(p);
            char *tr = art_strndup_trim(p, e);
            if (!tr || list_add(&a->aliases, &a->n_aliases, tr)) {
                free(tr);
                return -1;
            }
            free(tr);
            p = c ? c + 1 : e;
        }
    }
    for (size_t j = 0; j < a->n_links; j++) {
        const struct dream_article_link *l = &a->links[j];
        if (strncasecmp(l->target, "Category:", 9) != 0) continue;
        for (size_t k = 0; k < a->n_items; k++)
            if (a->items[k].kind == ART_CATEGORIES && a->items[k].line == l->line) {
                char *tr = art_strndup_trim(l->target + 9, l->target + strlen(l->target));
                if (!tr || list_add(&a->cats, &a->n_cats, tr)) {
                    free(tr);
                    return -1;
                }
                free(tr);
                break;
            }
    }
    return 0;
}

/* ---- editing the block -------------------------------------------------------------------- */

/* Makes key's value the block list of items (n == 0: the key goes) in a->fm_raw; a new key goes
 * first (tags: after aliases), a new block first in the file. Re-renders a. */
static int fm_set_list(dream_article *a, const char *key, char *const *items, size_t n)
{
    const char *raw = a->fm_raw ? a->fm_raw : "";
    size_t rl = strlen(raw);
    size_t body = a->fm_raw ? (size_t)(strchr(raw, '\n') + 1 - raw) : 0, end = body;
    if (a->fm_raw) { /* the closing line's start */
        end = rl;
        if (end && raw[end - 1] == '\n') end--;
        while (end > body && raw[end - 1] != '\n') end--;
    }
    size_t ne = 0;
    bool oom = false;
    struct fm_entry *v = fm_entries(raw, body, end, &ne, &oom);
    if (oom) return dream_error_set(DREAM_ENOMEM, "out of memory");
    struct dbuf list = {0}, b = {0};
    int rc = 0;
    if (n) rc = dbuf_printf(&list, "%s:\n", key);
    for (size_t i = 0; i < n && !rc; i++) rc = dbuf_puts(&list, "  - ") || yaml_put(&list, items[i]) || dbuf_putc(&list, '\n');
    /* where a new key goes: before entry `at` */
    size_t at = 0;
    bool have = false;
    for (size_t i = 0; i < ne; i++) {
        if (v[i].key && strcmp(v[i].key, key) == 0) have = true;
        if (v[i].key && strcmp(key, "tags") == 0 && strcmp(v[i].key, "aliases") == 0) at = i + 1;
    }
    bool put = false, any = false;
    for (size_t i = 0; i <= ne && !rc; i++) {
        if (!have && !put && i == at) {
            rc = dbuf_append(&b, list.data ? list.data : "", list.len);
            put = true;
        }
        if (i == ne) break;
        if (v[i].key && strcmp(v[i].key, key) == 0) {
            if (!put) rc = dbuf_append(&b, list.data ? list.data : "", list.len);
            put = true;
            continue;
        }
        rc = dbuf_append(&b, raw + v[i].from, v[i].to - v[i].from);
        if (!rc && !is_blank_line(raw + v[i].from, raw + v[i].to)) any = true;
        if (!rc && raw[v[i].to - 1] != '\n') rc = dbuf_putc(&b, '\n');
    }
    fm_entries_free(v, ne);
    any = any || n;
    char *fm = NULL;
    if (!rc && any) {
        struct dbuf f = {0};
        const char *close = a->fm_raw ? raw + end : "---\n";
        rc = dbuf_puts(&f, "---\n") || dbuf_append(&f, b.data ? b.data : "", b.len) || dbuf_puts(&f, close) ||
             (close[strlen(close) - 1] != '\n' && dbuf_putc(&f, '\n'));
        fm = rc ? NULL : dbuf_take(&f);
        if (!rc && !fm) rc = DREAM_ENOMEM;
        dbuf_free(&f);
    }
    dbuf_free(&list);
    dbuf_free(&b);
    if (rc) {
        free(fm);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    bool created = fm && !a->fm_raw;
    free(a->fm_raw);
    a->fm_raw = fm;
    if (created && a->h1_raw && !a->front[0]) { /* one blank line between the block and the H1 */
        char *f = strdup("\n");
        if (!f) return dream_error_set(DREAM_ENOMEM, "out of memory");
        free(a->front);
        a->front = f;
    }
    return art_rerender(a);
}

/* ---- aliases and categories --------------------------------------------------------------- */

size_t dream_article_alias_count(const dream_article *a) { return a->n_aliases; }
const char *dream_article_alias(const dream_article *a, size_t i) { return i < a->n_aliases ? a->aliases[i] : NULL; }
size_t dream_article_category_count(const dream_article *a) { return a->n_cats; }
const char *dream_article_category(const dream_article *a, size_t i) { return i < a->n_cats ? a->cats[i] : NULL; }

static void strings_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

char *dream_category_tag(const char *category)
{
    struct dbuf b = {0};
    bool letter = false;
    for (const unsigned char *p = (const unsigned char *)(category ? category : ""); *p; p++) {
        unsigned char c = *p;
        int rc = 0;
        if (isalnum(c) || c >= 0x80 || c == '-' || c == '/') {
            rc = dbuf_putc(&b, (char)c);
            if (!isdigit(c)) letter = true;
        } else if ((c == ' ' || c == '_' || c == '\t') && b.len && b.data[b.len - 1] != '_') {
            rc = dbuf_putc(&b, '_');
        }
        if (rc) {
            dbuf_free(&b);
            return NULL;
        }
    }
    while (b.len && b.data[b.len - 1] == '_') b.len--;
    if (!b.len) {
        dbuf_free(&b);
        return NULL;
    }
    struct dbuf r = {0};
    int rc = (!letter && dbuf_putc(&r, '_')) || dbuf_append(&r, b.data, b.len);
    dbuf_free(&b);
    if (rc) {
        dbuf_free(&r);
        return NULL;
    }
    return dbuf_take(&r);
}

char *dream_tag_category(const char *tag)
{
    const char *s = tag ? tag : "";
    while (*s == '#') s++;
    char *r = art_strndup_trim(s, s + strlen(s));
    if (!r) return NULL;
    for (char *p = r; *p; p++)
        if (*p == '_') *p = ' ';
    char *t = art_strndup_trim(r, r + strlen(r));
    free(r);
    return t;
}

int dream_article_set_categories(dream_article *a, const char *const *names, size_t n)
{
    int rc = dream_article_editable(a, NULL);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if (!names[i] || strpbrk(names[i], "\n\r"))
            return dream_error_set(DREAM_EINVAL, "category name '%s' may not hold a newline", names[i] ? names[i] : "(null)");
    char **tags = NULL;
    size_t nt = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *tag = dream_category_tag(names[i]);
        if (tag) rc = list_add(&tags, &nt, tag) ? dream_error_set(DREAM_ENOMEM, "out of memory") : 0;
        free(tag);
    }
    for (size_t i = a->n_items; !rc && i-- > 0;)
        if (a->items[i].kind == ART_CATEGORIES) art_remove_item_tidy(a, i);
    if (!rc) rc = fm_set_list(a, "tags", tags, nt);
    strings_free(tags, nt);
    return rc;
}

int dream_article_set_aliases(dream_article *a, const char *const *names, size_t n)
{
    int rc = dream_article_editable(a, NULL);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if (!names[i] || !names[i][0] || strpbrk(names[i], "\n\r"))
            return dream_error_set(DREAM_EINVAL, "alias '%s' may not be empty or hold a newline", names[i] ? names[i] : "(null)");
    char **v = NULL;
    size_t nv = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *tr = art_strndup_trim(names[i], names[i] + strlen(names[i]));
        if (!tr || list_add(&v, &nv, tr)) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        free(tr);
    }
    if (!rc && dream_article_infobox_get(a, "aliases")) {
        rc = dream_article_infobox_set(a, "aliases", NULL);
        /* an infobox that held nothing else goes with it */
        if (!rc && a->infobox_item >= 0 && a->n_fields == 0) {
            const char *r = a->items[a->infobox_item].raw;
            size_t lines = 0;
            for (const char *p = r; *p; p++) lines += *p == '\n';
            if (lines <= 2) art_remove_item_tidy(a, (size_t)a->infobox_item);
        }
    }
    if (!rc) rc = fm_set_list(a, "aliases", v, nv);
    strings_free(v, nv);
    return rc;
}

int dream_article_migrate(dream_article *a, bool *changed)
{
    *changed = false;
    bool cats_line = false;
    for (size_t i = 0; i < a->n_items; i++) cats_line = cats_line || a->items[i].kind == ART_CATEGORIES;
    bool alias_line = dream_article_infobox_get(a, "aliases") != NULL;
    if (!cats_line && !alias_line) return 0;
    int rc = dream_article_editable(a, NULL);
    if (rc) return rc;
    /* copies first: the edits re-parse a, and the lists point into it */
    size_t nc = a->n_cats, na = a->n_aliases;
    char **cats = calloc(nc + 1, sizeof *cats), **als = calloc(na + 1, sizeof *als);
    if (!cats || !als) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < nc; i++)
        if (!(cats[i] = strdup(a->cats[i]))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < na; i++)
        if (!(als[i] = strdup(a->aliases[i]))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    if (!rc && cats_line) rc = dream_article_set_categories(a, (const char *const *)cats, nc);
    if (!rc && alias_line) rc = dream_article_set_aliases(a, (const char *const *)als, na);
    if (!rc) *changed = true;
    strings_free(cats, nc);
    strings_free(als, na);
    return rc;
}

/* ---- the names a footnote's link uses ----------------------------------------------------- */

char *dream_citation_block_id(const char *msg)
{
    const char *m = msg ? msg : "";
    bool clean = m[0] != '\0';
    for (const char *p = m; clean && *p; p++) clean = isalnum((unsigned char)*p) || *p == '-';
    if (clean) return strdup(m);
    struct dbuf b = {0};
    for (const unsigned char *p = (const unsigned char *)m; *p; p++) {
        bool ok = isalnum(*p) || *p == '-';
        if (!ok && b.len && b.data[b.len - 1] == '-') continue;
        if (dbuf_putc(&b, ok ? (char)*p : '-')) {
            dbuf_free(&b);
            return NULL;
        }
    }
    char hex[65];
    sha256_hex_of(m, strlen(m), hex);
    if (dbuf_printf(&b, "%s%.8s", b.len && b.data[b.len - 1] == '-' ? "" : "-", hex)) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

char *dream_source_note(const char *conv, const char *date, const char *title)
{
    struct dbuf t = {0};
    for (const unsigned char *p = (const unsigned char *)(title ? title : ""); *p; p++) {
        bool bad = *p < 0x20 || *p == 0x7f || strchr("\\/:*?\"<>|#^[]`", *p);
        if (*p == '%' && t.len && t.data[t.len - 1] == '%') continue; /* %% opens an Obsidian comment */
        char c = bad ? ' ' : (char)*p;
        if (c == ' ' && (!t.len || t.data[t.len - 1] == ' ')) continue;
        if (dbuf_putc(&t, c)) {
            dbuf_free(&t);
            return NULL;
        }
    }
    size_t len = utf8_prefix(t.data ? t.data : "", t.len, DREAM_SOURCE_TITLE_MAX);
    size_t from = 0;
    while (from < len && (t.data[from] == '.' || t.data[from] == ' ')) from++;
    while (len > from && (t.data[len - 1] == '.' || t.data[len - 1] == ' ')) len--;
    const char *ts = len > from ? t.data + from : "conversation";
    int tl = len > from ? (int)(len - from) : (int)strlen("conversation");
    struct dbuf b = {0};
    int rc = dbuf_printf(&b, "%s/%s %.*s (%s)", DREAM_SOURCES_DIR, date && date[0] ? date : DREAM_CITATION_UNDATED, tl, ts, conv ? conv : "");
    dbuf_free(&t);
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}
