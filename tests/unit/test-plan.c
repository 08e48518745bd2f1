/*
 * test-plan.c - the plan stage: header fields and run options in, the plan
 * (kind, cleaned names, selection, owner and mode) out; one row per shape.
 */
#include "config.h"

#include <archive_entry.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/lib/plan.h"
#include "tap.h"

#define ROOT_OWNER 1		/* run as root with SE_OPT_SAME_OWNER */

static const struct {
	const char *what;
	/* the header */
	char type;			/* f d l h p c s */
	const char *name, *link;
	mode_t perm;
	int64_t uid;
	/* the run */
	unsigned long long opts;
	int strip;
	const char *include;
	int who;			/* 0: not root, ROOT_OWNER */
	/* the plan */
	bool go_on;
	enum se_action act;		/* when !go_on */
	int err;
	const char *kind, *path, *target;
	mode_t mode;			/* own.mode, when go_on */
	bool set_owner;
} rows[] = {
	{ "a file", 'f', "a/b", NULL, 0644, 0, 0, 0, NULL, 0,
	  true, 0, 0, "file", "a/b", "", 0644, false },
	{ "umask 022 without -p", 'f', "x", NULL, 0777, 0, 0, 0, NULL, 0,
	  true, 0, 0, "file", "x", "", 0755, false },
	{ "set-id bits dropped without root", 'f', "x", NULL, 06755, 0, SE_OPT_SAME_PERMS, 0, NULL, 0,
	  true, 0, 0, "file", "x", "", 0755, false },
	{ "set-id bits kept with root, -p and the owner", 'f', "x", NULL, 06755, 1000,
	  SE_OPT_SAME_PERMS | SE_OPT_SAME_OWNER | SE_OPT_NUMERIC_OWNER, 0, NULL, ROOT_OWNER,
	  true, 0, 0, "file", "x", "", 06755, true },
	{ "uid 2^32 is not root (out of range)", 'f', "x", NULL, 06755, 4294967296LL,
	  SE_OPT_SAME_PERMS | SE_OPT_SAME_OWNER | SE_OPT_NUMERIC_OWNER, 0, NULL, ROOT_OWNER,
	  true, 0, 0, "file", "x", "", 0755, false },
	{ "leading / stripped", 'f', "/etc/x", NULL, 0644, 0, 0, 0, NULL, 0,
	  true, 0, 0, "file", "etc/x", "", 0644, false },
	{ "zip-slip ../x refused", 'f', "../x", NULL, 0644, 0, 0, 0, NULL, 0,
	  false, SE_REFUSED, EINVAL, "file", "", "", 0, false },
	{ "an unselected bad name is not examined", 'f', "../x", NULL, 0644, 0, 0, 0, "keep", 0,
	  false, SE_SKIPPED, 0, "file", "", "", 0, false },
	{ "not selected", 'f', "other", NULL, 0644, 0, 0, 0, "keep", 0,
	  false, SE_SKIPPED, 0, "file", "", "", 0, false },
	{ "selected by its directory", 'f', "keep/x", NULL, 0644, 0, 0, 0, "keep", 0,
	  true, 0, 0, "file", "keep/x", "", 0644, false },
	{ "empty name refused", 'f', "", NULL, 0644, 0, 0, 0, NULL, 0,
	  false, SE_REFUSED, EINVAL, "file", "", "", 0, false },
	{ "./ is the destination, for a directory", 'd', "./", NULL, 0755, 0, 0, 0, NULL, 0,
	  true, 0, 0, "directory", "", "", 0755, false },
	{ "stripped away", 'f', "top/", NULL, 0644, 0, 0, 1, NULL, 0,
	  false, SE_SKIPPED, 0, "file", "", "", 0, false },
	{ "symlink target verbatim", 'l', "l", "../../etc", 0777, 0, 0, 0, NULL, 0,
	  true, 0, 0, "symlink", "l", "../../etc", 0755, false },
	{ "CVE-2016-5418 hardlink target cleaned", 'h', "h", "/etc/passwd", 0644, 0, 0, 0, NULL, 0,
	  true, 0, 0, "hardlink", "h", "etc/passwd", 0644, false },
	{ "hardlink target with .. refused", 'h', "h", "a/../../x", 0644, 0, 0, 0, NULL, 0,
	  false, SE_REFUSED, EINVAL, "hardlink", "", "", 0, false },
	{ "hardlink target stripped like the name", 'h', "p/h", "p/t", 0644, 0, 0, 1, NULL, 0,
	  true, 0, 0, "hardlink", "h", "t", 0644, false },
	{ "fifo", 'p', "fifo", NULL, 0600, 0, 0, 0, NULL, 0,
	  true, 0, 0, "fifo", "fifo", "", 0600, false },
	{ "socket", 's', "sock", NULL, 0600, 0, 0, 0, NULL, 0,
	  true, 0, 0, "socket", "sock", "", 0600, false },
};

static struct archive_entry *header(char type, const char *name, const char *link,
				    mode_t perm, int64_t uid)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_copy_pathname(e, name);
	archive_entry_set_perm(e, perm);
	archive_entry_set_uid(e, uid);
	archive_entry_set_gid(e, uid);
	archive_entry_set_size(e, 0);
	switch (type) {
	case 'f': archive_entry_set_filetype(e, AE_IFREG); break;
	case 'd': archive_entry_set_filetype(e, AE_IFDIR); break;
	case 'l': archive_entry_set_filetype(e, AE_IFLNK);
		  archive_entry_copy_symlink(e, link); break;
	case 'h': archive_entry_set_filetype(e, AE_IFREG);
		  archive_entry_copy_hardlink(e, link); break;
	case 'p': archive_entry_set_filetype(e, AE_IFIFO); break;
	case 's': archive_entry_set_filetype(e, AE_IFSOCK); break;
	}
	return e;
}

int main(void)
{
	size_t n = sizeof(rows) / sizeof(rows[0]);

	tap_plan((int)n);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = header(rows[i].type, rows[i].name, rows[i].link,
						 rows[i].perm, rows[i].uid);
		struct policy pol = { .opts = rows[i].opts, .umask = 022,
				      .strip_components = rows[i].strip,
				      .is_root = rows[i].who == ROOT_OWNER };
		struct plan p = { 0 };
		struct outcome o = { 0 };
		bool go_on, good;

		if (rows[i].include) {
			pattern_add(&pol.includes, rows[i].include);
			pol.pattern_hit = calloc(1, sizeof(bool));
		}
		go_on = plan_entry(&p, e, &pol, &o);
		good = go_on == rows[i].go_on && strcmp(p.type, rows[i].kind) == 0;
		if (go_on) {
			plan_meta(&p, e, &pol);
			good = good && strcmp(p.path, rows[i].path) == 0 &&
			       strcmp(p.target, rows[i].target) == 0 &&
			       p.own.mode == rows[i].mode &&
			       p.own.set_owner == rows[i].set_owner;
		} else {
			good = good && o.act == rows[i].act && o.err == rows[i].err;
		}
		tap_ok(good, "%s: %s%s%s -> %s %s (%s) mode %o", rows[i].what,
		       rows[i].name, rows[i].link ? " -> " : "", rows[i].link ? rows[i].link : "",
		       go_on ? "goes on as" : se_action_name(o.act), p.type,
		       go_on ? p.path : (o.reason ? o.reason : ""), (unsigned)p.own.mode);
		plan_free(&p);
		policy_free(&pol);
		archive_entry_free(e);
	}
	return tap_done();
}
