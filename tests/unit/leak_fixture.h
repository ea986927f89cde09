/* The fixed profile of a run that scanned for leaks (`ebprof mem --leaks`), shared by the
 * renderer tests of the leak sections (test_leak_output.c: text, JSON, CSV, pprof;
 * test_html.c: the HTML report's Leaks section). Include after cmocka.h, golden.h and
 * profile_builder.h.
 *
 * Every class at some site, a site with two classes, a zero-byte lost block, a site with no
 * leak at all, heuristics in both processes, one process scanned at its exit and one while it
 * ran (with a thread whose registers could not be read), and one site suppressed through a real
 * suppressions file by its module. The processes' scans add up to their sites.
 *
 *   pid 100 demo, scanned at exit:
 *     0  malloc <- lose_list <- main             definite 2/200, indirect 3/300
 *     1  malloc <- parse_line <- read_config/main possible 2/256, reachable 8/1024
 *     2  operator new <- push_back/parse_line    nothing outstanding
 *     3  calloc <- zero_len <- main              definite 1/0
 *   pid 200 worker, scanned while running:
 *     4  malloc <- libfoo.so+0x1a2b <- handle_request <- main   definite 4/4096, suppressed
 *     5  calloc <- handle_request <- main        possible 1/100, reachable 3/192
 *     6  [no stack]                              nothing outstanding
 */
#ifndef EBPROF_TEST_LEAK_FIXTURE_H
#define EBPROF_TEST_LEAK_FIXTURE_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "profile/profile.h"

/* value indices: mem_types, then leak_types */
enum {
	LV_AO, LV_AS, LV_IO, LV_IS, LV_DO, LV_DS, LV_IDO, LV_IDS, LV_PO, LV_PS, LV_RO, LV_RS, LV_N,
};

static __attribute__((unused)) struct profile *leak_fixture(void)
{
	struct profile *p = profile__new("mem");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc100, m_cxx, m_worker, m_libc200, m_foo;
	uint32_t f_malloc, f_calloc, f_new, f_push, f_parse, f_read, f_main, f_start, f_wmain;
	uint32_t f_handle, f_list, f_zero;
	uint32_t l_malloc100, l_calloc100, l_new, l_push_parse, l_parse, l_read_main, l_main100;
	uint32_t l_start, l_list, l_list_main, l_zero, l_zero_main;
	uint32_t l_malloc200, l_calloc200, l_foo, l_handle, l_wmain;
	struct prof_suppressions *sp;
	struct prof_process *proc;
	struct prof_sample *s;
	char *supp, why[256];

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --leak", "6.1.0-18-amd64",
					   "ebprof mem --leaks --suppressions known.supp -- ./demo "
					   "--leak", 1700000000123456789LL, 2500000000LL), 0);
	mem_types(p);
	leak_types(p);
	assert_int_equal(p->ntypes, LV_N);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  "4f1c2d3e5a6b7c8d9e0f11223344556677889900");
	m_libc100 = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc, NULL);
	m_cxx = profile__mapping(p, 100, 0x7f0000400000, 0x7f0000500000, 0,
				 "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", NULL);
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_libc200 = profile__mapping(p, 200, 0x7f1000028000, 0x7f10001bd000, 0x28000, libc, NULL);
	m_foo = profile__mapping(p, 200, 0x7f2000000000, 0x7f2000010000, 0,
				 "/opt/foo/lib/libfoo.so", NULL);

	f_malloc = fn(p, "malloc", "malloc", NULL);
	f_calloc = fn(p, "calloc", "calloc", NULL);
	f_new = fn(p, "operator new(unsigned long)", "_Znwm", NULL);
	f_push = fn(p, "std::vector<int, std::allocator<int> >::push_back(int const&)",
		    "_ZNSt6vectorIiSaIiEE9push_backERKi", "/usr/include/c++/12/bits/stl_vector.h");
	f_parse = fn(p, "parse_line", NULL, "demo.c");
	f_read = fn(p, "read_config", "read_config", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_list = fn(p, "lose_list", "lose_list", "leak.c");
	f_zero = fn(p, "zero_len", "zero_len", "leak.c");
	f_wmain = fn(p, "main", "main", "worker.c");
	f_handle = fn(p, "handle_request", "handle_request", "worker.c");

	l_malloc100 = LOC(p, m_libc100, 0x7f00000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc100 = LOC(p, m_libc100, 0x7f00000a5678, 0xa5678, { f_calloc, 0 });
	l_new = LOC(p, m_cxx, 0x7f00004ab000, 0xab000, { f_new, 0 });
	l_push_parse = LOC(p, m_demo, 0x555555555300, 0x1300, { f_push, 1287 }, { f_parse, 22 });
	l_parse = LOC(p, m_demo, 0x555555555250, 0x1250, { f_parse, 21 });
	l_read_main = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read, 35 }, { f_main, 50 });
	l_main100 = LOC(p, m_demo, 0x555555555410, 0x1410, { f_main, 52 });
	l_start = LOC(p, m_libc100, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_list = LOC(p, m_demo, 0x555555555500, 0x1500, { f_list, 30 });
	l_list_main = LOC(p, m_demo, 0x555555555420, 0x1420, { f_main, 54 });
	l_zero = LOC(p, m_demo, 0x555555555600, 0x1600, { f_zero, 44 });
	l_zero_main = LOC(p, m_demo, 0x555555555430, 0x1430, { f_main, 55 });
	l_malloc200 = LOC(p, m_libc200, 0x7f10000a1234, 0xa1234, { f_malloc, 0 });
	l_calloc200 = LOC(p, m_libc200, 0x7f10000a5678, 0xa5678, { f_calloc, 0 });
	l_foo = loc(p, m_foo, 0x7f2000001a2b, 0x1a2b, NULL, 0);
	l_handle = LOC(p, m_worker, 0x560000001180, 0x1180, { f_handle, 77 });
	l_wmain = LOC(p, m_worker, 0x560000001100, 0x1100, { f_wmain, 10 });

	/* 0: a list whose head was lost: the head and a node definitely, the rest indirectly */
	s = sample_v(p, STACK(l_malloc100, l_list, l_list_main, l_start),
		     (int64_t[LV_N]){ [LV_AO] = 10, [LV_AS] = 1000, [LV_IO] = 5, [LV_IS] = 500,
				      [LV_DO] = 2, [LV_DS] = 200, [LV_IDO] = 3, [LV_IDS] = 300 },
		     100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [7] = 10 }, 48), 0);
	s->out = (struct prof_outstanding){ 5, 500, 1000000, 2000000000, 5001000000ULL };

	/* 1: still referenced, two of them only from inside */
	s = sample_v(p, STACK(l_malloc100, l_parse, l_read_main, l_start),
		     (int64_t[LV_N]){ [LV_AO] = 1200, [LV_AS] = 153600, [LV_IO] = 10,
				      [LV_IS] = 1280, [LV_PO] = 2, [LV_PS] = 256, [LV_RO] = 8,
				      [LV_RS] = 1024 }, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [8] = 1200 }, 48), 0);
	s->out = (struct prof_outstanding){ 10, 1280, 150000000, 2100000000, 12000000000ULL };

	/* 2: all freed */
	s = sample_v(p, STACK(l_new, l_push_parse, l_main100, l_start),
		     (int64_t[LV_N]){ [LV_AO] = 50, [LV_AS] = 3276800 }, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [17] = 50 }, 48), 0);
	s->temporary = 40;

	/* 3: a lost block of size 0 still counts as a block */
	s = sample_v(p, STACK(l_calloc100, l_zero, l_zero_main, l_start),
		     (int64_t[LV_N]){ [LV_AO] = 1, [LV_AS] = 0, [LV_IO] = 1, [LV_IS] = 0,
				      [LV_DO] = 1, [LV_DS] = 0 }, 100);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [0] = 1 }, 48), 0);
	s->out = (struct prof_outstanding){ 1, 0, 2300000000ULL, 2300000000ULL, 2300000000ULL };

	/* 4: lost inside a library without symbols, suppressed below */
	s = sample_v(p, STACK(l_malloc200, l_foo, l_handle, l_wmain),
		     (int64_t[LV_N]){ [LV_AO] = 4, [LV_AS] = 4096, [LV_IO] = 4, [LV_IS] = 4096,
				      [LV_DO] = 4, [LV_DS] = 4096 }, 200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [11] = 4 }, 48), 0);
	s->out = (struct prof_outstanding){ 4, 4096, 1000000, 2400000000ULL, 4000000000ULL };

	/* 5: one block only pointed into, three kept through heuristics or plain pointers */
	s = sample_v(p, STACK(l_calloc200, l_handle, l_wmain),
		     (int64_t[LV_N]){ [LV_AO] = 4, [LV_AS] = 292, [LV_IO] = 4, [LV_IS] = 292,
				      [LV_PO] = 1, [LV_PS] = 100, [LV_RO] = 3, [LV_RS] = 192 },
		     200);
	assert_int_equal(prof_sample__set_hist(p, s, (uint64_t[48]){ [6] = 3, [7] = 1 }, 48), 0);
	s->out = (struct prof_outstanding){ 4, 292, 500000000, 500000000, 2000000000 };

	/* 6: the stack table was full */
	sample_v(p, NULL, 0, (int64_t[LV_N]){ [LV_AO] = 4, [LV_AS] = 4096 }, 200);

	proc = process(p, 100, "demo", "./demo --leak",
		       (uint64_t[]){ 1251, 10, 0, 0, 1245, 0, 0, 0, 0, 0 },
		       (uint64_t[]){ 1261, 3431400, 1245, 3429620, 16, 1780, 3277556, 65536,
				     0 });
	proc->scan = (struct prof_scan){
		.done = true, .at_exit = true, .t_ns = 2400000000, .stopped_ns = 3500000,
		.scanned_bytes = 1234567, .unreadable_bytes = 0, .read_calls = 31, .threads = 2,
		.count = { 3, 3, 2, 8 }, .bytes = { 200, 300, 256, 1024 },
		.heur_count = { [2] = 1 }, .heur_bytes = { [2] = 64 },
	};
	proc = process(p, 200, "worker", "./worker --serve",
		       (uint64_t[]){ 8, 4, 0, 0, 0, 0, 0, 0, 0, 0 },
		       (uint64_t[]){ 12, 8484, 0, 0, 8, 4388, 8484, 4096, 0 });
	proc->scan = (struct prof_scan){
		.done = true, .at_exit = false, .t_ns = 2450000000, .stopped_ns = 12000000,
		.scanned_bytes = 8400000, .unreadable_bytes = 4096, .read_calls = 120, .threads = 3,
		.threads_unknown = 1, .count = { 4, 0, 1, 3 }, .bytes = { 4096, 0, 100, 192 },
		.heur_count = { [1] = 2, [3] = 1 }, .heur_bytes = { [1] = 64, [3] = 40 },
	};

	/* through the suppressions file the CLI reads: the library's leaks are known */
	supp = scratch("leak-fixture.supp");
	write_file(supp, "# known\nleak:^libfoo.so$\n", 25);
	sp = prof_suppressions__load(supp, why, sizeof(why));
	if (!sp)
		fail_msg("%s", why);
	assert_int_equal(profile__suppress(p, sp), 1);
	prof_suppressions__free(sp);
	unlink(supp);
	free(supp);

	assert_int_equal(profile__add_drop(p, "live_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stacks_full", 4), 0);
	assert_int_equal(profile__add_note(p, "leaks at sites matching known.supp are counted as "
					   "suppressed"), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 0, 0), 0);
	assert_int_equal(profile__add_point(p, 100, "live_bytes", "bytes", 100000000, 1780), 0);
	return p;
}

#endif
