/*
 * write.h - entry writers and what they share.
 *
 * Each writer creates its object in a scoped parent fd from resolve.c with
 * a single-component name, and never writes into an inode that existed
 * before (the write-through of a planted hardlink or symlink): file data
 * goes into a new temporary that is renamed over the name.  Once an object
 * exists, it is changed only through an fd of it (metadata.c).
 *
 *   write-file.c   regular files and their data
 *   write-dir.c    directories, and their metadata deferred to the end
 *   write-link.c   symlinks, hardlinks, FIFOs and devices
 *   place.c        temporaries and putting a finished object at its name
 *   owner.c        owner, mode and times an entry asks for, and the policy
 *   xattr.c        extended attributes and ACLs, and the namespace policy
 *   metadata.c     applying all of that through the object's fd
 *   durable.c      --durable: renames that wait for the first syncfs
 *   writers.c      --jobs: threads that write files' data and metadata
 */
#ifndef SAFE_EXTRACT_WRITE_H
#define SAFE_EXTRACT_WRITE_H

#include <archive_entry.h>
#include <sys/stat.h>

#include "internal.h"

#define TMP_PREFIX ".safe-extract-"

static inline struct outcome ok(enum se_action act)
{
	return (struct outcome){ .act = act };
}

static inline struct outcome refuse(const char *reason, int err)
{
	return (struct outcome){ .act = SE_REFUSED, .reason = reason, .err = err };
}

static inline struct outcome fail(const char *reason, int err)
{
	return (struct outcome){ .act = SE_FAILED, .reason = reason, .err = err };
}

/* The writers, one per entry type.  PATH is the cleaned name. */
struct outcome write_regular(se_run *run, struct archive_entry *e,
			     const char *path);
struct outcome write_directory(se_run *run, struct archive_entry *e,
			       const char *path);
struct outcome write_symlink(se_run *run, struct archive_entry *e,
			     const char *path);
struct outcome write_hardlink(se_run *run, struct archive_entry *e,
			      const char *path, const char *target);
struct outcome write_special(se_run *run, struct archive_entry *e,
			     const char *path);

/* After the last entry: --durable renames, deferred directory metadata.
 * False when the run must end fatally. */
bool write_finish(se_run *run);
/* Free what the run kept for write_finish. */
void write_free(se_run *run);
/* Remove every temporary this run still owns (fatal error, cancel). */
void write_cleanup(se_run *run);

/* place.c */
struct outcome kept_old(se_run *run);
int entry_parent(se_run *run, struct archive_entry *e, const char *path,
		 const char **leaf, struct outcome *o);
bool dest_unusable(int err);
struct outcome resolve_outcome(se_run *run, int err);
#define TMP_TRIES 9
uint64_t tmp_reserve(se_run *run, unsigned int n);
void tmp_name_at(const se_run *run, uint64_t seq, char out[32]);
void tmp_name(se_run *run, char out[32]);
int create_tmp_at(const se_run *run, uint64_t seq, int dirfd, char tmp[32],
		  mode_t mode);
int create_tmp(se_run *run, int dirfd, char tmp[32], mode_t mode);
int remove_empty_dir(se_run *run, int dirfd, const char *leaf,
		     const char *path);
struct outcome dir_in_way(int err);
struct outcome place(se_run *run, int dirfd, const char *tmp,
		     const char *leaf, const char *path);
void live_tmp_set(se_run *run, int dirfd, const char *name);
void live_tmp_clear(se_run *run);

/* owner.c */
struct owner_plan plan_owner(se_run *run, struct archive_entry *e);
bool caps_allowed(se_run *run, const struct owner_plan *p);
void entry_times(se_run *run, struct archive_entry *e, struct timespec ts[2]);

/* xattr.c: kept as a list of (name, value), so that a directory's can wait
 * for its deferred metadata. */
struct attr_blob {
	struct attr_blob *next;
	char *name;
	size_t size;
	unsigned char value[];
};

void attr_free(struct attr_blob *list);
struct attr_blob *entry_attrs(se_run *run, struct archive_entry *e,
			      const struct owner_plan *own);

/* metadata.c */
struct outcome apply_fd_metadata(char reason[REASON_MAX], int fd, bool opath,
				 const struct owner_plan *own,
				 mode_t created_mode,
				 const struct attr_blob *attrs,
				 const struct timespec ts[2]);
struct outcome merge(struct outcome placed, struct outcome meta);
struct outcome object_metadata(se_run *run, struct archive_entry *e,
			       int dirfd, const char *leaf, mode_t type,
			       struct outcome o);

/* write-dir.c */
void dir_forget(se_run *run, const char *path);
void finish_dirs(se_run *run);

/* durable.c */
struct pending *pending_at(se_run *run, const struct stat *dst,
			   const char *leaf);
bool pending_blocks(se_run *run, const char *path);
int pending_settle(se_run *run, int dirfd, const char *leaf,
		   struct outcome *o);
struct outcome queue_pending(se_run *run, int dirfd, const char *tmp,
			     const char *leaf, const char *path,
			     const char *name, const char *type);

/* write-file.c */
struct outcome write_regular_here(se_run *run, struct archive_entry *e,
				  const char *path);
/* Write N bytes at OFFSET into FD: 0 or an errno value. */
int pwrite_all(int fd, const unsigned char *p, size_t n, off_t offset);
struct outcome read_data(se_run *run, struct archive_entry *e, size_t size,
			 int fd, unsigned char *buf, unsigned char **data,
			 size_t *len);

/* writers.c: regular files written by threads (se_run_set_jobs). */
struct outcome writers_regular(se_run *run, struct archive_entry *e,
			       const char *path);
/* Is anything in flight? */
bool writers_busy(const se_run *run);
/* Before an entry at PATH (a hardlink's TARGET too) that is not queued:
 * let files in flight that it could touch be placed (EVERYTHING: all of
 * them).  False when that stopped the run. */
bool writers_wait_for(se_run *run, const char *path, const char *target,
		      bool everything);
/* Queue a decided outcome behind the files in flight. */
struct outcome writers_report(se_run *run, struct archive_entry *e,
			      const char *name, const char *path,
			      const char *type, struct outcome o);
/* Place and report finished files in order (ALL: wait for every one).
 * False when the run is stopped. */
bool writers_collect(se_run *run, bool all);
/* Drop what is in flight, unreported, removing its temporaries. */
void writers_discard(se_run *run);
void writers_free(se_run *run);
bool linked_has(se_run *run, const struct stat *st);
void linked_add(se_run *run, int fd);
struct outcome copy_data(se_run *run, struct archive_entry *e, int fd);

#endif
