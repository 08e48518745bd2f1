/*
 * test-cabraw.c - cabraw_names() on the CFFILE records a hostile cabinet
 * could hold to make the names the reader takes differ from the ones
 * libarchive read, or to make the parser read past its bytes: one row
 * per shape, with the verdict and, when accepted, the names taken.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/cabraw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"
#define NFC "caf\xc3\xa9"
#define UTF 0x80

struct file {
	const char *name;
	unsigned attr;
};

/* A CFHEADER (FLAGS, ICAB; GAP bytes between it and the records, as a
 * reserve area or the CFFOLDERs take), then a CFFILE record for each of
 * FILES; COUNT files said. */
static void cab(struct buf *b, const struct file *files, size_t nfiles, size_t count,
		unsigned flags, unsigned icab, size_t gap)
{
	put(b, "MSCF", 4);
	put32(b, 0);
	put32(b, 0);			/* cbCabinet: not checked */
	put32(b, 0);
	put32(b, 36 + gap);		/* coffFiles */
	put32(b, 0);
	put(b, "\3\1", 2);
	put16(b, 1);			/* cFolders */
	put16(b, (unsigned)count);
	put16(b, flags);
	put16(b, 0);
	put16(b, icab);
	for (size_t i = 0; i < gap; i++)
		put(b, "\0", 1);
	for (size_t i = 0; i < nfiles; i++) {
		put32(b, 4);
		put32(b, 4 * i);
		put16(b, 0);
		put32(b, 0);
		put16(b, files[i].attr);
		put(b, files[i].name, strlen(files[i].name) + 1);
	}
}

static const struct file two[] = { { NFD, UTF }, { NFC, UTF } };

static void c_two(struct buf *b)
{
	cab(b, two, 2, 2, 0, 0, 0);
}

static void c_reserve(struct buf *b)
{
	cab(b, two, 2, 2, 0x0004, 0, 8 + 16);
}

static void c_backslash(struct buf *b)
{
	static const struct file f[] = { { "dir\\" NFD, UTF }, { "a\\b\\" NFC, UTF } };

	cab(b, f, 2, 2, 0, 0, 0);
}

static void c_not_utf8(struct buf *b)
{
	static const struct file f[] = { { NFD, 0 }, { NFC, UTF } };

	cab(b, f, 2, 2, 0, 0, 0);
}

/* A long name: libarchive reads up to the NUL in what it has read
 * ahead, not a fixed length. */
static void c_long(struct buf *b)
{
	static char name[301];
	struct file f[1] = { { name, UTF } };

	memset(name, 'a', 300);
	cab(b, f, 1, 1, 0, 0, 0);
}

static void c_trailing(struct buf *b)
{
	c_two(b);
	put(b, "x", 1);
}

static void c_cut(struct buf *b)
{
	c_two(b);
	b->n -= 1;
}

static void c_empty(struct buf *b)
{
	static const struct file f[] = { { "", UTF }, { NFC, UTF } };

	cab(b, f, 2, 2, 0, 0, 0);
}

static void c_more_said(struct buf *b)
{
	cab(b, two, 2, 3, 0, 0, 0);
}

static void c_fewer_said(struct buf *b)
{
	cab(b, two, 2, 1, 0, 0, 0);
}

static void c_none(struct buf *b)
{
	cab(b, two, 0, 0, 0, 0, 0);
}

static void c_prev(struct buf *b)
{
	cab(b, two, 2, 2, 0x0001, 0, 0);
}

static void c_next(struct buf *b)
{
	cab(b, two, 2, 2, 0x0002, 0, 0);
}

static void c_icab(struct buf *b)
{
	cab(b, two, 2, 2, 0, 1, 0);
}

static void c_magic(struct buf *b)
{
	c_two(b);
	b->b[0] = 'Z';
}

static void c_coff_past(struct buf *b)
{
	c_two(b);
	b->b[16] = (unsigned char)(b->n + 1);
	b->b[17] = (unsigned char)((b->n + 1) >> 8);
}

static void c_coff_inside(struct buf *b)
{
	c_two(b);
	b->b[16] = 20;
}

static void c_short(struct buf *b)
{
	c_two(b);
	b->n = 35;
}

/* A record cut inside its fixed part, at the end of the bytes. */
static void c_cut_fixed(struct buf *b)
{
	static const struct file f[] = { { NFD, UTF } };

	cab(b, f, 1, 2, 0, 0, 0);
	put(b, "\0\0\0\0\0\0\0\0", 8);
}

static const struct {
	const char *attack;
	void (*build)(struct buf *);
	enum cabraw_result want;
	const char *name[2];		/* NULL: CABRAW_NOT_UTF8 */
} cases[] = {
	{ "two names differing only in normalisation: both kept as stored", c_two, CABRAW_OK, { NFD, NFC } },
	{ "a reserve area between the header and the records", c_reserve, CABRAW_OK, { NFD, NFC } },
	{ "'\\' read as '/', as libarchive reads it", c_backslash, CABRAW_OK, { "dir/" NFD, "a/b/" NFC } },
	{ "a name not flagged UTF-8: libarchive's (not composed)", c_not_utf8, CABRAW_OK, { NULL, NFC } },
	{ "a name of 300 bytes", c_long, CABRAW_OK, { "", NULL } },
	{ "a byte after the last record: not the records libarchive read", c_trailing, CABRAW_BAD, { NULL, NULL } },
	{ "the last name cut before its NUL: never read past N", c_cut, CABRAW_BAD, { NULL, NULL } },
	{ "a record cut in its fixed part", c_cut_fixed, CABRAW_BAD, { NULL, NULL } },
	{ "an empty name (libarchive refuses it)", c_empty, CABRAW_BAD, { NULL, NULL } },
	{ "more files said than records", c_more_said, CABRAW_BAD, { NULL, NULL } },
	{ "fewer files said than records", c_fewer_said, CABRAW_BAD, { NULL, NULL } },
	{ "no files (libarchive refuses it)", c_none, CABRAW_BAD, { NULL, NULL } },
	{ "a set's later cabinet (PREV_CABINET)", c_prev, CABRAW_BAD, { NULL, NULL } },
	{ "a set's earlier cabinet (NEXT_CABINET)", c_next, CABRAW_BAD, { NULL, NULL } },
	{ "a cabinet numbered 1 in its set", c_icab, CABRAW_BAD, { NULL, NULL } },
	{ "no MSCF signature", c_magic, CABRAW_BAD, { NULL, NULL } },
	{ "records said to start past the bytes", c_coff_past, CABRAW_BAD, { NULL, NULL } },
	{ "records said to start inside the header", c_coff_inside, CABRAW_BAD, { NULL, NULL } },
	{ "a header of 35 bytes", c_short, CABRAW_BAD, { NULL, NULL } },
};

int main(void)
{
	size_t ncases = sizeof(cases) / sizeof(cases[0]);

	tap_plan((int)ncases + 1);
	for (size_t i = 0; i < ncases; i++) {
		struct buf b = { .n = 0 };
		struct cabraw_names nm;
		enum cabraw_result r;
		unsigned char *copy;
		int ok;

		cases[i].build(&b);
		/* The bytes alone, so that AddressSanitizer sees a read past
		 * them. */
		copy = malloc(b.n);
		if (!copy)
			return 99;
		memcpy(copy, b.b, b.n);
		r = cabraw_names(copy, b.n, &nm);
		free(copy);
		ok = r == cases[i].want;
		if (ok && r == CABRAW_OK && cases[i].build == c_long) {
			ok = nm.count == 1 && nm.at[0] != CABRAW_NOT_UTF8 &&
			     strlen(nm.text + nm.at[0]) == 300;
		} else if (ok && r == CABRAW_OK) {
			ok = nm.count == 2;
			for (size_t k = 0; ok && k < 2; k++)
				ok = cases[i].name[k] ?
				     nm.at[k] != CABRAW_NOT_UTF8 &&
				     strcmp(nm.text + nm.at[k], cases[i].name[k]) == 0 :
				     nm.at[k] == CABRAW_NOT_UTF8;
		}
		if (r != CABRAW_OK)
			ok = ok && nm.count == 0 && !nm.text && !nm.at;
		cabraw_names_free(&nm);
		tap_ok(ok, "%s", cases[i].attack);
	}
	tap_ok(cabraw_names((const unsigned char *)"", 0, &(struct cabraw_names){ 0 }) ==
	       CABRAW_BAD, "no bytes");
	return tap_done();
}
