/* utf8.c — see utf8.h. */
#include "util/utf8.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    int len;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range, narrower after E0, ED, F0, F4 */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 0;
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -len;
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return 0;
    }
    return len;
}

size_t utf8_prefix(const char *s, size_t len, size_t cap)
{
    if (len <= cap) return len;
    size_t n = cap;
    /* s[n] is the first byte left out: while it continues a sequence, the cut is inside one */
    for (int back = 0; n > 0 && back < 3 && ((unsigned char)s[n] & 0xC0) == 0x80; back++) n--;
    return n;
}

size_t utf8_complete(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    /* only the last three bytes can start an incomplete sequence */
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        size_t at = len - back;
        if ((u[at] & 0xC0) == 0x80) continue; /* a continuation byte: look further back */
        return utf8_seq_len(u + at, back) < 0 ? at : len;
    }
    return len;
}

int utf8_cut(const char *s, size_t cap)
{
    if (cap > INT_MAX) cap = INT_MAX;
    return (int)utf8_prefix(s, strnlen(s, cap + 1), cap);
}

char *utf8_trim(char *s)
{
    s[utf8_complete(s, strlen(s))] = '\0';
    return s;
}

size_t utf8_valid_prefix(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        int k = utf8_seq_len((const unsigned char *)s + i, len - i);
        if (k <= 0) return i;
        i += (size_t)k;
    }
    return len;
}

size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

char *utf8_repaired(const char *s)
{
    size_t n = strlen(s), o = 0;
    char *r = malloc(3 * n + 1); /* each bad byte becomes three */
    if (!r) return NULL;
    for (size_t i = 0; i < n;) {
        int k = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (k > 0) {
            memcpy(r + o, s + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            memcpy(r + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    r[o] = '\0';
    return r;
}

int utf8_next(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    int l = utf8_seq_len(u, n);
    if (l <= 0) {
        *cp = u[0];
        return 1;
    }
    *cp = l == 1   ? u[0]
          : l == 2 ? (uint32_t)(u[0] & 0x1F) << 6 | (u[1] & 0x3F)
          : l == 3 ? (uint32_t)(u[0] & 0x0F) << 12 | (uint32_t)(u[1] & 0x3F) << 6 | (u[2] & 0x3F)
                   : (uint32_t)(u[0] & 0x07) << 18 | (uint32_t)(u[1] & 0x3F) << 12 | (uint32_t)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
    return l;
}

int utf8_cjk(uint32_t c)
{
    if (c >= 0x3040 && c <= 0x309F) return UTF8_HIRAGANA;
    if ((c >= 0x30A0 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9F)) return UTF8_HAN; /* Katakana */
    if ((c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x3134F))
        return UTF8_HAN;
    return 0;
}
