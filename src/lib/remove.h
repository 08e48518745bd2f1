/*
 * remove.h - removing a name and everything under it inside the root, fd
 * by fd (se_root_remove_tree, and the deletions of a GNU incremental
 * dump's directory records).
 */
#ifndef SE_REMOVE_H
#define SE_REMOVE_H

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

#endif
