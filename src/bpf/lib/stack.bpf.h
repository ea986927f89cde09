/* SPDX-License-Identifier: GPL-2.0 */
/* Stack capture shared by every mode's BPF program: the user stack by call frame information
 * (unwind.bpf.h, where the collector loaded tables) or frame pointers, kernel stacks,
 * interning under a 64-bit hash, and the small helpers every mode needs (lookup-or-init, log2
 * buckets). Self-contained: it depends on vmlinux.h, libbpf's headers, abi/stack.h and
 * abi/unwind.h only; its only maps are the unwinder's (unwind.bpf.h); each mode passes its own
 * `stacks` map (hash, key __u64, value struct stack_trace) and counts its own drops. Include it after those headers, before the mode's
 * code. Every function is inline but read_frame, a global function verified once per object.
 */
#ifndef EBPROF_BPF_LIB_STACK_H
#define EBPROF_BPF_LIB_STACK_H

#include "abi/stack.h"

#include "bpf/lib/log2.bpf.h"

/* x86's TS_COMPAT (arch/x86/include/asm/thread_info.h), a macro BTF does not carry */
#define TS_COMPAT_	0x0002

/* Is the current task in a 32-bit system call (int $0x80, sysenter, an ia32 program's)? Its
 * number then indexes the ia32 table, not x86_64's (4 is write there, stat here; 202 is
 * getegid32, not futex), and the raw sys_enter/sys_exit tracepoints fire for both kinds; the
 * kernel's own syscall tracepoints leave 32-bit calls out (trace_get_syscall_nr: -1 when
 * arch_trace_is_compat_syscall). The flag is set at the 32-bit entry and cleared on the way
 * back to user mode, after sys_exit. (An x32 call's number has bit 30 set: no number matches.) */
static __always_inline bool in_compat_syscall(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return task->thread_info.status & TS_COMPAT_;
}

/* For a task iterator's look at another task (offcpu_begun, lock_begun): is t asleep now (off
 * every CPU, neither runnable nor dying, not a zombie)? Its state in *state. A task that set
 * itself asleep but has not yet left its CPU is on_cpu still: not asleep. */
static __always_inline bool task_asleep(struct task_struct *t, __u32 *state)
{
	__u32 st = BPF_CORE_READ(t, __state);

	*state = st;
	return t->pid && !t->exit_state && (st & 0xff) && !(st & 0x80 /* TASK_DEAD */) &&
	       !BPF_CORE_READ(t, on_cpu);
}

/* A task in a ptrace stop whose tracer is tracer_tgid (ebprof: the session holds a launched
 * tree's processes at their forks, execs, exits and signals to follow them). That time, and the
 * events of going into it, are ebprof's, not the program's. A stop by another tracer (a
 * debugger) is the program's as any other. In the stop is its state, __TASK_TRACED, or, once
 * the tracer has let it go, last_siginfo: ptrace_stop sets it after the state and clears it
 * only after its schedule() returns, and schedule() switches out again, running (prev_state 0),
 * when the task is to give the CPU up again the moment it is back (need_resched): that wait is
 * still ebprof's stop's (it showed as a run-queue wait in ptrace_stop, ~1 run in 40 of a loop
 * of /bin/true, 1 in 2 beside a busy CPU). */
static __always_inline bool held_by_tracer(struct task_struct *t, __u32 state, __u32 tracer_tgid)
{
	if (!(state & 0x8 /* __TASK_TRACED */) && !BPF_CORE_READ(t, last_siginfo))
		return false;
	return BPF_CORE_READ(t, ptrace) && BPF_CORE_READ(t, parent, tgid) == tracer_tgid;
}

/* The value of key in a hash map, inserted as *zero first if absent; NULL when the map is full
 * (the caller counts the drop). *made: this call inserted it (a table the collector takes out
 * three quarters full counts the keys it makes: collector__spill). */
static __always_inline void *lookup_or_make(void *map, const void *key, const void *zero,
					    bool *made)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	*made = false;
	if (v)
		return v;
	err = bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU inserted it */)
		return NULL;
	*made = !err;
	return bpf_map_lookup_elem(map, key);
}

static __always_inline void *lookup_or_init(void *map, const void *key, const void *zero)
{
	bool made;

	return lookup_or_make(map, key, zero, &made);
}

/*
 * Walk the user stack's frame pointers: ip first, then each frame's saved return address. The
 * same walk as bpf_get_stack's, except where it ends: the kernel reads on until a read faults,
 * and every chain ends in a fault (a thread's outermost saved %rbp is 0; code without frame
 * pointers leaves any value: Debian's libc leaves 1 below main), and that fault cost ~0.5 us per
 * allocation, a quarter of mem's traced tight loop (perf, see docs/PERFORMANCE.md). Here the
 * walk stops before reading a frame that cannot be one: in the first page, misaligned, or not
 * above the previous frame (callers' frames are at higher addresses); unless that frame pointer
 * is 0, the stack ends in STACK_FP_BROKEN: the frames past it are not known, and the stack
 * says so (core/stacks.c renders it [truncated]). The first frames are read inline, then one
 * frame per bpf_loop step: a plain loop would be verified once per iteration and call site,
 * which made loading (start-up) several times slower.
 */
#define WALK_INLINE	2	/* frames read before bpf_loop (walk_stack) */

struct walk_ctx {
	__u64 *ips;
	__u64 fp;		/* the next frame to read */
	__u64 prev;		/* the lowest address it may be at */
	__u64 nr;		/* addresses in ips */
};

/* A frame record (saved frame pointer, return address) read into this function's own frame:
 * a global function with a frame this small runs on the kernel stack, where the kernel's
 * usercopy check of the destination is quick; the programs' larger frames are per-CPU memory
 * (the JIT's private stacks), which costs the check ~10 ns more a read (docs/PERFORMANCE.md). */
struct frame_rec {
	__u64 next, ret;
};

__noinline int read_frame(__u64 fp, struct frame_rec *out)
{
	__u64 f[2];

	if (!out || bpf_probe_read_user(f, sizeof(f), (void *)fp))
		return 1;
	out->next = f[0];
	out->ret = f[1];
	return 0;
}

/* The walk of w ends at step i before a frame that is no frame: said, STACK_FP_BROKEN after
 * the frames so far (in place of the last at the depth limit: STACK_MAX_DEPTH frames read and
 * the chain goes on). */
static __always_inline void walk_broken(__u64 i, struct walk_ctx *w)
{
	if (i + 1 < STACK_MAX_DEPTH) {
		w->ips[i + 1] = STACK_FP_BROKEN;
		w->nr = i + 2;
	} else if (i < STACK_MAX_DEPTH) {
		w->ips[i] = STACK_FP_BROKEN;
	}
}

/* Step i reads frame i + 1. It uses the step's index rather than a count kept in w: the
 * verifier would follow such a count's exact value step by step and never converge. A saved
 * frame pointer of 0 is the outermost frame's (the ABI's end of the chain: _start's, a new
 * thread's); any other that cannot be a frame ends the walk as broken. */
static __always_inline long walk_frame_at(__u64 i, struct walk_ctx *w)
{
	struct frame_rec frame;
	__u64 fp = w->fp;

	/* the bound on the very register that indexes ips */
	asm volatile("" : "+r"(i));
	if (!fp || i >= STACK_MAX_DEPTH)
		return 1;
	if (fp < 4096 || (fp & 7) || fp < w->prev || i >= STACK_MAX_DEPTH - 1 ||
	    read_frame(fp, &frame)) {
		walk_broken(i, w);
		return 1;
	}
	w->ips[i + 1] = frame.ret;
	w->nr = i + 2;
	w->prev = fp + sizeof(frame);
	w->fp = frame.next;
	return 0;
}

/* bpf_loop's steps from the third frame on */
static long walk_frame(__u64 i, void *data)
{
	return walk_frame_at(i + WALK_INLINE, data);
}

/* The walk once ips[0] and ips[1] are in (w->nr == 2, w->fp the second frame's record). */
static __always_inline __u64 walk_on(struct walk_ctx *w)
{
	if (walk_frame_at(1, w))
		return w->nr;
	/* steps WALK_INLINE..STACK_MAX_DEPTH - 1: the last reads no frame, it only ends a
	 * chain that goes on past the depth limit as broken */
	bpf_loop(STACK_MAX_DEPTH - WALK_INLINE, walk_frame, w, 0);
	return w->nr;
}

/* ips[0] = ip, then the chain from frame pointer fp, every frame above sp. Returns the number
 * of addresses in ips. The first WALK_INLINE frames are read inline: bpf_loop's callback is an
 * indirect call per step (a retpoline here), and the walk from a hot site often ends within
 * them. fp is the live %rbp here, not a saved one: 0 says that no function on the stack has
 * set up a frame (a thread starts with %rbp 0, and code without frame pointers leaves it so),
 * not that ip is the outermost frame: the stack ends in STACK_FP_BROKEN after ip. Before, such
 * a stack was ip alone, shown whole (a lock wait in libc called from code without frame
 * pointers: futex_wait, __lll_lock_wait and nothing under them, no [truncated]). */
static __always_inline __u64 walk_stack(__u64 *ips, __u64 ip, __u64 fp, __u64 sp)
{
	struct walk_ctx w = { .ips = ips, .fp = fp, .prev = sp, .nr = 1 };

	ips[0] = ip;
	if (!fp) {
		walk_broken(0, &w);
		return w.nr;
	}
	if (walk_frame_at(0, &w))
		return w.nr;
	return walk_on(&w);
}

#include "bpf/lib/unwind.bpf.h"

/* ips from user registers as they are at ip (for a return address: as after the return): by
 * call frame information when the process has tables (unwind_user), else frame pointers;
 * *by_tables (may be NULL) says which. */
static __always_inline __u64 walk_user_regs_leaf(__u64 *ips, __u64 ip, __u64 fp, __u64 sp,
						 struct pt_regs *leaf, bool *by_tables)
{
	long n = unwind_user_leaf(ips, ip, sp, fp, leaf);

	if (by_tables)
		*by_tables = n >= 0;
	if (n >= 0)
		return (__u64)n;
	return walk_stack(ips, ip, fp, sp);
}

/* leaf: the first frame's registers when known (for a frame whose CFA is in rbx, rdi, rdx) */
static __always_inline __u64 walk_user_regs_by(__u64 *ips, __u64 ip, __u64 fp, __u64 sp,
					       bool *by_tables)
{
	return walk_user_regs_leaf(ips, ip, fp, sp, NULL, by_tables);
}

static __always_inline __u64 walk_user_regs(__u64 *ips, __u64 ip, __u64 fp, __u64 sp)
{
	return walk_user_regs_by(ips, ip, fp, sp, NULL);
}

/* From a set of user registers: the instruction pointer, then the caller chain. */
static __always_inline __u64 walk_user_stack(struct pt_regs *regs, __u64 *ips)
{
	return walk_user_regs(ips, PT_REGS_IP(regs), PT_REGS_FP(regs), PT_REGS_SP(regs));
}

/* The current task's user registers as it last entered the kernel, or as they are now when
 * the program runs on a user-mode interrupt (a perf event that hit user code): ctx_regs, the
 * program's own registers, when they are user mode. NULL for a kernel thread. *exact: the
 * instruction pointer is where the task was, not the return address of a syscall (symbolize it
 * as it is, not at ip - 1): the program's own user-mode registers, or a task that entered the
 * kernel by an interrupt or an exception (orig_ax -1, the kernel's "no syscall": a timer's
 * preemption, a page fault), whose ip is the instruction it was about to run. That may be a
 * function's first, right after a call: ip - 1 is then the function before it in the text, a
 * wrong frame under a right stack (the unwinder looks up the first frame at ip itself). */
static __always_inline struct pt_regs *user_regs(struct pt_regs *ctx_regs, bool *exact)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;

	*exact = false;
	if (task->flags & 0x00200000 /* PF_KTHREAD */)
		return NULL;
	if (ctx_regs && (BPF_CORE_READ(ctx_regs, cs) & 3)) {
		*exact = true;
		return ctx_regs;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	*exact = BPF_CORE_READ(regs, orig_ax) == (unsigned long)-1;
	return regs;
}

/* The current task's user stack into s->ips, from regs (see user_regs): by tables or frame
 * pointers (walk_user_regs_by; *by_tables, may be NULL, says which). Returns the number of
 * frames (0: no user stack). */
static __always_inline __u64 capture_user_stack_by(struct pt_regs *regs, struct stack_trace *s,
						   bool *by_tables)
{
	__u64 ip;

	if (by_tables)
		*by_tables = false;
	if (!regs)
		return 0;
	ip = BPF_CORE_READ(regs, ip);
	if (!ip)
		return 0;
	return walk_user_regs_leaf(s->ips, ip, BPF_CORE_READ(regs, bp), BPF_CORE_READ(regs, sp),
				   regs, by_tables);
}

static __always_inline __u64 capture_user_stack(struct pt_regs *regs, struct stack_trace *s)
{
	return capture_user_stack_by(regs, s, NULL);
}

/* The kernel stack at ctx (a tracepoint's, a perf event's) into s->ips. Returns the number of
 * frames, 0 when there is none (the event hit user mode) or it could not be read. */
static __always_inline __u64 capture_kernel_stack(void *ctx, struct stack_trace *s)
{
	long n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), 0);

	return n > 0 ? (__u64)n / sizeof(__u64) : 0;
}

/* s->nr = nr and the hash of s's first nr frames and seed, never 0: one seed's stacks are
 * another's only by a collision of the 64-bit hash */
static __always_inline __u64 stack_hash_seeded(struct stack_trace *s, __u64 nr, __u64 seed)
{
	__u64 h;

	s->nr = nr;
	h = 0x9e3779b97f4a7c15ULL ^ nr ^ seed << 8;	/* nr < 2^8 */
	for (int i = 0; i < STACK_MAX_DEPTH; i++) {
		if (i >= nr)
			break;
		h ^= s->ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h ? h : 1;
}

/* s->nr = nr and the hash of s's first nr frames, never 0 */
static __always_inline __u64 stack_hash(struct stack_trace *s, __u64 nr)
{
	return stack_hash_seeded(s, nr, 0);
}

struct stack_hash_ctx {
	struct stack_trace *s;
	__u64 h;
};

static long stack_hash_step(__u64 i, void *ctx)
{
	struct stack_hash_ctx *c = ctx;

	if (i >= STACK_MAX_DEPTH)
		return 1;
	c->h ^= c->s->ips[i];
	c->h *= 0xff51afd7ed558ccdULL;
	c->h ^= c->h >> 33;
	return 0;
}

/* The same hash as bpf_loop steps: the verifier checks one step, not each of up to 127
 * iterations (cpu's intern_stack: ~1,300 of the ~8,000 instructions it processed), for a
 * call per frame at run time: for a program that runs seldom (a sample), not per event. */
static __always_inline __u64 stack_hash_loop(struct stack_trace *s, __u64 nr)
{
	struct stack_hash_ctx c = { .s = s, .h = 0x9e3779b97f4a7c15ULL ^ nr };

	s->nr = nr;
	bpf_loop(nr < STACK_MAX_DEPTH ? nr : STACK_MAX_DEPTH, stack_hash_step, &c, 0);
	return c.h ? c.h : 1;
}

/* s (its hash h) into stacks_map unless known (a hash already interned, e.g. the thread's
 * previous stack) or there already. Returns h; 0 only when the map is full (the caller counts
 * that drop). */
static __always_inline __u64 stack_intern_hashed(void *stacks_map, struct stack_trace *s,
						 __u64 h, __u64 known)
{
	if (h != known && !bpf_map_lookup_elem(stacks_map, &h)) {
		long err = bpf_map_update_elem(stacks_map, &h, s, BPF_NOEXIST);

		if (err && err != -17 /* EEXIST: another thread interned it */)
			return 0;
	}
	return h;
}

/* Intern the first nr frames of s in stacks_map by hash; s->nr is set. Returns the hash, never
 * 0; 0 only when the map is full (the caller counts that drop). known: a hash already interned
 * (e.g. the thread's previous stack), or 0. */
static __always_inline __u64 stack_intern(void *stacks_map, struct stack_trace *s, __u64 nr,
					  __u64 known)
{
	return stack_intern_hashed(stacks_map, s, stack_hash(s, nr), known);
}

#endif
