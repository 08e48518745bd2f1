/*
 * run.c - one extraction: the run's life, and each entry from its header
 * to its outcome.
 *
 * An entry goes one way: the caller's BEFORE callback may change it; its
 * name is cleaned and checked once (names.c); the writer resolves it once
 * into a parent fd and a leaf (resolve.c) and, once the object exists,
 * changes it only through an fd of it; the outcome goes to the AFTER
 * callback and the report.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "names.h"
#include "report.h"
#include "write.h"

SE_EXPORT const char *se_version(void)
{
	return PACKAGE_VERSION;
}

void run_log(se_run *run, int level, const char *fmt, ...)
{
	char msg[4096], safe[4096 * 4 + 8];
	va_list ap;

	if (!run->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Every message may quote libarchive or the archive: one filter for
	 * all of them rather than a check at each call. */
	run->log(run->log_data, level, report_sanitize(msg, safe, sizeof(safe)));
}

const char *run_type_name(struct archive_entry *e)
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
const char *run_archive_msg(struct archive *a)
{
	const char *msg = archive_error_string(a);

	if (msg)
		return msg;
	return archive_errno(a) > 0 ? strerror(archive_errno(a)) :
	       "damaged or truncated (no detail from libarchive)";
}

void run_report(se_run *run, struct archive_entry *e, const char *name,
		const char *path, const char *type, struct outcome o)
{
	char why[1024];

	/* Reasons can quote libarchive, which quotes the archive. */
	if (o.reason)
		o.reason = report_sanitize(o.reason, why, sizeof(why));
	if (o.act == SE_REFUSED)
		run->refused++;
	else if (o.act == SE_FAILED || o.act == SE_INCOMPLETE)
		run->failed++;
	if (run->report_fd >= 0 && !run->report_failed) {
		int r = report_json(run->report_fd, name, type, o.act, o.reason,
				    o.err);

		if (r < 0) {
			run->report_failed = true;
			run->fatal = true;
			run_log(run, SE_LOG_ERROR, "cannot write the report: %s",
				strerror(-r));
		}
	}
	if (run->cb) {
		struct se_entry se = {
			.size = sizeof(se),
			.stage = SE_AFTER,
			/* With writer threads the header is gone by the time a
			 * file is placed: none, for every entry alike. */
			.entry = run->jobs > 1 ? NULL : e,
			.path = path,
			.action = o.act,
			.error = o.err,
			.reason = o.reason,
			.type = type,
			.name = name,
			.bytes = run->entry_bytes,
			.sha256 = run->have_digest ? run->digest : NULL,
		};

		if (run->cb(run->cb_data, &se) == SE_ABORT)
			run->fatal = true;
	}
}

/* ---- the run ---------------------------------------------------------- */

/*
 * The process's umask, read without changing it (umask(2) can only set
 * it): the kernel applies it to every object created, so modes that must
 * be exact are fixed afterwards with fchmod.  Unknown: assume it masks
 * everything, which makes every mode be set explicitly.
 */
static mode_t process_umask(void)
{
	char line[128];
	mode_t m = 0777;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		unsigned int v;

		if (sscanf(line, "Umask: %o", &v) == 1) {
			m = (mode_t)v & 0777;
			break;
		}
	}
	fclose(f);
	return m;
}

SE_EXPORT se_run *se_run_new(se_root *root, unsigned long long opts)
{
	se_run *run = calloc(1, sizeof(*run));

	if (!run)
		return NULL;
	run->root = root;
	run->rs = root ? &root->rs : NULL;
	run->opts = opts;
	/* Skipping an existing name is keeping it, quietly. */
	if (opts & SE_OPT_SKIP_OLD)
		run->opts |= SE_OPT_KEEP_OLD;
	/* Without a root there is nothing to write into: a listing. */
	if (!root)
		run->opts |= SE_OPT_DRY_RUN;
	run->umask = 022;
	run->jobs = 1;
	run->xz_memlimit = SE_XZ_MEMLIMIT_DEFAULT;
	run->proc_umask = process_umask();
	run->is_root = geteuid() == 0;
	run->report_fd = -1;
	run->data_fd = -1;
	run->tmp.dirfd = -1;
	if (pipe2(run->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		run->cancel_pipe[0] = run->cancel_pipe[1] = -1;
	return run;
}

SE_EXPORT void se_run_set_umask(se_run *run, mode_t mask)
{
	run->umask = mask & 0777;
}

SE_EXPORT int se_run_set_jobs(se_run *run, unsigned int n)
{
	if (n == 0 || n > SE_JOBS_MAX)
		return -EINVAL;
	run->jobs = n;
	return 0;
}

SE_EXPORT int se_run_set_xz_memlimit(se_run *run, uint64_t bytes)
{
	if (bytes == 0)
		return -EINVAL;
	run->xz_memlimit = bytes;
	return 0;
}

SE_EXPORT int se_run_set_strip_components(se_run *run, int n)
{
	if (n < 0 || n > SE_PATH_MAX)
		return -EINVAL;
	run->strip_components = n;
	return 0;
}

static int list_add(struct pattern_list *l, const char *s)
{
	char **nv, *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[l->n++] = copy;
	l->v = nv;
	return 0;
}

static void list_free(struct pattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

SE_EXPORT int se_run_add_include(se_run *run, const char *pattern)
{
	bool *hit = realloc(run->pattern_hit, (run->includes.n + 1) * sizeof(*hit));

	if (!hit)
		return -ENOMEM;
	run->pattern_hit = hit;
	hit[run->includes.n] = false;
	return list_add(&run->includes, pattern);
}

SE_EXPORT int se_run_set_occurrence(se_run *run, unsigned int n)
{
	run->occurrence = n;
	return 0;
}

SE_EXPORT int se_run_add_exclude(se_run *run, const char *glob)
{
	return list_add(&run->excludes, glob);
}

SE_EXPORT const char *se_run_unmatched(const se_run *run, size_t i)
{
	for (size_t k = 0; k < run->includes.n; k++) {
		if (run->pattern_hit[k])
			continue;
		if (i-- == 0)
			return run->includes.v[k];
	}
	return NULL;
}

SE_EXPORT int se_run_xattrs_include(se_run *run, const char *glob)
{
	return list_add(&run->xattr_includes, glob);
}

SE_EXPORT int se_run_xattrs_exclude(se_run *run, const char *glob)
{
	return list_add(&run->xattr_excludes, glob);
}

SE_EXPORT int se_run_set_callback(se_run *run, se_entry_cb *cb, void *data)
{
	run->cb = cb;
	run->cb_data = data;
	return 0;
}

SE_EXPORT int se_run_set_log(se_run *run, se_log_cb *cb, void *data)
{
	run->log = cb;
	run->log_data = data;
	return 0;
}

SE_EXPORT int se_run_set_data_fd(se_run *run, int fd)
{
	if (fd < 0)
		return -EBADF;
	run->data_fd = fd;
	/* Nothing is created: the destination is not touched. */
	run->opts |= SE_OPT_DRY_RUN;
	return 0;
}

SE_EXPORT int se_run_set_report_fd(se_run *run, int fd)
{
	if (fd < 0)
		return -EBADF;
	run->report_fd = fd;
	return 0;
}

int run_cancel_fd(const se_run *run)
{
	return run->cancel_pipe[0];
}

SE_EXPORT void se_run_cancel(se_run *run)
{
	int e = errno;

	run->cancelled = 1;
	/* Wake a read waiting for input; a full pipe is awake already. */
	if (run->cancel_pipe[1] >= 0 && write(run->cancel_pipe[1], "", 1) < 0) {
		/* nothing to do */
	}
	errno = e;
}

SE_EXPORT int se_run_stats(const se_run *run, struct se_stats *st)
{
	struct se_stats s = {
		.size = sizeof(s),
		.entries = run->entries,
		.bytes = run->bytes,
		.refused = run->refused,
		.failed = run->failed,
	};

	if (!st || st->size < sizeof(s))
		return -EINVAL;
	*st = s;
	return 0;
}

SE_EXPORT void se_run_free(se_run *run)
{
	if (!run)
		return;
	/* Nothing half-made outlives the run, finished or not. */
	write_cleanup(run);
	writers_free(run);
	write_free(run);
	list_free(&run->includes);
	list_free(&run->excludes);
	list_free(&run->xattr_includes);
	list_free(&run->xattr_excludes);
	free(run->pattern_hit);
	map_free(&run->seen_names);
	free(run->passwd_db);
	free(run->group_db);
	input_release(run);	/* the readers are the caller's to free */
	for (int i = 0; i < 2; i++)
		if (run->cancel_pipe[i] >= 0)
			close(run->cancel_pipe[i]);
	free(run);
}

/* ---- one entry -------------------------------------------------------- */

/* Clean NAME (and a hardlink's TARGET) or say why not. */
static bool clean_entry_name(se_run *run, const char *raw, char *out,
			     bool is_dir, struct outcome *o, bool *absolute)
{
	enum name_verdict v = names_clean(raw, run->strip_components, out,
					  absolute);

	if (v == NAME_STRIPPED_AWAY)
		*absolute = false;
	switch (v) {
	case NAME_OK:
		return true;
	case NAME_ROOT:
		if (is_dir)
			return true;
		*o = (struct outcome){ SE_REFUSED, "empty name", EINVAL, false };
		return false;
	case NAME_STRIPPED_AWAY:
		*o = (struct outcome){ SE_SKIPPED, names_verdict_reason(v), 0, false };
		return false;
	case NAME_TOO_LONG:
		*o = (struct outcome){ SE_REFUSED, names_verdict_reason(v),
				       ENAMETOOLONG, false };
		return false;
	default:
		*o = (struct outcome){ SE_REFUSED, names_verdict_reason(v), EINVAL,
				       false };
		return false;
	}
}

static struct outcome one_entry(se_run *run, struct archive_entry *e,
				const char *raw, char *path)
{
	char *target = run->target;
	const char *hardlink = archive_entry_hardlink(e);
	bool is_dir = !hardlink && archive_entry_filetype(e) == AE_IFDIR;
	bool absolute, target_absolute;
	struct outcome o;

	if (!clean_entry_name(run, raw, path, is_dir, &o, &absolute)) {
		/* As tar: members the command line did not select are not
		 * examined, so an unselected bad name is not a refusal. */
		if (run->includes.n && o.act == SE_REFUSED &&
		    !names_included(raw + strspn(raw, "/"), run->includes.v,
				    run->includes.n, run->opts & SE_OPT_LITERAL_NAMES, NULL))
			return (struct outcome){ SE_SKIPPED, "not selected", 0, false };
		return o;
	}
	if (!names_included(path, run->includes.v, run->includes.n,
			    run->opts & SE_OPT_LITERAL_NAMES, run->pattern_hit) ||
	    names_excluded(path, run->excludes.v, run->excludes.n))
		return (struct outcome){ SE_SKIPPED, "not selected", 0, false };
	if (run->occurrence && run->includes.n) {
		size_t seen = map_get(&run->seen_names, path);

		seen = seen == MAP_NONE ? 1 : seen + 1;
		if (!map_put(&run->seen_names, path, seen))
			return (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
		if (seen != run->occurrence)
			return (struct outcome){ SE_SKIPPED, "not the occurrence asked for", 0, false };
	}
	if (hardlink) {
		/* CVE-2016-5418: a hardlink target gets the same name checks
		 * as a name, then the same scoped resolution. */
		if (!clean_entry_name(run, hardlink, target, false, &o,
				      &target_absolute)) {
			if (o.act == SE_REFUSED)
				o.reason = o.err == ENAMETOOLONG ?
					   "hardlink target too long" :
					   "hardlink target is unsafe ('..' or empty)";
			return o;
		}
	}
	if (absolute && !run->warned_absolute) {
		/* After the messages of the entries before it. */
		if (!writers_collect(run, true))
			return queued_outcome();
		run_log(run, SE_LOG_WARNING, "removing leading '/' from member names");
		run->warned_absolute = true;
	}
	if (run->data_fd >= 0) {
		if (hardlink || archive_entry_filetype(e) != AE_IFREG)
			return (struct outcome){ SE_SKIPPED, "not a regular file", 0, false };
		return copy_data(run, e, run->data_fd);
	}
	if (run->opts & SE_OPT_DRY_RUN)
		return (struct outcome){ SE_CREATED, NULL, 0, false };
	/* With writer threads, what this entry does to names must come
	 * after the files in flight that it could touch (writers.c). */
	if (writers_busy(run)) {
		mode_t t = archive_entry_filetype(e);
		bool ordered = hardlink || (t != AE_IFREG && t != AE_IFDIR &&
					    t != AE_IFLNK);

		if (!writers_wait_for(run, path, hardlink ? target : NULL, ordered))
			return queued_outcome();
	}
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
		return (struct outcome){ SE_REFUSED, "unknown entry type", EINVAL,
					 false };
	}
}


int run_stop_at(se_run *run, struct archive *a, const char *raw,
		struct outcome o)
{
	char esc[1024];

	run_log(run, SE_LOG_ERROR, "stopped at entry '%s': %s%s%s",
		se_escape(raw, esc, sizeof(esc)), o.reason ? o.reason : "fatal error",
		o.err ? ": " : "", o.err ? strerror(o.err) : "");
	run->fatal = true;
	if (a)
		archive_set_error(a, o.err ? o.err : EIO, "%s",
				  o.reason ? o.reason : "fatal error");
	return o.err ? -o.err : -EIO;
}

/* Report an entry's outcome now, or behind the files in flight. */
static void entry_report(se_run *run, struct archive_entry *e, const char *name,
			 const char *path, const char *type, struct outcome o)
{
	if (writers_busy(run) && !o.fatal)
		writers_report(run, e, name, path, type, o);
	else
		run_report(run, e, name, path, type, o);
}

/* The entry E, whose header was read with status HDR (ARCHIVE_OK or a
 * warning with message HDR_MSG). */
static int run_entry(se_run *run, struct archive *a, struct archive_entry *e,
		     int hdr, const char *hdr_msg)
{
	const char *raw, *type;
	struct outcome o;

	if (run->finished)
		return -EINVAL;
	if (run->fatal)
		return -ECANCELED;
	run->ar = a;
	/* Place and report the files writers have finished. */
	if (!writers_collect(run, false))
		return -ECANCELED;
	run->entry_bytes = 0;
	run->have_digest = false;
	run->entries++;

	if (run->cb) {
		struct se_entry se = { .size = sizeof(se), .stage = SE_BEFORE,
				       .entry = e };

		switch (run->cb(run->cb_data, &se)) {
		case SE_SKIP:
			raw = archive_entry_pathname(e);
			o = (struct outcome){ SE_SKIPPED, "skipped by the caller", 0, false };
			entry_report(run, e, raw ? raw : "", raw ? raw : "",
				     run_type_name(e), o);
			return run->fatal ? -ECANCELED : 0;
		case SE_ABORT:
			run->fatal = true;
			archive_set_error(a, ECANCELED, "aborted by the caller");
			return -ECANCELED;
		}
	}

	/* In a locale that cannot hold the name (C), take the bytes
	 * libarchive decoded rather than refusing an "empty name". */
	raw = archive_entry_pathname(e);
	if (!raw)
		raw = archive_entry_pathname_utf8(e);
	if (!raw)
		raw = "";
	snprintf(run->last, sizeof(run->last), "%s", raw);
	run->cur_raw = raw;
	type = run_type_name(e);
	run->path[0] = '\0';

	if (hdr == ARCHIVE_WARN) {
		snprintf(run->reason, sizeof(run->reason),
			 "archive header damaged: %s", hdr_msg ? hdr_msg : "libarchive warned");
		o = (struct outcome){ SE_FAILED, run->reason, 0, false };
	} else {
		o = one_entry(run, e, raw, run->path);
	}
	/* A file for a writer thread: reported when placed. */
	if (o.act == ACT_QUEUED)
		return run->fatal ? -ECANCELED : 0;
	/* A fatal outcome: the files before it are placed and reported
	 * first, as when they were written one by one. */
	if (o.fatal && !writers_collect(run, true))
		return -ECANCELED;
	/* The name used, or the raw one when it was refused before cleaning. */
	entry_report(run, e, raw, run->path[0] || o.act == SE_CREATED ||
		     o.act == SE_REPLACED ? run->path : raw, type, o);
	if (o.fatal)
		return run_stop_at(run, a, raw, o);
	if (run->fatal)
		return -ECANCELED;
	if (o.act == SE_REFUSED || o.act == SE_FAILED)
		archive_set_error(a, o.err ? o.err : EINVAL, "%s: %s", raw,
				  o.reason ? o.reason : se_action_name(o.act));
	return 0;
}

SE_EXPORT int se_run_entry(se_run *run, struct archive *a, struct archive_entry *e)
{
	return run_entry(run, a, e, ARCHIVE_OK, NULL);
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


SE_EXPORT int se_run_archive(se_run *run, struct archive *a)
{
	struct archive_entry *e;
	bool warned_charset = false;
	char esc[1024];
	int r, ret;

	if (run->finished)
		return -EINVAL;
	run->last[0] = '\0';
	for (;;) {
		const char *msg = NULL;

		if (run->fatal)
			return -ECANCELED;
		if (run->cancelled) {
			run_log(run, SE_LOG_ERROR, "interrupted at entry '%s'",
				se_escape(run->last, esc, sizeof(esc)));
			run->fatal = true;
			return -EINTR;
		}
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			break;
		/* The files before a damaged header are placed and reported
		 * before it is. */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN && !writers_collect(run, true))
			return -ECANCELED;
		/* ARCHIVE_RETRY is a damaged header that libarchive would skip
		 * past: a corrupt archive, so stop rather than guess. */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			run_log(run, SE_LOG_ERROR, "archive unreadable after entry '%s': %s",
				se_escape(run->last, esc, sizeof(esc)),
				run_archive_msg(a));
			run->fatal = true;
			return archive_errno(a) > 0 ? -archive_errno(a) : -EILSEQ;
		}
		if (r == ARCHIVE_WARN) {
			msg = run_archive_msg(a);
			if (header_warning_harmless(e, msg)) {
				if (!warned_charset)
					run_log(run, SE_LOG_WARNING,
						"warning: %s (names kept as they are)", msg);
				warned_charset = true;
				r = ARCHIVE_OK;
			}
		}
		ret = run_entry(run, a, e, r, msg);
		if (ret < 0)
			return ret;
	}
	/* Every file of this archive at its name before the call returns. */
	if (!writers_collect(run, true))
		return -ECANCELED;
	/* The whole input is checked before anything is committed: a gzip
	 * trailer that does not match stops a --durable run before its
	 * renames. */
	ret = input_finish(run, a);
	if (ret < 0) {
		run_log(run, SE_LOG_ERROR, "archive damaged after its last entry: %s",
			run_archive_msg(a));
		run->fatal = true;
		return ret;
	}
	return 0;
}

SE_EXPORT int se_run_finish(se_run *run)
{
	if (run->finished)
		return run->fatal ? 2 : (run->refused || run->failed) ? 1 : 0;
	if (!run->fatal && run->cancelled) {
		run_log(run, SE_LOG_ERROR, "interrupted before the end of the run");
		run->fatal = true;
	}
	/* Files still in flight (a caller that drives se_run_entry() itself):
	 * their archive may be freed by now, and their data is not in it. */
	run->ar = NULL;
	if (!run->fatal)
		writers_collect(run, true);
	if (!run->fatal && !(run->opts & SE_OPT_DRY_RUN) && !write_finish(run))
		run->fatal = true;
	if (run->fatal)
		write_cleanup(run);
	write_free(run);
	run->finished = true;
	if (run->fatal || run->report_failed)
		return 2;
	return run->refused || run->failed ? 1 : 0;
}
