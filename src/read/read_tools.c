/* read_tools.c — the read tools over a reader's snapshot (see dream/read.h): resolve, read,
 * section, links, infobox, list, membership and search, plus the one dispatcher. */
#include "read_internal.h"

#include "dream/error.h"
#include "entity_name.h"
#include "store_internal.h"
#include "util/buf.h"
#include "util/day.h"
#include "util/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define READ_LEAD_RESOLVE 360
#define READ_LEAD_READ 480
#define READ_LEAD_ROW 140
#define READ_GROUP_MAX 25
#define READ_MEMBERS_MAX 40
#define READ_SECTION_MAX 8192

static int read_oom(json_t **out)
{
    dream_error_set(DREAM_ENOMEM, "out of memory");
    return read_error_object(out, DREAM_ENOMEM);
}

/* Adds key: clipped text to obj. */
static void read_set_clip(json_t *obj, const char *key, const char *text, size_t max)
{
    char *c = read_clip(text ? text : "", max);
    json_object_set_new(obj, key, json_string(c ? c : ""));
    free(c);
}

static void read_set_infobox_str(json_t *obj, const dream_article *a, const char *key)
{
    const char *v = dream_article_infobox_get(a, key);
    if (v && v[0]) read_set_clip(obj, key, v, 100);
}

/* Sets key to text clipped to at most max bytes, less when o would be over the budget. */
static void read_fit_clip(json_t *o, const char *key, const char *text, size_t max)
{
    read_set_clip(o, key, text, max);
    while (max > 40 && read_json_size(o) > DREAM_READ_BUDGET - 256) {
        max /= 2;
        read_set_clip(o, key, text, max);
    }
}

/* Keeps o within the budget by dropping the last element of the arrays, the first given
 * emptied first, counting what each lost in more under its name. */
static void read_fit_arrays(json_t *o, json_t *const *arrays, const char *const *names, size_t n, json_t *more)
{
    for (size_t k = 0; k < n; k++) {
        while (json_array_size(arrays[k]) && read_json_size(o) + read_json_size(more) > DREAM_READ_BUDGET - 16) {
            json_array_remove(arrays[k], json_array_size(arrays[k]) - 1);
            json_int_t was = json_integer_value(json_object_get(more, names[k]));
            json_object_set_new(more, names[k], json_integer(was + 1));
        }
    }
}

/* The article a tool is asked about: by stem (link rules), else by any name resolve knows. */
/* The target a redirect page names (`*Redirects to [[X]].*`), or NULL. */
static const char *read_redirect_target(const dream_article *a)
{
    size_t len;
    const char *text = dream_article_text(a, &len);
    static const char lead[] = "*Redirects to ";
    const size_t ll = sizeof lead - 1;
    for (size_t k = 0; k < dream_article_link_count(a); k++) {
        const struct dream_article_link *l = dream_article_link(a, k);
        if (l->offset >= ll && strncasecmp(text + l->offset - ll, lead, ll) == 0 && l->target[0]) return l->target;
    }
    return NULL;
}

/* Entry i, or the article its redirect page leads to (a few hops at most, so a loop ends):
 * *from is then the redirect's stem (the first one), else NULL. A redirect whose target is no
 * article stays itself. */
static long read_follow(const dream_reader *r, long i, const char **from)
{
    *from = NULL;
    for (int hops = 0; i >= 0 && hops < 4 && dream_article_is_redirect(r->e[i].a); hops++) {
        const char *t = read_redirect_target(r->e[i].a);
        long j = t ? read_find(r, t) : -1;
        if (j < 0 || j == i) break;
        if (!*from) *from = r->e[i].stem;
        i = j;
    }
    return i;
}

/* The entry a name leads to, through a redirect page (*from, as read_follow). */
static long read_named_from(const dream_reader *r, const char *name, const char **from)
{
    const char *how;
    *from = NULL;
    return name && name[0] ? read_follow(r, read_lookup(r, name, &how), from) : -1;
}

static long read_named(const dream_reader *r, const char *name)
{
    const char *from;
    return read_named_from(r, name, &from);
}

/* ---- resolve ---------------------------------------------------------------------------- */

/* The captured subject named name, or NULL: an entity without an article, or one whose article
 * is not in the wiki now (the person deleted or renamed it; resolve asks here only after no
 * article answered). */
static json_t *read_captured(dream_reader *r, const char *name)
{
    if (!r->store) return NULL;
    char *nf = NULL, *sq = NULL;
    if (entity_name_normal(name, &nf) != 0 || entity_name_squeeze(nf, &sq) != 0) {
        dream_error_clear();
        free(nf);
        return NULL;
    }
    sqlite3 *db = store_db(r->store);
    sqlite3_stmt *st = NULL;
    json_t *res = NULL;
    const char *sql = "SELECT id, name FROM pipeline_entities WHERE normal = ?1 OR (?2 <> '' AND squeezed = ?2)"
                      " UNION ALL SELECT e.id, e.name FROM chunk_mentions m JOIN pipeline_entities e ON e.id = m.entity"
                      " WHERE m.normal = ?1 LIMIT 1";
    int64_t id = -1;
    char *ename = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, nf, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, sq, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            id = sqlite3_column_int64(st, 0);
            ename = strdup((const char *)sqlite3_column_text(st, 1));
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    if (id >= 0 && ename) {
        json_t *mentions = json_array();
        int64_t chunks = 0;
        const char *q = "SELECT c.cite, c.title, k.label FROM chunk_mentions m JOIN chunks k ON k.id = m.chunk"
                        " JOIN conversations c ON c.id = k.conversation WHERE m.entity = ?1"
                        " ORDER BY coalesce(c.updated_at, 0), c.id, k.first_position";
        if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, id);
            while (sqlite3_step(st) == SQLITE_ROW) {
                if (chunks++ < 5)
                    json_array_append_new(mentions, json_pack("{ss so so}", "cite", (const char *)sqlite3_column_text(st, 0), "title",
                                                              read_json_text((const char *)sqlite3_column_text(st, 1), (size_t)sqlite3_column_bytes(st, 1)),
                                                              "label",
                                                              read_json_text((const char *)sqlite3_column_text(st, 2), (size_t)sqlite3_column_bytes(st, 2))));
            }
        }
        sqlite3_finalize(st);
        char *shown = read_clip(name, READ_TITLE_MAX);
        res = json_pack("{ss ss ss sI so}", "status", "captured", "query", shown ? shown : "", "name", ename, "chunks", (json_int_t)chunks,
                        "mentions", mentions);
        free(shown);
    }
    free(ename);
    free(nf);
    free(sq);
    return res;
}

int dream_read_resolve(dream_reader *r, const char *name, json_t **out)
{
    *out = NULL;
    if (!name || !name[0]) {
        dream_error_set(DREAM_EINVAL, "resolve needs a name (an article title, stem or alias)");
        return read_error_object(out, DREAM_EINVAL);
    }
    const char *how = NULL, *from = NULL;
    long i = read_follow(r, read_lookup(r, name, &how), &from);
    if (i < 0) {
        json_t *cap = read_captured(r, name);
        if (cap) {
            *out = cap;
            return 0;
        }
        return read_missing(r, name, out);
    }
    const struct read_entry *e = &r->e[i];
    char *title = read_title_out(e);
    json_t *o = json_pack("{ss ss ss ss}", "status", "article", "stem", e->stem, "title", title ? title : e->stem, "matched", how);
    free(title);
    if (!o) return read_oom(out);
    read_set_infobox_str(o, e->a, "kind");
    read_set_infobox_str(o, e->a, "type");
    if (from) json_object_set_new(o, "redirected_from", json_string(from));
    read_fit_clip(o, "lead", dream_article_lead(e->a), READ_LEAD_RESOLVE);
    *out = o;
    return 0;
}

/* ---- read ------------------------------------------------------------------------------- */

/* The default read: title, clipped lead, table of contents within the budget. */
static json_t *read_toc(const struct read_entry *e)
{
    char *title = read_title_out(e);
    size_t bytes = 0;
    dream_article_text(e->a, &bytes);
    json_t *o = json_pack("{ss ss sI}", "stem", e->stem, "title", title ? title : e->stem, "bytes", (json_int_t)bytes);
    free(title);
    if (!o) return NULL;
    read_set_infobox_str(o, e->a, "type");
    read_fit_clip(o, "lead", dream_article_lead(e->a), READ_LEAD_READ);
    json_t *secs = json_array();
    json_object_set_new(o, "sections", secs);
    size_t used = read_json_size(o) + 64; /* room for "more_sections" */
    size_t n = dream_article_section_count(e->a), i = 0;
    for (; i < n; i++) {
        const struct dream_article_section *s = dream_article_section(e->a, i);
        char *t = read_clip(s->title, 80);
        json_t *row = json_pack("{ss ss si}", "anchor", s->anchor, "title", t ? t : "", "level", s->level);
        free(t);
        size_t sz = read_json_size(row) + 1;
        if (used + sz > DREAM_READ_BUDGET) {
            json_decref(row);
            break;
        }
        used += sz;
        json_array_append_new(secs, row);
    }
    if (i < n) json_object_set_new(o, "more_sections", json_integer((json_int_t)(n - i)));
    return o;
}

int dream_read_article(dream_reader *r, const char *name, bool whole, json_t **out)
{
    *out = NULL;
    const char *from = NULL;
    long i = read_named_from(r, name, &from);
    if (i < 0) return read_missing(r, name ? name : "", out);
    const struct read_entry *e = &r->e[i];
    size_t len = 0;
    const char *text = dream_article_text(e->a, &len);
    if (whole && len <= DREAM_READ_WHOLE_MAX) {
        char *title = read_title_out(e);
        *out = json_pack("{ss ss sI so}", "stem", e->stem, "title", title ? title : e->stem, "bytes", (json_int_t)len, "text", read_json_text(text, len));
        free(title);
        if (*out && from) json_object_set_new(*out, "redirected_from", json_string(from));
        return *out ? 0 : read_oom(out);
    }
    json_t *o = read_toc(e);
    if (!o) return read_oom(out);
    if (from) json_object_set_new(o, "redirected_from", json_string(from));
    if (whole) {
        json_object_set_new(o, "too_big", json_true());
        char note[160];
        snprintf(note, sizeof note, "%zu bytes is over the whole-read limit of %d; read one section", len, DREAM_READ_WHOLE_MAX);
        json_object_set_new(o, "note", json_string(note));
    }
    *out = o;
    return 0;
}

/* ---- section ---------------------------------------------------------------------------- */

/* Byte offset of the start of 1-based line in text (len when past the end). */
static size_t read_line_offset(const char *text, size_t len, int line)
{
    size_t off = 0;
    for (int l = 1; l < line && off < len; off++)
        if (text[off] == '\n') l++;
    return off;
}

int dream_read_section(dream_reader *r, const char *name, const char *anchor, json_t **out)
{
    *out = NULL;
    long i = read_named(r, name);
    if (i < 0) return read_missing(r, name ? name : "", out);
    const struct read_entry *e = &r->e[i];
    if (!anchor || !anchor[0]) {
        dream_error_set(DREAM_EINVAL, "section needs an anchor (see `dream read %s` for the article's sections)", e->stem);
        return read_error_object(out, DREAM_EINVAL);
    }
    while (*anchor == '#') anchor++;
    long s = dream_article_section_find(e->a, anchor);
    if (s < 0) {
        json_t *anchors = json_array();
        for (size_t k = 0; k < dream_article_section_count(e->a) && k < 40; k++)
            if (strlen(dream_article_section(e->a, k)->anchor) <= 80) json_array_append_new(anchors, json_string(dream_article_section(e->a, k)->anchor));
        dream_error_set(DREAM_ENOTFOUND, "no section '%.*s' in %s; see `dream read %s` for its sections", utf8_cut(anchor, 100), anchor, e->stem, e->stem);
        *out = json_pack("{ss ss so}", "error", dream_error_last(), "stem", e->stem, "anchors", anchors);
        return DREAM_ENOTFOUND;
    }
    const struct dream_article_section *sec = dream_article_section(e->a, (size_t)s);
    size_t end = dream_article_section_end(e->a, (size_t)s);
    size_t len = 0;
    const char *text = dream_article_text(e->a, &len);
    size_t from = read_line_offset(text, len, sec->line);
    size_t to = end < dream_article_section_count(e->a) ? read_line_offset(text, len, dream_article_section(e->a, end)->line) : len;
    bool truncated = false;
    if (to - from > READ_SECTION_MAX) {
        to = from + READ_SECTION_MAX;
        while (to > from && ((unsigned char)text[to] & 0xC0) == 0x80) to--;
        truncated = true;
    }
    while (to > from && (text[to - 1] == '\n' || text[to - 1] == ' ')) to--;
    char *stitle = read_clip(sec->title, READ_TITLE_MAX);
    json_t *o = json_pack("{ss ss ss so}", "stem", e->stem, "anchor", sec->anchor, "title", stitle ? stitle : "", "text", read_json_text(text + from, to - from));
    free(stitle);
    if (!o) return read_oom(out);
    /* The definitions its markers cite, so a claim's provenance comes with it. */
    json_t *refs = json_array();
    int first_line = sec->line, last_line = end < dream_article_section_count(e->a) ? dream_article_section(e->a, end)->line : 1 << 30;
    for (size_t k = 0; k < dream_article_ref_count(e->a); k++) {
        const struct dream_article_ref *m = dream_article_ref(e->a, k);
        if (m->line < first_line || m->line >= last_line || m->offset >= from + (to - from)) continue;
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++) {
            const struct dream_article_ref *p = dream_article_ref(e->a, j);
            seen = p->line >= first_line && p->line < last_line && strcmp(p->label, m->label) == 0;
        }
        if (seen) continue;
        for (size_t f = 0; f < dream_article_footnote_count(e->a); f++) {
            const struct dream_article_footnote *fn = dream_article_footnote(e->a, f);
            if (strcmp(fn->label, m->label) == 0) {
                json_array_append_new(refs, json_pack("{so so}", "label", read_json_text(fn->label, strlen(fn->label)), "text", read_json_text(fn->text, strlen(fn->text))));
                break;
            }
        }
    }
    json_object_set_new(o, "references", refs);
    if (truncated) json_object_set_new(o, "truncated", json_true());
    *out = o;
    return 0;
}

/* ---- links ------------------------------------------------------------------------------ */

enum read_group { READ_G_INFOBOX, READ_G_SERIES, READ_G_MAIN, READ_G_SEE_ALSO, READ_G_PROSE, READ_G_COUNT };
static const char *const read_group_names[READ_G_COUNT] = {"infobox", "series", "main", "see_also", "prose"};

/* Where each line of one article's text begins, made on first use: the line of each of an
 * article's links is then found at once, where counting newlines from the start of the text for
 * every link is quadratic (minutes for a 2 MB article of 120,000 links). */
struct read_lines {
    const dream_article *a;
    size_t *at; /* at[k]: the byte where line k + 1 begins; NULL until needed */
    size_t n;
};

static void read_lines_free(struct read_lines *l)
{
    free(l->at);
    l->at = NULL;
    l->n = 0;
}

/* Fills l->at; false when out of memory (l stays empty). */
static bool read_lines_index(struct read_lines *l, const char *t, size_t len)
{
    size_t n = 1;
    for (const char *p = t; (p = memchr(p, '\n', len - (size_t)(p - t))); p++) n++;
    if (!(l->at = malloc(n * sizeof *l->at))) return false;
    l->at[0] = 0;
    l->n = 1;
    for (const char *p = t; (p = memchr(p, '\n', len - (size_t)(p - t))); p++) l->at[l->n++] = (size_t)(p - t) + 1;
    return true;
}

/* The text of 1-based line of l's article (not NUL-terminated at the line's end). Out of memory
 * for the index, the line is found by counting, as slow as before but right. */
static const char *read_line_start(struct read_lines *l, int line, size_t *n)
{
    size_t len = 0;
    const char *t = dream_article_text(l->a, &len);
    if (!l->at) read_lines_index(l, t, len);
    size_t off = !l->at ? read_line_offset(t, len, line) : line < 1 ? 0 : (size_t)line <= l->n ? l->at[line - 1] : len;
    const char *nl = memchr(t + off, '\n', len - off);
    *n = nl ? (size_t)(nl - (t + off)) : len - off;
    return t + off;
}

static enum read_group read_link_group(struct read_lines *lines, const struct dream_article_link *l)
{
    if (l->in_see_also) return READ_G_SEE_ALSO;
    const dream_article *a = lines->a;
    for (size_t k = 0; k < dream_article_infobox_count(a); k++)
        if (dream_article_infobox_field(a, k)->line == l->line) return READ_G_INFOBOX;
    size_t n = 0;
    const char *s = read_line_start(lines, l->line, &n);
    while (n && (*s == ' ' || *s == '\t')) s++, n--;
    if (n > 16 && strncasecmp(s, "*Part of a series", 17) == 0) return READ_G_SERIES;
    if (n > 14 && strncasecmp(s, "*Main article", 13) == 0) return READ_G_MAIN;
    return READ_G_PROSE;
}

/* Appends s to arr unless present; past READ_GROUP_MAX, s goes into the set left (each
 * target once, however many times the article links it), whose size is how many were left out. */
static void read_add_unique(json_t *arr, const char *s, json_t *left)
{
    size_t k;
    json_t *v;
    json_array_foreach(arr, k, v) if (strcmp(json_string_value(v), s) == 0) return;
    if (json_array_size(arr) >= READ_GROUP_MAX) {
        json_object_set_new(left, s, json_true());
        return;
    }
    json_array_append_new(arr, read_json_text(s, strlen(s)));
}

int dream_read_links(dream_reader *r, const char *name, json_t **out)
{
    *out = NULL;
    long i = read_named(r, name);
    if (i < 0) return read_missing(r, name ? name : "", out);
    const struct read_entry *e = &r->e[i];
    json_t *groups[READ_G_COUNT], *red = json_array(), *outbound = json_object(), *more = json_object();
    size_t over[READ_G_COUNT + 2] = {0};
    json_t *left[READ_G_COUNT + 1];
    for (int g = 0; g <= READ_G_COUNT; g++) left[g] = json_object();
    for (int g = 0; g < READ_G_COUNT; g++) groups[g] = json_array();
    struct read_lines lines = {.a = e->a};
    for (size_t k = 0; k < dream_article_link_count(e->a); k++) {
        const struct dream_article_link *l = dream_article_link(e->a, k);
        if (!l->target[0] || dream_article_link_is_meta(l->target)) continue;
        long t = read_target(r, l->target);
        if (t < 0) {
            read_add_unique(red, l->target, left[READ_G_COUNT]);
            continue;
        }
        if (t == i) continue;
        enum read_group g = read_link_group(&lines, l);
        read_add_unique(groups[g], r->e[t].stem, left[g]);
    }
    read_lines_free(&lines);
    for (size_t k = 0; k < dream_article_template_count(e->a); k++) { /* {{Main|X}} */
        const struct dream_article_template *tp = dream_article_template(e->a, k);
        if (strcasecmp(tp->name, "Main") || !tp->args) continue;
        long t = read_target(r, tp->args);
        if (t >= 0 && t != i) read_add_unique(groups[READ_G_MAIN], r->e[t].stem, left[READ_G_MAIN]);
    }
    for (int g = 0; g <= READ_G_COUNT; g++) {
        over[g] = json_object_size(left[g]);
        json_decref(left[g]);
    }
    for (int g = 0; g < READ_G_COUNT; g++) {
        json_object_set_new(outbound, read_group_names[g], groups[g]);
        if (over[g]) json_object_set_new(more, read_group_names[g], json_integer((json_int_t)over[g]));
    }
    /* Inbound: every other article's links that land here, with the first way each does. */
    json_t *inbound = json_array();
    for (size_t j = 0; j < r->n; j++) {
        if (j == (size_t)i) continue;
        const dream_article *a = r->e[j].a;
        for (size_t k = 0; k < dream_article_link_count(a); k++) {
            const struct dream_article_link *l = dream_article_link(a, k);
            if (!l->target[0] || dream_article_link_is_meta(l->target)) continue;
            if (read_target(r, l->target) != i) continue;
            if (json_array_size(inbound) >= READ_GROUP_MAX) over[READ_G_COUNT + 1]++;
            else {
                struct read_lines in_lines = {.a = a};
                json_array_append_new(inbound, json_pack("{ss ss}", "stem", r->e[j].stem, "via", read_group_names[read_link_group(&in_lines, l)]));
                read_lines_free(&in_lines);
            }
            break;
        }
    }
    if (over[READ_G_COUNT]) json_object_set_new(more, "redlinks", json_integer((json_int_t)over[READ_G_COUNT]));
    if (over[READ_G_COUNT + 1]) json_object_set_new(more, "inbound", json_integer((json_int_t)over[READ_G_COUNT + 1]));
    json_t *o = json_pack("{ss so so so}", "stem", e->stem, "outbound", outbound, "redlinks", red, "inbound", inbound);
    if (!o) {
        json_decref(more);
        return read_oom(out);
    }
    json_t *const arrays[] = {inbound, groups[READ_G_PROSE], groups[READ_G_SEE_ALSO], red, groups[READ_G_MAIN], groups[READ_G_SERIES], groups[READ_G_INFOBOX]};
    const char *const names[] = {"inbound", "prose", "see_also", "redlinks", "main", "series", "infobox"};
    read_fit_arrays(o, arrays, names, 7, more);
    if (json_object_size(more)) json_object_set_new(o, "more", more);
    else json_decref(more);
    *out = o;
    return 0;
}

/* ---- infobox ---------------------------------------------------------------------------- */

int dream_read_infobox(dream_reader *r, const char *name, json_t **out)
{
    *out = NULL;
    long i = read_named(r, name);
    if (i < 0) return read_missing(r, name ? name : "", out);
    const struct read_entry *e = &r->e[i];
    json_t *fields = json_array();
    for (size_t k = 0; k < dream_article_infobox_count(e->a); k++) {
        const struct dream_article_field *f = dream_article_infobox_field(e->a, k);
        json_t *row = json_pack("{so}", "key", read_json_text(f->key, strlen(f->key)));
        read_set_clip(row, "value", f->value, 300);
        json_array_append_new(fields, row);
    }
    /* the aliases, as the infobox listed them before they moved to the front matter */
    struct dbuf al = {0};
    for (size_t k = 0; k < dream_article_alias_count(e->a) && !dream_article_infobox_get(e->a, "aliases"); k++)
        dbuf_printf(&al, "%s%s", k ? ", " : "", dream_article_alias(e->a, k));
    if (al.len) {
        json_t *row = json_pack("{ss}", "key", "aliases");
        read_set_clip(row, "value", al.data, 300);
        json_array_append_new(fields, row);
    }
    dbuf_free(&al);
    *out = json_pack("{ss so ss}", "stem", e->stem, "fields", fields, "note", "facts to read, not a filter");
    if (!*out) return read_oom(out);
    size_t total = json_array_size(fields);
    while (json_array_size(fields) > 1 && read_json_size(*out) > DREAM_READ_BUDGET - 24) json_array_remove(fields, json_array_size(fields) - 1);
    if (json_array_size(fields) < total) json_object_set_new(*out, "more", json_integer((json_int_t)(total - json_array_size(fields))));
    return 0;
}

/* ---- list and membership ---------------------------------------------------------------- */

int dream_read_list(dream_reader *r, size_t offset, size_t limit, json_t **out)
{
    bool budget = limit == 0; /* the default page fits the budget; an explicit limit is the caller's */
    if (!limit) limit = 100;
    json_t *arr = json_array();
    size_t used = 96, shown = 0;
    for (size_t i = offset; i < r->n && i - offset < limit; i++) {
        size_t sz = strlen(r->e[i].stem) + 4;
        if (budget && used + sz > DREAM_READ_BUDGET) break;
        used += sz;
        json_array_append_new(arr, json_string(r->e[i].stem));
        shown++;
    }
    *out = json_pack("{sI sI so}", "total", (json_int_t)r->n, "offset", (json_int_t)offset, "articles", arr);
    if (!*out) return read_oom(out);
    if (offset + shown < r->n) json_object_set_new(*out, "more", json_integer((json_int_t)(r->n - offset - shown)));
    return 0;
}

/* Case- and space/underscore-insensitive equality of two labels. */
static bool read_label_eq(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = *a == '_' ? ' ' : (char)tolower((unsigned char)*a);
        char y = *b == '_' ? ' ' : (char)tolower((unsigned char)*b);
        if (x != y) return false;
        if (!x) return true;
    }
}

static bool read_is_member(const dream_reader *r, const struct read_entry *e, const char *by, const char *value, long series)
{
    if (strcmp(by, "category") == 0) {
        const char *v = strncasecmp(value, "Category:", 9) == 0 ? value + 9 : value;
        for (size_t k = 0; k < dream_article_category_count(e->a); k++)
            if (read_label_eq(dream_article_category(e->a, k), v)) return true;
        return false;
    }
    if (strcmp(by, "type") == 0 || strcmp(by, "kind") == 0) {
        const char *v = dream_article_infobox_get(e->a, by);
        return v && read_label_eq(v, value);
    }
    /* series: a banner line linking to the series' article */
    struct read_lines lines = {.a = e->a};
    bool member = false;
    for (size_t k = 0; k < dream_article_link_count(e->a) && !member; k++) {
        const struct dream_article_link *l = dream_article_link(e->a, k);
        if (read_link_group(&lines, l) != READ_G_SERIES) continue;
        long t = read_target(r, l->target);
        member = series >= 0 ? t == series : read_label_eq(l->target, value);
    }
    read_lines_free(&lines);
    return member;
}

int dream_read_members(dream_reader *r, const char *by, const char *value, size_t offset, size_t limit, json_t **out)
{
    *out = NULL;
    if (!by || (strcmp(by, "category") && strcmp(by, "type") && strcmp(by, "kind") && strcmp(by, "series"))) {
        dream_error_set(DREAM_EINVAL, "membership is by category, type, kind or series, not '%s'", by ? by : "(none)");
        return read_error_object(out, DREAM_EINVAL);
    }
    if (!value || !value[0]) {
        dream_error_set(DREAM_EINVAL, "which %s? give its name", by);
        return read_error_object(out, DREAM_EINVAL);
    }
    if (!limit || limit > READ_MEMBERS_MAX) limit = READ_MEMBERS_MAX;
    long series = strcmp(by, "series") == 0 ? read_find(r, value) : -1;
    json_t *members = json_array();
    size_t total = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!read_is_member(r, &r->e[i], by, value, series)) continue;
        size_t at = total++;
        if (at < offset || at - offset >= limit) continue;
        json_t *row = json_pack("{ss}", "stem", r->e[i].stem);
        read_set_clip(row, "lead", dream_article_lead(r->e[i].a), READ_LEAD_ROW);
        json_array_append_new(members, row);
    }
    char *shown_value = read_clip(value, READ_TITLE_MAX);
    json_t *o = json_pack("{ss ss sI sI so}", "by", by, "value", shown_value ? shown_value : "", "total", (json_int_t)total, "offset",
                          (json_int_t)offset, "members", members);
    free(shown_value);
    if (!o) return read_oom(out);
    /* Keep the output within the budget: drop rows from the end and count them. */
    size_t shown = json_array_size(members);
    while (shown > 1 && read_json_size(o) > DREAM_READ_BUDGET - 24) json_array_remove(members, --shown);
    size_t before = offset < total ? offset : total;
    if (total > before + shown) json_object_set_new(o, "more", json_integer((json_int_t)(total - before - shown)));
    *out = o;
    return 0;
}

/* ---- search ----------------------------------------------------------------------------- */

static const char *const read_stopwords[] = {"a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "how",
                                             "i", "in", "is", "it", "my", "of", "on", "or", "that", "the", "this", "to", "was", "what",
                                             "when", "where", "which", "who", "why", "with", NULL};

static bool read_is_stopword(const char *w)
{
    for (size_t i = 0; read_stopwords[i]; i++)
        if (strcmp(read_stopwords[i], w) == 0) return true;
    return false;
}

/* Lowercase ASCII copy (UTF-8 bytes kept). */
static char *read_lower(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++) d[i] = (char)tolower((unsigned char)s[i]);
    d[n] = '\0';
    return d;
}

struct read_hit {
    size_t entry;
    int matched, in_stem;
    size_t hits;
};

static int read_cmp_hit(const void *x, const void *y)
{
    const struct read_hit *a = x, *b = y;
    if (a->matched != b->matched) return b->matched - a->matched;
    if (a->in_stem != b->in_stem) return b->in_stem - a->in_stem;
    if (a->hits != b->hits) return a->hits < b->hits ? 1 : -1;
    return (a->entry > b->entry) - (a->entry < b->entry);
}

/* The anchor of the section holding 1-based line, or "" for the header. */
static const char *read_anchor_of_line(const dream_article *a, int line)
{
    const char *anchor = "";
    for (size_t k = 0; k < dream_article_section_count(a); k++) {
        const struct dream_article_section *s = dream_article_section(a, k);
        if (s->line > line) break;
        anchor = s->anchor;
    }
    return anchor;
}

int dream_read_search(dream_reader *r, const char *query, size_t limit, json_t **out)
{
    *out = NULL;
    if (!query || !query[0]) {
        dream_error_set(DREAM_EINVAL, "search needs a query (words to look for)");
        return read_error_object(out, DREAM_EINVAL);
    }
    if (!limit) limit = 8;
    if (limit > 30) limit = 30;
    char *q = read_lower(query, strlen(query)), *save = NULL;
    char *terms[16];
    size_t nt = 0;
    json_t *jterms = json_array();
    for (char *t = q ? strtok_r(q, " \t\r\n", &save) : NULL; t && nt < 16; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (read_is_stopword(t)) continue;
        bool dup = false;
        for (size_t k = 0; k < nt; k++) dup = dup || strcmp(terms[k], t) == 0;
        if (!dup) terms[nt++] = t;
    }
    char *whole = NULL;
    if (nt == 0 && q) { /* only stopwords: the whole query is one term */
        whole = read_lower(query, strlen(query));
        if (whole) terms[nt++] = whole;
    }
    for (size_t k = 0; k < nt; k++) { /* shown clipped; matched whole */
        char *t = read_clip(terms[k], 40);
        json_array_append_new(jterms, json_string(t ? t : ""));
        free(t);
    }
    struct read_hit *hits = calloc(r->n ? r->n : 1, sizeof *hits);
    size_t nh = 0;
    for (size_t i = 0; hits && i < r->n; i++) {
        size_t len = 0, fm = dream_article_front_matter_len(r->e[i].a);
        const char *text = dream_article_text(r->e[i].a, &len) + fm; /* the front matter is no body text */
        len -= fm;
        char *low = read_lower(text, len), *stem = read_lower(r->e[i].stem, strlen(r->e[i].stem));
        struct read_hit h = {i, 0, 0, 0};
        for (char *p = stem; p && *p; p++)
            if (*p == '_') *p = ' ';
        for (size_t k = 0; low && stem && k < nt; k++) {
            size_t c = 0, tl = strlen(terms[k]);
            for (const char *p = low; (p = strstr(p, terms[k])); p += tl) c++;
            if (c) h.matched++;
            if (strstr(stem, terms[k])) h.in_stem++;
            h.hits += c;
        }
        free(low);
        free(stem);
        if (h.matched) hits[nh++] = h;
    }
    if (hits && nh) qsort(hits, nh, sizeof *hits, read_cmp_hit);
    json_t *results = json_array(), *lines = json_array();
    for (size_t k = 0; hits && k < nh && k < limit; k++) {
        const struct read_entry *e = &r->e[hits[k].entry];
        json_t *row = json_pack("{ss si sI}", "stem", e->stem, "matched", hits[k].matched, "hits", (json_int_t)hits[k].hits);
        read_set_clip(row, "lead", dream_article_lead(e->a), READ_LEAD_ROW);
        json_array_append_new(results, row);
    }
    /* Sample lines: from the ranked articles in order, lines holding a term, 8 at most. */
    for (size_t k = 0; hits && k < nh && k < limit && json_array_size(lines) < 8; k++) {
        const struct read_entry *e = &r->e[hits[k].entry];
        size_t len = 0, fm = dream_article_front_matter_len(e->a);
        const char *text = dream_article_text(e->a, &len);
        int line = 1;
        for (size_t c = 0; c < fm; c++) line += text[c] == '\n';
        text += fm;
        len -= fm;
        size_t per = 0;
        for (size_t off = 0; off < len && per < 2 && json_array_size(lines) < 8; line++) {
            const char *nl = memchr(text + off, '\n', len - off);
            size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
            char *low = read_lower(text + off, n);
            bool any = false;
            for (size_t t = 0; low && t < nt && !any; t++) any = strstr(low, terms[t]) != NULL;
            free(low);
            if (any && line > 1 && n > 0 && text[off] != '[' && text[off] != '#' && text[off] != '`') { /* prose, not headings or fences */
                char *raw = strndup(text + off, n), *clip = raw ? read_clip(raw, 160) : NULL;
                json_array_append_new(lines, json_pack("{ss ss si ss}", "stem", e->stem, "anchor", read_anchor_of_line(e->a, line), "line", line,
                                                       "text", clip ? clip : ""));
                free(raw);
                free(clip);
                per++;
            }
            off += n + 1;
        }
    }
    char *shown_query = read_clip(query, 100);
    json_t *o = json_pack("{ss so sI so so}", "query", shown_query ? shown_query : "", "terms", jterms, "total", (json_int_t)nh, "results", results, "lines", lines);
    /* Captured subjects whose name holds a term: the store's only way into what has no article. */
    if (o && r->store && nt) {
        json_t *cap = json_array();
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(store_db(r->store), "SELECT name, chunk_count, normal FROM pipeline_entities WHERE route IS NOT 'article' ORDER BY id", -1, &st, NULL) == SQLITE_OK) {
            while (sqlite3_step(st) == SQLITE_ROW && json_array_size(cap) < 5) {
                const char *normal = (const char *)sqlite3_column_text(st, 2);
                bool any = false;
                for (size_t t = 0; t < nt && !any; t++) any = strstr(normal, terms[t]) != NULL;
                if (any) json_array_append_new(cap, json_pack("{ss sI}", "name", (const char *)sqlite3_column_text(st, 0), "chunks", (json_int_t)sqlite3_column_int64(st, 1)));
            }
        }
        sqlite3_finalize(st);
        if (json_array_size(cap)) json_object_set_new(o, "captured", cap);
        else json_decref(cap);
    }
    free(hits);
    free(q);
    free(whole);
    free(shown_query);
    if (!o) return read_oom(out);
    /* Stay within the budget: fewer sample lines first, then fewer results. */
    json_t *cap = json_object_get(o, "captured");
    json_t *const order[] = {lines, cap, results, jterms};
    for (size_t k = 0; k < 4; k++)
        while (json_array_size(order[k]) && read_json_size(o) > DREAM_READ_BUDGET) json_array_remove(order[k], json_array_size(order[k]) - 1);
    *out = o;
    return 0;
}

/* ---- the dispatcher --------------------------------------------------------------------- */

static const char *read_arg(const json_t *args, const char *key)
{
    json_t *v = args ? json_object_get(args, key) : NULL;
    return v && json_is_string(v) ? json_string_value(v) : NULL;
}

static bool read_arg_bool(const json_t *args, const char *key)
{
    json_t *v = args ? json_object_get(args, key) : NULL;
    if (!v) return false;
    if (json_is_boolean(v)) return json_is_true(v);
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    const char *s = json_string_value(v);
    return s && (strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0 || s[0] == '\0');
}

/* A non-negative count argument; -1 when malformed. */
static long read_arg_count(const json_t *args, const char *key, long max)
{
    json_t *v = args ? json_object_get(args, key) : NULL;
    if (!v) return 0;
    if (json_is_integer(v)) return json_integer_value(v) >= 0 && json_integer_value(v) <= max ? (long)json_integer_value(v) : -1;
    const char *s = json_string_value(v);
    if (!s || !s[0]) return -1;
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    return *end || errno || n < 0 || n > max ? -1 : n;
}

/* A day argument (YYYY-MM-DD) as Unix ms at its start (UTC), plus days; 0 when absent. */
static int read_arg_day(const json_t *args, const char *key, int days, int64_t *ms, json_t **out)
{
    *ms = 0;
    const char *s = read_arg(args, key);
    if (!s || !s[0]) return 0;
    if (!day_parse(s, ms)) {
        dream_error_set(DREAM_EINVAL, "%s must be a day written YYYY-MM-DD, not '%.*s'", key, utf8_cut(s, 40), s);
        return read_error_object(out, DREAM_EINVAL);
    }
    *ms += (int64_t)days * 86400000;
    return 0;
}

static int read_need(const char *tool, const char *what, const char *v, json_t **out)
{
    if (v && v[0]) return 0;
    dream_error_set(DREAM_EINVAL, "%s needs %s", tool, what);
    return read_error_object(out, DREAM_EINVAL);
}

/* Which membership filter args holds: *by is "category", "type", "kind" or "series", or NULL
 * for none. Two or more is DREAM_EINVAL: one would be dropped without a word. */
static int read_member_filter(const json_t *args, const char **by, json_t **out)
{
    static const char *const bys[] = {"category", "type", "kind", "series"};
    *by = NULL;
    for (size_t k = 0; k < 4; k++) {
        if (!json_object_get(args, bys[k])) continue;
        if (*by) {
            dream_error_set(DREAM_EINVAL, "give one of category, type, kind or series, not both %s and %s", *by, bys[k]);
            return read_error_object(out, DREAM_EINVAL);
        }
        *by = bys[k];
    }
    return 0;
}

/* The arguments of each tool, as the dispatcher below reads them; the order is the docs'. */
static const char *const read_args_name[] = {"name", NULL};
static const char *const read_args_read[] = {"name", "whole", NULL};
static const char *const read_args_section[] = {"name", "anchor", NULL};
static const char *const read_args_members[] = {"category", "type", "kind", "series", "limit", "offset", NULL};
static const char *const read_args_search[] = {"query", "limit", "conversations", "since", "until", NULL};
static const char *const read_args_none[] = {NULL};
static const struct {
    const char *tool;
    const char *const *args;
} read_tool_args[] = {
    {"resolve", read_args_name},     {"read", read_args_read},          {"section", read_args_section}, {"links", read_args_name},
    {"infobox", read_args_name},     {"list", read_args_members},       {"category", read_args_members},
    {"search", read_args_search},    {"status", read_args_none},
};

const char *const *dream_read_tool_args(const char *tool)
{
    for (size_t i = 0; tool && i < sizeof read_tool_args / sizeof read_tool_args[0]; i++)
        if (strcmp(tool, read_tool_args[i].tool) == 0) return read_tool_args[i].args;
    return NULL;
}

bool dream_read_tool_wiki_optional(const char *tool) { return tool && strcmp(tool, "status") == 0; }

int dream_read_call(dream_reader *r, const char *tool, const json_t *args, json_t **out)
{
    *out = NULL;
    const char *name = read_arg(args, "name");
    int rc;
    if (!tool) tool = "";
    if (strcmp(tool, "resolve") == 0) return (rc = read_need(tool, "a name", name, out)) ? rc : dream_read_resolve(r, name, out);
    if (strcmp(tool, "read") == 0) return (rc = read_need(tool, "an article name", name, out)) ? rc : dream_read_article(r, name, read_arg_bool(args, "whole"), out);
    if (strcmp(tool, "section") == 0) {
        if ((rc = read_need(tool, "an article name", name, out)) || (rc = read_need(tool, "an anchor", read_arg(args, "anchor"), out))) return rc;
        return dream_read_section(r, name, read_arg(args, "anchor"), out);
    }
    if (strcmp(tool, "links") == 0) return (rc = read_need(tool, "an article name", name, out)) ? rc : dream_read_links(r, name, out);
    if (strcmp(tool, "infobox") == 0) return (rc = read_need(tool, "an article name", name, out)) ? rc : dream_read_infobox(r, name, out);
    if (strcmp(tool, "status") == 0) return dream_read_status(r, out);
    /* an offset past the end is an empty page, not an error: `dream list --offset` and the list
     * tool's schema take what this does (DREAM_READ_OFFSET_MAX) */
    long limit = read_arg_count(args, "limit", 999999), offset = read_arg_count(args, "offset", DREAM_READ_OFFSET_MAX);
    if (limit < 0 || offset < 0) {
        dream_error_set(DREAM_EINVAL, "limit and offset are counts: whole numbers, limit from 0 to 999999, offset from 0 to %d",
                        DREAM_READ_OFFSET_MAX);
        return read_error_object(out, DREAM_EINVAL);
    }
    if (strcmp(tool, "list") == 0 || strcmp(tool, "category") == 0) {
        const char *by = NULL;
        if ((rc = read_member_filter(args, &by, out))) return rc;
        if (by) return dream_read_members(r, by, read_arg(args, by), (size_t)offset, (size_t)limit, out);
        if (strcmp(tool, "list") == 0) return dream_read_list(r, (size_t)offset, (size_t)limit, out);
        dream_error_set(DREAM_EINVAL, "category needs one of category, type, kind or series");
        return read_error_object(out, DREAM_EINVAL);
    }
    if (strcmp(tool, "search") == 0) {
        const char *q = read_arg(args, "query");
        if ((rc = read_need(tool, "a query", q, out))) return rc;
        if (!r->store) {
            /* the wiki's own search needs no store; a search of the conversations does, and
             * answering it from the articles would pass one off as the other */
            const char *only = read_arg_bool(args, "conversations") ? "conversations"
                               : read_arg(args, "since")              ? "since"
                               : read_arg(args, "until")              ? "until"
                                                                      : NULL;
            if (only) {
                dream_error_set(DREAM_ENOTFOUND,
                                "%s%s looks in the conversations, and there is no store to read them from (none yet: dream ingest "
                                "makes it; or it could not be opened: dream status says why)",
                                strcmp(only, "conversations") ? "search with " : "a search of the ", only);
                return read_error_object(out, DREAM_ENOTFOUND);
            }
            return dream_read_search(r, q, (size_t)limit, out);
        }
        struct dream_read_search_params sp;
        dream_read_search_default_params(&sp);
        sp.query = q;
        sp.limit = (size_t)limit;
        sp.conversations_only = read_arg_bool(args, "conversations");
        if ((rc = read_arg_day(args, "since", 0, &sp.since_ms, out)) || (rc = read_arg_day(args, "until", 1, &sp.until_ms, out))) return rc;
        return dream_read_search_index(r, &sp, out);
    }
    dream_error_set(DREAM_EINVAL, "no read tool '%.*s' (tools: resolve, read, section, links, infobox, list, category, search, status)", utf8_cut(tool, 60), tool);
    return read_error_object(out, DREAM_EINVAL);
}
