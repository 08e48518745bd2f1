/*
 * metadata.c - owner, mode, xattrs and times, applied only through an fd
 * of the object this run made, never by name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "metadata.h"


/* ---- applying metadata through the object's own fd --------------------- */

/* The first metadata problem of an object: it stays, the entry says so. */
static void incomplete(struct outcome *o, const char *reason, int err)
{
	if (o->act == SE_INCOMPLETE)
		return;
	o->act = SE_INCOMPLETE;
	o->reason = reason;
	o->err = err;
}


/*
 * Owner, mode, attributes and times on FD, an fd of the object this run
 * made (OPATH: an O_PATH fd of a symlink or special file, which takes
 * only owner and times).  Nothing here uses a name: a name can be renamed
 * or exchanged under us between two calls (the metadata escape through a
 * planted hardlink).  Order matters: chown clears set-id bits, so mode
 * comes after it; ACLs after the mode they refine; times last.  A failure
 * keeps the object (as GNU tar) and makes the outcome SE_INCOMPLETE.
 */
struct outcome apply_fd_metadata(char reason[REASON_MAX], int fd, bool opath,
					const struct owner_plan *own,
					mode_t created_mode,
					const struct attr_blob *attrs,
					const struct timespec ts[2])
{
	struct outcome o = ok(SE_CREATED);
	mode_t mode = own->mode;
	int r;

	if (own->problem)
		incomplete(&o, own->problem, ERANGE);
	if (own->unmapped)
		incomplete(&o, owner_unmapped_reason(own, reason, REASON_MAX), ERANGE);
	if (own->set_owner) {
		r = opath ? fchownat(fd, "", own->uid, own->gid,
				     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) :
			    fchown(fd, own->uid, own->gid);
		if (r < 0) {
			incomplete(&o, (mode & (S_ISUID | S_ISGID)) ?
				   "cannot set owner: set-id bits not restored" :
				   "cannot set owner", errno);
			mode &= ~(mode_t)(S_ISUID | S_ISGID);
		}
	}
	if (!opath && mode != created_mode && fchmod(fd, mode) < 0)
		incomplete(&o, "cannot set mode", errno);
	for (const struct attr_blob *a = attrs; a && !opath; a = a->next) {
		char esc[256];

		if (fsetxattr(fd, a->name, a->value, a->size, 0) == 0)
			continue;
		if (o.act != SE_INCOMPLETE) {
			snprintf(reason, REASON_MAX,
				 "cannot set extended attribute or ACL '%s'",
				 se_escape(a->name, esc, sizeof(esc)));
			incomplete(&o, reason, errno);
		}
	}
	r = opath ? utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) :
		    futimens(fd, ts);
	if (r < 0)
		incomplete(&o, "cannot set times", errno);
	return o;
}


/*
 * Owner and times of the symlink or special file just made at LEAF, through
 * an O_PATH fd of it, after checking that the fd is that object: of TYPE
 * and with one link.  Anything else means the name was exchanged under us
 * (for a hardlink to a file outside DEST, say), and nothing is changed.
 */
struct outcome meta_on_object(struct resolver *rs, int dirfd, const char *leaf,
			      mode_t type, const struct owner_plan *plan_own,
			      const struct timespec ts[2],
			      char reason[REASON_MAX])
{
	struct owner_plan own = *plan_own;
	struct stat st;
	struct outcome meta;
	int fd = rs_open_leaf(rs, dirfd, leaf, O_PATH);

	if (fd < 0)
		return fail("the new object disappeared before its metadata was set", -fd);
	if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != type || st.st_nlink != 1) {
		close(fd);
		return fail("the new object was replaced before its metadata was set",
			    ESTALE);
	}
	if (type == S_IFLNK)
		rs_note_link(rs, &st);
	own.mode &= 0777;	/* set at creation; no set-id on these */
	meta = apply_fd_metadata(reason, fd, true, &own, own.mode, NULL, ts);
	close(fd);
	return meta;
}
