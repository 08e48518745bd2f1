/*
 * sha256.h - SHA-256 of written data (se_entry.sha256).
 */
#ifndef SAFE_EXTRACT_SHA256_H
#define SAFE_EXTRACT_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;			/* bytes so far */
	unsigned char buf[64];
	size_t used;			/* bytes in buf */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* N zero bytes: the holes of a sparse file are part of its content. */
void sha256_zeros(struct sha256 *s, uint64_t n);
void sha256_final(struct sha256 *s, unsigned char out[32]);

#endif
