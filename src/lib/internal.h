/*
 * internal.h - what every module of the library may need and nothing
 * else: the export marker and the root.  Nothing here crosses the public
 * boundary (safe-extract.h).
 */
#ifndef SAFE_EXTRACT_INTERNAL_H
#define SAFE_EXTRACT_INTERNAL_H

#include "safe-extract.h"
#include "resolve.h"

/* Only the names in libsafe-extract.sym leave the shared object; this
 * keeps the rest out of the dynamic symbol table of static builds too. */
#define SE_EXPORT __attribute__((visibility("default")))

/* xz: decoder threads share this much memory; above it, one thread
 * (liblzma's memlimit_threading).  A stream that needs more than
 * SE_XZ_MEMLIMIT_STOP even in one thread is refused. */
#define SE_XZ_MEMLIMIT_DEFAULT ((uint64_t)64 << 20)
#define SE_XZ_MEMLIMIT_STOP ((uint64_t)1 << 30)

struct se_root {
	struct resolver rs;
};

#endif
