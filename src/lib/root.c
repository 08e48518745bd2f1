/*
 * root.c - se_root: the destination, opened once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "names.h"

#define SE_ROOT_FLAGS (SE_IN_ROOT | SE_CROSS_MOUNTS | SE_REQUIRE_KERNEL | \
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

SE_EXPORT int se_root_lstat(se_root *root, const char *path, struct stat *st)
{
	char clean[SE_PATH_MAX];
	bool absolute;

	switch (names_clean(path, 0, clean, &absolute)) {
	case NAME_OK:
		return rs_stat(&root->rs, -1, NULL, clean, st);
	case NAME_ROOT:
		return fstat(root->rs.root_fd, st) < 0 ? -errno : 0;
	case NAME_TOO_LONG:
		return -ENAMETOOLONG;
	default:
		return -EINVAL;
	}
}

SE_EXPORT void se_root_close(se_root *root)
{
	if (!root)
		return;
	rs_close(&root->rs);
	free(root);
}
