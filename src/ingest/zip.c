/* zip.c — bounded ZIP reading over zlib (see zip.h). Format: PKWARE APPNOTE 6.3. */
#include "zip.h"

#include "istream.h"

#include "dream/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ZIP_SIG_LOCAL 0x04034b50u
#define ZIP_SIG_CENTRAL 0x02014b50u
#define ZIP_SIG_END 0x06054b50u
#define ZIP_SIG_END64 0x06064b50u
#define ZIP_SIG_LOC64 0x07064b50u
#define ZIP_MAX_CD ((uint64_t)512 << 20)

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

bool zip_looks_like(const void *head, size_t n)
{
    const uint8_t *p = head;
    return n >= 4 && (rd32(p) == ZIP_SIG_LOCAL || rd32(p) == ZIP_SIG_END);
}

struct zip_file {
    FILE *f;
};

static int zip_file_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    struct zip_file *zf = ctx;
    if (fseeko(zf->f, (off_t)off, SEEK_SET) != 0) return DREAM_EIO;
    return fread(buf, 1, n, zf->f) == n ? 0 : DREAM_EIO;
}

static void zip_file_close(void *ctx)
{
    struct zip_file *zf = ctx;
    if (zf->f) fclose(zf->f);
    free(zf);
}

struct zip_mem {
    const uint8_t *data;
    size_t len;
};

static int zip_mem_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    struct zip_mem *m = ctx;
    if (off > m->len || n > m->len - off) return DREAM_EIO;
    memcpy(buf, m->data + off, n);
    return 0;
}

void zip_close(struct zip *z)
{
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    if (z->close) z->close(z->ctx);
    free(z->name);
    free(z);
}

static int zip_bad(const struct zip *z, const char *what)
{
    return dream_error_set(DREAM_EFORMAT, "%s is not a readable ZIP archive: %s (a truncated download or a corrupt file?)",
                           z->name, what);
}

static int zip_read(const struct zip *z, uint64_t off, void *buf, size_t n, const char *what)
{
    if (off > z->size || n > z->size - off || z->read_at(z->ctx, off, buf, n)) return zip_bad(z, what);
    return 0;
}

/* Finds the end of central directory record in the archive's last 64 KiB + 22 bytes; fills the
 * central directory's offset, size and entry count (from the ZIP64 record when present). */
static int zip_find_end(struct zip *z, uint64_t *cd_off, uint64_t *cd_size, uint64_t *count)
{
    if (z->size < 22) return zip_bad(z, "too short to hold an end record");
    size_t tail = z->size < 65557 ? (size_t)z->size : 65557;
    uint8_t *buf = malloc(tail);
    if (!buf) return dream_error_set(DREAM_ENOMEM, "out of memory reading %s", z->name);
    uint64_t base = z->size - tail;
    if (zip_read(z, base, buf, tail, "reading its end")) {
        free(buf);
        return DREAM_EFORMAT;
    }
    size_t at = SIZE_MAX;
    for (size_t i = tail - 22 + 1; i-- > 0;) {
        if (rd32(buf + i) == ZIP_SIG_END && i + 22 + rd16(buf + i + 20) <= tail) {
            at = i;
            break;
        }
    }
    if (at == SIZE_MAX) {
        free(buf);
        return zip_bad(z, "no end of central directory record");
    }
    const uint8_t *e = buf + at;
    *count = rd16(e + 10);
    *cd_size = rd32(e + 12);
    *cd_off = rd32(e + 16);
    bool zip64 = *count == 0xFFFF || *cd_size == 0xFFFFFFFFu || *cd_off == 0xFFFFFFFFu;
    uint64_t end_abs = base + at;
    free(buf);
    if (!zip64) return 0;
    uint8_t loc[20], e64[56];
    if (end_abs < 20 || zip_read(z, end_abs - 20, loc, sizeof loc, "reading the ZIP64 locator") ||
        rd32(loc) != ZIP_SIG_LOC64)
        return zip_bad(z, "a ZIP64 archive without its ZIP64 locator");
    if (zip_read(z, rd64(loc + 8), e64, sizeof e64, "reading the ZIP64 end record") || rd32(e64) != ZIP_SIG_END64)
        return zip_bad(z, "a ZIP64 locator pointing at no ZIP64 end record");
    *count = rd64(e64 + 32);
    *cd_size = rd64(e64 + 40);
    *cd_off = rd64(e64 + 48);
    return 0;
}

/* Applies a ZIP64 extended-information extra field to the fields that were saturated. */
static void zip_apply_zip64(struct zip_entry *e, const uint8_t *extra, size_t elen)
{
    size_t p = 0;
    while (p + 4 <= elen) {
        uint16_t id = rd16(extra + p), len = rd16(extra + p + 2);
        if (p + 4 + len > elen) return;
        if (id == 0x0001) {
            const uint8_t *d = extra + p + 4;
            size_t q = 0;
            if (e->usize == 0xFFFFFFFFu && q + 8 <= len) e->usize = rd64(d + q), q += 8;
            if (e->csize == 0xFFFFFFFFu && q + 8 <= len) e->csize = rd64(d + q), q += 8;
            if (e->local_offset == 0xFFFFFFFFu && q + 8 <= len) e->local_offset = rd64(d + q), q += 8;
            return;
        }
        p += 4 + (size_t)len;
    }
}

static int zip_read_directory(struct zip *z)
{
    uint64_t cd_off = 0, cd_size = 0, count = 0;
    if (zip_find_end(z, &cd_off, &cd_size, &count)) return dream_error_code();
    if (cd_size > ZIP_MAX_CD || count > ZIP_MAX_ENTRIES) return zip_bad(z, "a central directory over the size limits");
    if (cd_off > z->size || cd_size > z->size - cd_off) return zip_bad(z, "the central directory lies past the end of the file");
    uint8_t *cd = malloc(cd_size ? (size_t)cd_size : 1);
    if (!cd) return dream_error_set(DREAM_ENOMEM, "out of memory reading %s", z->name);
    if (zip_read(z, cd_off, cd, (size_t)cd_size, "reading the central directory")) {
        free(cd);
        return DREAM_EFORMAT;
    }
    z->entries = calloc(count ? (size_t)count : 1, sizeof *z->entries);
    if (!z->entries) {
        free(cd);
        return dream_error_set(DREAM_ENOMEM, "out of memory reading %s", z->name);
    }
    size_t p = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (p + 46 > cd_size || rd32(cd + p) != ZIP_SIG_CENTRAL) {
            free(cd);
            return zip_bad(z, "a damaged central directory entry");
        }
        const uint8_t *h = cd + p;
        size_t nlen = rd16(h + 28), elen = rd16(h + 30), clen = rd16(h + 32);
        if (p + 46 + nlen + elen + clen > cd_size) {
            free(cd);
            return zip_bad(z, "a central directory entry running past its end");
        }
        struct zip_entry *e = &z->entries[z->n];
        e->flags = rd16(h + 8);
        e->method = rd16(h + 10);
        e->crc = rd32(h + 16);
        e->csize = rd32(h + 20);
        e->usize = rd32(h + 24);
        e->local_offset = rd32(h + 42);
        zip_apply_zip64(e, h + 46 + nlen, elen);
        e->name = strndup((const char *)h + 46, nlen);
        if (!e->name) {
            free(cd);
            return dream_error_set(DREAM_ENOMEM, "out of memory reading %s", z->name);
        }
        z->n++;
        p += 46 + nlen + elen + clen;
    }
    free(cd);
    return 0;
}

static int zip_open(struct zip *z)
{
    int rc = zip_read_directory(z);
    if (rc) zip_close(z);
    return rc;
}

int zip_open_file(const char *path, struct zip **out)
{
    *out = NULL;
    struct zip *z = calloc(1, sizeof *z);
    struct zip_file *zf = calloc(1, sizeof *zf);
    if (!z || !zf || !(z->name = strdup(path))) {
        free(z);
        free(zf);
        return dream_error_set(DREAM_ENOMEM, "out of memory opening %s", path);
    }
    z->read_at = zip_file_read_at;
    z->close = zip_file_close;
    z->ctx = zf;
    zf->f = fopen(path, "rb");
    if (!zf->f || fseeko(zf->f, 0, SEEK_END) != 0) {
        int rc = dream_error_set(DREAM_EIO, "cannot open %s: %s", path, strerror(errno));
        zip_close(z);
        return rc;
    }
    z->size = (uint64_t)ftello(zf->f);
    int rc = zip_open(z);
    if (!rc) *out = z;
    return rc;
}

int zip_open_mem(const void *data, size_t len, const char *name, struct zip **out)
{
    *out = NULL;
    struct zip *z = calloc(1, sizeof *z);
    struct zip_mem *m = calloc(1, sizeof *m);
    if (!z || !m || !(z->name = strdup(name))) {
        free(z);
        free(m);
        return dream_error_set(DREAM_ENOMEM, "out of memory opening %s", name);
    }
    m->data = data;
    m->len = len;
    z->read_at = zip_mem_read_at;
    z->close = free;
    z->ctx = m;
    z->size = len;
    int rc = zip_open(z);
    if (!rc) *out = z;
    return rc;
}

int zip_find(const struct zip *z, const char *base, size_t *index)
{
    int best_depth = -1;
    for (size_t i = 0; i < z->n; i++) {
        /* a backslash separates folders too: Windows PowerShell 5.1's Compress-Archive writes
         * "Export\conversations.json" */
        const char *name = z->entries[i].name, *leaf = name;
        int depth = 0;
        for (const char *c = name; *c; c++)
            if (*c == '/' || *c == '\\') {
                leaf = c + 1;
                depth++;
            }
        if (strcmp(leaf, base)) continue;
        if (best_depth < 0 || depth < best_depth) {
            best_depth = depth;
            *index = i;
        }
    }
    if (best_depth >= 0) return 0;
    return dream_error_set(DREAM_ENOTFOUND, "%s has no %s", z->name, base);
}

/* Streaming one member. */
struct zip_reader {
    struct zip *z;
    const struct zip_entry *e;
    z_stream zs;
    bool inflating, done;
    uint64_t in_off, in_left; /* compressed bytes not yet read */
    uint64_t out_total;
    uLong crc;
    uint8_t in[64 * 1024];
};

static int zip_member_bad(const struct zip_reader *r, const char *what)
{
    return dream_error_set(DREAM_EFORMAT, "%s: member %s %s (a truncated download, a corrupt file or a zip bomb?)",
                           r->z->name, r->e->name, what);
}

static int zip_reader_finish(struct zip_reader *r)
{
    r->done = true;
    if (r->out_total != r->e->usize) return zip_member_bad(r, "ends before its declared size");
    if (r->crc != r->e->crc) return zip_member_bad(r, "fails its CRC-32 check");
    return 0;
}

static int zip_reader_read(void *ctx, void *buf, size_t cap, size_t *got)
{
    struct zip_reader *r = ctx;
    *got = 0;
    if (r->done) return 0;
    if (!r->inflating) { /* stored */
        uint64_t left = r->e->usize - r->out_total;
        size_t n = left < cap ? (size_t)left : cap;
        if (n == 0) return zip_reader_finish(r);
        if (r->z->read_at(r->z->ctx, r->in_off, buf, n)) return zip_member_bad(r, "cannot be read to its end");
        r->in_off += n;
        r->out_total += n;
        r->crc = crc32(r->crc, buf, (uInt)n);
        *got = n;
        return 0;
    }
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    r->zs.next_out = buf;
    r->zs.avail_out = (uInt)cap;
    while (r->zs.avail_out == cap) {
        if (r->zs.avail_in == 0 && r->in_left) {
            size_t n = r->in_left < sizeof r->in ? (size_t)r->in_left : sizeof r->in;
            if (r->z->read_at(r->z->ctx, r->in_off, r->in, n)) return zip_member_bad(r, "cannot be read to its end");
            r->in_off += n;
            r->in_left -= n;
            r->zs.next_in = r->in;
            r->zs.avail_in = (uInt)n;
        }
        int zrc = inflate(&r->zs, Z_NO_FLUSH);
        size_t produced = cap - r->zs.avail_out;
        if (r->out_total + produced > r->e->usize) return zip_member_bad(r, "inflates past its declared size");
        if (zrc == Z_STREAM_END) {
            r->crc = crc32(r->crc, buf, (uInt)produced);
            r->out_total += produced;
            *got = produced;
            if (produced) return 0; /* finish on the next call, after the caller took the bytes */
            return zip_reader_finish(r);
        }
        if (zrc == Z_BUF_ERROR && r->zs.avail_in == 0 && r->in_left == 0) return zip_member_bad(r, "is cut short");
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) return zip_member_bad(r, "has corrupt deflate data");
    }
    size_t produced = cap - r->zs.avail_out;
    r->crc = crc32(r->crc, buf, (uInt)produced);
    r->out_total += produced;
    *got = produced;
    return 0;
}

static void zip_reader_close(void *ctx)
{
    struct zip_reader *r = ctx;
    if (r->inflating) inflateEnd(&r->zs);
    free(r);
}

int istream_open_zip(struct istream *s, struct zip *z, size_t index)
{
    memset(s, 0, sizeof *s);
    const struct zip_entry *e = &z->entries[index];
    struct zip_reader tmp = {.z = z, .e = e};
    if (e->flags & 1) return zip_member_bad(&tmp, "is encrypted; export it again without a password");
    if (e->method != 0 && e->method != 8) return zip_member_bad(&tmp, "uses a compression method other than stored or deflate");
    if (e->usize > ZIP_MAX_MEMBER) return zip_member_bad(&tmp, "is larger than the 64 GiB limit");
    if (e->method == 0 ? e->usize != e->csize : e->usize > e->csize * 1100 + 4096)
        return zip_member_bad(&tmp, "claims a size its compressed data cannot hold");
    uint8_t lh[30];
    if (e->local_offset > z->size || z->size - e->local_offset < 30 || z->read_at(z->ctx, e->local_offset, lh, 30) ||
        rd32(lh) != ZIP_SIG_LOCAL)
        return zip_member_bad(&tmp, "has no local header where the directory says");
    uint64_t data = e->local_offset + 30 + rd16(lh + 26) + rd16(lh + 28);
    if (data > z->size || e->csize > z->size - data) return zip_member_bad(&tmp, "lies past the end of the archive");
    struct zip_reader *r = calloc(1, sizeof *r);
    if (!r) return dream_error_set(DREAM_ENOMEM, "out of memory reading %s", z->name);
    r->z = z;
    r->e = e;
    r->in_off = data;
    r->in_left = e->csize;
    r->crc = crc32(0, Z_NULL, 0);
    if (e->method == 8) {
        if (inflateInit2(&r->zs, -MAX_WBITS) != Z_OK) {
            free(r);
            return dream_error_set(DREAM_ENOMEM, "cannot start inflating %s", z->name);
        }
        r->inflating = true;
    }
    return istream_init_reader(s, zip_reader_read, zip_reader_close, r);
}
