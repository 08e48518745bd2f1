/*
 * no-openat2 - run a command on which openat2(2) fails, as on an old kernel.
 *
 * usage: no-openat2 [--landlock] [--errno=ENOSYS|EPERM] COMMAND [ARG...]
 *
 * --landlock: hide landlock_create_ruleset(2) instead, as a kernel without
 * Landlock (or one booted without it in lsm=) does, for the sandbox tests.
 *
 * Installs a seccomp filter that makes openat2 (and nothing else) fail with
 * the given errno, then execs COMMAND.  ENOSYS is what a kernel before 5.6
 * says; EPERM is what container runtimes' default filters say for system
 * calls they do not know.  The extractor must fall back to its userspace
 * walk in both cases, so make check runs the fallback without an old kernel.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#if defined(__x86_64__)
#define SE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SE_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define SE_AUDIT_ARCH AUDIT_ARCH_RISCV64
#else
#error "no-openat2: add this architecture's AUDIT_ARCH_* value"
#endif

static unsigned int hidden = SYS_openat2;

static int install_filter(unsigned int err)
{
	struct sock_filter code[] = {
		/* A process of another ABI would see other numbers: let the
		 * filter match only the one it was written for. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hidden, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(code) / sizeof(code[0])),
		.filter = code,
	};

	/* Without it an unprivileged caller may not install a filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static void usage(void)
{
	fprintf(stderr, "usage: no-openat2 [--landlock] [--errno=ENOSYS|EPERM] COMMAND [ARG...]\n");
	exit(125);
}

int main(int argc, char **argv)
{
	unsigned int err = ENOSYS;
	int i = 1;

	if (i < argc && strcmp(argv[i], "--landlock") == 0) {
		hidden = 444;	/* __NR_landlock_create_ruleset, every arch */
		i++;
	}
	if (i < argc && strncmp(argv[i], "--errno=", 8) == 0) {
		const char *name = argv[i] + 8;

		if (strcmp(name, "ENOSYS") == 0)
			err = ENOSYS;
		else if (strcmp(name, "EPERM") == 0)
			err = EPERM;
		else
			usage();
		i++;
	}
	if (i >= argc)
		usage();
	if (install_filter(err) != 0) {
		fprintf(stderr, "no-openat2: cannot install the seccomp filter: %s\n",
			strerror(errno));
		return 125;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "no-openat2: cannot run %s: %s\n", argv[i], strerror(errno));
	return 127;
}
