/*
 * write-file.c - regular files: data into a new temporary, renamed over
 * the name.
 */
#include "config.h"

#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "write.h"


/* ---- regular files ---------------------------------------------------- */

bool linked_has(se_run *run, const struct stat *st)
{
	for (size_t i = run->n_linked; i-- > 0;)
		if (run->linked[i].dev == st->st_dev && run->linked[i].ino == st->st_ino)
			return true;
	return false;
}


void linked_add(se_run *run, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	if (run->n_linked == run->cap_linked) {
		size_t cap = run->cap_linked ? run->cap_linked * 2 : 64;
		void *n = realloc(run->linked, cap * sizeof(*run->linked));

		if (!n)
			return;
		run->linked = n;
		run->cap_linked = cap;
	}
	run->linked[run->n_linked].dev = st.st_dev;
	run->linked[run->n_linked].ino = st.st_ino;
	run->n_linked++;
}


/* N zero bytes to the stream FD: 0 or an errno value. */
static int write_zeros(int fd, uint64_t n)
{
	static const char zero[4096];

	while (n > 0) {
		ssize_t w = write(fd, zero, n < sizeof(zero) ? (size_t)n : sizeof(zero));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		n -= (uint64_t)w;
	}
	return 0;
}

/*
 * Copy the entry's data into FD; holes in sparse entries stay holes.  A
 * warning from libarchive while reading data (a zip or 7z CRC mismatch, a
 * member shorter than its size field) fails the entry: the data is wrong,
 * and the caller drops the temporary instead of placing it.
 */
struct outcome copy_data(se_run *run, struct archive_entry *e,
				int fd)
{
	const void *buf;
	size_t size;
	la_int64_t offset, end = 0;
	/* The digest covers the content as written, holes as zeros. */
	bool digest = run->opts & SE_OPT_SHA256;
	bool stream = fd == run->data_fd;
	struct block_digest dg;
	int r;

	block_digest_init(&dg, digest);
	for (;;) {
		if (run->cancelled)
			return (struct outcome){ SE_FAILED, "interrupted", EINTR, true };
		r = archive_read_data_block(run->ar, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r == ARCHIVE_WARN) {
			snprintf(run->reason, sizeof(run->reason), "data damaged: %s",
				 run_archive_msg(run->ar));
			return fail(run->reason, 0);
		}
		if (r < ARCHIVE_WARN) {
			struct outcome o;

			snprintf(run->reason, sizeof(run->reason), "%s",
				 run_archive_msg(run->ar));
			o = fail(run->reason, 0);
			o.fatal = true;
			return o;
		}
		block_digest_add(&dg, (uint64_t)offset, buf, size);
		/* To a stream (tar -O), holes are written as zeros. */
		if (stream && end < offset) {
			int err = write_zeros(fd, (uint64_t)(offset - end));

			if (err)
				return (struct outcome){ SE_FAILED, "cannot write data", err, true };
		}
		while (size > 0) {
			ssize_t n = stream ? write(fd, buf, size) :
				    pwrite(fd, buf, size, offset);

			if (n < 0) {
				struct outcome o;

				if (errno == EINTR && !run->cancelled)
					continue;
				o = fail("cannot write data", errno);
				o.fatal = dest_unusable(errno) || errno == EINTR;
				return o;
			}
			buf = (const char *)buf + n;
			size -= (size_t)n;
			offset += n;
			run->bytes += (uint64_t)n;
			run->entry_bytes += (uint64_t)n;
		}
		if (offset > end)
			end = offset;
	}
	/* A sparse file ending in a hole: the size comes from the header. */
	if (stream && archive_entry_size_is_set(e) && archive_entry_size(e) > end) {
		int err = write_zeros(fd, (uint64_t)(archive_entry_size(e) - end));

		if (err)
			return (struct outcome){ SE_FAILED, "cannot write data", err, true };
	} else if (archive_entry_size_is_set(e) && archive_entry_size(e) > end &&
	    ftruncate(fd, archive_entry_size(e)) < 0) {
		struct outcome o = fail("cannot set size", errno);

		o.fatal = dest_unusable(errno);
		return o;
	}
	if (digest)
		run->have_digest = block_digest_final(&dg, (uint64_t)(
			archive_entry_size_is_set(e) && archive_entry_size(e) > end ?
			archive_entry_size(e) : end), run->digest);
	return ok(SE_CREATED);
}


/* Write N bytes at OFFSET into FD: 0 or an errno value. */
int pwrite_all(int fd, const unsigned char *p, size_t n, off_t offset)
{
	while (n > 0) {
		ssize_t w = pwrite(fd, p, n, offset);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		n -= (size_t)w;
		offset += w;
	}
	return 0;
}

/*
 * The entry's data into BUF, for a writer thread (writers.c): SIZE bytes
 * as its header says, holes as zeros.  Data that runs past SIZE (a
 * damaged header) is not held in memory: what came so far and the rest
 * are written into FD here, and *DATA is NULL.  The outcomes are
 * copy_data()'s.
 */
struct outcome read_data(se_run *run, struct archive_entry *e, size_t size,
			 int fd, unsigned char *buf, unsigned char **data,
			 size_t *len)
{
	size_t end = 0;
	uint64_t direct = 0;	/* bytes written here, past the buffer */

	*data = NULL;
	*len = 0;
	for (;;) {
		const void *b;
		size_t n;
		la_int64_t offset;
		int r;

		if (run->cancelled)
			return (struct outcome){ SE_FAILED, "interrupted", EINTR, true };
		r = archive_read_data_block(run->ar, &b, &n, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_OK || offset < 0) {
			struct outcome o;

			snprintf(run->reason, sizeof(run->reason), "%s%s",
				 r == ARCHIVE_WARN ? "data damaged: " : "",
				 run_archive_msg(run->ar));
			o = fail(run->reason, 0);
			o.fatal = r < ARCHIVE_WARN;
			return o;
		}
		if (buf && (uint64_t)offset + n > size && fd < 0)
			return fail("data longer than the member's size", EFBIG);
		if (buf && (uint64_t)offset + n > size) {
			int err = pwrite_all(fd, buf, end, 0);

			buf = NULL;
			if (err) {
				struct outcome o = fail("cannot write data", err);

				o.fatal = dest_unusable(err);
				return o;
			}
			direct = end;
		}
		if (!buf) {
			int err = pwrite_all(fd, b, n, (off_t)offset);

			if (err) {
				struct outcome o = fail("cannot write data", err);

				o.fatal = dest_unusable(err);
				return o;
			}
			direct += n;
			if ((uint64_t)offset + n > end)
				end = (size_t)offset + n;
			continue;
		}
		if (n == 0)
			continue;	/* an empty block may have no buffer */
		if ((size_t)offset > end)
			memset(buf + end, 0, (size_t)offset - end);
		memcpy(buf + offset, b, n);
		if ((size_t)offset + n > end)
			end = (size_t)offset + n;
	}
	if (!buf) {
		run->bytes += direct;
		run->entry_bytes = direct;
		return ok(SE_CREATED);
	}
	if (end < size)
		memset(buf + end, 0, size - end);
	*data = buf;
	*len = size;
	return ok(SE_CREATED);
}


struct outcome write_regular(se_run *run, struct archive_entry *e,
			     const char *path)
{
	if (run->jobs > 1)
		return writers_regular(run, e, path);
	return write_regular_here(run, e, path);
}


struct outcome write_regular_here(se_run *run, struct archive_entry *e,
				  const char *path)
{
	struct owner_plan own = plan_owner(run, e);
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o, meta;
	const char *leaf;
	char tmp[32];
	int dirfd, fd;

	dirfd = entry_parent(run, e, path, &leaf, &o);
	if (dirfd < 0)
		return o;

	fd = create_tmp(run, dirfd, tmp, own.mode);
	if (fd < 0) {
		o = resolve_outcome(run, -fd);
		close(dirfd);
		return o;
	}
	live_tmp_set(run, dirfd, tmp);
	if (archive_entry_nlink(e) > 1)
		linked_add(run, fd);

	o = copy_data(run, e, fd);
	meta = ok(SE_CREATED);
	if (o.act == SE_CREATED) {
		attrs = entry_attrs(run, e, &own);
		entry_times(run, e, ts);
		/* The kernel applied the process's umask at creation. */
		meta = apply_fd_metadata(run->reason, fd, false, &own,
					 own.mode & 0777 & ~run->proc_umask, attrs, ts);
		attr_free(attrs);
	}
	if (close(fd) < 0 && o.act == SE_CREATED) {
		o = fail("cannot write data", errno);
		o.fatal = dest_unusable(o.err);
	}
	if (o.act != SE_CREATED) {
		unlinkat(dirfd, tmp, 0);
		live_tmp_clear(run);
		close(dirfd);
		return o;
	}

	if (run->opts & SE_OPT_DURABLE)
		o = queue_pending(run, dirfd, tmp, leaf, path,
				  archive_entry_pathname(e), "file");
	else
		o = place(run, dirfd, tmp, leaf, path);
	live_tmp_clear(run);
	close(dirfd);
	return merge(o, meta);
}
