/* Types and constants shared by mem.bpf.c and the mem collector. __u32/__u64 only, no logic. */
#ifndef EBPROF_ABI_MEM_H
#define EBPROF_ABI_MEM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MEM_MAX_STACK	127	/* perf_event_max_stack on this kernel */
#define MEM_HIST_BUCKETS 48	/* log2 size buckets: [0], [1], [2,3], [4,7] ... last is open */
#define MEM_LIFE_BUCKETS 48	/* log2 lifetime buckets in ns, same layout (2^47 ns ~ 39 h) */

/* Every traced entry point. The order is the order of the JSON `calls` object. */
enum mem_fn {
	MEM_FN_MALLOC,
	MEM_FN_CALLOC,
	MEM_FN_REALLOC,
	MEM_FN_REALLOCARRAY,
	MEM_FN_FREE,
	MEM_FN_ALIGNED_ALLOC,
	MEM_FN_MEMALIGN,
	MEM_FN_POSIX_MEMALIGN,
	MEM_FN_VALLOC,
	MEM_FN_PVALLOC,
	MEM_FN__COUNT,
};

/* Why an event could not be fully accounted. Counted per CPU, always reported. */
enum mem_drop {
	MEM_DROP_LIVE_FULL,	/* live table full: the block's free will look unknown */
	MEM_DROP_SITES_FULL,	/* per-stack table full: counted per process, not per site */
	MEM_DROP_STACKS_FULL,	/* stack table full: counted under an empty stack */
	MEM_DROP_STACK_FAIL,	/* bpf_get_stack() failed */
	MEM_DROP_NO_STATE,	/* per-thread entry state missing at return */
	MEM_DROP_PROCS_FULL,	/* process table full */
	MEM_DROP__COUNT,
};

struct mem_live_key {
	__u32 pid;
	__u32 pad;
	__u64 ptr;
};

struct mem_live_val {
	__u64 size;
	__u64 stack;		/* stack hash, 0 = no stack */
	__u64 ts;		/* bpf_ktime_get_ns() at allocation */
	__u32 fn;		/* enum mem_fn that returned it */
	__u32 pad;
	__u64 weight;		/* sampled modes: allocations it stands for, MEM_WEIGHT_ONE units */
};

struct mem_site_key {
	__u32 pid;
	__u32 fn;		/* enum mem_fn called */
	__u64 stack;		/* stack hash, key of the stacks map */
};

struct mem_site_val {
	__u64 allocs;
	__u64 alloc_bytes;
	__u64 frees;
	__u64 free_bytes;
	__u64 failed;		/* calls from this stack that failed (no allocation) */
	__u64 temps;		/* frees before the allocating thread's next allocation */
	__u64 hist[MEM_HIST_BUCKETS];	/* allocation count by log2 of the requested size */
	__u64 life[MEM_LIFE_BUCKETS];	/* free count by log2 of the block's lifetime in ns */
};

struct mem_stack {
	__u64 nr;
	__u64 ips[MEM_MAX_STACK];
};

struct mem_proc {
	__u64 calls[MEM_FN__COUNT];
	__u64 alloc_count;
	__u64 alloc_bytes;
	__u64 free_count;
	__u64 free_bytes;
	__u64 live_count;
	__u64 live_bytes;
	__u64 peak_live_bytes;
	__u64 peak_ts;
	__u64 max_request;
	__u64 unknown_frees;
	__u64 failed;		/* allocation calls that returned failure */
	/* --alloc-only: the allocator's own mappings [lib_lo, lib_hi) in this process, set by
	 * userspace; a call returning there is the allocator calling itself (not counted) */
	__u64 lib_lo, lib_hi;
};

/*
 * Sampled tracking (--sample-bytes, --sample-every): only sampled allocations reach the tables,
 * each with a weight (the allocations it stands for, in units of 1/MEM_WEIGHT_ONE). In these
 * modes every count of the tables above (calls, allocs, frees, failed, temps, histogram and
 * lifetime buckets, live_count) is a sum of weights in those units, and every byte field is a
 * sum of size * weight: estimates of the totals. unknown_frees stays 0 (a free that misses the
 * live table is a free of an unsampled block).
 */
enum mem_sample_mode {
	MEM_SAMPLE_NONE,	/* full tracking */
	MEM_SAMPLE_BYTES,	/* exponential byte intervals of mean sample_period */
	MEM_SAMPLE_EVERY,	/* every sample_period-th allocation of a thread */
	MEM_SAMPLE_ALLOC_ONLY,	/* entry probes only: calls and requested bytes per site */
};

#define MEM_WEIGHT_SHIFT 16
#define MEM_WEIGHT_ONE (1ULL << MEM_WEIGHT_SHIFT)
#define MEM_SAMPLE_MAX_PERIOD (1ULL << 30)	/* keeps the fixed-point math in 64 bits */

/* Fixed-point tables for the sampler, filled by userspace (libm) before loading. */
#define MEM_LN_STEPS 256	/* ln(1 + i/256), i = 0..256, in units of 2^-32 */
#define MEM_EXP_INT 24		/* exp(-i), i = 0..23, in units of 2^-30 */
#define MEM_EXP_FRAC 64		/* exp(-i/64), i = 0..63, in units of 2^-30 */

#endif
