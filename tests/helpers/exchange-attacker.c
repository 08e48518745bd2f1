/*
 * exchange-attacker - the metadata-race attacker of
 * tests/hardening/metadata-exchange-race.test.
 *
 * usage: exchange-attacker [--ready=FILE] OUTSIDE HOLDER DIR PREFIX COUNT
 *
 * HOLDER is a name inside the destination that is a hard link to the file
 * OUTSIDE (outside the destination, same file system).  The extractor
 * creates DIR/PREFIX00000 .. DIR/PREFIX<COUNT-1>, in that order.  For each
 * of those names in turn the attacker spins (fstatat until the name
 * exists, then renameat2(name, holder, RENAME_EXCHANGE)) until the
 * exchange succeeds: as soon as
 * the extractor has created the object, its name holds the hard link to
 * OUTSIDE instead, and the object moves to the holder's name.  The name
 * just attacked becomes the next holder, so the link stays inside DIR.
 * An extractor that sets owner, mode, times or xattrs by name after
 * creating the object changes OUTSIDE.
 *
 * After every exchange the attacker compares OUTSIDE (through an fd opened
 * at the start: the inode, whatever its names) with its state at the start
 * (uid, gid, mode, mtime, xattr names and values); a difference counts as
 * a change, and OUTSIDE is put back so the next one is seen too.
 *
 * On SIGTERM/SIGINT (or after the last name) it prints
 * "ATTEMPTS CHANGES" on standard output and exits 0.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct state {
	struct stat st;
	char names[4096];
	ssize_t names_len;
	char values[4096];
	ssize_t values_len;
};

static void snapshot(int fd, struct state *s)
{
	memset(s, 0, sizeof(*s));
	if (fstat(fd, &s->st) != 0)
		perror("exchange-attacker: fstat");
	s->names_len = flistxattr(fd, s->names, sizeof(s->names));
	if (s->names_len < 0)
		s->names_len = 0;
	/* The values, concatenated in list order, each NUL-terminated. */
	for (ssize_t i = 0; i < s->names_len; i += (ssize_t)strlen(s->names + i) + 1) {
		ssize_t n = fgetxattr(fd, s->names + i, s->values + s->values_len,
				      sizeof(s->values) - (size_t)s->values_len - 1);

		if (n < 0)
			n = 0;
		s->values_len += n;
		s->values[s->values_len++] = '\0';
	}
}

static int same(const struct state *a, const struct state *b)
{
	return a->st.st_uid == b->st.st_uid && a->st.st_gid == b->st.st_gid &&
	       a->st.st_mode == b->st.st_mode &&
	       a->st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
	       a->st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec &&
	       a->names_len == b->names_len &&
	       memcmp(a->names, b->names, (size_t)a->names_len) == 0 &&
	       a->values_len == b->values_len &&
	       memcmp(a->values, b->values, (size_t)a->values_len) == 0;
}

/* Put OUTSIDE back as it was at the start. */
static void restore(int fd, const struct state *base)
{
	struct timespec ts[2] = { base->st.st_atim, base->st.st_mtim };
	char names[4096];
	ssize_t n = flistxattr(fd, names, sizeof(names));
	const char *v = base->values;

	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(names + i) + 1)
		fremovexattr(fd, names + i);
	for (ssize_t i = 0; i < base->names_len;
	     i += (ssize_t)strlen(base->names + i) + 1) {
		fsetxattr(fd, base->names + i, v, strlen(v), 0);
		v += strlen(v) + 1;
	}
	if (fchown(fd, base->st.st_uid, base->st.st_gid) != 0)
		perror("exchange-attacker: restoring the owner");
	if (fchmod(fd, base->st.st_mode & 07777) != 0)
		perror("exchange-attacker: restoring the mode");
	if (futimens(fd, ts) != 0)
		perror("exchange-attacker: restoring the times");
}

static int exchange(const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE);
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	unsigned long long attempts = 0, changes = 0;
	struct state base, now;
	struct sigaction sa;
	char holder[4096], name[4096];
	long count, k = 0;
	int i = 1, fd;

	if (i < argc && strncmp(argv[i], "--ready=", 8) == 0)
		ready = argv[i++] + 8;
	if (argc - i != 5) {
		fprintf(stderr, "usage: exchange-attacker [--ready=FILE] OUTSIDE HOLDER DIR PREFIX COUNT\n");
		return 2;
	}
	const char *outside = argv[i], *dir = argv[i + 2], *prefix = argv[i + 3];

	snprintf(holder, sizeof(holder), "%s", argv[i + 1]);
	count = strtol(argv[i + 4], NULL, 10);
	fd = open(outside, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("exchange-attacker: opening OUTSIDE");
		return 2;
	}
	snapshot(fd, &base);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (ready) {
		int r = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (r >= 0)
			close(r);
	}

	while (!stop && k < count) {
		unsigned long spins = 0;
		int swapped = 0;

		snprintf(name, sizeof(name), "%s/%s%05ld", dir, prefix, k);
		while (!stop) {
			struct stat st;

			/* A lookup is lock-free; a failing rename still takes the
			 * directory's lock, and spinning on it would starve the
			 * extractor's creates in the same directory. */
			if (fstatat(AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    exchange(name, holder) == 0) {
				swapped = 1;
				break;
			}
			/* On a busy machine the extractor may share this CPU:
			 * let it run, or each name waits for a time slice. */
			sched_yield();
			/* A name the extractor refused never appears: after a
			 * while, move on if a later one exists. */
			if (++spins % 4096 == 0) {
				char next[4096];
				struct stat st;

				snprintf(next, sizeof(next), "%s/%s%05ld", dir,
					 prefix, k + 1);
				if (fstatat(AT_FDCWD, next, &st, AT_SYMLINK_NOFOLLOW) == 0)
					break;
			}
		}
		k++;
		if (!swapped)
			continue;
		snprintf(holder, sizeof(holder), "%s", name);
		attempts++;
		/* The extractor's metadata call, if it acts by name, lands
		 * within microseconds: it is seen by this look or the next. */
		snapshot(fd, &now);
		if (!same(&base, &now)) {
			changes++;
			restore(fd, &base);
		}
	}
	/* Whatever landed after the last look. */
	struct timespec pause = { 0, 50 * 1000 * 1000 };

	nanosleep(&pause, NULL);
	snapshot(fd, &now);
	if (!same(&base, &now)) {
		changes++;
		restore(fd, &base);
	}
	printf("%llu %llu\n", attempts, changes);
	return 0;
}
