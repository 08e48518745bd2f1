/*
 * test-zipraw.c - zipraw_local() on the bytes a hostile zip could put
 * before, inside or after an entry's local file header to make the name
 * the reader takes differ from the one libarchive read, or to make the
 * finder read past what it was given: one row per shape, with the
 * verdict and, when accepted, the name (and symlink target) taken.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/zipraw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"
#define FLAG_UTF8 0x800

/* A local file header: SYSTEM in "version needed"'s high byte, as
 * libarchive reads it; NAME, then EXTRA (EXTRA_LEN bytes). */
static void local(struct buf *b, unsigned flags, unsigned method, unsigned system,
		  unsigned long csize, const char *name, const void *extra, size_t extra_len)
{
	put(b, "PK\3\4", 4);
	put16(b, 20 | system << 8);
	put16(b, flags);
	put16(b, method);
	put32(b, 0);			/* time, date */
	put32(b, 0);			/* CRC-32 */
	put32(b, csize);
	put32(b, csize);
	put16(b, (unsigned)strlen(name));
	put16(b, (unsigned)extra_len);
	put(b, name, strlen(name));
	put(b, extra, extra_len);
}

/* zip's CRC-32, for the Unicode Path field. */
static unsigned long crc(const char *s)
{
	unsigned long c = 0xffffffffUL;

	for (; *s; s++) {
		c ^= (unsigned char)*s;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320UL & (0UL - (c & 1)));
	}
	return ~c & 0xffffffffUL;
}

/* A Unicode Path extra block naming NAME, its CRC-32 that of OF. */
static size_t unicode_path(unsigned char *x, const char *of, const char *name)
{
	struct buf b = { .n = 0 };

	put16(&b, 0x7075);
	put16(&b, (unsigned)(5 + strlen(name)));
	put(&b, "\1", 1);
	put32(&b, crc(of));
	put(&b, name, strlen(name));
	memcpy(x, b.b, b.n);
	return b.n;
}

static void plain(struct buf *b)
{
	local(b, FLAG_UTF8, 0, 3, 4, NFD, NULL, 0);
}

static void no_flag(struct buf *b)
{
	local(b, 0, 0, 3, 4, NFD, NULL, 0);
}

static void msdos(struct buf *b)
{
	local(b, FLAG_UTF8, 0, 0, 4, "dir\\" NFD, NULL, 0);
}

static void after_descriptor(struct buf *b)
{
	put(b, "PK\7\x08", 4);
	put32(b, 0x12345678UL);
	put32(b, 4);
	put32(b, 4);
	local(b, FLAG_UTF8, 0, 3, 4, NFD, NULL, 0);
}

static void junk_between(struct buf *b)
{
	put(b, "junk PK\1 not a header ", 22);
	local(b, FLAG_UTF8, 0, 3, 4, NFD, NULL, 0);
}

static void trailing_byte(struct buf *b)
{
	plain(b);
	put(b, "x", 1);
}

static void cut_name(struct buf *b)
{
	plain(b);
	b->n -= 1;
}

static void cut_fixed(struct buf *b)
{
	plain(b);
	b->n = 20;
}

static void nothing(struct buf *b)
{
	put(b, "no header here at all", 21);
}

/* A forged header inside the real one's extra field, ending where the
 * real one ends: which one libarchive read cannot be told. */
static void forged_in_extra(struct buf *b)
{
	struct buf x = { .n = 0 }, fake = { .n = 0 };
	unsigned char none[4] = { 0x99, 0x99, 0, 0 };

	local(&fake, FLAG_UTF8, 0, 3, 0, "", none, sizeof(none));
	put16(&x, 0x9999);
	put16(&x, (unsigned)fake.n);
	put(&x, fake.b, fake.n);
	local(b, FLAG_UTF8, 0, 3, 4, NFD, x.b, x.n);
}

/* A forged header before the real one whose name field swallows it and
 * ends where the real one ends. */
static void forged_before(struct buf *b)
{
	struct buf real = { .n = 0 };

	local(&real, FLAG_UTF8, 0, 3, 4, NFD, NULL, 0);
	/* The real header holds NULs: write the forged one by hand. */
	put(b, "PK\3\4", 4);
	put16(b, 20 | 3 << 8);
	put16(b, FLAG_UTF8);
	put16(b, 0);
	put32(b, 0);
	put32(b, 0);
	put32(b, 0);
	put32(b, 0);
	put16(b, (unsigned)real.n);
	put16(b, 0);
	put(b, real.b, real.n);
}

static void extra_overflow(struct buf *b)
{
	unsigned char x[6] = { 0x55, 0x54, 9, 0, 1, 2 };

	local(b, FLAG_UTF8, 0, 3, 4, NFD, x, sizeof(x));
}

static void extra_leftover(struct buf *b)
{
	unsigned char x[6] = { 0x55, 0x54, 0, 0, 1, 2 };

	local(b, FLAG_UTF8, 0, 3, 4, NFD, x, sizeof(x));
}

static void upath_good(struct buf *b)
{
	unsigned char x[64];
	size_t n = unicode_path(x, "cafe?", NFD);

	local(b, 0, 0, 3, 4, "cafe?", x, n);
}

static void upath_bad_crc(struct buf *b)
{
	unsigned char x[64];
	size_t n = unicode_path(x, "other", NFD);

	local(b, 0, 0, 3, 4, "cafe?", x, n);
}

static void upath_short(struct buf *b)
{
	unsigned char x[8] = { 0x75, 0x70, 4, 0, 1, 2, 3, 4 };

	local(b, 0, 0, 3, 4, "cafe?", x, sizeof(x));
}

static void link_stored(struct buf *b)
{
	local(b, FLAG_UTF8, 0, 3, strlen(NFD), "l-" NFD, NULL, 0);
	put(b, NFD, strlen(NFD));
}

static void link_deflated(struct buf *b)
{
	local(b, FLAG_UTF8, 8, 3, strlen(NFD), "l-" NFD, NULL, 0);
	put(b, NFD, strlen(NFD));
}

static void link_zip64_size(struct buf *b)
{
	local(b, FLAG_UTF8, 0, 3, 0xffffffffUL, "l-" NFD, NULL, 0);
	put(b, NFD, strlen(NFD));
}

static void link_size_differs(struct buf *b)
{
	local(b, FLAG_UTF8, 0, 3, strlen(NFD) + 1, "l-" NFD, NULL, 0);
	put(b, NFD, strlen(NFD));
}

static void link_not_symlink(struct buf *b)
{
	link_stored(b);
}

static const struct {
	const char *attack;
	void (*build)(struct buf *);
	bool symlink;
	enum zipraw_result want;
	const char *name, *target;	/* when ZIPRAW_OK */
	bool utf8_flag, unicode_path, dos;
} cases[] = {
	{ "the header alone, flag 11: its name field", plain, false, ZIPRAW_OK, NFD, NULL, true, false, false },
	{ "no flag 11: the name field, not converted", no_flag, false, ZIPRAW_OK, NFD, NULL, false, false, false },
	{ "made on MS-DOS: said so, the name as stored", msdos, false, ZIPRAW_OK, "dir\\" NFD, NULL, true, false, true },
	{ "after the last entry's data descriptor", after_descriptor, false, ZIPRAW_OK, NFD, NULL, true, false, false },
	{ "after bytes libarchive skipped between entries", junk_between, false, ZIPRAW_OK, NFD, NULL, true, false, false },
	{ "a byte after the header libarchive did not read: not its header", trailing_byte, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "the name cut short: never read past N", cut_name, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "the fixed part cut short", cut_fixed, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "no local header at all", nothing, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "a header forged in the extra field, ending with the real one: refused", forged_in_extra, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "a header forged before, its name swallowing the real one: refused", forged_before, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "an extra block running past the field (libarchive refuses it)", extra_overflow, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "bytes left over after the extra blocks (libarchive refuses it)", extra_leftover, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "Unicode Path whose CRC-32 is the name field's: its name", upath_good, false, ZIPRAW_OK, NFD, NULL, false, true, false },
	{ "Unicode Path with another name's CRC-32: the name field", upath_bad_crc, false, ZIPRAW_OK, "cafe?", NULL, false, false, false },
	{ "Unicode Path shorter than its version and CRC: ignored", upath_short, false, ZIPRAW_OK, "cafe?", NULL, false, false, false },
	{ "a stored symlink: its target, the bytes after the header", link_stored, true, ZIPRAW_OK, "l-" NFD, NFD, true, false, false },
	{ "a deflated symlink: where its target ends is unknown", link_deflated, true, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "a symlink whose size is in a zip64 field", link_zip64_size, true, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "a symlink whose size is not what libarchive read", link_size_differs, true, ZIPRAW_BAD, NULL, NULL, false, false, false },
	{ "a file with bytes after its header: not its header", link_not_symlink, false, ZIPRAW_BAD, NULL, NULL, false, false, false },
};

static bool same(const struct paxraw_value *v, const char *s)
{
	return v->set && v->n == strlen(s) && memcmp(v->p, s, v->n) == 0;
}

int main(void)
{
	size_t ncases = sizeof(cases) / sizeof(cases[0]);

	tap_plan((int)ncases + 1);
	for (size_t i = 0; i < ncases; i++) {
		struct buf b = { .n = 0 };
		struct zipraw z;
		enum zipraw_result r;
		int ok;

		cases[i].build(&b);
		r = zipraw_local(b.b, b.n, cases[i].symlink, &z);
		ok = r == cases[i].want;
		if (ok && r == ZIPRAW_OK)
			ok = same(&z.name, cases[i].name) &&
			     (cases[i].target ? same(&z.target, cases[i].target) : !z.target.set) &&
			     z.utf8_flag == cases[i].utf8_flag &&
			     z.unicode_path == cases[i].unicode_path && z.dos == cases[i].dos;
		tap_ok(ok, "%s", cases[i].attack);
	}
	tap_ok(zipraw_local((const unsigned char *)"", 0, false,
			    &(struct zipraw){ 0 }) == ZIPRAW_BAD, "no bytes");
	return tap_done();
}
