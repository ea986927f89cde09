/* ebprof cpu: types and constants shared by the kernel side (bpf/cpu.bpf.c) and the collector
 * (modes/cpu/collect.c), nothing else. */
#ifndef EBPROF_ABI_CPU_H
#define EBPROF_ABI_CPU_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "abi/stack.h"

#define CPU_COMM_LEN	16	/* TASK_COMM_LEN */

/* Samples aggregate in the kernel under struct stack_key (abi/stack.h): one counter per
 * (process, thread as `aux` when --per-thread else 0, user stack, kernel stack, flags
 * STACK_KEY_USER_EXACT when the sample hit user mode). */

/* Per-CPU counters (a per-CPU array indexed by these): samples counted, keys made, then drops
 * by reason (CPU_STAT_STACKS_FULL on). */
enum cpu_stat {
	CPU_STAT_SAMPLES,	/* samples of traced tasks (counted or lost) */
	CPU_STAT_KEYS,		/* keys made in the counts table (the collector spills it) */
	CPU_STAT_PROC_KEYS,	/* keys made in the procs table (spilled with it) */
	CPU_STAT_PIDS_REUSED,	/* -a: a process met the entry (comms) of another one with its
				 * PID: their rows are one (the newest's name) */
	CPU_STAT_STACKS_FULL,	/* a stack not interned: the sample counts without it */
	CPU_STAT_COUNTS_FULL,	/* the counts table was full: the sample is in no stack (its
				 * process's total has it) */
	CPU_STAT_NOTES_FULL,	/* a new process not announced (-a): it may stay unsymbolized */
	CPU_STAT_TNAMES_FULL,	/* --per-thread: a thread's name not kept (the table full) */
	CPU_STAT_PROCS_FULL,	/* the procs table was full: the sample is in no process's total */
	CPU_STAT__COUNT,
};

/* Each process's totals (the `procs` map, by tgid): every sample of it, counted before and
 * whatever the counts table keeps, so that its row and share are exact. */
struct cpu_proc {
	__u64 samples;
};

/* What the kernel remembers of each process and (with --per-thread) thread seen, by tgid or
 * tid, so that one that exited before the end keeps its name. */
struct cpu_comm {
	char comm[CPU_COMM_LEN];
	__u64 start;		/* the process's start (its leader's task->start_time): another
				 * one met under its tgid is the PID used again
				 * (CPU_STAT_PIDS_REUSED, bpf/lib/pidreuse.bpf.h) */
};

/* The `mm_marks` map (tgid -> __u64, traced processes only): userspace adds each process with
 * CPU_MM_NONE when it attaches it; each of its samples then writes its address space's mark,
 * CPU_MM_SEEN | the mm's address / 64 << 32 | the mm's write-lock sequence (every mmap,
 * munmap, mprotect moves it), or CPU_MM_UNKNOWN on a kernel without that sequence. Userspace
 * reads a process's maps file again only when its mark moved (core/procs.c). */
#define CPU_MM_NONE	0ULL		/* no sample since its attach */
#define CPU_MM_UNKNOWN	1ULL		/* PROC_MM_UNKNOWN: read at every look */
#define CPU_MM_SEEN	(1ULL << 63)

/* The one record of the ring buffer (-a only): a process seen for the first time, so that
 * userspace snapshots its mappings before it can exit. */
struct cpu_note {
	__u32 tgid;
	__u32 exec;	/* 1: it exec'd (cpu_exec), read again (core/procs.c) */
};

#endif
