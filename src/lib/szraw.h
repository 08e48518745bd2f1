/*
 * szraw.h - a 7z archive's file names as its header stores them.
 *
 * libarchive converts 7z names from UTF-16LE and composes them (NFC) on
 * the way, as it does pax and zip names (paxraw.h, zipraw.h):
 * "cafe\u0301" and "caf\u00e9" become one name and the second file
 * overwrites the first (issue 23).  7z keeps every name in one header at
 * the archive's end, usually compressed (an "encoded header").  The
 * reader (input.c) reads the bytes again; these functions parse them,
 * strictly, and give the names in UTF-8 without composing, in the order
 * of the files, which is the order libarchive hands out the entries.
 * Nothing here trusts the bytes: anything not exactly as expected is
 * SZRAW_BAD, and the reader keeps libarchive's names.
 */
#ifndef SAFE_EXTRACT_SZRAW_H
#define SAFE_EXTRACT_SZRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SZRAW_START_LEN 32		/* the signature header */
/* The most bytes read for a header, packed or unpacked: a larger one
 * keeps libarchive's names. */
#define SZRAW_HEADER_MAX (64u * 1024 * 1024)

enum szraw_result {
	SZRAW_OK,
	SZRAW_BAD,
};

/* Where the next header is (from the end of the signature header), its
 * size and CRC-32; the start header's own CRC-32 checked. */
struct szraw_start {
	uint64_t offset, size;
	uint32_t crc;
};
enum szraw_result szraw_start(const unsigned char *p, size_t n, struct szraw_start *out);

/* An encoded header: one packed stream (from the end of the signature
 * header) that one coder turns into the header. */
struct szraw_packed {
	uint64_t pos, size;		/* the packed stream */
	uint64_t unpacked;		/* the header's size */
	uint32_t crc;			/* of the header, when HAS_CRC */
	bool has_crc;
	unsigned char method[4];	/* the coder's id: copy, LZMA, LZMA2 */
	size_t method_len;
	const unsigned char *props;	/* its properties, into the header */
	size_t props_len;
};
/* Parse the N bytes at P, which start with kEncodedHeader. */
enum szraw_result szraw_encoded(const unsigned char *p, size_t n, struct szraw_packed *out);
/* Unpack IN (PK->size bytes) into OUT (PK->unpacked bytes), the CRC-32
 * checked when the header gives one. */
enum szraw_result szraw_unpack(const struct szraw_packed *pk, const unsigned char *in,
			       unsigned char *out);

/* The files' names, UTF-8, each NUL-terminated in TEXT at AT[i];
 * AT[i] == SZRAW_NO_NAME for a name that is not valid UTF-16 or empty. */
#define SZRAW_NO_NAME SIZE_MAX
struct szraw_names {
	char *text;
	size_t *at;
	size_t count;
};
/* Parse the N bytes at P, which start with kHeader, for the names. */
enum szraw_result szraw_names(const unsigned char *p, size_t n, struct szraw_names *out);
void szraw_names_free(struct szraw_names *names);

uint32_t szraw_crc32(const unsigned char *p, size_t n);

#endif
