/* store_tokenize.c — the search index's tokenizer "dream": SQLite's unicode61, with every Han,
 * Hiragana and Katakana character a token of its own.
 *
 * unicode61 cuts text at spaces and punctuation, and Chinese and Japanese put none between
 * words: "うちの犬の名前はポチです。" was one token, so a search for ポチ or 犬 found nothing,
 * only the whole clause did. With each of those characters a token, a query term in those
 * scripts is a phrase of its characters (FTS5 tokenizes a quoted term with the same tokenizer),
 * which matches the word wherever it stands. Everything else (Latin, Cyrillic, Hangul, which
 * writes spaces between words) is unicode61's own tokens, folded as its arguments say. */
#include "store_internal.h"

#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

struct dream_tok {
    fts5_tokenizer base_api;
    Fts5Tokenizer *base;
};

struct dream_tok_ctx {
    void *ctx;
    int (*token)(void *ctx, int flags, const char *tok, int n, int start, int end);
};

/* A unicode61 token, passed on whole, or cut into its runs of other characters and its CJK
 * characters one by one. A token as long as its text (nothing folded away) has exact offsets
 * for each piece; otherwise the first piece has the whole token's and the others none (at its
 * end), so offsets never go back (a snippet reads the text between them). */
static int store_tok_split(void *p, int flags, const char *tok, int n, int start, int end)
{
    struct dream_tok_ctx *c = p;
    bool any = false;
    for (int i = 0; i < n && !any;) {
        uint32_t cp;
        i += utf8_next(tok + i, (size_t)(n - i), &cp);
        any = utf8_cjk(cp) != 0;
    }
    if (!any) return c->token(c->ctx, flags, tok, n, start, end);
    bool exact = n == end - start;
    int run = 0, rc = SQLITE_OK; /* run: where the pending non-CJK run starts */
    bool first = true;            /* no piece passed on yet */
    for (int i = 0; i < n && rc == SQLITE_OK;) {
        uint32_t cp;
        int l = utf8_next(tok + i, (size_t)(n - i), &cp);
        if (utf8_cjk(cp)) {
            if (run < i) rc = c->token(c->ctx, flags, tok + run, i - run, exact ? start + run : first ? start : end, exact ? start + i : end);
            if (run < i) first = false;
            flags &= ~FTS5_TOKEN_COLOCATED; /* only the first piece stands where the token did */
            if (rc == SQLITE_OK) rc = c->token(c->ctx, flags, tok + i, l, exact ? start + i : first ? start : end, exact ? start + i + l : end);
            first = false;
            run = i + l;
        }
        i += l;
    }
    if (rc == SQLITE_OK && run < n) rc = c->token(c->ctx, flags, tok + run, n - run, exact ? start + run : first ? start : end, end);
    return rc;
}

static int store_tok_create(void *ud, const char **argv, int argc, Fts5Tokenizer **out)
{
    fts5_api *api = ud;
    void *base_ud = NULL;
    struct dream_tok *t = calloc(1, sizeof *t);
    if (!t) return SQLITE_NOMEM;
    int rc = api->xFindTokenizer(api, "unicode61", &base_ud, &t->base_api);
    if (rc == SQLITE_OK) rc = t->base_api.xCreate(base_ud, argv, argc, &t->base);
    if (rc != SQLITE_OK) {
        free(t);
        return rc;
    }
    *out = (Fts5Tokenizer *)t;
    return SQLITE_OK;
}

static void store_tok_delete(Fts5Tokenizer *p)
{
    struct dream_tok *t = (struct dream_tok *)p;
    if (!t) return;
    if (t->base) t->base_api.xDelete(t->base);
    free(t);
}

static int store_tok_tokenize(Fts5Tokenizer *p, void *ctx, int flags, const char *text, int n,
                              int (*token)(void *, int, const char *, int, int, int))
{
    struct dream_tok *t = (struct dream_tok *)p;
    struct dream_tok_ctx c = {ctx, token};
    return t->base_api.xTokenize(t->base, &c, flags, text, n, store_tok_split);
}

fts5_api *store_fts5(sqlite3 *db)
{
    fts5_api *fts5 = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK || sqlite3_bind_pointer(st, 1, &fts5, "fts5_api_ptr", NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW)
        fts5 = NULL;
    sqlite3_finalize(st);
    return fts5;
}

int store_tokenizer_register(sqlite3 *db)
{
    fts5_api *fts5 = store_fts5(db);
    fts5_tokenizer tk = {store_tok_create, store_tok_delete, store_tok_tokenize};
    return fts5 && fts5->xCreateTokenizer(fts5, "dream", fts5, &tk, NULL) == SQLITE_OK ? 0 : -1;
}
