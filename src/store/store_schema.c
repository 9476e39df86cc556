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
    /* 1 → 2: per-stage work state and the segment stage's chunks. */
    "CREATE TABLE stage_state ("
    "  stage TEXT NOT NULL,"           /* segment, extract, ... */
    "  item INTEGER NOT NULL,"         /* the stage's unit of work: a conversation id for segment */
    "  revision INTEGER NOT NULL,"     /* the conversation revision this state is about */
    "  status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'failed')),"
    "  attempts INTEGER NOT NULL DEFAULT 0," /* failed attempts at this revision */
    "  last_error TEXT,"
    "  updated_at INTEGER NOT NULL,"
    "  PRIMARY KEY (stage, item)"
    ") WITHOUT ROWID;"
    "CREATE TABLE chunks ("
    "  id INTEGER PRIMARY KEY,"
    "  conversation INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    "  first_position INTEGER NOT NULL," /* a pointer into messages, never a copy of text */
    "  last_position INTEGER NOT NULL,"
    "  label TEXT NOT NULL,"
    "  revision INTEGER NOT NULL,"     /* the conversation revision it was cut from */
    "  created_at INTEGER NOT NULL,"
    "  CHECK (first_position <= last_position),"
    "  UNIQUE (conversation, first_position, last_position)"
    ");",
    /* 2 → 3: the pipeline's own entity data (extract, resolve, route). These tables belong to the
     * pipeline alone; anything rebuilt from articles lives in tables of its own (spec §12 item 18). */
    "CREATE TABLE pipeline_entities ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL,"            /* the first surface form seen, cleaned */
    "  normal TEXT NOT NULL UNIQUE,"   /* NFC + casefold + whitespace squeezed */
    "  squeezed TEXT NOT NULL UNIQUE," /* the normal form without spaces or punctuation */
    "  route TEXT CHECK (route IN ('article', 'captured')),"  /* NULL until routed */
    "  article_title TEXT,"            /* set when routed to an article */
    "  chunk_count INTEGER NOT NULL DEFAULT 0," /* distinct chunks over the whole store, at the last route */
    "  created_at INTEGER NOT NULL"
    ");"
    "CREATE TABLE chunk_mentions ("
    "  chunk INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,"
    "  normal TEXT NOT NULL,"
    "  surface TEXT NOT NULL,"         /* the name as the model gave it, cleaned */
    "  entity INTEGER REFERENCES pipeline_entities(id) ON DELETE SET NULL," /* NULL until resolved */
    "  PRIMARY KEY (chunk, normal)"
    ") WITHOUT ROWID;"
    "CREATE INDEX chunk_mentions_entity ON chunk_mentions(entity);"
    /* A chunk's row id can be reused once the chunk is cut away (by another conversation's chunk,
     * at a lower revision), so the chunk's extract state goes with it. */
    "CREATE TRIGGER chunks_forget_extract AFTER DELETE ON chunks BEGIN"
    "  DELETE FROM stage_state WHERE stage = 'extract' AND item = old.id;"
    " END;",
    /* 3 → 4: the content tokens of each entity's normal form, for resolve's distinctive-token
     * layer (entities minted before this migration have none, so only layers 1–2 find them). */
    "CREATE TABLE pipeline_entity_tokens ("
    "  token TEXT NOT NULL,"
    "  entity INTEGER NOT NULL REFERENCES pipeline_entities(id) ON DELETE CASCADE,"
    "  PRIMARY KEY (token, entity)"
    ") WITHOUT ROWID;",
    /* 4 → 5: synthesis (spec §6.5–6.6): the ledgers that make each step happen once, and the
     * journal of article writes (the text is recorded with its ledger rows, then written; a
     * killed run is finished or undone by the next; committed rows leave once in git). */
    "CREATE TABLE synth_writes ("
    "  seq INTEGER PRIMARY KEY,"
    "  path TEXT NOT NULL,"            /* relative to the wiki root */
    "  before_text TEXT,"              /* what the file held when read; NULL: a new file */
    "  text TEXT NOT NULL,"            /* what this write puts there */
    "  state TEXT NOT NULL CHECK (state IN ('pending', 'written')),"
    "  stage TEXT NOT NULL"            /* create, fold: names the commit */
    ");"
    "CREATE TABLE chunk_routed ("      /* (chunk, article) section-routed once */
    "  chunk INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,"
    "  article TEXT NOT NULL,"         /* the stem */
    "  write_seq INTEGER,"             /* the journaled write it came with (undone with it) */
    "  PRIMARY KEY (chunk, article)"
    ") WITHOUT ROWID;"
    "CREATE TABLE chunk_folded ("      /* (chunk, article, section) folded once */
    "  chunk INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,"
    "  article TEXT NOT NULL,"
    "  section TEXT NOT NULL,"         /* the anchor, or __lead__ */
    "  write_seq INTEGER,"
    "  PRIMARY KEY (chunk, article, section)"
    ") WITHOUT ROWID;"
    "CREATE INDEX chunk_routed_article ON chunk_routed(article);",
    /* 5 → 6: wikify's word high-water mark per section, so the gate's floor is measured against
     * the most a section ever held, never last night's tightened text (spec §12.23). */
    "CREATE TABLE section_high_water ("
    "  article TEXT NOT NULL,"
    "  section TEXT NOT NULL,"         /* the anchor */
    "  words INTEGER NOT NULL,"
    "  PRIMARY KEY (article, section)"
    ") WITHOUT ROWID;",
    /* 6 → 7: the full-text search index (issue 15; dream/search.h has the row-id ranges): every
     * message and captured subject kept by triggers, so each write is indexed in its own
     * transaction; article sections written by the stages that write articles. Existing
     * messages and subjects are indexed here; articles by the next reader or `dream reindex`. */
    STORE_SEARCH_TABLE_V7_SQL
    "CREATE TABLE search_articles ("  /* an indexed article, as it was when indexed */
    "  stem TEXT PRIMARY KEY,"
    "  mtime INTEGER NOT NULL,"        /* nanoseconds (seconds in stores before it); with bytes, a cheap is-it-the-same test; 0: compare the hash */
    "  bytes INTEGER NOT NULL,"
    "  hash TEXT NOT NULL"             /* SHA-256 of the text */
    ") WITHOUT ROWID;"
    "CREATE TABLE search_sections ("   /* one row per indexed lead or section: its search row id */
    "  id INTEGER PRIMARY KEY,"
    "  stem TEXT NOT NULL,"
    "  anchor TEXT NOT NULL,"          /* '' for the lead (with the infobox) */
    "  cites TEXT NOT NULL,"           /* the citations its markers use, space-separated */
    "  date TEXT"                      /* the newest of their dates, YYYY-MM-DD */
    ");"
    "CREATE INDEX search_sections_stem ON search_sections(stem);"
    "CREATE TRIGGER search_message_in AFTER INSERT ON messages WHEN new.position < 16777216 BEGIN"
    "  INSERT INTO search (rowid, title, section, text, date) VALUES ((1 << 50) + new.conversation * 16777216 + new.position, '', '',"
    "   new.text, coalesce(new.created_at, (SELECT created_at FROM conversations WHERE id = new.conversation)));"
    " END;"
    "CREATE TRIGGER search_message_out AFTER DELETE ON messages BEGIN"
    "  DELETE FROM search WHERE rowid = (1 << 50) + old.conversation * 16777216 + old.position;"
    " END;"
    "CREATE TRIGGER search_message_re AFTER UPDATE OF text, created_at ON messages WHEN new.position < 16777216 BEGIN"
    "  DELETE FROM search WHERE rowid = (1 << 50) + old.conversation * 16777216 + old.position;"
    "  INSERT INTO search (rowid, title, section, text, date) VALUES ((1 << 50) + new.conversation * 16777216 + new.position, '', '',"
    "   new.text, coalesce(new.created_at, (SELECT created_at FROM conversations WHERE id = new.conversation)));"
    " END;"
    "CREATE TRIGGER search_subject_in AFTER INSERT ON pipeline_entities WHEN new.route IS NOT 'article' BEGIN"
    "  INSERT INTO search (rowid, title, section, text, date) VALUES ((1 << 48) + new.id, new.name, '', '', NULL);"
    " END;"
    "CREATE TRIGGER search_subject_re AFTER UPDATE OF name, route ON pipeline_entities BEGIN"
    "  DELETE FROM search WHERE rowid = (1 << 48) + old.id;"
    "  INSERT INTO search (rowid, title, section, text, date) SELECT (1 << 48) + new.id, new.name, '', '', NULL"
    "   WHERE new.route IS NOT 'article';"
    " END;"
    "CREATE TRIGGER search_subject_out AFTER DELETE ON pipeline_entities BEGIN"
    "  DELETE FROM search WHERE rowid = (1 << 48) + old.id;"
    " END;"
    STORE_SEARCH_FILL_V7_SQL,
    /* 7 → 8: `dream forget`. A journaled write may remove its file (an article left with nothing
     * cited; the commit removes the path, and recovery finishes or undoes it). And the
     * conversations forgotten, so that ingest does not read them back from the same export: a
     * one-way key of each, never its id (store_forgotten_key). */
    "ALTER TABLE synth_writes ADD COLUMN removes INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE forgotten ("
    "  key TEXT PRIMARY KEY,"
    "  forgotten_at INTEGER NOT NULL"
    ") WITHOUT ROWID;",
    /* 8 → 9: the search index without its copy of the text (issue 15: the copy doubled what
     * the text costs on disk, and writing it was a fifth of the index's build). FTS5 reads the
     * text through search_source (store_internal.h); an article's sections keep theirs in
     * search_sections, since the index's copy was the only one in the store. The index is made
     * again here from the messages and subjects; the articles' rows go, and the next reader's
     * sync or `dream reindex` writes them, as after migration 7. */
    "DROP TRIGGER IF EXISTS search_message_in;"
    "DROP TRIGGER IF EXISTS search_message_out;"
    "DROP TRIGGER IF EXISTS search_message_re;"
    "DROP TRIGGER IF EXISTS search_subject_in;"
    "DROP TRIGGER IF EXISTS search_subject_re;"
    "DROP TRIGGER IF EXISTS search_subject_out;"
    "DROP TABLE IF EXISTS search;"
    "DELETE FROM search_sections;"
    "DELETE FROM search_articles;"
    "ALTER TABLE search_sections ADD COLUMN title TEXT NOT NULL DEFAULT '';" /* the article's */
    "ALTER TABLE search_sections ADD COLUMN heading TEXT NOT NULL DEFAULT '';" /* '' for the lead */
    "ALTER TABLE search_sections ADD COLUMN text TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE search_sections ADD COLUMN date_ms INTEGER;" /* date as Unix ms, for --since and --until */
    /* a search row id to its row: FTS5 looks a row up by it for its snippet */
    "CREATE INDEX messages_search_id ON messages((1 << 50) + conversation * 16777216 + position) WHERE position < 16777216;"
    "CREATE INDEX pipeline_entities_search_id ON pipeline_entities((1 << 48) + id) WHERE route IS NOT 'article';"
    "CREATE VIEW search_source (id, title, section, text) AS"
    "  SELECT id, title, heading, text FROM search_sections"
    "  UNION ALL SELECT (1 << 48) + id, name, '', '' FROM pipeline_entities WHERE route IS NOT 'article'"
    "  UNION ALL SELECT (1 << 50) + conversation * 16777216 + position, '', '', text FROM messages WHERE position < 16777216;"
    "CREATE TRIGGER search_message_in AFTER INSERT ON messages WHEN new.position < 16777216 BEGIN"
    "  INSERT INTO search (rowid, title, section, text) VALUES ((1 << 50) + new.conversation * 16777216 + new.position, '', '', new.text);"
    " END;"
    "CREATE TRIGGER search_message_out AFTER DELETE ON messages WHEN old.position < 16777216 BEGIN"
    "  INSERT INTO search (search, rowid, title, section, text)"
    "   VALUES ('delete', (1 << 50) + old.conversation * 16777216 + old.position, '', '', old.text);"
    " END;"
    "CREATE TRIGGER search_message_re AFTER UPDATE OF conversation, position, text ON messages BEGIN"
    "  INSERT INTO search (search, rowid, title, section, text)"
    "   SELECT 'delete', (1 << 50) + old.conversation * 16777216 + old.position, '', '', old.text WHERE old.position < 16777216;"
    "  INSERT INTO search (rowid, title, section, text)"
    "   SELECT (1 << 50) + new.conversation * 16777216 + new.position, '', '', new.text WHERE new.position < 16777216;"
    " END;"
    "CREATE TRIGGER search_subject_in AFTER INSERT ON pipeline_entities WHEN new.route IS NOT 'article' BEGIN"
    "  INSERT INTO search (rowid, title, section, text) VALUES ((1 << 48) + new.id, new.name, '', '');"
    " END;"
    "CREATE TRIGGER search_subject_re AFTER UPDATE OF id, name, route ON pipeline_entities BEGIN"
    "  INSERT INTO search (search, rowid, title, section, text) SELECT 'delete', (1 << 48) + old.id, old.name, '', ''"
    "   WHERE old.route IS NOT 'article';"
    "  INSERT INTO search (rowid, title, section, text) SELECT (1 << 48) + new.id, new.name, '', '' WHERE new.route IS NOT 'article';"
    " END;"
    "CREATE TRIGGER search_subject_out AFTER DELETE ON pipeline_entities WHEN old.route IS NOT 'article' BEGIN"
    "  INSERT INTO search (search, rowid, title, section, text) VALUES ('delete', (1 << 48) + old.id, old.name, '', '');"
    " END;"
    STORE_SEARCH_TABLE_V9_SQL
    STORE_SEARCH_FILL_SQL,
    /* 9 → 10: the messages a later export replaced (an edited message and what followed it, or
     * a tail the export dropped). A footnote may cite one, so the store keeps its text for the
     * citation and the transcript note; forgetting the conversation takes them with it. */
    "CREATE TABLE replaced_messages ("
    "  conversation INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,"
    "  source_id TEXT NOT NULL,"
    "  revision INTEGER NOT NULL,"     /* the conversation's last revision that held it */
    "  position INTEGER NOT NULL,"     /* its position then */
    "  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),"
    "  created_at INTEGER,"
    "  text TEXT NOT NULL,"
    "  replaced_at INTEGER NOT NULL"
    ");"
    "CREATE INDEX replaced_messages_by_id ON replaced_messages(conversation, source_id);",
    /* 10 → 11: the index made again with our tokenizer "dream" (store_tokenize.c): Chinese and
     * Japanese write no spaces between words, and unicode61 made a whole clause one token, so
     * no word of theirs could be found. The articles' rows are made again from search_sections. */
    "DROP TABLE search;"
    STORE_SEARCH_TABLE_SQL
    STORE_SEARCH_FILL_SQL,
    /* 11 → 12: each conversation's first message by its id in the export, for the messages a
     * resumed Claude Code session repeats from the start of the session it resumes
     * (store_messages_held_elsewhere); the first messages only, so ingest pays one entry per
     * conversation (an index of every message made a fresh ingest a third slower). */
    "CREATE INDEX messages_first_by_source_id ON messages(source_id) WHERE position = 0;",
    /* 12 → 13: what the link stage listed in each article's See also, so that an entry the
     * person took out stays out (it came back on every run). */
    "CREATE TABLE see_also_offered ("
    "  article TEXT NOT NULL,"         /* the article's stem */
    "  target TEXT NOT NULL,"          /* the stem it listed */
    "  PRIMARY KEY (article, target)"
    ") WITHOUT ROWID;",
};

const int store_migration_count = (int)(sizeof store_migrations / sizeof store_migrations[0]);

_Static_assert(sizeof store_migrations / sizeof store_migrations[0] == DREAM_STORE_SCHEMA_VERSION,
               "DREAM_STORE_SCHEMA_VERSION must equal the number of migrations");
