/*
 * run.c - a run: the public API's setters, its life, and the archive
 * loop that hands each entry to the entry stage (entry.c).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "image.h"
#include "input.h"
#include "internal.h"
#include "layer.h"
#include "report.h"

struct se_run {
	se_root *root;
	struct pipeline pl;		/* the entries' way, and their state */
	struct input in;		/* the readers this run made */
	int cancel_pipe[2];		/* written by se_run_cancel */
};

SE_EXPORT const char *se_version(void)
{
	return PACKAGE_VERSION;
}

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
	struct pipeline *pl;

	if (!run)
		return NULL;
	pl = &run->pl;
	pipe_init(pl);
	run->root = root;
	pl->rs = root ? &root->rs : NULL;
	pl->cm.rs = pl->rs;
	pl->dur.rs = pl->rs;
	pl->in = &run->in;
	pl->layer.rs = pl->rs;
	pl->layer.dm = &pl->dm;
	pl->pol.rs = pl->rs;
	/* Skipping an existing name is keeping it, quietly. */
	if (opts & SE_OPT_SKIP_OLD)
		opts |= SE_OPT_KEEP_OLD;
	/* Without a root there is nothing to write into: a listing. */
	if (!root)
		opts |= SE_OPT_DRY_RUN;
	pl->pol.opts = opts;
	pl->cm.opts = opts;
	pl->pol.umask = 022;
	pl->pol.proc_umask = process_umask();
	pl->pol.is_root = geteuid() == 0;
	if (pipe2(run->cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		run->cancel_pipe[0] = run->cancel_pipe[1] = -1;
	run->in.cancelled = &pl->cancelled;
	run->in.cancel_fd = run->cancel_pipe[0];
	run->in.jobs = 1;
	run->in.xz_memlimit = SE_XZ_MEMLIMIT_DEFAULT;
	run->in.xz_memlimit_stop = SE_XZ_MEMLIMIT_STOP;
	run->in.ignore_zeros = opts & SE_OPT_IGNORE_ZEROS;
	return run;
}

SE_EXPORT void se_run_set_umask(se_run *run, mode_t mask)
{
	run->pl.pol.umask = mask & 0777;
}

/* The CPUs this process may run on, at least 1, at most SE_JOBS_MAX. */
static unsigned int cpus_usable(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	else
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > SE_JOBS_MAX ? SE_JOBS_MAX : (unsigned int)n;
}

SE_EXPORT int se_run_set_jobs(se_run *run, unsigned int n)
{
	if (n == SE_JOBS_AUTO) {
		/*
		 * Threads where they pay: a compressed stream decoded beside
		 * the writing (xz by every CPU), files written here.  Paired
		 * rounds on 2 CPUs (bench/RESULTS.md, run 8): the decoder's
		 * thread alone took 0.58 of one thread's time on .tar.gz and
		 * 0.75 on .tar.zst; writer threads added nothing on the
		 * kernel tree (1.03) and cost 1.45 on 20,000 small files on
		 * ext4, so they are used only when asked for (issue 25).
		 */
		run->pl.jobs = 1;
		run->in.jobs = cpus_usable();
		return 0;
	}
	if (n > SE_JOBS_MAX)
		return -EINVAL;
	run->pl.jobs = n;
	run->in.jobs = n;
	return 0;
}

SE_EXPORT int se_run_set_xz_memlimit(se_run *run, uint64_t bytes)
{
	if (bytes == 0)
		return -EINVAL;
	run->in.xz_memlimit = bytes;
	return 0;
}

SE_EXPORT int se_run_set_strip_components(se_run *run, int n)
{
	if (n < 0 || n > SE_PATH_MAX)
		return -EINVAL;
	run->pl.pol.strip_components = n;
	return 0;
}

SE_EXPORT int se_run_add_include(se_run *run, const char *pattern)
{
	struct policy *pol = &run->pl.pol;
	bool *hit = realloc(pol->pattern_hit, (pol->includes.n + 1) * sizeof(*hit));

	if (!hit)
		return -ENOMEM;
	pol->pattern_hit = hit;
	hit[pol->includes.n] = false;
	return pattern_add(&pol->includes, pattern);
}

SE_EXPORT int se_run_set_occurrence(se_run *run, unsigned int n)
{
	run->pl.pol.occurrence = n;
	return 0;
}

SE_EXPORT int se_run_add_exclude(se_run *run, const char *glob)
{
	return pattern_add(&run->pl.pol.excludes, glob);
}

SE_EXPORT const char *se_run_unmatched(const se_run *run, size_t i)
{
	const struct policy *pol = &run->pl.pol;

	for (size_t k = 0; k < pol->includes.n; k++) {
		if (pol->pattern_hit[k])
			continue;
		if (i-- == 0)
			return pol->includes.v[k];
	}
	return NULL;
}

SE_EXPORT int se_run_xattrs_include(se_run *run, const char *glob)
{
	return pattern_add(&run->pl.pol.xattr_includes, glob);
}

SE_EXPORT int se_run_xattrs_exclude(se_run *run, const char *glob)
{
	return pattern_add(&run->pl.pol.xattr_excludes, glob);
}

SE_EXPORT int se_run_add_id_map(se_run *run, unsigned int which, uint32_t container_id,
				uint32_t host_id, uint32_t count)
{
	struct pipeline *pl = &run->pl;

	if (pl->entries)
		return -EBUSY;
	/* A map on a run that sets no owner would be ignored, and the
	 * caller would believe its tree mapped. */
	if (!pl->pol.is_root || !(pl->pol.opts & SE_OPT_SAME_OWNER))
		return -EPERM;
	return id_map_add(&pl->pol, which, container_id, host_id, count);
}

SE_EXPORT int se_run_set_owner_lookup(se_run *run, se_owner_cb *cb, void *data)
{
	struct policy *pol = &run->pl.pol;

	pol->owner_cb = cb;
	pol->owner_data = data;
	pol->name_cache[0].valid = pol->name_cache[1].valid = false;
	return 0;
}

SE_EXPORT int se_run_set_whiteouts(se_run *run, int format)
{
	struct pipeline *pl = &run->pl;
	const char *ns = NULL;

	switch (format) {
	case SE_WHITEOUTS_NONE:
	case SE_WHITEOUTS_OCI:
		break;
	case SE_WHITEOUTS_OVERLAY:
		ns = "trusted.overlay.";
		break;
	case SE_WHITEOUTS_OVERLAY_USER:
		ns = "user.overlay.";
		break;
	default:
		return -EINVAL;
	}
	/* Under --durable a whiteout's removals are journaled moves aside
	 * (layer.c); overlayfs's markers on directories that stay (the
	 * opaque xattr) have no undo yet. */
	if (ns && (pl->pol.opts & SE_OPT_DURABLE))
		return -EOPNOTSUPP;
	if (pl->entries)
		return -EBUSY;
	pl->layer.on = format != SE_WHITEOUTS_NONE;
	pl->layer.format = format;
	pl->layer.overlay_ns = ns;
	pl->pol.overlay_ns = ns;
	return 0;
}

SE_EXPORT int se_run_set_callback(se_run *run, se_entry_cb *cb, void *data)
{
	run->pl.rep.cb = cb;
	run->pl.rep.cb_data = data;
	return 0;
}

SE_EXPORT int se_run_set_log(se_run *run, se_log_cb *cb, void *data)
{
	run->pl.rep.log = cb;
	run->pl.rep.log_data = data;
	return 0;
}

SE_EXPORT int se_run_set_data_fd(se_run *run, int fd)
{
	if (fd < 0)
		return -EBADF;
	run->pl.data_fd = fd;
	/* Nothing is created: the destination is not touched. */
	run->pl.pol.opts |= SE_OPT_DRY_RUN;
	run->pl.cm.opts |= SE_OPT_DRY_RUN;
	return 0;
}

SE_EXPORT int se_run_set_report_fd(se_run *run, int fd)
{
	if (fd < 0)
		return -EBADF;
	run->pl.rep.report_fd = fd;
	return 0;
}

SE_EXPORT void se_run_cancel(se_run *run)
{
	int e = errno;

	run->pl.cancelled = 1;
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
		.entries = run->pl.entries,
		.bytes = run->pl.bytes,
		.refused = run->pl.rep.refused,
		.failed = run->pl.rep.failed,
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
	pipe_free(&run->pl);
	input_release(&run->in);	/* the readers are the caller's to free */
	for (int i = 0; i < 2; i++)
		if (run->cancel_pipe[i] >= 0)
			close(run->cancel_pipe[i]);
	free(run);
}

/* ---- readers ---------------------------------------------------------- */

SE_EXPORT int se_run_open_fd(se_run *run, int fd, const char *formats,
			     struct archive **ap)
{
	char msg[1024];
	int r = input_open_fd(&run->in, fd, formats, ap, msg, sizeof(msg));

	if (r < 0 && msg[0])
		report_log(&run->pl.rep, SE_LOG_ERROR, "%s", msg);
	return r;
}

SE_EXPORT int se_run_open_member(se_run *run, struct archive *outer,
				 const char *member, struct archive **ap)
{
	char msg[1024];
	int r = input_open_member(&run->in, outer, member, ap, msg, sizeof(msg));

	if (r < 0 && msg[0])
		report_log(&run->pl.rep, SE_LOG_ERROR, "%s", msg);
	return r;
}

SE_EXPORT int se_run_entry_dumpdir(se_run *run, struct archive *a, const char **buf,
				   size_t *len)
{
	if (!run || !a || !buf || !len)
		return -EINVAL;
	return input_dumpdir(&run->in, a, buf, len);
}

/*
 * The directory metadata this run defers, for a rename or removal the
 * caller makes in its root; NULL once it is applied (se_run_finish).
 * -EINVAL without a root; -EOPNOTSUPP with SE_OPT_DURABLE, where what a
 * run takes away must go through its journal, or SE_OPT_DRY_RUN.
 */
static int run_dirmeta(se_run *run, struct dirmeta **dm)
{
	if (!run || !run->root)
		return -EINVAL;
	if (run->pl.pol.opts & (SE_OPT_DURABLE | SE_OPT_DRY_RUN))
		return -EOPNOTSUPP;
	*dm = run->pl.finished ? NULL : &run->pl.dm;
	return 0;
}

SE_EXPORT int se_run_renameat(se_run *run, const char *from, const char *to,
			      unsigned int flags)
{
	struct dirmeta *dm;
	int r = run_dirmeta(run, &dm);
	mode_t mode;

	if (r < 0)
		return r;
	mode = 0777 & ~run->pl.pol.umask;
	return root_renameat(run->root, from, to, flags & ~SE_RENAME_MAKE_PARENTS, dm,
			     (flags & SE_RENAME_MAKE_PARENTS) ? &mode : NULL);
}

SE_EXPORT int se_run_remove_tree(se_run *run, const char *path, unsigned int flags)
{
	struct dirmeta *dm;
	int r = run_dirmeta(run, &dm);

	return r < 0 ? r : root_remove_tree(run->root, path, flags, dm);
}

/* ---- the archive loop -------------------------------------------------- */

SE_EXPORT int se_run_entry(se_run *run, struct archive *a, struct archive_entry *e)
{
	return pipe_entry(&run->pl, a, e, ARCHIVE_OK, NULL);
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

static const char *archive_msg(struct archive *a)
{
	const char *msg = archive_error_string(a);

	if (msg)
		return msg;
	return archive_errno(a) > 0 ? strerror(archive_errno(a)) :
	       "damaged or truncated (no detail from libarchive)";
}

/* The run stops: when its input failed a check, the entries written
 * since the last check that passed are reported again, unverified. */
static void stream_failed(se_run *run)
{
	const char *why = input_failure(&run->in);

	if (why)
		pipe_unverified(&run->pl, why);
}

/*
 * Where the next header must start when E, just read, is a tar header of
 * a regular file whose name ends in '/' and whose size says it has a body
 * (old tars wrote directories so): libarchive reads it as a directory and
 * its body as the next header, which is damaged.  bsdtar and GNU tar go
 * on past it; with the size known, so can we, exactly.  0 when E is not
 * one (a typeflag-5 directory's size is lost to libarchive: its body
 * stays a damaged header, as before).
 */
static int64_t dir_body_end(struct archive *a, struct archive_entry *e)
{
	int64_t size = archive_entry_size(e);

	if ((archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR ||
	    archive_entry_filetype(e) != AE_IFDIR || !archive_entry_size_is_set(e) ||
	    size <= 0 || size > INT64_MAX / 2)
		return 0;
	return archive_filter_bytes(a, 0) + ((size + 511) & ~(int64_t)511);
}

SE_EXPORT int se_run_archive(se_run *run, struct archive *a)
{
	struct pipeline *pl = &run->pl;
	struct archive_entry *e;
	bool warned_charset = false;
	char esc[1024];
	int64_t body_end = 0;
	int r, ret;

	if (pl->finished)
		return -EINVAL;
	pl->last[0] = '\0';
	/* What an archive before this one wrote passed its checks. */
	pipe_verified(pl);
	for (;;) {
		const char *msg = NULL;

		if (pl->fatal)
			return -ECANCELED;
		if (pl->cancelled) {
			report_log(&pl->rep, SE_LOG_ERROR, "interrupted at entry '%s'",
				   se_escape(pl->last, esc, sizeof(esc)));
			pl->fatal = true;
			return -EINTR;
		}
		r = input_next_header(&run->in, a, &e);
		/* The body of the entry before: each retry of libarchive's
		 * moves a block on.  Taken only when the header found starts
		 * exactly where the body ends; any other damage stops the run
		 * below. */
		if (r == ARCHIVE_RETRY && body_end) {
			/* A block a retry, at most: a reader that stopped
			 * moving cannot keep the loop going. */
			int64_t left = (body_end - archive_read_header_position(a)) / 512 + 1;

			while (r == ARCHIVE_RETRY && left-- > 0 &&
			       archive_read_header_position(a) < body_end)
				r = input_next_header(&run->in, a, &e);
			if ((r == ARCHIVE_OK || r == ARCHIVE_WARN) &&
			    archive_read_header_position(a) != body_end) {
				archive_set_error(a, EILSEQ, "a header inside that entry's body");
				r = ARCHIVE_FATAL;
			} else if (r == ARCHIVE_OK || r == ARCHIVE_WARN) {
				report_log(&pl->rep, SE_LOG_WARNING,
					   "warning: skipped the body of '%s', a file header named like a directory",
					   se_escape(pl->last, esc, sizeof(esc)));
			}
		}
		if (r == ARCHIVE_EOF)
			break;
		/* ARCHIVE_RETRY is a damaged header that libarchive would skip
		 * past: a corrupt archive, so stop rather than guess.  The
		 * files before it are committed and reported first. */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			if (!pipe_collect(pl, true))
				return -ECANCELED;
			report_log(&pl->rep, SE_LOG_ERROR,
				   "archive unreadable after entry '%s': %s",
				   se_escape(pl->last, esc, sizeof(esc)), archive_msg(a));
			pl->fatal = true;
			stream_failed(run);
			return archive_errno(a) > 0 ? -archive_errno(a) : -EILSEQ;
		}
		if (r == ARCHIVE_WARN) {
			msg = archive_msg(a);
			if (header_warning_harmless(e, msg)) {
				if (!warned_charset)
					report_log(&pl->rep, SE_LOG_WARNING,
						   "warning: %s (names kept as they are)", msg);
				warned_charset = true;
				r = ARCHIVE_OK;
			}
		}
		body_end = dir_body_end(a, e);
		ret = pipe_entry(pl, a, e, r, msg);
		if (ret < 0) {
			stream_failed(run);
			return ret;
		}
	}
	/* Every file of this archive at its name before the call returns. */
	if (!pipe_collect(pl, true))
		return -ECANCELED;
	/* The whole input is checked before anything is committed: a gzip
	 * trailer that does not match stops a --durable run before its
	 * renames. */
	ret = input_finish(&run->in, a);
	if (ret < 0) {
		report_log(&pl->rep, SE_LOG_ERROR, "archive damaged after its last entry: %s",
			   archive_msg(a));
		pl->fatal = true;
		stream_failed(run);
		return ret;
	}
	return 0;
}

/*
 * An OCI image layout: every blob of the chosen manifest is checked
 * (sizes, digests, every layer's uncompressed stream against its
 * diff_id) before the first layer is applied, so a bad image leaves the
 * root as it was.  The cost: each layer is read and decompressed twice
 * (once to hash, once to apply), as a registry client that verifies
 * before unpacking does.  Then the layers are applied in order in this
 * one run, each as its own archive with its own whiteouts: one run, so
 * that --durable, once it takes whiteouts, syncs once for the image.
 */
SE_EXPORT int se_run_image(se_run *run, int dirfd, const char *tag, const char *platform)
{
	struct pipeline *pl = &run->pl;
	char msg[1024], here[64];
	struct image img = { .dirfd = -1, .blobs_fd = -1, .archive_fd = -1 };
	struct archive *a;
	size_t i;
	int r;

	if (pl->finished || pl->fatal)
		return -EINVAL;
	/* Whiteouts as the image spec says, or as overlayfs records them
	 * when the caller asked for that. */
	r = se_run_set_whiteouts(run, pl->layer.on ? pl->layer.format : SE_WHITEOUTS_OCI);
	if (r < 0)
		return r;
	if (!platform) {
		image_platform(here, sizeof(here));
		platform = here;
	}
	r = image_open(&img, dirfd, tag && tag[0] ? tag : NULL, platform, msg, sizeof(msg));
	for (i = 0; r == 0 && i < img.n_layers; i++)
		r = image_verify_layer(&img, i, &pl->cancelled, msg, sizeof(msg));
	if (r < 0)
		goto fatal;
	for (i = 0; i < img.n_layers; i++) {
		struct image_layer *l = &img.layers[i];

		layer_next(&pl->layer);
		/* The fd that was hashed, the range that was hashed: never
		 * a name again. */
		r = input_open_layer(&run->in, l->fd, l->offset, l->size, l->kind, &a, msg,
				     sizeof(msg));
		if (r < 0) {
			report_log(&pl->rep, SE_LOG_ERROR, "image: layer %zu (%s): %s", i + 1,
				   l->label, msg);
			pl->fatal = true;
			break;
		}
		r = se_run_archive(run, a);
		archive_read_free(a);
		if (r < 0)
			break;	/* logged, and the run is fatal */
	}
	image_free(&img);
	return r;
fatal:
	report_log(&pl->rep, SE_LOG_ERROR, "image: %s", msg);
	pl->fatal = true;
	image_free(&img);
	return r;
}

SE_EXPORT int se_run_finish(se_run *run)
{
	struct pipeline *pl = &run->pl;

	if (!pl->finished) {
		if (!pl->fatal && pl->cancelled) {
			report_log(&pl->rep, SE_LOG_ERROR, "interrupted before the end of the run");
			pl->fatal = true;
		}
		/* Files still in flight (a caller that drives se_run_entry()
		 * itself): their archive may be freed by now, and their data
		 * is not in it. */
		pl->ar = NULL;
		if (!pl->fatal)
			pipe_collect(pl, true);
		if (!pl->fatal && !(pl->pol.opts & SE_OPT_DRY_RUN) && !pipe_finish(pl))
			pl->fatal = true;
		if (pl->fatal)
			pipe_cleanup(pl);
		pl->finished = true;
	}
	if (pl->fatal || pl->rep.report_failed)
		return 2;
	return pl->rep.refused || pl->rep.failed ? 1 : 0;
}
