/*
 * input.c - the archive's bytes: a reader that wakes up on cancel, checks
 * every gzip trailer however the stream starts and however many times it
 * is wrapped, and reads only the formats asked for.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cabraw.h"
#include "decode.h"
#include "input.h"
#include "internal.h"
#include "isoraw.h"
#include "lharaw.h"
#include "map.h"
#include "paxraw.h"
#include "rarraw.h"
#include "szraw.h"
#include "xarraw.h"
#include "zipraw.h"

/*
 * The archive's bytes come through these callbacks rather than
 * archive_read_open_fd(), which retries a read() that a signal
 * interrupted: a cancel (SIGINT in the command) on a stalled pipe would
 * never be seen, and the temporary file of the entry being written would
 * stay behind.  se_run_cancel() writes to a pipe that the read waits on
 * next to the input.
 *
 * gzip, xz and zstd are decoded here (decode.c), in a thread beside the
 * writing, rather than by libarchive: its gzip reader does not check a
 * member's CRC32 and size trailer (a .tar.gz with a damaged stored block
 * extracted wrong data with exit 0), and its decoders take turns with the
 * writing in one thread.  libarchive's own gzip, xz and zstd filters are
 * never enabled, so no stream reaches them: the magic is looked for in
 * the first bytes however the input arrives (a pipe may give one byte at
 * a time), and a decoded stream that is compressed again (a .tar.gz.gz)
 * gets a decoder of its own, up to MAX_LAYERS deep.
 */
#define READ_BLOCK (128 * 1024)
#define MAGIC_MAX 6			/* the longest magic decode_sniff() reads */
#define MAX_LAYERS 3

/* One decoder of the stack, and what its last output block still holds. */
struct layer {
	struct source *s;
	struct decoder *dec;
	int index;
	const unsigned char *p;
	size_t n;
	bool eof;
};

struct source {
	int fd;
	struct archive *outer;		/* a member of this reader, instead of fd */
	bool seekable;
	off_t size;
	/* A range of fd (an image blob inside an archive): read with
	 * pread from pos, never before base or at or past end. */
	bool bounded;
	off_t base, pos, end;
	struct input *in;		/* NULL once the run has let go */
	struct source *next;		/* in in->all */
	struct archive *ar;		/* the reader it feeds */
	bool started;			/* the first block has been looked at */
	bool strict;			/* an image layer: tar, compressed as WANT only */
	enum dec_kind want;
	struct layer layer[MAX_LAYERS];	/* the decoders, innermost first */
	int n_layers;
	struct decoder *dec;		/* the outermost decoder, or NULL */
	bool dec_eof;			/* its last block was read */
	uint64_t verified;		/* decoded bytes a passed check covered */
	bool failed;			/* the stream failed (a check, a read) */
	char why[256];			/* and why */
	bool checked;			/* it had a decoder: checks to come */
	volatile sig_atomic_t stopping;	/* the decoder is being stopped */
	volatile sig_atomic_t never;	/* "not cancelled", without a run */
	int wake[2];			/* wakes the decoder's raw reads */
	/* The bytes libarchive may still be parsing as an entry's headers
	 * (raw_names()): the block it holds, which stays valid until the
	 * next read, and what it may need of the blocks before it. */
	const unsigned char *last;
	size_t last_n;
	uint64_t last_off;		/* the stream offset of last[0] */
	uint64_t off;			/* of the next byte handed over */
	struct paxraw_tail tail;
	bool in_header;			/* in input_next_header() */
	uint64_t hdr_floor;		/* where the stream stood when it began */
	uint64_t seek_floor;		/* where the last seek in a header went */
	/* A 7z archive's names as stored (raw_7z_names()), read at its
	 * first entry. */
	struct szraw_names sz;
	bool sz_read;
	/* A cabinet's names as stored (raw_cab_names()), read at its first
	 * entry. */
	struct cabraw_names cab;
	struct xarraw_names xar;
	/* An ISO 9660 image's Joliet records, looked up by where libarchive
	 * stands when it hands one out (raw_iso_names()). */
	struct isoraw_tree iso;
	struct map iso_keys;
	size_t *iso_next;		/* the next record of the same key */
	bool *iso_used;
	size_t iso_prev;		/* the record of the entry before */
	size_t iso_indexed;		/* records in iso_keys */
	bool iso_begun;
	/* The entry's GNU.dumpdir record as stored (input_dumpdir()). */
	char *dumpdir;
	size_t dumpdir_n, dumpdir_cap;
	bool has_dumpdir;
	unsigned char buf[READ_BLOCK];
};

static const char *archive_msg(struct archive *a)
{
	const char *msg = archive_error_string(a);

	if (msg)
		return msg;
	return archive_errno(a) > 0 ? strerror(archive_errno(a)) :
	       "damaged or truncated (no detail from libarchive)";
}

static bool stopping(const struct source *s)
{
	return (s->in && *s->in->cancelled) || s->stopping;
}

/* Read the next raw block of a member of the outer archive. */
static ssize_t member_read(struct source *s, unsigned char *buf, size_t cap,
			   int *err, const char **msg)
{
	la_ssize_t n;

	if (stopping(s)) {
		*err = EINTR;
		*msg = "interrupted";
		return -1;
	}
	n = archive_read_data(s->outer, buf, cap);
	if (n < 0) {
		*err = archive_errno(s->outer) > 0 ? archive_errno(s->outer) : EILSEQ;
		*msg = archive_msg(s->outer);
		return -1;
	}
	return n;
}

/* Read the next raw block of the range s->pos..s->end of s->fd. */
static ssize_t range_read(struct source *s, unsigned char *buf, size_t cap,
			  int *err, const char **msg)
{
	ssize_t n;

	if (stopping(s)) {
		*err = EINTR;
		*msg = "interrupted";
		return -1;
	}
	if (s->pos >= s->end)
		return 0;
	if ((off_t)cap > s->end - s->pos)
		cap = (size_t)(s->end - s->pos);
	do
		n = pread(s->fd, buf, cap, s->pos);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		*err = errno;
		*msg = "cannot read the archive";
		return -1;
	}
	/* The range was checked to lie in the file: it shrank under us. */
	if (n == 0) {
		*err = EILSEQ;
		*msg = "the archive ends before the blob does (it shrank while read)";
		return -1;
	}
	s->pos += n;
	return n;
}

/* Read the next raw block of the archive into BUF: in the run's thread,
 * or in the decoder's (which source_stop_decoder() wakes through
 * s->wake). */
static ssize_t raw_read(void *ctx, unsigned char *buf, size_t cap, int *err,
			const char **msg)
{
	struct source *s = ctx;

	if (s->outer)
		return member_read(s, buf, cap, err, msg);
	if (s->bounded)
		return range_read(s, buf, cap, err, msg);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = s->fd, .events = POLLIN },
			{ .fd = s->in ? s->in->cancel_fd : -1, .events = POLLIN },
			{ .fd = s->wake[0], .events = POLLIN },
		};
		ssize_t n;

		if (stopping(s)) {
			*err = EINTR;
			*msg = "interrupted";
			return -1;
		}
		if (!s->seekable && poll(p, 3, -1) < 0 && errno != EINTR) {
			*err = errno;
			*msg = "cannot wait for the archive";
			return -1;
		}
		if (stopping(s))
			continue;
		n = read(s->fd, buf, cap);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			*err = errno;
			*msg = "cannot read the archive";
			return -1;
		}
		return n;
	}
}

/* Copy up to CAP bytes of layer L's output into BUF: the raw reader of
 * the decoder above it. */
static ssize_t layer_read(void *ctx, unsigned char *buf, size_t cap, int *err,
			  const char **msg)
{
	struct layer *l = ctx;
	size_t k;

	while (l->n == 0 && !l->eof) {
		const void *p;
		ssize_t n = decode_read(l->dec, &p, err, msg);

		if (n < 0)
			return -1;
		if (n == 0)
			l->eof = true;
		l->p = p;
		l->n = (size_t)n;
	}
	k = l->n < cap ? l->n : cap;
	memcpy(buf, l->p, k);
	l->p += k;
	l->n -= k;
	return (ssize_t)k;
}

/* Fill BUF with at least MAGIC_MAX bytes, or all there is, from READ:
 * the magic is looked for in the stream, not in its first read(). */
static ssize_t read_head(ssize_t (*read)(void *, unsigned char *, size_t, int *,
					 const char **),
			 void *ctx, unsigned char *buf, size_t cap, int *err,
			 const char **msg)
{
	size_t have = 0;

	while (have < MAGIC_MAX) {
		ssize_t n = read(ctx, buf + have, cap - have, err, msg);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

static void source_stop_decoder(struct source *s)
{
	if (!s->n_layers)
		return;
	s->stopping = 1;
	if (s->wake[1] >= 0 && write(s->wake[1], "", 1) < 0) {
		/* a full pipe wakes the reader as well */
	}
	/* Outermost first: each reads from the one below it. */
	while (s->n_layers > 0)
		decode_end(s->layer[--s->n_layers].dec);
	s->dec = NULL;
}

/* Put a decoder of KIND on top of the stack, its input starting with the
 * N bytes in s->buf.  0, or -1 with the archive's error set. */
static int source_push_decoder(struct archive *a, struct source *s,
			       enum dec_kind kind, size_t n)
{
	struct layer *below = s->n_layers ? &s->layer[s->n_layers - 1] : NULL;
	struct decode_opts o = {
		.kind = kind,
		.raw = below ? layer_read : raw_read,
		.raw_ctx = below ? (void *)below : (void *)s,
		.cancelled = s->in ? s->in->cancelled : &s->never,
		.thread = s->in && s->in->jobs > 1,
		.threads = s->in ? s->in->jobs : 1,
		.memlimit = s->in ? s->in->xz_memlimit : SE_XZ_MEMLIMIT_DEFAULT,
		.memlimit_stop = s->in ? s->in->xz_memlimit_stop : SE_XZ_MEMLIMIT_STOP,
	};
	char msg[256] = "";
	struct layer *l;
	int r;

	if (s->n_layers == MAX_LAYERS) {
		archive_set_error(a, EILSEQ, "compressed more than %d times over: not extracted",
				  MAX_LAYERS);
		return -1;
	}
	if (!s->n_layers && !s->outer && pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		archive_set_error(a, errno, "cannot start the decoder");
		return -1;
	}
	l = &s->layer[s->n_layers];
	*l = (struct layer){ .s = s, .index = s->n_layers };
	r = decode_start(&l->dec, &o, s->buf, n, msg, sizeof(msg));
	if (r < 0) {
		archive_set_error(a, -r, "%s", msg);
		return -1;
	}
	s->n_layers++;
	s->dec = l->dec;
	s->checked = true;
	return 0;
}

/*
 * The first bytes of the archive: every layer of compression gets a
 * decoder of ours; what is left is the archive, whose first N bytes are
 * in s->buf.  -1 with the archive's error set.
 */
static ssize_t source_start(struct archive *a, struct source *s)
{
	int err = 0;
	const char *msg = NULL;
	ssize_t n = read_head(raw_read, s, s->buf, sizeof(s->buf), &err, &msg);

	if (n > 0 && s->in)
		s->in->bytes += (uint64_t)n;
	for (;;) {
		enum dec_kind kind;

		if (n < 0) {
			archive_set_error(a, err, "%s", msg);
			return -1;
		}
		kind = decode_sniff(s->buf, (size_t)n);
		/* An image layer is applied only as the stream whose digest
		 * was checked against its diff_id: one decoder, the media
		 * type's, or none. */
		if (s->strict && kind != (s->n_layers ? DEC_NONE : s->want)) {
			archive_set_error(a, EILSEQ, "the layer is %s%s, not what its media type says",
					  s->n_layers ? "compressed twice over: " : "",
					  kind == DEC_NONE ? "not compressed" : decode_name(kind));
			return -1;
		}
		if (kind == DEC_NONE)
			return n;
		if (source_push_decoder(a, s, kind, (size_t)n) < 0)
			return -1;
		n = read_head(layer_read, &s->layer[s->n_layers - 1], s->buf,
			      sizeof(s->buf), &err, &msg);
	}
}

/* Where the checks have got to: one decoder says; with a decoder over
 * another, the outer one's checks cover bytes the inner one has not
 * checked yet, so nothing counts as verified before the end. */
static void note_verified(struct source *s)
{
	if (s->dec && s->n_layers == 1)
		s->verified = decode_verified(s->dec);
}

static void source_failed(struct archive *a, struct source *s)
{
	const char *msg = archive_error_string(a);

	if (!s->failed)
		snprintf(s->why, sizeof(s->why), "%s", msg ? msg : "cannot read the archive");
	s->failed = true;
}

static la_ssize_t source_block(struct archive *a, struct source *s, const void **buf)
{
	const char *msg = NULL;
	int err = 0;
	ssize_t n;

	if (!s->started) {
		s->started = true;
		*buf = s->buf;
		return source_start(a, s);
	}
	if (!s->dec) {
		if (s->dec_eof) {
			/* The run let go of this reader while it decoded. */
			archive_set_error(a, ECANCELED, "the run has ended");
			return -1;
		}
		n = raw_read(s, s->buf, sizeof(s->buf), &err, &msg);
		if (n < 0)
			archive_set_error(a, err, "%s", msg);
		else if (s->in)
			s->in->bytes += (uint64_t)n;
		*buf = s->buf;
		return n;
	}
	/* What the sniffing left of the outermost decoder's block, then its
	 * output without a copy. */
	if (s->layer[s->n_layers - 1].n > 0) {
		struct layer *top = &s->layer[s->n_layers - 1];

		*buf = top->p;
		n = (ssize_t)top->n;
		top->n = 0;
		return n;
	}
	if (s->layer[s->n_layers - 1].eof) {
		s->dec_eof = true;
		return 0;
	}
	n = decode_read(s->dec, buf, &err, &msg);
	if (n < 0)
		archive_set_error(a, err, "%s", msg);
	if (n == 0)
		s->dec_eof = true;
	return n;
}

/*
 * The block libarchive held is about to be overwritten: keep what of it
 * an entry's headers may still need.  While a header is read, that is
 * everything from where it starts (libarchive has set the position by
 * then; before, it still names the entry before, below HDR_FLOOR);
 * otherwise only what libarchive has not consumed yet, so that data
 * passes through without a copy.  Under a filter of libarchive's own
 * the positions count its output, not these bytes: nothing is kept.
 */
static void source_keep(struct archive *a, struct source *s)
{
	uint64_t consumed, hp, keep_from;

	if (!s->last_n)
		return;
	if (archive_filter_count(a) != 1) {
		paxraw_tail_reset(&s->tail, s->off);
		s->last_n = 0;
		return;
	}
	consumed = (uint64_t)archive_filter_bytes(a, -1);
	hp = (uint64_t)archive_read_header_position(a);
	keep_from = s->in_header && hp >= s->hdr_floor && hp <= consumed ? hp : consumed;
	paxraw_tail_add(&s->tail, s->last_off, s->last, s->last_n, keep_from);
	s->last_n = 0;
}

static la_ssize_t source_read(struct archive *a, void *data, const void **buf)
{
	struct source *s = data;
	la_ssize_t n;

	source_keep(a, s);
	n = source_block(a, s, buf);
	if (n < 0)
		source_failed(a, s);
	s->last_off = s->off;
	if (n > 0) {
		s->last = *buf;
		s->last_n = (size_t)n;
		s->off += (uint64_t)n;
	}
	note_verified(s);
	return n;
}

/*
 * After the archive's last entry: read the rest of a compressed stream,
 * so that its trailer is checked even when the archive format stopped
 * early (tar stops at its end blocks).  False, with the error set, when
 * damaged.
 */
static bool source_drain(struct archive *a, struct source *s)
{
	if (s->dec && s->layer[s->n_layers - 1].eof)
		s->dec_eof = true;
	while (s->dec && !s->dec_eof) {
		const void *buf;
		const char *msg = NULL;
		int err = 0;
		ssize_t n = decode_read(s->dec, &buf, &err, &msg);

		note_verified(s);
		if (n < 0) {
			archive_set_error(a, err, "%s", msg);
			source_failed(a, s);
			return false;
		}
		if (n == 0)
			s->dec_eof = true;
	}
	return true;
}

/* N bytes skipped: libarchive consumed the block it held first, and the
 * kept bytes no longer join the stream. */
static void source_skipped(struct source *s, uint64_t n)
{
	s->off += n;
	s->last_n = 0;
	s->last_off = s->off;
	paxraw_tail_reset(&s->tail, s->off);
}

static la_int64_t source_skip(struct archive *a, void *data, la_int64_t request)
{
	struct source *s = data;
	off_t from, to;

	if (!s->seekable || s->dec || s->outer)
		return 0;	/* libarchive reads and discards instead */
	if (s->bounded) {
		to = request > s->end - s->pos ? s->end : s->pos + (off_t)request;
		from = s->pos;
		s->pos = to;
		source_skipped(s, (uint64_t)(to - from));
		return to - from;
	}
	from = lseek(s->fd, 0, SEEK_CUR);
	if (from < 0)
		return 0;
	/* lseek happily goes past the end; a truncated archive must not
	 * look complete, so never skip further than the file is long. */
	to = from + (off_t)request > s->size ? s->size : from + (off_t)request;
	if (to < from || lseek(s->fd, to, SEEK_SET) < 0)
		return 0;
	source_skipped(s, (uint64_t)(to - from));
	return to - from;
}

/* The stream goes on at OFF, where libarchive's position now is too (a
 * seekable zip reads its central directory, then each local header at
 * its offset): the bytes kept do not join what comes next.  A header's
 * bytes start at or after a seek made while it was read. */
static void source_sought(struct source *s, uint64_t off)
{
	s->off = off;
	s->last_n = 0;
	s->last_off = off;
	paxraw_tail_reset(&s->tail, off);
	if (s->in_header)
		s->seek_floor = off;
}

static la_int64_t source_seek(struct archive *a, void *data, la_int64_t offset,
			      int whence)
{
	struct source *s = data;
	off_t r;

	if (s->dec || s->dec_eof)
		return ARCHIVE_FATAL;	/* decoded data cannot seek */
	if (s->bounded) {
		r = whence == SEEK_SET ? s->base : whence == SEEK_CUR ? s->pos : s->end;
		if ((offset < 0 && -offset > r - s->base) || (offset > 0 && offset > s->end - r))
			return ARCHIVE_FATAL;	/* never out of the range */
		s->pos = r + (off_t)offset;
		r = s->pos - s->base;
	} else {
		r = lseek(s->fd, (off_t)offset, whence);
		if (r < 0)
			return ARCHIVE_FATAL;
	}
	source_sought(s, (uint64_t)r);
	return r;
}

static int source_close(struct archive *a, void *data)
{
	struct source *s = data;

	/* The fd is the caller's. */
	if (s->in) {
		if (s->in->cur == s)
			s->in->cur = NULL;
		for (struct source **p = &s->in->all; *p; p = &(*p)->next) {
			if (*p == s) {
				*p = s->next;
				break;
			}
		}
	}
	source_stop_decoder(s);
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	paxraw_tail_free(&s->tail);
	szraw_names_free(&s->sz);
	cabraw_names_free(&s->cab);
	xarraw_names_free(&s->xar);
	isoraw_tree_free(&s->iso);
	map_free(&s->iso_keys);
	free(s->iso_next);
	free(s->iso_used);
	free(s->dumpdir);
	free(s);
	return ARCHIVE_OK;
}

/*
 * The formats read by default: archives.  mtree and raw are not: a text
 * file that happens to parse as mtree would create files, and raw turns
 * any input into one file.  "empty" is not either: empty input is an error,
 * as in GNU tar (a failed download piped into us must not exit 0).
 */
static const struct format {
	const char *name;
	int (*enable)(struct archive *);
	bool by_default;
} format_table[] = {
	{ "tar", archive_read_support_format_tar, true },
	{ "cpio", archive_read_support_format_cpio, true },
	{ "zip", archive_read_support_format_zip, true },
	{ "7zip", archive_read_support_format_7zip, true },
	{ "ar", archive_read_support_format_ar, true },
	{ "iso9660", archive_read_support_format_iso9660, true },
	{ "rar", archive_read_support_format_rar, true },
	{ "rar5", archive_read_support_format_rar5, true },
	{ "xar", archive_read_support_format_xar, true },
	{ "lha", archive_read_support_format_lha, true },
	{ "cab", archive_read_support_format_cab, true },
	{ "warc", archive_read_support_format_warc, false },
	{ "mtree", archive_read_support_format_mtree, false },
	{ "raw", archive_read_support_format_raw, false },
	{ "empty", archive_read_support_format_empty, false },
};

SE_EXPORT int se_format_known(const char *name)
{
	if (strcmp(name, "all") == 0 || strcmp(name, "7z") == 0)
		return true;
	for (size_t i = 0; i < sizeof(format_table) / sizeof(format_table[0]); i++)
		if (strcmp(format_table[i].name, name) == 0)
			return true;
	return false;
}

/* The default formats, widened by --format=LIST (comma-separated). */
static void enable_formats(struct archive *a, const char *list)
{
	for (size_t i = 0; i < sizeof(format_table) / sizeof(format_table[0]); i++) {
		bool want = format_table[i].by_default;
		const char *p = list;

		while (!want && p && *p) {
			size_t len = strcspn(p, ",");

			want = (len == 3 && strncmp(p, "all", 3) == 0) ||
			       (len == strlen(format_table[i].name) &&
				strncmp(p, format_table[i].name, len) == 0) ||
			       (len == 2 && strncmp(p, "7z", 2) == 0 &&
				strcmp(format_table[i].name, "7zip") == 0);
			p += len + (p[len] == ',');
		}
		if (want)
			format_table[i].enable(a);
	}
}


/*
 * Is every name in LIST (comma-separated) a format?  An empty list is.
 */
bool input_formats_known(const char *list)
{
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		char name[32];

		if (len == 0 || len >= sizeof(name))
			return false;
		memcpy(name, p, len);
		name[len] = '\0';
		if (!se_format_known(name))
			return false;
		p += len + (p[len] == ',');
	}
	return true;
}

/*
 * The filters libarchive may use: never its gzip, xz or zstd, which the
 * decoders above replace (libarchive's gzip reader does not check the
 * trailers).  A stream one of ours decoded that turns out to be bzip2 or
 * lz4 still gets libarchive's; one compressed with ours inside another
 * filter is not an archive libarchive can read (exit 2).
 */
static void enable_filters(struct archive *a)
{
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_compress(a);
	archive_read_support_filter_grzip(a);
	archive_read_support_filter_lrzip(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzop(a);
	archive_read_support_filter_rpm(a);
	archive_read_support_filter_uu(a);
}

/*
 * A reader on S for FORMATS; S belongs to it from here on (its close
 * callback frees S, even when opening fails).
 */
static int open_reader(struct input *in, struct source *s, const char *formats,
		       struct archive **ap, char *msg, size_t msgsize)
{
	struct archive *a;
	int err;

	a = archive_read_new();
	if (!a) {
		free(s);
		return -ENOMEM;
	}
	s->ar = a;
	s->in = in;
	s->next = in->all;
	in->all = s;
	/* An image layer is a tar archive, read as nothing else. */
	if (s->strict) {
		archive_read_support_format_tar(a);
	} else {
		enable_filters(a);
		enable_formats(a, formats);
	}
	/* tar -i: go on past the zero blocks that end each of several
	 * concatenated archives. */
	if (in->ignore_zeros)
		archive_read_set_format_option(a, "tar", "read_concatenated_archives", "1");
	archive_read_set_callback_data(a, s);
	archive_read_set_read_callback(a, source_read);
	archive_read_set_skip_callback(a, source_skip);
	if (s->seekable)
		archive_read_set_seek_callback(a, source_seek);
	archive_read_set_close_callback(a, source_close);
	in->cur = s;
	in->bytes = 0;
	if (archive_read_open1(a) != ARCHIVE_OK) {
		/* s is gone: libarchive closed it. */
		if (*in->cancelled) {
			err = -EINTR;
			snprintf(msg, msgsize, "cannot read the archive: interrupted");
		} else if (in->bytes == 0) {
			/* As GNU tar: a failed download piped into us must
			 * not look like an empty success. */
			err = -ENODATA;
			snprintf(msg, msgsize, "cannot read the archive: it is empty");
		} else {
			err = archive_errno(a) > 0 ? -archive_errno(a) : -EILSEQ;
			snprintf(msg, msgsize, "cannot read the archive: %s", archive_msg(a));
		}
		archive_read_free(a);
		in->cur = NULL;
		return err;
	}
	*ap = a;
	return 0;
}

/* A reader's source for FD (the caller's), while no other is open:
 * 0, or -errno with MSG set. */
static int fd_source(struct input *in, int fd, struct source **sp, char *msg,
		     size_t msgsize)
{
	struct source *s;
	struct stat st;

	msg[0] = '\0';
	if (in->cur) {
		snprintf(msg, msgsize, "an archive of this run is still open");
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->wake[0] = s->wake[1] = -1;
	s->fd = fd;
	s->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	s->size = s->seekable ? st.st_size : 0;
	*sp = s;
	return 0;
}

int input_open_fd(struct input *in, int fd, const char *formats,
		  struct archive **ap, char *msg, size_t msgsize)
{
	struct source *s;
	int r;

	*ap = NULL;
	msg[0] = '\0';
	if (!input_formats_known(formats))
		return -EINVAL;
	r = fd_source(in, fd, &s, msg, msgsize);
	if (r < 0)
		return r;
	return open_reader(in, s, formats, ap, msg, msgsize);
}

int input_open_layer(struct input *in, int fd, uint64_t offset, uint64_t size,
		     enum dec_kind kind, struct archive **ap, char *msg, size_t msgsize)
{
	struct source *s;
	int r = fd_source(in, fd, &s, msg, msgsize);

	*ap = NULL;
	if (r < 0)
		return r;
	if (!s->seekable || offset > (uint64_t)s->size || size > (uint64_t)s->size - offset) {
		free(s);
		snprintf(msg, msgsize, "the layer's blob is not within its file");
		return -EINVAL;
	}
	s->bounded = true;
	s->base = s->pos = (off_t)offset;
	s->end = (off_t)(offset + size);
	s->size = (off_t)size;
	s->strict = true;
	s->want = kind;
	return open_reader(in, s, NULL, ap, msg, msgsize);
}

/* Is NAME a package's payload: data.tar, data.tar.gz, data.tar.xz ...? */
static bool is_payload(const char *name)
{
	return strcmp(name, "data.tar") == 0 || strncmp(name, "data.tar.", 9) == 0;
}

int input_open_member(struct input *in, struct archive *outer, const char *member,
		      struct archive **ap, char *msg, size_t msgsize)
{
	struct archive_entry *e;
	struct source *s;
	int r;

	*ap = NULL;
	msg[0] = '\0';
	for (;;) {
		const char *name;

		r = archive_read_next_header(outer, &e);
		if (r == ARCHIVE_EOF) {
			snprintf(msg, msgsize, "no member '%s' in the archive",
				 member ? member : "data.tar*");
			return -ENOENT;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			snprintf(msg, msgsize, "cannot read the archive: %s", archive_msg(outer));
			return archive_errno(outer) > 0 ? -archive_errno(outer) : -EILSEQ;
		}
		name = archive_entry_pathname(e);
		if (!name || archive_entry_filetype(e) != AE_IFREG)
			continue;
		if (member ? strcmp(name, member) == 0 : is_payload(name))
			break;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->wake[0] = s->wake[1] = -1;
	s->fd = -1;
	s->outer = outer;
	/* The outer reader stays where it is: its source is not ours. */
	if (in->cur && in->cur->ar == outer)
		in->cur = NULL;
	return open_reader(in, s, NULL, ap, msg, msgsize);
}

/* Is the locale's character set UTF-8, so that libarchive's conversion
 * of a pax name from UTF-8 changed nothing but its composition?  In
 * another, it converted the name on purpose (to Latin-1, say); in C, it
 * failed and kept the bytes already. */
static bool locale_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
}

/*
 * Whether libarchive's own conversion from UTF-8 (the one that composes)
 * makes RAW into NOW: then RAW is the name libarchive read, and not
 * another entry's or a forged one, whatever the bytes around it were.
 * A scratch entry has no archive: the conversion is UTF-8 to the
 * locale's, as the readers' is.
 */
static bool composes_to(const char *raw, const char *now)
{
	struct archive_entry *t = archive_entry_new();
	const char *got;
	bool same;

	if (!t)
		return false;
	same = archive_entry_update_pathname_utf8(t, raw) &&
	       (got = archive_entry_pathname(t)) != NULL && strcmp(got, now) == 0;
	archive_entry_free(t);
	return same;
}

/* Give E the name V instead of the one GET returns, when they differ and
 * V is what libarchive composed into it.  Out of memory: E keeps
 * libarchive's. */
static void renamed(struct archive_entry *e, const struct paxraw_value *v,
		    const char *(*get)(struct archive_entry *),
		    void (*set)(struct archive_entry *, const char *))
{
	const char *now = get(e);
	char *name;

	if (!now || (strlen(now) == v->n && memcmp(now, v->p, v->n) == 0))
		return;
	name = malloc(v->n + 1);
	if (!name)
		return;
	memcpy(name, v->p, v->n);
	name[v->n] = '\0';
	if (composes_to(name, now))
		set(e, name);
	free(name);
}

/* Copy the GNU.dumpdir record V: the bytes it points into may be read
 * over before the caller asks.  Out of memory: none. */
static void keep_dumpdir(struct source *s, const struct paxraw_value *v)
{
	if (v->n + 1 > s->dumpdir_cap) {
		char *nb = realloc(s->dumpdir, v->n + 1);

		if (!nb)
			return;
		s->dumpdir = nb;
		s->dumpdir_cap = v->n + 1;
	}
	memcpy(s->dumpdir, v->p, v->n);
	s->dumpdir[v->n] = '\0';
	s->dumpdir_n = v->n;
	s->has_dumpdir = true;
}

/*
 * The bytes libarchive consumed for the entry it has just read: from
 * where its header began (or the last seek made in it) to where it
 * stopped, in the block it holds or kept (S->tail).  False when they are
 * not all there: a filter of libarchive's own between (its positions
 * are not the stream's), a header longer than the bytes kept.
 */
static bool header_bytes(struct source *s, struct archive *a, const unsigned char **p,
			 size_t *len)
{
	int64_t from, to;

	if (archive_filter_count(a) != 1)
		return false;
	from = archive_read_header_position(a);
	to = archive_filter_bytes(a, -1);
	if (from >= 0 && (uint64_t)from < s->seek_floor)
		from = (int64_t)s->seek_floor;
	if (from < 0 || to < from || (uint64_t)to > s->off)
		return false;
	*len = (size_t)(to - from);
	if ((uint64_t)from >= s->last_off && s->last_n) {
		*p = s->last + ((uint64_t)from - s->last_off);
		return true;
	}
	if (s->last_n && (uint64_t)to > s->last_off)
		paxraw_tail_add(&s->tail, s->last_off, s->last,
				(size_t)((uint64_t)to - s->last_off), (uint64_t)from);
	*p = paxraw_tail_span(&s->tail, (uint64_t)from, (uint64_t)to);
	return *p != NULL;
}

/*
 * Issue 23: libarchive composes (NFC) every name it converts from UTF-8,
 * pax "path" and "linkpath" among them, so "cafe\u0301" and "caf\u00e9"
 * in one archive became one name, the second overwriting the first.  GNU
 * tar keeps the bytes.  Read the entry's headers again from the bytes
 * libarchive consumed and give E the values as stored.  Only when every
 * check passes: a chain paxraw_parse() reads cleanly and that ends
 * exactly where libarchive stopped reading, the value libarchive used,
 * valid UTF-8; otherwise E keeps libarchive's names.  The names then go
 * through the same checks as any other (plan.c).
 */
static void raw_tar_names(struct source *s, struct archive_entry *e,
			  const unsigned char *p, size_t len)
{
	const struct paxraw_value *name;
	struct paxraw px;

	if (paxraw_parse(p, len, &px) != PAXRAW_OK)
		return;
	/* Where libarchive stopped: the entry's own header, or the sparse
	 * map after it. */
	if (px.length != len && !(px.sparse_map && px.length < len))
		return;
	if (px.dumpdir.set)
		keep_dumpdir(s, &px.dumpdir);
	if (px.binary || !locale_is_utf8())
		return;		/* names converted by nobody, or on purpose */
	/* libarchive's choice: GNU.sparse.name over path. */
	name = px.sparse_name.set && px.sparse_name.n ? &px.sparse_name :
	       px.path.set && px.path.n ? &px.path : NULL;
	if (name && paxraw_name_ok(name))
		renamed(e, name, archive_entry_pathname, archive_entry_copy_pathname);
	if (paxraw_name_ok(&px.linkpath)) {
		if (archive_entry_hardlink(e))
			renamed(e, &px.linkpath, archive_entry_hardlink,
				archive_entry_copy_hardlink);
		else if (archive_entry_symlink(e))
			renamed(e, &px.linkpath, archive_entry_symlink,
				archive_entry_copy_symlink);
	}
}

static size_t count_slashes(const char *p, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += p[i] == '/';
	return k;
}

/*
 * The same for a zip entry (zipraw.h): its name as the local header
 * stores it, with libarchive's two changes made again, '\' read as '/'
 * in a name made on MS-DOS that has no '/', and a directory's trailing
 * '/'.  Composing never adds bytes nor touches a '/', so a name longer
 * than libarchive's or with other separators is not the one it read:
 * libarchive's is kept.
 */
static void raw_zip_names(struct archive_entry *e, const unsigned char *p, size_t len)
{
	bool symlink = archive_entry_filetype(e) == AE_IFLNK;
	bool dir = archive_entry_filetype(e) == AE_IFDIR;
	const char *now = archive_entry_pathname(e);
	struct paxraw_value v;
	struct zipraw z;
	char *name;
	size_t n;

	if (zipraw_local(p, len, symlink, &z) != ZIPRAW_OK || !locale_is_utf8())
		return;
	/* The target is converted from UTF-8 by the flag alone. */
	if (symlink && z.utf8_flag && z.target.set && paxraw_name_ok(&z.target))
		renamed(e, &z.target, archive_entry_symlink, archive_entry_copy_symlink);
	if (!(z.utf8_flag || z.unicode_path) || !paxraw_name_ok(&z.name) || !now)
		return;
	name = malloc(z.name.n + 2);
	if (!name)
		return;
	memcpy(name, z.name.p, z.name.n);
	n = z.name.n;
	if (z.dos && !memchr(name, '/', n) && memchr(name, '\\', n))
		for (size_t i = 0; i < n; i++)
			if (name[i] == '\\')
				name[i] = '/';
	if (dir && name[n - 1] != '/')
		name[n++] = '/';
	if (strlen(now) <= n && count_slashes(now, strlen(now)) == count_slashes(name, n)) {
		v = (struct paxraw_value){ (const unsigned char *)name, n, true };
		renamed(e, &v, archive_entry_pathname, archive_entry_copy_pathname);
	}
	free(name);
}

/*
 * LEN bytes at offset OFF of the stream into BUF, read again from the
 * file (pread: libarchive's position stays).  Only a file: libarchive
 * cannot read a 7z from a pipe either, it needs to seek.
 */
static bool stream_bytes(struct source *s, uint64_t off, size_t len, unsigned char *buf)
{
	ssize_t n;

	if (!s->seekable || s->dec || s->outer || off > (uint64_t)s->size ||
	    len > (uint64_t)s->size - off)
		return false;
	n = pread(s->fd, buf, len, (s->bounded ? s->base : 0) + (off_t)off);
	return n >= 0 && (size_t)n == len;
}

/* The bytes at OFF of LEN, in a buffer of their own (the caller frees). */
static unsigned char *stream_copy(struct source *s, uint64_t off, uint64_t len)
{
	unsigned char *buf;

	if (len == 0 || len > SZRAW_HEADER_MAX || off > UINT64_MAX - len)
		return NULL;
	buf = malloc((size_t)len);
	if (buf && !stream_bytes(s, off, (size_t)len, buf)) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* Read a 7z archive's header again for its names (szraw.h): the start
 * header at the stream's first byte (a self-extracting archive keeps
 * libarchive's names), the next header it points to, unpacked when
 * encoded.  False when anything is not exactly as expected. */
static bool read_7z_names(struct source *s)
{
	unsigned char start[SZRAW_START_LEN], *hdr = NULL, *packed = NULL, *plain = NULL;
	struct szraw_start st;
	struct szraw_packed pk;
	bool ok = false;

	if (!stream_bytes(s, 0, sizeof(start), start) ||
	    szraw_start(start, sizeof(start), &st) != SZRAW_OK ||
	    st.offset > UINT64_MAX - SZRAW_START_LEN)
		return false;
	hdr = stream_copy(s, SZRAW_START_LEN + st.offset, st.size);
	if (!hdr || szraw_crc32(hdr, (size_t)st.size) != st.crc)
		goto out;
	if (hdr[0] == 0x17) {		/* kEncodedHeader */
		if (szraw_encoded(hdr, (size_t)st.size, &pk) != SZRAW_OK ||
		    pk.pos > UINT64_MAX - SZRAW_START_LEN)
			goto out;
		packed = stream_copy(s, SZRAW_START_LEN + pk.pos, pk.size);
		plain = packed ? malloc((size_t)pk.unpacked) : NULL;
		if (!plain || szraw_unpack(&pk, packed, plain) != SZRAW_OK)
			goto out;
		ok = szraw_names(plain, (size_t)pk.unpacked, &s->sz) == SZRAW_OK;
	} else {
		ok = szraw_names(hdr, (size_t)st.size, &s->sz) == SZRAW_OK;
	}
out:
	free(hdr);
	free(packed);
	free(plain);
	return ok;
}

/*
 * Give E the name RAW, a UTF-8 name as the archive stores it, with
 * libarchive's one change made again, a directory's trailing '/'.  As
 * for zip, a name longer than libarchive's or with other separators is
 * not the one it read, and E keeps libarchive's.
 */
static void stored_name(struct archive_entry *e, const char *raw, bool dir_slash)
{
	const char *now = archive_entry_pathname(e);
	size_t n = strlen(raw);
	struct paxraw_value v;
	char *name;

	if (!now || n == 0 || !locale_is_utf8())
		return;
	name = malloc(n + 2);
	if (!name)
		return;
	memcpy(name, raw, n);
	if (dir_slash && archive_entry_filetype(e) == AE_IFDIR && name[n - 1] != '/')
		name[n++] = '/';
	if (strlen(now) <= n && count_slashes(now, strlen(now)) == count_slashes(name, n)) {
		v = (struct paxraw_value){ (const unsigned char *)name, n, true };
		if (paxraw_name_ok(&v))
			renamed(e, &v, archive_entry_pathname, archive_entry_copy_pathname);
	}
	free(name);
}

/*
 * The same for a 7z entry: its name as the header stores it (UTF-16,
 * into UTF-8 without composing), the Nth entry's the Nth file's as
 * libarchive hands them out.  N is libarchive's count of headers read,
 * which counts an entry it failed too (its reader steps to the next file
 * first), so one failed entry does not shift the names of the rest.
 */
static void raw_7z_names(struct source *s, struct archive *a, struct archive_entry *e)
{
	int count = archive_file_count(a);
	size_t i = count > 0 ? (size_t)count - 1 : SIZE_MAX;

	if (!s->sz_read) {
		s->sz_read = true;
		if (!read_7z_names(s))
			szraw_names_free(&s->sz);
	}
	if (i < s->sz.count && s->sz.at[i] != SZRAW_NO_NAME)
		stored_name(e, s->sz.text + s->sz.at[i], true);
}

/*
 * The same for a cabinet (cabraw.h): every CFFILE record is in the bytes
 * libarchive consumed for the first entry, the Nth entry is the Nth
 * record (libarchive's count of headers read, as for 7z).
 */
static void raw_cab_names(struct source *s, struct archive *a, struct archive_entry *e)
{
	int count = archive_file_count(a);
	size_t i = count > 0 ? (size_t)count - 1 : SIZE_MAX, len;
	const unsigned char *p;

	if (i == 0 && header_bytes(s, a, &p, &len))
		cabraw_names(p, len, &s->cab);
	if (i < s->cab.count && s->cab.at[i] != CABRAW_NOT_UTF8)
		stored_name(e, s->cab.text + s->cab.at[i], true);
}

/*
 * Read a xar's table of contents again for its names (xarraw.h): from the
 * file, or from the bytes libarchive consumed for the first entry, which
 * begin with the header and the TOC.  False when anything is not exactly
 * as expected.
 */
static bool read_xar_names(struct source *s, struct archive *a)
{
	unsigned char head[XARRAW_HEADER_LEN], *toc = NULL;
	const unsigned char *p;
	uint64_t packed, plain;
	size_t len;
	bool ok;

	if (stream_bytes(s, 0, sizeof(head), head)) {
		if (xarraw_header(head, sizeof(head), &packed, &plain) != XARRAW_OK)
			return false;
		toc = stream_copy(s, XARRAW_HEADER_LEN, packed);
		ok = toc && xarraw_names(toc, (size_t)packed, plain, &s->xar) == XARRAW_OK;
		free(toc);
		return ok;
	}
	if (!header_bytes(s, a, &p, &len) ||
	    xarraw_header(p, len, &packed, &plain) != XARRAW_OK ||
	    packed > len - XARRAW_HEADER_LEN)
		return false;
	return xarraw_names(p + XARRAW_HEADER_LEN, (size_t)packed, plain, &s->xar) == XARRAW_OK;
}

/*
 * The same for a xar entry: the Nth entry libarchive hands out (its count
 * of headers read, as for 7z) gets the Nth name, its symlink target too.
 * libarchive gives a directory no trailing '/', and sets a hardlink's
 * target as the TOC stores it, unconverted: with its target's name kept,
 * the two agree again.
 */
static void raw_xar_names(struct source *s, struct archive *a, struct archive_entry *e)
{
	int count = archive_file_count(a);
	size_t i = count > 0 ? (size_t)count - 1 : SIZE_MAX;

	if (i == 0 && !read_xar_names(s, a))
		xarraw_names_free(&s->xar);
	if (i >= s->xar.count)
		return;
	if (s->xar.path[i] != XARRAW_NO_NAME)
		stored_name(e, s->xar.text + s->xar.path[i], false);
	if (s->xar.link[i] != XARRAW_NO_NAME && archive_entry_symlink(e) &&
	    locale_is_utf8()) {
		const char *t = s->xar.text + s->xar.link[i];
		struct paxraw_value v = { (const unsigned char *)t, strlen(t), true };

		if (paxraw_name_ok(&v))
			renamed(e, &v, archive_entry_symlink, archive_entry_copy_symlink);
	}
}

/* Where isoraw.c reads: the file again, or from a pipe the bytes
 * libarchive consumed for this entry (P, LEN, from offset FROM). */
struct iso_src {
	struct source *s;
	const unsigned char *p;
	size_t len;
	uint64_t from;
};

static bool iso_read_at(void *ctx, uint64_t off, size_t len, unsigned char *buf)
{
	struct iso_src *x = ctx;

	if (stream_bytes(x->s, off, len, buf))
		return true;
	if (!x->p || off < x->from || off - x->from > x->len || len > x->len - (off - x->from))
		return false;
	memcpy(buf, x->p + (off - x->from), len);
	return true;
}

/*
 * The key libarchive's position gives a record: a file's data begins
 * there, a directory's records end there (the block after them).  An
 * empty file leaves the position where it was: its composed name is its
 * key.  NULL when out of memory.
 */
static char *iso_key(bool dir, uint64_t size, uint64_t at, const char *composed)
{
	char *key;

	if (!dir && size == 0) {
		size_t n = strlen(composed);

		key = malloc(n + 3);
		if (key) {
			memcpy(key, "e:", 2);
			memcpy(key + 2, composed, n + 1);
		}
		return key;
	}
	key = malloc(32);
	if (key)
		snprintf(key, 32, "%c:%llu", dir ? 'd' : 'f', (unsigned long long)at);
	return key;
}

static uint64_t iso_end(const struct isoraw_rec *r)
{
	return r->start + (r->size + ISORAW_BLOCK - 1) / ISORAW_BLOCK * ISORAW_BLOCK;
}

/* Look the records read since the last call up by their keys.  False
 * when out of memory. */
static bool iso_index(struct source *s)
{
	size_t n = s->iso.count ? s->iso.count : 1;
	struct archive_entry *t;
	size_t *next;
	bool *used;

	if (s->iso_indexed == s->iso.count)
		return true;
	next = realloc(s->iso_next, n * sizeof(*next));
	if (next)
		s->iso_next = next;
	used = realloc(s->iso_used, n * sizeof(*used));
	if (used)
		s->iso_used = used;
	t = archive_entry_new();
	if (!next || !used || !t) {
		archive_entry_free(t);
		return false;
	}
	for (size_t i = s->iso_indexed; i < s->iso.count; i++) {
		const struct isoraw_rec *r = &s->iso.rec[i];
		const char *composed = "";
		char *key;

		s->iso_next[i] = MAP_NONE;
		s->iso_used[i] = false;
		if (r->path == ISORAW_NO_NAME)
			continue;
		if (!r->dir && r->size == 0 &&
		    (!archive_entry_update_pathname_utf8(t, s->iso.text + r->path) ||
		     !(composed = archive_entry_pathname(t))))
			continue;
		key = iso_key(r->dir, r->size, r->dir ? iso_end(r) : r->start, composed);
		if (!key) {
			archive_entry_free(t);
			return false;
		}
		s->iso_next[i] = map_get(&s->iso_keys, key);
		if (!map_put(&s->iso_keys, key, i)) {
			free(key);
			archive_entry_free(t);
			return false;
		}
		free(key);
	}
	s->iso_indexed = s->iso.count;
	archive_entry_free(t);
	return true;
}

/* The Joliet names are no more to be had: libarchive's from here on. */
static void iso_give_up(struct source *s)
{
	isoraw_tree_free(&s->iso);
	map_free(&s->iso_keys);
	s->iso_indexed = 0;
}

/* Two records no one can tell apart from the entry libarchive made. */
static bool iso_alike(const struct isoraw_rec *a, const struct isoraw_rec *b)
{
	return a->dir == b->dir && a->size == b->size && memcmp(a->date, b->date, 7) == 0;
}

/*
 * The same for an ISO 9660 image read through its Joliet names (Rock
 * Ridge names are libarchive's unconverted bytes).  The tree is read as
 * libarchive reads it: its root at the first entry, a directory's records
 * when libarchive hands the directory out (from the file, or from the
 * bytes libarchive just consumed when the image comes down a pipe).  An
 * entry's record is the one where libarchive stands, whose name composes
 * into the entry's.  Two that differ otherwise and could both be it:
 * libarchive's name stays.  Two that do not differ (twin names, same size
 * and date): the first not taken yet, the tree is the same either way.
 * A hardlink's target is the entry before, as libarchive makes it.
 */
static void raw_iso_names(struct source *s, struct archive *a, struct archive_entry *e)
{
	const char *now = archive_entry_pathname(e), *link = archive_entry_hardlink(e);
	bool dir = archive_entry_filetype(e) == AE_IFDIR;
	int64_t pos = archive_filter_bytes(a, -1);
	size_t pick = MAP_NONE, prev = s->iso_prev, first = MAP_NONE;
	struct iso_src src = { s, NULL, 0, 0 };
	char *key;

	if (archive_format(a) != ARCHIVE_FORMAT_ISO9660 || archive_filter_count(a) != 1 ||
	    !now || pos < 0 || !locale_is_utf8())
		return;
	if ((!s->seekable || s->dec || s->outer) && header_bytes(s, a, &src.p, &src.len))
		src.from = (uint64_t)pos - src.len;
	if (!s->iso_begun) {
		s->iso_begun = true;
		s->iso_prev = prev = MAP_NONE;
		if (isoraw_begin(iso_read_at, &src, &s->iso) != ISORAW_OK)
			iso_give_up(s);
	}
	if (!s->iso.walk)
		return;
	if (dir && (uint64_t)pos == s->iso.root + (s->iso.root_size + ISORAW_BLOCK - 1) /
				     ISORAW_BLOCK * ISORAW_BLOCK &&
	    (isoraw_children(iso_read_at, &src, &s->iso, ISORAW_ROOT) != ISORAW_OK ||
	     !iso_index(s))) {
		iso_give_up(s);
		return;
	}
	if (link && prev != MAP_NONE)
		/* A record with the data of the entry before: libarchive
		 * makes it a hardlink to that entry, wherever it stands. */
		key = iso_key(false, 1, s->iso.rec[prev].start, now);
	else
		key = iso_key(dir, archive_entry_size_is_set(e) ? (uint64_t)archive_entry_size(e) : 1,
			      (uint64_t)pos, now);
	if (!key)
		return;
	for (size_t i = map_get(&s->iso_keys, key); i != MAP_NONE; i = s->iso_next[i]) {
		const struct isoraw_rec *r = &s->iso.rec[i];

		if (s->iso_used[i] || r->dir != dir)
			continue;
		if (first == MAP_NONE)
			first = i;
		if (!composes_to(s->iso.text + r->path, now))
			continue;
		if (pick == MAP_NONE) {
			pick = i;
		} else if (!iso_alike(&s->iso.rec[pick], r)) {
			pick = MAP_NONE;
			break;
		}
	}
	free(key);
	/* A directory handed out: its records, which libarchive just read. */
	if (dir && (pick != MAP_NONE || first != MAP_NONE) &&
	    (isoraw_children(iso_read_at, &src, &s->iso, pick != MAP_NONE ? pick : first) !=
	     ISORAW_OK || !iso_index(s))) {
		iso_give_up(s);
		return;
	}
	if (link && prev != MAP_NONE) {
		const char *t = s->iso.text + s->iso.rec[prev].path;
		struct paxraw_value v = { (const unsigned char *)t, strlen(t), true };

		if (paxraw_name_ok(&v))
			renamed(e, &v, archive_entry_hardlink, archive_entry_copy_hardlink);
	}
	/* The entry before stays the hardlinks' target (libarchive's too). */
	if (!link)
		s->iso_prev = pick;
	if (pick == MAP_NONE)
		return;
	s->iso_used[pick] = true;
	stored_name(e, s->iso.text + s->iso.rec[pick].path, false);
}

/*
 * The same for a RAR 5 entry (rarraw.h): the file header that ends where
 * libarchive stopped, its name and its link's target as stored.
 * libarchive gives a directory no trailing '/'.
 */
static void raw_rar5_names(struct archive_entry *e, const unsigned char *p, size_t len)
{
	struct rarraw_file f;
	char *name;

	if (rarraw_file(p, len, &f) != RARRAW_OK || !locale_is_utf8())
		return;
	name = malloc(f.name_len + 1);
	if (!name)
		return;
	memcpy(name, f.name, f.name_len);
	name[f.name_len] = '\0';
	/* A NUL inside: libarchive's name ended there, this is not it. */
	if (strlen(name) == f.name_len)
		stored_name(e, name, false);
	free(name);
	if (f.target) {
		struct paxraw_value v = { f.target, f.target_len, true };

		if (!paxraw_name_ok(&v))
			return;
		if (f.hardlink)
			renamed(e, &v, archive_entry_hardlink, archive_entry_copy_hardlink);
		else
			renamed(e, &v, archive_entry_symlink, archive_entry_copy_symlink);
	}
}

/* NAME, which a reader made (NULL: none), as E's name; freed.  A RAR 4
 * name flagged Unicode (rarraw.h), an lha path (lharaw.h). */
static void taken_name(struct archive_entry *e, char *name)
{
	if (name)
		stored_name(e, name, false);
	free(name);
}

/* Give E the names as the archive stores them, where libarchive's
 * conversion may have composed them. */
static void raw_names(struct source *s, struct archive *a, struct archive_entry *e)
{
	const unsigned char *p;
	char *name;
	size_t len;

	switch (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) {
	case ARCHIVE_FORMAT_TAR:
		if (header_bytes(s, a, &p, &len))
			raw_tar_names(s, e, p, len);
		break;
	case ARCHIVE_FORMAT_ZIP:
		if (header_bytes(s, a, &p, &len))
			raw_zip_names(e, p, len);
		break;
	case ARCHIVE_FORMAT_7ZIP:
		raw_7z_names(s, a, e);
		break;
	case ARCHIVE_FORMAT_CAB:
		raw_cab_names(s, a, e);
		break;
	case ARCHIVE_FORMAT_XAR:
		raw_xar_names(s, a, e);
		break;
	case ARCHIVE_FORMAT_ISO9660:
		raw_iso_names(s, a, e);
		break;
	case ARCHIVE_FORMAT_RAR_V5:
		if (header_bytes(s, a, &p, &len))
			raw_rar5_names(e, p, len);
		break;
	case ARCHIVE_FORMAT_RAR:
		if (header_bytes(s, a, &p, &len) && rarraw_file4(p, len, &name) == RARRAW_OK)
			taken_name(e, name);
		break;
	case ARCHIVE_FORMAT_LHA:
		if (header_bytes(s, a, &p, &len) && lharaw_path(p, len, &name) == LHARAW_OK)
			taken_name(e, name);
		break;
	default:
		break;
	}
}

int input_next_header(struct input *in, struct archive *a, struct archive_entry **e)
{
	struct source *s = in->cur && in->cur->ar == a ? in->cur : NULL;
	int r;

	if (s) {
		s->hdr_floor = (uint64_t)archive_filter_bytes(a, -1);
		s->in_header = true;
		s->seek_floor = 0;
		s->has_dumpdir = false;
	}
	r = archive_read_next_header(a, e);
	if (s) {
		s->in_header = false;
		if (r == ARCHIVE_OK || r == ARCHIVE_WARN)
			raw_names(s, a, *e);
	}
	return r;
}

int input_dumpdir(const struct input *in, const struct archive *a, const char **buf,
		  size_t *len)
{
	const struct source *s = in->cur;

	if (!s || s->ar != a)
		return -EINVAL;
	if (!s->has_dumpdir)
		return -ENOENT;
	*buf = s->dumpdir;
	*len = s->dumpdir_n;
	return 0;
}

int input_finish(struct input *in, struct archive *a)
{
	struct source *s = in->cur;

	/* Only a reader this module made has a stream to check. */
	if (!s || s->ar != a)
		return 0;
	if (!source_drain(a, s))
		return -EILSEQ;
	return 0;
}

uint64_t input_verified(const struct input *in, const struct archive *a)
{
	const struct source *s = in->cur;

	/* Not a reader of ours, no decoder, or one at its checked end: no
	 * check is still to come. */
	if (!s || s->ar != a || !s->checked || s->dec_eof)
		return UINT64_MAX;
	return s->verified;
}

const char *input_failure(const struct input *in)
{
	return in->cur && in->cur->failed ? in->cur->why : NULL;
}

void input_release(struct input *in)
{
	/* Readers may outlive the run (the caller frees them): they must not
	 * reach back into it then. */
	for (struct source *s = in->all; s; s = s->next) {
		/* A decoder thread looks at the run's cancel flag. */
		if (s->dec) {
			source_stop_decoder(s);
			s->dec_eof = true;
		}
		s->in = NULL;
	}
	in->all = NULL;
	in->cur = NULL;
}
