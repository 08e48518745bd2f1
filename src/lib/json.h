/*
 * json.h - a strict, bounded JSON reader for the few small documents the
 * library reads that are not archives (an OCI image's index, manifests
 * and configs).  The input is untrusted: its size, nesting and member
 * count are bounded, every string is checked UTF-8 with every escape
 * (\uXXXX surrogate pairs included) decoded, and what RFC 8259 leaves
 * open is refused: duplicate keys in an object, "\u0000" (strings are C
 * strings here), anything after the value, a byte order mark.
 */
#ifndef SAFE_EXTRACT_JSON_H
#define SAFE_EXTRACT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING,
		 JSON_ARRAY, JSON_OBJECT };

/* One value.  Members of an object and elements of an array are its
 * children, in document order. */
struct json {
	enum json_type type;
	const char *key;		/* a member's key, or NULL */
	const char *str;		/* a string's bytes (NUL-terminated), a number's text */
	size_t len;			/* strlen(str) */
	struct json *child;		/* the first member or element */
	struct json *next;		/* the next sibling */
	size_t n;			/* how many children */
};

#define JSON_DEPTH_MAX 32		/* arrays and objects inside each other */
#define JSON_VALUES_MAX 100000		/* values in one document */

/*
 * Parse the LEN bytes at TEXT (not NUL-terminated).  Returns 0 and sets
 * *ROOT (free with json_free), or -EINVAL (malformed, with MSG saying
 * what and at which byte), -E2BIG (over a limit), -ENOMEM.
 */
int json_parse(const char *text, size_t len, struct json **root, char *msg, size_t msgsize);

void json_free(struct json *v);

/* The member KEY of object OBJ, or NULL (also when OBJ is not an object). */
const struct json *json_get(const struct json *obj, const char *key);

/* The member KEY of OBJ when it is a string: its text, or NULL. */
const char *json_get_string(const struct json *obj, const char *key);

/* Is V a number that is a non-negative integer without fraction or
 * exponent, at most UINT64_MAX?  Then *OUT is its value. */
bool json_uint(const struct json *v, uint64_t *out);

#endif
