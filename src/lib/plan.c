/*
 * plan.c - one decode of the header into a plan, and the name checks and
 * member selection that decide whether an entry goes on.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static bool copy_str(char **dst, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > *cap) {
		char *nb = realloc(*dst, n);

		if (!nb)
			return false;
		*dst = nb;
		*cap = n;
	}
	memcpy(*dst, s, n);
	return true;
}

static enum plan_kind kind_of(struct archive_entry *e, mode_t ftype)
{
	if (archive_entry_hardlink(e))
		return PK_HARDLINK;
	switch (ftype) {
	case AE_IFREG: return PK_FILE;
	case AE_IFDIR: return PK_DIR;
	case AE_IFLNK: return PK_SYMLINK;
	case AE_IFIFO: return PK_FIFO;
	case AE_IFCHR: return PK_CHR;
	case AE_IFBLK: return PK_BLK;
	case AE_IFSOCK: return PK_SOCK;
	default: return PK_UNKNOWN;
	}
}

static const char *const type_names[] = {
	[PK_FILE] = "file", [PK_DIR] = "directory", [PK_SYMLINK] = "symlink",
	[PK_HARDLINK] = "hardlink", [PK_FIFO] = "fifo", [PK_CHR] = "char-device",
	[PK_BLK] = "block-device", [PK_SOCK] = "socket", [PK_UNKNOWN] = "unknown",
};

/* Clean RAW into OUT or say why not. */
static bool clean_name(const struct policy *pol, const char *raw, char *out,
		       bool is_dir, struct outcome *o, bool *absolute)
{
	enum name_verdict v = names_clean(raw, pol->strip_components, out, absolute);

	if (v == NAME_STRIPPED_AWAY)
		*absolute = false;
	switch (v) {
	case NAME_OK:
		return true;
	case NAME_ROOT:
		if (is_dir)
			return true;
		*o = refuse("empty name", EINVAL);
		return false;
	case NAME_STRIPPED_AWAY:
		*o = ok(SE_SKIPPED);
		o->reason = names_verdict_reason(v);
		return false;
	case NAME_TOO_LONG:
		*o = refuse(names_verdict_reason(v), ENAMETOOLONG);
		return false;
	default:
		*o = refuse(names_verdict_reason(v), EINVAL);
		return false;
	}
}

static struct outcome not_selected(void)
{
	return (struct outcome){ SE_SKIPPED, "not selected", 0, false };
}

bool plan_decode(struct plan *p, struct archive_entry *e)
{
	/* In a locale that cannot hold the name (C), take the bytes
	 * libarchive decoded rather than refusing an "empty name". */
	const char *raw = archive_entry_pathname(e);

	if (!raw)
		raw = archive_entry_pathname_utf8(e);
	if (!raw)
		raw = "";
	p->ftype = archive_entry_filetype(e);
	p->kind = kind_of(e, p->ftype);
	p->type = type_names[p->kind];
	p->path[0] = '\0';
	p->absolute = false;
	p->perm = archive_entry_perm(e) & 07777;
	p->size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
	p->sparse = archive_entry_sparse_count(e) > 0;
	p->nlink = archive_entry_nlink(e);
	p->rdev = archive_entry_rdev(e);
	p->uid = archive_entry_uid(e);
	p->gid = archive_entry_gid(e);
	p->mtime_set = archive_entry_mtime_is_set(e);
	p->mtime = (struct timespec){ archive_entry_mtime(e), archive_entry_mtime_nsec(e) };
	if (!copy_str(&p->name, &p->name_cap, raw) ||
	    !copy_str(&p->target, &p->target_cap, ""))
		goto oom;
	if (p->kind == PK_SYMLINK && archive_entry_symlink(e) &&
	    !copy_str(&p->target, &p->target_cap, archive_entry_symlink(e)))
		goto oom;
	return true;
oom:
	return false;
}

bool plan_entry(struct plan *p, struct archive_entry *e, struct policy *pol,
		struct outcome *o)
{
	const char *raw, *hardlink = archive_entry_hardlink(e);
	bool literal = pol->opts & SE_OPT_LITERAL_NAMES, target_absolute;

	if (!plan_decode(p, e))
		goto oom;
	raw = p->name;
	if (!clean_name(pol, raw, p->path, p->kind == PK_DIR, o, &p->absolute)) {
		p->path[0] = '\0';
		/* As tar: members the command line did not select are not
		 * examined, so an unselected bad name is not a refusal. */
		if (pol->includes.n && o->act == SE_REFUSED &&
		    !names_included(raw + strspn(raw, "/"), pol->includes.v,
				    pol->includes.n, literal, NULL))
			*o = not_selected();
		return false;
	}
	if (!names_included(p->path, pol->includes.v, pol->includes.n, literal,
			    pol->pattern_hit) ||
	    names_excluded(p->path, pol->excludes.v, pol->excludes.n)) {
		*o = not_selected();
		return false;
	}
	if (pol->occurrence && pol->includes.n) {
		size_t seen = map_get(&pol->seen_names, p->path);

		seen = seen == MAP_NONE ? 1 : seen + 1;
		if (!map_put(&pol->seen_names, p->path, seen))
			goto oom;
		if (seen != pol->occurrence) {
			*o = (struct outcome){ SE_SKIPPED, "not the occurrence asked for", 0, false };
			return false;
		}
	}
	if (hardlink) {
		char t[SE_PATH_MAX];

		/* CVE-2016-5418: a hardlink target gets the same name checks
		 * as a name, then the same scoped resolution. */
		if (!clean_name(pol, hardlink, t, false, o, &target_absolute)) {
			if (o->act == SE_REFUSED)
				o->reason = o->err == ENAMETOOLONG ?
					    "hardlink target too long" :
					    "hardlink target is unsafe ('..' or empty)";
			return false;
		}
		if (!copy_str(&p->target, &p->target_cap, t))
			goto oom;
	}
	return true;
oom:
	*o = fatal("out of memory", ENOMEM);
	return false;
}

void plan_meta(struct plan *p, struct archive_entry *e, struct policy *pol)
{
	plan_clear(p);
	p->own = plan_owner(pol, e);
	entry_times(pol, e, p->times);
	p->attrs = entry_attrs(pol, e, &p->own);
}

void plan_clear(struct plan *p)
{
	attr_free(p->attrs);
	p->attrs = NULL;
}

void plan_free(struct plan *p)
{
	plan_clear(p);
	free(p->name);
	free(p->target);
	p->name = p->target = NULL;
	p->name_cap = p->target_cap = 0;
}
