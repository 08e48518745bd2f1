/*
 * pool.c - the writer threads, their ring of records and data, and the
 * names in flight.
 *
 * A writer takes the oldest record not yet taken.  A file: make its
 * temporary when asked (in the parent fd the run's thread resolved: a new
 * name, O_EXCL|O_NOFOLLOW, nothing looked up), write its data, apply its
 * metadata through the fd, and leave the fd open for the run's thread.  A
 * chunk of a large or sparse file: its data at its offset, any writer.
 * Idle writers are woken for a batch of records, or when the run's thread
 * waits: one wake-up per file cost more than the writing saved.
 *
 * A full destination: writers write the files behind the oldest one while
 * it waits for its turn, so the oldest can find the room gone that --jobs=1
 * would have given it, and the run would stop at another entry than
 * --jobs=1's, with another tree and message.  So a record that failed for
 * want of room (ENOSPC, EDQUOT) while records behind it were written is
 * written again, alone, once those records gave their room back: each
 * one's data is still in the ring, its temporary truncated, and it is
 * written again afterwards.  The record fails only when it fails alone,
 * which is when --jobs=1 fails.
 */
#include "config.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "map.h"
#include "metadata.h"
#include "names.h"
#include "pool.h"

#define ARENA (2u << 20)		/* the records' data, in all */
#define WAKE_BATCH 8
/* Descriptors kept free for the run's thread, the decoders and the
 * caller, beyond those a file in flight holds (its directory and its
 * temporary). */
#define FD_RESERVE 16

struct pool {
	const struct tmpnames *tn;
	volatile sig_atomic_t *cancelled;
	pthread_t *threads;
	unsigned int n_threads;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *ring[POOL_RECORDS];
	unsigned int head, count;	/* records in submission order */
	unsigned int started;		/* of them, taken by a writer */
	unsigned int fd_jobs, fd_max;	/* files holding fds; the most at once */
	/*
	 * The records' data, one after the other in a ring allocated once:
	 * records leave in the order they came, so room is given back in
	 * the order it was taken.  No malloc and free per file, which cost
	 * page faults, zeroed pages and unmaps that stop every thread.
	 */
	unsigned char *arena;
	size_t tail, used;		/* next free byte; bytes taken */
	bool stop, skip;		/* end the threads; write nothing more */
	bool paused;			/* take no record (a record written again) */
	bool stopped;			/* pool_stop() was called: no more retries */
	unsigned int idle;		/* writers waiting for work */
	bool waiting;			/* the run's thread waits for one */
	/* The run's thread's alone: names in flight, and every directory
	 * above one; objects in flight by identity. */
	struct map names, above, objects;
};

/* ---- a writer ----------------------------------------------------------- */

static void job_write(struct pool *p, struct job *j)
{
	bool stopped = *p->cancelled || p->skip;

	if (j->kind == JOB_CHUNK) {
		/* Its data at its offset; a failure is the file's. */
		int err = stopped ? EINTR : pwrite_all(j->fd, j->data, j->len, j->offset);

		if (err) {
			j->o = err == EINTR ? fatal("interrupted", EINTR) :
			       write_failed("cannot write data", err);
			pthread_mutex_lock(&p->mu);
			if (j->file->o.act == SE_CREATED) {
				j->file->o = j->o;
				j->file->failed_at = j->offset + 1;
			}
			pthread_mutex_unlock(&p->mu);
		}
		return;
	}
	if (stopped) {
		j->o = fatal("interrupted", EINTR);
		return;
	}
	if (j->create && j->fd < 0) {
		j->fd = tmp_create_at(p->tn, j->tmp_seq, j->dirfd, j->tmp, j->own.mode);
		if (j->fd < 0) {
			j->o = resolve_outcome(false, -j->fd);
			j->fd = -1;
			j->tmp[0] = '\0';
			return;
		}
	}
	if (j->data) {
		int err = pwrite_all(j->fd, j->data, j->len, 0);

		if (err)
			j->o = write_failed("cannot write data", err);
	}
	if (j->o.act == SE_CREATED)
		j->meta = apply_fd_metadata(j->reason, j->fd, false, &j->own,
					    j->created_mode, j->attrs, j->ts);
}

static void *writer_main(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct job *j;

		while (!p->stop && (p->paused || p->started == p->count)) {
			p->idle++;
			pthread_cond_wait(&p->work, &p->mu);
			p->idle--;
		}
		if (p->stop)
			break;
		j = p->ring[(p->head + p->started) % POOL_RECORDS];
		p->started++;
		if (j->kind != JOB_NOTHING && j->kind != JOB_STREAMED) {
			j->state = J_RUNNING;
			pthread_mutex_unlock(&p->mu);
			job_write(p, j);
			pthread_mutex_lock(&p->mu);
		}
		j->state = J_DONE;
		/* Wake the run's thread only when it waits. */
		if (p->waiting)
			pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ---- the pool ------------------------------------------------------------ */

/* How many files may hold descriptors at once: what the limit leaves
 * beyond those open now and a reserve, two per file.  --jobs must work
 * wherever one thread does (ulimit -n 16). */
static unsigned int fd_budget(void)
{
	struct rlimit rl;
	unsigned long open_now = 0, room;
	DIR *d;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return POOL_RECORDS;
	d = opendir("/proc/self/fd");
	if (d) {
		while (readdir(d))
			open_now++;
		closedir(d);
	} else {
		open_now = 64;
	}
	if (rl.rlim_cur <= open_now + FD_RESERVE)
		return 0;
	room = (rl.rlim_cur - open_now - FD_RESERVE) / 2;
	return room > POOL_RECORDS ? POOL_RECORDS : (unsigned int)room;
}

static void pool_destroy(struct pool *p)
{
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	map_free(&p->names);
	map_free(&p->above);
	map_free(&p->objects);
	free(p->threads);
	free(p->arena);
	free(p);
}

/* The threads take no signals: the caller's handlers run in the caller's
 * thread, as without them. */
struct pool *pool_new(unsigned int threads, const struct tmpnames *tn,
		      volatile sig_atomic_t *cancelled)
{
	struct pool *p;
	unsigned int budget = fd_budget();
	sigset_t all, old;

	/* Too few descriptors for even two files in flight: one thread. */
	if (budget < 2)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->threads = calloc(threads, sizeof(*p->threads));
	p->arena = malloc(ARENA);
	if (!p->threads || !p->arena) {
		free(p->threads);
		free(p->arena);
		free(p);
		return NULL;
	}
	p->tn = tn;
	p->cancelled = cancelled;
	p->fd_max = budget;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned int i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, writer_main, p) != 0)
			break;
		p->n_threads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (p->n_threads == 0) {
		pool_destroy(p);
		return NULL;
	}
	return p;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	assert(p->count == 0);
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pool_destroy(p);
}

unsigned int pool_count(const struct pool *p)
{
	return p ? p->count : 0;
}

/*
 * Where BYTES would go in the ring: its offset, and in *TAKE what it uses
 * up (with the unused end of the ring when it starts over at 0); or
 * (size_t)-1 when it does not fit now.  The free space runs from tail to
 * the oldest record's data, going round.
 */
static size_t arena_fit(const struct pool *p, size_t bytes, size_t *take)
{
	size_t head = (p->tail + ARENA - p->used % ARENA) % ARENA;

	if (bytes > ARENA)
		return (size_t)-1;
	if (p->used == 0) {
		*take = bytes;
		return 0;
	}
	if (head < p->tail || (head == p->tail && p->used == ARENA)) {
		/* [tail, ARENA) and [0, head) are free */
		if (head == p->tail)
			return (size_t)-1;
		if (ARENA - p->tail >= bytes) {
			*take = bytes;
			return p->tail;
		}
		if (head >= bytes) {
			*take = ARENA - p->tail + bytes;
			return 0;
		}
		return (size_t)-1;
	}
	/* [tail, head) is free */
	if (head - p->tail >= bytes) {
		*take = bytes;
		return p->tail;
	}
	return (size_t)-1;
}

bool pool_has_room(const struct pool *p, unsigned int records, size_t bytes,
		   bool holds_fds)
{
	size_t take;

	if (p->count + records > POOL_RECORDS || (holds_fds && p->fd_jobs >= p->fd_max))
		return false;
	return arena_fit(p, bytes, &take) != (size_t)-1;
}

unsigned char *pool_reserve(struct pool *p, struct job *j, size_t bytes)
{
	size_t off = arena_fit(p, bytes, &j->taken);

	assert(off != (size_t)-1);
	p->tail = (off + bytes) % ARENA;
	p->used += j->taken;
	return p->arena + off;
}

void pool_unreserve(struct pool *p, struct job *j)
{
	/* The newest room: the tail goes back to where it was. */
	p->used -= j->taken;
	p->tail = (p->tail + ARENA - j->taken) % ARENA;
	if (p->used == 0)
		p->tail = 0;
	j->taken = 0;
}

void pool_submit(struct pool *p, struct job *j)
{
	j->state = J_QUEUED;
	if (j->kind == JOB_FILE || j->kind == JOB_STREAMED)
		j->holds_fds = true;
	pthread_mutex_lock(&p->mu);
	assert(p->count < POOL_RECORDS);
	p->ring[(p->head + p->count) % POOL_RECORDS] = j;
	p->count++;
	if (j->holds_fds)
		p->fd_jobs++;
	if (j->kind == JOB_NOTHING && p->started == p->count - 1) {
		/* Nothing for a writer to do. */
		j->state = J_DONE;
		p->started++;
	} else if (p->idle > 0 && p->count - p->started >= WAKE_BATCH) {
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->mu);
}

/* ---- a record written again, alone ------------------------------------------ */

/* Wait, with the lock held, until no writer works on a record from the
 * FROMth oldest on. */
static void wait_idle(struct pool *p, unsigned int from)
{
	for (;;) {
		bool busy = false;

		for (unsigned int i = from; i < p->started; i++)
			if (p->ring[(p->head + i) % POOL_RECORDS]->state == J_RUNNING)
				busy = true;
		if (!busy)
			return;
		p->waiting = true;
		pthread_cond_wait(&p->done, &p->mu);
		p->waiting = false;
	}
}

/* What a full destination gives: the file's data, a temporary or an
 * xattr found no room.  Only a file whose data is all in the ring and a
 * chunk can be written again; a large file's record comes behind chunks
 * already given back. */
static bool short_of_room(const struct job *j)
{
	if (j->kind != JOB_FILE && j->kind != JOB_CHUNK)
		return false;
	return j->o.err == ENOSPC || j->o.err == EDQUOT ||
	       j->meta.err == ENOSPC || j->meta.err == EDQUOT;
}

/* Did a writer write anything behind the oldest record? */
static bool written_behind(const struct pool *p)
{
	for (unsigned int i = 1; i < p->started; i++) {
		const struct job *j = p->ring[(p->head + i) % POOL_RECORDS];

		if (j->kind == JOB_FILE || j->kind == JOB_CHUNK)
			return true;
	}
	return false;
}

/* A record as it was before a writer took it. */
static void unwrite(struct job *j)
{
	if (j->kind == JOB_CHUNK) {
		if (j->file->failed_at == j->offset + 1) {
			j->file->o = ok(SE_CREATED);
			j->file->failed_at = 0;
		}
	} else if (j->kind == JOB_FILE) {
		/* Its data is in the ring (a file whose data went straight
		 * to its temporary was not written by a writer). */
		if (j->data && j->fd >= 0)
			(void)!ftruncate(j->fd, 0);
		j->meta = (struct outcome){ 0 };
	} else {
		return;
	}
	j->o = ok(SE_CREATED);
}

/*
 * The records behind the oldest that a writer took give their room back
 * and are queued again.  A file's chunks come one after the other by
 * offset, so the first one here ends the file where it begins (what the
 * file's chunks before it wrote stays).  Writers paused, none running.
 * Inodes of temporaries made stay: a destination out of inodes, not of
 * blocks, can still stop at a later file than --jobs=1.
 */
static void rewind_behind(struct pool *p)
{
	int ended = -1;

	for (unsigned int i = 1; i < p->started; i++) {
		struct job *j = p->ring[(p->head + i) % POOL_RECORDS];

		if (j->kind == JOB_CHUNK && j->fd != ended) {
			(void)!ftruncate(j->fd, (off_t)j->offset);
			ended = j->fd;
		}
		unwrite(j);
		j->state = J_QUEUED;
	}
	p->started = 1;
}

/* The oldest record failed for want of room while a writer wrote records
 * behind it: it is written again once they gave their room back, here,
 * alone; they are written again after it.  Called with the lock held. */
static void write_alone(struct pool *p, struct job *j)
{
	p->paused = true;
	wait_idle(p, 1);
	rewind_behind(p);
	pthread_mutex_unlock(&p->mu);
	unwrite(j);
	job_write(p, j);
	pthread_mutex_lock(&p->mu);
	p->paused = false;
	if (p->idle > 0 && p->started < p->count)
		pthread_cond_broadcast(&p->work);
}

struct job *pool_next(struct pool *p, bool wait)
{
	struct job *j;

	pthread_mutex_lock(&p->mu);
	while (p->count > 0 && p->ring[p->head]->state != J_DONE && wait) {
		/* Records not taken yet while writers sleep: wake them all. */
		if (p->idle > 0 && p->started < p->count)
			pthread_cond_broadcast(&p->work);
		p->waiting = true;
		pthread_cond_wait(&p->done, &p->mu);
		p->waiting = false;
	}
	if (p->count == 0 || p->ring[p->head]->state != J_DONE) {
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	j = p->ring[p->head];
	if (!p->stopped && !*p->cancelled && short_of_room(j) && written_behind(p))
		write_alone(p, j);
	p->head = (p->head + 1) % POOL_RECORDS;
	p->count--;
	p->started--;
	if (j->holds_fds)
		p->fd_jobs--;
	p->used -= j->taken;
	j->taken = 0;
	if (p->used == 0)
		p->tail = 0;
	/* Room is given back on every path: an empty queue holds none. */
	assert(p->count > 0 || p->used == 0);
	pthread_mutex_unlock(&p->mu);
	return j;
}

void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->skip = true;
	p->stopped = true;
	p->paused = false;
	wait_idle(p, 0);
	/* What no writer took is done: it will not be written. */
	for (unsigned int i = p->started; i < p->count; i++) {
		struct job *j = p->ring[(p->head + i) % POOL_RECORDS];

		if (j->kind == JOB_FILE)
			j->o = fatal("interrupted", EINTR);
		j->state = J_DONE;
	}
	p->started = p->count;
	p->skip = false;
	pthread_mutex_unlock(&p->mu);
}

/* ---- names in flight ------------------------------------------------------ */

static void count_key(struct map *m, const char *key, int delta)
{
	size_t v = map_get(m, key);

	v = v == MAP_NONE ? 0 : v;
	if (delta < 0 && v <= 1)
		map_del(m, key);
	else
		map_put(m, key, v + (size_t)delta);
}

void pool_name(struct pool *p, const char *path, int delta)
{
	char buf[SE_PATH_MAX];
	size_t len = strlen(path);

	count_key(&p->names, path, delta);
	if (len >= sizeof(buf))
		return;
	memcpy(buf, path, len + 1);
	for (char *s = buf + len; s > buf; s--) {
		if (*s != '/')
			continue;
		*s = '\0';
		count_key(&p->above, buf, delta);
	}
}

bool pool_touches(const struct pool *p, const char *path)
{
	char buf[SE_PATH_MAX];
	size_t len = strlen(path);

	if (map_get(&p->names, path) != MAP_NONE || map_get(&p->above, path) != MAP_NONE)
		return true;
	if (len >= sizeof(buf))
		return true;
	memcpy(buf, path, len + 1);
	for (char *s = buf + len; s > buf; s--) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (map_get(&p->names, buf) != MAP_NONE)
			return true;
	}
	return false;
}

void pool_object(struct pool *p, const char *key, int delta)
{
	count_key(&p->objects, key, delta);
}

bool pool_has_object(const struct pool *p, const char *key)
{
	return map_get(&p->objects, key) != MAP_NONE;
}
