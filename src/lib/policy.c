/*
 * policy.c - the run's settings: lists and their end.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
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

/* Do [A, A+AN) and [B, B+BN) share an id?  64-bit: no wrap-around. */
static bool ranges_meet(uint32_t a, uint32_t an, uint32_t b, uint32_t bn)
{
	return (uint64_t)a < (uint64_t)b + bn && (uint64_t)b < (uint64_t)a + an;
}

/*
 * Can R take [INSIDE, +COUNT) -> [OUTSIDE, +COUNT)?  Neither side may
 * overlap a range R has: two container ranges over one id would make its
 * host id depend on their order, and two host ranges over one id would
 * give two container owners the same host owner (one could then write
 * the other's files).
 */
static bool range_fits(const struct id_ranges *r, uint32_t inside, uint32_t outside,
		       uint32_t count)
{
	for (size_t i = 0; i < r->n; i++)
		if (ranges_meet(inside, count, r->v[i].inside, r->v[i].count) ||
		    ranges_meet(outside, count, r->v[i].outside, r->v[i].count))
			return false;
	return true;
}

int id_map_add(struct policy *pol, unsigned int which, uint32_t inside,
	       uint32_t outside, uint32_t count)
{
	/* Ids stop below 4294967295: chown(2) reads (uid_t)-1 as "leave
	 * it", so a range reaching it would silently keep the process's
	 * owner (the kernel's uid_map refuses such ranges too). */
	if (!which || (which & ~(SE_MAP_UID | SE_MAP_GID)) || count == 0 ||
	    (uint64_t)inside + count > UINT32_MAX || (uint64_t)outside + count > UINT32_MAX)
		return -EINVAL;
	/* Both kinds checked before either is changed: all or nothing. */
	for (int k = 0; k < 2; k++)
		if ((which & (k ? SE_MAP_GID : SE_MAP_UID)) &&
		    !range_fits(&pol->id_maps[k], inside, outside, count))
			return -EINVAL;
	/* Room in both first, so that out of memory adds neither. */
	for (int k = 0; k < 2; k++) {
		struct id_ranges *r = &pol->id_maps[k];
		struct id_range *nv;

		if (!(which & (k ? SE_MAP_GID : SE_MAP_UID)))
			continue;
		nv = realloc(r->v, (r->n + 1) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
	}
	for (int k = 0; k < 2; k++)
		if (which & (k ? SE_MAP_GID : SE_MAP_UID))
			pol->id_maps[k].v[pol->id_maps[k].n++] =
				(struct id_range){ inside, outside, count };
	return 0;
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
	for (int k = 0; k < 2; k++) {
		free(pol->id_maps[k].v);
		pol->id_maps[k].v = NULL;
		pol->id_maps[k].n = 0;
	}
}
