/*
 * policy.h - what a run was asked to do: the options and lists that every
 * stage reads, set through the public setters before the first entry.
 * Stages read it; only the plan stage writes its caches (owner names,
 * patterns seen).
 */
#ifndef SAFE_EXTRACT_POLICY_H
#define SAFE_EXTRACT_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "safe-extract.h"
#include "map.h"
#include "resolve.h"

struct pattern_list {
	char **v;
	size_t n;
};

struct policy {
	unsigned long long opts;	/* SE_OPT_* */
	struct resolver *rs;		/* the root's; NULL for a listing */
	mode_t umask;			/* applied by hand; the process's stays */
	mode_t proc_umask;		/* the process's, which the kernel applies */
	bool is_root;			/* euid 0: owners can be restored */
	int strip_components;
	struct pattern_list includes, excludes;
	struct pattern_list xattr_includes, xattr_excludes;
	/* With overlay whiteouts, overlayfs's namespace ("trusted.overlay."
	 * or "user.overlay."): an image xattr in it is stored escaped. */
	const char *overlay_ns;
	bool *pattern_hit;		/* one per include */
	unsigned int occurrence;	/* --occurrence=N, or 0 */
	struct map seen_names;		/* name -> times seen, with occurrence */

	/* Owner names: the caller's lookup, or the root's own databases in
	 * SE_IN_ROOT (read once), or the host's; the last name of each kind
	 * is remembered (one name repeats over many entries). */
	se_owner_cb *owner_cb;
	void *owner_data;
	char *passwd_db, *group_db;
	struct name_cache {
		bool valid;
		char name[64];
		uint32_t id;
	} name_cache[2];		/* [0] users, [1] groups */

	/* se_run_add_id_map: container ids that become host ids.  With a
	 * range of either kind, an id outside every range of its kind is
	 * never set; with none, ids are set as they are. */
	struct id_ranges {
		struct id_range {
			uint32_t inside, outside, count;
		} *v;
		size_t n;
	} id_maps[2];			/* [0] users, [1] groups */
};

static inline bool policy_in_root(const struct policy *pol)
{
	return pol->rs && pol->rs->in_root;
}

int pattern_add(struct pattern_list *l, const char *s);
void pattern_free(struct pattern_list *l);
/* Add a range of container ids (se_run_add_id_map's WHICH: SE_MAP_UID,
 * SE_MAP_GID or both) that become host ids: 0, or -EINVAL for a bad or
 * overlapping range (nothing added), -ENOMEM. */
int id_map_add(struct policy *pol, unsigned int which, uint32_t inside,
	       uint32_t outside, uint32_t count);
void policy_free(struct policy *pol);

#endif
