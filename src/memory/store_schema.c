/* store_schema.c — the store's schema, as a list of forward migrations (see store_internal.h).
 * Times are Unix epoch milliseconds; NULL means unknown. */
#include "store_internal.h"

const char *const store_migrations[] = {
    /* 0 → 1: conversations and messages. */
    "CREATE TABLE conversations ("
    "  id INTEGER PRIMARY KEY,"
    "  source TEXT NOT NULL,"          /* the format it came from: chatgpt, claude, ... */
    "  source_id TEXT NOT NULL,"       /* the full stable id from the source */
    "  cite TEXT NOT NULL UNIQUE,"     /* short citation hash, never changes once given */
    "  title TEXT NOT NULL,"
    "  created_at INTEGER,"
    "  updated_at INTEGER,"
    "  content_hash TEXT NOT NULL,"    /* SHA-256 over title and messages */
    "  message_count INTEGER NOT NULL,"
    "  ingested_at INTEGER NOT NULL,"  /* first ingest */
    "  changed_at INTEGER,"            /* last ingest that changed it */
    "  revision INTEGER NOT NULL DEFAULT 1,"
    "  reprocess_from INTEGER,"        /* first message position later stages must redo */
    "  origin TEXT,"                   /* the file it was last read from */
    "  UNIQUE (source, source_id)"
    ");"
    "CREATE TABLE messages ("
    "  conversation INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    "  position INTEGER NOT NULL,"     /* dense, from 0 */
    "  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),"
    "  source_id TEXT NOT NULL,"       /* the source's own message id */
    "  created_at INTEGER,"
    "  text TEXT NOT NULL,"
    "  PRIMARY KEY (conversation, position)"
    ") WITHOUT ROWID;"
    "CREATE INDEX conversations_reprocess ON conversations(reprocess_from) WHERE reprocess_from IS NOT NULL;",
};

const int store_migration_count = (int)(sizeof store_migrations / sizeof store_migrations[0]);

_Static_assert(sizeof store_migrations / sizeof store_migrations[0] == DREAM_STORE_SCHEMA_VERSION,
               "DREAM_STORE_SCHEMA_VERSION must equal the number of migrations");
