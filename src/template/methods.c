/*
 * methods.c — what templates call on values and globally: str methods (strip, split,
 * startswith, replace, format, ...), dict methods (get, items, keys, values), list methods,
 * loop.cycle, and the globals range, dict, namespace, raise_exception and strftime_now.
 * Methods that would mutate a list or dict are refused, as Jinja2's immutable sandbox does.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "template/internal.h"

bool tmpl_arg(const struct tmpl_args *a, size_t i, const char *name, tval *out)
{
    if (i < a->npos) {
        *out = a->pos[i];
        return true;
    }
    for (size_t k = 0; name && k < a->nkw; k++)
        if (!strcmp(a->kwn[k], name)) {
            *out = a->kwv[k];
            return true;
        }
    return false;
}

int tmpl_check_args(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_args *a, size_t max_pos,
                    const char *const *names, const char *what)
{
    if (a->npos > max_pos)
        return tmpl_fail(rt, at, "%s takes at most %zu positional argument(s) (%zu given)", what, max_pos, a->npos);
    for (size_t k = 0; k < a->nkw; k++) {
        bool ok = false;
        for (size_t j = 0; names && names[j]; j++)
            if (!strcmp(names[j], a->kwn[k]))
                ok = true;
        if (!ok)
            return tmpl_fail(rt, at, "%s got an unexpected keyword argument '%s'", what, a->kwn[k]);
    }
    return 0;
}

/* Python's str.isspace() for one code point. */
bool tmpl_is_space(uint32_t c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

static bool in_chars(const struct tmpl_str *chars, uint32_t c)
{
    for (size_t i = 0; i < chars->len;) {
        uint32_t d;
        i += tmpl_utf8_decode(chars->p + i, chars->len - i, &d);
        if (d == c)
            return true;
    }
    return false;
}

/* Strips from the left (mode&1) and/or right (mode&2): whitespace, or the code points of chars. */
int tmpl_strip(struct tmpl_rt *rt, const struct tmpl_str *s, const struct tmpl_str *chars, int mode, tval *out)
{
    size_t b = 0, e = s->len;
    if (mode & 1)
        while (b < e) {
            uint32_t c;
            size_t n = tmpl_utf8_decode(s->p + b, e - b, &c);
            if (chars ? !in_chars(chars, c) : !tmpl_is_space(c))
                break;
            b += n;
        }
    if (mode & 2)
        while (e > b) {
            size_t k = e - 1;
            while (k > b && ((unsigned char)s->p[k] & 0xC0) == 0x80)
                k--;
            uint32_t c;
            tmpl_utf8_decode(s->p + k, e - k, &c);
            if (chars ? !in_chars(chars, c) : !tmpl_is_space(c))
                break;
            e = k;
        }
    if (b == 0 && e == s->len) {
        *out = tmpl_str_lit((struct tmpl_str *)s);
        return 0;
    }
    return tmpl_str_sub(rt, s, b, e, out);
}

static int need_str(struct tmpl_rt *rt, const struct tnode *at, tval v, const char *what)
{
    if (v.type != TV_STR)
        return tmpl_fail(rt, at, "%s: expected a string argument, got %s", what, tmpl_type_name(v));
    return 0;
}

static int m_strip_any(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out, int mode)
{
    tval chars;
    int rc;
    if ((rc = tmpl_check_args(rt, at, a, 1, NULL, "strip()")))
        return rc;
    bool has = tmpl_arg(a, 0, NULL, &chars) && chars.type != TV_NONE;
    if (has && (rc = need_str(rt, at, chars, "strip()")))
        return rc;
    return tmpl_strip(rt, self.u.s, has ? chars.u.s : NULL, mode, out);
}
static int m_strip(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return m_strip_any(rt, at, self, a, out, 3);
}
static int m_lstrip(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return m_strip_any(rt, at, self, a, out, 1);
}
static int m_rstrip(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return m_strip_any(rt, at, self, a, out, 2);
}

/* A growable list of values in the render arena. */
struct vec {
    tval *v;
    size_t n, cap;
};
static int vec_push(struct tmpl_rt *rt, struct vec *v, tval x)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        tval *nv = tmpl_alloc(&rt->arena, cap * sizeof(tval));
        if (!nv)
            return dream_error_code();
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof(tval));
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = x;
    return 0;
}
static int vec_list(struct tmpl_rt *rt, struct vec *v, tval *out)
{
    int rc = tmpl_list_new(rt, v->n, out);
    if (!rc && v->n)
        memcpy(out->u.l->v, v->v, v->n * sizeof(tval));
    return rc;
}

static int split_impl(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out, bool right)
{
    tval sep, maxv;
    int rc;
    static const char *const names[] = {"sep", "maxsplit", NULL};
    if ((rc = tmpl_check_args(rt, at, a, 2, names, "split()")))
        return rc;
    bool has_sep = tmpl_arg(a, 0, "sep", &sep) && sep.type != TV_NONE;
    int64_t maxsplit = -1;
    if (tmpl_arg(a, 1, "maxsplit", &maxv)) {
        if (maxv.type != TV_INT)
            return tmpl_fail(rt, at, "split(): maxsplit must be an integer");
        maxsplit = maxv.u.i;
    }
    const struct tmpl_str *s = self.u.s;
    struct vec parts = {0};
    tval piece;
    if (has_sep) {
        if ((rc = need_str(rt, at, sep, "split()")))
            return rc;
        size_t n = sep.u.s->len;
        if (n == 0)
            return tmpl_fail(rt, at, "split(): empty separator");
        if (!right) {
            size_t b = 0;
            for (;;) {
                const char *hit = maxsplit != 0 ? memmem(s->p + b, s->len - b, sep.u.s->p, n) : NULL;
                if (!hit)
                    break;
                size_t e = (size_t)(hit - s->p);
                if ((rc = tmpl_str_sub(rt, s, b, e, &piece)) || (rc = vec_push(rt, &parts, piece)))
                    return rc;
                b = e + n;
                if (maxsplit > 0)
                    maxsplit--;
            }
            if ((rc = tmpl_str_sub(rt, s, b, s->len, &piece)) || (rc = vec_push(rt, &parts, piece)))
                return rc;
            return vec_list(rt, &parts, out);
        }
        /* rsplit: collect from the right, then reverse */
        size_t e = s->len;
        for (;;) {
            size_t found = SIZE_MAX;
            if (maxsplit != 0 && e >= n)
                for (size_t k = e - n + 1; k-- > 0;)
                    if (!memcmp(s->p + k, sep.u.s->p, n)) {
                        found = k;
                        break;
                    }
            if (found == SIZE_MAX)
                break;
            if ((rc = tmpl_str_sub(rt, s, found + n, e, &piece)) || (rc = vec_push(rt, &parts, piece)))
                return rc;
            e = found;
            if (maxsplit > 0)
                maxsplit--;
        }
        if ((rc = tmpl_str_sub(rt, s, 0, e, &piece)) || (rc = vec_push(rt, &parts, piece)))
            return rc;
        for (size_t i = 0; i < parts.n / 2; i++) {
            tval t = parts.v[i];
            parts.v[i] = parts.v[parts.n - 1 - i];
            parts.v[parts.n - 1 - i] = t;
        }
        return vec_list(rt, &parts, out);
    }
    /* whitespace split: runs of whitespace separate, empty strings dropped */
    if (right) {
        /* rare: rsplit() on whitespace with maxsplit; treat like split when maxsplit < 0 */
        if (maxsplit >= 0)
            return tmpl_fail(rt, at, "rsplit() on whitespace with maxsplit is not supported");
    }
    size_t i = 0;
    while (i < s->len) {
        uint32_t c;
        size_t k = tmpl_utf8_decode(s->p + i, s->len - i, &c);
        if (tmpl_is_space(c)) {
            i += k;
            continue;
        }
        size_t b = i;
        if (maxsplit == 0) {
            size_t e = s->len;
            while (e > b) {
                size_t q = e - 1;
                while (q > b && ((unsigned char)s->p[q] & 0xC0) == 0x80)
                    q--;
                uint32_t d;
                tmpl_utf8_decode(s->p + q, e - q, &d);
                if (!tmpl_is_space(d))
                    break;
                e = q;
            }
            if ((rc = tmpl_str_sub(rt, s, b, e, &piece)) || (rc = vec_push(rt, &parts, piece)))
                return rc;
            break;
        }
        while (i < s->len) {
            k = tmpl_utf8_decode(s->p + i, s->len - i, &c);
            if (tmpl_is_space(c))
                break;
            i += k;
        }
        if ((rc = tmpl_str_sub(rt, s, b, i, &piece)) || (rc = vec_push(rt, &parts, piece)))
            return rc;
        if (maxsplit > 0)
            maxsplit--;
    }
    return vec_list(rt, &parts, out);
}
static int m_split(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return split_impl(rt, at, self, a, out, false);
}
static int m_rsplit(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return split_impl(rt, at, self, a, out, true);
}

static int affix(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out, bool end)
{
    tval p;
    if (!tmpl_arg(a, 0, NULL, &p))
        return tmpl_fail(rt, at, "%s() takes at least 1 argument", end ? "endswith" : "startswith");
    const struct tmpl_str *s = self.u.s;
    size_t n = p.type == TV_LIST ? p.u.l->n : 1;
    *out = tv_bool(false);
    for (size_t i = 0; i < n; i++) {
        tval x = p.type == TV_LIST ? p.u.l->v[i] : p;
        if (x.type != TV_STR)
            return tmpl_fail(rt, at, "%s(): first arg must be str or a tuple of str, not %s",
                             end ? "endswith" : "startswith", tmpl_type_name(x));
        size_t k = x.u.s->len;
        if (k <= s->len && !memcmp(end ? s->p + s->len - k : s->p, x.u.s->p, k))
            *out = tv_bool(true);
    }
    return 0;
}
static int m_startswith(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return affix(rt, at, self, a, out, false);
}
static int m_endswith(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return affix(rt, at, self, a, out, true);
}

/* str.replace(old, new[, count]) keeping caller-data spans of both kept text and `new`. */
int tmpl_replace(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_str *s, tval oldv, tval newv,
                 int64_t count, tval *out)
{
    int rc;
    if ((rc = need_str(rt, at, oldv, "replace()")) || (rc = need_str(rt, at, newv, "replace()")))
        return rc;
    const struct tmpl_str *o = oldv.u.s, *nw = newv.u.s;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    size_t b = 0;
    if (o->len == 0) {
        /* inserts `new` before every code point and at the end */
        while (!rc && count != 0) {
            rc = tmpl_sb_str(&sb, nw);
            if (count > 0)
                count--;
            if (b >= s->len)
                break;
            uint32_t c;
            size_t k = tmpl_utf8_decode(s->p + b, s->len - b, &c);
            if (!rc)
                rc = tmpl_sb_sub(&sb, s, b, b + k);
            b += k;
        }
    } else {
        while (!rc && count != 0) {
            const char *hit = memmem(s->p + b, s->len - b, o->p, o->len);
            if (!hit)
                break;
            size_t e = (size_t)(hit - s->p);
            rc = tmpl_sb_sub(&sb, s, b, e);
            if (!rc)
                rc = tmpl_sb_str(&sb, nw);
            b = e + o->len;
            if (count > 0)
                count--;
        }
    }
    if (!rc)
        rc = tmpl_sb_sub(&sb, s, b, s->len);
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

static int m_replace(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval o, n, c;
    if (!tmpl_arg(a, 0, NULL, &o) || !tmpl_arg(a, 1, NULL, &n))
        return tmpl_fail(rt, at, "replace() takes at least 2 arguments");
    int64_t count = -1;
    if (tmpl_arg(a, 2, "count", &c)) {
        if (c.type != TV_INT)
            return tmpl_fail(rt, at, "replace(): count must be an integer");
        count = c.u.i;
    }
    return tmpl_replace(rt, at, self.u.s, o, n, count, out);
}

/* Case mapping: ASCII letters plus Latin-1, Greek and Cyrillic basic ranges. */
uint32_t tmpl_upper_cp(uint32_t c)
{
    if (c >= 'a' && c <= 'z')
        return c - 32;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7))
        return c - 32;
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2)
        return c - 32;
    if (c >= 0x430 && c <= 0x44F)
        return c - 32;
    if (c >= 0x450 && c <= 0x45F)
        return c - 80;
    return c;
}
uint32_t tmpl_lower_cp(uint32_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c + 32;
    if ((c >= 0xC0 && c <= 0xDE && c != 0xD7))
        return c + 32;
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2)
        return c + 32;
    if (c >= 0x410 && c <= 0x42F)
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    return c;
}
bool tmpl_is_alpha(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c != 0xD7 && c != 0xF7 && !tmpl_is_space(c));
}

size_t tmpl_put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Maps case: mode 'u' upper, 'l' lower, 'c' capitalize, 't' Python title, 'j' Jinja2 title. */
int tmpl_case(struct tmpl_rt *rt, const struct tmpl_str *s, int mode, tval *out)
{
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    bool data = tmpl_str_has_data(s);
    bool prev_alpha = false, word_start = true;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->len;) {
        uint32_t c;
        size_t k = tmpl_utf8_decode(s->p + i, s->len - i, &c);
        uint32_t m = c;
        switch (mode) {
        case 'u': m = tmpl_upper_cp(c); break;
        case 'l': m = tmpl_lower_cp(c); break;
        case 'c': m = i == 0 ? tmpl_upper_cp(c) : tmpl_lower_cp(c); break;
        case 't':
            m = prev_alpha ? tmpl_lower_cp(c) : tmpl_upper_cp(c);
            prev_alpha = tmpl_is_alpha(c);
            break;
        default: /* Jinja2 title: words begin after runs of -, whitespace, ( { [ < */
            if (c == '-' || tmpl_is_space(c) || c == '(' || c == '{' || c == '[' || c == '<') {
                word_start = true;
            } else {
                m = word_start ? tmpl_upper_cp(c) : tmpl_lower_cp(c);
                word_start = false;
            }
        }
        char buf[4];
        size_t n = (c == 0xFFFD && k == 1) ? 0 : tmpl_put_utf8(buf, m);
        rc = n ? tmpl_sb_put(&sb, buf, n, data) : tmpl_sb_put(&sb, s->p + i, k, data);
        i += k;
    }
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

static int m_upper(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return tmpl_case(rt, self.u.s, 'u', out);
}
static int m_lower(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return tmpl_case(rt, self.u.s, 'l', out);
}
static int m_title(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return tmpl_case(rt, self.u.s, 't', out);
}
static int m_capitalize(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return tmpl_case(rt, self.u.s, 'c', out);
}

static int m_find(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval sub;
    int rc;
    if (!tmpl_arg(a, 0, NULL, &sub) || (rc = need_str(rt, at, sub, "find()")))
        return tmpl_fail(rt, at, "find() takes a string argument");
    const char *hit = memmem(self.u.s->p, self.u.s->len, sub.u.s->p, sub.u.s->len);
    *out = tv_int(hit ? (int64_t)tmpl_utf8_len(self.u.s->p, (size_t)(hit - self.u.s->p)) : -1);
    return 0;
}

static int m_count(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval sub;
    if (!tmpl_arg(a, 0, NULL, &sub))
        return tmpl_fail(rt, at, "count() takes exactly one argument");
    int64_t n = 0;
    if (self.type == TV_LIST) {
        for (size_t i = 0; i < self.u.l->n; i++)
            n += tmpl_equal(self.u.l->v[i], sub);
    } else {
        if (sub.type != TV_STR)
            return tmpl_fail(rt, at, "count(): must be str, not %s", tmpl_type_name(sub));
        if (sub.u.s->len == 0) {
            n = (int64_t)tmpl_utf8_len(self.u.s->p, self.u.s->len) + 1;
        } else {
            size_t b = 0;
            const char *hit;
            while ((hit = memmem(self.u.s->p + b, self.u.s->len - b, sub.u.s->p, sub.u.s->len))) {
                n++;
                b = (size_t)(hit - self.u.s->p) + sub.u.s->len;
            }
        }
    }
    *out = tv_int(n);
    return 0;
}

static int m_join(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval seq;
    struct tmpl_list *items;
    int rc;
    if (!tmpl_arg(a, 0, NULL, &seq))
        return tmpl_fail(rt, at, "join() takes exactly one argument");
    if ((rc = tmpl_iterate(rt, at, seq, &items)))
        return rc;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    for (size_t i = 0; !rc && i < items->n; i++) {
        if (items->v[i].type != TV_STR) {
            tmpl_sb_free(&sb);
            return tmpl_fail(rt, at, "sequence item %zu: expected str instance, %s found", i, tmpl_type_name(items->v[i]));
        }
        if (i)
            rc = tmpl_sb_str(&sb, self.u.s);
        if (!rc)
            rc = tmpl_sb_str(&sb, items->v[i].u.s);
    }
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

/* str.format: {} {0} {name}, with !r / !s conversions; format specs are not supported. */
static int m_format(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    const struct tmpl_str *s = self.u.s;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    size_t auto_idx = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->len; i++) {
        char c = s->p[i];
        if (c == '}' ) {
            if (i + 1 < s->len && s->p[i + 1] == '}') {
                rc = tmpl_sb_put(&sb, "}", 1, false);
                i++;
                continue;
            }
            rc = tmpl_fail(rt, at, "format(): single '}' encountered in format string");
            break;
        }
        if (c != '{') {
            rc = tmpl_sb_sub(&sb, s, i, i + 1);
            continue;
        }
        if (i + 1 < s->len && s->p[i + 1] == '{') {
            rc = tmpl_sb_put(&sb, "{", 1, false);
            i++;
            continue;
        }
        const char *close = memchr(s->p + i, '}', s->len - i);
        if (!close) {
            rc = tmpl_fail(rt, at, "format(): single '{' encountered in format string");
            break;
        }
        size_t fb = i + 1, fe = (size_t)(close - s->p);
        char conv = 0;
        for (size_t k = fb; k < fe; k++) {
            if (s->p[k] == '!' && k + 1 < fe) {
                conv = s->p[k + 1];
                fe = k;
                break;
            }
            if (s->p[k] == ':') {
                rc = tmpl_fail(rt, at, "format(): format specifications are not supported");
                break;
            }
        }
        if (rc)
            break;
        tval v;
        bool ok;
        if (fe == fb) {
            ok = tmpl_arg(a, auto_idx++, NULL, &v);
        } else if (s->p[fb] >= '0' && s->p[fb] <= '9') {
            ok = tmpl_arg(a, (size_t)strtoul(s->p + fb, NULL, 10), NULL, &v);
        } else {
            char name[128];
            size_t n = fe - fb < sizeof(name) - 1 ? fe - fb : sizeof(name) - 1;
            memcpy(name, s->p + fb, n);
            name[n] = 0;
            ok = false;
            for (size_t k = 0; k < a->nkw; k++)
                if (!strcmp(a->kwn[k], name)) {
                    v = a->kwv[k];
                    ok = true;
                }
        }
        if (!ok) {
            rc = tmpl_fail(rt, at, "format(): replacement field has no matching argument");
            break;
        }
        rc = conv == 'r' ? tmpl_write_repr(rt, &sb, v) : tmpl_write_str(rt, &sb, v);
        i = (size_t)(close - s->p);
    }
    if (rc) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

static int m_splitlines(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out);

static int m_isx(struct tmpl_rt *rt, tval self, tval *out, int kind)
{
    const struct tmpl_str *s = self.u.s;
    bool r = s->len > 0, cased = false;
    for (size_t i = 0; i < s->len && r;) {
        uint32_t c;
        i += tmpl_utf8_decode(s->p + i, s->len - i, &c);
        switch (kind) {
        case 'd': r = c >= '0' && c <= '9'; break;
        case 'a': r = tmpl_is_alpha(c); break;
        case 'n': r = tmpl_is_alpha(c) || (c >= '0' && c <= '9'); break;
        case 's': r = tmpl_is_space(c); break;
        case 'u':
            if (tmpl_lower_cp(c) != c)
                cased = true;
            else if (tmpl_upper_cp(c) != c)
                r = false;
            break;
        default:
            if (tmpl_upper_cp(c) != c)
                cased = true;
            else if (tmpl_lower_cp(c) != c)
                r = false;
        }
    }
    if (kind == 'u' || kind == 'l')
        r = r && cased;
    *out = tv_bool(r);
    (void)rt;
    return 0;
}
static int m_isdigit(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 'd'); }
static int m_isalpha(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 'a'); }
static int m_isalnum(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 'n'); }
static int m_isspace(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 's'); }
static int m_isupper(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 'u'); }
static int m_islower(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_isx(rt, self, out, 'l'); }

static int m_removeaffix(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out, bool suffix)
{
    tval x;
    int rc;
    if (!tmpl_arg(a, 0, NULL, &x) || (rc = need_str(rt, at, x, "removeprefix()")))
        return tmpl_fail(rt, at, "removeprefix()/removesuffix() take one string argument");
    const struct tmpl_str *s = self.u.s;
    size_t k = x.u.s->len;
    if (k <= s->len && !memcmp(suffix ? s->p + s->len - k : s->p, x.u.s->p, k))
        return suffix ? tmpl_str_sub(rt, s, 0, s->len - k, out) : tmpl_str_sub(rt, s, k, s->len, out);
    *out = self;
    return 0;
}
static int m_removeprefix(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_removeaffix(rt, at, self, a, out, false); }
static int m_removesuffix(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return m_removeaffix(rt, at, self, a, out, true); }

/* ---- dict methods ---- */

static int m_get(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval key, def = tv_none();
    if (!tmpl_arg(a, 0, NULL, &key))
        return tmpl_fail(rt, at, "get() takes at least 1 argument");
    tmpl_arg(a, 1, NULL, &def);
    tval *v = tmpl_dict_get(self.u.d, key);
    *out = v ? *v : def;
    return 0;
}

static int dict_view(struct tmpl_rt *rt, tval self, tval *out, int which)
{
    struct tmpl_dict *d = self.u.d;
    int rc = tmpl_list_new(rt, d->n, out);
    for (size_t i = 0; !rc && i < d->n; i++) {
        if (which == 'k') {
            out->u.l->v[i] = d->k[i];
        } else if (which == 'v') {
            out->u.l->v[i] = d->v[i];
        } else {
            tval pair;
            if ((rc = tmpl_list_new(rt, 2, &pair)))
                break;
            pair.flags |= TVF_TUPLE;
            pair.u.l->v[0] = d->k[i];
            pair.u.l->v[1] = d->v[i];
            out->u.l->v[i] = pair;
        }
    }
    return rc;
}
static int m_items(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return dict_view(rt, self, out, 'i'); }
static int m_keys(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return dict_view(rt, self, out, 'k'); }
static int m_values(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out) { return dict_view(rt, self, out, 'v'); }
static int m_copy(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    if (self.type == TV_LIST) {
        int rc = tmpl_list_new(rt, self.u.l->n, out);
        if (!rc && self.u.l->n)
            memcpy(out->u.l->v, self.u.l->v, self.u.l->n * sizeof(tval));
        return rc;
    }
    int rc = tmpl_dict_new(rt, self.u.d->n, out);
    for (size_t i = 0; !rc && i < self.u.d->n; i++)
        rc = tmpl_dict_set(rt, out->u.d, self.u.d->k[i], self.u.d->v[i]);
    return rc;
}

static int m_index(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval x;
    if (!tmpl_arg(a, 0, NULL, &x))
        return tmpl_fail(rt, at, "index() takes at least 1 argument");
    for (size_t i = 0; i < self.u.l->n; i++)
        if (tmpl_equal(self.u.l->v[i], x)) {
            *out = tv_int((int64_t)i);
            return 0;
        }
    return tmpl_fail(rt, at, "index(): value is not in list");
}

static int m_cycle(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    if (a->npos == 0)
        return tmpl_fail(rt, at, "no items for cycling given");
    *out = a->pos[self.u.loop->index0 % a->npos];
    return 0;
}

struct method_def {
    uint8_t type;
    const char *name;
    tmpl_builtin_fn fn; /* NULL: exists but refused (mutates) */
};

static const struct method_def methods[] = {
    {TV_STR, "strip", m_strip},
    {TV_STR, "lstrip", m_lstrip},
    {TV_STR, "rstrip", m_rstrip},
    {TV_STR, "split", m_split},
    {TV_STR, "rsplit", m_rsplit},
    {TV_STR, "startswith", m_startswith},
    {TV_STR, "endswith", m_endswith},
    {TV_STR, "replace", m_replace},
    {TV_STR, "upper", m_upper},
    {TV_STR, "lower", m_lower},
    {TV_STR, "title", m_title},
    {TV_STR, "capitalize", m_capitalize},
    {TV_STR, "find", m_find},
    {TV_STR, "count", m_count},
    {TV_STR, "join", m_join},
    {TV_STR, "format", m_format},
    {TV_STR, "splitlines", m_splitlines},
    {TV_STR, "isdigit", m_isdigit},
    {TV_STR, "isalpha", m_isalpha},
    {TV_STR, "isalnum", m_isalnum},
    {TV_STR, "isspace", m_isspace},
    {TV_STR, "isupper", m_isupper},
    {TV_STR, "islower", m_islower},
    {TV_STR, "removeprefix", m_removeprefix},
    {TV_STR, "removesuffix", m_removesuffix},
    {TV_DICT, "get", m_get},
    {TV_DICT, "items", m_items},
    {TV_DICT, "keys", m_keys},
    {TV_DICT, "values", m_values},
    {TV_DICT, "copy", m_copy},
    {TV_DICT, "pop", NULL},
    {TV_DICT, "popitem", NULL},
    {TV_DICT, "setdefault", NULL},
    {TV_DICT, "update", NULL},
    {TV_DICT, "clear", NULL},
    {TV_LIST, "index", m_index},
    {TV_LIST, "count", m_count},
    {TV_LIST, "copy", m_copy},
    {TV_LIST, "append", NULL},
    {TV_LIST, "extend", NULL},
    {TV_LIST, "insert", NULL},
    {TV_LIST, "pop", NULL},
    {TV_LIST, "remove", NULL},
    {TV_LIST, "reverse", NULL},
    {TV_LIST, "sort", NULL},
    {TV_LIST, "clear", NULL},
    {TV_LOOP, "cycle", m_cycle},
};

int tmpl_get_method(struct tmpl_rt *rt, tval obj, const char *name, tval *out, bool *found)
{
    *found = false;
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        if (methods[i].type != obj.type || strcmp(methods[i].name, name))
            continue;
        struct tmpl_func *fn = tmpl_alloc(&rt->arena, sizeof(*fn));
        if (!fn)
            return dream_error_code();
        fn->kind = methods[i].fn ? TF_METHOD : TF_UNSAFE;
        fn->name = methods[i].name;
        fn->fn = methods[i].fn;
        fn->self = obj;
        memset(out, 0, sizeof(*out));
        out->type = TV_FUNC;
        out->u.fn = fn;
        *found = true;
        return 0;
    }
    return 0;
}

/* ---- globals ---- */

static int g_range(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    int64_t v[3] = {0, 0, 1};
    if (a->npos < 1 || a->npos > 3 || a->nkw)
        return tmpl_fail(rt, at, "range expected 1 to 3 integer arguments");
    for (size_t i = 0; i < a->npos; i++) {
        if (a->pos[i].type != TV_INT && a->pos[i].type != TV_BOOL)
            return tmpl_fail(rt, at, "range(): '%s' object cannot be interpreted as an integer", tmpl_type_name(a->pos[i]));
    }
    int64_t x[3];
    for (size_t i = 0; i < a->npos; i++)
        x[i] = a->pos[i].type == TV_INT ? a->pos[i].u.i : a->pos[i].u.b;
    if (a->npos == 1) {
        v[1] = x[0];
    } else {
        v[0] = x[0];
        v[1] = x[1];
        if (a->npos == 3)
            v[2] = x[2];
    }
    if (v[2] == 0)
        return tmpl_fail(rt, at, "range() arg 3 must not be zero");
    __int128 span = v[2] > 0 ? (__int128)v[1] - v[0] : (__int128)v[0] - v[1];
    __int128 step = v[2] > 0 ? v[2] : -(__int128)v[2];
    __int128 n = span > 0 ? (span + step - 1) / step : 0;
    if (n > 100000)
        return tmpl_fail(rt, at, "range too big, the sandbox allows at most 100000 items");
    int rc = tmpl_list_new(rt, (size_t)n, out);
    for (size_t i = 0; !rc && i < (size_t)n; i++)
        out->u.l->v[i] = tv_int(v[0] + (int64_t)i * v[2]);
    return rc;
}

static int dict_from_args(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_args *a, tval *out)
{
    int rc = tmpl_dict_new(rt, 0, out);
    if (rc)
        return rc;
    if (a->npos > 1)
        return tmpl_fail(rt, at, "dict expected at most 1 argument, got %zu", a->npos);
    if (a->npos == 1) {
        tval src = a->pos[0];
        if (src.type == TV_DICT) {
            for (size_t i = 0; !rc && i < src.u.d->n; i++)
                rc = tmpl_dict_set(rt, out->u.d, src.u.d->k[i], src.u.d->v[i]);
        } else {
            struct tmpl_list *items;
            if ((rc = tmpl_iterate(rt, at, src, &items)))
                return rc;
            for (size_t i = 0; !rc && i < items->n; i++) {
                tval p = items->v[i];
                if (p.type != TV_LIST || p.u.l->n != 2)
                    return tmpl_fail(rt, at, "dictionary update sequence element #%zu has the wrong length", i);
                rc = tmpl_dict_set(rt, out->u.d, p.u.l->v[0], p.u.l->v[1]);
            }
        }
    }
    for (size_t k = 0; !rc && k < a->nkw; k++) {
        tval key;
        if (!(rc = tmpl_str_new(rt, a->kwn[k], strlen(a->kwn[k]), false, &key)))
            rc = tmpl_dict_set(rt, out->u.d, key, a->kwv[k]);
    }
    return rc;
}

static int g_dict(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    return dict_from_args(rt, at, a, out);
}

static int g_namespace(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    int rc = dict_from_args(rt, at, a, out);
    if (!rc)
        out->flags |= TVF_NS;
    return rc;
}

static int g_raise(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval msg;
    if (!tmpl_arg(a, 0, NULL, &msg))
        return tmpl_fail(rt, at, "raise_exception() called without a message");
    tval s;
    int rc = tmpl_to_str(rt, msg, &s);
    if (rc)
        return rc;
    return tmpl_fail(rt, at, "the template raised an error: %s", s.u.s->p);
}

static int g_strftime_now(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval fmt;
    if (!tmpl_arg(a, 0, NULL, &fmt) || fmt.type != TV_STR)
        return tmpl_fail(rt, at, "strftime_now() takes a format string");
    struct tm tm;
    time_t now = rt->params->use_fixed_now ? (time_t)rt->params->fixed_now : time(NULL);
    if (rt->params->use_fixed_now ? !gmtime_r(&now, &tm) : !localtime_r(&now, &tm))
        return tmpl_fail(rt, at, "strftime_now(): cannot convert the time");
    if (fmt.u.s->len == 0)
        return tmpl_str_new(rt, "", 0, false, out);
    char buf[1024];
    /* strftime cannot tell "empty result" from "too small"; a leading marker does */
    char f2[512];
    if (fmt.u.s->len > sizeof(f2) - 2)
        return tmpl_fail(rt, at, "strftime_now(): format too long");
    f2[0] = 'x';
    memcpy(f2 + 1, fmt.u.s->p, fmt.u.s->len + 1);
    size_t n = strftime(buf, sizeof(buf), f2, &tm);
    if (n == 0)
        return tmpl_fail(rt, at, "strftime_now(): result too long");
    return tmpl_str_new(rt, buf + 1, n - 1, false, out);
}

struct global_def {
    const char *name;
    tmpl_builtin_fn fn;
};

static const struct global_def globals[] = {
    {"range", g_range},
    {"dict", g_dict},
    {"namespace", g_namespace},
    {"raise_exception", g_raise},
    {"strftime_now", g_strftime_now},
};

bool tmpl_get_global(struct tmpl_rt *rt, const char *name, tval *out)
{
    for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++) {
        if (strcmp(globals[i].name, name))
            continue;
        struct tmpl_func *fn = tmpl_alloc(&rt->arena, sizeof(*fn));
        if (!fn) {
            dream_error_clear();
            return false;
        }
        fn->kind = TF_BUILTIN;
        fn->name = globals[i].name;
        fn->fn = globals[i].fn;
        memset(out, 0, sizeof(*out));
        out->type = TV_FUNC;
        out->u.fn = fn;
        return true;
    }
    return false;
}

/* Python's str.splitlines(): \n, \r\n, \r, \v, \f, \x1c-\x1e, \x85, U+2028, U+2029. */
int tmpl_splitlines(struct tmpl_rt *rt, const struct tmpl_str *s, bool keepends, tval *out)
{
    struct vec parts = {0};
    size_t b = 0, i = 0;
    int rc;
    tval piece;
    while (i < s->len) {
        uint32_t c;
        size_t k = tmpl_utf8_decode(s->p + i, s->len - i, &c);
        bool nl = c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E) || c == 0x85 ||
                  c == 0x2028 || c == 0x2029;
        if (!nl) {
            i += k;
            continue;
        }
        size_t e = i;
        i += k;
        if (c == '\r' && i < s->len && s->p[i] == '\n')
            i++;
        if ((rc = tmpl_str_sub(rt, s, b, keepends ? i : e, &piece)) || (rc = vec_push(rt, &parts, piece)))
            return rc;
        b = i;
    }
    if (b < s->len && ((rc = tmpl_str_sub(rt, s, b, s->len, &piece)) || (rc = vec_push(rt, &parts, piece))))
        return rc;
    return vec_list(rt, &parts, out);
}

static int m_splitlines(struct tmpl_rt *rt, const struct tnode *at, tval self, struct tmpl_args *a, tval *out)
{
    tval k;
    bool keep = tmpl_arg(a, 0, "keepends", &k) && tmpl_truthy(k);
    return tmpl_splitlines(rt, self.u.s, keep, out);
}
