/* test_pipeline_resume.c — kill and resume for the whole first half of the pipeline: 20 runs of
 * segment → extract → resolve → route over the fixture corpus (tests/data/dreaming) are killed
 * with SIGKILL at random points, then resumed until they finish; each ends in a store whose
 * pipeline tables (every row, ids included, timestamps left out) equal an uninterrupted run's.
 * Even rounds kill at a random event (a model call or a committed item: these land in segment,
 * extract and resolve alike); odd rounds kill after a random delay, which also lands inside
 * transactions. Every stage writes an item in one transaction and pulls its work from the store,
 * so a kill loses at most the item in flight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/store.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "kill_resume.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_ROUNDS 20

static char dir[4096], corpus[4096], wiki[4096];

/* Shared with the forked children: where the last event happened. */
struct shared {
    char stage[16];
};
static struct shared *shared;
static long events, kill_event;

/* Counts an event in stage; at kill_event the process dies on the spot. */
static void on_event(const char *stage)
{
    const char *name = !strcmp(stage, "chunk") ? "segment" : !strcmp(stage, "entity") ? "extract" : stage;
    snprintf(shared->stage, sizeof shared->stage, "%s", name);
    if (kill_event && ++events >= kill_event) raise(SIGKILL);
}

static void on_progress(void *ud, const char *stage, size_t done, size_t total)
{
    (void)ud;
    (void)done;
    (void)total;
    on_event(stage);
}

static void make_store(const char *path)
{
    dream_store *s;
    char wal[4200];
    unlink(path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    assert_int_equal(dream_store_open(path, &s), 0);
    assert_int_equal(fixture_ingest(s, corpus), 0);
    dream_store_close(s);
}

/* Runs the pipeline to completion on the store at path (dying at kill_event when set). */
static int pipeline_once(const char *path)
{
    dream_store *s;
    if (dream_store_open(path, &s)) return 1;
    dreaming_fake_on_call = on_event;
    dreaming_fake_delay_us = 2000; /* room for a timed kill to land mid-run */
    int rc = fixture_run_pipeline(s, wiki, 0, on_progress, NULL);
    dream_store_close(s);
    return rc ? 1 : 0;
}

static char *dump(const char *path)
{
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    char *text = fixture_dump_tables(s);
    dream_store_close(s);
    assert_non_null(text);
    return text;
}

/* The harness's hooks: the child's run, and what a kill records (ud is the round's record). */
struct round_state {
    const char *path;
    bool *killed_in;
};
static const char *const stages[4] = {"segment", "extract", "resolve", "route"};

static int run_child(long kill_at, void *ud)
{
    const struct round_state *r = ud;
    events = 0;
    kill_event = kill_at;
    return pipeline_once(r->path);
}

static void on_kill(int tries, void *ud)
{
    (void)tries;
    const struct round_state *r = ud;
    for (int i = 0; i < 4; i++)
        if (!strcmp(shared->stage, stages[i])) r->killed_in[i] = true;
}

static void test_pipeline_killed_and_resumed_equals_uninterrupted(void **state)
{
    (void)state;
    char ref[4200], path[4200];
    snprintf(ref, sizeof ref, "%s/ref.sqlite", dir);
    snprintf(path, sizeof path, "%s/killed.sqlite", dir);

    /* The uninterrupted run, in this process: its events and its time bound the random kills. */
    make_store(ref);
    events = 0;
    kill_event = 0;
    double t0 = kill_resume_now_s();
    assert_int_equal(pipeline_once(ref), 0);
    double ref_s = kill_resume_now_s() - t0;
    kill_event = 0;
    long total_events = 0;
    {
        /* Count the events with a kill point past the end. */
        make_store(path);
        events = 0;
        kill_event = 1L << 40;
        assert_int_equal(pipeline_once(path), 0);
        total_events = events;
        kill_event = 0;
    }
    char *want = dump(ref);
    assert_non_null(strstr(want, "\nentity "));
    assert_non_null(strstr(want, "|article|"));
    assert_true(total_events > 20);

    srand(4242);
    int kills = 0;
    bool killed_in[4] = {false};
    struct round_state r = {.path = path, .killed_in = killed_in};
    struct kill_resume kr = {.run = run_child, .on_kill = on_kill, .ud = &r, .total_events = total_events, .run_s = ref_s,
                             .stage = shared->stage, .stage_size = sizeof shared->stage};
    for (int round = 0; round < N_ROUNDS; round++) {
        make_store(path);
        kills += kill_resume_round(&kr, round % 2 == 0);
        char *got = dump(path);
        if (strcmp(got, want) != 0) fprintf(stderr, "round %d differs:\n--- want ---\n%s--- got ---\n%s", round, want, got);
        assert_string_equal(got, want);
        free(got);
    }
    fprintf(stderr, "pipeline resume: %d rounds, %d kills (segment %s, extract %s, resolve %s), every store equal to the uninterrupted run\n",
            N_ROUNDS, kills, killed_in[0] ? "yes" : "no", killed_in[1] ? "yes" : "no", killed_in[2] ? "yes" : "no");
    assert_true(kills >= N_ROUNDS); /* the kills really landed mid-run */
    assert_true(killed_in[0] && killed_in[1] && killed_in[2]);
    free(want);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR (tests/data/dreaming)\n", argv[0]);
        return 2;
    }
    snprintf(corpus, sizeof corpus, "%s/corpus", argv[1]);
    snprintf(wiki, sizeof wiki, "%s/wiki", argv[1]);
    shared = kill_resume_shared(sizeof *shared);
    if (!shared) return 1;
    if (kill_resume_tmpdir(dir, sizeof dir, "pipeline-resume")) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_pipeline_killed_and_resumed_equals_uninterrupted)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (kill_resume_rmdir(dir)) rc = 1;
    return rc;
}
