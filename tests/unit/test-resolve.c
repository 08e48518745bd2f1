/*
 * test-resolve.c - the resolution module against a hostile tree, through
 * every backend this kernel offers, in both modes.  The same table must
 * hold for each backend: that is what makes the fallback trustworthy.
 *
 *   R/                      the destination (root fd)
 *   |-- dir/ {file, sub/}
 *   |-- file_top
 *   |-- link_rel -> dir
 *   |-- link_abs -> /dir            absolute: in-root means R/dir
 *   |-- link_up  -> ../..           climbs out of R
 *   |-- escape   -> link_up/..      (a chained climb)
 *   |-- cur -> .    par -> cur/..   (2025 tarfile-bypass chains)
 *   |-- procself -> /proc/self      in-root: R/proc/self, which is absent
 *   `-- dangling -> nowhere
 *   ../outside/                     must never be reached
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/resolve.h"
#include "tap.h"

struct expect {
	const char *attack;
	const char *path;
	int strict;		/* 0 or the errno in strict mode */
	int in_root;		/* 0 or the errno in --in-root */
	const char *same_as;	/* in-root: the directory it must resolve to */
};

static const struct expect dir_cases[] = {
	{ "plain directory", "dir", 0, 0, "dir" },
	{ "nested directory", "dir/sub", 0, 0, "dir/sub" },
	{ "relative link", "link_rel", ELOOP, 0, "dir" },
	{ "through a relative link", "link_rel/sub", ELOOP, 0, "dir/sub" },
	{ "absolute link", "link_abs", ELOOP, 0, "dir" },
	{ "link climbing out", "link_up", ELOOP, 0, "." },
	{ "chained climb", "escape", ELOOP, 0, "." },
	{ "cur -> . chain", "cur/cur/dir", ELOOP, 0, "dir" },
	{ "par -> cur/.. chain", "par/dir", ELOOP, 0, "dir" },
	{ "/proc link", "procself", ELOOP, ENOENT, NULL },
	{ "dangling link", "dangling", ELOOP, ENOENT, NULL },
	{ "file as directory", "file_top", ENOTDIR, ENOTDIR, NULL },
	{ "file in the middle", "file_top/x", ENOTDIR, ENOTDIR, NULL },
	{ "missing", "missing", ENOENT, ENOENT, NULL },
};

static const struct expect stat_cases[] = {
	{ "a file", "dir/file", 0, 0, NULL },
	{ "a link itself is not followed", "link_up", 0, 0, NULL },
	{ "a file through a link", "link_rel/file", ELOOP, 0, NULL },
	{ "outside through a climbing link", "link_up/outside", ELOOP, ENOENT, NULL },
};

static const struct expect create_cases[] = {
	{ "missing parents are made", "new/a/b", 0, 0, "new/a/b" },
	{ "no mkdir through a link", "link_rel/made", ELOOP, 0, "dir/made" },
	{ "no mkdir out through a climb", "link_up/made2", ELOOP, 0, "made2" },
};

static char top[] = "/tmp/safe-extract-resolve.XXXXXX";
static char root[64];

static void build_tree(void)
{
	char p[512];

	if (!mkdtemp(top))
		abort();
	snprintf(root, sizeof(root), "%s/R", top);
	snprintf(p, sizeof(p), "%s/outside", top);
	if (mkdir(root, 0755) || mkdir(p, 0755))
		abort();
#define MK(kind, ...) do { snprintf(p, sizeof(p), __VA_ARGS__); kind; } while (0)
	MK(mkdir(p, 0755), "%s/dir", root);
	MK(mkdir(p, 0755), "%s/dir/sub", root);
	MK(close(open(p, O_CREAT | O_WRONLY, 0644)), "%s/dir/file", root);
	MK(close(open(p, O_CREAT | O_WRONLY, 0644)), "%s/file_top", root);
	MK(close(open(p, O_CREAT | O_WRONLY, 0644)), "%s/outside/secret", top);
	MK(symlink("dir", p), "%s/link_rel", root);
	MK(symlink("/dir", p), "%s/link_abs", root);
	MK(symlink("../..", p), "%s/link_up", root);
	MK(symlink("link_up/..", p), "%s/escape", root);
	MK(symlink(".", p), "%s/cur", root);
	MK(symlink("cur/..", p), "%s/par", root);
	MK(symlink("/proc/self", p), "%s/procself", root);
	MK(symlink("nowhere", p), "%s/dangling", root);
#undef MK
}

static bool same_inode(int fd, const char *rel)
{
	char p[512];
	struct stat a, b;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return fstat(fd, &a) == 0 && stat(p, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static void run_backend(const char *backend, bool in_root)
{
	struct rs_config cfg = {
		.in_root = in_root,
		.want = strcmp(backend, "at") == 0 ? RS_WANT_AT :
			strcmp(backend, "openat2") == 0 ? RS_WANT_OPENAT2 :
			RS_WANT_WALK,
	};
	const char *mode = in_root ? "in-root" : "strict";
	struct resolver r;
	struct stat st;
	size_t i;
	int dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dirfd < 0)
		abort();
	if (rs_open_root(&r, dirfd, &cfg) < 0) {
		rs_close(&r);
		for (i = 0; i < sizeof(dir_cases) / sizeof(dir_cases[0]) +
			    sizeof(stat_cases) / sizeof(stat_cases[0]) +
			    sizeof(create_cases) / sizeof(create_cases[0]); i++)
			tap_skip("%s: backend not available on this kernel", backend);
		return;
	}
	for (i = 0; i < sizeof(dir_cases) / sizeof(dir_cases[0]); i++) {
		const struct expect *c = &dir_cases[i];
		int want = in_root ? c->in_root : c->strict;
		int fd = rs_open_dir(&r, c->path, O_PATH, false, 0);
		bool good = fd >= 0 ? want == 0 : -fd == want;

		if (fd >= 0 && in_root && c->same_as)
			good = good && same_inode(fd, c->same_as);
		tap_ok(good, "%s %s open_dir %s: '%s' -> %s", backend, mode,
		       c->attack, c->path, fd >= 0 ? "ok" : strerror(-fd));
		if (fd >= 0)
			close(fd);
	}
	for (i = 0; i < sizeof(stat_cases) / sizeof(stat_cases[0]); i++) {
		const struct expect *c = &stat_cases[i];
		int want = in_root ? c->in_root : c->strict;
		int err = rs_stat(&r, -1, NULL, c->path, &st);

		tap_ok(-err == want, "%s %s stat %s: '%s' -> %s", backend, mode,
		       c->attack, c->path, err ? strerror(-err) : "ok");
	}
	for (i = 0; i < sizeof(create_cases) / sizeof(create_cases[0]); i++) {
		const struct expect *c = &create_cases[i];
		int want = in_root ? c->in_root : c->strict;
		int fd = rs_open_dir(&r, c->path, O_PATH, true, 0755);
		bool good = fd >= 0 ? want == 0 : -fd == want;
		char p[512];

		if (fd >= 0 && c->same_as)
			good = good && same_inode(fd, c->same_as);
		/* Nothing may appear outside, whatever the result. */
		snprintf(p, sizeof(p), "%s/made2", top);
		good = good && access(p, F_OK) != 0;
		tap_ok(good, "%s %s create %s: '%s' -> %s", backend, mode,
		       c->attack, c->path, fd >= 0 ? "ok" : strerror(-fd));
		if (fd >= 0) {
			close(fd);
			snprintf(p, sizeof(p), "rm -rf '%s/new' '%s/dir/made' '%s/made2'",
				 root, root, root);
			if (system(p) != 0)
				abort();
		}
	}
	rs_close(&r);
}

int main(void)
{
	static const char *const backends[] = { "at", "openat2", "walk" };
	size_t per = sizeof(dir_cases) / sizeof(dir_cases[0]) +
		     sizeof(stat_cases) / sizeof(stat_cases[0]) +
		     sizeof(create_cases) / sizeof(create_cases[0]);
	char cmd[600];

	build_tree();
	tap_plan((int)(per * 3 * 2));
	for (size_t b = 0; b < 3; b++) {
		run_backend(backends[b], false);
		run_backend(backends[b], true);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
