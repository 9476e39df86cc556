/*
 * filters.c — Jinja2's filters and tests as Hugging Face templates use them, with `tojson`
 * replaced by transformers' json.dumps(ensure_ascii=False, indent, separators, sort_keys).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

#define FILTER(name) static int f_##name(struct tmpl_rt *rt, const struct tnode *at, tval in, struct tmpl_args *a, tval *out)
#define TEST(name) static int t_##name(struct tmpl_rt *rt, const struct tnode *at, tval in, struct tmpl_args *a, bool *out)

static int undefined_error(struct tmpl_rt *rt, const struct tnode *at, tval v)
{
    return tmpl_fail(rt, at, "%s", v.u.s ? v.u.s->p : "value is undefined");
}

/* str(v) as a string value. */
static int to_s(struct tmpl_rt *rt, tval v, tval *out) { return tmpl_to_str(rt, v, out); }

/* ---- attribute getters ("a.b.0") ---- */

static int get_path(struct tmpl_rt *rt, const struct tnode *at, tval obj, tval attr, tval *out)
{
    if (attr.type == TV_INT)
        return tmpl_getitem(rt, at, obj, attr, out);
    if (attr.type != TV_STR)
        return tmpl_fail(rt, at, "attribute name must be a string");
    const char *p = attr.u.s->p;
    *out = obj;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char part[256];
        if (n >= sizeof(part))
            return tmpl_fail(rt, at, "attribute name too long");
        memcpy(part, p, n);
        part[n] = 0;
        tval key;
        int rc;
        bool digits = n > 0 && strspn(part, "0123456789") == n;
        if (digits)
            key = tv_int(strtoll(part, NULL, 10));
        else if ((rc = tmpl_str_new(rt, part, n, false, &key)))
            return rc;
        if ((rc = tmpl_getitem(rt, at, *out, key, out)))
            return rc;
        p += n;
        if (*p == '.')
            p++;
    }
    return 0;
}

/* ---- basic filters ---- */

static int length_of(struct tmpl_rt *rt, const struct tnode *at, tval in, int64_t *n)
{
    switch (in.type) {
    case TV_STR: *n = (int64_t)tmpl_utf8_len(in.u.s->p, in.u.s->len); return 0;
    case TV_LIST:
        if (in.flags & TVF_GEN)
            break;
        *n = (int64_t)in.u.l->n;
        return 0;
    case TV_DICT:
        if (in.flags & TVF_NS)
            break;
        *n = (int64_t)in.u.d->n;
        return 0;
    case TV_UNDEF: *n = 0; return 0;
    default: break;
    }
    return tmpl_fail(rt, at, "object of type '%s' has no len()", tmpl_type_name(in));
}

FILTER(length)
{
    int64_t n = 0;
    int rc = length_of(rt, at, in, &n);
    *out = tv_int(n);
    return rc;
}

FILTER(default)
{
    tval def, boolean;
    if (!tmpl_arg(a, 0, "default_value", &def)) {
        int rc = tmpl_str_new(rt, "", 0, false, &def);
        if (rc)
            return rc;
    }
    bool b = tmpl_arg(a, 1, "boolean", &boolean) && tmpl_truthy(boolean);
    *out = (in.type == TV_UNDEF || (b && !tmpl_truthy(in))) ? def : in;
    return 0;
}

FILTER(string)
{
    if (in.type == TV_STR) {
        *out = in;
        return 0;
    }
    return to_s(rt, in, out);
}

FILTER(safe)
{
    int rc = in.type == TV_STR ? (*out = in, 0) : to_s(rt, in, out);
    out->flags |= TVF_SAFE;
    return rc;
}

FILTER(escape)
{
    if (in.type == TV_STR && (in.flags & TVF_SAFE)) {
        *out = in;
        return 0;
    }
    tval s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    tval amp, lt;
    static const char *from[] = {"&", "<", ">", "'", "\""};
    static const char *to[] = {"&amp;", "&lt;", "&gt;", "&#39;", "&#34;"};
    tval cur = s;
    for (int i = 0; i < 5; i++) {
        if ((rc = tmpl_str_new(rt, from[i], 1, false, &amp)) || (rc = tmpl_str_new(rt, to[i], strlen(to[i]), false, &lt)) ||
            (rc = tmpl_replace(rt, at, cur.u.s, amp, lt, -1, &cur)))
            return rc;
    }
    *out = cur;
    out->flags |= TVF_SAFE;
    return 0;
}

FILTER(trim)
{
    tval s, chars;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    bool has = tmpl_arg(a, 0, "chars", &chars) && chars.type != TV_NONE;
    if (has && chars.type != TV_STR)
        return tmpl_fail(rt, at, "trim(): chars must be a string");
    return tmpl_strip(rt, s.u.s, has ? chars.u.s : NULL, 3, out);
}

static int case_filter(struct tmpl_rt *rt, tval in, int mode, tval *out)
{
    tval s;
    int rc = to_s(rt, in, &s);
    return rc ? rc : tmpl_case(rt, s.u.s, mode, out);
}
FILTER(upper) { return case_filter(rt, in, 'u', out); }
FILTER(lower) { return case_filter(rt, in, 'l', out); }
FILTER(capitalize) { return case_filter(rt, in, 'c', out); }
FILTER(title) { return case_filter(rt, in, 'j', out); }

FILTER(replace)
{
    tval s, o, n, c;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    if (!tmpl_arg(a, 0, "old", &o) || !tmpl_arg(a, 1, "new", &n))
        return tmpl_fail(rt, at, "replace() needs the old and new strings");
    int64_t count = -1;
    if (tmpl_arg(a, 2, "count", &c) && c.type != TV_NONE) {
        if (c.type != TV_INT)
            return tmpl_fail(rt, at, "replace(): count must be an integer");
        count = c.u.i;
    }
    tval os, ns;
    if ((rc = to_s(rt, o, &os)) || (rc = to_s(rt, n, &ns)))
        return rc;
    return tmpl_replace(rt, at, s.u.s, os, ns, count, out);
}

FILTER(list)
{
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    if ((rc = tmpl_list_new(rt, l->n, out)))
        return rc;
    if (l->n)
        memcpy(out->u.l->v, l->v, l->n * sizeof(tval));
    return 0;
}

FILTER(first)
{
    if (in.type == TV_LIST && (in.flags & TVF_GEN)) {
        struct tmpl_list *g = in.u.l;
        *out = g->pos < g->n ? g->v[g->pos++] : tv_undef();
        return 0;
    }
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    *out = l->n ? l->v[0] : tv_undef();
    return 0;
}

FILTER(last)
{
    if (in.type == TV_LIST && (in.flags & TVF_GEN))
        return tmpl_fail(rt, at, "'generator' object is not reversible");
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    *out = l->n ? l->v[l->n - 1] : tv_undef();
    return 0;
}

FILTER(reverse)
{
    if (in.type == TV_STR) {
        struct tmpl_list *chars;
        int rc = tmpl_iterate(rt, at, in, &chars);
        if (rc)
            return rc;
        struct tmpl_sb sb;
        tmpl_sb_init(rt, &sb);
        for (size_t i = chars->n; !rc && i-- > 0;)
            rc = tmpl_sb_str(&sb, chars->v[i].u.s);
        if (rc) {
            tmpl_sb_free(&sb);
            return rc;
        }
        return tmpl_sb_finish(rt, &sb, out);
    }
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc || (rc = tmpl_list_new(rt, l->n, out)))
        return rc;
    for (size_t i = 0; i < l->n; i++)
        out->u.l->v[i] = l->v[l->n - 1 - i];
    out->flags |= TVF_GEN;
    return 0;
}

FILTER(join)
{
    tval sep, attr;
    struct tmpl_list *l;
    int rc;
    if (tmpl_arg(a, 0, "d", &sep)) {
        if ((rc = to_s(rt, sep, &sep)))
            return rc;
    } else if ((rc = tmpl_str_new(rt, "", 0, false, &sep))) {
        return rc;
    }
    bool has_attr = tmpl_arg(a, 1, "attribute", &attr) && attr.type != TV_NONE;
    if ((rc = tmpl_iterate(rt, at, in, &l)))
        return rc;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    for (size_t i = 0; !rc && i < l->n; i++) {
        tval item = l->v[i];
        if (i)
            rc = tmpl_sb_str(&sb, sep.u.s);
        if (!rc && has_attr)
            rc = get_path(rt, at, item, attr, &item);
        if (!rc)
            rc = tmpl_write_str(rt, &sb, item);
    }
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

FILTER(items)
{
    if (in.type == TV_UNDEF) {
        int rc = tmpl_list_new(rt, 0, out);
        out->flags |= TVF_GEN;
        return rc;
    }
    if (in.type != TV_DICT || (in.flags & TVF_NS))
        return tmpl_fail(rt, at, "can only get item pairs from a mapping, not %s", tmpl_type_name(in));
    struct tmpl_dict *d = in.u.d;
    int rc = tmpl_list_new(rt, d->n, out);
    for (size_t i = 0; !rc && i < d->n; i++) {
        tval pair;
        if ((rc = tmpl_list_new(rt, 2, &pair)))
            return rc;
        pair.flags |= TVF_TUPLE;
        pair.u.l->v[0] = d->k[i];
        pair.u.l->v[1] = d->v[i];
        out->u.l->v[i] = pair;
    }
    out->flags |= TVF_GEN;
    return rc;
}

/* Sort key for case-insensitive comparisons: strings are lowercased. */
static int fold_key(struct tmpl_rt *rt, tval v, bool case_sensitive, tval *out)
{
    if (!case_sensitive && v.type == TV_STR)
        return tmpl_case(rt, v.u.s, 'l', out);
    *out = v;
    return 0;
}

struct sort_item {
    tval key;
    tval val;
    size_t idx;
};

struct sort_ctx {
    struct tmpl_rt *rt;
    const struct tnode *at;
    int err;
    bool reverse;
};

static int sort_cmp(const void *x, const void *y, void *arg)
{
    const struct sort_item *a = x, *b = y;
    struct sort_ctx *ctx = arg;
    int c = 0;
    if (!ctx->err && tmpl_compare(ctx->rt, ctx->at, a->key, b->key, &c))
        ctx->err = dream_error_code();
    if (ctx->reverse)
        c = -c;
    return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Stable sort of items by key (the index breaks ties); fails on unorderable keys. */
static int sort_items(struct tmpl_rt *rt, const struct tnode *at, struct sort_item *it, size_t n, bool reverse)
{
    struct sort_ctx ctx = {.rt = rt, .at = at, .err = 0, .reverse = reverse};
    qsort_r(it, n, sizeof(*it), sort_cmp, &ctx);
    return ctx.err;
}

FILTER(dictsort)
{
    tval cs, by, rev;
    bool case_sensitive = tmpl_arg(a, 0, "case_sensitive", &cs) && tmpl_truthy(cs);
    bool by_value = tmpl_arg(a, 1, "by", &by) && by.type == TV_STR && !strcmp(by.u.s->p, "value");
    bool reverse = tmpl_arg(a, 2, "reverse", &rev) && tmpl_truthy(rev);
    if (in.type != TV_DICT || (in.flags & TVF_NS))
        return tmpl_fail(rt, at, "dictsort: expected a mapping, got %s", tmpl_type_name(in));
    struct tmpl_dict *d = in.u.d;
    struct sort_item *it = tmpl_alloc(&rt->arena, (d->n + 1) * sizeof(*it));
    if (!it)
        return dream_error_code();
    int rc;
    for (size_t i = 0; i < d->n; i++) {
        if ((rc = fold_key(rt, by_value ? d->v[i] : d->k[i], case_sensitive, &it[i].key)))
            return rc;
        it[i].idx = i;
    }
    if ((rc = sort_items(rt, at, it, d->n, reverse)) || (rc = tmpl_list_new(rt, d->n, out)))
        return rc;
    for (size_t i = 0; i < d->n; i++) {
        tval pair;
        if ((rc = tmpl_list_new(rt, 2, &pair)))
            return rc;
        pair.flags |= TVF_TUPLE;
        pair.u.l->v[0] = d->k[it[i].idx];
        pair.u.l->v[1] = d->v[it[i].idx];
        out->u.l->v[i] = pair;
    }
    return 0;
}

FILTER(sort)
{
    tval rev, cs, attr;
    bool reverse = tmpl_arg(a, 0, "reverse", &rev) && tmpl_truthy(rev);
    bool case_sensitive = tmpl_arg(a, 1, "case_sensitive", &cs) && tmpl_truthy(cs);
    bool has_attr = tmpl_arg(a, 2, "attribute", &attr) && attr.type != TV_NONE;
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    struct sort_item *it = tmpl_alloc(&rt->arena, (l->n + 1) * sizeof(*it));
    if (!it)
        return dream_error_code();
    for (size_t i = 0; i < l->n; i++) {
        tval k = l->v[i];
        if (has_attr && (rc = get_path(rt, at, k, attr, &k)))
            return rc;
        if ((rc = fold_key(rt, k, case_sensitive, &it[i].key)))
            return rc;
        it[i].idx = i;
    }
    if ((rc = sort_items(rt, at, it, l->n, reverse)) || (rc = tmpl_list_new(rt, l->n, out)))
        return rc;
    for (size_t i = 0; i < l->n; i++)
        out->u.l->v[i] = l->v[it[i].idx];
    return 0;
}

FILTER(unique)
{
    tval cs, attr;
    bool case_sensitive = tmpl_arg(a, 0, "case_sensitive", &cs) && tmpl_truthy(cs);
    bool has_attr = tmpl_arg(a, 1, "attribute", &attr) && attr.type != TV_NONE;
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    tval *keys = tmpl_alloc(&rt->arena, (l->n + 1) * sizeof(tval));
    if (!keys || (rc = tmpl_list_new(rt, l->n, out)))
        return keys ? rc : dream_error_code();
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        tval k = l->v[i];
        if (has_attr && (rc = get_path(rt, at, k, attr, &k)))
            return rc;
        if ((rc = fold_key(rt, k, case_sensitive, &k)))
            return rc;
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = tmpl_equal(keys[j], k);
        if (!seen) {
            keys[n] = k;
            out->u.l->v[n++] = l->v[i];
        }
    }
    out->u.l->n = n;
    out->flags |= TVF_GEN;
    return 0;
}

static int minmax(struct tmpl_rt *rt, const struct tnode *at, tval in, struct tmpl_args *a, tval *out, bool max)
{
    tval cs, attr;
    bool case_sensitive = tmpl_arg(a, 0, "case_sensitive", &cs) && tmpl_truthy(cs);
    bool has_attr = tmpl_arg(a, 1, "attribute", &attr) && attr.type != TV_NONE;
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    if (l->n == 0) {
        *out = tv_undef();
        return 0;
    }
    size_t best = 0;
    tval bestk = tv_none();
    for (size_t i = 0; i < l->n; i++) {
        tval k = l->v[i];
        if (has_attr && (rc = get_path(rt, at, k, attr, &k)))
            return rc;
        if ((rc = fold_key(rt, k, case_sensitive, &k)))
            return rc;
        int c = 0;
        if (i && (rc = tmpl_compare(rt, at, k, bestk, &c)))
            return rc;
        if (i == 0 || (max ? c > 0 : c < 0)) {
            best = i;
            bestk = k;
        }
    }
    *out = l->v[best];
    return 0;
}
FILTER(min) { return minmax(rt, at, in, a, out, false); }
FILTER(max) { return minmax(rt, at, in, a, out, true); }

FILTER(sum)
{
    tval attr, start = tv_int(0);
    bool has_attr = tmpl_arg(a, 0, "attribute", &attr) && attr.type != TV_NONE;
    tmpl_arg(a, 1, "start", &start);
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    *out = start;
    for (size_t i = 0; i < l->n; i++) {
        tval v = l->v[i];
        if (has_attr && (rc = get_path(rt, at, v, attr, &v)))
            return rc;
        if ((rc = tmpl_binop(rt, at, '+', *out, v, out)))
            return rc;
    }
    return 0;
}

/* map(attribute=...) or map('filter', args...) */
FILTER(map)
{
    struct tmpl_list *l;
    static struct tmpl_list none;
    int rc = tmpl_truthy(in) ? tmpl_iterate(rt, at, in, &l) : (l = &none, 0);
    if (rc || (rc = tmpl_list_new(rt, l->n, out)))
        return rc;
    out->flags |= TVF_GEN;
    tval attr, def;
    bool has_def = false;
    bool by_attr = false;
    for (size_t k = 0; k < a->nkw; k++) {
        if (!strcmp(a->kwn[k], "attribute")) {
            attr = a->kwv[k];
            by_attr = true;
        } else if (!strcmp(a->kwn[k], "default")) {
            def = a->kwv[k];
            has_def = true;
        }
    }
    if (by_attr) {
        for (size_t i = 0; i < l->n; i++) {
            if ((rc = get_path(rt, at, l->v[i], attr, &out->u.l->v[i])))
                return rc;
            if (has_def && out->u.l->v[i].type == TV_UNDEF)
                out->u.l->v[i] = def;
        }
        return 0;
    }
    if (a->npos == 0 || a->pos[0].type != TV_STR)
        return tmpl_fail(rt, at, "map: expected a filter name or attribute=");
    struct tmpl_args rest = *a;
    rest.npos--;
    rest.pos++;
    for (size_t i = 0; i < l->n; i++)
        if ((rc = tmpl_apply_filter(rt, at, a->pos[0].u.s->p, l->v[i], &rest, &out->u.l->v[i])))
            return rc;
    return 0;
}

/* select/reject/selectattr/rejectattr */
static int select_impl(struct tmpl_rt *rt, const struct tnode *at, tval in, struct tmpl_args *a, tval *out,
                       bool by_attr, bool want)
{
    struct tmpl_list *l;
    static struct tmpl_list none;
    int rc = tmpl_truthy(in) ? tmpl_iterate(rt, at, in, &l) : (l = &none, 0);
    if (rc || (rc = tmpl_list_new(rt, l->n, out)))
        return rc;
    out->flags |= TVF_GEN;
    size_t argi = 0;
    tval attr = tv_none();
    if (by_attr) {
        if (a->npos < 1)
            return tmpl_fail(rt, at, "selectattr/rejectattr: missing attribute name");
        attr = a->pos[argi++];
    }
    const char *test = NULL;
    if (argi < a->npos) {
        if (a->pos[argi].type != TV_STR)
            return tmpl_fail(rt, at, "select: test name must be a string");
        test = a->pos[argi++].u.s->p;
    }
    struct tmpl_args rest = *a;
    rest.npos -= argi;
    if (argi)
        rest.pos += argi;
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        tval v = l->v[i];
        if (by_attr && (rc = get_path(rt, at, v, attr, &v)))
            return rc;
        bool ok;
        if (test) {
            if ((rc = tmpl_apply_test(rt, at, test, v, &rest, &ok)))
                return rc;
        } else {
            ok = tmpl_truthy(v);
        }
        if (ok == want)
            out->u.l->v[n++] = l->v[i];
    }
    out->u.l->n = n;
    return 0;
}
FILTER(select) { return select_impl(rt, at, in, a, out, false, true); }
FILTER(reject) { return select_impl(rt, at, in, a, out, false, false); }
FILTER(selectattr) { return select_impl(rt, at, in, a, out, true, true); }
FILTER(rejectattr) { return select_impl(rt, at, in, a, out, true, false); }

FILTER(attr)
{
    tval name;
    if (!tmpl_arg(a, 0, "name", &name) || name.type != TV_STR)
        return tmpl_fail(rt, at, "attr: expected an attribute name");
    return tmpl_getattr(rt, at, in, name.u.s->p, out);
}

/* ---- JSON ---- */

FILTER(tojson)
{
    tval indent, seps, ea, sk;
    static const char *const names[] = {"indent", "separators", "ensure_ascii", "sort_keys", NULL};
    int rc = tmpl_check_args(rt, at, a, 4, names, "tojson()");
    if (rc)
        return rc;
    struct tmpl_json_opts o = {.indent = NULL, .item_sep = ", ", .key_sep = ": "};
    char ind[256];
    if (tmpl_arg(a, 0, "indent", &indent) && indent.type != TV_NONE) {
        if (indent.type == TV_INT || indent.type == TV_BOOL) {
            int64_t n = indent.type == TV_INT ? indent.u.i : indent.u.b;
            if (n < 0)
                n = 0;
            if (n > 200)
                return tmpl_fail(rt, at, "tojson: indent too large");
            memset(ind, ' ', (size_t)n);
            ind[n] = 0;
        } else if (indent.type == TV_STR && indent.u.s->len < sizeof(ind)) {
            memcpy(ind, indent.u.s->p, indent.u.s->len + 1);
        } else {
            return tmpl_fail(rt, at, "tojson: indent must be an integer or a string");
        }
        o.indent = ind;
        o.item_sep = ",";
    }
    if (tmpl_arg(a, 1, "separators", &seps) && seps.type != TV_NONE) {
        if (seps.type != TV_LIST || seps.u.l->n != 2 || seps.u.l->v[0].type != TV_STR || seps.u.l->v[1].type != TV_STR)
            return tmpl_fail(rt, at, "tojson: separators must be a pair of strings");
        o.item_sep = seps.u.l->v[0].u.s->p;
        o.key_sep = seps.u.l->v[1].u.s->p;
    }
    o.ensure_ascii = tmpl_arg(a, 2, "ensure_ascii", &ea) && tmpl_truthy(ea);
    o.sort_keys = tmpl_arg(a, 3, "sort_keys", &sk) && tmpl_truthy(sk);
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    if ((rc = tmpl_write_json(rt, at, &sb, in, &o, 0))) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

/* ---- numbers ---- */

static bool parse_int_str(const char *s, int64_t *v)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
        s++;
    char *end;
    char buf[128];
    size_t n = 0;
    for (const char *p = s; *p && n < sizeof(buf) - 1; p++)
        if (*p != '_')
            buf[n++] = *p;
    buf[n] = 0;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (end == buf || errno)
        return false;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    if (*end)
        return false;
    *v = x;
    return true;
}

static bool parse_float_str(const char *s, double *v)
{
    char *end;
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    if (!*s)
        return false;
    if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
        return false;
    *v = strtod(s, &end);
    if (end == s)
        return false;
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
        end++;
    return *end == 0;
}

FILTER(int)
{
    tval def = tv_int(0), base;
    tmpl_arg(a, 0, "default", &def);
    int64_t b = tmpl_arg(a, 1, "base", &base) && base.type == TV_INT ? base.u.i : 10;
    double f;
    switch (in.type) {
    case TV_INT: *out = in; return 0;
    case TV_BOOL: *out = tv_int(in.u.b); return 0;
    case TV_FLOAT:
        if (isnan(in.u.f) || isinf(in.u.f) || fabs(in.u.f) > 9.2e18)
            break;
        *out = tv_int((int64_t)in.u.f);
        return 0;
    case TV_STR: {
        int64_t v;
        if (b == 10 && parse_int_str(in.u.s->p, &v)) {
            *out = tv_int(v);
            return 0;
        }
        if (b != 10) {
            char *end;
            long long x = strtoll(in.u.s->p, &end, (int)b);
            if (end != in.u.s->p && !*end) {
                *out = tv_int(x);
                return 0;
            }
        }
        if (parse_float_str(in.u.s->p, &f) && !isnan(f) && !isinf(f) && fabs(f) < 9.2e18) {
            *out = tv_int((int64_t)f);
            return 0;
        }
        break;
    }
    default: break;
    }
    *out = def;
    return 0;
}

FILTER(float)
{
    tval def = tv_float(0.0);
    tmpl_arg(a, 0, "default", &def);
    double f;
    switch (in.type) {
    case TV_INT: *out = tv_float((double)in.u.i); return 0;
    case TV_BOOL: *out = tv_float(in.u.b); return 0;
    case TV_FLOAT: *out = in; return 0;
    case TV_STR:
        if (parse_float_str(in.u.s->p, &f)) {
            *out = tv_float(f);
            return 0;
        }
        break;
    default: break;
    }
    *out = def;
    return 0;
}

FILTER(abs)
{
    if (in.type == TV_INT) {
        if (in.u.i == INT64_MIN)
            return tmpl_fail(rt, at, "integer overflow");
        *out = tv_int(in.u.i < 0 ? -in.u.i : in.u.i);
    } else if (in.type == TV_FLOAT) {
        *out = tv_float(fabs(in.u.f));
    } else if (in.type == TV_BOOL) {
        *out = tv_int(in.u.b);
    } else {
        return tmpl_fail(rt, at, "bad operand type for abs(): '%s'", tmpl_type_name(in));
    }
    return 0;
}

FILTER(round)
{
    tval prec, method;
    int64_t p = tmpl_arg(a, 0, "precision", &prec) && prec.type == TV_INT ? prec.u.i : 0;
    const char *m = tmpl_arg(a, 1, "method", &method) && method.type == TV_STR ? method.u.s->p : "common";
    if (in.type != TV_INT && in.type != TV_FLOAT && in.type != TV_BOOL)
        return tmpl_fail(rt, at, "round: expected a number, got %s", tmpl_type_name(in));
    double x = in.type == TV_FLOAT ? in.u.f : in.type == TV_INT ? (double)in.u.i : in.u.b;
    if (p > 300 || p < -300)
        return tmpl_fail(rt, at, "round: precision out of range");
    double scale = pow(10.0, (double)p);
    double r;
    if (!strcmp(m, "common")) {
        double y = x * scale;
        r = nearbyint(y); /* Python's round(): half to even */
        r /= scale;
    } else if (!strcmp(m, "ceil")) {
        r = ceil(x * scale) / scale;
    } else if (!strcmp(m, "floor")) {
        r = floor(x * scale) / scale;
    } else {
        return tmpl_fail(rt, at, "method must be common, ceil or floor");
    }
    *out = tv_float(r);
    return 0;
}

/* ---- text ---- */

FILTER(indent)
{
    tval width, first, blank, s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    char ind[256];
    if (tmpl_arg(a, 0, "width", &width) && width.type == TV_STR) {
        snprintf(ind, sizeof(ind), "%s", width.u.s->p);
    } else {
        int64_t w = tmpl_arg(a, 0, "width", &width) && width.type == TV_INT ? width.u.i : 4;
        if (w < 0)
            w = 0;
        if (w > 200)
            return tmpl_fail(rt, at, "indent: width too large");
        memset(ind, ' ', (size_t)w);
        ind[w] = 0;
    }
    bool f = tmpl_arg(a, 1, "first", &first) && tmpl_truthy(first);
    bool b = tmpl_arg(a, 2, "blank", &blank) && tmpl_truthy(blank);
    /* s += "\n"; lines = s.splitlines() */
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    if ((rc = tmpl_sb_str(&sb, s.u.s)) || (rc = tmpl_sb_put(&sb, "\n", 1, false))) {
        tmpl_sb_free(&sb);
        return rc;
    }
    tval s2, lines;
    if ((rc = tmpl_sb_finish(rt, &sb, &s2)) || (rc = tmpl_splitlines(rt, s2.u.s, false, &lines)))
        return rc;
    tmpl_sb_init(rt, &sb);
    if (f)
        rc = tmpl_sb_puts(&sb, ind);
    for (size_t i = 0; !rc && i < lines.u.l->n; i++) {
        const struct tmpl_str *line = lines.u.l->v[i].u.s;
        if (i) {
            rc = tmpl_sb_puts(&sb, "\n");
            if (!rc && (b || line->len))
                rc = tmpl_sb_puts(&sb, ind);
        }
        if (!rc)
            rc = tmpl_sb_str(&sb, line);
    }
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

FILTER(center)
{
    tval width, s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    int64_t w = tmpl_arg(a, 0, "width", &width) && width.type == TV_INT ? width.u.i : 80;
    int64_t n = (int64_t)tmpl_utf8_len(s.u.s->p, s.u.s->len);
    if (w <= n) {
        *out = s;
        return 0;
    }
    if (w > 100000)
        return tmpl_fail(rt, at, "center: width too large");
    int64_t pad = w - n, left = pad / 2 + (pad & w & 1);
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    for (int64_t i = 0; !rc && i < left; i++)
        rc = tmpl_sb_puts(&sb, " ");
    if (!rc)
        rc = tmpl_sb_str(&sb, s.u.s);
    for (int64_t i = 0; !rc && i < pad - left; i++)
        rc = tmpl_sb_puts(&sb, " ");
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

FILTER(wordcount)
{
    tval s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    int64_t n = 0;
    bool inword = false;
    for (size_t i = 0; i < s.u.s->len;) {
        uint32_t c;
        i += tmpl_utf8_decode(s.u.s->p + i, s.u.s->len - i, &c);
        bool w = tmpl_is_alpha(c) || (c >= '0' && c <= '9') || c == '_';
        if (w && !inword)
            n++;
        inword = w;
    }
    *out = tv_int(n);
    return 0;
}

FILTER(batch)
{
    tval count, fill;
    if (!tmpl_arg(a, 0, "linecount", &count) || count.type != TV_INT || count.u.i <= 0)
        return tmpl_fail(rt, at, "batch: linecount must be a positive integer");
    bool has_fill = tmpl_arg(a, 1, "fill_with", &fill) && fill.type != TV_NONE;
    struct tmpl_list *l;
    int rc = tmpl_iterate(rt, at, in, &l);
    if (rc)
        return rc;
    size_t per = (size_t)count.u.i, groups = (l->n + per - 1) / per;
    if ((rc = tmpl_list_new(rt, groups, out)))
        return rc;
    for (size_t g = 0; g < groups; g++) {
        size_t b = g * per, n = l->n - b < per ? l->n - b : per;
        tval row;
        if ((rc = tmpl_list_new(rt, has_fill ? per : n, &row)))
            return rc;
        memcpy(row.u.l->v, l->v + b, n * sizeof(tval));
        for (size_t k = n; has_fill && k < per; k++)
            row.u.l->v[k] = fill;
        out->u.l->v[g] = row;
    }
    out->flags |= TVF_GEN;
    return 0;
}

/* Python's `fmt % args`: %s %r %d %i %f %F %e %g %x %X %o %c %% with flags, width, precision. */
int tmpl_percent_format(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_str *fmt, tval args, tval *out)
{
    size_t argi = 0, nargs = args.type == TV_LIST && (args.flags & TVF_TUPLE) ? args.u.l->n : 1;
    const tval *argv = args.type == TV_LIST && (args.flags & TVF_TUPLE) ? args.u.l->v : &args;
    bool by_name = args.type == TV_DICT;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    int rc = 0;
    for (size_t i = 0; !rc && i < fmt->len; i++) {
        if (fmt->p[i] != '%') {
            rc = tmpl_sb_sub(&sb, fmt, i, i + 1);
            continue;
        }
        size_t j = i + 1;
        tval v;
        bool have = false;
        if (j < fmt->len && fmt->p[j] == '(' && by_name) {
            const char *close = memchr(fmt->p + j, ')', fmt->len - j);
            if (!close) {
                rc = tmpl_fail(rt, at, "incomplete format key");
                break;
            }
            tval key;
            if ((rc = tmpl_str_new(rt, fmt->p + j + 1, (size_t)(close - fmt->p) - j - 1, false, &key)))
                break;
            tval *p = tmpl_dict_get(args.u.d, key);
            if (!p) {
                rc = tmpl_fail(rt, at, "format key '%s' not found", key.u.s->p);
                break;
            }
            v = *p;
            have = true;
            j = (size_t)(close - fmt->p) + 1;
        }
        char spec[32];
        size_t sn = 0;
        spec[sn++] = '%';
        while (j < fmt->len && strchr("-+ 0#", fmt->p[j]) && sn < 8)
            spec[sn++] = fmt->p[j++];
        while (j < fmt->len && fmt->p[j] >= '0' && fmt->p[j] <= '9' && sn < 14)
            spec[sn++] = fmt->p[j++];
        if (j < fmt->len && fmt->p[j] == '.') {
            spec[sn++] = fmt->p[j++];
            while (j < fmt->len && fmt->p[j] >= '0' && fmt->p[j] <= '9' && sn < 20)
                spec[sn++] = fmt->p[j++];
        }
        if (j >= fmt->len) {
            rc = tmpl_fail(rt, at, "incomplete format");
            break;
        }
        char conv = fmt->p[j];
        i = j;
        if (conv == '%') {
            rc = tmpl_sb_puts(&sb, "%");
            continue;
        }
        if (!have) {
            if (by_name) {
                v = args;
            } else {
                if (argi >= nargs) {
                    rc = tmpl_fail(rt, at, "not enough arguments for format string");
                    break;
                }
                v = argv[argi++];
            }
        }
        char buf[512];
        switch (conv) {
        case 's':
        case 'r':
            if (sn == 1)
                rc = conv == 's' ? tmpl_write_str(rt, &sb, v) : tmpl_write_repr(rt, &sb, v);
            else {
                struct tmpl_sb tmp;
                tmpl_sb_init(rt, &tmp);
                rc = conv == 's' ? tmpl_write_str(rt, &tmp, v) : tmpl_write_repr(rt, &tmp, v);
                if (!rc) {
                    spec[sn++] = 's';
                    spec[sn] = 0;
                    snprintf(buf, sizeof(buf), spec, tmp.text.data ? tmp.text.data : "");
                    rc = tmpl_sb_puts(&sb, buf);
                }
                tmpl_sb_free(&tmp);
            }
            break;
        case 'd':
        case 'i':
        case 'x':
        case 'X':
        case 'o':
        case 'c': {
            if (v.type != TV_INT && v.type != TV_BOOL && v.type != TV_FLOAT) {
                rc = tmpl_fail(rt, at, "%%%c format: a number is required, not %s", conv, tmpl_type_name(v));
                break;
            }
            long long x = v.type == TV_INT ? v.u.i : v.type == TV_BOOL ? v.u.b : (long long)v.u.f;
            if (conv == 'c') {
                char u[8];
                size_t n = tmpl_put_utf8(u, (uint32_t)x);
                rc = tmpl_sb_put(&sb, u, n, false);
                break;
            }
            spec[sn++] = 'l';
            spec[sn++] = 'l';
            spec[sn++] = conv == 'i' ? 'd' : conv;
            spec[sn] = 0;
            snprintf(buf, sizeof(buf), spec, x);
            rc = tmpl_sb_puts(&sb, buf);
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': {
            if (v.type != TV_INT && v.type != TV_BOOL && v.type != TV_FLOAT) {
                rc = tmpl_fail(rt, at, "%%%c format: a number is required, not %s", conv, tmpl_type_name(v));
                break;
            }
            double x = v.type == TV_FLOAT ? v.u.f : v.type == TV_INT ? (double)v.u.i : v.u.b;
            spec[sn++] = conv;
            spec[sn] = 0;
            if (fabs(x) > 1e300 && (conv == 'f' || conv == 'F'))
                snprintf(buf, sizeof(buf), "%e", x);
            else
                snprintf(buf, sizeof(buf), spec, x);
            rc = tmpl_sb_puts(&sb, buf);
            break;
        }
        default: rc = tmpl_fail(rt, at, "unsupported format character '%c'", conv);
        }
    }
    if (!rc && !by_name && argi < nargs)
        rc = tmpl_fail(rt, at, "not all arguments converted during string formatting");
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

FILTER(format)
{
    tval s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    tval args;
    if (a->nkw) {
        if ((rc = tmpl_dict_new(rt, a->nkw, &args)))
            return rc;
        for (size_t k = 0; k < a->nkw; k++) {
            tval key;
            if ((rc = tmpl_str_new(rt, a->kwn[k], strlen(a->kwn[k]), false, &key)) ||
                (rc = tmpl_dict_set(rt, args.u.d, key, a->kwv[k])))
                return rc;
        }
    } else {
        if ((rc = tmpl_list_new(rt, a->npos, &args)))
            return rc;
        args.flags |= TVF_TUPLE;
        if (a->npos)
            memcpy(args.u.l->v, a->pos, a->npos * sizeof(tval));
    }
    return tmpl_percent_format(rt, at, s.u.s, args, out);
}

static const struct tmpl_filter_def filters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_capitalize},
    {"center", f_center},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", f_dictsort},
    {"e", f_escape},
    {"escape", f_escape},
    {"first", f_first},
    {"float", f_float},
    {"forceescape", f_escape},
    {"format", f_format},
    {"indent", f_indent},
    {"int", f_int},
    {"items", f_items},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_lower},
    {"map", f_map},
    {"max", f_max},
    {"min", f_min},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"sort", f_sort},
    {"string", f_string},
    {"sum", f_sum},
    {"title", f_title},
    {"tojson", f_tojson},
    {"trim", f_trim},
    {"unique", f_unique},
    {"upper", f_upper},
    {"wordcount", f_wordcount},
};

const struct tmpl_filter_def *tmpl_find_filter(const char *name)
{
    for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
        if (!strcmp(filters[i].name, name))
            return &filters[i];
    return NULL;
}

/* ---- tests ---- */

static tval arg0(struct tmpl_args *a)
{
    tval v = tv_undef();
    tmpl_arg(a, 0, NULL, &v);
    return v;
}

TEST(defined) { *out = in.type != TV_UNDEF; return 0; }
TEST(undefined) { *out = in.type == TV_UNDEF; return 0; }
TEST(none) { *out = in.type == TV_NONE; return 0; }
TEST(boolean) { *out = in.type == TV_BOOL; return 0; }
TEST(true) { *out = in.type == TV_BOOL && in.u.b; return 0; }
TEST(false) { *out = in.type == TV_BOOL && !in.u.b; return 0; }
TEST(string) { *out = in.type == TV_STR; return 0; }
TEST(number) { *out = in.type == TV_INT || in.type == TV_FLOAT || in.type == TV_BOOL; return 0; }
TEST(integer) { *out = in.type == TV_INT; return 0; }
TEST(float) { *out = in.type == TV_FLOAT; return 0; }
TEST(mapping) { *out = in.type == TV_DICT && !(in.flags & TVF_NS); return 0; }
TEST(iterable)
{
    *out = in.type == TV_STR || in.type == TV_LIST || (in.type == TV_DICT && !(in.flags & TVF_NS)) || in.type == TV_UNDEF;
    return 0;
}
TEST(sequence)
{
    *out = (in.type == TV_LIST && !(in.flags & TVF_GEN)) || in.type == TV_STR || (in.type == TV_DICT && !(in.flags & TVF_NS)) ||
           in.type == TV_UNDEF;
    return 0;
}
TEST(callable) { *out = in.type == TV_FUNC; return 0; }
TEST(escaped) { *out = in.type == TV_STR && (in.flags & TVF_SAFE); return 0; }
TEST(sameas)
{
    tval o = arg0(a);
    if (in.type != o.type)
        *out = false;
    else if (in.type == TV_LIST)
        *out = in.u.l == o.u.l;
    else if (in.type == TV_DICT)
        *out = in.u.d == o.u.d;
    else if (in.type == TV_STR)
        *out = in.u.s == o.u.s || tmpl_equal(in, o);
    else
        *out = tmpl_equal(in, o);
    return 0;
}

static int cmp_test(struct tmpl_rt *rt, const struct tnode *at, tval in, struct tmpl_args *a, bool *out, int op)
{
    tval o = arg0(a);
    if (op == 0) {
        *out = tmpl_equal(in, o);
        return 0;
    }
    if (op == 1) {
        *out = !tmpl_equal(in, o);
        return 0;
    }
    if (in.type == TV_UNDEF)
        return undefined_error(rt, at, in);
    if (o.type == TV_UNDEF)
        return undefined_error(rt, at, o);
    int c;
    int rc = tmpl_compare(rt, at, in, o, &c);
    *out = op == 2 ? c < 0 : op == 3 ? c <= 0 : op == 4 ? c > 0 : c >= 0;
    return rc;
}
TEST(eq) { return cmp_test(rt, at, in, a, out, 0); }
TEST(ne) { return cmp_test(rt, at, in, a, out, 1); }
TEST(lt) { return cmp_test(rt, at, in, a, out, 2); }
TEST(le) { return cmp_test(rt, at, in, a, out, 3); }
TEST(gt) { return cmp_test(rt, at, in, a, out, 4); }
TEST(ge) { return cmp_test(rt, at, in, a, out, 5); }

static int modulo(struct tmpl_rt *rt, const struct tnode *at, tval in, tval by, int64_t want, bool *out)
{
    tval r;
    int rc = tmpl_binop(rt, at, '%', in, by, &r);
    if (rc)
        return rc;
    *out = r.type == TV_INT ? r.u.i == want : r.type == TV_FLOAT && r.u.f == (double)want;
    return 0;
}
TEST(odd) { return modulo(rt, at, in, tv_int(2), 1, out); }
TEST(even) { return modulo(rt, at, in, tv_int(2), 0, out); }
TEST(divisibleby) { return modulo(rt, at, in, arg0(a), 0, out); }

TEST(in)
{
    tval seq = arg0(a), r;
    if (seq.type == TV_STR) {
        if (in.type != TV_STR)
            return tmpl_fail(rt, at, "'in <string>' requires string as left operand");
        *out = in.u.s->len == 0 || memmem(seq.u.s->p, seq.u.s->len, in.u.s->p, in.u.s->len) != NULL;
        return 0;
    }
    if (seq.type == TV_LIST) {
        struct tmpl_list *l;
        int rc = tmpl_iterate(rt, at, seq, &l);
        if (rc)
            return rc;
        *out = false;
        for (size_t i = 0; i < l->n && !*out; i++)
            *out = tmpl_equal(in, l->v[i]);
        return 0;
    }
    if (seq.type == TV_DICT) {
        *out = tmpl_dict_get(seq.u.d, in) != NULL;
        return 0;
    }
    (void)r;
    return tmpl_fail(rt, at, "argument of type '%s' is not iterable", tmpl_type_name(seq));
}

static int case_test(struct tmpl_rt *rt, tval in, bool *out, bool upper)
{
    tval s;
    int rc = to_s(rt, in, &s);
    if (rc)
        return rc;
    bool cased = false, ok = true;
    for (size_t i = 0; i < s.u.s->len && ok;) {
        uint32_t c;
        i += tmpl_utf8_decode(s.u.s->p + i, s.u.s->len - i, &c);
        bool is_up = tmpl_lower_cp(c) != c, is_lo = tmpl_upper_cp(c) != c;
        if (upper ? is_up : is_lo)
            cased = true;
        else if (upper ? is_lo : is_up)
            ok = false;
    }
    *out = ok && cased;
    return 0;
}
TEST(lower) { return case_test(rt, in, out, false); }
TEST(upper) { return case_test(rt, in, out, true); }

TEST(filter) { *out = in.type == TV_STR && tmpl_find_filter(in.u.s->p) != NULL; return 0; }
TEST(test) { *out = in.type == TV_STR && tmpl_find_test(in.u.s->p) != NULL; return 0; }

static const struct tmpl_test_def tests[] = {
    {"!=", t_ne},
    {"<", t_lt},
    {"<=", t_le},
    {"==", t_eq},
    {">", t_gt},
    {">=", t_ge},
    {"boolean", t_boolean},
    {"callable", t_callable},
    {"defined", t_defined},
    {"divisibleby", t_divisibleby},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"escaped", t_escaped},
    {"even", t_even},
    {"false", t_false},
    {"filter", t_filter},
    {"float", t_float},
    {"ge", t_ge},
    {"greaterthan", t_gt},
    {"gt", t_gt},
    {"in", t_in},
    {"integer", t_integer},
    {"iterable", t_iterable},
    {"le", t_le},
    {"lessthan", t_lt},
    {"lower", t_lower},
    {"lt", t_lt},
    {"mapping", t_mapping},
    {"ne", t_ne},
    {"none", t_none},
    {"number", t_number},
    {"odd", t_odd},
    {"sameas", t_sameas},
    {"sequence", t_sequence},
    {"string", t_string},
    {"test", t_test},
    {"true", t_true},
    {"undefined", t_undefined},
    {"upper", t_upper},
};

const struct tmpl_test_def *tmpl_find_test(const char *name)
{
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        if (!strcmp(tests[i].name, name))
            return &tests[i];
    return NULL;
}
