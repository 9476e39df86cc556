/* alias_seeds.h — the alias seeds a person lists on the vault's Meta/Aliases page, which resolve
 * applies before it mints an entity (spec §6.3, with §12 item 21 fixed: the seeds are data in
 * the person's vault, not in the code).
 *
 * Page grammar: list lines "- Canonical Name: alias one, alias two" ("*" as the marker too).
 * Every other line is prose; a list line holding "<" is the page's own placeholder; lines inside
 * ``` fences are examples; a list line without a colon is reported (file and line) and skipped.
 * A name claimed by two canonicals keeps its first (earlier line), and the later claim is
 * reported. Names match on their normal form or squeezed key (entity_name.h). */
#ifndef DREAM_NAMES_ALIAS_SEEDS_H
#define DREAM_NAMES_ALIAS_SEEDS_H

#include <stddef.h>

/* One seeded name (an alias, or the canonical name itself) pointing at its canonical. */
struct alias_seed_key {
    char *normal, *squeezed;
    size_t canonical; /* index into alias_seeds.canonical */
};

struct alias_seeds {
    char **canonical; /* the canonical names as the person spelled them */
    size_t n_canonical;
    struct alias_seed_key *keys;
    size_t n_keys, cap_keys;
};

/* Parses len bytes of page text (where names the page in warnings) into *out, which the caller
 * frees with alias_seeds_free (also after an error). Returns 0 or DREAM_ENOMEM. */
int alias_seeds_parse(const char *text, size_t len, const char *where, struct alias_seeds *out);

/* The key a name hits (same normal form or squeezed key), or NULL. */
const struct alias_seed_key *alias_seeds_find(const struct alias_seeds *seeds, const char *normal, const char *squeezed);

void alias_seeds_free(struct alias_seeds *seeds);

#endif
