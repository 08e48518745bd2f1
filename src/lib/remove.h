/*
 * remove.h - removing a name and everything under it inside the root, fd
 * by fd (se_root_remove_tree, and the deletions of a GNU incremental
 * dump's directory records).
 */
#ifndef SE_REMOVE_H
#define SE_REMOVE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "resolve.h"

/*
 * Remove PATH (cleaned, relative, never "": the root itself is never
 * removed) inside R's root: a non-directory is unlinked, a directory is
 * emptied first, depth first.  PATH's parent is resolved with R's scoping;
 * below it, each directory is opened one component at a time with
 * O_NOFOLLOW and O_DIRECTORY, a symlink is removed as itself and never
 * followed, and a mount point is never crossed (-EXDEV, what is beside it
 * still removed).  Returns 0 or the first negative errno met.
 */
int remove_tree(struct resolver *r, const char *path);

/* Told that the directory whose stat was ST is gone (removed by
 * remove_tree_gone(), after it was emptied from its own fd). */
typedef void remove_gone_fn(void *data, const struct stat *st);

/* remove_tree(), telling GONE of each directory it removes (a run's
 * deferred metadata for it is then moot). */
int remove_tree_gone(struct resolver *r, const char *path, remove_gone_fn *gone, void *data);

/* Does the name LEAF in the directory DIR stay? */
typedef bool remove_keep_fn(void *data, const struct stat *dir, const char *leaf);

/*
 * The same below a parent already resolved: LEAF (one component) in
 * DIRFD, a directory fd from resolve.c (O_PATH will do), or with LEAF
 * NULL every name in DIRFD.  With KEEP, what it says stays, and so do the
 * directories above it; a directory kept is still emptied of what KEEP
 * does not keep (an image layer's whiteout takes the lower layers' names
 * and leaves this layer's).  Returns 0 or the first negative errno.
 */
int remove_in(int dirfd, const char *leaf, remove_keep_fn *keep, void *data);

/* Called for each object remove_walk() meets: LEAF in the directory whose
 * stat is DIR, and its own stat ST.  Nonzero stops the walk. */
typedef int remove_visit_fn(void *data, const struct stat *dir, const char *leaf,
			    const struct stat *st);

/*
 * Visit LEAF in DIRFD and everything under it as remove_in() would reach
 * it, removing nothing: each directory opened from its parent, never
 * through a symlink; a mount point stops the walk with -EXDEV (before a
 * removal that would fail on it starts).  0, -errno, or VISIT's value.
 */
int remove_walk(int dirfd, const char *leaf, remove_visit_fn *visit, void *data);

#endif
