/*
 * write.h - entry writers: one function per entry type.
 *
 * Each creates its object in a scoped parent fd from resolve.c with a
 * single-component name, and never writes into an inode that existed before
 * (the write-through of a planted hardlink or symlink): file
 * data goes into a new temporary and is renamed over the name.
 */
#ifndef SAFE_EXTRACT_WRITE_H
#define SAFE_EXTRACT_WRITE_H

#include <archive_entry.h>

#include "extract.h"

struct outcome {
	enum entry_action act;
	const char *reason;	/* static string, or NULL */
	int err;		/* errno value, or 0 */
	bool fatal;		/* stop the run: exit 2 */
};

struct outcome write_directory(struct run *run, struct archive_entry *e,
			       const char *path);
struct outcome write_regular(struct run *run, struct archive_entry *e,
			     const char *path);
struct outcome write_symlink(struct run *run, struct archive_entry *e,
			     const char *path);
struct outcome write_hardlink(struct run *run, struct archive_entry *e,
			      const char *path, const char *target);
struct outcome write_special(struct run *run, struct archive_entry *e,
			     const char *path);

/* Report one entry's outcome and count refusals and failures. */
void outcome_report(struct run *run, const char *name, const char *type,
		    struct outcome o);

/* After the last entry: --durable renames, deferred directory metadata. */
bool write_finish(struct run *run);

/* Free what the run kept for write_finish. */
void write_free(struct run *run);

/* Remove every temporary this run still owns (fatal error, signal). */
void write_cleanup(struct run *run);

#endif
