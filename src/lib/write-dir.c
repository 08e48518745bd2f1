/*
 * write-dir.c - directory entries; their metadata waits for the end.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "write.h"


/* ---- deferred directories --------------------------------------------- */

static struct deferred_dir *dir_record(se_run *run, const char *path)
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
void dir_forget(se_run *run, const char *path)
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


static bool defer_dir(se_run *run, struct archive_entry *e,
		      const char *path, const struct stat *st)
{
	struct deferred_dir *d = dir_record(run, path);

	if (!d)
		return false;
	d->own = plan_owner(run, e);
	entry_times(run, e, d->times);
	d->xattrs = entry_attrs(run, e, &d->own);
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	return true;
}


/* ---- directories ------------------------------------------------------ */

struct outcome write_directory(se_run *run, struct archive_entry *e,
			       const char *path)
{
	enum se_action act = SE_CREATED;
	struct outcome o;
	struct stat st;
	const char *leaf;
	int dirfd, fd, err;

	if (path[0] == '\0') {
		/* "./": the destination's own metadata, as tar */
		if (run->opts & SE_OPT_KEEP_DIR_METADATA)
			return ok(SE_CREATED);
		if (fstat(run->rs->root_fd, &st) < 0)
			return resolve_outcome(run, errno);
		goto defer;
	}
	if (pending_blocks(run, path))
		return resolve_outcome(run, ENOTDIR);

	dirfd = rs_open_parent(run->rs, path, true, 0777 & ~run->umask, &leaf);
	if (dirfd < 0)
		return resolve_outcome(run, -dirfd);
	switch (pending_settle(run, dirfd, leaf, &o)) {
	case -1:
		close(dirfd);
		return o;
	case 1:
		act = SE_REPLACED;
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
	err = rs_stat(run->rs, dirfd, leaf, path, &st);
	if (err) {
		close(dirfd);
		return resolve_outcome(run, -err);
	}
	if (S_ISDIR(st.st_mode) && (run->opts & SE_OPT_KEEP_DIR_METADATA)) {
		/* tar --no-overwrite-dir: an existing directory stays as it is. */
		close(dirfd);
		return ok(SE_CREATED);
	}
	if (S_ISDIR(st.st_mode))
		goto opened;
	if (S_ISLNK(st.st_mode) && (run->rs->in_root || run->rs->keep_dir_links)) {
		/* usrmerge: "lib -> usr/lib" stays, and the directory's
		 * metadata is not applied through the link. */
		fd = rs_open_dir(run->rs, path, O_PATH, false, 0);
		if (fd >= 0) {
			close(fd);
			close(dirfd);
			return (struct outcome){ SE_SKIPPED,
				"existing symlink to a directory kept", 0, false };
		}
	}
	if (S_ISLNK(st.st_mode) && !(run->opts & SE_OPT_UNLINK)) {
		/* A link then a directory entry of the same name: the
		 * directory's chmod/chown would go through the link. */
		close(dirfd);
		return refuse("a symlink is in the way of a directory (use -U to remove it)",
			      ELOOP);
	}
	if (run->opts & SE_OPT_KEEP_OLD) {
		close(dirfd);
		return kept_old(run);
	}
	err = rs_unlink(run->rs, dirfd, leaf, path, 0);
	if (err || mkdirat(dirfd, leaf, 0700) < 0) {
		err = err ? -err : errno;
		close(dirfd);
		return resolve_outcome(run, err);
	}
	act = SE_REPLACED;
opened:
	/* Remember which directory this is, so that the metadata at the end
	 * goes to it and to no other that took its name meanwhile. */
	fd = rs_open_leaf(run->rs, dirfd, leaf, O_PATH | O_DIRECTORY);
	close(dirfd);
	if (fd < 0)
		return resolve_outcome(run, -fd);
	err = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	if (err)
		return resolve_outcome(run, err);
defer:
	if (!defer_dir(run, e, path, &st))
		return (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
	return ok(act);
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
void finish_dirs(se_run *run)
{
	if (run->n_dirs > 1)
		qsort(run->dirs, run->n_dirs, sizeof(*run->dirs), dir_cmp);
	for (size_t i = 0; i < run->n_dirs; i++) {
		struct deferred_dir *d = &run->dirs[i];
		struct outcome o = ok(SE_CREATED);
		struct stat st;
		int fd;

		if (d->ino == 0)
			continue;	/* replaced by a later entry */
		fd = rs_open_dir(run->rs, d->path, O_RDONLY, false, 0);
		if (fd < 0)
			o = resolve_outcome(run, -fd);
		else if (fstat(fd, &st) < 0 || st.st_dev != d->dev || st.st_ino != d->ino)
			o = fail("directory was replaced during extraction; its metadata is not applied",
				 ESTALE);
		else
			o = apply_fd_metadata(run->reason, fd, false, &d->own, (mode_t)-1,
					      d->xattrs, d->times);
		if (fd >= 0)
			close(fd);
		run->have_digest = false;	/* no entry's data here */
		if (o.act == SE_REFUSED || o.act == SE_FAILED || o.act == SE_INCOMPLETE)
			run_report(run, NULL, d->path[0] ? d->path : ".",
				   d->path[0] ? d->path : ".", "directory", o);
	}
}
