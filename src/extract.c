/*
 * extract.c - the libarchive read loop: one entry at a time, streamed.
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
#include <zlib.h>

#include "extract.h"
#include "names.h"
#include "write.h"

volatile sig_atomic_t se_interrupted;

static const char *type_name(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return "hardlink";
	switch (archive_entry_filetype(e)) {
	case AE_IFREG: return "file";
	case AE_IFDIR: return "directory";
	case AE_IFLNK: return "symlink";
	case AE_IFIFO: return "fifo";
	case AE_IFCHR: return "char-device";
	case AE_IFBLK: return "block-device";
	case AE_IFSOCK: return "socket";
	default: return "unknown";
	}
}

/*
 * libarchive's message for its last error.  Some of its fatal paths set no
 * string (a newc header whose name runs past the end of the input), and a
 * NULL through "%s" would print "(null)" or crash.
 */
static const char *archive_msg(struct archive *a)
{
	const char *msg = archive_error_string(a);

	if (msg)
		return msg;
	return archive_errno(a) > 0 ? strerror(archive_errno(a)) :
	       "damaged or truncated (no detail from libarchive)";
}

/*
 * The archive's bytes come through these callbacks rather than
 * archive_read_open_filename(), which retries a read() that a signal
 * interrupted: SIGINT on a stalled pipe would never be seen, and the
 * temporary file of the entry being written would stay behind.  The signal
 * handler writes to a self-pipe that the read waits on next to the input.
 */
#define READ_BLOCK (128 * 1024)

struct source {
	int fd;
	bool seekable;
	off_t size;
	uint64_t *raw_total;		/* bytes read from fd, in the run */
	bool started;			/* the first block has been looked at */
	/*
	 * gzip is decoded here rather than by libarchive, whose reader does
	 * not check a member's CRC32 and ISIZE trailer: a .tar.gz with a
	 * damaged stored block would extract wrong data with exit 0.
	 * zlib's gzip mode checks both at the end of every member.
	 */
	bool gz;
	bool gz_done;			/* the last member ended */
	bool raw_eof;
	z_stream zs;
	unsigned char buf[READ_BLOCK];
	unsigned char out[READ_BLOCK];
};

static int sig_pipe[2] = { -1, -1 };

/* Every signal whose default action ends the process and that can be
 * caught: each would otherwise leave the live temporary behind (SIGPIPE
 * from "-v | head", SIGXFSZ from "ulimit -f", SIGQUIT, SIGUSR1 ...). */
static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
	SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

static void on_signal(int sig)
{
	int e = errno;

	se_interrupted = sig;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], "", 1) < 0) {
		/* full pipe: the flag alone is enough */
	}
	errno = e;
}

void extract_install_signals(void)
{
	struct sigaction sa;

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		sig_pipe[0] = sig_pipe[1] = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
		struct sigaction old;

		/* An ignored SIGHUP (nohup) or SIGPIPE stays ignored: a hangup
		 * does not end the run, and a closed stdout makes the write
		 * fail with EPIPE, which ends it through the output check.
		 * Others are caught even when ignored: a shell starts
		 * background jobs with SIGINT ignored, and kill -INT must
		 * still leave no temporary. */
		if ((fatal_signals[i] == SIGHUP || fatal_signals[i] == SIGPIPE) &&
		    sigaction(fatal_signals[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* Read the next raw block of the archive into s->buf. */
static la_ssize_t raw_read(struct archive *a, struct source *s)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = s->fd, .events = POLLIN },
			{ .fd = sig_pipe[0], .events = POLLIN },
		};
		ssize_t n;

		if (se_interrupted) {
			archive_set_error(a, EINTR, "interrupted");
			return -1;
		}
		if (!s->seekable && poll(p, 2, -1) < 0 && errno != EINTR) {
			archive_set_error(a, errno, "cannot wait for the archive");
			return -1;
		}
		if (se_interrupted)
			continue;
		n = read(s->fd, s->buf, sizeof(s->buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			archive_set_error(a, errno, "cannot read the archive");
			return -1;
		}
		*s->raw_total += (uint64_t)n;
		return n;
	}
}

/* Decode the next block of gzip data into s->out. */
static la_ssize_t gz_read(struct archive *a, struct source *s)
{
	while (!s->gz_done) {
		int zr;

		if (s->zs.avail_in == 0 && !s->raw_eof) {
			la_ssize_t n = raw_read(a, s);

			if (n < 0)
				return -1;
			if (n == 0)
				s->raw_eof = true;
			s->zs.next_in = s->buf;
			s->zs.avail_in = (uInt)n;
		}
		s->zs.next_out = s->out;
		s->zs.avail_out = sizeof(s->out);
		zr = inflate(&s->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			/* Another member may follow (gzip -c a b), or the
			 * zero padding of a tape record; nothing else. */
			for (;;) {
				la_ssize_t n;

				while (s->zs.avail_in > 0 && s->zs.next_in[0] == 0) {
					s->zs.next_in++;
					s->zs.avail_in--;
				}
				if (s->zs.avail_in > 0 || s->raw_eof)
					break;
				n = raw_read(a, s);
				if (n < 0)
					return -1;
				s->raw_eof = n == 0;
				s->zs.next_in = s->buf;
				s->zs.avail_in = (uInt)n;
			}
			if (s->zs.avail_in == 0) {
				s->gz_done = true;
			} else if (s->zs.next_in[0] == 0x1f) {
				inflateReset(&s->zs);
			} else {
				archive_set_error(a, EILSEQ,
						  "gzip: data after the last member");
				return -1;
			}
		} else if (zr == Z_BUF_ERROR && s->zs.avail_in == 0 && s->raw_eof) {
			archive_set_error(a, EILSEQ,
					  "gzip: truncated input");
			return -1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			archive_set_error(a, EILSEQ, "gzip: %s",
					  s->zs.msg ? s->zs.msg : "damaged data");
			return -1;
		}
		if (s->zs.avail_out < sizeof(s->out))
			return (la_ssize_t)(sizeof(s->out) - s->zs.avail_out);
	}
	return 0;
}

static la_ssize_t source_read(struct archive *a, void *data, const void **buf)
{
	struct source *s = data;
	la_ssize_t n;

	if (!s->started) {
		s->started = true;
		n = raw_read(a, s);
		if (n < 2 || s->buf[0] != 0x1f || s->buf[1] != 0x8b) {
			*buf = s->buf;
			return n;
		}
		/* 16 + MAX_WBITS: the gzip wrapper, trailer checked. */
		if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK) {
			archive_set_error(a, ENOMEM, "gzip: cannot start the decoder");
			return -1;
		}
		s->gz = true;
		s->zs.next_in = s->buf;
		s->zs.avail_in = (uInt)n;
	}
	if (!s->gz) {
		n = raw_read(a, s);
		*buf = s->buf;
		return n;
	}
	n = gz_read(a, s);
	*buf = s->out;
	return n;
}

/*
 * After the archive's last entry: read the rest of a gzip stream, so that
 * its trailer is checked even when the archive format stopped early (tar
 * stops at its end blocks).  False, with the error set, when damaged.
 */
static bool source_finish(struct archive *a, struct source *s)
{
	while (s->gz && !s->gz_done) {
		la_ssize_t n = gz_read(a, s);

		if (n < 0)
			return false;
		if (n == 0)
			break;
	}
	return true;
}

static la_int64_t source_skip(struct archive *a, void *data, la_int64_t request)
{
	struct source *s = data;
	off_t from, to;

	if (!s->seekable || s->gz)
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

	if (s->gz)
		return ARCHIVE_FATAL;	/* decoded data cannot seek */
	r = lseek(s->fd, (off_t)offset, whence);
	return r < 0 ? ARCHIVE_FATAL : r;
}

static int source_close(struct archive *a, void *data)
{
	struct source *s = data;

	if (s->fd > STDIN_FILENO)
		close(s->fd);
	if (s->gz)
		inflateEnd(&s->zs);
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
} formats[] = {
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

bool extract_format_known(const char *name)
{
	if (strcmp(name, "all") == 0 || strcmp(name, "7z") == 0)
		return true;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(formats[i].name, name) == 0)
			return true;
	return false;
}

/* The default formats, widened by --format=LIST (comma-separated). */
static void enable_formats(struct archive *a, const char *list)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		bool want = formats[i].by_default;
		const char *p = list;

		while (!want && p && *p) {
			size_t len = strcspn(p, ",");

			want = (len == 3 && strncmp(p, "all", 3) == 0) ||
			       (len == strlen(formats[i].name) &&
				strncmp(p, formats[i].name, len) == 0) ||
			       (len == 2 && strncmp(p, "7z", 2) == 0 &&
				strcmp(formats[i].name, "7zip") == 0);
			p += len + (p[len] == ',');
		}
		if (want)
			formats[i].enable(a);
	}
}

static struct archive *open_archive(struct run *run)
{
	const char *file = run->opt.archive;
	struct archive *a;
	struct source *s;
	struct stat st;

	if (file && strcmp(file, "-") == 0)
		file = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->raw_total = &run->input_bytes;
	/* The archive is named by the user, not by an archive: a plain open. */
	s->fd = file ? open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
	if (s->fd < 0) {
		warnx_msg("cannot open archive '%s': %s", file, strerror(errno));
		free(s);
		return NULL;
	}
	s->seekable = fstat(s->fd, &st) == 0 && S_ISREG(st.st_mode);
	s->size = s->seekable ? st.st_size : 0;

	a = archive_read_new();
	if (!a) {
		source_close(NULL, s);
		return NULL;
	}
	archive_read_support_filter_all(a);
	enable_formats(a, run->opt.formats);
	archive_read_set_callback_data(a, s);
	archive_read_set_read_callback(a, source_read);
	archive_read_set_skip_callback(a, source_skip);
	if (s->seekable)
		archive_read_set_seek_callback(a, source_seek);
	archive_read_set_close_callback(a, source_close);
	if (archive_read_open1(a) != ARCHIVE_OK) {
		/* s is gone: libarchive closed it. */
		if (run->input_bytes == 0 && !se_interrupted)
			warnx_msg("cannot read archive '%s': it is empty", file ? file : "-");
		else
			warnx_msg("cannot read archive '%s': %s", file ? file : "-",
				  archive_msg(a));
		archive_read_free(a);
		return NULL;
	}
	run->src = s;
	return a;
}

/* Clean NAME (and a hardlink's TARGET) or say why not. */
static bool clean_entry_name(struct run *run, const char *raw, char *out,
			     bool is_dir, struct outcome *o, bool *absolute)
{
	enum name_verdict v = names_clean(raw, run->opt.strip_components, out,
					  absolute);

	if (v == NAME_STRIPPED_AWAY)
		*absolute = false;
	switch (v) {
	case NAME_OK:
		return true;
	case NAME_ROOT:
		if (is_dir)
			return true;
		*o = (struct outcome){ ACT_REFUSED, "empty name", EINVAL, false };
		return false;
	case NAME_STRIPPED_AWAY:
		*o = (struct outcome){ ACT_SKIPPED, names_verdict_reason(v), 0, false };
		return false;
	case NAME_TOO_LONG:
		*o = (struct outcome){ ACT_REFUSED, names_verdict_reason(v),
				       ENAMETOOLONG, false };
		return false;
	default:
		*o = (struct outcome){ ACT_REFUSED, names_verdict_reason(v), EINVAL,
				       false };
		return false;
	}
}

static struct outcome one_entry(struct run *run, struct archive_entry *e,
				const char *raw, char *path)
{
	static char target[SE_PATH_MAX];
	const char *hardlink = archive_entry_hardlink(e);
	bool is_dir = !hardlink && archive_entry_filetype(e) == AE_IFDIR;
	bool absolute, target_absolute;
	struct outcome o;

	if (!clean_entry_name(run, raw, path, is_dir, &o, &absolute)) {
		/* As tar: members the command line did not select are not
		 * examined, so an unselected bad name is not a refusal. */
		if (run->opt.n_includes && o.act == ACT_REFUSED &&
		    !names_included(raw + strspn(raw, "/"), run->opt.includes,
				    run->opt.n_includes, NULL))
			return (struct outcome){ ACT_SKIPPED, "not selected", 0, false };
		return o;
	}
	if (!names_included(path, run->opt.includes, run->opt.n_includes,
			    run->pattern_hit) ||
	    names_excluded(path, run->opt.excludes, run->opt.n_excludes))
		return (struct outcome){ ACT_SKIPPED, "not selected", 0, false };
	if (hardlink) {
		/* CVE-2016-5418: a hardlink target gets the same name checks
		 * as a name, then the same scoped resolution. */
		if (!clean_entry_name(run, hardlink, target, false, &o,
				      &target_absolute)) {
			if (o.act == ACT_REFUSED)
				o.reason = o.err == ENAMETOOLONG ?
					   "hardlink target too long" :
					   "hardlink target is unsafe ('..' or empty)";
			return o;
		}
	}
	if (absolute && !run->warned_absolute) {
		warnx_msg("removing leading '/' from member names");
		run->warned_absolute = true;
	}
	if (run->opt.flags & OPT_LIST)
		return (struct outcome){ ACT_CREATED, NULL, 0, false };
	if (hardlink)
		return write_hardlink(run, e, path, target);
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return write_regular(run, e, path);
	case AE_IFDIR:
		return write_directory(run, e, path);
	case AE_IFLNK:
		return write_symlink(run, e, path);
	case AE_IFIFO:
	case AE_IFCHR:
	case AE_IFBLK:
	case AE_IFSOCK:
		return write_special(run, e, path);
	default:
		return (struct outcome){ ACT_REFUSED, "unknown entry type", EINVAL,
					 false };
	}
}

/* Stop the run when the listing or the report cannot be written: what
 * the caller reads would be incomplete (GNU tar exits 2 too). */
static bool output_broken(struct run *run)
{
	if (run->output_failed)
		return true;
	if (!report_failed(&run->rep))
		return false;
	warnx_msg("cannot write %s: %s", ferror(stdout) ? "standard output" :
		  "the report", strerror(errno ? errno : EIO));
	run->output_failed = true;
	return true;
}

/*
 * A warning from libarchive about a header: the entry may come out wrong
 * (an ISO9660 file whose data came before its directory record is read as
 * zeros), so it is failed, not written.  The one warning that loses
 * nothing is a name libarchive could not convert to the locale: the bytes
 * are kept as they are.
 */
static bool header_warning_harmless(struct archive_entry *e, const char *msg)
{
	return msg && (strstr(msg, "be converted") || strstr(msg, "Can't translate")) &&
	       (archive_entry_pathname(e) || archive_entry_pathname_utf8(e));
}

int extract_run(struct run *run)
{
	static char path[SE_PATH_MAX];
	struct archive_entry *e;
	char last[1024] = "";
	int status = EXIT_ALL_EXTRACTED;
	bool fatal = false, warned_charset = false;

	run->tmp.dirfd = -1;
	if (run->opt.n_includes) {
		run->pattern_hit = calloc(run->opt.n_includes, sizeof(bool));
		if (!run->pattern_hit)
			return EXIT_FATAL;
	}
	run->ar = open_archive(run);
	if (!run->ar) {
		free(run->pattern_hit);
		run->pattern_hit = NULL;
		return EXIT_FATAL;
	}

	for (;;) {
		const char *raw, *msg = NULL;
		struct outcome o;
		int r;

		if (se_interrupted) {
			char esc[1024];

			warnx_msg("interrupted at entry '%s'",
				  report_escape(last, esc, sizeof(esc)));
			fatal = true;
			break;
		}
		r = archive_read_next_header(run->ar, &e);
		if (r == ARCHIVE_EOF)
			break;
		/* ARCHIVE_RETRY is a damaged header that libarchive would skip
		 * past: a corrupt archive, so stop rather than guess. */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			char esc[1024];

			warnx_msg("archive unreadable after entry '%s': %s",
				  report_escape(last, esc, sizeof(esc)),
				  archive_msg(run->ar));
			fatal = true;
			break;
		}
		if (r == ARCHIVE_WARN)
			msg = archive_error_string(run->ar);
		/* In a locale that cannot hold the name (C), take the bytes
		 * libarchive decoded rather than refusing an "empty name". */
		raw = archive_entry_pathname(e);
		if (!raw)
			raw = archive_entry_pathname_utf8(e);
		if (!raw)
			raw = "";
		snprintf(last, sizeof(last), "%s", raw);
		run->entries++;

		if (r == ARCHIVE_WARN && header_warning_harmless(e, msg)) {
			if (!warned_charset)
				warnx_msg("warning: %s (names kept as they are)", msg);
			warned_charset = true;
			r = ARCHIVE_OK;
		}
		if (r == ARCHIVE_WARN) {
			snprintf(run->reason, sizeof(run->reason),
				 "archive header damaged: %s", msg ? msg : "libarchive warned");
			o = (struct outcome){ ACT_FAILED, run->reason, 0, false };
		} else {
			o = one_entry(run, e, raw, path);
		}
		if ((run->opt.flags & OPT_LIST) && o.act == ACT_CREATED) {
			char esc[SE_PATH_MAX * 4 + 8];

			printf("%s\n", report_escape(path[0] ? path : ".", esc,
						     sizeof(esc)));
		} else {
			outcome_report(run, raw, type_name(e), o);
		}
		if (o.fatal) {
			char esc[1024], why[1024];

			warnx_msg("stopped at entry '%s': %s%s%s",
				  report_escape(raw, esc, sizeof(esc)),
				  report_sanitize(o.reason, why, sizeof(why)),
				  o.err ? ": " : "", o.err ? strerror(o.err) : "");
			fatal = true;
			break;
		}
		if (output_broken(run)) {
			fatal = true;
			break;
		}
		report_progress(&run->rep, run->entries, run->bytes, false);
	}

	/* The whole input is checked before anything is committed: a gzip
	 * trailer that does not match stops a --durable run before its
	 * renames. */
	if (!fatal && !source_finish(run->ar, run->src)) {
		warnx_msg("archive damaged after its last entry: %s",
			  archive_msg(run->ar));
		fatal = true;
	}
	if (!fatal) {
		fflush(stdout);
		if (run->rep.json)
			fflush(run->rep.json);
		fatal = output_broken(run);
	}
	if (!fatal && !(run->opt.flags & OPT_LIST) && !write_finish(run))
		fatal = true;
	if (fatal)
		write_cleanup(run);
	report_progress(&run->rep, run->entries, run->bytes, true);
	archive_read_free(run->ar);
	run->ar = NULL;
	run->src = NULL;
	write_free(run);

	if (fatal)
		status = EXIT_FATAL;
	else if (run->refused || run->failed)
		status = EXIT_SOME_REFUSED;
	/* As GNU tar: a member named on the command line that the archive
	 * does not hold is an error of the whole run. */
	for (size_t i = 0; i < run->opt.n_includes && !fatal; i++) {
		if (run->pattern_hit[i])
			continue;
		warnx_msg("%s: Not found in archive", run->opt.includes[i]);
		status = EXIT_FATAL;
	}
	free(run->pattern_hit);
	run->pattern_hit = NULL;
	return status;
}
