/*
 * report.c - names made safe for a terminal, and the JSON Lines report.
 *
 * Archive names are attacker-controlled bytes: they reach a terminal or a
 * log only escaped, so an entry cannot hide itself behind control
 * characters or forge other lines (terminal-escape injection).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

static const char *const action_names[] = {
	[SE_CREATED] = "created",
	[SE_REPLACED] = "replaced",
	[SE_SKIPPED] = "skipped",
	[SE_REFUSED] = "refused",
	[SE_FAILED] = "failed",
	[SE_INCOMPLETE] = "incomplete",
	[SE_UNVERIFIED] = "unverified",
};

SE_EXPORT const char *se_action_name(enum se_action a)
{
	if ((unsigned int)a >= sizeof(action_names) / sizeof(action_names[0]))
		return "unknown";
	return action_names[a];
}

SE_EXPORT char *se_escape(const char *name, char *buf, size_t bufsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		char tmp[4];
		size_t n = 0;

		if (*p == '\\' || *p == '\'') {
			tmp[n++] = '\\';
			tmp[n++] = (char)*p;
		} else if (*p >= 0x20 && *p < 0x7f) {
			tmp[n++] = (char)*p;
		} else {
			tmp[n++] = '\\';
			tmp[n++] = 'x';
			tmp[n++] = hex[*p >> 4];
			tmp[n++] = hex[*p & 0xf];
		}
		/* Truncation is shown, never silent: keep room for "...". */
		if (o + n + 4 > bufsz) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, tmp, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

char *report_sanitize(const char *msg, char *buf, size_t bufsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		/* Keep room for an escape and the "..." of a truncation. */
		if (o + 8 > bufsz) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (*p >= 0x20 && *p < 0x7f) {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 0xf];
		}
	}
	buf[o] = '\0';
	return buf;
}

SE_EXPORT const char *se_errno_name(int err)
{
	switch (err) {
#define E(x) case x: return #x
	E(EPERM); E(ENOENT); E(EIO); E(EBADF); E(EAGAIN); E(ENOMEM);
	E(EACCES); E(EBUSY); E(EEXIST); E(EXDEV); E(ENODEV); E(ENOTDIR);
	E(EISDIR); E(EINVAL); E(ENFILE); E(EMFILE); E(EFBIG); E(ENOSPC);
	E(EROFS); E(EMLINK); E(ENAMETOOLONG); E(ENOSYS); E(ENOTEMPTY);
	E(ELOOP); E(EOVERFLOW); E(EOPNOTSUPP); E(EDQUOT); E(ENODATA);
	E(ETXTBSY); E(EILSEQ); E(EINTR); E(ENXIO); E(ESPIPE); E(EPIPE);
	E(ERANGE); E(ESTALE); E(E2BIG);
#undef E
	default: return "EUNKNOWN";
	}
}

/* A line of the report, built whole and written with one write(2), so a
 * reader never sees half an object. */
struct line {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct line *l, const char *s, size_t n)
{
	if (l->oom)
		return;
	if (l->len + n + 1 > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char *nb;

		while (cap < l->len + n + 1)
			cap *= 2;
		nb = realloc(l->buf, cap);
		if (!nb) {
			l->oom = true;
			return;
		}
		l->buf = nb;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

static void json_string(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	put(l, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char u[7] = "\\u00";

		if (*p == '"' || *p == '\\') {
			put(l, "\\", 1);
			put(l, (const char *)p, 1);
		} else if (*p < 0x20 || *p >= 0x7f) {
			/* Bytes, not text: each byte maps to one code point
			 * so the JSON stays valid whatever the archive holds. */
			u[4] = hex[*p >> 4];
			u[5] = hex[*p & 0xf];
			put(l, u, 6);
		} else {
			put(l, (const char *)p, 1);
		}
	}
	put(l, "\"", 1);
}

int report_json(int fd, const char *name, const char *type,
		enum se_action act, const char *reason, int err)
{
	struct line l = { 0 };
	size_t off = 0;
	int ret = 0;

	puts_(&l, "{\"path\":");
	json_string(&l, name);
	puts_(&l, ",\"type\":\"");
	puts_(&l, type);
	puts_(&l, "\",\"action\":\"");
	puts_(&l, se_action_name(act));
	puts_(&l, "\",\"reason\":");
	if (reason)
		json_string(&l, reason);
	else
		puts_(&l, "null");
	puts_(&l, ",\"errno\":");
	if (err) {
		puts_(&l, "\"");
		puts_(&l, se_errno_name(err));
		puts_(&l, "\"}\n");
	} else {
		puts_(&l, "null}\n");
	}
	if (l.oom) {
		free(l.buf);
		return -ENOMEM;
	}
	while (off < l.len) {
		ssize_t n = write(fd, l.buf + off, l.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)n;
	}
	free(l.buf);
	return ret;
}

/* ---- the reporter -------------------------------------------------------- */

void report_log(struct reporter *r, int level, const char *fmt, ...)
{
	char msg[4096], safe[4096 * 4 + 8];
	va_list ap;

	if (!r->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Every message may quote libarchive or the archive: one filter for
	 * all of them rather than a check at each call. */
	r->log(r->log_data, level, report_sanitize(msg, safe, sizeof(safe)));
}

int report_before(struct reporter *r, struct archive_entry *e)
{
	struct se_entry se = { .size = sizeof(se), .stage = SE_BEFORE, .entry = e };

	if (!r->cb)
		return SE_CONTINUE;
	return r->cb(r->cb_data, &se);
}

/* AFTER's entry: the name, type and metadata the plan decoded, on every
 * path (writer threads, deferred directories, --durable renames). */
static struct archive_entry *after_entry(struct reporter *r, const struct report_rec *rec)
{
	const struct entry_meta *m = rec->meta;
	struct archive_entry *e = r->after;

	if (!e) {
		e = r->after = archive_entry_new();
		if (!e)
			return NULL;
	} else {
		archive_entry_clear(e);
	}
	archive_entry_copy_pathname(e, rec->name);
	if (!m)
		return e;
	archive_entry_set_filetype(e, m->ftype);
	archive_entry_set_perm(e, m->perm);
	if (m->size >= 0)
		archive_entry_set_size(e, m->size);
	archive_entry_set_uid(e, m->uid);
	archive_entry_set_gid(e, m->gid);
	if (m->mtime_set)
		archive_entry_set_mtime(e, m->mtime.tv_sec, m->mtime.tv_nsec);
	if (m->symlink)
		archive_entry_copy_symlink(e, m->symlink);
	if (m->hardlink)
		archive_entry_copy_hardlink(e, m->hardlink);
	return e;
}

bool report_entry(struct reporter *r, const struct report_rec *rec)
{
	struct outcome o = rec->o;
	bool go_on = true;
	char why[1024];

	/* Reasons can quote libarchive, which quotes the archive. */
	if (o.reason)
		o.reason = report_sanitize(o.reason, why, sizeof(why));
	if (o.act == SE_REFUSED)
		r->refused++;
	else if (o.act == SE_FAILED || o.act == SE_INCOMPLETE)
		r->failed++;
	if (r->report_fd >= 0 && !r->report_failed) {
		int err = report_json(r->report_fd, rec->name, rec->type, o.act,
				      o.reason, o.err);

		if (err < 0) {
			r->report_failed = true;
			go_on = false;
			report_log(r, SE_LOG_ERROR, "cannot write the report: %s",
				   strerror(-err));
		}
	}
	if (r->cb) {
		struct se_entry se = {
			.size = sizeof(se),
			.stage = SE_AFTER,
			.entry = after_entry(r, rec),
			.path = rec->path,
			.action = o.act,
			.error = o.err,
			.reason = o.reason,
			.type = rec->type,
			.name = rec->name,
			.bytes = rec->bytes,
			.sha256 = rec->sha256,
		};

		if (r->cb(r->cb_data, &se) == SE_ABORT)
			go_on = false;
	}
	return go_on;
}

void report_free(struct reporter *r)
{
	if (r->after)
		archive_entry_free(r->after);
	r->after = NULL;
}
