/* Findings (output/findings.c, docs/FINDINGS.md) on hand-built parts: each rule at its
 * threshold and just below it, what a rule leaves out (samples in uprobe handling or in BPF
 * programs, allocator frames), at most FIND_MAX_PER_RULE per rule, the order of the list,
 * frames without a symbol as subjects of their own, the line a finding names, names of any
 * length, the pid of a finding about one process; and the documents of a run of several modes
 * (output/set.c): text and JSON byte for byte against tests/golden/profile_set.{txt,json}
 * (UPDATE_GOLDEN=1 rewrites them), HTML by its facts, and the per-part file names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/findings.h"
#include "output/output.h"
#include "profile/profile.h"

#include "golden.h"
#include "profile_builder.h"
#include "cpu_fixture.h"
#include "io_fixture.h"

#define SEC 1000000000LL

/* A function at its own address, one frame */
static uint32_t frame(struct profile *p, const char *name, const char *file, int64_t line)
{
	static uint64_t addr = 0x401000;
	uint32_t map = profile__mapping(p, 7, 0x400000, 0x500000, 0, "/usr/bin/app", NULL);

	addr += 0x10;
	return LOC(p, map, addr, addr - 0x400000, { fn(p, name, name, file), line });
}

static struct profile *cpu_part(void)
{
	struct profile *p = profile__new("cpu");

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	return p;
}

static void cpu_samples(struct profile *p, uint32_t leaf, uint32_t caller, int64_t n)
{
	sample(p, STACK(leaf, caller), n, n * 10101010, 0, 0, 7);
}

static struct profile *set_of(struct profile *part, int64_t duration)
{
	struct profile *set = profile__new("profile");

	assert_non_null(set);
	assert_int_equal(profile__add_part(set, part), 0);
	assert_int_equal(findings__compute(set, duration, false), 0);
	return set;
}

static void test_cpu_threshold(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t main_ = frame(p, "main", "app.c", 10);
	uint32_t hot = frame(p, "hash_insert", "/src/table.c", 88);
	uint32_t warm = frame(p, "parse", "/src/parse.c", 5);
	uint32_t rest = frame(p, "other", "/src/other.c", 1);
	uint32_t int3 = frame(p, "asm_exc_int3", NULL, 0);

	cpu_samples(p, hot, main_, 20);		/* 20 of 100: at the threshold */
	cpu_samples(p, warm, main_, 19);	/* 19 of 100: below */
	cpu_samples(p, rest, main_, 61);
	/* in uprobe handling: left out of the shares, and said */
	sample(p, STACK(int3, hot, main_), 50, 0, 0, 0, 7);
	set = set_of(p, 3 * SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].subject, "other (other.c:1)");
	assert_string_equal(set->findings[1].subject, "hash_insert (table.c:88)");
	assert_string_equal(set->findings[1].kind, "cpu_hot_function");
	assert_string_equal(set->findings[1].fact, "hash_insert (table.c:88) is 20% of the CPU "
			    "samples (20 of 100, 202.0 ms of CPU time, in the function itself; 50 "
			    "more samples were in uprobe handling, left out)");
	assert_true(set->findings[1].value == 20.0);
	profile__free(set);
	/* one such sample is one sample (it said "1 more samples were") */
	p = cpu_part();
	main_ = frame(p, "main", "app.c", 10);
	hot = frame(p, "hash_insert", "/src/table.c", 88);
	int3 = frame(p, "asm_exc_int3", NULL, 0);
	cpu_samples(p, hot, main_, 20);
	sample(p, STACK(int3, hot, main_), 1, 0, 0, 0, 7);
	set = set_of(p, 3 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_non_null(strstr(set->findings[0].fact, "; 1 more sample was in uprobe handling, "
				    "left out)"));
	profile__free(set);
}

/* A kernel function in the region `region` ("[kernel.kallsyms]", "[bpf]"), as core/stacks.c
 * makes them: mappings of pid 0 */
static uint32_t kframe(struct profile *p, const char *region, const char *name)
{
	static uint64_t addr = 0xffffffff81000000ull;
	uint32_t map = profile__mapping(p, 0, 0xffffffff81000000ull, 0xffffffffc0000000ull, 0,
					region, NULL);

	addr += 0x10;
	return LOC(p, map, addr, addr - 0xffffffff81000000ull, { fn(p, name, name, NULL), 0 });
}

/* Samples taken while a BPF program ran in the program's context (the run's other modes'
 * tracepoint programs reading the clock: pvclock_clocksource_read_nowd was a fixture's hottest
 * function under load) are tracing's cost, left out as uprobe handling is, and said */
static void test_cpu_bpf_left_out(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t main_ = frame(p, "main", "app.c", 10);
	uint32_t hot = frame(p, "hash_insert", "/src/table.c", 88);
	uint32_t rest = frame(p, "other", "/src/other.c", 1);
	uint32_t clock = kframe(p, "[kernel.kallsyms]", "pvclock_clocksource_read_nowd");
	uint32_t prog = kframe(p, "[bpf]", "bpf_prog_4f2a6b7c8d9e0f11_offcpu_switch");
	uint32_t run = kframe(p, "[kernel.kallsyms]", "bpf_trace_run4");
	uint32_t sched = kframe(p, "[kernel.kallsyms]", "__schedule");
	uint32_t int3 = frame(p, "asm_exc_int3", NULL, 0);

	cpu_samples(p, hot, main_, 20);
	cpu_samples(p, rest, main_, 80);
	/* 30 of 130 (23%) in the clock read of a program, 10 in the kernel's call into one */
	sample(p, STACK(clock, prog, run, sched, hot, main_), 30, 0, 0, 0, 7);
	sample(p, STACK(run, sched, hot, main_), 10, 0, 0, 0, 7);
	set = set_of(p, 3 * SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].subject, "other (other.c:1)");
	assert_string_equal(set->findings[1].subject, "hash_insert (table.c:88)");
	assert_string_equal(set->findings[1].fact, "hash_insert (table.c:88) is 20% of the CPU "
			    "samples (20 of 100, 202.0 ms of CPU time, in the function itself; 40 "
			    "more samples were in BPF programs, left out)");
	assert_string_equal(set->findings[1].threshold, "a function with at least 20% of the CPU "
			    "samples in itself, out of at least 20 samples (samples in uprobe "
			    "handling or in BPF programs left out)");
	profile__free(set);
	/* both kinds: each counted once (a uprobe's BPF program is the uprobe's) */
	p = cpu_part();
	main_ = frame(p, "main", "app.c", 10);
	hot = frame(p, "hash_insert", "/src/table.c", 88);
	prog = kframe(p, "[bpf]", "bpf_prog_0123456789abcdef_mem_malloc");
	int3 = frame(p, "asm_exc_int3", NULL, 0);
	clock = kframe(p, "[kernel.kallsyms]", "pvclock_clocksource_read_nowd");
	cpu_samples(p, hot, main_, 20);
	sample(p, STACK(clock, prog, int3, hot, main_), 5, 0, 0, 0, 7);
	sample(p, STACK(clock, prog, hot, main_), 1, 0, 0, 0, 7);
	set = set_of(p, 3 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "hash_insert (table.c:88)");
	assert_non_null(strstr(set->findings[0].fact, "; 6 more samples were in uprobe handling "
				    "(5) or BPF programs (1), left out)"));
	profile__free(set);
	/* one: one sample */
	p = cpu_part();
	main_ = frame(p, "main", "app.c", 10);
	hot = frame(p, "hash_insert", "/src/table.c", 88);
	prog = kframe(p, "[bpf]", "bpf_prog_4f2a6b7c8d9e0f11_offcpu_switch");
	cpu_samples(p, hot, main_, 20);
	sample(p, STACK(prog, hot, main_), 1, 0, 0, 0, 7);
	set = set_of(p, 3 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_non_null(strstr(set->findings[0].fact, "; 1 more sample was in BPF programs, "
				    "left out)"));
	profile__free(set);
}

static void test_cpu_few_samples(void **state)
{
	struct profile *p = cpu_part(), *set;

	/* 19 samples in all: too few to say anything */
	cpu_samples(p, frame(p, "spin", "s.c", 1), frame(p, "main", "s.c", 9), 19);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 0);
	profile__free(set);
}

static void test_cpu_at_most_three(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t main_ = frame(p, "main", "m.c", 1);
	const char *names[] = { "a", "b", "c", "d" };

	for (int i = 0; i < 4; i++)
		cpu_samples(p, frame(p, names[i], "m.c", 2 + i), main_, 25 + i);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, FIND_MAX_PER_RULE);
	/* the largest first */
	assert_string_equal(set->findings[0].subject, "d (m.c:5)");
	assert_string_equal(set->findings[2].subject, "b (m.c:3)");
	/* the fourth that crossed is said, not silently left out */
	assert_non_null(strstr(set->findings[2].fact, " (1 more crossed this threshold: see the "
				    "cpu tab)"));
	assert_null(strstr(set->findings[1].fact, "more crossed"));
	profile__free(set);
}

static struct profile *mem_part(void)
{
	struct profile *p = profile__new("mem");

	assert_non_null(p);
	mem_types(p);
	return p;
}

static void test_mem_rate(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t malloc_ = frame(p, "malloc", "malloc.c", 3281);
	uint32_t main_ = frame(p, "main", "app.c", 30);
	uint32_t parse = frame(p, "parse_line", "/src/parse.c", 12);
	uint32_t slow = frame(p, "load_config", "/src/config.c", 7);
	uint64_t life[22] = { 0 };
	struct prof_sample *s;

	/* 2 MiB/s over 4 s from parse_line, through malloc, in 48-byte blocks: 3 of 4 freed
	 * within 2^20 ns */
	s = sample(p, STACK(malloc_, parse, main_), 174763, 174763 * 48, 0, 0, 7);
	life[10] = 3000;	/* [512 ns, 1 us) */
	life[20] = 1000;	/* [524 us, 1.05 ms) */
	life[21] = 1334;	/* open-ended: 1.05 ms and more */
	assert_int_equal(prof_sample__set_life(p, s, life, 22), 0);
	/* 1 MiB/s less one byte: below */
	sample(p, STACK(malloc_, slow, main_), 1, 4 * 1048576 - 4, 0, 0, 7);
	set = set_of(p, 4 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "mem_alloc_rate");
	assert_string_equal(set->findings[0].subject, "parse_line (parse.c:12)");
	assert_string_equal(set->findings[0].fact, "parse_line (parse.c:12) allocates 2.0 MiB/s "
			    "(8.0 MiB in 4.00 s, 174763 blocks of 48 B on average, 67% of all bytes "
			    "allocated); 75% of its freed blocks lived less than 1.05 ms");
	assert_non_null(strstr(set->findings[0].action, "reuse a buffer"));
	profile__free(set);

	/* one block: "1 block of 4.0 MiB", no average (it said "1 blocks of 4.0 MiB on average") */
	p = mem_part();
	malloc_ = frame(p, "malloc", "malloc.c", 3281);
	main_ = frame(p, "main", "app.c", 30);
	slow = frame(p, "load_config", "/src/config.c", 7);
	sample(p, STACK(malloc_, slow, main_), 1, 4 * 1048576, 0, 0, 7);
	set = set_of(p, 2 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].fact, "load_config (config.c:7) allocates 2.0 MiB/s "
			    "(4.0 MiB in 2.00 s, 1 block of 4.0 MiB, 100% of all bytes allocated)");
	profile__free(set);
}

static void test_mem_long_lived(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t main_ = frame(p, "main", "app.c", 30);
	uint32_t build = frame(p, "build_index", "/src/index.c", 40);
	uint64_t life[22] = { 0 };
	struct prof_sample *s;

	/* 10% of its blocks short-lived: no buffer advice; sampled: "about" */
	p->sampling = "bytes";
	s = sample(p, STACK(build, main_), 1000, 8 << 20, 0, 0, 7);
	life[5] = 10;
	life[21] = 90;
	assert_int_equal(prof_sample__set_life(p, s, life, 22), 0);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_non_null(strstr(set->findings[0].fact, " allocates about 8.0 MiB/s "));
	assert_non_null(strstr(set->findings[0].fact, "; 10% of its freed blocks lived less "));
	assert_non_null(strstr(set->findings[0].action, "callers in the mem flame graph"));
	profile__free(set);
}

static void test_mem_leaks(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t main_ = frame(p, "main", "app.c", 30);
	uint32_t load = frame(p, "load_config", "/src/config.c", 7);
	uint32_t small = frame(p, "tiny", "/src/tiny.c", 2);
	uint32_t malloc_ = frame(p, "malloc", "malloc.c", 1);
	struct prof_sample *s;

	leak_types(p);
	/* values: alloc_objects, alloc_space, inuse_objects, inuse_space, then definite_objects,
	 * definite_space, ... */
	s = sample(p, STACK(malloc_, load, main_), 100, 100000, 100, 100000, 7);
	s->values[4] = 100;
	s->values[5] = 100000;
	/* 1023 bytes: under the threshold */
	s = sample(p, STACK(malloc_, small, main_), 1, 1023, 1, 1023, 7);
	s->values[4] = 1;
	s->values[5] = 1023;
	set = set_of(p, 100 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "mem_definitely_lost");
	assert_string_equal(set->findings[0].fact, "load_config (config.c:7) allocated 97.7 KiB "
			    "(100000 bytes) in 100 blocks that were definitely lost: no pointer "
			    "reached them when the process exited");
	profile__free(set);
}

static void disk_group(struct profile *p, const char *dev, const char *op, int64_t n, int64_t p99)
{
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	assert_int_equal(prof_group__add_label(p, g, "device", dev), 0);
	assert_int_equal(prof_group__add_label(p, g, "op", op), 0);
	assert_int_equal(prof_group__add_stat(p, g, "requests", "REQUESTS", "count", n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "latency_p50_ns", "P50", "nanoseconds",
					      p99 / 4), 0);
	assert_int_equal(prof_group__add_stat(p, g, "latency_p99_ns", "P99", "nanoseconds", p99),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "latency_max_ns", "MAX", "nanoseconds",
					      p99 * 2), 0);
}

static void test_io(void **state)
{
	struct profile *p = profile__new("io"), *set;

	assert_non_null(p);
	disk_group(p, "sda", "read", 1200, 38000000);	/* over */
	disk_group(p, "sda", "write", 20, 10000000);	/* at both thresholds */
	disk_group(p, "vda", "read", 19, 50000000);	/* too few requests */
	disk_group(p, "vda", "write", 5000, 9999999);	/* just under 10 ms */
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].fact, "sda reads: p99 38.0 ms over 1200 requests "
			    "(p50 9.5 ms, max 76.0 ms)");
	assert_string_equal(set->findings[1].subject, "sda write");
	profile__free(set);
}

static void lock_group(struct profile *p, const char *lock, int64_t n, int64_t total)
{
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	assert_int_equal(prof_group__add_label(p, g, "lock", lock), 0);
	assert_int_equal(prof_group__add_label(p, g, "class", "futex_wait"), 0);
	assert_int_equal(prof_group__add_label(p, g, "process", "app[7]"), 0);
	assert_int_equal(prof_group__add_stat(p, g, "contentions", "CONTENTIONS", "count", n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_ns", "TOTAL", "nanoseconds", total),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_avg_ns", "MEAN", "nanoseconds",
					      total / n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_max_ns", "MAX", "nanoseconds",
					      total / 2), 0);
}

/* A lock's group of process pid, with one stack of its waits: the lock's pseudo-frame, then
 * the waiting function (as the lock mode makes them) */
static void lock_waits(struct profile *p, const char *lock, int64_t n, int64_t total,
		       const char *waiter, uint32_t pid)
{
	struct prof_group *g = profile__add_group(p);
	char who[32], leaf_name[64];
	uint32_t leaf;

	if (!p->ntypes) {
		assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
		assert_int_equal(profile__add_type(p, "delay", "nanoseconds"), 0);
	}
	assert_non_null(g);
	snprintf(who, sizeof(who), "app[%u]", pid);
	snprintf(leaf_name, sizeof(leaf_name), "%s (futex_wait)", lock);
	assert_int_equal(prof_group__add_label(p, g, "lock", lock), 0);
	assert_int_equal(prof_group__add_label(p, g, "class", "futex_wait"), 0);
	assert_int_equal(prof_group__add_label(p, g, "process", who), 0);
	assert_int_equal(prof_group__add_stat(p, g, "contentions", "CONTENTIONS", "count", n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_ns", "TOTAL", "nanoseconds", total),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_avg_ns", "MEAN", "nanoseconds",
					      total / n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_max_ns", "MAX", "nanoseconds",
					      total / n), 0);
	leaf = LOC(p, PROF_NONE, 0, 0, { fn(p, leaf_name, NULL, NULL), 0 });
	sample(p, STACK(leaf, frame(p, waiter, strcmp(waiter, "main") ? "/src/dl.c" :
				    "/src/main.c", 2)), n, total, 0, 0, pid);
}

static void test_lock(void **state)
{
	struct profile *p = profile__new("lock"), *set;
	uint32_t m_libc, m_kern, leaf, kfn, lll, worker, start;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	assert_int_equal(profile__add_type(p, "delay", "nanoseconds"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	leaf = LOC(p, PROF_NONE, 0, 0, { fn(p, "futex 0x1000 (futex_wait)", NULL, NULL), 0 });
	kfn = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "futex_wait", NULL, NULL), 0 });
	lll = LOC(p, m_libc, 0x7f0000001000, 0x1000, { fn(p, "__lll_lock_wait", NULL, NULL), 0 });
	worker = frame(p, "worker", "/src/pool.c", 41);
	start = LOC(p, m_libc, 0x7f0000002000, 0x2000, { fn(p, "start_thread", NULL, NULL), 0 });
	/* the waiters' stacks: the lock's pseudo-frame, the kernel, libc, the program */
	sample(p, STACK(leaf, kfn, lll, worker, start), 10, 100000000, 0, 0, 7);
	lock_group(p, "futex 0x1000", 10, 100000000);	/* at both thresholds */
	lock_group(p, "futex 0x2000", 9, 500000000);	/* waited long, but 9 times */
	lock_group(p, "futex 0x3000", 50, 99999999);	/* under 10% of the run */
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "lock_contended");
	assert_string_equal(set->findings[0].subject, "worker (pool.c:41)");
	assert_string_equal(set->findings[0].fact, "worker (pool.c:41) waited 100.0 ms on futex "
			    "0x1000 (futex_wait, app[7]) over 10 contentions (mean 10.0 ms, max "
			    "50.0 ms), in a run of 1.00 s");
	/* about one process: the one its label names */
	assert_int_equal(set->findings[0].pid, 7);
	profile__free(set);
}

/* A lock's group as the lock mode makes it: n contentions (woken waits) of total ns, and `to`
 * futex waits that timed out (nobody woke them), of to_ns, apart. */
static void lock_group_timeouts(struct profile *p, const char *lock, int64_t n, int64_t total,
				int64_t to, int64_t to_ns)
{
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	assert_int_equal(prof_group__add_label(p, g, "lock", lock), 0);
	assert_int_equal(prof_group__add_label(p, g, "class", "futex_wait_bitset"), 0);
	assert_int_equal(prof_group__add_label(p, g, "process", "app[7]"), 0);
	assert_int_equal(prof_group__add_stat(p, g, "contentions", "CONTENTIONS", "count", n), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_ns", "TOTAL", "nanoseconds", total),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_avg_ns", "MEAN", "nanoseconds",
					      n ? total / n : 0), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_max_ns", "MAX", "nanoseconds",
					      total / 2), 0);
	assert_int_equal(prof_group__add_stat(p, g, "nowait", "NO WAIT", "count", 0), 0);
	assert_int_equal(prof_group__add_stat(p, g, "timeouts", "TIMEOUTS", "count", to), 0);
	assert_int_equal(prof_group__add_stat(p, g, "timeout_delay_ns", "TIMEOUT WAIT",
					      "nanoseconds", to_ns), 0);
}

static struct profile *lock_part_timeouts(uint32_t *leaf_a, uint32_t *leaf_b, uint32_t *rest)
{
	struct profile *p = profile__new("lock");
	uint32_t m_libc;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	assert_int_equal(profile__add_type(p, "delay", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "timeouts", "count"), 0);
	assert_int_equal(profile__add_type(p, "timeout_delay", "nanoseconds"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	*leaf_a = LOC(p, PROF_NONE, 0, 0, { fn(p, "futex 0x1000 (futex_wait_bitset)", NULL,
					       NULL), 0 });
	*leaf_b = LOC(p, PROF_NONE, 0, 0, { fn(p, "futex 0x2000 (futex_wait_bitset)", NULL,
					       NULL), 0 });
	*rest = LOC(p, m_libc, 0x7f0000001000, 0x1000, { fn(p, "pthread_cond_timedwait", NULL,
							   NULL), 0 });
	return p;
}

/* One thread polling a condition variable nobody signals: 40 waits of 50 ms that all timed
 * out, 2.01 s of a 2.05 s run. No thread contended: no lock_contended finding (it was "idle_poll
 * waited 2.01 s on futex ... over 40 contentions"). */
static void test_lock_timeouts_only(void **state)
{
	uint32_t leaf_a, leaf_b, cond, poll_;
	struct profile *p = lock_part_timeouts(&leaf_a, &leaf_b, &cond), *set;

	poll_ = frame(p, "idle_poll", "/src/idle.c", 14);
	sample(p, STACK(leaf_a, cond, poll_), 0, 0, 40, 2010000000, 7);
	lock_group_timeouts(p, "futex 0x1000", 0, 0, 40, 2010000000);
	set = set_of(p, 2050000000);
	assert_int_equal(set->nfindings, 0);
	profile__free(set);
}

/* A woken contention still is one, its lock's timed-out waits left out of its numbers and
 * said apart; the waiting function is the one that waited for a wake, not the one whose waits
 * timed out (longer) on the same lock. */
static void test_lock_woken_and_timeouts(void **state)
{
	uint32_t leaf_a, leaf_b, cond, poll_, worker;
	struct profile *p = lock_part_timeouts(&leaf_a, &leaf_b, &cond), *set;

	poll_ = frame(p, "idle_poll", "/src/idle.c", 14);
	worker = frame(p, "worker", "/src/pool.c", 41);
	sample(p, STACK(leaf_b, cond, worker), 12, 300000000, 0, 0, 7);
	sample(p, STACK(leaf_b, cond, poll_), 0, 0, 30, 1500000000, 7);
	lock_group_timeouts(p, "futex 0x2000", 12, 300000000, 30, 1500000000);
	/* 9 woken waits and many timeouts: under the threshold's 10 contentions */
	sample(p, STACK(leaf_a, cond, poll_), 9, 500000000, 100, 1000000000, 7);
	lock_group_timeouts(p, "futex 0x1000", 9, 500000000, 100, 1000000000);
	set = set_of(p, 2 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "lock_contended");
	assert_string_equal(set->findings[0].subject, "worker (pool.c:41)");
	assert_string_equal(set->findings[0].fact, "worker (pool.c:41) waited 300.0 ms on futex "
			    "0x2000 (futex_wait_bitset, app[7]) over 12 contentions (mean 25.0 ms, "
			    "max 150.0 ms), in a run of 2.00 s; its 30 timed-out waits (1.50 s) "
			    "not counted");
	assert_int_equal(set->findings[0].value, 300000000);
	profile__free(set);
}

static void test_offcpu(void **state)
{
	struct profile *p = profile__new("offcpu"), *set, *lock = profile__new("lock");
	uint32_t m_libc, m_kern, sched, futex, nsleep, lll, nap, poll_, main_;

	assert_non_null(p);
	assert_non_null(lock);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	futex = LOC(p, m_kern, 0xffffffff81002000, 0x2000, { fn(p, "do_futex", NULL, NULL), 0 });
	nsleep = LOC(p, m_libc, 0x7f0000001000, 0x1000, { fn(p, "clock_nanosleep", NULL, NULL), 0 });
	lll = LOC(p, m_libc, 0x7f0000002000, 0x2000, { fn(p, "__lll_lock_wait", NULL, NULL), 0 });
	nap = frame(p, "nap", "/src/nap.c", 9);
	poll_ = frame(p, "poll_loop", "/src/poll.c", 3);
	main_ = frame(p, "main", "/src/main.c", 1);
	/* 1.0 s in 20 waits of a 10 s run: at 10% */
	sample(p, STACK(sched, nsleep, nap, main_), 1000000000, 20, 0, 0, 7);
	/* 99 ms: under 100 ms */
	sample(p, STACK(sched, nsleep, poll_, main_), 99000000, 3, 0, 0, 7);
	/* 5 s in a futex wait: the lock mode's when it runs */
	sample(p, STACK(sched, futex, lll, main_), 5000000000, 100, 0, 0, 7);
	set = profile__new("profile");
	assert_non_null(set);
	assert_int_equal(profile__add_part(set, p), 0);
	assert_int_equal(findings__compute(set, 10 * SEC, false), 0);
	/* without lock: main's futex wait is said too */
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].subject, "main (main.c:1)");
	assert_string_equal(set->findings[1].fact, "nap (nap.c:9) kept its threads blocked "
			    "for 1.00 s in 20 waits, 10% of the run's 10.00 s");
	/* with lock, main waiting on a lock the lock rule names (10 contentions, 5 s of the 10 s
	 * run): that wait is the lock finding's, left out here */
	lock_waits(lock, "lock in app", 10, 5 * SEC, "main", 7);
	assert_int_equal(profile__add_part(set, lock), 0);
	assert_int_equal(findings__compute(set, 10 * SEC, false), 0);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[1].kind, "lock_contended");
	assert_string_equal(set->findings[0].kind, "offcpu_blocked");
	assert_string_equal(set->findings[0].subject, "nap (nap.c:9)");
	assert_string_equal(set->findings[0].fact, "nap (nap.c:9) kept its threads blocked "
			    "for 1.00 s in 20 waits, 10% of the run's 10.00 s; futex waits on "
			    "locks a lock finding names left out");
	profile__free(set);
}

/* A futex wait on a lock the lock rule does not name (waited on once, however long: a
 * deadlock's two threads) is the offcpu rule's, said so. Before, with the lock mode in the run,
 * every futex wait was left out of offcpu_blocked as the lock finding's, and no rule named a
 * deadlock: `ebprof profile -- deadlock 3` found only main's sleep. */
static void test_offcpu_futex_unnamed(void **state)
{
	struct profile *p = profile__new("offcpu"), *set, *lock = profile__new("lock");
	uint32_t m_libc, m_kern, sched, futex, lll, second, main_;

	assert_non_null(p);
	assert_non_null(lock);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	futex = LOC(p, m_kern, 0xffffffff81002000, 0x2000, { fn(p, "do_futex", NULL, NULL), 0 });
	lll = LOC(p, m_libc, 0x7f0000002000, 0x2000, { fn(p, "__lll_lock_wait", NULL, NULL), 0 });
	second = frame(p, "second_b", "/src/dl.c", 18);
	main_ = frame(p, "main", "/src/main.c", 1);
	/* 3 s of a 3 s run, one wait on b; process 8's second_b: 1 s on a lock it contends */
	sample(p, STACK(sched, futex, lll, second, main_), 3 * SEC, 1, 0, 0, 7);
	sample(p, STACK(sched, futex, lll, second, main_), SEC, 10, 0, 0, 8);
	lock_waits(lock, "b in app", 1, 3 * SEC, "second_b", 7);
	lock_waits(lock, "b in app", 10, SEC, "second_b", 8);
	set = profile__new("profile");
	assert_non_null(set);
	assert_int_equal(profile__add_part(set, p), 0);
	assert_int_equal(profile__add_part(set, lock), 0);
	assert_int_equal(findings__compute(set, 3 * SEC, false), 0);
	/* the lock finding of process 8, and process 7's wait: nobody else's */
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].kind, "offcpu_blocked");
	assert_string_equal(set->findings[0].fact, "second_b (dl.c:18) kept its threads blocked "
			    "for 3.00 s in 1 wait, 100% of the run's 3.00 s, 3.00 s of it in futex "
			    "waits on locks the lock rule does not name (waited on fewer times or "
			    "less long: see the lock tab); futex waits on locks a lock finding names "
			    "left out");
	assert_int_equal(set->findings[0].pid, 7);
	assert_string_equal(set->findings[1].kind, "lock_contended");
	assert_int_equal(set->findings[1].pid, 8);
	profile__free(set);
}

/* Waits already going on when tracing started (-p: a process attached to while deadlocked or
 * asleep) have a kernel stack and a [user stack not seen] frame, no frame of the program's:
 * they are their process's, named with where in the kernel the longest waited. Before, they
 * were in no finding: `ebprof profile -p PID` of a deadlocked process said "none". */
static void test_offcpu_unseen(void **state)
{
	struct profile *p = profile__new("offcpu"), *set;
	uint32_t m_kern, fwait, nsleep, unseen, sched, nap, main_;
	struct prof_process *pp;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	fwait = LOC(p, m_kern, 0xffffffff81002000, 0x2000,
		    { fn(p, "futex_do_wait", NULL, NULL), 0 });
	nsleep = LOC(p, m_kern, 0xffffffff81003000, 0x3000,
		     { fn(p, "hrtimer_nanosleep", NULL, NULL), 0 });
	unseen = LOC(p, PROF_NONE, 0, 0, { fn(p, "[user stack not seen]", NULL, NULL), 0 });
	nap = frame(p, "nap", "/src/nap.c", 9);
	main_ = frame(p, "main", "/src/main.c", 1);
	pp = profile__add_process(p, 7, "deadlock", NULL);
	assert_non_null(pp);
	/* process 7: two threads in futex waits all the 2 s run, main asleep in it */
	sample(p, STACK(fwait, unseen), 4 * SEC, 2, 0, 0, 7);
	sample(p, STACK(nsleep, unseen), 2 * SEC, 1, 0, 0, 7);
	/* process 9: 150 ms begun before, under 10% of the run; a wait of its own seen whole */
	sample(p, STACK(sched, nsleep, unseen), 150000000, 1, 0, 0, 9);
	sample(p, STACK(sched, nap, main_), 300000000, 3, 0, 0, 9);
	set = set_of(p, 2 * SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].kind, "offcpu_blocked");
	assert_string_equal(set->findings[0].subject, "deadlock[7]");
	assert_string_equal(set->findings[0].fact, "deadlock[7]'s threads were blocked for 6.00 s "
			    "in 3 waits begun before tracing started, 300% of the run's 2.00 s; "
			    "their user stacks cannot be read (another task's), the longest "
			    "waited in the kernel's futex_do_wait");
	assert_int_equal(set->findings[0].pid, 7);
	assert_string_equal(set->findings[1].subject, "nap (nap.c:9)");
	assert_int_equal(set->findings[1].value, 300000000);
	/* under -a, every daemon asleep since before the start would be one: none */
	assert_int_equal(findings__compute(set, 2 * SEC, true), 0);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "nap (nap.c:9)");
	profile__free(set);
}

/* The time a wait was runnable, waiting for a CPU (offcpu's `runnable`), is not the waiting
 * function's: a hot loop preempted on a busy machine (xz's match finder, 3.15 s of preemptions
 * in a 25 s run) was said to keep its threads off the CPU. Only the time blocked counts. */
static void test_offcpu_runnable(void **state)
{
	struct profile *p = profile__new("offcpu"), *set;
	uint32_t m_kern, sched, irq, hot, nap, main_;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	assert_int_equal(profile__add_type(p, "runnable", "nanoseconds"), 0);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	irq = LOC(p, m_kern, 0xffffffff81003000, 0x3000,
		  { fn(p, "irqentry_exit_to_user_mode", NULL, NULL), 0 });
	hot = frame(p, "match_find", "/src/lz.c", 40);
	nap = frame(p, "nap", "/src/nap.c", 9);
	main_ = frame(p, "main", "/src/main.c", 1);
	/* 3 s off the CPU, every bit of it preempted: runnable */
	sample(p, STACK(sched, irq, hot, main_), 3 * SEC, 1200, 3 * SEC, 0, 7);
	/* 1.5 s off, of which 0.4 s waiting for a CPU after the wakeups: 1.1 s blocked */
	sample(p, STACK(sched, nap, main_), 1500000000, 20, 400000000, 0, 7);
	set = set_of(p, 10 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "offcpu_blocked");
	assert_string_equal(set->findings[0].fact, "nap (nap.c:9) kept its threads blocked "
			    "for 1.10 s in 20 waits, 11% of the run's 10.00 s");
	profile__free(set);
}

/* An offcpu part with a process's runnable_ns, as the collector adds it */
static void runnable_proc(struct profile *p, uint32_t pid, const char *comm, uint64_t ns)
{
	struct prof_process *pp = profile__add_process(p, pid, comm, NULL);

	assert_non_null(pp);
	assert_int_equal(prof_process__add_stat(p, pp, "runnable_ns", ns), 0);
}

static void cpu_proc(struct profile *p, uint32_t pid, uint64_t samples, uint64_t ns)
{
	struct prof_process *pp = profile__add_process(p, pid, "x", NULL);

	assert_non_null(pp);
	assert_int_equal(prof_process__add_stat(p, pp, "samples", samples), 0);
	assert_int_equal(prof_process__add_stat(p, pp, "cpu_ns", ns), 0);
}

static int count_kind(const struct profile *set, const char *kind)
{
	int n = 0;

	for (uint32_t i = 0; i < set->nfindings; i++)
		n += !strcmp(set->findings[i].kind, kind);
	return n;
}

/* cpu_contention: a process whose threads were runnable, waiting for a CPU, for 25% of the time
 * they ran or waited to run (its cpu samples' time and that), 10% of the run and 100 ms, at and
 * just below each; where they left the CPU, by the program's own function (a preemption at the
 * exit of the vDSO's clock_gettime is its caller's loop's); nothing without the cpu mode. */
static void test_contention(void **state)
{
	struct profile *p = profile__new("offcpu"), *cpu = cpu_part(), *set;
	uint32_t m_libc, m_kern, m_vdso, sched, irq, vdso, cgt, hot, nap, other, main_;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	assert_int_equal(profile__add_type(p, "runnable", "nanoseconds"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_vdso = profile__mapping(p, 7, 0x7fff00000000, 0x7fff00002000, 0, "[vdso]", NULL);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	irq = LOC(p, m_kern, 0xffffffff81003000, 0x3000,
		  { fn(p, "irqentry_exit_to_user_mode", NULL, NULL), 0 });
	vdso = LOC(p, m_vdso, 0x7fff00000a00, 0xa00,
		   { fn(p, "__vdso_clock_gettime", NULL, NULL), 0 });
	cgt = LOC(p, m_libc, 0x7f0000003000, 0x3000, { fn(p, "clock_gettime", NULL, NULL), 0 });
	hot = frame(p, "match_find", "/src/lz.c", 40);
	nap = frame(p, "nap", "/src/nap.c", 9);
	other = frame(p, "other", "/src/o.c", 2);
	main_ = frame(p, "main", "/src/main.c", 1);
	/* app[7]: 1 s runnable of 4 s (3 s on a CPU): 25%, and 10% of a 10 s run. 0.4 s
	 * preempted in its loop, 0.5 s at the exit of its clock_gettime, 0.1 s after nap's
	 * wakeups (of 2 s off the CPU there: 1.9 s blocked); 9 ms elsewhere, under 10% */
	sample(p, STACK(sched, irq, hot, main_), 400000000, 100, 400000000, 0, 7);
	sample(p, STACK(sched, vdso, cgt, hot, main_), 491000000, 90, 491000000, 0, 7);
	sample(p, STACK(sched, nap, main_), 2000000000, 20, 100000000, 0, 7);
	sample(p, STACK(sched, irq, other, main_), 9000000, 3, 9000000, 0, 7);
	runnable_proc(p, 7, "app", 1000000000);
	cpu_proc(cpu, 7, 297, 3000000000);
	cpu_samples(cpu, frame(cpu, "spin", "m.c", 2), frame(cpu, "main", "m.c", 1), 297);
	/* busy[8]: 2 s of 8.1 s: 24.7% */
	sample(p, STACK(sched, irq, other, main_), 2000000000, 400, 2000000000, 0, 8);
	runnable_proc(p, 8, "busy", 2000000000);
	cpu_proc(cpu, 8, 604, 6100000000);
	/* kworker[11]: 1.5 s, kernel stacks only (no function of its own to name), never sampled
	 * on a CPU: 100% */
	sample(p, STACK(sched), 1500000000, 50, 1500000000, 0, 11);
	runnable_proc(p, 11, "kworker", 1500000000);
	/* short[10]: 0.99 s, 9.9% of the 10 s run; tiny[9]: 99 ms, under 100 ms */
	sample(p, STACK(sched, irq, other, main_), 990000000, 10, 990000000, 0, 10);
	runnable_proc(p, 10, "short", 990000000);
	sample(p, STACK(sched, irq, other, main_), 99000000, 10, 99000000, 0, 9);
	runnable_proc(p, 9, "tiny", 99000000);

	set = profile__new("profile");
	assert_non_null(set);
	assert_int_equal(profile__add_part(set, p), 0);
	/* without the cpu mode: no time on a CPU, no share, nothing said */
	assert_int_equal(findings__compute(set, 10 * SEC, false), 0);
	assert_int_equal(count_kind(set, "cpu_contention"), 0);
	assert_int_equal(profile__add_part(set, cpu), 0);
	assert_int_equal(findings__compute(set, 10 * SEC, false), 0);
	/* the cpu finding, then the waits for a CPU (the longest first), then nap's blocked time */
	assert_int_equal(set->nfindings, 4);
	assert_string_equal(set->findings[0].kind, "cpu_hot_function");
	assert_string_equal(set->findings[1].kind, "cpu_contention");
	assert_string_equal(set->findings[1].mode, "offcpu");
	assert_string_equal(set->findings[1].subject, "kworker[11]");
	assert_string_equal(set->findings[1].fact, "kworker[11]'s threads waited 1.50 s for a "
			    "CPU, runnable but not running: 100% of the 1.50 s they ran or waited "
			    "to run (about 0 ns on a CPU, its 0 CPU samples); on average 0.15 of "
			    "its threads waited throughout the run's 10.00 s");
	assert_int_equal(set->findings[1].pid, 11);
	assert_string_equal(set->findings[2].subject, "app[7]");
	assert_string_equal(set->findings[2].fact, "app[7]'s threads waited 1.00 s for a CPU, "
			    "runnable but not running: 25% of the 4.00 s they ran or waited to run "
			    "(about 3.00 s on a CPU, its 297 CPU samples); on average 0.10 of its "
			    "threads waited throughout the run's 10.00 s; where they left the CPU: "
			    "match_find (lz.c:40) 89%, nap (nap.c:9) 10%");
	assert_int_equal(set->findings[2].value, 1000000000);
	assert_int_equal(set->findings[2].pid, 7);
	assert_string_equal(set->findings[2].unit, "nanoseconds");
	assert_non_null(strstr(set->findings[2].action, "run fewer threads"));
	assert_string_equal(set->findings[3].kind, "offcpu_blocked");
	assert_string_equal(set->findings[3].subject, "nap (nap.c:9)");
	/* a run of 0.99 s: short[10] is all of it; tiny[9]'s 99 ms is 10% but under 100 ms */
	assert_int_equal(findings__compute(set, 990000000, false), 0);
	assert_int_equal(count_kind(set, "cpu_contention"), 3);
	assert_string_equal(set->findings[3].subject, "short[10]");
	profile__free(set);
}

/* One process runnable 1 s (of 2 s: 1 s on a CPU) in a 4 s run, its cgroup throttled n times
 * for ns (n < 0: not measured): the cpu_contention finding */
static struct profile *quota_set(int64_t n, uint64_t ns)
{
	struct profile *p = profile__new("offcpu"), *cpu = cpu_part(), *set;
	struct prof_process *pp;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	assert_int_equal(profile__add_type(p, "runnable", "nanoseconds"), 0);
	sample(p, STACK(frame(p, "spin", "/src/s.c", 5), frame(p, "main", "/src/s.c", 1)), SEC,
	       100, SEC, 0, 7);
	runnable_proc(p, 7, "app", SEC);
	pp = profile__find_process(p, 7);
	if (n >= 0) {
		assert_int_equal(prof_process__add_stat(p, pp, "cgroup_throttled", n), 0);
		assert_int_equal(prof_process__add_stat(p, pp, "cgroup_throttled_ns", ns), 0);
	}
	cpu_proc(cpu, 7, 99, SEC);
	set = set_of(p, 4 * SEC);
	assert_int_equal(profile__add_part(set, cpu), 0);
	assert_int_equal(findings__compute(set, 4 * SEC, false), 0);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].kind, "cpu_contention");
	return set;
}

/* A target's cgroup's CPU quota throttling (offcpu: cgroup_throttled, cgroup_throttled_ns)
 * is said, and the quota is the next step when it throttled for 10% of the wait or more */
static void test_contention_quota(void **state)
{
	struct profile *set = quota_set(14, 100000000);
	const char *head = "app[7]'s threads waited 1.00 s for a CPU, runnable but not running: "
			   "50% of the 2.00 s they ran or waited to run (about 1.00 s on a CPU, its "
			   "99 CPU samples); on average 0.25 of its threads waited throughout the "
			   "run's 4.00 s";
	char want[512];

	snprintf(want, sizeof(want), "%s; its cgroup's CPU quota throttled it 14 times for "
		 "100.0 ms; where they left the CPU: spin (s.c:5) 100%%", head);
	assert_string_equal(set->findings[0].fact, want);
	assert_non_null(strstr(set->findings[0].action, "its cgroup's CPU quota throttled it: "
				   "raise the quota"));
	profile__free(set);
	/* 99 ms of 1 s: the CPUs, mostly */
	set = quota_set(2, 99000000);
	assert_non_null(strstr(set->findings[0].fact, "; its cgroup's CPU quota throttled it 2 "
				   "times for 99.0 ms; where"));
	assert_non_null(strstr(set->findings[0].action, "(its cgroup's quota hardly throttled "
				   "it)"));
	profile__free(set);
	set = quota_set(0, 0);
	snprintf(want, sizeof(want), "%s; its cgroup's CPU quota did not throttle it; where they "
		 "left the CPU: spin (s.c:5) 100%%", head);
	assert_string_equal(set->findings[0].fact, want);
	profile__free(set);
	/* not measured (-a, no cpu controller): both said possible */
	set = quota_set(-1, 0);
	snprintf(want, sizeof(want), "%s; where they left the CPU: spin (s.c:5) 100%%", head);
	assert_string_equal(set->findings[0].fact, want);
	assert_non_null(strstr(set->findings[0].action, "or its cgroup's CPU quota throttled it "
				   "(the cgroup's cpu.stat counts that"));
	profile__free(set);
}

/* A shell blocked in wait4 for its children for the whole run (ebprof profile -- sh -c
 * '...': "dash+0xbcbf kept its threads blocked for 29.36 s, 100% of the run"), or a vfork's
 * parent until its child execs, is waiting for work done in other processes: left out, said. */
static void test_offcpu_children(void **state)
{
	struct profile *p = profile__new("offcpu"), *set;
	uint32_t m_kern, sched, dowait, wait4, cmpl, kclone, nap, shell, spawn, main_;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	dowait = LOC(p, m_kern, 0xffffffff81004000, 0x4000, { fn(p, "do_wait", NULL, NULL), 0 });
	wait4 = LOC(p, m_kern, 0xffffffff81005000, 0x5000,
		    { fn(p, "kernel_wait4", NULL, NULL), 0 });
	cmpl = LOC(p, m_kern, 0xffffffff81006000, 0x6000,
		   { fn(p, "wait_for_completion_state", NULL, NULL), 0 });
	kclone = LOC(p, m_kern, 0xffffffff81007000, 0x7000,
		     { fn(p, "kernel_clone", NULL, NULL), 0 });
	nap = frame(p, "nap", "/src/nap.c", 9);
	shell = frame(p, "waitforjob", "/src/jobs.c", 3);
	spawn = frame(p, "spawn", "/src/spawn.c", 5);
	main_ = frame(p, "main", "/src/main.c", 1);
	sample(p, STACK(sched, dowait, wait4, shell, main_), 9 * SEC, 3, 0, 0, 7);
	sample(p, STACK(sched, cmpl, kclone, spawn, main_), 2 * SEC, 40, 0, 0, 7);
	sample(p, STACK(sched, nap, main_), 1 * SEC, 20, 0, 0, 8);
	set = set_of(p, 10 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "nap (nap.c:9)");
	assert_string_equal(set->findings[0].fact, "nap (nap.c:9) kept its threads blocked "
			    "for 1.00 s in 20 waits, 10% of the run's 10.00 s; waits for child "
			    "processes left out");
	profile__free(set);
}

/* cpu first, then mem, then io, whatever the order of the parts */
static void test_order(void **state)
{
	struct profile *set = profile__new("profile"), *io = profile__new("io"), *cpu = cpu_part();
	struct profile *mem = mem_part();
	uint32_t main_ = frame(cpu, "main", "m.c", 1);

	assert_non_null(set);
	disk_group(io, "sda", "read", 100, 20000000);
	cpu_samples(cpu, frame(cpu, "spin", "m.c", 2), main_, 50);
	sample(mem, STACK(frame(mem, "grow", "g.c", 3), frame(mem, "main", "g.c", 1)), 10,
	       10 << 20, 0, 0, 7);
	assert_int_equal(profile__add_part(set, io), 0);
	assert_int_equal(profile__add_part(set, mem), 0);
	assert_int_equal(profile__add_part(set, cpu), 0);
	assert_int_equal(findings__compute(set, SEC, false), 0);
	assert_int_equal(set->nfindings, 3);
	assert_string_equal(set->findings[0].mode, "cpu");
	assert_string_equal(set->findings[1].mode, "mem");
	assert_string_equal(set->findings[2].mode, "io");
	/* computed again: replaced, not added */
	assert_int_equal(findings__compute(set, SEC, false), 0);
	assert_int_equal(set->nfindings, 3);
	profile__free(set);
}

/* A frame without a symbol in a stripped program of process pid, as the reports name it:
 * "pm_stripped+0xOFF" */
static uint32_t unsym(struct profile *p, uint32_t pid, const char *file, uint64_t off)
{
	uint32_t map = profile__mapping(p, pid, 0x555500000000, 0x555500010000, 0, file, NULL);

	assert_int_not_equal(map, PROF_NONE);
	return loc(p, map, 0x555500000000 + off, off, NULL, 0);
}

/* A frame without a symbol is a subject of its own, never folded into its caller: the same
 * address in two processes of one program is one subject (of no one process) */
static void test_cpu_unsymbolized(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t hot7 = unsym(p, 7, "/w/pm_stripped", 0x12ad);
	uint32_t hot8 = unsym(p, 8, "/w/pm_stripped", 0x12ad);
	uint32_t next = unsym(p, 7, "/w/pm_stripped", 0x12b0);
	uint32_t main_ = frame(p, "main", "app.c", 10);

	sample(p, STACK(hot7, main_), 40, 40 * 10101010, 0, 0, 7);
	sample(p, STACK(hot8, main_), 31, 31 * 10101010, 0, 0, 8);
	sample(p, STACK(next, main_), 25, 25 * 10101010, 0, 0, 7);
	sample(p, STACK(frame(p, "other", "o.c", 1), main_), 4, 4 * 10101010, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].subject, "pm_stripped+0x12ad");
	assert_string_equal(set->findings[0].fact, "pm_stripped+0x12ad is 71% of the CPU samples "
			    "(71 of 100, 717.2 ms of CPU time, at that address, which no symbol "
			    "covers)");
	assert_int_equal(set->findings[0].pid, 0);
	assert_string_equal(set->findings[1].subject, "pm_stripped+0x12b0");
	assert_int_equal(set->findings[1].pid, 7);
	profile__free(set);
}

static void test_mem_unsymbolized(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t malloc_ = frame(p, "malloc", "malloc.c", 3281);
	uint32_t site = unsym(p, 7, "/w/pm_stripped", 0x12e4);
	uint32_t main_ = frame(p, "main", "app.c", 30);

	sample(p, STACK(malloc_, site, main_), 1024, 8 << 20, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "pm_stripped+0x12e4");
	assert_string_equal(set->findings[0].fact, "pm_stripped+0x12e4 allocates 8.0 MiB/s (8.0 "
			    "MiB in 1.00 s, 1024 blocks of 8.0 KiB on average, 100% of all bytes "
			    "allocated)");
	assert_int_equal(set->findings[0].pid, 7);
	profile__free(set);
}

/* offcpu names the frame that waited (a python3 static function), not a distant caller */
static void test_offcpu_unsymbolized(void **state)
{
	struct profile *p = profile__new("offcpu"), *set;
	uint32_t m_libc, m_kern, sched, nsleep, stat, call;

	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	m_libc = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000100000, 0,
				  "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL);
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sched = LOC(p, m_kern, 0xffffffff81001000, 0x1000, { fn(p, "__schedule", NULL, NULL), 0 });
	nsleep = LOC(p, m_libc, 0x7f0000001000, 0x1000, { fn(p, "clock_nanosleep", NULL, NULL), 0 });
	stat = unsym(p, 7, "/usr/bin/python3.11", 0x4fb51b);
	call = frame(p, "PyObject_Vectorcall", "Objects/call.c", 299);
	sample(p, STACK(sched, nsleep, stat, call), 500000000, 1, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "python3.11+0x4fb51b");
	assert_string_equal(set->findings[0].fact, "python3.11+0x4fb51b kept its threads blocked "
			    "for 500.0 ms in 1 wait, 50% of the run's 1.00 s");
	assert_int_equal(set->findings[0].pid, 7);
	profile__free(set);
}

/* Code no symbol covers in a function an FDE knows (core/stacks.c names it so): its addresses
 * are one function, "MODULE!sub_HEX", whose share is theirs together. 'ebprof profile -- xz
 * -T2' (Debian's liblzma keeps no symbols for its internals) said "liblzma.so.5.4.1+0x15bc9 is
 * 25% of the CPU samples" of one address of a function that had 41% */
static uint32_t cfi_loc(struct profile *p, uint32_t fn_, uint64_t off)
{
	uint32_t map = profile__mapping(p, 7, 0x7f0000000000, 0x7f0000030000, 0,
					"/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1", NULL);

	return LOC(p, map, 0x7f0000000000 + off, off, { fn_, 0 });
}

static void test_cpu_cfi_named(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t f = profile__function_cfi(p, "liblzma.so.5.4.1!sub_15ae0");
	uint32_t main_ = frame(p, "main", "xz.c", 10);

	assert_int_not_equal(f, PROF_NONE);
	assert_true(p->functions[f].cfi_named);
	assert_string_equal(p->functions[f].system_name, "liblzma.so.5.4.1!sub_15ae0");
	/* apart from a symbol of the same name */
	assert_int_not_equal(profile__function(p, "liblzma.so.5.4.1!sub_15ae0",
					       "liblzma.so.5.4.1!sub_15ae0", NULL), f);
	cpu_samples(p, cfi_loc(p, f, 0x15bc9), main_, 27);
	cpu_samples(p, cfi_loc(p, f, 0x15be0), main_, 9);
	cpu_samples(p, cfi_loc(p, f, 0x15b76), main_, 5);
	cpu_samples(p, frame(p, "other", "o.c", 1), main_, 59);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[1].subject, "liblzma.so.5.4.1!sub_15ae0");
	assert_string_equal(set->findings[1].fact, "liblzma.so.5.4.1!sub_15ae0 is 41% of the CPU "
			    "samples (41 of 100, 414.1 ms of CPU time, in the function itself, "
			    "which no symbol covers: it is named by its call frame range)");
	profile__free(set);
}

static void test_mem_offcpu_cfi_named(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t malloc_ = frame(p, "malloc", "malloc.c", 3281);
	uint32_t f = profile__function_cfi(p, "liblzma.so.5.4.1!sub_4b0");
	uint32_t main_ = frame(p, "main", "app.c", 30), m_kern;

	sample(p, STACK(malloc_, cfi_loc(p, f, 0x4c1), main_), 512, 4 << 20, 0, 0, 7);
	sample(p, STACK(malloc_, cfi_loc(p, f, 0x4d7), main_), 512, 4 << 20, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "liblzma.so.5.4.1!sub_4b0");
	assert_string_equal(set->findings[0].fact, "liblzma.so.5.4.1!sub_4b0 allocates 8.0 MiB/s "
			    "(8.0 MiB in 1.00 s, 1024 blocks of 8.0 KiB on average, 100% of all "
			    "bytes allocated); no symbol covers that function: it is named by its "
			    "call frame range");
	profile__free(set);

	p = profile__new("offcpu");
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	f = profile__function_cfi(p, "liblzma.so.5.4.1!sub_4b0");
	sample(p, STACK(cfi_loc(p, f, 0x4c1)), 300000000, 1, 0, 0, 7);
	sample(p, STACK(cfi_loc(p, f, 0x4d7)), 200000000, 1, 0, 0, 7);
	/* a wait for a child, left out: said after what the subject is */
	m_kern = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82000000, 0,
				  "[kernel.kallsyms]", NULL);
	sample(p, STACK(LOC(p, m_kern, 0xffffffff81004000, 0x4000,
			    { fn(p, "do_wait", NULL, NULL), 0 }), frame(p, "main", "app.c", 40)),
	       400000000, 1, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].fact, "liblzma.so.5.4.1!sub_4b0 kept its threads "
			    "blocked for 500.0 ms in 2 waits, 50% of the run's 1.00 s; no symbol "
			    "covers that function: it is named by its call frame range; waits for "
			    "child processes left out");
	profile__free(set);
}

/* A function's line is the one with the most of the rule's value summed over its stacks, not
 * that of its largest stack (cpu), nor of its first sample (offcpu, leaks) or its last (mem) */
static void test_line_cpu(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t c[4], w9a, w9b, w11;

	/* work spins at line 9 (two addresses) called from c1, c2, c3, 30 + 24 + 9 samples,
	 * and at line 11 from c4, 38 samples in one stack */
	w9a = LOC(p, PROF_NONE, 0x1000, 0, { fn(p, "work", NULL, "/src/line.c"), 9 });
	w9b = LOC(p, PROF_NONE, 0x1004, 0, { fn(p, "work", NULL, "/src/line.c"), 9 });
	w11 = LOC(p, PROF_NONE, 0x1010, 0, { fn(p, "work", NULL, "/src/line.c"), 11 });
	for (int i = 0; i < 4; i++)
		c[i] = frame(p, (const char *[]){ "c1", "c2", "c3", "c4" }[i], "line.c", 20 + i);
	cpu_samples(p, w9a, c[0], 30);
	cpu_samples(p, w9b, c[1], 24);
	cpu_samples(p, w9b, c[2], 9);
	cpu_samples(p, w11, c[3], 38);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "work (line.c:9)");
	profile__free(set);
}

static void test_line_mem(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t malloc_, main_, other, p12, p20;
	struct prof_sample *s;

	/* parse_line allocates most at line 20, least at line 12 (its last sample with bytes),
	 * and loses most at line 20, least at line 12 (its first sample with lost bytes) */
	leak_types(p);
	malloc_ = frame(p, "malloc", "malloc.c", 1);
	main_ = frame(p, "main", "app.c", 30);
	other = frame(p, "other", "app.c", 40);
	p20 = LOC(p, PROF_NONE, 0x2000, 0, { fn(p, "parse_line", NULL, "/src/parse.c"), 20 });
	p12 = LOC(p, PROF_NONE, 0x2010, 0, { fn(p, "parse_line", NULL, "/src/parse.c"), 12 });
	sample(p, STACK(malloc_, p20, main_), 100, 4 << 20, 0, 0, 7);
	s = sample(p, STACK(malloc_, p12, main_), 1, 2048, 1, 2048, 7);
	s->values[4] = 1;
	s->values[5] = 2048;
	s = sample(p, STACK(malloc_, p20, other), 0, 0, 10, 20480, 7);
	s->values[4] = 10;
	s->values[5] = 20480;
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].kind, "mem_definitely_lost");
	assert_string_equal(set->findings[0].subject, "parse_line (parse.c:20)");
	assert_string_equal(set->findings[1].kind, "mem_alloc_rate");
	assert_string_equal(set->findings[1].subject, "parse_line (parse.c:20)");
	profile__free(set);
}

static void test_line_offcpu(void **state)
{
	struct profile *p = profile__new("offcpu"), *set;
	uint32_t main_, n5, n9;

	/* nap waits least at line 5 (its first sample), most at line 9 */
	assert_non_null(p);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	main_ = frame(p, "main", "main.c", 1);
	n5 = frame(p, "nap", "/src/nap.c", 5);
	n9 = frame(p, "nap", "/src/nap.c", 9);
	sample(p, STACK(n5, main_), 100000000, 1, 0, 0, 7);
	sample(p, STACK(n9, main_), 900000000, 9, 0, 0, 7);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 1);
	assert_string_equal(set->findings[0].subject, "nap (nap.c:9)");
	assert_string_equal(set->findings[0].fact, "nap (nap.c:9) kept its threads blocked "
			    "for 1.00 s in 10 waits, 100% of the run's 1.00 s");
	profile__free(set);
}

/* A 400-character C++ name keeps its (file:line) in the subject and the fact, and so does the
 * last finding of a rule that says how many more crossed */
static void test_long_name(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t main_ = frame(p, "main", "m.c", 1);
	char name[4][460], want[520];

	for (int i = 0; i < 4; i++) {
		int n = snprintf(name[i], sizeof(name[i]), "Box<%d, 42>::spin(std::map<", i);

		while (n < 390)
			n += snprintf(name[i] + n, sizeof(name[i]) - n, "std::vector<int*>, ");
		snprintf(name[i] + n, sizeof(name[i]) - n, "int>&, double)");
		cpu_samples(p, frame(p, name[i], "/src/odd.cpp", 12 + i), main_, 25 + i);
	}
	assert_true(strlen(name[0]) >= 400);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 3);
	snprintf(want, sizeof(want), "%s (odd.cpp:15)", name[3]);
	assert_string_equal(set->findings[0].subject, want);
	assert_int_equal(strncmp(set->findings[0].fact, want, strlen(want)), 0);
	assert_non_null(strstr(set->findings[0].fact, " is 26% of the CPU samples (28 of 106, "));
	snprintf(want, sizeof(want), "%s (odd.cpp:13)", name[1]);
	assert_string_equal(set->findings[2].subject, want);
	assert_int_equal(strncmp(set->findings[2].fact, want, strlen(want)), 0);
	assert_non_null(strstr(set->findings[2].fact, "in the function itself) (1 more crossed "
				    "this threshold: see the cpu tab)"));
	profile__free(set);
}

/* A finding about one process carries its pid, in JSON too; one about several does not */
static void test_pid(void **state)
{
	struct profile *p = cpu_part(), *set;
	uint32_t main_ = frame(p, "main", "m.c", 1);
	uint32_t spin = frame(p, "spin", "m.c", 2), both = frame(p, "both", "m.c", 3);
	char *out, *parts, *pid;
	size_t len;

	sample(p, STACK(spin, main_), 50, 0, 0, 0, 4242);
	sample(p, STACK(both, main_), 30, 0, 0, 0, 4242);
	sample(p, STACK(both, main_), 15, 0, 0, 0, 4343);
	set = set_of(p, SEC);
	assert_int_equal(set->nfindings, 2);
	assert_string_equal(set->findings[0].subject, "spin (m.c:2)");
	assert_int_equal(set->findings[0].pid, 4242);
	assert_int_equal(set->findings[1].pid, 0);
	out = render(&output_json, set, &(struct output_opts){ .top = 5 }, &len);
	assert_non_null(strstr(out, "\"kind\": \"cpu_hot_function\",\n      \"subject\": \"spin "));
	assert_non_null(strstr(out, "\"unit\": \"percent\",\n      \"pid\": 4242\n    }"));
	/* the findings end where the parts begin: one pid among them */
	parts = strstr(out, "\n  \"parts\": ");
	assert_non_null(parts);
	*parts = '\0';
	pid = strstr(out, "\"pid\": ");
	assert_non_null(pid);
	assert_null(strstr(pid + 1, "\"pid\": "));
	free(out);
	profile__free(set);
}

/* The average block is rounded to the nearest byte: sampled estimates are not whole multiples */
static void test_mem_average_rounded(void **state)
{
	struct profile *p = mem_part(), *set;
	uint32_t main_ = frame(p, "main", "app.c", 30);
	uint32_t churn = frame(p, "churn_memory", "/src/pm.c", 40);

	p->sampling = "bytes";
	sample(p, STACK(churn, main_), 568005, 27264172, 0, 0, 7);	/* 47.9999 B a block */
	set = set_of(p, 4 * SEC);
	assert_int_equal(set->nfindings, 1);
	assert_non_null(strstr(set->findings[0].fact, " 568005 blocks of 48 B on average, "));
	profile__free(set);
}

static struct profile *fixture_set(void)
{
	struct profile *set = profile__new("profile");

	assert_non_null(set);
	assert_int_equal(profile__add_part(set, cpu_fixture()), 0);
	assert_int_equal(profile__add_part(set, io_fixture()), 0);
	assert_int_equal(profile__set_meta(set, "./demo --spin", "6.18.0",
					   "ebprof profile -o out.txt -- ./demo --spin",
					   1700000000123456789LL, 3 * SEC), 0);
	assert_int_equal(findings__compute(set, 3 * SEC, false), 0);
	return set;
}

static void test_set_text_json(void **state)
{
	struct profile *set = fixture_set();
	struct output_opts o = { .top = 5 };
	size_t len;
	char *out;

	/* set_meta reaches the parts */
	assert_string_equal(set->parts[1]->command, "./demo --spin");
	out = render(&output_text, set, &o, &len);
	check_golden("tests/golden/profile_set.txt", out, len);
	assert_non_null(strstr(out, "\n======== cpu ========\n"));
	assert_non_null(strstr(out, "\n======== io ========\n"));
	free(out);
	out = render(&output_json, set, &o, &len);
	check_golden("tests/golden/profile_set.json", out, len);
	free(out);
	profile__free(set);
}

static void test_set_html(void **state)
{
	struct profile *set = fixture_set();
	size_t len;
	char *out = render(&output_html, set, NULL, &len);

	assert_non_null(strstr(out, "<title>ebprof profile: ./demo --spin</title>"));
	assert_non_null(strstr(out, "<button type=\"button\" role=\"tab\" id=\"tab-0\">cpu"));
	assert_non_null(strstr(out, "<button type=\"button\" role=\"tab\" id=\"tab-1\">io"));
	/* each part's own page, whole, escaped into its frame */
	assert_non_null(strstr(out, "<iframe class=\"part\" id=\"part-0\" title=\"cpu\" "
				    "srcdoc=\"&lt;!DOCTYPE html&gt;"));
	assert_non_null(strstr(out, "<iframe class=\"part\" id=\"part-1\" title=\"io\""));
	assert_null(strstr(out, "srcdoc=\"<"));
	free(out);
	profile__free(set);
}

static void test_part_path(void **state)
{
	char b[64];

	assert_int_equal(output__part_path("out.pb.gz", "cpu", b, sizeof(b)), 0);
	assert_string_equal(b, "out.cpu.pb.gz");
	assert_int_equal(output__part_path("/d/x.speedscope.json", "mem", b, sizeof(b)), 0);
	assert_string_equal(b, "/d/x.mem.speedscope.json");
	assert_int_equal(output__part_path("a.b/F.SVG", "io", b, sizeof(b)), 0);
	assert_string_equal(b, "a.b/F.io.SVG");
	assert_int_equal(output__part_path("x.pb", "io", b, sizeof(b)), 0);
	assert_string_equal(b, "x.io.pb");
	assert_int_equal(output__part_path("noext", "io", b, sizeof(b)), -EINVAL);
	assert_int_equal(output__part_path("a-very-long-name.folded", "cpu", b, 16),
			 -ENAMETOOLONG);
	assert_true(output__shows_parts(&output_text));
	assert_true(output__shows_parts(&output_html));
	assert_false(output__shows_parts(&output_pprof));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_threshold),
		cmocka_unit_test(test_cpu_bpf_left_out),
		cmocka_unit_test(test_cpu_few_samples),
		cmocka_unit_test(test_cpu_at_most_three),
		cmocka_unit_test(test_mem_rate),
		cmocka_unit_test(test_mem_long_lived),
		cmocka_unit_test(test_mem_leaks),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_lock_timeouts_only),
		cmocka_unit_test(test_lock_woken_and_timeouts),
		cmocka_unit_test(test_offcpu),
		cmocka_unit_test(test_offcpu_futex_unnamed),
		cmocka_unit_test(test_offcpu_unseen),
		cmocka_unit_test(test_offcpu_runnable),
		cmocka_unit_test(test_offcpu_children),
		cmocka_unit_test(test_contention),
		cmocka_unit_test(test_contention_quota),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_cpu_unsymbolized),
		cmocka_unit_test(test_cpu_cfi_named),
		cmocka_unit_test(test_mem_offcpu_cfi_named),
		cmocka_unit_test(test_mem_unsymbolized),
		cmocka_unit_test(test_offcpu_unsymbolized),
		cmocka_unit_test(test_line_cpu),
		cmocka_unit_test(test_line_mem),
		cmocka_unit_test(test_line_offcpu),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_pid),
		cmocka_unit_test(test_mem_average_rounded),
		cmocka_unit_test(test_set_text_json),
		cmocka_unit_test(test_set_html),
		cmocka_unit_test(test_part_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
