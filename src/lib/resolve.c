/*
 * resolve.c - scoped path resolution under the destination's root fd.
 *
 * Only this file knows how archive paths are resolved.  See resolve.h for
 * the contract and the three backends.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "names.h"
#include "resolve.h"

/* openat2 and the kernel's own lookup give up after 40 links (MAXSYMLINKS). */
#define WALK_MAX_LINKS 40
/* How often a lookup is retried when the kernel saw a racing rename. */
#define EAGAIN_RETRIES 32

static int sys_openat2(int dirfd, const char *path, struct open_how *how)
{
	return (int)syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
}

static int close_keep_errno(int fd)
{
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

const char *rs_backend_name(enum rs_backend b)
{
	switch (b) {
	case RS_AT:
		return "at";
	case RS_OPENAT2:
		return "openat2";
	case RS_WALK:
		return "walk";
	}
	return "?";
}

/* ---- openat2 ---------------------------------------------------------- */

static int openat2_lookup(int base, const char *path, int oflags,
			  uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(oflags | O_CLOEXEC),
		.resolve = resolve,
	};

	for (int tries = 0;; tries++) {
		int fd = sys_openat2(base, path[0] ? path : ".", &how);

		if (fd >= 0)
			return fd;
		/* The kernel saw a rename or mount race during a ".." step
		 * and could not prove the result stays in scope: ask again. */
		if (errno == EAGAIN && tries < EAGAIN_RETRIES)
			continue;
		return -errno;
	}
}

/* ---- the userspace walk ----------------------------------------------- */

struct step {
	mode_t mode;
	uint64_t mnt_id;
	dev_t dev;
};

static int step_stat(struct resolver *r, int fd, struct step *s)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_MNT_ID, &sx) < 0)
		return -errno;
	s->mode = sx.stx_mode;
	s->mnt_id = sx.stx_mnt_id;
	s->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	if (r->have_mnt_id && !(sx.stx_mask & STATX_MNT_ID))
		return -EIO;
	return 0;
}

static bool step_crosses_mount(struct resolver *r, const struct step *s)
{
	if (r->cross_mounts)
		return false;
	if (r->have_mnt_id)
		return s->mnt_id != r->root_mnt_id;
	/* Without mount ids a bind mount of the same filesystem is invisible;
	 * only kernels without openat2 get here. */
	return s->dev != r->root_dev;
}

static bool is_root(struct resolver *r, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && fstat(r->root_fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Walk PATH from BASE one component at a time.  FOLLOW_LAST: follow a
 * symlink in the last component (in-root mode only).  Returns an O_PATH fd.
 */
static int walk_lookup(struct resolver *r, int base, const char *path,
		       bool follow_last)
{
	char rest[2 * SE_PATH_MAX];
	char *p = rest;
	int cur, links = 0;

	if (strlen(path) >= sizeof(rest))
		return -ENAMETOOLONG;
	strcpy(rest, path);
	cur = fcntl(base, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;

	for (;;) {
		char comp[NAME_MAX + 1];
		char target[SE_PATH_MAX];
		struct step s = { 0 };
		size_t len;
		bool last;
		int next, err;
		ssize_t tlen;

		while (*p == '/')
			p++;
		if (!*p)
			return cur;
		len = strcspn(p, "/");
		if (len > NAME_MAX) {
			close(cur);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		p += len;
		last = p[strspn(p, "/")] == '\0';

		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			/* Only symlink targets carry "..", and only in-root
			 * mode follows them: clamp at the root like chroot. */
			if (!r->in_root) {
				close(cur);
				return -EXDEV;
			}
			if (is_root(r, cur))
				continue;
			next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			err = -errno;
			close(cur);
			return err;
		}
		err = step_stat(r, next, &s);
		if (err)
			goto fail;

		if (S_ISLNK(s.mode) && (!last || follow_last)) {
			struct statfs sfs;

			if (!r->in_root || ++links > WALK_MAX_LINKS) {
				err = -ELOOP;
				goto fail;
			}
			/* No magic link check without openat2: refuse every
			 * link on procfs (stricter than RESOLVE_NO_MAGICLINKS). */
			if (fstatfs(cur, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC) {
				err = -ELOOP;
				goto fail;
			}
			tlen = readlinkat(next, "", target, sizeof(target) - 1);
			if (tlen < 0) {
				err = -errno;
				goto fail;
			}
			target[tlen] = '\0';
			close(next);
			if (strlen(p) + (size_t)tlen + 2 > sizeof(rest)) {
				close(cur);
				return -ENAMETOOLONG;
			}
			/* rest := target "/" rest */
			memmove(rest + tlen + 1, p, strlen(p) + 1);
			memcpy(rest, target, (size_t)tlen);
			rest[tlen] = '/';
			p = rest;
			if (target[0] == '/') {
				close(cur);
				cur = fcntl(r->root_fd, F_DUPFD_CLOEXEC, 3);
				if (cur < 0)
					return -errno;
			}
			continue;
		}
		if (step_crosses_mount(r, &s)) {
			err = -EXDEV;
			goto fail;
		}
		if (!last && !S_ISDIR(s.mode)) {
			err = -ENOTDIR;
			goto fail;
		}
		close(cur);
		cur = next;
		continue;
fail:
		close(next);
		close(cur);
		return err;
	}
}

/* Reopen a walked O_PATH fd with the flags the caller asked for. */
static int walk_reopen(int fd, int oflags)
{
	struct stat st;
	int nfd;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((oflags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
		return -(S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR);
	if ((oflags & ~(O_DIRECTORY | O_NOFOLLOW)) == O_PATH)
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	else
		nfd = openat(fd, ".", oflags | O_CLOEXEC);
	return nfd < 0 ? -errno : nfd;
}

/* ---- lookups every backend answers ------------------------------------ */

/* A whole cleaned PATH from the root, following per the mode. */
/* PATH from the root under the root's scope, by the chosen backend. */
static int lookup_scoped(struct resolver *r, const char *path, int oflags)
{
	int fd, nfd;

	if (r->backend != RS_WALK)
		return openat2_lookup(r->root_fd, path, oflags, r->resolve);
	fd = walk_lookup(r, r->root_fd, path, r->in_root);
	if (fd < 0)
		return fd;
	nfd = walk_reopen(fd, oflags);
	close(fd);
	return nfd;
}

/* ---- --keep-directory-symlink ------------------------------------------- */

static void link_key(char *key, size_t n, const struct stat *st)
{
	snprintf(key, n, "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

void rs_note_link(struct resolver *r, const struct stat *st)
{
	char key[64];

	if (!r->keep_dir_links)
		return;
	link_key(key, sizeof(key), st);
	/* Out of memory: the link is then taken as pre-existing, and its
	 * resolution still cannot leave the root. */
	map_put(&r->made_links, key, 1);
}

/*
 * PATH, whose directories may go through symlinks that were in the root
 * before it was opened (usrmerge's lib -> usr/lib), never through one a
 * run made (the symlink-then-file attack, CVE-2025-4138 for tarfile).
 * Each step is looked up from the root with the strict scope; a link is
 * replaced by its target, textually, below the real directories walked
 * so far, so its ".." can climb only as far as the root (above: EXDEV),
 * and an absolute target, which names the host's tree, is refused.
 */
static int lookup_keeping_links(struct resolver *r, const char *path, int oflags)
{
	char done[SE_PATH_MAX] = "", todo[2 * SE_PATH_MAX], cand[SE_PATH_MAX];
	char target[SE_PATH_MAX], key[64];
	size_t dlen = 0;
	int links = 0;
	char *p = todo;

	if (strlen(path) >= sizeof(todo))
		return -ENAMETOOLONG;
	strcpy(todo, path);
	for (;;) {
		struct stat st;
		size_t len;
		bool last;
		ssize_t n;
		int fd;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		last = p[len + strspn(p + len, "/")] == '\0';
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash;

			if (dlen == 0)
				return -EXDEV;
			slash = memrchr(done, '/', dlen);
			dlen = slash ? (size_t)(slash - done) : 0;
			done[dlen] = '\0';
			p += len;
			continue;
		}
		if (dlen + 1 + len >= sizeof(cand))
			return -ENAMETOOLONG;
		snprintf(cand, sizeof(cand), "%s%s%.*s", done, dlen ? "/" : "", (int)len, p);
		/* A last component that is not a directory being opened is
		 * the writers' business: never followed. */
		if (last && !(oflags & O_DIRECTORY))
			return lookup_scoped(r, cand, oflags);
		fd = lookup_scoped(r, cand, O_PATH | O_NOFOLLOW);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st) < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			memcpy(done, cand, strlen(cand) + 1);
			dlen = strlen(done);
			p += len;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(fd);
			return -ENOTDIR;
		}
		link_key(key, sizeof(key), &st);
		if (map_get(&r->made_links, key) != MAP_NONE || ++links > WALK_MAX_LINKS) {
			close(fd);
			return -ELOOP;
		}
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		close(fd);
		if (n <= 0)
			return n < 0 ? -errno : -ENOENT;
		target[n] = '\0';
		if (target[0] == '/')
			return -EXDEV;
		/* The target, then what was left after the link. */
		p += len;
		if ((size_t)n + 1 + strlen(p) >= sizeof(todo))
			return -ENAMETOOLONG;
		memmove(todo + n + 1, p, strlen(p) + 1);
		memcpy(todo, target, (size_t)n);
		todo[n] = '/';
		p = todo;
	}
	return lookup_scoped(r, done, oflags);
}

static int lookup(struct resolver *r, const char *path, int oflags)
{
	int fd = lookup_scoped(r, path, oflags);

	if (fd == -ELOOP && r->keep_dir_links && !r->in_root)
		return lookup_keeping_links(r, path, oflags);
	return fd;
}

/* One component LEAF inside a scoped directory fd; never follows it. */
static int lookup_one(struct resolver *r, int dirfd, const char *leaf,
		      int oflags)
{
	int fd, nfd;

	if (r->backend != RS_WALK)
		return openat2_lookup(dirfd, leaf, oflags, r->resolve_one);
	fd = walk_lookup(r, dirfd, leaf, false);
	if (fd < 0)
		return fd;
	if ((oflags & ~(O_DIRECTORY | O_NOFOLLOW)) != O_PATH && !strchr(leaf, '/')) {
		struct stat a, b;

		/* A file cannot be reopened through its O_PATH fd without
		 * /proc; LEAF is one component of a scoped directory, so it
		 * is opened there, never followed, and must be the object
		 * the walk checked. */
		nfd = openat(dirfd, leaf, oflags | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			nfd = -errno;
		} else if (fstat(fd, &a) < 0 || fstat(nfd, &b) < 0 ||
			   a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
			close(nfd);
			nfd = -EAGAIN;
		}
		close(fd);
		return nfd;
	}
	nfd = walk_reopen(fd, oflags);
	close(fd);
	return nfd;
}

int rs_open_dir(struct resolver *r, const char *path, int oflags, bool create,
		mode_t dirmode)
{
	char buf[SE_PATH_MAX];
	size_t len = strlen(path), have;
	int fd, err;

	fd = lookup(r, path, oflags | O_DIRECTORY);
	if (fd != -ENOENT || !create)
		return fd;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;

	/* Back up to the deepest directory that exists ... */
	memcpy(buf, path, len + 1);
	have = len;
	for (;;) {
		char *slash = memrchr(buf, '/', have);

		have = slash ? (size_t)(slash - buf) : 0;
		buf[have] = '\0';
		fd = lookup(r, buf, O_PATH | O_DIRECTORY);
		if (fd != -ENOENT || have == 0)
			break;
	}
	if (fd < 0)
		return fd;

	/* ... then make each missing one inside its scoped parent. */
	memcpy(buf, path, len + 1);
	while (have < len) {
		const char *comp = buf + have + (have ? 1 : 0);
		char *end = strchr(comp, '/');
		int next;

		if (end)
			*end = '\0';
		err = r->before_mkdir ? r->before_mkdir(r->before_mkdir_ctx, fd, comp) : 0;
		if (err) {
			close(fd);
			return err;
		}
		if (mkdirat(fd, comp, dirmode) < 0 && errno != EEXIST) {
			err = -errno;
			close(fd);
			return err;
		}
		next = lookup_one(r, fd, comp, O_PATH | O_DIRECTORY);
		if (next == -ELOOP && (r->in_root || r->keep_dir_links)) {
			/* A symlink appeared or was there: follow it in root. */
			if (end)
				*end = '\0';
			next = lookup(r, buf, O_PATH | O_DIRECTORY);
		}
		close(fd);
		if (next < 0)
			return next;
		fd = next;
		have = end ? (size_t)(end - buf) : len;
		if (end)
			*end = '/';
	}
	if ((oflags & O_PATH) == 0) {
		int nfd = openat(fd, ".", oflags | O_DIRECTORY | O_CLOEXEC);

		err = errno;
		close(fd);
		return nfd < 0 ? -err : nfd;
	}
	return fd;
}

int rs_open_parent(struct resolver *r, const char *path, bool create,
		   mode_t dirmode, const char **leaf)
{
	char parent[SE_PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t plen;

	if (!slash) {
		*leaf = path;
		return lookup(r, "", O_PATH | O_DIRECTORY);
	}
	plen = (size_t)(slash - path);
	if (plen >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, plen);
	parent[plen] = '\0';
	*leaf = slash + 1;
	return rs_open_dir(r, parent, O_PATH, create, dirmode);
}

int rs_open_leaf(struct resolver *r, int dirfd, const char *leaf, int oflags)
{
	return lookup_one(r, dirfd, leaf, oflags | O_NOFOLLOW);
}

/* ---- operations on a path that do not open it ------------------------- */

/*
 * Run OP on (DIRFD, LEAF), resolving the parent first when the caller has
 * none.  The AT backend never gets here: it hands the kernel the whole path.
 */
#define WITH_PARENT(r, dirfd, leaf, path, expr)				\
	do {								\
		int pfd_ = (dirfd), own_ = -1, ret_;			\
		const char *l_ = (leaf);				\
		if (pfd_ < 0) {						\
			own_ = rs_open_parent((r), (path), false, 0, &l_); \
			if (own_ < 0)					\
				return own_;				\
			pfd_ = own_;					\
		}							\
		{							\
			int dfd = pfd_;					\
			const char *lf = l_;				\
			ret_ = (expr) < 0 ? -errno : 0;			\
		}							\
		if (own_ >= 0)						\
			close_keep_errno(own_);				\
		return ret_;						\
	} while (0)

int rs_stat(struct resolver *r, int dirfd, const char *leaf, const char *path,
	    struct stat *st)
{
	if (path[0] == '\0')
		return fstat(r->root_fd, st) < 0 ? -errno : 0;
	if (r->backend == RS_AT && !r->keep_dir_links)
		return fstatat(r->root_fd, path, st,
			       AT_SYMLINK_NOFOLLOW | r->at_scope) < 0 ? -errno : 0;
	WITH_PARENT(r, dirfd, leaf, path,
		    fstatat(dfd, lf, st, AT_SYMLINK_NOFOLLOW));
}

int rs_unlink(struct resolver *r, int dirfd, const char *leaf,
	      const char *path, int flags)
{
	if (r->backend == RS_AT && !r->keep_dir_links)
		return unlinkat(r->root_fd, path, flags | r->at_scope) < 0 ?
		       -errno : 0;
	WITH_PARENT(r, dirfd, leaf, path, unlinkat(dfd, lf, flags));
}

int rs_link(struct resolver *r, const char *target, int newdirfd,
	    const char *newleaf)
{
	const char *tleaf;
	int tdir, ret;

	if (r->backend == RS_AT && !r->keep_dir_links)
		return linkat(r->root_fd, target, newdirfd, newleaf,
			      r->at_scope) < 0 ? -errno : 0;
	/* CVE-2016-5418 (libarchive): the target is looked up under the
	 * same scope as every other name, never by its own path. */
	tdir = rs_open_parent(r, target, false, 0, &tleaf);
	if (tdir < 0)
		return tdir;
	ret = linkat(tdir, tleaf, newdirfd, newleaf, 0) < 0 ? -errno : 0;
	close(tdir);
	return ret;
}

/* ---- files made by whole paths (the AT backend) ------------------------ */

bool rs_by_path(const struct resolver *r)
{
	return r->backend == RS_AT && !r->keep_dir_links;
}

/* OUT := PATH's directory, "/", LEAF.  0 or -errno. */
static int sibling_path(const char *path, const char *leaf, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) + 1 : 0;
	int len = snprintf(out, n, "%.*s%s", dlen, path, leaf);

	if (len < 0 || (size_t)len >= n)
		return -ENAMETOOLONG;
	return 0;
}

int rs_create_sibling(const struct resolver *r, const char *path,
		      const char *leaf, mode_t mode)
{
	struct open_how how = {
		.flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		.mode = mode & 0777,
		.resolve = r->resolve,
	};
	char at[SE_PATH_MAX];
	int err, fd;

	if (!rs_by_path(r))
		return -EOPNOTSUPP;
	err = sibling_path(path, leaf, at, sizeof(at));
	if (err)
		return err;
	/* O_EXCL: a name planted under us is never opened.  The walk to
	 * the directory is openat2's, under the root's scope; a ".." race
	 * is asked again as in openat2_lookup(). */
	for (int tries = 0;; tries++) {
		fd = sys_openat2(r->root_fd, at, &how);
		if (fd >= 0)
			return fd;
		if (errno == EAGAIN && tries < EAGAIN_RETRIES)
			continue;
		return -errno;
	}
}

int rs_rename_sibling(const struct resolver *r, const char *path,
		      const char *leaf, unsigned int flags)
{
	char from[SE_PATH_MAX];
	int err;

	if (!rs_by_path(r))
		return -EOPNOTSUPP;
	err = sibling_path(path, leaf, from, sizeof(from));
	if (err)
		return err;
	/* Both parent walks are scoped (kernel/0008); the last components
	 * are never followed. */
	return renameat2(r->root_fd, from, r->root_fd, path,
			 flags | r->at_scope) < 0 ? -errno : 0;
}

int rs_unlink_sibling(const struct resolver *r, const char *path,
		      const char *leaf)
{
	char at[SE_PATH_MAX];
	int err;

	if (!rs_by_path(r))
		return -EOPNOTSUPP;
	err = sibling_path(path, leaf, at, sizeof(at));
	if (err)
		return err;
	return unlinkat(r->root_fd, at, r->at_scope) < 0 ? -errno : 0;
}

int rs_link_by_path(const struct resolver *r, const char *target,
		    const char *path)
{
	if (!rs_by_path(r))
		return -EOPNOTSUPP;
	/* CVE-2016-5418 (libarchive): the target under the same scope as
	 * every other name; kernel/0003 scopes both walks. */
	return linkat(r->root_fd, target, r->root_fd, path, r->at_scope) < 0 ?
	       -errno : 0;
}

/* ---- choosing a backend ----------------------------------------------- */

static bool have_openat2(int root_fd)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH,
	};
	int fd = sys_openat2(root_fd, ".", &how);

	if (fd < 0)
		return false;	/* ENOSYS, or EPERM from a seccomp filter */
	close(fd);
	return true;
}

/*
 * The AT_* flags exist only on kernels with this project's series.  Older
 * kernels reject unknown flags with EINVAL; later mainline kernels gave some
 * of these bits other meanings on other calls.  So check what each call
 * does with them, not whether it accepts them.
 */
static bool have_at_flags(int root_fd)
{
	const unsigned int strict = SE_AT_BENEATH | SE_AT_NO_SYMLINKS |
				    SE_AT_XDEV | SE_AT_NO_MAGICLINKS;
	/* Not both UTIME_OMIT: the kernel returns 0 for that before it
	 * looks at the path or the flags. */
	const struct timespec omit[2] = {
		{ .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT },
	};
	struct stat st;

	if (fstatat(root_fd, "..", &st, SE_AT_BENEATH) == 0 || errno != EXDEV)
		return false;
	if (fstatat(root_fd, ".", &st, strict) < 0)
		return false;
	if (fstatat(root_fd, "/", &st, SE_AT_THIS_ROOT) < 0)
		return false;
	if (fchownat(root_fd, "..", (uid_t)-1, (gid_t)-1, SE_AT_BENEATH) == 0 ||
	    errno != EXDEV)
		return false;
	if (utimensat(root_fd, "..", omit, SE_AT_BENEATH) == 0 || errno != EXDEV)
		return false;
	if (linkat(root_fd, "..", root_fd, ".safe-extract-probe",
		   SE_AT_BENEATH) == 0 || errno != EXDEV)
		return false;
	if (unlinkat(root_fd, "../.safe-extract-probe", SE_AT_BENEATH) == 0 ||
	    errno != EXDEV)
		return false;
	return true;
}

int rs_open_root(struct resolver *r, int dirfd, const struct rs_config *cfg)
{
	struct statx sx;

	memset(r, 0, sizeof(*r));
	r->in_root = cfg->in_root;
	r->keep_dir_links = cfg->keep_dir_links && !cfg->in_root;
	r->cross_mounts = cfg->cross_mounts;
	r->root_fd = dirfd;
	if (statx(r->root_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0) {
		r->have_mnt_id = (sx.stx_mask & STATX_MNT_ID) != 0;
		r->root_mnt_id = sx.stx_mnt_id;
		r->root_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	}

	r->resolve_one = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			 RESOLVE_NO_MAGICLINKS;
	if (cfg->in_root) {
		r->resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		r->at_scope = SE_AT_THIS_ROOT | SE_AT_NO_MAGICLINKS;
	} else {
		r->resolve = r->resolve_one;
		r->at_scope = SE_AT_BENEATH | SE_AT_NO_SYMLINKS |
			      SE_AT_NO_MAGICLINKS;
	}
	if (!cfg->cross_mounts) {
		r->resolve |= RESOLVE_NO_XDEV;
		r->resolve_one |= RESOLVE_NO_XDEV;
		r->at_scope |= SE_AT_XDEV;
	}

	switch (cfg->want) {
	case RS_WANT_AT:
		if (!have_openat2(r->root_fd) || !have_at_flags(r->root_fd))
			return -ENOSYS;
		r->backend = RS_AT;
		break;
	case RS_WANT_OPENAT2:
		if (!have_openat2(r->root_fd))
			return -ENOSYS;
		r->backend = RS_OPENAT2;
		break;
	case RS_WANT_WALK:
		r->backend = RS_WALK;
		break;
	case RS_WANT_AUTO:
		if (!have_openat2(r->root_fd))
			r->backend = RS_WALK;
		else if (have_at_flags(r->root_fd))
			r->backend = RS_AT;
		else
			r->backend = RS_OPENAT2;
		break;
	}
	/* The walk cannot stop a concurrent rename (resolve.h). */
	if (r->backend == RS_WALK && cfg->require_kernel)
		return -ENOSYS;
	return 0;
}

void rs_close(struct resolver *r)
{
	if (r->root_fd >= 0)
		close(r->root_fd);
	r->root_fd = -1;
	map_free(&r->made_links);
}
