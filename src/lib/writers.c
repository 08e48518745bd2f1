/*
 * writers.c - regular files' data, owner, mode and times written by a pool
 * of threads (se_run_set_jobs), while the run's own thread reads on.
 *
 * Only the work on an object this run just made is handed over: its data
 * (pwrite), then its metadata, through its fd, and its close.  Everything
 * that touches a name stays in the run's thread, in archive order: the
 * scoped resolution of the parent, the creation of the temporary, and,
 * once a writer is done, the rename that puts the file at its name.  So
 * the one resolution module keeps its single caller, and no name can be
 * looked up or replaced in another order than the archive's.
 *
 * A file larger than a writer's buffer, or sparse, goes in chunks: each
 * chunk is a record of its own, written at its offset by any writer, and
 * the file's record after them; when that is placed, every chunk is
 * written, and its metadata is applied then, in the run's thread.
 *
 * Entries that could affect each other wait: an entry whose name is, or
 * is under, or is above a file still in flight first lets that file be
 * placed; hardlinks, devices, FIFOs and sockets let every file in flight
 * be placed first.  Outcomes are reported (callback, JSON report) in
 * archive order from a queue; a fatal outcome stops the run there and the
 * later files in flight are removed unreported, as if never read.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"
#include "write.h"

#define QUEUE_MAX 64			/* records in flight */
#define ARENA (2u << 20)		/* their data, in all */
#define JOB_DATA_MAX (512u << 10)	/* larger files: in chunks */
#define CHUNK (256u << 10)
/* Idle writers are woken for this many queued files, or when the run's
 * thread waits: one wake-up per file cost more than the writing saved. */
#define WAKE_BATCH 8

enum job_state { J_QUEUED, J_RUNNING, J_DONE };

struct job {
	/* Filled in by the run's thread. */
	bool report_only;		/* an outcome already decided */
	struct job *file;		/* a chunk: the file it belongs to */
	off_t offset;			/* a chunk: where its data goes */
	bool streamed;			/* a file whose data went in chunks */
	bool create;			/* the writer makes the temporary ... */
	uint64_t tmp_seq;		/* ... with these names (place.c) */
	la_int64_t trunc_to;		/* streamed: its size, when it ends in a hole */
	int dirfd, fd;
	char tmp[32];
	char *path, *leaf, *name;
	const char *type;
	unsigned char *data;		/* written at offset 0; NULL: written */
	size_t len;
	size_t taken;			/* of the arena, with the gap before it */
	bool digest;			/* SE_OPT_SHA256 over data */
	struct owner_plan own;
	mode_t created_mode;
	struct attr_blob *attrs;
	struct timespec ts[2];
	/* The writer's results (or the run thread's, when report_only). */
	struct outcome o, meta;
	uint64_t bytes;
	bool counted;			/* bytes already in run->bytes */
	unsigned char sha[32];
	bool have_sha;
	char reason[REASON_MAX];
	enum job_state state;
};

struct writers {
	se_run *run;
	pthread_t *threads;
	unsigned int n_threads;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *ring[QUEUE_MAX];
	unsigned int head, count;	/* records in archive order */
	unsigned int started;		/* of them, taken by a writer */
	/*
	 * The jobs' data, one after the other in a ring that is allocated
	 * once: records are finished in the order they were queued, so
	 * space is given back in the order it was taken.  No malloc and
	 * free per file, which cost page faults, zeroed pages and unmaps
	 * that stop every thread.
	 */
	unsigned char *arena;
	size_t tail, used;		/* next free byte; bytes taken */
	bool stop, skip;		/* end the threads; drop queued work */
	unsigned int idle;		/* writers waiting for work */
	bool waiting;			/* the run's thread waits for one */
	/* Names in flight, and every directory above one, for the waits. */
	struct map names, above;
};


/* ---- a writer ---------------------------------------------------------- */

static void job_write(struct writers *w, struct job *j)
{
	se_run *run = w->run;
	size_t off = 0;

	if (j->file) {
		/* A chunk: its data at its offset; a failure is the file's. */
		int err = run->cancelled || w->skip ? EINTR :
			  pwrite_all(j->fd, j->data, j->len, j->offset);

		if (err) {
			pthread_mutex_lock(&w->mu);
			if (j->file->o.act == SE_CREATED) {
				j->file->o = err == EINTR ?
					(struct outcome){ SE_FAILED, "interrupted", EINTR, true } :
					fail("cannot write data", err);
				j->file->o.fatal |= dest_unusable(err);
			}
			pthread_mutex_unlock(&w->mu);
		}
		return;
	}
	if (run->cancelled || w->skip) {
		j->o = (struct outcome){ SE_FAILED, "interrupted", EINTR, true };
		if (j->fd < 0)
			return;
	} else if (j->create) {
		/* In the parent fd the run's thread resolved: a new name
		 * (O_EXCL|O_NOFOLLOW), nothing looked up. */
		j->fd = create_tmp_at(run, j->tmp_seq, j->dirfd, j->tmp, j->own.mode);
		if (j->fd < 0) {
			j->o = resolve_outcome(run, -j->fd);
			j->tmp[0] = '\0';
			return;
		}
	}
	if (j->o.act == SE_CREATED && j->data) {
		while (off < j->len) {
			ssize_t n = pwrite(j->fd, j->data + off, j->len - off, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				int err = n < 0 ? errno : EIO;

				j->o = fail("cannot write data", err);
				j->o.fatal = dest_unusable(err);
				break;
			}
			off += (size_t)n;
		}
		j->bytes = off;
		if (j->o.act == SE_CREATED && j->digest) {
			struct sha256 sh;

			sha256_init(&sh);
			sha256_update(&sh, j->data, j->len);
			sha256_final(&sh, j->sha);
			j->have_sha = true;
		}
	}
	if (j->o.act == SE_CREATED)
		j->meta = apply_fd_metadata(j->reason, j->fd, false, &j->own,
					    j->created_mode, j->attrs, j->ts);
	if (close(j->fd) < 0 && j->o.act == SE_CREATED) {
		j->o = fail("cannot write data", errno);
		j->o.fatal = dest_unusable(j->o.err);
	}
	j->fd = -1;
}

static void *writer_main(void *arg)
{
	struct writers *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct job *j;

		while (!w->stop && w->started == w->count) {
			w->idle++;
			pthread_cond_wait(&w->work, &w->mu);
			w->idle--;
		}
		if (w->stop)
			break;
		j = w->ring[(w->head + w->started) % QUEUE_MAX];
		w->started++;
		if (j->report_only || j->streamed) {
			j->state = J_DONE;
			if (w->waiting)
				pthread_cond_broadcast(&w->done);
			continue;
		}
		j->state = J_RUNNING;
		pthread_mutex_unlock(&w->mu);
		job_write(w, j);
		pthread_mutex_lock(&w->mu);
		j->state = J_DONE;
		/* Wake the run's thread only when it waits. */
		if (w->waiting)
			pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Free the pool once its threads have ended (or never started). */
static void writers_destroy(struct writers *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	map_free(&w->names);
	map_free(&w->above);
	free(w->threads);
	free(w->arena);
	free(w);
}

/* The pool, started on first use.  The threads take no signals: the
 * caller's handlers run in the caller's thread, as without them. */
static struct writers *writers_get(se_run *run)
{
	struct writers *w = run->writers;
	sigset_t all, old;

	if (w)
		return w;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->threads = calloc(run->jobs, sizeof(*w->threads));
	w->arena = malloc(ARENA);
	if (!w->threads || !w->arena) {
		free(w->threads);
		free(w->arena);
		free(w);
		return NULL;
	}
	w->run = run;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned int i = 0; i < run->jobs; i++) {
		if (pthread_create(&w->threads[i], NULL, writer_main, w) != 0)
			break;
		w->n_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (w->n_threads == 0) {
		writers_destroy(w);
		return NULL;
	}
	run->writers = w;
	return w;
}


/* ---- names in flight --------------------------------------------------- */

static void count_key(struct map *m, const char *key, int delta)
{
	size_t v = map_get(m, key);

	v = v == MAP_NONE ? 0 : v;
	if (delta < 0 && v <= 1)
		map_del(m, key);
	else
		map_put(m, key, v + (size_t)delta);
}

/* Count PATH in flight (DELTA +1) or no longer (-1), and its parents. */
static void names_count(struct writers *w, const char *path, int delta)
{
	char buf[SE_PATH_MAX];
	size_t len = strlen(path);

	count_key(&w->names, path, delta);
	if (len >= sizeof(buf))
		return;
	memcpy(buf, path, len + 1);
	for (char *p = buf + len; p > buf; p--) {
		if (*p != '/')
			continue;
		*p = '\0';
		count_key(&w->above, buf, delta);
	}
}

/* Is a file in flight at PATH, under it, or above it? */
static bool names_touch(struct writers *w, const char *path)
{
	char buf[SE_PATH_MAX];
	size_t len = strlen(path);

	if (map_get(&w->names, path) != MAP_NONE || map_get(&w->above, path) != MAP_NONE)
		return true;
	if (len >= sizeof(buf))
		return true;
	memcpy(buf, path, len + 1);
	for (char *p = buf + len; p > buf; p--) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (map_get(&w->names, buf) != MAP_NONE)
			return true;
	}
	return false;
}


/* ---- the run's thread: placing and reporting in order ------------------ */

static void job_free(struct job *j)
{
	free(j->path);
	free(j->leaf);
	free(j->name);
	attr_free(j->attrs);
	free(j);
}

/* Put a written file at its name (or queue its rename for --durable) and
 * report it; or report a decided outcome. */
static void job_finish(se_run *run, struct job *j)
{
	struct outcome o = j->o;
	const char *path = j->path;

	if (j->streamed) {
		/* Every chunk is written: the rest of what a writer does. */
		if (o.act == SE_CREATED && j->trunc_to >= 0 &&
		    ftruncate(j->fd, j->trunc_to) < 0) {
			o = fail("cannot set size", errno);
			o.fatal = dest_unusable(o.err);
		}
		if (o.act == SE_CREATED)
			j->meta = apply_fd_metadata(j->reason, j->fd, false, &j->own,
						    j->created_mode, j->attrs, j->ts);
		if (close(j->fd) < 0 && o.act == SE_CREATED) {
			o = fail("cannot write data", errno);
			o.fatal = dest_unusable(o.err);
		}
		j->fd = -1;
	}
	if (!j->report_only) {
		if (o.act == SE_CREATED) {
			if (run->opts & SE_OPT_DURABLE)
				o = queue_pending(run, j->dirfd, j->tmp, j->leaf, j->path,
						  j->name, "file");
			else
				o = place(run, j->dirfd, j->tmp, j->leaf, j->path);
			o = merge(o, j->meta);
		} else if (j->tmp[0]) {
			unlinkat(j->dirfd, j->tmp, 0);
		}
		close(j->dirfd);
		j->dirfd = -1;
		names_count(run->writers, j->path, -1);
		if (!j->counted)
			run->bytes += j->bytes;
	}
	if (!path)
		path = j->name;
	run->entry_bytes = j->bytes;
	run->have_digest = j->have_sha;
	if (j->have_sha)
		memcpy(run->digest, j->sha, sizeof(run->digest));
	run_report(run, NULL, j->name, path, j->type, o);
	if (o.fatal && !run->fatal)
		run_stop_at(run, run->ar, j->name, o);
}

/* Remove every record from the queue without reporting: the run stopped
 * before them.  Temporaries are removed once their writer let go. */
static void drop_all(se_run *run)
{
	struct writers *w = run->writers;

	pthread_mutex_lock(&w->mu);
	w->skip = true;
	for (;;) {
		bool busy = false;

		for (unsigned int i = 0; i < w->started; i++)
			if (w->ring[(w->head + i) % QUEUE_MAX]->state == J_RUNNING)
				busy = true;
		if (!busy)
			break;
		w->waiting = true;
		pthread_cond_wait(&w->done, &w->mu);
		w->waiting = false;
	}
	while (w->count > 0) {
		struct job *j = w->ring[w->head];

		w->head = (w->head + 1) % QUEUE_MAX;
		w->count--;
		if (w->started)
			w->started--;
		if (j->file) {
			/* the file's record, or its writer, owns the fd */
		} else if (!j->report_only) {
			if (j->fd >= 0)
				close(j->fd);
			if (j->tmp[0])
				unlinkat(j->dirfd, j->tmp, 0);
			close(j->dirfd);
			names_count(w, j->path, -1);
		}
		job_free(j);
	}
	w->used = w->tail = 0;
	w->skip = false;
	pthread_mutex_unlock(&w->mu);
}

/* Finish the oldest record once it is done; WAIT: wait for it.  False
 * when there is none or it is not done. */
static bool collect_one(se_run *run, bool wait)
{
	struct writers *w = run->writers;
	struct job *j;

	pthread_mutex_lock(&w->mu);
	while (w->count > 0 && w->ring[w->head]->state != J_DONE && wait) {
		/* Files not taken yet while writers sleep: wake them all. */
		if (w->idle > 0 && w->started < w->count)
			pthread_cond_broadcast(&w->work);
		w->waiting = true;
		pthread_cond_wait(&w->done, &w->mu);
		w->waiting = false;
	}
	if (w->count == 0 || w->ring[w->head]->state != J_DONE) {
		pthread_mutex_unlock(&w->mu);
		return false;
	}
	j = w->ring[w->head];
	w->head = (w->head + 1) % QUEUE_MAX;
	w->count--;
	w->started--;
	w->used -= j->taken;
	if (w->used == 0)
		w->tail = 0;
	pthread_mutex_unlock(&w->mu);
	if (!j->file)
		job_finish(run, j);
	job_free(j);
	return true;
}

bool writers_busy(const se_run *run)
{
	return run->writers && run->writers->count > 0;
}

bool writers_collect(se_run *run, bool all)
{
	if (!run->writers)
		return !run->fatal;
	while (!run->fatal && collect_one(run, all)) {
	}
	if (run->fatal && run->writers->count > 0)
		drop_all(run);
	return !run->fatal;
}

void writers_discard(se_run *run)
{
	if (run->writers && run->writers->count > 0)
		drop_all(run);
}

void writers_free(se_run *run)
{
	struct writers *w = run->writers;

	if (!w)
		return;
	writers_discard(run);
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	for (unsigned int i = 0; i < w->n_threads; i++)
		pthread_join(w->threads[i], NULL);
	writers_destroy(w);
	run->writers = NULL;
}

/*
 * Where BYTES would go in the arena: its offset, and in *TAKE what it
 * uses up (with the unused end of the ring when it starts over at 0);
 * or (size_t)-1 when it does not fit now.  The free space runs from
 * tail to the oldest job's data, going round.
 */
static size_t arena_fit(const struct writers *w, size_t bytes, size_t *take)
{
	size_t head = (w->tail + ARENA - w->used % ARENA) % ARENA;

	if (w->used == 0) {
		*take = bytes;
		return 0;
	}
	if (head < w->tail || (head == w->tail && w->used == ARENA)) {
		/* [tail, ARENA) and [0, head) are free */
		if (head == w->tail)
			return (size_t)-1;
		if (ARENA - w->tail >= bytes) {
			*take = bytes;
			return w->tail;
		}
		if (head >= bytes) {
			*take = ARENA - w->tail + bytes;
			return 0;
		}
		return (size_t)-1;
	}
	/* [tail, head) is free */
	if (head - w->tail >= bytes) {
		*take = bytes;
		return w->tail;
	}
	return (size_t)-1;
}

/* Room for one more record with BYTES of data: finish older ones first.
 * False when that stopped the run. */
static bool make_room(se_run *run, size_t bytes)
{
	struct writers *w = run->writers;
	size_t take;

	while (!run->fatal && w->count > 0 &&
	       (w->count == QUEUE_MAX || arena_fit(w, bytes, &take) == (size_t)-1))
		collect_one(run, true);
	return writers_collect(run, false);
}

/* BYTES of the arena for J (make_room made the room). */
static unsigned char *arena_take(struct writers *w, struct job *j, size_t bytes)
{
	size_t off = arena_fit(w, bytes, &j->taken);

	w->tail = (off + bytes) % ARENA;
	w->used += j->taken;
	return w->arena + off;
}

/* Queue J behind the others.  make_room() made room for it: the queue
 * is never more than QUEUE_MAX (one more would overwrite the oldest
 * record, which would then be finished and freed twice). */
static void submit(se_run *run, struct job *j)
{
	struct writers *w = run->writers;

	j->state = J_QUEUED;
	pthread_mutex_lock(&w->mu);
	w->ring[(w->head + w->count) % QUEUE_MAX] = j;
	w->count++;
	if (j->report_only && w->started == w->count - 1) {
		/* Nothing for a writer to do. */
		j->state = J_DONE;
		w->started++;
	} else if (w->idle > 0 && w->count - w->started >= WAKE_BATCH) {
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->mu);
}

bool writers_wait_for(se_run *run, const char *path, const char *target,
		      bool everything)
{
	struct writers *w = run->writers;

	if (!w || w->count == 0)
		return true;
	if (everything || names_touch(w, path) || (target && names_touch(w, target)))
		return writers_collect(run, true);
	return true;
}

struct outcome writers_report(se_run *run, struct archive_entry *e,
			      const char *name, const char *path,
			      const char *type, struct outcome o)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j || !(j->name = strdup(name)) || !(j->path = strdup(path))) {
		/* Out of memory: report now, after everything before it. */
		if (j)
			job_free(j);
		if (writers_collect(run, true))
			run_report(run, e, name, path, type, o);
		return queued_outcome();
	}
	j->report_only = true;
	j->dirfd = j->fd = -1;
	j->type = type;
	if (o.reason) {
		snprintf(j->reason, sizeof(j->reason), "%s", o.reason);
		o.reason = j->reason;
	}
	j->o = o;
	j->bytes = run->entry_bytes;
	j->counted = true;
	j->have_sha = run->have_digest;
	memcpy(j->sha, run->digest, sizeof(j->sha));
	if (!make_room(run, 0)) {
		job_free(j);
		return queued_outcome();
	}
	submit(run, j);
	return queued_outcome();
}

/*
 * The data of a large or sparse file E, in chunks for the writers: each
 * block where it goes (holes stay holes), as copy_data() writes it.  The
 * chunks are queued before the file's own record J.
 */
static struct outcome stream_data(se_run *run, struct archive_entry *e,
				  struct job *j)
{
	struct writers *w = run->writers;
	la_int64_t end = 0;
	struct job *c = NULL;
	struct outcome o = ok(SE_CREATED);
	struct block_digest dg;

	block_digest_init(&dg, run->opts & SE_OPT_SHA256);
	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t offset;
		int r;

		if (run->cancelled) {
			o = (struct outcome){ SE_FAILED, "interrupted", EINTR, true };
			break;
		}
		r = archive_read_data_block(run->ar, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_OK || offset < 0) {
			snprintf(run->reason, sizeof(run->reason), "%s%s",
				 r == ARCHIVE_WARN ? "data damaged: " : "",
				 run_archive_msg(run->ar));
			o = fail(run->reason, 0);
			o.fatal = r < ARCHIVE_WARN;
			break;
		}
		block_digest_add(&dg, (uint64_t)offset, buf, size);
		while (size > 0) {
			size_t n;

			if (c && (c->offset + (off_t)c->len != offset || c->len == CHUNK)) {
				submit(run, c);
				c = NULL;
			}
			if (!c) {
				if (!make_room(run, CHUNK))
					return queued_outcome();
				c = calloc(1, sizeof(*c));
				if (!c)
					return (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
				c->file = j;
				c->fd = c->dirfd = -1;
				c->fd = j->fd;
				c->offset = offset;
				c->data = arena_take(w, c, CHUNK);
			}
			n = size < CHUNK - c->len ? size : CHUNK - c->len;
			memcpy(c->data + c->len, buf, n);
			c->len += n;
			buf = (const char *)buf + n;
			size -= n;
			offset += (la_int64_t)n;
			run->bytes += n;
			run->entry_bytes += n;
		}
		if (offset > end)
			end = offset;
	}
	if (c)
		submit(run, c);
	if (o.act != SE_CREATED)
		return o;
	j->trunc_to = archive_entry_size_is_set(e) && archive_entry_size(e) > end ?
		      archive_entry_size(e) : -1;
	j->have_sha = block_digest_final(&dg, (uint64_t)(j->trunc_to >= 0 ? j->trunc_to : end),
					 j->sha);
	return o;
}

/*
 * Read the data of regular file E into memory for a writer, or in chunks
 * when it is large or sparse; then queue the file.  The name was resolved
 * and the temporary created here, in archive order.
 */
struct outcome writers_regular(se_run *run, struct archive_entry *e,
			       const char *path)
{
	struct owner_plan own = plan_owner(run, e);
	la_int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
	bool buffered = size >= 0 && size <= JOB_DATA_MAX &&
			archive_entry_sparse_count(e) == 0;
	struct outcome o;
	const char *leaf;
	struct job *j;
	int dirfd;

	if (!writers_get(run))
		return write_regular_here(run, e, path);
	if (!make_room(run, buffered ? (size_t)size : 0))
		return queued_outcome();
	j = calloc(1, sizeof(*j));
	if (!j)
		return (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
	j->fd = -1;
	j->dirfd = entry_parent(run, e, path, &leaf, &o);
	if (j->dirfd < 0) {
		job_free(j);
		return o;
	}
	dirfd = j->dirfd;
	j->path = strdup(path);
	j->leaf = strdup(leaf);
	j->name = strdup(run->cur_raw);
	if (!j->path || !j->leaf || !j->name) {
		close(dirfd);
		job_free(j);
		return (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
	}
	/* A tar member's data is exactly its size: a writer can make its
	 * temporary.  A file with other links is made here, for the later
	 * entries that may write into it (linked_add). */
	j->create = buffered && archive_entry_nlink(e) <= 1 &&
		    (archive_format(run->ar) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR;
	if (j->create) {
		j->tmp_seq = tmp_reserve(run, TMP_TRIES);
	} else {
		j->fd = create_tmp(run, dirfd, j->tmp, own.mode);
		if (j->fd < 0) {
			o = resolve_outcome(run, -j->fd);
			close(dirfd);
			job_free(j);
			return o;
		}
		live_tmp_set(run, dirfd, j->tmp);
		if (archive_entry_nlink(e) > 1)
			linked_add(run, j->fd);
	}

	j->o = ok(SE_CREATED);
	if (buffered) {
		o = read_data(run, e, (size_t)size, j->fd,
			      arena_take(run->writers, j, (size_t)size), &j->data, &j->len);
		j->digest = run->opts & SE_OPT_SHA256;
		if (!j->data) {
			j->bytes = run->entry_bytes;
			j->counted = true;
		}
	} else {
		run->entry_bytes = 0;
		o = stream_data(run, e, j);
		j->bytes = run->entry_bytes;
		j->counted = true;
		j->streamed = true;
		if (o.act == ACT_QUEUED || o.act != SE_CREATED) {
			/* Chunks of it may be in flight: let them land first
			 * (the files before it are placed and reported). */
			bool alive = o.act != ACT_QUEUED && writers_collect(run, true);

			close(j->fd);
			unlinkat(dirfd, j->tmp, 0);
			live_tmp_clear(run);
			close(dirfd);
			job_free(j);
			return alive ? o : queued_outcome();
		}
	}
	if (o.act != SE_CREATED) {
		if (j->fd >= 0) {
			close(j->fd);
			unlinkat(dirfd, j->tmp, 0);
		}
		live_tmp_clear(run);
		close(dirfd);
		job_free(j);
		return o;
	}
	live_tmp_clear(run);
	j->type = "file";
	j->own = own;
	j->created_mode = own.mode & 0777 & ~run->proc_umask;
	j->attrs = entry_attrs(run, e, &own);
	entry_times(run, e, j->ts);
	/* A streamed file's chunks took the room made at the start. */
	if (j->streamed && !make_room(run, 0)) {
		close(j->fd);
		unlinkat(dirfd, j->tmp, 0);
		close(dirfd);
		job_free(j);
		return queued_outcome();
	}
	names_count(run->writers, path, +1);
	submit(run, j);
	return queued_outcome();
}
