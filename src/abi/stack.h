/* Stacks as every mode's BPF side captures them and every collector reads them: types and
 * limits shared by both sides (src/bpf/lib/stack.bpf.h, src/core/stacks.h), nothing else. */
#ifndef EBPROF_ABI_STACK_H
#define EBPROF_ABI_STACK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define STACK_MAX_DEPTH	127	/* perf_event_max_stack on this kernel */

/* One interned stack: user return addresses (the first may be an exact instruction pointer,
 * see the capturing mode), or kernel addresses, leaf first. Keyed by a 64-bit hash of its
 * frames in a mode's `stacks` map; hash 0 means "no stack". */
struct stack_trace {
	__u64 nr;
	__u64 ips[STACK_MAX_DEPTH];
};

#endif
