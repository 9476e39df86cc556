/* read_search.c — the read tool "search" over the store's full-text index (dream/search.h):
 * articles' leads and sections and captured subjects first, then messages, each ranked by
 * BM25, each hit with its citation, date and a highlighted snippet. */
#include "read_internal.h"

#include "dream/error.h"
#include "dream/log.h"
#include "dream/search.h"
#include "store_internal.h"
#include "util/buf.h"
#include "util/day.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void dream_read_search_default_params(struct dream_read_search_params *p)
{
    memset(p, 0, sizeof *p);
}

/* The article rows brought up to date with the files the reader listed. A store another run is
 * writing (busy) costs freshness, not the search: the note says so. */
static void read_search_sync(dream_reader *r, json_t *o)
{
    const char **stems = calloc(r->n ? r->n : 1, sizeof *stems);
    const dream_article **as = calloc(r->n ? r->n : 1, sizeof *as);
    int64_t *mt = calloc(r->n ? r->n : 1, sizeof *mt);
    int rc = stems && as && mt ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < r->n; i++) {
        stems[i] = r->e[i].stem;
        as[i] = r->e[i].a;
        mt[i] = r->e[i].mtime_ns;
    }
    size_t changed = 0;
    /* A run writing the store holds its lock for a stage's write: wait a little, not
     * STORE_BUSY_MS, and search what is indexed. */
    sqlite3_busy_timeout(store_db(r->store), 250);
    if (!rc) rc = dream_search_sync(r->store, stems, as, mt, r->n, &changed);
    sqlite3_busy_timeout(store_db(r->store), STORE_BUSY_MS);
    if (rc) {
        dream_log(DREAM_LOG_WARN, "searching an index not brought up to date with the wiki: %s", dream_error_last());
        json_object_set_new(o, "note", json_string("the article index could not be brought up to date (a run is writing the store?); "
                                                   "results may lag the wiki"));
        dream_error_clear();
    }
    free(stems);
    free(as);
    free(mt);
}

/* YYYY-MM-DD of Unix ms (UTC), or NULL for 0. */
static json_t *read_search_date(int64_t ms)
{
    char d[11];
    day_format(ms, d);
    return d[0] ? json_string(d) : json_null();
}

/* The snippet of row id for match: the best column's best 14 tokens, matches in **bold**,
 * footnote markers removed. */
static json_t *read_search_snippet(dream_reader *r, const char *match, int64_t id)
{
    sqlite3_stmt *st;
    json_t *v = NULL;
    if (sqlite3_prepare_v2(store_db(r->store), "SELECT dream_snippet(search, '**', '**', '…', 14) FROM search WHERE search MATCH ? AND rowid = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return json_string("");
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        char *c = read_clip((const char *)sqlite3_column_text(st, 0), 240);
        if (c) v = json_string(c);
        free(c);
    }
    sqlite3_finalize(st);
    return v ? v : json_string("");
}

/* The date (Unix ms) of the search row, looked up where it is kept: a message's time, else its
 * conversation's; a section's newest cited date; none for a subject. (The index holds no copy
 * of the rows, and reading one through search_source for each match would cost four lookups.) */
#define READ_SEARCH_MESSAGE_DATE                                                                                       \
    "(SELECT coalesce(m.created_at, (SELECT c.created_at FROM conversations c WHERE c.id = m.conversation)) FROM messages m" \
    " WHERE m.conversation = (search.rowid - (1 << 50)) >> 24 AND m.position = (search.rowid & 16777215))"
#define READ_SEARCH_SECTION_DATE "(SELECT date_ms FROM search_sections WHERE id = search.rowid)"

/* Prepares sql (with the date bounds appended before tail) bound to match, [lo, hi), the
 * bounds and ?6 = n. */
static int read_search_prepare(dream_reader *r, const char *head, const char *tail, const char *match, const struct dream_read_search_params *p,
                               int64_t lo, int64_t hi, int64_t n, sqlite3_stmt **st)
{
    struct dbuf sql = {0};
    const char *date = lo >= DREAM_SEARCH_MESSAGE_BASE ? READ_SEARCH_MESSAGE_DATE : READ_SEARCH_SECTION_DATE;
    dbuf_puts(&sql, head);
    if (p->since_ms) dbuf_printf(&sql, " AND %s >= ?4", date);
    if (p->until_ms) dbuf_printf(&sql, " AND %s < ?5", date);
    dbuf_puts(&sql, tail);
    if (!sql.data) return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = sqlite3_prepare_v2(store_db(r->store), sql.data, -1, st, NULL) == SQLITE_OK ? 0 : store_sql_error(r->store, "searching");
    dbuf_free(&sql);
    if (rc) return rc;
    sqlite3_bind_text(*st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(*st, 2, lo);
    sqlite3_bind_int64(*st, 3, hi);
    if (p->since_ms) sqlite3_bind_int64(*st, 4, p->since_ms);
    if (p->until_ms) sqlite3_bind_int64(*st, 5, p->until_ms);
    sqlite3_bind_int64(*st, 6, n);
    return 0;
}

/* Runs one ranked query of the index over row ids [lo, hi); calls add for each hit. BM25 costs
 * a lookup per matching row, so a query matching more than p->rank_window rows (a word most
 * messages hold) is ranked among the most recently stored rank_window of them: *window is set
 * then. Walking the matches newest first costs little; scoring them is what costs. */
static int read_search_query(dream_reader *r, const char *match, const struct dream_read_search_params *p, int64_t lo, int64_t hi,
                             const char *weights, size_t limit, int (*add)(dream_reader *, const char *, int64_t, json_t *),
                             json_t *arr, bool *more, bool *window)
{
    sqlite3_stmt *st;
    int rc = read_search_prepare(r, "SELECT rowid FROM search WHERE search MATCH ?1 AND rowid >= ?2 AND rowid < ?3", " ORDER BY rowid DESC LIMIT 1 OFFSET ?6",
                                 match, p, lo, hi, (int64_t)(p->rank_window ? p->rank_window : DREAM_READ_SEARCH_RANKED), &st);
    if (rc) return rc;
    if (sqlite3_step(st) == SQLITE_ROW) {
        lo = sqlite3_column_int64(st, 0) + 1;
        *window = true;
    }
    sqlite3_finalize(st);
    char head[256];
    snprintf(head, sizeof head, "SELECT rowid, bm25(search, %s) AS score FROM search WHERE search MATCH ?1 AND rowid >= ?2 AND rowid < ?3", weights);
    if ((rc = read_search_prepare(r, head, " ORDER BY score LIMIT ?6", match, p, lo, hi, (int64_t)limit + 1, &st))) return rc;
    size_t n = 0;
    int s;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        if (n++ == limit) {
            *more = true;
            break;
        }
        rc = add(r, match, sqlite3_column_int64(st, 0), arr);
    }
    if (!rc && s != SQLITE_ROW && s != SQLITE_DONE) rc = store_sql_error(r->store, "searching");
    sqlite3_finalize(st);
    return rc;
}

/* Where w[0..n) first occurs in s as a word, case aside, at or after from; NULL when nowhere. */
static const char *read_find_word(const char *s, const char *from, const char *w, size_t n)
{
    for (const char *at = from; *at; at++)
        if (!strncasecmp(at, w, n) && (at == s || !isalnum((unsigned char)at[-1])) && !isalnum((unsigned char)at[n])) return at;
    return NULL;
}

/* The word of s at or after *at (alphanumerics; "**" and other marks skipped): its start, its length in *n. */
static const char *read_next_word(const char *at, size_t *n)
{
    while (*at && !isalnum((unsigned char)*at)) at++;
    const char *b = at;
    while (isalnum((unsigned char)*at)) at++;
    *n = (size_t)(at - b);
    return *n ? b : NULL;
}

/* The footnote of the sentence snippet shows in body (a lead's or a section's, markers and
 * all): the first marker after the snippet's first highlighted word, within its paragraph, at
 * the place in body where the word after it is the snippet's too (else its first place); NULL
 * when there is none (a word the body does not spell as the index does: a link's text). */
static const struct dream_article_footnote *read_hit_footnote(const dream_article *a, const char *body, const char *snippet)
{
    const char *b = snippet ? strstr(snippet, "**") : NULL;
    size_t n = 0, nn = 0, bn = 0;
    const char *w = b ? read_next_word(b + 2, &n) : NULL;
    if (!body || !w) return NULL;
    const char *next = read_next_word(w + n, &nn), *at = NULL;
    for (const char *c = read_find_word(body, body, w, n); c && !at; c = read_find_word(body, c + n, w, n)) {
        const char *bw = read_next_word(c + n, &bn);
        if (next && bw && bn == nn && !strncasecmp(bw, next, nn)) at = c;
    }
    if (!at) at = read_find_word(body, body, w, n);
    for (const char *c = at ? at + n : ""; *c && strncmp(c, "\n\n", 2); c++) {
        if (c[0] != '[' || c[1] != '^') continue;
        int num = atoi(c + 2);
        for (size_t i = 0; num > 0 && i < dream_article_footnote_count(a); i++) {
            const struct dream_article_footnote *fn = dream_article_footnote(a, i);
            if (fn->number == num && fn->cite.conv && fn->cite.msg) return fn;
        }
        return NULL;
    }
    return NULL;
}

/* A lead, section or subject hit. */
static int read_search_add_article(dream_reader *r, const char *match, int64_t id, json_t *arr)
{
    sqlite3_stmt *st;
    json_t *h = NULL, *snippet = read_search_snippet(r, match, id);
    if (id >= DREAM_SEARCH_SUBJECT_BASE) {
        if (sqlite3_prepare_v2(store_db(r->store), "SELECT name, chunk_count FROM pipeline_entities WHERE id = ?", -1, &st, NULL))
            return json_decref(snippet), store_sql_error(r->store, "searching");
        sqlite3_bind_int64(st, 1, id - DREAM_SEARCH_SUBJECT_BASE);
        if (sqlite3_step(st) == SQLITE_ROW)
            h = json_pack("{ss ss sI}", "kind", "subject", "name", (const char *)sqlite3_column_text(st, 0), "chunks", (json_int_t)sqlite3_column_int64(st, 1));
        sqlite3_finalize(st);
    } else {
        if (sqlite3_prepare_v2(store_db(r->store), "SELECT stem, anchor, cites, date FROM search_sections WHERE id = ?", -1, &st, NULL))
            return json_decref(snippet), store_sql_error(r->store, "searching");
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const char *stem = (const char *)sqlite3_column_text(st, 0), *anchor = (const char *)sqlite3_column_text(st, 1);
            const char *cites = (const char *)sqlite3_column_text(st, 2), *date = (const char *)sqlite3_column_text(st, 3);
            long e = read_find(r, stem);
            char *title = e >= 0 ? read_title_out(&r->e[e]) : strdup(stem);
            h = json_pack("{ss ss ss ss}", "kind", anchor[0] ? "section" : "lead", "stem", stem, "anchor", anchor, "title", title ? title : stem);
            free(title);
            const struct dream_article_section *sec = NULL;
            long si = e >= 0 && anchor[0] ? dream_article_section_find(r->e[e].a, anchor) : -1;
            if (si >= 0) sec = dream_article_section(r->e[e].a, (size_t)si);
            if (h && sec) json_object_set_new(h, "section", read_json_text(sec->title, strlen(sec->title)));
            const char *body = e < 0 ? NULL : anchor[0] ? (sec ? sec->body : NULL) : dream_article_lead(r->e[e].a);
            const struct dream_article_footnote *fn = body ? read_hit_footnote(r->e[e].a, body, json_string_value(snippet)) : NULL;
            json_t *ca = json_array();
            char *copy = strdup(cites), *save = NULL;
            for (char *t = copy ? strtok_r(copy, " ", &save) : NULL; t && json_array_size(ca) < 4; t = strtok_r(NULL, " ", &save))
                json_array_append_new(ca, json_string(t));
            free(copy);
            if (h) {
                /* the sentence the snippet shows: its footnote's citation and date, else the section's */
                char key[256];
                if (fn) snprintf(key, sizeof key, "conv:%s#%s", fn->cite.conv, fn->cite.msg);
                json_object_set_new(h, "cite", fn ? json_string(key) : json_array_size(ca) ? json_incref(json_array_get(ca, 0)) : json_null());
                json_object_set_new(h, "cites", ca);
                const char *d = fn && fn->cite.date ? fn->cite.date : date;
                json_object_set_new(h, "date", d ? json_string(d) : json_null());
            } else {
                json_decref(ca);
            }
        }
        sqlite3_finalize(st);
    }
    if (!h) { /* a row whose record went (a rebuild will tidy it) */
        json_decref(snippet);
        return 0;
    }
    json_object_set_new(h, "snippet", snippet);
    json_array_append_new(arr, h);
    return 0;
}

/* A message hit: its citation conv:HASH#MSG, the conversation's title, date and role. */
static int read_search_add_message(dream_reader *r, const char *match, int64_t id, json_t *arr)
{
    int64_t k = id - DREAM_SEARCH_MESSAGE_BASE;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(r->store),
                           "SELECT c.cite, m.source_id, c.title, coalesce(m.created_at, c.created_at), m.role FROM messages m"
                           " JOIN conversations c ON c.id = m.conversation WHERE m.conversation = ? AND m.position = ?",
                           -1, &st, NULL))
        return store_sql_error(r->store, "searching");
    sqlite3_bind_int64(st, 1, k / DREAM_SEARCH_POSITION_SPAN);
    sqlite3_bind_int64(st, 2, k % DREAM_SEARCH_POSITION_SPAN);
    json_t *h = NULL;
    if (sqlite3_step(st) == SQLITE_ROW) {
        /* the message as footnotes cite it: its id, or "m" and its position when it has none fit */
        char *mid = dream_store_message_cite_id((const char *)sqlite3_column_text(st, 1), k % DREAM_SEARCH_POSITION_SPAN);
        struct dbuf c = {0};
        dbuf_printf(&c, "conv:%s#%s", (const char *)sqlite3_column_text(st, 0), mid ? mid : "");
        free(mid);
        const char *t = (const char *)sqlite3_column_text(st, 2);
        char *title = read_clip(t ? t : "", READ_TITLE_MAX);
        h = json_pack("{so so so ss}", "cite", read_json_text(c.data ? c.data : "", c.len), "conversation", read_json_text(title ? title : "", title ? strlen(title) : 0),
                      "date", read_search_date(sqlite3_column_int64(st, 3)), "role", (const char *)sqlite3_column_text(st, 4));
        free(title);
        dbuf_free(&c);
    }
    sqlite3_finalize(st);
    if (!h) return 0;
    json_object_set_new(h, "snippet", read_search_snippet(r, match, id));
    json_array_append_new(arr, h);
    return 0;
}

int dream_read_search_index(dream_reader *r, const struct dream_read_search_params *p, json_t **out)
{
    *out = NULL;
    if (!r->store) {
        dream_error_set(DREAM_ENOTFOUND, "no store to search (its index holds the messages): point --store at one, or run `dream ingest` first");
        return read_error_object(out, DREAM_ENOTFOUND);
    }
    char *match = NULL;
    int rc = dream_search_compile(p->query, &match);
    if (rc) return read_error_object(out, rc);
    size_t limit = p->limit ? p->limit : 5;
    if (limit > 30) limit = 30;
    char *shown = read_clip(p->query, 100);
    json_t *o = json_pack("{ss ss}", "query", shown ? shown : "", "match", match);
    free(shown);
    json_t *arts = json_array(), *convs = json_array();
    if (!o || !arts || !convs) {
        json_decref(o), json_decref(arts), json_decref(convs), free(match);
        return read_error_object(out, dream_error_set(DREAM_ENOMEM, "out of memory"));
    }
    bool more_a = false, more_c = false, window = false;
    if (!p->conversations_only) {
        read_search_sync(r, o);
        rc = read_search_query(r, match, p, 0, DREAM_SEARCH_MESSAGE_BASE, "10.0, 5.0, 1.0", limit, read_search_add_article, arts, &more_a, &window);
    }
    if (!rc)
        rc = read_search_query(r, match, p, DREAM_SEARCH_MESSAGE_BASE, INT64_MAX, "1.0, 1.0, 1.0", limit, read_search_add_message, convs, &more_c,
                               &window);
    if (!rc && window)
        json_object_set_new(o, "ranked_among", json_pack("{sI ss}", "newest", (json_int_t)(p->rank_window ? p->rank_window : DREAM_READ_SEARCH_RANKED), "why",
                                                         "more rows hold these words than are ranked: add a word, a phrase or --since"));
    free(match);
    if (rc) {
        json_decref(o), json_decref(arts), json_decref(convs);
        return read_error_object(out, rc);
    }
    if (!p->conversations_only) json_object_set_new(o, "results", arts);
    else json_decref(arts), arts = NULL;
    json_object_set_new(o, "conversations", convs);
    /* Within the budget (with room for "more"): the lowest-ranked hit of the longer list goes first. */
    bool cut = false;
    while (read_json_size(o) > DREAM_READ_BUDGET - 80 && (json_array_size(arts) || json_array_size(convs))) {
        json_t *l = json_array_size(convs) >= json_array_size(arts) ? convs : arts;
        json_array_remove(l, json_array_size(l) - 1);
        if (l == convs) more_c = true;
        else more_a = true;
        cut = true;
    }
    /* "by": what held the rest back, so the reader knows what would show it: the budget (a
     * higher --limit would not: narrow the query) or the limit (at most 30) */
    if (more_a || more_c)
        json_object_set_new(o, "more", json_pack("{sb sb ss}", "results", more_a, "conversations", more_c, "by", cut ? "budget" : "limit"));
    *out = o;
    return 0;
}
