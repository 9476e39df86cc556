/* store_snippet.c — dream_snippet(search, open, close, ellipsis, tokens): a search hit's snippet,
 * an FTS5 auxiliary function registered on every store connection.
 *
 * FTS5's own snippet() scores every match against every other one, so its time grows with the
 * square of the matches in a row: a 300,000-word paste of one repeated word kept `dream search`
 * (and `dream ask`, which searches first) busy for minutes. This one looks at the first
 * SNIPPET_SCAN matches only and reads the text no further than the window it shows: linear in
 * the row, whatever it holds. Like snippet(): the column with the best window, `tokens` tokens
 * of it, each matched token between open and close, ellipsis where the column goes on. */
#include "store_internal.h"

#include "util/buf.h"
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Matches considered for the window: more only slows a row that repeats a word thousands of
 * times, and the first ones are where a reader looks anyway. */
#define SNIPPET_SCAN 256
#define SNIPPET_TOKENS_MAX 64

struct snip_tok {
    int n;            /* tokens seen */
    int from, to;     /* the window, in tokens */
    int start, end;   /* its bytes: the first token's start, the last one's end */
    int *starts, *ends; /* per window token */
    bool more;        /* a token after the window */
};

static int snippet_token(void *ud, int flags, const char *token, int n, int start, int end)
{
    (void)token, (void)n;
    struct snip_tok *t = ud;
    if (flags & FTS5_TOKEN_COLOCATED) return SQLITE_OK;
    int i = t->n++;
    if (i >= t->to) {
        t->more = true;
        return SQLITE_DONE;
    }
    if (i >= t->from) {
        t->starts[i - t->from] = start;
        t->ends[i - t->from] = end;
        if (i == t->from) t->start = start;
        t->end = end;
    }
    return SQLITE_OK;
}

static void dream_snippet(const Fts5ExtensionApi *api, Fts5Context *ctx, sqlite3_context *out, int nv, sqlite3_value **v)
{
    if (nv != 4) {
        sqlite3_result_error(out, "dream_snippet: want (open, close, ellipsis, tokens)", -1);
        return;
    }
    const char *open = (const char *)sqlite3_value_text(v[0]), *close = (const char *)sqlite3_value_text(v[1]);
    const char *dots = (const char *)sqlite3_value_text(v[2]);
    int width = sqlite3_value_int(v[3]);
    if (!open) open = "";
    if (!close) close = "";
    if (!dots) dots = "";
    if (width < 1) width = 1;
    if (width > SNIPPET_TOKENS_MAX) width = SNIPPET_TOKENS_MAX;
    int n_inst = 0, n_phrase = api->xPhraseCount(ctx);
    if (api->xInstCount(ctx, &n_inst) != SQLITE_OK) n_inst = 0;
    int scan = n_inst < SNIPPET_SCAN ? n_inst : SNIPPET_SCAN;
    /* the window: starting a little before a match, the one whose window holds the most
     * different phrases (then the most matches); the first such in its column */
    int best_col = -1, best_from = 0, best_score = -1;
    for (int i = 0; i < scan; i++) {
        int ph, col, off;
        if (api->xInst(ctx, i, &ph, &col, &off) != SQLITE_OK) break;
        /* near the start: from the start, as the text reads */
        int from = off + 4 < width ? 0 : off - 2, score = 0;
        unsigned long long seen = 0;
        for (int j = 0; j < scan; j++) {
            int ph2, col2, off2;
            if (api->xInst(ctx, j, &ph2, &col2, &off2) != SQLITE_OK || col2 != col || off2 < from || off2 >= from + width) continue;
            unsigned long long bit = 1ull << (ph2 & 63);
            score += (seen & bit) ? 1 : 1000;
            seen |= bit;
        }
        /* on a tie the later column: the text, rather than the heading or title over it */
        if (score > best_score || (score == best_score && col > best_col)) best_score = score, best_col = col, best_from = from;
    }
    const char *text = NULL;
    int len = 0;
    if (best_col < 0) /* no match to show (a row matched on a NOT, say): the first column with text */
        for (int c = 0; c < api->xColumnCount(ctx) && len == 0; c++)
            if (api->xColumnText(ctx, c, &text, &len) == SQLITE_OK && len > 0) best_col = c;
    if (best_col < 0 || api->xColumnText(ctx, best_col, &text, &len) != SQLITE_OK || !text || len <= 0) {
        sqlite3_result_text(out, "", 0, SQLITE_STATIC);
        return;
    }
    int starts[SNIPPET_TOKENS_MAX], ends[SNIPPET_TOKENS_MAX];
    struct snip_tok t = {.from = best_from, .to = best_from + width, .start = -1, .starts = starts, .ends = ends};
    api->xTokenize(ctx, text, len, &t, snippet_token);
    if (t.start < 0) { /* fewer tokens than the window's start (cannot happen for a match) */
        sqlite3_result_text(out, "", 0, SQLITE_STATIC);
        return;
    }
    int shown = (t.n < t.to ? t.n : t.to) - t.from;
    /* each match shown opens before its first token and closes after its last (a phrase's
     * tokens in one pair, matches side by side in a pair each; overlapping ones merge) */
    int opens[SNIPPET_TOKENS_MAX] = {0}, closes[SNIPPET_TOKENS_MAX] = {0};
    for (int i = 0; i < n_inst && n_phrase > 0; i++) {
        int ph, col, off;
        if (api->xInst(ctx, i, &ph, &col, &off) != SQLITE_OK) break;
        if (col != best_col || off < t.from) continue;
        if (off >= t.from + shown) break; /* instances come in order of column, then offset */
        int last = off + (api->xPhraseSize(ctx, ph) > 0 ? api->xPhraseSize(ctx, ph) : 1) - 1;
        opens[off - t.from]++;
        closes[(last < t.from + shown ? last : t.from + shown - 1) - t.from]++;
    }
    struct dbuf b = {0};
    int rc = t.from > 0 ? dbuf_puts(&b, dots) : 0;
    int at = t.from > 0 ? t.start : 0, depth = 0; /* from the first token, or the text's start */
    bool marked = false; /* the match open now is marked so by the text itself */
    for (int i = 0; !rc && i < shown; i++) {
        /* a tokenizer's offsets never going back is what the window stands on: hold it to that */
        if (starts[i] < at) starts[i] = at;
        if (ends[i] < starts[i]) ends[i] = starts[i];
        rc = dbuf_append(&b, text + at, (size_t)(starts[i] - at));
        if (!depth && opens[i]) { /* a match the text already marks as open and close do ("**Rust**" in an
                                     article) is shown as it is, not marked twice ("****Rust****") */
            int j = i, d = 0;
            for (; j < shown; j++)
                if ((d += opens[j] - closes[j]) <= 0) break;
            size_t ol = strlen(open), cl = strlen(close);
            marked = j < shown && ol && cl && (size_t)starts[i] >= ol && !memcmp(text + starts[i] - ol, open, ol) &&
                     (size_t)(len - ends[j]) >= cl && !memcmp(text + ends[j], close, cl);
            if (!rc && !marked) rc = dbuf_puts(&b, open);
        }
        depth += opens[i];
        if (!rc) rc = dbuf_append(&b, text + starts[i], (size_t)(ends[i] - starts[i]));
        depth -= closes[i];
        if (closes[i] && depth <= 0) {
            if (!rc && !marked) rc = dbuf_puts(&b, close);
            depth = 0;
            marked = false;
        }
        at = ends[i];
    }
    if (!rc && t.more) rc = dbuf_puts(&b, dots);
    else if (!rc) { /* the column's end: its closing punctuation, not a tail of symbols or space */
        int e = at + (int)utf8_prefix(text + at, (size_t)(len - at), 8);
        while (e > at && (text[e - 1] == ' ' || text[e - 1] == '\n' || text[e - 1] == '\r' || text[e - 1] == '\t')) e--;
        rc = dbuf_append(&b, text + at, (size_t)(e - at));
    }
    if (rc) {
        dbuf_free(&b);
        sqlite3_result_error_nomem(out);
    } else if (!b.data) {
        sqlite3_result_text(out, "", 0, SQLITE_STATIC);
    } else {
        sqlite3_result_text(out, b.data, (int)b.len, free);
    }
}

int store_snippet_register(sqlite3 *db)
{
    fts5_api *fts5 = store_fts5(db);
    return fts5 && fts5->xCreateFunction(fts5, "dream_snippet", NULL, dream_snippet, NULL) == SQLITE_OK ? 0 : -1;
}
