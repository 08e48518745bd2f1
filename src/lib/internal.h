/*
 * internal.h - the library's private state: the root, the run, an entry's
 * outcome.  Nothing here crosses the public boundary (safe-extract.h).
 */
#ifndef SAFE_EXTRACT_INTERNAL_H
#define SAFE_EXTRACT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "safe-extract.h"
#include "map.h"
#include "names.h"
#include "resolve.h"

/* Only the names in libsafe-extract.sym leave the shared object; this
 * keeps the rest out of the dynamic symbol table of static builds too. */
#define SE_EXPORT __attribute__((visibility("default")))

/* xz: decoder threads share this much memory; above it, one thread
 * (liblzma's memlimit_threading).  A stream that needs more than
 * SE_XZ_MEMLIMIT_STOP even in one thread is refused. */
#define SE_XZ_MEMLIMIT_DEFAULT ((uint64_t)64 << 20)
#define SE_XZ_MEMLIMIT_STOP ((uint64_t)1 << 30)

#define REASON_MAX 512

struct se_root {
	struct resolver rs;
};

/* The outcome of one entry, as decided by a writer. */
struct outcome {
	enum se_action act;
	const char *reason;	/* static string or run->reason, or NULL */
	int err;		/* errno value, or 0 */
	bool fatal;		/* stop the run: exit 2 */
};

/* Not an outcome yet: a file for a writer thread, reported when placed,
 * or an entry dropped because the run stopped before it (writers.c). */
#define ACT_QUEUED ((enum se_action)0x7f)
static inline struct outcome queued_outcome(void)
{
	return (struct outcome){ ACT_QUEUED, NULL, 0, false };
}

/* Owner and mode as they will be applied, and why not all of them. */
struct owner_plan {
	bool set_owner;
	uid_t uid;
	gid_t gid;
	mode_t mode;			/* set-id bits only with the owner */
	const char *problem;		/* static reason, or NULL */
};

/* A directory whose metadata waits until its contents are in: one record
 * per directory, the last entry of that name wins. */
struct deferred_dir {
	char *path;
	struct owner_plan own;
	struct timespec times[2];
	struct attr_blob *xattrs;	/* --xattrs/--acls */
	dev_t dev;			/* the directory this run made or found */
	ino_t ino;
};

/* --durable: a directory that holds pending renames, kept open so the
 * rename happens in the directory the temporary was made in. */
struct dir_handle {
	int fd;
	dev_t dev;
	ino_t ino;
};

/* --durable: a finished object under a temporary name, renamed at the end. */
struct pending {
	size_t dir;			/* index into run->dirh */
	char *leaf;			/* final name */
	char *path;			/* cleaned path, for later entries beneath it */
	char tmp[32];			/* temporary name in the same directory */
	char *name;			/* the entry's name, for the report */
	const char *type;		/* report type */
	bool cancelled;			/* a later entry of the name replaced it */
};

/* A temporary file that exists right now and must not outlive the run. */
struct live_tmp {
	int dirfd;
	char name[32];
};

struct pattern_list {
	char **v;
	size_t n;
};

struct se_run {
	se_root *root;
	struct resolver *rs;		/* &root->rs */
	unsigned long long opts;	/* SE_OPT_* */
	mode_t umask;			/* applied by hand; the process's stays */
	mode_t proc_umask;		/* the process's, which the kernel applies */
	bool is_root;			/* euid 0: owners can be restored */
	unsigned int jobs;		/* se_run_set_jobs: threads that may work */
	uint64_t xz_memlimit;		/* se_run_set_xz_memlimit */
	int strip_components;
	struct pattern_list includes, excludes;
	struct pattern_list xattr_includes, xattr_excludes;
	bool *pattern_hit;		/* one per include */
	unsigned int occurrence;	/* --occurrence=N, or 0 */
	struct map seen_names;		/* name -> times seen, with occurrence */

	se_entry_cb *cb;
	void *cb_data;
	se_log_cb *log;
	void *log_data;
	int report_fd;			/* -1: none */
	int data_fd;			/* se_run_set_data_fd, or -1 */
	bool report_failed;

	struct archive *ar;		/* the archive of the entry in progress */
	struct source *input;		/* the newest reader the run made, while open */
	struct source *sources;		/* every reader the run made that is open */
	uint64_t input_bytes;		/* read by it so far */
	volatile sig_atomic_t cancelled;
	int cancel_pipe[2];		/* written by se_run_cancel */
	bool fatal;			/* the run cannot go on */
	bool finished;

	struct deferred_dir *dirs;
	size_t n_dirs, cap_dirs;
	struct map dir_index;		/* path -> dirs[] */
	struct pending *pend;
	size_t n_pend, cap_pend;
	struct map pend_index;		/* "dev:ino/leaf" and "p:path" -> pend[] */
	struct dir_handle *dirh;
	size_t n_dirh, cap_dirh;
	struct map dirh_index;		/* "dev:ino" -> dirh[] */
	struct live_tmp tmp;		/* dirfd -1 when none */
	struct writers *writers;	/* jobs > 1: the writer threads */
	const char *cur_raw;		/* the entry in progress: its name */
	unsigned char tmp_key[32];	/* temporary names (place.c) */
	uint64_t tmp_seq;
	bool tmp_keyed;
	/* Inodes of multi-link files this run made: the only ones a later
	 * hardlink entry that carries data (cpio) may write into. */
	struct { dev_t dev; ino_t ino; } *linked;
	size_t n_linked, cap_linked;

	/* Owner names: the caller's lookup, or the root's own databases in
	 * SE_IN_ROOT (read once), or the host's; the last name of each kind
	 * is remembered (one name repeats over many entries). */
	se_owner_cb *owner_cb;
	void *owner_data;
	char *passwd_db, *group_db;
	struct name_cache {
		bool valid;
		char name[64];
		uint32_t id;
	} name_cache[2];		/* [0] users, [1] groups */

	unsigned char digest[32];	/* SE_OPT_SHA256: the entry's data */
	bool have_digest;
	char reason[REASON_MAX];	/* an outcome's reason built at run time */
	char path[SE_PATH_MAX];		/* the entry's cleaned name */
	char target[SE_PATH_MAX];	/* its cleaned hardlink target */
	char last[1024];		/* the last name read, for messages */
	bool warned_absolute;
	uint64_t entries, bytes, entry_bytes;
	uint64_t refused, failed;
};

/* run.c */
void run_log(se_run *run, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Report one entry's outcome: callback, JSON report, counters. */
void run_report(se_run *run, struct archive_entry *e, const char *name,
		const char *path, const char *type, struct outcome o);
const char *run_type_name(struct archive_entry *e);
/* Say why the run stops at the entry named RAW, and stop it. */
int run_stop_at(se_run *run, struct archive *a, const char *raw,
		struct outcome o);
/* A non-NULL message for libarchive's last error. */
const char *run_archive_msg(struct archive *a);

/* input.c */
/* After the archive's last entry: check what is left of its stream (the
 * gzip trailer).  0, or -errno with the archive's error set. */
int input_finish(se_run *run, struct archive *a);
/* Let go of the readers the run made (they may outlive it). */
void input_release(se_run *run);
/* The fd se_run_cancel() writes to, for the input to wait on, or -1. */
int run_cancel_fd(const se_run *run);

#endif
