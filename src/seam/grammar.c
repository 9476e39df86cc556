/* grammar.c — the answer shapes of the stages (see dream/grammar.h). */
#include "dream/grammar.h"

#include "util/buf.h"

#include <stdio.h>

const char dream_grammar_yes_no[] = "root ::= [Yy] \"es\" | [Nn] \"o\"\n";

const char dream_grammar_evolution_error[] =
    "root ::= \"EVOLUTION\" | \"Evolution\" | \"evolution\" | \"ERROR\" | \"Error\" | \"error\"\n";

/* A name starts with no list marker or space; the answer may end with one newline. */
const char dream_grammar_names[] =
    "root ::= (\"NONE\" | name (\"\\n\" name){0,15}) \"\\n\"?\n"
    "name ::= [^\\-*#> \\t\\n\\r\\x00-\\x1f] [^\\n\\r\\x00-\\x1f]{0,99}\n";

const char dream_grammar_headings[] =
    "root ::= (\"NONE\" | heading (\"\\n\" heading){0,5}) \"\\n\"?\n"
    "heading ::= [A-Za-z0-9\\x80-\\U0010FFFF] [^\\n\\r\\x00-\\x1f\\[`]{0,79}\n";

const char dream_grammar_section_name[] =
    "root ::= \"NONE\" | word (\" \" word){1,4}\n"
    "word ::= [A-Za-z0-9\\x80-\\U0010FFFF] [A-Za-z0-9'\\x80-\\U0010FFFF\\-]{0,23}\n";

const char dream_grammar_value[] = "root ::= [^ \\n\\r\\x00-\\x1f\\[`] [^\\n\\r\\x00-\\x1f\\[`]{0,79}\n";

const char dream_grammar_infobox[] =
    "root ::= line (\"\\n\" line){0,15} \"\\n\"?\n"
    "line ::= [a-z] [a-z0-9_]{0,39} \": \" [^ \\n\\r\\x00-\\x1f`] [^\\n\\r\\x00-\\x1f`]{0,159}\n";

char *dream_grammar_literal(const char *text)
{
    struct dbuf b = {0};
    int rc = dbuf_putc(&b, '"');
    for (const unsigned char *p = (const unsigned char *)text; !rc && *p; p++) {
        if (*p == '"' || *p == '\\') rc = dbuf_printf(&b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) rc = dbuf_printf(&b, "\\x%02x", *p);
        else rc = dbuf_putc(&b, (char)*p);
    }
    if (!rc) rc = dbuf_putc(&b, '"');
    if (rc) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b);
}
