/*
 * pipeline.h — the Dreaming's whole run: every stage in order (segment, extract, resolve,
 * route, create, fold, reconcile, link, wikify, sources), under the run lock. A run that reaches
 * a writing stage first migrates a vault of the older format (dream_synth_migrate), in a commit
 * of its own, and reports it as the stage "migrate" when it changed something. `dream run` and the
 * server's POST /v1/memory/dream both run it through dream_pipeline_run, so they take the same
 * lock, skip the same stages and report with the same words.
 *
 * The part src/dreaming/ (docs/ARCHITECTURE.md): The Dreaming's stages, one file each, and this
 * driver (pipeline.c). In run order: segment.c (segment_answer.c parses its answer), extract.c,
 * resolve.c, route.c, then the writing stages synth_create.c, synth_fold.c, synth_reconcile.c,
 * synth_link.c and synth_wikify.c (synth_refresh.c is wikify's infobox refresh), which share
 * synth.c (synth_internal.h: sources and citations, the write journal, the git commit). The
 * only part that calls a model, and only through the seam (dream/model.h). It may include seam,
 * article, vault, names, store, os and util; read, serve and the CLI use it.
 *
 * The run lock is an exclusive flock(2) on "<store>.lock" next to the store. One run at a time
 * may write a store and its wiki, whichever process it is in (the CLI, the nightly timer, the
 * server); a second one fails at once with DREAM_EBUSY, naming the lock file and the process
 * that holds it. The kernel drops the lock when that process ends, however it ends, so a killed
 * run never leaves a stale lock behind. A dry run writes nothing and takes no lock.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_PIPELINE_H
#define DREAM_PIPELINE_H

#include "dream/progress.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The stages in the order a run takes them; NULL-terminated. */
extern const char *const dream_pipeline_stages[];

/* True when name is one of dream_pipeline_stages. */
bool dream_pipeline_stage_known(const char *name);
/* 0 when name is one of them; else DREAM_EINVAL, the error naming it and listing the stages. */
int dream_pipeline_stage_check(const char *name);

#define DREAM_PIPELINE_MAX_COUNTS 12

/* What one stage did, as numbers and as the one line `dream run` prints for it. */
struct dream_stage_report {
    const char *stage;  /* one of dream_pipeline_stages */
    bool dry_run;
    bool skipped;       /* not run (a writing stage without a wiki); summary says why */
    double seconds;
    size_t n_counts;
    struct {
        const char *name; /* "eligible", "chunks", "failed", ... (static) */
        size_t value;
    } counts[DREAM_PIPELINE_MAX_COUNTS];
    char summary[512];  /* "segment: 4 conversation(s): ..." without a newline */
};

struct dream_pipeline_params {
    const char *store_path;   /* the store (required; its run lock is "<store_path>.lock") */
    const char *wiki_dir;     /* NULL: the default wiki when it has been set up (dream init),
                                 else none: the writing stages are skipped and say so */
    const char *stage;        /* run only this stage; NULL = every stage */
    const char *conversation; /* only this conversation, by its citation hash ("conv:" optional) */
    size_t limit;             /* at most this many items per stage; 0 = no limit */
    size_t batch;             /* items per batched model call (default 8) */
    bool dry_run;             /* count the work; call no model, write nothing, take no lock */
    bool tie_break;           /* resolve: the model's yes/no between candidate entities */
    int engagement;           /* route: the engagement gate; -1 = the stage's default */
    bool retry;               /* first give every item a stage gave up on a fresh set of
                                 attempts (dream_stage_state_retry); how many in *retried */
    size_t *retried;          /* may be NULL */
    bool lock_held;           /* the caller already holds the run lock (dream_run_lock): the
                                 server takes it before it answers, so a busy store is a 409 */
    dream_progress_fn on_progress; /* items done within the running stage; may be NULL */
    void *progress_ud;
    /* Called as each stage starts, and after it with its report; either may be NULL. */
    void (*on_start)(void *ud, const char *stage);
    void (*on_stage)(void *ud, const struct dream_stage_report *report);
    void *stage_ud;
    /* Asked before each stage; true stops the run there (it returns DREAM_OK: every stage is
     * resumable, so the next run goes on where this one stopped). May be NULL. */
    bool (*stop)(void *ud);
    void *stop_ud;
};

void dream_pipeline_default_params(struct dream_pipeline_params *params);

/* Takes the run lock, opens the store and runs the chosen stages in order, reporting each.
 * Stops at the first stage that fails (its error is returned; what earlier stages stored
 * stays). DREAM_EBUSY when another run holds the lock. */
int dream_pipeline_run(const struct dream_pipeline_params *params);

/* The run lock by itself (the nightly job and the tests use it): *fd holds it until
 * dream_run_unlock. DREAM_EBUSY, naming the holder, when another run has it. */
int dream_run_lock(const char *store_path, int *fd);
void dream_run_unlock(int fd);

/* The pid that holds the run lock of store_path, or 0 when no run holds it. */
long dream_run_lock_holder(const char *store_path);

/* The default wiki (dream_paths_wiki_dir) when it has been set up (its Meta directory exists),
 * malloc'd; NULL otherwise. What the writing stages use when no wiki is given. */
char *dream_pipeline_default_wiki(void);

#ifdef __cplusplus
}
#endif
#endif
