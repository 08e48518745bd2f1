/*
 * map.h - a string-keyed hash map to size_t, for the run's bookkeeping.
 *
 * The run keeps one record per directory and one pending rename per name
 * (--durable); both are looked up by key on every entry, so a list scan
 * would make a million-entry archive quadratic.  Keys are copied.
 */
#ifndef SAFE_EXTRACT_MAP_H
#define SAFE_EXTRACT_MAP_H

#include <stdbool.h>
#include <stddef.h>

struct map_slot;

struct map {
	struct map_slot *slots;
	size_t cap;		/* a power of two, or 0 */
	size_t used;		/* live and deleted slots */
};

#define MAP_NONE ((size_t)-1)

/* The value stored under KEY, or MAP_NONE. */
size_t map_get(const struct map *m, const char *key);

/* Store VALUE under KEY (replacing).  Returns false when out of memory. */
bool map_put(struct map *m, const char *key, size_t value);

/* Forget KEY; nothing happens when it is absent. */
void map_del(struct map *m, const char *key);

void map_free(struct map *m);

#endif
