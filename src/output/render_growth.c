/* What the renderers share about growth: the order sites are ranked in by their growth, and how
 * a rate reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "output/render.h"

struct growth_ctx {
	const struct profile *p;
	const uint32_t *rank;	/* per sample: its place in the default order, for ties */
};

static int cmp_growth(const void *a, const void *b, void *arg)
{
	const struct growth_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct prof_growth *x = &c->p->samples[i].growth, *y = &c->p->samples[j].growth;

	if (x->bytes_per_sec != y->bytes_per_sec)
		return x->bytes_per_sec > y->bytes_per_sec ? -1 : 1;
	if (x->max_bytes != y->max_bytes)
		return x->max_bytes > y->max_bytes ? -1 : 1;
	return c->rank[i] < c->rank[j] ? -1 : c->rank[i] > c->rank[j];
}

uint32_t *render__growth_order(const struct profile *p, uint32_t *n)
{
	struct growth_ctx ctx = { .p = p };
	uint32_t *idx, *rank = NULL, i, k = 0, m;

	idx = render__sorted_samples(p, (int)p->default_type, false, &m);
	if (!idx)
		return NULL;
	rank = malloc(sizeof(*rank) * (p->nsamples ? p->nsamples : 1));
	if (!rank) {
		free(idx);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < m; i++)
		rank[idx[i]] = i;
	for (i = 0; i < m; i++) {
		const struct prof_growth *g = &p->samples[idx[i]].growth;

		if (g->trend != PROF_TREND_NONE && g->max_bytes > 0)
			idx[k++] = idx[i];
	}
	ctx.rank = rank;
	qsort_r(idx, k, sizeof(*idx), cmp_growth, &ctx);
	free(rank);
	*n = k;
	return idx;
}

const char *render__rate(double bytes_per_sec, char *buf, size_t len)
{
	char b[32];
	double a = bytes_per_sec < 0 ? -bytes_per_sec : bytes_per_sec;

	/* rounded to whole bytes, as the JSON has it; no sign on nothing */
	render__bytes((uint64_t)(a + 0.5), b, sizeof(b));
	snprintf(buf, len, "%s%s/s", (uint64_t)(a + 0.5) == 0 ? "" : bytes_per_sec < 0 ? "-" : "+",
		 b);
	return buf;
}
