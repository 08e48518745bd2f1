/*
 * input.c - the archive's bytes: a reader that wakes up on cancel, checks
 * every gzip trailer, and reads only the formats asked for.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"
#include "internal.h"

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
 * writing in one thread.
 */
#define READ_BLOCK (128 * 1024)

struct source {
	int fd;
	struct archive *outer;		/* a member of this reader, instead of fd */
	bool seekable;
	off_t size;
	se_run *run;			/* NULL once the run has let go */
	struct source *next;		/* in run->sources */
	struct archive *ar;		/* the reader it feeds */
	bool started;			/* the first block has been looked at */
	struct decoder *dec;		/* a compressed stream, or NULL */
	bool dec_eof;			/* its last block was read */
	volatile sig_atomic_t stopping;	/* the decoder is being stopped */
	volatile sig_atomic_t never;	/* "not cancelled", without a run */
	int wake[2];			/* wakes the decoder's raw reads */
	unsigned char buf[READ_BLOCK];
};

/* Read the next raw block of a member of the outer archive. */
static ssize_t member_read(struct source *s, unsigned char *buf, size_t cap,
			   int *err, const char **msg)
{
	la_ssize_t n;

	if ((s->run && s->run->cancelled) || s->stopping) {
		*err = EINTR;
		*msg = "interrupted";
		return -1;
	}
	n = archive_read_data(s->outer, buf, cap);
	if (n < 0) {
		*err = archive_errno(s->outer) > 0 ? archive_errno(s->outer) : EILSEQ;
		*msg = run_archive_msg(s->outer);
		return -1;
	}
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
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = s->fd, .events = POLLIN },
			{ .fd = s->run ? run_cancel_fd(s->run) : -1, .events = POLLIN },
			{ .fd = s->wake[0], .events = POLLIN },
		};
		ssize_t n;

		if ((s->run && s->run->cancelled) || s->stopping) {
			*err = EINTR;
			*msg = "interrupted";
			return -1;
		}
		if (!s->seekable && poll(p, 3, -1) < 0 && errno != EINTR) {
			*err = errno;
			*msg = "cannot wait for the archive";
			return -1;
		}
		if ((s->run && s->run->cancelled) || s->stopping)
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

static void source_stop_decoder(struct source *s)
{
	if (!s->dec)
		return;
	s->stopping = 1;
	if (s->wake[1] >= 0 && write(s->wake[1], "", 1) < 0) {
		/* a full pipe wakes the reader as well */
	}
	decode_end(s->dec);
	s->dec = NULL;
}

/* Hand a compressed stream, whose first N bytes are in s->buf, to a
 * decoder thread.  0, or -1 with the archive's error set. */
static int source_start_decoder(struct archive *a, struct source *s,
				enum dec_kind kind, size_t n)
{
	struct decode_opts o = {
		.kind = kind,
		.raw = raw_read,
		.raw_ctx = s,
		.cancelled = s->run ? &s->run->cancelled : &s->never,
		.thread = s->run && s->run->jobs > 1,
		.threads = s->run ? s->run->jobs : 1,
		.memlimit = s->run ? s->run->xz_memlimit : SE_XZ_MEMLIMIT_DEFAULT,
		.memlimit_stop = SE_XZ_MEMLIMIT_STOP,
	};
	char msg[256] = "";
	int r;

	if (!s->outer && pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		archive_set_error(a, errno, "cannot start the decoder");
		return -1;
	}
	r = decode_start(&s->dec, &o, s->buf, n, msg, sizeof(msg));
	if (r < 0) {
		archive_set_error(a, -r, "%s", msg);
		return -1;
	}
	return 0;
}

static la_ssize_t source_read(struct archive *a, void *data, const void **buf)
{
	struct source *s = data;
	const char *msg = NULL;
	int err = 0;
	ssize_t n;

	if (!s->started) {
		enum dec_kind kind;

		s->started = true;
		n = raw_read(s, s->buf, sizeof(s->buf), &err, &msg);
		if (n > 0 && s->run)
			s->run->input_bytes += (uint64_t)n;
		kind = n > 0 ? decode_sniff(s->buf, (size_t)n) : DEC_NONE;
		if (n < 0 || kind == DEC_NONE) {
			if (n < 0)
				archive_set_error(a, err, "%s", msg);
			*buf = s->buf;
			return n;
		}
		if (source_start_decoder(a, s, kind, (size_t)n) < 0)
			return -1;
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
		else if (s->run)
			s->run->input_bytes += (uint64_t)n;
		*buf = s->buf;
		return n;
	}
	n = decode_read(s->dec, buf, &err, &msg);
	if (n < 0)
		archive_set_error(a, err, "%s", msg);
	if (n == 0)
		s->dec_eof = true;
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
	while (s->dec && !s->dec_eof) {
		const void *buf;
		const char *msg = NULL;
		int err = 0;
		ssize_t n = decode_read(s->dec, &buf, &err, &msg);

		if (n < 0) {
			archive_set_error(a, err, "%s", msg);
			return false;
		}
		if (n == 0)
			s->dec_eof = true;
	}
	return true;
}

static la_int64_t source_skip(struct archive *a, void *data, la_int64_t request)
{
	struct source *s = data;
	off_t from, to;

	if (!s->seekable || s->dec || s->outer)
		return 0;	/* libarchive reads and discards instead */
	from = lseek(s->fd, 0, SEEK_CUR);
	if (from < 0)
		return 0;
	/* lseek happily goes past the end; a truncated archive must not
	 * look complete, so never skip further than the file is long. */
	to = from + (off_t)request > s->size ? s->size : from + (off_t)request;
	if (to < from || lseek(s->fd, to, SEEK_SET) < 0)
		return 0;
	return to - from;
}

static la_int64_t source_seek(struct archive *a, void *data, la_int64_t offset,
			      int whence)
{
	struct source *s = data;
	off_t r;

	if (s->dec || s->dec_eof)
		return ARCHIVE_FATAL;	/* decoded data cannot seek */
	r = lseek(s->fd, (off_t)offset, whence);
	return r < 0 ? ARCHIVE_FATAL : r;
}

static int source_close(struct archive *a, void *data)
{
	struct source *s = data;

	/* The fd is the caller's. */
	if (s->run) {
		if (s->run->input == s)
			s->run->input = NULL;
		for (struct source **p = &s->run->sources; *p; p = &(*p)->next) {
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
static bool formats_known(const char *list)
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
 * A reader on S for FORMATS; S belongs to it from here on (its close
 * callback frees S, even when opening fails).
 */
static int open_reader(se_run *run, struct source *s, const char *formats,
		       struct archive **ap)
{
	struct archive *a;
	int err;

	a = archive_read_new();
	if (!a) {
		free(s);
		return -ENOMEM;
	}
	s->ar = a;
	s->run = run;
	s->next = run->sources;
	run->sources = s;
	archive_read_support_filter_all(a);
	enable_formats(a, formats);
	/* tar -i: go on past the zero blocks that end each of several
	 * concatenated archives. */
	if (run->opts & SE_OPT_IGNORE_ZEROS)
		archive_read_set_format_option(a, "tar", "read_concatenated_archives", "1");
	archive_read_set_callback_data(a, s);
	archive_read_set_read_callback(a, source_read);
	archive_read_set_skip_callback(a, source_skip);
	if (s->seekable)
		archive_read_set_seek_callback(a, source_seek);
	archive_read_set_close_callback(a, source_close);
	run->input = s;
	run->input_bytes = 0;
	if (archive_read_open1(a) != ARCHIVE_OK) {
		/* s is gone: libarchive closed it. */
		bool empty = run->input_bytes == 0;

		if (run->cancelled) {
			err = -EINTR;
			run_log(run, SE_LOG_ERROR, "cannot read the archive: interrupted");
		} else if (empty) {
			/* As GNU tar: a failed download piped into us must
			 * not look like an empty success. */
			err = -ENODATA;
			run_log(run, SE_LOG_ERROR, "cannot read the archive: it is empty");
		} else {
			err = archive_errno(a) > 0 ? -archive_errno(a) : -EILSEQ;
			run_log(run, SE_LOG_ERROR, "cannot read the archive: %s",
				run_archive_msg(a));
		}
		archive_read_free(a);
		run->input = NULL;
		return err;
	}
	*ap = a;
	return 0;
}

SE_EXPORT int se_run_open_fd(se_run *run, int fd, const char *formats,
			     struct archive **ap)
{
	struct source *s;
	struct stat st;

	*ap = NULL;
	if (!formats_known(formats))
		return -EINVAL;
	if (run->input) {
		run_log(run, SE_LOG_ERROR, "an archive of this run is still open");
		return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->wake[0] = s->wake[1] = -1;
	s->fd = fd;
	s->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	s->size = s->seekable ? st.st_size : 0;
	return open_reader(run, s, formats, ap);
}

/* Is NAME a package's payload: data.tar, data.tar.gz, data.tar.xz ...? */
static bool is_payload(const char *name)
{
	return strcmp(name, "data.tar") == 0 || strncmp(name, "data.tar.", 9) == 0;
}

SE_EXPORT int se_run_open_member(se_run *run, struct archive *outer,
				 const char *member, struct archive **ap)
{
	struct archive_entry *e;
	struct source *s;
	int r;

	*ap = NULL;
	for (;;) {
		const char *name;

		r = archive_read_next_header(outer, &e);
		if (r == ARCHIVE_EOF) {
			run_log(run, SE_LOG_ERROR, "no member '%s' in the archive",
				member ? member : "data.tar*");
			return -ENOENT;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			run_log(run, SE_LOG_ERROR, "cannot read the archive: %s",
				run_archive_msg(outer));
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
	if (run->input && run->input->ar == outer)
		run->input = NULL;
	return open_reader(run, s, NULL, ap);
}

int input_finish(se_run *run, struct archive *a)
{
	struct source *s = run->input;

	/* Only a reader se_run_open_fd() made has a stream to check. */
	if (!s || s->ar != a)
		return 0;
	if (!source_drain(a, s))
		return -EILSEQ;
	return 0;
}

void input_release(se_run *run)
{
	/* Readers may outlive the run (the caller frees them): they must not
	 * reach back into it then. */
	for (struct source *s = run->sources; s; s = s->next) {
		/* A decoder thread looks at the run's cancel flag. */
		if (s->dec) {
			source_stop_decoder(s);
			s->dec_eof = true;
		}
		s->run = NULL;
	}
	run->sources = NULL;
	run->input = NULL;
}
