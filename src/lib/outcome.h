/*
 * outcome.h - what became of one entry, and the errors that decide it.
 *
 * Every stage returns a struct outcome; the entry stage reports it.  No
 * stage below the entry stage reports anything itself.
 */
#ifndef SAFE_EXTRACT_OUTCOME_H
#define SAFE_EXTRACT_OUTCOME_H

#include <stdbool.h>

#include "safe-extract.h"

#define REASON_MAX 512

struct outcome {
	enum se_action act;
	const char *reason;	/* static, or a buffer the entry owns, or NULL */
	int err;		/* errno value, or 0 */
	bool fatal;		/* stop the run: exit 2 */
};

static inline struct outcome ok(enum se_action act)
{
	return (struct outcome){ .act = act };
}

static inline struct outcome refuse(const char *reason, int err)
{
	return (struct outcome){ .act = SE_REFUSED, .reason = reason, .err = err };
}

static inline struct outcome fail(const char *reason, int err)
{
	return (struct outcome){ .act = SE_FAILED, .reason = reason, .err = err };
}

static inline struct outcome fatal(const char *reason, int err)
{
	return (struct outcome){ SE_FAILED, reason, err, true };
}

static inline bool made_ok(struct outcome o)
{
	return o.act == SE_CREATED || o.act == SE_REPLACED;
}

/* Errors that say the destination, not the entry, is unusable. */
bool dest_unusable(int err);
/* A failed write of data: fatal when the destination is unusable. */
struct outcome write_failed(const char *reason, int err);
/* A resolution or creation error as an outcome (IN_ROOT: the root's
 * mode, for the wording of ELOOP). */
struct outcome resolve_outcome(bool in_root, int err);
/* Placing's outcome with the metadata's: a metadata problem is reported. */
struct outcome merge(struct outcome placed, struct outcome meta);

#endif
