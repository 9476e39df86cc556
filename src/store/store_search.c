/* store_search.c — the search index's query language, compiled to FTS5 (see dream/search.h),
 * and FTS5's integrity check. The index's tables and triggers are migration 7
 * (store_schema.c). */
#include "dream/search.h"

#include "dream/error.h"
#include "store_internal.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct search_term {
    const char *s; /* into the query */
    size_t n;
    bool prefix, neg;
    int group; /* alternatives are separated by OR */
};

/* The index's own tokenizer (STORE_SEARCH_TOKENIZE), from an in-memory database's FTS5, so a
 * query's terms are judged by the rules that cut the indexed text. */
struct search_tokenizer {
    sqlite3 *db;
    fts5_tokenizer api;
    Fts5Tokenizer *tok;
};

static void search_tokenizer_close(struct search_tokenizer *t)
{
    if (t->tok) t->api.xDelete(t->tok);
    sqlite3_close(t->db);
    *t = (struct search_tokenizer){0};
}

static int search_tokenizer_open(struct search_tokenizer *t)
{
    *t = (struct search_tokenizer){0};
    char spec[] = STORE_SEARCH_TOKENIZE, *save = NULL, *argv[8];
    int argc = 0;
    for (char *w = strtok_r(spec, " ", &save); w && argc < 8; w = strtok_r(NULL, " ", &save)) argv[argc++] = w;
    fts5_api *fts5 = NULL;
    void *user = NULL;
    int ok = sqlite3_open(":memory:", &t->db) == SQLITE_OK && store_tokenizer_register(t->db) == 0 && (fts5 = store_fts5(t->db)) &&
             fts5->xFindTokenizer(fts5, argv[0], &user, &t->api) == SQLITE_OK &&
             t->api.xCreate(user, (const char **)argv + 1, argc - 1, &t->tok) == SQLITE_OK;
    if (ok) return 0;
    int rc = dream_error_set(DREAM_EIO, "SQLite's FTS5 tokenizer '%s' is not available (%s): this SQLite cannot search", STORE_SEARCH_TOKENIZE,
                             t->db ? sqlite3_errmsg(t->db) : "out of memory");
    search_tokenizer_close(t);
    return rc;
}

static int search_token_seen(void *seen, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)token, (void)n, (void)start, (void)end;
    *(bool *)seen = true;
    return SQLITE_DONE; /* one is enough */
}

/* True when the tokenizer finds a word (letters or digits, of any script) in s[0..n): a term of
 * punctuation, symbols or emoji only would reach FTS5 as an empty phrase and make every AND
 * match nothing. */
static bool search_has_token(struct search_tokenizer *t, const char *s, size_t n)
{
    bool seen = false;
    t->api.xTokenize(t->tok, &seen, FTS5_TOKENIZE_QUERY, s, (int)n, search_token_seen);
    return seen;
}

static bool search_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int search_bad(const char *query, const char *why)
{
    return dream_error_set(DREAM_EINVAL, "bad search query '%.*s%s': %s", utf8_cut(query, 120), query, strlen(query) > 120 ? "…" : "", why);
}

/* Appends s[0..n) as an FTS5 string: in double quotes, each quote doubled. */
static int search_put_string(struct dbuf *b, const char *s, size_t n, bool prefix)
{
    int rc = dbuf_putc(b, '"');
    for (size_t i = 0; !rc && i < n; i++) rc = s[i] == '"' ? dbuf_puts(b, "\"\"") : dbuf_putc(b, s[i]);
    if (!rc) rc = dbuf_putc(b, '"');
    if (!rc && prefix) rc = dbuf_putc(b, '*');
    return rc;
}

static int search_compile(struct search_tokenizer *tk, const char *query, char **match)
{
    if (!query) return search_bad("", "no words to search for");
    size_t len = strlen(query);
    if (len > DREAM_SEARCH_QUERY_MAX) return search_bad(query, "longer than 1000 bytes; search for fewer words");
    for (size_t i = 0; i < len;) {
        int l = utf8_seq_len((const unsigned char *)query + i, len - i);
        if (l <= 0) return dream_error_set(DREAM_EINVAL, "bad search query: byte %zu is not valid UTF-8", i);
        i += (size_t)l;
    }
    struct search_term t[DREAM_SEARCH_TERMS_MAX];
    size_t nt = 0;
    int group = 0;
    bool pending_or = false, pending_not = false, any_in_group = false;
    bool dropped = false; /* the last term was dropped (no word in it): an OR beside it goes too */
    const char *p = query, *end = query + len;
    while (p < end) {
        if (search_space(*p)) {
            p++;
            continue;
        }
        bool neg = pending_not;
        pending_not = false;
        if (*p == '-' && p + 1 < end && !search_space(p[1])) {
            neg = true;
            p++;
        }
        const char *s, *e;
        bool prefix = false;
        if (*p == '"') {
            s = p + 1;
            e = memchr(s, '"', (size_t)(end - s));
            if (!e) {
                char why[96];
                snprintf(why, sizeof why, "the quote at byte %zu is never closed (a phrase is \"in quotes\")", (size_t)(p - query));
                return search_bad(query, why);
            }
            p = e + 1;
            if (p < end && *p == '*') {
                prefix = true;
                p++;
            }
        } else {
            s = p;
            while (p < end && !search_space(*p) && *p != '"') p++;
            e = p;
            if (!neg && e - s == 2 && memcmp(s, "OR", 2) == 0) {
                if (!any_in_group || pending_or) {
                    /* "a OR 🍞 OR b", "🍞 OR b": the dropped term's OR goes with it */
                    if (!dropped) return search_bad(query, "OR needs words on both sides");
                    dropped = false;
                    continue;
                }
                pending_or = true;
                continue;
            }
            if (!neg && e - s == 3 && memcmp(s, "AND", 3) == 0) continue;
            if (!neg && e - s == 3 && memcmp(s, "NOT", 3) == 0) {
                pending_not = true;
                continue;
            }
            while (e > s && e[-1] == '*') {
                e--;
                prefix = true;
            }
            if (e == s && prefix) return search_bad(query, "'*' makes a prefix of the word it ends (like photo*); alone it means nothing");
        }
        if (!search_has_token(tk, s, (size_t)(e - s))) { /* punctuation only: no word to find */
            dropped = true;
            continue;
        }
        dropped = false;
        if (pending_or) {
            group++;
            any_in_group = false;
            pending_or = false;
        }
        if (nt == DREAM_SEARCH_TERMS_MAX) return search_bad(query, "more than 32 words and phrases; search for fewer");
        t[nt++] = (struct search_term){s, (size_t)(e - s), prefix, neg, group};
        any_in_group = true;
    }
    if (pending_or && !dropped) return search_bad(query, "OR needs words on both sides");
    if (pending_not) return search_bad(query, "NOT needs a word after it");
    if (nt == 0) return search_bad(query, "no words to search for");
    struct dbuf b = {0};
    int rc = 0;
    for (int g = 0, first = 1; g <= group && !rc; g++) {
        size_t npos = 0, nneg = 0;
        for (size_t i = 0; i < nt; i++)
            if (t[i].group == g) t[i].neg ? nneg++ : npos++;
        if (npos + nneg == 0) continue;
        if (npos == 0) {
            dbuf_free(&b);
            return search_bad(query, "an alternative that only excludes words (-word) matches nothing; add a word to look for");
        }
        if (!first) rc = dbuf_puts(&b, " OR ");
        first = 0;
        if (!rc) rc = dbuf_puts(&b, "((");
        for (size_t i = 0, k = 0; i < nt && !rc; i++) {
            if (t[i].group != g || t[i].neg) continue;
            if (k++) rc = dbuf_puts(&b, " AND ");
            if (!rc) rc = search_put_string(&b, t[i].s, t[i].n, t[i].prefix);
        }
        if (!rc) rc = dbuf_putc(&b, ')');
        for (size_t i = 0; i < nt && !rc; i++) {
            if (t[i].group != g || !t[i].neg) continue;
            rc = dbuf_puts(&b, " NOT ");
            if (!rc) rc = search_put_string(&b, t[i].s, t[i].n, t[i].prefix);
        }
        if (!rc) rc = dbuf_putc(&b, ')');
    }
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    *match = dbuf_take(&b);
    return *match ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
}

int dream_search_compile(const char *query, char **match)
{
    *match = NULL;
    struct search_tokenizer tk;
    int rc = search_tokenizer_open(&tk);
    if (rc) return rc;
    rc = search_compile(&tk, query, match);
    search_tokenizer_close(&tk);
    return rc;
}

int dream_search_check(dream_store *store)
{
    if (sqlite3_exec(store_db(store), "INSERT INTO search (search) VALUES ('integrity-check')", NULL, NULL, NULL) != SQLITE_OK)
        return dream_error_set(DREAM_EFORMAT, "the search index of %s is damaged (%s): rebuild it with `dream reindex`",
                               dream_store_path(store), sqlite3_errmsg(store_db(store)));
    return 0;
}
