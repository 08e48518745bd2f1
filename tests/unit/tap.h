/* tap.h - the few TAP helpers the C unit tests share. */
#ifndef SAFE_EXTRACT_TAP_H
#define SAFE_EXTRACT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

__attribute__((unused))
static void tap_plan(int n)
{
	printf("1..%d\n", n);
}

__attribute__((format(printf, 2, 3)))
static void tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
}

__attribute__((format(printf, 1, 2), unused))
static void tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int tap_done(void)
{
	return tap_failed ? 1 : 0;
}

#endif
