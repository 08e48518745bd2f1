/*
 * zipraw.c - a zip entry's local file header found again in the bytes
 * libarchive consumed for it, so that its name keeps the archive's bytes
 * (issue 23: libarchive composes every name it converts from UTF-8).
 */
#include "config.h"

#include <string.h>

#include "zipraw.h"

#define LOCAL_LEN 30			/* the fixed part of a local header */
#define FLAG_UTF8 (1u << 11)		/* the name and comment are UTF-8 */
#define EXTRA_UNICODE_PATH 0x7075	/* Info-ZIP Unicode Path */
#define METHOD_STORED 0
#define SIZE_IN_ZIP64 0xffffffffu	/* the size is in the zip64 field */
#define SYSTEM_MSDOS 0

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* CRC-32 (ISO 3309, zip's): a name at a time, so bit by bit is enough. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

/*
 * The extra field's blocks as libarchive walks them (process_extra()):
 * a block that runs past the field, or bytes left over, and libarchive
 * refused the entry.  A Unicode Path block (version, CRC-32, name)
 * replaces the name when its CRC-32 is the name's so far.
 */
static bool walk_extra(const unsigned char *x, size_t len, struct zipraw *out)
{
	while (len >= 4) {
		uint16_t id = le16(x);
		size_t size = le16(x + 2);

		x += 4;
		len -= 4;
		if (size > len)
			return false;
		if (id == EXTRA_UNICODE_PATH && size >= 5 &&
		    le32(x + 1) == crc32_of(out->name.p, out->name.n)) {
			out->name.p = x + 5;
			out->name.n = size - 5;
			out->unicode_path = true;
		}
		x += size;
		len -= size;
	}
	return len == 0;
}

/* The header at P + AT, if it is one that ends as libarchive's reading
 * did (zipraw_local()). */
static bool parse_at(const unsigned char *p, size_t n, size_t at, bool symlink,
		     struct zipraw *out)
{
	const unsigned char *h = p + at;
	size_t name_len, extra_len, end;
	uint32_t csize;

	if (n - at < LOCAL_LEN)
		return false;
	name_len = le16(h + 26);
	extra_len = le16(h + 28);
	end = at + LOCAL_LEN + name_len + extra_len;
	if (end > n)
		return false;
	*out = (struct zipraw){ .start = at };
	out->name = (struct paxraw_value){ h + LOCAL_LEN, name_len, true };
	out->utf8_flag = (le16(h + 6) & FLAG_UTF8) != 0;
	out->dos = h[5] == SYSTEM_MSDOS;
	if (!walk_extra(h + LOCAL_LEN + name_len, extra_len, out))
		return false;
	if (!symlink)
		return end == n;
	/* libarchive read the target after the header: only a stored one
	 * whose size the header gives is known to end where it stopped. */
	csize = le32(h + 18);
	if (le16(h + 8) != METHOD_STORED || csize == SIZE_IN_ZIP64 || n - end != csize)
		return false;
	out->target = (struct paxraw_value){ p + end, csize, true };
	return true;
}

enum zipraw_result zipraw_local(const unsigned char *p, size_t n, bool symlink,
				struct zipraw *out)
{
	struct zipraw cand;
	int found = 0;

	for (size_t i = 0; i + 4 <= n; i++) {
		if (memcmp(p + i, "PK\3\4", 4) != 0 || !parse_at(p, n, i, symlink, &cand))
			continue;
		if (++found > 1)
			return ZIPRAW_BAD;	/* which one libarchive read is unknown */
		*out = cand;
	}
	return found == 1 ? ZIPRAW_OK : ZIPRAW_BAD;
}
