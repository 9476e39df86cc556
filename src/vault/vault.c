/* vault.c — creating the vault: directories, seeded files, and its git repository (libgit2).
 *
 * Every seeded file is written only when missing, so re-running init is a no-op and a page the
 * person edited survives. A commit stages only the paths this call wrote (spec §12 item 32: a
 * commit must never sweep up the person's own unrelated edits). */
#include "vault_internal.h"

#include "../util/buf.h"
#include "../util/file.h"
#include "dream/error.h"
#include "dream/log.h"

#include <errno.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const vault_dirs[] = {"articles", "Meta", "Talk"};

/* Joins dir and rel into a malloc'd path, or NULL (error set). */
static char *vault_join(const char *dir, const char *rel)
{
    struct dbuf b = {0};
    if (dbuf_printf(&b, "%s/%s", dir, rel)) return NULL;
    return dbuf_take(&b);
}

/* The libgit2 error as our error, with context. */
static int vault_git_error(const char *what, const char *dir)
{
    const git_error *e = git_error_last();
    return dream_error_set(DREAM_EIO, "%s in the wiki %s: %s", what, dir, e && e->message ? e->message : "unknown git error");
}

/* Commits paths (relative to the root, as they are on disk) onto HEAD (or as the first commit):
 * a tree of HEAD's plus exactly these files, so whatever the person has staged stays staged and
 * out of the commit. The repository's index takes our files only where it agreed with HEAD (a
 * path the person staged something else for keeps their staging). */
static int vault_commit(git_repository *repo, const char *dir, const char *const *paths, size_t n, const char *message)
{
    git_index *index = NULL, *ridx = NULL;
    git_oid tree_id, commit_id, parent_id;
    git_tree *tree = NULL, *ptree = NULL;
    git_commit *parent = NULL;
    git_signature *author = NULL, *committer = NULL;
    int rc = dream_vault_git_ready(repo, dir);

    if (!rc && git_reference_name_to_id(&parent_id, repo, "HEAD") == 0 &&
        (git_commit_lookup(&parent, repo, &parent_id) || git_commit_tree(&ptree, parent)))
        rc = vault_git_error("reading HEAD", dir);
    if (!rc && (git_index_new(&index) || (ptree && git_index_read_tree(index, ptree)))) rc = vault_git_error("reading HEAD's tree", dir);
    for (size_t i = 0; !rc && i < n; i++) {
        git_index_entry e;
        memset(&e, 0, sizeof e);
        if (git_blob_create_from_workdir(&e.id, repo, paths[i])) {
            rc = vault_git_error("staging a seeded file", dir);
            break;
        }
        e.mode = GIT_FILEMODE_BLOB;
        e.path = paths[i];
        if (git_index_add(index, &e)) rc = vault_git_error("staging a seeded file", dir);
    }
    if (!rc && (git_index_write_tree_to(&tree_id, index, repo) || git_tree_lookup(&tree, repo, &tree_id)))
        rc = vault_git_error("writing the commit's tree", dir);
    /* The person's git identity when they have one; otherwise a neutral one, so init works on a
     * machine where git was never configured. */
    if (!rc) rc = dream_vault_git_signatures(repo, &author, &committer);
    const git_commit *parents[1] = {parent};
    bool marked = !rc;
    if (marked) dream_vault_git_marker(repo, true, parent ? git_commit_id(parent) : NULL);
    if (!rc && git_commit_create(&commit_id, repo, "HEAD", author, committer, NULL, message, tree, parent ? 1 : 0, parents))
        rc = vault_git_error("committing", dir);
    if (!rc && git_repository_index(&ridx, repo) == 0) {
        for (size_t i = 0; i < n; i++) {
            const git_index_entry *cur = git_index_get_bypath(ridx, paths[i], 0);
            git_tree_entry *old = NULL;
            bool agreed = !cur;
            if (cur && ptree && git_tree_entry_bypath(&old, ptree, paths[i]) == 0) agreed = git_oid_equal(&cur->id, git_tree_entry_id(old));
            git_tree_entry_free(old);
            if (agreed) git_index_add_bypath(ridx, paths[i]); /* with the file's stat, so git status sees it clean */
        }
        if (git_index_write(ridx)) rc = vault_git_error("writing the git index", dir);
    }
    if (marked) dream_vault_git_marker(repo, false, NULL);
    git_signature_free(author);
    git_signature_free(committer);
    git_commit_free(parent);
    git_tree_free(ptree);
    git_tree_free(tree);
    git_index_free(ridx);
    git_index_free(index);
    return rc;
}

bool dream_vault_is_set_up(const char *dir)
{
    char *meta = dir ? vault_join(dir, "Meta") : NULL;
    bool set_up = meta && file_is_dir(meta);
    free(meta);
    return set_up;
}

/* A `dream init` killed while libgit2 made the repository leaves a .git with no HEAD yet and its
 * config.lock: no git repository, and every later init failed on the lock. No git command works
 * in such a directory, so the lock is that killed init's; it goes, and init makes the repository
 * again over what is there. */
static void vault_clear_half_made(const char *dir)
{
    char *head = vault_join(dir, ".git/HEAD"), *gitdir = vault_join(dir, ".git"), *lock = vault_join(dir, ".git/config.lock");
    if (head && gitdir && lock && file_is_dir(gitdir) && !file_exists(head) && unlink(lock) == 0)
        dream_log(DREAM_LOG_WARN, "removed %s, left by a dream init that was killed", lock);
    free(head);
    free(gitdir);
    free(lock);
}

/* Writes one seeded file unless present; reports what happened in *state. */
static int vault_seed_one(const char *dir, const struct vault_seed_file *f, enum dream_vault_file_state *state)
{
    char *path = vault_join(dir, f->path);
    if (!path) return DREAM_ENOMEM;
    char *have = NULL;
    size_t have_len = 0;
    int rc = file_read_all(path, 0, &have, &have_len);
    if (rc == DREAM_OK) {
        *state = (have_len == strlen(f->text) && memcmp(have, f->text, have_len) == 0) ? DREAM_VAULT_SAME : DREAM_VAULT_KEPT;
        free(have);
        free(path);
        return DREAM_OK;
    }
    if (rc != DREAM_ENOTFOUND) {
        free(path);
        return rc;
    }
    dream_error_clear();
    rc = file_write_atomic(path, f->text, strlen(f->text));
    free(path);
    if (rc) return dream_error_wrap(rc, "seeding the wiki");
    *state = DREAM_VAULT_CREATED;
    return DREAM_OK;
}

int dream_vault_init(const char *dir, struct dream_vault_init_result *out, dream_vault_file_fn on_file, void *ud)
{
    struct dream_vault_init_result res = {0};
    if (!dir || !*dir) return dream_error_set(DREAM_EINVAL, "no wiki directory given");
    if (file_exists(dir) && !file_is_dir(dir))
        return dream_error_set(DREAM_EINVAL, "the wiki path %s is a file, not a directory; give another path with --wiki", dir);
    if (file_mkdirs(dir, 0755)) return dream_error_wrap(DREAM_EIO, "creating the wiki directory %s", dir);
    if (access(dir, W_OK) != 0)
        return dream_error_set(DREAM_EIO, "the wiki directory %s is not writable (%s); fix its permissions or give another path with --wiki",
                               dir, strerror(errno));
    for (size_t i = 0; i < sizeof vault_dirs / sizeof vault_dirs[0]; i++) {
        char *sub = vault_join(dir, vault_dirs[i]);
        if (!sub) return DREAM_ENOMEM;
        int rc = file_mkdirs(sub, 0755);
        if (rc) {
            dream_error_wrap(DREAM_EIO, "creating %s", sub);
            free(sub);
            return DREAM_EIO;
        }
        free(sub);
    }

    size_t n_seeds;
    const struct vault_seed_file *seeds = vault_seed_files(&n_seeds);
    const char **written = calloc(n_seeds, sizeof *written);
    if (!written) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t n_written = 0;
    int rc = DREAM_OK;
    for (size_t i = 0; i < n_seeds; i++) {
        enum dream_vault_file_state st = DREAM_VAULT_KEPT; /* set by vault_seed_one when it succeeds */
        rc = vault_seed_one(dir, &seeds[i], &st);
        if (rc) goto done;
        if (st == DREAM_VAULT_CREATED) {
            res.created++;
            written[n_written++] = seeds[i].path;
        } else if (st == DREAM_VAULT_SAME) {
            res.same++;
        } else {
            res.kept++;
        }
        if (on_file) on_file(ud, seeds[i].path, st);
    }

    git_libgit2_init();
    git_repository *repo = NULL;
    bool opened = git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0;
    if (!opened) vault_clear_half_made(dir);
    else dream_vault_git_clear_killed(repo); /* an init (or a run) killed in its commit */
    if (opened && git_repository_head_unborn(repo) != 1) {
        /* An existing vault: commit only what this call had to restore. */
        if (n_written) {
            rc = vault_commit(repo, dir, written, n_written, "memory: restore seeded vault files");
            if (rc == DREAM_OK) res.committed = 1;
        }
    } else if (opened || git_repository_init(&repo, dir, 0) == 0) {
        res.repo_created = !opened;
        /* The first commit holds every seeded file as it is now, including a page the person
         * wrote before the repository existed; so does a repository without a commit yet (one
         * whose first commit failed, say: its pages are on disk as seeded, so none is restored). */
        const char **all = calloc(n_seeds, sizeof *all);
        if (!all) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        } else {
            for (size_t i = 0; i < n_seeds; i++) all[i] = seeds[i].path;
            rc = vault_commit(repo, dir, all, n_seeds, "memory: initialize the wiki");
            if (rc == DREAM_OK) res.committed = 1;
            free(all);
        }
    } else {
        rc = vault_git_error("creating the git repository", dir);
    }
    git_repository_free(repo);
    git_libgit2_shutdown();
done:
    free(written);
    if (rc == DREAM_OK && out) *out = res;
    return rc;
}

int dream_vault_meta_page(const char *dir, const char *name, char **out)
{
    *out = NULL;
    if (!dir || !name || !*name || strchr(name, '/') || name[0] == '.')
        return dream_error_set(DREAM_EINVAL, "bad Meta page name \"%s\"", name ? name : "(null)");
    struct dbuf b = {0};
    if (dbuf_printf(&b, "%s/Meta/%s.md", dir, name)) return DREAM_ENOMEM;
    char *path = dbuf_take(&b);
    if (!path) return dream_error_set(DREAM_ENOMEM, "out of memory");
    size_t len;
    int rc = file_read_all(path, 1u << 20, out, &len);
    free(path);
    if (rc == DREAM_ENOTFOUND) {
        dream_error_clear();
        *out = strdup("");
        if (!*out) return dream_error_set(DREAM_ENOMEM, "out of memory");
        return DREAM_OK;
    }
    return rc;
}

int dream_vault_sources(const char *dir, bool *on)
{
    *on = true;
    git_libgit2_init();
    git_repository *repo = NULL;
    git_config *cfg = NULL;
    int v = 1;
    if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) == 0 && git_repository_config(&cfg, repo) == 0 &&
        git_config_get_bool(&v, cfg, "dream.sources") == 0)
        *on = v != 0;
    git_config_free(cfg);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return DREAM_OK;
}

int dream_vault_set_sources(const char *dir, bool on)
{
    git_libgit2_init();
    git_repository *repo = NULL;
    git_config *cfg = NULL;
    int rc = DREAM_OK;
    if (git_repository_open_ext(&repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) || git_repository_config(&cfg, repo) ||
        git_config_set_bool(cfg, "dream.sources", on))
        rc = vault_git_error("setting dream.sources", dir);
    git_config_free(cfg);
    git_repository_free(repo);
    git_libgit2_shutdown();
    return rc;
}
