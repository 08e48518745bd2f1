/*
 * decode.c - the compressed stream, decoded in a thread of its own while
 * the run writes: gzip member by member through gunzip.c (Intel ISA-L, or
 * zlib in a build without it; every member's CRC32 and size checked),
 * xz through liblzma's multi-threaded decoder, zstd through libzstd.
 *
 * With one job (se_run_set_jobs), the same decoders run in the caller's
 * thread, one block at a time, and no thread is started.
 *
 * libarchive then sees plain bytes and only parses the format.  Its own
 * decoders run in the thread that writes, so decoding and writing took
 * turns; here they overlap, and xz uses every CPU.  Decoded data is handed
 * over in a small ring of buffers: memory stays bounded whatever the
 * archive's size.
 */
#include "config.h"

#include <errno.h>
#include <lzma.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "decode.h"
#include "gunzip.h"

#define RING 4			/* buffers between the threads */
#define OUT_BLOCK (256 * 1024)	/* each of them */
#define IN_BLOCK (128 * 1024)	/* raw input read at a time */

struct decoder {
	enum dec_kind kind;
	dec_raw_fn *raw;
	void *raw_ctx;
	volatile sig_atomic_t *cancelled;

	/* The decoder thread's side. */
	pthread_t thread;
	bool running;
	unsigned char in[IN_BLOCK];
	bool raw_eof;
	struct gunzip *gz;
	const unsigned char *gz_next;	/* raw input gz has not taken */
	size_t gz_avail;
	bool gz_done;
	lzma_stream xs;
	bool xs_init;
	ZSTD_DStream *zd;
	ZSTD_inBuffer zin;
	size_t zlast;			/* 0 when the last frame is complete */
	uint64_t produced;		/* decoded bytes handed on so far */
	/* Decoded bytes that a check has covered (a gzip member's trailer,
	 * a zstd frame's end, the end of an xz stream): written by the
	 * decoding thread, read by the run's (decode_verified). */
	uint64_t verified;
	uint64_t ver_read;		/* the reader's: as of its last block */

	/* Shared, under mu. */
	pthread_mutex_t mu;
	pthread_cond_t filled, freed;
	unsigned char *buf[RING];
	size_t len[RING];
	uint64_t ver[RING];		/* "verified" when each was filled */
	unsigned head, count;		/* filled buffers from head */
	bool held;			/* buf[head] is with the reader */
	bool eof, failed, stop;
	int err;
	char msg[256];
};

enum dec_kind decode_sniff(const unsigned char *b, size_t n)
{
	static const unsigned char xz[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	static const unsigned char zst[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return DEC_GZIP;
	if (n >= sizeof(xz) && memcmp(b, xz, sizeof(xz)) == 0)
		return DEC_XZ;
	if (n >= sizeof(zst) && memcmp(b, zst, sizeof(zst)) == 0)
		return DEC_ZSTD;
	return DEC_NONE;
}

const char *decode_name(enum dec_kind k)
{
	switch (k) {
	case DEC_GZIP: return "gzip";
	case DEC_XZ: return "xz";
	case DEC_ZSTD: return "zstd";
	default: return "none";
	}
}

/* Everything decoded up to OUT's position AT has passed a check. */
static void checked(struct decoder *d, const unsigned char *out, const unsigned char *at)
{
	__atomic_store_n(&d->verified, d->produced + (uint64_t)(at - out), __ATOMIC_RELEASE);
}

/* The decoder thread's error, for the reader to find after the data. */
static ssize_t failure(struct decoder *d, int err, const char *what,
		       const char *detail)
{
	d->err = err;
	snprintf(d->msg, sizeof(d->msg), "%s%s%s", what, detail ? ": " : "",
		 detail ? detail : "");
	return -1;
}

/* More raw input into d->in: its length, 0 at the end, -1 on error. */
static ssize_t refill(struct decoder *d)
{
	const char *msg = NULL;
	int err = 0;
	ssize_t n = d->raw(d->raw_ctx, d->in, sizeof(d->in), &err, &msg);

	if (n < 0)
		return failure(d, err ? err : EIO, msg ? msg : "cannot read the archive",
			       NULL);
	if (n == 0)
		d->raw_eof = true;
	return n;
}

/*
 * gzip: members one after the other (gzip -c a b), then nothing but the
 * zero padding of a tape record.  gunzip.c checks each member's header
 * and trailer; the stream around the members is judged here, alike for
 * either inflater.
 */
static ssize_t gz_produce(struct decoder *d, unsigned char *out, size_t cap)
{
	unsigned char *next_out = out;
	size_t room = cap;

	while (!d->gz_done && room > 0) {
		enum gunzip_status st;
		size_t room_before = room, in_before;
		const char *msg = NULL;
		int err = 0;

		if (d->gz_avail == 0 && !d->raw_eof) {
			ssize_t n = refill(d);

			if (n < 0)
				return -1;
			d->gz_next = d->in;
			d->gz_avail = (size_t)n;
		}
		in_before = d->gz_avail;
		st = gunzip_inflate(d->gz, &d->gz_next, &d->gz_avail, &next_out, &room,
				    &err, &msg);
		if (st == GUNZIP_ERROR)
			return failure(d, err, "gzip", msg);
		if (st == GUNZIP_MEMBER_END) {
			checked(d, out, next_out);
			for (;;) {
				ssize_t n;

				while (d->gz_avail > 0 && d->gz_next[0] == 0) {
					d->gz_next++;
					d->gz_avail--;
				}
				if (d->gz_avail > 0 || d->raw_eof)
					break;
				n = refill(d);
				if (n < 0)
					return -1;
				d->gz_next = d->in;
				d->gz_avail = (size_t)n;
			}
			if (d->gz_avail == 0)
				d->gz_done = true;
			else if (d->gz_next[0] == 0x1f)
				gunzip_next_member(d->gz);
			else
				return failure(d, EILSEQ, "gzip: data after the last member", NULL);
		} else if (in_before == 0 && d->raw_eof && room == room_before) {
			/* No input is left and none will come, and the member
			 * is not over: it was cut short. */
			return failure(d, EILSEQ, "gzip: truncated input", NULL);
		}
	}
	return (ssize_t)(cap - room);
}

static const char *lzma_msg(lzma_ret r)
{
	switch (r) {
	case LZMA_MEM_ERROR: return "out of memory";
	case LZMA_MEMLIMIT_ERROR: return "needs more memory than the decoder's limit";
	case LZMA_FORMAT_ERROR: return "not xz data (or data after the last stream)";
	case LZMA_OPTIONS_ERROR: return "unsupported options";
	case LZMA_DATA_ERROR: return "damaged data";
	case LZMA_BUF_ERROR: return "truncated input";
	default: return "damaged data";
	}
}

/* xz: concatenated streams and their padding; every block's check is
 * verified by liblzma. */
static ssize_t xz_produce(struct decoder *d, unsigned char *out, size_t cap)
{
	lzma_stream *xs = &d->xs;

	xs->next_out = out;
	xs->avail_out = cap;
	while (xs->avail_out > 0) {
		lzma_ret r;

		if (xs->avail_in == 0 && !d->raw_eof) {
			ssize_t n = refill(d);

			if (n < 0)
				return -1;
			xs->next_in = d->in;
			xs->avail_in = (size_t)n;
		}
		r = lzma_code(xs, d->raw_eof ? LZMA_FINISH : LZMA_RUN);
		/* liblzma checks each block but does not say where one ends:
		 * only the end of the whole input is a verified point. */
		if (r == LZMA_STREAM_END) {
			checked(d, out, xs->next_out);
			break;
		}
		if (r != LZMA_OK)
			return failure(d, r == LZMA_MEM_ERROR ? ENOMEM : EILSEQ,
				       "xz", lzma_msg(r));
	}
	return (ssize_t)(cap - xs->avail_out);
}

/* zstd: frames one after the other; each frame's checksum, when it has
 * one, is verified by libzstd. */
static ssize_t zstd_produce(struct decoder *d, unsigned char *out, size_t cap)
{
	ZSTD_outBuffer zout = { out, cap, 0 };

	while (zout.pos < zout.size) {
		size_t r;

		if (d->zin.pos == d->zin.size) {
			ssize_t n;

			if (d->raw_eof) {
				if (d->zlast != 0)
					return failure(d, EILSEQ, "zstd: truncated input", NULL);
				break;
			}
			n = refill(d);
			if (n < 0)
				return -1;
			d->zin = (ZSTD_inBuffer){ d->in, (size_t)n, 0 };
			if (n == 0)
				continue;
		}
		r = ZSTD_decompressStream(d->zd, &zout, &d->zin);
		if (ZSTD_isError(r))
			return failure(d, EILSEQ, "zstd", ZSTD_getErrorName(r));
		d->zlast = r;
		if (r == 0)	/* a frame ended, its checksum (if any) matched */
			checked(d, out, out + zout.pos);
	}
	return (ssize_t)zout.pos;
}

static ssize_t produce(struct decoder *d, unsigned char *out, size_t cap)
{
	ssize_t n;

	switch (d->kind) {
	case DEC_GZIP: n = gz_produce(d, out, cap); break;
	case DEC_XZ: n = xz_produce(d, out, cap); break;
	case DEC_ZSTD: n = zstd_produce(d, out, cap); break;
	default: return failure(d, EINVAL, "no decoder", NULL);
	}
	if (n > 0)
		d->produced += (uint64_t)n;
	else if (n == 0)	/* the end: complete and checked */
		checked(d, out, out);
	return n;
}

/* The reader's view moves with the blocks it takes, never with how far
 * the thread has got: the same input gives the same answers after each
 * block, with or without a thread (--jobs=N reports as --jobs=1). */
uint64_t decode_verified(struct decoder *d)
{
	return d->ver_read;
}

static void *decoder_main(void *arg)
{
	struct decoder *d = arg;

	for (;;) {
		unsigned slot;
		ssize_t n;

		pthread_mutex_lock(&d->mu);
		while (d->count == RING && !d->stop)
			pthread_cond_wait(&d->freed, &d->mu);
		if (d->stop) {
			pthread_mutex_unlock(&d->mu);
			break;
		}
		slot = (d->head + d->count) % RING;
		pthread_mutex_unlock(&d->mu);

		n = *d->cancelled ? failure(d, EINTR, "interrupted", NULL) :
		    produce(d, d->buf[slot], OUT_BLOCK);

		pthread_mutex_lock(&d->mu);
		if (n < 0) {
			d->failed = true;
		} else if (n == 0) {
			d->eof = true;
		} else {
			d->len[slot] = (size_t)n;
			d->ver[slot] = __atomic_load_n(&d->verified, __ATOMIC_RELAXED);
			d->count++;
		}
		pthread_cond_signal(&d->filled);
		pthread_mutex_unlock(&d->mu);
		if (n <= 0)
			break;
	}
	return NULL;
}

static void decoder_free(struct decoder *d)
{
	if (d->gz)
		gunzip_free(d->gz);
	if (d->xs_init)
		lzma_end(&d->xs);
	if (d->zd)
		ZSTD_freeDStream(d->zd);
	for (int i = 0; i < RING; i++)
		free(d->buf[i]);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->filled);
	pthread_cond_destroy(&d->freed);
	free(d);
}

int decode_start(struct decoder **out, const struct decode_opts *o,
		 const unsigned char *first, size_t n, char *msg, size_t msgsize)
{
	struct decoder *d = calloc(1, sizeof(*d));
	int err = 0;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	if (n > sizeof(d->in))
		n = sizeof(d->in);
	d->kind = o->kind;
	d->raw = o->raw;
	d->raw_ctx = o->raw_ctx;
	d->cancelled = o->cancelled;
	memcpy(d->in, first, n);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->filled, NULL);
	pthread_cond_init(&d->freed, NULL);
	for (int i = 0; i < RING; i++)
		if (!(d->buf[i] = malloc(OUT_BLOCK)))
			err = ENOMEM;

	switch (d->kind) {
	case DEC_GZIP:
		if (!err && gunzip_new(&d->gz) < 0)
			err = ENOMEM;
		d->gz_next = d->in;
		d->gz_avail = n;
		break;
	case DEC_XZ: {
		lzma_mt mt = {
			.flags = LZMA_CONCATENATED,
			.threads = o->threads ? o->threads : 1,
			/* Blocks are decoded in parallel only while their
			 * buffers fit under memlimit_threading; above it the
			 * decoder goes on in one thread.  memlimit_stop
			 * refuses a stream that would need more than that
			 * even alone (a header asking for a huge
			 * dictionary). */
			.memlimit_threading = o->memlimit,
			.memlimit_stop = o->memlimit_stop,
		};
		lzma_ret r = LZMA_OK;

		d->xs = (lzma_stream)LZMA_STREAM_INIT;
		if (!err)
			r = lzma_stream_decoder_mt(&d->xs, &mt);
		if (!err && r != LZMA_OK) {
			snprintf(msg, msgsize, "xz: cannot start the decoder: %s", lzma_msg(r));
			err = r == LZMA_MEM_ERROR ? ENOMEM : EINVAL;
		}
		d->xs_init = !err;
		d->xs.next_in = d->in;
		d->xs.avail_in = n;
		break;
	}
	case DEC_ZSTD:
		if (!err && !(d->zd = ZSTD_createDStream()))
			err = ENOMEM;
		/* A window of at most 2^27 bytes (zstd's own default limit):
		 * a frame asking for more is refused, not allocated. */
		if (!err)
			ZSTD_DCtx_setParameter(d->zd, ZSTD_d_windowLogMax, 27);
		d->zin = (ZSTD_inBuffer){ d->in, n, 0 };
		d->zlast = 1;
		break;
	default:
		err = EINVAL;
	}
	if (!err && o->thread) {
		/* The thread takes no signals: the caller's handlers run
		 * where they would without it. */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&d->thread, NULL, decoder_main, d);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		d->running = !err;
	}
	if (err) {
		if (!msg[0])
			snprintf(msg, msgsize, "%s: cannot start the decoder: %s",
				 decode_name(d->kind), strerror(err));
		decoder_free(d);
		return -err;
	}
	*out = d;
	return 0;
}

ssize_t decode_read(struct decoder *d, const void **buf, int *err,
		    const char **msg)
{
	ssize_t n = 0;

	/* At the end too: a caller may copy 0 bytes from it, and memcpy
	 * from an unset pointer is undefined even then (UBSan caught
	 * input.c's layer_read on a .tar.gz.gz decoded in threads). */
	*buf = d->buf[0];
	if (!d->running) {
		/* One thread: decode the next block here. */
		if (d->eof)
			return 0;
		n = *d->cancelled ? failure(d, EINTR, "interrupted", NULL) :
		    produce(d, d->buf[0], OUT_BLOCK);
		if (n < 0) {
			*err = d->err;
			*msg = d->msg;
		} else if (n == 0) {
			d->eof = true;
		}
		d->ver_read = __atomic_load_n(&d->verified, __ATOMIC_ACQUIRE);
		*buf = d->buf[0];
		return n;
	}
	pthread_mutex_lock(&d->mu);
	if (d->held) {
		d->head = (d->head + 1) % RING;
		d->count--;
		d->held = false;
		pthread_cond_signal(&d->freed);
	}
	while (d->count == 0 && !d->eof && !d->failed) {
		/* The run's cancel comes from a signal handler, which cannot
		 * signal a condition variable: look at it now and then. */
		struct timespec t;

		if (*d->cancelled) {
			pthread_mutex_unlock(&d->mu);
			*err = EINTR;
			*msg = "interrupted";
			return -1;
		}
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 50 * 1000 * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&d->filled, &d->mu, &t);
	}
	if (d->count > 0) {
		*buf = d->buf[d->head];
		n = (ssize_t)d->len[d->head];
		d->ver_read = d->ver[d->head];
		d->held = true;
	} else {
		/* The thread is done: where its checks ended. */
		d->ver_read = __atomic_load_n(&d->verified, __ATOMIC_ACQUIRE);
		if (d->failed) {
			*err = d->err;
			*msg = d->msg;
			n = -1;
		}
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

void decode_end(struct decoder *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_signal(&d->freed);
	pthread_mutex_unlock(&d->mu);
	/* The thread may be waiting for input: the caller has woken its raw
	 * reader (decode.h). */
	if (d->running)
		pthread_join(d->thread, NULL);
	decoder_free(d);
}
