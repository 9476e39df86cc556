/* resolve.c — the resolve stage: mentions → canonical entities (see dream/entity.h; spec §6.3). */
#include "dream/entity.h"

#include "dream/error.h"
#include "entity_name.h"
#include "store_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct res_mention {
    int64_t chunk;
    char *normal, *surface;
};

static void res_mentions_free(struct res_mention *m, size_t n)
{
    for (size_t i = 0; m && i < n; i++) {
        free(m[i].normal);
        free(m[i].surface);
    }
    free(m);
}

/* The unresolved mentions, oldest chunk first. *out is malloc'd. */
static int res_pending(dream_store *store, struct res_mention **out, size_t *n)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT m.chunk, m.normal, m.surface FROM chunk_mentions m JOIN chunks ch ON ch.id = m.chunk "
                           "JOIN conversations c ON c.id = ch.conversation WHERE m.entity IS NULL "
                           "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id, ch.first_position, m.normal",
                           -1, &st, NULL))
        return store_sql_error(store, "listing mentions to resolve");
    size_t cap = 0;
    int step, rc = DREAM_OK;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            struct res_mention *grown = realloc(*out, cap * sizeof **out);
            if (!grown) {
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
                break;
            }
            *out = grown;
        }
        struct res_mention *m = &(*out)[*n];
        m->chunk = sqlite3_column_int64(st, 0);
        m->normal = strdup((const char *)sqlite3_column_text(st, 1));
        m->surface = strdup((const char *)sqlite3_column_text(st, 2));
        (*n)++;
        if (!m->normal || !m->surface) {
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing mentions to resolve");
    sqlite3_finalize(st);
    if (rc) {
        res_mentions_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

/* The entity whose normal form is normal, else whose squeezed form is squeezed: its id, or 0. */
static int res_lookup(dream_store *store, const char *normal, const char *squeezed, int64_t *id)
{
    sqlite3_stmt *st;
    *id = 0;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT id FROM pipeline_entities WHERE normal = ?1 OR squeezed = ?2 ORDER BY normal = ?1 DESC LIMIT 1", -1,
                           &st, NULL))
        return store_sql_error(store, "looking up an entity");
    sqlite3_bind_text(st, 1, normal, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, squeezed, -1, SQLITE_STATIC);
    int step = sqlite3_step(st), rc = DREAM_OK;
    if (step == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
    else if (step != SQLITE_DONE) rc = store_sql_error(store, "looking up an entity");
    sqlite3_finalize(st);
    return rc;
}

/* The squeezed key of a normal form; a name with nothing to squeeze keys on its normal form. */
static int res_squeeze(const char *normal, char **out)
{
    int rc = entity_name_squeeze(normal, out);
    if (rc || **out) return rc;
    free(*out);
    *out = strdup(normal);
    return *out ? DREAM_OK : dream_error_set(DREAM_ENOMEM, "out of memory");
}

#define RES_MAX_TOKENS 32
#define RES_TOKEN_BYTES 128

/* The content tokens of a normal form: runs of letters, digits and non-ASCII bytes, longer than
 * one byte, not a stopword; at most RES_MAX_TOKENS, each cut to RES_TOKEN_BYTES - 1 bytes. */
static size_t res_tokens(const char *normal, char tok[RES_MAX_TOKENS][RES_TOKEN_BYTES])
{
    static const char *const stop[] = {"the", "an", "of", "and", "or", "in", "on", "for", "to", "with",
                                       "my", "our", "your", "is", "at", "by", "from", "vs"};
    size_t n = 0;
    for (const char *p = normal; *p && n < RES_MAX_TOKENS;) {
        size_t len = 0;
        while (p[len] && ((unsigned char)p[len] >= 0x80 || isalnum((unsigned char)p[len]))) len++;
        if (len == 0) {
            p++;
            continue;
        }
        bool keep = len > 1;
        for (size_t i = 0; keep && i < sizeof stop / sizeof stop[0]; i++)
            if (strlen(stop[i]) == len && strncmp(p, stop[i], len) == 0) keep = false;
        if (keep) {
            size_t cut = len < RES_TOKEN_BYTES ? len : RES_TOKEN_BYTES - 1;
            memcpy(tok[n], p, cut);
            tok[n++][cut] = '\0';
        }
        p += len;
    }
    return n;
}

/* Layer 3: the one entity that every distinctive token of normal points to (a token owned by
 * exactly one entity), provided all of normal's tokens are that entity's; else *id = 0 (minting
 * beats fusing two things). */
static int res_by_tokens(dream_store *store, const char *normal, int64_t *id)
{
    char tok[RES_MAX_TOKENS][RES_TOKEN_BYTES];
    size_t n = res_tokens(normal, tok);
    int64_t target = 0;
    *id = 0;
    sqlite3_stmt *owners = NULL, *member = NULL;
    if (sqlite3_prepare_v2(store_db(store), "SELECT entity FROM pipeline_entity_tokens WHERE token = ? LIMIT 2", -1, &owners, NULL) ||
        sqlite3_prepare_v2(store_db(store), "SELECT 1 FROM pipeline_entity_tokens WHERE token = ? AND entity = ?", -1, &member, NULL)) {
        sqlite3_finalize(owners);
        return store_sql_error(store, "looking up an entity's tokens");
    }
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        sqlite3_reset(owners);
        sqlite3_bind_text(owners, 1, tok[i], -1, SQLITE_STATIC);
        int64_t owner = 0;
        int rows = 0, step;
        while ((step = sqlite3_step(owners)) == SQLITE_ROW) {
            owner = sqlite3_column_int64(owners, 0);
            rows++;
        }
        if (step != SQLITE_DONE) rc = store_sql_error(store, "looking up an entity's tokens");
        else if (rows == 1 && target && owner != target) target = -1; /* two entities claim it */
        else if (rows == 1 && target == 0) target = owner;
        if (target < 0) break;
    }
    for (size_t i = 0; !rc && target > 0 && i < n; i++) {
        sqlite3_reset(member);
        sqlite3_bind_text(member, 1, tok[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(member, 2, target);
        int step = sqlite3_step(member);
        if (step == SQLITE_DONE) target = 0; /* a token the entity does not have */
        else if (step != SQLITE_ROW) rc = store_sql_error(store, "looking up an entity's tokens");
    }
    sqlite3_finalize(owners);
    sqlite3_finalize(member);
    if (!rc && target > 0) *id = target;
    return rc;
}

/* Registers the tokens of a newly minted entity. */
static int res_add_tokens(dream_store *store, const char *normal, int64_t id)
{
    char tok[RES_MAX_TOKENS][RES_TOKEN_BYTES];
    size_t n = res_tokens(normal, tok);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "INSERT OR IGNORE INTO pipeline_entity_tokens (token, entity) VALUES (?, ?)", -1, &st, NULL))
        return store_sql_error(store, "registering an entity's tokens");
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, tok[i], -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, id);
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "registering an entity's tokens");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Resolves one mention inside the open transaction. */
static int res_one(dream_store *store, const struct res_mention *m, int64_t now, struct dream_resolve_result *res)
{
    sqlite3 *db = store_db(store);
    char *squeezed = NULL;
    int64_t id;
    int rc = res_squeeze(m->normal, &squeezed);
    if (!rc) rc = res_lookup(store, m->normal, squeezed, &id);
    if (!rc && id == 0) rc = res_by_tokens(store, m->normal, &id);
    sqlite3_stmt *st = NULL;
    if (!rc && id == 0) {
        if (sqlite3_prepare_v2(db, "INSERT INTO pipeline_entities (name, normal, squeezed, created_at) VALUES (?, ?, ?, ?)", -1, &st, NULL))
            rc = store_sql_error(store, "minting an entity");
        if (!rc) {
            sqlite3_bind_text(st, 1, m->surface, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, m->normal, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 3, squeezed, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 4, now);
            if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "minting an entity");
            id = sqlite3_last_insert_rowid(db);
            res->minted++;
        }
        sqlite3_finalize(st);
        if (!rc) rc = res_add_tokens(store, m->normal, id);
        st = NULL;
    } else if (!rc) {
        res->folded++;
    }
    free(squeezed);
    if (rc) return rc;
    if (sqlite3_prepare_v2(db, "UPDATE chunk_mentions SET entity = ? WHERE chunk = ? AND normal = ?", -1, &st, NULL))
        return store_sql_error(store, "resolving a mention");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, m->chunk);
    sqlite3_bind_text(st, 3, m->normal, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = store_sql_error(store, "resolving a mention");
    sqlite3_finalize(st);
    if (!rc) res->mentions++;
    return rc;
}

int dream_resolve_run(dream_store *store, bool dry_run, struct dream_resolve_result *result)
{
    struct dream_resolve_result res = {0};
    struct res_mention *m;
    size_t n;
    int rc = res_pending(store, &m, &n);
    if (rc) return rc;
    if (dry_run) {
        res.mentions = n;
    } else if (n) {
        int64_t now = store_now_ms();
        rc = store_exec(store, "BEGIN IMMEDIATE", "starting the resolve write");
        for (size_t i = 0; !rc && i < n; i++) rc = res_one(store, &m[i], now, &res);
        if (!rc) rc = store_exec(store, "COMMIT", "committing the resolve write");
        if (rc) {
            store_exec(store, "ROLLBACK", "rolling back the resolve write");
            memset(&res, 0, sizeof res);
        }
    }
    res_mentions_free(m, n);
    if (result) *result = res;
    return rc;
}

static char *res_col(sqlite3_stmt *st, int col, bool *oom)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    if (!t) return NULL;
    char *s = strdup((const char *)t);
    if (!s) *oom = true;
    return s;
}

int dream_entity_find(dream_store *store, const char *name, struct dream_entity **out)
{
    *out = NULL;
    char *normal = NULL, *squeezed = NULL;
    int rc = entity_name_normal(name, &normal);
    if (!rc) rc = res_squeeze(normal, &squeezed);
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(store),
                                  "SELECT id, name, normal, route, article_title, chunk_count FROM pipeline_entities "
                                  "WHERE normal = ?1 OR squeezed = ?2 ORDER BY normal = ?1 DESC LIMIT 1",
                                  -1, &st, NULL))
        rc = store_sql_error(store, "looking up an entity");
    if (!rc) {
        sqlite3_bind_text(st, 1, normal, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, squeezed, -1, SQLITE_STATIC);
        int step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            struct dream_entity *e = calloc(1, sizeof *e);
            bool oom = !e;
            if (e) {
                e->id = sqlite3_column_int64(st, 0);
                e->name = res_col(st, 1, &oom);
                e->normal = res_col(st, 2, &oom);
                e->route = res_col(st, 3, &oom);
                e->article_title = res_col(st, 4, &oom);
                e->chunk_count = sqlite3_column_int64(st, 5);
            }
            if (oom) {
                dream_entity_free(e);
                rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            } else {
                *out = e;
            }
        } else if (step == SQLITE_DONE) {
            rc = dream_error_set(DREAM_ENOTFOUND, "no entity named '%.80s' in the store %s", name, dream_store_path(store));
        } else {
            rc = store_sql_error(store, "looking up an entity");
        }
    }
    sqlite3_finalize(st);
    free(normal);
    free(squeezed);
    return rc;
}

void dream_entity_free(struct dream_entity *e)
{
    if (!e) return;
    free(e->name);
    free(e->normal);
    free(e->route);
    free(e->article_title);
    free(e);
}
