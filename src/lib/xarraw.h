/*
 * xarraw.h - a xar archive's file names as its table of contents stores
 * them.
 *
 * libarchive converts xar names and symlink targets from UTF-8 and
 * composes them (NFC) on the way, as it does pax, zip, 7z and cabinet
 * names: "cafe\u0301" and "caf\u00e9" become one name and the second
 * file overwrites the first (issue 23).  A xar keeps every name in its
 * table of contents (TOC), zlib-compressed XML after a 28-byte header.
 * The reader (input.c) reads those bytes again; these functions inflate
 * and parse them with the XML reader libarchive uses (libxml2), walk the
 * elements as libarchive's reader does (which <name> is a file's, which
 * directories it does not hand out, the path made of the enclosing
 * files' names), and give the names in the order libarchive hands out
 * the entries: by file id.  Nothing here trusts the bytes: anything not
 * exactly as expected is XARRAW_BAD, and the reader keeps libarchive's
 * names; input.c checks each name against libarchive's besides.
 */
#ifndef SAFE_EXTRACT_XARRAW_H
#define SAFE_EXTRACT_XARRAW_H

#include <stddef.h>
#include <stdint.h>

#define XARRAW_HEADER_LEN 28
/* The largest TOC read, packed or plain: a larger one keeps libarchive's
 * names. */
#define XARRAW_TOC_MAX (64u * 1024 * 1024)
#define XARRAW_NO_NAME ((size_t)-1)

enum xarraw_result {
	XARRAW_OK,
	XARRAW_BAD,
};

/* The header's TOC sizes: packed (the zlib stream right after the
 * header) and plain. */
enum xarraw_result xarraw_header(const unsigned char *p, size_t n, uint64_t *packed,
				 uint64_t *plain);

/*
 * The entries libarchive hands out, in its order: the Nth one's path at
 * TEXT + PATH[N] and its symlink target at TEXT + LINK[N], each
 * NUL-terminated; XARRAW_NO_NAME for none, or for one that holds a NUL.
 */
struct xarraw_names {
	char *text;
	size_t *path, *link;
	size_t count;
};

/* Inflate the N bytes at PACKED into exactly PLAIN bytes and read the
 * names.  OUT is empty on XARRAW_BAD. */
enum xarraw_result xarraw_names(const unsigned char *packed, size_t n, uint64_t plain,
				struct xarraw_names *out);
void xarraw_names_free(struct xarraw_names *names);

#endif
