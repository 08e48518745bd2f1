/*
 * test-xarraw.c - xarraw_names() on the tables of contents a hostile xar
 * could hold to make the names the reader takes differ from the entries
 * libarchive hands out: one row per shape, with the verdict and, when
 * accepted, the names in order.  Each accepted row is also made into a
 * xar and read by libarchive itself: entry N must be name N composed,
 * so the walk's order, the directories it leaves out and libarchive's
 * quirks (a path appended once per text node) are checked against the
 * reader they copy, not against this file's idea of it.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/lib/xarraw.h"
#include "bytes.h"
#include "tap.h"

#define NFD "cafe\xcc\x81"
#define NFC "caf\xc3\xa9"
#define NFD64 "Y2FmZcyB"		/* base64 of NFD */
#define HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?><xar><toc>"
#define TAIL "</toc></xar>"
#define F(id, body) "<file id=\"" #id "\">" body "</file>"
#define NAME(n) "<name>" n "</name>"
#define FILE_T "<type>file</type>"
#define DIR_T "<type>directory</type>"
#define MODE "<mode>0755</mode>"
/* an xattr libarchive can read: the heap's first byte */
#define EA "<ea id=\"0\"><name>user.x</name><length>1</length><offset>0</offset>" \
	"<size>1</size><encoding style=\"application/octet-stream\"/></ea>"

struct row {
	const char *what;
	const char *xml;
	int bad;			/* XARRAW_BAD expected */
	/* the names expected, in order; "-" for none; NULL ends */
	const char *names[6];
	const char *links[6];		/* NULL: none expected */
};

static const struct row rows[] = {
	{ "twins: a base64 NFD name and an NFC one keep their bytes",
	  HEAD F(1, "<name enctype=\"base64\">" NFD64 "</name>" FILE_T)
	  F(2, NAME(NFC) FILE_T) TAIL, 0, { NFD, NFC }, { 0 } },
	{ "a plain NFD name",
	  HEAD F(1, NAME(NFD) FILE_T) TAIL, 0, { NFD }, { 0 } },
	{ "entries come by id, not in document order",
	  HEAD F(3, NAME("c") FILE_T) F(1, NAME("a") FILE_T) F(2, NAME("b") FILE_T) TAIL,
	  0, { "a", "b", "c" }, { 0 } },
	{ "a nested file's path is its directory's and its own",
	  HEAD F(1, NAME(NFD) DIR_T MODE F(2, NAME(NFC) FILE_T)) TAIL,
	  0, { NFD, NFD "/" NFC }, { 0 } },
	{ "a bare directory (name and type only) is not handed out",
	  HEAD F(1, NAME("d") DIR_T F(2, NAME("f") FILE_T)) TAIL,
	  0, { "d/f" }, { 0 } },
	{ "a bare file is handed out",
	  HEAD F(1, NAME("f") FILE_T) TAIL, 0, { "f" }, { 0 } },
	{ "an xattr's <name> is not the file's",
	  HEAD F(1, NAME("f") FILE_T EA) TAIL,
	  0, { "f" }, { 0 } },
	{ "a directory with only an xattr's name is not bare",
	  HEAD F(1, NAME("d") DIR_T EA) TAIL,
	  0, { "d" }, { 0 } },
	{ "a <file> inside an unknown element is not a file",
	  HEAD F(1, NAME("f") FILE_T "<junk>" F(2, NAME("g") FILE_T) "</junk>") TAIL,
	  0, { "f" }, { 0 } },
	{ "an unknown element inside a <name> appends the path once more",
	  HEAD F(1, NAME("d") DIR_T MODE F(2, "<name>a<x/>b</name>" FILE_T)) TAIL,
	  0, { "d", "d/ad/b" }, { 0 } },
	{ "base64 ends at '='",
	  HEAD F(1, "<name enctype=\"base64\">YWJj=ZGVm</name>" FILE_T) TAIL,
	  0, { "abc" }, { 0 } },
	{ "base64 of a name with a NUL: no name taken",
	  HEAD F(1, "<name enctype=\"base64\">YQBi</name>" FILE_T) TAIL,
	  0, { "-" }, { 0 } },
	{ "base64 only for the text before an element inside the name",
	  HEAD F(1, "<name enctype=\"base64\">YWJj<x/>def</name>" FILE_T) TAIL,
	  0, { "abcdef" }, { 0 } },
	{ "a symlink's target keeps its bytes",
	  HEAD F(1, NAME("l") "<type>symlink</type><link>" NFD "</link>") TAIL,
	  0, { "l" }, { NFD } },
	{ "an entity in a name",
	  HEAD F(1, NAME("a&amp;b&#x2F;c") FILE_T) TAIL, 0, { "a&b/c" }, { 0 } },
	{ "a name in CDATA is no name (libarchive reads text nodes)",
	  HEAD F(1, "<name><![CDATA[x]]></name>" FILE_T) F(2, NAME("y") FILE_T) TAIL,
	  0, { "-", "y" }, { 0 } },
	{ "a prefixed id counts",
	  HEAD "<file xmlns:p=\"urn:x\" p:id=\"2\">" NAME("b") FILE_T "</file>"
	  F(1, NAME("a") FILE_T) TAIL, 0, { "a", "b" }, { 0 } },
	{ "a flag makes a directory not bare",
	  HEAD F(1, NAME("d") DIR_T "<flags><UserNoDump/></flags>") TAIL,
	  0, { "d" }, { 0 } },
	{ "an ext2 flag leaves it bare",
	  HEAD F(1, NAME("d") DIR_T "<ext2><NoDump/></ext2>") F(2, NAME("f") FILE_T) TAIL,
	  0, { "f" }, { 0 } },
	{ "a data checksum leaves it bare, a data length does not",
	  HEAD F(1, NAME("d") DIR_T "<data><archived-checksum>00</archived-checksum></data>")
	  F(2, NAME("e") DIR_T "<data><length>0</length></data>") TAIL,
	  0, { "e" }, { 0 } },
	{ "an empty mode element leaves it bare",
	  HEAD F(1, NAME("d") DIR_T "<mode/>") F(2, NAME("f") FILE_T) TAIL,
	  0, { "f" }, { 0 } },
	{ "a file outside the toc is not a file",
	  "<?xml version=\"1.0\"?><xar>" F(1, NAME("x") FILE_T) "<toc>" F(2, NAME("y") FILE_T)
	  TAIL, 0, { "y" }, { 0 } },
	{ "a root that is not xar has no files",
	  "<?xml version=\"1.0\"?><rax><toc>" F(1, NAME("x") FILE_T) "</toc></rax>",
	  0, { NULL }, { 0 } },
	{ "a directory's name after its files: theirs begin with '/'",
	  HEAD F(1, DIR_T MODE F(2, NAME("f") FILE_T) NAME("d")) TAIL,
	  0, { "d", "/f" }, { 0 } },
	{ "two files with one id: refused (the heap picks)",
	  HEAD F(1, NAME(NFD) FILE_T) F(1, NAME(NFC) FILE_T) TAIL, 1, { NULL }, { 0 } },
	{ "not well-formed: refused",
	  HEAD F(1, NAME("a") FILE_T) "</toc>", 1, { NULL }, { 0 } },
	{ "an id with a sign reads as 0, after a 0",
	  HEAD F(0, NAME("a") FILE_T) "<file id=\"-1\">" NAME("b") FILE_T "</file>" TAIL,
	  1, { NULL }, { 0 } },
};

/*
 * libarchive 3.6's xar reader never frees a file's flags text (file_free()
 * forgets fflags_text): the rows with <flags> and <ext2> leak inside
 * libarchive.  Under LeakSanitizer only that library's leaks are let go.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libarchive.so\n";
}

/* The header, the packed TOC, no checksum (alg 0), a heap of 16 bytes. */
static void xar(struct buf *b, const unsigned char *packed, size_t n, size_t plain)
{
	unsigned char h[XARRAW_HEADER_LEN] = { 'x', 'a', 'r', '!', 0, 28, 0, 1 };

	for (int i = 0; i < 8; i++) {
		h[8 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
		h[16 + i] = (unsigned char)((uint64_t)plain >> (56 - 8 * i));
	}
	put(b, h, sizeof(h));
	put(b, packed, n);
	put(b, "heap of 16 bytes", 16);
}

/* libarchive's own names, composed, against the ones taken. */
static int differential(const unsigned char *p, size_t n, const struct xarraw_names *x,
			char *why, size_t whylen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	size_t i = 0;
	int same = 1;

	archive_read_support_format_xar(a);
	if (archive_read_open_memory(a, p, n) != ARCHIVE_OK) {
		snprintf(why, whylen, "libarchive: %s", archive_error_string(a));
		archive_read_free(a);
		return 0;
	}
	for (;;) {
		int r = archive_read_next_header(a, &e);

		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			snprintf(why, whylen, "entry %zu: libarchive: %s", i,
				 archive_error_string(a));
			same = 0;
			break;
		}
		struct archive_entry *t = archive_entry_new();
		const char *want = "";

		if (i >= x->count) {
			snprintf(why, whylen, "libarchive has more entries");
			same = 0;
		} else if (x->path[i] != XARRAW_NO_NAME) {
			archive_entry_update_pathname_utf8(t, x->text + x->path[i]);
			want = archive_entry_pathname(t);
			if (!want || strcmp(want, archive_entry_pathname(e)) != 0) {
				snprintf(why, whylen, "entry %zu: libarchive '%s'", i,
					 archive_entry_pathname(e));
				same = 0;
			}
		}
		archive_entry_free(t);
		i++;
		if (!same)
			break;
	}
	if (same && i != x->count) {
		snprintf(why, whylen, "libarchive has %zu entries, not %zu", i, x->count);
		same = 0;
	}
	archive_read_free(a);
	return same;
}

static void one(const struct row *r)
{
	size_t plain = strlen(r->xml);
	uLongf n = compressBound(plain);
	unsigned char *packed = malloc(n);
	struct xarraw_names x;
	enum xarraw_result res;
	static struct buf b;
	char why[200] = "";
	int good;

	compress(packed, &n, (const unsigned char *)r->xml, plain);
	res = xarraw_names(packed, n, plain, &x);
	good = res == (r->bad ? XARRAW_BAD : XARRAW_OK);
	for (size_t i = 0; good && !r->bad && i < 6; i++) {
		const char *want = r->names[i];

		if (!want) {
			good = i == x.count;
			break;
		}
		if (i >= x.count)
			good = 0;
		else if (strcmp(want, "-") == 0)
			good = x.path[i] == XARRAW_NO_NAME;
		else
			good = x.path[i] != XARRAW_NO_NAME && strcmp(x.text + x.path[i], want) == 0;
		if (good && r->links[i])
			good = x.link[i] != XARRAW_NO_NAME && strcmp(x.text + x.link[i], r->links[i]) == 0;
	}
	tap_ok(good, "%s", r->what);
	if (!r->bad && res == XARRAW_OK) {
		b.n = 0;
		xar(&b, packed, n, plain);
		tap_ok(differential(b.b, b.n, &x, why, sizeof(why)),
		       "%s: libarchive hands out those entries %s", r->what, why);
	}
	xarraw_names_free(&x);
	free(packed);
}

int main(void)
{
	unsigned char h[XARRAW_HEADER_LEN] = { 'x', 'a', 'r', '!', 0, 28, 0, 1 };
	uint64_t packed, plain;
	struct xarraw_names x;
	unsigned char z[64];
	uLongf zn = sizeof(z);

	setlocale(LC_ALL, "C.UTF-8");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		one(&rows[i]);

	/* The header. */
	h[15] = 10;
	h[23] = 20;
	tap_ok(xarraw_header(h, sizeof(h), &packed, &plain) == XARRAW_OK &&
	       packed == 10 && plain == 20, "header: the TOC's sizes");
	tap_ok(xarraw_header(h, sizeof(h) - 1, &packed, &plain) == XARRAW_BAD,
	       "header: short");
	h[0] = 'X';
	tap_ok(xarraw_header(h, sizeof(h), &packed, &plain) == XARRAW_BAD, "header: magic");
	h[0] = 'x';
	h[7] = 2;
	tap_ok(xarraw_header(h, sizeof(h), &packed, &plain) == XARRAW_BAD, "header: version 2");
	h[7] = 1;
	h[15] = 0;
	tap_ok(xarraw_header(h, sizeof(h), &packed, &plain) == XARRAW_BAD, "header: empty TOC");
	h[15] = 10;
	h[18] = 1;			/* plain: 2^40 + 20 */
	tap_ok(xarraw_header(h, sizeof(h), &packed, &plain) == XARRAW_BAD,
	       "header: a TOC over the limit");

	/* The packed TOC. */
	compress(z, &zn, (const unsigned char *)HEAD TAIL, strlen(HEAD TAIL));
	tap_ok(xarraw_names(z, zn, strlen(HEAD TAIL), &x) == XARRAW_OK && x.count == 0,
	       "inflate: an empty toc");
	xarraw_names_free(&x);
	tap_ok(xarraw_names(z, zn, strlen(HEAD TAIL) + 1, &x) == XARRAW_BAD,
	       "inflate: fewer bytes than the header says");
	tap_ok(xarraw_names(z, zn, strlen(HEAD TAIL) - 1, &x) == XARRAW_BAD,
	       "inflate: more bytes than the header says");
	tap_ok(xarraw_names(z, zn - 1, strlen(HEAD TAIL), &x) == XARRAW_BAD,
	       "inflate: a truncated stream");
	z[zn / 2] ^= 0xff;
	tap_ok(xarraw_names(z, zn, strlen(HEAD TAIL), &x) == XARRAW_BAD,
	       "inflate: a damaged stream");
	tap_plan(tap_n);
	return tap_done();
}
