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
	tap_plan(tap_n);
	return tap_done();
}
