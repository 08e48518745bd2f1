/*
 * xattr.c - extended attributes and POSIX ACLs from an entry, and which
 * of them are restored.
 */
#include "config.h"

#include <archive.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xattr.h"


static void attr_add(struct attr_blob **list, const char *name,
		     const void *value, size_t size)
{
	struct attr_blob *b = malloc(sizeof(*b) + size);

	if (!b)
		return;
	b->name = strdup(name);
	if (!b->name) {
		free(b);
		return;
	}
	b->size = size;
	if (size)
		memcpy(b->value, value, size);
	b->next = *list;
	*list = b;
}


void attr_free(struct attr_blob *list)
{
	while (list) {
		struct attr_blob *n = list->next;

		free(list->name);
		free(list);
		list = n;
	}
}


/* The kernel's POSIX ACL xattr format (include/uapi/linux/posix_acl_xattr.h). */
struct acl_xattr_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};


enum {
	ACL_X_USER_OBJ = 0x01, ACL_X_USER = 0x02, ACL_X_GROUP_OBJ = 0x04,
	ACL_X_GROUP = 0x08, ACL_X_MASK = 0x10, ACL_X_OTHER = 0x20,
};


static int acl_entry_cmp(const void *a, const void *b)
{
	const struct acl_xattr_entry *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}


/* Build one ACL (access or default) of entry E as the kernel wants it. */
static void acl_collect(struct archive_entry *e, int type, mode_t mode,
			struct attr_blob **list)
{
	struct acl_xattr_entry ent[256];
	unsigned char buf[4 + sizeof(ent)];
	size_t n = 0;
	bool have[0x21] = { false };
	int atype, perm, tag, qual;
	const char *qname;
	uint32_t version = 2;

	if (archive_entry_acl_reset(e, type) <= 0)
		return;
	while (n < 250 && archive_entry_acl_next(e, type, &atype, &perm, &tag,
					       &qual, &qname) == ARCHIVE_OK) {
		uint16_t t;

		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: t = ACL_X_USER_OBJ; break;
		case ARCHIVE_ENTRY_ACL_USER: t = ACL_X_USER; break;
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: t = ACL_X_GROUP_OBJ; break;
		case ARCHIVE_ENTRY_ACL_GROUP: t = ACL_X_GROUP; break;
		case ARCHIVE_ENTRY_ACL_MASK: t = ACL_X_MASK; break;
		case ARCHIVE_ENTRY_ACL_OTHER: t = ACL_X_OTHER; break;
		default: continue;
		}
		if (have[t] && t != ACL_X_USER && t != ACL_X_GROUP)
			continue;
		have[t] = true;
		ent[n].tag = t;
		ent[n].perm = (uint16_t)(perm & 7);
		ent[n].id = (t == ACL_X_USER || t == ACL_X_GROUP) ?
			    (uint32_t)qual : 0xffffffffu;
		n++;
	}
	if (n == 0)
		return;
	/* The kernel rejects an ACL without the three base entries. */
	if (!have[ACL_X_USER_OBJ])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_USER_OBJ, (mode >> 6) & 7, 0xffffffffu };
	if (!have[ACL_X_GROUP_OBJ])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_GROUP_OBJ, (mode >> 3) & 7, 0xffffffffu };
	if (!have[ACL_X_OTHER])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_OTHER, mode & 7, 0xffffffffu };
	if ((have[ACL_X_USER] || have[ACL_X_GROUP]) && !have[ACL_X_MASK])
		ent[n++] = (struct acl_xattr_entry){ ACL_X_MASK, 7, 0xffffffffu };
	qsort(ent, n, sizeof(ent[0]), acl_entry_cmp);
	memcpy(buf, &version, 4);
	memcpy(buf + 4, ent, n * sizeof(ent[0]));
	attr_add(list, type == ARCHIVE_ENTRY_ACL_TYPE_DEFAULT ?
		 "system.posix_acl_default" : "system.posix_acl_access",
		 buf, 4 + n * sizeof(ent[0]));
}


static bool xattr_listed(const char *name, char *const *globs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0)
			return true;
	return false;
}


/*
 * Which archive xattrs are restored.  As GNU tar: only "user.*" unless
 * --xattrs-include names others, minus --xattrs-exclude.  trusted.* and
 * security.* change what the kernel or a security module lets the file do;
 * security.capability is a set-uid bit by another name (a cap_setuid file
 * from an archive is a root shell), so it also needs the set-id rule.
 */
static bool xattr_wanted(const struct policy *run, const char *name,
			 const struct owner_plan *own)
{
	const struct pattern_list *inc = &run->xattr_includes;
	const struct pattern_list *exc = &run->xattr_excludes;
	bool in = inc->n ? xattr_listed(name, inc->v, inc->n) :
		  strncmp(name, "user.", 5) == 0;

	if (!in || xattr_listed(name, exc->v, exc->n))
		return false;
	if (strcmp(name, "security.capability") == 0)
		return caps_allowed(run, own);
	return true;
}

/*
 * GNU tar writes an xattr name into its pax keyword SCHILY.xattr.NAME
 * with '%' and '=' as %25 and %3D (an '=' would end the keyword), and
 * libarchive hands the name over as written: "user.a%3Db" is user.a=b.
 * Only those two are decoded, as tar's reader does; any other '%' stays.
 * False when NAME does not fit OUT.
 */
static bool xattr_name_decode(const char *name, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *p = name; *p; p++) {
		char c = *p;

		if (p[0] == '%' && p[1] == '2' && p[2] == '5') {
			c = '%';
			p += 2;
		} else if (p[0] == '%' && p[1] == '3' && (p[2] == 'D' || p[2] == 'd')) {
			c = '=';
			p += 2;
		}
		if (o + 1 >= cap)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

/*
 * In an overlayfs upper directory, an xattr in overlayfs's own namespace
 * (NS, "trusted.overlay." or "user.overlay.") is the mount's, not the
 * file's: an image's "trusted.overlay.redirect" or ".metacopy" applied as
 * it is would make the merged view show another layer's file, an
 * ".opaque" hide a lower directory.  Linux 6.7 reads NS"overlay."NAME as
 * the file's own NS NAME, so the image's is stored that way.  False when
 * the escaped name does not fit OUT (then the xattr is not restored).
 */
static bool xattr_overlay_escape(const char *ns, const char *name, char *out, size_t cap)
{
	size_t n = strlen(ns);
	int r;

	if (strncmp(name, ns, n) != 0)
		return snprintf(out, cap, "%s", name) < (int)cap;
	r = snprintf(out, cap, "%soverlay.%s", ns, name + n);
	return r >= 0 && (size_t)r < cap;
}

struct attr_blob *entry_attrs(const struct policy *run, struct archive_entry *e,
				     const struct owner_plan *own)
{
	struct attr_blob *list = NULL;
	const char *name;
	const void *value;
	size_t size;

	if (run->opts & SE_OPT_XATTRS) {
		archive_entry_xattr_reset(e);
		while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
			/* XATTR_NAME_MAX is 255: a longer name is no name. */
			char decoded[256], stored[256];

			if (!xattr_name_decode(name, decoded, sizeof(decoded)))
				continue;
			/* ACLs come through --acls, in the format checked above. */
			if (strncmp(decoded, "system.posix_acl_", 17) == 0)
				continue;
			if (!xattr_wanted(run, decoded, own))
				continue;
			if (!run->overlay_ns)
				attr_add(&list, decoded, value, size);
			else if (xattr_overlay_escape(run->overlay_ns, decoded, stored,
						      sizeof(stored)))
				attr_add(&list, stored, value, size);
		}
	}
	if (run->opts & SE_OPT_ACLS) {
		mode_t m = archive_entry_perm(e);

		acl_collect(e, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, m, &list);
		if (archive_entry_filetype(e) == AE_IFDIR)
			acl_collect(e, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, m, &list);
	}
	return list;
}
