/* run_progress.c — `dream run`'s progress on stderr (see run_progress.h). */
#include "run_progress.h"

#include "dream/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUN_PROGRESS_REDRAW_S 0.1
#define RUN_PROGRESS_EVERY_S 10.0

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void run_progress_init(struct run_progress *pr, size_t batch)
{
    const char *every = getenv("DREAM_PROGRESS_EVERY");
    char *end = NULL;
    double e = every && *every ? strtod(every, &end) : RUN_PROGRESS_EVERY_S;
    if (every && *every && (*end || e < 0)) {
        dream_log(DREAM_LOG_WARN, "DREAM_PROGRESS_EVERY=%s is not a number of seconds (0 or more); using %.0f", every, RUN_PROGRESS_EVERY_S);
        e = RUN_PROGRESS_EVERY_S;
    }
    *pr = (struct run_progress){.tty = isatty(STDERR_FILENO) == 1, .every = e, .batch = batch ? batch : 1};
}

void run_progress_format_eta(double s, char *buf, size_t cap)
{
    long t = s < 0 ? 0 : (long)(s + 0.5);
    if (t < 60) snprintf(buf, cap, "%lds", t);
    else if (t < 3600) snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, cap, "%ldh%02ldm", t / 3600, t / 60 % 60);
}

/* How far the stage is, in items: those done, and the share of the batch in flight that its
 * finished calls stand for. */
static double progress_items(const struct run_progress *pr)
{
    double items = (double)pr->done;
    if (pr->calls_n && pr->done < pr->total) {
        size_t left = pr->total - pr->done, batch = pr->batch < left ? pr->batch : left;
        items += (double)batch * (double)pr->calls_done / (double)pr->calls_n;
    }
    return items;
}

/* The line: "segment: 16/120 (13%), 0.12/s, batch 5/8 calls, ETA 14m20s", each part there
 * when it is known. */
static void progress_text(const struct run_progress *pr, double now, char *buf, size_t cap)
{
    double dt = now - pr->t0;
    int n = snprintf(buf, cap, "%s:", pr->stage ? pr->stage : "run");
    if (pr->have_items && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, " %zu/%zu (%.0f%%)", pr->done, pr->total,
                      pr->total ? 100.0 * (double)pr->done / (double)pr->total : 100.0);
    if (pr->have_items && pr->done && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", %.2f/s", dt > 0 ? (double)pr->done / dt : 0.0);
    if (pr->calls_n > 1 && n >= 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "%s batch %zu/%zu calls", pr->have_items ? "," : "", pr->calls_done, pr->calls_n);
    double items = progress_items(pr);
    if (pr->have_items && items > 0 && items < (double)pr->total && dt > 0 && n >= 0 && (size_t)n < cap) {
        char eta[32];
        run_progress_format_eta(dt * ((double)pr->total - items) / items, eta, sizeof eta);
        snprintf(buf + n, cap - (size_t)n, ", ETA %s", eta);
    }
}

/* Shows the progress: the status line on a terminal (redrawn at most every 0.1 s, for items
 * done and for calls each, unless final: a batch's items always show, however fast its calls
 * went), else a plain line at most every pr->every seconds. */
static void progress_show(struct run_progress *pr, bool items, bool final)
{
    double now = now_s();
    char line[256];
    if (pr->tty) {
        if (!final && now - (items ? pr->last_items : pr->last) < RUN_PROGRESS_REDRAW_S) return;
        if (items) pr->last_items = now;
        progress_text(pr, now, line, sizeof line);
        fprintf(stderr, "\r%s\033[K", line);
        pr->drawn = true;
    } else {
        if (pr->every <= 0 || now - pr->last < pr->every) return;
        progress_text(pr, now, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
    pr->last = now;
}

/* A line of its own (model loading), on a terminal above the status line. */
static void progress_say(struct run_progress *pr, const char *text)
{
    if (pr->tty && pr->drawn) fputs("\r\033[K", stderr);
    pr->drawn = false;
    fprintf(stderr, "dream: %s\n", text);
    fflush(stderr);
}

void run_progress_stage_start(void *ud, const char *stage)
{
    struct run_progress *pr = ud;
    double now = now_s();
    pr->stage = stage;
    pr->t0 = now;
    pr->last = pr->tty ? 0 : now; /* a log's first line comes after `every` seconds of work */
    pr->last_items = 0;
    pr->have_items = false;
    pr->done = pr->total = 0;
    pr->calls_done = pr->calls_n = 0;
}

void run_progress_items(void *ud, const char *stage, size_t done, size_t total)
{
    struct run_progress *pr = ud;
    (void)stage;
    pr->have_items = true;
    pr->done = done;
    pr->total = total;
    pr->calls_done = pr->calls_n = 0; /* the batch these items came from is over */
    progress_show(pr, true, done == total);
}

void run_progress_watch(void *ud, const struct dream_seam_event *ev)
{
    struct run_progress *pr = ud;
    char text[4200];
    switch (ev->kind) {
    case DREAM_SEAM_MODEL_LOADING:
        snprintf(text, sizeof text, "loading the model %s", ev->model);
        progress_say(pr, text);
        break;
    case DREAM_SEAM_MODEL_LOADED:
        snprintf(text, sizeof text, "the model is loaded (%.1f s)", ev->seconds);
        progress_say(pr, text);
        pr->t0 += ev->seconds; /* the estimate is of the stage's own work */
        break;
    case DREAM_SEAM_CALLS_START:
        pr->calls_done = 0;
        pr->calls_n = ev->n;
        progress_show(pr, false, false);
        break;
    case DREAM_SEAM_CALL_DONE:
        pr->calls_done = ev->done;
        pr->calls_n = ev->n;
        progress_show(pr, false, false);
        break;
    }
}

void run_progress_end(struct run_progress *pr)
{
    if (pr->tty && pr->drawn) fputs("\r\033[K", stderr);
    pr->drawn = false;
}

void run_progress_stage_done(void *ud, const struct dream_stage_report *rep)
{
    struct run_progress *pr = ud;
    run_progress_end(pr);
    printf("%s\n", rep->summary);
    fflush(stdout);
}
