/* The mem mode collector.
 *
 * Open, size, load: map sizes come from the options before load. The kernel side aggregates
 * everything; this file reads it once per process, when that process ends (held at exit, so its
 * mappings are still there) or when the run stops, with batched map reads, and writes samples:
 * one per (process, allocator function, stack), the allocator function shown as the leaf frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "core/closer.h"
#include "core/heapscan.h"
#include "core/bpfutil.h"
#include "core/minbtf.h"
#include "core/stacks.h"
#include "modes/mem/collect.h"
#include "modes/mem/trace.h"
#include "core/snapshots.h"
#include "core/target.h"
#include "core/procs.h"
#include "core/unwind.h"
#include "util/util.h"
#include "mem.skel.h"
#include <math.h>

#define SNAP_INTERVAL_NS 1000000000ull	/* first interval between snapshots of the sites */
#define SNAP_BUDGET 20			/* a snapshot may cost 1/SNAP_BUDGET of its interval */
/* --trace's ring buffer: 64-byte records drained every tick (100 ms), so this holds a burst of
 * about 500,000 calls, several times what a traced thread makes in a tick */
#define TRACE_RB_BYTES (32u << 20)

struct traced {
	pid_t pid;
	bool finalized;
	struct probe_links links;
	struct alloc_lib lib;
	dev_t lib_dev;		/* the probed file, to tell whether a new image maps the same */
	ino_t lib_ino;
	char *maps;		/* /proc/PID/maps at attach, read again every second and when
				 * the unwinder reads new code mappings */
	uint64_t maps_hash;	/* proc_maps__exec_hash of maps */
	/* earlier texts of maps whose code mappings differ, oldest first: they name frames in
	 * a library unmapped since (dlclose) */
	char *maps_old[PROC_SNAPSHOTS_KEPT - 1];
	uint32_t nmaps_old;
	bool unwound;		/* in the unwinder (attached, not seen with -a) */
	bool all;		/* seen with -a: named again when its entry counts an exec */
	uint32_t execs;		/* its entry's execs when it was last named */
	uint64_t fn_addr[MEM_FN__COUNT];	/* runtime address of each traced function */
	char comm[32];
	char cmdline[1024];
	pid_t ppid, ns_pid;	/* ns_pid: in its own PID namespace */
	struct scan_site *scan;	/* last reachability scan, by site (fn, stack) */
	uint32_t nscan;
	struct prof_scan scan_info;
	/* threads killed with the process before its scan at exit: their final registers */
	struct target_thread *dead;
	uint32_t ndead, capdead;
	struct snapshots *snap;	/* per-site live bytes over time; NULL if out of memory */
	uint64_t win_count, win_bytes;	/* allocations counted at the last window */
	struct mem_proc fin;	/* its counters when it was finalized, for one last window */
	bool fin_pending;
	struct win_site *wsites;	/* its sites' counts at the last window, by (fn, stack) */
	uint32_t nwsites;
};

/* A site's allocations at the last window (counts as proc_counts makes them). */
struct win_site {
	struct mem_site_key key;
	uint64_t allocs, bytes;
};

/* Leak classes of one site's outstanding blocks at the last scan. */
struct scan_site {
	uint32_t fn;
	uint64_t stack;
	uint64_t count[PROF_LEAK__COUNT];
	uint64_t bytes[PROF_LEAK__COUNT];
};

struct mem_collector {
	struct mem_bpf *skel;
	struct bpf_link *map_links[2];	/* --mmap: sys_enter, sys_exit */
	struct bpf_link *held_links[2];	/* held counts: sched_process_exec, sched_process_exit */
	const struct log_ctx *lc;
	struct mem_collector_opts opts;
	struct traced *t;
	uint32_t nt, capt;
	uint64_t start_ns;	/* CLOCK_MONOTONIC when tracing began */
	uint64_t snap_interval;	/* ns between snapshots of the sites */
	uint64_t snap_due;	/* CLOCK_MONOTONIC of the next one */
	struct fd_closer *closer;	/* links of finished processes close off the run loop */
	struct unwinder *unwinder;	/* NULL: frame pointers only */
	struct probe_links *sys;	/* -a: links without a pid filter, one pair per library */
	uint32_t nsys;
	struct mem_trace *trace;	/* --trace, else NULL */
	struct profile *fin_win;	/* sites of processes finalized since the last window */
	struct mem_live_slot *live;	/* the live table's slots, mapped; NULL before load */
	uint32_t nlive;			/* how many (a power of two) */
	uint64_t *live_used;		/* a bit a page of it (abi/mem.h), mapped */
	uint32_t npages;		/* how many pages */
	uint32_t nwords;		/* how many words of marks */
	struct mem_proc *procs;		/* the process table's slots (abi/mem.h), mapped */
	uint32_t nprocs;		/* how many (a power of two) */
	/* the stacks of processes' earlier images (finalized at an exec), forgotten at their
	 * end: the new image may still name them (its threads' last stack) */
	struct pid_stack *kept_stacks;
	uint32_t nkept, capkept;
	bool ending;		/* finalize_all: nothing is forgotten in the kernel any more */
};

struct pid_stack {
	pid_t pid;
	__u64 stack;
};

static const char *const drop_names[MEM_DROP__COUNT] = {
	[MEM_DROP_LIVE_FULL] = "live_table_full",
	[MEM_DROP_SITES_FULL] = "site_table_full",
	[MEM_DROP_STACKS_FULL] = "stack_table_full",
	[MEM_DROP_STACK_FAIL] = "stack_capture_failed",
	[MEM_DROP_NO_STATE] = "missing_entry_state",
	[MEM_DROP_PROCS_FULL] = "process_table_full",
	[MEM_DROP_CALLERS_FULL] = "caller_table_full",
	[MEM_DROP_REGIONS_FULL] = "region_table_full",
	[MEM_DROP_MAP_SPAN] = "unmap_span_too_wide",
	[MEM_DROP_TRACE_FULL] = "trace_buffer_full",
};

/* The mapping category's leaf functions (enum mem_map_fn) and its stats' names. */
static const char *const map_fn_names[MEM_MAP__COUNT] = {
	[MEM_MAP_MMAP] = "mmap", [MEM_MAP_MREMAP] = "mremap", [MEM_MAP_BRK] = "brk",
	[MEM_MAP_MUNMAP] = "munmap",
};

int mem_profile__init(struct profile *prof, bool leaks)
{
	char name[32];
	int err = 0;

	err = err ?: profile__add_type(prof, "alloc_objects", "count");
	err = err ?: profile__add_type(prof, "alloc_space", "bytes");
	err = err ?: profile__add_type(prof, "inuse_objects", "count");
	err = err ?: profile__add_type(prof, "inuse_space", "bytes");
	for (int cl = 0; leaks && cl < PROF_LEAK__COUNT; cl++) {
		snprintf(name, sizeof(name), "%s_objects", prof_leak_class_names[cl]);
		err = err ?: profile__add_type(prof, name, "count");
		snprintf(name, sizeof(name), "%s_space", prof_leak_class_names[cl]);
		err = err ?: profile__add_type(prof, name, "bytes");
	}
	prof->default_type = 1;
	return err;
}

int mem_profile__add_mmap_types(struct profile *prof)
{
	int err = 0;

	err = err ?: profile__add_type(prof, "mmap_objects", "count");
	err = err ?: profile__add_type(prof, "mmap_space", "bytes");
	err = err ?: profile__add_type(prof, "mmap_inuse_objects", "count");
	err = err ?: profile__add_type(prof, "mmap_inuse_space", "bytes");
	return err;
}

/* ---- sampled modes ---------------------------------------------------------------------- */

static bool sampled(const struct mem_collector_opts *o)
{
	return o->sample_mode == MEM_SAMPLE_BYTES || o->sample_mode == MEM_SAMPLE_EVERY;
}

/* A count the kernel keeps as a sum of weights (sampled modes) in allocations, rounded. */
static uint64_t wcount(bool smp, uint64_t v)
{
	return smp ? (v + MEM_WEIGHT_ONE / 2) >> MEM_WEIGHT_SHIFT : v;
}

static void proc_counts(bool smp, struct mem_proc *mp)
{
	if (!smp)
		return;
	for (int i = 0; i < MEM_FN__COUNT; i++)
		mp->calls[i] = wcount(smp, mp->calls[i]);
	mp->alloc_count = wcount(smp, mp->alloc_count);
	mp->free_count = wcount(smp, mp->free_count);
	mp->live_count = wcount(smp, mp->live_count);
	mp->failed = wcount(smp, mp->failed);
}

static void site_counts(bool smp, struct mem_site_val *v)
{
	if (!smp)
		return;
	v->allocs = wcount(smp, v->allocs);
	v->frees = wcount(smp, v->frees);
	v->failed = wcount(smp, v->failed);
	v->temps = wcount(smp, v->temps);
	for (int i = 0; i < MEM_HIST_BUCKETS; i++)
		v->hist[i] = wcount(smp, v->hist[i]);
	for (int i = 0; i < MEM_LIFE_BUCKETS; i++)
		v->life[i] = wcount(smp, v->life[i]);
}

/* The sampler's fixed-point tables (abi/mem.h), from libm. */
static void sampler_tables(struct mem_bpf *skel, const struct mem_collector_opts *o)
{
	skel->rodata->sample_mode = o->sample_mode;
	skel->rodata->sample_period = o->sample_period;
	for (int i = 0; i <= MEM_LN_STEPS; i++)
		skel->rodata->ln_tab[i] = (__u32)llround(log1p((double)i / MEM_LN_STEPS) * 0x1p32);
	for (int i = 0; i < MEM_EXP_INT; i++)
		skel->rodata->exp_int_tab[i] = (__u64)llround(exp(-(double)i) * 0x1p30);
	for (int i = 0; i < MEM_EXP_FRAC; i++)
		skel->rodata->exp_frac_tab[i] = (__u64)llround(exp(-(double)i / MEM_EXP_FRAC) *
							       0x1p30);
}

/* The allocator library's mappings in pid: [lo, hi) over every mapping of its file. */
static void lib_range(pid_t pid, const char *path, __u64 *lo, __u64 *hi)
{
	char maps[64], line[PATH_MAX + 128];
	unsigned long long a, b;
	FILE *f;

	*lo = *hi = 0;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		size_t n;

		if (!file || sscanf(line, "%llx-%llx", &a, &b) != 2)
			continue;
		n = strcspn(file, "\n");
		/* a library deleted or replaced since it was mapped (probes.c) */
		if (n > 10 && !strncmp(file + n - 10, " (deleted)", 10))
			n -= 10;
		if (n != strlen(path) || strncmp(file, path, n))
			continue;
		if (!*lo || a < *lo)
			*lo = a;
		if (b > *hi)
			*hi = b;
	}
	fclose(f);
}

int mem_profile__init_alloc_only(struct profile *prof)
{
	int err = 0;

	err = err ?: profile__add_type(prof, "alloc_objects", "count");
	err = err ?: profile__add_type(prof, "alloc_space", "bytes");
	prof->default_type = 1;
	return err;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* libbpf's callback has no context argument, hence a file-level flag */
/* ---- the live table (mem.bpf.c, "The live table"), read and emptied through its mapping ---- */

/* The mapping's length of an array map of n values of size bytes: whole pages */
static size_t array_bytes(size_t n, size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n * size + pg - 1) / pg * pg;
}

static size_t live_bytes(const struct mem_collector *c)
{
	return array_bytes(c->nlive, sizeof(*c->live));
}

static size_t live_used_bytes(const struct mem_collector *c)
{
	return array_bytes(c->nwords * MEM_LIVE_MARK_SETS, sizeof(*c->live_used));
}

static size_t procs_bytes(const struct mem_collector *c)
{
	return array_bytes(c->nprocs, sizeof(*c->procs));
}

/* Map an array map of len bytes read and written from here (BPF_F_MMAPABLE): its address, or
 * NULL with *err set and said (what: the table's name) */
static void *map_array(struct mem_collector *c, struct bpf_map *m, size_t len, const char *what,
		       int *err)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);

	if (p != MAP_FAILED)
		return p;
	*err = -errno;
	pr_err(c->lc, "cannot map the %s: %s", what, strerror(-*err));
	return NULL;
}

/* ---- the process table (abi/mem.h): open addressing by pid, read through its mapping ---- */

/* pid's entry in the mapping, or NULL */
static struct mem_proc *proc_entry(const struct mem_collector *c, pid_t pid)
{
	if (!c->procs || pid <= 0)
		return NULL;
	for (uint32_t i = 0; i < MEM_PROC_PROBE; i++) {
		struct mem_proc *p = &c->procs[((uint32_t)pid + i) & (c->nprocs - 1)];

		if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) == (__u32)pid)
			return p;
	}
	return NULL;
}

/* A copy of pid's entry into *out: 0, or -ENOENT. The BPF side adds to it meanwhile, word by
 * word, as it did to a hash map's value that a lookup copied. */
static int proc_copy(const struct mem_collector *c, pid_t pid, struct mem_proc *out)
{
	const struct mem_proc *p = proc_entry(c, pid);

	if (!p)
		return -ENOENT;
	memcpy(out, p, sizeof(*out));
	return 0;
}

/* Make pid's entry from *init (its counters): -E2BIG when --max-procs entries are in use or its
 * window has no empty slot. The slot is reserved first (MEM_PROC_CLEARING: no lookup finds it,
 * no claim of -a's BPF side takes it), filled, then given the pid. */
static int proc_make(struct mem_collector *c, pid_t pid, const struct mem_proc *init)
{
	struct mem_proc *p = proc_entry(c, pid);

	if (p) {
		/* made again (as a hash map's update would have): its counters start over */
		memcpy((char *)p + sizeof(p->pid), (const char *)init + sizeof(p->pid),
		       sizeof(*p) - sizeof(p->pid));
		return 0;
	}
	if (__atomic_fetch_add(&c->skel->bss->procs_used, 1, __ATOMIC_SEQ_CST) >=
	    c->opts.max_procs)
		goto full;
	for (uint32_t i = 0; i < MEM_PROC_PROBE; i++) {
		p = &c->procs[((uint32_t)pid + i) & (c->nprocs - 1)];
		if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) ||
		    !__atomic_compare_exchange_n(&p->pid, &(__u32){ 0 }, MEM_PROC_CLEARING, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		memcpy((char *)p + sizeof(p->pid), (const char *)init + sizeof(p->pid),
		       sizeof(*p) - sizeof(p->pid));
		__atomic_store_n(&p->pid, (__u32)pid, __ATOMIC_RELEASE);
		return 0;
	}
full:
	__atomic_fetch_sub(&c->skel->bss->procs_used, 1, __ATOMIC_SEQ_CST);
	return -E2BIG;
}

/* Why pid's entry could not be made (proc_make's err), said */
static void proc_full(struct mem_collector *c, pid_t pid, int err)
{
	pr_err(c->lc, "cannot trace PID %d: %s", pid, err == -E2BIG ? "the process table is full "
	       "(--max-procs); it runs untraced; raise --max-procs" : strerror(-err));
}

/* Empty pid's entry (if any): no lookup finds it from the first store on */
static void proc_clear(struct mem_collector *c, pid_t pid)
{
	struct mem_proc *p = proc_entry(c, pid);

	if (!p)
		return;
	__atomic_store_n(&p->pid, MEM_PROC_CLEARING, __ATOMIC_SEQ_CST);
	memset((char *)p + sizeof(p->pid), 0, sizeof(*p) - sizeof(p->pid));
	__atomic_store_n(&p->pid, 0, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&c->skel->bss->procs_used, 1, __ATOMIC_SEQ_CST);
}

typedef int (*live_cb)(const struct mem_live_key *k, const struct mem_live_val *v, void *ctx);

/* Empty slot i, pid's live block (pid is finished: nothing of its is in flight). */
static void live_empty(struct mem_collector *c, uint32_t i, pid_t pid)
{
	struct mem_live_slot *s = &c->live[i];
	uint32_t want = MEM_LIVE;

	if (!__atomic_compare_exchange_n(&s->state, &want, MEM_LIVE_BUSY, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if ((pid_t)s->pid != pid) {
		__atomic_store_n(&s->state, MEM_LIVE, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&s->state, MEM_LIVE_EMPTY, __ATOMIC_RELEASE);
	if (s->dist)
		__atomic_fetch_sub(&c->live[(i - s->dist) & (c->nlive - 1)].over, 1,
				   __ATOMIC_ACQ_REL);
}

/* The set of marks pid's claims mark (abi/mem.h, MEM_LIVE_MARK_SETS). */
static uint32_t mark_set(pid_t pid)
{
	return (uint32_t)pid & (MEM_LIVE_MARK_SETS - 1);
}

/* Whether the page of n slots from first holds a block of a pid of set `set`, or a slot being
 * filled or emptied (whose pid is not known yet: perhaps one of the set's). */
static bool live_page_used(const struct mem_collector *c, uint32_t first, uint32_t n,
			   uint32_t set)
{
	for (uint32_t i = first; i < first + n; i++) {
		uint32_t st = __atomic_load_n(&c->live[i].state, __ATOMIC_ACQUIRE);

		if (st == MEM_LIVE_BUSY ||
		    (st == MEM_LIVE && mark_set((pid_t)c->live[i].pid) == set))
			return true;
	}
	return false;
}

/* Every live block of pid, as (key, value), in one pass over the pages of the table that pid's
 * set of marks marks as having held a block of its pids (all 128 MiB at the default size at
 * worst); forget: each slot is emptied once read (cb NULL: only that), and a page left with no
 * block of the set loses the set's mark: cleared, then the page read again and the mark set
 * back if a program claimed a slot there meanwhile (it marks after its claim: abi/mem.h).
 * *pages: how many pages were read, if not NULL. */
static int live_for_each(struct mem_collector *c, pid_t pid, live_cb cb, void *ctx, bool forget,
			 uint32_t *pages)
{
	uint32_t per = c->nlive / c->npages, read = 0, set = mark_set(pid);
	uint64_t *marks = c->live_used + (size_t)set * c->nwords;
	int err = 0;

	for (uint32_t pg = 0; c->live && pg < c->npages; pg++) {
		uint32_t first = pg * per;
		uint64_t *w = &marks[pg >> 6], bit = 1ULL << (pg & 63);

		if (!(pg & 63) && !__atomic_load_n(w, __ATOMIC_ACQUIRE)) {
			pg += 63;	/* 64 pages without a block */
			continue;
		}
		if (!(__atomic_load_n(w, __ATOMIC_ACQUIRE) & bit))
			continue;
		read++;
		for (uint32_t i = first; i < first + per; i++) {
			const struct mem_live_slot *s = &c->live[i];
			struct mem_live_key k;
			struct mem_live_val v;

			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != MEM_LIVE ||
			    (pid_t)s->pid != pid)
				continue;
			if (cb && !err) {
				k = (struct mem_live_key){ .pid = s->pid, .ptr = s->ptr };
				v = (struct mem_live_val){ .size = s->size, .stack = s->stack,
							   .ts = s->ts, .fn = s->fn,
							   .weight = s->weight };
				err = cb(&k, &v, ctx);
				if (err && !forget)
					goto out;
			}
			if (forget)
				live_empty(c, i, pid);
		}
		if (forget && !live_page_used(c, first, per, set)) {
			__atomic_fetch_and(w, ~bit, __ATOMIC_SEQ_CST);
			if (live_page_used(c, first, per, set))
				__atomic_fetch_or(w, bit, __ATOMIC_SEQ_CST);
		}
	}
out:
	if (pages)
		*pages = read;
	return err;
}

static void unwinder_maps(void *cv, pid_t pid, const char *maps);

struct mem_collector *mem_collector__new(const struct mem_collector_opts *o)
{
	struct mem_collector *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->lc = o->lc;
	c->opts = *o;
	c->snap_interval = SNAP_INTERVAL_NS;
	c->closer = fd_closer__new(FD_CLOSER_THREADS);	/* NULL: links close synchronously */
	bpfutil__libbpf_messages(o->lc);

	c->skel = MINBTF_OPEN(c->lc, mem_bpf);	/* CO-RE: core/minbtf.h */
	if (!c->skel) {
		err = -errno;
		pr_err(c->lc, "cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	c->skel->rodata->min_size = o->min_size;
	c->skel->rodata->max_size = o->max_size;
	c->skel->rodata->temp_ns = o->temp_ns;
	c->skel->rodata->trace_all = o->trace_all;
	c->skel->rodata->self_tgid = getpid();
	c->skel->rodata->trace_calls = o->trace_path != NULL;
	c->skel->rodata->track_maps = o->mmap;
	{
		/* tests only: a call made to stay in flight at the end of a run (mem.bpf.c) */
		const char *t = getenv("EBPROF_TEST_STALL_SIZE");

		c->skel->rodata->test_stall_size = t ? strtoull(t, NULL, 0) : 0;
		t = getenv("EBPROF_TEST_STALL_AT");
		c->skel->rodata->test_stall_entry = t && !strcmp(t, "entry");
	}
	if (o->trace_path)
		bpf_map__set_max_entries(c->skel->maps.trace_rb, TRACE_RB_BYTES);
	sampler_tables(c->skel, o);
	/* --alloc-only has its own entry program and no return one (loading the others would
	 * only cost start-up) */
	bpf_program__set_autoload(c->skel->progs.mem_enter_alloc_only,
				  o->sample_mode == MEM_SAMPLE_ALLOC_ONLY);
	bpf_program__set_autoload(c->skel->progs.mem_enter, o->sample_mode != MEM_SAMPLE_ALLOC_ONLY);
	bpf_program__set_autoload(c->skel->progs.mem_exit, o->sample_mode != MEM_SAMPLE_ALLOC_ONLY);
	/* every mode holds per-thread counts (mem.bpf.c, hold_alloc; mem_alloc_only.bpf.h) */
	bpf_program__set_autoload(c->skel->progs.held_exec, true);
	bpf_program__set_autoload(c->skel->progs.held_exit, true);
	bpf_program__set_autoload(c->skel->progs.held_flush_iter, true);
	bpf_program__set_expected_attach_type(c->skel->progs.mem_enter_alloc_only,
					      EBPROF_BPF_TRACE_UPROBE_MULTI);
	/* --max-live's default: the table is preallocated (64 bytes a slot), and a sampled run
	 * keeps one block in its period's live, an alloc-only run none */
	if (!c->opts.max_live)
		c->opts.max_live = o->sample_mode == MEM_SAMPLE_ALLOC_ONLY ? 1
				   : o->sample_mode ? MEM_DEFAULT_MAX_LIVE_SAMPLED
				   : MEM_DEFAULT_MAX_LIVE;
	c->nlive = 1;
	while (c->nlive < c->opts.max_live && c->nlive < (1u << 31))
		c->nlive <<= 1;
	bpf_map__set_max_entries(c->skel->maps.live, c->nlive);
	c->npages = c->nlive >> MEM_LIVE_PAGE_SHIFT ? c->nlive >> MEM_LIVE_PAGE_SHIFT : 1;
	c->nwords = (c->npages + 63) / 64;
	bpf_map__set_max_entries(c->skel->maps.live_used, c->nwords * MEM_LIVE_MARK_SETS);
	c->skel->rodata->live_mask = c->nlive - 1;
	bpf_map__set_max_entries(c->skel->maps.sites, o->max_stacks);
	bpf_map__set_max_entries(c->skel->maps.stacks, o->max_stacks);
	/* twice the entries, so that a window seldom fills (abi/mem.h) */
	c->nprocs = 2;
	while (c->nprocs < 2 * (uint64_t)o->max_procs && c->nprocs < (1u << 30))
		c->nprocs <<= 1;
	bpf_map__set_max_entries(c->skel->maps.procs, c->nprocs);
	c->skel->rodata->procs_mask = c->nprocs - 1;
	c->skel->rodata->max_procs = o->max_procs;
	c->skel->rodata->unwind_mode = o->unwind != UNWIND_FP;
	unwind__size_maps(c->skel->obj, o->unwind, o->max_procs, 0);
	unwind__hold_at_loader(c->skel->obj, o->unwind);
	bpf_program__set_expected_attach_type(c->skel->progs.mem_enter,
					      EBPROF_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(c->skel->progs.mem_exit,
					      EBPROF_BPF_TRACE_UPROBE_MULTI);
	if (o->mmap) {
		bpf_program__set_autoload(c->skel->progs.map_enter, true);
		bpf_program__set_autoload(c->skel->progs.map_exit, true);
		bpf_map__set_max_entries(c->skel->maps.regions,
					 o->max_regions ? o->max_regions : 1 << 16);
		bpf_map__set_max_entries(c->skel->maps.msites, o->max_stacks);
		bpf_map__set_max_entries(c->skel->maps.mprocs, o->max_procs);
	} else {
		/* unused: as small as the kernel allows */
		bpf_map__set_max_entries(c->skel->maps.regions, 1);
		bpf_map__set_max_entries(c->skel->maps.msites, 1);
		bpf_map__set_max_entries(c->skel->maps.mprocs, 1);
	}
	err = mem_bpf__load(c->skel);
	if (err) {
		pr_err(c->lc, "cannot load the BPF program into the kernel: %s%s", strerror(-err),
		       c->lc && c->lc->verbose >= 2 ? "" : " (run with -vv for the verifier log)");
		goto fail;
	}
	c->live = map_array(c, c->skel->maps.live, live_bytes(c), "live table", &err);
	if (!c->live)
		goto fail;
	c->live_used = map_array(c, c->skel->maps.live_used, live_used_bytes(c),
				 "live table's page marks", &err);
	if (!c->live_used)
		goto fail;
	c->procs = map_array(c, c->skel->maps.procs, procs_bytes(c), "process table", &err);
	if (!c->procs)
		goto fail;
	c->unwinder = unwinder__open(c->lc, o->unwind, c->skel->obj);
	unwinder__on_maps(c->unwinder, unwinder_maps, c);
	unwinder__use_closer(c->unwinder, c->closer);
	if (o->mmap) {
		/* system-wide tracepoints, filtered by the process table */
		c->map_links[0] = bpf_program__attach(c->skel->progs.map_enter);
		c->map_links[1] = c->map_links[0] ? bpf_program__attach(c->skel->progs.map_exit)
						  : NULL;
		if (!c->map_links[1]) {
			err = -errno;
			pr_err(c->lc, "cannot attach to the sys_enter/sys_exit tracepoints for --mmap: "
				      "%s", strerror(errno));
			goto fail;
		}
	}
	if (o->trace_path) {
		c->trace = mem_trace__new(o->trace_path, bpf_map__fd(c->skel->maps.trace_rb),
					  bpf_map__fd(c->skel->maps.stacks), mono_ns());
		if (!c->trace) {
			err = -errno;
			pr_err(c->lc, "cannot write the trace to %s: %s", o->trace_path,
			       strerror(errno));
			goto fail;
		}
	}
	/* a thread's counts held in its state reach the maps when it execs or exits */
	c->held_links[0] = bpf_program__attach(c->skel->progs.held_exec);
	c->held_links[1] = c->held_links[0] ? bpf_program__attach(c->skel->progs.held_exit) : NULL;
	if (!c->held_links[1]) {
		err = -errno;
		pr_err(c->lc, "cannot attach to the sched_process_exec/exit tracepoints: %s",
		       strerror(errno));
		goto fail;
	}
	return c;
fail:
	mem_collector__free(c);
	errno = -err;
	return NULL;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void mem_collector__set_start(struct mem_collector *c, uint64_t start_ns)
{
	/* set again at a launched command's release: its snapshots' times count from then */
	for (uint32_t i = 0; c->start_ns && i < c->nt; i++)
		snapshots__move_start(c->t[i].snap, (int64_t)(start_ns - c->start_ns));
	mem_trace__set_start(c->trace, start_ns);
	c->start_ns = start_ns;
	c->snap_due = start_ns + c->snap_interval;
}

static struct traced *find(struct mem_collector *c, pid_t pid)
{
	for (uint32_t i = 0; i < c->nt; i++)
		if (c->t[i].pid == pid && !c->t[i].finalized)
			return &c->t[i];
	return NULL;
}

/* Runtime addresses of the probed functions, from the file offsets and the mappings. */
static void find_fn_addrs(struct traced *t)
{
	const char *line = t->maps;

	while (line && *line) {
		unsigned long start, end, off;
		char perms[8];
		int pos = 0;
		const char *nl = strchr(line, '\n'), *path;
		size_t plen;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &start, &end, perms, &off, &pos) == 4 &&
		    perms[2] == 'x') {
			path = line + pos;
			while (*path == ' ')
				path++;
			plen = nl ? (size_t)(nl - path) : strlen(path);
			for (uint32_t o = 0; o < t->lib.nobjs; o++) {
				const struct alloc_obj *ob = &t->lib.objs[o];

				if (plen != strlen(ob->path) || strncmp(path, ob->path, plen))
					continue;
				for (uint32_t i = 0; i < ob->nprobes; i++) {
					/* the function's entry, not where its probe went */
					unsigned long fo = ob->entries[i];
					uint32_t fn = (uint32_t)ob->cookies[i];

					/* the first probe point of a function stands for it */
					if (fo >= off && fo < off + (end - start) && fn < MEM_FN__COUNT &&
					    !t->fn_addr[fn])
						t->fn_addr[fn] = start + fo - off;
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	for (int f = 0; f < MEM_FN__COUNT; f++)
		for (int a = 0; a < MEM_FN__COUNT; a++)
			if ((t->lib.alias_mask[f] & (1u << a)) && !t->fn_addr[a])
				t->fn_addr[a] = t->fn_addr[f];
}

/* fresh (taken) becomes t's maps text; the one it replaces is kept when its code mappings
 * differ, the oldest of those forgotten past PROC_SNAPSHOTS_KEPT - 1 */
static void keep_maps(struct traced *t, char *fresh)
{
	uint64_t h = proc_maps__exec_hash(fresh);

	if (t->maps && h != t->maps_hash) {
		if (t->nmaps_old == PROC_SNAPSHOTS_KEPT - 1) {
			free(t->maps_old[0]);
			memmove(t->maps_old, t->maps_old + 1,
				(PROC_SNAPSHOTS_KEPT - 2) * sizeof(*t->maps_old));
			t->nmaps_old--;
		}
		t->maps_old[t->nmaps_old++] = t->maps;
	} else {
		free(t->maps);
	}
	t->maps = fresh;
	t->maps_hash = h;
}

static void forget_maps(struct traced *t)
{
	free(t->maps);
	t->maps = NULL;
	for (uint32_t i = 0; i < t->nmaps_old; i++)
		free(t->maps_old[i]);
	t->nmaps_old = 0;
}

/* Replace the maps snapshot with the current one; false if the process has none any more.
 * New executable mappings (dlopen) go to the unwinder u (NULL: none). */
static bool refresh_maps(struct unwinder *u, struct traced *t)
{
	char path[64], *fresh;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	fresh = util_read_file(path, NULL);
	if (!fresh || !*fresh) {
		free(fresh);
		return false;
	}
	keep_maps(t, fresh);
	unwinder__load(u, t->pid, fresh);	/* nothing when its code mappings are the same */
	return true;
}

/* The unwinder read t's mappings with code new to it (unwinder__on_maps): a library whose
 * code a stack met, perhaps opened and closed between two refreshes */
static void unwinder_maps(void *cv, pid_t pid, const char *maps)
{
	struct mem_collector *c = cv;
	struct traced *t = NULL;
	char *copy;

	for (uint32_t i = 0; i < c->nt && !t; i++)
		if (c->t[i].pid == pid && !c->t[i].finalized)
			t = &c->t[i];
	if (!t || !t->maps || proc_maps__exec_hash(maps) == t->maps_hash)
		return;
	copy = strdup(maps);
	if (copy)
		keep_maps(t, copy);
}

/* The symbolizer's view of t's process: maps (its current text, or NULL: read now) with the
 * earlier texts kept behind it (sym_proc__keep_previous: an address no newer one maps is
 * looked up in them) */
static struct sym_proc *load_sym(struct symbolizer *sym, const struct traced *t,
				 const char *maps)
{
	struct sym_proc *prev = NULL, *sp;

	for (uint32_t i = 0; i < t->nmaps_old; i++) {
		struct sym_proc *q = symbolizer__load_pid_maps(sym, t->pid, t->maps_old[i]);

		if (!q)
			continue;
		sym_proc__keep_previous(q, prev, PROC_SNAPSHOTS_KEPT);
		prev = q;
	}
	sp = maps ? symbolizer__load_pid_maps(sym, t->pid, maps) : symbolizer__load_pid(sym, t->pid);
	if (!sp) {
		sym_proc__free(prev);
		return NULL;
	}
	sym_proc__keep_previous(sp, prev, PROC_SNAPSHOTS_KEPT);
	return sp;
}

void mem_collector__unwind_tick(struct mem_collector *c)
{
	unwinder__tick(c->unwinder);
}

int mem_collector__unwind_fd(struct mem_collector *c)
{
	return unwinder__fd(c->unwinder);
}

void mem_collector__unwind_poll(struct mem_collector *c)
{
	unwinder__poll(c->unwinder);
}

struct unwinder *mem_collector__unwinder(struct mem_collector *c)
{
	return c->unwinder;
}

void mem_collector__refresh(struct mem_collector *c)
{
	for (uint32_t i = 0; i < c->nt; i++)
		if (!c->t[i].finalized)
			refresh_maps(c->t[i].unwound ? c->unwinder : NULL, &c->t[i]);
}

/* A finalized image of t's process whose links probe the same file at the same offsets. */
static struct traced *reusable_links(struct mem_collector *c, const struct traced *t)
{
	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *o = &c->t[i];

		if (o->pid != t->pid || !o->finalized || !o->links.n ||
		    o->links.n != t->lib.nobjs || !o->lib_ino || o->lib_ino != t->lib_ino ||
		    o->lib_dev != t->lib_dev || o->lib.nobjs != t->lib.nobjs ||
		    o->lib.nprobes != t->lib.nprobes ||
		    /* every object's path and probe points (add_object zeroes what it leaves) */
		    memcmp(o->lib.objs, t->lib.objs, t->lib.nobjs * sizeof(t->lib.objs[0])))
			continue;
		return o;
	}
	return NULL;
}

static void close_links(struct mem_collector *c, struct probe_links *l)
{
	for (uint32_t i = 0; i < l->n && i < ALLOC_MAX_OBJS; i++) {
		fd_closer__close(c->closer, l->entry_fd[i]);
		fd_closer__close(c->closer, l->exit_fd[i]);
		l->entry_fd[i] = l->exit_fd[i] = -1;
	}
	l->n = 0;
}

static void finalize_one(struct mem_collector *c, struct traced *t, struct profile *prof,
			 struct symbolizer *sym, uint64_t now_ns, bool exec);
static void flush_threads(struct mem_collector *c, pid_t pid);

int mem_collector__attach_all(struct mem_collector *c, const struct alloc_lib *lib)
{
	struct probe_links *nl = realloc(c->sys, (c->nsys + 1) * sizeof(*nl));
	int err;

	if (!nl)
		return -ENOMEM;
	c->sys = nl;
	err = probes__attach(bpf_program__fd(c->skel->progs.mem_enter),
			     bpf_program__fd(c->skel->progs.mem_exit), 0, lib, &c->sys[c->nsys]);
	if (err) {
		pr_err(c->lc, "cannot attach uprobes to %s: %s", lib->path, strerror(-err));
		return err;
	}
	c->nsys++;
	pr_info(c->lc, "every process: tracing %s allocator in %s (%u entry points)", lib->kind,
		lib->path, lib->nprobes);
	return 0;
}

/* -a: t's name and command line as the kernel had them at its entry's making or last exec
 * (mem.bpf.c's proc_name): for a process gone before /proc could tell */
static void name_from_entry(struct traced *t, const struct mem_proc *mp)
{
	uint32_t n = mp->cmdline_len < sizeof(mp->cmdline) ? mp->cmdline_len : 0;

	if (!mp->comm[0])
		return;
	snprintf(t->comm, sizeof(t->comm), "%.*s", (int)sizeof(mp->comm), mp->comm);
	while (n && !mp->cmdline[n - 1])
		n--;
	for (uint32_t i = 0; i < n; i++)
		t->cmdline[i] = mp->cmdline[i] ? mp->cmdline[i] : ' ';
	t->cmdline[n] = 0;
}

/* -a: t's entry counts an exec it was not named after (no ptrace stop says so): its new
 * program's name and command line, from /proc while the process is there (whole), else from
 * the entry; and its new mappings. Before, a process first seen before its exec (a shell's
 * child, which mallocs before it execs) kept the shell's name and command line. */
static void name_exec(struct traced *t, const struct mem_proc *mp)
{
	t->execs = mp->execs;
	target__comm(t->pid, t->comm, sizeof(t->comm));
	target__cmdline(t->pid, t->cmdline, sizeof(t->cmdline));
	if (!strcmp(t->comm, "?"))	/* gone */
		name_from_entry(t, mp);
	else
		refresh_maps(NULL, t);
}

static int adopt(struct mem_collector *c, pid_t pid)
{
	struct traced *t;
	struct mem_proc mp;
	bool have_proc;
	pid_t tgid;

	if (c->nt == c->capt) {
		uint32_t cap = c->capt ? c->capt * 2 : 8;
		struct traced *nt = realloc(c->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		c->t = nt;
		c->capt = cap;
	}
	t = &c->t[c->nt];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->links.n = 0;		/* the system-wide links serve it */
	t->all = true;
	/* its entry before /proc: an exec between the two names it again at the next tick */
	have_proc = proc_copy(c, pid, &mp) == 0;
	t->execs = have_proc ? mp.execs : 0;
	if (probes__find_allocator(pid, &t->lib)) {
		/* gone already, or its library no longer mapped: addresses stay unnamed */
		memset(&t->lib, 0, sizeof(t->lib));
		t->lib.kind = "unknown";
	}
	refresh_maps(NULL, t);	/* -a: frame pointers (a PID seen once may be reused) */
	find_fn_addrs(t);
	t->snap = snapshots__new((int64_t)(mono_now() - c->start_ns));
	target__comm(pid, t->comm, sizeof(t->comm));
	target__cmdline(pid, t->cmdline, sizeof(t->cmdline));
	if (!strcmp(t->comm, "?") && have_proc)	/* gone before this tick */
		name_from_entry(t, &mp);
	target__ids(pid, &tgid, &t->ppid, &t->ns_pid);
	c->nt++;
	pr_debug(c->lc, "PID %d (%s): seen calling the allocator", pid, t->comm);
	return 0;
}

int mem_collector__adopt_new(struct mem_collector *c)
{
	int n = 0;

	for (uint32_t i = 0; c->procs && i < c->nprocs; i++) {
		__u32 pid = __atomic_load_n(&c->procs[i].pid, __ATOMIC_ACQUIRE);
		struct traced *t;
		struct mem_proc mp;

		if (!pid || pid == MEM_PROC_CLEARING)
			continue;
		t = find(c, (pid_t)pid);
		if (!t) {
			if (adopt(c, (pid_t)pid) == 0)
				n++;
		} else if (t->all && __atomic_load_n(&c->procs[i].execs, __ATOMIC_ACQUIRE) !=
			   t->execs && proc_copy(c, (pid_t)pid, &mp) == 0) {
			name_exec(t, &mp);
			pr_debug(c->lc, "PID %d: ran a new program (%s)", (int)pid, t->comm);
		}
	}
	return n;
}

void mem_collector__finalize_gone(struct mem_collector *c, struct profile *prof,
				  struct symbolizer *sym, uint64_t now_ns)
{
	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *t = &c->t[i];

		if (!t->finalized && !t->links.n && kill(t->pid, 0) && errno == ESRCH)
			finalize_one(c, t, prof, sym, now_ns, false);
	}
}

void mem_collector__retire(struct mem_collector *c, pid_t pid)
{
	for (uint32_t i = 0; i < c->nt; i++)
		if (c->t[i].pid == pid)
			close_links(c, &c->t[i].links);
}

/* The dynamic loader's code in pid: the executable mappings of the file mapped at AT_BASE
 * (none for a static program). Its mmaps load libraries; they are not the program's. */
static void loader_range(pid_t pid, __u64 *lo, __u64 *hi)
{
	char path[64], *auxv, *maps, *line, base_path[PATH_MAX] = "";
	size_t len = 0;
	uint64_t base = 0;

	*lo = *hi = 0;
	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	auxv = util_read_file(path, &len);
	for (size_t i = 0; auxv && i + 16 <= len; i += 16) {
		uint64_t type, val;

		memcpy(&type, auxv + i, 8);
		memcpy(&val, auxv + i + 8, 8);
		if (type == 7 /* AT_BASE */)
			base = val;
	}
	free(auxv);
	if (!base)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = util_read_file(path, NULL);
	/* two rounds: the path of the mapping at base, then that file's executable ranges */
	for (int round = 0; maps && round < 2; round++) {
		for (line = maps; line && *line;) {
			unsigned long start, end;
			char perms[8];
			int pos = 0;
			char *nl = strchr(line, '\n'), *file;

			if (nl)
				*nl = 0;
			if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &start, &end, perms, &pos) == 3) {
				file = line + pos;
				while (*file == ' ')
					file++;
				if (round == 0 && start == base)
					snprintf(base_path, sizeof(base_path), "%s", file);
				else if (round == 1 && perms[2] == 'x' && *base_path &&
					 !strcmp(file, base_path)) {
					if (!*lo || start < *lo)
						*lo = start;
					if (end > *hi)
						*hi = end;
				}
			}
			if (nl)
				*nl = '\n';
			line = nl ? nl + 1 : NULL;
		}
	}
	free(maps);
}

int mem_collector__attach(struct mem_collector *c, pid_t pid, pid_t parent,
			  const struct alloc_lib *lib)
{
	struct mem_proc zero = { .parent = parent > 0 ? (__u32)parent : 0 };
	struct traced *t, *old;
	struct stat st;
	__u32 key = pid;
	int err;

	if (c->nt == c->capt) {
		uint32_t cap = c->capt ? c->capt * 2 : 8;
		struct traced *nt = realloc(c->t, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		c->t = nt;
		c->capt = cap;
	}
	/* --mmap's process entry, its programs' filter: before its tracepoints can see a call */
	if (c->opts.mmap) {
		struct mem_map_proc mzero = {};

		loader_range(pid, &mzero.loader_lo, &mzero.loader_hi);
		if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.mprocs), &key, &mzero, BPF_ANY)) {
			err = -errno;
			pr_err(c->lc, "cannot trace PID %d: the process table is full (--max-procs "
				      "%u); it runs untraced; raise --max-procs", pid, c->opts.max_procs);
			return err;
		}
	}
	if (c->opts.sample_mode == MEM_SAMPLE_ALLOC_ONLY)
		/* every probed object but the executable: its own calls are the program's */
		for (uint32_t i = 0; i < lib->nobjs && i < MEM_LIB_RANGES; i++)
			if (strcmp(lib->objs[i].kind, "static") &&
			    strcmp(lib->objs[i].kind, "executable"))
				lib_range(pid, lib->objs[i].path, &zero.lib_lo[i], &zero.lib_hi[i]);
	/* the entry itself is made once the probes are in (below); a full table is told now,
	 * before any link is made for nothing */
	if (!proc_entry(c, pid) &&
	    __atomic_load_n(&c->skel->bss->procs_used, __ATOMIC_SEQ_CST) >= c->opts.max_procs) {
		proc_full(c, pid, -E2BIG);
		return -E2BIG;
	}
	t = &c->t[c->nt];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->lib = *lib;
	if (stat(lib->open_path, &st) == 0) {
		t->lib_dev = st.st_dev;
		t->lib_ino = st.st_ino;
	}
	/* after an exec into a program with the same allocator file, the old links serve the
	 * new image: they filter by process, not by address space, and the kernel puts their
	 * breakpoints into every new mapping of that file */
	/* the unwinder's tables before any probe fires */
	t->unwound = c->unwinder != NULL;
	refresh_maps(c->unwinder, t);
	old = reusable_links(c, t);
	if (old) {
		t->links = old->links;
		old->links.n = 0;
		err = 0;
	} else {
		mem_collector__retire(c, pid);
		if (c->opts.sample_mode == MEM_SAMPLE_ALLOC_ONLY)
			err = probes__attach_entries(
				bpf_program__fd(c->skel->progs.mem_enter_alloc_only), pid, lib,
				PROBES_FREE_FNS, &t->links);
		else
			err = probes__attach(bpf_program__fd(c->skel->progs.mem_enter),
					     bpf_program__fd(c->skel->progs.mem_exit), pid, lib,
					     &t->links);
	}
	if (err) {
		unwinder__forget(c->unwinder, pid);
		forget_maps(t);
		pr_err(c->lc, "cannot attach uprobes to %s in PID %d: %s", lib->path, pid,
		       strerror(-err));
		return err;
	}
	/* The process entry is the programs' filter (frees and returns look it up): made now,
	 * with every probe in, so that counting starts at one moment. A running process (-p)
	 * runs on while its probes go in one function after another, and a free missed while
	 * malloc's were in left its block live until its address came back (its free counted
	 * then, its call not). */
	err = proc_make(c, pid, &zero);
	if (err) {
		close_links(c, &t->links);
		unwinder__forget(c->unwinder, pid);
		forget_maps(t);
		proc_full(c, pid, err);
		return err;
	}
	unwinder__hook(c->unwinder, pid);
	memset(t->fn_addr, 0, sizeof(t->fn_addr));
	find_fn_addrs(t);
	/* nothing is tracked before this moment: every site starts at 0 bytes here */
	if (c->opts.sample_mode != MEM_SAMPLE_ALLOC_ONLY)	/* no frees: no live bytes */
		t->snap = snapshots__new((int64_t)(mono_now() - c->start_ns));
	target__comm(pid, t->comm, sizeof(t->comm));
	target__cmdline(pid, t->cmdline, sizeof(t->cmdline));
	{
		pid_t tgid;

		target__ids(pid, &tgid, &t->ppid, &t->ns_pid);
	}
	c->nt++;
	pr_info(c->lc, "PID %d (%s): tracing %s allocator in %s (%u entry points in %u object%s%s%s)",
		pid, t->comm, lib->kind, lib->path, lib->nprobes, lib->nobjs,
		lib->nobjs == 1 ? "" : "s", lib->aliases[0] ? "; aliases: " : "", lib->aliases);
	for (uint32_t i = 0; i < lib->nobjs; i++) {
		const struct alloc_obj *ob = &lib->objs[i];

		if (i)
			pr_info(c->lc, "PID %d: also traced in %s (%s): %u entry points", pid,
				ob->path, ob->kind, ob->nprobes);
		for (uint32_t j = 0; j < ob->nprobes; j++)
			pr_info(c->lc, "PID %d: %s probed at %s", pid,
				mem_fn_names[(uint32_t)ob->cookies[j]], ob->reasons[j]);
	}
	return 0;
}

/* ---- draining ---------------------------------------------------------------------------- */

struct site {
	struct mem_site_key key;
	struct mem_site_val val;
	uint64_t live_count, live_bytes;	/* all blocks live at the end */
	struct prof_outstanding out;		/* those at least --min-age old */
};

struct drain {
	pid_t pid;
	struct site *sites;
	uint32_t n, cap;
	uint64_t now;
	uint64_t min_age;	/* younger blocks are live but not outstanding */
	bool released;		/* exec: the live blocks went with the old image */
	bool sampled;		/* sampled modes: counts are sums of weights */
	int err;
};

static int grow(void **p, uint32_t *cap, uint32_t need, size_t sz)
{
	void *np;
	uint32_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, (size_t)nc * sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = nc;
	return 0;
}

static int collect_site(const void *k, const void *v, void *ctx)
{
	const struct mem_site_key *key = k;
	struct drain *d = ctx;
	struct site *s;

	if ((pid_t)key->pid != d->pid)
		return 0;
	if (grow((void **)&d->sites, &d->cap, d->n + 1, sizeof(*d->sites)))
		return -ENOMEM;
	s = &d->sites[d->n++];
	s->key = *key;
	s->val = *(const struct mem_site_val *)v;
	site_counts(d->sampled, &s->val);
	s->live_count = s->live_bytes = 0;
	memset(&s->out, 0, sizeof(s->out));
	return 0;
}

static int site_cmp(const void *a, const void *b)
{
	const struct mem_site_key *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

static int collect_live(const struct mem_live_key *key, const struct mem_live_val *lv, void *ctx)
{
	struct drain *d = ctx;
	struct mem_site_key sk = { .pid = key->pid, .fn = lv->fn, .stack = lv->stack };
	struct site *s;
	uint64_t age;

	if ((pid_t)key->pid != d->pid || d->released)
		return 0;	/* another's, or released by exec: not outstanding */
	s = bsearch(&sk, d->sites, d->n, sizeof(*d->sites), site_cmp);
	if (!s)
		return 0;	/* its site was dropped (site table full) */
	age = d->now > lv->ts ? d->now - lv->ts : 0;
	if (d->sampled) {
		/* in weight units until sampled_live() rounds them */
		uint64_t bytes = (lv->size * lv->weight) >> MEM_WEIGHT_SHIFT;

		s->live_count += lv->weight;
		s->live_bytes += bytes;
		if (age < d->min_age)
			return 0;
		if (!s->out.count || age < s->out.min_age_ns)
			s->out.min_age_ns = age;
		if (age > s->out.max_age_ns)
			s->out.max_age_ns = age;
		s->out.count += lv->weight;
		s->out.bytes += bytes;
		s->out.sum_age_ns += (uint64_t)((double)age * lv->weight / MEM_WEIGHT_ONE);
		return 0;
	}
	s->live_count++;
	s->live_bytes += lv->size;
	if (age < d->min_age)
		return 0;	/* too young to call a leak (--min-age) */
	if (!s->out.count || age < s->out.min_age_ns)
		s->out.min_age_ns = age;
	if (age > s->out.max_age_ns)
		s->out.max_age_ns = age;
	s->out.count++;
	s->out.bytes += lv->size;
	s->out.sum_age_ns += age;
	return 0;
}

/* ---- reachability scan ------------------------------------------------------------------ */

struct scan_in {
	pid_t pid;
	struct leak_block *b;
	struct scan_site *meta;	/* per block: its site key; classes filled after the scan */
	uint32_t n, capb, capm;
};

static int collect_block(const struct mem_live_key *key, const struct mem_live_val *lv,
			 void *ctx)
{
	struct scan_in *in = ctx;

	if ((pid_t)key->pid != in->pid)
		return 0;
	if (grow((void **)&in->b, &in->capb, in->n + 1, sizeof(*in->b)) ||
	    grow((void **)&in->meta, &in->capm, in->n + 1, sizeof(*in->meta)))
		return -ENOMEM;
	in->b[in->n] = (struct leak_block){ .addr = key->ptr, .size = lv->size, .user = in->n };
	in->meta[in->n] = (struct scan_site){ .fn = lv->fn, .stack = lv->stack };
	in->n++;
	return 0;
}

static int scan_site_cmp(const void *a, const void *b)
{
	const struct scan_site *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return 0;
}

int mem_collector__scan(struct mem_collector *c, pid_t pid, bool at_exit, unsigned heuristics,
			int64_t t_ns, int *leader_status)
{
	struct traced *t = find(c, pid);
	struct scan_in in = { .pid = pid };
	struct heapscan_result res;
	struct target_frozen fz;
	struct prof_scan *ps;
	uint64_t t0, t1;
	uint32_t ns = 0;
	int err;

	*leader_status = -1;
	if (!t)
		return -ENOENT;
	t0 = mono_ns();
	err = target__freeze(pid, at_exit, &fz);
	if (err) {
		pr_warn(c->lc, "PID %d: cannot stop it for a leak scan: %s", pid, strerror(-err));
		return err;
	}
	/* the live table is read while the process is stopped: blocks and memory agree */
	err = live_for_each(c, pid, collect_block, &in, false, NULL);
	if (!err) {
		struct heapscan_opts ho = {
			.pid = pid, .alloc_path = t->lib.path,
			/* a static executable carries glibc's malloc */
			.glibc = t->lib.kind && (!strcmp(t->lib.kind, "glibc") ||
						 !strcmp(t->lib.kind, "static")),
			.heuristics = heuristics, .frozen = &fz,
			.dead = t->dead, .ndead = t->ndead,
		};

		err = heapscan__run(&ho, in.b, in.n, &res);
	}
	t1 = mono_ns();
	if (fz.leader_event)
		*leader_status = fz.leader_status;
	target__thaw(&fz);
	if (err) {
		pr_warn(c->lc, "PID %d: the leak scan failed: %s", pid, strerror(-err));
		goto out;
	}

	/* classes per site: blocks grouped by (function, stack) */
	for (uint32_t i = 0; i < in.n; i++) {
		struct scan_site *m = &in.meta[in.b[i].user];

		m->count[in.b[i].cls] = 1;
		m->bytes[in.b[i].cls] = in.b[i].size;
	}
	qsort(in.meta, in.n, sizeof(*in.meta), scan_site_cmp);
	for (uint32_t i = 0; i < in.n; i++) {
		if (ns && !scan_site_cmp(&in.meta[ns - 1], &in.meta[i])) {
			for (int cl = 0; cl < PROF_LEAK__COUNT; cl++) {
				in.meta[ns - 1].count[cl] += in.meta[i].count[cl];
				in.meta[ns - 1].bytes[cl] += in.meta[i].bytes[cl];
			}
			continue;
		}
		in.meta[ns++] = in.meta[i];
	}
	free(t->scan);
	t->scan = in.meta;
	t->nscan = ns;
	in.meta = NULL;

	ps = &t->scan_info;
	memset(ps, 0, sizeof(*ps));
	ps->done = true;
	ps->at_exit = at_exit;
	ps->t_ns = t_ns;
	ps->stopped_ns = t1 - t0;
	ps->scanned_bytes = res.st.scanned_bytes;
	ps->unreadable_bytes = res.st.unreadable_bytes;
	ps->read_calls = res.st.read_calls;
	ps->threads = res.threads;
	ps->threads_unknown = res.threads_unknown;
	for (int cl = 0; cl < PROF_LEAK__COUNT; cl++) {
		ps->count[cl] = res.st.count[cl];
		ps->bytes[cl] = res.st.bytes[cl];
	}
	for (int h = 0; h < PROF_LEAK_HEURISTICS && h < LEAK_HEUR__COUNT; h++) {
		ps->heur_count[h] = res.st.heur_count[h];
		ps->heur_bytes[h] = res.st.heur_bytes[h];
	}
	pr_info(c->lc, "PID %d: leak scan of %u blocks, %u threads (%u gone, from their exit "
		"stops): %llu bytes read in %llu calls, %.1f ms stopped", pid, in.n, res.threads,
		t->ndead, (unsigned long long)res.st.scanned_bytes,
		(unsigned long long)res.st.read_calls, (t1 - t0) / 1e6);
out:
	free(in.b);
	free(in.meta);
	return err;
}

const struct prof_scan *mem_collector__last_scan(struct mem_collector *c, pid_t pid)
{
	struct traced *t = find(c, pid);

	return t && t->scan_info.done ? &t->scan_info : NULL;
}

void mem_collector__thread_exit(struct mem_collector *c, pid_t pid, pid_t tid)
{
	struct traced *t = find(c, pid);
	struct target_thread th;
	bool with_process;

	if (!t || target__exit_regs(tid, &th, &with_process) || !with_process)
		return;
	/* a thread that ends itself may leave its stack to a new thread: its pointer would be
	 * stale by the scan; one killed with its process is the last of that stack */
	if (grow((void **)&t->dead, &t->capdead, t->ndead + 1, sizeof(*t->dead)))
		return;		/* its stack is then scanned whole, as before */
	t->dead[t->ndead++] = th;
}

/* A site's stack, hash h (0: none was captured, its drop counted then), into *st; false if
 * there is none. *lost: h is not in the map, which is never expected (a process's stacks are
 * forgotten after its end, and they are its own: forget_stacks): the caller ends the site's
 * stack past the allocator in "[truncated]", counted as DROP_STACK_NOT_FOUND, rather than
 * show the allocator as called from nowhere. */
#define DROP_STACK_NOT_FOUND "stack_not_found"

static bool site_stack(int fd, __u64 h, struct mem_stack *st, bool *lost)
{
	*lost = h && bpf_map_lookup_elem(fd, &h, st) != 0;
	return h && !*lost;
}

/* Locations of one stack: the allocator function as the leaf, then the user frames. Frames
 * outside any executable mapping are unwinding garbage (static binaries end in them). */
static uint32_t build_stack(struct profile *prof, struct sym_proc *sp, const struct traced *t,
			    uint32_t fn, const struct mem_stack *st, uint32_t *locs)
{
	uint64_t fa = t->fn_addr[fn];
	pid_t pid = t->pid;
	struct prof_line line;
	struct sym_result r;
	uint32_t n = 0;

	/* the leaf is the traced function at its entry, named as the program called it (the
	 * symbol table may call it __libc_malloc) */
	line.function = profile__function(prof, mem_fn_names[fn], mem_fn_names[fn], NULL);
	line.line = 0;
	if (sp && fa && sym_proc__resolve(sp, fa, false, &r) == 0 && r.mapped)
		locs[n++] = profile__location(prof,
				profile__mapping(prof, pid, r.map_start, r.map_end, r.map_offset,
						 r.module, r.build_id),
				fa, r.module_offset, &line, 1);
	else	/* no mapping known: a distinct placeholder address per function */
		locs[n++] = profile__location(prof, PROF_NONE, fn + 1, fn + 1, &line, 1);
	if (!st)
		return n;
	return n + stacks__user_locs(prof, sp, pid, st->ips,
				     st->nr < MEM_MAX_STACK ? st->nr : MEM_MAX_STACK, false, locs + n);
}

/* Whether fn has aliases: other names that share its probe (probes.h, alias_mask). */
static bool fn_has_aliases(const struct traced *t, uint32_t fn)
{
	return fn < MEM_FN__COUNT && t->lib.alias_mask[fn];
}

/* The function a site's caller called. Aliases share one probe (glibc: aligned_alloc is
 * memalign), but the caller's call instruction names the symbol it called through the PLT or
 * GOT: that tells them apart. -1: a probed function with aliases, and the caller could not be
 * read (a direct call in a static binary, no stack). */
static int display_fn(const struct traced *t, struct sym_proc *sp, uint32_t fn,
			    const struct mem_stack *st)
{
	char name[128];
	int a;

	if (!fn_has_aliases(t, fn))
		return fn;
	if (!sp || !st || !st->nr || sym_proc__called_symbol(sp, st->ips[0], name, sizeof(name)))
		return -1;
	a = probes__fn_of_symbol(name);
	if (a >= 0 && (t->lib.alias_mask[fn] & (1u << a)))
		return a;
	return fn;
}

/* Calls of aliased entry-only probes (tcmalloc's free is also operator delete) moved to the
 * name each caller called, from the per-caller counts the kernel kept; the entries of pid are
 * removed. Returns the calls whose caller could not be read. */
static uint64_t split_callers(struct mem_collector *c, struct traced *t, struct sym_proc *sp,
			      struct mem_proc *mp, bool have_proc)
{
	int fd = bpf_map__fd(c->skel->maps.callers);
	struct mem_caller_key k, next, *prev = NULL;
	struct mem_caller_key *mine = NULL;
	uint32_t n = 0, cap = 0;
	uint64_t unresolved = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (k.pid != (uint32_t)t->pid)
			continue;
		if (n == cap) {
			struct mem_caller_key *nm;

			cap = cap ? cap * 2 : 64;
			nm = realloc(mine, cap * sizeof(*nm));
			if (!nm)
				break;
			mine = nm;
		}
		mine[n++] = k;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t calls = 0;
		char name[128];
		int a = -1;

		if (bpf_map_lookup_elem(fd, &mine[i], &calls) == 0 && have_proc &&
		    mine[i].fn < MEM_FN__COUNT) {
			calls = wcount(sampled(&c->opts), calls);	/* as proc_counts did */
			if (sp && mine[i].ret &&
			    sym_proc__called_symbol(sp, mine[i].ret, name, sizeof(name)) == 0)
				a = probes__fn_of_symbol(name);
			if (a < 0 && !(sp && mine[i].ret))
				unresolved += calls;
			else if (a >= 0 && (uint32_t)a != mine[i].fn &&
				 (t->lib.alias_mask[mine[i].fn] & (1u << a)) &&
				 mp->calls[mine[i].fn] >= calls) {
				mp->calls[mine[i].fn] -= calls;
				mp->calls[a] += calls;
			} else if (a < 0) {
				unresolved += calls;
			}
		}
		bpf_map_delete_elem(fd, &mine[i]);
	}
	free(mine);
	return unresolved;
}

/* The allocator and the objects traced, each with the functions it serves (aliases too). */
static void set_allocator(struct profile *prof, struct prof_process *p, const struct alloc_lib *lib)
{
	struct prof_alloc_obj objs[ALLOC_MAX_OBJS];
	char fns[ALLOC_MAX_OBJS][512];
	uint32_t probed[ALLOC_MAX_OBJS] = {}, in_one = 0, seen = 0;

	for (uint32_t i = 0; i < lib->nobjs && i < ALLOC_MAX_OBJS; i++) {
		for (uint32_t j = 0; j < lib->objs[i].nprobes; j++) {
			uint32_t fn = (uint32_t)lib->objs[i].cookies[j];

			if (fn < MEM_FN__COUNT)
				probed[i] |= 1u << fn;
		}
		in_one = (in_one & ~probed[i]) | (probed[i] & ~seen);
		seen |= probed[i];
	}
	for (uint32_t i = 0; i < lib->nobjs && i < ALLOC_MAX_OBJS; i++) {
		uint32_t served = probed[i];

		/* the aliases of a function probed in this object only are this object's */
		for (int f = 0; f < MEM_FN__COUNT; f++)
			if ((probed[i] & in_one) & (1u << f))
				served |= lib->alias_mask[f];
		fns[i][0] = 0;
		for (int f = 0; f < MEM_FN__COUNT; f++)
			if (served & (1u << f))
				snprintf(fns[i] + strlen(fns[i]), sizeof(fns[i]) - strlen(fns[i]),
					 "%s%s", fns[i][0] ? "," : "", mem_fn_names[f]);
		objs[i] = (struct prof_alloc_obj){ .path = lib->objs[i].path,
						   .kind = lib->objs[i].kind, .functions = fns[i] };
	}
	if (lib->kind)
		prof_process__set_allocator(prof, p, lib->kind, objs, lib->nobjs);
}

static void add_process(struct profile *prof, struct traced *t, const struct mem_proc *mp,
			uint64_t unresolved)
{
	struct prof_process *p = profile__add_process(prof, t->pid, t->comm, t->cmdline);
	char note[3 * PATH_MAX + 1024];

	if (!p)
		return;
	for (int i = 0; i < MEM_FN__COUNT; i++)
		prof_process__add_call(prof, p, mem_fn_names[i], mp ? mp->calls[i] : 0);
	/* a pid seen again after an exec adds its new image's counts; maxima stay maxima */
#define STAT(name) prof_process__add_stat(prof, p, #name, mp ? mp->name : 0)
#define MAX_STAT(name) do {							\
		uint64_t old_ = 0;						\
										\
		prof_process__stat(p, #name, &old_);				\
		prof_process__set_stat(prof, p, #name,				\
				       mp && mp->name > old_ ? mp->name : old_);	\
	} while (0)
	STAT(alloc_count);
	STAT(alloc_bytes);
	STAT(free_count);
	STAT(free_bytes);
	STAT(live_count);
	STAT(live_bytes);
	MAX_STAT(peak_live_bytes);
	MAX_STAT(max_request);
	STAT(unknown_frees);
	STAT(inherited_frees);
	STAT(inherited_bytes);
	STAT(failed);
	STAT(in_flight);
#undef STAT
#undef MAX_STAT
	if (t->scan_info.done)
		p->scan = t->scan_info;
	if (t->ppid > 0)
		p->ppid = t->ppid;
	p->ns_pid = t->ns_pid > 0 && t->ns_pid != t->pid ? (uint32_t)t->ns_pid : 0;
	set_allocator(prof, p, &t->lib);
	{
		char objs[PATH_MAX + 256] = "";

		for (uint32_t i = 1; i < t->lib.nobjs; i++)
			snprintf(objs + strlen(objs), sizeof(objs) - strlen(objs), "%s%s (%s)",
				 i == 1 ? ", also " : " and ", t->lib.objs[i].path,
				 t->lib.objs[i].kind);
		if (!t->lib.aliases[0])
			snprintf(note, sizeof(note), "%s allocator in %s%s", t->lib.kind,
				 t->lib.path, objs);
		else if (!unresolved)
			snprintf(note, sizeof(note), "%s allocator in %s%s (one entry point for %s: "
				 "calls told apart by the name each caller called)", t->lib.kind,
				 t->lib.path, objs, t->lib.aliases);
		else
			snprintf(note, sizeof(note), "%s allocator in %s%s (one entry point for %s: "
				 "%llu calls whose caller could not be read are counted under the "
				 "second name)", t->lib.kind, t->lib.path, objs, t->lib.aliases,
				 (unsigned long long)unresolved);
	}
	prof_process__set_note(prof, p, note);
}

/* ---- growth and peaks ------------------------------------------------------------------- */

/* The process's largest request, with the sample of its site. An exec'd process keeps the
 * larger of its images'. */
static void process_largest(struct mem_collector *c, struct traced *t, struct profile *prof,
			    const struct drain *d, const uint32_t *sample_of,
			    const struct mem_proc *mp)
{
	struct prof_process *proc = profile__find_process(prof, t->pid);
	struct prof_largest *lg;

	if (!proc || !mp->largest_size)
		return;
	lg = &proc->largest;
	if (lg->known && lg->bytes >= mp->largest_size)
		return;
	lg->known = true;
	lg->bytes = mp->largest_size;
	lg->t_ns = mp->largest_ts && mp->largest_ts >= c->start_ns ?
		   (int64_t)(mp->largest_ts - c->start_ns) : -1;
	lg->sample = PROF_NONE;
	for (uint32_t i = 0; i < d->n; i++)
		if (d->sites[i].key.fn == mp->largest_fn &&
		    d->sites[i].key.stack == mp->largest_stack) {
			lg->sample = sample_of[i];
			break;
		}
}

/* A site's live bytes; a batched read is no atomic cut, so frees may be ahead of allocations. */
static int64_t site_live(const struct mem_site_val *v)
{
	return v->alloc_bytes > v->free_bytes ? (int64_t)(v->alloc_bytes - v->free_bytes) : 0;
}

/* The read that finalizes a process is its last snapshot, taken at its end. */
static void final_snapshot(struct mem_collector *c, struct traced *t, const struct drain *d,
			   uint64_t now_ns)
{
	if (!t->snap || snapshots__begin(t->snap, (int64_t)(now_ns - c->start_ns)) < 0)
		return;
	/* every site, also those at 0: each gets a series, and so a trend */
	for (uint32_t i = 0; i < d->n; i++)
		snapshots__put(t->snap, d->sites[i].key.fn, d->sites[i].key.stack,
			       site_live(&d->sites[i].val));
	snapshots__end(t->snap);
}

static void site_growth(const struct traced *t, const struct site *s, struct prof_sample *ps)
{
	const int64_t *v;

	if (!t->snap)
		return;
	v = snapshots__site(t->snap, s->key.fn, s->key.stack, NULL);
	if (v)
		prof_growth__fit(snapshots__times(t->snap), v, snapshots__count(t->snap),
				 snapshots__t0(t->snap), s->val.alloc_bytes / s->val.allocs,
				 &ps->growth);
}

static int peak_site_cmp(const void *a, const void *b)
{
	const struct prof_peak_site *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* The process's snapshot count and fit window, and its peak: exact bytes and time from the
 * kernel, the sites from the snapshot with the highest total. An exec'd process keeps the peak
 * of the image that had the higher one. */
static void process_growth(struct mem_collector *c, struct traced *t, struct profile *prof,
			   const struct drain *d, const uint32_t *sample_of,
			   const struct mem_proc *mp)
{
	struct prof_process *proc = profile__find_process(prof, t->pid);
	struct prof_peak peak = { .known = true, .t_ns = -1, .snapshot_t_ns = -1 };
	const int64_t *times;
	int64_t snap_t, snap_total, v;
	uint32_t n;

	if (!proc || !t->snap)
		return;
	n = snapshots__count(t->snap);
	times = snapshots__times(t->snap);
	prof_process__set_growth_window(proc, times, n, snapshots__t0(t->snap));

	if (!mp || (proc->peak.known && proc->peak.bytes >= mp->peak_live_bytes))
		return;
	peak.bytes = mp->peak_live_bytes;
	if (mp->peak_ts && mp->peak_ts >= c->start_ns)
		peak.t_ns = (int64_t)(mp->peak_ts - c->start_ns);
	if (snapshots__peak(t->snap, &snap_t, &snap_total)) {
		peak.snapshot_t_ns = snap_t;
		peak.snapshot_bytes = snap_total;
		peak.sites = calloc(d->n ? d->n : 1, sizeof(*peak.sites));
		for (uint32_t i = 0; peak.sites && i < d->n; i++) {
			snapshots__site(t->snap, d->sites[i].key.fn, d->sites[i].key.stack, &v);
			if (v > 0 && sample_of[i] != PROF_NONE)
				peak.sites[peak.nsites++] = (struct prof_peak_site){
					.sample = sample_of[i], .bytes = (uint64_t)v,
				};
		}
		if (peak.sites)
			qsort(peak.sites, peak.nsites, sizeof(*peak.sites), peak_site_cmp);
		else
			peak.nsites = 0;
	}
	if (prof_process__set_peak(prof, proc, &peak))
		pr_warn(c->lc, "PID %d: out of memory recording its peak", t->pid);
	free(peak.sites);
}

/* ---- mappings (--mmap) ----------------------------------------------------------------- */

struct map_site {
	struct mem_site_key key;
	struct mem_map_site_val val;
	uint64_t live_count, live_bytes;
	struct prof_outstanding out;
};

struct map_drain {
	pid_t pid;
	struct map_site *sites;
	uint32_t n, cap;
	struct mem_region_key *dead;
	uint32_t ndead, capdead;
	uint64_t now;
	bool released;
};

static int collect_map_site(const void *k, const void *v, void *ctx)
{
	const struct mem_site_key *key = k;
	struct map_drain *d = ctx;
	struct map_site *s;

	if ((pid_t)key->pid != d->pid)
		return 0;
	if (grow((void **)&d->sites, &d->cap, d->n + 1, sizeof(*d->sites)))
		return -ENOMEM;
	s = &d->sites[d->n++];
	memset(s, 0, sizeof(*s));
	s->key = *key;
	s->val = *(const struct mem_map_site_val *)v;
	return 0;
}

static int collect_region(const void *k, const void *v, void *ctx)
{
	const struct mem_region_key *key = k;
	const struct mem_region_val *rv = v;
	struct map_drain *d = ctx;
	struct mem_site_key sk = { .pid = key->pid, .fn = rv->fn, .stack = rv->stack };
	struct map_site *s;
	uint64_t age;

	if ((pid_t)key->pid != d->pid)
		return 0;
	if (grow((void **)&d->dead, &d->capdead, d->ndead + 1, sizeof(*d->dead)))
		return -ENOMEM;
	d->dead[d->ndead++] = *key;
	if (d->released)
		return 0;
	/* struct map_site begins with its key: site_cmp compares keys */
	s = bsearch(&sk, d->sites, d->n, sizeof(*d->sites), site_cmp);
	if (!s)
		return 0;
	age = d->now > rv->ts ? d->now - rv->ts : 0;
	s->live_count++;
	s->live_bytes += rv->size;
	if (!s->out.count || age < s->out.min_age_ns)
		s->out.min_age_ns = age;
	if (age > s->out.max_age_ns)
		s->out.max_age_ns = age;
	s->out.count++;
	s->out.bytes += rv->size;
	s->out.sum_age_ns += age;
	return 0;
}

/* Whether ip is a return address: in code a snapshot maps, right after a call */
static bool map_return_addr(struct sym_proc *sp, uint64_t ip)
{
	struct sym_result r;

	return sym_proc__resolve(sp, ip, true, &r) == 0 && r.mapped && r.executable &&
	       sym_proc__follows_call(sp, ip) == 1;
}

/* Locations of a mapping site: the syscall's name as the leaf, then the user frames without
 * the wrapper the syscall was made in (frame 0: the leaf says what it is). Frame 1 is the
 * wrapper's return address (map_stack in mem.bpf.c); by frame pointers it is the word at the
 * stack pointer, kept only if it is a return address. The rest as every user stack
 * (stacks__user_locs: its ends said and counted). */
static uint32_t build_map_stack(struct profile *prof, struct sym_proc *sp, pid_t pid, uint32_t fn,
				const struct mem_stack *st, uint32_t *locs)
{
	struct prof_line line = { .line = 0 };
	uint32_t n = 0, nr, from = 1;

	line.function = profile__function(prof, map_fn_names[fn], map_fn_names[fn], NULL);
	locs[n++] = profile__location(prof, PROF_NONE, MEM_FN__COUNT + 1 + fn,
				      MEM_FN__COUNT + 1 + fn, &line, 1);
	if (!st || st->nr < 2)
		return n;
	nr = st->nr < MEM_MAX_STACK ? (uint32_t)st->nr : MEM_MAX_STACK;
	if (sp && !stacks__is_end(st->ips[1]) && !map_return_addr(sp, st->ips[1])) {
		/* the wrapper has a frame: the word at sp is no address, and the frame-pointer
		 * chain's first return address must be one (a first frame is not held to that) */
		from = 2;
		if (from < nr && !stacks__is_end(st->ips[2]) && !map_return_addr(sp, st->ips[2])) {
			struct sym_result r;
			bool code = sym_proc__resolve(sp, st->ips[2], true, &r) == 0 && r.mapped &&
				    r.executable;

			return stacks__end_truncated(prof, locs, n, code ? STACKS_DROP_FP_BROKEN :
							 STACKS_DROP_OUTSIDE);
		}
	}
	if (from >= nr)
		return n;
	return n + stacks__user_locs(prof, sp, pid, st->ips + from, nr - from, false, locs + n);
}

/* Stack hashes to forget in the kernel. */
struct stack_list {
	__u64 *h;
	uint32_t n, cap;
};

static void stack_list_add(struct stack_list *l, __u64 h)
{
	if (h && !grow((void **)&l->h, &l->cap, l->n + 1, sizeof(*l->h)))
		l->h[l->n++] = h;
}

static int u64_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * A finalized image's stacks (its sites' and mapping sites'): at an exec, kept until the
 * process ends (its threads may name them again: their last stack, the unwinder's stack cache
 * of an image alike); at its end forgotten in the kernel with those kept, so that the stacks
 * map holds the stacks of the processes that run, not of every process of a tree that ran
 * (its --max-stacks filled by a few hundred short processes before). The hashes are the
 * process's own (mem.bpf.c, intern_stack: seeded with its pid).
 */
static void forget_stacks(struct mem_collector *c, pid_t pid, struct stack_list *gone, bool exec)
{
	uint32_t n = 0, k = 0;

	if (exec) {
		for (uint32_t i = 0; i < gone->n; i++) {
			if (grow((void **)&c->kept_stacks, &c->capkept, c->nkept + 1,
				 sizeof(*c->kept_stacks)))
				break;	/* out of memory: left in the map, as before */
			c->kept_stacks[c->nkept++] = (struct pid_stack){ pid, gone->h[i] };
		}
		return;
	}
	for (uint32_t i = 0; i < c->nkept; i++) {
		if (c->kept_stacks[i].pid == pid)
			stack_list_add(gone, c->kept_stacks[i].stack);
		else
			c->kept_stacks[k++] = c->kept_stacks[i];
	}
	c->nkept = k;
	if (c->ending || !gone->n)
		return;
	qsort(gone->h, gone->n, sizeof(*gone->h), u64_cmp);
	for (uint32_t i = 0; i < gone->n; i++)	/* one site per function may share a stack */
		if (!n || gone->h[n - 1] != gone->h[i])
			gone->h[n++] = gone->h[i];
	bpfutil__map_delete_keys(bpf_map__fd(c->skel->maps.stacks), gone->h, sizeof(*gone->h), n);
}

/* The process's mappings: its summary as mmap_* stats, one sample per (function, stack) with
 * the mmap_* sample types, its regions still mapped as outstanding; then forget it all (its
 * mapping sites' stacks are added to gone, for forget_stacks). */
static void finalize_maps(struct mem_collector *c, struct traced *t, struct profile *prof,
			  struct sym_proc *sp, uint64_t now_ns, bool exec, struct stack_list *gone)
{
	bool whole = !c->opts.windows;	/* windows: only forgotten (no window has them) */
	int mprocs_fd = bpf_map__fd(c->skel->maps.mprocs);
	int msites_fd = bpf_map__fd(c->skel->maps.msites);
	int regions_fd = bpf_map__fd(c->skel->maps.regions);
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	int ty[4] = {
		profile__type_index(prof, "mmap_objects"),
		profile__type_index(prof, "mmap_space"),
		profile__type_index(prof, "mmap_inuse_objects"),
		profile__type_index(prof, "mmap_inuse_space"),
	};
	struct map_drain d = { .pid = t->pid, .now = now_ns, .released = exec };
	struct prof_process *proc;
	struct mem_map_proc mm = {};
	__u32 key = t->pid;
	uint32_t *locs = NULL;
	int64_t *vals = NULL;
	char name[48];
	int err;

	if (bpf_map_lookup_elem(mprocs_fd, &key, &mm))
		memset(&mm, 0, sizeof(mm));
	bpf_map_delete_elem(mprocs_fd, &key);
	if (whole && exec && mm.live_count) {
		profile__add_note(prof, "PID %d (%s) ran a new program: its %llu mapped regions "
				  "(%llu bytes) were released with the old image", t->pid, t->comm,
				  (unsigned long long)mm.live_count, (unsigned long long)mm.live_bytes);
		mm.live_count = mm.live_bytes = 0;
	}
	err = bpfutil__map_for_each(msites_fd, sizeof(struct mem_site_key), sizeof(struct mem_map_site_val),
			   collect_map_site, &d);
	if (!err) {
		qsort(d.sites, d.n, sizeof(*d.sites), site_cmp);
		err = bpfutil__map_for_each(regions_fd, sizeof(struct mem_region_key),
				   sizeof(struct mem_region_val), collect_region, &d);
	}
	if (err)
		pr_warn(c->lc, "PID %d: reading the mapping tables failed: %s; the report may be "
			       "incomplete", t->pid, strerror(-err));

	proc = whole ? profile__find_process(prof, t->pid) : NULL;
	if (proc) {
		for (int f = 0; f < MEM_MAP__COUNT; f++) {
			snprintf(name, sizeof(name), "mmap_calls_%s", map_fn_names[f]);
			prof_process__add_stat(prof, proc, name, mm.calls[f]);
		}
#define MSTAT(field, n) prof_process__add_stat(prof, proc, "mmap_" n, mm.field)
		MSTAT(map_count, "mapped_count");
		MSTAT(map_bytes, "mapped_bytes");
		MSTAT(unmap_count, "unmapped_count");
		MSTAT(unmap_bytes, "unmapped_bytes");
		MSTAT(live_count, "live_count");
		MSTAT(live_bytes, "live_bytes");
		MSTAT(failed, "failed");
		MSTAT(untracked, "untracked");
#undef MSTAT
		{
			uint64_t old = 0;

			prof_process__stat(proc, "mmap_peak_live_bytes", &old);
			prof_process__set_stat(prof, proc, "mmap_peak_live_bytes",
					       mm.peak_live_bytes > old ? mm.peak_live_bytes : old);
		}
	}

	locs = malloc(sizeof(*locs) * (MEM_MAX_STACK + 1));
	vals = calloc(prof->ntypes ? prof->ntypes : 1, sizeof(*vals));
	for (uint32_t i = 0; whole && locs && vals && ty[0] >= 0 && ty[3] >= 0 && i < d.n; i++) {
		struct map_site *s = &d.sites[i];
		struct prof_sample *ps;
		struct mem_stack st;
		bool have_stack, lost;
		uint32_t n;

		if (!s->val.maps || s->key.fn >= MEM_MAP__COUNT)
			continue;	/* only failures here: they are in the process's counts */
		memset(vals, 0, prof->ntypes * sizeof(*vals));
		vals[ty[0]] = s->val.maps;
		vals[ty[1]] = s->val.map_bytes;
		vals[ty[2]] = s->live_count;
		vals[ty[3]] = s->live_bytes;
		have_stack = site_stack(stacks_fd, s->key.stack, &st, &lost);
		n = build_map_stack(prof, sp, t->pid, s->key.fn, have_stack ? &st : NULL, locs);
		if (lost)
			n = stacks__end_truncated(prof, locs, n, DROP_STACK_NOT_FOUND);
		ps = profile__add_sample(prof, locs, n, vals, t->pid);
		if (!ps)
			break;
		prof_sample__set_hist(prof, ps, (const uint64_t *)s->val.hist, MEM_HIST_BUCKETS);
		ps->out = s->out;
	}
	free(locs);
	free(vals);

	for (uint32_t i = 0; i < d.n; i++) {
		bpf_map_delete_elem(msites_fd, &d.sites[i].key);
		stack_list_add(gone, d.sites[i].key.stack);
	}
	for (uint32_t i = 0; i < d.ndead; i++)
		bpf_map_delete_elem(regions_fd, &d.dead[i]);
	free(d.sites);
}

static int win_site_cmp(const void *a, const void *b)
{
	return site_cmp(&((const struct win_site *)a)->key, &((const struct win_site *)b)->key);
}

/* A window's samples of t's sites (sites[0..n), sorted by site_cmp, counts as site_counts
 * makes them): per site, the allocations since the last window (alloc_objects, alloc_space)
 * and what it holds now (inuse_objects, inuse_space: allocated minus freed, as the sites count
 * them), with its stack symbolized by sp (NULL: addresses). t's counts at this window are kept
 * for the next. 0 or -ENOMEM. */
static int window_sites(struct mem_collector *c, struct traced *t, const struct site *sites,
			uint32_t n, struct sym_proc *sp, struct profile *into)
{
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	struct win_site *now = calloc(n ? n : 1, sizeof(*now));
	uint32_t *locs = malloc(sizeof(*locs) * (MEM_MAX_STACK + 1));
	int64_t *vals = calloc(into->ntypes ? into->ntypes : 1, sizeof(*vals));
	int err = 0;

	if (!now || !locs || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct site *s = &sites[i];
		struct win_site *last = t->nwsites ? bsearch(&s->key, t->wsites, t->nwsites,
							    sizeof(*t->wsites), win_site_cmp)
						   : NULL;
		uint64_t allocs = s->val.allocs, bytes = s->val.alloc_bytes;
		struct mem_stack st;
		bool have_stack, lost;
		uint32_t nl;
		int fn;

		now[i] = (struct win_site){ .key = s->key, .allocs = allocs, .bytes = bytes };
		/* an exec starts the counts again */
		if (last && last->allocs <= allocs && last->bytes <= bytes) {
			allocs -= last->allocs;
			bytes -= last->bytes;
		}
		memset(vals, 0, into->ntypes * sizeof(*vals));
		vals[0] = allocs;
		vals[1] = bytes;
		if (into->ntypes > 3) {	/* not in --alloc-only */
			vals[2] = s->val.allocs > s->val.frees ? s->val.allocs - s->val.frees : 0;
			vals[3] = site_live(&s->val);
		}
		if (!vals[0] && !vals[1] && (into->ntypes <= 3 || (!vals[2] && !vals[3])))
			continue;
		have_stack = site_stack(stacks_fd, s->key.stack, &st, &lost);
		fn = display_fn(t, sp, s->key.fn, have_stack ? &st : NULL);
		nl = build_stack(into, sp, t, fn < 0 ? s->key.fn : (uint32_t)fn,
				 have_stack ? &st : NULL, locs);
		if (lost)
			nl = stacks__end_truncated(into, locs, nl, DROP_STACK_NOT_FOUND);
		if (!profile__add_sample(into, locs, nl, vals, t->pid)) {
			err = -ENOMEM;
			goto out;
		}
	}
	free(t->wsites);
	t->wsites = now;	/* sorted as sites are */
	t->nwsites = n;
	now = NULL;
out:
	free(now);
	free(locs);
	free(vals);
	return err;
}

/* The mem sample types of a window's profile: the run's (--alloc-only: allocations only). */
static int window_types(struct mem_collector *c, struct profile *into)
{
	if (into->ntypes)
		return 0;
	return c->opts.sample_mode == MEM_SAMPLE_ALLOC_ONLY ? mem_profile__init_alloc_only(into)
							    : mem_profile__init(into, false);
}

/* Delete the n sites' keys from the sites map (fd). */
static void forget_sites(int fd, const struct site *sites, uint32_t n)
{
	struct mem_site_key *keys = malloc(sizeof(*keys) * (n ? n : 1));

	for (uint32_t i = 0; keys && i < n; i++)
		keys[i] = sites[i].key;
	if (keys)
		bpfutil__map_delete_keys(fd, keys, sizeof(*keys), n);
	for (uint32_t i = 0; !keys && i < n; i++)	/* out of memory: one at a time */
		bpf_map_delete_elem(fd, &sites[i].key);
	free(keys);
}

static void finalize_one(struct mem_collector *c, struct traced *t, struct profile *prof,
			 struct symbolizer *sym, uint64_t now_ns, bool exec)
{
	int sites_fd = bpf_map__fd(c->skel->maps.sites);
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	struct drain d = { .pid = t->pid, .now = now_ns, .min_age = c->opts.min_age_ns };
	struct stack_list gone = { 0 };
	struct mem_proc mp;
	struct sym_proc *sp;
	uint64_t unresolved = 0;
	uint32_t *locs = NULL, *disp, *sample_of = NULL, pages = 0;
	int64_t *vals = NULL;
	/* the run's profile gets it unless the run is cut into windows: then only the next
	 * window does (fin_win); nothing reads the run's profile, which grew without bound */
	bool whole = !c->opts.windows;
	bool have_proc, none_live;
	int err;

	d.sampled = sampled(&c->opts);
	/* what its threads hold; it is stopped (at its exit or exec, or its probes are off:
	 * mem_collector__quiesce) */
	flush_threads(c, t->pid);
	have_proc = proc_copy(c, t->pid, &mp) == 0;
	/* -a: an exec since the last tick, and perhaps its end: named by its entry, and by /proc
	 * below if it is still there */
	if (have_proc && t->all && mp.execs != t->execs) {
		t->execs = mp.execs;
		name_from_entry(t, &mp);
	}
	/* no block of its in the live table (every block there counts in live_count, at least
	 * one unit): its pass over the table (128 MiB at the default size, ~4 ms) is skipped, as
	 * for a process of a tree that allocated nothing or freed it all */
	none_live = have_proc && !mp.live_count;
	if (have_proc)
		proc_counts(d.sampled, &mp);
	if (have_proc && exec) {
		/* exec released the old image's blocks with its address space: none stays live */
		if (whole && mp.live_count)
			profile__add_note(prof, "PID %d (%s) ran a new program: its %llu blocks "
					  "(%llu bytes) still allocated then were released with the old "
					  "image, not leaked", t->pid, t->comm,
					  (unsigned long long)mp.live_count,
					  (unsigned long long)mp.live_bytes);
		mp.live_count = mp.live_bytes = 0;
	}
	if (have_proc) {
		t->fin = mp;
		t->fin_pending = true;
	}
	/* stop counting for this pid before reading, so the numbers are one consistent cut */
	proc_clear(c, t->pid);

	err = bpfutil__map_for_each(sites_fd, sizeof(struct mem_site_key), sizeof(struct mem_site_val),
			   collect_site, &d);
	if (!err) {
		qsort(d.sites, d.n, sizeof(*d.sites), site_cmp);
		d.released = exec;
		/* read and forgotten in one pass: the process is stopped, and nothing later
		 * reads its blocks */
		err = none_live ? 0 : live_for_each(c, t->pid, collect_live, &d, true, &pages);
		for (uint32_t i = 0; d.sampled && i < d.n; i++) {
			d.sites[i].live_count = wcount(true, d.sites[i].live_count);
			d.sites[i].out.count = wcount(true, d.sites[i].out.count);
		}
	} else if (!none_live) {
		live_for_each(c, t->pid, NULL, NULL, true, &pages);
	}
	if (err)
		pr_warn(c->lc, "PID %d: reading the kernel tables failed: %s; the report may be "
			       "incomplete", t->pid, strerror(-err));
	if (!none_live)
		pr_debug(c->lc, "PID %d: its live blocks read from %u of the live table's %u pages",
			 t->pid, pages, c->npages);

	/* a process held at exit still has its mappings; one already gone (a zombie has an
	 * empty maps file) is symbolized from the last snapshot. At an exec's stop the maps are
	 * the new program's already: the old image's stacks are named from its last snapshot
	 * (its attach's, read again every second), never from the new image's, whose files and
	 * addresses are another program's */
	if (!exec && refresh_maps(NULL, t)) {
		sp = load_sym(sym, t, t->maps);
		/* names as they are at the end: a forked child has its parent's until it execs,
		 * and servers retitle their workers */
		if (!exec) {
			target__comm(t->pid, t->comm, sizeof(t->comm));
			target__cmdline(t->pid, t->cmdline, sizeof(t->cmdline));
		}
	} else {
		sp = NULL;
	}
	find_fn_addrs(t);
	if (!sp && t->maps)
		sp = load_sym(sym, t, t->maps);
	if (!sp)
		pr_warn(c->lc, "PID %d: its mappings are gone; stacks are shown as addresses",
			t->pid);
	/* its last records are in the buffer (it is stopped): the stacks they name, symbolized */
	mem_collector__poll(c);
	mem_trace__stacks(c->trace, t->pid, sp);

	/* which name each site's caller called, and the calls of aliases moved accordingly */
	unresolved += split_callers(c, t, sp, &mp, have_proc);
	disp = calloc(d.n ? d.n : 1, sizeof(*disp));
	for (uint32_t i = 0; disp && i < d.n; i++) {
		struct site *s = &d.sites[i];
		struct mem_stack st;
		/* the stack only for a function with aliases (its caller's call tells them
		 * apart): a lookup a site is a system call */
		bool have_stack = fn_has_aliases(t, s->key.fn) && s->key.stack &&
				  bpf_map_lookup_elem(stacks_fd, &s->key.stack, &st) == 0;
		int fn = display_fn(t, sp, s->key.fn, have_stack ? &st : NULL);
		uint64_t calls = s->val.allocs + s->val.failed;

		disp[i] = fn < 0 ? s->key.fn : (uint32_t)fn;
		if (fn < 0)
			unresolved += calls;
		else if (have_proc && disp[i] != s->key.fn && mp.calls[s->key.fn] >= calls) {
			mp.calls[s->key.fn] -= calls;
			mp.calls[disp[i]] += calls;
		}
	}
	if (exec) {
		/* a scan of the old image says nothing about the new one */
		free(t->scan);
		t->scan = NULL;
		t->nscan = 0;
		memset(&t->scan_info, 0, sizeof(t->scan_info));
	}
	if (whole && have_proc && mp.in_flight)
		profile__add_note(prof, "PID %d (%s): %llu allocator call%s in progress when the run "
				  "ended (entered before the end, returning after it): not counted",
				  t->pid, t->comm, (unsigned long long)mp.in_flight,
				  mp.in_flight == 1 ? " was" : "s were");
	if (whole) {
		add_process(prof, t, have_proc ? &mp : NULL, unresolved);
		final_snapshot(c, t, &d, now_ns);
		locs = malloc(sizeof(*locs) * (MEM_MAX_STACK + 1));
		vals = calloc(prof->ntypes, sizeof(*vals));
		sample_of = malloc(sizeof(*sample_of) * (d.n ? d.n : 1));
	}
	for (uint32_t i = 0; sample_of && i < d.n; i++)
		sample_of[i] = PROF_NONE;
	for (uint32_t i = 0; locs && disp && vals && sample_of && i < d.n; i++) {
		struct site *s = &d.sites[i];
		struct scan_site key = { .fn = s->key.fn, .stack = s->key.stack }, *sc;
		struct mem_stack st;
		bool have_stack, lost;
		struct prof_sample *ps;
		uint32_t n;

		if (!s->val.allocs)
			continue;	/* only failures here: they are in the process's counts */
		memset(vals, 0, prof->ntypes * sizeof(*vals));
		vals[0] = s->val.allocs;
		vals[1] = s->val.alloc_bytes;
		if (prof->ntypes > 3) {	/* not in --alloc-only */
			vals[2] = s->live_count;
			vals[3] = s->live_bytes;
		}
		sc = t->nscan ? bsearch(&key, t->scan, t->nscan, sizeof(*t->scan), scan_site_cmp)
			      : NULL;
		for (int cl = 0; sc && cl < PROF_LEAK__COUNT; cl++) {
			int to = profile__leak_type(prof, cl, false);
			int tb = profile__leak_type(prof, cl, true);

			if (to >= 0)
				vals[to] = sc->count[cl];
			if (tb >= 0)
				vals[tb] = sc->bytes[cl];
		}
		have_stack = site_stack(stacks_fd, s->key.stack, &st, &lost);
		n = build_stack(prof, sp, t, disp[i], have_stack ? &st : NULL, locs);
		if (lost)
			n = stacks__end_truncated(prof, locs, n, DROP_STACK_NOT_FOUND);
		ps = profile__add_sample(prof, locs, n, vals, t->pid);
		if (!ps)
			break;
		prof_sample__set_hist(prof, ps, (const uint64_t *)s->val.hist, MEM_HIST_BUCKETS);
		prof_sample__set_life(prof, ps, (const uint64_t *)s->val.life, MEM_LIFE_BUCKETS);
		ps->temporary = s->val.temps;
		ps->out = s->out;
		sample_of[i] = prof->nsamples - 1;
		site_growth(t, s, ps);
	}
	if (sample_of) {
		process_growth(c, t, prof, &d, sample_of, have_proc ? &mp : NULL);
		if (have_proc)
			process_largest(c, t, prof, &d, sample_of, &mp);
	}
	if (c->opts.mmap)
		finalize_maps(c, t, prof, sp, now_ns, exec, &gone);
	/* windows: what its sites did since the last one, for the next one, while its stacks
	 * can be named */
	if (!whole) {
		if (!c->fin_win && (c->fin_win = profile__new("mem")) &&
		    window_types(c, c->fin_win)) {
			profile__free(c->fin_win);
			c->fin_win = NULL;
		}
		if (!c->fin_win || window_sites(c, t, d.sites, d.n, sp, c->fin_win))
			pr_warn(c->lc, "PID %d: out of memory: its last window's sites are lost",
				t->pid);
	}
	free(t->wsites);
	t->wsites = NULL;
	t->nwsites = 0;
	free(sample_of);
	free(locs);
	free(vals);
	free(disp);
	sym_proc__free(sp);

	/* forget the pid in the kernel: its sites (in batches: a call a site cost a tree's
	 * processes ~0.5 ms each) and, once it has ended, its stacks */
	forget_sites(sites_fd, d.sites, d.n);
	for (uint32_t i = 0; i < d.n; i++)
		stack_list_add(&gone, d.sites[i].key.stack);
	forget_stacks(c, t->pid, &gone, exec);
	free(gone.h);
	free(d.sites);
	free(t->scan);
	t->scan = NULL;
	t->nscan = 0;
	free(t->dead);
	t->dead = NULL;
	t->ndead = t->capdead = 0;
	memset(&t->scan_info, 0, sizeof(t->scan_info));
	snapshots__free(t->snap);
	t->snap = NULL;
	forget_maps(t);
	t->finalized = true;
}

int mem_collector__finalize(struct mem_collector *c, pid_t pid, struct profile *prof,
			    struct symbolizer *sym, uint64_t now_ns, bool exec)
{
	struct traced *t = find(c, pid);

	if (!t)
		return -ENOENT;
	finalize_one(c, t, prof, sym, now_ns, exec);
	return 0;
}

int mem_collector__finalize_all(struct mem_collector *c, struct profile *prof,
				struct symbolizer *sym, uint64_t now_ns)
{
	c->ending = true;
	for (uint32_t i = 0; i < c->nt; i++)
		if (!c->t[i].finalized)
			finalize_one(c, &c->t[i], prof, sym, now_ns, false);
	return 0;
}

/* What a drop means for the numbers, and what to do about it. */
static void drop_note(struct mem_collector *c, struct profile *prof, __u32 reason, uint64_t n)
{
	switch (reason) {
	case MEM_DROP_LIVE_FULL:
		profile__add_note(prof, "%llu %s counted but not tracked as live: the live table "
			"(--max-live %u) was full, so %s, and a leak scan could neither classify %s "
			"nor follow pointers through %s (blocks reachable only that way look lost); "
			"raise --max-live", (unsigned long long)n,
			n == 1 ? "allocation was" : "allocations were", c->opts.max_live,
			n == 1 ? "its free counts as an unknown free"
			       : "their frees count as unknown frees",
			n == 1 ? "it" : "them", n == 1 ? "it" : "them");
		break;
	case MEM_DROP_SITES_FULL:
	case MEM_DROP_STACKS_FULL:
		profile__add_note(prof, "%llu %s no site or stack: the site/stack table "
			"(--max-stacks %u) was full; process totals are still exact; raise "
			"--max-stacks", (unsigned long long)n,
			n == 1 ? "allocation has" : "allocations have", c->opts.max_stacks);
		break;
	case MEM_DROP_STACK_FAIL:
		profile__add_note(prof, "%llu %s no stack: the kernel could not capture it",
			(unsigned long long)n, n == 1 ? "allocation has" : "allocations have");
		break;
	case MEM_DROP_NO_STATE:
		profile__add_note(prof, "%llu %s not counted: no per-thread state (calls in flight "
			"while probes were attached, or the kernel could not allocate it)",
			(unsigned long long)n, n == 1 ? "call was" : "calls were");
		break;
	case MEM_DROP_PROCS_FULL:
		profile__add_note(prof, "%llu %s not traced: the process table (--max-procs %u) was "
			"full", (unsigned long long)n, n == 1 ? "process was" : "processes were",
			c->opts.max_procs);
		break;
	case MEM_DROP_REGIONS_FULL:
		profile__add_note(prof, "%llu mapped region%s (--mmap) %s counted as mapped and at "
			"once as unmapped: the region table (--max-regions %u) was full, so %s "
			"could not be matched; raise --max-regions", (unsigned long long)n,
			n == 1 ? "" : "s", n == 1 ? "was" : "were",
			c->opts.max_regions ? c->opts.max_regions : 1u << 16,
			n == 1 ? "its unmap" : "their unmaps");
		break;
	case MEM_DROP_MAP_SPAN:
		profile__add_note(prof, "%llu unmap%s (--mmap) spanned more than 64 counted regions: "
			"the regions past the 64th stay counted as mapped", (unsigned long long)n,
			n == 1 ? "" : "s");
		break;
	case MEM_DROP_TRACE_FULL:
		profile__add_note(prof, "%llu %s missing from the trace (--trace): its ring buffer "
			"(%u MiB) was full; %s counted in the report; trace a shorter run",
			(unsigned long long)n, n == 1 ? "call is" : "calls are",
			TRACE_RB_BYTES >> 20, n == 1 ? "it is" : "they are");
		break;
	}
}

static uint64_t drops_total(struct mem_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.drops);
	uint64_t sum = 0;

	for (__u32 r = 0; r < MEM_DROP__COUNT; r++)
		sum += bpfutil__percpu_sum(fd, r);
	return sum;
}

void mem_collector__sample(struct mem_collector *c, struct profile *prof, int64_t t_ns,
			   struct mem_totals *tot)
{
	struct mem_totals sum = {};

	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *t = &c->t[i];
		__u32 key = t->pid;
		struct mem_proc mp;

		if (t->finalized || proc_copy(c, t->pid, &mp))
			continue;
		proc_counts(sampled(&c->opts), &mp);
		/* windows: no series (they are the run's profile's, which nothing reads; ten
		 * points a second for every process) */
		if (!c->opts.windows) {
			profile__add_point(prof, t->pid, "live_bytes", "bytes", t_ns,
					   mp.live_bytes);
			profile__add_point(prof, t->pid, "live_count", "count", t_ns,
					   mp.live_count);
		}
		if (c->opts.mmap && !c->opts.windows) {
			struct mem_map_proc mm;

			if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.mprocs), &key, &mm) == 0)
				profile__add_point(prof, t->pid, "mmap_live_bytes", "bytes", t_ns,
						   mm.live_bytes);
		}
		for (int f = 0; f < MEM_FN__COUNT; f++)
			sum.calls += mp.calls[f];
		sum.live_bytes += mp.live_bytes;
		sum.live_count += mp.live_count;
	}
	if (tot) {
		sum.drops = drops_total(c);
		*tot = sum;
	}
}

/* Windows: drop the entries of ended images that a window has read out and whose probes are
 * closed (an exec's links wait in the old image's entry for the new one: reusable_links). Kept,
 * a tree's thousands of short processes were ~2.5 KB each for ever, and every scan of c->t
 * (find, each window, each tick) went over them all. */
static void forget_finalized(struct mem_collector *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *t = &c->t[i];

		if (!t->finalized || t->fin_pending || t->links.n) {
			if (n != i)
				c->t[n] = *t;
			n++;
			continue;
		}
		forget_maps(t);
		free(t->scan);
		free(t->dead);
		free(t->wsites);
		snapshots__free(t->snap);
	}
	if (n != c->nt)
		pr_debug(c->lc, "windows: %u ended processes forgotten, %u traced", c->nt - n, n);
	c->nt = n;
}

int mem_collector__window(struct mem_collector *c, struct profile *into, struct symbolizer *sym)
{
	int sites_fd = bpf_map__fd(c->skel->maps.sites);
	bool smp = sampled(&c->opts);
	int err = window_types(c, into);

	if (err)
		return err;
	/* the sites of processes finalized since the last window */
	if (c->fin_win) {
		err = profile__copy_samples(into, c->fin_win, NULL, 0);
		profile__free(c->fin_win);
		c->fin_win = NULL;
		if (err)
			return err;
	}
	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *t = &c->t[i];
		struct drain d = { .pid = t->pid, .sampled = smp };
		struct prof_process *pp;
		struct sym_proc *sp;
		struct mem_proc mp;

		if (t->finalized) {
			/* what it did between the last window and its end, once */
			if (!t->fin_pending)
				continue;
			mp = t->fin;
			t->fin_pending = false;
		} else {
			/* the counts its threads still hold at their sites */
			flush_threads(c, t->pid);
			if (proc_copy(c, t->pid, &mp))
				continue;
			proc_counts(smp, &mp);
		}
		/* an exec starts its counts again */
		if (mp.alloc_count < t->win_count || mp.alloc_bytes < t->win_bytes)
			t->win_count = t->win_bytes = 0;
		pp = profile__add_process(into, t->pid, t->comm, NULL);
		if (!pp)
			return -ENOMEM;
		err = prof_process__add_stat(into, pp, "alloc_count", mp.alloc_count - t->win_count);
		err = err ?: prof_process__add_stat(into, pp, "alloc_bytes",
						    mp.alloc_bytes - t->win_bytes);
		err = err ?: prof_process__set_stat(into, pp, "live_count", mp.live_count);
		err = err ?: prof_process__set_stat(into, pp, "live_bytes", mp.live_bytes);
		if (err)
			return err;
		t->win_count = mp.alloc_count;
		t->win_bytes = mp.alloc_bytes;
		if (t->finalized)
			continue;	/* its sites went with finalize, into fin_win */
		/* its sites, with their stacks: read, not taken (the report at the end has them
		 * all, and inuse needs the whole count) */
		err = bpfutil__map_for_each(sites_fd, sizeof(struct mem_site_key),
					    sizeof(struct mem_site_val), collect_site, &d);
		if (!err) {
			qsort(d.sites, d.n, sizeof(*d.sites), site_cmp);
			sp = load_sym(sym, t, NULL);
			err = window_sites(c, t, d.sites, d.n, sp, into);
			sym_proc__free(sp);
		}
		free(d.sites);
		if (err)
			return err;
	}
	forget_finalized(c);
	return 0;
}

struct snap_read {
	struct mem_collector *c;
	struct traced *last;	/* sites come grouped by nothing; most runs trace one process */
};

static int snap_site(const void *k, const void *v, void *ctx)
{
	const struct mem_site_key *key = k;
	struct snap_read *r = ctx;
	int64_t live = site_live(v);

	/* a site at 0 is 0 by default: storing it would only cost memory */
	if (!live)
		return 0;
	if (!r->last || r->last->pid != (pid_t)key->pid) {
		r->last = find(r->c, key->pid);
		if (!r->last)
			return 0;
	}
	/* out of memory loses this site's point, not the snapshot */
	if (r->last->snap)
		snapshots__put(r->last->snap, key->fn, key->stack, live);
	return 0;
}

int mem_collector__snapshot(struct mem_collector *c, uint64_t now_ns)
{
	struct snap_read r = { .c = c };
	bool any = false, thinned = false;
	uint64_t cost;
	int err;

	if (now_ns < c->snap_due)
		return 0;
	for (uint32_t i = 0; i < c->nt; i++) {
		struct traced *t = &c->t[i];

		if (t->finalized || !t->snap)
			continue;
		thinned |= snapshots__begin(t->snap, (int64_t)(now_ns - c->start_ns)) > 0;
		any = true;
	}
	if (any) {
		/* the site counts the threads hold (hold_alloc) first */
		err = bpfutil__run_task_iter(c->skel->progs.held_flush_iter, 0);
		if (err)
			pr_debug(c->lc, "the threads' held counts could not be read for a snapshot: "
				 "%s", strerror(-err));
		err = bpfutil__map_for_each(bpf_map__fd(c->skel->maps.sites), sizeof(struct mem_site_key),
				   sizeof(struct mem_site_val), snap_site, &r);
		if (err)
			pr_debug(c->lc, "snapshot of the sites failed: %s", strerror(-err));
		for (uint32_t i = 0; i < c->nt; i++)
			if (!c->t[i].finalized && c->t[i].snap)
				snapshots__end(c->t[i].snap);
	}
	/* the sites map is large (histograms per site): never let reading it cost the traced
	 * programs more than a small share of a CPU */
	cost = mono_now() - now_ns;
	if (thinned || cost * SNAP_BUDGET > c->snap_interval) {
		c->snap_interval *= 2;
		pr_debug(c->lc, "snapshots of the sites now every %.1f s (%s)",
			 c->snap_interval / 1e9, thinned ? "store full" : "a read took too long");
	}
	c->snap_due = now_ns + c->snap_interval;
	return any;
}

int mem_collector__drops(struct mem_collector *c, struct profile *prof)
{
	int fd = bpf_map__fd(c->skel->maps.drops);

	for (__u32 r = 0; r < MEM_DROP__COUNT; r++) {
		uint64_t sum;

		if (!c->opts.mmap && (r == MEM_DROP_REGIONS_FULL || r == MEM_DROP_MAP_SPAN))
			continue;	/* reasons of --mmap only */
		if (!c->trace && r == MEM_DROP_TRACE_FULL)
			continue;
		sum = bpfutil__percpu_sum(fd, r);
		profile__add_drop(prof, drop_names[r], sum);
		if (sum)
			drop_note(c, prof, r, sum);
	}
	profile__add_drop(prof, DROP_STACK_NOT_FOUND, 0);	/* listed at 0 too */
	unwinder__add_drops(c->unwinder, prof);
	return 0;
}

/* What the live threads of pid still hold (mem.bpf.c, hold_alloc; mem_alloc_only.bpf.h),
 * added to the maps by a task iterator over them. */
static void flush_threads(struct mem_collector *c, pid_t pid)
{
	int err = bpfutil__run_task_iter(c->skel->progs.held_flush_iter, pid);

	/* a process that is gone flushed its threads as they exited */
	if (err && err != -ENOENT && err != -ESRCH)
		pr_warn(c->lc, "PID %d: cannot read its threads' last counts (%s); the calls of "
			       "each thread's last site may be missing", pid, strerror(-err));
}

/* The end of the run for the programs: no call counts from here on (mem.bpf.c, quiescing), so
 * that closing the links, probe by probe and concurrently, counts nothing by halves */
static void stop_counting(struct mem_collector *c)
{
	if (c->skel && c->skel->bss)
		__atomic_store_n(&c->skel->bss->quiescing, 1, __ATOMIC_SEQ_CST);
}

bool mem_collector__test_stalled(struct mem_collector *c)
{
	return c && c->skel && c->skel->bss &&
	       __atomic_load_n(&c->skel->bss->test_stalled, __ATOMIC_SEQ_CST);
}

void mem_collector__test_release(struct mem_collector *c)
{
	if (c && c->skel && c->skel->bss)
		__atomic_store_n(&c->skel->bss->test_go, 1, __ATOMIC_SEQ_CST);
}

bool mem_collector__test_quiescing(struct mem_collector *c)
{
	return c && c->skel && c->skel->bss &&
	       __atomic_load_n(&c->skel->bss->quiescing, __ATOMIC_SEQ_CST);
}

void mem_collector__quiesce(struct mem_collector *c)
{
	int err;

	if (!c)
		return;
	stop_counting(c);
	/* a call whose program was past the flag's test goes on: its allocation held by its
	 * thread and its block not yet live, or its free counted and the live count not yet
	 * lowered. Every such program has returned before anything is read (closing the links
	 * waits for them only when the close drops a link's last reference) */
	err = bpfutil__wait_programs();
	if (err)
		pr_warn(c->lc, "cannot wait for the allocator probes still running at the end (%s): "
			       "a call in progress then may be counted in part",
			strerror(-err));
	/* the probes off first: nothing changes a thread's state any more */
	for (uint32_t i = 0; i < c->nt; i++)
		close_links(c, &c->t[i].links);
	for (uint32_t i = 0; i < c->nsys; i++)
		close_links(c, &c->sys[i]);
	unwinder__unhook(c->unwinder);
	unwinder__use_closer(c->unwinder, NULL);
	fd_closer__free(c->closer);
	c->closer = NULL;
}

void mem_collector__detach_pid(struct mem_collector *c, pid_t pid)
{
	unwinder__forget(c->unwinder, pid);
	for (uint32_t i = 0; i < c->nt; i++)
		if (c->t[i].pid == pid)
			probes__detach(&c->t[i].links);
}

void mem_collector__detach(struct mem_collector *c)
{
	if (!c)
		return;
	stop_counting(c);
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(c->map_links[i]);
		c->map_links[i] = NULL;
		bpf_link__destroy(c->held_links[i]);
		c->held_links[i] = NULL;
	}
	/* concurrently: one grace period for all rather than one per link */
	for (uint32_t i = 0; i < c->nt; i++)
		close_links(c, &c->t[i].links);
	for (uint32_t i = 0; i < c->nsys; i++)
		close_links(c, &c->sys[i]);
	unwinder__unhook(c->unwinder);
	unwinder__use_closer(c->unwinder, NULL);
	fd_closer__free(c->closer);
	c->closer = NULL;
}

void mem_collector__poll(struct mem_collector *c)
{
	int n = mem_trace__poll(c->trace);

	if (n < 0)
		pr_warn(c->lc, "reading the trace's ring buffer failed: %s", strerror(-n));
}

int mem_collector__trace_finish(struct mem_collector *c)
{
	int err;

	if (!c->trace)
		return 0;
	err = mem_trace__finish(c->trace, bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.drops),
							      MEM_DROP_TRACE_FULL));
	if (err)
		pr_err(c->lc, "writing the trace to %s failed: %s", c->opts.trace_path,
		       strerror(-err));
	return err;
}

void mem_collector__free(struct mem_collector *c)
{
	if (!c)
		return;
	mem_collector__detach(c);
	mem_trace__free(c->trace);
	for (uint32_t i = 0; i < c->nt; i++) {
		forget_maps(&c->t[i]);
		free(c->t[i].scan);
		free(c->t[i].dead);
		free(c->t[i].wsites);
		snapshots__free(c->t[i].snap);
	}
	profile__free(c->fin_win);
	free(c->kept_stacks);
	free(c->t);
	free(c->sys);
	if (c->live)
		munmap(c->live, live_bytes(c));
	if (c->live_used)
		munmap(c->live_used, live_used_bytes(c));
	if (c->procs)
		munmap(c->procs, procs_bytes(c));
	mem_bpf__destroy(c->skel);
	unwinder__free(c->unwinder);
	free(c);
}
