/*
 * report.h - the reporter: an entry's outcome to the caller's AFTER
 * callback, the JSON Lines report and the counters; the run's messages to
 * the log callback; and names made safe for a terminal.  Only the entry
 * stage and the run call it; the stages below return outcomes.
 */
#ifndef SAFE_EXTRACT_REPORT_H
#define SAFE_EXTRACT_REPORT_H

#include <archive_entry.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"
#include "outcome.h"

/* What AFTER's entry says of the entry, from its plan. */
struct entry_meta {
	mode_t ftype, perm;
	int64_t size, uid, gid;
	bool mtime_set;
	struct timespec mtime;
	const char *symlink, *hardlink;	/* NULL: none */
};

struct report_rec {
	const char *name;		/* raw, as in the archive */
	const char *path;		/* cleaned, or raw when refused before */
	const char *type;
	struct outcome o;
	uint64_t bytes;
	const unsigned char *sha256;	/* NULL: none */
	const struct entry_meta *meta;
};

struct reporter {
	se_entry_cb *cb;
	void *cb_data;
	se_log_cb *log;
	void *log_data;
	int report_fd;			/* -1: none */
	bool report_failed;
	uint64_t refused, failed;
	struct archive_entry *after;	/* AFTER's entry, rebuilt each time */
};

/* Report one outcome.  False when the run must stop: the report could
 * not be written, or the callback aborted. */
bool report_entry(struct reporter *r, const struct report_rec *rec);
/* The caller's BEFORE callback on E: SE_CONTINUE, SE_SKIP or SE_ABORT. */
int report_before(struct reporter *r, struct archive_entry *e);
void report_log(struct reporter *r, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_free(struct reporter *r);

char *report_sanitize(const char *msg, char *buf, size_t bufsz);
int report_json(int fd, const char *name, const char *type,
		enum se_action act, const char *reason, int err);

#endif
