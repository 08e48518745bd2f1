/*
 * main.c - safe-extract's command line: parse, set up, hand over.
 *
 * Secure is the default; every option that weakens it names what it gives
 * up (see --help and doc/safe-extract.1).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <safe-extract.h>

#include "cli.h"

enum long_option {
	LO_IN_ROOT = 256,
	LO_CROSS_MOUNTS,
	LO_DEVICES,
	LO_DURABLE,
	LO_NO_SAME_OWNER,
	LO_SAME_OWNER,
	LO_NUMERIC_OWNER,
	LO_NO_SAME_PERMS,
	LO_XATTRS,
	LO_ACLS,
	LO_PROGRESS,
	LO_REPORT,
	LO_STRIP,
	LO_EXCLUDE,
	LO_REQUIRE_KERNEL,
	LO_PRINT_RESOLVER,
	LO_RECOVER,
	LO_XATTRS_INCLUDE,
	LO_XATTRS_EXCLUDE,
	LO_FORMAT,
	LO_MEMBER,
	LO_NO_SANDBOX,
	LO_REQUIRE_SANDBOX,
	LO_PRINT_SANDBOX,
	LO_SKIP_OLD,
	LO_NULL,
	LO_EXCLUDE_VCS,
	LO_ONE_TOP_LEVEL,
	LO_ZSTD,
	LO_LZ4,
	LO_LZMA,
	LO_LZOP,
	LO_OVERWRITE_DIR,
	LO_NO_OVERWRITE_DIR,
	LO_KEEP_NEWER,
	LO_WILDCARDS,
	LO_NO_WILDCARDS,
	LO_ANCHORED,
	LO_KEEP_DIR_SYMLINK,
	LO_TRANSFORM,
	LO_OCCURRENCE,
	LO_JOBS,
	LO_XZ_MEMORY,
	LO_MAP_IDS,		/* --map-ids: users and groups */
	LO_MAP_UIDS,
	LO_MAP_GIDS,
	LO_WARNING,
	LO_BACKUP,
	LO_SUFFIX,
	LO_SHOW_TRANSFORMED,
	LO_OCI_LAYER,
	LO_OCI_IMAGE,
	LO_WHITEOUT_FORMAT,
	LO_OVERLAY_USERXATTR,
	LO_IGNORED,		/* tar options that change nothing when extracting */
	LO_IGNORED_ARG,
	LO_REFUSED,		/* tar options that would weaken the defence */
	LO_HELP,
	LO_VERSION,
};

static const struct option long_options[] = {
	{ "directory", required_argument, NULL, 'C' },
	{ "file", required_argument, NULL, 'f' },
	{ "list", no_argument, NULL, 't' },
	{ "extract", no_argument, NULL, 'x' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "keep-old-files", no_argument, NULL, 'k' },
	{ "unlink", no_argument, NULL, 'U' },
	{ "unlink-first", no_argument, NULL, 'U' },
	{ "preserve-permissions", no_argument, NULL, 'p' },
	{ "same-permissions", no_argument, NULL, 'p' },
	{ "no-same-permissions", no_argument, NULL, LO_NO_SAME_PERMS },
	{ "in-root", no_argument, NULL, LO_IN_ROOT },
	{ "oci-layer", required_argument, NULL, LO_OCI_LAYER },
	{ "oci-image", required_argument, NULL, LO_OCI_IMAGE },
	{ "whiteout-format", required_argument, NULL, LO_WHITEOUT_FORMAT },
	{ "overlay-userxattr", no_argument, NULL, LO_OVERLAY_USERXATTR },
	{ "cross-mounts", no_argument, NULL, LO_CROSS_MOUNTS },
	{ "devices", no_argument, NULL, LO_DEVICES },
	{ "durable", no_argument, NULL, LO_DURABLE },
	{ "no-same-owner", no_argument, NULL, LO_NO_SAME_OWNER },
	{ "same-owner", no_argument, NULL, LO_SAME_OWNER },
	{ "numeric-owner", no_argument, NULL, LO_NUMERIC_OWNER },
	{ "xattrs", no_argument, NULL, LO_XATTRS },
	{ "acls", no_argument, NULL, LO_ACLS },
	{ "xattrs-include", required_argument, NULL, LO_XATTRS_INCLUDE },
	{ "xattrs-exclude", required_argument, NULL, LO_XATTRS_EXCLUDE },
	{ "format", required_argument, NULL, LO_FORMAT },
	{ "member", required_argument, NULL, LO_MEMBER },
	{ "no-sandbox", no_argument, NULL, LO_NO_SANDBOX },
	{ "require-sandbox", no_argument, NULL, LO_REQUIRE_SANDBOX },
	{ "print-sandbox", no_argument, NULL, LO_PRINT_SANDBOX },
	{ "progress", no_argument, NULL, LO_PROGRESS },
	{ "report", required_argument, NULL, LO_REPORT },
	{ "strip-components", required_argument, NULL, LO_STRIP },
	{ "exclude", required_argument, NULL, LO_EXCLUDE },
	{ "require-kernel-scoping", no_argument, NULL, LO_REQUIRE_KERNEL },
	{ "print-resolver", no_argument, NULL, LO_PRINT_RESOLVER },
	{ "recover", no_argument, NULL, LO_RECOVER },
	{ "skip-old-files", no_argument, NULL, LO_SKIP_OLD },
	{ "touch", no_argument, NULL, 'm' },
	{ "files-from", required_argument, NULL, 'T' },
	{ "exclude-from", required_argument, NULL, 'X' },
	{ "null", no_argument, NULL, LO_NULL },
	{ "overwrite-dir", no_argument, NULL, LO_OVERWRITE_DIR },
	{ "no-overwrite-dir", no_argument, NULL, LO_NO_OVERWRITE_DIR },
	{ "keep-newer-files", no_argument, NULL, LO_KEEP_NEWER },
	{ "to-stdout", no_argument, NULL, 'O' },
	{ "wildcards", no_argument, NULL, LO_WILDCARDS },
	{ "no-wildcards", no_argument, NULL, LO_NO_WILDCARDS },
	{ "anchored", no_argument, NULL, LO_ANCHORED },
	{ "ignore-zeros", no_argument, NULL, 'i' },
	{ "keep-directory-symlink", no_argument, NULL, LO_KEEP_DIR_SYMLINK },
	{ "transform", required_argument, NULL, LO_TRANSFORM },
	{ "xform", required_argument, NULL, LO_TRANSFORM },
	{ "occurrence", optional_argument, NULL, LO_OCCURRENCE },
	{ "jobs", required_argument, NULL, LO_JOBS },
	{ "xz-memory", required_argument, NULL, LO_XZ_MEMORY },
	{ "map-ids", required_argument, NULL, LO_MAP_IDS },
	{ "map-uids", required_argument, NULL, LO_MAP_UIDS },
	{ "map-gids", required_argument, NULL, LO_MAP_GIDS },
	{ "warning", required_argument, NULL, LO_WARNING },
	{ "exclude-vcs", no_argument, NULL, LO_EXCLUDE_VCS },
	{ "one-top-level", optional_argument, NULL, LO_ONE_TOP_LEVEL },
	{ "gzip", no_argument, NULL, 'z' },
	{ "gunzip", no_argument, NULL, 'z' },
	{ "ungzip", no_argument, NULL, 'z' },
	{ "bzip2", no_argument, NULL, 'j' },
	{ "xz", no_argument, NULL, 'J' },
	{ "zstd", no_argument, NULL, LO_ZSTD },
	{ "lz4", no_argument, NULL, LO_LZ4 },
	{ "lzma", no_argument, NULL, LO_LZMA },
	{ "lzop", no_argument, NULL, LO_LZOP },
	{ "compress", no_argument, NULL, 'Z' },
	{ "uncompress", no_argument, NULL, 'Z' },
	{ "auto-compress", no_argument, NULL, 'a' },
	{ "absolute-names", no_argument, NULL, 'P' },
	{ "backup", optional_argument, NULL, LO_BACKUP },
	{ "suffix", required_argument, NULL, LO_SUFFIX },
	{ "same-order", no_argument, NULL, 's' },
	{ "preserve-order", no_argument, NULL, 's' },
	{ "show-transformed-names", no_argument, NULL, LO_SHOW_TRANSFORMED },
	/* tar: for listings while creating; nothing when extracting. */
	{ "show-stored-names", no_argument, NULL, LO_IGNORED },
	/* tar's other commands, and options that change nothing when
	 * extracting or that this command does not do: each one is
	 * answered by not_here() or accepted as tar accepts it. */
	{ "create", no_argument, NULL, 'c' },
	{ "append", no_argument, NULL, 'r' },
	{ "update", no_argument, NULL, 'u' },
	{ "diff", no_argument, NULL, 'd' },
	{ "compare", no_argument, NULL, 'd' },
	{ "catenate", no_argument, NULL, 'A' },
	{ "concatenate", no_argument, NULL, 'A' },
	{ "blocking-factor", required_argument, NULL, 'b' },
	{ "record-size", required_argument, NULL, LO_IGNORED_ARG },
	/* tar: how -c looks for holes in sparse files (seek, raw); nothing
	 * when extracting, and it comes in TAR_OPTIONS set for -c and -x
	 * alike (GNU tar's sparse tests do so). */
	{ "hole-detection", required_argument, NULL, LO_IGNORED_ARG },
	{ "read-full-records", no_argument, NULL, 'B' },
	{ "check-links", no_argument, NULL, 'l' },
	{ "seek", no_argument, NULL, 'n' },
	{ "no-seek", no_argument, NULL, LO_IGNORED },
	{ "sparse", no_argument, NULL, 'S' },
	{ "verify", no_argument, NULL, 'W' },
	{ "starting-file", required_argument, NULL, 'K' },
	{ "newer", required_argument, NULL, 'N' },
	{ "after-date", required_argument, NULL, 'N' },
	{ "block-number", no_argument, NULL, 'R' },
	{ "interactive", no_argument, NULL, 'w' },
	{ "confirmation", no_argument, NULL, 'w' },
	{ "use-compress-program", required_argument, NULL, 'I' },
	{ "dereference", no_argument, NULL, 'h' },
	{ "multi-volume", no_argument, NULL, 'M' },
	{ "tape-length", required_argument, NULL, 'L' },
	{ "info-script", required_argument, NULL, 'F' },
	{ "new-volume-script", required_argument, NULL, 'F' },
	{ "label", required_argument, NULL, 'V' },
	{ "listed-incremental", required_argument, NULL, 'g' },
	{ "incremental", no_argument, NULL, 'G' },
	{ "to-command", required_argument, NULL, LO_REFUSED },
	{ "insecure", no_argument, NULL, LO_REFUSED },
	{ "help", no_argument, NULL, LO_HELP },
	{ "version", no_argument, NULL, LO_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fputs(
"Usage: safe-extract [OPTIONS] [ARCHIVE] -C DEST [PATTERN...]\n"
"Extract ARCHIVE (any format libarchive reads; '-' or none: standard input)\n"
"into DEST, with the kernel keeping every operation inside DEST.\n"
"\n"
"  -C, --directory=DEST   extract into DEST (default: .)\n"
"  -f, --file=ARCHIVE     the archive; then every operand is a PATTERN\n"
"  -t, --list             list what would be extracted; nothing is written\n"
"  -v, --verbose          print each extracted name\n"
"  -k, --keep-old-files   refuse entries whose name exists instead of replacing\n"
"  -U, --unlink           remove a symlink in the way of a directory entry\n"
"  -p, --same-permissions restore modes without the umask (root: the default)\n"
"      --no-same-permissions  apply the umask, drop set-id bits\n"
"      --no-same-owner    do not restore owners (root restores by default)\n"
"      --numeric-owner    restore owners by number, ignoring names\n"
"      --map-ids=CONTAINER_ID:HOST_ID:COUNT  owners for a user namespace: COUNT\n"
"                         user and group ids from CONTAINER_ID become those\n"
"                         from HOST_ID (repeatable); an owner outside every\n"
"                         range is not set (nor set-id bits), and reported\n"
"      --map-uids=C:H:N, --map-gids=C:H:N  the same for users or groups only\n"
"      --xattrs           restore extended attributes (user.* only, unless\n"
"                         --xattrs-include=GLOB names others)\n"
"      --xattrs-include=GLOB, --xattrs-exclude=GLOB  which xattrs; a\n"
"                         security.capability needs the set-id rule too\n"
"      --acls             restore POSIX ACLs\n"
"      --strip-components=N  drop N leading components of each name\n"
"      --exclude=GLOB     skip names matching GLOB\n"
"      --durable          crash-safe: write all, syncfs, rename all, syncfs\n"
"      --recover          finish or undo an interrupted --durable run on -C DIR\n"
"      --report=FILE      one JSON object per entry in FILE\n"
"      --format=LIST      also read these formats (mtree, raw, empty, warc,\n"
"                         all); the default is archive formats only\n"
"      --member=NAME      extract the archive held in member NAME (a .deb,\n"
"                         .udeb or .ipk: its data.tar.* unless named)\n"
"      --progress         show entries and bytes done on a terminal\n"
"      --jobs=N           threads: N decode xz and N write files' data while\n"
"                         one reads (1: one thread does everything; default:\n"
"                         a decoder thread for compressed input, no writer\n"
"                         threads).  The result is the same for every N\n"
"      --xz-memory=MIB    memory xz decoder threads may share (default 80);\n"
"                         a stream needing more is decoded in one thread\n"
"      --oci-layer=LAYER  apply LAYER (tar, tar.gz, tar.zst) as an OCI image\n"
"                         layer on top of DEST: .wh.NAME removes NAME and\n"
"                         .wh..wh..opq its directory's contents from the\n"
"                         lower layers; implies --in-root, --numeric-owner\n"
"                         and -p\n"
"      --oci-image=DIR[:TAG]  unpack the OCI image layout DIR (or an image\n"
"                         archive: oci-archive, docker save): the manifest\n"
"                         tagged TAG (else the only one, else this machine's\n"
"                         platform), every blob's digest and every layer's\n"
"                         diff_id checked before anything is written, then\n"
"                         its layers applied in order as --oci-layer does\n"
"      --whiteout-format=oci|overlay  with --oci-layer or --oci-image: apply\n"
"                         whiteouts (oci, the default), or apply them and\n"
"                         leave them as overlayfs does in an upper directory\n"
"                         (overlay: 0/0 character devices, the xattr\n"
"                         trusted.overlay.opaque; image xattrs in that\n"
"                         namespace stored escaped)\n"
"      --overlay-userxattr  with --whiteout-format=overlay: user.overlay.*\n"
"                         instead of trusted.overlay.* (a userxattr mount)\n"
"\n"
"As tar (old style 'xvf ARCHIVE' too):\n"
"  -x, --extract          extract (the default)\n"
"  -z, -j, -J, -Z, -a, --gzip, --bzip2, --xz, --zstd, --lz4, --lzma, --lzop\n"
"                         accepted; the compression is detected anyway, and\n"
"                         a warning says when it is not the one named\n"
"      --skip-old-files   keep existing names, quietly (-k refuses them); with\n"
"                         either, an existing directory is kept as it is\n"
"      --keep-newer-files keep existing files at least as new as the member\n"
"      --no-overwrite-dir keep existing directories' owner, mode and times\n"
"  -O, --to-stdout        write the members' data to standard output\n"
"      --no-wildcards     PATTERNs are names (tar's default), not globs\n"
"  -i, --ignore-zeros     read past the zero blocks of concatenated archives\n"
"  -m, --touch            do not restore modification times\n"
"  -T, --files-from=FILE  take PATTERNs from FILE, one a line\n"
"  -X, --exclude-from=FILE  take --exclude GLOBs from FILE\n"
"      --null             -T and -X files are NUL-separated\n"
"      --exclude-vcs      skip version-control files (.git, CVS, ...)\n"
"      --occurrence[=N]   of each PATTERN's members, only the Nth (default 1)\n"
"      --transform=s/REGEX/REPL/FLAGS, --xform  rename members, as tar (before\n"
"                         the name checks: a rename to ../x is refused)\n"
"  -G, --incremental, -g, --listed-incremental=FILE  restore a GNU tar\n"
"                         incremental dump: what a directory record does not\n"
"                         list is removed from that directory (FILE unused)\n"
"      --backup[=CONTROL]  rename an existing file a member replaces: NAME~\n"
"                         (simple), NAME.~N~ (numbered) or existing (numbered\n"
"                         if there are such backups; the default); none\n"
"      --suffix=SUFFIX    the simple backup's suffix (default ~)\n"
"  -V, --label=PATTERN    extract only if the archive's volume label matches\n"
"                         (an archive file; not standard input)\n"
"  -s, --same-order, --preserve-order  accepted: members come in archive order\n"
"      --show-transformed-names  -v shows names after --transform (default:\n"
"                         as stored in the archive, as tar)\n"
"      --one-top-level[=DIR]  extract into DEST/DIR (default: the archive's\n"
"                         name without its suffix)\n"
"      --warning=KEYWORD  tar's keywords (existing-file, ignore-newer,\n"
"                         timestamp ..., all, none, no-KEYWORD): print or\n"
"                         silence the matching messages\n"
"  Refused, with the reason: -P (--absolute-names), --to-command, --insecure,\n"
"  -h (--dereference), -M (--multi-volume), -L, -F, -I.\n"
"\n"
"Weakenings of the default (strict: no symlink, mount or /proc link is\n"
"ever followed, nothing leaves DEST):\n"
"      --in-root          follow symlinks, resolved as if DEST were /\n"
"      --keep-directory-symlink  follow symlinks to directories that were in\n"
"                         DEST before the run (relative, inside DEST only)\n"
"      --cross-mounts     allow crossing mount points below DEST\n"
"      --devices          create device nodes (root only)\n"
"      --no-sandbox       do not confine the process (Landlock: writes only\n"
"                         beneath DEST; seccomp: no exec, sockets, mounts)\n"
"\n"
"      --require-kernel-scoping  fail instead of resolving in userspace\n"
"      --require-sandbox  fail when the kernel cannot confine the process\n"
"      --print-sandbox    confine the process as a run would, say how, exit\n"
"      --print-resolver   print the resolution backend and exit\n"
"      --help, --version\n"
"\n"
"Exit status: 0 all extracted; 1 some entries refused, failed or\n"
"incomplete; 2 fatal (archive empty, unreadable or damaged, destination\n"
"unusable, output unwritable, a member not found, a name -k kept, interrupted).\n", f);
}

static bool push(struct list *l, char *item);

/* tar -xPf, --to-command, bsdtar --insecure: why not, and what instead. */
static int refused_option(const char *name)
{
	if (strcmp(name, "P") == 0 || strcmp(name, "absolute-names") == 0)
		cli_warn("-P (--absolute-names) is refused: names from an archive never reach '/' or '..'; extract into the directory that should be '/' with -C DIR (and --in-root for a root filesystem)");
	else if (strcmp(name, "to-command") == 0)
		cli_warn("--to-command is refused: the sandbox lets safe-extract run no program; -t lists the members, and a library caller gets each entry through its callback");
	else
		cli_warn("--%s is refused: it turns off the checks this program exists for; the documented weakenings are --in-root, --cross-mounts and --devices", name);
	return EXIT_FATAL;
}

/*
 * A tar option this command does not take: another command than -x and
 * -t, or an extraction option it does not do.  Each says why.
 */
static int not_here(int c)
{
	static const struct {
		char c;
		const char *why;
	} reasons[] = {
		{ 'c', "-c (--create): safe-extract only extracts (-x) and lists (-t); create archives with tar" },
		{ 'r', "-r (--append): safe-extract only extracts (-x) and lists (-t)" },
		{ 'u', "-u (--update): safe-extract only extracts (-x) and lists (-t)" },
		{ 'd', "-d (--diff): safe-extract only extracts (-x) and lists (-t)" },
		{ 'A', "-A (--catenate): safe-extract only extracts (-x) and lists (-t)" },
		{ 'K', "-K (--starting-file) is not supported: name the members to extract instead" },
		{ 'N', "-N (--newer) is not supported when extracting: --keep-newer-files keeps newer files" },
		{ 'R', "-R (--block-number) is not supported: messages name the entry instead" },
		{ 'w', "-w (--interactive) is not supported: name the members to extract instead" },
		{ 'I', "-I (--use-compress-program) is refused: the sandbox lets safe-extract run no program, and the compression is detected" },
		{ 'h', "-h (--dereference) is refused: it makes tar follow symlinks when it creates an archive; when extracting, names are never followed (see --in-root and --keep-directory-symlink)" },
		{ 'M', "-M (--multi-volume) is refused: a multi-volume archive needs the next volume opened by name in mid-run, after the sandbox; join the volumes with cat and extract the whole, or use GNU tar" },
		{ 'L', "-L (--tape-length) is refused: it is for multi-volume archives (see -M)" },
		{ 'F', "-F (--info-script) is refused: it runs a program between volumes, and the sandbox lets safe-extract run none" },
	};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].c == c)
			cli_warn("%s", reasons[i].why);
	return EXIT_FATAL;
}

/* Every NAME of tar's --exclude-vcs, as --exclude globs. */
static bool exclude_vcs(struct list *excludes)
{
	for (const char *const *p = tar_vcs_names; *p; p++)
		if (!push(excludes, (char *)*p))
			return false;
	return true;
}

/* The names read from -T/-X files, freed at exit. */
static struct list owned;

/* What the command line says, in order, about where members go: a member
 * operand, a -C, or a -T file of operands.  Freed at exit. */
struct word {
	enum { W_NAME, W_DIR, W_FILES } kind;
	const char *s;
};
static struct word *words;
static size_t nwords;

static bool push(struct list *l, char *item)
{
	char **nv = realloc(l->v, (l->n + 1) * sizeof(*nv));

	if (!nv)
		return false;
	nv[l->n++] = item;
	l->v = nv;
	return true;
}

/* Free what the options hold; returns STATUS, for "return finish(...)". */
static int finish(struct cli_options *o, int status)
{
	free(o->includes.v);
	free(o->include_dirs.v);
	free(o->excludes.v);
	free(o->xattr_includes.v);
	free(o->xattr_excludes.v);
	free(o->id_maps);
	tar_transform_free(o->transforms);
	for (size_t i = 0; i < owned.n; i++)
		free(owned.v[i]);
	free(owned.v);
	free(words);
	words = NULL;
	nwords = 0;
	memset(o, 0, sizeof(*o));
	tar_old_style_free();
	owned.v = NULL;
	owned.n = 0;
	return status;
}

/* A copy of S freed at exit, or NULL. */
static char *owned_copy(char *s)
{
	if (s && push(&owned, s))
		return s;
	free(s);
	return NULL;
}

/*
 * --map-ids=CONTAINER_ID:HOST_ID:COUNT (OPTION names which) appended to
 * O's maps for the kinds in WHICH: three decimal numbers, no sign, no
 * space, no overflow; a COUNT of at least 1; neither range reaching
 * 4294967295, which chown(2) reads as "leave the owner as it is".
 * False after a message naming the bad part.
 */
static bool add_id_map(struct cli_options *o, const char *option, unsigned int which,
		       const char *value)
{
	static const char *const part[] = { "container id", "host id", "count" };
	struct cli_id_map m = { .which = which }, *nv;
	uint32_t v[3];
	const char *p = value;
	char *arg;

	for (int i = 0; i < 3; i++) {
		size_t len = strcspn(p, ":"), k;
		uint64_t n = 0;

		if (p[len] != (i < 2 ? ':' : '\0')) {
			cli_warn("--%s=%s: not CONTAINER_ID:HOST_ID:COUNT", option, value);
			return false;
		}
		for (k = 0; k < len && p[k] >= '0' && p[k] <= '9' && n <= UINT32_MAX; k++)
			n = n * 10 + (uint64_t)(p[k] - '0');
		if (len == 0 || k < len || n > UINT32_MAX) {
			cli_warn("--%s=%s: '%.*s' is not a %s (a decimal number below 4294967296)",
				 option, value, (int)len, p, part[i]);
			return false;
		}
		v[i] = (uint32_t)n;
		p += len + (i < 2);
	}
	if (v[2] == 0) {
		cli_warn("--%s=%s: a COUNT of 0 maps nothing", option, value);
		return false;
	}
	if ((uint64_t)v[0] + v[2] > UINT32_MAX || (uint64_t)v[1] + v[2] > UINT32_MAX) {
		cli_warn("--%s=%s: the range reaches id 4294967295, which chown reads as \"leave the owner\"",
			 option, value);
		return false;
	}
	nv = realloc(o->id_maps, (o->n_id_maps + 1) * sizeof(*nv));
	if (nv)
		o->id_maps = nv;
	if (!nv || asprintf(&arg, "--%s=%s", option, value) < 0 || !(m.arg = owned_copy(arg))) {
		cli_warn("out of memory");
		return false;
	}
	m.container_id = v[0];
	m.host_id = v[1];
	m.count = v[2];
	o->id_maps[o->n_id_maps++] = m;
	return true;
}

/* DIR after the -C before it, as chdir(2) would take them in turn. */
static const char *join_dir(const char *base, const char *dir)
{
	char *s;

	if (dir[0] == '/' || strcmp(base, ".") == 0)
		return dir;
	if (asprintf(&s, "%s/%s", base, dir) < 0)
		return NULL;
	return owned_copy(s);
}

/*
 * PREFIX ("" or "a/b/") then the -C DIR that follows a member operand:
 * a directory below the one before, as a name inside DEST ("a/b/c/"), or
 * NULL after a message.  The run has one destination, so a -C that climbs
 * out of it or starts again at '/' cannot be followed here.
 */
static const char *below(const char *prefix, const char *dir)
{
	size_t len = strlen(prefix);
	char *out = malloc(len + strlen(dir) + 2);
	const char *p = dir;

	if (!out)
		return NULL;
	memcpy(out, prefix, len);
	if (dir[0] == '/')
		goto climbs;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			goto climbs;
		if (n && !(n == 1 && p[0] == '.')) {
			memcpy(out + len, p, n);
			len += n;
			out[len++] = '/';
		}
		p += n + (p[n] == '/');
	}
	out[len] = '\0';
	return owned_copy(out);
climbs:
	cli_warn("-C '%s' after a member name: only a directory below the one before is supported (one run has one destination); give it first, or run once per directory", dir);
	free(out);
	return NULL;
}

/*
 * -C is positional, as in tar: the -C options before the first member
 * operand make DEST, and each one after it sends the operands that follow
 * into that directory below DEST.  One difference: a first -C after every
 * operand is DEST for them all (tar ignores it and extracts into the
 * current directory).  -T files are read here, in their place.
 */
static int place_members(struct cli_options *o, const struct word *w, size_t n, bool null)
{
	const char *prefix = "";
	size_t first = n, i, late_dest = n;
	long r;

	for (i = 0; i < n && first == n; i++)
		if (w[i].kind != W_DIR)
			first = i;
	o->dest = ".";
	for (i = 0; i < first; i++)
		if (!(o->dest = join_dir(o->dest, w[i].s)))
			return EXIT_FATAL;
	for (i = first; i < n && late_dest == n; i++)
		if (w[i].kind == W_DIR)
			late_dest = i;
	for (i = late_dest + 1; i < n; i++)
		if (w[i].kind != W_DIR)
			late_dest = n;
	if (first == 0 && late_dest < n)
		o->dest = w[late_dest].s;
	for (i = first; i < n; i++) {
		size_t before = o->includes.n;

		switch (w[i].kind) {
		case W_DIR:
			if (i == late_dest && first == 0)
				break;
			if (!(prefix = below(prefix, w[i].s)))
				return EXIT_FATAL;
			break;
		case W_NAME:
			if (!push(&o->includes, (char *)w[i].s))
				return EXIT_FATAL;
			break;
		case W_FILES:
			r = tar_read_list(w[i].s, null, &o->includes, &owned);
			if (r < 0) {
				cli_warn("cannot read the names in '%s': %s", w[i].s,
					 strerror((int)-r));
				return EXIT_FATAL;
			}
			break;
		}
		while (o->include_dirs.n < o->includes.n)
			if (!push(&o->include_dirs, (char *)prefix))
				return EXIT_FATAL;
		if (*prefix && o->includes.n > before && o->strip_components) {
			cli_warn("--strip-components with a -C between member names is not supported: the directory would be stripped too");
			return EXIT_FATAL;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_options o;
	struct cli_result res;
	bool have_file = false;
	bool overlay_userxattr = false;
	int c, status, opt_index;
	const char *exclude_from = NULL;
	struct word *nw;
	bool null = false;
	unsigned int warn_set = 0, warn_clear = 0;
	long n;
	char *end;

	/* Names come out byte for byte as a UTF-8 locale gives them (zip and
	 * 7z store UTF-8); in a locale that cannot hold them, C.UTF-8. */
	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");

	cli_set_program(argv[0]);
	memset(&o, 0, sizeof(o));
	/* Modes are computed by the library, exactly: the kernel's umask
	 * stays out, and the user's is handed over. */
	o.umask = umask(0);
	if (geteuid() == 0)
		o.flags |= CLI_SAME_OWNER | CLI_SAME_PERMS;
	o.dest = ".";
	o.resolver = getenv("SAFE_EXTRACT_RESOLVER");
	o.backup_suffix = getenv("SIMPLE_BACKUP_SUFFIX");
	if (!o.backup_suffix || !*o.backup_suffix)
		o.backup_suffix = "~";

	{
		char bad;
		char **nv = tar_old_style(&argc, argv, &bad);

		if (!nv) {
			cli_warn("unknown key letter '%c' in '%s' (tar's old-style keys)", bad, argv[1]);
			return finish(&o, EXIT_FATAL);
		}
		argv = nv;
		nv = tar_options_env(&argc, argv, getenv("TAR_OPTIONS"));
		if (!nv) {
			cli_warn("cannot split TAR_OPTIONS: missing closing quote (or out of memory)");
			return finish(&o, EXIT_FATAL);
		}
		argv = nv;
	}
	/* "-": operands come in order (c == 1), for -C's place among them. */
	while ((c = getopt_long(argc, argv, "-C:f:txvkUpzjJaZmT:X:POiAcdrub:BF:g:GhH:I:K:lL:MnN:oRsSV:wW", long_options,
				&opt_index)) != -1) {
		if (c == 1 || c == 'C' || c == 'T') {
			nw = realloc(words, (nwords + 1) * sizeof(*nw));
			if (!nw)
				return finish(&o, EXIT_FATAL);
			words = nw;
			words[nwords++] = (struct word){
				c == 1 ? W_NAME : c == 'C' ? W_DIR : W_FILES, optarg };
			continue;
		}
		switch (c) {
		case 'z': o.compress = "gzip"; break;
		case 'j': o.compress = "bzip2"; break;
		case 'J': o.compress = "xz"; break;
		case 'Z': o.compress = "compress"; break;
		case LO_ZSTD: o.compress = "zstd"; break;
		case LO_LZ4: o.compress = "lz4"; break;
		case LO_LZMA: o.compress = "lzma"; break;
		case LO_LZOP: o.compress = "lzop"; break;
		case 'a': o.compress = NULL; break;	/* detected anyway */
		case 'm': o.flags |= CLI_TOUCH; break;
		case 'O': o.flags |= CLI_TO_STDOUT; break;
		case 'i': o.flags |= CLI_IGNORE_ZEROS; break;
		case LO_OVERWRITE_DIR: o.flags &= ~CLI_NO_OVERWRITE_DIR; break;
		case LO_NO_OVERWRITE_DIR: o.flags |= CLI_NO_OVERWRITE_DIR; break;
		case LO_KEEP_NEWER: o.flags |= CLI_KEEP_NEWER; break;
		case LO_WILDCARDS: o.flags &= ~CLI_NO_WILDCARDS; break;
		case LO_NO_WILDCARDS: o.flags |= CLI_NO_WILDCARDS; break;
		case LO_ANCHORED: break;	/* member operands always are */
		case LO_KEEP_DIR_SYMLINK: o.flags |= CLI_KEEP_DIR_SYMLINK; break;
		case LO_OCCURRENCE:
			errno = 0;
			n = optarg ? strtol(optarg, &end, 10) : 1;
			if (optarg && (errno || *end || n < 1 || n > 1000000)) {
				cli_warn("--occurrence: '%s' is not a count", optarg);
				return finish(&o, EXIT_FATAL);
			}
			o.occurrence = (unsigned int)n;
			break;
		case LO_TRANSFORM: {
			char why[256];

			if (tar_transform_add(&o.transforms, optarg, why, sizeof(why)) < 0) {
				cli_warn("--transform: %s", why);
				return finish(&o, EXIT_FATAL);
			}
			break;
		}
		case LO_SKIP_OLD: o.flags |= CLI_SKIP_OLD; break;
		case LO_WARNING:
			if (!tar_warning(optarg, &warn_set, &warn_clear)) {
				cli_warn("--warning: unknown keyword '%s'", optarg);
				tar_warning_keywords();
				return finish(&o, EXIT_FATAL);
			}
			break;
		case 'X': exclude_from = optarg; break;
		case LO_NULL: null = true; break;
		case LO_EXCLUDE_VCS:
			if (!exclude_vcs(&o.excludes))
				return finish(&o, EXIT_FATAL);
			break;
		case LO_ONE_TOP_LEVEL: o.top_level = optarg ? optarg : ""; break;
		case 'P': return finish(&o, refused_option("P"));
		case 'c': case 'r': case 'u': case 'd': case 'A':
		case 'K': case 'N': case 'R': case 'w': case 'I':
		case 'h': case 'M': case 'L': case 'F':
			return finish(&o, not_here(c));
		/* On extraction tar neither reads nor writes the snapshot
		 * file: -g FILE restores as -G does. */
		case 'g': case 'G': o.flags |= CLI_INCREMENTAL; break;
		case 'V': o.label = optarg; break;
		/* As tar when extracting: the blocking is read as it comes,
		 * sparse files and formats are what the archive says, and
		 * members come in archive order (-s). */
		case 'b': case 'B': case 'H': case 'l': case 'n': case 'S':
		case 'W': case 's': case LO_IGNORED: case LO_IGNORED_ARG:
			break;
		case 'o': o.flags &= ~CLI_SAME_OWNER; break;
		case LO_BACKUP:
			/* As tar: without CONTROL, $VERSION_CONTROL, then existing. */
			if (!backup_control(optarg ? optarg : getenv("VERSION_CONTROL"), &o.backup)) {
				cli_warn("--backup: invalid argument '%s' (valid: none, off, simple, never, existing, nil, numbered, t)",
					 optarg ? optarg : getenv("VERSION_CONTROL"));
				return finish(&o, EXIT_FATAL);
			}
			break;
		case LO_SUFFIX: o.backup_suffix = optarg; break;
		case LO_SHOW_TRANSFORMED: o.flags |= CLI_SHOW_TRANSFORMED; break;
		case LO_REFUSED: return finish(&o, refused_option(long_options[opt_index].name));
		case 'f': o.archive = optarg; have_file = true; break;
		case 't': o.flags |= CLI_LIST; break;
		case 'x': break;
		case 'v':
			/* -vv: tar's long listing. */
			if (o.flags & CLI_VERBOSE)
				o.flags |= CLI_LONG_LISTING;
			o.flags |= CLI_VERBOSE;
			break;
		case 'k': o.flags |= CLI_KEEP_OLD; break;
		case 'U': o.flags |= CLI_UNLINK; break;
		case 'p': o.flags |= CLI_SAME_PERMS; break;
		case LO_NO_SAME_PERMS: o.flags &= ~CLI_SAME_PERMS; break;
		case LO_IN_ROOT: o.flags |= CLI_IN_ROOT; break;
		case LO_OCI_LAYER:
			o.archive = optarg;
			have_file = true;
			o.flags |= CLI_OCI_LAYER;
			break;
		case LO_OCI_IMAGE:
			o.image = optarg;
			/* No archive: the layout's blobs are the input. */
			have_file = true;
			break;
		case LO_WHITEOUT_FORMAT:
			if (strcmp(optarg, "oci") == 0) {
				o.whiteouts = SE_WHITEOUTS_OCI;
			} else if (strcmp(optarg, "overlay") == 0) {
				o.whiteouts = SE_WHITEOUTS_OVERLAY;
			} else {
				cli_warn("--whiteout-format: unknown format '%s' (oci or overlay)",
					 optarg);
				return finish(&o, EXIT_FATAL);
			}
			break;
		case LO_OVERLAY_USERXATTR: overlay_userxattr = true; break;
		case LO_CROSS_MOUNTS: o.flags |= CLI_CROSS_MOUNTS; break;
		case LO_DEVICES: o.flags |= CLI_DEVICES; break;
		case LO_DURABLE: o.flags |= CLI_DURABLE; break;
		case LO_NO_SAME_OWNER: o.flags &= ~CLI_SAME_OWNER; break;
		case LO_SAME_OWNER: o.flags |= CLI_SAME_OWNER; break;
		case LO_NUMERIC_OWNER: o.flags |= CLI_NUMERIC_OWNER; break;
		case LO_MAP_IDS:
		case LO_MAP_UIDS:
		case LO_MAP_GIDS:
			if (!add_id_map(&o, long_options[opt_index].name,
					c == LO_MAP_UIDS ? SE_MAP_UID :
					c == LO_MAP_GIDS ? SE_MAP_GID : SE_MAP_UID | SE_MAP_GID,
					optarg))
				return finish(&o, EXIT_FATAL);
			break;
		case LO_XATTRS: o.flags |= CLI_XATTRS; break;
		case LO_ACLS: o.flags |= CLI_ACLS; break;
		case LO_XATTRS_INCLUDE:
			if (!push(&o.xattr_includes, optarg))
				return finish(&o, EXIT_FATAL);
			break;
		case LO_XATTRS_EXCLUDE:
			if (!push(&o.xattr_excludes, optarg))
				return finish(&o, EXIT_FATAL);
			break;
		case LO_FORMAT:
			for (char *p = optarg; *p;) {
				size_t len = strcspn(p, ",");
				char name[32];

				snprintf(name, sizeof(name), "%.*s", (int)len, p);
				if (len >= sizeof(name) || !se_format_known(name)) {
					cli_warn("--format: unknown format '%s'", name);
					return finish(&o, EXIT_FATAL);
				}
				p += len + (p[len] == ',');
			}
			o.formats = optarg;
			break;
		case LO_MEMBER: o.member = optarg; break;
		case LO_NO_SANDBOX: o.flags |= CLI_NO_SANDBOX; break;
		case LO_REQUIRE_SANDBOX: o.flags |= CLI_REQUIRE_SANDBOX; break;
		case LO_PRINT_SANDBOX: o.flags |= CLI_PRINT_SANDBOX; break;
		case LO_PROGRESS: o.flags |= CLI_PROGRESS; break;
		case LO_REPORT: o.report_path = optarg; break;
		case LO_JOBS:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 1 || n > SE_JOBS_MAX) {
				cli_warn("--jobs: '%s' is not a number from 1 to %d",
					 optarg, SE_JOBS_MAX);
				return finish(&o, EXIT_FATAL);
			}
			o.jobs = (unsigned int)n;
			break;
		case LO_XZ_MEMORY:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 1 || n > 1024 * 1024) {
				cli_warn("--xz-memory: '%s' is not a size in MiB", optarg);
				return finish(&o, EXIT_FATAL);
			}
			o.xz_memory = (uint64_t)n << 20;
			break;
		case LO_STRIP:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 0 || n > 4096) {
				cli_warn("--strip-components: '%s' is not a count", optarg);
				return finish(&o, EXIT_FATAL);
			}
			o.strip_components = (int)n;
			break;
		case LO_EXCLUDE:
			if (!push(&o.excludes, optarg))
				return finish(&o, EXIT_FATAL);
			break;
		case LO_REQUIRE_KERNEL: o.flags |= CLI_REQUIRE_KERNEL; break;
		case LO_PRINT_RESOLVER: o.flags |= CLI_PRINT_RESOLVER; break;
		case LO_RECOVER: o.flags |= CLI_RECOVER; break;
		case LO_HELP:
			usage(stdout);
			return finish(&o, 0);
		case LO_VERSION:
			printf("safe-extract %s (libsafe-extract %s, %s)\n",
			       PACKAGE_VERSION, se_version(), archive_version_details());
			return finish(&o, 0);
		default:
			usage(stderr);
			return finish(&o, EXIT_FATAL);
		}
	}
	/* As tar: -v turns on the verbose warnings a --warning did not
	 * turn off. */
	o.warnings = WARN_ALL & ~WARN_VERBOSE;
	if (o.flags & CLI_VERBOSE)
		o.warnings |= WARN_VERBOSE;
	o.warnings = (o.warnings & ~warn_clear) | warn_set;
	/* After "--", the rest are operands. */
	for (int i = optind; i < argc; i++) {
		nw = realloc(words, (nwords + 1) * sizeof(*nw));
		if (!nw)
			return finish(&o, EXIT_FATAL);
		words = nw;
		words[nwords++] = (struct word){ W_NAME, argv[i] };
	}
	/* Without -f, wherever it stands, the first operand is the archive. */
	for (size_t i = 0; !have_file && i < nwords; i++) {
		if (words[i].kind != W_NAME)
			continue;
		o.archive = words[i].s;
		have_file = true;
		memmove(&words[i], &words[i + 1], (nwords - i - 1) * sizeof(*words));
		nwords--;
	}
	/* As tar: with --backup an existing file is replaced once it is
	 * kept aside, whatever -k, --skip-old-files or --keep-newer-files
	 * say. */
	if (o.backup != BACKUP_NONE)
		o.flags &= ~(CLI_KEEP_OLD | CLI_SKIP_OLD | CLI_KEEP_NEWER);
	/* With maps, the library maps users and groups both: one kind
	 * alone would leave every owner of the other outside every range. */
	{
		unsigned int kinds = 0;

		for (size_t i = 0; i < o.n_id_maps; i++)
			kinds |= o.id_maps[i].which;
		if (kinds && kinds != (SE_MAP_UID | SE_MAP_GID)) {
			cli_warn(kinds == SE_MAP_UID ?
				 "--map-uids without --map-gids: every group would be outside every range (give --map-gids too, or --map-ids for both)" :
				 "--map-gids without --map-uids: every user would be outside every range (give --map-uids too, or --map-ids for both)");
			return finish(&o, EXIT_FATAL);
		}
	}
	/* An image layer: absolute symlinks (var/run -> /run) resolve
	 * inside DEST, and owners and modes are the image's numbers. */
	if ((o.flags & CLI_OCI_LAYER) || o.image)
		o.flags |= CLI_IN_ROOT | CLI_NUMERIC_OWNER | CLI_SAME_PERMS;
	for (size_t i = 0; o.image && i < nwords; i++)
		if (words[i].kind != W_DIR)
			o.archive = words[i].s;	/* refused just below */
	if (o.image && (o.archive || (o.flags & CLI_OCI_LAYER))) {
		cli_warn("--oci-image reads the layout's blobs: no archive, member, -f or --oci-layer with it");
		return finish(&o, EXIT_FATAL);
	}
	if (o.image && (o.flags & (CLI_LIST | CLI_TO_STDOUT | CLI_INCREMENTAL))) {
		cli_warn("--oci-image unpacks into DEST: not with -t, -O or -G");
		return finish(&o, EXIT_FATAL);
	}
	if (o.whiteouts && !(o.flags & CLI_OCI_LAYER) && !o.image) {
		cli_warn("--whiteout-format is for an image layer: --oci-layer or --oci-image");
		return finish(&o, EXIT_FATAL);
	}
	if (overlay_userxattr) {
		if (o.whiteouts != SE_WHITEOUTS_OVERLAY) {
			cli_warn("--overlay-userxattr goes with --whiteout-format=overlay");
			return finish(&o, EXIT_FATAL);
		}
		o.whiteouts = SE_WHITEOUTS_OVERLAY_USER;
	}
	/* overlayfs's opaque mark on a directory that stays has no undo
	 * in the journal yet. */
	if ((o.whiteouts == SE_WHITEOUTS_OVERLAY || o.whiteouts == SE_WHITEOUTS_OVERLAY_USER) &&
	    (o.flags & CLI_DURABLE)) {
		cli_warn("--whiteout-format=overlay with --durable is not supported yet: an opaque mark set on a directory that stays cannot be undone after a crash");
		return finish(&o, EXIT_FATAL);
	}
	if ((o.flags & CLI_INCREMENTAL) && (o.flags & CLI_DURABLE)) {
		cli_warn("-G/-g with --durable is not supported: a directory record's deletions would meet the run's pending temporaries");
		return finish(&o, EXIT_FATAL);
	}
	/* -T and -X may come before --null on the line, as in tar. */
	status = place_members(&o, words, nwords, null);
	if (status)
		return finish(&o, status);
	if (exclude_from && (n = tar_read_list(exclude_from, null, &o.excludes, &owned)) < 0) {
		cli_warn("cannot read the patterns in '%s': %s", exclude_from, strerror((int)-n));
		return finish(&o, EXIT_FATAL);
	}
	if (!o.archive && !o.image && isatty(STDIN_FILENO) &&
	    !(o.flags & (CLI_PRINT_RESOLVER | CLI_PRINT_SANDBOX | CLI_RECOVER))) {
		cli_warn("no archive given and standard input is a terminal");
		usage(stderr);
		return finish(&o, EXIT_FATAL);
	}

	/* --durable keeps one fd per directory with pending renames. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}

	cli_install_signals();
	status = cli_extract(&o, &res);
	finish(&o, status);
	if (res.signal) {
		/* Die by the signal, so the caller sees how we ended. */
		signal(res.signal, SIG_DFL);
		raise(res.signal);
	}
	return status;
}
