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
	unsigned char buf[READ_BLOCK];
};

static int sig_pipe[2] = { -1, -1 };

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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static la_ssize_t source_read(struct archive *a, void *data, const void **buf)
{
	struct source *s = data;

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
		*buf = s->buf;
		return n;
	}
}

static la_int64_t source_skip(struct archive *a, void *data, la_int64_t request)
{
	struct source *s = data;
	off_t from, to;

	if (!s->seekable)
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
	off_t r = lseek(s->fd, (off_t)offset, whence);

	return r < 0 ? ARCHIVE_FATAL : r;
}

static int source_close(struct archive *a, void *data)
{
	struct source *s = data;

	if (s->fd > STDIN_FILENO)
		close(s->fd);
	free(s);
	return ARCHIVE_OK;
}

static struct archive *open_archive(struct run *run)
{
	const char *file = run->opt.archive;
	struct archive *a;
	struct source *s;
	struct stat st;

	if (file && strcmp(file, "-") == 0)
		file = NULL;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
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
	archive_read_support_format_all(a);
	archive_read_set_callback_data(a, s);
	archive_read_set_read_callback(a, source_read);
	archive_read_set_skip_callback(a, source_skip);
	if (s->seekable)
		archive_read_set_seek_callback(a, source_seek);
	archive_read_set_close_callback(a, source_close);
	if (archive_read_open1(a) != ARCHIVE_OK) {
		warnx_msg("cannot read archive '%s': %s", file ? file : "-",
			  archive_error_string(a));
		archive_read_free(a);
		return NULL;
	}
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
				    run->opt.n_includes))
			return (struct outcome){ ACT_SKIPPED, "not selected", 0, false };
		return o;
	}
	if (!names_included(path, run->opt.includes, run->opt.n_includes) ||
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

int extract_run(struct run *run)
{
	static char path[SE_PATH_MAX];
	struct archive_entry *e;
	char last[1024] = "";
	int status = EXIT_ALL_EXTRACTED;
	bool fatal = false;

	run->tmp.dirfd = -1;
	run->ar = open_archive(run);
	if (!run->ar)
		return EXIT_FATAL;

	for (;;) {
		const char *raw;
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
		if (r == ARCHIVE_WARN)
			warnx_msg("%s", archive_error_string(run->ar));
		else if (r != ARCHIVE_OK) {
			char esc[1024];

			warnx_msg("archive unreadable after entry '%s': %s",
				  report_escape(last, esc, sizeof(esc)),
				  archive_error_string(run->ar));
			fatal = true;
			break;
		}
		raw = archive_entry_pathname(e);
		if (!raw)
			raw = "";
		snprintf(last, sizeof(last), "%s", raw);
		run->entries++;

		o = one_entry(run, e, raw, path);
		if (run->opt.flags & OPT_LIST) {
			if (o.act == ACT_CREATED) {
				char esc[SE_PATH_MAX * 4 + 8];

				printf("%s\n", report_escape(path[0] ? path : ".", esc,
							     sizeof(esc)));
			} else {
				outcome_report(run, raw, type_name(e), o);
			}
			continue;
		}
		outcome_report(run, raw, type_name(e), o);
		if (o.fatal) {
			char esc[1024];

			warnx_msg("stopped at entry '%s': %s%s%s",
				  report_escape(raw, esc, sizeof(esc)), o.reason,
				  o.err ? ": " : "", o.err ? strerror(o.err) : "");
			fatal = true;
			break;
		}
		report_progress(&run->rep, run->entries, run->bytes, false);
	}

	if (!fatal && !(run->opt.flags & OPT_LIST) && !write_finish(run))
		fatal = true;
	if (fatal)
		write_cleanup(run);
	report_progress(&run->rep, run->entries, run->bytes, true);
	archive_read_free(run->ar);
	run->ar = NULL;
	write_free(run);

	if (fatal)
		status = EXIT_FATAL;
	else if (run->refused || run->failed)
		status = EXIT_SOME_REFUSED;
	return status;
}
