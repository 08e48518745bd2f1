/*
 * place.c - temporaries, and putting a finished object at its name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compat.h"
#include "sha256.h"
#include "write.h"


/* Errors that say the destination, not the entry, is unusable. */
bool dest_unusable(int err)
{
	return err == ENOSPC || err == EDQUOT || err == EROFS || err == EIO ||
	       err == ENOMEM || err == EMFILE || err == ENFILE;
}


/*
 * Turn a resolution or creation error into the entry's outcome.  Policy
 * errors are refusals; anything else is a failure; a broken destination
 * stops the run.
 */
struct outcome resolve_outcome(se_run *run, int err)
{
	struct outcome o;

	switch (err) {
	case ELOOP:
		return refuse(run->rs->in_root ?
			      "path crosses a magic link or too many symlinks" :
			      "path crosses a symlink", err);
	case EXDEV:
		return refuse("path leaves the destination or crosses a mount point",
			      err);
	case ENOTDIR:
		return refuse("a path component is not a directory", err);
	case ENAMETOOLONG:
		return refuse("name too long", err);
	case EAGAIN:
		return refuse("the destination kept changing during lookup", err);
	case ENOENT:
		return fail("a path component does not exist", err);
	default:
		o = fail("cannot create", err);
		o.fatal = dest_unusable(err);
		if (o.fatal)
			o.reason = "destination unusable";
		return o;
	}
}


/* An entry whose name exists, under SE_OPT_KEEP_OLD (refused: tar -k) or
 * SE_OPT_SKIP_OLD (skipped quietly: tar --skip-old-files). */
struct outcome kept_old(se_run *run)
{
	if (run->opts & SE_OPT_SKIP_OLD)
		return (struct outcome){ SE_SKIPPED, "exists (--skip-old-files)", 0, false };
	return refuse("exists and --keep-old-files is set", EEXIST);
}

/*
 * SE_OPT_KEEP_NEWER (tar --keep-newer-files): is LEAF in DIRFD a
 * non-directory at least as new as entry E?  Then it is kept.
 */
static bool newer_exists(se_run *run, struct archive_entry *e, int dirfd, const char *leaf)
{
	struct stat st;
	time_t sec;
	long nsec;

	if (!(run->opts & SE_OPT_KEEP_NEWER) || !archive_entry_mtime_is_set(e))
		return false;
	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
		return false;
	sec = archive_entry_mtime(e);
	nsec = archive_entry_mtime_nsec(e);
	return st.st_mtim.tv_sec > sec ||
	       (st.st_mtim.tv_sec == sec && st.st_mtim.tv_nsec >= nsec);
}

/*
 * The scoped parent of PATH, made when missing, for a new non-directory
 * entry E; -1 with *O set when the entry ends here: a pending --durable
 * file stands where a directory of PATH goes, the resolution refused, or
 * (--keep-newer-files) a newer object is kept.
 */
int entry_parent(se_run *run, struct archive_entry *e, const char *path,
		 const char **leaf, struct outcome *o)
{
	int dirfd;

	if (pending_blocks(run, path)) {
		*o = resolve_outcome(run, ENOTDIR);
		return -1;
	}
	dirfd = rs_open_parent(run->rs, path, true, 0777 & ~run->umask, leaf);
	if (dirfd < 0) {
		*o = resolve_outcome(run, -dirfd);
		return -1;
	}
	if (newer_exists(run, e, dirfd, *leaf)) {
		close(dirfd);
		*o = (struct outcome){ SE_SKIPPED,
			"existing file is newer or the same age (--keep-newer-files)", 0, false };
		return -1;
	}
	return dirfd;
}

/*
 * Temporary names nobody can predict, in the entry's own directory: the
 * first bytes of SHA-256(run key, number).  One getrandom() per run for
 * the key rather than one per file; seeing earlier names tells nothing
 * about the next.  Numbers are handed out by the run's thread, so that a
 * writer thread can make the name of the number it was given.
 */
uint64_t tmp_reserve(se_run *run, unsigned int n)
{
	uint64_t first = run->tmp_seq;

	if (!run->tmp_keyed) {
		if (getrandom(run->tmp_key, sizeof(run->tmp_key), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(run->tmp_key)) {
			/* No entropy yet (early boot): a clock and the pid.
			 * The name need not be secret: O_EXCL|O_NOFOLLOW and
			 * the retries in create_tmp() make a guessed or
			 * planted name harmless. */
			struct timespec ts;
			uint64_t v;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) *
			    2654435761u ^ (uint64_t)getpid() << 40;
			memcpy(run->tmp_key, &v, sizeof(v));
		}
		run->tmp_keyed = true;
	}
	run->tmp_seq += n;
	return first;
}

void tmp_name_at(const se_run *run, uint64_t seq, char out[32])
{
	unsigned char rnd[32], block[40];
	static const char hex[] = "0123456789abcdef";
	size_t o = sizeof(TMP_PREFIX) - 1;
	struct sha256 sh;

	memcpy(block, run->tmp_key, sizeof(run->tmp_key));
	memcpy(block + sizeof(run->tmp_key), &seq, sizeof(seq));
	sha256_init(&sh);
	sha256_update(&sh, block, sizeof(block));
	sha256_final(&sh, rnd);
	memcpy(out, TMP_PREFIX, o);
	for (size_t i = 0; i < 6; i++) {
		out[o++] = hex[rnd[i] >> 4];
		out[o++] = hex[rnd[i] & 0xf];
	}
	out[o] = '\0';
}

void tmp_name(se_run *run, char out[32])
{
	tmp_name_at(run, tmp_reserve(run, 1), out);
}

/* Create a new temporary file in DIRFD with the names of numbers SEQ to
 * SEQ + TMP_TRIES - 1: O_EXCL|O_NOFOLLOW, so a name planted under us is
 * never opened.  Safe in a writer thread. */
int create_tmp_at(const se_run *run, uint64_t seq, int dirfd, char tmp[32],
		  mode_t mode)
{
	int fd;

	for (unsigned int tries = 0;; tries++) {
		tmp_name_at(run, seq + tries, tmp);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, mode & 0777);
		if (fd >= 0 || errno != EEXIST || tries + 1 >= TMP_TRIES)
			return fd < 0 ? -errno : fd;
	}
}

int create_tmp(se_run *run, int dirfd, char tmp[32], mode_t mode)
{
	return create_tmp_at(run, tmp_reserve(run, TMP_TRIES), dirfd, tmp, mode);
}


/* ---- putting a finished object at its name ---------------------------- */

/*
 * An empty directory stands where a non-directory goes: GNU tar and bsdtar
 * replace it, so do we (one component in a scoped parent, never followed).
 * A non-empty one is refused and keeps its contents.
 */
int remove_empty_dir(se_run *run, int dirfd, const char *leaf,
			    const char *path)
{
	if (unlinkat(dirfd, leaf, AT_REMOVEDIR) < 0)
		return -errno;
	dir_forget(run, path);
	return 0;
}


struct outcome dir_in_way(int err)
{
	if (err == ENOTEMPTY || err == EEXIST)
		return refuse("a non-empty directory is in the way", ENOTEMPTY);
	return fail("cannot remove the empty directory in the way", err);
}


/*
 * Rename the temporary TMP over LEAF in DIRFD (PATH: its cleaned path, for
 * the directory records).  A file, symlink or hardlink in the way is
 * replaced (never written through); an empty directory too; a non-empty
 * one is not.  On file systems without RENAME_NOREPLACE (NFS, CephFS, 9p
 * answer EINVAL), -k is kept with link-then-unlink, which fails on an
 * existing name the way NOREPLACE does.
 */
struct outcome place(se_run *run, int dirfd, const char *tmp,
			    const char *leaf, const char *path)
{
	bool keep = run->opts & SE_OPT_KEEP_OLD;
	bool existed = false;
	struct stat st;
	int err;

	for (int tries = 0;; tries++) {
		if (renameat2(dirfd, tmp, dirfd, leaf, RENAME_NOREPLACE) == 0)
			return ok(existed ? SE_REPLACED : SE_CREATED);
		err = errno;
		if (err == EINVAL || err == ENOSYS)
			break;
		if (err != EEXIST || tries > 0) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(run, err);
		}
		if (keep) {
			unlinkat(dirfd, tmp, 0);
			return kept_old(run);
		}
		existed = true;
		if (renameat(dirfd, tmp, dirfd, leaf) == 0) {
			/* rename(2) does nothing when both names are one
			 * inode (a hardlink onto itself): the temporary
			 * would stay behind. */
			unlinkat(dirfd, tmp, 0);
			return ok(SE_REPLACED);
		}
		err = errno;
		if (err != EISDIR && err != ENOTEMPTY && err != EEXIST) {
			unlinkat(dirfd, tmp, 0);
			return resolve_outcome(run, err);
		}
		err = remove_empty_dir(run, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
		/* and once more with NOREPLACE: the name is free now */
	}

	/* No RENAME_NOREPLACE here. */
	existed = fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (existed && S_ISDIR(st.st_mode)) {
		if (keep) {
			unlinkat(dirfd, tmp, 0);
			return kept_old(run);
		}
		err = remove_empty_dir(run, dirfd, leaf, path);
		if (err) {
			unlinkat(dirfd, tmp, 0);
			return dir_in_way(-err);
		}
	}
	if (keep) {
		if (linkat(dirfd, tmp, dirfd, leaf, 0) < 0) {
			err = errno;
			unlinkat(dirfd, tmp, 0);
			if (err == EEXIST)
				return kept_old(run);
			return fail("cannot create without replacing (no RENAME_NOREPLACE or hard links here)",
				    err);
		}
		unlinkat(dirfd, tmp, 0);
		return ok(SE_CREATED);
	}
	if (renameat(dirfd, tmp, dirfd, leaf) < 0) {
		err = errno;
		unlinkat(dirfd, tmp, 0);
		return resolve_outcome(run, err);
	}
	unlinkat(dirfd, tmp, 0);
	return ok(existed ? SE_REPLACED : SE_CREATED);
}


void live_tmp_set(se_run *run, int dirfd, const char *name)
{
	run->tmp.dirfd = dirfd;
	snprintf(run->tmp.name, sizeof(run->tmp.name), "%s", name);
}


void live_tmp_clear(se_run *run)
{
	run->tmp.dirfd = -1;
	run->tmp.name[0] = '\0';
}
