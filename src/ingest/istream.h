/*
 * istream.h — a buffered byte stream over a file, a memory buffer or a ZIP entry, with the
 * two readers the importers need: JSONL lines and the elements of a top-level JSON array.
 * Both read incrementally, so memory stays bounded by the largest line or element, never
 * by the size of the export.
 */
#ifndef DREAM_INGEST_ISTREAM_H
#define DREAM_INGEST_ISTREAM_H

#include "util/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zip;

struct istream {
    /* Fills up to cap bytes; *got = 0 at the end. Returns 0 or a negative status (last error set). */
    int (*read)(void *ctx, void *buf, size_t cap, size_t *got);
    void (*close)(void *ctx);
    void *ctx;
    char *buf;
    size_t pos, len, cap;
    uint64_t offset; /* absolute byte offset of buf[pos] */
    uint64_t line;   /* 1-based line number at buf[pos] */
    bool eof;
    int err; /* sticky read error */
};

/* Wraps a reader; ctx is released through cl (also when this fails). */
int istream_init_reader(struct istream *s, int (*rd)(void *, void *, size_t, size_t *), void (*cl)(void *), void *ctx);
/* Opens a file. DREAM_ENOTFOUND / DREAM_EIO with the path named. */
int istream_open_file(struct istream *s, const char *path);
/* Streams a buffer the caller keeps alive until istream_close. */
int istream_open_mem(struct istream *s, const void *data, size_t len);
/* Streams (inflating) entry index of an open ZIP; the ZIP must outlive the stream. */
int istream_open_zip(struct istream *s, struct zip *z, size_t index);
void istream_close(struct istream *s);

/* The next byte (0..255), -1 at the end, or -2 on a read error (s->err holds the status). */
int istream_getc(struct istream *s);
/* The next byte without consuming it; same returns. */
int istream_peek(struct istream *s);

/* Reads one line without its '\n' (and a '\r' before it) into line (reset first). Lines longer
 * than max bytes are consumed but only their first max bytes kept, and *too_long set. *ended
 * tells whether the line ended with '\n' (false for an unterminated last line). Returns 1 when
 * a line was read, 0 at the end, or a negative status. */
int istream_read_line(struct istream *s, struct dbuf *line, size_t max, bool *too_long, bool *ended);

/* Splits a top-level JSON array into its elements without parsing them. */
struct jarray {
    int state;            /* 0 before '[', 1 inside, 2 after ']' */
    uint64_t elem_offset; /* byte offset of the element last returned */
    uint64_t elem_line;   /* its 1-based line */
    bool too_big;         /* the element was longer than max; only its head was kept */
};

/* Reads the next element's bytes into elem (reset first), keeping at most max bytes. Returns 1
 * for an element, 0 after the closing ']', DREAM_EFORMAT when the input is not a JSON array or
 * ends inside one (the last error names the byte offset), or another negative status on a read
 * error. */
int jarray_next(struct istream *s, struct jarray *a, struct dbuf *elem, size_t max);

#endif
