/*
 * map.c - open addressing with linear probing; see map.h.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map.h"

struct map_slot {
	char *key;		/* NULL: never used */
	size_t value;		/* MAP_NONE in a used slot: deleted */
	uint64_t hash;
};

static uint64_t hash_key(const char *key)
{
	uint64_t h = 1469598103934665603u;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 1099511628211u;
	}
	return h;
}

static struct map_slot *find(const struct map *m, const char *key,
			     uint64_t h)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct map_slot *s = &m->slots[i];

		if (!s->key)
			return s;
		if (s->hash == h && strcmp(s->key, key) == 0)
			return s;
	}
}

size_t map_get(const struct map *m, const char *key)
{
	struct map_slot *s = find(m, key, hash_key(key));

	return s && s->key ? s->value : MAP_NONE;
}

/*
 * A bigger table, or one of the same size without its deleted slots when
 * they are most of it: the writer threads' names in flight are put and
 * deleted once per file, and a table that only doubled would grow with
 * every file of the archive.
 */
static bool grow(struct map *m)
{
	size_t live = 0, cap, oldcap = m->cap;
	struct map_slot *old = m->slots, *ns;

	for (size_t i = 0; i < oldcap; i++)
		live += old[i].key && old[i].value != MAP_NONE;
	cap = !oldcap ? 64 : (live + 1) * 4 > oldcap ? oldcap * 2 : oldcap;
	ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return false;
	m->slots = ns;
	m->cap = cap;
	m->used = 0;
	for (size_t i = 0; i < oldcap; i++) {
		struct map_slot *s;

		if (!old[i].key)
			continue;
		if (old[i].value == MAP_NONE) {
			free(old[i].key);
			continue;
		}
		s = find(m, old[i].key, old[i].hash);
		*s = old[i];
		m->used++;
	}
	free(old);
	return true;
}

bool map_put(struct map *m, const char *key, size_t value)
{
	uint64_t h = hash_key(key);
	struct map_slot *s;

	/* Keep the table at most half full, deleted slots included, so a
	 * probe always ends at an empty slot. */
	if ((m->used + 1) * 2 > m->cap && !grow(m))
		return false;
	s = find(m, key, h);
	if (!s->key) {
		s->key = strdup(key);
		if (!s->key)
			return false;
		s->hash = h;
		m->used++;
	}
	s->value = value;
	return true;
}

void map_del(struct map *m, const char *key)
{
	struct map_slot *s = find(m, key, hash_key(key));

	if (s && s->key)
		s->value = MAP_NONE;
}

void map_free(struct map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->used = 0;
}
