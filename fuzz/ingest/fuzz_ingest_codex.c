/* fuzz_ingest_codex.c — the codex importer (format forced). */
#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_ingest(data, size, DREAM_FORMAT_CODEX); }
