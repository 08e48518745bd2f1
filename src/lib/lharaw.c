/*
 * lharaw.c - an lha level 2 or 3 header's path (lharaw.h).
 *
 * Level 2: a fixed part of 24 bytes (its first two the header's size),
 * then extended headers, each its size (2 bytes, counting itself), a type
 * and data, the last a size of 0; padding up to the header's size.
 * Level 3: a fixed part of 28 bytes (the header's size at 24), sizes of 4
 * bytes, no padding.  The header's CRC-16 (lha's, the ARC polynomial) is
 * in extended header 0x00, over the whole header with that value read as
 * zero.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lharaw.h"
#include "names.h"

#define EXT_CRC 0x00
#define EXT_FILENAME 0x01
#define EXT_DIRECTORY 0x02
#define EXT_UTF16_FILENAME 0x44
#define EXT_UTF16_DIRECTORY 0x45
#define EXT_CODEPAGE 0x46
#define CP_UTF8 65001

enum charset { AS_IS, UTF16LE, OTHER };

struct part {
	const unsigned char *p;
	size_t n;
	enum charset cs;
};

static uint16_t crc16(uint16_t crc, const unsigned char *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (uint16_t)((crc >> 1) ^ ((crc & 1) ? 0xA001 : 0));
	}
	return crc;
}

static uint32_t le(const unsigned char *p, size_t width)
{
	uint32_t v = 0;

	for (size_t i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/*
 * The extended headers at P (WIDTH-byte sizes) up to END: where their
 * terminator ends in *STOP, the parts and the CRC of the whole header
 * (from H) with every CRC value read as zero.  False for a chain
 * libarchive would refuse.
 */
static bool walk(const unsigned char *h, const unsigned char *p, const unsigned char *end,
		 size_t width, const unsigned char **stop, struct part *dir, struct part *file,
		 uint16_t *crc, uint16_t *stored, bool *has_crc)
{
	static const unsigned char zeros[2];

	*crc = crc16(0, h, (size_t)(p - h));
	for (;;) {
		size_t size, data;
		unsigned char type;

		if ((size_t)(end - p) < width)
			return false;
		size = le(p, width);
		if (size == 0) {
			*crc = crc16(*crc, p, width);
			*stop = p + width;
			return true;
		}
		if (size <= width || size > (size_t)(end - p))
			return false;
		type = p[width];
		data = size - width - 1;
		if (type == EXT_CRC && data >= 2) {
			*crc = crc16(*crc, p, width + 1);
			*crc = crc16(*crc, zeros, 2);
			*crc = crc16(*crc, p + width + 3, data - 2);
			*stored = (uint16_t)le(p + width + 1, 2);
			*has_crc = true;
		} else {
			*crc = crc16(*crc, p, size);
		}
		switch (type) {
		case EXT_FILENAME:
		case EXT_UTF16_FILENAME:
			if (data && p[width + 1] == 0)
				return false;
			if (type == EXT_UTF16_FILENAME && (data & 1))
				return false;
			file->p = p + width + 1;
			file->n = data;
			if (type == EXT_UTF16_FILENAME)
				file->cs = UTF16LE;
			break;
		case EXT_DIRECTORY:
		case EXT_UTF16_DIRECTORY:
			if (data == 0 || p[width + 1] == 0 ||
			    (type == EXT_UTF16_DIRECTORY && (data & 1)))
				return false;
			dir->p = p + width + 1;
			dir->n = data;
			if (type == EXT_UTF16_DIRECTORY)
				dir->cs = UTF16LE;
			break;
		case EXT_CODEPAGE:
			if (data == 4)
				dir->cs = file->cs =
					le(p + width + 1, 4) == CP_UTF8 ? AS_IS : OTHER;
			break;
		default:
			break;
		}
		p += size;
	}
}

/* PART, read as libarchive reads it, appended to OUT at *O (room: 3
 * bytes a byte of it).  DIR: 0xFF (or U+FFFF) is '/', and it must end
 * with one. */
static bool put_part(const struct part *pt, bool dir, char *out, size_t *o)
{
	if (pt->cs == OTHER)
		return false;
	if (pt->cs == AS_IS) {
		for (size_t i = 0; i < pt->n; i++)
			out[(*o)++] = dir && pt->p[i] == 0xFF ? '/' : (char)pt->p[i];
	} else {
		unsigned char *u = malloc(pt->n ? pt->n : 1);
		size_t len;

		if (!u)
			return false;
		for (size_t i = 0; i + 1 < pt->n; i += 2) {
			bool sep = dir && pt->p[i] == 0xFF && pt->p[i + 1] == 0xFF;

			u[i] = sep ? '/' : pt->p[i];
			u[i + 1] = sep ? 0 : pt->p[i + 1];
		}
		len = names_utf16_to_utf8(u, pt->n / 2, false, out + *o);
		free(u);
		if (len == NAMES_BAD_UTF16)
			return false;
		*o += len;
	}
	return !dir || (*o > 0 && out[*o - 1] == '/');
}

enum lharaw_result lharaw_path(const unsigned char *p, size_t n, char **path)
{
	const unsigned char *end = p + n;
	struct part dir = { NULL, 0, AS_IS }, file = { NULL, 0, AS_IS };
	bool found = false;
	size_t o = 0;
	char *out;

	*path = NULL;
	/* The one header, its CRC holding, that ends where libarchive
	 * stopped. */
	for (size_t q = 0; q + 24 <= n; q++) {
		const unsigned char *h = p + q, *stop;
		struct part d = { NULL, 0, AS_IS }, f = { NULL, 0, AS_IS };
		uint16_t crc, stored = 0;
		bool has_crc = false;
		size_t fixed, hsize;

		if (h[0 + 2] != '-' || h[6] != '-')
			continue;
		if (h[20] == 1 && q + 27 <= n) {
			/* Level 1: a header of H[0] + 2 bytes (its 8-bit sum at
			 * H[1]) holding the name, the extended headers after it
			 * (no CRC: the sum is all the check there is). */
			size_t nlen = h[21];
			unsigned char sum = 0;

			hsize = (size_t)h[0] + 2;
			if (nlen > 230 || hsize < 27 + nlen || hsize > (size_t)(end - h) ||
			    memchr(h + 22, 0xff, nlen))
				continue;
			for (size_t i = 2; i < hsize; i++)
				sum = (unsigned char)(sum + h[i]);
			if (sum != h[1] ||
			    !walk(h, h + hsize - 2, end, 2, &stop, &d, &f, &crc, &stored, &has_crc) ||
			    stop != end)
				continue;
			if (!f.p) {
				f.p = h + 22;
				f.n = nlen;
			}
			if (found)
				return LHARAW_BAD;
			found = true;
			dir = d;
			file = f;
			continue;
		}
		if (h[19] != 0x20)
			continue;
		if (h[20] == 2) {
			fixed = 24;
			hsize = (size_t)le(h, 2);
			if (hsize < fixed || hsize > (size_t)(end - h) || h + hsize != end)
				continue;
		} else if (h[20] == 3 && q + 28 <= n && le(h, 2) == 4) {
			fixed = 28;
			hsize = (size_t)le(h + 24, 4);
			if (hsize < fixed + 4)
				continue;
		} else {
			continue;
		}
		if (!walk(h, h + fixed, end, fixed == 24 ? 2 : 4, &stop, &d, &f, &crc, &stored,
			  &has_crc))
			continue;
		if (fixed == 24)
			crc = crc16(crc, stop, (size_t)(end - stop));	/* the padding */
		else if (stop != end)
			continue;
		if (!has_crc || crc != stored)
			continue;
		if (found)
			return LHARAW_BAD;
		found = true;
		dir = d;
		file = f;
	}
	if (!found || (file.n == 0 && dir.n == 0))
		return LHARAW_BAD;
	out = malloc(3 * (dir.n + file.n) + 1);
	if (!out)
		return LHARAW_BAD;
	if ((dir.n && !put_part(&dir, true, out, &o)) || (file.n && !put_part(&file, false, out, &o)) ||
	    memchr(out, '\0', o)) {
		free(out);
		return LHARAW_BAD;
	}
	out[o] = '\0';
	/* libarchive's one change to every lha path */
	for (char *c = out; (c = strchr(c, '\\')) != NULL; c++)
		*c = '/';
	*path = out;
	return LHARAW_OK;
}
