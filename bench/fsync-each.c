/*
 * fsync-each - the reference for --durable: dpkg's protocol for every
 * regular file of a tar archive (write it under a temporary name, fsync
 * it, rename it over the name), directories made as they come.  No name
 * checks at all: a benchmark baseline, never an extractor to use.
 *
 *   fsync-each ARCHIVE DEST
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct archive *a;
	struct archive_entry *e;
	char buf[65536], tmp[4200];
	int dest, r;

	if (argc != 3) {
		fprintf(stderr, "usage: fsync-each ARCHIVE DEST\n");
		return 2;
	}
	dest = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a = archive_read_new();
	archive_read_support_format_tar(a);
	archive_read_support_filter_all(a);
	if (dest < 0 || archive_read_open_filename(a, argv[1], 1 << 16) != ARCHIVE_OK) {
		fprintf(stderr, "fsync-each: cannot open %s or %s\n", argv[1], argv[2]);
		return 2;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		int fd;
		la_ssize_t n;

		if (archive_entry_filetype(e) == AE_IFDIR) {
			if (mkdirat(dest, name, 0755) < 0 && errno != EEXIST)
				return 1;
			continue;
		}
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		snprintf(tmp, sizeof(tmp), "%s.dpkg-new", name);
		fd = openat(dest, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return 1;
		while ((n = archive_read_data(a, buf, sizeof(buf))) > 0)
			if (write_all(fd, buf, (size_t)n) < 0)
				return 1;
		if (n < 0 || fsync(fd) < 0 || close(fd) < 0 ||
		    renameat(dest, tmp, dest, name) < 0)
			return 1;
	}
	archive_read_free(a);
	return r == ARCHIVE_EOF ? 0 : 1;
}
