/*
 * make.c - one object in a scoped parent fd.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "make.h"

int make_symlink(const struct make_ctx *c, int dirfd, const char *name)
{
	/* Stored verbatim, never followed while extracting. */
	return symlinkat(c->plan->target, dirfd, name) < 0 ? -errno : 0;
}

int make_node(const struct make_ctx *c, int dirfd, const char *name)
{
	const struct plan *p = c->plan;

	return mknodat(dirfd, name, p->ftype | (p->own.mode & 0777), p->rdev) < 0 ?
	       -errno : 0;
}

/*
 * Link to the plan's target (a cleaned archive path, resolved under the
 * same scope) as NAME in DIRFD.  Under --durable a target that is still
 * pending is linked from its temporary, so the link gets the content the
 * target has at this point of the archive.
 */
int make_hardlink(const struct make_ctx *c, int dirfd, const char *name)
{
	if (c->dur && c->dur->n_pend) {
		struct pending *p = NULL;
		const char *tleaf;
		int tdir = rs_open_parent(c->rs, c->plan->target, false, 0, &tleaf);

		if (tdir >= 0) {
			p = durable_at(c->dur, tdir, tleaf);
			close(tdir);
		}
		if (p) {
			int pdir = durable_dirfd(c->dur, p);

			if (pdir < 0)
				return pdir;
			return linkat(pdir, p->tmp, dirfd, name, 0) < 0 ? -errno : 0;
		}
	}
	return rs_link(c->rs, c->plan->target, dirfd, name);
}

int make_dir(int dirfd, const char *leaf)
{
	return mkdirat(dirfd, leaf, 0700) < 0 ? -errno : 0;
}
