/*
 * sha256.h - SHA-256 of written data (se_entry.sha256).
 */
#ifndef SAFE_EXTRACT_SHA256_H
#define SAFE_EXTRACT_SHA256_H

#include <stdbool.h>
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

/* The digest of a file's content as its data blocks arrive, at their
 * offsets, holes as zeros.  Blocks out of order make it unavailable. */
struct block_digest {
	struct sha256 sh;
	uint64_t done;			/* bytes digested */
	bool on;
};

void block_digest_init(struct block_digest *d, bool on);
void block_digest_add(struct block_digest *d, uint64_t offset, const void *p,
		      size_t n);
/* With the file's SIZE (a hole may end it): true and OUT set when
 * available. */
bool block_digest_final(struct block_digest *d, uint64_t size,
			unsigned char out[32]);

#endif
