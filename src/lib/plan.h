/*
 * plan.h - an entry decoded once, after the caller's BEFORE callback, into
 * a plain struct: its kind, its names cleaned and checked, whether the run
 * selects it, and (for entries that will be written) the owner, mode,
 * times and attributes it will get.  Nothing after the plan stage reads
 * the archive_entry.
 */
#ifndef SAFE_EXTRACT_PLAN_H
#define SAFE_EXTRACT_PLAN_H

#include <archive_entry.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "names.h"
#include "outcome.h"
#include "owner.h"
#include "policy.h"
#include "xattr.h"

enum plan_kind {
	PK_FILE,
	PK_DIR,
	PK_SYMLINK,
	PK_HARDLINK,
	PK_FIFO,
	PK_CHR,
	PK_BLK,
	PK_SOCK,
	PK_UNKNOWN,
};

struct plan {
	enum plan_kind kind;
	const char *type;		/* the one type name, for the report */
	char *name;			/* the raw name, for messages and the report */
	size_t name_cap;
	char path[SE_PATH_MAX];		/* cleaned; "" for the root */
	bool absolute;			/* had a leading '/' */
	char *target;			/* symlink: verbatim; hardlink: cleaned */
	size_t target_cap;
	mode_t ftype;			/* AE_IF* */
	mode_t perm;			/* as the archive asks, 07777 */
	int64_t size;			/* -1: unknown */
	bool sparse;
	unsigned int nlink;
	dev_t rdev;
	int64_t uid, gid;
	bool mtime_set;
	struct timespec mtime;
	/* plan_meta(): what the object will get. */
	struct owner_plan own;
	struct timespec times[2];
	struct attr_blob *attrs;
};

/* Decode E's kind, names and numbers into P, nothing decided (for an
 * entry the caller skipped, or whose header is damaged).  False when out
 * of memory. */
bool plan_decode(struct plan *p, struct archive_entry *e);
/*
 * Decode E into P and decide whether the run goes on with it.  False when
 * the entry ends here, with *O its outcome (a refused name, a member not
 * selected); P->path is then "" unless cleaning succeeded.
 */
bool plan_entry(struct plan *p, struct archive_entry *e, struct policy *pol,
		struct outcome *o);
/* Owner, mode, times and attributes, for an entry that will be written. */
void plan_meta(struct plan *p, struct archive_entry *e, struct policy *pol);
/* Let go of what the last plan_meta() kept (P itself is reused). */
void plan_clear(struct plan *p);
void plan_free(struct plan *p);

#endif
