/* The offcpu mode collector.
 *
 * The BPF programs (bpf/offcpu.bpf.c) are attached at open to the scheduler's tracepoints for
 * the whole run and count nothing until tracing starts (the first attach). Every interval a
 * traced thread spends off-CPU, from its switch-out to its switch-in, is added in the kernel to
 * the counter of its stacks at the switch-out (with --wakers, and of its waker's stacks); the
 * time from its wakeup (or preemption) to its switch-in goes to its process's run-queue
 * histogram. Each wait is added first to its process's totals (the kernel's `procs`), which
 * are the process rows whatever the counters kept (a full count table costs waits their stacks,
 * not their processes' numbers). Userspace reads the tables at the end (and a process's counters
 * at an exec, while its old program's mappings exist): counters become samples, totals the
 * process rows, histograms the profile's groups.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/cgthrottle.h"
#include "core/collector.h"
#include "core/session.h"
#include "core/minbtf.h"
#include "core/procs.h"
#include "core/stacks.h"
#include "core/unwind.h"
#include "core/window.h"
#include "core/target.h"
#include "modes/offcpu/collect.h"
#include "output/render.h"
#include "profile/profile.h"
#include "util/util.h"
#include "offcpu.skel.h"

#define MAX_TARGETS	8192	/* traced processes at once (a launched tree) */
#define MAX_COMMS	32768	/* processes named (-a sees every one) */
#define MAX_RUNQ	4096	/* processes with a run-queue histogram between two spills or
				 * windows */
#define MAX_PROCS	32768	/* processes with totals between two spills or windows */
#define MAX_LOCS	(3 + 4 * STACK_MAX_DEPTH)
#define MAX_VALS	8

static const char *const stat_names[OFFCPU_STAT__COUNT] = {
	[OFFCPU_STAT_SWITCHES] = "switches",
	[OFFCPU_STAT_FILTERED] = "filtered",
	[OFFCPU_STAT_HELD] = "held_by_ebprof",
	[OFFCPU_STAT_HELD_NS] = "held_by_ebprof_ns",
	[OFFCPU_STAT_KEYS] = "keys",
	[OFFCPU_STAT_RQ_KEYS] = "runq_keys",
	[OFFCPU_STAT_PROC_KEYS] = "process_keys",
	[OFFCPU_STAT_BEGUN] = "begun_before_start",
	[OFFCPU_STAT_PIDS_REUSED] = "pids_reused",
	[OFFCPU_STAT_THREADS_FULL] = "thread_table_full",
	[OFFCPU_STAT_STACKS_FULL] = "stack_table_full",
	[OFFCPU_STAT_COUNTS_FULL] = "count_table_full",
	[OFFCPU_STAT_PROCS_FULL] = "process_totals_full",
	[OFFCPU_STAT_RQ_FULL] = "runq_table_full",
	[OFFCPU_STAT_NOTES_FULL] = "process_notes_lost",
	[OFFCPU_STAT_SWITCH_IN_UNSEEN] = "switch_in_unseen",
	[OFFCPU_STAT_EXIT_UNSEEN] = "exit_unseen",
	[OFFCPU_STAT_TNAMES_FULL] = "thread_names_full",
	[OFFCPU_STAT_WAKER_UNSEEN] = "waker_unseen",
};

struct rq_entry {
	__u32 tgid;
	struct offcpu_rq v;
};

/* Run-queue latencies by process, summed over reads (a spill takes the kernel's table out). */
struct rq_read {
	struct rq_entry *e;
	size_t n, cap;
	struct pid_index at;	/* tgid -> its entry's index + 1 */
};

struct offcpu_collector {
	struct collector base;		/* first: the shared hooks take the collector */
	struct session_env env;
	struct offcpu_opts opts;
	const struct log_ctx *lc;
	struct offcpu_bpf *skel;
	bool started, stopped;
	uint64_t stop_ns;
	uint64_t off_at_end;		/* threads still off-CPU when tracing stopped */
	uint64_t open_lost;		/* of them, in no stack: the count table was full (a
					 * count_table_full drop) */
	uint64_t open_procs_lost;	/* of them, in no process's totals: the procs table was
					 * full (a process_totals_full drop) */
	uint32_t max_runq;		/* the run-queue table's room (MAX_RUNQ; tests: less) */
	uint32_t max_procs;		/* the procs table's room (MAX_PROCS; tests: less) */
	/* --wakers: waker stacks (one per site) of a process gone before its note was read whose
	 * parent's mappings were not shown to be its own (core/procs.h), by why */
	uint64_t parent_unproven[PROC_PARENT_CODE + 1];
	uint64_t window_ns;		/* CLOCK_MONOTONIC at the start of the window (0: the run's) */
	uint64_t window_stats[OFFCPU_STAT__COUNT];	/* the counters then */
	struct rq_read rq;		/* run-queue latencies the spills took out */
	/* each target's cgroup's CPU quota throttling when it was attached (-p, a launched
	 * command, a child of a traced tree; again at an exec, only if it is in another cgroup
	 * by then): its process's counts in the run are the difference at the end */
	struct cg_start {
		pid_t pid;
		struct cg_throttle t;
	} *cg;
	size_t ncg;
	struct pid_index cg_at;		/* pid -> its cg index + 1 */
};

/* ---- --state ---------------------------------------------------------------------------- */

int offcpu_parse_states(const char *s, uint32_t *states)
{
	char buf[64], *tok, *save = NULL;

	if (!s || !*s || strlen(s) >= sizeof(buf))
		return -1;
	if (!strcmp(s, "all")) {
		*states = OFFCPU_STATE_ALL;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	*states = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "S"))
			*states |= OFFCPU_STATE_S;
		else if (!strcmp(tok, "D"))
			*states |= OFFCPU_STATE_D;
		else if (!strcmp(tok, "R"))
			*states |= OFFCPU_STATE_R;
		else
			return -1;
	}
	return *states ? 0 : -1;
}

const char *offcpu_states_name(uint32_t states, char *buf, size_t len)
{
	size_t n = 0;

	if (states == OFFCPU_STATE_ALL) {
		snprintf(buf, len, "all");
		return buf;
	}
	buf[0] = 0;
	if (states & OFFCPU_STATE_S)
		n += snprintf(buf + n, len - n, "%sS", n ? "," : "");
	if ((states & OFFCPU_STATE_D) && n < len)
		n += snprintf(buf + n, len - n, "%sD", n ? "," : "");
	if ((states & OFFCPU_STATE_R) && n < len)
		snprintf(buf + n, len - n, "%sR", n ? "," : "");
	return buf;
}

/* ---- open ------------------------------------------------------------------------------- */

static void offcpu_close(void *m);

/* The sample types of an offcpu profile of its own: the run's, or a window's (value index 0:
 * the time, 1: the switches, 2: of the time, the part runnable, waiting for a CPU). */
static int set_types(struct profile *prof)
{
	int err = profile__add_type(prof, "offcpu", "nanoseconds");

	err = err ?: profile__add_type(prof, "switches", "count");
	err = err ?: profile__add_type(prof, "runnable", "nanoseconds");
	/* a process's row is its exact totals (the kernel's `procs`), not what the count table
	 * kept */
	err = err ?: profile__set_type_proc_stat(prof, "offcpu", "offcpu_ns");
	err = err ?: profile__set_type_proc_stat(prof, "switches", "switches");
	err = err ?: profile__set_type_proc_stat(prof, "runnable", "runnable_ns");
	return err ?: profile__set_default_type(prof, "offcpu");
}

/* What refers to stacks when the stacks map is emptied (collector__reclaim): the waits going
 * on (their own stacks and their wakers': they count at their end), then the counts made since
 * the last take; in this order, so that a wait that ends meanwhile is in one or the other. */
#define OFFCPU_COUNTS_REFS(map_fd)								\
	{ .fd = (map_fd), .key_size = sizeof(struct offcpu_key),				\
	  .val_size = sizeof(struct offcpu_val), .n = 4,					\
	  .at = { STACK_REF_KEY(struct offcpu_key, stack.ustack),				\
		  STACK_REF_KEY(struct offcpu_key, stack.kstack),				\
		  STACK_REF_KEY(struct offcpu_key, wustack),					\
		  STACK_REF_KEY(struct offcpu_key, wkstack) } }

static void set_stacks(struct offcpu_collector *c)
{
	struct stack_ref_map refs[3] = {
		{ .fd = bpf_map__fd(c->skel->maps.threads), .key_size = sizeof(__u32),
		  .val_size = sizeof(struct offcpu_thread), .n = 4,
		  .at = { STACK_REF_VAL(__u32, struct offcpu_thread, key.stack.ustack),
			  STACK_REF_VAL(__u32, struct offcpu_thread, key.stack.kstack),
			  STACK_REF_VAL(__u32, struct offcpu_thread, key.wustack),
			  STACK_REF_VAL(__u32, struct offcpu_thread, key.wkstack) } },
		OFFCPU_COUNTS_REFS(bpf_map__fd(c->skel->maps.counts_0)),
		/* both generations (bpf/lib/take.bpf.h) */
		OFFCPU_COUNTS_REFS(bpf_map__fd(c->skel->maps.counts_1)),
	};

	collector__set_stacks(&c->base, bpf_map__fd(c->skel->maps.stacks), c->base.st, refs, 3);
}

static void offcpu_readout(void *m, pid_t pid);

static void *offcpu_open(const struct session_env *env, void *opts)
{
	struct offcpu_collector *c = calloc(1, sizeof(*c));
	const struct offcpu_opts *o = opts;
	struct offcpu_bpf *sk;
	int err;

	if (!c)
		return NULL;
	c->env = *env;
	c->opts = *o;
	c->lc = env->lc;
	if (collector__init(&c->base, env, true))
		goto fail;
	/* a PID traced again as another process: the earlier one's counts first (core/procs.h) */
	proc_table__set_readout(c->base.procs, offcpu_readout, c);
	/* a forked waker gone before its note is read is named by its parent's snapshot only if
	 * that is of the process and exec the kernel saw (core/procs.c) */
	if (o->wakers)
		proc_table__keep_idents(c->base.procs);
	c->base.kname_at_exec = true;	/* (its exec program renames) */

	sk = c->skel = MINBTF_OPEN(c->lc, offcpu_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&c->base, sk))
		goto fail;
	sk->rodata->trace_all = env->all;
	sk->rodata->with_kthreads = o->kthreads;
	sk->rodata->per_thread = o->per_thread;
	sk->rodata->wakers = o->wakers;
	sk->rodata->states = o->states;
	sk->rodata->min_ns = o->min_ns;
	sk->rodata->max_ns = o->max_ns;
	sk->rodata->self_tgid = getpid();
	sk->rodata->test_hide_switch_in = o->test_hide_switch_in;
	sk->rodata->test_switch_delay_ns = o->test_switch_delay_ns;
	sk->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(sk->obj, env->unwind, 0, 0);
	bpf_map__set_max_entries(sk->maps.targets, MAX_TARGETS);
	bpf_map__set_max_entries(sk->maps.threads, o->max_threads);
	COLLECTOR_SIZE(sk->maps, counts, o->max_stacks);
	bpf_map__set_max_entries(sk->maps.stacks, o->max_stacks);
	c->max_runq = o->test_max_runq ? o->test_max_runq : MAX_RUNQ;
	COLLECTOR_SIZE(sk->maps, runq, c->max_runq);
	c->max_procs = o->test_max_procs ? o->test_max_procs : MAX_PROCS;
	COLLECTOR_SIZE(sk->maps, procs, c->max_procs);
	bpf_map__set_max_entries(sk->maps.comms, MAX_COMMS);
	/* a name per thread and rename that counted, as cpu's: --max-stacks (a full table is a
	 * drop, thread_names_full, whose note names it; within cpu --offcpu it is cpu's) */
	bpf_map__set_max_entries(sk->maps.thread_names, o->per_thread ? o->max_stacks : 1);
	/* -a announces new processes; --wakers the wakers outside the traced ones */
	collector__size_notes(sk->maps.notes, env->all || o->wakers);
	bpf_program__set_autoload(sk->progs.offcpu_waking, o->wakers);
	bpf_program__set_autoload(sk->progs.offcpu_rename, o->per_thread);
	bpf_program__set_autoattach(sk->progs.offcpu_begun, false);	/* run: find_begun */
	if (collector__load(&c->base, env->unwind, true) ||
	    collector__notes(&c->base, sk->maps.notes, env->all || o->wakers))
		goto fail;
	set_stacks(c);
	if (o->per_thread)
		collector__set_thread_names(&c->base, bpf_map__fd(sk->maps.thread_names));
	/* attached for the whole run now (a kernel without them fails before anything runs);
	 * they count from the first attach */
	err = offcpu_bpf__attach(sk);
	if (err) {
		pr_err(c->lc, "cannot attach to the scheduler's tracepoints (sched_switch, "
		       "sched_wakeup%s%s): %s", o->wakers ? ", sched_waking" : "",
		       o->per_thread ? ", task_rename" : "", strerror(-err));
		goto fail;
	}
	pr_info(c->lc, "tracepoints: sched_switch, sched_wakeup, sched_wakeup_new%s",
		o->wakers ? ", sched_waking" : "");

	if (!o->embedded) {
		err = set_types(env->prof);
		if (err) {
			pr_err(c->lc, "cannot set up the profile: %s", strerror(-err));
			goto fail;
		}
		c->opts.ns_idx = 0;
		c->opts.switches_idx = 1;
		c->opts.runnable_idx = 2;
		c->opts.wall_idx = -1;
	}
	return c;
fail:
	offcpu_close(c);
	return NULL;
}

/* Intervals count from here on. */
static void start(struct offcpu_collector *c)
{
	if (c->started)
		return;
	c->skel->bss->started = true;
	c->started = true;
	c->window_ns = util_mono_ns();	/* the first window starts with counting */
}

/* ---- attach ----------------------------------------------------------------------------- */

/* The threads of pid (0: every task) asleep now, since before counting started: each gets an
 * entry as if it switched out at the run's start (bpf/offcpu.bpf.c: offcpu_begun). A launched
 * command has none: it was held at its exec until now. */
static void find_begun(struct offcpu_collector *c, pid_t pid)
{
	c->skel->bss->begun_ns = c->env.start_ns;
	collector__find_begun(&c->base, c->skel->progs.offcpu_begun, pid, "threads off-CPU");
}

/* The throttling of pid's cgroup by its CPU quota so far (none measured: no cpu controller,
 * or a cgroup without a quota's counts, the root) */
static void cg_note_start(struct offcpu_collector *c, pid_t pid)
{
	uintptr_t i = (uintptr_t)pid_index__get(&c->cg_at, pid);
	struct cg_start *n;
	struct cg_throttle t;

	if (cg_throttle__read_pid(NULL, pid, &t))
		return;
	/* attached again at an exec: counted from the first attach, unless it moved (a
	 * launched shell that put itself into a cgroup, then exec'd the program) */
	if (i) {
		if (strcmp(c->cg[i - 1].t.dir, t.dir))
			c->cg[i - 1].t = t;
		return;
	}
	n = realloc(c->cg, (c->ncg + 1) * sizeof(*c->cg));
	if (!n)
		return;
	c->cg = n;
	if (pid_index__put(&c->cg_at, pid, (void *)(uintptr_t)(c->ncg + 1)))
		return;
	c->cg[c->ncg].pid = pid;
	c->cg[c->ncg++].t = t;
}

/* Each target's cgroup's throttling in the run, as its process's cgroup_throttled (times)
 * and cgroup_throttled_ns: the cgroup it was in when attached, read again; not when it is now
 * in another (it moved: the counts would be two cgroups'). */
static void cg_add_stats(struct offcpu_collector *c, struct profile *prof)
{
	for (size_t i = 0; i < c->ncg; i++) {
		const struct cg_start *s = &c->cg[i];
		struct prof_process *pp = profile__find_process(prof, (uint32_t)s->pid);
		struct cg_throttle now;
		int err;

		if (!pp)
			continue;
		err = cg_throttle__read_pid(NULL, s->pid, &now);
		if (!err && strcmp(now.dir, s->t.dir)) {
			pr_info(c->lc, "PID %d moved from cgroup %s to %s: its quota's throttling "
				"not counted", s->pid, s->t.dir, now.dir);
			continue;
		}
		if (err) {	/* gone: the cgroup it was in */
			snprintf(now.dir, sizeof(now.dir), "%s", s->t.dir);
			if (cg_throttle__read(&now))
				continue;
		}
		if (now.n < s->t.n || now.ns < s->t.ns)
			continue;
		prof_process__add_stat(prof, pp, "cgroup_throttled", now.n - s->t.n);
		prof_process__add_stat(prof, pp, "cgroup_throttled_ns", now.ns - s->t.ns);
	}
}

static int offcpu_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct offcpu_collector *c = m;
	int err;

	*status = -1;
	err = collector__target(&c->base, pid, bpf_map__fd(c->skel->maps.targets), MAX_TARGETS);
	if (err)
		return err;
	start(c);
	if (how == MODE_ATTACH_PID)
		find_begun(c, pid);
	cg_note_start(c, pid);
	pr_info(c->lc, "tracing PID %d's threads off-CPU", pid);
	return 0;
}

static int offcpu_attach_all(void *m)
{
	start(m);
	find_begun(m, 0);
	return 0;
}

/* ---- reading out ------------------------------------------------------------------------ */

struct count_entry {
	struct offcpu_key k;
	struct offcpu_val v;
};

static int count_cmp(const void *a, const void *b)
{
	const struct offcpu_key *x = &((const struct count_entry *)a)->k;
	const struct offcpu_key *y = &((const struct count_entry *)b)->k;

	if (x->stack.tgid != y->stack.tgid)
		return x->stack.tgid < y->stack.tgid ? -1 : 1;
	if (x->stack.aux != y->stack.aux)
		return x->stack.aux < y->stack.aux ? -1 : 1;
	if (x->wtgid != y->wtgid)
		return x->wtgid < y->wtgid ? -1 : 1;
	return memcmp(x, y, sizeof(*x));
}

static void kernel_comm(struct offcpu_collector *c, __u32 id, char *buf, size_t len)
{
	struct offcpu_comm cc;

	if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &id, &cc))
		snprintf(buf, len, "%.*s", OFFCPU_COMM_LEN, cc.comm);
	else
		buf[0] = 0;
}

/* The process as the report names it; its mappings, fresh if it still runs. */
static struct proc_info *report_proc(struct offcpu_collector *c, pid_t tgid, bool exec)
{
	char kcomm[OFFCPU_COMM_LEN + 1] = "";

	if (collector__needs_kname(&c->base, tgid))
		kernel_comm(c, tgid, kcomm, sizeof(kcomm));
	return collector__report_proc(&c->base, tgid, exec, kcomm, OFFCPU_COMM_LEN, false);
}

/* The name of a thread (its "name [tid]" frame, a waker's) as it was at its counts' name
 * generation gen. */
static void thread_name(struct offcpu_collector *c, pid_t tgid, pid_t tid, __u32 gen, char *buf,
			size_t len)
{
	collector__thread_name(&c->base, tgid, tid, gen, buf, len);
}

static bool has_prefix(const struct profile *prof, uint32_t loc, const char *prefix)
{
	const struct prof_location *l = &prof->locations[loc];

	for (uint32_t j = 0; j < l->nlines; j++)
		if (!strncmp(prof->functions[l->lines[j].function].name, prefix, strlen(prefix)))
			return true;
	return false;
}

/* An interrupt's frames up to its entry (asm_sysvec_*, asm_common_interrupt): what it
 * interrupted below them (idle, any task's code) did not wake anybody. */
static uint32_t interrupt_only(const struct profile *prof, const uint32_t *locs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (has_prefix(prof, locs[i], "asm_sysvec_") ||
		    has_prefix(prof, locs[i], "asm_common_interrupt"))
			return i + 1;
	return n;
}

/* Whether a waker's kernel frames are an interrupt's (a hard interrupt's entry, a softirq):
 * then the task it ran on is only the one interrupted, not the waker. */
static bool interrupt_frames(const struct profile *prof, const uint32_t *locs, uint32_t n)
{
	static const char *const prefixes[] = { "asm_sysvec_", "asm_common_interrupt",
						"sysvec_", "__sysvec_", "common_interrupt",
						"handle_softirqs", "__do_softirq", "irq_exit",
						"__irq_exit_rcu", "do_softirq" };

	for (uint32_t i = 0; i < n; i++) {
		const struct prof_location *l = &prof->locations[locs[i]];

		for (uint32_t j = 0; j < l->nlines; j++) {
			const char *f = prof->functions[l->lines[j].function].name;

			for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
				if (!strncmp(f, prefixes[k], strlen(prefixes[k])))
					return true;
		}
	}
	return false;
}

/* A location of the waker's stack, which is drawn upside down: the function it is in, without
 * the functions inlined there. Reversed within one location (the caller under the inlined
 * callee), the renderers' [inlined] marks (every line of a location but its last) fell on
 * the real function and left the inlined one unmarked; split into one location per line, the
 * inlined one's was the original location again (locations are interned by address and first
 * line). The waker's stack is context: its real functions are kept, right. */
static uint32_t upside_down(struct profile *prof, uint32_t loc)
{
	const struct prof_location *l = &prof->locations[loc];
	struct prof_line outer;
	uint32_t one;

	if (l->nlines < 2)
		return loc;
	outer = l->lines[l->nlines - 1];
	one = profile__location(prof, l->mapping, l->address, l->module_offset, &outer, 1);
	return one != PROF_NONE ? one : loc;
}

/* The waker's frames as offwaketime draws them above the blocked stack: the waker's name at
 * the top ("waker: COMM (PID)"; with --per-thread its thread's too, "waker: NAME [TID] of COMM
 * (PID)": in a thread pool the thread is who woke), then its stack from its outermost frame
 * down to its leaf (try_to_wake_up's caller), then the "--" separator. Appended to locs (leaf
 * first, as samples are). */
static uint32_t waker_locs(struct offcpu_collector *c, struct profile *prof,
			   const struct offcpu_key *k, uint32_t *locs)
{
	struct stack_key wk = { .tgid = k->wtgid, .kstack = k->wkstack };
	const struct ksyms *ks = k->wkstack ? stacks__ksyms(c->lc) : NULL;
	/* (and the marks of stacks__key_locs and the one below) */
	uint32_t tmp[2 * STACK_MAX_DEPTH + 8], n = 0, nw;
	enum proc_parent_unproven why;
	struct proc_info *wp = NULL;
	struct sym_proc *sp;
	char name[96], comm[OFFCPU_COMM_LEN + 1], tname[OFFCPU_COMM_LEN + 1];

	/* its kernel frames first: an interrupt's have no user frames that belong to it */
	nw = stacks__key_locs(prof, c->base.st, ks, NULL, k->wtgid, &wk, true, tmp);
	if (!k->wtgid || interrupt_frames(prof, tmp, nw)) {
		snprintf(name, sizeof(name), "waker: interrupt");
		nw = interrupt_only(prof, tmp, nw);
	} else {
		if (k->wustack) {
			wp = report_proc(c, k->wtgid, false);
			wk.ustack = k->wustack;
			wk.flags = k->wflags;
			sp = proc_info__mappings(wp);
			nw = stacks__key_locs(prof, c->base.st, ks, sp, k->wtgid, &wk, true, tmp);
			/* gone, forked from a parent whose mappings were not shown to be its
			 * own: its frames are addresses, and its outermost frame says why */
			why = sp ? PROC_PARENT_PROVEN : proc_info__parent_unproven(wp);
			if (why) {
				snprintf(name, sizeof(name), "[waker's mappings unknown: %s]",
					 proc_parent_unproven__str(why));
				tmp[nw++] = stacks__named_loc(prof, name);
				c->parent_unproven[why]++;
			}
		}
		if (wp && wp->comm[0]) {
			snprintf(comm, sizeof(comm), "%s", wp->comm);
		} else {
			kernel_comm(c, k->wtgid, comm, sizeof(comm));
			if (!comm[0])
				target__comm(k->wtgid, comm, sizeof(comm));
		}
		if (k->wtid) {
			thread_name(c, k->wtgid, k->wtid, k->wgen, tname, sizeof(tname));
			snprintf(name, sizeof(name), "waker: %s [%u] of %s (%u)", tname, k->wtid,
				 comm[0] ? comm : "?", k->wtgid);
		} else {
			snprintf(name, sizeof(name), "waker: %s (%u)", comm[0] ? comm : "?",
				 k->wtgid);
		}
	}
	locs[n++] = stacks__named_loc(prof, name);
	while (nw)
		locs[n++] = upside_down(prof, tmp[--nw]);
	locs[n++] = stacks__named_loc(prof, "--");
	return n;
}

struct procs_read {
	struct offcpu_collector *c;
	struct profile *prof;
	bool exec;
};

/* One process's totals into its row: every wait of it, whatever the count table kept. */
static int on_proc(const void *k, const void *v, void *ctx)
{
	const struct procs_read *r = ctx;
	const struct offcpu_val *t = v;
	struct offcpu_collector *c = r->c;
	struct proc_info *p = report_proc(c, *(const __u32 *)k, r->exec);
	struct prof_process *pp;
	int err;

	if (!p)
		return -ENOMEM;
	pp = profile__add_process(r->prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline);
	if (!pp)
		return -errno;
	err = prof_process__add_stat(r->prof, pp, "offcpu_ns", t->ns);
	/* cpu --offcpu: a process's wall time is its exact cpu_ns (cpu's totals) and this */
	if (!err && c->opts.wall_idx >= 0)
		err = prof_process__add_stat(r->prof, pp, "wall_ns", t->ns);
	err = err ?: prof_process__add_stat(r->prof, pp, "switches", t->switches);
	if (!err && c->opts.runnable_idx >= 0)
		err = prof_process__add_stat(r->prof, pp, "runnable_ns", t->runnable_ns);
	return err;
}

/* The processes' totals into prof (collector__read_procs): `only`'s taken out (an exec: it
 * counts on from 0), or every one's, taken (a window, a spill) or read (the end). */
static int drain_procs(struct offcpu_collector *c, struct profile *prof, pid_t only, bool take)
{
	struct procs_read r = { .c = c, .prof = prof, .exec = only || take };

	return COLLECTOR_READ_PROCS(&c->base, c->skel->maps, procs, sizeof(struct offcpu_val),
				    only, take, on_proc, &r);
}

/* Move the counts of process `only` (0: every process) into prof; `remove`: delete them from
 * the kernel (an exec: the same process counts on under its new program); `take`: every
 * process's, taken out of the kernel at once (a window). */
static int drain(struct offcpu_collector *c, struct profile *prof, pid_t only, bool remove,
		 bool take)
{
	/* a take's: the generation its flip took away from the programs (collector__flip) */
	int fd = take ? COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, counts)
		      : COLLECTOR_FD(&c->base, c->skel->maps, counts);
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	struct count_entry *ents = NULL;
	size_t nents = 0;
	uint32_t *locs = malloc(MAX_LOCS * sizeof(*locs));
	int err;

	if (!locs)
		return -ENOMEM;
	err = stack_records__read(fd, sizeof(struct offcpu_key), sizeof(struct offcpu_val),
				  sizeof(struct count_entry), offsetof(struct count_entry, v), only,
				  take, (void **)&ents, &nents);
	if (!take)
		err = err ?: stack_table__read(c->base.st, stacks_fd);
	/* a window fetches only the stacks it counted (the wakers' too); the table is read whole
	 * at the end */
	for (size_t i = 0; take && i < nents; i++) {
		stack_table__fetch(c->base.st, stacks_fd, ents[i].k.stack.ustack);
		stack_table__fetch(c->base.st, stacks_fd, ents[i].k.stack.kstack);
		stack_table__fetch(c->base.st, stacks_fd, ents[i].k.wustack);
		stack_table__fetch(c->base.st, stacks_fd, ents[i].k.wkstack);
	}
	if (err)
		pr_warn(c->lc, "reading the kernel's off-CPU counts failed: %s; the report may be "
			"incomplete", strerror(-err));
	if (nents)
		qsort(ents, nents, sizeof(*ents), count_cmp);
	for (size_t i = 0; i < nents; i++) {
		const struct count_entry *e = &ents[i];
		int64_t vals[MAX_VALS] = { 0 };
		struct proc_info *p = report_proc(c, e->k.stack.tgid, remove || take);
		uint32_t n = 0;

		if (!p) {
			err = -ENOMEM;
			break;
		}
		/* a window's processes keep their snapshots; one seen for the first time gets one */
		if (take && !proc_info__mappings(p))
			proc_table__snapshot(c->base.procs, p);
		if (c->opts.wakers && (e->k.wtgid || e->k.wustack || e->k.wkstack))
			n += waker_locs(c, prof, &e->k, locs);
		/* the program ran in the switched-out task: the machinery's frames lead */
		n += stacks__key_locs(prof, c->base.st,
				      e->k.stack.kstack ? stacks__ksyms(c->lc) : NULL,
				      proc_info__mappings(p), p->pid, &e->k.stack, true, locs + n);
		if (c->opts.per_thread) {
			char tname[OFFCPU_COMM_LEN + 1], frame[64];

			thread_name(c, e->k.stack.tgid, e->k.stack.aux, e->k.stack.gen, tname,
				    sizeof(tname));
			snprintf(frame, sizeof(frame), "%s [%u]", tname, e->k.stack.aux);
			locs[n++] = stacks__named_loc(prof, frame);
		}
		if (c->opts.ns_idx >= 0)
			vals[c->opts.ns_idx] = e->v.ns;
		if (c->opts.wall_idx >= 0)
			vals[c->opts.wall_idx] = e->v.ns;
		if (c->opts.switches_idx >= 0)
			vals[c->opts.switches_idx] = e->v.switches;
		if (c->opts.runnable_idx >= 0)
			vals[c->opts.runnable_idx] = e->v.runnable_ns;
		if (!profile__add_to_sample(prof, locs, n, vals, e->k.stack.tgid)) {
			err = -errno;
			break;
		}
		/* its row comes from its totals (drain_procs) */
		profile__add_process(prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline);
		if (remove)
			bpf_map_delete_elem(fd, &e->k);
	}
	if (err)
		pr_warn(c->lc, "building the profile failed: %s", strerror(-err));
	free(ents);
	free(locs);
	/* whatever became of the counts: the totals are kept apart from them */
	return drain_procs(c, prof, only, take) ?: err;
}

/* ---- run-queue latency ------------------------------------------------------------------ */

static int read_rq(const void *k, const void *v, void *ctx)
{
	const struct offcpu_rq *add = v;
	struct rq_read *r = ctx;
	__u32 tgid = *(const __u32 *)k;
	uintptr_t i = (uintptr_t)pid_index__get(&r->at, (int32_t)tgid);
	struct offcpu_rq *to;

	if (!i) {
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 64;
			struct rq_entry *e = realloc(r->e, cap * sizeof(*e));

			if (!e)
				return -ENOMEM;
			r->e = e;
			r->cap = cap;
		}
		if (pid_index__put(&r->at, (int32_t)tgid, (void *)(uintptr_t)(r->n + 1)))
			return -ENOMEM;
		r->e[r->n].tgid = tgid;
		r->e[r->n++].v = *add;
		return 0;
	}
	to = &r->e[i - 1].v;
	to->count += add->count;
	to->total_ns += add->total_ns;
	if (add->max_ns > to->max_ns)
		to->max_ns = add->max_ns;
	for (int b = 0; b < OFFCPU_RQ_SLOTS; b++)
		to->slots[b] += add->slots[b];
	return 0;
}


/* Most waited first */
static int rq_cmp(const void *a, const void *b)
{
	const struct rq_entry *x = a, *y = b;

	if (x->v.total_ns != y->v.total_ns)
		return x->v.total_ns > y->v.total_ns ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

static int64_t quantile(const struct offcpu_rq *v, double q)
{
	struct prof_hist h = { .sub = 1, .counts = (uint64_t *)(uintptr_t)v->slots,
			       .n = OFFCPU_RQ_SLOTS };
	double x = prof_hist__quantile(&h, q);

	return x > (double)v->max_ns ? (int64_t)v->max_ns : (int64_t)(x + 0.5);
}

/* One group per process of r (emptied): its run-queue latency (runqlat's view, per process).
 * `window`: a window's, whose processes are named without reading their mappings. */
static void add_runq_groups(struct offcpu_collector *c, struct profile *prof, struct rq_read *rq,
			    bool window)
{
	struct rq_read r = *rq;
	int err = 0;

	*rq = (struct rq_read){ 0 };
	qsort(r.e, r.n, sizeof(*r.e), rq_cmp);
	for (size_t i = 0; i < r.n && !err; i++) {
		const struct rq_entry *e = &r.e[i];
		struct proc_info *p = report_proc(c, e->tgid, window);
		struct prof_group *g = profile__add_group(prof);
		char pid[16];

		if (!g || !p) {
			err = -ENOMEM;
			break;
		}
		snprintf(pid, sizeof(pid), "%u", e->tgid);
		err = prof_group__add_label(prof, g, "process", p->comm[0] ? p->comm : "?");
		err = err ?: prof_group__add_label(prof, g, "pid", pid);
#define STAT(name, label, unit, val) \
	err = err ?: prof_group__add_stat(prof, g, name, label, unit, (int64_t)(val))
		STAT("runq_waits", "WAITS", "count", e->v.count);
		STAT("runq_avg_ns", "AVG", "nanoseconds",
		     e->v.count ? e->v.total_ns / e->v.count : 0);
		STAT("runq_p50_ns", "P50", "nanoseconds", quantile(&e->v, 0.50));
		STAT("runq_p99_ns", "P99", "nanoseconds", quantile(&e->v, 0.99));
		STAT("runq_max_ns", "MAX", "nanoseconds", e->v.max_ns);
		STAT("runq_total_ns", "TOTAL", "nanoseconds", e->v.total_ns);
#undef STAT
		err = err ?: prof_group__add_hist(prof, g, "run-queue latency", "nanoseconds", 1,
						  (const uint64_t *)e->v.slots, OFFCPU_RQ_SLOTS);
	}
	if (err)
		pr_warn(c->lc, "building the run-queue summary failed: %s", strerror(-err));
	free(r.e);
	pid_index__free(&r.at);
}

/* One wait more, of ns (runnable_ns of it), into the row key of the table fd (a counts key, a
 * process's totals); false if the table refused it. */
static bool add_open(int fd, const void *key, uint64_t ns, uint64_t runnable_ns)
{
	struct offcpu_val val = { 0 };

	if (bpf_map_lookup_elem(fd, key, &val) && errno != ENOENT)
		return false;
	val.ns += ns;
	val.switches++;
	val.runnable_ns += runnable_ns;
	return !bpf_map_update_elem(fd, key, &val, BPF_ANY);
}

/*
 * A thread still off-CPU when tracing stopped: its wait so far counts, up to the stop, under
 * its stacks at the switch-out (one more blocked interval). Left out, a process blocked for
 * the whole run had an empty profile, and a wall-clock profile (cpu --offcpu) lost the last
 * wait of every thread. Counted in c->off_at_end; the filters (--min-block, --max-block)
 * apply to the part seen.
 */
static int count_open(const void *k, const void *v, void *ctx)
{
	const struct offcpu_thread *th = v;
	struct offcpu_collector *c = ctx;
	uint64_t d, runnable = 0;
	__u32 tgid = th->key.stack.tgid;

	(void)k;
	if (!th->off_ns || th->off_ns >= c->stop_ns || th->held)
		return 0;
	d = c->stop_ns - th->off_ns;
	if (d < c->opts.min_ns || (c->opts.max_ns && d > c->opts.max_ns))
		return 0;
	c->off_at_end++;
	/* woken (or preempted) and not on a CPU again by the stop: runnable since */
	if (th->ready_ns && th->ready_ns < c->stop_ns)
		runnable = c->stop_ns - (th->ready_ns > th->off_ns ? th->ready_ns : th->off_ns);
	/* in its process's totals, as the kernel counts a wait that ends (bpf/offcpu.bpf.c) */
	if (!add_open(COLLECTOR_FD(&c->base, c->skel->maps, procs), &tgid, d, runnable))
		c->open_procs_lost++;
	if (!add_open(COLLECTOR_FD(&c->base, c->skel->maps, counts), &th->key, d, runnable))
		c->open_lost++;
	return 0;
}

/* ---- the run ---------------------------------------------------------------------------- */

static uint64_t stat_sum(struct offcpu_collector *c, enum offcpu_stat s)
{
	return bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.stats), s);
}

static void offcpu_progress(void *m, char *buf, size_t len)
{
	struct offcpu_collector *c = m;
	uint64_t drops = bpfutil__percpu_sum_range(bpf_map__fd(c->skel->maps.stats),
						   OFFCPU_STAT_THREADS_FULL, OFFCPU_STAT__COUNT);

	snprintf(buf, len, "%llu switches  drops %llu",
		 (unsigned long long)stat_sum(c, OFFCPU_STAT_SWITCHES),
		 (unsigned long long)drops);
}

/* A spill's take: the counts into the run's profile, then the run-queue table into c->rq, so
 * that processes met later have room. */
static int take_counts(void *m)
{
	struct offcpu_collector *c = m;
	int err = drain(c, c->env.prof, 0, false, true);

	if (!err)
		collector__take(&c->base, COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, runq),
				sizeof(__u32), sizeof(struct offcpu_rq), read_rq, &c->rq,
				"the run-queue latencies");
	return err;
}

/* A count table or a run-queue table three quarters full (or a wait or a stack refused) is
 * taken into the run's profile, and the stacks map emptied but for the waits going on, so that
 * counting goes on: with -a, the keys of the processes that ended stayed to the end, and the
 * waits of those met last were lost (collector__spill). The run-queue table was taken only
 * with the counts: with -a it filled first (a process has a run-queue wait before any count)
 * and refused waits until the next tick, time after time (6,832 in 2 minutes). Not in a run
 * cut into windows: each window takes its counts (offcpu_window). */
static void spill(struct offcpu_collector *c)
{
	/* a key brings up to two stacks to the stacks map (of the same size), four with wakers */
	uint32_t per_key = c->opts.wakers ? 4 : 2;
	struct spill_check due = {
		.keys = { stat_sum(c, OFFCPU_STAT_KEYS), stat_sum(c, OFFCPU_STAT_RQ_KEYS),
			  stat_sum(c, OFFCPU_STAT_PROC_KEYS) },
		.room = { (c->opts.max_stacks + per_key - 1) / per_key, c->max_runq,
			  c->max_procs },
		.refused = stat_sum(c, OFFCPU_STAT_COUNTS_FULL) +
			   stat_sum(c, OFFCPU_STAT_STACKS_FULL) + stat_sum(c, OFFCPU_STAT_RQ_FULL) +
			   stat_sum(c, OFFCPU_STAT_TNAMES_FULL) + stat_sum(c, OFFCPU_STAT_PROCS_FULL),
	};

	collector__spill(&c->base, &c->env, &due, take_counts, c);
}

static void offcpu_tick(void *m, int64_t t_ns, bool second)
{
	struct offcpu_collector *c = m;

	if (!c->stopped)
		spill(c);
	collector__tick(m, t_ns, second);
}

/* proc_table__set_readout: an earlier process's counts at pid, read out as an exec's are */
static void offcpu_readout(void *m, pid_t pid)
{
	struct offcpu_collector *c = m;

	drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

static void offcpu_finalize(void *m, pid_t pid, bool exec)
{
	struct offcpu_collector *c = m;

	if (collector__hold(&c->base, pid) && exec)
		drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

static void offcpu_reaped(void *m, pid_t pid)
{
	struct offcpu_collector *c = m;

	proc_table__untarget(c->base.procs, pid, bpf_map__fd(c->skel->maps.targets));
}

static void offcpu_started(void *m, uint64_t start_ns)
{
	struct offcpu_collector *c = m;

	c->env.start_ns = start_ns;
}

static void offcpu_stop(void *m)
{
	struct offcpu_collector *c = m;

	if (c->stopped)
		return;
	c->skel->bss->stopped = true;
	c->stopped = true;
	/* the run's end: a wait going on counts up to it, never longer than the run */
	c->stop_ns = c->env.s && session__end_ns(c->env.s) ? session__end_ns(c->env.s)
							    : util_mono_ns();
	collector__consume_notes(&c->base);
}

/* --wakers: the waker stacks of forked processes gone before their notes were read whose
 * parent's mappings could not be shown to be theirs (core/procs.c): listed at 0, said when
 * not. */
static void parent_unproven_note(struct offcpu_collector *c, struct profile *prof)
{
	uint64_t n = 0;
	char why[160] = "";
	size_t len = 0;

	if (!c->opts.wakers)
		return;
	for (int w = PROC_PARENT_GONE; w <= PROC_PARENT_CODE; w++) {
		if (!c->parent_unproven[w])
			continue;
		n += c->parent_unproven[w];
		len += (size_t)snprintf(why + len, len < sizeof(why) ? sizeof(why) - len : 0,
					"%s%llu %s", len ? ", " : "",
					(unsigned long long)c->parent_unproven[w],
					proc_parent_unproven__str(w));
	}
	profile__add_drop(prof, "waker_parent_unproven", n);
	if (n)
		profile__add_note(prof, "%llu waker %s gone before ebprof read %s mappings, "
				  "forked without an exec, whose parent's mappings were not shown "
				  "to be those the kernel saw at the wakeup (%s): %s user frames are "
				  "addresses, under a \"[waker's mappings unknown: ...]\" frame, "
				  "rather than names taken from other code (waker_parent_unproven)",
				  (unsigned long long)n,
				  n == 1 ? "stack is of a process" : "stacks are of processes",
				  n == 1 ? "its" : "their", why, n == 1 ? "its" : "their");
}

/* The traced processes' ptrace stops that were ebprof's (abi/offcpu.h: OFFCPU_STAT_HELD): said,
 * with their time, since they are left out of the profile. */
static void held_note(struct offcpu_collector *c, struct profile *prof)
{
	uint64_t n = stat_sum(c, OFFCPU_STAT_HELD), ns = stat_sum(c, OFFCPU_STAT_HELD_NS);
	char d[32];

	if (!n)
		return;
	render__duration(ns, d, sizeof(d));
	profile__add_info(prof, "held_by_ebprof", "%llu stops, %s", (unsigned long long)n, d);
	profile__add_note(prof, "%llu %s (%s in all) a traced process was stopped by ebprof "
			  "itself, which holds a launched command's processes at their forks, "
			  "execs, exits and signals to follow them: %s not counted as the "
			  "program's off-CPU time", (unsigned long long)n, n == 1 ? "time" : "times",
			  d, n == 1 ? "that stop is" : "those stops are");
}

static void offcpu_finish(void *m)
{
	struct offcpu_collector *c = m;
	struct profile *prof = c->env.prof;
	uint64_t v[OFFCPU_STAT__COUNT];
	char buf[64], b2[32];
	int err;

	/* the waits still going on, up to the stop, before the counts are read */
	bpfutil__map_for_each(bpf_map__fd(c->skel->maps.threads), sizeof(__u32),
			      sizeof(struct offcpu_thread), count_open, c);
	drain(c, prof, 0, false, false);
	/* what spills took, with the table's rest */
	err = bpfutil__map_for_each(COLLECTOR_FD(&c->base, c->skel->maps, runq), sizeof(__u32),
				    sizeof(struct offcpu_rq), read_rq, &c->rq);
	if (err)
		pr_warn(c->lc, "reading the kernel's run-queue latencies failed: %s; the report "
			"may be incomplete", strerror(-err));
	add_runq_groups(c, prof, &c->rq, false);
	cg_add_stats(c, prof);
	collector__note_reused(prof, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, OFFCPU_STAT_PIDS_REUSED));
	unwinder__add_drops(c->base.unwinder, prof);
	collector__add_drops(prof, bpf_map__fd(c->skel->maps.stats), stat_names,
			     OFFCPU_STAT_THREADS_FULL, OFFCPU_STAT__COUNT,
			     c->env.all || c->opts.wakers ? -1 : OFFCPU_STAT_NOTES_FULL, v);
	/* an open wait that found a table full is in no stack (or no totals) as a switch-in's
	 * would be */
	profile__add_drop(prof, stat_names[OFFCPU_STAT_COUNTS_FULL], c->open_lost);
	profile__add_drop(prof, stat_names[OFFCPU_STAT_PROCS_FULL], c->open_procs_lost);
	parent_unproven_note(c, prof);
	v[OFFCPU_STAT_COUNTS_FULL] += c->open_lost;
	v[OFFCPU_STAT_PROCS_FULL] += c->open_procs_lost;
	for (int s = OFFCPU_STAT_THREADS_FULL; s < OFFCPU_STAT__COUNT; s++) {
		uint64_t n = v[s];

		if (!n)
			continue;
		if (s == OFFCPU_STAT_THREADS_FULL)
			profile__add_note(prof, "%llu off-CPU %s not measured: the table of "
					  "threads off-CPU at once (--max-threads %u) was full; raise "
					  "--max-threads", (unsigned long long)n,
					  n == 1 ? "interval was" : "intervals were", c->opts.max_threads);
		else if (s == OFFCPU_STAT_STACKS_FULL)
			profile__add_note(prof, "%llu %s not kept: the stack table (--max-stacks %u) "
					  "was full, so %s time counts without %s; raise --max-stacks",
					  (unsigned long long)n, n == 1 ? "stack was" : "stacks were",
					  c->opts.max_stacks, n == 1 ? "its" : "their",
					  n == 1 ? "it" : "them");
		else if (s == OFFCPU_STAT_COUNTS_FULL)
			profile__add_note(prof, "%llu off-CPU %s in no stack: the count table "
					  "(--max-stacks %u) was full; %s in %s process's totals "
					  "(its row); raise --max-stacks", (unsigned long long)n,
					  n == 1 ? "interval is" : "intervals are", c->opts.max_stacks,
					  n == 1 ? "it counts" : "they count", n == 1 ? "its" : "their");
		else if (s == OFFCPU_STAT_PROCS_FULL)
			collector__note_totals_full(prof, n, "off-CPU interval",
						    "off-CPU intervals", c->max_procs);
		else if (s == OFFCPU_STAT_RQ_FULL)
			profile__add_note(prof, "%llu run-queue %s in no histogram: more "
					  "processes than the kernel's run-queue table holds (%u) "
					  "had one %s", (unsigned long long)n,
					  n == 1 ? "wait is" : "waits are", c->max_runq,
					  c->env.windows ? "between two windows (each takes it)" :
					  "between two of its takes into the report (at the tick, "
					  "every 100 ms, after it is three quarters full)");
		else if (s == OFFCPU_STAT_SWITCH_IN_UNSEEN)
			profile__add_note(prof, "%llu %s not reported by the kernel (no tracepoint "
					  "reaches BPF while some tasks run): each such wait was "
					  "counted, its end taken from the thread's CPU time at its "
					  "next switch-out (late by the interrupts' time meanwhile, "
					  "microseconds)", (unsigned long long)n,
					  n == 1 ? "switch-in was" : "switch-ins were");
		else if (s == OFFCPU_STAT_EXIT_UNSEEN)
			profile__add_note(prof, "%llu %s not reported by the kernel: each one's "
					  "last wait, found when another thread had its number, was not "
					  "counted", (unsigned long long)n,
					  n == 1 ? "thread's exit was" : "threads' exits were");
		else if (s == OFFCPU_STAT_TNAMES_FULL)
			collector__note_thread_names(prof, n, "--max-stacks",
						     c->opts.max_stacks);
		else if (s == OFFCPU_STAT_WAKER_UNSEEN)
			profile__add_note(prof, "%llu %s not kept: %s came while the thread it "
					  "woke, still on its CPU, was between a delayed dequeue (the "
					  "scheduler's, for a thread that blocks with its time slice "
					  "overdrawn) and its switch-out, so that the wait counts with "
					  "no waker (waker_unseen)", (unsigned long long)n,
					  n == 1 ? "waker was" : "wakers were",
					  n == 1 ? "it" : "each");
		else
			collector__note_notes_lost(prof, n);
	}
	if (c->off_at_end)
		profile__add_note(prof, "%llu %s still off-CPU when tracing stopped: each one's "
				  "wait counts up to the stop (those a full table could not take are "
				  "in count_table_full or process_totals_full)",
				  (unsigned long long)c->off_at_end,
				  c->off_at_end == 1 ? "thread was" : "threads were");
	collector__note_begun(prof, stat_sum(c, OFFCPU_STAT_BEGUN), "thread was", "threads were",
			      "off-CPU", "each one's wait counts from the start, under the kernel "
			      "stack it slept in", NULL);
	profile__add_note(prof, "off-CPU time: from a thread's switch-out to its switch-in "
			  "(its wait and its run-queue latency after the wakeup), under its stacks "
			  "at the switch-out%s. Run-queue latency: from its wakeup or preemption "
			  "to its switch-in",
			  c->opts.wakers ? ", below the stacks of the thread that woke it and a "
			  "\"--\" frame" : "");
	profile__add_info(prof, "tracepoints", "sched_switch, sched_wakeup, sched_wakeup_new%s",
			  c->opts.wakers ? ", sched_waking" : "");
	profile__add_info(prof, "states", "%s", offcpu_states_name(c->opts.states, buf,
								    sizeof(buf)));
	if (c->opts.min_ns)
		profile__add_info(prof, "min_block", "%s",
				  render__duration(c->opts.min_ns, b2, sizeof(b2)));
	if (c->opts.max_ns)
		profile__add_info(prof, "max_block", "%s",
				  render__duration(c->opts.max_ns, b2, sizeof(b2)));
	/* every wait counted, with those still open at the stop, each counted as one (the
	 * totals' switches, and process_totals_full's) */
	profile__add_info(prof, "switches", "%llu",
			  (unsigned long long)(stat_sum(c, OFFCPU_STAT_SWITCHES) + c->off_at_end));
	profile__add_info(prof, "filtered", "%llu",
			  (unsigned long long)stat_sum(c, OFFCPU_STAT_FILTERED));
	held_note(c, prof);
}

/* A window: the counts taken out of the kernel (an interval counts when it ends: a thread's
 * wait goes whole to the window of its switch-in), then the run-queue table, each process's
 * waits since the last window a group of the window's (they stayed for the run's end, which
 * top and the agent never show: a long run filled the table with its first 4,096 processes
 * and refused every later one's waits), the drops counted since the last one. Only for
 * offcpu's own profile, not cpu --offcpu's. */
static int offcpu_window(void *m, struct profile *into)
{
	struct offcpu_collector *c = m;
	uint64_t now = util_mono_ns();
	struct collector_reused reused;
	struct rq_read rq = { 0 };
	int err = 0;

	if (c->opts.embedded)
		return -EOPNOTSUPP;
	if (!into->ntypes)
		err = set_types(into);
	collector__consume_notes(&c->base);	/* new processes, for their names */
	collector__flip(&c->base);	/* the tables counted into until now, no writer left */
	collector__take_thread_names(&c->base);	/* before the counts they name */
	collector__reused_take(&reused, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, OFFCPU_STAT_PIDS_REUSED),
			       &c->window_stats[OFFCPU_STAT_PIDS_REUSED]);
	err = err ?: drain(c, into, 0, false, true);
	err = err ?: collector__window_readout(&c->base, into);	/* execs since the last */
	if (!err) {
		collector__take(&c->base, COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, runq),
				sizeof(__u32), sizeof(struct offcpu_rq), read_rq, &rq,
				"the run-queue latencies");
		add_runq_groups(c, into, &rq, true);
	}
	collector__reused_say(&reused, into);
	/* the windows' copy holds about what the map does: every stack a window counted */
	collector__reclaim_full(&c->base, c->opts.max_stacks);
	window__end(into, bpf_map__fd(c->skel->maps.stats), stat_names, OFFCPU_STAT_THREADS_FULL,
		    OFFCPU_STAT__COUNT, c->env.all || c->opts.wakers ? -1 : OFFCPU_STAT_NOTES_FULL,
		    c->window_stats,
		    c->base.procs, NULL, c->env.start_ns, &c->window_ns, now);
	return err;
}

static void offcpu_close(void *m)
{
	struct offcpu_collector *c = m;

	if (!c)
		return;
	collector__close(&c->base, NULL);
	free(c->rq.e);
	pid_index__free(&c->rq.at);
	free(c->cg);
	pid_index__free(&c->cg_at);
	free(c);
}

_Static_assert(offsetof(struct offcpu_collector, base) == 0, "the shared hooks' collector");
/* the notes ring's records are core/procs.h's */
_Static_assert(sizeof(struct offcpu_note) == sizeof(struct proc_note) &&
	       offsetof(struct offcpu_note, parent) == offsetof(struct proc_note, parent) &&
	       offsetof(struct offcpu_note, parent_ident) ==
	       offsetof(struct proc_note, parent_ident) &&
	       offsetof(struct offcpu_note, parent_exec_pages) ==
	       offsetof(struct proc_note, parent_exec_pages), "struct proc_note");

const struct mode_ops offcpu_mode_ops = {
	.name = "offcpu",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = false,	/* user threads; kernel threads only with -a --kernel-threads */
	.open = offcpu_open,
	.close = offcpu_close,
	.attach = offcpu_attach,
	.attach_all = offcpu_attach_all,
	.tick = offcpu_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = offcpu_progress,
	.finalize = offcpu_finalize,
	.reaped = offcpu_reaped,
	.started = offcpu_started,
	.stop = offcpu_stop,
	.finish = offcpu_finish,
	.window = offcpu_window,
	.detach = collector__detach,
};
