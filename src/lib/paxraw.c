/*
 * paxraw.c - a tar entry's pax extended header read again from the
 * stream's bytes, so that its names keep the archive's bytes (issue 23:
 * libarchive composes every name it converts from UTF-8).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "paxraw.h"

#define BLOCK 512
/* libarchive refuses a larger special header ("Special header too
 * large"): nothing larger is a header it read. */
#define BODY_MAX (1024u * 1024)
/* libarchive's limit on a record's length ("> 1MB"). */
#define RECORD_MAX 999999u
#define LEN_DIGITS_MAX 6

void paxraw_tail_reset(struct paxraw_tail *t, uint64_t off)
{
	t->n = 0;
	t->start = off;
}

void paxraw_tail_free(struct paxraw_tail *t)
{
	free(t->b);
	*t = (struct paxraw_tail){ 0 };
}

/* Drop the kept bytes before FROM. */
static void tail_drop_before(struct paxraw_tail *t, uint64_t from)
{
	size_t k;

	if (from <= t->start)
		return;
	/* All of it (and no buffer yet, perhaps: memmove must not see it). */
	if (from - t->start >= t->n) {
		paxraw_tail_reset(t, from);
		return;
	}
	k = (size_t)(from - t->start);
	memmove(t->b, t->b + k, t->n - k);
	t->n -= k;
	t->start += k;
}

void paxraw_tail_add(struct paxraw_tail *t, uint64_t off, const unsigned char *p,
		     size_t len, uint64_t keep_from)
{
	uint64_t end = t->start + t->n;

	/* A gap: what is kept cannot be joined to this block. */
	if (off > end) {
		paxraw_tail_reset(t, off);
		end = off;
	}
	tail_drop_before(t, keep_from);
	end = t->start + t->n;
	if (off + len <= end)
		return;			/* all of it kept already */
	/* The block's part past the kept bytes, from KEEP_FROM on. */
	if (off < end) {
		p += end - off;
		len -= (size_t)(end - off);
		off = end;
	}
	if (off < keep_from) {
		if (off + len <= keep_from) {
			paxraw_tail_reset(t, off + len);
			return;
		}
		p += keep_from - off;
		len -= (size_t)(keep_from - off);
		off = keep_from;
		paxraw_tail_reset(t, off);
	}
	/* Only the newest PAXRAW_TAIL_MAX bytes matter. */
	if (len >= PAXRAW_TAIL_MAX) {
		p += len - PAXRAW_TAIL_MAX;
		off += len - PAXRAW_TAIL_MAX;
		len = PAXRAW_TAIL_MAX;
		paxraw_tail_reset(t, off);
	} else if (t->n + len > PAXRAW_TAIL_MAX) {
		tail_drop_before(t, t->start + (t->n + len - PAXRAW_TAIL_MAX));
	}
	if (t->n + len > t->cap) {
		size_t cap = t->cap ? t->cap : 16 * 1024;
		unsigned char *nb;

		while (cap < t->n + len)
			cap *= 2;
		if (cap > PAXRAW_TAIL_MAX)
			cap = PAXRAW_TAIL_MAX;
		nb = realloc(t->b, cap);
		if (!nb) {
			/* Nothing kept: the names are libarchive's. */
			paxraw_tail_reset(t, off + len);
			return;
		}
		t->b = nb;
		t->cap = cap;
	}
	memcpy(t->b + t->n, p, len);
	t->n += len;
}

const unsigned char *paxraw_tail_span(const struct paxraw_tail *t, uint64_t from,
				      uint64_t to)
{
	if (from < t->start || to < from || to > t->start + t->n)
		return NULL;
	return t->b + (from - t->start);
}

/* ---- the headers ------------------------------------------------------ */

/* An octal field as tar readers read it: leading spaces, octal digits,
 * then a space or NUL or the field's end.  False when not one. */
static bool octal_field(const unsigned char *f, size_t len, uint64_t *v)
{
	size_t i = 0;
	bool digits = false;

	*v = 0;
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v > (UINT64_MAX >> 3))
			return false;
		*v = (*v << 3) | (uint64_t)(f[i] - '0');
		digits = true;
	}
	if (i < len && f[i] != ' ' && f[i] != '\0')
		return false;
	return digits;
}

/* The size field: octal, or base-256 (GNU, star) when its top bit is
 * set; only a positive value that fits in 63 bits. */
static bool size_field(const unsigned char *f, uint64_t *v)
{
	if (!(f[0] & 0x80))
		return octal_field(f, 12, v);
	if (f[0] != 0x80)
		return false;		/* negative, or more than 88 bits */
	*v = 0;
	for (size_t i = 1; i < 12; i++) {
		if (*v >> 55)
			return false;
		*v = (*v << 8) | f[i];
	}
	return true;
}

static bool block_is_zero(const unsigned char *h)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (h[i])
			return false;
	return true;
}

/* The checksum as libarchive accepts it: the unsigned sum, or the signed
 * one some old writers used, with the field itself counted as spaces. */
static bool checksum_ok(const unsigned char *h)
{
	uint64_t want;
	long usum = 0, ssum = 0;

	if (!octal_field(h + 148, 8, &want))
		return false;
	for (size_t i = 0; i < BLOCK; i++) {
		unsigned char c = i >= 148 && i < 156 ? ' ' : h[i];

		usum += c;
		ssum += (signed char)c;
	}
	return want == (uint64_t)usum || (ssum >= 0 && want == (uint64_t)ssum);
}

static bool key_is(const unsigned char *k, size_t n, const char *name)
{
	return n == strlen(name) && memcmp(k, name, n) == 0;
}

static bool value_is(const struct paxraw_value *v, const char *s)
{
	return key_is(v->p, v->n, s);
}

/* The records of an 'x' body, "LEN key=value\n" each, into OUT.  False
 * on the first that is not exactly so. */
static bool parse_records(const unsigned char *p, size_t n, struct paxraw *out)
{
	while (n > 0) {
		size_t len = 0, digits = 0, klen;
		const unsigned char *key, *eq, *end;
		struct paxraw_value v;

		while (digits < n && p[digits] >= '0' && p[digits] <= '9') {
			if (++digits > LEN_DIGITS_MAX)
				return false;
			len = len * 10 + (size_t)(p[digits - 1] - '0');
		}
		if (digits == 0 || digits >= n || p[digits] != ' ')
			return false;
		/* The length counts the whole record: digits, space, key,
		 * '=', value and the newline. */
		if (len > RECORD_MAX || len > n || len < digits + 4 || p[len - 1] != '\n')
			return false;
		key = p + digits + 1;
		end = p + len - 1;
		eq = memchr(key, '=', (size_t)(end - key));
		if (!eq || eq == key || memchr(key, '\0', (size_t)(eq - key)))
			return false;
		klen = (size_t)(eq - key);
		v = (struct paxraw_value){ eq + 1, (size_t)(end - eq - 1), true };

		if (key_is(key, klen, "path"))
			out->path = v;
		else if (key_is(key, klen, "linkpath"))
			out->linkpath = v;
		else if (key_is(key, klen, "GNU.sparse.name"))
			out->sparse_name = v;
		else if (key_is(key, klen, "GNU.dumpdir"))
			out->dumpdir = v;
		else if (key_is(key, klen, "hdrcharset"))
			/* As libarchive: the last BINARY or UTF-8 record
			 * decides; other values change nothing. */
			out->binary = value_is(&v, "BINARY") ? true :
				      value_is(&v, "ISO-IR 10646 2000 UTF-8") ? false :
				      out->binary;
		else if (key_is(key, klen, "GNU.sparse.major"))
			out->sparse_map = v.n == 1 && v.p[0] == '1';
		p += len;
		n -= len;
	}
	return true;
}

enum paxraw_result paxraw_parse(const unsigned char *p, size_t n, struct paxraw *out)
{
	size_t at = 0;
	bool have_x = false;

	*out = (struct paxraw){ 0 };
	for (;;) {
		const unsigned char *h = p + at;
		uint64_t size;
		size_t body;

		if (n - at < BLOCK)
			return PAXRAW_BAD;
		/* tar -i: the end blocks of an archive before this one. */
		if (!have_x && block_is_zero(h)) {
			at += BLOCK;
			continue;
		}
		if (!checksum_ok(h))
			return PAXRAW_BAD;
		switch (h[156]) {
		case 'g':
		case 'x':
			break;
		case 'A': case 'K': case 'L': case 'V': case 'X':
			/* Chains libarchive reads its own way. */
			return PAXRAW_BAD;
		default:
			out->typeflag = (char)h[156];
			out->length = at + BLOCK;
			return have_x ? PAXRAW_OK : PAXRAW_NONE;
		}
		if (!size_field(h + 124, &size) || size > BODY_MAX)
			return PAXRAW_BAD;
		body = ((size_t)size + BLOCK - 1) & ~(size_t)(BLOCK - 1);
		if (body > n - at - BLOCK)
			return PAXRAW_BAD;
		if (h[156] == 'x') {
			/* Two: libarchive applies the last one's body twice,
			 * an order not worth repeating. */
			if (have_x)
				return PAXRAW_BAD;
			have_x = true;
			if (!parse_records(h + BLOCK, (size_t)size, out))
				return PAXRAW_BAD;
		}
		at += BLOCK + body;
	}
}

/* The length of the UTF-8 sequence at P (N bytes left), or 0 when it is
 * not a valid one (overlong, surrogate, past U+10FFFF, cut short). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; cp = c & 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; cp = c & 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; cp = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool paxraw_name_ok(const struct paxraw_value *v)
{
	if (!v->set || v->n == 0 || memchr(v->p, '\0', v->n))
		return false;
	for (size_t i = 0; i < v->n;) {
		size_t k = utf8_seq(v->p + i, v->n - i);

		if (!k)
			return false;
		i += k;
	}
	return true;
}
