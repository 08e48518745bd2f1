/*
 * test-isoraw.c - isoraw_joliet() on the Joliet trees a hostile ISO 9660
 * image could hold to make the names the reader takes differ from the
 * entries libarchive hands out, or to make the walk loop or read past
 * the image: one row per shape, with the verdict and the paths read.
 * Each accepted row's image is also read by libarchive itself: every
 * entry it hands out must find, where libarchive stands, a record whose
 * path composes into the entry's name (the key input.c looks records up
 * by), so the walk and the positions are checked against the reader
 * they copy.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/isoraw.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"
#define NFC "caf\xc3\xa9"
#define BLOCKS 64
#define B ISORAW_BLOCK

/* One record of a row: in directory PARENT (-1: the root), NAME (UTF-8,
 * put as UTF-16BE; RAW/RAWLEN instead when set), a directory or a file
 * with DATA. */
struct ent {
	int parent;
	const char *name;
	int dir;
	const char *data;
	const unsigned char *raw;
	size_t rawlen;
	unsigned flags;			/* more record flags (0x80: multi-extent) */
	int loc;			/* a forced extent, 0: the laid-out one */
};

struct row {
	const char *what;
	struct ent e[8];
	size_t n;
	int bad;
	const char *paths[8];		/* the records' paths in order; "-": none */
	int joliet_bs;			/* the Joliet block size, 0: 2048 */
	int no_joliet;
	int no_diff;			/* libarchive does not read it */
};

static const unsigned char lone_surrogate[] = { 0xd8, 0x3d, 0x00, 'x' };
static const unsigned char odd_len[] = { 0, 'a', 0, 'b', 'c' };
static const unsigned char one_byte[] = { 'A' };	/* trimmed to nothing */
static const unsigned char pair[] = { 0xd8, 0x3d, 0xde, 0x00 };	/* U+1F600 */

#define F(p, nm, d) { .parent = (p), .name = (nm), .data = (d) }
#define D(p, nm) { .parent = (p), .name = (nm), .dir = 1 }
#define RAW(r, d) { .parent = -1, .raw = (r), .rawlen = sizeof(r), .data = (d) }

static const struct row rows[] = {
	{ .what = "twins: an NFD and an NFC name keep their bytes",
	  .e = { F(-1, NFD, "nfd\n"), F(-1, NFC, "nfc\n") }, .n = 2, .paths = { NFD, NFC } },
	{ .what = "a file in an NFD directory",
	  .e = { D(-1, NFD), F(0, "f", "in\n") }, .n = 2, .paths = { NFD, NFD "/f" } },
	{ .what = "';1' is trimmed",
	  .e = { F(-1, "a.txt;1", "x") }, .n = 1, .paths = { "a.txt" } },
	{ .what = "an odd name length loses its last byte",
	  .e = { RAW(odd_len, "x") }, .n = 1, .paths = { "ab" } },
	{ .what = "a surrogate pair",
	  .e = { RAW(pair, "x") }, .n = 1, .paths = { "\xf0\x9f\x98\x80" } },
	{ .what = "an unpaired surrogate: no name taken",
	  .e = { RAW(lone_surrogate, "x") }, .n = 1, .paths = { "-" } },
	{ .what = "empty twins",
	  .e = { F(-1, NFD, ""), F(-1, NFC, "") }, .n = 2, .paths = { NFD, NFC } },
	{ .what = "a multi-extent file is one record",
	  .e = { { .parent = -1, .name = "m", .data = "part1", .flags = 0x80 },
		 F(-1, "m", "part2"), F(-1, "z", "z") }, .n = 3, .paths = { "m", "z" } },
	{ .what = "a directory with an empty name: '.', and its files' paths stop there",
	  .e = { { .parent = -1, .raw = one_byte, .rawlen = sizeof(one_byte), .dir = 1 },
		 F(0, "f", "x") }, .n = 2, .paths = { ".", "f" } },
	{ .what = "a directory that holds itself: refused",
	  .e = { D(-1, "d"), { .parent = 0, .name = "again", .dir = 1, .loc = -2 } }, .n = 2,
	  .bad = 1 },
	{ .what = "a directory that holds the root: refused",
	  .e = { { .parent = -1, .name = "d", .dir = 1, .loc = -3 } }, .n = 1, .bad = 1 },
	{ .what = "data past the volume: refused",
	  .e = { { .parent = -1, .name = "f", .data = "x", .loc = BLOCKS + 10 } }, .n = 1,
	  .bad = 1 },
	{ .what = "no Joliet descriptor: refused",
	  .e = { F(-1, "f", "x") }, .n = 1, .bad = 1, .no_joliet = 1 },
	{ .what = "a Joliet block size of 512: refused",
	  .e = { F(-1, "f", "x") }, .n = 1, .bad = 1, .joliet_bs = 512 },
};

static unsigned char img[BLOCKS * B];

static void le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void be32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[3 - i] = (unsigned char)(v >> (8 * i));
}

static size_t utf16(const char *s, unsigned char *out)
{
	size_t n = 0;

	/* the rows' names are ASCII, e, U+0301 and U+00E9 */
	while (*s) {
		unsigned c = (unsigned char)*s++;

		if (c >= 0xc0) {
			c = (c & 0x1f) << 6 | ((unsigned char)*s++ & 0x3f);
		}
		out[n++] = (unsigned char)(c >> 8);
		out[n++] = (unsigned char)c;
	}
	return n;
}

static size_t record(unsigned char *p, const unsigned char *name, size_t nlen, uint32_t loc,
		     uint32_t size, unsigned flags)
{
	size_t len = 33 + nlen + (nlen % 2 ? 0 : 1);

	memset(p, 0, len);
	p[0] = (unsigned char)len;
	le32(p + 2, loc);
	be32(p + 6, loc);
	le32(p + 10, size);
	be32(p + 14, size);
	p[18] = 126;			/* 2026 */
	p[19] = 12;
	p[20] = 7;
	p[25] = (unsigned char)flags;
	p[28] = 1;
	p[31] = 1;
	p[32] = (unsigned char)nlen;
	memcpy(p + 33, name, nlen);
	return len;
}

static void descriptor(unsigned char *d, int type, uint32_t root, int bs, int joliet)
{
	d[0] = (unsigned char)type;
	memcpy(d + 1, "CD001", 5);
	d[6] = 1;
	if (type == 255)
		return;
	le32(d + 80, BLOCKS);
	be32(d + 84, BLOCKS);
	d[128] = (unsigned char)(bs & 0xff);
	d[129] = (unsigned char)(bs >> 8);
	le32(d + 140, 19);		/* L path table */
	if (joliet)
		memcpy(d + 88, "%/E", 3);
	record(d + 156, (const unsigned char *)"", 1, root, B, 2);
	d[881] = 1;
}

/* Blocks: 16 PVD, 17 Joliet SVD, 18 terminator, 19 path table, 20 the
 * primary root, 21 the Joliet root, then a block per directory and per
 * file. */
static size_t build(const struct row *r)
{
	size_t at[8], used[8] = { 0 }, next = 22, root_used = 0;
	unsigned char name[512];

	memset(img, 0, sizeof(img));
	descriptor(img + 16 * B, 1, 20, B, 0);
	if (r->no_joliet) {
		descriptor(img + 17 * B, 255, 0, 0, 0);
	} else {
		descriptor(img + 17 * B, 2, 21, r->joliet_bs ? r->joliet_bs : B, 1);
		descriptor(img + 18 * B, 255, 0, 0, 0);
	}
	/* "." and ".." of both roots */
	for (int root = 20; root <= 21; root++) {
		unsigned char *p = img + root * B;
		size_t k = record(p, (const unsigned char *)"", 1, (uint32_t)root, B, 2);

		k += record(p + k, (const unsigned char *)"\1", 1, (uint32_t)root, B, 2);
		if (root == 21)
			root_used = k;
	}
	for (size_t i = 0; i < r->n; i++)
		at[i] = next++;
	for (size_t i = 0; i < r->n; i++) {
		const struct ent *e = &r->e[i];
		size_t nlen = e->raw ? e->rawlen : utf16(e->name, name);
		unsigned char *dir = e->parent < 0 ? img + 21 * B : img + at[e->parent] * B;
		size_t *u = e->parent < 0 ? &root_used : &used[e->parent];
		uint32_t loc = (uint32_t)at[i], size = e->dir ? B : (uint32_t)strlen(e->data);

		if (e->raw)
			memcpy(name, e->raw, nlen);
		if (e->loc == -2)
			loc = (uint32_t)at[e->parent];
		else if (e->loc == -3)
			loc = 21;
		else if (e->loc > 0)
			loc = (uint32_t)e->loc;
		if (!e->dir && size == 0)
			loc = 0;
		if (e->dir && e->loc == 0) {
			size_t k = record(img + at[i] * B, (const unsigned char *)"", 1, loc, B, 2);

			used[i] = k + record(img + at[i] * B + k, (const unsigned char *)"\1", 1,
					     (uint32_t)(e->parent < 0 ? 21 : at[e->parent]), B, 2);
		} else if (!e->dir && loc < BLOCKS) {
			memcpy(img + loc * B, e->data, size);
		}
		*u += record(dir + *u, name, nlen, loc, size, (e->dir ? 2 : 0) | e->flags);
	}
	return BLOCKS * B;
}

static bool read_img(void *ctx, uint64_t off, size_t len, unsigned char *buf)
{
	size_t n = *(size_t *)ctx;

	if (off > n || len > n - off)
		return false;
	memcpy(buf, img + off, len);
	return true;
}

static bool composes(const char *raw, const char *now)
{
	struct archive_entry *t = archive_entry_new();
	const char *got;
	bool same = archive_entry_update_pathname_utf8(t, raw) &&
		    (got = archive_entry_pathname(t)) && strcmp(got, now) == 0;

	archive_entry_free(t);
	return same;
}

/* Every entry libarchive hands out but the root: a record where it
 * stands (a file's data, past a directory's records; an empty file
 * anywhere) whose path composes into its name. */
static int differential(size_t n, const struct isoraw_tree *t, char *why, size_t whylen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int same = 1, entries = 0;

	archive_read_support_format_iso9660(a);
	if (archive_read_open_memory(a, img, n) != ARCHIVE_OK) {
		snprintf(why, whylen, "libarchive: %s", archive_error_string(a));
		archive_read_free(a);
		return 0;
	}
	for (;;) {
		int rc = same ? archive_read_next_header(a, &e) : ARCHIVE_EOF;

		if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
			break;
		{
		const char *now = archive_entry_pathname(e);
		uint64_t pos = (uint64_t)archive_filter_bytes(a, -1);
		bool dir = archive_entry_filetype(e) == AE_IFDIR, found = false;

		if (!now)
			now = "";	/* libarchive could not convert it */
		if (strcmp(now, ".") == 0)
			continue;
		entries++;
		for (size_t i = 0; i < t->count && !found; i++) {
			const struct isoraw_rec *r = &t->rec[i];
			uint64_t end = r->start + (r->size + B - 1) / B * B;

			if (r->dir != dir)
				continue;
			if (dir ? end != pos : archive_entry_size(e) > 0 ? r->start != pos : r->size != 0)
				continue;
			/* no name taken: where it stands is all there is */
			found = r->path == ISORAW_NO_NAME || composes(t->text + r->path, now);
		}
		if (!found) {
			snprintf(why, whylen, "'%s' at %llu: no record", now, (unsigned long long)pos);
			same = 0;
		}
		}
	}
	if (same && entries == 0) {
		snprintf(why, whylen, "libarchive handed out nothing");
		same = 0;
	}
	archive_read_free(a);
	return same;
}

int main(void)
{
	setlocale(LC_ALL, "C.UTF-8");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		size_t n = build(r);
		struct isoraw_tree t;
		enum isoraw_result res = isoraw_joliet(read_img, &n, &t);
		int good = res == (r->bad ? ISORAW_BAD : ISORAW_OK);
		char why[200] = "";

		for (size_t k = 0; good && !r->bad && k < 8; k++) {
			const char *want = r->paths[k];

			if (!want) {
				good = k == t.count;
				break;
			}
			if (k >= t.count)
				good = 0;
			else if (strcmp(want, "-") == 0)
				good = t.rec[k].path == ISORAW_NO_NAME;
			else
				good = t.rec[k].path != ISORAW_NO_NAME &&
				       strcmp(t.text + t.rec[k].path, want) == 0;
		}
		tap_ok(good, "%s", r->what);
		if (!r->bad && res == ISORAW_OK && !r->no_diff)
			tap_ok(differential(n, &t, why, sizeof(why)),
			       "%s: libarchive stands at those records %s", r->what, why);
		isoraw_tree_free(&t);
	}
	/* An image shorter than its descriptors. */
	{
		size_t n = 17 * B;
		struct isoraw_tree t;

		build(&rows[0]);
		tap_ok(isoraw_joliet(read_img, &n, &t) == ISORAW_BAD, "an image cut before its descriptors");
	}
	tap_plan(tap_n);
	return tap_done();
}
