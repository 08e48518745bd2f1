/*
 * write-link.c - symlinks, hardlinks, FIFOs and device nodes.
 */
#include "config.h"

#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "names.h"
#include "write.h"


/* ---- links and special files ------------------------------------------ */

/*
 * Make an object with MAKE(dirfd, name) at LEAF: directly when the name is
 * free, else under a temporary name renamed over it.  Under --durable a
 * hardlink is made under a temporary name and queued, like a file (its
 * target may be pending); symlinks and special files are made at once, as
 * a later entry may resolve through a symlink (--in-root), but a pending
 * file of the same name is settled first.
 */
typedef int (*make_fn)(se_run *run, struct archive_entry *e,
		       const char *target, int dirfd, const char *name);

static struct outcome make_at(se_run *run, struct archive_entry *e,
			      const char *path, const char *target, make_fn make,
			      const char *type, int *dirfd_out,
			      const char **leaf_out)
{
	bool defer = (run->opts & SE_OPT_DURABLE) && strcmp(type, "hardlink") == 0;
	enum se_action act = SE_CREATED;
	char tmp[32];
	const char *leaf;
	struct outcome o;
	int dirfd, err;

	*dirfd_out = -1;
	dirfd = entry_parent(run, e, path, &leaf, &o);
	if (dirfd < 0)
		return o;
	if (!defer) {
		switch (pending_settle(run, dirfd, leaf, &o)) {
		case -1:
			goto fail;
		case 1:
			act = SE_REPLACED;
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
		if (run->opts & SE_OPT_KEEP_OLD) {
			o = kept_old(run);
			goto fail;
		}
		act = SE_REPLACED;
	}
	tmp_name(run, tmp);
	if (make(run, e, target, dirfd, tmp) < 0) {
		o = resolve_outcome(run, errno);
		goto fail;
	}
	if (defer) {
		o = queue_pending(run, dirfd, tmp, leaf, path,
				  archive_entry_pathname(e), type);
		if (o.act != SE_CREATED && o.act != SE_REPLACED)
			goto fail;
		/* data and metadata go to the object under its temporary name */
		leaf = run->pend[run->n_pend - 1].tmp;
		goto out;
	}
	o = place(run, dirfd, tmp, leaf, path);
	if (o.act != SE_CREATED && o.act != SE_REPLACED)
		goto fail;
	o.act = act == SE_REPLACED ? SE_REPLACED : o.act;
out:
	*dirfd_out = dirfd;
	*leaf_out = leaf;
	return o;
fail:
	close(dirfd);
	return o;
}


static int make_symlink(se_run *run, struct archive_entry *e,
			const char *target, int dirfd, const char *name)
{
	/* Stored verbatim, never followed while extracting. */
	return symlinkat(target, dirfd, name);
}


static int make_node(se_run *run, struct archive_entry *e,
		     const char *target, int dirfd, const char *name)
{
	mode_t type = archive_entry_filetype(e);
	struct owner_plan own = plan_owner(run, e);

	return mknodat(dirfd, name, type | (own.mode & 0777), archive_entry_rdev(e));
}


struct outcome write_symlink(se_run *run, struct archive_entry *e,
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
static struct outcome fill_linked(se_run *run, struct archive_entry *e,
				  int dirfd, const char *leaf)
{
	struct owner_plan own = plan_owner(run, e);
	struct timespec ts[2];
	struct attr_blob *attrs;
	struct outcome o, meta;
	struct stat st, st2;
	int pfd, fd;

	pfd = rs_open_leaf(run->rs, dirfd, leaf, O_PATH);
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
	meta = ok(SE_CREATED);
	if (o.act == SE_CREATED) {
		attrs = entry_attrs(run, e, &own);
		entry_times(run, e, ts);
		meta = apply_fd_metadata(run->reason, fd, false, &own, (mode_t)-1, attrs, ts);
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
static int make_hardlink(se_run *run, struct archive_entry *e,
			 const char *target, int dirfd, const char *name)
{
	struct pending *p = NULL;
	const char *tleaf;
	struct stat dst;
	int err, tdir;

	if ((run->opts & SE_OPT_DURABLE) && run->n_pend) {
		tdir = rs_open_parent(run->rs, target, false, 0, &tleaf);
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
	err = rs_link(run->rs, target, dirfd, name);
	errno = -err;
	return err ? -1 : 0;
}


struct outcome write_hardlink(se_run *run, struct archive_entry *e,
			      const char *path, const char *target)
{
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (strcmp(path, target) == 0 && archive_entry_size(e) <= 0)
		return ok(SE_SKIPPED);
	if (strcmp(path, target) == 0) {
		struct pending *p = NULL;
		struct stat dst;

		o = ok(SE_CREATED);
		dirfd = rs_open_parent(run->rs, path, false, 0, &leaf);
		if (dirfd < 0)
			return resolve_outcome(run, -dirfd);
		if ((run->opts & SE_OPT_DURABLE) && fstat(dirfd, &dst) == 0)
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

		o = f.act == SE_CREATED ? o : f;
	}
	if (dirfd >= 0)
		close(dirfd);
	if (o.err == EPERM && o.act == SE_FAILED) {
		/* linkat's answer for a directory target: policy, not a fault. */
		o.act = SE_REFUSED;
		o.reason = "hardlink target is a directory or not linkable";
	} else if (o.err == ENOENT && o.act == SE_FAILED) {
		o.reason = "hardlink target does not exist";
	}
	return o;
}


struct outcome write_special(se_run *run, struct archive_entry *e,
			     const char *path)
{
	mode_t type = archive_entry_filetype(e);
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (type == AE_IFSOCK)
		return refuse("sockets are not extracted", EINVAL);
	if (type == AE_IFCHR || type == AE_IFBLK) {
		if (!(run->opts & SE_OPT_DEVICES))
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
