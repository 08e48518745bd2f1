/*
 * image.c - an OCI image layout directory, read as untrusted input.
 *
 * The layout's author writes every byte we read: index.json, the
 * manifests, the configs, the blobs, and the names of the blobs, since a
 * digest becomes a path (blobs/<alg>/<hex>).  So:
 *   - a digest is used only when it is "sha256:" and 64 lowercase hex
 *     digits, checked before it is ever joined to a path: "sha256:../../x"
 *     would otherwise open a file outside the layout (the class of
 *     CVE-2021-41190's confusion over what a digest names, and of every
 *     path traversal through a content address);
 *   - every file is opened from a directory fd of the layout, one
 *     component at a time, with O_NOFOLLOW: a blob, blobs/ or
 *     blobs/sha256 that is a symlink is refused, never followed (a
 *     symlink to /etc/shadow would otherwise be read and hashed, and
 *     applied if its digest were known); a blob must be a regular file
 *     (O_NONBLOCK: a FIFO never blocks the open);
 *   - a blob is read whole and its size and SHA-256 checked against its
 *     descriptor before a byte of it is parsed;
 *   - each layer's blob is opened once and the same fd is hashed and
 *     then applied: a name is never opened twice, so a rename between
 *     the check and the use cannot swap the file (the fd still reads
 *     the checked inode; its content is trusted to stay as it was: the
 *     layout must not be writable by the image's author during a run).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "image.h"
#include "internal.h"
#include "json.h"
#include "sha256.h"

#define LAYOUT_JSON_MAX ((uint64_t)4 << 20)	/* oci-layout, index.json, manifests */
#define CONFIG_JSON_MAX ((uint64_t)16 << 20)	/* a config's history can be long */
#define INDEX_DEPTH_MAX 4			/* nested indexes followed */
#define LAYERS_MAX 1000				/* each keeps an fd open */
#define HEAD_BYTES 64				/* what decode_sniff() needs, and more */

#define MT_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define REF_NAME "org.opencontainers.image.ref.name"

/* The layer media types applied, and how each is compressed. */
static const struct {
	const char *type;
	enum dec_kind kind;
} layer_types[] = {
	{ "application/vnd.oci.image.layer.v1.tar", DEC_NONE },
	{ "application/vnd.oci.image.layer.v1.tar+gzip", DEC_GZIP },
	{ "application/vnd.oci.image.layer.v1.tar+zstd", DEC_ZSTD },
	{ "application/vnd.docker.image.rootfs.diff.tar.gzip", DEC_GZIP },
};

/* A descriptor (image-spec descriptor.md), its strings in the document. */
struct desc {
	const char *media_type;
	const char *digest;
	uint64_t size;
	const char *ref;		/* annotations' ref.name, or NULL */
	const struct json *platform;
};

/* MSG says what went wrong, naming the object. */
__attribute__((format(printf, 3, 4)))
static void fail(char *msg, size_t msgsize, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msgsize, fmt, ap);
	va_end(ap);
}

/* An untrusted string, escaped for a message (one of a few buffers, so
 * that several fit in one message). */
static const char *esc(const char *s, char buf[256])
{
	return s ? se_escape(s, buf, 256) : "(none)";
}

/*
 * Is D a digest this module may turn into a path?  Only "sha256:" and
 * exactly 64 lowercase hex digits: no '/', no '.', nothing else, so the
 * hex part is one harmless component.
 */
static bool digest_ok(const char *d)
{
	if (!d || strncmp(d, "sha256:", 7) != 0 || strlen(d) != 7 + 64)
		return false;
	for (const char *c = d + 7; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

static void hex_digest(const unsigned char sum[32], char out[IMAGE_DIGEST_SIZE])
{
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", sum[i]);
}

/* A descriptor's fields; -EINVAL with MSG when one is missing or bad.
 * WHAT names it in messages ("index.json's manifests[2]"). */
static int read_desc(const struct json *v, const char *what, struct desc *d,
		     char *msg, size_t msgsize)
{
	char b[256];
	const struct json *ann;

	memset(d, 0, sizeof(*d));
	if (!v || v->type != JSON_OBJECT) {
		fail(msg, msgsize, "%s: not a descriptor (an object)", what);
		return -EINVAL;
	}
	d->media_type = json_get_string(v, "mediaType");
	d->digest = json_get_string(v, "digest");
	if (!d->media_type) {
		fail(msg, msgsize, "%s: no mediaType", what);
		return -EINVAL;
	}
	if (!d->digest) {
		fail(msg, msgsize, "%s: no digest", what);
		return -EINVAL;
	}
	if (!digest_ok(d->digest)) {
		fail(msg, msgsize, "%s: digest '%s' refused: only sha256: and 64 lowercase hex digits name a blob",
		     what, esc(d->digest, b));
		return -EINVAL;
	}
	if (!json_uint(json_get(v, "size"), &d->size)) {
		fail(msg, msgsize, "%s: size missing or not a non-negative integer", what);
		return -EINVAL;
	}
	ann = json_get(v, "annotations");
	if (ann && ann->type != JSON_OBJECT) {
		fail(msg, msgsize, "%s: annotations is not an object", what);
		return -EINVAL;
	}
	d->ref = json_get_string(ann, REF_NAME);
	d->platform = json_get(v, "platform");
	return 0;
}

/*
 * Open NAME in DIRFD as a regular file, never through a symlink; its
 * size in *SIZE.  An fd, or a negative errno with MSG naming WHAT.
 */
static int open_file(int dirfd, const char *name, const char *what, uint64_t *size,
		     char *msg, size_t msgsize)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int e;

	if (fd < 0) {
		e = errno;
		fail(msg, msgsize, "cannot open %s: %s", what,
		     e == ELOOP ? "it is a symlink (never followed)" : strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		e = errno;
		if (fstat(fd, &st) == 0)
			e = EINVAL;
		fail(msg, msgsize, "cannot use %s: %s", what,
		     e == EINVAL ? "not a regular file" : strerror(e));
		close(fd);
		return -e;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/*
 * A file of the image: a file of the layout directory (its own fd, OFF
 * 0), or a member of the image archive (the archive's fd, its range).
 */
struct file {
	int fd;
	uint64_t off, size;
};

/* Open NAME, a file at the top of the layout (oci-layout, index.json,
 * manifest.json, or a `docker save` member's path), as WHAT. */
static int open_top(struct image *img, const char *name, const char *what, struct file *f,
		    char *msg, size_t msgsize)
{
	int r;

	f->off = 0;
	if (img->archive_fd < 0) {
		r = open_file(img->dirfd, name, what, &f->size, msg, msgsize);
		f->fd = r;
		return r < 0 ? r : 0;
	}
	f->fd = img->archive_fd;
	r = tar_index_find(&img->ix, name, &f->off, &f->size, msg, msgsize);
	return r;
}

/* Open the blob DIGEST (checked by digest_ok()) as WHAT. */
static int open_blob(struct image *img, const char *digest, const char *what,
		     struct file *f, char *msg, size_t msgsize)
{
	char name[16 + 64 + 1];
	int r;

	f->off = 0;
	if (img->archive_fd < 0) {
		r = open_file(img->blobs_fd, digest + 7, what, &f->size, msg, msgsize);
		f->fd = r;
		return r < 0 ? r : 0;
	}
	snprintf(name, sizeof(name), "blobs/sha256/%s", digest + 7);
	f->fd = img->archive_fd;
	return tar_index_find(&img->ix, name, &f->off, &f->size, msg, msgsize);
}

static void close_file(struct image *img, struct file *f)
{
	if (f->fd >= 0 && f->fd != img->archive_fd)
		close(f->fd);
	f->fd = -1;
}

/* N bytes of F from its start into a new buffer.  NULL with *ERR. */
static char *read_all(const struct file *f, uint64_t n, int *err)
{
	char *buf = malloc(n ? (size_t)n : 1);
	uint64_t got = 0;

	if (!buf) {
		*err = ENOMEM;
		return NULL;
	}
	while (got < n) {
		ssize_t r = pread(f->fd, buf + got, (size_t)(n - got), (off_t)(f->off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*err = r < 0 ? errno : EILSEQ;	/* shrank under us */
			free(buf);
			return NULL;
		}
		got += (uint64_t)r;
	}
	return buf;
}

/* read_all() of F, then F closed; NULL with *R (-errno) and MSG set. */
static char *read_closing(struct image *img, struct file *f, uint64_t size, const char *name,
			  char *msg, size_t msgsize, int *r)
{
	int e = 0;
	char *buf = read_all(f, size, &e);

	close_file(img, f);
	if (!buf) {
		fail(msg, msgsize, "cannot read %s: %s", name, strerror(e));
		*r = -e;
	}
	return buf;
}

/* BUF (SIZE bytes, freed here) parsed into *DOC: 0, or -errno with MSG. */
static int parse_freeing(char *buf, uint64_t size, const char *name, struct json **doc,
			 char *msg, size_t msgsize)
{
	char m[256];
	int r = json_parse(buf, (size_t)size, doc, m, sizeof(m));

	free(buf);
	if (r < 0)
		fail(msg, msgsize, "%s is not valid JSON: %s", name, m);
	return r;
}

/* A JSON file of the layout (oci-layout, index.json), at most
 * LAYOUT_JSON_MAX bytes. */
static int read_layout_json(struct image *img, const char *name, struct json **doc,
			    char *msg, size_t msgsize)
{
	struct file f;
	char *buf;
	int r;

	r = open_top(img, name, name, &f, msg, msgsize);
	if (r < 0)
		return r;
	if (f.size > LAYOUT_JSON_MAX) {
		close_file(img, &f);
		fail(msg, msgsize, "%s: larger than %llu bytes", name,
		     (unsigned long long)LAYOUT_JSON_MAX);
		return -E2BIG;
	}
	buf = read_closing(img, &f, f.size, name, msg, msgsize, &r);
	return buf ? parse_freeing(buf, f.size, name, doc, msg, msgsize) : r;
}

/* F (closed here), read whole and checked against DIGEST, then parsed
 * as JSON.  NAME says what it is in messages. */
static int read_checked_json(struct image *img, struct file *f, const char *digest,
			     const char *name, struct json **doc, char *msg, size_t msgsize)
{
	char got[IMAGE_DIGEST_SIZE];
	unsigned char sum[32];
	struct sha256 sh;
	uint64_t size = f->size;
	char *buf;
	int r;

	buf = read_closing(img, f, size, name, msg, msgsize, &r);
	if (!buf)
		return r;
	sha256_init(&sh);
	sha256_update(&sh, buf, (size_t)size);
	sha256_final(&sh, sum);
	hex_digest(sum, got);
	if (strcmp(got, digest) != 0) {
		free(buf);
		fail(msg, msgsize, "%s: content does not match its digest (it is %s)", name, got);
		return -EILSEQ;
	}
	return parse_freeing(buf, size, name, doc, msg, msgsize);
}

/*
 * The blob D names, checked whole against D's size and digest, then
 * parsed: nothing of it is read as JSON before it is known to be the
 * blob the descriptor names.  At most MAX bytes.
 */
static int read_blob_json(struct image *img, const struct desc *d, const char *what,
			  uint64_t max, struct json **doc, char *msg, size_t msgsize)
{
	char name[300];
	struct file f;
	int r;

	*doc = NULL;
	if (d->size > max) {
		fail(msg, msgsize, "%s %s: %llu bytes, more than %llu", what, d->digest,
		     (unsigned long long)d->size, (unsigned long long)max);
		return -E2BIG;
	}
	snprintf(name, sizeof(name), "blob %s (%s)", d->digest, what);
	r = open_blob(img, d->digest, name, &f, msg, msgsize);
	if (r < 0)
		return r;
	if (f.size != d->size) {
		close_file(img, &f);
		fail(msg, msgsize, "%s: %llu bytes, its descriptor says %llu", name,
		     (unsigned long long)f.size, (unsigned long long)d->size);
		return -EILSEQ;
	}
	return read_checked_json(img, &f, d->digest, name, doc, msg, msgsize);
}

static bool is_index(const char *mt)
{
	return strcmp(mt, MT_INDEX) == 0 || strcmp(mt, MT_DOCKER_LIST) == 0;
}

static bool is_manifest(const char *mt)
{
	return strcmp(mt, MT_MANIFEST) == 0 || strcmp(mt, MT_DOCKER_MANIFEST) == 0;
}

/* Does descriptor platform P (an object, or NULL) name WANT
 * ("os/arch[/variant]")?  A variant absent on either side matches. */
static bool platform_matches(const struct json *p, const char *want)
{
	const char *os = json_get_string(p, "os"), *arch = json_get_string(p, "architecture");
	const char *variant = json_get_string(p, "variant");
	char w[64];
	char *warch, *wvar;

	if (!os || !arch || snprintf(w, sizeof(w), "%s", want) >= (int)sizeof(w))
		return false;
	warch = strchr(w, '/');
	if (!warch)
		return false;
	*warch++ = '\0';
	wvar = strchr(warch, '/');
	if (wvar)
		*wvar++ = '\0';
	return strcmp(os, w) == 0 && strcmp(arch, warch) == 0 &&
	       (!variant || !wvar || strcmp(variant, wvar) == 0);
}

/* "sha256:0123456789ab (tag 't', linux/amd64)" for a message. */
static void describe(const struct desc *d, char *buf, size_t n)
{
	char b1[256], b2[256], b3[256];
	const char *os = json_get_string(d->platform, "os");
	const char *arch = json_get_string(d->platform, "architecture");

	snprintf(buf, n, "%.19s (tag '%s', platform %s/%s)", d->digest,
		 d->ref ? esc(d->ref, b1) : "", os ? esc(os, b2) : "?",
		 arch ? esc(arch, b3) : "?");
}

/*
 * Choose, from the descriptors of the index LIST (an array), what TAG
 * names (NULL: any), then the only candidate, else the only one for
 * PLATFORM; follow it when it is an index itself.  *OUT is the chosen
 * manifest, whose strings live in *KEEP (the document the caller frees).
 */
static int choose(struct image *img, const struct json *list, const char *where,
		  const char *tag, const char *platform, int depth, struct desc *out,
		  struct json **keep, char *msg, size_t msgsize)
{
	struct desc d, pick = { 0 };
	char what[128], b[256], names[512] = "";
	size_t n = 0, n_plat = 0, at = 0;
	struct json *sub = NULL;
	const struct json *m;
	int r;

	if (!list || list->type != JSON_ARRAY) {
		fail(msg, msgsize, "%s: no manifests array", where);
		return -EINVAL;
	}
	/* Candidates first, then the platform among them. */
	for (int pass = 0; pass < 2; pass++) {
		size_t i = 0;

		for (m = list->child; m; m = m->next, i++) {
			snprintf(what, sizeof(what), "%s manifests[%zu]", where, i);
			r = read_desc(m, what, &d, msg, msgsize);
			if (r < 0)
				return r;
			/* Other artifacts (signatures, attestations) are not
			 * images: never candidates. */
			if (!is_index(d.media_type) && !is_manifest(d.media_type))
				continue;
			if (tag && (!d.ref || strcmp(d.ref, tag) != 0))
				continue;
			if (pass == 0) {
				n++;
				pick = d;
				if (at < sizeof(names)) {
					char one[200];

					describe(&d, one, sizeof(one));
					at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s",
							       n > 1 ? ", " : "", one);
				}
			} else if (platform_matches(d.platform, platform)) {
				n_plat++;
				pick = d;
			}
		}
		if (pass == 0 && n <= 1)
			break;
	}
	if (n == 0 && tag) {
		/* Name the tags there are, so a typo is easy to see. */
		at = 0;
		for (m = list->child; m && at < sizeof(names); m = m->next) {
			const char *ref = json_get_string(json_get(m, "annotations"), REF_NAME);

			if (ref)
				at += (size_t)snprintf(names + at, sizeof(names) - at, "%s'%s'",
						       at ? ", " : "", esc(ref, b));
		}
		fail(msg, msgsize, "%s: no manifest tagged '%s' (tags: %s)", where,
		     esc(tag, b), at ? names : "none");
		return -ENOENT;
	}
	if (n == 0) {
		fail(msg, msgsize, "%s: no image manifest", where);
		return -ENOENT;
	}
	if (n > 1 && n_plat != 1) {
		fail(msg, msgsize, "%s: %zu manifests%s%s%s and %s for %s; name one with DIR:TAG: %s",
		     where, n, tag ? " tagged '" : "", tag ? esc(tag, b) : "", tag ? "'" : "",
		     n_plat ? "more than one" : "none", platform, names);
		return -ENOTUNIQ;
	}
	if (is_manifest(pick.media_type)) {
		*out = pick;
		return 0;
	}
	if (depth >= INDEX_DEPTH_MAX) {
		fail(msg, msgsize, "%s: indexes nested more than %d deep", where, INDEX_DEPTH_MAX);
		return -ELOOP;
	}
	r = read_blob_json(img, &pick, "image index", LAYOUT_JSON_MAX, &sub, msg, msgsize);
	if (r < 0)
		return r;
	snprintf(what, sizeof(what), "index %.19s", pick.digest);
	if (json_get_string(sub, "mediaType") &&
	    strcmp(json_get_string(sub, "mediaType"), pick.media_type) != 0) {
		fail(msg, msgsize, "%s: mediaType is not the one its descriptor says", what);
		json_free(sub);
		return -EINVAL;
	}
	/* Below the tagged index, the manifests are chosen by platform. */
	r = choose(img, json_get(sub, "manifests"), what, NULL, platform, depth + 1, out,
		   keep, msg, msgsize);
	if (r == 0 && !*keep) {
		*keep = sub;	/* *OUT's strings are in it */
		return 0;
	}
	json_free(sub);
	return r;
}

static const struct json *array_of(const struct json *obj, const char *key)
{
	const struct json *a = json_get(obj, key);

	return a && a->type == JSON_ARRAY ? a : NULL;
}

/* CONFIG's rootfs.diff_ids (DIGEST names it in messages). */
static int config_diff_ids(const struct json *config, const char *digest,
			   const struct json **diff_ids, char *msg, size_t msgsize)
{
	const struct json *rootfs = json_get(config, "rootfs");
	const struct json *t = json_get(rootfs, "type");

	if (!t || t->type != JSON_STRING || strcmp(t->str, "layers") != 0) {
		fail(msg, msgsize, "config %.19s: rootfs.type is not \"layers\"", digest);
		return -EINVAL;
	}
	*diff_ids = array_of(rootfs, "diff_ids");
	if (!*diff_ids) {
		fail(msg, msgsize, "config %.19s: no rootfs.diff_ids array", digest);
		return -EINVAL;
	}
	return 0;
}

/* The manifest's config: checked, its rootfs.diff_ids in *DIFF_IDS. */
static int read_config(struct image *img, const struct json *manifest, struct json **config,
		       const struct json **diff_ids, char *msg, size_t msgsize)
{
	struct desc d;
	char b[256];
	int r;

	r = read_desc(json_get(manifest, "config"), "the manifest's config", &d, msg, msgsize);
	if (r < 0)
		return r;
	if (strcmp(d.media_type, MT_CONFIG) != 0 && strcmp(d.media_type, MT_DOCKER_CONFIG) != 0) {
		fail(msg, msgsize, "the manifest's config is '%s', not an image config",
		     esc(d.media_type, b));
		return -EINVAL;
	}
	r = read_blob_json(img, &d, "config", CONFIG_JSON_MAX, config, msg, msgsize);
	if (r < 0)
		return r;
	return config_diff_ids(*config, d.digest, diff_ids, msg, msgsize);
}

/* The manifest's layers: each one's media type known, its diff_id
 * valid, its blob opened and of its descriptor's size. */
static int open_layers(struct image *img, const struct json *layers,
		       const struct json *diff_ids, char *msg, size_t msgsize)
{
	const struct json *l, *id;
	char what[64], b[256];
	size_t i = 0;
	int r;

	if (layers->n != diff_ids->n) {
		fail(msg, msgsize, "the manifest has %zu layers and its config %zu diff_ids",
		     layers->n, diff_ids->n);
		return -EINVAL;
	}
	if (layers->n > LAYERS_MAX) {
		fail(msg, msgsize, "the manifest has %zu layers, more than %d", layers->n,
		     LAYERS_MAX);
		return -E2BIG;
	}
	img->layers = calloc(layers->n ? layers->n : 1, sizeof(*img->layers));
	if (!img->layers)
		return -ENOMEM;
	for (l = layers->child, id = diff_ids->child; l; l = l->next, id = id->next, i++) {
		struct image_layer *il = &img->layers[i];
		struct desc d;
		struct file f;
		size_t k;
		char name[128];

		il->fd = -1;
		img->n_layers = i + 1;
		snprintf(what, sizeof(what), "layer %zu", i + 1);
		r = read_desc(l, what, &d, msg, msgsize);
		if (r < 0)
			return r;
		if (id->type != JSON_STRING || !digest_ok(id->str)) {
			fail(msg, msgsize, "%s: diff_id refused: only sha256: and 64 lowercase hex digits",
			     what);
			return -EINVAL;
		}
		for (k = 0; k < sizeof(layer_types) / sizeof(layer_types[0]); k++)
			if (strcmp(d.media_type, layer_types[k].type) == 0)
				break;
		/* A non-distributable ("foreign") layer is refused, not
		 * skipped: the tree without it is not the image, and its
		 * content would come from the URLs its author chose. */
		if (k == sizeof(layer_types) / sizeof(layer_types[0])) {
			bool foreign = strstr(d.media_type, "nondistributable") ||
				       strstr(d.media_type, "foreign");

			fail(msg, msgsize, "%s: media type '%s' refused: %s", what,
			     esc(d.media_type, b),
			     foreign ? "a non-distributable (foreign) layer is not in the image" :
			     "not a tar, tar+gzip or tar+zstd layer");
			return -EOPNOTSUPP;
		}
		il->kind = layer_types[k].kind;
		il->size = d.size;
		snprintf(il->digest, sizeof(il->digest), "%s", d.digest);
		snprintf(il->diff_id, sizeof(il->diff_id), "%s", id->str);
		snprintf(il->label, sizeof(il->label), "%.19s", d.digest);
		snprintf(name, sizeof(name), "blob %s (%s)", d.digest, what);
		r = open_blob(img, d.digest, name, &f, msg, msgsize);
		if (r < 0)
			return r;
		il->fd = f.fd;
		il->offset = f.off;
		if (f.size != d.size) {
			fail(msg, msgsize, "%s: %llu bytes, its descriptor says %llu", name,
			     (unsigned long long)f.size, (unsigned long long)d.size);
			return -EILSEQ;
		}
	}
	return 0;
}

/* Open the directory NAME in DIRFD, never through a symlink. */
static int open_dir(int dirfd, const char *name, const char *what, char *msg, size_t msgsize)
{
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;

	if (fd < 0)
		fail(msg, msgsize, "cannot open %s: %s", what,
		     e == ELOOP || e == ENOTDIR ? "not a directory (a symlink is never followed)" :
		     strerror(e));
	return fd < 0 ? -e : fd;
}

/*
 * FD is the layout directory, or an image archive (a regular file, open
 * for reading), indexed here.
 */
static int open_source(struct image *img, int fd, char *msg, size_t msgsize)
{
	struct stat st;
	int fl, r;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		fail(msg, msgsize, "cannot use the image: %s", strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		fail(msg, msgsize, "the image is neither a layout directory nor an archive (a regular file: it is read by offset)");
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) {
		img->dirfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (img->dirfd < 0) {
			r = -errno;
			fail(msg, msgsize, "cannot use the layout directory: %s", strerror(-r));
			return r;
		}
		return 0;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY) {
		fail(msg, msgsize, "the image archive is not open for reading");
		return -EBADF;
	}
	img->archive_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (img->archive_fd < 0) {
		r = -errno;
		fail(msg, msgsize, "cannot use the image archive: %s", strerror(-r));
		return r;
	}
	r = tar_index_build(&img->ix, img->archive_fd, msg, msgsize);
	if (r < 0) {
		close(img->archive_fd);
		img->archive_fd = -1;
		return r;
	}
	if (!tar_index_has(&img->ix, "oci-layout") && !tar_index_has(&img->ix, "manifest.json")) {
		fail(msg, msgsize, "the archive holds no image: neither an OCI layout (oci-layout, index.json) nor `docker save`'s manifest.json");
		tar_index_free(&img->ix);
		close(img->archive_fd);
		img->archive_fd = -1;
		return -ENOENT;
	}
	return 0;
}

/* Does TAG name the RepoTags entry REF ("name:tag", "host:5000/name:tag"):
 * the whole of it, or what follows the ':' after its last '/'? */
static bool repo_tag_matches(const char *ref, const char *tag)
{
	const char *slash = strrchr(ref, '/');
	const char *colon = strrchr(slash ? slash : ref, ':');

	return strcmp(ref, tag) == 0 || (colon && strcmp(colon + 1, tag) == 0);
}

/* The digest a `docker save` member's name carries ("blobs/sha256/HEX",
 * or "HEX.json" for an older config), into OUT; false when none. */
static bool member_digest(const char *name, char out[IMAGE_DIGEST_SIZE])
{
	char d[IMAGE_DIGEST_SIZE + 8];

	if (strncmp(name, "blobs/sha256/", 13) == 0 && strlen(name) == 13 + 64)
		snprintf(d, sizeof(d), "sha256:%s", name + 13);
	else if (strlen(name) == 64 + 5 && strcmp(name + 64, ".json") == 0)
		snprintf(d, sizeof(d), "sha256:%.64s", name);
	else
		return false;
	if (!digest_ok(d))
		return false;
	memcpy(out, d, IMAGE_DIGEST_SIZE);
	return true;
}

/* The one image of manifest.json's array LIST that TAG names (NULL: the
 * only one), in *PICK. */
static int docker_choose(const struct json *list, const char *tag, const struct json **pick,
			 char *msg, size_t msgsize)
{
	char names[512] = "", b[256];
	size_t n = 0, at = 0;

	if (!list || list->type != JSON_ARRAY) {
		fail(msg, msgsize, "manifest.json: not an array of images");
		return -EINVAL;
	}
	for (const struct json *m = list->child; m; m = m->next) {
		const struct json *tags = json_get(m, "RepoTags");
		bool match = !tag;

		if (m->type != JSON_OBJECT) {
			fail(msg, msgsize, "manifest.json: an image that is not an object");
			return -EINVAL;
		}
		if (tags && tags->type == JSON_ARRAY)
			for (const struct json *t = tags->child; t; t = t->next) {
				if (t->type != JSON_STRING)
					continue;
				if (tag && repo_tag_matches(t->str, tag))
					match = true;
				if (at < sizeof(names))
					at += (size_t)snprintf(names + at, sizeof(names) - at,
							       "%s'%s'", at ? ", " : "",
							       esc(t->str, b));
			}
		if (match) {
			n++;
			*pick = m;
		}
	}
	if (n == 1)
		return 0;
	if (n == 0 && tag) {
		fail(msg, msgsize, "manifest.json: no image tagged '%s' (tags: %s)", esc(tag, b),
		     at ? names : "none");
		return -ENOENT;
	}
	if (n == 0) {
		fail(msg, msgsize, "manifest.json: no image");
		return -ENOENT;
	}
	fail(msg, msgsize, "manifest.json: %zu images%s%s%s; name one with FILE:TAG (tags: %s)", n,
	     tag ? " tagged '" : "", tag ? esc(tag, b) : "", tag ? "'" : "", at ? names : "none");
	return -ENOTUNIQ;
}

/*
 * `docker save`'s own format: manifest.json names, for each image, its
 * config ("HEX.json", whose name is its digest, or "blobs/sha256/HEX")
 * and its layers ("ID/layer.tar", uncompressed and named by no digest,
 * or "blobs/sha256/HEX").  The config is checked against the digest its
 * name carries; a layer.tar against its diff_id alone, which covers
 * every byte applied, since the layer is the tar stream itself.
 */
static int docker_open(struct image *img, const char *tag, char *msg, size_t msgsize)
{
	struct json *doc = NULL, *config = NULL;
	const struct json *pick = NULL, *layers, *diff_ids, *l, *id;
	const char *cname;
	char digest[IMAGE_DIGEST_SIZE], what[64], b[256];
	struct file f;
	size_t i = 0;
	int r;

	r = read_layout_json(img, "manifest.json", &doc, msg, msgsize);
	if (r < 0)
		return r;
	r = docker_choose(doc, tag, &pick, msg, msgsize);
	if (r < 0)
		goto out;
	cname = json_get_string(pick, "Config");
	if (!cname) {
		fail(msg, msgsize, "manifest.json: the image has no Config");
		r = -EINVAL;
		goto out;
	}
	if (!member_digest(cname, digest)) {
		fail(msg, msgsize, "manifest.json: Config '%s' is not named by its digest: it cannot be checked",
		     esc(cname, b));
		r = -EINVAL;
		goto out;
	}
	snprintf(img->manifest, sizeof(img->manifest), "%s", digest);
	r = open_top(img, cname, "the config", &f, msg, msgsize);
	if (r < 0)
		goto out;
	if (f.size > CONFIG_JSON_MAX) {
		fail(msg, msgsize, "config %.19s: %llu bytes, more than %llu", digest,
		     (unsigned long long)f.size, (unsigned long long)CONFIG_JSON_MAX);
		r = -E2BIG;
		goto out;
	}
	snprintf(what, sizeof(what), "config %.19s", digest);
	r = read_checked_json(img, &f, digest, what, &config, msg, msgsize);
	if (r < 0)
		goto out;
	r = config_diff_ids(config, digest, &diff_ids, msg, msgsize);
	if (r < 0)
		goto out;
	layers = array_of(pick, "Layers");
	if (!layers) {
		fail(msg, msgsize, "manifest.json: the image has no Layers array");
		r = -EINVAL;
		goto out;
	}
	if (layers->n != diff_ids->n || layers->n > LAYERS_MAX) {
		fail(msg, msgsize, "manifest.json has %zu layers and the config %zu diff_ids%s",
		     layers->n, diff_ids->n, layers->n > LAYERS_MAX ? " (or too many)" : "");
		r = -EINVAL;
		goto out;
	}
	img->layers = calloc(layers->n ? layers->n : 1, sizeof(*img->layers));
	if (!img->layers) {
		r = -ENOMEM;
		goto out;
	}
	for (l = layers->child, id = diff_ids->child; l; l = l->next, id = id->next, i++) {
		struct image_layer *il = &img->layers[i];
		unsigned char head[HEAD_BYTES];
		ssize_t n;

		il->fd = -1;
		img->n_layers = i + 1;
		snprintf(what, sizeof(what), "layer %zu", i + 1);
		if (l->type != JSON_STRING) {
			fail(msg, msgsize, "manifest.json: %s is not a member's name", what);
			r = -EINVAL;
			goto out;
		}
		if (id->type != JSON_STRING || !digest_ok(id->str)) {
			fail(msg, msgsize, "%s: diff_id refused: only sha256: and 64 lowercase hex digits",
			     what);
			r = -EINVAL;
			goto out;
		}
		snprintf(il->diff_id, sizeof(il->diff_id), "%s", id->str);
		if (!member_digest(l->str, il->digest))
			il->digest[0] = '\0';
		if (il->digest[0])
			snprintf(il->label, sizeof(il->label), "%.19s", il->digest);
		else
			snprintf(il->label, sizeof(il->label), "%.95s", esc(l->str, b));
		r = open_top(img, l->str, what, &f, msg, msgsize);
		if (r < 0)
			goto out;
		il->fd = f.fd;
		il->offset = f.off;
		il->size = f.size;
		/* manifest.json says nothing of a layer's compression: its
		 * content does, and is then held to it. */
		do
			n = pread(f.fd, head, sizeof(head), (off_t)f.off);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			r = -errno;
			fail(msg, msgsize, "%s (%s): cannot read it: %s", what, il->label, strerror(-r));
			goto out;
		}
		il->kind = decode_sniff(head, (size_t)n < f.size ? (size_t)n : (size_t)f.size);
		if (il->kind != DEC_NONE && il->kind != DEC_GZIP && il->kind != DEC_ZSTD) {
			fail(msg, msgsize, "%s (%s): compressed as %s: refused, a layer is a tar, tar+gzip or tar+zstd",
			     what, il->label, decode_name(il->kind));
			r = -EOPNOTSUPP;
			goto out;
		}
	}
out:
	json_free(doc);
	json_free(config);
	return r;
}

int image_open(struct image *img, int dirfd, const char *tag, const char *platform,
	       char *msg, size_t msgsize)
{
	struct json *doc = NULL, *keep = NULL, *manifest = NULL, *config = NULL;
	const struct json *diff_ids, *layers;
	const char *v, *mt;
	struct desc d;
	char b[256];
	int r, fd;

	memset(img, 0, sizeof(*img));
	img->dirfd = img->blobs_fd = img->archive_fd = -1;
	msg[0] = '\0';
	r = open_source(img, dirfd, msg, msgsize);
	if (r < 0)
		return r;
	/* `docker save` before Docker 25 writes manifest.json alone; since,
	 * an OCI layout beside it, which is read instead (it has digests
	 * for every blob, manifest.json none for its layer.tar files). */
	if (img->archive_fd >= 0 && !tar_index_has(&img->ix, "oci-layout") &&
	    tar_index_has(&img->ix, "manifest.json")) {
		r = docker_open(img, tag, msg, msgsize);
		if (r < 0)
			image_free(img);
		return r;
	}
	r = read_layout_json(img, "oci-layout", &doc, msg, msgsize);
	if (r < 0)
		goto out;
	v = json_get_string(doc, "imageLayoutVersion");
	/* 1.0.0 is the one version there is; a later 1.x reads the same. */
	if (!v || strncmp(v, "1.", 2) != 0) {
		fail(msg, msgsize, "oci-layout: imageLayoutVersion '%s' is not 1.x",
		     esc(v, b));
		r = -EPROTONOSUPPORT;
		goto out;
	}
	json_free(doc);
	doc = NULL;
	if (img->archive_fd < 0) {
		fd = open_dir(img->dirfd, "blobs", "blobs/", msg, msgsize);
		if (fd < 0) {
			r = fd;
			goto out;
		}
		img->blobs_fd = open_dir(fd, "sha256", "blobs/sha256/", msg, msgsize);
		close(fd);
		if (img->blobs_fd < 0) {
			r = img->blobs_fd;
			goto out;
		}
	}
	r = read_layout_json(img, "index.json", &doc, msg, msgsize);
	if (r < 0)
		goto out;
	r = choose(img, json_get(doc, "manifests"), "index.json", tag, platform, 0, &d, &keep,
		   msg, msgsize);
	if (r < 0)
		goto out;
	snprintf(img->manifest, sizeof(img->manifest), "%s", d.digest);
	r = read_blob_json(img, &d, "manifest", LAYOUT_JSON_MAX, &manifest, msg, msgsize);
	if (r < 0)
		goto out;
	mt = json_get_string(manifest, "mediaType");
	{
		uint64_t sv;

		if (!json_uint(json_get(manifest, "schemaVersion"), &sv) || sv != 2) {
			fail(msg, msgsize, "manifest %.19s: schemaVersion is not 2", d.digest);
			r = -EINVAL;
			goto out;
		}
	}
	if (mt && strcmp(mt, d.media_type) != 0) {
		fail(msg, msgsize, "manifest %.19s: mediaType '%s' is not the one its descriptor says",
		     d.digest, esc(mt, b));
		r = -EINVAL;
		goto out;
	}
	r = read_config(img, manifest, &config, &diff_ids, msg, msgsize);
	if (r < 0)
		goto out;
	layers = array_of(manifest, "layers");
	if (!layers) {
		fail(msg, msgsize, "manifest %.19s: no layers array", d.digest);
		r = -EINVAL;
		goto out;
	}
	r = open_layers(img, layers, diff_ids, msg, msgsize);
out:
	json_free(doc);
	json_free(keep);
	json_free(manifest);
	json_free(config);
	if (r < 0)
		image_free(img);
	return r;
}

/* The first pass: the blob's bytes, each hashed once as it is read. */
struct blob_reader {
	int fd;
	uint64_t base;			/* where the blob starts in fd */
	uint64_t off, size;
	struct sha256 sh;
	volatile sig_atomic_t *cancelled;
};

static ssize_t blob_read(void *ctx, unsigned char *buf, size_t cap, int *err,
			 const char **msg)
{
	struct blob_reader *br = ctx;
	ssize_t n;

	if (*br->cancelled) {
		*err = EINTR;
		*msg = "interrupted";
		return -1;
	}
	/* Never past the descriptor's size: a blob that grew is not the
	 * one described (its digest will say so). */
	if (br->off >= br->size)
		return 0;
	if (cap > br->size - br->off)
		cap = (size_t)(br->size - br->off);
	do
		n = pread(br->fd, buf, cap, (off_t)(br->base + br->off));
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		*err = errno;
		*msg = "cannot read the layer's blob";
		return -1;
	}
	if (n == 0) {
		*err = EILSEQ;
		*msg = "the layer's blob is shorter than its descriptor says";
		return -1;
	}
	sha256_update(&br->sh, buf, (size_t)n);
	br->off += (uint64_t)n;
	return n;
}

int image_verify_layer(struct image *img, size_t i, volatile sig_atomic_t *cancelled,
		       char *msg, size_t msgsize)
{
	struct image_layer *l = &img->layers[i];
	struct blob_reader br = { .fd = l->fd, .base = l->offset, .size = l->size,
				  .cancelled = cancelled };
	unsigned char head[HEAD_BYTES], buf[65536], sum[32];
	char got[IMAGE_DIGEST_SIZE];
	struct decoder *dec = NULL;
	struct sha256 diff;
	const char *m = NULL;
	enum dec_kind kind;
	size_t have = 0;
	bool first = true;
	ssize_t n;
	int err = 0, r = 0;

	/* The blob's digest first, on its own: a blob that is not the one
	 * described is named as such, before a decoder says it is damaged,
	 * and nothing of it is decoded.  It costs one more read of the
	 * compressed bytes (from the page cache, most often). */
	sha256_init(&br.sh);
	/* A `docker save` layer.tar has no digest of its own: its diff_id,
	 * below, is its check. */
	while (l->digest[0] && (n = blob_read(&br, buf, sizeof(buf), &err, &m)) > 0)
		;
	if (l->digest[0] && n < 0)
		goto read_failed;
	sha256_final(&br.sh, sum);
	hex_digest(sum, got);
	if (l->digest[0] && strcmp(got, l->digest) != 0) {
		fail(msg, msgsize, "layer %zu: blob %s: content does not match its digest (it is %s)",
		     i + 1, l->digest, got);
		return -EILSEQ;
	}
	/* Then what it decompresses to, against its diff_id.  The blob
	 * may change under us only if the layout's writer changes it. */
	br.off = 0;
	sha256_init(&br.sh);
	sha256_init(&diff);
	while (have < sizeof(head)) {
		n = blob_read(&br, head + have, sizeof(head) - have, &err, &m);
		if (n < 0)
			goto read_failed;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	/* The stream the run will apply is what input.c's strict layer
	 * reader decodes: exactly the media type's compression, once. */
	kind = decode_sniff(head, have);
	if (kind != l->kind) {
		fail(msg, msgsize, "layer %zu (%s): its media type says %s, its content is %s",
		     i + 1, l->label, l->kind == DEC_NONE ? "uncompressed" : decode_name(l->kind),
		     kind == DEC_NONE ? "not compressed" : decode_name(kind));
		return -EILSEQ;
	}
	if (kind == DEC_NONE) {
		sha256_update(&diff, head, have);
		while ((n = blob_read(&br, buf, sizeof(buf), &err, &m)) > 0)
			sha256_update(&diff, buf, (size_t)n);
		if (n < 0)
			goto read_failed;
	} else {
		struct decode_opts o = {
			.kind = kind,
			.raw = blob_read,
			.raw_ctx = &br,
			.cancelled = cancelled,
			.threads = 1,
			.memlimit = SE_XZ_MEMLIMIT_DEFAULT,
			.memlimit_stop = SE_XZ_MEMLIMIT_STOP,
		};
		const void *p;
		char dm[256] = "";

		r = decode_start(&dec, &o, head, have, dm, sizeof(dm));
		if (r < 0) {
			fail(msg, msgsize, "layer %zu (%s): %s", i + 1, l->label, dm);
			return r;
		}
		while ((n = decode_read(dec, &p, &err, &m)) > 0) {
			if (first && decode_sniff(p, (size_t)n) != DEC_NONE) {
				decode_end(dec);
				fail(msg, msgsize, "layer %zu (%s): compressed twice over; refused",
				     i + 1, l->label);
				return -EILSEQ;
			}
			first = false;
			sha256_update(&diff, p, (size_t)n);
		}
		decode_end(dec);
		if (n < 0)
			goto read_failed;
		/* What follows the compressed stream is still the blob's. */
		while ((n = blob_read(&br, buf, sizeof(buf), &err, &m)) > 0)
			;
		if (n < 0)
			goto read_failed;
	}
	sha256_final(&br.sh, sum);
	hex_digest(sum, got);
	if (l->digest[0] && strcmp(got, l->digest) != 0) {
		fail(msg, msgsize, "layer %zu: blob %s changed while it was read", i + 1,
		     l->digest);
		return -EILSEQ;
	}
	sha256_final(&diff, sum);
	hex_digest(sum, got);
	if (strcmp(got, l->diff_id) != 0) {
		fail(msg, msgsize, "layer %zu (%s): its uncompressed content is %s, the config's diff_id says %s",
		     i + 1, l->label, got, l->diff_id);
		return -EILSEQ;
	}
	return 0;
read_failed:
	fail(msg, msgsize, "layer %zu (%s): %s (%s)", i + 1, l->label, m ? m : "damaged",
	     strerror(err ? err : EILSEQ));
	return -(err ? err : EILSEQ);
}

void image_platform(char *buf, size_t bufsize)
{
	static const struct {
		const char *machine, *arch;
	} archs[] = {
		{ "x86_64", "amd64" }, { "amd64", "amd64" },
		{ "i386", "386" }, { "i486", "386" }, { "i586", "386" }, { "i686", "386" },
		{ "aarch64", "arm64" }, { "arm64", "arm64" }, { "aarch64_be", "arm64be" },
		{ "armv8l", "arm/v8" }, { "armv7l", "arm/v7" }, { "armv7", "arm/v7" },
		{ "armv6l", "arm/v6" }, { "armv5tel", "arm/v5" }, { "armv5l", "arm/v5" },
		{ "ppc64le", "ppc64le" }, { "ppc64", "ppc64" }, { "s390x", "s390x" },
		{ "riscv64", "riscv64" }, { "loongarch64", "loong64" },
		{ "mips64", "mips64" }, { "mips", "mips" },
	};
	struct utsname u;
	const char *arch = NULL;

	if (uname(&u) < 0)
		snprintf(u.machine, sizeof(u.machine), "unknown");
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (strcmp(u.machine, archs[i].machine) == 0)
			arch = archs[i].arch;
	snprintf(buf, bufsize, "linux/%s", arch ? arch : u.machine);
}

void image_free(struct image *img)
{
	for (size_t i = 0; i < img->n_layers; i++)
		if (img->layers[i].fd >= 0 && img->layers[i].fd != img->archive_fd)
			close(img->layers[i].fd);
	tar_index_free(&img->ix);
	if (img->archive_fd >= 0)
		close(img->archive_fd);
	free(img->layers);
	if (img->blobs_fd >= 0)
		close(img->blobs_fd);
	if (img->dirfd >= 0)
		close(img->dirfd);
	memset(img, 0, sizeof(*img));
	img->dirfd = img->blobs_fd = img->archive_fd = -1;
}
