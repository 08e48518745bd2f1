/*
 * owner.c - the owner, mode and times an entry gets, and the set-id policy.
 */
#include "config.h"

#include <archive.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "owner.h"

/* ---- owner names ------------------------------------------------------ */

/*
 * NAME's id in a passwd or group file held in DB (NUL-terminated): the
 * third field of the line whose first is NAME.  False when absent.
 */
static bool db_find(const char *db, const char *name, uint32_t *id)
{
	size_t len = strlen(name);

	for (const char *l = db; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *p;
		char *end;
		unsigned long v;

		if (strncmp(l, name, len) != 0 || l[len] != ':')
			continue;
		p = strchr(l + len + 1, ':');	/* past the password field */
		if (!p)
			return false;
		v = strtoul(p + 1, &end, 10);
		if (end == p + 1 || *end != ':' || v >= UINT32_MAX)
			return false;
		*id = (uint32_t)v;
		return true;
	}
	return false;
}

/*
 * The root's own etc/passwd or etc/group, read once through the resolver
 * (a symlinked etc/passwd is not followed out of the root): in SE_IN_ROOT
 * mode owner names belong to the tree being unpacked, not to the host.
 * An absent or unreadable file maps no name (ids stay numeric).
 */
static const char *root_db(struct policy *run, bool group)
{
	char **slot = group ? &run->group_db : &run->passwd_db;
	const char *path = group ? "etc/group" : "etc/passwd";
	const size_t max = 8u << 20;
	size_t len = 0, cap = 0;
	const char *leaf;
	char *buf = NULL;
	int dirfd, fd;

	if (*slot)
		return *slot;
	dirfd = rs_open_parent(run->rs, path, false, 0, &leaf);
	fd = dirfd < 0 ? -1 : rs_open_leaf(run->rs, dirfd, leaf, O_RDONLY | O_NONBLOCK);
	if (dirfd >= 0)
		close(dirfd);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			for (;;) {
				ssize_t n;

				if (len + 4096 + 1 > cap) {
					char *nb;

					cap = cap ? cap * 2 : 16384;
					if (cap > max + 1 || !(nb = realloc(buf, cap)))
						break;
					buf = nb;
				}
				n = read(fd, buf + len, cap - len - 1);
				if (n <= 0)
					break;
				len += (size_t)n;
			}
		}
		close(fd);
	}
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[len] = '\0';
	*slot = buf;
	return buf ? buf : "";
}

/* NAME as a user (GROUP false) or group id, by the run's rule. */
static bool name_to_id(struct policy *run, bool group, const char *name, uint32_t *id)
{
	if (run->owner_cb) {
		unsigned int v;

		if (run->owner_cb(run->owner_data, group, name, &v) != 0)
			return false;
		*id = v;
		return true;
	}
	if (run->rs && run->rs->in_root)
		return db_find(root_db(run, group), name, id);
	if (group) {
		struct group *gr = getgrnam(name);

		if (gr)
			*id = gr->gr_gid;
		return gr != NULL;
	} else {
		struct passwd *pw = getpwnam(name);

		if (pw)
			*id = pw->pw_uid;
		return pw != NULL;
	}
}

/*
 * The owner (GROUP false) or group id an entry names: by name unless
 * SE_OPT_NUMERIC_OWNER, else by number.  False when the number cannot be
 * an owner: chown(2) takes 32 bits and reads (uid_t)-1 as "leave it", so a
 * pax uid=4294967296 would become root and 4294967295 would silently keep
 * the extracting user.
 */
static bool entry_owner_id(struct policy *run, struct archive_entry *e, bool group,
			   uint32_t *out)
{
	const char *name = group ? archive_entry_gname(e) : archive_entry_uname(e);
	la_int64_t id = group ? archive_entry_gid(e) : archive_entry_uid(e);
	struct name_cache *c = &run->name_cache[group];

	if (!(run->opts & SE_OPT_NUMERIC_OWNER) && name && *name) {
		/* One name repeats over many entries: look it up once. */
		if (c->valid && strcmp(name, c->name) == 0) {
			*out = c->id;
			return true;
		}
		if (strlen(name) < sizeof(c->name) && name_to_id(run, group, name, out)) {
			snprintf(c->name, sizeof(c->name), "%s", name);
			c->id = *out;
			c->valid = true;
			return true;
		}
	}
	if (id < 0 || id >= (la_int64_t)UINT32_MAX)
		return false;
	*out = (uint32_t)id;
	return true;
}

/* ---- id maps ------------------------------------------------------------ */

/*
 * The host id of container id ID of kind GROUP (0 users, 1 groups) under
 * the run's ranges (se_run_add_id_map): false when no range holds it.
 * No range of either kind: ID itself.  Ranges of one kind only: the
 * other kind holds no id, never "as it is", which would give the
 * container's group 0 the host's.  Ranges were checked not to overlap
 * and not to reach 4294967295, so the sum cannot wrap.
 */
static bool map_id(const struct policy *run, int group, uint32_t id, uint32_t *out)
{
	const struct id_ranges *r = &run->id_maps[group];

	if (run->id_maps[0].n == 0 && run->id_maps[1].n == 0) {
		*out = id;
		return true;
	}
	for (size_t i = 0; i < r->n; i++) {
		if (id >= r->v[i].inside && id - r->v[i].inside < r->v[i].count) {
			*out = r->v[i].outside + (id - r->v[i].inside);
			return true;
		}
	}
	return false;
}

const char *owner_unmapped_reason(const struct owner_plan *p, char *buf, size_t cap)
{
	const char *what = p->setid_dropped ? "owner and set-id bits" : "owner";
	int n;

	switch (p->unmapped) {
	case SE_MAP_UID:
		n = snprintf(buf, cap, "uid %" PRIu32 " is outside every --map-ids range: %s not restored",
			     p->unmapped_uid, what);
		break;
	case SE_MAP_GID:
		n = snprintf(buf, cap, "gid %" PRIu32 " is outside every --map-ids range: %s not restored",
			     p->unmapped_gid, what);
		break;
	case SE_MAP_UID | SE_MAP_GID:
		n = snprintf(buf, cap, "uid %" PRIu32 " and gid %" PRIu32
			     " are outside every --map-ids range: %s not restored",
			     p->unmapped_uid, p->unmapped_gid, what);
		break;
	default:
		return NULL;
	}
	/* A cut reason would still read as a whole one. */
	return n < 0 || (size_t)n >= cap ? "owner id outside every --map-ids range: owner not restored" : buf;
}

/* ---- owners and modes ------------------------------------------------- */

/*
 * Owner and mode for entry E.  As GNU tar: without -p only the rwx bits
 * survive, less the umask.  Set-id bits survive only together with the
 * owner they were meant for: a 6755 file of uid 1000 extracted by root
 * with --no-same-owner, with an owner id out of range, or with an id no
 * --map-ids range holds, would otherwise become set-uid root.
 */
struct owner_plan plan_owner(struct policy *run, struct archive_entry *e)
{
	unsigned long long f = run->opts;
	struct owner_plan p = { .mode = archive_entry_perm(e) & 07777 };
	mode_t asked = p.mode;
	uint32_t uid, gid;

	if (!(f & SE_OPT_SAME_PERMS))
		p.mode &= 0777 & ~run->umask;
	p.set_owner = run->is_root && (f & SE_OPT_SAME_OWNER);
	if (p.set_owner && (!entry_owner_id(run, e, false, &uid) ||
			    !entry_owner_id(run, e, true, &gid))) {
		p.set_owner = false;
		p.problem = (asked & (S_ISUID | S_ISGID)) ?
			    "owner id out of range: owner and set-id bits not restored" :
			    "owner id out of range: owner not restored";
	} else if (p.set_owner) {
		uint32_t host_uid, host_gid;
		bool uid_held = map_id(run, 0, uid, &host_uid);
		bool gid_held = map_id(run, 1, gid, &host_gid);

		if (uid_held && gid_held) {
			p.uid = host_uid;
			p.gid = host_gid;
		} else {
			/* Never the container's id as it is: its root would
			 * be the host's.  Neither id is set, not half an
			 * owner: the file keeps the process's, reported. */
			p.set_owner = false;
			p.unmapped = (uid_held ? 0 : SE_MAP_UID) | (gid_held ? 0 : SE_MAP_GID);
			p.unmapped_uid = uid;
			p.unmapped_gid = gid;
			p.setid_dropped = asked & (S_ISUID | S_ISGID);
		}
	}
	if (!(run->is_root && (f & SE_OPT_SAME_PERMS) && p.set_owner))
		p.mode &= ~(mode_t)(S_ISUID | S_ISGID);
	return p;
}

/* May file capabilities be restored?  They are set-uid by another name. */
bool caps_allowed(const struct policy *run, const struct owner_plan *p)
{
	return run->is_root && (run->opts & SE_OPT_SAME_PERMS) && p->set_owner;
}

void entry_times(const struct policy *run, struct archive_entry *e, struct timespec ts[2])
{
	/* tar -m: the times of extraction, which the object has already. */
	if (run->opts & SE_OPT_TOUCH) {
		ts[0] = (struct timespec){ .tv_nsec = UTIME_OMIT };
		ts[1] = (struct timespec){ .tv_nsec = UTIME_OMIT };
		return;
	}
	if (archive_entry_atime_is_set(e)) {
		ts[0].tv_sec = archive_entry_atime(e);
		ts[0].tv_nsec = archive_entry_atime_nsec(e);
	} else {
		ts[0].tv_sec = 0;
		ts[0].tv_nsec = UTIME_OMIT;
	}
	if (archive_entry_mtime_is_set(e)) {
		ts[1].tv_sec = archive_entry_mtime(e);
		ts[1].tv_nsec = archive_entry_mtime_nsec(e);
	} else {
		ts[1].tv_sec = 0;
		ts[1].tv_nsec = UTIME_OMIT;
	}
}
