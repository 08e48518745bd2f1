/*
 * szraw.c - a 7z header parsed again for its file names, so that they
 * keep the archive's bytes (issue 23: libarchive composes every name it
 * converts from UTF-16).  The layout is 7-Zip's 7zFormat.txt.
 */
#include "config.h"

#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "szraw.h"

/* Property ids. */
enum {
	K_END = 0x00,
	K_HEADER = 0x01,
	K_ARCHIVE_PROPERTIES = 0x02,
	K_ADDITIONAL_STREAMS = 0x03,
	K_MAIN_STREAMS = 0x04,
	K_FILES_INFO = 0x05,
	K_PACK_INFO = 0x06,
	K_UNPACK_INFO = 0x07,
	K_SUBSTREAMS_INFO = 0x08,
	K_SIZE = 0x09,
	K_CRC = 0x0a,
	K_FOLDER = 0x0b,
	K_CODERS_UNPACK_SIZE = 0x0c,
	K_NUM_UNPACK_STREAM = 0x0d,
	K_NAME = 0x11,
	K_ENCODED_HEADER = 0x17,
};

static const unsigned char signature[6] = { '7', 'z', 0xbc, 0xaf, 0x27, 0x1c };

uint32_t szraw_crc32(const unsigned char *p, size_t n)
{
	uint32_t table[256], c = 0xffffffffu;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t t = i;

		for (int k = 0; k < 8; k++)
			t = (t >> 1) ^ (0xedb88320u & (0u - (t & 1)));
		table[i] = t;
	}
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return ~c;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

enum szraw_result szraw_start(const unsigned char *p, size_t n, struct szraw_start *out)
{
	if (n < SZRAW_START_LEN || memcmp(p, signature, sizeof(signature)) != 0 ||
	    szraw_crc32(p + 12, 20) != le32(p + 8))
		return SZRAW_BAD;
	out->offset = le64(p + 12);
	out->size = le64(p + 20);
	out->crc = le32(p + 28);
	return SZRAW_OK;
}

/* ---- reading the header ------------------------------------------------ */

/* The bytes left to parse; BAD once anything ran past them. */
struct cur {
	const unsigned char *p;
	size_t n;
	bool bad;
};

static unsigned byte(struct cur *c)
{
	if (c->bad || c->n < 1) {
		c->bad = true;
		return 0;
	}
	c->n--;
	return *c->p++;
}

/* 7z's NUMBER: the first byte's leading one bits count the bytes after
 * it (little-endian), its remaining bits are the highest. */
static uint64_t number(struct cur *c)
{
	unsigned first = byte(c), mask = 0x80;
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		if (!(first & mask))
			return v | (uint64_t)(first & (mask - 1)) << (8 * i);
		v |= (uint64_t)byte(c) << (8 * i);
		mask >>= 1;
	}
	return v;
}

static const unsigned char *take(struct cur *c, uint64_t len)
{
	const unsigned char *p = c->p;

	if (c->bad || len > c->n) {
		c->bad = true;
		return NULL;
	}
	c->p += len;
	c->n -= (size_t)len;
	return p;
}

/* A count of items each taking at least one byte: never more than the
 * bytes left (what keeps a hostile count from looping long). */
static uint64_t count(struct cur *c)
{
	uint64_t v = number(c);

	if (v > c->n)
		c->bad = true;
	return c->bad ? 0 : v;
}

static bool bit(const unsigned char *bits, uint64_t i)
{
	return bits[i / 8] & (0x80 >> (i % 8));
}

/* A bit vector of N items, MSB first: every bit set when ALL, otherwise
 * the bits, *BITS pointing at them.  The number of bits set. */
static uint64_t bit_vector(struct cur *c, uint64_t n, bool all, const unsigned char **bits)
{
	uint64_t set = 0;

	*bits = NULL;
	if (all)
		return n;
	*bits = take(c, (n + 7) / 8);
	if (!*bits)
		return 0;
	for (uint64_t i = 0; i < n; i++)
		set += bit(*bits, i);
	return set;
}

/* Digests of N streams: which are defined, then a CRC-32 each. */
static void digests(struct cur *c, uint64_t n, const unsigned char **bits, bool *all,
		    const unsigned char **crcs)
{
	uint64_t defined;

	*all = byte(c) != 0;
	defined = bit_vector(c, n, *all, bits);
	*crcs = c->bad || defined > c->n / 4 ? NULL : take(c, 4 * defined);
	if (!*crcs)
		c->bad = true;
}

/* What the streams info says that is needed here: folder 0's coder and
 * sizes (for an encoded header), and enough of the rest to step over. */
struct streams {
	uint64_t pack_pos, pack_size0;
	bool has_pack_size0;
	uint64_t folders;
	uint64_t coders0, out_streams0;
	unsigned char method0[4];
	size_t method0_len;
	const unsigned char *props0;
	size_t props0_len;
	uint64_t unpack_size0;
	bool has_unpack_size0;
	bool crc_all;			/* folders' CRCs: all defined */
	const unsigned char *crc_bits;	/* or these; NULL: none */
	const unsigned char *crcs;
	bool has_crcs;
};

static void pack_info(struct cur *c, struct streams *st)
{
	uint64_t packs;
	unsigned id;

	st->pack_pos = number(c);
	packs = count(c);
	while (!c->bad && (id = byte(c)) != K_END) {
		if (id == K_SIZE) {
			for (uint64_t i = 0; i < packs && !c->bad; i++) {
				uint64_t v = number(c);

				if (i == 0) {
					st->pack_size0 = v;
					st->has_pack_size0 = true;
				}
			}
		} else if (id == K_CRC) {
			const unsigned char *bits, *crcs;
			bool all;

			digests(c, packs, &bits, &all, &crcs);
		} else {
			c->bad = true;
		}
	}
}

/* One folder: its coders, bind pairs and packed streams.  Its number of
 * output streams into *OUTS. */
static void folder(struct cur *c, struct streams *st, bool first, uint64_t *outs)
{
	uint64_t coders = count(c), ins = 0, binds;

	*outs = 0;
	if (coders == 0)
		c->bad = true;
	for (uint64_t i = 0; i < coders && !c->bad; i++) {
		unsigned flags = byte(c);
		size_t id_len = flags & 0x0f;
		const unsigned char *id = take(c, id_len);
		uint64_t in = 1, out = 1;

		if (flags & 0x80)
			c->bad = true;	/* alternative methods: never written */
		if (flags & 0x10) {
			in = count(c);
			out = count(c);
		}
		if (flags & 0x20) {
			uint64_t len = number(c);
			const unsigned char *props = take(c, len);

			if (first && i == 0) {
				st->props0 = props;
				st->props0_len = (size_t)len;
			}
		}
		if (first && i == 0 && id && id_len <= sizeof(st->method0)) {
			memcpy(st->method0, id, id_len);
			st->method0_len = id_len;
		}
		ins += in;
		*outs += out;
		if (ins > c->n || *outs > c->n)
			c->bad = true;
	}
	if (c->bad || *outs == 0)
		return;
	binds = *outs - 1;
	for (uint64_t i = 0; i < binds && !c->bad; i++) {
		number(c);
		number(c);
	}
	if (ins < binds) {
		c->bad = true;
		return;
	}
	if (ins - binds > 1)
		for (uint64_t i = 0; i < ins - binds && !c->bad; i++)
			number(c);
	if (first) {
		st->coders0 = coders;
		st->out_streams0 = *outs;
	}
}

static void coders_info(struct cur *c, struct streams *st)
{
	uint64_t outs_total = 0;
	unsigned id;

	if (byte(c) != K_FOLDER) {
		c->bad = true;
		return;
	}
	st->folders = count(c);
	if (byte(c) != 0) {		/* External: folders elsewhere */
		c->bad = true;
		return;
	}
	for (uint64_t f = 0; f < st->folders && !c->bad; f++) {
		uint64_t outs;

		folder(c, st, f == 0, &outs);
		outs_total += outs;
		if (outs_total > c->n)
			c->bad = true;
	}
	if (byte(c) != K_CODERS_UNPACK_SIZE) {
		c->bad = true;
		return;
	}
	for (uint64_t i = 0; i < outs_total && !c->bad; i++) {
		uint64_t v = number(c);

		if (i == 0) {
			st->unpack_size0 = v;
			st->has_unpack_size0 = true;
		}
	}
	while (!c->bad && (id = byte(c)) != K_END) {
		if (id == K_CRC) {
			digests(c, st->folders, &st->crc_bits, &st->crc_all, &st->crcs);
			st->has_crcs = !c->bad;
		} else {
			c->bad = true;
		}
	}
}

static bool folder_crc_defined(const struct streams *st, uint64_t f)
{
	return st->has_crcs && (st->crc_all || bit(st->crc_bits, f));
}

/* The sub-streams of each folder: their number, sizes and digests, only
 * stepped over (the number of digests depends on the folders'). */
static void substreams_info(struct cur *c, struct streams *st)
{
	uint64_t sizes = 0, unknown = 0;
	unsigned id = byte(c);

	if (id == K_NUM_UNPACK_STREAM) {
		for (uint64_t f = 0; f < st->folders && !c->bad; f++) {
			uint64_t k = number(c);

			if (k > SZRAW_HEADER_MAX) {
				c->bad = true;
				break;
			}
			sizes += k ? k - 1 : 0;
			unknown += k == 1 && folder_crc_defined(st, f) ? 0 : k;
		}
		id = byte(c);
	} else {
		for (uint64_t f = 0; f < st->folders; f++)
			unknown += folder_crc_defined(st, f) ? 0 : 1;
	}
	if (id == K_SIZE) {
		for (uint64_t i = 0; i < sizes && !c->bad; i++)
			number(c);
		id = byte(c);
	}
	while (!c->bad && id != K_END) {
		if (id == K_CRC) {
			const unsigned char *bits, *crcs;
			bool all;

			digests(c, unknown, &bits, &all, &crcs);
		} else {
			c->bad = true;
		}
		id = byte(c);
	}
}

static void streams_info(struct cur *c, struct streams *st)
{
	unsigned id = byte(c);

	*st = (struct streams){ 0 };
	if (id == K_PACK_INFO) {
		pack_info(c, st);
		id = byte(c);
	}
	if (id == K_UNPACK_INFO) {
		coders_info(c, st);
		id = byte(c);
	}
	if (id == K_SUBSTREAMS_INFO) {
		substreams_info(c, st);
		id = byte(c);
	}
	if (id != K_END)
		c->bad = true;
}

enum szraw_result szraw_encoded(const unsigned char *p, size_t n, struct szraw_packed *out)
{
	struct cur c = { p, n, false };
	struct streams st;

	if (byte(&c) != K_ENCODED_HEADER)
		return SZRAW_BAD;
	streams_info(&c, &st);
	/* One folder of one coder, one packed stream: what 7-Zip and
	 * libarchive write; anything else keeps libarchive's names. */
	if (c.bad || st.folders != 1 || st.coders0 != 1 || st.out_streams0 != 1 ||
	    !st.has_pack_size0 || !st.has_unpack_size0 || st.method0_len == 0)
		return SZRAW_BAD;
	if (st.pack_size0 > SZRAW_HEADER_MAX || st.unpack_size0 > SZRAW_HEADER_MAX ||
	    st.unpack_size0 == 0)
		return SZRAW_BAD;
	*out = (struct szraw_packed){
		.pos = st.pack_pos, .size = st.pack_size0, .unpacked = st.unpack_size0,
		.has_crc = folder_crc_defined(&st, 0),
		.method_len = st.method0_len,
		.props = st.props0, .props_len = st.props0_len,
	};
	if (out->has_crc)
		out->crc = le32(st.crcs);
	memcpy(out->method, st.method0, st.method0_len);
	return SZRAW_OK;
}

static const unsigned char method_copy[] = { 0x00 };
static const unsigned char method_lzma[] = { 0x03, 0x01, 0x01 };
static const unsigned char method_lzma2[] = { 0x21 };

static bool is_method(const struct szraw_packed *pk, const unsigned char *id, size_t len)
{
	return pk->method_len == len && memcmp(pk->method, id, len) == 0;
}

/* LZMA or LZMA2, raw, with a dictionary no larger than the output: a
 * header that claims 4 GiB of dictionary gets only what it can use. */
static bool lzma_unpack(const struct szraw_packed *pk, lzma_vli id, const unsigned char *in,
			unsigned char *out)
{
	lzma_filter filters[2] = { { .id = id }, { .id = LZMA_VLI_UNKNOWN } };
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_options_lzma *opt;
	lzma_ret r;
	bool ok;

	if (!pk->props || lzma_properties_decode(&filters[0], NULL, pk->props,
						 pk->props_len) != LZMA_OK)
		return false;
	opt = filters[0].options;
	if (opt->dict_size > pk->unpacked)
		opt->dict_size = pk->unpacked < LZMA_DICT_SIZE_MIN ? LZMA_DICT_SIZE_MIN :
				 (uint32_t)pk->unpacked;
	r = lzma_raw_decoder(&strm, filters);
	free(opt);
	if (r != LZMA_OK)
		return false;
	strm.next_in = in;
	strm.avail_in = (size_t)pk->size;
	strm.next_out = out;
	strm.avail_out = (size_t)pk->unpacked;
	/* LZMA has no end of its own here: the header's size is the end. */
	do
		r = lzma_code(&strm, LZMA_RUN);
	while (r == LZMA_OK && strm.avail_out > 0 && strm.avail_in > 0);
	ok = (r == LZMA_OK || r == LZMA_STREAM_END) && strm.avail_out == 0;
	lzma_end(&strm);
	return ok;
}

enum szraw_result szraw_unpack(const struct szraw_packed *pk, const unsigned char *in,
			       unsigned char *out)
{
	bool ok;

	if (is_method(pk, method_copy, sizeof(method_copy)))
		ok = pk->size == pk->unpacked && (memcpy(out, in, (size_t)pk->size), true);
	else if (is_method(pk, method_lzma, sizeof(method_lzma)))
		ok = lzma_unpack(pk, LZMA_FILTER_LZMA1, in, out);
	else if (is_method(pk, method_lzma2, sizeof(method_lzma2)))
		ok = lzma_unpack(pk, LZMA_FILTER_LZMA2, in, out);
	else
		ok = false;
	if (ok && pk->has_crc && szraw_crc32(out, (size_t)pk->unpacked) != pk->crc)
		ok = false;
	return ok ? SZRAW_OK : SZRAW_BAD;
}

/* ---- the names ---------------------------------------------------------- */

/* One UTF-16LE name of LEN code units at P into UTF-8 at OUT (room for
 * 3 bytes a unit); its length, or 0 when a surrogate is unpaired. */
static size_t utf16_to_utf8(const unsigned char *p, size_t len, char *out)
{
	size_t n = names_utf16_to_utf8(p, len, false, out);

	return n == NAMES_BAD_UTF16 ? 0 : n;
}

/* kName's data: External, then NUMBER names, each ended by a NUL unit. */
static enum szraw_result names_data(const unsigned char *p, size_t len, uint64_t files,
				    struct szraw_names *out)
{
	size_t o = 0, i = 1, k = 0;

	if (len < 1 || p[0] != 0 || (len - 1) % 2 != 0 || files > (len - 1) / 2)
		return SZRAW_BAD;
	/* UTF-8 takes at most 3 bytes for each 2-byte unit (4 for a pair). */
	out->text = malloc((len - 1) / 2 * 3 + files + 1);
	out->at = malloc((size_t)files * sizeof(*out->at) + 1);
	if (!out->text || !out->at)
		return SZRAW_BAD;
	for (; k < files; k++) {
		size_t start = i, units, w;

		while (i + 1 < len && (p[i] || p[i + 1]))
			i += 2;
		if (i + 1 >= len)
			return SZRAW_BAD;	/* no terminator */
		units = (i - start) / 2;
		w = units ? utf16_to_utf8(p + start, units, out->text + o) : 0;
		if (w) {
			out->at[k] = o;
			o += w;
			out->text[o++] = '\0';
		} else {
			out->at[k] = SZRAW_NO_NAME;
		}
		i += 2;
	}
	out->count = k;
	return SZRAW_OK;
}

static void properties(struct cur *c)
{
	unsigned id;

	while (!c->bad && (id = byte(c)) != K_END)
		take(c, number(c));
}

enum szraw_result szraw_names(const unsigned char *p, size_t n, struct szraw_names *out)
{
	struct cur c = { p, n, false };
	struct streams st;
	unsigned id;

	*out = (struct szraw_names){ 0 };
	if (byte(&c) != K_HEADER)
		return SZRAW_BAD;
	id = byte(&c);
	if (id == K_ARCHIVE_PROPERTIES) {
		properties(&c);
		id = byte(&c);
	}
	if (id == K_ADDITIONAL_STREAMS) {
		streams_info(&c, &st);
		id = byte(&c);
	}
	if (id == K_MAIN_STREAMS) {
		streams_info(&c, &st);
		id = byte(&c);
	}
	if (id == K_FILES_INFO) {
		uint64_t files = count(&c);
		bool named = false;

		while (!c.bad && (id = byte(&c)) != K_END) {
			uint64_t len = number(&c);
			const unsigned char *data = take(&c, len);

			if (!data || id != K_NAME)
				continue;
			if (named || names_data(data, (size_t)len, files, out) != SZRAW_OK) {
				szraw_names_free(out);
				return SZRAW_BAD;
			}
			named = true;
		}
		if (!named && files > 0)
			c.bad = true;	/* files without names: libarchive's own */
		id = c.bad ? K_END : byte(&c);
	}
	if (c.bad || id != K_END) {
		szraw_names_free(out);
		return SZRAW_BAD;
	}
	return SZRAW_OK;
}

void szraw_names_free(struct szraw_names *names)
{
	free(names->text);
	free(names->at);
	*names = (struct szraw_names){ 0 };
}
