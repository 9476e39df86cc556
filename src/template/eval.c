/*
 * eval.c — evaluates expressions and executes statements with Jinja2's semantics: scopes
 * (for and macro bodies are scopes, if is not), undefined values that print as "" but fail
 * when used, attribute lookup that falls back to item lookup, loop variables, macros with
 * caller(), and the render limits.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

enum { EXEC_BREAK = 1, EXEC_CONTINUE = 2 };

/* Bounds the C stack used by nested evaluation (macro recursion included). */
#define TMPL_MAX_EVAL_DEPTH 2000

static int vfail(struct tmpl_rt *rt, int code, const struct tnode *at, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!at)
        return dream_error_set(code, "template: %s", msg);
    int line, col;
    tmpl_linecol(rt->t->src, rt->t->len, at->pos, &line, &col);
    return dream_error_set(code, "template:%d:%d: %s", line, col, msg);
}

int tmpl_fail(struct tmpl_rt *rt, const struct tnode *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(rt, DREAM_EFORMAT, at, fmt, ap);
    va_end(ap);
    return rc;
}

int tmpl_fail_code(struct tmpl_rt *rt, int code, const struct tnode *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfail(rt, code, at, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_undefined(struct tmpl_rt *rt, const struct tnode *at, tval u)
{
    if (u.u.s)
        return tmpl_fail(rt, at, "%s", u.u.s->p);
    return tmpl_fail(rt, at, "value is undefined");
}

/* An undefined value that remembers why (for the message when it is used). */
static tval undef_hint(struct tmpl_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tval undef_hint(struct tmpl_rt *rt, const char *fmt, ...)
{
    tval u = tv_undef();
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tval s;
    if (tmpl_str_new(rt, msg, strlen(msg), false, &s) == 0)
        u.u.s = s.u.s;
    else
        dream_error_clear();
    return u;
}

/* ---- scopes ---- */

static struct tmpl_scope *scope_new(struct tmpl_rt *rt, struct tmpl_scope *parent)
{
    struct tmpl_scope *sc = tmpl_alloc(&rt->arena, sizeof(*sc));
    if (sc)
        sc->parent = parent;
    return sc;
}

static int scope_set(struct tmpl_rt *rt, struct tmpl_scope *sc, const char *name, tval v)
{
    for (size_t i = 0; i < sc->n; i++)
        if (!strcmp(sc->vars[i].name, name)) {
            sc->vars[i].v = v;
            return 0;
        }
    if (sc->n == sc->cap) {
        size_t cap = sc->cap ? sc->cap * 2 : 8;
        struct tmpl_var *nv = tmpl_alloc(&rt->arena, cap * sizeof(*nv));
        if (!nv)
            return dream_error_code();
        if (sc->n)
            memcpy(nv, sc->vars, sc->n * sizeof(*nv));
        sc->vars = nv;
        sc->cap = cap;
    }
    sc->vars[sc->n].name = name;
    sc->vars[sc->n].v = v;
    sc->n++;
    return 0;
}

static int lookup(struct tmpl_rt *rt, struct tmpl_scope *sc, const char *name, tval *out)
{
    for (; sc; sc = sc->parent)
        for (size_t i = 0; i < sc->n; i++)
            if (!strcmp(sc->vars[i].name, name)) {
                *out = sc->vars[i].v;
                return 0;
            }
    tval *v = tmpl_dict_gets(rt->ctx, name);
    if (v) {
        *out = *v;
        return 0;
    }
    if (tmpl_get_global(rt, name, out))
        return 0;
    *out = undef_hint(rt, "'%s' is undefined", name);
    return 0;
}

/* ---- attribute and item access ---- */

static int loop_attr(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_loop *lp, const char *name, tval *out)
{
    size_t n = lp->items->n, i = lp->index0;
    if (!strcmp(name, "index"))
        *out = tv_int((int64_t)i + 1);
    else if (!strcmp(name, "index0"))
        *out = tv_int((int64_t)i);
    else if (!strcmp(name, "revindex"))
        *out = tv_int((int64_t)(n - i));
    else if (!strcmp(name, "revindex0"))
        *out = tv_int((int64_t)(n - i - 1));
    else if (!strcmp(name, "first"))
        *out = tv_bool(i == 0);
    else if (!strcmp(name, "last"))
        *out = tv_bool(i + 1 == n);
    else if (!strcmp(name, "length"))
        *out = tv_int((int64_t)n);
    else if (!strcmp(name, "depth"))
        *out = tv_int(lp->depth + 1);
    else if (!strcmp(name, "depth0"))
        *out = tv_int(lp->depth);
    else if (!strcmp(name, "previtem"))
        *out = i > 0 ? lp->items->v[i - 1] : undef_hint(rt, "there is no previous item");
    else if (!strcmp(name, "nextitem"))
        *out = i + 1 < n ? lp->items->v[i + 1] : undef_hint(rt, "there is no next item");
    else if (!strcmp(name, "cycle")) {
        bool found;
        int rc = tmpl_get_method(rt, (tval){.type = TV_LOOP, .u.loop = lp}, "cycle", out, &found);
        if (rc)
            return rc;
    } else
        *out = undef_hint(rt, "'LoopContext' object has no attribute '%s'", name);
    (void)at;
    return 0;
}

int tmpl_getattr(struct tmpl_rt *rt, const struct tnode *at, tval obj, const char *name, tval *out)
{
    bool found = false;
    int rc;
    switch (obj.type) {
    case TV_UNDEF: return fail_undefined(rt, at, obj);
    case TV_LOOP: return loop_attr(rt, at, obj.u.loop, name, out);
    case TV_DICT:
        if (!(obj.flags & TVF_NS)) {
            if ((rc = tmpl_get_method(rt, obj, name, out, &found)) || found)
                return rc;
        }
        {
            tval *v = tmpl_dict_gets(obj.u.d, name);
            if (v) {
                *out = *v;
                return 0;
            }
        }
        *out = undef_hint(rt, "'%s' has no attribute '%s'", obj.flags & TVF_NS ? "Namespace" : "dict object", name);
        return 0;
    case TV_STR:
    case TV_LIST:
        if ((rc = tmpl_get_method(rt, obj, name, out, &found)) || found)
            return rc;
        break;
    default: break;
    }
    *out = undef_hint(rt, "'%s object' has no attribute '%s'", tmpl_type_name(obj), name);
    return 0;
}

int tmpl_getitem(struct tmpl_rt *rt, const struct tnode *at, tval obj, tval key, tval *out)
{
    switch (obj.type) {
    case TV_UNDEF: return fail_undefined(rt, at, obj);
    case TV_DICT: {
        tval *v = tmpl_dict_get(obj.u.d, key);
        if (v) {
            *out = *v;
            return 0;
        }
        break;
    }
    case TV_LIST:
    case TV_STR:
        if (obj.flags & TVF_GEN)
            return tmpl_fail(rt, at, "'generator' object is not subscriptable");
        if (key.type == TV_INT || key.type == TV_BOOL) {
            int64_t i = key.type == TV_INT ? key.u.i : key.u.b;
            if (obj.type == TV_LIST) {
                int64_t n = (int64_t)obj.u.l->n;
                if (i < 0)
                    i += n;
                if (i >= 0 && i < n) {
                    *out = obj.u.l->v[i];
                    return 0;
                }
            } else {
                const struct tmpl_str *s = obj.u.s;
                int64_t n = (int64_t)tmpl_utf8_len(s->p, s->len);
                if (i < 0)
                    i += n;
                if (i >= 0 && i < n) {
                    size_t b = tmpl_utf8_offset(s->p, s->len, (size_t)i);
                    size_t e = b + tmpl_utf8_offset(s->p + b, s->len - b, 1);
                    return tmpl_str_sub(rt, s, b, e, out);
                }
            }
            *out = undef_hint(rt, "index %" PRId64 " out of range", key.type == TV_INT ? key.u.i : key.u.b);
            return 0;
        }
        break;
    case TV_LOOP:
        if (key.type == TV_STR)
            return loop_attr(rt, at, obj.u.loop, key.u.s->p, out);
        break;
    default: break;
    }
    if (key.type == TV_STR && obj.type != TV_DICT)
        return tmpl_getattr(rt, at, obj, key.u.s->p, out);
    if (key.type == TV_STR && !(obj.flags & TVF_NS)) {
        bool found;
        int rc = tmpl_get_method(rt, obj, key.u.s->p, out, &found);
        if (rc || found)
            return rc;
    }
    if (key.type == TV_STR)
        *out = undef_hint(rt, "'%s object' has no attribute '%s'", tmpl_type_name(obj), key.u.s->p);
    else
        *out = undef_hint(rt, "'%s object' has no item of that key", tmpl_type_name(obj));
    return 0;
}

int tmpl_iterate(struct tmpl_rt *rt, const struct tnode *at, tval v, struct tmpl_list **out)
{
    static struct tmpl_list empty;
    tval l;
    int rc;
    switch (v.type) {
    case TV_LIST:
        if (v.flags & TVF_GEN) {
            struct tmpl_list *rest = tmpl_alloc(&rt->arena, sizeof(*rest));
            if (!rest)
                return dream_error_code();
            rest->n = v.u.l->n - v.u.l->pos;
            rest->v = v.u.l->v + v.u.l->pos;
            v.u.l->pos = v.u.l->n;
            *out = rest;
            return 0;
        }
        *out = v.u.l;
        return 0;
    case TV_UNDEF: *out = &empty; return 0;
    case TV_DICT:
        if (v.flags & TVF_NS)
            break;
        if ((rc = tmpl_list_new(rt, v.u.d->n, &l)))
            return rc;
        memcpy(l.u.l->v, v.u.d->k, v.u.d->n * sizeof(tval));
        *out = l.u.l;
        return 0;
    case TV_STR: {
        const struct tmpl_str *s = v.u.s;
        size_t n = tmpl_utf8_len(s->p, s->len);
        if ((rc = tmpl_list_new(rt, n, &l)))
            return rc;
        size_t off = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t cp;
            size_t k = tmpl_utf8_decode(s->p + off, s->len - off, &cp);
            if ((rc = tmpl_str_sub(rt, s, off, off + k, &l.u.l->v[i])))
                return rc;
            off += k;
        }
        *out = l.u.l;
        return 0;
    }
    default: break;
    }
    return tmpl_fail(rt, at, "'%s' object is not iterable", tmpl_type_name(v));
}

/* ---- operators ---- */

static bool numeric(tval v) { return v.type == TV_INT || v.type == TV_FLOAT || v.type == TV_BOOL; }
static double fnum(tval v) { return v.type == TV_FLOAT ? v.u.f : v.type == TV_INT ? (double)v.u.i : (double)v.u.b; }
static int64_t inum(tval v) { return v.type == TV_INT ? v.u.i : v.type == TV_BOOL ? (int64_t)v.u.b : 0; }

static int repeat(struct tmpl_rt *rt, const struct tnode *at, tval seq, int64_t times, tval *out)
{
    if (times < 0)
        times = 0;
    int rc;
    if (seq.type == TV_STR) {
        if (seq.u.s->len && (uint64_t)times > rt->params->limits.max_output_bytes / seq.u.s->len)
            return tmpl_fail_code(rt, DREAM_ELIMIT, at, "string repetition exceeds the output limit");
        struct tmpl_sb sb;
        tmpl_sb_init(rt, &sb);
        for (int64_t i = 0; i < times; i++)
            if ((rc = tmpl_sb_str(&sb, seq.u.s))) {
                tmpl_sb_free(&sb);
                return rc;
            }
        return tmpl_sb_finish(rt, &sb, out);
    }
    size_t n = seq.u.l->n;
    if (n && (uint64_t)times > (uint64_t)rt->params->limits.max_loop_iterations / n)
        return tmpl_fail_code(rt, DREAM_ELIMIT, at, "list repetition exceeds the iteration limit");
    if ((rc = tmpl_list_new(rt, n * (size_t)times, out)))
        return rc;
    for (int64_t i = 0; i < times; i++)
        memcpy(out->u.l->v + (size_t)i * n, seq.u.l->v, n * sizeof(tval));
    return 0;
}

/* Markup's escape() for `safe_string + plain_string`. */
static int escape_into(struct tmpl_sb *sb, const struct tmpl_str *s)
{
    int rc = 0;
    bool data = tmpl_str_has_data(s);
    for (size_t i = 0; !rc && i < s->len; i++) {
        const char *rep = NULL;
        switch (s->p[i]) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '\'': rep = "&#39;"; break;
        case '"': rep = "&#34;"; break;
        default: break;
        }
        rc = rep ? tmpl_sb_put(sb, rep, strlen(rep), data) : tmpl_sb_sub(sb, s, i, i + 1);
    }
    return rc;
}

int tmpl_binop(struct tmpl_rt *rt, const struct tnode *at, int op, tval a, tval b, tval *out)
{
    if (a.type == TV_UNDEF)
        return fail_undefined(rt, at, a);
    if (b.type == TV_UNDEF)
        return fail_undefined(rt, at, b);
    int rc;
    if (numeric(a) && numeric(b)) {
        bool ints = a.type != TV_FLOAT && b.type != TV_FLOAT;
        int64_t x = inum(a), y = inum(b), r;
        double fx = fnum(a), fy = fnum(b);
        switch (op) {
        case '+':
            if (ints) {
                if (__builtin_add_overflow(x, y, &r))
                    return tmpl_fail(rt, at, "integer overflow");
                *out = tv_int(r);
            } else
                *out = tv_float(fx + fy);
            return 0;
        case '-':
            if (ints) {
                if (__builtin_sub_overflow(x, y, &r))
                    return tmpl_fail(rt, at, "integer overflow");
                *out = tv_int(r);
            } else
                *out = tv_float(fx - fy);
            return 0;
        case '*':
            if (ints) {
                if (__builtin_mul_overflow(x, y, &r))
                    return tmpl_fail(rt, at, "integer overflow");
                *out = tv_int(r);
            } else
                *out = tv_float(fx * fy);
            return 0;
        case '/':
            if (fy == 0)
                return tmpl_fail(rt, at, "division by zero");
            *out = tv_float(fx / fy);
            return 0;
        case OP_FLOORDIV:
        case '%':
            if (ints) {
                if (y == 0)
                    return tmpl_fail(rt, at, "integer division or modulo by zero");
                if (x == INT64_MIN && y == -1)
                    return tmpl_fail(rt, at, "integer overflow");
                int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) {
                    q--;
                    m += y;
                }
                *out = tv_int(op == '%' ? m : q);
            } else {
                if (fy == 0)
                    return tmpl_fail(rt, at, "float division by zero");
                double m = fmod(fx, fy);
                if (m != 0 && ((m < 0) != (fy < 0)))
                    m += fy;
                *out = tv_float(op == '%' ? m : floor(fx / fy));
            }
            return 0;
        case OP_POW:
            if (ints && y >= 0) {
                int64_t acc = 1, base = x;
                for (int64_t e = y; e > 0; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(acc, base, &acc))
                        return tmpl_fail(rt, at, "integer overflow");
                    if (e > 1 && __builtin_mul_overflow(base, base, &base))
                        return tmpl_fail(rt, at, "integer overflow");
                }
                *out = tv_int(acc);
            } else {
                *out = tv_float(pow(fx, fy));
            }
            return 0;
        default: break;
        }
    }
    if (op == '+' && a.type == TV_STR && b.type == TV_STR) {
        struct tmpl_sb sb;
        tmpl_sb_init(rt, &sb);
        bool sa = a.flags & TVF_SAFE, sbf = b.flags & TVF_SAFE;
        rc = (sbf && !sa) ? escape_into(&sb, a.u.s) : tmpl_sb_str(&sb, a.u.s);
        if (!rc)
            rc = (sa && !sbf) ? escape_into(&sb, b.u.s) : tmpl_sb_str(&sb, b.u.s);
        if (rc) {
            tmpl_sb_free(&sb);
            return rc;
        }
        if ((rc = tmpl_sb_finish(rt, &sb, out)))
            return rc;
        if (sa || sbf)
            out->flags |= TVF_SAFE;
        return 0;
    }
    if (op == '+' && a.type == TV_LIST && b.type == TV_LIST && !((a.flags | b.flags) & TVF_GEN)) {
        if ((rc = tmpl_list_new(rt, a.u.l->n + b.u.l->n, out)))
            return rc;
        memcpy(out->u.l->v, a.u.l->v, a.u.l->n * sizeof(tval));
        memcpy(out->u.l->v + a.u.l->n, b.u.l->v, b.u.l->n * sizeof(tval));
        out->flags = a.flags & TVF_TUPLE;
        return 0;
    }
    if (op == '*' && (a.type == TV_STR || a.type == TV_LIST) && (b.type == TV_INT || b.type == TV_BOOL))
        return repeat(rt, at, a, inum(b), out);
    if (op == '*' && (b.type == TV_STR || b.type == TV_LIST) && (a.type == TV_INT || a.type == TV_BOOL))
        return repeat(rt, at, b, inum(a), out);
    if (op == '%' && a.type == TV_STR)
        return tmpl_percent_format(rt, at, a.u.s, b, out);
    static const char *names[] = {"//", "**"};
    char opname[4] = {(char)op, 0};
    return tmpl_fail(rt, at, "unsupported operand type(s) for %s: '%s' and '%s'",
                     op >= 128 && op <= OP_POW ? names[op - 128] : opname, tmpl_type_name(a), tmpl_type_name(b));
}

static int contains(struct tmpl_rt *rt, const struct tnode *at, tval item, tval seq, bool *out)
{
    switch (seq.type) {
    case TV_STR:
        if (item.type != TV_STR)
            return tmpl_fail(rt, at, "'in <string>' requires string as left operand, not %s", tmpl_type_name(item));
        *out = item.u.s->len == 0 || memmem(seq.u.s->p, seq.u.s->len, item.u.s->p, item.u.s->len) != NULL;
        return 0;
    case TV_LIST: {
        struct tmpl_list *l;
        int rc = tmpl_iterate(rt, at, seq, &l);
        if (rc)
            return rc;
        *out = false;
        for (size_t i = 0; i < l->n && !*out; i++)
            *out = tmpl_equal(item, l->v[i]);
        return 0;
    }
    case TV_DICT:
        if (seq.flags & TVF_NS)
            break;
        *out = tmpl_dict_get(seq.u.d, item) != NULL;
        return 0;
    case TV_UNDEF: *out = false; return 0;
    default: break;
    }
    return tmpl_fail(rt, at, "argument of type '%s' is not iterable", tmpl_type_name(seq));
}

static int compare_op(struct tmpl_rt *rt, const struct tnode *at, int op, tval a, tval b, bool *out)
{
    int c, rc;
    switch (op) {
    case CMP_EQ: *out = tmpl_equal(a, b); return 0;
    case CMP_NE: *out = !tmpl_equal(a, b); return 0;
    case CMP_IN: return contains(rt, at, a, b, out);
    case CMP_NOTIN:
        if ((rc = contains(rt, at, a, b, out)))
            return rc;
        *out = !*out;
        return 0;
    default: break;
    }
    if (a.type == TV_UNDEF)
        return fail_undefined(rt, at, a);
    if (b.type == TV_UNDEF)
        return fail_undefined(rt, at, b);
    if ((rc = tmpl_compare(rt, at, a, b, &c)))
        return rc;
    *out = op == CMP_LT ? c < 0 : op == CMP_LE ? c <= 0 : op == CMP_GT ? c > 0 : c >= 0;
    return 0;
}

/* ---- calls ---- */

static int eval_args(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, struct tmpl_args *a, size_t extra_kw)
{
    memset(a, 0, sizeof(*a));
    a->npos = n->l1.n;
    a->nkw = n->nnames;
    if (a->npos && !(a->pos = tmpl_alloc(&rt->arena, a->npos * sizeof(tval))))
        return dream_error_code();
    if (a->nkw + extra_kw) {
        a->kwv = tmpl_alloc(&rt->arena, (a->nkw + extra_kw) * sizeof(tval));
        a->kwn = tmpl_alloc(&rt->arena, (a->nkw + extra_kw) * sizeof(char *));
        if (!a->kwv || !a->kwn)
            return dream_error_code();
    }
    int rc;
    for (size_t i = 0; i < a->npos; i++)
        if ((rc = tmpl_eval(rt, sc, n->l1.v[i], &a->pos[i])))
            return rc;
    for (size_t i = 0; i < a->nkw; i++) {
        a->kwn[i] = n->names[i];
        if ((rc = tmpl_eval(rt, sc, n->l2.v[i], &a->kwv[i])))
            return rc;
    }
    return 0;
}

/* Runs a macro (or a call block's caller) body with arguments bound. */
static int call_macro(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_func *fn, struct tmpl_args *args, tval *out)
{
    const struct tnode *def = fn->node;
    const char *mname = def->kind == TN_MACRO ? def->name : "caller";
    if (rt->depth >= rt->params->limits.max_depth)
        return tmpl_fail_code(rt, DREAM_ELIMIT, at, "macro calls nested deeper than %d (limit max_depth)",
                              rt->params->limits.max_depth);
    struct tmpl_scope *sc = scope_new(rt, fn->closure);
    if (!sc)
        return dream_error_code();
    int rc;
    size_t np = def->nnames;
    if (args->npos > np && !(def->flags & TNF_VARARGS))
        return tmpl_fail(rt, at, "macro '%s' takes not more than %zu argument(s)", mname, np);
    bool *given = np ? tmpl_alloc(&rt->arena, np) : NULL;
    if (np && !given)
        return dream_error_code();
    for (size_t i = 0; i < np && i < args->npos; i++) {
        if ((rc = scope_set(rt, sc, def->names[i], args->pos[i])))
            return rc;
        given[i] = true;
    }
    tval kwargs;
    if ((rc = tmpl_dict_new(rt, 0, &kwargs)))
        return rc;
    tval caller = fn->caller;
    for (size_t k = 0; k < args->nkw; k++) {
        size_t i;
        for (i = 0; i < np; i++)
            if (!strcmp(def->names[i], args->kwn[k]))
                break;
        if (i < np) {
            if (given[i])
                return tmpl_fail(rt, at, "macro '%s' got multiple values for argument '%s'", mname, args->kwn[k]);
            if ((rc = scope_set(rt, sc, def->names[i], args->kwv[k])))
                return rc;
            given[i] = true;
        } else if (!strcmp(args->kwn[k], "caller") && (def->flags & TNF_CALLER)) {
            caller = args->kwv[k];
        } else if (def->flags & TNF_KWARGS) {
            tval key;
            if ((rc = tmpl_str_new(rt, args->kwn[k], strlen(args->kwn[k]), false, &key)) ||
                (rc = tmpl_dict_set(rt, kwargs.u.d, key, args->kwv[k])))
                return rc;
        } else {
            return tmpl_fail(rt, at, "macro '%s' takes no keyword argument '%s'", mname, args->kwn[k]);
        }
    }
    for (size_t i = 0; i < np; i++) {
        if (given[i])
            continue;
        tval v = undef_hint(rt, "parameter '%s' was not provided", def->names[i]);
        if (def->l2.v[i] && (rc = tmpl_eval(rt, sc, def->l2.v[i], &v)))
            return rc;
        if ((rc = scope_set(rt, sc, def->names[i], v)))
            return rc;
    }
    if (def->flags & TNF_VARARGS) {
        size_t extra = args->npos > np ? args->npos - np : 0;
        tval va;
        if ((rc = tmpl_list_new(rt, extra, &va)))
            return rc;
        va.flags |= TVF_TUPLE;
        if (extra)
            memcpy(va.u.l->v, args->pos + np, extra * sizeof(tval));
        if ((rc = scope_set(rt, sc, "varargs", va)))
            return rc;
    }
    if ((def->flags & TNF_KWARGS) && (rc = scope_set(rt, sc, "kwargs", kwargs)))
        return rc;
    if ((def->flags & TNF_CALLER) && caller.type != TV_UNDEF && (rc = scope_set(rt, sc, "caller", caller)))
        return rc;
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    rt->depth++;
    rc = tmpl_exec_body(rt, sc, &def->l1, &sb);
    rt->depth--;
    if (rc < 0) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

int tmpl_call(struct tmpl_rt *rt, const struct tnode *at, tval fn, struct tmpl_args *args, tval *out)
{
    if (fn.type == TV_UNDEF)
        return fail_undefined(rt, at, fn);
    if (fn.type != TV_FUNC)
        return tmpl_fail(rt, at, "'%s' object is not callable", tmpl_type_name(fn));
    struct tmpl_func *f = fn.u.fn;
    switch (f->kind) {
    case TF_MACRO:
    case TF_CALLER: return call_macro(rt, at, f, args, out);
    case TF_UNSAFE:
        return tmpl_fail(rt, at, "access to attribute '%s' of '%s' object is unsafe", f->name, tmpl_type_name(f->self));
    default: return f->fn(rt, at, f->self, args, out);
    }
}

/* ---- expressions ---- */

static int eval_slice(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, tval *out)
{
    tval obj, idx[3];
    int rc = tmpl_eval(rt, sc, n->a, &obj);
    if (rc)
        return rc;
    bool has[3];
    for (int k = 0; k < 3; k++) {
        has[k] = false;
        if (n->l1.v[k]) {
            if ((rc = tmpl_eval(rt, sc, n->l1.v[k], &idx[k])))
                return rc;
            if (idx[k].type == TV_NONE)
                continue;
            if (idx[k].type != TV_INT && idx[k].type != TV_BOOL)
                return tmpl_fail(rt, n, "slice indices must be integers or None");
            has[k] = true;
        }
    }
    if (obj.type == TV_UNDEF)
        return fail_undefined(rt, n, obj);
    if ((obj.type != TV_LIST && obj.type != TV_STR) || (obj.flags & TVF_GEN))
        return tmpl_fail(rt, n, "'%s' object is not subscriptable", tmpl_type_name(obj));
    int64_t step = has[2] ? inum(idx[2]) : 1;
    if (step == 0)
        return tmpl_fail(rt, n, "slice step cannot be zero");
    int64_t len = obj.type == TV_LIST ? (int64_t)obj.u.l->n : (int64_t)tmpl_utf8_len(obj.u.s->p, obj.u.s->len);
    int64_t start, stop;
    if (step > 0) {
        start = has[0] ? inum(idx[0]) : 0;
        stop = has[1] ? inum(idx[1]) : len;
        if (start < 0)
            start = start + len < 0 ? 0 : start + len;
        if (stop < 0)
            stop = stop + len < 0 ? 0 : stop + len;
        if (start > len)
            start = len;
        if (stop > len)
            stop = len;
    } else {
        start = has[0] ? inum(idx[0]) : len - 1;
        stop = has[1] ? inum(idx[1]) : -1;
        if (has[0] && start < 0)
            start = start + len < 0 ? -1 : start + len;
        if (has[1] && stop < 0)
            stop = stop + len < 0 ? -1 : stop + len;
        if (start >= len)
            start = len - 1;
        if (stop >= len)
            stop = len - 1;
    }
    size_t count = 0;
    if (step > 0 && stop > start)
        count = (size_t)((stop - start + step - 1) / step);
    else if (step < 0 && start > stop)
        count = (size_t)((start - stop + (-step) - 1) / (-step));
    if (obj.type == TV_STR && step == 1) {
        size_t b = tmpl_utf8_offset(obj.u.s->p, obj.u.s->len, (size_t)start);
        size_t e = count ? tmpl_utf8_offset(obj.u.s->p, obj.u.s->len, (size_t)stop) : b;
        return tmpl_str_sub(rt, obj.u.s, b, e, out);
    }
    if (obj.type == TV_STR) {
        struct tmpl_list *chars;
        if ((rc = tmpl_iterate(rt, n, obj, &chars)))
            return rc;
        struct tmpl_sb sb;
        tmpl_sb_init(rt, &sb);
        for (size_t k = 0; k < count; k++)
            if ((rc = tmpl_sb_str(&sb, chars->v[start + (int64_t)k * step].u.s))) {
                tmpl_sb_free(&sb);
                return rc;
            }
        return tmpl_sb_finish(rt, &sb, out);
    }
    if ((rc = tmpl_list_new(rt, count, out)))
        return rc;
    for (size_t k = 0; k < count; k++)
        out->u.l->v[k] = obj.u.l->v[start + (int64_t)k * step];
    out->flags = obj.flags & TVF_TUPLE;
    return 0;
}

int tmpl_apply_filter(struct tmpl_rt *rt, const struct tnode *at, const char *name, tval in, struct tmpl_args *args, tval *out)
{
    const struct tmpl_filter_def *f = tmpl_find_filter(name);
    if (!f)
        return tmpl_fail(rt, at, "no filter named '%s'", name);
    return f->fn(rt, at, in, args, out);
}

int tmpl_apply_test(struct tmpl_rt *rt, const struct tnode *at, const char *name, tval in, struct tmpl_args *args, bool *out)
{
    const struct tmpl_test_def *t = tmpl_find_test(name);
    if (!t)
        return tmpl_fail(rt, at, "no test named '%s'", name);
    return t->fn(rt, at, in, args, out);
}

static int eval_inner(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, tval *out)
{
    int rc;
    tval a, b;
    struct tmpl_args args;
    switch (n->kind) {
    case TE_LIT: *out = n->lit; return 0;
    case TE_NAME: return lookup(rt, sc, n->name, out);
    case TE_ATTR:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)))
            return rc;
        return tmpl_getattr(rt, n, a, n->name, out);
    case TE_ITEM:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)) || (rc = tmpl_eval(rt, sc, n->b, &b)))
            return rc;
        return tmpl_getitem(rt, n, a, b, out);
    case TE_SLICE: return eval_slice(rt, sc, n, out);
    case TE_CALL:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)) || (rc = eval_args(rt, sc, n, &args, 0)))
            return rc;
        return tmpl_call(rt, n, a, &args, out);
    case TE_FILTER:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)) || (rc = eval_args(rt, sc, n, &args, 0)))
            return rc;
        if (!n->filter)
            return tmpl_fail(rt, n, "no filter named '%s'", n->name);
        return n->filter->fn(rt, n, a, &args, out);
    case TE_TEST: {
        if ((rc = tmpl_eval(rt, sc, n->a, &a)) || (rc = eval_args(rt, sc, n, &args, 0)))
            return rc;
        if (!n->test)
            return tmpl_fail(rt, n, "no test named '%s'", n->name);
        bool r;
        if ((rc = n->test->fn(rt, n, a, &args, &r)))
            return rc;
        *out = tv_bool(n->neg ? !r : r);
        return 0;
    }
    case TE_NOT:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)))
            return rc;
        *out = tv_bool(!tmpl_truthy(a));
        return 0;
    case TE_NEG:
    case TE_POS:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)))
            return rc;
        if (a.type == TV_UNDEF)
            return fail_undefined(rt, n, a);
        if (!numeric(a))
            return tmpl_fail(rt, n, "bad operand type for unary %c: '%s'", n->kind == TE_NEG ? '-' : '+', tmpl_type_name(a));
        if (n->kind == TE_POS)
            *out = a.type == TV_BOOL ? tv_int(a.u.b) : a;
        else if (a.type == TV_FLOAT)
            *out = tv_float(-a.u.f);
        else if (inum(a) == INT64_MIN)
            return tmpl_fail(rt, n, "integer overflow");
        else
            *out = tv_int(-inum(a));
        return 0;
    case TE_BIN:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)) || (rc = tmpl_eval(rt, sc, n->b, &b)))
            return rc;
        return tmpl_binop(rt, n, n->op, a, b, out);
    case TE_CMP: {
        if ((rc = tmpl_eval(rt, sc, n->a, &a)))
            return rc;
        bool r = true;
        for (size_t i = 0; i < n->l1.n && r; i++) {
            if ((rc = tmpl_eval(rt, sc, n->l1.v[i], &b)) || (rc = compare_op(rt, n, n->ops[i], a, b, &r)))
                return rc;
            a = b;
        }
        *out = tv_bool(r);
        return 0;
    }
    case TE_AND:
    case TE_OR:
        if ((rc = tmpl_eval(rt, sc, n->a, &a)))
            return rc;
        if (tmpl_truthy(a) == (n->kind == TE_OR)) {
            *out = a;
            return 0;
        }
        return tmpl_eval(rt, sc, n->b, out);
    case TE_COND:
        if ((rc = tmpl_eval(rt, sc, n->b, &b)))
            return rc;
        if (tmpl_truthy(b))
            return tmpl_eval(rt, sc, n->a, out);
        if (n->c)
            return tmpl_eval(rt, sc, n->c, out);
        *out = undef_hint(rt, "the inline if-expression evaluated to false and no else section was defined");
        return 0;
    case TE_LIST:
    case TE_TUPLE:
        if ((rc = tmpl_list_new(rt, n->l1.n, out)))
            return rc;
        if (n->kind == TE_TUPLE)
            out->flags |= TVF_TUPLE;
        for (size_t i = 0; i < n->l1.n; i++)
            if ((rc = tmpl_eval(rt, sc, n->l1.v[i], &out->u.l->v[i])))
                return rc;
        return 0;
    case TE_DICT: {
        tval d;
        if ((rc = tmpl_dict_new(rt, n->l1.n, &d)))
            return rc;
        for (size_t i = 0; i < n->l1.n; i++) {
            if ((rc = tmpl_eval(rt, sc, n->l1.v[i], &a)) || (rc = tmpl_eval(rt, sc, n->l2.v[i], &b)))
                return rc;
            if (a.type == TV_LIST && !(a.flags & TVF_TUPLE))
                return tmpl_fail(rt, n, "unhashable type: 'list'");
            if (a.type == TV_DICT)
                return tmpl_fail(rt, n, "unhashable type: 'dict'");
            if ((rc = tmpl_dict_set(rt, d.u.d, a, b)))
                return rc;
        }
        *out = d;
        return 0;
    }
    case TE_CONCAT: {
        struct tmpl_sb sb;
        tmpl_sb_init(rt, &sb);
        for (size_t i = 0; i < n->l1.n; i++) {
            if ((rc = tmpl_eval(rt, sc, n->l1.v[i], &a)) || (rc = tmpl_write_str(rt, &sb, a))) {
                tmpl_sb_free(&sb);
                return rc;
            }
        }
        return tmpl_sb_finish(rt, &sb, out);
    }
    default: return tmpl_fail_code(rt, DREAM_EINTERNAL, n, "node kind %d is not an expression", n->kind);
    }
}

int tmpl_eval(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, tval *out)
{
    if (++rt->expr_depth > TMPL_MAX_EVAL_DEPTH) {
        rt->expr_depth--;
        return tmpl_fail_code(rt, DREAM_ELIMIT, n, "expression evaluation nested too deeply");
    }
    int rc = eval_inner(rt, sc, n, out);
    rt->expr_depth--;
    return rc;
}

/* ---- statements ---- */

static int assign_targets(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, tval v)
{
    if (n->nnames == 1)
        return scope_set(rt, sc, n->names[0], v);
    struct tmpl_list *items;
    int rc;
    if (v.type == TV_UNDEF)
        return fail_undefined(rt, n, v);
    if ((rc = tmpl_iterate(rt, n, v, &items)))
        return rc;
    if (items->n != n->nnames)
        return tmpl_fail(rt, n, "%s values to unpack (expected %zu, got %zu)",
                         items->n > n->nnames ? "too many" : "not enough", n->nnames, items->n);
    for (size_t i = 0; i < n->nnames; i++)
        if ((rc = scope_set(rt, sc, n->names[i], items->v[i])))
            return rc;
    return 0;
}

static int count_iteration(struct tmpl_rt *rt, const struct tnode *n)
{
    if (++rt->iterations > rt->params->limits.max_loop_iterations)
        return tmpl_fail_code(rt, DREAM_ELIMIT, n, "more than %" PRId64 " loop iterations (limit max_loop_iterations)",
                              rt->params->limits.max_loop_iterations);
    return 0;
}

static int exec_for(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, struct tmpl_sb *out)
{
    tval seqv;
    struct tmpl_list *items;
    int rc = tmpl_eval(rt, sc, n->a, &seqv);
    if (rc || (rc = tmpl_iterate(rt, n->a, seqv, &items)))
        return rc;
    struct tmpl_scope *ls = scope_new(rt, sc);
    if (!ls)
        return dream_error_code();
    if (n->b) {
        tval filtered;
        if ((rc = tmpl_list_new(rt, items->n, &filtered)))
            return rc;
        size_t k = 0;
        for (size_t i = 0; i < items->n; i++) {
            tval keep;
            if ((rc = count_iteration(rt, n)) || (rc = assign_targets(rt, ls, n, items->v[i])) ||
                (rc = tmpl_eval(rt, ls, n->b, &keep)))
                return rc;
            if (tmpl_truthy(keep))
                filtered.u.l->v[k++] = items->v[i];
        }
        filtered.u.l->n = k;
        items = filtered.u.l;
    }
    struct tmpl_loop *lp = tmpl_alloc(&rt->arena, sizeof(*lp));
    if (!lp)
        return dream_error_code();
    lp->items = items;
    tval loopv = {.type = TV_LOOP};
    loopv.u.loop = lp;
    for (size_t i = 0; i < items->n; i++) {
        lp->index0 = i;
        /* each iteration is a fresh scope: a set in one iteration is gone in the next */
        if (i > 0 && !(ls = scope_new(rt, sc)))
            return dream_error_code();
        if ((rc = count_iteration(rt, n)) || (rc = assign_targets(rt, ls, n, items->v[i])) ||
            (rc = scope_set(rt, ls, "loop", loopv)))
            return rc;
        rc = tmpl_exec_body(rt, ls, &n->l1, out);
        if (rc == EXEC_BREAK)
            break;
        if (rc < 0)
            return rc;
    }
    if (items->n == 0 && n->l2.n) {
        rc = tmpl_exec_body(rt, sc, &n->l2, out);
        return rc < 0 ? rc : 0;
    }
    return 0;
}

/* Renders a body into a new string value. */
static int capture(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnodes *body, tval *out)
{
    struct tmpl_sb sb;
    tmpl_sb_init(rt, &sb);
    int rc = tmpl_exec_body(rt, sc, body, &sb);
    if (rc < 0) {
        tmpl_sb_free(&sb);
        return rc;
    }
    return tmpl_sb_finish(rt, &sb, out);
}

static int apply_filters(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnodes *filters, tval *v)
{
    for (size_t i = 0; i < filters->n; i++) {
        const struct tnode *f = filters->v[i];
        struct tmpl_args args;
        int rc = eval_args(rt, sc, f, &args, 0);
        if (rc)
            return rc;
        if (!f->filter)
            return tmpl_fail(rt, f, "no filter named '%s'", f->name);
        if ((rc = f->filter->fn(rt, f, *v, &args, v)))
            return rc;
    }
    return 0;
}

static int exec_stmt(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, struct tmpl_sb *out)
{
    int rc;
    tval v;
    switch (n->kind) {
    case TN_TEXT: return tmpl_sb_str(out, n->lit.u.s);
    case TN_OUTPUT:
        if ((rc = tmpl_eval(rt, sc, n->a, &v)))
            return rc;
        return tmpl_write_str(rt, out, v);
    case TN_IF:
        if ((rc = tmpl_eval(rt, sc, n->a, &v)))
            return rc;
        return tmpl_exec_body(rt, sc, tmpl_truthy(v) ? &n->l1 : &n->l2, out);
    case TN_FOR: return exec_for(rt, sc, n, out);
    case TN_SET:
        if ((rc = tmpl_eval(rt, sc, n->a, &v)))
            return rc;
        if (n->flags & TNF_NSATTR) {
            tval ns;
            if ((rc = lookup(rt, sc, n->name, &ns)))
                return rc;
            if (ns.type != TV_DICT || !(ns.flags & TVF_NS))
                return tmpl_fail(rt, n, "can only assign attributes to a namespace(), and '%s' is a %s", n->name,
                                 tmpl_type_name(ns));
            tval key;
            if ((rc = tmpl_str_new(rt, n->names[0], strlen(n->names[0]), false, &key)))
                return rc;
            return tmpl_dict_set(rt, ns.u.d, key, v);
        }
        return assign_targets(rt, sc, n, v);
    case TN_SETBLOCK:
        if ((rc = capture(rt, sc, &n->l1, &v)) || (rc = apply_filters(rt, sc, &n->l2, &v)))
            return rc;
        return scope_set(rt, sc, n->names[0], v);
    case TN_FILTERBLOCK:
        if ((rc = capture(rt, sc, &n->l1, &v)) || (rc = apply_filters(rt, sc, &n->l2, &v)))
            return rc;
        return tmpl_write_str(rt, out, v);
    case TN_MACRO: {
        struct tmpl_func *fn = tmpl_alloc(&rt->arena, sizeof(*fn));
        if (!fn)
            return dream_error_code();
        fn->kind = TF_MACRO;
        fn->name = n->name;
        fn->node = n;
        fn->closure = sc;
        tval f = {.type = TV_FUNC};
        f.u.fn = fn;
        return scope_set(rt, sc, n->name, f);
    }
    case TN_CALLBLOCK: {
        const struct tnode *call = n->a;
        tval callee;
        struct tmpl_args args;
        if ((rc = tmpl_eval(rt, sc, call->a, &callee)) || (rc = eval_args(rt, sc, call, &args, 1)))
            return rc;
        struct tmpl_func *fn = tmpl_alloc(&rt->arena, sizeof(*fn));
        if (!fn)
            return dream_error_code();
        fn->kind = TF_CALLER;
        fn->name = "caller";
        fn->node = n;
        fn->closure = sc;
        args.kwn[args.nkw] = "caller";
        args.kwv[args.nkw] = (tval){.type = TV_FUNC, .u.fn = fn};
        args.nkw++;
        if ((rc = tmpl_call(rt, call, callee, &args, &v)))
            return rc;
        return tmpl_write_str(rt, out, v);
    }
    case TN_BREAK: return EXEC_BREAK;
    case TN_CONTINUE: return EXEC_CONTINUE;
    case TN_BODY: return tmpl_exec_body(rt, sc, &n->l1, out);
    case TN_WITH: {
        struct tmpl_scope *ws = scope_new(rt, sc);
        if (!ws)
            return dream_error_code();
        for (size_t i = 0; i < n->nnames; i++)
            if ((rc = tmpl_eval(rt, sc, n->l2.v[i], &v)) || (rc = scope_set(rt, ws, n->names[i], v)))
                return rc;
        return tmpl_exec_body(rt, ws, &n->l1, out);
    }
    default: return tmpl_fail_code(rt, DREAM_EINTERNAL, n, "node kind %d is not a statement", n->kind);
    }
}

int tmpl_exec_body(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnodes *body, struct tmpl_sb *out)
{
    for (size_t i = 0; i < body->n; i++) {
        int rc = exec_stmt(rt, sc, body->v[i], out);
        if (rc)
            return rc;
    }
    return 0;
}

int tmpl_render(const dream_template *t, struct tmpl_rt *rt, struct tmpl_sb *out)
{
    rt->t = t;
    rt->root = scope_new(rt, NULL);
    if (!rt->root)
        return dream_error_code();
    int rc = tmpl_exec_body(rt, rt->root, &t->body, out);
    return rc > 0 ? 0 : rc;
}
