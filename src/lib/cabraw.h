/*
 * cabraw.h - a cabinet's file names as its CFFILE records store them.
 *
 * libarchive converts a cabinet name flagged UTF-8 (_A_NAME_IS_UTF) and
 * composes it (NFC) on the way, as it does pax, zip and 7z names
 * (paxraw.h, zipraw.h, szraw.h): "cafe\u0301" and "caf\u00e9" become one
 * name and the second file overwrites the first (issue 23).  All the
 * records sit in the bytes libarchive consumes for the first entry; the
 * reader (input.c) hands them here, and takes the names in the order of
 * the records, which is the order libarchive hands out the entries.
 * Nothing here trusts the bytes: anything not exactly as libarchive
 * reads it is CABRAW_BAD, and the reader keeps libarchive's names.
 */
#ifndef SAFE_EXTRACT_CABRAW_H
#define SAFE_EXTRACT_CABRAW_H

#include <stddef.h>
#include <stdint.h>

enum cabraw_result {
	CABRAW_OK,
	CABRAW_BAD,
};

/* The files' names, each NUL-terminated in TEXT at AT[i], '\' turned
 * into '/' as libarchive turns it; AT[i] == CABRAW_NOT_UTF8 for a name
 * not flagged UTF-8, which libarchive does not compose. */
#define CABRAW_NOT_UTF8 SIZE_MAX
struct cabraw_names {
	char *text;
	size_t *at;
	size_t count;
};

/* Parse the N bytes at P: the cabinet from its first byte to the end of
 * its last CFFILE record, exactly. */
enum cabraw_result cabraw_names(const unsigned char *p, size_t n, struct cabraw_names *out);
void cabraw_names_free(struct cabraw_names *names);

#endif
