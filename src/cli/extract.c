/*
 * extract.c - one run of the command, as a client of libsafe-extract:
 * open what the user named, hand the archive to the library, and say on
 * stdout and stderr what became of each entry.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <safe-extract.h>

#include "cli.h"

/* The run a signal cancels.  The command has one run at a time. */
static se_run *volatile current_run;
static volatile sig_atomic_t caught_signal;

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
	se_run *run = current_run;

	caught_signal = sig;
	if (run)
		se_run_cancel(run);
}

void cli_install_signals(void)
{
	struct sigaction sa;

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

const char *cli_program = "safe-extract";

void cli_set_program(const char *argv0)
{
	const char *base;

	if (!argv0 || !*argv0)
		return;
	base = strrchr(argv0, '/');
	base = base ? base + 1 : argv0;
	if (strncmp(base, "lt-", 3) == 0)
		base += 3;
	if (*base)
		cli_program = base;
}

bool cli_as_tar(void)
{
	return strcmp(cli_program, "tar") == 0 || strcmp(cli_program, "gtar") == 0;
}

void cli_warn(const char *fmt, ...)
{
	char msg[4096], safe[4096 * 4 + 8];
	size_t o = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A message may quote the archive: control bytes never reach the
	 * terminal raw (what is escaped already stays as it is). */
	for (const unsigned char *p = (const unsigned char *)msg; *p && o + 8 < sizeof(safe); p++) {
		if (*p >= 0x20 && *p < 0x7f) {
			safe[o++] = (char)*p;
		} else {
			o += (size_t)snprintf(safe + o, sizeof(safe) - o, "\\x%02x", *p);
		}
	}
	safe[o] = '\0';
	fprintf(stderr, "%s: %s\n", cli_program, safe);
}

/* ---- what the user sees ---------------------------------------------- */

struct ui {
	const struct cli_options *o;
	se_run *run;
	se_root *root;			/* NULL with -t and -O */
	struct selection *sel;		/* the member operands */
	const char *dir_checked;	/* the last -C below DEST found a directory */
	size_t owner_width;		/* -vv: owner/group and size, as wide as tar's */
	/* -v: the names entries were renamed to (--transform, -C), and
	 * the name to list for each, until its outcome arrives. */
	struct renamed {
		char *now, *shown, *note;
	} *renamed;
	size_t n_renamed;
	char *top_level;		/* --one-top-level's directory, or NULL */
	/* --skip-old-files: names that get a "skipping existing file"
	 * line with their outcome (note_existing_name()). */
	struct existing {
		char *name, *shown;
	} *existing;
	size_t n_existing;
	bool kept_old;			/* -k kept a name: exit 2, as tar */
	bool dir_failed;		/* a -C among the operands is not there: exit 2 */
	bool backup_failed;		/* --backup could not rename: exit 2, as tar */
	bool incremental_failed;	/* -G could not rename or remove: exit 2 */
	struct archive *archive;	/* the reader of the run, for -G's records */
	bool progress;			/* --progress and stderr is a terminal */
	bool output_failed;		/* stdout could not be written */
	uint64_t last_progress_ns;
	/* The latest wall clock read for the future-timestamp warning:
	 * an mtime at or before it needs no new read. */
	struct timespec clock_seen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void progress(struct ui *ui, bool final)
{
	struct se_stats st = { .size = sizeof(st) };
	uint64_t t;

	if (!ui->progress || se_run_stats(ui->run, &st) < 0)
		return;
	t = now_ns();
	if (!final && t - ui->last_progress_ns < 250000000u)
		return;
	ui->last_progress_ns = t;
	fprintf(stderr, "\r%llu entries, %.1f MiB%s",
		(unsigned long long)st.entries, (double)st.bytes / (1024.0 * 1024.0),
		final ? "\n" : "");
}

/* The listing or -v output cannot be written: what the caller reads would
 * be incomplete, so the run stops (GNU tar exits 2 too). */
static bool stdout_broken(struct ui *ui)
{
	if (ui->output_failed)
		return true;
	if (!ferror(stdout))
		return false;
	cli_warn("cannot write standard output: %s", strerror(errno ? errno : EIO));
	ui->output_failed = true;
	return true;
}

static void log_cb(void *data, int level, const char *msg)
{
	struct ui *ui = data;

	if (ui->progress)
		fputc('\n', stderr);
	fprintf(stderr, "%s: %s\n", cli_program, msg);
}

/* A reason the library gives for a kept name, and the --warning keyword
 * that lets tar say so (its words, so that scripts reading them match). */
static const struct {
	const char *reason_has;
	unsigned int keyword;
	const char *before, *after;	/* around the escaped name */
} kept_messages[] = {
	{ "(--skip-old-files)", WARN_EXISTING_FILE, "", ": skipping existing file" },
	{ "(--keep-newer-files)", WARN_IGNORE_NEWER, "Current '", "' is newer or same age" },
};

/*
 * The warnings tar prints about an entry it extracted or kept, each
 * under its --warning keyword: a name kept by --skip-old-files or
 * --keep-newer-files, a modification time in the future.
 */
static void entry_warnings(struct ui *ui, const struct se_entry *e)
{
	char esc[1024];

	if (e->action == SE_SKIPPED && e->reason) {
		for (size_t i = 0; i < sizeof(kept_messages) / sizeof(kept_messages[0]); i++) {
			if (!strstr(e->reason, kept_messages[i].reason_has) ||
			    !(ui->o->warnings & kept_messages[i].keyword))
				continue;
			se_escape(e->name, esc, sizeof(esc));
			cli_warn("%s%s%s", kept_messages[i].before, esc, kept_messages[i].after);
		}
		return;
	}
	if ((e->action == SE_CREATED || e->action == SE_REPLACED) && e->entry &&
	    (ui->o->warnings & WARN_TIMESTAMP) && !(ui->o->flags & (CLI_TOUCH | CLI_LIST)) &&
	    archive_entry_mtime_is_set(e->entry)) {
		struct timespec now = ui->clock_seen, mt = { archive_entry_mtime(e->entry),
							     archive_entry_mtime_nsec(e->entry) };
		char when[64];
		struct tm tm;

		/* As GNU tar, which compares with its start first: the clock
		 * is read again only for an mtime past the last reading, not
		 * once an entry (a system call where there is no vDSO
		 * clock, as in the QEMU guest: issue 25). */
		if (mt.tv_sec < now.tv_sec || (mt.tv_sec == now.tv_sec && mt.tv_nsec <= now.tv_nsec))
			return;
		clock_gettime(CLOCK_REALTIME, &now);
		ui->clock_seen = now;
		if (mt.tv_sec < now.tv_sec || (mt.tv_sec == now.tv_sec && mt.tv_nsec <= now.tv_nsec))
			return;
		if (!localtime_r(&mt.tv_sec, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			snprintf(when, sizeof(when), "%lld", (long long)mt.tv_sec);
		mt.tv_sec -= now.tv_sec;
		mt.tv_nsec -= now.tv_nsec;
		if (mt.tv_nsec < 0) {
			mt.tv_sec--;
			mt.tv_nsec += 1000000000L;
		}
		/* tar prints the fraction without its trailing zeros, and
		 * none at all for a whole second. */
		char frac[16] = "";
		if (mt.tv_nsec) {
			int digits = 9;
			long ns = mt.tv_nsec;
			while (ns % 10 == 0) {
				ns /= 10;
				digits--;
			}
			snprintf(frac, sizeof(frac), ".%0*ld", digits, ns);
		}
		cli_warn("%s: time stamp %s is %lld%s s in the future",
			 se_escape(e->name, esc, sizeof(esc)), when,
			 (long long)mt.tv_sec, frac);
	}
}

/*
 * A -C that came after a member operand names a directory below DEST that
 * must be there when its first member arrives (tar changes into it then);
 * it is looked at with the root's scoping, never followed.
 */
static bool dir_usable(struct ui *ui, const char *dir)
{
	char name[4096], esc[1024];
	struct stat st;
	int r;

	if (!ui->root || dir == ui->dir_checked)
		return true;
	snprintf(name, sizeof(name), "%.*s", (int)strlen(dir) - 1, dir);
	r = se_root_lstat(ui->root, name, &st);
	if (r == 0 && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	if (r < 0) {
		cli_warn("-C '%s': cannot change into it: %s", se_escape(name, esc, sizeof(esc)),
			 strerror(-r));
		return false;
	}
	ui->dir_checked = dir;
	return true;
}

/* PREFIX then NAME into OUT; false when it does not fit. */
static bool prefixed(const char *prefix, const char *name, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s%s", prefix, name);

	return n >= 0 && (size_t)n < cap;
}

/*
 * -v lists a member by its name in the archive (tar's default) or after
 * --transform (--show-transformed-names), never with the -C directory the
 * command put before it, and after it what the command did first (tar's
 * "Renaming 'x' to 'x~'" of --backup): remember both under the name the
 * library will report.  NOTE may be NULL.  False when out of memory.
 */
static bool remember_name(struct ui *ui, const char *now, const char *shown, const char *note)
{
	struct renamed *nv = realloc(ui->renamed, (ui->n_renamed + 1) * sizeof(*nv));
	struct renamed *r;

	if (!nv)
		return false;
	ui->renamed = nv;
	r = &nv[ui->n_renamed];
	r->now = strdup(now);
	r->shown = strdup(shown);
	r->note = note ? strdup(note) : NULL;
	if (!r->now || !r->shown || (note && !r->note)) {
		free(r->now);
		free(r->shown);
		free(r->note);
		return false;
	}
	ui->n_renamed++;
	return true;
}

/*
 * The name to list for an outcome reported under NAME, into SHOWN, and
 * the lines to print after it in *NOTE (NULL when none; the caller frees
 * it): the oldest record under NAME, forgotten then; outcomes come in
 * archive order, so it is the first one nearly always.  False when there
 * is none.
 */
static bool recall_name(struct ui *ui, const char *name, char *shown, size_t cap, char **note)
{
	for (size_t i = 0; i < ui->n_renamed; i++) {
		struct renamed *r = &ui->renamed[i];

		if (strcmp(r->now, name) != 0)
			continue;
		snprintf(shown, cap, "%s", r->shown);
		*note = r->note;
		free(r->now);
		free(r->shown);
		memmove(r, r + 1, (ui->n_renamed - i - 1) * sizeof(*r));
		ui->n_renamed--;
		return true;
	}
	return false;
}

static bool push_existing(struct ui *ui, const char *name, const char *shown)
{
	struct existing *nv = realloc(ui->existing, (ui->n_existing + 1) * sizeof(*nv));

	if (!nv)
		return false;
	ui->existing = nv;
	nv[ui->n_existing].name = strdup(name);
	nv[ui->n_existing].shown = strdup(shown);
	if (!nv[ui->n_existing].name || !nv[ui->n_existing].shown) {
		free(nv[ui->n_existing].name);
		free(nv[ui->n_existing].shown);
		return false;
	}
	ui->n_existing++;
	return true;
}

static void forget_names(struct ui *ui)
{
	for (size_t i = 0; i < ui->n_existing; i++) {
		free(ui->existing[i].name);
		free(ui->existing[i].shown);
	}
	free(ui->existing);
	ui->existing = NULL;
	ui->n_existing = 0;
	for (size_t i = 0; i < ui->n_renamed; i++) {
		free(ui->renamed[i].now);
		free(ui->renamed[i].shown);
		free(ui->renamed[i].note);
	}
	free(ui->renamed);
	ui->renamed = NULL;
	ui->n_renamed = 0;
}

/* NAME without its first N components, into OUT; false when nothing is
 * left (the library skips that member) or it does not fit. */
static bool stripped(const char *name, int n, char *out, size_t cap)
{
	const char *p = name;

	for (int i = 0; i < n; i++) {
		while (*p == '/')
			p++;
		p += strcspn(p, "/");
	}
	while (*p == '/')
		p++;
	return *p && (size_t)snprintf(out, cap, "%s", p) < cap;
}

/*
 * --backup: before a member replaces an existing non-directory, rename
 * that one to its backup name, as tar (which then replaces whatever -k,
 * --skip-old-files or --keep-newer-files say: main() clears them); not
 * when nothing is written (-t, -O).
 * NOTES gets tar's -v line about it.  False when the backup failed (the
 * member is then skipped, and the run's status is 2, as tar).
 */
static bool back_up(struct ui *ui, struct archive_entry *e, FILE *notes)
{
	const struct cli_options *o = ui->o;
	char path[8192], backup[8192], esc[1024], esc2[1024];
	const char *name = archive_entry_pathname(e);
	int r;

	if (o->backup == BACKUP_NONE || !ui->root || !name ||
	    (o->flags & (CLI_KEEP_OLD | CLI_SKIP_OLD | CLI_LIST | CLI_TO_STDOUT)) ||
	    archive_entry_filetype(e) == AE_IFDIR ||
	    !stripped(name, o->strip_components, path, sizeof(path)))
		return true;
	r = backup_existing(ui->root, path, o->backup, o->backup_suffix, backup, sizeof(backup));
	if (r < 0) {
		cli_warn("%s: cannot back up to '%s': %s", se_escape(path, esc, sizeof(esc)),
			 se_escape(backup, esc2, sizeof(esc2)), strerror(-r));
		ui->backup_failed = true;
		return false;
	}
	if (r > 0 && notes)
		fprintf(notes, "Renaming '%s' to '%s'\n", se_escape(path, esc, sizeof(esc)),
			se_escape(backup, esc2, sizeof(esc2)));
	return true;
}

/*
 * --one-top-level=DIR extracts into DEST/DIR; a member already under DIR
 * (DIR/x, ./DIR/x) goes to DEST/DIR/x, not DEST/DIR/DIR/x, as in tar.
 * NAME is the member's name as the library will see it, so only without
 * --strip-components (which the library applies after).  Returns NAME's
 * part below DIR, or NAME.
 */
static const char *under_top_level(const struct ui *ui, const char *name)
{
	const char *p = name;
	size_t len;

	if (!ui->top_level || ui->o->strip_components)
		return name;
	len = strlen(ui->top_level);
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	if (strncmp(p, ui->top_level, len) != 0 || (p[len] != '/' && p[len] != '\0'))
		return name;
	p += len;
	while (*p == '/')
		p++;
	return *p ? p : ".";
}

/*
 * --skip-old-files: the lines GNU tar prints about an existing name that
 * the library does not print.  An existing directory is kept as it is
 * (run_opts() asks the library for that), and tar says "NAME: skipping
 * existing file" for it as for a file.  Run as tar, with --xattrs, GNU
 * tar 1.34 says it twice for an existing file whose member carries xattrs
 * (once when it tries to create the file to set them first, once when it
 * opens it); the library prints the other.  Before the entry, the name is
 * looked at with the root's scoping, never followed, and remembered with
 * tar's name for it; the line comes with the entry's outcome
 * (existing_name_line()), in archive order.  False when out of memory.
 */
static bool note_existing_name(struct ui *ui, struct archive_entry *e)
{
	const struct cli_options *o = ui->o;
	char name[8192];
	const char *n = archive_entry_pathname(e);
	mode_t type = archive_entry_filetype(e);
	struct stat st;
	size_t len;

	if (!(o->flags & CLI_SKIP_OLD) || !(o->warnings & WARN_EXISTING_FILE) || !ui->root ||
	    !n || archive_entry_hardlink(e))
		return true;
	if (type == AE_IFREG) {
		if (!cli_as_tar() || !(o->flags & CLI_XATTRS) || archive_entry_xattr_count(e) == 0)
			return true;
	} else if (type != AE_IFDIR) {
		return true;
	}
	if (!stripped(n, o->strip_components, name, sizeof(name)))
		return true;
	/* tar's name for it: without the trailing '/', "." for "./" */
	len = strlen(name);
	while (len > 1 && name[len - 1] == '/')
		name[--len] = '\0';
	if (se_root_lstat(ui->root, name, &st) < 0 ||
	    (type == AE_IFDIR) != !!S_ISDIR(st.st_mode))
		return true;
	return push_existing(ui, n, name);
}

/* After an entry: the line note_existing_name() remembered for it, when
 * the library kept the name (a directory as it is, a file skipped). */
static void existing_name_line(struct ui *ui, const struct se_entry *e)
{
	char esc[1024];

	for (size_t i = 0; i < ui->n_existing; i++) {
		struct existing *x = &ui->existing[i];

		if (strcmp(x->name, e->name) != 0)
			continue;
		if (e->action == SE_CREATED || e->action == SE_SKIPPED)
			cli_warn("%s: skipping existing file", se_escape(x->shown, esc, sizeof(esc)));
		free(x->name);
		free(x->shown);
		memmove(x, x + 1, (ui->n_existing - i - 1) * sizeof(*x));
		ui->n_existing--;
		return;
	}
}

/*
 * Before an entry: is it one the command line selects (by its name in the
 * archive, as tar matches it), then its new name: --transform, then the
 * -C its operand came after.  The library checks the result like any
 * other name: a transform to ../x is refused.
 */
static int before_entry(struct ui *ui, struct archive_entry *e)
{
	char out[8192], tmp[8192], shown[8192], *note = NULL;
	const char *n, *dir = "", *stored;
	size_t note_len = 0;
	FILE *notes = NULL;
	int verdict = SE_CONTINUE;
	bool renamed = false, relabelled = false;

	/* After a -C that cannot be used, tar stops: nothing more is
	 * extracted, what came before stays (an abort would drop the
	 * files still in flight). */
	if (ui->dir_failed)
		return SE_SKIP;
	if (!select_all(ui->sel)) {
		n = archive_entry_pathname(e);
		if (select_entry(ui->sel, n ? n : "", &dir) == SELECT_NO)
			return SE_SKIP;
		if (*dir && !dir_usable(ui, dir)) {
			ui->dir_failed = true;
			return SE_SKIP;
		}
	}
	stored = archive_entry_pathname(e);
	tmp[0] = '\0';
	if ((ui->o->transforms || *dir || ui->top_level) && stored) {
		if (!tar_transform(ui->o->transforms, 1, stored, tmp, sizeof(tmp)))
			snprintf(tmp, sizeof(tmp), "%s", stored);
		if (prefixed(dir, under_top_level(ui, tmp), out, sizeof(out)) &&
		    strcmp(out, stored) != 0)
			renamed = true;
	}
	/* A hardlink's target is a member name too: it is in the same
	 * directory as the link when tar makes it. */
	n = archive_entry_hardlink(e);
	if (n && (ui->o->transforms || *dir || ui->top_level)) {
		char target[8192], link[8192];

		if (!tar_transform(ui->o->transforms, 4, n, link, sizeof(link)))
			snprintf(link, sizeof(link), "%s", n);
		if (prefixed(dir, under_top_level(ui, link), target, sizeof(target)) &&
		    strcmp(target, n) != 0)
			archive_entry_set_hardlink(e, target);
	}
	n = archive_entry_symlink(e);
	if (n && ui->o->transforms) {
		char target[8192];

		if (tar_transform(ui->o->transforms, 2, n, target, sizeof(target)))
			archive_entry_set_symlink(e, target);
	}
	/* The name -v lists, copied before the entry is renamed: STORED
	 * points into the entry. */
	snprintf(shown, sizeof(shown), "%s",
		 renamed && (ui->o->flags & CLI_SHOW_TRANSFORMED) ? tmp : stored ? stored : "");
	/* --one-top-level is one more transform to tar: with
	 * --show-transformed-names, a member not already under DIR is
	 * listed as DIR/NAME, where it goes (GNU tar's onetop02). */
	if ((ui->o->flags & CLI_SHOW_TRANSFORMED) && ui->top_level && !ui->o->strip_components &&
	    !*dir && tmp[0] && under_top_level(ui, tmp) == tmp) {
		snprintf(shown, sizeof(shown), "%s/%s", ui->top_level, tmp);
		relabelled = true;
	}
	if (renamed)
		archive_entry_set_pathname(e, out);
	if (!note_existing_name(ui, e))
		return SE_ABORT;
	/* What -v says the command did before the member (tar's Renaming
	 * and Deleting lines) comes after its name, as in tar. */
	if (ui->o->flags & CLI_VERBOSE) {
		notes = open_memstream(&note, &note_len);
		if (!notes)
			return SE_ABORT;
	}
	if (!back_up(ui, e, notes)) {
		verdict = SE_SKIP;
	} else if ((ui->o->flags & CLI_INCREMENTAL) && ui->root && ui->archive &&
		   archive_entry_filetype(e) == AE_IFDIR && archive_entry_pathname(e) &&
		   stripped(archive_entry_pathname(e), ui->o->strip_components, tmp, sizeof(tmp))) {
		char member[sizeof(tmp)];
		struct incr_ctx c = { .verbose = notes != NULL, .out = notes, .run = ui->run,
				      .member = member };
		size_t len = strlen(tmp);

		/* tar's name for the directory in its "Deleting" lines. */
		snprintf(member, sizeof(member), "%s", tmp);
		while (len > 0 && tmp[len - 1] == '/')
			tmp[--len] = '\0';
		if (strcmp(tmp, ".") == 0)
			tmp[0] = '\0';
		if (incremental_restore(ui->root, ui->archive, e, tmp, &c) < 0)
			ui->incremental_failed = true;
	}
	if (notes && fclose(notes) != 0)
		verdict = SE_ABORT;
	if (verdict == SE_CONTINUE && (ui->o->flags & CLI_VERBOSE) && (renamed || relabelled || note_len) &&
	    !remember_name(ui, archive_entry_pathname(e), shown, note_len ? note : NULL))
		verdict = SE_ABORT;
	free(note);
	return verdict;
	return SE_CONTINUE;
}

/* A name -k kept: tar says "Cannot open: File exists" and exits 2. */
static bool kept_old(const struct ui *ui, const struct se_entry *e)
{
	return (ui->o->flags & CLI_KEEP_OLD) && e->action == SE_REFUSED &&
	       e->error == EEXIST && e->reason && strstr(e->reason, "--keep-old-files");
}

/*
 * Does -v list E?  As tar: every member the command line selects, those
 * kept (-k, --skip-old-files, --keep-newer-files) and those -O does not
 * write too; not those it did not select, nor those refused or failed
 * (their line is on stderr), nor those --strip-components leaves no name
 * (tar skips them before it lists anything: "-v --strip-components=2
 * dir/sub/" shows dir/sub/file only).
 */
static bool listed(const struct ui *ui, const struct se_entry *e)
{
	if (e->action == SE_SKIPPED)
		return !e->reason || (strcmp(e->reason, "skipped by the caller") != 0 &&
				      strcmp(e->reason, "not selected") != 0 &&
				      strcmp(e->reason, "nothing left after --strip-components") != 0);
	return e->action == SE_CREATED || e->action == SE_REPLACED || kept_old(ui, e);
}

/* ls -l's ten characters, as tar -tvv prints them ('h': a hardlink). */
static void mode_string(const struct archive_entry *ae, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	mode_t perm = archive_entry_perm((struct archive_entry *)ae);
	char type;

	switch (archive_entry_filetype((struct archive_entry *)ae)) {
	case AE_IFDIR: type = 'd'; break;
	case AE_IFLNK: type = 'l'; break;
	case AE_IFCHR: type = 'c'; break;
	case AE_IFBLK: type = 'b'; break;
	case AE_IFIFO: type = 'p'; break;
	case AE_IFSOCK: type = 's'; break;
	default: type = '-'; break;
	}
	if (archive_entry_hardlink((struct archive_entry *)ae))
		type = 'h';
	out[0] = type;
	for (int i = 0; i < 9; i++)
		out[i + 1] = (perm & (0400 >> i)) ? rwx[i] : '-';
	if (perm & S_ISUID)
		out[3] = (perm & S_IXUSR) ? 's' : 'S';
	if (perm & S_ISGID)
		out[6] = (perm & S_IXGRP) ? 's' : 'S';
	if (perm & S_ISVTX)
		out[9] = (perm & S_IXOTH) ? 't' : 'T';
	out[10] = '\0';
}

/*
 * tar -xvv's line: mode, owner/group, size (or device numbers), date,
 * name, and the link target.  The owner and group are the names this
 * system has for the ids (the library hands over ids; --numeric-owner:
 * the ids).  The owner/group/size field widens as tar's does, for the
 * rest of the run.
 */
static void long_listing(struct ui *ui, FILE *out, const struct se_entry *e,
			 const char *name)
{
	struct archive_entry *ae = e->entry;
	char modes[11], user[64], group[64], size[48], when[32], esc[1024], target[1024];
	const char *t;
	struct tm tm;
	time_t mt = archive_entry_mtime(ae);
	size_t pad;

	mode_string(ae, modes);
	snprintf(user, sizeof(user), "%lld", (long long)archive_entry_uid(ae));
	snprintf(group, sizeof(group), "%lld", (long long)archive_entry_gid(ae));
	if (!(ui->o->flags & CLI_NUMERIC_OWNER)) {
		struct passwd *pw = getpwuid((uid_t)archive_entry_uid(ae));
		struct group *gr = getgrgid((gid_t)archive_entry_gid(ae));

		if (pw)
			snprintf(user, sizeof(user), "%s", pw->pw_name);
		if (gr)
			snprintf(group, sizeof(group), "%s", gr->gr_name);
	}
	if (modes[0] == 'c' || modes[0] == 'b')
		snprintf(size, sizeof(size), "%u,%u", major(archive_entry_rdev(ae)),
			 minor(archive_entry_rdev(ae)));
	else
		snprintf(size, sizeof(size), "%lld", modes[0] == 'h' ? 0LL :
			 (long long)archive_entry_size(ae));
	if (!localtime_r(&mt, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm))
		snprintf(when, sizeof(when), "%lld", (long long)mt);
	/* tar's arithmetic: the field is "USER/GROUP SIZE", 19 wide at
	 * least. */
	pad = strlen(user) + 1 + strlen(group) + 1 + strlen(size);
	if (pad > ui->owner_width)
		ui->owner_width = pad;
	fprintf(out, "%s %s/%s %*s %s %s", modes, user, group,
		(int)(ui->owner_width - pad + strlen(size)), size, when,
		se_escape(name, esc, sizeof(esc)));
	if ((t = archive_entry_hardlink(ae)))
		fprintf(out, " link to %s", se_escape(t, target, sizeof(target)));
	else if ((t = archive_entry_symlink(ae)))
		fprintf(out, " -> %s", se_escape(t, target, sizeof(target)));
	fputc('\n', out);
}

/* -v: the name; -vv: tar's long line.  With -O the data is on stdout,
 * so they go to stderr. */
static void list_entry(struct ui *ui, const struct se_entry *e, const char *name)
{
	FILE *out = (ui->o->flags & CLI_TO_STDOUT) ? stderr : stdout;
	char esc[1024];

	if ((ui->o->flags & CLI_LONG_LISTING) && e->entry)
		long_listing(ui, out, e, name);
	else
		fprintf(out, "%s\n", se_escape(name, esc, sizeof(esc)));
}

/*
 * After each entry: refusals and failures always print one stderr line
 * (escaped name, what, why); -t prints the names it would extract, -v
 * those extracted.
 */
static int entry_cb(void *data, struct se_entry *e)
{
	struct ui *ui = data;
	char esc[1024], why[1024], shown[8192], *note = NULL;
	const char *name = e->name;

	if (e->stage == SE_BEFORE)
		return before_entry(ui, e->entry);
	if (ui->n_existing)
		existing_name_line(ui, e);
	entry_warnings(ui, e);
	if (kept_old(ui, e) && cli_as_tar()) {
		/* GNU tar's words for it: scripts written for tar match them. */
		cli_warn("%s: Cannot open: File exists", se_escape(e->name, esc, sizeof(esc)));
	} else if (e->action == SE_REFUSED || e->action == SE_FAILED ||
		   e->action == SE_INCOMPLETE || e->action == SE_UNVERIFIED) {
		se_escape(e->name, esc, sizeof(esc));
		/* The library's reasons are safe for a terminal already. */
		snprintf(why, sizeof(why), "%s", e->reason ? e->reason : "");
		if (ui->progress)
			fputc('\n', stderr);
		if (e->error)
			fprintf(stderr, "%s: %s '%s': %s (%s)\n", cli_program,
				se_action_name(e->action), esc, why,
				se_errno_name(e->error));
		else
			fprintf(stderr, "%s: %s '%s': %s\n", cli_program,
				se_action_name(e->action), esc, why);
	} else if ((ui->o->flags & CLI_LIST) && e->action == SE_CREATED) {
		char path[4096 * 4 + 8];

		printf("%s\n", se_escape(e->path[0] ? e->path : ".", path,
					 sizeof(path)));
	}
	if (kept_old(ui, e))
		ui->kept_old = true;
	if (ui->n_renamed && recall_name(ui, e->name, shown, sizeof(shown), &note))
		name = shown;
	if ((ui->o->flags & CLI_VERBOSE) && !(ui->o->flags & CLI_LIST) && listed(ui, e))
		list_entry(ui, e, name);
	if (note)
		fputs(note, (ui->o->flags & CLI_TO_STDOUT) ? stderr : stdout);
	free(note);
	progress(ui, false);
	return stdout_broken(ui) ? SE_ABORT : SE_CONTINUE;
}

/* ---- the run ---------------------------------------------------------- */

static unsigned int root_flags(const struct cli_options *o)
{
	unsigned int f = 0;

	if (o->flags & CLI_IN_ROOT)
		f |= SE_IN_ROOT;
	if (o->flags & CLI_CROSS_MOUNTS)
		f |= SE_CROSS_MOUNTS;
	if (o->flags & CLI_REQUIRE_KERNEL)
		f |= SE_REQUIRE_KERNEL;
	if (o->flags & CLI_KEEP_DIR_SYMLINK)
		f |= SE_KEEP_DIR_SYMLINKS;
	if (o->resolver && strcmp(o->resolver, "at") == 0)
		f |= SE_BACKEND_AT;
	else if (o->resolver && strcmp(o->resolver, "openat2") == 0)
		f |= SE_BACKEND_OPENAT2;
	else if (o->resolver && strcmp(o->resolver, "walk") == 0)
		f |= SE_BACKEND_WALK;
	return f;
}

static unsigned long long run_opts(const struct cli_options *o)
{
	static const struct { unsigned int cli; unsigned long long se; } map[] = {
		{ CLI_KEEP_OLD, SE_OPT_KEEP_OLD },
		{ CLI_UNLINK, SE_OPT_UNLINK },
		{ CLI_DURABLE, SE_OPT_DURABLE },
		{ CLI_SAME_OWNER, SE_OPT_SAME_OWNER },
		{ CLI_SAME_PERMS, SE_OPT_SAME_PERMS },
		{ CLI_NUMERIC_OWNER, SE_OPT_NUMERIC_OWNER },
		{ CLI_XATTRS, SE_OPT_XATTRS },
		{ CLI_ACLS, SE_OPT_ACLS },
		{ CLI_DEVICES, SE_OPT_DEVICES },
		{ CLI_LIST, SE_OPT_DRY_RUN },
		{ CLI_SKIP_OLD, SE_OPT_SKIP_OLD },
		{ CLI_TOUCH, SE_OPT_TOUCH },
		{ CLI_NO_OVERWRITE_DIR, SE_OPT_KEEP_DIR_METADATA },
		{ CLI_KEEP_NEWER, SE_OPT_KEEP_NEWER },
		{ CLI_NO_WILDCARDS, SE_OPT_LITERAL_NAMES },
		{ CLI_IGNORE_ZEROS, SE_OPT_IGNORE_ZEROS },
	};
	unsigned long long opts = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (o->flags & map[i].cli)
			opts |= map[i].se;
	/* As GNU tar: -k and --skip-old-files keep an existing directory
	 * as it is (owner, mode, times, xattrs), as they keep a file. */
	if (o->flags & (CLI_KEEP_OLD | CLI_SKIP_OLD))
		opts |= SE_OPT_KEEP_DIR_METADATA;
	return opts;
}

/*
 * --one-top-level[=DIR]: everything goes into DIR inside DEST, made when
 * missing.  DIR is the user's (or the archive file's name): one component,
 * made and opened inside DEST, never followed.
 */
static int open_top_level(const struct cli_options *o, se_root **root)
{
	char *name = o->top_level[0] ? strdup(o->top_level) : tar_top_level_name(o->archive);
	int dfd, fd, r;

	if (!name || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		cli_warn("--one-top-level: '%s' is not a directory name (one component)",
			 name ? name : "(archive read from standard input)");
		free(name);
		return -EINVAL;
	}
	dfd = open(o->dest, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		free(name);
		return -errno;
	}
	if (mkdirat(dfd, name, 0777 & ~o->umask) < 0 && errno != EEXIST) {
		r = -errno;
	} else {
		fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = fd < 0 ? -errno : se_root_open_fd(fd, root_flags(o), root);
		if (fd >= 0)
			close(fd);
	}
	close(dfd);
	free(name);
	return r;
}

/*
 * Open the destination as the options say, with the command's messages.
 * NULL after a message when it cannot be used.
 */
static se_root *open_root(const struct cli_options *o)
{
	const char *want = o->resolver && *o->resolver ? o->resolver : "auto";
	se_root *root;
	int r;

	if (strcmp(want, "auto") != 0 && strcmp(want, "at") != 0 &&
	    strcmp(want, "openat2") != 0 && strcmp(want, "walk") != 0) {
		cli_warn("SAFE_EXTRACT_RESOLVER='%s': expected auto, at, openat2 or walk",
			 want);
		return NULL;
	}
	if (o->top_level)
		r = open_top_level(o, &root);
	else
		r = se_root_open(o->dest, root_flags(o), &root);
	if (r == -ENOSYS && strcmp(want, "at") == 0) {
		cli_warn("SAFE_EXTRACT_RESOLVER=at: this kernel has no AT_* scoping flags");
		return NULL;
	}
	if (r == -ENOSYS && strcmp(want, "openat2") == 0) {
		cli_warn("SAFE_EXTRACT_RESOLVER=openat2: openat2 is not available");
		return NULL;
	}
	if (r == -ENOSYS) {
		cli_warn("--require-kernel-scoping: openat2 is not available and the userspace walk cannot defend against concurrent changes");
		return NULL;
	}
	if (r < 0) {
		cli_warn("cannot open destination '%s': %s", o->dest, strerror(-r));
		return NULL;
	}
	if (se_root_is_userspace(root))
		cli_warn("warning: %s: resolving paths in userspace; concurrent changes to the destination are not defended against",
			 strcmp(want, "walk") == 0 ? "SAFE_EXTRACT_RESOLVER=walk" :
			 "openat2 unavailable");
	return root;
}

/* Give the run the command's policy.  False when out of memory. */
/*
 * --jobs, or SAFE_EXTRACT_JOBS (how the test suite runs everything with
 * one thread and with four), or SE_JOBS_AUTO: the library's threads where
 * they pay (a decoder thread, no writer threads: issue 25).
 */
static unsigned int cli_jobs(const struct cli_options *o)
{
	const char *env = getenv("SAFE_EXTRACT_JOBS");
	long n;

	/* --backup renames what is there before each member, and -G
	 * removes what a directory record does not list: with writer
	 * threads an earlier member might not be at its name yet. */
	if (o->backup != BACKUP_NONE || (o->flags & CLI_INCREMENTAL))
		return 1;
	if (o->jobs)
		return o->jobs;
	if (env && *env) {
		char *end;

		n = strtol(env, &end, 10);
		if (!*end && n >= 1 && n <= SE_JOBS_MAX)
			return (unsigned int)n;
		cli_warn("SAFE_EXTRACT_JOBS: '%s' is not a number from 1 to %d; ignored",
			 env, SE_JOBS_MAX);
	}
	return SE_JOBS_AUTO;
}

/*
 * --map-ids, --map-uids, --map-gids: each range to the run, in order.
 * Their syntax was checked when parsed; the library refuses what does
 * not fit with the ranges before it.  False after a message.  -t and -O
 * set no owner: nothing to map.
 */
static bool add_id_maps(se_run *run, const struct cli_options *o)
{
	if (o->flags & (CLI_LIST | CLI_TO_STDOUT))
		return true;
	for (size_t i = 0; i < o->n_id_maps; i++) {
		const struct cli_id_map *m = &o->id_maps[i];
		int r = se_run_add_id_map(run, m->which, m->container_id, m->host_id,
					  m->count);

		if (r == -EINVAL)
			cli_warn("%s: its container ids or its host ids overlap an earlier range of the same kind",
				 m->arg);
		else if (r == -EPERM)
			cli_warn("%s: owners are not restored (not root, or --no-same-owner): the map would change nothing",
				 m->arg);
		else if (r < 0)
			cli_warn("%s: %s", m->arg, strerror(-r));
		if (r < 0)
			return false;
	}
	return true;
}

static bool configure(se_run *run, const struct cli_options *o)
{
	bool good = true;

	se_run_set_umask(run, o->umask);
	good &= se_run_set_strip_components(run, o->strip_components) == 0;
	good &= se_run_set_jobs(run, cli_jobs(o)) == 0;
	if (o->xz_memory)
		good &= se_run_set_xz_memlimit(run, o->xz_memory) == 0;
	/* Member operands are matched here (select.c), before the
	 * library strips or checks a name, as tar matches them. */
	for (size_t i = 0; i < o->excludes.n; i++)
		good &= se_run_add_exclude(run, o->excludes.v[i]) == 0;
	for (size_t i = 0; i < o->xattr_includes.n; i++)
		good &= se_run_xattrs_include(run, o->xattr_includes.v[i]) == 0;
	for (size_t i = 0; i < o->xattr_excludes.n; i++)
		good &= se_run_xattrs_exclude(run, o->xattr_excludes.v[i]) == 0;
	/* --oci-image: se_run_image() turns OCI's whiteouts on itself,
	 * and keeps an overlay format set here. */
	if (o->whiteouts)
		good &= se_run_set_whiteouts(run, o->whiteouts) == 0;
	else if (o->flags & CLI_OCI_LAYER)
		good &= se_run_set_whiteouts(run, SE_WHITEOUTS_OCI) == 0;
	return good;
}

/* ---- the sandbox ------------------------------------------------------- */

/* One line saying what se_sandbox_apply() put in force. */
static void describe_sandbox(const struct se_sandbox *sb, char *buf, size_t n)
{
	if (sb->landlock_applied)
		snprintf(buf, n, "landlock abi %d: writes only beneath DEST (rights 0x%llx of 0x%llx), reads anywhere, no execute%s; seccomp %s%s%s",
			 sb->landlock_abi, sb->fs_granted_in_root, sb->fs_handled,
			 sb->net_denied ? ", no TCP" : "",
			 sb->seccomp_applied ? "on" : "off",
			 sb->why[0] ? " - " : "", sb->why);
	else
		snprintf(buf, n, "landlock off; seccomp %s - %s",
			 sb->seccomp_applied ? "on" : "off", sb->why);
}

/*
 * Confine the process once everything outside DEST is open.  False when
 * the run must not go on (--require-sandbox and not all of it in force).
 */
static bool sandbox(const struct cli_options *o, se_root *root)
{
	struct se_sandbox sb = { .size = sizeof(sb) };
	char what[512];
	int r;

	if (o->flags & CLI_NO_SANDBOX)
		return true;
	r = se_sandbox_apply(root, 0, &sb);
	describe_sandbox(&sb, what, sizeof(what));
	if (o->flags & CLI_PRINT_SANDBOX)
		printf("%s\n", what);
	if (r == 0 && (sb.seccomp_applied || !(o->flags & CLI_REQUIRE_SANDBOX)))
		return true;
	if (o->flags & CLI_REQUIRE_SANDBOX) {
		cli_warn("--require-sandbox: the process cannot be confined here: %s", what);
		return false;
	}
	if (!(o->flags & CLI_PRINT_SANDBOX))
		cli_warn("warning: not sandboxed: %s", what);
	return true;
}

#ifdef SE_FAULT_INJECTION
/*
 * Test builds only (./configure --enable-fault-injection): do, after the
 * sandbox, what a bug would do, bypassing the library, so that a test can
 * show the sandbox stopping it.  SAFE_EXTRACT_FAULT=
 *   unscoped-create:PATH   open(PATH, O_WRONLY|O_CREAT|O_EXCL) by name
 *   exec:PROG              execv(PROG) (gone if it works)
 *   socket                 socket(AF_INET, SOCK_STREAM)
 */
static void inject_fault(void)
{
	const char *f = getenv("SAFE_EXTRACT_FAULT");
	int fd, e;

	if (!f)
		return;
	if (strncmp(f, "unscoped-create:", 16) == 0) {
		fd = open(f + 16, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		e = errno;
		cli_warn("fault: unscoped-create '%s': %s", f + 16,
			 fd >= 0 ? "created" : se_errno_name(e));
		if (fd >= 0)
			close(fd);
	} else if (strncmp(f, "exec:", 5) == 0) {
		char *argv[] = { (char *)(f + 5), NULL };

		fflush(stdout);
		execv(f + 5, argv);
		cli_warn("fault: exec '%s': %s", f + 5, se_errno_name(errno));
	} else if (strcmp(f, "socket") == 0) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		e = errno;
		cli_warn("fault: socket: %s", fd >= 0 ? "created" : se_errno_name(e));
		if (fd >= 0)
			close(fd);
	}
}
#endif

/*
 * -V PATTERN: as tar, the run goes on only if the archive's volume label
 * matches PATTERN (a glob).  With -v the label is listed first, as tar
 * lists it.  False after a message when the run must not go on.
 */
static bool volume_label(const struct cli_options *o, int fd)
{
	char label[128], esc[1024];
	int r;

	if (!o->label && !((o->flags & CLI_VERBOSE) && !(o->flags & CLI_LIST)))
		return true;
	r = tar_volume_label(fd, label, sizeof(label));
	if (!o->label) {
		if (r == 1)
			fprintf((o->flags & CLI_TO_STDOUT) ? stderr : stdout, "%s\n",
				se_escape(label, esc, sizeof(esc)));
		return true;
	}
	if (r < 0) {
		cli_warn("-V '%s': cannot read the volume label%s: %s", o->label,
			 r == -ESPIPE ? " of an archive that is not a file" : "", strerror(-r));
		return false;
	}
	if (r == 0) {
		cli_warn("Archive not labeled to match '%s'", o->label);
		return false;
	}
	if (fnmatch(o->label, label, 0) != 0) {
		cli_warn("Volume '%s' does not match '%s'", se_escape(label, esc, sizeof(esc)),
			 o->label);
		return false;
	}
	if (o->flags & CLI_VERBOSE)
		fprintf((o->flags & CLI_TO_STDOUT) ? stderr : stdout, "%s\n",
			se_escape(label, esc, sizeof(esc)));
	return true;
}

/*
 * --oci-image=DIR[:TAG]: the directory into PATH and the tag (NULL when
 * none).  The tag is what follows the last ':' when that has no '/' (a
 * tag never does), so "a:b/c" is a directory, and "dir:" is DIR with
 * no tag (the way to name a directory whose name has a ':').  False
 * when DIR does not fit.
 */
static bool image_dir(const char *arg, char *path, size_t cap, const char **tag)
{
	const char *colon = strrchr(arg, ':');
	size_t len = strlen(arg);

	*tag = NULL;
	if (colon && !strchr(colon, '/')) {
		len = (size_t)(colon - arg);
		*tag = colon[1] ? colon + 1 : NULL;
	}
	if (len >= cap)
		return false;
	memcpy(path, arg, len);
	path[len] = '\0';
	return true;
}

/* Is FILE a package whose payload is what gets extracted (dpkg-deb -x)? */
static bool is_package(const char *file)
{
	static const char *const suffixes[] = { ".deb", ".udeb", ".ipk" };
	size_t len = file ? strlen(file) : 0;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (len > n && strcmp(file + len - n, suffixes[i]) == 0)
			return true;
	}
	return false;
}

int cli_extract(const struct cli_options *o, struct cli_result *res)
{
	const char *file = o->archive && strcmp(o->archive, "-") != 0 ? o->archive : NULL;
	struct se_stats st = { .size = sizeof(st) };
	struct ui ui = { .o = o, .owner_width = 19 };
	struct archive *a = NULL;
	se_root *root = NULL;
	se_run *run = NULL;
	int status = EXIT_FATAL, report_fd = -1, fd = -1, archive_fd = -1, image_fd = -1, r;
	int lib_status;
	char image_path[4096];
	const char *image_tag = NULL;
	pid_t decoder = -1;
	const char *miss;
	bool some;

	memset(res, 0, sizeof(*res));
	caught_signal = 0;
	if (o->flags & CLI_PRINT_SANDBOX) {
		root = open_root(o);
		if (!root)
			return EXIT_FATAL;
		status = sandbox(o, root) ? EXIT_ALL_EXTRACTED : EXIT_FATAL;
		se_root_close(root);
		return status;
	}
	if (o->flags & CLI_RECOVER) {
		char msg[512];
		int how;

		root = open_root(o);
		if (!root)
			return EXIT_FATAL;
		how = se_root_recover(root, msg, sizeof(msg));
		se_root_close(root);
		if (how < 0) {
			cli_warn("cannot recover: %s", msg);
			return EXIT_FATAL;
		}
		if (how == SE_RECOVER_BACK)
			cli_warn("an interrupted --durable run was rolled back (%s)", msg);
		else if (how == SE_RECOVER_FORWARD)
			cli_warn("an interrupted --durable run was finished (%s)", msg);
		return EXIT_ALL_EXTRACTED;
	}
	if (o->flags & CLI_PRINT_RESOLVER) {
		root = open_root(o);
		if (!root)
			return EXIT_FATAL;
		printf("%s\n", se_root_backend(root));
		se_root_close(root);
		return EXIT_ALL_EXTRACTED;
	}
	/* -t and -O write nothing and need no destination. */
	if (!(o->flags & (CLI_LIST | CLI_TO_STDOUT))) {
		root = open_root(o);
		if (!root)
			return EXIT_FATAL;
	}
	if (o->report_path) {
		report_fd = open(o->report_path, O_WRONLY | O_CREAT | O_TRUNC |
				 O_CLOEXEC | O_NOCTTY, 0644);
		if (report_fd < 0) {
			cli_warn("cannot open report '%s': %s", o->report_path,
				 strerror(errno));
			goto out;
		}
	}
	if (o->image) {
		/* The layout is named by the user: a plain open, before the
		 * sandbox.  Its files are opened by the library, from it. */
		if (!image_dir(o->image, image_path, sizeof(image_path), &image_tag)) {
			cli_warn("--oci-image: '%s' is too long", o->image);
			goto out;
		}
		/* A layout directory, or an image archive (docker save,
		 * oci-archive) that the library reads by offset. */
		image_fd = open(image_path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (image_fd < 0) {
			cli_warn("cannot open image '%s': %s", image_path, strerror(errno));
			goto out;
		}
		goto open_run;
	}
	/* The archive is named by the user, not by an archive: a plain open. */
	fd = file ? open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
	if (fd < 0) {
		cli_warn("cannot open archive '%s': %s", file, strerror(errno));
		goto out;
	}
	archive_fd = fd;

	/* -z, -J ...: the format is detected anyway; say so when the data
	 * is not what the option named. */
	if (o->compress) {
		const char *found = tar_compression_of(fd);

		if (found && strcmp(found, o->compress) != 0)
			cli_warn("warning: the archive is %s%s, not %s as the option says; reading what is there",
				 strcmp(found, "none") == 0 ? "not compressed" : found,
				 strcmp(found, "none") == 0 ? "" : "-compressed", o->compress);
	}
	if (!volume_label(o, fd)) {
		/* GNU tar's last line after an error it cannot go on from. */
		if (cli_as_tar())
			cli_warn("Error is not recoverable: exiting now");
		goto out;
	}
	/* lzop is decoded by a program: started now, before the sandbox
	 * forbids starting one, and read through a pipe. */
	r = tar_start_decoder(&fd, &decoder);
	if (r < 0) {
		cli_warn("cannot start %s to decode '%s': %s", tar_decoder_name(),
			 file ? file : "-", strerror(-r));
		goto out;
	}
	/* The program has its own copy of the archive's fd. */
	if (r > 0 && archive_fd > STDIN_FILENO) {
		close(archive_fd);
		archive_fd = -1;
	}
open_run:
	run = se_run_new(root, run_opts(o));
	ui.root = root;
	ui.sel = select_new(o);
	if (o->top_level)
		ui.top_level = o->top_level[0] ? strdup(o->top_level) :
			       tar_top_level_name(o->archive);
	if (!run || !ui.sel || !configure(run, o)) {
		cli_warn("out of memory");
		goto out;
	}
	if (!add_id_maps(run, o))
		goto out;
	ui.run = run;
	ui.progress = (o->flags & CLI_PROGRESS) && isatty(STDERR_FILENO);
	se_run_set_log(run, log_cb, &ui);
	se_run_set_callback(run, entry_cb, &ui);
	if (report_fd >= 0)
		se_run_set_report_fd(run, report_fd);
	if (o->flags & CLI_TO_STDOUT) {
		fflush(stdout);
		se_run_set_data_fd(run, STDOUT_FILENO);
	}
	current_run = run;
	if (caught_signal)
		se_run_cancel(run);
	/* Everything outside DEST is open now: the archive, the report. */
	if (!sandbox(o, root)) {
		status = EXIT_FATAL;
		goto out;
	}
#ifdef SE_FAULT_INJECTION
	inject_fault();
#endif

	if (o->image)
		r = se_run_image(run, image_fd, image_tag, NULL);
	else
		r = se_run_open_fd(run, fd, o->formats, &a);
	if (o->image) {
		/* Every layer applied, or the reason logged. */
	} else if (r == 0 && (o->member || is_package(file))) {
		struct archive *inner;

		/* A .deb is an ar archive whose data.tar.* holds the tree:
		 * that member is read as an archive of its own, streamed. */
		r = se_run_open_member(run, a, o->member, &inner);
		if (r == 0) {
			ui.archive = inner;
			se_run_archive(run, inner);
			archive_read_free(inner);
		}
		archive_read_free(a);
	} else if (r == 0) {
		ui.archive = a;
		se_run_archive(run, a);
		archive_read_free(a);
	}
	status = lib_status = se_run_finish(run);
	current_run = NULL;
	if (r < 0)
		status = EXIT_FATAL;
	progress(&ui, true);

	/* As GNU tar: a member named on the command line that the archive
	 * does not hold is an error of the whole run. */
	for (size_t i = 0; status != EXIT_FATAL && (miss = select_unmatched(ui.sel, i, &some)); i++)
		cli_warn("%s: %s", miss, some ? "Required occurrence not found in archive" :
			 "Not found in archive");
	if (status != EXIT_FATAL && select_unmatched(ui.sel, 0, &some))
		status = EXIT_FATAL;

	/* What reached standard output after the last entry (late refusals)
	 * must have been written too. */
	if ((fflush(stdout) != 0 || ferror(stdout)) && !ui.output_failed) {
		cli_warn("cannot write standard output: %s", strerror(errno ? errno : EIO));
		ui.output_failed = true;
	}
	if (ui.output_failed)
		status = EXIT_FATAL;
	/* As GNU tar: a name -k kept is an error of the whole run. */
	if (ui.kept_old || ui.backup_failed || ui.incremental_failed || ui.dir_failed)
		status = EXIT_FATAL;
	/* GNU tar ends a run that read the whole archive but had errors it
	 * went on past (a name -k kept, a member not found, a backup or an
	 * incremental rename that failed) with this line; not one that
	 * stopped (an unreadable archive, a -C that is not there, an
	 * unwritable stdout, a signal), and not entries refused or failed
	 * (exit status 1, which GNU tar does not have). */
	if (cli_as_tar() && status == EXIT_FATAL && lib_status != EXIT_FATAL && r >= 0 &&
	    !ui.output_failed && !ui.dir_failed && !caught_signal &&
	    (ui.kept_old || ui.backup_failed || ui.incremental_failed ||
	     select_unmatched(ui.sel, 0, &some)))
		cli_warn("Exiting with failure status due to previous errors");
	if (se_run_stats(run, &st) == 0) {
		res->entries = st.entries;
		res->refused = st.refused;
		res->failed = st.failed;
	}
out:
	current_run = NULL;
	select_free(ui.sel);
	se_run_free(run);
	forget_names(&ui);
	free(ui.top_level);
	se_root_close(root);
	/* The decoder writes to its end, padding after the archive's last
	 * block included: read it all, or it dies of SIGPIPE and looks as
	 * if it had failed. */
	if (decoder > 0 && status != EXIT_FATAL && fd >= 0) {
		char drain[65536];

		while (read(fd, drain, sizeof(drain)) > 0)
			;
	}
	if (image_fd >= 0)
		close(image_fd);
	if (fd > STDIN_FILENO)
		close(fd);
	if (archive_fd > STDIN_FILENO && archive_fd != fd)
		close(archive_fd);
	if (decoder > 0) {
		int ws;

		/* Its output was read to the archive's end, or the run
		 * stopped before: then a signal (SIGPIPE) is no news, but
		 * its own failure (a damaged stream) is why. */
		if (waitpid(decoder, &ws, 0) == decoder &&
		    ((WIFEXITED(ws) && WEXITSTATUS(ws) != 0) ||
		     (!WIFEXITED(ws) && status != EXIT_FATAL))) {
			cli_warn("%s failed decoding '%s' (%s %d)", tar_decoder_name(),
				 file ? file : "-", WIFEXITED(ws) ? "exit" : "signal",
				 WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
			status = EXIT_FATAL;
		}
	}
	if (report_fd >= 0 && close(report_fd) < 0 && status != EXIT_FATAL) {
		cli_warn("cannot write the report '%s': %s", o->report_path,
			 strerror(errno));
		status = EXIT_FATAL;
	}
	res->signal = caught_signal;
	if (caught_signal)
		status = EXIT_FATAL;
	return status;
}
