/*
 * extract.h - the run's one state struct and the extraction entry points.
 */
#ifndef SAFE_EXTRACT_EXTRACT_H
#define SAFE_EXTRACT_EXTRACT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "map.h"
#include "report.h"
#include "resolve.h"

/* Option bits; each weakening of the secure default is its own bit. */
#define OPT_LIST		(1u << 0)	/* -t */
#define OPT_VERBOSE		(1u << 1)	/* -v */
#define OPT_IN_ROOT		(1u << 2)	/* --in-root: follow links, inside DEST */
#define OPT_CROSS_MOUNTS	(1u << 3)	/* --cross-mounts */
#define OPT_DEVICES		(1u << 4)	/* --devices */
#define OPT_UNLINK		(1u << 5)	/* -U: remove a symlink in a dir's way */
#define OPT_KEEP_OLD		(1u << 6)	/* -k: never replace */
#define OPT_DURABLE		(1u << 7)	/* --durable: two syncfs */
#define OPT_SAME_OWNER		(1u << 8)	/* root default; --no-same-owner clears */
#define OPT_NUMERIC_OWNER	(1u << 9)	/* --numeric-owner */
#define OPT_SAME_PERMS		(1u << 10)	/* -p; root default */
#define OPT_XATTRS		(1u << 11)	/* --xattrs */
#define OPT_ACLS		(1u << 12)	/* --acls */
#define OPT_PROGRESS		(1u << 13)	/* --progress */
#define OPT_REQUIRE_KERNEL	(1u << 14)	/* --require-kernel-scoping */

/* Exit statuses (README.md, doc/safe-extract.1). */
enum exit_status {
	EXIT_ALL_EXTRACTED = 0,
	EXIT_SOME_REFUSED = 1,
	EXIT_FATAL = 2,
};

struct options {
	unsigned int flags;
	const char *archive;		/* NULL or "-": standard input */
	const char *dest;
	const char *report_path;
	int strip_components;
	char **includes;
	size_t n_includes;
	char **excludes;
	size_t n_excludes;
	/* --xattrs-include/--xattrs-exclude; no include: only "user.*". */
	char **xattr_includes;
	size_t n_xattr_includes;
	char **xattr_excludes;
	size_t n_xattr_excludes;
	const char *formats;		/* --format=LIST, or NULL */
};

/* Owner and mode as they will be applied, and why not all of them. */
struct owner_plan {
	bool set_owner;
	uid_t uid;
	gid_t gid;
	mode_t mode;			/* set-id bits only with the owner */
	const char *problem;		/* static reason, or NULL */
};

/* A directory whose metadata waits until its contents are in: one record
 * per directory, the last entry of that name wins. */
struct deferred_dir {
	char *path;
	struct owner_plan own;
	struct timespec times[2];
	void *xattrs;			/* struct attr_blob list, --xattrs/--acls */
	dev_t dev;			/* the directory this run made or found */
	ino_t ino;
};

/* --durable: a directory that holds pending renames, kept open so the
 * rename happens in the directory the temporary was made in. */
struct dir_handle {
	int fd;
	dev_t dev;
	ino_t ino;
};

/* --durable: a finished object under a temporary name, renamed at the end. */
struct pending {
	size_t dir;			/* index into run->dirh */
	char *leaf;			/* final name */
	char *path;			/* cleaned path, for later entries beneath it */
	char tmp[32];			/* temporary name in the same directory */
	char *name;			/* the entry's name, for the report */
	const char *type;		/* report type */
	bool cancelled;			/* a later entry of the name replaced it */
};

/* A temporary file that exists right now and must not outlive the run. */
struct live_tmp {
	int dirfd;
	char name[32];
};

struct run {
	struct options opt;
	struct resolver rs;
	struct report rep;
	struct archive *ar;
	struct source *src;		/* extract.c: the archive's bytes */
	uint64_t input_bytes;		/* read from the archive so far */
	mode_t umask;			/* the user's, applied by hand */
	bool is_root;

	struct deferred_dir *dirs;
	size_t n_dirs, cap_dirs;
	struct map dir_index;		/* path -> dirs[] */
	struct pending *pend;
	size_t n_pend, cap_pend;
	struct map pend_index;		/* "dev:ino/leaf" and "path" -> pend[] */
	struct dir_handle *dirh;
	size_t n_dirh, cap_dirh;
	struct map dirh_index;		/* "dev:ino" -> dirh[] */
	struct live_tmp tmp;		/* dirfd -1 when none */
	/* Inodes of multi-link files this run made: the only ones a later
	 * hardlink entry that carries data (cpio) may write into. */
	struct { dev_t dev; ino_t ino; } *linked;
	size_t n_linked, cap_linked;

	bool *pattern_hit;		/* one per opt.includes */
	char reason[512];		/* an outcome's reason built at run time */
	bool output_failed;		/* stdout or the report could not be written */
	bool warned_absolute;
	uint64_t entries, bytes;
	unsigned long refused, failed;
};

extern volatile sig_atomic_t se_interrupted;

/* Every catchable terminating signal: stop, remove temporaries, die by it. */
void extract_install_signals(void);

int extract_run(struct run *run);

/* Is NAME one of the formats --format= accepts? */
bool extract_format_known(const char *name);

#endif
