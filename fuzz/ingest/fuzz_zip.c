/* fuzz_zip.c — the ZIP reader: the central directory, then every member streamed to its end
 * (stored or inflated, with size and CRC checks), under a total output cap. */
#include "istream.h"
#include "zip.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct zip *z;
    if (zip_open_mem(data, size, "fuzz.zip", &z)) return 0;
    size_t index;
    (void)zip_find(z, "conversations.json", &index);
    uint64_t budget = 64u << 20;
    for (size_t i = 0; i < z->n && budget; i++) {
        struct istream s;
        if (istream_open_zip(&s, z, i)) continue;
        int c;
        while (budget && (c = istream_getc(&s)) >= 0) budget--;
        istream_close(&s);
    }
    zip_close(z);
    return 0;
}
