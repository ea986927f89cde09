/* BPF-level tests of --mmap: the collector with its sys_enter/sys_exit programs loaded in this
 * process, attached to a forked child that makes exactly the mappings of one case, then read
 * out into a profile. Root required (run by tests/run-e2e.sh). Each case checks every process
 * counter, the malloc ones included: a mapping counted twice, a piece of a partial unmap lost,
 * or glibc's own mmap counted as the program's fails here first.
 */
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "modes/mem/collect.h"
#include "core/probes.h"
#include "core/stacks.h"

#define PG 4096UL
#define RW (PROT_READ | PROT_WRITE)
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)

void *volatile sink;
static char *before;	/* mapped before attach: its munmap releases nothing counted */

struct expect {
	const char *name;	/* stat or call name */
	uint64_t value;
};

static struct profile *trace_child(void (*op)(void))
{
	struct log_ctx lc = { .prog = "test_mmap_bpf" };
	struct mem_collector_opts o = { .lc = &lc, .max_live = 1 << 16, .max_stacks = 1 << 12,
					.max_procs = 16, .max_size = UINT64_MAX, .mmap = true,
					.max_regions = 1 << 12 };
	struct symbolizer_opts so = { .no_lines = true };
	struct mem_collector *c;
	struct symbolizer *sym;
	struct profile *prof;
	struct alloc_lib lib;
	int go[2], done[2];
	char b;
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	before = mmap(NULL, 2 * PG, RW, ANON, -1, 0);
	assert_true(before != MAP_FAILED);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		op();
		if (write(done[1], "d", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	munmap(before, 2 * PG);
	c = mem_collector__new(&o);
	assert_non_null(c);
	sym = symbolizer__new(&so);
	prof = profile__new("mem");
	assert_non_null(sym);
	assert_non_null(prof);
	assert_int_equal(mem_profile__init(prof, false), 0);
	assert_int_equal(mem_profile__add_mmap_types(prof), 0);
	assert_int_equal(probes__find_allocator(pid, &lib), 0);
	assert_int_equal(mem_collector__attach(c, pid, 0, &lib), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &b, 1), 1);
	assert_int_equal(mem_collector__finalize(c, pid, prof, sym, 0, false), 0);
	mem_collector__drops(c, prof);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	mem_collector__free(c);
	symbolizer__free(sym);
	close(go[0]); close(go[1]); close(done[0]); close(done[1]);
	return prof;
}

/* Every counter not named in `want` must be 0, and no drop but the ends of stacks: a
 * syscall's stack walked by frame pointers (where the process has no tables) goes through
 * libcmocka, which has none, into its data; such a stack ends in [truncated] where it does,
 * counted as unwind_outside_code or unwind_fp_broken (core/stacks.h), and loses no event. */
static void check(struct profile *prof, const struct expect *want, size_t n)
{
	struct prof_process *p;

	assert_int_equal(prof->nprocesses, 1);
	p = &prof->processes[0];
	for (uint32_t i = 0; i < p->ncalls + p->nstats; i++) {
		const struct prof_kv *kv = i < p->ncalls ? &p->calls[i] : &p->stats[i - p->ncalls];
		uint64_t expected = 0;

		for (size_t j = 0; j < n; j++)
			if (!strcmp(want[j].name, kv->key))
				expected = want[j].value;
		if (kv->value != expected)
			fail_msg("%s: got %llu, want %llu", kv->key, (unsigned long long)kv->value,
				 (unsigned long long)expected);
	}
	for (uint32_t i = 0; i < prof->ndrops; i++)
		if (prof->drops[i].value && strcmp(prof->drops[i].key, STACKS_DROP_OUTSIDE) &&
		    strcmp(prof->drops[i].key, STACKS_DROP_FP_BROKEN))
			fail_msg("drop %s: %llu", prof->drops[i].key,
				 (unsigned long long)prof->drops[i].value);
	profile__free(prof);
}

#define CHECK(prof, ...) do {							\
		const struct expect w_[] = { __VA_ARGS__ };			\
		check(prof, w_, sizeof(w_) / sizeof(w_[0]));			\
	} while (0)

static char *anon(size_t len)
{
	char *p = mmap(NULL, len, RW, ANON, -1, 0);

	if (p == MAP_FAILED)
		abort();
	sink = p;
	return p;
}

static void op_whole(void) { char *p = anon(2 * PG); munmap(p, 2 * PG); }
static void test_whole(void **s)
{
	CHECK(trace_child(op_whole), { "mmap_calls_mmap", 1 }, { "mmap_calls_munmap", 1 },
	      { "mmap_mapped_count", 1 }, { "mmap_mapped_bytes", 2 * PG },
	      { "mmap_unmapped_count", 1 }, { "mmap_unmapped_bytes", 2 * PG },
	      { "mmap_peak_live_bytes", 2 * PG });
}

static void op_head(void) { char *p = anon(3 * PG); munmap(p, PG); }
static void op_tail(void) { char *p = anon(3 * PG); munmap(p + 2 * PG, 1); }
static void test_head_and_tail(void **s)
{
	for (int i = 0; i < 2; i++)
		CHECK(trace_child(i ? op_tail : op_head), { "mmap_calls_mmap", 1 },
		      { "mmap_calls_munmap", 1 }, { "mmap_mapped_count", 1 },
		      { "mmap_mapped_bytes", 3 * PG }, { "mmap_unmapped_count", 1 },
		      { "mmap_unmapped_bytes", PG }, { "mmap_live_count", 1 },
		      { "mmap_live_bytes", 2 * PG }, { "mmap_peak_live_bytes", 3 * PG });
}

/* a hole splits one region in two; unmapping both halves then empties it */
static void op_hole(void)
{
	char *p = anon(5 * PG);

	munmap(p + 2 * PG, PG);
	munmap(p, 2 * PG);
}
static void test_hole_splits(void **s)
{
	CHECK(trace_child(op_hole), { "mmap_calls_mmap", 1 }, { "mmap_calls_munmap", 2 },
	      { "mmap_mapped_count", 1 }, { "mmap_mapped_bytes", 5 * PG },
	      { "mmap_unmapped_count", 2 }, { "mmap_unmapped_bytes", 3 * PG },
	      { "mmap_live_count", 1 }, { "mmap_live_bytes", 2 * PG },
	      { "mmap_peak_live_bytes", 5 * PG });
}

/* MAP_FIXED over part of a region replaces it; one munmap then spans three regions */
static void op_fixed_span(void)
{
	char *r = anon(6 * PG);

	mmap(r + PG, PG, RW, ANON | MAP_FIXED, -1, 0);
	mmap(r + 3 * PG, PG, RW, ANON | MAP_FIXED, -1, 0);
	munmap(r, 6 * PG);
}
static void test_fixed_and_span(void **s)
{
	/* r: [0,1) [1,2)fixed [2,3) [3,4)fixed [4,6): five regions, one munmap of all */
	CHECK(trace_child(op_fixed_span), { "mmap_calls_mmap", 3 }, { "mmap_calls_munmap", 1 },
	      { "mmap_mapped_count", 3 }, { "mmap_mapped_bytes", 8 * PG },
	      { "mmap_unmapped_count", 7 }, { "mmap_unmapped_bytes", 8 * PG },
	      { "mmap_peak_live_bytes", 6 * PG });
}

/* glibc serves a large malloc with mmap (inside malloc: malloc's) and frees it with munmap
 * inside free (free's: not counted at all, not even as untracked; it was, before free's entry
 * noted where the thread is) */
#define BIG (64 << 20)
static void op_big_malloc(void)
{
	void *p;

	/* a fixed threshold: this process's earlier frees may have raised the dynamic one; and a
	 * size no free chunk of the heap inherited from the test process can serve (glibc takes a
	 * big enough free chunk or top before it considers mmap) */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	p = malloc(BIG);
	sink = p;
	free(p);
}
static void test_big_malloc_is_malloc(void **s)
{
	CHECK(trace_child(op_big_malloc), { "malloc", 1 }, { "free", 1 }, { "alloc_count", 1 },
	      { "alloc_bytes", BIG }, { "free_count", 1 }, { "free_bytes", BIG },
	      { "peak_live_bytes", BIG }, { "max_request", BIG },
	      { "mmap_untracked", 0 }, { "mmap_calls_munmap", 0 });
}

/* mapped before tracing: its munmap subtracts nothing */
static void op_unmap_before(void) { munmap(before, 2 * PG); }
static void test_unmap_of_untracked(void **s)
{
	CHECK(trace_child(op_unmap_before), { "mmap_untracked", 1 });
}

/* mremap: like realloc, the old range released and the new one mapped at the mremap */
static void op_mremap(void)
{
	char *p = anon(2 * PG), *d = anon(PG);

	p = mremap(p, 2 * PG, 4 * PG, MREMAP_MAYMOVE);
	p = mremap(p, 4 * PG, PG, 0);
	sink = mremap(p, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, d);
}
static void test_mremap(void **s)
{
	CHECK(trace_child(op_mremap), { "mmap_calls_mmap", 2 }, { "mmap_calls_mremap", 3 },
	      { "mmap_mapped_count", 5 }, { "mmap_mapped_bytes", 9 * PG },
	      { "mmap_unmapped_count", 4 }, { "mmap_unmapped_bytes", 8 * PG },
	      { "mmap_live_count", 1 }, { "mmap_live_bytes", PG },
	      { "mmap_peak_live_bytes", 5 * PG });
}

static void op_sbrk(void)
{
	sink = sbrk(PG + 10);
	sbrk(-(intptr_t)PG);
}
static void test_sbrk(void **s)
{
	CHECK(trace_child(op_sbrk), { "mmap_calls_brk", 2 }, { "mmap_mapped_count", 1 },
	      { "mmap_mapped_bytes", PG + 10 }, { "mmap_unmapped_count", 1 },
	      { "mmap_unmapped_bytes", PG }, { "mmap_live_count", 1 }, { "mmap_live_bytes", 10 },
	      { "mmap_peak_live_bytes", PG + 10 });
}

static void op_file_and_failure(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	char *p = mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, 0);

	munmap(p, PG);
	close(fd);
	sink = mmap(NULL, 1UL << 62, RW, ANON, -1, 0);	/* fails */
}
static void test_file_not_counted_failure_counted(void **s)
{
	CHECK(trace_child(op_file_and_failure), { "mmap_untracked", 2 }, { "mmap_calls_mmap", 1 },
	      { "mmap_failed", 1 });
}

/* Two threads at once, each punching holes and unmapping across the pieces: every cut exact
 * while the other thread's regions come and go in the same table. */
#define ROUNDS 500
static char tstacks[2][1 << 16] __attribute__((aligned(4096)));

static void *churn(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		char *p = mmap(NULL, 3 * PG, RW, ANON, -1, 0);

		if (p == MAP_FAILED)
			abort();
		munmap(p + PG, PG);	/* a hole: two pieces */
		munmap(p, 3 * PG);	/* both pieces and the hole in one call */
	}
	return arg;
}

static void op_threads(void)
{
	pthread_t th[2];
	pthread_attr_t a;

	for (int i = 0; i < 2; i++) {
		/* our own stacks: glibc maps none, so only churn's mappings are the program's */
		pthread_attr_init(&a);
		pthread_attr_setstack(&a, tstacks[i], sizeof(tstacks[i]));
		if (pthread_create(&th[i], &a, churn, NULL))
			abort();
		pthread_attr_destroy(&a);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
}

static void test_threads_exact(void **s)
{
	struct profile *prof = trace_child(op_threads);
	struct prof_process *p = &prof->processes[0];
	const struct expect want[] = {
		{ "mmap_calls_mmap", 2 * ROUNDS }, { "mmap_calls_munmap", 4 * ROUNDS },
		{ "mmap_mapped_count", 2 * ROUNDS }, { "mmap_mapped_bytes", 2 * ROUNDS * 3 * PG },
		{ "mmap_unmapped_count", 2 * ROUNDS * 3 },
		{ "mmap_unmapped_bytes", 2 * ROUNDS * 3 * PG },
	};
	uint64_t peak = 0;

	/* the malloc side (thread DTVs) is test_mem_bpf's business: only mmap_* here */
	for (uint32_t i = 0; i < p->nstats; i++) {
		const struct prof_kv *kv = &p->stats[i];
		uint64_t expected = 0;

		if (strncmp(kv->key, "mmap_", 5))
			continue;
		if (!strcmp(kv->key, "mmap_peak_live_bytes")) {
			peak = kv->value;
			continue;
		}
		for (size_t j = 0; j < sizeof(want) / sizeof(want[0]); j++)
			if (!strcmp(want[j].name, kv->key))
				expected = want[j].value;
		if (kv->value != expected)
			fail_msg("%s: got %llu, want %llu", kv->key, (unsigned long long)kv->value,
				 (unsigned long long)expected);
	}
	/* one or both threads' regions at once */
	assert_true(peak >= 3 * PG && peak <= 6 * PG);
	for (uint32_t i = 0; i < prof->ndrops; i++)
		if (prof->drops[i].value)
			fail_msg("drop %s: %llu", prof->drops[i].key,
				 (unsigned long long)prof->drops[i].value);
	profile__free(prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_head_and_tail),
		cmocka_unit_test(test_hole_splits),
		cmocka_unit_test(test_fixed_and_span),
		cmocka_unit_test(test_big_malloc_is_malloc),
		cmocka_unit_test(test_unmap_of_untracked),
		cmocka_unit_test(test_mremap),
		cmocka_unit_test(test_sbrk),
		cmocka_unit_test(test_file_not_counted_failure_counted),
		cmocka_unit_test(test_threads_exact),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_mmap_bpf: needs root (loads BPF, attaches tracepoints)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
