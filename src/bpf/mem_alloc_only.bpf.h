/* SPDX-License-Identifier: GPL-2.0 */
/* ebprof mem --alloc-only: one entry program, no return probe, no free probe, included by
 * mem.bpf.c. Counts calls and requested bytes per (function, stack): who allocates most, at the
 * cost of one entry uprobe. No live table, no frees, no failures (the result is never seen).
 * Its hot path keeps the counts in the thread's task storage (see mem_enter_alloc_only).
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
static __always_inline __u64 real_return(struct task_struct *task, __u64 sp, __u64 ret)
{
	/* BTF pointers: plain loads the JIT guards, not a helper call per field */
	struct uprobe_task *ut = task->utask;
	struct return_instance *ri;

	if (!ut)
		return ret;
	ri = ut->return_instances;
	for (int i = 0; i < 4 && ri; i++) {
		if (ri->stack == sp)
			return ri->orig_ret_vaddr;
		ri = ri->next;
	}
	return ret;
}

/* The return address at sp (*ret) and, when the caller's frame record (at fp, rbp at entry)
 * lies within AO_WINDOW bytes above it, that record too, in one read of [sp, fp + 16) into a
 * buffer on the BPF stack (a user-memory read costs ~30 ns here, mostly fixed overhead, and
 * ~15 ns more when its destination is the thread's task storage: docs/PERFORMANCE.md):
 * *first = its return address, *next = its saved frame pointer. Returns whether the record was
 * read; if not, only *ret was (0 if unreadable). */
#define AO_WINDOW 256

static __always_inline bool read_entry(__u64 sp, __u64 fp, __u64 *ret, __u64 *first, __u64 *next)
{
	__u64 buf[AO_WINDOW / 8], off = fp - sp, len = off + 16, i;

	if (fp >= sp + 8 && !(fp & 7) && len <= AO_WINDOW &&
	    !bpf_probe_read_user(buf, len, (void *)sp)) {
		i = off / 8;
		asm volatile("" : "+r"(i));
		if (i < AO_WINDOW / 8 - 1) {
			*ret = buf[0];
			*first = buf[i + 1];
			*next = buf[i];
			return true;
		}
	}
	if (bpf_probe_read_user(ret, sizeof(*ret), (void *)sp))
		*ret = 0;
	return false;
}

/* The user stack at entry: the caller's return address, then the frame-pointer chain from the
 * caller's frame (rbp at entry is still the caller's), walked as at return (walk_stack); the
 * first record already read with the return address when read_entry could. A stack that ends
 * there, the caller's saved frame pointer being no frame (the walk reads no further), is
 * made of ret, first, next and rbp only: the thread's last such stack is reused when they
 * are the same. */
static __always_inline __u64 capture_stack_entry(struct pt_regs *ctx, struct mem_tstate *st,
						 __u64 ret, bool have_first, __u64 first, __u64 next)
{
	struct mem_stack *s = &st->stack;
	__u64 fp = PT_REGS_FP(ctx), nr, h;
	struct walk_ctx w = { .ips = s->ips, .fp = next, .prev = fp + 16, .nr = 2 };
	bool ends;

	if (unwind_mode) {
		/* by tables: from the registers as after the return (walk_intern) */
		st->ao_sret = 0;
		return st->ao_stack = walk_intern(s, ret, PT_REGS_SP(ctx) + 8, fp,
						  PT_REGS_SP(ctx), st->ao_stack);
	}
	if (!have_first) {
		nr = walk_stack(s->ips, ret, fp, PT_REGS_SP(ctx));
		st->ao_sret = 0;
		return st->ao_stack = intern_stack(s, nr, st->ao_stack);
	}
	/* walk_frame_at's test, the one that ends a walk without a read */
	ends = next < 4096 || (next & 7) || next < fp + 16;
	if (ends && ret == st->ao_sret && first == st->ao_sfirst && next == st->ao_snext &&
	    fp == st->ao_sfp)
		return st->ao_stack;
	s->ips[0] = ret;
	s->ips[1] = first;
	if (!ends) {
		nr = walk_on(&w);
	} else if (next) {
		s->ips[2] = STACK_FP_BROKEN;	/* walk_frame_at's end: no frame, not the last */
		nr = 3;
	} else {
		nr = 2;
	}
	/* a loop allocating from one place: its stack is interned already */
	h = st->ao_stack = intern_stack(s, nr, st->ao_stack);
	st->ao_sret = ends && h ? ret : 0;
	st->ao_sfirst = first;
	st->ao_snext = next;
	st->ao_sfp = fp;
	return h;
}

/* Move way h's run of equal requests (lsize, lcount) into its counts. */
static __always_inline void ao_fold(struct mem_held *h)
{
	__u64 n = h->lcount, size = h->lsize;
	__u32 b;

	if (!n)
		return;
	h->lcount = 0;
	if (size > AO_MAX_REQUEST) {
		/* more than the address space: it cannot succeed, a failure even unseen */
		h->failed += n;
		return;
	}
	b = log2_bucket(size);
	asm volatile("" : "+r"(b));
	if (b >= MEM_HIST_BUCKETS)
		return;
	h->bytes += n * size;
	h->b[b] += n;
	h->mask |= 1ULL << b;
	if (size > h->extra)
		h->extra = size;
}

/* Add what the thread holds in way w (one site: function and stack) to the maps: the site's
 * and the process's counters. A process no longer in the table (retired, detached) loses
 * them, as its calls would have been lost. */
__noinline int ao_flush(struct mem_tstate *st, __u32 w)
{
	struct held_hist_ctx x = {};
	struct mem_held *h;
	struct mem_proc *p;
	__u32 pid, fn;
	__u64 allocs;

	if (!st)	/* a global function's pointer may be NULL, for the verifier */
		return 0;
	h = &st->ha[w & (HELD_WAYS - 1)];
	pid = h->pid;
	fn = h->fn;
	h->calls = 0;
	asm volatile("" : "+r"(fn));
	if (!h->n || fn >= MEM_FN__COUNT)
		return 0;
	/* the thread's exit and userspace's iterator may flush one thread at once: one does */
	if (__sync_val_compare_and_swap(&st->ao_busy, 0, 1))
		return 0;
	ao_fold(h);
	x.h = h;
	x.mask = h->mask;
	allocs = h->n - h->failed;
	p = proc_find(pid);
	if (p) {
		__sync_fetch_and_add(&p->calls[fn], h->n);
		__sync_fetch_and_add(&p->alloc_count, allocs);
		__sync_fetch_and_add(&p->alloc_bytes, h->bytes);
		if (h->failed)
			__sync_fetch_and_add(&p->failed, h->failed);
		atomic_max(&p->max_request, h->extra);
		/* the held counts are one site's: so is their largest; its time is not kept */
		if (h->extra > p->largest_size)
			note_largest(p, fn, h->stack, h->extra, 0);
		x.sv = site_of(pid, fn, h->stack);
		if (x.sv) {
			__sync_fetch_and_add(&x.sv->allocs, allocs);
			__sync_fetch_and_add(&x.sv->alloc_bytes, h->bytes);
			if (h->failed)
				__sync_fetch_and_add(&x.sv->failed, h->failed);
		}
	}
	/* the buckets are zeroed whether or not they could be added */
	if (x.mask)
		bpf_loop(MEM_HIST_BUCKETS, held_hist_one, &x, 0);
	h->n = h->bytes = h->failed = h->extra = h->mask = 0;
	asm volatile("" ::: "memory");
	st->ao_busy = 0;
	return 0;
}

/* The thread's first call in its process (a thread's tgid never changes; an exec resets ao_pid
 * after flushing): the process must be traced; its ranges are kept. */
static __always_inline bool ao_load(struct mem_tstate *st)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct mem_proc *p = proc_find(pid);
	__u64 lo = ~0ULL, hi = 0;

	if (!p)
		return false;
	for (int i = 0; i < MEM_LIB_RANGES; i++) {
		st->ao_lo[i] = p->lib_lo[i];
		st->ao_hi[i] = p->lib_hi[i];
		if (p->lib_lo[i] < p->lib_hi[i]) {
			lo = p->lib_lo[i] < lo ? p->lib_lo[i] : lo;
			hi = p->lib_hi[i] > hi ? p->lib_hi[i] : hi;
		}
	}
	st->ao_min = lo;
	st->ao_max_hi = hi;
	st->ao_pid = pid;
	return true;
}

/*
 * Every allocation call's entry. The hot path touches the thread's state only: the counts of
 * the thread's sites (function and stack), up to HELD_WAYS of them, accumulate there, one way
 * a site, and a way's go to the maps when the thread calls from a site no way holds and the
 * way is taken for it, every AO_FLUSH_EVERY calls of the way (so the maps lag a running
 * thread by at most that many a way), when it execs or exits (held_exec, held_exit), and at the end of
 * the run (held_flush_iter, after the probes are off). No process lookup, no site lookup, no
 * atomic: a loop allocating one size from one place costs one entry trap, one read of user
 * memory and a few compares (the caller seen last time needs no range check, its stack no walk
 * when it ended at the first record, the size no bucket until it changes).
 */
#define AO_FLUSH_EVERY 512

SEC("uprobe")
int mem_enter_alloc_only(struct pt_regs *ctx)
{
	__u32 fn = bpf_get_attach_cookie(ctx);
	__u64 sp = PT_REGS_SP(ctx), ret = 0, size, arg = 0, h, first = 0, next = 0;
	struct task_struct *task;
	struct mem_tstate *st;
	struct mem_held *hw;
	bool have_first, found;
	__u32 w;

	/* frees are not attached (probes__attach_entries skips them) */
	if (fn >= MEM_FN__COUNT || quiescing)
		return 0;
	task = bpf_get_current_task_btf();
	st = thread_state(task);
	if (!st)
		return 0;
	if (!st->ao_pid && !ao_load(st))
		return 0;
	have_first = read_entry(sp, PT_REGS_FP(ctx), &ret, &first, &next);
	ret = real_return(task, sp, ret);
	if (ret != st->ao_ret) {
		/* the allocator calling itself (glibc: realloc(NULL, n) and memalign with a
		 * small alignment call malloc): the outer call is the one counted */
		if (ret >= st->ao_min && ret < st->ao_max_hi)
			for (int i = 0; i < MEM_LIB_RANGES; i++)
				if (ret >= st->ao_lo[i] && ret < st->ao_hi[i])
					return 0;
		st->ao_ret = ret;
	} else if (sp == st->ao_sp && fn != st->ao_fn) {
		/* a tail call from one traced function into another: same frame, same caller */
		return 0;
	}
	st->ao_sp = sp;
	st->ao_fn = fn;

	size = fn == MEM_FN_MALLOC ? PT_REGS_PARM1(ctx) : request_of(ctx, fn, &arg);
	h = capture_stack_entry(ctx, st, ret, have_first, first, next);
	/* the counts of the thread's sites are held in its ways, as full tracking's (hold_alloc):
	 * a loop at a few sites in turn adds nothing to the maps until a site no way holds
	 * comes */
	w = held_way(st->ha, &st->ha_next, &st->ha_last, st->ao_pid, fn, h, 0, &found);
	hw = &st->ha[w & (HELD_WAYS - 1)];
	if (hw->n && (!found || hw->calls >= AO_FLUSH_EVERY))
		ao_flush(st, w);
	if (!hw->n) {
		hw->pid = st->ao_pid;
		hw->fn = fn;
		hw->stack = h;
		hw->cfn = 0;
	}
	hw->calls++;
	hw->n++;
	/* a loop asking the same size: one count (folded at a change or flush) */
	if (size != hw->lsize) {
		ao_fold(hw);
		hw->lsize = size;
	}
	hw->lcount++;
	return 0;
}
