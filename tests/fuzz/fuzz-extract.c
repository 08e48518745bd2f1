/*
 * fuzz-extract.c - libFuzzer harness over the whole extraction pipeline.
 *
 * One input is one flag byte followed by archive bytes.  Each input is
 * extracted twice, in process, exactly as src/main.c drives a run (strict,
 * then --in-root), each time into a fresh DEST inside a per-process work
 * directory that also holds a sentinel tree, with hostile objects planted
 * in DEST that point at the sentinel.  After each run the oracle checks:
 *
 *   - nothing outside DEST changed: the sentinel tree (names, types, modes,
 *     owners, sizes, mtimes, inode numbers, link targets, file contents),
 *     the work directory's listing (DEST's parent) and the names matching
 *     /tmp/safe-extract-escape-* (where the corpus's absolute names point);
 *   - no .safe-extract-* temporary remains anywhere in DEST;
 *   - no descriptor leaked (/proc/self/fd counted before and after);
 *   - the exit status agrees with the outcomes: 0 iff nothing was refused
 *     or failed, 1 iff something was (when not fatal), nothing else but 2;
 *     the --report JSON lines agree with the run's counters, one line at
 *     least per entry read, every line a whole object;
 *   - and, by the build flags, no ASan/UBSan/LSan report.
 *
 * An oracle failure prints what differed and aborts, so libFuzzer keeps
 * the input as a crash artifact.  Flag byte (tests/fuzz/README.md):
 *
 *   0x01 --durable            0x10 SAFE_EXTRACT_RESOLVER=walk
 *   0x02 archive from a pipe  0x20 --xattrs --acls
 *   0x04 -k                   0x40 --no-same-owner --no-same-permissions
 *   0x08 -U                   0x80 --strip-components=1
 *
 * Environment: FUZZ_WORK (where the work directory goes; default /dev/shm
 * when it is a writable tmpfs, else $TMPDIR or /tmp), FUZZ_FSIZE_MB (the
 * RLIMIT_FSIZE every written file is held to, default 8; SIGXFSZ is
 * ignored so an oversized write fails the entry instead of killing us),
 * FUZZ_IGNORE_NULL_MESSAGE (set: a "(null)" in a message is not a failure,
 * to fuzz past that known finding until it is fixed), FUZZ_JOBS (the
 * threaded lane: each run is made with one writer thread and then with
 * this many, and the two must give the same exit status and the same
 * report, line for line; `make fuzz-jobs` sets 4).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include <safe-extract.h>

#include "cli.h"

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

/*
 * libarchive allocates what a header's size fields ask for (a cpio name
 * size of 4 GB): without a cap, ASan maps and poisons gigabytes and one
 * input takes 15 s.  A capped malloc returns NULL, as it would under a
 * memory limit, and the extractor must cope with that too.
 * ASAN_OPTIONS in the environment still overrides these.
 */
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

const char *__ubsan_default_options(void)
{
	return "print_stacktrace=1:halt_on_error=1";
}

#define F_DURABLE	0x01
#define F_PIPE		0x02
#define F_KEEP		0x04
#define F_UNLINK	0x08
#define F_WALK		0x10
#define F_XATTRS	0x20
#define F_NO_OWNER	0x40
#define F_STRIP		0x80

#define TMP_PREFIX ".safe-extract-"

static char work[PATH_MAX];		/* the per-process work directory */
static char dest[PATH_MAX + 16];	/* WORK/dest, fresh for every run */
static char sentinel[PATH_MAX + 16];	/* WORK/sentinel, must never change */
static char input_path[PATH_MAX + 16];	/* WORK/input.archive */
static char report_path[PATH_MAX + 16];	/* WORK/report.jsonl */
static char stderr_path[PATH_MAX + 16];	/* WORK/stderr.txt: the run's messages */
static int err_fd = 2;			/* the original stderr */
static int sent_fd = -1;		/* O_PATH of the sentinel: /proc/self/fd/N */
static int work_fd = -1;
static mode_t user_umask;
static bool is_root;
static unsigned int fuzz_jobs = 1;	/* FUZZ_JOBS: writer threads of the second lane */

/* ---- messages --------------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	if (write(err_fd, buf, (size_t)n) < 0) {
		/* nowhere left to say it */
	}
}

static const char *run_desc;	/* "strict" or "in-root", for messages */
static unsigned int run_flags;

static void oracle_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void oracle_fail(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("==fuzz-extract== ORACLE FAILURE (%s, flags 0x%02x): %s\n",
	    run_desc ? run_desc : "?", run_flags, buf);
	abort();
}

static void harness_fail(const char *what)
{
	say("==fuzz-extract== harness: %s: %s\n", what, strerror(errno));
	abort();
}

/* ---- a growing text buffer ---------------------------------------------- */

struct buf {
	char *p;
	size_t n, cap;
};

static void buf_add(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->n;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			harness_fail("vsnprintf");
		if (b->p && (size_t)n < room) {
			b->n += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			harness_fail("realloc");
	}
}

/* ---- file-system helpers ---------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory FD, sorted, without . and ..; *N gets the count. */
static char **list_dir(int fd, size_t *n)
{
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char **names = NULL;
	size_t cap = 0;
	DIR *d;
	struct dirent *de;

	*n = 0;
	if (dfd < 0)
		return NULL;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				harness_fail("realloc");
		}
		names[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	if (*n > 1)
		qsort(names, *n, sizeof(*names), name_cmp);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static char type_char(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFIFO: return 'p';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFSOCK: return 's';
	default: return '?';
	}
}

/* FNV-1a of a small regular file's contents (the sentinel's are tiny). */
static uint64_t file_hash(int dirfd, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	unsigned char b[4096];
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((n = read(fd, b, sizeof(b))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ b[i]) * 1099511628211ull;
	close(fd);
	return h;
}

/* One line per object below DIRFD/NAME: everything that must not change. */
static void snap_tree(struct buf *b, int dirfd, const char *name,
		      const char *rel, int depth)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t tn;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		buf_add(b, "%s missing (%s)\n", rel, strerror(errno));
		return;
	}
	buf_add(b, "%s %c %04o %u:%u size=%lld mtime=%lld.%09ld ino=%llu",
		rel, type_char(st.st_mode), (unsigned)(st.st_mode & 07777),
		(unsigned)st.st_uid, (unsigned)st.st_gid, (long long)st.st_size,
		(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		(unsigned long long)st.st_ino);
	if (S_ISLNK(st.st_mode)) {
		tn = readlinkat(dirfd, name, target, sizeof(target) - 1);
		target[tn < 0 ? 0 : tn] = '\0';
		buf_add(b, " -> %s", target);
	} else if (S_ISREG(st.st_mode)) {
		buf_add(b, " fnv=%016llx", (unsigned long long)file_hash(dirfd, name));
	}
	buf_add(b, "\n");
	if (S_ISDIR(st.st_mode) && depth < 16) {
		int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		size_t n;
		char **names;

		if (fd < 0)
			return;
		names = list_dir(fd, &n);
		for (size_t i = 0; i < n; i++) {
			char sub[PATH_MAX];

			snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]);
			snap_tree(b, fd, names[i], sub, depth + 1);
		}
		free_names(names, n);
		close(fd);
	}
}

/* Everything outside DEST that the oracle watches. */
static char *snapshot(void)
{
	struct buf b = { 0 };
	size_t n;
	char **names = list_dir(work_fd, &n);
	glob_t g;

	buf_add(&b, "[work directory]\n");
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (fstatat(work_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			buf_add(&b, "%s vanished\n", names[i]);
		else
			buf_add(&b, "%s %c ino=%llu\n", names[i], type_char(st.st_mode),
				(unsigned long long)st.st_ino);
	}
	free_names(names, n);
	buf_add(&b, "[sentinel]\n");
	snap_tree(&b, work_fd, "sentinel", "sentinel", 0);
	buf_add(&b, "[/tmp/safe-extract-escape-*]\n");
	if (glob("/tmp/safe-extract-escape-*", GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			buf_add(&b, "%s\n", g.gl_pathv[i]);
		globfree(&g);
	}
	return b.p;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		harness_fail("/proc/self/fd");
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own descriptor */
}

/*
 * Remove DIRFD/NAME and everything below it, noting every temporary the
 * extractor left (their paths go into TEMPS).  Directories the archive made
 * unreadable are opened up first.
 */
/*
 * Is NAME one of the extractor's temporaries: the prefix and exactly 12
 * lowercase hex digits (src/lib/place.c: tmp_name)?  An archive may name a
 * member ".safe-extract-anything" itself (the fuzzer found one); that is
 * the archive's file, not a temporary left behind.
 */
static bool is_temporary(const char *name)
{
	const char *p = name + sizeof(TMP_PREFIX) - 1;

	if (strncmp(name, TMP_PREFIX, sizeof(TMP_PREFIX) - 1) != 0)
		return false;
	return strlen(p) == 12 && strspn(p, "0123456789abcdef") == 12;
}

static void remove_tree(int dirfd, const char *name, const char *rel,
			struct buf *temps)
{
	struct stat st;
	int fd;

	if (is_temporary(name))
		buf_add(temps, "  %s\n", rel);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlinkat(dirfd, name, 0);
		return;
	}
	if ((st.st_mode & 0700) != 0700)
		fchmodat(dirfd, name, 0700, 0);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		for (int pass = 0; pass < 4; pass++) {
			size_t n;
			char **names = list_dir(fd, &n);

			for (size_t i = 0; i < n; i++) {
				char sub[PATH_MAX];

				snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]);
				remove_tree(fd, names[i], sub, temps);
			}
			free_names(names, n);
			if (n == 0)
				break;
		}
		close(fd);
	}
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		say("==fuzz-extract== harness: cannot remove %s: %s\n", rel,
		    strerror(errno));
}

static void write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	if (fd < 0)
		harness_fail(path);
	while (size > 0) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			harness_fail(path);
		p += n;
		size -= (size_t)n;
	}
	close(fd);
}

/* ---- setup -------------------------------------------------------------- */

static void remove_work(void)
{
	struct buf ignore = { 0 };
	char *slash, parent[PATH_MAX];
	int pfd;

	if (!work[0])
		return;
	if (sent_fd >= 0)
		close(sent_fd);
	if (work_fd >= 0)
		close(work_fd);
	sent_fd = work_fd = -1;
	snprintf(parent, sizeof(parent), "%s", work);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	*slash = '\0';
	pfd = open(parent[0] ? parent : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0) {
		remove_tree(pfd, slash + 1, work, &ignore);
		close(pfd);
	}
	free(ignore.p);
	work[0] = '\0';
}

/* Work directories of fuzz processes that died (a crash, a timeout). */
static void remove_stale(const char *base)
{
	int bfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t n;
	char **names;

	if (bfd < 0)
		return;
	names = list_dir(bfd, &n);
	for (size_t i = 0; i < n; i++) {
		char *end;
		long pid;

		if (strncmp(names[i], "se-fuzz.", 8) != 0)
			continue;
		pid = strtol(names[i] + 8, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)) {
			struct buf ignore = { 0 };

			remove_tree(bfd, names[i], names[i], &ignore);
			free(ignore.p);
		}
	}
	free_names(names, n);
	close(bfd);
}

static const char *work_base(void)
{
	const char *e = getenv("FUZZ_WORK");
	struct statfs sf;

	if (e && *e)
		return e;
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	e = getenv("TMPDIR");
	return e && *e ? e : "/tmp";
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rlimit rl;
	const char *base = work_base(), *e;
	char path[PATH_MAX + 32];
	int fd;

	e = getenv("FUZZ_JOBS");
	fuzz_jobs = e && atoi(e) > 1 ? (unsigned int)atoi(e) : 1;
	/* As main(): the locale, and the umask applied by hand. */
	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");
	user_umask = umask(0);
	is_root = geteuid() == 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* A decompression bomb must not fill the disk or the RAM of tmpfs. */
	e = getenv("FUZZ_FSIZE_MB");
	rl.rlim_cur = rl.rlim_max = (rlim_t)(e && *e ? atol(e) : 8) << 20;
	if (rl.rlim_cur > 0)
		setrlimit(RLIMIT_FSIZE, &rl);
	/* libFuzzer's -close_fd_mask=2 comes after this: keep a way out. */
	err_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (err_fd < 0)
		err_fd = 2;
	/* Sanitizer reports never go into the captured stderr of a run. */
	__sanitizer_set_report_fd((void *)(intptr_t)err_fd);

	remove_stale(base);
	snprintf(work, sizeof(work), "%s/se-fuzz.%ld", base, (long)getpid());
	if (mkdir(work, 0700) < 0 && errno != EEXIST)
		harness_fail(work);
	atexit(remove_work);
	work_fd = open(work, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (work_fd < 0)
		harness_fail(work);
	snprintf(dest, sizeof(dest), "%s/dest", work);
	snprintf(sentinel, sizeof(sentinel), "%s/sentinel", work);
	snprintf(input_path, sizeof(input_path), "%s/input.archive", work);
	snprintf(report_path, sizeof(report_path), "%s/report.jsonl", work);
	snprintf(stderr_path, sizeof(stderr_path), "%s/stderr.txt", work);

	/* The sentinel: a little of everything an escape could touch. */
	if (mkdir(sentinel, 0755) < 0 && errno != EEXIST)
		harness_fail(sentinel);
	snprintf(path, sizeof(path), "%s/file", sentinel);
	write_file(path, "sentinel\n", 9);
	chmod(path, 0644);
	snprintf(path, sizeof(path), "%s/dir", sentinel);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/dir/inner", sentinel);
	write_file(path, "inner\n", 6);
	snprintf(path, sizeof(path), "%s/link", sentinel);
	if (symlink("file", path) < 0 && errno != EEXIST)
		harness_fail(path);
	snprintf(path, sizeof(path), "%s/fifo", sentinel);
	if (mkfifo(path, 0644) < 0 && errno != EEXIST)
		harness_fail(path);
	sent_fd = open(sentinel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sent_fd < 0)
		harness_fail(sentinel);
	write_file(input_path, "", 0);
	write_file(report_path, "", 0);
	write_file(stderr_path, "", 0);
	fd = open(work, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	say("==fuzz-extract== work directory %s (DEST %s)\n", work, dest);
	return 0;
}

/*
 * DEST, fresh, with what the corpus's dest-planted-* and proc-planted-*
 * cases plant: links out of DEST (relative, absolute, a magic link), a
 * hardlink to a file outside, a FIFO (the open-for-writing hang) and a
 * directory that leads out.
 */
static void make_dest(void)
{
	char path[PATH_MAX * 2], target[PATH_MAX];

	if (mkdir(dest, 0755) < 0)
		harness_fail(dest);
#define PLANT(call, what) do { if ((call) < 0) harness_fail(what); } while (0)
	snprintf(path, sizeof(path), "%s/up", dest);
	PLANT(symlink("../sentinel", path), path);
	snprintf(path, sizeof(path), "%s/abs", dest);
	PLANT(symlink(sentinel, path), path);
	snprintf(path, sizeof(path), "%s/fd", dest);
	snprintf(target, sizeof(target), "/proc/self/fd/%d", sent_fd);
	PLANT(symlink(target, path), path);
	snprintf(path, sizeof(path), "%s/hl", dest);
	snprintf(target, sizeof(target), "%s/file", sentinel);
	PLANT(link(target, path), path);
	snprintf(path, sizeof(path), "%s/fifo", dest);
	PLANT(mkfifo(path, 0644), path);
	snprintf(path, sizeof(path), "%s/d", dest);
	PLANT(mkdir(path, 0755), path);
	snprintf(path, sizeof(path), "%s/d/out", dest);
	PLANT(symlink("../../sentinel/dir", path), path);
#undef PLANT
}

/* ---- the report --------------------------------------------------------- */

struct report_count {
	unsigned long lines, refused, bad;	/* bad: neither created, replaced nor skipped */
	unsigned long unverified;		/* said again after a failed check */
};

static struct report_count read_report(void)
{
	struct report_count c = { 0 };
	FILE *f = fopen(report_path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		harness_fail(report_path);
	while ((n = getline(&line, &cap, f)) > 0) {
		char *act;

		if (line[n - 1] != '\n' || strncmp(line, "{\"path\":\"", 9) != 0 ||
		    n < 3 || line[n - 2] != '}')
			oracle_fail("report line is not a whole JSON object: %.200s", line);
		for (ssize_t i = 0; i < n - 1; i++)
			if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
				oracle_fail("report line with a raw byte 0x%02x: %.200s",
					    (unsigned char)line[i], line);
		c.lines++;
		/* The path is JSON-escaped, so the last "action": is the field. */
		act = NULL;
		for (char *p = line; (p = strstr(p, ",\"action\":\"")); p++)
			act = p + 11;
		if (!act)
			oracle_fail("report line without an action: %.200s", line);
		if (!strncmp(act, "refused\"", 8))
			c.refused++;
		if (!strncmp(act, "unverified\"", 11))
			c.unverified++;
		else if (strncmp(act, "created\"", 8) && strncmp(act, "replaced\"", 9) &&
			 strncmp(act, "skipped\"", 8))
			c.bad++;
	}
	free(line);
	fclose(f);
	return c;
}

/*
 * What the run printed on stderr.  Every byte that came from the archive
 * goes through report_escape()/report_sanitize(), so each line is
 * "safe-extract: " and printable ASCII; a refused or failed entry prints
 * exactly one "safe-extract: ACTION 'NAME': ..." line.
 */

/*
 * Does LINE print "(null)" outside its quoted names?  A quoted name is
 * archive bytes, escaped ('\'' and '\\' inside): an archive may well name
 * a member "(null)" (the fuzzer learns the string from this very check),
 * and that is not a NULL pointer printed.
 */
static bool null_outside_quotes(const char *line)
{
	char *bare = strdup(line), *o = bare;
	bool quoted = false, found;

	if (!bare)
		harness_fail("strdup");
	for (const char *p = line; *p; p++) {
		if (quoted && *p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '\'') {
			quoted = !quoted;
			continue;
		}
		if (!quoted)
			*o++ = *p;
	}
	*o = '\0';
	found = strstr(bare, "(null)") != NULL;
	free(bare);
	return found;
}

struct stderr_count {
	unsigned long lines, entry_lines, unverified_lines;
};

static struct stderr_count read_stderr(void)
{
	struct stderr_count c = { 0 };
	FILE *f = fopen(stderr_path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		harness_fail(stderr_path);
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] != '\n')
			oracle_fail("stderr ends without a newline: %.200s", line);
		for (ssize_t i = 0; i < n - 1; i++)
			if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
				oracle_fail("stderr line with a raw byte 0x%02x (unescaped archive bytes?): %.300s",
					    (unsigned char)line[i], line);
		if (strncmp(line, "safe-extract: ", 14) != 0)
			oracle_fail("stderr line without the program name: %.300s", line);
		if (null_outside_quotes(line) && !getenv("FUZZ_IGNORE_NULL_MESSAGE"))
			oracle_fail("stderr line prints a NULL string: %.300s", line);
		c.lines++;
		if (!strncmp(line + 14, "refused '", 9) || !strncmp(line + 14, "failed '", 8) ||
		    !strncmp(line + 14, "incomplete '", 12))
			c.entry_lines++;
		if (!strncmp(line + 14, "unverified '", 12))
			c.unverified_lines++;
	}
	free(line);
	fclose(f);
	return c;
}

/* ---- one run ------------------------------------------------------------ */


/* The whole of FILE, NUL-terminated (malloc'd). */
static char *slurp(const char *file)
{
	struct buf b = { 0 };
	char chunk[4096];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf_add(&b, "%s", "");
	if (fd >= 0) {
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			buf_add(&b, "%.*s", (int)n, chunk);
		close(fd);
	}
	return b.p;
}

/* One extraction and the oracle; returns "exit N" and the report
 * (malloc'd), for the threaded lane to compare. */
static char *one_run(const uint8_t *arc, size_t size, unsigned int flags,
		     bool in_root, unsigned int jobs)
{
	char *seen;
	struct cli_options o;
	struct cli_result res;
	struct report_count rc;
	struct stderr_count ec;
	struct buf temps = { 0 };
	char *before, *after, archive_name[64];
	int fds_before, fds_after, status, pipe_fd = -1, cap_fd, saved2;

	run_desc = in_root ? "in-root" : "strict";
	run_flags = flags;
	make_dest();
	before = snapshot();
	fds_before = count_fds();

	if (flags & F_PIPE) {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0)
			harness_fail("pipe2");
		fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
		if ((long)size <= fcntl(p[1], F_GETPIPE_SZ)) {
			const uint8_t *q = arc;
			size_t left = size;

			while (left > 0) {
				ssize_t n = write(p[1], q, left);

				if (n < 0)
					harness_fail("pipe write");
				q += n;
				left -= (size_t)n;
			}
			pipe_fd = p[0];
		} else {
			close(p[0]);
		}
		close(p[1]);
	}
	if (pipe_fd >= 0)
		snprintf(archive_name, sizeof(archive_name), "/proc/self/fd/%d", pipe_fd);

	/* As main(): memset, then what the options set. */
	memset(&o, 0, sizeof(o));
	o.umask = user_umask;
	if (is_root)
		o.flags |= CLI_SAME_OWNER | CLI_SAME_PERMS;
	o.dest = dest;
	o.archive = pipe_fd >= 0 ? archive_name : input_path;
	o.report_path = report_path;
	if (in_root)
		o.flags |= CLI_IN_ROOT;
	if (flags & F_DURABLE)
		o.flags |= CLI_DURABLE;
	if (flags & F_KEEP)
		o.flags |= CLI_KEEP_OLD;
	if (flags & F_UNLINK)
		o.flags |= CLI_UNLINK;
	if (flags & F_XATTRS)
		o.flags |= CLI_XATTRS | CLI_ACLS;
	if (flags & F_NO_OWNER)
		o.flags &= ~(CLI_SAME_OWNER | CLI_SAME_PERMS);
	if (flags & F_STRIP)
		o.strip_components = 1;
	o.resolver = (flags & F_WALK) ? "walk" : NULL;
	o.jobs = jobs;
	/* The harness runs many extractions in one process and writes its
	 * findings outside DEST: it cannot confine itself to one DEST.  The
	 * sandbox has its own test (tests/sandbox.test). */
	o.flags |= CLI_NO_SANDBOX;

	/* Capture stderr (libFuzzer's -close_fd_mask=2 points it at /dev/null). */
	fflush(stderr);
	cap_fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	saved2 = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (cap_fd < 0 || saved2 < 0 || dup2(cap_fd, 2) < 0)
		harness_fail("capturing stderr");
	close(cap_fd);
	status = cli_extract(&o, &res);
	fflush(stderr);
	dup2(saved2, 2);
	close(saved2);
	if (pipe_fd >= 0)
		close(pipe_fd);

	fds_after = count_fds();
	if (fds_after != fds_before)
		oracle_fail("descriptor leak: %d open before the run, %d after",
			    fds_before, fds_after);

	if (status != EXIT_ALL_EXTRACTED && status != EXIT_SOME_REFUSED &&
	    status != EXIT_FATAL)
		oracle_fail("cli_extract returned %d", status);
	if (status == EXIT_ALL_EXTRACTED && (res.refused || res.failed))
		oracle_fail("status 0 with %llu refused and %llu failed entries",
			    res.refused, res.failed);
	if (status == EXIT_SOME_REFUSED && !res.refused && !res.failed)
		oracle_fail("status 1 with no refused or failed entry");
	rc = read_report();
	if (rc.refused != res.refused || rc.bad != res.refused + res.failed)
		oracle_fail("report says %lu refused, %lu refused or failed; the run counted %llu refused, %llu failed",
			    rc.refused, rc.bad, res.refused, res.failed);
	ec = read_stderr();
	if (ec.entry_lines != res.refused + res.failed)
		oracle_fail("%llu refused or failed entries but %lu stderr lines about entries",
			    res.refused + res.failed, ec.entry_lines);
	if (status == EXIT_FATAL && ec.lines == ec.entry_lines + ec.unverified_lines)
		oracle_fail("status 2 without a message saying why");
	/* An entry is said to be unverified only when the stream failed. */
	if (rc.unverified != ec.unverified_lines)
		oracle_fail("%lu unverified entries in the report, %lu on stderr",
			    rc.unverified, ec.unverified_lines);
	if (rc.unverified && status != EXIT_FATAL)
		oracle_fail("%lu entries reported unverified, but the run's status is %d",
			    rc.unverified, status);
	if (rc.lines < res.entries)
		oracle_fail("%llu entries read but only %lu report lines",
			    (unsigned long long)res.entries, rc.lines);

	after = snapshot();
	if (strcmp(before, after) != 0)
		oracle_fail("something outside DEST changed (status %d)\n--- before\n%s--- after\n%s",
			    status, before, after);
	free(before);
	free(after);

	{
		struct stat st;

		if (lstat(dest, &st) < 0 || !S_ISDIR(st.st_mode))
			oracle_fail("DEST is no longer a directory");
	}
	remove_tree(work_fd, "dest", "dest", &temps);
	if (temps.n)
		oracle_fail("temporaries left in DEST (status %d):\n%s", status, temps.p);
	free(temps.p);
	seen = slurp(report_path);
	{
		struct buf b = { 0 };

		buf_add(&b, "exit %d\n%s", status, seen);
		free(seen);
		return b.p;
	}
}

/* Up to 6 lines of TEXT from line FROM, each cut at 300 bytes, into B. */
static void some_lines(struct buf *b, const char *text, size_t from)
{
	size_t line = 0;

	for (const char *p = text; *p && line < from + 6; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (line >= from)
			buf_add(b, "%.*s%s\n", (int)(len > 300 ? 300 : len), p,
				len > 300 ? "..." : "");
		p += len + (nl != NULL);
	}
}

/* Where ONE and MANY part: the line number and a few lines of each from
 * there, so that a long report does not push the difference out of the
 * message (one run's whole output of 255-byte names did once). */
static char *first_difference(const char *one, const char *many)
{
	struct buf b = { 0 };
	size_t line = 0;

	for (size_t i = 0; one[i] && one[i] == many[i]; i++)
		if (one[i] == '\n')
			line++;
	buf_add(&b, "first difference at line %zu\n--- jobs=1\n", line + 1);
	some_lines(&b, one, line);
	buf_add(&b, "--- jobs=%u\n", fuzz_jobs);
	some_lines(&b, many, line);
	return b.p;
}

/* The run in MODE with one thread, and with FUZZ_JOBS when that is more:
 * --jobs=N must say exactly what --jobs=1 says. */
static void both_lanes(const uint8_t *arc, size_t size, unsigned int flags, bool in_root)
{
	char *one = one_run(arc, size, flags, in_root, 1), *many;

	if (fuzz_jobs > 1) {
		many = one_run(arc, size, flags, in_root, fuzz_jobs);
		if (strcmp(one, many) != 0)
			oracle_fail("--jobs=%u differs from --jobs=1, %s", fuzz_jobs,
				    first_difference(one, many));
		free(many);
	}
	free(one);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	unsigned int flags;

	/* libFuzzer installs its SIGXFSZ handler (-handle_xfsz) after
	 * LLVMFuzzerInitialize: an oversized write is the entry's failure
	 * (EFBIG), not the end of the process. */
	if (!ready) {
		signal(SIGXFSZ, SIG_IGN);
		ready = true;
	}
	if (size < 1)
		return 0;
	flags = data[0];
	write_file(input_path, data + 1, size - 1);
	both_lanes(data + 1, size - 1, flags, false);
	both_lanes(data + 1, size - 1, flags, true);
	return 0;
}
