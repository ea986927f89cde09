/* SPDX-License-Identifier: GPL-2.0 */
/* A PID the kernel gives another process during the run (-a: pid_max is 32768 by default and a
 * busy machine goes round it in minutes), shared by the modes whose per-process entries are
 * keyed by tgid (kmem's totals; cpu's, offcpu's, lock's, io's and stacks' names). Each such
 * entry keeps its process's start (the leader's task->start_time, which an exec keeps): an
 * event of a process with another start is the PID used again. The entry is then the newest's
 * (renamed, the process announced again: pid_reuse_check; the caller counts the time in its
 * own stats), and the PID is kept in `reused` with how many times, for the note on its row and
 * the run's (or the window's) note (core/collector.h: collector__note_reused). The processes
 * are not kept apart: that would need the start in every key and a report keyed by more than
 * the PID. Include after vmlinux.h and libbpf's headers.
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

/* A name entry (comm, with its process's start at *start) of tgid met by task t (-a): when t is
 * another process than the entry's (pid_reused), the entry takes t's name and t is announced
 * again through the mode's `notes` ring buffer (a note of two words, tgid and 1: the collector
 * reads its mappings, name and command line anew, core/procs.c). 0: the same process; 1: the
 * PID used again, announced; -1: used again, the note lost (the ring buffer full). The caller
 * counts the last two in its stats (pids reused, and notes lost for -1). */
static __always_inline int pid_reuse_check(void *notes, char (*comm)[16], __u64 *start,
					   struct task_struct *t, __u32 tgid)
{
	__u32 note[2] = { tgid, 1 };

	if (!pid_reused(start, tgid, proc_start(t)))
		return 0;
	BPF_CORE_READ_STR_INTO(comm, t, group_leader, comm);
	return bpf_ringbuf_output(notes, note, sizeof(note), 0) ? -1 : 1;
}

/* The name entry of the modes that name a process by its leader's comm and tell kernel threads
 * (lock's struct lock_comm, io's struct io_comm: this layout, asserted there). */
struct pidreuse_kname {
	char comm[16];
	__u32 kthread;
	__u32 pad;
	__u64 start;
};

/* Such an entry (in the mode's map comms, by tgid) for task, once: named and, if announce (-a),
 * announced through `notes` (its tgid). With all (-a), an entry of another process is the PID
 * given again: renamed, announced again (pid_reuse_check). PIDREUSE_* for the caller's stats. */
enum {
	PIDREUSE_NEW_UNSAID = -2,	/* a new entry whose note was lost */
	PIDREUSE_REUSED_UNSAID = -1,	/* the PID given again; the note lost */
	PIDREUSE_NONE = 0,
	PIDREUSE_REUSED = 1,		/* the PID given again, announced */
};

static __always_inline int pid_kname_note(void *comms, void *notes, struct task_struct *task,
					  __u32 tgid, bool kthread, bool all)
{
	struct pidreuse_kname c = { .kthread = kthread }, *e;
	int r;

	e = bpf_map_lookup_elem(comms, &tgid);
	if (e) {
		r = all ? pid_reuse_check(notes, &e->comm, &e->start, task, tgid) : 0;
		if (r)
			e->kthread = c.kthread;
		return r;
	}
	BPF_CORE_READ_STR_INTO(&c.comm, task, group_leader, comm);
	c.start = proc_start(task);
	if (!bpf_map_update_elem(comms, &tgid, &c, BPF_NOEXIST) && all &&
	    bpf_ringbuf_output(notes, &tgid, sizeof(tgid), 0))
		return PIDREUSE_NEW_UNSAID;
	return PIDREUSE_NONE;
}

#endif
