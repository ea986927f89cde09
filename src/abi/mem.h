/* Types and constants shared by mem.bpf.c and the mem collector. __u32/__u64 only, no logic. */
#ifndef EBPROF_ABI_MEM_H
#define EBPROF_ABI_MEM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

#define MEM_MAX_STACK	STACK_MAX_DEPTH
#define MEM_HIST_BUCKETS 48	/* log2 size buckets: [0], [1], [2,3], [4,7] ... last is open */
#define MEM_LIB_RANGES 6	/* objects probed in one process (ALLOC_MAX_OBJS) */
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
	/* C++: every variant (sized, aligned, nothrow) counts under its operator's name */
	MEM_FN_OPERATOR_NEW,
	MEM_FN_OPERATOR_NEW_ARRAY,
	MEM_FN_OPERATOR_DELETE,
	MEM_FN_OPERATOR_DELETE_ARRAY,
	/* jemalloc's non-standard API */
	MEM_FN_MALLOCX,
	MEM_FN_RALLOCX,
	MEM_FN_DALLOCX,
	MEM_FN_SDALLOCX,
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
	MEM_DROP_CALLERS_FULL,	/* caller table full: an aliased free counted under its probe */
	MEM_DROP_REGIONS_FULL,	/* --mmap: region table full: the mapping is counted, not tracked */
	MEM_DROP_MAP_SPAN,	/* --mmap: an unmap spanning more regions than one call handles */
	MEM_DROP_TRACE_FULL,	/* --trace: ring buffer full: the call is missing from the trace */
	MEM_DROP__COUNT,
};

/* Attach cookie: enum mem_fn in the low 32 bits, flags above. MEM_COOKIE_CALLER: an entry-only
 * probe shared by several names (tcmalloc's free is also operator delete): its calls are counted
 * per caller's return address too, so userspace can tell the names apart. */
#define MEM_COOKIE_CALLER	(1ULL << 32)
/* MEM_COOKIE_NEW: libstdc++'s operator new (new[]), probed at entry only. A return probe would
 * replace its return address, and a std::bad_alloc thrown out of it could not be unwound through
 * the trampoline (the program would terminate instead of catching it). Its inner allocation call
 * (malloc, aligned_alloc) is counted under its name instead, with its requested size and its
 * caller's stack. */
#define MEM_COOKIE_NEW		(1ULL << 33)

/* Calls of an aliased entry-only probe per return address (read at *sp on entry). */
struct mem_caller_key {
	__u32 pid;
	__u32 fn;
	__u64 ret;
};

struct mem_live_key {
	__u32 pid;
	__u32 pad;
	__u64 ptr;
};

/* A live block as the programs and the collector's readers see it. */
struct mem_live_val {
	__u64 size;
	__u64 stack;		/* stack hash, 0 = no stack */
	__u64 ts;		/* bpf_ktime_get_ns() at allocation */
	__u32 fn;		/* enum mem_fn that returned it */
	__u32 pad;
	__u64 weight;		/* sampled modes: allocations it stands for, MEM_WEIGHT_ONE units */
};

/*
 * The live table: open addressing in an array map of one cache line per slot (mem.bpf.c, "The
 * live table"), a power of two of them, at least --max-live. A block's slot is the first free
 * one of the MEM_LIVE_PROBE slots from its home slot (a hash of pid and address); a full window
 * is a counted drop. Slots are claimed by compare-and-swap on state.
 */
#define MEM_LIVE_PROBE 32

/*
 * Which pages of the live table have held a block: a bit a page of 2^MEM_LIVE_PAGE_SHIFT slots
 * (4 KiB), 64 pages a word (the default table's marks: 4 KiB), set by the program that claims an
 * empty slot there, cleared by userspace when it finds the page empty after a process's pass, so
 * that a pass reads only the marked pages (a finished process of a tree reads a few, not the
 * table's 128 MiB).
 */
#define MEM_LIVE_PAGE_SHIFT 6
#define MEM_LIVE_WORD_SHIFT (MEM_LIVE_PAGE_SHIFT + 6)	/* slots a word of marks covers */
/*
 * The marks are in MEM_LIVE_MARK_SETS sets, one a group of pids (pid % sets): a claim marks its
 * page in its pid's set, and a pass for a process reads the pages its set marks, so the blocks
 * of the other processes of a tree (its parent's, its siblings') are mostly not on its way. A
 * set is the whole table's bits (live_used[set * words + page / 64], words = the table's pages /
 * 64, at least 1): one process's marks stay 4 KiB at the default size.
 */
#define MEM_LIVE_MARK_SETS 16

enum mem_live_state {
	MEM_LIVE_EMPTY,
	MEM_LIVE,		/* holds a live block */
	MEM_LIVE_BUSY,		/* being filled or emptied by the thread that claimed it */
};

struct mem_live_slot {
	__u32 state;		/* enum mem_live_state */
	__u32 pid;
	__u64 ptr;
	__u64 size;
	__u64 stack;
	__u64 ts;
	__u64 weight;
	__u32 fn;
	__u32 over;		/* blocks whose home is this slot that lie further on */
	__u32 dist;		/* this block's slot minus its home slot (0..MEM_LIVE_PROBE-1) */
	__u32 pad;
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

/* The shared stack record (abi/stack.h). */
#define mem_stack stack_trace

/* The process table (the BPF map procs): open addressing in an array of 2 x --max-procs slots
 * (a power of 2); a process's entry lies in the first of MEM_PROC_PROBE slots from its home,
 * pid & mask, that was empty (pid 0) when it was made, by userspace before it attaches (the
 * entry is the probes' filter) or, with -a, by the BPF side at the process's first call. An
 * array's lookup is inline code where a hash map's was two calls. Userspace reads and empties
 * the slots through a mapping: an entry being emptied has pid MEM_PROC_CLEARING (no lookup
 * finds it, no -a claim takes it), its counters zeroed, then pid 0. */
#define MEM_PROC_PROBE 8
#define MEM_PROC_CLEARING 0xffffffffu
#define MEM_PROC_COMM 16	/* TASK_COMM_LEN */
#define MEM_PROC_CMDLINE 128	/* a power of 2: the BPF side keeps at most one byte less */

struct mem_proc {
	__u32 pid;		/* the slot's process; 0: empty; MEM_PROC_CLEARING: being emptied */
	/* the process it was forked from, set by userspace for a child of a traced tree until
	 * its exec (0: none): a free that misses is of a block inherited when the parent still
	 * holds it, allocated before the fork (inherited_frees, inherited_bytes) */
	__u32 parent;
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
	__u64 inherited_frees;	/* of unknown_frees: blocks its parent held at the fork */
	__u64 inherited_bytes;	/* their size, as the parent's allocation recorded it */
	__u64 failed;		/* allocation calls that returned failure */
	/* full tracking: outermost calls in progress when the run ended (entered before it,
	 * returned after it, so not counted), counted by the final read (held_flush_iter) */
	__u64 in_flight;
	/* --alloc-only: the traced objects' mappings [lib_lo[i], lib_hi[i]) in this process (the
	 * allocator, libstdc++ ...), set by userspace: a call from there is the allocator calling
	 * itself (operator new calling malloc), counted as the outer call */
	__u64 lib_lo[MEM_LIB_RANGES], lib_hi[MEM_LIB_RANGES];
	/* the largest request: its size, site (largest_fn, largest_stack) and bpf_ktime_get_ns()
	 * (0: unknown, --alloc-only). Recorded apart from max_request, which the held counts raise
	 * late; largest_busy: a thread is recording it */
	__u64 largest_size;
	__u64 largest_stack;
	__u64 largest_ts;
	__u32 largest_fn;
	__u32 largest_busy;
	/* -a: the process's name and the start of its command line (its arguments, NUL after
	 * each, cmdline_len bytes), as the kernel had them when the BPF side made the entry and
	 * again at each exec (written before execs counts it), and the execs seen: userspace
	 * names an adopted process again when execs changes, from /proc while it is there, else
	 * from here (a process that exec'd and ended between two ticks) */
	__u32 execs;
	__u32 cmdline_len;
	char comm[MEM_PROC_COMM];
	char cmdline[MEM_PROC_CMDLINE];
};

/* ---- --trace: one record per counted call, through a ring buffer ---- */

enum mem_trace_result {
	MEM_TRACE_OK,		/* an allocation that returned ptr; a free of a tracked block */
	MEM_TRACE_FAILED,	/* an allocation that failed (ptr 0) */
	MEM_TRACE_FREED,	/* realloc(arg, 0): freed arg, returned NULL */
	MEM_TRACE_UNKNOWN,	/* a free of a pointer not allocated while tracing */
	MEM_TRACE_INHERITED,	/* of them, in a forked child: a block its parent held at the
				 * fork (full tracking); size is the block's */
};

struct mem_trace_event {
	__u64 ts;		/* bpf_ktime_get_ns() at the return (frees: at the entry) */
	__u32 pid, tid;
	__u32 fn;		/* enum mem_fn, as probed (aliases are one function) */
	__u32 result;		/* enum mem_trace_result */
	__u64 size;		/* requested bytes (frees: 0) */
	__u64 ptr;		/* the block returned, or freed */
	__u64 arg;		/* realloc, reallocarray, rallocx: the old pointer */
	__u64 stack;		/* stack hash in the stacks map, 0 = none */
};

/* ---- mappings (--mmap): the program's own mmap, munmap, mremap and brk, a category apart ---- */

/* Calls counted per process; the first three are also site functions (leaf frames). */
enum mem_map_fn {
	MEM_MAP_MMAP,
	MEM_MAP_MREMAP,
	MEM_MAP_BRK,
	MEM_MAP_MUNMAP,
	MEM_MAP__COUNT,
};

/* A tracked region: keyed by (pid, start); regions of one process never overlap. */
struct mem_region_key {
	__u32 pid;
	__u32 pad;
	__u64 start;
};

struct mem_region_val {
	__u64 size;
	__u64 stack;		/* stack hash at the syscall's exit, 0 = no stack */
	__u64 ts;		/* bpf_ktime_get_ns() when mapped */
	__u32 fn;		/* enum mem_map_fn that mapped it */
	__u32 pad;
};

/* Per (pid, enum mem_map_fn, stack): key is struct mem_site_key. */
struct mem_map_site_val {
	__u64 maps;		/* regions mapped from this stack */
	__u64 map_bytes;
	__u64 unmaps;		/* unmaps that released (part of) one of its regions */
	__u64 unmap_bytes;
	__u64 failed;		/* calls from this stack that failed */
	__u64 hist[MEM_HIST_BUCKETS];	/* regions by log2 of their size */
};

struct mem_map_proc {
	__u64 calls[MEM_MAP__COUNT];	/* calls that mapped or released counted memory */
	__u64 map_count;
	__u64 map_bytes;
	__u64 unmap_count;	/* regions (or parts of them) released */
	__u64 unmap_bytes;
	__u64 live_count;	/* regions (pieces after a partial unmap) mapped now */
	__u64 live_bytes;
	__u64 peak_live_bytes;
	__u64 peak_ts;
	__u64 failed;		/* mmap, mremap or brk growth that failed */
	__u64 untracked;	/* calls that touched no counted memory (see docs) */
	/* set by userspace: syscalls made from [loader_lo, loader_hi) are the dynamic loader's
	 * (mapping libraries at start-up and dlopen), not the program's */
	__u64 loader_lo;
	__u64 loader_hi;
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
