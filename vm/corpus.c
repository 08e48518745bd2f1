// SPDX-License-Identifier: GPL-2.0
/*
 * vm/corpus.c - the hostile-archive corpus driver the QEMU guest runs.
 *
 * It does what tests/archives/run does in its pass/fail mode with the
 * default extractor (safe-extract), case by case from tests/archives/MANIFEST,
 * but in one process: under TCG a process start costs about 6 ms, and the
 * shell runner starts hundreds per case (stat, sha256sum, sed, find, sort
 * for the two snapshots alone), so one corpus run took ten minutes in the
 * guest.  Here the only processes started are the extractor runs.
 *
 *   corpus --dir TESTS/ARCHIVES --se SAFE-EXTRACT [--mode strict|in-root]
 *          [--peer PEER-ARCHIVES] [--timeout SECONDS] [--tag TAG]
 *          [CASE-PATTERN...]
 *
 * Per case, as the runner does (see tests/archives/README.md): a fresh
 * sandbox under $TMPDIR (WORK/box/l1/l2/s/{dest,canary,outside,cwd,flag}),
 * the case's setup, a snapshot of everything outside DEST (type, mode,
 * owner, mtime, size, SHA-256 or link target; plus /tmp/safe-extract-escape-*
 * and the case's "outside" paths), the extractor in S/cwd with fd 7 open on
 * S/outside, then the checks: exit status, expected entries looked up
 * without following symlinks, no .safe-extract-* temporaries, and the
 * snapshot unchanged.  Output is TAP, one line per case as it finishes.
 * --tag prefixes every line with "# TAG: " (the guest runs two of these
 * side by side on one console).
 *
 * Not covered (the shell runner stays for them): --classify, --extractor,
 * --formats, --list, --keep.
 *
 *   corpus --snapshot [--prune PATH]... PATH...
 *
 * prints the same description of every object under each PATH (staying on
 * PATH's file system, skipping the pruned paths): the guest compares two of
 * these to show that a selftest changed nothing outside its own directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#define ESCAPE_PREFIX "/tmp/safe-extract-escape-"

/* --- small utilities ---------------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("corpus: realloc");
			exit(2);
		}
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
	char tmp[8192];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	buf_add(b, tmp, n);
}

static const char *tag;

/* One TAP or comment line, written whole so parallel lanes never mix. */
static void __attribute__((format(printf, 1, 2))) out(const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n = 0;

	if (tag)
		n = snprintf(line, sizeof(line), "# %s: ", tag);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(1, line, n) < 0)
		exit(2);
}

/* Print each line of TEXT as a "#   PREFIX" comment. */
static void out_lines(const char *prefix, const char *text, size_t max)
{
	const char *s = text, *e;
	size_t done = 0;

	while (*s && done < max) {
		e = strchrnul(s, '\n');
		if (e > s)
			out("#%s%.*s", prefix, (int)(e - s), s);
		done += e - s + 1;
		s = *e ? e + 1 : e;
	}
}

/* --- SHA-256 (FIPS 180-4), for the snapshots and sha256: checks --------- */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char blk[64];
	size_t n;
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *c, const unsigned char *p)
{
	uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
				    (w[i - 15] >> 3)) +
		       w[i - 7] + (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
				   (w[i - 2] >> 10));
	a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3];
	e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		     ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		     ((a & b) ^ (a & cc) ^ (b & cc));
		h = g; g = f; f = e; e = d + t1;
		d = cc; cc = b; b = a; a = t1 + t2;
	}
	c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
	c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

static void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->n = 0;
}

static void sha256_add(struct sha256 *c, const unsigned char *p, size_t n)
{
	c->len += n;
	while (n) {
		size_t k = 64 - c->n < n ? 64 - c->n : n;

		memcpy(c->blk + c->n, p, k);
		c->n += k;
		p += k;
		n -= k;
		if (c->n == 64) {
			sha256_block(c, c->blk);
			c->n = 0;
		}
	}
}

static void sha256_hex(struct sha256 *c, char hex[65])
{
	uint64_t bits = c->len * 8;
	unsigned char pad = 0x80, len[8];
	int i;

	sha256_add(c, &pad, 1);
	pad = 0;
	while (c->n != 56)
		sha256_add(c, &pad, 1);
	for (i = 0; i < 8; i++)
		len[i] = bits >> (56 - 8 * i);
	sha256_add(c, len, 8);
	for (i = 0; i < 8; i++)
		sprintf(hex + 8 * i, "%08x", c->h[i]);
}

/* SHA-256 of a file's contents; "-" when it cannot be read. */
static void hash_file(int dfd, const char *name, char hex[65])
{
	unsigned char data[65536];
	struct sha256 c;
	ssize_t n;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		strcpy(hex, "-");
		return;
	}
	sha256_init(&c);
	while ((n = read(fd, data, sizeof(data))) > 0)
		sha256_add(&c, data, n);
	close(fd);
	sha256_hex(&c, hex);
}

/* --- the snapshot -------------------------------------------------------- */

/* One line for PATH (as find prints it), described without following it. */
static void describe(struct buf *b, const char *path)
{
	char target[PATH_MAX + 1], hex[65];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st))
		return;
	switch (st.st_mode & S_IFMT) {
	case S_IFLNK:
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = 0;
		buf_printf(b, "%s L %o %u %u -> %s\n", path,
			   st.st_mode & 07777, st.st_uid, st.st_gid, target);
		break;
	case S_IFREG:
		hash_file(AT_FDCWD, path, hex);
		buf_printf(b, "%s F %o %u %u %lld %lld %s\n", path,
			   st.st_mode & 07777, st.st_uid, st.st_gid,
			   (long long)st.st_mtime, (long long)st.st_size, hex);
		break;
	case S_IFDIR:
		buf_printf(b, "%s D %o %u %u %lld\n", path, st.st_mode & 07777,
			   st.st_uid, st.st_gid, (long long)st.st_mtime);
		break;
	default:
		buf_printf(b, "%s O %x %u %u %x %x\n", path, st.st_mode,
			   st.st_uid, st.st_gid, major(st.st_rdev),
			   minor(st.st_rdev));
	}
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Describe PATH and everything below it, in name order, staying on DEV
 * (find -xdev) and skipping the paths in PRUNE.
 */
static void walk(struct buf *b, const char *path, dev_t dev,
		 const char *const *prune)
{
	char **names = NULL, child[PATH_MAX];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *d;

	for (i = 0; prune && prune[i]; i++)
		if (!strcmp(path, prune[i]))
			return;
	describe(b, path);
	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_dev != dev)
		return;
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap * 2 + 16;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				exit(2);
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		if (snprintf(child, sizeof(child), "%s%s%s", path,
			     path[strlen(path) - 1] == '/' ? "" : "/",
			     names[i]) < (int)sizeof(child))
			walk(b, child, dev, prune);
		free(names[i]);
	}
	free(names);
}

/* --- a case -------------------------------------------------------------- */

#define MAX_LINES 64

struct kase {
	char name[256], class[64], archive[PATH_MAX], pre[PATH_MAX];
	char skip[PATH_MAX + 64];
	int root;
	char *opts, *seopts;		/* whitespace-separated words */
	char *setup[MAX_LINES];
	int nsetup;
	char *expect[MAX_LINES];	/* this mode's checks */
	int nexpect;
	double seconds, extract_seconds;	/* the whole case; its extractor runs */
};

static const char *mode = "strict", *se_bin, *here, *peer_dir;
static int is_root, extract_timeout = 120;
static char work[PATH_MAX - 128], box[PATH_MAX], S[PATH_MAX - 64];
static char dest[PATH_MAX];
static char outdir[PATH_MAX], runout[PATH_MAX];
static char mounts[8][PATH_MAX];
static int nmounts;

static char *subst(const char *s)
{
	struct buf b = { 0 };
	const char *p;

	buf_add(&b, "", 0);
	while ((p = strchr(s, '@'))) {
		buf_add(&b, s, p - s);
		if (!strncmp(p, "@OUT@", 5)) {
			buf_add(&b, outdir, strlen(outdir));
			s = p + 5;
		} else if (!strncmp(p, "@S@", 3)) {
			buf_add(&b, S, strlen(S));
			s = p + 3;
		} else {
			buf_add(&b, "@", 1);
			s = p + 1;
		}
	}
	buf_add(&b, s, strlen(s));
	return b.p;
}

/* Split S in place into at most MAX words. */
static int words(char *s, char **w, int max)
{
	int n = 0;
	char *save, *t;

	for (t = strtok_r(s, " \t", &save); t && n < max;
	     t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* rm -rf below DFD's NAME, by fd so that long trees are no problem.  One
 * fd a level: main() raises the descriptor limit for the 1,100-deep case
 * (resource-nest-1100), which otherwise stayed, unremoved, in every
 * later case's DEST and walk (a quarter of a guest lane's time). */
static void rmtree_at(int dfd, const char *name)
{
	struct dirent *de;
	int fd;
	DIR *d;

	if (!unlinkat(dfd, name, 0) || errno == ENOENT)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fchmodat(dfd, name, 0700, 0);
		fd = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return;
	}
	fchmod(fd, 0700);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rmtree_at(dirfd(d), de->d_name);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static void rmtree(const char *path)
{
	rmtree_at(AT_FDCWD, path);
}

static int make_sandbox(void)
{
	char p[PATH_MAX + 32];
	struct stat st;

	rmtree(box);
	/* What the last case left must be gone: a tree it could not
	 * remove would sit in every later case's DEST (and every later
	 * walk of it). */
	if (lstat(box, &st) == 0) {
		errno = ENOTEMPTY;
		return -1;
	}
	snprintf(p, sizeof(p), "%s/canary/dir", S);
	if (mkdir_p(dest) || mkdir_p(p) || mkdir_p(outdir))
		return -1;
	snprintf(p, sizeof(p), "%s/cwd", S);
	if (mkdir(p, 0755))
		return -1;
#define TEXT(rel, text) do {						\
		snprintf(p, sizeof(p), "%s/%s", S, rel);		\
		if (write_text(p, text))				\
			return -1;					\
	} while (0)
	TEXT("canary/file1", "canary one\n");
	TEXT("canary/dir/file2", "canary two\n");
	TEXT("outside/victim", "victim\n");
	TEXT("cwd/keep", "keep\n");
	TEXT("flag", "flag\n");
#undef TEXT
	snprintf(p, sizeof(p), "%s/canary/link", S);
	return symlink("file1", p);
}

static void unmount_all(void)
{
	while (nmounts > 0) {
		nmounts--;
		if (umount(mounts[nmounts]))
			umount2(mounts[nmounts], MNT_DETACH);
	}
}

static int below_mounted(void)
{
	char line[PATH_MAX * 2], pat[PATH_MAX + 4];
	int found = 0;
	FILE *f = fopen("/proc/mounts", "re");

	if (!f)
		return 0;
	snprintf(pat, sizeof(pat), " %s/", work);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, pat))
			found = 1;
	fclose(f);
	return found;
}

static int keep_work;

static void remove_sandbox(void)
{
	unmount_all();
	if (keep_work)
		return;
	if (below_mounted()) {
		out("# leaving %s: a mount below it could not be removed",
		    work);
		keep_work = 1;
		return;
	}
	rmtree(box);
}

static int do_mount(const char *src, const char *target, const char *type,
		    unsigned long flags, const char *data)
{
	if (mkdir_p(target) || mount(src, target, type, flags, data))
		return -1;
	if (nmounts < 8)
		snprintf(mounts[nmounts++], PATH_MAX, "%s", target);
	return 0;
}


/* One setup line (placeholders already replaced); 0 on success. */
static int setup_one(struct kase *k, char *line)
{
	char *w[4], p[PATH_MAX * 2], parent[PATH_MAX * 2], *slash;
	int n = words(line, w, 4);

	if (n < 2)
		return -1;
	snprintf(p, sizeof(p), "%s/%s", dest, w[1]);
	if (!strcmp(w[0], "plant-dir"))
		return mkdir_p(p);
	if (!strcmp(w[0], "plant-symlink") && n >= 3) {
		strcpy(parent, p);
		slash = strrchr(parent, '/');
		*slash = 0;
		return mkdir_p(parent) || symlink(w[2], p) ? -1 : 0;
	}
	if (!strcmp(w[0], "plant-hardlink") && n >= 3)
		return link(w[2], p);
	if (!strcmp(w[0], "mount-tmpfs"))
		return do_mount("tmpfs", p, "tmpfs", 0, "size=4m");
	if (!strcmp(w[0], "mount-proc"))
		return do_mount("proc", p, "proc", 0, NULL);
	if (!strcmp(w[0], "mount-bind") && n >= 3)
		return do_mount(w[2], p, NULL, MS_BIND, NULL);
	if (!strcmp(w[0], "pre-extract")) {
		snprintf(k->pre, sizeof(k->pre), "%s/%s", here, w[1]);
		return 0;
	}
	return -1;
}

static void snapshot(struct buf *b, char *const *outside, int noutside)
{
	static const char *const prune[] = {
		"./run", "./box/l1/l2/s/dest", NULL
	};
	struct stat st;
	glob_t g;
	size_t i;
	int j;

	b->len = 0;
	buf_add(b, "", 0);
	if (!lstat(".", &st))
		walk(b, ".", st.st_dev, prune);
	if (!glob(ESCAPE_PREFIX "*", GLOB_NOSORT | GLOB_PERIOD, NULL, &g)) {
		qsort(g.gl_pathv, g.gl_pathc, sizeof(char *), cmp_names);
		for (i = 0; i < g.gl_pathc; i++)
			if (!lstat(g.gl_pathv[i], &st))
				walk(b, g.gl_pathv[i], st.st_dev, NULL);
		globfree(&g);
	}
	for (j = 0; j < noutside; j++)
		describe(b, outside[j]);
}

/* Lines of A that are not in B, as "PREFIX line". */
static void diff_lines(struct buf *msg, const char *a, const char *b,
		       const char *prefix, int *budget)
{
	const char *s = a, *e;
	char line[PATH_MAX * 2 + 2];

	while (*s && *budget > 0) {
		e = strchrnul(s, '\n');
		snprintf(line, sizeof(line), "%s%.*s\n", s == a ? "" : "\n",
			 (int)(e - s), s);
		/* Search B for the whole line (with its newline). */
		if (!strstr(b, line + (s == a ? 0 : 1)) &&
		    !(s == a && !strncmp(b, line, strlen(line)))) {
			buf_printf(msg, "%s%.*s\n", prefix, (int)(e - s), s);
			--*budget;
		}
		s = *e ? e + 1 : e;
	}
}

/* tests/archives/run's lookup(): walk P in DEST following no symlink. */
static const char *lookup(int dfd, const char *path)
{
	char cur[PATH_MAX * 2] = "", rest[PATH_MAX], c[PATH_MAX], *slash;
	struct stat st;

	snprintf(rest, sizeof(rest), "%s", path);
	for (;;) {
		int last;

		slash = strchr(rest, '/');
		if (slash) {
			*slash = 0;
			snprintf(c, sizeof(c), "%s", rest);
			memmove(rest, slash + 1, strlen(slash + 1) + 1);
		} else {
			snprintf(c, sizeof(c), "%s", rest);
			rest[0] = 0;
		}
		last = !rest[0];
		if (!c[0] || !strcmp(c, ".")) {
			if (!last)
				continue;
			strcpy(c, ".");
		}
		if (cur[0])
			strcat(cur, "/");
		strncat(cur, c, sizeof(cur) - strlen(cur) - 1);
		if (fstatat(dfd, cur, &st, AT_SYMLINK_NOFOLLOW))
			return "none";
		if (!last) {
			if (S_ISLNK(st.st_mode))
				return "via-link";
			if (!S_ISDIR(st.st_mode)) {
				/* [ -d ] follows: a dir through a link? no */
				return "none";
			}
			continue;
		}
		if (S_ISLNK(st.st_mode))
			return "link";
		if (S_ISREG(st.st_mode))
			return "file";
		if (S_ISDIR(st.st_mode))
			return "dir";
		if (S_ISFIFO(st.st_mode))
			return "fifo";
		return "other";
	}
}

/* Compare the contents of DEST's PATH with WANT; 0 when equal. */
static int contents_differ(int dfd, const char *path, const char *want)
{
	char data[4096];
	size_t len = strlen(want);
	ssize_t n;
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 1;
	n = read(fd, data, sizeof(data));
	close(fd);
	return n != (ssize_t)len || memcmp(data, want, len);
}

/* One check (words of an expect line after its mode); problems go to MSG. */
static void check(struct buf *msg, int dfd, char **w, int n, int status,
		  const char *pre_status)
{
	const char *l, *l2;
	struct stat st, st2;
	char hex[65], text[PATH_MAX + 2];

	if (!strcmp(w[0], "exit") && n >= 2) {
		if (atoi(w[1]) != status || !w[1][0])
			buf_printf(msg, "exit status %d, expected %s\n",
				   status, w[1]);
	} else if (!strcmp(w[0], "pre-exit") && n >= 2) {
		if (strcmp(pre_status, w[1]))
			buf_printf(msg,
				   "first archive: exit status %s, expected %s\n",
				   pre_status, w[1]);
	} else if (!strcmp(w[0], "file") && n >= 2) {
		l = lookup(dfd, w[1]);
		if (strcmp(l, "file")) {
			buf_printf(msg, "%s: %s, expected a regular file\n",
				   w[1], l);
		} else if (n >= 3 && !strncmp(w[2], "text:", 5)) {
			snprintf(text, sizeof(text), "%s\n", w[2] + 5);
			if (contents_differ(dfd, w[1], text))
				buf_printf(msg, "%s: contents differ from '%s'\n",
					   w[1], w[2] + 5);
		} else if (n >= 3 && !strncmp(w[2], "sha256:", 7)) {
			hash_file(dfd, w[1], hex);
			if (strcmp(hex, w[2] + 7))
				buf_printf(msg, "%s: contents differ (sha256)\n",
					   w[1]);
		}
	} else if ((!strcmp(w[0], "dir") || !strcmp(w[0], "fifo")) && n >= 2) {
		l = lookup(dfd, w[1]);
		if (strcmp(l, w[0]))
			buf_printf(msg, "%s: %s, expected a %s\n", w[1], l,
				   !strcmp(w[0], "dir") ? "directory" : "fifo");
	} else if (!strcmp(w[0], "symlink") && n >= 3) {
		ssize_t k;

		l = lookup(dfd, w[1]);
		if (strcmp(l, "link")) {
			buf_printf(msg, "%s: %s, expected a symlink\n", w[1], l);
			return;
		}
		k = readlinkat(dfd, w[1], text, sizeof(text) - 1);
		text[k < 0 ? 0 : k] = 0;
		if (strcmp(text, w[2]))
			buf_printf(msg, "%s: -> %s, expected -> %s\n", w[1],
				   text, w[2]);
	} else if (!strcmp(w[0], "absent") && n >= 2) {
		l = lookup(dfd, w[1]);
		if (strcmp(l, "none") && strcmp(l, "via-link"))
			buf_printf(msg, "%s: %s, expected absent\n", w[1], l);
	} else if (!strcmp(w[0], "mode") && n >= 3) {
		l = lookup(dfd, w[1]);
		if (!strcmp(l, "none") || !strcmp(l, "via-link")) {
			buf_printf(msg, "%s: %s, expected mode %s\n", w[1], l,
				   w[2]);
			return;
		}
		fstatat(dfd, w[1], &st, AT_SYMLINK_NOFOLLOW);
		snprintf(text, sizeof(text), "%o", st.st_mode & 07777);
		if (strcmp(text, w[2]))
			buf_printf(msg, "%s: mode %s, expected %s\n", w[1],
				   text, w[2]);
	} else if (!strcmp(w[0], "links") && n >= 3) {
		l = lookup(dfd, w[1]);
		l2 = lookup(dfd, w[2]);
		if (!strcmp(l, "none") || !strcmp(l, "via-link") ||
		    !strcmp(l, "dir") || !strcmp(l2, "none") ||
		    !strcmp(l2, "via-link") || !strcmp(l2, "dir")) {
			buf_printf(msg, "%s, %s: %s, %s, expected one inode\n",
				   w[1], w[2], l, l2);
			return;
		}
		if (fstatat(dfd, w[1], &st, AT_SYMLINK_NOFOLLOW) ||
		    fstatat(dfd, w[2], &st2, AT_SYMLINK_NOFOLLOW) ||
		    st.st_dev != st2.st_dev || st.st_ino != st2.st_ino)
			buf_printf(msg, "%s, %s: not the same inode\n", w[1],
				   w[2]);
	} else if (!strcmp(w[0], "sparse") && n >= 3) {
		l = lookup(dfd, w[1]);
		if (strcmp(l, "file")) {
			buf_printf(msg, "%s: %s, expected a sparse file\n",
				   w[1], l);
			return;
		}
		fstatat(dfd, w[1], &st, AT_SYMLINK_NOFOLLOW);
		if (st.st_size != atoll(w[2]))
			buf_printf(msg, "%s: size %lld, expected %s\n", w[1],
				   (long long)st.st_size, w[2]);
		else if ((long long)st.st_blocks * 512 >= 16777216)
			buf_printf(msg,
				   "%s: %lld bytes allocated, expected a sparse file\n",
				   w[1], (long long)st.st_blocks * 512);
	} else if (!strcmp(w[0], "outside")) {
		/* The path is in the snapshot. */
	} else {
		buf_printf(msg, "unknown check %s\n", w[0]);
	}
}

/* .safe-extract-* names below DFD (find -xdev -name). */
static void find_temps(struct buf *msg, int dfd, const char *rel, dev_t dev,
		       int *budget)
{
	char child[PATH_MAX];
	struct dirent *de;
	struct stat st;
	int fd;
	DIR *d;

	fd = openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || st.st_dev != dev) {
		close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) && *budget > 0) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", rel, de->d_name);
		if (!strncmp(de->d_name, ".safe-extract-", 14)) {
			buf_printf(msg, " %s", child);
			--*budget;
		}
		if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
			find_temps(msg, dfd, child, dev, budget);
	}
	closedir(d);
}

/* Run the extractor on ARCHIVE; its exit status as the shell reports it. */
static int extract(const struct kase *k, const char *archive, const char *log)
{
	char *argv[64], opts[1024], seopts[1024], cwd[PATH_MAX + 8];
	struct timespec limit = { .tv_sec = extract_timeout };
	sigset_t chld, old;
	int argc = 0, status, fd;
	pid_t pid;

	argv[argc++] = (char *)se_bin;
	if (!strcmp(mode, "in-root"))
		argv[argc++] = "--in-root";
	snprintf(seopts, sizeof(seopts), "%s", k->seopts ? k->seopts : "");
	argc += words(seopts, argv + argc, 16);
	snprintf(opts, sizeof(opts), "%s", k->opts ? k->opts : "");
	argc += words(opts, argv + argc, 16);
	argv[argc++] = (char *)archive;
	argv[argc++] = "-C";
	argv[argc++] = dest;
	argv[argc] = NULL;
	snprintf(cwd, sizeof(cwd), "%s/cwd", S);

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	pid = fork();
	if (pid < 0)
		return 127;
	if (!pid) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		/* fd 7: the sandbox's "outside", for /proc/self/fd/7 cases. */
		fd = open(outdir, O_RDONLY | O_DIRECTORY);
		if (fd < 0 || dup2(fd, 7) < 0)
			_exit(126);
		if (chdir(cwd))
			_exit(126);
		execv(se_bin, argv);
		_exit(127);
	}
	for (;;) {
		siginfo_t si;

		if (sigtimedwait(&chld, &si, &limit) < 0 && errno == EAGAIN) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			sigprocmask(SIG_SETMASK, &old, NULL);
			return -1;	/* timed out */
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/* Where a case's time goes, summed over the run (issue 24: under TCG the
 * driver, not the extractor, took most of a lane). */
static const char *const phase_names[] = {
	"sandbox", "setup", "snapshot-before", "extractor", "snapshot-after",
	"checks", "removal",
};
static double phase_seconds[7];
static struct timespec phase_mark;

static void phase_end(int phase)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (phase >= 0)
		phase_seconds[phase] += (now.tv_sec - phase_mark.tv_sec) +
					(now.tv_nsec - phase_mark.tv_nsec) / 1e9;
	phase_mark = now;
}

static int n_case, n_pass, n_fail, n_skip;

static void run_case(struct kase *k)
{
	struct buf before = { 0 }, after = { 0 }, msg = { 0 };
	char *outside[MAX_LINES], *w[8], line[PATH_MAX * 2], pre_status[16];
	char logtext[2048];
	int noutside = 0, i, n, status, budget, dfd;
	struct stat st;
	struct timespec t0, t1;
	glob_t g;

	n_case++;
	if (!k->skip[0] && k->root && !is_root)
		snprintf(k->skip, sizeof(k->skip), "needs root (mounts)");
	if (k->skip[0]) {
		out("ok %d - %s # SKIP %s", n_case, k->name, k->skip);
		n_skip++;
		return;
	}
	k->pre[0] = 0;
	phase_end(-1);
	if (make_sandbox()) {
		out("not ok %d - %s: cannot build the sandbox (%s)", n_case,
		    k->name, strerror(errno));
		n_fail++;
		remove_sandbox();
		return;
	}
	phase_end(0);
	buf_add(&msg, "", 0);
	for (i = 0; i < k->nsetup; i++) {
		char *s = subst(k->setup[i]);

		snprintf(line, sizeof(line), "%s", s);
		if (setup_one(k, line))
			buf_printf(&msg, " [%s]", s);
		free(s);
	}
	if (msg.len) {
		remove_sandbox();
		out("ok %d - %s # SKIP setup failed:%s", n_case, k->name, msg.p);
		n_skip++;
		free(msg.p);
		return;
	}
	for (i = 0; i < k->nexpect; i++)
		if (!strncmp(k->expect[i], "outside ", 8) &&
		    noutside < MAX_LINES)
			outside[noutside++] = subst(k->expect[i] + 8);

	phase_end(1);
	snapshot(&before, outside, noutside);
	phase_end(2);
	strcpy(pre_status, "none");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (k->pre[0]) {
		status = extract(k, k->pre, runout);
		snprintf(pre_status, sizeof(pre_status), "%d", status);
	}
	status = extract(k, k->archive, runout);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	k->extract_seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	phase_end(3);
	snapshot(&after, outside, noutside);
	phase_end(4);

	/* Clean up what escaped to /tmp (only the names this driver owns). */
	if (!glob(ESCAPE_PREFIX "*", GLOB_PERIOD, NULL, &g)) {
		for (i = 0; i < (int)g.gl_pathc; i++) {
			snprintf(line, sizeof(line), "\n%s ", g.gl_pathv[i]);
			if (!strstr(before.p, line) &&
			    strncmp(before.p, line + 1, strlen(line + 1)))
				rmtree(g.gl_pathv[i]);
		}
		globfree(&g);
	}
	for (i = 0; i < noutside; i++) {
		snprintf(line, sizeof(line), "\n%s ", outside[i]);
		if (!lstat(outside[i], &st) && !strstr(before.p, line) &&
		    strncmp(before.p, line + 1, strlen(line + 1)))
			rmtree(outside[i]);
	}

	if (status == -1)
		buf_printf(&msg, "extractor timed out after %d s (killed)\n",
			   extract_timeout);
	dfd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; i < k->nexpect && dfd >= 0; i++) {
		char *e = subst(k->expect[i]);

		snprintf(line, sizeof(line), "%s", e);
		n = words(line, w, 8);
		if (n)
			check(&msg, dfd, w, n, status, pre_status);
		free(e);
	}
	if (dfd < 0) {
		buf_printf(&msg, "DEST cannot be opened: %s\n", strerror(errno));
	} else {
		struct buf temps = { 0 };

		budget = 5;
		buf_add(&temps, "", 0);
		fstat(dfd, &st);
		find_temps(&temps, dfd, ".", st.st_dev, &budget);
		if (temps.len)
			buf_printf(&msg, "temporaries left in DEST:%s\n",
				   temps.p);
		free(temps.p);
		close(dfd);
	}
	if (strcmp(before.p, after.p)) {
		budget = 20;
		buf_printf(&msg, "OUTSIDE CHANGED:\n");
		diff_lines(&msg, before.p, after.p, "-", &budget);
		diff_lines(&msg, after.p, before.p, "+", &budget);
	}

	if (!msg.len) {
		out("ok %d - %s: %s", n_case, k->name, k->class);
		n_pass++;
	} else {
		out("not ok %d - %s: %s", n_case, k->name, k->class);
		out_lines("   ", msg.p, SIZE_MAX);
		out("#   extractor output:");
		logtext[0] = 0;
		i = open(runout, O_RDONLY | O_CLOEXEC);
		if (i >= 0) {
			ssize_t r = read(i, logtext, sizeof(logtext) - 1);

			logtext[r < 0 ? 0 : r] = 0;
			close(i);
		}
		out_lines("     ", logtext, sizeof(logtext));
		n_fail++;
	}
	for (i = 0; i < noutside; i++)
		free(outside[i]);
	free(before.p);
	free(after.p);
	free(msg.p);
	phase_end(5);
	remove_sandbox();
	phase_end(6);
}

/* --- the manifest -------------------------------------------------------- */

static struct kase *cases;
static int ncases;

/* Print the N cases that took longest, and how much of the lane's time went
 * to the extractor rather than to this driver's sandboxes and snapshots. */
static void slowest_cases(int n)
{
	double total = 0, in_extractor = 0;
	int i, j, best;

	for (i = 0; i < ncases; i++) {
		total += cases[i].seconds;
		in_extractor += cases[i].extract_seconds;
	}
	out("# time: %.1f s in cases, %.1f s of it in the extractor", total, in_extractor);
	for (i = 0; i < 7; i++)
		out("# time: %s %.1f s", phase_names[i], phase_seconds[i]);
	for (j = 0; j < n; j++) {
		best = -1;
		for (i = 0; i < ncases; i++)
			if (cases[i].seconds >= 0 &&
			    (best < 0 || cases[i].seconds > cases[best].seconds))
				best = i;
		if (best < 0 || cases[best].seconds <= 0)
			break;
		out("# slow: %.2f s (extractor %.2f s) %s", cases[best].seconds,
		    cases[best].extract_seconds, cases[best].name);
		cases[best].seconds = -cases[best].seconds - 1;
	}
}

static void parse_manifest(const char *path, char **filters, int nfilters)
{
	char line[8192], *rest, *nl;
	struct kase *k = NULL;
	int i, keep;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "corpus: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		if (!line[0] || line[0] == '#')
			continue;
		rest = strchr(line, ' ');
		rest = rest ? rest + 1 : line + strlen(line);
		if (!strncmp(line, "case ", 5)) {
			cases = realloc(cases, (ncases + 1) * sizeof(*cases));
			if (!cases)
				exit(2);
			k = &cases[ncases++];
			memset(k, 0, sizeof(*k));
			snprintf(k->name, sizeof(k->name), "%s", rest);
			continue;
		}
		if (!k)
			continue;
		if (!strcmp(line, "end")) {
			keep = !nfilters;
			for (i = 0; i < nfilters; i++)
				if (!fnmatch(filters[i], k->name, 0))
					keep = 1;
			if (!keep)
				ncases--;
			k = NULL;
		} else if (!strncmp(line, "class ", 6)) {
			snprintf(k->class, sizeof(k->class), "%s", rest);
		} else if (!strncmp(line, "archive ", 8)) {
			snprintf(k->archive, sizeof(k->archive), "%s/%s", here,
				 rest);
		} else if (!strncmp(line, "peer ", 5)) {
			snprintf(k->archive, sizeof(k->archive), "%s/%s",
				 peer_dir, rest);
			if (access(k->archive, R_OK))
				snprintf(k->skip, sizeof(k->skip),
					 "peer archive %s not found", rest);
		} else if (!strncmp(line, "root ", 5)) {
			k->root = 1;
		} else if (!strncmp(line, "opts ", 5)) {
			k->opts = strdup(rest);
		} else if (!strncmp(line, "seopts ", 7)) {
			size_t ml = strlen(mode);

			if (!strncmp(rest, mode, ml) && rest[ml] == ' ') {
				size_t old = k->seopts ? strlen(k->seopts) : 0;

				k->seopts = realloc(k->seopts,
						    old + strlen(rest) + 2);
				if (!old)
					k->seopts[0] = 0;
				strcat(k->seopts, " ");
				strcat(k->seopts, rest + ml + 1);
			}
		} else if (!strncmp(line, "setup ", 6)) {
			if (k->nsetup < MAX_LINES)
				k->setup[k->nsetup++] = strdup(rest);
		} else if (!strncmp(line, "expect ", 7)) {
			char m[64], *sp = strchr(rest, ' '), *plus;

			if (!sp || sp - rest >= (int)sizeof(m))
				continue;
			snprintf(m, sizeof(m), "%.*s", (int)(sp - rest), rest);
			plus = strchr(m, '+');
			if (plus) {
				if (!strcmp(plus, "+root") && !is_root)
					continue;
				if (!strcmp(plus, "+user") && is_root)
					continue;
				*plus = 0;
			}
			if (strcmp(m, "both") && strcmp(m, mode))
				continue;
			if (k->nexpect < MAX_LINES)
				k->expect[k->nexpect++] = strdup(sp + 1);
		}
	}
	fclose(f);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: corpus --dir TESTS/ARCHIVES --se SAFE-EXTRACT [--mode strict|in-root]\n"
		"              [--peer DIR] [--timeout SECONDS] [--tag TAG] [CASE-PATTERN...]\n");
	exit(2);
}

static int snapshot_main(int argc, char **argv)
{
	const char *prune[65];
	struct buf b = { 0 };
	struct stat st;
	int i, np = 0;

	buf_add(&b, "", 0);
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--prune") && i + 1 < argc) {
			if (np < 64)
				prune[np++] = argv[++i];
			continue;
		}
		prune[np] = NULL;
		if (lstat(argv[i], &st)) {
			buf_printf(&b, "%s missing\n", argv[i]);
			continue;
		}
		walk(&b, argv[i], st.st_dev, prune);
	}
	return fwrite(b.p, 1, b.len, stdout) == b.len ? 0 : 2;
}

int main(int argc, char **argv)
{
	char manifest[PATH_MAX + 16], *filters[64];
	const char *tmp = getenv("TMPDIR");
	int nfilters = 0, i;
	struct timespec t0, t1;
	glob_t g;

	if (argc > 1 && !strcmp(argv[1], "--snapshot"))
		return snapshot_main(argc, argv);
	{
		struct rlimit rl;

		/* rmtree() holds one fd a level of a tree the cases make. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			here = argv[++i];
		else if (!strcmp(argv[i], "--se") && i + 1 < argc)
			se_bin = argv[++i];
		else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = argv[++i];
		else if (!strcmp(argv[i], "--peer") && i + 1 < argc)
			peer_dir = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			extract_timeout = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
			tag = argv[++i];
		else if (argv[i][0] == '-')
			usage();
		else if (nfilters < 64)
			filters[nfilters++] = argv[i];
	}
	if (!here || !se_bin || extract_timeout <= 0 ||
	    (strcmp(mode, "strict") && strcmp(mode, "in-root")))
		usage();
	if (access(se_bin, X_OK)) {
		out("Bail out! no safe-extract at %s", se_bin);
		return 2;
	}
	if (!peer_dir)
		peer_dir = "/nonexistent";
	is_root = geteuid() == 0;
	umask(022);
	snprintf(manifest, sizeof(manifest), "%s/MANIFEST", here);
	parse_manifest(manifest, filters, nfilters);

	snprintf(work, sizeof(work), "%s/safe-extract-corpus.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(work)) {
		out("Bail out! mkdtemp %s: %s", work, strerror(errno));
		return 2;
	}
	snprintf(box, sizeof(box), "%s/box", work);
	snprintf(S, sizeof(S), "%s/box/l1/l2/s", work);
	snprintf(dest, sizeof(dest), "%s/dest", S);
	snprintf(outdir, sizeof(outdir), "%s/outside", S);
	snprintf(runout, sizeof(runout), "%s/run/out", work);
	snprintf(manifest, sizeof(manifest), "%s/run", work);
	if (mkdir(manifest, 0755) || chdir(work)) {
		out("Bail out! %s: %s", manifest, strerror(errno));
		return 2;
	}

	out("1..%d", ncases);
	if (!glob(ESCAPE_PREFIX "*", GLOB_PERIOD, NULL, &g)) {
		for (i = 0; i < (int)g.gl_pathc; i++) {
			out("# removing stale %s", g.gl_pathv[i]);
			rmtree(g.gl_pathv[i]);
		}
		globfree(&g);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < ncases; i++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		run_case(&cases[i]);
		clock_gettime(CLOCK_MONOTONIC, &b);
		cases[i].seconds = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out("# %d passed, %d failed, %d skipped (mode %s) in %.1f s", n_pass,
	    n_fail, n_skip, mode,
	    (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* Where a lane's time goes: under TCG the corpus is most of the
	 * QEMU stage (issue 24). */
	slowest_cases(5);
	unmount_all();
	if (!keep_work) {
		if (chdir("/") == 0)
			rmtree(work);
	}
	return n_fail ? 1 : 0;
}
