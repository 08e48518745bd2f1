/*
 * commit.h - the name policy, in one place: what stands at an entry's
 * name and what happens to it (-k, --skip-old-files, --keep-newer-files,
 * an empty or non-empty directory in the way, a symlink in a directory's
 * way), and whether a finished object is renamed now or after the first
 * syncfs (--durable).
 */
#ifndef SAFE_EXTRACT_COMMIT_H
#define SAFE_EXTRACT_COMMIT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "dirmeta.h"
#include "durable.h"
#include "journal.h"
#include "make.h"
#include "outcome.h"
#include "plan.h"
#include "resolve.h"
#include "tmpname.h"

struct commit {
	struct resolver *rs;
	unsigned long long opts;	/* SE_OPT_* */
	struct durable *dur;
	struct dirmeta *dm;
	struct tmpnames *tmp;
	struct journal *jn;		/* --durable: what to undo */
};

/* --durable: the N names LEAVES of DIRFD moved aside under temporary
 * names, recorded in the journal first (journal_aside_many()): an image
 * layer's removals.  0 or -errno. */
int commit_aside(const struct commit *c, int dirfd, const char *const *leaves, size_t n);

/* --keep-newer-files: is LEAF in DIRFD a non-directory at least as new
 * as the entry?  Then the entry is skipped, with *O saying so. */
bool commit_keeps_newer(const struct commit *c, int dirfd, const char *leaf,
			const struct plan *p, struct outcome *o);

/* A pending --durable file at a directory of PATH (the entry meets a
 * file where it needs a directory): *O says so. */
bool commit_blocked(const struct commit *c, const char *path, struct outcome *o);

/*
 * A finished object under TMP in DIRFD goes to LEAF: renamed now, or,
 * under --durable for files and hardlinks, queued until after the first
 * syncfs with its outcome decided now as an in-order run decides it.  On
 * anything but SE_CREATED/SE_REPLACED, TMP is gone.
 */
struct outcome commit_object(const struct commit *c, int dirfd, const char *tmp,
			     const char *leaf, const char *path, enum plan_kind kind,
			     const char *name, const char *type);

/*
 * May a regular file of this run be made, filled and placed by its whole
 * path, with no parent fd (rs_by_path(), and no policy that looks at the
 * parent: --durable, --keep-newer-files)?
 */
bool commit_by_path_ok(const struct commit *c);

/*
 * commit_object() for a file made by path: TMP, the sibling of PATH
 * (tmp_create_sibling()), renamed over PATH by the kernel's scoped
 * renameat2 with no parent fd when the name is free; anything else (a name
 * in the way, -k, no RENAME_NOREPLACE here) is decided by place() in the
 * parent, opened then, as the other backends decide it.  On anything but
 * SE_CREATED/SE_REPLACED, TMP is gone.
 */
struct outcome commit_by_path(const struct commit *c, const char *tmp,
			      const char *path);

/*
 * Make the plan's symlink, hardlink or special file at LEAF with MAKE:
 * directly when the name is free, else under a temporary committed over
 * it.  *AT is where the object now is (LEAF, or a pending temporary under
 * --durable), for its data and metadata.
 */
struct outcome commit_make(const struct commit *c, int dirfd, const char *leaf,
			   const struct plan *p, make_fn *make, const struct make_ctx *mc,
			   char at[SE_PATH_MAX]);

/*
 * The directory of plan P at LEAF in DIRFD: made, or the one standing
 * there kept, or what stands there replaced as the policy says.  On
 * SE_CREATED/SE_REPLACED, *DEFER says its metadata waits (ST: its
 * identity); SE_CREATED without *DEFER: kept as it is.
 */
struct outcome commit_dir(const struct commit *c, int dirfd, const char *leaf,
			  const struct plan *p, struct stat *st, bool *defer);

/* --durable, after the first syncfs: rename pending object I. */
struct outcome commit_pending(const struct commit *c, size_t i);

#endif
