/* test_synthesis_resume.c — kill and resume for the whole pipeline with the writing stages: 20
 * runs of (ingest part of the fixture corpus → segment → extract → resolve → route → create →
 * fold → reconcile → link → wikify → ingest the rest → the same again) are killed with SIGKILL at random points and resumed
 * until they finish. After every kill `dream check` passes on the vault as the kill left it; at
 * the end the store (every pipeline and synthesis table, ids included, timestamps left out) and
 * the vault (every article, and HEAD holding exactly those texts) equal an uninterrupted run's.
 * Even rounds kill first at an event (a model call or a finished item) of one writing stage,
 * chosen in turn (create, fold, reconcile, link, wikify: each twice), picked from the events the
 * uninterrupted run saw in that stage, so every stage is killed inside whatever the random draw;
 * later tries of those rounds kill at a random event. Odd rounds kill after a random delay,
 * which also lands between a journaled write and its file, and inside git commits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../src/util/buf.h"
#include "../src/util/file.h"
#include "dream/model.h"
#include "dream/store.h"
#include "dream/synthesis.h"
#include "dream/vault.h"
#include "dreaming_fake.h"
#include "dreaming_fixture.h"
#include "kill_resume.h"
#include "store_internal.h"

#include <dirent.h>
#include <git2.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_ROUNDS 20
#define MAX_EVENTS 4096

static const char *const synth_stages[] = {"create", "fold", "reconcile", "link", "wikify"};
#define N_SYNTH (sizeof synth_stages / sizeof synth_stages[0])

static char dir[4096], data[4096], seeds[4096];

struct shared {
    char stage[16];
};
static struct shared *shared;
static long events, kill_event;
/* The writing stage now running (set around each dream_synth_* call), or NULL. */
static const char *in_synth;
/* The uninterrupted run's stage of each event (1-based), to aim kills at a stage. */
static char (*ref_stage)[16];
static bool recording;

static void on_event(const char *stage)
{
    const char *name = !strcmp(stage, "chunk") ? "segment" : !strcmp(stage, "entity") ? "extract" : stage;
    if (in_synth) name = in_synth; /* the model calls of every writing stage go to "synthesis", "section" or "editor" */
    snprintf(shared->stage, sizeof shared->stage, "%s", name);
    ++events;
    if (recording && events < MAX_EVENTS) snprintf(ref_stage[events], sizeof ref_stage[events], "%s", name);
    if (kill_event && events >= kill_event) raise(SIGKILL);
}

/* Marks the writing stage entered (name) or left (NULL) for kills that land between events. */
static void enter(const char *name)
{
    in_synth = name;
    snprintf(shared->stage, sizeof shared->stage, "%s", name ? name : "between");
}

static void on_progress(void *ud, const char *stage, size_t done, size_t total)
{
    (void)ud;
    (void)done;
    (void)total;
    on_event(stage);
}

static void fresh(const char *store_path, const char *wiki)
{
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' '%s-wal' '%s-shm'", wiki, store_path, store_path, store_path);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(dream_vault_init(wiki, NULL, NULL, NULL), 0);
}

static int stage_pair(dream_store *s, const char *wiki)
{
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    struct dream_synth_params p;
    dream_synth_default_params(&p);
    p.wiki_dir = wiki;
    p.batch = 2;
    p.on_progress = on_progress;
    int rc = dream_seam_set_backend(&fake);
    enter("create");
    if (!rc) rc = dream_synth_create(s, &p, NULL);
    if (!rc) rc = dream_seam_set_backend(&fake);
    enter("fold");
    if (!rc) rc = dream_synth_fold(s, &p, NULL);
    if (!rc) rc = dream_seam_set_backend(&fake);
    enter("reconcile");
    if (!rc) rc = dream_synth_reconcile(s, &p, NULL);
    enter("link");
    if (!rc) rc = dream_synth_link(s, &p, NULL);
    if (!rc) rc = dream_seam_set_backend(&fake);
    enter("wikify");
    if (!rc) rc = dream_synth_wikify(s, &p, NULL);
    enter(NULL);
    dream_seam_set_backend(NULL);
    return rc;
}

/* The whole run, resumable: every step takes only the work still to do. */
static int run_once(const char *store_path, const char *wiki)
{
    dream_store *s;
    if (dream_store_open(store_path, &s)) return 1;
    dreaming_fake_on_call = on_event;
    dreaming_fake_delay_us = 1000;
    char part[4200];
    int rc = 0;
    const char *const parts[2][2] = {{"claude", "pi"}, {"openai", NULL}};
    for (int k = 0; !rc && k < 2; k++) {
        for (int j = 0; !rc && j < 2 && parts[k][j]; j++) {
            snprintf(part, sizeof part, "%s/corpus/%s", data, parts[k][j]);
            rc = fixture_ingest(s, part);
        }
        if (!rc) rc = fixture_run_pipeline(s, seeds, 0, on_progress, NULL);
        if (!rc) rc = stage_pair(s, wiki);
    }
    dream_store_close(s);
    return rc ? 1 : 0;
}

/* Every row of the pipeline's and the writing stages' tables. */
static char *dump(const char *store_path)
{
    dream_store *s;
    assert_int_equal(dream_store_open(store_path, &s), 0);
    char *base = fixture_dump_tables(s);
    assert_non_null(base);
    struct dbuf b = {0};
    dbuf_puts(&b, base);
    free(base);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(store_db(s),
                                        "SELECT 'routed ' || chunk || ' ' || article || ' ' || coalesce(write_seq, '-') FROM chunk_routed UNION ALL "
                                        "SELECT 'folded ' || chunk || ' ' || article || ' ' || section || ' ' || coalesce(write_seq, '-') FROM chunk_folded "
                                        "UNION ALL SELECT 'journal ' || count(*) FROM synth_writes ORDER BY 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) dbuf_printf(&b, "%s\n", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    dream_store_close(s);
    return dbuf_take(&b);
}

/* The articles as "name\ntext" blocks, each marked with whether HEAD holds exactly that text. */
static char *vault(const char *wiki)
{
    char adir[4200];
    snprintf(adir, sizeof adir, "%s/articles", wiki);
    static char names[64][256];
    size_t n = 0;
    DIR *d = opendir(adir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL && n < 64)
        if (strlen(e->d_name) > 3 && !strcmp(e->d_name + strlen(e->d_name) - 3, ".md")) snprintf(names[n++], 256, "%s", e->d_name);
    if (d) closedir(d);
    qsort(names, n, 256, (int (*)(const void *, const void *))strcmp);
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_open(&repo, wiki), 0);
    struct dbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        char path[4600], spec[600];
        snprintf(path, sizeof path, "%s/%s", adir, names[i]);
        char *t = NULL;
        size_t len = 0;
        assert_int_equal(file_read_all(path, 0, &t, &len), 0);
        snprintf(spec, sizeof spec, "HEAD:articles/%s", names[i]);
        git_object *obj = NULL;
        bool committed = git_revparse_single(&obj, repo, spec) == 0 && (size_t)git_blob_rawsize((git_blob *)obj) == len &&
                         memcmp(git_blob_rawcontent((git_blob *)obj), t, len) == 0;
        git_object_free(obj);
        dbuf_printf(&b, "=== %s (%s)\n%s", names[i], committed ? "committed" : "NOT COMMITTED", t);
        free(t);
    }
    git_repository_free(repo);
    git_libgit2_shutdown();
    return dbuf_take(&b);
}

static void check_vault(const char *store_path, const char *wiki, int round)
{
    const char *b = getenv("DREAM_TEST_BUILD");
    char cmd[9000];
    /* a kill timed before the run made its store leaves none to check the footnotes against (and
     * `--store` naming nothing is an error): the wiki is checked alone, in a home with no store */
    if (access(store_path, F_OK) == 0)
        snprintf(cmd, sizeof cmd, "'%s/bin/dream' check --wiki '%s' --store '%s' --quiet", b, wiki, store_path);
    else
        snprintf(cmd, sizeof cmd, "DREAM_HOME='%s.nohome' '%s/bin/dream' check --wiki '%s' --quiet", store_path, b, wiki);
    int st = system(cmd);
    if (st != 0) fprintf(stderr, "round %d: dream check failed after a kill in %s\n", round, shared->stage);
    assert_int_equal(st, 0);
}

/* The harness's hooks (ud is the round's record): the child's run; an even round's first kill
 * aimed inside the writing stage whose turn it is; what a kill checks and records. */
struct round_state {
    int round;
    const char *path, *wiki;
    long (*stage_events)[MAX_EVENTS];
    const size_t *n_stage_events;
    bool *in_stage;
};

static const char *round_aim(const struct round_state *r, int tries)
{
    return r->round % 2 == 0 && tries == 0 ? synth_stages[(size_t)(r->round / 2) % N_SYNTH] : NULL;
}

static int run_child(long kill_at, void *ud)
{
    const struct round_state *r = ud;
    events = 0;
    kill_event = kill_at;
    return run_once(r->path, r->wiki);
}

static long aim_event(int tries, long drawn, void *ud)
{
    const struct round_state *r = ud;
    if (!round_aim(r, tries)) return drawn;
    size_t si = (size_t)(r->round / 2) % N_SYNTH;
    return r->stage_events[si][(size_t)rand() % r->n_stage_events[si]];
}

static void on_kill(int tries, void *ud)
{
    const struct round_state *r = ud;
    const char *aim = round_aim(r, tries);
    for (size_t s = 0; s < N_SYNTH; s++) r->in_stage[s] |= !strcmp(shared->stage, synth_stages[s]);
    if (aim && strcmp(shared->stage, aim) != 0) fprintf(stderr, "round %d: aimed at %s, killed in %s\n", r->round, aim, shared->stage);
    if (aim) assert_string_equal(shared->stage, aim);
    check_vault(r->path, r->wiki, r->round);
}

static void test_synthesis_killed_and_resumed_equals_uninterrupted(void **state)
{
    (void)state;
    char ref[4200], refwiki[4200], path[4200], wiki[4200];
    snprintf(ref, sizeof ref, "%s/ref.sqlite", dir);
    snprintf(refwiki, sizeof refwiki, "%s/ref-wiki", dir);
    snprintf(path, sizeof path, "%s/killed.sqlite", dir);
    snprintf(wiki, sizeof wiki, "%s/killed-wiki", dir);

    fresh(ref, refwiki);
    events = 0;
    kill_event = 1L << 40;
    recording = true;
    double t0 = kill_resume_now_s();
    assert_int_equal(run_once(ref, refwiki), 0);
    double ref_s = kill_resume_now_s() - t0;
    recording = false;
    long total_events = events;
    kill_event = 0;
    assert_true(total_events < MAX_EVENTS);
    /* the events of each writing stage in the uninterrupted run */
    static long stage_events[N_SYNTH][MAX_EVENTS];
    size_t n_stage_events[N_SYNTH] = {0};
    for (long e = 1; e <= total_events; e++)
        for (size_t k = 0; k < N_SYNTH; k++)
            if (!strcmp(ref_stage[e], synth_stages[k])) stage_events[k][n_stage_events[k]++] = e;
    for (size_t k = 0; k < N_SYNTH; k++) {
        if (!n_stage_events[k]) fprintf(stderr, "the uninterrupted run has no event in %s\n", synth_stages[k]);
        assert_true(n_stage_events[k] > 0);
    }
    fprintf(stderr, "uninterrupted run: %ld events (create %zu, fold %zu, reconcile %zu, link %zu, wikify %zu)\n", total_events,
            n_stage_events[0], n_stage_events[1], n_stage_events[2], n_stage_events[3], n_stage_events[4]);
    char *want = dump(ref), *want_vault = vault(refwiki);
    assert_non_null(strstr(want, "folded "));
    assert_non_null(strstr(want_vault, "## Notes On Cello Practice"));
    assert_null(strstr(want_vault, "NOT COMMITTED"));
    assert_true(total_events > 40);

    srand(5151);
    int kills = 0;
    bool in_stage[N_SYNTH] = {false};
    struct round_state r = {.path = path, .wiki = wiki, .stage_events = stage_events, .n_stage_events = n_stage_events, .in_stage = in_stage};
    struct kill_resume kr = {.run = run_child, .aim = aim_event, .on_kill = on_kill, .ud = &r, .total_events = total_events, .run_s = ref_s,
                             .stage = shared->stage, .stage_size = sizeof shared->stage};
    for (int round = 0; round < N_ROUNDS; round++) {
        fresh(path, wiki);
        r.round = round;
        kills += kill_resume_round(&kr, round % 2 == 0);
        char *got = dump(path), *got_vault = vault(wiki);
        if (strcmp(got, want) != 0) fprintf(stderr, "round %d: store differs:\n--- want ---\n%s--- got ---\n%s", round, want, got);
        assert_string_equal(got, want);
        if (strcmp(got_vault, want_vault) != 0) fprintf(stderr, "round %d: vault differs:\n--- want ---\n%s--- got ---\n%s", round, want_vault, got_vault);
        assert_string_equal(got_vault, want_vault);
        free(got);
        free(got_vault);
    }
    fprintf(stderr,
            "synthesis resume: %d rounds, %d kills (in create %s, in fold %s, in reconcile %s, in link %s, in wikify %s), every store and "
            "vault equal to the uninterrupted run\n",
            N_ROUNDS, kills, in_stage[0] ? "yes" : "no", in_stage[1] ? "yes" : "no", in_stage[2] ? "yes" : "no", in_stage[3] ? "yes" : "no",
            in_stage[4] ? "yes" : "no");
    assert_true(kills >= N_ROUNDS);
    for (size_t s = 0; s < N_SYNTH; s++) assert_true(in_stage[s]);
    free(want);
    free(want_vault);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR (tests/data/dreaming)\n", argv[0]);
        return 2;
    }
    snprintf(data, sizeof data, "%s", argv[1]);
    snprintf(seeds, sizeof seeds, "%s/wiki", argv[1]);
    shared = kill_resume_shared(sizeof *shared);
    if (!shared) return 1;
    ref_stage = calloc(MAX_EVENTS, sizeof *ref_stage);
    if (!ref_stage) return 1;
    if (kill_resume_tmpdir(dir, sizeof dir, "synthesis-resume")) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_synthesis_killed_and_resumed_equals_uninterrupted)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (kill_resume_rmdir(dir)) rc = 1;
    free(ref_stage);
    return rc;
}
