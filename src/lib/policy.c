/*
 * policy.c - the run's settings: lists and their end.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

int pattern_add(struct pattern_list *l, const char *s)
{
	char **nv, *copy = strdup(s);

	if (!copy)
		return -ENOMEM;
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv) {
		free(copy);
		return -ENOMEM;
	}
	nv[l->n++] = copy;
	l->v = nv;
	return 0;
}

void pattern_free(struct pattern_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void policy_free(struct policy *pol)
{
	pattern_free(&pol->includes);
	pattern_free(&pol->excludes);
	pattern_free(&pol->xattr_includes);
	pattern_free(&pol->xattr_excludes);
	free(pol->pattern_hit);
	pol->pattern_hit = NULL;
	map_free(&pol->seen_names);
	free(pol->passwd_db);
	free(pol->group_db);
	pol->passwd_db = pol->group_db = NULL;
}
