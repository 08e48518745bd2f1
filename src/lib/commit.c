/*
 * commit.c - the name policy: the one place that decides what happens at
 * an entry's name.
 */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "compat.h"

/* An entry whose name exists, under SE_OPT_KEEP_OLD (refused: tar -k) or
 * SE_OPT_SKIP_OLD (skipped quietly: tar --skip-old-files). */
static struct outcome kept_old(const struct commit *c)
{
	if (c->opts & SE_OPT_SKIP_OLD)
		return (struct outcome){ SE_SKIPPED, "exists (--skip-old-files)", 0, false };
	return refuse("exists and --keep-old-files is set", EEXIST);
}

static bool keep_old(const struct commit *c)
{
	return c->opts & SE_OPT_KEEP_OLD;
}

/* Files and hardlinks wait for the first syncfs under --durable;
 * symlinks and special files are made at once, as a later entry may
 * resolve through a symlink (--in-root). */
static bool waits_for_sync(const struct commit *c, enum plan_kind kind)
{
	return (c->opts & SE_OPT_DURABLE) && (kind == PK_FILE || kind == PK_HARDLINK);
}

bool commit_keeps_newer(const struct commit *c, int dirfd, const char *leaf,
			const struct plan *p, struct outcome *o)
{
	struct stat st;

	if (!(c->opts & SE_OPT_KEEP_NEWER) || !p->mtime_set)
		return false;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
		return false;
	if (st.st_mtim.tv_sec < p->mtime.tv_sec ||
	    (st.st_mtim.tv_sec == p->mtime.tv_sec && st.st_mtim.tv_nsec < p->mtime.tv_nsec))
		return false;
	*o = (struct outcome){ SE_SKIPPED,
		"existing file is newer or the same age (--keep-newer-files)", 0, false };
	return true;
}

bool commit_blocked(const struct commit *c, const char *path, struct outcome *o)
{
	if (!c->dur || !durable_blocks(c->dur, path))
		return false;
	*o = resolve_outcome(c->rs->in_root, ENOTDIR);
	return true;
}

/*
 * Before an entry creates LEAF in DIRFD under --durable: settle with a
 * pending object of that name.  0: nothing pending; 1: it was replaced
 * (the entry counts as replacing); -1: refused, *O set.
 */
static int settle(const struct commit *c, int dirfd, const char *leaf,
		  struct outcome *o)
{
	struct pending *p;

	if (!(c->opts & SE_OPT_DURABLE) || !c->dur)
		return 0;
	p = durable_at(c->dur, dirfd, leaf);
	if (!p)
		return 0;
	if (keep_old(c)) {
		*o = kept_old(c);
		return -1;
	}
	durable_cancel(c->dur, p);
	return 1;
}

/* Before the commit point of a --durable run with a journal: nothing of
 * the old tree is removed, only moved aside where a roll back finds it. */
static bool journaling(const struct commit *c)
{
	return c->jn && journal_active(c->jn);
}

/* Move what stands at LEAF aside (journal.h): 0 or -errno. */
static int set_aside(const struct commit *c, int dirfd, const char *leaf)
{
	char a[32];

	tmp_name(c->tmp, a);
	return journal_aside(c->jn, dirfd, leaf, a);
}

int commit_aside(const struct commit *c, int dirfd, const char *const *leaves, size_t n)
{
	char (*a)[32] = malloc(n * sizeof(*a));
	const char **as = malloc(n * sizeof(*as));
	int r = -ENOMEM;

	if (a && as) {
		for (size_t i = 0; i < n; i++) {
			tmp_name(c->tmp, a[i]);
			as[i] = a[i];
		}
		r = journal_aside_many(c->jn, dirfd, leaves, as, n);
	}
	free(a);
	free(as);
	return r;
}

/* Is directory LEAF in DIRFD empty?  1, 0, or -errno. */
static int dir_empty(int dirfd, const char *leaf)
{
	int fd = openat(dirfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int r = 1;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			r = 0;
			break;
		}
	closedir(d);
	return r;
}

/*
 * An empty directory stands where a non-directory goes: GNU tar and bsdtar
 * replace it, so do we (one component in a scoped parent, never followed).
 * A non-empty one is refused and keeps its contents.
 */
static int remove_empty_dir(const struct commit *c, int dirfd, const char *leaf,
			    const char *path)
{
	struct stat st;
	bool known = fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;

	if (journaling(c)) {
		int r = dir_empty(dirfd, leaf);

		if (r <= 0)
			return r == 0 ? -ENOTEMPTY : r;
		r = set_aside(c, dirfd, leaf);
		if (r)
			return r;
	} else if (unlinkat(dirfd, leaf, AT_REMOVEDIR) < 0) {
		return -errno;
	}
	dirmeta_forget(c->dm, path);
	/* The same directory reached by another name (a symlink followed
	 * by --in-root or --keep-directory-symlink). */
	if (known)
		dirmeta_forget_dir(c->dm, &st);
	return 0;
}

/* A directory the run is about to make at LEAF: with a journal, recorded
 * first when nothing stands there (a roll back removes it). */
static int make_dir_j(const struct commit *c, int dirfd, const char *leaf)
{
	struct stat st;
	int r;

	if (!journaling(c))
		return make_dir(dirfd, leaf);
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	r = journal_mkdir(c->jn, dirfd, leaf, true);
	if (r)
		return r;
	r = make_dir(dirfd, leaf);
	if (r == -EEXIST) {
		/* made by someone else meanwhile: not the run's to remove */
		int k = journal_mkdir(c->jn, dirfd, leaf, false);

		if (k)
			return k;
	}
	return r;
}

static struct outcome dir_in_way(int err)
{
	if (err == ENOTEMPTY || err == EEXIST)
		return refuse("a non-empty directory is in the way", ENOTEMPTY);
	return fail("cannot remove the empty directory in the way", err);
}

/*
 * Rename TMP over LEAF in DIRFD.  A file, symlink or hardlink in the way
 * is replaced (never written through); an empty directory too; a
 * non-empty one is not.  On file systems without RENAME_NOREPLACE (NFS,
 * CephFS, 9p answer EINVAL), -k is kept with link-then-unlink, which fails
 * on an existing name the way NOREPLACE does.  TMP is gone afterwards.
 */
static struct outcome place(const struct commit *c, int dirfd, const char *tmp,
			    const char *leaf, const char *path)
{
	bool in_root = c->rs->in_root, existed = false;
	struct stat st;
	int err;

	for (int tries = 0;; tries++) {
		if (renameat2(dirfd, tmp, dirfd, leaf, RENAME_NOREPLACE) == 0)
			return ok(existed ? SE_REPLACED : SE_CREATED);
		err = errno;
		if (err == EINVAL || err == ENOSYS)
			break;
		if (err != EEXIST || tries > 0) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(in_root, err);
		}
		if (keep_old(c)) {
			unlinkat(dirfd, tmp, 0);
			return kept_old(c);
		}
		existed = true;
		if (journaling(c)) {
			/* The old object moves aside, the new one takes
			 * its name with NOREPLACE once more. */
			if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISDIR(st.st_mode))
				err = -remove_empty_dir(c, dirfd, leaf, path);
			else
				err = -set_aside(c, dirfd, leaf);
			if (err) {
				unlinkat(dirfd, tmp, 0);
				return err == ENOTEMPTY ? dir_in_way(err) :
					fail("cannot move the old object aside (journal)", err);
			}
			continue;
		}
		if (renameat(dirfd, tmp, dirfd, leaf) == 0) {
			/* rename(2) does nothing when both names are one
			 * inode (a hardlink onto itself): the temporary
			 * would stay behind. */
			unlinkat(dirfd, tmp, 0);
			return ok(SE_REPLACED);
		}
		err = errno;
		if (err != EISDIR && err != ENOTEMPTY && err != EEXIST) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(in_root, err);
		}
		err = remove_empty_dir(c, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
		/* and once more with NOREPLACE: the name is free now */
	}

	/* No RENAME_NOREPLACE here. */
	existed = fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		if (keep_old(c)) {
			unlinkat(dirfd, tmp, 0);
			return kept_old(c);
		}
		err = remove_empty_dir(c, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
	}
	if (keep_old(c)) {
		if (linkat(dirfd, tmp, dirfd, leaf, 0) < 0) {
			err = errno;
			unlinkat(dirfd, tmp, 0);
			if (err == EEXIST)
				return kept_old(c);
			return fail("cannot create without replacing (no RENAME_NOREPLACE or hard links here)",
				    err);
		}
		unlinkat(dirfd, tmp, 0);
		return ok(SE_CREATED);
	}
	if (renameat(dirfd, tmp, dirfd, leaf) < 0) {
		err = errno;
		unlinkat(dirfd, tmp, 0);
		return resolve_outcome(in_root, err);
	}
	unlinkat(dirfd, tmp, 0);
	return ok(existed ? SE_REPLACED : SE_CREATED);
}

/*
 * --durable: queue TMP for LEAF.  The outcome is decided now, as an
 * in-order run would decide it: -k refuses an existing name, an empty
 * directory in the way is removed, a non-empty one refused.
 */
static struct outcome pend(const struct commit *c, int dirfd, const char *tmp,
			   const char *leaf, const char *path, const char *name,
			   const char *type)
{
	struct outcome o;
	struct stat st;
	bool existed;
	int r = settle(c, dirfd, leaf, &o);

	if (r < 0)
		goto drop;
	existed = r > 0;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		existed = true;
		if (keep_old(c)) {
			o = kept_old(c);
			goto drop;
		}
		if (S_ISDIR(st.st_mode)) {
			r = remove_empty_dir(c, dirfd, leaf, path);
			if (r) {
				o = dir_in_way(-r);
				goto drop;
			}
		}
	}
	r = durable_add(c->dur, dirfd, tmp, leaf, path, name, type);
	if (r < 0) {
		o = fatal("cannot keep the directory open for --durable", -r);
		goto drop;
	}
	return ok(existed ? SE_REPLACED : SE_CREATED);
drop:
	unlinkat(dirfd, tmp, 0);
	return o;
}

struct outcome commit_object(const struct commit *c, int dirfd, const char *tmp,
			     const char *leaf, const char *path, enum plan_kind kind,
			     const char *name, const char *type)
{
	if (waits_for_sync(c, kind))
		return pend(c, dirfd, tmp, leaf, path, name, type);
	return place(c, dirfd, tmp, leaf, path);
}

bool commit_by_path_ok(const struct commit *c)
{
	return rs_by_path(c->rs) && !journaling(c) &&
	       !(c->opts & (SE_OPT_DURABLE | SE_OPT_KEEP_NEWER));
}

struct outcome commit_by_path(const struct commit *c, const char *tmp,
			      const char *path)
{
	struct outcome o;
	const char *leaf;
	int r, dirfd;

	r = rs_rename_sibling(c->rs, path, tmp, RENAME_NOREPLACE);
	if (r == 0)
		return ok(SE_CREATED);
	/* The rare ways, as the other backends take them: in the parent,
	 * resolved now under the same scope (never cached: CVE-2025-47290). */
	dirfd = rs_open_parent(c->rs, path, false, 0, &leaf);
	if (dirfd < 0) {
		rs_unlink_sibling(c->rs, path, tmp);
		return resolve_outcome(c->rs->in_root, -dirfd);
	}
	o = place(c, dirfd, tmp, leaf, path);
	close(dirfd);
	return o;
}

/* Before a symlink or special file is made at LEAF directly: with a
 * journal, -EEXIST when something stands there (it is replaced through a
 * temporary, the old one set aside), else "made" on record. */
static int made_first(const struct commit *c, int dirfd, const char *leaf)
{
	struct stat st;

	if (!journaling(c))
		return 0;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	return journal_made(c->jn, dirfd, leaf);
}

struct outcome commit_make(const struct commit *c, int dirfd, const char *leaf,
			   const struct plan *p, make_fn *make, const struct make_ctx *mc,
			   char at[SE_PATH_MAX])
{
	enum se_action act = SE_CREATED;
	struct outcome o;
	char tmp[32];
	int r;

	snprintf(at, SE_PATH_MAX, "%s", leaf);
	if (!waits_for_sync(c, p->kind)) {
		switch (settle(c, dirfd, leaf, &o)) {
		case -1:
			return o;
		case 1:
			act = SE_REPLACED;
			break;
		}
		r = made_first(c, dirfd, leaf);
		if (r == 0) {
			r = make(mc, dirfd, leaf);
			if (r == -EEXIST && journaling(c)) {
				/* made by someone else meanwhile */
				int k = journal_mkdir(c->jn, dirfd, leaf, false);

				if (k)
					r = k;
			}
		}
		if (r == 0)
			return ok(act);
		if (r != -EEXIST)
			return resolve_outcome(c->rs->in_root, -r);
		if (keep_old(c))
			return kept_old(c);
		act = SE_REPLACED;
	}
	tmp_name(c->tmp, tmp);
	r = make(mc, dirfd, tmp);
	if (r < 0)
		return resolve_outcome(c->rs->in_root, -r);
	o = commit_object(c, dirfd, tmp, leaf, p->path, p->kind, p->name, p->type);
	if (!made_ok(o))
		return o;
	if (waits_for_sync(c, p->kind))
		/* data and metadata go to the object under its temporary name */
		snprintf(at, SE_PATH_MAX, "%s", tmp);
	else if (act == SE_REPLACED)
		o.act = SE_REPLACED;
	return o;
}

struct outcome commit_dir(const struct commit *c, int dirfd, const char *leaf,
			  const struct plan *p, struct stat *st, bool *defer)
{
	struct resolver *rs = c->rs;
	enum se_action act = SE_CREATED;
	bool settled = false;
	struct outcome o;
	int r, fd;

	*defer = false;
	switch (settle(c, dirfd, leaf, &o)) {
	case -1:
		return o;
	case 1:
		act = SE_REPLACED;
		settled = true;
		break;
	}
	r = make_dir_j(c, dirfd, leaf);
	if (r == 0)
		goto made;
	if (r != -EEXIST)
		return resolve_outcome(rs->in_root, -r);
	r = rs_stat(rs, dirfd, leaf, p->path, st);
	if (r)
		return resolve_outcome(rs->in_root, -r);
	if (S_ISDIR(st->st_mode) && (c->opts & SE_OPT_KEEP_DIR_METADATA))
		return ok(SE_CREATED);	/* tar --no-overwrite-dir: as it is */
	if (S_ISDIR(st->st_mode))
		goto made;
	/* A pending --durable object of this name was to replace what stands
	 * here; the directory replaces both, as in an in-order run (symlink
	 * s, file s, directory s/: the symlink is gone, never followed). */
	if (!settled && S_ISLNK(st->st_mode) && (rs->in_root || rs->keep_dir_links)) {
		/* usrmerge: "lib -> usr/lib" stays, and the directory's
		 * metadata is not applied through the link. */
		fd = rs_open_dir(rs, p->path, O_PATH, false, 0);
		if (fd >= 0) {
			close(fd);
			return (struct outcome){ SE_SKIPPED,
				"existing symlink to a directory kept", 0, false };
		}
	}
	if (!settled && S_ISLNK(st->st_mode) && !(c->opts & SE_OPT_UNLINK))
		/* A link then a directory entry of the same name: the
		 * directory's chmod/chown would go through the link. */
		return refuse("a symlink is in the way of a directory (use -U to remove it)",
			      ELOOP);
	if (!settled && keep_old(c))
		return kept_old(c);
	r = journaling(c) ? set_aside(c, dirfd, leaf) : rs_unlink(rs, dirfd, leaf, p->path, 0);
	if (!r)
		r = make_dir_j(c, dirfd, leaf);
	if (r)
		return resolve_outcome(rs->in_root, -r);
	act = SE_REPLACED;
made:
	/* Remember which directory this is, so that the metadata at the end
	 * goes to it and to no other that took its name meanwhile. */
	fd = rs_open_leaf(rs, dirfd, leaf, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return resolve_outcome(rs->in_root, -fd);
	r = fstat(fd, st) < 0 ? errno : 0;
	close(fd);
	if (r)
		return resolve_outcome(rs->in_root, r);
	*defer = true;
	return ok(act);
}

struct outcome commit_pending(const struct commit *c, size_t i)
{
	struct pending *p = &c->dur->pend[i];
	struct outcome o;
	int dirfd;

	if (p->cancelled || !p->tmp[0])
		return ok(SE_SKIPPED);
	/* The outcome was reported with the entry; a later entry of the
	 * name has cancelled this one, so -k holds here too. */
	dirfd = durable_dirfd(c->dur, p);
	if (dirfd < 0) {
		/* Its directory was closed to save descriptors, and another
		 * process put another directory at its path: the object is
		 * not renamed into a directory the run did not make it in. */
		p->tmp[0] = '\0';
		return dirfd == -ESTALE ?
		       fail("its directory was replaced during extraction", ESTALE) :
		       resolve_outcome(c->rs->in_root, -dirfd);
	}
	o = place(c, dirfd, p->tmp, p->leaf, p->path);
	p->tmp[0] = '\0';
	return o;
}
