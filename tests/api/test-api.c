/*
 * test-api.c - libsafe-extract through its public header only.
 *
 * Each case builds its archives in memory with libarchive's writer,
 * extracts them into a fresh directory under a scratch tree, and checks
 * what the library did and what it left alone:
 *
 *   SCRATCH/
 *     outside/            must never change
 *     case-N/dest/        the root
 *
 * The table at the end names each case after the behaviour it pins.
 * Prints TAP.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include <safe-extract.h>

#include "../unit/tap.h"

static char scratch[256], dest[300], outside[300];
static int case_no;

/* ---- building archives ------------------------------------------------ */

/* One member: 'f' file (0644), 'F' file (0666), 'd' directory, 'l' symlink,
 * 'h' hardlink. */
struct member {
	char type;
	const char *name;
	const char *data;	/* file content, link target */
	const char *uname, *gname;	/* owner names, with ids 1000 */
};

/* A pax archive of MEMBERS (NULL-name terminated) in a malloc'd buffer. */
static void *make_tar(const struct member *m, size_t *len)
{
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	struct archive *a = archive_write_new();

	archive_write_set_format_pax_restricted(a);
	archive_write_set_bytes_in_last_block(a, 1);
	if (archive_write_open_memory(a, buf, cap, len) != ARCHIVE_OK)
		abort();
	for (; m->name; m++) {
		struct archive_entry *e = archive_entry_new();

		archive_entry_set_pathname(e, m->name);
		archive_entry_set_mtime(e, 1000000000, 0);
		if (m->uname) {
			archive_entry_set_uname(e, m->uname);
			archive_entry_set_gname(e, m->gname);
			archive_entry_set_uid(e, 1000);
			archive_entry_set_gid(e, 1000);
		}
		switch (m->type) {
		case 'f':
		case 'F':
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, m->type == 'F' ? 0666 : 0644);
			archive_entry_set_size(e, (la_int64_t)strlen(m->data));
			break;
		case 'd':
			archive_entry_set_filetype(e, AE_IFDIR);
			archive_entry_set_perm(e, 0755);
			break;
		case 'l':
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_perm(e, 0777);
			archive_entry_set_symlink(e, m->data);
			break;
		case 'h':
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, m->data);
			break;
		}
		if (archive_write_header(a, e) != ARCHIVE_OK)
			abort();
		if (m->type == 'f' || m->type == 'F')
			archive_write_data(a, m->data, strlen(m->data));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	return buf;
}

/* A reader over BUF through a pipe-free memfd, opened by the library. */
static int archive_fd(const void *buf, size_t len)
{
	int fd = memfd_create("archive", MFD_CLOEXEC);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

/* ---- the scratch tree --------------------------------------------------- */

static void fresh_dest(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dest, dest);
	if (system(cmd) != 0)
		abort();
}

static bool exists(const char *rel)
{
	char p[600];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dest, rel);
	return lstat(p, &st) == 0;
}

static bool has_content(const char *rel, const char *want)
{
	char p[600], got[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dest, rel);
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, got, sizeof(got) - 1);
	close(fd);
	if (n < 0)
		return false;
	got[n] = '\0';
	return strcmp(got, want) == 0;
}

/* Names under DIR (recursively) that start with ".safe-extract-". */
static int count_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char p[1024];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strncmp(de->d_name, ".safe-extract-", 14))
			n++;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			n += count_temps(p);
	}
	closedir(d);
	return n;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* ---- what the callbacks saw ------------------------------------------- */

struct seen {
	int before, after;
	int created, skipped, refused, failed;
	char last_path[512];
	char last_reason[512];
	int last_error;
	const char *rename_from, *rename_to;	/* BEFORE: rename this */
	const char *skip;			/* BEFORE: skip this */
	const char *abort_at;			/* BEFORE: abort here */
	int logs;
	char sha[65];			/* hex of the last digest seen */
	int digests;
};

static int entry_cb(void *data, struct se_entry *e)
{
	struct seen *s = data;

	if (e->size < sizeof(*e))
		return SE_ABORT;
	if (e->stage == SE_BEFORE) {
		const char *name = archive_entry_pathname(e->entry);

		s->before++;
		if (s->abort_at && strcmp(name, s->abort_at) == 0)
			return SE_ABORT;
		if (s->skip && strcmp(name, s->skip) == 0)
			return SE_SKIP;
		if (s->rename_from && strcmp(name, s->rename_from) == 0)
			archive_entry_set_pathname(e->entry, s->rename_to);
		return SE_CONTINUE;
	}
	s->after++;
	switch (e->action) {
	case SE_CREATED: case SE_REPLACED: s->created++; break;
	case SE_SKIPPED: s->skipped++; break;
	case SE_REFUSED: s->refused++; break;
	default: s->failed++; break;
	}
	snprintf(s->last_path, sizeof(s->last_path), "%s", e->path ? e->path : "");
	snprintf(s->last_reason, sizeof(s->last_reason), "%s", e->reason ? e->reason : "");
	s->last_error = e->error;
	if (e->sha256) {
		for (int i = 0; i < 32; i++)
			sprintf(s->sha + 2 * i, "%02x", e->sha256[i]);
		s->digests++;
	}
	return SE_CONTINUE;
}

static void log_cb(void *data, int level, const char *msg)
{
	((struct seen *)data)->logs++;
}

/* ---- one run, step by step ------------------------------------------------ */

struct job {
	se_root *root;
	se_run *run;
	int fd;
	void *buf;
};

/* A run with OPTS on DEST (made afresh when FRESH) opened with ROOT_FLAGS;
 * the callbacks record into S when it is not NULL. */
static void job_start(struct job *j, bool fresh, unsigned int root_flags,
		      unsigned long long opts, struct seen *s)
{
	if (fresh)
		fresh_dest();
	memset(j, 0, sizeof(*j));
	j->fd = -1;
	if (se_root_open(dest, root_flags, &j->root) < 0)
		abort();
	j->run = se_run_new(j->root, opts);
	if (!j->run)
		abort();
	if (s) {
		se_run_set_callback(j->run, entry_cb, s);
		se_run_set_log(j->run, log_cb, s);
	}
}

/* Feed the archive of M to the run: se_run_archive's result. */
static int job_feed(struct job *j, const struct member *m)
{
	struct archive *a;
	size_t len;
	int r;

	free(j->buf);
	if (j->fd >= 0)
		close(j->fd);
	j->buf = make_tar(m, &len);
	j->fd = archive_fd(j->buf, len);
	r = se_run_open_fd(j->run, j->fd, NULL, &a);
	if (r == 0) {
		r = se_run_archive(j->run, a);
		archive_read_free(a);
	}
	return r;
}

/* se_run_free (removes what is not finished), then the root. */
static void job_end(struct job *j)
{
	se_run_free(j->run);
	se_root_close(j->root);
	if (j->fd >= 0)
		close(j->fd);
	free(j->buf);
}

/* Extract M into a fresh DEST: se_run_finish's verdict. */
static int extract(const struct member *m, unsigned int root_flags,
		   unsigned long long opts, struct seen *s)
{
	struct job j;
	int verdict;

	job_start(&j, true, root_flags, opts, s);
	job_feed(&j, m);
	verdict = se_run_finish(j.run);
	job_end(&j);
	return verdict;
}

/* ---- the cases ---------------------------------------------------------- */

static void root_open_missing_directory(void)
{
	se_root *root = (se_root *)1;
	int r = se_root_open("/nonexistent/safe-extract-test", 0, &root);

	tap_ok(r == -ENOENT && root == NULL, "se_root_open of a missing directory: -ENOENT, *root NULL (%d)", r);
}

static void root_open_two_forced_backends_is_einval(void)
{
	se_root *root;
	int r;

	fresh_dest();
	r = se_root_open(dest, SE_BACKEND_WALK | SE_BACKEND_OPENAT2, &root);

	tap_ok(r == -EINVAL, "se_root_open with two forced backends: -EINVAL (%d)", r);
	r = se_root_open(dest, 1u << 30, &root);
	tap_ok(r == -EINVAL, "se_root_open with an unknown flag: -EINVAL (%d)", r);
}

static void root_backend_names_the_resolver(void)
{
	se_root *root;
	const char *b;

	fresh_dest();
	if (se_root_open(dest, SE_BACKEND_WALK, &root) < 0) {
		tap_ok(0, "se_root_open(SE_BACKEND_WALK)");
		return;
	}
	tap_ok(strcmp(se_root_backend(root), "walk") == 0 && se_root_is_userspace(root),
	       "forced walk: se_root_backend says walk, se_root_is_userspace says so");
	se_root_close(root);
	if (se_root_open(dest, 0, &root) < 0) {
		tap_ok(0, "se_root_open(0)");
		return;
	}
	b = se_root_backend(root);
	tap_ok(!strcmp(b, "at") || !strcmp(b, "openat2") || !strcmp(b, "walk"),
	       "default backend is at, openat2 or walk: %s", b);
	se_root_close(root);
	se_root_close(NULL);
}

static void root_open_fd_leaves_the_callers_fd(void)
{
	int dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	se_root *root;
	struct stat st;
	int r = se_root_open_fd(dfd, 0, &root);

	se_root_close(root);
	tap_ok(r == 0 && fstat(dfd, &st) == 0, "se_root_open_fd duplicates: the caller's fd stays open after se_root_close");
	close(dfd);
}

static const struct member simple[] = {
	{ 'd', "etc", NULL },
	{ 'f', "etc/x", "new\n" },
	{ 'f', "etc/y", "why\n" },
	{ 0, NULL, NULL },
};

static void callback_renames_to_pacnew(void)
{
	struct seen s = { .rename_from = "etc/x", .rename_to = "etc/x.pacnew" };
	int v = extract(simple, 0, 0, &s);

	tap_ok(v == 0 && has_content("etc/x.pacnew", "new\n") && !exists("etc/x"),
	       "BEFORE renames etc/x to etc/x.pacnew: written there, not at etc/x (verdict %d)", v);
	tap_ok(s.before == 3 && s.after == 3, "one BEFORE and one AFTER per entry (%d, %d)",
	       s.before, s.after);
}

static void callback_rename_to_dotdot_is_refused(void)
{
	struct seen s = { .rename_from = "etc/x", .rename_to = "../escaped-by-callback" };
	char p[600];
	int v = extract(simple, 0, 0, &s);

	snprintf(p, sizeof(p), "%s/../escaped-by-callback", dest);
	tap_ok(v == 1 && s.refused == 1 && access(p, F_OK) != 0,
	       "BEFORE renames to ../x: refused like any name, nothing outside (verdict %d, refused %d)",
	       v, s.refused);
}

static void callback_rename_to_absolute_stays_inside(void)
{
	struct seen s = { .rename_from = "etc/x", .rename_to = "/tmp/safe-extract-api-abs" };
	int v = extract(simple, 0, 0, &s);

	tap_ok(v == 0 && exists("tmp/safe-extract-api-abs") &&
	       access("/tmp/safe-extract-api-abs", F_OK) != 0 && s.logs >= 1,
	       "BEFORE renames to /tmp/x: the '/' is dropped, a warning logged, written inside (verdict %d)", v);
}

static void callback_skip_writes_nothing(void)
{
	struct seen s = { .skip = "etc/y" };
	int v = extract(simple, 0, 0, &s);

	tap_ok(v == 0 && !exists("etc/y") && exists("etc/x") && s.skipped == 1,
	       "BEFORE returns SE_SKIP for etc/y: not written, reported skipped, verdict 0 (%d)", v);
}

static void callback_abort_stops_with_verdict_2(void)
{
	struct seen s = { .abort_at = "etc/y" };
	int v = extract(simple, 0, SE_OPT_DURABLE, &s);

	tap_ok(v == 2 && !exists("etc/y") && count_temps(dest) == 0,
	       "BEFORE returns SE_ABORT: verdict 2, no later entry, no temporary (verdict %d)", v);
	tap_ok(!exists("etc/x"), "SE_ABORT under SE_OPT_DURABLE: nothing pending is committed");
}

static const struct member planted_link[] = {
	{ 'l', "lnk", "../outside" },
	{ 'f', "lnk/evil", "x\n" },
	{ 0, NULL, NULL },
};

static void symlink_then_file_through_it_is_refused(void)
{
	struct seen s = { 0 };
	int v = extract(planted_link, 0, 0, &s);
	char p[600];

	snprintf(p, sizeof(p), "%s/evil", outside);
	tap_ok(v == 1 && s.refused == 1 && s.last_error == ELOOP && access(p, F_OK) != 0,
	       "symlink then a file through it (CVE-2025-4138 shape): ELOOP, nothing outside (verdict %d, errno %d)",
	       v, s.last_error);
}

static void in_root_follows_links_inside(void)
{
	static const struct member usrmerge[] = {
		{ 'd', "usr", NULL },
		{ 'd', "usr/lib", NULL },
		{ 'l', "lib", "usr/lib" },
		{ 'f', "lib/libc.so", "elf\n" },
		{ 'l', "up", "../../../../.." },
		{ 'f', "up/escaped", "x\n" },
		{ 0, NULL, NULL },
	};
	struct seen s = { 0 };
	int v = extract(usrmerge, SE_IN_ROOT, 0, &s);

	tap_ok(v == 0 && has_content("usr/lib/libc.so", "elf\n") && has_content("escaped", "x\n"),
	       "SE_IN_ROOT: lib -> usr/lib is followed; up -> ../../.. stays inside (verdict %d)", v);
}

static void several_archives_one_durable_commit(void)
{
	static const struct member a1[] = { { 'f', "one", "1\n" }, { 0, NULL, NULL } };
	static const struct member a2[] = { { 'f', "two", "2\n" }, { 0, NULL, NULL } };
	struct seen s = { 0 };
	bool before_commit;
	struct job j;
	int v;

	job_start(&j, true, 0, SE_OPT_DURABLE, &s);
	job_feed(&j, a1);
	job_feed(&j, a2);
	/* Nothing is at its name until the run commits: two temporaries
	 * and the run's journal. */
	before_commit = !exists("one") && !exists("two") && count_temps(dest) == 3 &&
			exists(".safe-extract-journal");
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(before_commit, "SE_OPT_DURABLE, two archives: both still temporaries before se_run_finish");
	tap_ok(v == 0 && has_content("one", "1\n") && has_content("two", "2\n") &&
	       count_temps(dest) == 0,
	       "SE_OPT_DURABLE, two archives: one commit puts both in place (verdict %d)", v);
}

/* A package manager's transaction: a run freed before se_run_finish (the
 * caller gave up after the first archive) leaves nothing of either. */
static void several_archives_none_without_finish(void)
{
	static const struct member a1[] = { { 'd', "pkg1", NULL }, { 'f', "pkg1/one", "1\n" },
					    { 'l', "pkg1/link", "one" }, { 0, NULL, NULL } };
	static const struct member a2[] = { { 'f', "two", "2\n" }, { 0, NULL, NULL } };
	struct seen s = { 0 };
	struct job j;

	job_start(&j, true, 0, SE_OPT_DURABLE, &s);
	job_feed(&j, a1);
	job_feed(&j, a2);
	job_end(&j);
	tap_ok(!exists("pkg1") && !exists("two") && count_temps(dest) == 0,
	       "SE_OPT_DURABLE, two archives, run freed before se_run_finish: nothing of either stays");
}

/* DEST with simple's tree and a planted "up -> ../../../..", opened
 * strict: the setting of the scoped-call cases. */
static se_root *simple_root_with_planted_link(void)
{
	struct seen s = { 0 };
	char p[600];
	se_root *root;

	extract(simple, 0, 0, &s);
	snprintf(p, sizeof(p), "%s/up", dest);
	if (symlink("../../../..", p) < 0 || se_root_open(dest, 0, &root) < 0)
		abort();
	return root;
}

static void root_lstat_is_scoped(void)
{
	struct stat st;
	se_root *root;

	root = simple_root_with_planted_link();
	tap_ok(se_root_lstat(root, "etc/x", &st) == 0 && S_ISREG(st.st_mode),
	       "se_root_lstat: an existing file");
	tap_ok(se_root_lstat(root, "etc/nosuch", &st) == -ENOENT, "se_root_lstat: -ENOENT");
	tap_ok(se_root_lstat(root, "../outside", &st) == -EINVAL,
	       "se_root_lstat of ../outside: -EINVAL, never looked up");
	tap_ok(se_root_lstat(root, "up/outside", &st) == -ELOOP,
	       "se_root_lstat through a planted symlink: -ELOOP (strict)");
	tap_ok(se_root_lstat(root, "up", &st) == 0 && S_ISLNK(st.st_mode),
	       "se_root_lstat of the symlink itself: not followed");
	se_root_close(root);
}

static void write_in_dest(const char *rel, const char *text)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dest, rel);
	f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

/* Extract M into DEST as it is now (no fresh_dest), in-root, owners kept. */
static int extract_keep(const struct member *m, se_owner_cb *cb)
{
	struct job j;
	int v;

	job_start(&j, false, SE_IN_ROOT, SE_OPT_SAME_OWNER | SE_OPT_SAME_PERMS, NULL);
	if (cb)
		se_run_set_owner_lookup(j.run, cb, NULL);
	job_feed(&j, m);
	v = se_run_finish(j.run);
	job_end(&j);
	return v;
}

static bool owned_by(const char *rel, uid_t uid, gid_t gid)
{
	char p[600];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", dest, rel);
	return lstat(p, &st) == 0 && st.st_uid == uid && st.st_gid == gid;
}

/* In a root filesystem, "alice" is whoever the root's etc/passwd says,
 * not the host's alice (or nobody). */
static void in_root_owner_names_map_through_the_roots_passwd(void)
{
	static const struct member m[] = {
		{ 'f', "home/file", "a\n", "alice", "staff" },
		{ 'f', "home/stranger", "s\n", "nosuchuser", "nosuchgroup" },
		{ 0, NULL, NULL, NULL, NULL },
	};
	char p[600];

	if (geteuid() != 0) {
		tap_skip("in-root owner names: needs root");
		return;
	}
	fresh_dest();
	snprintf(p, sizeof(p), "%s/etc", dest);
	mkdir(p, 0755);
	write_in_dest("etc/passwd", "root:x:0:0::/root:/bin/sh\nalice:x:4242:4343::/home:/bin/sh\n");
	write_in_dest("etc/group", "root:x:0:\nstaff:x:4343:\n");
	tap_ok(extract_keep(m, NULL) == 0 && owned_by("home/file", 4242, 4343) &&
	       owned_by("home/stranger", 1000, 1000),
	       "SE_IN_ROOT: alice/staff map through DEST/etc/passwd and etc/group (4242:4343); unknown names keep their ids");
}

static int lookup_bob(void *data, int group, const char *name, unsigned int *id)
{
	if (!group && strcmp(name, "bob") == 0) {
		*id = 777;
		return 0;
	}
	return -1;
}

static void owner_lookup_callback_decides(void)
{
	static const struct member m[] = {
		{ 'f', "bobs", "b\n", "bob", "alsobob" },
		{ 0, NULL, NULL, NULL, NULL },
	};

	if (geteuid() != 0) {
		tap_skip("owner lookup callback: needs root");
		return;
	}
	fresh_dest();
	tap_ok(extract_keep(m, lookup_bob) == 0 && owned_by("bobs", 777, 1000),
	       "se_run_set_owner_lookup: the callback's bob is 777; a name it does not know keeps the id");
}

/* SE_OPT_SAME_PERMS means the entry's mode, whatever the caller's umask
 * (pacman runs with 022: a 0666 .pacnew came out 0644). */
static void same_perms_exact_under_a_process_umask(void)
{
	static const struct member m[] = { { 'F', "shared", "x" }, { 0, NULL, NULL } };
	mode_t old = umask(022);
	char p[600];
	struct stat st;
	struct job j;

	job_start(&j, true, 0, SE_OPT_SAME_PERMS, NULL);
	job_feed(&j, m);
	se_run_finish(j.run);
	job_end(&j);
	umask(old);
	snprintf(p, sizeof(p), "%s/shared", dest);
	if (stat(p, &st) < 0)
		st.st_mode = 0;
	tap_ok((st.st_mode & 07777) == 0666,
	       "SE_OPT_SAME_PERMS under a process umask of 022: a 0666 entry is 0666 (%04o)",
	       (unsigned int)(st.st_mode & 07777));
}

/* After extraction, a package manager's own steps under the root's scope. */
static void scoped_file_operations(void)
{
	char buf[16] = "";
	se_root *root;
	int fd;

	root = simple_root_with_planted_link();
	fd = se_root_openat(root, "etc/x", O_RDONLY, 0);
	tap_ok(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 4 && !strcmp(buf, "new\n"),
	       "se_root_openat: reads etc/x");
	if (fd >= 0)
		close(fd);
	tap_ok(se_root_openat(root, "up/outside", O_RDONLY, 0) == -ELOOP,
	       "se_root_openat through a planted symlink: -ELOOP");
	tap_ok(se_root_openat(root, "up", O_WRONLY | O_CREAT, 0644) == -ELOOP,
	       "se_root_openat(O_CREAT) onto a planted symlink: -ELOOP, nothing followed");
	tap_ok(se_root_openat(root, "../x", O_RDONLY, 0) == -EINVAL,
	       "se_root_openat of ../x: -EINVAL");
	tap_ok(se_root_renameat(root, "etc/x", "etc/x.pacnew", RENAME_NOREPLACE) == 0 &&
	       has_content("etc/x.pacnew", "new\n") && !exists("etc/x"),
	       "se_root_renameat: etc/x to etc/x.pacnew");
	tap_ok(se_root_renameat(root, "etc/y", "up/y", 0) == -ELOOP &&
	       exists("etc/y"), "se_root_renameat into a planted symlink: -ELOOP, nothing moved");
	tap_ok(se_root_unlinkat(root, "etc/y", 0) == 0 && !exists("etc/y"),
	       "se_root_unlinkat: etc/y removed");
	tap_ok(se_root_unlinkat(root, "up/outside", 0) == -ELOOP,
	       "se_root_unlinkat through a planted symlink: -ELOOP");
	se_root_close(root);
}

/* A file in SCRATCH outside the root, and whether it is still there. */
static bool outside_file(const char *name, bool make)
{
	char p[700];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", outside, name);
	if (make) {
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			abort();
		close(fd);
	}
	return lstat(p, &st) == 0;
}

/*
 * se_root_remove_tree: what GNU tar's incremental restore deletes, fd by
 * fd.  The tree in DEST:
 *
 *   etc/x, etc/y          files (from simple)
 *   gone/a/b/c            a deep tree to remove
 *   gone/link -> OUTSIDE  a symlink to a directory outside, with a file
 *   up -> ../../../..     the planted link of simple_root_with_planted_link
 *
 * The cases: a tree removed whole; a symlink in it removed as itself
 * (OUTSIDE's file stays); a path through a symlink refused; the root
 * itself, '..' and flags refused; a missing name is 0.
 */
static void remove_tree_stays_inside(void)
{
	char p[700];
	se_root *root;
	int fd;

	root = simple_root_with_planted_link();
	snprintf(p, sizeof(p), "mkdir -p '%s/gone/a/b/c' && echo z >'%s/gone/a/b/c/z' && "
		 "ln -s '%s' '%s/gone/link'", dest, dest, outside, dest);
	if (system(p) != 0)
		abort();
	outside_file("keep", true);
	tap_ok(se_root_remove_tree(root, "up/keep", 0) == -ELOOP && outside_file("keep", false),
	       "se_root_remove_tree through a planted symlink: -ELOOP, nothing outside removed");
	tap_ok(se_root_remove_tree(root, "gone", 0) == 0 && !exists("gone") &&
	       outside_file("keep", false),
	       "se_root_remove_tree: a tree with a symlink to a directory outside removed; the link removed as itself");
	tap_ok(se_root_remove_tree(root, "up", 0) == 0 && !exists("up") && exists("etc/x"),
	       "se_root_remove_tree of a symlink: the link itself, never its target");
	tap_ok(se_root_remove_tree(root, "", 0) == -EINVAL &&
	       se_root_remove_tree(root, ".", 0) == -EINVAL &&
	       se_root_remove_tree(root, "etc/..", 0) == -EINVAL && exists("etc/x"),
	       "se_root_remove_tree of the root itself: -EINVAL, nothing removed");
	tap_ok(se_root_remove_tree(root, "../outside", 0) == -EINVAL && outside_file("keep", false),
	       "se_root_remove_tree of ../outside: -EINVAL");
	tap_ok(se_root_remove_tree(root, "etc", 1) == -EINVAL && exists("etc/x"),
	       "se_root_remove_tree with unknown flags: -EINVAL");
	tap_ok(se_root_remove_tree(root, "nosuch/x", 0) == 0 && se_root_remove_tree(root, "nosuch", 0) == 0,
	       "se_root_remove_tree of a missing name: 0");
	fd = se_root_openat(root, "etc", O_RDONLY | O_DIRECTORY, 0);
	tap_ok(se_root_remove_tree(root, "etc", 0) == 0 && !exists("etc") && fd >= 0,
	       "se_root_remove_tree: a directory with files");
	if (fd >= 0)
		close(fd);
	se_root_close(root);
	/* The witness goes, so that the last check (nothing ever appeared
	 * in outside/) is about the library alone. */
	snprintf(p, sizeof(p), "%s/keep", outside);
	unlink(p);
}

/*
 * se_run_remove_tree and se_run_renameat while a run goes (GNU tar's
 * incremental restore, from a directory record): the run's deferred
 * directory metadata follows them.  A directory the run made and the
 * caller removed is not looked for at the end (it was: "failed 'd'", GNU
 * tar's incr10); one renamed gets its mode and times at its new name
 * (incr11).  Only what the call itself removed is forgotten: a directory
 * of the run's swapped out of the way by someone else before the call
 * still fails at the end, never in silence.
 */
static const struct member three_dirs[] = {
	{ 'd', "d/", NULL, NULL, NULL },
	{ 'd', "d/sub/", NULL, NULL, NULL },
	{ 'd', "e/", NULL, NULL, NULL },
	{ 'd', "x/", NULL, NULL, NULL },
	{ 0, NULL, NULL, NULL, NULL },
};

static void run_remove_and_rename_keep_deferred_metadata(void)
{
	struct seen s = { 0 };
	char p[700], q[700];
	struct stat st;
	struct job j;
	int rm, mv, verdict;

	job_start(&j, true, 0, 0, &s);
	job_feed(&j, three_dirs);
	rm = se_run_remove_tree(j.run, "d", 0);
	mv = se_run_renameat(j.run, "e", "e2", 0);
	verdict = se_run_finish(j.run);
	job_end(&j);
	snprintf(p, sizeof(p), "%s/e2", dest);
	tap_ok(rm == 0 && mv == 0 && verdict == 0 && s.failed == 0 && !exists("d"),
	       "se_run_remove_tree of a directory the run made: the end does not look for it (verdict %d, %d failed)",
	       verdict, s.failed);
	tap_ok(stat(p, &st) == 0 && st.st_mtime == 1000000000,
	       "se_run_renameat: the renamed directory gets its times at the new name");

	/* Someone swaps d for a directory of their own before the removal:
	 * that one goes, and the run's own d (moved to d.moved) is still
	 * reported at the end. */
	memset(&s, 0, sizeof(s));
	job_start(&j, true, 0, 0, &s);
	job_feed(&j, three_dirs);
	snprintf(p, sizeof(p), "%s/d", dest);
	snprintf(q, sizeof(q), "%s/d.moved", dest);
	if (rename(p, q) < 0 || mkdir(p, 0755) < 0)
		abort();
	rm = se_run_remove_tree(j.run, "d", 0);
	verdict = se_run_finish(j.run);
	job_end(&j);
	tap_ok(rm == 0 && verdict == 1 && s.failed >= 1 && exists("d.moved/sub"),
	       "a directory swapped in before se_run_remove_tree: the run's own still fails at the end (verdict %d, %d failed)",
	       verdict, s.failed);

	/* Without a root, or with a journal to keep: refused. */
	job_start(&j, true, 0, SE_OPT_DURABLE, NULL);
	tap_ok(se_run_remove_tree(j.run, "x", 0) == -EOPNOTSUPP &&
	       se_run_renameat(j.run, "x", "y", 0) == -EOPNOTSUPP,
	       "se_run_remove_tree and se_run_renameat with SE_OPT_DURABLE: -EOPNOTSUPP");
	job_end(&j);
	{
		se_run *run = se_run_new(NULL, 0);

		tap_ok(run && se_run_remove_tree(run, "x", 0) == -EINVAL,
		       "se_run_remove_tree without a root: -EINVAL");
		se_run_free(run);
	}
}

/*
 * SE_RENAME_MAKE_PARENTS: a rename into directories that do not exist yet
 * makes them (GNU tar's incremental restore of a directory renamed into a
 * new one), only when FROM exists, and only inside DEST: a symlink planted
 * on the way to TO is never followed, nothing is made outside.
 */
static void run_rename_makes_missing_parents_inside(void)
{
	char p[700];
	struct seen s = { 0 };
	struct stat st;
	struct job j;
	int mk, none, planted, verdict;

	job_start(&j, true, 0, 0, &s);
	job_feed(&j, three_dirs);
	snprintf(p, sizeof(p), "%s/lnk", dest);
	if (symlink(outside, p) < 0)
		abort();
	mk = se_run_renameat(j.run, "e", "n1/n2/e", SE_RENAME_MAKE_PARENTS);
	none = se_run_renameat(j.run, "nosuch", "m1/m2/z", SE_RENAME_MAKE_PARENTS);
	planted = se_run_renameat(j.run, "x", "lnk/p/x", SE_RENAME_MAKE_PARENTS);
	verdict = se_run_finish(j.run);
	job_end(&j);
	snprintf(p, sizeof(p), "%s/n1/n2/e", dest);
	tap_ok(mk == 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_mtime == 1000000000 &&
	       !exists("e") && verdict == 0,
	       "SE_RENAME_MAKE_PARENTS: n1/n2 made, e renamed into it with its times (%d, verdict %d)",
	       mk, verdict);
	tap_ok(none == -ENOENT && !exists("m1"),
	       "SE_RENAME_MAKE_PARENTS with FROM missing: -ENOENT, no directory made (%d)", none);
	tap_ok(planted < 0 && exists("x") && !outside_file("p", false),
	       "SE_RENAME_MAKE_PARENTS through a planted symlink: refused (%d), nothing made outside",
	       planted);
	snprintf(p, sizeof(p), "%s/lnk", dest);
	unlink(p);
}

static void free_without_finish_leaves_no_temporary(void)
{
	struct job j;

	job_start(&j, true, 0, SE_OPT_DURABLE, NULL);
	job_feed(&j, simple);
	job_end(&j);
	tap_ok(count_temps(dest) == 0 && !exists("etc/x"),
	       "se_run_free before se_run_finish: every temporary removed, nothing committed");
}

/* se_run_entry: the caller drives the reader; a refusal is copied into the
 * reader's error with a real errno. */
static void caller_owned_loop_gets_archive_error(void)
{
	struct archive_entry *e;
	struct archive *a = archive_read_new();
	se_root *root;
	se_run *run;
	size_t len;
	void *buf = make_tar(planted_link, &len);
	int r, n = 0, errs = 0, refused_errno = 0;

	fresh_dest();
	archive_read_support_format_tar(a);
	archive_read_open_memory(a, buf, len);
	if (se_root_open(dest, 0, &root) < 0)
		abort();
	run = se_run_new(root, 0);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		archive_clear_error(a);
		r = se_run_entry(run, a, e);
		n++;
		if (r < 0)
			errs++;
		if (archive_errno(a))
			refused_errno = archive_errno(a);
	}
	archive_read_free(a);
	r = se_run_finish(run);
	se_run_free(run);
	se_root_close(root);
	free(buf);
	tap_ok(n == 2 && errs == 0 && refused_errno == ELOOP && r == 1,
	       "se_run_entry loop: refusal returns 0, archive_errno is ELOOP, verdict 1 (%d entries, errno %d, verdict %d)",
	       n, refused_errno, r);
}

/* The caller drives se_run_entry() with writer threads and frees its
 * reader before se_run_finish(): the files in flight do not need it. */
static void jobs_caller_loop_frees_the_reader_before_finish(void)
{
	static const struct member m[] = {
		{ 'f', "a", "one\n" }, { 'f', "b", "two\n" }, { 'd', "c", NULL },
		{ 'f', "c/d", "three\n" }, { 0, NULL, NULL },
	};
	struct archive_entry *e;
	struct archive *a = archive_read_new();
	se_root *root;
	se_run *run;
	size_t len;
	void *buf = make_tar(m, &len);
	int r, errs = 0;

	fresh_dest();
	archive_read_support_format_tar(a);
	archive_read_open_memory(a, buf, len);
	if (se_root_open(dest, 0, &root) < 0)
		abort();
	run = se_run_new(root, 0);
	se_run_set_jobs(run, 3);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK)
		errs += se_run_entry(run, a, e) < 0;
	archive_read_free(a);
	free(buf);
	r = se_run_finish(run);
	se_run_free(run);
	se_root_close(root);
	tap_ok(errs == 0 && r == 0 && has_content("a", "one\n") && has_content("b", "two\n") &&
	       has_content("c/d", "three\n") && count_temps(dest) == 0,
	       "three writers, the caller's own loop, its reader freed before se_run_finish: every file placed (verdict %d)",
	       r);
}

static void report_fd_gets_one_json_line_per_entry(void)
{
	int rep = memfd_create("report", MFD_CLOEXEC);
	char out[4096] = "";
	struct job j;
	ssize_t n;
	int lines = 0;

	job_start(&j, true, 0, 0, NULL);
	se_run_set_report_fd(j.run, rep);
	job_feed(&j, planted_link);
	se_run_finish(j.run);
	job_end(&j);
	lseek(rep, 0, SEEK_SET);
	n = read(rep, out, sizeof(out) - 1);
	out[n > 0 ? n : 0] = '\0';
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	tap_ok(lines == 2 && strstr(out, "\"action\":\"refused\"") &&
	       strstr(out, "\"errno\":\"ELOOP\"") && fcntl(rep, F_GETFD) >= 0,
	       "se_run_set_report_fd: one JSON line per entry, the refusal with ELOOP; the fd stays the caller's");
	close(rep);
}

static void selection_and_unmatched_patterns(void)
{
	const char *miss;
	struct job j;
	int v;

	job_start(&j, true, 0, 0, NULL);
	se_run_add_include(j.run, "etc");
	se_run_add_include(j.run, "nosuch");
	se_run_add_exclude(j.run, "y");
	job_feed(&j, simple);
	v = se_run_finish(j.run);
	miss = se_run_unmatched(j.run, 0);
	tap_ok(v == 0 && exists("etc/x") && !exists("etc/y"),
	       "include etc, exclude y: etc/x written, etc/y not (verdict %d)", v);
	tap_ok(miss && strcmp(miss, "nosuch") == 0 && se_run_unmatched(j.run, 1) == NULL,
	       "se_run_unmatched lists the include that matched nothing, and only it");
	job_end(&j);
}

static void strip_components(void)
{
	static const struct member m[] = {
		{ 'f', "top/a/file", "s\n" }, { 0, NULL, NULL },
	};
	struct job j;

	job_start(&j, true, 0, 0, NULL);
	tap_ok(se_run_set_strip_components(j.run, -1) == -EINVAL,
	       "se_run_set_strip_components(-1): -EINVAL");
	se_run_set_strip_components(j.run, 1);
	job_feed(&j, m);
	se_run_finish(j.run);
	job_end(&j);
	tap_ok(has_content("a/file", "s\n") && !exists("top"),
	       "se_run_set_strip_components(1): top/a/file lands at a/file");
}

static void empty_input_is_enodata(void)
{
	se_root *root;
	se_run *run;
	struct archive *a = (struct archive *)1;
	int fd = memfd_create("empty", MFD_CLOEXEC), r;
	struct seen s = { 0 };

	fresh_dest();
	if (se_root_open(dest, 0, &root) < 0)
		abort();
	run = se_run_new(root, 0);
	se_run_set_log(run, log_cb, &s);
	r = se_run_open_fd(run, fd, NULL, &a);
	tap_ok(r == -ENODATA && a == NULL && s.logs == 1,
	       "se_run_open_fd on empty input: -ENODATA, no reader, one log message (%d)", r);
	tap_ok(se_run_open_fd(run, fd, "tar,nosuch", &a) == -EINVAL,
	       "se_run_open_fd with an unknown format: -EINVAL");
	se_run_free(run);
	se_root_close(root);
	close(fd);
}

static se_run *signal_run;

static void on_alarm(int sig)
{
	se_run_cancel(signal_run);
}

/* A reader stalled on a pipe: SIGALRM's handler cancels the run, the read
 * wakes up, the live temporary goes. */
static void cancel_from_signal_handler(void)
{
	static const struct member m[] = {
		{ 'f', "first", "1\n" }, { 'f', "second", "2\n" }, { 0, NULL, NULL },
	};
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct archive *a;
	se_root *root;
	size_t len;
	void *buf = make_tar(m, &len);
	int p[2], r = 0, v;

	fresh_dest();
	if (pipe2(p, O_CLOEXEC) < 0 || se_root_open(dest, 0, &root) < 0)
		abort();
	/* Only the first member's header and data: then the pipe stalls. */
	if (write(p[1], buf, 1536) != 1536)
		abort();
	signal_run = se_run_new(root, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarm(1);
	if (se_run_open_fd(signal_run, p[0], NULL, &a) == 0) {
		r = se_run_archive(signal_run, a);
		archive_read_free(a);
	}
	alarm(0);
	sigaction(SIGALRM, &old, NULL);
	v = se_run_finish(signal_run);
	se_run_free(signal_run);
	se_root_close(root);
	close(p[0]);
	close(p[1]);
	free(buf);
	tap_ok(r < 0 && v == 2 && count_temps(dest) == 0 && !exists("second"),
	       "se_run_cancel from a signal handler wakes a stalled read: error %d, verdict %d, no temporary",
	       r, v);
}

/* The library must leave process state alone: umask, signal dispositions,
 * and it prints nothing on stdout or stderr. */
static void process_state_untouched(void)
{
	struct sigaction before[NSIG], after;
	mode_t m1, m2;
	struct seen s = { 0 };
	int out, err, saved1, saved2, changed = 0;
	struct stat st1, st2;
	char tmp1[] = "/tmp/se-api-out.XXXXXX", tmp2[] = "/tmp/se-api-err.XXXXXX";

	m1 = umask(027);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, NULL, &before[sig]);
	fflush(stdout);
	out = mkstemp(tmp1);
	err = mkstemp(tmp2);
	saved1 = dup(1);
	saved2 = dup(2);
	dup2(out, 1);
	dup2(err, 2);
	/* A refusal, a warning and a forced walk: everything that might be
	 * tempted to print. */
	extract(planted_link, SE_BACKEND_WALK, SE_OPT_DURABLE, &s);
	fflush(stdout);
	fflush(stderr);
	dup2(saved1, 1);
	dup2(saved2, 2);
	close(saved1);
	close(saved2);
	m2 = umask(m1);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &after) < 0)
			continue;
		if (after.sa_handler != before[sig].sa_handler)
			changed++;
	}
	fstat(out, &st1);
	fstat(err, &st2);
	tap_ok(m2 == 027, "the umask is the caller's after a run (%03o)", (unsigned int)m2);
	tap_ok(changed == 0, "no signal disposition changed (%d changed)", changed);
	tap_ok(st1.st_size == 0 && st2.st_size == 0 && s.refused == 1,
	       "nothing printed on stdout (%lld bytes) or stderr (%lld bytes)",
	       (long long)st1.st_size, (long long)st2.st_size);
	close(out);
	close(err);
	unlink(tmp1);
	unlink(tmp2);
}

static void stats_count_what_happened(void)
{
	struct se_stats st = { .size = sizeof(st) };
	struct se_stats small = { .size = 4 };
	struct job j;

	job_start(&j, true, 0, 0, NULL);
	job_feed(&j, planted_link);
	se_run_finish(j.run);
	tap_ok(se_run_stats(j.run, &st) == 0 && st.entries == 2 && st.refused == 1 &&
	       st.failed == 0, "se_run_stats: 2 entries, 1 refused, 0 failed");
	tap_ok(se_run_stats(j.run, &small) == -EINVAL,
	       "se_run_stats with a smaller struct: -EINVAL");
	job_end(&j);
}

static void dry_run_without_root_writes_nothing(void)
{
	struct seen s = { 0 };
	struct archive *a;
	se_run *run = se_run_new(NULL, 0);
	size_t len;
	void *buf = make_tar(simple, &len);
	int fd = archive_fd(buf, len), v;

	fresh_dest();
	se_run_set_callback(run, entry_cb, &s);
	if (se_run_open_fd(run, fd, NULL, &a) == 0) {
		se_run_archive(run, a);
		archive_read_free(a);
	}
	v = se_run_finish(run);
	se_run_free(run);
	close(fd);
	free(buf);
	tap_ok(v == 0 && s.created == 3 && count_entries(dest) == 0,
	       "se_run_new(NULL): a dry run, names checked and reported, nothing written");
}

/* SE_OPT_SHA256: the digest of what was written, for callers that record
 * checksums (pacman, dpkg, apk reopen the path today). */
/* sha256sum(1)'s digest of REL in DEST into WANT, or "" when it fails. */
static void sha256sum_of(const char *rel, char want[65])
{
	char cmd[700];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sha256sum '%s/%s'", dest, rel);
	p = popen(cmd, "r");
	if (!p || fscanf(p, "%64s", want) != 1)
		want[0] = '\0';
	if (p)
		pclose(p);
}

static void sha256_of_written_data(void)
{
	static char big[200001];
	struct member m[] = {
		{ 'f', "abc", "abc" },
		{ 'f', "big", big },
		{ 'l', "link", "abc" },
		{ 0, NULL, NULL },
	};
	struct member one[] = { { 'f', "abc", "abc" }, { 0, NULL, NULL } };
	struct seen s = { 0 };
	char want[65] = "";

	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + (i * 7 + i / 13) % 26);
	extract(one, 0, SE_OPT_SHA256, &s);
	tap_ok(strcmp(s.sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	       "SE_OPT_SHA256: 'abc' gives the FIPS 180-2 test vector (%s)", s.sha);
	memset(&s, 0, sizeof(s));
	extract(m, 0, SE_OPT_SHA256, &s);
	sha256sum_of("big", want);
	/* The symlink comes last and carries no digest: s.sha is big's. */
	tap_ok(s.digests == 2 && want[0] && strcmp(s.sha, want) == 0,
	       "SE_OPT_SHA256: a 200 kB file's digest is sha256sum's; none for the symlink (%d digests)",
	       s.digests);
	memset(&s, 0, sizeof(s));
	extract(one, 0, 0, &s);
	tap_ok(s.digests == 0, "without SE_OPT_SHA256: no digest");

	/* With writer threads: a file written from memory by a writer, and
	 * one past the 512 KiB buffer, sent in chunks. */
	for (int k = 0; k < 2; k++) {
		static char huge[600001];
		struct member mj[] = {
			{ 'f', "abc", "abc" },
			{ 'f', k ? "huge" : "big", k ? huge : big },
			{ 'l', "link", "abc" },
			{ 0, NULL, NULL },
		};
		struct job j;

		for (size_t i = 0; i < sizeof(huge) - 1; i++)
			huge[i] = (char)('a' + (i * 11 + i / 17) % 26);
		memset(&s, 0, sizeof(s));
		job_start(&j, true, 0, SE_OPT_SHA256, &s);
		se_run_set_jobs(j.run, 4);
		job_feed(&j, mj);
		se_run_finish(j.run);
		job_end(&j);
		sha256sum_of(mj[1].name, want);
		tap_ok(s.digests == 2 && want[0] && strcmp(s.sha, want) == 0,
		       "SE_OPT_SHA256, four writers: %s's digest is sha256sum's (%d digests)",
		       k ? "a 600 kB file in chunks" : "a 200 kB file from memory", s.digests);
	}
}

/* se_sandbox_apply in a child (it is for good): a create outside the root
 * by name is refused, inside allowed; the parent is left as it was. */
static void sandbox_confines_the_caller(void)
{
	char in[600], out[600];
	int status = -1;
	pid_t pid;

	/* Valgrind cannot follow a process into seccomp (api-valgrind.test). */
	if (getenv("SE_API_NO_SANDBOX")) {
		tap_skip("se_sandbox_apply: SE_API_NO_SANDBOX is set");
		return;
	}
	fresh_dest();
	snprintf(in, sizeof(in), "%s/inside", dest);
	snprintf(out, sizeof(out), "%s/sandboxed", outside);
	pid = fork();
	if (pid == 0) {
		struct se_sandbox sb = { .size = sizeof(sb) };
		se_root *root;
		int r, fo, fi;

		if (se_root_open(dest, 0, &root) < 0)
			_exit(10);
		r = se_sandbox_apply(root, 0, &sb);
		if (r == -ENOSYS)
			_exit(77);
		if (r < 0)
			_exit(11);
		fo = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		fi = open(in, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		_exit(fo < 0 && errno != 0 && fi >= 0 && sb.landlock_applied ? 0 : 12);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		tap_skip("se_sandbox_apply: no Landlock ABI 2 on this kernel");
		unlink(out);
		return;
	}
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(out, F_OK) != 0 &&
	       access(in, F_OK) == 0,
	       "se_sandbox_apply: outside DEST a create is refused, inside allowed (child status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	unlink(out);
}

static void helpers(void)
{
	static const struct { const char *in, *out; } esc[] = {
		{ "plain", "plain" },
		{ "a\x1b[31mred", "a\\x1b[31mred" },
		{ "quo'te\\", "quo\\'te\\\\" },
		{ "caf\xc3\xa9", "caf\\xc3\\xa9" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(esc) / sizeof(esc[0]); i++)
		tap_ok(strcmp(se_escape(esc[i].in, buf, sizeof(buf)), esc[i].out) == 0,
		       "se_escape: %s", esc[i].out);
	se_escape("0123456789abcdef", buf, 10);
	tap_ok(strstr(buf, "...") != NULL && strlen(buf) < 10,
	       "se_escape truncates visibly: %s", buf);
	tap_ok(!strcmp(se_errno_name(ELOOP), "ELOOP") && !strcmp(se_errno_name(-5), "EUNKNOWN"),
	       "se_errno_name: ELOOP, and EUNKNOWN for nonsense");
	tap_ok(!strcmp(se_action_name(SE_REFUSED), "refused") &&
	       !strcmp(se_action_name(SE_INCOMPLETE), "incomplete") &&
	       !strcmp(se_action_name((enum se_action)99), "unknown"),
	       "se_action_name");
	tap_ok(se_format_known("tar") && se_format_known("7z") && se_format_known("mtree") &&
	       !se_format_known("nosuch"), "se_format_known");
	tap_ok(se_version() && se_version()[0] >= '0' && se_version()[0] <= '9',
	       "se_version: %s", se_version());
}

/* AFTER's entry on every path: the name and type the plan decoded, with
 * writer threads too (it was NULL for every entry with jobs > 1). */
struct after_check {
	int seen, null_entry, wrong;
};

static int after_check_cb(void *data, struct se_entry *e)
{
	struct after_check *c = data;
	mode_t want;

	if (e->stage != SE_AFTER)
		return SE_CONTINUE;
	c->seen++;
	if (!e->entry) {
		c->null_entry++;
		return SE_CONTINUE;
	}
	want = strcmp(e->type, "file") == 0 ? AE_IFREG :
	       strcmp(e->type, "directory") == 0 ? AE_IFDIR :
	       strcmp(e->type, "symlink") == 0 ? AE_IFLNK : 0;
	if (strcmp(archive_entry_pathname(e->entry), e->name) != 0 ||
	    (want && archive_entry_filetype(e->entry) != want) ||
	    (strcmp(e->type, "hardlink") == 0 && !archive_entry_hardlink(e->entry)) ||
	    (want == AE_IFLNK && !archive_entry_symlink(e->entry)))
		c->wrong++;
	return SE_CONTINUE;
}

static void after_entry_never_null(void)
{
	static const struct member m[] = {
		{ 'd', "d/", NULL }, { 'f', "d/a", "a\n" }, { 'f', "d/b", "b\n" },
		{ 'l', "d/l", "a" }, { 'h', "d/h", "d/a" }, { 'f', "../escape", "no\n" },
		{ 'f', "d/c", "c\n" }, { 0, NULL, NULL },
	};
	static const unsigned int jobs[] = { 1, 4 };

	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct after_check c = { 0 };
		struct job j;

		job_start(&j, true, 0, 0, NULL);
		se_run_set_jobs(j.run, jobs[i]);
		se_run_set_callback(j.run, after_check_cb, &c);
		job_feed(&j, m);
		se_run_finish(j.run);
		job_end(&j);
		tap_ok(c.seen == 7 && c.null_entry == 0 && c.wrong == 0,
		       "AFTER with %u jobs: an entry with the name and type on every path "
		       "(%d seen, %d NULL, %d wrong)", jobs[i], c.seen, c.null_entry, c.wrong);
	}
}

/* AFTER callbacks of a run with writer threads, in the order they came. */
struct order {
	char names[300][16];
	int n;
	bool all_there;		/* every earlier file at its name in AFTER */
};

static int order_cb(void *data, struct se_entry *e)
{
	struct order *o = data;

	if (e->stage != SE_AFTER || o->n >= 300)
		return SE_CONTINUE;
	snprintf(o->names[o->n++], sizeof(o->names[0]), "%s", e->name);
	return SE_CONTINUE;
}

static void jobs_keep_archive_order(void)
{
	static char names[240][16], data[240][16];
	struct member m[242];
	struct order o = { .n = 0 };
	struct se_stats st = { .size = sizeof(st) };
	struct job j;
	bool in_order = true, present = true;
	int r, v, k = 0;

	for (int i = 0; i < 240; i++) {
		snprintf(names[i], sizeof(names[i]), "d%d/f%03d", i % 5, i);
		snprintf(data[i], sizeof(data[i]), "data %d\n", i);
		m[k++] = (struct member){ 'f', names[i], data[i] };
		if (i == 120)	/* a refusal among the files in flight */
			m[k++] = (struct member){ 'f', "../escape", "no\n" };
	}
	m[k] = (struct member){ 0, NULL, NULL };

	job_start(&j, true, 0, 0, NULL);
	tap_ok(se_run_set_jobs(j.run, SE_JOBS_MAX + 1) == -EINVAL &&
	       se_run_set_jobs(j.run, SE_JOBS_AUTO) == 0 &&
	       se_run_set_xz_memlimit(j.run, 0) == -EINVAL,
	       "se_run_set_jobs: more than SE_JOBS_MAX is EINVAL, SE_JOBS_AUTO is taken; no xz memory is EINVAL");
	tap_ok(se_run_set_jobs(j.run, 4) == 0, "se_run_set_jobs(4)");
	se_run_set_callback(j.run, order_cb, &o);
	r = job_feed(&j, m);
	/* se_run_archive returns with every file of the archive placed. */
	for (int i = 0; i < 240; i++)
		present &= has_content(names[i], data[i]);
	v = se_run_finish(j.run);
	se_run_stats(j.run, &st);
	for (int i = 0, n = 0; i < k; i++, n++)
		if (n >= o.n || strcmp(o.names[n], m[i].name) != 0)
			in_order = false;
	job_end(&j);
	tap_ok(r == 0 && v == 1, "four writers: the archive read to its end, verdict 1 for the refusal (%d, %d)",
	       r, v);
	tap_ok(o.n == k && in_order, "four writers: one AFTER per entry, in archive order (%d of %d)",
	       o.n, k);
	tap_ok(present, "four writers: every file at its name when se_run_archive returns");
	tap_ok(st.entries == (uint64_t)k && st.refused == 1 && st.failed == 0,
	       "four writers: counters as with one (%llu entries, %llu refused)",
	       (unsigned long long)st.entries, (unsigned long long)st.refused);
	tap_ok(count_temps(dest) == 0, "four writers: no temporaries");
}

/* Two layers through the library: the second's whiteout and opaque
 * marker take the first's names, never the second's own, and no marker
 * reaches DEST.  The setter's refusals, as documented. */
static void whiteouts_apply_a_layer(void)
{
	static const struct member lower[] = {
		{ 'f', "gone", "1\n" },
		{ 'd', "o", NULL },
		{ 'f', "o/old", "1\n" },
		{ 'f', "kept", "1\n" },
		{ 0, NULL, NULL },
	};
	static const struct member upper[] = {
		{ 'f', ".wh.gone", "" },
		{ 'f', "o/new", "2\n" },
		{ 'f', "o/.wh..wh..opq", "" },
		{ 'f', "kept", "2\n" },
		{ 'f', ".wh.kept", "" },
		{ 'f', ".wh..", "" },
		{ 0, NULL, NULL },
	};
	struct seen s = { 0 };
	struct job j;
	int v, r1, r2, r3, r4;

	job_start(&j, true, SE_IN_ROOT, 0, NULL);
	r1 = se_run_set_whiteouts(j.run, 7);
	r2 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OCI);
	job_feed(&j, lower);
	r3 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_NONE);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r1 == -EINVAL && r2 == 0 && r3 == -EBUSY && v == 0,
	       "se_run_set_whiteouts: unknown format -EINVAL, OCI 0, after an entry -EBUSY (%d %d %d)",
	       r1, r2, r3);
	job_start(&j, false, SE_IN_ROOT, 0, &s);
	r4 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OCI);
	job_feed(&j, upper);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r4 == 0 && v == 1 && !exists("gone") && !exists("o/old") &&
	       has_content("o/new", "2\n") && has_content("kept", "2\n") && exists(".") &&
	       !exists(".wh.gone") && !exists("o/.wh..wh..opq") && !exists(".wh.kept") &&
	       s.refused == 1,
	       "SE_WHITEOUTS_OCI: lower names removed, this layer's kept, '.wh..' refused, no marker in DEST (verdict %d, refused %d)",
	       v, s.refused);
	/* The same two layers with SE_OPT_DURABLE: the removals are
	 * journaled moves aside, the tree is the same. */
	job_start(&j, true, SE_IN_ROOT, 0, NULL);
	r1 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OCI);
	job_feed(&j, lower);
	v = se_run_finish(j.run);
	job_end(&j);
	memset(&s, 0, sizeof(s));
	job_start(&j, false, SE_IN_ROOT, SE_OPT_DURABLE, &s);
	r4 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OCI);
	job_feed(&j, upper);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r1 == 0 && r4 == 0 && v == 1 && !exists("gone") && !exists("o/old") &&
	       has_content("o/new", "2\n") && has_content("kept", "2\n") &&
	       !exists(".wh.gone") && !exists("o/.wh..wh..opq") && s.refused == 1 &&
	       count_temps(dest) == 0 && !exists(".safe-extract-journal"),
	       "SE_WHITEOUTS_OCI with SE_OPT_DURABLE: the same tree, no temporary, no journal (%d, verdict %d, refused %d)",
	       r4, v, s.refused);
}

/* Overlay format: the markers stay as overlayfs reads them (a 0/0
 * character device; the opaque xattr, user.* here so that the file
 * system needs no trusted.* support), and an image's own xattr in that
 * namespace is stored escaped. */
static void whiteouts_overlay_format(void)
{
	static const struct member layer[] = {
		{ 'f', ".wh.gone", "" },
		{ 'd', "o", NULL },
		{ 'f', "o/.wh..wh..opq", "" },
		{ 'f', "o/new", "2\n" },
		{ 0, NULL, NULL },
	};
	char p[600], v[8];
	struct stat st;
	struct job j;
	int r1, r2, r3, r4, verdict;
	ssize_t n;

	job_start(&j, true, SE_IN_ROOT, 0, NULL);
	r1 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OVERLAY);
	r2 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OVERLAY_USER + 1);
	r3 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OVERLAY_USER);
	job_end(&j);
	job_start(&j, true, SE_IN_ROOT, SE_OPT_DURABLE, NULL);
	r4 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OVERLAY);
	job_end(&j);
	tap_ok(r1 == 0 && r2 == -EINVAL && r3 == 0 && r4 == -EOPNOTSUPP,
	       "se_run_set_whiteouts: OVERLAY 0, an unknown format -EINVAL, OVERLAY_USER 0, OVERLAY with SE_OPT_DURABLE -EOPNOTSUPP (%d %d %d %d)",
	       r1, r2, r3, r4);
	if (geteuid() != 0) {
		tap_skip("overlay whiteouts applied: a 0/0 character device needs root");
		return;
	}
	job_start(&j, true, SE_IN_ROOT, 0, NULL);
	r1 = se_run_set_whiteouts(j.run, SE_WHITEOUTS_OVERLAY_USER);
	job_feed(&j, layer);
	verdict = se_run_finish(j.run);
	job_end(&j);
	snprintf(p, sizeof(p), "%s/gone", dest);
	r2 = lstat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0) &&
	     (st.st_mode & 07777) == 0;
	snprintf(p, sizeof(p), "%s/o", dest);
	n = lgetxattr(p, "user.overlay.opaque", v, sizeof(v));
	tap_ok(r1 == 0 && verdict == 0 && r2 && n == 1 && v[0] == 'y' &&
	       has_content("o/new", "2\n") && !exists(".wh.gone") && !exists("o/.wh..wh..opq"),
	       "SE_WHITEOUTS_OVERLAY_USER: a whiteout is a 0/0 device, an opaque marker the xattr user.overlay.opaque (verdict %d, device %d, xattr %zd)",
	       verdict, r2, n);
}

/* se_run_image on an image archive (a regular file): an O_PATH fd, an
 * archive without an image, a config not named by its digest, a
 * manifest.json with no image: each refused with the errno the header
 * gives, nothing written. */
static void image_archive_refusals(void)
{
	static const struct member no_image[] = {
		{ 'f', "x", "1\n" },
		{ 0, NULL, NULL },
	};
	static const struct member bad_config[] = {
		{ 'f', "config.json", "{}" },
		{ 'f', "manifest.json", "[{\"Config\":\"config.json\",\"Layers\":[]}]" },
		{ 0, NULL, NULL },
	};
	static const struct member empty[] = {
		{ 'f', "manifest.json", "[]" },
		{ 0, NULL, NULL },
	};
	const struct member *const archives[] = { no_image, bad_config, empty };
	const int want[] = { -ENOENT, -EINVAL, -ENOENT };
	int got[3], opath, fd;
	char path[] = "/tmp/se-api-image.XXXXXX";
	struct job j;
	size_t len;
	void *buf;

	for (int i = 0; i < 3; i++) {
		buf = make_tar(archives[i], &len);
		fd = archive_fd(buf, len);
		free(buf);
		job_start(&j, true, SE_IN_ROOT, SE_OPT_NUMERIC_OWNER | SE_OPT_SAME_PERMS, NULL);
		got[i] = se_run_image(j.run, fd, NULL, NULL);
		job_end(&j);
		close(fd);
	}
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	opath = open(path, O_PATH | O_CLOEXEC);
	job_start(&j, true, SE_IN_ROOT, SE_OPT_NUMERIC_OWNER | SE_OPT_SAME_PERMS, NULL);
	len = (size_t)se_run_image(j.run, opath, NULL, NULL);
	job_end(&j);
	unlink(path);
	close(fd);
	close(opath);
	tap_ok(got[0] == want[0] && got[1] == want[1] && got[2] == want[2] &&
	       (int)len == -EBADF && count_entries(dest) == 0,
	       "se_run_image on an archive: no image -ENOENT, a config not named by its digest -EINVAL, no image in manifest.json -ENOENT, an O_PATH fd -EBADF, nothing written (%d %d %d %d)",
	       got[0], got[1], got[2], (int)len);
}

/* se_run_add_id_map: each refusal the header documents, ranges that
 * touch but do not overlap, owners mapped, an id outside every range
 * never set (the entry incomplete, the reason naming it), one kind
 * alone mapping none of the other, and -EBUSY once an entry is in. */
static void id_maps_map_owners_or_report(void)
{
	static const struct member m[] = {
		{ 'f', "owned", "x\n", "u", "g" },
		{ 0, NULL, NULL },
	};
	const unsigned int both = SE_MAP_UID | SE_MAP_GID;
	struct seen s = { 0 };
	struct job j;
	int r[12], v;

	if (geteuid() != 0) {
		job_start(&j, true, 0, SE_OPT_SAME_OWNER, NULL);
		r[0] = se_run_add_id_map(j.run, both, 0, 100000, 10);
		job_end(&j);
		tap_ok(r[0] == -EPERM, "se_run_add_id_map without root: -EPERM (%d)", r[0]);
		tap_skip("se_run_add_id_map owners: needs root");
		tap_skip("se_run_add_id_map outside every range: needs root");
		tap_skip("se_run_add_id_map one kind alone: needs root");
		tap_skip("se_run_add_id_map on a run that sets no owner: needs root");
		return;
	}
	job_start(&j, true, 0, SE_OPT_SAME_OWNER | SE_OPT_NUMERIC_OWNER, &s);
	r[0] = se_run_add_id_map(j.run, 0, 0, 100000, 10);
	r[1] = se_run_add_id_map(j.run, 4, 0, 100000, 10);
	r[2] = se_run_add_id_map(j.run, both, 0, 100000, 0);
	r[3] = se_run_add_id_map(j.run, both, 4294967294u, 0, 2);
	r[4] = se_run_add_id_map(j.run, both, 0, 4294967295u, 1);
	r[5] = se_run_add_id_map(j.run, both, 1000, 200000, 10);
	r[6] = se_run_add_id_map(j.run, SE_MAP_UID, 1009, 300000, 1);
	r[7] = se_run_add_id_map(j.run, SE_MAP_GID, 0, 200009, 5);
	r[8] = se_run_add_id_map(j.run, both, 1010, 200010, 5);
	r[9] = se_run_add_id_map(j.run, both, 4294967293u, 4294967293u, 1);
	job_feed(&j, m);
	r[10] = se_run_add_id_map(j.run, both, 5000, 500000, 1);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r[0] == -EINVAL && r[1] == -EINVAL && r[2] == -EINVAL && r[3] == -EINVAL &&
	       r[4] == -EINVAL && r[5] == 0 && r[6] == -EINVAL && r[7] == -EINVAL &&
	       r[8] == 0 && r[9] == 0 && r[10] == -EBUSY,
	       "se_run_add_id_map: no kind, unknown kind, count 0, reaching 4294967295 (container, host), overlapping container ids, overlapping host ids -EINVAL; adjacent and last ranges 0; after an entry -EBUSY (%d %d %d %d %d %d %d %d %d %d %d)",
	       r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10]);
	tap_ok(v == 0 && owned_by("owned", 200000, 200000),
	       "se_run_add_id_map: container 1000:1000 owned by host 200000:200000 (verdict %d)", v);

	memset(&s, 0, sizeof(s));
	job_start(&j, true, 0, SE_OPT_SAME_OWNER | SE_OPT_NUMERIC_OWNER, &s);
	r[0] = se_run_add_id_map(j.run, both, 0, 100000, 1000);
	job_feed(&j, m);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r[0] == 0 && v == 1 && s.failed == 1 && s.last_error == ERANGE &&
	       strcmp(s.last_reason, "uid 1000 and gid 1000 are outside every --map-ids range: owner not restored") == 0 &&
	       owned_by("owned", getuid(), getgid()),
	       "se_run_add_id_map: ids outside every range: owner not set, SE_INCOMPLETE, ERANGE (verdict %d, '%s')",
	       v, s.last_reason);

	memset(&s, 0, sizeof(s));
	job_start(&j, true, 0, SE_OPT_SAME_OWNER | SE_OPT_NUMERIC_OWNER, &s);
	r[0] = se_run_add_id_map(j.run, SE_MAP_UID, 0, 100000, 2000);
	job_feed(&j, m);
	v = se_run_finish(j.run);
	job_end(&j);
	tap_ok(r[0] == 0 && v == 1 &&
	       strcmp(s.last_reason, "gid 1000 is outside every --map-ids range: owner not restored") == 0 &&
	       owned_by("owned", getuid(), getgid()),
	       "se_run_add_id_map: users mapped, groups not: no group is kept as it is (verdict %d, '%s')",
	       v, s.last_reason);

	job_start(&j, true, 0, SE_OPT_NUMERIC_OWNER, NULL);
	r[0] = se_run_add_id_map(j.run, both, 0, 100000, 10);
	job_end(&j);
	tap_ok(r[0] == -EPERM, "se_run_add_id_map on a run that sets no owner: -EPERM (%d)", r[0]);
}

static void (*const cases[])(void) = {
	root_open_missing_directory,
	root_open_two_forced_backends_is_einval,
	root_backend_names_the_resolver,
	root_open_fd_leaves_the_callers_fd,
	callback_renames_to_pacnew,
	callback_rename_to_dotdot_is_refused,
	callback_rename_to_absolute_stays_inside,
	callback_skip_writes_nothing,
	callback_abort_stops_with_verdict_2,
	symlink_then_file_through_it_is_refused,
	in_root_follows_links_inside,
	several_archives_one_durable_commit,
	several_archives_none_without_finish,
	free_without_finish_leaves_no_temporary,
	same_perms_exact_under_a_process_umask,
	scoped_file_operations,
	remove_tree_stays_inside,
	whiteouts_apply_a_layer,
	whiteouts_overlay_format,
	image_archive_refusals,
	root_lstat_is_scoped,
	in_root_owner_names_map_through_the_roots_passwd,
	owner_lookup_callback_decides,
	id_maps_map_owners_or_report,
	caller_owned_loop_gets_archive_error,
	report_fd_gets_one_json_line_per_entry,
	selection_and_unmatched_patterns,
	strip_components,
	empty_input_is_enodata,
	cancel_from_signal_handler,
	process_state_untouched,
	stats_count_what_happened,
	dry_run_without_root_writes_nothing,
	sha256_of_written_data,
	sandbox_confines_the_caller,
	jobs_keep_archive_order,
	after_entry_never_null,
	jobs_caller_loop_frees_the_reader_before_finish,
	run_remove_and_rename_keep_deferred_metadata,
	run_rename_makes_missing_parents_inside,
	helpers,
};

static int count_fds(void)
{
	return count_entries("/proc/self/fd") - 1;	/* opendir's own */
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char cmd[600];
	int fds = count_fds();

	snprintf(scratch, sizeof(scratch), "%s/se-api.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch))
		abort();
	snprintf(outside, sizeof(outside), "%s/outside", scratch);
	/* DEST deep enough that "../../../../.." from it stays in SCRATCH
	 * were it ever followed outside the root. */
	snprintf(dest, sizeof(dest), "%s/l1/l2/l3/l4/dest", scratch);
	if (mkdir(outside, 0755) < 0)
		abort();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		case_no = (int)i;
		cases[i]();
	}
	tap_ok(count_entries(outside) == 0, "nothing ever appeared in outside/");
	tap_ok(count_fds() == fds, "no descriptor left open by the library (%d before, %d after)",
	       fds, count_fds());
	printf("1..%d\n", tap_n);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
