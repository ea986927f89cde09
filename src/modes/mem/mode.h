/* The mem mode as other commands run it (ebprof top runs its collector on the targets): its
 * options and its hooks. The command line is cmd.c's. */
#ifndef EBPROF_MEM_MODE_H
#define EBPROF_MEM_MODE_H

#include <stdbool.h>
#include "core/mode.h"
#include "core/probes.h"
#include "modes/mem/collect.h"
#include "profile/profile.h"

struct mem_opts {
	struct mem_collector_opts col;
	bool leaks;		/* reachability scans at exit and at the end */
	unsigned heuristics;	/* memcheck's leak heuristics (bit set) */
	const char *suppressions;
	struct prof_suppressions *supp;
	bool fail_on_leak;
	bool temp_set;		/* --temp-threshold given */
	struct probes_opts probes;	/* --allocator, --lib, --symbol-prefix */
};

/* The defaults of `ebprof mem` (full tracking, its table sizes, every leak heuristic). */
void mem_opts__init(struct mem_opts *o);

/* open takes a struct mem_opts (probes__configure must have been called with its probes). */
extern const struct mode_ops mem_mode_ops;

#endif
