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

/* The address a frame-pointer walk's stack ends with when the walk stopped at a saved frame
 * pointer that is no frame (not 0, the outermost frame's: in the first page, misaligned, not
 * above the frame before, unreadable): code without frame pointers left its own value in %rbp,
 * and the frames past it are unknown; or at the depth limit, where it takes the place of the
 * last of STACK_MAX_DEPTH frames. Rendered [truncated], counted per
 * stack as the unwind_fp_broken drop (core/stacks.h). A kernel address: no user mapping is
 * ever there (abi/unwind.h's UNWIND_TRUNCATED is its neighbour). */
#define STACK_FP_BROKEN	0xfffffffffffff008ULL

/* The key most modes count under: a process, one value of the mode's own, and the two stacks.
 * The collector reads such a map with stack_counts__read (core/stacks.h). */
struct stack_key {
	__u32 tgid;
	__u32 aux;		/* the mode's own: cpu's thread (--per-thread), stacks' event */
	__u64 ustack;		/* user stack hash in the mode's stacks map, 0: none */
	__u64 kstack;		/* kernel stack hash, 0: none */
	__u32 flags;		/* STACK_KEY_* */
	__u32 gen;		/* with a thread in aux (--per-thread): its name's generation, the
				 * times it was renamed while traced (struct thread_name_key), so that
				 * its counts before and after a rename are keys of their own; 0 for a
				 * thread never renamed, and in every other use */
};

/* The key of a mode's `thread_names` map (bpf/lib/tname.bpf.h): a thread's name as it was at
 * the first count of one generation of its name (struct stack_key's gen), so that a thread
 * that renamed itself (pthread_setname_np, prctl PR_SET_NAME, an exec) is named by the name
 * it had when each count was taken, not by its last one. */
struct thread_name_key {
	__u32 tid;
	__u32 gen;
};

#define THREAD_NAME_LEN	16	/* TASK_COMM_LEN */

struct thread_name {
	char comm[THREAD_NAME_LEN];
};

/* The user stack's first address is where the thread was (the event hit user mode), not the
 * return address of a syscall or an interrupt: symbolize it as it is, not at ip - 1. */
#define STACK_KEY_USER_EXACT	1
/* The user stack was not seen: the event's thread was not the current one (a wait begun before
 * tracing started, found asleep: offcpu's offcpu_begun). Rendered as a [user stack not seen]
 * frame under the kernel's, never as a stack that ends in the kernel. */
#define STACK_KEY_USER_UNSEEN	2

#endif
