/*
 * store.h — the memory store: one SQLite database holding every ingested conversation.
 *
 * The part src/store/ (docs/ARCHITECTURE.md): the SQLite store and everything kept in it.
 * store.c opens it and reads and writes conversations and messages; store_schema.c is the
 * schema as forward migrations; store_check.c checks that its text is valid UTF-8;
 * stage_state.c is the per-stage, per-item work state every stage resumes from
 * (stage_state.h). store_internal.h gives the parts above it the raw connection.
 * It stands on util alone; ingest, dreaming and read use it.
 *
 * The store is the pipeline's ledger (DESIGN.md §5): conversations with their stable ids from
 * the source, and their messages with dense positions. It runs in WAL mode with foreign keys
 * on; its schema carries a version and is migrated forward on open. Each conversation is
 * written in one transaction, so a crash or a bad input never leaves half a conversation.
 *
 * Every conversation also gets a short citation hash ("conv:HASH#msg" in footnotes): the first
 * 8 hex digits of SHA-256(source, NUL, id), lengthened two digits at a time when another
 * conversation already holds that prefix. Once given, a conversation's hash never changes.
 *
 * Functions return 0 (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_STORE_H
#define DREAM_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dream_store dream_store;

/* The schema version this build writes (PRAGMA user_version). */
#define DREAM_STORE_SCHEMA_VERSION 13

/* Opens (creating it and its directory when missing) the store at path, or an in-memory store
 * when path is ":memory:". Migrates an older schema forward; refuses a newer one with
 * DREAM_EFORMAT (a newer dream wrote it). The caller closes *out with dream_store_close. */
int dream_store_open(const char *path, dream_store **out);

/* Closes the store; NULL is a no-op. */
void dream_store_close(dream_store *store);

/* The schema version of the open store (DREAM_STORE_SCHEMA_VERSION after a successful open). */
int dream_store_schema_version(dream_store *store);

/* One message of a conversation. role is "user" or "assistant". id is the source's own stable
 * id for the message (never NULL; importers synthesize one from the line number where the
 * source has none). time_ms is Unix epoch milliseconds, 0 when unknown. */
struct dream_message {
    const char *role;
    const char *id;
    int64_t time_ms;
    const char *text;
};

/* A conversation as an importer hands it over. (source, id) is the stable key: source names the
 * format ("chatgpt", "claude", "claude-code", "codex", "pi", "openai-jsonl"), id is the full id
 * from the source. origin names the file it came from (informational). Times are Unix ms, 0 when
 * unknown. */
struct dream_conversation {
    const char *source;
    const char *id;
    const char *title;
    int64_t created_ms;
    int64_t updated_ms;
    const char *origin;
    const struct dream_message *messages;
    size_t n_messages;
};

enum dream_store_outcome {
    DREAM_STORE_NEW = 1,   /* first time seen: inserted */
    DREAM_STORE_CHANGED,   /* seen before with other content: updated in place, marked for re-processing */
    DREAM_STORE_UNCHANGED, /* seen before with the same content, or an older version of it: nothing written */
    DREAM_STORE_FORGOTTEN, /* forgotten by `dream forget` (dream/forget.h): nothing written */
};

/* Writes a conversation in one transaction. A conversation `dream forget` took out is not
 * written again (DREAM_STORE_FORGOTTEN): the store keeps a one-way key of each it forgot. Unchanged content (title and every message's role,
 * id, time and text) writes nothing, and neither does an older version (updated_ms earlier than the
 * stored one's, both known): an old export read after a newer one does not roll it back. Changed content is updated in place: the row keeps its
 * citation hash, messages from the first differing position on are replaced, the revision
 * counter grows, and reprocess_from is lowered to that position so later stages redo what the
 * change affects. The conversation must have at least one message. On error nothing of this
 * conversation is written and what was stored before stays. */
int dream_store_put(dream_store *store, const struct dream_conversation *conv, enum dream_store_outcome *outcome);

/* A stored conversation, read back. Strings are owned by the record. */
struct dream_store_conversation {
    int64_t rowid;
    char *source;
    char *id;
    char *cite;  /* the short citation hash */
    char *title;
    int64_t created_ms, updated_ms, ingested_ms;
    int64_t revision;       /* 1 when inserted, +1 per change */
    int64_t reprocess_from; /* first message position to redo, -1 when nothing is pending */
    struct dream_message *messages; /* strings owned by the record */
    size_t n_messages;
};

/* Reads the conversation (source, id) with its messages in position order. DREAM_ENOTFOUND
 * when absent. The caller frees *out with dream_store_conversation_free. */
int dream_store_get(dream_store *store, const char *source, const char *id, struct dream_store_conversation **out);

/* Same, by citation hash (exact match). */
int dream_store_get_by_cite(dream_store *store, const char *cite, struct dream_store_conversation **out);

void dream_store_conversation_free(struct dream_store_conversation *conv);

/* The id a citation gives a message (`conv:HASH#ID`), malloc'd: its source id when that is 1 to
 * 80 letters, digits and "-_.:", else "m" and its position. NULL when out of memory. */
char *dream_store_message_cite_id(const char *source_id, int64_t position);

/* The text (malloc'd) of the message a citation names: conversation cite, message msg (its
 * dream_store_message_cite_id). A message a later export replaced is found as the store kept it
 * (*replaced true; the latest such text when there are several). DREAM_ENOTFOUND when the store
 * holds no such conversation or message. */
int dream_store_cited_message(dream_store *store, const char *cite, const char *msg, char **text, bool *replaced);

/* Counts of stored rows. */
struct dream_store_counts {
    int64_t conversations;
    int64_t messages;
};
int dream_store_count(dream_store *store, struct dream_store_counts *out);

/* The path the store was opened with. */
const char *dream_store_path(const dream_store *store);

/* One stored text value that is not valid UTF-8 (what breaks a reader that takes the store's
 * text as text, Python's sqlite3 among them). Strings valid for the callback's duration. */
struct dream_store_bad_text {
    const char *table;  /* "messages" */
    const char *row;    /* its key: "conversation=3, position=5", or "rowid=12" */
    const char *column; /* "text" */
    size_t offset;      /* the byte where the value stops being valid UTF-8 */
};
typedef void (*dream_store_bad_text_fn)(void *ud, const struct dream_store_bad_text *bad);

/* Reads every text value of every table of the store (the search index's own tables aside: they
 * copy the others) and calls fn (may be NULL) for each one that is not valid UTF-8, in table
 * order; *n_bad (may be NULL) counts them. Changes nothing. */
int dream_store_check_text(dream_store *store, dream_store_bad_text_fn fn, void *ud, size_t *n_bad);

/* A stage's state for one item; status "none" when it was never tried. */
struct dream_stage_state {
    char status[8];      /* none, pending, done, failed */
    int64_t revision;
    int attempts;
    char *last_error;    /* malloc'd or NULL */
};

/* Reads the state of item (for segment: a conversation's row id) in stage. The caller frees
 * state->last_error. */
int dream_stage_state_get(dream_store *store, const char *stage, int64_t item, struct dream_stage_state *state);

/* Gives every item a stage gave up on ('failed') a fresh set of attempts: it becomes pending
 * again with no attempts counted, so the next run tries it (after the cause is fixed: a larger
 * DREAM_CTX, another model). *n gets how many. */
int dream_stage_state_retry(dream_store *store, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
