/*
 * vault.h — the wiki on disk (DESIGN.md §5, spec §3): a directory of Markdown under git.
 *
 * The part src/vault/ (docs/ARCHITECTURE.md): the wiki as a directory under git. vault.c
 * creates it (directories, seeded files, the repository, through libgit2) and reads its Meta
 * pages; vault_seed.c holds the text of the seeded files. It stands on util alone; the writing
 * stages in src/dreaming put articles into it and commit them.
 *
 * Layout: articles/ (one article per subject), Meta/ (editable policy pages that stage prompts
 * inline), Talk/ (structural suggestions), Sources/ (a transcript note per cited conversation,
 * written by the Dreaming, never by hand; absent when the vault keeps none), README.md,
 * .gitignore, and a git repository whose first commit holds the seeded files.
 *
 * Initialisation is idempotent and respects the person's edits: a seeded file is written only
 * when it is missing; one that exists with other content is kept as it is and reported as kept.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_VAULT_H
#define DREAM_VAULT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What init did with one seeded file. */
enum dream_vault_file_state {
    DREAM_VAULT_CREATED = 1, /* was missing; written now */
    DREAM_VAULT_SAME,        /* present with the seeded content */
    DREAM_VAULT_KEPT,        /* present with other content (the person's edit): left alone */
};

/* Called once per seeded file with its path relative to the vault root. */
typedef void (*dream_vault_file_fn)(void *ud, const char *relpath, enum dream_vault_file_state state);

struct dream_vault_init_result {
    int created;       /* files written */
    int same;          /* files already as seeded */
    int kept;          /* files the person changed, left alone */
    int repo_created;  /* 1 when the git repository was created by this call */
    int committed;     /* 1 when this call made a commit */
};

/* Creates (or completes) the vault at dir: directories, seeded files, the git repository and,
 * when it creates the repository, an initial commit of the seeded files. On an existing
 * repository, files it had to (re)create are committed by themselves (never the person's other
 * changes). DREAM_EIO when dir cannot be created or written (it names the path), DREAM_EINVAL
 * when dir is a file. on_file may be NULL. */
int dream_vault_init(const char *dir, struct dream_vault_init_result *out, dream_vault_file_fn on_file, void *ud);

/* The Meta policy page `name` (e.g. "Chunking") of the vault at dir, as it is on disk now, in
 * *out (malloc'd, freed by the caller). A missing page gives "" (stages run with the built-in
 * default policy), so a person may delete a page to switch it off. */
int dream_vault_meta_page(const char *dir, const char *name, char **out);

/* Whether the vault at dir keeps transcript notes under Sources/ for the conversations its
 * footnotes cite (footnotes then link to the cited message): the git setting `dream.sources` of
 * its repository, true when unset or when dir is no repository. */
int dream_vault_sources(const char *dir, bool *on);

/* Sets `dream.sources` in the repository of the vault at dir (`dream init --no-sources`; the next
 * run writes or removes the notes and relinks the footnotes). DREAM_EIO when dir is no repository. */
int dream_vault_set_sources(const char *dir, bool on);

/* Whether dir is a wiki `dream init` set up: it has its Meta/ folder (articles/ it may lack: git
 * keeps no empty folder, so a clone of a wiki, or one whose last article went, has none). */
bool dream_vault_is_set_up(const char *dir);

struct git_repository;
struct git_signature;

/* Whether dream may commit to repo (the wiki at dir, which the error names) now, as git itself
 * would: DREAM_EBUSY with an error naming what stands in the way and what to do when the
 * repository is half way through a merge, rebase, revert, cherry-pick, bisect or `git am`, when
 * its HEAD is detached (the commit would be on no branch), or when git's index, HEAD or branch
 * lock file exists two seconds on (a git command is running, or a killed one left it). Every
 * stage that writes, and forget, asks before they change anything, and each commit again. */
int dream_vault_git_ready(struct git_repository *repo, const char *dir);

struct git_oid;

/* A dream commit killed half way leaves git's locks behind (index.lock, the branch's ref lock),
 * and every later commit would fail on them; killed after it moved the branch, it leaves the
 * index at the commit before. dream_vault_git_marker(repo, true, parent) writes a marker in the
 * git directory just before a commit (naming the commit it is made on, "none" for the first),
 * and (repo, false, NULL) removes it once the index is written, on success or failure.
 * dream_vault_git_clear_killed, when the marker is there: removes the locks that date from it,
 * brings the index up to HEAD where the killed commit moved the branch (a path the person staged
 * something else for keeps it), and removes the marker; a lock younger than the killed commit
 * (a git command the person started since) is left for dream_vault_git_ready to name. Every
 * commit of dream's (init, the stages, forget) marks itself, and every command that commits
 * clears a killed one first. */
void dream_vault_git_marker(struct git_repository *repo, bool start, const struct git_oid *parent);
void dream_vault_git_clear_killed(struct git_repository *repo);

/* The author and committer of a commit dream makes in repo, as git names them: GIT_AUTHOR_NAME,
 * GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL when set, else user.name and
 * user.email from the repository's config and the global one (the file GIT_CONFIG_GLOBAL names
 * when it is set, as git reads it), else "dream <dream@localhost>". Free both with
 * git_signature_free. */
int dream_vault_git_signatures(struct git_repository *repo, struct git_signature **author, struct git_signature **committer);

/* The seeded text of Meta page `name`, or NULL when there is no such seeded page. */
const char *dream_vault_seed_meta(const char *name);

#ifdef __cplusplus
}
#endif
#endif
