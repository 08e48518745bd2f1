/* library.c - the smallest caller of libsafe-extract: extract ARCHIVE
 * into DEST in strict mode; the exit status is se_run_finish()'s. */
#include <archive.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <safe-extract.h>

int main(int argc, char **argv)
{
	se_root *root;
	se_run *run;
	struct archive *a;
	int fd, status;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ARCHIVE DEST\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	if (se_root_open(argv[2], 0, &root) != 0) {
		fprintf(stderr, "cannot open %s as the root\n", argv[2]);
		return 2;
	}
	run = se_run_new(root, 0);
	if (run == NULL || se_run_open_fd(run, fd, NULL, &a) != 0) {
		fprintf(stderr, "cannot start the run\n");
		return 2;
	}
	se_run_archive(run, a);
	archive_read_free(a);
	status = se_run_finish(run);
	se_run_free(run);
	se_root_close(root);
	close(fd);
	printf("libsafe-extract %s: status %d\n", se_version(), status);
	return status;
}
