/* Fuzzer of dream_grammar_prose_from: any bytes give a grammar (never a crash), and every line
 * of it is one rule, `root`, `prose`, `w`, `cap` or `pN`, whose string literals hold ASCII letters only,
 * so stray bytes of the text never break out of a GBNF string literal. */
#include "dream/grammar.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *g = dream_grammar_prose_from((const char *)data, size, NULL);
    if (!g) abort(); /* only out of memory may give NULL */
    for (char *line = g; *line;) {
        char *end = strchr(line, '\n');
        if (!end) abort(); /* every rule ends with a newline */
        if (line[0] == 'p' && strncmp(line, "prose ::= ", 10)) {
            size_t d = strspn(line + 1, "0123456789");
            if (!d || strncmp(line + 1 + d, " ::= ", 5)) abort();
            bool in = false; /* inside a literal: letters only */
            for (char *c = line; c < end; c++) {
                if (*c == '"') in = !in;
                else if (in && !((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z'))) abort();
            }
            if (in) abort();
        } else if (line[0] != 'p' && strncmp(line, "root ::= ", 9) && strncmp(line, "w ::= ", 6) && strncmp(line, "cap ::= ", 8)) {
            abort();
        }
        line = end + 1;
    }
    free(g);
    return 0;
}
