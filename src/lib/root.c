/*
 * root.c - se_root: the destination, opened once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirmeta.h"
#include "internal.h"
#include "names.h"
#include "recover.h"
#include "remove.h"

#define SE_ROOT_FLAGS (SE_IN_ROOT | SE_CROSS_MOUNTS | SE_REQUIRE_KERNEL | SE_KEEP_DIR_SYMLINKS | \
		       SE_BACKEND_AT | SE_BACKEND_OPENAT2 | SE_BACKEND_WALK)

/* Take DIRFD (ours from now on) as a root with FLAGS. */
static int root_from_fd(int dirfd, unsigned int flags, se_root **out)
{
	unsigned int forced = flags & (SE_BACKEND_AT | SE_BACKEND_OPENAT2 |
				       SE_BACKEND_WALK);
	struct rs_config cfg = {
		.in_root = flags & SE_IN_ROOT,
		.cross_mounts = flags & SE_CROSS_MOUNTS,
		.require_kernel = flags & SE_REQUIRE_KERNEL,
		.keep_dir_links = flags & SE_KEEP_DIR_SYMLINKS,
		.want = forced == SE_BACKEND_AT ? RS_WANT_AT :
			forced == SE_BACKEND_OPENAT2 ? RS_WANT_OPENAT2 :
			forced == SE_BACKEND_WALK ? RS_WANT_WALK : RS_WANT_AUTO,
	};
	se_root *root;
	int r;

	*out = NULL;
	/* At most one forced backend. */
	if ((flags & ~SE_ROOT_FLAGS) || (forced & (forced - 1))) {
		close(dirfd);
		return -EINVAL;
	}
	root = calloc(1, sizeof(*root));
	if (!root) {
		close(dirfd);
		return -ENOMEM;
	}
	r = rs_open_root(&root->rs, dirfd, &cfg);
	if (r < 0) {
		rs_close(&root->rs);
		free(root);
		return r;
	}
	*out = root;
	return 0;
}

SE_EXPORT int se_root_open(const char *path, unsigned int flags, se_root **root)
{
	/* The destination is named by the caller, not by an archive: it may
	 * be reached through symlinks, and nothing below it may. */
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		*root = NULL;
		return -errno;
	}
	return root_from_fd(fd, flags, root);
}

SE_EXPORT int se_root_open_fd(int dirfd, unsigned int flags, se_root **root)
{
	int fd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		*root = NULL;
		return -errno;
	}
	return root_from_fd(fd, flags, root);
}

SE_EXPORT const char *se_root_backend(const se_root *root)
{
	return rs_backend_name(root->rs.backend);
}

SE_EXPORT int se_root_is_userspace(const se_root *root)
{
	return root->rs.backend == RS_WALK;
}

/*
 * PATH, a name as a caller would give an entry's, cleaned and checked as
 * entry names are into OUT ("" for the root itself).  0, -EINVAL ('..',
 * empty) or -ENAMETOOLONG.
 */
static int clean_path(const char *path, char out[SE_PATH_MAX])
{
	bool absolute;

	switch (names_clean(path, 0, out, &absolute)) {
	case NAME_OK:
		return 0;
	case NAME_ROOT:
		out[0] = '\0';
		return 0;
	case NAME_TOO_LONG:
		return -ENAMETOOLONG;
	default:
		return -EINVAL;
	}
}

SE_EXPORT int se_root_lstat(se_root *root, const char *path, struct stat *st)
{
	char clean[SE_PATH_MAX];
	int r = clean_path(path, clean);

	if (r < 0)
		return r;
	if (!clean[0])
		return fstat(root->rs.root_fd, st) < 0 ? -errno : 0;
	return rs_stat(&root->rs, -1, NULL, clean, st);
}

SE_EXPORT int se_root_openat(se_root *root, const char *path, int oflags, mode_t mode)
{
	char clean[SE_PATH_MAX];
	const char *leaf;
	int r = clean_path(path, clean), dirfd, fd;

	if (r < 0)
		return r;
	if (!clean[0]) {
		fd = openat(root->rs.root_fd, ".", (oflags & ~O_CREAT) | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	dirfd = rs_open_parent(&root->rs, clean, false, 0, &leaf);
	if (dirfd < 0)
		return dirfd;
	if (oflags & O_CREAT) {
		/* One component in a scoped parent, never followed: a
		 * planted symlink at the name is ELOOP, not a way out. */
		fd = openat(dirfd, leaf, oflags | O_NOFOLLOW | O_CLOEXEC, mode);
		fd = fd < 0 ? -errno : fd;
	} else {
		fd = rs_open_leaf(&root->rs, dirfd, leaf, oflags | O_CLOEXEC);
	}
	close(dirfd);
	return fd;
}

SE_EXPORT int se_root_unlinkat(se_root *root, const char *path, int flags)
{
	char clean[SE_PATH_MAX];
	int r = clean_path(path, clean);

	if (r < 0)
		return r;
	if (!clean[0] || (flags & ~AT_REMOVEDIR))
		return -EINVAL;
	return rs_unlink(&root->rs, -1, NULL, clean, flags);
}

/*
 * remove_tree_gone's report: a directory of the run's that is gone, so
 * its deferred metadata is moot.  Forgotten here, by identity, at the
 * moment it goes, rather than excused at the end (an ENOENT for "a
 * directory the run removed"): at the end an absent directory looks the
 * same whether this removal took it or someone renamed it away inside
 * DEST, and excusing it would turn that failure into silence.  A
 * directory moved aside before the removal is not the one reported here
 * (remove.c reports only the one it emptied and saw lose its last name)
 * and still fails at the end.
 */
static void forget_gone(void *data, const struct stat *st)
{
	dirmeta_forget_dir(data, st);
}

int root_renameat(se_root *root, const char *from, const char *to, unsigned int flags,
		  struct dirmeta *dm, const mode_t *mkparents)
{
	char cfrom[SE_PATH_MAX], cto[SE_PATH_MAX];
	const char *lfrom, *lto;
	int r, dfrom, dto, old = -1;
	struct stat st;

	if ((r = clean_path(from, cfrom)) < 0 || (r = clean_path(to, cto)) < 0)
		return r;
	if (!cfrom[0] || !cto[0])
		return -EINVAL;
	/* Records follow a rename, not an exchange. */
	if (dm && (flags & RENAME_EXCHANGE))
		return -EOPNOTSUPP;
	dfrom = rs_open_parent(&root->rs, cfrom, false, 0, &lfrom);
	if (dfrom < 0)
		return dfrom;
	dto = rs_open_parent(&root->rs, cto, false, 0, &lto);
	/* Directories are made only for a rename that can then be made:
	 * FROM, one component in its scoped parent, not followed. */
	if (dto == -ENOENT && mkparents &&
	    fstatat(dfrom, lfrom, &st, AT_SYMLINK_NOFOLLOW) == 0)
		dto = rs_open_parent(&root->rs, cto, true, *mkparents, &lto);
	if (dto < 0) {
		close(dfrom);
		return dto;
	}
	/* An empty directory at TO is replaced by the rename: held open
	 * (never followed) to learn afterwards whether it is the one that
	 * went. */
	if (dm)
		old = openat(dto, lto, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Both ends are single components of scoped parents; renameat2
	 * follows neither. */
	r = renameat2(dfrom, lfrom, dto, lto, flags) < 0 ? -errno : 0;
	close(dfrom);
	close(dto);
	if (old >= 0) {
		if (r == 0 && fstat(old, &st) == 0 && st.st_nlink == 0)
			dirmeta_forget_dir(dm, &st);
		close(old);
	}
	if (r == 0 && dm && !dirmeta_rename(dm, cfrom, cto))
		r = -ENOMEM;
	return r;
}

SE_EXPORT int se_root_renameat(se_root *root, const char *from, const char *to,
			       unsigned int flags)
{
	return root_renameat(root, from, to, flags, NULL, NULL);
}

int root_remove_tree(se_root *root, const char *path, unsigned int flags, struct dirmeta *dm)
{
	char clean[SE_PATH_MAX];
	int r = clean_path(path, clean);

	if (r < 0)
		return r;
	/* The root itself is never removed. */
	if (!clean[0] || flags)
		return -EINVAL;
	return remove_tree_gone(&root->rs, clean, dm ? forget_gone : NULL, dm);
}

SE_EXPORT int se_root_remove_tree(se_root *root, const char *path, unsigned int flags)
{
	return root_remove_tree(root, path, flags, NULL);
}

SE_EXPORT void se_root_close(se_root *root)
{
	if (!root)
		return;
	rs_close(&root->rs);
	free(root);
}

SE_EXPORT int se_root_recover(se_root *root, char *msg, size_t msglen)
{
	struct recovery r;
	int ret;

	if (!root)
		return -EINVAL;
	ret = recover(root->rs.root_fd, root->rs.cross_mounts, &r);
	if (ret < 0) {
		if (msg && msglen)
			snprintf(msg, msglen, "%s", r.msg[0] ? r.msg : strerror(-ret));
		return ret;
	}
	if (msg && msglen)
		snprintf(msg, msglen, "%zu renamed, %zu removed, %zu restored, %zu kept",
			 r.renamed, r.removed, r.restored, r.left);
	return r.kind == RECOVER_FORWARD ? SE_RECOVER_FORWARD :
	       r.kind == RECOVER_BACK ? SE_RECOVER_BACK : SE_RECOVER_NONE;
}
