/*
 * entity.h — the resolve and route stages over the pipeline's own entity tables (spec §6.3–6.4,
 * with §12 items 18, 19 and 21 fixed).
 *
 * Resolve folds each unresolved mention (a name the extract stage stored for a chunk) into a
 * canonical entity: one with the same normal form, else one with the same squeezed form (no
 * spaces or punctuation: "Sour-dough" meets "sourdough"), else the one entity its distinctive
 * tokens point to (a content token owned by exactly one entity; all of them must point to the
 * same entity, and every token of the mention must be that entity's: otherwise minting wins over
 * fusing two things), else a new entity named after the mention. Mentions are taken oldest chunk
 * first, so a name is minted by its first appearance.
 * Nothing about any one person's data is in the code.
 *
 * Route counts, over the whole store (never one run's slice), the distinct chunks that mention
 * each entity: an entity in at least DREAM_ROUTE_RECURRENCE chunks is routed to an article (its
 * title recorded); the rest are captured: they stay in the table, findable by name. An entity
 * once routed to an article stays routed. Deterministic, no model.
 *
 * Both stages are idempotent: a second run with nothing new changes nothing. Functions return 0
 * (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_ENTITY_H
#define DREAM_ENTITY_H

#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DREAM_ROUTE_RECURRENCE 2

struct dream_resolve_result {
    size_t mentions; /* mentions resolved in this run */
    size_t folded;   /* of which joined an existing entity */
    size_t minted;   /* entities created in this run */
};

/* Resolves every unresolved mention (dry_run: only counts them). */
int dream_resolve_run(dream_store *store, bool dry_run, struct dream_resolve_result *result);

struct dream_route_result {
    size_t entities; /* entities in the store */
    size_t articles; /* routed to an article (in all) */
    size_t newly;    /* of which routed in this run */
    size_t captured; /* captured */
};

/* Routes every entity by its recurrence over the whole store (dry_run: counts, writes nothing). */
int dream_route_run(dream_store *store, bool dry_run, struct dream_route_result *result);

/* An entity as stored. */
struct dream_entity {
    int64_t id;
    char *name;
    char *normal;
    char *route;         /* "article", "captured", or NULL when not yet routed */
    char *article_title; /* NULL unless routed to an article */
    int64_t chunk_count;
};

/* Finds the entity a name resolves to (same normal or squeezed form). DREAM_ENOTFOUND when none.
 * The caller frees *out with dream_entity_free. */
int dream_entity_find(dream_store *store, const char *name, struct dream_entity **out);
void dream_entity_free(struct dream_entity *entity);

#ifdef __cplusplus
}
#endif
#endif
