/*
 * internal.h - what every module of the library may need and nothing
 * else: the export marker and the root.  Nothing here crosses the public
 * boundary (safe-extract.h).
 */
#ifndef SAFE_EXTRACT_INTERNAL_H
#define SAFE_EXTRACT_INTERNAL_H

#include "safe-extract.h"
#include "resolve.h"

/* Only the names in libsafe-extract.sym leave the shared object; this
 * keeps the rest out of the dynamic symbol table of static builds too. */
#define SE_EXPORT __attribute__((visibility("default")))

/* xz: decoder threads share this much memory; above it, one thread
 * (liblzma's memlimit_threading).  A stream that needs more than
 * SE_XZ_MEMLIMIT_STOP even in one thread is refused.  80 MiB: the shipped
 * linux-source .tar.xz (24 MiB blocks, 8 MiB dictionary) was decoded by
 * one thread at 64 (about 10 s on 2 CPUs, peak RSS 73 MiB) and by two at
 * 80 (8.0 s, 90 MiB), inside issue 25's 96 MiB; 96 gave 113-134 MiB. */
#define SE_XZ_MEMLIMIT_DEFAULT ((uint64_t)80 << 20)
#define SE_XZ_MEMLIMIT_STOP ((uint64_t)1 << 30)

struct se_root {
	struct resolver rs;
};

struct dirmeta;
/*
 * se_root_renameat() and se_root_remove_tree(), and with DM (a run's
 * deferred directory metadata, or NULL) that metadata kept true to what
 * they did: the records of a directory renamed follow it, those of a
 * directory removed or replaced (found gone by its own fd, nlink 0) are
 * forgotten.  se_run_renameat() and se_run_remove_tree().  MKPARENTS:
 * NULL, or the mode of the directories made above TO when they are
 * missing and FROM exists (SE_RENAME_MAKE_PARENTS).
 */
int root_renameat(se_root *root, const char *from, const char *to, unsigned int flags,
		  struct dirmeta *dm, const mode_t *mkparents);
int root_remove_tree(se_root *root, const char *path, unsigned int flags, struct dirmeta *dm);

#endif
