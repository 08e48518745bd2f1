/*
 * decode.h - compressed input decoded in a thread beside the writing
 * (decode.c).
 */
#ifndef SAFE_EXTRACT_DECODE_H
#define SAFE_EXTRACT_DECODE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum dec_kind { DEC_NONE, DEC_GZIP, DEC_XZ, DEC_ZSTD };

/* Raw input: up to CAP bytes into BUF; 0 at the end; -1 with *ERR and
 * *MSG set on error.  Called from the decoder's thread only. */
typedef ssize_t dec_raw_fn(void *ctx, unsigned char *buf, size_t cap,
			   int *err, const char **msg);

struct decode_opts {
	enum dec_kind kind;
	dec_raw_fn *raw;
	void *raw_ctx;
	volatile sig_atomic_t *cancelled;	/* the run's cancel flag */
	bool thread;				/* decode in a thread of its own */
	unsigned int threads;			/* xz: decoder threads */
	uint64_t memlimit;			/* xz: above it, one thread */
	uint64_t memlimit_stop;			/* xz: above it, an error */
};

struct decoder;

/* The compression whose magic starts B, or DEC_NONE. */
enum dec_kind decode_sniff(const unsigned char *b, size_t n);
const char *decode_name(enum dec_kind k);
/* Start decoding: FIRST (N bytes, already read) comes before what the
 * raw reader gives.  0, or -errno with a message in MSG. */
int decode_start(struct decoder **d, const struct decode_opts *o,
		 const unsigned char *first, size_t n, char *msg, size_t msgsize);
/* The next decoded block (valid until the next call); 0 at the end of the
 * stream, which is complete and checked; -1 with *ERR and *MSG on error. */
ssize_t decode_read(struct decoder *d, const void **buf, int *err,
		    const char **msg);
/*
 * How many of the decoded bytes a check has covered so far: a gzip
 * member's CRC32 and size, a zstd frame's end (and checksum), the end of
 * an xz input (liblzma does not say where its checked blocks end).  After
 * decode_read failed, where the last good check left off.
 */
uint64_t decode_verified(struct decoder *d);
/* Stop the thread and free everything.  The raw reader must return soon:
 * wake it first. */
void decode_end(struct decoder *d);

#endif
