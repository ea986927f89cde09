/* The cpu mode collector.
 *
 * One software cpu-clock perf event per sampled CPU, in period mode: it fires after every
 * period of CPU time spent on that CPU (by any task), and the BPF program counts the sample for
 * the task it interrupted. A fixed period (1e9 / HZ ns) rather than a frequency the kernel tunes
 * makes every sample weigh exactly that much CPU time, so cpu/nanoseconds is count x period.
 *
 * The counts stay in the kernel until the end; processes are only snapshotted on the way (their
 * mappings, so that one that exits early still symbolizes): at attach, every tick while they
 * run (8 a tick, in turn, for a large tree; the earlier snapshots are kept for what is
 * unmapped since), and at their exit stop. In -a, the kernel announces each new process
 * through a ring buffer read every tick. An exec reads a process's counts early: its old
 * program's addresses mean nothing in the new one's mappings; so does code replaced at the
 * addresses of earlier code (drain_replaced: a library reopened after an upgrade).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/minbtf.h"
#include "core/procs.h"
#include "core/stacks.h"
#include "core/unwind.h"
#include "modes/cpu/collect.h"
#include "modes/offcpu/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"
#include "abi/cpu.h"
#include "cpu.skel.h"

#define MAX_TARGETS 1024	/* the targets map's size */
#define MAX_PROCS 32768		/* processes with totals between two spills (-a sees every one) */

struct cpu_collector {
	struct collector base;		/* first: the shared hooks take the collector */
	struct session_env env;
	struct cpu_opts opts;
	const struct log_ctx *lc;
	struct cpu_bpf *skel;
	int *cpus, ncpus;		/* the CPUs sampled */
	int *pfds;			/* their perf events (-1: closed) */
	struct bpf_link **links;
	struct bpf_link *exec_link;	/* -a: cpu_exec */
	struct bpf_link *rename_link;	/* --per-thread: cpu_rename */
	bool started, stopped, detached;
	uint64_t period_ns;
	uint64_t stop_ns;		/* CLOCK_MONOTONIC when sampling stopped */
	uint64_t samples;		/* in the processes' totals read out into the profile */
	uint32_t max_procs;		/* the procs table's room */
	struct stack_table *wst;	/* the stacks windows have read so far */
	uint64_t window_ns;		/* CLOCK_MONOTONIC at the start of the window */
	uint64_t window_stats[CPU_STAT__COUNT];	/* the counters then */
	struct prof_rate cpu_rate;	/* the timeline: samples counted, at each second */
	void *off;			/* --offcpu: the offcpu collector, driven from these hooks */
};

/* The sample types and their order: samples, cpu; with --offcpu also offcpu and wall. */
enum { V_SAMPLES, V_CPU, V_OFFCPU, V_WALL, V__COUNT };

static const char *const stat_names[CPU_STAT__COUNT] = {
	[CPU_STAT_SAMPLES] = "samples",
	[CPU_STAT_KEYS] = "keys",
	[CPU_STAT_PROC_KEYS] = "process_keys",
	[CPU_STAT_PIDS_REUSED] = "pids_reused",
	[CPU_STAT_STACKS_FULL] = "stack_table_full",
	[CPU_STAT_COUNTS_FULL] = "count_table_full",
	[CPU_STAT_NOTES_FULL] = "process_notes_lost",
	[CPU_STAT_TNAMES_FULL] = "thread_names_full",
	[CPU_STAT_PROCS_FULL] = "process_totals_full",
};

uint64_t cpu_period_ns(uint32_t hz)
{
	return 1000000000ull / hz;
}

uint32_t cpu_max_hz(void)
{
	char *s = util_read_file("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
	unsigned long v = s ? strtoul(s, NULL, 10) : 0;

	free(s);
	return v && v < CPU_MAX_HZ ? v : CPU_MAX_HZ;
}

int cpu_parse_list(const char *s, bool *set)
{
	const char *p = s;

	memset(set, 0, CPU_MAX_CPUS * sizeof(*set));
	if (!*p)
		return -1;
	for (;;) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			return -1;
		a = b = strtoul(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				return -1;
			b = strtoul(p, &end, 10);
		}
		if (a > b || b >= CPU_MAX_CPUS)
			return -1;
		for (unsigned long i = a; i <= b; i++)
			set[i] = true;
		if (*end == '\n' && !end[1])
			return 0;
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}

int cpu_online(bool *set)
{
	char *s = util_read_file("/sys/devices/system/cpu/online", NULL);
	int err;

	if (!s)
		return -errno;
	err = cpu_parse_list(s, set) ? -EINVAL : 0;
	free(s);
	return err;
}

/* libbpf's callback has no context argument, hence a file-level flag */
/* ---- processes -------------------------------------------------------------------------- */

/* A traced process's address space as its last sample saw it (CPU_MM_*, abi/cpu.h): its maps
 * file is read again only when that moved. */
static uint64_t mm_mark(void *ctx, pid_t pid)
{
	struct cpu_collector *c = ctx;
	__u32 key = pid;
	__u64 v;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.mm_marks), &key, &v))
		return PROC_MM_UNKNOWN;
	return v;
}

/* ---- open ------------------------------------------------------------------------------- */

static int open_events(struct cpu_collector *c)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = c->period_ns,
		.disabled = 1,
	};

	for (int i = 0; i < c->ncpus; i++) {
		int fd = syscall(SYS_perf_event_open, &attr, -1, c->cpus[i], -1,
				 PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			int err = -errno;

			if (err == -ENODEV || err == -EINVAL)
				pr_err(c->lc, "cannot sample CPU %d: it is offline or does not exist; "
				       "choose CPUs from /sys/devices/system/cpu/online with --cpu",
				       c->cpus[i]);
			else if (err == -EMFILE)
				pr_err(c->lc, "cannot sample CPU %d: too many open files; raise "
				       "'ulimit -n' or sample fewer CPUs (--cpu)", c->cpus[i]);
			else
				pr_err(c->lc, "cannot open a cpu-clock perf event on CPU %d: %s "
				       "(needs root, and perf_event_paranoid allowing CPU-wide "
				       "events)", c->cpus[i], strerror(-err));
			return err;
		}
		c->pfds[i] = fd;
	}
	return 0;
}

/* The sample types and period of a cpu profile: the run's, or a window's. */
static int set_types(struct cpu_collector *c, struct profile *prof)
{
	int err = profile__add_type(prof, "samples", "count");

	err = err ?: profile__add_type(prof, "cpu", "nanoseconds");
	/* a process's row is its exact total (the kernel's `procs`), not what the count table
	 * kept */
	err = err ?: profile__set_type_proc_stat(prof, "samples", "samples");
	err = err ?: profile__set_type_proc_stat(prof, "cpu", "cpu_ns");
	if (c->opts.offcpu) {
		err = err ?: profile__add_type(prof, "offcpu", "nanoseconds");
		err = err ?: profile__add_type(prof, "wall", "nanoseconds");
		/* its cpu_ns and its offcpu_ns (offcpu's collector adds them both) */
		err = err ?: profile__set_type_proc_stat(prof, "wall", "wall_ns");
	}
	if (err)
		return err;
	prof->default_type = c->opts.offcpu ? V_WALL : V_SAMPLES;
	/* pprof's period: what one sample stands for */
	return profile__set_period(prof, "cpu", "nanoseconds", c->period_ns);
}

static void cpu_readout(void *m, pid_t pid);

static void *cpu_open(const struct session_env *env, void *opts)
{
	struct cpu_collector *c = calloc(1, sizeof(*c));
	const struct cpu_opts *o = opts;
	struct profile *prof = env->prof;
	bool online[CPU_MAX_CPUS];
	struct stack_ref_map refs[2];
	int err;

	if (!c)
		return NULL;
	c->env = *env;
	c->opts = *o;
	c->lc = env->lc;
	c->period_ns = cpu_period_ns(o->hz ? o->hz : CPU_DEFAULT_HZ);
	c->max_procs = o->test_max_procs ? o->test_max_procs : MAX_PROCS;
	if (collector__init(&c->base, env, false))
		goto fail;
	/* a PID traced again as another process: the earlier one's counts first (core/procs.h) */
	proc_table__set_readout(c->base.procs, cpu_readout, c);
	c->base.kname_at_exec = true;	/* (its exec program renames) */

	err = cpu_online(online);
	if (err) {
		pr_err(c->lc, "cannot read the online CPUs (/sys/devices/system/cpu/online): %s",
		       strerror(-err));
		goto fail;
	}
	c->cpus = calloc(CPU_MAX_CPUS, sizeof(*c->cpus));
	c->pfds = calloc(CPU_MAX_CPUS, sizeof(*c->pfds));
	c->links = calloc(CPU_MAX_CPUS, sizeof(*c->links));
	c->wst = stack_table__new();
	if (!c->cpus || !c->pfds || !c->links || !c->wst)
		goto fail;
	for (int i = 0; i < CPU_MAX_CPUS; i++) {
		if (!(o->cpu_given ? o->cpus[i] : online[i]))
			continue;
		if (!online[i]) {
			pr_err(c->lc, "cannot sample CPU %d: it is not online; choose CPUs from "
			       "/sys/devices/system/cpu/online with --cpu", i);
			goto fail;
		}
		c->pfds[c->ncpus] = -1;
		c->cpus[c->ncpus++] = i;
	}
	if (!c->ncpus) {
		pr_err(c->lc, "no CPU to sample: --cpu names none that is online");
		goto fail;
	}

	c->skel = MINBTF_OPEN(c->lc, cpu_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&c->base, c->skel))
		goto fail;
	c->skel->rodata->trace_all = env->all;
	c->skel->rodata->with_idle = o->idle;
	c->skel->rodata->per_thread = o->per_thread;
	c->skel->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(c->skel->obj, env->unwind, MAX_TARGETS, 0);
	bpf_map__set_max_entries(c->skel->maps.targets, MAX_TARGETS);
	bpf_map__set_max_entries(c->skel->maps.mm_marks, MAX_TARGETS);
	COLLECTOR_SIZE(c->skel->maps, procs, c->max_procs);
	COLLECTOR_SIZE(c->skel->maps, counts, o->max_stacks);
	bpf_map__set_max_entries(c->skel->maps.stacks, o->max_stacks);
	collector__size_notes(c->skel->maps.notes, env->all);
	bpf_map__set_max_entries(c->skel->maps.thread_names, o->per_thread ? o->max_stacks : 1);
	bpf_program__set_autoload(c->skel->progs.cpu_exec, env->all);
	bpf_program__set_autoload(c->skel->progs.cpu_rename, o->per_thread);
	if (collector__load(&c->base, env->unwind, true))
		goto fail;
	/* a spill empties the windows' copy: cpu reads its stacks there */
	/* both generations of counts (bpf/lib/take.bpf.h) */
	refs[0] = stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_0),
					sizeof(struct stack_key), sizeof(__u64));
	refs[1] = stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_1),
					sizeof(struct stack_key), sizeof(__u64));
	collector__set_stacks(&c->base, bpf_map__fd(c->skel->maps.stacks), c->wst, refs, 2);
	if (o->per_thread)
		collector__set_thread_names(&c->base, bpf_map__fd(c->skel->maps.thread_names));
	if (!env->all)
		proc_table__set_mm_marks(c->base.procs, mm_mark, c);
	if (collector__notes(&c->base, c->skel->maps.notes, env->all))
		goto fail;
	/* the events open now, so that a machine without them fails before anything runs; they
	 * start at the first attach */
	if (open_events(c))
		goto fail;

	err = set_types(c, prof);
	if (err) {
		pr_err(c->lc, "cannot set up the profile: %s", strerror(-err));
		goto fail;
	}
	if (o->offcpu) {
		/* the offcpu mode's own collector: its programs, its reads, in this profile */
		struct offcpu_opts oo;

		offcpu_default_opts(&oo);
		oo.embedded = true;
		oo.kthreads = true;	/* as cpu samples them: -a, or -p of a kernel thread */
		oo.per_thread = o->per_thread;
		oo.max_stacks = o->max_stacks;
		if (o->max_threads)
			oo.max_threads = o->max_threads;
		oo.ns_idx = V_OFFCPU;
		oo.wall_idx = V_WALL;
		c->off = offcpu_mode_ops.open(env, &oo);
		if (!c->off)
			goto fail;
	}
	return c;
fail:
	cpu_mode_ops.close(c);
	return NULL;
}

/* Sampling begins: the program goes on every CPU's event (libbpf enables it). */
static int start(struct cpu_collector *c)
{
	if (c->started)
		return 0;
	if (c->env.all) {
		c->exec_link = bpf_program__attach(c->skel->progs.cpu_exec);
		if (!c->exec_link) {
			int err = -errno;

			pr_err(c->lc, "cannot attach to the sched_process_exec tracepoint: %s",
			       strerror(-err));
			return err;
		}
	}
	if (c->opts.per_thread) {
		c->rename_link = bpf_program__attach(c->skel->progs.cpu_rename);
		if (!c->rename_link) {
			int err = -errno;

			pr_err(c->lc, "cannot attach to the task_rename tracepoint (--per-thread "
			       "names threads by it): %s", strerror(-err));
			return err;
		}
	}
	for (int i = 0; i < c->ncpus; i++) {
		/* the link closes the fd it is given; ours stays open to disable the event at
		 * stop (libbpf 1.1 does not hand a perf link's event fd back) */
		int fd = fcntl(c->pfds[i], F_DUPFD_CLOEXEC, 0);

		if (fd < 0)
			return -errno;
		c->links[i] = bpf_program__attach_perf_event(c->skel->progs.cpu_sample, fd);
		if (!c->links[i]) {
			int err = -errno;

			close(fd);
			c->links[i] = NULL;
			pr_err(c->lc, "cannot attach the sampling program to CPU %d's perf event: "
			       "%s", c->cpus[i], strerror(-err));
			return err;
		}
	}
	c->started = true;
	c->window_ns = util_mono_ns();	/* the first window starts with sampling */
	pr_info(c->lc, "sampling %d CPUs every %llu ns of CPU time", c->ncpus,
		(unsigned long long)c->period_ns);
	return 0;
}

/* ---- attach ----------------------------------------------------------------------------- */

static int cpu_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct cpu_collector *c = m;
	__u32 key = pid;
	__u64 none = CPU_MM_NONE;
	int err;

	*status = -1;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	/* before the snapshot, which reads it (if it cannot be made: the maps file at every
	 * look, as PROC_MM_UNKNOWN) */
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.mm_marks), &key, &none, BPF_ANY);
	err = proc_table__target(c->base.procs, pid, bpf_map__fd(c->skel->maps.targets), NULL);
	if (err) {
		pr_err(c->lc, "cannot trace PID %d: %s%s", pid, strerror(-err),
		       err == -E2BIG ? " (more than 1024 processes at once)" : "");
		return err;
	}
	(void)how;
	if (c->off) {
		err = offcpu_mode_ops.attach(c->off, pid, how, status);
		if (err)
			return err;
	}
	return start(c);
}

static int cpu_attach_all(void *m)
{
	struct cpu_collector *c = m;

	if (c->off) {
		int err = offcpu_mode_ops.attach_all(c->off);

		if (err)
			return err;
	}
	return start(c);
}

/* ---- reading out ------------------------------------------------------------------------ */

/* The name of a thread (for its "name [tid]" frame) as it was at its samples (key's gen). */
static void thread_name(struct cpu_collector *c, const struct stack_key *k, char *buf, size_t len)
{
	collector__thread_name(&c->base, k->tgid, k->aux, k->gen, buf, len);
}

/* The process as the report names it; its mappings, fresh if it still runs. */
static struct proc_info *report_proc(struct cpu_collector *c, pid_t tgid, bool exec)
{
	struct cpu_comm cc = { .comm = "idle" };
	__u32 key = tgid;

	if (tgid && (!collector__needs_kname(&c->base, tgid) ||
		     bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &key, &cc)))
		cc.comm[0] = 0;
	return collector__report_proc(&c->base, tgid, exec, cc.comm, CPU_COMM_LEN, false);
}

struct procs_read {
	struct cpu_collector *c;
	struct profile *prof;
	bool exec, take, spill;
};

/* One process's total into its row: every sample of it, whatever the count table kept (a full
 * one cost the sample its stack, and made the rows and shares short too). */
static int on_proc(const void *k, const void *v, void *ctx)
{
	const struct procs_read *r = ctx;
	const struct cpu_proc *t = v;
	struct cpu_collector *c = r->c;
	__u32 tgid = *(const __u32 *)k;
	struct prof_process *pp;
	struct proc_info *p;
	int err;

	p = r->take && !r->spill ? proc_table__add(c->base.procs, tgid)
				 : report_proc(c, tgid, r->exec);
	if (p && r->take && !p->comm[0])
		p = report_proc(c, tgid, true);
	if (!p)
		return -ENOMEM;
	pp = profile__add_process(r->prof, tgid, p->comm, p->cmdline);
	if (!pp)
		return -errno;
	err = prof_process__add_stat(r->prof, pp, "samples", t->samples);
	err = err ?: prof_process__add_stat(r->prof, pp, "cpu_ns", t->samples * c->period_ns);
	if (!err && c->opts.offcpu)
		err = prof_process__add_stat(r->prof, pp, "wall_ns", t->samples * c->period_ns);
	if (!r->take || r->spill)
		c->samples += t->samples;
	return err;
}

/* The processes' totals into prof (collector__read_procs): `only`'s taken out (an exec, code
 * replaced: it counts on from 0), or every one's, taken (a window, a spill) or read (the end). */
static int drain_procs(struct cpu_collector *c, struct profile *prof, pid_t only, bool take,
		       bool spill)
{
	struct procs_read r = { .c = c, .prof = prof, .exec = only != 0, .take = take && !only,
				.spill = spill };

	return COLLECTOR_READ_PROCS(&c->base, c->skel->maps, procs, sizeof(struct cpu_proc), only,
				    take, on_proc, &r);
}

/* Counts into prof, of process `only` (0: every process): kernel frames leaf first, then user
 * frames, then with --per-thread the thread; read (take false: left in the map, the run's end;
 * `remove`: deleted, an exec's or code replaced: the same process counts on under its new
 * program), or taken out of the kernel (take true: a window's, or a spill's into the run's
 * profile, spill true: the samples count in the run's total and its processes are snapshot as
 * at the end). Then the processes' totals, the same way (drain_procs). */
static int drain(struct cpu_collector *c, struct profile *prof, pid_t only, bool remove,
		 bool take, bool spill)
{
	struct stack_table *st = take ? c->wst : stack_table__new();
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	int counts_fd = take ? COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, counts)
			     : COLLECTOR_FD(&c->base, c->skel->maps, counts);
	uint32_t *locs = malloc((2 * STACK_MAX_DEPTH + 1) * sizeof(*locs));
	struct stack_count *v = NULL;
	struct proc_info *p = NULL;
	size_t nv = 0;
	int err, procs_err;

	if (!st || !locs) {
		err = -ENOMEM;
		goto out;
	}
	err = take ? stack_counts__take(counts_fd, &v, &nv)
		   : stack_counts__read(counts_fd, only, &v, &nv);
	if (!take)
		err = err ?: stack_table__read(st, stacks_fd);
	for (size_t i = 0; take && i < nv; i++) {
		/* a stack missing from the map (emptied since) leaves its sample without it */
		stack_table__fetch(st, stacks_fd, v[i].k.ustack);
		stack_table__fetch(st, stacks_fd, v[i].k.kstack);
	}
	if (err) {
		pr_warn(c->lc, "reading the kernel's sample counts failed: %s; the report may be "
			"incomplete", strerror(-err));
		if (!nv)
			goto out;
	}
	for (size_t i = 0; i < nv; i++) {
		const struct stack_count *e = &v[i];
		int64_t vals[V__COUNT] = { e->n, e->n * c->period_ns, 0, e->n * c->period_ns };
		uint32_t n;

		if (!p || p->pid != (pid_t)e->k.tgid) {
			/* a window's processes keep their last snapshot: a new one each
			 * second would read every process's maps file every second */
			p = take && !spill ? proc_table__add(c->base.procs, e->k.tgid)
					   : report_proc(c, e->k.tgid, remove);
			if (p && take && !p->sp)
				proc_table__snapshot(c->base.procs, p);
			if (p && take && !p->comm[0])
				p = report_proc(c, e->k.tgid, true);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
		}
		/* a perf event's kernel stack starts at the interrupted code: nothing to strip */
		/* kallsyms is read (~50 ms of kernel CPU) only once a kernel frame needs it */
		n = stacks__key_locs(prof, st, e->k.kstack ? stacks__ksyms(c->lc) : NULL, p->sp,
				     p->pid, &e->k, false, locs);
		if (c->opts.per_thread) {
			char tname[CPU_COMM_LEN + 1], frame[64];

			thread_name(c, &e->k, tname, sizeof(tname));
			snprintf(frame, sizeof(frame), "%s [%u]", tname, e->k.aux);
			locs[n++] = stacks__named_loc(prof, frame);
		}
		if (!profile__add_to_sample(prof, locs, n, vals, e->k.tgid)) {
			err = -errno;
			goto out;
		}
		/* its row comes from its total (drain_procs) */
		if (!profile__add_process(prof, e->k.tgid, p->comm, p->cmdline)) {
			err = -errno;
			goto out;
		}
		if (remove)
			bpf_map_delete_elem(counts_fd, &e->k);
	}
out:
	if (err)
		pr_warn(c->lc, "building the profile failed: %s", strerror(-err));
	free(v);
	free(locs);
	if (!take)
		stack_table__free(st);
	/* whatever became of the counts: the totals are kept apart from them */
	procs_err = drain_procs(c, prof, only, take, spill);
	return err ?: procs_err;
}

/* ---- the run ---------------------------------------------------------------------------- */

static uint64_t stat_sum(struct cpu_collector *c, enum cpu_stat s)
{
	return bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.stats), s);
}

/* The timeline: the CPU the traced processes used over the last second, in percent of one CPU
 * (series cpu_percent, pid 0: all of them), from the samples counted meanwhile, each one
 * period of CPU time. One read of a per-CPU counter. */
static void cpu_point(struct cpu_collector *c, int64_t t_ns)
{
	if (c->env.windows)
		return;	/* a point a second for ever in a profile nothing writes */
	profile__add_rate_point(c->env.prof, &c->cpu_rate, 0, "cpu_percent", "percent", t_ns,
				stat_sum(c, CPU_STAT_SAMPLES), c->period_ns * 100 / 1e9);
}

static int take_counts(void *m)
{
	struct cpu_collector *c = m;

	return drain(c, c->env.prof, 0, false, true, true);
}

/* A count table three quarters full (or full: a sample lost to it, or a stack to the stacks
 * map), or the processes' totals table (the same): the counts and totals taken into the run's
 * profile (and the stacks map emptied, no count referring to it any more), so that counting
 * goes on. Checked each tick; not in a run cut into windows
 * (each window takes its counts). With -a the processes that ended keep their keys to the end:
 * a 3-minute run of builds lost 40% of its samples at the default --max-stacks, and the loss
 * was biased (those of the processes met last). */
static void spill(struct cpu_collector *c)
{
	struct spill_check due = {
		.keys = { stat_sum(c, CPU_STAT_KEYS), stat_sum(c, CPU_STAT_PROC_KEYS) },
		.room = { c->opts.max_stacks, c->max_procs },
		/* (a full thread-name table too: a spill empties it) */
		.refused = stat_sum(c, CPU_STAT_COUNTS_FULL) + stat_sum(c, CPU_STAT_STACKS_FULL) +
			   stat_sum(c, CPU_STAT_PROCS_FULL) + stat_sum(c, CPU_STAT_TNAMES_FULL),
	};

	collector__spill(&c->base, &c->env, &due, take_counts, c);
}

/* A process whose new snapshot maps code where an earlier one had other code (a library
 * closed, replaced by another file and opened again at the same place): its counts so far read
 * out now, as at an exec, their frames there named from neither file (the kernel counts bare
 * addresses: before this read, either file may have run there), and its earlier snapshots
 * forgotten, so that what it counts from now on is named from the new file alone. */
static void drain_replaced(struct cpu_collector *c)
{
	for (uint32_t i = 0; i < proc_table__count(c->base.procs); i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);

		if (!p->code_replaced)
			continue;
		p->code_replaced = false;
		pr_debug(c->lc, "PID %d: code replaced at an address of an earlier mapping; its "
			 "counts read out", p->pid);
		if (!drain(c, collector__readout(&c->base, &c->env), p->pid, true, false, false))
			sym_proc__forget_previous(p->sp);
	}
}

static void cpu_tick(void *m, int64_t t_ns, bool second)
{
	struct cpu_collector *c = m;

	spill(c);

	/* new processes (-a), while their mappings are still there: every tick, cheap when
	 * there are none */
	collector__consume_notes(&c->base);
	/* the traced processes' mappings, 8 a tick (a read of each one's maps file when its
	 * samples saw its address space change since the last read, a new snapshot only when
	 * the executable mappings did; names each second): every tick for a few processes, in
	 * turn for a large tree. A library loaded and unloaded (dlclose) between two looks would
	 * leave its samples without their frames. */
	proc_table__snapshot_some(c->base.procs, 8);
	drain_replaced(c);
	if (second)
		cpu_point(c, t_ns);
	unwinder__tick(c->base.unwinder);
	if (c->off)
		offcpu_mode_ops.tick(c->off, t_ns, second);
}


static void cpu_progress(void *m, char *buf, size_t len)
{
	struct cpu_collector *c = m;
	uint64_t drops = bpfutil__percpu_sum_range(bpf_map__fd(c->skel->maps.stats),
						   CPU_STAT_STACKS_FULL, CPU_STAT__COUNT);

	if (c->off) {
		char off[128];

		offcpu_mode_ops.progress(c->off, off, sizeof(off));
		snprintf(buf, len, "%llu samples  drops %llu  %s",
			 (unsigned long long)stat_sum(c, CPU_STAT_SAMPLES),
			 (unsigned long long)drops, off);
		return;
	}
	snprintf(buf, len, "%llu samples  drops %llu",
		 (unsigned long long)stat_sum(c, CPU_STAT_SAMPLES), (unsigned long long)drops);
}

/* proc_table__set_readout: an earlier process's counts at pid, read out as an exec's are */
static void cpu_readout(void *m, pid_t pid)
{
	struct cpu_collector *c = m;

	drain(c, collector__readout(&c->base, &c->env), pid, true, false, false);
}

static void cpu_finalize(void *m, pid_t pid, bool exec)
{
	struct cpu_collector *c = m;

	if (!collector__hold(&c->base, pid))
		return;
	if (exec) {
		int fd = bpf_map__fd(c->skel->maps.mm_marks);
		__u32 key = pid;
		__u64 none = CPU_MM_NONE, mark = CPU_MM_UNKNOWN;

		/* no sample since its attach or its last exec: nothing of the old program to read
		 * out (a read is the whole count table's: in a build's tree of 15,000 short
		 * processes it was a third of ebprof's time) */
		if (bpf_map_lookup_elem(fd, &key, &mark) || mark != CPU_MM_NONE)
			drain(c, collector__readout(&c->base, &c->env), pid, true, false, false);
		/* the new program's mm starts its marks anew: none the old one wrote (an address
		 * used again, a sequence at the same count) can stand for it */
		bpf_map_update_elem(fd, &key, &none, BPF_EXIST);
	}
	if (c->off)
		offcpu_mode_ops.finalize(c->off, pid, exec);
}

/* Not at its exit stop (retire): the kernel's exit path after it (exit_mmap unmapping its
 * memory) is its CPU time too. */
static void cpu_reaped(void *m, pid_t pid)
{
	struct cpu_collector *c = m;

	__u32 key = pid;

	proc_table__untarget(c->base.procs, pid, bpf_map__fd(c->skel->maps.targets));
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.mm_marks), &key);
	if (c->off)
		offcpu_mode_ops.reaped(c->off, pid);
}

static void cpu_started(void *m, uint64_t start_ns)
{
	struct cpu_collector *c = m;

	c->env.start_ns = start_ns;
	if (c->off)
		offcpu_mode_ops.started(c->off, start_ns);
}

static void cpu_stop(void *m)
{
	struct cpu_collector *c = m;

	if (c->stopped)
		return;
	/* no sample after this: the counts read at finish are one consistent cut */
	for (int i = 0; i < c->ncpus; i++)
		if (c->pfds[i] >= 0)
			ioctl(c->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	c->stopped = true;
	c->stop_ns = util_mono_ns();
	/* the timeline's last partial second, unless too short to say much (under a tick) */
	if (c->stop_ns >= c->env.start_ns + c->cpu_rate.last_t_ns + 100000000ull)
		cpu_point(c, (int64_t)(c->stop_ns - c->env.start_ns));
	/* the last announcements of new processes */
	collector__consume_notes(&c->base);
	if (c->off)
		offcpu_mode_ops.stop(c->off);
}

/* The CPUs sampled as ranges ("0-1", "0,2-3"): the report's and each window's "cpus" */
static const char *cpu_list(const struct cpu_collector *c, char *buf, size_t size)
{
	int len = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->ncpus && len < (int)size - 16; i++) {
		int j = i;

		while (j + 1 < c->ncpus && c->cpus[j + 1] == c->cpus[j] + 1)
			j++;
		len += snprintf(buf + len, size - len, "%s%d", len ? "," : "", c->cpus[i]);
		if (j > i)
			len += snprintf(buf + len, size - len, "-%d", c->cpus[j]);
		i = j;
	}
	return buf;
}

static void cpu_finish(void *m)
{
	struct cpu_collector *c = m;
	struct profile *prof = c->env.prof;
	uint64_t lost = stat_sum(c, CPU_STAT_COUNTS_FULL);
	uint64_t stacks_full = stat_sum(c, CPU_STAT_STACKS_FULL);
	uint64_t notes = stat_sum(c, CPU_STAT_NOTES_FULL);
	uint64_t end = c->stop_ns ? c->stop_ns : util_mono_ns();
	double secs = c->env.start_ns && end > c->env.start_ns ?
		      (end - c->env.start_ns) / 1e9 : 0;
	uint64_t v[CPU_STAT__COUNT];
	char cpus[256];

	drain(c, prof, 0, false, false, false);
	if (c->off)
		offcpu_mode_ops.finish(c->off);
	collector__note_reused(prof, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, CPU_STAT_PIDS_REUSED));
	collector__add_drops(prof, bpf_map__fd(c->skel->maps.stats), stat_names,
			     CPU_STAT_STACKS_FULL, CPU_STAT__COUNT,
			     c->env.all ? -1 : CPU_STAT_NOTES_FULL, v);
	unwinder__add_drops(c->base.unwinder, prof);
	if (lost)
		profile__add_note(prof, "%llu %s in no stack: the count table (--max-stacks %u) "
				  "was full; %s in %s totals (the process table), not in the "
				  "stacks and flame graph; raise --max-stacks", (unsigned long long)lost,
				  lost == 1 ? "sample is" : "samples are", c->opts.max_stacks,
				  lost == 1 ? "it counts" : "they count",
				  lost == 1 ? "its process's" : "their processes'");
	collector__note_totals_full(prof, v[CPU_STAT_PROCS_FULL], "sample", "samples",
				    c->max_procs);
	if (stacks_full)
		profile__add_note(prof, "%llu %s not kept: the stack table (--max-stacks %u) was "
				  "full, so %s samples count without %s; raise --max-stacks",
				  (unsigned long long)stacks_full,
				  stacks_full == 1 ? "stack was" : "stacks were", c->opts.max_stacks,
				  stacks_full == 1 ? "its" : "their", stacks_full == 1 ? "it" : "them");
	collector__note_notes_lost(prof, notes);
	collector__note_thread_names(prof, v[CPU_STAT_TNAMES_FULL], "--max-stacks",
				     c->opts.max_stacks);

	/* the run's facts */
	profile__add_info(prof, "rate", "%u Hz", c->opts.hz);
	profile__add_info(prof, "cpus", "%s", cpu_list(c, cpus, sizeof(cpus)));
	/* the window the perf events were on; the report's Duration is the whole run (start-up
	 * and read-out included) */
	profile__add_info(prof, "sampled_for", "%.2f s", secs);
	/* every sample counted (the processes' totals); of them, samples_lost are in no stack */
	profile__add_info(prof, "samples", "%llu", (unsigned long long)c->samples);
	profile__add_info(prof, "samples_lost", "%llu", (unsigned long long)lost);
}

/* A window: the counts taken out of the kernel (the run's profile at the end has only what no
 * window took), the drops counted since the last one. The stacks stay interned: a stack seen
 * again costs nothing; the table is emptied when it is three quarters full, and the few
 * samples counted between that and the window's read then go without their stacks. */
static int cpu_window(void *m, struct profile *into)
{
	struct cpu_collector *c = m;
	uint64_t now = util_mono_ns(), from = c->window_ns ? c->window_ns : c->env.start_ns;
	struct collector_reused reused;
	unsigned forgot, trimmed;
	char cpus[256];
	int err;

	if (!into->ntypes) {
		err = set_types(c, into);
		if (err)
			return err;
	}
	/* processes announced since the last tick, so that their samples get their names */
	collector__consume_notes(&c->base);
	collector__flip(&c->base);	/* the tables counted into until now, no writer left */
	collector__take_thread_names(&c->base);	/* before the counts they name */
	collector__reused_take(&reused, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, CPU_STAT_PIDS_REUSED),
			       &c->window_stats[CPU_STAT_PIDS_REUSED]);
	err = drain(c, into, 0, false, true, false);
	err = err ?: collector__window_readout(&c->base, into);	/* execs since the last */
	collector__reused_say(&reused, into);
	for (int s = CPU_STAT_SAMPLES; s < CPU_STAT__COUNT; s++) {
		uint64_t v = stat_sum(c, s);

		if ((s == CPU_STAT_NOTES_FULL && !c->env.all) || s == CPU_STAT_PIDS_REUSED)
			continue;
		if (s != CPU_STAT_SAMPLES && s != CPU_STAT_KEYS && s != CPU_STAT_PROC_KEYS)
			profile__add_drop(into, stat_names[s], v - c->window_stats[s]);
		c->window_stats[s] = v;
	}
	/* -a over hours: the processes gone since two windows ago are forgotten, and the files
	 * only they mapped once unused for 6 windows (a program that runs now and then is not
	 * read again each time) */
	forgot = proc_table__prune_gone(c->base.procs, 2, NULL);
	trimmed = symbolizer__trim(c->env.sym, 6);
	pr_debug(c->lc, "window: %u processes gone forgotten, %u files' symbols freed, %u "
		 "processes kept", forgot, trimmed, proc_table__count(c->base.procs));
	/* the windows' copy holds about what the map does: every stack a window counted */
	collector__reclaim_full(&c->base, c->opts.max_stacks);
	profile__add_info(into, "rate", "%u Hz", c->opts.hz);
	profile__add_info(into, "cpus", "%s", cpu_list(c, cpus, sizeof(cpus)));
	profile__add_info(into, "window", "%.2f s", (now - from) / 1e9);
	into->duration_nanos = now - from;
	c->window_ns = now;
	return err;
}

static void cpu_detach(void *m)
{
	struct cpu_collector *c = m;

	bpf_link__destroy(c->exec_link);
	c->exec_link = NULL;
	bpf_link__destroy(c->rename_link);
	c->rename_link = NULL;
	for (int i = 0; i < c->ncpus; i++) {
		bpf_link__destroy(c->links[i]);	/* closes its perf event too */
		c->links[i] = NULL;
		if (c->pfds[i] >= 0)
			close(c->pfds[i]);
		c->pfds[i] = -1;
	}
	if (c->off)
		offcpu_mode_ops.detach(c->off);
	c->detached = true;
}

static void cpu_close(void *m)
{
	struct cpu_collector *c = m;

	if (!c)
		return;
	if (c->links && c->pfds)
		cpu_detach(c);
	if (c->off)
		offcpu_mode_ops.close(c->off);
	collector__close(&c->base, NULL);
	stack_table__free(c->wst);
	free(c->cpus);
	free(c->pfds);
	free(c->links);
	free(c);
}

_Static_assert(offsetof(struct cpu_collector, base) == 0, "the shared hooks' collector");

const struct mode_ops cpu_mode_ops = {
	.name = "cpu",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = true,	/* sampled and counted by tgid, kernel stacks included */
	.open = cpu_open,
	.close = cpu_close,
	.attach = cpu_attach,
	.attach_all = cpu_attach_all,
	.tick = cpu_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = cpu_progress,
	.window = cpu_window,
	.finalize = cpu_finalize,
	.reaped = cpu_reaped,
	.started = cpu_started,
	.stop = cpu_stop,
	.finish = cpu_finish,
	.detach = cpu_detach,
};
