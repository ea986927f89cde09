/* Growth of a site's live bytes over a run, from snapshots: the slope and the trend label.
 *
 * Why the later half: a cache fills early and then holds still, a leak keeps rising. Over the
 * whole run both rise; over the later half only the leak does. The window starts when tracing of
 * the process began, where every site is at 0 bytes (nothing is tracked before), and ends at its
 * last snapshot, taken when the process was read out (its exit, or the end of the run).
 *
 * The rule, with M the site's highest snapshot, F and L its first and last snapshot in the later
 * half, and C = slope x (time from F to L) the change the fit says happened over it:
 *
 *	threshold T = max(M / 10, 2 x block)	(block: the site's mean allocation size)
 *	growing     C > T
 *	shrinking   C < -T
 *	plateau     otherwise, and F > T: it gained its memory before the later half
 *	flat        otherwise
 *
 * M / 10 makes "small" relative to what the site holds; two blocks keep a site whose only
 * movement is one block in flight at snapshot time (a malloc/free loop) from being called
 * growing or shrinking: a change of two blocks or less is no trend.
 */
#include <errno.h>

#include "profile/profile.h"

double prof_growth__slope(const int64_t *t_ns, const int64_t *v, uint32_t n)
{
	double mt = 0, mv = 0, sxy = 0, sxx = 0, x;
	uint32_t i;

	if (n < 2)
		return 0;
	/* seconds relative to the first point: nanoseconds since boot squared lose precision */
	for (i = 0; i < n; i++) {
		mt += (t_ns[i] - t_ns[0]) / 1e9;
		mv += (double)v[i];
	}
	mt /= n;
	mv /= n;
	for (i = 0; i < n; i++) {
		x = (t_ns[i] - t_ns[0]) / 1e9 - mt;
		sxy += x * ((double)v[i] - mv);
		sxx += x * x;
	}
	return sxx > 0 ? sxy / sxx : 0;
}

uint32_t prof_growth__later_half(const int64_t *t_ns, uint32_t n, int64_t t0_ns)
{
	int64_t mid;
	uint32_t i;

	if (!n)
		return 0;
	mid = t0_ns + (t_ns[n - 1] - t0_ns) / 2;
	for (i = 0; i < n && t_ns[i] < mid; i++)
		;
	return i;
}

void prof_process__set_growth_window(struct prof_process *proc, const int64_t *t_ns, uint32_t n,
				     int64_t t0_ns)
{
	uint32_t first = prof_growth__later_half(t_ns, n, t0_ns);

	proc->nsnapshots = n;
	proc->fit_from_ns = proc->fit_to_ns = 0;
	if (n >= PROF_GROWTH_MIN_SNAPSHOTS && n - first >= 2) {
		proc->fit_from_ns = t_ns[first];
		proc->fit_to_ns = t_ns[n - 1];
	}
}

int prof_growth__fit(const int64_t *t_ns, const int64_t *v, uint32_t n, int64_t t0_ns,
		     uint64_t block_bytes, struct prof_growth *g)
{
	double change, threshold;
	int64_t max = 0;
	uint32_t first, i;

	*g = (struct prof_growth){ .trend = PROF_TREND_NONE };
	if (n < PROF_GROWTH_MIN_SNAPSHOTS)
		return -EAGAIN;
	first = prof_growth__later_half(t_ns, n, t0_ns);
	if (n - first < 2)
		return -EAGAIN;
	for (i = 0; i < n; i++)
		max = v[i] > max ? v[i] : max;

	g->bytes_per_sec = prof_growth__slope(t_ns + first, v + first, n - first);
	g->first_bytes = v[first];
	g->last_bytes = v[n - 1];
	g->max_bytes = max;
	change = g->bytes_per_sec * (t_ns[n - 1] - t_ns[first]) / 1e9;
	threshold = max / 10.0 > 2.0 * block_bytes ? max / 10.0 : 2.0 * block_bytes;
	if (change > threshold)
		g->trend = PROF_TREND_GROWING;
	else if (change < -threshold)
		g->trend = PROF_TREND_SHRINKING;
	else if (g->first_bytes > threshold)
		g->trend = PROF_TREND_PLATEAU;
	else
		g->trend = PROF_TREND_FLAT;
	return 0;
}

const char *prof_trend__name(enum prof_trend t)
{
	switch (t) {
	case PROF_TREND_FLAT:
		return "flat";
	case PROF_TREND_GROWING:
		return "growing";
	case PROF_TREND_PLATEAU:
		return "plateau";
	case PROF_TREND_SHRINKING:
		return "shrinking";
	default:
		return NULL;
	}
}
