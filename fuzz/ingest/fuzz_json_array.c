/* fuzz_json_array.c — the streaming splitter of a top-level JSON array and the JSONL line reader,
 * with a small element limit so the too-big path is exercised too. */
#include "istream.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct istream s;
    struct dbuf elem = {0};
    if (istream_open_mem(&s, data, size)) return 0;
    struct jarray a = {0};
    while (jarray_next(&s, &a, &elem, 64) == 1) {}
    istream_close(&s);
    if (istream_open_mem(&s, data, size)) return 0;
    bool too_long, ended;
    while (istream_read_line(&s, &elem, 32, &too_long, &ended) == 1) {}
    istream_close(&s);
    dbuf_free(&elem);
    return 0;
}
