/*
 * zip.h — a small, bounded ZIP reader: enough to stream one member (stored or deflated) out of
 * an export archive. Reads the central directory (ZIP64 included), never trusts a size it has
 * not checked: members must lie inside the archive, may not claim more than a deflate stream can
 * produce (about 1032:1) nor more than ZIP_MAX_MEMBER bytes, and inflate to exactly their
 * declared size and CRC-32, else the read fails (a truncated download, a corrupt file or a zip
 * bomb) with a message naming the archive and member.
 */
#ifndef DREAM_INGEST_ZIP_H
#define DREAM_INGEST_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZIP_MAX_MEMBER ((uint64_t)64 << 30)
#define ZIP_MAX_ENTRIES 1000000

struct zip_entry {
    char *name;
    uint16_t flags, method;
    uint32_t crc;
    uint64_t csize, usize, local_offset;
};

struct zip {
    int (*read_at)(void *ctx, uint64_t off, void *buf, size_t n); /* exactly n bytes or an error */
    void (*close)(void *ctx);
    void *ctx;
    uint64_t size;
    char *name; /* for messages */
    struct zip_entry *entries;
    size_t n;
};

/* True when head starts with a ZIP local file header or an empty archive's end record. */
bool zip_looks_like(const void *head, size_t n);

/* Opens an archive and reads its central directory. DREAM_EFORMAT for a non-ZIP, a truncated
 * or corrupt one; the message names path. Close with zip_close. */
int zip_open_file(const char *path, struct zip **out);
/* Same over a buffer the caller keeps alive; name is used in messages. */
int zip_open_mem(const void *data, size_t len, const char *name, struct zip **out);
void zip_close(struct zip *z);

/* Finds the member whose base name is base (the shallowest when several); DREAM_ENOTFOUND. */
int zip_find(const struct zip *z, const char *base, size_t *index);

/* Reading a member is istream_open_zip (istream.h). */

#endif
