/*
 * grammar.h — the answer shapes of the stages, as grammars (GBNF, llama.cpp's grammar format,
 * start symbol `root`) for dream_call_opts.grammar and dream_local_input.grammar.
 *
 * A stage whose answer has a fixed shape decodes under its grammar, so even a small or noisy
 * model cannot give an answer its parser cannot read. Each grammar accepts a subset of what the
 * stage's parser reads (the parsers stay tolerant for remote servers that ignore grammars) and
 * bounds the answer's length, so a model cannot run on inside a well-formed answer.
 */
#ifndef DREAM_GRAMMAR_H
#define DREAM_GRAMMAR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* yes or no (the first letter in either case): route and section questions, tie-breaks */
extern const char dream_grammar_yes_no[];
/* EVOLUTION or ERROR (or the same words capitalized or lowercase): the fold's classifier */
extern const char dream_grammar_evolution_error[];
/* entity: NONE, or 1 to 16 names, one per line (no list markers), each at most 100 bytes */
extern const char dream_grammar_names[];
/* outline: NONE, or 1 to 6 headings, one per line, each at most 80 bytes, no [ or ` */
extern const char dream_grammar_headings[];
/* a new section's name: NONE, or 2 to 5 words of letters, digits, ' and - */
extern const char dream_grammar_section_name[];
/* one short value, or NONE or KEEP: a line of at most 80 bytes without [ or ` (reconcile) */
extern const char dream_grammar_value[];
/* infobox: 1 to 16 `key: value` lines, snake_case keys, values of at most 160 bytes, no ` */
extern const char dream_grammar_infobox[];

/* WIKIFY's infobox refresh: an optional ```info fence, then 1 to 24 lines, each `key: value`
 * (a key of letters, digits and _ of at most 40, not alias(es), category/categories or kind;
 * a value of at most 160 characters without backticks, templates, footnote markers or emphasis,
 * with at most one [[link]]), `aliases: NAME, NAME, ...` or `category: NAME` (names of at most
 * 60 characters without markup). No value or name is one the parser skips as saying nothing
 * ("unknown", "none", "n/a", ...), so every answer it allows the refresh parser takes, and says
 * something. malloc'd; NULL when out of memory. */
char *dream_grammar_infobox_refresh(void);
/* The values (lowercase; compared ignoring case) the refresh parser skips as saying nothing,
 * besides the empty one; NULL-terminated. The grammar above allows none of them. */
extern const char *const dream_refresh_empty_values[];

/* The entity answer's grammar for a model that cannot copy a name reliably (a small one:
 * dream-mini, whose GGUF says dream.names_from_text): NONE, or 1 to 16 lines, each a run of
 * words that follow one another in text (a word: a run of non-space bytes with surrounding
 * quotes, brackets and sentence punctuation and a possessive 's cut off; its first letter in
 * either case). So every name is copied from the chunk, never invented. Transcript markup
 * ([user], [assistant], (id: ...)) gives no words; at most 4096 distinct words are used. A
 * text with no word allows only NONE. Every line starts with one space (dream_names_copy_form
 * says why). malloc'd; NULL when out of memory. */
char *dream_grammar_names_from(const char *text, size_t len);

/* An entity answer in the form dream_grammar_names_from decodes: every line with one leading
 * space (" Cowbird\n Bayonne"), which the entity parser trims. Why: in a SentencePiece
 * vocabulary a word after a space and the same word at the start of a line are different
 * tokens (" Cowbird" is "▁Cow" "bird", "Cowbird" after "\n" is "C" "ow" "bird"); the chunk
 * names a subject after a space, so with the space the answer repeats the chunk's own tokens,
 * which a small model learns to do, instead of respelling them. dream-dataset --names-from-text
 * writes the training answers this way. malloc'd; NULL when out of memory. */
char *dream_names_copy_form(const char *answer);

/* Prose for a model that cannot spell a name reliably (a small one: dream-mini, whose GGUF says
 * dream.names_from_text): any text, but every word (a run of ASCII letters) with a capital in
 * it is a word of text, as it is written there ("Dayton", "iPhone") or capitalized at a
 * sentence's start, or one of a few words that open sentences about the person ("The", "They",
 * "Earlier", ...). So a name in the prose is the notes' own ("Dayton", never "Torontoton" or
 * "sourdPart"); all-lowercase words are free. A word of one letter is not taken from text but
 * "I" (it is a dead end where a name starts: "Karen D>>>"). The text ends on a non-letter (a
 * period, a footnote marker). With start, the answer begins with it, as it is (a lead's
 * "**Title**"). At most 8192 words of text are used. malloc'd; NULL when out of memory. */
char *dream_grammar_prose_from(const char *text, size_t len, const char *start);
/* Those sentence openers; NULL-terminated. */
extern const char *const dream_prose_openers[];

/* text as a GBNF string literal ("..." with \" \\ and control bytes escaped), malloc'd; NULL
 * when out of memory. UTF-8 passes through as it is. */
char *dream_grammar_literal(const char *text);

#ifdef __cplusplus
}
#endif
#endif
