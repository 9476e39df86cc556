/*
 * forget.h — `dream forget`: conversations taken out of the store and out of the wiki (issue 18).
 *
 * In src/dreaming/forget.c (the part that writes both the store and the wiki). What goes:
 *   - from the store, in one transaction: the conversations, their messages (and so their rows of
 *     the search index), everything derived from them (chunks, the subjects they named, the
 *     ledgers, the stages' work state), and the subjects no other conversation names, so that a
 *     later `dream run` cannot write their claims again; the search index is then merged
 *     (FTS5 'optimize') and the store written over where they were (secure_delete, a WAL
 *     checkpoint), so their text is not left in free pages either. Ingest does not read them
 *     back: the store keeps a one-way key of each conversation, and of each message, so a
 *     resumed Claude Code session that repeats a forgotten session's messages stores only its
 *     own;
 *   - from the wiki, claim by claim (dream_article_forget): sentences cited only by them, their
 *     markers in sentences that other conversations also support, their footnote definitions;
 *     an article left with nothing cited and no prose (a section the person wrote keeps it) is
 *     removed, and the links to it become the text they
 *     showed (a `## See also` bullet goes), as for any article that does not exist; a redirect
 *     to it goes too. Other articles are not touched. All of it is one git commit,
 *     "memory: forget conv:HASH" (or "memory: forget N conversation(s) from SOURCE / before
 *     DAY"): the commit names no title, since a commit message stays in the history.
 * The wiki's writes go through the write journal (synth_writes) with the store's transaction,
 * so a forget killed half way is finished by the next run of any writing stage (or of forget).
 * It takes the run lock (dream/pipeline.h). Git history and backups keep what they hold: the
 * README says how to purge a repository's history.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set; an
 * error of the arguments or of the plan changes nothing.
 */
#ifndef DREAM_FORGET_H
#define DREAM_FORGET_H

#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One thing forget takes out (or, in a dry run, would). */
enum dream_forget_what {
    DREAM_FORGET_CONVERSATION = 1, /* cite, source, title, date, messages, stored */
    DREAM_FORGET_ARTICLE_EDITED,   /* path, sentences, citations, sections (and links) */
    DREAM_FORGET_ARTICLE_REMOVED,  /* path: nothing cited was left (or a redirect to such) */
    DREAM_FORGET_ARTICLE_UNLINKED, /* path, links: links to removed articles made text */
};

struct dream_forget_item {
    enum dream_forget_what what;
    const char *cite, *source, *title, *date; /* date: YYYY-MM-DD of its last message, "" unknown */
    size_t messages;
    bool stored;      /* false: only the wiki cites it (the store no longer has it) */
    const char *path; /* "articles/<stem>.md" */
    size_t sentences, citations, sections, links;
};

struct dream_forget_params {
    const char *const *conversations; /* citation hashes ("conv:" optional), or NULL */
    size_t n_conversations;
    const char *source; /* every conversation of this source (chatgpt, claude, ...), or NULL */
    const char *before; /* every conversation whose last message is before this day, YYYY-MM-DD
                           (UTC), or NULL; with source, both must hold. One without a known time
                           is never chosen by it */
    const char *wiki_dir; /* NULL: the default wiki when it has been set up, else none */
    bool no_wiki;         /* the store alone, whatever wiki there is */
    bool dry_run;         /* say what would change (on_item), change nothing, take no lock */
    bool lock_held;       /* the caller holds the run lock already */
    void (*on_item)(void *ud, const struct dream_forget_item *item); /* may be NULL */
    void *ud;
};

void dream_forget_default_params(struct dream_forget_params *p);

struct dream_forget_result {
    size_t conversations, messages, chunks, subjects; /* store rows taken out */
    size_t edited, removed, unlinked;                 /* articles */
    size_t left;         /* articles changed on disk while forget ran, left as they were (warned) */
    size_t committed;    /* paths in the commit; 0: no commit (nothing in the wiki changed) */
    bool wiki;           /* a wiki was worked on (false: the store alone) */
};

/* Forgets the conversations that params choose: given by hash (each must be in the store, or at
 * least cited in the wiki: else DREAM_ENOTFOUND naming it), or by source (DREAM_ENOTFOUND when
 * no conversation has that source, naming those there are) and/or day (DREAM_EINVAL for a day
 * that is not YYYY-MM-DD; none before it is no error: nothing is forgotten). Both ways at once,
 * or neither, is DREAM_EINVAL. An article the edit cannot be placed in (a code fence that never
 * closes), or one that would still name a conversation after the edit (outside its footnotes),
 * stops it before anything changes, naming the file and line to edit by hand (DREAM_EFORMAT).
 * DREAM_EBUSY when another run holds the run lock. result may be NULL. */
int dream_forget(dream_store *store, const struct dream_forget_params *params, struct dream_forget_result *result);

#ifdef __cplusplus
}
#endif
#endif
