/*
 * no-rename-noreplace - run a command on which renameat2(2) with
 * RENAME_NOREPLACE fails with EINVAL, as on NFS, CephFS or 9p.
 *
 * usage: no-rename-noreplace COMMAND [ARG...]
 *
 * Installs a seccomp filter that makes renameat2 fail with EINVAL whenever
 * RENAME_NOREPLACE is among its flags (the fifth argument); every other
 * call, renameat2 without that flag included, is allowed.  Then execs
 * COMMAND.  An extractor that falls back to a plain rename(2) there must
 * still honour -k (tests/hardening/keep-old-without-noreplace.test).
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

#ifndef SYS_renameat2
#define SYS_renameat2 316
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
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
#error "no-rename-noreplace: add this architecture's AUDIT_ARCH_* value"
#endif

/* The low 32 bits of argument N (flags is an unsigned int). */
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(__u64))

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_renameat2, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(4)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, RENAME_NOREPLACE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(code) / sizeof(code[0])),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: no-rename-noreplace COMMAND [ARG...]\n");
		return 125;
	}
	if (install_filter() != 0) {
		fprintf(stderr, "no-rename-noreplace: cannot install the seccomp filter: %s\n",
			strerror(errno));
		return 125;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no-rename-noreplace: cannot run %s: %s\n", argv[1],
		strerror(errno));
	return 127;
}
