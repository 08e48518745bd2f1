/*
 * journal.c - writing the journal of a --durable run (journal.h has the
 * format; recover.c reads it).
 *
 * What it costs: the intent is one write and two fsyncs (the journal and
 * DEST's directory) before the run changes anything; each record before
 * the commit point (a directory that gets temporaries, a directory the run
 * makes, a symlink or device it makes at a free name, an object moved
 * aside) is a write and an fdatasync, so that it is on disk before the
 * change it announces; the commit point is the rename records (written in
 * large blocks) and one fdatasync.  The two syncfs calls of --durable stay
 * two.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compat.h"
#include "journal.h"
#include "names.h"
#include "remove.h"
#include "sha256.h"

void journal_init(struct journal *j)
{
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	j->root_fd = -1;
}

size_t journal_encode(const char *name, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		if (*s > ' ' && *s < 0x7f && *s != '%') {
			if (o + 1 >= cap)
				return 0;
			out[o++] = (char)*s;
		} else {
			if (o + 3 >= cap)
				return 0;
			out[o++] = '%';
			out[o++] = hex[*s >> 4];
			out[o++] = hex[*s & 0xf];
		}
	}
	if (o >= cap)
		return 0;
	out[o] = '\0';
	return o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool journal_decode(char *s)
{
	char *o = s;

	for (const char *p = s; *p; p++) {
		int hi, lo;

		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		hi = hexval(p[1]);
		lo = hi < 0 ? -1 : hexval(p[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return false;
		*o++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*o = '\0';
	return true;
}

/* One record, in one write(2): it is in the file before what it announces
 * happens, whatever kills the process next.  A power cut is another
 * matter: see durable_record(). */
static int put(struct journal *j, const char *rec, size_t n)
{
	while (n > 0) {
		ssize_t w = write(j->fd, rec, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		rec += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * A record on disk before the change it announces.  write(2) alone is not
 * enough across a power cut: the file system may commit the change (a
 * mkdir, a symlink, a temporary's name) in its own journal seconds before
 * it writes back the appended record (delayed allocation), and recovery
 * would then not know the object is the run's (vm/run crash saw an empty
 * new directory and a temporary survive a rollback that way).
 */
static int durable_record(struct journal *j)
{
	return fdatasync(j->fd) < 0 ? -errno : 0;
}

/*
 * The path of directory DIRFD from the root, without symlinks: what /proc
 * says it is, checked by opening that path again with no symlink allowed
 * and finding the same directory.  "." for the root.
 */
static int dir_name(struct journal *j, int dirfd, char *out, size_t cap)
{
	char proc[64], path[SE_PATH_MAX + 4096];
	struct stat a, b;
	const char *rel;
	ssize_t n;
	int fd;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	n = readlink(proc, path, sizeof(path) - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	if (j->root_len == 1)
		rel = path + 1;		/* DEST is "/" */
	else if (strncmp(path, j->root_path, j->root_len) == 0 &&
		 (path[j->root_len] == '/' || path[j->root_len] == '\0'))
		rel = path + j->root_len + (path[j->root_len] == '/');
	else
		return -EXDEV;
	fd = rs_open_dir(&j->strict, rel, O_PATH, false, 0);
	if (fd < 0)
		return fd;
	n = fstat(fd, &a) == 0 && fstat(dirfd, &b) == 0 ? 0 : -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -ESTALE;
	if (snprintf(out, cap, "%s", rel[0] ? rel : ".") >= (int)cap)
		return -ENAMETOOLONG;
	return 0;
}

int journal_begin(struct journal *j, struct resolver *rs)
{
	static const char head[] = JOURNAL_MAGIC "\n";
	struct rs_config cfg = { .cross_mounts = rs->cross_mounts, .want = RS_WANT_AUTO };
	char proc[64];
	ssize_t n;
	int fd, r;

	j->root_fd = rs->root_fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", rs->root_fd);
	n = readlink(proc, j->root_path, sizeof(j->root_path) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	j->root_path[n] = '\0';
	j->root_len = (size_t)n;
	fd = fcntl(rs->root_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	r = rs_open_root(&j->strict, fd, &cfg);
	if (r < 0) {
		rs_close(&j->strict);
		return r;
	}
	j->have_strict = true;
	j->fd = openat(rs->root_fd, JOURNAL_NAME, O_RDWR | O_CREAT | O_EXCL |
		       O_NOFOLLOW | O_CLOEXEC, 0600);
	if (j->fd < 0)
		return -errno;
	r = put(j, head, sizeof(head) - 1);
	if (r == 0 && fsync(j->fd) < 0)
		r = -errno;
	if (r == 0) {
		/* The journal's name must be on disk before the run changes
		 * anything: DEST's directory too. */
		fd = openat(rs->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) < 0)
			r = -errno;
		if (fd >= 0)
			close(fd);
	}
	return r;
}

static int dir_key(int dirfd, char key[64], struct stat *st)
{
	if (fstat(dirfd, st) < 0)
		return -errno;
	snprintf(key, 64, "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	return 0;
}

/* Record "dir D" once per directory; *I is D's index in j->names. */
static int noted_dir(struct journal *j, int dirfd, size_t *i)
{
	char key[64], name[SE_PATH_MAX], rec[3 * SE_PATH_MAX + 16];
	struct stat st;
	size_t n;
	int r;

	r = dir_key(dirfd, key, &st);
	if (r < 0)
		return r;
	*i = map_get(&j->dirs, key);
	if (*i != MAP_NONE)
		return 0;
	r = dir_name(j, dirfd, name, sizeof(name));
	if (r < 0)
		return r;
	if (j->n_names == j->cap_names) {
		size_t cap = j->cap_names ? 2 * j->cap_names : 64;
		char **nn = realloc(j->names, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		j->names = nn;
		j->cap_names = cap;
	}
	memcpy(rec, "dir ", 4);
	n = journal_encode(name, rec + 4, sizeof(rec) - 5);
	if (!n)
		return -ENAMETOOLONG;
	rec[4 + n] = '\n';
	r = put(j, rec, 5 + n);
	if (r == 0)
		r = durable_record(j);
	if (r < 0)
		return r;
	j->names[j->n_names] = strdup(name);
	if (!j->names[j->n_names] || !map_put(&j->dirs, key, j->n_names)) {
		free(j->names[j->n_names]);
		return -ENOMEM;
	}
	*i = j->n_names++;
	return 0;
}

int journal_dir(struct journal *j, int dirfd)
{
	size_t i;

	return j->fd < 0 ? 0 : noted_dir(j, dirfd, &i);
}

/* "WORD D[/LEAF] [MORE...]" for the directory DIRFD. */
static int record(struct journal *j, const char *word, int dirfd, const char *leaf,
		  const char *a, const char *b)
{
	char name[SE_PATH_MAX + 256], rec[3 * (SE_PATH_MAX + 512)];
	size_t o, n;
	int r;

	r = dir_name(j, dirfd, name, sizeof(name) - 256);
	if (r < 0)
		return r;
	if (leaf) {
		/* "mkdir D/LEAF": the new directory's own path. */
		size_t l = strcmp(name, ".") == 0 ? 0 : strlen(name);

		if (snprintf(name + l, sizeof(name) - l, "%s%s", l ? "/" : "", leaf) >=
		    (int)(sizeof(name) - l))
			return -ENAMETOOLONG;
	}
	o = (size_t)snprintf(rec, sizeof(rec), "%s ", word);
	n = journal_encode(name, rec + o, sizeof(rec) - o);
	if (!n)
		return -ENAMETOOLONG;
	o += n;
	for (const char *s = a; s; s = s == a ? b : NULL) {
		rec[o++] = ' ';
		n = journal_encode(s, rec + o, sizeof(rec) - o - 1);
		if (!n)
			return -ENAMETOOLONG;
		o += n;
	}
	rec[o++] = '\n';
	return put(j, rec, o);
}

int journal_mkdir(struct journal *j, int dirfd, const char *leaf, bool made)
{
	int r;

	if (j->fd < 0)
		return 0;
	r = record(j, made ? "mkdir" : "kept", dirfd, leaf, NULL, NULL);
	/* "kept" undoes nothing: it needs no flush of its own. */
	return r == 0 && made ? durable_record(j) : r;
}

int journal_made(struct journal *j, int dirfd, const char *leaf)
{
	int r;

	if (j->fd < 0)
		return 0;
	r = record(j, "made", dirfd, NULL, leaf, NULL);
	return r == 0 ? durable_record(j) : r;
}

int journal_aside(struct journal *j, int dirfd, const char *leaf, const char *a)
{
	return journal_aside_many(j, dirfd, &leaf, &a, 1);
}

int journal_aside_many(struct journal *j, int dirfd, const char *const *leaves,
		       const char *const *as, size_t n)
{
	size_t i, k;
	int r;

	if (j->fd < 0) {
		for (k = 0; k < n; k++)
			if (renameat2(dirfd, leaves[k], dirfd, as[k], RENAME_NOREPLACE) < 0)
				return -errno;
		return 0;
	}
	r = noted_dir(j, dirfd, &i);
	for (k = 0; r == 0 && k < n; k++)
		r = record(j, "aside", dirfd, NULL, as[k], leaves[k]);
	/* On disk before an old object leaves its name: a cut after a
	 * rename finds the record and puts it back.  One flush for all. */
	if (r == 0)
		r = durable_record(j);
	if (r < 0)
		return r;
	if (j->n_asides + n > j->cap_asides) {
		size_t cap = j->cap_asides ? 2 * j->cap_asides : 16;
		void *na;

		while (cap < j->n_asides + n)
			cap *= 2;
		na = realloc(j->asides, cap * sizeof(*j->asides));
		if (!na)
			return -ENOMEM;
		j->asides = na;
		j->cap_asides = cap;
	}
	for (k = 0; k < n; k++) {
		int fd = -1;

		if (renameat2(dirfd, leaves[k], dirfd, as[k], RENAME_NOREPLACE) < 0 &&
		    (errno != EINVAL || renameat(dirfd, leaves[k], dirfd, as[k]) < 0))
			return -errno;	/* EINVAL: no NOREPLACE here; A is a fresh name */
		/* The directory's own fd, for the removal after the commit:
		 * one per directory (the previous aside's, when it is the
		 * same one), at most JOURNAL_ASIDE_FDS. */
		if (j->n_asides && j->asides[j->n_asides - 1].dir == i)
			fd = j->asides[j->n_asides - 1].fd;
		else if (j->n_aside_fds < JOURNAL_ASIDE_FDS &&
			 (fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) >= 0)
			j->n_aside_fds++;
		j->asides[j->n_asides].dir = i;
		j->asides[j->n_asides].fd = fd;
		snprintf(j->asides[j->n_asides].a, sizeof(j->asides[0].a), "%s", as[k]);
		j->n_asides++;
	}
	return 0;
}

/* Close the asides' directory fds (each once: runs share one). */
static void close_aside_fds(struct journal *j)
{
	for (size_t i = 0; i < j->n_asides; i++) {
		int fd = j->asides[i].fd;

		if (fd < 0)
			continue;
		for (size_t k = i; k < j->n_asides; k++)
			if (j->asides[k].fd == fd)
				j->asides[k].fd = -1;
		close(fd);
	}
	j->n_aside_fds = 0;
}

/* The commit records go out in large blocks. */
struct outbuf {
	struct journal *j;
	size_t used;
	int err;
	char b[1 << 16];
};

static void out_add(struct outbuf *o, const char *s, size_t n)
{
	if (o->err)
		return;
	if (o->used + n > sizeof(o->b)) {
		o->err = put(o->j, o->b, o->used);
		o->used = 0;
		if (o->err)
			return;
	}
	if (n > sizeof(o->b)) {		/* a record larger than the block */
		o->err = put(o->j, s, n);
		return;
	}
	memcpy(o->b + o->used, s, n);
	o->used += n;
}

/* "end N SHA256\n" for the N bytes the journal holds now. */
static int end_line(struct journal *j, char *line, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char dg[32], buf[1 << 14];
	struct sha256 sh;
	off_t end = lseek(j->fd, 0, SEEK_CUR), at = 0;
	int n;

	if (end < 0)
		return -errno;
	sha256_init(&sh);
	while (at < end) {
		ssize_t r = pread(j->fd, buf, sizeof(buf), at);

		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		sha256_update(&sh, buf, (size_t)r);
		at += r;
	}
	sha256_final(&sh, dg);
	n = snprintf(line, cap, "end %llu ", (unsigned long long)end);
	for (int i = 0; i < 32; i++) {
		line[n++] = hex[dg[i] >> 4];
		line[n++] = hex[dg[i] & 0xf];
	}
	line[n++] = '\n';
	return n;
}

/* The "meta" record of deferred directory DD, when it is still the one
 * the run made or found; 0 when there is nothing to record. */
static size_t meta_record(struct journal *j, const struct deferred_dir *dd,
			  struct resolver *rs, char *rec, size_t cap)
{
	char name[SE_PATH_MAX];
	struct stat st;
	size_t at;
	int fd, n;

	if (dd->ino == 0)
		return 0;
	fd = rs_open_dir(rs, dd->path, O_PATH, false, 0);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || st.st_dev != dd->dev || st.st_ino != dd->ino ||
	    dir_name(j, fd, name, sizeof(name)) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	memcpy(rec, "meta ", 5);
	at = 5 + journal_encode(name, rec + 5, cap - 5);
	if (at == 5)
		return 0;
	n = snprintf(rec + at, cap - at, " %llu:%llu:%o:%lld:%lld:%lld.%ld:%lld.%ld\n",
		     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		     (unsigned int)(dd->own.mode & 07777),
		     dd->own.set_owner ? (long long)dd->own.uid : -1LL,
		     dd->own.set_owner ? (long long)dd->own.gid : -1LL,
		     (long long)dd->times[0].tv_sec, dd->times[0].tv_nsec,
		     (long long)dd->times[1].tv_sec, dd->times[1].tv_nsec);
	if (n < 0 || (size_t)n >= cap - at)
		return 0;
	return at + (size_t)n;
}

/*
 * The "xattr" records of deferred directory DD, after its "meta" record
 * (REC, N bytes, whose directory and DEV:INO they repeat): one a name, the
 * value in hex.  A value may be 64 KiB, so each record is allocated.
 */
static void xattr_records(struct outbuf *o, const struct deferred_dir *dd,
			  const char *rec, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *sp1 = memchr(rec, ' ', n), *sp2;
	size_t head;

	/* "meta D DEV:INO:..." -> "D DEV:INO" */
	sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - rec)) : NULL;
	if (!sp2)
		return;
	head = (size_t)(strchr(strchr(sp2 + 1, ':') + 1, ':') - (sp1 + 1));
	for (const struct attr_blob *a = dd->xattrs; a && !o->err; a = a->next) {
		size_t cap = 6 + head + 1 + 3 * strlen(a->name) + 2 + 2 * a->size + 2, at, k;
		char *r = malloc(cap);

		if (!r) {
			o->err = -ENOMEM;
			return;
		}
		memcpy(r, "xattr ", 6);
		memcpy(r + 6, sp1 + 1, head);
		at = 6 + head;
		r[at++] = ' ';
		k = journal_encode(a->name, r + at, cap - at);
		if (!k) {
			free(r);
			continue;
		}
		at += k;
		r[at++] = ' ';
		if (!a->size)
			r[at++] = '-';
		for (size_t i = 0; i < a->size; i++) {
			r[at++] = hex[a->value[i] >> 4];
			r[at++] = hex[a->value[i] & 0xf];
		}
		r[at++] = '\n';
		out_add(o, r, at);
		free(r);
	}
}

int journal_commit(struct journal *j, const struct durable *d, const struct dirmeta *dm,
		   struct resolver *rs)
{
	struct outbuf *o;
	char rec[3 * (SE_PATH_MAX + 300)], line[160];
	int r;

	if (j->fd < 0)
		return 0;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->j = j;
	out_add(o, "commit\n", 7);
	for (size_t i = 0; i < d->n_pend && !o->err; i++) {
		const struct pending *p = &d->pend[i];
		char key[64];
		size_t di, n, at = 7;

		if (p->cancelled || !p->tmp[0])
			continue;
		snprintf(key, sizeof(key), "%llx:%llx",
			 (unsigned long long)d->dirh[p->dir].dev,
			 (unsigned long long)d->dirh[p->dir].ino);
		di = map_get(&j->dirs, key);
		if (di == MAP_NONE) {
			o->err = -ENOENT;	/* a temporary made without "dir" */
			break;
		}
		memcpy(rec, "rename ", 7);
		at += journal_encode(j->names[di], rec + at, sizeof(rec) - at);
		rec[at++] = ' ';
		at += journal_encode(p->tmp, rec + at, sizeof(rec) - at);
		rec[at++] = ' ';
		n = journal_encode(p->leaf, rec + at, sizeof(rec) - at - 1);
		if (!n) {
			o->err = -ENAMETOOLONG;
			break;
		}
		at += n;
		rec[at++] = '\n';
		out_add(o, rec, at);
	}
	for (size_t i = 0; dm && i < dm->n_dirs && !o->err; i++) {
		size_t n = meta_record(j, &dm->dirs[i], rs, rec, sizeof(rec));

		if (n) {
			out_add(o, rec, n);
			xattr_records(o, &dm->dirs[i], rec, n);
		}
	}
	if (!o->err && o->used)
		o->err = put(j, o->b, o->used);
	r = o->err;
	free(o);
	if (r == 0)
		r = end_line(j, line, sizeof(line));
	if (r > 0)
		r = put(j, line, (size_t)r);
	/* The commit point: from here on a cut rolls forward. */
	if (r == 0 && fdatasync(j->fd) < 0)
		r = -errno;
	j->committed = r == 0;
	return r;
}

int journal_complete(struct journal *j)
{
	int err = 0, r;

	if (j->fd < 0)
		return 0;
	for (size_t i = 0; i < j->n_asides; i++) {
		const char *d = j->names[j->asides[i].dir];
		int dfd;

		if (j->asides[i].fd >= 0) {
			dfd = fcntl(j->asides[i].fd, F_DUPFD_CLOEXEC, 3);
			if (dfd < 0)
				dfd = -errno;
		} else {
			dfd = rs_open_dir(&j->strict, strcmp(d, ".") ? d : "", O_PATH, false, 0);
		}
		if (dfd < 0) {
			err = dfd;
			continue;
		}
		/* A whiteout of an image layer moves a whole tree aside
		 * (layer.c): removed fd by fd, never through a symlink,
		 * never across a mount. */
		r = remove_in(dfd, j->asides[i].a, NULL, NULL);
		if (r < 0 && r != -ENOENT)
			err = r;
		close(dfd);
	}
	if (err)
		return err;
	close_aside_fds(j);
	close(j->fd);
	j->fd = -1;
	if (unlinkat(j->root_fd, JOURNAL_NAME, 0) < 0)
		return -errno;
	return 0;
}

void journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}

void journal_free(struct journal *j)
{
	close_aside_fds(j);
	journal_close(j);
	if (j->have_strict)
		rs_close(&j->strict);
	for (size_t i = 0; i < j->n_names; i++)
		free(j->names[i]);
	free(j->names);
	free(j->asides);
	map_free(&j->dirs);
	journal_init(j);
}
