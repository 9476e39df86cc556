/* synth_sources.c — the transcript notes (Sources/) that footnotes link to, and the migration of
 * a vault of the older format (dream/synthesis.h: SOURCES and MIGRATE).
 *
 * A transcript note is generated from the store, never edited by hand: the conversation's
 * messages in order, each a header paragraph that ends in its block id (the id a footnote's link
 * names) and the message's text in a code fence, so nothing a conversation says (a [[link]], a
 * #tag, a heading, a footnote) becomes Markdown of the vault. Only cited conversations get one;
 * the SOURCES stage brings Sources/ and every footnote's link to what the articles cite now. */
#include "synth_internal.h"

#include "../util/buf.h"
#include "../util/file.h"
#include "dream/error.h"
#include "dream/log.h"
#include "dream/vault.h"

#include <dirent.h>
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- one note ------------------------------------------------------------------------------ */

/* "YYYY-MM-DD HH:MM" (UTC) of ms, "" when unknown. */
static void src_when(int64_t ms, char out[20])
{
    out[0] = '\0';
    if (ms <= 0) return;
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(out, 20, "%04d-%02d-%02d %02d:%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100,
             tm.tm_min % 100);
}

/* A fence longer than any run of backticks in text, so the text cannot close it. */
static size_t src_fence_len(const char *text)
{
    size_t best = 0, run = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best) best = run;
    }
    return best < 3 ? 4 : best + 1;
}

/* The title as the note shows it: its name's title part (what a file name and a link may hold). */
static const char *src_shown_title(const char *note)
{
    const char *s = strchr(note, ' '); /* after "Sources/DATE" */
    return s ? s + 1 : note;
}

/* Appends the messages st (prepared; finalized here) reads for conversation conv to b, each its
 * header paragraph ending in its block id and its text fenced. replaced: the messages later
 * exports replaced, under a heading of their own (none when there are none), and a block id
 * another message holds already becomes "r" REVISION "-" POSITION. ids: the block ids so far. */
static int src_render_messages(sqlite3_stmt *st, int64_t conv, bool replaced, struct dbuf *b, char ***ids, size_t *n_ids)
{
    static const char fence[] = "``````````````````````````````````````````````````";
    sqlite3_bind_int64(st, 1, conv);
    int rc = DREAM_OK;
    bool first = true;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        if (replaced && first)
            rc = dbuf_printf(b, "\n## Replaced by a later export\n\nWhat an earlier export of this conversation said that a later one "
                                "edited or left out, kept for the footnotes that cite it.\n");
        first = false;
        int64_t pos = sqlite3_column_int64(st, 0);
        const char *role = (const char *)sqlite3_column_text(st, 1), *text = (const char *)sqlite3_column_text(st, 4);
        char *msg = dream_store_message_cite_id((const char *)sqlite3_column_text(st, 2), pos);
        char *block = msg ? dream_citation_block_id(msg) : NULL;
        char **g = block ? realloc(*ids, (*n_ids + 1) * sizeof *g) : NULL;
        if (rc || !g) {
            free(msg);
            free(block);
            if (!rc) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        *ids = g;
        for (size_t i = 0; i < *n_ids; i++)
            if (!strcmp(g[i], block)) { /* a repeated id: this one is known by where it stood */
                free(block);
                struct dbuf x = {0};
                if (replaced) dbuf_printf(&x, "r%lld-%lld", (long long)sqlite3_column_int64(st, 5), (long long)pos);
                else dbuf_printf(&x, "m%lld", (long long)pos);
                block = dbuf_take(&x);
                break;
            }
        if (!block) {
            free(msg);
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        g[(*n_ids)++] = block;
        char when[20];
        src_when(sqlite3_column_int64(st, 3), when);
        size_t fl = src_fence_len(text ? text : "");
        rc = dbuf_printf(b, "\n**%s** · `%s`%s%s ^%s\n\n%.*stext\n%s%s%.*s\n", role ? role : "?", msg, when[0] ? " · " : "", when, block, (int)fl,
                         fence, text ? text : "", text && text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "", (int)fl, fence);
        free(msg);
    }
    sqlite3_finalize(st);
    return rc;
}

int synth_source_render(dream_store *store, const char *cite, struct synth_file *f)
{
    memset(f, 0, sizeof *f);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT id, source, coalesce(title, ''), coalesce(created_at, updated_at, 0) FROM conversations WHERE cite = ?",
                           -1, &st, NULL))
        return store_sql_error(store, "reading a cited conversation");
    sqlite3_bind_text(st, 1, cite, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return dream_error_set(DREAM_ENOTFOUND, "the store has no conversation conv:%s", cite);
    }
    int64_t conv = sqlite3_column_int64(st, 0), ms = sqlite3_column_int64(st, 3);
    char *source = strdup((const char *)sqlite3_column_text(st, 1)), *title = strdup((const char *)sqlite3_column_text(st, 2));
    sqlite3_finalize(st);
    char *note = source && title ? synth_source_note(cite, title, ms) : NULL;
    struct dbuf b = {0};
    int rc = note ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
    char *name = note ? strdup(note) : NULL; /* the note's shown title, from its name */
    if (name) {
        char *paren = strrchr(name, '(');
        if (paren && paren > name) paren[-1] = '\0';
    }
    char day[20];
    src_when(ms, day);
    day[10] = '\0';
    if (!rc)
        rc = dbuf_printf(&b,
                         "---\ndream: transcript\nconversation: \"conv:%s\"\nsource: %s\ndate: %s\n---\n\n# %s\n\n"
                         "The conversation `conv:%s` (%s, %s) as dream keeps it, each message a block that footnotes link to. "
                         "dream writes this note from its store on every run: an edit here is lost.\n",
                         cite, source, day[0] ? day : DREAM_CITATION_UNDATED, name ? src_shown_title(name) : "conversation", cite,
                         day[0] ? day : DREAM_CITATION_UNDATED, source);
    free(name);
    char **ids = NULL; /* block ids given so far: two messages never share one */
    size_t n_ids = 0;
    if (!rc && sqlite3_prepare_v2(store_db(store),
                                  "SELECT position, role, source_id, coalesce(created_at, 0), text FROM messages WHERE conversation = ? ORDER BY position",
                                  -1, &st, NULL))
        rc = store_sql_error(store, "reading a cited conversation's messages");
    if (!rc) rc = src_render_messages(st, conv, false, &b, &ids, &n_ids);
    /* what later exports replaced (but a text that is back among the messages), the latest first:
     * of two with one id, the one dream_store_cited_message finds gets the plain block id */
    if (!rc && sqlite3_prepare_v2(store_db(store),
                                  "SELECT position, role, source_id, coalesce(created_at, 0), text, revision FROM replaced_messages r "
                                  "WHERE conversation = ?1 AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation = ?1 "
                                  "AND m.source_id = r.source_id AND m.text = r.text) ORDER BY revision DESC, position",
                                  -1, &st, NULL))
        rc = store_sql_error(store, "reading a cited conversation's replaced messages");
    if (!rc) rc = src_render_messages(st, conv, true, &b, &ids, &n_ids);
    for (size_t i = 0; i < n_ids; i++) free(ids[i]);
    free(ids);
    struct dbuf path = {0};
    if (!rc) rc = dbuf_printf(&path, "%s.md", note);
    free(note);
    free(source);
    free(title);
    if (rc) {
        dbuf_free(&b);
        dbuf_free(&path);
        return rc;
    }
    f->len = b.len;
    f->text = dbuf_take(&b);
    f->path = dbuf_take(&path);
    return f->text && f->path ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* Writes f under wiki unless the file already holds it. */
static int src_write(const char *wiki, const struct synth_file *f, bool *wrote)
{
    *wrote = false;
    struct dbuf p = {0};
    if (dbuf_printf(&p, "%s/%s", wiki, f->path)) return DREAM_ENOMEM;
    char *path = dbuf_take(&p), *have = NULL;
    size_t hl = 0;
    int rc = path ? file_read_all(path, 0, &have, &hl) : DREAM_ENOMEM;
    bool same = rc == DREAM_OK && hl == f->len && memcmp(have, f->text, hl) == 0;
    free(have);
    dream_error_clear();
    rc = DREAM_OK;
    if (!same) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        rc = file_mkdirs(path, 0755);
        *slash = '/';
        if (!rc) rc = file_write_atomic(path, f->text, f->len);
        *wrote = rc == DREAM_OK;
    }
    free(path);
    return rc;
}

/* ---- which notes ------------------------------------------------------------------------- */

/* A list of distinct strings. */
struct src_set {
    char **v;
    size_t n;
};

static bool set_has(const struct src_set *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x)) return true;
    return false;
}

static int set_add(struct src_set *s, const char *x)
{
    if (set_has(s, x)) return DREAM_OK;
    char **g = realloc(s->v, (s->n + 1) * sizeof *g);
    if (!g || !(g[s->n] = strdup(x))) {
        if (g) s->v = g;
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    s->v = g;
    s->n++;
    return DREAM_OK;
}

static void set_free(struct src_set *s) { synth_free_strings(s->v, s->n); }

/* Renders the notes of the conversations in cites into *files (appended), writing each that
 * differs on disk; a conversation the store lacks is skipped. *wrote counts the files written. */
static int src_render_all(dream_store *store, const char *wiki, const struct src_set *cites, struct synth_file **files, size_t *n, size_t *wrote)
{
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < cites->n; i++) {
        struct synth_file f;
        rc = synth_source_render(store, cites->v[i], &f);
        if (rc == DREAM_ENOTFOUND) {
            dream_error_clear();
            rc = DREAM_OK;
            continue;
        }
        bool w = false;
        if (!rc) rc = src_write(wiki, &f, &w);
        struct synth_file *g = rc ? NULL : realloc(*files, (*n + 1) * sizeof *g);
        if (!rc && !g) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (rc) {
            free(f.path);
            free(f.text);
            break;
        }
        *files = g;
        g[(*n)++] = f;
        if (w && wrote) (*wrote)++;
    }
    return rc;
}

/* True when the note of cite, by the store's name for it, is on disk under wiki. */
static bool src_note_on_disk(dream_store *store, const char *wiki, const char *cite)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT coalesce(title, ''), coalesce(created_at, updated_at, 0) FROM conversations WHERE cite = ?", -1, &st,
                           NULL))
        return false;
    sqlite3_bind_text(st, 1, cite, -1, SQLITE_STATIC);
    char *note = sqlite3_step(st) == SQLITE_ROW ? synth_source_note(cite, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1)) : NULL;
    sqlite3_finalize(st);
    struct dbuf p = {0};
    bool have = note && !dbuf_printf(&p, "%s/%s.md", wiki, note) && p.data && access(p.data, F_OK) == 0;
    dbuf_free(&p);
    free(note);
    return have;
}

int synth_sources_for(dream_store *store, const char *wiki, const char *const *texts, const size_t *lens, size_t n,
                      struct synth_file **files, size_t *n_files)
{
    struct src_set cites = {0};
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        dream_article *a = NULL;
        if ((rc = dream_article_parse(texts[i], lens[i], &a))) break;
        for (size_t k = 0; !rc && k < dream_article_footnote_count(a); k++) {
            const struct dream_article_footnote *f = dream_article_footnote(a, k);
            if (f->cite.note && f->cite.conv && !dream_citation_is_placeholder(f->cite.conv)) rc = set_add(&cites, f->cite.conv);
        }
        dream_article_free(a);
    }
    if (!rc && !files) { /* only the notes not on disk yet, written and not kept */
        struct src_set missing = {0};
        for (size_t i = 0; !rc && i < cites.n; i++)
            if (!src_note_on_disk(store, wiki, cites.v[i])) rc = set_add(&missing, cites.v[i]);
        struct synth_file *f = NULL;
        size_t nf = 0;
        if (!rc) rc = src_render_all(store, wiki, &missing, &f, &nf, NULL);
        synth_files_free(f, nf);
        set_free(&missing);
    } else if (!rc) {
        rc = src_render_all(store, wiki, &cites, files, n_files, NULL);
    }
    set_free(&cites);
    return rc;
}

/* ---- the stage ------------------------------------------------------------------------------ */

/* What the store says a conversation's note is called, cached: NULL when it knows no such one. */
struct src_names {
    struct src_set cites;
    char **notes;  /* parallel to cites.v */
    char **titles; /* the conversations' titles, parallel too */
};

static int src_note_of(dream_store *store, struct src_names *c, const char *cite, const char **out, const char **title)
{
    *out = NULL;
    *title = NULL;
    for (size_t i = 0; i < c->cites.n; i++)
        if (!strcmp(c->cites.v[i], cite)) {
            *out = c->notes[i];
            *title = c->titles[i];
            return DREAM_OK;
        }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT coalesce(title, ''), coalesce(created_at, updated_at, 0) FROM conversations WHERE cite = ?", -1, &st,
                           NULL))
        return store_sql_error(store, "reading a cited conversation");
    sqlite3_bind_text(st, 1, cite, -1, SQLITE_STATIC);
    char *note = NULL, *t = NULL;
    bool known = sqlite3_step(st) == SQLITE_ROW;
    if (known) {
        note = synth_source_note(cite, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
        t = strdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    char **g = realloc(c->notes, (c->cites.n + 1) * sizeof *g);
    if (g) c->notes = g;
    char **h = g ? realloc(c->titles, (c->cites.n + 1) * sizeof *h) : NULL;
    if (h) c->titles = h;
    if (!g || !h || (known && (!note || !t)) || set_add(&c->cites, cite)) {
        free(note);
        free(t);
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    }
    g[c->cites.n - 1] = note;
    h[c->cites.n - 1] = t;
    *out = note;
    *title = t;
    return DREAM_OK;
}

static void src_names_free(struct src_names *c)
{
    synth_free_strings(c->notes, c->cites.n);
    synth_free_strings(c->titles, c->cites.n);
    set_free(&c->cites);
}

/* Brings footnote links of a to the vault's form: each link names the store's note of its
 * conversation (no_sources: the plain key). Notes kept (those to write, or, for a conversation
 * the store lacks, to leave as they are) go to keep_cites / keep_notes. *relinked counts the
 * footnotes changed. */
static int src_relink(dream_store *store, struct src_names *names, dream_article *a, bool no_sources, struct src_set *keep_cites,
                      struct src_set *keep_notes, size_t *relinked)
{
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < dream_article_footnote_count(a); i++) {
        const struct dream_article_footnote *f = dream_article_footnote(a, i);
        if (!f->well_formed || dream_citation_is_placeholder(f->cite.conv)) continue;
        if (no_sources) {
            if (f->cite.note && !(rc = dream_article_footnote_set_note(a, i, NULL))) (*relinked)++;
            continue;
        }
        const char *want = NULL, *title = NULL;
        if ((rc = src_note_of(store, names, f->cite.conv, &want, &title))) break;
        if (!want) { /* a conversation this store does not have: its link (and note) stay */
            if (f->cite.note) rc = set_add(keep_notes, f->cite.note);
            continue;
        }
        rc = set_add(keep_cites, f->cite.conv);
        char *block = rc ? NULL : dream_citation_block_id(f->cite.msg);
        if (!rc && !block) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        bool same = !rc && f->cite.note && !strcmp(f->cite.note, want) && f->block && !strcmp(f->block, block);
        free(block);
        if (!rc && !same) {
            char *w = strdup(want), *tt = title ? strdup(title) : NULL;
            rc = w && (!title || tt) ? dream_article_footnote_set_note(a, i, w) : dream_error_set(DREAM_ENOMEM, "out of memory");
            /* the note was renamed with its conversation's title (a later export retitled it):
             * the title the footnote shows follows (it kept the old one after the new link) */
            if (!rc && tt) rc = dream_article_footnote_set_title(a, i, tt);
            free(w);
            free(tt);
            if (!rc) (*relinked)++;
        }
    }
    return rc;
}

bool synth_source_note_is_ours(const char *rel, const char *text, size_t len)
{
    static const char mark[] = "---\ndream: transcript\n";
    size_t n = strlen(rel), d = sizeof DREAM_SOURCES_DIR; /* "Sources/" */
    if (n <= d + 4 || strncmp(rel, DREAM_SOURCES_DIR "/", d) || strchr(rel + d, '/') || strcmp(rel + n - 4, ").md")) return false;
    size_t h = n - 4; /* the hash: hex digits back to " (" */
    while (h > d && isxdigit((unsigned char)rel[h - 1])) h--;
    if (n - 4 - h < 8 || h < d + 2 || rel[h - 1] != '(' || rel[h - 2] != ' ') return false;
    return text && len >= sizeof mark - 1 && !memcmp(text, mark, sizeof mark - 1);
}

/* The transcript notes now under wiki/Sources (relative paths, synth_source_note_is_ours), for
 * the ones no article needs: the person's own files there are not listed, so nothing removes or
 * commits them. */
static int src_on_disk(const char *wiki, struct src_set *out)
{
    struct dbuf p = {0};
    if (dbuf_printf(&p, "%s/%s", wiki, DREAM_SOURCES_DIR)) return DREAM_ENOMEM;
    char *dir = dbuf_take(&p);
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d) return DREAM_OK;
    int rc = DREAM_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l <= 3 || strcmp(e->d_name + l - 3, ".md")) continue;
        struct dbuf r = {0}, f = {0};
        rc = dbuf_printf(&r, "%s/%s", DREAM_SOURCES_DIR, e->d_name);
        char *rel = rc ? NULL : dbuf_take(&r), *full = rel && !dbuf_printf(&f, "%s/%s", wiki, rel) ? dbuf_take(&f) : NULL;
        char head[64];
        size_t got = 0;
        FILE *fp = full ? fopen(full, "rb") : NULL;
        if (fp) {
            got = fread(head, 1, sizeof head, fp);
            fclose(fp);
        }
        if (!rc && !full) rc = DREAM_ENOMEM;
        if (!rc && synth_source_note_is_ours(rel, head, got)) rc = set_add(out, rel);
        free(rel);
        free(full);
    }
    closedir(d);
    return rc;
}

/* Appends the file rel (a path under wiki) as it is on disk to files: DREAM_OK, DREAM_ENOMEM, or
 * the error reading it (DREAM_ENOTFOUND when it is gone). */
static int src_file_add(const char *wiki, const char *rel, struct synth_file **files, size_t *n)
{
    struct dbuf q = {0};
    char *full = dbuf_printf(&q, "%s/%s", wiki, rel) ? NULL : dbuf_take(&q), *text = NULL, *path = NULL;
    size_t len = 0;
    int rc = full ? file_read_all(full, 0, &text, &len) : dream_error_set(DREAM_ENOMEM, "out of memory");
    free(full);
    struct synth_file *g = rc ? NULL : realloc(*files, (*n + 1) * sizeof *g);
    if (g) *files = g;
    if (!rc && (!g || !(path = strdup(rel)))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    if (rc) {
        free(text);
        return rc;
    }
    (*files)[(*n)++] = (struct synth_file){path, text, len, true}; /* a transcript note: dream's own */
    return DREAM_OK;
}

bool synth_source_note_of(const char *name, const char *hash)
{
    size_t l = strlen(name), hl = strlen(hash);
    return hl && l > hl + 5 && !strcmp(name + l - 4, ").md") && !strncmp(name + l - 4 - hl, hash, hl) && name[l - 5 - hl] == '(';
}

int synth_sources_drop(const char *wiki, const char *const *hashes, size_t n, struct synth_file **kept, size_t *n_kept, size_t *removed)
{
    *kept = NULL, *n_kept = 0, *removed = 0;
    struct src_set disk = {0};
    int rc = src_on_disk(wiki, &disk);
    for (size_t i = 0; !rc && i < disk.n; i++) {
        const char *name = disk.v[i];
        bool drop = false;
        for (size_t k = 0; k < n && !drop; k++) drop = synth_source_note_of(name, hashes[k]);
        if (!drop) {
            rc = src_file_add(wiki, name, kept, n_kept);
            continue;
        }
        struct dbuf q = {0};
        char *full = dbuf_printf(&q, "%s/%s", wiki, name) ? NULL : dbuf_take(&q);
        if (!full) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        else if (unlink(full) != 0 && errno != ENOENT) rc = dream_error_set(DREAM_EIO, "cannot remove %s: %s", full, strerror(errno));
        else (*removed)++;
        free(full);
    }
    set_free(&disk);
    if (rc) {
        synth_files_free(*kept, *n_kept);
        *kept = NULL, *n_kept = 0;
    }
    return rc;
}

/* SOURCES, or with migrate the MIGRATE step: see dream/synthesis.h. */
/* The notes cited by the articles in folders of articles/ (the person moved them there, as
 * Obsidian lets them): dream does not write those files, but their footnotes keep their notes
 * (before, the notes went as cited by nothing, and the footnotes' links went dead). dir is a
 * folder under the wiki, depth how deep it is. */
static int src_keep_nested(dream_store *store, struct src_names *names, const char *dir, int depth, bool no_sources, struct src_set *keep_cites,
                           struct src_set *keep_notes)
{
    DIR *d = depth < 8 ? opendir(dir) : NULL;
    if (!d) return DREAM_OK;
    int rc = DREAM_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        struct dbuf q = {0};
        if (dbuf_printf(&q, "%s/%s", dir, e->d_name)) {
            rc = DREAM_ENOMEM;
            break;
        }
        struct stat st;
        size_t l = strlen(e->d_name);
        if (stat(q.data, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = src_keep_nested(store, names, q.data, depth + 1, no_sources, keep_cites, keep_notes);
        } else if (depth > 0 && l > 3 && !strcmp(e->d_name + l - 3, ".md")) { /* the files right under articles/ are the stages' own */
            dream_article *a = NULL;
            size_t ignored = 0;
            if (dream_article_read_file(q.data, &a) == 0) rc = src_relink(store, names, a, no_sources, keep_cites, keep_notes, &ignored);
            if (rc && rc != DREAM_ENOMEM) rc = DREAM_OK;
            dream_error_clear();
            dream_article_free(a);
        }
        dbuf_free(&q);
    }
    closedir(d);
    return rc;
}

static int src_sync(dream_store *store, const struct dream_synth_params *params, bool migrate, struct dream_synth_result *result)
{
    const char *stage = migrate ? "migrate" : "sources";
    struct dream_synth_params p;
    int rc = synth_stage_params(stage, params, &p);
    if (rc) return rc;
    struct dream_synth_result res = {0};
    rc = p.dry_run ? DREAM_OK : dream_synth_recover(store, p.wiki_dir, NULL);
    struct synth_stems stems = {0};
    if (!rc) rc = synth_list_stems(p.wiki_dir, &stems.stems, &stems.n);
    struct src_names names = {0};
    struct src_set keep_cites = {0}, keep_notes = {0}, disk = {0};
    struct synth_file *files = NULL;
    size_t n_files = 0, written = 0; /* articles written */
    for (size_t i = 0; !rc && i < stems.n; i++) {
        char *path = synth_article_path(p.wiki_dir, stems.stems[i]);
        dream_article *before = NULL, *after = NULL;
        if (!path || dream_article_read_file(path, &before)) {
            dream_error_clear();
            free(path);
            continue;
        }
        if (!synth_editable(stage, path, before, &res)) {
            /* not written now, but the notes it cites stay: its citations count all the same */
            size_t ignored = 0;
            if (!(rc = dream_article_clone(before, &after)))
                rc = src_relink(store, &names, after, p.no_sources, &keep_cites, &keep_notes, &ignored);
            if (rc && rc != DREAM_ENOMEM) rc = DREAM_OK, dream_error_clear();
            dream_article_free(after);
            dream_article_free(before);
            free(path);
            continue;
        }
        if ((rc = dream_article_clone(before, &after))) {
            dream_article_free(before);
            free(path);
            continue;
        }
        bool migrated = false;
        size_t relinked = 0;
        if (migrate) rc = dream_article_migrate(after, &migrated);
        if (!rc) rc = src_relink(store, &names, after, p.no_sources, &keep_cites, &keep_notes, &relinked);
        size_t bl, al;
        const char *bt = dream_article_text(before, &bl), *at = dream_article_text(after, &al);
        bool changed = !rc && (bl != al || memcmp(bt, at, bl) != 0);
        if (changed) res.eligible++;
        if (changed && !p.dry_run) {
            struct dream_gate_params gate = {.word_floor = 0};
            bool accepted = false;
            rc = synth_write(store, p.wiki_dir, stage, stems.stems[i], before, after, &gate, NULL, 0, NULL, 0, &accepted);
            if (!rc && accepted) {
                written++;
                res.migrated += migrated;
                res.relinked += relinked > 0;
            } else if (!rc) {
                res.rejected++;
            }
        }
        dream_article_free(before);
        dream_article_free(after);
        free(path);
    }
    if (!rc) {
        struct dbuf ad = {0};
        rc = dbuf_printf(&ad, "%s/articles", p.wiki_dir) ? DREAM_ENOMEM
                                                          : src_keep_nested(store, &names, ad.data, 0, p.no_sources, &keep_cites, &keep_notes);
        dbuf_free(&ad);
    }
    if (!rc && !p.dry_run && !p.no_commit) {
        rc = src_render_all(store, p.wiki_dir, &keep_cites, &files, &n_files, NULL);
        /* the notes of conversations this store lacks stay as they are on disk */
        for (size_t i = 0; !rc && i < keep_notes.n; i++) {
            struct dbuf r = {0};
            char *rel = dbuf_printf(&r, "%s.md", keep_notes.v[i]) ? NULL : dbuf_take(&r);
            rc = rel ? src_file_add(p.wiki_dir, rel, &files, &n_files) : dream_error_set(DREAM_ENOMEM, "out of memory");
            if (rc && rc != DREAM_ENOMEM) rc = DREAM_OK, dream_error_clear(); /* gone from disk: nothing to keep */
            free(rel);
        }
        res.sources = n_files;
        /* what no footnote cites any more goes */
        if (!rc) rc = src_on_disk(p.wiki_dir, &disk);
        for (size_t i = 0; !rc && i < disk.n; i++) {
            bool wanted = false;
            for (size_t k = 0; k < n_files && !wanted; k++) wanted = !strcmp(files[k].path, disk.v[i]);
            if (wanted) continue;
            struct dbuf q = {0};
            if (dbuf_printf(&q, "%s/%s", p.wiki_dir, disk.v[i])) rc = DREAM_ENOMEM;
            char *full = rc ? NULL : dbuf_take(&q);
            if (full && unlink(full) == 0) res.sources_removed++;
            free(full);
        }
        struct dbuf subject = {0};
        /* a migrate that only relinked (a note renamed with its conversation's title) is no
         * migration: its commit says what it did, as sources' does */
        if (!rc && migrate && res.migrated)
            rc = dbuf_printf(&subject, "migrate %zu article(s) to the Obsidian format: front matter, tags, footnotes linked to %zu transcript note(s)",
                             written, n_files);
        else if (!rc)
            rc = dbuf_printf(&subject, "sources: %zu transcript note(s) of the cited conversations, %zu article(s) relinked", n_files, res.relinked);
        if (!rc) rc = synth_commit_files(store, p.wiki_dir, subject.data, files, n_files, true, &res.committed);
        dbuf_free(&subject);
    }
    synth_files_free(files, n_files);
    set_free(&disk);
    set_free(&keep_notes);
    set_free(&keep_cites);
    src_names_free(&names);
    synth_free_strings(stems.stems, stems.n);
    if (result) *result = res;
    return rc;
}

int dream_synth_sources(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    return src_sync(store, params, false, result);
}

int dream_synth_migrate(dream_store *store, const struct dream_synth_params *params, struct dream_synth_result *result)
{
    return src_sync(store, params, true, result);
}
