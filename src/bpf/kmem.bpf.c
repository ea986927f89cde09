// SPDX-License-Identifier: GPL-2.0
/* ebprof kmem: kernel allocations by stack. tp_btf programs on the kmem tracepoints (kmalloc,
 * kfree, kmem_cache_alloc/free, mm_page_alloc/free, and where BTF has them mm_page_free_batched
 * and percpu_alloc_percpu/free_percpu), their arguments typed by BTF and the kmem_cache's fields
 * read through CO-RE. Allocations of the traced processes are counted per (process, kind, user
 * stack, kernel stack) with a log2 size histogram, per (process, cache), and per process; each
 * one is tracked by pointer in a preallocated hash until whichever task or CPU frees it. Nothing
 * goes to userspace per event: it reads the tables when a process or the run ends, and takes
 * the count and cache rows as they fill (counting the keys made: KMEM_STAT_*_KEYS). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/kmem.h"
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 self_tgid;	/* ebprof itself: never counted, even with -a */
const volatile __u32 page_size = 4096;

/* kmalloc(0) returns ZERO_SIZE_PTR (16), never a real object: not tracked, not looked up */
#define KMEM_NO_OBJECT 16

/* THREAD_SIZE where the task's stack is not a vmalloc area (x86-64 and arm64 without KASAN) */
#define KMEM_THREAD_SIZE	16384

/* Set by the collector through the mmapped .bss: -a, and the end of tracing (stop), which
 * turns every program into an early return without the slow detach. */
bool trace_all;
bool stopped;
__u32 next_cache_id;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* the count and cache rows, kept twice (bpf/lib/take.bpf.h): a spill takes the generation
 * the programs no longer count into. A free lowers the live counts of its allocation's count
 * row in the generation that made it while its process's series is open (`series`), and
 * counts in the current generation's cache row (untrack): the two rows of a key are summed
 * when read. --max-stacks times two. */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct stack_key, struct kmem_count, 1);

/* The processes whose growth series is open (the collector's series_open): their count rows
 * and totals are never taken nor deleted while they are here, so a free may lower their live
 * counts (untrack). The collector adds a process before it can count (before `targets`) and
 * deletes it before the spill that first takes its rows. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} series SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* --max-live */
	__type(key, __u64);		/* the pointer (a page allocation's struct page) */
	__type(value, struct kmem_live);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, struct kmem_totals);
} totals SEC(".maps");

TAKE_TABLE(cache_stats, BPF_MAP_TYPE_HASH, struct kmem_cache_key, struct kmem_cache_stat, 1024);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);		/* struct kmem_cache * */
	__type(value, struct kmem_cache_info);
} cache_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KMEM_STAT__COUNT);	/* the drops, then the stats */
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/* One scratch per kind of allocation: a program never runs nested in itself on one CPU (the
 * kernel skips it, a recursion miss the collector reports: the allocations have no twin, enum
 * kmem_tp), but an interrupt's kmem_cache_alloc may run in the middle of a task's kmalloc. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KMEM_KIND__COUNT);
	__type(key, __u32);
	__type(value, struct kmem_scratch);
} scratch SEC(".maps");

/* Softirqs and device interrupt handlers running on each CPU (kmem_softirq_*, kmem_irq_*):
 * an interrupt that came from user mode runs on the task's own stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} irq_depth SEC(".maps");

/* Per CPU, per free tracepoint (enum kmem_tp): whether its program runs on this CPU now
 * (busy_mark), and the events its twin took because it did (nested_event). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KMEM_TP__COUNT);
	__type(key, __u32);
	__type(value, __u32);
} busy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, KMEM_TP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} nested SEC(".maps");

static __always_inline void count_drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		*n += 1;
}

/*
 * Whether this event runs in an interrupt (a hardirq, a softirq, an NMI) rather than for the
 * task it interrupted. preempt_count would say it, but on x86 it is a per-CPU variable, which
 * a program finds through kallsyms: without CONFIG_KALLSYMS_ALL (this kernel's) the verifier
 * cannot resolve it. So: the program runs off the task's own stack (ctx, the tracepoint's
 * arguments, is on the stack it runs on): interrupts that came from kernel mode run on the
 * CPU's interrupt stacks, and so do the softirqs their exit or a local_bh_enable runs; or a
 * softirq or a device interrupt's handler is running on this CPU (irq_depth): one that came
 * from user mode runs on the task's stack. ksoftirqd runs softirqs as a task, on its own stack,
 * and inside softirq_entry/exit: an interrupt's work.
 */
static __always_inline bool in_interrupt_ctx(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 sp = 0, base = (__u64)task->stack, size = KMEM_THREAD_SIZE;
	struct vm_struct *area = task->stack_vm_area;
	void *where = ctx;
	__u32 zero = 0, *depth;

	if (bpf_core_field_exists(task->stack_vm_area) && area)
		size = (__u64)BPF_CORE_READ(area, nr_pages) * page_size;
	/* the pointer's value as a number, through its stack slot */
	bpf_probe_read_kernel(&sp, sizeof(sp), &where);
	if (sp - base >= size)
		return true;
	depth = bpf_map_lookup_elem(&irq_depth, &zero);
	return depth && *depth;
}

/*
 * Whose event this is: the current task's process, or 0 in an interrupt. An interrupt's work
 * (RCU callbacks freeing the whole machine's objects, network and block completions) is not
 * the process it happened to interrupt, and cannot be counted exactly for it: the kernel skips
 * a program that runs into itself on a CPU, so an RCU batch that interrupts the kfree program
 * is lost to it whole (30 of a fixture's 2,089 kfrees), and bpftrace skips those that
 * interrupt any of its programs. PID 0 is the idle task's (swapper), where -a counts them.
 */
static __always_inline __u32 owner(void *ctx)
{
	if (in_interrupt_ctx(ctx))
		return 0;
	return bpf_get_current_pid_tgid() >> 32;
}

static __always_inline bool traced(__u32 tgid)
{
	if (stopped)
		return false;
	return trace_all ? tgid != self_tgid : bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* A map operation's error as a drop: -EBUSY is a bucket locked by the program this event's
 * interrupt interrupted on this CPU (the kernel's hash tables refuse to nest there), anything
 * else the table full (`full`). */
static __always_inline void count_refused(long err, __u32 full)
{
	count_drop(err == -16 /* EBUSY */ ? KMEM_DROP_TABLE_BUSY : full);
}

/* The entry of map for key, made from zero if it has none (its `made` counter up: the keys the
 * collector's spill watches), or NULL, counted as drop `full` (count_refused). */
static __always_inline void *entry_of(void *map, const void *key, const void *zero, __u32 made,
				      __u32 full)
{
	void *v = bpf_map_lookup_elem(map, key);
	long err;

	if (v)
		return v;
	err = bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	if (!err) {
		count_drop(made);
	} else if (err != -17 /* EEXIST: another CPU made it */) {
		count_refused(err, full);
		return NULL;
	}
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		count_drop(full);	/* made, and deleted by a take at once */
	return v;
}

static __always_inline struct kmem_totals *totals_of(__u32 tgid)
{
	struct kmem_totals *t = bpf_map_lookup_elem(&totals, &tgid), zero = {};
	__u64 start = tgid ? proc_start(bpf_get_current_task_btf()) : 0;

	if (t) {
		/* -a: tgid's totals met by another process (bpf/lib/pidreuse.bpf.h): the entry is
		 * the newest's from now on, summed with the earlier one's numbers (a launched
		 * tree's are the session's to say) */
		if (trace_all && pid_reused(&t->start, tgid, start)) {
			bpf_get_current_comm(t->comm, sizeof(t->comm));
			count_drop(KMEM_STAT_PIDS_REUSED);
		}
		return t;
	}
	/* the interrupted task's name is not PID 0's */
	if (tgid)
		bpf_get_current_comm(zero.comm, sizeof(zero.comm));
	else
		__builtin_memcpy(zero.comm, "swapper", sizeof("swapper"));
	zero.start = start;
	return entry_of(&totals, &tgid, &zero, KMEM_STAT_PROC_KEYS, KMEM_DROP_PROCS_FULL);
}

/* A free's rows, a function per table: the verifier inlines a lookup whose map it knows, but
 * one through a pointer that is one of two (take_table) is a helper call through the map's ops
 * (an indirect call); a subprogram call is cheaper. (Two lookups in the two branches of an `if`
 * are merged by clang into one call on a pointer picked by the branch.) */
static __noinline struct kmem_count *count_row_0(const struct stack_key *k)
{
	return bpf_map_lookup_elem(&counts_0, k);
}

static __noinline struct kmem_count *count_row_1(const struct stack_key *k)
{
	return bpf_map_lookup_elem(&counts_1, k);
}

static __noinline struct kmem_cache_stat *cache_row_0(const struct kmem_cache_key *k)
{
	struct kmem_cache_stat zero = {};

	return entry_of(&cache_stats_0, k, &zero, KMEM_STAT_CACHE_KEYS, KMEM_DROP_CACHES_FULL);
}

static __noinline struct kmem_cache_stat *cache_row_1(const struct kmem_cache_key *k)
{
	struct kmem_cache_stat zero = {};

	return entry_of(&cache_stats_1, k, &zero, KMEM_STAT_CACHE_KEYS, KMEM_DROP_CACHES_FULL);
}

/*
 * A tracked allocation is gone (freed, or its pointer allocated again unseen): l, its live
 * entry, says where its rows are, so that a free looks up nothing but them. A free never writes
 * into a row a take may be copying or may have deleted (a deleted element is reused by the
 * next insert into its table: a write through a pointer looked up before the delete would land
 * in another key's row).
 *
 * The live counts (its count row's, its process's totals) are read only by its process's
 * growth series (the report's in-use values are made from `live`), so they are kept only for
 * a traced process (KMEM_LIVE_ROW, KMEM_LIVE_TOTALS: added at the allocation, -a's never), and
 * lowered only while its process is in `series`. Those rows are safe to write then:
 *  - The count row is the one the allocation added to, in its own generation l->gen, even after
 *    flips: a process in `series` has its rows kept at every spill (keeps_rows), and nothing
 *    else deletes a count row of a process with a series (a read-out with `remove` is only
 *    for one without). The collector deletes the process from `series` before the spill that
 *    first takes its rows, and that spill's flip waits for a grace period (collector__flip):
 *    every free that found it in `series` has ended before the take begins; one that begins
 *    after the delete finds it gone and writes nothing.
 *  - Its totals: a process with a series (a kmem_proc) has them kept at every spill until the
 *    run's end (keeps_totals), and deleted by no read-out.
 * A freed allocation's cache row counts the free (the report's frees) in the generation
 * counted now (take_gen_now(), read here), made if need be: the other generation's row may be
 * under a take, but a take of this one starts only after a flip that waits for this program.
 * The report sums a (process, cache)'s rows. Before, a free lowered the current generation's
 * count row of its key, or if it had none the other generation's, whose take may have copied
 * or deleted it already.
 */
static __always_inline void untrack(const struct kmem_live *l, bool freed)
{
	struct kmem_cache_key ck = { .tgid = l->key.tgid, .cache = l->cache };
	struct kmem_cache_stat *cs;
	struct kmem_totals *t;
	struct kmem_count *c;
	__u32 tgid = l->key.tgid;

	if ((l->flags & (KMEM_LIVE_ROW | KMEM_LIVE_TOTALS)) &&
	    bpf_map_lookup_elem(&series, &tgid)) {
		if (l->flags & KMEM_LIVE_ROW) {
			c = l->gen & 1 ? count_row_1(&l->key) : count_row_0(&l->key);
			if (c) {
				__sync_fetch_and_add(&c->live_count, -1);
				__sync_fetch_and_add(&c->live_bytes, -l->bytes);
			}
		}
		t = l->flags & KMEM_LIVE_TOTALS ? bpf_map_lookup_elem(&totals, &tgid) : NULL;
		if (t) {
			__sync_fetch_and_add(&t->v[KMEM_T_LIVE_COUNT], -1);
			__sync_fetch_and_add(&t->v[KMEM_T_LIVE_BYTES], -l->bytes);
		}
	}
	if (freed && l->cache) {
		cs = take_gen_now() ? cache_row_1(&ck) : cache_row_0(&ck);
		if (cs)
			__sync_fetch_and_add(&cs->frees, 1);
	}
}

/* A free event, from any task: the allocation it ends, if tracked, is no longer live; the
 * freeing task's count `what` goes up if it is traced (KMEM_T__COUNT: none). */
static __always_inline void on_free(void *ctx, __u64 ptr, enum kmem_total what)
{
	__u32 tgid;
	struct kmem_totals *t;
	struct kmem_live *l, copy;
	long err;

	/* kfree(NULL) and of ZERO_SIZE_PTR is traced before the kernel sees it does nothing:
	 * not a free (they were 92% of a launched shell's kfrees) */
	if (stopped || ptr <= KMEM_NO_OBJECT)
		return;
	l = bpf_map_lookup_elem(&live, &ptr);
	if (l) {
		copy = *l;
		/* only the one that deletes it counts it (-ENOENT: another CPU did) */
		err = bpf_map_delete_elem(&live, &ptr);
		if (!err)
			untrack(&copy, true);
		else if (err == -16 /* EBUSY */)
			count_drop(KMEM_DROP_TABLE_BUSY);
	}
	if (what >= KMEM_T__COUNT)
		return;
	tgid = owner(ctx);
	if (!traced(tgid))
		return;
	t = totals_of(tgid);
	if (t)
		__sync_fetch_and_add(&t->v[what], 1);
}

/* An allocation's facts, from its program to kmem_alloc: tgid (owner()), kind/low
 * (stack_key.aux), ptr (0: failed; ZERO_SIZE_PTR: counted, not tracked), the sizes, cache (its
 * kmem_cache_key.cache, 0: none), what (its process's count) */
struct kmem_alloc_ev {
	__u32 tgid, kind, low, what;
	__u64 ptr, req, alloc, cache;
};

/* key's stacks: the kernel stack's knr frames in scratch slot's kern, and the current task's
 * user stack (none for an interrupt's allocation, key->tgid 0: the registers are the
 * interrupted task's). A global function, for the verifier, as kmem_alloc is (which cannot call
 * it: the unwinder's calls below it would pass the kernel's limit of 8 frames deep). */
__noinline int kmem_stacks(struct stack_key *key, __u32 slot, __u64 knr)
{
	struct kmem_scratch *s = bpf_map_lookup_elem(&scratch, &slot);
	struct pt_regs *regs;
	bool exact;
	__u64 nr;

	if (!key || !s)
		return 0;
	if (knr) {
		key->kstack = stack_intern(&stacks, &s->kern, knr, 0);
		if (!key->kstack)
			count_drop(KMEM_DROP_STACKS_FULL);
	}
	regs = key->tgid ? user_regs(NULL, &exact) : NULL;
	nr = regs ? capture_user_stack(regs, &s->user) : 0;
	if (nr) {
		key->ustack = stack_intern(&stacks, &s->user, nr, 0);
		if (!key->ustack)
			count_drop(KMEM_DROP_STACKS_FULL);
		if (exact)
			key->flags = STACK_KEY_USER_EXACT;
	}
	return 0;
}

/*
 * An allocation by the current task of a traced process, k its stacks' key (kmem_stacks). A
 * global function: the verifier checks it once per program with its arguments unknown, apart
 * from the paths of its caller. Inlined, with the stacks, it was checked once for each distinct
 * state its caller's branches reached it with: kmem_kmalloc took 310,000 instructions and ~1 s
 * of every start, the four allocation programs ~1.8 s (docs/PERFORMANCE.md).
 */
__noinline int kmem_alloc(const struct kmem_alloc_ev *e, const struct stack_key *k)
{
	__u32 tgid, kind, slot, g;
	struct stack_key key;
	struct kmem_cache_key ck = {};
	struct kmem_cache_stat *cs = NULL, czero = {};
	struct kmem_live lv = {}, *old;
	struct kmem_scratch *s;
	struct kmem_totals *t;
	struct kmem_count *c;
	bool tracked = false;
	/* a traced process's allocations keep live counts for its growth series; -a's do not
	 * (untrack) */
	bool series = !trace_all;
	__u64 ptr, req, alloc, cache;
	long err;

	if (!e || !k)
		return 0;
	key = *k;
	tgid = e->tgid;
	kind = e->kind;
	slot = kind;
	ptr = e->ptr;
	req = e->req;
	alloc = e->alloc;
	cache = e->cache;
	ck.tgid = tgid;
	ck.cache = cache;
	t = totals_of(tgid);
	if (t) {
		if (e->what < KMEM_T__COUNT)
			__sync_fetch_and_add(&t->v[e->what], 1);
		if (kind == KMEM_KIND_KMALLOC)
			__sync_fetch_and_add(&t->v[KMEM_T_KMALLOC_BYTES_REQ], req);
		__sync_fetch_and_add(&t->v[KMEM_T_BYTES_REQ], req);
		__sync_fetch_and_add(&t->v[KMEM_T_BYTES_ALLOC], alloc);
	}
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return 0;

	g = take_gen_now();
	c = entry_of(take_table(counts, g), &key, &s->zero, KMEM_STAT_COUNT_KEYS,
		     KMEM_DROP_COUNTS_FULL);
	if (cache)
		cs = entry_of(take_table(cache_stats, g), &ck, &czero, KMEM_STAT_CACHE_KEYS,
			      KMEM_DROP_CACHES_FULL);

	if (ptr > KMEM_NO_OBJECT) {
		old = bpf_map_lookup_elem(&live, &ptr);
		if (old) {
			/* allocated again while tracked: its free had no event (a bulk free) */
			lv = *old;
			err = bpf_map_delete_elem(&live, &ptr);
			if (!err) {
				untrack(&lv, false);
				count_drop(KMEM_DROP_FREE_UNSEEN);
			} else if (err == -16 /* EBUSY */) {
				count_drop(KMEM_DROP_TABLE_BUSY);
			}
		}
		lv.key = key;
		lv.cache = cache;
		lv.bytes = alloc;
		lv.ts = bpf_ktime_get_ns();
		lv.gen = g;
		lv.flags = (series && c ? KMEM_LIVE_ROW : 0) | (series && t ? KMEM_LIVE_TOTALS : 0);
		err = bpf_map_update_elem(&live, &ptr, &lv, BPF_ANY);
		if (err)
			count_refused(err, KMEM_DROP_LIVE_FULL);
		else
			tracked = true;
	}

	if (c) {
		__u32 b = log2_bucket_n(req, KMEM_HIST_BUCKETS);

		__sync_fetch_and_add(&c->allocs, 1);
		__sync_fetch_and_add(&c->bytes_req, req);
		__sync_fetch_and_add(&c->bytes_alloc, alloc);
		if (b < KMEM_HIST_BUCKETS)
			__sync_fetch_and_add(&c->hist[b], 1);
		if (tracked && series) {
			__sync_fetch_and_add(&c->live_count, 1);
			__sync_fetch_and_add(&c->live_bytes, alloc);
		}
	}
	if (cs) {
		__sync_fetch_and_add(&cs->allocs, 1);
		__sync_fetch_and_add(&cs->bytes_req, req);
		__sync_fetch_and_add(&cs->bytes_alloc, alloc);
	}
	if (t && tracked && series) {
		__sync_fetch_and_add(&t->v[KMEM_T_LIVE_COUNT], 1);
		__sync_fetch_and_add(&t->v[KMEM_T_LIVE_BYTES], alloc);
	}
	return 0;
}

/* An allocation by the current task: counted (and its block tracked) if its process is traced.
 * The arguments: struct kmem_alloc_ev's. The kernel stack is taken here: bpf_get_stack needs the
 * program's ctx, which a global function cannot be given on every kernel this runs on. */
static __always_inline void on_alloc(void *ctx, __u32 kind, __u32 low, __u64 ptr, __u64 req,
				     __u64 alloc, __u64 cache, enum kmem_total what)
{
	struct kmem_alloc_ev e = { .tgid = owner(ctx), .kind = kind, .low = low, .what = what,
				   .ptr = ptr, .req = req, .alloc = alloc, .cache = cache };
	struct stack_key key = {};
	struct kmem_scratch *s;
	__u32 slot = kind;

	if (!traced(e.tgid))
		return;
	s = bpf_map_lookup_elem(&scratch, &slot);
	if (!s)
		return;
	key.tgid = e.tgid;
	key.aux = KMEM_AUX(kind, low);
	kmem_stacks(&key, slot, capture_kernel_stack(ctx, &s->kern));
	kmem_alloc(&e, &key);
}

/* The id of a slab cache (its name noted the first time it is seen). */
static __always_inline __u32 cache_id(struct kmem_cache *s)
{
	__u64 k = (__u64)s;
	struct kmem_cache_info *ci = bpf_map_lookup_elem(&cache_ids, &k), info = {};
	const char *name;
	long err;

	if (ci)
		return ci->id;
	info.id = __sync_fetch_and_add(&next_cache_id, 1) + 1;
	name = BPF_CORE_READ(s, name);
	bpf_probe_read_kernel_str(info.name, sizeof(info.name), name);
	err = bpf_map_update_elem(&cache_ids, &k, &info, BPF_NOEXIST);
	if (err) {
		ci = bpf_map_lookup_elem(&cache_ids, &k);	/* another CPU named it */
		if (ci)
			return ci->id;
		count_refused(err, KMEM_DROP_CACHES_FULL);
		return 0;
	}
	return info.id;
}

/* The largest kmalloc a slab cache serves: above it kmalloc takes pages whole */
#define KMALLOC_MAX_CACHE KMEM_KMALLOC_MAX_CACHE

/*
 * Whether this kmalloc event is the second report of one allocation: a kmalloc above the
 * largest cache is traced by __kmalloc_large_node_noprof and again by its caller
 * (__do_kmalloc_node), with the same pointer and sizes (kernels 6.x). The first report holds
 * the pointer: the same process, the same size, within a millisecond. Counted twice, its
 * bytes were double and the second report looked like a reuse without a free
 * (free_unseen). A pointer allocated again for real has been freed between: a kfree event,
 * or, for a free without one, more time than this.
 */
static __always_inline bool kmalloc_again(void *ctx, __u64 ptr, __u64 alloc)
{
	__u32 tgid = owner(ctx);
	struct kmem_live *l;

	if (alloc <= KMALLOC_MAX_CACHE || ptr <= KMEM_NO_OBJECT)
		return false;
	l = bpf_map_lookup_elem(&live, &ptr);
	return l && l->key.tgid == tgid && KMEM_AUX_KIND(l->key.aux) == KMEM_KIND_KMALLOC &&
	       l->bytes == alloc && bpf_ktime_get_ns() - l->ts < 1000000;
}

/*
 * The free programs, each with its twin (abi/kmem.h, enum kmem_tp): `kmem_X` takes an event
 * with its tracepoint's busy mark up on its CPU; `kmem_X_nested`, attached to the same
 * tracepoint, takes only an event that came while the mark was up: an interrupt's free (an RCU
 * callback's, at a tick's end) that interrupted kmem_X on this CPU, which the kernel skips for
 * kmem_X (a recursion miss), and which would leave its allocation outstanding. The collector
 * counts kmem_X's misses less its twin's takes as lost (recursion_misses). The allocations
 * have none: an interrupt's allocation is PID 0's, counted with -a only, and a twin of each
 * would double the verifier's work on the largest programs (kmem_stacks and kmem_alloc again in
 * each).
 */
static __always_inline __u32 *busy_mark(__u32 tp)
{
	__u32 *b = bpf_map_lookup_elem(&busy, &tp);

	if (b)
		*b = 1;
	return b;
}

static __always_inline void busy_clear(__u32 *b)
{
	if (b)
		*b = 0;
}

static __always_inline bool nested_event(__u32 tp)
{
	__u32 *b = bpf_map_lookup_elem(&busy, &tp);
	__u64 *n;

	if (!b || !*b)
		return false;
	n = bpf_map_lookup_elem(&nested, &tp);
	if (n)
		*n += 1;
	return true;
}

/* kmem_X and its twin for the free tracepoint of section "tp_btf/" tpname (opt: "?" when
 * the program is loaded only where the kernel has that tracepoint), enum kmem_tp tp, the
 * process's count what, of one pointer argument ptr among the arguments */
#define KMEM_FREE_PROGS(opt, tpname, name, tp, what, ptr, ...)				\
	SEC(opt "tp_btf/" tpname)							\
	int BPF_PROG(name, __VA_ARGS__)							\
	{										\
		__u32 *b = busy_mark(tp);						\
											\
		on_free(ctx, (__u64)(ptr), what);					\
		busy_clear(b);								\
		return 0;								\
	}										\
											\
	SEC("?tp_btf/" tpname)								\
	int BPF_PROG(name##_nested, __VA_ARGS__)					\
	{										\
		if (nested_event(tp))							\
			on_free(ctx, (__u64)(ptr), what);				\
		return 0;								\
	}

SEC("tp_btf/kmalloc")
int BPF_PROG(kmem_kmalloc, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc)
{
	if (kmalloc_again(ctx, (__u64)ptr, bytes_alloc))
		return 0;
	/* kmalloc's cache is not an argument: its size class stands for it */
	on_alloc(ctx, KMEM_KIND_KMALLOC, 0, (__u64)ptr, bytes_req, bytes_alloc, bytes_alloc,
		 KMEM_T_KMALLOC);
	return 0;
}

KMEM_FREE_PROGS("", "kfree", kmem_kfree, KMEM_TP_KFREE, KMEM_T_KFREE, ptr,
		unsigned long call_site, const void *ptr)

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(kmem_cache_alloc, unsigned long call_site, const void *ptr, struct kmem_cache *s)
{
	__u32 tgid = owner(ctx);
	__u64 req, alloc;

	if (!traced(tgid))
		return 0;
	/* what the tracepoint itself reports: the object's size, and its slot's */
	req = BPF_CORE_READ(s, object_size);
	alloc = BPF_CORE_READ(s, size);
	on_alloc(ctx, KMEM_KIND_CACHE, cache_id(s), (__u64)ptr, req, alloc, (__u64)s,
		 KMEM_T_CACHE_ALLOC);
	return 0;
}

KMEM_FREE_PROGS("", "kmem_cache_free", kmem_cache_free, KMEM_TP_CACHE_FREE,
		KMEM_T_CACHE_FREE, ptr, unsigned long call_site, const void *ptr)

SEC("tp_btf/mm_page_alloc")
int BPF_PROG(kmem_page_alloc, struct page *page, unsigned int order)
{
	__u64 bytes = (__u64)page_size << (order & 31);

	on_alloc(ctx, KMEM_KIND_PAGE, order, (__u64)page, bytes, bytes, 0, KMEM_T_PAGE_ALLOC);
	return 0;
}

KMEM_FREE_PROGS("", "mm_page_free", kmem_page_free, KMEM_TP_PAGE_FREE, KMEM_T_PAGE_FREE,
		page, struct page *page)

/* order-0 pages freed in batches (free_unref_folios): each such page was reported by
 * mm_page_free before (free_pages_prepare), so this one only ends a page still tracked, for a
 * kernel that would not; counted, it made page_free about twice the pages freed */
KMEM_FREE_PROGS("?", "mm_page_free_batched", kmem_page_free_batched,
		KMEM_TP_PAGE_FREE_BATCHED, KMEM_T__COUNT, page, struct page *page)

SEC("?tp_btf/percpu_alloc_percpu")
int BPF_PROG(kmem_percpu_alloc, unsigned long call_site, bool reserved, bool is_atomic,
	     size_t size, size_t align, void *base_addr, int off, void *ptr, size_t bytes_alloc)
{
	on_alloc(ctx, KMEM_KIND_PERCPU, 0, (__u64)ptr, size, bytes_alloc, 0, KMEM_T_PERCPU_ALLOC);
	return 0;
}

KMEM_FREE_PROGS("?", "percpu_free_percpu", kmem_percpu_free, KMEM_TP_PERCPU_FREE,
		KMEM_T_PERCPU_FREE, ptr, void *base_addr, int off, void *ptr)

/* The interrupt work on this CPU (in_interrupt_ctx): each softirq action and each device
 * interrupt handler. An exit without its entry (tracing began inside it) is not counted. */
static __always_inline void irq_depth_add(int d)
{
	__u32 zero = 0, *depth = bpf_map_lookup_elem(&irq_depth, &zero);

	if (depth && (d > 0 || *depth))
		*depth += d;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(kmem_softirq_entry, unsigned int vec_nr)
{
	irq_depth_add(1);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(kmem_softirq_exit, unsigned int vec_nr)
{
	irq_depth_add(-1);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(kmem_irq_entry, int irq, struct irqaction *action)
{
	irq_depth_add(1);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(kmem_irq_exit, int irq, struct irqaction *action, int ret)
{
	irq_depth_add(-1);
	return 0;
}

/* A process that execs another program is named by it, as the report's other modes name it:
 * counted before its exec (a shell's child between its fork and its exec), it kept the
 * shell's name, and one gone by the end (-a) was reported under it (100 /bin/true, "bash"). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(kmem_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct kmem_totals *t = bpf_map_lookup_elem(&totals, &tgid);

	if (t)
		bpf_get_current_comm(t->comm, sizeof(t->comm));
	return 0;
}
