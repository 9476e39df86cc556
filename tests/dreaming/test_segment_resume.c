/* test_segment_resume.c — kill and resume: 20 segment runs are killed with SIGKILL at random
 * points and resumed until done; each ends in a store whose chunks and stage state equal those
 * of an uninterrupted run (the stage writes each conversation in one transaction and pulls its
 * work from the store, so a kill loses at most the conversation in flight, which is redone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/util/buf.h"
#include "dream/model.h"
#include "dream/segment.h"
#include "dream/store.h"
#include "kill_resume.h"
#include "segment_fake.h"
#include "store_internal.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_CONVS 12
#define N_ROUNDS 20

static char dir[4096];

static int slow_fake(void *ud, const char *stage, const struct dream_local_input *in, size_t n, const struct dream_call_opts *opts,
                     char **out)
{
    (void)ud;
    (void)stage;
    (void)opts;
    usleep(3000); /* room for a kill to land mid-run */
    for (size_t i = 0; i < n; i++) out[i] = fake_chunk_answer(in[i].user, false);
    return 0;
}

/* A store at path with N_CONVS conversations of 2 to 13 messages. */
static void make_store(const char *path)
{
    dream_store *s;
    unlink(path);
    assert_int_equal(dream_store_open(path, &s), 0);
    for (int k = 0; k < N_CONVS; k++) {
        struct dream_message m[16];
        char ids[16][32], texts[16][32], id[32];
        int n = 2 + k;
        for (int i = 0; i < n; i++) {
            snprintf(ids[i], sizeof ids[i], "k%d-%d", k, i);
            snprintf(texts[i], sizeof texts[i], "text %d.%d", k, i);
            /* Some users ask twice in a row, so chunks are not all of one shape. */
            bool user = i % 2 == 0 || (k % 3 == 0 && i == 3);
            m[i] = (struct dream_message){user ? "user" : "assistant", ids[i], 0, texts[i]};
        }
        snprintf(id, sizeof id, "conv-%02d", k);
        struct dream_conversation c = {.source = "pi", .id = id, .title = id, .updated_ms = 1000 + (k * 7) % N_CONVS, .messages = m,
                                       .n_messages = (size_t)n};
        assert_int_equal(dream_store_put(s, &c, &(enum dream_store_outcome){0}), 0);
    }
    dream_store_close(s);
}

/* Runs the stage to completion on the store at path; in a child, _exit()s with the status. */
static int segment_once(const char *path)
{
    dream_store *s;
    if (dream_store_open(path, &s)) return 1;
    struct dream_backend fake = {.name = "slow-fake", .call = slow_fake};
    dream_seam_set_backend(&fake);
    struct dream_segment_params p;
    dream_segment_default_params(&p);
    p.batch = 2;
    struct dream_segment_result r;
    int rc = dream_segment_run(s, &p, &r);
    dream_store_close(s);
    dream_seam_set_backend(NULL);
    return rc ? 1 : 0;
}

/* The store's pipeline state as text, without wall-clock columns. */
static char *dump(const char *path)
{
    dream_store *s;
    assert_int_equal(dream_store_open(path, &s), 0);
    struct dbuf b = {0};
    const char *const q[] = {
        "SELECT c.source_id, k.first_position, k.last_position, k.label, k.revision FROM chunks k JOIN conversations c ON "
        "c.id = k.conversation ORDER BY 1, 2, 3",
        "SELECT c.source_id, s.stage, s.revision, s.status, s.attempts, coalesce(s.last_error, '') FROM stage_state s JOIN "
        "conversations c ON c.id = s.item ORDER BY 1, 2"};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_prepare_v2(store_db(s), q[i], -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) dbuf_printf(&b, "%s|", (const char *)sqlite3_column_text(st, c));
            dbuf_putc(&b, '\n');
        }
        sqlite3_finalize(st);
    }
    dream_store_close(s);
    return dbuf_take(&b);
}

static void test_segment_killed_and_resumed_equals_uninterrupted(void **state)
{
    (void)state;
    char ref[4200], path[4200];
    snprintf(ref, sizeof ref, "%s/ref.sqlite", dir);
    snprintf(path, sizeof path, "%s/killed.sqlite", dir);
    make_store(ref);
    assert_int_equal(segment_once(ref), 0);
    char *want = dump(ref);
    assert_non_null(strstr(want, "done"));

    srand(12345);
    int kills = 0;
    for (int round = 0; round < N_ROUNDS; round++) {
        make_store(path);
        for (int tries = 0;; tries++) {
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) _exit(segment_once(path));
            /* Kill within the run's first ~40 ms; later tries get longer, so every round ends. */
            usleep((useconds_t)(rand() % 40000) + (useconds_t)tries * 5000);
            if (tries < 6) kill(pid, SIGKILL); /* may already have exited: then it finished */
            int status;
            assert_int_equal(waitpid(pid, &status, 0), pid);
            if (WIFSIGNALED(status)) {
                kills++;
                continue;
            }
            assert_true(WIFEXITED(status));
            assert_int_equal(WEXITSTATUS(status), 0);
            break;
        }
        char *got = dump(path);
        assert_string_equal(got, want);
        free(got);
    }
    assert_true(kills >= N_ROUNDS / 2); /* the kills really landed mid-run */
    free(want);
}

int main(void)
{
    if (kill_resume_tmpdir(dir, sizeof dir, "segment-resume")) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_segment_killed_and_resumed_equals_uninterrupted)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (kill_resume_rmdir(dir)) rc = 1;
    return rc;
}
