/* How often a process's cgroup was throttled by its CPU quota: cgroup v2's cpu.stat
 * (nr_throttled, throttled_usec) or the v1 cpu controller's (nr_throttled, throttled_time in
 * ns), read at the start and the end of a run (the offcpu mode's processes: output/findings.c
 * tells a quota's throttling from busy CPUs by it). A throttled thread is runnable, waiting. */
#ifndef EBPROF_CORE_CGTHROTTLE_H
#define EBPROF_CORE_CGTHROTTLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cg_throttle {
	char dir[512];		/* the cgroup's directory, holding its cpu.stat */
	uint64_t n;		/* nr_throttled */
	uint64_t ns;		/* time throttled */
};

/* The cgroup pid is in now (cgroup v2, or v1's cpu controller) and its counts: 0, or a
 * negative errno (-ENOENT: no process, no cpu controller or no cpu.stat with them). root:
 * where the cgroup file systems are mounted (NULL: /sys/fs/cgroup). */
int cg_throttle__read_pid(const char *root, pid_t pid, struct cg_throttle *t);

/* t's cgroup's counts now, into t (its dir kept). 0 or a negative errno. */
int cg_throttle__read(struct cg_throttle *t);

#endif
