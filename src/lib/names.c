/*
 * names.c - cleaning and selecting archive names.
 */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "names.h"

enum name_verdict names_clean(const char *raw, int strip, char *out,
			      bool *absolute)
{
	size_t o = 0;
	const char *p = raw;
	bool stripped_any = false;

	*absolute = raw[0] == '/';
	out[0] = '\0';
	if (raw[0] == '\0')
		return NAME_EMPTY;

	while (*p) {
		const char *start;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - start);

		if (strip > 0) {
			strip--;
			stripped_any = true;
			continue;
		}
		if (len == 1 && start[0] == '.')
			continue;
		/* CVE-2001-1267, CVE-2007-4131 and every zip-slip since:
		 * no component of an archive name may climb. */
		if (len == 2 && start[0] == '.' && start[1] == '.')
			return NAME_DOTDOT;
		if (o + len + 2 > SE_PATH_MAX)
			return NAME_TOO_LONG;
		if (o)
			out[o++] = '/';
		memcpy(out + o, start, len);
		o += len;
		out[o] = '\0';
	}
	if (o == 0 && (strip > 0 || stripped_any))
		return NAME_STRIPPED_AWAY;
	return o ? NAME_OK : NAME_ROOT;
}

const char *names_verdict_reason(enum name_verdict v)
{
	switch (v) {
	case NAME_OK:
		return "ok";
	case NAME_ROOT:
		return "names the destination itself";
	case NAME_EMPTY:
		return "empty name";
	case NAME_DOTDOT:
		return "name contains a '..' component";
	case NAME_TOO_LONG:
		return "name longer than PATH_MAX";
	case NAME_STRIPPED_AWAY:
		return "nothing left after --strip-components";
	}
	return "bad name";
}

static bool match_one(const char *pattern, const char *name, bool literal)
{
	char pat[SE_PATH_MAX];
	size_t len = strlen(pattern);

	/* "dir/" selects the same as "dir". */
	while (len > 1 && pattern[len - 1] == '/')
		len--;
	if (len >= sizeof(pat))
		return false;
	memcpy(pat, pattern, len);
	pat[len] = '\0';
	while (pat[0] == '.' && pat[1] == '/')
		memmove(pat, pat + 2, strlen(pat + 2) + 1);
	if (literal) {
		len = strlen(pat);
		return strncmp(name, pat, len) == 0 && (name[len] == '\0' || name[len] == '/');
	}
	return fnmatch(pat, name, FNM_LEADING_DIR) == 0;
}

bool names_included(const char *name, char *const *patterns, size_t n,
		    bool literal, bool *hit)
{
	bool any = false;

	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (!match_one(patterns[i], name, literal))
			continue;
		any = true;
		if (!hit)
			break;
		hit[i] = true;
	}
	return any;
}

bool names_excluded(const char *name, char *const *patterns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = name;

		for (;;) {
			if (match_one(patterns[i], s, false))
				return true;
			s = strchr(s, '/');
			if (!s)
				break;
			s++;
		}
	}
	return false;
}

size_t names_utf16_to_utf8(const unsigned char *p, size_t units, bool be, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < units; i++) {
		const unsigned char *q = p + 2 * i;
		uint32_t u = be ? (uint32_t)q[0] << 8 | q[1] : (uint32_t)q[1] << 8 | q[0];

		if (u >= 0xd800 && u <= 0xdbff) {
			uint32_t lo;

			if (i + 1 >= units)
				return NAMES_BAD_UTF16;
			lo = be ? (uint32_t)q[2] << 8 | q[3] : (uint32_t)q[3] << 8 | q[2];
			if (lo < 0xdc00 || lo > 0xdfff)
				return NAMES_BAD_UTF16;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if (u >= 0xdc00 && u <= 0xdfff) {
			return NAMES_BAD_UTF16;
		}
		if (u < 0x80) {
			out[o++] = (char)u;
		} else if (u < 0x800) {
			out[o++] = (char)(0xc0 | u >> 6);
			out[o++] = (char)(0x80 | (u & 0x3f));
		} else if (u < 0x10000) {
			out[o++] = (char)(0xe0 | u >> 12);
			out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (u & 0x3f));
		} else {
			out[o++] = (char)(0xf0 | u >> 18);
			out[o++] = (char)(0x80 | (u >> 12 & 0x3f));
			out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (u & 0x3f));
		}
	}
	return o;
}
