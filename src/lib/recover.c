/*
 * recover.c - finishing or undoing a --durable run from its journal
 * (journal.h has the format, recover.h the contract).
 *
 * The journal is read whole, checked line by line, and only then acted
 * on.  Every directory is opened from the root by a resolver that follows
 * no symlink and crosses no mount; every other name is one component
 * acted on inside that directory's fd, so a forged journal can name
 * nothing outside DEST (CVE-2018-15664's rename race has no name to
 * race on).  Temporaries and names moved aside must look like the names
 * tmpname.c makes: recovery never removes an ordinary name of DEST
 * except one the journal says the run made.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"
#include "names.h"
#include "recover.h"
#include "remove.h"
#include "resolve.h"
#include "sha256.h"
#include "tmpname.h"

enum rec_kind { R_DIR, R_MKDIR, R_KEPT, R_MADE, R_ASIDE, R_RENAME, R_META, R_XATTR };

struct rec {
	enum rec_kind kind;
	char *d;		/* a directory from the root ("." is the root) */
	char *a, *b, *c;	/* MADE: leaf; ASIDE: temporary, leaf;
				 * RENAME: temporary, leaf; META: its data;
				 * XATTR: DEV:INO, name, hex value */
};

struct jdata {
	char *buf;
	struct rec *recs;
	size_t n;
	bool forward;
};

static int say(struct recovery *r, int err, const char *msg)
{
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
	return err;
}

/* A directory's path: "." or components that are neither empty, "." nor
 * "..", with no leading slash. */
static bool good_dir(const char *d)
{
	const char *c = d;

	if (strcmp(d, ".") == 0)
		return true;
	if (!*d || *d == '/')
		return false;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

static bool good_leaf(const char *l)
{
	return *l && !strchr(l, '/') && strcmp(l, ".") && strcmp(l, "..") &&
	       strcmp(l, JOURNAL_NAME);
}

/* Split LINE (NUL-ended, no newline) into at most 4 words. */
static int words(char *line, char *w[5])
{
	int n = 0;

	for (char *s = strtok(line, " "); s; s = strtok(NULL, " ")) {
		if (n == 5)
			return -1;
		w[n++] = s;
	}
	return n;
}

struct dmeta {
	unsigned long long dev, ino;
	unsigned int mode;
	long long uid, gid;
	struct timespec ts[2];
};

/* "DEV:INO:MODE:UID:GID:AS.AN:MS.MN" (journal.h) into *M (may be NULL). */
static bool meta_of(const char *s, struct dmeta *m)
{
	struct dmeta x;
	long long as, ms;
	long an, mn;
	int used = 0;

	if (sscanf(s, "%llu:%llu:%o:%lld:%lld:%lld.%ld:%lld.%ld%n", &x.dev, &x.ino, &x.mode,
		   &x.uid, &x.gid, &as, &an, &ms, &mn, &used) != 9 || s[used] ||
	    x.mode > 07777)
		return false;
	x.ts[0] = (struct timespec){ (time_t)as, an };
	x.ts[1] = (struct timespec){ (time_t)ms, mn };
	if (m)
		*m = x;
	return true;
}

/*
 * An xattr record's fields: "DEV:INO", a name recovery may set, and an
 * even run of hex digits ("-": empty) of at most 64 KiB.  Only user.* and
 * the ACLs: a forged journal must not set trusted.overlay.* (an opaque
 * or redirect mark for an overlay mount) or a security.* label.
 */
static bool xattr_record_ok(const char *id, const char *name, const char *hex)
{
	unsigned long long dev, ino;
	size_t n = strlen(hex);
	int used = 0;

	if (sscanf(id, "%llu:%llu%n", &dev, &ino, &used) != 2 || id[used])
		return false;
	if (strlen(name) > 255 ||
	    (strncmp(name, "user.", 5) != 0 && strcmp(name, "system.posix_acl_access") != 0 &&
	     strcmp(name, "system.posix_acl_default") != 0))
		return false;
	if (strcmp(hex, "-") == 0)
		return true;
	if (n % 2 || n > 2 * 65536)
		return false;
	return strspn(hex, "0123456789abcdef") == n;
}

static bool end_matches(const char *buf, size_t at, const char *nstr, const char *hex)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char dg[32];
	struct sha256 sh;
	char *endp;
	unsigned long long n = strtoull(nstr, &endp, 10);

	if (*endp || n != at || strlen(hex) != 64)
		return false;
	sha256_init(&sh);
	sha256_update(&sh, buf, at);
	sha256_final(&sh, dg);
	for (int i = 0; i < 32; i++)
		if (hex[2 * i] != digits[dg[i] >> 4] || hex[2 * i + 1] != digits[dg[i] & 0xf])
			return false;
	return true;
}

/*
 * Parse the journal in BUF (LEN bytes).  A last line without its newline
 * is a write the cut interrupted: ignored.  Anything else malformed is
 * refused, nothing done.
 */
static int parse(char *buf, size_t len, struct jdata *jd, struct recovery *r)
{
	size_t at, cap = 0, lineno = 1;
	bool committed = false;
	char *nl = memchr(buf, '\n', len);

	/* Cut before its first line was written: the run changed nothing. */
	if (!nl && len < sizeof(JOURNAL_MAGIC) && memcmp(buf, JOURNAL_MAGIC "\n", len) == 0)
		return 0;
	if (!nl || (size_t)(nl - buf) != strlen(JOURNAL_MAGIC) ||
	    memcmp(buf, JOURNAL_MAGIC, strlen(JOURNAL_MAGIC)) != 0)
		return say(r, -EINVAL, JOURNAL_NAME ": not a safe-extract journal (first line)");
	at = (size_t)(nl - buf) + 1;
	while (at < len) {
		char *line = buf + at, *w[5] = { 0 };
		size_t start = at;
		int nw;

		nl = memchr(line, '\n', len - at);
		if (!nl)
			break;		/* torn last write */
		*nl = '\0';
		at = (size_t)(nl - buf) + 1;
		lineno++;
		if (memchr(line, '\0', (size_t)(nl - line)))
			return say(r, -EINVAL, JOURNAL_NAME ": a NUL byte in a record");
		nw = words(line, w);
		if (nw < 1)
			goto bad;
		if (strcmp(w[0], "end") == 0) {
			if (nw != 3 || !committed)
				goto bad;
			/* The digest covers the bytes before the line as
			 * written (jd->buf: parse() cuts words in a copy). */
			jd->forward = end_matches(jd->buf, start, w[1], w[2]);
			/* An end line that does not match was never made
			 * durable by the run (it syncs before renaming):
			 * nothing was committed. */
			if (!jd->forward)
				return 0;
			if (at != len)
				return say(r, -EINVAL, JOURNAL_NAME ": records after the end line");
			return 0;
		}
		if (strcmp(w[0], "commit") == 0) {
			if (nw != 1 || committed)
				goto bad;
			committed = true;
			continue;
		}
		if (jd->n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct rec *nr = realloc(jd->recs, nc * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			jd->recs = nr;
			cap = nc;
		}
		struct rec *rc = &jd->recs[jd->n];

		memset(rc, 0, sizeof(*rc));
		for (int i = 1; i < nw; i++)
			if (!journal_decode(w[i]))
				goto bad;
		if (nw >= 2)
			rc->d = w[1];
		if (committed) {
			if (strcmp(w[0], "rename") == 0 && nw == 4)
				rc->kind = R_RENAME;
			else if (strcmp(w[0], "meta") == 0 && nw == 3)
				rc->kind = R_META;
			else if (strcmp(w[0], "xattr") == 0 && nw == 5)
				rc->kind = R_XATTR;
			else
				goto bad;
		} else if (strcmp(w[0], "dir") == 0 && nw == 2) {
			rc->kind = R_DIR;
		} else if (strcmp(w[0], "mkdir") == 0 && nw == 2) {
			rc->kind = R_MKDIR;
		} else if (strcmp(w[0], "kept") == 0 && nw == 2) {
			rc->kind = R_KEPT;
		} else if (strcmp(w[0], "made") == 0 && nw == 3) {
			rc->kind = R_MADE;
		} else if (strcmp(w[0], "aside") == 0 && nw == 4) {
			rc->kind = R_ASIDE;
		} else {
			goto bad;
		}
		rc->a = nw >= 3 ? w[2] : NULL;
		rc->b = nw >= 4 ? w[3] : NULL;
		rc->c = nw >= 5 ? w[4] : NULL;
		if (!good_dir(rc->d))
			goto bad;
		if ((rc->kind == R_MKDIR || rc->kind == R_KEPT) && strcmp(rc->d, ".") == 0)
			goto bad;	/* the root itself is never the run's */
		if (rc->kind == R_META && !meta_of(rc->a, NULL))
			goto bad;
		if (rc->kind == R_XATTR && !xattr_record_ok(rc->a, rc->b, rc->c))
			goto bad;
		if (rc->kind == R_MADE && !good_leaf(rc->a))
			goto bad;
		if ((rc->kind == R_ASIDE || rc->kind == R_RENAME) &&
		    (!tmp_is_name(rc->a) || !good_leaf(rc->b)))
			goto bad;
		jd->n++;
	}
	/* No end line on disk: the run had not committed. */
	jd->forward = false;
	return 0;
bad:
	snprintf(r->msg, sizeof(r->msg), "%s: malformed record on line %zu", JOURNAL_NAME,
		 lineno);
	return -EINVAL;
}

static int open_dir(struct resolver *rs, const char *d)
{
	return rs_open_dir(rs, strcmp(d, ".") ? d : "", O_PATH, false, 0);
}

/* Remove LEAF in DFD, a non-directory or an empty directory. */
static int remove_one(int dfd, const char *leaf)
{
	if (unlinkat(dfd, leaf, 0) == 0)
		return 0;
	if (errno == EISDIR || errno == EPERM) {
		if (unlinkat(dfd, leaf, AT_REMOVEDIR) == 0)
			return 0;
	}
	return -errno;
}

/* Is NAME moved aside in directory D (and so not a temporary)? */
static bool is_aside(const struct jdata *jd, const char *d, const char *name)
{
	for (size_t i = 0; i < jd->n; i++)
		if (jd->recs[i].kind == R_ASIDE && strcmp(jd->recs[i].d, d) == 0 &&
		    strcmp(jd->recs[i].a, name) == 0)
			return true;
	return false;
}

/* Remove the temporaries in directory D, but not KEEP_ASIDE's names. */
static void remove_temporaries(struct resolver *rs, const struct jdata *jd, const char *d,
			       bool keep_aside, struct recovery *r)
{
	int dfd = open_dir(rs, d), lfd;
	DIR *dir;
	struct dirent *de;

	if (dfd < 0)
		return;
	lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = lfd >= 0 ? fdopendir(lfd) : NULL;
	if (!dir) {
		if (lfd >= 0)
			close(lfd);
		close(dfd);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		if (!tmp_is_name(de->d_name))
			continue;
		if (keep_aside && is_aside(jd, d, de->d_name))
			continue;
		if (remove_one(dfd, de->d_name) == 0)
			r->removed++;
	}
	closedir(dir);
	close(dfd);
}

/* The path D/L split back: the parent's fd and the leaf. */
static int open_parent_of(struct resolver *rs, char *path, const char **leaf)
{
	char *slash = strrchr(path, '/');
	int fd;

	if (!slash) {
		*leaf = path;
		return open_dir(rs, ".");
	}
	*slash = '\0';
	fd = open_dir(rs, path);
	*slash = '/';
	*leaf = slash + 1;
	return fd;
}

static bool kept_later(const struct jdata *jd, size_t i)
{
	for (size_t k = i + 1; k < jd->n; k++)
		if (jd->recs[k].kind == R_KEPT && strcmp(jd->recs[k].d, jd->recs[i].d) == 0)
			return true;
	return false;
}

static bool made_kept_later(const struct jdata *jd, size_t i)
{
	const struct rec *m = &jd->recs[i];
	size_t dl = strlen(m->d);

	for (size_t k = i + 1; k < jd->n; k++) {
		const char *p = jd->recs[k].d;

		if (jd->recs[k].kind != R_KEPT)
			continue;
		if (strcmp(m->d, ".") == 0 ? strcmp(p, m->a) == 0 :
		    (strncmp(p, m->d, dl) == 0 && p[dl] == '/' && strcmp(p + dl + 1, m->a) == 0))
			return true;
	}
	return false;
}

static void roll_back(struct resolver *rs, const struct jdata *jd, struct recovery *r)
{
	struct stat st;

	for (size_t i = 0; i < jd->n; i++)
		if (jd->recs[i].kind == R_DIR)
			remove_temporaries(rs, jd, jd->recs[i].d, true, r);
	/* Newest first: what a later record put at a name goes before an
	 * earlier record's object comes back to it. */
	for (size_t i = jd->n; i-- > 0;) {
		const struct rec *rc = &jd->recs[i];
		const char *leaf;
		int dfd;

		switch (rc->kind) {
		case R_MKDIR: {
			char path[SE_PATH_MAX];

			if (kept_later(jd, i))
				break;
			snprintf(path, sizeof(path), "%s", rc->d);
			dfd = open_parent_of(rs, path, &leaf);
			if (dfd < 0)
				break;
			if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode)) {
				if (unlinkat(dfd, leaf, AT_REMOVEDIR) == 0)
					r->removed++;
				else
					r->left++;
			}
			close(dfd);
			break;
		}
		case R_MADE:
			if (made_kept_later(jd, i))
				break;
			dfd = open_dir(rs, rc->d);
			if (dfd < 0)
				break;
			if (fstatat(dfd, rc->a, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    !S_ISDIR(st.st_mode) && unlinkat(dfd, rc->a, 0) == 0)
				r->removed++;
			close(dfd);
			break;
		case R_ASIDE:
			dfd = open_dir(rs, rc->d);
			if (dfd < 0)
				break;
			if (fstatat(dfd, rc->a, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				/* What the run put at the name goes; the old
				 * object comes back. */
				if (fstatat(dfd, rc->b, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				    remove_one(dfd, rc->b) == 0)
					r->removed++;
				if (renameat2(dfd, rc->a, dfd, rc->b, RENAME_NOREPLACE) == 0)
					r->restored++;
				else
					r->left++;
			}
			close(dfd);
			break;
		default:
			break;
		}
	}
	/* A tree moved aside and back may hold temporaries the first pass
	 * could not reach by their directory's path. */
	for (size_t i = 0; i < jd->n; i++)
		if (jd->recs[i].kind == R_DIR)
			remove_temporaries(rs, jd, jd->recs[i].d, true, r);
}

/* The xattr records of directory D (device DEV, inode INO), set on FD
 * as the run would have set them: after the mode, before the times. */
static void apply_xattrs(const struct jdata *jd, const char *d, unsigned long long dev,
			 unsigned long long ino, int fd)
{
	for (size_t i = 0; i < jd->n; i++) {
		const struct rec *rc = &jd->recs[i];
		unsigned long long rdev, rino;
		unsigned char *v;
		size_t n;

		if (rc->kind != R_XATTR || strcmp(rc->d, d) != 0 ||
		    sscanf(rc->a, "%llu:%llu", &rdev, &rino) != 2 || rdev != dev || rino != ino)
			continue;
		n = strcmp(rc->c, "-") == 0 ? 0 : strlen(rc->c) / 2;
		v = malloc(n ? n : 1);
		if (!v)
			continue;
		for (size_t k = 0; k < n; k++) {
			unsigned int byte;

			sscanf(rc->c + 2 * k, "%2x", &byte);
			v[k] = (unsigned char)byte;
		}
		/* As the run: a failure leaves the directory as it is. */
		(void)!fsetxattr(fd, rc->b, v, n, 0);
		free(v);
	}
}

static void roll_forward(struct resolver *rs, const struct jdata *jd, struct recovery *r)
{
	for (size_t i = 0; i < jd->n; i++) {
		const struct rec *rc = &jd->recs[i];
		int dfd;

		if (rc->kind != R_RENAME)
			continue;
		dfd = open_dir(rs, rc->d);
		if (dfd < 0)
			continue;
		if (renameat(dfd, rc->a, dfd, rc->b) == 0) {
			r->renamed++;
		} else if (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST) {
			/* An empty directory in the way, as the run would
			 * have removed it; a non-empty one stays. */
			if (unlinkat(dfd, rc->b, AT_REMOVEDIR) == 0 &&
			    renameat(dfd, rc->a, dfd, rc->b) == 0)
				r->renamed++;
		}
		close(dfd);
	}
	/* Directory metadata comes after the renames, as in the run; only to
	 * the directory the run recorded (its device and inode: with
	 * --cross-mounts another file system's inode may have the same
	 * number), through its own fd. */
	for (size_t i = 0; i < jd->n; i++) {
		const struct rec *rc = &jd->recs[i];
		struct dmeta m;
		struct stat st;
		int fd;

		if (rc->kind != R_META || !meta_of(rc->a, &m))
			continue;
		fd = rs_open_dir(rs, strcmp(rc->d, ".") ? rc->d : "", O_RDONLY, false, 0);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_dev == m.dev && st.st_ino == m.ino) {
			if (m.uid >= 0 && fchown(fd, (uid_t)m.uid, (gid_t)m.gid) < 0)
				m.mode &= ~(unsigned int)(S_ISUID | S_ISGID);
			/* As the run: a failure leaves the directory as
			 * it is, the tree's names are already whole. */
			(void)!fchmod(fd, (mode_t)m.mode);
			apply_xattrs(jd, rc->d, m.dev, m.ino, fd);
			(void)!futimens(fd, m.ts);
		}
		close(fd);
	}
	/* What was moved aside goes; so does any temporary left. */
	for (size_t i = 0; i < jd->n; i++) {
		const struct rec *rc = &jd->recs[i];
		int dfd;

		if (rc->kind != R_ASIDE)
			continue;
		dfd = open_dir(rs, rc->d);
		if (dfd < 0)
			continue;
		/* A tree, for an image layer's whiteout: fd by fd, never
		 * through a symlink or across a mount. */
		if (remove_in(dfd, rc->a, NULL, NULL) == 0)
			r->removed++;
		close(dfd);
	}
	for (size_t i = 0; i < jd->n; i++)
		if (jd->recs[i].kind == R_DIR)
			remove_temporaries(rs, jd, jd->recs[i].d, false, r);
}

static int read_journal(int root_fd, struct jdata *jd, size_t *len, struct recovery *r)
{
	struct stat st;
	size_t got = 0;
	int fd = openat(root_fd, JOURNAL_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		if (errno == ELOOP)
			return say(r, -ELOOP, JOURNAL_NAME ": a symlink, not a journal: refused");
		return say(r, -errno, "cannot open " JOURNAL_NAME);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return say(r, -errno, "cannot stat " JOURNAL_NAME);
	}
	/* Only a journal this user's run could have written: not a device,
	 * not another user's file, not a hard link to one elsewhere. */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    (size_t)st.st_size > JOURNAL_MAX) {
		close(fd);
		return say(r, -EPERM, JOURNAL_NAME
			   ": not a regular file of this user with one link, or too large: refused");
	}
	jd->buf = malloc((size_t)st.st_size + 1);
	if (!jd->buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, jd->buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	jd->buf[got] = '\0';
	*len = got;
	return 0;
}

int recover(int root_fd, bool cross_mounts, struct recovery *r)
{
	struct rs_config cfg = { .cross_mounts = cross_mounts, .want = RS_WANT_AUTO };
	struct jdata jd = { 0 };
	struct resolver rs;
	char *copy = NULL;
	size_t len = 0;
	int ret, fd;

	memset(r, 0, sizeof(*r));
	ret = read_journal(root_fd, &jd, &len, r);
	if (ret != 0) {
		free(jd.buf);
		return ret > 0 ? 0 : ret;
	}
	/* parse() cuts the words in place; the end line's digest is over the
	 * bytes as written. */
	copy = malloc(len + 1);
	if (!copy) {
		free(jd.buf);
		return -ENOMEM;
	}
	memcpy(copy, jd.buf, len + 1);
	{
		char *orig = jd.buf;

		jd.buf = copy;		/* the pristine bytes, for the digest */
		ret = parse(orig, len, &jd, r);
		jd.buf = orig;
	}
	free(copy);
	if (ret < 0)
		goto out;
	fd = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = rs_open_root(&rs, fd, &cfg);
	if (ret < 0) {
		close(fd);
		say(r, ret, "cannot open the destination to recover " JOURNAL_NAME);
		goto out;
	}
	if (jd.forward) {
		r->kind = RECOVER_FORWARD;
		roll_forward(&rs, &jd, r);
	} else {
		r->kind = RECOVER_BACK;
		roll_back(&rs, &jd, r);
	}
	rs_close(&rs);
	/* Done, whatever was left: the journal goes last, so a cut during
	 * recovery recovers again. */
	if (unlinkat(root_fd, JOURNAL_NAME, 0) < 0 && errno != ENOENT)
		ret = say(r, -errno, "cannot remove " JOURNAL_NAME);
out:
	free(jd.recs);
	free(jd.buf);
	return ret;
}
