/*
 * resolve.h - the one module that turns an archive path into a scoped fd.
 *
 * Every path that comes from an archive reaches the filesystem through the
 * functions below, relative to the destination's root fd and never relative
 * to the current directory or '/'.  Three backends give the same results:
 *
 *   RS_AT       this project's kernel AT_* flags (kernel/): opens through
 *               openat2, and stat/link/chown/utimes/unlink scoped by the
 *               kernel on a whole path from the root fd.
 *   RS_OPENAT2  openat2(2) RESOLVE_* for every lookup; the other calls act
 *               on one component inside a parent fd that openat2 resolved.
 *   RS_WALK     no openat2 (ENOSYS, or EPERM from seccomp): a component
 *               walk with O_PATH|O_NOFOLLOW and a mount check per step.
 *               Correct for a quiet destination, but a concurrent rename can
 *               move a walked directory outside between two steps.
 *
 * Strict mode: no symlink is ever followed, no mount is crossed, the path
 * never leaves the root.  In-root mode: symlinks are followed as if the
 * root fd were '/', magic links are refused, mounts are not crossed unless
 * --cross-mounts.
 */
#ifndef SAFE_EXTRACT_RESOLVE_H
#define SAFE_EXTRACT_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "map.h"

enum rs_backend {
	RS_AT,
	RS_OPENAT2,
	RS_WALK,
};

struct resolver {
	int root_fd;		/* O_PATH|O_DIRECTORY of DEST */
	enum rs_backend backend;
	bool in_root;		/* --in-root */
	bool cross_mounts;	/* --cross-mounts */
	uint64_t resolve;	/* RESOLVE_* for a whole path from root_fd */
	uint64_t resolve_one;	/* RESOLVE_* for one component in a scoped dir */
	unsigned int at_scope;	/* AT_* for a whole path from root_fd */
	uint64_t root_mnt_id;	/* walk: the mount the root is on */
	dev_t root_dev;		/* walk, when statx has no mount id */
	bool have_mnt_id;
	/* --keep-directory-symlink: directories may go through symlinks that
	 * were here before; the ones a run made (made_links) never. */
	bool keep_dir_links;
	struct map made_links;		/* "dev:ino" of symlinks runs made */
	/* Called before a missing directory LEAF is made in DIRFD on the way
	 * to a path (the --durable journal records it first); non-zero is
	 * -errno and stops the lookup. */
	int (*before_mkdir)(void *ctx, int dirfd, const char *leaf);
	void *before_mkdir_ctx;
};

enum rs_want {
	RS_WANT_AUTO,		/* the best the kernel has */
	RS_WANT_AT,
	RS_WANT_OPENAT2,
	RS_WANT_WALK,
};

struct rs_config {
	bool in_root;
	bool cross_mounts;
	bool require_kernel;	/* no userspace walk */
	bool keep_dir_links;	/* follow pre-existing symlinks to directories */
	enum rs_want want;
};

/*
 * Take DIRFD (an O_PATH|O_DIRECTORY fd of the destination, owned by R from
 * now on, even on failure) and choose a backend.  Returns 0, or -ENOSYS
 * when the backend asked for (or, with require_kernel, any kernel scoping)
 * is missing.
 */
int rs_open_root(struct resolver *r, int dirfd, const struct rs_config *cfg);
void rs_close(struct resolver *r);
const char *rs_backend_name(enum rs_backend b);

/*
 * Open directory PATH (cleaned, relative; "" is the root) with OFLAGS
 * (O_PATH, or O_RDONLY for a directory whose metadata will be set).  With
 * CREATE, missing directories are made with DIRMODE, each inside its
 * scoped parent with a single-component mkdirat.  Returns an fd or -errno.
 */
int rs_open_dir(struct resolver *r, const char *path, int oflags, bool create,
		mode_t dirmode);

/*
 * The parent directory of PATH as an O_PATH fd (created when CREATE);
 * *LEAF points at PATH's last component.
 */
int rs_open_parent(struct resolver *r, const char *path, bool create,
		   mode_t dirmode, const char **leaf);

/*
 * Open LEAF, one component in DIRFD (a parent fd this module returned),
 * never following it: with O_PATH, a symlink is opened as itself.  This is
 * how a writer gets an fd of the object it just made, so that metadata is
 * applied to that object and never again by name.  Returns an fd or -errno.
 */
int rs_open_leaf(struct resolver *r, int dirfd, const char *leaf, int oflags);

/*
 * Operations on an existing PATH that never follow its last component.
 * DIRFD/LEAF, when DIRFD >= 0, are a parent fd this module returned and the
 * last component: the backends without AT_* flags act there instead of
 * resolving the parent again.  All return 0 or -errno.
 */
int rs_stat(struct resolver *r, int dirfd, const char *leaf, const char *path,
	    struct stat *st);
int rs_unlink(struct resolver *r, int dirfd, const char *leaf,
	      const char *path, int flags);
/* A symlink a run made: never followed under keep_dir_links. */
void rs_note_link(struct resolver *r, const struct stat *st);

/*
 * Hard link TARGET (a cleaned archive path, resolved under the same scope,
 * its last component not followed) as NEWLEAF in NEWDIRFD.
 */
int rs_link(struct resolver *r, const char *target, int newdirfd,
	    const char *newleaf);

/*
 * Files made by whole paths, with no parent fd.  With the AT backend the
 * kernel scopes every call on a whole path from the root fd by itself, so
 * a file is created with openat2, renamed with a scoped renameat2 and
 * removed with a scoped unlinkat, and no parent is opened and closed for
 * it.  True only then (not with --keep-directory-symlink, whose links the
 * kernel's scope refuses); the other backends keep their parent fds.
 * The price: no fd holds the temporary's directory, so another process
 * that renames that directory inside DEST between the create and the
 * rename strands the temporary there (inside DEST, never outside; the
 * entry fails with a message).  An archive alone cannot do it: the run
 * makes its entries one after the other.
 */
bool rs_by_path(const struct resolver *r);

/*
 * The three calls on LEAF, one component in the directory of PATH (a
 * cleaned archive path): the sibling of PATH that a temporary is, so that
 * the temporary and its final name are always in one directory.  Each walk
 * from the root is scoped by the kernel like every other lookup here.
 * Without rs_by_path() they fail with -EOPNOTSUPP.
 *
 * rs_create_sibling: a new regular file, O_EXCL, opened O_WRONLY; an fd or
 * -errno (-ENOENT: a directory on the way is missing).
 * rs_rename_sibling: LEAF over PATH with the RENAME_* FLAGS; 0 or -errno.
 * rs_unlink_sibling: LEAF removed; 0 or -errno.
 */
int rs_create_sibling(const struct resolver *r, const char *path,
		      const char *leaf, mode_t mode);
int rs_rename_sibling(const struct resolver *r, const char *path,
		      const char *leaf, unsigned int flags);
int rs_unlink_sibling(const struct resolver *r, const char *path,
		      const char *leaf);

/*
 * Hard link TARGET (a cleaned archive path, its last component not
 * followed) as PATH, both walks scoped by the kernel, with no parent fd;
 * -EOPNOTSUPP without rs_by_path().  0 or -errno (-EEXIST: PATH is taken).
 */
int rs_link_by_path(const struct resolver *r, const char *target,
		    const char *path);

#endif
