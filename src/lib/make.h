/*
 * make.h - creators: each makes one object, named by a single component,
 * inside a scoped parent fd, and decides nothing about what stands at the
 * name (commit.c does).
 */
#ifndef SAFE_EXTRACT_MAKE_H
#define SAFE_EXTRACT_MAKE_H

#include "durable.h"
#include "plan.h"
#include "resolve.h"

/* What a creator needs besides the parent and the name. */
struct make_ctx {
	struct resolver *rs;
	struct durable *dur;		/* --durable: pending hardlink targets */
	const struct plan *plan;
};

/* Make the object of C->plan (symlink, hardlink, FIFO, device) as NAME in
 * DIRFD: 0 or -errno. */
typedef int make_fn(const struct make_ctx *c, int dirfd, const char *name);
make_fn make_symlink, make_hardlink, make_node;

/* A new directory LEAF, owner-only until its metadata is applied at the
 * end: nobody else gets in meanwhile, and a 0555 one still receives its
 * files.  0 or -errno. */
int make_dir(int dirfd, const char *leaf);

#endif
