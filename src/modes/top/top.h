/* ebprof top as a mode of the session: it runs other modes' collectors side by side (cpu,
 * offcpu, lock, io, and sampled mem on -p and launched targets; each mode that has a window
 * hook and a struct top_source can join), reads their
 * windows every interval into the top model, and draws it (src/top/) or prints it (--batch). */
#ifndef EBPROF_TOP_TOP_H
#define EBPROF_TOP_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include "core/mode.h"
#include "output/output.h"

struct top_opts {
	uint64_t interval_ns;	/* -i */
	bool batch;		/* -b: print the table every interval */
	uint64_t iterations;	/* -n: stop after this many intervals (0: no limit) */
	bool color;		/* not --no-color nor NO_COLOR */
	uint32_t rows;		/* --top: rows printed in batch mode (0: all) */
	struct output_opts out;	/* for w */
	const char *freq;	/* -F, for cpu; NULL: its default */
	const char *max_stacks;	/* --max-stacks, for cpu and io */
	bool no_mem, no_io, no_lock, no_offcpu;	/* --no-mem, --no-io, --no-lock, --no-offcpu */
	/* the parts' options, each made by its mode_def (cli_mode_opts_new) with what top sets;
	 * NULL: the part is left out of this run */
	void *cpu, *mem, *io, *lock, *offcpu;
};

/* Mean bytes between sampled allocations of the mem columns (mem's --sample-bytes). */
#define TOP_MEM_SAMPLE_BYTES "524288"

/* open takes a struct top_opts. */
extern const struct mode_ops top_mode_ops;

#endif
