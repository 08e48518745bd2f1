/*
 * cabraw.c - a cabinet's CFFILE records read again for their names, so
 * that they keep the archive's bytes (issue 23).  The layout is
 * Microsoft's Cabinet File Format; the checks are the ones libarchive's
 * reader makes, so that a cabinet it reads is one this reads the same.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cabraw.h"

#define CFHEADER_LEN 36
#define CFFILE_LEN 16
#define ATTR_NAME_IS_UTF 0x80
#define PREV_CABINET 0x0001
#define NEXT_CABINET 0x0002

static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

enum cabraw_result cabraw_names(const unsigned char *p, size_t n, struct cabraw_names *out)
{
	size_t files, at, o = 0;
	uint32_t coff;

	*out = (struct cabraw_names){ 0 };
	if (n < CFHEADER_LEN || memcmp(p, "MSCF", 4) != 0)
		return CABRAW_BAD;
	coff = le32(p + 16);
	files = le16(p + 28);
	/* A cabinet of a set: libarchive does not read it as one. */
	if ((le16(p + 30) & (PREV_CABINET | NEXT_CABINET)) || le16(p + 34) != 0 ||
	    files == 0 || coff < CFHEADER_LEN || coff > n)
		return CABRAW_BAD;
	/* Each record takes at least CFFILE_LEN + 2 bytes: the names take
	 * no more room than the bytes, with a NUL each. */
	out->text = malloc(n - coff + 1);
	out->at = malloc(files * sizeof(*out->at));
	if (!out->text || !out->at)
		goto bad;
	at = coff;
	for (size_t k = 0; k < files; k++) {
		const unsigned char *name, *end;
		size_t len;

		if (n - at < CFFILE_LEN + 2)
			goto bad;
		name = p + at + CFFILE_LEN;
		len = n - at - CFFILE_LEN;
		end = memchr(name, '\0', len);
		if (!end || end == name)
			goto bad;	/* no NUL before the end, or an empty name */
		len = (size_t)(end - name);
		if (p[at + 14] & ATTR_NAME_IS_UTF) {
			out->at[k] = o;
			for (size_t i = 0; i < len; i++)
				out->text[o++] = name[i] == '\\' ? '/' : (char)name[i];
			out->text[o++] = '\0';
		} else {
			out->at[k] = CABRAW_NOT_UTF8;
		}
		at += CFFILE_LEN + len + 1;
	}
	/* libarchive stopped reading at the last record's end: bytes after
	 * it mean these are not the records it read. */
	if (at != n)
		goto bad;
	out->count = files;
	return CABRAW_OK;
bad:
	cabraw_names_free(out);
	return CABRAW_BAD;
}

void cabraw_names_free(struct cabraw_names *names)
{
	free(names->text);
	free(names->at);
	*names = (struct cabraw_names){ 0 };
}
