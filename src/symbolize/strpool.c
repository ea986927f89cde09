/* Small containers for the symbolizer: an interning string pool (so strings in results live as
 * long as the symbolizer, independent of the sym_proc they came from) and an open-addressing
 * u64 -> pointer map used for the per-module line/inline cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sym_internal.h"
#include "util/util.h"



void strpool__init(struct strpool *sp)
{
	memset(sp, 0, sizeof(*sp));
}

void strpool__fini(struct strpool *sp)
{
	for (size_t i = 0; i < sp->cap; i++)
		free(sp->slots[i]);
	free(sp->slots);
	memset(sp, 0, sizeof(*sp));
}

static int strpool__grow(struct strpool *sp)
{
	size_t ncap = sp->cap ? sp->cap * 2 : 256;
	char **nslots = calloc(ncap, sizeof(*nslots));

	if (!nslots)
		return -ENOMEM;
	for (size_t i = 0; i < sp->cap; i++) {
		char *str = sp->slots[i];
		size_t j;

		if (!str)
			continue;
		j = util_hash_bytes(str, strlen(str)) & (ncap - 1);
		while (nslots[j])
			j = (j + 1) & (ncap - 1);
		nslots[j] = str;
	}
	free(sp->slots);
	sp->slots = nslots;
	sp->cap = ncap;
	return 0;
}

const char *strpool__intern_n(struct strpool *sp, const char *str, size_t len)
{
	size_t i;
	char *copy;

	if ((sp->count + 1) * 2 > sp->cap && strpool__grow(sp))
		return NULL;
	i = util_hash_bytes(str, len) & (sp->cap - 1);
	while (sp->slots[i]) {
		if (strncmp(sp->slots[i], str, len) == 0 && sp->slots[i][len] == '\0')
			return sp->slots[i];
		i = (i + 1) & (sp->cap - 1);
	}
	copy = strndup(str, len);
	if (!copy)
		return NULL;
	sp->slots[i] = copy;
	sp->count++;
	return copy;
}

const char *strpool__intern(struct strpool *sp, const char *str)
{
	return strpool__intern_n(sp, str, strlen(str));
}

void *u64map__get(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = util_hash_u64(key) & (m->cap - 1);
	while (m->slots[i].val) {
		if (m->slots[i].key == key)
			return m->slots[i].val;
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

static void u64map__place(struct u64map_slot *slots, size_t cap, uint64_t key, void *val)
{
	size_t i = util_hash_u64(key) & (cap - 1);

	while (slots[i].val && slots[i].key != key)
		i = (i + 1) & (cap - 1);
	slots[i].key = key;
	slots[i].val = val;
}

int u64map__put(struct u64map *m, uint64_t key, void *val)
{
	if ((m->count + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct u64map_slot *nslots = calloc(ncap, sizeof(*nslots));

		if (!nslots)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].val)
				u64map__place(nslots, ncap, m->slots[i].key, m->slots[i].val);
		free(m->slots);
		m->slots = nslots;
		m->cap = ncap;
	}
	if (!u64map__get(m, key))
		m->count++;
	u64map__place(m->slots, m->cap, key, val);
	return 0;
}

void u64map__free_all(struct u64map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].val);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void u64map__free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
