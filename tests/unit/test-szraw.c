/*
 * test-szraw.c - the 7z header parser (szraw.c) on the headers a hostile
 * archive could hand it: forged counts and lengths that would make it
 * read past its bytes or loop long, broken UTF-16, a wrong CRC-32, an
 * encoded header that claims a huge dictionary.  One row per shape, with
 * the verdict and, when accepted, the names taken.
 */
#include "config.h"

#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../src/lib/szraw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"
#define NFC "caf\xc3\xa9"

/* 7z's NUMBER: as few bytes as hold V (szraw.c says the layout). */
static void num(struct buf *b, unsigned long long v)
{
	int i = 0;

	while (i < 8 && v >> (8 * i + 7 - i) != 0)
		i++;
	put8(b, (0xff00u >> i & 0xff) | (i < 8 ? (unsigned)(v >> (8 * i)) : 0));
	for (int k = 0; k < i; k++)
		put8(b, (unsigned)(v >> (8 * k)));
}

/* UTF-16LE units, then the NUL unit that ends a name. */
static void name16(struct buf *b, const unsigned *units, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put8(b, units[i] & 0xff);
		put8(b, units[i] >> 8);
	}
	put8(b, 0);
	put8(b, 0);
}

static const unsigned u_nfd[] = { 'c', 'a', 'f', 'e', 0x301 };
static const unsigned u_nfc[] = { 'c', 'a', 'f', 0xe9 };
static const unsigned u_pair[] = { 'x', 0xd83d, 0xde00 };	/* x U+1F600 */
static const unsigned u_high[] = { 'x', 0xd83d, 'y' };
static const unsigned u_low[] = { 0xde00, 'x' };

/* kName's data for two names: External 0, then both. */
static void two_names(struct buf *d, const unsigned *a, size_t an, const unsigned *b, size_t bn)
{
	put8(d, 0);
	name16(d, a, an);
	name16(d, b, bn);
}

/* A Header: MAIN (kMainStreamsInfo's body) when given, then kFilesInfo of
 * FILES files with the property bytes PROPS, then kEnd. */
static void header(struct buf *b, const struct buf *main_streams, unsigned long long files,
		   const struct buf *props)
{
	put8(b, 0x01);
	if (main_streams) {
		put8(b, 0x04);
		put(b, main_streams->b, main_streams->n);
	}
	put8(b, 0x05);
	num(b, files);
	put(b, props->b, props->n);
	put8(b, 0x00);			/* kEnd of kFilesInfo */
	put8(b, 0x00);			/* kEnd of kHeader */
}

/* A kName property holding D. */
static void kname(struct buf *props, const struct buf *d)
{
	put8(props, 0x11);
	num(props, d->n);
	put(props, d->b, d->n);
}

/* What 7-Zip writes for a solid LZMA2 folder of two files: pack info,
 * one folder, its size, the two files' sizes and CRCs. */
static void main_streams(struct buf *m, unsigned long long substreams)
{
	put8(m, 0x06);			/* kPackInfo */
	num(m, 0);
	num(m, 1);
	put8(m, 0x09);
	num(m, 300);
	put8(m, 0x00);
	put8(m, 0x07);			/* kUnpackInfo */
	put8(m, 0x0b);
	num(m, 1);
	put8(m, 0);			/* not External */
	num(m, 1);			/* one coder */
	put8(m, 0x21);			/* id of 1 byte, with properties */
	put8(m, 0x21);			/* LZMA2 */
	num(m, 1);
	put8(m, 0x18);
	put8(m, 0x0c);			/* kCodersUnpackSize */
	num(m, 1000);
	put8(m, 0x00);
	put8(m, 0x08);			/* kSubStreamsInfo */
	put8(m, 0x0d);
	num(m, substreams);
	put8(m, 0x09);
	num(m, 600);			/* the second: 1000 - 600 */
	put8(m, 0x0a);
	put8(m, 1);			/* all defined */
	put32(m, 0x11111111);
	put32(m, 0x22222222);
	put8(m, 0x00);
	put8(m, 0x00);			/* kEnd of the streams info */
}

/* ---- the header rows ---------------------------------------------------- */

static void h_two(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_streams_first(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 }, m = { .n = 0 };

	main_streams(&m, 2);
	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, &m, 2, &p);
}

static void h_other_props(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	put8(&p, 0x0e);			/* kEmptyStream: one byte of bits */
	num(&p, 1);
	put8(&p, 0x40);
	put8(&p, 0x19);			/* kDummy */
	num(&p, 2);
	put8(&p, 0);
	put8(&p, 0);
	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	put8(&p, 0x14);			/* kMTime, cut to nothing of use */
	num(&p, 1);
	put8(&p, 0);
	header(b, NULL, 2, &p);
}

static void h_pair(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_pair, 3, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_high(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_high, 3, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_low(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_low, 2, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_empty(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 0, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

/* A long name: kName's length takes a NUMBER of two bytes. */
static void h_long(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };
	unsigned u[200];

	for (size_t i = 0; i < 200; i++)
		u[i] = 'a';
	put8(&d, 0);
	name16(&d, u, 200);
	kname(&p, &d);
	header(b, NULL, 1, &p);
}

static void h_unterminated(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	d.n -= 2;
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_more_files(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 3, &p);
}

static void h_huge_count(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, NULL, 0xffffffffffffffffULL, &p);
}

static void h_external(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	d.b[0] = 1;
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_twice(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	kname(&p, &d);
	header(b, NULL, 2, &p);
}

static void h_unnamed(struct buf *b)
{
	struct buf p = { .n = 0 };

	header(b, NULL, 2, &p);
}

/* A property whose length runs past the header's bytes. */
static void h_long_property(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 };

	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	put8(&p, 0x14);
	num(&p, 0xffffffffffULL);
	header(b, NULL, 2, &p);
}

static void h_cut(struct buf *b)
{
	h_two(b);
	b->n -= 1;
}

/* A folder count in the billions: refused before it is walked. */
static void h_huge_folders(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 }, m = { .n = 0 };

	put8(&m, 0x07);
	put8(&m, 0x0b);
	num(&m, 4000000000ULL);
	put8(&m, 0);
	put8(&m, 0x00);
	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, &m, 2, &p);
}

/* A sub-stream count of 2^40 in one folder: never a loop of 2^40. */
static void h_huge_substreams(struct buf *b)
{
	struct buf d = { .n = 0 }, p = { .n = 0 }, m = { .n = 0 };

	main_streams(&m, 1ULL << 40);
	two_names(&d, u_nfd, 5, u_nfc, 4);
	kname(&p, &d);
	header(b, &m, 2, &p);
}

static void h_not_header(struct buf *b)
{
	h_two(b);
	b->b[0] = 0x17;
}

static const struct {
	const char *attack;
	void (*build)(struct buf *);
	enum szraw_result want;
	size_t count;
	const char *name[2];		/* NULL: SZRAW_NO_NAME */
} names_cases[] = {
	{ "two names differing only in normalisation: both kept as stored", h_two, SZRAW_OK, 2, { NFD, NFC } },
	{ "after the main streams info (pack, folder, sub-streams)", h_streams_first, SZRAW_OK, 2, { NFD, NFC } },
	{ "among other file properties, stepped over", h_other_props, SZRAW_OK, 2, { NFD, NFC } },
	{ "a surrogate pair: one 4-byte character", h_pair, SZRAW_OK, 2, { "x\xf0\x9f\x98\x80", NFC } },
	{ "a high surrogate alone: that name is libarchive's", h_high, SZRAW_OK, 2, { NULL, NFC } },
	{ "a low surrogate alone: that name is libarchive's", h_low, SZRAW_OK, 2, { NULL, NFC } },
	{ "an empty name: libarchive's", h_empty, SZRAW_OK, 2, { NULL, NFC } },
	{ "a name of 200 characters (a 2-byte length)", h_long, SZRAW_OK, 1, { NULL, NULL } },
	{ "the last name without its NUL: refused", h_unterminated, SZRAW_BAD, 0, { NULL, NULL } },
	{ "more files than names: refused", h_more_files, SZRAW_BAD, 0, { NULL, NULL } },
	{ "a file count of 2^64-1: refused", h_huge_count, SZRAW_BAD, 0, { NULL, NULL } },
	{ "names kept in another stream (External): refused", h_external, SZRAW_BAD, 0, { NULL, NULL } },
	{ "two kName properties: refused", h_twice, SZRAW_BAD, 0, { NULL, NULL } },
	{ "files without names: refused", h_unnamed, SZRAW_BAD, 0, { NULL, NULL } },
	{ "a property longer than the header: refused", h_long_property, SZRAW_BAD, 0, { NULL, NULL } },
	{ "the header's last byte cut: refused", h_cut, SZRAW_BAD, 0, { NULL, NULL } },
	{ "four billion folders in a few bytes: refused", h_huge_folders, SZRAW_BAD, 0, { NULL, NULL } },
	{ "2^40 sub-streams in one folder: refused", h_huge_substreams, SZRAW_BAD, 0, { NULL, NULL } },
	{ "an encoded header given as a plain one: refused", h_not_header, SZRAW_BAD, 0, { NULL, NULL } },
};

static bool names_as(const struct szraw_names *nm, size_t i, const char *want)
{
	if (!want)
		return nm->at[i] == SZRAW_NO_NAME;
	return nm->at[i] != SZRAW_NO_NAME && strcmp(nm->text + nm->at[i], want) == 0;
}

/* ---- encoded headers and unpacking ----------------------------------- */

/* kEncodedHeader: the packed stream at POS of PACKED bytes, one folder
 * of one coder METHOD (LZMA2's one property byte PROP), UNPACKED bytes
 * out, its CRC-32 CRC when HAS_CRC. */
static void encoded_folders(struct buf *b, unsigned folders, unsigned long long pos,
			    unsigned long long packed, const unsigned char *method,
			    size_t method_len, int prop, unsigned long long unpacked,
			    bool has_crc, unsigned long crc)
{
	put8(b, 0x17);
	put8(b, 0x06);
	num(b, pos);
	num(b, 1);
	put8(b, 0x09);
	num(b, packed);
	put8(b, 0x00);
	put8(b, 0x07);
	put8(b, 0x0b);
	num(b, folders);
	put8(b, 0);
	for (unsigned f = 0; f < folders; f++) {
		num(b, 1);
		put8(b, (unsigned)method_len | (prop >= 0 ? 0x20 : 0));
		put(b, method, method_len);
		if (prop >= 0) {
			num(b, 1);
			put8(b, (unsigned)prop);
		}
	}
	put8(b, 0x0c);
	for (unsigned f = 0; f < folders; f++)
		num(b, unpacked);
	if (has_crc) {
		put8(b, 0x0a);
		put8(b, 1);
		for (unsigned f = 0; f < folders; f++)
			put32(b, crc);
	}
	put8(b, 0x00);
	put8(b, 0x00);
}

static void encoded(struct buf *b, unsigned long long pos, unsigned long long packed,
		    const unsigned char *method, size_t method_len, int prop,
		    unsigned long long unpacked, bool has_crc, unsigned long crc)
{
	encoded_folders(b, 1, pos, packed, method, method_len, prop, unpacked, has_crc, crc);
}

static const unsigned char m_copy[] = { 0x00 };
static const unsigned char m_lzma2[] = { 0x21 };
static const unsigned char m_bzip2[] = { 0x04, 0x02, 0x02 };

/* PLAIN packed with raw LZMA2 (a 1 MiB dictionary) into OUT. */
static size_t lzma2_pack(const struct buf *plain, unsigned char *out, size_t cap)
{
	lzma_options_lzma opt;
	lzma_filter f[2] = { { .id = LZMA_FILTER_LZMA2, .options = &opt },
			     { .id = LZMA_VLI_UNKNOWN } };
	size_t n = 0;

	lzma_lzma_preset(&opt, 1);
	opt.dict_size = 1u << 20;
	if (lzma_raw_buffer_encode(f, NULL, plain->b, plain->n, out, &n, cap) != LZMA_OK)
		return 0;
	return n;
}

/*
 * szraw_unpack() with the address space limited to 1 GiB, where a 4 GiB
 * dictionary cannot be had.  Under AddressSanitizer, whose shadow memory
 * needs terabytes of address space, without the limit.
 */
static bool unpack_within(const struct szraw_packed *pk, const unsigned char *in,
			  unsigned char *out)
{
#if defined(__SANITIZE_ADDRESS__)
	return szraw_unpack(pk, in, out) == SZRAW_OK;
#else
	struct rlimit old, lim;
	bool ok;

	if (getrlimit(RLIMIT_AS, &old) != 0)
		return false;
	lim = old;
	lim.rlim_cur = 1ULL << 30;
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
		lim.rlim_cur = old.rlim_cur;
	if (setrlimit(RLIMIT_AS, &lim) != 0)
		return false;
	ok = szraw_unpack(pk, in, out) == SZRAW_OK;
	setrlimit(RLIMIT_AS, &old);
	return ok;
#endif
}

int main(void)
{
	size_t ncases = sizeof(names_cases) / sizeof(names_cases[0]);
	struct buf plain = { .n = 0 }, e, s;
	struct szraw_packed pk;
	struct szraw_start st;
	unsigned char packed[4096], out[4096];
	size_t packed_n;
	unsigned long plain_crc;

	tap_plan((int)ncases + 21);

	/* The start header. */
	s = (struct buf){ .n = 0 };
	put(&s, "7z\xbc\xaf\x27\x1c\x00\x04", 8);
	put32(&s, 0);
	put32(&s, 1000);
	put32(&s, 0);
	put32(&s, 90);
	put32(&s, 0);
	put32(&s, 0xabcdef01);
	s.b[8] = 0;
	{
		unsigned long c = szraw_crc32(s.b + 12, 20);

		for (int k = 0; k < 4; k++)
			s.b[8 + k] = (unsigned char)(c >> (8 * k));
	}
	tap_ok(szraw_start(s.b, s.n, &st) == SZRAW_OK && st.offset == 1000 && st.size == 90 &&
	       st.crc == 0xabcdef01, "start header: where the next header is, its size and CRC");
	s.b[20] ^= 1;
	tap_ok(szraw_start(s.b, s.n, &st) == SZRAW_BAD,
	       "start header with a changed size: its CRC-32 refuses it");
	s.b[20] ^= 1;
	s.b[2] = 'x';
	tap_ok(szraw_start(s.b, s.n, &st) == SZRAW_BAD, "start header without the signature");
	s.b[2] = 0xbc;
	tap_ok(szraw_start(s.b, 31, &st) == SZRAW_BAD, "start header of 31 bytes");
	tap_ok(szraw_crc32((const unsigned char *)"123456789", 9) == 0xcbf43926u,
	       "CRC-32 of \"123456789\" is the check value");

	/* The headers. */
	for (size_t i = 0; i < ncases; i++) {
		struct buf b = { .n = 0 };
		struct szraw_names nm;
		enum szraw_result r;
		unsigned char *copy;
		int ok;

		names_cases[i].build(&b);
		/* The bytes alone, so that AddressSanitizer sees a read past
		 * them. */
		copy = malloc(b.n);
		if (!copy)
			return 99;
		memcpy(copy, b.b, b.n);
		r = szraw_names(copy, b.n, &nm);
		free(copy);
		ok = r == names_cases[i].want;
		if (ok && r == SZRAW_OK) {
			ok = nm.count == names_cases[i].count;
			for (size_t k = 0; ok && k < nm.count && k < 2; k++)
				ok = names_cases[i].build == h_long ?
				     nm.at[k] != SZRAW_NO_NAME && strlen(nm.text + nm.at[k]) == 200 :
				     names_as(&nm, k, names_cases[i].name[k]);
		}
		if (r != SZRAW_OK)
			ok = ok && nm.count == 0 && !nm.text && !nm.at;
		szraw_names_free(&nm);
		tap_ok(ok, "%s", names_cases[i].attack);
	}

	/* Encoded headers: a header of two names, copied and LZMA2. */
	h_two(&plain);
	plain_crc = szraw_crc32(plain.b, plain.n);
	packed_n = lzma2_pack(&plain, packed, sizeof(packed));

	e = (struct buf){ .n = 0 };
	encoded(&e, 7, plain.n, m_copy, 1, -1, plain.n, true, plain_crc);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK && pk.pos == 7 && pk.size == plain.n &&
	       pk.unpacked == plain.n && pk.has_crc && pk.crc == plain_crc &&
	       szraw_unpack(&pk, plain.b, out) == SZRAW_OK && memcmp(out, plain.b, plain.n) == 0,
	       "encoded header, copy: where, how large, its CRC; unpacked as it was");
	pk.crc ^= 1;
	tap_ok(szraw_unpack(&pk, plain.b, out) == SZRAW_BAD, "encoded header with a wrong CRC-32");

	e = (struct buf){ .n = 0 };
	encoded(&e, 7, plain.n + 1, m_copy, 1, -1, plain.n, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, plain.b, out) == SZRAW_BAD,
	       "copy whose packed and unpacked sizes differ");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n, m_lzma2, 1, 18, plain.n, true, plain_crc);
	tap_ok(packed_n > 0 && szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_OK && memcmp(out, plain.b, plain.n) == 0,
	       "encoded header, LZMA2: unpacked as it was");

	/* Property byte 40: a dictionary of 4 GiB, for a header of a few
	 * bytes; the decoder gets what the header can use. */
	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n, m_lzma2, 1, 40, plain.n, true, plain_crc);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK && unpack_within(&pk, packed, out),
	       "LZMA2 claiming a 4 GiB dictionary: unpacked within 1 GiB of address space");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n - 3, m_lzma2, 1, 18, plain.n, true, plain_crc);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_BAD, "LZMA2 stream cut short");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n, m_lzma2, 1, 18, plain.n + 10, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_BAD,
	       "LZMA2 claiming more bytes than it holds");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n, m_lzma2, 1, 41, plain.n, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_BAD,
	       "LZMA2 property byte 41 (no such dictionary)");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, packed_n, m_lzma2, 1, -1, plain.n, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_BAD, "LZMA2 without its properties");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, 10, m_bzip2, 3, -1, 20, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_OK &&
	       szraw_unpack(&pk, packed, out) == SZRAW_BAD,
	       "a coder other than copy, LZMA, LZMA2: libarchive's names");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, 10, m_copy, 1, -1, SZRAW_HEADER_MAX + 1ULL, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_BAD,
	       "an encoded header unpacking to more than 64 MiB: refused");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, 10, m_copy, 1, -1, 0, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_BAD, "an encoded header of no bytes");

	/* Two folders: not what 7-Zip writes for a header. */
	e = (struct buf){ .n = 0 };
	encoded_folders(&e, 2, 0, 10, m_copy, 1, -1, 10, false, 0);
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_BAD, "an encoded header of two folders");

	e = (struct buf){ .n = 0 };
	encoded(&e, 0, 10, m_copy, 1, -1, 10, false, 0);
	e.n -= 2;
	tap_ok(szraw_encoded(e.b, e.n, &pk) == SZRAW_BAD, "an encoded header cut short");

	tap_ok(szraw_encoded(plain.b, plain.n, &pk) == SZRAW_BAD,
	       "a plain header given as an encoded one");
	tap_ok(szraw_names((const unsigned char *)"", 0, &(struct szraw_names){ 0 }) ==
	       SZRAW_BAD, "no bytes");
	return tap_done();
}
