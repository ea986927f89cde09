/* The kmem mode collector.
 *
 * The tracepoints are attached once, at open, for the whole machine: frees must be seen from
 * every task and CPU (RCU callbacks, interrupts, kernel threads), since an allocation is matched
 * to its free by pointer whoever frees it. Allocations count only for the traced processes
 * (the targets map, or everything with -a). Counts stay in the kernel; a process is read out
 * when it is finalized (held at its exit stop, before it closes its files, or at an exec) and
 * the rest at the end; the count and cache rows, and the totals of the processes gone, are
 * taken into the profile as they fill (spill), the live table staying whole for the frees. Mappings are snapshot at attach, every second, and at the exit stop; with
 * -a, every second for the processes seen since.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/minbtf.h"
#include "core/procs.h"
#include "core/unwind.h"
#include "core/snapshots.h"
#include "core/stacks.h"
#include "modes/kmem/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"
#include "abi/kmem.h"
#include "kmem.skel.h"

#define MAX_TARGETS 8192	/* traced processes at once (a launched tree) */
#define MAX_PROCS 32768		/* processes with totals (-a sees every one) */
#define MAX_CACHE_STATS 65536	/* (process, cache) pairs */
#define MAX_LOCS (1 + 2 * STACK_MAX_DEPTH)
#define SNAP_INTERVAL_NS 500000000ull	/* live bytes per stack snapshot, at first */
#define SNAP_BUDGET 20			/* a snapshot may cost 1/SNAP_BUDGET of its interval */

static const char *const drop_names[KMEM_DROP__COUNT] = {
	[KMEM_DROP_COUNTS_FULL] = "counts_full",
	[KMEM_DROP_STACKS_FULL] = "stacks_full",
	[KMEM_DROP_LIVE_FULL] = "live_table_full",
	[KMEM_DROP_CACHES_FULL] = "caches_full",
	/* io's and lock's name for the same table; the session's process_table_full is a
	 * process not traced at all */
	[KMEM_DROP_PROCS_FULL] = "process_totals_full",
	[KMEM_DROP_FREE_UNSEEN] = "free_unseen",
	[KMEM_DROP_TABLE_BUSY] = "table_busy",
};

/* The per-process totals as JSON's processes[].kmem names them (stats "kmem_<name>"). */
static const char *const total_names[KMEM_T__COUNT] = {
	[KMEM_T_KMALLOC] = "kmem_kmalloc",
	[KMEM_T_KFREE] = "kmem_kfree",
	[KMEM_T_CACHE_ALLOC] = "kmem_cache_alloc",
	[KMEM_T_CACHE_FREE] = "kmem_cache_free",
	[KMEM_T_PAGE_ALLOC] = "kmem_page_alloc",
	[KMEM_T_PAGE_FREE] = "kmem_page_free",
	[KMEM_T_PERCPU_ALLOC] = "kmem_percpu_alloc",
	[KMEM_T_PERCPU_FREE] = "kmem_percpu_free",
	[KMEM_T_KMALLOC_BYTES_REQ] = "kmem_kmalloc_bytes_req",
	[KMEM_T_BYTES_REQ] = "kmem_bytes_req",
	[KMEM_T_BYTES_ALLOC] = "kmem_bytes_alloc",
	[KMEM_T_LIVE_COUNT] = "kmem_live_count",
	[KMEM_T_LIVE_BYTES] = "kmem_live_bytes",
};

enum { T_ALLOC_OBJECTS, T_ALLOC_SPACE, T_INUSE_OBJECTS, T_INUSE_SPACE, T_WASTE_SPACE, NTYPES };

struct kmem_collector {
	struct collector base;		/* first: the shared hooks take the collector */
	struct session_env env;
	struct kmem_opts opts;
	const struct log_ctx *lc;
	struct kmem_bpf *skel;
	bool percpu, batched;		/* the optional tracepoints were found */
	uint64_t stop_ns;		/* bpf_ktime_get_ns()'s clock when tracing stopped */
	uint32_t max_procs;		/* the totals table's room (MAX_PROCS) */
	uint64_t allocs;		/* read out into the profile */
	uint64_t snap_interval;		/* ns between snapshots of live bytes per stack */
	uint64_t snap_due;		/* CLOCK_MONOTONIC of the next one */
};

/* A traced process's own (proc_info.priv): its live bytes per stack over time, for the growth
 * view. Processes seen only with -a have none. */
struct kmem_proc {
	struct snapshots *snap;
	bool ended;		/* it exited: read out at the end, after its exit's frees */
	bool open;		/* its series takes points, its rows kept: in the kernel's `series`
				 * (series_open); no more after its last point (the snapshot after
				 * exit_seen), or once it is traced no more */
	bool exit_seen;		/* ended, and a snapshot found its exit done (exit_done) */
	bool closing;		/* the snapshot being taken is its last (snapshot()) */
};

static void kmem_proc_free(void *priv)
{
	struct kmem_proc *kp = priv;

	if (kp)
		snapshots__free(kp->snap);
	free(kp);
}

/* Its snapshots, unless it was read out for good (at its exit). */
static struct snapshots *snap_of(struct proc_info *p)
{
	struct kmem_proc *kp = p ? p->priv : NULL;

	return kp && !p->drained ? kp->snap : NULL;
}

/*
 * Whether process p's growth series still takes points, its (process, kind, stacks) rows kept
 * in the kernel at a spill for them (keeps_rows): it is traced (attached), or it ended and its
 * series' last point is not taken yet. That is the first snapshot after one that found its
 * exit done (a zombie or gone: its files closed, its memory freed), so at least one snapshot
 * interval (0.5 s at first) after the exit's frees, those the kernel defers past an RCU grace
 * period (an inode, a socket's parts: tens of ms on a loaded machine) included. Then its rows
 * are taken like any other's: kept until the run's end, a launched tree's ended processes
 * filled the count table (40 fixtures' 230 rows each: counts_full 373 with --max-stacks
 * 2048); taken at the exit, its blocks still live were missing from its series' last point
 * (a child's 50 pipes held by its grandchild: 19,200 bytes in use, 0 at its last point).
 */
static bool series_open(struct proc_info *p)
{
	struct kmem_proc *kp = p ? p->priv : NULL;

	return snap_of(p) && kp->open;
}

/* p's series takes no more points (its last one taken, or it is traced no more): its rows are
 * taken from the next spill on. Out of the kernel's `series` first, before that spill's flip:
 * the frees that found it there lower its rows' live counts (kmem.bpf.c's untrack), and the
 * flip waits for every one of them to end before the take begins. */
static void series_end(struct kmem_collector *c, struct proc_info *p)
{
	struct kmem_proc *kp = p ? p->priv : NULL;
	__u32 key = p ? (__u32)p->pid : 0;

	if (!kp || !kp->open)
		return;
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.series), &key);
	kp->open = false;
}

/* A stack key as the snapshots' two numbers: the kind mixed into the kernel stack's hash. */
static uint64_t snap_k1(const struct stack_key *k)
{
	return k->kstack * 0x9e3779b97f4a7c15ull ^ k->aux;
}

/* ---- open ------------------------------------------------------------------------------- */

/* The programs attach one by one, softirq_entry's before softirq_exit's: an interrupt that
 * began in between left its CPU's depth up (in_interrupt_ctx), and every event of the tasks
 * on that CPU would have counted for no process, for the whole run. Zeroed once all are
 * attached (an exit without its entry is not counted). */
static void reset_irq_depth(struct kmem_collector *c)
{
	int n = libbpf_num_possible_cpus();
	__u64 *zero = n > 0 ? calloc((size_t)n, sizeof(*zero)) : NULL;	/* 8 bytes a CPU */
	__u32 key = 0;

	if (!zero || bpf_map_update_elem(bpf_map__fd(c->skel->maps.irq_depth), &key, zero,
					 BPF_ANY))
		pr_warn(c->lc, "cannot reset the interrupt depth: events may be counted for no "
			"process on a CPU where an interrupt began as tracing started");
	free(zero);
}

/* Each free program and its twin (abi/kmem.h, enum kmem_tp). */
static void twins_of(struct kmem_bpf *skel, struct bpf_program *t[KMEM_TP__COUNT][2])
{
	struct bpf_program *all[KMEM_TP__COUNT][2] = {
		[KMEM_TP_KFREE] = { skel->progs.kmem_kfree, skel->progs.kmem_kfree_nested },
		[KMEM_TP_CACHE_FREE] = { skel->progs.kmem_cache_free,
					 skel->progs.kmem_cache_free_nested },
		[KMEM_TP_PAGE_FREE] = { skel->progs.kmem_page_free,
					skel->progs.kmem_page_free_nested },
		[KMEM_TP_PAGE_FREE_BATCHED] = { skel->progs.kmem_page_free_batched,
						skel->progs.kmem_page_free_batched_nested },
		[KMEM_TP_PERCPU_FREE] = { skel->progs.kmem_percpu_free,
					  skel->progs.kmem_percpu_free_nested },
	};

	memcpy(t, all, sizeof(all));
}

/* A twin is loaded with its program. */
static void set_twins(struct kmem_collector *c)
{
	struct bpf_program *t[KMEM_TP__COUNT][2];

	twins_of(c->skel, t);
	for (int i = 0; i < KMEM_TP__COUNT; i++)
		bpf_program__set_autoload(t[i][1], bpf_program__autoload(t[i][0]));
}

/*
 * The events the kernel skipped and no twin took: every program's recursion misses (the
 * allocations', the interrupt depth's), less, for a free program, the events its twin took
 * (nested_event: each came while the program ran on its CPU, so each is one of its misses),
 * and none of a twin's own (a twin runs into itself only under an event of its program's that
 * its program takes, or nested under one it takes: then its program is running too, and
 * missed it). *nested: the twins' takes.
 */
static uint64_t events_lost(struct kmem_collector *c, uint64_t *nested)
{
	int fd = bpf_map__fd(c->skel->maps.nested);
	struct bpf_program *t[KMEM_TP__COUNT][2], *prog;
	uint64_t lost = 0;

	*nested = 0;
	twins_of(c->skel, t);
	/* the other programs' (the allocations', the interrupt depth's, the exec's) as they are:
	 * each read once (a total less the free programs' read after it could go below zero,
	 * the programs still attached and missing meanwhile) */
	bpf_object__for_each_program(prog, c->skel->obj) {
		bool free_prog = false;

		for (int i = 0; i < KMEM_TP__COUNT; i++)
			free_prog = free_prog || prog == t[i][0] || prog == t[i][1];
		if (!free_prog)
			lost += bpfutil__prog_recursion_misses(prog);
	}
	for (int i = 0; i < KMEM_TP__COUNT; i++) {
		uint64_t misses = bpfutil__prog_recursion_misses(t[i][0]), took = 0;

		if (!bpf_program__autoload(t[i][1])) {
			lost += misses;
			continue;
		}
		took = bpfutil__percpu_sum(fd, (uint32_t)i);
		*nested += took;
		lost += misses > took ? misses - took : 0;
		if (misses)
			pr_debug(c->lc, "%s: %llu events skipped by the kernel, %llu taken by its "
				 "twin", bpf_program__name(t[i][0]), (unsigned long long)misses,
				 (unsigned long long)took);
	}
	return lost;
}

/* What a spill's emptying of the stacks map keeps: the stacks of the allocations still live
 * and of the counts made since the take (collector__reclaim). */
static void set_stacks(struct kmem_collector *c)
{
	struct stack_ref_map refs[3] = {
		{ .fd = bpf_map__fd(c->skel->maps.live), .key_size = sizeof(__u64),
		  .val_size = sizeof(struct kmem_live), .n = 2,
		  .at = { STACK_REF_VAL(__u64, struct kmem_live, key.ustack),
			  STACK_REF_VAL(__u64, struct kmem_live, key.kstack) } },
		/* both generations: a spill keeps some rows (keeps_rows) */
		stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_0), sizeof(struct stack_key),
				      sizeof(struct kmem_count)),
		stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_1), sizeof(struct stack_key),
				      sizeof(struct kmem_count)),
	};

	collector__set_stacks(&c->base, bpf_map__fd(c->skel->maps.stacks), NULL, refs, 3);
}

static void *kmem_open(const struct session_env *env, void *opts)
{
	struct kmem_collector *c = calloc(1, sizeof(*c));
	const struct kmem_opts *o = opts;
	struct profile *prof = env->prof;
	int err;

	if (!c)
		return NULL;
	c->env = *env;
	c->opts = *o;
	c->lc = env->lc;
	if (collector__init(&c->base, env, false))
		goto fail;
	c->base.kname_at_exec = true;	/* (its exec program renames) */

	/* the required tracepoints fail the load on their own; the optional ones are probed */
	c->percpu = bpfutil__has_tracepoint("percpu_alloc_percpu") &&
		    bpfutil__has_tracepoint("percpu_free_percpu");
	c->batched = bpfutil__has_tracepoint("mm_page_free_batched");

	c->skel = MINBTF_OPEN(c->lc, kmem_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&c->base, c->skel))
		goto fail;
	c->skel->rodata->self_tgid = getpid();
	c->skel->rodata->page_size = getpagesize();
	c->skel->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(c->skel->obj, env->unwind, 0, 0);
	bpf_program__set_autoload(c->skel->progs.kmem_percpu_alloc, c->percpu);
	bpf_program__set_autoload(c->skel->progs.kmem_percpu_free, c->percpu);
	bpf_program__set_autoload(c->skel->progs.kmem_page_free_batched, c->batched);
	set_twins(c);
	bpf_map__set_max_entries(c->skel->maps.targets, MAX_TARGETS);
	/* the traced, and those ended since their series' last point (~1 s) */
	bpf_map__set_max_entries(c->skel->maps.series, 2 * MAX_TARGETS);
	bpf_map__set_max_entries(c->skel->maps.stacks, o->max_stacks);
	/* a stack is often counted for several processes and kinds (-a) */
	COLLECTOR_SIZE(c->skel->maps, counts, 2 * o->max_stacks);
	bpf_map__set_max_entries(c->skel->maps.live, o->max_live);
	c->max_procs = o->test_max_procs ? o->test_max_procs : MAX_PROCS;
	bpf_map__set_max_entries(c->skel->maps.totals, c->max_procs);
	COLLECTOR_SIZE(c->skel->maps, cache_stats, MAX_CACHE_STATS);
	if (collector__load(&c->base, env->unwind, true))
		goto fail;
	/* every free must be seen from the start, whichever task makes it */
	err = kmem_bpf__attach(c->skel);
	if (err) {
		pr_err(c->lc, "cannot attach to the kmem tracepoints: %s", strerror(-err));
		goto fail;
	}
	reset_irq_depth(c);
	set_stacks(c);

	err = profile__add_type(prof, "alloc_objects", "count");
	err = err ?: profile__add_type(prof, "alloc_space", "bytes");
	err = err ?: profile__add_type(prof, "inuse_objects", "count");
	err = err ?: profile__add_type(prof, "inuse_space", "bytes");
	err = err ?: profile__add_type(prof, "waste_space", "bytes");
	if (err) {
		pr_err(c->lc, "cannot set up the profile: %s", strerror(-err));
		goto fail;
	}
	prof->default_type = T_ALLOC_SPACE;
	prof->min_age_ns = o->min_age_ns;
	if (!c->percpu)
		profile__add_note(prof, "this kernel's BTF has no percpu_alloc_percpu/"
				  "free_percpu tracepoints: per-CPU allocations are not counted");
	if (!c->batched)
		profile__add_note(prof, "this kernel's BTF has no mm_page_free_batched tracepoint: "
				  "pages freed in batches stay outstanding");
	return c;
fail:
	kmem_mode_ops.close(c);
	return NULL;
}

/* ---- attach ----------------------------------------------------------------------------- */

static int kmem_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct kmem_collector *c = m;
	__u32 key = pid;
	__u8 one = 1;
	struct proc_info *p;
	int err;

	*status = -1;
	(void)how;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	p = proc_table__add(c->base.procs, pid);
	if (!p)
		return -ENOMEM;
	if (!p->priv) {
		struct kmem_proc *kp = calloc(1, sizeof(*kp));

		/* without it, no growth view: not worth failing the run */
		if (kp)
			kp->snap = snapshots__new((int64_t)(util_mono_ns() - c->env.start_ns));
		/* in `series` before it counts (targets): its frees lower its rows from its
		 * first allocation on */
		if (kp && kp->snap)
			kp->open = !bpf_map_update_elem(bpf_map__fd(c->skel->maps.series), &key,
							&one, BPF_ANY);
		if (kp && kp->snap && !kp->open) {
			pr_warn(c->lc, "PID %d: no growth view: the table of series is full", pid);
			snapshots__free(kp->snap);
			kp->snap = NULL;
		}
		p->priv = kp;
	}
	if (!p->attached) {
		err = bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &key, &one, BPF_ANY);
		if (err) {
			pr_err(c->lc, "cannot trace PID %d: %s%s", pid, strerror(-err),
			       err == -E2BIG ? " (more than 8192 processes at once)" : "");
			series_end(c, p);
			return err;
		}
		p->attached = true;
		pr_info(c->lc, "PID %d: counting its kernel allocations", pid);
	}
	proc_table__snapshot(c->base.procs, p);
	return 0;
}

static int kmem_attach_all(void *m)
{
	struct kmem_collector *c = m;

	c->skel->bss->trace_all = true;
	pr_info(c->lc, "counting the kernel allocations of every process");
	return 0;
}

/* ---- reading out ------------------------------------------------------------------------ */

struct count_entry {
	struct stack_key k;
	struct kmem_count v;
};

struct live_entry {
	__u64 ptr;
	struct kmem_live v;
};

struct cache_entry {
	struct kmem_cache_key k;
	struct kmem_cache_stat v;
};

struct total_entry {
	__u32 tgid;
	struct kmem_totals v;
};

/* What one read collects: the entries of process `only` (0: all). */
struct reader {
	pid_t only;
	void *v;
	size_t n, cap, size;
};

static int reader_push(struct reader *r, const void *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		void *nv = realloc(r->v, cap * r->size);

		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->cap = cap;
	}
	memcpy((char *)r->v + r->n * r->size, e, r->size);
	r->n++;
	return 0;
}

static int on_count(const void *key, const void *val, void *ctx)
{
	const struct stack_key *k = key;
	struct reader *r = ctx;
	struct count_entry e = { .k = *k, .v = *(const struct kmem_count *)val };

	return r->only && (pid_t)k->tgid != r->only ? 0 : reader_push(r, &e);
}

static int on_live(const void *key, const void *val, void *ctx)
{
	const struct kmem_live *l = val;
	struct reader *r = ctx;
	struct live_entry e = { .ptr = *(const __u64 *)key, .v = *l };

	return r->only && (pid_t)l->key.tgid != r->only ? 0 : reader_push(r, &e);
}

static int on_cache(const void *key, const void *val, void *ctx)
{
	const struct kmem_cache_key *k = key;
	struct reader *r = ctx;
	struct cache_entry e = { .k = *k, .v = *(const struct kmem_cache_stat *)val };

	return r->only && (pid_t)k->tgid != r->only ? 0 : reader_push(r, &e);
}

static int on_total(const void *key, const void *val, void *ctx)
{
	struct reader *r = ctx;
	struct total_entry e = { .tgid = *(const __u32 *)key, .v = *(const struct kmem_totals *)val };

	return r->only && (pid_t)e.tgid != r->only ? 0 : reader_push(r, &e);
}

static int read_map(struct bpf_map *map, size_t ksz, size_t vsz, bpfutil_map_cb cb,
		    struct reader *r, size_t esz, pid_t only)
{
	r->only = only;
	r->size = esz;
	return bpfutil__map_for_each(bpf_map__fd(map), ksz, vsz, cb, r);
}

static int key_cmp(const struct stack_key *a, const struct stack_key *b)
{
	return memcmp(a, b, sizeof(*a));
}

static int count_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct count_entry *)a)->k, &((const struct count_entry *)b)->k);
}

/* The count rows of process `only` (0: all) in both generations (bpf/lib/take.bpf.h), sorted,
 * the two rows of a key summed: a row a spill kept (keeps_rows) in the generation it took, the
 * counts made since and the frees of its allocations in the other (a free's live counts may
 * take a row below 0: the sum wraps back). 0 or a negative errno. */
static int read_counts(struct kmem_collector *c, pid_t only, struct reader *r)
{
	const struct bpf_map *gens[2] = { c->skel->maps.counts_0, c->skel->maps.counts_1 };
	struct count_entry *e;
	size_t n = 0;
	int err = 0;

	r->only = only;
	r->size = sizeof(struct count_entry);
	for (int g = 0; g < 2 && !err; g++)
		err = bpfutil__map_for_each(bpf_map__fd(gens[g]), sizeof(struct stack_key),
					    sizeof(struct kmem_count), on_count, r);
	if (!r->n)
		return err;
	e = r->v;
	qsort(e, r->n, sizeof(*e), count_cmp);
	for (size_t i = 0; i < r->n; i++) {
		if (n && !key_cmp(&e[n - 1].k, &e[i].k)) {
			__u64 *to = (__u64 *)&e[n - 1].v;
			const __u64 *from = (const __u64 *)&e[i].v;

			for (size_t j = 0; j < sizeof(e->v) / sizeof(__u64); j++)
				to[j] += from[j];
		} else {
			e[n++] = e[i];
		}
	}
	r->n = n;
	return err;
}

static int live_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct live_entry *)a)->v.key, &((const struct live_entry *)b)->v.key);
}

/* The process as the report names it; its mappings, fresh if it still runs. */
static struct proc_info *report_proc(struct kmem_collector *c, pid_t tgid, bool exec,
				     const char *kcomm)
{
	return collector__report_proc(&c->base, tgid, exec, kcomm, KMEM_COMM_LEN, false);
}

/* A process a spill takes counts of, named in the profile as it is now (a gone one by the name
 * the kernel last gave it); its mappings read once, when first met. Its row's numbers come from
 * its totals at the end. */
static struct proc_info *spill_proc(struct kmem_collector *c, struct profile *prof, pid_t tgid)
{
	struct kmem_totals t;
	__u32 key = tgid;
	bool kname = collector__needs_kname(&c->base, tgid) &&
		     !bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.totals), &key, &t);
	struct proc_info *p = report_proc(c, tgid, true, kname ? t.comm : NULL);

	if (p && !p->sp)
		proc_table__snapshot(c->base.procs, p);
	if (p && !profile__add_process(prof, tgid, p->comm[0] ? p->comm : NULL, p->cmdline))
		return NULL;
	return p;
}

/* The name of a slab cache by its kmem_cache address, or of a kmalloc size class as
 * /proc/slabinfo names it (kmalloc-96, kmalloc-2k); above the largest class kmalloc takes pages
 * (kmalloc-pages-16k: no cache of that name exists, "kmalloc-16384" read as one). */
static void cache_name(struct kmem_collector *c, __u64 cache, char *buf, size_t len)
{
	struct kmem_cache_info ci;

	if (cache < 0x100000000ull) {
		unsigned long long n = cache;

		if (n > KMEM_KMALLOC_MAX_CACHE)
			snprintf(buf, len, "kmalloc-pages-%lluk", (n + 1023) / 1024);
		else if (n >= 1024 && n % 1024 == 0)
			snprintf(buf, len, "kmalloc-%lluk", n / 1024);
		else
			snprintf(buf, len, "kmalloc-%llu", n);
		return;
	}
	if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.cache_ids), &cache, &ci))
		snprintf(buf, len, "%.*s", KMEM_CACHE_NAME_LEN, ci.name);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)cache);
}

/* The leaf frame of a sample: what allocated (the tracepoint, the cache, the order). */
static void kind_frame(struct kmem_collector *c, __u32 aux, const struct reader *ids,
		       char *buf, size_t len)
{
	__u32 low = KMEM_AUX_LOW(aux);

	switch (KMEM_AUX_KIND(aux)) {
	case KMEM_KIND_KMALLOC:
		snprintf(buf, len, "kmalloc");
		return;
	case KMEM_KIND_CACHE: {
		const struct { __u64 k; struct kmem_cache_info v; } *e = ids->v;

		for (size_t i = 0; i < ids->n; i++) {
			if (e[i].v.id == low) {
				snprintf(buf, len, "kmem_cache_alloc [%.*s]", KMEM_CACHE_NAME_LEN,
					 e[i].v.name);
				return;
			}
		}
		snprintf(buf, len, "kmem_cache_alloc [?]");
		return;
	}
	case KMEM_KIND_PAGE:
		snprintf(buf, len, "mm_page_alloc [order %u]", low);
		return;
	case KMEM_KIND_PERCPU:
		snprintf(buf, len, "percpu_alloc");
		return;
	}
	snprintf(buf, len, "kmem ?");
}

static int on_cache_id(const void *key, const void *val, void *ctx)
{
	struct reader *r = ctx;
	struct { __u64 k; struct kmem_cache_info v; } e;

	e.k = *(const __u64 *)key;
	e.v = *(const struct kmem_cache_info *)val;
	return reader_push(r, &e);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The growth of each sample one drain's entries went to (merge[i]: entry i's sample, made by
 * it or by an earlier take): the series of its keys summed, fitted as mem's sites are, at the
 * sample's mean size. */
static int fit_growth(struct kmem_collector *c, struct profile *prof, const struct reader *counts,
		      const uint32_t *merge)
{
	uint32_t *ids = NULL, ns = 0, npts;
	int64_t *sum = NULL;
	struct proc_info *p = NULL;
	int err = 0;

	if (!counts->n)
		return 0;
	ids = malloc(counts->n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	memcpy(ids, merge, counts->n * sizeof(*ids));
	qsort(ids, counts->n, sizeof(*ids), u32_cmp);
	for (size_t i = 0; i < counts->n; i++)
		if (!ns || ids[ns - 1] != ids[i])
			ids[ns++] = ids[i];
	sum = calloc((size_t)ns * SNAPSHOTS_MAX, sizeof(*sum));
	if (!sum) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < counts->n; i++) {
		const struct count_entry *e = &((struct count_entry *)counts->v)[i];
		uint32_t si = (uint32_t)((uint32_t *)bsearch(&merge[i], ids, ns, sizeof(*ids),
							       u32_cmp) - ids);
		const int64_t *v;

		if (!p || p->pid != (pid_t)e->k.tgid)
			p = proc_table__find(c->base.procs, e->k.tgid);
		if (!snap_of(p))
			continue;
		npts = snapshots__count(snap_of(p));
		v = snapshots__site(snap_of(p), snap_k1(&e->k), e->k.ustack, NULL);
		for (uint32_t j = 0; v && j < npts && j < SNAPSHOTS_MAX; j++)
			sum[(size_t)si * SNAPSHOTS_MAX + j] += v[j];
	}
	for (uint32_t si = 0; si < ns; si++) {
		struct prof_sample *s = &prof->samples[ids[si]];

		p = proc_table__find(c->base.procs, s->pid);
		if (!snap_of(p) || s->values[T_ALLOC_OBJECTS] <= 0)
			continue;
		prof_growth__fit(snapshots__times(snap_of(p)), &sum[(size_t)si * SNAPSHOTS_MAX],
				 snapshots__count(snap_of(p)), snapshots__t0(snap_of(p)),
				 s->values[T_ALLOC_SPACE] / s->values[T_ALLOC_OBJECTS], &s->growth);
	}
out:
	free(sum);
	free(ids);
	return err;
}

static int cache_cmp(const void *a, const void *b)
{
	const struct kmem_cache_key *x = &((const struct cache_entry *)a)->k;
	const struct kmem_cache_key *y = &((const struct cache_entry *)b)->k;

	return x->tgid != y->tgid ? (x->tgid < y->tgid ? -1 : 1) :
	       x->cache != y->cache ? (x->cache < y->cache ? -1 : 1) : 0;
}

/* The allocations outstanding are those in the live table, whichever count or cache row they
 * were counted in: a spill took the rows of their keys into the profile earlier (its samples
 * hold no live numbers), the live table kept them for their frees. A key of the live table in
 * no row read now gets an empty one (its numbers 0 but what is live), sorted in; the cache
 * rows' live counts are made from it. */
static int live_rows(struct reader *counts, const struct reader *lives, struct reader *caches)
{
	const struct live_entry *l = lives->v;
	size_t nc = counts->n, ncache = caches->n;
	int err = 0;

	for (size_t i = 0; i < ncache; i++)
		((struct cache_entry *)caches->v)[i].v.live = 0;
	for (size_t i = 0; i < lives->n && !err; i++) {
		struct count_entry ce = { .k = l[i].v.key };
		struct cache_entry ke = { .k = { .tgid = l[i].v.key.tgid, .cache = l[i].v.cache } }, *kp;

		if ((!i || key_cmp(&l[i - 1].v.key, &l[i].v.key)) &&
		    !bsearch(&ce, counts->v, nc, sizeof(ce), count_cmp))
			err = reader_push(counts, &ce);
		if (!l[i].v.cache || err)
			continue;
		kp = bsearch(&ke, caches->v, ncache, sizeof(ke), cache_cmp);
		if (!kp) {
			err = reader_push(caches, &ke);
			if (err)
				break;
			/* sorted in at once: the next live entries look for it */
			qsort(caches->v, caches->n, sizeof(ke), cache_cmp);
			ncache = caches->n;
			kp = bsearch(&ke, caches->v, ncache, sizeof(ke), cache_cmp);
		}
		kp->v.live++;
	}
	if (counts->n > nc)
		qsort(counts->v, counts->n, sizeof(struct count_entry), count_cmp);
	return err;
}

/* A process whose live bytes per stack are sampled for the growth view (series_open): its
 * (process, kind, stacks) rows stay in the kernel at a spill, where its series read them and
 * its frees take them down (taken out and put back, a free or a count made meanwhile was lost,
 * and the series kept a block freed); once its series' last point is taken, the spills take
 * them (or the run's end reads them). */
static bool keeps_rows(struct kmem_collector *c, struct proc_info **last, pid_t tgid)
{
	if (!*last || (*last)->pid != tgid)
		*last = proc_table__find(c->base.procs, tgid);
	return series_open(*last);
}

struct count_take {
	struct kmem_collector *c;
	struct reader *counts;
	struct proc_info *last;
	int fd;
};

static int on_count_take(const void *key, const void *val, void *ctx)
{
	struct count_take *t = ctx;
	const struct stack_key *k = key;
	struct kmem_count v;

	(void)val;
	if (keeps_rows(t->c, &t->last, (pid_t)k->tgid))
		return 0;
	/* the value as it is deleted: what a program added since the batch's read is in it */
	if (bpf_map_lookup_and_delete_elem(t->fd, k, &v))
		return 0;
	return on_count(k, &v, t->counts);
}

/* The (process, kind, stacks) rows taken out of the kernel by a spill: every one at once
 * (one batch operation) when no process keeps its rows (keeps_rows), else those of the
 * processes that do not, one by one. */
static int take_counts(struct kmem_collector *c, struct reader *counts)
{
	struct count_take t = { .c = c, .counts = counts,
				.fd = COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, counts) };
	bool keep = false;

	counts->only = 0;
	counts->size = sizeof(struct count_entry);
	for (uint32_t i = 0; i < proc_table__count(c->base.procs) && !keep; i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);

		keep = series_open(p);
	}
	if (!keep)
		return bpfutil__map_take(t.fd, sizeof(struct stack_key), sizeof(struct kmem_count),
					 on_count, counts);
	return bpfutil__map_for_each(t.fd, sizeof(struct stack_key), sizeof(struct kmem_count),
				     on_count_take, &t);
}

/* Whether the totals of process tgid stay in the kernel at a spill: it may still count there
 * (it is alive, or a zombie: kill(tgid, 0)), it is traced and not read out yet (its read-out
 * and the wait for its exit's frees read them: await_exits), or it is PID 0 (interrupts' work,
 * counted all along). Those of the processes gone are taken: with -a the table filled with
 * them (32768 processes in a few minutes of a busy machine). What is live of a process is read
 * from the live table at the end (proc_lives), not from its row: its allocations are freed
 * after its row was taken (an inode's, past an RCU grace period). */
static bool keeps_totals(struct kmem_collector *c, pid_t tgid)
{
	struct proc_info *p;

	if (!tgid)
		return true;
	p = proc_table__find(c->base.procs, tgid);
	if (p && p->priv && !p->drained)
		return true;
	return !kill(tgid, 0) || errno != ESRCH;
}

struct totals_take {
	struct kmem_collector *c;
	struct reader *totals;
	int fd;
};

static int on_total_take(const void *key, const void *val, void *ctx)
{
	struct totals_take *t = ctx;
	__u32 tgid = *(const __u32 *)key;
	struct kmem_totals v;

	(void)val;
	if (keeps_totals(t->c, (pid_t)tgid))
		return 0;
	/* the row as it is deleted: no process of that PID counts into it any more (one the
	 * kernel gives the PID to now makes a row of its own) */
	if (bpf_map_lookup_and_delete_elem(t->fd, &tgid, &v))
		return 0;
	return on_total(&tgid, &v, t->totals);
}

/* The totals of the processes gone, taken out of the kernel by a spill (keeps_totals). */
static int take_totals(struct kmem_collector *c, struct reader *totals)
{
	struct totals_take t = { .c = c, .totals = totals,
				 .fd = bpf_map__fd(c->skel->maps.totals) };

	totals->only = 0;
	totals->size = sizeof(struct total_entry);
	return bpfutil__map_for_each(t.fd, sizeof(__u32), sizeof(struct kmem_totals),
				     on_total_take, &t);
}

/* What is live of each process (the live table's entries, by tgid), sorted by tgid. */
struct proc_live {
	__u32 tgid;
	bool said;		/* in the profile already (a totals row read) */
	__u64 count, bytes;
};

static int proc_live_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct proc_live *)a)->tgid, y = ((const struct proc_live *)b)->tgid;

	return x < y ? -1 : x > y;
}

static struct proc_live *proc_lives(const struct reader *lives, size_t *n)
{
	const struct live_entry *l = lives->v;
	struct proc_live *pl = calloc(lives->n ? lives->n : 1, sizeof(*pl));
	size_t m = 0;

	*n = 0;
	if (!pl)
		return NULL;
	for (size_t i = 0; i < lives->n; i++)
		pl[i] = (struct proc_live){ .tgid = l[i].v.key.tgid, .count = 1,
					    .bytes = l[i].v.bytes };
	qsort(pl, lives->n, sizeof(*pl), proc_live_cmp);
	for (size_t i = 0; i < lives->n; i++) {
		if (m && pl[m - 1].tgid == pl[i].tgid) {
			pl[m - 1].count++;
			pl[m - 1].bytes += pl[i].bytes;
		} else {
			pl[m++] = pl[i];
		}
	}
	*n = m;
	return pl;
}

/* Move the counts of process `only` (0: every process) into the profile, with its outstanding
 * allocations and their ages (at `now`, bpf_ktime_get_ns()'s clock), its caches and totals;
 * `remove`: delete them from the kernel (the process is done, or exec'd). `spill`: every
 * process's count and cache rows taken out of the kernel (take_counts), their processes named;
 * what is live stays in the kernel, for the frees to come (live_rows), and so do the totals. */
static int drain(struct kmem_collector *c, pid_t only, bool remove, bool exec, uint64_t now,
		 bool spill)
{
	struct profile *prof = c->env.prof;
	struct reader counts = { 0 }, lives = { 0 }, caches = { 0 }, totals = { 0 }, ids = { 0 };
	struct stack_table *st = stack_table__new();
	uint32_t *locs = malloc(MAX_LOCS * sizeof(*locs));
	struct proc_info *p = NULL;
	struct proc_live *pl = NULL;
	uint32_t *merge = NULL;
	size_t li = 0, npl = 0;
	int err;

	if (!st || !locs) {
		err = -ENOMEM;
		goto out;
	}
	if (spill) {
		err = take_counts(c, &counts);
		caches.size = sizeof(struct cache_entry);
		err = err ?: bpfutil__map_take(COLLECTOR_TAKEN_FD(&c->base, c->skel->maps,
								  cache_stats),
					       sizeof(struct kmem_cache_key),
					       sizeof(struct kmem_cache_stat), on_cache, &caches);
		err = err ?: take_totals(c, &totals);
	} else {
		err = read_counts(c, only, &counts);
		err = err ?: read_map(c->skel->maps.live, sizeof(__u64), sizeof(struct kmem_live),
				      on_live, &lives, sizeof(struct live_entry), only);
		/* both generations' rows: the report sums a (process, cache)'s rows
		 * (profile__merge_caches) */
		err = err ?: read_map(c->skel->maps.cache_stats_0, sizeof(struct kmem_cache_key),
				      sizeof(struct kmem_cache_stat), on_cache, &caches,
				      sizeof(struct cache_entry), only);
		err = err ?: read_map(c->skel->maps.cache_stats_1, sizeof(struct kmem_cache_key),
				      sizeof(struct kmem_cache_stat), on_cache, &caches,
				      sizeof(struct cache_entry), only);
		err = err ?: read_map(c->skel->maps.totals, sizeof(__u32),
				      sizeof(struct kmem_totals), on_total, &totals,
				      sizeof(struct total_entry), only);
	}
	ids.size = sizeof(__u64) + sizeof(struct kmem_cache_info);
	err = err ?: bpfutil__map_for_each(bpf_map__fd(c->skel->maps.cache_ids), sizeof(__u64),
					   sizeof(struct kmem_cache_info), on_cache_id, &ids);
	err = err ?: stack_table__read(st, bpf_map__fd(c->skel->maps.stacks));
	if (err)
		pr_warn(c->lc, "reading the kernel's allocation counts failed: %s; the report may be "
			"incomplete", strerror(-err));
	if (counts.n)
		qsort(counts.v, counts.n, sizeof(struct count_entry), count_cmp);
	if (lives.n)
		qsort(lives.v, lives.n, sizeof(struct live_entry), live_cmp);
	if (caches.n)
		qsort(caches.v, caches.n, sizeof(struct cache_entry), cache_cmp);
	if (!spill && !err)
		err = live_rows(&counts, &lives, &caches);

	/* the read that ends a traced process is its last snapshot (a spill's is not), unless
	 * its series took its last point after its exit, or ended (series_open): its rows may
	 * be taken */
	for (size_t i = 0; i < counts.n && !spill; i++) {
		const struct count_entry *e = &((struct count_entry *)counts.v)[i];
		struct proc_info *ep;
		struct snapshots *snap;

		if (i && ((struct count_entry *)counts.v)[i - 1].k.tgid == e->k.tgid)
			continue;
		ep = proc_table__find(c->base.procs, e->k.tgid);
		snap = snap_of(ep);
		if (!snap || !series_open(ep) ||
		    snapshots__begin(snap, (int64_t)(now - c->env.start_ns)) < 0)
			continue;
		for (size_t j = i; j < counts.n; j++) {
			const struct count_entry *f = &((struct count_entry *)counts.v)[j];

			if (f->k.tgid != e->k.tgid)
				break;
			snapshots__put(snap, snap_k1(&f->k), f->k.ustack, (int64_t)f->v.live_bytes);
		}
		snapshots__end(snap);
	}

	/* processes first, so that each has its name and command line before its samples; what
	 * is live of each from the live table (a spill's: at the end) */
	pl = proc_lives(&lives, &npl);
	if (!pl) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < totals.n; i++) {
		const struct total_entry *e = &((struct total_entry *)totals.v)[i];
		struct proc_live key_pl = { 0 }, *lp;
		struct prof_process *pp;

		p = report_proc(c, e->tgid, exec, e->v.comm);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		pp = profile__add_process(prof, e->tgid, p->comm, p->cmdline);
		if (!pp) {
			err = -errno;
			goto out;
		}
		if (snap_of(p))
			prof_process__set_growth_window(pp, snapshots__times(snap_of(p)),
							snapshots__count(snap_of(p)),
							snapshots__t0(snap_of(p)));
		key_pl.tgid = e->tgid;
		lp = bsearch(&key_pl, pl, npl, sizeof(*pl), proc_live_cmp);
		for (int t = 0; t < KMEM_T__COUNT; t++) {
			uint64_t v = e->v.v[t];

			if ((t == KMEM_T_PERCPU_ALLOC || t == KMEM_T_PERCPU_FREE) && !c->percpu)
				continue;
			if (t == KMEM_T_LIVE_COUNT || t == KMEM_T_LIVE_BYTES)
				v = !lp ? 0 : t == KMEM_T_LIVE_COUNT ? lp->count : lp->bytes;
			/* at an exec the old image's counts are read out and deleted and the
			 * new one's start at 0: the sums are the whole process's */
			prof_process__add_stat(prof, pp, total_names[t], v);
		}
		if (lp)
			lp->said = true;
		if (remove)
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.totals), &e->tgid);
	}

	/* what is live of a process whose totals a spill took (gone, its allocations live on) */
	for (size_t i = 0; i < npl; i++) {
		struct prof_process *pp = pl[i].said ? NULL : profile__find_process(prof, pl[i].tgid);

		if (!pp)
			continue;
		prof_process__add_stat(prof, pp, total_names[KMEM_T_LIVE_COUNT], pl[i].count);
		prof_process__add_stat(prof, pp, total_names[KMEM_T_LIVE_BYTES], pl[i].bytes);
	}

	/* One sample per displayed stack: keys that differ only in frames the report leaves
	 * out (the tracing machinery, unwinding garbage past the last user frame) are one site,
	 * their values, histograms, outstanding allocations and series summed. */
	merge = calloc(counts.n ? counts.n : 1, sizeof(*merge));
	if (!merge) {
		err = -ENOMEM;
		goto out;
	}
	p = NULL;
	for (size_t i = 0; i < counts.n; i++) {
		const struct count_entry *e = &((struct count_entry *)counts.v)[i];
		const struct ksyms *ks = e->k.kstack ? stacks__ksyms(c->lc) : NULL;
		int64_t vals[NTYPES];
		struct prof_sample *s;
		char leaf[96];
		uint32_t n = 0, si;
		size_t l0;

		if (!p || p->pid != (pid_t)e->k.tgid) {
			p = spill ? spill_proc(c, prof, e->k.tgid) : report_proc(c, e->k.tgid, exec,
										 NULL);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
		}
		kind_frame(c, e->k.aux, &ids, leaf, sizeof(leaf));
		locs[n++] = stacks__named_loc(prof, leaf);
		/* tp_btf programs run in the allocating task: leave out the tracing frames */
		n += stacks__key_locs(prof, st, ks, p->sp, p->pid, &e->k, true, locs + n);
		/* its live allocations, sorted by the same key: what is in use, and the
		 * outstanding ones and their ages below */
		while (li < lives.n && key_cmp(&((struct live_entry *)lives.v)[li].v.key, &e->k) < 0)
			li++;
		l0 = li;
		vals[T_INUSE_OBJECTS] = vals[T_INUSE_SPACE] = 0;
		for (; li < lives.n && !key_cmp(&((struct live_entry *)lives.v)[li].v.key, &e->k);
		     li++) {
			vals[T_INUSE_OBJECTS]++;
			vals[T_INUSE_SPACE] += ((struct live_entry *)lives.v)[li].v.bytes;
		}
		vals[T_ALLOC_OBJECTS] = e->v.allocs;
		vals[T_ALLOC_SPACE] = e->v.bytes_alloc;
		vals[T_WASTE_SPACE] = e->v.bytes_alloc - e->v.bytes_req;
		/* the same stack as an earlier key of this process: one site */
		si = profile__find_sample(prof, locs, n, e->k.tgid);
		if (si != PROF_NONE) {
			s = &prof->samples[si];
			for (int t = 0; t < NTYPES; t++)
				s->values[t] += vals[t];
			for (uint32_t b = 0; b < s->nhist && b < KMEM_HIST_BUCKETS; b++)
				s->hist[b] += e->v.hist[b];
		} else {
			s = profile__add_sample(prof, locs, n, vals, e->k.tgid);
			if (!s) {
				err = -errno;
				goto out;
			}
			prof_sample__set_hist(prof, s, (const uint64_t *)e->v.hist,
					      KMEM_HIST_BUCKETS);
		}
		merge[i] = (uint32_t)(s - prof->samples);
		for (size_t j = l0; j < li; j++) {
			const struct live_entry *l = &((struct live_entry *)lives.v)[j];
			uint64_t age = now > l->v.ts ? now - l->v.ts : 0;

			if (age < c->opts.min_age_ns)
				continue;
			if (!s->out.count || age < s->out.min_age_ns)
				s->out.min_age_ns = age;
			if (age > s->out.max_age_ns)
				s->out.max_age_ns = age;
			s->out.count++;
			s->out.bytes += l->v.bytes;
			s->out.sum_age_ns += age;
		}
		c->allocs += e->v.allocs;
		if (remove) {
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.counts_0), &e->k);
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.counts_1), &e->k);
		}
	}
	/* a spill's samples are fitted with the rest at the end (those of the keys then) */
	err = spill ? 0 : fit_growth(c, prof, &counts, merge);
	if (err)
		goto out;

	for (size_t i = 0; i < caches.n; i++) {
		const struct cache_entry *e = &((struct cache_entry *)caches.v)[i];
		struct prof_cache pc = {
			.pid = e->k.tgid, .allocs = e->v.allocs, .frees = e->v.frees,
			.bytes_req = e->v.bytes_req, .bytes_alloc = e->v.bytes_alloc,
			/* a spill's: in the live table, counted at the end (live_rows) */
			.live = spill ? 0 : e->v.live,
		};
		char name[KMEM_CACHE_NAME_LEN + 16];

		cache_name(c, e->k.cache, name, sizeof(name));
		pc.name = name;
		profile__add_cache(prof, &pc);
		if (remove) {
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.cache_stats_0), &e->k);
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.cache_stats_1), &e->k);
		}
	}
	if (remove) {
		for (size_t i = 0; i < lives.n; i++)
			bpf_map_delete_elem(bpf_map__fd(c->skel->maps.live),
					    &((struct live_entry *)lives.v)[i].ptr);
	}
out:
	if (err)
		pr_warn(c->lc, "building the profile failed: %s", strerror(-err));
	free(counts.v);
	free(lives.v);
	free(caches.v);
	free(totals.v);
	free(ids.v);
	free(pl);
	free(merge);
	free(locs);
	stack_table__free(st);
	return err;
}

/* ---- the run ---------------------------------------------------------------------------- */

static int on_seen(const void *key, const void *val, void *ctx)
{
	struct kmem_collector *c = ctx;
	pid_t tgid = *(const __u32 *)key;
	struct proc_info *p;

	(void)val;
	if (!tgid || proc_table__find(c->base.procs, tgid))
		return 0;
	p = proc_table__add(c->base.procs, tgid);
	if (p)
		proc_table__snapshot(c->base.procs, p);
	return 0;
}

static bool exit_done(pid_t pid);

/* Whether the snapshot being taken has begun a point of p's series: an open one, or the one
 * this snapshot closes. */
static bool in_point(struct proc_info *p)
{
	struct kmem_proc *kp = p ? p->priv : NULL;

	return series_open(p) || (snap_of(p) && kp->closing);
}

struct snap_read {
	struct kmem_collector *c;
	struct proc_info *last;
};

static int snap_count(const void *key, const void *val, void *ctx)
{
	const struct stack_key *k = key;
	const struct kmem_count *v = val;
	struct snap_read *r = ctx;
	struct snapshots *snap;

	/* a stack at 0 is 0 by default */
	if (!v->live_bytes)
		return 0;
	if (!r->last || r->last->pid != (pid_t)k->tgid)
		r->last = proc_table__find(r->c->base.procs, k->tgid);
	/* only into a point begun (in_point): another process's last one keeps its values */
	snap = in_point(r->last) ? snap_of(r->last) : NULL;
	if (snap)
		snapshots__put(snap, snap_k1(k), k->ustack, (int64_t)v->live_bytes);
	return 0;
}

/* Every traced process's live bytes per stack, for the growth view (series_open): one read of
 * the counts maps, at most twice a second and less often when a read costs more than
 * 1/SNAP_BUDGET. An ended process's point after the one that found its exit done is its last
 * (series_end): its rows are taken from then on. */
static void snapshot(struct kmem_collector *c, uint64_t now_ns)
{
	struct snap_read r = { .c = c };
	struct reader rows = { 0 };
	bool any = false, thinned = false;
	uint64_t cost;

	if (now_ns < c->snap_due)
		return;
	for (uint32_t i = 0; i < proc_table__count(c->base.procs); i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);
		struct snapshots *snap = series_open(p) ? snap_of(p) : NULL;
		struct kmem_proc *kp = p->priv;

		if (!snap)
			continue;
		thinned |= snapshots__begin(snap, (int64_t)(now_ns - c->env.start_ns)) > 0;
		any = true;
		if (p->attached || !kp->ended)
			continue;
		/* its exit found done at its point before (whose rows were read after the
		 * check): this one is its last */
		if (kp->exit_seen)
			kp->closing = true;
		else
			kp->exit_seen = exit_done(p->pid);
	}
	if (!any)
		return;
	/* both generations, a key's two rows summed (read_counts) */
	if (!read_counts(c, 0, &rows))
		for (size_t i = 0; i < rows.n; i++)
			snap_count(&((struct count_entry *)rows.v)[i].k,
				   &((struct count_entry *)rows.v)[i].v, &r);
	free(rows.v);
	for (uint32_t i = 0; i < proc_table__count(c->base.procs); i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);
		struct kmem_proc *kp = p->priv;

		if (in_point(p))
			snapshots__end(snap_of(p));
		/* after the read: its frees until then are in its last point */
		if (kp && kp->closing)
			series_end(c, p);
		if (kp)
			kp->closing = false;
	}
	cost = util_mono_ns() - now_ns;
	if (!c->snap_interval)
		c->snap_interval = SNAP_INTERVAL_NS;
	if (thinned || cost * SNAP_BUDGET > c->snap_interval) {
		c->snap_interval *= 2;
		pr_debug(c->lc, "snapshots of live bytes per stack now every %.1f s (%s)",
			 c->snap_interval / 1e9, thinned ? "store full" : "a read took too long");
	}
	pr_debug(c->lc, "snapshot of live bytes per stack: %.1f ms", cost / 1e6);
	c->snap_due = now_ns + c->snap_interval;
}

static uint64_t stat_sum(struct kmem_collector *c, int s)
{
	return bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.drops), s);
}

static int spill_take(void *m)
{
	struct kmem_collector *c = m;

	return drain(c, 0, false, false, util_mono_ns(), true);
}

/* The count table half used (a key brings up to two stacks to the stacks map of --max-stacks),
 * the cache table three quarters, or a table that refused something: their rows are taken into
 * the run's profile and the stacks map emptied but for what the live table and newer counts
 * refer to, so that counting goes on; with -a they filled with the rows of processes long gone
 * (counts_full 9.4 M of 15.1 M allocations in 2 minutes). What is live stays in the kernel for
 * its free (collector__spill). */
static void spill(struct kmem_collector *c)
{
	struct spill_check due = {
		.keys = { stat_sum(c, KMEM_STAT_COUNT_KEYS), stat_sum(c, KMEM_STAT_CACHE_KEYS),
			  stat_sum(c, KMEM_STAT_PROC_KEYS) },
		.room = { (c->opts.max_stacks + 1) / 2, MAX_CACHE_STATS, c->max_procs },
		.refused = stat_sum(c, KMEM_DROP_COUNTS_FULL) + stat_sum(c, KMEM_DROP_STACKS_FULL) +
			   stat_sum(c, KMEM_DROP_CACHES_FULL) + stat_sum(c, KMEM_DROP_PROCS_FULL),
	};

	collector__spill(&c->base, &c->env, &due, spill_take, c);
}

static void kmem_tick(void *m, int64_t t_ns, bool second)
{
	struct kmem_collector *c = m;

	(void)t_ns;
	unwinder__tick(c->base.unwinder);
	/* every tick: snapshot() keeps its own interval */
	if (!c->stop_ns)
		snapshot(c, util_mono_ns());
	if (c->env.start_ns && !c->stop_ns)
		spill(c);
	if (!second)
		return;
	/* libraries loaded since the last look; with -a, the processes seen since, while their
	 * mappings are there */
	for (uint32_t i = 0; i < proc_table__count(c->base.procs); i++)
		if (proc_table__at(c->base.procs, i)->attached)
			proc_table__snapshot(c->base.procs, proc_table__at(c->base.procs, i));
	if (c->env.all)
		bpfutil__map_for_each(bpf_map__fd(c->skel->maps.totals), sizeof(__u32),
				      sizeof(struct kmem_totals), on_seen, c);
}

static void kmem_progress(void *m, char *buf, size_t len)
{
	struct kmem_collector *c = m;
	uint64_t drops = 0;

	for (int d = 0; d < KMEM_DROP__COUNT; d++)
		if (d != KMEM_DROP_FREE_UNSEEN)
			drops += stat_sum(c, d);
	snprintf(buf, len, "drops %llu", (unsigned long long)drops);
}

static void kmem_finalize(void *m, pid_t pid, bool exec)
{
	struct kmem_collector *c = m;
	struct proc_info *p = proc_table__add(c->base.procs, pid);
	struct kmem_proc *kp = p ? p->priv : NULL;
	__u32 key = pid;

	if (!p)
		return;
	/* at its exit (or exec): its mappings are still readable (held at the stop), and its
	 * exit's own allocations are not counted. What the exit frees (its files, sockets,
	 * pipes: all it held, 99.7% of 2,000 socket pairs' 19.6 MB) is: it is read out at the end,
	 * after those frees (kmem_stop), so that what is live then is what it left behind. At an
	 * exec only the old program's mappings are read (its frames resolve in that snapshot,
	 * kept): a read-out of every table at each exec made a shell loop of 300 /bin/true 37
	 * times slower (a batch read costs the map's size, not its entries). */
	if (!exec && p->attached) {
		bpf_map_delete_elem(bpf_map__fd(c->skel->maps.targets), &key);
		p->attached = false;
	}
	proc_table__snapshot(c->base.procs, p);
	if (exec)
		return;
	if (kp) {
		kp->ended = true;
		return;
	}
	drain(c, pid, true, false, c->stop_ns ? c->stop_ns : util_mono_ns(), false);
	p->drained = true;
}

static void kmem_retire(void *m, pid_t pid)
{
	struct kmem_collector *c = m;
	struct proc_info *p = proc_table__find(c->base.procs, pid);
	__u32 key = pid;

	if (p && p->attached) {
		bpf_map_delete_elem(bpf_map__fd(c->skel->maps.targets), &key);
		p->attached = false;
		/* traced no more, not ended: no more points */
		series_end(c, p);
	}
}

static void kmem_started(void *m, uint64_t start_ns)
{
	struct kmem_collector *c = m;

	/* called again at a launched command's release: its snapshots' times count from then */
	for (uint32_t i = 0; c->env.start_ns && i < proc_table__count(c->base.procs); i++)
		snapshots__move_start(snap_of(proc_table__at(c->base.procs, i)),
				      (int64_t)(start_ns - c->env.start_ns));
	c->env.start_ns = start_ns;
}

/* Whether pid's exit has closed its files and freed its memory: it is gone, or a zombie */
static bool exit_done(pid_t pid)
{
	char path[64], *st, *rp;
	bool done;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = util_read_file(path, NULL);
	rp = st ? strrchr(st, ')') : NULL;
	done = !rp || (rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
	free(st);
	return done;
}

/* The live allocations of the processes that ended (their kernel totals), summed */
static uint64_t ended_live(struct kmem_collector *c)
{
	uint32_t n = proc_table__count(c->base.procs);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);
		struct kmem_proc *kp = p ? p->priv : NULL;
		struct kmem_totals t;
		__u32 key;

		if (!kp || !kp->ended || p->drained)
			continue;
		key = (__u32)p->pid;
		if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.totals), &key, &t))
			sum += t.v[KMEM_T_LIVE_COUNT];
	}
	return sum;
}

/* The processes that ended during the run (not -a's) are read out at the end: first their exits
 * finish (at most 2 s), then the frees the kernel defers past an RCU grace period come (an
 * inode, a socket's parts): rcu_barrier() returns when every callback queued before it has run
 * (2,000 pipes' inodes and security blobs are thousands of callbacks, which a loaded machine
 * runs over tens of ms; a live count that has not moved for a while cannot tell their end from
 * their thread waiting for a CPU), or where it cannot be asked for a grace period (membarrier's global command waits for one); then
 * until their live count has not moved for 60 ms (at most 2 s), for what those callbacks
 * queue in turn. */
static void await_exits(struct kmem_collector *c)
{
	struct timespec tick = { .tv_nsec = 20 * 1000000L };
	uint32_t n = proc_table__count(c->base.procs), ended = 0, still = 0;
	uint64_t live, before;

	for (uint32_t i = 0; i < n; i++) {
		struct proc_info *p = proc_table__at(c->base.procs, i);
		struct kmem_proc *kp = p ? p->priv : NULL;

		if (!kp || !kp->ended || p->drained)
			continue;
		ended++;
		for (int t = 0; t < 200 && !exit_done(p->pid); t++)
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000000L }, NULL);
	}
	if (!ended)
		return;
	if (!util_rcu_barrier())
		util_rcu_grace(20);
	before = ended_live(c);
	for (int t = 0; t < 100 && still < 3; t++) {
		nanosleep(&tick, NULL);
		live = ended_live(c);
		still = live == before ? still + 1 : 0;
		before = live;
	}
}

static void kmem_stop(void *m)
{
	struct kmem_collector *c = m;

	if (c->stop_ns)
		return;
	await_exits(c);
	/* every program returns early from now on: what is read is one cut */
	c->skel->bss->stopped = true;
	c->stop_ns = util_mono_ns();
}

static void kmem_finish(void *m)
{
	struct kmem_collector *c = m;
	struct profile *prof = c->env.prof;
	uint64_t end = c->stop_ns ? c->stop_ns : util_mono_ns();
	double secs = c->env.start_ns && end > c->env.start_ns ? (end - c->env.start_ns) / 1e9 : 0;
	uint64_t nested, misses = events_lost(c, &nested), d[KMEM_DROP__COUNT];

	drain(c, 0, false, false, end, false);
	profile__merge_caches(prof);
	collector__add_drops(prof, bpf_map__fd(c->skel->maps.drops), drop_names, 0,
			     KMEM_DROP__COUNT, -1, d);
	profile__add_drop(prof, "recursion_misses", misses);
	collector__note_reused(prof, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, KMEM_STAT_PIDS_REUSED));
	unwinder__add_drops(c->base.unwinder, prof);
	if (d[KMEM_DROP_COUNTS_FULL] || d[KMEM_DROP_STACKS_FULL])
		profile__add_note(prof, "the stack tables (--max-stacks %u) were full: %llu "
				  "%s not counted per stack (in the process and cache totals) and "
				  "%llu stack%s not kept; raise --max-stacks", c->opts.max_stacks,
				  (unsigned long long)d[KMEM_DROP_COUNTS_FULL],
				  d[KMEM_DROP_COUNTS_FULL] == 1 ? "allocation was" : "allocations were",
				  (unsigned long long)d[KMEM_DROP_STACKS_FULL],
				  d[KMEM_DROP_STACKS_FULL] == 1 ? "" : "s");
	if (d[KMEM_DROP_LIVE_FULL])
		profile__add_note(prof, "%llu %s not tracked to %s free: the live table "
				  "(--max-live %u) was full; outstanding counts miss %s; raise "
				  "--max-live", (unsigned long long)d[KMEM_DROP_LIVE_FULL],
				  d[KMEM_DROP_LIVE_FULL] == 1 ? "allocation was" : "allocations were",
				  d[KMEM_DROP_LIVE_FULL] == 1 ? "its" : "their", c->opts.max_live,
				  d[KMEM_DROP_LIVE_FULL] == 1 ? "it" : "them");
	if (d[KMEM_DROP_PROCS_FULL])
		profile__add_note(prof, "%llu %s in no process's totals: more than %d "
				  "processes had events, the table of their totals was full (the "
				  "stacks and caches still count %s)",
				  (unsigned long long)d[KMEM_DROP_PROCS_FULL],
				  d[KMEM_DROP_PROCS_FULL] == 1 ? "event is" : "events are", c->max_procs,
				  d[KMEM_DROP_PROCS_FULL] == 1 ? "it" : "them");
	if (d[KMEM_DROP_FREE_UNSEEN])
		profile__add_note(prof, "%llu %s allocated again without a free event (bulk frees "
				  "have none): %s as freed",
				  (unsigned long long)d[KMEM_DROP_FREE_UNSEEN],
				  d[KMEM_DROP_FREE_UNSEEN] == 1 ? "tracked pointer was"
								: "tracked pointers were",
				  d[KMEM_DROP_FREE_UNSEEN] == 1 ? "it counts" : "they count");
	if (misses)
		profile__add_note(prof, "%llu %s while the same program was running on that CPU and "
				  "%s skipped by the kernel (an interrupt's event met a program that "
				  "had just begun or was ending, or interrupted another interrupt's)",
				  (unsigned long long)misses,
				  misses == 1 ? "event came" : "events came", misses == 1 ? "was" : "were");
	if (d[KMEM_DROP_TABLE_BUSY])
		profile__add_note(prof, "%llu %s not counted: a table's bucket was locked by the "
				  "program the event's interrupt interrupted on its CPU (the kernel "
				  "refuses to nest there)", (unsigned long long)d[KMEM_DROP_TABLE_BUSY],
				  d[KMEM_DROP_TABLE_BUSY] == 1 ? "event was" : "events were");
	if (!c->env.all)
		profile__add_note(prof, "allocations and frees count for the task that made "
				  "them: an interrupt's (RCU callbacks, softirqs, completions) count "
				  "for no process, even one it interrupted, and kernel threads working "
				  "on a process's behalf (writeback) are not counted for it");
	/* the window the tracepoints were on; the report's Duration is the whole run */
	profile__add_info(prof, "traced_for", "%.2f s", secs);
	profile__add_info(prof, "allocations", "%llu", (unsigned long long)c->allocs);
	/* the interrupts' events that met the program of their tracepoint running on their CPU */
	profile__add_info(prof, "nested_events", "%llu", (unsigned long long)nested);
}

static void kmem_close(void *m)
{
	struct kmem_collector *c = m;

	if (!c)
		return;
	collector__close(&c->base, kmem_proc_free);
	free(c);
}

_Static_assert(offsetof(struct kmem_collector, base) == 0, "the shared hooks' collector");

const struct mode_ops kmem_mode_ops = {
	.name = "kmem",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = true,	/* a kernel thread's allocations are its own */
	.open = kmem_open,
	.close = kmem_close,
	.attach = kmem_attach,
	.attach_all = kmem_attach_all,
	.tick = kmem_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = kmem_progress,
	.finalize = kmem_finalize,
	.retire = kmem_retire,
	.started = kmem_started,
	.stop = kmem_stop,
	.finish = kmem_finish,
	.detach = collector__detach,
};
