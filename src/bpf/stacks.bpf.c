// SPDX-License-Identifier: GPL-2.0
/* ebprof stacks: count the user and kernel stacks of the traced processes each time one of the
 * run's events fires (a raw tracepoint, a syscall's entry or exit, a classic tracepoint, a
 * uprobe). One program per kind of probe; each attachment's BPF cookie is its event's index
 * (raw tracepoints take cookies through BPF_RAW_TRACEPOINT_OPEN since 6.10, which libbpf 1.1
 * has no API for: the collector opens them itself). Counts are aggregated here, per (process,
 * event, user stack, kernel stack); userspace reads them once a process or the run ends. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/stacks.h"
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 self_tgid;	/* ebprof itself: never counted, even with -a */
/* 32-bit system calls are counted (compat_calls) at sys_exit: the run has no sys_enter event */
const volatile bool compat_at_exit;

/* Set by the collector through the mmapped .bss: -a, and the end of tracing (stop), which
 * turns every program into an early return without the slow detach. */
bool trace_all;
bool stopped;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u32);		/* its uprobes' generation (STACKS_COOKIE_GEN) */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* --max-stacks; taken out at each spill (bpf/lib/take.bpf.h) */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct stack_key, __u64, 1);

/* The name of each process when its first stack was counted: with -a, processes are known
 * only from here, and may be gone by the time they are read. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);
	__type(value, struct stacks_comm);
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STACKS_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* [0]: keys made in `counts` (per CPU): the collector takes them out before the table fills */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} keys_made SEC(".maps");

/* -a: processes announced (struct stacks_note): sized by the collector */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} notes SEC(".maps");

/* [0]: 32-bit system calls of the traced processes, counted under no syscalls: event (per CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} compat_calls SEC(".maps");

/* [0]: events of a traced thread going into a ptrace stop of ebprof's (a launched tree's
 * processes held at their forks, execs and exits: sched_switch's): ebprof's, not counted */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} held_events SEC(".maps");

/* [0]: -a: events of a process that met the name entry (comms) of another one with its PID
 * (bpf/lib/pidreuse.bpf.h): the PID given again, its rows one under the newest's name (per CPU) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pids_reused SEC(".maps");

/* Every hit per event, counted before any table can be full: the exact totals. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STACKS_MAX_EVENTS);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stacks_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, STACKS_SC_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} sc_events SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		*n += 1;
}

/* -a: the event's process is not the one its PID's name entry was made by: the kernel gave the
 * PID again. Its rows (counts keyed by tgid) are one, under the newest's name: the entry is
 * renamed and the process announced again (its mappings and command line read). */
static __always_inline void check_reuse(__u32 tgid)
{
	struct stacks_comm *c = bpf_map_lookup_elem(&comms, &tgid);
	int r = c ? pid_reuse_check(&notes, &c->comm, &c->start, bpf_get_current_task_btf(),
				    tgid) : 0;
	__u32 zero = 0;
	__u64 *n;

	if (!r)
		return;
	n = bpf_map_lookup_elem(&pids_reused, &zero);
	if (n)
		*n += 1;
	if (r < 0)
		count_drop(STACKS_DROP_NOTES_FULL);
}

/* A user stack at a function's entry (a uprobe): its caller's return address is still at *sp,
 * and %rbp still holds the caller's frame, whose record leads to the caller's caller. */
static __always_inline __u64 capture_entry_stack(struct pt_regs *regs, struct stack_trace *s)
{
	struct walk_ctx w = { .ips = s->ips, .nr = 1 };
	/* the registers read once, before the call (clang may address the context through a
	 * register after it, which the verifier refuses) */
	__u64 sp = PT_REGS_SP(regs), ip = PT_REGS_IP(regs), fp = PT_REGS_FP(regs), ret;
	long n = unwind_user(s->ips, ip, sp, fp);

	if (n >= 0)
		return (__u64)n;	/* by tables: the registers are the function's own */
	s->ips[0] = ip;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) || !ret)
		return 1;
	s->ips[1] = ret;
	w.nr = 2;
	w.fp = fp;
	w.prev = sp + sizeof(ret);
	return walk_on(&w);
}

/* ctx: the program's context, for the kernel stack; uregs: the uprobe's registers, or NULL.
 * cookie: the event's index, and for a process's uprobe the generation it was attached in. */
static __always_inline int record(void *ctx, struct pt_regs *uregs, __u64 cookie)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0, ev = STACKS_COOKIE_EVENT(cookie);
	__u32 gen = STACKS_COOKIE_GEN(cookie), *tgen;
	struct stack_key key = { .tgid = tgid, .aux = ev };
	struct stacks_scratch *s;
	struct pt_regs *regs;
	__u64 *n, nr, one = 1;
	void *counts;
	bool exact;

	if (stopped || ev >= STACKS_MAX_EVENTS)
		return 0;
	if (trace_all) {
		if (tgid == self_tgid)
			return 0;
		check_reuse(tgid);
	} else {
		tgen = bpf_map_lookup_elem(&targets, &tgid);
		/* a uprobe of the process's image before its exec, whose link closes later (the
		 * same function in its new image fired both), or of the parent a vfork child
		 * runs in the memory of: the process's current probes count it */
		if (!tgen || (gen && *tgen != gen))
			return 0;
		/* (-a follows no tree: ebprof holds nothing there) */
		if (!uregs) {
			struct task_struct *t = bpf_get_current_task_btf();
			__u32 st = BPF_CORE_READ(t, __state);

			if (held_by_tracer(t, st, self_tgid)) {
				n = bpf_map_lookup_elem(&held_events, &zero);
				if (n)
					*n += 1;
				return 0;
			}
		}
	}
	n = bpf_map_lookup_elem(&hits, &ev);
	if (n)
		*n += 1;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;

	if (!uregs) {
		nr = capture_kernel_stack(ctx, &s->kern);
		if (nr) {
			key.kstack = stack_intern(&stacks, &s->kern, nr, 0);
			if (!key.kstack)
				count_drop(STACKS_DROP_STACKS_FULL);
		}
	}
	/* a uprobe's registers are the user's own (and a context pointer, which the verifier
	 * will not see one instruction load alongside the task's saved registers) */
	if (uregs) {
		nr = capture_entry_stack(uregs, &s->user);
	} else {
		regs = user_regs(NULL, &exact);
		nr = capture_user_stack(regs, &s->user);
		if (exact)
			key.flags = STACK_KEY_USER_EXACT;
	}
	if (nr) {
		key.ustack = stack_intern(&stacks, &s->user, nr, 0);
		if (!key.ustack)
			count_drop(STACKS_DROP_STACKS_FULL);
	}

	counts = take_table(counts, take_gen_now());
	n = bpf_map_lookup_elem(counts, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
		return 0;
	}
	/* a new (process, event, stacks): the rare path, where the process's name is noted */
	if (bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(counts, &key);	/* another CPU inserted it */
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			count_drop(STACKS_DROP_COUNTS_FULL);
		return 0;
	}
	n = bpf_map_lookup_elem(&keys_made, &zero);
	if (n)
		*n += 1;
	if (!bpf_map_lookup_elem(&comms, &tgid)) {
		struct stacks_comm c = { .start = proc_start(bpf_get_current_task_btf()) };
		struct stacks_note note = { .tgid = tgid };

		bpf_get_current_comm(c.comm, sizeof(c.comm));
		/* -a: announced, waking the collector, which reads its mappings before it can
		 * exit (read each second, 99.6% of a shell loop's stacks were bare addresses) */
		if (!bpf_map_update_elem(&comms, &tgid, &c, BPF_NOEXIST) && trace_all &&
		    bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
			count_drop(STACKS_DROP_NOTES_FULL);
	}
	return 0;
}

/* A process seen before that execs takes its new program's name (with -a it is announced again,
 * its new mappings read): its name stayed the one of its first event, the shell's before a
 * redirection's open (200 execs of wc counted as the script's; a launched shell's background
 * job, which opens /dev/null before its exec, as the shell) */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(stacks_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct stacks_note note = { .tgid = tgid, .exec = 1 };
	struct stacks_comm *c = bpf_map_lookup_elem(&comms, &tgid);

	if (!c || stopped)
		return 0;
	bpf_get_current_comm(c->comm, sizeof(c->comm));
	if (trace_all && bpf_ringbuf_output(&notes, &note, sizeof(note), 0))
		count_drop(STACKS_DROP_NOTES_FULL);
	return 0;
}

/* A tracepoint with a btf_trace_ type, through BPF_RAW_TRACEPOINT_OPEN with a cookie. */
SEC("?raw_tp")
int stacks_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	return record(ctx, NULL, bpf_get_attach_cookie(ctx));
}

/* A 32-bit system call: its number is not the x86_64 one the events are keyed by
 * (in_compat_syscall). No event counts it, as the kernel's syscall tracepoints do not; a traced
 * process's is counted once (at its entry, or at its exit in a run without sys_enter events), so
 * that the report says how many there were. */
static __always_inline void compat_call(bool at_exit)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	__u64 *n;

	if (stopped || at_exit != compat_at_exit)
		return;
	if (trace_all ? tgid == self_tgid : !bpf_map_lookup_elem(&targets, &tgid))
		return;
	n = bpf_map_lookup_elem(&compat_calls, &zero);
	if (n)
		*n += 1;
}

/* syscalls:sys_enter_X: the raw sys_enter tracepoint (no tracefs), by syscall number */
SEC("?raw_tp/sys_enter")
int stacks_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 slot = (__u32)ctx->args[1], *ev;

	if (in_compat_syscall()) {
		compat_call(false);
		return 0;
	}
	if (slot >= STACKS_MAX_SYSCALLS)
		return 0;
	ev = bpf_map_lookup_elem(&sc_events, &slot);
	if (!ev || !*ev)
		return 0;
	return record(ctx, NULL, *ev - 1);
}

SEC("?raw_tp/sys_exit")
int stacks_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u32 slot = (__u32)BPF_CORE_READ(regs, orig_ax), *ev;

	if (in_compat_syscall()) {
		compat_call(true);
		return 0;
	}
	if (slot >= STACKS_MAX_SYSCALLS)
		return 0;
	slot += STACKS_MAX_SYSCALLS;
	ev = bpf_map_lookup_elem(&sc_events, &slot);
	if (!ev || !*ev)
		return 0;
	return record(ctx, NULL, *ev - 1);
}

/* A classic tracepoint through tracefs (no btf_trace_ type); cookie through the perf event. */
SEC("?tracepoint")
int stacks_tp(void *ctx)
{
	return record(ctx, NULL, bpf_get_attach_cookie(ctx));
}

/* u:PATH:SYMBOL */
SEC("?uprobe")
int stacks_uprobe(struct pt_regs *ctx)
{
	return record(ctx, ctx, bpf_get_attach_cookie(ctx));
}
