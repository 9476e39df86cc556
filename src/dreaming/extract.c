/* extract.c — the extract stage (see dream/extract.h; spec §6.2 and the fixes of §12).
 *
 * Flow per run: list the eligible chunks once (so a chunk is tried at most once per run), then
 * per batch: render one entity prompt per chunk from its messages, one dream_call_local_batch,
 * and per chunk, in order, parse → clean → store in one transaction. */
#include "dream/extract.h"

#include "../util/buf.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/model.h"
#include "dream/vault.h"
#include "entity_name.h"
#include "stage_state.h"
#include "store_internal.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define EXTRACT_STAGE "extract"

static const char extract_question[] =
    "What things is this chunk about? Give canonical wiki-title names, one per line: the specific\n"
    "things it discusses and the broad domain they belong to. Names only, no explanations.\n"
    "If nothing in it is nameable, answer NONE.\n";

void dream_extract_default_params(struct dream_extract_params *p)
{
    memset(p, 0, sizeof *p);
    p->batch = 8;
    p->max_attempts = 3;
    p->max_tokens = 256;
    p->text_cap = 4000;
    p->chunk_cap = 16000; /* as the segment stage's window: ~4k tokens, room left for the answer */
}

int dream_entity_normal_form(const char *name, char **out)
{
    return entity_name_normal(name, out);
}

/* One chunk as the stage sees it. */
struct ext_chunk {
    int64_t id, revision, conversation, first, last;
    char *prompt;
    size_t chunk_at, chunk_end; /* where the chunk's messages start and end in prompt */
    char *grammar;   /* the names-from-text grammar of this chunk, or NULL */
    char *person;    /* the person's own messages of the chunk, when names are copied; else NULL */
};

/* The eligible chunks, oldest conversation first, then in message order: never extracted,
 * extracted at an older revision, or pending a retry. *out is malloc'd. */
static int ext_eligible(dream_store *store, const struct dream_extract_params *p, struct ext_chunk **out, size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT ch.id, ch.revision, ch.conversation, ch.first_position, ch.last_position FROM chunks ch "
                           "JOIN conversations c ON c.id = ch.conversation "
                           "LEFT JOIN stage_state s ON s.stage = '" EXTRACT_STAGE "' AND s.item = ch.id "
                           "WHERE (s.item IS NULL OR s.revision < ch.revision OR s.status = 'pending') AND (?1 = 0 OR c.id = ?1) "
                           "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id, ch.first_position, ch.last_position "
                           "LIMIT ?2",
                           -1, &st, NULL))
        return store_sql_error(store, "listing chunks to extract");
    sqlite3_bind_int64(st, 1, p->conversation);
    sqlite3_bind_int64(st, 2, p->limit ? (int64_t)p->limit : -1);
    size_t cap = 0;
    int step, rc = DREAM_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            struct ext_chunk *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = grown;
        }
        (*out)[(*n)++] = (struct ext_chunk){.id = sqlite3_column_int64(st, 0), .revision = sqlite3_column_int64(st, 1),
                                            .conversation = sqlite3_column_int64(st, 2), .first = sqlite3_column_int64(st, 3),
                                            .last = sqlite3_column_int64(st, 4)};
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing chunks to extract");
    sqlite3_finalize(st);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* Renders the user turn for chunk c: the Entities policy page, the chunk's messages, the
 * question. c->prompt is malloc'd; with want_person, c->person too (the person's own messages). */
static int ext_render(dream_store *store, const struct dream_extract_params *p, struct ext_chunk *c, bool want_person)
{
    struct dbuf b = {0}, pb = {0};
    struct dbuf *person = want_person ? &pb : NULL;
    char *page = NULL;
    int rc = DREAM_OK;
    if (p->wiki_dir) rc = dream_vault_meta_page(p->wiki_dir, "Entities", &page);
    const char *policy = p->wiki_dir ? page : dream_vault_seed_meta("Entities");
    if (!rc && policy && *policy)
        rc = dbuf_printf(&b, "--- Meta/Entities.md ---\n%s%s--- end of policy ---\n\n", policy, policy[strlen(policy) - 1] != '\n' ? "\n" : "");
    free(page);
    if (!rc) rc = dbuf_puts(&b, "--- Conversation chunk ---\n");
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(store),
                                  "SELECT role, text FROM messages WHERE conversation = ? AND position BETWEEN ? AND ? ORDER BY position",
                                  -1, &st, NULL))
        rc = store_sql_error(store, "reading a chunk's messages");
    if (!rc) {
        sqlite3_bind_int64(st, 1, c->conversation);
        sqlite3_bind_int64(st, 2, c->first);
        sqlite3_bind_int64(st, 3, c->last);
        int step;
        size_t start = b.len;
        c->chunk_at = start;
        while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
            if (p->chunk_cap && b.len - start >= p->chunk_cap) {
                /* The subjects show in the chunk's first messages; the rest would not fit. */
                rc = dbuf_puts(&b, "[... the rest of this chunk is not shown]\n");
                step = SQLITE_DONE;
                break;
            }
            const char *text = (const char *)sqlite3_column_text(st, 1);
            size_t len = text ? strlen(text) : 0;
            if (person && text && strcmp((const char *)sqlite3_column_text(st, 0), "user") == 0)
                rc = dbuf_printf(person, "%s\n", text);
            if (!rc) rc = dbuf_printf(&b, "[%s]\n", (const char *)sqlite3_column_text(st, 0));
            if (!rc && p->text_cap && len > p->text_cap) {
                size_t shown = utf8_prefix(text, len, p->text_cap);
                rc = dbuf_append(&b, text, shown);
                if (!rc) rc = dbuf_printf(&b, "\n[... %zu more bytes not shown]\n", len - shown);
            } else if (!rc) {
                rc = dbuf_printf(&b, "%s\n", text ? text : "");
            }
        }
        if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading a chunk's messages");
    }
    sqlite3_finalize(st);
    c->chunk_end = b.len;
    if (!rc) rc = dbuf_printf(&b, "--- end chunk ---\n\n%s", extract_question);
    if (!rc && person && !(c->person = pb.len ? dbuf_take(&pb) : strdup(""))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
    dbuf_free(&pb);
    if (rc) {
        dbuf_free(&b);
        return rc;
    }
    c->prompt = dbuf_take(&b);
    return c->prompt ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

/* Whether text holds name (ASCII case folded) as a whole run of words. */
static bool ext_said(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; n && *p; p++) {
        if (p != text && (isalnum((unsigned char)p[-1]) || (unsigned char)p[-1] >= 0x80)) continue;
        if (strncasecmp(p, name, n) == 0 && !isalnum((unsigned char)p[n]) && (unsigned char)p[n] < 0x80) return true;
    }
    return false;
}

/* Stores the names in answer for chunk c, replacing any from an older revision, and marks the
 * chunk done, in one transaction. *stored counts the distinct names kept. When names are copied
 * from the chunk (c->person set), a name the person's own messages do not hold is left out and
 * counted in *unnamed: the grammar lets the model copy from the assistant's advice too
 * ("Everything", "Revisit your approach"), and a subject of the person's memory is one they
 * name. */
static int ext_store(dream_store *store, const struct ext_chunk *c, const char *answer, size_t *stored, size_t *unnamed)
{
    sqlite3 *db = store_db(store);
    sqlite3_stmt *st = NULL;
    *stored = 0;
    int rc = store_exec(store, "BEGIN IMMEDIATE", "starting the mention write");
    if (rc) return rc;
    if (sqlite3_prepare_v2(db, "DELETE FROM chunk_mentions WHERE chunk = ?", -1, &st, NULL)) goto sql_fail;
    sqlite3_bind_int64(st, 1, c->id);
    if (sqlite3_step(st) != SQLITE_DONE) goto sql_fail;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO chunk_mentions (chunk, normal, surface) VALUES (?, ?, ?)", -1, &st, NULL))
        goto sql_fail;
    for (const char *line = answer; !rc && *line;) {
        size_t len = strcspn(line, "\n");
        char *name = NULL, *normal = NULL;
        int kind = entity_name_clean(line, len, &name);
        if (kind < 0) rc = kind;
        else if (kind == ENTITY_LINE_NAME && (rc = entity_name_normal(name, &normal)) == DREAM_EINVAL)
            rc = DREAM_OK; /* not UTF-8: not a name */
        if (!rc && normal && *normal && c->person && !ext_said(c->person, name)) {
            ++*unnamed;
        } else if (!rc && normal && *normal) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, c->id);
            sqlite3_bind_text(st, 2, normal, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "writing mentions");
            else *stored += (size_t)sqlite3_changes(db);
        }
        free(name);
        free(normal);
        line += len + (line[len] == '\n');
    }
    sqlite3_finalize(st);
    st = NULL;
    if (!rc) rc = stage_state_done(store, EXTRACT_STAGE, c->id, c->revision, store_now_ms());
    if (!rc) rc = store_exec(store, "COMMIT", "committing the mention write");
    if (rc) store_exec(store, "ROLLBACK", "rolling back the mention write");
    if (rc) *stored = 0;
    return rc;
sql_fail:
    rc = store_sql_error(store, "writing mentions");
    sqlite3_finalize(st);
    store_exec(store, "ROLLBACK", "rolling back the mention write");
    return rc;
}

static int ext_fail(dream_store *store, const struct ext_chunk *c, const char *error, const struct dream_extract_params *p,
                    struct dream_extract_result *res)
{
    return stage_state_fail_counted(store, EXTRACT_STAGE, c->id, c->revision, error, p->max_attempts, false, &res->failed, &res->gave_up);
}

static int ext_batch(dream_store *store, struct ext_chunk *chunks, size_t n, const struct dream_extract_params *p,
                     struct dream_extract_result *res)
{
    struct dream_local_input *in = calloc(n, sizeof *in);
    char **out = calloc(n, sizeof *out);
    int rc = DREAM_OK;
    if (!in || !out) {
        rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        goto done;
    }
    bool copy = dream_seam_names_from_text();
    for (size_t i = 0; i < n && !rc; i++) {
        rc = ext_render(store, p, &chunks[i], copy);
        if (!rc && copy) {
            chunks[i].grammar = dream_grammar_names_from(chunks[i].prompt + chunks[i].chunk_at,
                                                         chunks[i].chunk_end - chunks[i].chunk_at);
            if (!chunks[i].grammar) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        in[i] = (struct dream_local_input){.system = NULL, .user = chunks[i].prompt, .grammar = chunks[i].grammar};
    }
    if (rc) goto done;
    struct dream_call_opts opts = dream_call_default_opts();
    opts.max_tokens = p->max_tokens;
    opts.grammar = dream_grammar_names;
    int call_rc = dream_call_local_batch("entity", in, n, &opts, out);
    size_t answered = 0;
    for (size_t i = 0; i < n; i++) answered += out[i] != NULL;
    if (call_rc && answered == 0 && call_rc != DREAM_ETOOBIG) {
        rc = dream_error_wrap(call_rc, "extracting: the entity stage gave no answer");
        goto done;
    }
    char why[600];
    for (size_t i = 0; i < n && !rc; i++) {
        const struct ext_chunk *c = &chunks[i];
        if (!out[i]) {
            snprintf(why, sizeof why, "the model call failed: %s", call_rc ? dream_error_last() : "no answer");
            rc = ext_fail(store, c, utf8_trim(why), p, res);
        } else if (strspn(out[i], " \t\r\n") == strlen(out[i])) {
            rc = ext_fail(store, c, "the entity stage answered nothing (expected names one per line, or NONE)", p, res);
        } else {
            size_t stored = 0;
            rc = ext_store(store, c, out[i], &stored, &res->unnamed);
            if (!rc) {
                res->mentions += stored;
                if (stored) res->extracted++;
                else res->empty++;
            }
        }
    }
done:
    if (out)
        for (size_t i = 0; i < n; i++) free(out[i]);
    for (size_t i = 0; i < n; i++) {
        free(chunks[i].prompt);
        free(chunks[i].grammar);
        free(chunks[i].person);
        chunks[i].prompt = NULL;
        chunks[i].grammar = NULL;
        chunks[i].person = NULL;
    }
    free(in);
    free(out);
    return rc;
}

int dream_extract_run(dream_store *store, const struct dream_extract_params *params, struct dream_extract_result *result)
{
    struct dream_extract_params p;
    if (params) p = *params;
    else dream_extract_default_params(&p);
    if (p.batch == 0) p.batch = 1;
    if (p.max_attempts < 1) p.max_attempts = 1;
    if (p.max_tokens < 1) p.max_tokens = 256;
    struct dream_extract_result res = {0};
    struct ext_chunk *chunks;
    size_t n;
    int rc = ext_eligible(store, &p, &chunks, &n);
    if (rc) return rc;
    res.eligible = n;
    if (!p.dry_run) dream_progress_begin(p.on_progress, p.progress_ud, "extract", n);
    for (size_t i = 0; !p.dry_run && !rc && i < n; i += p.batch) {
        size_t k = n - i < p.batch ? n - i : p.batch;
        rc = ext_batch(store, chunks + i, k, &p, &res);
        if (!rc && p.on_progress) p.on_progress(p.progress_ud, "extract", i + k, n);
    }
    free(chunks);
    if (result) *result = res;
    return rc;
}
