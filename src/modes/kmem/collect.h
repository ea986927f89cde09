/* The kmem mode collector: kernel allocations (kmalloc, slab caches, pages, per-CPU) by the
 * kernel and user stacks of the task that made them, counted in the kernel by bpf/kmem.bpf.c,
 * with each allocation tracked by pointer until it is freed. The only user of the kmem
 * skeleton; the session drives it through kmem_mode_ops (core/mode.h). */
#ifndef EBPROF_KMEM_COLLECT_H
#define EBPROF_KMEM_COLLECT_H

#include <stdint.h>
#include "core/mode.h"

#define KMEM_DEFAULT_MAX_STACKS	(1u << 15)
#define KMEM_DEFAULT_MAX_LIVE	(1u << 18)

struct kmem_opts {
	uint32_t max_stacks;	/* --max-stacks: distinct stacks; twice as many (process, kind,
				 * stacks) counters */
	uint32_t max_live;	/* --max-live: allocations tracked until their free at once */
	uint64_t min_age_ns;	/* --min-age: outstanding only when at least this old */
	/* Tests only (EBPROF_TEST_MAX_PROCS): the process totals table's room, small enough to
	 * fill (0: 32768 processes) */
	uint32_t test_max_procs;
};

/* open takes a struct kmem_opts. */
extern const struct mode_ops kmem_mode_ops;

#endif
