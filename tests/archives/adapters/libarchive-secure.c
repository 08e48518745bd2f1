/*
 * libarchive-secure.c - extract with libarchive's archive_write_disk and
 * the flags bsdtar uses by default, as package managers and other
 * programs built on libarchive do: read entries with archive_read_*,
 * write them with archive_write_header/archive_write_data_block in the
 * current directory (DEST), and let libarchive's checks refuse what they
 * refuse.  An adapter of the hostile corpus (README.md):
 *
 *   libarchive-secure [--strip-components=N] ARCHIVE DEST
 *
 * Exit status: 0 all extracted, 1 some entries refused or failed, 2 the
 * archive broke off or could not be opened.
 */
#include <archive.h>
#include <archive_entry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bsdtar's defaults (tar/bsdtar.c), and what it adds when run as root. */
static const int secure_flags =
	ARCHIVE_EXTRACT_TIME |
	ARCHIVE_EXTRACT_SECURE_SYMLINKS |	/* no writing through a symlink */
	ARCHIVE_EXTRACT_SECURE_NODOTDOT |	/* no '..' component */
	ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS;	/* no leading '/' */
static const int root_flags =
	ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_ACL |
	ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_FFLAGS |
	ARCHIVE_EXTRACT_MAC_METADATA;

/* NAME without its first N components, as GNU tar strips them; NULL when
 * nothing is left.  What follows is kept verbatim (x//tmp/a: //tmp/a). */
static const char *strip(const char *name, int n)
{
	const char *p = name;

	for (int i = 0; i < n; i++) {
		while (*p == '/')
			p++;
		p = strchr(p, '/');
		if (p == NULL)
			return NULL;
	}
	return p[strspn(p, "/")] == '\0' ? NULL : p;
}

static int copy_data(struct archive *in, struct archive *out)
{
	const void *buf;
	size_t size;
	la_int64_t offset;
	int r;

	for (;;) {
		r = archive_read_data_block(in, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			return ARCHIVE_OK;
		if (r < ARCHIVE_WARN)
			return r;
		if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN)
			return ARCHIVE_FAILED;
	}
}

int main(int argc, char **argv)
{
	struct archive *in, *out;
	struct archive_entry *entry;
	int strip_n = 0, status = 0, r;

	if (argc == 2 && strcmp(argv[1], "--probe") == 0) {
		printf("%s, archive_write_disk with bsdtar's secure flags\n",
		       archive_version_details());
		return 0;
	}
	if (argc > 1 && strncmp(argv[1], "--strip-components=", 19) == 0) {
		strip_n = atoi(argv[1] + 19);
		argc--;
		argv++;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: libarchive-secure [--strip-components=N] ARCHIVE DEST\n");
		return 2;
	}

	in = archive_read_new();
	archive_read_support_filter_all(in);
	archive_read_support_format_all(in);
	if (archive_read_open_filename(in, argv[1], 10240) != ARCHIVE_OK) {
		fprintf(stderr, "libarchive-secure: %s: %s\n", argv[1],
			archive_error_string(in));
		return 2;
	}
	if (chdir(argv[2]) != 0) {
		perror(argv[2]);
		return 2;
	}
	out = archive_write_disk_new();
	archive_write_disk_set_options(out, secure_flags |
				       (geteuid() == 0 ? root_flags : 0));
	archive_write_disk_set_standard_lookup(out);

	for (;;) {
		r = archive_read_next_header(in, &entry);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			fprintf(stderr, "libarchive-secure: %s\n",
				archive_error_string(in));
			status = 2;
			break;
		}
		if (strip_n > 0) {
			const char *name = strip(archive_entry_pathname(entry), strip_n);
			const char *link = archive_entry_hardlink(entry);

			if (name == NULL)
				continue;
			archive_entry_copy_pathname(entry, name);
			if (link != NULL) {
				link = strip(link, strip_n);
				if (link == NULL)
					continue;
				archive_entry_copy_hardlink(entry, link);
			}
		}
		r = archive_write_header(out, entry);
		if (r < ARCHIVE_OK) {
			fprintf(stderr, "libarchive-secure: %s: %s\n",
				archive_entry_pathname(entry),
				archive_error_string(out));
			status = 1;
		}
		if (r >= ARCHIVE_WARN && archive_entry_size(entry) > 0 &&
		    copy_data(in, out) < ARCHIVE_WARN) {
			fprintf(stderr, "libarchive-secure: %s: %s\n",
				archive_entry_pathname(entry),
				archive_error_string(out));
			status = 1;
		}
		if (archive_write_finish_entry(out) < ARCHIVE_WARN)
			status = 1;
	}
	if (archive_write_close(out) < ARCHIVE_WARN && status == 0)
		status = 1;
	archive_write_free(out);
	archive_read_free(in);
	return status;
}
