// SPDX-License-Identifier: GPL-2.0
/* ebprof lock: kernel side. Lock contention, kernel and user, each wait with the waiter's stacks:
 *
 *   lock:contention_begin   a kernel lock is contended (tp_btf: the lock's address and its
 *                           LCB_F_* flags); the wait starts
 *   lock:contention_end     it is taken (or the wait was given up): the wait ends
 *   raw_syscalls:sys_enter  a futex(2) wait (FUTEX_WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2,
 *                           WAIT_REQUEUE_PI) or futex_waitv(2) of a traced process starts
 *   raw_syscalls:sys_exit   and ends: its delay is the system call's duration
 *
 * A wait in progress is kept as perf's lock contention does: a spinlock's (LCB_F_SPIN without
 * LCB_F_MUTEX: it spins with preemption off) per CPU, every other one per thread. A begin that
 * finds its slot taken is either the same lock again (a mutex that spun and now sleeps: one
 * wait, its kind the latest) or another lock: on a CPU, an interrupt's spinlock inside the
 * task's (not measured, counted as nested) or a slot whose end never came (a program run the
 * kernel skipped: taken over, counted); per thread it can only be the latter. Every wait's
 * numbers are added at its end to the (process, kind, stacks, lock) counters, to its process's
 * totals (exact when the per-stack table is full) and to the per-lock table with its log2
 * histogram; nothing is sent per wait.
 *
 * A record is a thread's, not a tid's: it holds the thread's start time (task->start_time), and
 * a record of an earlier thread with the same tid is never continued or ended by the later one
 * (the kernel gives a dead thread's tid to a new thread, of any process, within a minute on a
 * busy machine: before, a thread killed in a futex wait left its record, and the next thread
 * with its tid ended it, charged to its own process, from the dead thread's start). A thread's
 * records go at its exit (lock_thread_exit).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/lock.h"
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD	0x00200000
#define EAGAIN		11
#define ETIMEDOUT	110

/* -a: every process and kernel thread (ebprof itself excepted) */
const volatile bool trace_all = false;
const volatile __u32 self_tgid = 0;
/* -p or -a: waits going on before the start can be found (lock_begun), and futex_exit takes
 * their user stacks; false for a launched command, and the verifier drops that code */
const volatile bool begun_stacks = false;

/* Set by the collector through the mmapped .bss: tracing has started, and has stopped (every
 * program returns at once: detaching is slow). */
bool started;
bool stopped;
/* Set by the collector before it runs lock_begun: the run's start, which a wait found going on
 * then counts from (the run began before the attach: a thread asleep all along is the run). */
__u64 begun_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

/* Sleeping locks' waits in progress, per thread (tid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* sized by the collector */
	__type(key, __u32);
	__type(value, struct lock_wait);
} kwaits SEC(".maps");

/* Futex waits in progress, per thread (tid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* sized by the collector */
	__type(key, __u32);
	__type(value, struct lock_wait);
} fwaits SEC(".maps");

/* A spinlock's wait in progress on each CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lock_wait);
} spinning SEC(".maps");

/* --max-stacks; this, procs and locks are taken out as the run goes (a spill, a window), twice
 * over (bpf/lib/take.bpf.h) */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct lock_key, struct lock_count, 1 << 14);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);	/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* Each process's totals (by tgid): its row in the report, exact whatever --max-stacks kept */
/* (sized by the collector) */
TAKE_TABLE(procs, BPF_MAP_TYPE_HASH, __u32, struct lock_proc, 8192);

/* --max-locks */
TAKE_TABLE(locks, BPF_MAP_TYPE_HASH, struct lock_id, struct lock_val, 1 << 14);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* sized by the collector */
	__type(key, __u32);
	__type(value, struct lock_comm);
} comms SEC(".maps");

/* -a: processes seen for the first time (their tgid) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOCK_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOCK_HOOK__COUNT);
	__type(key, __u32);
	__type(value, struct lock_scratch);
} scratch SEC(".maps");

static const struct lock_count zero_count;
static const struct lock_proc zero_proc;
static const struct lock_val zero_val;

static __always_inline void count_stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline bool traced(__u32 tgid)
{
	if (tgid == self_tgid)
		return false;
	return trace_all || bpf_map_lookup_elem(&targets, &tgid);
}

/* Whether w is the record of thread tid as it is now (task t), not of an earlier thread that
 * had its tid. */
static __always_inline bool same_thread(const struct lock_wait *w, __u32 tid,
					struct task_struct *t)
{
	return w->tid == tid && w->task_start == t->start_time;
}

/* The waiter's stacks (kernel frames only for kernel locks: a futex wait's are the system
 * call's entry) into w. */
static __always_inline __u64 add_direct_caller(struct pt_regs *regs, struct stack_trace *s,
					       __u64 n);

/* Both stacks are interned through this global function: checked once by the verifier, not
 * again at each of capture()'s calls for each state its callers reached it in (see
 * direct_caller below); a call more a stack at run time. */
__noinline __u64 intern_stack(struct stack_trace *s, __u64 nr)
{
	if (!s)
		return 0;
	return stack_intern(&stacks, s, nr, 0);
}

static __always_inline void capture(void *ctx, __u32 hook, struct pt_regs *uregs, bool kernel,
				    bool caller, struct lock_wait *w)
{
	struct lock_scratch *sc = bpf_map_lookup_elem(&scratch, &hook);
	struct pt_regs *regs = uregs;
	bool exact = false, by_tables;
	__u64 n;

	if (!sc)
		return;
	if (kernel) {
		n = capture_kernel_stack(ctx, &sc->kern);
		if (n) {
			w->kstack = intern_stack(&sc->kern, n);
			if (!w->kstack)
				count_stat(LOCK_STAT_STACKS_FULL);
		}
	}
	if (!regs)
		regs = user_regs(NULL, &exact);
	n = capture_user_stack_by(regs, &sc->user, &by_tables);
	/* walked by frame pointers only (no tables, or code mapped since they were loaded): by
	 * call frame information the caller is already there */
	if (n && caller && !by_tables)
		n = add_direct_caller(regs, &sc->user, n);
	if (n) {
		w->ustack = intern_stack(&sc->user, n);
		if (!w->ustack)
			count_stat(LOCK_STAT_STACKS_FULL);
		w->flags = exact ? STACK_KEY_USER_EXACT : 0;
	}
}

static __always_inline void add_max(__u64 *m, __u64 v)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *m;

		if (v <= old || __sync_val_compare_and_swap(m, old, v) == old)
			return;
	}
}

/* Whose lock a kernel lock is, when it is one of the waiting task's own structures. */
static __always_inline __u32 lock_owner(struct task_struct *task, __u64 lock)
{
	struct mm_struct *mm = task->mm;
	struct sighand_struct *sh;
	struct files_struct *files;

	if (mm) {
		if (lock == (__u64)&mm->mmap_lock)
			return LOCK_OWNER_MMAP_LOCK;
		if (lock == (__u64)&mm->page_table_lock)
			return LOCK_OWNER_PAGE_TABLE_LOCK;
	}
	sh = task->sighand;
	if (sh && lock == (__u64)&sh->siglock)
		return LOCK_OWNER_SIGLOCK;
	files = task->files;
	if (files && lock == (__u64)&files->file_lock)
		return LOCK_OWNER_FILE_LOCK;
	return LOCK_OWNER_NONE;
}

/* A process's name, once; with -a it is announced (the note wakes the collector: its mappings
 * are read before it can exit). -a: a process that is not the one its PID's entry was made by
 * is the PID given again (bpf/lib/pidreuse.bpf.h): their rows (totals and counts, keyed by
 * tgid) are one, under the newest's name; it is announced again (the note's second word: its
 * mappings, name and command line read anew). */
_Static_assert(sizeof(struct lock_comm) == sizeof(struct pidreuse_kname) &&
	       __builtin_offsetof(struct lock_comm, start) ==
	       __builtin_offsetof(struct pidreuse_kname, start), "pid_kname_note's entry");

static __always_inline void note_comm(__u32 tgid, struct task_struct *task)
{
	int r = pid_kname_note(&comms, &notes, task, tgid, task->flags & PF_KTHREAD, trace_all);

	if (r == PIDREUSE_REUSED || r == PIDREUSE_REUSED_UNSAID)
		count_stat(LOCK_STAT_PIDS_REUSED);
	if (r < 0)
		count_stat(LOCK_STAT_NOTES_FULL);
}

/* How a wait ended: woken (or a kernel lock taken), a contention; at once (EAGAIN: the futex's
 * value had changed, no wait); by its timeout (ETIMEDOUT: nobody woke it, a timed wait, not
 * contention). The last two are counted apart. */
enum wait_end {
	END_WOKEN,
	END_NOWAIT,
	END_TIMEDOUT,
};

/* A wait ended after `delay` ns: into the tables. */
static __always_inline void account(const struct lock_wait *w, __u32 tgid, __u64 delay,
				    enum wait_end end)
{
	struct task_struct *task = bpf_get_current_task_btf();
	bool futex = LOCK_AUX_IS_FUTEX(w->aux);
	struct lock_id id = { .addr = w->lock, .tgid = futex ? tgid : 0, .aux = w->aux };
	__u32 g = take_gen_now();
	void *counts = take_table(counts, g), *procs = take_table(procs, g);
	void *locks = take_table(locks, g);
	struct lock_key k = {};
	struct lock_count *c;
	struct lock_proc *pv;
	struct lock_val *v;
	__u32 s;

	note_comm(tgid, task);
	if (end == END_NOWAIT) {
		count_stat(LOCK_STAT_NOWAIT);
	} else {
		count_stat(end == END_TIMEDOUT ? LOCK_STAT_TIMEDOUT :
			   futex ? LOCK_STAT_FUTEX : LOCK_STAT_KERNEL);
		k.stack.tgid = tgid;
		k.stack.aux = w->aux;
		k.stack.ustack = w->ustack;
		k.stack.flags = w->flags;
		k.stack.kstack = w->kstack;
		k.addr = w->lock;
		c = bpf_map_lookup_elem(counts, &k);
		if (!c) {
			if (!bpf_map_update_elem(counts, &k, &zero_count, BPF_NOEXIST))
				count_stat(LOCK_STAT_KEYS);
			/* else full, or another CPU made it meanwhile */
			c = bpf_map_lookup_elem(counts, &k);
		}
		if (c && end == END_TIMEDOUT) {
			__sync_fetch_and_add(&c->timeouts, 1);
			__sync_fetch_and_add(&c->timeout_ns, delay);
		} else if (c) {
			__sync_fetch_and_add(&c->count, 1);
			__sync_fetch_and_add(&c->delay_ns, delay);
		} else {
			count_stat(LOCK_STAT_COUNTS_FULL);
		}
		/* the process's totals do not depend on the per-stack table having room */
		pv = lookup_or_init(procs, &tgid, &zero_proc);
		if (pv && end == END_TIMEDOUT) {
			__sync_fetch_and_add(&pv->futex_timeouts, 1);
			__sync_fetch_and_add(&pv->futex_timeout_ns, delay);
		} else if (pv && futex) {
			__sync_fetch_and_add(&pv->futex_count, 1);
			__sync_fetch_and_add(&pv->futex_ns, delay);
		} else if (pv) {
			__sync_fetch_and_add(&pv->kernel_count, 1);
			__sync_fetch_and_add(&pv->kernel_ns, delay);
		} else {
			count_stat(LOCK_STAT_PROCS_FULL);
		}
	}
	v = bpf_map_lookup_elem(locks, &id);
	if (!v) {
		/* EEXIST: another CPU inserted it meanwhile (and named its owner) */
		bool mine = !bpf_map_update_elem(locks, &id, &zero_val, BPF_NOEXIST);

		v = bpf_map_lookup_elem(locks, &id);
		if (!v) {
			count_stat(LOCK_STAT_LOCKS_FULL);
			return;
		}
		if (mine)
			count_stat(LOCK_STAT_LOCK_KEYS);
		if (mine && !futex) {
			v->owner = lock_owner(task, w->lock);
			if (v->owner)
				v->owner_tgid = tgid;
		}
	}
	if (end == END_NOWAIT) {
		__sync_fetch_and_add(&v->nowait, 1);
		return;
	}
	if (end == END_TIMEDOUT) {
		__sync_fetch_and_add(&v->timeouts, 1);
		__sync_fetch_and_add(&v->timeout_ns, delay);
		return;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->delay_ns, delay);
	add_max(&v->max_ns, delay);
	s = log2_bucket_n(delay, LOCK_HIST_SLOTS);
	if (s < LOCK_HIST_SLOTS)
		__sync_fetch_and_add(&v->hist[s], 1);
}

/* ---- the direct caller of a function without frame pointers ---------------------------- */

/*
 * A wait's user stack is taken inside libc, whose functions keep no frame pointer (Debian's):
 * %rbp is still the frame of the first function up the chain that keeps one (the program's
 * contend()), so the frame-pointer walk goes from the wait's address in libc straight to that
 * function's caller, and the function that called into libc is missing. Its return address was
 * pushed at the bottom of its frame, just below %rbp minus its locals: the first word below
 * %rbp (and at or above %rsp) that points into an executable mapping other than the one of the
 * wait's address is taken for it (CALLER_WORDS words at a time, CALLER_CHUNKS times at most:
 * the first 16 words hold the return address of nearly every caller, and decide). A code
 * address kept among the
 * function's locals would be taken instead: rare, and then a frame too many, not a wrong leaf.
 *
 * Found nothing is an answer only when every word from %rbp down to %rsp was looked at, each
 * candidate's mapping known: then no function of another mapping called into the leaf's below
 * %rbp's frame (the leaf set up that frame itself, or its mapping's code did), and the walk's
 * second frame is the leaf's caller. Else (a frame larger than 64 words, more candidates than
 * CALLER_LOOKUPS, a lookup bpf_find_vma could not make: it only tries the mm's mmap_lock, and
 * fails while another thread maps or unmaps) the caller is not known, and neither is whether
 * one is missing: the stack ends after the leaf, [truncated], counted (LOCK_STAT_NO_CALLER).
 * Before, it went on from %rbp's frame as if that were the leaf's caller: a wrong stack shown
 * whole (futex_wait, __lll_lock_wait, worker, without contend): once in ~7,000 waits of
 * mutexfix, 22 of 1,206 with a thread mapping and unmapping beside it, every time for a caller
 * with more than 16 words of locals (mutexfix bigframe, found since the search reads on past
 * 16 words; mutexfix hugeframe, with more than 64, ends in [truncated]).
 */
#define CALLER_WORDS	16	/* words read at a time */
#define CALLER_CHUNKS	4	/* times: 64 words below %rbp at most */
#define CALLER_LOOKUPS	4	/* bpf_find_vma calls at most */
#define VM_EXEC		0x4
#define ENOENT		2
#define E2BIG		7
/* direct_caller's answer when the caller could not be told (no code is ever at address 1) */
#define CALLER_UNKNOWN	1

struct vma_probe {
	__u64 lo, hi;
	__u32 exec;
};

static long vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_probe *p = data;

	p->lo = vma->vm_start;
	p->hi = vma->vm_end;
	p->exec = !!(vma->vm_flags & VM_EXEC);
	return 0;
}

struct shift_ctx {
	__u64 *ips;
	__u64 n;
};

/* step i moves ips[n - 1 - i] one place up, down to ips[1] */
static long shift_step(__u64 i, void *data)
{
	struct shift_ctx *x = data;
	__u64 j = x->n - 1 - i;

	/* the bounds on the very register that indexes ips */
	asm volatile("" : "+r"(j));
	if (j < 1 || j >= STACK_MAX_DEPTH - 1)
		return 1;
	x->ips[j + 1] = x->ips[j];
	return 0;
}

/* direct_caller's search: the words below top (bp, then a chunk lower each time), the
 * leaf's mapping, what was found */
struct caller_ctx {
	__u64 words[CALLER_WORDS];
	__u64 top, sp, lo, hi;	/* lo, hi: the leaf's mapping */
	__u64 c;		/* the caller found; 0: none is missing; CALLER_UNKNOWN */
	__u32 lookups;
	__u32 done;		/* c is the answer */
};

/* Step i looks at the word CALLER_WORDS - 1 - i, from top down (the index, not a count kept in
 * x, picks the word: the verifier then checks the step for one state of it, not each) */
static long caller_step(__u64 i, void *data)
{
	struct caller_ctx *x = data;
	__u64 k = CALLER_WORDS - 1 - i, at, w;
	struct vma_probe v = {};
	long err;

	/* the bound on the very register that indexes words */
	asm volatile("" : "+r"(k));
	if (k >= CALLER_WORDS)
		return 1;
	at = x->top - (CALLER_WORDS - k) * 8;
	w = x->words[k];
	if (at < x->sp) {
		/* every word from bp down to sp looked at: none missing (c is 0) */
		x->done = 1;
		return 1;
	}
	/* not code: small numbers, pointers into the stack, the leaf's own library */
	if (w < 4096 || (w >= x->lo && w < x->hi) || (w > x->sp - (8 << 20) &&
						       w < x->sp + (8 << 20)))
		return 0;
	err = ++x->lookups > CALLER_LOOKUPS ? -E2BIG :
	      bpf_find_vma(bpf_get_current_task_btf(), w, vma_cb, &v, 0);
	if (!err && v.exec) {
		x->c = w;
		x->done = 1;
		return 1;
	}
	if (!err || err == -ENOENT)	/* a mapping that is not code, or none */
		return 0;
	/* a word left unknown (-EBUSY: the mmap_lock taken; the lookups spent), and the
	 * caller with it */
	x->c = CALLER_UNKNOWN;
	x->done = 1;
	return 1;
}

/* The direct caller's return address found below bp (see above); 0: none is missing (none
 * found from bp down to sp, or the one found is already the stack's second frame, ip1);
 * CALLER_UNKNOWN: it could not be told. A global function: the verifier checks it once, on its
 * own; inlined into capture() it was checked again for each state its callers reached it in
 * (lock_begin and futex_exit: ~110,000 instructions processed each, 0.2 s each to load). Its
 * words are looked at in bpf_loop steps: unrolled, the loop was checked for each word and
 * count of lookups so far (28,500 instructions, half of lock_begin's and futex_enter's;
 * ~2,000 now). */
__noinline __u64 direct_caller(__u64 ip0, __u64 ip1, __u64 bp, __u64 sp)
{
	struct vma_probe leaf = {};
	struct caller_ctx x = {};

	if (bp <= sp || bp - sp > (1 << 20) || (bp & 7))
		return CALLER_UNKNOWN;
	if (bpf_find_vma(bpf_get_current_task_btf(), ip0, vma_cb, &leaf, 0) || !leaf.exec)
		return CALLER_UNKNOWN;
	x.sp = sp;
	x.lo = leaf.lo;
	x.hi = leaf.hi;
	for (int j = 0; j < CALLER_CHUNKS; j++) {
		x.top = bp - j * sizeof(x.words);
		if (x.top <= sp)
			return 0;	/* every word down to sp looked at */
		if (bpf_probe_read_user(x.words, sizeof(x.words),
					(void *)(x.top - sizeof(x.words))))
			return CALLER_UNKNOWN;
		bpf_loop(CALLER_WORDS, caller_step, &x, 0);
		if (x.done)
			return x.c == ip1 ? 0 : x.c;
	}
	/* the last chunk ended at sp, or the caller's frame is larger than the search */
	return bp - CALLER_CHUNKS * sizeof(x.words) <= sp ? 0 : CALLER_UNKNOWN;
}

/* s: n frames walked from regs. Returns the number of frames: the recovered caller inserted
 * as frame 1 when one was found; the stack ended after the leaf (STACK_FP_BROKEN, rendered
 * [truncated]) when it could not be told, counted. */
static __always_inline __u64 add_direct_caller(struct pt_regs *regs, struct stack_trace *s,
					       __u64 n)
{
	struct shift_ctx x;
	__u64 c;

	if (!regs || n < 1 || n >= STACK_MAX_DEPTH)
		return n;
	/* the walk ended after the leaf already ([truncated]) */
	if (n > 1 && s->ips[1] == STACK_FP_BROKEN)
		return n;
	c = direct_caller(s->ips[0], s->ips[1 < n ? 1 : 0], BPF_CORE_READ(regs, bp),
			  BPF_CORE_READ(regs, sp));
	if (!c)
		return n;
	if (c == CALLER_UNKNOWN) {
		count_stat(LOCK_STAT_NO_CALLER);
		s->ips[1] = STACK_FP_BROKEN;
		return 2;
	}
	x.ips = s->ips;
	x.n = n;
	bpf_loop(STACK_MAX_DEPTH, shift_step, &x, 0);
	s->ips[1] = c;
	return n + 1;
}

/* ---- kernel locks ------------------------------------------------------------------------ */

SEC("?tp_btf/contention_begin")
int BPF_PROG(lock_begin, void *lock, unsigned int flags)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct lock_wait *w, nw = {};
	long err;

	if (!started || stopped || !traced(tgid))
		return 0;
	now = bpf_ktime_get_ns();
	flags &= LOCK_LCB_F_MASK;
	if ((flags & (LOCK_LCB_F_SPIN | LOCK_LCB_F_MUTEX)) == LOCK_LCB_F_SPIN) {
		w = bpf_map_lookup_elem(&spinning, &zero);
		if (!w)
			return 0;
		if (w->lock) {
			/* spinning is done with preemption off: the task that began it is still
			 * this CPU's until its end. Another task's: that end was never seen. */
			if (same_thread(w, tid, task)) {
				count_stat(LOCK_STAT_NESTED);
				return 0;
			}
			count_stat(LOCK_STAT_END_UNSEEN);
		}
		w->lock = 0;
		w->ustack = w->kstack = 0;
		w->flags = 0;
		w->tid = tid;
		w->task_start = task->start_time;
		w->aux = flags;
		w->start_ns = now;
		capture(ctx, LOCK_HOOK_KERNEL, NULL, true, false, w);
		w->lock = (__u64)lock;
		return 0;
	}
	w = bpf_map_lookup_elem(&kwaits, &tid);
	if (w && w->lock) {
		if (w->lock == (__u64)lock && same_thread(w, tid, task)) {
			/* the same wait going on (a mutex's optimistic spin, then its sleep) */
			w->aux = flags;
			return 0;
		}
		count_stat(LOCK_STAT_END_UNSEEN);
	}
	nw.tid = tid;
	nw.task_start = task->start_time;
	nw.aux = flags;
	nw.start_ns = now;
	nw.lock = (__u64)lock;
	capture(ctx, LOCK_HOOK_KERNEL, NULL, true, true, &nw);
	err = bpf_map_update_elem(&kwaits, &tid, &nw, BPF_ANY);
	if (err)
		count_stat(LOCK_STAT_WAITS_FULL);
	return 0;
}

SEC("?tp_btf/contention_end")
int BPF_PROG(lock_end, void *lock, int ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), delay;
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct lock_wait *w, done;

	if (!started || stopped)
		return 0;
	/* A spinning wait on this CPU first: no sleeping lock's wait can end while its task
	 * spins. Another task's spinning wait here lost its end (the spinner stays on its CPU
	 * until then): the next begin on this CPU takes it over. */
	w = bpf_map_lookup_elem(&spinning, &zero);
	if (w && w->lock && same_thread(w, tid, task)) {
		if (w->lock != (__u64)lock)
			return 0;
		done = *w;
		w->lock = 0;
	} else {
		/* an earlier thread's record with this tid is not this wait's: taken over at this
		 * thread's next begin, or gone at its exit */
		w = bpf_map_lookup_elem(&kwaits, &tid);
		if (!w || w->lock != (__u64)lock || !same_thread(w, tid, task))
			return 0;
		done = *w;
		bpf_map_delete_elem(&kwaits, &tid);
	}
	delay = now > done.start_ns ? now - done.start_ns : 0;
	account(&done, tgid, delay, END_WOKEN);
	return 0;
}

/* ---- futex waits ------------------------------------------------------------------------- */

/* Is futex(2)'s op a wait (the commands that block the caller until a wake)? */
static __always_inline bool futex_wait_op(__u32 cmd)
{
	return cmd == LOCK_FUTEX_WAIT || cmd == LOCK_FUTEX_WAIT_BITSET ||
	       cmd == LOCK_FUTEX_LOCK_PI || cmd == LOCK_FUTEX_LOCK_PI2 ||
	       cmd == LOCK_FUTEX_WAIT_REQUEUE_PI;
}

/*
 * A futex wait that a signal interrupts returns one of the kernel's restart codes, which no
 * program sees: the signal is handled and the wait goes on, the same futex(2) call made again
 * (by the kernel after a signal without a handler or with SA_RESTART, or by glibc after
 * EINTR), or, for a timed wait, restart_syscall(2). It is one wait, from its first start to its
 * last end: counted at each return, it was several contentions, and a timed one lost all but
 * its first part (it ended in restart_syscall, which was not watched).
 */
#define ERESTARTSYS_		512
#define ERESTARTNOINTR_		513
#define ERESTARTNOHAND_		514
#define ERESTART_RESTARTBLOCK_	516

static __always_inline bool restarting(long ret)
{
	return ret == -ERESTARTSYS_ || ret == -ERESTARTNOINTR_ || ret == -ERESTARTNOHAND_ ||
	       ret == -ERESTART_RESTARTBLOCK_;
}

/*
 * Is nr, of a call now entered or returning, futex(2) (1), futex_waitv(2) (2), restart_syscall(2)
 * (3), or none of them (0)? A 32-bit system call (in_compat_syscall: int $0x80, an ia32 program)
 * numbers them by the ia32 table, where 202, x86_64's futex, is getegid32: ten of those were ten
 * futex contentions in a program that takes no lock. Its futex calls, futex and futex_time64,
 * are waits like the others, their arguments in ebx, ecx (*compat says so).
 */
#define CALL_FUTEX	1
#define CALL_WAITV	2
#define CALL_RESTART	3

static __always_inline int futex_call(long nr, bool *compat)
{
	*compat = false;
	if (nr != LOCK_NR_FUTEX && nr != LOCK_NR_FUTEX_WAITV && nr != LOCK_NR_RESTART_SYSCALL &&
	    nr != LOCK_NR32_FUTEX && nr != LOCK_NR32_FUTEX_TIME64 && nr != LOCK_NR32_RESTART_SYSCALL)
		return 0;
	*compat = in_compat_syscall();
	if (nr == LOCK_NR_FUTEX_WAITV)
		return CALL_WAITV;
	if (*compat)
		return nr == LOCK_NR32_FUTEX || nr == LOCK_NR32_FUTEX_TIME64 ? CALL_FUTEX :
			nr == LOCK_NR32_RESTART_SYSCALL ? CALL_RESTART : 0;
	return nr == LOCK_NR_FUTEX ? CALL_FUTEX : nr == LOCK_NR_RESTART_SYSCALL ? CALL_RESTART : 0;
}

SEC("?tp_btf/sys_enter")
int BPF_PROG(futex_enter, struct pt_regs *regs, long nr)
{
	struct task_struct *task;
	__u64 id, uaddr;
	__u32 tgid, tid, cmd;
	struct lock_wait w = {}, *old;
	bool compat;
	int call;

	/* the cheap test first: every system call of every process comes here */
	if (nr != LOCK_NR_FUTEX && nr != LOCK_NR_FUTEX_WAITV && nr != LOCK_NR32_FUTEX &&
	    nr != LOCK_NR32_FUTEX_TIME64)
		return 0;
	if (!started || stopped)
		return 0;
	call = futex_call(nr, &compat);
	if (call != CALL_FUTEX && call != CALL_WAITV)
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	tid = (__u32)id;
	if (!traced(tgid))
		return 0;
	if (call == CALL_FUTEX) {
		cmd = (compat ? BPF_CORE_READ(regs, cx) : BPF_CORE_READ(regs, si)) &
		      ~(__u32)(LOCK_FUTEX_PRIVATE_FLAG | LOCK_FUTEX_CLOCK_REALTIME);
		if (!futex_wait_op(cmd))
			return 0;
		uaddr = compat ? (__u32)BPF_CORE_READ(regs, bx) : BPF_CORE_READ(regs, di);
	} else {
		/* struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 reserved; }[] (the
		 * same for a 32-bit caller) */
		__u64 waiters = compat ? (__u32)BPF_CORE_READ(regs, bx) : BPF_CORE_READ(regs, di);

		cmd = LOCK_FUTEX_WAITV;
		if (bpf_probe_read_user(&uaddr, sizeof(uaddr), (void *)(waiters + 8)))
			uaddr = 0;
	}
	w.lock = uaddr ?: 1;
	task = bpf_get_current_task_btf();
	/* the wait a signal interrupted, on the same futex: it goes on from its start. Only this
	 * thread's: an earlier thread's with this tid (its exit not seen) is replaced below. */
	old = bpf_map_lookup_elem(&fwaits, &tid);
	if (old && !same_thread(old, tid, task)) {
		count_stat(LOCK_STAT_END_UNSEEN);
		old = NULL;
	}
	if (old && old->interrupted && old->lock == w.lock) {
		old->interrupted = 0;
		return 0;
	}
	w.tid = tid;
	w.task_start = task->start_time;
	w.aux = LOCK_AUX_FUTEX | cmd;
	w.start_ns = bpf_ktime_get_ns();
	/* named, and with -a announced, now: a wait its thread's exit ends is counted then, too
	 * late for the collector to read the process's mappings (its stack was bare addresses) */
	note_comm(tgid, task);
	/* the stack is taken now, not at the exit: a wait still going on when tracing stops (a
	 * deadlock) has its stack then, and counts up to the stop (lock_stop) */
	capture(ctx, LOCK_HOOK_FUTEX, regs, false, true, &w);
	if (bpf_map_update_elem(&fwaits, &tid, &w, BPF_ANY))
		count_stat(LOCK_STAT_WAITS_FULL);
	return 0;
}

SEC("?tp_btf/sys_exit")
int BPF_PROG(futex_exit, struct pt_regs *regs, long ret)
{
	__u64 id, now, nr = BPF_CORE_READ(regs, orig_ax), delay;
	struct lock_wait *w, done;
	bool compat;
	__u32 tid;
	int call;

	if (nr != LOCK_NR_FUTEX && nr != LOCK_NR_FUTEX_WAITV && nr != LOCK_NR_RESTART_SYSCALL &&
	    nr != LOCK_NR32_FUTEX && nr != LOCK_NR32_FUTEX_TIME64 &&
	    nr != LOCK_NR32_RESTART_SYSCALL)
		return 0;
	/* 0, the ia32 restart_syscall, is x86_64's read(2): the task's flag before the table */
	call = futex_call(nr, &compat);
	if (!call)
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	w = bpf_map_lookup_elem(&fwaits, &tid);
	if (!w)
		return 0;
	/* an earlier thread's with this tid, whose exit was not seen: not this call's wait */
	if (!same_thread(w, tid, bpf_get_current_task_btf())) {
		count_stat(LOCK_STAT_END_UNSEEN);
		bpf_map_delete_elem(&fwaits, &tid);
		return 0;
	}
	/* restart_syscall(2) continues an interrupted timed wait, or something else; a futex call
	 * continues one only if futex_enter saw it wait on the same futex again (which took the
	 * mark off): any other (a FUTEX_WAKE, a call in the signal's handler) ends nothing */
	if (call == CALL_RESTART ? !w->interrupted : w->interrupted == 1 && !stopped)
		return 0;
	/* a wait begun before tracing started (lock_begun) had no user stack to read; this is its
	 * own call returning (not resumed, not a later call's), in its thread, with the call's
	 * user registers, as at its entry: its stack now (an ending, a signal, or after the stop).
	 * Before, every such wait stayed [user stack not seen], the longest waits of a -p run */
	if (begun_stacks && (w->flags & STACK_KEY_USER_UNSEEN) && !w->interrupted &&
	    call == CALL_FUTEX)
		capture(ctx, LOCK_HOOK_FUTEX, regs, false, true, w);
	/* going on when tracing stopped: userspace counts it up to the stop (one that did not
	 * wait, EAGAIN, is none; one that timed out, a timed wait) */
	if (stopped) {
		if (ret == -EAGAIN && !restarting(ret))
			bpf_map_delete_elem(&fwaits, &tid);
		else
			w->interrupted = ret == -ETIMEDOUT ? LOCK_WAIT_TIMEDOUT_LATE :
				LOCK_WAIT_ENDED_LATE;
		return 0;
	}
	if (restarting(ret)) {
		w->interrupted = 1;
		w->signal_ns = bpf_ktime_get_ns();
		return 0;
	}
	now = bpf_ktime_get_ns();
	done = *w;
	bpf_map_delete_elem(&fwaits, &tid);
	delay = now > done.start_ns ? now - done.start_ns : 0;
	/* EAGAIN: the futex no longer held the expected value, the caller never slept;
	 * ETIMEDOUT: its timeout ended it, nobody woke it (an idle poll, a timed condition
	 * wait: no contention, whatever else it is). Every other return was a wake (0), or
	 * a wait given up for a reason of its own (EINTR, EOWNERDEAD...): counted as woken. */
	account(&done, id >> 32, delay, ret == -EAGAIN ? END_NOWAIT :
		ret == -ETIMEDOUT ? END_TIMEDOUT : END_WOKEN);
	return 0;
}

/* Once, when counting has started (-p: the process's threads; -a: every task): each thread
 * asleep now in a futex wait (its system call's saved registers: futex, a wait operation) and
 * not seen to enter one since gets a record as if its wait had begun at the run's start
 * (begun_ns), on the futex
 * its registers name; its user stack cannot be read from another task (STACK_KEY_USER_UNSEEN).
 * Its exit then counts it as any other; one still waiting at the stop counts up to the stop.
 * Before, a program deadlocked when ebprof attached showed nothing. NOEXIST keeps a record its
 * own futex_enter made since the start; one made for a thread that went on a CPU meanwhile
 * (its exit may have come before the record) is taken back: a stale record would otherwise
 * stay until its next futex call replaces it. futex_waitv's futexes are in the other task's
 * memory: such a wait is on an unknown futex (1), as futex_enter's when it cannot read them. */
SEC("?iter/task")
int lock_begun(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct lock_wait w = {}, *e;
	struct pt_regs *regs;
	__u32 tid, tgid, st, cmd = LOCK_FUTEX_WAITV;
	__u64 nr, now = bpf_ktime_get_ns();
	bool compat;

	if (begun_ns && begun_ns < now)
		now = begun_ns;
	if (!t || !started || stopped)
		return 0;
	tid = t->pid;
	tgid = t->tgid;
	if (!task_asleep(t, &st) || (t->flags & PF_KTHREAD) || !traced(tgid))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	if (!regs)
		return 0;
	nr = BPF_CORE_READ(regs, orig_ax);
	/* a 32-bit call (the task's TS_COMPAT, set until it returns) by the ia32 table */
	compat = t->thread_info.status & TS_COMPAT_;
	if (compat ? nr == LOCK_NR32_FUTEX || nr == LOCK_NR32_FUTEX_TIME64 : nr == LOCK_NR_FUTEX) {
		cmd = (compat ? BPF_CORE_READ(regs, cx) : BPF_CORE_READ(regs, si)) &
		      ~(__u32)(LOCK_FUTEX_PRIVATE_FLAG | LOCK_FUTEX_CLOCK_REALTIME);
		if (!futex_wait_op(cmd))
			return 0;
		w.lock = (compat ? (__u32)BPF_CORE_READ(regs, bx) : BPF_CORE_READ(regs, di)) ?: 1;
	} else if (nr == LOCK_NR_FUTEX_WAITV) {
		w.lock = 1;
	} else {
		return 0;
	}
	w.tid = tid;
	w.task_start = t->start_time;
	w.aux = LOCK_AUX_FUTEX | cmd;
	w.start_ns = now;
	w.flags = STACK_KEY_USER_UNSEEN;
	if (bpf_map_update_elem(&fwaits, &tid, &w, BPF_NOEXIST)) {
		if (!bpf_map_lookup_elem(&fwaits, &tid))
			count_stat(LOCK_STAT_WAITS_FULL);
		return 0;
	}
	if (BPF_CORE_READ(t, on_cpu)) {
		e = bpf_map_lookup_elem(&fwaits, &tid);
		if (e && e->start_ns == now && (e->flags & STACK_KEY_USER_UNSEEN))
			bpf_map_delete_elem(&fwaits, &tid);
		return 0;
	}
	count_stat(LOCK_STAT_BEGUN);
	return 0;
}

/* A thread exits (every thread: the tracepoint runs in each exiting task): its records go with
 * it, or the next thread given its tid would find them (checked there too: same_thread). A futex
 * wait left marked interrupted was ended by a signal and never resumed: the thread was killed
 * in it (its process exiting: its call returns a restart code before the thread dies) or left
 * it from a handler: a wait given up on a signal, counted as EINTR's are, up to the signal, and
 * in LOCK_STAT_EXITED. Any other record (or an earlier thread's with its tid) lost its end (the
 * kernel ran no program at it): LOCK_STAT_END_UNSEEN. After the stop the records are the
 * collector's (lock_stop). Its cost is two hash lookups per thread exit, next to the tens of
 * microseconds an exit takes. */
SEC("?tp_btf/sched_process_exit")
int BPF_PROG(lock_thread_exit)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct task_struct *task = bpf_get_current_task_btf();
	struct lock_wait *w, done;

	if (!started || stopped)
		return 0;
	w = bpf_map_lookup_elem(&fwaits, &tid);
	if (w && same_thread(w, tid, task) && w->interrupted == 1) {
		done = *w;
		bpf_map_delete_elem(&fwaits, &tid);
		count_stat(LOCK_STAT_EXITED);
		account(&done, id >> 32, done.signal_ns > done.start_ns ?
			done.signal_ns - done.start_ns : 0, END_WOKEN);
	} else if (w) {
		count_stat(LOCK_STAT_END_UNSEEN);
		bpf_map_delete_elem(&fwaits, &tid);
	}
	if (bpf_map_lookup_elem(&kwaits, &tid)) {
		count_stat(LOCK_STAT_END_UNSEEN);
		bpf_map_delete_elem(&kwaits, &tid);
	}
	return 0;
}
