/*
 * lharaw.h - an lha header's path as stored.
 *
 * libarchive keeps an lha name's bytes unless an extended header says how
 * to read them: a UTF-16LE file or directory name (0x44, 0x45), or a code
 * page (0x46); then it converts, and composes (NFC) on the way, so
 * "cafe\u0301" and "caf\u00e9" become one name (issue 23).  The header is
 * the last thing libarchive reads before it hands the entry out, so it
 * ends where libarchive stopped.  These functions find the one header
 * there whose check holds (level 2 and 3: a CRC-16; level 1: an 8-bit
 * sum) and read its path as libarchive puts it together (directory, then
 * file name; 0xFF, U+FFFF and '\\' read as '/'), without composing.  Anything not exactly as expected, and a name in
 * any code page but UTF-8 (65001), is LHARAW_BAD: the reader (input.c)
 * keeps libarchive's name.  Level 0 headers, whose names libarchive takes
 * as they are, are not read.
 */
#ifndef SAFE_EXTRACT_LHARAW_H
#define SAFE_EXTRACT_LHARAW_H

#include <stddef.h>

enum lharaw_result {
	LHARAW_OK,
	LHARAW_BAD,
};

/* The path of the header that ends at P + N, in UTF-8, NUL-terminated in
 * *PATH (the caller frees it). */
enum lharaw_result lharaw_path(const unsigned char *p, size_t n, char **path);

#endif
