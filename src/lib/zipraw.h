/*
 * zipraw.h - a zip entry's local file header as the archive stores it.
 *
 * libarchive converts a zip name from UTF-8 (general-purpose flag bit 11,
 * or an Info-ZIP Unicode Path extra field, 0x7075) and composes it (NFC)
 * on the way, as it does pax names (paxraw.h): "cafe\u0301" and
 * "caf\u00e9" become one name and the second entry overwrites the first
 * (issue 23).  It reads a stored symlink's target the same way.  The
 * reader (input.c) keeps the bytes libarchive consumed for an entry's
 * header; zipraw_local() finds the local file header in them again, so
 * the reader can give the entry the name's own bytes.  Nothing here
 * trusts the bytes: anything not exactly as expected is ZIPRAW_BAD and
 * the reader keeps libarchive's names.
 */
#ifndef SAFE_EXTRACT_ZIPRAW_H
#define SAFE_EXTRACT_ZIPRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "paxraw.h"

struct zipraw {
	/* The name libarchive reads: the name field, replaced by each
	 * Unicode Path field whose CRC-32 is that of the name before it. */
	struct paxraw_value name;
	/* A stored (method 0) symlink's target, the bytes after the
	 * header; unset for another entry or method. */
	struct paxraw_value target;
	bool utf8_flag;		/* flag bit 11: name and target are UTF-8 */
	bool unicode_path;	/* the name is a Unicode Path field's */
	bool dos;		/* "made by" MS-DOS: '\' may be the separator */
	size_t start;		/* the header's offset in the bytes given */
};

enum zipraw_result {
	ZIPRAW_OK,
	ZIPRAW_BAD,		/* no header, two, or one not exactly as expected */
};

/*
 * Find the local file header in the N bytes at P that libarchive
 * consumed while reading one entry's header: anything it skipped
 * first (a data descriptor, bytes between entries), then the header,
 * its name and its extra field, and, for a symlink (SYMLINK), the
 * stored target.  A candidate is each "PK\3\4" whose header ends
 * exactly at N (for a symlink: whose stored target, as long as its
 * compressed size says, does); exactly one must be found, so that a
 * header forged inside the bytes before the real one can only make the
 * reader keep libarchive's names.  The values in *OUT point into P.
 */
enum zipraw_result zipraw_local(const unsigned char *p, size_t n, bool symlink,
				struct zipraw *out);

#endif
