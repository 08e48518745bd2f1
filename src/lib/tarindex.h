/*
 * tarindex.h - the members of an uncompressed tar archive by name, each
 * as a range of the archive's file, so that an image archive (`docker
 * save`, skopeo's oci-archive) is read in place, by pread, without
 * unpacking it anywhere first.
 *
 * Only the index is trusted to be a tar's; nothing read through it is:
 * image.c checks every range it uses against a digest.
 */
#ifndef SAFE_EXTRACT_TARINDEX_H
#define SAFE_EXTRACT_TARINDEX_H

#include <stddef.h>
#include <stdint.h>

struct tar_member;

struct tar_index {
	struct tar_member *members;	/* sorted by name */
	size_t n;
};

/*
 * Index the archive FD (a regular file; read through a duplicate, so
 * FD's offset is left alone).  0, or a negative errno with MSG:
 * -EILSEQ (not an uncompressed tar, or damaged), -E2BIG (too many
 * members or too long a name).
 */
int tar_index_build(struct tar_index *ix, int fd, char *msg, size_t msgsize);

/*
 * Member NAME ("./" prefixes ignored), following a hardlink or a
 * symlink to another member of the archive (never out of it): its data
 * is OFFSET..OFFSET+SIZE of the file.  0, or a negative errno with MSG:
 * -ENOENT (no such regular file), -ENOTUNIQ (the name is there more
 * than once: which one a tool reads is not the same in every tool),
 * -ELOOP (links too deep, or out of the archive).
 */
int tar_index_find(const struct tar_index *ix, const char *name, uint64_t *offset,
		   uint64_t *size, char *msg, size_t msgsize);

/* Is NAME a member (any type)? */
int tar_index_has(const struct tar_index *ix, const char *name);

void tar_index_free(struct tar_index *ix);

#endif
