/* entity_name.h — turning one line of the entity stage's answer into a subject name, and a name
 * into the keys entities are matched on (spec §6.2–6.3). Pure functions: no store, no model.
 *
 * The part src/names/ (docs/ARCHITECTURE.md): subject names. entity_name.c cleans an answer
 * line into a name and a name into its normal form and match keys; alias_seeds.c parses the
 * person's Meta/Aliases page into alias seeds (alias_seeds.h). Pure functions on util and
 * utf8proc; dreaming (extract, resolve) and read (the name index) use them.
 */
#ifndef DREAM_NAMES_ENTITY_NAME_H
#define DREAM_NAMES_ENTITY_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* Longest name kept, in bytes: a longer line is a sentence, not a name. */
#define ENTITY_NAME_MAX 80
/* Most words in a name; more is prose. */
#define ENTITY_NAME_MAX_WORDS 8

enum entity_line_kind {
    ENTITY_LINE_NAME,  /* *name holds the cleaned name */
    ENTITY_LINE_NONE,  /* the model said there is nothing ("NONE", "n/a", ...) */
    ENTITY_LINE_SKIP,  /* blank, a header, prose, too long, no letters or digits */
};

/* Cleans one answer line: strips list markers (-, *, +, •, "1.", "2)"), surrounding emphasis
 * and quotes, trailing punctuation; rejects blanks, headers ("Entities:"), over-long lines and
 * prose. On ENTITY_LINE_NAME, *name is malloc'd (the caller frees it); otherwise NULL. Returns
 * the kind, or a negative dream_status (out of memory). */
int entity_name_clean(const char *line, size_t len, char **name);

/* The canonical normal form of a name: NFC, casefolded, whitespace and underscores squeezed to
 * single spaces, one leading article (the/a/an) and one possessive (my/our/your) dropped, and a
 * trailing "'s" dropped. *out is malloc'd. Returns 0 or a negative dream_status (invalid UTF-8:
 * DREAM_EINVAL). */
int entity_name_normal(const char *name, char **out);

/* The squeezed key: the normal form with every ASCII character that is not a letter or digit
 * removed ("S5 II-X" and "s5iix" meet). *out is malloc'd; it may be empty. */
int entity_name_squeeze(const char *normal, char **out);

/* The squeezed key entities are matched on: entity_name_squeeze, or the normal form itself when
 * nothing would be left (a name of punctuation only keys on itself). *out is malloc'd. */
int entity_name_key(const char *normal, char **out);

/* Whether text holds name as whole words (ASCII case ignored). mid, when not NULL: whether one
 * such occurrence starts capitalised where no sentence starts ("I met Leonard", not "Next step:
 * ..." at a line's start). */
bool entity_name_in_text(const char *text, const char *name, bool *mid);

#endif
