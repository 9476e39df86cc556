/* istream.c — buffered input streams, JSONL lines and JSON array elements (see istream.h). */
#include "istream.h"

#include "dream/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISTREAM_BUF (256 * 1024)

struct istream_file {
    FILE *f;
    char *path;
};

static int istream_file_read(void *ctx, void *buf, size_t cap, size_t *got)
{
    struct istream_file *fc = ctx;
    *got = fread(buf, 1, cap, fc->f);
    if (*got == 0 && ferror(fc->f)) return dream_error_set(DREAM_EIO, "reading %s: %s", fc->path, strerror(errno));
    return 0;
}

static void istream_file_close(void *ctx)
{
    struct istream_file *fc = ctx;
    fclose(fc->f);
    free(fc->path);
    free(fc);
}

struct istream_mem {
    const char *data;
    size_t len, pos;
};

static int istream_mem_read(void *ctx, void *buf, size_t cap, size_t *got)
{
    struct istream_mem *m = ctx;
    size_t n = m->len - m->pos < cap ? m->len - m->pos : cap;
    if (n) memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    *got = n;
    return 0;
}

static void istream_mem_close(void *ctx) { free(ctx); }

/* Sets up the buffer; ctx is released through close on failure. */
int istream_init_reader(struct istream *s, int (*rd)(void *, void *, size_t, size_t *), void (*cl)(void *), void *ctx)
{
    memset(s, 0, sizeof *s);
    s->read = rd;
    s->close = cl;
    s->ctx = ctx;
    s->line = 1;
    s->cap = ISTREAM_BUF;
    s->buf = malloc(s->cap);
    if (!s->buf) {
        cl(ctx);
        s->close = NULL;
        return dream_error_set(DREAM_ENOMEM, "out of memory opening a stream");
    }
    return 0;
}

int istream_open_file(struct istream *s, const char *path)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) return dream_error_set(errno == ENOENT ? DREAM_ENOTFOUND : DREAM_EIO, "cannot open %s: %s", path, strerror(errno));
    struct istream_file *fc = calloc(1, sizeof *fc);
    if (!fc || !(fc->path = strdup(path))) {
        free(fc);
        fclose(f);
        return dream_error_set(DREAM_ENOMEM, "out of memory opening %s", path);
    }
    fc->f = f;
    return istream_init_reader(s, istream_file_read, istream_file_close, fc);
}

int istream_open_mem(struct istream *s, const void *data, size_t len)
{
    memset(s, 0, sizeof *s);
    struct istream_mem *m = calloc(1, sizeof *m);
    if (!m) return dream_error_set(DREAM_ENOMEM, "out of memory");
    m->data = data;
    m->len = len;
    return istream_init_reader(s, istream_mem_read, istream_mem_close, m);
}

void istream_close(struct istream *s)
{
    if (s->close) s->close(s->ctx);
    free(s->buf);
    memset(s, 0, sizeof *s);
}

/* Refills the buffer when it is empty. Returns bytes available, 0 at the end, -2 on error. */
static int istream_fill(struct istream *s)
{
    if (s->pos < s->len) return 1;
    if (s->err) return -2;
    if (s->eof) return 0;
    size_t got = 0;
    int rc = s->read(s->ctx, s->buf, s->cap, &got);
    s->pos = 0;
    s->len = got;
    if (rc) {
        s->err = rc;
        s->len = 0;
        return -2;
    }
    if (got == 0) s->eof = true;
    return got ? 1 : 0;
}

int istream_getc(struct istream *s)
{
    int r = istream_fill(s);
    if (r <= 0) return r == 0 ? -1 : -2;
    unsigned char c = (unsigned char)s->buf[s->pos++];
    s->offset++;
    if (c == '\n') s->line++;
    return c;
}

int istream_peek(struct istream *s)
{
    int r = istream_fill(s);
    if (r <= 0) return r == 0 ? -1 : -2;
    return (unsigned char)s->buf[s->pos];
}

int istream_read_line(struct istream *s, struct dbuf *line, size_t max, bool *too_long, bool *ended)
{
    dbuf_reset(line);
    *too_long = false;
    *ended = false;
    bool any = false;
    for (;;) {
        int r = istream_fill(s);
        if (r < 0) return s->err;
        if (r == 0) break;
        any = true;
        char *start = s->buf + s->pos;
        size_t avail = s->len - s->pos;
        char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        size_t keep = line->len >= max ? 0 : (max - line->len < take ? max - line->len : take);
        if (keep < take) *too_long = true;
        if (keep && dbuf_append(line, start, keep)) return DREAM_ENOMEM;
        s->pos += take;
        s->offset += take;
        if (nl) {
            s->pos++;
            s->offset++;
            s->line++;
            *ended = true;
            break;
        }
    }
    if (!any) return 0;
    if (line->len && line->data[line->len - 1] == '\r') line->data[--line->len] = '\0';
    return 1;
}

static bool jarray_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Appends c to elem unless it is full (then marks the element too big). */
static int jarray_keep(struct jarray *a, struct dbuf *elem, size_t max, int c)
{
    if (elem->len >= max) {
        a->too_big = true;
        return 0;
    }
    return dbuf_putc(elem, (char)c);
}

static int jarray_truncated(struct istream *s, struct jarray *a)
{
    if (s->err) return s->err;
    return dream_error_set(DREAM_EFORMAT,
                           "the JSON ends at byte %llu inside the element that starts on line %llu "
                           "(byte %llu): the file is truncated",
                           (unsigned long long)s->offset, (unsigned long long)a->elem_line,
                           (unsigned long long)a->elem_offset);
}

int jarray_next(struct istream *s, struct jarray *a, struct dbuf *elem, size_t max)
{
    dbuf_reset(elem);
    a->too_big = false;
    int c;
    if (a->state == 2) return 0;
    if (a->state == 0) {
        /* A UTF-8 byte order mark is tolerated before the array. */
        if (istream_peek(s) == 0xEF) {
            istream_getc(s);
            if (istream_getc(s) != 0xBB || istream_getc(s) != 0xBF)
                return dream_error_set(DREAM_EFORMAT, "the file does not start with a JSON array");
        }
        while (jarray_space(c = istream_getc(s))) {}
        if (c == -2) return s->err;
        if (c != '[')
            return dream_error_set(DREAM_EFORMAT, "expected a JSON array ('[') at byte %llu",
                                   (unsigned long long)(s->offset ? s->offset - 1 : 0));
        a->state = 1;
    }
    /* Between elements: whitespace and commas, or the closing bracket. */
    for (;;) {
        c = istream_peek(s);
        if (c == -2) return s->err;
        if (c == -1)
            return dream_error_set(DREAM_EFORMAT, "the JSON array is not closed: the file ends at byte %llu (truncated?)",
                                   (unsigned long long)s->offset);
        if (jarray_space(c) || c == ',') {
            istream_getc(s);
            continue;
        }
        if (c == ']') {
            istream_getc(s);
            a->state = 2;
            return 0;
        }
        break;
    }
    a->elem_offset = s->offset;
    a->elem_line = s->line;
    c = istream_getc(s);
    if (jarray_keep(a, elem, max, c)) return DREAM_ENOMEM;
    if (c == '{' || c == '[' || c == '"') {
        int depth = c == '"' ? 0 : 1;
        bool in_str = c == '"', esc = false;
        while (depth > 0 || in_str) {
            c = istream_getc(s);
            if (c < 0) return jarray_truncated(s, a);
            if (jarray_keep(a, elem, max, c)) return DREAM_ENOMEM;
            if (in_str) {
                if (esc) esc = false;
                else if (c == '\\') esc = true;
                else if (c == '"') in_str = false;
            } else if (c == '"') in_str = true;
            else if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') depth--;
        }
        return 1;
    }
    /* A scalar (not a conversation, but the caller reports that): up to the next separator. */
    for (;;) {
        c = istream_peek(s);
        if (c == -2) return s->err;
        if (c == -1 || c == ',' || c == ']' || jarray_space(c)) return 1;
        istream_getc(s);
        if (jarray_keep(a, elem, max, c)) return DREAM_ENOMEM;
    }
}
