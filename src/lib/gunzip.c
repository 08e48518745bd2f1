/*
 * gunzip.c - one gzip member at a time, with one of two inflaters chosen
 * by configure: Intel ISA-L's isal_inflate (several times zlib's speed on
 * x86-64, the point of issue 25) or zlib (--without-isal, or no ISA-L).
 *
 * Both must give one verdict for one input: a member is good only when
 * its header is well formed (magic, method 8, no reserved flag, the
 * header CRC16 when FHCRC says there is one) and its trailer's CRC32 and
 * ISIZE both match what was inflated.  libarchive's own gzip reader skips
 * that trailer, which is why this module exists; a damaged member is
 * fatal, and tests/hardening/gzip-trailer-unverified.test runs its table
 * against whichever inflater the build has.  The words of each fault
 * are zlib's, so that a --without-isal build says what earlier releases
 * said and an ISA-L build says the same.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_ISAL
#  if HAVE_ISA_L_IGZIP_LIB_H
#    include <isa-l/igzip_lib.h>
#  else
#    include <isa-l.h>
#  endif
#else
#  include <zlib.h>
#endif

#include "gunzip.h"

/* What can be wrong inside a member, whichever library finds it. */
enum fault {
	BAD_MAGIC,		/* a later member not starting 1f 8b */
	BAD_METHOD,		/* not deflate */
	BAD_FLAGS,		/* a reserved FLG bit: a format we do not know */
	BAD_HEADER_CRC,		/* FHCRC set and the header's CRC16 wrong */
	BAD_DEFLATE,		/* the compressed data itself */
	BAD_CRC,		/* trailer CRC32 != CRC32 of the output */
	BAD_ISIZE,		/* trailer ISIZE != output size mod 2^32 */
	NO_MEMORY,
};

static const char *const fault_text[] = {
	[BAD_MAGIC] = "incorrect header check",
	[BAD_METHOD] = "unknown compression method",
	[BAD_FLAGS] = "unknown header flags set",
	[BAD_HEADER_CRC] = "header crc mismatch",
	/* zlib names a dozen kinds of bad deflate data, ISA-L three, and
	 * the two do not sort one input alike: one word for all. */
	[BAD_DEFLATE] = "damaged data",
	[BAD_CRC] = "incorrect data check",
	[BAD_ISIZE] = "incorrect length check",
	[NO_MEMORY] = "out of memory",
};

static enum gunzip_status fail(enum fault f, int *err, const char **msg)
{
	*err = f == NO_MEMORY ? ENOMEM : EILSEQ;
	*msg = fault_text[f];
	return GUNZIP_ERROR;
}

#if HAVE_ISAL

#define FLG_RESERVED 0xe0	/* RFC 1952 2.3.1: must be zero */

struct gunzip {
	struct inflate_state st;
	struct isal_gzip_header hdr;
	bool in_header;
	unsigned header_took;		/* bytes of the header so far, up to 4 */
	unsigned char flg;		/* its fourth byte, FLG */
	/* The last 8 bytes inflate took: the trailer, once it is read.
	 * ISA-L says only that the 8 bytes do not match; these tell the
	 * CRC32 from the ISIZE, as zlib's messages do. */
	unsigned char tail[8];
};

static void start_member(struct gunzip *g)
{
	isal_gzip_header_init(&g->hdr);
	g->in_header = true;
	g->header_took = 0;
	g->flg = 0;
	/* ISAL_GZIP: ISA-L reads the header and compares the trailer's 8
	 * bytes with the CRC32 and the size mod 2^32 it computed. */
	g->st.crc_flag = ISAL_GZIP;
}

int gunzip_new(struct gunzip **out)
{
	struct gunzip *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return -ENOMEM;
	isal_inflate_init(&g->st);
	start_member(g);
	*out = g;
	return 0;
}

void gunzip_free(struct gunzip *g)
{
	free(g);
}

void gunzip_next_member(struct gunzip *g)
{
	isal_inflate_reset(&g->st);
	start_member(g);
}

static void keep_tail(struct gunzip *g, const unsigned char *took, size_t n)
{
	if (n >= sizeof(g->tail)) {
		memcpy(g->tail, took + n - sizeof(g->tail), sizeof(g->tail));
	} else if (n > 0) {
		memmove(g->tail, g->tail + n, sizeof(g->tail) - n);
		memcpy(g->tail + sizeof(g->tail) - n, took, n);
	}
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static enum fault isal_fault(int r, bool header)
{
	switch (r) {
	case ISAL_INVALID_WRAPPER: return BAD_MAGIC;
	case ISAL_UNSUPPORTED_METHOD: return BAD_METHOD;
	case ISAL_INCORRECT_CHECKSUM: return header ? BAD_HEADER_CRC : BAD_CRC;
	default: return BAD_DEFLATE;
	}
}

enum gunzip_status gunzip_inflate(struct gunzip *g,
				  const unsigned char **in, size_t *in_len,
				  unsigned char **out, size_t *out_len,
				  int *err, const char **msg)
{
	struct inflate_state *st = &g->st;
	size_t took, made;
	int r = ISAL_DECOMP_OK;
	bool header = g->in_header;

	/* ISA-L does not write through next_in; its field is not const. */
	st->next_in = (uint8_t *)(uintptr_t)*in;
	st->avail_in = *in_len > UINT32_MAX ? UINT32_MAX : (uint32_t)*in_len;
	st->next_out = *out;
	st->avail_out = *out_len > UINT32_MAX ? UINT32_MAX : (uint32_t)*out_len;

	if (g->in_header) {
		/* ISA-L ignores the reserved FLG bits that zlib refuses: the
		 * header is read apart from isal_inflate, its FLG byte picked
		 * from what ISA-L took, and looked at once ISA-L has checked
		 * the magic and the method before it (its block_state has
		 * left ISAL_BLOCK_NEW_HDR). */
		size_t n;

		r = isal_read_gzip_header(st, &g->hdr);
		n = (size_t)(st->next_in - *in);
		if (g->header_took < 4 && g->header_took + n >= 4)
			g->flg = (*in)[3 - g->header_took];
		g->header_took = g->header_took + n >= 4 ? 4 : g->header_took + (unsigned)n;
		if (r >= 0 && (r == ISAL_DECOMP_OK || st->block_state != ISAL_BLOCK_NEW_HDR) &&
		    (g->flg & FLG_RESERVED))
			return fail(BAD_FLAGS, err, msg);
		if (r == ISAL_DECOMP_OK)
			g->in_header = false;
	}
	if (r >= 0 && !g->in_header) {
		header = false;
		r = isal_inflate(st);
	}

	took = (size_t)(st->next_in - *in);
	made = (size_t)(st->next_out - *out);
	keep_tail(g, *in, took);
	*in += took;
	*in_len -= took;
	*out += made;
	*out_len -= made;

	if (r == ISAL_INCORRECT_CHECKSUM && !header) {
		/* Name the field that is wrong; when both are, the CRC32,
		 * which zlib checks first. */
		if (le32(g->tail) == st->crc)
			return fail(BAD_ISIZE, err, msg);
		return fail(BAD_CRC, err, msg);
	}
	if (r < 0)
		return fail(isal_fault(r, header), err, msg);
	if (!g->in_header && st->block_state == ISAL_BLOCK_FINISH)
		return GUNZIP_MEMBER_END;
	return GUNZIP_OK;
}

#else /* zlib */

struct gunzip {
	z_stream zs;
};

int gunzip_new(struct gunzip **out)
{
	struct gunzip *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (!g)
		return -ENOMEM;
	/* 16 + MAX_WBITS: the gzip wrapper only, its trailer checked. */
	if (inflateInit2(&g->zs, 16 + MAX_WBITS) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void gunzip_free(struct gunzip *g)
{
	if (!g)
		return;
	inflateEnd(&g->zs);
	free(g);
}

void gunzip_next_member(struct gunzip *g)
{
	inflateReset(&g->zs);
}

/* zlib tells its faults apart only by text; a text it may use one day
 * and we do not know is still fatal, as bad deflate data. */
static enum fault zlib_fault(const char *text)
{
	static const enum fault known[] = {
		BAD_MAGIC, BAD_METHOD, BAD_FLAGS, BAD_HEADER_CRC, BAD_CRC, BAD_ISIZE,
	};

	for (size_t i = 0; text && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(text, fault_text[known[i]]) == 0)
			return known[i];
	return BAD_DEFLATE;
}

enum gunzip_status gunzip_inflate(struct gunzip *g,
				  const unsigned char **in, size_t *in_len,
				  unsigned char **out, size_t *out_len,
				  int *err, const char **msg)
{
	z_stream *zs = &g->zs;
	size_t took, made;
	int zr;

	zs->next_in = (Bytef *)(uintptr_t)*in;
	zs->avail_in = *in_len > UINT32_MAX ? UINT32_MAX : (uInt)*in_len;
	zs->next_out = *out;
	zs->avail_out = *out_len > UINT32_MAX ? UINT32_MAX : (uInt)*out_len;
	zr = inflate(zs, Z_NO_FLUSH);
	took = (size_t)(zs->next_in - *in);
	made = (size_t)(zs->next_out - *out);
	*in += took;
	*in_len -= took;
	*out += made;
	*out_len -= made;

	switch (zr) {
	case Z_STREAM_END: return GUNZIP_MEMBER_END;
	case Z_OK:
	case Z_BUF_ERROR: return GUNZIP_OK;
	case Z_MEM_ERROR: return fail(NO_MEMORY, err, msg);
	case Z_DATA_ERROR: return fail(zlib_fault(zs->msg), err, msg);
	default: return fail(BAD_DEFLATE, err, msg);
	}
}

#endif
