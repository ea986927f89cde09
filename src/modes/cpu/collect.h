/* The cpu mode collector: samples on-CPU stacks with a software cpu-clock perf event per CPU
 * (bpf/cpu.bpf.c aggregates them in the kernel) and turns the counts into profile samples. The
 * only user of the cpu skeleton; the session drives it through cpu_mode_ops (core/mode.h). */
#ifndef EBPROF_CPU_COLLECT_H
#define EBPROF_CPU_COLLECT_H

#include <stdbool.h>
#include <stdint.h>
#include "core/mode.h"

#define CPU_MAX_CPUS	1024		/* CPU numbers accepted by --cpu */
#define CPU_DEFAULT_HZ	99
/* The cpu-clock event's timer never fires more often than every 10 us (the kernel raises a
 * shorter period to that), so no rate above this is real, whatever the sysctl allows. */
#define CPU_MAX_HZ	100000

struct cpu_opts {
	uint32_t hz;		/* -F: samples per second of CPU time, on each CPU */
	bool idle;		/* --idle: the idle task too (-a only) */
	bool per_thread;	/* --per-thread */
	uint32_t max_stacks;	/* --max-stacks: distinct stacks, and (process, stacks) counters */
	bool cpu_given;		/* --cpu given: cpus[] holds it; else every online CPU */
	/* --offcpu: a wall-clock profile, off-CPU time (modes/offcpu's collector, run beside)
	 * with the samples, under the sample types samples, cpu, offcpu and wall (the default) */
	bool offcpu;
	uint32_t max_threads;	/* --max-threads, with --offcpu (0: offcpu's default) */
	bool cpus[CPU_MAX_CPUS];
	/* Tests only (no option sets it): the processes' totals table's room (0: MAX_PROCS,
	 * 32768 processes) */
	uint32_t test_max_procs;
};

/* The mode: open, attach, attach_all, tick, progress, finalize, retire, stop, finish, detach,
 * close. open takes a struct cpu_opts. */
extern const struct mode_ops cpu_mode_ops;

/* Parse a CPU list such as "0,2-3" into set (CPU_MAX_CPUS entries, cleared first). 0, or -1
 * when the list is malformed or names a CPU past CPU_MAX_CPUS - 1. */
int cpu_parse_list(const char *s, bool *set);
/* Every online CPU (/sys/devices/system/cpu/online) into set. 0 or a negative errno. */
int cpu_online(bool *set);
/* The sampling period in nanoseconds of CPU time for a rate of hz per second (hz > 0). */
uint64_t cpu_period_ns(uint32_t hz);
/* The highest rate this machine samples at: perf_event_max_sample_rate, and at most
 * CPU_MAX_HZ. */
uint32_t cpu_max_hz(void);

#endif
