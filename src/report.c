/*
 * report.c - stderr lines, JSON Lines and progress for safe-extract.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

static const char *const action_names[] = {
	[ACT_CREATED] = "created",
	[ACT_REPLACED] = "replaced",
	[ACT_SKIPPED] = "skipped",
	[ACT_REFUSED] = "refused",
	[ACT_FAILED] = "failed",
	[ACT_INCOMPLETE] = "incomplete",
};

char *report_escape(const char *name, char *buf, size_t bufsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		char tmp[4];
		size_t n = 0;

		if (*p == '\\' || *p == '\'') {
			tmp[n++] = '\\';
			tmp[n++] = (char)*p;
		} else if (*p >= 0x20 && *p < 0x7f) {
			tmp[n++] = (char)*p;
		} else {
			tmp[n++] = '\\';
			tmp[n++] = 'x';
			tmp[n++] = hex[*p >> 4];
			tmp[n++] = hex[*p & 0xf];
		}
		/* Truncation is shown, never silent: keep room for "...". */
		if (o + n + 4 > bufsz) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(buf + o, tmp, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

char *report_sanitize(const char *msg, char *buf, size_t bufsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		/* Keep room for an escape and the "..." of a truncation. */
		if (o + 8 > bufsz) {
			memcpy(buf + o, "...", 3);
			o += 3;
			break;
		}
		if (*p >= 0x20 && *p < 0x7f) {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 0xf];
		}
	}
	buf[o] = '\0';
	return buf;
}

int report_open(struct report *rep, const char *json_path)
{
	if (json_path) {
		int fd = open(json_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			      O_NOCTTY, 0644);

		if (fd < 0)
			return -errno;
		rep->json = fdopen(fd, "w");
		if (!rep->json) {
			int e = errno;

			close(fd);
			return -e;
		}
	}
	return 0;
}

int report_close(struct report *rep)
{
	int ret = 0;

	if (rep->json) {
		if (ferror(rep->json) | (fclose(rep->json) != 0))
			ret = -(errno ? errno : EIO);
		rep->json = NULL;
	}
	return ret;
}

bool report_failed(const struct report *rep)
{
	return ferror(stdout) || (rep->json && ferror(rep->json));
}

const char *errno_name(int err)
{
	switch (err) {
#define E(x) case x: return #x
	E(EPERM); E(ENOENT); E(EIO); E(EBADF); E(EAGAIN); E(ENOMEM);
	E(EACCES); E(EBUSY); E(EEXIST); E(EXDEV); E(ENODEV); E(ENOTDIR);
	E(EISDIR); E(EINVAL); E(ENFILE); E(EMFILE); E(EFBIG); E(ENOSPC);
	E(EROFS); E(EMLINK); E(ENAMETOOLONG); E(ENOSYS); E(ENOTEMPTY);
	E(ELOOP); E(EOVERFLOW); E(EOPNOTSUPP); E(EDQUOT); E(ENODATA);
	E(ETXTBSY); E(EILSEQ); E(EINTR); E(ENXIO); E(ESPIPE); E(EPIPE);
	E(ERANGE); E(ESTALE); E(E2BIG);
#undef E
	default: return "EUNKNOWN";
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			/* Bytes, not text: each byte maps to one code point
			 * so the JSON stays valid whatever the archive holds. */
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void report_entry(struct report *rep, const char *name, const char *type,
		  enum entry_action act, const char *reason, int err)
{
	char esc[1024], why[1024];

	if (act == ACT_REFUSED || act == ACT_FAILED || act == ACT_INCOMPLETE) {
		report_escape(name, esc, sizeof(esc));
		/* Reasons can quote libarchive, which quotes the archive. */
		report_sanitize(reason ? reason : "", why, sizeof(why));
		if (rep->progress)
			fputc('\n', stderr);
		if (err)
			fprintf(stderr, "safe-extract: %s '%s': %s (%s)\n",
				action_names[act], esc, why, errno_name(err));
		else
			fprintf(stderr, "safe-extract: %s '%s': %s\n",
				action_names[act], esc, why);
	} else if (rep->verbose && act != ACT_SKIPPED) {
		report_escape(name, esc, sizeof(esc));
		printf("%s\n", esc);
	}

	if (rep->json) {
		fputs("{\"path\":", rep->json);
		json_string(rep->json, name);
		fprintf(rep->json, ",\"type\":\"%s\",\"action\":\"%s\",\"reason\":",
			type, action_names[act]);
		if (reason)
			json_string(rep->json, reason);
		else
			fputs("null", rep->json);
		if (err)
			fprintf(rep->json, ",\"errno\":\"%s\"}\n", errno_name(err));
		else
			fputs(",\"errno\":null}\n", rep->json);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void report_progress(struct report *rep, uint64_t entries, uint64_t bytes,
		     bool final)
{
	uint64_t t;

	if (!rep->progress)
		return;
	t = now_ns();
	if (!final && t - rep->last_progress_ns < 250000000u)
		return;
	rep->last_progress_ns = t;
	fprintf(stderr, "\r%llu entries, %.1f MiB%s",
		(unsigned long long)entries, (double)bytes / (1024.0 * 1024.0),
		final ? "\n" : "");
}

void warnx_msg(const char *fmt, ...)
{
	char msg[4096], safe[4096 * 4 + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Every message may quote libarchive or the archive: one filter for
	 * all of them rather than a check at each call. */
	fprintf(stderr, "safe-extract: %s\n", report_sanitize(msg, safe, sizeof(safe)));
}
