/*
 * dirmeta.h - directories whose metadata waits until their contents are
 * in: one record per directory, the last entry of that name wins; applied
 * children first, each to the very directory the run made or found.
 */
#ifndef SAFE_EXTRACT_DIRMETA_H
#define SAFE_EXTRACT_DIRMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

#include "map.h"
#include "outcome.h"
#include "owner.h"
#include "resolve.h"
#include "xattr.h"

struct deferred_dir {
	char *path;
	struct owner_plan own;
	struct timespec times[2];
	struct attr_blob *xattrs;	/* --xattrs/--acls; the record owns them */
	dev_t dev;			/* the directory this run made or found */
	ino_t ino;			/* 0: replaced by a later entry */
};

struct dirmeta {
	struct deferred_dir *dirs;
	size_t n_dirs, cap_dirs;
	struct map index;		/* path -> dirs[] */
	struct map by_id;		/* "dev:ino" -> dirs[] */
};

/* Remember the metadata for directory PATH (ST: its identity); ATTRS
 * become the record's.  False when out of memory (ATTRS are freed). */
bool dirmeta_defer(struct dirmeta *dm, const char *path, const struct owner_plan *own,
		   const struct timespec times[2], struct attr_blob *attrs,
		   const struct stat *st);
/* A later entry replaced the directory at PATH: its metadata is moot. */
void dirmeta_forget(struct dirmeta *dm, const char *path);
/* The directory ST is gone (a later entry replaced it, by whatever name
 * reached it): its metadata is moot.  By identity, at the moment it goes,
 * not at the end, where a new directory may have taken its inode number
 * (then --jobs=N and --jobs=1 could differ by where the file system
 * reused it). */
void dirmeta_forget_dir(struct dirmeta *dm, const struct stat *st);
/* The directory at FROM was renamed to TO (as GNU tar's restore of an
 * incremental dump renames them): its record and those of directories
 * under it follow it to their new names, as tar's delayed set-stat
 * follows its renames.  Each record keeps its identity, so that one
 * whose directory is not the one renamed still fails at the end.  False
 * when out of memory. */
bool dirmeta_rename(struct dirmeta *dm, const char *from, const char *to);
/* Children before parents. */
void dirmeta_sort(struct dirmeta *dm);
/* Apply record I: its outcome (SE_CREATED when all went on). */
struct outcome dirmeta_apply(struct dirmeta *dm, size_t i, struct resolver *rs,
			     char reason[REASON_MAX]);
void dirmeta_free(struct dirmeta *dm);

#endif
