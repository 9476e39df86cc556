/* fuzz_ingest.h — the body shared by the importer fuzzers: ingest the input as one format into a
 * fresh in-memory store. Any crash, leak, undefined behaviour or store error is a finding; input
 * problems are expected and merely counted. */
#ifndef DREAM_FUZZ_INGEST_H
#define DREAM_FUZZ_INGEST_H

#include "dream/error.h"
#include "dream/ingest.h"
#include "dream/store.h"

#include <stdint.h>
#include <stdlib.h>

static int fuzz_ingest(const uint8_t *data, size_t size, enum dream_format format)
{
    dream_store *store;
    if (dream_store_open(":memory:", &store)) abort();
    struct dream_ingest_params p = dream_ingest_default_params();
    p.format = format;
    struct dream_ingest_stats stats = {0};
    int rc = dream_ingest_buffer(store, "fuzz-input", data, size, &p, &stats);
    /* Bad input is never an error of the call; only the store failing or memory running out is. */
    if (rc && rc != DREAM_ENOMEM) abort();
    /* Ingesting the same bytes again must change nothing. */
    struct dream_ingest_stats again = {0};
    rc = dream_ingest_buffer(store, "fuzz-input", data, size, &p, &again);
    if (rc && rc != DREAM_ENOMEM) abort();
    if (!rc && (again.added || again.changed)) abort();
    dream_store_close(store);
    return 0;
}

#endif
