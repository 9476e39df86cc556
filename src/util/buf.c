/* buf.c — growable byte buffer (see buf.h). */
#include "util/buf.h"

#include "dream/error.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dbuf_reserve(struct dbuf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1) return dream_error_set(DREAM_ENOMEM, "buffer size overflow");
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p) return dream_error_set(DREAM_ENOMEM, "out of memory growing a buffer to %zu bytes", cap);
    p[b->len] = '\0'; /* data is a string whenever it is non-NULL, a first reserve included */
    b->data = p;
    b->cap = cap;
    return 0;
}

int dbuf_append(struct dbuf *b, const void *data, size_t len)
{
    if (dbuf_reserve(b, len)) return DREAM_ENOMEM;
    if (len) memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int dbuf_puts(struct dbuf *b, const char *s) { return dbuf_append(b, s, strlen(s)); }

int dbuf_putc(struct dbuf *b, char c) { return dbuf_append(b, &c, 1); }

int dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return dream_error_set(DREAM_EINVAL, "bad format string");
    if (dbuf_reserve(b, (size_t)n)) return DREAM_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void dbuf_reset(struct dbuf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

void dbuf_free(struct dbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *dbuf_take(struct dbuf *b)
{
    char *p = b->data;
    if (!p) p = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}
