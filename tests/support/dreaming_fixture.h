/* dreaming_fixture.h — the Dreaming fixture corpus (tests/data/dreaming) as the tests use it:
 * ingest it, run segment → extract → resolve → route with the scripted fake, and describe the
 * resulting store as text. No cmocka here: these also run in forked children. */
#ifndef DREAM_TESTS_DREAMING_FIXTURE_H
#define DREAM_TESTS_DREAMING_FIXTURE_H

#include "dream/progress.h"
#include "dream/store.h"

/* Ingests every file under corpus_dir into store. Returns 0 or a dream_status. */
int fixture_ingest(dream_store *store, const char *corpus_dir);

/* Stores a later export of the conversation cited cite: the same, but for message pos, edited
 * to text under the new id (as ChatGPT gives an edit), a minute newer. Returns 0 or a
 * dream_status; *outcome is what the store made of it. */
int fixture_put_edited(dream_store *store, const char *cite, size_t pos, const char *id, const char *text, enum dream_store_outcome *outcome);

/* Runs the four stages with the fixture fake installed (segment batch 3, extract batch 4,
 * resolve with the alias seeds of wiki_dir, route with the gate of min_user_messages; 0 = off).
 * on_progress (may be NULL) is passed to every stage. Returns 0 or the first stage's error. */
int fixture_run_pipeline(dream_store *store, const char *wiki_dir, int min_user_messages, dream_progress_fn on_progress, void *ud);

/* The store in the format of EXPECTED.txt: "chunk" lines (chronological: title | first-last |
 * label | entities), then "entity" lines (by name: name | route | chunks | surfaces). malloc'd. */
char *fixture_describe(dream_store *store);

/* Every row of every pipeline table (conversations' processing columns, chunks, stage_state,
 * pipeline_entities, chunk_mentions, pipeline_entity_tokens), ids included, timestamps left
 * out, in a fixed order. malloc'd; NULL when the store cannot be read. */
char *fixture_dump_tables(dream_store *store);

/* The lines of file path that are neither blank nor comments (#), each ending in '\n', and
 * whose first word is prefix when prefix is not NULL. malloc'd; NULL when unreadable. */
char *fixture_expected(const char *path, const char *prefix);

#endif
