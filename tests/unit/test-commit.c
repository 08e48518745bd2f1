/*
 * test-commit.c - the name policy: what stands at the name, and the run's
 * options, in; the action, and what stands there after, out.  One row per
 * situation, for a finished file and for a directory entry.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/lib/commit.h"
#include "tap.h"

/* What stands at "x" before: nothing, a file, a symlink to a file outside
 * (the write-through of CVE-2025-4138's shape), an empty directory, a
 * directory with a file in it, a symlink to a directory. */
enum before { NOTHING, FILE_, LINK_OUT, EMPTY_DIR, FULL_DIR, LINK_DIR };
static const char *const before_names[] = {
	"nothing", "a file", "a symlink to outside", "an empty directory",
	"a non-empty directory", "a symlink to a directory",
};

static const struct {
	enum before before;
	unsigned long long opts;
	enum se_action act;
	int err;
	char after;			/* N new file, O old file kept, L the link kept, D directory */
} files[] = {
	{ NOTHING, 0, SE_CREATED, 0, 'N' },
	{ FILE_, 0, SE_REPLACED, 0, 'N' },
	{ LINK_OUT, 0, SE_REPLACED, 0, 'N' },
	{ EMPTY_DIR, 0, SE_REPLACED, 0, 'N' },
	{ FULL_DIR, 0, SE_REFUSED, ENOTEMPTY, 'D' },
	{ FILE_, SE_OPT_KEEP_OLD, SE_REFUSED, EEXIST, 'O' },
	{ LINK_OUT, SE_OPT_KEEP_OLD, SE_REFUSED, EEXIST, 'L' },
	{ FILE_, SE_OPT_KEEP_OLD | SE_OPT_SKIP_OLD, SE_SKIPPED, 0, 'O' },
	{ NOTHING, SE_OPT_KEEP_OLD, SE_CREATED, 0, 'N' },
};

static const struct {
	enum before before;
	unsigned long long opts;
	bool in_root;
	enum se_action act;
	int err;
	char after;			/* D directory, L the symlink kept, O old kept */
} dirs[] = {
	{ NOTHING, 0, false, SE_CREATED, 0, 'D' },
	{ EMPTY_DIR, 0, false, SE_CREATED, 0, 'D' },
	{ FILE_, 0, false, SE_REPLACED, 0, 'D' },
	{ FILE_, SE_OPT_KEEP_OLD, false, SE_REFUSED, EEXIST, 'O' },
	{ LINK_DIR, 0, false, SE_REFUSED, ELOOP, 'L' },
	{ LINK_DIR, SE_OPT_UNLINK, false, SE_REPLACED, 0, 'D' },
	{ LINK_DIR, 0, true, SE_SKIPPED, 0, 'L' },
	{ LINK_OUT, 0, false, SE_REFUSED, ELOOP, 'L' },
};

static char top[] = "/tmp/test-commit.XXXXXX";

static void sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg);
	if (system(cmd) != 0)
		exit(99);
}

/* A fresh destination dest/ holding BEFORE at x; outside/ beside it. */
static void prepare(enum before b)
{
	sh("rm -rf %s/dest %s/outside && mkdir -p %s/dest %s/outside", top);
	sh("echo outside >%s/outside/f && mkdir -p %s/dest/d", top);
	switch (b) {
	case NOTHING: break;
	case FILE_: sh("echo old >%s/dest/x", top); break;
	case LINK_OUT: sh("ln -s ../outside/f %s/dest/x", top); break;
	case EMPTY_DIR: sh("mkdir %s/dest/x", top); break;
	case FULL_DIR: sh("mkdir %s/dest/x && echo in >%s/dest/x/in", top); break;
	case LINK_DIR: sh("ln -s d %s/dest/x", top); break;
	}
}

static char what_is_there(void)
{
	char path[256], buf[16] = "";
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dest/x", top);
	if (lstat(path, &st) < 0)
		return '-';
	if (S_ISLNK(st.st_mode))
		return 'L';
	if (S_ISDIR(st.st_mode))
		return 'D';
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f) && strcmp(buf, "new\n") == 0) {
		fclose(f);
		return 'N';
	}
	if (f)
		fclose(f);
	return 'O';
}

static bool outside_intact(void)
{
	char path[256], buf[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/outside/f", top);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strcmp(buf, "outside\n") == 0;
}

static int open_root(struct resolver *rs, bool in_root)
{
	char path[256];
	struct rs_config cfg = { .in_root = in_root };
	int fd;

	snprintf(path, sizeof(path), "%s/dest", top);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -1 : rs_open_root(rs, fd, &cfg);
}

int main(void)
{
	size_t nf = sizeof(files) / sizeof(files[0]);
	size_t nd = sizeof(dirs) / sizeof(dirs[0]);

	if (!mkdtemp(top))
		return 99;
	tap_plan((int)(nf + nd));
	for (size_t i = 0; i < nf; i++) {
		struct resolver rs;
		struct durable dur = { 0 };
		struct dirmeta dm = { 0 };
		struct tmpnames tn = { 0 };
		struct commit c = { &rs, files[i].opts, &dur, &dm, &tn };
		struct outcome o;
		char tmp[32];
		int fd;

		prepare(files[i].before);
		if (open_root(&rs, false) < 0)
			return 99;
		fd = tmp_create(&tn, rs.root_fd, tmp, 0644);
		if (fd < 0 || write(fd, "new\n", 4) != 4)
			return 99;
		close(fd);
		o = commit_object(&c, rs.root_fd, tmp, "x", "x", PK_FILE, "x", "file");
		tap_ok(o.act == files[i].act && o.err == files[i].err &&
		       what_is_there() == files[i].after && outside_intact(),
		       "a file over %s%s%s: %s (%s), then %c at the name",
		       before_names[files[i].before],
		       files[i].opts & SE_OPT_SKIP_OLD ? ", --skip-old-files" : "",
		       files[i].opts & SE_OPT_KEEP_OLD ? ", -k" : "",
		       se_action_name(o.act), o.reason ? o.reason : "-", what_is_there());
		durable_free(&dur);
		dirmeta_free(&dm);
		rs_close(&rs);
	}
	for (size_t i = 0; i < nd; i++) {
		struct resolver rs;
		struct durable dur = { 0 };
		struct dirmeta dm = { 0 };
		struct tmpnames tn = { 0 };
		struct commit c = { &rs, dirs[i].opts, &dur, &dm, &tn };
		struct plan p = { .kind = PK_DIR, .type = "directory", .path = "x" };
		struct outcome o;
		struct stat st;
		bool defer;

		prepare(dirs[i].before);
		if (open_root(&rs, dirs[i].in_root) < 0)
			return 99;
		o = commit_dir(&c, rs.root_fd, "x", &p, &st, &defer);
		tap_ok(o.act == dirs[i].act && o.err == dirs[i].err &&
		       what_is_there() == dirs[i].after && outside_intact(),
		       "a directory over %s%s%s%s: %s (%s), then %c at the name",
		       before_names[dirs[i].before],
		       dirs[i].opts & SE_OPT_UNLINK ? ", -U" : "",
		       dirs[i].opts & SE_OPT_KEEP_OLD ? ", -k" : "",
		       dirs[i].in_root ? ", --in-root" : "",
		       se_action_name(o.act), o.reason ? o.reason : "-", what_is_there());
		durable_free(&dur);
		dirmeta_free(&dm);
		rs_close(&rs);
	}
	sh("rm -rf %s", top);
	return tap_done();
}
