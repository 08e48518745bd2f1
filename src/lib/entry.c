/*
 * entry.c - one entry through the stages, and the records of the writer
 * threads committed and reported in archive order.
 *
 * Entries that could affect each other wait, where the name is resolved:
 * an entry whose name is, is under, or is above a file still in flight
 * (spelled the same: in strict mode no symlink is followed and names are
 * cleaned, so the spelling is the object) first lets that file be
 * committed; hardlinks, devices, FIFOs and sockets let every file in
 * flight be committed first.  In the modes that follow symlinks
 * (--in-root, --keep-directory-symlink) a name can reach a file in flight
 * by another spelling, so there an entry also waits when its parent does
 * not exist yet, when its parent and leaf are those of a file in flight
 * (by the directory's identity), and whenever a file in flight replaces a
 * directory or a symlink that a later name could go through.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "entry.h"
#include "fill.h"
#include "make.h"
#include "metadata.h"
#include "recover.h"

/* Not an outcome: a file for a writer thread, reported when committed;
 * or an entry dropped because the run stopped before it. */
#define ACT_QUEUED ((enum se_action)0x7f)
#define ACT_DROPPED ((enum se_action)0x7e)

static struct outcome queued(void)
{
	return (struct outcome){ ACT_QUEUED, NULL, 0, false };
}

static struct outcome dropped(void)
{
	return (struct outcome){ ACT_DROPPED, NULL, 0, false };
}

/* A record of the queue: a file for the writers, or an outcome decided
 * while files were in flight, reported in its turn. */
struct record {
	struct job job;			/* first: the pool's part */
	char *name, *path, *leaf, *link;
	const char *type;
	enum plan_kind kind;
	struct entry_meta meta;
	char reason[REASON_MAX];	/* a decided outcome's reason */
	uint64_t bytes;
	struct stream_pos at;		/* where its data ended in the input */
	bool have_sha;
	unsigned char sha[32];
	struct attr_blob *attrs;
	int64_t trunc_to;		/* streamed: its size, when it ends in a hole */
	char objkey[64 + 256];		/* modes that follow symlinks: identity */
	bool dirty;			/* replaces a directory or symlink */
	bool by_path;			/* no parent fd: tmp is PATH's sibling */
};

static struct record *rec_of(struct job *j)
{
	return (struct record *)((char *)j - offsetof(struct record, job));
}

static void rec_free(struct record *r)
{
	free(r->name);
	free(r->path);
	free(r->leaf);
	free(r->link);
	attr_free(r->attrs);
	free(r);
}

static bool follows_links(const struct pipeline *pl)
{
	return pl->rs && (pl->rs->in_root || pl->rs->keep_dir_links);
}

static void entry_meta_of(const struct plan *p, struct entry_meta *m)
{
	*m = (struct entry_meta){
		.ftype = p->ftype, .perm = p->perm, .size = p->size,
		.uid = p->uid, .gid = p->gid, .mtime_set = p->mtime_set,
		.mtime = p->mtime,
		.symlink = p->kind == PK_SYMLINK ? p->target : NULL,
		.hardlink = p->kind == PK_HARDLINK ? p->target : NULL,
	};
}

void pipe_init(struct pipeline *pl)
{
	pl->jobs = 1;
	pl->data_fd = -1;
	pl->rep.report_fd = -1;
	pl->live.dirfd = -1;
	pl->cm = (struct commit){ NULL, 0, &pl->dur, &pl->dm, &pl->tn, &pl->jn };
	journal_init(&pl->jn);
}

/* ---- the journal (--durable) ---------------------------------------------------------- */

static int layer_aside_hook(void *ctx, int dirfd, const char *const *leaves, size_t n)
{
	return commit_aside(ctx, dirfd, leaves, n);
}

static int journal_mkdir_hook(void *ctx, int dirfd, const char *leaf)
{
	return journal_mkdir(ctx, dirfd, leaf, true);
}

/*
 * Finish or undo a run on DEST that was cut short (its journal is there),
 * saying which; false when the journal is refused (the run must not mix
 * its tree with a half-done one).
 */
static bool recover_dest(struct pipeline *pl, const char *when, bool quiet)
{
	struct recovery r;
	int ret = recover(pl->rs->root_fd, pl->rs->cross_mounts, &r);

	if (ret == 0 && quiet)
		return true;
	if (ret < 0) {
		report_log(&pl->rep, SE_LOG_ERROR, "cannot recover the interrupted run %s: %s",
			   when, r.msg[0] ? r.msg : strerror(-ret));
		return false;
	}
	if (r.kind == RECOVER_BACK)
		report_log(&pl->rep, SE_LOG_WARNING,
			   "an interrupted --durable run was rolled back %s (%zu removed, %zu restored, %zu directories not empty kept)",
			   when, r.removed, r.restored, r.left);
	else if (r.kind == RECOVER_FORWARD)
		report_log(&pl->rep, SE_LOG_WARNING,
			   "an interrupted --durable run was finished %s (%zu renamed, %zu removed)",
			   when, r.renamed, r.removed);
	return true;
}

/* Before the run's first change to DEST: recover what an earlier run left,
 * then, under --durable, the intent on disk.  False when the run stops. */
static bool begin_run(struct pipeline *pl)
{
	int r;

	pl->began = true;
	if (!pl->rs || (pl->pol.opts & SE_OPT_DRY_RUN) || pl->data_fd >= 0)
		return true;
	if (!recover_dest(pl, "before this run", false))
		return false;
	if (!(pl->pol.opts & SE_OPT_DURABLE))
		return true;
	r = journal_begin(&pl->jn, pl->rs);
	if (r < 0) {
		report_log(&pl->rep, SE_LOG_ERROR, "cannot write the journal %s: %s",
			   JOURNAL_NAME, strerror(-r));
		journal_free(&pl->jn);
		unlinkat(pl->rs->root_fd, JOURNAL_NAME, 0);
		return false;
	}
	pl->rs->before_mkdir = journal_mkdir_hook;
	pl->rs->before_mkdir_ctx = &pl->jn;
	/* An image layer's removals become journaled moves aside. */
	pl->layer.dur = &pl->dur;
	pl->layer.aside = layer_aside_hook;
	pl->layer.aside_ctx = &pl->cm;
	return true;
}

/* The run stops before or after its commit point: what it did is undone
 * or finished from the journal, as recovery after a kill would. */
static void end_journal(struct pipeline *pl)
{
	bool had = pl->jn.fd >= 0;

	if (pl->rs && pl->rs->before_mkdir == journal_mkdir_hook) {
		pl->rs->before_mkdir = NULL;
		pl->rs->before_mkdir_ctx = NULL;
	}
	pl->layer.dur = NULL;
	pl->layer.aside = NULL;
	journal_free(&pl->jn);
	if (had)
		recover_dest(pl, "as the run stopped", true);
}

/* ---- reporting ------------------------------------------------------------ */

/* ---- entries the input's checks have not covered yet ---------------------- */

/* Where the input is now: the end of the entry just read (what the
 * format has consumed of the decoded stream), and how far the checks
 * had got by then (input.h). */
static struct stream_pos stream_now(const struct pipeline *pl)
{
	if (!pl->in || !pl->ar)
		return (struct stream_pos){ 0, UINT64_MAX };
	return (struct stream_pos){ (uint64_t)archive_filter_bytes(pl->ar, 0),
				    input_verified(pl->in, pl->ar) };
}

/* Drop the entries before FIRST_UNV and the names only they used: the
 * live ones move to the front of both arrays.  With today's readers a
 * check covers everything the format has read (a trailer is checked
 * before the data after it is decoded), so the list empties whole at each
 * one; this keeps the memory bounded should a check ever land between
 * entries. */
static void unchecked_compact(struct pipeline *pl)
{
	size_t live = pl->n_unv - pl->first_unv;
	uint32_t base;

	if (live == 0) {
		pl->first_unv = pl->n_unv = pl->text_len = 0;
		return;
	}
	if (pl->first_unv == 0)
		return;
	base = pl->unv[pl->first_unv].name;	/* the oldest live name */
	memmove(pl->unv, pl->unv + pl->first_unv, live * sizeof(*pl->unv));
	memmove(pl->unv_text, pl->unv_text + base, pl->text_len - base);
	pl->text_len -= base;
	for (size_t i = 0; i < live; i++) {
		pl->unv[i].name -= base;
		pl->unv[i].path -= base;
	}
	pl->n_unv = live;
	pl->first_unv = 0;
}

/* Room for N more bytes of names and one more entry; false when the
 * list is full (UNCHECKED_MAX, UNCHECKED_TEXT_MAX) or memory ran out. */
static bool unchecked_room(struct pipeline *pl, size_t n)
{
	if (pl->n_unv - pl->first_unv >= UNCHECKED_MAX)
		return false;
	if (pl->first_unv > 0 && (pl->n_unv == pl->cap_unv || pl->text_len + n > pl->text_cap ||
				   pl->text_len + n > UNCHECKED_TEXT_MAX))
		unchecked_compact(pl);
	if (pl->text_len + n > UNCHECKED_TEXT_MAX)
		return false;
	if (pl->n_unv == pl->cap_unv) {
		size_t cap = pl->cap_unv ? pl->cap_unv * 2 : 64;
		struct unchecked *u = realloc(pl->unv, cap * sizeof(*u));

		if (!u)
			return false;
		pl->unv = u;
		pl->cap_unv = cap;
	}
	if (pl->text_len + n > pl->text_cap) {
		size_t cap = pl->text_cap ? pl->text_cap : 4096;
		char *t;

		while (cap < pl->text_len + n)
			cap *= 2;
		if (!(t = realloc(pl->unv_text, cap)))
			return false;
		pl->unv_text = t;
		pl->text_cap = cap;
	}
	return true;
}

/*
 * An entry is at its name: keep it while its data ends past the verified
 * point.  AT is the position taken when the entry was read, so the list
 * is the same whatever --jobs says (records are reported later with
 * threads, when the checks may have got further).  Only a name that
 * lands now counts: --durable renames nothing before the whole stream
 * has passed its checks.
 */
static void unchecked_note(struct pipeline *pl, const char *name, const char *path,
			   const char *type, struct outcome o, struct stream_pos at)
{
	size_t ln, lp;
	bool same;

	while (pl->first_unv < pl->n_unv && pl->unv[pl->first_unv].end <= at.verified)
		pl->first_unv++;
	if (pl->first_unv == pl->n_unv)
		pl->first_unv = pl->n_unv = pl->text_len = 0;
	if ((o.act != SE_CREATED && o.act != SE_REPLACED && o.act != SE_INCOMPLETE) ||
	    at.end <= at.verified || (pl->pol.opts & (SE_OPT_DURABLE | SE_OPT_DRY_RUN)))
		return;
	ln = strlen(name) + 1;
	same = strcmp(name, path) == 0;		/* most entries: kept once */
	lp = same ? 0 : strlen(path) + 1;
	if (!unchecked_room(pl, ln + lp)) {
		pl->unv_dropped++;
		return;
	}
	memcpy(pl->unv_text + pl->text_len, name, ln);
	if (!same)
		memcpy(pl->unv_text + pl->text_len + ln, path, lp);
	/* Offsets fit: the text stays under UNCHECKED_TEXT_MAX. */
	pl->unv[pl->n_unv++] = (struct unchecked){
		(uint32_t)pl->text_len, (uint32_t)(same ? pl->text_len : pl->text_len + ln), type,
		at.end
	};
	pl->text_len += ln + lp;
}

static void report(struct pipeline *pl, const char *name, const char *path,
		   const char *type, struct outcome o, uint64_t bytes,
		   const unsigned char *sha, const struct entry_meta *meta,
		   struct stream_pos at)
{
	struct report_rec rec = { name, path, type, o, bytes, sha, meta };

	if (!report_entry(&pl->rep, &rec))
		pl->fatal = true;
	unchecked_note(pl, name, path, type, o, at);
}

void pipe_unverified(struct pipeline *pl, const char *why)
{
	uint64_t verified = pl->in && pl->ar ? input_verified(pl->in, pl->ar) : UINT64_MAX;
	char reason[REASON_MAX];

	snprintf(reason, sizeof(reason),
		 "at its name, but the input failed its check after this entry's data: %s",
		 why);
	for (size_t i = pl->first_unv; i < pl->n_unv; i++) {
		struct unchecked *u = &pl->unv[i];
		struct report_rec rec = {
			pl->unv_text + u->name, pl->unv_text + u->path, u->type,
			(struct outcome){ SE_UNVERIFIED, reason, EILSEQ, false }, 0, NULL, NULL
		};

		if (u->end > verified && !pl->rep.report_failed)
			report_entry(&pl->rep, &rec);
	}
	if (pl->unv_dropped)
		report_log(&pl->rep, SE_LOG_ERROR,
			   "up to %llu more entries were written unverified (not listed: past %d entries or %u MiB of names)",
			   (unsigned long long)pl->unv_dropped, UNCHECKED_MAX, UNCHECKED_TEXT_MAX >> 20);
	pipe_verified(pl);
}

void pipe_verified(struct pipeline *pl)
{
	pl->first_unv = pl->n_unv = pl->text_len = 0;
	pl->unv_dropped = 0;
}

int pipe_stop_at(struct pipeline *pl, struct archive *a, const char *name,
		 struct outcome o)
{
	char esc[1024];

	report_log(&pl->rep, SE_LOG_ERROR, "stopped at entry '%s': %s%s%s",
		   se_escape(name, esc, sizeof(esc)), o.reason ? o.reason : "fatal error",
		   o.err ? ": " : "", o.err ? strerror(o.err) : "");
	pl->fatal = true;
	if (a)
		archive_set_error(a, o.err ? o.err : EIO, "%s",
				  o.reason ? o.reason : "fatal error");
	return o.err ? -o.err : -EIO;
}

/* ---- records: committed and reported in archive order ---------------------- */

static void rec_names(struct pipeline *pl, struct record *r, int delta)
{
	pool_name(pl->pool, r->path, delta);
	if (r->objkey[0])
		pool_object(pl->pool, r->objkey, delta);
	if (r->dirty && delta < 0)
		pl->dirty--;
}

/* Close a file record's descriptors, removing its temporary. */
static void rec_discard(struct pipeline *pl, struct record *r)
{
	struct job *j = &r->job;

	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (j->tmp[0] && r->by_path)
		rs_unlink_sibling(pl->rs, r->path, j->tmp);
	else if (j->tmp[0])
		unlinkat(j->dirfd, j->tmp, 0);
	if (j->dirfd >= 0)
		close(j->dirfd);
	j->dirfd = -1;
}

/* Commit a written file, or report a decided outcome. */
static void rec_finish(struct pipeline *pl, struct record *r)
{
	struct job *j = &r->job;
	struct outcome o = j->o;

	if (j->kind == JOB_STREAMED && o.act == SE_CREATED) {
		/* Every chunk is written: the rest of what a writer does. */
		if (r->trunc_to >= 0 && ftruncate(j->fd, r->trunc_to) < 0)
			o = write_failed("cannot set size", errno);
		if (o.act == SE_CREATED)
			j->meta = apply_fd_metadata(j->reason, j->fd, false, &j->own,
						    j->created_mode, r->attrs, j->ts);
	}
	if ((j->kind == JOB_STREAMED || j->kind == JOB_FILE) && o.act == SE_CREATED) {
		/* The writer left the fd open: it could have had to write
		 * the file again (pool.c, a full destination). */
		if (close(j->fd) < 0)
			o = write_failed("cannot write data", errno);
		j->fd = -1;
	}
	if (j->kind != JOB_NOTHING) {
		if (o.act == SE_CREATED && r->by_path) {
			o = merge(commit_by_path(&pl->cm, j->tmp, r->path), j->meta);
			j->tmp[0] = '\0';
		} else if (o.act == SE_CREATED) {
			o = commit_object(&pl->cm, j->dirfd, j->tmp, r->leaf, r->path,
					  r->kind, r->name, r->type);
			o = merge(o, j->meta);
			j->tmp[0] = '\0';
		}
		rec_discard(pl, r);
		rec_names(pl, r, -1);
	}
	report(pl, r->name, r->path, r->type, o, r->bytes, r->have_sha ? r->sha : NULL,
	       &r->meta, r->at);
	if (o.fatal && !pl->fatal)
		pipe_stop_at(pl, pl->ar, r->name, o);
	else if (o.fatal)
		pl->fatal = true;
}

/* The run stopped: every record goes, unreported, as if never read;
 * temporaries are removed once their writer let go. */
static void drop_all(struct pipeline *pl)
{
	struct job *j;

	if (!pl->pool)
		return;
	pool_stop(pl->pool);
	while ((j = pool_next(pl->pool, true))) {
		if (j->kind == JOB_CHUNK) {
			free(j);
			continue;
		}
		if (j->kind != JOB_NOTHING) {
			rec_discard(pl, rec_of(j));
			rec_names(pl, rec_of(j), -1);
		}
		rec_free(rec_of(j));
	}
}

/* Commit and report the oldest record once it is done (WAIT: wait for
 * it).  False when there is none or it is not done. */
static bool collect_one(struct pipeline *pl, bool wait)
{
	struct job *j;

	if (!pl->pool)
		return false;
	j = pool_next(pl->pool, wait);
	if (!j)
		return false;
	if (j->kind == JOB_CHUNK) {
		free(j);
		return true;
	}
	rec_finish(pl, rec_of(j));
	rec_free(rec_of(j));
	return true;
}

bool pipe_collect(struct pipeline *pl, bool all)
{
	while (!pl->fatal && collect_one(pl, all)) {
	}
	if (pl->fatal)
		drop_all(pl);
	return !pl->fatal;
}

static bool busy(const struct pipeline *pl)
{
	return pool_count(pl->pool) > 0;
}

/* Report an outcome now, or behind the files in flight. */
static void report_in_turn(struct pipeline *pl, struct outcome o, const char *path,
			   const struct fill_result *res)
{
	const struct plan *p = &pl->plan;
	struct entry_meta meta;
	struct record *r;

	entry_meta_of(p, &meta);
	if (!busy(pl) || o.fatal || !pool_has_room(pl->pool, 1, 0, false)) {
		if (busy(pl) && !pipe_collect(pl, true))
			return;
		report(pl, p->name, path, p->type, o, res->bytes,
		       res->have_digest ? res->digest : NULL, &meta, stream_now(pl));
		return;
	}
	r = calloc(1, sizeof(*r));
	if (r && (!(r->name = strdup(p->name)) || !(r->path = strdup(path)) ||
		  (p->target[0] && !(r->link = strdup(p->target))))) {
		rec_free(r);
		r = NULL;
	}
	if (!r) {
		/* Out of memory: report now, after everything before it. */
		if (pipe_collect(pl, true))
			report(pl, p->name, path, p->type, o, res->bytes, NULL, &meta,
			       stream_now(pl));
		return;
	}
	r->job.kind = JOB_NOTHING;
	r->job.dirfd = r->job.fd = -1;
	r->type = p->type;
	r->kind = p->kind;
	r->meta = meta;
	r->meta.symlink = meta.symlink ? r->link : NULL;
	r->meta.hardlink = meta.hardlink ? r->link : NULL;
	if (o.reason) {
		snprintf(r->reason, sizeof(r->reason), "%s", o.reason);
		o.reason = r->reason;
	}
	r->job.o = o;
	r->bytes = res->bytes;
	r->at = stream_now(pl);
	r->have_sha = res->have_digest;
	memcpy(r->sha, res->digest, sizeof(r->sha));
	pool_submit(pl->pool, &r->job);
}

/* ---- the parent stage --------------------------------------------------------- */

static void identity_key(char *key, size_t n, int dirfd, const char *leaf)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0) {
		key[0] = '\0';
		return;
	}
	snprintf(key, n, "%llx:%llx/%.255s", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino, leaf);
}

/* --durable: temporaries may be made in DIRFD, so it is on record in the
 * journal first.  DIRFD, or -1 with *O set (the run stops). */
static int on_record(struct pipeline *pl, int dirfd, struct outcome *o)
{
	int r = journal_active(&pl->jn) ? journal_dir(&pl->jn, dirfd) : 0;

	if (r < 0) {
		close(dirfd);
		*o = fatal("cannot write the journal", -r);
		return -1;
	}
	return dirfd;
}

/*
 * The scoped parent of the plan's path, made when missing, for a new
 * entry; -1 with *O set when the entry ends here.  This is where an entry
 * waits for the files in flight it can reach.
 */
static int parent(struct pipeline *pl, const char **leaf, struct outcome *o)
{
	struct plan *p = &pl->plan;
	mode_t dirmode = 0777 & ~pl->pol.umask;
	int dirfd;

	if (busy(pl) && follows_links(pl)) {
		char key[sizeof(((struct record *)0)->objkey)];

		if (pl->dirty && !pipe_collect(pl, true))
			goto stopped;
		dirfd = busy(pl) ? rs_open_parent(pl->rs, p->path, false, 0, leaf) : -1;
		if (dirfd >= 0) {
			struct stat st;
			/* A directory at the name may be the parent of a file
			 * in flight whose temporary no writer has made yet: it
			 * looks empty, and a non-directory would replace it
			 * before that file lands, as --jobs=1 never does
			 * (tests/writer-queue.test). */
			bool over_dir = p->kind != PK_DIR &&
					fstatat(dirfd, *leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
					S_ISDIR(st.st_mode);

			identity_key(key, sizeof(key), dirfd, *leaf);
			if (!key[0] || over_dir || pool_has_object(pl->pool, key)) {
				if (!pipe_collect(pl, true)) {
					close(dirfd);
					goto stopped;
				}
			}
			return on_record(pl, dirfd, o);
		}
		/* Something on the way is missing or in the way: what the
		 * in-order run sees comes after the files before it. */
		if (!pipe_collect(pl, true))
			goto stopped;
	}
	dirfd = rs_open_parent(pl->rs, p->path, true, dirmode, leaf);
	if ((dirfd == -EMFILE || dirfd == -ENFILE) && busy(pl)) {
		/* The files in flight hold descriptors: let them go. */
		if (!pipe_collect(pl, true))
			goto stopped;
		dirfd = rs_open_parent(pl->rs, p->path, true, dirmode, leaf);
	}
	if (dirfd < 0) {
		*o = resolve_outcome(pl->rs->in_root, -dirfd);
		return dirfd;
	}
	return on_record(pl, dirfd, o);
stopped:
	*o = dropped();
	return -1;
}

/*
 * An image layer clears what stands in an entry's way (layer.c) before the
 * entry's own stages reach parent(): a directory in a file's way goes with
 * everything under it, a file in a directory's way goes.  A file in flight
 * may be under that directory, or bound for that name, by another
 * spelling (a symlink followed in the root): it lands first, as with
 * --jobs=1, by the same test as parent()'s.  False when the run stopped.
 */
static bool layer_waits(struct pipeline *pl)
{
	const struct plan *p = &pl->plan;
	char key[sizeof(((struct record *)0)->objkey)];
	const char *leaf;
	struct stat st;
	bool wait;
	int dirfd;

	if (!busy(pl) || !p->path[0])
		return true;
	dirfd = rs_open_parent(pl->rs, p->path, false, 0, &leaf);
	if (dirfd < 0)
		return true;	/* nothing to clear: parent() decides */
	identity_key(key, sizeof(key), dirfd, leaf);
	wait = !key[0] || pool_has_object(pl->pool, key) ||
	       (p->kind != PK_DIR && fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		S_ISDIR(st.st_mode));
	close(dirfd);
	return !wait || pipe_collect(pl, true);
}

/* Before an entry that is not a file for the writers: let the files in
 * flight that it could touch be committed.  False when that stopped the
 * run. */
static bool wait_for_files(struct pipeline *pl)
{
	const struct plan *p = &pl->plan;
	bool everything = p->kind != PK_FILE && p->kind != PK_DIR && p->kind != PK_SYMLINK;

	if (!busy(pl))
		return true;
	if (everything || pool_touches(pl->pool, p->path))
		return pipe_collect(pl, true);
	return true;
}

/* ---- files --------------------------------------------------------------------- */

static bool linked_has(const struct pipeline *pl, const struct stat *st)
{
	for (size_t i = pl->n_linked; i-- > 0;)
		if (pl->linked[i].dev == st->st_dev && pl->linked[i].ino == st->st_ino)
			return true;
	return false;
}

static void linked_add(struct pipeline *pl, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return;
	if (pl->n_linked == pl->cap_linked) {
		size_t cap = pl->cap_linked ? pl->cap_linked * 2 : 64;
		void *n = realloc(pl->linked, cap * sizeof(*pl->linked));

		if (!n)
			return;
		pl->linked = n;
		pl->cap_linked = cap;
	}
	pl->linked[pl->n_linked].dev = st.st_dev;
	pl->linked[pl->n_linked].ino = st.st_ino;
	pl->n_linked++;
}

static void live_set(struct pipeline *pl, int dirfd, const char *name)
{
	pl->live.dirfd = dirfd;
	pl->live.path = NULL;
	snprintf(pl->live.name, sizeof(pl->live.name), "%s", name);
}

/* NAME, the sibling of PATH (which outlives the setting), made by path. */
static void live_set_by_path(struct pipeline *pl, const char *path, const char *name)
{
	live_set(pl, -1, name);
	pl->live.path = path;
}

static void live_clear(struct pipeline *pl)
{
	pl->live.dirfd = -1;
	pl->live.path = NULL;
	pl->live.name[0] = '\0';
}

static bool want_digest(const struct pipeline *pl)
{
	return pl->pol.opts & SE_OPT_SHA256;
}

/*
 * A file written here, in the run's thread, into FD, its temporary TMP:
 * in DIRFD beside LEAF, or, when DIRFD is -1, made by path beside the
 * plan's path (file_by_path()).
 */
static struct outcome file_here(struct pipeline *pl, int dirfd, const char *leaf,
				int fd, const char *tmp, struct fill_result *res)
{
	struct plan *p = &pl->plan;
	struct fd_sink fs;
	struct outcome o, meta = ok(SE_CREATED);

	if (dirfd < 0)
		live_set_by_path(pl, p->path, tmp);
	else
		live_set(pl, dirfd, tmp);
	if (p->nlink > 1)
		linked_add(pl, fd);
	fd_sink_init(&fs, fd);
	o = fill(pl->ar, p->size, &fs.s, want_digest(pl), &pl->cancelled, res);
	pl->bytes += res->bytes;
	/* The kernel applied the process's umask at creation. */
	if (o.act == SE_CREATED)
		meta = apply_fd_metadata(res->reason, fd, false, &p->own,
					 p->own.mode & 0777 & ~pl->pol.proc_umask,
					 p->attrs, p->times);
	if (close(fd) < 0 && o.act == SE_CREATED)
		o = write_failed("cannot write data", errno);
	if (o.act != SE_CREATED) {
		if (dirfd < 0)
			rs_unlink_sibling(pl->rs, p->path, tmp);
		else
			unlinkat(dirfd, tmp, 0);
		live_clear(pl);
		return o;
	}
	if (dirfd < 0)
		o = commit_by_path(&pl->cm, tmp, p->path);
	else
		o = commit_object(&pl->cm, dirfd, tmp, leaf, p->path, p->kind, p->name,
				  p->type);
	live_clear(pl);
	return merge(o, meta);
}

/* Make room in the queue for RECORDS records, the first with BYTES:
 * commit the oldest records.  False when that stopped the run. */
static bool make_room(struct pipeline *pl, unsigned int records, size_t bytes,
		      bool holds_fds)
{
	while (!pl->fatal && !pool_has_room(pl->pool, records, bytes, holds_fds))
		if (!collect_one(pl, true))
			break;
	return pipe_collect(pl, false) && pool_has_room(pl->pool, records, bytes, holds_fds);
}

/* The data of a large or sparse file, in chunks for the writers: each
 * block where it goes (holes stay holes). */
struct chunk_sink {
	struct sink s;
	struct pipeline *pl;
	struct record *file;
	struct job *cur;		/* reserved, not yet submitted */
};

static void chunk_flush(struct chunk_sink *cs)
{
	if (cs->cur)
		pool_submit(cs->pl->pool, cs->cur);
	cs->cur = NULL;
}

static int chunk_put(struct sink *s, uint64_t off, const void *buf, size_t n)
{
	struct chunk_sink *cs = (struct chunk_sink *)s;
	struct pipeline *pl = cs->pl;

	while (n > 0) {
		struct job *c = cs->cur;
		size_t k;

		if (c && (c->offset + c->len != off || c->len == POOL_CHUNK)) {
			chunk_flush(cs);
			c = NULL;
		}
		if (!c) {
			/* Room for the chunk and for the file's own record,
			 * which comes behind its last chunk: without it the
			 * chunks could take the last slot of a full queue
			 * (tests/writer-queue.test). */
			if (!make_room(pl, 2, POOL_CHUNK, false))
				return ECANCELED;
			c = calloc(1, sizeof(*c));
			if (!c)
				return ENOMEM;
			c->kind = JOB_CHUNK;
			c->file = &cs->file->job;
			c->fd = cs->file->job.fd;
			c->dirfd = -1;
			c->offset = off;
			c->data = pool_reserve(pl->pool, c, POOL_CHUNK);
			cs->cur = c;
		}
		k = n < POOL_CHUNK - c->len ? n : POOL_CHUNK - c->len;
		memcpy(c->data + c->len, buf, k);
		c->len += k;
		buf = (const char *)buf + k;
		n -= k;
		off += k;
	}
	return 0;
}

static int chunk_end(struct sink *s, uint64_t end, int64_t size)
{
	struct chunk_sink *cs = (struct chunk_sink *)s;

	chunk_flush(cs);
	cs->file->trunc_to = size > 0 && (uint64_t)size > end ? size : -1;
	return 0;
}

/* A chunk reserved but not submitted when the data failed: its room back. */
static void chunk_abandon(struct chunk_sink *cs)
{
	if (!cs->cur)
		return;
	pool_unreserve(cs->pl->pool, cs->cur);
	free(cs->cur);
	cs->cur = NULL;
}

/*
 * A file for the writers: its data read here into the ring (in chunks
 * when it is large or sparse), then queued.  The name was resolved here,
 * in archive order; a tar member's temporary is made by the writer.
 * DIRFD -1: made by path (file_by_path()), FD and TMP its temporary,
 * made here.
 */
static struct outcome file_pooled(struct pipeline *pl, int dirfd, const char *leaf,
				  int fd, const char *tmp, struct fill_result *res)
{
	struct plan *p = &pl->plan;
	bool buffered = p->size >= 0 && p->size <= (int64_t)POOL_DATA_MAX && !p->sparse;
	struct record *r;
	struct job *j;
	struct outcome o;

	r = calloc(1, sizeof(*r));
	if (!r || !(r->name = strdup(p->name)) || !(r->path = strdup(p->path)) ||
	    !(r->leaf = strdup(leaf))) {
		if (r)
			rec_free(r);
		if (dirfd < 0) {
			close(fd);
			rs_unlink_sibling(pl->rs, p->path, tmp);
		} else {
			close(dirfd);
		}
		return fatal("out of memory", ENOMEM);
	}
	j = &r->job;
	j->fd = -1;
	j->dirfd = dirfd;
	r->by_path = dirfd < 0;
	j->o = ok(SE_CREATED);
	r->type = p->type;
	r->kind = p->kind;
	entry_meta_of(p, &r->meta);
	/* A tar member's data is exactly its size: a writer can make its
	 * temporary.  A file with other links is made here, for the later
	 * entries that may write into it (linked_add). */
	j->create = !r->by_path && buffered && p->nlink <= 1 &&
		    (archive_format(pl->ar) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR;
	if (r->by_path) {
		/* made in do_file(), which had to see that its directory
		 * is there */
		j->fd = fd;
		snprintf(j->tmp, sizeof(j->tmp), "%s", tmp);
		live_set_by_path(pl, r->path, j->tmp);
		if (p->nlink > 1)
			linked_add(pl, j->fd);
	} else if (j->create) {
		j->tmp_seq = tmp_reserve(&pl->tn, TMP_TRIES);
	} else {
		j->fd = tmp_create(&pl->tn, dirfd, j->tmp, p->own.mode);
		if (j->fd < 0) {
			o = resolve_outcome(pl->rs->in_root, -j->fd);
			j->fd = -1;
			rec_discard(pl, r);
			rec_free(r);
			return o;
		}
		live_set(pl, dirfd, j->tmp);
		if (p->nlink > 1)
			linked_add(pl, j->fd);
	}
	if (buffered) {
		struct buf_sink bs;

		buf_sink_init(&bs, pool_reserve(pl->pool, j, (size_t)p->size),
			      (size_t)p->size, j->fd);
		o = fill(pl->ar, p->size, &bs.s, want_digest(pl), &pl->cancelled, res);
		if (o.act == SE_CREATED && !bs.spilled) {
			j->data = bs.buf;
			j->len = bs.size;
		}
		j->kind = JOB_FILE;
	} else {
		struct chunk_sink cs = { { chunk_put, chunk_end }, pl, r, NULL };

		o = fill(pl->ar, p->size, &cs.s, want_digest(pl), &pl->cancelled, res);
		j->kind = JOB_STREAMED;
		if (o.act != SE_CREATED && !pl->fatal) {
			/* One thread writes each block as it comes, so a write
			 * that fails (EFBIG at a sparse offset, ENOSPC) comes
			 * before a later read's failure: the data read so far
			 * goes to the writers too, and once every chunk has
			 * landed (the files before it are committed and
			 * reported), a chunk's failure is the file's. */
			chunk_flush(&cs);
			pipe_collect(pl, true);
			if (!pl->fatal && j->o.act != SE_CREATED)
				o = j->o;
		}
		chunk_abandon(&cs);
	}
	pl->bytes += res->bytes;
	if (pl->fatal || o.act != SE_CREATED) {
		/* The room of a buffered file is the newest: given back. */
		if (j->kind == JOB_FILE)
			pool_unreserve(pl->pool, j);
		rec_discard(pl, r);
		rec_free(r);
		live_clear(pl);
		return pl->fatal ? dropped() : o;
	}
	live_clear(pl);
	j->own = p->own;
	j->created_mode = p->own.mode & 0777 & ~pl->pol.proc_umask;
	r->attrs = p->attrs;		/* the record's from here on */
	p->attrs = NULL;
	j->attrs = r->attrs;
	j->ts[0] = p->times[0];
	j->ts[1] = p->times[1];
	r->bytes = res->bytes;
	r->at = stream_now(pl);
	r->have_sha = res->have_digest;
	memcpy(r->sha, res->digest, sizeof(r->sha));
	if (follows_links(pl)) {
		struct stat st;

		identity_key(r->objkey, sizeof(r->objkey), dirfd, leaf);
		if (r->objkey[0])
			pool_object(pl->pool, r->objkey, +1);
		/* A later name could go through what this file replaces. */
		if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode))) {
			r->dirty = true;
			pl->dirty++;
		}
	}
	pool_name(pl->pool, r->path, +1);
	pool_submit(pl->pool, j);
	return queued();
}

/* Start the writer threads on first use. */
static struct pool *pool_get(struct pipeline *pl)
{
	if (!pl->pool && pl->jobs > 1)
		pl->pool = pool_new(pl->jobs, &pl->tn, &pl->cancelled);
	return pl->pool;
}

/*
 * Where the kernel scopes each call on a whole path by itself (the AT
 * backend, resolve.h), a file's temporary is made beside its name by that
 * path, and it is renamed the same way (commit_by_path()): no parent is
 * opened and closed for it (issue 25).  Not in the modes whose writers
 * compare parents by identity (in-root, --keep-directory-symlink), nor
 * where the policy looks at the parent (commit_by_path_ok()).  An fd with
 * TMP its name, or -1: nothing was made, and the file goes the way of the
 * other backends, which makes missing directories (--durable's journal
 * records them first: before_mkdir) and decides the errors their way.
 */
static int file_by_path(struct pipeline *pl, char tmp[32])
{
	const struct plan *p = &pl->plan;
	int fd;

	if (follows_links(pl) || !commit_by_path_ok(&pl->cm))
		return -1;
	fd = tmp_create_sibling(&pl->tn, pl->rs, p->path, tmp, p->own.mode);
	return fd < 0 ? -1 : fd;
}

static struct outcome do_file(struct pipeline *pl, struct fill_result *res)
{
	struct plan *p = &pl->plan;
	bool buffered = p->size >= 0 && p->size <= (int64_t)POOL_DATA_MAX && !p->sparse;
	struct outcome o;
	const char *leaf;
	char tmp[32];
	int dirfd, fd;

	if (commit_blocked(&pl->cm, p->path, &o))
		return o;
	/* Room first: committing older records may change what the name
	 * resolves to, as it would have in an in-order run. */
	if (pool_get(pl) && !make_room(pl, 1, buffered ? (size_t)p->size : 0, true)) {
		if (pl->fatal)
			return dropped();
	}
	fd = file_by_path(pl, tmp);
	if (fd >= 0) {
		leaf = strrchr(p->path, '/') ? strrchr(p->path, '/') + 1 : p->path;
		if (pl->pool && pool_has_room(pl->pool, 1, buffered ? (size_t)p->size : 0, true))
			return file_pooled(pl, -1, leaf, fd, tmp, res);
		return file_here(pl, -1, leaf, fd, tmp, res);
	}
	dirfd = parent(pl, &leaf, &o);
	if (dirfd < 0)
		return o;
	if (commit_keeps_newer(&pl->cm, dirfd, leaf, p, &o)) {
		close(dirfd);
		return o;
	}
	if (pl->pool && pool_has_room(pl->pool, 1, buffered ? (size_t)p->size : 0, true))
		return file_pooled(pl, dirfd, leaf, -1, NULL, res);
	fd = tmp_create(&pl->tn, dirfd, tmp, p->own.mode);
	if (fd < 0) {
		close(dirfd);
		return resolve_outcome(pl->rs->in_root, -fd);
	}
	o = file_here(pl, dirfd, leaf, fd, tmp, res);
	close(dirfd);
	return o;
}

/* ---- directories, links, special files ------------------------------------------------ */

static struct outcome do_dir(struct pipeline *pl)
{
	struct plan *p = &pl->plan;
	struct outcome o;
	struct stat st;
	const char *leaf;
	bool defer;
	int dirfd;

	if (p->path[0] == '\0') {
		/* "./": the destination's own metadata, as tar */
		if (pl->pol.opts & SE_OPT_KEEP_DIR_METADATA)
			return ok(SE_CREATED);
		if (fstat(pl->rs->root_fd, &st) < 0)
			return resolve_outcome(pl->rs->in_root, errno);
		o = ok(SE_CREATED);
		defer = true;
	} else {
		if (commit_blocked(&pl->cm, p->path, &o))
			return o;
		dirfd = parent(pl, &leaf, &o);
		if (dirfd < 0)
			return o;
		o = commit_dir(&pl->cm, dirfd, leaf, p, &st, &defer);
		close(dirfd);
	}
	if (made_ok(o) && defer) {
		bool kept = dirmeta_defer(&pl->dm, p->path, &p->own, p->times, p->attrs, &st);

		p->attrs = NULL;	/* the record's, or freed */
		if (!kept)
			return fatal("out of memory", ENOMEM);
	}
	return o;
}

/*
 * A hardlink entry that carries the data of all its names (cpio writes it
 * on the last link).  The data may only go into a regular file this run
 * created for a multi-link entry.  Its type is checked on an O_PATH fd
 * before anything is opened for writing: opening a FIFO O_WRONLY blocks
 * until a reader comes (a hang), and opening a device has effects.
 */
static struct outcome fill_linked(struct pipeline *pl, int dirfd, const char *leaf,
				  struct fill_result *res)
{
	struct plan *p = &pl->plan;
	struct outcome o, meta = ok(SE_CREATED);
	struct stat st, st2;
	struct fd_sink fs;
	int pfd, fd;

	pfd = rs_open_leaf(pl->rs, dirfd, leaf, O_PATH);
	if (pfd < 0)
		return resolve_outcome(pl->rs->in_root, -pfd);
	if (fstat(pfd, &st) < 0 || !S_ISREG(st.st_mode) || !linked_has(pl, &st)) {
		close(pfd);
		return refuse("hardlink data would go into something this run did not create as a file",
			      EPERM);
	}
	close(pfd);
	/* O_NONBLOCK: should the name become a FIFO meanwhile, fail, never
	 * wait; the inode is checked again on the fd we write to. */
	fd = openat(dirfd, leaf, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return resolve_outcome(pl->rs->in_root, errno);
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) ||
	    st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return refuse("hardlink data target changed during extraction", ESTALE);
	}
	if (ftruncate(fd, 0) < 0) {
		o = fail("cannot write data", errno);
		close(fd);
		return o;
	}
	fd_sink_init(&fs, fd);
	o = fill(pl->ar, p->size, &fs.s, want_digest(pl), &pl->cancelled, res);
	pl->bytes += res->bytes;
	if (o.act == SE_CREATED)
		meta = apply_fd_metadata(res->reason, fd, false, &p->own, (mode_t)-1,
					 p->attrs, p->times);
	close(fd);
	return merge(o, meta);
}

static struct outcome do_hardlink(struct pipeline *pl, struct fill_result *res)
{
	struct plan *p = &pl->plan;
	struct make_ctx mc = { pl->rs, (pl->pol.opts & SE_OPT_DURABLE) ? &pl->dur : NULL, p };
	char at[SE_PATH_MAX];
	const char *leaf;
	struct outcome o;
	int dirfd;

	if (strcmp(p->path, p->target) == 0) {
		struct pending *pend;

		if (p->size <= 0)
			return (struct outcome){ SE_SKIPPED,
				"hardlink to itself: nothing to link", 0, false };
		/* Its own data for a name this run made (cpio). */
		dirfd = rs_open_parent(pl->rs, p->path, false, 0, &leaf);
		if (dirfd < 0)
			return resolve_outcome(pl->rs->in_root, -dirfd);
		o = ok(SE_CREATED);
		snprintf(at, sizeof(at), "%s", leaf);
		pend = (pl->pol.opts & SE_OPT_DURABLE) ? durable_at(&pl->dur, dirfd, leaf) : NULL;
		if (pend) {
			close(dirfd);
			dirfd = durable_dirfd(&pl->dur, pend);
			if (dirfd >= 0 && (dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0)
				dirfd = -errno;
			if (dirfd < 0)
				return resolve_outcome(pl->rs->in_root, -dirfd);
			snprintf(at, sizeof(at), "%s", pend->tmp);
		}
	} else {
		if (commit_blocked(&pl->cm, p->path, &o))
			return o;
		/* A free name is linked by its whole path, as a file is made
		 * (file_by_path()); anything else goes the parent's way. */
		if (p->size <= 0 && !follows_links(pl) && commit_by_path_ok(&pl->cm) &&
		    rs_link_by_path(pl->rs, p->target, p->path) == 0)
			return ok(SE_CREATED);
		dirfd = parent(pl, &leaf, &o);
		if (dirfd < 0)
			return o;
		if (commit_keeps_newer(&pl->cm, dirfd, leaf, p, &o)) {
			close(dirfd);
			return o;
		}
		o = commit_make(&pl->cm, dirfd, leaf, p, make_hardlink, &mc, at);
	}
	if (made_ok(o) && p->size > 0) {
		struct outcome f = fill_linked(pl, dirfd, at, res);

		o = f.act == SE_CREATED ? o : f;
	}
	close(dirfd);
	if (o.err == EPERM && o.act == SE_FAILED) {
		/* linkat's answer for a directory target: policy, not a fault. */
		o.act = SE_REFUSED;
		o.reason = "hardlink target is a directory or not linkable";
	} else if (o.err == ENOENT && o.act == SE_FAILED) {
		o.reason = "hardlink target does not exist";
	}
	return o;
}

/* Symlinks and special files: made, then owner and times through an
 * O_PATH fd checked to be the object made. */
static struct outcome do_other(struct pipeline *pl, struct fill_result *res)
{
	struct plan *p = &pl->plan;
	struct make_ctx mc = { pl->rs, NULL, p };
	make_fn *make = p->kind == PK_SYMLINK ? make_symlink : make_node;
	char at[SE_PATH_MAX];
	const char *leaf;
	struct outcome o;
	int dirfd;

	switch (p->kind) {
	case PK_SYMLINK:
		if (!p->target[0])
			return refuse("symlink with an empty target", EINVAL);
		break;
	case PK_SOCK:
		return refuse("sockets are not extracted", EINVAL);
	case PK_CHR:
	case PK_BLK:
		if (!(pl->pol.opts & SE_OPT_DEVICES))
			return refuse("device node (use --devices to allow)", EPERM);
		if (!pl->pol.is_root)
			return refuse("device nodes need root", EPERM);
		break;
	case PK_FIFO:
		break;
	default:
		return refuse("unknown entry type", EINVAL);
	}
	if (commit_blocked(&pl->cm, p->path, &o))
		return o;
	dirfd = parent(pl, &leaf, &o);
	if (dirfd < 0)
		return o;
	if (commit_keeps_newer(&pl->cm, dirfd, leaf, p, &o)) {
		close(dirfd);
		return o;
	}
	o = commit_make(&pl->cm, dirfd, leaf, p, make, &mc, at);
	if (made_ok(o))
		o = merge(o, meta_on_object(pl->rs, dirfd, at,
					    p->kind == PK_SYMLINK ? S_IFLNK : p->ftype,
					    &p->own, p->times, res->reason));
	close(dirfd);
	return o;
}

/* ---- one entry ------------------------------------------------------------------------- */

/* Data to the caller's fd (tar -O): regular files only. */
static struct outcome to_data_fd(struct pipeline *pl, struct fill_result *res)
{
	struct stream_sink ss;
	struct outcome o;

	if (pl->plan.kind != PK_FILE)
		return (struct outcome){ SE_SKIPPED, "not a regular file", 0, false };
	stream_sink_init(&ss, pl->data_fd);
	o = fill(pl->ar, pl->plan.size, &ss.s, want_digest(pl), &pl->cancelled, res);
	pl->bytes += res->bytes;
	return o;
}

/* Is PATH's last component the journal's name? */
static bool reserved(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return path && strcmp(slash ? slash + 1 : path, JOURNAL_NAME) == 0;
}

static struct outcome stages(struct pipeline *pl, struct archive_entry *e,
			     struct fill_result *res)
{
	struct plan *p = &pl->plan;
	struct outcome o;

	if (!plan_entry(p, e, &pl->pol, &o))
		return o;
	if (reserved(p->path) || (p->kind == PK_HARDLINK && reserved(p->target)))
		/* A journal from the archive would be recovery's input. */
		return refuse("the name of safe-extract's journal is reserved", EPERM);
	if (p->absolute && !pl->warned_absolute) {
		/* After the messages of the entries before it. */
		if (!pipe_collect(pl, true))
			return dropped();
		report_log(&pl->rep, SE_LOG_WARNING, "removing leading '/' from member names");
		pl->warned_absolute = true;
	}
	if (pl->data_fd >= 0)
		return to_data_fd(pl, res);
	if (pl->pol.opts & SE_OPT_DRY_RUN)
		return ok(SE_CREATED);
	plan_meta(p, e, &pl->pol);
	/* What this entry does to names comes after the files in flight
	 * that it could touch. */
	if (p->kind != PK_FILE && !wait_for_files(pl))
		return dropped();
	if (p->kind == PK_FILE && busy(pl) && pool_touches(pl->pool, p->path) &&
	    !pipe_collect(pl, true))
		return dropped();
	if (pl->layer.on) {
		/* A whiteout may reach a file in flight by another spelling. */
		if (layer_is_marker(p) && busy(pl) && !pipe_collect(pl, true))
			return dropped();
		if (!layer_is_marker(p) && !layer_waits(pl))
			return dropped();
		if (layer_before(&pl->layer, p, 0777 & ~pl->pol.umask, &o))
			return o;
	}
	switch (p->kind) {
	case PK_FILE:
		o = do_file(pl, res);
		break;
	case PK_DIR:
		o = do_dir(pl);
		break;
	case PK_HARDLINK:
		o = do_hardlink(pl, res);
		break;
	default:
		o = do_other(pl, res);
		break;
	}
	if (pl->layer.on && (made_ok(o) || o.act == ACT_QUEUED))
		layer_note(&pl->layer, p);
	return o;
}

int pipe_entry(struct pipeline *pl, struct archive *a, struct archive_entry *e,
	       int hdr, const char *hdr_msg)
{
	struct plan *p = &pl->plan;
	struct fill_result res = { 0 };
	struct outcome o;
	const char *path;

	if (pl->finished)
		return -EINVAL;
	if (pl->fatal)
		return -ECANCELED;
	pl->ar = a;
	if (!pl->began && !begin_run(pl)) {
		pl->fatal = true;
		archive_set_error(a, EIO, "cannot recover or journal the destination");
		return -EIO;
	}
	/* Commit and report the files the writers have finished. */
	if (!pipe_collect(pl, false))
		return -ECANCELED;
	pl->entries++;
	plan_clear(p);

	switch (report_before(&pl->rep, e)) {
	case SE_SKIP:
		if (!plan_decode(p, e))
			return pipe_stop_at(pl, a, "", fatal("out of memory", ENOMEM));
		report_in_turn(pl, (struct outcome){ SE_SKIPPED, "skipped by the caller", 0, false },
			       p->name, &res);
		return pl->fatal ? -ECANCELED : 0;
	case SE_ABORT:
		pl->fatal = true;
		archive_set_error(a, ECANCELED, "aborted by the caller");
		return -ECANCELED;
	}

	if (hdr == ARCHIVE_WARN) {
		if (!plan_decode(p, e))
			return pipe_stop_at(pl, a, "", fatal("out of memory", ENOMEM));
		snprintf(res.reason, sizeof(res.reason), "archive header damaged: %s",
			 hdr_msg ? hdr_msg : "libarchive warned");
		o = fail(res.reason, 0);
	} else {
		o = stages(pl, e, &res);
	}
	if (!p->name)
		return pipe_stop_at(pl, a, "", fatal("out of memory", ENOMEM));
	snprintf(pl->last, sizeof(pl->last), "%s", p->name ? p->name : "");
	plan_clear(p);
	/* A file for a writer thread: reported when committed; an entry the
	 * stopped run dropped: never. */
	if (o.act == ACT_QUEUED || o.act == ACT_DROPPED)
		return pl->fatal ? -ECANCELED : 0;
	/* A fatal outcome: the files before it are committed and reported
	 * first, as when they were written one by one. */
	if (o.fatal && !pipe_collect(pl, true))
		return -ECANCELED;
	/* The name used, or the raw one when it was refused before cleaning. */
	path = p->path[0] || made_ok(o) ? p->path : p->name;
	report_in_turn(pl, o, path, &res);
	if (o.fatal)
		return pipe_stop_at(pl, a, p->name, o);
	if (pl->fatal)
		return -ECANCELED;
	if (o.act == SE_REFUSED || o.act == SE_FAILED)
		archive_set_error(a, o.err ? o.err : EINVAL, "%s: %s", p->name,
				  o.reason ? o.reason : se_action_name(o.act));
	return 0;
}

/* ---- the end of the run ------------------------------------------------------------------ */

/* syncfs(2) wants a real descriptor of the filesystem, not an O_PATH one. */
static bool sync_dest(struct pipeline *pl)
{
	int fd = openat(pl->rs->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool good = fd >= 0 && syncfs(fd) == 0;

	if (!good)
		report_log(&pl->rep, SE_LOG_ERROR, "syncfs on the destination failed: %s",
			   strerror(errno));
	if (fd >= 0)
		close(fd);
	return good;
}

bool pipe_finish(struct pipeline *pl)
{
	bool durable = pl->pol.opts & SE_OPT_DURABLE;
	char reason[REASON_MAX];
	int r;

	if (durable && !sync_dest(pl))
		return false;
	/* The commit point: from here on a cut is rolled forward. */
	dirmeta_sort(&pl->dm);
	r = journal_commit(&pl->jn, &pl->dur, &pl->dm, pl->rs);
	if (r < 0) {
		report_log(&pl->rep, SE_LOG_ERROR, "cannot write the journal's commit: %s",
			   strerror(-r));
		return false;
	}
	/* --durable: every pending object now has its data on disk. */
	for (size_t i = 0; durable && i < pl->dur.n_pend; i++) {
		struct pending *pd = &pl->dur.pend[i];
		struct outcome o = commit_pending(&pl->cm, i);
		struct entry_meta meta = { .size = -1 };

		if (o.act == SE_REFUSED || o.act == SE_FAILED)
			report(pl, pd->name, pd->path, pd->type, o, 0, NULL, &meta,
			       (struct stream_pos){ 0, 0 });
		if (o.fatal)
			return false;
	}
	/* Directory metadata after the contents, children first. */
	dirmeta_sort(&pl->dm);
	for (size_t i = 0; i < pl->dm.n_dirs; i++) {
		struct deferred_dir *d = &pl->dm.dirs[i];
		struct outcome o = dirmeta_apply(&pl->dm, i, pl->rs, reason);
		struct entry_meta meta = { .ftype = S_IFDIR, .perm = d->own.mode, .size = -1 };
		const char *name = d->path[0] ? d->path : ".";

		if (o.act == SE_REFUSED || o.act == SE_FAILED || o.act == SE_INCOMPLETE)
			report(pl, name, name, "directory", o, 0, NULL, &meta,
			       (struct stream_pos){ 0, 0 });
	}
	if (durable && !sync_dest(pl))
		return false;
	/* What was moved aside goes, then the journal; a cut before that
	 * is finished by the next run. */
	r = journal_complete(&pl->jn);
	if (r < 0)
		report_log(&pl->rep, SE_LOG_WARNING,
			   "cannot remove the journal %s: %s (the next run finishes it)",
			   JOURNAL_NAME, strerror(-r));
	return true;
}

void pipe_cleanup(struct pipeline *pl)
{
	drop_all(pl);
	if (pl->live.path && pl->live.name[0])
		rs_unlink_sibling(pl->rs, pl->live.path, pl->live.name);
	else if (pl->live.dirfd >= 0 && pl->live.name[0])
		unlinkat(pl->live.dirfd, pl->live.name, 0);
	live_clear(pl);
	durable_cleanup(&pl->dur);
	end_journal(pl);
	/* What the end of the run needed: no more after it. */
	durable_free(&pl->dur);
	dirmeta_free(&pl->dm);
}

void pipe_free(struct pipeline *pl)
{
	pipe_cleanup(pl);
	pool_free(pl->pool);
	pl->pool = NULL;
	durable_free(&pl->dur);
	dirmeta_free(&pl->dm);
	free(pl->linked);
	pl->linked = NULL;
	pipe_verified(pl);
	free(pl->unv);
	pl->unv = NULL;
	pl->cap_unv = 0;
	free(pl->unv_text);
	pl->unv_text = NULL;
	pl->text_cap = 0;
	plan_free(&pl->plan);
	layer_free(&pl->layer);
	policy_free(&pl->pol);
	report_free(&pl->rep);
}
