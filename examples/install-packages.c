/*
 * install-packages.c - what a package manager's install step looks like on
 * libsafe-extract: a start for package-manager authors.
 *
 *   install-packages ROOT PACKAGE.tar...
 *
 * Every package goes into ROOT in one durable run: symlinks already in the
 * root (usrmerge's lib -> usr/lib) are followed but never out of it
 * (SE_IN_ROOT); nothing is at its final name until every package is in,
 * and then it costs two syncfs calls, not one fsync per file.  A file under
 * etc/ that already exists is kept, and the package's version is written
 * beside it as NAME.pacnew (the BEFORE callback renames the entry: the
 * name is still checked afterwards, so a callback cannot open a hole).
 * Prints one line per refused or failed entry; exits with the run's verdict
 * (0 all installed, 1 some entries refused, 2 fatal).
 *
 * Build: cc install-packages.c $(pkg-config --cflags --libs safe-extract)
 */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safe-extract.h>

struct install {
	se_root *root;		/* to look at what the root already has */
	const char *package;	/* for messages */
	char renamed[4096];
};

static int on_entry(void *data, struct se_entry *e)
{
	struct install *in = data;
	struct stat st;
	char esc[1024];

	if (e->stage == SE_BEFORE) {
		const char *name = archive_entry_pathname(e->entry);

		if (name && strncmp(name, "etc/", 4) == 0 &&
		    archive_entry_filetype(e->entry) == AE_IFREG &&
		    se_root_lstat(in->root, name, &st) == 0) {
			snprintf(in->renamed, sizeof(in->renamed), "%s.pacnew", name);
			archive_entry_set_pathname(e->entry, in->renamed);
		}
		return SE_CONTINUE;
	}
	if (e->action == SE_REFUSED || e->action == SE_FAILED ||
	    e->action == SE_INCOMPLETE)
		fprintf(stderr, "%s: %s '%s': %s (%s)\n", in->package,
			se_action_name(e->action), se_escape(e->name, esc, sizeof(esc)),
			e->reason ? e->reason : "", se_errno_name(e->error));
	return SE_CONTINUE;
}

static void on_log(void *data, int level, const char *msg)
{
	fprintf(stderr, "install-packages: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct install in = { 0 };
	se_root *root;
	se_run *run;
	int r, verdict;

	if (argc < 3) {
		fprintf(stderr, "usage: install-packages ROOT PACKAGE.tar...\n");
		return 2;
	}
	r = se_root_open(argv[1], SE_IN_ROOT, &root);
	if (r < 0) {
		fprintf(stderr, "install-packages: cannot open root '%s': %s\n",
			argv[1], strerror(-r));
		return 2;
	}
	in.root = root;
	run = se_run_new(root, SE_OPT_DURABLE);
	if (!run) {
		fprintf(stderr, "install-packages: out of memory\n");
		return 2;
	}
	se_run_set_callback(run, on_entry, &in);
	se_run_set_log(run, on_log, NULL);

	for (int i = 2; i < argc; i++) {
		struct archive *a;
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		in.package = argv[i];
		if (fd < 0) {
			perror(argv[i]);
			se_run_cancel(run);
			break;
		}
		r = se_run_open_fd(run, fd, NULL, &a);
		if (r == 0) {
			r = se_run_archive(run, a);
			archive_read_free(a);
		}
		close(fd);
		if (r < 0)
			break;	/* the run is fatal now: nothing gets committed */
	}
	verdict = se_run_finish(run);
	se_run_free(run);
	se_root_close(root);
	return verdict;
}
