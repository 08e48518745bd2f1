/*
 * layer.c - whiteouts and opaque markers of an image layer, applied inside
 * the root.
 *
 * Every marker's directory is resolved again from the root fd, through
 * resolve.c, for that marker alone: nothing resolved for one entry is
 * reused for another, because an entry in between may have replaced a
 * directory on the way with a symlink (containerd CVE-2025-47290 cached
 * a parent and wrote on the host).  Below that directory, removal is
 * remove.c's: one component at a time from the parent's fd, never
 * following a symlink, never entering a mount.
 *
 * "Whiteout files MUST only apply to resources in lower/parent layers"
 * (image-spec layer.md): a whiteout that comes after this layer's own
 * entry of the same name leaves that entry, and an opaque marker that
 * comes after this layer's entries in its directory leaves them; what
 * the lower layers had under them goes.  umoci does the same (it skips
 * the paths it unpacked from the current layer).
 *
 * In overlay format the root is an overlayfs upper directory, and the
 * markers must outlive the layer: overlayfs reads a whiteout as a 0/0
 * character device and an opaque directory by its xattr.  The lower
 * layers' names are still removed from the root (in a fresh upper
 * directory there are none), so that a root that held some shows the
 * same as the merged mount.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "layer.h"
#include "remove.h"
#include "tmpname.h"

enum marker {
	MK_NONE,		/* an ordinary entry */
	MK_WHITEOUT,		/* .wh.NAME */
	MK_OPAQUE,		/* .wh..wh..opq */
	MK_META,		/* .wh..wh.*: aufs' bookkeeping */
	MK_BAD,			/* refused */
};

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *leaf_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * What PATH (cleaned) of an entry of kind KIND is to a layer; for
 * MK_BAD, *WHY.  "It is not possible to create a filesystem which has a
 * file or directory with a name beginning with .wh." (layer.md): a
 * marker is never made, so a name below one is refused too.
 */
static enum marker classify(const char *path, enum plan_kind kind, const char **why)
{
	const char *leaf = leaf_of(path), *c, *name;

	for (c = path; c < leaf; c = strchr(c, '/') + 1) {
		if (starts_with(c, LAYER_WH_META))
			return MK_META;
		if (starts_with(c, LAYER_WH_PREFIX)) {
			*why = "a name under a whiteout (.wh.) directory";
			return MK_BAD;
		}
	}
	if (!starts_with(leaf, LAYER_WH_PREFIX))
		return MK_NONE;
	if (strcmp(leaf, LAYER_WH_OPAQUE) == 0) {
		if (kind != PK_FILE) {
			*why = "opaque whiteout marker that is not a regular file";
			return MK_BAD;
		}
		return MK_OPAQUE;
	}
	if (starts_with(leaf, LAYER_WH_META))
		return MK_META;
	name = leaf + strlen(LAYER_WH_PREFIX);
	if (!name[0]) {
		*why = "whiteout of an empty name";
		return MK_BAD;
	}
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		*why = "whiteout of '.' or '..'";
		return MK_BAD;
	}
	if (kind != PK_FILE) {
		*why = "whiteout that is not a regular file";
		return MK_BAD;
	}
	return MK_WHITEOUT;
}

bool layer_is_marker(const struct plan *p)
{
	return starts_with(leaf_of(p->path), LAYER_WH_PREFIX);
}

/* The key of LEAF in the directory DIR. */
static void name_key(char *key, size_t n, const struct stat *dir, const char *leaf)
{
	snprintf(key, n, "%llx:%llx/%s", (unsigned long long)dir->st_dev,
		 (unsigned long long)dir->st_ino, leaf);
}

/* The key of the directory ST. */
static void dir_key(char *key, size_t n, const struct stat *st)
{
	snprintf(key, n, "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

/* remove_in's question: did this layer make LEAF in DIR? */
static bool written_here(void *data, const struct stat *dir, const char *leaf)
{
	const struct layer *l = data;
	char key[64 + 256];

	if (l->written.used == 0)
		return false;
	name_key(key, sizeof(key), dir, leaf);
	return map_get(&l->written, key) != MAP_NONE;
}

void layer_note(struct layer *l, const struct plan *p)
{
	char key[64 + 256];
	const char *leaf;
	struct stat st;
	int dirfd;

	if (!p->path[0])
		return;		/* the root is never removed */
	dirfd = rs_open_parent(l->rs, p->path, false, 0, &leaf);
	if (dirfd < 0)
		return;
	if (fstat(dirfd, &st) == 0 && strlen(leaf) < 256) {
		name_key(key, sizeof(key), &st, leaf);
		/* Out of memory: the name is not known as this layer's, and a
		 * later whiteout of it in this layer removes it. */
		map_put(&l->written, key, 1);
		dir_key(key, sizeof(key), &st);
		map_put(&l->written_dirs, key, 1);
	}
	close(dirfd);
}

/*
 * Directories whose metadata waits, at PATH or under it (with CHILDREN,
 * only under it): those a removal took are forgotten, so that the end of
 * the run neither looks for them nor calls them replaced.  One that is
 * still there, the same directory, keeps its record (this layer's).
 */
static void forget_removed(struct layer *l, const char *path, bool children)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < l->dm->n_dirs; i++) {
		struct deferred_dir *d = &l->dm->dirs[i];
		struct stat st;
		bool there;
		int fd;

		if (!d->ino || (n && strncmp(d->path, path, n) != 0) ||
		    (n && d->path[n] && d->path[n] != '/') || (children && !d->path[n]))
			continue;
		fd = rs_open_dir(l->rs, d->path, O_PATH, false, 0);
		there = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == d->dev &&
			st.st_ino == d->ino;
		if (fd >= 0)
			close(fd);
		if (!there)
			dirmeta_forget(l->dm, d->path);
	}
}

/*
 * --durable.  Before the commit point nothing of the old tree may be
 * removed, only moved aside where a roll back finds it (journal.h): a
 * whiteout that removed a lower layer's tree at once could not be
 * undone after a kill, and the root would be neither the old tree nor
 * the new one.  So what remove_in() would remove is renamed aside, one
 * rename for each largest tree in which this layer made nothing (its
 * names stay, as without --durable), and removed after the commit.
 * The pending objects of earlier layers that it takes (not yet at their
 * names) are cancelled first, and so are those in the trees moved:
 * nothing of the run is left to be renamed into a tree that goes.
 */
struct ident {
	dev_t dev;
	ino_t ino;
};

/* The walk of one name's tree before it is moved aside. */
struct scan {
	const struct layer *l;
	bool kept;			/* a name this layer made is in it */
	struct ident *dirs;		/* its directories */
	size_t n, cap;
};

static int scan_visit(void *data, const struct stat *dir, const char *leaf,
		      const struct stat *st)
{
	struct scan *sc = data;
	char key[64];

	if (written_here((void *)sc->l, dir, leaf))
		sc->kept = true;
	if (!S_ISDIR(st->st_mode))
		return 0;
	dir_key(key, sizeof(key), st);
	if (map_get(&sc->l->written_dirs, key) != MAP_NONE)
		sc->kept = true;	/* a file of this layer's is pending in it */
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 16;
		struct ident *p = realloc(sc->dirs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		sc->dirs = p;
		sc->cap = cap;
	}
	sc->dirs[sc->n++] = (struct ident){ st->st_dev, st->st_ino };
	return 0;
}

/* What one call of aside_in() takes of the run's pending objects. */
struct takes {
	const struct layer *l;
	struct stat dir;		/* the directory its names are in */
	const char *only;		/* its one name, or NULL: every name */
	struct map trees;		/* "dev:ino" of the directories moved */
};

static bool takes_pending(void *data, dev_t dev, ino_t ino, const char *leaf)
{
	struct takes *t = data;
	struct stat st = { .st_dev = dev, .st_ino = ino };
	char key[64];

	if (dev == t->dir.st_dev && ino == t->dir.st_ino &&
	    (!t->only || strcmp(leaf, t->only) == 0) && !written_here((void *)t->l, &st, leaf))
		return true;
	if (!t->trees.used)
		return false;
	dir_key(key, sizeof(key), &st);
	return map_get(&t->trees, key) != MAP_NONE;
}

/* The directories SC walked are in a tree that moves: 0 or -ENOMEM. */
static int mark_trees(struct takes *t, const struct scan *sc)
{
	for (size_t k = 0; k < sc->n; k++) {
		struct stat ds = { .st_dev = sc->dirs[k].dev, .st_ino = sc->dirs[k].ino };
		char key[64];

		dir_key(key, sizeof(key), &ds);
		if (!map_put(&t->trees, key, 1))
			return -ENOMEM;
	}
	return 0;
}

/* Append a copy of NAME to *V (N names): 0 or -ENOMEM. */
static int push(char ***v, size_t *n, const char *name)
{
	char **p = realloc(*v, (*n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	*v = p;
	if (!(p[*n] = strdup(name)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The names in DIRFD but the run's own (temporaries and names moved
 * aside, all tmp_is_name(); the journal, journal.h's JOURNAL_NAME): into
 * *V.  Recovery ran before the run, so none of them is an older run's. */
static int list_names(int dirfd, char ***v, size_t *n)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;
	struct dirent *d;
	DIR *dp;

	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		r = -errno;
		close(fd);
		return r;
	}
	while (!r && (d = readdir(dp)))
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
		    !tmp_is_name(d->d_name) && strcmp(d->d_name, TMP_PREFIX "journal") != 0)
			r = push(v, n, d->d_name);
	closedir(dp);
	return r;
}

/*
 * What remove_in(DIRFD, ONLY, written_here, L) removes (ONLY NULL: in
 * every name of DIRFD), moved aside instead.  0 or -errno (-EXDEV: a
 * mount point in a tree, found before anything moved).
 */
static int aside_in(struct layer *l, int dirfd, const char *only, unsigned int depth)
{
	struct takes t = { .l = l, .only = only };
	char **cands = NULL, **names = NULL, **subs = NULL;
	size_t n_cands = 0, n = 0, n_subs = 0, i;
	int r;

	if (depth > 4096)
		return -ELOOP;
	if (fstat(dirfd, &t.dir) < 0)
		return -errno;
	r = only ? push(&cands, &n_cands, only) : list_names(dirfd, &cands, &n_cands);
	for (i = 0; r == 0 && i < n_cands; i++) {
		struct scan sc = { .l = l };
		struct stat st;

		if (fstatat(dirfd, cands[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno == ENOENT ? 0 : -errno;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (!written_here(l, &t.dir, cands[i]))
				r = push(&names, &n, cands[i]);
			continue;
		}
		r = remove_walk(dirfd, cands[i], scan_visit, &sc);
		if (r == 0 && sc.kept) {
			r = push(&subs, &n_subs, cands[i]);
		} else if (r == 0) {
			r = push(&names, &n, cands[i]);
			if (r == 0)
				r = mark_trees(&t, &sc);
		}
		free(sc.dirs);
	}
	if (r == 0)
		durable_cancel_where(l->dur, takes_pending, &t);
	if (r == 0 && n)
		r = l->aside(l->aside_ctx, dirfd, (const char *const *)names, n);
	for (i = 0; r == 0 && i < n_subs; i++) {
		int fd = openat(dirfd, subs[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;

		if (fd < 0) {
			r = errno == ENOENT ? 0 : -errno;
			continue;
		}
		/* The walk above checked it is on this mount; it must still
		 * be the directory walked. */
		if (fstat(fd, &st) < 0 || st.st_dev != t.dir.st_dev)
			r = -EXDEV;
		else
			r = aside_in(l, fd, NULL, depth + 1);
		close(fd);
	}
	map_free(&t.trees);
	free_names(cands, n_cands);
	free_names(names, n);
	free_names(subs, n_subs);
	return r;
}

/* takes_pending for aside_all(): only what is in the trees moved. */
static bool in_trees(void *data, dev_t dev, ino_t ino, const char *leaf)
{
	struct takes *t = data;
	struct stat st = { .st_dev = dev, .st_ino = ino };
	char key[64];

	(void)leaf;
	dir_key(key, sizeof(key), &st);
	return t->trees.used && map_get(&t->trees, key) != MAP_NONE;
}

/* LEAF in DIRFD moved aside whole, this layer's names under it too (an
 * entry that replaces it): remove_in(DIRFD, LEAF, NULL, NULL) under
 * --durable. */
static int aside_all(struct layer *l, int dirfd, const char *leaf)
{
	struct takes t = { .l = l };
	struct scan sc = { .l = l };
	int r = remove_walk(dirfd, leaf, scan_visit, &sc);

	if (r == 0)
		r = mark_trees(&t, &sc);
	free(sc.dirs);
	if (r == 0) {
		durable_cancel_where(l->dur, in_trees, &t);
		r = l->aside(l->aside_ctx, dirfd, &leaf, 1);
		if (r == -ENOENT)
			r = 0;
	}
	map_free(&t.trees);
	return r;
}

/* remove_in(), or aside_in() under --durable. */
static int take(struct layer *l, int dirfd, const char *leaf, bool keep_this_layers)
{
	if (l->dur)
		return keep_this_layers ? aside_in(l, dirfd, leaf, 0) : aside_all(l, dirfd, leaf);
	return remove_in(dirfd, leaf, keep_this_layers ? written_here : NULL, l);
}

static struct outcome removal_failed(int err)
{
	if (err == EXDEV)
		return fail("a mount point is in the way of the whiteout (never removed)", err);
	if (err == ELOOP)
		return fail("the whiteout's tree is too deep to remove", err);
	return fail("cannot remove what the whiteout names", err);
}

/* Overlay format: directory FD (not O_PATH) is opaque, as overlayfs
 * marks a directory that hides the lower layers' one of its name. */
static int overlay_opaque(const struct layer *l, int fd)
{
	char xname[64];

	snprintf(xname, sizeof(xname), "%sopaque", l->overlay_ns);
	return fsetxattr(fd, xname, "y", 1, 0) < 0 ? -errno : 0;
}

/* Overlay format: LEAF, one component in DIRFD, made a directory that
 * hides the lower layers' (a directory where a whiteout stood). */
static int overlay_opaque_leaf(const struct layer *l, int dirfd, const char *leaf)
{
	int fd = rs_open_leaf(l->rs, dirfd, leaf, O_RDONLY | O_DIRECTORY), r;

	if (fd < 0)
		return fd;
	r = overlay_opaque(l, fd);
	close(fd);
	return r;
}

/*
 * Overlay format: overlayfs's whiteout, a character device 0/0, at LEAF
 * in DIRFD.  When a name of this layer's own still stands there, a
 * non-directory hides the lower layers' name by itself, and a directory
 * (which the whiteout emptied of their names) is made opaque, or the
 * mount would merge theirs back in.  mknodat never replaces: what
 * appears at the name meanwhile fails the marker.
 */
static int overlay_whiteout(const struct layer *l, int dirfd, const char *leaf)
{
	struct stat st;

	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return S_ISDIR(st.st_mode) ? overlay_opaque_leaf(l, dirfd, leaf) : 0;
	if (errno != ENOENT)
		return -errno;
	return mknodat(dirfd, leaf, S_IFCHR | 0000, makedev(0, 0)) < 0 ? -errno : 0;
}

static bool is_overlay_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* .wh.NAME: NAME in the marker's directory, and everything under it that
 * the lower layers made. */
static struct outcome whiteout(struct layer *l, const struct plan *p, mode_t dirmode)
{
	char target[SE_PATH_MAX];
	const char *leaf = leaf_of(p->path), *name;
	bool overlay = l->overlay_ns != NULL;
	int dirfd, r;

	r = snprintf(target, sizeof(target), "%.*s%s", (int)(leaf - p->path), p->path,
		     leaf + strlen(LAYER_WH_PREFIX));
	if (r < 0 || (size_t)r >= sizeof(target))
		return refuse("name too long", ENAMETOOLONG);
	/* An overlay whiteout needs its directory in the upper one. */
	dirfd = rs_open_parent(l->rs, target, overlay, dirmode, &name);
	/* No directory there: nothing of the lower layers to remove. */
	if (!overlay && (dirfd == -ENOENT || dirfd == -ENOTDIR))
		return ok(SE_CREATED);
	if (dirfd < 0)
		return resolve_outcome(l->rs->in_root, -dirfd);
	r = take(l, dirfd, name, true);
	forget_removed(l, target, false);
	if (r < 0) {
		close(dirfd);
		return removal_failed(-r);
	}
	if (overlay && (r = overlay_whiteout(l, dirfd, name)) < 0) {
		close(dirfd);
		return fail("cannot make the overlay whiteout (a 0/0 character device)", -r);
	}
	close(dirfd);
	return ok(SE_CREATED);
}

/* .wh..wh..opq: every name in the marker's directory that the lower
 * layers made.  The directory itself stays (made when missing; not
 * when a dangling symlink or a file is on its way: then nothing of the
 * lower layers is there to remove). */
static struct outcome opaque(struct layer *l, const struct plan *p, mode_t dirmode)
{
	char dir[SE_PATH_MAX];
	const char *leaf = leaf_of(p->path);
	bool overlay = l->overlay_ns != NULL;
	int dirfd, r;

	snprintf(dir, sizeof(dir), "%.*s", leaf > p->path ? (int)(leaf - p->path) - 1 : 0,
		 p->path);
	/* An overlay marker's xattr is set through this fd: not O_PATH. */
	dirfd = rs_open_dir(l->rs, dir, overlay ? O_RDONLY : O_PATH, true, dirmode);
	if (!overlay && (dirfd == -ENOENT || dirfd == -ENOTDIR))
		return ok(SE_CREATED);
	if (dirfd < 0)
		return resolve_outcome(l->rs->in_root, -dirfd);
	r = take(l, dirfd, NULL, true);
	forget_removed(l, dir, true);
	if (r < 0) {
		close(dirfd);
		return removal_failed(-r);
	}
	/* overlayfs never reads the upper directory's own opaque mark: the
	 * lower layers' names would show through, whatever is written. */
	if (overlay && !dir[0]) {
		close(dirfd);
		return fail("an opaque marker at the root cannot be kept for overlayfs, "
			    "which ignores one on the upper directory itself", EOPNOTSUPP);
	}
	if (overlay && (r = -overlay_opaque(l, dirfd)) > 0) {
		close(dirfd);
		return fail(r == EPERM ? "cannot mark the directory opaque for overlayfs "
				"(a trusted.* xattr needs CAP_SYS_ADMIN)" :
			    "cannot mark the directory opaque for overlayfs", r);
	}
	close(dirfd);
	return ok(SE_CREATED);
}

/*
 * A layer replaces what stands at a name, as overlayfs shows it: a
 * directory over a directory merges; anything else in a directory's way
 * goes (a symlink as itself: the directory is never made through it,
 * nor its metadata applied through it), and a directory in a
 * non-directory's way goes with everything under it.  False with *O
 * when that failed.  In overlay format a directory where a whiteout
 * stands is made here, opaque, as overlayfs makes it: the whiteout
 * said the lower layers' directory of that name is gone.
 */
static bool clear_way(struct layer *l, const struct plan *p, mode_t dirmode,
		      struct outcome *o)
{
	bool tree = false, opaque_dir = false;
	const char *leaf;
	struct stat st;
	int dirfd, r = 0;

	if (!p->path[0])
		return true;	/* the root stays a directory, whatever the entry */
	dirfd = rs_open_parent(l->rs, p->path, false, 0, &leaf);
	if (dirfd < 0)
		return true;	/* nothing there yet; the entry's own stage says why */
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (p->kind == PK_DIR && !S_ISDIR(st.st_mode)) {
			if (l->dur)
				r = aside_all(l, dirfd, leaf);
			else
				r = unlinkat(dirfd, leaf, 0) < 0 && errno != ENOENT ? -errno : 0;
			opaque_dir = r == 0 && l->overlay_ns && is_overlay_whiteout(&st);
		} else if (p->kind != PK_DIR && S_ISDIR(st.st_mode) && (tree = true)) {
			r = take(l, dirfd, leaf, false);
		}
	}
	if (opaque_dir) {
		r = mkdirat(dirfd, leaf, dirmode) < 0 ? -errno : 0;
		if (r == 0)
			r = overlay_opaque_leaf(l, dirfd, leaf);
	}
	close(dirfd);
	if (tree)
		forget_removed(l, p->path, false);
	if (r < 0 && opaque_dir) {
		*o = fail("cannot make the directory that replaces an overlay whiteout, opaque", -r);
		return false;
	}
	if (r < 0) {
		*o = r == -EXDEV ? fail("a mount point is in the way (never removed)", EXDEV) :
		     fail("cannot remove what is in the way", -r);
		return false;
	}
	return true;
}

bool layer_before(struct layer *l, struct plan *p, mode_t dirmode, struct outcome *o)
{
	const char *why = NULL;

	switch (classify(p->path, p->kind, &why)) {
	case MK_NONE:
		return !clear_way(l, p, dirmode, o);
	case MK_WHITEOUT:
		p->type = "whiteout";
		*o = whiteout(l, p, dirmode);
		return true;
	case MK_OPAQUE:
		p->type = "opaque-whiteout";
		*o = opaque(l, p, dirmode);
		return true;
	case MK_META:
		*o = (struct outcome){ SE_SKIPPED, "aufs metadata (.wh..wh.), not extracted",
				       0, false };
		return true;
	case MK_BAD:
		break;
	}
	*o = refuse(why, EINVAL);
	return true;
}

void layer_next(struct layer *l)
{
	map_free(&l->written);
	memset(&l->written, 0, sizeof(l->written));
	map_free(&l->written_dirs);
	memset(&l->written_dirs, 0, sizeof(l->written_dirs));
}

void layer_free(struct layer *l)
{
	map_free(&l->written);
	map_free(&l->written_dirs);
}
