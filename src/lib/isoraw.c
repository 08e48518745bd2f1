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

/* What a record needs while the tree is read: its UTF-16BE path. */
struct node {
	size_t parent;			/* index, or ISORAW_ROOT */
	unsigned char *u16;
	size_t u16_len;
	size_t name_len;		/* of its own name, trimmed */
	bool too_long;
	bool read;			/* its records were read */
};

struct isoraw_walk {
	struct node *n;
	uint64_t volume;		/* bytes */
	size_t dir_bytes;
	bool root_read;
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

/* A new record at the end; (size_t)-1 when no room. */
static size_t add(struct isoraw_tree *t)
{
	struct isoraw_walk *w = t->walk;

	if (t->count == ISORAW_RECORDS_MAX)
		return (size_t)-1;
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct isoraw_rec *r = realloc(t->rec, cap * sizeof(*r));
		struct node *n;

		if (!r)
			return (size_t)-1;
		t->rec = r;
		n = realloc(w->n, cap * sizeof(*n));
		if (!n)
			return (size_t)-1;
		w->n = n;
		t->cap = cap;
	}
	memset(&t->rec[t->count], 0, sizeof(t->rec[0]));
	memset(&w->n[t->count], 0, sizeof(w->n[0]));
	t->rec[t->count].path = ISORAW_NO_NAME;
	return t->count++;
}

/* A directory's own offset, or an enclosing one's: libarchive refuses
 * the loop (the whole image). */
static bool loops(const struct isoraw_tree *t, size_t parent, uint64_t start)
{
	if (start == t->root)
		return true;
	for (size_t i = parent; i != ISORAW_ROOT; i = t->walk->n[i].parent)
		if (t->rec[i].start == start)
			return true;
	return false;
}

/* UTF-16BE into UTF-8, as stored: false for an unpaired surrogate or a
 * NUL. */
static bool utf8_of(const unsigned char *u, size_t n, char *out, size_t *len)
{
	*len = names_utf16_to_utf8(u, n / 2, true, out);
	return *len != NAMES_BAD_UTF16 && !memchr(out, '\0', *len);
}

/*
 * Record C's path: its directory's, '/', its name (or '.'); a directory
 * whose own name is empty adds nothing, nor do the ones above it
 * (libarchive stops there).  Its UTF-8 goes to the text.  False when out
 * of memory.
 */
static bool child_path(struct isoraw_tree *t, size_t c, const unsigned char *name, size_t len)
{
	struct node *n = &t->walk->n[c];
	const struct node *p = n->parent == ISORAW_ROOT || t->walk->n[n->parent].name_len == 0 ?
			       NULL : &t->walk->n[n->parent];
	size_t total = (p ? p->u16_len + 2 : 0) + (len ? len : 2), u8;

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
	/* UTF-8: at most 3 bytes for 2 */
	if (t->text_len + total * 2 + 1 > t->text_cap) {
		size_t cap = t->text_cap ? t->text_cap : 4096;
		char *x;

		while (cap < t->text_len + total * 2 + 1)
			cap *= 2;
		x = realloc(t->text, cap);
		if (!x)
			return false;
		t->text = x;
		t->text_cap = cap;
	}
	if (utf8_of(n->u16, total, t->text + t->text_len, &u8)) {
		t->text[t->text_len + u8] = '\0';
		t->rec[c].path = t->text_len;
		t->text_len += u8 + 1;
	}
	return true;
}

/*
 * The records of directory DIR as libarchive parses them: block by
 * block, a record of length 0 or one that would cross its block ends the
 * block; "." and ".." skipped; the extents after a multi-extent file's
 * first are its own.
 */
enum isoraw_result isoraw_children(isoraw_read_fn read, void *ctx, struct isoraw_tree *t,
				   size_t dir)
{
	struct isoraw_walk *w = t->walk;
	uint64_t start = dir == ISORAW_ROOT ? t->root : t->rec[dir].start;
	uint64_t size = dir == ISORAW_ROOT ? t->root_size : t->rec[dir].size;
	size_t step = (size_t)((size + ISORAW_BLOCK - 1) / ISORAW_BLOCK * ISORAW_BLOCK);
	unsigned char *buf;
	bool multi = false, ok = true;

	if (!w)
		return ISORAW_BAD;
	/* Each directory once, as libarchive reads it once. */
	if (dir == ISORAW_ROOT ? w->root_read : w->n[dir].read)
		return ISORAW_OK;
	if (dir == ISORAW_ROOT)
		w->root_read = true;
	else
		w->n[dir].read = true;
	/* libarchive skips the records of a directory past the volume */
	if (size == 0 || start + size > w->volume)
		return ISORAW_OK;
	if (size > ISORAW_DIR_BYTES_MAX || w->dir_bytes + step > ISORAW_DIR_BYTES_MAX)
		return ISORAW_BAD;
	w->dir_bytes += step;
	buf = malloc(step);
	if (!buf || !read(ctx, start, step, buf)) {
		free(buf);
		return ISORAW_BAD;
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
			    (loc > 0 && loc + blocks > w->volume / ISORAW_BLOCK) ||
			    (fsize != 0 && (int32_t)loc < 0) ||
			    loops(t, dir, (uint64_t)loc * ISORAW_BLOCK)) {
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
			w = t->walk;
			w->n[c].parent = dir;
			t->rec[c].start = (uint64_t)loc * ISORAW_BLOCK;
			t->rec[c].size = fsize;
			t->rec[c].dir = (p[25] & 0x02) != 0;
			memcpy(t->rec[c].date, p + 18, 7);
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
	return ok ? ISORAW_OK : ISORAW_BAD;
}

enum isoraw_result isoraw_begin(isoraw_read_fn read, void *ctx, struct isoraw_tree *out)
{
	uint64_t volume;

	memset(out, 0, sizeof(*out));
	if (!joliet_root(read, ctx, &out->root, &out->root_size, &volume))
		return ISORAW_BAD;
	out->walk = calloc(1, sizeof(*out->walk));
	if (!out->walk)
		return ISORAW_BAD;
	out->walk->volume = volume;
	return ISORAW_OK;
}

enum isoraw_result isoraw_joliet(isoraw_read_fn read, void *ctx, struct isoraw_tree *out)
{
	enum isoraw_result r = isoraw_begin(read, ctx, out);

	if (r == ISORAW_OK)
		r = isoraw_children(read, ctx, out, ISORAW_ROOT);
	/* Breadth first: a directory's records once its own are read. */
	for (size_t i = 0; r == ISORAW_OK && i < out->count; i++)
		if (out->rec[i].dir)
			r = isoraw_children(read, ctx, out, i);
	if (r != ISORAW_OK)
		isoraw_tree_free(out);
	return r;
}

void isoraw_tree_free(struct isoraw_tree *tree)
{
	if (tree->walk) {
		for (size_t i = 0; i < tree->count; i++)
			free(tree->walk->n[i].u16);
		free(tree->walk->n);
		free(tree->walk);
	}
	free(tree->rec);
	free(tree->text);
	memset(tree, 0, sizeof(*tree));
}
