/* SPDX-License-Identifier: GPL-2.0 */
/* A PID the kernel gives another process during the run (-a: pid_max is 32768 by default and a
 * busy machine goes round it in minutes), shared by the modes whose per-process entries are
 * keyed by tgid (kmem's totals; cpu's, offcpu's and lock's names). Each such entry keeps its
 * process's start (the leader's task->start_time, which an exec keeps): an event of a process
 * with another start is the PID used again. The entry is then the newest's (the caller renames
 * it, counts the time in its own stats and announces the process again), and the PID is kept
 * in `reused` with how many times, for the note on its row and the run's note
 * (core/collector.h: collector__note_reused). The processes are not kept apart: that would need
 * the start in every key and a report keyed by more than the PID. Include after vmlinux.h and
 * libbpf's headers.
 */
#ifndef EBPROF_BPF_LIB_PIDREUSE_H
#define EBPROF_BPF_LIB_PIDREUSE_H

/* The PIDs a second process was met with: how many times (past its room, only the modes'
 * counts have them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);		/* tgid */
	__type(value, __u32);
} reused SEC(".maps");

/* t's process's start: with its tgid, which process it is. */
static __always_inline __u64 proc_start(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_time);
}

/* An entry of tgid whose process started at *start, met by a process that started at `now`:
 * true when that is another process (the PID used again; one CPU says so when two meet it at
 * once), *start now `now` and the PID noted. False for the same process, PID 0 (the idle
 * tasks, interrupts) and an entry without a start. */
static __always_inline bool pid_reused(__u64 *start, __u32 tgid, __u64 now)
{
	__u64 was = *start;
	__u32 one = 1, *n;

	if (!tgid || !was || was == now || __sync_val_compare_and_swap(start, was, now) != was)
		return false;
	n = bpf_map_lookup_elem(&reused, &tgid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&reused, &tgid, &one, BPF_NOEXIST);
	return true;
}

#endif
