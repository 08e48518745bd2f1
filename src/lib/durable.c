/*
 * durable.c - --durable: every object finished under a temporary name,
 * syncfs, all renamed, syncfs; and the end of the run's writing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names.h"
#include "write.h"


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
struct pending *pending_at(se_run *run, const struct stat *dst,
				  const char *leaf)
{
	char key[SE_PATH_MAX + 64];
	size_t i;

	pend_key(key, sizeof(key), dst, leaf);
	i = map_get(&run->pend_index, key);
	return i == MAP_NONE ? NULL : &run->pend[i];
}


static void pending_cancel(se_run *run, struct pending *p)
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
bool pending_blocks(se_run *run, const char *path)
{
	char key[SE_PATH_MAX + 8];

	if (!(run->opts & SE_OPT_DURABLE) || run->n_pend == 0)
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
int pending_settle(se_run *run, int dirfd, const char *leaf,
			  struct outcome *o)
{
	struct pending *p;
	struct stat dst;

	if (!(run->opts & SE_OPT_DURABLE) || run->n_pend == 0)
		return 0;
	if (fstat(dirfd, &dst) < 0)
		return 0;
	p = pending_at(run, &dst, leaf);
	if (!p)
		return 0;
	if (run->opts & SE_OPT_KEEP_OLD) {
		*o = kept_old(run);
		return -1;
	}
	pending_cancel(run, p);
	return 1;
}


/* The handle of directory DIRFD, opened once for all its pending names. */
static size_t dir_handle(se_run *run, int dirfd, const struct stat *dst)
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
struct outcome queue_pending(se_run *run, int dirfd, const char *tmp,
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
		if (run->opts & SE_OPT_KEEP_OLD) {
			o = kept_old(run);
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
		o = (struct outcome){ SE_FAILED,
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
	return ok(existed ? SE_REPLACED : SE_CREATED);
oom:
	o = (struct outcome){ SE_FAILED, "out of memory", ENOMEM, true };
drop:
	unlinkat(dirfd, tmp, 0);
	return o;
}


/* --durable, step 2: every pending object now has its data on disk. */
static bool finish_pending(se_run *run)
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
		run->have_digest = false;	/* no entry's data here */
		if (o.act == SE_REFUSED || o.act == SE_FAILED)
			run_report(run, NULL, p->name, p->path, p->type, o);
		fatal = o.fatal;
	}
	return !fatal;
}


/* syncfs(2) wants a real descriptor of the filesystem, not an O_PATH one. */
static bool sync_dest(se_run *run)
{
	int fd = openat(run->rs->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool good = fd >= 0 && syncfs(fd) == 0;

	if (!good)
		run_log(run, SE_LOG_ERROR, "syncfs on the destination failed: %s",
			strerror(errno));
	if (fd >= 0)
		close(fd);
	return good;
}


bool write_finish(se_run *run)
{
	bool durable = run->opts & SE_OPT_DURABLE;
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


void write_cleanup(se_run *run)
{
	writers_discard(run);
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


void write_free(se_run *run)
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
