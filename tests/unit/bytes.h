/* bytes.h - a buffer the C unit tests build forged headers in, byte by
 * byte, little-endian (zip, 7z, cabinet). */
#ifndef SAFE_EXTRACT_TEST_BYTES_H
#define SAFE_EXTRACT_TEST_BYTES_H

#include <string.h>

struct buf {
	unsigned char b[4096];
	size_t n;
};

__attribute__((unused))
static void put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;		/* P may be NULL: memcpy() must not see it */
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

__attribute__((unused))
static void put8(struct buf *b, unsigned v)
{
	b->b[b->n++] = (unsigned char)v;
}

__attribute__((unused))
static void put16(struct buf *b, unsigned v)
{
	put8(b, v & 0xff);
	put8(b, v >> 8 & 0xff);
}

__attribute__((unused))
static void put32(struct buf *b, unsigned long v)
{
	put16(b, (unsigned)(v & 0xffff));
	put16(b, (unsigned)(v >> 16 & 0xffff));
}

#endif
