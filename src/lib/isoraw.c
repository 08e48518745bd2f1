/*
 * isoraw.c - the Joliet tree of an ISO 9660 image, as libarchive 3.6's
 * reader walks it (isoraw.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "isoraw.h"
#include "names.h"

#define DESCRIPTORS 7			/* libarchive looks at sectors 16 to 22 */
#define NAME_MAX_BYTES 206		/* its cap on a Joliet name */
#define PATH_MAX_BYTES 1024		/* its cap on a UTF-16BE path */

/* A record while the tree is read: its UTF-16BE path. */
struct node {
	struct isoraw_rec r;
	size_t parent;			/* index, or (size_t)-1: the root's child */
	unsigned char *u16;
	size_t u16_len;
	size_t name_len;		/* of its own name, trimmed */
	bool too_long;
};

struct tree {
	struct node *n;
	size_t count, cap;
	uint64_t volume;		/* bytes */
	uint64_t root;			/* the root's records */
	size_t dir_bytes;
};

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The first Joliet descriptor among the ones libarchive looks at, until
 * the set's terminator: its root's records and the volume's size. */
static bool joliet_root(isoraw_read_fn read, void *ctx, uint64_t *root, uint64_t *root_size,
			uint64_t *volume)
{
	unsigned char d[ISORAW_BLOCK];

	for (unsigned int i = 0; i < DESCRIPTORS; i++) {
		if (!read(ctx, (uint64_t)(16 + i) * ISORAW_BLOCK, sizeof(d), d) ||
		    memcmp(d + 1, "CD001", 5) != 0 || d[0] == 255)
			return false;
		if (d[0] != 2 || d[881] != 1 || d[88] != '%' || d[89] != '/' ||
		    (d[90] != '@' && d[90] != 'C' && d[90] != 'E'))
			continue;
		/* A block size libarchive would compute offsets in as these
		 * do; a root record of its length. */
		if ((d[128] | d[129] << 8) != ISORAW_BLOCK || d[156] != 34 ||
		    le32(d + 80) <= 20)
			return false;
		*root = (uint64_t)le32(d + 156 + 2) * ISORAW_BLOCK;
		*root_size = le32(d + 156 + 10);
		*volume = (uint64_t)le32(d + 80) * ISORAW_BLOCK;
		return true;
	}
	return false;
}

static size_t add(struct tree *t)
{
	if (t->count == ISORAW_RECORDS_MAX)
		return (size_t)-1;
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct node *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return (size_t)-1;
		t->n = n;
		t->cap = cap;
	}
	memset(&t->n[t->count], 0, sizeof(t->n[0]));
	return t->count++;
}

/* A directory's own offset, or an enclosing one's: libarchive refuses
 * the loop (the whole image). */
static bool loops(const struct tree *t, size_t parent, uint64_t start)
{
	if (start == t->root)
		return true;
	for (size_t i = parent; i != (size_t)-1; i = t->n[i].parent)
		if (t->n[i].r.start == start)
			return true;
	return false;
}

/* The child's UTF-16BE path: its directory's, '/', its name (or '.').
 * A directory whose own name is empty adds nothing, nor do the ones
 * above it: libarchive stops there. */
static bool child_path(struct tree *t, size_t c, const unsigned char *name, size_t len)
{
	struct node *n = &t->n[c];
	const struct node *p = n->parent == (size_t)-1 || t->n[n->parent].name_len == 0 ?
			       NULL : &t->n[n->parent];
	size_t total = (p ? p->u16_len + 2 : 0) + (len ? len : 2);

	n->name_len = len;
	if ((p && p->too_long) || total > PATH_MAX_BYTES) {
		n->too_long = true;
		return true;
	}
	n->u16 = malloc(total);
	if (!n->u16)
		return false;
	if (p) {
		memcpy(n->u16, p->u16, p->u16_len);
		n->u16[p->u16_len] = 0;
		n->u16[p->u16_len + 1] = '/';
	}
	if (len)
		memcpy(n->u16 + total - len, name, len);
	else
		memcpy(n->u16 + total - 2, "\0.", 2);
	n->u16_len = total;
	return true;
}

/*
 * The records of directory D (PARENT: its index, -1 the root) as
 * libarchive parses them: block by block, a record of length 0 or one
 * that would cross its block ends the block; "." and ".." skipped; the
 * extents after a multi-extent file's first are its own.
 */
static bool read_dir(isoraw_read_fn read, void *ctx, struct tree *t, size_t parent,
		     uint64_t start, uint64_t size)
{
	size_t step = (size_t)((size + ISORAW_BLOCK - 1) / ISORAW_BLOCK * ISORAW_BLOCK);
	unsigned char *buf;
	bool multi = false, ok = true;

	if (size == 0)
		return true;
	/* libarchive skips the records of a directory past the volume */
	if (start + size > t->volume)
		return true;
	if (size > ISORAW_DIR_BYTES_MAX || t->dir_bytes + step > ISORAW_DIR_BYTES_MAX)
		return false;
	t->dir_bytes += step;
	buf = malloc(step);
	if (!buf || !read(ctx, start, step, buf)) {
		free(buf);
		return false;
	}
	for (size_t blk = 0; ok && blk < step; blk += ISORAW_BLOCK) {
		const unsigned char *b = buf + blk + ISORAW_BLOCK, *p = buf + blk;

		for (; *p != 0 && p + 33 < b && p + *p <= b; p += *p) {
			size_t dr = p[0], nlen = p[32], c;
			uint32_t loc = le32(p + 2), fsize = le32(p + 10);
			uint64_t blocks = ((uint64_t)fsize + ISORAW_BLOCK - 1) / ISORAW_BLOCK;

			if (nlen == 1 && (p[33] == 0 || p[33] == 1))
				continue;
			/* What libarchive refuses, the image with it. */
			if (dr < 34 || dr - 33 < nlen || nlen == 0 ||
			    (loc > 0 && loc + blocks > t->volume / ISORAW_BLOCK) ||
			    (fsize != 0 && (int32_t)loc < 0) ||
			    loops(t, parent, (uint64_t)loc * ISORAW_BLOCK)) {
				ok = false;
				break;
			}
			if (multi) {
				multi = (p[25] & 0x80) != 0;
				continue;
			}
			multi = (p[25] & 0x80) != 0;
			c = add(t);
			if (c == (size_t)-1) {
				ok = false;
				break;
			}
			t->n[c].parent = parent;
			t->n[c].r.start = (uint64_t)loc * ISORAW_BLOCK;
			t->n[c].r.size = fsize;
			t->n[c].r.dir = (p[25] & 0x02) != 0;
			memcpy(t->n[c].r.date, p + 18, 7);
			/* The name as libarchive trims it. */
			if (nlen > NAME_MAX_BYTES)
				nlen = NAME_MAX_BYTES;
			nlen &= ~(size_t)1;
			if (nlen > 4 && p[33 + nlen - 4] == 0 && p[33 + nlen - 3] == ';' &&
			    p[33 + nlen - 2] == 0 && p[33 + nlen - 1] == '1')
				nlen -= 4;
			if (!child_path(t, c, p + 33, nlen)) {
				ok = false;
				break;
			}
		}
	}
	free(buf);
	return ok;
}

/* UTF-16BE into UTF-8, as stored: false for an unpaired surrogate or a
 * NUL. */
static bool utf8_of(const unsigned char *u, size_t n, char *out, size_t *len)
{
	*len = names_utf16_to_utf8(u, n / 2, true, out);
	return *len != NAMES_BAD_UTF16 && !memchr(out, '\0', *len);
}

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->n[i].u16);
	free(t->n);
}

enum isoraw_result isoraw_joliet(isoraw_read_fn read, void *ctx, struct isoraw_tree *out)
{
	struct tree t = { 0 };
	uint64_t root, root_size;
	size_t text = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!joliet_root(read, ctx, &root, &root_size, &t.volume))
		return ISORAW_BAD;
	t.root = root;
	/* Breadth first: a directory's records once its own are read. */
	ok = read_dir(read, ctx, &t, (size_t)-1, root, root_size);
	for (size_t i = 0; ok && i < t.count; i++)
		if (t.n[i].r.dir)
			ok = read_dir(read, ctx, &t, i, t.n[i].r.start, t.n[i].r.size);
	for (size_t i = 0; ok && i < t.count; i++)
		text += t.n[i].u16_len * 2 + 1;	/* UTF-8: at most 3 bytes per 2 */
	out->rec = ok ? calloc(t.count ? t.count : 1, sizeof(*out->rec)) : NULL;
	out->text = ok ? malloc(text ? text : 1) : NULL;
	if (!out->rec || !out->text) {
		tree_free(&t);
		isoraw_tree_free(out);
		return ISORAW_BAD;
	}
	text = 0;
	for (size_t i = 0; i < t.count; i++) {
		size_t len;

		out->rec[i] = t.n[i].r;
		out->rec[i].path = ISORAW_NO_NAME;
		if (!t.n[i].too_long && t.n[i].u16 &&
		    utf8_of(t.n[i].u16, t.n[i].u16_len, out->text + text, &len)) {
			out->text[text + len] = '\0';
			out->rec[i].path = text;
			text += len + 1;
		}
	}
	out->count = t.count;
	tree_free(&t);
	return ISORAW_OK;
}

void isoraw_tree_free(struct isoraw_tree *tree)
{
	free(tree->rec);
	free(tree->text);
	memset(tree, 0, sizeof(*tree));
}
