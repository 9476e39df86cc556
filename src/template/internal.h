/*
 * internal.h — the Jinja engine's shared types: arena, values, tokens, syntax tree, runtime.
 *
 * Ownership: a parsed template owns one arena holding its syntax tree and literal strings. A
 * render owns another arena holding every value it creates; nothing of a render outlives it
 * except the output, which is malloc'd. Values are immutable once built (namespaces excepted),
 * so they are shared freely by pointer.
 */
#ifndef DREAM_TEMPLATE_INTERNAL_H
#define DREAM_TEMPLATE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dream/error.h"
#include "dream/template.h"
#include "util/buf.h"

/* ---- arena (arena.c) ---- */

struct tmpl_chunk;
struct tmpl_arena {
    struct tmpl_chunk *head;
    size_t used;  /* bytes handed out, all chunks */
    size_t limit; /* 0 = unlimited */
};

/* Returns n zeroed bytes (8-aligned) that live until tmpl_arena_free, or NULL with the error
 * set (DREAM_ENOMEM, or DREAM_ELIMIT past the limit). */
void *tmpl_alloc(struct tmpl_arena *a, size_t n);
char *tmpl_strndup(struct tmpl_arena *a, const char *s, size_t n);
void tmpl_arena_free(struct tmpl_arena *a);

/* ---- values (value.c) ---- */

enum tmpl_type {
    TV_UNDEF,
    TV_NONE,
    TV_BOOL,
    TV_INT,
    TV_FLOAT,
    TV_STR,
    TV_LIST,
    TV_DICT,
    TV_FUNC,
    TV_LOOP,
};

#define TVF_TUPLE 1u /* a list that prints as a tuple */
#define TVF_SAFE 2u  /* a string marked safe (Markup) */
#define TVF_NS 4u    /* a dict that is a namespace(): attributes assignable */
#define TVF_GEN 8u   /* a list that is a Python generator/iterator: single pass, no len(), always true */

/* A string; spans are the caller-data byte ranges within it, relative to p. */
struct tmpl_str {
    const char *p; /* NUL-terminated */
    size_t len;
    struct dream_span *spans;
    size_t nspans;
};

typedef struct tval {
    uint8_t type;
    uint8_t flags;
    union {
        bool b;
        int64_t i;
        double f;
        struct tmpl_str *s; /* TV_STR; for TV_UNDEF the name that was missing (may be NULL) */
        struct tmpl_list *l;
        struct tmpl_dict *d;
        struct tmpl_func *fn;
        struct tmpl_loop *loop;
    } u;
} tval;

struct tmpl_list {
    size_t n;
    tval *v;
    size_t pos; /* TVF_GEN: items before pos were consumed */
};

struct tmpl_dict {
    size_t n, cap;
    tval *k;
    tval *v;
};

struct tmpl_rt;
struct tnode;

struct tmpl_args {
    size_t npos;
    tval *pos;
    size_t nkw;
    const char **kwn;
    tval *kwv;
};

enum tmpl_fkind { TF_BUILTIN, TF_METHOD, TF_MACRO, TF_CALLER, TF_CYCLE, TF_UNSAFE };

typedef int (*tmpl_builtin_fn)(struct tmpl_rt *rt, const struct tnode *at, tval self,
                               struct tmpl_args *args, tval *out);

struct tmpl_scope;
struct tmpl_func {
    uint8_t kind;
    const char *name;
    tmpl_builtin_fn fn; /* TF_BUILTIN, TF_METHOD, TF_CYCLE */
    tval self;          /* TF_METHOD: the bound object */
    const struct tnode *node; /* TF_MACRO, TF_CALLER: the definition */
    struct tmpl_scope *closure;
    tval caller; /* TF_CALLER passed to a macro called from a call block */
};

struct tmpl_loop {
    struct tmpl_list *items;
    size_t index0;
    int depth;
};

static inline tval tv_undef(void) { tval v = {.type = TV_UNDEF}; return v; }
static inline tval tv_none(void) { tval v = {.type = TV_NONE}; return v; }
static inline tval tv_bool(bool b) { tval v = {.type = TV_BOOL}; v.u.b = b; return v; }
static inline tval tv_int(int64_t i) { tval v = {.type = TV_INT}; v.u.i = i; return v; }
static inline tval tv_float(double f) { tval v = {.type = TV_FLOAT}; v.u.f = f; return v; }

/* A growable string with caller-data spans, malloc-backed; the output sink and the way every
 * derived string is built. Appends fail (DREAM_ELIMIT) past the output limit. */
struct tmpl_sb {
    struct dbuf text;
    struct dream_span *spans;
    size_t nspans, cap;
    size_t limit;
};

int tmpl_sb_put(struct tmpl_sb *sb, const char *p, size_t n, bool data);
int tmpl_sb_puts(struct tmpl_sb *sb, const char *s);
/* Appends a string value with its spans. */
int tmpl_sb_str(struct tmpl_sb *sb, const struct tmpl_str *s);
/* Appends s[from, to) with the spans inside that range. */
int tmpl_sb_sub(struct tmpl_sb *sb, const struct tmpl_str *s, size_t from, size_t to);
/* Moves the builder's content into a string value in the render arena; frees sb. */
int tmpl_sb_finish(struct tmpl_rt *rt, struct tmpl_sb *sb, tval *out);
void tmpl_sb_free(struct tmpl_sb *sb);
void tmpl_sb_init(struct tmpl_rt *rt, struct tmpl_sb *sb);

/* String values (in the render arena). */
int tmpl_str_new(struct tmpl_rt *rt, const char *p, size_t n, bool data, tval *out);
tval tmpl_str_lit(struct tmpl_str *s); /* wraps an existing string (template text) */
/* s[from,to) keeping spans. */
int tmpl_str_sub(struct tmpl_rt *rt, const struct tmpl_str *s, size_t from, size_t to, tval *out);
bool tmpl_str_has_data(const struct tmpl_str *s);

int tmpl_list_new(struct tmpl_rt *rt, size_t n, tval *out);
int tmpl_dict_new(struct tmpl_rt *rt, size_t cap, tval *out);
/* Sets key (replacing an equal key in place); grows the dict. */
int tmpl_dict_set(struct tmpl_rt *rt, struct tmpl_dict *d, tval key, tval val);
/* Looks up a string key; returns NULL when absent. */
tval *tmpl_dict_get(const struct tmpl_dict *d, tval key);
tval *tmpl_dict_gets(const struct tmpl_dict *d, const char *key);

bool tmpl_truthy(tval v);
bool tmpl_equal(tval a, tval b);
/* Three-way compare for <, sort, min; fails (type error) for unorderable pairs. */
int tmpl_compare(struct tmpl_rt *rt, const struct tnode *at, tval a, tval b, int *cmp);
const char *tmpl_type_name(tval v);

/* Python str(v) / repr(v) appended to sb. */
int tmpl_write_str(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v);
int tmpl_write_repr(struct tmpl_rt *rt, struct tmpl_sb *sb, tval v);
/* str(v) as a value (strings returned as is). */
int tmpl_to_str(struct tmpl_rt *rt, tval v, tval *out);
/* Python's repr(float). */
void tmpl_format_float(double f, char buf[40]);

struct tmpl_json_opts {
    const char *indent; /* NULL = compact line; else the indent unit */
    const char *item_sep;
    const char *key_sep;
    bool ensure_ascii;
    bool sort_keys;
};
int tmpl_write_json(struct tmpl_rt *rt, const struct tnode *at, struct tmpl_sb *sb, tval v,
                    const struct tmpl_json_opts *o, int level);

/* UTF-8 helpers. */
size_t tmpl_utf8_len(const char *p, size_t n);
/* Byte offset of the i-th code point (n when past the end). */
size_t tmpl_utf8_offset(const char *p, size_t n, size_t i);
/* Decodes one code point at p (n bytes left); returns its byte length (1 on invalid). */
size_t tmpl_utf8_decode(const char *p, size_t n, uint32_t *cp);

/* ---- lexer (lexer.c) ---- */

enum tmpl_tok {
    TK_EOF,
    TK_DATA,        /* template text */
    TK_VAR_BEGIN,   /* {{ */
    TK_VAR_END,     /* }} */
    TK_BLOCK_BEGIN, /* {% */
    TK_BLOCK_END,   /* %} */
    TK_NAME,
    TK_STRING,
    TK_INT,
    TK_FLOAT,
    TK_OP,
};

struct tmpl_token {
    uint8_t type;
    uint8_t op;      /* TK_OP: the operator code (see lexer.c), 2-char ops are coded >= 128 */
    uint32_t pos;    /* byte offset in the normalized source */
    const char *p;   /* TK_NAME, TK_DATA, TK_STRING (decoded): text, NUL-terminated */
    size_t len;
    int64_t ival;
    double fval;
};

/* Operators: single characters are their own code; these are the two-character ones. */
enum { OP_FLOORDIV = 128, OP_POW, OP_EQ, OP_NE, OP_LE, OP_GE };

struct tmpl_tokens {
    struct tmpl_token *v;
    size_t n, cap;
};

/* Tokenizes src (already newline-normalized) into toks; strings and names are copied into a.
 * Returns 0 or DREAM_EFORMAT with "template:L:C: ..." set. */
int tmpl_lex(struct tmpl_arena *a, const char *src, size_t len, struct tmpl_tokens *toks);
/* Formats "template:L:C: " for a byte offset of src. */
void tmpl_linecol(const char *src, size_t len, size_t pos, int *line, int *col);

/* ---- syntax tree (parser.c) ---- */

enum tnode_kind {
    TN_TEXT,
    TN_OUTPUT,
    TN_IF,
    TN_FOR,
    TN_SET,
    TN_SETBLOCK,
    TN_MACRO,
    TN_CALLBLOCK,
    TN_FILTERBLOCK,
    TN_BREAK,
    TN_CONTINUE,
    TN_BODY,
    TN_WITH,
    TE_LIT,
    TE_NAME,
    TE_ATTR,
    TE_ITEM,
    TE_SLICE,
    TE_CALL,
    TE_FILTER,
    TE_TEST,
    TE_NOT,
    TE_NEG,
    TE_POS,
    TE_BIN,
    TE_CMP,
    TE_AND,
    TE_OR,
    TE_COND,
    TE_LIST,
    TE_TUPLE,
    TE_DICT,
    TE_CONCAT,
};

enum { CMP_EQ = 1, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_IN, CMP_NOTIN };

#define TNF_VARARGS 1u
#define TNF_KWARGS 2u
#define TNF_CALLER 4u
#define TNF_NSATTR 8u

struct tnodes {
    struct tnode **v;
    size_t n, cap;
};

struct tmpl_filter_def;
struct tmpl_test_def;

struct tnode {
    uint8_t kind;
    uint8_t op;
    uint8_t neg;
    uint8_t flags;
    uint32_t pos;
    struct tnode *a, *b, *c;
    struct tnodes l1, l2;
    const char *name;
    const char **names;
    size_t nnames;
    uint8_t *ops; /* TE_CMP: one per l1 operand */
    tval lit;
    const struct tmpl_filter_def *filter;
    const struct tmpl_test_def *test;
};

struct dream_template {
    struct tmpl_arena arena;
    char *src; /* normalized source */
    size_t len;
    struct tnodes body;
};

int tmpl_parse(dream_template *t);

/* ---- filters and tests (filters.c), methods and globals (methods.c) ---- */

typedef int (*tmpl_filter_fn)(struct tmpl_rt *rt, const struct tnode *at, tval in,
                              struct tmpl_args *args, tval *out);
typedef int (*tmpl_test_fn)(struct tmpl_rt *rt, const struct tnode *at, tval in,
                            struct tmpl_args *args, bool *out);

struct tmpl_filter_def {
    const char *name;
    tmpl_filter_fn fn;
};
struct tmpl_test_def {
    const char *name;
    tmpl_test_fn fn;
};

const struct tmpl_filter_def *tmpl_find_filter(const char *name);
const struct tmpl_test_def *tmpl_find_test(const char *name);
/* Looks up obj.name as a method (str.strip, dict.get, ...); sets *found. */
int tmpl_get_method(struct tmpl_rt *rt, tval obj, const char *name, tval *out, bool *found);
/* Shared string helpers (methods.c); results keep caller-data spans where text is kept. */
bool tmpl_is_space(uint32_t c);
bool tmpl_is_alpha(uint32_t c);
uint32_t tmpl_upper_cp(uint32_t c);
uint32_t tmpl_lower_cp(uint32_t c);
size_t tmpl_put_utf8(char *o, uint32_t cp);
/* mode&1 strips the left, mode&2 the right; chars NULL strips whitespace. */
int tmpl_strip(struct tmpl_rt *rt, const struct tmpl_str *s, const struct tmpl_str *chars, int mode, tval *out);
/* mode: 'u' upper, 'l' lower, 'c' capitalize, 't' str.title, 'j' Jinja2's |title. */
int tmpl_case(struct tmpl_rt *rt, const struct tmpl_str *s, int mode, tval *out);
int tmpl_replace(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_str *s, tval oldv, tval newv,
                 int64_t count, tval *out);
int tmpl_splitlines(struct tmpl_rt *rt, const struct tmpl_str *s, bool keepends, tval *out);
/* Python's `fmt % args` (filters.c). */
int tmpl_percent_format(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_str *fmt, tval args,
                        tval *out);
/* The global functions: range, dict, namespace, raise_exception, strftime_now, cycler... */
bool tmpl_get_global(struct tmpl_rt *rt, const char *name, tval *out);

/* Argument access for builtins: positional index i or keyword name; returns true if given. */
bool tmpl_arg(const struct tmpl_args *a, size_t i, const char *name, tval *out);
/* Fails when more than max positional args, or a keyword outside names (NULL-terminated). */
int tmpl_check_args(struct tmpl_rt *rt, const struct tnode *at, const struct tmpl_args *a,
                    size_t max_pos, const char *const *names, const char *what);

/* ---- evaluation (eval.c) ---- */

struct tmpl_var {
    const char *name;
    tval v;
};

struct tmpl_scope {
    struct tmpl_scope *parent;
    struct tmpl_var *vars;
    size_t n, cap;
};

struct tmpl_rt {
    const dream_template *t;
    struct tmpl_arena arena;
    const struct dream_template_params *params;
    struct tmpl_scope *root;
    struct tmpl_dict *ctx; /* the context variables */
    int depth;
    int expr_depth;
    int64_t iterations;
};

/* Sets a "template:L:C: message" error (DREAM_EFORMAT) located at node `at` (may be NULL). */
int tmpl_fail(struct tmpl_rt *rt, const struct tnode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tmpl_fail_code(struct tmpl_rt *rt, int code, const struct tnode *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

int tmpl_eval(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnode *n, tval *out);
int tmpl_exec_body(struct tmpl_rt *rt, struct tmpl_scope *sc, const struct tnodes *body,
                   struct tmpl_sb *out);
/* Calls a callable value. */
int tmpl_call(struct tmpl_rt *rt, const struct tnode *at, tval fn, struct tmpl_args *args,
              tval *out);
/* Attribute/item access with Jinja2's rules (getattr falls back to getitem and vice versa). */
int tmpl_getattr(struct tmpl_rt *rt, const struct tnode *at, tval obj, const char *name, tval *out);
int tmpl_getitem(struct tmpl_rt *rt, const struct tnode *at, tval obj, tval key, tval *out);
/* Turns an iterable into a list (strings to characters, dicts to keys, undefined to []). */
int tmpl_iterate(struct tmpl_rt *rt, const struct tnode *at, tval v, struct tmpl_list **out);
/* Applies a filter / test by name at runtime (map, select). */
int tmpl_apply_filter(struct tmpl_rt *rt, const struct tnode *at, const char *name, tval in,
                      struct tmpl_args *args, tval *out);
int tmpl_apply_test(struct tmpl_rt *rt, const struct tnode *at, const char *name, tval in,
                    struct tmpl_args *args, bool *out);
int tmpl_binop(struct tmpl_rt *rt, const struct tnode *at, int op, tval a, tval b, tval *out);

/* Render entry (render.c uses it). */
int tmpl_render(const dream_template *t, struct tmpl_rt *rt, struct tmpl_sb *out);

#endif
