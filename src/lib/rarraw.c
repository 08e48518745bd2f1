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

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "names.h"
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

/* ---- RAR 4 ----------------------------------------------------------------- */

#define R4_FILE 0x74
#define R4_SPLIT 0x0003
#define R4_SOLID 0x0010
#define R4_LARGE 0x0100
#define R4_UNICODE 0x0200
#define R4_FIXED 32			/* the base header and the file fields */
#define R4_HOST_UNIX 3

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/*
 * Unpack RAR's UTF-16 packing as libarchive does: a high byte, then
 * pairs of flag bits saying how each character is stored (a low byte
 * alone, with the high byte, both bytes, or a run copied from the ASCII
 * name with a correction).  Into OUT (2 * N bytes, UTF-16BE); its length
 * in bytes, or (size_t)-1 when a read would leave the name's N bytes
 * (libarchive would read past them).
 */
static size_t r4_unpack(const unsigned char *p, size_t n, unsigned char *out)
{
	size_t off = strlen((const char *)p) + 1, len = 0, end = 2 * n;
	unsigned char high, flags = 0;
	unsigned int bits = 0;

	if (off >= n)
		return (size_t)-1;
	high = p[off++];
	while (off < n && len < end) {
		if (!bits) {
			flags = p[off++];
			bits = 8;
			if (off >= n)
				return (size_t)-1;
		}
		bits -= 2;
		switch ((flags >> bits) & 3) {
		case 0:
			out[len++] = 0;
			out[len++] = p[off++];
			break;
		case 1:
			out[len++] = high;
			out[len++] = p[off++];
			break;
		case 2:
			if (off + 1 >= n)
				return (size_t)-1;
			out[len++] = p[off + 1];
			out[len++] = p[off];
			off += 2;
			break;
		default: {
			unsigned int run = p[off++];
			unsigned char extra = 0, hi = 0;

			if (run & 0x80) {
				if (off >= n)
					return (size_t)-1;
				extra = p[off++];
				hi = high;
			}
			for (run = (run & 0x7f) + 2; run && len < end; run--) {
				size_t cp = len >> 1;

				out[len++] = hi;
				out[len++] = (unsigned char)(p[cp] + extra);
			}
			break;
		}
		}
	}
	return len;
}

/* The name at P (N bytes) as libarchive reads it, in UTF-8. */
static char *r4_name(const unsigned char *p, size_t n)
{
	char *name;

	if (memchr(p, '\0', n) == NULL) {
		/* UTF-8 as it is */
		name = malloc(n + 1);
		if (!name)
			return NULL;
		memcpy(name, p, n);
		name[n] = '\0';
		for (char *s = name; (s = strchr(s, '\\')) != NULL; s++)
			*s = '/';
		return name;
	} else {
		unsigned char *u = malloc(2 * n + 2), *c;
		size_t len = u ? r4_unpack(p, n, u) : (size_t)-1, units = 0, out;

		if (len == (size_t)-1) {
			free(u);
			return NULL;
		}
		/* Up to the first U+0000, '\' read as '/'. */
		for (c = u; units < len / 2 && (c[0] || c[1]); c += 2, units++)
			if (!c[0] && c[1] == '\\')
				c[1] = '/';
		name = malloc(3 * units + 1);
		out = name ? names_utf16_to_utf8(u, units, true, name) : NAMES_BAD_UTF16;
		free(u);
		if (out == NAMES_BAD_UTF16) {
			free(name);
			return NULL;
		}
		name[out] = '\0';
		return name;
	}
}

enum rarraw_result rarraw_file4(const unsigned char *p, size_t n, char **name)
{
	const unsigned char *h = NULL;
	size_t hsize = 0;

	*name = NULL;
	/* The one file header, its CRC holding, that ends where libarchive
	 * stopped, or where the target of a symlink begins. */
	for (size_t q = 0; q + R4_FIXED <= n; q++) {
		const unsigned char *c = p + q;
		size_t size = (size_t)c[5] | (size_t)c[6] << 8, stop;
		uint64_t pack = le32(c + 7);
		unsigned int flags = (unsigned int)c[3] | (unsigned int)c[4] << 8;

		if (c[2] != R4_FILE || size < R4_FIXED || size > n - q)
			continue;
		if ((flags & R4_LARGE) && size >= R4_FIXED + 8)
			pack |= (uint64_t)le32(c + R4_FIXED) << 32;
		stop = q + size;
		if (stop != n && !(c[15] == R4_HOST_UNIX && (le32(c + 28) & 0170000) == 0120000 &&
				   pack == n - stop))
			continue;
		if ((crc32(0, c + 2, (uInt)(size - 2)) & 0xffff) != ((unsigned int)c[0] | (unsigned int)c[1] << 8))
			continue;
		if (h)
			return RARRAW_BAD;
		h = c;
		hsize = size;
	}
	if (!h)
		return RARRAW_BAD;
	{
		unsigned int flags = (unsigned int)h[3] | (unsigned int)h[4] << 8;
		size_t nsize = (size_t)h[26] | (size_t)h[27] << 8;
		size_t at = R4_FIXED + ((flags & R4_LARGE) ? 8 : 0);

		if ((flags & (R4_SPLIT | R4_SOLID)) || !(flags & R4_UNICODE) || nsize == 0 ||
		    at > hsize || nsize > hsize - at)
			return RARRAW_BAD;
		*name = r4_name(h + at, nsize);
	}
	return *name ? RARRAW_OK : RARRAW_BAD;
}
