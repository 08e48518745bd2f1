/*
 * isoraw.h - the Joliet names of an ISO 9660 image as its directory
 * records store them.
 *
 * An image with Joliet names and no Rock Ridge is read by libarchive
 * through its Joliet tree: UTF-16BE names, converted and composed (NFC)
 * on the way, so "cafe\u0301" and "caf\u00e9" become one name and the
 * second file overwrites the first (issue 23).  These functions read the
 * Joliet tree again as libarchive reads it (the first Joliet descriptor,
 * each directory's records block by block, the names trimmed as it trims
 * them, a path of the enclosing directories' names) and give every
 * record's path in UTF-8 without composing, with where its data lies.
 * The reader reads a directory's records when libarchive hands the
 * directory out, as libarchive reads them then: from the file, or from a
 * pipe out of the bytes libarchive has just consumed.
 * libarchive hands out the entries by data location, and leaves its
 * position at a file's data, or after a directory's records, when it
 * hands one out; the reader (input.c) matches an entry to a record by
 * that position.  Nothing here trusts the bytes: anything not as
 * libarchive would take it is ISORAW_BAD, and the reader keeps
 * libarchive's names.
 */
#ifndef SAFE_EXTRACT_ISORAW_H
#define SAFE_EXTRACT_ISORAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ISORAW_BLOCK 2048
#define ISORAW_NO_NAME ((size_t)-1)
/* The most records and directory bytes read: more keeps libarchive's
 * names. */
#define ISORAW_RECORDS_MAX (1u << 20)
#define ISORAW_DIR_BYTES_MAX (256u << 20)

enum isoraw_result {
	ISORAW_OK,
	ISORAW_BAD,
};

struct isoraw_rec {
	uint64_t start;			/* the data's (a directory's records') offset */
	uint64_t size;
	unsigned char date[7];		/* as recorded */
	bool dir;
	size_t path;			/* into TEXT, or ISORAW_NO_NAME */
};

struct isoraw_walk;

/* The records read so far, in the order read. */
struct isoraw_tree {
	struct isoraw_rec *rec;
	size_t count, cap;
	char *text;
	size_t text_len, text_cap;
	uint64_t root, root_size;	/* the root directory's records */
	struct isoraw_walk *walk;	/* isoraw.c's own */
};

#define ISORAW_ROOT ((size_t)-1)

/* LEN bytes at offset OFF of the image into BUF; false when they are not
 * all there. */
typedef bool (*isoraw_read_fn)(void *ctx, uint64_t off, size_t len, unsigned char *buf);

/* Find the Joliet tree of the image READ reads: ISORAW_BAD when it has
 * none, or its descriptor is not as libarchive would take it. */
enum isoraw_result isoraw_begin(isoraw_read_fn read, void *ctx, struct isoraw_tree *out);
/* Read the records of directory DIR (a record's index, or ISORAW_ROOT)
 * and add them.  ISORAW_BAD when anything is not as libarchive would
 * take it, or its bytes cannot be read; the records before stay. */
enum isoraw_result isoraw_children(isoraw_read_fn read, void *ctx, struct isoraw_tree *t,
				   size_t dir);
/* The whole tree at once: the root's records, then each directory's. */
enum isoraw_result isoraw_joliet(isoraw_read_fn read, void *ctx, struct isoraw_tree *out);
void isoraw_tree_free(struct isoraw_tree *tree);

#endif
