/*
 * test-names.c - names_clean() and member selection, one row per shape of
 * hostile or odd name.
 */
#include "config.h"

#include <string.h>

#include "../../src/lib/names.h"
#include "tap.h"

static const struct {
	const char *attack;
	const char *raw;
	int strip;
	enum name_verdict verdict;
	const char *cleaned;
	bool absolute;
} cases[] = {
	{ "plain name", "a/b/c", 0, NAME_OK, "a/b/c", false },
	{ "leading ./", "./a/./b/", 0, NAME_OK, "a/b", false },
	{ "CVE-2001-1267 leading ..", "../x", 0, NAME_DOTDOT, "", false },
	{ "inner climb a/../../x", "a/../../x", 0, NAME_DOTDOT, "", false },
	{ "harmless-looking a/b/../c", "a/b/../c", 0, NAME_DOTDOT, "", false },
	{ "trailing ..", "a/..", 0, NAME_DOTDOT, "", false },
	{ "absolute /x is stripped", "/x", 0, NAME_OK, "x", true },
	{ "double slash //x", "//x", 0, NAME_OK, "x", true },
	{ "absolute with climb", "/../etc/passwd", 0, NAME_DOTDOT, "", true },
	{ "empty name", "", 0, NAME_EMPTY, "", false },
	{ "root only", "/", 0, NAME_ROOT, "", true },
	{ "dot only", "./", 0, NAME_ROOT, "", false },
	{ "dots that are names", "...", 0, NAME_OK, "...", false },
	{ "dotdot prefix is a name", "..a/b..", 0, NAME_OK, "..a/b..", false },
	{ "backslash is a byte", "..\\..\\x", 0, NAME_OK, "..\\..\\x", false },
	{ "strip 1", "pkg/usr/bin/x", 1, NAME_OK, "usr/bin/x", false },
	{ "strip counts ./ like tar", "./pkg/x", 1, NAME_OK, "pkg/x", false },
	{ "strip away everything", "pkg/", 1, NAME_STRIPPED_AWAY, "", false },
	{ "absolute after strip (x//etc)", "x//etc/passwd", 1, NAME_OK, "etc/passwd", false },
	{ "climb removed by strip", "../x", 1, NAME_OK, "x", false },
	{ "climb survives strip", "a/../x", 1, NAME_DOTDOT, "", false },
};

static const struct {
	const char *name;
	const char *pattern;
	bool include, exclude;
} selections[] = {
	{ "a/b/c", "a", true, true },
	{ "a/b/c", "a/b", true, true },
	{ "a/b/c", "b", false, true },
	{ "a/b/c", "*.o", false, false },
	{ "a/b/c.o", "*.o", true, true },
	{ "a/b/c", "./a/", true, true },
	{ "ab/c", "a", false, false },
};

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	size_t m = sizeof(selections) / sizeof(selections[0]);
	char out[SE_PATH_MAX];
	char long_name[SE_PATH_MAX + 16];

	tap_plan((int)(n + 2 * m + 2));
	for (size_t i = 0; i < n; i++) {
		bool absolute = !cases[i].absolute;
		enum name_verdict v = names_clean(cases[i].raw, cases[i].strip, out,
						  &absolute);

		tap_ok(v == cases[i].verdict && absolute == cases[i].absolute &&
		       (v != NAME_OK || strcmp(out, cases[i].cleaned) == 0),
		       "%s: '%s' -> %s '%s'", cases[i].attack, cases[i].raw,
		       names_verdict_reason(v), out);
	}
	for (size_t i = 0; i < m; i++) {
		char *pat = (char *)selections[i].pattern;

		tap_ok(names_included(selections[i].name, &pat, 1, false, NULL) == selections[i].include,
		       "include '%s' selects '%s': %d", pat, selections[i].name,
		       selections[i].include);
		tap_ok(names_excluded(selections[i].name, &pat, 1) == selections[i].exclude,
		       "exclude '%s' matches '%s': %d", pat, selections[i].name,
		       selections[i].exclude);
	}

	/* A name just under and just over what one kernel call accepts. */
	memset(long_name, 'a', sizeof(long_name));
	for (size_t i = 100; i < sizeof(long_name); i += 101)
		long_name[i] = '/';
	long_name[SE_PATH_MAX - 1] = '\0';
	{
		bool abs;

		tap_ok(names_clean(long_name, 0, out, &abs) == NAME_OK,
		       "a name of PATH_MAX - 1 bytes is accepted");
		long_name[SE_PATH_MAX - 1] = 'a';
		long_name[SE_PATH_MAX + 8] = '\0';
		tap_ok(names_clean(long_name, 0, out, &abs) == NAME_TOO_LONG,
		       "a name over PATH_MAX is refused");
	}
	return tap_done();
}
