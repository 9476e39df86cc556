/*
 * lexer.c — splits a template into text and tag tokens the way Jinja2's lexer does with
 * Hugging Face's settings: trim_blocks (drop the newline after a block or comment tag),
 * lstrip_blocks (drop the indentation before a block or comment tag), `-`/`+` whitespace
 * control, raw blocks, and expression tokens inside tags (tag ends count only when brackets
 * are balanced, so `{{ {'a': {'b': 1}} }}` works).
 */
#include <stdlib.h>
#include <string.h>

#include "template/internal.h"

struct lexer {
    struct tmpl_arena *a;
    const char *src;
    size_t len;
    size_t pos;
    struct tmpl_tokens *toks;
};

void tmpl_linecol(const char *src, size_t len, size_t pos, int *line, int *col)
{
    int l = 1, c = 1;
    if (pos > len)
        pos = len;
    for (size_t i = 0; i < pos; i++) {
        if (src[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)src[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int lex_fail(struct lexer *lx, size_t pos, const char *msg, const char *arg)
{
    int line, col;
    tmpl_linecol(lx->src, lx->len, pos, &line, &col);
    return dream_error_set(DREAM_EFORMAT, "template:%d:%d: %s%s", line, col, msg, arg ? arg : "");
}

static struct tmpl_token *push(struct lexer *lx, int type, size_t pos)
{
    struct tmpl_tokens *t = lx->toks;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct tmpl_token *v = realloc(t->v, cap * sizeof(*v));
        if (!v) {
            dream_error_set(DREAM_ENOMEM, "template: out of memory for tokens");
            return NULL;
        }
        t->v = v;
        t->cap = cap;
    }
    struct tmpl_token *tk = &t->v[t->n++];
    memset(tk, 0, sizeof(*tk));
    tk->type = (uint8_t)type;
    tk->pos = (uint32_t)pos;
    return tk;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
static bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Emits template text [b, e) starting at source offset b. */
static int emit_data(struct lexer *lx, size_t b, size_t e)
{
    if (e <= b)
        return 0;
    struct tmpl_token *tk = push(lx, TK_DATA, b);
    if (!tk)
        return DREAM_ENOMEM;
    tk->p = tmpl_strndup(lx->a, lx->src + b, e - b);
    tk->len = e - b;
    return tk->p ? 0 : DREAM_ENOMEM;
}

/* Applies the whitespace rules that the tag at `tag` imposes on the text [b, *e) before it:
 * `-` strips all trailing whitespace; otherwise lstrip_blocks strips the indentation before
 * a block/comment tag when only whitespace stands between it and the start of its line. */
static void strip_before(struct lexer *lx, size_t b, size_t *e, char kind, char ctrl)
{
    const char *s = lx->src;
    if (ctrl == '-') {
        while (*e > b && is_ws(s[*e - 1]))
            (*e)--;
        return;
    }
    if (ctrl == '+' || kind == '{')
        return;
    size_t l = *e;
    while (l > b && s[l - 1] != '\n')
        l--;
    bool line_start = l > b || b == 0 || s[b - 1] == '\n';
    if (!line_start || l == *e)
        return;
    for (size_t i = l; i < *e; i++)
        if (!is_ws(s[i]))
            return;
    *e = l;
}

/* Skips what a tag end leaves behind: all whitespace after `-`, one newline with trim_blocks. */
static size_t skip_after(struct lexer *lx, size_t pos, char ctrl, bool block)
{
    if (ctrl == '-') {
        while (pos < lx->len && is_ws(lx->src[pos]))
            pos++;
    } else if (ctrl != '+' && block && pos < lx->len && lx->src[pos] == '\n') {
        pos++;
    }
    return pos;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Lexes a quoted string at lx->pos, decoding Python escapes. */
static int lex_string(struct lexer *lx)
{
    const char *s = lx->src;
    size_t start = lx->pos;
    char q = s[lx->pos++];
    size_t b = lx->pos;
    while (lx->pos < lx->len && s[lx->pos] != q) {
        if (s[lx->pos] == '\\' && lx->pos + 1 < lx->len)
            lx->pos++;
        lx->pos++;
    }
    if (lx->pos >= lx->len)
        return lex_fail(lx, start, "unexpected end of string", NULL);
    size_t e = lx->pos++;
    char *out = tmpl_alloc(lx->a, e - b + 1);
    if (!out)
        return DREAM_ENOMEM;
    size_t n = 0;
    for (size_t i = b; i < e; i++) {
        char c = s[i];
        if (c != '\\' || i + 1 >= e) {
            out[n++] = c;
            continue;
        }
        char x = s[++i];
        int digits = 0;
        switch (x) {
        case '\n': break;
        case '\\': out[n++] = '\\'; break;
        case '\'': out[n++] = '\''; break;
        case '"': out[n++] = '"'; break;
        case 'a': out[n++] = '\a'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'v': out[n++] = '\v'; break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default:
            if (x >= '0' && x <= '7') {
                uint32_t v = 0;
                int k = 0;
                while (k < 3 && i < e && s[i] >= '0' && s[i] <= '7') {
                    v = v * 8 + (uint32_t)(s[i] - '0');
                    i++;
                    k++;
                }
                i--;
                n += tmpl_put_utf8(out + n, v);
            } else {
                out[n++] = '\\';
                out[n++] = x;
            }
        }
        if (digits) {
            uint32_t v = 0;
            for (int k = 0; k < digits; k++) {
                int h = i + 1 < e ? hexval(s[i + 1]) : -1;
                if (h < 0)
                    return lex_fail(lx, i, "truncated \\x, \\u or \\U escape in a string", NULL);
                v = v * 16 + (uint32_t)h;
                i++;
            }
            if (v > 0x10FFFF)
                return lex_fail(lx, i, "illegal Unicode character in a string escape", NULL);
            n += tmpl_put_utf8(out + n, v);
        }
    }
    /* an escape can grow (\7 -> 1 byte, \x80 -> 2 bytes from 4): out is big enough since
     * every escape is at least as long as its UTF-8 encoding */
    out[n] = 0;
    struct tmpl_token *tk = push(lx, TK_STRING, start);
    if (!tk)
        return DREAM_ENOMEM;
    tk->p = out;
    tk->len = n;
    return 0;
}

static int lex_number(struct lexer *lx)
{
    const char *s = lx->src;
    size_t start = lx->pos, i = lx->pos;
    char buf[128];
    size_t n = 0;
    if (s[i] == '0' && i + 1 < lx->len && strchr("bBoOxX", s[i + 1]) && s[i + 1]) {
        int base = (s[i + 1] | 0x20) == 'b' ? 2 : (s[i + 1] | 0x20) == 'o' ? 8 : 16;
        i += 2;
        int64_t v = 0;
        bool any = false;
        for (; i < lx->len; i++) {
            int h = s[i] == '_' ? -2 : hexval(s[i]);
            if (h == -2)
                continue;
            if (h < 0 || h >= base)
                break;
            if (v > (INT64_MAX - h) / base)
                return lex_fail(lx, start, "integer literal too large", NULL);
            v = v * base + h;
            any = true;
        }
        if (!any)
            return lex_fail(lx, start, "bad integer literal", NULL);
        struct tmpl_token *tk = push(lx, TK_INT, start);
        if (!tk)
            return DREAM_ENOMEM;
        tk->ival = v;
        lx->pos = i;
        return 0;
    }
    bool is_float = false;
    bool after_dot = start > 0 && s[start - 1] == '.';
    /* digits (underscores dropped), then an optional fraction and exponent */
#define NUM_PUT(c)                                                                                 \
    do {                                                                                           \
        if (n >= sizeof(buf) - 1)                                                                  \
            return lex_fail(lx, start, "number literal too long", NULL);                           \
        buf[n++] = (c);                                                                            \
    } while (0)
    while (i < lx->len && (is_digit(s[i]) || (s[i] == '_' && i + 1 < lx->len && is_digit(s[i + 1])))) {
        if (s[i] != '_')
            NUM_PUT(s[i]);
        i++;
    }
    if (!after_dot && i + 1 < lx->len && s[i] == '.' && is_digit(s[i + 1])) {
        is_float = true;
        NUM_PUT('.');
        i++;
        while (i < lx->len && (is_digit(s[i]) || (s[i] == '_' && i + 1 < lx->len && is_digit(s[i + 1])))) {
            if (s[i] != '_')
                NUM_PUT(s[i]);
            i++;
        }
    }
    if (!after_dot && i < lx->len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < lx->len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < lx->len && is_digit(s[j])) {
            is_float = true;
            NUM_PUT('e');
            for (size_t k = i + 1; k < j; k++)
                NUM_PUT(s[k]);
            i = j;
            while (i < lx->len && (is_digit(s[i]) || s[i] == '_')) {
                if (s[i] != '_')
                    NUM_PUT(s[i]);
                i++;
            }
        }
    }
#undef NUM_PUT
    buf[n] = 0;
    struct tmpl_token *tk = push(lx, is_float ? TK_FLOAT : TK_INT, start);
    if (!tk)
        return DREAM_ENOMEM;
    if (is_float) {
        tk->fval = strtod(buf, NULL);
    } else {
        int64_t v = 0;
        for (size_t k = 0; k < n; k++) {
            if (v > (INT64_MAX - (buf[k] - '0')) / 10)
                return lex_fail(lx, start, "integer literal too large", NULL);
            v = v * 10 + (buf[k] - '0');
        }
        tk->ival = v;
    }
    lx->pos = i;
    return 0;
}

static int lex_op(struct lexer *lx)
{
    const char *s = lx->src;
    size_t i = lx->pos;
    char c = s[i], d = i + 1 < lx->len ? s[i + 1] : 0;
    int op = 0;
    size_t n = 1;
    if (c == '/' && d == '/')
        op = OP_FLOORDIV, n = 2;
    else if (c == '*' && d == '*')
        op = OP_POW, n = 2;
    else if (c == '=' && d == '=')
        op = OP_EQ, n = 2;
    else if (c == '!' && d == '=')
        op = OP_NE, n = 2;
    else if (c == '<' && d == '=')
        op = OP_LE, n = 2;
    else if (c == '>' && d == '=')
        op = OP_GE, n = 2;
    else if (c && strchr("+-/*%~[](){}=<>.:|,;", c))
        op = c;
    if (!op) {
        char ch[8];
        if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F)
            ch[0] = '\'', ch[1] = c, ch[2] = '\'', ch[3] = 0;
        else
            strcpy(ch, "(byte)");
        return lex_fail(lx, i, "unexpected character ", ch);
    }
    struct tmpl_token *tk = push(lx, TK_OP, i);
    if (!tk)
        return DREAM_ENOMEM;
    tk->op = (uint8_t)op;
    lx->pos = i + n;
    return 0;
}

/* Lexes the inside of a {{ }} or {% %} tag up to its end; returns the end's control char. */
static int lex_tag(struct lexer *lx, bool block, size_t tag_start, char *end_ctrl)
{
    const char *s = lx->src;
    int depth = 0;
    for (;;) {
        while (lx->pos < lx->len && is_ws(s[lx->pos]))
            lx->pos++;
        if (lx->pos >= lx->len)
            return lex_fail(lx, tag_start, block ? "unclosed block tag (missing '%}')"
                                                 : "unclosed variable tag (missing '}}')", NULL);
        size_t i = lx->pos;
        if (depth == 0) {
            char ctrl = 0;
            size_t j = i;
            if ((s[j] == '-' || s[j] == '+') && j + 1 < lx->len) {
                ctrl = s[j];
                j++;
            }
            bool end = block ? (j + 1 < lx->len && s[j] == '%' && s[j + 1] == '}')
                             : (ctrl != '+' && j + 1 < lx->len && s[j] == '}' && s[j + 1] == '}');
            if (end) {
                struct tmpl_token *tk = push(lx, block ? TK_BLOCK_END : TK_VAR_END, i);
                if (!tk)
                    return DREAM_ENOMEM;
                lx->pos = j + 2;
                *end_ctrl = ctrl;
                return 0;
            }
        }
        char c = s[i];
        int rc;
        if (c == '\'' || c == '"') {
            rc = lex_string(lx);
        } else if (is_digit(c)) {
            rc = lex_number(lx);
        } else if (is_name_start(c)) {
            size_t e = i;
            while (e < lx->len && (is_name_start(s[e]) || is_digit(s[e])))
                e++;
            struct tmpl_token *tk = push(lx, TK_NAME, i);
            if (!tk)
                return DREAM_ENOMEM;
            tk->p = tmpl_strndup(lx->a, s + i, e - i);
            tk->len = e - i;
            if (!tk->p)
                return DREAM_ENOMEM;
            lx->pos = e;
            rc = 0;
        } else {
            rc = lex_op(lx);
            if (!rc) {
                uint8_t op = lx->toks->v[lx->toks->n - 1].op;
                if (op == '(' || op == '[' || op == '{')
                    depth++;
                else if ((op == ')' || op == ']' || op == '}') && depth > 0)
                    depth--;
            }
        }
        if (rc)
            return rc;
    }
}

/* Matches `{%[-+]? raw [-+]?%}` (or endraw) at pos; sets the controls and the end offset. */
static bool match_raw(struct lexer *lx, size_t pos, const char *word, char *c1, char *c2, size_t *end)
{
    const char *s = lx->src;
    size_t i = pos + 2, n = strlen(word);
    *c1 = *c2 = 0;
    if (i < lx->len && (s[i] == '-' || s[i] == '+'))
        *c1 = s[i++];
    while (i < lx->len && is_ws(s[i]))
        i++;
    if (i + n > lx->len || memcmp(s + i, word, n) != 0)
        return false;
    i += n;
    if (i < lx->len && (is_name_start(s[i]) || is_digit(s[i])))
        return false;
    while (i < lx->len && is_ws(s[i]))
        i++;
    if (i < lx->len && (s[i] == '-' || s[i] == '+'))
        *c2 = s[i++];
    if (i + 1 >= lx->len || s[i] != '%' || s[i + 1] != '}')
        return false;
    *end = i + 2;
    return true;
}

int tmpl_lex(struct tmpl_arena *a, const char *src, size_t len, struct tmpl_tokens *toks)
{
    struct lexer lx = {.a = a, .src = src, .len = len, .pos = 0, .toks = toks};
    int rc;
    while (lx.pos < len) {
        size_t b = lx.pos, t = b;
        while (t + 1 < len && !(src[t] == '{' && (src[t + 1] == '{' || src[t + 1] == '%' || src[t + 1] == '#')))
            t++;
        if (t + 1 >= len) {
            if ((rc = emit_data(&lx, b, len)))
                return rc;
            break;
        }
        char kind = src[t + 1];
        char ctrl = t + 2 < len && (src[t + 2] == '-' || src[t + 2] == '+') ? src[t + 2] : 0;
        size_t e = t;
        strip_before(&lx, b, &e, kind, ctrl);
        if ((rc = emit_data(&lx, b, e)))
            return rc;
        char c1, c2;
        size_t rend;
        if (kind == '#') {
            size_t i = t + 2;
            while (i + 1 < len && !(src[i] == '#' && src[i + 1] == '}'))
                i++;
            if (i + 1 >= len)
                return lex_fail(&lx, t, "missing end of comment tag ('#}')", NULL);
            char ec = i > t + 2 && (src[i - 1] == '-' || src[i - 1] == '+') ? src[i - 1] : 0;
            lx.pos = skip_after(&lx, i + 2, ec, true);
        } else if (kind == '%' && match_raw(&lx, t, "raw", &c1, &c2, &rend)) {
            size_t cb = skip_after(&lx, rend, c2, false), ce = cb;
            size_t endtag = 0, endend = 0;
            char d1 = 0, d2 = 0;
            for (ce = cb; ce + 1 < len; ce++)
                if (src[ce] == '{' && src[ce + 1] == '%' && match_raw(&lx, ce, "endraw", &d1, &d2, &endend)) {
                    endtag = ce;
                    break;
                }
            if (!endend)
                return lex_fail(&lx, t, "missing end of raw directive ({% endraw %})", NULL);
            size_t ee = endtag;
            strip_before(&lx, cb, &ee, '%', d1);
            if ((rc = emit_data(&lx, cb, ee)))
                return rc;
            lx.pos = skip_after(&lx, endend, d2, true);
        } else {
            bool block = kind == '%';
            struct tmpl_token *tk = push(&lx, block ? TK_BLOCK_BEGIN : TK_VAR_BEGIN, t);
            if (!tk)
                return DREAM_ENOMEM;
            lx.pos = t + 2 + (ctrl ? 1 : 0);
            char ectrl = 0;
            if ((rc = lex_tag(&lx, block, t, &ectrl)))
                return rc;
            lx.pos = skip_after(&lx, lx.pos, ectrl, block);
        }
    }
    return push(&lx, TK_EOF, len) ? 0 : DREAM_ENOMEM;
}
