/* Interned stacks read from a mode's BPF `stacks` map, and their frames as profile locations
 * (see stacks.h). The table is keyed by the BPF side's 64-bit hash, which is already well mixed
 * only in the frames it hashed, so it is mixed again before it picks a slot. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/log.h"
#include "core/stacks.h"
#include "abi/unwind.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

struct stack_slot {
	__u64 hash;			/* 0: empty (hash 0 is "no stack" and never stored) */
	struct stack_trace *st;		/* sized for its nr frames only */
};

struct stack_table {
	struct stack_slot *slots;
	uint32_t nslots;		/* a power of two, or 0 */
	uint32_t n;
};

struct stack_table *stack_table__new(void)
{
	return calloc(1, sizeof(struct stack_table));
}

static void clear(struct stack_table *t)
{
	for (uint32_t i = 0; i < t->nslots; i++)
		free(t->slots[i].st);
	free(t->slots);
	t->slots = NULL;
	t->nslots = 0;
	t->n = 0;
}

void stack_table__free(struct stack_table *t)
{
	if (!t)
		return;
	clear(t);
	free(t);
}

static uint32_t slot_of(const struct stack_slot *slots, uint32_t nslots, __u64 h)
{
	uint32_t j = (uint32_t)util_hash_u64(h) & (nslots - 1);

	while (slots[j].hash && slots[j].hash != h)
		j = (j + 1) & (nslots - 1);
	return j;
}

/* Keep the load at most one half, so probes stay short. */
static int grow(struct stack_table *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;
	struct stack_slot *slots;

	if (!n)
		return -ENOMEM;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nslots; i++)
		if (t->slots[i].hash)
			slots[slot_of(slots, n, t->slots[i].hash)] = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

/* Add (or replace) the stack of hash h. A copy holds only its nr frames: most stacks are far
 * shorter than STACK_MAX_DEPTH, and a full copy each would cost 1 KiB. */
static int put(struct stack_table *t, __u64 h, const struct stack_trace *st)
{
	uint64_t nr = st->nr < STACK_MAX_DEPTH ? st->nr : STACK_MAX_DEPTH;
	size_t size = offsetof(struct stack_trace, ips) + nr * sizeof(st->ips[0]);
	struct stack_trace *copy;
	uint32_t j;
	int err;

	if (!h)
		return 0;
	if ((uint64_t)(t->n + 1) * 2 > t->nslots) {
		err = grow(t);
		if (err)
			return err;
	}
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, st, size);
	copy->nr = nr;
	j = slot_of(t->slots, t->nslots, h);
	if (t->slots[j].hash) {
		free(t->slots[j].st);
	} else {
		t->slots[j].hash = h;
		t->n++;
	}
	t->slots[j].st = copy;
	return 0;
}

static int read_one(const void *key, const void *val, void *ctx)
{
	return put(ctx, *(const __u64 *)key, val);
}

int stack_table__read(struct stack_table *t, int map_fd)
{
	if (!t)
		return -EINVAL;
	clear(t);
	return bpfutil__map_for_each(map_fd, sizeof(__u64), sizeof(struct stack_trace), read_one,
				     t);
}

/* For tests and for modes that read stacks some other way: add one stack. 0 or -ENOMEM. */
int stack_table__add(struct stack_table *t, __u64 h, const struct stack_trace *st)
{
	if (!t || !st)
		return -EINVAL;
	return put(t, h, st);
}

int stack_table__fetch(struct stack_table *t, int map_fd, __u64 h)
{
	struct stack_trace st;

	if (!t)
		return -EINVAL;
	if (!h || stack_table__get(t, h))
		return 0;
	if (bpf_map_lookup_elem(map_fd, &h, &st))
		return -errno;
	return put(t, h, &st);
}

void stack_table__clear(struct stack_table *t)
{
	if (t)
		clear(t);
}

uint32_t stack_table__count(const struct stack_table *t)
{
	return t ? t->n : 0;
}

const struct stack_trace *stack_table__get(const struct stack_table *t, __u64 h)
{
	uint32_t j;

	if (!t || !h || !t->nslots)
		return NULL;
	j = slot_of(t->slots, t->nslots, h);
	return t->slots[j].hash ? t->slots[j].st : NULL;
}

/* ---- locations -------------------------------------------------------------------------- */

/* whether r's outermost function is glibc's `name` */
static bool is_glibc(const struct sym_result *r, const char *name)
{
	const struct sym_frame *f = r->nframes ? &r->frames[r->nframes - 1] : NULL;

	return f && f->system_name && strcmp(f->system_name, name) == 0;
}

/* whether r's outermost function is Go's runtime.goexit (its symbol runtime.goexit.abi0): the
 * return address newproc pushes under every goroutine's first function, goexit + 1, which
 * follows its NOP, not a call: the goroutine's outermost frame, shown as perf and gdb do */
static bool is_go_goexit(const struct sym_result *r)
{
	const struct sym_frame *f = r->nframes ? &r->frames[r->nframes - 1] : NULL;
	const char *name = f ? (f->system_name ? f->system_name : f->function) : NULL;

	return name && (strcmp(name, "runtime.goexit") == 0 ||
			strcmp(name, "runtime.goexit.abi0") == 0);
}

uint32_t stacks__end_truncated(struct profile *prof, uint32_t *locs, uint32_t n,
			       const char *drop)
{
	uint32_t l = stacks__named_loc(prof, "[truncated]");

	if (l != PROF_NONE)
		locs[n++] = l;
	if (drop)
		profile__add_drop(prof, drop, 1);
	return n;
}

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

/* The function of a frame at an address two files had code at: "[ambiguous: libp1.so or
 * libp3.so]", or for one path with two files behind it (replaced in place) "[ambiguous:
 * plugin.so, replaced]". */
static uint32_t ambiguous_function(struct profile *prof, const char *module, const char *other)
{
	const char *a = base_of(module ? module : "?"), *b = base_of(other);
	char name[256];

	if (!strcmp(a, b))
		snprintf(name, sizeof(name), "[ambiguous: %s, replaced]", a);
	else
		snprintf(name, sizeof(name), "[ambiguous: %s or %s]", b, a);
	return profile__function(prof, name, name, NULL);
}

uint32_t stacks__user_locs(struct profile *prof, struct sym_proc *sp, pid_t pid,
			   const __u64 *ips, uint32_t nr, bool first_exact, uint32_t *locs)
{
	/* the locations of return addresses already named through sp, into prof: a process's
	 * stacks share most of their callers (python3 -c pass: 570,000 frames, 15,000 distinct) */
	uint64_t owner = sp ? sym_proc__serial(sp) << 24 ^ (uint32_t)pid : 0;	/* pid < 2^23 */
	uint32_t n = 0;
	bool after_signal = false, outermost = false, ambiguous = false;

	/* no mappings of it were ever read (with -a, a process gone before its note was read):
	 * its frames are bare addresses, said and counted */
	if (!sp && nr && ips[0] != UNWIND_TRUNCATED && ips[0] != STACK_FP_BROKEN)
		profile__add_drop(prof, STACKS_DROP_NO_MAPPINGS, 1);
	for (uint32_t i = 0; i < nr; i++) {
		struct prof_line lines[SYM_MAX_INLINE];
		/* the frame a signal interrupted (the unwinder's, past __restore_rt) is where the
		 * thread was, not a return address */
		bool ret_addr = (i > 0 || !first_exact) && !after_signal;
		/* past the first frame, a return address's location depends on it alone (and sp):
		 * one that follows a call and resolves as code is memoized */
		bool memo = owner && i > 0 && ret_addr;
		uint32_t map, nl = 0, l;
		struct sym_result r;
		uint64_t ip = ips[i];

		if (ip == UNWIND_TRUNCATED) {
			/* the unwinder could not go on (counted by it): said, not guessed */
			n = stacks__end_truncated(prof, locs, n, NULL);
			break;
		}
		if (ip == STACK_FP_BROKEN) {
			/* a frame-pointer walk met a saved frame pointer that is no frame */
			n = stacks__end_truncated(prof, locs, n, STACKS_DROP_FP_BROKEN);
			break;
		}
		if (!sp) {
			l = profile__location(prof, PROF_NONE, ip, ip, NULL, 0);
			if (l != PROF_NONE)
				locs[n++] = l;
			continue;
		}
		if (memo && (l = profile__memo_get(prof, owner, ip)) != PROF_NONE) {
			locs[n++] = l;
			continue;
		}
		/* a first frame not known to be exact is the ip of a task that entered the kernel
		 * by a system call, named at ip - 1 (the call may be the last instruction before
		 * another function's); not when no call or system call ends right before it: the
		 * kernel moved it there (a signal handler's entry, a new program's entry at an
		 * exec's ptrace stop), and ip - 1 is the function before it in the text */
		if (i == 0 && ret_addr && sym_proc__follows_syscall(sp, ip) == 0 &&
		    sym_proc__follows_call(sp, ip) == 0)
			ret_addr = false;
		if (sym_proc__resolve(sp, ip, ret_addr, &r) || !r.mapped || !r.executable) {
			/* in code no snapshot maps as code (a library mapped and unmapped between
			 * two looks, its range perhaps read as another file's data before): where
			 * the thread was is a bare address, so that its time is not the caller's
			 * own; a return address past it cannot be named, and the frames after it
			 * may be garbage (a frame-pointer walk through code without them): the
			 * stack ends, said, never a frame left out (its caller would read as
			 * calling what it called) */
			if (i == 0) {
				l = profile__location(prof, PROF_NONE, ip, ip, NULL, 0);
				if (l != PROF_NONE)
					locs[n++] = l;
				continue;
			}
			n = stacks__end_truncated(prof, locs, n, STACKS_DROP_OUTSIDE);
			break;
		}
		/* past the first frame, a "return address" that follows no call means the
		 * frame-pointer walk ran into code without frame pointers: the rest is garbage
		 * (static binaries end so). An exact first frame is where the thread was, not a
		 * return address, so the check starts at the frame after it either way. */
		after_signal = false;
		if (i > 0 && ret_addr && sym_proc__follows_call(sp, ip) == 0) {
			/* a signal handler's return address is the sigreturn trampoline, which
			 * follows no call (the unwinder went on past it into the interrupted
			 * code); anything else but makecontext's is the end of what is known */
			bool known = sym_proc__resolve(sp, ip, false, &r) == 0;

			/* the return address makecontext pushes: a coroutine's outermost
			 * frame (not shown: it is no caller), the stack whole */
			if (known && is_glibc(&r, "__start_context"))
				break;
			if (known && is_go_goexit(&r)) {
				/* named, then the end; its line at ip - 1, as a caller's */
				outermost = true;
				memo = false;
				if (sym_proc__resolve(sp, ip, true, &r))
					sym_proc__resolve(sp, ip, false, &r);
			} else if (!known || !is_glibc(&r, "__restore_rt")) {
				/* what the walk found from here on is not the callers: the
				 * stack ends, said and counted, never as if it were whole */
				n = stacks__end_truncated(prof, locs, n, STACKS_DROP_FP_BROKEN);
				break;
			} else {
				after_signal = true;
				memo = false;	/* the next frame depends on this one */
			}
		}
		map = profile__mapping(prof, (uint32_t)pid, r.map_start, r.map_end, r.map_offset,
				       r.module, r.build_id);
		if (r.other_module) {
			/* two files' code at this address during the run: said, named from
			 * neither (not memoized: each stack with it is counted) */
			lines[nl].function = ambiguous_function(prof, r.module, r.other_module);
			if (lines[nl].function != PROF_NONE)
				lines[nl++].line = 0;
			memo = false;
			ambiguous = true;
		}
		for (uint32_t j = 0; j < r.nframes && j < SYM_MAX_INLINE; j++) {
			const struct sym_frame *f = &r.frames[j];

			if (!f->function)
				continue;
			lines[nl].function = f->cfi_named ?
				profile__function_cfi(prof, f->function) :
				profile__function(prof, f->function,
					f->system_name ? f->system_name : f->function, f->file);
			if (lines[nl].function == PROF_NONE)
				continue;
			lines[nl++].line = f->line;
		}
		l = profile__location(prof, map, ip, r.module_offset, lines, nl);
		if (l != PROF_NONE)
			locs[n++] = l;
		if (memo && l != PROF_NONE)
			profile__memo_put(prof, owner, ip, l);
		if (outermost)
			break;
	}
	if (ambiguous)
		profile__add_drop(prof, STACKS_DROP_AMBIGUOUS, 1);
	return n;
}

/* The mapping of a kernel region: "[kernel.kallsyms]", "[bpf]" or "[module]", shared by every
 * process (pid 0). */
static uint32_t kernel_mapping(struct profile *prof, const char *module, uint64_t start,
			       uint64_t end)
{
	char name[96];

	if (!module)
		return profile__mapping(prof, 0, start, end, 0, STACKS_KERNEL_MAPPING, NULL);
	snprintf(name, sizeof(name), "[%s]", module);
	return profile__mapping(prof, 0, start, end, 0, name, NULL);
}

static uint32_t kernel_locs(struct profile *prof, const struct ksyms *ks, const __u64 *ips,
			    uint32_t nr, bool first_exact, uint32_t *locs)
{
	uint64_t core_start = 0, core_end = 0;
	uint32_t n = 0;

	ksyms__core_bounds(ks, &core_start, &core_end);
	for (uint32_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i], at = (i > 0 || !first_exact) && ip ? ip - 1 : ip, off;
		struct prof_line line = { .line = 0 };
		struct ksym_info ki;
		uint32_t map, l;
		bool named;

		/* return addresses are looked up at the call instruction: a call that is the
		 * last instruction of a function returns into the next one */
		named = ksyms__lookup(ks, at, &ki) == 0;
		if (!ki.module && !named) {
			ki.start = core_start;
			ki.end = core_end;
		}
		map = kernel_mapping(prof, ki.module, ki.start, ki.end);
		if (map == PROF_NONE)
			continue;
		/* the offset into the region is what stays the same across boots (KASLR) and
		 * module loads */
		off = ki.end && ip >= ki.start ? ip - ki.start : ip;
		if (named) {
			line.function = profile__function(prof, ki.name, ki.name, NULL);
			if (line.function == PROF_NONE)
				named = false;
		}
		l = profile__location(prof, map, ip, off, named ? &line : NULL, named ? 1 : 0);
		if (l != PROF_NONE)
			locs[n++] = l;
	}
	return n;
}

uint32_t stacks__kernel_locs(struct profile *prof, const struct ksyms *ks, const __u64 *ips,
			     uint32_t nr, uint32_t *locs)
{
	return kernel_locs(prof, ks, ips, nr, true, locs);
}

const struct ksyms *stacks__ksyms(const struct log_ctx *lc)
{
	static struct ksyms *ks;
	static bool tried;

	if (!tried) {
		tried = true;
		enum ksyms_from from;

		ks = ksyms__load_system(&from);
		if (ks)
			pr_debug(lc, "kernel symbols from %s", from == KSYMS_FROM_CACHE ?
				 ksyms__cache_path() : "/proc/kallsyms");
		else
			pr_warn(lc, "cannot read kernel symbols (/proc/kallsyms): %s; kernel frames "
				"stay addresses", strerror(errno));
	}
	return ks;
}

uint32_t stacks__tracing_frames(const struct ksyms *ks, const __u64 *ips, uint32_t nr)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"trace_call_bpf", "perf_trace_", "perf_syscall_",
						"__traceiter_", "bpf_get_stack", "__uprobe_perf",
						"uprobe_" };
	uint32_t i;

	if (!ks)
		return 0;
	for (i = 0; i < nr; i++) {
		uint64_t off;
		const char *name = ksyms__resolve(ks, ips[i] - (i > 0), &off);
		bool skip = false;

		for (size_t j = 0; name && j < sizeof(prefixes) / sizeof(prefixes[0]); j++)
			if (!strncmp(name, prefixes[j], strlen(prefixes[j])))
				skip = true;
		if (!skip)
			break;
	}
	/* a stack of nothing but machinery is kept whole: better than none */
	return i < nr ? i : 0;
}

struct counts_read {
	pid_t only;
	struct stack_count *v;
	size_t n, cap;
};

static int collect_count(const void *k, const void *v, void *ctx)
{
	const struct stack_key *key = k;
	struct counts_read *r = ctx;

	if (r->only && key->tgid != (__u32)r->only)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct stack_count *n = realloc(r->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->v = n;
		r->cap = cap;
	}
	r->v[r->n].k = *key;
	r->v[r->n++].n = *(const __u64 *)v;
	return 0;
}

static int count_cmp(const void *a, const void *b)
{
	const struct stack_count *x = a, *y = b;

	if (x->k.tgid != y->k.tgid)
		return x->k.tgid < y->k.tgid ? -1 : 1;
	return x->k.aux < y->k.aux ? -1 : x->k.aux > y->k.aux;
}

int stack_counts__read(int fd, pid_t only, struct stack_count **out, size_t *n)
{
	struct counts_read r = { .only = only };
	int err = bpfutil__map_for_each(fd, sizeof(struct stack_key), sizeof(__u64),
					collect_count, &r);

	if (err) {
		free(r.v);
		*out = NULL;
		*n = 0;
		return err;
	}
	if (r.n)
		qsort(r.v, r.n, sizeof(*r.v), count_cmp);
	*out = r.v;
	*n = r.n;
	return 0;
}

int stack_counts__take(int fd, struct stack_count **out, size_t *n)
{
	struct counts_read r = { 0 };
	int err = bpfutil__map_take(fd, sizeof(struct stack_key), sizeof(__u64), collect_count, &r);

	if (r.n)
		qsort(r.v, r.n, sizeof(*r.v), count_cmp);
	*out = r.v;
	*n = r.n;
	return err;
}

struct records_read {
	size_t key_size, val_size, rec_size, val_off;
	pid_t only;
	char *v;
	size_t n, cap;
};

static int collect_record(const void *k, const void *v, void *ctx)
{
	struct records_read *r = ctx;
	char *rec;

	if (r->only && ((const struct stack_key *)k)->tgid != (__u32)r->only)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		char *g = realloc(r->v, cap * r->rec_size);

		if (!g)
			return -ENOMEM;
		r->v = g;
		r->cap = cap;
	}
	rec = r->v + r->n++ * r->rec_size;
	memcpy(rec, k, r->key_size);
	memcpy(rec + r->val_off, v, r->val_size);
	return 0;
}

int stack_records__read(int fd, size_t key_size, size_t val_size, size_t rec_size,
			size_t val_off, pid_t only, bool take, void **out, size_t *n)
{
	struct records_read r = { .key_size = key_size, .val_size = val_size,
				  .rec_size = rec_size, .val_off = val_off, .only = only };
	int err = take ? bpfutil__map_take(fd, key_size, val_size, collect_record, &r)
		       : bpfutil__map_for_each(fd, key_size, val_size, collect_record, &r);

	*out = r.v;
	*n = r.n;
	return err;
}

void stack_table__fetch_records(struct stack_table *st, int stacks_fd, const void *recs,
				size_t n, size_t rec_size)
{
	for (size_t i = 0; i < n; i++) {
		const struct stack_key *k = (const void *)((const char *)recs + i * rec_size);

		stack_table__fetch(st, stacks_fd, k->ustack);
		stack_table__fetch(st, stacks_fd, k->kstack);
	}
}

uint32_t stacks__key_locs(struct profile *prof, const struct stack_table *st,
			  const struct ksyms *ks, struct sym_proc *sp, pid_t pid,
			  const struct stack_key *k, bool strip_tracing, uint32_t *locs)
{
	const struct stack_trace *t;
	uint32_t n = 0;

	t = k->kstack ? stack_table__get(st, k->kstack) : NULL;
	/* a stack the count refers to but the map no longer has (emptied while a program was
	 * referring to it: stack_map__clear_except): said, not shown as a shorter stack */
	if (k->kstack && !t)
		locs[n++] = stacks__named_loc(prof, "[stack lost]");
	if (t && t->nr) {
		uint32_t nr = t->nr < STACK_MAX_DEPTH ? t->nr : STACK_MAX_DEPTH;
		uint32_t skip = strip_tracing ? stacks__tracing_frames(ks, t->ips, nr) : 0;

		/* past the machinery, the first frame is a return address too */
		n += kernel_locs(prof, ks, t->ips + skip, nr - skip, skip == 0, locs + n);
	}
	if (k->flags & STACK_KEY_USER_UNSEEN)
		locs[n++] = stacks__named_loc(prof, "[user stack not seen]");
	t = k->ustack ? stack_table__get(st, k->ustack) : NULL;
	if (k->ustack && !t)
		locs[n++] = stacks__named_loc(prof, "[stack lost]");
	if (t && t->nr)
		n += stacks__user_locs(prof, sp, pid, t->ips,
				       t->nr < STACK_MAX_DEPTH ? t->nr : STACK_MAX_DEPTH,
				       k->flags & STACK_KEY_USER_EXACT, locs + n);
	return n;
}

uint32_t stacks__named_loc(struct profile *prof, const char *name)
{
	struct prof_line line = { .line = 0 };

	line.function = profile__function(prof, name, name, NULL);
	if (line.function == PROF_NONE)
		return PROF_NONE;
	/* address 0 (never code): locations with the same address are told apart by their
	 * function */
	return profile__location(prof, PROF_NONE, 0, 0, &line, 1);
}

int stack_refs__add(struct stack_refs *r, uint64_t h)
{
	if (!h)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		uint64_t *n = realloc(r->h, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->h = n;
		r->cap = cap;
	}
	r->h[r->n++] = h;
	return 0;
}

struct ref_walk {
	struct stack_refs *r;
	const struct stack_ref_map *m;
};

static int add_entry_refs(const void *k, const void *v, void *ctx)
{
	const struct ref_walk *w = ctx;
	int err = 0;

	for (uint32_t i = 0; i < w->m->n && !err; i++) {
		uint32_t at = w->m->at[i];
		const char *in = at < w->m->key_size ? (const char *)k + at
						     : (const char *)v + (at - w->m->key_size);
		__u64 h;

		memcpy(&h, in, sizeof(h));
		err = stack_refs__add(w->r, h);
	}
	return err;
}

/* A per-CPU array's one slot: each CPU's value (the kernel pads them to 8 bytes). Passed over
 * when it cannot be read. */
static int add_percpu_refs(struct ref_walk *w)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	size_t step = (w->m->val_size + 7) / 8 * 8;
	char *v = ncpus > 0 ? calloc((size_t)ncpus, step) : NULL;
	__u32 zero = 0;

	if (v && !bpf_map_lookup_elem(w->m->fd, &zero, v))
		for (int i = 0; i < ncpus && !err; i++)
			err = add_entry_refs(&zero, v + (size_t)i * step, w);
	free(v);
	return err;
}

int stack_refs__add_maps(struct stack_refs *r, const struct stack_ref_map *maps, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct ref_walk w = { .r = r, .m = &maps[i] };

		err = maps[i].percpu ? add_percpu_refs(&w)
				     : bpfutil__map_for_each(maps[i].fd, maps[i].key_size,
							     maps[i].val_size, add_entry_refs, &w);
	}
	return err;
}

static int keep_taken(const void *k, const void *v, void *ctx)
{
	return ctx ? stack_table__add(ctx, *(const __u64 *)k, v) : 0;
}

size_t stack_map__reclaim(int map_fd, struct stack_table *t, stack_refs_fn refs, void *ctx)
{
	struct stack_table *taken = refs ? stack_table__new() : NULL;
	struct stack_refs r = { 0 };
	struct stack_trace *full = calloc(1, sizeof(*full));
	size_t back = 0;

	if ((refs && !taken) || !full)
		goto out;
	bpfutil__map_take(map_fd, sizeof(__u64), sizeof(struct stack_trace), keep_taken, taken);
	if (t)
		stack_table__clear(t);
	if (refs && refs(ctx, &r))
		goto out;
	for (size_t i = 0; i < r.n; i++) {
		const struct stack_trace *st = stack_table__get(taken, r.h[i]);
		uint64_t nr;

		if (!st)
			continue;	/* not taken: interned since, or back already */
		nr = st->nr < STACK_MAX_DEPTH ? st->nr : STACK_MAX_DEPTH;
		memset(full, 0, sizeof(*full));
		memcpy(full, st, offsetof(struct stack_trace, ips) + nr * sizeof(st->ips[0]));
		if (!bpf_map_update_elem(map_fd, &r.h[i], full, BPF_NOEXIST))
			back++;
	}
out:
	free(r.h);
	free(full);
	stack_table__free(taken);
	return back;
}

void stack_map__clear(int map_fd, struct stack_table *t)
{
	stack_map__reclaim(map_fd, t, NULL, NULL);
}
