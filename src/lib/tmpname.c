/*
 * tmpname.c - temporary names nobody can predict, in the entry's own
 * directory: the first bytes of SHA-256(run key, number).  One getrandom()
 * per run for the key rather than one per file; seeing earlier names tells
 * nothing about the next.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "resolve.h"
#include "sha256.h"
#include "tmpname.h"

uint64_t tmp_reserve(struct tmpnames *t, unsigned int n)
{
	uint64_t first = t->seq;

	if (!t->keyed) {
		if (getrandom(t->key, sizeof(t->key), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(t->key)) {
			/* No entropy yet (early boot): a clock and the pid.
			 * The name need not be secret: O_EXCL|O_NOFOLLOW and
			 * the retries in tmp_create_at() make a guessed or
			 * planted name harmless. */
			struct timespec ts;
			uint64_t v;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) *
			    2654435761u ^ (uint64_t)getpid() << 40;
			memcpy(t->key, &v, sizeof(v));
		}
		t->keyed = true;
	}
	t->seq += n;
	return first;
}

void tmp_name_at(const struct tmpnames *t, uint64_t seq, char out[32])
{
	unsigned char rnd[32], block[40];
	static const char hex[] = "0123456789abcdef";
	size_t o = sizeof(TMP_PREFIX) - 1;
	struct sha256 sh;

	memcpy(block, t->key, sizeof(t->key));
	memcpy(block + sizeof(t->key), &seq, sizeof(seq));
	sha256_init(&sh);
	sha256_update(&sh, block, sizeof(block));
	sha256_final(&sh, rnd);
	memcpy(out, TMP_PREFIX, o);
	for (size_t i = 0; i < 6; i++) {
		out[o++] = hex[rnd[i] >> 4];
		out[o++] = hex[rnd[i] & 0xf];
	}
	out[o] = '\0';
}

void tmp_name(struct tmpnames *t, char out[32])
{
	tmp_name_at(t, tmp_reserve(t, 1), out);
}

/* O_EXCL|O_NOFOLLOW: a name planted under us is never opened. */
int tmp_create_at(const struct tmpnames *t, uint64_t seq, int dirfd,
		  char tmp[32], mode_t mode)
{
	int fd;

	for (unsigned int tries = 0;; tries++) {
		tmp_name_at(t, seq + tries, tmp);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode & 0777);
		if (fd >= 0 || errno != EEXIST || tries + 1 >= TMP_TRIES)
			return fd < 0 ? -errno : fd;
	}
}

int tmp_create(struct tmpnames *t, int dirfd, char tmp[32], mode_t mode)
{
	return tmp_create_at(t, tmp_reserve(t, TMP_TRIES), dirfd, tmp, mode);
}

int tmp_create_sibling(struct tmpnames *t, const struct resolver *rs,
		       const char *path, char tmp[32], mode_t mode)
{
	uint64_t seq = tmp_reserve(t, TMP_TRIES);
	int fd;

	for (unsigned int tries = 0;; tries++) {
		tmp_name_at(t, seq + tries, tmp);
		fd = rs_create_sibling(rs, path, tmp, mode);
		if (fd != -EEXIST || tries + 1 >= TMP_TRIES)
			return fd;
	}
}

bool tmp_is_name(const char *name)
{
	size_t o = sizeof(TMP_PREFIX) - 1;

	if (strncmp(name, TMP_PREFIX, o) != 0 || strlen(name) != o + 12)
		return false;
	for (name += o; *name; name++)
		if (!((*name >= '0' && *name <= '9') || (*name >= 'a' && *name <= 'f')))
			return false;
	return true;
}
