/*
 * rarraw.c - a RAR 5 file header read again (rarraw.h).
 *
 * A header: CRC-32 (of what follows it), its size (a vint), then the
 * header's data of that size: type, flags, the extra area's size and the
 * data area's size when the flags say so, the type's fields, the extra
 * area.  A vint is 7 bits a byte, lowest first, the high bit set on every
 * byte but the last; libarchive reads at most 8 bytes of one.
 */
#include "config.h"

#include <string.h>
#include <zlib.h>

#include "rarraw.h"

#define HEAD_FILE 2
#define HFL_EXTRA 0x0001
#define HFL_DATA 0x0002
#define HFL_SPLIT 0x0018		/* continued from or in another volume */
#define FHD_TIME 0x0002
#define FHD_CRC 0x0004
#define EX_REDIR 5
#define REDIR_UNIX_SYMLINK 1
#define REDIR_WIN_SYMLINK 2
#define REDIR_HARDLINK 4
#define HEADER_MAX (2u << 20)		/* libarchive's limit */

struct cur {
	const unsigned char *p, *end;
};

static bool vint(struct cur *c, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int i = 0; i < 8 && c->p < c->end; i++) {
		unsigned char b = *c->p++;

		r |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static bool skip(struct cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p))
		return false;
	c->p += n;
	return true;
}

/* The header at P ends exactly at END (its CRC-32 checked): its data. */
static bool header_at(const unsigned char *p, const unsigned char *end, struct cur *data)
{
	struct cur c = { p + 4, end };
	uint64_t size;
	const unsigned char *size_at = c.p;
	uint32_t crc;

	if (end - p < 7 || !vint(&c, &size) || size == 0 || size > HEADER_MAX ||
	    size != (uint64_t)(end - c.p))
		return false;
	crc = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	if (crc32(0, size_at, (uInt)(end - size_at)) != crc)
		return false;
	*data = c;
	return true;
}

/* The file header's fields after the type and flags. */
static enum rarraw_result file_fields(struct cur *c, uint64_t flags, struct rarraw_file *out)
{
	uint64_t extra = 0, v, fflags, name_len;
	struct cur x;

	if ((flags & HFL_EXTRA) && !vint(c, &extra))
		return RARRAW_BAD;
	if ((flags & HFL_DATA) && !vint(c, &v))
		return RARRAW_BAD;
	if (extra > (uint64_t)(c->end - c->p))
		return RARRAW_BAD;
	/* file flags, unpacked size, attributes, [mtime], [crc],
	 * compression, host OS, then the name */
	if (!vint(c, &fflags) || !vint(c, &v) || !vint(c, &v) ||
	    ((fflags & FHD_TIME) && !skip(c, 4)) || ((fflags & FHD_CRC) && !skip(c, 4)) ||
	    !vint(c, &v) || !vint(c, &v) || !vint(c, &name_len) || name_len == 0 ||
	    name_len > (uint64_t)(c->end - c->p))
		return RARRAW_BAD;
	out->name = c->p;
	out->name_len = (size_t)name_len;
	c->p += name_len;
	/* What is left is the extra area, exactly. */
	if ((uint64_t)(c->end - c->p) != extra)
		return RARRAW_BAD;
	x = *c;
	while (x.p < x.end) {
		uint64_t size, type, rtype, rflags, tlen;
		struct cur r;

		if (!vint(&x, &size) || size == 0 || size > (uint64_t)(x.end - x.p))
			return RARRAW_BAD;
		r = (struct cur){ x.p, x.p + size };
		x.p += size;
		if (!vint(&r, &type) || type != EX_REDIR)
			continue;
		if (!vint(&r, &rtype) || !vint(&r, &rflags) || !vint(&r, &tlen) || tlen == 0 ||
		    tlen > (uint64_t)(r.end - r.p))
			return RARRAW_BAD;
		if (rtype == REDIR_UNIX_SYMLINK || rtype == REDIR_WIN_SYMLINK ||
		    rtype == REDIR_HARDLINK) {
			out->target = r.p;
			out->target_len = (size_t)tlen;
			out->hardlink = rtype == REDIR_HARDLINK;
		}
	}
	return RARRAW_OK;
}

enum rarraw_result rarraw_file(const unsigned char *p, size_t n, struct rarraw_file *out)
{
	const unsigned char *end = p + n, *found = NULL;
	struct cur data = { NULL, NULL };
	uint64_t type, flags;

	memset(out, 0, sizeof(*out));
	/* The one header that ends where libarchive stopped. */
	for (size_t q = 0; q + 7 <= n; q++) {
		struct cur d;

		if (!header_at(p + q, end, &d))
			continue;
		if (found)
			return RARRAW_BAD;
		found = p + q;
		data = d;
	}
	if (!found || !vint(&data, &type) || type != HEAD_FILE || !vint(&data, &flags) ||
	    (flags & HFL_SPLIT))
		return RARRAW_BAD;
	return file_fields(&data, flags, out);
}
