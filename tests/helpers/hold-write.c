/*
 * hold-write - an LD_PRELOAD library that holds one file's write in a
 * writer thread, as a slow disk or a stalled NFS server would.
 *
 * usage: LD_PRELOAD=.../hold-write.so [SE_HOLD_MS=1000] [SE_HOLD_LOG=FILE] COMMAND...
 *
 * A pwrite(2) from a thread other than the process's first whose data
 * begins with "HOLD" sleeps SE_HOLD_MS milliseconds first (default 1000).
 * Records come back from the writers in archive order, so nothing behind
 * the held file can be collected meanwhile: the run's thread fills the
 * queue of records exactly, whatever the machine's speed, and a test can
 * show what happens when the queue is full (tests/writer-queue.test).
 * SE_HOLD_LOG names a file that gets a line for each held write (opened
 * before main, as the extractor's sandbox allows no open outside its
 * destination later), so the test knows it set the scene it meant to.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static int log_fd = -1;

__attribute__((constructor)) static void open_log(void)
{
	const char *log = getenv("SE_HOLD_LOG");

	if (log)
		log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

static void hold(const void *buf, size_t n)
{
	const char *ms = getenv("SE_HOLD_MS");
	long v = ms ? atol(ms) : 1000;
	struct timespec ts;

	if (n < 4 || memcmp(buf, "HOLD", 4) != 0 || syscall(SYS_gettid) == getpid())
		return;
	if (log_fd >= 0)
		(void)!write(log_fd, "held\n", 5);
	ts.tv_sec = v / 1000;
	ts.tv_nsec = (v % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0) {
	}
}

/* REAL (looked up as SYM on first use) after the hold. */
static ssize_t held(pwrite_fn *real, const char *sym, int fd, const void *buf,
		    size_t n, off_t off)
{
	if (!*real)
		*real = (pwrite_fn)dlsym(RTLD_NEXT, sym);
	hold(buf, n);
	return (*real)(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	static pwrite_fn real;

	return held(&real, "pwrite64", fd, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	static pwrite_fn real;

	return held(&real, "pwrite", fd, buf, n, off);
}
