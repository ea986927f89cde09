/* SPDX-License-Identifier: GPL-2.0 */
/* ebprof mem: sampled tracking (--sample-bytes, --sample-every), included by mem.bpf.c.
 *
 * Each thread counts down to its next sample in task storage; a call that does not reach it
 * costs that task-storage access and nothing else: no hash lookup, no stack. Byte sampling
 * draws exponential intervals of mean N (a Poisson process over the bytes a thread requests, as
 * jemalloc's and tcmalloc's heap profilers do), so an allocation of s bytes is sampled with
 * probability 1 - exp(-s/N) and stands for 1/(1 - exp(-s/N)) allocations: the estimates are
 * unbiased. Everything is integer math on tables userspace fills with libm (abi/mem.h).
 */

/* -ln(U) for U uniform in (0, 1], in units of 2^-32. U = (r + 1) / 2^32; ln(r + 1) splits into
 * k ln 2 + ln(m), m in [1, 2), and ln(m) = ln(a) + ln(1 + y), a = 1 + i/256 from the table and
 * y = (m - a) / a < 1/256 by its series (error under 1e-10). */
static __always_inline __u64 neg_ln_uniform(void)
{
	__u64 v = (__u64)bpf_get_prandom_u32() + 1;
	__u32 k = ilog2(v);				/* 0..32 */
	__u64 f = (v << (40 - (k & 63))) - (1ULL << 40);	/* m - 1, 40 fraction bits */
	__u32 i = (f >> 32) & (MEM_LN_STEPS - 1);
	__u64 rem = f & 0xffffffffULL;			/* m - a, in units of 2^-40 */
	__u64 y = rem / (MEM_LN_STEPS + i);		/* (m - a) / a, in units of 2^-32 */
	__u64 y2 = (y * y) >> 32, y3 = (y2 * y) >> 32;
	__u64 ln_m = (__u64)ln_tab[i] + y - y2 / 2 + y3 / 3;
	__u64 ln2 = ln_tab[MEM_LN_STEPS];

	return (32 - k) * ln2 - ln_m;
}

/* The next byte interval: ceil(N * E), E exponential of mean 1, so that a countdown of it
 * reaches 0 within an allocation of s bytes with probability exactly 1 - exp(-s/N). */
static __always_inline __s64 next_interval(void)
{
	__u64 e = neg_ln_uniform();	/* < 2^37 */
	__u64 hi = sample_period * (e >> 16), lo = (sample_period * (e & 0xffff)) >> 16;
	__u64 iv = (hi + lo + 0xffff) >> 16;

	return iv ? (__s64)iv : 1;
}

/* Weight of a sampled allocation of s bytes (s >= 1): 1 / (1 - exp(-s/N)), in MEM_WEIGHT_ONE
 * units. Small s: the series N/s + 1/2 + s/(12N) (next term below 1e-6 of it); otherwise
 * exp(-x) = exp(-int) exp(-j/64) exp(-r) from the tables and exp(-r)'s series. */
static __always_inline __u64 bytes_weight(__u64 s)
{
	__u64 n = sample_period, x, e, r, r2, er, pr;
	__u32 xi, j;

	if (s >= MEM_EXP_INT * n)
		return MEM_WEIGHT_ONE;
	if (s * 8 < n)
		return (n << MEM_WEIGHT_SHIFT) / s + MEM_WEIGHT_ONE / 2 +
		       (s << MEM_WEIGHT_SHIFT) / (12 * n);
	x = ((s << 29) / n) << 1;		/* s/N in units of 2^-30; s < 2^35 */
	xi = (x >> 30) & 31;
	if (xi >= MEM_EXP_INT)
		return MEM_WEIGHT_ONE;
	j = (x >> 24) & (MEM_EXP_FRAC - 1);
	r = x & ((1ULL << 24) - 1);		/* < 1/64 */
	r2 = (r * r) >> 30;
	er = (1ULL << 30) - r + r2 / 2 - ((r2 * r) >> 30) / 6;
	e = (exp_int_tab[xi] * exp_frac_tab[j]) >> 30;
	e = (e * er) >> 30;
	pr = (1ULL << 30) - e;			/* 1 - exp(-x) >= 0.117 */
	return (1ULL << (30 + MEM_WEIGHT_SHIFT)) / pr;
}

static __always_inline __s64 first_countdown(void)
{
	/* every-N: a random phase, so each allocation is sampled with probability exactly 1/N */
	if (sample_mode == MEM_SAMPLE_EVERY)
		return (__s64)(bpf_get_prandom_u32() % sample_period) + 1;
	return next_interval();
}

static __always_inline int enter_sampled(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 fn = (__u32)cookie, pid;
	struct mem_tstate *st;
	struct mem_proc *p;
	__u64 size, arg = 0, s;

	if (fn >= MEM_FN__COUNT)
		return 0;
	/* free, every operator delete, dallocx, sdallocx: a block that was sampled, or nothing.
	 * An inner free of the same pointer (delete calling free) finds it gone: counted once. */
	if (is_free_fn(fn)) {
		struct mem_live_key k = { .pid = bpf_get_current_pid_tgid() >> 32,
					  .ptr = PT_REGS_PARM1(ctx) };
		struct mem_live_slot *v, *home;
		__u64 w;

		/* the one lookup of a free: an unsampled block is simply not there */
		if (!k.ptr)
			return 0;
		if (track_maps)
			note_free(thread_state(bpf_get_current_task_btf()), PT_REGS_SP(ctx));
		v = live_find(k.pid, k.ptr, &home);
		if (!v)
			return 0;
		w = v->weight;
		/* free called by a traced function (realloc(p, 0)) is its business */
		st = bpf_task_storage_get(&tstate, bpf_get_current_task_btf(), 0, 0);
		if (st && st->depth)
			return 0;
		p = proc_of(k.pid);
		if (!p)
			return 0;
		asm volatile("" : "+r"(fn));
		if (fn >= MEM_FN__COUNT)
			return 0;
		if (free_block(k.pid, p, k.ptr, st, MEM_FN__COUNT, 0)) {
			__sync_fetch_and_add(&p->calls[fn], w);
			if (cookie & MEM_COOKIE_CALLER)
				count_caller(ctx, k.pid, fn, w);
		}
		return 0;
	}
	if (cookie & MEM_COOKIE_NEW)
		return new_enter(ctx, fn);
	st = thread_state(bpf_get_current_task_btf());
	if (!st)
		return 0;
	if (st->depth++)
		return 0;
	size = request_of(ctx, fn, &arg);
	fn = take_new_mark(ctx, st, fn, &size, &arg);
	if (fn >= MEM_FN__COUNT)
		return 0;
	st->fn = fn;
	st->size = size;
	st->arg = arg;
	st->sampled = 0;
	if (!st->armed) {
		st->armed = 1;
		st->countdown = first_countdown();
	}
	if (sample_mode == MEM_SAMPLE_EVERY) {
		if (--st->countdown > 0) {
			st->last_ptr = 0;	/* the thread allocated again: no temporary */
			return 0;
		}
		st->countdown = sample_period;
		st->weight = sample_period << MEM_WEIGHT_SHIFT;
	} else {
		/* malloc(0) still takes a chunk: it counts as one byte, as in jemalloc */
		s = size ? size : 1;
		if (s > (1ULL << 40))
			s = 1ULL << 40;
		st->countdown -= s;
		if (st->countdown > 0) {
			st->last_ptr = 0;
			return 0;
		}
		st->countdown = next_interval();
		st->weight = bytes_weight(s);
	}
	pid = bpf_get_current_pid_tgid() >> 32;
	p = proc_of(pid);
	if (!p)
		return 0;
	st->sampled = 1;
	/* the verifier must see the bound on the very register that indexes calls[] */
	asm volatile("" : "+r"(fn));
	if (fn >= MEM_FN__COUNT)
		return 0;
	__sync_fetch_and_add(&p->calls[fn], st->weight);
	return 0;
}

static __always_inline int finish_call(struct pt_regs *ctx, struct mem_tstate *st, __u32 pid,
				       struct mem_proc *p, __u64 ret);

static __always_inline int exit_sampled(struct pt_regs *ctx)
{
	__u64 ret = PT_REGS_RC(ctx);
	struct mem_tstate *st;
	struct mem_proc *p;
	__u32 pid;

	st = leave_call();
	if (!st)
		return 0;
	if (!st->sampled) {
		/* an unsampled realloc still frees its old block, which may be a sampled one */
		if ((st->fn == MEM_FN_REALLOC || st->fn == MEM_FN_REALLOCARRAY) && st->arg &&
		    (ret || st->size == 0)) {
			struct mem_live_key k = { .pid = bpf_get_current_pid_tgid() >> 32,
						  .ptr = st->arg };
			struct mem_live_slot *home;

			if (!live_find(k.pid, k.ptr, &home))
				return 0;
			p = proc_find(k.pid);
			if (p)
				realloc_free(k.pid, p, st);
		}
		return 0;
	}
	st->sampled = 0;
	pid = bpf_get_current_pid_tgid() >> 32;
	p = proc_find(pid);
	if (!p)
		return 0;
	return finish_call(ctx, st, pid, p, ret);
}
