/* ebprof lock: types and constants shared by the kernel side (bpf/lock.bpf.c) and the collector
 * (modes/lock/collect.c), nothing else. */
#ifndef EBPROF_ABI_LOCK_H
#define EBPROF_ABI_LOCK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

#define LOCK_COMM_LEN	16	/* TASK_COMM_LEN */

/* lock:contention_begin's flags (include/trace/events/lock.h): not in BTF, they are #defines */
#define LOCK_LCB_F_SPIN		(1u << 0)
#define LOCK_LCB_F_READ		(1u << 1)
#define LOCK_LCB_F_WRITE	(1u << 2)
#define LOCK_LCB_F_RT		(1u << 3)
#define LOCK_LCB_F_PERCPU	(1u << 4)
#define LOCK_LCB_F_MUTEX	(1u << 5)
#define LOCK_LCB_F_MASK		0x3fu

/* futex(2) (include/uapi/linux/futex.h; the collector checks them against it) */
#define LOCK_NR_FUTEX		202	/* x86_64 */
#define LOCK_NR_FUTEX_WAITV	449
#define LOCK_NR_RESTART_SYSCALL	219	/* a timed wait's continuation after a signal */
/* The same calls made as 32-bit system calls (int $0x80, an ia32 program): the ia32 table's
 * numbers (202 there is getegid32); futex_waitv is 449 in both */
#define LOCK_NR32_FUTEX			240
#define LOCK_NR32_FUTEX_TIME64		422
#define LOCK_NR32_RESTART_SYSCALL	0
#define LOCK_FUTEX_WAIT			0
#define LOCK_FUTEX_LOCK_PI		6
#define LOCK_FUTEX_WAIT_BITSET		9
#define LOCK_FUTEX_WAIT_REQUEUE_PI	11
#define LOCK_FUTEX_LOCK_PI2		13
#define LOCK_FUTEX_PRIVATE_FLAG		128
#define LOCK_FUTEX_CLOCK_REALTIME	256
/* not a futex(2) command: a futex_waitv(2) call (its first futex's address is kept) */
#define LOCK_FUTEX_WAITV		64

/* The kind of a contention, in stack_key.aux and lock_id.aux: a kernel lock's contention_begin
 * flags, or LOCK_AUX_FUTEX with the futex command (LOCK_FUTEX_*). */
#define LOCK_AUX_FUTEX		(1u << 31)
#define LOCK_AUX_IS_FUTEX(aux)	(!!((aux) & LOCK_AUX_FUTEX))
#define LOCK_AUX_FUTEX_CMD(aux)	((aux) & 0xff)

/* What a kernel lock is, when the program could tell at its contention: a lock of the waiting
 * task's own memory map or signal handlers (lock_val.owner is that process). */
enum lock_owner {
	LOCK_OWNER_NONE,
	LOCK_OWNER_MMAP_LOCK,		/* mm->mmap_lock */
	LOCK_OWNER_PAGE_TABLE_LOCK,	/* mm->page_table_lock */
	LOCK_OWNER_SIGLOCK,		/* sighand->siglock */
	LOCK_OWNER_FILE_LOCK,		/* files->file_lock */
	LOCK_OWNER__COUNT,
};

/* Waits aggregate in the kernel per (waiting process, kind as stack.aux, user stack, kernel
 * stack; lock address). */
struct lock_key {
	struct stack_key stack;
	__u64 addr;		/* the kernel lock's address, or the futex's (user) address */
};

/* A futex wait ends woken (a contention: count, delay_ns), or by its timeout with nobody waking
 * it (ETIMEDOUT: a timed wait, not contention, counted apart), or at once (EAGAIN: no wait,
 * lock_val.nowait only). */
struct lock_count {
	__u64 count;		/* contentions: woken, or still waiting at the end */
	__u64 delay_ns;		/* their total wait */
	__u64 timeouts;		/* futex waits that ended by their timeout */
	__u64 timeout_ns;	/* their total wait */
};

/* What one process (by tgid) waited, every wait counted whatever the per-stack table could
 * keep: its row in the report. */
struct lock_proc {
	__u64 kernel_count;	/* kernel lock contentions */
	__u64 kernel_ns;	/* their total wait */
	__u64 futex_count;	/* futex waits (not timed out) */
	__u64 futex_ns;
	__u64 futex_timeouts;	/* futex waits that ended by their timeout */
	__u64 futex_timeout_ns;
};

/* One lock: a kernel lock by address (tgid 0), a futex by (process, address). */
struct lock_id {
	__u64 addr;
	__u32 tgid;		/* futex: its process; kernel lock: 0 */
	__u32 aux;		/* the kind (LOCK_AUX_*): rwsem read and write are two rows */
};

/* Wait histogram: slot 0 counts 0 ns, slot b (1..) [2^(b-1), 2^b) ns, the last open. */
#define LOCK_HIST_SLOTS	48

struct lock_val {
	__u64 count;		/* waits (not timed out): contentions */
	__u64 delay_ns;		/* their total */
	__u64 max_ns;		/* the longest */
	__u64 nowait;		/* futex waits that returned EAGAIN: the value had changed, no wait */
	__u64 timeouts;		/* futex waits their timeout ended (ETIMEDOUT): nobody
				 * woke them; in no other number, the histogram included */
	__u64 timeout_ns;	/* their total wait */
	__u32 owner;		/* enum lock_owner */
	__u32 owner_tgid;	/* whose mm/sighand/files it is */
	__u64 hist[LOCK_HIST_SLOTS];
};

/* A contention in progress: a sleeping lock's per thread, a spinlock's per CPU, a futex wait's
 * per thread. */
#define LOCK_WAIT_ENDED_LATE	2
#define LOCK_WAIT_TIMEDOUT_LATE	3	/* the same, ended by its timeout */

struct lock_wait {
	__u64 lock;		/* 0: none */
	__u64 start_ns;
	__u64 task_start;	/* the waiter's task->start_time: with the tid, which thread it
				 * is (a later thread given the tid is another: the record is
				 * not its) */
	__u64 ustack, kstack;	/* hashes in `stacks` */
	__u64 signal_ns;	/* interrupted: when the signal ended the call (a thread killed
				 * in its wait: the wait's end) */
	__u32 tid;
	__u32 aux;
	__u32 flags;		/* STACK_KEY_* of ustack */
	__u32 interrupted;	/* a futex wait a signal interrupted, to be resumed (lock.bpf.c);
				 * LOCK_WAIT_ENDED_LATE: it ended after tracing stopped, its
				 * record kept for userspace to count up to the stop;
				 * LOCK_WAIT_TIMEDOUT_LATE: the same, ended by its timeout */
};

/* Each process (by tgid) as its first futex wait began or its first contention was counted
 * (struct lock_comm). With -a its tgid also goes through the `notes` ring buffer the first
 * time. */
struct lock_comm {
	char comm[LOCK_COMM_LEN];
	__u32 kthread;
	__u32 pad;
	__u64 start;		/* the process's start (its leader's task->start_time): another
				 * one met under its tgid is the PID used again
				 * (LOCK_STAT_PIDS_REUSED, bpf/lib/pidreuse.bpf.h) */
};

/* Per-CPU counters (a per-CPU array indexed by these): what was counted, then drops. */
enum lock_stat {
	LOCK_STAT_KERNEL,	/* kernel lock contentions counted */
	LOCK_STAT_FUTEX,	/* futex waits counted */
	LOCK_STAT_NOWAIT,	/* futex waits that did not wait (EAGAIN): counted apart */
	LOCK_STAT_TIMEDOUT,	/* futex waits that ended by their timeout: counted apart */
	LOCK_STAT_KEYS,		/* keys made in the per-stack table (the collector spills it) */
	LOCK_STAT_BEGUN,	/* futex waits already going on when tracing began (-p, -a): each
				 * counts from the start (lock_begun) */
	LOCK_STAT_LOCK_KEYS,	/* keys made in the per-lock table (the collector spills it too) */
	LOCK_STAT_EXITED,	/* futex waits a signal ended and that were never resumed, their
				 * thread exiting (killed in the wait, its process exiting):
				 * counted, up to the signal */
	LOCK_STAT_PIDS_REUSED,	/* -a: a process met the entry (comms) of another one with its
				 * PID: their rows are one (the newest's name) */
	LOCK_STAT_NESTED,	/* drops: a spinlock contention inside another on its CPU
				 * (an interrupt's): not measured */
	LOCK_STAT_END_UNSEEN,	/* a contention whose end never came (its slot was taken over) */
	LOCK_STAT_WAITS_FULL,	/* the table of waits in progress was full: not measured */
	LOCK_STAT_STACKS_FULL,	/* a stack not interned: its wait counts without it */
	LOCK_STAT_NO_CALLER,	/* a user stack walked by frame pointers whose leaf's caller
				 * could not be told (lock.bpf.c, direct_caller): it ends after
				 * the leaf, [truncated] */
	LOCK_STAT_COUNTS_FULL,	/* the per-stack table was full: in the locks' numbers only */
	LOCK_STAT_PROCS_FULL,	/* the per-process table was full: in no process's totals */
	LOCK_STAT_LOCKS_FULL,	/* the per-lock table was full (between two spills): in the
				 * stacks' numbers only */
	LOCK_STAT_NOTES_FULL,	/* -a: a new process not announced */
	LOCK_STAT__COUNT,
};

/* Programs that capture stacks, each with its own scratch (one may interrupt another). */
enum lock_hook {
	LOCK_HOOK_KERNEL,
	LOCK_HOOK_FUTEX,
	LOCK_HOOK_BEGUN,
	LOCK_HOOK__COUNT,
};

struct lock_scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

#endif
