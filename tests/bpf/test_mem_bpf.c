/* BPF-level tests of mem: the collector and its skeleton loaded in this process, attached to a
 * forked child that makes exactly the calls of one case, then read out into a profile.
 * Root required (run by tests/run-e2e.sh). Each case checks every process counter, so a call
 * counted twice, a nested call counted, or a failure counted as an allocation fails here first.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <bpf/bpf.h>
#include "abi/mem.h"
#include "modes/mem/collect.h"
#include "core/probes.h"

static void *volatile sink;
static void *volatile null_ptr;	/* so the compiler cannot turn realloc(NULL, n) into malloc */
static volatile size_t huge = (size_t)PTRDIFF_MAX + 1;
static void *before;	/* allocated before attach: its free is unknown */
static uint32_t sample_mode;	/* mem_collector_opts of the next trace_child */
static uint64_t sample_period;
static uint32_t max_live;	/* 0: 1 << 16 */
static void (*before_finalize)(void);	/* run between the child's op and the final read */

struct expect {
	const char *name;	/* stat or call name */
	uint64_t value;
};

/* Run `op` in a child traced from just before it, and return the profile of the child.
 * temp_ns: mem_collector_opts.temp_ns. */
static struct profile *trace_child_temp(void (*op)(void), uint64_t temp_ns)
{
	struct log_ctx lc = { .prog = "test_mem_bpf" };
	struct mem_collector_opts o = { .lc = &lc, .max_live = max_live ? max_live : 1 << 16,
					.max_stacks = 1 << 12,
					.max_procs = 16, .max_size = UINT64_MAX,
					.temp_ns = temp_ns, .sample_mode = sample_mode,
					.sample_period = sample_period };
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
	before = malloc(48);	/* the child inherits it: allocated before attach */
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
	free(before);
	c = mem_collector__new(&o);
	assert_non_null(c);
	sym = symbolizer__new(&so);
	prof = profile__new("mem");
	assert_non_null(sym);
	assert_non_null(prof);
	assert_int_equal(mem_profile__init(prof, false), 0);
	assert_int_equal(probes__find_allocator(pid, &lib), 0);
	assert_int_equal(mem_collector__attach(c, pid, 0, &lib), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &b, 1), 1);
	if (before_finalize)
		before_finalize();
	assert_int_equal(mem_collector__finalize(c, pid, prof, sym, 0, false), 0);
	mem_collector__drops(c, prof);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	mem_collector__free(c);
	symbolizer__free(sym);
	close(go[0]); close(go[1]); close(done[0]); close(done[1]);
	return prof;
}

static struct profile *trace_child(void (*op)(void))
{
	return trace_child_temp(op, 0);
}

/* Every counter not named in `want` must be 0. */
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
		if (prof->drops[i].value)
			fail_msg("drop %s: %llu", prof->drops[i].key,
				 (unsigned long long)prof->drops[i].value);
	profile__free(prof);
}

#define CHECK(prof, ...) do {							\
		const struct expect w_[] = { __VA_ARGS__ };			\
		check(prof, w_, sizeof(w_) / sizeof(w_[0]));			\
	} while (0)

static void op_malloc_free(void) { void *p = malloc(100); sink = p; free(p); }
static void test_malloc_free(void **s)
{
	CHECK(trace_child(op_malloc_free), { "malloc", 1 }, { "free", 1 }, { "alloc_count", 1 },
	      { "alloc_bytes", 100 }, { "free_count", 1 }, { "free_bytes", 100 },
	      { "peak_live_bytes", 100 }, { "max_request", 100 });
}

static void op_realloc_null(void) { sink = realloc(null_ptr, 50); }
static void test_realloc_null_is_one_realloc(void **s)
{
	CHECK(trace_child(op_realloc_null), { "realloc", 1 }, { "alloc_count", 1 },
	      { "alloc_bytes", 50 }, { "live_count", 1 }, { "live_bytes", 50 },
	      { "peak_live_bytes", 50 }, { "max_request", 50 });
}

static void op_realloc_zero(void) { void *p = malloc(30); sink = p; sink = realloc(p, 0); }
static void test_realloc_zero_frees(void **s)
{
	CHECK(trace_child(op_realloc_zero), { "malloc", 1 }, { "realloc", 1 },
	      { "alloc_count", 1 }, { "alloc_bytes", 30 }, { "free_count", 1 },
	      { "free_bytes", 30 }, { "peak_live_bytes", 30 }, { "max_request", 30 });
}

static void op_realloc_grow(void)
{
	void *p = malloc(16);

	sink = p;
	p = realloc(p, 100000);
	sink = p;
	free(p);
}
static void test_realloc_is_free_plus_alloc(void **s)
{
	CHECK(trace_child(op_realloc_grow), { "malloc", 1 }, { "realloc", 1 }, { "free", 1 },
	      { "alloc_count", 2 }, { "alloc_bytes", 100016 }, { "free_count", 2 },
	      { "free_bytes", 100016 }, { "peak_live_bytes", 100000 }, { "max_request", 100000 });
}

static void op_realloc_fail(void) { void *p = malloc(8); sink = p; sink = realloc(p, huge); }
static void test_failed_realloc_changes_nothing(void **s)
{
	CHECK(trace_child(op_realloc_fail), { "malloc", 1 }, { "realloc", 1 }, { "failed", 1 },
	      { "alloc_count", 1 }, { "alloc_bytes", 8 }, { "live_count", 1 }, { "live_bytes", 8 },
	      { "peak_live_bytes", 8 }, { "max_request", 8 });
}

static void op_posix_memalign_small(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 8, 100) == 0)
		sink = p;	/* glibc serves this with an internal malloc call */
}
static void test_nested_malloc_counts_once(void **s)
{
	CHECK(trace_child(op_posix_memalign_small), { "posix_memalign", 1 }, { "alloc_count", 1 },
	      { "alloc_bytes", 100 }, { "live_count", 1 }, { "live_bytes", 100 },
	      { "peak_live_bytes", 100 }, { "max_request", 100 });
}

static void op_failures(void)
{
	void *p = NULL;

	sink = malloc(huge);
	sink = calloc(huge, 4);
	if (posix_memalign(&p, 64, huge) == 0)
		sink = p;
	free(NULL);
}
static void test_failures_and_free_null(void **s)
{
	CHECK(trace_child(op_failures), { "malloc", 1 }, { "calloc", 1 }, { "posix_memalign", 1 },
	      { "failed", 3 });
}

static void op_unknown_free(void) { free(before); }
static void test_unknown_free_never_negative(void **s)
{
	CHECK(trace_child(op_unknown_free), { "free", 1 }, { "unknown_frees", 1 });
}

static void op_aliases(void)
{
	sink = aligned_alloc(64, 128);
	sink = memalign(64, 256);
	sink = valloc(10);
	sink = pvalloc(20);
	sink = reallocarray(null_ptr, 10, 10);
	sink = calloc(3, 5);
}
static void test_every_function_by_name(void **s)
{
	CHECK(trace_child(op_aliases), { "aligned_alloc", 1 }, { "memalign", 1 }, { "valloc", 1 },
	      { "pvalloc", 1 }, { "reallocarray", 1 }, { "calloc", 1 }, { "alloc_count", 6 },
	      { "alloc_bytes", 128 + 256 + 10 + 20 + 100 + 15 }, { "live_count", 6 },
	      { "live_bytes", 529 }, { "peak_live_bytes", 529 }, { "max_request", 256 });
}

static void op_peak(void)
{
	void *a = malloc(1000), *b = malloc(2000);

	sink = a;
	sink = b;
	free(a);
	free(b);
	a = malloc(500);
	sink = a;
	free(a);
}
static void test_peak(void **s)
{
	CHECK(trace_child(op_peak), { "malloc", 3 }, { "free", 3 }, { "alloc_count", 3 },
	      { "alloc_bytes", 3500 }, { "free_count", 3 }, { "free_bytes", 3500 },
	      { "peak_live_bytes", 3000 }, { "max_request", 2000 });
}

#define THREADS 4
#define PAIRS 5000
static void *thread_op(void *arg)
{
	for (int i = 0; i < PAIRS; i++) {
		void *p = malloc(32 + (i & 7));

		sink = p;
		free(p);
	}
	return NULL;
}
static void op_threads(void)
{
	pthread_t th[THREADS];

	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, thread_op, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}
static void test_threads_exact(void **s)
{
	struct profile *prof = trace_child(op_threads);
	uint64_t v, bytes = 0;

	for (int i = 0; i < PAIRS; i++)
		bytes += 32 + (i & 7);
	bytes *= THREADS;
	/* glibc's own per-thread calls (DTV calloc, thread-cache frees at exit) come on top: the
	 * program's own calls are checked through free_count, which only known blocks reach */
	assert_true(prof_process__stat(&prof->processes[0], "free_count", &v));
	assert_true(v >= THREADS * PAIRS);
	assert_true(prof_process__call(&prof->processes[0], "malloc", &v));
	assert_int_equal(v, THREADS * PAIRS);
	assert_true(prof_process__stat(&prof->processes[0], "free_bytes", &v));
	assert_true(v >= bytes);
	for (uint32_t i = 0; i < prof->ndrops; i++)
		assert_int_equal(prof->drops[i].value, 0);
	profile__free(prof);
}

static void *free_in_thread(void *p)
{
	free(p);
	return NULL;
}

static void op_temporaries(void)
{
	pthread_t th;
	void *a, *b;

	for (int i = 0; i < 10; i++) {		/* 10 temporaries */
		a = malloc(16);
		sink = a;
		free(a);
	}
	for (int i = 0; i < 5; i++) {		/* b is, a is not: b came between */
		a = malloc(16);
		b = malloc(16);
		sink = a;
		sink = b;
		free(a);
		free(b);
	}
	a = malloc(16);				/* freed by another thread: not one */
	sink = a;
	pthread_create(&th, NULL, free_in_thread, a);
	pthread_join(th, NULL);
	a = malloc(16);				/* realloc frees it before allocating: one */
	sink = a;
	a = realloc(a, 100000);
	sink = a;
	free(a);				/* and the realloc'd block: one more */
}
static void test_temporaries_and_lifetimes(void **s)
{
	struct profile *prof = trace_child(op_temporaries);
	uint64_t temps = 0, lives = 0, frees;

	for (uint32_t i = 0; i < prof->nsamples; i++) {
		const struct prof_sample *ps = &prof->samples[i];

		temps += ps->temporary;
		for (uint32_t b = 0; ps->life && b < ps->nlife; b++)
			lives += ps->life[b];
	}
	assert_true(prof_process__stat(&prof->processes[0], "free_count", &frees));
	/* 10 + 5 + the realloc'd first block + the final block */
	assert_int_equal(temps, 17);
	/* every free of a tracked block has a lifetime (the thread's own glibc frees included) */
	assert_int_equal(lives, frees);
	profile__free(prof);
}

static void nap(void)
{
	struct timespec ts = { 0, 30 * 1000000L };

	nanosleep(&ts, NULL);
}

/* a: freed at once; b: freed 30 ms later, nothing allocated between; c: freed at once but
 * after d was allocated; d: freed 30 ms later */
static void op_temp_rules(void)
{
	void *a, *b, *c, *d;

	a = malloc(16);
	sink = a;
	free(a);
	b = malloc(16);
	sink = b;
	nap();
	free(b);
	c = malloc(16);
	d = malloc(16);
	sink = c;
	sink = d;
	free(c);
	nap();
	free(d);
}

static uint64_t temporaries(const struct profile *prof)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < prof->nsamples; i++)
		n += prof->samples[i].temporary;
	return n;
}

static void test_temporary_time_bound(void **s)
{
	struct profile *prof = trace_child(op_temp_rules);

	/* heaptrack's rule: a, b and d (nothing allocated before their free) */
	assert_int_equal(temporaries(prof), 3);
	profile__free(prof);
	/* freed within 10 ms: a and c */
	prof = trace_child_temp(op_temp_rules, 10 * 1000000ull);
	assert_int_equal(temporaries(prof), 2);
	profile__free(prof);
}

/* --sample-every 2 from a random phase: calls 1 and 3, or 2 and 4, are sampled, each weighing 2.
 * In the first case the realloc (call 4) is not sampled but must still free its old block, the
 * sampled call 1; in the second the realloc is sampled and its old block is not tracked. */
static void *volatile keep1, *volatile keep2, *volatile keep3;
static void op_sampled_realloc(void)
{
	void *p = malloc(64);

	keep1 = malloc(64);
	keep2 = malloc(64);
	keep3 = realloc(p, 100000);	/* moves: keep1 is in the way */
}
static void test_sampled_unsampled_realloc_frees(void **s)
{
	int phases[2] = { 0, 0 };

	sample_mode = MEM_SAMPLE_EVERY;
	sample_period = 2;
	for (int i = 0; i < 8; i++) {
		struct profile *prof = trace_child(op_sampled_realloc);
		struct prof_process *p = &prof->processes[0];
		uint64_t malloc_calls = 0;

		assert_true(prof_process__call(p, "malloc", &malloc_calls));
		if (malloc_calls == 4) {
			phases[0]++;
			CHECK(prof, { "malloc", 4 }, { "alloc_count", 4 }, { "alloc_bytes", 256 },
			      { "free_count", 2 }, { "free_bytes", 128 }, { "live_count", 2 },
			      { "live_bytes", 128 }, { "peak_live_bytes", 256 },
			      { "max_request", 64 });
		} else {
			phases[1]++;
			CHECK(prof, { "malloc", 2 }, { "realloc", 2 }, { "alloc_count", 4 },
			      { "alloc_bytes", 200128 }, { "live_count", 4 },
			      { "live_bytes", 200128 }, { "peak_live_bytes", 200128 },
			      { "max_request", 100000 });
		}
	}
	print_message("phases seen: calls 1 and 3 sampled %d times, 2 and 4 %d times\n",
		      phases[0], phases[1]);
	sample_mode = 0;
	sample_period = 0;
}

/* One call site allocating sizes spread over 16..4095 bytes (nine size buckets), more calls
 * than a thread holds before it adds them (512): the site's histogram and lifetimes are held
 * per bucket while the site stays the same, and must come out exact. */
#define MIXED_N 3000
static size_t mixed_size(int i)
{
	return 16 + (size_t)((unsigned)i * 2654435761u % 4080u);
}
static uint64_t mixed_bytes(void)
{
	uint64_t n = 0;

	for (int i = 0; i < MIXED_N; i++)
		n += mixed_size(i);
	return n;
}
static void op_mixed_sizes(void)
{
	for (int i = 0; i < MIXED_N; i++) {
		void *p = malloc(mixed_size(i));

		sink = p;
		free(p);
	}
}
static void test_mixed_sizes_held_histogram(void **s)
{
	struct profile *prof = trace_child(op_mixed_sizes);
	uint64_t want[64] = { 0 }, lives = 0;
	const struct prof_sample *site = NULL;

	for (int i = 0; i < MIXED_N; i++) {
		size_t v = mixed_size(i);
		int b = 0;

		while (v) {
			b++;
			v >>= 1;
		}
		want[b]++;
	}
	for (uint32_t i = 0; i < prof->nsamples; i++)
		if (prof->samples[i].hist && prof->samples[i].nhist > 13 &&
		    prof->samples[i].hist[5] + prof->samples[i].hist[12] > 0)
			site = &prof->samples[i];
	assert_non_null(site);
	for (uint32_t b = 0; b < site->nhist && b < 64; b++)
		if (site->hist[b] != want[b])
			fail_msg("bucket %u: got %llu, want %llu", b,
				 (unsigned long long)site->hist[b], (unsigned long long)want[b]);
	for (uint32_t b = 0; site->life && b < site->nlife; b++)
		lives += site->life[b];
	assert_int_equal(lives, MIXED_N);
	CHECK(prof, { "malloc", MIXED_N }, { "free", MIXED_N }, { "alloc_count", MIXED_N },
	      { "free_count", MIXED_N }, { "alloc_bytes", mixed_bytes() },
	      { "free_bytes", mixed_bytes() }, { "peak_live_bytes", 4095 },
	      { "max_request", 4095 });
}

/* A block freed by one thread (B) whose address another thread (A) gets back: B's free empties
 * its slot of the live table, A's allocation fills one, and B's later calls (eight allocations
 * and frees, then its exit) leave A's block alone. 2000 bytes: past glibc's per-thread cache, so
 * B's free goes back to A's arena and A's next malloc of that size gets the same chunk. */
static void *volatile kept_p, *volatile kept_q;
static sem_t kept_freed, kept_go, kept_done, kept_exit;
static void *kept_thread(void *arg)
{
	void *x[8];

	x[0] = malloc(16);	/* a thread's state is made by its first allocation */
	sink = x[0];
	free(kept_p);
	free(x[0]);
	sem_post(&kept_freed);
	sem_wait(&kept_go);
	for (int i = 0; i < 8; i++)
		x[i] = malloc(16 + 16 * i);
	for (int i = 0; i < 8; i++) {
		sink = x[i];
		free(x[i]);
	}
	sem_post(&kept_done);
	sem_wait(&kept_exit);
	return NULL;
}
static void op_kept_taken_over(void)
{
	pthread_t th;

	sem_init(&kept_freed, 0, 0);
	sem_init(&kept_go, 0, 0);
	sem_init(&kept_done, 0, 0);
	sem_init(&kept_exit, 0, 0);
	kept_p = malloc(2000);
	pthread_create(&th, NULL, kept_thread, NULL);
	sem_wait(&kept_freed);
	kept_q = malloc(2000);
	sem_post(&kept_go);
	sem_wait(&kept_done);
	sem_post(&kept_exit);
	pthread_join(th, NULL);
	free(kept_q);
	if (kept_q != kept_p)
		_exit(3);	/* the case is not the one tested */
}
static void test_address_reused_by_another_thread(void **s)
{
	struct profile *prof = trace_child(op_kept_taken_over);
	uint64_t unknown = 0;
	int sites = 0;

	/* the two 2000-byte allocations (two sites): each freed once, as a known block */
	for (uint32_t i = 0; i < prof->nsamples; i++) {
		const struct prof_sample *ps = &prof->samples[i];
		uint64_t lives = 0;

		if (!ps->hist || ps->nhist <= 11 || !ps->hist[11])
			continue;
		sites++;
		assert_int_equal(ps->hist[11], 1);
		for (uint32_t b = 0; ps->life && b < ps->nlife; b++)
			lives += ps->life[b];
		assert_int_equal(lives, 1);
		assert_int_equal(ps->out.count, 0);
	}
	assert_int_equal(sites, 2);
	assert_true(prof_process__stat(&prof->processes[0], "unknown_frees", &unknown));
	print_message("unknown frees (glibc's own at thread exit): %llu\n",
		      (unsigned long long)unknown);
	for (uint32_t i = 0; i < prof->ndrops; i++)
		assert_int_equal(prof->drops[i].value, 0);
	profile__free(prof);
}

/* A full live table: 16 slots (--max-live 16), 40 blocks live at once. The first 16 are
 * tracked, each of the other 24 is a counted drop and its free an unknown free; with that many
 * blocks in 16 slots most lie past their home slot. Once all are freed every slot is empty
 * again: 16 more blocks are all tracked, and nothing stays live. */
#define FULL_N 40
static void op_full_table(void)
{
	void *p[FULL_N];

	for (int i = 0; i < FULL_N; i++)
		p[i] = malloc(100);
	for (int i = FULL_N - 1; i >= 0; i--)
		free(p[i]);
	for (int i = 0; i < 16; i++)
		p[i] = malloc(200);
	for (int i = 0; i < 16; i++)
		free(p[i]);
}
static void test_full_live_table(void **s)
{
	struct profile *prof;
	struct prof_process *p;
	uint64_t v, full = 0;

	max_live = 16;
	prof = trace_child(op_full_table);
	max_live = 0;
	assert_int_equal(prof->nprocesses, 1);
	p = &prof->processes[0];
	for (uint32_t i = 0; i < prof->ndrops; i++) {
		if (!strcmp(prof->drops[i].key, "live_table_full"))
			full = prof->drops[i].value;
		else
			assert_int_equal(prof->drops[i].value, 0);
	}
	assert_int_equal(full, FULL_N - 16);
	assert_true(prof_process__stat(p, "alloc_count", &v));
	assert_int_equal(v, FULL_N + 16);
	assert_true(prof_process__stat(p, "free_count", &v));
	assert_int_equal(v, 16 + 16);
	assert_true(prof_process__stat(p, "unknown_frees", &v));
	assert_int_equal(v, FULL_N - 16);
	assert_true(prof_process__stat(p, "live_count", &v));
	assert_int_equal(v, 0);
	assert_true(prof_process__stat(p, "live_bytes", &v));
	assert_int_equal(v, 0);
	assert_true(prof_process__stat(p, "peak_live_bytes", &v));
	assert_int_equal(v, 16 * 200);
	profile__free(prof);
}

/* Empty this test's newest stacks map (mem's: hash of u64 to struct mem_stack): what the
 * kernel would hold if a stack had been forgotten while a site still named it. */
static void empty_stacks_map(void)
{
	__u32 id = 0, found = 0;

	while (bpf_map_get_next_id(id, &id) == 0) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id(id);

		if (fd < 0)
			continue;
		/* this test's collector's: its --max-stacks (1 << 12), not an ebprof run's */
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && !strcmp(info.name, "stacks") &&
		    info.type == BPF_MAP_TYPE_HASH && info.value_size == sizeof(struct mem_stack) &&
		    info.max_entries == 1 << 12)
			found = id;
		close(fd);
	}
	assert_true(found);
	{
		int fd = bpf_map_get_fd_by_id(found);
		__u64 k, next;

		assert_true(fd >= 0);
		while (bpf_map_get_next_key(fd, NULL, &next) == 0) {
			k = next;
			assert_int_equal(bpf_map_delete_elem(fd, &k), 0);
		}
		close(fd);
	}
}

/* A site whose stack the map no longer holds: its stack ends past the allocator in
 * "[truncated]", counted (stack_not_found), never shown as the allocator called from nowhere */
static void test_stack_not_found(void **s)
{
	struct profile *prof;
	uint32_t truncated = 0;

	(void)s;
	before_finalize = empty_stacks_map;
	prof = trace_child(op_malloc_free);
	before_finalize = NULL;
	assert_int_equal(prof->nsamples, 1);
	for (uint32_t i = 0; i < prof->nsamples; i++) {
		const struct prof_sample *ps = &prof->samples[i];
		const struct prof_location *l = &prof->locations[ps->locs[ps->nlocs - 1]];

		assert_int_equal(ps->nlocs, 2);	/* malloc, then the end said */
		if (l->nlines && !strcmp(prof->functions[l->lines[0].function].name, "[truncated]"))
			truncated++;
	}
	assert_int_equal(truncated, 1);
	assert_int_equal(profile__drop(prof, "stack_not_found"), 1);
	profile__free(prof);
}

/*
 * The end of a run while a call is in flight (EBPROF_TEST_STALL_SIZE makes its program stay
 * there until the test lets it go, or 300 ms after the end began if the end waits for it).
 * In its return program, its counts held, its block not yet live: the links are closed, but
 * another holder keeps them (as bpftool's or a /proc/PID/fdinfo reader's reference does for a
 * moment), so their close does not wait for the program; the call passed the programs' test
 * before the end and counts whole, its allocation and its live block in one consistent read.
 * In its entry program: the call returns after the end, uncounted, and is told as in flight.
 */
#define STALL_SIZE 4243
static void op_stalled(void) { sink = malloc(STALL_SIZE); }

struct releaser {
	struct mem_collector *c;
	volatile int read_done;
};

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Lets the stalled call go once the run's end has begun and either the read is done or
 * 300 ms have passed (a read that waits for the call waits for this) */
static void *release_stalled(void *arg)
{
	struct releaser *r = arg;

	for (int i = 0; i < 10000 && !mem_collector__test_quiescing(r->c); i++)
		nap_ms(1);
	for (int i = 0; i < 300 && !r->read_done; i++)
		nap_ms(1);
	mem_collector__test_release(r->c);
	return NULL;
}

/* Another reference to each of this process's uprobe_multi links (entries and returns): n of
 * them into fds */
static int hold_links(int *fds, int max)
{
	char path[64], buf[512];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fdinfo");
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < max) {
		int fd = atoi(e->d_name), f;
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = open(path, O_RDONLY);
		if (f < 0)
			continue;
		len = read(f, buf, sizeof(buf) - 1);
		close(f);
		buf[len > 0 ? len : 0] = 0;
		/* uprobe_multi, uretprobe_multi */
		if (strstr(buf, "link_type:\t") && strstr(buf, "probe_multi\n"))
			fds[n++] = dup(fd);
	}
	closedir(d);
	return n;
}

/* The child's malloc(STALL_SIZE) stalled in its program (stall_at: "return" or "entry") when
 * the run ends, the links held by another reference; its profile */
static struct profile *end_while_stalled(const char *stall_at)
{
	struct log_ctx lc = { .prog = "test_mem_bpf" };
	struct mem_collector_opts o = { .lc = &lc, .max_live = 1 << 16, .max_stacks = 1 << 12,
					.max_procs = 16, .max_size = UINT64_MAX };
	struct symbolizer_opts so = { .no_lines = true };
	struct releaser r = { 0 };
	struct symbolizer *sym;
	struct profile *prof;
	struct alloc_lib lib;
	int go[2], held[16], nheld;
	pthread_t th;
	char b;
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* a failed assertion leaves it */
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		op_stalled();
		pause();
		_exit(0);
	}
	setenv("EBPROF_TEST_STALL_SIZE", "4243", 1);
	setenv("EBPROF_TEST_STALL_AT", stall_at, 1);
	r.c = mem_collector__new(&o);
	unsetenv("EBPROF_TEST_STALL_SIZE");
	unsetenv("EBPROF_TEST_STALL_AT");
	assert_non_null(r.c);
	sym = symbolizer__new(&so);
	prof = profile__new("mem");
	assert_non_null(sym);
	assert_non_null(prof);
	assert_int_equal(mem_profile__init(prof, false), 0);
	assert_int_equal(probes__find_allocator(pid, &lib), 0);
	assert_int_equal(mem_collector__attach(r.c, pid, 0, &lib), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	for (int i = 0; i < 10000 && !mem_collector__test_stalled(r.c); i++)
		nap_ms(1);
	assert_true(mem_collector__test_stalled(r.c));
	nheld = hold_links(held, 16);
	assert_true(nheld >= 2);	/* malloc's entry and return links at least */
	assert_int_equal(pthread_create(&th, NULL, release_stalled, &r), 0);
	mem_collector__quiesce(r.c);
	assert_int_equal(mem_collector__finalize(r.c, pid, prof, sym, 0, false), 0);
	r.read_done = 1;
	pthread_join(th, NULL);
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	mem_collector__drops(r.c, prof);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	mem_collector__free(r.c);
	symbolizer__free(sym);
	close(go[0]);
	close(go[1]);
	return prof;
}

static void test_call_in_flight_at_the_end(void **s)
{
	CHECK(end_while_stalled("return"), { "malloc", 1 }, { "alloc_count", 1 },
	      { "alloc_bytes", STALL_SIZE }, { "live_count", 1 }, { "live_bytes", STALL_SIZE },
	      { "peak_live_bytes", STALL_SIZE }, { "max_request", STALL_SIZE });
}

static void test_call_in_progress_at_the_end_is_told(void **s)
{
	struct profile *prof = end_while_stalled("entry");
	bool noted = false;

	for (uint32_t i = 0; i < prof->nnotes; i++)
		noted |= strstr(prof->notes[i], "1 allocator call was in progress when the run "
					       "ended") != NULL;
	assert_true(noted);
	CHECK(prof, { "in_flight", 1 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malloc_free),
		cmocka_unit_test(test_realloc_null_is_one_realloc),
		cmocka_unit_test(test_realloc_zero_frees),
		cmocka_unit_test(test_realloc_is_free_plus_alloc),
		cmocka_unit_test(test_failed_realloc_changes_nothing),
		cmocka_unit_test(test_nested_malloc_counts_once),
		cmocka_unit_test(test_failures_and_free_null),
		cmocka_unit_test(test_unknown_free_never_negative),
		cmocka_unit_test(test_every_function_by_name),
		cmocka_unit_test(test_peak),
		cmocka_unit_test(test_threads_exact),
		cmocka_unit_test(test_temporaries_and_lifetimes),
		cmocka_unit_test(test_temporary_time_bound),
		cmocka_unit_test(test_sampled_unsampled_realloc_frees),
		cmocka_unit_test(test_mixed_sizes_held_histogram),
		cmocka_unit_test(test_address_reused_by_another_thread),
		cmocka_unit_test(test_full_live_table),
		cmocka_unit_test(test_stack_not_found),
		cmocka_unit_test(test_call_in_flight_at_the_end),
		cmocka_unit_test(test_call_in_progress_at_the_end_is_told),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_mem_bpf: needs root (loads BPF, attaches uprobes)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
