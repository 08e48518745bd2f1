/*
 * json.c - a strict, bounded JSON reader (RFC 8259), for documents an
 * attacker writes: an OCI image's index.json, manifests and configs.
 *
 * Recursive descent, bounded by JSON_DEPTH_MAX so that a document of
 * nested '[' cannot exhaust the stack, and by JSON_VALUES_MAX so that a
 * small document cannot make a huge tree.  Strings are decoded here,
 * once: what a caller compares is the decoded text, so "\u002e\u002e"
 * is "..", never a different name that a later step decodes again.
 * Duplicate keys are refused: two parsers that keep different ones of
 * the pair (the first, the last) would see two documents (the class of
 * CVE-2017-12635, CouchDB).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "map.h"

struct parser {
	const unsigned char *p, *end, *start;
	size_t values;
	int err;			/* the first error, as a negative errno */
	char *msg;
	size_t msgsize;
};

__attribute__((format(printf, 3, 4)))
static void *fail(struct parser *ps, int err, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (ps->err)
		return NULL;
	ps->err = err;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(ps->msg, ps->msgsize, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
	return NULL;
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				   *ps->p == '\r'))
		ps->p++;
}

static struct json *node(struct parser *ps, enum json_type t)
{
	struct json *v;

	if (++ps->values > JSON_VALUES_MAX)
		return fail(ps, -E2BIG, "more than %d values", JSON_VALUES_MAX);
	v = calloc(1, sizeof(*v));
	if (!v)
		return fail(ps, -ENOMEM, "out of memory");
	v->type = t;
	return v;
}

/* Append code point C as UTF-8. */
static size_t put_utf8(unsigned char *o, unsigned long c)
{
	if (c < 0x80) {
		o[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (unsigned char)(0xc0 | (c >> 6));
		o[1] = (unsigned char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (unsigned char)(0xe0 | (c >> 12));
		o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (unsigned char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | (c >> 18));
	o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (unsigned char)(0x80 | (c & 0x3f));
	return 4;
}

/* Four hex digits at P; -1 when they are not. */
static long hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/*
 * The length of the well-formed UTF-8 sequence at P (lead byte >= 0x80),
 * or 0: overlong forms, UTF-16 surrogates and code points past U+10FFFF
 * are not UTF-8 (RFC 3629), and a name that decodes two ways is a name
 * that two readers see differently.
 */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned long c;
	size_t n;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* A string, the opening quote at ps->p: its decoded bytes, malloc'd. */
static char *string(struct parser *ps, size_t *lenp)
{
	const unsigned char *q;
	unsigned char *out, *o;

	ps->p++;
	/* The decoded text is never longer than the source. */
	for (q = ps->p; q < ps->end && *q != '"'; q++)
		if (*q == '\\' && q + 1 < ps->end)
			q++;
	if (q >= ps->end)
		return fail(ps, -EINVAL, "unterminated string");
	out = o = malloc((size_t)(q - ps->p) + 1);
	if (!out)
		return fail(ps, -ENOMEM, "out of memory");
	while (*ps->p != '"') {
		unsigned char c = *ps->p;
		long u, lo;
		size_t n;

		if (c < 0x20) {
			fail(ps, -EINVAL, "control character in a string");
			goto bad;
		}
		if (c >= 0x80) {
			n = utf8_len(ps->p, ps->end);
			if (!n) {
				fail(ps, -EINVAL, "a string that is not UTF-8");
				goto bad;
			}
			memcpy(o, ps->p, n);
			o += n;
			ps->p += n;
			continue;
		}
		if (c != '\\') {
			*o++ = c;
			ps->p++;
			continue;
		}
		c = ps->p[1];
		ps->p += 2;
		switch (c) {
		case '"': case '\\': case '/': *o++ = c; continue;
		case 'b': *o++ = '\b'; continue;
		case 'f': *o++ = '\f'; continue;
		case 'n': *o++ = '\n'; continue;
		case 'r': *o++ = '\r'; continue;
		case 't': *o++ = '\t'; continue;
		case 'u': break;
		default:
			ps->p -= 2;
			fail(ps, -EINVAL, "unknown escape in a string");
			goto bad;
		}
		u = hex4(ps->p, ps->end);
		if (u < 0) {
			fail(ps, -EINVAL, "\\u without four hex digits");
			goto bad;
		}
		ps->p += 4;
		if (u >= 0xdc00 && u <= 0xdfff) {
			fail(ps, -EINVAL, "a lone low surrogate \\u%04lx", u);
			goto bad;
		}
		if (u >= 0xd800 && u <= 0xdbff) {
			lo = ps->end - ps->p >= 2 && ps->p[0] == '\\' && ps->p[1] == 'u' ?
			     hex4(ps->p + 2, ps->end) : -1;
			if (lo < 0xdc00 || lo > 0xdfff) {
				fail(ps, -EINVAL, "a high surrogate \\u%04lx without its low half", u);
				goto bad;
			}
			ps->p += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		/* Strings are C strings to every caller: a NUL inside would
		 * cut "sha256:<hex>\u0000../x" short in one place only. */
		if (u == 0) {
			fail(ps, -EINVAL, "\\u0000 in a string");
			goto bad;
		}
		o += put_utf8(o, (unsigned long)u);
	}
	ps->p++;
	*o = '\0';
	*lenp = (size_t)(o - out);
	return (char *)out;
bad:
	free(out);
	return NULL;
}

/* A number's text: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static char *number(struct parser *ps, size_t *lenp)
{
	const unsigned char *s = ps->p, *p = ps->p, *e = ps->end;
	char *out;

#define DIGITS(p) ((p) < e && *(p) >= '0' && *(p) <= '9')
	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0')
		p++;
	else if (DIGITS(p))
		while (DIGITS(p))
			p++;
	else
		return fail(ps, -EINVAL, "malformed number");
	if (p < e && *p == '.') {
		p++;
		if (!DIGITS(p))
			return fail(ps, -EINVAL, "malformed number");
		while (DIGITS(p))
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (!DIGITS(p))
			return fail(ps, -EINVAL, "malformed number");
		while (DIGITS(p))
			p++;
	}
#undef DIGITS
	out = strndup((const char *)s, (size_t)(p - s));
	if (!out)
		return fail(ps, -ENOMEM, "out of memory");
	*lenp = (size_t)(p - s);
	ps->p = p;
	return out;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return false;
	ps->p += n;
	return true;
}

static struct json *value(struct parser *ps, int depth);

/* An array or object, its opening bracket at ps->p. */
static struct json *container(struct parser *ps, int depth)
{
	bool object = *ps->p == '{';
	char close = object ? '}' : ']';
	struct json *v, **tail;
	struct map keys = { 0 };

	if (depth >= JSON_DEPTH_MAX)
		return fail(ps, -E2BIG, "nested deeper than %d", JSON_DEPTH_MAX);
	v = node(ps, object ? JSON_OBJECT : JSON_ARRAY);
	if (!v)
		return NULL;
	tail = &v->child;
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		size_t klen;
		struct json *m;

		skip_space(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				fail(ps, -EINVAL, "expected a key");
				goto bad;
			}
			key = string(ps, &klen);
			if (!key)
				goto bad;
			if (map_get(&keys, key) != MAP_NONE) {
				free(key);
				fail(ps, -EINVAL, "duplicate key in an object");
				goto bad;
			}
			if (!map_put(&keys, key, 1)) {
				free(key);
				fail(ps, -ENOMEM, "out of memory");
				goto bad;
			}
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				fail(ps, -EINVAL, "expected ':'");
				goto bad;
			}
			ps->p++;
		}
		m = value(ps, depth + 1);
		if (!m) {
			free(key);
			goto bad;
		}
		m->key = key;
		*tail = m;
		tail = &m->next;
		v->n++;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		fail(ps, -EINVAL, "expected ',' or '%c'", close);
		goto bad;
	}
	map_free(&keys);
	return v;
bad:
	map_free(&keys);
	json_free(v);
	return NULL;
}

static struct json *value(struct parser *ps, int depth)
{
	struct json *v;
	char *s;
	size_t len = 0;

	skip_space(ps);
	if (ps->p >= ps->end)
		return fail(ps, -EINVAL, "unexpected end");
	switch (*ps->p) {
	case '{':
	case '[':
		return container(ps, depth);
	case '"':
		s = string(ps, &len);
		if (!s)
			return NULL;
		v = node(ps, JSON_STRING);
		break;
	case 't':
	case 'f':
	case 'n':
		if (literal(ps, "true"))
			return node(ps, JSON_TRUE);
		if (literal(ps, "false"))
			return node(ps, JSON_FALSE);
		if (literal(ps, "null"))
			return node(ps, JSON_NULL);
		return fail(ps, -EINVAL, "unknown word");
	default:
		s = number(ps, &len);
		if (!s)
			return NULL;
		v = node(ps, JSON_NUMBER);
		break;
	}
	if (!v) {
		free(s);
		return NULL;
	}
	v->str = s;
	v->len = len;
	return v;
}

int json_parse(const char *text, size_t len, struct json **root, char *msg, size_t msgsize)
{
	struct parser ps = {
		.p = (const unsigned char *)text,
		.end = (const unsigned char *)text + len,
		.start = (const unsigned char *)text,
		.msg = msg,
		.msgsize = msgsize,
	};
	struct json *v;

	*root = NULL;
	if (msgsize)
		msg[0] = '\0';
	v = value(&ps, 0);
	if (v) {
		skip_space(&ps);
		if (ps.p != ps.end) {
			fail(&ps, -EINVAL, "data after the document");
			json_free(v);
			v = NULL;
		}
	}
	if (!v)
		return ps.err ? ps.err : -EINVAL;
	*root = v;
	return 0;
}

void json_free(struct json *v)
{
	while (v) {
		struct json *next = v->next;

		/* Depth is bounded by JSON_DEPTH_MAX: recursion is too. */
		json_free(v->child);
		free((char *)v->key);
		free((char *)v->str);
		free(v);
		v = next;
	}
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (const struct json *m = obj->child; m; m = m->next)
		if (strcmp(m->key, key) == 0)
			return m;
	return NULL;
}

const char *json_get_string(const struct json *obj, const char *key)
{
	const struct json *m = json_get(obj, key);

	return m && m->type == JSON_STRING ? m->str : NULL;
}

bool json_uint(const struct json *v, uint64_t *out)
{
	uint64_t n = 0;

	if (!v || v->type != JSON_NUMBER || v->str[0] == '-')
		return false;
	for (const char *c = v->str; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		if (n > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
			return false;
		n = n * 10 + (uint64_t)(*c - '0');
	}
	*out = n;
	return true;
}
