/* utf8.h — one strict UTF-8 sequence decoder for every layer (ingest's repair, the server's
 * JSON-safe text), and cuts of text at a byte budget that never split a character. */
#ifndef DREAM_UTIL_UTF8_H
#define DREAM_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the valid UTF-8 sequence at s[0..n); 0 when it is invalid (overlong
 * forms, surrogates and code points past U+10FFFF included); -(its length) when the bytes so far
 * are a valid start that n cuts short. n must be at least 1. */
int utf8_seq_len(const unsigned char *s, size_t n);

/* The length of the longest prefix of s[0..len) that is at most cap bytes and does not end
 * inside a UTF-8 sequence: prompts show long texts cut at a byte budget, and a cut through a
 * character would make the prompt invalid UTF-8 (a JSON request refuses it). */
size_t utf8_prefix(const char *s, size_t len, size_t cap);

/* The length of s[0..len) without an incomplete UTF-8 sequence at its end (what a cut at a byte
 * budget, snprintf's at a buffer's size above all, leaves behind): len when it ends on a whole
 * character. */
size_t utf8_complete(const char *s, size_t len);

/* For printf's "%.*s" on the NUL-terminated s: how many of its bytes to show so that at most cap
 * are shown and the last character shown is whole. A bare "%.60s" cuts through a character, and
 * a message with half a character is invalid UTF-8 wherever it goes (the store, JSON, a
 * terminal). */
int utf8_cut(const char *s, size_t cap);

/* Ends the NUL-terminated s (in place) before an incomplete sequence at its end: for a fixed
 * buffer that snprintf may have cut. Returns s. */
char *utf8_trim(char *s);

/* The number of characters in s[0..len): its bytes that do not continue a sequence (what a
 * length in characters counts, as a grammar's repetition of a character class does). */
size_t utf8_chars(const char *s, size_t len);

/* The length of the longest prefix of s[0..len) that is valid UTF-8 (utf8_seq_len's rules):
 * len when all of it is. */
size_t utf8_valid_prefix(const char *s, size_t len);

/* A copy of the NUL-terminated s (malloc'd) with U+FFFD for each byte that is not part of a
 * valid sequence: for text from outside that the store or a JSON answer must hold (a file name in
 * another encoding). NULL when out of memory. */
char *utf8_repaired(const char *s);

/* The code point at s[0..n) (n at least 1) into *cp and its length; a byte that starts no valid
 * sequence is taken alone, as its own value. */
int utf8_next(const char *s, size_t n, uint32_t *cp);

/* Whether cp is written without spaces between words: UTF8_HAN for a Han character or Katakana
 * (word stems, names, loanwords), UTF8_HIRAGANA for Hiragana (mostly particles and endings), 0
 * otherwise. The search index makes each such character a token; ask looks for the first kind. */
enum { UTF8_HAN = 1, UTF8_HIRAGANA = 2 };
int utf8_cjk(uint32_t cp);

#endif
