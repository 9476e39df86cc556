/* fuzz_ingest_detect.c — format detection and whatever importer it picks (ZIPs included). */
#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_ingest(data, size, DREAM_FORMAT_AUTO); }
