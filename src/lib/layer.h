/*
 * layer.h - an archive applied as a container image layer on top of what
 * the root already holds (the lower layers), as the OCI image spec's
 * layer.md says: a whiteout ".wh.NAME" removes NAME, an opaque marker
 * ".wh..wh..opq" removes every name its directory had from the lower
 * layers, and neither marker ever appears in the root.  Only what stood
 * before this layer goes: the names this layer made stay, whatever the
 * order of its entries.
 */
#ifndef SAFE_EXTRACT_LAYER_H
#define SAFE_EXTRACT_LAYER_H

#include <stdbool.h>
#include <sys/types.h>

#include "dirmeta.h"
#include "durable.h"
#include "map.h"
#include "outcome.h"
#include "plan.h"
#include "resolve.h"

#define LAYER_WH_PREFIX ".wh."
#define LAYER_WH_META ".wh..wh."	/* aufs' own names; reserved */
#define LAYER_WH_OPAQUE ".wh..wh..opq"

struct layer {
	struct resolver *rs;
	struct dirmeta *dm;		/* the run's directories whose metadata waits */
	bool on;			/* any SE_WHITEOUTS_* but NONE */
	int format;			/* SE_WHITEOUTS_* */
	/* SE_WHITEOUTS_OVERLAY*: overlayfs's own namespace, "trusted.overlay."
	 * or "user.overlay."; NULL for SE_WHITEOUTS_OCI.  Then a whiteout
	 * also leaves a 0/0 character device at its name and an opaque
	 * marker the xattr NS"opaque" = "y" on its directory, as overlayfs
	 * writes them in an upper directory. */
	const char *overlay_ns;
	/* "dev:ino/leaf" of every name this layer made: its parent
	 * directory's identity, so another spelling of the path (a symlink
	 * followed in SE_IN_ROOT) is the same name. */
	struct map written;
	/* "dev:ino" of every directory holding a name this layer made:
	 * a tree with one is not moved aside whole (--durable). */
	struct map written_dirs;
	/* --durable (DUR not NULL): a removal is a move aside, recorded in
	 * the run's journal first (ASIDE: N names of DIRFD), undone by a
	 * roll back, finished after the commit point; the pending objects
	 * of earlier layers that it takes are cancelled. */
	struct durable *dur;
	int (*aside)(void *ctx, int dirfd, const char *const *leaves, size_t n);
	void *aside_ctx;
};

/* Is P a whiteout or an opaque marker (it removes names that a file
 * still in flight may be going to)? */
bool layer_is_marker(const struct plan *p);

/*
 * Before entry P is made.  True when the entry ends here, with *O its
 * outcome: a whiteout or opaque marker applied (P->type says which), or
 * refused (an empty name, '.', '..', a marker that is not a regular
 * file, a name under a ".wh." directory).  False when the entry goes on;
 * first what stands in its way is cleared as a layer replaces it: a
 * non-directory in a directory's way (a symlink removed as itself, never
 * followed), a directory tree in a non-directory's way.  DIRMODE: for the
 * directories an opaque marker's path needs.
 */
bool layer_before(struct layer *l, struct plan *p, mode_t dirmode, struct outcome *o);

/* After P was made (or handed to a writer thread): its name is this
 * layer's, and later whiteouts of this layer leave it alone. */
void layer_note(struct layer *l, const struct plan *p);

/* The next layer begins: what the previous ones made is now a lower
 * layer's, and this one's whiteouts remove it. */
void layer_next(struct layer *l);

void layer_free(struct layer *l);

#endif
