/* Helpers that build profiles by hand for the renderer tests (test_output.c, test_flame.c,
 * test_csv.c, test_html.c, test_speedscope.c, test_pprof_read.c): functions, locations with
 * their lines, stacks and samples, each asserting that the profile took it; the mem value types
 * and per-process counters as the collector makes them; and a fixed pseudo-random sequence and
 * a clock for the large synthetic profiles. Each test keeps its own profile; only these small
 * builders are shared. Include after cmocka.h; every function is static, each test binary gets
 * its own copy. */
#ifndef EBPROF_TEST_PROFILE_BUILDER_H
#define EBPROF_TEST_PROFILE_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "profile/profile.h"

static __attribute__((unused)) uint32_t fn(struct profile *p, const char *name, const char *sys,
					   const char *file)
{
	uint32_t i = profile__function(p, name, sys, file);

	assert_int_not_equal(i, PROF_NONE);
	return i;
}

static __attribute__((unused)) uint32_t loc(struct profile *p, uint32_t map, uint64_t addr,
					    uint64_t off, const struct prof_line *lines,
					    uint32_t n)
{
	uint32_t i = profile__location(p, map, addr, off, lines, n);

	assert_int_not_equal(i, PROF_NONE);
	return i;
}

/* LOC(p, map, addr, off, { f1, line1 }, { f2, line2 }, ...): a location with its lines, the
 * innermost (inlined) first. STACK(l1, l2, ...): a stack, leaf first, as (locs, n) arguments. */
#define LINES(...) ((const struct prof_line[]){ __VA_ARGS__ })
#define NLINES(...) (sizeof((const struct prof_line[]){ __VA_ARGS__ }) / sizeof(struct prof_line))
#define LOC(p, map, addr, off, ...) loc(p, map, addr, off, LINES(__VA_ARGS__), NLINES(__VA_ARGS__))
#define STACK(...) (uint32_t[]){ __VA_ARGS__ }, (sizeof((uint32_t[]){ __VA_ARGS__ }) / 4)

/* A sample with up to four values, in the order of the profile's types (mem_types: objects,
 * bytes, then the same for what is still live); unused ones 0. */
static __attribute__((unused)) struct prof_sample *sample(struct profile *p, const uint32_t *locs,
							  uint32_t n, int64_t a, int64_t b,
							  int64_t c, int64_t d, uint32_t pid)
{
	int64_t v[4] = { a, b, c, d };
	struct prof_sample *s = profile__add_sample(p, locs, n, v, pid);

	assert_non_null(s);
	return s;
}

/* The value types of an `ebprof mem` profile, alloc_space the default. */
static __attribute__((unused)) void mem_types(struct profile *p)
{
	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__add_type(p, "inuse_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "inuse_space", "bytes"), 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
}

/* The leak classes of a run that scanned (mem --leaks), after mem_types: "<class>_objects" and
 * "<class>_space" for definite, indirect, possible and reachable, as mem_profile__init adds
 * them. */
static __attribute__((unused)) void leak_types(struct profile *p)
{
	static const char *const classes[] = { "definite", "indirect", "possible", "reachable" };
	char name[32];

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		snprintf(name, sizeof(name), "%s_objects", classes[i]);
		assert_int_equal(profile__add_type(p, name, "count"), 0);
		snprintf(name, sizeof(name), "%s_space", classes[i]);
		assert_int_equal(profile__add_type(p, name, "bytes"), 0);
	}
}

/* A sample with one value per type of the profile (v has p->ntypes entries). */
static __attribute__((unused)) struct prof_sample *sample_v(struct profile *p,
							    const uint32_t *locs, uint32_t n,
							    const int64_t *v, uint32_t pid)
{
	struct prof_sample *s = profile__add_sample(p, locs, n, v, pid);

	assert_non_null(s);
	return s;
}

/* The allocator calls and the statistics the collector counts for each process. */
static const char *const mem_calls[] __attribute__((unused)) = {
	"malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "memalign",
	"posix_memalign", "valloc", "pvalloc",
};

static const char *const mem_stats[] __attribute__((unused)) = {
	"alloc_count", "alloc_bytes", "free_count", "free_bytes", "live_count", "live_bytes",
	"peak_live_bytes", "max_request", "unknown_frees",
};

/* A process with a count for each of mem_calls and a value for each of mem_stats. */
static __attribute__((unused)) struct prof_process *process(struct profile *p, uint32_t pid,
							    const char *comm,
							    const char *cmdline,
							    const uint64_t *calls,
							    const uint64_t *stats)
{
	struct prof_process *proc = profile__add_process(p, pid, comm, cmdline);
	size_t i;

	assert_non_null(proc);
	for (i = 0; i < sizeof(mem_calls) / sizeof(mem_calls[0]); i++)
		assert_int_equal(prof_process__add_call(p, proc, mem_calls[i], calls[i]), 0);
	for (i = 0; i < sizeof(mem_stats) / sizeof(mem_stats[0]); i++)
		assert_int_equal(prof_process__add_stat(p, proc, mem_stats[i], stats[i]), 0);
	return proc;
}

/* ---- large synthetic profiles ----------------------------------------------------------- */

/* xorshift64 from a fixed seed: the same profile on every run. */
static __attribute__((unused)) uint64_t rng_state = 88172645463325252ULL;

static __attribute__((unused)) uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/* Monotonic seconds, to time a renderer. */
static __attribute__((unused)) double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
