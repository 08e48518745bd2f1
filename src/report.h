/*
 * report.h - everything safe-extract tells the user about entries.
 *
 * Archive names are attacker-controlled bytes: they reach a terminal or a
 * log only through report_escape(), so an entry cannot hide itself behind
 * control characters or forge other lines (terminal-escape injection).
 */
#ifndef SAFE_EXTRACT_REPORT_H
#define SAFE_EXTRACT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum entry_action {
	ACT_CREATED,
	ACT_REPLACED,
	ACT_SKIPPED,
	ACT_REFUSED,
	ACT_FAILED,
	ACT_INCOMPLETE,		/* at its name, but some metadata is missing */
};

struct report {
	FILE *json;		/* --report=FILE, or NULL */
	bool verbose;		/* -v */
	bool progress;		/* --progress and stderr is a terminal */
	uint64_t last_progress_ns;
};

/* Escape NAME for a terminal: printable ASCII except \ and ' kept. */
char *report_escape(const char *name, char *buf, size_t bufsz);

/*
 * Make a message safe for a terminal without re-escaping what is already
 * escaped: control bytes, DEL and non-ASCII become \xNN, the rest stays.
 * For strings that may carry archive bytes (libarchive's errors, reasons).
 */
char *report_sanitize(const char *msg, char *buf, size_t bufsz);

int report_open(struct report *rep, const char *json_path);
/* Close the report; -errno when anything written to it was lost. */
int report_close(struct report *rep);

/* Has a write to standard output or to the report failed? */
bool report_failed(const struct report *rep);

/*
 * One entry's outcome.  Refusals and failures always print one stderr line
 * (escaped name, what, why); -v prints extracted names; --report writes one
 * JSON object per entry.  ERR is an errno value or 0.
 */
void report_entry(struct report *rep, const char *name, const char *type,
		  enum entry_action act, const char *reason, int err);

void report_progress(struct report *rep, uint64_t entries, uint64_t bytes,
		     bool final);

/* Messages about the run itself, not an entry. */
void warnx_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

const char *errno_name(int err);

#endif
