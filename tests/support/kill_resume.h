/* kill_resume.h — the harness the kill-and-resume tests share (test_pipeline_resume and
 * test_synthesis_resume run their rounds through it; test_segment_resume, whose kills are timed
 * its own way, uses its directory helpers): a round runs the work in a forked child and kills it
 * with SIGKILL, then runs it again on what the kill left, until a run finishes.
 *
 * An event round kills its first three tries at an event (a model call or a finished item,
 * counted by the test), drawn from the uninterrupted run's events; any other round kills its
 * first three tries after a random delay within the uninterrupted run's time, which also lands
 * inside transactions. The fourth try runs to the end, so every round finishes. The draws come
 * from rand(), seeded by the test. */
#ifndef DREAM_TESTS_KILL_RESUME_H
#define DREAM_TESTS_KILL_RESUME_H

#include <stdbool.h>
#include <stddef.h>

struct kill_resume {
    /* In the child: the work, dying at event kill_event (0: at none). 0 when it finished. */
    int (*run)(long kill_event, void *ud);
    /* NULL, or the event an event try kills at instead of drawn (1..total_events). */
    long (*aim)(int tries, long drawn, void *ud);
    /* NULL, or called in the parent after each kill. */
    void (*on_kill)(int tries, void *ud);
    void *ud;
    long total_events; /* the uninterrupted run's events */
    double run_s;      /* the uninterrupted run's time in seconds */
    char *stage;       /* shared with the child (kill_resume_shared): cleared before every try */
    size_t stage_size;
};

/* One round: tries until one finishes (asserting that it exits 0, and that every other try died
 * by SIGKILL). Returns the kills. */
int kill_resume_round(const struct kill_resume *kr, bool by_event);

/* A zeroed block of size bytes shared with forked children, or NULL. */
void *kill_resume_shared(size_t size);

/* A fresh directory for the test's stores, "$DREAM_TEST_BUILD/tmp-<name>-XXXXXX" (/tmp without
 * the variable), written to dir. 0, or -1 when it cannot be made. */
int kill_resume_tmpdir(char *dir, size_t size, const char *name);

/* Removes dir and everything in it. 0, or -1 when that failed. */
int kill_resume_rmdir(const char *dir);

/* Seconds on the monotonic clock. */
double kill_resume_now_s(void);

#endif
