/* Fuzzer of dream_grammar_names_from: any bytes give a grammar (never a crash), and every line
 * of it is one rule, `root`, `line` or `wN`, so stray bytes of the text never break out of a
 * GBNF string literal. */
#include "dream/grammar.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *g = dream_grammar_names_from((const char *)data, size);
    if (!g) abort(); /* only out of memory may give NULL */
    for (char *line = g; *line;) {
        char *end = strchr(line, '\n');
        if (!end) abort(); /* every rule ends with a newline */
        if (strncmp(line, "root ::= ", 9) && strncmp(line, "line ::= ", 9)) {
            if (line[0] != 'w') abort();
            size_t d = strspn(line + 1, "0123456789");
            if (!d || strncmp(line + 1 + d, " ::= ", 5)) abort();
        }
        line = end + 1;
    }
    free(g);
    return 0;
}
