/*
 * test-json.c - json_parse() on the documents an image's author could
 * write to make two readers disagree or to exhaust this one: one row per
 * shape, with the verdict and, when accepted, what a caller reads.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/lib/json.h"
#include "tap.h"

static const struct {
	const char *attack;
	const char *doc;
	int err;		/* json_parse's return */
	const char *s;		/* accepted: the string member "s" decodes to this */
} cases[] = {
	{ "plain object", "{\"s\":\"abc\"}", 0, "abc" },
	{ "white space around", " \t\r\n{ \"s\" : \"x\" } \n", 0, "x" },
	{ "every short escape", "{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", 0, "\"\\/\b\f\n\r\t" },
	{ "\\u escapes decode once: \\u002e\\u002e is ..", "{\"s\":\"\\u002e\\u002e/x\"}", 0, "../x" },
	{ "\\u00e9 becomes UTF-8", "{\"s\":\"\\u00e9\"}", 0, "\xc3\xa9" },
	{ "surrogate pair becomes one code point", "{\"s\":\"\\ud83d\\ude00\"}", 0, "\xf0\x9f\x98\x80" },
	{ "raw UTF-8 kept", "{\"s\":\"\xe2\x82\xac\"}", 0, "\xe2\x82\xac" },
	{ "escaped key matches its decoded form", "{\"\\u0073\":\"k\"}", 0, "k" },
	{ "numbers of every shape", "{\"s\":\"n\",\"a\":[0,-1,1.5,2e10,-0.5E-3]}", 0, "n" },
	{ "nested 31 deep is fine", "{\"s\":\"d\",\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}", 0, "d" },
	{ "nested 33 deep: stack exhaustion refused", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", -E2BIG, NULL },
	{ "CVE-2017-12635 duplicate key", "{\"s\":\"a\",\"s\":\"b\"}", -EINVAL, NULL },
	{ "duplicate key by another spelling", "{\"s\":\"a\",\"\\u0073\":\"b\"}", -EINVAL, NULL },
	{ "\\u0000 would cut a C string short", "{\"s\":\"sha256:\\u0000../x\"}", -EINVAL, NULL },
	{ "lone high surrogate", "{\"s\":\"\\ud800\"}", -EINVAL, NULL },
	{ "high surrogate then a non-low one", "{\"s\":\"\\ud800\\u0041\"}", -EINVAL, NULL },
	{ "lone low surrogate", "{\"s\":\"\\udc00\"}", -EINVAL, NULL },
	{ "short \\u", "{\"s\":\"\\u12\"}", -EINVAL, NULL },
	{ "unknown escape \\x", "{\"s\":\"\\x41\"}", -EINVAL, NULL },
	{ "overlong UTF-8 for /", "{\"s\":\"\xc0\xaf\"}", -EINVAL, NULL },
	{ "UTF-8 encoded surrogate", "{\"s\":\"\xed\xa0\x80\"}", -EINVAL, NULL },
	{ "UTF-8 past U+10FFFF", "{\"s\":\"\xf4\x90\x80\x80\"}", -EINVAL, NULL },
	{ "truncated UTF-8", "{\"s\":\"\xe2\x82\"}", -EINVAL, NULL },
	{ "raw control character", "{\"s\":\"a\nb\"}", -EINVAL, NULL },
	{ "trailing garbage", "{\"s\":\"a\"}x", -EINVAL, NULL },
	{ "two documents", "{\"s\":\"a\"}{\"s\":\"b\"}", -EINVAL, NULL },
	{ "byte order mark", "\xef\xbb\xbf{\"s\":\"a\"}", -EINVAL, NULL },
	{ "trailing comma in object", "{\"s\":\"a\",}", -EINVAL, NULL },
	{ "trailing comma in array", "[1,]", -EINVAL, NULL },
	{ "unterminated string", "{\"s\":\"a", -EINVAL, NULL },
	{ "backslash at the end", "{\"s\":\"a\\", -EINVAL, NULL },
	{ "unterminated object", "{\"s\":\"a\"", -EINVAL, NULL },
	{ "single quotes", "{'s':'a'}", -EINVAL, NULL },
	{ "leading zero", "[01]", -EINVAL, NULL },
	{ "leading plus", "[+1]", -EINVAL, NULL },
	{ "bare dot", "[1.]", -EINVAL, NULL },
	{ "NaN", "[NaN]", -EINVAL, NULL },
	{ "truncated literal", "[tru]", -EINVAL, NULL },
	{ "empty input", "", -EINVAL, NULL },
	{ "comment", "{\"s\":\"a\"}/**/", -EINVAL, NULL },
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))
_Static_assert(N_CASES == 40, "update the plan with the table");

int main(void)
{
	struct json *root;
	char msg[256];
	uint64_t u;
	char *big;
	size_t n;
	int r;

	tap_plan((int)N_CASES + 9);
	for (size_t i = 0; i < N_CASES; i++) {
		r = json_parse(cases[i].doc, strlen(cases[i].doc), &root, msg, sizeof(msg));
		if (cases[i].err) {
			tap_ok(r == cases[i].err && !root && msg[0], "%s: refused (%d: %s)",
			       cases[i].attack, r, msg);
		} else {
			const char *s = json_get_string(root, "s");

			tap_ok(r == 0 && s && strcmp(s, cases[i].s) == 0, "%s: accepted (%d %s)",
			       cases[i].attack, r, msg);
		}
		json_free(root);
	}

	/* A NUL byte inside the text: the length, not the NUL, ends it. */
	r = json_parse("{\"s\":\"a\"}\0{}", 12, &root, msg, sizeof(msg));
	tap_ok(r == -EINVAL, "a NUL after the document is trailing garbage (%s)", msg);
	json_free(root);

	/* Integers for sizes: exact, no sign, no fraction, no overflow. */
	{
		const char *d = "[18446744073709551615,18446744073709551616,-1,1.0,1e3,42]";

		r = json_parse(d, strlen(d), &root, msg, sizeof(msg));
	}
	tap_ok(r == 0 && json_uint(root->child, &u) && u == UINT64_MAX,
	       "UINT64_MAX is an integer");
	tap_ok(!json_uint(root->child->next, &u), "UINT64_MAX + 1 overflows: refused");
	tap_ok(!json_uint(root->child->next->next, &u) &&
	       !json_uint(root->child->next->next->next, &u) &&
	       !json_uint(root->child->next->next->next->next, &u),
	       "-1, 1.0 and 1e3 are not sizes");
	tap_ok(json_uint(root->child->next->next->next->next->next, &u) && u == 42 &&
	       root->n == 6, "42 is, and the array has 6 elements");
	json_free(root);

	/* Key lookups see decoded keys; a missing key is NULL. */
	{
		const char *d = "{\"a\\u0062\":\"v\",\"n\":1}";

		r = json_parse(d, strlen(d), &root, msg, sizeof(msg));
	}
	tap_ok(r == 0 && json_get_string(root, "ab") && !json_get_string(root, "n") &&
	       json_get(root, "n") && !json_get(root, "x"),
	       "lookups: decoded key found, a number is not a string, missing is NULL");
	json_free(root);

	/* More values than the limit: refused, not a huge tree. */
	n = 2 * (size_t)JSON_VALUES_MAX + 2;
	big = malloc(n + 1);
	big[0] = '[';
	for (size_t i = 1; i + 1 < n; i += 2) {
		big[i] = '0';
		big[i + 1] = ',';
	}
	big[n - 2] = '0';
	big[n - 1] = ']';
	big[n] = '\0';
	r = json_parse(big, n, &root, msg, sizeof(msg));
	tap_ok(r == -E2BIG && !root, "more than JSON_VALUES_MAX values: refused (%s)", msg);
	json_free(root);

	/* Many distinct keys: the duplicate check is a hash, not a scan. */
	{
		size_t cap = 20 * 50000, len = 0;
		char *doc = malloc(cap);

		doc[len++] = '{';
		for (int i = 0; i < 50000; i++)
			len += (size_t)snprintf(doc + len, cap - len, "%s\"k%d\":%d",
						i ? "," : "", i, i);
		doc[len++] = '}';
		r = json_parse(doc, len, &root, msg, sizeof(msg));
		tap_ok(r == 0 && root->n == 50000, "50,000 distinct keys accepted (%s)", msg);
		json_free(root);
		len--;
		len += (size_t)snprintf(doc + len, cap - len, ",\"k49999\":0}");
		r = json_parse(doc, len, &root, msg, sizeof(msg));
		tap_ok(r == -EINVAL, "the 50,001st key repeating the last: refused (%s)", msg);
		json_free(root);
		free(doc);
	}
	free(big);
	return tap_done();
}
