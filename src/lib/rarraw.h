/*
 * rarraw.h - a RAR 5 file header's name and link target as stored.
 *
 * RAR 5 names are UTF-8, and libarchive converts them and composes them
 * (NFC) on the way, its symlink and hardlink targets too: "cafe\u0301"
 * and "caf\u00e9" become one name and the second file overwrites the
 * first (issue 23).  The file header is the last thing libarchive reads
 * before it hands the entry out, so it ends where libarchive stopped; the
 * bytes before it in what libarchive consumed for the entry may be the
 * rest of the previous file's data, a main or a service header.  These
 * functions find the one header there that ends exactly at the end, whose
 * CRC-32 holds and that is a file header, and read it strictly.
 * Anything not exactly as expected is RARRAW_BAD, and the reader
 * (input.c) keeps libarchive's names.
 */
#ifndef SAFE_EXTRACT_RARRAW_H
#define SAFE_EXTRACT_RARRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rarraw_result {
	RARRAW_OK,
	RARRAW_BAD,
};

struct rarraw_file {
	const unsigned char *name;	/* into the bytes given */
	size_t name_len;
	const unsigned char *target;	/* a symlink's or a hardlink's; NULL: none */
	size_t target_len;
	bool hardlink;
};

/* The file header that ends at P + N, read. */
enum rarraw_result rarraw_file(const unsigned char *p, size_t n, struct rarraw_file *out);

/*
 * RAR 4 (1.5 to 4.x): a name flagged Unicode is UTF-8, or an ASCII name, a
 * NUL and the UTF-16 name in RAR's own packing, which libarchive unpacks
 * and converts (and composes).  The file header that ends at P + N (or
 * where a symlink's target, which libarchive reads with it, begins):
 * its name in UTF-8 as stored, with libarchive's one change made again
 * ('\' read as '/'), NUL-terminated in NAME (the caller frees it).
 * RARRAW_BAD also for a name not flagged Unicode: libarchive converts
 * nothing then.
 */
enum rarraw_result rarraw_file4(const unsigned char *p, size_t n, char **name);

#endif
