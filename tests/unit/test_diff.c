/* Comparing profiles (src/profile/diff.c) and rendering the comparison (src/output/diff_text.c,
 * the diff mode of svg.c in diff_svg.c): two hand-built runs of one program, at other pids,
 * load addresses, module paths and line numbers, with one call inlined in one run and not in
 * the other, line up stack by stack; every stack's base, new, delta and max are right; the text
 * table matches tests/golden/diff.txt byte for byte (UPDATE_GOLDEN=1 rewrites it); the SVG is a
 * differential flame graph (xmllint when installed); and a diff survives pprof and back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/flame.h"
#include "output/output.h"
#include "profile/profile.h"

#define GOLDEN_DIFF "tests/golden/diff.txt"

/* ---- two runs of one program ------------------------------------------------------------ */

struct run {
	uint32_t pid;
	uint64_t exe_base, libc_base, foo_base;	/* load addresses (ASLR) */
	const char *exe;			/* the program's path */
	int line_shift;				/* the source was edited */
	bool inlined;				/* work_inl inlined into work */
};

static uint32_t fn(struct profile *p, const char *name, const char *file)
{
	uint32_t i = profile__function(p, name, name, file);

	assert_int_not_equal(i, PROF_NONE);
	return i;
}

static uint32_t loc1(struct profile *p, uint32_t map, uint64_t base, uint64_t off, uint32_t f,
		     int64_t line)
{
	struct prof_line l = { f, line };
	uint32_t i = profile__location(p, map, base + off, off, f == PROF_NONE ? NULL : &l,
				       f == PROF_NONE ? 0 : 1);

	assert_int_not_equal(i, PROF_NONE);
	return i;
}

/* What the program allocates in one run, alloc_space in bytes (alloc_objects = bytes / 10). */
struct site {
	const char *alloc;	/* malloc or calloc */
	const char *caller;	/* called from main; "work": work_inl <- work; "foo": libfoo */
	int64_t bytes;
	uint32_t pid_add;	/* a second process of the same run */
};

static struct profile *run_profile(const struct run *r, const struct site *sites, size_t n)
{
	struct profile *p = profile__new("mem");
	uint32_t m_exe, m_libc, m_foo, f_start, f_main, l_start, l_main, i;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	m_exe = profile__mapping(p, r->pid, r->exe_base, r->exe_base + 0x10000, 0, r->exe, NULL);
	m_libc = profile__mapping(p, r->pid, r->libc_base, r->libc_base + 0x200000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_foo = profile__mapping(p, r->pid, r->foo_base, r->foo_base + 0x10000, 0,
				 "/opt/foo/libfoo.so", NULL);
	f_start = fn(p, "__libc_start_call_main", NULL);
	f_main = fn(p, "main", "prog.c");
	l_start = loc1(p, m_libc, r->libc_base, 0x29d90, f_start, 0);
	l_main = loc1(p, m_exe, r->exe_base, 0x1100, f_main, 50 + r->line_shift);

	for (i = 0; i < n; i++) {
		const struct site *s = &sites[i];
		uint32_t stack[8], k = 0;
		int64_t v[2] = { s->bytes / 10, s->bytes };

		stack[k++] = loc1(p, m_libc, r->libc_base, !strcmp(s->alloc, "malloc") ? 0xa1234 :
				  0xa5678, fn(p, s->alloc, NULL), 0);
		if (!strcmp(s->caller, "work") && r->inlined) {
			struct prof_line lines[2] = {
				{ fn(p, "work_inl", "prog.c"), 30 + r->line_shift },
				{ fn(p, "work", "prog.c"), 40 + r->line_shift },
			};
			uint32_t l = profile__location(p, m_exe, r->exe_base + 0x1200, 0x1200,
						       lines, 2);

			assert_int_not_equal(l, PROF_NONE);
			stack[k++] = l;
		} else if (!strcmp(s->caller, "work")) {
			stack[k++] = loc1(p, m_exe, r->exe_base, 0x1300,
					  fn(p, "work_inl", "prog.c"), 31 + r->line_shift);
			stack[k++] = loc1(p, m_exe, r->exe_base, 0x1200, fn(p, "work", "prog.c"),
					  41 + r->line_shift);
		} else if (!strcmp(s->caller, "foo")) {
			/* no symbols for libfoo: matched by module and offset */
			stack[k++] = loc1(p, m_foo, r->foo_base, 0x1a2b, PROF_NONE, 0);
		} else {
			stack[k++] = loc1(p, m_exe, r->exe_base, 0x1400 + 16 * i,
					  fn(p, s->caller, "prog.c"), 60 + i + r->line_shift);
		}
		stack[k++] = l_main;
		stack[k++] = l_start;
		assert_non_null(profile__add_sample(p, stack, k, v, r->pid + s->pid_add));
		assert_non_null(profile__add_process(p, r->pid + s->pid_add, "prog", NULL));
	}
	return p;
}

static struct profile *base_profile(void)
{
	static const struct run r = {
		.pid = 100, .exe_base = 0x555555554000, .libc_base = 0x7f0000000000,
		.foo_base = 0x7f2000000000, .exe = "/build/1/prog", .inlined = true,
	};
	static const struct site sites[] = {
		{ "malloc", "work", 100, 0 },
		{ "malloc", "work", 50, 1 },	/* the same stack in a second process: summed */
		{ "malloc", "parse", 200, 0 },
		{ "malloc", "old_path", 80, 0 },
		{ "malloc", "same", 10, 0 },
		{ "malloc", "foo", 30, 0 },
	};

	return run_profile(&r, sites, sizeof(sites) / sizeof(sites[0]));
}

static struct profile *new_profile(void)
{
	static const struct run r = {
		.pid = 200, .exe_base = 0x560000000000, .libc_base = 0x7f8000000000,
		.foo_base = 0x7f9000000000, .exe = "/build/2/prog", .line_shift = 3,
	};
	static const struct site sites[] = {
		{ "malloc", "same", 10, 0 },
		{ "malloc", "work", 300, 0 },
		{ "malloc", "parse", 50, 0 },
		{ "calloc", "new_path", 40, 0 },
		{ "malloc", "foo", 45, 0 },
	};

	return run_profile(&r, sites, sizeof(sites) / sizeof(sites[0]));
}

/* ---- helpers ---------------------------------------------------------------------------- */

#include "golden.h"

/* The diff sample whose frames, leaf first, are `names` joined by ";". */
static const struct prof_sample *find_stack(const struct profile *d, const char *names)
{
	char buf[512], name[128];
	uint32_t i, j;

	for (i = 0; i < d->nsamples; i++) {
		const struct prof_sample *s = &d->samples[i];

		buf[0] = '\0';
		for (j = 0; j < s->nlocs; j++) {
			profile__frame_name(d, &d->locations[s->locs[j]], 0, name, sizeof(name));
			if (j)
				strcat(buf, ";");
			strcat(buf, name);
		}
		if (!strcmp(buf, names))
			return s;
	}
	fail_msg("no stack %s in the diff", names);
	return NULL;
}

static void expect(const struct profile *d, const char *names, int64_t base, int64_t new)
{
	const struct prof_sample *s = find_stack(d, names);

	assert_true(s->values[PROF_DIFF_BASE] == base);
	assert_true(s->values[PROF_DIFF_NEW] == new);
	assert_true(s->values[PROF_DIFF_DELTA] == new - base);
	assert_true(s->values[PROF_DIFF_MAX] == (new > base ? new : base));
	assert_int_equal(s->pid, 0);
}

/* The one-frame stack `name`: its base, new and delta. */
static void expect_delta(const struct profile *d, const char *name, int64_t base, int64_t new,
			 int64_t delta)
{
	const struct prof_sample *s = find_stack(d, name);

	assert_true(s->values[PROF_DIFF_BASE] == base);
	assert_true(s->values[PROF_DIFF_NEW] == new);
	assert_true(s->values[PROF_DIFF_DELTA] == delta);
}

static struct profile *make_diff(void)
{
	struct profile *b = base_profile(), *n = new_profile(), *d;

	d = profile__diff(b, n, NULL);
	assert_non_null(d);
	assert_int_equal(profile__set_meta(d, "base.pb.gz -> new.pb.gz", NULL, NULL, 0, 0), 0);
	assert_int_equal(profile__add_note(d, "base base.pb.gz: mem profile of ./prog"), 0);
	profile__free(b);
	profile__free(n);
	return d;
}

/* ---- the comparison --------------------------------------------------------------------- */

static void test_matching(void **state)
{
	struct profile *d = make_diff();
	const char *start = "main;__libc_start_call_main";
	char s[256];

	assert_true(profile__is_diff(d));
	assert_string_equal(d->mode, "diff");
	assert_int_equal(d->ntypes, PROF_DIFF_NTYPES);
	assert_string_equal(d->types[PROF_DIFF_MAX].type, "alloc_space");
	assert_string_equal(d->types[PROF_DIFF_BASE].type, "base");
	assert_string_equal(d->types[PROF_DIFF_NEW].type, "new");
	assert_string_equal(d->types[PROF_DIFF_DELTA].type, "delta");
	assert_string_equal(d->types[PROF_DIFF_DELTA].unit, "bytes");
	assert_int_equal(d->default_type, PROF_DIFF_MAX);
	assert_int_equal(d->nprocesses, 0);

	/* six distinct stacks: the other pid's copy merged in, inline or not alike */
	assert_int_equal(d->nsamples, 6);
	snprintf(s, sizeof(s), "malloc;work_inl;work;%s", start);
	expect(d, s, 150, 300);
	snprintf(s, sizeof(s), "malloc;parse;%s", start);
	expect(d, s, 200, 50);
	snprintf(s, sizeof(s), "malloc;old_path;%s", start);
	expect(d, s, 80, 0);
	snprintf(s, sizeof(s), "calloc;new_path;%s", start);
	expect(d, s, 0, 40);
	snprintf(s, sizeof(s), "malloc;same;%s", start);
	expect(d, s, 10, 10);
	/* unsymbolized, at another load address: the same module offset */
	snprintf(s, sizeof(s), "malloc;libfoo.so+0x1a2b;%s", start);
	expect(d, s, 30, 45);
	/* one function, one frame: main is one location whatever its address or line */
	assert_int_equal(d->nfunctions, 10);
	profile__free(d);
}

static void test_other_type(void **state)
{
	struct profile *b = base_profile(), *n = new_profile(), *d;

	d = profile__diff(b, n, "alloc_objects");
	assert_non_null(d);
	assert_string_equal(d->types[PROF_DIFF_MAX].type, "alloc_objects");
	assert_string_equal(d->types[PROF_DIFF_MAX].unit, "count");
	expect(d, "malloc;work_inl;work;main;__libc_start_call_main", 15, 30);
	profile__free(d);
	profile__free(b);
	profile__free(n);
}

static void test_errors(void **state)
{
	struct profile *b = base_profile(), *n = new_profile(), *x;

	/* a type one of them lacks */
	errno = 0;
	assert_null(profile__diff(b, n, "cpu"));
	assert_int_equal(errno, EINVAL);
	/* units that differ */
	x = profile__new("mem");
	assert_int_equal(profile__add_type(x, "alloc_space", "count"), 0);
	errno = 0;
	assert_null(profile__diff(b, x, NULL));
	assert_int_equal(errno, EINVAL);
	profile__free(x);
	/* a type named like one of the diff's own */
	x = profile__new("odd");
	assert_int_equal(profile__add_type(x, "delta", "count"), 0);
	errno = 0;
	assert_null(profile__diff(x, x, NULL));
	assert_int_equal(errno, EINVAL);
	assert_false(profile__is_diff(x));
	assert_false(profile__is_diff(b));
	profile__free(x);
	profile__free(b);
	profile__free(n);
}

/* Two runs with the same numbers: nothing changed. */
static void test_no_change(void **state)
{
	struct profile *b = base_profile(), *n = base_profile(), *d;
	char *out;
	uint32_t i;

	d = profile__diff(b, n, NULL);
	assert_non_null(d);
	for (i = 0; i < d->nsamples; i++)
		assert_true(d->samples[i].values[PROF_DIFF_DELTA] == 0);
	out = render(&output_diff_text, d, NULL, NULL);
	assert_non_null(strstr(out, "Stacks:    5: 0 grew, 0 shrank, 0 appeared, 0 vanished, "
				    "5 unchanged\n"));
	assert_non_null(strstr(out, "No changes: every stack has the same alloc_space in both "
				    "profiles.\n"));
	free(out);
	profile__free(d);
	profile__free(b);
	profile__free(n);
}

/* ---- frames the modes name -------------------------------------------------------------- */

/* One run of a lock, an offcpu --wakers --per-thread and a stacks profile in one: the modes'
 * synthetic frames (stacks__named_loc: no mapping, no source file) carry the run's futex
 * address, a kernel lock's address, an owner's pid, the waker's pid and the thread's id. */
struct named_run {
	uint32_t pid;
	uint64_t exe_base;
	uint64_t futex, klock;	/* ASLR: a global's address, a kernel heap lock's */
};

static uint32_t named(struct profile *p, const char *fmt, ...)
{
	struct prof_line l = { .line = 0 };
	char name[128];
	va_list ap;
	uint32_t i;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	l.function = fn(p, name, NULL);
	i = profile__location(p, PROF_NONE, l.function + 1, l.function + 1, &l, 1);
	assert_int_not_equal(i, PROF_NONE);
	return i;
}

static struct profile *named_profile(const struct named_run *r, int64_t scale)
{
	struct profile *p = profile__new("lock");
	uint32_t m_exe, m_k, user[5], k[3], i, st[16], n;
	static const char *const ufn[] = { "futex_wait", "__lll_lock_wait", "worker", "open_a",
					   "open_b" };
	static const char *const kfn[] = { "__schedule", "rwsem_down_write_slowpath",
					   "do_syscall_64" };
	int64_t v[1];

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	m_exe = profile__mapping(p, r->pid, r->exe_base, r->exe_base + 0x10000, 0, "/bin/prog",
				 NULL);
	m_k = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
			       "[kernel.kallsyms]", NULL);
	for (i = 0; i < 5; i++)
		user[i] = loc1(p, m_exe, r->exe_base, 0x1100 + 0x10 * i, fn(p, ufn[i], "prog.c"),
			       10 + i);
	for (i = 0; i < 3; i++)
		k[i] = loc1(p, m_k, 0xffffffff81000000, 0x1000 * (i + 1), fn(p, kfn[i], NULL), 0);

	/* lock: a futex in a global, a kernel lock by address, one by owner, one by symbol */
	v[0] = 10 * scale;
	n = 0;
	st[n++] = named(p, "futex 0x%" PRIx64 " (futex_wait)", r->futex);
	st[n++] = k[2];
	st[n++] = user[0];
	st[n++] = user[1];
	st[n++] = user[2];
	assert_non_null(profile__add_sample(p, st, n, v, r->pid));
	v[0] = 20 * scale;
	st[0] = named(p, "0x%" PRIx64 " (mutex)", r->klock);
	assert_non_null(profile__add_sample(p, st, n, v, r->pid));
	v[0] = 30 * scale;
	st[0] = named(p, "mmap_lock of %u (rwsem:W)", r->pid);
	st[1] = k[1];
	assert_non_null(profile__add_sample(p, st, 2, v, r->pid));
	v[0] = 40;
	st[0] = named(p, "jiffies_lock+0x8 (spinlock)");
	assert_non_null(profile__add_sample(p, st, 2, v, r->pid));

	/* offcpu --wakers --per-thread: the waker's name (its thread's and its process's), its
	 * frames upside down, "--", the blocked stack, the thread */
	v[0] = 50 * scale;
	n = 0;
	st[n++] = named(p, "waker: pool-3 [%u] of prog (%u)", r->pid + 3, r->pid + 1);
	st[n++] = user[2];
	st[n++] = named(p, "--");
	st[n++] = k[0];
	st[n++] = k[2];
	st[n++] = user[0];
	st[n++] = user[2];
	st[n++] = named(p, "worker [%u]", r->pid + 2);
	assert_non_null(profile__add_sample(p, st, n, v, r->pid));
	/* offcpu --wakers: the waker's process only */
	v[0] = 55 * scale;
	st[0] = named(p, "waker: prog (%u)", r->pid + 1);
	assert_non_null(profile__add_sample(p, st, n - 1, v, r->pid));

	/* stacks: the event, the syscall's kernel frames, two callers that only they tell apart */
	for (i = 0; i < 2; i++) {
		v[0] = (60 + 10 * i) * scale;
		n = 0;
		st[n++] = named(p, "syscalls:sys_enter_openat");
		st[n++] = k[2];
		st[n++] = user[0];
		st[n++] = user[3 + i];
		st[n++] = user[2];
		assert_non_null(profile__add_sample(p, st, n, v, r->pid));
	}
	/* names that hold no run's number stay as they are */
	v[0] = 80;
	st[0] = named(p, "kmem_cache_alloc [kmalloc-64]");
	st[1] = named(p, "sda write (sync)");
	assert_non_null(profile__add_sample(p, st, 2, v, r->pid));
	assert_non_null(profile__add_process(p, r->pid, "prog", NULL));
	return p;
}

static const struct named_run named_a = { 100, 0x555555554000, 0x55de740a00e0,
					  0xffff888101234500 };
static const struct named_run named_b = { 4242, 0x563412340000, 0x5569dd5c50e0,
					  0xffff8881abcdef00 };

/* Two runs that differ only in their pids, tids and addresses line up: every synthetic frame
 * is matched without them (the futex was "futex 0x55de740a00e0 (futex_wait)" in one run and
 * "futex 0x5569dd5c50e0 (futex_wait)" in the other: every stack vanished and appeared). */
static void test_named_frames(void **state)
{
	struct profile *a = named_profile(&named_a, 1), *b = named_profile(&named_b, 1);
	struct profile *d = profile__diff(a, b, NULL);
	char *out;

	assert_non_null(d);
	assert_int_equal(d->nsamples, 9);
	for (uint32_t i = 0; i < d->nsamples; i++)
		assert_true(d->samples[i].values[PROF_DIFF_DELTA] == 0);
	out = render(&output_diff_text, d, NULL, NULL);
	assert_non_null(strstr(out, "Stacks:    9: 0 grew, 0 shrank, 0 appeared, 0 vanished, "
				    "9 unchanged\n"));
	assert_non_null(strstr(out, "No changes: every stack has the same contentions"));
	free(out);
	/* the names left: the futex by its class, the kernel locks by their class or owner */
	expect(d, "futex (futex_wait);do_syscall_64;futex_wait;__lll_lock_wait;worker", 10, 10);
	expect(d, "lock (mutex);do_syscall_64;futex_wait;__lll_lock_wait;worker", 20, 20);
	expect(d, "mmap_lock (rwsem:W);rwsem_down_write_slowpath", 30, 30);
	expect(d, "jiffies_lock+0x8 (spinlock);rwsem_down_write_slowpath", 40, 40);
	expect(d, "waker: pool-3 of prog;worker;--;__schedule;do_syscall_64;futex_wait;worker;"
	       "worker", 50, 50);
	expect(d, "waker: prog;worker;--;__schedule;do_syscall_64;futex_wait;worker", 55, 55);
	expect(d, "kmem_cache_alloc [kmalloc-64];sda write (sync)", 80, 80);
	profile__free(d);
	profile__free(b);
	profile__free(a);
}

/* A run's futexes named by where they live (ebprof lock): each its own row in a diff of two runs
 * of one program whatever its addresses, process and thread ids; before, every futex of a class
 * was one "futex (futex_wait)" row, the global mutex's waits summed with the heap's. */
static struct profile *placed_profile(uint64_t heap, uint64_t stack, uint32_t tid, int64_t scale)
{
	struct profile *p = profile__new("lock");
	uint32_t m_exe, user, st[2];
	int64_t v[1];

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	m_exe = profile__mapping(p, tid - 1, heap & ~0xfffffULL, (heap & ~0xfffffULL) + 0x10000,
				 0, "/bin/prog", NULL);
	user = loc1(p, m_exe, heap & ~0xfffffULL, 0x1100, fn(p, "contend", "prog.c"), 10);
	st[1] = user;
#define PLACED(count, ...)						\
	do {								\
		v[0] = (count) * scale;					\
		st[0] = named(p, __VA_ARGS__);				\
		assert_non_null(profile__add_sample(p, st, 2, v, tid - 1)); \
	} while (0)
	PLACED(3, "big_lock in prog (futex_wait)");
	PLACED(2, "counters+0x10 in prog (futex_wait)");
	PLACED(4, "futex 0x%" PRIx64 " in [heap] (futex_wait)", heap);
	PLACED(6, "futex 0x%" PRIx64 " in [stack] of thread %u (futex_wait)", stack, tid);
	PLACED(5, "futex /dev/shm/q+0x40 (futex_wait)");
#undef PLACED
	assert_non_null(profile__add_process(p, tid - 1, "prog", NULL));
	return p;
}

static void test_placed_futexes(void **state)
{
	struct profile *a = placed_profile(0x55de740a02a0, 0x7f3c2e5ffe80, 1001, 1);
	struct profile *b = placed_profile(0x5569dd5c52a0, 0x7fa01b3ffe80, 2002, 2);
	struct profile *d = profile__diff(a, b, NULL);

	assert_non_null(d);
	assert_int_equal(d->nsamples, 5);
	expect(d, "big_lock in prog (futex_wait);contend", 3, 6);
	expect(d, "counters+0x10 in prog (futex_wait);contend", 2, 4);
	expect(d, "futex in [heap] (futex_wait);contend", 4, 8);
	expect(d, "futex in [stack] of a thread (futex_wait);contend", 6, 12);
	expect(d, "futex /dev/shm/q+0x40 (futex_wait);contend", 5, 10);
	profile__free(d);
	profile__free(b);
	profile__free(a);
}

/* The text table shows what tells stacks apart: past the event and the kernel's frames to the
 * program's (both openat rows read "syscalls:sys_enter_openat <- do_syscall_64 <- ..."), the
 * event, lock or waker in brackets. */
static void test_named_table(void **state)
{
	struct profile *a = named_profile(&named_a, 1), *b = named_profile(&named_b, 2);
	struct profile *d = profile__diff(a, b, NULL);
	char *out;

	assert_non_null(d);
	out = render(&output_diff_text, d, NULL, NULL);
	assert_non_null(strstr(out, "\n    +70  +100.0%    70  140  futex_wait <- open_b <- worker "
				    "[syscalls:sys_enter_openat]\n"));
	assert_non_null(strstr(out, "\n    +60  +100.0%    60  120  futex_wait <- open_a <- worker "
				    "[syscalls:sys_enter_openat]\n"));
	assert_non_null(strstr(out, "\n    +50  +100.0%    50  100  futex_wait <- worker <- worker "
				    "[waker: pool-3 of prog]\n"));
	assert_non_null(strstr(out, "\n    +30  +100.0%    30   60  rwsem_down_write_slowpath "
				    "[mmap_lock (rwsem:W)]\n"));
	assert_non_null(strstr(out, "\n    +20  +100.0%    20   40  futex_wait <- __lll_lock_wait "
				    "<- worker [lock (mutex)]\n"));
	assert_non_null(strstr(out, "\n    +10  +100.0%    10   20  futex_wait <- __lll_lock_wait "
				    "<- worker [futex (futex_wait)]\n"));
	free(out);
	profile__free(d);
	profile__free(b);
	profile__free(a);
}

/* ---- read back; extreme values ---------------------------------------------------------- */

/* A profile without a period (lock, offcpu, io, stacks, kmem; a diff) reads back without one:
 * pprof.c writes "1 of the default type" for pprof's sake, which the reader took for the run's
 * period ("Period: 1 of contentions per sample", "period" in the JSON). A diff reads back
 * without the process of pid 0 its samples carry. */
static void test_reload_no_period(void **state)
{
	struct profile *a = named_profile(&named_a, 1), *b = named_profile(&named_b, 2), *d, *q;
	char *gz, *x, *y;
	size_t len;

	assert_null(a->period_type.type);
	gz = render(&output_pprof, a, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	assert_string_equal(q->mode, "lock");
	assert_null(q->period_type.type);
	x = render(&output_text, q, NULL, NULL);
	assert_null(strstr(x, "Period:"));
	free(x);
	x = render(&output_json, q, NULL, NULL);
	assert_null(strstr(x, "\"period\""));
	free(x);
	/* and writes the same bytes again */
	x = render(&output_pprof, q, NULL, &len);
	assert_memory_equal(gz, x, len);
	free(x);
	free(gz);
	profile__free(q);

	d = profile__diff(a, b, NULL);
	assert_non_null(d);
	gz = render(&output_pprof, d, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	assert_true(profile__is_diff(q));
	assert_null(q->period_type.type);
	assert_int_equal(q->nprocesses, 0);
	x = render(&output_json, d, NULL, NULL);
	y = render(&output_json, q, NULL, NULL);
	assert_string_equal(x, y);
	free(x);
	free(y);
	free(gz);
	profile__free(q);
	profile__free(d);
	profile__free(b);
	profile__free(a);
}

/* Values at the ends of int64_t (any pprof file may hold them) clamp rather than wrap: two
 * samples of INT64_MAX totalled -2, -INT64_MAX -> INT64_MAX was a change of -2 and INT64_MIN
 * -> 0 one of INT64_MIN. */
static void test_extreme_values(void **state)
{
	struct profile *p[2], *d;
	struct prof_line l = { .line = 0 };
	int64_t v[2][3] = { { INT64_MAX, -INT64_MAX, INT64_MIN },
			    { INT64_MAX, INT64_MAX, 0 } };
	uint32_t locs[3];
	char *out;

	for (int i = 0; i < 2; i++) {
		p[i] = profile__new("cpu");
		assert_non_null(p[i]);
		assert_int_equal(profile__add_type(p[i], "samples", "count"), 0);
		for (int k = 0; k < 3; k++) {
			l.function = fn(p[i], k == 0 ? "a" : k == 1 ? "b" : "c", "x.c");
			locs[k] = profile__location(p[i], PROF_NONE, 0x10 + k, 0, &l, 1);
			assert_non_null(profile__add_sample(p[i], &locs[k], 1, &v[i][k], 1));
		}
	}
	/* a twice: INT64_MAX + INT64_MAX */
	assert_non_null(profile__add_sample(p[0], &locs[0], 1, &v[0][0], 2));
	assert_true(profile__type_total(p[1], 0) == INT64_MAX);	/* MAX + MAX + 0 */
	assert_true(profile__type_total(p[0], 0) == -1);	/* MAX - MAX + MIN + MAX */
	out = render(&output_text, p[1], NULL, NULL);
	assert_null(strstr(out, "-2"));
	assert_non_null(strstr(out, "9223372036854775807"));
	free(out);

	d = profile__diff(p[0], p[1], NULL);
	assert_non_null(d);
	expect_delta(d, "a", INT64_MAX, INT64_MAX, 0);	/* the base's two summed, clamped */
	expect_delta(d, "b", -INT64_MAX, INT64_MAX, INT64_MAX);
	expect_delta(d, "c", INT64_MIN, 0, INT64_MAX);
	out = render(&output_diff_text, d, NULL, NULL);
	assert_non_null(strstr(out, "Stacks:    3: 1 grew, 0 shrank, 0 appeared, 1 vanished, "
				    "1 unchanged\n"));
	assert_null(strstr(out, "-2"));
	free(out);
	profile__free(d);
	profile__free(p[0]);
	profile__free(p[1]);
}

/* ---- rendering -------------------------------------------------------------------------- */

static void test_text_golden(void **state)
{
	struct output_opts o = { .top = 20 };
	struct profile *d = make_diff();
	size_t len;
	char *out = render(&output_diff_text, d, &o, &len);

	check_golden(GOLDEN_DIFF, out, len);
	free(out);
	/* --top limits the table and says so */
	o.top = 2;
	out = render(&output_diff_text, d, &o, NULL);
	assert_non_null(strstr(out, "Top 2 changes by size (of 5)\n"));
	assert_null(strstr(out, "old_path"));
	free(out);
	o.top = 1;
	out = render(&output_diff_text, d, &o, NULL);
	assert_non_null(strstr(out, "Top 1 change by size (of 5)\n"));
	free(out);
	/* not a diff: refused */
	{
		struct profile *b = base_profile();
		FILE *f = fopen("/dev/null", "w");

		assert_int_equal(output_diff_text.write(b, NULL, f), -EINVAL);
		fclose(f);
		profile__free(b);
	}
	profile__free(d);
}

static void test_flame_tree(void **state)
{
	struct profile *d = make_diff();
	struct flame *fl = flame__new(d, NULL);
	const struct flame_node *top;

	assert_non_null(fl);
	/* no process level: the root's only child is the program's outermost frame */
	top = &fl->nodes[fl->nodes[0].child];
	assert_int_equal(top->next, FLAME_NONE);
	assert_string_equal(fl->frames[top->frame].name, "__libc_start_call_main");
	/* widths are max(base, new): 300 + 200 + 80 + 40 + 10 + 45 */
	assert_true(fl->nodes[0].total == 675);
	flame__free(fl);
	profile__free(d);
}

static void test_svg(void **state)
{
	struct profile *d = make_diff();
	char *path = scratch("diff.svg"), *cmd;
	size_t len;
	char *out = render(&output_svg, d, NULL, &len);

	assert_non_null(strstr(out, ">ebprof diff: alloc_space (bytes)</text>"));
	assert_non_null(strstr(out, "base 470 B, new 445 B, delta -25 B (-5.3%); widths: "
				    "max(base, new)"));
	/* work grew 150 -> 300: half way to full red */
	assert_non_null(strstr(out, "<title>work\nbase 150 B, new 300 B, delta +150 B "
				    "(+100.0%)\n"));
	assert_non_null(strstr(out, "<title>old_path\nbase 80 B, new 0 B, delta -80 B "
				    "(-100.0%)\n"));
	assert_non_null(strstr(out, "<title>new_path\nbase 0 B, new 40 B, delta +40 B (new)\n"));
	assert_non_null(strstr(out, "<title>same\nbase 10 B, new 10 B, delta 0 B (unchanged)\n"));
	assert_non_null(strstr(out, "fill=\"#e98a7f\""));
	/* vanished: full blue; appeared: full red; unchanged: grey */
	assert_non_null(strstr(out, "delta -80 B (-100.0%)\nfunction, in prog</title><rect"));
	assert_non_null(strstr(out, "fill=\"#2c6fcf\""));
	assert_non_null(strstr(out, "fill=\"#d7301f\""));
	assert_non_null(strstr(out, "fill=\"#d8d8d8\""));
	assert_non_null(strstr(out, ">appeared</text>"));
	/* no process frames */
	assert_null(strstr(out, "(0)"));
	assert_null(strstr(out, "<title>prog ("));

	write_file(path, out, len);
	if (run("command -v xmllint >/dev/null 2>&1") == 0) {
		assert_true(asprintf(&cmd, "xmllint --noout '%s'", path) > 0);
		assert_int_equal(run(cmd), 0);
		free(cmd);
	} else {
		print_message("xmllint not installed (libxml2-utils): XML not validated\n");
	}
	unlink(path);
	free(path);
	free(out);
	profile__free(d);
}

/* The diff profile through the generic renderers, and through pprof and back. */
/* A diff of CPU samples is not one of allocations: no temporaries or outstanding columns in
 * its CSV (they were there, all 0, for any diff); a mem diff keeps them. */
static void test_cpu_diff_csv(void **state)
{
	struct profile *p[2], *d;
	struct prof_line l = { .line = 0 };
	int64_t v[2][2] = { { 10, 100000000 }, { 30, 300000000 } };
	uint32_t loc;
	char *csv;

	for (int i = 0; i < 2; i++) {
		p[i] = profile__new("cpu");
		assert_non_null(p[i]);
		assert_int_equal(profile__add_type(p[i], "samples", "count"), 0);
		assert_int_equal(profile__add_type(p[i], "cpu", "nanoseconds"), 0);
		l.function = profile__function(p[i], "burn", "burn", NULL);
		loc = profile__location(p[i], PROF_NONE, 0x10, 0x10, &l, 1);
		assert_non_null(profile__add_sample(p[i], &loc, 1, v[i], 1));
	}
	d = profile__diff(p[0], p[1], "samples");
	assert_non_null(d);
	csv = render(&output_csv, d, NULL, NULL);
	assert_non_null(strstr(csv, "pid,comm,samples,base,new,delta,stack\r\n"));
	assert_null(strstr(csv, "outstanding"));
	free(csv);
	profile__free(d);
	profile__free(p[0]);
	profile__free(p[1]);
	d = make_diff();
	csv = render(&output_csv, d, NULL, NULL);
	assert_non_null(strstr(csv, ",temporary_count,outstanding_count,"));
	free(csv);
	profile__free(d);
}

/* The HTML page of a diff compares: the two totals and the change, the rows by the size of
 * their change with base, new and delta, no process or timeline section, no total of
 * max(base, new) (it said "Total alloc_space 515 B", "0 processes", "No processes were traced")
 * and no delta flame graph (a change can be negative). */
static void test_html(void **state)
{
	struct profile *d = make_diff();
	char *out = render(&output_html, d, NULL, NULL);
	const char *work, *old, *same;

	assert_non_null(strstr(out, "<tr><th>Compared</th>"));
	assert_non_null(strstr(out, "<tr><th>Total base</th><td>470 B</td></tr>"));
	assert_non_null(strstr(out, "<tr><th>Total new</th><td>445 B</td></tr>"));
	assert_non_null(strstr(out, "<tr><th>Change</th><td>-25 B (-5.3%)</td></tr>"));
	assert_null(strstr(out, "<tr><th>Total alloc_space</th>"));
	assert_null(strstr(out, "id=\"processes\""));
	assert_null(strstr(out, "id=\"timeline\""));
	assert_null(strstr(out, ">PID</th>"));
	assert_null(strstr(out, ">Temporary</th>"));
	assert_non_null(strstr(out, "by the size of their change in alloc_space"));
	assert_non_null(strstr(out, ": the larger of base and new</option>"));
	assert_null(strstr(out, ">delta (bytes)</option>"));
	assert_null(strstr(out, "data-type=\"delta\""));
	/* work (+150, its inlined work_inl the site) before old_path (-80) before same (0) */
	work = strstr(out, "<span class=\"fn\">work_inl</span>");
	old = strstr(out, "<span class=\"fn\">old_path</span>");
	same = strstr(out, "<span class=\"fn\">same</span>");
	assert_non_null(work);
	assert_non_null(old);
	assert_non_null(same);
	assert_true(work < old && old < same);
	free(out);
	profile__free(d);
}

static void test_other_outputs(void **state)
{
	struct profile *d = make_diff(), *q;
	char *json, *gz, *a, *b, *folded;
	size_t len;

	json = render(&output_json, d, NULL, NULL);
	assert_non_null(strstr(json, "\"mode\": \"diff\""));
	assert_non_null(strstr(json, "\"base\": 200,"));
	assert_non_null(strstr(json, "\"delta\": -150,"));
	free(json);

	folded = render(&output_folded, d, NULL, NULL);
	assert_non_null(strstr(folded, "__libc_start_call_main;main;work;work_inl;malloc 300\n"));
	free(folded);

	gz = render(&output_pprof, d, NULL, &len);
	q = profile__parse_pprof(gz, len, NULL, NULL, 0);
	assert_non_null(q);
	assert_true(profile__is_diff(q));
	a = render(&output_diff_text, d, NULL, NULL);
	b = render(&output_diff_text, q, NULL, NULL);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(gz);
	profile__free(q);
	profile__free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_other_type),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_named_frames),
		cmocka_unit_test(test_placed_futexes),
		cmocka_unit_test(test_named_table),
		cmocka_unit_test(test_reload_no_period),
		cmocka_unit_test(test_extreme_values),
		cmocka_unit_test(test_text_golden),
		cmocka_unit_test(test_flame_tree),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_cpu_diff_csv),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_other_outputs),
	};

	make_scratch_dir();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
