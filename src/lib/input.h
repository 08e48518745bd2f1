/*
 * input.h - the archive's bytes: readers that wake up on cancel, decode
 * gzip, xz and zstd themselves with every check (decode.c), however the
 * stream starts and however many times it is wrapped, and read only the
 * formats asked for.
 */
#ifndef SAFE_EXTRACT_INPUT_H
#define SAFE_EXTRACT_INPUT_H

#include <archive.h>
#include <archive_entry.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"

struct source;

struct input {
	volatile sig_atomic_t *cancelled;	/* the run's flag */
	int cancel_fd;			/* readable once cancelled, or -1 */
	unsigned int jobs;		/* > 1: decode in a thread of its own */
	uint64_t xz_memlimit, xz_memlimit_stop;
	bool ignore_zeros;		/* tar -i */
	uint64_t bytes;			/* read by the newest reader so far */
	struct source *cur;		/* the newest reader, while open */
	struct source *all;		/* every reader open */
};

/* A reader of FD for FORMATS (NULL: the default list).  0, or -errno with
 * MSG saying why. */
int input_open_fd(struct input *in, int fd, const char *formats,
		  struct archive **ap, char *msg, size_t msgsize);
/* A reader of SIZE bytes of FD from OFFSET (pread: FD's own offset is
 * not used; a regular file) as one image layer: a tar archive compressed
 * as KIND and nothing else (no other format, no libarchive filter, no
 * second compression), so that the stream applied is the one whose
 * digest the image's config names. */
int input_open_layer(struct input *in, int fd, uint64_t offset, uint64_t size,
		     enum dec_kind kind, struct archive **ap, char *msg, size_t msgsize);
/* A reader of member MEMBER (NULL: a package's data.tar*) of OUTER. */
int input_open_member(struct input *in, struct archive *outer, const char *member,
		      struct archive **ap, char *msg, size_t msgsize);
/* Is every name in LIST (comma-separated) a format?  An empty list is. */
bool input_formats_known(const char *list);
/*
 * archive_read_next_header() on A, a reader of this module or not; for
 * one of its tar readers, a pax entry's names then keep the archive's
 * bytes where libarchive's conversion composed them (issue 23; paxraw.h).
 */
int input_next_header(struct input *in, struct archive *a, struct archive_entry **e);
/*
 * The GNU.dumpdir record of the pax header of the entry A read last
 * (GNU tar --format=posix --listed-incremental: a directory's names), as
 * stored, NUL-terminated past *LEN; valid until A's next header.  0;
 * -ENOENT without one (or when the header could not be read again);
 * -EINVAL when A is not this module's newest reader.
 */
int input_dumpdir(const struct input *in, const struct archive *a, const char **buf,
		  size_t *len);
/* After the archive's last entry: check what is left of its stream (the
 * trailers).  0, or -errno with the archive's error set. */
int input_finish(struct input *in, struct archive *a);
/*
 * How many bytes of archive A's decoded stream a check has covered as of
 * the last block handed to libarchive (gzip members, zstd frames, the end
 * of an xz input); UINT64_MAX when no check is still to come (not a reader
 * of this module, no compression, or a stream checked to its end).  Its
 * entries whose data ends past that point (archive_filter_bytes(A, 0)),
 * in a stream that then fails, were written unverified.
 */
uint64_t input_verified(const struct input *in, const struct archive *a);
/* Why the newest reader's stream failed (a check, a truncation, a read),
 * or NULL. */
const char *input_failure(const struct input *in);
/* Let go of the readers (they may outlive the run). */
void input_release(struct input *in);

#endif
