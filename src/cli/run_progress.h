/*
 * run_progress.h — what `dream run` shows on stderr while it works: when the model loads and how
 * long that took, and each stage's progress: the stage's items, the model calls of the batch in
 * flight as each one finishes, and an estimate of the time left.
 *
 * On a terminal it is one status line, redrawn in place (carriage return) at most every 0.1 s
 * and cleared before each stage's summary line. Anywhere else it is plain lines, at most one
 * every DREAM_PROGRESS_EVERY seconds (default 10; 0: none), so a log gets no carriage returns
 * and no line per call. stdout is left to the summary lines.
 */
#ifndef DREAM_CLI_RUN_PROGRESS_H
#define DREAM_CLI_RUN_PROGRESS_H

#include "dream/model.h"
#include "dream/pipeline.h"

#include <stdbool.h>
#include <stddef.h>

struct run_progress {
    bool tty;         /* stderr is a terminal: the status line */
    double every;     /* not a terminal: seconds between lines (0: none) */
    size_t batch;     /* items per batch (--batch): what a finished call batch is worth */
    bool drawn;       /* the status line is on the screen */
    const char *stage;
    double t0, last;  /* the stage's start (model loading not counted), the last line */
    double last_items; /* the last line for items done (a terminal's) */
    bool have_items;  /* the stage has said how much work it has */
    size_t done, total;
    size_t calls_done, calls_n; /* the model call in flight: inputs finished of its n */
};

/* Sets pr up for stderr as it is; batch: dream run's --batch. */
void run_progress_init(struct run_progress *pr, size_t batch);

/* The pipeline's hooks (ud: the struct run_progress). on_stage prints the summary on stdout. */
void run_progress_stage_start(void *ud, const char *stage);
void run_progress_items(void *ud, const char *stage, size_t done, size_t total);
void run_progress_stage_done(void *ud, const struct dream_stage_report *report);

/* The seam's watcher (dream_seam_set_watch; ud: the struct run_progress). */
void run_progress_watch(void *ud, const struct dream_seam_event *event);

/* Clears the status line when one is drawn (at the end of the run). */
void run_progress_end(struct run_progress *pr);

/* The time left as text ("45s", "12m05s", "3h20m") into buf. */
void run_progress_format_eta(double seconds, char *buf, size_t cap);

#endif
