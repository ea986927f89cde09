/* ebprof io: types and constants shared by the kernel side (bpf/io.bpf.c) and the collector
 * (modes/io/collect.c), nothing else. */
#ifndef EBPROF_ABI_IO_H
#define EBPROF_ABI_IO_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

#define IO_COMM_LEN	16	/* TASK_COMM_LEN */
#define IO_DISK_LEN	32	/* DISK_NAME_LEN */
#define IO_MAX_DEVS	16	/* --device filters */
/* requests waiting for a flush looked at for a traced one, whose flush it is (more are rare:
 * one flush serves the requests that came while the one before it ran) */
#define IO_FLUSH_WAITERS	32

/* A request's operation, from the kernel's REQ_OP_* (read through BTF), and its flags. */
enum io_op {
	IO_OP_READ,
	IO_OP_WRITE,
	IO_OP_FLUSH,
	IO_OP_DISCARD,
	IO_OP_WRITE_ZEROES,
	IO_OP_SECURE_ERASE,
	IO_OP_OTHER,		/* zone management, driver-private */
	IO_OP__COUNT,
};

#define IO_F_SYNC	(1u << 0)
#define IO_F_META	(1u << 1)
#define IO_F_FUA	(1u << 2)
#define IO_F_PREFLUSH	(1u << 3)
#define IO_F_RAHEAD	(1u << 4)

/* stack_key.aux of a request: its operation, and its flags above it */
#define IO_AUX(op, flags)	((op) | ((flags) << 8))
#define IO_AUX_OP(aux)		((aux) & 0xff)
#define IO_AUX_FLAGS(aux)	((aux) >> 8)

/* The disk a request went to: the kernel's dev_t of the whole disk (MKDEV(major,
 * first_minor): major << 20 | minor), read from rq->q->disk. */
#define IO_DEV(major, minor)	(((__u32)(major) << 20) | (__u32)(minor))
#define IO_DEV_MAJOR(dev)	((dev) >> 20)
#define IO_DEV_MINOR(dev)	((dev) & 0xfffff)

/* Requests aggregate in the kernel per (process, operation and flags as stack.aux, user stack,
 * kernel stack; disk): the process that started the request, in whose context it was
 * created, with its stacks there. */
struct io_key {
	struct stack_key stack;
	__u32 dev;
	__u32 pad;
};

struct io_val {
	__u64 requests;
	__u64 bytes;
	__u64 latency_ns;	/* start -> completion */
	__u64 queue_ns;		/* start -> issue to the driver */
};

/* What one process (by tgid) started, every request counted whatever the per-stack table could
 * keep: its row in the report. */
struct io_proc {
	__u64 requests;
	__u64 bytes;		/* of the operations that move data */
	__u64 discard_bytes;	/* discard, secure erase, write zeroes: a range, no data */
	__u64 latency_ns;	/* sums */
	__u64 queue_ns;
};

/* Histograms of one (disk, operation). Latencies: slot 0 counts 0 ns; a value v > 0 with
 * b = floor(log2 v) < IO_LAT_POW counts in slot 1 + b * IO_LAT_SUB + j, j the IO_LAT_SUB_BITS
 * bits after v's leading one (profile/profile.h's struct prof_hist); larger values in the
 * last slot. Sizes: the same with one slot per power of two. */
#define IO_LAT_SUB_BITS	3
#define IO_LAT_SUB	(1u << IO_LAT_SUB_BITS)
#define IO_LAT_POW	47	/* 2^47 ns: 39 hours */
#define IO_LAT_SLOTS	(1 + IO_LAT_POW * IO_LAT_SUB + 1)
#define IO_SIZE_POW	40
#define IO_SIZE_SLOTS	(1 + IO_SIZE_POW + 1)

struct io_dev_key {
	__u32 dev;
	__u32 op;		/* enum io_op */
};

struct io_dev_val {
	char disk[IO_DISK_LEN];	/* the disk's name (vda, nvme0n1) */
	__u64 requests;
	__u64 bytes;
	__u64 errors;		/* completed with an error status */
	__u64 latency_ns, queue_ns, service_ns;	/* sums */
	__u64 max_latency_ns;
	__u64 latency[IO_LAT_SLOTS];
	__u64 queue[IO_LAT_SLOTS];
	__u64 service[IO_LAT_SLOTS];
	__u64 size[IO_SIZE_SLOTS];
};

/* io_req.done */
enum {
	IO_REQ_OPEN,		/* started, not ended */
	IO_REQ_ENDED,		/* counted by its completion, or its end went unseen */
	IO_REQ_ENDED_LATE,	/* completed after tracing stopped: in flight when it stopped */
};

/* A request between its start and its completion, keyed by its struct request's address. */
struct io_req {
	__u64 start_ns;		/* block_io_start (else its insertion or issue) */
	__u64 issue_ns;		/* its last issue to the driver, 0: not issued */
	__u64 disk;		/* struct gendisk *, for its name */
	__u64 bytes;		/* its size at issue */
	struct io_key key;
	__u32 done;		/* IO_REQ_* */
	__u32 pad;
};

/* What the kernel remembers of each process (by tgid) that started a request: with -a it is
 * known only from here, and may be gone by the end. With -a, its tgid (a __u32) is also sent
 * through the `notes` ring buffer the first time, so that userspace snapshots its mappings
 * while it still exists. */
struct io_comm {
	char comm[IO_COMM_LEN];
	__u32 kthread;		/* a kernel thread (a flusher, a journal thread, a kworker) */
	__u32 pad;
	__u64 start;		/* -a: the process's start (its leader's task->start_time): another
				 * one met under its tgid is the PID used again
				 * (IO_STAT_PIDS_REUSED, bpf/lib/pidreuse.bpf.h) */
};

/* Per-CPU counters (a per-CPU array indexed by these): requests counted, merged, then drops
 * (from IO_STAT_FIRST_DROP). */
enum io_stat {
	IO_STAT_REQUESTS,	/* requests completed and counted */
	IO_STAT_MERGED,		/* requests merged into another, which completes for them */
	IO_STAT_KEYS,		/* keys made in the per-stack table (the collector spills it) */
	IO_STAT_PIDS_REUSED,	/* -a: a process met the entry (comms) of another one with its
				 * PID: their rows are one (the newest's name) */
	IO_STAT_INFLIGHT_FULL,	/* the in-flight table was full: a request not measured */
	IO_STAT_INFLIGHT_BUSY,	/* it was locked by the program this one interrupted: same */
	IO_STAT_STACKS_FULL,	/* a stack not interned: its request counts without it */
	IO_STAT_COUNTS_FULL,	/* the per-stack table was full: not counted per stack */
	IO_STAT_PROCS_FULL,	/* the per-process table was full: in no process's totals */
	IO_STAT_DEVS_FULL,	/* the (disk, operation) table was full: not in the histograms */
	IO_STAT_NOTES_FULL,	/* -a: a new process not announced: it may stay unsymbolized */
	IO_STAT_UNSEEN,		/* a request ended without a completion event: not counted */
	IO_STAT_FLUSH_WAITERS,	/* a flush whose first IO_FLUSH_WAITERS waiting requests were not
				 * traced, more waiting: not counted (it may serve a traced one) */
	IO_STAT__COUNT,
};
#define IO_STAT_FIRST_DROP IO_STAT_INFLIGHT_FULL

/* Hooks that start a request's record, each with its own scratch (they may nest). */
enum io_hook {
	IO_HOOK_START,
	IO_HOOK_INSERT,
	IO_HOOK_ISSUE,
	IO_HOOK__COUNT,
};

struct io_scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

#endif
