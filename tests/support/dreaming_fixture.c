/* dreaming_fixture.c — see dreaming_fixture.h. */
#include "dreaming_fixture.h"

#include "../src/util/buf.h"
#include "dream/entity.h"
#include "dream/error.h"
#include "dream/extract.h"
#include "dream/ingest.h"
#include "dream/model.h"
#include "dream/segment.h"
#include "dreaming_fake.h"
#include "store_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fixture_ingest(dream_store *store, const char *corpus_dir)
{
    struct dream_ingest_params p = dream_ingest_default_params();
    struct dream_ingest_stats stats = {0};
    return dream_ingest_path(store, corpus_dir, &p, &stats);
}

int fixture_put_edited(dream_store *store, const char *cite, size_t pos, const char *id, const char *text, enum dream_store_outcome *outcome)
{
    struct dream_store_conversation *got = NULL;
    int rc = dream_store_get_by_cite(store, cite, &got);
    if (rc) return rc;
    struct dream_message *m = pos < got->n_messages ? calloc(got->n_messages, sizeof *m) : NULL;
    if (m) {
        memcpy(m, got->messages, got->n_messages * sizeof *m);
        m[pos].id = id;
        m[pos].text = text;
        struct dream_conversation later = {.source = got->source, .id = got->id, .title = got->title, .created_ms = got->created_ms,
                                           .updated_ms = got->updated_ms + 60000, .origin = "later export", .messages = m,
                                           .n_messages = got->n_messages};
        rc = dream_store_put(store, &later, outcome);
    } else {
        rc = pos < got->n_messages ? DREAM_ENOMEM : DREAM_EINVAL;
    }
    free(m);
    dream_store_conversation_free(got);
    return rc;
}

int fixture_run_pipeline(dream_store *store, const char *wiki_dir, int min_user_messages, dream_progress_fn on_progress, void *ud)
{
    struct dream_backend fake = {.name = "dreaming-fixture-fake", .call = dreaming_fake_call};
    int rc = dream_seam_set_backend(&fake);
    struct dream_segment_params sp;
    dream_segment_default_params(&sp);
    sp.batch = 3;
    sp.on_progress = on_progress;
    sp.progress_ud = ud;
    if (!rc) rc = dream_segment_run(store, &sp, NULL);
    struct dream_extract_params ep;
    dream_extract_default_params(&ep);
    ep.batch = 4;
    ep.on_progress = on_progress;
    ep.progress_ud = ud;
    if (!rc) rc = dream_extract_run(store, &ep, NULL);
    struct dream_resolve_params rp;
    dream_resolve_default_params(&rp);
    rp.wiki_dir = wiki_dir;
    rp.tie_break = false;
    rp.on_progress = on_progress;
    rp.progress_ud = ud;
    if (!rc) rc = dream_resolve_run(store, &rp, NULL);
    struct dream_route_params op;
    dream_route_default_params(&op);
    op.min_user_messages = min_user_messages;
    if (!rc) rc = dream_route_run(store, &op, NULL);
    if (!rc && on_progress) on_progress(ud, "route", 1, 1);
    dream_seam_set_backend(NULL);
    return rc;
}

/* Appends every row of sql, columns joined by " | " after the row's first column (which is
 * followed by a space), one row per line. */
static int fixture_rows(dream_store *store, struct dbuf *b, const char *sql, const char *sep)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL) != SQLITE_OK) return dream_error_set(DREAM_EIO, "%s", sqlite3_errmsg(store_db(store)));
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            const unsigned char *t = sqlite3_column_text(st, c);
            dbuf_printf(b, "%s%s", c == 0 ? "" : c == 1 ? " " : sep, t ? (const char *)t : "NULL");
        }
        dbuf_putc(b, '\n');
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? 0 : dream_error_set(DREAM_EIO, "%s", sqlite3_errmsg(store_db(store)));
}

char *fixture_describe(dream_store *store)
{
    struct dbuf b = {0};
    int rc = fixture_rows(store, &b,
                          "SELECT 'chunk', c.title, ch.first_position || '-' || ch.last_position, ch.label, "
                          "coalesce((SELECT group_concat(name, ', ') FROM (SELECT DISTINCT e.name FROM chunk_mentions m "
                          "JOIN pipeline_entities e ON e.id = m.entity WHERE m.chunk = ch.id ORDER BY e.name)), '-') "
                          "FROM chunks ch JOIN conversations c ON c.id = ch.conversation "
                          "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id, ch.first_position",
                          " | ");
    if (!rc)
        rc = fixture_rows(store, &b,
                          "SELECT 'entity', e.name, coalesce(e.route, 'unrouted'), e.chunk_count || ' chunk(s)', "
                          "(SELECT group_concat(surface, ', ') FROM (SELECT DISTINCT m.surface FROM chunk_mentions m "
                          "WHERE m.entity = e.id ORDER BY m.surface)) FROM pipeline_entities e ORDER BY e.name",
                          " | ");
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

char *fixture_dump_tables(dream_store *store)
{
    static const char *const q[] = {
        "SELECT 'conversation', id, source, source_id, cite, title, revision, coalesce(reprocess_from, '-'), message_count "
        "FROM conversations ORDER BY id",
        "SELECT 'chunk', id, conversation, first_position, last_position, label, revision FROM chunks ORDER BY id",
        "SELECT 'state', stage, item, revision, status, attempts, coalesce(last_error, '-') FROM stage_state ORDER BY stage, item",
        "SELECT 'entity', id, name, normal, squeezed, coalesce(route, '-'), coalesce(article_title, '-'), chunk_count "
        "FROM pipeline_entities ORDER BY id",
        "SELECT 'mention', chunk, normal, surface, coalesce(entity, '-') FROM chunk_mentions ORDER BY chunk, normal",
        "SELECT 'token', token, entity FROM pipeline_entity_tokens ORDER BY token, entity",
    };
    struct dbuf b = {0};
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof q / sizeof q[0]; i++) rc = fixture_rows(store, &b, q[i], "|");
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}

char *fixture_expected(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    struct dbuf b = {0};
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        size_t word = strcspn(line, " ");
        if (prefix) {
            bool hit = false;
            for (const char *p = prefix; *p;) {
                size_t n = strcspn(p, " ");
                if (n == word && strncmp(p, line, n) == 0) hit = true;
                p += n + (p[n] == ' ');
            }
            if (!hit) continue;
        }
        dbuf_printf(&b, "%s\n", line);
    }
    fclose(f);
    char *out = dbuf_take(&b);
    return out ? out : strdup("");
}
