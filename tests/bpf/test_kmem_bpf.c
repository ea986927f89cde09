/* BPF-level tests of kmem: the collector (through its struct mode_ops) and its skeleton loaded
 * in this process, attached to this process itself, which then creates pipes (two filp
 * allocations each, from the filp slab cache); the profile read out must count them under the
 * creating function, match their frees by pointer, list the ones still open as outstanding, and
 * count a full live table as a drop. Root required (run by tests/run-e2e.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/collector.h"
#include "modes/kmem/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

#define NPIPES 100

static int fds[2 * NPIPES];

/* libc's pipe() keeps no frame pointer: the frame-pointer walk from the system call skips its
 * direct caller (this function) and finds the caller's caller, the test's function */
__attribute__((noinline, optimize("no-optimize-sibling-calls"))) static int one_pipe(int *p)
{
	return pipe(p);
}

__attribute__((noinline)) void kmem_pipes_closed(void)
{
	for (int i = 0; i < NPIPES; i++) {
		int p[2];

		assert_int_equal(one_pipe(p), 0);
		close(p[0]);
		close(p[1]);
	}
	asm volatile("" : : : "memory");
}

__attribute__((noinline)) void kmem_pipes_held(void)
{
	for (int i = 0; i < NPIPES; i++)
		assert_int_equal(one_pipe(&fds[2 * i]), 0);
	asm volatile("" : : : "memory");
}

static void close_held(void)
{
	for (int i = 0; i < 2 * NPIPES; i++)
		close(fds[i]);
}

/* The samples with leaf `leaf` and a frame `fn`: their value of type t, or their outstanding
 * count (t < 0), summed. */
static int64_t sum_at(const struct profile *p, const char *leaf, const char *fn, int t)
{
	int64_t sum = 0;
	char buf[256];

	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		bool found = false;

		if (!s->nlocs || strcmp(profile__frame_name(p, &p->locations[s->locs[0]], 0, buf,
							    sizeof(buf)), leaf))
			continue;
		for (uint32_t j = 1; j < s->nlocs && !found; j++) {
			const struct prof_location *l = &p->locations[s->locs[j]];

			for (uint32_t k = 0; k < l->nlines && !found; k++)
				found = !strcmp(profile__frame_name(p, l, k, buf, sizeof(buf)), fn);
		}
		if (found)
			sum += t < 0 ? (int64_t)s->out.count : s->values[t];
	}
	return sum;
}

/* /sys/kernel/slab/CACHE/ATTR as a number, or -1 */
static long slab_attr(const char *cache, const char *attr)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Trace this process while work() runs; read out at a finalize (as at its exit stop). */
static struct profile *trace_self(void (*work)(void), uint32_t max_live)
{
	struct log_ctx lc = { .prog = "test_kmem_bpf" };
	struct symbolizer_opts syo = { .no_lines = true };
	struct kmem_opts o = { .max_stacks = 4096, .max_live = max_live };
	struct session_env env = { .lc = &lc };
	const struct mode_ops *ops = &kmem_mode_ops;
	int status;
	void *m;

	env.prof = profile__new("kmem");
	env.sym = symbolizer__new(&syo);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	m = ops->open(&env, &o);
	assert_non_null(m);
	assert_int_equal(ops->attach(m, getpid(), MODE_ATTACH_PID, &status), 0);
	work();
	ops->stop(m);
	ops->finalize(m, getpid(), false);
	ops->finish(m);
	ops->detach(m);
	ops->close(m);
	symbolizer__free(env.sym);
	return env.prof;
}

static void test_freed_pipes_match_their_frees(void **state)
{
	struct profile *p = trace_self(kmem_pipes_closed, 1 << 16);


	/* alloc_objects, inuse_objects: two filps a pipe, each freed at its close */
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_closed", 0),
			 2 * NPIPES);
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_closed", 2), 0);
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_closed", -1), 0);
	/* bytes allocated and waste against the slab's own sysfs (SLUB): its slot size and
	 * object size */
	if (slab_attr("filp", "slab_size") > 0) {
		long slot = slab_attr("filp", "slab_size"), obj = slab_attr("filp", "object_size");

		assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_closed", 1),
				 2 * NPIPES * slot);
		assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_closed", 4),
				 2 * NPIPES * (slot - obj));
	} else {
		print_message("no /sys/kernel/slab/filp: bytes not checked\n");
	}
	assert_int_equal(profile__drop(p, "live_table_full"), 0);
	profile__free(p);
}

static void test_held_pipes_are_outstanding(void **state)
{
	struct profile *p = trace_self(kmem_pipes_held, 1 << 16);

	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_held", 0), 2 * NPIPES);
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_held", 2), 2 * NPIPES);
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_held", -1), 2 * NPIPES);
	/* and each pipe's kmalloc'd pipe_inode_info */
	assert_true(sum_at(p, "kmalloc", "kmem_pipes_held", -1) >= NPIPES);
	close_held();
	profile__free(p);
}

static void test_full_live_table_is_a_drop(void **state)
{
	struct profile *p = trace_self(kmem_pipes_held, 8);

	/* every allocation counted, at most 8 tracked at once */
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_held", 0), 2 * NPIPES);
	assert_true(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_held", -1) <= 8);
	assert_true(profile__drop(p, "live_table_full") >= 2 * NPIPES - 8);
	close_held();
	profile__free(p);
}

/* The take race (core/collector.c, a spill; bpf/lib/take.bpf.h): a child makes TAKE_PIPES
 * pipes and closes them, from TAKE_DEPTHS call depths, while this process ticks the mode as
 * fast as it can: with a stacks map of 16 the stacks it refuses make a spill due at each tick,
 * which takes the count and cache rows out of the kernel. Every allocation must be in exactly
 * one take: the child's rows summed (its samples' alloc_objects, its cache rows' allocs) against
 * its process totals (a table no spill took), the filp rows against the pipes made (two filps
 * each), and each cache row's frees and what is still live against its allocations. all: -a
 * (the child's count rows taken at each spill), else the child attached (its count rows kept
 * in the kernel for its growth series, its cache rows taken). */
#define TAKE_PIPES 40000
#define TAKE_DEPTHS 14

static __attribute__((noinline)) void pipe_at(int depth)
{
	int p[2];

	if (depth > 0) {
		pipe_at(depth - 1);
	} else if (!one_pipe(p)) {
		close(p[0]);
		close(p[1]);
	}
	asm volatile("" : : : "memory");
}

struct take_result {
	struct profile *p;
	pid_t child;
	unsigned ticks;
};

static struct take_result pipes_while_ticking(bool all, uint32_t max_stacks)
{
	struct log_ctx lc = { .prog = "test_kmem_bpf" };
	struct symbolizer_opts syo = { .no_lines = true };
	struct kmem_opts o = { .max_stacks = max_stacks, .max_live = 1 << 17 };
	struct session_env env = { .lc = &lc, .all = all };
	const struct mode_ops *ops = &kmem_mode_ops;
	struct take_result r = { 0 };
	int go[2], status;
	char c = 0;
	void *m;

	env.prof = profile__new("kmem");
	env.sym = symbolizer__new(&syo);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	assert_int_equal(pipe(go), 0);
	r.child = fork();
	assert_true(r.child >= 0);
	if (!r.child) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (int i = 0; i < TAKE_PIPES; i++)
			pipe_at(i % TAKE_DEPTHS);
		_exit(0);
	}
	close(go[0]);
	m = ops->open(&env, &o);
	assert_non_null(m);
	if (all)
		assert_int_equal(ops->attach_all(m), 0);
	else
		assert_int_equal(ops->attach(m, r.child, MODE_ATTACH_PID, &status), 0);
	ops->started(m, util_mono_ns());
	assert_int_equal(write(go[1], &c, 1), 1);
	while (waitpid(r.child, &status, WNOHANG) == 0) {
		ops->tick(m, 0, false);
		r.ticks++;
	}
	close(go[1]);
	ops->stop(m);
	if (!all)
		ops->finalize(m, r.child, false);
	ops->finish(m);
	ops->detach(m);
	ops->close(m);
	symbolizer__free(env.sym);
	r.p = env.prof;
	return r;
}

static uint64_t proc_stat(const struct profile *p, pid_t pid, const char *name)
{
	const struct prof_process *pp = profile__find_process(p, (uint32_t)pid);
	uint64_t v = 0;

	return pp && prof_process__stat(pp, name, &v) ? v : 0;
}

static void check_takes(bool all)
{
	struct take_result r = pipes_while_ticking(all, 16);
	const struct profile *p = r.p;
	uint64_t allocs = 0, cache_allocs = 0, filp = 0, bad_frees = 0, totals, cache_totals;

	for (uint32_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].pid == (uint32_t)r.child)
			allocs += (uint64_t)p->samples[i].values[0];
	for (uint32_t i = 0; i < p->ncaches; i++) {
		const struct prof_cache *pc = &p->caches[i];

		if (pc->pid != (uint32_t)r.child)
			continue;
		cache_allocs += pc->allocs;
		if (!strcmp(pc->name, "filp"))
			filp += pc->allocs;
		/* each allocation tracked is freed (matched by pointer) or still live */
		if (pc->frees + pc->live != pc->allocs) {
			print_message("take race: cache %s: %llu allocs, %llu frees, %llu live\n",
				      pc->name, (unsigned long long)pc->allocs,
				      (unsigned long long)pc->frees, (unsigned long long)pc->live);
			bad_frees++;
		}
	}
	cache_totals = proc_stat(p, r.child, "kmem_kmalloc") +
		       proc_stat(p, r.child, "kmem_cache_alloc");
	totals = cache_totals + proc_stat(p, r.child, "kmem_page_alloc") +
		 proc_stat(p, r.child, "kmem_percpu_alloc");
	print_message("take race (%s): %u ticks; allocations: %llu in the samples, "
		      "%llu in the totals; cache rows %llu, totals %llu; filp %llu of %d; drops: "
		      "counts_full %llu caches_full %llu live_table_full %llu free_unseen %llu\n",
		      all ? "-a" : "attached", r.ticks,
		      (unsigned long long)allocs, (unsigned long long)totals,
		      (unsigned long long)cache_allocs, (unsigned long long)cache_totals,
		      (unsigned long long)filp, 2 * TAKE_PIPES,
		      (unsigned long long)profile__drop(p, "counts_full"),
		      (unsigned long long)profile__drop(p, "caches_full"),
		      (unsigned long long)profile__drop(p, "live_table_full"),
		      (unsigned long long)profile__drop(p, "free_unseen"));
	/* a row the count table had no room for is a counted drop (of any process: -a) */
	assert_true(totals > 0);
	if (!all || !profile__drop(p, "counts_full"))
		assert_int_equal(allocs + profile__drop(p, "counts_full"), totals);
	assert_int_equal(profile__drop(p, "caches_full"), 0);
	assert_int_equal(cache_allocs, cache_totals);
	assert_int_equal(filp, 2 * TAKE_PIPES);
	if (!profile__drop(p, "live_table_full") && !profile__drop(p, "free_unseen"))
		assert_int_equal(bad_frees, 0);
	profile__free(r.p);
}

static void test_spills_lose_nothing_attached(void **state)
{
	(void)state;
	check_takes(false);
}

static void test_spills_lose_nothing_all(void **state)
{
	(void)state;
	check_takes(true);
}

/* The process totals table at spills: with -a and a table of TOTALS_ROOM processes (the test
 * knob), TOTALS_CHILDREN short-lived children each make TOTALS_PIPES pipes and exit, one after
 * another, while this process ticks the mode between them. A spill takes the totals of the
 * processes gone (those alive keep theirs: a free of their allocations lowers their live
 * counts there), so that the table never fills: no drop, and every child's row is in the
 * report, its totals exact: its kmalloc and cache allocations those of its cache rows (a table
 * of their own), its filp allocations two a pipe, what is live of it what the live table
 * holds. Before, the table filled after a few hundred children: process_totals_full, and the
 * later children had no totals. The machine's own processes (-a) share the room: ~100 here. */
#define TOTALS_ROOM 1024
#define TOTALS_CHILDREN 3000
#define TOTALS_PIPES 5

static void test_totals_taken_at_spills(void **state)
{
	struct log_ctx lc = { .prog = "test_kmem_bpf" };
	struct symbolizer_opts syo = { .no_lines = true };
	struct kmem_opts o = { .max_stacks = 4096, .max_live = 1 << 17,
			       .test_max_procs = TOTALS_ROOM };
	struct session_env env = { .lc = &lc, .all = true };
	const struct mode_ops *ops = &kmem_mode_ops;
	static pid_t kids[TOTALS_CHILDREN];
	uint32_t missing = 0, wrong = 0, bad_filp = 0;
	struct profile *p;
	int status;
	void *m;

	(void)state;
	env.prof = profile__new("kmem");
	env.sym = symbolizer__new(&syo);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	m = ops->open(&env, &o);
	assert_non_null(m);
	assert_int_equal(ops->attach_all(m), 0);
	ops->started(m, util_mono_ns());
	for (int i = 0; i < TOTALS_CHILDREN; i++) {
		kids[i] = fork();
		assert_true(kids[i] >= 0);
		if (!kids[i]) {
			for (int j = 0; j < TOTALS_PIPES; j++)
				pipe_at(0);
			_exit(0);
		}
		assert_int_equal(waitpid(kids[i], &status, 0), kids[i]);
		ops->tick(m, 0, false);
	}
	ops->stop(m);
	ops->finish(m);
	ops->detach(m);
	ops->close(m);
	symbolizer__free(env.sym);
	p = env.prof;
	for (int i = 0; i < TOTALS_CHILDREN; i++) {
		uint64_t cache_allocs = 0, filp = 0, live = 0, totals;

		if (!profile__find_process(p, (uint32_t)kids[i]) ||
		    !proc_stat(p, kids[i], "kmem_cache_alloc")) {
			missing++;
			continue;
		}
		for (uint32_t j = 0; j < p->ncaches; j++) {
			const struct prof_cache *pc = &p->caches[j];

			if (pc->pid != (uint32_t)kids[i])
				continue;
			cache_allocs += pc->allocs;
			live += pc->live;
			if (!strcmp(pc->name, "filp"))
				filp += pc->allocs;
		}
		totals = proc_stat(p, kids[i], "kmem_kmalloc") +
			 proc_stat(p, kids[i], "kmem_cache_alloc");
		if (totals != cache_allocs)
			wrong++;
		if (filp != 2 * TOTALS_PIPES)
			bad_filp++;
		/* what is live of a child: its cache rows' (the page allocations of its exit may
		 * be live too: at least those) */
		if (proc_stat(p, kids[i], "kmem_live_count") < live)
			wrong++;
	}
	print_message("totals: %d children, table of %d: %u without totals, %u not exact, %u "
		      "with filp not %d; process_totals_full %lld\n", TOTALS_CHILDREN, TOTALS_ROOM,
		      missing, wrong, bad_filp, 2 * TOTALS_PIPES,
		      (long long)profile__drop(p, "process_totals_full"));
	assert_int_equal(profile__drop(p, "process_totals_full"), 0);
	assert_int_equal(missing, 0);
	assert_int_equal(wrong, 0);
	assert_int_equal(bad_filp, 0);
	profile__free(p);
}

/* The growth series of a traced process that exits while others go on counting (a launched
 * tree, -p with several PIDs). Child A makes GROWTH_PIPES pipes and hands them to a grandchild
 * (not traced) that holds them past the end, lives on for a few snapshots and exits; the test
 * ticks on for GROWTH_AFTER_NS, long enough for the snapshot after the one that finds A's exit
 * done (0.5 s apart at first): A's series' last point, after which its rows are taken. Child B
 * then makes pipes from many stacks, its refused stacks making a spill due at each tick, until
 * two spills (two flips: each generation taken once) have run. A's series must end at that
 * point, before B's spills (its rows kept until the run's end, a launched tree's ended
 * processes filled the count table), and with A's filps still live in it: taken by a spill
 * after A's exit and before that point, they read as 0 there (its in-use bytes). */
#define GROWTH_PIPES 50
#define GROWTH_MAX_TICKS 20000
#define GROWTH_AFTER_NS 3000000000ll

__attribute__((noinline)) void kmem_pipes_handed_on(int *fds_out)
{
	for (int i = 0; i < GROWTH_PIPES; i++)
		assert_int_equal(one_pipe(&fds_out[2 * i]), 0);
	asm volatile("" : : : "memory");
}

static void test_ended_series_ends_with_its_rows(void **state)
{
	struct log_ctx lc = { .prog = "test_kmem_bpf", .verbose = getenv("TEST_VERBOSE") ? 1 : 0 };
	struct symbolizer_opts syo = { .no_lines = true };
	struct kmem_opts o = { .max_stacks = 64, .max_live = 1 << 17 };
	struct session_env env = { .lc = &lc };
	const struct mode_ops *ops = &kmem_mode_ops;
	int go_a[2], go_b[2], hold[2], status;
	int64_t inuse = 0, last = 0, b_ticks = 0, t_b;
	uint64_t start, a_done;
	const struct prof_process *pa;
	unsigned spills;
	pid_t a, b;
	uint32_t with_growth = 0;
	struct profile *p;
	char c = 0;
	void *m;

	(void)state;
	env.prof = profile__new("kmem");
	env.sym = symbolizer__new(&syo);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	assert_int_equal(pipe(go_a), 0);
	assert_int_equal(pipe(go_b), 0);
	assert_int_equal(pipe(hold), 0);
	a = fork();
	assert_true(a >= 0);
	if (!a) {
		static int own[2 * GROWTH_PIPES];

		/* every write end but the grandchild's hold closed: the test gone, its reads end */
		close(go_a[1]);
		close(go_b[1]);
		close(hold[1]);
		if (read(go_a[0], &c, 1) != 1)
			_exit(1);
		kmem_pipes_handed_on(own);
		/* the grandchild holds them until the test closes `hold` */
		if (!fork()) {
			if (read(hold[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		for (int i = 0; i < 2 * GROWTH_PIPES; i++)
			close(own[i]);
		/* a few snapshots of its live bytes (one each 0.5 s at first) */
		usleep(5000 * 1000);
		_exit(0);
	}
	close(hold[0]);
	b = fork();
	assert_true(b >= 0);
	if (!b) {
		close(go_a[1]);
		close(go_b[1]);
		close(hold[1]);
		if (read(go_b[0], &c, 1) != 1)
			_exit(1);
		/* it never ends by itself: killed by the test, or as the test dies */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		for (int i = 0;; i++)
			pipe_at(i % TAKE_DEPTHS);
	}
	close(go_a[0]);
	close(go_b[0]);
	m = ops->open(&env, &o);
	assert_non_null(m);
	/* as the session: started first, the series' times count from it */
	start = util_mono_ns();
	ops->started(m, start);
	assert_int_equal(ops->attach(m, a, MODE_ATTACH_PID, &status), 0);
	assert_int_equal(ops->attach(m, b, MODE_ATTACH_PID, &status), 0);
	assert_int_equal(write(go_a[1], &c, 1), 1);
	while (waitpid(a, &status, WNOHANG) == 0) {
		ops->tick(m, 0, false);
		usleep(10 * 1000);
	}
	/* as the session does at its exit stop (here after it: A is reaped) */
	ops->finalize(m, a, false);
	a_done = util_mono_ns();
	while (util_mono_ns() - a_done < GROWTH_AFTER_NS) {
		ops->tick(m, 0, false);
		usleep(10 * 1000);
	}
	t_b = (int64_t)(util_mono_ns() - start);
	assert_int_equal(write(go_b[1], &c, 1), 1);
	/* B's refused stacks make a spill due at each tick: two flips take both generations (the
	 * collector's count of them: struct collector is the mode's first member) */
	spills = ((struct collector *)m)->spills;
	for (; ((struct collector *)m)->spills < spills + 2 && b_ticks < GROWTH_MAX_TICKS;
	     b_ticks++)
		ops->tick(m, 0, false);
	spills = ((struct collector *)m)->spills - spills;
	kill(b, SIGKILL);
	assert_int_equal(waitpid(b, &status, 0), b);
	ops->finalize(m, b, false);
	ops->stop(m);
	ops->finish(m);
	ops->detach(m);
	ops->close(m);
	close(hold[1]);	/* the grandchild exits */
	close(go_a[1]);
	close(go_b[1]);
	symbolizer__free(env.sym);
	p = env.prof;
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		char buf[256];

		if (s->pid != (uint32_t)a || !s->nlocs ||
		    strcmp(profile__frame_name(p, &p->locations[s->locs[0]], 0, buf, sizeof(buf)),
			   "kmem_cache_alloc [filp]"))
			continue;
		inuse += s->values[3];
		if (s->growth.trend != PROF_TREND_NONE) {
			last += s->growth.last_bytes;
			with_growth++;
		}
	}
	pa = profile__find_process(p, a);
	assert_non_null(pa);
	print_message("ended series: A's filps in use %lld bytes, at its last snapshot %lld "
		      "(%u samples with a series, its last point at %.2f s, B from %.2f s); %lld "
		      "ticks of B, %u spills; counts_full %lld\n",
		      (long long)inuse, (long long)last, with_growth, pa->fit_to_ns / 1e9,
		      t_b / 1e9, (long long)b_ticks, spills,
		      (long long)profile__drop(p, "counts_full"));
	assert_true(spills >= 2);
	assert_int_equal(sum_at(p, "kmem_cache_alloc [filp]", "kmem_pipes_handed_on", 2),
			 2 * GROWTH_PIPES);
	assert_true(with_growth > 0);
	assert_int_equal(last, inuse);
	/* its series ended after its exit, before B's spills took its rows */
	assert_true(pa->fit_to_ns > 0 && pa->fit_to_ns < t_b);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freed_pipes_match_their_frees),
		cmocka_unit_test(test_held_pipes_are_outstanding),
		cmocka_unit_test(test_full_live_table_is_a_drop),
		cmocka_unit_test(test_spills_lose_nothing_attached),
		cmocka_unit_test(test_spills_lose_nothing_all),
		cmocka_unit_test(test_totals_taken_at_spills),
		cmocka_unit_test(test_ended_series_ends_with_its_rows),
	};

	if (geteuid()) {
		fprintf(stderr, "test_kmem_bpf: skipped: needs root (loads BPF programs)\n");
		return 0;
	}
	/* TEST_FILTER=test_name (a glob): run only those (the totals test takes minutes) */
	if (getenv("TEST_FILTER"))
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
