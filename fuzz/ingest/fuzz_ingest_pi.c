/* fuzz_ingest_pi.c — the pi importer (format forced). */
#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_ingest(data, size, DREAM_FORMAT_PI); }
