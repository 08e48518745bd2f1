/*
 * pool.h - writer threads (se_run_set_jobs): they write the data the run's
 * thread read into a file's temporary and apply its metadata through its
 * fd, while the run's thread reads on; the fd stays open for the run's
 * thread, which closes it.  Records come back in
 * the order they were submitted; the pool never commits or reports (the
 * entry stage does both, in archive order).
 *
 * Room: records and their data share a ring allocated once.  Every record
 * is either submitted, or its room given back with pool_unreserve(); the
 * ring is empty whenever the queue is (checked).
 */
#ifndef SAFE_EXTRACT_POOL_H
#define SAFE_EXTRACT_POOL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fill.h"
#include "outcome.h"
#include "owner.h"
#include "tmpname.h"
#include "xattr.h"

#define POOL_RECORDS 64			/* records in flight */
#define POOL_DATA_MAX (512u << 10)	/* larger files: in chunks */
#define POOL_CHUNK (256u << 10)

enum job_state { J_QUEUED, J_RUNNING, J_DONE };

struct job {
	/* Set by the run's thread before pool_submit(). */
	enum { JOB_NOTHING, JOB_FILE, JOB_CHUNK, JOB_STREAMED } kind;
	struct job *file;		/* a chunk: the file it belongs to */
	uint64_t offset;		/* a chunk: where its data goes */
	bool create;			/* the writer makes the temporary ... */
	uint64_t tmp_seq;		/* ... with these names */
	int dirfd, fd;			/* -1: none */
	char tmp[32];
	unsigned char *data;		/* written at OFFSET (a file: at 0); NULL: none */
	size_t len;
	size_t taken;			/* of the ring, with the gap before it */
	bool holds_fds;
	struct owner_plan own;
	mode_t created_mode;
	const struct attr_blob *attrs;
	struct timespec ts[2];
	/* The writer's results. */
	struct outcome o, meta;		/* o starts as SE_CREATED */
	uint64_t failed_at;		/* a file: 1 + the offset of the chunk
					 * whose failure is O; 0: none */
	char reason[REASON_MAX];	/* for meta */
	enum job_state state;
};

struct pool;

/* THREADS writers; TN: the run's names (numbers are handed out by the
 * run's thread); CANCELLED: the run's flag.  NULL when no thread starts. */
struct pool *pool_new(unsigned int threads, const struct tmpnames *tn,
		      volatile sig_atomic_t *cancelled);
/* The queue must be empty (pool_next until NULL). */
void pool_free(struct pool *p);

unsigned int pool_count(const struct pool *p);
/* Is there room for RECORDS more records, the first with BYTES of data
 * (HOLDS_FDS: a file that keeps its directory's fd and its own until
 * placed)? */
bool pool_has_room(const struct pool *p, unsigned int records, size_t bytes,
		   bool holds_fds);
/* BYTES of the ring for J (pool_has_room() said yes). */
unsigned char *pool_reserve(struct pool *p, struct job *j, size_t bytes);
/* J, the last record reserved, will not be submitted: its room back. */
void pool_unreserve(struct pool *p, struct job *j);
void pool_submit(struct pool *p, struct job *j);
/* The oldest record once it is done (WAIT: wait for it), out of the
 * queue with its room given back; NULL when none (or not done).  A
 * record that failed for want of room while records behind it were
 * written is written again first, alone (see pool.c). */
struct job *pool_next(struct pool *p, bool wait);
/* The run stopped: records not started are not written (their outcome
 * says interrupted); returns once no writer works on one. */
void pool_stop(struct pool *p);

/* Names in flight (strict mode's exact aliases: cleaned paths). */
void pool_name(struct pool *p, const char *path, int delta);
/* Is a file in flight at PATH, under it, or above it? */
bool pool_touches(const struct pool *p, const char *path);
/* Objects in flight, by their parent's identity and leaf ("dev:ino/leaf"),
 * for the modes that follow symlinks. */
void pool_object(struct pool *p, const char *key, int delta);
bool pool_has_object(const struct pool *p, const char *key);

#endif
