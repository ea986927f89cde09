// SPDX-License-Identifier: GPL-2.0
/* ebprof mem: kernel side. Uprobes on the allocator's entry points, aggregated in the kernel.
 *
 * One entry program and one return program serve every allocator function; the attach cookie
 * says which function (enum mem_fn), so a whole allocator attaches as two uprobe_multi links.
 * Per-thread state (task storage) carries the request from entry to return and a nesting depth,
 * so that malloc called inside realloc/memalign/calloc counts once, as the outer call. Nothing is
 * sent per event: userspace reads the maps when a process ends or the run stops.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/mem.h"
#include "bpf/lib/stack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Allocations outside [min_size, max_size] are not tracked (calls are still counted). */
const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
/* temporaries: 0 = heaptrack's rule (freed before the thread's next allocation), else freed
 * within this many ns of being allocated */
const volatile __u64 temp_ns = 0;
/* -a: the links have no pid filter; every process but ebprof itself gets a procs entry at its
 * first call, instead of only those userspace created */
const volatile bool trace_all = false;
const volatile __u32 self_tgid = 0;
/* Sampled tracking (enum mem_sample_mode) and its period: mean bytes between samples, or
 * allocations per sample. Tables: see abi/mem.h. */
const volatile __u32 sample_mode = MEM_SAMPLE_NONE;
const volatile __u64 sample_period = 0;
const volatile __u32 ln_tab[MEM_LN_STEPS + 1] = {};
const volatile __u64 exp_int_tab[MEM_EXP_INT] = {};
const volatile __u64 exp_frac_tab[MEM_EXP_FRAC] = {};
/* --trace: a record of every counted call into trace_rb. Off, the verifier drops every line of
 * it, so the hot path is what it is without it. */
const volatile bool trace_calls = false;
/* --mmap: free's entry notes where it is (mfree_sp, mfree_ra), for map_below_free */
const volatile bool track_maps = false;
/* The end of the run, set by userspace before it closes the links (mem_collector__quiesce):
 * from then on no call counts. The links' probes go one by one and concurrently, so without it
 * a process still running (-p, -d) went on being counted by halves meanwhile: returns whose
 * entry probe was gone (each a missing_entry_state drop), frees of blocks whose allocation's
 * return probe was gone (unknown frees, more frees than allocations). */
volatile __u32 quiescing = 0;
/* Tests only (EBPROF_TEST_STALL_SIZE): the first counted allocation of this size stops in its
 * return program, its counts held but its block not yet live, until userspace lets it go
 * (test_go) or a few seconds pass: a call in flight at the end of a run, made to last. With
 * test_stall_entry (EBPROF_TEST_STALL_AT=entry), in its entry program, once it is the thread's
 * call in progress: a call whose return comes after the end.
 * 0 (always but in tests): the verifier drops every line of it. */
const volatile __u64 test_stall_size = 0;
const volatile bool test_stall_entry = false;	/* in its entry program instead */
volatile __u32 test_stalled = 0, test_go = 0;

/* One held site (see "Held accounting" below): its calls' site and process counters */
#define HELD_WAYS 4	/* a power of 2 */
_Static_assert(MEM_HIST_BUCKETS == MEM_LIFE_BUCKETS, "one held bucket array for both");

struct mem_held {
	__u32 pid, fn, calls;	/* calls: held since the last flush */
	__u32 cfn;		/* frees: the freeing function; MEM_FN__COUNT: no call (realloc's) */
	__u64 stack, n, bytes;	/* n: count (weight units in sampled modes), 0: the way is empty */
	__u64 extra;		/* allocations: the largest request; frees: temporaries */
	__u64 mask;		/* buckets of b not 0 */
	/* --alloc-only (n: calls held, of them failed; the last request and how many calls
	 * in a row asked it, not yet in the counts: ao_fold) */
	__u64 failed, lsize, lcount;
	__u64 b[MEM_HIST_BUCKETS];	/* by log2 of the size (allocations), the lifetime (frees) */
};

struct mem_tstate {
	__u32 depth;		/* traced calls in progress on this thread */
	__u32 fn;		/* outermost call's function */
	__u64 size;		/* its requested size */
	__u64 arg;		/* realloc: old pointer; posix_memalign: where the result goes */
	__u64 last_ptr;		/* this thread's last allocation, for the temporary rule */
	__u64 free_mark;	/* pointer of this thread's last traced event if it was a free;
				 * 0 after any other traced event (see free_enter) */
	__u64 free_mark_sp;	/* that free's stack pointer at entry */
	__u64 free_mark_ip;	/* and its probe's address */
	/* --mmap: the last free's stack pointer at entry and the return address there (0: none
	 * seen), whatever the free (map_below_free, map_from_free) */
	__u64 mfree_sp, mfree_ra;
	/* --trace: the last free that missed was of a block its parent held at the fork (full
	 * tracking, a forked child), of inherited_size bytes */
	__u64 inherited_size;
	__u32 inherited;
	/* an entry-only operator new (MEM_COOKIE_NEW) not yet followed by its inner allocation */
	__u32 new_fn;		/* its enum mem_fn + 1, 0: none */
	__u64 new_size;		/* its request */
	__u64 new_sp, new_fp, new_ret;	/* its %rsp, %rbp and return address at entry */
	/* the outermost call in progress stands for that operator new: its stack starts at new's
	 * caller (caller_ret, walked from caller_fp above caller_sp), not at the inner return */
	__u64 caller_ret, caller_fp, caller_sp;
	__u64 last_stack;	/* the last stack this thread interned (its hash) */
	struct mem_stack stack;	/* scratch for the stack walk: per task, so preemption is harmless */
	/* sampled modes */
	__s64 countdown;	/* bytes (or allocations) until this thread's next sample */
	__u64 weight;		/* the outermost call's weight if sampled (MEM_WEIGHT_ONE units) */
	__u8 armed;		/* countdown drawn */
	__u8 sampled;		/* the outermost call is sampled */
	__u64 ao_sp, ao_ret;	/* --alloc-only: the last counted call's stack pointer, caller */
	__u64 ao_stack;		/* and its stack hash (interned) */
	/* when that stack ended at its caller's caller without a read (see capture_stack_entry):
	 * what it was made of; ao_sret 0: it did not */
	__u64 ao_sret, ao_sfirst, ao_snext, ao_sfp;
	__u32 ao_fn;
	/* --alloc-only: the thread's counts are held in its allocation ways (ha, see
	 * mem_alloc_only.bpf.h), and its process's probed-object ranges */
	__u32 ao_pid;		/* the process they are for; 0: ranges not loaded */
	__u32 ao_busy;		/* being flushed */
	__u64 ao_lo[MEM_LIB_RANGES], ao_hi[MEM_LIB_RANGES];
	__u64 ao_min, ao_max_hi;	/* the lowest and highest end of those ranges */
	/* full and sampled tracking: a thread's site and process accounting held for up to
	 * HELD_WAYS sites of allocations (ha) and of frees (hf), not yet in the maps (hold_alloc);
	 * the way a call's site has none of takes the next of them in turn (ha_next, hf_next) */
	struct mem_held ha[HELD_WAYS], hf[HELD_WAYS];
	__u32 ha_next, hf_next;
	__u32 ha_last, hf_last;		/* the way the last call took: looked at first */
	__u32 held_busy;		/* being flushed */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_tstate);
} tstate SEC(".maps");

/* Traced processes: open addressing by pid in an array (abi/mem.h, MEM_PROC_PROBE) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2048);		/* mem_procs_slots(--max-procs) */
	__type(key, __u32);
	__type(value, struct mem_proc);
} procs SEC(".maps");
const volatile __u32 procs_mask = 2047;
const volatile __u32 max_procs = 1024;
/* entries in use, at most max_procs: userspace's and -a's (both sides add and take away) */
__u32 procs_used = 0;

/* The live table (see "The live table" below): one cache line per slot, preallocated, read by
 * userspace through a mapping of it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 21);		/* a power of two >= --max-live */
	__type(key, __u32);
	__type(value, struct mem_live_slot);
} live SEC(".maps");
const volatile __u32 live_mask = (1 << 21) - 1;

/* Which pages of the live table have held a block of a set's pids since userspace last found
 * none there (abi/mem.h, MEM_LIVE_PAGE_SHIFT, MEM_LIVE_MARK_SETS): a bit a page, 64 a word */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	/* the live table's pages / 64 in each set */
	__uint(max_entries, MEM_LIVE_MARK_SETS * ((1 << 21) >> MEM_LIVE_WORD_SHIFT));
	__type(key, __u32);
	__type(value, __u64);
} live_used SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 15);		/* --max-stacks */
	__type(key, struct mem_site_key);
	__type(value, struct mem_site_val);
} sites SEC(".maps");

/* Stacks interned by a 64-bit hash of their frames: unlike a stack-trace map, two stacks never
 * evict or reject each other by sharing a bucket, so no allocation loses its stack silently. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 15);		/* --max-stacks */
	__type(key, __u64);
	__type(value, struct mem_stack);
} stacks SEC(".maps");

/* Calls of aliased entry-only probes by caller (see MEM_COOKIE_CALLER). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 14);
	__type(key, struct mem_caller_key);
	__type(value, __u64);
} callers SEC(".maps");

/* --trace's records (struct mem_trace_event); a page when not tracing (sized before load). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} trace_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEM_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static const struct mem_site_val zero_site;

static __always_inline struct mem_proc *proc_slot(__u32 i)
{
	__u32 k = i & procs_mask;

	return bpf_map_lookup_elem(&procs, &k);
}

/* The slot of pid's entry, -1 if it has none. A global function, verified once. */
__noinline long proc_find_at(__u32 pid)
{
	struct mem_proc *p;

	if (!pid || pid == MEM_PROC_CLEARING)
		return -1;
	for (int i = 0; i < MEM_PROC_PROBE; i++) {
		p = proc_slot(pid + i);
		if (!p)
			return -1;
		if (p->pid == pid)
			return (pid + i) & procs_mask;
	}
	return -1;
}

/* pid's entry, or NULL: its home slot inline (where it nearly always is), else the window */
static __always_inline struct mem_proc *proc_find(__u32 pid)
{
	struct mem_proc *p = proc_slot(pid);
	long at;

	if (p && p->pid == pid && pid)
		return p;
	at = proc_find_at(pid);
	return at < 0 ? NULL : proc_slot((__u32)at);
}

static __always_inline void drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
}

/* The thread's state, made at its first traced call; NULL, counted as a drop, if the kernel
 * could not allocate it. */
static __always_inline struct mem_tstate *thread_state(struct task_struct *task)
{
	struct mem_tstate *st = bpf_task_storage_get(&tstate, task, 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!st)
		drop(MEM_DROP_NO_STATE);
	return st;
}

/* At a return probe: the thread's state if this return ends its outermost traced call, else
 * NULL (a nested call's return, or a thread whose entry had no state: counted there). */
static __always_inline struct mem_tstate *leave_call(void)
{
	struct mem_tstate *st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);

	if (!st)
		return NULL;
	if (st->depth == 0) {
		drop(MEM_DROP_NO_STATE);
		return NULL;
	}
	return --st->depth ? NULL : st;
}

static __always_inline void atomic_max(__u64 *p, __u64 v)
{
	__u64 old = *p;

	/* bounded: each failed exchange means another thread raised the value */
	for (int i = 0; i < 16 && v > old; i++) {
		__u64 cur = __sync_val_compare_and_swap(p, old, v);

		if (cur == old)
			break;
		old = cur;
	}
}

static __always_inline __u32 log2_bucket(__u64 v)
{
	return log2_bucket_n(v, MEM_HIST_BUCKETS);
}

__noinline __u64 intern_stack_at(struct mem_stack *s, __u64 nr, __u64 known);
static __always_inline __u64 intern_stack(struct mem_stack *s, __u64 nr, __u64 known);

/* The user stack from registers as they are at return address ip (the unwinder's sp: usp; a
 * frame-pointer walk's lowest frame: fsp) into s, interned: its hash (0: none). By tables, a
 * stack the stack cache holds and has the hash of (noted there once interned: mem's stacks map
 * loses a process's entries only once it has ended, and a cache entry is of one address space)
 * is its hash alone, without its addresses, hashing them or a map operation. known: a hash
 * already interned (the thread's last stack), or 0. */
static __always_inline __u64 walk_intern(struct mem_stack *s, __u64 ip, __u64 usp, __u64 fp,
					 __u64 fsp, __u64 known)
{
	struct unwind_start us;
	__u64 h;
	long n;

	/* (--unwind fp: the verifier keeps this line only) */
	if (!unwind_mode)
		return intern_stack(s, walk_stack(s->ips, ip, fp, fsp), known);
	__builtin_memset(&us, 0, sizeof(us));
	us.ip = ip;
	us.sp = usp;
	us.bp = fp;
	us.want = 1;
	n = unwind_user_start(s->ips, &us);
	if (n < 0)
		return intern_stack(s, walk_stack(s->ips, ip, fp, fsp), known);
	if (us.hash)
		return us.hash;
	h = intern_stack(s, (__u64)n, known);
	unwind_scache_note(&us, h);
	return h;
}

/* Capture the user stack at a return probe into the thread's scratch buffer and intern it.
 * 0 = no stack. */
static __always_inline __u64 capture_stack(void *ctx, struct mem_tstate *st)
{
	__u64 h;

	if (st->caller_ret) {
		/* registers as after operator new's return: its entry's, above the return address */
		h = walk_intern(&st->stack, st->caller_ret, st->caller_sp + 8, st->caller_fp,
				st->caller_sp, st->last_stack);
	} else if (PT_REGS_IP((struct pt_regs *)ctx)) {
		h = walk_intern(&st->stack, PT_REGS_IP((struct pt_regs *)ctx),
				PT_REGS_SP((struct pt_regs *)ctx), PT_REGS_FP((struct pt_regs *)ctx),
				PT_REGS_SP((struct pt_regs *)ctx), st->last_stack);
	} else {
		drop(MEM_DROP_STACK_FAIL);
		return 0;
	}
	/* a thread allocating from one place again: its stack is interned already */
	return st->last_stack = h;
}

/* --trace: one record. Userspace reads the buffer every tick (100 ms), so no wakeup is asked
 * for: a wakeup per call would cost more than the record. A full buffer is a counted drop. */
static __always_inline void trace_emit(__u32 fn, __u32 result, __u64 size, __u64 ptr, __u64 arg,
				       __u64 stack)
{
	struct mem_trace_event *e = bpf_ringbuf_reserve(&trace_rb, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		drop(MEM_DROP_TRACE_FULL);
		return;
	}
	e->ts = bpf_ktime_get_ns();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->fn = fn;
	e->result = result;
	e->size = size;
	e->ptr = ptr;
	e->arg = arg;
	e->stack = stack;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
}

/* Intern the first nr frames of s (the thread's scratch buffer) by hash. 0 = no stack.
 * known: a hash already interned (the thread's previous stack), or 0. The hash is the
 * process's (seeded with its pid): no other process interns the same stack by it, so that
 * userspace can forget a finished process's stacks (finalize_one) while others run, as it does
 * its sites. */
__noinline __u64 intern_stack_at(struct mem_stack *s, __u64 nr, __u64 known)
{
	if (!s)
		return 0;
	return stack_intern_hashed(&stacks, s,
				   stack_hash_seeded(s, nr, bpf_get_current_pid_tgid() >> 32), known);
}

/* (intern_stack_at is a global function: its hash loop over up to 127 frames is verified once
 * per program, not at each of the six places mem_exit inlined it, where it was ~40% of the
 * instructions the verifier walked: docs/PERFORMANCE.md) */
static __always_inline __u64 intern_stack(struct mem_stack *s, __u64 nr, __u64 known)
{
	__u64 h = intern_stack_at(s, nr, known);

	if (!h)
		drop(MEM_DROP_STACKS_FULL);
	return h;
}

static __always_inline struct mem_site_val *site_of(__u32 pid, __u32 fn, __u64 stack)
{
	struct mem_site_key k = { .pid = pid, .fn = fn, .stack = stack };
	struct mem_site_val *v = bpf_map_lookup_elem(&sites, &k);

	if (v)
		return v;
	bpf_map_update_elem(&sites, &k, &zero_site, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&sites, &k);
	if (!v)
		drop(MEM_DROP_SITES_FULL);
	return v;
}

/*
 * Held accounting. An allocation's or a free's per-site counters (count, bytes, its size or
 * lifetime bucket) and its process's allocation or free counters and calls are not added to
 * the maps at once: the thread holds them, buckets too, in one of HELD_WAYS ways for
 * allocations and as many for frees, one site each, while its next allocations (frees) are at
 * those sites, as a loop's are whatever sizes it asks for (and a loop's few sites: sqlite3's
 * row and its text, alternating), and adds a way's with one site and one process lookup when a
 * site no way holds takes it (the ways in turn), every HELD_EVERY events, when it execs or
 * exits (held_exec, held_exit), and when userspace reads the maps (held_flush_iter, before
 * each snapshot and each final read). This spares most calls the site lookup and most atomic
 * adds; the live counters stay atomic per call (the peak of live bytes needs every step), and
 * inuse values come from the live table. The thread and a flusher on another CPU (userspace's
 * iterator) take turns through held_busy; a thread that finds it taken accounts its call
 * directly.
 */
#define HELD_EVERY 512

static __always_inline bool held_claim(struct mem_tstate *st)
{
	return !__sync_val_compare_and_swap(&st->held_busy, 0, 1);
}

static __always_inline void held_release(struct mem_tstate *st)
{
	asm volatile("" ::: "memory");
	st->held_busy = 0;
}

/* Add to a site (made here if need be: a free whose allocation its thread still holds makes
 * it). Global functions, verified once per program rather than at every call; BPF calls take at
 * most five arguments, so the site's process, function and bucket come packed (SITE_ARG): the
 * size bucket, or the lifetime bucket (MEM_LIFE_BUCKETS: none). */
#define SITE_ARG(pid, fn, b)	((__u64)(pid) << 32 | (__u64)((fn) & 0xff) << 8 | ((b) & 0xff))

__noinline int site_add_allocs(__u64 arg, __u64 stack, __u64 n, __u64 bytes)
{
	__u32 b = arg & 0xff;
	struct mem_site_val *sv = site_of(arg >> 32, (arg >> 8) & 0xff, stack);

	asm volatile("" : "+r"(b));
	if (sv && b < MEM_HIST_BUCKETS) {
		__sync_fetch_and_add(&sv->allocs, n);
		__sync_fetch_and_add(&sv->alloc_bytes, bytes);
		__sync_fetch_and_add(&sv->hist[b], n);
	}
	return 0;
}

__noinline int site_add_frees(__u64 arg, __u64 stack, __u64 n, __u64 bytes, __u64 temps)
{
	__u32 b = arg & 0xff;
	struct mem_site_val *sv = site_of(arg >> 32, (arg >> 8) & 0xff, stack);

	if (!sv)
		return 0;
	__sync_fetch_and_add(&sv->frees, n);
	__sync_fetch_and_add(&sv->free_bytes, bytes);
	if (temps)
		__sync_fetch_and_add(&sv->temps, temps);
	asm volatile("" : "+r"(b));
	if (b < MEM_LIFE_BUCKETS)
		__sync_fetch_and_add(&sv->life[b], n);
	return 0;
}

/* A process's allocation and free counters, and calls (full tracking: sampled modes count
 * calls at entry, in weight units); not its live ones, which move with every call (the peak
 * of live bytes needs every step). Global functions, as site_add_allocs. */
__noinline int proc_add_allocs(struct mem_proc *p, __u32 fn, __u64 n, __u64 bytes, __u64 max)
{
	if (!p)
		return 0;
	__sync_fetch_and_add(&p->alloc_count, n);
	__sync_fetch_and_add(&p->alloc_bytes, bytes);
	atomic_max(&p->max_request, max);
	asm volatile("" : "+r"(fn));
	if (sample_mode == MEM_SAMPLE_NONE && fn < MEM_FN__COUNT)
		__sync_fetch_and_add(&p->calls[fn], n);
	return 0;
}

__noinline int proc_add_frees(struct mem_proc *p, __u32 cfn, __u64 n, __u64 bytes)
{
	if (!p)
		return 0;
	__sync_fetch_and_add(&p->free_count, n);
	__sync_fetch_and_add(&p->free_bytes, bytes);
	asm volatile("" : "+r"(cfn));
	if (sample_mode == MEM_SAMPLE_NONE && cfn < MEM_FN__COUNT)
		__sync_fetch_and_add(&p->calls[cfn], n);
	return 0;
}

/* One step of a flush's buckets: the lowest one left in mask, added to the site's (if any:
 * sizes, or lifetimes with life) and zeroed in the way. */
struct held_hist_ctx {
	struct mem_held *h;
	struct mem_site_val *sv;
	__u64 mask;
	__u32 life;
};

static long held_hist_one(__u64 i, void *data)
{
	struct held_hist_ctx *x = data;
	__u64 low = x->mask & -x->mask;
	__u32 b;

	if (!low)
		return 1;
	x->mask &= ~low;
	b = ilog2(low);
	asm volatile("" : "+r"(b));
	if (b >= MEM_HIST_BUCKETS)
		return 1;
	if (x->sv)
		__sync_fetch_and_add(x->life ? &x->sv->life[b] : &x->sv->hist[b], x->h->b[b]);
	x->h->b[b] = 0;
	return 0;
}

/* Way w's counts into the maps, with held_busy taken (global functions, as site_add_allocs). A
 * way's buckets are one, a loop of one size's, or a few: one bpf_loop step each. */
__noinline int flush_alloc_way(struct mem_tstate *st, __u32 w)
{
	struct held_hist_ctx x = {};
	struct mem_held *h;
	struct mem_proc *p;
	__u32 pid;

	if (!st)	/* a global function's pointer may be NULL, for the verifier */
		return 0;
	h = &st->ha[w & (HELD_WAYS - 1)];
	h->calls = 0;
	if (!h->n)
		return 0;
	pid = h->pid;
	x.h = h;
	x.mask = h->mask;
	x.sv = site_of(pid, h->fn, h->stack);
	if (x.sv) {
		__sync_fetch_and_add(&x.sv->allocs, h->n);
		__sync_fetch_and_add(&x.sv->alloc_bytes, h->bytes);
	}
	/* the buckets are zeroed whether or not they could be added */
	bpf_loop(MEM_HIST_BUCKETS, held_hist_one, &x, 0);
	/* a process no longer in the table (retired) loses them, as its calls would have been */
	p = proc_find(pid);
	if (p)
		proc_add_allocs(p, h->fn, h->n, h->bytes, h->extra);
	h->n = h->bytes = h->extra = h->mask = 0;
	return 0;
}

__noinline int flush_free_way(struct mem_tstate *st, __u32 w)
{
	struct held_hist_ctx x = { .life = 1 };
	struct mem_held *h;
	struct mem_proc *p;
	__u32 pid;

	if (!st)
		return 0;
	h = &st->hf[w & (HELD_WAYS - 1)];
	h->calls = 0;
	if (!h->n)
		return 0;
	pid = h->pid;
	x.h = h;
	x.mask = h->mask;
	x.sv = site_of(pid, h->fn, h->stack);
	if (x.sv) {
		__sync_fetch_and_add(&x.sv->frees, h->n);
		__sync_fetch_and_add(&x.sv->free_bytes, h->bytes);
		if (h->extra)
			__sync_fetch_and_add(&x.sv->temps, h->extra);
	}
	bpf_loop(MEM_LIFE_BUCKETS, held_hist_one, &x, 0);
	p = proc_find(pid);
	if (p)
		proc_add_frees(p, h->cfn, h->n, h->bytes);
	h->n = h->bytes = h->extra = h->mask = 0;
	return 0;
}

/* Add n to bucket b of the thread's way w (of its frees' with life, else its allocations').
 * A global function: a bucket index used inline would keep the verifier's states apart along
 * every branch of its log2, which made loading the programs about three times slower
 * (start-up +90 ms). */
__noinline int held_bucket(struct mem_tstate *st, __u32 w, __u32 b, __u64 n, __u32 life)
{
	struct mem_held *h;

	if (!st)
		return 0;
	h = life ? &st->hf[w & (HELD_WAYS - 1)] : &st->ha[w & (HELD_WAYS - 1)];
	if (b < MEM_HIST_BUCKETS) {
		h->b[b] += n;
		h->mask |= 1ULL << b;
	}
	return 0;
}

static __always_inline bool held_is(const struct mem_held *h, __u32 pid, __u32 fn, __u64 stack,
				    __u32 cfn)
{
	return h->n && h->stack == stack && h->fn == fn && h->pid == pid && h->cfn == cfn;
}

/* The way of ways (ha or hf) that holds (pid, fn, stack, cfn) when it is not the last call's,
 * or with *found false the one to take for it: an empty one, else the next in turn (*next).
 * HELD_WAYS compares, unrolled. Left in *last. */
static __always_inline void held_way_pick(struct mem_held *ways, __u32 *next, __u32 *last,
					  __u32 pid, __u32 fn, __u64 stack, __u32 cfn, bool *found)
{
	__u32 empty = HELD_WAYS;

#pragma unroll
	for (__u32 w = 0; w < HELD_WAYS; w++) {
		if (!ways[w].n) {
			if (empty == HELD_WAYS)
				empty = w;
			continue;
		}
		if (held_is(&ways[w], pid, fn, stack, cfn)) {
			*last = w;
			return;
		}
	}
	*found = false;
	if (empty < HELD_WAYS)
		*last = empty;
	else
		*last = (*next)++ & (HELD_WAYS - 1);
}

/* The way of ways that holds (pid, fn, stack, cfn), or with *found false the one to take for
 * it. The last call's way (*last) first: a loop at one site compares once. Else
 * held_way_pick's way, read back from *last (the thread's state, which nothing else writes
 * while the caller holds its claim): each of the pick's ways is a constant to the verifier, a
 * state of its own through all the caller's code after it (its way's pointer, its counts);
 * read from memory it is one unknown index, as the last call's is, and the paths join
 * (mem_exit 33,926 -> 28,786 instructions verified, mem_enter 7,377 -> 6,521). One load more,
 * past the last call's way only. */
static __always_inline __u32 held_way(struct mem_held *ways, __u32 *next, __u32 *last, __u32 pid,
				      __u32 fn, __u64 stack, __u32 cfn, bool *found)
{
	__u32 l = *last & (HELD_WAYS - 1);

	*found = true;
	if (held_is(&ways[l], pid, fn, stack, cfn))
		return l;
	held_way_pick(ways, next, last, pid, fn, stack, cfn, found);
	return *(volatile __u32 *)last & (HELD_WAYS - 1);
}

/* Every way (site and process counters), from outside the hot path (exec, exit, userspace's
 * iterator). */
static __always_inline void flush_slots(struct mem_tstate *st)
{
	if (!held_claim(st))
		return;
	for (__u32 w = 0; w < HELD_WAYS; w++) {
		flush_alloc_way(st, w);
		flush_free_way(st, w);
	}
	held_release(st);
}

/* An allocation's site and process counters (not the live ones): held while the thread's
 * allocations stay at the sites its ways hold. */
static __always_inline void hold_alloc(struct mem_tstate *st, struct mem_proc *p, __u32 pid,
				       __u32 fn, __u64 stack, __u64 size, __u64 cnt, __u64 bytes)
{
	__u32 b = log2_bucket(size), w;
	struct mem_held *h;
	bool found;

	if (!held_claim(st)) {
		/* a flusher has the thread's counts just now: this call is added at once */
		site_add_allocs(SITE_ARG(pid, fn, b), stack, cnt, bytes);
		proc_add_allocs(p, fn, cnt, bytes, size);
		return;
	}
	w = held_way(st->ha, &st->ha_next, &st->ha_last, pid, fn, stack, 0, &found);
	h = &st->ha[w & (HELD_WAYS - 1)];
	if (h->n && (!found || h->calls >= HELD_EVERY))
		flush_alloc_way(st, w);
	if (!h->n) {
		h->pid = pid;
		h->fn = fn;
		h->stack = stack;
		h->cfn = 0;
	}
	h->calls++;
	h->n += cnt;
	h->bytes += bytes;
	held_bucket(st, w, b, cnt, 0);
	if (size > h->extra)
		h->extra = size;
	held_release(st);
}

/* A request larger than any before in its process: its site and time. Only calls that raise
 * the maximum get here, so this is rare and may take a claim. A thread that finds another
 * recording its own raise retries a few times, then leaves the record to it: largest_size is
 * then the size of the request whose stack is kept, below max_request. */
static __always_inline void note_largest(struct mem_proc *p, __u32 fn, __u64 stack, __u64 size,
					 __u64 ts)
{
	for (int i = 0; i < 4; i++) {
		if (__sync_val_compare_and_swap(&p->largest_busy, 0, 1))
			continue;
		if (size > p->largest_size) {
			p->largest_size = size;
			p->largest_stack = stack;
			p->largest_ts = ts;
			p->largest_fn = fn;
		}
		asm volatile("" ::: "memory");
		p->largest_busy = 0;
		return;
	}
}

/* What a tracked block stands for: one allocation of its size, or in sampled modes its weight
 * (MEM_WEIGHT_ONE units) and size * weight bytes. */
static __always_inline __u64 blk_count(const struct mem_live_val *lv)
{
	return sample_mode == MEM_SAMPLE_NONE ? 1 : lv->weight;
}

static __always_inline __u64 blk_bytes(const struct mem_live_val *lv)
{
	if (sample_mode == MEM_SAMPLE_NONE)
		return lv->size;
	return (lv->size * lv->weight) >> MEM_WEIGHT_SHIFT;
}

/* A free's live process counters (every call: the peak needs every step). */
static __always_inline void free_live(struct mem_proc *p, __u64 cnt, __u64 bytes)
{
	__sync_fetch_and_add(&p->live_count, -cnt);
	__sync_fetch_and_add(&p->live_bytes, -bytes);
}

/* Account a tracked block as freed: its site, its process. `temp`: it is a temporary (freed
 * before its thread allocated again, heaptrack's rule, or within temp_ns). life_ns: its
 * lifetime, or ~0 if the free was not seen as such (a block retired because its address was
 * handed out again). cfn: the freeing function, whose call this is; MEM_FN__COUNT: none (a
 * realloc's, a retired block, or sampled modes, which count calls themselves). */
static __always_inline void account_free(__u32 pid, struct mem_proc *p,
					 const struct mem_live_val *lv, bool temp, __u64 life_ns,
					 __u32 cfn)
{
	__u64 cnt = blk_count(lv), bytes = blk_bytes(lv);

	site_add_frees(SITE_ARG(pid, lv->fn,
				life_ns != ~0ULL ? log2_bucket(life_ns) : MEM_LIFE_BUCKETS),
		       lv->stack, cnt, bytes, temp ? cnt : 0);
	proc_add_frees(p, cfn, cnt, bytes);
	free_live(p, cnt, bytes);
}

/* account_free by a thread with state: all but the live counters held (hold_alloc's twin). */
static __always_inline void hold_free(struct mem_tstate *st, __u32 pid, struct mem_proc *p,
				      const struct mem_live_val *lv, bool temp, __u64 life_ns,
				      __u32 cfn)
{
	__u64 cnt = blk_count(lv), bytes = blk_bytes(lv);
	__u32 b = log2_bucket(life_ns), w;
	struct mem_held *h;
	bool found;

	if (!held_claim(st)) {
		account_free(pid, p, lv, temp, life_ns, cfn);
		return;
	}
	w = held_way(st->hf, &st->hf_next, &st->hf_last, pid, lv->fn, lv->stack, cfn, &found);
	h = &st->hf[w & (HELD_WAYS - 1)];
	if (h->n && (!found || h->calls >= HELD_EVERY))
		flush_free_way(st, w);
	if (!h->n) {
		h->pid = pid;
		h->fn = lv->fn;
		h->stack = lv->stack;
		h->cfn = cfn;
	}
	h->calls++;
	h->n += cnt;
	h->bytes += bytes;
	held_bucket(st, w, b, cnt, 1);
	if (temp)
		h->extra += cnt;
	held_release(st);
	free_live(p, cnt, bytes);
}

/*
 * The live table: open addressing in an array map, one cache line per slot. A block's home slot
 * is a hash of its process and address; it lies in the first empty slot of the MEM_LIVE_PROBE
 * from there (none empty: a counted drop), and the home slot counts the blocks of its own that
 * lie further on (over), so that a lookup whose home holds another block and counts none stops
 * there: most operations touch one cache line, without a lock. A slot is claimed by
 * compare-and-swap of its state (MEM_LIVE_EMPTY or MEM_LIVE -> MEM_LIVE_BUSY), filled or read,
 * and released (MEM_LIVE, or MEM_LIVE_EMPTY); the claim of a live block is checked against its
 * key again (the slot may have been emptied and filled with another block between the read and
 * the claim). Two racing frees of one pointer (a double free): only the one that claims it
 * counts. Userspace reads and empties the slots of a finished process through a mapping.
 */
static __always_inline __u64 live_hash(__u32 pid, __u64 ptr)
{
	__u64 x = ptr ^ ((__u64)pid << 47);

	/* a 64-bit finalizer: every bit of the key reaches the low bits that pick the slot */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static __always_inline struct mem_live_slot *live_slot(__u64 i)
{
	__u32 k = i & live_mask;

	return bpf_map_lookup_elem(&live, &k);
}

static __always_inline bool live_is(const struct mem_live_slot *s, __u32 pid, __u64 ptr)
{
	return s->state == MEM_LIVE && s->ptr == ptr && s->pid == pid;
}

/* Slot i (claimed empty by pid, about to be filled) is in a page that holds a block of pid's
 * set: marked after the claim, so that userspace, clearing the mark and then reading the page's
 * states, either sees the claim or the mark set again (abi/mem.h). A process's marks are a few
 * pages at most, so their loads hit the caches and the TLB (a mark a page in a 256 KiB array
 * cost the working set's free ~100 ns: a page walk); the bit is set by an atomic or, only when
 * it is clear. */
static __always_inline void live_mark(__u32 pid, __u64 i)
{
	/* the words of pid's set of marks (abi/mem.h): each set the table's pages' bits */
	__u32 k = (pid & (MEM_LIVE_MARK_SETS - 1)) * ((live_mask >> MEM_LIVE_WORD_SHIFT) + 1) +
		  ((i & live_mask) >> MEM_LIVE_WORD_SHIFT);
	__u64 bit = 1ULL << (((i & live_mask) >> MEM_LIVE_PAGE_SHIFT) & 63);
	__u64 *m = bpf_map_lookup_elem(&live_used, &k);

	if (m && !(*(volatile __u64 *)m & bit))
		__sync_fetch_and_or(m, bit);
}

/* Load (pid, ptr)'s home slot, for nothing but to have its line on the way (a prefetch) */
static __always_inline void live_touch(__u32 pid, __u64 ptr)
{
	struct mem_live_slot *s = live_slot(live_hash(pid, ptr));
	__u32 v;

	if (!s)
		return;
	v = *(volatile __u32 *)&s->state;
	asm volatile("" : : "r"(v));
}

/* Where (pid, ptr)'s live block lies: its slot's index, and how far that is past its home slot
 * above bit 32; -1: not there. A global function, verified once (the probe loop inlined at each
 * use made loading the programs slower by ~0.5 s). */
__noinline long live_find_at(__u32 pid, __u64 ptr)
{
	__u64 h = live_hash(pid, ptr);
	struct mem_live_slot *hs = live_slot(h), *s;

	if (!hs)
		return -1;
	if (live_is(hs, pid, ptr))
		return h & live_mask;
	if (!hs->over)
		return -1;
	for (int i = 1; i < MEM_LIVE_PROBE; i++) {
		s = live_slot(h + i);
		if (!s)
			return -1;
		if (live_is(s, pid, ptr))
			return (long)((h + i) & live_mask) | (long)i << 32;
	}
	return -1;
}

/* The slot of (pid, ptr) if it holds a live block; *home: its home slot if that is another. */
static __always_inline struct mem_live_slot *live_find(__u32 pid, __u64 ptr,
						       struct mem_live_slot **home)
{
	long at = live_find_at(pid, ptr);
	__u32 dist;

	*home = NULL;
	if (at < 0)
		return NULL;
	dist = (__u64)at >> 32;
	if (dist)
		*home = live_slot((__u32)at - dist);
	return live_slot((__u32)at);
}

/* Claim the live block at s, still (pid, ptr)'s. */
static __always_inline bool live_claim(struct mem_live_slot *s, __u32 pid, __u64 ptr)
{
	if (__sync_val_compare_and_swap(&s->state, MEM_LIVE, MEM_LIVE_BUSY) != MEM_LIVE)
		return false;
	if (s->ptr == ptr && s->pid == pid)
		return true;
	asm volatile("" ::: "memory");
	s->state = MEM_LIVE;
	return false;
}

/* A claimed block's values. */
static __always_inline void live_copy(const struct mem_live_slot *s, struct mem_live_val *v)
{
	v->size = s->size;
	v->stack = s->stack;
	v->ts = s->ts;
	v->fn = s->fn;
	v->weight = s->weight;
}

/* Copy a claimed block's values out and empty its slot. */
static __always_inline void live_take(struct mem_live_slot *s, struct mem_live_slot *home,
				      struct mem_live_val *v)
{
	live_copy(s, v);
	asm volatile("" ::: "memory");
	s->state = MEM_LIVE_EMPTY;
	if (home)
		__sync_fetch_and_add(&home->over, -1);
}

static __always_inline void live_fill(struct mem_live_slot *s, __u32 pid, __u64 ptr,
				      const struct mem_live_val *lv)
{
	s->pid = pid;
	s->ptr = ptr;
	s->size = lv->size;
	s->stack = lv->stack;
	s->ts = lv->ts;
	s->fn = lv->fn;
	s->weight = lv->weight;
	asm volatile("" ::: "memory");
	s->state = MEM_LIVE;
}

/* The first empty slot of the window from h, as an offset; MEM_LIVE_PROBE: none. */
__noinline __u32 live_empty_at(__u64 h)
{
	struct mem_live_slot *s;
	__u32 i;

	for (i = 0; i < MEM_LIVE_PROBE; i++) {
		s = live_slot(h + i);
		if (!s || s->state == MEM_LIVE_EMPTY)
			break;
	}
	return i;
}

/* Track (pid, ptr) as lv. 0: tracked; 1: tracked, and the address was live already (handed out
 * twice without a free we saw): *old is that block's, retired; -1: no empty slot in the window.
 * A global function, as live_find_at. */
__noinline int live_put(__u32 pid, __u64 ptr, const struct mem_live_val *lv,
			struct mem_live_val *old)
{
	__u64 h = live_hash(pid, ptr);
	struct mem_live_slot *hs, *s;
	long at;
	__u32 i;

	if (!lv || !old)
		return -1;
	/* the common case first: an empty home slot that no block of its own lies past holds
	 * nothing of (pid, ptr)'s and takes it (a block is only ever put by the thread its
	 * allocator handed it to, so no other can put the same one meanwhile) */
	hs = live_slot(h);
	if (!hs)
		return -1;
	if (hs->state == MEM_LIVE_EMPTY && !hs->over &&
	    __sync_val_compare_and_swap(&hs->state, MEM_LIVE_EMPTY, MEM_LIVE_BUSY) ==
	    MEM_LIVE_EMPTY) {
		live_mark(pid, h);
		hs->dist = 0;
		live_fill(hs, pid, ptr, lv);
		return 0;
	}
	at = live_find_at(pid, ptr);
	if (at >= 0) {
		s = live_slot((__u32)at);
		if (s && live_claim(s, pid, ptr)) {
			live_copy(s, old);
			/* the same slot, still claimed, refilled: its place in the window stays */
			live_fill(s, pid, ptr, lv);
			return 1;
		}
	}
	/* the first empty slot of the window; if another thread takes it first, once more */
	for (int round = 0; round < 2; round++) {
		i = live_empty_at(h);
		if (i >= MEM_LIVE_PROBE)
			return -1;
		s = live_slot(h + i);
		if (!s)
			return -1;
		if (__sync_val_compare_and_swap(&s->state, MEM_LIVE_EMPTY, MEM_LIVE_BUSY) ==
		    MEM_LIVE_EMPTY)
			goto claimed;
	}
	return -1;
claimed:
	live_mark(pid, h + i);
	s->dist = i;
	if (i)
		__sync_fetch_and_add(&hs->over, 1);
	live_fill(s, pid, ptr, lv);
	return 0;
}

/* A free that missed, in a forked child: of a block it inherited if its parent still holds one
 * at ptr that it allocated before the child was made (the task's start; a block the parent
 * allocated at that address after the fork is another). Read, never claimed: the parent's
 * block stays the parent's. */
static __always_inline bool free_inherited(struct mem_proc *p, __u64 ptr, __u64 *bytes)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct mem_live_slot *s, *home;
	__u32 parent = p->parent;
	__u64 born, size, ts;

	s = live_find(parent, ptr, &home);
	if (!s)
		return false;
	size = s->size;
	ts = s->ts;
	asm volatile("" ::: "memory");
	/* still that block (the parent may have freed it meanwhile) */
	if (!live_is(s, parent, ptr))
		return false;
	born = BPF_CORE_READ(task, group_leader, start_time);
	if (ts >= born)
		return false;
	__sync_fetch_and_add(&p->inherited_frees, 1);
	__sync_fetch_and_add(&p->inherited_bytes, size);
	*bytes = size;
	return true;
}

/* Forget ptr if tracked. st: the freeing thread's state, if it has any; cfn: as account_free's
 * (when it returns true, that call is counted). Returns whether it was tracked. */
static __always_inline bool free_block(__u32 pid, struct mem_proc *p, __u64 ptr,
				       struct mem_tstate *st, __u32 cfn, __u64 now)
{
	struct mem_live_slot *s, *home;
	struct mem_live_val copy;
	__u64 life;
	bool temp;

	/* full tracking: the clock first, while no load of the table is in flight (its lfence
	 * waits for them: read after the slot's, it cost the working set ~50 ns a free); sampled
	 * modes find most frees untracked, and read it only for the tracked ones */
	if (sample_mode == MEM_SAMPLE_NONE && !now)
		now = bpf_ktime_get_ns();
	s = live_find(pid, ptr, &home);
	if (!s) {
		/* sampled modes: a block that was not sampled */
		if (sample_mode == MEM_SAMPLE_NONE) {
			__u64 bytes = 0;
			bool inh;

			__sync_fetch_and_add(&p->unknown_frees, 1);
			inh = p->parent && free_inherited(p, ptr, &bytes);
			if (trace_calls && st) {
				st->inherited = inh;
				st->inherited_size = bytes;
			}
		}
		return false;
	}
	/* of two racing frees of one pointer (a double free), only the one that claims it
	 * counts */
	if (!live_claim(s, pid, ptr))
		return false;
	live_take(s, home, &copy);
	temp = st && st->last_ptr == ptr;
	if (temp)
		st->last_ptr = 0;
	if (!now)
		now = bpf_ktime_get_ns();
	life = now > copy.ts ? now - copy.ts : 0;
	if (temp_ns)
		temp = life < temp_ns;
	if (st)
		hold_free(st, pid, p, &copy, temp, life, cfn);
	else
		account_free(pid, p, &copy, temp, life, cfn);
	return true;
}

/* A realloc's (rallocx's) free of its old block, st->arg: free_block as a global function,
 * verified once; inlined at finish_call's three places (and the sampled exit's), it was
 * verified again at each, in each state the return probe's branches reached it with (mem_exit
 * 28,786 -> 25,181 instructions). The call it costs is on a realloc's path only, not on a
 * free's. */
__noinline int realloc_free(__u32 pid, struct mem_proc *p, struct mem_tstate *st)
{
	if (!p || !st)
		return 0;
	return free_block(pid, p, st->arg, st, MEM_FN__COUNT, 0);
}

struct stall_ctx {
	__u64 until;
};

static long stall_spin(__u64 i, void *data)
{
	struct stall_ctx *x = data;

	return test_go || bpf_ktime_get_ns() > x->until;
}

static long stall_round(__u64 i, void *data)
{
	struct stall_ctx *x = data;

	bpf_loop(1 << 20, stall_spin, x, 0);
	return test_go || bpf_ktime_get_ns() > x->until;
}

/* (tests only: test_stall_size) */
static __always_inline void test_stall(__u64 size)
{
	struct stall_ctx x;

	if (!test_stall_size || size != test_stall_size ||
	    __sync_val_compare_and_swap(&test_stalled, 0, 1))
		return;
	x.until = bpf_ktime_get_ns() + 5000000000ULL;
	bpf_loop(1 << 10, stall_round, &x, 0);
}

/* Returns whether the call was counted (its calls[] too): not when its size is filtered out. */
static __always_inline bool record_alloc(void *ctx, struct mem_tstate *st, __u32 pid,
					 struct mem_proc *p, __u32 fn, __u64 ptr, __u64 size)
{
	struct mem_live_val lv = { .size = size, .fn = fn };
	struct mem_live_val old;
	__u64 live_bytes, cnt, bytes;
	int err;

	if (size < min_size || size > max_size)
		return false;

	/* the clock before the stack walk's loads (see free_block) */
	lv.ts = bpf_ktime_get_ns();
	live_touch(pid, ptr);
	lv.stack = capture_stack(ctx, st);
	if (sample_mode != MEM_SAMPLE_NONE)
		lv.weight = st->weight;
	cnt = blk_count(&lv);
	bytes = blk_bytes(&lv);

	hold_alloc(st, p, pid, fn, lv.stack, size, cnt, bytes);
	if (!test_stall_entry)
		test_stall(size);
	if (size > p->largest_size)
		note_largest(p, fn, lv.stack, size, lv.ts);

	err = live_put(pid, ptr, &lv, &old);
	if (err > 0)
		/* a pointer handed out twice without a free we saw (freed by a path we do not
		 * probe): the old block is retired so live counts stay true */
		account_free(pid, p, &old, false, ~0ULL, MEM_FN__COUNT);
	if (err < 0) {
		/* untracked: it can never be matched by its free, so it never counts as live */
		drop(MEM_DROP_LIVE_FULL);
		site_add_frees(SITE_ARG(pid, fn, MEM_LIFE_BUCKETS), lv.stack, cnt, bytes, 0);
		return true;
	}
	st->last_ptr = ptr;
	__sync_fetch_and_add(&p->live_count, cnt);
	live_bytes = __sync_fetch_and_add(&p->live_bytes, bytes) + bytes;
	if (live_bytes > p->peak_live_bytes) {
		atomic_max(&p->peak_live_bytes, live_bytes);
		p->peak_ts = lv.ts;
	}
	return true;
}

static __always_inline bool is_free_fn(__u32 fn)
{
	return fn == MEM_FN_FREE || fn == MEM_FN_OPERATOR_DELETE ||
	       fn == MEM_FN_OPERATOR_DELETE_ARRAY || fn == MEM_FN_DALLOCX || fn == MEM_FN_SDALLOCX;
}

/* Count a call of an aliased entry-only probe under its caller's return address: 1, or in
 * sampled modes the freed block's weight (the unit of calls[] there). */
static __always_inline void count_caller(struct pt_regs *ctx, __u32 pid, __u32 fn, __u64 one)
{
	struct mem_caller_key k = { .pid = pid, .fn = fn };
	__u64 *n;

	if (bpf_probe_read_user(&k.ret, sizeof(k.ret), (void *)PT_REGS_SP(ctx)))
		k.ret = 0;
	n = bpf_map_lookup_elem(&callers, &k);
	if (n) {
		__sync_fetch_and_add(n, one);
		return;
	}
	if (bpf_map_update_elem(&callers, &k, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(&callers, &k);
		if (n)
			__sync_fetch_and_add(n, one);
		else
			drop(MEM_DROP_CALLERS_FULL);
	}
}

/* --trace: a free's stack, taken at its entry: its caller's return address (at sp: the frame
 * pointer chain would miss it), then the caller's chain. The shape of an allocation's, whose
 * first address is the return address at its return probe. */
static __always_inline __u64 trace_free_stack(struct pt_regs *ctx, struct mem_tstate *st)
{
	__u64 ret = 0;

	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx)) || !ret) {
		drop(MEM_DROP_STACK_FAIL);
		return 0;
	}
	return walk_intern(&st->stack, ret, PT_REGS_SP(ctx) + 8, PT_REGS_FP(ctx),
			   PT_REGS_SP(ctx) + 8, 0);
}

/* --mmap: st's thread is in a free (or delete) whose stack pointer at entry is sp. Free has an
 * entry probe only, so nothing says when it returns: the return address at sp, read here, is
 * what map_from_free looks for in a system call's stack. */
static __always_inline void note_free(struct mem_tstate *st, __u64 sp)
{
	struct frame_rec f = {};

	if (!track_maps || !st)
		return;
	/* read_frame: a read into a small frame on the kernel stack, the cheap usercopy check;
	 * the record below sp is [the word under the return address, the return address] */
	read_frame(sp - 8, &f);
	st->mfree_sp = sp;
	st->mfree_ra = f.ret;
}

/* Whether a system call made at stack pointer sp may be made inside the thread's last free:
 * below that free's frame, and its return address still in its slot. Only a hint, the cheap
 * test before map_from_free's: once free has returned, the slot may be left as it was (a
 * later frame's unwritten local). */
static __always_inline bool map_below_free(struct mem_tstate *st, __u64 sp)
{
	struct frame_rec f = {};

	if (!st || !st->mfree_ra || sp >= st->mfree_sp)
		return false;
	return !read_frame(st->mfree_sp - 8, &f) && f.ret == st->mfree_ra;
}

/*
 * free, operator delete (every variant), dallocx, sdallocx: entry probes only. The nesting rule
 * without a return probe: a free-like call is the inner free of the thread's previous traced
 * call (libstdc++'s operator delete calling free, its sized delete tail-calling the unsized one,
 * mimalloc's sized delete calling mi_free) when that call freed the same pointer, nothing traced
 * happened on the thread in between, it is another function (another probe address) and its
 * stack pointer is at or below that call's (a callee's, or a tail call's). It is not counted
 * again. The same pointer freed again by another function at or below that frame with nothing
 * traced in between would be a double free, or a reused address handed over by another thread
 * and freed without this thread doing any traced call meanwhile: that free is not counted.
 */
static __always_inline int free_enter(struct pt_regs *ctx, __u32 pid, struct mem_proc *p,
				      __u32 fn, __u64 cookie, __u64 now)
{
	__u64 ptr = PT_REGS_PARM1(ctx), sp = PT_REGS_SP(ctx), ip;
	struct mem_tstate *st;

	if (!ptr)
		return 0;
	/* delete may lead to free: keep a mark; a plain free needs state only if it has some
	 * (with --mmap it notes where it is) */
	st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0,
				  fn == MEM_FN_FREE && !track_maps ? 0 :
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	note_free(st, sp);
	/* --trace: a free's record needs the thread's scratch buffer for its stack */
	if (trace_calls && !st)
		st = thread_state(bpf_get_current_task_btf());
	/* free called by a traced function (realloc(p, 0) frees internally) is its business */
	if (st && st->depth)
		return 0;
	if (st) {
		ip = bpf_get_func_ip(ctx);
		if (st->free_mark == ptr && sp <= st->free_mark_sp && ip != st->free_mark_ip)
			return 0;
		st->free_mark = ptr;
		st->free_mark_sp = sp;
		st->free_mark_ip = ip;
		st->new_fn = 0;		/* any traced event spends an operator new's mark */
	}
	if (cookie & MEM_COOKIE_CALLER)
		count_caller(ctx, pid, fn, 1);
	/* a tracked block's free counts its call with it (held with the site's counts) */
	if (trace_calls && st)
		st->inherited = 0;
	if (!free_block(pid, p, ptr, st, fn, now)) {
		__sync_fetch_and_add(&p->calls[fn], 1);
		if (trace_calls && st)
			trace_emit(fn, st->inherited ? MEM_TRACE_INHERITED : MEM_TRACE_UNKNOWN,
				   st->inherited ? st->inherited_size : 0, ptr, 0,
				   trace_free_stack(ctx, st));
		return 0;
	}
	if (trace_calls && st)
		trace_emit(fn, MEM_TRACE_OK, 0, ptr, 0, trace_free_stack(ctx, st));
	return 0;
}

/* The process's entry; with trace_all, created at its first call: the first empty slot of its
 * window taken by compare-and-swap (two threads of one new process race for the same slot, the
 * first empty one, and the loser takes the winner's entry). */
__noinline long proc_make(__u32 pid)
{
	struct mem_proc *s;
	__u32 old;

	if (__sync_fetch_and_add(&procs_used, 1) < max_procs) {
		for (int i = 0; i < MEM_PROC_PROBE; i++) {
			s = proc_slot(pid + i);
			if (!s)
				break;
			old = s->pid;
			if (old == pid)
				goto made;	/* by another thread */
			if (old)
				continue;
			old = __sync_val_compare_and_swap(&s->pid, 0, pid);
			if (!old)
				return (pid + i) & procs_mask;
			if (old == pid)
				goto made;
		}
	}
made:
	__sync_fetch_and_add(&procs_used, -1);
	return proc_find_at(pid);
}

/* -a: the current process's name and the start of its arguments into its entry (abi/mem.h),
 * at the entry's making and at an exec: what names a process userspace sees only once it is
 * gone, and the new program's after an exec, which userspace learns of by execs */
static __always_inline void proc_name(struct mem_proc *p)
{
	struct task_struct *task = bpf_get_current_task_btf();
	unsigned long lo = BPF_CORE_READ(task, mm, arg_start);
	unsigned long hi = BPF_CORE_READ(task, mm, arg_end);
	__u32 n = hi > lo ? hi - lo : 0;

	bpf_get_current_comm(p->comm, sizeof(p->comm));
	if (n > MEM_PROC_CMDLINE - 1)
		n = MEM_PROC_CMDLINE - 1;
	n &= MEM_PROC_CMDLINE - 1;
	if (!n || bpf_probe_read_user(p->cmdline, n, (const void *)lo))
		n = 0;
	p->cmdline_len = n;
}

static __always_inline struct mem_proc *proc_of(__u32 pid)
{
	struct mem_proc *p = proc_find(pid);
	long at;

	if (p || !trace_all || pid == self_tgid)
		return p;
	at = proc_make(pid);
	p = at < 0 ? NULL : proc_slot((__u32)at);
	if (!p)
		drop(MEM_DROP_PROCS_FULL);
	else if (pid == bpf_get_current_pid_tgid() >> 32)
		proc_name(p);
	return p;
}

/* The requested size of a call at its entry; *arg: realloc's old pointer, posix_memalign's
 * result pointer. */
static __always_inline __u64 request_of(struct pt_regs *ctx, __u32 fn, __u64 *arg)
{
	switch (fn) {
	case MEM_FN_CALLOC:
		return PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
	case MEM_FN_REALLOC:
		*arg = PT_REGS_PARM1(ctx);
		return PT_REGS_PARM2(ctx);
	case MEM_FN_REALLOCARRAY:
		*arg = PT_REGS_PARM1(ctx);
		return PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
	case MEM_FN_RALLOCX:		/* rallocx(ptr, size, flags) */
		*arg = PT_REGS_PARM1(ctx);
		return PT_REGS_PARM2(ctx);
	case MEM_FN_ALIGNED_ALLOC:
	case MEM_FN_MEMALIGN:
		return PT_REGS_PARM2(ctx);
	case MEM_FN_POSIX_MEMALIGN:
		*arg = PT_REGS_PARM1(ctx);
		return PT_REGS_PARM3(ctx);
	default:	/* malloc, valloc, pvalloc, every operator new (size first), mallocx */
		return PT_REGS_PARM1(ctx);
	}
}

/* Entry of an entry-only operator new (MEM_COOKIE_NEW): remember it for its inner allocation.
 * Inside another traced call it is that call's business; inside an outer new (new[] and nothrow
 * new call or tail-call plain new, at or below its stack pointer) the outer one's mark stands. */
static __always_inline int new_enter(struct pt_regs *ctx, __u32 fn)
{
	struct mem_tstate *st = thread_state(bpf_get_current_task_btf());
	__u64 sp = PT_REGS_SP(ctx), ret = 0;

	if (!st)
		return 0;
	if (st->depth || (st->new_fn && sp <= st->new_sp))
		return 0;
	st->free_mark = 0;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		ret = 0;
	st->new_fn = fn + 1;
	st->new_size = PT_REGS_PARM1(ctx);
	st->new_sp = sp;
	st->new_fp = PT_REGS_FP(ctx);
	st->new_ret = ret;
	return 0;
}

/* At an outermost allocation call's entry: if it is the inner call of a marked operator new
 * (the thread's next traced event, deeper on the stack), it counts as that new: returns new's
 * function and sets *size; else fn. The mark is spent either way. */
static __always_inline __u32 take_new_mark(struct pt_regs *ctx, struct mem_tstate *st, __u32 fn,
					   __u64 *size, __u64 *arg)
{
	__u32 nf = st->new_fn;

	st->caller_ret = 0;
	if (!nf)
		return fn;
	st->new_fn = 0;
	if (PT_REGS_SP(ctx) >= st->new_sp || nf > MEM_FN__COUNT)
		return fn;
	*size = st->new_size;
	*arg = 0;
	st->caller_ret = st->new_ret;
	st->caller_fp = st->new_fp;
	st->caller_sp = st->new_sp;
	return nf - 1;
}

#include "mem_sample.bpf.h"

SEC("uprobe")
int mem_enter(struct pt_regs *ctx)
{
	__u32 pid, fn;
	__u64 cookie;
	struct mem_tstate *st;
	struct mem_proc *p;
	__u64 size, arg = 0;

	if (quiescing)
		return 0;
	/* sampled modes: no process lookup before a call is known to be sampled */
	if (sample_mode == MEM_SAMPLE_BYTES || sample_mode == MEM_SAMPLE_EVERY)
		return enter_sampled(ctx);
	cookie = bpf_get_attach_cookie(ctx);
	fn = (__u32)cookie;
	/* the verifier must see the bound on the very register that indexes calls[] */
	asm volatile("" : "+r"(fn));
	if (fn >= MEM_FN__COUNT)
		return 0;
	if (is_free_fn(fn)) {
		/* the clock first (see free_block), then the block's slot is asked for, so that
		 * its cache miss (a table of many live blocks) overlaps the work before its use */
		__u64 now = bpf_ktime_get_ns();

		pid = bpf_get_current_pid_tgid() >> 32;
		live_touch(pid, PT_REGS_PARM1(ctx));
		p = proc_of(pid);
		return p ? free_enter(ctx, pid, p, fn, cookie, now) : 0;
	}
	/* An allocation's entry needs no process lookup: the links' pid filter picked the
	 * process, the call is counted at its return (finish_call), where a process untraced
	 * meanwhile is skipped. With -a the process's entry is made at its first call. */
	if (trace_all && !proc_of(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (cookie & MEM_COOKIE_NEW)
		return new_enter(ctx, fn);

	st = thread_state(bpf_get_current_task_btf());
	if (!st)
		return 0;
	st->free_mark = 0;
	if (st->depth++)
		return 0;

	size = request_of(ctx, fn, &arg);
	fn = take_new_mark(ctx, st, fn, &size, &arg);
	asm volatile("" : "+r"(fn));
	if (fn >= MEM_FN__COUNT)
		return 0;
	st->fn = fn;
	st->size = size;
	st->arg = arg;
	if (test_stall_entry)
		test_stall(size);
	return 0;
}

/* A failed call: counted per process and at its site (rare, so its stack is worth taking). */
static __always_inline void record_failure(void *ctx, struct mem_tstate *st, __u32 pid,
					   struct mem_proc *p, __u32 fn)
{
	struct mem_site_val *sv;
	__u64 cnt = sample_mode == MEM_SAMPLE_NONE ? 1 : st->weight;

	__sync_fetch_and_add(&p->failed, cnt);
	sv = site_of(pid, fn, capture_stack(ctx, st));
	if (sv)
		__sync_fetch_and_add(&sv->failed, cnt);
}

/* The outermost call returned ret: account it. Its call is counted with the allocation when
 * that is tracked (record_alloc, held), else here; sampled modes counted it at entry. */
static __always_inline int finish_call(struct pt_regs *ctx, struct mem_tstate *st, __u32 pid,
				       struct mem_proc *p, __u64 ret)
{
	__u64 ptr = ret;
	__u32 fn;

	fn = st->fn;
	asm volatile("" : "+r"(fn));
	if (fn >= MEM_FN__COUNT)
		return 0;
	switch (fn) {
	case MEM_FN_POSIX_MEMALIGN:
		if ((int)ret != 0 ||
		    bpf_probe_read_user(&ptr, sizeof(ptr), (void *)st->arg) || !ptr) {
			record_failure(ctx, st, pid, p, fn);
			goto count;
		}
		break;
	case MEM_FN_REALLOC:
	case MEM_FN_REALLOCARRAY:
		if (!ret) {
			/* glibc: realloc(p, 0) frees p and returns NULL; any other NULL is a failure
			 * that leaves p untouched */
			if (st->size == 0 && st->arg)
				realloc_free(pid, p, st);
			else
				record_failure(ctx, st, pid, p, fn);
			goto count;
		}
		if (st->arg)
			realloc_free(pid, p, st);
		break;
	case MEM_FN_RALLOCX:
		/* NULL is a failure that leaves the old block alone (size 0 is undefined) */
		if (!ret) {
			record_failure(ctx, st, pid, p, fn);
			goto count;
		}
		realloc_free(pid, p, st);
		break;
	default:
		if (!ret) {
			record_failure(ctx, st, pid, p, fn);
			goto count;
		}
		break;
	}
	if (record_alloc(ctx, st, pid, p, fn, ptr, st->size))
		return 0;
count:
	if (sample_mode == MEM_SAMPLE_NONE)
		__sync_fetch_and_add(&p->calls[fn], 1);
	return 0;
}

/* --trace: the record of the outermost call finish_call accounted, its result told again from
 * the return value (apart, so that finish_call is the same code with --trace or without). */
static __always_inline void trace_exit(struct pt_regs *ctx, struct mem_tstate *st, __u64 ret)
{
	__u32 fn = st->fn, result = ret ? MEM_TRACE_OK : MEM_TRACE_FAILED;
	__u64 ptr = ret;

	if (fn >= MEM_FN__COUNT)
		return;
	if (fn == MEM_FN_POSIX_MEMALIGN) {
		ptr = 0;
		if ((int)ret != 0 || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)st->arg))
			ptr = 0;
		result = ptr ? MEM_TRACE_OK : MEM_TRACE_FAILED;
	} else if ((fn == MEM_FN_REALLOC || fn == MEM_FN_REALLOCARRAY) && !ret && !st->size &&
		   st->arg) {
		result = MEM_TRACE_FREED;
	}
	/* mem_exit cleared last_stack: set, it is this call's; else (its size filtered out,
	 * realloc's free) the call took none */
	if (!st->last_stack)
		capture_stack(ctx, st);
	trace_emit(fn, result, st->size, ptr, st->arg, st->last_stack);
}

SEC("uretprobe")
int mem_exit(struct pt_regs *ctx)
{
	__u64 ret = PT_REGS_RC(ctx);
	struct mem_tstate *st;
	struct mem_proc *p;
	__u32 pid;

	if (quiescing)
		return 0;
	if (sample_mode == MEM_SAMPLE_BYTES || sample_mode == MEM_SAMPLE_EVERY)
		return exit_sampled(ctx);
	st = leave_call();
	if (!st)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	p = proc_find(pid);
	if (!p)
		return 0;
	/* --trace: the stack this call takes, if any, is then last_stack (the interning
	 * shortcut it spares is worth nothing next to a record per call) */
	if (trace_calls)
		st->last_stack = 0;
	finish_call(ctx, st, pid, p, ret);
	if (trace_calls)
		trace_exit(ctx, st, ret);
	return 0;
}

#include "mem_alloc_only.bpf.h"

/* ---- held counts (hold_alloc, hold_free; --alloc-only's ao_flush) at exec, exit and the end */

static __always_inline void flush_held(struct mem_tstate *st)
{
	/* one or the other (sample_mode is constant: the verifier drops the other branch) */
	if (sample_mode == MEM_SAMPLE_ALLOC_ONLY) {
		if (st->ao_pid)
			for (__u32 w = 0; w < HELD_WAYS; w++)
				ao_flush(st, w);
	} else {
		flush_slots(st);
	}
}

/* A thread that execs: its counts belong to the old image (drained when userspace sees the
 * exec); --alloc-only's ranges and tail-call memory are the old image's. */
SEC("?tp_btf/sched_process_exec")
int held_exec(void *ctx)
{
	struct mem_tstate *st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);

	if (trace_all) {
		/* -a: no ptrace stop tells userspace of the exec; its entry does (proc_name) */
		struct mem_proc *p = proc_find(bpf_get_current_pid_tgid() >> 32);

		if (p) {
			proc_name(p);
			__sync_fetch_and_add(&p->execs, 1);
		}
	}
	if (!st)
		return 0;
	flush_held(st);
	st->ao_pid = 0;
	st->ao_sp = st->ao_ret = st->ao_sret = 0;
	return 0;
}

/* A thread that exits: its state goes with it. */
SEC("?tp_btf/sched_process_exit")
int held_exit(void *ctx)
{
	struct mem_tstate *st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);

	if (!st)
		return 0;
	flush_held(st);
	return 0;
}

/* Before userspace reads the maps: every live thread of a process (the iterator is made for
 * one pid), before its final read (it is stopped, or the run has ended), or of every process
 * (for all tasks), before a snapshot of the sites while the probes are on: flush_slots takes
 * turns with the threads' hot path. --alloc-only's counts are flushed only at the final read:
 * its hot path does not take turns (and it has no snapshots). */
SEC("?iter/task")
int held_flush_iter(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct mem_tstate *st;

	if (!task)
		return 0;
	st = bpf_task_storage_get(&tstate, task, 0, 0);
	if (!st)
		return 0;
	/* the end of the run (the final read of the process): a call the thread is in was
	 * entered before the end and returns after it, uncounted; it is told as in flight
	 * (full tracking: sampled modes counted its call at entry). Once: its depth is spent. */
	if (quiescing && st->depth && sample_mode == MEM_SAMPLE_NONE) {
		struct mem_proc *p = proc_find(task->tgid);

		if (p)
			__sync_fetch_and_add(&p->in_flight, 1);
		st->depth = 0;
	}
	flush_held(st);
	return 0;
}

/* ---- mappings (--mmap) ----------------------------------------------------------------------
 *
 * The program's own mmap, munmap, mremap and brk, from the raw syscall tracepoints: loaded only
 * with --mmap, because a sys_enter/sys_exit program runs for every system call of every process.
 * Each program tests the syscall number first, then the process table. A call made inside a
 * traced allocator call (depth > 0) is the allocator's; an unmap of memory never counted (glibc's
 * free of an mmapped chunk, which has no return probe and so no depth) releases nothing counted
 * and is only counted as untracked. Only anonymous mappings (private or shared) are counted;
 * see docs/ARCHITECTURE.md. Regions are kept exactly: partial unmaps cut or split them.
 */
#define NR_MMAP		9	/* x86_64 */
#define NR_MUNMAP	11
#define NR_BRK		12
#define NR_MREMAP	25
#define MAP_FIXED_	0x10
#define MAP_ANON_	0x20
#define MREMAP_FIXED_	2
#define MREMAP_DONTUNMAP_ 4
#define PAGE_SZ		4096ULL
#define MAP_HITS	8	/* regions collected per pass over the table */
#define MAP_PASSES	8	/* passes per unmap: MAP_HITS * MAP_PASSES regions at most */

struct map_tstate {
	__u32 nr;		/* syscall in flight + 1; 0: none (or not ours) */
	__u32 pad;
	__u64 args[5];
	__u64 old_brk;		/* brk: the break before the call */
	__u64 enter_ts;		/* regions made since (by other threads) are not this call's */
	bool tracked;		/* mremap: the old range held counted memory at entry */
	bool below_free;	/* made below the thread's last free's frame (map_below_free) */
	struct mem_stack stack;	/* scratch for map_stack */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct map_tstate);
} mstate SEC(".maps");

/* created with procs at attach when --mmap is on */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct mem_map_proc);
} mprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);		/* --max-regions */
	__type(key, struct mem_region_key);
	__type(value, struct mem_region_val);
} regions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 12);		/* --max-stacks */
	__type(key, struct mem_site_key);
	__type(value, struct mem_map_site_val);
} msites SEC(".maps");

static const struct mem_map_site_val zero_map_site;

/* The unwinder's start at a system call: the task's user registers, exact there (the leaf's
 * own); want: a stack the stack cache has noted may come back as its hash alone */
static __always_inline void map_unwind_at(struct unwind_start *us, struct pt_regs *regs,
					  __u32 want)
{
	__builtin_memset(us, 0, sizeof(*us));
	us->ip = regs->ip;
	us->sp = regs->sp;
	us->bp = regs->bp;
	us->rbx = regs->bx;
	us->rdi = regs->di;
	us->rdx = regs->dx;
	us->rax = regs->ax;
	us->leaf = 1;
	us->want = want;
}

/* The user stack at the syscall's exit, interned: [ip in the syscall wrapper, its caller's
 * return address, the callers]. By tables (the unwinder, as mem's allocation stacks: through
 * code without frame pointers), from the task's user registers, which are exact here. Else by
 * frame pointers: the wrapper (glibc's mmap, munmap, brk) keeps no frame, so the word at sp is
 * its return address, the caller a frame-pointer walk would miss, and the walk goes on from
 * %rbp (marking where it cannot, as walk_stack). Where the wrapper has a frame of its own
 * (mremap, sbrk) that word is no return address, and userspace drops it (build_map_stack). */
static __always_inline __u64 map_stack(void *ctx, struct pt_regs *regs, struct map_tstate *ms)
{
	struct mem_stack *s = &ms->stack;
	struct walk_ctx w = { .ips = s->ips, .nr = 2 };
	struct unwind_start us;
	__u64 ra = 0, h;
	long n;

	if (unwind_mode) {
		map_unwind_at(&us, regs, 1);
		n = unwind_user_start(s->ips, &us);
		if (n >= 0) {
			if (us.hash)
				return us.hash;
			h = intern_stack(s, (__u64)n, 0);
			unwind_scache_note(&us, h);
			return h;
		}
	}
	s->ips[0] = regs->ip;
	bpf_probe_read_user(&ra, sizeof(ra), (void *)regs->sp);
	s->ips[1] = ra;
	w.fp = regs->bp;
	w.prev = regs->sp + 8;
	/* one table of stacks, one hash */
	return intern_stack(s, walk_on(&w), 0);
}

/* Whether the system call is made inside a free (the allocator's, as those inside a traced
 * call: a thread's first free making glibc's arena for it, 128 MiB; free giving back an
 * mmapped block): the thread's last free's return address is in the call's stack, unwound by
 * tables (a call from that site in progress is that free). By frame pointers the walk does not
 * get through glibc: such a call is left the program's. Only when map_below_free said it may
 * be (ms->below_free). */
static __always_inline bool map_from_free(struct pt_regs *regs, struct map_tstate *ms)
{
	struct mem_tstate *st;
	struct unwind_start us;
	__u64 ra;
	long n;

	/* most calls: no lookup at all */
	if (!ms->below_free || !unwind_mode)
		return false;
	st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
	if (!st)
		return false;
	ra = st->mfree_ra;
	map_unwind_at(&us, regs, 0);
	n = unwind_user_start(ms->stack.ips, &us);
	for (int i = 1; i < STACK_MAX_DEPTH; i++) {
		if (i >= n)
			break;
		if (ms->stack.ips[i] == ra)
			return true;
	}
	return false;
}

static __always_inline struct mem_map_site_val *map_site_of(__u32 pid, __u32 fn, __u64 stack)
{
	struct mem_site_key k = { .pid = pid, .fn = fn, .stack = stack };
	struct mem_map_site_val *v = bpf_map_lookup_elem(&msites, &k);

	if (v)
		return v;
	bpf_map_update_elem(&msites, &k, &zero_map_site, BPF_NOEXIST);
	v = bpf_map_lookup_elem(&msites, &k);
	if (!v)
		drop(MEM_DROP_SITES_FULL);
	return v;
}

/* bytes of a region released: its site and its process */
static __always_inline void account_unmap(__u32 pid, struct mem_map_proc *mp,
					  const struct mem_region_val *rv, __u64 bytes)
{
	struct mem_site_key k = { .pid = pid, .fn = rv->fn, .stack = rv->stack };
	struct mem_map_site_val *sv = bpf_map_lookup_elem(&msites, &k);

	if (sv) {
		__sync_fetch_and_add(&sv->unmaps, 1);
		__sync_fetch_and_add(&sv->unmap_bytes, bytes);
	}
	__sync_fetch_and_add(&mp->unmap_count, 1);
	__sync_fetch_and_add(&mp->unmap_bytes, bytes);
	__sync_fetch_and_add(&mp->live_bytes, -bytes);
}

/* Cut [lo, hi) out of the region at key: what stays below lo keeps its key with a smaller
 * size, what stays above hi becomes a region of its own. Returns the bytes released (dry: the
 * bytes that would be, changing nothing). */
static __always_inline __u64 cut_region(__u32 pid, struct mem_map_proc *mp,
					struct mem_region_key *key, __u64 lo, __u64 hi, bool dry,
					__u64 before)
{
	struct mem_region_val *v = bpf_map_lookup_elem(&regions, key);
	struct mem_region_val copy;
	__u64 s, e, clo, chi;

	if (!v)
		return 0;
	copy = *v;
	if (copy.ts >= before)
		return 0;	/* mapped by another thread since this call began */
	s = key->start;
	e = s + copy.size;
	if (e <= lo || s >= hi)
		return 0;
	clo = s > lo ? s : lo;
	chi = e < hi ? e : hi;
	if (dry)
		return chi - clo;
	if (s < lo) {
		v->size = lo - s;
	} else if (bpf_map_delete_elem(&regions, key)) {
		return 0;	/* another thread released it first */
	} else {
		__sync_fetch_and_add(&mp->live_count, -1);
	}
	if (e > hi) {
		struct mem_region_key tk = { .pid = pid, .start = hi };
		struct mem_region_val tv = copy;

		tv.size = e - hi;
		if (bpf_map_update_elem(&regions, &tk, &tv, BPF_NOEXIST)) {
			/* untracked from here on: released now, so live stays true */
			drop(MEM_DROP_REGIONS_FULL);
			chi = e;
		} else {
			__sync_fetch_and_add(&mp->live_count, 1);
		}
	}
	account_unmap(pid, mp, &copy, chi - clo);
	return chi - clo;
}

/* One unmap's state, on the program's stack: callbacks take it as their context. */
struct range_scan {
	__u32 pid;
	__u32 nhits;
	__u64 lo, hi;
	__u64 bytes;		/* released (dry: would be) */
	__u64 before;		/* only regions mapped before this time */
	bool more;		/* more regions overlap than hits holds */
	bool dry;
	struct mem_region_key hits[MAP_HITS];
};

static long range_cb(struct bpf_map *map, struct mem_region_key *k, struct mem_region_val *v,
		     struct range_scan *rs)
{
	__u32 i = rs->nhits;

	if (k->pid != rs->pid || k->start >= rs->hi || k->start + v->size <= rs->lo ||
	    v->ts >= rs->before)
		return 0;
	if (i >= MAP_HITS) {
		rs->more = true;
		return 1;
	}
	rs->hits[i].pid = k->pid;
	rs->hits[i].start = k->start;
	rs->nhits = i + 1;
	return 0;
}

static long cut_cb(__u32 i, struct range_scan *rs)
{
	struct mem_region_key k;
	struct mem_map_proc *mp;

	if (i >= rs->nhits || i >= MAP_HITS)
		return 1;
	mp = bpf_map_lookup_elem(&mprocs, &rs->pid);
	if (!mp)
		return 1;
	k = rs->hits[i];
	rs->bytes += cut_region(rs->pid, mp, &k, rs->lo, rs->hi, rs->dry, rs->before);
	return 0;
}

/* One pass: collect up to MAP_HITS overlapping regions, then cut them (cutting while the
 * table is being walked could reuse the element the walk stands on). */
static long pass_cb(__u32 i, struct range_scan *rs)
{
	rs->nhits = 0;
	rs->more = false;
	bpf_for_each_map_elem(&regions, range_cb, rs, 0);
	bpf_loop(MAP_HITS, cut_cb, rs, 0);
	if (!rs->more || rs->dry)
		return 1;
	if (i == MAP_PASSES - 1)
		drop(MEM_DROP_MAP_SPAN);
	return 0;
}

/* Release every counted byte of pid in [lo, hi) mapped before `before` (ns). Returns the bytes
 * released (dry: that would be). An exact match of one region is one lookup; anything else is
 * a pass over the table. */
static __always_inline __u64 unmap_range(__u32 pid, struct mem_map_proc *mp, __u64 lo, __u64 hi,
					 bool dry, __u64 before)
{
	struct mem_region_key key = { .pid = pid, .start = lo };
	struct mem_region_val *v;
	struct range_scan rs;

	if (hi <= lo || !mp->live_count)
		return 0;
	v = bpf_map_lookup_elem(&regions, &key);
	if (v && v->size == hi - lo && v->ts < before)
		return cut_region(pid, mp, &key, lo, hi, dry, before);
	__builtin_memset(&rs, 0, sizeof(rs));
	rs.pid = pid;
	rs.lo = lo;
	rs.hi = hi;
	rs.dry = dry;
	rs.before = before;
	bpf_loop(MAP_PASSES, pass_cb, &rs, 0);
	return rs.bytes;
}

/* A new region [start, start + size) mapped by fn at the current stack. */
static __always_inline void add_region(void *ctx, struct pt_regs *regs, struct map_tstate *ms,
				       __u32 pid, struct mem_map_proc *mp, __u32 fn, __u64 start,
				       __u64 size)
{
	struct mem_region_key k = { .pid = pid, .start = start };
	struct mem_region_val rv = { .size = size, .fn = fn };
	struct mem_region_val *old;
	struct mem_map_site_val *sv;
	__u64 live;
	long err;

	rv.stack = map_stack(ctx, regs, ms);
	rv.ts = bpf_ktime_get_ns();
	sv = map_site_of(pid, fn, rv.stack);
	if (sv) {
		__sync_fetch_and_add(&sv->maps, 1);
		__sync_fetch_and_add(&sv->map_bytes, size);
		__sync_fetch_and_add(&sv->hist[log2_bucket(size)], 1);
	}
	__sync_fetch_and_add(&mp->map_count, 1);
	__sync_fetch_and_add(&mp->map_bytes, size);

	err = bpf_map_update_elem(&regions, &k, &rv, BPF_NOEXIST);
	if (err == -17 /* EEXIST */) {
		/* the address was handed out again: we missed its unmap; retire the old one */
		old = bpf_map_lookup_elem(&regions, &k);
		if (old) {
			struct mem_region_val copy = *old;

			account_unmap(pid, mp, &copy, copy.size);
			__sync_fetch_and_add(&mp->live_count, -1);
		}
		err = bpf_map_update_elem(&regions, &k, &rv, BPF_ANY);
	}
	if (err) {
		/* untracked: its unmap could never be matched, so it is released at once */
		drop(MEM_DROP_REGIONS_FULL);
		if (sv) {
			__sync_fetch_and_add(&sv->unmaps, 1);
			__sync_fetch_and_add(&sv->unmap_bytes, size);
		}
		__sync_fetch_and_add(&mp->unmap_count, 1);
		__sync_fetch_and_add(&mp->unmap_bytes, size);
		return;
	}
	__sync_fetch_and_add(&mp->live_count, 1);
	live = __sync_fetch_and_add(&mp->live_bytes, size) + size;
	if (live > mp->peak_live_bytes) {
		atomic_max(&mp->peak_live_bytes, live);
		mp->peak_ts = rv.ts;
	}
}

static __always_inline void map_failed(void *ctx, struct pt_regs *regs, struct map_tstate *ms,
				       __u32 pid, struct mem_map_proc *mp, __u32 fn)
{
	struct mem_map_site_val *sv = map_site_of(pid, fn, map_stack(ctx, regs, ms));

	__sync_fetch_and_add(&mp->failed, 1);
	if (sv)
		__sync_fetch_and_add(&sv->failed, 1);
}

/* A 32-bit system call's number is the ia32 table's (in_compat_syscall): 9 there is link(2),
 * 11 execve(2); its mappings are not counted (mem traces 64-bit programs' allocators). */
static __always_inline bool is_map_nr(long id)
{
	return (id == NR_MMAP || id == NR_MUNMAP || id == NR_MREMAP || id == NR_BRK) &&
	       !in_compat_syscall();
}

SEC("?tp_btf/sys_enter")
int BPF_PROG(map_enter, struct pt_regs *regs, long id)
{
	struct task_struct *task;
	struct mem_map_proc *mp;
	struct mem_tstate *st;
	struct map_tstate *ms;
	__u64 ip;
	__u32 pid;

	if (!is_map_nr(id) || quiescing)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	if (!proc_find(pid))
		return 0;
	mp = bpf_map_lookup_elem(&mprocs, &pid);
	if (!mp)
		return 0;
	/* the dynamic loader's own (loading libraries), as calls inside malloc are malloc's */
	ip = regs->ip;
	if (ip >= mp->loader_lo && ip < mp->loader_hi)
		return 0;
	task = bpf_get_current_task_btf();
	/* inside a traced allocator call: the allocator's, not the program's (inside a free too:
	 * map_from_free) */
	st = bpf_task_storage_get(&tstate, task, 0, 0);
	if (st && st->depth)
		return 0;
	ms = bpf_task_storage_get(&mstate, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ms) {
		drop(MEM_DROP_NO_STATE);
		return 0;
	}
	ms->nr = id + 1;
	ms->args[0] = regs->di;
	ms->args[1] = regs->si;
	ms->args[2] = regs->dx;
	ms->args[3] = regs->r10;
	ms->args[4] = regs->r8;
	ms->below_free = map_below_free(st, regs->sp);
	ms->enter_ts = bpf_ktime_get_ns();
	if (id == NR_BRK)
		ms->old_brk = task->mm->brk;
	if (id == NR_MUNMAP) {
		/* released here, while the range is still ours: once the kernel has unmapped it,
		 * another thread's mmap may get the same addresses before this call's exit */
		__u64 a0 = ms->args[0], len = (ms->args[1] + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
		__u64 bytes = 0;

		ms->nr = 0;
		/* what the kernel refuses (EINVAL) releases nothing */
		if (!(a0 & (PAGE_SZ - 1)) && len && a0 + len > a0)
			bytes = unmap_range(pid, mp, a0, a0 + len, false, ~0ULL);
		/* what free gives back (a large block) was never counted, and is not untracked
		 * either: the allocator's */
		if (bytes)
			__sync_fetch_and_add(&mp->calls[MEM_MAP_MUNMAP], 1);
		else if (!map_from_free(regs, ms))
			__sync_fetch_and_add(&mp->untracked, 1);
	}
	if (id == NR_MREMAP) {
		__u64 a0 = ms->args[0], len = (ms->args[1] + PAGE_SZ - 1) & ~(PAGE_SZ - 1);

		ms->tracked = unmap_range(pid, mp, a0, a0 + (len ? len : PAGE_SZ), true, ~0ULL) > 0;
	}
	return 0;
}

SEC("?tp_btf/sys_exit")
int BPF_PROG(map_exit, struct pt_regs *regs, long ret)
{
	long id = regs->orig_ax;
	struct mem_map_proc *mp;
	struct map_tstate *ms;
	__u64 a0, len, flags, bytes;
	__u32 pid;

	if (!is_map_nr(id) || quiescing)
		return 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	if (!proc_find(pid))
		return 0;
	mp = bpf_map_lookup_elem(&mprocs, &pid);
	ms = bpf_task_storage_get(&mstate, bpf_get_current_task_btf(), 0, 0);
	if (!mp || !ms || ms->nr != id + 1)
		return 0;
	ms->nr = 0;
	if (map_from_free(regs, ms))
		return 0;
	a0 = ms->args[0];

	switch (id) {
	case NR_MMAP:
		len = (ms->args[1] + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
		flags = ms->args[3];
		if (ret < 0 && ret > -4096) {
			if (flags & MAP_ANON_) {
				__sync_fetch_and_add(&mp->calls[MEM_MAP_MMAP], 1);
				map_failed(ctx, regs, ms, pid, mp, MEM_MAP_MMAP);
			} else {
				__sync_fetch_and_add(&mp->untracked, 1);
			}
			return 0;
		}
		/* MAP_FIXED replaced whatever was mapped there */
		if (flags & MAP_FIXED_)
			unmap_range(pid, mp, ret, ret + len, false, ms->enter_ts);
		if (!(flags & MAP_ANON_)) {
			__sync_fetch_and_add(&mp->untracked, 1);
			return 0;
		}
		__sync_fetch_and_add(&mp->calls[MEM_MAP_MMAP], 1);
		add_region(ctx, regs, ms, pid, mp, MEM_MAP_MMAP, ret, len);
		return 0;
	case NR_MREMAP: {
		__u64 old_len = (ms->args[1] + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
		__u64 new_len = (ms->args[2] + PAGE_SZ - 1) & ~(PAGE_SZ - 1);
		bool keep = !old_len || (ms->args[3] & MREMAP_DONTUNMAP_);

		if (ret < 0 && ret > -4096) {
			if (ms->tracked) {
				__sync_fetch_and_add(&mp->calls[MEM_MAP_MREMAP], 1);
				map_failed(ctx, regs, ms, pid, mp, MEM_MAP_MREMAP);
			} else {
				__sync_fetch_and_add(&mp->untracked, 1);
			}
			return 0;
		}
		/* like realloc: the old range is released, the new one mapped here */
		if (!keep)
			unmap_range(pid, mp, a0, a0 + old_len, false, ms->enter_ts);
		if (ms->args[3] & MREMAP_FIXED_)
			unmap_range(pid, mp, ret, ret + new_len, false, ms->enter_ts);
		if (!ms->tracked) {
			__sync_fetch_and_add(&mp->untracked, 1);
			return 0;
		}
		__sync_fetch_and_add(&mp->calls[MEM_MAP_MREMAP], 1);
		add_region(ctx, regs, ms, pid, mp, MEM_MAP_MREMAP, ret, new_len);
		return 0;
	}
	case NR_BRK: {
		__u64 old = ms->old_brk, cur = ret;

		if (cur > old) {
			__sync_fetch_and_add(&mp->calls[MEM_MAP_BRK], 1);
			add_region(ctx, regs, ms, pid, mp, MEM_MAP_BRK, old, cur - old);
		} else if (cur < old) {
			bytes = unmap_range(pid, mp, cur, old, false, ms->enter_ts);
			__sync_fetch_and_add(bytes ? &mp->calls[MEM_MAP_BRK] : &mp->untracked, 1);
		} else if (a0 > old) {
			/* asked for more and got nothing */
			__sync_fetch_and_add(&mp->calls[MEM_MAP_BRK], 1);
			map_failed(ctx, regs, ms, pid, mp, MEM_MAP_BRK);
		}
		return 0;
	}
	}
	return 0;
}
