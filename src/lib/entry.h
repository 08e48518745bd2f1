/*
 * entry.h - one entry through the stages, whatever --jobs and --durable
 * say:
 *
 *   header -> plan -> parent -> make -> fill -> commit -> report
 *
 * The plan is decoded once (plan.c); the parent resolved once (resolve.c);
 * the object made in it (make.c) and its data written by the one data
 * loop (fill.c), here or by a writer thread (pool.c); the name policy
 * decides what happens at the name (commit.c); the outcome goes to the
 * reporter (report.c).  With writer threads, only who writes a file's
 * data and metadata, and when its commit happens, change: records come
 * back in archive order and are committed and reported here.
 */
#ifndef SAFE_EXTRACT_ENTRY_H
#define SAFE_EXTRACT_ENTRY_H

#include <archive.h>
#include <archive_entry.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "commit.h"
#include "dirmeta.h"
#include "durable.h"
#include "input.h"
#include "journal.h"
#include "layer.h"
#include "plan.h"
#include "policy.h"
#include "pool.h"
#include "report.h"
#include "tmpname.h"

/* A point of the input: bytes read, and how many a check had covered. */
struct stream_pos {
	uint64_t end, verified;
};

/* Unverified entries listed by name at most, and the bytes of their
 * names; the rest are counted.  A single-member gzip or a one-frame zstd
 * is checked only at its end, so every entry of the archive waits here:
 * the names bound the run's memory (issue 25's 16 MiB). */
#define UNCHECKED_MAX 100000
#define UNCHECKED_TEXT_MAX (2u << 20)

struct pipeline {
	struct policy pol;
	struct reporter rep;
	struct resolver *rs;		/* the root's; NULL for a listing */
	unsigned int jobs;		/* writer threads that may work */
	int data_fd;			/* se_run_set_data_fd, or -1 */
	volatile sig_atomic_t cancelled;
	bool fatal;			/* the run cannot go on */
	bool finished;

	struct tmpnames tn;
	struct durable dur;
	struct journal jn;		/* --durable: DEST/.safe-extract-journal */
	bool began;			/* the first entry's checks are done */
	struct dirmeta dm;
	struct commit cm;
	struct layer layer;		/* se_run_set_whiteouts */
	struct pool *pool;		/* jobs > 1, once started */
	unsigned int dirty;		/* records replacing a directory or symlink */
	bool warned_absolute;
	/* A temporary file that exists right now and must not outlive the
	 * run (the one being written in the run's thread). */
	struct {
		int dirfd;
		char name[32];
		const char *path;	/* made by path: NAME is its sibling */
	} live;
	/* Inodes of multi-link files this run made: the only ones a later
	 * hardlink entry that carries data (cpio) may write into. */
	struct { dev_t dev; ino_t ino; } *linked;
	size_t n_linked, cap_linked;

	/* Entries at their names whose data ends past the input's last
	 * verified point: reported again as unverified if the stream then
	 * fails its check (pipe_unverified).  Oldest first.  The names are
	 * offsets into one buffer, UNV_TEXT, in the same order: two strdup's
	 * an entry cost 14 MiB on the kernel tree's 83,731. */
	const struct input *in;		/* the run's readers */
	struct unchecked { uint32_t name, path; const char *type; uint64_t end; } *unv;
	size_t n_unv, first_unv, cap_unv;
	char *unv_text;
	size_t text_len, text_cap;
	uint64_t unv_dropped;		/* past UNCHECKED_MAX: counted only */

	struct plan plan;		/* the entry in progress, decoded once */
	struct archive *ar;		/* its archive */
	char last[1024];		/* the last name read, for messages */
	uint64_t entries, bytes;
};

void pipe_init(struct pipeline *pl);
/* Entry E of archive A, whose header was read with status HDR (OK, or a
 * warning with message HDR_MSG).  0, or -errno when the run stops. */
int pipe_entry(struct pipeline *pl, struct archive *a, struct archive_entry *e,
	       int hdr, const char *hdr_msg);
/* Commit and report every record in flight (ALL) or those done.  False
 * when the run has stopped. */
bool pipe_collect(struct pipeline *pl, bool all);
/* After the last archive: --durable renames, directory metadata.  False
 * when the run must end fatally. */
bool pipe_finish(struct pipeline *pl);
/* Say why the run stops at the entry named NAME, and stop it. */
int pipe_stop_at(struct pipeline *pl, struct archive *a, const char *name,
		 struct outcome o);
/* The input stream failed its check (WHY): every entry written past its
 * last verified point is reported again, as unverified. */
void pipe_unverified(struct pipeline *pl, const char *why);
/* A new archive: what the last one wrote was checked to its end. */
void pipe_verified(struct pipeline *pl);
/* Remove every temporary the run still owns (fatal error, cancel). */
void pipe_cleanup(struct pipeline *pl);
void pipe_free(struct pipeline *pl);

#endif
