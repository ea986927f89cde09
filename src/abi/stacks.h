/* Types and constants shared by stacks.bpf.c and the stacks collector (src/modes/stacks/).
 * __u32/__u64 only, no logic. */
#ifndef EBPROF_ABI_STACKS_H
#define EBPROF_ABI_STACKS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

/* Events of one run (-e). Each attachment carries its event's index as its BPF cookie, so one
 * program per kind of probe serves them all; the limit only sizes the per-event counters. */
#define STACKS_MAX_EVENTS	64
/* An attachment's BPF cookie: the event's index in its low 32 bits; for a uprobe attached in one
 * process, the generation of that attach above them. The collector gives each attach of a process
 * (its fork, each exec) a new generation and puts it in `targets`; a hit of a uprobe of an older
 * one is not counted. Generation 0 (tracepoints, -a's uprobes) is not checked. */
#define STACKS_COOKIE(ev, gen)		(((__u64)(gen) << 32) | (__u32)(ev))
#define STACKS_COOKIE_EVENT(c)		((__u32)(c))
#define STACKS_COOKIE_GEN(c)		((__u32)((c) >> 32))

/* x86_64 syscall numbers (sys_enter/sys_exit filtering): below this */
#define STACKS_MAX_SYSCALLS	1024
#define STACKS_COMM_LEN		16

/* Why an event was not fully counted. Per CPU, always reported. */
enum stacks_drop {
	STACKS_DROP_COUNTS_FULL,	/* (process, event, stacks) table full: not counted per stack */
	STACKS_DROP_STACKS_FULL,	/* stack table full: counted without that stack */
	STACKS_DROP_NOTES_FULL,		/* -a: a new process not announced (ring buffer full) */
	STACKS_DROP__COUNT,
};

/* -a: a process seen for the first time (exec 0), or one seen before that exec'd (exec 1),
 * announced through the `notes` ring buffer, whose note wakes the collector: it reads the
 * process's mappings and name at once (core/procs.c, proc_table__notes) */
struct stacks_note {
	__u32 tgid;
	__u32 exec;
};

/* The name of each process at its first counted event (renewed at each exec), by tgid. */
struct stacks_comm {
	char comm[STACKS_COMM_LEN];
	__u64 start;		/* the process's start (its leader's task->start_time): with -a,
				 * another one met under its tgid is the PID used again
				 * (bpf/lib/pidreuse.bpf.h; counted in `pids_reused`) */
};

/* The in-kernel aggregate, how often one process hit one event with one pair of stacks, is
 * keyed by struct stack_key (abi/stack.h), `aux` the event's index into the run's -e list. */

/* Per-CPU scratch for the two captures of one event (too large for the BPF stack). */
struct stacks_scratch {
	struct stack_trace user;
	struct stack_trace kern;
};

/* sys_enter/sys_exit filtering: index (exit ? STACKS_MAX_SYSCALLS : 0) + syscall number;
 * value: event index + 1, 0: not traced. */
#define STACKS_SC_SLOTS		(2 * STACKS_MAX_SYSCALLS)

#endif
