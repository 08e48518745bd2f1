/*
 * write.c - creating each entry inside the destination.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "compat.h"
#include "names.h"
#include "write.h"

#define TMP_PREFIX ".safe-extract-"

static struct outcome ok(enum entry_action act)
{
	return (struct outcome){ .act = act };
}

static struct outcome refuse(const char *reason, int err)
{
	return (struct outcome){ .act = ACT_REFUSED, .reason = reason, .err = err };
}

static struct outcome fail(const char *reason, int err)
{
	return (struct outcome){ .act = ACT_FAILED, .reason = reason, .err = err };
}

/* Errors that say the destination, not the entry, is unusable. */
static bool dest_unusable(int err)
{
	return err == ENOSPC || err == EDQUOT || err == EROFS || err == EIO ||
	       err == ENOMEM || err == EMFILE || err == ENFILE;
}

/*
 * Turn a resolution or creation error into the entry's outcome.  Policy
 * errors are refusals; anything else is a failure; a broken destination
 * stops the run.
 */
static struct outcome resolve_outcome(struct run *run, int err)
{
	struct outcome o;

	switch (err) {
	case ELOOP:
		return refuse(run->rs.in_root ?
			      "path crosses a magic link or too many symlinks" :
			      "path crosses a symlink", err);
	case EXDEV:
		return refuse("path leaves the destination or crosses a mount point",
			      err);
	case ENOTDIR:
		return refuse("a path component is not a directory", err);
	case ENAMETOOLONG:
		return refuse("name too long", err);
	case EAGAIN:
		return refuse("the destination kept changing during lookup", err);
	case ENOENT:
		return fail("a path component does not exist", err);
	default:
		o = fail("cannot create", err);
		o.fatal = dest_unusable(err);
		if (o.fatal)
			o.reason = "destination unusable";
		return o;
	}
}

/* A temporary name nobody can predict, in the entry's own directory. */
static void tmp_name(char out[32])
{
	unsigned char rnd[6];
	static const char hex[] = "0123456789abcdef";
	size_t o = sizeof(TMP_PREFIX) - 1;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		static unsigned long counter;
		unsigned long v = (unsigned long)getpid() * 2654435761u + ++counter;

		memcpy(rnd, &v, sizeof(rnd));
	}
	memcpy(out, TMP_PREFIX, o);
	for (size_t i = 0; i < sizeof(rnd); i++) {
		out[o++] = hex[rnd[i] >> 4];
		out[o++] = hex[rnd[i] & 0xf];
	}
	out[o] = '\0';
}

/* ---- metadata --------------------------------------------------------- */

static mode_t entry_mode(struct run *run, mode_t m)
{
	unsigned int f = run->opt.flags;

	m &= 07777;
	/* As GNU tar: without -p only the rwx bits survive, less the umask. */
	if (!(f & OPT_SAME_PERMS))
		return m & 0777 & ~run->umask;
	if (run->is_root)
		return m;
	/* Without root the owner cannot be restored, so neither may set-id
	 * bits: they would apply to the extracting user. */
	return m & ~(mode_t)(S_ISUID | S_ISGID);
}

static bool want_owner(struct run *run)
{
	return run->is_root && (run->opt.flags & OPT_SAME_OWNER);
}

static uid_t entry_uid(struct run *run, struct archive_entry *e)
{
	static char cached[64];
	static uid_t cached_uid;
	const char *name = archive_entry_uname(e);
	struct passwd *pw;

	if ((run->opt.flags & OPT_NUMERIC_OWNER) || !name || !*name)
		return (uid_t)archive_entry_uid(e);
	if (strcmp(name, cached) == 0)
		return cached_uid;
	pw = getpwnam(name);
	if (!pw)
		return (uid_t)archive_entry_uid(e);
	snprintf(cached, sizeof(cached), "%s", name);
	cached_uid = pw->pw_uid;
	return pw->pw_uid;
}

static gid_t entry_gid(struct run *run, struct archive_entry *e)
{
	static char cached[64];
	static gid_t cached_gid;
	const char *name = archive_entry_gname(e);
	struct group *gr;

	if ((run->opt.flags & OPT_NUMERIC_OWNER) || !name || !*name)
		return (gid_t)archive_entry_gid(e);
	if (strcmp(name, cached) == 0)
		return cached_gid;
	gr = getgrnam(name);
	if (!gr)
		return (gid_t)archive_entry_gid(e);
	snprintf(cached, sizeof(cached), "%s", name);
	cached_gid = gr->gr_gid;
	return gr->gr_gid;
}

static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
	if (archive_entry_atime_is_set(e)) {
		ts[0].tv_sec = archive_entry_atime(e);
		ts[0].tv_nsec = archive_entry_atime_nsec(e);
	} else {
		ts[0].tv_sec = 0;
		ts[0].tv_nsec = UTIME_OMIT;
	}
	if (archive_entry_mtime_is_set(e)) {
		ts[1].tv_sec = archive_entry_mtime(e);
		ts[1].tv_nsec = archive_entry_mtime_nsec(e);
	} else {
		ts[1].tv_sec = 0;
		ts[1].tv_nsec = UTIME_OMIT;
	}
}

/*
 * Extended attributes and ACLs, kept as a list of (name, value) so that a
 * directory's can wait for its deferred metadata.
 */
struct attr_blob {
	struct attr_blob *next;
	char *name;
	size_t size;
	unsigned char value[];
};

static void attr_add(struct attr_blob **list, const char *name,
		     const void *value, size_t size)
{
	struct attr_blob *b = malloc(sizeof(*b) + size);

	if (!b)
		return;
	b->name = strdup(name);
	if (!b->name) {
		free(b);
		return;
	}
	b->size = size;
	if (size)
		memcpy(b->value, value, size);
	b->next = *list;
	*list = b;
}

static void attr_free(struct attr_blob *list)
{
	while (list) {
		struct attr_blob *n = list->next;

		free(list->name);
		free(list);
		list = n;
	}
}

/* The kernel's POSIX ACL xattr format (include/uapi/linux/posix_acl_xattr.h). */
struct acl_xattr_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

enum {
	ACL_X_USER_OBJ = 0x01, ACL_X_USER = 0x02, ACL_X_GROUP_OBJ = 0x04,
	ACL_X_GROUP = 0x08, ACL_X_MASK = 0x10, ACL_X_OTHER = 0x20,
};

static int acl_entry_cmp(const void *a, const void *b)
{
	const struct acl_xattr_entry *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Build one ACL (access or default) of entry E as the kernel wants it. */
static void acl_collect(struct archive_entry *e, int type, mode_t mode,
			struct attr_blob **list)
{
	struct acl_xattr_entry ent[256];
	unsigned char buf[4 + sizeof(ent)];
	size_t n = 0;
	bool have[0x21] = { false };
	int atype, perm, tag, qual;
	const char *qname;
	uint32_t version = 2;

	if (archive_entry_acl_reset(e, type) <= 0)
		return;
	while (n < 250 && archive_entry_acl_next(e, type, &atype, &perm, &tag,
					       &qual, &qname) == ARCHIVE_OK) {
		uint16_t t;

		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: t = ACL_X_USER_OBJ; break;
		case ARCHIVE_ENTRY_ACL_USER: t = ACL_X_USER; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: t = ACL_X_GROUP_OBJ; break;
		case ARCHIVE_ENTRY_ACL_GROUP: t = ACL_X_GROUP; break;
		case ARCHIVE_ENTRY_ACL_MASK: t = ACL_X_MASK; break;
		case ARCHIVE_ENTRY_ACL_OTHER: t = ACL_X_OTHER; break;
		default: continue;
		}
		if (have[t] && t != ACL_X_USER && t != ACL_X_GROUP)
			continue;
		have[t] = true;
		ent[n].tag = t;
		ent[n].perm = (uint16_t)(perm & 7);
		ent[n].id = (t == ACL_X_USER || t == ACL_X_GROUP) ?
			    (uint32_t)qual : 0xffffffffu;
		n++;
	}
	if (n == 0)
		return;
	/* The kernel rejects an ACL without the three base entries. */
	if (!have[ACL_X_USER_OBJ])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_USER_OBJ, (mode >> 6) & 7, 0xffffffffu };
	if (!have[ACL_X_GROUP_OBJ])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_GROUP_OBJ, (mode >> 3) & 7, 0xffffffffu };
	if (!have[ACL_X_OTHER])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_OTHER, mode & 7, 0xffffffffu };
	if ((have[ACL_X_USER] || have[ACL_X_GROUP]) && !have[ACL_X_MASK])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_MASK, 7, 0xffffffffu };
	qsort(ent, n, sizeof(ent[0]), acl_entry_cmp);
	memcpy(buf, &version, 4);
	memcpy(buf + 4, ent, n * sizeof(ent[0]));
	attr_add(list, type == ARCHIVE_ENTRY_ACL_TYPE_DEFAULT ?
		 "system.posix_acl_default" : "system.posix_acl_access",
		 buf, 4 + n * sizeof(ent[0]));
}

static struct attr_blob *entry_attrs(struct run *run, struct archive_entry *e)
{
	struct attr_blob *list = NULL;
	const char *name;
	const void *value;
	size_t size;

	if (run->opt.flags & OPT_XATTRS) {
		archive_entry_xattr_reset(e);
		while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
			/* ACLs come through --acls, in the format checked above. */
			if (strncmp(name, "system.posix_acl_", 17) == 0)
				continue;
			attr_add(&list, name, value, size);
		}
	}
	if (run->opt.flags & OPT_ACLS) {
		mode_t m = archive_entry_perm(e);

		acl_collect(e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, m, &list);
		if (archive_entry_filetype(e) == AE_IFDIR)
			acl_collect(e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, m, &list);
	}
	return list;
}

static int apply_attrs(int fd, const struct attr_blob *list)
{
	for (; list; list = list->next)
		if (fsetxattr(fd, list->name, list->value, list->size, 0) < 0)
			return -errno;
	return 0;
}

/*
 * Owner, mode, attributes and times on an fd we created.  Order matters:
 * chown clears set-id bits, so mode comes after it; ACLs after the mode
 * they refine; times last.
 */
static struct outcome apply_fd_metadata(struct run *run, int fd, mode_t mode,
					mode_t created_mode, bool set_owner,
					uid_t uid, gid_t gid,
					const struct attr_blob *attrs,
					const struct timespec ts[2])
{
	int err;

	if (set_owner && fchown(fd, uid, gid) < 0)
		return fail("cannot set owner", errno);
	/* CREATED_MODE is what the object was made with; chown only ever
	 * clears set-id bits, which creation never sets. */
	if (mode != created_mode && fchmod(fd, mode) < 0)
		return fail("cannot set mode", errno);
	err = apply_attrs(fd, attrs);
	if (err)
		return fail("cannot set extended attributes or ACLs", -err);
	if (futimens(fd, ts) < 0)
		return fail("cannot set times", errno);
	return ok(ACT_CREATED);
}

/* ---- putting a finished object at its name ---------------------------- */

/*
 * Rename the temporary TMP over LEAF in DIRFD.  A file, symlink or hardlink
 * in the way is replaced (never written through); a directory is not.
 */
static struct outcome place(struct run *run, int dirfd, const char *tmp,
			    const char *leaf)
{
	bool keep = run->opt.flags & OPT_KEEP_OLD;
	int err;

	if (renameat2(dirfd, tmp, dirfd, leaf, RENAME_NOREPLACE) == 0)
		return ok(ACT_CREATED);
	err = errno;
	if (err == EEXIST && keep) {
		unlinkat(dirfd, tmp, 0);
		return refuse("exists and --keep-old-files is set", EEXIST);
	}
	if (err != EEXIST && err != EINVAL && err != ENOSYS) {
		unlinkat(dirfd, tmp, 0);
		return resolve_outcome(run, err);
	}
	if (renameat(dirfd, tmp, dirfd, leaf) < 0) {
		err = errno;
		unlinkat(dirfd, tmp, 0);
		if (err == EISDIR || err == ENOTEMPTY || err == EEXIST)
			return refuse("a directory is in the way", err);
		return resolve_outcome(run, err);
	}
	/* rename(2) does nothing when both names are one inode (a hardlink
	 * onto itself): the temporary would stay behind. */
	unlinkat(dirfd, tmp, 0);
	return ok(err == EEXIST ? ACT_REPLACED : ACT_CREATED);
}

static void live_tmp_set(struct run *run, int dirfd, const char *name)
{
	run->tmp.dirfd = dirfd;
	snprintf(run->tmp.name, sizeof(run->tmp.name), "%s", name);
}

static void live_tmp_clear(struct run *run)
{
	run->tmp.dirfd = -1;
	run->tmp.name[0] = '\0';
}

static bool queue_pending(struct run *run, const char *path, const char *tmp,
			  const char *name, const char *link_target)
{
	struct pending *p;
	const char *slash = strrchr(path, '/');

	if (run->n_pend == run->cap_pend) {
		size_t cap = run->cap_pend ? run->cap_pend * 2 : 256;
		struct pending *np = realloc(run->pend, cap * sizeof(*np));

		if (!np)
			return false;
		run->pend = np;
		run->cap_pend = cap;
	}
	p = &run->pend[run->n_pend];
	memset(p, 0, sizeof(*p));
	p->dir = strndup(path, slash ? (size_t)(slash - path) : 0);
	p->leaf = strdup(slash ? slash + 1 : path);
	p->name = strdup(name);
	p->link_target = link_target ? strdup(link_target) : NULL;
	if (tmp)
		snprintf(p->tmp, sizeof(p->tmp), "%s", tmp);
	if (!p->dir || !p->leaf || !p->name || (link_target && !p->link_target)) {
		free(p->dir);
		free(p->leaf);
		free(p->name);
		free(p->link_target);
		return false;
	}
	run->n_pend++;
	return true;
}

/* ---- regular files ---------------------------------------------------- */

static bool linked_has(struct run *run, const struct stat *st)
{
	for (size_t i = run->n_linked; i-- > 0;)
		if (run->linked[i].dev == st->st_dev && run->linked[i].ino == st->st_ino)
			return true;
	return false;
}

static void linked_add(struct run *run, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	if (run->n_linked == run->cap_linked) {
		size_t cap = run->cap_linked ? run->cap_linked * 2 : 64;
		void *n = realloc(run->linked, cap * sizeof(*run->linked));

		if (!n)
			return;
		run->linked = n;
		run->cap_linked = cap;
	}
	run->linked[run->n_linked].dev = st.st_dev;
	run->linked[run->n_linked].ino = st.st_ino;
	run->n_linked++;
}

/* Copy the entry's data into FD; holes in sparse entries stay holes. */
static struct outcome copy_data(struct run *run, struct archive_entry *e,
				int fd)
{
	const void *buf;
	size_t size;
	la_int64_t offset, end = 0;
	int r;

	for (;;) {
		if (se_interrupted)
			return (struct outcome){ ACT_FAILED, "interrupted", EINTR, true };
		r = archive_read_data_block(run->ar, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			struct outcome o = fail(archive_error_string(run->ar) ?
						archive_error_string(run->ar) :
						"archive data unreadable", 0);
			o.fatal = true;
			return o;
		}
		while (size > 0) {
			ssize_t n = pwrite(fd, buf, size, offset);

			if (n < 0) {
				struct outcome o;

				if (errno == EINTR)
					continue;
				o = fail("cannot write data", errno);
				o.fatal = dest_unusable(errno);
				return o;
			}
			buf = (const char *)buf + n;
			size -= (size_t)n;
			offset += n;
			run->bytes += (uint64_t)n;
		}
		if (offset > end)
			end = offset;
		report_progress(&run->rep, run->entries, run->bytes, false);
	}
	/* A sparse file ending in a hole: the size comes from the header. */
	if (archive_entry_size_is_set(e) && archive_entry_size(e) > end &&
	    ftruncate(fd, archive_entry_size(e)) < 0) {
		struct outcome o = fail("cannot set size", errno);

		o.fatal = dest_unusable(errno);
		return o;
	}
	return ok(ACT_CREATED);
}

struct outcome write_regular(struct run *run, struct archive_entry *e,
			     const char *path)
{
	mode_t mode = entry_mode(run, archive_entry_perm(e));
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o;
	const char *leaf;
	char tmp[32];
	int dirfd, fd;

	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);

	for (int tries = 0;; tries++) {
		tmp_name(tmp);
		/* O_EXCL|O_NOFOLLOW: a name planted under us is never opened. */
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode & 0777);
		if (fd >= 0 || errno != EEXIST || tries > 8)
			break;
	}
	if (fd < 0) {
		o = resolve_outcome(run, errno);
		close(dirfd);
		return o;
	}
	live_tmp_set(run, dirfd, tmp);
	if (archive_entry_nlink(e) > 1)
		linked_add(run, fd);

	o = copy_data(run, e, fd);
	if (o.act == ACT_CREATED) {
		attrs = entry_attrs(run, e);
		entry_times(e, ts);
		o = apply_fd_metadata(run, fd, mode, mode & 0777, want_owner(run),
				      entry_uid(run, e), entry_gid(run, e), attrs, ts);
		attr_free(attrs);
	}
	if (close(fd) < 0 && o.act == ACT_CREATED) {
		o = fail("cannot write data", errno);
		o.fatal = dest_unusable(o.err);
	}
	if (o.act != ACT_CREATED) {
		unlinkat(dirfd, tmp, 0);
		live_tmp_clear(run);
		close(dirfd);
		return o;
	}

	if (run->opt.flags & OPT_DURABLE) {
		/* Renamed after the first syncfs (write_finish). */
		if (!queue_pending(run, path, tmp, archive_entry_pathname(e), NULL)) {
			unlinkat(dirfd, tmp, 0);
			o = fail("out of memory", ENOMEM);
			o.fatal = true;
		}
	} else {
		o = place(run, dirfd, tmp, leaf);
	}
	live_tmp_clear(run);
	close(dirfd);
	return o;
}

/* ---- directories ------------------------------------------------------ */

static bool defer_dir(struct run *run, struct archive_entry *e,
		      const char *path)
{
	struct deferred_dir *d;

	if (run->n_dirs == run->cap_dirs) {
		size_t cap = run->cap_dirs ? run->cap_dirs * 2 : 64;
		struct deferred_dir *nd = realloc(run->dirs, cap * sizeof(*nd));

		if (!nd)
			return false;
		run->dirs = nd;
		run->cap_dirs = cap;
	}
	d = &run->dirs[run->n_dirs];
	d->path = strdup(path);
	if (!d->path)
		return false;
	d->mode = entry_mode(run, archive_entry_perm(e));
	d->set_owner = want_owner(run);
	d->uid = entry_uid(run, e);
	d->gid = entry_gid(run, e);
	entry_times(e, d->times);
	d->xattrs = entry_attrs(run, e);
	d->seq = run->n_dirs;
	run->n_dirs++;
	return true;
}

struct outcome write_directory(struct run *run, struct archive_entry *e,
			       const char *path)
{
	enum entry_action act = ACT_CREATED;
	struct stat st;
	const char *leaf;
	int dirfd, err;

	if (path[0] == '\0')
		goto defer;	/* "./": the destination's own metadata, as tar */

	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);
	/* Owner-only until write_finish: nobody else gets in meanwhile, and a
	 * 0555 directory still receives its files. */
	if (mkdirat(dirfd, leaf, 0700) == 0)
		goto close_defer;
	if (errno != EEXIST) {
		err = errno;
		close(dirfd);
		return resolve_outcome(run, err);
	}
	err = rs_stat(&run->rs, dirfd, leaf, path, &st);
	if (err) {
		close(dirfd);
		return resolve_outcome(run, -err);
	}
	if (S_ISDIR(st.st_mode))
		goto close_defer;
	if (S_ISLNK(st.st_mode) && run->rs.in_root) {
		/* usrmerge: "lib -> usr/lib" stays, and the directory's
		 * metadata is not applied through the link. */
		int fd = rs_open_dir(&run->rs, path, O_PATH, false, 0);

		if (fd >= 0) {
			close(fd);
			close(dirfd);
			return (struct outcome){ ACT_SKIPPED,
				"existing symlink to a directory kept", 0, false };
		}
	}
	if (S_ISLNK(st.st_mode) && !(run->opt.flags & OPT_UNLINK)) {
		/* A link then a directory entry of the same name: the
		 * directory's chmod/chown would go through the link. */
		close(dirfd);
		return refuse("a symlink is in the way of a directory (use -U to remove it)",
			      ELOOP);
	}
	if (run->opt.flags & OPT_KEEP_OLD) {
		close(dirfd);
		return refuse("exists and --keep-old-files is set", EEXIST);
	}
	err = rs_unlink(&run->rs, dirfd, leaf, path, 0);
	if (err || mkdirat(dirfd, leaf, 0700) < 0) {
		err = err ? -err : errno;
		close(dirfd);
		return resolve_outcome(run, err);
	}
	act = ACT_REPLACED;
close_defer:
	close(dirfd);
defer:
	if (!defer_dir(run, e, path))
		return (struct outcome){ ACT_FAILED, "out of memory", ENOMEM, true };
	return ok(act);
}

/* ---- links and special files ------------------------------------------ */

/*
 * Make an object with MAKE(dirfd, name) at LEAF: directly when the name is
 * free, else under a temporary name renamed over it.
 */
typedef int (*make_fn)(struct run *run, struct archive_entry *e,
		       const char *target, int dirfd, const char *name);

static struct outcome make_at(struct run *run, struct archive_entry *e,
			      const char *path, const char *target, make_fn make,
			      int *dirfd_out, const char **leaf_out)
{
	char tmp[32];
	const char *leaf;
	struct outcome o;
	int dirfd, err;

	*dirfd_out = -1;
	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);
	if (make(run, e, target, dirfd, leaf) == 0) {
		o = ok(ACT_CREATED);
		goto out;
	}
	err = errno;
	if (err != EEXIST) {
		o = resolve_outcome(run, err);
		goto fail;
	}
	if (run->opt.flags & OPT_KEEP_OLD) {
		o = refuse("exists and --keep-old-files is set", EEXIST);
		goto fail;
	}
	tmp_name(tmp);
	if (make(run, e, target, dirfd, tmp) < 0) {
		o = resolve_outcome(run, errno);
		goto fail;
	}
	o = place(run, dirfd, tmp, leaf);
	if (o.act != ACT_CREATED && o.act != ACT_REPLACED)
		goto fail;
	if (o.act == ACT_CREATED)
		o.act = ACT_REPLACED;
out:
	*dirfd_out = dirfd;
	*leaf_out = leaf;
	return o;
fail:
	close(dirfd);
	return o;
}

static int make_symlink(struct run *run, struct archive_entry *e,
			const char *target, int dirfd, const char *name)
{
	/* Stored verbatim, never followed while extracting. */
	return symlinkat(target, dirfd, name);
}

static int make_hardlink(struct run *run, struct archive_entry *e,
			 const char *target, int dirfd, const char *name)
{
	int err = rs_link(&run->rs, target, dirfd, name);

	errno = -err;
	return err ? -1 : 0;
}

static int make_node(struct run *run, struct archive_entry *e,
		     const char *target, int dirfd, const char *name)
{
	mode_t type = archive_entry_filetype(e);

	return mknodat(dirfd, name, type | entry_mode(run, archive_entry_perm(e)),
		       archive_entry_rdev(e));
}

/* Owner and times by name: the object is not ours to open. */
static struct outcome link_metadata(struct run *run, struct archive_entry *e,
				    int dirfd, const char *leaf,
				    const char *path, struct outcome o)
{
	struct timespec ts[2];
	int err;

	if (want_owner(run)) {
		err = rs_lchown(&run->rs, dirfd, leaf, path, entry_uid(run, e),
				entry_gid(run, e));
		if (err)
			return fail("cannot set owner", -err);
	}
	entry_times(e, ts);
	err = rs_lutimes(&run->rs, dirfd, leaf, path, ts);
	if (err)
		return fail("cannot set times", -err);
	return o;
}

struct outcome write_symlink(struct run *run, struct archive_entry *e,
			     const char *path)
{
	const char *target = archive_entry_symlink(e);
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (!target || !*target)
		return refuse("symlink with an empty target", EINVAL);
	o = make_at(run, e, path, target, make_symlink, &dirfd, &leaf);
	if (dirfd < 0)
		return o;
	o = link_metadata(run, e, dirfd, leaf, path, o);
	close(dirfd);
	return o;
}

/*
 * A hardlink entry that carries the data of all its names (cpio writes it
 * on the last link).  The data may only go into an inode this run created
 * for a multi-link file, checked on the opened fd, never by name.
 */
static struct outcome fill_linked(struct run *run, struct archive_entry *e,
				  int dirfd, const char *leaf)
{
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o;
	struct stat st;
	int fd = openat(dirfd, leaf, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return resolve_outcome(run, errno);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !linked_has(run, &st)) {
		close(fd);
		return refuse("hardlink data would go into a file this run did not create",
			      EPERM);
	}
	if (ftruncate(fd, 0) < 0) {
		o = fail("cannot write data", errno);
		close(fd);
		return o;
	}
	o = copy_data(run, e, fd);
	if (o.act == ACT_CREATED) {
		attrs = entry_attrs(run, e);
		entry_times(e, ts);
		o = apply_fd_metadata(run, fd, entry_mode(run, archive_entry_perm(e)),
				      (mode_t)-1, want_owner(run), entry_uid(run, e),
				      entry_gid(run, e), attrs, ts);
		attr_free(attrs);
	}
	close(fd);
	return o;
}

struct outcome write_hardlink(struct run *run, struct archive_entry *e,
			      const char *path, const char *target)
{
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (strcmp(path, target) == 0 && archive_entry_size(e) <= 0)
		return ok(ACT_SKIPPED);
	if (run->opt.flags & OPT_DURABLE) {
		if (archive_entry_size(e) > 0)
			return fail("a hardlink entry that carries data (cpio) is not supported with --durable",
				    ENOTSUP);
		if (!queue_pending(run, path, NULL, archive_entry_pathname(e), target))
			return (struct outcome){ ACT_FAILED, "out of memory", ENOMEM, true };
		return ok(ACT_CREATED);
	}
	if (strcmp(path, target) == 0) {
		o = ok(ACT_CREATED);
		dirfd = rs_open_parent(&run->rs, path, false, 0, &leaf);
		if (dirfd < 0)
			return resolve_outcome(run, -dirfd);
	} else {
		o = make_at(run, e, path, target, make_hardlink, &dirfd, &leaf);
	}
	if (dirfd >= 0 && archive_entry_size(e) > 0)
		o = fill_linked(run, e, dirfd, leaf);
	if (dirfd >= 0)
		close(dirfd);
	if (o.err == EPERM) {
		/* linkat's answer for a directory target: policy, not a fault. */
		o.act = ACT_REFUSED;
		o.reason = "hardlink target is a directory or not linkable";
	}
	else if (o.err == ENOENT)
		o.reason = "hardlink target does not exist";
	return o;
}

struct outcome write_special(struct run *run, struct archive_entry *e,
			     const char *path)
{
	mode_t type = archive_entry_filetype(e);
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (type == AE_IFSOCK)
		return refuse("sockets are not extracted", EINVAL);
	if (type == AE_IFCHR || type == AE_IFBLK) {
		if (!(run->opt.flags & OPT_DEVICES))
			return refuse("device node (use --devices to allow)", EPERM);
		if (!run->is_root)
			return refuse("device nodes need root", EPERM);
	}
	o = make_at(run, e, path, NULL, make_node, &dirfd, &leaf);
	if (dirfd < 0)
		return o;
	o = link_metadata(run, e, dirfd, leaf, path, o);
	close(dirfd);
	return o;
}

/* ---- the end of the run ----------------------------------------------- */

void outcome_report(struct run *run, const char *name, const char *type,
		    struct outcome o)
{
	report_entry(&run->rep, name, type, o.act, o.reason, o.err);
	if (o.act == ACT_REFUSED)
		run->refused++;
	else if (o.act == ACT_FAILED)
		run->failed++;
}

/* --durable, step 2: every renamed file now has its data on disk. */
static bool finish_pending(struct run *run)
{
	char *cur_dir = NULL;
	int dirfd = -1;
	bool fatal = false;

	for (size_t i = 0; i < run->n_pend; i++) {
		struct pending *p = &run->pend[i];
		struct outcome o;

		if (p->link_target || fatal)
			continue;
		if (!cur_dir || strcmp(cur_dir, p->dir) != 0) {
			if (dirfd >= 0)
				close(dirfd);
			cur_dir = p->dir;
			dirfd = rs_open_dir(&run->rs, p->dir, O_PATH, false, 0);
		}
		if (dirfd < 0) {
			o = resolve_outcome(run, -dirfd);
		} else {
			o = place(run, dirfd, p->tmp, p->leaf);
			p->tmp[0] = '\0';
		}
		if (o.act == ACT_REFUSED || o.act == ACT_FAILED)
			outcome_report(run, p->name, "file", o);
		fatal = o.fatal;
	}
	if (dirfd >= 0)
		close(dirfd);
	for (size_t i = 0; i < run->n_pend && !fatal; i++) {
		struct pending *p = &run->pend[i];
		char path[SE_PATH_MAX];
		const char *leaf;
		struct outcome o;

		if (!p->link_target)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", p->dir, *p->dir ? "/" : "",
			 p->leaf);
		o = make_at(run, NULL, path, p->link_target, make_hardlink,
			    &dirfd, &leaf);
		if (dirfd >= 0)
			close(dirfd);
		if (o.act == ACT_REFUSED || o.act == ACT_FAILED)
			outcome_report(run, p->name, "hardlink", o);
		fatal = o.fatal;
	}
	return !fatal;
}

static int dir_cmp(const void *a, const void *b)
{
	const struct deferred_dir *x = a, *y = b;
	int c = strcmp(y->path, x->path);

	/* Children before parents; the same directory twice: archive order,
	 * so the last entry's metadata wins. */
	if (c)
		return c;
	return x->seq < y->seq ? -1 : 1;
}

/* Directory metadata after the contents, each directory found again under
 * the same scope (a directory swapped for a symlink is not chmod'ed). */
static void finish_dirs(struct run *run)
{
	if (run->n_dirs > 1)
		qsort(run->dirs, run->n_dirs, sizeof(*run->dirs), dir_cmp);
	for (size_t i = 0; i < run->n_dirs; i++) {
		struct deferred_dir *d = &run->dirs[i];
		struct outcome o = ok(ACT_CREATED);
		int fd = rs_open_dir(&run->rs, d->path, O_RDONLY, false, 0);

		if (fd < 0)
			o = resolve_outcome(run, -fd);
		else
			o = apply_fd_metadata(run, fd, d->mode, (mode_t)-1,
					      d->set_owner, d->uid, d->gid,
					      d->xattrs, d->times);
		if (fd >= 0)
			close(fd);
		if (o.act == ACT_REFUSED || o.act == ACT_FAILED)
			outcome_report(run, d->path, "directory", o);
	}
}

/* syncfs(2) wants a real descriptor of the filesystem, not an O_PATH one. */
static bool sync_dest(struct run *run)
{
	int fd = openat(run->rs.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool good = fd >= 0 && syncfs(fd) == 0;

	if (!good)
		warnx_msg("syncfs on the destination failed: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return good;
}

bool write_finish(struct run *run)
{
	bool durable = run->opt.flags & OPT_DURABLE;
	bool good = true;

	if (durable && !sync_dest(run))
		return false;
	if (durable)
		good = finish_pending(run);
	if (good)
		finish_dirs(run);
	if (durable && good && !sync_dest(run))
		return false;
	return good;
}

void write_cleanup(struct run *run)
{
	if (run->tmp.dirfd >= 0 && run->tmp.name[0])
		unlinkat(run->tmp.dirfd, run->tmp.name, 0);
	live_tmp_clear(run);
	for (size_t i = 0; i < run->n_pend; i++) {
		struct pending *p = &run->pend[i];
		int fd;

		if (!p->tmp[0])
			continue;
		fd = rs_open_dir(&run->rs, p->dir, O_PATH, false, 0);
		if (fd >= 0) {
			unlinkat(fd, p->tmp, 0);
			close(fd);
		}
		p->tmp[0] = '\0';
	}
}

void write_free(struct run *run)
{
	for (size_t i = 0; i < run->n_dirs; i++) {
		attr_free(run->dirs[i].xattrs);
		free(run->dirs[i].path);
	}
	free(run->dirs);
	run->dirs = NULL;
	run->n_dirs = 0;
	for (size_t i = 0; i < run->n_pend; i++) {
		free(run->pend[i].dir);
		free(run->pend[i].leaf);
		free(run->pend[i].name);
		free(run->pend[i].link_target);
	}
	free(run->pend);
	run->pend = NULL;
	run->n_pend = 0;
	free(run->linked);
	run->linked = NULL;
	run->n_linked = 0;
}
