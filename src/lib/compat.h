/*
 * compat.h - kernel interfaces that Debian 12's headers may lack.
 *
 * openat2(2) arrived in Linux 5.6 and glibc 2.36 still has no wrapper, so the
 * structure and flags are spelled out here when <linux/openat2.h> is missing.
 * The AT_* scoping flags come from this project's kernel series (kernel/);
 * no released kernel has them, so userspace detects them by behaviour
 * (resolve.c: probe_at_flags), never by version.
 */
#ifndef SAFE_EXTRACT_COMPAT_H
#define SAFE_EXTRACT_COMPAT_H

#include <stdint.h>
#include <fcntl.h>
#include <sys/syscall.h>

#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#else
struct open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};
#define RESOLVE_NO_XDEV		0x01
#define RESOLVE_NO_MAGICLINKS	0x02
#define RESOLVE_NO_SYMLINKS	0x04
#define RESOLVE_BENEATH		0x08
#define RESOLVE_IN_ROOT		0x10
#endif

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/*
 * Scoped-resolution flags for the *at() calls (kernel/ series).  The values
 * are a contract with kernel/0001: keep them identical.
 */
#define SE_AT_BENEATH		0x10000
#define SE_AT_XDEV		0x20000
#define SE_AT_NO_MAGICLINKS	0x40000
#define SE_AT_NO_SYMLINKS	0x80000
#define SE_AT_THIS_ROOT		0x100000

#endif
