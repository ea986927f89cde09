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
#include "abi/mem.h"

char LICENSE[] SEC("license") = "GPL";

/* Allocations outside [min_size, max_size] are not tracked (calls are still counted). */
const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
/* temporaries: 0 = heaptrack's rule (freed before the thread's next allocation), else freed
 * within this many ns of being allocated */
const volatile __u64 temp_ns = 0;

struct mem_tstate {
	__u32 depth;		/* traced calls in progress on this thread */
	__u32 fn;		/* outermost call's function */
	__u64 size;		/* its requested size */
	__u64 arg;		/* realloc: old pointer; posix_memalign: where the result goes */
	__u64 last_ptr;		/* this thread's last allocation, for the temporary rule */
	struct mem_stack stack;	/* scratch for bpf_get_stack: per task, so preemption is harmless */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct mem_tstate);
} tstate SEC(".maps");

/* Traced processes; userspace creates the entry before attaching, so it doubles as the filter. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct mem_proc);
} procs SEC(".maps");

/* Not preallocated: elements cost memory only while blocks are live (about 100 bytes each);
 * only the bucket array (16 bytes per entry of --max-live) is allocated up front. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 21);		/* --max-live */
	__type(key, struct mem_live_key);
	__type(value, struct mem_live_val);
} live SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEM_DROP__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static const struct mem_site_val zero_site;

static __always_inline void drop(__u32 reason)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &reason);

	if (n)
		(*n)++;
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
	__u32 b = 0;

	/* bucket 0 holds size 0, bucket b holds [2^(b-1), 2^b) */
	if (v == 0)
		return 0;
	if (v >> 32) { v >>= 32; b += 32; }
	if (v >> 16) { v >>= 16; b += 16; }
	if (v >> 8) { v >>= 8; b += 8; }
	if (v >> 4) { v >>= 4; b += 4; }
	if (v >> 2) { v >>= 2; b += 2; }
	if (v >> 1) { b += 1; }
	b += 1;
	return b < MEM_HIST_BUCKETS ? b : MEM_HIST_BUCKETS - 1;
}

/* Walk the user stack's frame pointers from the return probe's registers: the return address
 * first, then each frame's saved return address. The same walk as bpf_get_stack's, except where
 * it ends: the kernel reads on until a read faults, and every chain ends in a fault (the main
 * thread's outermost saved %rbp is 1, a thread's 0; code without frame pointers leaves any value),
 * and that fault cost ~0.5 us per allocation, a quarter of the traced tight loop (perf, see
 * docs/PERFORMANCE.md). Here the walk stops before reading a frame that cannot be one: in the
 * first page, misaligned, or not above the previous frame (callers' frames are at higher
 * addresses). One frame per bpf_loop step: a plain loop would be verified once per iteration
 * and call site, which made loading (start-up) several times slower. */
struct walk_ctx {
	__u64 *ips;
	__u64 fp;		/* the next frame to read */
	__u64 prev;		/* the lowest address it may be at */
	__u64 nr;		/* addresses in ips */
};

/* Step i reads frame i + 1. It uses the step's index rather than a count kept in w: the
 * verifier would follow such a count's exact value step by step and never converge. */
static long walk_frame(__u64 i, void *data)
{
	struct walk_ctx *w = data;
	__u64 frame[2], fp = w->fp;

	if (fp < 4096 || (fp & 7) || fp < w->prev || i >= MEM_MAX_STACK - 1)
		return 1;
	if (bpf_probe_read_user(frame, sizeof(frame), (void *)fp))
		return 1;
	w->ips[i + 1] = frame[1];
	w->nr = i + 2;
	w->prev = fp + sizeof(frame);
	w->fp = frame[0];
	return 0;
}

static __always_inline __u64 walk_user_stack(struct pt_regs *ctx, __u64 *ips)
{
	struct walk_ctx w = { .ips = ips, .fp = PT_REGS_FP(ctx), .prev = PT_REGS_SP(ctx), .nr = 1 };

	ips[0] = PT_REGS_IP(ctx);
	bpf_loop(MEM_MAX_STACK - 1, walk_frame, &w, 0);
	return w.nr;
}

/* Capture the user stack into the thread's scratch buffer and intern it. 0 = no stack. */
static __always_inline __u64 capture_stack(void *ctx, struct mem_tstate *st)
{
	struct mem_stack *s = &st->stack;
	__u64 h, nr;

	if (!PT_REGS_IP((struct pt_regs *)ctx)) {
		drop(MEM_DROP_STACK_FAIL);
		return 0;
	}
	nr = walk_user_stack(ctx, s->ips);
	s->nr = nr;
	h = 0x9e3779b97f4a7c15ULL ^ nr;
	for (int i = 0; i < MEM_MAX_STACK; i++) {
		if (i >= nr)
			break;
		h ^= s->ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	if (h == 0)
		h = 1;
	if (!bpf_map_lookup_elem(&stacks, &h)) {
		long err = bpf_map_update_elem(&stacks, &h, s, BPF_NOEXIST);

		if (err && err != -17 /* EEXIST: another thread interned it */) {
			drop(MEM_DROP_STACKS_FULL);
			return 0;
		}
	}
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

/* Account a tracked block as freed: its site, its process. `temp`: it is a temporary (freed
 * before its thread allocated again, heaptrack's rule, or within temp_ns). life_ns: its lifetime, or ~0 if the
 * free was not seen as such (a block retired because its address was handed out again). */
static __always_inline void account_free(__u32 pid, struct mem_proc *p,
					 const struct mem_live_val *lv, bool temp, __u64 life_ns)
{
	struct mem_site_key k = { .pid = pid, .fn = lv->fn, .stack = lv->stack };
	struct mem_site_val *sv = bpf_map_lookup_elem(&sites, &k);

	if (sv) {
		__sync_fetch_and_add(&sv->frees, 1);
		__sync_fetch_and_add(&sv->free_bytes, lv->size);
		if (temp)
			__sync_fetch_and_add(&sv->temps, 1);
		if (life_ns != ~0ULL)
			__sync_fetch_and_add(&sv->life[log2_bucket(life_ns)], 1);
	}
	__sync_fetch_and_add(&p->free_count, 1);
	__sync_fetch_and_add(&p->free_bytes, lv->size);
	__sync_fetch_and_add(&p->live_count, -1);
	__sync_fetch_and_add(&p->live_bytes, -lv->size);
}

/* Forget ptr if tracked. st: the freeing thread's state, if it has any. Returns whether it was. */
static __always_inline bool free_block(__u32 pid, struct mem_proc *p, __u64 ptr,
				       struct mem_tstate *st)
{
	struct mem_live_key k = { .pid = pid, .ptr = ptr };
	struct mem_live_val *v = bpf_map_lookup_elem(&live, &k);
	struct mem_live_val copy;
	__u64 now, life;
	bool temp;

	if (!v) {
		__sync_fetch_and_add(&p->unknown_frees, 1);
		return false;
	}
	copy = *v;
	/* of two racing frees of one pointer (a double free), only the one that deletes counts */
	if (bpf_map_delete_elem(&live, &k))
		return false;
	temp = st && st->last_ptr == ptr;
	if (temp)
		st->last_ptr = 0;
	now = bpf_ktime_get_ns();
	life = now > copy.ts ? now - copy.ts : 0;
	if (temp_ns)
		temp = life < temp_ns;
	account_free(pid, p, &copy, temp, life);
	return true;
}

static __always_inline void record_alloc(void *ctx, struct mem_tstate *st, __u32 pid,
					 struct mem_proc *p, __u32 fn, __u64 ptr, __u64 size)
{
	struct mem_live_key lk = { .pid = pid, .ptr = ptr };
	struct mem_live_val lv = { .size = size, .fn = fn };
	struct mem_live_val *old;
	struct mem_site_val *sv;
	__u64 live_bytes;
	long err;

	if (size < min_size || size > max_size)
		return;

	lv.stack = capture_stack(ctx, st);
	lv.ts = bpf_ktime_get_ns();

	sv = site_of(pid, fn, lv.stack);
	if (sv) {
		__sync_fetch_and_add(&sv->allocs, 1);
		__sync_fetch_and_add(&sv->alloc_bytes, size);
		__sync_fetch_and_add(&sv->hist[log2_bucket(size)], 1);
	}
	__sync_fetch_and_add(&p->alloc_count, 1);
	__sync_fetch_and_add(&p->alloc_bytes, size);
	atomic_max(&p->max_request, size);

	err = bpf_map_update_elem(&live, &lk, &lv, BPF_NOEXIST);
	if (err == -17 /* EEXIST */) {
		/* a pointer handed out twice without a free we saw (freed by a path we do not
		 * probe): retire the old block so live counts stay true */
		old = bpf_map_lookup_elem(&live, &lk);
		if (old) {
			struct mem_live_val copy = *old;

			account_free(pid, p, &copy, false, ~0ULL);
		}
		err = bpf_map_update_elem(&live, &lk, &lv, BPF_ANY);
	}
	if (err) {
		/* untracked: it can never be matched by its free, so it never counts as live */
		drop(MEM_DROP_LIVE_FULL);
		if (sv) {
			__sync_fetch_and_add(&sv->frees, 1);
			__sync_fetch_and_add(&sv->free_bytes, size);
		}
		return;
	}
	st->last_ptr = ptr;
	__sync_fetch_and_add(&p->live_count, 1);
	live_bytes = __sync_fetch_and_add(&p->live_bytes, size) + size;
	if (live_bytes > p->peak_live_bytes) {
		atomic_max(&p->peak_live_bytes, live_bytes);
		p->peak_ts = lv.ts;
	}
}

SEC("uprobe")
int mem_enter(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u32 fn = bpf_get_attach_cookie(ctx);
	struct mem_tstate *st;
	struct mem_proc *p;
	__u64 size, arg = 0;

	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p || fn >= MEM_FN__COUNT)
		return 0;

	if (fn == MEM_FN_FREE) {
		__u64 ptr = PT_REGS_PARM1(ctx);

		if (!ptr)
			return 0;
		/* free called by a traced function (realloc(p, 0) frees internally) is its business */
		st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
		if (st && st->depth)
			return 0;
		__sync_fetch_and_add(&p->calls[MEM_FN_FREE], 1);
		free_block(pid, p, ptr, st);
		return 0;
	}

	st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		drop(MEM_DROP_NO_STATE);
		return 0;
	}
	if (st->depth++)
		return 0;

	switch (fn) {
	case MEM_FN_CALLOC:
		size = PT_REGS_PARM1(ctx) * PT_REGS_PARM2(ctx);
		break;
	case MEM_FN_REALLOC:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx);
		break;
	case MEM_FN_REALLOCARRAY:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM2(ctx) * PT_REGS_PARM3(ctx);
		break;
	case MEM_FN_ALIGNED_ALLOC:
	case MEM_FN_MEMALIGN:
		size = PT_REGS_PARM2(ctx);
		break;
	case MEM_FN_POSIX_MEMALIGN:
		arg = PT_REGS_PARM1(ctx);
		size = PT_REGS_PARM3(ctx);
		break;
	default:	/* malloc, valloc, pvalloc */
		size = PT_REGS_PARM1(ctx);
		break;
	}
	st->fn = fn;
	st->size = size;
	st->arg = arg;
	__sync_fetch_and_add(&p->calls[fn], 1);
	return 0;
}

/* A failed call: counted per process and at its site (rare, so its stack is worth taking). */
static __always_inline void record_failure(void *ctx, struct mem_tstate *st, __u32 pid,
					   struct mem_proc *p, __u32 fn)
{
	struct mem_site_val *sv;

	__sync_fetch_and_add(&p->failed, 1);
	sv = site_of(pid, fn, capture_stack(ctx, st));
	if (sv)
		__sync_fetch_and_add(&sv->failed, 1);
}

SEC("uretprobe")
int mem_exit(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 ret = PT_REGS_RC(ctx), ptr = ret;
	struct mem_tstate *st;
	struct mem_proc *p;
	__u32 fn;

	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p)
		return 0;
	st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
	if (!st)
		return 0;	/* the entry already counted this as a drop */
	if (st->depth == 0) {
		drop(MEM_DROP_NO_STATE);
		return 0;
	}
	if (--st->depth)
		return 0;

	fn = st->fn;
	switch (fn) {
	case MEM_FN_POSIX_MEMALIGN:
		if ((int)ret != 0 ||
		    bpf_probe_read_user(&ptr, sizeof(ptr), (void *)st->arg) || !ptr) {
			record_failure(ctx, st, pid, p, fn);
			return 0;
		}
		break;
	case MEM_FN_REALLOC:
	case MEM_FN_REALLOCARRAY:
		if (!ret) {
			/* glibc: realloc(p, 0) frees p and returns NULL; any other NULL is a failure
			 * that leaves p untouched */
			if (st->size == 0 && st->arg)
				free_block(pid, p, st->arg, st);
			else
				record_failure(ctx, st, pid, p, fn);
			return 0;
		}
		if (st->arg)
			free_block(pid, p, st->arg, st);
		break;
	default:
		if (!ret) {
			record_failure(ctx, st, pid, p, fn);
			return 0;
		}
		break;
	}
	record_alloc(ctx, st, pid, p, fn, ptr, st->size);
	return 0;
}
