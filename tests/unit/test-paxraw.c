/*
 * test-paxraw.c - paxraw_parse() on header chains a hostile archive could
 * hold to make the stored name differ from the one libarchive checked, or
 * to make the parser read past what it was given: one row per shape, with
 * the verdict and, when accepted, the path the reader would use.  Then
 * paxraw_name_ok() on the UTF-8 forms a name must not take, and the tail
 * of kept bytes across blocks.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/paxraw.h"
#include "tap.h"

#define BLOCK 512

/* A ustar header block: NAME, TYPE, SIZE, and a correct checksum unless
 * BADSUM. */
static void header(unsigned char *h, const char *name, char type, unsigned long size,
		   int badsum)
{
	unsigned long sum = 0;

	memset(h, 0, BLOCK);
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011lo", size);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06lo", sum + (badsum ? 1 : 0));
	h[155] = ' ';
}

/* One chain: an 'x' header with BODY (LEN bytes), then the entry's own
 * header.  Its length into *N; the caller frees. */
static unsigned char *chain(const char *body, size_t len, int xbadsum, unsigned long xsize,
			    size_t *n)
{
	size_t padded = (len + BLOCK - 1) / BLOCK * BLOCK;
	unsigned char *p = calloc(1, 2 * BLOCK + padded);

	header(p, "PaxHeaders/x", 'x', xsize == (unsigned long)-1 ? len : xsize, xbadsum);
	memcpy(p + BLOCK, body, len);
	header(p + BLOCK + padded, "ascii-name", '0', 0, 0);
	*n = 2 * BLOCK + padded;
	return p;
}

#define REC(s) s, sizeof(s) - 1

static const struct {
	const char *attack;
	const char *body;
	size_t len;
	int xbadsum;
	unsigned long xsize;	/* (unsigned long)-1: the body's length */
	enum paxraw_result want;
	const char *path;	/* PAXRAW_OK: the path record read */
} cases[] = {
	{ "NFD path kept as stored", REC("15 path=cafe\xcc\x81\n"), 0, -1, PAXRAW_OK, "cafe\xcc\x81" },
	{ "the last path record wins, as in libarchive", REC("11 path=aa\n11 path=bb\n"), 0, -1, PAXRAW_OK, "bb" },
	{ "unknown keys are skipped", REC("14 SCHILY.x=y\n9 path=p\n"), 0, -1, PAXRAW_OK, "p" },
	{ "value holding '=' is the value", REC("12 path=a=b\n"), 0, -1, PAXRAW_OK, "a=b" },
	{ "../ stored is returned as stored (the name checks refuse it)", REC("15 path=../x/y\n"), 0, -1, PAXRAW_OK, "../x/y" },
	{ "length one short: no newline where it says", REC("11 path=abc\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "length one long: runs into the next record", REC("13 path=abc\n9 path=p\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "the last byte of a record is not a newline", REC("12 path=abcX"), 0, -1, PAXRAW_BAD, NULL },
	{ "length past the body", REC("99 path=abc\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "no space after the length", REC("11path=abcd\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "no digits", REC(" path=abc\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "a length of 21 digits would overflow", REC("000000000000000000012 path=a\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "no '=' in the record", REC("9 pathab\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "empty key", REC("7 =abc\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "NUL in the key: libarchive would read another key", REC("12 pa\0th=ab\n"), 0, -1, PAXRAW_BAD, NULL },
	{ "the 'x' header's checksum is wrong", REC("11 path=ab\n"), 1, -1, PAXRAW_BAD, NULL },
	{ "size claims more than the chain holds", REC("11 path=ab\n"), 0, 4096, PAXRAW_BAD, NULL },
};

int main(void)
{
	size_t ncases = sizeof(cases) / sizeof(cases[0]);
	unsigned char *p, *two;
	struct paxraw px;
	size_t n;

	tap_plan((int)ncases + 14);
	for (size_t i = 0; i < ncases; i++) {
		enum paxraw_result r;
		int ok;

		p = chain(cases[i].body, cases[i].len, cases[i].xbadsum, cases[i].xsize, &n);
		r = paxraw_parse(p, n, &px);
		ok = r == cases[i].want;
		if (ok && r == PAXRAW_OK)
			ok = px.path.set && px.path.n == strlen(cases[i].path) &&
			     memcmp(px.path.p, cases[i].path, px.path.n) == 0 &&
			     px.length == n && px.typeflag == '0';
		tap_ok(ok, "%s", cases[i].attack);
		free(p);
	}

	/* Shapes of the chain itself. */
	p = chain(REC("11 path=ab\n"), 0, -1, &n);
	tap_ok(paxraw_parse(p, n - 1, &px) == PAXRAW_BAD,
	       "the entry's own header cut short: never read past N");
	/* x, its body, x, its body, the entry's header. */
	two = calloc(1, n + 2 * BLOCK);
	memcpy(two, p, 2 * BLOCK);
	memcpy(two + 2 * BLOCK, p, n);
	tap_ok(paxraw_parse(two, n + 2 * BLOCK, &px) == PAXRAW_BAD,
	       "two 'x' headers in one chain: libarchive's order not repeated");
	header(two, "././@LongLink", 'L', 11, 0);
	tap_ok(paxraw_parse(two, n + 2 * BLOCK, &px) == PAXRAW_BAD,
	       "a GNU 'L' long name before the 'x': libarchive's own reading");
	free(two);
	two = calloc(1, n + BLOCK);
	memcpy(two + BLOCK, p, n);
	tap_ok(paxraw_parse(two, n + BLOCK, &px) == PAXRAW_OK && px.length == n + BLOCK,
	       "a zero block before the chain (tar -i) is skipped");
	free(two);
	free(p);
	p = calloc(1, BLOCK);
	header(p, "plain", '0', 0, 0);
	tap_ok(paxraw_parse(p, BLOCK, &px) == PAXRAW_NONE, "a plain ustar header: no pax names");
	free(p);
	p = chain(REC("18 GNU.dumpdir=Ya\n"), 0, -1, &n);
	tap_ok(paxraw_parse(p, n, &px) == PAXRAW_OK && px.dumpdir.set && px.dumpdir.n == 2,
	       "GNU.dumpdir read as stored");
	free(p);
	p = chain(REC("21 hdrcharset=BINARY\n"), 0, -1, &n);
	tap_ok(paxraw_parse(p, n, &px) == PAXRAW_OK && px.binary, "hdrcharset=BINARY is seen");
	free(p);

	/* What a name may hold to be used instead of libarchive's. */
	{
		static const struct { const char *what, *s; size_t n; bool ok; } names[] = {
			{ "NFD e + U+0301", "cafe\xcc\x81", 6, true },
			{ "overlong '/' (C0 AF) would hide a separator", "a\xc0\xaf" "b", 4, false },
			{ "UTF-16 surrogate (ED A0 80)", "\xed\xa0\x80", 3, false },
			{ "past U+10FFFF (F4 90 80 80)", "\xf4\x90\x80\x80", 4, false },
			{ "NUL inside: libarchive cuts there", "a\0b", 3, false },
		};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			struct paxraw_value v = { (const unsigned char *)names[i].s, names[i].n, true };

			tap_ok(paxraw_name_ok(&v) == names[i].ok, "name: %s", names[i].what);
		}
	}

	/* The tail joins blocks and gives back only what it kept. */
	{
		struct paxraw_tail t = { 0 };
		unsigned char a[100], b[100];
		const unsigned char *s;

		memset(a, 'a', sizeof(a));
		memset(b, 'b', sizeof(b));
		paxraw_tail_reset(&t, 0);
		paxraw_tail_add(&t, 0, a, sizeof(a), 90);	/* drop before 90: no buffer yet */
		paxraw_tail_add(&t, 100, b, sizeof(b), 90);
		s = paxraw_tail_span(&t, 90, 110);
		tap_ok(s && s[0] == 'a' && s[9] == 'a' && s[10] == 'b' && s[19] == 'b' &&
		       !paxraw_tail_span(&t, 80, 110),
		       "tail: the end of one block and the start of the next, nothing before");
		paxraw_tail_add(&t, 300, a, sizeof(a), 300);
		tap_ok(!paxraw_tail_span(&t, 90, 110) && paxraw_tail_span(&t, 300, 400),
		       "tail: a gap in the stream starts afresh");
		paxraw_tail_free(&t);
	}
	return tap_done();
}
