/*
 * owner.h - the owner, mode and times an entry asks for, under the run's
 * owner and set-id policy.
 */
#ifndef SAFE_EXTRACT_OWNER_H
#define SAFE_EXTRACT_OWNER_H

#include <archive_entry.h>
#include <stdbool.h>
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
};

struct owner_plan plan_owner(struct policy *pol, struct archive_entry *e);
/* May file capabilities be restored?  They are set-uid by another name. */
bool caps_allowed(const struct policy *pol, const struct owner_plan *p);
void entry_times(const struct policy *pol, struct archive_entry *e,
		 struct timespec ts[2]);

#endif
