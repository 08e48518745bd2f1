/*
 * gunzip.h - one gzip member at a time, header and trailer checked
 * (gunzip.c): through Intel ISA-L when configure found it, else zlib.
 *
 * decode.c owns the stream: the raw input, the gap between members, what
 * may follow the last one.  This module owns what is inside a member, so
 * that both inflaters answer the same input with the same verdict and the
 * same words.
 */
#ifndef SAFE_EXTRACT_GUNZIP_H
#define SAFE_EXTRACT_GUNZIP_H

#include <stddef.h>

struct gunzip;

enum gunzip_status {
	GUNZIP_OK,		/* went as far as the buffers allow */
	GUNZIP_MEMBER_END,	/* the trailer read, CRC32 and ISIZE match */
	GUNZIP_ERROR,		/* the member is damaged: see *msg, *err */
};

/* A decoder for the first member.  0, or -ENOMEM. */
int gunzip_new(struct gunzip **g);
void gunzip_free(struct gunzip *g);
/* Forget the member just ended: the next input starts a new header. */
void gunzip_next_member(struct gunzip *g);
/*
 * Inflate from *in (*in_len bytes) into *out (*out_len bytes of room),
 * advancing all four past what was used.  On GUNZIP_ERROR, *err is an
 * errno value and *msg a static text without the "gzip: " prefix.  With
 * input left, room left and GUNZIP_OK, the member needs more input; the
 * caller tells a truncated member by a call that, given no input, made
 * no output.
 */
enum gunzip_status gunzip_inflate(struct gunzip *g,
				  const unsigned char **in, size_t *in_len,
				  unsigned char **out, size_t *out_len,
				  int *err, const char **msg);

#endif
