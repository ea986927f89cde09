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
#include <unistd.h>
#include <cmocka.h>
#include "modes/kmem/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freed_pipes_match_their_frees),
		cmocka_unit_test(test_held_pipes_are_outstanding),
		cmocka_unit_test(test_full_live_table_is_a_drop),
	};

	if (geteuid()) {
		fprintf(stderr, "test_kmem_bpf: skipped: needs root (loads BPF programs)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
