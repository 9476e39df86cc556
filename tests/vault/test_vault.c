/* test_vault.c — `dream init`'s library half: the vault layout, idempotence, the person's edits
 * surviving a re-init, exactly one commit, and clear errors for unusable paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dream/error.h"
#include "dream/vault.h"

#include <git2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[] = "/tmp/test_vault.XXXXXX";

static char *path_of(const char *rel)
{
    static char buf[32][512]; /* rotating, so a test may hold several at once */
    static int k;
    k = (k + 1) % 32;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_root, rel);
    return buf[k];
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *slurp(const char *p)
{
    FILE *f = fopen(p, "rb");
    assert_non_null(f);
    char *s = calloc(1, 1 << 16);
    assert_non_null(s);
    size_t n = fread(s, 1, (1 << 16) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The number of commits reachable from HEAD. */
static int commit_count(const char *dir)
{
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_open(&repo, dir), 0);
    git_revwalk *walk;
    assert_int_equal(git_revwalk_new(&walk, repo), 0);
    assert_int_equal(git_revwalk_push_head(walk), 0);
    git_oid oid;
    int n = 0;
    while (git_revwalk_next(&oid, walk) == 0) n++;
    git_revwalk_free(walk);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return n;
}

static int setup(void **state)
{
    (void)state;
    strcpy(tmp_root, "/tmp/test_vault.XXXXXX");
    return mkdtemp(tmp_root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_vault_init_creates_layout_and_one_commit(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(r.repo_created, 1);
    assert_int_equal(r.committed, 1);
    assert_int_equal(r.kept, 0);
    assert_true(r.created >= 8);
    const char *const dirs[] = {"wiki/articles", "wiki/Meta", "wiki/Talk", "wiki/.git"};
    for (size_t i = 0; i < 4; i++) assert_true(is_dir(path_of(dirs[i])));
    const char *const files[] = {"wiki/README.md", "wiki/.gitignore", "wiki/Meta/Chunking.md", "wiki/Meta/Entities.md",
                                 "wiki/Meta/Article_Conventions.md", "wiki/Meta/Infobox_Schemas.md", "wiki/Meta/Topics_to_Ignore.md",
                                 "wiki/Meta/Aliases.md"};
    for (size_t i = 0; i < 8; i++) assert_true(is_file(path_of(files[i])));
    assert_int_equal(commit_count(w), 1);

    /* The working tree is clean: the initial commit holds every seeded file. */
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_open(&repo, w), 0);
    git_status_list *sl;
    git_status_options so;
    assert_int_equal(git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION), 0);
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED;
    assert_int_equal(git_status_list_new(&sl, repo, &so), 0);
    assert_int_equal(git_status_list_entrycount(sl), 0);
    git_status_list_free(sl);
    git_repository_free(repo);
    git_libgit2_shutdown();
}

static void test_vault_reinit_is_a_noop(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(r.created, 0);
    assert_int_equal(r.kept, 0);
    assert_int_equal(r.repo_created, 0);
    assert_int_equal(r.committed, 0);
    assert_int_equal(commit_count(w), 1);
}

struct kept_log {
    int kept;
    char last[128];
};

static void on_file(void *ud, const char *rel, enum dream_vault_file_state st)
{
    struct kept_log *k = ud;
    if (st == DREAM_VAULT_KEPT) {
        k->kept++;
        snprintf(k->last, sizeof k->last, "%s", rel);
    }
}

static void test_vault_reinit_keeps_edited_meta_page(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
    const char *page = path_of("wiki/Meta/Chunking.md");
    FILE *f = fopen(page, "w");
    assert_non_null(f);
    fputs("# Chunking\n\nMy own policy.\n", f);
    fclose(f);
    struct kept_log k = {0};
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, on_file, &k), 0);
    assert_int_equal(r.kept, 1);
    assert_int_equal(k.kept, 1);
    assert_string_equal(k.last, "Meta/Chunking.md");
    char *s = slurp(page);
    assert_string_equal(s, "# Chunking\n\nMy own policy.\n");
    free(s);
    /* The pipeline reads the page as the person left it. */
    char *m;
    assert_int_equal(dream_vault_meta_page(w, "Chunking", &m), 0);
    assert_string_equal(m, "# Chunking\n\nMy own policy.\n");
    free(m);
    assert_int_equal(commit_count(w), 1);
}

static void test_vault_reinit_restores_deleted_page_in_own_commit(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
    assert_int_equal(unlink(path_of("wiki/Meta/Entities.md")), 0);
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(r.created, 1);
    assert_int_equal(r.committed, 1);
    assert_true(is_file(path_of("wiki/Meta/Entities.md")));
    assert_int_equal(commit_count(w), 2);
}

/* What the person staged in the wiki stays theirs: the restore commit holds the seeded page
 * alone, and their staged file stays staged, out of HEAD. Before, the commit was written from
 * the repository's whole index, the person's staging with it. */
static void test_vault_reinit_commits_only_its_own_pages(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
    FILE *f = fopen(path_of("wiki/articles/Draft.md"), "w");
    assert_non_null(f);
    fputs("# Draft\n\nThe person's own draft.\n", f);
    fclose(f);
    git_libgit2_init();
    git_repository *repo = NULL;
    git_index *idx = NULL;
    assert_int_equal(git_repository_open(&repo, w), 0);
    assert_int_equal(git_repository_index(&idx, repo), 0);
    assert_int_equal(git_index_add_bypath(idx, "articles/Draft.md"), 0);
    assert_int_equal(git_index_write(idx), 0);
    git_index_free(idx);
    assert_int_equal(unlink(path_of("wiki/Meta/Entities.md")), 0);
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(r.committed, 1);
    assert_int_equal(commit_count(w), 2);
    /* HEAD has the restored page and not the draft */
    git_object *head = NULL;
    assert_int_equal(git_revparse_single(&head, repo, "HEAD^{tree}"), 0);
    git_tree_entry *e = NULL;
    assert_int_equal(git_tree_entry_bypath(&e, (git_tree *)head, "Meta/Entities.md"), 0);
    git_tree_entry_free(e);
    e = NULL;
    assert_int_not_equal(git_tree_entry_bypath(&e, (git_tree *)head, "articles/Draft.md"), 0);
    git_object_free(head);
    /* the draft is still staged */
    assert_int_equal(git_repository_index(&idx, repo), 0);
    assert_int_equal(git_index_read(idx, 1), 0);
    assert_non_null(git_index_get_bypath(idx, "articles/Draft.md", 0));
    assert_non_null(git_index_get_bypath(idx, "Meta/Entities.md", 0));
    git_index_free(idx);
    git_repository_free(repo);
    git_libgit2_shutdown();
}

/* A repository without a commit (an init whose first commit failed: a leftover index.lock, say)
 * gets its first commit on the next init, although every page is already on disk as seeded.
 * Before, nothing was "restored", so nothing was committed, ever. */
static void test_vault_reinit_makes_a_first_commit_that_failed(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/.git'", w);
    assert_int_equal(system(cmd), 0);
    git_libgit2_init();
    git_repository *repo = NULL;
    assert_int_equal(git_repository_init(&repo, w, 0), 0);
    git_repository_free(repo);
    git_libgit2_shutdown();
    struct dream_vault_init_result r;
    assert_int_equal(dream_vault_init(w, &r, NULL, NULL), 0);
    assert_int_equal(r.committed, 1);
    assert_int_equal(commit_count(w), 1);
}

/* An init killed while libgit2 made the repository left .git with its config.lock and no HEAD:
 * every later init failed on the lock ("failed to lock file"), and the wiki had no git at all.
 * The next init makes the repository, and its first commit. */
static void test_vault_init_finishes_a_repository_a_killed_init_left_half_made(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    char cmd[900];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/.git' && printf '[core]\\n' > '%s/.git/config' && touch '%s/.git/config.lock'", w, w, w);
    assert_int_equal(system(cmd), 0);
    struct dream_vault_init_result r;
    int rc = dream_vault_init(w, &r, NULL, NULL);
    if (rc) fprintf(stderr, "init: %s\n", dream_error_last());
    assert_int_equal(rc, 0);
    assert_int_equal(r.committed, 1);
    assert_int_equal(commit_count(w), 1);
}

/* What git status says of the wiki at w, in porcelain form ("" when clean); the caller frees it. */
static char *git_status_of(const char *w)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "git -C '%s' status --porcelain 2>&1", w);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char *out = calloc(1, 8192);
    size_t n = fread(out, 1, 8191, f);
    out[n] = 0;
    pclose(f);
    return out;
}

/* An init killed during or after its first commit (it writes the marker of a dream commit under
 * way first, "none" for a first commit):
 * - after the commit, before the index was written: git status showed every seeded page staged
 *   as deleted, and the person's next `git commit` deleted them all;
 * - with the index lock held: every later init and run refused on it until removed by hand;
 * - with the branch's lock held, before the branch moved: the same.
 * The next init clears the killed commit's locks and brings the index up to HEAD. */
static void test_vault_init_finishes_a_first_commit_a_kill_cut_short(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    static const char *const kills[] = {
        "rm '%s/.git/index'",                                      /* after the commit */
        "mv '%s/.git/index' '%s/.git/index.lock'",                 /* at the index write */
        "rm -rf '%s/.git' && git init -q '%s' && touch '%s/.git/refs/heads/'\"$(git -C '%s' symbolic-ref --short HEAD)\".lock", /* at the branch */
    };
    for (size_t k = 0; k < sizeof kills / sizeof kills[0]; k++) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
        snprintf(cmd, sizeof cmd, kills[k], w, w, w, w);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "echo none > '%s/.git/dream-commit-in-progress'", w);
        assert_int_equal(system(cmd), 0);
        struct dream_vault_init_result r;
        int rc = dream_vault_init(w, &r, NULL, NULL);
        if (rc) fprintf(stderr, "kill %zu: init: %s\n", k, dream_error_last());
        assert_int_equal(rc, 0);
        assert_int_equal(commit_count(w), 1);
        char *st = git_status_of(w);
        if (st[0]) fprintf(stderr, "kill %zu: git status:\n%s", k, st);
        assert_string_equal(st, "");
        free(st);
        snprintf(cmd, sizeof cmd, "test ! -e '%s/.git/dream-commit-in-progress' && test ! -e '%s/.git/index.lock'", w, w);
        assert_int_equal(system(cmd), 0);
    }
}

/* A name libgit2 refuses in a signature (angle brackets; git itself would trim them) makes the
 * commit dream's own, with a warning, rather than no commit at all. */
static void test_vault_init_commits_as_dream_under_a_name_git_refuses(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    setenv("GIT_AUTHOR_NAME", "<nobody>", 1);
    struct dream_vault_init_result r;
    int rc = dream_vault_init(w, &r, NULL, NULL);
    unsetenv("GIT_AUTHOR_NAME");
    assert_int_equal(rc, 0);
    assert_int_equal(r.committed, 1);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "test \"$(git -C '%s' log -1 --format=%%an)\" = dream", w);
    assert_int_equal(system(cmd), 0);
}

static void test_vault_init_rejects_a_file_path(void **state)
{
    (void)state;
    const char *p = path_of("plain-file");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(dream_vault_init(p, NULL, NULL, NULL), DREAM_EINVAL);
    assert_non_null(strstr(dream_error_last(), "plain-file"));
    assert_non_null(strstr(dream_error_last(), "not a directory"));
    /* A path below a file cannot be created either. */
    assert_int_equal(dream_vault_init(path_of("plain-file/wiki"), NULL, NULL, NULL), DREAM_EIO);
    assert_non_null(strstr(dream_error_last(), "plain-file"));
}

static void test_vault_init_rejects_unwritable_dir(void **state)
{
    (void)state;
    if (geteuid() == 0) skip(); /* root writes anywhere: the check cannot be observed */
    const char *d = path_of("locked");
    assert_int_equal(mkdir(d, 0555), 0);
    assert_int_not_equal(dream_vault_init(path_of("locked/wiki"), NULL, NULL, NULL), 0);
    assert_non_null(strstr(dream_error_last(), "locked"));
    assert_int_not_equal(dream_vault_init(d, NULL, NULL, NULL), 0);
    assert_non_null(strstr(dream_error_last(), "not writable"));
    chmod(d, 0755);
}

/* Principle 8: policy pages are schematic. No seeded page may carry a concrete example; every
 * example is a <placeholder>. A cheap proxy: no digits outside the structural ones, and each
 * page uses at least one placeholder or says it lists nothing. */
static void test_vault_meta_pages_are_schematic(void **state)
{
    (void)state;
    const char *const pages[] = {"Chunking", "Entities", "Article_Conventions", "Infobox_Schemas", "Topics_to_Ignore", "Aliases"};
    for (size_t i = 0; i < 6; i++) {
        const char *t = dream_vault_seed_meta(pages[i]);
        assert_non_null(t);
        assert_true(strstr(t, "<") != NULL || strstr(t, "nothing") != NULL);
        assert_null(strstr(t, "e.g."));
        assert_null(strstr(t, "for example"));
    }
    assert_null(dream_vault_seed_meta("No_Such_Page"));
}

static void test_vault_meta_page_missing_reads_empty(void **state)
{
    (void)state;
    const char *w = path_of("wiki");
    assert_int_equal(dream_vault_init(w, NULL, NULL, NULL), 0);
    assert_int_equal(unlink(path_of("wiki/Meta/Topics_to_Ignore.md")), 0);
    char *m;
    assert_int_equal(dream_vault_meta_page(w, "Topics_to_Ignore", &m), 0);
    assert_string_equal(m, "");
    free(m);
    assert_int_equal(dream_vault_meta_page(w, "../README", &m), DREAM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vault_init_creates_layout_and_one_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_reinit_is_a_noop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_reinit_keeps_edited_meta_page, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_reinit_restores_deleted_page_in_own_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_reinit_commits_only_its_own_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_reinit_makes_a_first_commit_that_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_init_finishes_a_repository_a_killed_init_left_half_made, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_init_finishes_a_first_commit_a_kill_cut_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_init_commits_as_dream_under_a_name_git_refuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_init_rejects_a_file_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vault_init_rejects_unwritable_dir, setup, teardown),
        cmocka_unit_test(test_vault_meta_pages_are_schematic),
        cmocka_unit_test_setup_teardown(test_vault_meta_page_missing_reads_empty, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
