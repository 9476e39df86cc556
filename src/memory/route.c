/* route.c — the route stage: recurrence over the whole store decides article or capture (see
 * dream/entity.h; spec §6.4 with §12 items 18 and 19 fixed). */
#include "dream/entity.h"

#include "dream/error.h"
#include "store_internal.h"

#include <stdio.h>

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

int dream_route_run(dream_store *store, bool dry_run, struct dream_route_result *result)
{
    struct dream_route_result res = {0};
    int rc = route_count(store, "SELECT count(*) FROM pipeline_entities", &res.entities);
    if (!rc)
        rc = route_count(store,
                         "SELECT count(*) FROM pipeline_entities e WHERE route IS NOT 'article' AND " ROUTE_CHUNKS("e") " >= " ROUTE_RECURS,
                         &res.newly);
    if (rc) return rc;
    if (dry_run) {
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
        rc = store_exec(store, "UPDATE pipeline_entities SET route = 'article', article_title = upper(substr(name, 1, 1)) || substr(name, 2) "
                        "WHERE route IS NOT 'article' AND chunk_count >= " ROUTE_RECURS,
                        "routing recurring entities to articles");
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
