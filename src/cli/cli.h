/*
 * cli.h - the safe-extract command: what main() parsed, and the run that
 * uses only the public library API (<safe-extract.h>).
 */
#ifndef SAFE_EXTRACT_CLI_H
#define SAFE_EXTRACT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Option bits; each weakening of the secure default is its own bit. */
#define CLI_LIST		(1u << 0)	/* -t */
#define CLI_VERBOSE		(1u << 1)	/* -v */
#define CLI_IN_ROOT		(1u << 2)	/* --in-root: follow links, inside DEST */
#define CLI_CROSS_MOUNTS	(1u << 3)	/* --cross-mounts */
#define CLI_DEVICES		(1u << 4)	/* --devices */
#define CLI_UNLINK		(1u << 5)	/* -U: remove a symlink in a dir's way */
#define CLI_KEEP_OLD		(1u << 6)	/* -k: never replace */
#define CLI_DURABLE		(1u << 7)	/* --durable: two syncfs */
#define CLI_SAME_OWNER		(1u << 8)	/* root default; --no-same-owner clears */
#define CLI_NUMERIC_OWNER	(1u << 9)	/* --numeric-owner */
#define CLI_SAME_PERMS		(1u << 10)	/* -p; root default */
#define CLI_XATTRS		(1u << 11)	/* --xattrs */
#define CLI_ACLS		(1u << 12)	/* --acls */
#define CLI_PROGRESS		(1u << 13)	/* --progress */
#define CLI_REQUIRE_KERNEL	(1u << 14)	/* --require-kernel-scoping */
#define CLI_PRINT_RESOLVER	(1u << 15)	/* --print-resolver */
#define CLI_NO_SANDBOX		(1u << 16)	/* --no-sandbox: a weakening */
#define CLI_REQUIRE_SANDBOX	(1u << 17)	/* --require-sandbox */
#define CLI_PRINT_SANDBOX	(1u << 18)	/* --print-sandbox */
#define CLI_RECOVER		(1u << 30)	/* --recover */
#define CLI_SKIP_OLD		(1u << 19)	/* --skip-old-files */
#define CLI_TOUCH		(1u << 20)	/* -m, --touch */
#define CLI_NO_OVERWRITE_DIR	(1u << 21)	/* --no-overwrite-dir */
#define CLI_KEEP_NEWER		(1u << 22)	/* --keep-newer-files */
#define CLI_TO_STDOUT		(1u << 23)	/* -O, --to-stdout */
#define CLI_NO_WILDCARDS	(1u << 24)	/* --no-wildcards */
#define CLI_IGNORE_ZEROS	(1u << 25)	/* -i, --ignore-zeros */
#define CLI_KEEP_DIR_SYMLINK	(1u << 26)	/* --keep-directory-symlink: a weakening */
#define CLI_LONG_LISTING	(1u << 27)	/* -vv: tar's long listing */
#define CLI_SHOW_TRANSFORMED	(1u << 28)	/* --show-transformed-names */
#define CLI_INCREMENTAL		(1u << 29)	/* -G, -g: restore a GNU incremental dump */
#define CLI_OCI_LAYER		(1u << 31)	/* --oci-layer: whiteouts applied, in-root */

/* --warning=KEYWORD: GNU tar's keywords, one bit each.  Only some name a
 * message this command can print; the others are accepted so that a
 * command line written for tar runs. */
enum cli_warning {
	WARN_ALONE_ZERO_BLOCK = 1u << 0,
	WARN_BAD_DUMPDIR = 1u << 1,
	WARN_CACHEDIR = 1u << 2,
	WARN_CONTIGUOUS_CAST = 1u << 3,
	WARN_FILE_CHANGED = 1u << 4,
	WARN_FILE_IGNORED = 1u << 5,
	WARN_FILE_REMOVED = 1u << 6,
	WARN_FILE_SHRANK = 1u << 7,
	WARN_FILE_UNCHANGED = 1u << 8,
	WARN_FILENAME_WITH_NULS = 1u << 9,
	WARN_IGNORE_ARCHIVE = 1u << 10,
	WARN_IGNORE_NEWER = 1u << 11,	/* --keep-newer-files kept a file */
	WARN_NEW_DIRECTORY = 1u << 12,
	WARN_RENAME_DIRECTORY = 1u << 13,
	WARN_SYMLINK_CAST = 1u << 14,
	WARN_TIMESTAMP = 1u << 15,
	WARN_UNKNOWN_CAST = 1u << 16,
	WARN_UNKNOWN_KEYWORD = 1u << 17,
	WARN_XDEV = 1u << 18,
	WARN_DECOMPRESS_PROGRAM = 1u << 19,	/* -z and the data is not gzip */
	WARN_EXISTING_FILE = 1u << 20,	/* --skip-old-files kept a file */
	WARN_XATTR_WRITE = 1u << 21,
	WARN_RECORD_SIZE = 1u << 22,
	WARN_FAILED_READ = 1u << 23,
	WARN_MISSING_ZERO_BLOCKS = 1u << 24,
	WARN_EMPTY_TRANSFORM = 1u << 25,
	WARN_ALL = (1u << 26) - 1,
	/* On with -v unless a --warning said otherwise, as in tar. */
	WARN_VERBOSE = WARN_NEW_DIRECTORY | WARN_RENAME_DIRECTORY |
		       WARN_DECOMPRESS_PROGRAM | WARN_EXISTING_FILE,
};

/* Exit statuses (README.md, doc/safe-extract.1). */
enum exit_status {
	EXIT_ALL_EXTRACTED = 0,
	EXIT_SOME_REFUSED = 1,
	EXIT_FATAL = 2,
};

/* --backup=CONTROL, as GNU tar (and GNU cp, mv). */
enum backup_kind {
	BACKUP_NONE,
	BACKUP_SIMPLE,			/* NAME~ (--suffix) */
	BACKUP_EXISTING,		/* numbered if NAME.~N~ are there, else simple */
	BACKUP_NUMBERED,		/* NAME.~N~ */
};

struct list {
	char **v;
	size_t n;
};

struct cli_options {
	unsigned int flags;
	const char *archive;		/* NULL or "-": standard input */
	const char *image;		/* --oci-image=DIR[:TAG], or NULL */
	const char *dest;
	const char *report_path;
	const char *formats;		/* --format=LIST, or NULL */
	const char *resolver;		/* SAFE_EXTRACT_RESOLVER, or NULL */
	const char *member;		/* --member=NAME: extract that member's archive */
	const char *compress;		/* -z, -J ...: the compression the user named */
	const char *top_level;		/* --one-top-level[=DIR]: "" for the default */
	int strip_components;
	unsigned int jobs;		/* --jobs=N, or 0: the CPUs */
	uint64_t xz_memory;		/* --xz-memory, bytes, or 0: the default */
	mode_t umask;			/* the user's, applied by the library */
	/* --map-ids, --map-uids, --map-gids, in order; the text for messages. */
	struct cli_id_map {
		unsigned int which;	/* SE_MAP_UID | SE_MAP_GID */
		uint32_t container_id, host_id, count;
		const char *arg;	/* "--map-ids=0:100000:65536" */
	} *id_maps;
	size_t n_id_maps;
	struct list includes, excludes;
	struct list include_dirs;	/* per include: "" or its -C below DEST, "d/" */
	struct list xattr_includes, xattr_excludes;
	struct transforms *transforms;	/* --transform, or NULL */
	unsigned int occurrence;	/* --occurrence[=N], or 0 */
	unsigned int warnings;		/* WARN_*: the messages to print */
	const char *label;		/* -V PATTERN: the volume label to check */
	enum backup_kind backup;	/* --backup */
	const char *backup_suffix;	/* --suffix, SIMPLE_BACKUP_SUFFIX or "~" */
	int whiteouts;			/* --whiteout-format: SE_WHITEOUTS_*, 0: OCI's */
};

/* What a run did, for callers that check it (the fuzz harness). */
struct cli_result {
	unsigned long long entries, refused, failed;
	int signal;			/* the signal that ended it, or 0 */
};

/*
 * Extract as the options say; messages on stderr, names on stdout.
 * Returns the exit status.  Does not re-raise a signal that stopped the
 * run: RES->signal says which.
 */
int cli_extract(const struct cli_options *o, struct cli_result *res);

/* Catch every catchable terminating signal and cancel the current run. */
void cli_install_signals(void);

/* tar-compat.c */
/* tar xvf A: argv rewritten as -x -v -f A when argv[1] is key letters;
 * NULL, with the letter in *BAD, for a letter tar does not know. */
char **tar_old_style(int *argc, char **argv, char *bad);
/* TAR_OPTIONS, as GNU tar reads it: ENV's words (quoted as in a shell)
 * put before the command line's options.  NULL for an unterminated quote
 * or out of memory. */
char **tar_options_env(int *argc, char **argv, const char *env);
/* Free what tar_old_style() and tar_options_env() made, once argv is no longer used. */
void tar_old_style_free(void);
/* Names from FILE ("-": stdin), one a line or NUL-separated, appended to
 * OUT; the copies are also listed in OWNED, for freeing.  0 or -errno. */
int tar_read_list(const char *file, bool nul, struct list *out, struct list *owned);
extern const char *const tar_vcs_names[];
/* "gzip", "xz" ... as the first bytes of FD say, "none", or NULL when FD
 * cannot be looked at without reading it (a pipe). */
const char *tar_compression_of(int fd);
/* --transform: sed-like s/REGEX/REPL/FLAGS expressions (';'-separated),
 * applied in order to names of kind TR_* (1 names, 2 symlink targets, 4
 * hardlink targets).  tar_transform returns true when OUT differs. */
struct transforms;
int tar_transform_add(struct transforms **ts, const char *exprs, char *err, size_t errsz);
bool tar_transform(const struct transforms *ts, unsigned int kind, const char *name,
		   char *out, size_t cap);
void tar_transform_free(struct transforms *ts);

/* --warning=KEYWORD applied to *SET and *CLEAR; false for an unknown
 * keyword.  The mask in force is (default & ~clear) | set. */
bool tar_warning(const char *keyword, unsigned int *set, unsigned int *clear);
/* Print the keywords --warning takes, for its error message. */
void tar_warning_keywords(void);

/* select.c: member operands, matched against the archive's names. */
enum { SELECT_NO, SELECT_YES };
struct selection;
struct selection *select_new(const struct cli_options *o);
void select_free(struct selection *s);
/* No operand: every member is selected. */
bool select_all(const struct selection *s);
/* Is NAME (as in the archive) selected?  *DIR: "" or the -C below DEST
 * its operand came after, ending in '/'. */
int select_entry(struct selection *s, const char *name, const char **dir);
/* The operands found fewer times than asked (I from 0; NULL past the
 * end); *SOME: found, but fewer times than --occurrence asks. */
const char *select_unmatched(const struct selection *s, size_t i, bool *some);

/* GNU tar's volume label (-V): the first header of the archive in FD, a
 * regular file, read through a descriptor of its own (FD's offset is
 * left alone).  1 and LABEL set, 0 when there is none, or a negative
 * errno (-ESPIPE: FD is not a file). */
int tar_volume_label(int fd, char *label, size_t cap);

/* backup.c: CONTROL (NULL or "": tar's default) as a kind; false for a
 * word tar does not take. */
bool backup_control(const char *control, enum backup_kind *kind);
struct se_root;
/* Rename an existing non-directory at PATH (a name inside ROOT) to its
 * backup name, written to BACKUP; with the root's scoping.  1 when it
 * did, 0 when there was nothing to keep, or a negative errno. */
int backup_existing(struct se_root *root, const char *path, enum backup_kind kind,
		    const char *suffix, char *backup, size_t cap);

/* incremental.c: -G, -g.  What -v says, and where; the run, which
 * knows a POSIX-format dump's directory record. */
struct incr_ctx {
	bool verbose;
	FILE *out;
	struct se_run *run;
	const char *member;	/* the member's name as tar names it, or NULL */
};
struct archive;
struct archive_entry;
/*
 * E, just read from A, is a directory whose name in ROOT is DIR ("" for
 * the root): when it carries GNU tar's directory record (the pax
 * GNU.dumpdir record of a POSIX-format dump, or the entry's data in a
 * GNU-format one), read it and, when DIR is already there, do the
 * renames it lists and remove from DIR what it does not list, as tar
 * restores an incremental dump; every step scoped to ROOT, through the
 * run (C->run) when there is one.  0, or the first negative errno (the
 * message is printed).
 */
int incremental_restore(struct se_root *root, struct archive *a, struct archive_entry *e,
			const char *dir, const struct incr_ctx *c);

/*
 * A compression libarchive would decode by starting a program (lzop),
 * which the sandbox forbids once in force: start that program now, with
 * the archive in *FD as its input, and put the pipe of its output in *FD
 * (the archive's fd stays the caller's to close).  1 and *PID set when a
 * program was started, 0 when none is needed (or *FD is a pipe, which
 * cannot be looked at), or a negative errno.  The sandbox applied after
 * does not reach the program, and still confines this process.
 */
int tar_start_decoder(int *fd, pid_t *pid);
/* The program tar_start_decoder() starts, for messages. */
const char *tar_decoder_name(void);

/* --one-top-level's default: ARCHIVE's name without its suffixes. */
char *tar_top_level_name(const char *archive);

/* The name every message starts with: the last component of argv[0]
 * (libtool's "lt-" dropped), "safe-extract" if there is none.  Installed
 * as `tar`, the program says "tar: ..." as GNU tar does, and what
 * scripts and GNU tar's own suite match on stays the same. */
extern const char *cli_program;
void cli_set_program(const char *argv0);

/* Run as `tar` (or `gtar`): the messages GNU tar's users and its own
 * test suite match on are in GNU tar's words ("NAME: Cannot open: File
 * exists", the closing "Exiting with failure status due to previous
 * errors"); run by any other name, safe-extract's own, which name the
 * action, the object and the reason. */
bool cli_as_tar(void);

/* "PROGRAM: MSG" on stderr, MSG made safe for a terminal. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
