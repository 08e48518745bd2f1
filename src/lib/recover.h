/*
 * recover.h - finish or undo a --durable run that was cut short, from its
 * journal (journal.h): with the end line on disk, roll forward (the
 * renames still to do, then what was moved aside goes); without it, roll
 * back (temporaries go, what was moved aside comes back, what the run
 * made goes).  Either way DEST holds one whole tree and no temporary.
 *
 * The journal is untrusted: DEST may have been prepared by someone else.
 * It is read whole and checked before anything is done; every name is
 * resolved from the root with no symlink followed, no ".." and no
 * absolute name, and a temporary is only ever a name the run could have
 * made.
 */
#ifndef SAFE_EXTRACT_RECOVER_H
#define SAFE_EXTRACT_RECOVER_H

#include <stdbool.h>
#include <stddef.h>

enum recovery_kind {
	RECOVER_NONE,		/* no journal */
	RECOVER_BACK,		/* the run had not committed: undone */
	RECOVER_FORWARD,	/* it had: finished */
};

struct recovery {
	enum recovery_kind kind;
	size_t renamed;		/* renames finished (forward) */
	size_t restored;	/* objects put back (back) */
	size_t removed;		/* temporaries and the run's objects removed */
	size_t left;		/* directories the run made, not empty: kept */
	char msg[512];		/* why, when recovery refuses or fails */
};

/*
 * Recover DEST (ROOT_FD, an O_PATH directory fd; CROSS_MOUNTS as the run
 * had it).  0, or -errno with R->msg saying why: a journal that is not a
 * regular file, too large, or malformed is refused and nothing changes.
 */
int recover(int root_fd, bool cross_mounts, struct recovery *r);

#endif
