// SPDX-License-Identifier: GPL-2.0
/* ebprof cpu: kernel side. One perf_event program, attached to a software cpu-clock event on
 * each sampled CPU; it runs in the timer interrupt, on whatever task the CPU was running.
 *
 * Everything aggregates here: each sample adds 1 to its process's total (`procs`: exact, whatever
 * room the stack tables have), then to a counter keyed by (process, thread with --per-thread,
 * user stack hash, kernel stack hash), both stacks interned in one `stacks` map.
 * Nothing is sent per sample; userspace reads the counters once, at the end. The only record
 * ever sent (-a only) announces a process seen for the first time, so that userspace can
 * snapshot its mappings while it still exists.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/cpu.h"
/* 99 samples a second a CPU: the identity check's six reads cost less than verifying its BTF
 * pointer loads at every start (unwind.bpf.h, unwind_cur_ident) */
#define UNWIND_IDENT_BY_READS
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/tname.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* -a: every task, kernel threads included, instead of the processes in `targets` */
const volatile bool trace_all = false;
/* the CPUs' idle tasks (pid 0) too */
const volatile bool with_idle = false;
/* key samples by thread, not only by process */
const volatile bool per_thread = false;

/* Traced processes (tgid), filled by userspace before their samples count. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* The traced processes' address spaces as their last sample saw them (abi/cpu.h: CPU_MM_*):
 * userspace makes each entry at attach, a sample only writes it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} mm_marks SEC(".maps");

/* The hash maps the program inserts into are preallocated: it runs in the timer interrupt,
 * where the allocator behind BPF_F_NO_PREALLOC can run dry in a burst of new stacks and fail
 * the insert (it did, about once a run, on this machine). */
/* --max-stacks; both tables below are taken out at each spill or window, twice over
 * (bpf/lib/take.bpf.h) */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct stack_key, __u64, 1 << 14);

/* Each process's total (by tgid): its row in the report and its share, exact whatever the
 * counts and stacks tables kept; preallocated as they are (sized by the collector). */
TAKE_TABLE(procs, BPF_MAP_TYPE_HASH, __u32, struct cpu_proc, 1 << 15);

/* User and kernel stacks, interned by a 64-bit hash of their frames. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);		/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* Names of the processes seen (by tgid); threads' (--per-thread) are in thread_names. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);
	__type(key, __u32);
	__type(value, struct cpu_comm);
} comms SEC(".maps");

/* -a: processes seen for the first time (struct cpu_note). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPU_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Per-CPU scratch: a stack is 1 KiB, too big for the program's stack. The program cannot nest
 * on one CPU (the kernel skips a perf event program while another BPF program runs there). */
struct scratch {
	struct stack_trace user;
	struct stack_trace kern;
	struct pt_regs regs;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline void count_stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);

	if (n)
		(*n)++;
}

/* The sample in its process's total, before and whatever the stack-keyed count: a lookup and an
 * atomic add, an insert at a process's first sample (or first since a spill took the table). */
static __always_inline void count_proc(__u32 tgid, __u32 g)
{
	static const struct cpu_proc zero;
	struct cpu_proc *p;
	bool made;

	p = lookup_or_make(take_table(procs, g), &tgid, &zero, &made);
	if (made)
		count_stat(CPU_STAT_PROC_KEYS);
	if (p)
		__sync_fetch_and_add(&p->samples, 1);
	else
		count_stat(CPU_STAT_PROCS_FULL);
}

/* At a key's first sample (rare: once per distinct stack): remember the names, and in -a
 * announce a process never seen before (the note wakes the collector, which snapshots its
 * mappings at once: a process living 20 ms is gone by the next tick). */
static __always_inline void first_sample(struct task_struct *task, __u32 tgid, __u32 tid,
					 __u32 gen)
{
	struct cpu_comm c = {};
	struct cpu_note note = { .tgid = tgid };

	if (per_thread && !thread_name_keep(task, tid, gen))
		count_stat(CPU_STAT_TNAMES_FULL);
	/* the leader's name is the process's; the latest wins (a process may exec) */
	BPF_CORE_READ_STR_INTO(&c.comm, task, group_leader, comm);
	c.start = proc_start(task);
	if (bpf_map_lookup_elem(&comms, &tgid)) {
		bpf_map_update_elem(&comms, &tgid, &c, BPF_EXIST);
		return;
	}
	if (bpf_map_update_elem(&comms, &tgid, &c, BPF_NOEXIST) || !trace_all || !tgid)
		return;
	if (bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
		count_stat(CPU_STAT_NOTES_FULL);
}

/* -a: a sample of a process that is not the one its PID's entry was made by: the kernel gave
 * the PID again (bpf/lib/pidreuse.bpf.h). One row sums them, under the newest's name: its
 * entry is renamed and the process announced again (its mappings and command line read). */
static __always_inline void check_reuse(struct task_struct *task, __u32 tgid)
{
	struct cpu_comm *c = bpf_map_lookup_elem(&comms, &tgid);
	int r = c ? pid_reuse_check(&notes, &c->comm, &c->start, task, tgid) : 0;

	if (r)
		count_stat(CPU_STAT_PIDS_REUSED);
	if (r < 0)
		count_stat(CPU_STAT_NOTES_FULL);
}

/* The mm's write-lock sequence (struct mm_struct's mm_lock_seq, a seqcount_t since 6.12 with
 * per-VMA locks): taken for writing by every change of the mappings. Local flavours, so that a
 * kernel without it (or with 6.4-6.11's int) loads the program and reports CPU_MM_UNKNOWN. */
struct seqcount___ebprof {
	unsigned int sequence;
} __attribute__((preserve_access_index));

struct mm_struct___ebprof {
	struct seqcount___ebprof mm_lock_seq;
} __attribute__((preserve_access_index));

static __always_inline void mark_mm(struct task_struct *task, __u32 tgid)
{
	__u64 *m = bpf_map_lookup_elem(&mm_marks, &tgid), v = CPU_MM_UNKNOWN, mm;

	if (!m)
		return;
	if (bpf_core_field_exists(struct mm_struct___ebprof, mm_lock_seq.sequence)) {
		/* read as a number (the verifier allows no arithmetic on the pointer) */
		mm = (__u64)BPF_CORE_READ(task, mm);
		if (mm)
			v = CPU_MM_SEEN | (mm >> 6) << 32 |
			    BPF_CORE_READ((struct mm_struct___ebprof *)mm, mm_lock_seq.sequence);
	}
	if (*m != v)
		*m = v;
}

/* Both stacks are interned through this global function: the verifier checks a global
 * function once, where stack_intern inlined twice had its 127-step hash loop checked twice
 * (5879 -> 2253 instructions processed, bpftool prog loadall -d); the hash as bpf_loop steps,
 * checked once (a sample is rare: a call per frame costs nothing that counts). */
__noinline __u64 intern_stack(struct stack_trace *s, __u64 nr)
{
	if (!s)
		return 0;
	return stack_intern_hashed(&stacks, s, stack_hash_loop(s, nr), 0);
}

/* -a: a process seen before that execs takes its new program's name and is announced again
 * (its new mappings read at once): it kept its first name (a script that exec'd python3 was
 * the script, python3's frames bare addresses) */
SEC("?tp_btf/sched_process_exec")
int BPF_PROG(cpu_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct cpu_note note = { .tgid = tgid, .exec = 1 };
	struct cpu_comm *c = bpf_map_lookup_elem(&comms, &tgid);

	if (!c || !trace_all)
		return 0;
	bpf_get_current_comm(c->comm, sizeof(c->comm));
	if (bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
		count_stat(CPU_STAT_NOTES_FULL);
	return 0;
}

/* --per-thread: a traced thread renamed (it, or another thread through /proc, or an exec): its
 * samples from now on are keyed and named apart (bpf/lib/tname.bpf.h). */
SEC("?tp_btf/task_rename")
int BPF_PROG(cpu_rename, struct task_struct *task, const char *comm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (trace_all || bpf_map_lookup_elem(&targets, &tgid))
		thread_renamed(task);
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task;
	struct stack_key key = {};
	struct scratch *sc;
	struct pt_regs *regs;
	__u64 n, one = 1, *v;
	__u32 g = take_gen_now();	/* the sample's tables, both of one generation */
	void *counts;
	bool exact;
	long err;

	if (tid == 0) {
		/* the idle task: only on request, and only system-wide */
		if (!with_idle || !trace_all)
			return 0;
	} else if (!trace_all && !bpf_map_lookup_elem(&targets, &tgid)) {
		return 0;
	}
	count_stat(CPU_STAT_SAMPLES);
	count_proc(tgid, g);
	task = bpf_get_current_task_btf();
	if (!trace_all)
		mark_mm(task, tgid);
	else if (tgid)
		check_reuse(task, tgid);
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;

	key.tgid = tgid;
	if (per_thread) {
		key.aux = tid;
		key.gen = thread_gen(task);
	}
	n = capture_kernel_stack(ctx, &sc->kern);
	if (n) {
		key.kstack = intern_stack(&sc->kern, n);
		if (!key.kstack)
			count_stat(CPU_STAT_STACKS_FULL);
	}
	/* the interrupted registers, when they are user mode, are the user stack's start: only
	 * the fields the walk reads (the context is not plain memory to pass around) */
	/* cs read whole: the context allows no narrower load of a register, and the kernel's
	 * struct calls the 64-bit slot's low half cs */
	sc->regs.cs = (__u16)*(volatile __u64 *)&ctx->regs.cs;
	sc->regs.ip = ctx->regs.ip;
	sc->regs.sp = ctx->regs.sp;
	sc->regs.bp = ctx->regs.bp;
	/* for a first frame whose CFA is in one of them (ld.so's _dl_runtime_resolve) */
	sc->regs.bx = ctx->regs.bx;
	sc->regs.di = ctx->regs.di;
	sc->regs.dx = ctx->regs.dx;
	regs = user_regs(&sc->regs, &exact);
	n = capture_user_stack(regs, &sc->user);
	if (n) {
		key.ustack = intern_stack(&sc->user, n);
		if (!key.ustack)
			count_stat(CPU_STAT_STACKS_FULL);
		if (exact)
			key.flags = STACK_KEY_USER_EXACT;
	}

	counts = take_table(counts, g);
	v = bpf_map_lookup_elem(counts, &key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return 0;
	}
	first_sample(task, tgid, tid, key.gen);
	err = bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST);
	if (!err) {
		count_stat(CPU_STAT_KEYS);
		return 0;
	}
	/* another CPU made the key meanwhile */
	v = bpf_map_lookup_elem(counts, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		count_stat(CPU_STAT_COUNTS_FULL);
	return 0;
}
