/*
 * xattr.h - extended attributes and ACLs an entry carries, under the
 * run's namespace policy; kept as a list of (name, value) so that a
 * directory's can wait for its deferred metadata.
 */
#ifndef SAFE_EXTRACT_XATTR_H
#define SAFE_EXTRACT_XATTR_H

#include <archive_entry.h>
#include <stddef.h>

#include "owner.h"
#include "policy.h"

struct attr_blob {
	struct attr_blob *next;
	char *name;
	size_t size;
	unsigned char value[];
};

void attr_free(struct attr_blob *list);
struct attr_blob *entry_attrs(const struct policy *pol, struct archive_entry *e,
			      const struct owner_plan *own);

#endif
