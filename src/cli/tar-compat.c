/*
 * tar-compat.c - what lets tar users type from habit: the old key-letter
 * syntax, compression options, pattern files, --exclude-vcs, the name of
 * --one-top-level's directory.
 */
#include "config.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <fcntl.h>
#include <spawn.h>

extern char **environ;

#include "cli.h"

/* Every key letter GNU tar takes in the old style ("tar xvf A"), a ':'
 * after those that take the next word as their argument, in the order of
 * its manual.  Those that mean nothing here are refused by main() with
 * the reason; none is taken for an archive name. */
static const char old_keys[] = "AcdrtuxabBC:f:F:g:GhH:iI:jJkK:lL:mMnN:oOpPRsST:UvV:wWX:zZ";

static bool old_key(char c, bool *takes_arg)
{
	const char *p = c ? strchr(old_keys, c) : NULL;

	if (!p || c == ':')
		return false;
	*takes_arg = p[1] == ':';
	return true;
}

static char **old_style_argv;
static char **env_argv;

void tar_old_style_free(void)
{
	free(old_style_argv);
	old_style_argv = NULL;
	free(env_argv);
	env_argv = NULL;
}

/*
 * Split S into words as a shell would without expansions: blanks
 * separate, '...' keeps everything, "..." keeps all but \" and \\, a
 * backslash outside quotes keeps the next character.  Words are written
 * over S's copy in BUF; WORDS gets at most MAX of them.  Returns the count,
 * or -1 for an unterminated quote.
 */
static int split_words(char *buf, char **words, int max)
{
	char *in = buf, *out = buf;
	int n = 0;

	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n')
			in++;
		if (!*in)
			return n;
		if (n == max)
			return -1;
		words[n++] = out;
		while (*in && *in != ' ' && *in != '\t' && *in != '\n') {
			char q = *in;

			if (q == '\'' || q == '"') {
				in++;
				while (*in && *in != q) {
					if (q == '"' && *in == '\\' && (in[1] == '"' || in[1] == '\\'))
						in++;
					*out++ = *in++;
				}
				if (*in != q)
					return -1;
				in++;
			} else if (q == '\\' && in[1]) {
				in++;
				*out++ = *in++;
			} else {
				*out++ = *in++;
			}
		}
		if (*in)
			in++;
		*out++ = '\0';
	}
}

char **tar_options_env(int *argc, char **argv, const char *env)
{
	size_t len = env ? strlen(env) : 0;
	int max = (int)(len / 2 + 1), n;
	char **nv, *buf;

	if (!env || !*env)
		return argv;
	/* One block: the new vector, then the words' bytes. */
	nv = calloc(1, ((size_t)*argc + (size_t)max + 1) * sizeof(*nv) + len + 1);
	if (!nv)
		return NULL;
	buf = (char *)(nv + *argc + max + 1);
	memcpy(buf, env, len + 1);
	n = split_words(buf, nv + 1, max);
	if (n < 0) {
		free(nv);
		return NULL;
	}
	/* As tar: its words come first, before the command line's. */
	nv[0] = argv[0];
	for (int i = 1; i < *argc; i++)
		nv[n + i] = argv[i];
	*argc += n;
	free(env_argv);
	env_argv = nv;
	return nv;
}

char **tar_old_style(int *argc, char **argv, char *bad)
{
	const char *keys = *argc > 1 ? argv[1] : NULL;
	bool arg, command = false;
	struct stat st;
	char **nv;
	int n = 1, next = 2;

	/* tar xvf A: a first word of letters with a command letter in it.
	 * It is taken as keys only when no file has that name, since the
	 * first word is also where an archive may stand; then a letter tar
	 * does not know is an error, as in tar. */
	*bad = '\0';
	if (!keys || keys[0] == '-' || !keys[0] || stat(keys, &st) == 0)
		return argv;
	for (const char *p = keys; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			return argv;
		command |= strchr("Acdrtux", *p) != NULL;
	}
	if (!command)
		return argv;
	for (const char *p = keys; *p; p++) {
		if (!old_key(*p, &arg)) {
			*bad = *p;
			return NULL;
		}
	}
	/* One block for the new vector and its "-k" words, freed by
	 * tar_old_style_free() when main() is done with argv. */
	nv = calloc(1, ((size_t)*argc + strlen(keys) + 1) * sizeof(*nv) + strlen(keys) * 3);
	if (!nv)
		return argv;
	old_style_argv = nv;
	nv[0] = argv[0];
	for (const char *p = keys; *p; p++) {
		char *opt = (char *)(nv + *argc + strlen(keys) + 1) + (p - keys) * 3;

		opt[0] = '-';
		opt[1] = *p;
		opt[2] = '\0';
		nv[n++] = opt;
		/* Each key that takes an argument takes the next word, in order. */
		old_key(*p, &arg);
		if (arg && next < *argc)
			nv[n++] = argv[next++];
	}
	while (next < *argc)
		nv[n++] = argv[next++];
	*argc = n;
	return nv;
}

int tar_read_list(const char *file, bool nul, struct list *out, struct list *owned)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (!f)
		return -errno;
	while ((len = getdelim(&line, &cap, nul ? '\0' : '\n', f)) > 0) {
		char *copy, **v1, **v2;

		if (line[len - 1] == (nul ? '\0' : '\n'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		copy = strdup(line);
		v1 = realloc(out->v, (out->n + 1) * sizeof(*v1));
		if (v1)
			out->v = v1;
		v2 = realloc(owned->v, (owned->n + 1) * sizeof(*v2));
		if (v2)
			owned->v = v2;
		if (!copy || !v1 || !v2) {
			free(copy);
			err = -ENOMEM;
			break;
		}
		out->v[out->n++] = copy;
		owned->v[owned->n++] = copy;
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	if (f != stdin)
		fclose(f);
	return err;
}

/* GNU tar's --exclude-vcs list (its manual, "Excluding Some Files"). */
const char *const tar_vcs_names[] = {
	"CVS", ".cvsignore", "RCS", "SCCS", ".git", ".gitignore",
	".gitattributes", ".gitmodules", ".arch-ids", "{arch}", "=RELEASE-ID",
	"=meta-update", "=update", ".bzr", ".bzrignore", ".bzrtags", ".hg",
	".hgignore", ".hgtags", "_darcs", NULL,
};

/* The compressions a magic number says, and the names the options use. */
static const struct {
	const char *name;
	const unsigned char magic[6];
	size_t len;
} magics[] = {
	{ "gzip", { 0x1f, 0x8b }, 2 },
	{ "bzip2", { 'B', 'Z', 'h' }, 3 },
	{ "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
	{ "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
	{ "lz4", { 0x04, 0x22, 0x4d, 0x18 }, 4 },
	{ "compress", { 0x1f, 0x9d }, 2 },
	{ "lzma", { 0x5d, 0x00, 0x00 }, 3 },
	{ "lzop", { 0x89, 'L', 'Z', 'O', 0x00, 0x0d }, 6 },
};

const char *tar_compression_of(int fd)
{
	unsigned char head[6];
	ssize_t n;
	struct stat st;

	/* Only a file can be looked at without taking bytes from the
	 * reader; a pipe is read as it comes. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	n = pread(fd, head, sizeof(head), 0);
	if (n <= 0)
		return NULL;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if ((size_t)n >= magics[i].len && memcmp(head, magics[i].magic, magics[i].len) == 0)
			return magics[i].name;
	return "none";
}

/* GNU tar 1.34's --warning keywords (tar --warning=help lists them). */
static const struct {
	const char *name;
	unsigned int bits;
} warning_keywords[] = {
	{ "all", WARN_ALL },
	{ "alone-zero-block", WARN_ALONE_ZERO_BLOCK },
	{ "bad-dumpdir", WARN_BAD_DUMPDIR },
	{ "cachedir", WARN_CACHEDIR },
	{ "contiguous-cast", WARN_CONTIGUOUS_CAST },
	{ "file-changed", WARN_FILE_CHANGED },
	{ "file-ignored", WARN_FILE_IGNORED },
	{ "file-removed", WARN_FILE_REMOVED },
	{ "file-shrank", WARN_FILE_SHRANK },
	{ "file-unchanged", WARN_FILE_UNCHANGED },
	{ "filename-with-nuls", WARN_FILENAME_WITH_NULS },
	{ "ignore-archive", WARN_IGNORE_ARCHIVE },
	{ "ignore-newer", WARN_IGNORE_NEWER },
	{ "new-directory", WARN_NEW_DIRECTORY },
	{ "rename-directory", WARN_RENAME_DIRECTORY },
	{ "symlink-cast", WARN_SYMLINK_CAST },
	{ "timestamp", WARN_TIMESTAMP },
	{ "unknown-cast", WARN_UNKNOWN_CAST },
	{ "unknown-keyword", WARN_UNKNOWN_KEYWORD },
	{ "xdev", WARN_XDEV },
	{ "decompress-program", WARN_DECOMPRESS_PROGRAM },
	{ "existing-file", WARN_EXISTING_FILE },
	{ "xattr-write", WARN_XATTR_WRITE },
	{ "record-size", WARN_RECORD_SIZE },
	{ "failed-read", WARN_FAILED_READ },
	/* Later tars' keywords, so that their command lines run too. */
	{ "missing-zero-blocks", WARN_MISSING_ZERO_BLOCKS },
	{ "empty-transform", WARN_EMPTY_TRANSFORM },
	{ "verbose", WARN_VERBOSE },
};

bool tar_warning(const char *keyword, unsigned int *set, unsigned int *clear)
{
	bool no = strncmp(keyword, "no-", 3) == 0;
	const char *name = no ? keyword + 3 : keyword;

	if (strcmp(keyword, "none") == 0) {
		*set = 0;
		*clear = WARN_ALL;
		return true;
	}
	for (size_t i = 0; i < sizeof(warning_keywords) / sizeof(warning_keywords[0]); i++) {
		if (strcmp(name, warning_keywords[i].name) != 0)
			continue;
		if (no) {
			*set &= ~warning_keywords[i].bits;
			*clear |= warning_keywords[i].bits;
		} else {
			*set |= warning_keywords[i].bits;
			*clear &= ~warning_keywords[i].bits;
		}
		return true;
	}
	return false;
}

void tar_warning_keywords(void)
{
	fputs("valid keywords (each also as no-KEYWORD): none", stderr);
	for (size_t i = 0; i < sizeof(warning_keywords) / sizeof(warning_keywords[0]); i++)
		fprintf(stderr, ", %s", warning_keywords[i].name);
	fputc('\n', stderr);
}

/* Does BLOCK's checksum field hold the sum of its bytes, the field
 * itself counted as spaces? */
static bool header_sum_ok(const char *block)
{
	unsigned long sum = 0, want;
	char field[9], *end;

	for (int i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)block[i];
	memcpy(field, block + 148, 8);
	field[8] = '\0';
	want = strtoul(field, &end, 8);
	return end != field && want == sum;
}

int tar_volume_label(int fd, char *label, size_t cap)
{
	char self[64], block[512];
	struct archive *a;
	struct archive_entry *ae;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int rfd, r = 0;

	/* A pipe cannot be looked at without taking bytes from the run. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -ESPIPE;
	/* The same file through a descriptor of its own: FD's offset is
	 * the run's.  Compressions are decoded in the process only: no
	 * program is started for a label. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (rfd < 0)
		return -errno;
	a = archive_read_new();
	if (!a) {
		close(rfd);
		return -ENOMEM;
	}
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_compress(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_fd(a, rfd, 10240) != ARCHIVE_OK ||
	    archive_read_next_header(a, &ae) != ARCHIVE_OK) {
		r = -EIO;
		goto out;
	}
	while (got < sizeof(block) &&
	       (n = archive_read_data(a, block + got, sizeof(block) - got)) > 0)
		got += (size_t)n;
	/* GNU tar's volume header: the first block, type 'V', the label
	 * in the name field; a tar header by its checksum (tar writes no
	 * magic there). */
	if (got == sizeof(block) && block[156] == 'V' && header_sum_ok(block)) {
		snprintf(label, cap, "%.*s", 100, block);
		r = 1;
	}
out:
	archive_read_free(a);
	close(rfd);
	return r;
}

/* The compressions libarchive decodes only with an external program,
 * and the program that decodes each from stdin to stdout. */
static const struct {
	const char *name;
	const char *const argv[4];
} programs[] = {
	{ "lzop", { "lzop", "-dc", NULL } },
};

int tar_start_decoder(int *fd, pid_t *pid)
{
	const char *found = tar_compression_of(*fd);
	posix_spawn_file_actions_t fa;
	int p[2], r;

	*pid = -1;
	for (size_t i = 0; found && i < sizeof(programs) / sizeof(programs[0]); i++) {
		if (strcmp(found, programs[i].name) != 0)
			continue;
		if (pipe2(p, O_CLOEXEC) < 0)
			return -errno;
		/* The child gets the archive as stdin and the pipe as
		 * stdout; every other fd of ours is O_CLOEXEC. */
		if ((r = posix_spawn_file_actions_init(&fa)) != 0) {
			close(p[0]);
			close(p[1]);
			return -r;
		}
		posix_spawn_file_actions_adddup2(&fa, *fd, STDIN_FILENO);
		posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
		/* Its words would reach the terminal unescaped and without
		 * our name: the caller says how it ended instead. */
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
		r = posix_spawnp(pid, programs[i].argv[0], &fa, NULL,
				 (char *const *)programs[i].argv, environ);
		posix_spawn_file_actions_destroy(&fa);
		close(p[1]);
		if (r != 0) {
			close(p[0]);
			*pid = -1;
			return -r;
		}
		*fd = p[0];
		return 1;
	}
	return 0;
}

const char *tar_decoder_name(void)
{
	return programs[0].argv[0];
}

char *tar_top_level_name(const char *archive)
{
	static const char *const suffixes[] = {
		".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz4",
		".tar.lzma", ".tar.Z", ".tgz", ".tbz2", ".tbz", ".txz", ".tzst",
		".taz", ".tar", ".zip", ".cpio", ".7z", ".deb", ".ipk", ".iso",
	};
	const char *base = archive ? strrchr(archive, '/') : NULL;
	char *name;

	base = base ? base + 1 : archive;
	if (!base || !*base || strcmp(base, "-") == 0)
		return NULL;
	name = strdup(base);
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t len = strlen(name), sl = strlen(suffixes[i]);

		if (len > sl && strcmp(name + len - sl, suffixes[i]) == 0) {
			name[len - sl] = '\0';
			break;
		}
	}
	return name;
}

/* ---- --transform -------------------------------------------------------- */

struct transform {
	regex_t re;
	char *repl;
	bool global;
	int nth;			/* replace only the Nth match (0: first/all) */
	unsigned int scope;		/* TR_* */
};

enum { TR_REGULAR = 1, TR_SYMLINK = 2, TR_HARDLINK = 4 };

/*
 * Parse one sed-like expression, "s/REGEX/REPL/FLAGS" with any delimiter,
 * into T.  0, or -1 with a message in ERR.
 */
static int parse_one(const char *expr, struct transform *t, char *err, size_t errsz)
{
	char delim, *re = NULL, *repl = NULL;
	const char *p = expr;
	int cflags = 0, rc;
	size_t n = strlen(expr);

	memset(t, 0, sizeof(*t));
	t->scope = TR_REGULAR | TR_SYMLINK | TR_HARDLINK;
	if (p[0] != 's' || !p[1]) {
		snprintf(err, errsz, "'%s': only s/REGEX/REPLACEMENT/FLAGS is supported", expr);
		return -1;
	}
	delim = p[1];
	p += 2;
	re = calloc(1, n + 1);
	repl = calloc(1, n + 1);
	if (!re || !repl)
		goto oom;
	/* Two fields up to the delimiter; \DELIM stands for it. */
	for (int field = 0; field < 2; field++) {
		char *out = field ? repl : re;
		size_t o = 0;

		while (*p && *p != delim) {
			if (*p == '\\' && p[1] == delim) {
				out[o++] = delim;
				p += 2;
				continue;
			}
			if (*p == '\\' && p[1])
				out[o++] = *p++;
			out[o++] = *p++;
		}
		if (*p != delim) {
			snprintf(err, errsz, "'%s': unterminated expression", expr);
			goto fail;
		}
		p++;
	}
	for (; *p; p++) {
		switch (*p) {
		case 'g': t->global = true; break;
		case 'i': cflags |= REG_ICASE; break;
		case 'x': cflags |= REG_EXTENDED; break;
		case 'r': t->scope |= TR_REGULAR; break;
		case 'R': t->scope &= ~TR_REGULAR; break;
		case 's': t->scope |= TR_SYMLINK; break;
		case 'S': t->scope &= ~TR_SYMLINK; break;
		case 'h': t->scope |= TR_HARDLINK; break;
		case 'H': t->scope &= ~TR_HARDLINK; break;
		default:
			if (*p >= '0' && *p <= '9') {
				t->nth = t->nth * 10 + (*p - '0');
				break;
			}
			snprintf(err, errsz, "'%s': unknown flag '%c'", expr, *p);
			goto fail;
		}
	}
	rc = regcomp(&t->re, re, cflags);
	if (rc) {
		char msg[128];

		regerror(rc, &t->re, msg, sizeof(msg));
		snprintf(err, errsz, "'%s': %s", expr, msg);
		goto fail;
	}
	free(re);
	t->repl = repl;
	return 0;
oom:
	snprintf(err, errsz, "out of memory");
fail:
	free(re);
	free(repl);
	return -1;
}

/* Append the replacement for match M of SRC to OUT (& and \1..\9). */
static bool put_repl(const struct transform *t, const char *src, const regmatch_t *m,
		     char *out, size_t *o, size_t cap)
{
	for (const char *r = t->repl; *r; r++) {
		const char *from = r;
		size_t len = 1;

		if (*r == '&') {
			from = src + m[0].rm_so;
			len = (size_t)(m[0].rm_eo - m[0].rm_so);
		} else if (*r == '\\' && r[1] >= '0' && r[1] <= '9') {
			int g = *++r - '0';

			if (m[g].rm_so < 0)
				continue;
			from = src + m[g].rm_so;
			len = (size_t)(m[g].rm_eo - m[g].rm_so);
		} else if (*r == '\\' && r[1]) {
			from = ++r;
		}
		if (*o + len >= cap)
			return false;
		memcpy(out + *o, from, len);
		*o += len;
	}
	return true;
}

/* Apply T to NAME into OUT (CAP bytes).  False when it does not fit. */
static bool apply_one(const struct transform *t, const char *name, char *out, size_t cap)
{
	regmatch_t m[10];
	const char *s = name;
	size_t o = 0;
	int count = 0, eflags = 0;
	bool done = false;

	while (!done && regexec(&t->re, s, 10, m, eflags) == 0) {
		bool replace;

		count++;
		replace = t->nth ? count == t->nth : true;
		if (o + (size_t)m[0].rm_so >= cap)
			return false;
		memcpy(out + o, s, (size_t)m[0].rm_so);
		o += (size_t)m[0].rm_so;
		if (replace) {
			if (!put_repl(t, s, m, out, &o, cap))
				return false;
		} else {
			size_t len = (size_t)(m[0].rm_eo - m[0].rm_so);

			if (o + len >= cap)
				return false;
			memcpy(out + o, s + m[0].rm_so, len);
			o += len;
		}
		if (m[0].rm_eo == m[0].rm_so) {
			/* An empty match: copy one character and go on. */
			if (!s[m[0].rm_eo])
				break;
			if (o + 1 >= cap)
				return false;
			out[o++] = s[m[0].rm_eo];
			s += m[0].rm_eo + 1;
		} else {
			s += m[0].rm_eo;
		}
		eflags = REG_NOTBOL;
		done = !(t->global || (t->nth && count < t->nth));
	}
	if (o + strlen(s) >= cap)
		return false;
	strcpy(out + o, s);
	return true;
}

struct transforms {
	struct transform *v;
	size_t n;
};

int tar_transform_add(struct transforms **ts, const char *exprs, char *err, size_t errsz)
{
	/* Several expressions may be given in one option, separated by ';'. */
	char *copy = strdup(exprs), *save = NULL, *e;

	if (!copy)
		return -1;
	if (!*ts && !(*ts = calloc(1, sizeof(**ts)))) {
		free(copy);
		return -1;
	}
	for (e = strtok_r(copy, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
		struct transform *nv = realloc((*ts)->v, ((*ts)->n + 1) * sizeof(*nv));

		if (!nv || parse_one(e, &nv[(*ts)->n], err, errsz) < 0) {
			if (nv)
				(*ts)->v = nv;
			free(copy);
			return -1;
		}
		(*ts)->v = nv;
		(*ts)->n++;
	}
	free(copy);
	return 0;
}

bool tar_transform(const struct transforms *ts, unsigned int kind, const char *name,
		   char *out, size_t cap)
{
	char tmp[8192];
	bool changed = false;

	if (strlen(name) >= cap)
		return false;
	strcpy(out, name);
	for (size_t i = 0; ts && i < ts->n; i++) {
		if (!(ts->v[i].scope & kind))
			continue;
		if (!apply_one(&ts->v[i], out, tmp, sizeof(tmp)) || strlen(tmp) >= cap)
			return false;
		strcpy(out, tmp);
		changed = true;
	}
	return changed;
}

void tar_transform_free(struct transforms *ts)
{
	for (size_t i = 0; ts && i < ts->n; i++) {
		regfree(&ts->v[i].re);
		free(ts->v[i].repl);
	}
	if (ts)
		free(ts->v);
	free(ts);
}
