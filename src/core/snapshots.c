/* Snapshots of per-site live bytes: a column of values per snapshot for every site seen, in one
 * hash table per process. Memory is bounded by SNAPSHOTS_MAX values per site, whatever the run's
 * length: a full store drops every other column (the caller then halves its rate). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/snapshots.h"
#include "util/util.h"

struct snap_site {
	uint64_t k1, k2;
	int64_t *v;		/* SNAPSHOTS_MAX values, count of them valid */
	int64_t peak;		/* bytes in the peak snapshot */
};

struct snapshots {
	int64_t t0;
	int64_t t[SNAPSHOTS_MAX];
	uint32_t n;
	struct snap_site *sites;
	uint32_t nsites, capsites;
	uint32_t *slots;	/* site index + 1, 0 = free; open addressing */
	uint32_t nslots;
	int64_t total;		/* of the snapshot being taken */
	bool have_peak;
	int64_t peak_t, peak_total;
};

struct snapshots *snapshots__new(int64_t t0_ns)
{
	struct snapshots *s = calloc(1, sizeof(*s));

	if (s)
		s->t0 = t0_ns;
	return s;
}

void snapshots__free(struct snapshots *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nsites; i++)
		free(s->sites[i].v);
	free(s->sites);
	free(s->slots);
	free(s);
}

static uint32_t slot_of(const struct snapshots *s, uint64_t k1, uint64_t k2)
{
	uint32_t mask = s->nslots - 1, i;

	i = (uint32_t)util_hash_u64(k1 * 0x9e3779b97f4a7c15ULL ^ util_hash_u64(k2)) & mask;
	while (s->slots[i]) {
		const struct snap_site *x = &s->sites[s->slots[i] - 1];

		if (x->k1 == k1 && x->k2 == k2)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static int rehash(struct snapshots *s)
{
	uint32_t n = s->nslots ? s->nslots * 2 : 256, *old = s->slots, oldn = s->nslots;

	s->slots = calloc(n, sizeof(*s->slots));
	if (!s->slots) {
		s->slots = old;
		return -ENOMEM;
	}
	s->nslots = n;
	for (uint32_t i = 0; i < oldn; i++) {
		const struct snap_site *x = old[i] ? &s->sites[old[i] - 1] : NULL;

		if (x)
			s->slots[slot_of(s, x->k1, x->k2)] = old[i];
	}
	free(old);
	return 0;
}

int snapshots__begin(struct snapshots *s, int64_t t_ns)
{
	int thinned = 0;
	uint32_t i, j;

	if (s->n == SNAPSHOTS_MAX) {
		/* keep the even points: spacing stays even when the rate halves from here */
		for (j = 0; 2 * j < s->n; j++)
			s->t[j] = s->t[2 * j];
		for (i = 0; i < s->nsites; i++)
			for (j = 0; 2 * j < s->n; j++)
				s->sites[i].v[j] = s->sites[i].v[2 * j];
		s->n = (s->n + 1) / 2;
		thinned = 1;
	}
	s->t[s->n] = t_ns;
	for (i = 0; i < s->nsites; i++)
		s->sites[i].v[s->n] = 0;
	s->n++;
	s->total = 0;
	return thinned;
}

int snapshots__put(struct snapshots *s, uint64_t k1, uint64_t k2, int64_t bytes)
{
	struct snap_site *x;
	uint32_t slot;

	if (!s->n)
		return -EINVAL;
	if ((s->nsites + 1) * 2 > s->nslots && rehash(s))
		return -ENOMEM;
	slot = slot_of(s, k1, k2);
	if (!s->slots[slot]) {
		if (s->nsites == s->capsites) {
			uint32_t cap = s->capsites ? s->capsites * 2 : 64;
			struct snap_site *ns = realloc(s->sites, sizeof(*ns) * cap);

			if (!ns)
				return -ENOMEM;
			s->sites = ns;
			s->capsites = cap;
		}
		x = &s->sites[s->nsites];
		/* a site seen for the first time held nothing at the earlier points */
		x->v = calloc(SNAPSHOTS_MAX, sizeof(*x->v));
		if (!x->v)
			return -ENOMEM;
		x->k1 = k1;
		x->k2 = k2;
		x->peak = 0;
		s->slots[slot] = ++s->nsites;
	}
	x = &s->sites[s->slots[slot] - 1];
	x->v[s->n - 1] = bytes;
	s->total += bytes;
	return 0;
}

void snapshots__end(struct snapshots *s)
{
	if (!s->n || (s->have_peak && s->total <= s->peak_total))
		return;
	s->have_peak = true;
	s->peak_t = s->t[s->n - 1];
	s->peak_total = s->total;
	for (uint32_t i = 0; i < s->nsites; i++)
		s->sites[i].peak = s->sites[i].v[s->n - 1];
}

void snapshots__move_start(struct snapshots *s, int64_t by_ns)
{
	if (!s || by_ns <= 0)
		return;
	s->t0 = s->t0 > by_ns ? s->t0 - by_ns : 0;
	for (uint32_t i = 0; i < s->n; i++)
		s->t[i] = s->t[i] > by_ns ? s->t[i] - by_ns : 0;
}

int64_t snapshots__t0(const struct snapshots *s)
{
	return s->t0;
}

uint32_t snapshots__count(const struct snapshots *s)
{
	return s->n;
}

const int64_t *snapshots__times(const struct snapshots *s)
{
	return s->t;
}

const int64_t *snapshots__site(const struct snapshots *s, uint64_t k1, uint64_t k2,
			       int64_t *peak)
{
	uint32_t slot;

	if (peak)
		*peak = 0;
	if (!s->nslots)
		return NULL;
	slot = slot_of(s, k1, k2);
	if (!s->slots[slot])
		return NULL;
	if (peak)
		*peak = s->sites[s->slots[slot] - 1].peak;
	return s->sites[s->slots[slot] - 1].v;
}

bool snapshots__peak(const struct snapshots *s, int64_t *t_ns, int64_t *total)
{
	if (!s->have_peak)
		return false;
	*t_ns = s->peak_t;
	*total = s->peak_total;
	return true;
}
