/*
 * floor - the least work the kernel must do to make the tree of a tar
 * archive: the benchmark's floor, so that every table can say how far an
 * extractor is from it.  NOT an extractor to use: it trusts the archive
 * (no name checks beyond refusing ".." and absolute names, parents looked
 * up by path, nothing held against a concurrent rename), it caches
 * parent directories, it never syncs, it makes no temporary names.
 *
 *   floor [-j N] ARCHIVE [-C] DEST
 *
 * The archive (any format and filter libarchive reads) is read whole into
 * memory first: every header and every byte of data.  Only the creation
 * is timed, and its wall time goes to standard error as
 *
 *   floor: 20020 entries created in 0.412345 s by 1 thread (archive read in 0.52 s)
 *
 * which bench/run reads in place of the process's wall time.
 *
 * The tree is the one safe-extract makes by default (tests/lib/tree.py
 * compares them; bench/floor-check.sh): types, data, symlink targets, hard
 * links, modes, and the mtimes of files, symlinks and directories; owners
 * and set-id bits when run by root (umask not applied), otherwise the
 * umask applied, set-id and sticky bits dropped.  Missing parents are
 * made 0755 (less the umask when not root).
 * Each call is made only when the result needs it:
 *
 *   directory   mkdirat by its path from DEST (opening its parent to save
 *               the kernel a path walk costs an open and a close); after
 *               everything, utimensat, and chown/chmod only for an owner
 *               other than ours, set-id bits or a mode without u+wx.
 *   file        openat(O_CREAT|O_EXCL) with its mode in its parent's fd,
 *               one write (a loop only if the kernel writes less), fchown
 *               and fchmod only when the owner is not ours, futimens, close.
 *   symlink     symlinkat, lchown only if needed, utimensat.
 *   hard link   linkat, after every other non-directory (its target must
 *               exist, whichever thread made it).
 *   fifo, dev   mknodat, then as a symlink.
 *
 * A parent fd (O_PATH) is opened for a run of two or more entries in one
 * directory and kept while the next entries stay there; a lone entry is
 * made by its path from DEST instead.  With -j N, the main thread makes
 * the directories in archive order, then N threads take runs of at most
 * 64 entries of one directory each, then the main thread makes the hard
 * links and the directories' metadata.
 *
 * System calls, measured with strace -f -c on floor -j 1 (2026-12-06):
 * bench/gen-small.py 20000 8192 (20,000 files of 8 KiB, 20 directories)
 * took 80,436 calls in all, 4.02 per entry, of which the creation is
 * 4.00 (openat 20,038, write 20,001, utimensat 20,020, close 20,037,
 * mkdirat 20) and the rest reading the archive and starting (read 182,
 * mmap 76); a tar of /usr/include (8,844 entries: 833 directories, 30
 * symlinks, some empty files) took 34,956, 3.95 per entry.  GNU tar
 * took 7.6 and safe-extract 8.1 per entry on the same 20,000 files
 * (bench/RESULTS.md, run 3).
 */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define RUN_MAX 64		/* entries a thread takes at once */
#define CHUNK (64u << 20)	/* data arena chunk: few, large allocations */

enum kind { K_DIR, K_FILE, K_SYMLINK, K_HARDLINK, K_SPECIAL };

struct entry {
	enum kind kind;
	char *path;		/* normalized, relative to DEST */
	const char *leaf;	/* last component, inside path */
	long parent;		/* index in dirs[], -1 for DEST itself */
	char *target;		/* symlink target or hard link's path */
	mode_t mode;		/* permission bits; type bits for K_SPECIAL */
	dev_t rdev;
	uid_t uid;
	gid_t gid;
	bool set_owner;
	struct timespec ts[2];	/* atime, mtime (UTIME_OMIT if absent) */
	const char *data;
	size_t size;
};

/* A run: consecutive non-directory entries in one parent. */
struct run {
	size_t first, count;
};

/* The whole state of one run of the program, on main's stack. */
struct floor {
	int dest;		/* DEST, O_PATH */
	bool root;		/* restore owners and set-id bits, umask 0 */
	gid_t gid;		/* the group what we make gets */
	bool own_all;		/* a set-gid directory: chown everything */
	mode_t umask;
	struct entry *e;
	size_t n, cap;
	size_t *dirs;		/* entry index of each directory */
	size_t ndirs, capdirs;
	/* directory path -> dirs[] index, open addressing */
	long *hash;
	size_t hashcap;
	char *arena;		/* current data chunk */
	size_t arena_left;
	struct run *runs;
	size_t nruns, capruns;
	size_t *links;		/* entry index of each hard link */
	size_t nlinks, caplinks;
	atomic_size_t next_run;
};

/* A thread's cached parent directory. */
struct parent_cache {
	long dir;		/* dirs[] index, or -2 when none is open */
	int fd;
};

/* Bytes outside printable ASCII as \ooo, so a name cannot forge a line. */
static const char *esc(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\%03o", c);
	}
	buf[o] = '\0';
	return buf;
}

/* The message, and the error of the call that failed if ERR is not 0. */
__attribute__((noreturn, format(printf, 2, 0)))
static void vdie(int err, const char *fmt, va_list ap)
{
	fputs("floor: ", stderr);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, err ? ": %s\n" : "\n", strerror(err));
	exit(1);
}

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(0, fmt, ap);
}

/* After a failed system call: errno says why. */
__attribute__((noreturn, format(printf, 1, 2)))
static void die_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vdie(err, fmt, ap);
}

/* Creation failed for an entry: name the action and the entry, and stop. */
__attribute__((noreturn))
static void die_entry(const char *action, const char *path)
{
	char b[1024];

	die_errno("cannot %s '%s'", action, esc(path, b, sizeof(b)));
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die_errno("cannot allocate %zu bytes", n);
	return p;
}

#define GROW(ptr, n, cap) do {						\
	if ((n) == (cap)) {						\
		(cap) = (cap) ? 2 * (cap) : 1024;			\
		(ptr) = xrealloc((ptr), (cap) * sizeof(*(ptr)));	\
	}								\
} while (0)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- reading the archive (not timed) ------------------------------------ */

/*
 * NAME without "./" and empty components or a trailing slash, in a new
 * string; NULL for DEST itself.  ".." and absolute names are refused:
 * the floor is for benchmark inputs, not hostile ones.
 */
static char *normalize(const char *name)
{
	char *out = xrealloc(NULL, strlen(name) + 1), *o = out;
	const char *p = name;
	char b[1024];

	if (*p == '/')
		die("refusing the absolute name '%s' (benchmark inputs only)",
		    esc(name, b, sizeof(b)));
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);

		if (len == 2 && p[0] == '.' && p[1] == '.')
			die("refusing the name '%s' with '..' (benchmark inputs only)",
			    esc(name, b, sizeof(b)));
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			if (o != out)
				*o++ = '/';
			memcpy(o, p, len);
			o += len;
		}
		p = *end ? end + 1 : end;
	}
	*o = '\0';
	if (o == out) {
		free(out);
		return NULL;
	}
	return out;
}

static size_t hash_str(const char *s, size_t len)
{
	size_t h = 1469598103934665603u;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

/* The dirs[] index of the directory PATH (LEN bytes), or -1. */
static long dir_find(const struct floor *f, const char *path, size_t len)
{
	size_t i;

	if (!f->hashcap)
		return -1;
	for (i = hash_str(path, len) & (f->hashcap - 1); f->hash[i] >= 0;
	     i = (i + 1) & (f->hashcap - 1)) {
		const char *p = f->e[f->dirs[f->hash[i]]].path;

		if (strlen(p) == len && memcmp(p, path, len) == 0)
			return f->hash[i];
	}
	return -1;
}

static void hash_put(struct floor *f, long d)
{
	const char *p = f->e[f->dirs[d]].path;
	size_t i;

	for (i = hash_str(p, strlen(p)) & (f->hashcap - 1); f->hash[i] >= 0;
	     i = (i + 1) & (f->hashcap - 1))
		;
	f->hash[i] = d;
}

static void dir_add(struct floor *f, size_t entry)
{
	if (2 * (f->ndirs + 1) > f->hashcap) {
		size_t cap = f->hashcap ? 2 * f->hashcap : 1024;

		f->hash = xrealloc(f->hash, cap * sizeof(*f->hash));
		f->hashcap = cap;
		for (size_t i = 0; i < cap; i++)
			f->hash[i] = -1;
		for (size_t d = 0; d < f->ndirs; d++)
			hash_put(f, (long)d);
	}
	GROW(f->dirs, f->ndirs, f->capdirs);
	f->dirs[f->ndirs] = entry;
	hash_put(f, (long)f->ndirs++);
}

static struct entry *entry_new(struct floor *f)
{
	GROW(f->e, f->n, f->cap);
	memset(&f->e[f->n], 0, sizeof(f->e[f->n]));
	return &f->e[f->n++];
}

/*
 * The dirs[] index of PATH's parent, making entries for missing parents
 * (0755, no times: what an extractor makes for them) before the caller's.
 */
static long parent_of(struct floor *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct entry *d;
	char *dpath;
	long p;

	if (!slash)
		return -1;
	p = dir_find(f, path, (size_t)(slash - path));
	if (p >= 0)
		return p;
	dpath = strndup(path, (size_t)(slash - path));
	if (!dpath)
		die_errno("cannot allocate a path");
	p = parent_of(f, dpath);
	d = entry_new(f);
	d->kind = K_DIR;
	d->path = dpath;
	d->leaf = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
	d->parent = p;
	d->mode = f->root ? 0755 : 0755 & ~f->umask;
	d->ts[0].tv_nsec = d->ts[1].tv_nsec = UTIME_OMIT;
	dir_add(f, f->n - 1);
	return (long)f->ndirs - 1;
}

/* SIZE bytes of data storage that lives as long as the program. */
static char *arena_take(struct floor *f, size_t size)
{
	char *p;

	if (size > f->arena_left) {
		size_t chunk = size > CHUNK ? size : CHUNK;

		f->arena = xrealloc(NULL, chunk);
		f->arena_left = chunk;
	}
	p = f->arena;
	f->arena += size;
	f->arena_left -= size;
	return p;
}

static void read_data(struct archive *a, char *buf, size_t size, const char *path)
{
	size_t got = 0;

	while (got < size) {
		la_ssize_t r = archive_read_data(a, buf + got, size - got);

		if (r <= 0) {
			char b[1024];

			die("cannot read the data of '%s': %s", esc(path, b, sizeof(b)),
			    r < 0 ? archive_error_string(a) : "archive ends early");
		}
		got += (size_t)r;
	}
}

static void read_archive(struct floor *f, const char *file)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	int r;

	archive_read_support_format_all(a);
	archive_read_support_filter_all(a);
	if (archive_read_open_filename(a, file, 1 << 20) != ARCHIVE_OK)
		die("cannot open the archive %s: %s", file, archive_error_string(a));
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		char *path = normalize(archive_entry_pathname(ae));
		mode_t type = archive_entry_filetype(ae);
		char b[1024];
		long parent;
		struct entry *e;

		if (!path)
			continue;	/* "./": DEST itself, left as it is */
		parent = parent_of(f, path);
		e = entry_new(f);
		e->path = path;
		e->leaf = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		e->parent = parent;
		e->mode = archive_entry_perm(ae) & 07777;
		if (!f->root)
			e->mode &= 0777 & ~f->umask;	/* as safe-extract: no set-id, no sticky */
		e->uid = (uid_t)archive_entry_uid(ae);
		e->gid = (gid_t)archive_entry_gid(ae);
		e->set_owner = f->root && (e->uid != 0 || e->gid != f->gid);
		e->ts[0].tv_nsec = e->ts[1].tv_nsec = UTIME_OMIT;
		if (archive_entry_atime_is_set(ae)) {
			e->ts[0].tv_sec = archive_entry_atime(ae);
			e->ts[0].tv_nsec = archive_entry_atime_nsec(ae);
		}
		if (archive_entry_mtime_is_set(ae)) {
			e->ts[1].tv_sec = archive_entry_mtime(ae);
			e->ts[1].tv_nsec = archive_entry_mtime_nsec(ae);
		}
		if (archive_entry_hardlink(ae)) {
			e->kind = K_HARDLINK;
			e->target = normalize(archive_entry_hardlink(ae));
			if (!e->target)
				die("refusing the hard link '%s' to the destination itself",
				    esc(path, b, sizeof(b)));
		} else if (type == AE_IFDIR) {
			long known = dir_find(f, path, strlen(path));

			if (e->mode & S_ISGID)
				f->own_all = true;
			e->kind = K_DIR;
			if (known < 0) {
				dir_add(f, f->n - 1);
				continue;
			}
			/*
			 * Made already as a missing parent (or named
			 * twice): the last header's metadata wins, as in
			 * an extractor that sets a directory's metadata at
			 * the end.
			 */
			struct entry *k = &f->e[f->dirs[known]];

			e->path = k->path;
			e->leaf = k->leaf;
			e->parent = k->parent;
			*k = *e;
			free(path);
			f->n--;
		} else if (type == AE_IFREG) {
			e->kind = K_FILE;
			e->size = (size_t)archive_entry_size(ae);
			e->data = arena_take(f, e->size);
			read_data(a, (char *)e->data, e->size, path);
		} else if (type == AE_IFLNK) {
			const char *target = archive_entry_symlink(ae);

			if (!target || !(e->target = strdup(target)))
				die("no target for the symlink '%s'", esc(path, b, sizeof(b)));
			e->kind = K_SYMLINK;
		} else {
			e->kind = K_SPECIAL;
			e->mode |= type;
			e->rdev = archive_entry_rdev(ae);
		}
	}
	if (r != ARCHIVE_EOF)
		die("cannot read the archive %s: %s", file, archive_error_string(a));
	archive_read_free(a);
}

/*
 * Runs of consecutive non-directory entries in one directory, hard links
 * set apart for the end; RUN_MAX at most, so that threads share a large
 * directory.
 */
static void plan_runs(struct floor *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct entry *e = &f->e[i];
		struct run *last = f->nruns ? &f->runs[f->nruns - 1] : NULL;

		if (f->own_all)
			e->set_owner = f->root;
		if (e->kind == K_DIR)
			continue;
		if (e->kind == K_HARDLINK) {
			GROW(f->links, f->nlinks, f->caplinks);
			f->links[f->nlinks++] = i;
			continue;
		}
		if (last && last->count < RUN_MAX &&
		    f->e[last->first + last->count - 1].parent == e->parent &&
		    last->first + last->count == i) {
			last->count++;
			continue;
		}
		GROW(f->runs, f->nruns, f->capruns);
		f->runs[f->nruns++] = (struct run){ i, 1 };
	}
}

/* ---- creating the tree (timed) ------------------------------------------ */

/* The fd and name to make E by: its cached parent, or DEST and its path. */
static int at_of(struct floor *f, struct parent_cache *pc, const struct entry *e,
		 bool open_parent, const char **name)
{
	if (e->parent < 0) {
		*name = e->path;
		return f->dest;
	}
	if (pc->dir != e->parent && open_parent) {
		const char *dpath = f->e[f->dirs[e->parent]].path;
		int fd = openat(f->dest, dpath, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			die_entry("open the directory", dpath);
		if (pc->fd >= 0)
			close(pc->fd);
		pc->fd = fd;
		pc->dir = e->parent;
	}
	if (pc->dir == e->parent) {
		*name = e->leaf;
		return pc->fd;
	}
	*name = e->path;
	return f->dest;
}

static void write_all(int fd, const struct entry *e)
{
	const char *p = e->data;
	size_t left = e->size;

	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w == 0)
			errno = EIO;	/* no progress, and no errno to say why */
		if (w <= 0)
			die_entry("write", e->path);
		p += w;
		left -= (size_t)w;
	}
}

static void make_file(int at, const char *name, const struct entry *e)
{
	int fd = openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, e->mode);

	if (fd < 0)
		die_entry("create the file", e->path);
	write_all(fd, e);
	if (e->set_owner) {
		if (fchown(fd, e->uid, e->gid) < 0)
			die_entry("set the owner of", e->path);
		/* chown cleared the set-id bits that openat gave */
		if ((e->mode & (S_ISUID | S_ISGID)) && fchmod(fd, e->mode) < 0)
			die_entry("set the mode of", e->path);
	}
	if (e->ts[1].tv_nsec != UTIME_OMIT && futimens(fd, e->ts) < 0)
		die_entry("set the times of", e->path);
	if (close(fd) < 0)
		die_entry("close", e->path);
}

/* Owner, set-id mode and times of a symlink or special file, by name. */
static void name_metadata(int at, const char *name, const struct entry *e)
{
	if (e->set_owner) {
		if (fchownat(at, name, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0)
			die_entry("set the owner of", e->path);
		if (e->kind == K_SPECIAL && (e->mode & (S_ISUID | S_ISGID)) &&
		    fchmodat(at, name, e->mode & 07777, 0) < 0)
			die_entry("set the mode of", e->path);
	}
	if (e->ts[1].tv_nsec != UTIME_OMIT &&
	    utimensat(at, name, e->ts, AT_SYMLINK_NOFOLLOW) < 0)
		die_entry("set the times of", e->path);
}

static void make_run(struct floor *f, struct parent_cache *pc, const struct run *r)
{
	for (size_t i = r->first; i < r->first + r->count; i++) {
		const struct entry *e = &f->e[i];
		const char *name;
		int at = at_of(f, pc, e, r->count > 1, &name);

		switch (e->kind) {
		case K_FILE:
			make_file(at, name, e);
			break;
		case K_SYMLINK:
			if (symlinkat(e->target, at, name) < 0)
				die_entry("make the symlink", e->path);
			name_metadata(at, name, e);
			break;
		case K_SPECIAL:
			if (mknodat(at, name, e->mode, e->rdev) < 0)
				die_entry("make the special file", e->path);
			name_metadata(at, name, e);
			break;
		case K_DIR:
		case K_HARDLINK:
			break;
		}
	}
}

static void *worker(void *arg)
{
	struct floor *f = arg;
	struct parent_cache pc = { -2, -1 };
	size_t i;

	while ((i = atomic_fetch_add(&f->next_run, 1)) < f->nruns)
		make_run(f, &pc, &f->runs[i]);
	if (pc.fd >= 0)
		close(pc.fd);
	return NULL;
}

/* A directory made with u+wx, so that its entries can be made in it. */
static mode_t mode_while_filling(const struct floor *f, const struct entry *d)
{
	return (d->mode & 01777) | (f->root ? 0 : 0300);
}

static void create(struct floor *f, int jobs)
{
	for (size_t d = 0; d < f->ndirs; d++) {
		const struct entry *e = &f->e[f->dirs[d]];

		if (mkdirat(f->dest, e->path, mode_while_filling(f, e)) < 0)
			die_entry("make the directory", e->path);
	}

	if (jobs == 1) {
		worker(f);
	} else {
		pthread_t t[jobs];

		for (int j = 0; j < jobs; j++)
			if ((errno = pthread_create(&t[j], NULL, worker, f)))
				die_errno("cannot start thread %d of %d", j + 1, jobs);
		for (int j = 0; j < jobs; j++)
			pthread_join(t[j], NULL);
	}

	for (size_t k = 0; k < f->nlinks; k++) {
		const struct entry *e = &f->e[f->links[k]];

		if (linkat(f->dest, e->target, f->dest, e->path, 0) < 0)
			die_entry("make the hard link", e->path);
	}

	/* Children first: a parent's mode may take away u+wx. */
	for (size_t d = f->ndirs; d-- > 0;) {
		const struct entry *e = &f->e[f->dirs[d]];

		if (e->set_owner &&
		    fchownat(f->dest, e->path, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0)
			die_entry("set the owner of", e->path);
		if (e->mode != mode_while_filling(f, e) &&
		    fchmodat(f->dest, e->path, e->mode, 0) < 0)
			die_entry("set the mode of", e->path);
		if (e->ts[1].tv_nsec != UTIME_OMIT &&
		    utimensat(f->dest, e->path, e->ts, AT_SYMLINK_NOFOLLOW) < 0)
			die_entry("set the times of", e->path);
	}
}

int main(int argc, char **argv)
{
	struct floor f = { .dest = -1 };
	const char *dest = NULL, *archive;
	struct stat st;
	double t0, t1, t2;
	int jobs = 1, c;

	while ((c = getopt(argc, argv, "j:C:")) != -1) {
		switch (c) {
		case 'j':
			jobs = atoi(optarg);
			if (jobs < 1 || jobs > 1024)
				die("-j wants a number of threads from 1 to 1024, not '%s'", optarg);
			break;
		case 'C':
			dest = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind < argc && !dest && argc - optind == 2)
		dest = argv[argc - 1];
	else if (argc - optind != 1 || !dest)
		goto usage;
	archive = argv[optind];

	f.root = geteuid() == 0;
	f.gid = getegid();
	f.umask = umask(0);
	if (!f.root)
		umask(f.umask);	/* modes as an unprivileged extractor makes them */
	f.dest = open(dest, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f.dest < 0)
		die_errno("cannot open the destination %s", dest);
	if (fstat(f.dest, &st) < 0)
		die_errno("cannot stat the destination %s", dest);
	/* a set-gid DEST gives its group to what is made in it */
	f.own_all = (st.st_mode & S_ISGID) != 0;

	t0 = now();
	read_archive(&f, archive);
	plan_runs(&f);
	t1 = now();
	create(&f, jobs);
	t2 = now();
	fprintf(stderr, "floor: %zu entries created in %.6f s by %d thread%s "
		"(archive read in %.2f s)\n", f.n, t2 - t1, jobs,
		jobs == 1 ? "" : "s", t1 - t0);
	return 0;

usage:
	fprintf(stderr, "usage: floor [-j N] ARCHIVE [-C] DEST\n");
	return 2;
}
