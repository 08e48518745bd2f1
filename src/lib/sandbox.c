/*
 * sandbox.c - se_sandbox_apply(): the process gives up, for itself and for
 * good, every right to change the file system outside the root, and the
 * system calls an extractor never makes.
 *
 * Scoped resolution is the first wall; this is the second.  A bug in the
 * resolver or a writer (the outside review found one: metadata applied by
 * name after a rename) would otherwise be enough to change a file outside
 * the destination.  With Landlock, the kernel refuses any creation,
 * removal, write or rename outside the root's directory, whatever path a
 * bug would hand it.  Never implicit: a package manager has other work to
 * do after extraction, so the caller decides when.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* Landlock's ABI, spelled out: Debian 12's headers stop at ABI 2. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION	(1u << 0)
#define LL_RULE_PATH_BENEATH		1

#define LL_FS_EXECUTE		(1ull << 0)
#define LL_FS_WRITE_FILE	(1ull << 1)
#define LL_FS_READ_FILE		(1ull << 2)
#define LL_FS_READ_DIR		(1ull << 3)
#define LL_FS_REMOVE_DIR	(1ull << 4)
#define LL_FS_REMOVE_FILE	(1ull << 5)
#define LL_FS_MAKE_CHAR		(1ull << 6)
#define LL_FS_MAKE_DIR		(1ull << 7)
#define LL_FS_MAKE_REG		(1ull << 8)
#define LL_FS_MAKE_SOCK		(1ull << 9)
#define LL_FS_MAKE_FIFO		(1ull << 10)
#define LL_FS_MAKE_BLOCK	(1ull << 11)
#define LL_FS_MAKE_SYM		(1ull << 12)
#define LL_FS_REFER		(1ull << 13)	/* ABI 2 */
#define LL_FS_TRUNCATE		(1ull << 14)	/* ABI 3 */
#define LL_FS_IOCTL_DEV		(1ull << 15)	/* ABI 5 */
#define LL_NET_BIND_TCP		(1ull << 0)	/* ABI 4 */
#define LL_NET_CONNECT_TCP	(1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX	(1ull << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL		(1ull << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* Every file-system right ABI N knows. */
static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ull << 13) - 1;		/* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* What an extractor does beneath its destination: everything but run
 * programs and ioctl devices. */
static uint64_t dest_rights(int abi)
{
	return fs_rights(abi) & ~(LL_FS_EXECUTE | LL_FS_IOCTL_DEV);
}

/*
 * Reading stays allowed everywhere: libarchive loads iconv modules when it
 * first converts a name, and the host's user database is read by name
 * lookups; neither can change anything.  Executing does not: libarchive
 * runs external programs for a few rare compressions, and a bug that runs
 * one must not get a process without these limits (seccomp stops execve
 * too, where it is available).
 */
#define READ_RIGHTS (LL_FS_READ_FILE | LL_FS_READ_DIR)

static int landlock(se_root *root, struct se_sandbox *info)
{
	struct ll_ruleset_attr attr = { 0 };
	struct ll_path_beneath_attr dest = { 0 }, everywhere = { 0 };
	size_t attr_size;
	int abi, ruleset, top, err = 0;

	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
			   LL_CREATE_RULESET_VERSION);
	if (abi < 0) {
		snprintf(info->why, sizeof(info->why), "landlock unavailable (%s)",
			 errno == EOPNOTSUPP ? "disabled at boot" : strerror(errno));
		return -ENOSYS;
	}
	info->landlock_abi = abi;
	if (abi < 2) {
		/* Without REFER, ABI 1 refuses every link or rename into
		 * another directory: hardlink entries would fail. */
		snprintf(info->why, sizeof(info->why),
			 "landlock ABI 1 cannot allow links across directories");
		return -ENOSYS;
	}
	attr.handled_access_fs = fs_rights(abi);
	attr_size = sizeof(attr.handled_access_fs);
	if (abi >= 4) {
		/* No rule grants any: no TCP bind or connect at all. */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
		info->net_denied = 1;
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0) {
		err = -errno;
		snprintf(info->why, sizeof(info->why), "landlock ruleset: %s",
			 strerror(errno));
		return err;
	}
	/* fcntl keeps the fd out of children; landlock has no CLOEXEC flag
	 * on 6.1.  The ruleset is closed before we return anyway. */
	fcntl(ruleset, F_SETFD, FD_CLOEXEC);
	top = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dest.allowed_access = dest_rights(abi);
	dest.parent_fd = root ? root->rs.root_fd : -1;
	everywhere.allowed_access = READ_RIGHTS;
	everywhere.parent_fd = top;
	if (top < 0 ||
	    (root && syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH,
			     &dest, 0) < 0) ||
	    syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &everywhere, 0) < 0 ||
	    syscall(__NR_landlock_restrict_self, ruleset, 0) < 0) {
		err = -errno;
		snprintf(info->why, sizeof(info->why), "landlock: %s", strerror(errno));
	} else {
		info->landlock_applied = 1;
		info->fs_handled = attr.handled_access_fs;
		info->fs_granted_in_root = root ? dest.allowed_access : 0;
	}
	if (top >= 0)
		close(top);
	close(ruleset);
	return err;
}

/*
 * LeakSanitizer stops the process's threads with ptrace at exit: in an
 * AddressSanitizer build (a test build), ptrace stays allowed, or every
 * run would end in a LeakSanitizer failure.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SE_LEAK_CHECKER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SE_LEAK_CHECKER 1
#endif
#endif

/*
 * System calls an extractor never makes, refused with EPERM (never a kill:
 * a refusal is reported as an error and nothing is lost).  Listed by
 * number for x86_64; on other architectures the filter is not applied.
 */
static int seccomp_filter(struct se_sandbox *info)
{
#if defined(__x86_64__)
	static const int denied[] = {
		SYS_execve, SYS_execveat,
#ifndef SE_LEAK_CHECKER
		SYS_ptrace,
#endif
		SYS_process_vm_readv,
		SYS_process_vm_writev, SYS_socket, SYS_socketpair, SYS_connect,
		SYS_bind, SYS_listen, SYS_accept, SYS_accept4, SYS_mount,
		SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_setns, SYS_unshare,
		SYS_bpf, SYS_keyctl, SYS_add_key, SYS_request_key,
		SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_kexec_load, SYS_kexec_file_load, SYS_reboot, SYS_swapon,
		SYS_swapoff, SYS_perf_event_open, SYS_userfaultfd,
		SYS_personality, SYS_acct, SYS_settimeofday, SYS_clock_settime,
		SYS_sethostname, SYS_setdomainname, SYS_iopl, SYS_ioperm,
		/* the new mount API */
		428 /* open_tree */, 429 /* move_mount */, 430 /* fsopen */,
		431 /* fsconfig */, 432 /* fsmount */, 433 /* fspick */,
		442 /* mount_setattr */,
	};
	enum { N = sizeof(denied) / sizeof(denied[0]) };
	struct sock_filter prog[6 + 2 * N + 1];
	struct sock_fprog fprog = { .filter = prog };
	size_t i = 0;

	/* Another architecture's calls (32-bit, x32) are refused whole. */
	prog[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	prog[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		AUDIT_ARCH_X86_64, 1, 0);
	prog[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | EPERM);
	prog[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	/* x32 numbers carry bit 30: refuse them too. */
	prog[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
		0x40000000, 0, 1);
	prog[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		SECCOMP_RET_ERRNO | EPERM);
	for (int k = 0; k < N; k++) {
		prog[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			(unsigned int)denied[k], 0, 1);
		prog[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			SECCOMP_RET_ERRNO | EPERM);
	}
	prog[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fprog.len = (unsigned short)i;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0) {
		int e = errno;

		snprintf(info->why + strlen(info->why), sizeof(info->why) - strlen(info->why),
			 "%sseccomp unavailable (%s)", info->why[0] ? "; " : "",
			 strerror(e));
		/* EINVAL: a kernel built without CONFIG_SECCOMP_FILTER. */
		return e == EINVAL ? -ENOSYS : -e;
	}
	info->seccomp_applied = 1;
	return 0;
#else
	snprintf(info->why + strlen(info->why), sizeof(info->why) - strlen(info->why),
		 "%sseccomp filter not written for this architecture",
		 info->why[0] ? "; " : "");
	return -ENOSYS;
#endif
}

SE_EXPORT int se_sandbox_apply(se_root *root, unsigned int flags,
			       struct se_sandbox *info)
{
	struct se_sandbox local;
	int ll, sc = 0;

	if (!info || info->size < sizeof(*info)) {
		memset(&local, 0, sizeof(local));
		info = &local;
	} else {
		memset(info, 0, sizeof(*info));
		info->size = sizeof(*info);
	}
	if (flags & ~(SE_SANDBOX_NO_SECCOMP | SE_SANDBOX_PROBE))
		return -EINVAL;
	if (flags & SE_SANDBOX_PROBE) {
		int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
				       LL_CREATE_RULESET_VERSION);

		info->landlock_abi = abi > 0 ? abi : 0;
		if (abi < 0)
			snprintf(info->why, sizeof(info->why), "landlock unavailable (%s)",
				 strerror(errno));
		return abi >= 2 ? 0 : -ENOSYS;
	}
	/* Both need it, and it is right anyway: nothing the extractor runs
	 * may gain privileges (set-id, file capabilities). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	ll = landlock(root, info);
	if (!(flags & SE_SANDBOX_NO_SECCOMP))
		sc = seccomp_filter(info);
	if (ll < 0)
		return ll;
	return sc < 0 && sc != -ENOSYS ? sc : 0;
}
