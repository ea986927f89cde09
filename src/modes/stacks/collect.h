/* The stacks mode collector: loads stacks.bpf.c, attaches it to the run's events, and turns
 * the stacks the kernel counted into profile samples (type events/count). The only user of
 * the stacks skeleton; the session drives it through struct mode_ops. */
#ifndef EBPROF_STACKS_COLLECT_H
#define EBPROF_STACKS_COLLECT_H

#include <stdint.h>
#include "abi/stacks.h"
#include "core/mode.h"
#include "modes/stacks/events.h"

#define STACKS_DEFAULT_MAX_STACKS 16384

/* The mode's own options (cmd.c parses them). */
struct stacks_opts {
	struct stacks_event events[STACKS_MAX_EVENTS];
	int nevents;
	uint32_t max_stacks;	/* distinct stacks, and distinct (process, event, stacks) */
};

extern const struct mode_ops stacks_mode_ops;

/* The events opts has, each resolved (stacks_event__resolve). 0 or a negative errno (said). */
int stacks_opts__resolve(struct stacks_opts *o, const struct log_ctx *lc);
void stacks_opts__free(struct stacks_opts *o);

#endif
