/*
 * image.h - an OCI image layout directory (image-spec image-layout.md):
 * the manifest chosen from index.json, its config, and its layers as
 * open, checked blobs, in order, for the run to apply one by one.
 *
 * Nothing from the layout is used before it is checked: every blob's
 * size and SHA-256 against its descriptor, every layer's decompressed
 * stream against the config's rootfs.diff_ids.
 */
#ifndef SAFE_EXTRACT_IMAGE_H
#define SAFE_EXTRACT_IMAGE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "tarindex.h"

/* "sha256:" and 64 lowercase hex digits, and the NUL. */
#define IMAGE_DIGEST_SIZE (7 + 64 + 1)

struct image_layer {
	int fd;				/* the blob, opened once, O_CLOEXEC; or
					 * the image archive's fd */
	uint64_t offset;		/* where the blob starts in fd */
	enum dec_kind kind;		/* DEC_NONE (tar), DEC_GZIP, DEC_ZSTD */
	uint64_t size;
	char digest[IMAGE_DIGEST_SIZE];	/* "" for a `docker save` layer.tar,
					 * checked by its diff_id alone */
	char diff_id[IMAGE_DIGEST_SIZE];
	char label[96];			/* the blob, as messages name it */
};

struct image {
	int dirfd;			/* the layout directory (O_PATH, O_CLOEXEC) */
	int blobs_fd;			/* blobs/sha256 */
	int archive_fd;			/* or the image archive holding it */
	struct tar_index ix;		/* and its members */
	char manifest[IMAGE_DIGEST_SIZE];
	struct image_layer *layers;
	size_t n_layers;
};

/*
 * Read the layout at DIRFD (the caller's; duplicated): oci-layout's
 * version, index.json, then the manifest TAG names (NULL: the only one,
 * or the one for PLATFORM, "os/arch[/variant]"), following nested
 * indexes, then that manifest and its config; open every layer's blob.
 * DIRFD may also be an uncompressed tar archive (a regular file) that
 * holds such a layout (oci-archive, `docker save` since Docker 25), or
 * `docker save`'s older manifest.json, whose TAG is one of an image's
 * RepoTags or what follows its last ':'.
 * Returns 0, or a negative errno with MSG saying what and which object
 * (-ENOENT: no such tag, -ENOTUNIQ: more than one candidate, named).
 */
int image_open(struct image *img, int dirfd, const char *tag, const char *platform,
	       char *msg, size_t msgsize);

/*
 * The first pass over layer I: its blob's size and digest, and the
 * digest of what it decompresses to against its diff_id, each byte read
 * once from the blob's fd (pread: the fd's offset is left at 0).
 * CANCELLED is the run's flag.  0, or -EILSEQ (a mismatch) or another
 * negative errno, with MSG.
 */
int image_verify_layer(struct image *img, size_t i, volatile sig_atomic_t *cancelled,
		       char *msg, size_t msgsize);

/* This machine's platform as an image names it ("linux/amd64",
 * "linux/arm/v7"), written to BUF. */
void image_platform(char *buf, size_t bufsize);

void image_free(struct image *img);

#endif
