/*
 * fill.h - the one data loop: an entry's data from libarchive into a sink,
 * with one error policy, the digest and the byte count.
 *
 * Error policy: a warning from libarchive while reading data (a zip or 7z
 * CRC mismatch, a member shorter than its size) fails the entry, which is
 * then not placed; any worse status stops the run; a write error fails the
 * entry and stops the run when the destination is unusable; a cancel stops
 * the run.
 */
#ifndef SAFE_EXTRACT_FILL_H
#define SAFE_EXTRACT_FILL_H

#include <archive.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outcome.h"

/* Where data goes.  PUT takes N bytes at OFFSET (0, an errno value, or
 * SINK_PAST_SIZE; ECANCELED: the run stopped while the sink waited for
 * room); END is told
 * the furthest byte written and the size the header gives (-1: none), to
 * make the tail a hole or zeros. */
/* PUT's answer when data goes past the size a sink was given: the archive
 * lies about the member's size.  Not an errno value, so that the kernel's
 * EFBIG (RLIMIT_FSIZE, the file system's limit) keeps its own message. */
#define SINK_PAST_SIZE (-1)

struct sink {
	int (*put)(struct sink *s, uint64_t offset, const void *p, size_t n);
	int (*end)(struct sink *s, uint64_t end, int64_t size);
};

/* An fd of the temporary: pwrite at each offset, holes stay holes. */
struct fd_sink {
	struct sink s;
	int fd;
};
void fd_sink_init(struct fd_sink *fs, int fd);

/* A stream (tar -O): written in order, holes written as zeros. */
struct stream_sink {
	struct sink s;
	int fd;
	uint64_t pos;
};
void stream_sink_init(struct stream_sink *ss, int fd);

/* A buffer of exactly SIZE bytes for a writer thread, holes as zeros.
 * Data past SIZE (a damaged header) is not held in memory: what came so
 * far and the rest go into SPILL_FD (-1: such data fails the entry), and
 * SPILLED says so. */
struct buf_sink {
	struct sink s;
	unsigned char *buf;
	size_t size, filled;
	int spill_fd;
	bool spilled;
};
void buf_sink_init(struct buf_sink *bs, unsigned char *buf, size_t size, int spill_fd);

struct fill_result {
	uint64_t bytes;			/* data bytes written */
	bool have_digest;
	unsigned char digest[32];	/* SHA-256 of the content, holes as zeros */
	char reason[REASON_MAX];
};

/*
 * Read the current entry's data from A into S.  SIZE: the header's size
 * (-1: unknown); DIGEST: compute the SHA-256.  CANCELLED: the run's flag.
 */
struct outcome fill(struct archive *a, int64_t size, struct sink *s, bool digest,
		    volatile sig_atomic_t *cancelled, struct fill_result *r);

/* Write N bytes at OFFSET into FD: 0 or an errno value. */
int pwrite_all(int fd, const void *p, size_t n, uint64_t offset);

#endif
