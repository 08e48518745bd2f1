/*
 * durable.c - the pending renames of --durable.
 *
 * Every object of a --durable run is finished under a temporary name and
 * renamed after the first syncfs.  To give exactly the tree and report of
 * an in-order run, each later entry of the same name first settles with
 * the pending one (commit.c decides how).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "durable.h"
#include "names.h"

static void pend_key(char *key, size_t n, dev_t dev, ino_t ino, const char *leaf)
{
	snprintf(key, n, "%llx:%llx/%s", (unsigned long long)dev,
		 (unsigned long long)ino, leaf);
}

static void pend_path_key(char *key, size_t n, const char *path)
{
	snprintf(key, n, "p:%s", path);
}

struct pending *durable_at(struct durable *d, int dirfd, const char *leaf)
{
	char key[SE_PATH_MAX + 64];
	struct stat dst;
	size_t i;

	if (d->n_pend == 0 || fstat(dirfd, &dst) < 0)
		return NULL;
	pend_key(key, sizeof(key), dst.st_dev, dst.st_ino, leaf);
	i = map_get(&d->pend_index, key);
	return i == MAP_NONE ? NULL : &d->pend[i];
}

void durable_cancel(struct durable *d, struct pending *p)
{
	char key[SE_PATH_MAX + 64];
	int fd = durable_dirfd(d, p);

	if (fd >= 0)
		unlinkat(fd, p->tmp, 0);
	p->tmp[0] = '\0';
	p->cancelled = true;
	pend_key(key, sizeof(key), d->dirh[p->dir].dev, d->dirh[p->dir].ino, p->leaf);
	map_del(&d->pend_index, key);
	pend_path_key(key, sizeof(key), p->path);
	map_del(&d->pend_index, key);
}

void durable_cancel_where(struct durable *d, durable_match_fn *match, void *data)
{
	for (size_t i = 0; i < d->n_pend; i++) {
		struct pending *p = &d->pend[i];
		const struct dir_handle *h = &d->dirh[p->dir];

		if (!p->cancelled && match(data, h->dev, h->ino, p->leaf))
			durable_cancel(d, p);
	}
}

/*
 * In an in-order run, a file at "a" makes "a/b" fail (ENOTDIR).  A pending
 * "a" is not there yet, so say it here, or the --durable run would make a
 * directory "a" and refuse the file instead.
 */
bool durable_blocks(struct durable *d, const char *path)
{
	char key[SE_PATH_MAX + 8];

	if (d->n_pend == 0)
		return false;
	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		snprintf(key, sizeof(key), "p:%.*s", (int)(s - path), path);
		if (map_get(&d->pend_index, key) != MAP_NONE)
			return true;
	}
	return false;
}

/* Give handle I an fd of its own, closing the oldest open one when
 * DURABLE_OPEN_DIRS are open.  FD is taken over. */
static void handle_open(struct durable *d, size_t i, int fd)
{
	if (d->n_open < DURABLE_OPEN_DIRS) {
		d->open[d->n_open++] = i;
	} else {
		struct dir_handle *old = &d->dirh[d->open[d->next]];

		close(old->fd);
		old->fd = -1;
		d->open[d->next] = i;
		d->next = (d->next + 1) % DURABLE_OPEN_DIRS;
	}
	d->dirh[i].fd = fd;
}

/*
 * The handle of directory DIRFD (at PATH's parent), found by identity.
 * A closed one gets a copy of DIRFD, which is the same directory.
 */
static size_t dir_handle(struct durable *d, int dirfd, const struct stat *dst,
			 const char *path, const char *leaf)
{
	size_t plen = strlen(path), llen = strlen(leaf);
	char key[64];
	size_t i;
	int fd;

	snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)dst->st_dev,
		 (unsigned long long)dst->st_ino);
	i = map_get(&d->dirh_index, key);
	if (i != MAP_NONE && d->dirh[i].fd >= 0)
		return i;
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return MAP_NONE;
	if (i != MAP_NONE) {
		handle_open(d, i, fd);
		return i;
	}
	if (d->n_dirh == d->cap_dirh) {
		size_t cap = d->cap_dirh ? d->cap_dirh * 2 : 64;
		struct dir_handle *n = realloc(d->dirh, cap * sizeof(*n));

		if (!n)
			goto oom;
		d->dirh = n;
		d->cap_dirh = cap;
	}
	/* PATH ends in LEAF: what comes before is the directory's path. */
	if (llen > plen || strcmp(path + plen - llen, leaf) != 0)
		llen = plen;
	plen -= llen;
	while (plen && path[plen - 1] == '/')
		plen--;
	d->dirh[d->n_dirh] = (struct dir_handle){ -1, dst->st_dev, dst->st_ino,
						  strndup(path, plen) };
	if (!d->dirh[d->n_dirh].path)
		goto oom;
	if (!map_put(&d->dirh_index, key, d->n_dirh)) {
		free(d->dirh[d->n_dirh].path);
		goto oom;
	}
	handle_open(d, d->n_dirh, fd);
	return d->n_dirh++;
oom:
	close(fd);
	errno = ENOMEM;
	return MAP_NONE;
}

int durable_dirfd(struct durable *d, const struct pending *p)
{
	struct dir_handle *h = &d->dirh[p->dir];
	struct stat st;
	int fd;

	if (h->fd >= 0)
		return h->fd;
	if (!d->rs)
		return -EBADF;
	fd = rs_open_dir(d->rs, h->path, O_PATH, false, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_dev != h->dev || st.st_ino != h->ino) {
		close(fd);
		return -ESTALE;
	}
	handle_open(d, p->dir, fd);
	return fd;
}

int durable_add(struct durable *d, int dirfd, const char *tmp, const char *leaf,
		const char *path, const char *name, const char *type)
{
	char key[SE_PATH_MAX + 64];
	struct pending *p;
	struct stat dst;
	size_t dir;

	if (fstat(dirfd, &dst) < 0)
		return -errno;
	dir = dir_handle(d, dirfd, &dst, path, leaf);
	if (dir == MAP_NONE)
		return -errno;
	if (d->n_pend == d->cap_pend) {
		size_t cap = d->cap_pend ? d->cap_pend * 2 : 256;
		struct pending *np = realloc(d->pend, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		d->pend = np;
		d->cap_pend = cap;
	}
	p = &d->pend[d->n_pend];
	memset(p, 0, sizeof(*p));
	p->dir = dir;
	p->type = type;
	p->leaf = strdup(leaf);
	p->path = strdup(path);
	p->name = strdup(name);
	snprintf(p->tmp, sizeof(p->tmp), "%s", tmp);
	if (!p->leaf || !p->path || !p->name)
		goto oom;
	pend_key(key, sizeof(key), dst.st_dev, dst.st_ino, leaf);
	if (!map_put(&d->pend_index, key, d->n_pend))
		goto oom;
	pend_path_key(key, sizeof(key), path);
	if (!map_put(&d->pend_index, key, d->n_pend)) {
		pend_key(key, sizeof(key), dst.st_dev, dst.st_ino, leaf);
		map_del(&d->pend_index, key);
		goto oom;
	}
	d->n_pend++;
	return 0;
oom:
	free(p->leaf);
	free(p->path);
	free(p->name);
	return -ENOMEM;
}

void durable_cleanup(struct durable *d)
{
	for (size_t i = 0; i < d->n_pend; i++) {
		struct pending *p = &d->pend[i];

		int fd = p->tmp[0] ? durable_dirfd(d, p) : -1;

		if (fd >= 0)
			unlinkat(fd, p->tmp, 0);
		p->tmp[0] = '\0';
	}
}

void durable_free(struct durable *d)
{
	for (size_t i = 0; i < d->n_pend; i++) {
		free(d->pend[i].leaf);
		free(d->pend[i].path);
		free(d->pend[i].name);
	}
	free(d->pend);
	map_free(&d->pend_index);
	for (size_t i = 0; i < d->n_dirh; i++) {
		if (d->dirh[i].fd >= 0)
			close(d->dirh[i].fd);
		free(d->dirh[i].path);
	}
	free(d->dirh);
	map_free(&d->dirh_index);
	*d = (struct durable){ .rs = d->rs };
}
