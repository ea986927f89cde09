/* ebprof top as a mode of the session: it runs other modes' collectors side by side (cpu, and
 * sampled mem on -p and launched targets; each mode that has a window hook and a struct top_source can join), reads their
 * windows every interval into the top model, and draws it (src/top/) or prints it (--batch). */
#ifndef EBPROF_TOP_TOP_H
#define EBPROF_TOP_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include "core/mode.h"
#include "modes/cpu/collect.h"
#include "modes/io/collect.h"
#include "modes/mem/mode.h"
#include "output/output.h"

struct top_opts {
	uint64_t interval_ns;	/* -i */
	bool batch;		/* -b: print the table every interval */
	uint64_t iterations;	/* -n: stop after this many intervals (0: no limit) */
	bool color;		/* not --no-color nor NO_COLOR */
	uint32_t rows;		/* --top: rows printed in batch mode (0: all) */
	struct output_opts out;	/* for w */
	struct cpu_opts cpu;	/* the cpu mode's, for its collector */
	bool no_mem;		/* --no-mem */
	struct mem_opts mem;	/* the mem mode's: sampled, on -p and launched targets only */
	bool no_io;		/* --no-io */
	struct io_opts io;	/* the io mode's */
};

/* Mean bytes between sampled allocations of the mem columns (mem's --sample-bytes). */
#define TOP_MEM_SAMPLE_BYTES (512 * 1024)

/* open takes a struct top_opts. */
extern const struct mode_ops top_mode_ops;

#endif
