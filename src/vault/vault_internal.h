/* vault_internal.h — the vault's seeded files, shared by vault.c and vault_seed.c. */
#ifndef DREAM_VAULT_INTERNAL_H
#define DREAM_VAULT_INTERNAL_H

#include "dream/vault.h"

#include <stddef.h>
#include <stdio.h>

struct vault_seed_file {
    const char *path; /* relative to the vault root */
    const char *text;
};

/* The seeded files, in the order init writes them; *n is their count. */
const struct vault_seed_file *vault_seed_files(size_t *n);

#endif
