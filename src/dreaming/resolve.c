/* resolve.c — the resolve stage: mentions → canonical entities (see dream/entity.h; spec §6.3). */
#include "dream/entity.h"

#include "../util/buf.h"
#include "dream/error.h"
#include "dream/grammar.h"
#include "dream/log.h"
#include "dream/model.h"
#include "dream/vault.h"
#include "alias_seeds.h"
#include "entity_name.h"
#include "store_internal.h"
#include "util/utf8.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RESOLVE_STAGE "resolve" /* the seam stage of the optional tie-break question */

int resolve_spread(dream_store *store, size_t *added); /* spread.c */

void dream_resolve_default_params(struct dream_resolve_params *p)
{
    memset(p, 0, sizeof *p);
    p->max_candidates = 5;
    const char *env = getenv("DREAM_RESOLVE_TIE_BREAK");
    if (!env || !*env || !strcmp(env, "0") || !strcasecmp(env, "false") || !strcasecmp(env, "no") || !strcasecmp(env, "off")) return;
    p->tie_break = !strcmp(env, "1") || !strcasecmp(env, "true") || !strcasecmp(env, "yes") || !strcasecmp(env, "on");
    if (!p->tie_break) dream_log(DREAM_LOG_WARN, "DREAM_RESOLVE_TIE_BREAK='%.*s' is none of 1/true/yes/on or 0/false/no/off; the tie-break stays off", 40, env);
}

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
                           "ORDER BY coalesce(c.updated_at, c.created_at, c.ingested_at), c.id, ch.first_position, ch.last_position, ch.id, m.normal",
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

/* ---- alias seeds (Meta/Aliases) ---- */

/* Reads the alias seeds of the vault at wiki (none when wiki is NULL or the page is missing). */
static int res_seeds_load(const char *wiki, struct alias_seeds *s)
{
    memset(s, 0, sizeof *s);
    if (!wiki) return DREAM_OK;
    char *page = NULL;
    int rc = dream_vault_meta_page(wiki, "Aliases", &page);
    if (rc) return rc;
    char where[4200];
    snprintf(where, sizeof where, "%s/Meta/Aliases.md", wiki);
    rc = alias_seeds_parse(page, strlen(page), where, s);
    free(page);
    return rc;
}

/* ---- the optional tie-break ---- */

/* The entities that the distinctive tokens of normal point to (each a token owned by exactly one
 * entity), distinct, in token order; at most max. */
static int res_distinctive_owners(dream_store *store, const char *normal, int64_t *out, size_t max, size_t *n)
{
    char tok[RES_MAX_TOKENS][RES_TOKEN_BYTES];
    size_t nt = res_tokens(normal, tok);
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "SELECT entity FROM pipeline_entity_tokens WHERE token = ? LIMIT 2", -1, &st, NULL))
        return store_sql_error(store, "looking up an entity's tokens");
    int rc = DREAM_OK;
    for (size_t i = 0; !rc && i < nt && *n < max; i++) {
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, tok[i], -1, SQLITE_STATIC);
        int64_t owner = 0;
        int rows = 0, step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            owner = sqlite3_column_int64(st, 0);
            rows++;
        }
        if (step != SQLITE_DONE) rc = store_sql_error(store, "looking up an entity's tokens");
        if (rc || rows != 1) continue;
        bool seen = false;
        for (size_t k = 0; k < *n; k++) seen |= out[k] == owner;
        if (!seen) out[(*n)++] = owner;
    }
    sqlite3_finalize(st);
    return rc;
}

static const char res_tie_system[] = "You decide whether two names from a person's notes mean the same thing. Reply with one word: yes or no.";

/* Renders the question whether surface names entity id (its name and up to four other names it
 * was given). *out is malloc'd. */
static int res_tie_prompt(dream_store *store, const char *surface, int64_t id, char **out)
{
    sqlite3_stmt *st;
    *out = NULL;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT e.name, (SELECT group_concat(surface, '; ') FROM (SELECT DISTINCT m.surface FROM chunk_mentions m "
                           "WHERE m.entity = e.id AND m.surface <> e.name ORDER BY m.surface LIMIT 4)) FROM pipeline_entities e WHERE e.id = ?",
                           -1, &st, NULL))
        return store_sql_error(store, "reading a candidate entity");
    sqlite3_bind_int64(st, 1, id);
    int rc = DREAM_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        struct dbuf b = {0};
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *also = (const char *)sqlite3_column_text(st, 1);
        rc = dbuf_printf(&b, "Name A: \"%s\"\nName B: \"%s\"%s%s%s\n\nDo A and B name the same thing? Answer yes or no.\n", surface, name,
                         also ? " (also written: " : "", also ? also : "", also ? ")" : "");
        if (!rc && !(*out = dbuf_take(&b))) rc = dream_error_set(DREAM_ENOMEM, "out of memory");
        if (rc) dbuf_free(&b);
    } else {
        rc = store_sql_error(store, "reading a candidate entity");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Whether an answer says yes: its first word, casefolded, is "yes". */
static bool res_says_yes(const char *answer)
{
    while (*answer && !isalpha((unsigned char)*answer)) answer++;
    return strncasecmp(answer, "yes", 3) == 0 && !isalpha((unsigned char)answer[3]);
}

/* When the distinctive tokens of m point at two or more entities, asks the model about each; *id
 * is the one candidate it said yes to, else 0. */
static int res_tie_break(dream_store *store, const struct dream_resolve_params *p, const struct res_mention *m, int64_t *id,
                         struct dream_resolve_result *res)
{
    int64_t cand[16];
    size_t n = 0, max = p->max_candidates < 16 ? p->max_candidates : 16;
    *id = 0;
    int rc = res_distinctive_owners(store, m->normal, cand, max, &n);
    if (rc || n < 2) return rc;
    struct dream_local_input in[16];
    char *prompt[16] = {0}, *out[16] = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        rc = res_tie_prompt(store, m->surface, cand[i], &prompt[i]);
        in[i] = (struct dream_local_input){.system = res_tie_system, .user = prompt[i]};
    }
    if (!rc) {
        struct dream_call_opts opts = dream_call_default_opts();
        opts.max_tokens = 8;
        opts.grammar = dream_grammar_yes_no;
        int call_rc = dream_call_local_batch(RESOLVE_STAGE, in, n, &opts, out);
        res->asked += n;
        if (call_rc) rc = dream_error_wrap(call_rc, "resolving '%.*s': the tie-break question got no answer", utf8_cut(m->surface, 80), m->surface);
    }
    size_t yes = 0;
    int64_t pick = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (res_says_yes(out[i])) yes++, pick = cand[i];
    if (!rc && yes == 1) *id = pick;
    for (size_t i = 0; i < n; i++) {
        free(prompt[i]);
        free(out[i]);
    }
    return rc;
}

/* ---- the stage ---- */

/* Mints an entity named name (normal and squeezed forms given) and registers its tokens. */
static int res_mint(dream_store *store, const char *name, const char *normal, const char *squeezed, int64_t now, int64_t *id)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store), "INSERT INTO pipeline_entities (name, normal, squeezed, created_at) VALUES (?, ?, ?, ?)", -1, &st,
                           NULL))
        return store_sql_error(store, "minting an entity");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, normal, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, squeezed, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    int rc = sqlite3_step(st) == SQLITE_DONE ? DREAM_OK : store_sql_error(store, "minting an entity");
    sqlite3_finalize(st);
    if (!rc) *id = sqlite3_last_insert_rowid(store_db(store));
    if (!rc) rc = res_add_tokens(store, normal, *id);
    return rc;
}

/* The entity of seed key k: the one with the canonical's normal or squeezed form, minted under
 * the seed's spelling when there is none yet. */
static int res_seed_entity(dream_store *store, const struct alias_seeds *seeds, const struct alias_seed_key *k, int64_t now, int64_t *id,
                           bool *minted)
{
    const char *name = seeds->canonical[k->canonical];
    char *normal = NULL, *squeezed = NULL;
    *minted = false;
    int rc = entity_name_normal(name, &normal);
    if (!rc) rc = entity_name_key(normal, &squeezed);
    if (!rc) rc = res_lookup(store, normal, squeezed, id);
    if (!rc && *id == 0) {
        rc = res_mint(store, name, normal, squeezed, now, id);
        *minted = !rc;
    }
    free(normal);
    free(squeezed);
    return rc;
}

/* Resolves one mention inside the open transaction. */
static int res_one(dream_store *store, const struct dream_resolve_params *p, const struct alias_seeds *seeds, const struct res_mention *m,
                   int64_t now, struct dream_resolve_result *res)
{
    sqlite3 *db = store_db(store);
    char *squeezed = NULL;
    int64_t id = 0;
    bool minted = false;
    int rc = entity_name_key(m->normal, &squeezed);
    const struct alias_seed_key *k = rc ? NULL : alias_seeds_find(seeds, m->normal, squeezed);
    if (k) {
        rc = res_seed_entity(store, seeds, k, now, &id, &minted);
        if (!rc) res->seeded++;
    }
    if (!rc && id == 0) rc = res_lookup(store, m->normal, squeezed, &id);
    if (!rc && id == 0) rc = res_by_tokens(store, m->normal, &id);
    if (!rc && id == 0 && p->tie_break) {
        rc = res_tie_break(store, p, m, &id, res);
        if (!rc && id) res->tie_folds++;
    }
    if (!rc && id == 0) {
        rc = res_mint(store, m->surface, m->normal, squeezed, now, &id);
        minted = !rc;
    }
    free(squeezed);
    if (rc) return rc;
    if (minted) res->minted++;
    else res->folded++;
    sqlite3_stmt *st;
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

int dream_resolve_run(dream_store *store, const struct dream_resolve_params *params, struct dream_resolve_result *result)
{
    struct dream_resolve_params p;
    if (params) p = *params;
    else dream_resolve_default_params(&p);
    struct dream_resolve_result res = {0};
    struct res_mention *m;
    size_t n;
    int rc = res_pending(store, &m, &n);
    if (rc) return rc;
    size_t chunks = 0;
    for (size_t i = 0; i < n; i++) chunks += i == 0 || m[i].chunk != m[i - 1].chunk;
    struct alias_seeds seeds;
    if (p.dry_run) {
        res.mentions = n;
    } else if (n && !(rc = res_seeds_load(p.wiki_dir, &seeds))) {
        int64_t now = store_now_ms();
        /* One transaction per chunk: a kill loses at most the chunk in flight, and the write lock
         * is never held across more than one chunk's tie-break questions. */
        size_t done = 0;
        for (size_t i = 0; !rc && i < n;) {
            struct dream_resolve_result step = {0};
            size_t j = i;
            rc = store_exec(store, "BEGIN IMMEDIATE", "starting the resolve write");
            for (; !rc && j < n && m[j].chunk == m[i].chunk; j++) rc = res_one(store, &p, &seeds, &m[j], now, &step);
            if (!rc) rc = store_exec(store, "COMMIT", "committing the resolve write");
            if (rc) {
                store_exec(store, "ROLLBACK", "rolling back the resolve write");
                break;
            }
            res.mentions += step.mentions;
            res.folded += step.folded;
            res.minted += step.minted;
            res.seeded += step.seeded;
            res.asked += step.asked;
            res.tie_folds += step.tie_folds;
            i = j;
            if (p.on_progress) p.on_progress(p.progress_ud, "resolve", ++done, chunks);
        }
        alias_seeds_free(&seeds);
    }
    /* every run, also one with no new names: chunks cut since may name the known ones */
    if (!rc && !p.dry_run) rc = resolve_spread(store, &res.spread);
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
    if (!rc) rc = entity_name_key(normal, &squeezed);
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
            rc = dream_error_set(DREAM_ENOTFOUND, "no entity named '%.*s' in the store %s", utf8_cut(name, 80), name, dream_store_path(store));
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
