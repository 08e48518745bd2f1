/*
 * durable.h - --durable: objects finished under a temporary name, renamed
 * after the first syncfs.  Pending objects are found by their directory's
 * identity and leaf, and renamed in the directory fd they were made in,
 * never looked up again by name.
 */
#ifndef SAFE_EXTRACT_DURABLE_H
#define SAFE_EXTRACT_DURABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "map.h"
#include "resolve.h"

/*
 * At most this many directories holding pending renames stay open.  A
 * tree has more directories than a process has descriptors (before: one
 * fd per directory, and --durable stopped with EMFILE past ~1,000); a
 * closed one is opened again through the resolver and must be the same
 * directory (dev:ino), or its pending objects fail.
 */
#define DURABLE_OPEN_DIRS 8

/* A directory that holds pending renames: the rename happens in the
 * directory the temporary was made in, by identity, never in another
 * that took its path meanwhile. */
struct dir_handle {
	int fd;				/* -1 while closed */
	dev_t dev;
	ino_t ino;
	char *path;			/* cleaned path from the root, to open it again */
};

struct pending {
	size_t dir;			/* index into dirh */
	char *leaf;			/* final name */
	char *path;			/* cleaned path, for later entries beneath it */
	char tmp[32];			/* temporary name in the same directory */
	char *name;			/* the entry's name, for the report */
	const char *type;		/* report type */
	bool cancelled;			/* a later entry of the name replaced it */
};

struct durable {
	struct resolver *rs;		/* opens a closed handle again */
	struct pending *pend;
	size_t n_pend, cap_pend;
	struct map pend_index;		/* "dev:ino/leaf" and "p:path" -> pend[] */
	struct dir_handle *dirh;
	size_t n_dirh, cap_dirh;
	struct map dirh_index;		/* "dev:ino" -> dirh[] */
	size_t open[DURABLE_OPEN_DIRS];	/* the handles with an fd, oldest at next */
	size_t n_open, next;
};

/* The live pending object at LEAF of the directory DIRFD, or NULL. */
struct pending *durable_at(struct durable *d, int dirfd, const char *leaf);
/* Does the pending object LEAF of the directory DEV:INO go? */
typedef bool durable_match_fn(void *data, dev_t dev, ino_t ino, const char *leaf);
/* durable_cancel() every live pending object MATCH names (an image
 * layer's whiteout takes it, or the tree it was to be renamed into). */
void durable_cancel_where(struct durable *d, durable_match_fn *match, void *data);
/* A pending object at a directory of PATH: the entry meets a file. */
bool durable_blocks(struct durable *d, const char *path);
/* Drop P: a later entry of its name replaced it; its temporary goes. */
void durable_cancel(struct durable *d, struct pending *p);
/* Queue TMP in DIRFD for LEAF: 0, or -errno (ENOMEM, or the dup). */
int durable_add(struct durable *d, int dirfd, const char *tmp, const char *leaf,
		const char *path, const char *name, const char *type);
/*
 * The directory fd a pending object lives in, opened again when it was
 * closed: an fd owned by D, valid until the next durable_* call; or
 * -errno (-ESTALE: another directory now has its path).
 */
int durable_dirfd(struct durable *d, const struct pending *p);
/* Remove every temporary still pending (a run that stops). */
void durable_cleanup(struct durable *d);
void durable_free(struct durable *d);

#endif
