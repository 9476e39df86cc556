/* fuzz_message_successor.c — reading a later position from the person's own words
 * (synth_message_successor) on any bytes: a successor, when there is one, is a non-empty phrase
 * of at most eight words on one line, taken from the message (its bytes are the message's, case
 * aside), never holding the value or held by it; no successor, no correction. Never a crash or a
 * leak. Input: the value, a newline, the message, then optionally a NUL and the person's other
 * words (said, for "X — not V"). */
#include "synth_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl) return 0;
    size_t vl = (size_t)(nl - data);
    char *value = strndup((const char *)data, vl), *msg = strndup((const char *)nl + 1, size - vl - 1);
    const uint8_t *nul = memchr(nl + 1, '\0', size - vl - 1);
    char *said = nul ? strndup((const char *)nul + 1, size - (size_t)(nul + 1 - data)) : NULL;
    if (!value || !msg || (nul && !said)) {
        free(value);
        free(msg);
        free(said);
        return 0;
    }
    bool correction = true;
    char *got = synth_message_successor(msg, value, said, &correction);
    if (!got) {
        if (correction) abort();
    } else {
        size_t words = 1;
        for (const char *p = got; *p; p++) {
            if (*p == '\n') abort();
            words += *p == ' ';
        }
        if (!*got || words > 8 || !strcasestr(msg, got) || strcasestr(got, value) || strcasestr(value, got)) abort();
    }
    free(got);
    free(value);
    free(msg);
    free(said);
    return 0;
}
