/*
 * metadata.h - owner, mode, xattrs and times, applied only through an fd
 * of the object this run made, never by name.
 */
#ifndef SAFE_EXTRACT_METADATA_H
#define SAFE_EXTRACT_METADATA_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "outcome.h"
#include "owner.h"
#include "resolve.h"
#include "xattr.h"

/* On FD (OPATH: an O_PATH fd of a symlink or special file, which takes
 * only owner and times).  CREATED_MODE: the mode the object has now, or
 * (mode_t)-1.  REASON: room for a reason built here. */
struct outcome apply_fd_metadata(char reason[REASON_MAX], int fd, bool opath,
				 const struct owner_plan *own,
				 mode_t created_mode,
				 const struct attr_blob *attrs,
				 const struct timespec ts[2]);

/* Owner and times of the symlink or special file of TYPE just made at
 * LEAF in DIRFD, through an O_PATH fd checked to be that object. */
struct outcome meta_on_object(struct resolver *rs, int dirfd, const char *leaf,
			      mode_t type, const struct owner_plan *own,
			      const struct timespec ts[2],
			      char reason[REASON_MAX]);

#endif
