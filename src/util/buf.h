/*
 * buf.h — a growable byte buffer, always NUL-terminated, for building strings and files.
 *
 * A zeroed struct dbuf is an empty buffer. Appending functions return 0 or DREAM_ENOMEM (with
 * the last-error message set); the caller owns data and frees it with dbuf_free (or takes it
 * with dbuf_take).
 */
#ifndef DREAM_UTIL_BUF_H
#define DREAM_UTIL_BUF_H

#include <stddef.h>

struct dbuf {
    char *data; /* NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
};

int dbuf_reserve(struct dbuf *b, size_t extra);
int dbuf_append(struct dbuf *b, const void *data, size_t len);
int dbuf_puts(struct dbuf *b, const char *s);
int dbuf_putc(struct dbuf *b, char c);
int dbuf_printf(struct dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dbuf_reset(struct dbuf *b); /* length 0, keeps the allocation */
void dbuf_free(struct dbuf *b);
/* Returns the data (an empty string when nothing was appended; NULL only if that allocation
 * fails) and leaves b empty. The caller frees the result. */
char *dbuf_take(struct dbuf *b);

#endif
