/* search_index.c — the articles' rows of the search index (dream/search.h): an article cut into
 * its lead and sections with the citations each uses; kept by synth_write, synced with the
 * wiki by readers, rebuilt whole by `dream reindex`. */
#include "dream/search.h"

#include "dream/article.h"
#include "dream/error.h"
#include "synth_internal.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/sha256.h"
#include "util/utf8.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* "YYYY-MM-DD" as Unix ms at midnight UTC; 0 when it is not a date. */
static int64_t search_date_ms(const char *d)
{
    struct tm tm = {0};
    if (!d || strlen(d) < 10 || sscanf(d, "%4d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3) return 0;
    if (tm.tm_year < 1971 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31) return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000;
}

/* The citations of the markers on lines [from, to) into cites ("conv:H#M" space-separated, each
 * once) and the newest of their dates into date (11 bytes). */
static int search_cites(const dream_article *a, int from, int to, struct dbuf *cites, char date[11])
{
    date[0] = '\0';
    for (size_t i = 0; i < dream_article_ref_count(a); i++) {
        const struct dream_article_ref *r = dream_article_ref(a, i);
        if (r->line < from || r->line >= to) continue;
        for (size_t k = 0; k < dream_article_footnote_count(a); k++) {
            const struct dream_article_footnote *f = dream_article_footnote(a, k);
            if (strcmp(f->label, r->label) != 0 || !f->cite.conv || !f->cite.msg) continue;
            struct dbuf one = {0};
            if (dbuf_printf(&one, "%s%s#%s", strncmp(f->cite.conv, "conv:", 5) ? "conv:" : "", f->cite.conv, f->cite.msg)) return DREAM_ENOMEM;
            bool seen = false;
            for (const char *p = cites->data; p && (p = strstr(p, one.data)); p += one.len)
                if ((p == cites->data || p[-1] == ' ') && (p[one.len] == ' ' || !p[one.len])) seen = true;
            int rc = seen ? 0 : dbuf_printf(cites, "%s%s", cites->len ? " " : "", one.data);
            dbuf_free(&one);
            if (rc) return rc;
            if (f->cite.date && strlen(f->cite.date) == 10 && strcmp(f->cite.date, date) > 0) memcpy(date, f->cite.date, 11);
            break;
        }
    }
    return 0;
}

static int search_forget(dream_store *store, const char *stem)
{
    static const char *const sql[] = {
        "DELETE FROM search WHERE rowid IN (SELECT id FROM search_sections WHERE stem = ?1)",
        "DELETE FROM search_sections WHERE stem = ?1",
        "DELETE FROM search_articles WHERE stem = ?1",
    };
    for (size_t i = 0; i < 3; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(store), sql[i], -1, &st, NULL)) return store_sql_error(store, "updating the search index");
        sqlite3_bind_text(st, 1, stem, -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        sqlite3_finalize(st);
        if (s != SQLITE_DONE) return store_sql_error(store, "updating the search index");
    }
    return 0;
}

/* The statements that write an article's rows, prepared once for all the articles a call
 * indexes (a rebuild indexes thousands). A rebuild writes search_sections only: FTS5 then
 * reads every row at once ('rebuild'); row is NULL then. */
struct search_writer {
    dream_store *store;
    sqlite3_stmt *section, *row, *record;
};

/* Prepares w's statements (row only when index is true); w is closed by the caller, whether
 * this fails or not. */
static int search_writer_open(struct search_writer *w, dream_store *store, bool index)
{
    *w = (struct search_writer){.store = store};
    sqlite3 *db = store_db(store);
    if (sqlite3_prepare_v2(db, "INSERT INTO search_sections (stem, anchor, cites, date, title, heading, text, date_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &w->section, NULL) ||
        (index && sqlite3_prepare_v2(db, "INSERT INTO search (rowid, title, section, text) VALUES (?, ?, ?, ?)", -1, &w->row, NULL)) ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO search_articles (stem, mtime, bytes, hash) VALUES (?, ?, ?, ?)", -1, &w->record, NULL))
        return store_sql_error(store, "indexing an article");
    return 0;
}

static void search_writer_close(struct search_writer *w)
{
    sqlite3_finalize(w->section);
    sqlite3_finalize(w->row);
    sqlite3_finalize(w->record);
}

/* Steps st (bound by the caller) once and resets it, so that its bindings may go. */
static int search_step(struct search_writer *w, sqlite3_stmt *st)
{
    int s = sqlite3_step(st);
    int rc = s == SQLITE_DONE ? 0 : store_sql_error(w->store, "indexing an article");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc;
}

static int search_put_row_utf8(struct search_writer *w, const char *stem, const char *title, const char *anchor, const char *section,
                               const char *text, size_t len, const char *cites, const char *date);

/* One row: search_sections (which holds its text for FTS5), then its FTS5 row. Text that is not
 * valid UTF-8 (an article the person saved in another encoding) goes in with U+FFFD for each bad
 * byte: the store holds only UTF-8 (`dream check` reads it so), and a read verb's index update
 * made it fail there. */
static int search_put_row(struct search_writer *w, const char *stem, const char *title, const char *anchor, const char *section,
                          const char *text, size_t len, const char *cites, const char *date)
{
    if (utf8_valid_prefix(text, len) == len && utf8_valid_prefix(title, strlen(title)) == strlen(title) &&
        utf8_valid_prefix(section, strlen(section)) == strlen(section))
        return search_put_row_utf8(w, stem, title, anchor, section, text, len, cites, date);
    char *t = strndup(text, len), *rt = t ? utf8_repaired(t) : NULL, *rti = utf8_repaired(title), *rs = utf8_repaired(section);
    int rc = rt && rti && rs ? search_put_row_utf8(w, stem, rti, anchor, rs, rt, strlen(rt), cites, date)
                             : dream_error_set(DREAM_ENOMEM, "out of memory");
    free(t);
    free(rt);
    free(rti);
    free(rs);
    return rc;
}

static int search_put_row_utf8(struct search_writer *w, const char *stem, const char *title, const char *anchor, const char *section,
                               const char *text, size_t len, const char *cites, const char *date)
{
    sqlite3_stmt *st = w->section;
    sqlite3_bind_text(st, 1, stem, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, anchor, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cites, -1, SQLITE_STATIC);
    if (date[0]) sqlite3_bind_text(st, 4, date, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, title, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, section, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, text, (int)len, SQLITE_STATIC);
    int64_t ms = search_date_ms(date);
    if (ms) sqlite3_bind_int64(st, 8, ms);
    int rc = search_step(w, st);
    if (rc) return rc;
    int64_t id = sqlite3_last_insert_rowid(store_db(w->store));
    if (id >= DREAM_SEARCH_SUBJECT_BASE) return dream_error_set(DREAM_EFORMAT, "the search index's section ids are exhausted: run `dream reindex`");
    if (!w->row) return 0;
    sqlite3_bind_int64(w->row, 1, id);
    sqlite3_bind_text(w->row, 2, title, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->row, 3, section, -1, SQLITE_STATIC);
    sqlite3_bind_text(w->row, 4, text, (int)len, SQLITE_STATIC);
    return search_step(w, w->row);
}

/* How recent a file's time may be and still be trusted later to say the file is unchanged: a
 * filesystem's clock ticks coarsely (milliseconds; seconds on some, two on FAT), so an edit
 * within the tick of the time recorded keeps that time. */
#define SEARCH_RACY_NS (2 * (int64_t)1000000000)

/* The mtime to record for a file: 0 (not known) for one not older than SEARCH_RACY_NS now, or
 * in the future, since an edit within the same tick would keep it: the next sync then compares
 * the text instead, and records the time once it is old enough. */
static int64_t search_trusted_mtime(int64_t mtime)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0 || mtime > (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - SEARCH_RACY_NS) return 0;
    return mtime;
}

/* Records what stem's rows were made from (mtime as search_trusted_mtime has it). */
static int search_record(struct search_writer *w, const char *stem, int64_t mtime, size_t bytes, const char *hash)
{
    mtime = search_trusted_mtime(mtime);
    sqlite3_bind_text(w->record, 1, stem, -1, SQLITE_STATIC);
    sqlite3_bind_int64(w->record, 2, mtime);
    sqlite3_bind_int64(w->record, 3, (sqlite3_int64)bytes);
    sqlite3_bind_text(w->record, 4, hash, -1, SQLITE_STATIC);
    return search_step(w, w->record);
}

/* The rows of an article that has none (its old rows removed, or a fresh index): a redirect is
 * recorded but has no rows. */
static int search_add_article(struct search_writer *w, const char *stem, const dream_article *a, int64_t mtime)
{
    size_t len;
    const char *text = dream_article_text(a, &len);
    char hash[65];
    sha256_hex_of(text, len, hash);
    int rc = search_record(w, stem, mtime, len, hash);
    if (rc || dream_article_is_redirect(a)) return rc;
    const char *t = dream_article_title(a);
    char *title = strdup(t && t[0] ? t : stem);
    if (!title) return dream_error_set(DREAM_ENOMEM, "out of memory");
    if (!(t && t[0]))
        for (char *p = title; *p; p++)
            if (*p == '_') *p = ' ';
    size_t ns = dream_article_section_count(a);
    int first_line = ns ? dream_article_section(a, 0)->line : INT_MAX;
    /* The lead, with the infobox's fields as "key value" lines. */
    struct dbuf lead = {0}, cites = {0};
    char date[11];
    const char *l = dream_article_lead(a);
    rc = dbuf_puts(&lead, l ? l : "");
    for (size_t i = 0; !rc && i < dream_article_infobox_count(a); i++) {
        const struct dream_article_field *f = dream_article_infobox_field(a, i);
        if (strcmp(f->key, "aliases") != 0) rc = dbuf_printf(&lead, "\n%s %s", f->key, f->value);
    }
    /* the front matter's names, found as the infobox's were */
    for (size_t i = 0; !rc && i < dream_article_alias_count(a); i++) rc = dbuf_printf(&lead, "%s%s", i ? ", " : "\naliases ", dream_article_alias(a, i));
    for (size_t i = 0; !rc && i < dream_article_category_count(a); i++)
        rc = dbuf_printf(&lead, "%s%s", i ? ", " : "\ncategories ", dream_article_category(a, i));
    if (!rc) rc = search_cites(a, 0, first_line, &cites, date);
    if (!rc) rc = search_put_row(w, stem, title, "", "", lead.data ? lead.data : "", lead.len, cites.data ? cites.data : "", date);
    for (size_t i = 0; !rc && i < ns; i++) {
        const struct dream_article_section *s = dream_article_section(a, i);
        if (s->kind != DREAM_SECTION_BODY && s->kind != DREAM_SECTION_HISTORY) continue;
        dbuf_reset(&cites);
        int next = i + 1 < ns ? dream_article_section(a, i + 1)->line : INT_MAX;
        rc = search_cites(a, s->line, next, &cites, date);
        if (!rc) rc = search_put_row(w, stem, title, s->anchor, s->title, s->body, strlen(s->body), cites.data ? cites.data : "", date);
    }
    dbuf_free(&lead);
    dbuf_free(&cites);
    free(title);
    return rc;
}

int dream_search_index_article(dream_store *store, const char *stem, const dream_article *a, int64_t mtime)
{
    int rc = search_forget(store, stem);
    if (rc || !a) return rc;
    struct search_writer w;
    rc = search_writer_open(&w, store, true);
    if (!rc) rc = search_add_article(&w, stem, a, mtime);
    search_writer_close(&w);
    return rc;
}

/* What to do with listed article i, which is indexed: 0 its rows are current, 1 only its mtime
 * changed (same text), 2 index it again. The same size and nanosecond mtime say current without
 * reading the text, unless the mtime recorded was 0 (too recent to trust when recorded). */
static unsigned char search_todo(const dream_article *a, int64_t mtime, sqlite3_stmt *row)
{
    size_t len;
    const char *text = dream_article_text(a, &len);
    int64_t recorded = sqlite3_column_int64(row, 1);
    if (recorded && recorded == mtime && (size_t)sqlite3_column_int64(row, 2) == len) return 0;
    char hash[65];
    sha256_hex_of(text, len, hash);
    if (strcmp(hash, (const char *)sqlite3_column_text(row, 3)) != 0) return 2;
    return recorded == search_trusted_mtime(mtime) ? 0 : 1; /* still too recent: nothing to write */
}

int dream_search_sync(dream_store *store, const char *const *stems, const dream_article *const *articles, const int64_t *mtimes,
                      size_t n, size_t *changed)
{
    if (changed) *changed = 0;
    /* One pass over what is indexed, in stem order, beside the listed stems (sorted alike):
     * 0 current, 1 touched (same text), 2 to index again, 3 never indexed (so nothing to take
     * out first: each DELETE on the index makes FTS5 write what it holds as a segment, and a
     * fresh store has every article to index); gone: indexed, no longer listed. */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store_db(store), "SELECT stem, mtime, bytes, hash FROM search_articles ORDER BY stem", -1, &st, NULL))
        return store_sql_error(store, "reading the search index");
    unsigned char *todo = malloc(n ? n : 1);
    char **gone = NULL;
    size_t ngone = 0, capgone = 0, count = 0, i = 0;
    int rc = todo ? 0 : dream_error_set(DREAM_ENOMEM, "out of memory");
    if (todo) memset(todo, 3, n ? n : 1);
    int step = SQLITE_ROW;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        int c = 1;
        while (i < n && (c = strcmp(stems[i], s)) < 0) i++; /* listed, never indexed: stays 3 */
        if (i < n && c == 0) {
            todo[i] = search_todo(articles[i], mtimes[i], st);
            i++;
            continue;
        }
        if (ngone == capgone) {
            char **g = realloc(gone, (capgone = capgone ? capgone * 2 : 8) * sizeof *g);
            if (!g) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            gone = g;
        }
        if (!(gone[ngone++] = strdup(s))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading the search index");
    sqlite3_finalize(st);
    bool touched = ngone > 0;
    for (size_t k = 0; !rc && k < n; k++) {
        touched = touched || todo[k];
        count += todo[k] >= 2;
    }
    if (!rc && touched) {
        struct search_writer w = {0};
        rc = store_exec(store, "BEGIN IMMEDIATE", "updating the search index");
        bool begun = !rc;
        if (!rc) rc = search_writer_open(&w, store, true);
        for (size_t k = 0; !rc && k < n; k++) {
            if (todo[k] >= 2) {
                if (todo[k] == 2) rc = search_forget(store, stems[k]);
                if (!rc && articles[k]) rc = search_add_article(&w, stems[k], articles[k], mtimes[k]);
            } else if (todo[k] == 1) {
                size_t len;
                const char *text = dream_article_text(articles[k], &len);
                char hash[65];
                sha256_hex_of(text, len, hash);
                rc = search_record(&w, stems[k], mtimes[k], len, hash);
            }
        }
        for (size_t k = 0; !rc && k < ngone; k++) rc = search_forget(store, gone[k]);
        search_writer_close(&w);
        if (!rc) rc = store_exec(store, "COMMIT", "updating the search index");
        else if (begun) sqlite3_exec(store_db(store), "ROLLBACK", NULL, NULL, NULL); /* the error is the one that made it */
    }
    if (!rc && changed) *changed = count + ngone;
    synth_free_strings(gone, ngone);
    free(todo);
    return rc;
}

/* Drops the FTS5 table; a damaged one may refuse DROP TABLE: then its shadow tables go one by one. */
static void search_drop(dream_store *store)
{
    if (sqlite3_exec(store_db(store), "DROP TABLE IF EXISTS search", NULL, NULL, NULL) == SQLITE_OK) return;
    dream_error_clear();
    static const char *const shadows[] = {"search_data", "search_idx", "search_content", "search_docsize", "search_config"};
    for (size_t i = 0; i < 5; i++) {
        char sql[96];
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", shadows[i]);
        sqlite3_exec(store_db(store), sql, NULL, NULL, NULL);
    }
    sqlite3_exec(store_db(store), "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = 'search'; PRAGMA writable_schema = OFF", NULL,
                 NULL, NULL);
}

/* Every article of the wiki into search_sections and search_articles (the FTS5 rows come
 * after, all at once). */
static int search_rebuild_articles(dream_store *store, const char *wiki, struct dream_search_rebuild_stats *stats)
{
    char **stems = NULL, root[PATH_MAX];
    size_t n = 0;
    struct search_writer w = {0};
    int rc = synth_list_stems(wiki, &stems, &n);
    if (!rc && n && !realpath(wiki, root)) rc = dream_error_set(DREAM_EIO, "cannot resolve the wiki path %s: %s", wiki, strerror(errno));
    if (!rc && n) rc = search_writer_open(&w, store, false);
    for (size_t i = 0; !rc && i < n; i++) {
        char *path = synth_article_path(wiki, stems[i]);
        dream_article *a = NULL;
        struct stat sb;
        if (!path) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else if (!file_wiki_article(path, root, &sb) || dream_article_read_file(path, &a) != 0) dream_error_clear(); /* not an article, as the reader has it */
        else {
            size_t len;
            dream_article_text(a, &len);
            rc = search_add_article(&w, stems[i], a, file_mtime_ns(&sb));
            stats->articles++;
            stats->text_bytes += len;
            stats->sections += dream_article_section_count(a) + 1;
        }
        dream_article_free(a);
        free(path);
    }
    search_writer_close(&w);
    synth_free_strings(stems, n);
    return rc;
}

int dream_search_rebuild(dream_store *store, const char *wiki, struct dream_search_rebuild_stats *stats)
{
    struct dream_search_rebuild_stats z = {0};
    if (!stats) stats = &z;
    memset(stats, 0, sizeof *stats);
    /* One transaction, so a crash leaves the old index whole. (A bigger page cache for it, or
     * secure_delete FAST for the old index's pages, measured within the noise: docs/BENCHMARKS.md.) */
    int rc = store_exec(store, "BEGIN IMMEDIATE", "rebuilding the search index");
    if (rc) return rc;
    search_drop(store);
    rc = store_exec(store, "DELETE FROM search_sections; DELETE FROM search_articles;" STORE_SEARCH_TABLE_SQL, "rebuilding the search index");
    if (!rc && wiki) rc = search_rebuild_articles(store, wiki, stats);
    if (!rc) rc = store_exec(store, STORE_SEARCH_FILL_SQL, "rebuilding the search index");
    sqlite3_stmt *st;
    if (!rc && sqlite3_prepare_v2(store_db(store),
                                  "SELECT (SELECT count(*) FROM messages), (SELECT coalesce(sum(length(CAST(text AS BLOB))), 0) FROM messages),"
                                  " (SELECT count(*) FROM pipeline_entities WHERE route IS NOT 'article')",
                                  -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            stats->messages = (size_t)sqlite3_column_int64(st, 0);
            stats->text_bytes += (size_t)sqlite3_column_int64(st, 1);
            stats->subjects = (size_t)sqlite3_column_int64(st, 2);
        }
        sqlite3_finalize(st);
    }
    if (!rc) rc = store_exec(store, "COMMIT", "rebuilding the search index");
    else sqlite3_exec(store_db(store), "ROLLBACK", NULL, NULL, NULL); /* the error is the one that made it */
    return rc;
}
