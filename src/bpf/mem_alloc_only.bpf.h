/* SPDX-License-Identifier: GPL-2.0 */
/* ebprof mem --alloc-only: one entry program, no return probe, no free probe, included by
 * mem.bpf.c. Counts calls and requested bytes per (function, stack): who allocates most, at the
 * cost of one entry uprobe. No live table, no frees, no failures (the result is never seen).
 *
 * At entry a frame-pointer walk misses the direct caller (glibc has no frame pointers: rbp is
 * still the caller's frame, whose slot holds the caller's caller), so the stack starts with the
 * return address read at *(u64 *)sp, then walks the chain from rbp: the same frames a stack
 * taken at return has. The probe is at the function's entry or at a later point probes.c chose
 * with %rsp and %rbp as they were at the entry (core/placement.c keeps both), so sp points at
 * the return address and rbp is the caller's frame.
 */

#define AO_MAX_REQUEST (1ULL << 47)	/* x86-64 user address space */

/* The return address at sp, unless another tracer's uretprobe on a function that tail-called
 * this one replaced it with the uretprobe trampoline: the kernel keeps the original in the
 * thread's return instances, the one hijacked at this very stack pointer. */
static __always_inline __u64 real_return(__u64 sp, __u64 ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);

	for (int i = 0; i < 4 && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == sp)
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		ri = BPF_CORE_READ(ri, next);
	}
	return ret;
}

/* The user stack at entry: the caller's return address, then the frame-pointer chain from the
 * caller's frame (rbp at entry is still the caller's), walked as at return (walk_stack). */
static __always_inline __u64 capture_stack_entry(struct pt_regs *ctx, struct mem_tstate *st,
						 __u64 ret)
{
	struct mem_stack *s = &st->stack;
	__u64 nr;

	nr = walk_stack(s->ips, ret, PT_REGS_FP(ctx), PT_REGS_SP(ctx));
	/* a loop allocating from one place: its stack is interned already */
	return st->ao_stack = intern_stack(s, nr, st->ao_stack);
}

SEC("uprobe")
int mem_enter_alloc_only(struct pt_regs *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u32 fn = bpf_get_attach_cookie(ctx);
	__u64 sp = PT_REGS_SP(ctx), ret = 0, size, arg = 0, h;
	struct mem_site_val *sv;
	struct mem_tstate *st;
	struct mem_proc *p;

	if (fn >= MEM_FN__COUNT || is_free_fn(fn))
		return 0;
	p = bpf_map_lookup_elem(&procs, &pid);
	if (!p)
		return 0;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		ret = 0;
	ret = real_return(sp, ret);
	/* the allocator calling itself (glibc: realloc(NULL, n) and memalign with a small
	 * alignment call malloc): the outer call is the one counted */
	for (int i = 0; i < MEM_LIB_RANGES; i++)
		if (ret >= p->lib_lo[i] && ret < p->lib_hi[i])
			return 0;
	st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		drop(MEM_DROP_NO_STATE);
		return 0;
	}
	/* a tail call from one traced function into another: same frame, same caller */
	if (sp == st->ao_sp && ret == st->ao_ret && fn != st->ao_fn)
		return 0;
	st->ao_sp = sp;
	st->ao_ret = ret;
	st->ao_fn = fn;

	size = request_of(ctx, fn, &arg);
	h = capture_stack_entry(ctx, st, ret);
	sv = site_of(pid, fn, h);
	__sync_fetch_and_add(&p->calls[fn], 1);
	if (size > AO_MAX_REQUEST) {
		/* more than the address space: it cannot succeed, a failure even unseen */
		__sync_fetch_and_add(&p->failed, 1);
		if (sv)
			__sync_fetch_and_add(&sv->failed, 1);
		return 0;
	}
	if (sv) {
		__sync_fetch_and_add(&sv->allocs, 1);
		__sync_fetch_and_add(&sv->alloc_bytes, size);
		__sync_fetch_and_add(&sv->hist[log2_bucket(size)], 1);
	}
	__sync_fetch_and_add(&p->alloc_count, 1);
	__sync_fetch_and_add(&p->alloc_bytes, size);
	atomic_max(&p->max_request, size);
	return 0;
}
