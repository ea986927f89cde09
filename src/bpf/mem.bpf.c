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

char LICENSE[] SEC("license") = "GPL";

/* Allocations outside [min_size, max_size] are not tracked (calls are still counted). */
const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
/* temporaries: 0 = heaptrack's rule (freed before the thread's next allocation), else freed
 * within this many ns of being allocated */
const volatile __u64 temp_ns = 0;
/* Sampled tracking (enum mem_sample_mode) and its period: mean bytes between samples, or
 * allocations per sample. Tables: see abi/mem.h. */
const volatile __u32 sample_mode = MEM_SAMPLE_NONE;
const volatile __u64 sample_period = 0;
const volatile __u32 ln_tab[MEM_LN_STEPS + 1] = {};
const volatile __u64 exp_int_tab[MEM_EXP_INT] = {};
const volatile __u64 exp_frac_tab[MEM_EXP_FRAC] = {};

struct mem_tstate {
	__u32 depth;		/* traced calls in progress on this thread */
	__u32 fn;		/* outermost call's function */
	__u64 size;		/* its requested size */
	__u64 arg;		/* realloc: old pointer; posix_memalign: where the result goes */
	__u64 last_ptr;		/* this thread's last allocation, for the temporary rule */
	struct mem_stack stack;	/* scratch for bpf_get_stack: per task, so preemption is harmless */
	/* sampled modes */
	__s64 countdown;	/* bytes (or allocations) until this thread's next sample */
	__u64 weight;		/* the outermost call's weight if sampled (MEM_WEIGHT_ONE units) */
	__u8 armed;		/* countdown drawn */
	__u8 sampled;		/* the outermost call is sampled */
	__u64 ao_sp, ao_ret;	/* --alloc-only: the last counted call's stack pointer, caller */
	__u64 ao_stack;		/* and its stack hash (interned) */
	__u32 ao_fn;
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

static __always_inline __u64 intern_stack(struct mem_stack *s, __u64 nr, __u64 known);

/* Walk the user frame-pointer chain from fp into s->ips[first..]: each frame is the saved fp
 * and the return address above it. Stops at an unreadable frame, a zero return address, or a
 * frame not above the previous one (the chain ran into code without frame pointers). Returns the
 * number of entries filled in s->ips. Done here with bpf_probe_read_user rather than with
 * bpf_get_stack(), whose perf callchain machinery costs several times more per call. */
static __always_inline __u64 walk_frames(struct mem_stack *s, __u64 fp, int first)
{
	struct { __u64 next, ret; } fr;
	__u64 nr = first;

	for (int i = first; i < MEM_MAX_STACK; i++) {
		if (!fp || (fp & 7) || bpf_probe_read_user(&fr, sizeof(fr), (void *)fp) || !fr.ret)
			break;
		s->ips[i] = fr.ret;
		nr = i + 1;
		if (fr.next <= fp)
			break;
		fp = fr.next;
	}
	return nr;
}

/* Capture the user stack at a return probe into the thread's scratch buffer and intern it.
 * The return address (ip: the kernel put it back) is frame 0; rbp is the caller's frame again.
 * 0 = no stack. */
static __always_inline __u64 capture_stack(void *ctx, struct mem_tstate *st)
{
	struct mem_stack *s = &st->stack;

	s->ips[0] = PT_REGS_IP((struct pt_regs *)ctx);
	if (!s->ips[0]) {
		drop(MEM_DROP_STACK_FAIL);
		return 0;
	}
	return intern_stack(s, walk_frames(s, PT_REGS_FP((struct pt_regs *)ctx), 1), 0);
}

/* Intern the first nr frames of s (the thread's scratch buffer) by hash. 0 = no stack.
 * known: a hash already interned (the thread's previous stack), or 0. */
static __always_inline __u64 intern_stack(struct mem_stack *s, __u64 nr, __u64 known)
{
	__u64 h;

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
	if (h != known && !bpf_map_lookup_elem(&stacks, &h)) {
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

/* Account a tracked block as freed: its site, its process. `temp`: it is a temporary (freed
 * before its thread allocated again, heaptrack's rule, or within temp_ns). life_ns: its lifetime, or ~0 if the
 * free was not seen as such (a block retired because its address was handed out again). */
static __always_inline void account_free(__u32 pid, struct mem_proc *p,
					 const struct mem_live_val *lv, bool temp, __u64 life_ns)
{
	struct mem_site_key k = { .pid = pid, .fn = lv->fn, .stack = lv->stack };
	struct mem_site_val *sv = bpf_map_lookup_elem(&sites, &k);
	__u64 cnt = blk_count(lv), bytes = blk_bytes(lv);

	if (sv) {
		__sync_fetch_and_add(&sv->frees, cnt);
		__sync_fetch_and_add(&sv->free_bytes, bytes);
		if (temp)
			__sync_fetch_and_add(&sv->temps, cnt);
		if (life_ns != ~0ULL)
			__sync_fetch_and_add(&sv->life[log2_bucket(life_ns)], cnt);
	}
	__sync_fetch_and_add(&p->free_count, cnt);
	__sync_fetch_and_add(&p->free_bytes, bytes);
	__sync_fetch_and_add(&p->live_count, -cnt);
	__sync_fetch_and_add(&p->live_bytes, -bytes);
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
		/* sampled modes: a block that was not sampled */
		if (sample_mode == MEM_SAMPLE_NONE)
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
	__u64 live_bytes, cnt, bytes;
	long err;

	if (size < min_size || size > max_size)
		return;

	lv.stack = capture_stack(ctx, st);
	lv.ts = bpf_ktime_get_ns();
	if (sample_mode != MEM_SAMPLE_NONE)
		lv.weight = st->weight;
	cnt = blk_count(&lv);
	bytes = blk_bytes(&lv);

	sv = site_of(pid, fn, lv.stack);
	if (sv) {
		__sync_fetch_and_add(&sv->allocs, cnt);
		__sync_fetch_and_add(&sv->alloc_bytes, bytes);
		__sync_fetch_and_add(&sv->hist[log2_bucket(size)], cnt);
	}
	__sync_fetch_and_add(&p->alloc_count, cnt);
	__sync_fetch_and_add(&p->alloc_bytes, bytes);
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
			__sync_fetch_and_add(&sv->frees, cnt);
			__sync_fetch_and_add(&sv->free_bytes, bytes);
		}
		return;
	}
	st->last_ptr = ptr;
	__sync_fetch_and_add(&p->live_count, cnt);
	live_bytes = __sync_fetch_and_add(&p->live_bytes, bytes) + bytes;
	if (live_bytes > p->peak_live_bytes) {
		atomic_max(&p->peak_live_bytes, live_bytes);
		p->peak_ts = lv.ts;
	}
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
	case MEM_FN_ALIGNED_ALLOC:
	case MEM_FN_MEMALIGN:
		return PT_REGS_PARM2(ctx);
	case MEM_FN_POSIX_MEMALIGN:
		*arg = PT_REGS_PARM1(ctx);
		return PT_REGS_PARM3(ctx);
	default:	/* malloc, valloc, pvalloc */
		return PT_REGS_PARM1(ctx);
	}
}

#include "mem_sample.bpf.h"

SEC("uprobe")
int mem_enter(struct pt_regs *ctx)
{
	__u32 pid, fn;
	struct mem_tstate *st;
	struct mem_proc *p;
	__u64 size, arg = 0;

	/* sampled modes: no process lookup before a call is known to be sampled */
	if (sample_mode == MEM_SAMPLE_BYTES || sample_mode == MEM_SAMPLE_EVERY)
		return enter_sampled(ctx);
	pid = bpf_get_current_pid_tgid() >> 32;
	fn = bpf_get_attach_cookie(ctx);
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

	size = request_of(ctx, fn, &arg);
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
	__u64 cnt = sample_mode == MEM_SAMPLE_NONE ? 1 : st->weight;

	__sync_fetch_and_add(&p->failed, cnt);
	sv = site_of(pid, fn, capture_stack(ctx, st));
	if (sv)
		__sync_fetch_and_add(&sv->failed, cnt);
}

/* The outermost call returned ret: account it. */
static __always_inline int finish_call(struct pt_regs *ctx, struct mem_tstate *st, __u32 pid,
				       struct mem_proc *p, __u64 ret)
{
	__u64 ptr = ret;
	__u32 fn;

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

SEC("uretprobe")
int mem_exit(struct pt_regs *ctx)
{
	__u64 ret = PT_REGS_RC(ctx);
	struct mem_tstate *st;
	struct mem_proc *p;
	__u32 pid;

	if (sample_mode == MEM_SAMPLE_BYTES || sample_mode == MEM_SAMPLE_EVERY)
		return exit_sampled(ctx);
	pid = bpf_get_current_pid_tgid() >> 32;
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
	return finish_call(ctx, st, pid, p, ret);
}

#include "mem_alloc_only.bpf.h"
