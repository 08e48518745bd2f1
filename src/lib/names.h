/*
 * names.h - the checks every archive name passes before it is used.
 *
 * Pure string work, no filesystem access: the filesystem side of the
 * defence is resolve.c.  This layer turns a raw name into a relative path of
 * single components and refuses the shapes that no legitimate archive needs.
 */
#ifndef SAFE_EXTRACT_NAMES_H
#define SAFE_EXTRACT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest relative path the kernel accepts in one call (PATH_MAX - 1). */
#define SE_PATH_MAX 4096

enum name_verdict {
	NAME_OK,
	NAME_ROOT,		/* only "/" or "." components: the destination itself */
	NAME_EMPTY,		/* "" */
	NAME_DOTDOT,		/* a ".." component */
	NAME_TOO_LONG,		/* over SE_PATH_MAX - 1 bytes once cleaned */
	NAME_STRIPPED_AWAY,	/* --strip-components removed every component */
};

/*
 * Clean RAW into OUT (at least SE_PATH_MAX bytes): drop STRIP leading
 * components (counted as tar counts them: every non-empty component,
 * "." included), then drop "." and empty components.  *ABSOLUTE is set
 * when RAW began with '/'.  The result has no leading or trailing '/'.
 */
enum name_verdict names_clean(const char *raw, int strip, char *out,
			      bool *absolute);

const char *names_verdict_reason(enum name_verdict v);

/*
 * tar's member selection: anchored, and a directory selects its contents;
 * globs unless LITERAL (GNU tar's default for member operands).  HIT, when
 * not NULL, has N flags: each pattern that matches sets its own.
 */
bool names_included(const char *name, char *const *patterns, size_t n,
		    bool literal, bool *hit);

/* tar's --exclude: unanchored, matches any trailing run of components. */
bool names_excluded(const char *name, char *const *patterns, size_t n);

/*
 * UNITS UTF-16 code units at P (big-endian when BE, else little-endian)
 * into UTF-8 at OUT (room for 3 bytes a unit), as stored: nothing
 * composed.  Its length, or NAMES_BAD_UTF16 for an unpaired surrogate.
 */
#define NAMES_BAD_UTF16 ((size_t)-1)
size_t names_utf16_to_utf8(const unsigned char *p, size_t units, bool be, char *out);

#endif
