/*
 * backup.c - --backup[=CONTROL] and --suffix, as GNU tar: an existing
 * non-directory about to be replaced by a member is first renamed to a
 * backup name beside it (NAME~, or NAME.~N~).
 *
 * Every look and every rename goes through the root's scoped calls
 * (se_root_lstat, se_root_openat, se_root_renameat with
 * RENAME_NOREPLACE): a backup never follows a symlink, never leaves DEST
 * and never replaces a file of its own name.
 */
#include "config.h"

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

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

bool backup_control(const char *word, enum backup_kind *kind)
{
	static const struct {
		const char *name;
		enum backup_kind kind;
	} words[] = {
		{ "none", BACKUP_NONE }, { "off", BACKUP_NONE },
		{ "simple", BACKUP_SIMPLE }, { "never", BACKUP_SIMPLE },
		{ "existing", BACKUP_EXISTING }, { "nil", BACKUP_EXISTING },
		{ "numbered", BACKUP_NUMBERED }, { "t", BACKUP_NUMBERED },
	};

	/* tar's default: $VERSION_CONTROL, else existing. */
	if (!word || !*word) {
		*kind = BACKUP_EXISTING;
		return true;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(word, words[i].name) == 0) {
			*kind = words[i].kind;
			return true;
		}
	}
	return false;
}

/*
 * The highest N of the NAME.~N~ beside PATH, read from its directory
 * opened with the root's scoping; 0 when there is none.
 */
static unsigned long highest_number(se_root *root, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *leaf = slash ? slash + 1 : path;
	char dir[4096];
	size_t len = strlen(leaf);
	unsigned long top = 0;
	struct dirent *d;
	DIR *dp;
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	fd = se_root_openat(root, dir, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return 0;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return 0;
	}
	while ((d = readdir(dp))) {
		const char *p = d->d_name;
		char *end;
		unsigned long n;

		if (strncmp(p, leaf, len) != 0 || strncmp(p + len, ".~", 2) != 0)
			continue;
		n = strtoul(p + len + 2, &end, 10);
		if (end != p + len + 2 && strcmp(end, "~") == 0 && n > top)
			top = n;
	}
	closedir(dp);
	return top;
}

int backup_existing(se_root *root, const char *path, enum backup_kind kind,
		    const char *suffix, char *backup, size_t cap)
{
	struct stat st;
	unsigned long n;
	int r;

	backup[0] = '\0';
	if (kind == BACKUP_NONE)
		return 0;
	r = se_root_lstat(root, path, &st);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	/* As tar: a directory is never renamed; the member merges into it. */
	if (S_ISDIR(st.st_mode))
		return 0;
	n = kind == BACKUP_SIMPLE ? 0 : highest_number(root, path);
	if (kind == BACKUP_NUMBERED || (kind == BACKUP_EXISTING && n > 0))
		r = snprintf(backup, cap, "%s.~%lu~", path, n + 1);
	else
		r = snprintf(backup, cap, "%s%s", path, suffix);
	if (r < 0 || (size_t)r >= cap) {
		backup[0] = '\0';
		return -ENAMETOOLONG;
	}
	/* A simple backup replaces the one before, as tar's rename does;
	 * a numbered one never replaces anything. */
	r = se_root_renameat(root, path, backup,
			     kind == BACKUP_SIMPLE || (kind == BACKUP_EXISTING && n == 0) ?
			     0 : RENAME_NOREPLACE);
	if (r < 0)
		backup[0] = '\0';
	return r < 0 ? r : 1;
}
