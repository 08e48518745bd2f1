/*
 * incremental.c - restoring GNU tar's incremental dumps (-G, -g): a
 * directory record ('D' in the GNU format) carries the names the
 * directory held when it was dumped; what else is in that directory when
 * the record is extracted was removed since, and is removed now, as tar
 * does.  Renames the record lists ('R' then 'T') are done first.
 *
 * Every look, rename and removal goes through the root's scoped calls:
 * the directory is opened with se_root_openat (never through a symlink,
 * never out of DEST), each name in it is looked at from that fd without
 * following it, and removed with se_root_remove_tree, which never follows
 * a symlink, never crosses a mount and never removes the root.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <safe-extract.h>

#include "cli.h"

/* A directory record larger than this is not a directory's names. */
#define DUMPDIR_MAX (64u << 20)

/* The record of NAME among DUMP's Y, N and D entries, or NULL. */
static const char *dumpdir_find(const char *dump, size_t len, const char *name)
{
	for (const char *p = dump; p < dump + len && *p; p += strlen(p) + 1)
		if ((*p == 'Y' || *p == 'N' || *p == 'D') && strcmp(p + 1, name) == 0)
			return p;
	return NULL;
}

/* DIR/NAME into OUT, DIR "" for the root; false when it does not fit. */
static bool child(const char *dir, const char *name, char *out, size_t cap)
{
	int n = *dir ? snprintf(out, cap, "%s/%s", dir, name) : snprintf(out, cap, "%s", name);

	return n >= 0 && (size_t)n < cap;
}

/*
 * The renames the record lists, 'R' FROM then 'T' TO, names from the top
 * of the dump, each with the root's scoping.  0 or the first -errno.
 */
static int renames(se_root *root, const char *dump, size_t len)
{
	char esc[1024], esc2[1024];
	int ret = 0;

	for (const char *p = dump; p < dump + len && *p; p += strlen(p) + 1) {
		const char *from, *to;
		int r;

		if (*p != 'R')
			continue;
		from = p + 1;
		p += strlen(p) + 1;
		if (p >= dump + len || *p != 'T')
			break;
		to = p + 1;
		/* tar's temporary stubs ('X', an empty side) untangle a
		 * cycle of renames; such a dump is restored without them. */
		if (!*from || !*to)
			continue;
		r = se_root_renameat(root, from, to, 0);
		if (r == -ENOENT)
			continue;
		se_escape(from, esc, sizeof(esc));
		se_escape(to, esc2, sizeof(esc2));
		/* -v says nothing of a rename that succeeds: tar lists the
		 * directory record and its removals ("Deleting"), and keeps
		 * "Renaming" for --backup. */
		if (r < 0) {
			cli_warn("%s: Cannot rename to '%s': %s", esc, esc2, strerror(-r));
			if (!ret)
				ret = r;
		}
	}
	return ret;
}

int incremental_restore(se_root *root, struct archive *a, struct archive_entry *e,
			const char *dir, const struct incr_ctx *c)
{
	la_int64_t size = archive_entry_size(e);
	char *dump = NULL, path[8192], esc[1024];
	const char *rec;
	size_t got = 0;
	struct dirent *d;
	int fd, ret = 0, r;
	DIR *dp;

	if (archive_entry_filetype(e) != AE_IFDIR)
		return 0;
	/* A POSIX-format dump keeps the record in the pax header, which
	 * libarchive does not hand on: the library reads it again. */
	if (c->run && se_run_entry_dumpdir(c->run, a, &rec, &got) == 0) {
		dump = malloc(got + 1);
		if (!dump)
			return -ENOMEM;
		memcpy(dump, rec, got + 1);
		goto have_dump;
	}
	if (!archive_entry_size_is_set(e) || size <= 0)
		return 0;
	if ((uint64_t)size > DUMPDIR_MAX) {
		cli_warn("%s: a directory record of %lld bytes: not restored incrementally",
			 se_escape(dir, esc, sizeof(esc)), (long long)size);
		return -EFBIG;
	}
	/* The record is the entry's data: read here, before the library
	 * makes the directory and finds no data left to skip. */
	dump = malloc((size_t)size + 1);
	if (!dump)
		return -ENOMEM;
	while (got < (size_t)size) {
		la_ssize_t n = archive_read_data(a, dump + got, (size_t)size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	dump[got] = '\0';
have_dump:
	ret = renames(root, dump, got);
	/* As tar: after a rename that failed, what the record lists is not
	 * what is there; nothing is removed. */
	if (ret < 0) {
		free(dump);
		return ret;
	}

	fd = se_root_openat(root, *dir ? dir : ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		free(dump);
		/* Not there yet, or not a directory the root lets us into:
		 * nothing of it to remove. */
		return ret;
	}
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		free(dump);
		return ret ? ret : -errno;
	}
	while ((d = readdir(dp))) {
		struct stat st;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(dp), d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		rec = dumpdir_find(dump, got, d->d_name);
		/* As tar: kept when the record lists it with its kind; 'N'
		 * (not dumped this time) keeps whatever is there. */
		if (rec && !(*rec == 'D' && !S_ISDIR(st.st_mode)) &&
		    !(*rec == 'Y' && S_ISDIR(st.st_mode)))
			continue;
		if (!child(dir, d->d_name, path, sizeof(path))) {
			if (!ret)
				ret = -ENAMETOOLONG;
			continue;
		}
		if (c->verbose)
			fprintf(c->out, "%s: Deleting '%s'\n", cli_program, se_escape(path, esc, sizeof(esc)));
		r = se_root_remove_tree(root, path, 0);
		if (r < 0) {
			cli_warn("%s: Cannot remove: %s", se_escape(path, esc, sizeof(esc)), strerror(-r));
			if (!ret)
				ret = r;
		}
	}
	closedir(dp);
	free(dump);
	return ret;
}
