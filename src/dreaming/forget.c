/* forget.c — `dream forget` (see dream/forget.h): choose the conversations, plan every article's
 * edit before anything is written, then the store's rows and the wiki's writes in one journaled
 * transaction, the files, and one commit. */
#include "dream/forget.h"

#include "../util/buf.h"
#include "../util/day.h"
#include "dream/error.h"
#include "dream/log.h"
#include "dream/pipeline.h"
#include "dream/vault.h"
#include "synth_internal.h"
#include "util/utf8.h"

#include <ctype.h>
#include <dirent.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FORGET_STAGE "forget"

struct fg_conv {
    int64_t id; /* 0: not in the store */
    char *cite, *source, *title;
    char date[11];
    size_t messages;
};

struct fg_art {
    dream_article *before, *after; /* after NULL: unchanged, or removed */
    bool edited, removed;
    struct dream_article_forget_result fr;
    size_t links; /* links to removed articles made text */
    int64_t seq;
};

struct forget {
    dream_store *store;
    const struct dream_forget_params *p;
    const char *wiki;
    struct fg_conv *convs;
    size_t n_convs;
    const char **hashes; /* convs[i].cite */
    struct synth_stems stems;
    struct fg_art *arts; /* one per stem */
    struct dream_forget_result res;
};

void dream_forget_default_params(struct dream_forget_params *p) { memset(p, 0, sizeof *p); }

static void fg_free(struct forget *f)
{
    for (size_t i = 0; i < f->n_convs; i++) {
        free(f->convs[i].cite);
        free(f->convs[i].source);
        free(f->convs[i].title);
    }
    free(f->convs);
    free(f->hashes);
    for (size_t i = 0; f->arts && i < f->stems.n; i++) {
        dream_article_free(f->arts[i].before);
        dream_article_free(f->arts[i].after);
    }
    free(f->arts);
    synth_free_strings(f->stems.stems, f->stems.n);
}

/* ---- choosing the conversations ----------------------------------------------------------- */

/* A day "YYYY-MM-DD" (a real one) as Unix ms at its start, UTC. */
static int fg_day(const char *s, int64_t *ms)
{
    if (!day_parse(s, ms)) return dream_error_set(DREAM_EINVAL, "--before wants a day written YYYY-MM-DD (such as 2024-01-31), not '%s'", s);
    return 0;
}

static int fg_add_conv(struct forget *f, sqlite3_stmt *st)
{
    struct fg_conv *g = realloc(f->convs, (f->n_convs + 1) * sizeof *g);
    if (!g) return dream_error_set(DREAM_ENOMEM, "out of memory");
    f->convs = g;
    struct fg_conv *c = &g[f->n_convs++];
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, 0);
    c->cite = strdup((const char *)sqlite3_column_text(st, 1));
    c->source = strdup((const char *)sqlite3_column_text(st, 2));
    c->title = strdup((const char *)sqlite3_column_text(st, 3));
    synth_day(sqlite3_column_int64(st, 4), c->date);
    c->messages = (size_t)sqlite3_column_int64(st, 5);
    return c->cite && c->source && c->title ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

#define FG_CONV_COLUMNS "SELECT id, cite, source, title, coalesce(updated_at, created_at, 0), message_count FROM conversations "

/* Where text names conv:<hash> (not a longer hash that starts with it): the 1-based line, or 0. */
static int fg_names(const char *text, size_t len, const char *hash)
{
    size_t hl = strlen(hash);
    for (const char *p = text; (p = strstr(p, "conv:")) != NULL; p += 5) {
        const char *h = p + 5;
        if ((size_t)(h - text) + hl > len || strncmp(h, hash, hl) != 0 || isxdigit((unsigned char)h[hl])) continue;
        int line = 1;
        for (const char *q = text; q < p; q++) line += *q == '\n';
        return line;
    }
    return 0;
}

/* Whether any article of the wiki names conv:<hash>. */
static bool fg_wiki_names(const struct forget *f, const char *hash)
{
    for (size_t i = 0; i < f->stems.n; i++) {
        size_t len;
        const char *t = f->arts[i].before ? dream_article_text(f->arts[i].before, &len) : NULL;
        if (t && fg_names(t, len, hash)) return true;
    }
    return false;
}

/* Whether the wiki still holds the transcript note of conv:<hash> (Sources/... (HASH).md), on
 * disk or in HEAD: a forget killed after the store's commit left it, and running forget again
 * takes it out. */
static bool fg_wiki_note(const struct forget *f, const char *hash)
{
    struct dbuf p = {0};
    if (!f->wiki || dbuf_printf(&p, "%s/%s", f->wiki, DREAM_SOURCES_DIR)) return false;
    DIR *d = opendir(p.data);
    dbuf_free(&p);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) found = synth_source_note_of(e->d_name, hash);
    if (d) closedir(d);
    if (found) return true;
    git_libgit2_init();
    git_repository *repo = NULL;
    git_object *tree = NULL;
    if (git_repository_open_ext(&repo, f->wiki, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 &&
        git_revparse_single(&tree, repo, "HEAD:" DREAM_SOURCES_DIR) == 0 && git_object_type(tree) == GIT_OBJECT_TREE)
        for (size_t i = 0; !found && i < git_tree_entrycount((git_tree *)tree); i++)
            found = synth_source_note_of(git_tree_entry_name(git_tree_entry_byindex((git_tree *)tree, i)), hash);
    git_object_free(tree);
    git_repository_free(repo);
    git_error_clear();
    git_libgit2_shutdown();
    return found;
}

static int fg_choose_by_hash(struct forget *f)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(f->store), FG_CONV_COLUMNS "WHERE cite = ?1", -1, &st, NULL))
        return store_sql_error(f->store, "finding a conversation");
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < f->p->n_conversations; i++) {
        const char *arg = f->p->conversations[i];
        const char *hash = strncmp(arg, "conv:", 5) == 0 ? arg + 5 : arg;
        bool dup = false;
        for (size_t k = 0; k < f->n_convs; k++) dup |= strcmp(f->convs[k].cite, hash) == 0;
        if (dup) continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT);
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            rc = fg_add_conv(f, st);
        } else if (step != SQLITE_DONE) {
            rc = store_sql_error(f->store, "finding a conversation");
        } else if (fg_wiki_names(f, hash) || fg_wiki_note(f, hash)) { /* the store lost it; the wiki still holds it */
            struct fg_conv *g = realloc(f->convs, (f->n_convs + 1) * sizeof *g);
            if (!g) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            else {
                f->convs = g;
                g[f->n_convs] = (struct fg_conv){.cite = strdup(hash), .source = strdup(""), .title = strdup("")};
                if (!g[f->n_convs++].cite) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            }
        } else {
            rc = dream_error_set(DREAM_ENOTFOUND,
                                 "no conversation conv:%.*s in the store %s%s%s: give the hash a footnote cites (`dream search WORDS "
                                 "--conversations` shows them), with or without conv:",
                                 utf8_cut(hash, 40), hash, dream_store_path(f->store), f->wiki ? ", and the wiki cites none" : "",
                                 f->wiki ? "" : " (and no wiki to look in)");
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* The sources of the store with their counts, "chatgpt (12), pi (3)", for an error. */
static char *fg_sources(dream_store *store)
{
    struct dbuf b = {0};
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT source, count(*) FROM conversations GROUP BY source ORDER BY source", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW)
            dbuf_printf(&b, "%s%s (%lld)", b.len ? ", " : "", (const char *)sqlite3_column_text(st, 0), (long long)sqlite3_column_int64(st, 1));
        sqlite3_finalize(st);
    }
    if (!b.len) dbuf_puts(&b, "none: the store is empty");
    return dbuf_take(&b);
}

static int fg_choose_by_filter(struct forget *f)
{
    int64_t before = 0;
    int rc = f->p->before ? fg_day(f->p->before, &before) : 0;
    if (rc) return rc;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(f->store),
                           FG_CONV_COLUMNS "WHERE (?1 IS NULL OR source = ?1) AND (?2 IS NULL OR coalesce(updated_at, created_at) < ?2) "
                                           "ORDER BY coalesce(updated_at, created_at, ingested_at), id",
                           -1, &st, NULL))
        return store_sql_error(f->store, "choosing conversations");
    if (f->p->source) sqlite3_bind_text(st, 1, f->p->source, -1, SQLITE_STATIC);
    if (f->p->before) sqlite3_bind_int64(st, 2, before);
    int step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) rc = fg_add_conv(f, st);
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(f->store, "choosing conversations");
    sqlite3_finalize(st);
    if (rc || !f->p->source || f->n_convs) return rc;
    /* none: a source the store has no conversation of is most likely misspelt */
    bool known = false;
    if (sqlite3_prepare_v2(store_db(f->store), "SELECT 1 FROM conversations WHERE source = ?1 LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, f->p->source, -1, SQLITE_STATIC);
        known = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    if (known) return DREAM_OK;
    char *have = fg_sources(f->store);
    rc = dream_error_set(DREAM_ENOTFOUND, "no conversation in the store %s comes from '%.*s'; its sources: %s", dream_store_path(f->store),
                         utf8_cut(f->p->source, 60), f->p->source, have ? have : "(out of memory)");
    free(have);
    return rc;
}

/* ---- planning the wiki ------------------------------------------------------------------- */

/* Reads every article (before anything is chosen: a hash the store lost may still be cited). */
static int fg_read_wiki(struct forget *f)
{
    int rc = synth_list_stems(f->wiki, &f->stems.stems, &f->stems.n);
    if (!rc && !(f->arts = calloc(f->stems.n + 1, sizeof *f->arts))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        char *path = synth_article_path(f->wiki, f->stems.stems[i]);
        rc = path ? dream_article_read_file(path, &f->arts[i].before) : DREAM_ENOMEM;
        free(path);
    }
    return rc ? dream_error_wrap(rc, "reading the wiki %s", f->wiki) : DREAM_OK;
}

/* The first forgotten hash article text names, with its line; NULL when none. */
static const char *fg_named(const struct forget *f, const dream_article *a, int *line)
{
    size_t len;
    const char *t = dream_article_text(a, &len);
    for (size_t k = 0; k < f->n_convs; k++)
        if ((*line = fg_names(t, len, f->hashes[k]))) return f->hashes[k];
    return NULL;
}

/* Whether the References body b holds words outside footnote definitions (dream writes each on
 * one line "[^label]: ..."): a line the person added under them, a paragraph or a line that reads
 * on from the last definition. */
static bool fg_refs_prose(const char *b)
{
    for (const char *l = b; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        const char *p = l;
        while (p < l + n && isspace((unsigned char)*p)) p++;
        bool def = p + 2 < l + n && p == l && p[0] == '[' && p[1] == '^' && memchr(p, ']', n) && memmem(p, n, "]:", 2);
        if (p < l + n && !def && dream_article_words(p, (size_t)(l + n - p))) return true;
        l = e ? e + 1 : NULL;
    }
    return false;
}

/* Whether a holds prose of its own: words in its lead or in a body or Notes section, or under
 * its footnote definitions. What is left once every citation went is what no conversation was
 * cited for (dream cites what it writes): the person's. */
static bool fg_has_prose(const dream_article *a)
{
    const char *lead = dream_article_lead(a);
    if (lead && dream_article_words(lead, strlen(lead))) return true;
    for (size_t i = 0; i < dream_article_section_count(a); i++) {
        const struct dream_article_section *sec = dream_article_section(a, i);
        if (!sec->body) continue;
        if ((sec->kind == DREAM_SECTION_BODY || sec->kind == DREAM_SECTION_NOTES) && dream_article_words(sec->body, strlen(sec->body)))
            return true;
        if (sec->kind == DREAM_SECTION_REFERENCES && fg_refs_prose(sec->body)) return true;
    }
    return false;
}

/* The edit of article i: the forgotten claims out, then normalized and gated. */
static int fg_plan_article(struct forget *f, size_t i)
{
    struct fg_art *a = &f->arts[i];
    const char *stem = f->stems.stems[i];
    int line = 0;
    if (!fg_named(f, a->before, &line)) return DREAM_OK;
    if (dream_article_editable(a->before, &line)) {
        char why[512];
        snprintf(why, sizeof why, "%s", dream_error_last());
        return dream_error_set(DREAM_EFORMAT,
                               "articles/%s.md:%d: no edit can be placed in it (%s), so its claims cannot be told apart; fix that (or "
                               "edit out the conversations' claims by hand), then run dream forget again",
                               stem, line ? line : 1, why);
    }
    int rc = dream_article_clone(a->before, &a->after);
    if (!rc) rc = dream_article_forget(a->after, f->hashes, f->n_convs, &a->fr);
    if (!rc && !a->fr.cited && !fg_has_prose(a->after)) {
        a->removed = true;
        dream_article_free(a->after);
        a->after = NULL;
        return DREAM_OK;
    }
    if (!rc) rc = synth_normalize(a->after, stem, &f->stems);
    const char *left = rc ? NULL : fg_named(f, a->after, &line);
    if (left)
        return dream_error_set(DREAM_EFORMAT,
                               "articles/%s.md:%d: conv:%s is named outside a footnote dream can take out; edit that line by hand, "
                               "then run dream forget again",
                               stem, line, left);
    a->edited = !rc;
    return rc;
}

/* Whether link l points to an article that is being removed. */
static bool fg_links_removed(const struct forget *f, const struct dream_article_link *l)
{
    if (!l->target[0] || dream_article_link_is_meta(l->target)) return false;
    long s = dream_article_resolve_link((const char *const *)f->stems.stems, f->stems.n, l->target);
    return s >= 0 && f->arts[s].removed;
}

/* Links of article i to removed articles become the text they show (as for any article that does
 * not exist); a See also bullet that is only such a link goes, and an emptied See also with it. */
static int fg_unlink(struct forget *f, size_t i, bool *changed)
{
    *changed = false;
    struct fg_art *a = &f->arts[i];
    dream_article *cur = a->after ? a->after : a->before;
    size_t len, at = 0, n = 0;
    const char *t = dream_article_text(cur, &len);
    struct dbuf b = {0};
    const struct synth_stems none = {0};
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < dream_article_link_count(cur); k++) {
        const struct dream_article_link *l = dream_article_link(cur, k);
        if (l->offset < at || !fg_links_removed(f, l)) continue;
        size_t from = l->offset, to = l->offset + l->len;
        bool whole_line = false;
        if (l->in_see_also) { /* "- [[X]]" alone on its line: the line goes */
            size_t ls = from, le = to;
            while (ls > 0 && t[ls - 1] != '\n') ls--;
            while (le < len && t[le] != '\n') le++;
            const char *p = t + ls;
            while (p < t + from && (*p == ' ' || *p == '-' || *p == '*')) p++;
            const char *q = t + to;
            while (q < t + le && isspace((unsigned char)*q)) q++;
            whole_line = p == t + from && q == t + le;
            if (whole_line) from = ls, to = le < len ? le + 1 : le;
        }
        char *text = NULL;
        if (whole_line) {
            text = strdup("");
        } else {
            size_t link = from;
            if (from > at && t[from - 1] == '!') from--; /* an embed's "!" goes with it */
            char *raw = strndup(t + link, to - link);
            text = raw ? synth_unlink_redlinks(raw, &none) : NULL;
            free(raw);
        }
        rc = text ? dbuf_append(&b, t + at, from - at) : dream_error_set(DREAM_ENOMEM, "out of memory");
        if (!rc) rc = dbuf_puts(&b, text);
        free(text);
        at = to;
        n++;
    }
    if (!rc && n) rc = dbuf_append(&b, t + at, len - at);
    if (!rc && n && !a->after) rc = dream_article_clone(a->before, &a->after);
    if (!rc && n) rc = dream_article_set_text(a->after, b.data, b.len);
    dbuf_free(&b);
    long si;
    if (!rc && n && (si = dream_article_section_find_kind(a->after, DREAM_SECTION_SEE_ALSO)) >= 0) {
        const char *body = dream_article_section(a->after, (size_t)si)->body;
        bool blank = true;
        for (const char *p = body; *p && blank; p++) blank = isspace((unsigned char)*p) != 0;
        if (blank) rc = dream_article_section_remove(a->after, (size_t)si);
    }
    if (!rc && n) rc = synth_normalize(a->after, f->stems.stems[i], &f->stems);
    a->links += n;
    *changed = n > 0;
    return rc;
}

/* Every article's edit, then the links to the removed ones (and redirects to them, which go
 * too, until none is left), before anything is written. */
static int fg_plan(struct forget *f)
{
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < f->stems.n; i++) rc = fg_plan_article(f, i);
    for (bool again = true; !rc && again;) {
        again = false;
        for (size_t i = 0; !rc && i < f->stems.n; i++) {
            struct fg_art *a = &f->arts[i];
            if (a->removed) continue;
            dream_article *cur = a->after ? a->after : a->before;
            bool to_removed = false;
            for (size_t k = 0; k < dream_article_link_count(cur) && !to_removed; k++)
                to_removed = fg_links_removed(f, dream_article_link(cur, k));
            if (!to_removed) continue;
            if (dream_article_is_redirect(cur)) {
                a->removed = again = true;
                dream_article_free(a->after);
                a->after = NULL;
                continue;
            }
            bool changed;
            rc = fg_unlink(f, i, &changed);
        }
    }
    /* each edit must pass the gate, with the forgotten conversations allowed to vanish */
    struct dream_gate_params gp = {.may_vanish = f->hashes, .n_may_vanish = f->n_convs};
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        if (!f->arts[i].after) continue;
        struct dream_gate_verdict v;
        rc = dream_article_gate(f->arts[i].before, f->arts[i].after, &gp, &v);
        if (rc) break;
        if (!v.accepted)
            rc = dream_error_set(DREAM_EFORMAT, "articles/%s.md: the edit that forgets the conversations fails the write gate (%s); "
                                 "nothing was changed: edit their claims out by hand",
                                 f->stems.stems[i], v.n_reasons ? v.reasons[0] : "no reason given");
        dream_gate_verdict_free(&v);
    }
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        const struct fg_art *a = &f->arts[i];
        f->res.edited += a->edited && !a->removed;
        f->res.removed += a->removed;
        f->res.unlinked += !a->edited && !a->removed && a->links;
    }
    return rc;
}

/* Whether rel (relative to the wiki) is a file forget writes or removes: an article it edits or
 * removes, or the transcript note of a forgotten conversation ("Sources/... (HASH).md"); *removes
 * says an article goes with text of its own (not a redirect). */
static bool fg_touches(const struct forget *f, const char *rel, bool *removes)
{
    *removes = false;
    size_t n = strlen(rel);
    if (strncmp(rel, "articles/", 9) == 0 && n > 12 && strcmp(rel + n - 3, ".md") == 0 && !strchr(rel + 9, '/')) {
        for (size_t i = 0; i < f->stems.n; i++) {
            const char *st = f->stems.stems[i];
            if (strlen(st) != n - 12 || strncmp(st, rel + 9, n - 12) != 0) continue;
            /* a redirect holds only its link: removing one loses nothing of the person's */
            *removes = f->arts[i].removed && !dream_article_is_redirect(f->arts[i].before);
            return f->arts[i].after || f->arts[i].removed;
        }
        return false;
    }
    if (strncmp(rel, DREAM_SOURCES_DIR "/", sizeof DREAM_SOURCES_DIR) != 0) return false;
    for (size_t k = 0; k < f->n_convs; k++)
        if (synth_source_note_of(rel, f->hashes[k])) return true; /* dream's own file: no text of the person's */
    return false;
}

/* What git holds no commit of in the files forget writes, refused before anything changes: a
 * staged change (the index would keep the forgotten text after forget's commit, and the person's
 * next `git commit` would bring it back), or a change not even staged in a file forget removes
 * (it would be lost with the file). An article forget only edits takes the person's unstaged
 * edit along into its commit, as every stage does. No repository: nothing to compare. */
static int fg_git_uncommitted(const struct forget *f)
{
    git_libgit2_init();
    git_repository *repo = NULL;
    git_status_list *list = NULL;
    git_status_options o;
    git_status_options_init(&o, GIT_STATUS_OPTIONS_VERSION);
    o.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
    o.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    int rc = DREAM_OK;
    if (git_repository_open_ext(&repo, f->wiki, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 && git_repository_head_unborn(repo) != 1 &&
        git_status_list_new(&list, repo, &o) == 0) {
        const unsigned staged = GIT_STATUS_INDEX_NEW | GIT_STATUS_INDEX_MODIFIED | GIT_STATUS_INDEX_DELETED | GIT_STATUS_INDEX_RENAMED |
                                GIT_STATUS_INDEX_TYPECHANGE;
        const unsigned unstaged = GIT_STATUS_WT_NEW | GIT_STATUS_WT_MODIFIED | GIT_STATUS_WT_TYPECHANGE | GIT_STATUS_WT_RENAMED;
        for (size_t i = 0; !rc && i < git_status_list_entrycount(list); i++) {
            const git_status_entry *e = git_status_byindex(list, i);
            const git_diff_delta *d = e->head_to_index ? e->head_to_index : e->index_to_workdir;
            const char *rel = d ? (d->new_file.path ? d->new_file.path : d->old_file.path) : NULL;
            bool removes;
            if (!rel || !fg_touches(f, rel, &removes)) continue;
            if (e->status & staged)
                rc = dream_error_set(DREAM_EBUSY,
                                     "%s/%s has changes staged in git that forget would leave in the index, and the next git commit "
                                     "would bring the forgotten text back; commit them (git -C '%s' commit) or unstage them (git -C '%s' "
                                     "restore --staged '%s'), then run dream forget again",
                                     f->wiki, rel, f->wiki, f->wiki, rel);
            else if (removes && (e->status & unstaged))
                rc = dream_error_set(DREAM_EBUSY,
                                     "%s/%s has changes git holds no commit of, and forget removes the file: they would be lost; "
                                     "commit them (git -C '%s' add '%s' && git -C '%s' commit), or move them elsewhere, then run dream "
                                     "forget again",
                                     f->wiki, rel, f->wiki, rel, f->wiki);
        }
    }
    git_error_clear();
    git_status_list_free(list);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return rc;
}

/* ---- the store ---------------------------------------------------------------------------- */

/* temp.forget_convs: the row ids of the chosen conversations the store has. */
static int fg_temp_convs(struct forget *f)
{
    int rc = store_exec(f->store, "CREATE TEMP TABLE IF NOT EXISTS forget_convs (id INTEGER PRIMARY KEY); DELETE FROM temp.forget_convs",
                        "listing the conversations to forget");
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(f->store), "INSERT OR IGNORE INTO temp.forget_convs VALUES (?1)", -1, &st, NULL))
        rc = store_sql_error(f->store, "listing the conversations to forget");
    for (size_t i = 0; !rc && i < f->n_convs; i++) {
        if (!f->convs[i].id) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, f->convs[i].id);
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(f->store, "listing the conversations to forget");
    }
    sqlite3_finalize(st);
    return rc;
}

static int fg_count(struct forget *f, const char *sql, size_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(f->store), sql, -1, &st, NULL)) return store_sql_error(f->store, "counting what forget takes out");
    int rc = sqlite3_step(st) == SQLITE_ROW ? DREAM_OK : store_sql_error(f->store, "counting what forget takes out");
    *out = rc ? 0 : (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

#define FG_IN_CONVS "(SELECT id FROM temp.forget_convs)"
#define FG_CHUNKS "(SELECT id FROM chunks WHERE conversation IN " FG_IN_CONVS ")"

/* What goes from the store: messages, chunks, and the subjects only these conversations name. */
static int fg_store_counts(struct forget *f)
{
    for (size_t i = 0; i < f->n_convs; i++) f->res.conversations += f->convs[i].id != 0;
    int rc = fg_count(f,
                      "SELECT (SELECT count(*) FROM messages WHERE conversation IN " FG_IN_CONVS ") + "
                      "(SELECT count(*) FROM replaced_messages WHERE conversation IN " FG_IN_CONVS ")",
                      &f->res.messages);
    if (!rc) rc = fg_count(f, "SELECT count(*) FROM chunks WHERE conversation IN " FG_IN_CONVS, &f->res.chunks);
    if (!rc)
        rc = fg_count(f,
                      "SELECT count(*) FROM pipeline_entities e WHERE EXISTS (SELECT 1 FROM chunk_mentions m WHERE m.entity = e.id AND "
                      "m.chunk IN " FG_CHUNKS ") AND NOT EXISTS (SELECT 1 FROM chunk_mentions m WHERE m.entity = e.id AND m.chunk NOT IN " FG_CHUNKS
                      ")",
                      &f->res.subjects);
    return rc;
}

/* Runs sql with ?1 bound to text. */
static int fg_exec1(struct forget *f, const char *sql, const char *text)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(f->store), sql, -1, &st, NULL)) return store_sql_error(f->store, "forgetting an article's rows");
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(f->store, "forgetting an article's rows");
    sqlite3_finalize(st);
    return rc;
}

/* The rows of a removed article: its ledgers, its sections' word marks, and its subject's
 * writing stages (so a subject other conversations name may have its article written anew). */
static int fg_store_removed_article(struct forget *f, const char *stem)
{
    static const char *const sql[] = {"DELETE FROM chunk_routed WHERE article = ?1", "DELETE FROM chunk_folded WHERE article = ?1",
                                      "DELETE FROM see_also_offered WHERE article = ?1 OR target = ?1",
                                      "DELETE FROM section_high_water WHERE article = ?1", "DELETE FROM stage_state WHERE stage = 'fold/' || ?1"};
    int rc = DREAM_OK;
    for (size_t k = 0; !rc && k < sizeof sql / sizeof sql[0]; k++) rc = fg_exec1(f, sql[k], stem);
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(f->store), "SELECT id, article_title FROM pipeline_entities WHERE route = 'article'", -1, &st, NULL))
        rc = store_sql_error(f->store, "forgetting an article's rows");
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *title = (const char *)sqlite3_column_text(st, 1);
        char *s = title ? dream_article_stem(title) : NULL;
        bool same = s && strcmp(s, stem) == 0;
        free(s);
        if (!same) continue;
        char del[160];
        snprintf(del, sizeof del, "DELETE FROM stage_state WHERE stage IN ('create', 'reconcile', 'wikify') AND item = %lld",
                 (long long)sqlite3_column_int64(st, 0));
        rc = store_exec(f->store, del, "forgetting an article's rows");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Each chosen conversation the store has, remembered as forgotten (dream_store_put skips it),
 * and its messages (a resumed Claude Code session repeats them, and ingest leaves them out). */
static int fg_remember(struct forget *f)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(f->store), "SELECT source, source_id, id FROM conversations WHERE id IN " FG_IN_CONVS, -1, &st, NULL))
        return store_sql_error(f->store, "remembering the forgotten conversations");
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        rc = store_forgotten_add(f->store, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1));
        if (!rc) rc = store_forgotten_add_messages(f->store, sqlite3_column_int64(st, 2));
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(f->store, "remembering the forgotten conversations");
    sqlite3_finalize(st);
    return rc;
}

/* Everything of the chosen conversations, in the caller's transaction: their stage state, chunks
 * (and, by cascade, mentions and ledgers), messages (and, by trigger, their search rows), the
 * messages later exports replaced, the conversations, and the subjects no other chunk names. */
static int fg_store_delete(struct forget *f)
{
    int rc = fg_remember(f);
    if (!rc)
        rc = store_exec(f->store,
                        "CREATE TEMP TABLE IF NOT EXISTS forget_chunks (id INTEGER PRIMARY KEY); DELETE FROM temp.forget_chunks;"
                        "INSERT INTO temp.forget_chunks SELECT id FROM chunks WHERE conversation IN " FG_IN_CONVS ";"
                        "CREATE TEMP TABLE IF NOT EXISTS forget_subjects (id INTEGER PRIMARY KEY); DELETE FROM temp.forget_subjects;"
                        "INSERT OR IGNORE INTO temp.forget_subjects SELECT entity FROM chunk_mentions WHERE entity IS NOT NULL AND chunk IN "
                        "(SELECT id FROM temp.forget_chunks);"
                        "DELETE FROM stage_state WHERE stage = 'segment' AND item IN " FG_IN_CONVS ";"
                        "DELETE FROM stage_state WHERE (stage = 'extract' OR stage LIKE 'fold/%') AND item IN (SELECT id FROM temp.forget_chunks);"
                        "DELETE FROM chunks WHERE id IN (SELECT id FROM temp.forget_chunks);"
                        "DELETE FROM messages WHERE conversation IN " FG_IN_CONVS ";"
                        "DELETE FROM replaced_messages WHERE conversation IN " FG_IN_CONVS ";"
                        "DELETE FROM conversations WHERE id IN " FG_IN_CONVS ";"
                        "DELETE FROM temp.forget_subjects WHERE id IN (SELECT entity FROM chunk_mentions WHERE entity IS NOT NULL);"
                        "DELETE FROM stage_state WHERE stage IN ('create', 'reconcile', 'wikify') AND item IN (SELECT id FROM temp.forget_subjects);"
                        "DELETE FROM pipeline_entities WHERE id IN (SELECT id FROM temp.forget_subjects)",
                        "forgetting the conversations");
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        if (f->arts[i].removed) rc = fg_store_removed_article(f, f->stems.stems[i]);
        else if (f->arts[i].edited) rc = fg_exec1(f, "DELETE FROM section_high_water WHERE article = ?1", f->stems.stems[i]);
    }
    return rc;
}

/* Writes over what was taken out: the search index merged into one segment (its deleted rows
 * dropped), the WAL checkpointed into the file and emptied. Best effort: a reader elsewhere may
 * keep the WAL from being emptied until later. */
static void fg_scrub(struct forget *f)
{
    if (store_exec(f->store, "INSERT INTO search (search) VALUES ('optimize')", "merging the search index")) {
        dream_log(DREAM_LOG_WARN, "%s", dream_error_last());
        dream_error_clear();
    }
    sqlite3_exec(store_db(f->store), "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
}

/* ---- doing it ----------------------------------------------------------------------------- */

static void fg_report(const struct forget *f)
{
    if (!f->p->on_item) return;
    for (size_t i = 0; i < f->n_convs; i++) {
        const struct fg_conv *c = &f->convs[i];
        struct dream_forget_item it = {.what = DREAM_FORGET_CONVERSATION, .cite = c->cite, .source = c->source, .title = c->title,
                                       .date = c->date, .messages = c->messages, .stored = c->id != 0};
        f->p->on_item(f->p->ud, &it);
    }
    for (size_t i = 0; i < f->stems.n; i++) {
        const struct fg_art *a = &f->arts[i];
        if (!a->edited && !a->removed && !a->links) continue;
        char path[1200];
        snprintf(path, sizeof path, "articles/%s.md", f->stems.stems[i]);
        struct dream_forget_item it = {.what = a->removed  ? DREAM_FORGET_ARTICLE_REMOVED
                                               : a->edited ? DREAM_FORGET_ARTICLE_EDITED
                                                           : DREAM_FORGET_ARTICLE_UNLINKED,
                                       .path = path,
                                       .sentences = a->fr.sentences,
                                       .citations = a->fr.citations,
                                       .sections = a->fr.sections,
                                       .links = a->links};
        f->p->on_item(f->p->ud, &it);
    }
}

/* "forget conv:HASH", "forget 3 conversation(s) from chatgpt before 2024-01-01", ... */
static char *fg_subject(const struct forget *f)
{
    struct dbuf b = {0};
    if (f->n_convs == 1 && !f->p->source && !f->p->before) dbuf_printf(&b, "forget conv:%s", f->convs[0].cite);
    else dbuf_printf(&b, "forget %zu conversation(s)", f->n_convs);
    if (f->p->source) dbuf_printf(&b, " from %s", f->p->source);
    if (f->p->before) dbuf_printf(&b, " before %s", f->p->before);
    if (f->n_convs > 1 && !f->p->source && !f->p->before)
        for (size_t i = 0; i < f->n_convs && b.len < 400; i++) dbuf_printf(&b, "%s conv:%s", i ? "," : ":", f->convs[i].cite);
    return dbuf_take(&b);
}

/* The store's rows and the wiki's journal in one transaction, then the files and the commit. */
static int fg_apply(struct forget *f)
{
    int rc = store_exec(f->store, "BEGIN IMMEDIATE", "forgetting the conversations");
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        struct fg_art *a = &f->arts[i];
        if (a->after || a->removed) rc = synth_journal(f->store, FORGET_STAGE, f->stems.stems[i], a->before, a->after, &a->seq);
    }
    if (!rc) rc = fg_store_delete(f);
    /* the search index's deleted rows dropped in the same transaction: a forget killed after it
     * (in its article writes or its commit) left every word of the conversations in the index
     * until some later merge; fg_scrub merges again for the articles' rows */
    if (!rc) rc = store_exec(f->store, "INSERT INTO search (search) VALUES ('optimize')", "merging the search index");
    if (!rc) rc = store_exec(f->store, "COMMIT", "forgetting the conversations");
    if (rc) {
        sqlite3_exec(store_db(f->store), "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    struct dream_gate_params gp = {.may_vanish = f->hashes, .n_may_vanish = f->n_convs};
    for (size_t i = 0; !rc && i < f->stems.n; i++) {
        struct fg_art *a = &f->arts[i];
        if (!a->after && !a->removed) continue;
        bool done = false;
        rc = synth_put(f->store, f->wiki, FORGET_STAGE, a->seq, f->stems.stems[i], a->before, a->after, &gp, &done);
        f->res.left += !rc && !done;
    }
    /* the forgotten conversations' transcript notes leave the vault in the same commit */
    struct synth_file *notes = NULL;
    size_t n_notes = 0, dropped = 0;
    if (!rc && f->wiki) rc = synth_sources_drop(f->wiki, (const char *const *)f->hashes, f->n_convs, &notes, &n_notes, &dropped);
    char *subject = rc ? NULL : fg_subject(f);
    if (!rc && !subject) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    else if (!rc && f->wiki) rc = synth_commit_files(f->store, f->wiki, subject, notes, n_notes, true, &f->res.committed);
    else if (!rc) rc = synth_commit(f->store, f->wiki, subject, &f->res.committed); /* --no-wiki: an empty journal */
    free(subject);
    synth_files_free(notes, n_notes);
    return rc;
}

int dream_forget(dream_store *store, const struct dream_forget_params *params, struct dream_forget_result *result)
{
    struct dream_forget_params p;
    if (params) p = *params;
    else dream_forget_default_params(&p);
    if (result) memset(result, 0, sizeof *result);
    bool by_hash = p.n_conversations > 0, by_filter = p.source || p.before;
    if (by_hash == by_filter)
        return dream_error_set(DREAM_EINVAL, by_hash ? "give conversations by hash, or --source/--before, not both"
                                                     : "nothing to forget: give conversation hashes (conv:HASH), --source SOURCE or --before DAY");
    struct forget f = {.store = store, .p = &p};
    char *wiki_dflt = NULL;
    f.wiki = p.no_wiki ? NULL : p.wiki_dir ? p.wiki_dir : (wiki_dflt = dream_pipeline_default_wiki());
    int fd = -1, rc = DREAM_OK;
    /* a --wiki that is no wiki (a typo) is refused before the store is touched: the conversations
     * left the store while the real wiki went on citing them */
    if (!p.no_wiki && p.wiki_dir && !dream_vault_is_set_up(p.wiki_dir))
        rc = dream_error_set(DREAM_ENOTFOUND,
                             "%s is not a wiki dream init set up (it has no Meta/ folder): name the wiki with --wiki, or forget from the "
                             "store alone with --no-wiki",
                             p.wiki_dir);
    const char *sp = dream_store_path(store);
    if (!rc && !p.dry_run && !p.lock_held && strcmp(sp, ":memory:") != 0) rc = dream_run_lock(sp, &fd);
    /* a run killed half way is finished first, so the journal holds only what forget writes */
    if (!rc && f.wiki && !p.dry_run) rc = dream_synth_recover(store, f.wiki, NULL);
    if (!rc && f.wiki) rc = fg_read_wiki(&f);
    if (!rc) rc = by_hash ? fg_choose_by_hash(&f) : fg_choose_by_filter(&f);
    if (!rc && f.n_convs && !(f.hashes = calloc(f.n_convs, sizeof *f.hashes))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < f.n_convs; i++) f.hashes[i] = f.convs[i].cite;
    if (!rc && f.n_convs && f.wiki) rc = fg_plan(&f);
    if (!rc && f.n_convs && f.wiki) rc = fg_git_uncommitted(&f);
    if (!rc && f.n_convs) rc = fg_temp_convs(&f);
    if (!rc && f.n_convs) rc = fg_store_counts(&f);
    if (!rc) fg_report(&f);
    int secure = -1;
    if (!rc && f.n_convs && !p.dry_run) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(store_db(store), "PRAGMA secure_delete", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            secure = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        rc = store_exec(store, "PRAGMA secure_delete = ON", "forgetting the conversations");
        if (!rc) rc = fg_apply(&f);
        if (!rc) fg_scrub(&f);
        sqlite3_exec(store_db(store), secure == 1 ? "PRAGMA secure_delete = ON" : "PRAGMA secure_delete = OFF", NULL, NULL, NULL);
    }
    f.res.wiki = f.wiki != NULL;
    if (result) *result = f.res;
    dream_run_unlock(fd);
    fg_free(&f);
    free(wiki_dflt);
    return rc;
}
