/* utf8.h — one strict UTF-8 sequence decoder for every layer (ingest's repair, the server's
 * JSON-safe text). */
#ifndef DREAM_UTIL_UTF8_H
#define DREAM_UTIL_UTF8_H

#include <stddef.h>

/* The length (1..4) of the valid UTF-8 sequence at s[0..n); 0 when it is invalid (overlong
 * forms, surrogates and code points past U+10FFFF included); -(its length) when the bytes so far
 * are a valid start that n cuts short. n must be at least 1. */
int utf8_seq_len(const unsigned char *s, size_t n);

/* The length of the longest prefix of s[0..len) that is at most cap bytes and does not end
 * inside a UTF-8 sequence: prompts show long texts cut at a byte budget, and a cut through a
 * character would make the prompt invalid UTF-8 (a JSON request refuses it). */
size_t utf8_prefix(const char *s, size_t len, size_t cap);

#endif
