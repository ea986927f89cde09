/* The offcpu mode collector: the time threads spend off-CPU, by their stacks at the switch-out
 * (bpf/offcpu.bpf.c measures and aggregates it in the kernel), optionally joined with the
 * stacks of the thread that woke them, and each process's run-queue latency as a histogram
 * (the profile's groups). The only user of the offcpu skeleton; the session drives it through
 * offcpu_mode_ops (core/mode.h), and `ebprof cpu --offcpu` through the same hooks. */
#ifndef EBPROF_OFFCPU_COLLECT_H
#define EBPROF_OFFCPU_COLLECT_H

#include <stdbool.h>
#include <stdint.h>
#include "core/mode.h"
#include "abi/offcpu.h"

struct offcpu_opts {
	uint32_t max_stacks;	/* --max-stacks: distinct stacks, and counters */
	uint32_t max_threads;	/* --max-threads: threads off-CPU at once */
	uint32_t states;	/* --state: OFFCPU_STATE_* counted */
	uint64_t min_ns;	/* --min-block */
	uint64_t max_ns;	/* --max-block, 0: none */
	bool kthreads;		/* --kernel-threads (with -a) */
	bool wakers;		/* --wakers */
	bool per_thread;	/* --per-thread */
	/*
	 * Inside another mode's profile (`ebprof cpu --offcpu`): the sample types are that
	 * mode's, and off-CPU intervals add their time at value index ns_idx and at wall_idx, and
	 * their count at switches_idx, the part of their time runnable at runnable_idx (-1: not
	 * kept). Otherwise (embedded false) offcpu sets up its own types: offcpu/nanoseconds (the
	 * default), switches/count and runnable/nanoseconds.
	 */
	bool embedded;
	int ns_idx, switches_idx, runnable_idx, wall_idx;
	/* Tests only (no option sets it): the kernel side ignores every Nth switch-in of a traced
	 * thread, as the kernel leaves some unreported (0: none) */
	uint32_t test_hide_switch_in;
	/* Tests only: each switch-out of a traced thread takes this much longer after its stacks
	 * are taken (ns, 0: none), as on a loaded machine */
	uint64_t test_switch_delay_ns;
	/* Tests only (EBPROF_TEST_MAX_RUNQ): the run-queue table's room, small enough to fill
	 * (0: MAX_RUNQ, 4096 processes) */
	uint32_t test_max_runq;
	/* Tests only (EBPROF_TEST_MAX_PROCS): the procs table's room, small enough to fill (0:
	 * MAX_PROCS, 32768 processes) */
	uint32_t test_max_procs;
};

/* The mode: open, attach, attach_all, tick, progress, finalize, reaped, stop, finish, detach,
 * close. open takes a struct offcpu_opts. */
extern const struct mode_ops offcpu_mode_ops;

/* The defaults of every option (cmd.c; `ebprof cpu --offcpu` starts from them too). */
void offcpu_default_opts(struct offcpu_opts *o);
/* --max-threads (offcpu's, and cpu's with --offcpu: the size of the table of threads off-CPU
 * at once) into *out, `mode` naming the command in a usage error. 0, or 2 (said, as
 * cli_parse_count says it). */
int offcpu_parse_max_threads(const struct log_ctx *lc, const char *mode, const char *arg,
			     uint32_t *out);

/* "S", "D", "all" (or "S,D", "R" for preempted) into OFFCPU_STATE_* bits: 0 or -1. */
int offcpu_parse_states(const char *s, uint32_t *states);
/* The bits as --state writes them ("S", "D,R", "all"). */
const char *offcpu_states_name(uint32_t states, char *buf, size_t len);

#endif
