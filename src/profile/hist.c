/* Histograms over a power-of-two scale with linear sub-buckets (struct prof_hist): the values
 * a slot holds, quantiles, and the plain log2 view the reports draw. */
#include <stdint.h>

#include "profile/profile.h"

uint64_t prof_hist__total(const struct prof_hist *h)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < h->n; i++)
		n += h->counts[i];
	return n;
}

/* The power of two past the regular slots: the open slot's lower bound is 2^pow. */
static uint32_t open_pow(const struct prof_hist *h)
{
	return h->n >= 2 ? (h->n - 2) / h->sub : 0;
}

bool prof_hist__slot(const struct prof_hist *h, uint32_t i, uint64_t *min, uint64_t *max)
{
	uint32_t b, j;
	uint64_t base;

	if (i == 0) {
		*min = *max = 0;
		return h->n > 1;
	}
	if (i + 1 >= h->n) {
		b = open_pow(h);
		*min = b < 64 ? 1ull << b : UINT64_MAX;
		*max = UINT64_MAX;
		return false;
	}
	b = (i - 1) / h->sub;
	j = (i - 1) % h->sub;
	if (b >= 64) {
		*min = *max = UINT64_MAX;
		return true;
	}
	base = 1ull << b;
	/* for b < log2(sub), several slots share an integer's place: [ceil(lo), ceil(hi) - 1] */
	*min = base + (j * base + h->sub - 1) / h->sub;
	*max = base + ((j + 1) * base + h->sub - 1) / h->sub - 1;
	if (b == 63 && j + 1 == h->sub)
		*max = UINT64_MAX;
	return true;
}

double prof_hist__quantile(const struct prof_hist *h, double q)
{
	uint64_t total = prof_hist__total(h), cum = 0, min, max;
	double rank = q * (double)total;

	if (!total)
		return 0;
	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t c = h->counts[i];

		if (!c)
			continue;
		if ((double)(cum + c) >= rank || cum + c == total) {
			double frac = rank > (double)cum ? (rank - (double)cum) / (double)c : 0;

			if (!prof_hist__slot(h, i, &min, &max))
				return (double)min;
			return (double)min + frac * ((double)max + 1 - (double)min);
		}
		cum += c;
	}
	return 0;
}

uint32_t prof_hist__log2(const struct prof_hist *h, uint64_t *out, uint32_t nout)
{
	uint32_t nb = open_pow(h) + 2;

	if (!nout)
		return 0;
	if (nb > nout)
		nb = nout;
	for (uint32_t b = 0; b < nb; b++)
		out[b] = 0;
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t b;

		if (i == 0)
			b = 0;
		else if (i + 1 >= h->n)
			b = nb - 1;
		else
			b = (i - 1) / h->sub + 1;
		out[b < nb ? b : nb - 1] += h->counts[i];
	}
	return nb;
}
