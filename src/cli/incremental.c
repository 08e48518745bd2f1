/*
 * incremental.c - restoring GNU tar's incremental dumps (-G, -g): a
 * directory record ('D' in the GNU format) carries the names the
 * directory held when it was dumped; what else is in that directory when
 * the record is extracted was removed since, and is removed now, as tar
 * does.  Renames the record lists ('R' then 'T', a cycle through tar's
 * 'X' stub) are done first.  As tar, nothing is done for a record whose
 * directory is not there yet: the entry makes it.
 *
 * Every look, rename and removal goes through the root's scoped calls:
 * the directory is opened with se_root_openat (never through a symlink,
 * never out of DEST), each name in it is looked at with se_root_lstat,
 * renamed with se_run_renameat and removed with se_run_remove_tree
 * (se_root_remove_tree's scoping: never following a symlink, never
 * crossing a mount, never removing the root), which keep the run's
 * deferred directory metadata true to what was renamed or removed.
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

/* Renamed or removed through the run when there is one, so that the
 * directory metadata it defers follows what is done here (the run would
 * otherwise look at the end for a directory this record took away). */
static int do_rename(se_root *root, const struct incr_ctx *c, const char *from, const char *to,
		     unsigned int flags)
{
	return c->run ? se_run_renameat(c->run, from, to, flags) :
			se_root_renameat(root, from, to, flags & ~SE_RENAME_MAKE_PARENTS);
}

static int do_remove(se_root *root, const struct incr_ctx *c, const char *path)
{
	return c->run ? se_run_remove_tree(c->run, path, 0) : se_root_remove_tree(root, path, 0);
}

/*
 * As tar's dumpdir_ok: 'T' follows each 'R' and nothing else does; an
 * empty side only after an 'X' (tar's temporary stub), one 'X' at a time.
 */
static bool dump_sane(const char *dump, size_t len)
{
	bool stub = false;
	char expect = 0;

	for (const char *p = dump; p < dump + len && *p; p += strlen(p) + 1) {
		if (expect && *p != expect)
			return false;
		switch (*p) {
		case 'X':
			if (stub)
				return false;
			stub = true;
			break;
		case 'R':
			if (!p[1]) {
				if (!stub)
					return false;
				stub = false;
			}
			expect = 'T';
			break;
		case 'T':
			if (expect != 'T' || (!p[1] && !stub))
				return false;
			expect = 0;
			break;
		}
	}
	return !expect;
}

/*
 * A name for tar's temporary stub in directory DIR (from the top of the
 * dump) that nothing holds now.  The rename to it is RENAME_NOREPLACE:
 * a name taken meanwhile fails, and the next is tried.
 */
static bool stub_name(const char *dir, unsigned int n, char *out, size_t cap)
{
	int k = *dir ? snprintf(out, cap, "%s/tar.%ld.%u", dir, (long)getpid(), n) :
		       snprintf(out, cap, "tar.%ld.%u", (long)getpid(), n);

	return k >= 0 && (size_t)k < cap;
}

/*
 * The renames the record lists, 'R' FROM then 'T' TO, names from the top
 * of the dump, each with the root's scoping.  A cycle of renames (a -> b
 * -> a) comes as tar writes it: 'X' DIR names the directory of a
 * temporary stub, the first rename's empty 'T' moves its directory to
 * the stub and the last one's empty 'R' moves the stub to its place.
 * 0, or the -errno of the first that failed, the rest not tried.
 */
static int renames(se_root *root, const char *dump, size_t len, const struct incr_ctx *c)
{
	char esc[1024], esc2[1024], stub[8192] = "", stub_dir[8192] = "";

	for (const char *p = dump; p < dump + len && *p; p += strlen(p) + 1) {
		const char *from, *to;
		int r = 0;

		if (*p == 'X') {
			snprintf(stub_dir, sizeof(stub_dir), "%s", p + 1);
			stub[0] = '\0';
			continue;
		}
		if (*p != 'R')
			continue;
		from = p + 1;
		p += strlen(p) + 1;
		if (p >= dump + len || *p != 'T')
			break;
		to = p + 1;
		if (!*to) {
			/* To the stub: a fresh name beside the cycle. */
			for (unsigned int n = 0; n < 100; n++) {
				if (!stub_name(stub_dir, n, stub, sizeof(stub))) {
					r = -ENAMETOOLONG;
					break;
				}
				r = do_rename(root, c, from, stub, RENAME_NOREPLACE);
				if (r != -EEXIST)
					break;
			}
			if (r < 0)
				stub[0] = '\0';
			to = stub;
		} else if (!*from) {
			from = stub;
			if (!*from)
				continue;	/* the stub was never made: said then */
			r = do_rename(root, c, from, to, SE_RENAME_MAKE_PARENTS);
			stub[0] = '\0';
		} else {
			/* As tar: into a directory the dump makes later, the
			 * rename makes it first (tar's rename_directory). */
			r = do_rename(root, c, from, to, SE_RENAME_MAKE_PARENTS);
		}
		/* -v says nothing of a rename that succeeds: tar lists the
		 * directory record and its removals ("Deleting"), and keeps
		 * "Renaming" for --backup.  One that fails, FROM missing
		 * among them (a level restored without the one before), is
		 * said as tar says it, and ends the record: what it lists is
		 * not what is there, so nothing of it is removed (tar's
		 * try_purge_directory). */
		if (r < 0) {
			se_escape(from, esc, sizeof(esc));
			se_escape(to, esc2, sizeof(esc2));
			cli_warn("Cannot rename '%s' to '%s': %s", esc, esc2, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* The names in directory FD, each ended by a NUL, then one more NUL; or
 * NULL (errno set).  FD is the caller's still. */
static char *names_of(int fd)
{
	char *names = NULL;
	size_t len = 0;
	struct dirent *d;
	FILE *f;
	DIR *dp;
	int dfd = dup(fd);

	if (dfd < 0)
		return NULL;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return NULL;
	}
	f = open_memstream(&names, &len);
	if (!f) {
		closedir(dp);
		return NULL;
	}
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			fwrite(d->d_name, 1, strlen(d->d_name) + 1, f);
	fputc('\0', f);
	closedir(dp);
	if (fclose(f) != 0) {
		free(names);
		return NULL;
	}
	return names;
}

int incremental_restore(se_root *root, struct archive *a, struct archive_entry *e,
			const char *dir, const struct incr_ctx *c)
{
	la_int64_t size = archive_entry_size(e);
	char *dump = NULL, *names = NULL, path[8192], shown[8192], esc[1024];
	const char *rec;
	size_t got = 0;
	int fd = -1, ret = 0, r;

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
	/* As tar (try_purge_directory): a directory that is not there now
	 * is made by the entry; nothing is renamed or removed for it, not
	 * even the renames its record lists (tar's rename04: a renamed
	 * directory restored where the old one is absent gets only what the
	 * dump holds).  Not a directory the root lets us into: the same. */
	fd = se_root_openat(root, *dir ? dir : ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		goto out;
	/* The names before the renames, as tar reads them: what a rename
	 * brings in is not this record's to remove. */
	names = names_of(fd);
	close(fd);
	if (!names) {
		ret = -errno;
		goto out;
	}
	if (!dump_sane(dump, got)) {
		cli_warn("%s: Malformed dumpdir: not restored incrementally",
			 se_escape(*dir ? dir : ".", esc, sizeof(esc)));
		ret = -EINVAL;
		goto out;
	}
	ret = renames(root, dump, got, c);
	/* As tar: after a rename that failed, what the record lists is not
	 * what is there; nothing is removed. */
	if (ret < 0)
		goto out;

	for (const char *n = names; *n; n += strlen(n) + 1) {
		const char *m;
		struct stat st;
		size_t mlen;
		int k;

		if (!child(dir, n, path, sizeof(path))) {
			if (!ret)
				ret = -ENAMETOOLONG;
			continue;
		}
		if (se_root_lstat(root, path, &st) < 0)
			continue;	/* renamed away, or gone */
		rec = dumpdir_find(dump, got, n);
		/* As tar: kept when the record lists it with its kind; 'N'
		 * (not dumped this time) keeps whatever is there. */
		if (rec && !(*rec == 'D' && !S_ISDIR(st.st_mode)) &&
		    !(*rec == 'Y' && S_ISDIR(st.st_mode)))
			continue;
		/* Named as tar names it: the member's name, then the entry
		 * ("./" and "dir" give "./dir"). */
		m = c->member ? c->member : dir;
		mlen = strlen(m);
		k = snprintf(shown, sizeof(shown), "%s%s%s", m,
			     mlen && m[mlen - 1] != '/' ? "/" : "", n);
		if (k < 0 || (size_t)k >= sizeof(shown))
			snprintf(shown, sizeof(shown), "%s", path);
		if (c->verbose)
			fprintf(c->out, "%s: Deleting '%s'\n", cli_program,
				se_escape(shown, esc, sizeof(esc)));
		r = do_remove(root, c, path);
		if (r < 0) {
			cli_warn("%s: Cannot remove: %s", se_escape(shown, esc, sizeof(esc)),
				 strerror(-r));
			if (!ret)
				ret = r;
		}
	}
out:
	free(names);
	free(dump);
	return ret;
}
