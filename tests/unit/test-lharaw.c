/*
 * test-lharaw.c - lharaw_path() on the lha headers a hostile archive could
 * forge to make the path the reader takes differ from the one libarchive
 * read, or to make the parser read past its bytes: one row per shape,
 * with the verdict and, when accepted, the path taken.  Each row's bytes
 * are in a buffer of their own.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/lharaw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"

static unsigned crc16(const unsigned char *p, size_t n)
{
	unsigned crc = 0;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0xA001 : 0);
	}
	return crc;
}

/* An extended header: its size (W bytes, counting itself), type, data. */
static void ext(struct buf *b, int w, unsigned type, const void *data, size_t n)
{
	if (w == 2)
		put16(b, (unsigned)(n + 3));
	else
		put32(b, n + 5);
	put8(b, type);
	put(b, data, n);
}

/* UTF-8 (ASCII, e, U+0301) into UTF-16LE; DIR: '/' as U+FFFF. */
static size_t u16(const char *s, unsigned char *out, int dir)
{
	size_t n = 0;

	while (*s) {
		unsigned c = (unsigned char)*s++;

		if (c >= 0xc0)
			c = (c & 0x1f) << 6 | ((unsigned char)*s++ & 0x3f);
		if (dir && c == '/')
			c = 0xffff;
		out[n++] = (unsigned char)c;
		out[n++] = (unsigned char)(c >> 8);
	}
	return n;
}

struct row {
	const char *what;
	const char *before;
	int level;			/* 2 or 3 */
	const char *dir, *name;		/* UTF-16 unless CP */
	long cp;			/* a code page header; 0: none */
	int raw_dir_bytes;		/* the directory as bytes (0xFF between) */
	int no_crc, bad_crc, padding, odd, lone, dir_no_slash;
	int bad;
	const char *want;
};

static const struct row rows[] = {
	{ .what = "level 2: a UTF-16 directory and name", .before = "", .level = 2,
	  .dir = "dir/", .name = NFD, .want = "dir/" NFD },
	{ .what = "level 2: behind the previous entry's data", .before = "data\x01-lh0-",
	  .level = 2, .dir = "dir/", .name = NFD, .want = "dir/" NFD },
	{ .what = "level 2: padding after the extended headers", .before = "", .level = 2,
	  .dir = "d/", .name = NFD, .padding = 1, .want = "d/" NFD },
	{ .what = "level 3: a UTF-16 name", .before = "", .level = 3, .name = NFD, .want = NFD },
	{ .what = "code page 65001: the bytes as stored, 0xFF read as '/'", .before = "",
	  .level = 2, .dir = "a/b/", .name = NFD, .cp = 65001, .raw_dir_bytes = 1,
	  .want = "a/b/" NFD },
	{ .what = "another code page: left to libarchive", .before = "", .level = 2,
	  .name = NFD, .cp = 932, .bad = 1 },
	{ .what = "no CRC header: refused", .before = "", .level = 2, .name = NFD,
	  .no_crc = 1, .bad = 1 },
	{ .what = "a CRC that does not hold: refused", .before = "", .level = 2, .name = NFD,
	  .bad_crc = 1, .bad = 1 },
	{ .what = "a UTF-16 name of an odd length: refused", .before = "", .level = 2,
	  .name = NFD, .odd = 1, .bad = 1 },
	{ .what = "an unpaired surrogate: refused", .before = "", .level = 2, .name = "x",
	  .lone = 1, .bad = 1 },
	{ .what = "a directory not ending in a separator: refused", .before = "", .level = 2,
	  .dir = "dir", .name = "f", .bad = 1 },
};

static void header(struct buf *b, const struct row *r)
{
	int w = r->level == 2 ? 2 : 4;
	size_t fixed = r->level == 2 ? 24 : 28, start = b->n, crc_at = 0;
	struct buf e = { .n = 0 };
	unsigned char u[256];
	size_t n;

	/* the extended headers, CRC first */
	if (!r->no_crc) {
		crc_at = e.n + (size_t)w + 1;
		ext(&e, w, 0x00, "\0\0\0", 3);
	}
	if (r->dir) {
		if (r->raw_dir_bytes) {
			char d[64];

			snprintf(d, sizeof(d), "%s", r->dir);
			for (char *c = d; *c; c++)
				if (*c == '/')
					*c = (char)0xff;
			ext(&e, w, 0x02, d, strlen(d));
		} else {
			n = u16(r->dir, u, 1);
			ext(&e, w, 0x45, u, n);
		}
	}
	if (r->cp) {
		unsigned char cp[4] = { (unsigned char)r->cp, (unsigned char)(r->cp >> 8), 0, 0 };

		ext(&e, w, 0x01, r->name, strlen(r->name));
		ext(&e, w, 0x46, cp, 4);
	} else if (r->lone) {
		static const unsigned char lone[] = { 0x3d, 0xd8 };

		ext(&e, w, 0x44, lone, 2);
	} else {
		n = u16(r->name, u, 0);
		ext(&e, w, 0x44, u, n - (r->odd ? 1 : 0));
	}
	if (w == 2)
		put16(&e, 0);
	else
		put32(&e, 0);
	if (r->padding)
		put8(&e, 0);
	/* the fixed part */
	if (r->level == 2)
		put16(b, (unsigned)(fixed + e.n));
	else
		put16(b, 4);
	put(b, "-lh0-", 5);
	put32(b, 0);
	put32(b, 0);
	put32(b, 0x5a210000);
	put8(b, 0x20);
	put8(b, (unsigned)r->level);
	put16(b, 0);			/* the data's CRC: none */
	put8(b, 'U');
	if (r->level == 3)
		put32(b, fixed + e.n);
	put(b, e.b, e.n);
	if (!r->no_crc) {
		unsigned c = crc16(b->b + start, b->n - start) + (r->bad_crc ? 1 : 0);

		b->b[start + fixed + crc_at] = (unsigned char)c;
		b->b[start + fixed + crc_at + 1] = (unsigned char)(c >> 8);
	}
}

/* Level 1: the base header names BASE; the extended headers after it a
 * UTF-16 name (when NAME), none else. */
static void level1(struct buf *b, const char *base, const char *name, int bad_sum)
{
	size_t start = b->n, nlen = strlen(base);
	struct buf e = { .n = 0 };
	unsigned char u[256], sum = 0;

	if (name)
		ext(&e, 2, 0x44, u, u16(name, u, 0));
	put16(&e, 0);
	put8(b, (unsigned)(27 + nlen - 2));
	put8(b, 0);			/* the sum, below */
	put(b, "-lh0-", 5);
	put32(b, e.n - 2);		/* the extended headers count as data */
	put32(b, 0);
	put32(b, 0x5a210000);
	put8(b, 0x20);
	put8(b, 1);
	put8(b, (unsigned)nlen);
	put(b, base, nlen);
	put16(b, 0);
	put8(b, 'U');
	put(b, e.b, e.n);
	for (size_t i = start + 2; i < start + 27 + nlen; i++)
		sum = (unsigned char)(sum + b->b[i]);
	b->b[start + 1] = (unsigned char)(sum + (bad_sum ? 1 : 0));
}

static void level1_rows(void)
{
	static const struct {
		const char *what, *base, *name;
		int bad_sum, bad;
		const char *want;
	} r1[] = {
		{ "level 1: a UTF-16 name after the base header", "X", NFD, 0, 0, NFD },
		{ "level 1: the base name, '\\' read as '/'", "a\\b", NULL, 0, 0, "a/b" },
		{ "level 1: a sum that does not hold: refused", "X", NFD, 1, 1, NULL },
	};

	for (size_t i = 0; i < sizeof(r1) / sizeof(r1[0]); i++) {
		struct buf b = { .n = 0 };
		unsigned char *p;
		char *path;
		int good;

		level1(&b, r1[i].base, r1[i].name, r1[i].bad_sum);
		p = malloc(b.n);
		memcpy(p, b.b, b.n);
		good = lharaw_path(p, b.n, &path) == (r1[i].bad ? LHARAW_BAD : LHARAW_OK);
		if (good && !r1[i].bad)
			good = path && strcmp(path, r1[i].want) == 0;
		tap_ok(good, "%s", r1[i].what);
		free(path);
		free(p);
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct buf b = { .n = 0 };
		unsigned char *p;
		char *path;
		int good;

		put(&b, r->before, strlen(r->before));
		header(&b, r);
		p = malloc(b.n);
		memcpy(p, b.b, b.n);
		good = lharaw_path(p, b.n, &path) == (r->bad ? LHARAW_BAD : LHARAW_OK);
		if (good && !r->bad)
			good = path && strcmp(path, r->want) == 0;
		tap_ok(good, "%s", r->what);
		free(path);
		free(p);
	}
	level1_rows();
	tap_plan(tap_n);
	return tap_done();
}
