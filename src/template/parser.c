/*
 * parser.c — builds the syntax tree from tokens with Jinja2's grammar and precedence:
 * ternary < or < and < not < comparisons (chained, in, not in) < + - < ~ < * / // % < ** <
 * unary - + < postfix (. [] ()) < filters and tests. Statements: if/elif/else, for (targets,
 * loop filter, else), set (plain, tuple, namespace attribute, block), macro, call, filter,
 * with, generation, break/continue.
 *
 * Unknown filters and tests fail at parse time unless they sit inside an `if` or a ternary,
 * where (like Jinja2) they fail only when evaluated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

#define TMPL_MAX_NESTING 200

struct parser {
    dream_template *t;
    struct tmpl_tokens toks;
    size_t i;
    int depth;
    int loops;
    struct tnode *macro;
};

static struct tmpl_token *cur(struct parser *p) { return &p->toks.v[p->i]; }
static struct tmpl_token *look(struct parser *p)
{
    return p->i + 1 < p->toks.n ? &p->toks.v[p->i + 1] : &p->toks.v[p->toks.n - 1];
}

static int fail_at(struct parser *p, size_t pos, const char *fmt, const char *arg)
{
    int line, col;
    tmpl_linecol(p->t->src, p->t->len, pos, &line, &col);
    char msg[256];
    snprintf(msg, sizeof(msg), fmt, arg ? arg : "");
    return dream_error_set(DREAM_EFORMAT, "template:%d:%d: %s", line, col, msg);
}

static const char *describe(struct tmpl_token *tk)
{
    static _Thread_local char buf[64];
    switch (tk->type) {
    case TK_EOF: return "end of template";
    case TK_DATA: return "template text";
    case TK_VAR_BEGIN: return "'{{'";
    case TK_VAR_END: return "'}}'";
    case TK_BLOCK_BEGIN: return "'{%'";
    case TK_BLOCK_END: return "'%}'";
    case TK_NAME: snprintf(buf, sizeof(buf), "'%.40s'", tk->p); return buf;
    case TK_STRING: return "string";
    case TK_INT:
    case TK_FLOAT: return "number";
    default:
        if (tk->op >= 128) {
            static const char *ops[] = {"//", "**", "==", "!=", "<=", ">="};
            snprintf(buf, sizeof(buf), "'%s'", ops[tk->op - 128]);
        } else {
            snprintf(buf, sizeof(buf), "'%c'", tk->op);
        }
        return buf;
    }
}

static int unexpected(struct parser *p, const char *what)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "expected %s, got %s", what, describe(cur(p)));
    return fail_at(p, cur(p)->pos, "%s", msg);
}

static bool is_op(struct parser *p, int op) { return cur(p)->type == TK_OP && cur(p)->op == op; }
static bool is_name(struct parser *p, const char *name)
{
    return cur(p)->type == TK_NAME && strcmp(cur(p)->p, name) == 0;
}
static int expect_op(struct parser *p, int op)
{
    if (!is_op(p, op)) {
        char what[8] = {'\'', (char)op, '\'', 0};
        return unexpected(p, what);
    }
    p->i++;
    return 0;
}
static int expect_end(struct parser *p)
{
    if (cur(p)->type != TK_BLOCK_END)
        return unexpected(p, "end of statement block ('%}')");
    p->i++;
    return 0;
}

static struct tnode *node(struct parser *p, int kind, size_t pos)
{
    struct tnode *n = tmpl_alloc(&p->t->arena, sizeof(*n));
    if (n) {
        n->kind = (uint8_t)kind;
        n->pos = (uint32_t)pos;
    }
    return n;
}

static int push_node(struct parser *p, struct tnodes *l, struct tnode *n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4;
        struct tnode **v = tmpl_alloc(&p->t->arena, cap * sizeof(*v));
        if (!v)
            return dream_error_code();
        if (l->n)
            memcpy(v, l->v, l->n * sizeof(*v));
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
    return 0;
}

static int push_name(struct parser *p, struct tnode *n, const char *name)
{
    const char **v = tmpl_alloc(&p->t->arena, (n->nnames + 1) * sizeof(*v));
    if (!v)
        return dream_error_code();
    if (n->nnames)
        memcpy(v, n->names, n->nnames * sizeof(*v));
    v[n->nnames++] = name;
    n->names = v;
    return 0;
}

static int parse_expr(struct parser *p, bool condexpr, struct tnode **out);
static int parse_tuple(struct parser *p, bool condexpr, bool explicit_parens, struct tnode **out);
static int parse_unary(struct parser *p, bool with_filter, struct tnode **out);
static int parse_or(struct parser *p, struct tnode **out);

#define ENTER(p)                                                                                   \
    do {                                                                                           \
        if (++(p)->depth > TMPL_MAX_NESTING) {                                                     \
            int line_, col_;                                                                       \
            tmpl_linecol((p)->t->src, (p)->t->len, cur(p)->pos, &line_, &col_);                    \
            return dream_error_set(DREAM_ETOOBIG, "template:%d:%d: nesting deeper than %d levels", \
                                   line_, col_, TMPL_MAX_NESTING);                                 \
        }                                                                                          \
    } while (0)

/* Call arguments after '(' up to ')': positional into l1, keywords into names + l2. */
static int parse_args(struct parser *p, struct tnode *n)
{
    int rc = expect_op(p, '(');
    while (!rc && !is_op(p, ')')) {
        if (n->l1.n || n->nnames)
            if ((rc = expect_op(p, ',')) || is_op(p, ')'))
                break;
        if (is_op(p, '*') || is_op(p, OP_POW))
            return fail_at(p, cur(p)->pos, "%s", "*args and **kwargs in calls are not supported");
        struct tnode *arg = NULL;
        if (cur(p)->type == TK_NAME && look(p)->type == TK_OP && look(p)->op == '=') {
            const char *name = cur(p)->p;
            p->i += 2;
            if ((rc = parse_expr(p, true, &arg)) || (rc = push_name(p, n, name)))
                return rc;
            rc = push_node(p, &n->l2, arg);
        } else {
            if (n->nnames)
                return fail_at(p, cur(p)->pos, "%s", "positional argument follows keyword argument");
            if ((rc = parse_expr(p, true, &arg)))
                return rc;
            rc = push_node(p, &n->l1, arg);
        }
    }
    return rc ? rc : expect_op(p, ')');
}

static int parse_dotted_name(struct parser *p, const char **out)
{
    if (cur(p)->type != TK_NAME)
        return unexpected(p, "a name");
    const char *name = cur(p)->p;
    p->i++;
    while (is_op(p, '.') && look(p)->type == TK_NAME) {
        size_t n = strlen(name) + 1 + look(p)->len;
        char *s = tmpl_alloc(&p->t->arena, n + 1);
        if (!s)
            return dream_error_code();
        snprintf(s, n + 1, "%s.%s", name, look(p)->p);
        name = s;
        p->i += 2;
    }
    *out = name;
    return 0;
}

/* `| name(args)` with the input in a (NULL for filter blocks). */
static int parse_filter(struct parser *p, struct tnode *in, struct tnode **out)
{
    struct tnode *n = node(p, TE_FILTER, cur(p)->pos);
    if (!n)
        return dream_error_code();
    n->a = in;
    int rc = parse_dotted_name(p, &n->name);
    if (rc)
        return rc;
    n->filter = tmpl_find_filter(n->name);
    if (is_op(p, '(') && (rc = parse_args(p, n)))
        return rc;
    *out = n;
    return 0;
}

static int parse_postfix(struct parser *p, struct tnode **io);

static int parse_test(struct parser *p, struct tnode *in, struct tnode **out)
{
    struct tnode *n = node(p, TE_TEST, cur(p)->pos);
    if (!n)
        return dream_error_code();
    n->a = in;
    p->i++; /* is */
    if (is_name(p, "not")) {
        n->neg = 1;
        p->i++;
    }
    int rc = parse_dotted_name(p, &n->name);
    if (rc)
        return rc;
    n->test = tmpl_find_test(n->name);
    struct tmpl_token *tk = cur(p);
    if (is_op(p, '(')) {
        rc = parse_args(p, n);
    } else if ((tk->type == TK_NAME || tk->type == TK_STRING || tk->type == TK_INT || tk->type == TK_FLOAT ||
                (tk->type == TK_OP && (tk->op == '(' || tk->op == '[' || tk->op == '{'))) &&
               !is_name(p, "else") && !is_name(p, "or") && !is_name(p, "and")) {
        if (is_name(p, "is"))
            return fail_at(p, tk->pos, "%s", "you cannot chain multiple tests with is");
        struct tnode *arg = NULL;
        if ((rc = parse_unary(p, false, &arg)))
            return rc;
        rc = push_node(p, &n->l1, arg);
    }
    *out = n;
    return rc;
}

static int parse_list_or_dict(struct parser *p, struct tnode **out)
{
    bool dict = is_op(p, '{');
    struct tnode *n = node(p, dict ? TE_DICT : TE_LIST, cur(p)->pos);
    if (!n)
        return dream_error_code();
    int close = dict ? '}' : ']';
    p->i++;
    int rc = 0;
    while (!is_op(p, close)) {
        if (n->l1.n && ((rc = expect_op(p, ',')) || is_op(p, close)))
            break;
        struct tnode *k = NULL, *v = NULL;
        if ((rc = parse_expr(p, true, &k)) || (rc = push_node(p, &n->l1, k)))
            return rc;
        if (dict) {
            if ((rc = expect_op(p, ':')) || (rc = parse_expr(p, true, &v)) || (rc = push_node(p, &n->l2, v)))
                return rc;
        }
    }
    if (rc || (rc = expect_op(p, close)))
        return rc;
    *out = n;
    return 0;
}

static int parse_primary(struct parser *p, struct tnode **out)
{
    struct tmpl_token *tk = cur(p);
    struct tnode *n = NULL;
    int rc = 0;
    switch (tk->type) {
    case TK_NAME:
        n = node(p, TE_LIT, tk->pos);
        if (!n)
            return dream_error_code();
        if (!strcmp(tk->p, "true") || !strcmp(tk->p, "True")) {
            n->lit = tv_bool(true);
        } else if (!strcmp(tk->p, "false") || !strcmp(tk->p, "False")) {
            n->lit = tv_bool(false);
        } else if (!strcmp(tk->p, "none") || !strcmp(tk->p, "None")) {
            n->lit = tv_none();
        } else {
            n->kind = TE_NAME;
            n->name = tk->p;
            if (p->macro) {
                if (!strcmp(tk->p, "varargs"))
                    p->macro->flags |= TNF_VARARGS;
                else if (!strcmp(tk->p, "kwargs"))
                    p->macro->flags |= TNF_KWARGS;
                else if (!strcmp(tk->p, "caller"))
                    p->macro->flags |= TNF_CALLER;
            }
        }
        p->i++;
        break;
    case TK_STRING: {
        n = node(p, TE_LIT, tk->pos);
        if (!n)
            return dream_error_code();
        size_t total = 0, j = p->i;
        while (p->toks.v[j].type == TK_STRING)
            total += p->toks.v[j++].len;
        char *s = tmpl_alloc(&p->t->arena, total + 1);
        struct tmpl_str *str = tmpl_alloc(&p->t->arena, sizeof(*str));
        if (!s || !str)
            return dream_error_code();
        size_t off = 0;
        while (cur(p)->type == TK_STRING) {
            memcpy(s + off, cur(p)->p, cur(p)->len);
            off += cur(p)->len;
            p->i++;
        }
        s[off] = 0;
        str->p = s;
        str->len = off;
        n->lit = tmpl_str_lit(str);
        break;
    }
    case TK_INT:
    case TK_FLOAT:
        n = node(p, TE_LIT, tk->pos);
        if (!n)
            return dream_error_code();
        n->lit = tk->type == TK_INT ? tv_int(tk->ival) : tv_float(tk->fval);
        p->i++;
        break;
    case TK_OP:
        if (tk->op == '(') {
            p->i++;
            if ((rc = parse_tuple(p, true, true, &n)) || (rc = expect_op(p, ')')))
                return rc;
            break;
        }
        if (tk->op == '[' || tk->op == '{')
            return parse_list_or_dict(p, out);
        /* fall through */
    default: return unexpected(p, "an expression");
    }
    *out = n;
    return 0;
}

static int parse_subscript(struct parser *p, struct tnode **io)
{
    int rc;
    if (is_op(p, '.')) {
        p->i++;
        struct tmpl_token *tk = cur(p);
        if (tk->type == TK_NAME) {
            struct tnode *n = node(p, TE_ATTR, tk->pos);
            if (!n)
                return dream_error_code();
            n->a = *io;
            n->name = tk->p;
            p->i++;
            *io = n;
            return 0;
        }
        if (tk->type == TK_INT) {
            struct tnode *n = node(p, TE_ITEM, tk->pos), *k = node(p, TE_LIT, tk->pos);
            if (!n || !k)
                return dream_error_code();
            k->lit = tv_int(tk->ival);
            n->a = *io;
            n->b = k;
            p->i++;
            *io = n;
            return 0;
        }
        return unexpected(p, "a name or number after '.'");
    }
    size_t pos = cur(p)->pos;
    p->i++; /* [ */
    struct tnode *args[3] = {NULL, NULL, NULL};
    bool slice = false;
    if (!is_op(p, ':') && (rc = parse_expr(p, true, &args[0])))
        return rc;
    if (is_op(p, ':')) {
        slice = true;
        p->i++;
        if (!is_op(p, ']') && !is_op(p, ':') && (rc = parse_expr(p, true, &args[1])))
            return rc;
        if (is_op(p, ':')) {
            p->i++;
            if (!is_op(p, ']') && (rc = parse_expr(p, true, &args[2])))
                return rc;
        }
    }
    if ((rc = expect_op(p, ']')))
        return rc;
    struct tnode *n = node(p, slice ? TE_SLICE : TE_ITEM, pos);
    if (!n)
        return dream_error_code();
    n->a = *io;
    if (slice) {
        for (int k = 0; k < 3; k++)
            if ((rc = push_node(p, &n->l1, args[k])))
                return rc;
    } else {
        n->b = args[0];
    }
    *io = n;
    return 0;
}

static int parse_call(struct parser *p, struct tnode **io)
{
    struct tnode *n = node(p, TE_CALL, cur(p)->pos);
    if (!n)
        return dream_error_code();
    n->a = *io;
    int rc = parse_args(p, n);
    *io = n;
    return rc;
}

static int parse_postfix(struct parser *p, struct tnode **io)
{
    for (;;) {
        int rc;
        if (is_op(p, '.') || is_op(p, '['))
            rc = parse_subscript(p, io);
        else if (is_op(p, '('))
            rc = parse_call(p, io);
        else
            return 0;
        if (rc)
            return rc;
    }
}

static int parse_filter_expr(struct parser *p, struct tnode **io)
{
    for (;;) {
        int rc;
        if (is_op(p, '|')) {
            p->i++;
            rc = parse_filter(p, *io, io);
        } else if (is_name(p, "is")) {
            rc = parse_test(p, *io, io);
        } else if (is_op(p, '(')) {
            rc = parse_call(p, io);
        } else {
            return 0;
        }
        if (rc)
            return rc;
    }
}

static int parse_unary(struct parser *p, bool with_filter, struct tnode **out)
{
    ENTER(p);
    int rc;
    struct tnode *n = NULL;
    if (is_op(p, '-') || is_op(p, '+')) {
        n = node(p, is_op(p, '-') ? TE_NEG : TE_POS, cur(p)->pos);
        if (!n)
            return dream_error_code();
        p->i++;
        if ((rc = parse_unary(p, false, &n->a)))
            return rc;
    } else if ((rc = parse_primary(p, &n))) {
        return rc;
    }
    if ((rc = parse_postfix(p, &n)) || (with_filter && (rc = parse_filter_expr(p, &n))))
        return rc;
    p->depth--;
    *out = n;
    return 0;
}

static int binop(struct parser *p, int kind, int op, struct tnode *a, struct tnode *b, struct tnode **out)
{
    struct tnode *n = node(p, kind, a->pos);
    if (!n)
        return dream_error_code();
    n->op = (uint8_t)op;
    n->a = a;
    n->b = b;
    *out = n;
    return 0;
}

static int parse_pow(struct parser *p, struct tnode **out)
{
    int rc = parse_unary(p, true, out);
    while (!rc && is_op(p, OP_POW)) {
        p->i++;
        struct tnode *r = NULL;
        if (!(rc = parse_unary(p, true, &r)))
            rc = binop(p, TE_BIN, OP_POW, *out, r, out);
    }
    return rc;
}

static int parse_math2(struct parser *p, struct tnode **out)
{
    int rc = parse_pow(p, out);
    while (!rc && (is_op(p, '*') || is_op(p, '/') || is_op(p, OP_FLOORDIV) || is_op(p, '%'))) {
        int op = cur(p)->op;
        p->i++;
        struct tnode *r = NULL;
        if (!(rc = parse_pow(p, &r)))
            rc = binop(p, TE_BIN, op, *out, r, out);
    }
    return rc;
}

static int parse_concat(struct parser *p, struct tnode **out)
{
    struct tnode *first = NULL;
    int rc = parse_math2(p, &first);
    if (rc || !is_op(p, '~')) {
        *out = first;
        return rc;
    }
    struct tnode *n = node(p, TE_CONCAT, first->pos);
    if (!n || (rc = push_node(p, &n->l1, first)))
        return dream_error_code();
    while (is_op(p, '~')) {
        p->i++;
        struct tnode *r = NULL;
        if ((rc = parse_math2(p, &r)) || (rc = push_node(p, &n->l1, r)))
            return rc;
    }
    *out = n;
    return 0;
}

static int parse_math1(struct parser *p, struct tnode **out)
{
    int rc = parse_concat(p, out);
    while (!rc && (is_op(p, '+') || is_op(p, '-'))) {
        int op = cur(p)->op;
        p->i++;
        struct tnode *r = NULL;
        if (!(rc = parse_concat(p, &r)))
            rc = binop(p, TE_BIN, op, *out, r, out);
    }
    return rc;
}

static int parse_compare(struct parser *p, struct tnode **out)
{
    struct tnode *first = NULL;
    int rc = parse_math1(p, &first);
    if (rc)
        return rc;
    struct tnode *n = NULL;
    uint8_t ops[64];
    for (;;) {
        int op = 0;
        if (is_op(p, OP_EQ))
            op = CMP_EQ;
        else if (is_op(p, OP_NE))
            op = CMP_NE;
        else if (is_op(p, '<'))
            op = CMP_LT;
        else if (is_op(p, OP_LE))
            op = CMP_LE;
        else if (is_op(p, '>'))
            op = CMP_GT;
        else if (is_op(p, OP_GE))
            op = CMP_GE;
        else if (is_name(p, "in"))
            op = CMP_IN;
        else if (is_name(p, "not") && look(p)->type == TK_NAME && !strcmp(look(p)->p, "in")) {
            op = CMP_NOTIN;
            p->i++;
        }
        if (!op)
            break;
        p->i++;
        if (!n) {
            n = node(p, TE_CMP, first->pos);
            if (!n)
                return dream_error_code();
            n->a = first;
        }
        if (n->l1.n >= sizeof(ops))
            return fail_at(p, cur(p)->pos, "%s", "too many chained comparisons");
        ops[n->l1.n] = (uint8_t)op;
        struct tnode *r = NULL;
        if ((rc = parse_math1(p, &r)) || (rc = push_node(p, &n->l1, r)))
            return rc;
    }
    if (!n) {
        *out = first;
        return 0;
    }
    n->ops = tmpl_alloc(&p->t->arena, n->l1.n);
    if (!n->ops)
        return dream_error_code();
    memcpy(n->ops, ops, n->l1.n);
    *out = n;
    return 0;
}

static int parse_not(struct parser *p, struct tnode **out)
{
    if (is_name(p, "not")) {
        ENTER(p);
        struct tnode *n = node(p, TE_NOT, cur(p)->pos);
        if (!n)
            return dream_error_code();
        p->i++;
        int rc = parse_not(p, &n->a);
        p->depth--;
        *out = n;
        return rc;
    }
    return parse_compare(p, out);
}

static int parse_and(struct parser *p, struct tnode **out)
{
    int rc = parse_not(p, out);
    while (!rc && is_name(p, "and")) {
        p->i++;
        struct tnode *r = NULL;
        if (!(rc = parse_not(p, &r)))
            rc = binop(p, TE_AND, 0, *out, r, out);
    }
    return rc;
}

static int parse_or(struct parser *p, struct tnode **out)
{
    int rc = parse_and(p, out);
    while (!rc && is_name(p, "or")) {
        p->i++;
        struct tnode *r = NULL;
        if (!(rc = parse_and(p, &r)))
            rc = binop(p, TE_OR, 0, *out, r, out);
    }
    return rc;
}

static int parse_condexpr(struct parser *p, struct tnode **out)
{
    ENTER(p);
    int rc = parse_or(p, out);
    while (!rc && is_name(p, "if")) {
        struct tnode *n = node(p, TE_COND, cur(p)->pos);
        if (!n)
            return dream_error_code();
        p->i++;
        n->a = *out;
        if ((rc = parse_or(p, &n->b)))
            return rc;
        if (is_name(p, "else")) {
            p->i++;
            if ((rc = parse_condexpr(p, &n->c)))
                return rc;
        }
        *out = n;
    }
    p->depth--;
    return rc;
}

static int parse_expr(struct parser *p, bool condexpr, struct tnode **out)
{
    return condexpr ? parse_condexpr(p, out) : parse_or(p, out);
}

static bool tuple_end(struct parser *p)
{
    int t = cur(p)->type;
    return t == TK_VAR_END || t == TK_BLOCK_END || t == TK_EOF || is_op(p, ')');
}

static int parse_tuple(struct parser *p, bool condexpr, bool explicit_parens, struct tnode **out)
{
    size_t pos = cur(p)->pos;
    struct tnode *n = NULL, *first = NULL;
    int rc;
    for (;;) {
        if (first && (rc = expect_op(p, ',')))
            return rc;
        if (first && (tuple_end(p) || is_name(p, "if") || is_name(p, "recursive")))
            break;
        if (!first && tuple_end(p))
            break;
        struct tnode *e = NULL;
        if ((rc = parse_expr(p, condexpr, &e)))
            return rc;
        if (!first)
            first = e;
        if (is_op(p, ',')) {
            if (!n) {
                n = node(p, TE_TUPLE, pos);
                if (!n)
                    return dream_error_code();
            }
        }
        if (n && (rc = push_node(p, &n->l1, e)))
            return rc;
        if (!is_op(p, ','))
            break;
    }
    if (n) {
        *out = n;
        return 0;
    }
    if (first) {
        *out = first;
        return 0;
    }
    if (!explicit_parens)
        return unexpected(p, "an expression");
    n = node(p, TE_TUPLE, pos);
    if (!n)
        return dream_error_code();
    *out = n;
    return 0;
}

/* ---- statements ---- */

static int parse_body(struct parser *p, struct tnodes *body, const char *const *ends, const char **which);

/* Assignment targets: a name, `ns.attr` (when allowed), or names separated by commas. */
static int parse_targets(struct parser *p, struct tnode *n, bool allow_ns)
{
    int rc;
    if (allow_ns && cur(p)->type == TK_NAME && look(p)->type == TK_OP && look(p)->op == '.') {
        n->name = cur(p)->p;
        p->i += 2;
        if (cur(p)->type != TK_NAME)
            return unexpected(p, "an attribute name");
        n->flags |= TNF_NSATTR;
        rc = push_name(p, n, cur(p)->p);
        p->i++;
        return rc;
    }
    bool paren = is_op(p, '(');
    if (paren)
        p->i++;
    for (;;) {
        if (cur(p)->type != TK_NAME)
            return unexpected(p, "a variable name");
        if ((rc = push_name(p, n, cur(p)->p)))
            return rc;
        p->i++;
        if (!is_op(p, ','))
            break;
        p->i++;
        if (paren && is_op(p, ')'))
            break;
    }
    if (paren && (rc = expect_op(p, ')')))
        return rc;
    return 0;
}

static int end_block(struct parser *p, struct tnodes *body, const char *end)
{
    const char *ends[] = {end, NULL};
    const char *which;
    int rc = parse_body(p, body, ends, &which);
    return rc ? rc : expect_end(p);
}

static int parse_if(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_IF, pos);
    if (!n)
        return dream_error_code();
    int rc = parse_tuple(p, false, false, &n->a);
    if (rc || (rc = expect_end(p)))
        return rc;
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    const char *which;
    if ((rc = parse_body(p, &n->l1, ends, &which)))
        return rc;
    if (!strcmp(which, "elif")) {
        struct tnode *e = NULL;
        if ((rc = parse_if(p, cur(p)->pos, &e)) || (rc = push_node(p, &n->l2, e)))
            return rc;
    } else if (!strcmp(which, "else")) {
        if ((rc = expect_end(p)) || (rc = end_block(p, &n->l2, "endif")))
            return rc;
    } else if ((rc = expect_end(p))) {
        return rc;
    }
    *out = n;
    return 0;
}

static int parse_for(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_FOR, pos);
    if (!n)
        return dream_error_code();
    int rc = parse_targets(p, n, false);
    if (rc)
        return rc;
    if (!is_name(p, "in"))
        return unexpected(p, "'in'");
    p->i++;
    if ((rc = parse_tuple(p, false, false, &n->a)))
        return rc;
    if (is_name(p, "if")) {
        p->i++;
        if ((rc = parse_expr(p, true, &n->b)))
            return rc;
    }
    if (is_name(p, "recursive"))
        return fail_at(p, cur(p)->pos, "%s", "recursive loops are not supported");
    if ((rc = expect_end(p)))
        return rc;
    static const char *const ends[] = {"else", "endfor", NULL};
    const char *which;
    p->loops++;
    rc = parse_body(p, &n->l1, ends, &which);
    p->loops--;
    if (rc || (rc = expect_end(p)))
        return rc;
    if (!strcmp(which, "else")) {
        int saved = p->loops;
        p->loops = 0;
        rc = end_block(p, &n->l2, "endfor");
        p->loops = saved;
        if (rc)
            return rc;
    }
    *out = n;
    return 0;
}

static int parse_filter_chain(struct parser *p, struct tnode *n)
{
    int rc = 0;
    bool first = true;
    while (!rc && (first || is_op(p, '|'))) {
        if (!first)
            p->i++;
        first = false;
        struct tnode *f = NULL;
        if (!(rc = parse_filter(p, NULL, &f)))
            rc = push_node(p, &n->l2, f);
    }
    return rc;
}

static int parse_set(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_SET, pos);
    if (!n)
        return dream_error_code();
    int rc = parse_targets(p, n, true);
    if (rc)
        return rc;
    if (is_op(p, '=')) {
        p->i++;
        if ((rc = parse_tuple(p, true, false, &n->a)) || (rc = expect_end(p)))
            return rc;
        *out = n;
        return 0;
    }
    n->kind = TN_SETBLOCK;
    if (n->nnames != 1)
        return fail_at(p, pos, "%s", "a block set assigns exactly one name");
    if (is_op(p, '|')) {
        p->i++;
        if ((rc = parse_filter_chain(p, n)))
            return rc;
    }
    if ((rc = expect_end(p)) || (rc = end_block(p, &n->l1, "endset")))
        return rc;
    *out = n;
    return 0;
}

/* `(a, b=default, ...)` into names + l2 (NULL where no default). */
static int parse_signature(struct parser *p, struct tnode *n)
{
    int rc = expect_op(p, '(');
    while (!rc && !is_op(p, ')')) {
        if (n->nnames && (rc = expect_op(p, ',')))
            return rc;
        if (cur(p)->type != TK_NAME)
            return unexpected(p, "a parameter name");
        if ((rc = push_name(p, n, cur(p)->p)))
            return rc;
        p->i++;
        struct tnode *def = NULL;
        if (is_op(p, '=')) {
            p->i++;
            if ((rc = parse_expr(p, true, &def)))
                return rc;
        }
        rc = push_node(p, &n->l2, def);
    }
    return rc ? rc : expect_op(p, ')');
}

static int parse_macro(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_MACRO, pos);
    if (!n)
        return dream_error_code();
    if (cur(p)->type != TK_NAME)
        return unexpected(p, "a macro name");
    n->name = cur(p)->p;
    p->i++;
    int rc = parse_signature(p, n);
    if (rc || (rc = expect_end(p)))
        return rc;
    struct tnode *saved = p->macro;
    int loops = p->loops;
    p->macro = n;
    p->loops = 0;
    rc = end_block(p, &n->l1, "endmacro");
    p->macro = saved;
    p->loops = loops;
    *out = n;
    return rc;
}

static int parse_callblock(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_CALLBLOCK, pos);
    if (!n)
        return dream_error_code();
    int rc = 0;
    if (is_op(p, '(') && (rc = parse_signature(p, n)))
        return rc;
    if ((rc = parse_expr(p, true, &n->a)))
        return rc;
    if (n->a->kind != TE_CALL)
        return fail_at(p, pos, "%s", "expected a call after 'call'");
    if ((rc = expect_end(p)))
        return rc;
    struct tnode *saved = p->macro;
    int loops = p->loops;
    p->macro = n;
    p->loops = 0;
    rc = end_block(p, &n->l1, "endcall");
    p->macro = saved;
    p->loops = loops;
    *out = n;
    return rc;
}

static int parse_with(struct parser *p, size_t pos, struct tnode **out)
{
    struct tnode *n = node(p, TN_WITH, pos);
    if (!n)
        return dream_error_code();
    int rc = 0;
    while (!rc && cur(p)->type != TK_BLOCK_END) {
        if (n->nnames && (rc = expect_op(p, ',')))
            return rc;
        if (cur(p)->type != TK_NAME)
            return unexpected(p, "a variable name");
        if ((rc = push_name(p, n, cur(p)->p)))
            return rc;
        p->i++;
        struct tnode *v = NULL;
        if ((rc = expect_op(p, '=')) || (rc = parse_expr(p, true, &v)))
            return rc;
        rc = push_node(p, &n->l2, v);
    }
    if (rc || (rc = expect_end(p)) || (rc = end_block(p, &n->l1, "endwith")))
        return rc;
    *out = n;
    return 0;
}

static int parse_statement(struct parser *p, struct tnode **out)
{
    struct tmpl_token *tk = cur(p);
    size_t pos = tk->pos;
    if (tk->type != TK_NAME)
        return unexpected(p, "a tag name");
    const char *name = tk->p;
    p->i++;
    ENTER(p);
    int rc;
    struct tnode *n = NULL;
    if (!strcmp(name, "if")) {
        rc = parse_if(p, pos, &n);
    } else if (!strcmp(name, "for")) {
        rc = parse_for(p, pos, &n);
    } else if (!strcmp(name, "set")) {
        rc = parse_set(p, pos, &n);
    } else if (!strcmp(name, "macro")) {
        rc = parse_macro(p, pos, &n);
    } else if (!strcmp(name, "call")) {
        rc = parse_callblock(p, pos, &n);
    } else if (!strcmp(name, "filter")) {
        n = node(p, TN_FILTERBLOCK, pos);
        if (!n)
            return dream_error_code();
        rc = parse_filter_chain(p, n);
        if (!rc && !(rc = expect_end(p)))
            rc = end_block(p, &n->l1, "endfilter");
    } else if (!strcmp(name, "break") || !strcmp(name, "continue")) {
        if (!p->loops)
            return fail_at(p, pos, "'%s' outside of a loop", name);
        n = node(p, name[0] == 'b' ? TN_BREAK : TN_CONTINUE, pos);
        if (!n)
            return dream_error_code();
        rc = expect_end(p);
    } else if (!strcmp(name, "generation")) {
        n = node(p, TN_BODY, pos);
        if (!n)
            return dream_error_code();
        if (!(rc = expect_end(p)))
            rc = end_block(p, &n->l1, "endgeneration");
    } else if (!strcmp(name, "with")) {
        rc = parse_with(p, pos, &n);
    } else {
        return fail_at(p, pos, "encountered unknown tag '%s'", name);
    }
    p->depth--;
    *out = n;
    return rc;
}

static int parse_body(struct parser *p, struct tnodes *body, const char *const *ends, const char **which)
{
    for (;;) {
        struct tmpl_token *tk = cur(p);
        struct tnode *n = NULL;
        int rc;
        switch (tk->type) {
        case TK_EOF:
            if (ends) {
                char msg[96];
                size_t last = 0;
                while (ends[last + 1])
                    last++;
                snprintf(msg, sizeof(msg), "unexpected end of template; expected '%s'", ends[last]);
                return fail_at(p, tk->pos, "%s", msg);
            }
            return 0;
        case TK_DATA: {
            n = node(p, TN_TEXT, tk->pos);
            struct tmpl_str *s = tmpl_alloc(&p->t->arena, sizeof(*s));
            if (!n || !s)
                return dream_error_code();
            s->p = tk->p;
            s->len = tk->len;
            n->lit = tmpl_str_lit(s);
            p->i++;
            break;
        }
        case TK_VAR_BEGIN:
            n = node(p, TN_OUTPUT, tk->pos);
            if (!n)
                return dream_error_code();
            p->i++;
            if ((rc = parse_tuple(p, true, false, &n->a)))
                return rc;
            if (cur(p)->type != TK_VAR_END)
                return unexpected(p, "end of print statement ('}}')");
            p->i++;
            break;
        case TK_BLOCK_BEGIN:
            p->i++;
            if (cur(p)->type == TK_NAME && ends) {
                for (size_t k = 0; ends[k]; k++)
                    if (!strcmp(cur(p)->p, ends[k])) {
                        *which = ends[k];
                        p->i++;
                        return 0;
                    }
            }
            if ((rc = parse_statement(p, &n)))
                return rc;
            break;
        default: return unexpected(p, "template text or a tag");
        }
        if (n && (rc = push_node(p, body, n)))
            return rc;
    }
}

/* Unknown filters and tests are errors at parse time except inside an `if` test or body, or a
 * ternary (where Jinja2 defers them); for/macro/call bodies start a fresh, strict frame. */
static int check_names(struct parser *p, const struct tnode *n, bool soft);

static int check_list(struct parser *p, const struct tnodes *l, bool soft)
{
    for (size_t i = 0; i < l->n; i++) {
        int rc = check_names(p, l->v[i], soft);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_names(struct parser *p, const struct tnode *n, bool soft)
{
    if (!n)
        return 0;
    int rc;
    if (!soft && n->kind == TE_FILTER && !n->filter)
        return fail_at(p, n->pos, "no filter named '%s'", n->name);
    if (!soft && n->kind == TE_TEST && !n->test)
        return fail_at(p, n->pos, "no test named '%s'", n->name);
    bool s = soft;
    bool body_soft = soft;
    if (n->kind == TN_IF || n->kind == TE_COND)
        s = body_soft = true;
    if (n->kind == TN_FOR || n->kind == TN_MACRO || n->kind == TN_CALLBLOCK)
        body_soft = false;
    if ((rc = check_names(p, n->a, s)) || (rc = check_names(p, n->b, s)) || (rc = check_names(p, n->c, s)))
        return rc;
    if ((rc = check_list(p, &n->l1, body_soft)))
        return rc;
    return check_list(p, &n->l2, body_soft);
}

int tmpl_parse(dream_template *t)
{
    struct parser p = {.t = t};
    int rc = tmpl_lex(&t->arena, t->src, t->len, &p.toks);
    if (!rc)
        rc = parse_body(&p, &t->body, NULL, NULL);
    if (!rc)
        rc = check_list(&p, &t->body, false);
    free(p.toks.v);
    return rc;
}
