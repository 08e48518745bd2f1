/*
 * tarindex.c - an uncompressed tar's members by name, as ranges of its
 * file.
 *
 * libarchive parses the headers (ustar, pax, GNU long names): the data
 * of a member starts where its reader stands once the header is read,
 * and runs for the member's size.  The archive is read with pread from a
 * position of our own, so the caller's fd offset never moves and the
 * data ranges are never read here, only skipped.
 *
 * Names are untrusted: each is reduced lexically ("./a//b" is "a/b");
 * one that climbs out of the archive's top ("../x") is left out of the
 * index, never matched.  Links are followed only to other members,
 * lexically, a few hops at most: the file system is never involved.  A
 * name that appears twice is refused when it is asked for, because tar
 * readers do not agree on which copy wins (the later one for GNU tar,
 * the first for some library readers), and an image read by another
 * tool must not be a different image.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tarindex.h"

#define MEMBERS_MAX 100000
#define NAME_MAX_LEN 4096
#define LINK_HOPS_MAX 8
#define READ_BLOCK (64 * 1024)

enum member_type { M_FILE, M_SYMLINK, M_HARDLINK, M_SPARSE, M_OTHER };

struct tar_member {
	char *name;
	char *target;			/* a link's, lexically reduced; or NULL */
	enum member_type type;
	bool dup;			/* another member has the same name */
	uint64_t offset, size;
};

struct reader {
	int fd;
	off_t pos, size;
	unsigned char buf[READ_BLOCK];
};

static la_ssize_t ix_read(struct archive *a, void *data, const void **buf)
{
	struct reader *rd = data;
	ssize_t n;

	do
		n = pread(rd->fd, rd->buf, sizeof(rd->buf), rd->pos);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		archive_set_error(a, errno, "cannot read the archive");
		return -1;
	}
	rd->pos += n;
	*buf = rd->buf;
	return n;
}

/* Data is skipped, never read: only the headers are parsed. */
static la_int64_t ix_skip(struct archive *a, void *data, la_int64_t request)
{
	struct reader *rd = data;
	off_t to = request > rd->size - rd->pos ? rd->size : rd->pos + (off_t)request;
	off_t from = rd->pos;

	(void)a;
	if (to < from)
		return 0;
	rd->pos = to;
	return to - from;
}

/*
 * NAME reduced in place: no "." component, no empty one, ".." taking
 * the one before it away.  False when it climbs above the top, or is
 * empty.  DIR, when not NULL, is the directory NAME is relative to (a
 * symlink's), joined first into OUT.
 */
static bool reduce(const char *dir, const char *name, char *out, size_t cap)
{
	char buf[2 * NAME_MAX_LEN + 2];
	size_t len = 0;
	char *save = NULL, *c;

	if (snprintf(buf, sizeof(buf), "%s%s%s", dir ? dir : "", dir && dir[0] ? "/" : "",
		     name) >= (int)sizeof(buf))
		return false;
	out[0] = '\0';
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash;

			if (len == 0)
				return false;
			slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		if (len + (len ? 1 : 0) + strlen(c) + 1 > cap)
			return false;
		if (len)
			out[len++] = '/';
		memcpy(out + len, c, strlen(c) + 1);
		len += strlen(c);
	}
	return len > 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct tar_member *)a)->name, ((const struct tar_member *)b)->name);
}

/* Add the member E (whose data starts at OFFSET) to IX. */
static int add(struct tar_index *ix, size_t *cap, struct archive_entry *e, uint64_t offset)
{
	char name[NAME_MAX_LEN + 1], target[NAME_MAX_LEN + 1];
	const char *path = archive_entry_pathname(e);
	const char *hard = archive_entry_hardlink(e), *sym = archive_entry_symlink(e);
	struct tar_member *m;

	/* A name out of the top, or no name: in no lookup's reach. */
	if (!path || !reduce(NULL, path, name, sizeof(name)))
		return 0;
	if (ix->n == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct tar_member *p = realloc(ix->members, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		ix->members = p;
		*cap = n;
	}
	m = &ix->members[ix->n];
	memset(m, 0, sizeof(*m));
	if (hard) {
		m->type = M_HARDLINK;
		/* A hardlink's target is a member's name, from the top. */
		if (!reduce(NULL, hard, target, sizeof(target)))
			target[0] = '\0';
	} else if (archive_entry_filetype(e) == AE_IFLNK && sym) {
		char dir[NAME_MAX_LEN + 1];
		char *slash;

		m->type = M_SYMLINK;
		snprintf(dir, sizeof(dir), "%s", name);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			dir[0] = '\0';
		/* Absolute, or out of the top: a target no lookup reaches. */
		if (sym[0] == '/' || !reduce(dir, sym, target, sizeof(target)))
			target[0] = '\0';
	} else if (archive_entry_filetype(e) == AE_IFREG) {
		m->type = archive_entry_sparse_count(e) > 0 ? M_SPARSE : M_FILE;
		m->offset = offset;
		m->size = (uint64_t)archive_entry_size(e);
	} else {
		m->type = M_OTHER;
	}
	m->name = strdup(name);
	if (!m->name)
		return -ENOMEM;
	if (m->type == M_HARDLINK || m->type == M_SYMLINK) {
		m->target = strdup(target);
		if (!m->target) {
			free(m->name);
			return -ENOMEM;
		}
	}
	ix->n++;
	return 0;
}

int tar_index_build(struct tar_index *ix, int fd, char *msg, size_t msgsize)
{
	struct archive *a = NULL;
	struct archive_entry *e;
	struct reader *rd = NULL;
	struct stat st;
	size_t cap = 0;
	int r = 0;

	memset(ix, 0, sizeof(*ix));
	msg[0] = '\0';
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, msgsize, "an image archive must be a regular file (it is read by offset, its index often last)");
		return -EINVAL;
	}
	rd = malloc(sizeof(*rd));
	a = archive_read_new();
	if (!rd || !a) {
		r = -ENOMEM;
		goto out;
	}
	rd->fd = fd;
	rd->pos = 0;
	rd->size = st.st_size;
	/* Tar alone, and no filter: a compressed archive cannot be read
	 * by offset. */
	archive_read_support_format_tar(a);
	archive_read_set_callback_data(a, rd);
	archive_read_set_read_callback(a, ix_read);
	archive_read_set_skip_callback(a, ix_skip);
	if (archive_read_open1(a) != ARCHIVE_OK) {
		snprintf(msg, msgsize, "not an uncompressed tar archive (%s); a compressed image archive must be decompressed first",
			 archive_error_string(a) ? archive_error_string(a) : "unknown format");
		r = -EILSEQ;
		goto out;
	}
	for (;;) {
		int k = archive_read_next_header(a, &e);
		la_int64_t at;

		if (k == ARCHIVE_EOF)
			break;
		if (k != ARCHIVE_OK && k != ARCHIVE_WARN) {
			snprintf(msg, msgsize, "cannot read the archive's member %zu: %s", ix->n + 1,
				 archive_error_string(a) ? archive_error_string(a) : "damaged");
			r = -EILSEQ;
			goto out;
		}
		if (archive_filter_count(a) != 1 || archive_format(a) == 0 ||
		    (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) != ARCHIVE_FORMAT_TAR) {
			snprintf(msg, msgsize, "not an uncompressed tar archive");
			r = -EILSEQ;
			goto out;
		}
		if (ix->n == MEMBERS_MAX) {
			snprintf(msg, msgsize, "more than %d members in the image archive", MEMBERS_MAX);
			r = -E2BIG;
			goto out;
		}
		/* Where the format reader stands: the first byte of the
		 * member's data (its headers, pax ones too, consumed). */
		at = archive_filter_bytes(a, 0);
		if (at < 0 || at > st.st_size || archive_entry_size(e) < 0 ||
		    archive_entry_size(e) > st.st_size - at) {
			snprintf(msg, msgsize, "member %zu: its data is not within the archive (truncated?)",
				 ix->n + 1);
			r = -EILSEQ;
			goto out;
		}
		r = add(ix, &cap, e, (uint64_t)at);
		if (r < 0)
			goto out;
	}
	if (ix->n)
		qsort(ix->members, ix->n, sizeof(*ix->members), by_name);
	for (size_t i = 1; i < ix->n; i++)
		if (strcmp(ix->members[i - 1].name, ix->members[i].name) == 0)
			ix->members[i - 1].dup = ix->members[i].dup = true;
out:
	if (a)
		archive_read_free(a);
	free(rd);
	if (r < 0)
		tar_index_free(ix);
	return r;
}

static const struct tar_member *lookup(const struct tar_index *ix, const char *name)
{
	struct tar_member key = { .name = (char *)name };

	return ix->n ? bsearch(&key, ix->members, ix->n, sizeof(key), by_name) : NULL;
}

int tar_index_has(const struct tar_index *ix, const char *name)
{
	char n[NAME_MAX_LEN + 1];

	return reduce(NULL, name, n, sizeof(n)) && lookup(ix, n) != NULL;
}

int tar_index_find(const struct tar_index *ix, const char *name, uint64_t *offset,
		   uint64_t *size, char *msg, size_t msgsize)
{
	char n[NAME_MAX_LEN + 1], b[256];
	const struct tar_member *m;

	if (!reduce(NULL, name, n, sizeof(n))) {
		snprintf(msg, msgsize, "member '%s': not a name inside the archive",
			 se_escape(name, b, sizeof(b)));
		return -ENOENT;
	}
	for (int hop = 0;; hop++) {
		m = lookup(ix, n);
		if (!m) {
			snprintf(msg, msgsize, "no member '%s' in the image archive",
				 se_escape(n, b, sizeof(b)));
			return -ENOENT;
		}
		if (m->dup) {
			snprintf(msg, msgsize, "member '%s' is in the image archive more than once: refused, tools differ on which one is read",
				 se_escape(n, b, sizeof(b)));
			return -ENOTUNIQ;
		}
		switch (m->type) {
		case M_FILE:
			*offset = m->offset;
			*size = m->size;
			return 0;
		case M_SYMLINK:
		case M_HARDLINK:
			if (!m->target[0] || hop == LINK_HOPS_MAX) {
				snprintf(msg, msgsize, "member '%s': a link %s", se_escape(n, b, sizeof(b)),
					 m->target[0] ? "chain too long" : "out of the archive");
				return -ELOOP;
			}
			snprintf(n, sizeof(n), "%s", m->target);
			continue;
		case M_SPARSE:
			snprintf(msg, msgsize, "member '%s' is a sparse file: its data is not one range",
				 se_escape(n, b, sizeof(b)));
			return -EINVAL;
		default:
			snprintf(msg, msgsize, "member '%s' is not a regular file",
				 se_escape(n, b, sizeof(b)));
			return -EINVAL;
		}
	}
}

void tar_index_free(struct tar_index *ix)
{
	for (size_t i = 0; i < ix->n; i++) {
		free(ix->members[i].name);
		free(ix->members[i].target);
	}
	free(ix->members);
	memset(ix, 0, sizeof(*ix));
}
