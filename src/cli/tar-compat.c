/*
 * tar-compat.c - what lets tar users type from habit: the old key-letter
 * syntax, compression options, pattern files, --exclude-vcs, the name of
 * --one-top-level's directory.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Old-style keys and whether each takes the next word as its argument. */
static const char old_keys[] = "xtvkUpzjJaZmf:C:T:X:";

static bool old_key(char c, bool *takes_arg)
{
	const char *p = c ? strchr(old_keys, c) : NULL;

	if (!p || c == ':')
		return false;
	*takes_arg = p[1] == ':';
	return true;
}

char **tar_old_style(int *argc, char **argv)
{
	const char *keys = *argc > 1 ? argv[1] : NULL;
	bool arg, extract = false;
	struct stat st;
	char **nv;
	int n = 1, next = 2;

	/* tar xvf A: a first word of key letters with x or t in it.  It is
	 * taken as keys only when no file has that name, since the first
	 * word is also where an archive may stand. */
	if (!keys || keys[0] == '-' || !keys[0] || stat(keys, &st) == 0)
		return argv;
	for (const char *p = keys; *p; p++) {
		if (!old_key(*p, &arg))
			return argv;
		extract |= *p == 'x' || *p == 't';
	}
	if (!extract)
		return argv;
	nv = calloc((size_t)*argc + strlen(keys) + 1, sizeof(*nv));
	if (!nv)
		return argv;
	nv[0] = argv[0];
	for (const char *p = keys; *p; p++) {
		char *opt = malloc(3);

		if (!opt)
			return argv;
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
