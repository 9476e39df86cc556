/*
 * sha256.h — SHA-256 (FIPS 180-4), streaming. Used for stable content hashes and ids derived
 * from them (conversation citation hashes, file hashes as provenance).
 */
#ifndef DREAM_UTIL_SHA256_H
#define DREAM_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t total; /* bytes hashed so far */
    uint8_t block[64];
    size_t fill; /* bytes waiting in block */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Writes the 32-byte digest; s must be re-initialised before reuse. */
void sha256_final(struct sha256 *s, uint8_t digest[32]);
/* Lowercase hex of a digest: 64 characters and a NUL. */
void sha256_hex(const uint8_t digest[32], char hex[65]);
/* One-shot helper: hex digest of data. */
void sha256_hex_of(const void *data, size_t len, char hex[65]);

#endif
