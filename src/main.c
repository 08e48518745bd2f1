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

#include "extract.h"

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
	LO_XATTRS_INCLUDE,
	LO_XATTRS_EXCLUDE,
	LO_FORMAT,
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
	{ "progress", no_argument, NULL, LO_PROGRESS },
	{ "report", required_argument, NULL, LO_REPORT },
	{ "strip-components", required_argument, NULL, LO_STRIP },
	{ "exclude", required_argument, NULL, LO_EXCLUDE },
	{ "require-kernel-scoping", no_argument, NULL, LO_REQUIRE_KERNEL },
	{ "print-resolver", no_argument, NULL, LO_PRINT_RESOLVER },
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
"      --xattrs           restore extended attributes (user.* only, unless\n"
"                         --xattrs-include=GLOB names others)\n"
"      --xattrs-include=GLOB, --xattrs-exclude=GLOB  which xattrs; a\n"
"                         security.capability needs the set-id rule too\n"
"      --acls             restore POSIX ACLs\n"
"      --strip-components=N  drop N leading components of each name\n"
"      --exclude=GLOB     skip names matching GLOB\n"
"      --durable          crash-safe: write all, syncfs, rename all, syncfs\n"
"      --report=FILE      one JSON object per entry in FILE\n"
"      --format=LIST      also read these formats (mtree, raw, empty, warc,\n"
"                         all); the default is archive formats only\n"
"      --progress         show entries and bytes done on a terminal\n"
"\n"
"Weakenings of the default (strict: no symlink, mount or /proc link is\n"
"ever followed, nothing leaves DEST):\n"
"      --in-root          follow symlinks, resolved as if DEST were /\n"
"      --cross-mounts     allow crossing mount points below DEST\n"
"      --devices          create device nodes (root only)\n"
"\n"
"      --require-kernel-scoping  fail instead of resolving in userspace\n"
"      --print-resolver   print the resolution backend and exit\n"
"      --help, --version\n"
"\n"
"Exit status: 0 all extracted; 1 some entries refused, failed or\n"
"incomplete; 2 fatal (archive empty, unreadable or damaged, destination\n"
"unusable, output unwritable, a member not found, interrupted).\n", f);
}

static bool push(char ***list, size_t *n, char *item)
{
	char **nl = realloc(*list, (*n + 1) * sizeof(**list));

	if (!nl)
		return false;
	nl[(*n)++] = item;
	*list = nl;
	return true;
}

int main(int argc, char **argv)
{
	struct run run;
	struct rs_config cfg;
	bool print_resolver = false, have_file = false;
	int c, status;
	long n;
	char *end;

	/* Names come out byte for byte as a UTF-8 locale gives them (zip and
	 * 7z store UTF-8); in a locale that cannot hold them, C.UTF-8. */
	setlocale(LC_ALL, "");
	if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
		setlocale(LC_CTYPE, "C.UTF-8");

	memset(&run, 0, sizeof(run));
	run.tmp.dirfd = -1;
	run.rs.root_fd = -1;
	run.is_root = geteuid() == 0;
	/* Modes are computed here, exactly: the kernel's umask stays out. */
	run.umask = umask(0);
	if (run.is_root)
		run.opt.flags |= OPT_SAME_OWNER | OPT_SAME_PERMS;
	run.opt.dest = ".";

	while ((c = getopt_long(argc, argv, "C:f:txvkUp", long_options, NULL)) != -1) {
		switch (c) {
		case 'C': run.opt.dest = optarg; break;
		case 'f': run.opt.archive = optarg; have_file = true; break;
		case 't': run.opt.flags |= OPT_LIST; break;
		case 'x': break;
		case 'v': run.opt.flags |= OPT_VERBOSE; break;
		case 'k': run.opt.flags |= OPT_KEEP_OLD; break;
		case 'U': run.opt.flags |= OPT_UNLINK; break;
		case 'p': run.opt.flags |= OPT_SAME_PERMS; break;
		case LO_NO_SAME_PERMS: run.opt.flags &= ~OPT_SAME_PERMS; break;
		case LO_IN_ROOT: run.opt.flags |= OPT_IN_ROOT; break;
		case LO_CROSS_MOUNTS: run.opt.flags |= OPT_CROSS_MOUNTS; break;
		case LO_DEVICES: run.opt.flags |= OPT_DEVICES; break;
		case LO_DURABLE: run.opt.flags |= OPT_DURABLE; break;
		case LO_NO_SAME_OWNER: run.opt.flags &= ~OPT_SAME_OWNER; break;
		case LO_SAME_OWNER: run.opt.flags |= OPT_SAME_OWNER; break;
		case LO_NUMERIC_OWNER: run.opt.flags |= OPT_NUMERIC_OWNER; break;
		case LO_XATTRS: run.opt.flags |= OPT_XATTRS; break;
		case LO_ACLS: run.opt.flags |= OPT_ACLS; break;
		case LO_XATTRS_INCLUDE:
			if (!push(&run.opt.xattr_includes, &run.opt.n_xattr_includes, optarg))
				return EXIT_FATAL;
			break;
		case LO_XATTRS_EXCLUDE:
			if (!push(&run.opt.xattr_excludes, &run.opt.n_xattr_excludes, optarg))
				return EXIT_FATAL;
			break;
		case LO_FORMAT:
			for (char *p = optarg; *p;) {
				size_t len = strcspn(p, ",");
				char name[32];

				snprintf(name, sizeof(name), "%.*s", (int)len, p);
				if (len >= sizeof(name) || !extract_format_known(name)) {
					warnx_msg("--format: unknown format '%s'", name);
					return EXIT_FATAL;
				}
				p += len + (p[len] == ',');
			}
			run.opt.formats = optarg;
			break;
		case LO_PROGRESS: run.opt.flags |= OPT_PROGRESS; break;
		case LO_REPORT: run.opt.report_path = optarg; break;
		case LO_STRIP:
			errno = 0;
			n = strtol(optarg, &end, 10);
			if (errno || *end || n < 0 || n > 4096) {
				warnx_msg("--strip-components: '%s' is not a count", optarg);
				return EXIT_FATAL;
			}
			run.opt.strip_components = (int)n;
			break;
		case LO_EXCLUDE:
			if (!push(&run.opt.excludes, &run.opt.n_excludes, optarg))
				return EXIT_FATAL;
			break;
		case LO_REQUIRE_KERNEL: run.opt.flags |= OPT_REQUIRE_KERNEL; break;
		case LO_PRINT_RESOLVER: print_resolver = true; break;
		case LO_HELP:
			usage(stdout);
			return 0;
		case LO_VERSION:
			printf("safe-extract %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_FATAL;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!have_file) {
			run.opt.archive = argv[i];
			have_file = true;
		} else if (!push(&run.opt.includes, &run.opt.n_includes, argv[i])) {
			return EXIT_FATAL;
		}
	}
	if (!run.opt.archive && isatty(STDIN_FILENO) && !print_resolver) {
		warnx_msg("no archive given and standard input is a terminal");
		usage(stderr);
		return EXIT_FATAL;
	}

	cfg = (struct rs_config){
		.dest = run.opt.dest,
		.in_root = run.opt.flags & OPT_IN_ROOT,
		.cross_mounts = run.opt.flags & OPT_CROSS_MOUNTS,
		.require_kernel = run.opt.flags & OPT_REQUIRE_KERNEL,
		.forced = getenv("SAFE_EXTRACT_RESOLVER"),
	};
	if (print_resolver) {
		if (rs_open_root(&run.rs, &cfg) < 0)
			return EXIT_FATAL;
		printf("%s\n", rs_backend_name(run.rs.backend));
		rs_close(&run.rs);
		return 0;
	}
	if (!(run.opt.flags & OPT_LIST) && rs_open_root(&run.rs, &cfg) < 0)
		return EXIT_FATAL;

	run.rep.verbose = run.opt.flags & OPT_VERBOSE;
	run.rep.progress = (run.opt.flags & OPT_PROGRESS) && isatty(STDERR_FILENO);
	if (report_open(&run.rep, run.opt.report_path) < 0) {
		warnx_msg("cannot open report '%s': %s", run.opt.report_path,
			  strerror(errno));
		rs_close(&run.rs);
		return EXIT_FATAL;
	}

	/* --durable keeps one fd per directory with pending renames. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}

	extract_install_signals();
	status = extract_run(&run);

	/* What reached standard output and the report after the run (late
	 * refusals) must have been written too. */
	if (report_close(&run.rep) < 0 && !run.output_failed) {
		warnx_msg("cannot write the report '%s': %s", run.opt.report_path,
			  strerror(errno ? errno : EIO));
		run.output_failed = true;
	}
	if ((fflush(stdout) != 0 || ferror(stdout)) && !run.output_failed) {
		warnx_msg("cannot write standard output: %s", strerror(errno ? errno : EIO));
		run.output_failed = true;
	}
	if (run.output_failed)
		status = EXIT_FATAL;
	rs_close(&run.rs);
	free(run.opt.includes);
	free(run.opt.excludes);
	free(run.opt.xattr_includes);
	free(run.opt.xattr_excludes);
	if (se_interrupted) {
		/* Die by the signal, so the caller sees how we ended. */
		signal((int)se_interrupted, SIG_DFL);
		raise((int)se_interrupted);
	}
	return status;
}
