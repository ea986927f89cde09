/* The end of a window: core/window.h. */
#include "core/bpfutil.h"
#include "core/procs.h"
#include "core/window.h"
#include "profile/profile.h"

void window__end(struct profile *into, int stats_fd, const char *const *names, int first, int n,
		 int skip, uint64_t *last, struct proc_table *procs, void (*free_priv)(void *),
		 uint64_t run_start_ns, uint64_t *start_ns, uint64_t now)
{
	uint64_t from = *start_ns ? *start_ns : run_start_ns;

	for (int s = first; s < n; s++) {
		uint64_t v = bpfutil__percpu_sum(stats_fd, s);

		if (s == skip)
			continue;
		profile__add_drop(into, names[s], v - last[s]);
		last[s] = v;
	}
	/* -a over hours: the processes gone since two windows ago are forgotten */
	proc_table__prune_gone(procs, 2, free_priv);
	into->duration_nanos = now - from;
	profile__add_info(into, "window", "%.2f s", (now - from) / 1e9);
	*start_ns = now;
}
