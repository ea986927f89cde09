/* bench_pin: the workload's own pinning to one CPU, asked for by bench/run.sh through the
 * environment (BENCH_CPU=N; unset or empty: not pinned). The workload pins itself, not a
 * `taskset` in front of it: a tracer launching the command would count taskset's own
 * allocations as the workload's. On this shared 2-CPU guest a loop's CPU time under one
 * configuration spread by ~25% from run to run unpinned, ~3% pinned (docs/PERFORMANCE.md). */
#ifndef EBPROF_BENCH_PIN_H
#define EBPROF_BENCH_PIN_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static void bench_pin(void)
{
	const char *s = getenv("BENCH_CPU");
	cpu_set_t set;
	char *end;
	long cpu;

	if (!s || !*s)
		return;
	cpu = strtol(s, &end, 10);
	if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
		fprintf(stderr, "bench: BENCH_CPU=%s is not a CPU number\n", s);
		exit(2);
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("bench: sched_setaffinity (BENCH_CPU)");
		exit(2);
	}
}

#endif
