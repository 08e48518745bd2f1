/*
 * remove.c - removing a tree inside the root, fd by fd.
 *
 * A name is never looked up again from the root once its parent is open:
 * each directory below PATH is opened from its parent's fd, one
 * component, with O_NOFOLLOW | O_DIRECTORY, and checked to be on the
 * parent's mount, so a symlink or a directory swapped for one in the
 * meantime is never followed (CVE-2022-21658, std::fs::remove_dir_all's
 * race, is this shape), and a mount below DEST is never emptied.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat.h"
#include "remove.h"

/* Deeper than PATH_MAX allows a name to be: a loop, or an attack. */
#define REMOVE_DEPTH_MAX 4096

/*
 * LEAF, a directory in PARENT, opened to be read, never followed, never
 * on another mount than DEV.  An fd or -errno (-EXDEV: a mount point).
 */
static int open_child_dir(int parent, const char *leaf, dev_t dev)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
			   RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd;

	/* openat2's RESOLVE_NO_XDEV sees a bind mount of the same file
	 * system, which st_dev does not. */
	fd = (int)syscall(SYS_openat2, parent, leaf, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG))
		fd = openat(parent, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -ENOTDIR : -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != dev) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

/* What stays: KEEP(DATA, the directory's stat, a name in it), or
 * nothing when FN is NULL. */
struct keep {
	remove_keep_fn *fn;
	void *data;
	remove_gone_fn *gone;	/* told of each directory removed, or NULL */
	void *gone_data;
};

static int remove_at(int parent, const struct stat *pst, const char *leaf, dev_t dev,
		     unsigned int depth, const struct keep *k, bool *kept);

/* Every name in directory FD (on DEV; ST is its stat) removed but those
 * K keeps, and the directories above them; *KEPT when one stays.  The
 * first error. */
static int empty_dir(int fd, const struct stat *st, dev_t dev, unsigned int depth,
		     const struct keep *k, bool *kept)
{
	char **names = NULL;
	size_t n = 0;
	struct dirent *d;
	int dfd, r = 0;
	DIR *dp;

	/* The names first, then the removals: a directory changed while
	 * it is read may skip names. */
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return -errno;
	}
	while ((d = readdir(dp))) {
		char **nv;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		nv = realloc(names, (n + 1) * sizeof(*nv));
		if (!nv || !(nv[n] = strdup(d->d_name))) {
			if (nv)
				names = nv;
			r = -ENOMEM;
			break;
		}
		names = nv;
		n++;
	}
	closedir(dp);
	for (size_t i = 0; i < n; i++) {
		int e = remove_at(fd, st, names[i], dev, depth, k, kept);

		if (e < 0 && !r)
			r = e;
		free(names[i]);
	}
	free(names);
	return r;
}

static int remove_at(int parent, const struct stat *pst, const char *leaf, dev_t dev,
		     unsigned int depth, const struct keep *k, bool *kept)
{
	bool keep_self = k->fn && k->fn(k->data, pst, leaf), kept_below = false;
	struct stat st;
	int fd, r;

	if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (keep_self)
		*kept = true;
	if (!S_ISDIR(st.st_mode)) {
		if (keep_self)
			return 0;
		return unlinkat(parent, leaf, 0) < 0 && errno != ENOENT ? -errno : 0;
	}
	if (depth >= REMOVE_DEPTH_MAX)
		return -ELOOP;
	fd = open_child_dir(parent, leaf, dev);
	if (fd == -ENOTDIR && !keep_self)
		/* Swapped for a non-directory since: remove that, as itself. */
		return unlinkat(parent, leaf, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (fd < 0)
		return fd == -ENOTDIR ? 0 : fd;
	r = fstat(fd, &st) < 0 ? -errno : empty_dir(fd, &st, dev, depth + 1, k, &kept_below);
	if (kept_below)
		*kept = true;
	if (r < 0 || keep_self || kept_below) {
		close(fd);
		return r;
	}
	if (unlinkat(parent, leaf, AT_REMOVEDIR) < 0) {
		r = errno != ENOENT ? -errno : 0;
		close(fd);
		return r;
	}
	/* Told only when the directory emptied, still open, has no name
	 * left: a directory swapped in under LEAF meanwhile is the one that
	 * went, and the one emptied (moved away) is not reported gone. */
	if (k->gone && fstat(fd, &st) == 0 && st.st_nlink == 0)
		k->gone(k->gone_data, &st);
	close(fd);
	return 0;
}

int remove_in(int dirfd, const char *leaf, remove_keep_fn *keep, void *data)
{
	struct keep k = { keep, data, NULL, NULL };
	bool kept = false;
	struct stat st;

	/* DIRFD may be an O_PATH fd: fstat works on it, and *at calls take
	 * it as their directory. */
	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!leaf)
		return empty_dir(dirfd, &st, st.st_dev, 0, &k, &kept);
	if (!leaf[0] || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0 || strchr(leaf, '/'))
		return -EINVAL;
	return remove_at(dirfd, &st, leaf, st.st_dev, 0, &k, &kept);
}

/* remove_walk's recursion: LEAF in PARENT (PST its stat), then what is
 * under it. */
static int walk_at(int parent, const struct stat *pst, const char *leaf, dev_t dev,
		   unsigned int depth, remove_visit_fn *visit, void *data)
{
	struct stat st;
	struct dirent *d;
	DIR *dp;
	int fd, r;

	if (fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	r = visit(data, pst, leaf, &st);
	if (r || !S_ISDIR(st.st_mode))
		return r;
	if (depth >= REMOVE_DEPTH_MAX)
		return -ELOOP;
	fd = open_child_dir(parent, leaf, dev);
	if (fd < 0)
		return fd == -ENOTDIR ? 0 : fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	dp = fdopendir(fd);
	if (!dp) {
		r = -errno;
		close(fd);
		return r;
	}
	while (!r && (d = readdir(dp)))
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			r = walk_at(dirfd(dp), &st, d->d_name, dev, depth + 1, visit, data);
	closedir(dp);
	return r;
}

int remove_walk(int dirfd, const char *leaf, remove_visit_fn *visit, void *data)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	if (!leaf[0] || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0 || strchr(leaf, '/'))
		return -EINVAL;
	return walk_at(dirfd, &st, leaf, st.st_dev, 0, visit, data);
}

int remove_tree_gone(struct resolver *r, const char *path, remove_gone_fn *gone, void *data)
{
	struct keep k = { NULL, NULL, gone, data };
	const char *leaf;
	bool kept = false;
	struct stat st;
	int parent, ret;

	if (!path[0])
		return -EINVAL;
	parent = rs_open_parent(r, path, false, 0, &leaf);
	if (parent == -ENOENT)
		return 0;	/* nothing there to remove */
	if (parent < 0)
		return parent;
	if (!leaf[0] || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0 || strchr(leaf, '/'))
		ret = -EINVAL;
	else
		ret = fstat(parent, &st) < 0 ? -errno :
		      remove_at(parent, &st, leaf, st.st_dev, 0, &k, &kept);
	close(parent);
	return ret;
}

int remove_tree(struct resolver *r, const char *path)
{
	return remove_tree_gone(r, path, NULL, NULL);
}
