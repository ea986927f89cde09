/* The end of a window (core/mode.h's window hook), the same for the modes that count in BPF
 * maps (io, lock, offcpu): what every window carries besides its samples. */
#ifndef EBPROF_WINDOW_H
#define EBPROF_WINDOW_H

#include <stdint.h>

struct profile;
struct proc_table;

/* The drops counted in the window: the growth since the last window of the per-CPU counters
 * first..n-1 of map stats_fd (the mode's stats array, counters named by names; their values
 * at the last window in last[], updated), `skip` left out (a reason of -a only; -1: none);
 * the processes gone for two windows forgotten (free_priv frees their priv, as the table's
 * owner does); the window's length, from *start_ns (0: run_start_ns) to now, as
 * duration_nanos and the fact "window"; *start_ns becomes now. */
void window__end(struct profile *into, int stats_fd, const char *const *names, int first, int n,
		 int skip, uint64_t *last, struct proc_table *procs, void (*free_priv)(void *),
		 uint64_t run_start_ns, uint64_t *start_ns, uint64_t now);

#endif
