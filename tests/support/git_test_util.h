/*
 * git_test_util.h — what the tests of the writing stages ask of a wiki's git repository (include
 * after cmocka.h; link libgit2).
 */
#ifndef DREAM_TESTS_GIT_TEST_UTIL_H
#define DREAM_TESTS_GIT_TEST_UTIL_H

#include "../src/util/file.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HEAD's commit message in the repository at wiki (malloc'd). */
static inline char *test_git_head_message(const char *wiki)
{
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_open(&repo, wiki), 0);
    git_oid id;
    git_commit *commit;
    assert_int_equal(git_reference_name_to_id(&id, repo, "HEAD"), 0);
    assert_int_equal(git_commit_lookup(&commit, repo, &id), 0);
    char *m = strdup(git_commit_message(commit));
    git_commit_free(commit);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return m;
}

/* 1: rel is in HEAD with the file's content; 0: not in HEAD; -1: in HEAD with other content. */
static inline int test_git_head_has(const char *wiki, const char *rel)
{
    git_libgit2_init();
    git_repository *repo;
    assert_int_equal(git_repository_open(&repo, wiki), 0);
    git_object *obj = NULL;
    char spec[1200];
    snprintf(spec, sizeof spec, "HEAD:%s", rel);
    int r = 0;
    if (git_revparse_single(&obj, repo, spec) == 0) {
        char path[4600], *t = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", wiki, rel);
        if (file_read_all(path, 0, &t, &len)) t = NULL;
        git_blob *blob = (git_blob *)obj;
        r = t && (size_t)git_blob_rawsize(blob) == len && memcmp(git_blob_rawcontent(blob), t, len) == 0 ? 1 : -1;
        free(t);
        git_object_free(obj);
    }
    git_repository_free(repo);
    git_libgit2_shutdown();
    return r;
}

#endif
