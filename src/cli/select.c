/*
 * select.c - the member operands of the command line, as GNU tar reads
 * them: matched against the names the archive holds (before
 * --strip-components and --transform), each with the -C that came before
 * it, counted for --occurrence, and listed at the end when never found.
 *
 * The library only ever sees the result: an entry the command line does
 * not select is skipped before it is examined, and a selected one may be
 * renamed into its -C directory, which the library then checks like any
 * other name.
 */
#include "config.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct member {
	const char *pattern;		/* the operand, as typed */
	const char *dir;		/* "" or the -C below DEST, ending in '/' */
	unsigned long found;		/* tar's count: a directory's contents add none */
};

struct selection {
	struct member *v;
	size_t n;
	unsigned int occurrence;	/* 0: every match */
	bool literal;			/* --no-wildcards */
};

struct selection *select_new(const struct cli_options *o)
{
	struct selection *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->v = calloc(o->includes.n ? o->includes.n : 1, sizeof(*s->v));
	if (!s->v) {
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < o->includes.n; i++) {
		s->v[i].pattern = o->includes.v[i];
		s->v[i].dir = i < o->include_dirs.n ? o->include_dirs.v[i] : "";
	}
	s->n = o->includes.n;
	s->occurrence = o->occurrence;
	s->literal = o->flags & CLI_NO_WILDCARDS;
	return s;
}

void select_free(struct selection *s)
{
	if (s)
		free(s->v);
	free(s);
}

bool select_all(const struct selection *s)
{
	return !s || s->n == 0;
}

/*
 * Does PATTERN select NAME?  *EXACT says whether it names NAME itself
 * rather than a directory above it.  "dir/" and "./dir" select what "dir"
 * does.
 */
static bool match(const char *pattern, const char *name, bool literal, bool *exact)
{
	char pat[4096], nm[4096];
	size_t len = strlen(pattern), nlen = strlen(name);

	while (len > 1 && pattern[len - 1] == '/')
		len--;
	while (nlen > 1 && name[nlen - 1] == '/')
		nlen--;
	if (len >= sizeof(pat) || nlen >= sizeof(nm))
		return false;
	memcpy(pat, pattern, len);
	pat[len] = '\0';
	memcpy(nm, name, nlen);
	nm[nlen] = '\0';
	while (pat[0] == '.' && pat[1] == '/')
		memmove(pat, pat + 2, strlen(pat + 2) + 1);
	if (literal) {
		len = strlen(pat);
		if (strncmp(nm, pat, len) != 0 || (nm[len] != '\0' && nm[len] != '/'))
			return false;
		*exact = nm[len] == '\0';
		return true;
	}
	if (fnmatch(pat, nm, FNM_LEADING_DIR) != 0)
		return false;
	*exact = fnmatch(pat, nm, 0) == 0;
	return true;
}

int select_entry(struct selection *s, const char *name, const char **dir)
{
	*dir = "";
	if (select_all(s))
		return SELECT_YES;
	/* As tar: the name without its leading '/' and './'. */
	for (;;) {
		if (name[0] == '/')
			name++;
		else if (name[0] == '.' && name[1] == '/')
			name += 2;
		else
			break;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct member *m = &s->v[i];
		bool exact;

		if (!match(m->pattern, name, s->literal, &exact))
			continue;
		/* The first operand that matches decides, as in tar; the
		 * members under a directory count as that directory's one
		 * occurrence. */
		if (exact || m->found == 0)
			m->found++;
		*dir = m->dir;
		if (s->occurrence && m->found != s->occurrence)
			return SELECT_NO;
		return SELECT_YES;
	}
	return SELECT_NO;
}

const char *select_unmatched(const struct selection *s, size_t i, bool *some)
{
	size_t k = 0;

	for (size_t j = 0; s && j < s->n; j++) {
		unsigned long want = s->occurrence ? s->occurrence : 1;

		if (s->v[j].found >= want)
			continue;
		if (k++ != i)
			continue;
		*some = s->v[j].found > 0;
		return s->v[j].pattern;
	}
	return NULL;
}
