/*
 * write.c - creating each entry inside the destination.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
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

/* ---- owners and modes ------------------------------------------------- */

/*
 * The owner id an entry names: by name unless --numeric-owner, else by
 * number.  False when the number cannot be an owner: chown(2) takes 32
 * bits and reads (uid_t)-1 as "leave it", so a pax uid=4294967296 would
 * become root and 4294967295 would silently keep the extracting user.
 */
static bool entry_uid(struct run *run, struct archive_entry *e, uid_t *out)
{
	static char cached[64];
	static uid_t cached_uid;
	const char *name = archive_entry_uname(e);
	la_int64_t id = archive_entry_uid(e);
	struct passwd *pw;

	if (!(run->opt.flags & OPT_NUMERIC_OWNER) && name && *name) {
		if (strcmp(name, cached) == 0) {
			*out = cached_uid;
			return true;
		}
		pw = getpwnam(name);
		if (pw) {
			snprintf(cached, sizeof(cached), "%s", name);
			cached_uid = pw->pw_uid;
			*out = pw->pw_uid;
			return true;
		}
	}
	if (id < 0 || id >= (la_int64_t)UINT32_MAX)
		return false;
	*out = (uid_t)id;
	return true;
}

static bool entry_gid(struct run *run, struct archive_entry *e, gid_t *out)
{
	static char cached[64];
	static gid_t cached_gid;
	const char *name = archive_entry_gname(e);
	la_int64_t id = archive_entry_gid(e);
	struct group *gr;

	if (!(run->opt.flags & OPT_NUMERIC_OWNER) && name && *name) {
		if (strcmp(name, cached) == 0) {
			*out = cached_gid;
			return true;
		}
		gr = getgrnam(name);
		if (gr) {
			snprintf(cached, sizeof(cached), "%s", name);
			cached_gid = gr->gr_gid;
			*out = gr->gr_gid;
			return true;
		}
	}
	if (id < 0 || id >= (la_int64_t)UINT32_MAX)
		return false;
	*out = (gid_t)id;
	return true;
}

/*
 * Owner and mode for entry E.  As GNU tar: without -p only the rwx bits
 * survive, less the umask.  Set-id bits survive only together with the
 * owner they were meant for: a 6755 file of uid 1000 extracted by root
 * with --no-same-owner, or with an owner id out of range, would otherwise
 * become set-uid root.
 */
static struct owner_plan plan_owner(struct run *run, struct archive_entry *e)
{
	unsigned int f = run->opt.flags;
	struct owner_plan p = { .mode = archive_entry_perm(e) & 07777 };
	mode_t asked = p.mode;

	if (!(f & OPT_SAME_PERMS))
		p.mode &= 0777 & ~run->umask;
	p.set_owner = run->is_root && (f & OPT_SAME_OWNER);
	if (p.set_owner && (!entry_uid(run, e, &p.uid) || !entry_gid(run, e, &p.gid))) {
		p.set_owner = false;
		p.problem = (asked & (S_ISUID | S_ISGID)) ?
			    "owner id out of range: owner and set-id bits not restored" :
			    "owner id out of range: owner not restored";
	}
	if (!(run->is_root && (f & OPT_SAME_PERMS) && p.set_owner))
		p.mode &= ~(mode_t)(S_ISUID | S_ISGID);
	return p;
}

/* May file capabilities be restored?  They are set-uid by another name. */
static bool caps_allowed(struct run *run, const struct owner_plan *p)
{
	return run->is_root && (run->opt.flags & OPT_SAME_PERMS) && p->set_owner;
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

/* ---- extended attributes and ACLs ------------------------------------- */

/*
 * Kept as a list of (name, value) so that a directory's can wait for its
 * deferred metadata.
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

static bool xattr_listed(const char *name, char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return true;
	return false;
}

/*
 * Which archive xattrs are restored.  As GNU tar: only "user.*" unless
 * --xattrs-include names others, minus --xattrs-exclude.  trusted.* and
 * security.* change what the kernel or a security module lets the file do;
 * security.capability is a set-uid bit by another name (a cap_setuid file
 * from an archive is a root shell), so it also needs the set-id rule.
 */
static bool xattr_wanted(struct run *run, const char *name,
			 const struct owner_plan *own)
{
	const struct options *o = &run->opt;
	bool in = o->n_xattr_includes ?
		  xattr_listed(name, o->xattr_includes, o->n_xattr_includes) :
		  strncmp(name, "user.", 5) == 0;

	if (!in || xattr_listed(name, o->xattr_excludes, o->n_xattr_excludes))
		return false;
	if (strcmp(name, "security.capability") == 0)
		return caps_allowed(run, own);
	return true;
}

static struct attr_blob *entry_attrs(struct run *run, struct archive_entry *e,
				     const struct owner_plan *own)
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
			if (xattr_wanted(run, name, own))
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

/* ---- applying metadata through the object's own fd --------------------- */

/* The first metadata problem of an object: it stays, the entry says so. */
static void incomplete(struct outcome *o, const char *reason, int err)
{
	if (o->act == ACT_INCOMPLETE)
		return;
	o->act = ACT_INCOMPLETE;
	o->reason = reason;
	o->err = err;
}

/*
 * Owner, mode, attributes and times on FD, an fd of the object this run
 * made (OPATH: an O_PATH fd of a symlink or special file, which takes
 * only owner and times).  Nothing here uses a name: a name can be renamed
 * or exchanged under us between two calls (the metadata escape through a
 * planted hardlink).  Order matters: chown clears set-id bits, so mode
 * comes after it; ACLs after the mode they refine; times last.  A failure
 * keeps the object (as GNU tar) and makes the outcome ACT_INCOMPLETE.
 */
static struct outcome apply_fd_metadata(struct run *run, int fd, bool opath,
					const struct owner_plan *own,
					mode_t created_mode,
					const struct attr_blob *attrs,
					const struct timespec ts[2])
{
	struct outcome o = ok(ACT_CREATED);
	mode_t mode = own->mode;
	int r;

	if (own->problem)
		incomplete(&o, own->problem, ERANGE);
	if (own->set_owner) {
		r = opath ? fchownat(fd, "", own->uid, own->gid,
				     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) :
			    fchown(fd, own->uid, own->gid);
		if (r < 0) {
			incomplete(&o, (mode & (S_ISUID | S_ISGID)) ?
				   "cannot set owner: set-id bits not restored" :
				   "cannot set owner", errno);
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
		}
	}
	if (!opath && mode != created_mode && fchmod(fd, mode) < 0)
		incomplete(&o, "cannot set mode", errno);
	for (const struct attr_blob *a = attrs; a && !opath; a = a->next) {
		char esc[256];

		if (fsetxattr(fd, a->name, a->value, a->size, 0) == 0)
			continue;
		if (o.act != ACT_INCOMPLETE) {
			snprintf(run->reason, sizeof(run->reason),
				 "cannot set extended attribute or ACL '%s'",
				 report_escape(a->name, esc, sizeof(esc)));
			incomplete(&o, run->reason, errno);
		}
	}
	r = opath ? utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) :
		    futimens(fd, ts);
	if (r < 0)
		incomplete(&o, "cannot set times", errno);
	return o;
}

/* Combine placing's outcome with the metadata's: a problem is reported. */
static struct outcome merge(struct outcome placed, struct outcome meta)
{
	if (placed.act != ACT_CREATED && placed.act != ACT_REPLACED)
		return placed;
	if (meta.act == ACT_INCOMPLETE)
		return meta;
	return placed;
}

/* ---- deferred directories --------------------------------------------- */

static struct deferred_dir *dir_record(struct run *run, const char *path)
{
	size_t i = map_get(&run->dir_index, path);
	struct deferred_dir *d;

	if (i != MAP_NONE) {
		/* The same directory again: one record, the last entry wins
		 * (a million repeats of one name cost one record). */
		d = &run->dirs[i];
		attr_free(d->xattrs);
		d->xattrs = NULL;
		return d;
	}
	if (run->n_dirs == run->cap_dirs) {
		size_t cap = run->cap_dirs ? run->cap_dirs * 2 : 64;
		struct deferred_dir *nd = realloc(run->dirs, cap * sizeof(*nd));

		if (!nd)
			return NULL;
		run->dirs = nd;
		run->cap_dirs = cap;
	}
	d = &run->dirs[run->n_dirs];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	if (!d->path || !map_put(&run->dir_index, path, run->n_dirs)) {
		free(d->path);
		return NULL;
	}
	run->n_dirs++;
	return d;
}

/* A later entry replaced the directory at PATH: its metadata is moot. */
static void dir_forget(struct run *run, const char *path)
{
	size_t i;

	if (!path)
		return;
	i = map_get(&run->dir_index, path);
	if (i == MAP_NONE)
		return;
	map_del(&run->dir_index, path);
	attr_free(run->dirs[i].xattrs);
	run->dirs[i].xattrs = NULL;
	run->dirs[i].ino = 0;		/* skipped by finish_dirs */
}

static bool defer_dir(struct run *run, struct archive_entry *e,
		      const char *path, const struct stat *st)
{
	struct deferred_dir *d = dir_record(run, path);

	if (!d)
		return false;
	d->own = plan_owner(run, e);
	entry_times(e, d->times);
	d->xattrs = entry_attrs(run, e, &d->own);
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	return true;
}

/* ---- putting a finished object at its name ---------------------------- */

/*
 * An empty directory stands where a non-directory goes: GNU tar and bsdtar
 * replace it, so do we (one component in a scoped parent, never followed).
 * A non-empty one is refused and keeps its contents.
 */
static int remove_empty_dir(struct run *run, int dirfd, const char *leaf,
			    const char *path)
{
	if (unlinkat(dirfd, leaf, AT_REMOVEDIR) < 0)
		return -errno;
	dir_forget(run, path);
	return 0;
}

static struct outcome dir_in_way(int err)
{
	if (err == ENOTEMPTY || err == EEXIST)
		return refuse("a non-empty directory is in the way", ENOTEMPTY);
	return fail("cannot remove the empty directory in the way", err);
}

/*
 * Rename the temporary TMP over LEAF in DIRFD (PATH: its cleaned path, for
 * the directory records).  A file, symlink or hardlink in the way is
 * replaced (never written through); an empty directory too; a non-empty
 * one is not.  On file systems without RENAME_NOREPLACE (NFS, CephFS, 9p
 * answer EINVAL), -k is kept with link-then-unlink, which fails on an
 * existing name the way NOREPLACE does.
 */
static struct outcome place(struct run *run, int dirfd, const char *tmp,
			    const char *leaf, const char *path)
{
	bool keep = run->opt.flags & OPT_KEEP_OLD;
	bool existed = false;
	struct stat st;
	int err;

	for (int tries = 0;; tries++) {
		if (renameat2(dirfd, tmp, dirfd, leaf, RENAME_NOREPLACE) == 0)
			return ok(existed ? ACT_REPLACED : ACT_CREATED);
		err = errno;
		if (err == EINVAL || err == ENOSYS)
			break;
		if (err != EEXIST || tries > 0) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(run, err);
		}
		if (keep) {
			unlinkat(dirfd, tmp, 0);
			return refuse("exists and --keep-old-files is set", EEXIST);
		}
		existed = true;
		if (renameat(dirfd, tmp, dirfd, leaf) == 0) {
			/* rename(2) does nothing when both names are one
			 * inode (a hardlink onto itself): the temporary
			 * would stay behind. */
			unlinkat(dirfd, tmp, 0);
			return ok(ACT_REPLACED);
		}
		err = errno;
		if (err != EISDIR && err != ENOTEMPTY && err != EEXIST) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(run, err);
		}
		err = remove_empty_dir(run, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
		/* and once more with NOREPLACE: the name is free now */
	}

	/* No RENAME_NOREPLACE here. */
	existed = fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		if (keep) {
			unlinkat(dirfd, tmp, 0);
			return refuse("exists and --keep-old-files is set", EEXIST);
		}
		err = remove_empty_dir(run, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
	}
	if (keep) {
		if (linkat(dirfd, tmp, dirfd, leaf, 0) < 0) {
			err = errno;
			unlinkat(dirfd, tmp, 0);
			if (err == EEXIST)
				return refuse("exists and --keep-old-files is set", EEXIST);
			return fail("cannot create without replacing (no RENAME_NOREPLACE or hard links here)",
				    err);
		}
		unlinkat(dirfd, tmp, 0);
		return ok(ACT_CREATED);
	}
	if (renameat(dirfd, tmp, dirfd, leaf) < 0) {
		err = errno;
		unlinkat(dirfd, tmp, 0);
		return resolve_outcome(run, err);
	}
	unlinkat(dirfd, tmp, 0);
	return ok(existed ? ACT_REPLACED : ACT_CREATED);
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

/* ---- --durable: renames that wait for the first syncfs ----------------- */

/*
 * Every object of a --durable run is finished under a temporary name and
 * renamed after the first syncfs.  To give exactly the tree and report of
 * an in-order run, each later entry of the same name first settles with
 * the pending one: -k refuses, anything else replaces it (its temporary is
 * dropped, or linked from when the entry is a hardlink to it).  Pending
 * objects are found by their directory's identity and leaf, and renamed
 * in the directory fd they were made in, never looked up again by name.
 */

static void pend_key(char *key, size_t n, const struct stat *dst,
		     const char *leaf)
{
	snprintf(key, n, "%llx:%llx/%s", (unsigned long long)dst->st_dev,
		 (unsigned long long)dst->st_ino, leaf);
}

static void pend_path_key(char *key, size_t n, const char *path)
{
	snprintf(key, n, "p:%s", path);
}

/* The live pending object at LEAF of the directory DST, or NULL. */
static struct pending *pending_at(struct run *run, const struct stat *dst,
				  const char *leaf)
{
	char key[SE_PATH_MAX + 64];
	size_t i;

	pend_key(key, sizeof(key), dst, leaf);
	i = map_get(&run->pend_index, key);
	return i == MAP_NONE ? NULL : &run->pend[i];
}

static void pending_cancel(struct run *run, struct pending *p)
{
	char key[SE_PATH_MAX + 64];
	struct stat dst = { .st_dev = run->dirh[p->dir].dev,
			    .st_ino = run->dirh[p->dir].ino };

	unlinkat(run->dirh[p->dir].fd, p->tmp, 0);
	p->tmp[0] = '\0';
	p->cancelled = true;
	pend_key(key, sizeof(key), &dst, p->leaf);
	map_del(&run->pend_index, key);
	pend_path_key(key, sizeof(key), p->path);
	map_del(&run->pend_index, key);
}

/*
 * In an in-order run, a file at "a" makes "a/b" fail (ENOTDIR).  A pending
 * "a" is not there yet, so say it here, or the --durable run would make a
 * directory "a" and refuse the file instead.
 */
static bool pending_blocks(struct run *run, const char *path)
{
	char key[SE_PATH_MAX + 8];

	if (!(run->opt.flags & OPT_DURABLE) || run->n_pend == 0)
		return false;
	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		snprintf(key, sizeof(key), "p:%.*s", (int)(s - path), path);
		if (map_get(&run->pend_index, key) != MAP_NONE)
			return true;
	}
	return false;
}

/*
 * Before an entry creates LEAF in DIRFD under --durable: settle with a
 * pending object of that name.  Returns 0 (nothing pending), 1 (it was
 * replaced: the entry counts as replacing), or -1 with *O set (refused).
 */
static int pending_settle(struct run *run, int dirfd, const char *leaf,
			  struct outcome *o)
{
	struct pending *p;
	struct stat dst;

	if (!(run->opt.flags & OPT_DURABLE) || run->n_pend == 0)
		return 0;
	if (fstat(dirfd, &dst) < 0)
		return 0;
	p = pending_at(run, &dst, leaf);
	if (!p)
		return 0;
	if (run->opt.flags & OPT_KEEP_OLD) {
		*o = refuse("exists and --keep-old-files is set", EEXIST);
		return -1;
	}
	pending_cancel(run, p);
	return 1;
}

/* The handle of directory DIRFD, opened once for all its pending names. */
static size_t dir_handle(struct run *run, int dirfd, const struct stat *dst)
{
	char key[64];
	size_t i;
	int fd;

	snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)dst->st_dev,
		 (unsigned long long)dst->st_ino);
	i = map_get(&run->dirh_index, key);
	if (i != MAP_NONE)
		return i;
	if (run->n_dirh == run->cap_dirh) {
		size_t cap = run->cap_dirh ? run->cap_dirh * 2 : 64;
		struct dir_handle *n = realloc(run->dirh, cap * sizeof(*n));

		if (!n)
			return MAP_NONE;
		run->dirh = n;
		run->cap_dirh = cap;
	}
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return MAP_NONE;
	if (!map_put(&run->dirh_index, key, run->n_dirh)) {
		close(fd);
		return MAP_NONE;
	}
	run->dirh[run->n_dirh] = (struct dir_handle){ fd, dst->st_dev, dst->st_ino };
	return run->n_dirh++;
}

/*
 * Queue TMP in DIRFD to be renamed to LEAF after the first syncfs.  The
 * outcome is decided now, as an in-order run would decide it: -k refuses
 * an existing name, an empty directory in the way is removed, a non-empty
 * one refused.  On failure TMP is removed.
 */
static struct outcome queue_pending(struct run *run, int dirfd, const char *tmp,
				    const char *leaf, const char *path,
				    const char *name, const char *type)
{
	char key[SE_PATH_MAX + 64];
	struct pending *p;
	struct outcome o;
	struct stat dst, st;
	bool existed = false;
	size_t dir;
	int err, settled;

	settled = pending_settle(run, dirfd, leaf, &o);
	if (settled < 0)
		goto drop;
	existed = settled > 0;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		existed = true;
		if (run->opt.flags & OPT_KEEP_OLD) {
			o = refuse("exists and --keep-old-files is set", EEXIST);
			goto drop;
		}
		if (S_ISDIR(st.st_mode)) {
			err = remove_empty_dir(run, dirfd, leaf, path);
			if (err) {
				o = dir_in_way(-err);
				goto drop;
			}
		}
	}
	if (fstat(dirfd, &dst) < 0) {
		o = resolve_outcome(run, errno);
		goto drop;
	}
	dir = dir_handle(run, dirfd, &dst);
	if (dir == MAP_NONE) {
		o = (struct outcome){ ACT_FAILED,
			"cannot keep the directory open for --durable", errno ? errno : ENOMEM,
			true };
		goto drop;
	}
	if (run->n_pend == run->cap_pend) {
		size_t cap = run->cap_pend ? run->cap_pend * 2 : 256;
		struct pending *np = realloc(run->pend, cap * sizeof(*np));

		if (!np)
			goto oom;
		run->pend = np;
		run->cap_pend = cap;
	}
	p = &run->pend[run->n_pend];
	memset(p, 0, sizeof(*p));
	p->dir = dir;
	p->type = type;
	p->leaf = strdup(leaf);
	p->path = strdup(path);
	p->name = strdup(name);
	snprintf(p->tmp, sizeof(p->tmp), "%s", tmp);
	if (!p->leaf || !p->path || !p->name) {
		free(p->leaf);
		free(p->path);
		free(p->name);
		goto oom;
	}
	pend_key(key, sizeof(key), &dst, leaf);
	if (!map_put(&run->pend_index, key, run->n_pend))
		goto oom;
	pend_path_key(key, sizeof(key), path);
	if (!map_put(&run->pend_index, key, run->n_pend))
		goto oom;
	run->n_pend++;
	return ok(existed ? ACT_REPLACED : ACT_CREATED);
oom:
	o = (struct outcome){ ACT_FAILED, "out of memory", ENOMEM, true };
drop:
	unlinkat(dirfd, tmp, 0);
	return o;
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

/*
 * Copy the entry's data into FD; holes in sparse entries stay holes.  A
 * warning from libarchive while reading data (a zip or 7z CRC mismatch, a
 * member shorter than its size field) fails the entry: the data is wrong,
 * and the caller drops the temporary instead of placing it.
 */
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
		if (r == ARCHIVE_WARN) {
			snprintf(run->reason, sizeof(run->reason), "data damaged: %s",
				 archive_error_string(run->ar) ?
				 archive_error_string(run->ar) : "libarchive warned");
			return fail(run->reason, 0);
		}
		if (r < ARCHIVE_WARN) {
			struct outcome o;

			snprintf(run->reason, sizeof(run->reason), "%s",
				 archive_error_string(run->ar) ?
				 archive_error_string(run->ar) :
				 "archive data unreadable");
			o = fail(run->reason, 0);
			o.fatal = true;
			return o;
		}
		while (size > 0) {
			ssize_t n = pwrite(fd, buf, size, offset);

			if (n < 0) {
				struct outcome o;

				if (errno == EINTR && !se_interrupted)
					continue;
				o = fail("cannot write data", errno);
				o.fatal = dest_unusable(errno) || errno == EINTR;
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

/* Create a new temporary file in DIRFD: O_EXCL|O_NOFOLLOW, so a name
 * planted under us is never opened. */
static int create_tmp(int dirfd, char tmp[32], mode_t mode)
{
	int fd;

	for (int tries = 0;; tries++) {
		tmp_name(tmp);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode & 0777);
		if (fd >= 0 || errno != EEXIST || tries > 8)
			return fd < 0 ? -errno : fd;
	}
}

struct outcome write_regular(struct run *run, struct archive_entry *e,
			     const char *path)
{
	struct owner_plan own = plan_owner(run, e);
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o, meta;
	const char *leaf;
	char tmp[32];
	int dirfd, fd;

	if (pending_blocks(run, path))
		return resolve_outcome(run, ENOTDIR);
	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);

	fd = create_tmp(dirfd, tmp, own.mode);
	if (fd < 0) {
		o = resolve_outcome(run, -fd);
		close(dirfd);
		return o;
	}
	live_tmp_set(run, dirfd, tmp);
	if (archive_entry_nlink(e) > 1)
		linked_add(run, fd);

	o = copy_data(run, e, fd);
	meta = ok(ACT_CREATED);
	if (o.act == ACT_CREATED) {
		attrs = entry_attrs(run, e, &own);
		entry_times(e, ts);
		meta = apply_fd_metadata(run, fd, false, &own, own.mode & 0777,
					 attrs, ts);
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

	if (run->opt.flags & OPT_DURABLE)
		o = queue_pending(run, dirfd, tmp, leaf, path,
				  archive_entry_pathname(e), "file");
	else
		o = place(run, dirfd, tmp, leaf, path);
	live_tmp_clear(run);
	close(dirfd);
	return merge(o, meta);
}

/* ---- directories ------------------------------------------------------ */

struct outcome write_directory(struct run *run, struct archive_entry *e,
			       const char *path)
{
	enum entry_action act = ACT_CREATED;
	struct outcome o;
	struct stat st;
	const char *leaf;
	int dirfd, fd, err;

	if (path[0] == '\0') {
		/* "./": the destination's own metadata, as tar */
		if (fstat(run->rs.root_fd, &st) < 0)
			return resolve_outcome(run, errno);
		goto defer;
	}
	if (pending_blocks(run, path))
		return resolve_outcome(run, ENOTDIR);

	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);
	switch (pending_settle(run, dirfd, leaf, &o)) {
	case -1:
		close(dirfd);
		return o;
	case 1:
		act = ACT_REPLACED;
		break;
	}
	/* Owner-only until write_finish: nobody else gets in meanwhile, and a
	 * 0555 directory still receives its files. */
	if (mkdirat(dirfd, leaf, 0700) == 0)
		goto opened;
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
		goto opened;
	if (S_ISLNK(st.st_mode) && run->rs.in_root) {
		/* usrmerge: "lib -> usr/lib" stays, and the directory's
		 * metadata is not applied through the link. */
		fd = rs_open_dir(&run->rs, path, O_PATH, false, 0);
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
opened:
	/* Remember which directory this is, so that the metadata at the end
	 * goes to it and to no other that took its name meanwhile. */
	fd = rs_open_leaf(&run->rs, dirfd, leaf, O_PATH | O_DIRECTORY);
	close(dirfd);
	if (fd < 0)
		return resolve_outcome(run, -fd);
	err = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	if (err)
		return resolve_outcome(run, err);
defer:
	if (!defer_dir(run, e, path, &st))
		return (struct outcome){ ACT_FAILED, "out of memory", ENOMEM, true };
	return ok(act);
}

/* ---- links and special files ------------------------------------------ */

/*
 * Make an object with MAKE(dirfd, name) at LEAF: directly when the name is
 * free, else under a temporary name renamed over it.  Under --durable a
 * hardlink is made under a temporary name and queued, like a file (its
 * target may be pending); symlinks and special files are made at once, as
 * a later entry may resolve through a symlink (--in-root), but a pending
 * file of the same name is settled first.
 */
typedef int (*make_fn)(struct run *run, struct archive_entry *e,
		       const char *target, int dirfd, const char *name);

static struct outcome make_at(struct run *run, struct archive_entry *e,
			      const char *path, const char *target, make_fn make,
			      const char *type, int *dirfd_out,
			      const char **leaf_out)
{
	bool defer = (run->opt.flags & OPT_DURABLE) && strcmp(type, "hardlink") == 0;
	enum entry_action act = ACT_CREATED;
	char tmp[32];
	const char *leaf;
	struct outcome o;
	int dirfd, err;

	*dirfd_out = -1;
	if (pending_blocks(run, path))
		return resolve_outcome(run, ENOTDIR);
	dirfd = rs_open_parent(&run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);
	if (!defer) {
		switch (pending_settle(run, dirfd, leaf, &o)) {
		case -1:
			goto fail;
		case 1:
			act = ACT_REPLACED;
			break;
		}
		if (make(run, e, target, dirfd, leaf) == 0) {
			o = ok(act);
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
		act = ACT_REPLACED;
	}
	tmp_name(tmp);
	if (make(run, e, target, dirfd, tmp) < 0) {
		o = resolve_outcome(run, errno);
		goto fail;
	}
	if (defer) {
		o = queue_pending(run, dirfd, tmp, leaf, path,
				  archive_entry_pathname(e), type);
		if (o.act != ACT_CREATED && o.act != ACT_REPLACED)
			goto fail;
		/* data and metadata go to the object under its temporary name */
		leaf = run->pend[run->n_pend - 1].tmp;
		goto out;
	}
	o = place(run, dirfd, tmp, leaf, path);
	if (o.act != ACT_CREATED && o.act != ACT_REPLACED)
		goto fail;
	o.act = act == ACT_REPLACED ? ACT_REPLACED : o.act;
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

static int make_node(struct run *run, struct archive_entry *e,
		     const char *target, int dirfd, const char *name)
{
	mode_t type = archive_entry_filetype(e);
	struct owner_plan own = plan_owner(run, e);

	return mknodat(dirfd, name, type | (own.mode & 0777), archive_entry_rdev(e));
}

/*
 * Owner and times of the symlink or special file just made at LEAF, through
 * an O_PATH fd of it, after checking that the fd is that object: of TYPE
 * and with one link.  Anything else means the name was exchanged under us
 * (for a hardlink to a file outside DEST, say), and nothing is changed.
 */
static struct outcome object_metadata(struct run *run, struct archive_entry *e,
				      int dirfd, const char *leaf, mode_t type,
				      struct outcome o)
{
	struct owner_plan own = plan_owner(run, e);
	struct timespec ts[2];
	struct outcome meta;
	struct stat st;
	int fd = rs_open_leaf(&run->rs, dirfd, leaf, O_PATH);

	if (fd < 0)
		return fail("the new object disappeared before its metadata was set", -fd);
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != type || st.st_nlink != 1) {
		close(fd);
		return fail("the new object was replaced before its metadata was set",
			    ESTALE);
	}
	entry_times(e, ts);
	own.mode &= 0777;	/* set at creation; no set-id on these */
	meta = apply_fd_metadata(run, fd, true, &own, own.mode, NULL, ts);
	close(fd);
	return merge(o, meta);
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
	o = make_at(run, e, path, target, make_symlink, "symlink", &dirfd, &leaf);
	if (dirfd < 0)
		return o;
	o = object_metadata(run, e, dirfd, leaf, S_IFLNK, o);
	close(dirfd);
	return o;
}

/*
 * A hardlink entry that carries the data of all its names (cpio writes it
 * on the last link).  The data may only go into a regular file this run
 * created for a multi-link entry.  Its type is checked on an O_PATH fd
 * before anything is opened for writing: opening a FIFO O_WRONLY blocks
 * until a reader comes (a hang), and opening a device has effects.
 */
static struct outcome fill_linked(struct run *run, struct archive_entry *e,
				  int dirfd, const char *leaf)
{
	struct owner_plan own = plan_owner(run, e);
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o, meta;
	struct stat st, st2;
	int pfd, fd;

	pfd = rs_open_leaf(&run->rs, dirfd, leaf, O_PATH);
	if (pfd < 0)
		return resolve_outcome(run, -pfd);
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || !linked_has(run, &st)) {
		close(pfd);
		return refuse("hardlink data would go into something this run did not create as a file",
			      EPERM);
	}
	close(pfd);
	/* O_NONBLOCK: should the name become a FIFO meanwhile, fail, never
	 * wait; the inode is checked again on the fd we write to. */
	fd = openat(dirfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC);
	if (fd < 0)
		return resolve_outcome(run, errno);
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) ||
	    st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return refuse("hardlink data target changed during extraction", ESTALE);
	}
	if (ftruncate(fd, 0) < 0) {
		o = fail("cannot write data", errno);
		close(fd);
		return o;
	}
	o = copy_data(run, e, fd);
	meta = ok(ACT_CREATED);
	if (o.act == ACT_CREATED) {
		attrs = entry_attrs(run, e, &own);
		entry_times(e, ts);
		meta = apply_fd_metadata(run, fd, false, &own, (mode_t)-1, attrs, ts);
		attr_free(attrs);
	}
	close(fd);
	return merge(o, meta);
}

/*
 * Link to TARGET (a cleaned archive path) as NAME in DIRFD.  Under --durable
 * a target that is still pending is linked from its temporary, so the link
 * gets the content the target has at this point of the archive.
 */
static int make_hardlink(struct run *run, struct archive_entry *e,
			 const char *target, int dirfd, const char *name)
{
	struct pending *p = NULL;
	const char *tleaf;
	struct stat dst;
	int err, tdir;

	if ((run->opt.flags & OPT_DURABLE) && run->n_pend) {
		tdir = rs_open_parent(&run->rs, target, false, 0, &tleaf);
		if (tdir >= 0) {
			if (fstat(tdir, &dst) == 0)
				p = pending_at(run, &dst, tleaf);
			close(tdir);
		}
		if (p) {
			err = linkat(run->dirh[p->dir].fd, p->tmp, dirfd, name, 0);
			return err;
		}
	}
	err = rs_link(&run->rs, target, dirfd, name);
	errno = -err;
	return err ? -1 : 0;
}

struct outcome write_hardlink(struct run *run, struct archive_entry *e,
			      const char *path, const char *target)
{
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (strcmp(path, target) == 0 && archive_entry_size(e) <= 0)
		return ok(ACT_SKIPPED);
	if (strcmp(path, target) == 0) {
		struct pending *p = NULL;
		struct stat dst;

		o = ok(ACT_CREATED);
		dirfd = rs_open_parent(&run->rs, path, false, 0, &leaf);
		if (dirfd < 0)
			return resolve_outcome(run, -dirfd);
		if ((run->opt.flags & OPT_DURABLE) && fstat(dirfd, &dst) == 0)
			p = pending_at(run, &dst, leaf);
		if (p) {
			close(dirfd);
			dirfd = fcntl(run->dirh[p->dir].fd, F_DUPFD_CLOEXEC, 3);
			leaf = p->tmp;
			if (dirfd < 0)
				return resolve_outcome(run, errno);
		}
	} else {
		o = make_at(run, e, path, target, make_hardlink, "hardlink",
			    &dirfd, &leaf);
	}
	if (dirfd >= 0 && archive_entry_size(e) > 0) {
		struct outcome f = fill_linked(run, e, dirfd, leaf);

		o = f.act == ACT_CREATED ? o : f;
	}
	if (dirfd >= 0)
		close(dirfd);
	if (o.err == EPERM && o.act == ACT_FAILED) {
		/* linkat's answer for a directory target: policy, not a fault. */
		o.act = ACT_REFUSED;
		o.reason = "hardlink target is a directory or not linkable";
	} else if (o.err == ENOENT && o.act == ACT_FAILED) {
		o.reason = "hardlink target does not exist";
	}
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
	o = make_at(run, e, path, NULL, make_node,
		    type == AE_IFIFO ? "fifo" : type == AE_IFCHR ? "char-device" :
		    "block-device", &dirfd, &leaf);
	if (dirfd < 0)
		return o;
	o = object_metadata(run, e, dirfd, leaf, type, o);
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
	else if (o.act == ACT_FAILED || o.act == ACT_INCOMPLETE)
		run->failed++;
}

/* --durable, step 2: every pending object now has its data on disk. */
static bool finish_pending(struct run *run)
{
	bool fatal = false;

	for (size_t i = 0; i < run->n_pend && !fatal; i++) {
		struct pending *p = &run->pend[i];
		struct outcome o;

		if (p->cancelled || !p->tmp[0])
			continue;
		/* The outcome was reported with the entry; a later entry of
		 * the name has cancelled this one, so -k holds here too. */
		o = place(run, run->dirh[p->dir].fd, p->tmp, p->leaf, p->path);
		p->tmp[0] = '\0';
		if (o.act == ACT_REFUSED || o.act == ACT_FAILED)
			outcome_report(run, p->name, p->type, o);
		fatal = o.fatal;
	}
	return !fatal;
}

static int dir_cmp(const void *a, const void *b)
{
	const struct deferred_dir *x = a, *y = b;

	/* Children before parents. */
	return strcmp(y->path, x->path);
}

/*
 * Directory metadata after the contents.  Each directory is found again
 * under the same scope and then checked to be the very directory this run
 * made or found (device and inode): one swapped in under its name, by a
 * rename inside DEST, gets nothing.
 */
static void finish_dirs(struct run *run)
{
	if (run->n_dirs > 1)
		qsort(run->dirs, run->n_dirs, sizeof(*run->dirs), dir_cmp);
	for (size_t i = 0; i < run->n_dirs; i++) {
		struct deferred_dir *d = &run->dirs[i];
		struct outcome o = ok(ACT_CREATED);
		struct stat st;
		int fd;

		if (d->ino == 0)
			continue;	/* replaced by a later entry */
		fd = rs_open_dir(&run->rs, d->path, O_RDONLY, false, 0);
		if (fd < 0)
			o = resolve_outcome(run, -fd);
		else if (fstat(fd, &st) < 0 || st.st_dev != d->dev || st.st_ino != d->ino)
			o = fail("directory was replaced during extraction; its metadata is not applied",
				 ESTALE);
		else
			o = apply_fd_metadata(run, fd, false, &d->own, (mode_t)-1,
					      d->xattrs, d->times);
		if (fd >= 0)
			close(fd);
		if (o.act == ACT_REFUSED || o.act == ACT_FAILED || o.act == ACT_INCOMPLETE)
			outcome_report(run, d->path[0] ? d->path : ".", "directory", o);
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

		if (p->tmp[0])
			unlinkat(run->dirh[p->dir].fd, p->tmp, 0);
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
	map_free(&run->dir_index);
	for (size_t i = 0; i < run->n_pend; i++) {
		free(run->pend[i].leaf);
		free(run->pend[i].path);
		free(run->pend[i].name);
	}
	free(run->pend);
	run->pend = NULL;
	run->n_pend = 0;
	map_free(&run->pend_index);
	for (size_t i = 0; i < run->n_dirh; i++)
		close(run->dirh[i].fd);
	free(run->dirh);
	run->dirh = NULL;
	run->n_dirh = 0;
	map_free(&run->dirh_index);
	free(run->linked);
	run->linked = NULL;
	run->n_linked = 0;
}
