/* ebprof offcpu: types and constants shared by the kernel side (bpf/offcpu.bpf.c) and the
 * collector (modes/offcpu/collect.c), nothing else. */
#ifndef EBPROF_ABI_OFFCPU_H
#define EBPROF_ABI_OFFCPU_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"
#include "abi/unwind.h"

#define OFFCPU_COMM_LEN	16	/* TASK_COMM_LEN */

/* --state: which switch-outs start a blocked interval */
#define OFFCPU_STATE_S		1	/* sleeping (TASK_INTERRUPTIBLE) */
#define OFFCPU_STATE_D		2	/* uninterruptible (TASK_UNINTERRUPTIBLE) */
#define OFFCPU_STATE_R		4	/* preempted: still runnable */
#define OFFCPU_STATE_OTHER	8	/* stopped, traced (ptrace), parked... */
#define OFFCPU_STATE_ALL	15

/* Off-CPU time aggregates in the kernel per (process, thread as stack.aux and its name's
 * generation as stack.gen with --per-thread else 0, user and kernel stack at the switch-out)
 * and, with --wakers, the waker's (process, with --per-thread its thread and that thread's
 * name generation, user and kernel stack at sched_waking); waker fields are 0 otherwise, and
 * when the thread was not woken by anyone seen (a preemption, a wakeup before tracing
 * started). */
struct offcpu_key {
	struct stack_key stack;
	__u32 wtgid;		/* the waker's process (0: none, or the idle task) */
	__u32 wflags;		/* STACK_KEY_* of the waker's user stack */
	__u64 wustack;		/* the waker's user stack hash, 0: none */
	__u64 wkstack;		/* the waker's kernel stack hash, 0: none */
	__u32 wtid;		/* --per-thread: the waker's thread (0: without) */
	__u32 wgen;		/* and its name's generation (struct stack_key's gen) */
};

/* A counter's value, and a process's totals (the `procs` map, tgid -> struct offcpu_val: every
 * wait counted, added before and whatever the counts table keeps, so that its row is exact). */
struct offcpu_val {
	__u64 ns;		/* off-CPU time: switch-out to switch-in */
	__u64 switches;		/* blocked intervals */
	__u64 runnable_ns;	/* of ns, the time runnable, waiting for a CPU: from the wakeup
				 * (or the switch-out of a preempted thread: all of it) to the
				 * switch-in */
};

/* A thread off-CPU now (by tid): from its switch-out until its switch-in. */
struct offcpu_thread {
	__u64 off_ns;		/* switch-out time (0: not a counted switch-out, e.g. --state) */
	__u64 ready_ns;		/* made runnable: woken or preempted (0: not yet) */
	__u64 run_ns;		/* its CPU time at the switch-out (se.sum_exec_runtime) */
	__u64 task_start;	/* the thread's task->start_time: with the tid, which thread it is
				 * (a later thread given the tid is another: not its entry) */
	__u32 held;		/* 1: a ptrace stop of ebprof's own (not the thread's wait) */
	__u32 pending;		/* 1: made by its waker before its switch-out was seen, which
				 * fills it in (bpf/offcpu.bpf.c) */
	struct offcpu_key key;
};

/* Run-queue latency per process: time from runnable (woken, new, or preempted) to running,
 * a log2 histogram (slot 0: 0 ns, slot b: [2^(b-1), 2^b) ns, the last open-ended). */
#define OFFCPU_RQ_SLOTS	48
struct offcpu_rq {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 slots[OFFCPU_RQ_SLOTS];
};

/* What the kernel remembers of each process seen (by tgid), so that one that exited before
 * the end keeps its name. */
struct offcpu_comm {
	char comm[OFFCPU_COMM_LEN];
	__u64 start;		/* the process's start (its leader's task->start_time): another
				 * one met under its tgid is the PID used again
				 * (OFFCPU_STAT_PIDS_REUSED, bpf/lib/pidreuse.bpf.h) */
};

/* The one record of the ring buffer: a process seen for the first time (-a), or with --wakers
 * a process outside the traced ones seen waking one of theirs, so that userspace snapshots its
 * mappings while it runs (its frames were bare addresses when it had exited by the end). */
struct offcpu_note {
	__u32 tgid;
	__u32 exec;	/* 1: it exec'd (offcpu_exec), read again (core/procs.c) */
	__u32 parent;	/* the parent's tgid if the process has not exec'd since it forked
			 * and its parent still runs the image it forked from with as much
			 * executable memory (0: not so): its code is mapped as the parent's,
			 * which userspace reads if the process is gone before the note is read
			 * (core/procs.c, struct proc_note) */
	__u32 pad;
	/* with parent: the parent as the kernel saw it then, which the mappings userspace
	 * reads later must be of (the same process in the same exec, as much code mapped) */
	struct unwind_ident parent_ident;	/* its start, stack start, end of code */
	__u64 parent_exec_pages;		/* its mm->exec_vm: pages mapped executable */
};

/* Per-CPU counters: intervals counted, filtered, then drops by reason. */
enum offcpu_stat {
	OFFCPU_STAT_SWITCHES,	/* blocked intervals counted (in the process totals or in
				 * OFFCPU_STAT_PROCS_FULL) */
	OFFCPU_STAT_FILTERED,	/* shorter than --min-block or longer than --max-block */
	OFFCPU_STAT_HELD,	/* ptrace stops by ebprof itself (a traced tree's forks, execs,
				 * exits, signals): not the program's waits, not counted */
	OFFCPU_STAT_HELD_NS,	/* and their time (ns) */
	OFFCPU_STAT_KEYS,	/* keys made in the counts table (the collector spills it) */
	OFFCPU_STAT_RQ_KEYS,	/* processes added to the run-queue table (spilled with it) */
	OFFCPU_STAT_PROC_KEYS,	/* processes added to the procs table (spilled with it) */
	OFFCPU_STAT_BEGUN,	/* threads already off-CPU when tracing began (-p, -a): their
				 * waits count from the start (offcpu_begun) */
	OFFCPU_STAT_PIDS_REUSED,	/* -a: a process met the entry (comms) of another one
					 * with its PID: their rows are one (the newest's name) */
	OFFCPU_STAT_THREADS_FULL,	/* the table of threads off-CPU was full: not measured */
	OFFCPU_STAT_STACKS_FULL,	/* a stack not interned: the interval counts without it */
	OFFCPU_STAT_COUNTS_FULL,	/* the counts table was full: the interval is in no
					 * stack (its process's totals have it) */
	OFFCPU_STAT_PROCS_FULL,	/* the procs table was full: the interval is in no process's
				 * totals (its stack has it) */
	OFFCPU_STAT_RQ_FULL,	/* the per-process run-queue table was full */
	OFFCPU_STAT_NOTES_FULL,	/* a new process (-a) or waker (--wakers) not announced */
	OFFCPU_STAT_SWITCH_IN_UNSEEN,	/* the kernel reported no switch-in: the wait's end was
					 * taken from the thread's CPU time at its next switch-out */
	OFFCPU_STAT_EXIT_UNSEEN,	/* an earlier thread's entry under a tid a later thread
					 * has (the kernel reported neither its last switch-in nor
					 * its exit): dropped, not counted */
	OFFCPU_STAT_TNAMES_FULL,	/* --per-thread: a thread's name not kept (thread_names
					 * full): named at the report as it is then */
	OFFCPU_STAT_WAKER_UNSEEN,	/* --wakers: a waker not kept: it came while its wakee,
					 * still on its CPU, was between a delayed dequeue and its
					 * switch-out (the wait counts with no waker) */
	OFFCPU_STAT__COUNT,
};

/* Per-CPU scratch of each program (they never nest in themselves on one CPU). */
enum offcpu_hook {
	OFFCPU_HOOK_SWITCH,
	OFFCPU_HOOK_WAKING,
	OFFCPU_HOOK_BEGUN,
	OFFCPU_HOOK__COUNT,
};

struct offcpu_scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

#endif
