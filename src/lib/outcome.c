/*
 * outcome.c - errors turned into an entry's outcome.
 */
#include "config.h"

#include <errno.h>

#include "outcome.h"

bool dest_unusable(int err)
{
	return err == ENOSPC || err == EDQUOT || err == EROFS || err == EIO ||
	       err == ENOMEM || err == EMFILE || err == ENFILE;
}

struct outcome write_failed(const char *reason, int err)
{
	struct outcome o = fail(reason, err);

	o.fatal = dest_unusable(err) || err == EINTR;
	return o;
}

/*
 * Policy errors are refusals; anything else is a failure; a broken
 * destination stops the run.
 */
struct outcome resolve_outcome(bool in_root, int err)
{
	struct outcome o;

	switch (err) {
	case ELOOP:
		return refuse(in_root ? "path crosses a magic link or too many symlinks" :
			      "path crosses a symlink", err);
	case EXDEV:
		return refuse("path leaves the destination or crosses a mount point", err);
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

struct outcome merge(struct outcome placed, struct outcome meta)
{
	if (!made_ok(placed))
		return placed;
	if (meta.act == SE_INCOMPLETE)
		return meta;
	return placed;
}
