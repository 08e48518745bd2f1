/*
 * report.h - escaping for terminals, and the JSON Lines report.
 */
#ifndef SAFE_EXTRACT_REPORT_H
#define SAFE_EXTRACT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

/*
 * Make a message safe for a terminal without re-escaping what is already
 * escaped: control bytes, DEL and non-ASCII become \xNN, the rest stays.
 * For strings that may carry archive bytes (libarchive's errors, reasons).
 */
char *report_sanitize(const char *msg, char *buf, size_t bufsz);

/* One JSON object on a line of its own, written to FD: 0 or -errno. */
int report_json(int fd, const char *name, const char *type,
		enum se_action act, const char *reason, int err);

#endif
