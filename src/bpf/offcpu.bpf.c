// SPDX-License-Identifier: GPL-2.0
/* ebprof offcpu: kernel side. Where threads wait, from the scheduler's BTF tracepoints (tp_btf:
 * no tracefs, the kernel's own task_structs):
 *
 *   sched_switch      prev goes off-CPU (it is the current task: its user stack through
 *                     bpf_task_pt_regs, its kernel stack here), next comes back on: the time
 *                     since next's switch-out is added to the counter of next's stacks
 *   sched_waking      (--wakers) in the waker's context: its stacks, kept for the wakee
 *   sched_wakeup(_new) the wakee is on a run queue: where its run-queue latency starts
 *
 * Per thread off-CPU, one entry in `threads` (preallocated, by tid) from its switch-out to its
 * switch-in; at the switch-in its time goes to its process's totals (`procs`: exact, whatever
 * room the stack tables have), then to the (process, stacks[, waker's stacks]) counter, and its
 * run-queue latency to its process's histogram, and the entry goes. Nothing is sent per switch;
 * userspace reads the tables at the end.
 *
 * A switch-in the kernel does not report: programs see no tracepoint while some tasks run (on
 * the VMs this is developed on, none while a thread of PID 1 is current: sched_switch fires in
 * prev's context, so the switch from such a thread to ours is never seen; docs/PERFORMANCE.md).
 * The thread's entry is then still there at its next switch-out (or its exit), which every
 * switch-out of a traced thread looks for: the wait ended when the thread last went on CPU,
 * which is now minus the CPU time it was charged since its switch-out (se.sum_exec_runtime,
 * brought up to date by the scheduler before sched_switch), and is counted so, with a drop
 * (OFFCPU_STAT_SWITCH_IN_UNSEEN).
 *
 * A thread already asleep when tracing starts (-p, -a) has no switch-out to be seen: the
 * iterator offcpu_begun, run once counting has started, gives each such thread an entry as if
 * it had switched out at the run's start (its kernel stack where it sleeps; its user stack cannot be
 * read from another task, STACK_KEY_USER_UNSEEN), so that its wait counts from the start to
 * its switch-in, or to the stop; before, a process blocked for the whole run had an empty
 * profile.
 *
 * An entry is its thread's, not its tid's: it holds the thread's start time (task->start_time).
 * A thread's last switch-out (TASK_DEAD) ends its entry and makes none; one whose last events
 * the kernel did not report (see above) leaves it, and the next thread given its tid (of any
 * process) must not end it as its own wait: found by a later thread, it is dropped
 * (OFFCPU_STAT_EXIT_UNSEEN, the lock mode's same_thread).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/offcpu.h"
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/tname.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD	0x00200000
#define TASK_INTERRUPTIBLE	0x1
#define TASK_UNINTERRUPTIBLE	0x2
#define __TASK_TRACED	0x8
#define TASK_DEAD	0x80

/* -a: every user thread (ebprof's own excepted), instead of the processes in `targets` */
const volatile bool trace_all = false;
/* kernel threads too: -a --kernel-threads, or within cpu --offcpu (as cpu samples them) */
const volatile bool with_kthreads = false;
const volatile bool per_thread = false;
const volatile bool wakers = false;
/* OFFCPU_STATE_* of the switch-outs counted */
const volatile __u32 states = OFFCPU_STATE_ALL;
/* Tests only (tests/bpf/test_offcpu_bpf.c): ignore every Nth switch-in of a traced thread, as
 * the kernel does those it does not report (0: none; the verifier drops the code then). */
const volatile __u32 test_hide_switch_in = 0;
__u32 test_switch_ins;
/* Tests only: a traced thread's switch-out takes this much longer after its stacks (ns, 0:
 * not; the verifier drops the code then), as on a loaded machine, where a wakeup from another
 * CPU lands in it more often. */
const volatile __u64 test_switch_delay_ns = 0;

static long test_delay_step(__u64 i, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

static __always_inline void test_delay(void)
{
	__u64 until;

	if (!test_switch_delay_ns)
		return;
	until = bpf_ktime_get_ns() + test_switch_delay_ns;
	bpf_loop(1 << 20, test_delay_step, &until, 0);
}

/* --min-block, --max-block (0: no limit) */
const volatile __u64 min_ns = 0;
const volatile __u64 max_ns = 0;
const volatile __u32 self_tgid = 0;

/* Set by the collector through the mmapped .bss: counting has started; has stopped (every
 * program returns at once: detaching is slow). */
bool started;
bool stopped;
/* Set by the collector before it runs offcpu_begun: the run's start, which a wait found going on
 * then counts from (the run began before the attach: a thread asleep all along is the run). */
__u64 begun_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 15);	/* --max-threads */
	__type(key, __u32);		/* tid */
	__type(value, struct offcpu_thread);
} threads SEC(".maps");

/* --max-stacks; this and runq are taken out at each spill or window, twice over
 * (bpf/lib/take.bpf.h) */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct offcpu_key, struct offcpu_val, 1 << 14);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);	/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* tgid -> its run-queue waits; sized by the collector */
TAKE_TABLE(runq, BPF_MAP_TYPE_HASH, __u32, struct offcpu_rq, 4096);

/* Each process's totals (tgid -> every wait of it: its row), exact whatever the counts and
 * stacks tables kept; sized by the collector, taken out with the counts. */
TAKE_TABLE(procs, BPF_MAP_TYPE_HASH, __u32, struct offcpu_val, 1 << 15);

/* Names of the processes seen (by tgid); threads' (--per-thread) are in thread_names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);
	__type(key, __u32);
	__type(value, struct offcpu_comm);
} comms SEC(".maps");

/* -a: processes seen for the first time; --wakers: wakers outside the traced processes
 * (struct offcpu_note) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_HOOK__COUNT);
	__type(key, __u32);
	__type(value, struct offcpu_scratch);
} scratch SEC(".maps");

static const struct offcpu_val zero_val;
static const struct offcpu_rq zero_rq;

static __always_inline void add_stat(__u32 which, __u64 v)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);

	if (n)
		*n += v;	/* per-CPU, and the programs never nest in themselves */
}

static __always_inline void count_stat(__u32 which)
{
	add_stat(which, 1);
}

/* A switch-out into a ptrace stop whose tracer is ebprof (bpf/lib/stack.bpf.h; and mem, in a
 * profile run, at its leak scan): that time is ebprof's, not the program's, counted apart. */
static __always_inline bool held_by_us(struct task_struct *t, unsigned int prev_state)
{
	return held_by_tracer(t, prev_state, self_tgid);
}

static __always_inline bool traced(struct task_struct *t)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	/* kernel threads: with -a --kernel-threads, or (cpu --offcpu) one named with -p */
	if (BPF_CORE_READ(t, flags) & PF_KTHREAD)
		return with_kthreads && (trace_all || bpf_map_lookup_elem(&targets, &tgid));
	if (trace_all)
		return tgid != self_tgid;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Which of OFFCPU_STATE_* a switch-out is. */
static __always_inline __u32 state_of(bool preempt, unsigned int prev_state)
{
	if (preempt || !(prev_state & 0xff))
		return OFFCPU_STATE_R;
	if (prev_state & TASK_INTERRUPTIBLE)
		return OFFCPU_STATE_S;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		return OFFCPU_STATE_D;
	return OFFCPU_STATE_OTHER;
}

__noinline __u64 intern_stack(struct stack_trace *s, __u64 nr)
{
	if (!s)
		return 0;
	return stack_intern(&stacks, s, nr, 0);
}

/* The current task's stacks into k (ustack, kstack, flags). */
static __always_inline void capture(void *ctx, struct offcpu_scratch *sc, __u64 *ustack,
				    __u64 *kstack, __u32 *flags, bool user)
{
	struct pt_regs *regs;
	bool exact;
	__u64 n;

	n = capture_kernel_stack(ctx, &sc->kern);
	if (n) {
		*kstack = intern_stack(&sc->kern, n);
		if (!*kstack)
			count_stat(OFFCPU_STAT_STACKS_FULL);
	}
	if (!user)
		return;
	regs = user_regs(NULL, &exact);
	n = capture_user_stack(regs, &sc->user);
	if (n) {
		*ustack = intern_stack(&sc->user, n);
		if (!*ustack)
			count_stat(OFFCPU_STAT_STACKS_FULL);
		if (exact)
			*flags = STACK_KEY_USER_EXACT;
	}
}

/* At a key's first interval: the names (the thread's, of its name's generation gen, with
 * --per-thread), and a process never seen before announced if `announce` (-a, or a waker
 * outside the traced processes: the note wakes the collector, which reads its mappings
 * before it can exit; read at the report, a waker gone by then was bare addresses). */
/* The tgid of t's parent if t's process runs the code its parent ran at the fork: it has not
 * exec'd since (the kernel bumps self_exec_id at each exec, parent_exec_id is the parent's at
 * the fork), the parent still runs that image (the same exe file: a new exec opens it anew, a
 * reaper that adopted it has its own), and the two have as many pages mapped executable (a
 * library one of them opened since the fork, the other not, would be named from the wrong
 * file). 0 otherwise. The parent's identity then goes into the note: userspace names t's frames
 * by the parent's mappings only if the parent is still the same process in the same exec, with
 * as much code mapped, when it reads them (core/procs.c). */
static __always_inline __u32 forked_from(struct task_struct *t, struct offcpu_note *note)
{
	struct task_struct *leader = BPF_CORE_READ(t, group_leader);
	struct task_struct *parent = BPF_CORE_READ(leader, real_parent);
	struct file *exe = BPF_CORE_READ(leader, mm, exe_file);
	__u64 pages = BPF_CORE_READ(leader, mm, exec_vm);
	/* every field of the parent's from one address space: an exec of the parent's under way
	 * replaces its mm, and its fields must not be partly the new program's */
	struct mm_struct *pmm = parent ? BPF_CORE_READ(parent, mm) : NULL;

	if (!pmm || !exe ||
	    BPF_CORE_READ(leader, self_exec_id) != BPF_CORE_READ(leader, parent_exec_id) ||
	    BPF_CORE_READ(pmm, exe_file) != exe || BPF_CORE_READ(pmm, exec_vm) != pages)
		return 0;
	/* as the collector reads it from /proc/PID/stat (abi/unwind.h) */
	note->parent_ident.start_time = BPF_CORE_READ(parent, group_leader, start_boottime) /
					(1000000000ULL / UNWIND_USER_HZ);
	note->parent_ident.start_stack = BPF_CORE_READ(pmm, start_stack);
	note->parent_ident.end_code = BPF_CORE_READ(pmm, end_code);
	note->parent_exec_pages = pages;
	return BPF_CORE_READ(parent, tgid);
}

static __always_inline void first_count(struct task_struct *t, __u32 tgid, __u32 tid, __u32 gen,
					bool announce)
{
	struct offcpu_comm c = {}, *e;
	struct offcpu_note note = { .tgid = tgid };

	if (per_thread && !thread_name_keep(t, tid, gen))
		count_stat(OFFCPU_STAT_TNAMES_FULL);
	BPF_CORE_READ_STR_INTO(&c.comm, t, group_leader, comm);
	c.start = proc_start(t);
	e = bpf_map_lookup_elem(&comms, &tgid);
	if (e) {
		/* renamed if it is the entry's process (with -a, check_reuse made it the
		 * entry's when it counts, and a waker's when it wakes) */
		if (!trace_all || e->start == c.start)
			bpf_map_update_elem(&comms, &tgid, &c, BPF_EXIST);
		return;
	}
	if (bpf_map_update_elem(&comms, &tgid, &c, BPF_NOEXIST) || !announce || !tgid)
		return;
	note.parent = forked_from(t, &note);
	if (bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
		count_stat(OFFCPU_STAT_NOTES_FULL);
}

/* -a: t, about to count, is not the process its PID's entry (comms) was made by: the kernel gave
 * the PID again (bpf/lib/pidreuse.bpf.h). Their rows (counts and run-queue latencies, keyed by
 * tgid) are one, under the newest's name: its entry is renamed and the process announced again
 * (its mappings and command line read). */
static __always_inline void check_reuse(struct task_struct *t, __u32 tgid)
{
	struct offcpu_comm *c = bpf_map_lookup_elem(&comms, &tgid);
	int r = c ? pid_reuse_check(&notes, &c->comm, &c->start, t, tgid) : 0;

	if (r)
		count_stat(OFFCPU_STAT_PIDS_REUSED);
	if (r < 0)
		count_stat(OFFCPU_STAT_NOTES_FULL);
}

/* Whether th is the entry of task t, not of an earlier thread that had its tid: if not, it is
 * dropped (its thread's exit went unreported). */
static __always_inline bool own_entry(struct task_struct *t, __u32 tid, struct offcpu_thread *th)
{
	if (th->task_start == BPF_CORE_READ(t, start_time))
		return true;
	count_stat(OFFCPU_STAT_EXIT_UNSEEN);
	bpf_map_delete_elem(&threads, &tid);
	return false;
}

/* A wait of a thread (th, its entry) ended at `in`: its interval and its run-queue latency. */
static __always_inline void end_wait(struct task_struct *t, __u32 tid, struct offcpu_thread *th,
				     __u64 in)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);
	__u32 g = take_gen_now();
	void *runq = take_table(runq, g), *counts = take_table(counts, g);
	struct offcpu_val *v, *pv;
	struct offcpu_rq *rq;
	__u64 d, runnable = 0;
	bool made;

	if (trace_all && tgid)
		check_reuse(t, tgid);
	if (th->ready_ns && in > th->ready_ns) {
		d = in - th->ready_ns;
		runnable = d;
		rq = bpf_map_lookup_elem(runq, &tgid);
		if (!rq) {
			/* named (and, with -a, announced) as at a first count: a new task's first
			 * run-queue wait has no off-CPU interval before it, and a process that had
			 * nothing else was '?' in the run-queue table (1,489 of 1,918 rows of -a) */
			first_count(t, tgid, tid, th->key.stack.gen, trace_all);
			/* counted: the collector takes the table out three quarters full, as the
			 * count table (alone, it filled first with -a and refused waits) */
			if (!bpf_map_update_elem(runq, &tgid, &zero_rq, BPF_NOEXIST))
				count_stat(OFFCPU_STAT_RQ_KEYS);
			rq = bpf_map_lookup_elem(runq, &tgid);	/* (or another CPU's) */
		}
		if (rq) {
			__sync_fetch_and_add(&rq->count, 1);
			__sync_fetch_and_add(&rq->total_ns, d);
			if (d > rq->max_ns)
				rq->max_ns = d;
			__sync_fetch_and_add(&rq->slots[log2_bucket_n(d, OFFCPU_RQ_SLOTS)], 1);
		} else {
			count_stat(OFFCPU_STAT_RQ_FULL);
		}
	}
	if (th->off_ns && in > th->off_ns && th->held) {
		count_stat(OFFCPU_STAT_HELD);
		add_stat(OFFCPU_STAT_HELD_NS, in - th->off_ns);
	} else if (th->off_ns && in > th->off_ns) {
		d = in - th->off_ns;
		if (d < min_ns || (max_ns && d > max_ns)) {
			count_stat(OFFCPU_STAT_FILTERED);
		} else {
			/* (a wakeup seen before the switch-out's entry: at most all) */
			if (runnable > d)
				runnable = d;
			count_stat(OFFCPU_STAT_SWITCHES);
			/* the process's totals first, whatever the counts table keeps */
			pv = lookup_or_make(take_table(procs, g), &tgid, &zero_val, &made);
			if (made)
				count_stat(OFFCPU_STAT_PROC_KEYS);
			if (pv) {
				__sync_fetch_and_add(&pv->ns, d);
				__sync_fetch_and_add(&pv->switches, 1);
				/* (0 too: a branch here was ~1,260 more instructions to verify) */
				__sync_fetch_and_add(&pv->runnable_ns, runnable);
			} else {
				count_stat(OFFCPU_STAT_PROCS_FULL);
			}
			v = bpf_map_lookup_elem(counts, &th->key);
			if (!v) {
				/* (also when the table refuses it: its process is named) */
				first_count(t, tgid, tid, th->key.stack.gen, trace_all);
				if (!bpf_map_update_elem(counts, &th->key, &zero_val, BPF_NOEXIST))
					count_stat(OFFCPU_STAT_KEYS);
				/* else full, or another CPU made it meanwhile */
				v = bpf_map_lookup_elem(counts, &th->key);
			}
			if (v) {
				__sync_fetch_and_add(&v->ns, d);
				__sync_fetch_and_add(&v->switches, 1);
				if (runnable)
					__sync_fetch_and_add(&v->runnable_ns, runnable);
			} else {
				count_stat(OFFCPU_STAT_COUNTS_FULL);
			}
		}
	}
	/* counted: never again, even if the entry cannot go now */
	if (bpf_map_delete_elem(&threads, &tid)) {
		th->off_ns = 0;
		th->ready_ns = 0;
	}
}

/* next is back on a CPU. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);

	if (!th || !own_entry(next, tid, th))
		return;
	if (test_hide_switch_in &&
	    __sync_fetch_and_add(&test_switch_ins, 1) % test_hide_switch_in == test_hide_switch_in - 1)
		return;
	end_wait(next, tid, th, now);
}

/* prev, on CPU until now, still has an entry (th, looked up by the caller): its last switch-in
 * was not reported. Its wait
 * ended when it went on CPU: now minus the CPU time charged to it since its switch-out (the
 * scheduler's clock leaves out interrupts' time: the end is, if anything, late by that much, a
 * few microseconds; never before its wakeup). */
static __always_inline void unseen_switch_in(struct task_struct *prev, __u32 tid,
					     struct offcpu_thread *th, __u64 now)
{
	__u64 run, in = 0;

	if (!th || !own_entry(prev, tid, th))
		return;
	run = BPF_CORE_READ(prev, se.sum_exec_runtime);
	/* else counted already (its entry could not go), or an older thread's of the same tid */
	if ((th->off_ns || th->ready_ns) && run >= th->run_ns && now - th->off_ns > run - th->run_ns) {
		in = now - (run - th->run_ns);
		if (in < th->ready_ns)
			in = th->ready_ns;
		count_stat(OFFCPU_STAT_SWITCH_IN_UNSEEN);
	}
	end_wait(prev, tid, th, in);
}

/* e (prev's entry, or NULL) if its waker made it before this switch-out was seen
 * (offcpu_waking: `pending`), else NULL */
static __always_inline struct offcpu_thread *pending_entry(struct task_struct *prev,
							   struct offcpu_thread *e)
{
	return e && e->pending && e->task_start == BPF_CORE_READ(prev, start_time) ? e : NULL;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_thread th = {}, *e;
	struct offcpu_scratch *sc = NULL;
	__u32 zero = OFFCPU_HOOK_SWITCH, state, tid;

	if (!started || stopped)
		return 0;
	switch_in(next, now);

	tid = BPF_CORE_READ(prev, pid);
	if (!tid || !traced(prev))
		return 0;
	/* (an entry its waker made is of this switch-out, not an earlier wait's) */
	e = bpf_map_lookup_elem(&threads, &tid);
	if (!pending_entry(prev, e)) {
		unseen_switch_in(prev, tid, e, now);
		e = NULL;
	}
	if (prev_state & TASK_DEAD) {
		if (e)
			bpf_map_delete_elem(&threads, &tid);
		return 0;
	}
	state = state_of(preempt, prev_state);
	th.run_ns = BPF_CORE_READ(prev, se.sum_exec_runtime);
	th.task_start = BPF_CORE_READ(prev, start_time);
	if (state == OFFCPU_STATE_R)
		th.ready_ns = now;
	if (held_by_us(prev, prev_state)) {
		/* timed, to say how long, but no stacks: it is not counted as a wait */
		th.off_ns = now;
		th.held = 1;
	} else if (states & state) {
		sc = bpf_map_lookup_elem(&scratch, &zero);
		if (!sc)
			return 0;
		th.off_ns = now;
		th.key.stack.tgid = BPF_CORE_READ(prev, tgid);
		if (per_thread) {
			th.key.stack.aux = tid;
			th.key.stack.gen = thread_gen(prev);
		}
	}
	/*
	 * The entry goes in before the stacks are taken, which takes microseconds (the user
	 * stack's unwinding), and a waker may come first: a thread on its way off its CPU is
	 * off its run queue before the scheduler looks for other work (newidle balancing, with
	 * its run queue's lock let go) and before this program runs, and a thread on another CPU
	 * woken by its last write (a pipe's reader) writes back meanwhile. offcpu_waking then
	 * keeps the waker in the entry, one it makes itself if there is none yet (`pending`),
	 * which this switch-out fills in where it is (a replaced entry would lose the waker's
	 * writes under way); each program writes only its own fields. Put in whole after the
	 * stacks, such a wakeup found no entry, and the wait counted with no waker: pingpong's
	 * threads each on a CPU of their own lost up to half their wakers so.
	 */
	if (!e && bpf_map_update_elem(&threads, &tid, &th, BPF_NOEXIST)) {
		/* made meanwhile by its waker, or an earlier entry that could not go */
		e = pending_entry(prev, bpf_map_lookup_elem(&threads, &tid));
		if (!e) {
			if (bpf_map_update_elem(&threads, &tid, &th, BPF_ANY))
				count_stat(OFFCPU_STAT_THREADS_FULL);
			e = NULL;
			goto stacks;
		}
	}
	if (e) {
		e->run_ns = th.run_ns;
		if (th.ready_ns)
			e->ready_ns = th.ready_ns;
		e->held = th.held;
		e->key.stack.tgid = th.key.stack.tgid;
		e->key.stack.aux = th.key.stack.aux;
		e->key.stack.gen = th.key.stack.gen;
		e->off_ns = th.off_ns;
		e->pending = 0;
	}
stacks:
	if (!sc || th.held)
		return 0;
	e = bpf_map_lookup_elem(&threads, &tid);
	if (!e || e->task_start != th.task_start)
		return 0;
	capture(ctx, sc, &e->key.stack.ustack, &e->key.stack.kstack, &e->key.stack.flags,
		!(BPF_CORE_READ(prev, flags) & PF_KTHREAD));
	test_delay();
	return 0;
}

/* Whether the program runs on an interrupt's stack (a hard interrupt's, or a softirq's, which
 * x86-64 runs on the same per-CPU stack): then the current task is only the one interrupted,
 * no waker. Its context is on the stack it runs on; the task's own runs from task->stack to its
 * saved user registers at the top (bpf_task_pt_regs). (This kernel's preempt count, a per-CPU
 * variable, is not in kallsyms: a program cannot name it.) An interrupt that came from user
 * mode runs on the task's stack: its registers say so instead (STACK_KEY_USER_EXACT). */
static __always_inline bool on_irq_stack(void *ctx, struct task_struct *t)
{
	__u64 base = (__u64)BPF_CORE_READ(t, stack), top = (__u64)bpf_task_pt_regs(t);
	__u64 at = (__u64)ctx;

	return at < base || at >= top;
}

/* p, a traced thread without an entry, woken on its way off its CPU, before its switch-out was
 * seen: off its run queue (it blocks: the wakeup waits until it is off the CPU, then queues it
 * again) and still on its CPU. Its waker goes into an entry made now, `pending`, which its
 * switch-out fills in (offcpu_switch). NULL otherwise (not blocking: the wakeup only makes it
 * running again, with no wait). */
static __always_inline struct offcpu_thread *pending_waker(struct task_struct *p, __u32 tid)
{
	struct offcpu_thread fresh = { .pending = 1 }, *e;

	if (!traced(p) || !BPF_CORE_READ(p, on_cpu))
		return NULL;
	if (BPF_CORE_READ(p, on_rq)) {
		/* Still queued: running on (no wait follows), unless the scheduler delayed its
		 * dequeue (6.12 on: it blocks with its slice overdrawn), when the wakeup queues it
		 * again as it switches out, or not, if it is picked again: an entry made now
		 * could be left for a later wait and give it this waker. Counted, not kept. */
		if (bpf_core_field_exists(p->se.sched_delayed) && BPF_CORE_READ(p, se.sched_delayed))
			count_stat(OFFCPU_STAT_WAKER_UNSEEN);
		return NULL;
	}
	fresh.task_start = BPF_CORE_READ(p, start_time);
	/* (or its switch-out's own, made meanwhile) */
	if (bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &tid))
		count_stat(OFFCPU_STAT_THREADS_FULL);
	e = bpf_map_lookup_elem(&threads, &tid);
	return e && e->task_start == fresh.task_start ? e : NULL;
}

/* The waker's stacks for p, in the waker's context (try_to_wake_up's start). */
SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_waking, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), zero = OFFCPU_HOOK_WAKING;
	struct offcpu_thread *th;
	struct offcpu_scratch *sc;
	struct task_struct *cur;

	if (!started || stopped)
		return 0;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th && !own_entry(p, tid, th))
		th = NULL;
	if (!th)
		th = pending_waker(p, tid);
	if (!th || !(th->off_ns || th->pending) || th->key.wustack || th->key.wkstack)
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;
	cur = bpf_get_current_task_btf();
	/* In an interrupt (a timer's expiry, a softirq), the current task is only the one it
	 * interrupted: the collector sees the interrupt's frames in the kernel stack and names the
	 * waker "interrupt" then (this kernel's preempt count is no symbol a program can read). */
	th->key.wtgid = cur->tgid;
	if (per_thread) {
		th->key.wtid = cur->pid;
		th->key.wgen = thread_gen(cur);
	}
	capture(ctx, sc, &th->key.wustack, &th->key.wkstack, &th->key.wflags,
		!(cur->flags & PF_KTHREAD));
	/* A process outside the traced ones, seen waking in a system call, is announced: its
	 * mappings are read now (at the end it may be gone). An interrupt's wakeup is no task's:
	 * announced, every process a timer interrupted would have its mappings read (and its
	 * unwind tables loaded): the program's stack says so, or the registers of a task
	 * interrupted in user code (STACK_KEY_USER_EXACT). */
	if (cur->tgid) {
		/* a waker with the PID of an earlier process: the entry the waker frames are
		 * named by is the newest's (without -a too, for one outside the traced
		 * processes: a traced one's PID given again is the session's to say) */
		if (trace_all || !traced(cur))
			check_reuse(cur, cur->tgid);
		first_count(cur, cur->tgid, cur->pid, th->key.wgen,
			    trace_all || (th->key.wustack && !on_irq_stack(ctx, cur) &&
					  !(th->key.wflags & STACK_KEY_USER_EXACT) && !traced(cur)));
	}
	return 0;
}

static __always_inline void ready(struct task_struct *p, bool create)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct offcpu_thread *th, fresh = {};

	if (!started || stopped)
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th && !own_entry(p, tid, th))
		th = NULL;
	if (th) {
		if (!th->ready_ns)
			th->ready_ns = bpf_ktime_get_ns();
		return;
	}
	if (!create || !traced(p))
		return;
	fresh.ready_ns = bpf_ktime_get_ns();
	fresh.task_start = BPF_CORE_READ(p, start_time);
	if (bpf_map_update_elem(&threads, &tid, &fresh, BPF_NOEXIST))
		count_stat(OFFCPU_STAT_THREADS_FULL);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(offcpu_wakeup, struct task_struct *p)
{
	ready(p, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(offcpu_wakeup_new, struct task_struct *p)
{
	ready(p, true);
	return 0;
}

/* --per-thread: a thread renamed (it, or another thread through /proc, or an exec): its waits
 * from now on are keyed and named apart (bpf/lib/tname.bpf.h). With --wakers any task may be a
 * waker: every one's renames count then. */
SEC("?tp_btf/task_rename")
int BPF_PROG(offcpu_rename, struct task_struct *task, const char *comm)
{
	if (!started || stopped)
		return 0;
	if (wakers || traced(task))
		thread_renamed(task);
	return 0;
}

/* A process that execs is named by its new program: one named before (a shell's child, at its
 * first run-queue wait between its fork and its exec) and gone by the end kept its shell's
 * name (-a: 100 /bin/true, 88 of them "bash"). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(offcpu_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct offcpu_note note = { .tgid = tgid, .exec = 1 };
	struct offcpu_comm *c = bpf_map_lookup_elem(&comms, &tgid);

	/* (-a: a process with an earlier one's PID is named when it counts: check_reuse) */
	if (!c || (trace_all && c->start != proc_start(p)))
		return 0;
	bpf_get_current_comm(c->comm, sizeof(c->comm));
	/* -a: announced again, its new program's mappings read at once */
	if (trace_all && bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
		count_stat(OFFCPU_STAT_NOTES_FULL);
	return 0;
}

/* Once, when counting has started (-p: the process's threads; -a: every task): each thread
 * asleep now (not on a CPU, not runnable) and not seen since gets an entry as if it had
 * switched out at the run's start (begun_ns; the attach, in which this runs, comes after it). NOEXIST: a thread that switched out since the start keeps its
 * own. One found asleep and woken and on a CPU before its entry went in would keep a stale
 * entry: looked at again after the insertion, taken back if it is on a CPU and still this one
 * (what is left of that race is a switch-in the kernel did not report, counted as such at its
 * next switch-out). */
SEC("iter/task")
int offcpu_begun(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u32 zero = OFFCPU_HOOK_BEGUN, tid, tgid, state, st;
	struct offcpu_thread th = {}, *e;
	struct offcpu_scratch *sc;
	__u64 now = bpf_ktime_get_ns();
	long n;

	if (begun_ns && begun_ns < now)
		now = begun_ns;
	if (!t || !started || stopped)
		return 0;
	tid = t->pid;
	tgid = t->tgid;
	if (!task_asleep(t, &st) || !traced(t) || held_by_us(t, st))
		return 0;
	state = state_of(false, st);
	if (!(states & state))
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;
	th.off_ns = now;
	th.run_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
	th.task_start = t->start_time;
	th.key.stack.tgid = tgid;
	if (per_thread) {
		th.key.stack.aux = tid;
		th.key.stack.gen = thread_gen(t);
	}
	n = bpf_get_task_stack(t, sc->kern.ips, sizeof(sc->kern.ips), 0);
	if (n > 0) {
		sc->kern.nr = n / sizeof(__u64);
		th.key.stack.kstack = intern_stack(&sc->kern, sc->kern.nr);
		if (!th.key.stack.kstack)
			count_stat(OFFCPU_STAT_STACKS_FULL);
	}
	if (!(t->flags & PF_KTHREAD))
		th.key.stack.flags = STACK_KEY_USER_UNSEEN;
	if (bpf_map_update_elem(&threads, &tid, &th, BPF_NOEXIST)) {
		if (!bpf_map_lookup_elem(&threads, &tid))
			count_stat(OFFCPU_STAT_THREADS_FULL);
		return 0;
	}
	if (BPF_CORE_READ(t, on_cpu)) {
		e = bpf_map_lookup_elem(&threads, &tid);
		if (e && e->off_ns == now && (e->key.stack.flags & STACK_KEY_USER_UNSEEN))
			bpf_map_delete_elem(&threads, &tid);
		return 0;
	}
	count_stat(OFFCPU_STAT_BEGUN);
	first_count(t, tgid, tid, th.key.stack.gen, trace_all);
	return 0;
}
