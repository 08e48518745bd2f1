/*
 * fill.c - an entry's data into its sink: the one loop, and the sinks
 * that need nothing above this module.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fill.h"
#include "sha256.h"

int pwrite_all(int fd, const void *buf, size_t n, uint64_t offset)
{
	const unsigned char *p = buf;

	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, (off_t)offset);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
		offset += (uint64_t)w;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- the sinks ---------------------------------------------------------- */

static int fd_put(struct sink *s, uint64_t off, const void *p, size_t n)
{
	return pwrite_all(((struct fd_sink *)s)->fd, p, n, off);
}

/* A sparse file ending in a hole: the size comes from the header. */
static int fd_end(struct sink *s, uint64_t end, int64_t size)
{
	if (size > 0 && (uint64_t)size > end &&
	    ftruncate(((struct fd_sink *)s)->fd, (off_t)size) < 0)
		return errno;
	return 0;
}

void fd_sink_init(struct fd_sink *fs, int fd)
{
	*fs = (struct fd_sink){ { fd_put, fd_end }, fd };
}

static int stream_zeros(struct stream_sink *ss, uint64_t to)
{
	static const char zero[4096];

	while (ss->pos < to) {
		uint64_t n = to - ss->pos;
		int err = write_all(ss->fd, zero, n < sizeof(zero) ? (size_t)n : sizeof(zero));

		if (err)
			return err;
		ss->pos += n < sizeof(zero) ? n : sizeof(zero);
	}
	return 0;
}

static int stream_put(struct sink *s, uint64_t off, const void *p, size_t n)
{
	struct stream_sink *ss = (struct stream_sink *)s;
	int err = stream_zeros(ss, off);

	if (err)
		return err;
	err = write_all(ss->fd, p, n);
	if (!err)
		ss->pos += n;
	return err;
}

static int stream_end(struct sink *s, uint64_t end, int64_t size)
{
	struct stream_sink *ss = (struct stream_sink *)s;

	return size > 0 ? stream_zeros(ss, (uint64_t)size) : 0;
}

void stream_sink_init(struct stream_sink *ss, int fd)
{
	*ss = (struct stream_sink){ { stream_put, stream_end }, fd, 0 };
}

static int buf_put(struct sink *s, uint64_t off, const void *p, size_t n)
{
	struct buf_sink *bs = (struct buf_sink *)s;

	if (!bs->spilled && off + n > bs->size) {
		int err;

		if (bs->spill_fd < 0)
			return SINK_PAST_SIZE;
		err = pwrite_all(bs->spill_fd, bs->buf, bs->filled, 0);
		if (err)
			return err;
		bs->spilled = true;
	}
	if (bs->spilled)
		return pwrite_all(bs->spill_fd, p, n, off);
	if (n == 0)
		return 0;	/* an empty block may have no buffer */
	if (off > bs->filled)
		memset(bs->buf + bs->filled, 0, (size_t)off - bs->filled);
	memcpy(bs->buf + off, p, n);
	if (off + n > bs->filled)
		bs->filled = (size_t)off + n;
	return 0;
}

static int buf_end(struct sink *s, uint64_t end, int64_t size)
{
	struct buf_sink *bs = (struct buf_sink *)s;

	if (bs->spilled) {
		if (size > 0 && (uint64_t)size > end &&
		    ftruncate(bs->spill_fd, (off_t)size) < 0)
			return errno;
		return 0;
	}
	if (bs->filled < bs->size)
		memset(bs->buf + bs->filled, 0, bs->size - bs->filled);
	bs->filled = bs->size;
	return 0;
}

void buf_sink_init(struct buf_sink *bs, unsigned char *buf, size_t size, int spill_fd)
{
	*bs = (struct buf_sink){ { buf_put, buf_end }, buf, size, 0, spill_fd, false };
}

/* ---- the loop ----------------------------------------------------------- */

static const char *archive_msg(struct archive *a)
{
	const char *msg = archive_error_string(a);

	if (msg)
		return msg;
	return archive_errno(a) > 0 ? strerror(archive_errno(a)) :
	       "damaged or truncated (no detail from libarchive)";
}

static struct outcome sink_failed(int err)
{
	if (err == ECANCELED)
		return fatal("stopped", ECANCELED);
	if (err == SINK_PAST_SIZE)
		return fail("data longer than the member's size", EFBIG);
	return write_failed("cannot write data", err);
}

struct outcome fill(struct archive *a, int64_t size, struct sink *s, bool digest,
		    volatile sig_atomic_t *cancelled, struct fill_result *r)
{
	uint64_t end = 0;
	struct block_digest dg;
	int err;

	r->bytes = 0;
	r->have_digest = false;
	/* The digest covers the content as written, holes as zeros. */
	block_digest_init(&dg, digest);
	for (;;) {
		const void *buf;
		size_t n;
		la_int64_t offset;
		int st;

		if (*cancelled)
			return fatal("interrupted", EINTR);
		st = archive_read_data_block(a, &buf, &n, &offset);
		if (st == ARCHIVE_EOF)
			break;
		if (st < ARCHIVE_OK || offset < 0) {
			struct outcome o;

			snprintf(r->reason, sizeof(r->reason), "%s%s",
				 st == ARCHIVE_WARN ? "data damaged: " : "",
				 archive_msg(a));
			o = fail(r->reason, 0);
			o.fatal = st < ARCHIVE_WARN;
			return o;
		}
		block_digest_add(&dg, (uint64_t)offset, buf, n);
		err = s->put(s, (uint64_t)offset, buf, n);
		if (err)
			return *cancelled && err == EINTR ? fatal("interrupted", EINTR) :
			       sink_failed(err);
		r->bytes += n;
		if ((uint64_t)offset + n > end)
			end = (uint64_t)offset + n;
	}
	err = s->end(s, end, size);
	if (err) {
		struct outcome o = write_failed("cannot set size", err);

		return o;
	}
	if (digest)
		r->have_digest = block_digest_final(&dg, size > 0 && (uint64_t)size > end ?
						    (uint64_t)size : end, r->digest);
	return ok(SE_CREATED);
}
