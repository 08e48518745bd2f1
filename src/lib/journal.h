/*
 * journal.h - the journal of a --durable run: what the run changed before
 * its commit point, and the renames it commits, so that a run cut short
 * (a kill, a power cut, a fatal error) is rolled back or forward by
 * recover.c and DEST holds entirely the old tree or entirely the new one.
 *
 * DEST/.safe-extract-journal, one record a line, names %-encoded:
 *
 *   safe-extract-journal 1       the intent: a run is under way
 *   dir D                        temporaries may be made in D
 *   mkdir D                      the run is making directory D
 *   kept D                       ... which was there after all
 *   made D L                     the run is making D/L where nothing stood
 *   aside D A L                  the object at D/L is moving to D/A (a
 *                                whole tree, for an image layer's removal)
 *   commit                       the commit point's records follow
 *   rename D T L                 D/T goes to D/L
 *   meta D DEV:INO:MODE:UID:GID:AS.AN:MS.MN
 *                                then directory D (device DEV, inode INO)
 *                                gets its mode, owner (-1: kept) and times
 *   xattr D DEV:INO NAME HEX     and the extended attribute NAME (an ACL is
 *                                system.posix_acl_*), its value in hex
 *                                ("-": empty); recovery applies user.*
 *                                and the ACLs only (journal.h's reader
 *                                trusts no namespace a forger could use
 *                                against an overlay or a label)
 *   end N SHA256                 N bytes before this line, and their digest
 *
 * D is a directory's path from DEST with no symlink in it ("." is DEST).
 * Every record before "commit" is on disk (write(2), then fdatasync)
 * before the change it announces, so that after a kill or a power cut
 * recovery knows every object the run made or moved aside ("kept" needs
 * no flush: it undoes nothing).
 * The commit point is the "end" line on disk: from there on a cut rolls
 * forward, before it back.
 */
#ifndef SAFE_EXTRACT_JOURNAL_H
#define SAFE_EXTRACT_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dirmeta.h"
#include "durable.h"
#include "map.h"
#include "resolve.h"

#define JOURNAL_NAME ".safe-extract-journal"
#define JOURNAL_MAGIC "safe-extract-journal 1"
/* A forged journal must not make recovery read without end. */
#define JOURNAL_MAX ((size_t)1 << 30)

struct journal {
	int fd;			/* -1: no journal (not --durable) */
	bool committed;		/* the end line is on disk */
	int root_fd;		/* the run's root, borrowed */
	char root_path[4096];	/* where /proc says the root is */
	size_t root_len;
	struct resolver strict;	/* every name is checked without symlinks */
	bool have_strict;
	struct map dirs;	/* "dev:ino" -> index in names: "dir" written */
	char **names;
	size_t n_names, cap_names;
	struct { size_t dir; char a[32]; int fd; } *asides;
	size_t n_asides, cap_asides;
	/* Directories names were moved aside in, kept open (O_PATH) to
	 * remove them after the commit by identity, never by a path that
	 * someone may have swapped for a symlink meanwhile; the first
	 * JOURNAL_ASIDE_FDS only, then by path, checked to be the same. */
	size_t n_aside_fds;
};

#define JOURNAL_ASIDE_FDS 64

void journal_init(struct journal *j);

/* Is the run before its commit point, with a journal? */
static inline bool journal_active(const struct journal *j)
{
	return j->fd >= 0 && !j->committed;
}

/*
 * Write the intent and make it durable (fsync of the journal and of
 * DEST): 0 or -errno.  A journal already there is EEXIST: recover first.
 */
int journal_begin(struct journal *j, struct resolver *rs);

/* Temporaries will be made in DIRFD: 0 or -errno (the run must stop). */
int journal_dir(struct journal *j, int dirfd);

/* Directory LEAF is about to be made in DIRFD; MADE false after mkdir
 * found it there (it is not the run's). */
int journal_mkdir(struct journal *j, int dirfd, const char *leaf, bool made);

/* A non-directory is about to be made at LEAF in DIRFD, where nothing
 * stood. */
int journal_made(struct journal *j, int dirfd, const char *leaf);

/*
 * Move what stands at LEAF in DIRFD aside, under a temporary name (out in
 * A), after the record is on disk: 0 or -errno (nothing moved).  It is
 * removed when the run completes, and put back when the run rolls back.
 */
int journal_aside(struct journal *j, int dirfd, const char *leaf, const char *a);
/* The same for N names of DIRFD (LEAVES[k] to AS[k]): one flush for all
 * the records.  What is moved may be a tree (an image layer's whiteout);
 * recovery and journal_complete() remove it whole. */
int journal_aside_many(struct journal *j, int dirfd, const char *const *leaves,
		       const char *const *as, size_t n);

/*
 * The commit point: every pending rename of D and the metadata of DM's
 * directories (sorted, children first; found through RS), then the end
 * line, on disk.  0 or -errno (then the run rolls back).
 */
int journal_commit(struct journal *j, const struct durable *d, const struct dirmeta *dm,
		   struct resolver *rs);

/*
 * After the renames and the second syncfs: remove what was moved aside,
 * then the journal.  0 or -errno (recovery finishes what is left).
 */
int journal_complete(struct journal *j);

/* Close the journal without removing it (recover.c decides). */
void journal_close(struct journal *j);
void journal_free(struct journal *j);

/* Append NAME %-encoded (bytes outside '!'..'~', and '%') to OUT: the
 * length written, or 0 when CAP is too small. */
size_t journal_encode(const char *name, char *out, size_t cap);
/* Decode in place: false on a malformed escape or a NUL byte. */
bool journal_decode(char *s);

#endif
