/*
 * paxraw.h - a tar entry's pax extended header as the archive stores it.
 *
 * libarchive hands out pax "path" and "linkpath" values only after its
 * conversion from UTF-8, which composes them (NFC): "cafe\u0301" and
 * "caf\u00e9" become one name and one overwrites the other (issue 23).
 * The reader (input.c) keeps the stream bytes that libarchive may still
 * be parsing as headers (struct paxraw_tail); paxraw_parse() reads the
 * header chain from them again, strictly, so the reader can give the
 * entry the names' own bytes.  Nothing here trusts the bytes: anything
 * not exactly as expected is PAXRAW_BAD, and the reader keeps
 * libarchive's names.
 */
#ifndef SAFE_EXTRACT_PAXRAW_H
#define SAFE_EXTRACT_PAXRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most bytes of earlier blocks kept for one header chain: a pax
 * header with names, xattrs and a directory's dumpdir; a chain longer
 * than this (and than the block libarchive holds) keeps libarchive's
 * names. */
#define PAXRAW_TAIL_MAX (256u * 1024)

/* Contiguous bytes of the stream: offsets [start, start + n). */
struct paxraw_tail {
	unsigned char *b;
	size_t n, cap;
	uint64_t start;
};

/*
 * Add the block of LEN bytes at stream offset OFF, keeping only its
 * bytes at or after KEEP_FROM (and dropping kept bytes before it).
 * Bytes already kept are not added twice; a block that does not follow
 * the kept bytes starts them afresh; past PAXRAW_TAIL_MAX the oldest go.
 * Out of memory: nothing is kept (the names fall back, nothing fails).
 */
void paxraw_tail_add(struct paxraw_tail *t, uint64_t off, const unsigned char *p,
		     size_t len, uint64_t keep_from);
/* Forget the kept bytes: the stream goes on at OFF (a skip). */
void paxraw_tail_reset(struct paxraw_tail *t, uint64_t off);
/* The kept bytes [FROM, TO), or NULL when not all of them are kept. */
const unsigned char *paxraw_tail_span(const struct paxraw_tail *t, uint64_t from,
				      uint64_t to);
void paxraw_tail_free(struct paxraw_tail *t);

/* A record's value, as stored (not NUL-terminated). */
struct paxraw_value {
	const unsigned char *p;
	size_t n;
	bool set;
};

struct paxraw {
	/* The last record of each key in the entry's 'x' header. */
	struct paxraw_value path, linkpath, sparse_name, dumpdir;
	bool binary;			/* hdrcharset=BINARY: no conversion */
	bool sparse_map;		/* GNU.sparse.major=1: a map follows */
	char typeflag;			/* the entry's own header's */
	size_t length;			/* from the first block through that header */
};

enum paxraw_result {
	PAXRAW_NONE,			/* a clean chain without an 'x' header */
	PAXRAW_OK,			/* [zero blocks] ['g' ...] 'x' header */
	PAXRAW_BAD,			/* anything else: keep libarchive's names */
};

/*
 * Parse the N bytes at P as the headers of one tar entry: 512-byte
 * blocks, each checksum checked, optional zero blocks and 'g' headers,
 * one 'x' header whose records are "LEN key=value\n" exactly, then the
 * entry's own header.  Another chain (two 'x', 'L', 'K', ...) is
 * PAXRAW_BAD: libarchive's reading of it is not repeated here.  The
 * values in *OUT point into P.
 */
enum paxraw_result paxraw_parse(const unsigned char *p, size_t n, struct paxraw *out);
/* Is V a name libarchive would also have kept whole: valid UTF-8 (no
 * overlong forms, no surrogates), no NUL (libarchive cuts a value at
 * its first NUL), not empty (an empty value is not used)? */
bool paxraw_name_ok(const struct paxraw_value *v);

#endif
