/* fuzz_segment_answer.c — the tolerant parse of the chunk stage's answer: any bytes either parse
 * into chunks whose anchors and labels are all set, or fail with DREAM_EFORMAT; never a crash or
 * a leak. */
#include "segment_answer.h"

#include "dream/error.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct segment_answer a;
    int rc = segment_answer_parse((const char *)data, size, &a);
    if (rc != DREAM_OK && rc != DREAM_EFORMAT && rc != DREAM_ENOMEM) abort();
    for (size_t i = 0; rc == DREAM_OK && i < a.n; i++)
        if (!a.chunks[i].label) abort();
    segment_answer_free(&a);
    return 0;
}
