/*
 * owner.h - the owner, mode and times an entry asks for, under the run's
 * owner and set-id policy.
 */
#ifndef SAFE_EXTRACT_OWNER_H
#define SAFE_EXTRACT_OWNER_H

#include <archive_entry.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "policy.h"

/* Owner and mode as they will be applied, and why not all of them. */
struct owner_plan {
	bool set_owner;
	uid_t uid;
	gid_t gid;
	mode_t mode;			/* set-id bits only with the owner */
	const char *problem;		/* static reason, or NULL */
	/* The container ids no se_run_add_id_map range holds (the owner is
	 * not set then): kept here, not as a reason string, so that the
	 * plan can be copied (writer jobs, deferred directories) and the
	 * reason built where it is reported. */
	unsigned int unmapped;		/* SE_MAP_UID | SE_MAP_GID, or 0 */
	uint32_t unmapped_uid, unmapped_gid;
	bool setid_dropped;		/* the entry asked for set-id bits */
};

struct owner_plan plan_owner(struct policy *pol, struct archive_entry *e);
/* Why the owner of P was not set when no id map held its ids, in BUF
 * (CAP bytes), or NULL when the maps are not the reason. */
const char *owner_unmapped_reason(const struct owner_plan *p, char *buf, size_t cap);
/* May file capabilities be restored?  They are set-uid by another name. */
bool caps_allowed(const struct policy *pol, const struct owner_plan *p);
void entry_times(const struct policy *pol, struct archive_entry *e,
		 struct timespec ts[2]);

#endif
