/* fuzz_alias_seeds.c — the Meta/Aliases page parser: any bytes give seeds whose keys all point at
 * a canonical name that exists, and every key is found again by its own forms; never a crash or
 * a leak. */
#include "alias_seeds.h"

#include "dream/error.h"
#include "dream/log.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dream_log_set_level(DREAM_LOG_ERROR); /* malformed lines are warnings: keep the run quiet */
    struct alias_seeds s;
    int rc = alias_seeds_parse((const char *)data, size, "fuzz/Meta/Aliases.md", &s);
    if (rc != DREAM_OK && rc != DREAM_ENOMEM) abort();
    for (size_t i = 0; rc == DREAM_OK && i < s.n_keys; i++) {
        if (s.keys[i].canonical >= s.n_canonical || !s.canonical[s.keys[i].canonical]) abort();
        const struct alias_seed_key *k = alias_seeds_find(&s, s.keys[i].normal, s.keys[i].squeezed);
        if (!k || k > &s.keys[i]) abort(); /* found: itself or an earlier key with the same form */
    }
    alias_seeds_free(&s);
    return 0;
}
