/* pipeline.c — the whole run of the Dreaming under the run lock (dream/pipeline.h): the stages
 * in order, each one's report, the lock file. */
#include "dream/pipeline.h"
#include "synth_internal.h"

#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/paths.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const dream_pipeline_stages[] = {"segment", "extract", "resolve", "route", "create", "fold", "reconcile", "link", "wikify", "sources", NULL};
/* The first stage that writes the wiki (create); those before it fill the store only. */
#define PIPELINE_FIRST_WRITER 4

/* Whether a run of stage (NULL: all of them) writes the wiki. */
static bool pipeline_writes(const char *stage)
{
    for (size_t i = 0; stage && dream_pipeline_stages[i]; i++)
        if (!strcmp(stage, dream_pipeline_stages[i])) return i >= PIPELINE_FIRST_WRITER;
    return true;
}

bool dream_pipeline_stage_known(const char *name)
{
    for (size_t i = 0; name && dream_pipeline_stages[i]; i++)
        if (!strcmp(name, dream_pipeline_stages[i])) return true;
    return false;
}

int dream_pipeline_stage_check(const char *name)
{
    if (dream_pipeline_stage_known(name)) return DREAM_OK;
    char list[256] = "";
    for (size_t i = 0; dream_pipeline_stages[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", dream_pipeline_stages[i]);
    return dream_error_set(DREAM_EINVAL, "unknown stage '%.60s' (the stages: %s)", name ? name : "", list);
}

void dream_pipeline_default_params(struct dream_pipeline_params *p)
{
    *p = (struct dream_pipeline_params){.batch = 8, .engagement = -1};
}

/* ---- the run lock ----------------------------------------------------------------------- */

/* How long a run waits for a status request's look at the lock: LOCK_TRIES times LOCK_WAIT_NS. */
#define LOCK_TRIES 100
#define LOCK_WAIT_NS 2000000L

static void lock_path(const char *store_path, char *out, size_t cap) { snprintf(out, cap, "%s.lock", store_path); }

/* The pid written in an open lock file, or 0. */
static long lock_read_pid(int fd)
{
    char buf[32] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    return n > 0 ? strtol(buf, NULL, 10) : 0;
}

int dream_run_lock(const char *store_path, int *fd_out)
{
    *fd_out = -1;
    char path[4096];
    lock_path(store_path, path, sizeof path);
    char *slash = strrchr(path, '/');
    if (slash && slash != path) { /* the store's directory, as opening the store would make it */
        *slash = 0;
        int mk = file_mkdirs(path, 0700);
        *slash = '/';
        if (mk) return dream_error_set(DREAM_EIO, "cannot create the directory of the run lock %s: %s", path, strerror(errno));
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return dream_error_set(DREAM_EIO, "cannot open the run lock %s: %s", path, strerror(errno));
    /* dream_run_lock_holder looks by taking a shared lock for a moment (a status request): a run
     * that comes then tries again for a while before it is refused, as a real run holds the
     * lock for its whole length */
    int got = -1, e = 0;
    for (int tries = 0; tries < LOCK_TRIES; tries++) {
        if ((got = flock(fd, LOCK_EX | LOCK_NB)) == 0 || (e = errno) != EWOULDBLOCK) break;
        nanosleep(&(struct timespec){.tv_nsec = LOCK_WAIT_NS}, NULL);
    }
    if (got != 0) {
        long pid = e == EWOULDBLOCK ? lock_read_pid(fd) : 0;
        close(fd);
        if (e != EWOULDBLOCK) return dream_error_set(DREAM_EIO, "cannot take the run lock %s: %s", path, strerror(e));
        if (pid > 0)
            return dream_error_set(DREAM_EBUSY,
                                   "another dream run (process %ld) is working on this store; it holds %s. Wait for it to "
                                   "finish (dream status shows it) and run again",
                                   pid, path);
        return dream_error_set(DREAM_EBUSY, "another dream run is working on this store; it holds %s. Wait for it to finish and run again",
                               path);
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid only informs; the flock is the lock */
    }
    *fd_out = fd;
    return DREAM_OK;
}

void dream_run_unlock(int fd)
{
    if (fd < 0) return;
    if (ftruncate(fd, 0) != 0) { /* a stale pid is harmless: only a held flock counts */
    }
    flock(fd, LOCK_UN);
    close(fd);
}

long dream_run_lock_holder(const char *store_path)
{
    char path[4096];
    lock_path(store_path, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
        flock(fd, LOCK_UN);
    } else if (errno == EWOULDBLOCK) { /* held: by the pid it wrote, or by one that wrote none */
        pid = lock_read_pid(fd);
        if (pid <= 0) pid = -1;
    }
    close(fd);
    return pid;
}

/* ---- the stages -------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double per_s(size_t n, double dt) { return dt > 0 ? (double)n / dt : 0.0; }

static void count(struct dream_stage_report *r, const char *name, size_t value)
{
    if (r->n_counts == DREAM_PIPELINE_MAX_COUNTS) return;
    r->counts[r->n_counts].name = name;
    r->counts[r->n_counts++].value = value;
}

static void say(struct dream_stage_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct dream_stage_report *r, const char *fmt, ...)
{
    size_t used = strlen(r->summary);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->summary + used, sizeof r->summary - used, fmt, ap);
    va_end(ap);
}

struct run {
    const struct dream_pipeline_params *p;
    dream_store *store;
    const char *wiki;
    int64_t conversation;
};

static int stage_segment(struct run *x, struct dream_stage_report *rep)
{
    struct dream_segment_params sp;
    dream_segment_default_params(&sp);
    sp.wiki_dir = x->wiki;
    sp.conversation = x->conversation;
    sp.limit = x->p->limit;
    sp.batch = x->p->batch;
    sp.dry_run = x->p->dry_run;
    sp.on_progress = x->p->on_progress;
    sp.progress_ud = x->p->progress_ud;
    struct dream_segment_result r;
    double t0 = now_s();
    int rc = dream_segment_run(x->store, &sp, &r);
    if (rc) return rc;
    double dt = rep->seconds = now_s() - t0;
    count(rep, "eligible", r.eligible);
    if (x->p->dry_run) return say(rep, "segment: %zu conversation(s) would be segmented (dry run: nothing called or written)", r.eligible), 0;
    count(rep, "segmented", r.segmented);
    count(rep, "chunks", r.chunks);
    count(rep, "skipped", r.skipped);
    count(rep, "failed", r.failed);
    count(rep, "gave_up", r.gave_up);
    count(rep, "moved", r.moved);
    count(rep, "cued", r.cued);
    say(rep,
        "segment: %zu conversation(s): %zu segmented into %zu chunk(s), %zu skipped (nothing to cut), %zu failed attempt(s), %zu given up, "
        "%zu cut(s) put where the person says the topic changes, %zu moved to where the words change; %.1f s (%.2f conversations/s)",
        r.eligible, r.segmented, r.chunks, r.skipped, r.failed, r.gave_up, r.cued, r.moved, dt, per_s(r.eligible, dt));
    return 0;
}

static int stage_extract(struct run *x, struct dream_stage_report *rep)
{
    struct dream_extract_params ep;
    dream_extract_default_params(&ep);
    ep.wiki_dir = x->wiki;
    ep.conversation = x->conversation;
    ep.limit = x->p->limit;
    ep.batch = x->p->batch;
    ep.dry_run = x->p->dry_run;
    ep.on_progress = x->p->on_progress;
    ep.progress_ud = x->p->progress_ud;
    struct dream_extract_result r;
    double t0 = now_s();
    int rc = dream_extract_run(x->store, &ep, &r);
    if (rc) return rc;
    double dt = rep->seconds = now_s() - t0;
    count(rep, "eligible", r.eligible);
    if (x->p->dry_run) return say(rep, "extract: %zu chunk(s) would be extracted (dry run: nothing called or written)", r.eligible), 0;
    count(rep, "extracted", r.extracted);
    count(rep, "mentions", r.mentions);
    count(rep, "empty", r.empty);
    count(rep, "failed", r.failed);
    count(rep, "gave_up", r.gave_up);
    count(rep, "unnamed", r.unnamed);
    say(rep,
        "extract: %zu chunk(s): %zu with %zu name(s), %zu with nothing usable, %zu failed attempt(s), %zu given up, %zu name(s) only the "
        "assistant wrote left out; %.1f s (%.2f chunks/s)",
        r.eligible, r.extracted, r.mentions, r.empty, r.failed, r.gave_up, r.unnamed, dt, per_s(r.eligible, dt));
    return 0;
}

static int stage_resolve(struct run *x, struct dream_stage_report *rep)
{
    struct dream_resolve_params rp;
    dream_resolve_default_params(&rp);
    rp.wiki_dir = x->wiki;
    rp.dry_run = x->p->dry_run;
    if (x->p->tie_break) rp.tie_break = true;
    rp.on_progress = x->p->on_progress;
    rp.progress_ud = x->p->progress_ud;
    struct dream_resolve_result r;
    double t0 = now_s();
    int rc = dream_resolve_run(x->store, &rp, &r);
    if (rc) return rc;
    double dt = rep->seconds = now_s() - t0;
    count(rep, "mentions", r.mentions);
    if (x->p->dry_run) return say(rep, "resolve: %zu name(s) would be resolved (dry run: nothing written)", r.mentions), 0;
    count(rep, "folded", r.folded);
    count(rep, "seeded", r.seeded);
    count(rep, "minted", r.minted);
    count(rep, "asked", r.asked);
    count(rep, "tie_folds", r.tie_folds);
    count(rep, "spread", r.spread);
    say(rep,
        "resolve: %zu name(s): %zu joined a known entity (%zu by an alias seed%s), %zu new entit(ies), %zu mention(s) of a known name found "
        "in another chunk; %.1f s (%.2f names/s)",
        r.mentions, r.folded, r.seeded, rp.tie_break ? "" : "; tie-break off", r.minted, r.spread, dt, per_s(r.mentions, dt));
    if (rp.tie_break) say(rep, "; tie-break: %zu question(s) asked, %zu name(s) folded by the answer", r.asked, r.tie_folds);
    return 0;
}

static int stage_route(struct run *x, struct dream_stage_report *rep)
{
    struct dream_route_params rp;
    dream_route_default_params(&rp);
    rp.dry_run = x->p->dry_run;
    if (x->p->engagement >= 0) rp.min_user_messages = x->p->engagement;
    struct dream_route_result r;
    double t0 = now_s();
    int rc = dream_route_run(x->store, &rp, &r);
    if (rc) return rc;
    double dt = rep->seconds = now_s() - t0;
    count(rep, "entities", r.entities);
    count(rep, "articles", r.articles);
    count(rep, "newly", r.newly);
    count(rep, "engaged", r.engaged);
    count(rep, "captured", r.captured);
    say(rep, "route: %zu entit(ies): %zu with an article (%zu new", r.entities, r.articles, r.newly);
    if (rp.min_user_messages > 0) say(rep, ", %zu by the engagement gate of %d message(s)", r.engaged, rp.min_user_messages);
    say(rep, "), %zu captured%s; %.1f s (%.2f entities/s)", r.captured, x->p->dry_run ? " (dry run: nothing written)" : "", dt,
        per_s(r.entities, dt));
    return 0;
}

/* create, fold, reconcile, link, wikify: the writing stages, on the wiki (which must be set up). */
static int stage_synth(struct run *x, const char *stage, struct dream_stage_report *rep)
{
    if (!x->wiki) {
        rep->skipped = true;
        say(rep, "%s: skipped: no wiki set up (run `dream init`, or give --wiki DIR)", stage);
        return 0;
    }
    struct dream_synth_params sp;
    dream_synth_default_params(&sp);
    sp.wiki_dir = x->wiki;
    sp.limit = x->p->limit;
    sp.batch = x->p->batch;
    sp.dry_run = x->p->dry_run;
    sp.on_progress = x->p->on_progress;
    sp.progress_ud = x->p->progress_ud;
    struct dream_synth_result r;
    bool create = !strcmp(stage, "create"), fold = !strcmp(stage, "fold"), reconcile = !strcmp(stage, "reconcile"),
         link = !strcmp(stage, "link"), sources = !strcmp(stage, "sources"), migrate = !strcmp(stage, "migrate");
    double t0 = now_s();
    int rc = create ? dream_synth_create(x->store, &sp, &r)
             : fold ? dream_synth_fold(x->store, &sp, &r)
             : reconcile ? dream_synth_reconcile(x->store, &sp, &r)
             : link ? dream_synth_link(x->store, &sp, &r)
             : sources ? dream_synth_sources(x->store, &sp, &r)
             : migrate ? dream_synth_migrate(x->store, &sp, &r)
                    : dream_synth_wikify(x->store, &sp, &r);
    if (rc) return rc;
    double dt = rep->seconds = now_s() - t0;
    bool dry = x->p->dry_run;
    count(rep, "eligible", r.eligible);
    if (create) {
        if (dry) return say(rep, "create: %zu article(s) would be written (dry run: nothing called or written)", r.eligible), 0;
        count(rep, "created", r.created);
        count(rep, "stubs", r.stubs);
        count(rep, "failed", r.failed);
        count(rep, "rejected", r.rejected);
        count(rep, "unfounded", r.unfounded);
        count(rep, "recited", r.recited);
        count(rep, "unheld", r.unheld);
        say(rep,
            "create: %zu entit(ies): %zu article(s) written, %zu stub(s), %zu failed attempt(s), %zu answer(s) refused, %zu unfounded "
            "sentence(s) dropped, %zu cited to the note that says them, %zu infobox field(s) no note holds left out; %zu file(s) "
            "committed; %.1f s (%.2f articles/s)",
            r.eligible, r.created, r.stubs, r.failed, r.rejected, r.unfounded, r.recited, r.unheld, r.committed, dt,
            per_s(r.created + r.stubs, dt));
    } else if (fold) {
        if (dry) return say(rep, "fold: %zu new chunk(s) would be routed into their articles (dry run: nothing called or written)", r.eligible), 0;
        count(rep, "patched", r.patched);
        count(rep, "new_sections", r.new_sections);
        count(rep, "lead_patches", r.lead_patches);
        count(rep, "unrouted", r.unrouted);
        count(rep, "rejected", r.rejected);
        count(rep, "unfounded", r.unfounded);
        count(rep, "recited", r.recited);
        say(rep,
            "fold: %zu chunk(s): %zu section(s) patched, %zu new section(s), %zu lead(s) rewritten, %zu went nowhere, %zu answer(s) refused, "
            "%zu unfounded sentence(s) dropped, %zu cited to the note that says them; %zu file(s) committed; %.1f s (%.2f chunks/s)",
            r.eligible, r.patched, r.new_sections, r.lead_patches, r.unrouted, r.rejected, r.unfounded, r.recited, r.committed, dt,
            per_s(r.eligible, dt));
    } else if (reconcile) {
        if (dry) return say(rep, "reconcile: %zu article(s) would be reconciled (dry run: nothing called or written)", r.eligible), 0;
        count(rep, "reconciled", r.reconciled);
        count(rep, "history", r.history);
        count(rep, "rejected", r.rejected);
        count(rep, "lead_patches", r.lead_patches);
        say(rep, "reconcile: %zu article(s): %zu changed, %zu lead sentence(s) replaced by the body's later one, %zu history line(s), "
                 "%zu answer(s) refused; %zu file(s) committed; %.1f s",
            r.eligible, r.reconciled, r.lead_patches, r.history, r.rejected, r.committed, dt);
    } else if (sources || migrate) {
        if (dry) return say(rep, "%s: %zu article(s) would have their footnotes' links or header brought to the format (dry run: nothing written)", stage, r.eligible), 0;
        count(rep, "migrated", r.migrated);
        count(rep, "relinked", r.relinked);
        count(rep, "sources", r.sources);
        count(rep, "removed", r.sources_removed);
        if (migrate)
            say(rep, "migrate: %zu article(s) moved to the Obsidian format (front matter, tags), %zu with footnotes linked to their messages; ", r.migrated, r.relinked);
        else
            say(rep, "sources: %zu article(s) relinked; ", r.relinked);
        say(rep, "%zu transcript note(s) of cited conversations, %zu no longer cited removed; %zu file(s) committed; %.1f s", r.sources, r.sources_removed,
            r.committed, dt);
    } else if (link) {
        if (dry) return say(rep, "link: %zu article(s) would be scanned for mentions (dry run: nothing written)", r.eligible), 0;
        count(rep, "linked", r.linked);
        say(rep, "link: %zu article(s): %zu changed (links, See also); %zu file(s) committed; %.1f s", r.eligible, r.linked, r.committed, dt);
    } else {
        if (dry) return say(rep, "wikify: %zu changed article(s) would be tightened (dry run: nothing called or written)", r.eligible), 0;
        count(rep, "wikified", r.wikified);
        count(rep, "refreshed", r.refreshed);
        count(rep, "rejected", r.rejected);
        count(rep, "unheld", r.unheld);
        say(rep, "wikify: %zu changed article(s): %zu rewritten (%zu with infobox facts added), %zu answer(s) refused, %zu infobox "
                 "value(s) the article does not hold left out; %zu file(s) committed; %.1f s",
            r.eligible, r.wikified, r.refreshed, r.rejected, r.unheld, r.committed, dt);
    }
    count(rep, "committed", r.committed);
    count(rep, "skipped", r.skipped);
    if (r.skipped) say(rep, "; %zu article(s) left as they are: no edit can be placed in them (the warnings above name each)", r.skipped);
    return 0;
}

char *dream_pipeline_default_wiki(void)
{
    char *dir = NULL;
    if (dream_paths_wiki_dir(&dir) != 0) return NULL;
    if (dream_vault_is_set_up(dir)) return dir;
    free(dir);
    return NULL;
}

/* Moves a vault of the older format to this one before the first writing stage touches it, in a
 * commit of its own; reported only when it changed something. */
static int run_migrate(struct run *x)
{
    if (!x->wiki || x->p->dry_run) return DREAM_OK;
    struct dream_stage_report rep = {.stage = "migrate"};
    int rc = stage_synth(x, "migrate", &rep);
    if (rc) return dream_error_wrap(rc, "migrate");
    if (rep.counts[0].value) { /* counts[0]: eligible, the articles it changed */
        if (x->p->on_start) x->p->on_start(x->p->stage_ud, "migrate");
        if (x->p->on_stage) x->p->on_stage(x->p->stage_ud, &rep);
    }
    return DREAM_OK;
}

static int run_stages(struct run *x)
{
    const struct dream_pipeline_params *p = x->p;
    bool migrated = false;
    for (size_t i = 0; dream_pipeline_stages[i]; i++) {
        const char *stage = dream_pipeline_stages[i];
        if (p->stage && strcmp(p->stage, stage) != 0) continue;
        if (p->stop && p->stop(p->stop_ud)) return DREAM_OK;
        if (i >= PIPELINE_FIRST_WRITER && !migrated) { /* the writing stages: create on */
            int rc = run_migrate(x);
            if (rc) return rc;
            migrated = true;
        }
        struct dream_stage_report rep = {.stage = stage, .dry_run = p->dry_run};
        if (p->on_start) p->on_start(p->stage_ud, stage);
        int rc = i == 0   ? stage_segment(x, &rep)
                 : i == 1 ? stage_extract(x, &rep)
                 : i == 2 ? stage_resolve(x, &rep)
                 : i == 3 ? stage_route(x, &rep)
                          : stage_synth(x, stage, &rep);
        if (rc) return dream_error_wrap(rc, "%s", stage);
        if (p->on_stage) p->on_stage(p->stage_ud, &rep);
    }
    return DREAM_OK;
}

int dream_pipeline_run(const struct dream_pipeline_params *p)
{
    if (!p || !p->store_path || !*p->store_path) return dream_error_set(DREAM_EINVAL, "the pipeline needs a store path");
    if (p->stage && dream_pipeline_stage_check(p->stage)) return DREAM_EINVAL;
    struct dream_pipeline_params q = *p;
    if (!q.batch) q.batch = 8;
    /* a wiki named that is not one is refused before the model reads anything: "" would write
     * at the filesystem's root ("/articles"), and a directory dream init never set up took all
     * the model's work, then failed at the first article (the default wiki, when it is not set
     * up, only leaves the writing stages out) */
    bool writes = pipeline_writes(q.stage);
    if (q.wiki_dir && !*q.wiki_dir) return dream_error_set(DREAM_EINVAL, "the wiki path is empty: give the wiki's directory (or leave --wiki out)");
    if (q.wiki_dir && writes && !q.dry_run && !dream_vault_is_set_up(q.wiki_dir))
        return dream_error_set(DREAM_ENOTFOUND, "%s is not a wiki dream init set up (it has no Meta/ folder): create it with `dream init --wiki %s`, "
                               "then run again",
                               q.wiki_dir, q.wiki_dir);
    struct run x = {.p = &q};
    char *wiki_dflt = NULL;
    x.wiki = q.wiki_dir ? q.wiki_dir : (wiki_dflt = dream_pipeline_default_wiki());
    int fd = -1, rc = DREAM_OK;
    if (!q.dry_run && !q.lock_held && strcmp(q.store_path, ":memory:") != 0) rc = dream_run_lock(q.store_path, &fd);
    /* a dry run writes nothing: over a store not made yet it plans over an empty one (it made
     * the store, and its directory) */
    struct stat sst;
    bool none = q.dry_run && strcmp(q.store_path, ":memory:") != 0 && stat(q.store_path, &sst) != 0;
    if (!rc) rc = dream_store_open(none ? ":memory:" : q.store_path, &x.store);
    /* a wiki git would not commit in now (a rebase half way, a detached HEAD, a lock) is named
     * before the model reads anything, not after the stages that only fill the store */
    if (!rc && !q.dry_run && writes && x.wiki) rc = synth_git_ready(x.wiki);
    if (!rc && q.retry && !q.dry_run) {
        size_t n = 0;
        rc = dream_stage_state_retry(x.store, &n);
        if (q.retried) *q.retried = n;
    }
    if (!rc && q.conversation) {
        const char *cite = strncmp(q.conversation, "conv:", 5) == 0 ? q.conversation + 5 : q.conversation;
        struct dream_store_conversation *c;
        if ((rc = dream_store_get_by_cite(x.store, cite, &c)) == 0) {
            x.conversation = c->rowid;
            dream_store_conversation_free(c);
        }
    }
    if (!rc) rc = run_stages(&x);
    dream_store_close(x.store);
    dream_run_unlock(fd);
    free(wiki_dflt);
    return rc;
}
