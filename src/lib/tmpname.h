/*
 * tmpname.h - the run's temporary names: unpredictable, made O_EXCL in the
 * entry's own directory, numbered by the run's thread so that a writer
 * thread can make the name of the number it was given.
 */
#ifndef SAFE_EXTRACT_TMPNAME_H
#define SAFE_EXTRACT_TMPNAME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct resolver;

#define TMP_PREFIX ".safe-extract-"
#define TMP_TRIES 9

struct tmpnames {
	unsigned char key[32];
	uint64_t seq;
	bool keyed;
};

/* N consecutive numbers; the first is returned. */
uint64_t tmp_reserve(struct tmpnames *t, unsigned int n);
void tmp_name_at(const struct tmpnames *t, uint64_t seq, char out[32]);
/* One name, reserved now. */
void tmp_name(struct tmpnames *t, char out[32]);
/* A new temporary file in DIRFD with the names of SEQ .. SEQ+TMP_TRIES-1:
 * an fd or -errno.  Safe in a writer thread. */
int tmp_create_at(const struct tmpnames *t, uint64_t seq, int dirfd,
		  char tmp[32], mode_t mode);
int tmp_create(struct tmpnames *t, int dirfd, char tmp[32], mode_t mode);
/* The same beside PATH, with no parent fd (rs_by_path()): an fd or -errno. */
int tmp_create_sibling(struct tmpnames *t, const struct resolver *rs,
		       const char *path, char tmp[32], mode_t mode);
/* Is NAME one that tmp_name_at() makes (the prefix and 12 hex digits)? */
bool tmp_is_name(const char *name);

#endif
