/* Types and constants shared by kmem.bpf.c and the kmem collector (src/modes/kmem/). __u32/__u64
 * only, no logic. */
#ifndef EBPROF_ABI_KMEM_H
#define EBPROF_ABI_KMEM_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

#define KMEM_COMM_LEN		16
#define KMEM_CACHE_NAME_LEN	32
#define KMEM_HIST_BUCKETS	24	/* log2 of bytes: bucket 0 holds 0, the last is open-ended */

/* What allocated: the high byte of stack_key.aux; the low 24 bits are the kind's own (a cache's
 * id in `cache_ids`, a page allocation's order). */
enum kmem_kind {
	KMEM_KIND_KMALLOC,	/* kmem:kmalloc */
	KMEM_KIND_CACHE,	/* kmem:kmem_cache_alloc, low bits: the cache's id */
	KMEM_KIND_PAGE,		/* kmem:mm_page_alloc, low bits: the order */
	KMEM_KIND_PERCPU,	/* percpu:percpu_alloc_percpu */
	KMEM_KIND__COUNT,
};
#define KMEM_AUX(kind, low)	(((__u32)(kind) << 24) | ((low) & 0xffffff))
#define KMEM_AUX_KIND(aux)	((aux) >> 24)
#define KMEM_AUX_LOW(aux)	((aux) & 0xffffff)

/* The aggregate per (process, kind, user stack, kernel stack): struct stack_key -> this. live_*
 * are kept for a traced process only (not -a's), for its growth series, which reads them; they
 * go down when one of its allocations is freed, by whichever task or CPU, while the series is
 * open. The report's in-use values are made from `live` itself. */
struct kmem_count {
	__u64 allocs;
	__u64 bytes_req;
	__u64 bytes_alloc;
	/* no frees: no output read them, and a free whose row the current generation lacked
	 * added to the other's, which a spill may have copied already (the add lost); the frees
	 * matched are the cache rows' (struct kmem_cache_stat) */
	__u64 live_count;	/* tracked in `live` and not freed yet (a series' only) */
	__u64 live_bytes;	/* bytes_alloc of those */
	__u64 hist[KMEM_HIST_BUCKETS];	/* allocations by log2 of bytes requested */
};

/* Per process: the events its tasks hit (whoever owns what they free), and its allocations
 * still live (kept as kmem_count's: for a traced process, while its series is open; the
 * collector waits on them for an exit's frees, the report's are made from `live`). Keyed by
 * tgid. */
enum kmem_total {
	KMEM_T_KMALLOC,
	KMEM_T_KFREE,
	KMEM_T_CACHE_ALLOC,
	KMEM_T_CACHE_FREE,
	KMEM_T_PAGE_ALLOC,
	KMEM_T_PAGE_FREE,
	KMEM_T_PERCPU_ALLOC,
	KMEM_T_PERCPU_FREE,
	KMEM_T_KMALLOC_BYTES_REQ,
	KMEM_T_BYTES_REQ,	/* every kind */
	KMEM_T_BYTES_ALLOC,
	KMEM_T_LIVE_COUNT,
	KMEM_T_LIVE_BYTES,
	KMEM_T__COUNT,
};

/* The largest kmalloc a slab cache serves (KMALLOC_MAX_CACHE_SIZE, two pages with SLUB): above
 * it kmalloc takes pages whole */
#define KMEM_KMALLOC_MAX_CACHE	8192

struct kmem_totals {
	__u64 v[KMEM_T__COUNT];
	char comm[KMEM_COMM_LEN];
	__u64 start;		/* the process's start (its leader's task->start_time): with the
				 * tgid, which process it is; another one means the PID was
				 * used again (KMEM_STAT_PIDS_REUSED) */
};

/* Per (process, cache): a slab cache (kmem_cache_alloc: its kmem_cache address) or a kmalloc
 * size class (kmalloc: bytes allocated, a small number; the tracepoint does not name the cache). */
struct kmem_cache_key {
	__u32 tgid;
	__u32 pad;
	__u64 cache;
};

struct kmem_cache_stat {
	__u64 allocs;
	__u64 frees;		/* of these allocations, matched by pointer */
	__u64 bytes_req;
	__u64 bytes_alloc;
	__u64 live;		/* allocations tracked and not freed: the collector's, made from
				 * `live` at a read (the programs leave it 0) */
};

/* Slab caches seen, by kmem_cache address: their id (stack_key.aux's low bits) and name. */
struct kmem_cache_info {
	__u32 id;
	__u32 pad;
	char name[KMEM_CACHE_NAME_LEN];
};

/* kmem_live.flags: which live counts the allocation added to (a traced process's, not -a's),
 * which its free lowers while its process's series is open */
#define KMEM_LIVE_ROW		1	/* its count row's, in generation kmem_live.gen */
#define KMEM_LIVE_TOTALS	2	/* its process's totals' */

/* One allocation not freed yet, by pointer (a page allocation: its struct page): what its free
 * needs, found with the one lookup that matches it. */
struct kmem_live {
	struct stack_key key;	/* where its counts are */
	__u64 cache;		/* its kmem_cache_key.cache, 0: none (pages, percpu) */
	__u64 bytes;		/* bytes allocated */
	__u64 ts;		/* bpf_ktime_get_ns() at the allocation */
	__u32 gen;		/* the generation its count row is in (bpf/lib/take.bpf.h) */
	__u32 flags;		/* KMEM_LIVE_* */
};

/* Why something was not fully counted. Per CPU, always reported. */
enum kmem_drop {
	KMEM_DROP_COUNTS_FULL,	/* (process, kind, stacks) table full: not counted per stack */
	KMEM_DROP_STACKS_FULL,	/* stack table full: counted without that stack */
	KMEM_DROP_LIVE_FULL,	/* live table full: the allocation is not tracked to its free */
	KMEM_DROP_CACHES_FULL,	/* (process, cache) or cache-name table full */
	KMEM_DROP_PROCS_FULL,	/* per-process totals table full */
	KMEM_DROP_FREE_UNSEEN,	/* a pointer allocated again while tracked: its free had no event */
	KMEM_DROP_TABLE_BUSY,	/* a table's bucket was locked by the program this interrupt's
				 * event interrupted on its CPU (the kernel's -EBUSY): that
				 * allocation or free is not counted or not tracked */
	KMEM_DROP__COUNT,
	/* in the same per-CPU array, after the drops: the keys made in the (process, kind,
	 * stacks) and (process, cache) tables, which the collector spills as they fill, the
	 * times a process met a totals entry of another process with its PID, and the keys made
	 * in the totals table (spilled too: the processes gone) */
	KMEM_STAT_COUNT_KEYS = KMEM_DROP__COUNT,
	KMEM_STAT_CACHE_KEYS,
	KMEM_STAT_PIDS_REUSED,
	KMEM_STAT_PROC_KEYS,
	KMEM_STAT__COUNT,
};

/*
 * The free tracepoints, whose programs have a twin (kmem_*_nested) for the events that
 * interrupt them: the kernel skips a program that runs into itself on a CPU (a recursion miss),
 * so an interrupt's free (an RCU callback's, at a tick's end) met while the task's kfree program
 * ran was lost, and its allocation stayed outstanding. The twin takes exactly those: the program
 * marks itself running on its CPU (`busy`); the twin, attached to the same tracepoint, takes an
 * event only while the mark is up and counts it (`nested`). A program's recursion misses less
 * its twin's takes are the events lost. Index of both per-CPU arrays.
 */
enum kmem_tp {
	KMEM_TP_KFREE,
	KMEM_TP_CACHE_FREE,
	KMEM_TP_PAGE_FREE,
	KMEM_TP_PAGE_FREE_BATCHED,
	KMEM_TP_PERCPU_FREE,
	KMEM_TP__COUNT,
};

/* Per-CPU scratch for the two captures of one event (too large for the BPF stack). */
struct kmem_scratch {
	struct stack_trace user;
	struct stack_trace kern;
	struct kmem_count zero;
};

#endif
