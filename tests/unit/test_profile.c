/* The profile model: interning of functions, mappings, locations and strings; growth to 100k
 * samples with every table doubling many times; processes, calls and stats; drops, notes,
 * frame names and argument checking. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

static void test_new_free(void **state)
{
	struct profile *p = profile__new("mem");

	assert_non_null(p);
	assert_string_equal(p->mode, "mem");
	assert_int_equal(p->nsamples, 0);
	assert_null(p->command);
	profile__free(p);
	profile__free(NULL);
}

static void test_meta_and_types(void **state)
{
	struct profile *p = profile__new("mem");
	char cmd[] = "./demo 1";

	assert_int_equal(profile__set_meta(p, cmd, "6.1.0", NULL, 11, 22), 0);
	/* copied, not borrowed */
	cmd[0] = 'X';
	assert_string_equal(p->command, "./demo 1");
	assert_string_equal(p->kernel, "6.1.0");
	assert_null(p->options);
	assert_int_equal(p->time_nanos, 11);
	assert_int_equal(p->duration_nanos, 22);

	assert_int_equal(profile__add_type(p, "alloc_objects", "count"), 0);
	assert_int_equal(profile__add_type(p, "alloc_space", "bytes"), 0);
	assert_int_equal(profile__add_type(p, NULL, "bytes"), -EINVAL);
	assert_int_equal(p->ntypes, 2);
	assert_int_equal(profile__type_index(p, "alloc_space"), 1);
	assert_int_equal(profile__type_index(p, "cpu"), -1);
	assert_int_equal(profile__type_index(p, NULL), -1);
	assert_int_equal(p->default_type, 0);
	assert_int_equal(profile__set_default_type(p, "alloc_space"), 0);
	assert_int_equal(p->default_type, 1);
	assert_int_equal(profile__set_default_type(p, "cpu"), -ENOENT);
	assert_int_equal(p->default_type, 1);

	/* the value arrays of existing samples are sized by the types */
	assert_non_null(profile__add_sample(p, NULL, 0, NULL, 1));
	assert_int_equal(profile__add_type(p, "inuse_space", "bytes"), -EBUSY);
	assert_int_equal(p->samples[0].values[0], 0);
	assert_int_equal(p->samples[0].values[1], 0);
	profile__free(p);
}

static void test_function_interning(void **state)
{
	struct profile *p = profile__new("mem");
	char name[32] = "parse_line";
	uint32_t a, b, c, d, e;

	a = profile__function(p, name, "parse_line", "demo.c");
	b = profile__function(p, "parse_line", "parse_line", "demo.c");
	c = profile__function(p, "parse_line", "parse_line", "other.c");
	d = profile__function(p, "parse_line", NULL, "demo.c");
	e = profile__function(p, "parse_line", NULL, NULL);
	assert_int_equal(a, 0);
	assert_int_equal(b, a);
	assert_int_not_equal(c, a);
	assert_int_not_equal(d, a);
	assert_int_not_equal(e, d);
	assert_int_equal(profile__function(p, "parse_line", NULL, "demo.c"), d);
	assert_int_equal(p->nfunctions, 4);

	strcpy(name, "clobbered");
	assert_string_equal(p->functions[a].name, "parse_line");
	assert_string_equal(p->functions[a].filename, "demo.c");
	assert_null(p->functions[d].system_name);
	assert_null(p->functions[e].filename);
	/* equal strings are stored once */
	assert_ptr_equal(p->functions[a].name, p->functions[c].name);

	errno = 0;
	assert_int_equal(profile__function(p, NULL, "x", NULL), PROF_NONE);
	assert_int_equal(errno, EINVAL);
	profile__free(p);
}

static void test_mapping_and_location_interning(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_line lines[2];
	uint32_t m1, m2, m3, m4, f0, f1, l1, l2, l3, l4;

	m1 = profile__mapping(p, 100, 0x1000, 0x2000, 0, "/bin/a", "abcd");
	/* keyed on (pid, start, file): limit and build-id of the first call stay */
	m2 = profile__mapping(p, 100, 0x1000, 0x3000, 0x10, "/bin/a", NULL);
	m3 = profile__mapping(p, 200, 0x1000, 0x2000, 0, "/bin/a", "abcd");
	m4 = profile__mapping(p, 100, 0x1000, 0x2000, 0, "/bin/b", NULL);
	assert_int_equal(m1, m2);
	assert_int_not_equal(m1, m3);
	assert_int_not_equal(m1, m4);
	assert_int_equal(p->nmappings, 3);
	assert_int_equal(p->mappings[m1].limit, 0x2000);
	assert_string_equal(p->mappings[m1].build_id, "abcd");
	assert_int_equal(p->mappings[m3].pid, 200);
	assert_int_equal(profile__mapping(p, 1, 0, 0, 0, NULL, NULL), PROF_NONE);

	f0 = profile__function(p, "inner", NULL, "a.c");
	f1 = profile__function(p, "outer", NULL, "a.c");
	lines[0] = (struct prof_line){ f0, 10 };
	lines[1] = (struct prof_line){ f1, 20 };
	l1 = profile__location(p, m1, 0x1234, 0x234, lines, 2);
	/* lines are copied */
	lines[0].line = 99;
	l2 = profile__location(p, m1, 0x1234, 0x234, lines, 2);
	l3 = profile__location(p, m3, 0x1234, 0x234, NULL, 0);
	l4 = profile__location(p, PROF_NONE, 0x1234, 0, NULL, 0);
	assert_int_equal(l1, l2);
	assert_int_not_equal(l1, l3);
	assert_int_not_equal(l3, l4);
	assert_int_equal(profile__location(p, PROF_NONE, 0x1234, 0, NULL, 0), l4);
	assert_int_equal(p->nlocations, 3);
	assert_int_equal(p->locations[l1].nlines, 2);
	assert_int_equal(p->locations[l1].lines[0].line, 10);
	assert_int_equal(p->locations[l1].lines[1].function, f1);
	assert_int_equal(p->locations[l3].nlines, 0);
	assert_null(p->locations[l3].lines);
	assert_int_equal(p->locations[l4].mapping, PROF_NONE);

	/* indices are checked */
	errno = 0;
	lines[0].function = 77;
	assert_int_equal(profile__location(p, m1, 0x9999, 0, lines, 1), PROF_NONE);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(profile__location(p, 55, 0x9999, 0, NULL, 0), PROF_NONE);
	assert_int_equal(profile__location(p, m1, 0x9999, 0, NULL, 1), PROF_NONE);
	assert_int_equal(p->nlocations, 3);
	profile__free(p);
}

static void test_samples(void **state)
{
	struct profile *p = profile__new("mem");
	uint32_t locs[2], m, bad = 5;
	int64_t v[2] = { 3, 300 };
	uint64_t hist[4] = { 0, 1, 2, 0 };
	struct prof_sample *s;

	profile__add_type(p, "alloc_objects", "count");
	profile__add_type(p, "alloc_space", "bytes");
	m = profile__mapping(p, 1, 0x1000, 0x2000, 0, "/bin/a", NULL);
	locs[0] = profile__location(p, m, 0x1100, 0x100, NULL, 0);
	locs[1] = profile__location(p, m, 0x1200, 0x200, NULL, 0);

	s = profile__add_sample(p, locs, 2, v, 42);
	assert_non_null(s);
	locs[0] = locs[1];
	v[0] = 0;
	assert_int_equal(s->nlocs, 2);
	assert_int_not_equal(s->locs[0], s->locs[1]);
	assert_int_equal(s->values[0], 3);
	assert_int_equal(s->values[1], 300);
	assert_int_equal(s->pid, 42);
	assert_int_equal(s->out.count, 0);
	assert_null(s->hist);

	assert_int_equal(prof_sample__set_hist(p, s, hist, 4), 0);
	hist[1] = 7;
	assert_int_equal(s->nhist, 4);
	assert_int_equal(s->hist[1], 1);
	assert_int_equal(s->hist[2], 2);
	assert_int_equal(prof_sample__set_hist(p, s, NULL, 0), 0);
	assert_int_equal(s->nhist, 0);
	assert_int_equal(prof_sample__set_hist(p, s, NULL, 3), -EINVAL);

	errno = 0;
	assert_null(profile__add_sample(p, &bad, 1, v, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(profile__add_sample(p, NULL, 1, v, 1));
	assert_int_equal(p->nsamples, 1);
	profile__free(p);
}

/* profile__find_sample and profile__add_to_sample: one sample per (pid, locations), values
 * summed; samples added by profile__add_sample are found too (the index catches up), across
 * its growth; another pid or other locations (or their order, or a prefix) are other samples */
static void test_same_sample(void **state)
{
	struct profile *p = profile__new("cpu");
	uint32_t locs[3], rev[2], m;
	int64_t v[2] = { 1, 10 };
	struct prof_sample *s;

	(void)state;
	profile__add_type(p, "samples", "count");
	profile__add_type(p, "cpu", "nanoseconds");
	m = profile__mapping(p, 1, 0x1000, 0x9000, 0, "/bin/a", NULL);
	for (int i = 0; i < 3; i++)
		locs[i] = profile__location(p, m, 0x1100 + 0x100 * i, 0x100 * (i + 1), NULL, 0);
	rev[0] = locs[1];
	rev[1] = locs[0];

	assert_int_equal(profile__find_sample(p, locs, 2, 7), PROF_NONE);
	assert_non_null(profile__add_sample(p, locs, 2, v, 7));
	/* made before the first find: indexed at it */
	assert_int_equal(profile__find_sample(p, locs, 2, 7), 0);
	s = profile__add_to_sample(p, locs, 2, v, 7);
	assert_non_null(s);
	assert_int_equal(p->nsamples, 1);
	assert_int_equal(s->values[0], 2);
	assert_int_equal(s->values[1], 20);
	/* another pid, the locations reversed, a prefix, one more frame: four more */
	assert_non_null(profile__add_to_sample(p, locs, 2, v, 8));
	assert_non_null(profile__add_to_sample(p, rev, 2, v, 7));
	assert_non_null(profile__add_to_sample(p, locs, 1, v, 7));
	assert_non_null(profile__add_to_sample(p, locs, 3, v, 7));
	assert_int_equal(p->nsamples, 5);
	assert_int_equal(profile__find_sample(p, rev, 2, 7), 2);
	assert_int_equal(profile__find_sample(p, locs, 3, 7), 4);
	/* no locations at all is a sample too; values NULL adds nothing */
	assert_non_null(profile__add_to_sample(p, NULL, 0, v, 7));
	assert_non_null(profile__add_to_sample(p, NULL, 0, NULL, 7));
	assert_int_equal(p->nsamples, 6);
	assert_int_equal(p->samples[5].values[0], 1);
	/* thousands of samples (the index grows many times): each found where it was put */
	for (uint32_t pid = 100; pid < 5100; pid++)
		assert_non_null(profile__add_sample(p, locs, 3, v, pid));
	for (uint32_t pid = 100; pid < 5100; pid += 7)
		assert_int_equal(profile__find_sample(p, locs, 3, pid), 6 + pid - 100);
	assert_int_equal(profile__find_sample(p, locs, 2, 7), 0);
	assert_int_equal(profile__find_sample(p, locs, 3, 5100), PROF_NONE);
	profile__free(p);
}

/* 100k samples over 100k locations, 10k functions and 1k mappings: every array and hash table
 * doubles many times, and interning must still find every earlier entry afterwards. */
static void test_growth(void **state)
{
	enum { NS = 100000, NF = 10000, NM = 1000 };
	struct profile *p = profile__new("mem");
	uint32_t i, *funcs = malloc(sizeof(*funcs) * NF), *maps = malloc(sizeof(*maps) * NM);
	uint32_t *locs = malloc(sizeof(*locs) * NS);
	char name[64];

	assert_non_null(funcs);
	assert_non_null(maps);
	assert_non_null(locs);
	profile__add_type(p, "alloc_objects", "count");
	profile__add_type(p, "alloc_space", "bytes");
	for (i = 0; i < NM; i++) {
		snprintf(name, sizeof(name), "/lib/lib%u.so", i);
		maps[i] = profile__mapping(p, i % 7, 0x1000ULL * i, 0x1000ULL * i + 0x1000, 0, name,
					   NULL);
		assert_int_equal(maps[i], i);
	}
	for (i = 0; i < NF; i++) {
		snprintf(name, sizeof(name), "func_%u", i);
		funcs[i] = profile__function(p, name, name, i % 2 ? "a.c" : NULL);
		assert_int_equal(funcs[i], i);
	}
	for (i = 0; i < NS; i++) {
		struct prof_line line = { funcs[i % NF], i };

		locs[i] = profile__location(p, maps[i % NM], 0x400000ULL + i, i, &line, 1);
		assert_int_equal(locs[i], i);
	}
	for (i = 0; i < NS; i++) {
		uint32_t stack[3] = { locs[i], locs[(i + 1) % NS], locs[(i * 7) % NS] };
		int64_t v[2] = { i, (int64_t)i * 16 };

		assert_non_null(profile__add_sample(p, stack, 3, v, i % 13));
	}
	assert_int_equal(p->nsamples, NS);
	assert_int_equal(p->nlocations, NS);
	assert_int_equal(p->nfunctions, NF);
	assert_int_equal(p->nmappings, NM);

	/* everything still where it was, and still found */
	for (i = 0; i < NS; i += 997) {
		const struct prof_sample *s = &p->samples[i];

		assert_int_equal(s->values[1], (int64_t)i * 16);
		assert_int_equal(s->locs[1], (i + 1) % NS);
		assert_int_equal(s->pid, i % 13);
		assert_int_equal(p->locations[i].lines[0].line, i);
		struct prof_line line = { funcs[i % NF], i };

		assert_int_equal(profile__location(p, maps[i % NM], 0x400000ULL + i, 0, &line, 1),
				 i);
	}
	/* one address, another innermost function (an alias): another location */
	{
		struct prof_line other = { funcs[1], 0 };

		assert_int_equal(profile__location(p, maps[0], 0x400000ULL, 0, &other, 1), NS);
		assert_int_equal(profile__location(p, maps[0], 0x400000ULL, 0, &other, 1), NS);
	}
	for (i = 0; i < NF; i += 101) {
		snprintf(name, sizeof(name), "func_%u", i);
		assert_int_equal(profile__function(p, name, name, i % 2 ? "a.c" : NULL), i);
		assert_string_equal(p->functions[i].name, name);
	}
	for (i = 0; i < NM; i += 13) {
		snprintf(name, sizeof(name), "/lib/lib%u.so", i);
		assert_int_equal(profile__mapping(p, i % 7, 0x1000ULL * i, 0, 0, name, NULL), i);
	}
	assert_int_equal(p->nfunctions, NF);
	free(locs);
	free(maps);
	free(funcs);
	profile__free(p);
}

static void test_processes(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_process *a, *b;
	uint32_t i;

	assert_null(profile__find_process(p, 1));
	a = profile__add_process(p, 100, "demo", "./demo 1");
	assert_non_null(a);
	assert_int_equal(a->pid, 100);
	assert_string_equal(a->comm, "demo");
	assert_string_equal(a->cmdline, "./demo 1");
	assert_null(a->note);

	/* enough processes to move the array and grow the table */
	for (i = 1; i <= 1000; i++)
		assert_non_null(profile__add_process(p, 100 + i, NULL, NULL));
	assert_int_equal(p->nprocesses, 1001);
	for (i = 0; i <= 1000; i++) {
		b = profile__find_process(p, 100 + i);
		assert_non_null(b);
		assert_int_equal(b->pid, 100 + i);
	}
	assert_null(profile__find_process(p, 99));
	assert_null(profile__find_process(p, 1101));

	/* the same pid again: the same process; a new comm (after exec) replaces the old one */
	b = profile__add_process(p, 100, "demo-child", NULL);
	assert_ptr_equal(b, profile__find_process(p, 100));
	assert_string_equal(b->comm, "demo-child");
	assert_string_equal(b->cmdline, "./demo 1");
	assert_int_equal(p->nprocesses, 1001);
	b = profile__find_process(p, 555);
	assert_null(b->comm);
	assert_null(b->cmdline);
	profile__free(p);
}

static void test_stats_and_calls(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_process *proc = profile__add_process(p, 7, "x", NULL);
	uint64_t v = 0;

	assert_int_equal(prof_process__add_call(p, proc, "malloc", 10), 0);
	assert_int_equal(prof_process__add_call(p, proc, "calloc", 0), 0);
	assert_int_equal(prof_process__add_call(p, proc, "free", 4), 0);
	/* adding again accumulates and keeps the insertion order */
	assert_int_equal(prof_process__add_call(p, proc, "malloc", 5), 0);
	assert_int_equal(proc->ncalls, 3);
	assert_string_equal(proc->calls[0].key, "malloc");
	assert_string_equal(proc->calls[1].key, "calloc");
	assert_string_equal(proc->calls[2].key, "free");
	assert_true(prof_process__call(proc, "malloc", &v));
	assert_int_equal(v, 15);
	assert_true(prof_process__call(proc, "calloc", &v));
	assert_int_equal(v, 0);
	assert_false(prof_process__call(proc, "realloc", &v));
	assert_false(prof_process__call(proc, NULL, &v));

	assert_int_equal(prof_process__add_stat(p, proc, "alloc_bytes", 100), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "alloc_bytes", 28), 0);
	assert_int_equal(prof_process__set_stat(p, proc, "peak_live_bytes", 64), 0);
	assert_int_equal(prof_process__set_stat(p, proc, "peak_live_bytes", 32), 0);
	assert_int_equal(prof_process__add_stat(p, proc, NULL, 1), -EINVAL);
	assert_int_equal(proc->nstats, 2);
	assert_true(prof_process__stat(proc, "alloc_bytes", &v));
	assert_int_equal(v, 128);
	assert_true(prof_process__stat(proc, "peak_live_bytes", &v));
	assert_int_equal(v, 32);
	assert_true(prof_process__stat(proc, "alloc_bytes", NULL));
	assert_false(prof_process__stat(proc, "free_bytes", &v));
	/* calls and stats are separate name spaces */
	assert_false(prof_process__stat(proc, "malloc", &v));

	/* many names: the per-process arrays grow too */
	for (v = 0; v < 100; v++) {
		char name[16];

		snprintf(name, sizeof(name), "s%u", (unsigned int)v);
		assert_int_equal(prof_process__add_stat(p, proc, name, v), 0);
	}
	assert_int_equal(proc->nstats, 102);
	assert_true(prof_process__stat(proc, "s99", &v));
	assert_int_equal(v, 99);

	assert_int_equal(prof_process__set_note(p, proc, "traced glibc"), 0);
	assert_string_equal(proc->note, "traced glibc");
	assert_int_equal(prof_process__set_note(p, proc, NULL), 0);
	assert_null(proc->note);
	profile__free(p);
}

static void test_drops_and_notes(void **state)
{
	struct profile *p = profile__new("mem");

	assert_int_equal(profile__add_drop(p, "live_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stack_fail", 3), 0);
	assert_int_equal(profile__add_drop(p, "stack_fail", 2), 0);
	assert_int_equal(p->ndrops, 2);
	assert_string_equal(p->drops[0].key, "live_full");
	assert_int_equal(p->drops[0].value, 0);
	assert_int_equal(p->drops[1].value, 5);
	assert_int_equal(profile__add_drop(p, NULL, 1), -EINVAL);

	assert_int_equal(profile__add_note(p, "pid %d exited: %s", 42, "early"), 0);
	assert_int_equal(profile__add_note(p, "plain"), 0);
	assert_int_equal(p->nnotes, 2);
	assert_string_equal(p->notes[0], "pid 42 exited: early");
	assert_string_equal(p->notes[1], "plain");
	profile__free(p);
}

static void test_frame_name(void **state)
{
	struct profile *p = profile__new("mem");
	struct prof_line lines[2];
	uint32_t m, f0, f1, l1, l2, l3, l4;
	char buf[64], small[6];

	m = profile__mapping(p, 1, 0x7f0000000000, 0x7f0000100000, 0, "/usr/lib/libfoo.so.1",
			     NULL);
	f0 = profile__function(p, "inner", "_Z5innerv", NULL);
	f1 = profile__function(p, "", "outer_sys", NULL);
	lines[0] = (struct prof_line){ f0, 1 };
	lines[1] = (struct prof_line){ f1, 2 };
	l1 = profile__location(p, m, 0x7f0000001000, 0x1000, lines, 2);
	l2 = profile__location(p, m, 0x7f0000002000, 0x2a2b, NULL, 0);
	l3 = profile__location(p, PROF_NONE, 0xdeadbeef, 0, NULL, 0);
	l4 = profile__location(p, profile__mapping(p, 1, 0, 1, 0, "[anon]", NULL), 0x10, 0x10,
			       NULL, 0);

	assert_string_equal(profile__frame_name(p, &p->locations[l1], 0, buf, sizeof(buf)),
			    "inner");
	/* an empty name falls back to the symbol-table name */
	assert_string_equal(profile__frame_name(p, &p->locations[l1], 1, buf, sizeof(buf)),
			    "outer_sys");
	assert_string_equal(profile__frame_name(p, &p->locations[l2], 0, buf, sizeof(buf)),
			    "libfoo.so.1+0x2a2b");
	assert_string_equal(profile__frame_name(p, &p->locations[l3], 0, buf, sizeof(buf)),
			    "0xdeadbeef");
	assert_string_equal(profile__frame_name(p, &p->locations[l4], 0, buf, sizeof(buf)),
			    "[anon]+0x10");
	/* truncated, still terminated */
	assert_string_equal(profile__frame_name(p, &p->locations[l2], 0, small, sizeof(small)),
			    "libfo");
	profile__free(p);
}

static void test_series(void **state)
{
	struct profile *p = profile__new("mem");

	assert_non_null(p);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(profile__add_point(p, 7, "live_bytes", "bytes", i * 10, i), 0);
		if (i % 2 == 0)
			assert_int_equal(profile__add_point(p, 8, "live_bytes", "bytes", i, -i), 0);
	}
	assert_int_equal(profile__add_point(p, 7, "live_count", "count", 5, 1), 0);
	assert_int_equal(profile__add_point(p, 7, NULL, "count", 5, 1), -EINVAL);
	assert_int_equal(p->nseries, 3);
	assert_int_equal(p->series[0].pid, 7);
	assert_int_equal(p->series[0].n, 1000);
	assert_int_equal(p->series[0].t_ns[999], 9990);
	assert_int_equal(p->series[0].v[999], 999);
	assert_string_equal(p->series[0].unit, "bytes");
	assert_int_equal(p->series[1].n, 500);
	assert_int_equal(p->series[1].v[499], -998);
	assert_string_equal(p->series[2].name, "live_count");
	profile__free(p);
}

/* Rates from a running total: the growth over each interval per second, times scale, at the
 * interval's middle; an interval of no time adds nothing. */
static void test_rate_points(void **state)
{
	struct profile *p = profile__new("cpu");
	struct prof_rate r = { 0 };
	const struct prof_series *s;

	assert_non_null(p);
	/* 99 samples of 10101010 ns in the first second: 99.99..% of one CPU */
	assert_int_equal(profile__add_rate_point(p, &r, 0, "cpu_percent", "percent", 1000000000,
						 99, 10101010 * 100 / 1e9), 0);
	/* 50 more in the next half second: 50 samples / 0.5 s = 100/s = 101% */
	assert_int_equal(profile__add_rate_point(p, &r, 0, "cpu_percent", "percent", 1500000000,
						 149, 10101010 * 100 / 1e9), 0);
	/* no time passed: no point */
	assert_int_equal(profile__add_rate_point(p, &r, 0, "cpu_percent", "percent", 1500000000,
						 149, 1), 0);
	assert_int_equal(p->nseries, 1);
	s = &p->series[0];
	assert_int_equal(s->n, 2);
	assert_int_equal(s->t_ns[0], 500000000);
	assert_int_equal(s->v[0], 100);
	assert_int_equal(s->t_ns[1], 1250000000);
	assert_int_equal(s->v[1], 101);
	assert_int_equal(r.last, 149);
	profile__free(p);
}

/* profile__memo_get/put: one owner's answers at a time, kept across the memo's growth */
static void test_memo(void **state)
{
	struct profile *p = profile__new("mem");

	(void)state;
	assert_non_null(p);
	assert_int_equal(profile__memo_get(p, 7, 0x1000), PROF_NONE);
	profile__memo_put(p, 7, 0x1000, 3);
	profile__memo_put(p, 7, 0x2000, 4);
	profile__memo_put(p, 7, 0x1000, 5);	/* put again: the last value */
	assert_int_equal(profile__memo_get(p, 7, 0x1000), 5);
	assert_int_equal(profile__memo_get(p, 7, 0x2000), 4);
	assert_int_equal(profile__memo_get(p, 7, 0x3000), PROF_NONE);
	/* another owner: nothing of the last one's */
	assert_int_equal(profile__memo_get(p, 8, 0x1000), PROF_NONE);
	profile__memo_put(p, 8, 0x2000, 9);
	assert_int_equal(profile__memo_get(p, 8, 0x2000), 9);
	/* and back: the first owner's answers are gone too (a scope at a time) */
	assert_int_equal(profile__memo_get(p, 7, 0x1000), PROF_NONE);
	assert_int_equal(profile__memo_get(p, 7, 0x2000), PROF_NONE);
	/* many entries (the memo grows several times): every one kept, addresses alike in their
	 * low bits included */
	for (uint32_t i = 0; i < 20000; i++)
		profile__memo_put(p, 7, 0x7f0000000000ull + ((uint64_t)i << 12), i);
	for (uint32_t i = 0; i < 20000; i++)
		assert_int_equal(profile__memo_get(p, 7, 0x7f0000000000ull + ((uint64_t)i << 12)), i);
	assert_int_equal(profile__memo_get(p, 7, 0x1000), PROF_NONE);
	/* a new owner after growth: empty, and filled again */
	assert_int_equal(profile__memo_get(p, 9, 0x7f0000000000ull), PROF_NONE);
	profile__memo_put(p, 9, 0x7f0000000000ull, 1);
	assert_int_equal(profile__memo_get(p, 9, 0x7f0000000000ull), 1);
	assert_int_equal(profile__memo_get(p, 9, 0x7f0000001000ull), PROF_NONE);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_new_free),
		cmocka_unit_test(test_meta_and_types),
		cmocka_unit_test(test_function_interning),
		cmocka_unit_test(test_mapping_and_location_interning),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_same_sample),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_stats_and_calls),
		cmocka_unit_test(test_drops_and_notes),
		cmocka_unit_test(test_frame_name),
		cmocka_unit_test(test_rate_points),
		cmocka_unit_test(test_memo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
