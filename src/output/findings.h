/* Findings of a run of several modes (ebprof profile): the facts the run measured that crossed a
 * threshold, each with one next step. Every rule and threshold is in docs/FINDINGS.md; a rule
 * says nothing unless its numbers cross it, and nothing is said that this run did not measure.
 */
#ifndef EBPROF_OUTPUT_FINDINGS_H
#define EBPROF_OUTPUT_FINDINGS_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"

/* The thresholds (docs/FINDINGS.md) */
#define FIND_MAX_PER_RULE	3	/* findings a rule makes at most */
#define FIND_CPU_SHARE		0.20	/* a function's self share of the CPU samples */
#define FIND_CPU_MIN_SAMPLES	20	/* ... out of at least this many samples */
#define FIND_MEM_RATE		(1u << 20)	/* bytes allocated per second by one function */
#define FIND_MEM_SHARE		0.10	/* ... and its share of all bytes allocated */
#define FIND_MEM_SHORT_NS	(1ull << 20)	/* "short-lived": freed within 2^20 ns (1.05 ms) */
#define FIND_MEM_SHORT_SHARE	0.50	/* ... for at least this share of its freed blocks */
#define FIND_LEAK_BYTES		1024	/* bytes definitely lost by one function */
#define FIND_OFFCPU_SHARE	0.10	/* a function's off-CPU time, of the run's duration */
#define FIND_OFFCPU_MIN_NS	(100ull * 1000 * 1000)	/* ... and at least this much */
#define FIND_CONTEND_SHARE	0.25	/* a process's time runnable, waiting for a CPU, of its
					 * time on a CPU and runnable */
#define FIND_CONTEND_RUN_SHARE	0.10	/* ... and of the run's duration */
#define FIND_CONTEND_MIN_NS	(100ull * 1000 * 1000)	/* ... and at least this much */
#define FIND_CONTEND_WHERE	0.10	/* a function named where it waited: this share of it */
#define FIND_CONTEND_QUOTA	0.10	/* the quota named first: its cgroup throttled for this
					 * share of it */
#define FIND_LOCK_SHARE		0.10	/* a lock's total wait, of the run's duration */
#define FIND_LOCK_MIN_CONTENTIONS 10	/* ... over at least this many waits */
#define FIND_IO_P99_NS		(10ull * 1000 * 1000)	/* a disk and operation's p99 latency */
#define FIND_IO_MIN_REQUESTS	20	/* ... over at least this many requests */

/* Compute set's findings from its parts (profile.h: parts), the run lasting duration_ns,
 * replacing any it had; all: a run of the whole machine (-a), whose processes' waits begun
 * before tracing started are no finding (every daemon asleep). 0 or a negative errno. */
int findings__compute(struct profile *set, int64_t duration_ns, bool all);

#endif
