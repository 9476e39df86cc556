/* vault_git.c — what every commit dream makes to the wiki checks first, and whose name it bears.
 *
 * dream commits with libgit2, straight onto HEAD's branch. git itself refuses to commit in a
 * repository half way through a merge or a rebase, and a git command refuses while another holds
 * the index or branch lock; a commit of ours must do no less, or the person's next `git commit`
 * (or `git rebase --abort`) brings back what dream took out. A lock is waited on for up to two
 * seconds first: an editor's `git status` takes the index lock for a moment. */
#include "vault_internal.h"

#include "../util/buf.h"
#include "../util/file.h"
#include "dream/error.h"
#include "dream/log.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

/* The operation a repository state names, and how the person ends it. */
static const char *vault_git_state_name(int state, const char **how)
{
    switch (state) {
    case GIT_REPOSITORY_STATE_MERGE: *how = "git merge --continue, or git merge --abort"; return "merge";
    case GIT_REPOSITORY_STATE_REVERT:
    case GIT_REPOSITORY_STATE_REVERT_SEQUENCE: *how = "git revert --continue, or git revert --abort"; return "revert";
    case GIT_REPOSITORY_STATE_CHERRYPICK:
    case GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE: *how = "git cherry-pick --continue, or git cherry-pick --abort"; return "cherry-pick";
    case GIT_REPOSITORY_STATE_BISECT: *how = "git bisect reset"; return "bisect";
    case GIT_REPOSITORY_STATE_REBASE:
    case GIT_REPOSITORY_STATE_REBASE_INTERACTIVE:
    case GIT_REPOSITORY_STATE_REBASE_MERGE: *how = "git rebase --continue, or git rebase --abort"; return "rebase";
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX:
    case GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE: *how = "git am --continue, or git am --abort"; return "git am";
    default: *how = "finish it or abort it"; return "git operation";
    }
}

/* A lock file at dir/name: the error that names it, or DREAM_OK when there is none. */
static int vault_git_lock(const char *wiki, const char *dir, const char *name)
{
    struct dbuf p = {0};
    if (dbuf_printf(&p, "%s%s%s.lock", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name))
        return dream_error_set(DREAM_ENOMEM, "out of memory");
    int rc = DREAM_OK;
    if (access(p.data, F_OK) == 0)
        rc = dream_error_set(DREAM_EBUSY,
                             "the wiki %s is locked by git (%s exists): a git command is running there, or one was killed and left "
                             "the lock; when no git command is running, remove it (rm '%s'), then run dream again",
                             wiki, p.data, p.data);
    dbuf_free(&p);
    return rc;
}

int dream_vault_git_ready(git_repository *repo, const char *wiki)
{
    const char *how;
    int state = git_repository_state(repo);
    if (state != GIT_REPOSITORY_STATE_NONE) {
        const char *what = vault_git_state_name(state, &how);
        return dream_error_set(DREAM_EBUSY,
                               "the wiki %s is in the middle of a %s: dream commits only onto a settled branch, or the %s would "
                               "take its commit back; end it (%s), then run dream again",
                               wiki, what, what, how);
    }
    if (git_repository_head_detached(repo) == 1)
        return dream_error_set(DREAM_EBUSY,
                               "the wiki %s has a detached HEAD (a commit is checked out, not a branch): dream's commit would be on no "
                               "branch and lost at the next checkout; check out a branch (git -C '%s' switch -), then run dream again",
                               wiki, wiki);
    int rc = DREAM_OK;
    for (int tries = 0; tries < 20; tries++) { /* 20 x 100 ms */
        if (rc) {
            dream_error_clear();
            usleep(100 * 1000);
        }
        rc = vault_git_lock(wiki, git_repository_path(repo), "index");
        if (!rc) rc = vault_git_lock(wiki, git_repository_path(repo), "HEAD");
        git_reference *head = NULL;
        if (!rc && git_reference_lookup(&head, repo, "HEAD") == 0 && git_reference_type(head) == GIT_REFERENCE_SYMBOLIC) {
            const char *branch = git_reference_symbolic_target(head);
            if (branch && !strstr(branch, "..")) rc = vault_git_lock(wiki, git_repository_commondir(repo), branch);
        }
        git_reference_free(head);
        git_error_clear();
        if (!rc) break;
    }
    return rc;
}

/* One identity setting: the variable's value, else the key from cfg (first the repository's own
 * config, then global, where GIT_CONFIG_GLOBAL names the global file as git reads it). */
static char *vault_git_ident(git_config *local, git_config *global, git_config *rest, const char *var, const char *key)
{
    const char *v = getenv(var);
    if (v && *v) return strdup(v);
    git_config *levels[] = {local, global, rest};
    for (size_t i = 0; i < 3; i++) {
        git_buf b = {0};
        if (levels[i] && git_config_get_string_buf(&b, levels[i], key) == 0 && b.ptr && *b.ptr) {
            char *s = strdup(b.ptr);
            git_buf_dispose(&b);
            return s;
        }
        git_buf_dispose(&b);
    }
    git_error_clear();
    return NULL;
}

int dream_vault_git_signatures(git_repository *repo, git_signature **author, git_signature **committer)
{
    *author = *committer = NULL;
    git_config *cfg = NULL, *local = NULL, *global = NULL, *rest = NULL;
    const char *gfile = getenv("GIT_CONFIG_GLOBAL");
    if (git_repository_config(&cfg, repo) == 0) {
        if (gfile && *gfile) {
            /* git reads that file instead of ~/.gitconfig and the XDG one; the system's stays */
            git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL);
            git_config_open_level(&rest, cfg, GIT_CONFIG_LEVEL_SYSTEM);
            if (access(gfile, R_OK) == 0) git_config_open_ondisk(&global, gfile);
        } else {
            rest = cfg;
            cfg = NULL;
        }
    }
    char *an = vault_git_ident(local, global, rest, "GIT_AUTHOR_NAME", "user.name");
    char *ae = vault_git_ident(local, global, rest, "GIT_AUTHOR_EMAIL", "user.email");
    char *cn = vault_git_ident(local, global, rest, "GIT_COMMITTER_NAME", "user.name");
    char *ce = vault_git_ident(local, global, rest, "GIT_COMMITTER_EMAIL", "user.email");
    /* a machine where git was never configured: a neutral identity, so dream still commits; and
     * a name libgit2 refuses (angle brackets, only spaces), which git would have trimmed: the
     * neutral one too, said once */
    int rc = git_signature_now(author, an ? an : "dream", ae ? ae : "dream@localhost");
    if (rc) {
        git_error_clear();
        rc = git_signature_now(author, "dream", "dream@localhost");
        if (!rc) dream_log(DREAM_LOG_WARN, "git refuses the author name <%s> <%s>: dream's commits are made as dream <dream@localhost>", an ? an : "",
                           ae ? ae : "");
    }
    if (!rc) rc = git_signature_now(committer, cn ? cn : "dream", ce ? ce : "dream@localhost");
    if (rc) {
        git_error_clear();
        rc = git_signature_now(committer, "dream", "dream@localhost");
    }
    free(an);
    free(ae);
    free(cn);
    free(ce);
    git_config_free(local);
    git_config_free(global);
    git_config_free(rest);
    git_config_free(cfg);
    if (rc) {
        git_signature_free(*author);
        git_signature_free(*committer);
        *author = *committer = NULL;
        const git_error *e = git_error_last();
        return dream_error_set(DREAM_EIO, "making a commit signature: %s", e && e->message ? e->message : "unknown git error");
    }
    return DREAM_OK;
}

/* A commit killed half way leaves git's lock files behind (index.lock, the branch's ref lock), and
 * every later commit would fail on them. A marker file in the git directory says a dream commit
 * is under way: set just before git_commit_create and cleared once the index is written (on
 * success or failure: libgit2 takes its locks back when it fails), so only a killed commit
 * leaves it. */
#define VAULT_GIT_MARKER "dream-commit-in-progress"
/* How long after the marker a lock may still be the killed commit's (its index write included);
 * a lock younger than that is a git command the person started since, and is left alone. */
#define VAULT_GIT_COMMIT_SPAN_S 300

void dream_vault_git_marker(git_repository *repo, bool start, const git_oid *parent)
{
    struct dbuf m = {0};
    if (dbuf_printf(&m, "%s%s", git_repository_path(repo), VAULT_GIT_MARKER)) return;
    if (!start) unlink(m.data);
    else { /* the commit it is made on: what a killed commit's catch-up checks HEAD against */
        char hex[GIT_OID_HEXSZ + 1] = "none";
        if (parent) git_oid_tostr(hex, sizeof hex, parent);
        FILE *f = fopen(m.data, "w");
        if (f) {
            fprintf(f, "%s\n", hex);
            fclose(f);
        }
    }
    dbuf_free(&m);
}

/* A dream commit killed after it moved the branch but before it wrote the index leaves the
 * index at the commit before: git status then shows the commit's changes undone, and the
 * person's next `git commit` would undo them (put back what forget took out). For each path
 * HEAD's memory commit changed where the index still holds the parent's version, the index
 * takes HEAD's; a path the person staged something else for keeps it. */
static void vault_git_index_catch_up(git_repository *repo, const char *made_on)
{
    git_oid head_id;
    git_commit *head = NULL, *parent = NULL;
    git_tree *htree = NULL, *ptree = NULL;
    git_diff *diff = NULL;
    git_index *idx = NULL;
    const char *msg;
    char phex[GIT_OID_HEXSZ + 1] = "";
    /* only when the killed commit is HEAD: a memory commit whose parent is the one the marker
     * names (killed before it moved the branch, HEAD is an older commit, and nothing is owed), or
     * the wiki's first commit when the marker names none (an init's) */
    if (git_reference_name_to_id(&head_id, repo, "HEAD") || git_commit_lookup(&head, repo, &head_id) || !(msg = git_commit_message(head)) ||
        strncmp(msg, "memory:", 7) != 0 || !made_on)
        goto done;
    if (git_commit_parentcount(head) == 0) {
        if (strcmp(made_on, "none") != 0) goto done;
    } else if (git_commit_parentcount(head) != 1 || git_commit_parent(&parent, head, 0) ||
               !git_oid_tostr(phex, sizeof phex, git_commit_id(parent)) || strcmp(phex, made_on) != 0 || git_commit_tree(&ptree, parent)) {
        goto done;
    }
    if (git_commit_tree(&htree, head) || git_diff_tree_to_tree(&diff, repo, ptree, htree, NULL) || git_repository_index(&idx, repo))
        goto done;
    size_t fixed = 0;
    for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        const char *path = d->status == GIT_DELTA_DELETED ? d->old_file.path : d->new_file.path;
        const git_index_entry *cur = git_index_get_bypath(idx, path, 0);
        bool was_parent = d->status == GIT_DELTA_ADDED ? cur == NULL : cur && git_oid_equal(&cur->id, &d->old_file.id);
        if (!was_parent) continue;
        if (d->status == GIT_DELTA_DELETED) {
            if (git_index_remove(idx, path, 0) == 0) fixed++;
            continue;
        }
        git_index_entry e;
        memset(&e, 0, sizeof e);
        e.mode = d->new_file.mode;
        e.id = d->new_file.id;
        e.path = path;
        if (git_index_add(idx, &e) == 0) fixed++;
    }
    if (fixed && git_index_write(idx) == 0)
        dream_log(DREAM_LOG_WARN, "the git index of %s caught up with the interrupted commit's %zu path(s)", git_repository_workdir(repo), fixed);
done:
    git_index_free(idx);
    git_diff_free(diff);
    git_tree_free(htree);
    git_tree_free(ptree);
    git_commit_free(parent);
    git_commit_free(head);
    git_error_clear();
}

/* The locks a killed dream commit left (the marker found): removed, when they date from it; then
 * the index catches up with the commit, if the kill came after it (vault_git_index_catch_up). */
void dream_vault_git_clear_killed(git_repository *repo)
{
    const char *gd = git_repository_path(repo), *cd = git_repository_commondir(repo);
    struct dbuf m = {0};
    struct stat ms;
    if (dbuf_printf(&m, "%s%s", gd, VAULT_GIT_MARKER) || stat(m.data, &ms) != 0) {
        dbuf_free(&m);
        return;
    }
    char *locks[4] = {0};
    struct dbuf b = {0};
    if (!dbuf_printf(&b, "%sindex.lock", gd)) locks[0] = dbuf_take(&b);
    if (!dbuf_printf(&b, "%sHEAD.lock", gd)) locks[1] = dbuf_take(&b);
    if (!dbuf_printf(&b, "%spacked-refs.lock", cd)) locks[2] = dbuf_take(&b);
    git_reference *head = NULL;
    if (git_reference_lookup(&head, repo, "HEAD") == 0 && git_reference_type(head) == GIT_REFERENCE_SYMBOLIC) {
        const char *branch = git_reference_symbolic_target(head);
        if (branch && !strstr(branch, "..") && !dbuf_printf(&b, "%s%s.lock", cd, branch)) locks[3] = dbuf_take(&b);
    }
    git_reference_free(head);
    bool held = false; /* a lock that is not the killed commit's: someone else's git is at work */
    for (size_t i = 0; i < 4; i++) {
        struct stat ls;
        if (locks[i] && stat(locks[i], &ls) == 0) {
            if (ls.st_mtime + 2 >= ms.st_mtime && ls.st_mtime <= ms.st_mtime + VAULT_GIT_COMMIT_SPAN_S && unlink(locks[i]) == 0)
                dream_log(DREAM_LOG_WARN, "removed %s left by an interrupted commit", locks[i]);
            else held = true;
        }
        free(locks[i]);
    }
    /* the marker stays until the catch-up has run: with a lock of someone else's, at a later
     * commit (dream_vault_git_ready refuses this one and names the lock) */
    if (!held) {
        char *made_on = NULL;
        size_t len = 0;
        if (file_read_all(m.data, 256, &made_on, &len) == 0) made_on[strcspn(made_on, "\r\n")] = '\0';
        else made_on = NULL;
        vault_git_index_catch_up(repo, made_on);
        free(made_on);
        unlink(m.data);
    }
    dbuf_free(&m);
    git_error_clear();
    dream_error_clear();
}
