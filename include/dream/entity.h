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
 * once routed to an article stays routed. An optional engagement gate (off by default) also gives
 * an article to a subject the person engaged with at length in a single chunk. Deterministic, no
 * model.
 *
 * Both stages are idempotent: a second run with nothing new changes nothing. Functions return 0
 * (DREAM_OK) or a negative dream_status with dream_error_last() set.
 */
#ifndef DREAM_ENTITY_H
#define DREAM_ENTITY_H

#include "dream/progress.h"
#include "dream/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DREAM_ROUTE_RECURRENCE 2

struct dream_resolve_params {
    const char *wiki_dir; /* the vault whose Meta/Aliases page seeds aliases ("- Canonical Name:
                             alias, alias" lines; placeholders in <angle brackets> are skipped);
                             NULL: no seeds */
    bool tie_break;       /* when a name's distinctive tokens point at two or more entities, ask
                             the model (stage "resolve", yes/no per candidate) whether it is one of
                             them; fold only on exactly one yes. Default off; the environment
                             variable DREAM_RESOLVE_TIE_BREAK=1 turns it on */
    size_t max_candidates; /* at most this many candidates asked about per name (default 5) */
    bool dry_run;         /* only count the unresolved names */
    dream_progress_fn on_progress; /* may be NULL; items are chunks */
    void *progress_ud;
};

void dream_resolve_default_params(struct dream_resolve_params *params);

struct dream_resolve_result {
    size_t mentions; /* mentions resolved in this run */
    size_t folded;   /* of which joined an existing entity */
    size_t minted;   /* entities created in this run */
    size_t seeded;   /* of the mentions, resolved through a Meta/Aliases seed */
    size_t asked;    /* tie-break questions asked to the model */
    size_t tie_folds; /* mentions folded because the model picked exactly one candidate */
    size_t spread;   /* mentions added: a known name found in the person's messages of another chunk */
};

/* Resolves every unresolved mention, oldest chunk first, one transaction per chunk (so a kill
 * loses at most the chunk in flight). Alias seeds come first: a name equal (normal or squeezed
 * form) to a seed's alias or canonical name resolves to the canonical (minted under the seed's
 * spelling when new); then the three deterministic layers; then, only with tie_break, the
 * model's yes/no among real candidates; else a new entity is minted. Then every resolved name
 * that reads as a name (two or more words, or written capitalised mid-sentence by the person) is
 * looked for in the person's messages of every chunk: a chunk holding it as whole words gets a
 * mention of its entity too (src/dreaming/spread.c says why). Returns an error when the
 * store fails, the Aliases page cannot be read, or a tie-break call gets no answer. */
int dream_resolve_run(dream_store *store, const struct dream_resolve_params *params, struct dream_resolve_result *result);

struct dream_route_params {
    int min_user_messages; /* the engagement gate: an entity in fewer than DREAM_ROUTE_RECURRENCE
                              chunks still gets an article when its chunks hold at least this many
                              of the person's own messages (the subject was engaged with, not
                              mentioned in passing). 0 = off (default); the environment variable
                              DREAM_ROUTE_ENGAGEMENT sets it */
    bool dry_run;          /* counts, writes nothing */
};

void dream_route_default_params(struct dream_route_params *params);

struct dream_route_result {
    size_t entities; /* entities in the store */
    size_t articles; /* routed to an article (in all) */
    size_t newly;    /* of which routed in this run */
    size_t engaged;  /* of the newly routed, by the engagement gate alone */
    size_t captured; /* captured */
};

/* Routes every entity by its recurrence over the whole store (and the engagement gate when on). */
int dream_route_run(dream_store *store, const struct dream_route_params *params, struct dream_route_result *result);

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
