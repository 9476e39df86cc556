/* read_status.c — dream_read_status: what the memory holds (articles, store counts), when the
 * pipeline last wrote it (the newest `memory:` commit, through libgit2) and whether a nightly
 * run is scheduled. */
#include "read_internal.h"

#include "dream/error.h"
#include "dream/paths.h"
#include "store_internal.h"

#include "dream/pipeline.h"
#include "dream/schedule.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Commits walked at most when looking for the last `memory:` one. */
#define READ_GIT_WALK_MAX 20000

/* {"id","date","subject"} of the newest commit reachable from HEAD whose message begins
 * "memory:", json null when there is none; *git says whether the wiki is a repository. */
static json_t *read_last_memory_commit(const char *wiki, bool *git)
{
    *git = false;
    git_libgit2_init();
    git_repository *repo = NULL;
    git_commit *c = NULL;
    json_t *res = json_null();
    git_oid oid;
    if (git_repository_open_ext(&repo, wiki, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) != 0) goto done;
    *git = true;
    /* back from HEAD along first parents, which a shallow clone has up to its cut (a walk sorted
     * by time wants every parent, and found nothing there) */
    if (git_reference_name_to_id(&oid, repo, "HEAD") != 0 || git_commit_lookup(&c, repo, &oid) != 0) goto done;
    for (int n = 0; c && n < READ_GIT_WALK_MAX; n++) {
        const char *msg = git_commit_message(c);
        if (msg && strncmp(msg, "memory:", 7) == 0) {
            char id[GIT_OID_HEXSZ + 1], date[32];
            git_oid_tostr(id, sizeof id, git_commit_id(c));
            time_t t = (time_t)git_commit_time(c);
            struct tm tm;
            gmtime_r(&t, &tm);
            strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
            const char *summary = git_commit_summary(c);
            json_decref(res);
            id[12] = '\0';
            res = json_pack("{ss ss ss}", "id", id, "date", date, "subject", summary ? summary : "");
            break;
        }
        git_commit *parent = NULL;
        if (git_commit_parentcount(c) == 0 || git_commit_parent(&parent, c, 0) != 0) parent = NULL;
        git_commit_free(c);
        c = parent;
    }
done:
    git_commit_free(c);
    git_error_clear();
    git_repository_free(repo);
    git_libgit2_shutdown();
    return res ? res : json_null();
}

/* The systemd user timer `dream schedule` writes, or the crontab line (a copy of which it keeps
 * in the config directory): {"installed", "via"?, "at"?, "file"?}. */
static json_t *read_schedule_state(void)
{
    char *cfg = NULL;
    json_t *o = json_pack("{sb}", "installed", 0);
    if (dream_paths_config_dir(&cfg) != 0) {
        dream_error_clear();
        return o;
    }
    struct dbuf p = {0};
    dbuf_printf(&p, "%s/schedule", cfg);
    free(cfg);
    FILE *f = p.data ? fopen(p.data, "r") : NULL;
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            char *eq = strchr(line, '=');
            if (!eq) continue;
            *eq = '\0';
            if (strcmp(line, "via") == 0 || strcmp(line, "at") == 0 || strcmp(line, "file") == 0)
                json_object_set_new(o, line, json_string(eq + 1));
        }
        fclose(f);
        json_object_set_new(o, "installed", json_true());
        /* the state file says what was installed; the scheduler says whether it still is */
        int live = dream_schedule_live(json_string_value(json_object_get(o, "via")));
        json_object_set_new(o, "live", live < 0 ? json_null() : json_boolean(live));
        int ours = live == 1 ? dream_schedule_ours(json_string_value(json_object_get(o, "via"))) : -1;
        if (ours == 0) json_object_set_new(o, "ours", json_false());
    }
    dbuf_free(&p);
    return o;
}

static int64_t read_scalar(dream_store *s, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* {"done","given_up","total"} of one stage whose items are the rows of table: done and given up
 * at the row's current revision (a conversation that grew is to do again). */
static json_t *read_stage_progress(dream_store *s, const char *stage, const char *table)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT count(*), coalesce(sum(st.status = 'done' AND st.revision >= t.revision), 0), "
             "coalesce(sum(st.status = 'failed' AND st.revision >= t.revision), 0) FROM %s t "
             "LEFT JOIN stage_state st ON st.stage = '%s' AND st.item = t.id",
             table, stage);
    sqlite3_stmt *st = NULL;
    json_int_t v[3] = {-1, -1, -1};
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        for (int i = 0; i < 3; i++) v[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    return json_pack("{sI sI sI}", "done", v[1], "given_up", v[2], "total", v[0]);
}

struct read_recent {
    int64_t mtime;
    size_t entry;
};

static int read_cmp_recent(const void *x, const void *y)
{
    const struct read_recent *a = x, *b = y;
    if (a->mtime != b->mtime) return a->mtime < b->mtime ? 1 : -1;
    return (a->entry > b->entry) - (a->entry < b->entry);
}

int dream_read_status(dream_reader *r, json_t **out)
{
    size_t stubs = 0, redirects = 0;
    struct read_recent *rec = calloc(r->n ? r->n : 1, sizeof *rec);
    if (!rec) {
        dream_error_set(DREAM_ENOMEM, "out of memory");
        return read_error_object(out, DREAM_ENOMEM);
    }
    for (size_t i = 0; i < r->n; i++) {
        stubs += dream_article_is_stub(r->e[i].a);
        redirects += dream_article_is_redirect(r->e[i].a);
        rec[i] = (struct read_recent){r->e[i].mtime, i};
    }
    qsort(rec, r->n, sizeof *rec, read_cmp_recent);
    json_t *recent = json_array();
    for (size_t i = 0; i < r->n && i < 5; i++) json_array_append_new(recent, json_string(r->e[rec[i].entry].stem));
    free(rec);
    bool git = false;
    json_t *last = read_last_memory_commit(r->wiki, &git);
    char *wiki = utf8_repaired(r->wiki); /* a path is bytes; the answer is JSON text */
    json_t *o = !wiki ? NULL : json_pack("{ss sb sI sI sI sI sb so so so}", "wiki", wiki, "wiki_exists", !r->no_wiki, "articles", (json_int_t)r->n,
                          "stubs", (json_int_t)stubs,
                          "redirects", (json_int_t)redirects, "skipped", (json_int_t)r->skipped, "git", git, "last_commit", last,
                          "schedule", read_schedule_state(), "recent", recent);
    if (!wiki) {
        json_decref(last);
        json_decref(recent);
    }
    free(wiki);
    if (!o) {
        dream_error_set(DREAM_ENOMEM, "out of memory");
        return read_error_object(out, DREAM_ENOMEM);
    }
    if (r->store) {
        char *store = utf8_repaired(r->store_path);
        json_object_set_new(o, "store", json_string(store ? store : ""));
        free(store);
        long holder = dream_run_lock_holder(r->store_path); /* a run in progress: its pid (-1: unknown) */
        json_object_set_new(o, "running", holder ? json_pack("{sI}", "pid", (json_int_t)holder) : json_null());
        json_object_set_new(o, "conversations", json_integer(read_scalar(r->store, "SELECT count(*) FROM conversations")));
        json_object_set_new(o, "messages", json_integer(read_scalar(r->store, "SELECT count(*) FROM messages")));
        json_object_set_new(o, "chunks", json_integer(read_scalar(r->store, "SELECT count(*) FROM chunks")));
        json_object_set_new(o, "entities",
                            json_pack("{sI sI sI}", "total", (json_int_t)read_scalar(r->store, "SELECT count(*) FROM pipeline_entities"),
                                      "article", (json_int_t)read_scalar(r->store, "SELECT count(*) FROM pipeline_entities WHERE route = 'article'"),
                                      "captured", (json_int_t)read_scalar(r->store, "SELECT count(*) FROM pipeline_entities WHERE route = 'captured'")));
        json_object_set_new(o, "progress", json_pack("{so so}", "segment", read_stage_progress(r->store, "segment", "conversations"),
                                                     "extract", read_stage_progress(r->store, "extract", "chunks")));
    } else {
        json_object_set_new(o, "store", json_null());
    }
    *out = o;
    return 0;
}
