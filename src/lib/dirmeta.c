/*
 * dirmeta.c - deferred directory metadata.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirmeta.h"
#include "metadata.h"

static struct deferred_dir *dir_record(struct dirmeta *dm, const char *path)
{
	size_t i = map_get(&dm->index, path);
	struct deferred_dir *d;

	if (i != MAP_NONE) {
		/* The same directory again: one record, the last entry wins
		 * (a million repeats of one name cost one record). */
		d = &dm->dirs[i];
		attr_free(d->xattrs);
		d->xattrs = NULL;
		return d;
	}
	if (dm->n_dirs == dm->cap_dirs) {
		size_t cap = dm->cap_dirs ? dm->cap_dirs * 2 : 64;
		struct deferred_dir *nd = realloc(dm->dirs, cap * sizeof(*nd));

		if (!nd)
			return NULL;
		dm->dirs = nd;
		dm->cap_dirs = cap;
	}
	d = &dm->dirs[dm->n_dirs];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	if (!d->path || !map_put(&dm->index, path, dm->n_dirs)) {
		free(d->path);
		return NULL;
	}
	dm->n_dirs++;
	return d;
}

static void id_key(char key[48], const struct stat *st)
{
	snprintf(key, 48, "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

bool dirmeta_defer(struct dirmeta *dm, const char *path, const struct owner_plan *own,
		   const struct timespec times[2], struct attr_blob *attrs,
		   const struct stat *st)
{
	struct deferred_dir *d = dir_record(dm, path);
	char key[48];

	if (!d) {
		attr_free(attrs);
		return false;
	}
	d->own = *own;
	d->times[0] = times[0];
	d->times[1] = times[1];
	d->xattrs = attrs;
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	id_key(key, st);
	if (!map_put(&dm->by_id, key, (size_t)(d - dm->dirs)))
		return false;
	return true;
}

/* Record I is moot: out of the index if it holds the place, no more
 * applied at the end. */
static void forget_at(struct dirmeta *dm, size_t i)
{
	if (map_get(&dm->index, dm->dirs[i].path) == i)
		map_del(&dm->index, dm->dirs[i].path);
	attr_free(dm->dirs[i].xattrs);
	dm->dirs[i].xattrs = NULL;
	dm->dirs[i].ino = 0;
}

void dirmeta_forget(struct dirmeta *dm, const char *path)
{
	size_t i;

	if (!path)
		return;
	i = map_get(&dm->index, path);
	if (i != MAP_NONE)
		forget_at(dm, i);
}

void dirmeta_forget_dir(struct dirmeta *dm, const struct stat *st)
{
	char key[48];
	size_t i;

	id_key(key, st);
	i = map_get(&dm->by_id, key);
	if (i == MAP_NONE)
		return;
	map_del(&dm->by_id, key);
	if (dm->dirs[i].ino != st->st_ino || dm->dirs[i].dev != st->st_dev)
		return;		/* the record moved on to another directory */
	/* This very record, not whichever holds its path now (a rename
	 * may have put another one there). */
	forget_at(dm, i);
}

/* Does PATH name PREFIX or something under it? */
static bool under(const char *path, const char *prefix, size_t n)
{
	return strncmp(path, prefix, n) == 0 && (!path[n] || path[n] == '/');
}

bool dirmeta_rename(struct dirmeta *dm, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to);

	if (!nf)
		return true;	/* the root is never renamed */
	for (size_t i = 0; i < dm->n_dirs; i++) {
		struct deferred_dir *d = &dm->dirs[i];
		size_t rest;
		char *np;

		if (!d->ino || !under(d->path, from, nf))
			continue;
		/* Indexed by its path: one that is not (a record a later
		 * one of the same name displaced) stays as it is. */
		if (map_get(&dm->index, d->path) != i)
			continue;
		rest = strlen(d->path + nf);
		np = malloc(nt + rest + 1);
		if (!np)
			return false;
		memcpy(np, to, nt);
		memcpy(np + nt, d->path + nf, rest + 1);
		map_del(&dm->index, d->path);
		/* A record already at the new name whose directory the
		 * rename did not replace (the caller forgot that one by
		 * identity) loses only its place in the index: it is still
		 * applied at the end, and fails there unless its directory
		 * is the one that now stands at the name. */
		map_del(&dm->index, np);
		if (!map_put(&dm->index, np, i)) {
			free(np);
			return false;
		}
		free(d->path);
		d->path = np;
	}
	return true;
}

static int dir_cmp(const void *a, const void *b)
{
	const struct deferred_dir *x = a, *y = b;

	return strcmp(y->path, x->path);
}

void dirmeta_sort(struct dirmeta *dm)
{
	if (dm->n_dirs > 1)
		qsort(dm->dirs, dm->n_dirs, sizeof(*dm->dirs), dir_cmp);
	/* The indexes are stale from here on: nothing is deferred after. */
	map_free(&dm->index);
	map_free(&dm->by_id);
}

/*
 * Each directory is found again under the same scope and then checked to
 * be the very directory this run made or found (device and inode): one
 * swapped in under its name, by a rename inside DEST, gets nothing.
 */
struct outcome dirmeta_apply(struct dirmeta *dm, size_t i, struct resolver *rs,
			     char reason[REASON_MAX])
{
	struct deferred_dir *d = &dm->dirs[i];
	struct outcome o;
	struct stat st;
	int fd;

	if (d->ino == 0)
		return ok(SE_SKIPPED);	/* replaced by a later entry */
	fd = rs_open_dir(rs, d->path, O_RDONLY, false, 0);
	if (fd < 0)
		return resolve_outcome(rs->in_root, -fd);
	if (fstat(fd, &st) < 0 || st.st_dev != d->dev || st.st_ino != d->ino)
		o = fail("directory was replaced during extraction; its metadata is not applied",
			 ESTALE);
	else
		o = apply_fd_metadata(reason, fd, false, &d->own, (mode_t)-1,
				      d->xattrs, d->times);
	close(fd);
	return o;
}

void dirmeta_free(struct dirmeta *dm)
{
	for (size_t i = 0; i < dm->n_dirs; i++) {
		attr_free(dm->dirs[i].xattrs);
		free(dm->dirs[i].path);
	}
	free(dm->dirs);
	map_free(&dm->index);
	map_free(&dm->by_id);
	memset(dm, 0, sizeof(*dm));
}
