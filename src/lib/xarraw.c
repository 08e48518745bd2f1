/*
 * xarraw.c - a xar archive's file names from its table of contents
 * (xarraw.h).
 *
 * The walk follows libarchive 3.6's xar reader element by element, since
 * what it hands out depends on it: a <name> counts only as a <file>'s own
 * child (an <ea>'s <name> is an xattr's); each text node of a file's
 * <name> appends the enclosing file's path, a '/' and the text (base64
 * when the element says so); an element it does not know hides all that
 * is inside; a directory whose only data are its name and type is not
 * handed out.  Entries come out by file id, so ids must be unique here:
 * with two alike, which comes first is the heap's choice.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/xmlreader.h>
#include <zlib.h>

#include "xarraw.h"

#define NONE ((size_t)-1)

struct str {
	char *p;
	size_t n, cap;
};

enum type { T_OTHER, T_DIR };

struct xfile {
	uint64_t id;
	size_t parent;			/* index, or NONE */
	struct str path, link;
	bool named, typed, other;	/* what libarchive's "has" would hold */
	bool nul;			/* a NUL in the path: not a C string */
	enum type type;
};

/* What an element is, as libarchive's reader sees it. */
enum kind {
	K_UNKNOWN,			/* hides everything inside */
	K_XAR, K_TOC, K_CHECKSUM, K_FILE,
	K_NAME, K_TYPE, K_LINK,
	K_HAS,				/* a datum: its text is "has" */
	K_LEAF,				/* its text is nothing here */
	K_DATA, K_DEVICE, K_EA, K_ACL, K_FLAGS, K_EXT2,
};

struct frame {
	enum kind kind;
	size_t file;			/* the file it is in, or NONE */
};

struct walk {
	struct xfile *files;
	size_t n_files, cap_files;
	struct frame *stack;
	size_t depth, cap_stack;
	bool base64;			/* the last element began a base64 <name> */
	size_t bytes;			/* of all paths and links */
	bool bad;
};

static bool str_add(struct walk *w, struct str *s, const void *p, size_t n)
{
	if (n > XARRAW_TOC_MAX || w->bytes + n > XARRAW_TOC_MAX) {
		w->bad = true;
		return false;
	}
	if (s->n + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 32;
		char *q;

		while (cap < s->n + n + 1)
			cap *= 2;
		q = realloc(s->p, cap);
		if (!q) {
			w->bad = true;
			return false;
		}
		s->p = q;
		s->cap = cap;
	}
	if (n)
		memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
	w->bytes += n;
	return true;
}

/* libarchive's number: the leading decimal digits, wrapping. */
static uint64_t decimal(const char *s)
{
	uint64_t v = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return v;
}

static int b64(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/*
 * Base64 as libarchive decodes a name: two valid characters give a byte,
 * a third and a fourth one more each; the first character that is not
 * base64 ('=' included) ends the name.
 */
static void add_base64(struct walk *w, struct xfile *f, const unsigned char *s, size_t l)
{
	unsigned char out[3];

	while (l >= 2 && b64(s[0]) >= 0 && b64(s[1]) >= 0) {
		unsigned int v = (unsigned int)b64(s[0]) << 18 | (unsigned int)b64(s[1]) << 12;
		size_t k = 1;

		s += 2;
		l -= 2;
		out[0] = (unsigned char)(v >> 16);
		if (l > 0 && b64(s[0]) >= 0) {
			v |= (unsigned int)b64(s[0]) << 6;
			out[k++] = (unsigned char)(v >> 8);
			s++;
			l--;
			if (l > 0 && b64(s[0]) >= 0) {
				v |= (unsigned int)b64(s[0]);
				out[k++] = (unsigned char)v;
				s++;
				l--;
			} else if (l > 0) {
				l = 0;
			}
		} else if (l > 0) {
			l = 0;
		}
		if (memchr(out, '\0', k))
			f->nul = true;
		if (!str_add(w, &f->path, out, k))
			return;
	}
}

/* Room in the array *P (of *CAP items of SIZE) for one more after N;
 * false, the walk bad, when out of memory. */
static bool room(struct walk *w, void **p, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 32;
	q = realloc(*p, c * size);
	if (!q) {
		w->bad = true;
		return false;
	}
	*p = q;
	*cap = c;
	return true;
}

static bool push(struct walk *w, enum kind kind, size_t file)
{
	if (!room(w, (void **)&w->stack, &w->cap_stack, w->depth, sizeof(*w->stack)))
		return false;
	w->stack[w->depth++] = (struct frame){ kind, file };
	return true;
}

/*
 * Does the element have an attribute of local name NAME (a prefix does
 * not matter to libarchive) whose value is VALUE?  With VALUE NULL: the
 * last such attribute's number into *NUM.  A value is good only until
 * the reader moves: it is used here.
 */
static bool attribute(xmlTextReaderPtr r, const char *name, const char *value,
		      uint64_t *num)
{
	bool found = false;

	if (xmlTextReaderMoveToFirstAttribute(r) != 1)
		return false;
	do {
		const char *an = (const char *)xmlTextReaderConstLocalName(r);
		const char *av = (const char *)xmlTextReaderConstValue(r);

		if (!an || !av || strcmp(an, name) != 0)
			continue;
		if (value && strcmp(av, value) == 0)
			found = true;
		else if (!value)
			*num = decimal(av);
	} while (xmlTextReaderMoveToNextAttribute(r) == 1);
	return found;
}

static size_t new_file(struct walk *w, size_t parent, xmlTextReaderPtr r)
{
	struct xfile *f;

	if (!room(w, (void **)&w->files, &w->cap_files, w->n_files, sizeof(*w->files)))
		return NONE;
	f = &w->files[w->n_files];
	memset(f, 0, sizeof(*f));
	f->parent = parent;
	attribute(r, "id", NULL, &f->id);
	return w->n_files++;
}

static bool one_of(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

static const char *const file_data[] = {
	"ctime", "mtime", "atime", "group", "gid", "user", "uid", "mode",
	"deviceno", "inode", NULL
};
static const char *const data_has[] = { "length", "offset", "size", NULL };
static const char *const data_leaf[] = {
	"encoding", "archived-checksum", "extracted-checksum", "content", NULL
};
static const char *const ea_has[] = {
	"length", "offset", "size", "archived-checksum", "extracted-checksum",
	"name", "fstype", NULL
};
static const char *const acl_has[] = { "appleextended", "default", "access", NULL };
static const char *const flags[] = {
	"UserNoDump", "UserImmutable", "UserAppend", "UserOpaque", "UserNoUnlink",
	"SystemArchived", "SystemImmutable", "SystemAppend", "SystemNoUnlink",
	"SystemSnapshot", NULL
};

/* An element begins: what it is, from what encloses it. */
static void element(struct walk *w, const char *name, xmlTextReaderPtr r)
{
	struct frame top = w->depth ? w->stack[w->depth - 1] : (struct frame){ K_LEAF, NONE };
	enum kind k = K_UNKNOWN;
	size_t file = top.file;

	w->base64 = false;
	if (w->depth == 0) {
		if (strcmp(name, "xar") == 0)
			k = K_XAR;
		push(w, k, NONE);
		return;
	}
	switch (top.kind) {
	case K_XAR:
		if (strcmp(name, "toc") == 0)
			k = K_TOC;
		break;
	case K_TOC:
	case K_FILE:
		if (strcmp(name, "file") == 0) {
			file = new_file(w, top.kind == K_FILE ? top.file : NONE, r);
			k = file == NONE ? K_UNKNOWN : K_FILE;
		} else if (top.kind == K_TOC) {
			if (strcmp(name, "creation-time") == 0)
				k = K_LEAF;
			else if (strcmp(name, "checksum") == 0)
				k = K_CHECKSUM;
		} else if (strcmp(name, "name") == 0) {
			w->base64 = attribute(r, "enctype", "base64", NULL);
			k = K_NAME;
		} else if (strcmp(name, "type") == 0) {
			k = K_TYPE;
		} else if (strcmp(name, "link") == 0) {
			k = K_LINK;
		} else if (one_of(name, file_data)) {
			k = K_HAS;
		} else if (strcmp(name, "data") == 0) {
			k = K_DATA;
		} else if (strcmp(name, "device") == 0) {
			k = K_DEVICE;
		} else if (strcmp(name, "ea") == 0) {
			k = K_EA;
		} else if (strcmp(name, "acl") == 0) {
			k = K_ACL;
		} else if (strcmp(name, "flags") == 0) {
			k = K_FLAGS;
		} else if (strcmp(name, "ext2") == 0) {
			k = K_EXT2;
		}
		break;
	case K_CHECKSUM:
		if (strcmp(name, "offset") == 0 || strcmp(name, "size") == 0)
			k = K_LEAF;
		break;
	case K_DATA:
		k = one_of(name, data_has) ? K_HAS : one_of(name, data_leaf) ? K_LEAF : K_UNKNOWN;
		break;
	case K_DEVICE:
		if (strcmp(name, "major") == 0 || strcmp(name, "minor") == 0)
			k = K_HAS;
		break;
	case K_EA:
		k = one_of(name, ea_has) ? K_HAS : strcmp(name, "encoding") == 0 ? K_LEAF : K_UNKNOWN;
		break;
	case K_ACL:
		if (one_of(name, acl_has))
			k = K_HAS;
		break;
	case K_FLAGS:
		/* A flag is "has" as it begins, whatever its text. */
		if (one_of(name, flags)) {
			k = K_LEAF;
			w->files[top.file].other = true;
		}
		break;
	default:
		/* ext2's flags set nothing "has" counts; a datum's child and
		 * anything inside an unknown element is unknown */
		break;
	}
	push(w, k, file);
}

static void text(struct walk *w, const char *s)
{
	struct frame top;
	struct xfile *f;
	size_t len = strlen(s);

	if (w->depth == 0)
		return;
	top = w->stack[w->depth - 1];
	if (top.file == NONE)
		return;
	f = &w->files[top.file];
	switch (top.kind) {
	case K_NAME:
		if (f->parent != NONE) {
			struct xfile *p = &w->files[f->parent];

			/* the parent's path as it is now, appended again for
			 * each text node, as libarchive does */
			if (p->nul)
				f->nul = true;
			if (!str_add(w, &f->path, p->path.p ? p->path.p : "", p->path.n) ||
			    !str_add(w, &f->path, "/", 1))
				return;
		}
		f->named = true;
		if (w->base64)
			add_base64(w, f, (const unsigned char *)s, len);
		else
			str_add(w, &f->path, s, len);
		break;
	case K_LINK:
		f->other = true;
		f->link.n = 0;
		str_add(w, &f->link, s, len);
		break;
	case K_TYPE:
		f->typed = true;
		if (strcmp(s, "directory") == 0)
			f->type = T_DIR;
		else if (strcmp(s, "file") == 0 || strcmp(s, "hardlink") == 0 ||
			 strcmp(s, "symlink") == 0 || strcmp(s, "character special") == 0 ||
			 strcmp(s, "block special") == 0 || strcmp(s, "socket") == 0 ||
			 strcmp(s, "fifo") == 0)
			f->type = T_OTHER;
		break;
	case K_HAS:
		f->other = true;
		break;
	default:
		break;
	}
}

static void quiet(void *arg, const char *msg, xmlParserSeverities severity,
		  xmlTextReaderLocatorPtr locator)
{
}

static bool walk_toc(struct walk *w, const unsigned char *xml, size_t n)
{
	xmlTextReaderPtr r;
	int rc;

	if (n > (size_t)INT32_MAX)
		return false;
	r = xmlReaderForMemory((const char *)xml, (int)n, NULL, NULL, XML_PARSE_NONET);
	if (!r)
		return false;
	/* libarchive reports the TOC's errors; libxml2 would print them */
	xmlTextReaderSetErrorHandler(r, quiet, NULL);
	while (!w->bad && (rc = xmlTextReaderRead(r)) == 1) {
		int type = xmlTextReaderNodeType(r);

		if (type == XML_READER_TYPE_ELEMENT) {
			const char *name = (const char *)xmlTextReaderConstLocalName(r);
			bool empty = xmlTextReaderIsEmptyElement(r) == 1;

			if (!name) {
				w->bad = true;
				break;
			}
			element(w, name, r);
			if (empty && w->depth)
				w->depth--;
		} else if (type == XML_READER_TYPE_END_ELEMENT) {
			if (w->depth)
				w->depth--;
		} else if (type == XML_READER_TYPE_TEXT) {
			const char *v = (const char *)xmlTextReaderConstValue(r);

			if (v)
				text(w, v);
		}
	}
	xmlFreeTextReader(r);
	return !w->bad && rc == 0;
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = ((const struct xfile *)a)->id, y = ((const struct xfile *)b)->id;

	return x < y ? -1 : x > y;
}

static enum xarraw_result gather(struct walk *w, struct xarraw_names *out)
{
	size_t text = 0, k = 0;

	/* The paths are complete: the files can move.  (None: qsort() must
	 * not see a NULL.) */
	if (w->n_files)
		qsort(w->files, w->n_files, sizeof(*w->files), by_id);
	for (size_t i = 0; i < w->n_files; i++) {
		if (i > 0 && w->files[i].id == w->files[i - 1].id)
			return XARRAW_BAD;
		text += w->files[i].path.n + w->files[i].link.n + 2;
	}
	out->text = malloc(text ? text : 1);
	out->path = calloc(w->n_files ? w->n_files : 1, sizeof(*out->path));
	out->link = calloc(w->n_files ? w->n_files : 1, sizeof(*out->link));
	if (!out->text || !out->path || !out->link)
		return XARRAW_BAD;
	text = 0;
	for (size_t i = 0; i < w->n_files; i++) {
		const struct xfile *f = &w->files[i];

		/* libarchive does not hand out a bare directory */
		if (f->type == T_DIR && f->named && f->typed && !f->other)
			continue;
		out->path[k] = out->link[k] = XARRAW_NO_NAME;
		if (f->path.n && !f->nul) {
			out->path[k] = text;
			memcpy(out->text + text, f->path.p, f->path.n + 1);
			text += f->path.n + 1;
		}
		if (f->link.n && !memchr(f->link.p, '\0', f->link.n)) {
			out->link[k] = text;
			memcpy(out->text + text, f->link.p, f->link.n + 1);
			text += f->link.n + 1;
		}
		k++;
	}
	out->count = k;
	return XARRAW_OK;
}

static unsigned char *inflate_toc(const unsigned char *packed, size_t n, uint64_t plain)
{
	z_stream z;
	unsigned char *out;
	int rc;

	if (plain == 0 || plain > XARRAW_TOC_MAX || n > XARRAW_TOC_MAX)
		return NULL;
	out = malloc((size_t)plain);
	if (!out)
		return NULL;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (unsigned char *)packed;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)plain;
	rc = inflate(&z, Z_FINISH);
	/* Exactly PLAIN bytes, as libarchive checks, and the stream's end. */
	if (rc != Z_STREAM_END || z.avail_out != 0) {
		free(out);
		out = NULL;
	}
	inflateEnd(&z);
	return out;
}

enum xarraw_result xarraw_header(const unsigned char *p, size_t n, uint64_t *packed,
				 uint64_t *plain)
{
	uint64_t a = 0, b = 0;

	/* "xar!", version 1, as libarchive wants; the TOC follows at byte 28
	 * whatever the header's size field says, as libarchive reads it. */
	if (n < XARRAW_HEADER_LEN || memcmp(p, "xar!", 4) != 0 || p[6] != 0 || p[7] != 1)
		return XARRAW_BAD;
	for (int i = 0; i < 8; i++) {
		a = a << 8 | p[8 + i];
		b = b << 8 | p[16 + i];
	}
	if (a == 0 || a > XARRAW_TOC_MAX || b == 0 || b > XARRAW_TOC_MAX)
		return XARRAW_BAD;
	*packed = a;
	*plain = b;
	return XARRAW_OK;
}

enum xarraw_result xarraw_names(const unsigned char *packed, size_t n, uint64_t plain,
				struct xarraw_names *out)
{
	struct walk w = { 0 };
	unsigned char *xml = inflate_toc(packed, n, plain);
	enum xarraw_result res = XARRAW_BAD;

	memset(out, 0, sizeof(*out));
	if (xml && walk_toc(&w, xml, (size_t)plain))
		res = gather(&w, out);
	if (res != XARRAW_OK)
		xarraw_names_free(out);
	for (size_t i = 0; i < w.n_files; i++) {
		free(w.files[i].path.p);
		free(w.files[i].link.p);
	}
	free(w.files);
	free(w.stack);
	free(xml);
	return res;
}

void xarraw_names_free(struct xarraw_names *names)
{
	free(names->text);
	free(names->path);
	free(names->link);
	memset(names, 0, sizeof(*names));
}
