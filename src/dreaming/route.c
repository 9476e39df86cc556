/* route.c — the route stage: recurrence over the whole store decides article or capture (see
 * dream/entity.h; spec §6.4 with §12 items 18 and 19 fixed). */
#include "dream/entity.h"

#include "dream/error.h"
#include "dream/log.h"
#include "store_internal.h"
#include "util/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs a one-row, one-column count query. */
static int route_count(dream_store *store, const char *sql, size_t *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL)) return store_sql_error(store, "counting entities");
    int rc = DREAM_OK;
    if (sqlite3_step(st) == SQLITE_ROW) *out = (size_t)sqlite3_column_int64(st, 0);
    else rc = store_sql_error(store, "counting entities");
    sqlite3_finalize(st);
    return rc;
}

#define ROUTE_RECURS_STR_(n) #n
#define ROUTE_RECURS_STR(n) ROUTE_RECURS_STR_(n)
#define ROUTE_RECURS ROUTE_RECURS_STR(DREAM_ROUTE_RECURRENCE)
/* Distinct chunks that mention entity e, over the whole store. */
#define ROUTE_CHUNKS(e) "(SELECT count(DISTINCT m.chunk) FROM chunk_mentions m WHERE m.entity = " e ".id)"

/* The person's own messages (distinct) in the chunks that mention entity e. */
#define ROUTE_USER_MESSAGES(e)                                                                                           \
    "(SELECT count(*) FROM (SELECT DISTINCT msg.conversation, msg.position FROM chunk_mentions m JOIN chunks ch ON ch.id = m.chunk " \
    "JOIN messages msg ON msg.conversation = ch.conversation AND msg.position BETWEEN ch.first_position AND ch.last_position "   \
    "WHERE m.entity = " e ".id AND msg.role = 'user'))"
/* Whether entity e earns an article now: recurrence, or (gate ?1 > 0) engagement. */
#define ROUTE_EARNS(e) "(" ROUTE_CHUNKS(e) " >= " ROUTE_RECURS " OR (?1 > 0 AND " ROUTE_USER_MESSAGES(e) " >= ?1))"

void dream_route_default_params(struct dream_route_params *p)
{
    memset(p, 0, sizeof *p);
    const char *env = getenv("DREAM_ROUTE_ENGAGEMENT");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v > 0 && v < 1000000) p->min_user_messages = (int)v;
        else dream_log(DREAM_LOG_WARN, "DREAM_ROUTE_ENGAGEMENT='%.*s' is not a positive number of messages; the engagement gate stays off", utf8_cut(env, 40), env);
    }
}

/* Runs sql with ?1 bound to gate; counts into *out when out is not NULL. */
static int route_exec(dream_store *store, const char *sql, int gate, size_t *out, const char *what)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), sql, -1, &st, NULL)) return store_sql_error(store, what);
    sqlite3_bind_int(st, 1, gate);
    int step = sqlite3_step(st), rc = DREAM_OK;
    if (out && step == SQLITE_ROW) *out = (size_t)sqlite3_column_int64(st, 0);
    else if (step != SQLITE_DONE) rc = store_sql_error(store, what);
    sqlite3_finalize(st);
    return rc;
}

int dream_route_run(dream_store *store, const struct dream_route_params *params, struct dream_route_result *result)
{
    struct dream_route_params p;
    if (params) p = *params;
    else dream_route_default_params(&p);
    int gate = p.min_user_messages > 0 ? p.min_user_messages : 0;
    struct dream_route_result res = {0};
    int rc = route_count(store, "SELECT count(*) FROM pipeline_entities", &res.entities);
    if (!rc)
        rc = route_exec(store, "SELECT count(*) FROM pipeline_entities e WHERE route IS NOT 'article' AND " ROUTE_EARNS("e"), gate,
                        &res.newly, "counting entities");
    if (!rc && gate)
        rc = route_exec(store,
                        "SELECT count(*) FROM pipeline_entities e WHERE route IS NOT 'article' AND " ROUTE_CHUNKS("e") " < " ROUTE_RECURS
                        " AND " ROUTE_USER_MESSAGES("e") " >= ?1",
                        gate, &res.engaged, "counting entities");
    if (rc) return rc;
    if (p.dry_run) {
        size_t already = 0;
        rc = route_count(store, "SELECT count(*) FROM pipeline_entities WHERE route IS 'article'", &already);
        res.articles = already + res.newly;
        res.captured = res.entities - res.articles;
        if (result) *result = res;
        return rc;
    }
    rc = store_exec(store, "BEGIN IMMEDIATE", "starting the route write");
    if (rc) return rc;
    if (!rc)
        rc = store_exec(store, "UPDATE pipeline_entities SET chunk_count = " ROUTE_CHUNKS("pipeline_entities")
                        " WHERE chunk_count IS NOT " ROUTE_CHUNKS("pipeline_entities"),
                        "counting each entity's chunks");
    /* Once an article, always an article: the article may already exist in the vault. */
    if (!rc)
        rc = route_exec(store, "UPDATE pipeline_entities SET route = 'article', article_title = upper(substr(name, 1, 1)) || substr(name, 2) "
                        "WHERE route IS NOT 'article' AND " ROUTE_EARNS("pipeline_entities"),
                        gate, NULL, "routing recurring entities to articles");
    if (!rc)
        rc = store_exec(store, "UPDATE pipeline_entities SET route = 'captured' WHERE route IS NULL", "capturing one-off entities");
    if (!rc) rc = store_exec(store, "COMMIT", "committing the route write");
    if (rc) {
        store_exec(store, "ROLLBACK", "rolling back the route write");
        return rc;
    }
    rc = route_count(store, "SELECT count(*) FROM pipeline_entities WHERE route = 'article'", &res.articles);
    if (!rc) rc = route_count(store, "SELECT count(*) FROM pipeline_entities WHERE route = 'captured'", &res.captured);
    if (result) *result = res;
    return rc;
}
