/* The leak scan of a stopped process: which of its memory is a root, and reading it. */
#ifndef EBPROF_HEAPSCAN_H
#define EBPROF_HEAPSCAN_H

#include <stdbool.h>
#include <sys/types.h>
#include "core/leakscan.h"
#include "core/target.h"

struct heapscan_opts {
	pid_t pid;
	const char *alloc_path;	/* the allocator's file as in /proc/PID/maps */
	bool glibc;		/* glibc's heap layout: arenas and chunk headers */
	unsigned heuristics;	/* leak_scan_opts.heuristics */
	const struct target_frozen *frozen;	/* every thread, stopped, with registers */
	/* threads killed with the process that are gone by now (target__exit_regs at their
	 * exit stops): their final registers and stack pointers count as the frozen ones do */
	const struct target_thread *dead;
	size_t ndead;
};

struct heapscan_result {
	struct leak_stats st;
	uint64_t root_bytes;	/* size of the root regions */
	uint32_t nroots;
	uint32_t threads;	/* threads whose registers and stack pointer were used (the dead
				 * ones' final ones too) */
	uint32_t threads_unknown;	/* threads without registers: stacks scanned whole */
};

/*
 * Classify blocks (see leak_scan) in a process stopped by target__freeze. Roots: every
 * readable and writable mapping except the allocator's heap and devices other than /dev/zero;
 * the heap is [heap], glibc's arena heaps (heap_info.size of each) and mmapped chunks (their
 * size word), and for another allocator any mapping holding a block; a thread's stack from its
 * stack pointer less the 128-byte red zone (below it is dead frames); every thread's
 * registers.
 * Returns 0 or a negative errno.
 */
int heapscan__run(const struct heapscan_opts *o, struct leak_block *blocks, size_t n,
		  struct heapscan_result *res);

#endif
