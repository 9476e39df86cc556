/*
 * value.c — Python-like values: strings that remember which bytes came from caller data,
 * lists, insertion-ordered dicts, truthiness, equality, ordering, str()/repr() and json.dumps.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

/* ---- string builder ---- */

void tmpl_sb_init(struct tmpl_rt *rt, struct tmpl_sb *sb)
{
    memset(sb, 0, sizeof(*sb));
    sb->limit = rt->params->limits.max_output_bytes;
}

void tmpl_sb_free(struct tmpl_sb *sb)
{
    dbuf_free(&sb->text);
    free(sb->spans);
    sb->spans = NULL;
    sb->nspans = sb->cap = 0;
}

static int sb_mark(struct tmpl_sb *sb, size_t b, size_t e)
{
    if (b == e)
        return 0;
    if (sb->nspans && sb->spans[sb->nspans - 1].end == b) {
        sb->spans[sb->nspans - 1].end = e;
        return 0;
    }
    if (sb->nspans == sb->cap) {
        size_t cap = sb->cap ? sb->cap * 2 : 8;
        struct dream_span *s = realloc(sb->spans, cap * sizeof(*s));
        if (!s)
            return dream_error_set(DREAM_ENOMEM, "template: out of memory for data spans");
        sb->spans = s;
        sb->cap = cap;
    }
    sb->spans[sb->nspans].begin = b;
    sb->spans[sb->nspans].end = e;
    sb->nspans++;
    return 0;
}

int tmpl_sb_put(struct tmpl_sb *sb, const char *p, size_t n, bool data)
{
    if (n == 0)
        return 0;
    if (sb->limit && sb->text.len + n > sb->limit)
        return dream_error_set(DREAM_ELIMIT,
                               "template output exceeds %zu bytes (limit max_output_bytes)",
                               sb->limit);
    size_t at = sb->text.len;
    if (dbuf_append(&sb->text, p, n))
        return DREAM_ENOMEM;
    return data ? sb_mark(sb, at, at + n) : 0;
}

int tmpl_sb_puts(struct tmpl_sb *sb, const char *s) { return tmpl_sb_put(sb, s, strlen(s), false); }

int tmpl_sb_sub(struct tmpl_sb *sb, const struct tmpl_str *s, size_t from, size_t to)
{
    if (to <= from)
        return 0;
    size_t at = sb->text.len;
    int rc = tmpl_sb_put(sb, s->p + from, to - from, false);
    if (rc)
        return rc;
    for (size_t i = 0; i < s->nspans; i++) {
        size_t b = s->spans[i].begin, e = s->spans[i].end;
        if (e <= from || b >= to)
            continue;
        if (b < from)
            b = from;
        if (e > to)
            e = to;
        if ((rc = sb_mark(sb, at + b - from, at + e - from)))
            return rc;
    }
    return 0;
}

int tmpl_sb_str(struct tmpl_sb *sb, const struct tmpl_str *s) { return tmpl_sb_sub(sb, s, 0, s->len); }

int tmpl_sb_finish(struct tmpl_rt *rt, struct tmpl_sb *sb, tval *out)
{
    struct tmpl_str *s = tmpl_alloc(&rt->arena, sizeof(*s));
    char *p = s ? tmpl_strndup(&rt->arena, sb->text.data ? sb->text.data : "", sb->text.len) : NULL;
    struct dream_span *sp = NULL;
    if (p && sb->nspans) {
        sp = tmpl_alloc(&rt->arena, sb->nspans * sizeof(*sp));
        if (sp)
            memcpy(sp, sb->spans, sb->nspans * sizeof(*sp));
    }
    if (!p || (sb->nspans && !sp)) {
        tmpl_sb_free(sb);
        return dream_error_code() ? dream_error_code() : DREAM_ENOMEM;
    }
    s->p = p;
    s->len = sb->text.len;
    s->spans = sp;
    s->nspans = sb->nspans;
    tmpl_sb_free(sb);
    memset(out, 0, sizeof(*out));
    out->type = TV_STR;
    out->u.s = s;
    return 0;
}

/* ---- strings ---- */

int tmpl_str_new(struct tmpl_rt *rt, const char *p, size_t n, bool data, tval *out)
{
    struct tmpl_str *s = tmpl_alloc(&rt->arena, sizeof(*s) + (data && n ? sizeof(struct dream_span) : 0));
    if (!s)
        return dream_error_code();
    char *q = tmpl_strndup(&rt->arena, p, n);
    if (!q)
        return dream_error_code();
    s->p = q;
    s->len = n;
    if (data && n) {
        s->spans = (struct dream_span *)(s + 1);
        s->spans[0].begin = 0;
        s->spans[0].end = n;
        s->nspans = 1;
    }
    memset(out, 0, sizeof(*out));
    out->type = TV_STR;
    out->u.s = s;
    return 0;
}

tval tmpl_str_lit(struct tmpl_str *s)
{
    tval v = {.type = TV_STR};
    v.u.s = s;
    return v;
}

bool tmpl_str_has_data(const struct tmpl_str *s) { return s->nspans > 0; }

int tmpl_str_sub(struct tmpl_rt *rt, const struct tmpl_str *s, size_t from, size_t to, tval *out)
{
    if (to < from)
        to = from;
    if (!s->nspans)
        return tmpl_str_new(rt, s->p + from, to - from, false, out);
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    int rc = tmpl_sb_sub(&sb, s, from, to);
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

/* ---- UTF-8 ---- */

size_t tmpl_utf8_decode(const char *p, size_t n, uint32_t *cp)
{
    const unsigned char *s = (const unsigned char *)p;
    unsigned c = s[0];
    size_t len;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xE0) == 0xC0) {
        len = 2;
        v = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        len = 3;
        v = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        len = 4;
        v = c & 0x07;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return len;
}

size_t tmpl_utf8_len(const char *p, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += tmpl_utf8_decode(p + i, n - i, &cp);
        count++;
    }
    return count;
}

size_t tmpl_utf8_offset(const char *p, size_t n, size_t idx)
{
    size_t i = 0;
    while (idx > 0 && i < n) {
        uint32_t cp;
        i += tmpl_utf8_decode(p + i, n - i, &cp);
        idx--;
    }
    return i;
}

/* ---- containers ---- */

int tmpl_list_new(struct tmpl_rt *rt, size_t n, tval *out)
{
    struct tmpl_list *l = tmpl_alloc(&rt->arena, sizeof(*l) + n * sizeof(tval));
    if (!l)
        return dream_error_code();
    l->n = n;
    l->v = (tval *)(l + 1);
    memset(out, 0, sizeof(*out));
    out->type = TV_LIST;
    out->u.l = l;
    return 0;
}

int tmpl_dict_new(struct tmpl_rt *rt, size_t cap, tval *out)
{
    struct tmpl_dict *d = tmpl_alloc(&rt->arena, sizeof(*d));
    if (!d)
        return dream_error_code();
    if (cap) {
        d->k = tmpl_alloc(&rt->arena, cap * sizeof(tval));
        d->v = tmpl_alloc(&rt->arena, cap * sizeof(tval));
        if (!d->k || !d->v)
            return dream_error_code();
        d->cap = cap;
    }
    memset(out, 0, sizeof(*out));
    out->type = TV_DICT;
    out->u.d = d;
    return 0;
}

static bool key_equal(tval a, tval b)
{
    if (a.type == TV_STR && b.type == TV_STR)
        return a.u.s->len == b.u.s->len && memcmp(a.u.s->p, b.u.s->p, a.u.s->len) == 0;
    return tmpl_equal(a, b);
}

tval *tmpl_dict_get(const struct tmpl_dict *d, tval key)
{
    for (size_t i = 0; i < d->n; i++)
        if (key_equal(d->k[i], key))
            return &d->v[i];
    return NULL;
}

tval *tmpl_dict_gets(const struct tmpl_dict *d, const char *key)
{
    size_t n = strlen(key);
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i].type == TV_STR && d->k[i].u.s->len == n && memcmp(d->k[i].u.s->p, key, n) == 0)
            return &d->v[i];
    return NULL;
}

int tmpl_dict_set(struct tmpl_rt *rt, struct tmpl_dict *d, tval key, tval val)
{
    tval *slot = tmpl_dict_get(d, key);
    if (slot) {
        *slot = val;
        return 0;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        tval *k = tmpl_alloc(&rt->arena, cap * sizeof(tval));
        tval *v = tmpl_alloc(&rt->arena, cap * sizeof(tval));
        if (!k || !v)
            return dream_error_code();
        if (d->n) {
            memcpy(k, d->k, d->n * sizeof(tval));
            memcpy(v, d->v, d->n * sizeof(tval));
        }
        d->k = k;
        d->v = v;
        d->cap = cap;
    }
    d->k[d->n] = key;
    d->v[d->n] = val;
    d->n++;
    return 0;
}

/* ---- truth, equality, order ---- */

bool tmpl_truthy(tval v)
{
    switch (v.type) {
    case TV_UNDEF:
    case TV_NONE: return false;
    case TV_BOOL: return v.u.b;
    case TV_INT: return v.u.i != 0;
    case TV_FLOAT: return v.u.f != 0.0;
    case TV_STR: return v.u.s->len > 0;
    case TV_LIST: return (v.flags & TVF_GEN) || v.u.l->n > 0;
    case TV_DICT: return (v.flags & TVF_NS) || v.u.d->n > 0;
    default: return true;
    }
}

static bool is_num(tval v) { return v.type == TV_INT || v.type == TV_FLOAT || v.type == TV_BOOL; }
static double num(tval v)
{
    return v.type == TV_FLOAT ? v.u.f : v.type == TV_INT ? (double)v.u.i : (double)v.u.b;
}
static int64_t inum(tval v) { return v.type == TV_INT ? v.u.i : v.type == TV_BOOL ? (int64_t)v.u.b : 0; }

static bool equal_depth(tval a, tval b, int depth);

bool tmpl_equal(tval a, tval b) { return equal_depth(a, b, 0); }

/* Values nested deeper than this compare unequal rather than exhaust the stack. */
#define TMPL_MAX_VALUE_DEPTH 1000

static bool equal_depth(tval a, tval b, int depth)
{
    if (depth > TMPL_MAX_VALUE_DEPTH)
        return false;
    if (is_num(a) && is_num(b)) {
        if (a.type != TV_FLOAT && b.type != TV_FLOAT)
            return inum(a) == inum(b);
        return num(a) == num(b);
    }
    if (a.type != b.type)
        return false;
    switch (a.type) {
    case TV_UNDEF:
    case TV_NONE: return true;
    case TV_STR: return a.u.s->len == b.u.s->len && memcmp(a.u.s->p, b.u.s->p, a.u.s->len) == 0;
    case TV_LIST:
        if ((a.flags | b.flags) & TVF_GEN)
            return a.u.l == b.u.l;
        if ((a.flags & TVF_TUPLE) != (b.flags & TVF_TUPLE) || a.u.l->n != b.u.l->n)
            return false;
        for (size_t i = 0; i < a.u.l->n; i++)
            if (!equal_depth(a.u.l->v[i], b.u.l->v[i], depth + 1))
                return false;
        return true;
    case TV_DICT:
        if (a.flags & TVF_NS || b.flags & TVF_NS)
            return a.u.d == b.u.d;
        if (a.u.d->n != b.u.d->n)
            return false;
        for (size_t i = 0; i < a.u.d->n; i++) {
            tval *o = tmpl_dict_get(b.u.d, a.u.d->k[i]);
            if (!o || !equal_depth(a.u.d->v[i], *o, depth + 1))
                return false;
        }
        return true;
    case TV_FUNC: return a.u.fn == b.u.fn;
    case TV_LOOP: return a.u.loop == b.u.loop;
    default: return false;
    }
}

const char *tmpl_type_name(tval v)
{
    switch (v.type) {
    case TV_UNDEF: return "Undefined";
    case TV_NONE: return "NoneType";
    case TV_BOOL: return "bool";
    case TV_INT: return "int";
    case TV_FLOAT: return "float";
    case TV_STR: return "str";
    case TV_LIST: return v.flags & TVF_GEN ? "generator" : v.flags & TVF_TUPLE ? "tuple" : "list";
    case TV_DICT: return v.flags & TVF_NS ? "Namespace" : "dict";
    case TV_FUNC: return "function";
    default: return "LoopContext";
    }
}

int tmpl_compare(struct tmpl_rt *rt, const struct tnode *at, tval a, tval b, int *cmp)
{
    if (is_num(a) && is_num(b)) {
        if (a.type != TV_FLOAT && b.type != TV_FLOAT) {
            int64_t x = inum(a), y = inum(b);
            *cmp = x < y ? -1 : x > y;
        } else {
            double x = num(a), y = num(b);
            *cmp = x < y ? -1 : x > y;
        }
        return 0;
    }
    if (a.type == TV_STR && b.type == TV_STR) {
        size_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
        int c = memcmp(a.u.s->p, b.u.s->p, n);
        *cmp = c ? (c < 0 ? -1 : 1) : (a.u.s->len < b.u.s->len ? -1 : a.u.s->len > b.u.s->len);
        return 0;
    }
    if (a.type == TV_LIST && b.type == TV_LIST && (a.flags & TVF_TUPLE) == (b.flags & TVF_TUPLE)) {
        if (rt->expr_depth > TMPL_MAX_VALUE_DEPTH * 2)
            return tmpl_fail_code(rt, DREAM_ELIMIT, at, "values nested too deeply to compare");
        size_t n = a.u.l->n < b.u.l->n ? a.u.l->n : b.u.l->n;
        for (size_t i = 0; i < n; i++) {
            if (tmpl_equal(a.u.l->v[i], b.u.l->v[i]))
                continue;
            rt->expr_depth++;
            int rc = tmpl_compare(rt, at, a.u.l->v[i], b.u.l->v[i], cmp);
            rt->expr_depth--;
            return rc;
        }
        *cmp = a.u.l->n < b.u.l->n ? -1 : a.u.l->n > b.u.l->n;
        return 0;
    }
    return tmpl_fail(rt, at, "'<' not supported between instances of '%s' and '%s'",
                     tmpl_type_name(a), tmpl_type_name(b));
}

/* ---- str() and repr() ---- */

static int write_repr(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v);

void tmpl_format_float(double f, char buf[40])
{
    if (isnan(f)) {
        strcpy(buf, "nan");
        return;
    }
    if (isinf(f)) {
        strcpy(buf, f < 0 ? "-inf" : "inf");
        return;
    }
    if (f == 0) {
        strcpy(buf, signbit(f) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
        if (strtod(tmp, NULL) == f)
            break;
    }
    /* tmp is [-]d[.ddd]e[+-]XX: collect the digits and the exponent. */
    char digits[24];
    size_t nd = 0;
    const char *p = tmp;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < sizeof(digits) - 1)
            digits[nd++] = *p;
    digits[nd] = 0;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        digits[--nd] = 0;
    char *o = buf;
    if (neg)
        *o++ = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 >= 0) {
            for (int i = 0; i <= exp10; i++)
                *o++ = (size_t)i < nd ? digits[i] : '0';
            *o++ = '.';
            if ((size_t)exp10 + 1 < nd)
                for (size_t i = (size_t)exp10 + 1; i < nd; i++)
                    *o++ = digits[i];
            else
                *o++ = '0';
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -exp10 - 1; i++)
                *o++ = '0';
            for (size_t i = 0; i < nd; i++)
                *o++ = digits[i];
        }
        *o = 0;
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            for (size_t i = 1; i < nd; i++)
                *o++ = digits[i];
        }
        sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
}

static int write_num(struct tmpl_sb *sb, tval v)
{
    char buf[40];
    if (v.type == TV_INT)
        snprintf(buf, sizeof(buf), "%" PRId64, v.u.i);
    else
        tmpl_format_float(v.u.f, buf);
    return tmpl_sb_puts(sb, buf);
}

/* Whether Python's str.isprintable() is false for a non-ASCII code point (approximation
 * covering controls, separators, format characters and private use). */
static bool nonprintable(uint32_t c)
{
    return (c >= 0x80 && c <= 0xA0) || c == 0xAD || (c >= 0x2000 && c <= 0x200F) ||
           (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F) || c == 0x3000 ||
           c == 0xFEFF || (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xD800 && c <= 0xDFFF) ||
           c == 0xFFFE || c == 0xFFFF || c >= 0xF0000;
}

static int write_str_repr(struct tmpl_sb *sb, const struct tmpl_str *s)
{
    bool has_sq = memchr(s->p, '\'', s->len) != NULL;
    bool has_dq = memchr(s->p, '"', s->len) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    bool data = tmpl_str_has_data(s);
    int rc = tmpl_sb_put(sb, &q, 1, false);
    for (size_t i = 0; !rc && i < s->len;) {
        uint32_t c;
        size_t n = tmpl_utf8_decode(s->p + i, s->len - i, &c);
        char esc[16];
        const char *out = NULL;
        if (c == '\\')
            out = "\\\\";
        else if (c == (uint32_t)q)
            out = q == '"' ? "\\\"" : "\\'";
        else if (c == '\n')
            out = "\\n";
        else if (c == '\r')
            out = "\\r";
        else if (c == '\t')
            out = "\\t";
        else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0xFF && nonprintable(c))) {
            snprintf(esc, sizeof(esc), "\\x%02x", c);
            out = esc;
        } else if (c > 0xFF && nonprintable(c)) {
            if (c > 0xFFFF)
                snprintf(esc, sizeof(esc), "\\U%08x", c);
            else
                snprintf(esc, sizeof(esc), "\\u%04x", c);
            out = esc;
        }
        if (out)
            rc = tmpl_sb_put(sb, out, strlen(out), data);
        else
            rc = tmpl_sb_put(sb, s->p + i, n, data);
        i += n;
    }
    return rc ? rc : tmpl_sb_put(sb, &q, 1, false);
}

int tmpl_write_repr(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v)
{
    if ((v.type == TV_LIST || v.type == TV_DICT) && rt->expr_depth > TMPL_MAX_VALUE_DEPTH * 2)
        return tmpl_fail_code(rt, DREAM_ELIMIT, NULL, "value nested too deeply to print");
    rt->expr_depth++;
    int rc = write_repr(rt, sb, v);
    rt->expr_depth--;
    return rc;
}

static int write_repr(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v)
{
    int rc = 0;
    switch (v.type) {
    case TV_STR: return write_str_repr(sb, v.u.s);
    case TV_UNDEF: return 0;
    case TV_LIST: {
        if (v.flags & TVF_GEN)
            return tmpl_sb_puts(sb, "<generator object>");
        bool tuple = v.flags & TVF_TUPLE;
        rc = tmpl_sb_puts(sb, tuple ? "(" : "[");
        for (size_t i = 0; !rc && i < v.u.l->n; i++) {
            if (i)
                rc = tmpl_sb_puts(sb, ", ");
            if (!rc)
                rc = tmpl_write_repr(rt, sb, v.u.l->v[i]);
        }
        if (!rc && tuple && v.u.l->n == 1)
            rc = tmpl_sb_puts(sb, ",");
        return rc ? rc : tmpl_sb_puts(sb, tuple ? ")" : "]");
    }
    case TV_DICT:
        rc = tmpl_sb_puts(sb, v.flags & TVF_NS ? "<Namespace {" : "{");
        for (size_t i = 0; !rc && i < v.u.d->n; i++) {
            if (i)
                rc = tmpl_sb_puts(sb, ", ");
            if (!rc)
                rc = tmpl_write_repr(rt, sb, v.u.d->k[i]);
            if (!rc)
                rc = tmpl_sb_puts(sb, ": ");
            if (!rc)
                rc = tmpl_write_repr(rt, sb, v.u.d->v[i]);
        }
        return rc ? rc : tmpl_sb_puts(sb, v.flags & TVF_NS ? "}>" : "}");
    default: return tmpl_write_str(rt, sb, v);
    }
}

int tmpl_write_str(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v)
{
    switch (v.type) {
    case TV_UNDEF: return 0;
    case TV_NONE: return tmpl_sb_puts(sb, "None");
    case TV_BOOL: return tmpl_sb_puts(sb, v.u.b ? "True" : "False");
    case TV_INT:
    case TV_FLOAT: return write_num(sb, v);
    case TV_STR: return tmpl_sb_str(sb, v.u.s);
    case TV_LIST:
    case TV_DICT: return tmpl_write_repr(rt, sb, v);
    case TV_FUNC: {
        char buf[160];
        snprintf(buf, sizeof(buf), "<function %.100s>", v.u.fn->name ? v.u.fn->name : "?");
        return tmpl_sb_puts(sb, buf);
    }
    default: return tmpl_sb_puts(sb, "<LoopContext>");
    }
}

int tmpl_to_str(struct tmpl_rt *rt, tval v, tval *out)
{
    if (v.type == TV_STR) {
        *out = v;
        out->flags = 0;
        return 0;
    }
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    int rc = tmpl_write_str(rt, &sb, v);
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

/* ---- json.dumps ---- */

static int json_string(struct tmpl_sb *sb, const char *p, size_t n, bool data, bool ascii)
{
    int rc = tmpl_sb_put(sb, "\"", 1, false);
    size_t run = 0; /* start of a run of bytes copied verbatim */
    for (size_t i = 0; !rc && i < n;) {
        unsigned char c = (unsigned char)p[i];
        char esc[16];
        const char *out = NULL;
        size_t adv = 1;
        if (c == '"')
            out = "\\\"";
        else if (c == '\\')
            out = "\\\\";
        else if (c == '\n')
            out = "\\n";
        else if (c == '\r')
            out = "\\r";
        else if (c == '\t')
            out = "\\t";
        else if (c == '\b')
            out = "\\b";
        else if (c == '\f')
            out = "\\f";
        else if (c < 0x20 || (ascii && c == 0x7F)) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            out = esc;
        } else if (ascii && c >= 0x80) {
            uint32_t cp;
            adv = tmpl_utf8_decode(p + i, n - i, &cp);
            if (cp > 0xFFFF) {
                cp -= 0x10000;
                snprintf(esc, sizeof(esc), "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
            } else {
                snprintf(esc, sizeof(esc), "\\u%04x", cp);
            }
            out = esc;
        }
        if (out) {
            rc = tmpl_sb_put(sb, p + run, i - run, data);
            if (!rc)
                rc = tmpl_sb_put(sb, out, strlen(out), data);
            i += adv;
            run = i;
        } else {
            i++;
        }
    }
    if (!rc)
        rc = tmpl_sb_put(sb, p + run, n - run, data);
    return rc ? rc : tmpl_sb_put(sb, "\"", 1, false);
}

static int json_newline(struct tmpl_sb *sb, const struct tmpl_json_opts *o, int level)
{
    int rc = tmpl_sb_puts(sb, "\n");
    for (int i = 0; !rc && i < level; i++)
        rc = tmpl_sb_puts(sb, o->indent);
    return rc;
}

static int json_key(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_sb *sb, tval k,
                    const struct tmpl_json_opts *o)
{
    char buf[40];
    switch (k.type) {
    case TV_STR: return json_string(sb, k.u.s->p, k.u.s->len, tmpl_str_has_data(k.u.s), o->ensure_ascii);
    case TV_BOOL: return json_string(sb, k.u.b ? "true" : "false", k.u.b ? 4 : 5, false, false);
    case TV_NONE: return json_string(sb, "null", 4, false, false);
    case TV_INT:
        snprintf(buf, sizeof(buf), "%" PRId64, k.u.i);
        return json_string(sb, buf, strlen(buf), false, false);
    case TV_FLOAT:
        tmpl_format_float(k.u.f, buf);
        return json_string(sb, buf, strlen(buf), false, false);
    default:
        return tmpl_fail(rt, at, "keys must be str, int, float, bool or None, not %s",
                         tmpl_type_name(k));
    }
}

static int cmp_keys(const void *a, const void *b)
{
    const tval *x = *(const tval *const *)a, *y = *(const tval *const *)b;
    if (x->type != TV_STR || y->type != TV_STR)
        return 0;
    size_t n = x->u.s->len < y->u.s->len ? x->u.s->len : y->u.s->len;
    int c = memcmp(x->u.s->p, y->u.s->p, n);
    return c ? c : (x->u.s->len > y->u.s->len) - (x->u.s->len < y->u.s->len);
}

int tmpl_write_json(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_sb *sb, tval v,
                    const struct tmpl_json_opts *o, int level)
{
    char buf[40];
    int rc = 0;
    if (level > 512)
        return tmpl_fail_code(rt, DREAM_ELIMIT, at, "tojson: value nested too deeply");
    switch (v.type) {
    case TV_NONE: return tmpl_sb_puts(sb, "null");
    case TV_BOOL: return tmpl_sb_puts(sb, v.u.b ? "true" : "false");
    case TV_INT: return write_num(sb, v);
    case TV_FLOAT:
        if (isnan(v.u.f))
            return tmpl_sb_puts(sb, "NaN");
        if (isinf(v.u.f))
            return tmpl_sb_puts(sb, v.u.f < 0 ? "-Infinity" : "Infinity");
        tmpl_format_float(v.u.f, buf);
        return tmpl_sb_puts(sb, buf);
    case TV_STR:
        return json_string(sb, v.u.s->p, v.u.s->len, tmpl_str_has_data(v.u.s), o->ensure_ascii);
    case TV_LIST:
        if (v.flags & TVF_GEN)
            return tmpl_fail(rt, at, "Object of type generator is not JSON serializable");
        if (v.u.l->n == 0)
            return tmpl_sb_puts(sb, "[]");
        rc = tmpl_sb_puts(sb, "[");
        for (size_t i = 0; !rc && i < v.u.l->n; i++) {
            if (i)
                rc = tmpl_sb_puts(sb, o->item_sep);
            if (!rc && o->indent)
                rc = json_newline(sb, o, level + 1);
            if (!rc)
                rc = tmpl_write_json(rt, at, sb, v.u.l->v[i], o, level + 1);
        }
        if (!rc && o->indent)
            rc = json_newline(sb, o, level);
        return rc ? rc : tmpl_sb_puts(sb, "]");
    case TV_DICT: {
        if (v.flags & TVF_NS)
            break;
        struct tmpl_dict *d = v.u.d;
        if (d->n == 0)
            return tmpl_sb_puts(sb, "{}");
        size_t *order = NULL;
        if (o->sort_keys) {
            const tval **keys = tmpl_alloc(&rt->arena, d->n * sizeof(*keys));
            order = tmpl_alloc(&rt->arena, d->n * sizeof(*order));
            if (!keys || !order)
                return dream_error_code();
            for (size_t i = 0; i < d->n; i++)
                keys[i] = &d->k[i];
            qsort(keys, d->n, sizeof(*keys), cmp_keys);
            for (size_t i = 0; i < d->n; i++)
                order[i] = (size_t)(keys[i] - d->k);
        }
        rc = tmpl_sb_puts(sb, "{");
        for (size_t j = 0; !rc && j < d->n; j++) {
            size_t i = order ? order[j] : j;
            if (j)
                rc = tmpl_sb_puts(sb, o->item_sep);
            if (!rc && o->indent)
                rc = json_newline(sb, o, level + 1);
            if (!rc)
                rc = json_key(rt, at, sb, d->k[i], o);
            if (!rc)
                rc = tmpl_sb_puts(sb, o->key_sep);
            if (!rc)
                rc = tmpl_write_json(rt, at, sb, d->v[i], o, level + 1);
        }
        if (!rc && o->indent)
            rc = json_newline(sb, o, level);
        return rc ? rc : tmpl_sb_puts(sb, "}");
    }
    default: break;
    }
    return tmpl_fail(rt, at, "Object of type %s is not JSON serializable", tmpl_type_name(v));
}
