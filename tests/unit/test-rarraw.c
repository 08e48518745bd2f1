/*
 * test-rarraw.c - rarraw_file() on the bytes before a RAR 5 entry that a
 * hostile archive could forge to make the name the reader takes differ
 * from the one libarchive read, or to make the parser read past its
 * bytes: one row per shape, with the verdict and, when accepted, the
 * name and target taken.  Each row's bytes are in a buffer of their own.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/lib/rarraw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"

static void vint(struct buf *b, unsigned long long v)
{
	while (v >= 0x80) {
		put8(b, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	put8(b, (unsigned)v);
}

/* A header around BODY: its CRC-32 (BAD_CRC: off by one) and size. */
static void block(struct buf *b, const struct buf *body, int bad_crc)
{
	struct buf h = { .n = 0 };

	vint(&h, body->n);
	put(&h, body->b, body->n);
	put32(b, crc32(0, h.b, (uInt)h.n) + (bad_crc ? 1 : 0));
	put(b, h.b, h.n);
}

struct shape {
	const char *name;
	int type;			/* 2: file */
	unsigned hflags;		/* besides extra and data */
	const char *target;		/* a redirection record */
	int redir;			/* its type */
	int extra_off;			/* added to the extra area's size said */
	int name_off;			/* added to the name's length said */
	int bad_crc;
};

static void file_header(struct buf *b, const struct shape *s)
{
	struct buf body = { .n = 0 }, extra = { .n = 0 }, rec = { .n = 0 };

	if (s->target) {
		vint(&rec, 5);
		vint(&rec, (unsigned long long)s->redir);
		vint(&rec, 0);
		vint(&rec, strlen(s->target));
		put(&rec, s->target, strlen(s->target));
		vint(&extra, rec.n);
		put(&extra, rec.b, rec.n);
	}
	vint(&body, (unsigned long long)s->type);
	vint(&body, (extra.n ? 1u : 0u) | 2u | s->hflags);
	if (extra.n)
		vint(&body, (unsigned long long)((long long)extra.n + s->extra_off));
	vint(&body, 0);			/* data size */
	vint(&body, 4);			/* file flags: CRC */
	vint(&body, 0);
	vint(&body, 0100644);
	put32(&body, 0);
	vint(&body, 0);
	vint(&body, 1);
	vint(&body, (unsigned long long)((long long)strlen(s->name) + s->name_off));
	put(&body, s->name, strlen(s->name));
	put(&body, extra.b, extra.n);
	block(b, &body, s->bad_crc);
}

struct row {
	const char *what;
	const char *before;		/* bytes ahead of the header */
	struct shape s;
	int bad;
	const char *name, *target;
	int hardlink;
};

#define FILE_(n) .name = (n), .type = 2

static const struct row rows[] = {
	{ .what = "a file header alone", .before = "", .s = { FILE_(NFD) }, .name = NFD },
	{ .what = "behind the rest of the previous file's data",
	  .before = "previous data\x80\x01", .s = { FILE_(NFD) }, .name = NFD },
	{ .what = "a symlink's target", .before = "",
	  .s = { FILE_("l"), .target = NFD, .redir = 1 }, .name = "l", .target = NFD },
	{ .what = "a hardlink's target", .before = "",
	  .s = { FILE_("h"), .target = "dir/" NFD, .redir = 4 }, .name = "h",
	  .target = "dir/" NFD, .hardlink = 1 },
	{ .what = "another redirection (a junction): no target", .before = "",
	  .s = { FILE_("j"), .target = NFD, .redir = 3 }, .name = "j" },
	{ .what = "a CRC that does not hold: refused", .before = "",
	  .s = { FILE_(NFD), .bad_crc = 1 }, .bad = 1 },
	{ .what = "a service header, not a file: refused", .before = "",
	  .s = { .name = "CMT", .type = 3 }, .bad = 1 },
	{ .what = "a file split from another volume: refused", .before = "",
	  .s = { FILE_(NFD), .hflags = 0x08 }, .bad = 1 },
	{ .what = "an extra area said larger than it is: refused", .before = "",
	  .s = { FILE_("l"), .target = NFD, .redir = 1, .extra_off = 1 }, .bad = 1 },
	{ .what = "an extra area said smaller: refused", .before = "",
	  .s = { FILE_("l"), .target = NFD, .redir = 1, .extra_off = -1 }, .bad = 1 },
	{ .what = "a name said longer than the header: refused", .before = "",
	  .s = { FILE_(NFD), .name_off = 40 }, .bad = 1 },
	{ .what = "a name said shorter: the rest is no extra area, refused", .before = "",
	  .s = { FILE_(NFD), .name_off = -1 }, .bad = 1 },
};

/* ---- RAR 4 ---------------------------------------------------------------- */

/* A RAR 4 file header (FLAGS, MODE on a Unix host) named by the N bytes
 * at NAME, followed by DATA (a symlink's target, which libarchive reads
 * with the header). */
static void r4(struct buf *b, unsigned flags, unsigned long mode, const void *name, size_t n,
	       const char *data, int bad_crc)
{
	struct buf h = { .n = 0 };
	size_t dn = data ? strlen(data) : 0;
	uLong crc;

	put8(&h, 0x74);
	put16(&h, flags | 0x8000);
	put16(&h, (unsigned)(32 + n));
	put32(&h, dn);			/* packed size */
	put32(&h, dn);
	put8(&h, 3);			/* Unix */
	put32(&h, 0);
	put32(&h, 0x5a210000);
	put8(&h, 29);
	put8(&h, 0x30);			/* stored */
	put16(&h, (unsigned)n);
	put32(&h, mode);
	put(&h, name, n);
	crc = crc32(0, h.b, (uInt)h.n) & 0xffff;
	put16(b, (unsigned)crc + (bad_crc ? 1 : 0));
	put(b, h.b, h.n);
	put(b, data, dn);
}

#define U 0x0200			/* the name is Unicode */
#define REG 0100644
/* "cafe\u0301", packed: "cafe?", NUL, high byte 0, flag byte 0xAA (four
 * characters as both bytes), c a f e, flag byte 0x80 (one), U+0301. */
static const unsigned char packed_nfd[] = {
	'c', 'a', 'f', 'e', '?', 0, 0, 0xAA, 'c', 0, 'a', 0, 'f', 0, 'e', 0, 0x80, 0x01, 0x03
};
/* "ab\u00e9\u0101": flags 0 (a low byte), 0 (b), 0 (0xe9), 1 (0x01 with the
 * high byte 0x01). */
static const unsigned char packed_low_high[] = {
	'a', 'b', '?', '?', 0, 0x01, 0x01, 'a', 'b', 0xe9, 0x01
};
/* A run: "xyz" copied from the ASCII name with no correction, flags 3,
 * length 1 (+2). */
static const unsigned char packed_run[] = { 'x', 'y', 'z', 0, 0, 0xC0, 0x01 };
/* A run with the high byte and a correction of 1: "ab" becomes "bc". */
static const unsigned char packed_run_fix[] = { 'a', 'b', 0, 0, 0xC0, 0x80, 0x01 };
/* The last character needs two bytes, one is there. */
static const unsigned char packed_short[] = { 'a', 0, 0, 0x80, 'a' };
/* U+D800 alone. */
static const unsigned char packed_surrogate[] = { 'a', 0, 0, 0x80, 0x00, 0xd8 };
static const unsigned char packed_backslash[] = { 'a', 0, 0, 0xA0, 'a', 0, '\\', 0 };

struct row4 {
	const char *what;
	const char *before;
	unsigned flags;
	unsigned long mode;
	const void *name;
	size_t n;
	const char *data;
	int bad_crc, bad;
	const char *want;
};

#define TXT(t) (t), sizeof(t) - 1
#define BIN(t) (t), sizeof(t)

static const struct row4 rows4[] = {
	{ "RAR 4: a UTF-8 name flagged Unicode", "", U, REG, TXT(NFD), NULL, 0, 0, NFD },
	{ "RAR 4: behind the rest of the previous data", "previous\x74", U, REG, TXT(NFD), NULL,
	  0, 0, NFD },
	{ "RAR 4: '\\' read as '/' in a UTF-8 name", "", U, REG, TXT("d\\" NFD), NULL, 0, 0,
	  "d/" NFD },
	{ "RAR 4: a packed name, each character both bytes", "", U, REG, BIN(packed_nfd), NULL,
	  0, 0, NFD },
	{ "RAR 4: packed low bytes, and one with the high byte", "", U, REG,
	  BIN(packed_low_high), NULL, 0, 0, "ab\xc3\xa9\xc4\x81" },
	{ "RAR 4: a packed run from the ASCII name", "", U, REG, BIN(packed_run), NULL, 0, 0,
	  "xyz" },
	{ "RAR 4: a packed run with the high byte and a correction", "", U, REG,
	  BIN(packed_run_fix), NULL, 0, 0, "bc" },
	{ "RAR 4: '\\' read as '/' in a packed name", "", U, REG, BIN(packed_backslash), NULL,
	  0, 0, "a/" },
	{ "RAR 4: a symlink, its target read with the header", "", U, 0120777, TXT(NFD), NFD, 0,
	  0, NFD },
	{ "RAR 4: a packed name cut short: refused", "", U, REG, BIN(packed_short), NULL, 0, 1, NULL },
	{ "RAR 4: a packed unpaired surrogate: refused", "", U, REG, BIN(packed_surrogate), NULL,
	  0, 1, NULL },
	{ "RAR 4: a name not flagged Unicode: left to libarchive", "", 0, REG, TXT(NFD), NULL,
	  0, 1, NULL },
	{ "RAR 4: a file split across volumes: refused", "", U | 0x02, REG, TXT(NFD), NULL, 0, 1, NULL },
	{ "RAR 4: a CRC that does not hold: refused", "", U, REG, TXT(NFD), NULL, 1, 1, NULL },
	{ "RAR 4: data after a regular file's header: refused", "", U, REG, TXT(NFD), "data",
	  0, 1, NULL },
};

static void rar4_rows(void)
{
	for (size_t i = 0; i < sizeof(rows4) / sizeof(rows4[0]); i++) {
		const struct row4 *r = &rows4[i];
		struct buf b = { .n = 0 };
		unsigned char *p;
		char *name;
		int good;

		put(&b, r->before, strlen(r->before));
		r4(&b, r->flags, r->mode, r->name, r->n, r->data, r->bad_crc);
		p = malloc(b.n);
		memcpy(p, b.b, b.n);
		good = rarraw_file4(p, b.n, &name) == (r->bad ? RARRAW_BAD : RARRAW_OK);
		if (good && !r->bad)
			good = name && strcmp(name, r->want) == 0;
		tap_ok(good, "%s", r->what);
		free(name);
		free(p);
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct buf b = { .n = 0 };
		struct rarraw_file f;
		unsigned char *p;
		int good;

		put(&b, r->before, strlen(r->before));
		file_header(&b, &r->s);
		/* the row's bytes alone in the heap: ASan sees a read past */
		p = malloc(b.n);
		memcpy(p, b.b, b.n);
		good = rarraw_file(p, b.n, &f) == (r->bad ? RARRAW_BAD : RARRAW_OK);
		if (good && !r->bad) {
			good = f.name_len == strlen(r->name) && memcmp(f.name, r->name, f.name_len) == 0;
			if (r->target)
				good = good && f.target && f.target_len == strlen(r->target) &&
				       memcmp(f.target, r->target, f.target_len) == 0 &&
				       f.hardlink == (r->hardlink != 0);
			else
				good = good && !f.target;
		}
		tap_ok(good, "%s", r->what);
		free(p);
	}
	/* Too short to hold a header, and nothing at all. */
	{
		unsigned char *p = malloc(6);
		struct rarraw_file f;

		memset(p, 0, 6);
		tap_ok(rarraw_file(p, 6, &f) == RARRAW_BAD, "six bytes: refused");
		tap_ok(rarraw_file(p, 0, &f) == RARRAW_BAD, "no bytes: refused");
		free(p);
	}
	rar4_rows();
	tap_plan(tap_n);
	return tap_done();
}
