/* A hand-built CPU profile as `ebprof cpu` makes it, for the renderer tests of every format
 * (test_cpu_outputs.c): samples/count and cpu/nanoseconds (the default) at 99 Hz, the run's
 * facts, two processes; user frames with inline frames, kernel frames of the core kernel and of
 * a module, an unsymbolized kernel frame, a frame outside any mapping, a recursive stack and a
 * stack lost to a full table. Include after cmocka.h and profile_builder.h. */
#ifndef EBPROF_TEST_CPU_FIXTURE_H
#define EBPROF_TEST_CPU_FIXTURE_H

#include "profile/profile.h"

#define CPU_PERIOD_NS 10101010	/* 1e9 / 99 */

static __attribute__((unused)) struct prof_sample *cpu_sample(struct profile *p,
							      const uint32_t *locs, uint32_t n,
							      int64_t samples, uint32_t pid)
{
	int64_t v[2] = { samples, samples * CPU_PERIOD_NS };
	struct prof_sample *s = profile__add_sample(p, locs, n, v, pid);

	assert_non_null(s);
	return s;
}

static __attribute__((unused)) struct profile *cpu_fixture(void)
{
	struct profile *p = profile__new("cpu");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_demo, m_libc100, m_worker, m_libc200, m_kernel, m_nft;
	uint32_t f_compute, f_spin, f_main, f_read_cfg, f_start, f_read, f_fib, f_wmain, f_send;
	uint32_t f_copy, f_vfs_read, f_ksys_read, f_entry, f_nft, f_hook, f_ip_output, f_sendto;
	uint32_t l_spin, l_main_spin, l_start100, l_read, l_main_read, l_copy, l_vfs_read;
	uint32_t l_ksys_read, l_entry, l_fib_leaf, l_fib_rec, l_wmain, l_send, l_nft, l_hook;
	uint32_t l_ip_output, l_sendto, l_kunknown, l_noaddr;
	struct prof_process *proc;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./demo --spin", "6.1.0-18-amd64",
					   "ebprof cpu -o out.txt -- ./demo --spin",
					   1700000000123456789LL, 3000000000LL), 0);
	assert_int_equal(profile__add_type(p, "samples", "count"), 0);
	assert_int_equal(profile__add_type(p, "cpu", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "cpu"), 0);
	assert_int_equal(profile__set_period(p, "cpu", "nanoseconds", CPU_PERIOD_NS), 0);
	assert_int_equal(profile__add_info(p, "rate", "%d Hz", 99), 0);
	assert_int_equal(profile__add_info(p, "cpus", "%d", 4), 0);
	assert_int_equal(profile__add_info(p, "samples", "%d", 212), 0);
	assert_int_equal(profile__add_info(p, "samples_lost", "%d", 3), 0);

	m_demo = profile__mapping(p, 100, 0x555555554000, 0x555555559000, 0, "/usr/bin/demo",
				  "4f1c2d3e5a6b7c8d9e0f11223344556677889900");
	m_libc100 = profile__mapping(p, 100, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_worker = profile__mapping(p, 200, 0x560000000000, 0x560000002000, 0, "/usr/bin/worker",
				    NULL);
	m_libc200 = profile__mapping(p, 200, 0x7f1000028000, 0x7f10001bd000, 0x28000, libc,
				     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_kernel = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82200000, 0,
				    "[kernel.kallsyms]", NULL);
	m_nft = profile__mapping(p, 0, 0xffffffffc0a00000, 0xffffffffc0a40000, 0, "[nf_tables]",
				 NULL);

	f_compute = fn(p, "compute", "compute", "demo.c");
	f_spin = fn(p, "spin", "spin", "demo.c");
	f_main = fn(p, "main", "main", "demo.c");
	f_read_cfg = fn(p, "read_config", "read_config", "demo.c");
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_read = fn(p, "read", "__libc_read", NULL);
	f_fib = fn(p, "fib", "fib", "worker.c");
	f_wmain = fn(p, "main", "main", "worker.c");
	f_send = fn(p, "send", "__libc_send", NULL);
	f_copy = fn(p, "copy_user_enhanced_fast_string", "copy_user_enhanced_fast_string", NULL);
	f_vfs_read = fn(p, "vfs_read", "vfs_read", NULL);
	f_ksys_read = fn(p, "ksys_read", "ksys_read", NULL);
	f_entry = fn(p, "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_after_hwframe", NULL);
	f_nft = fn(p, "nft_do_chain", "nft_do_chain", NULL);
	f_hook = fn(p, "nf_hook_slow", "nf_hook_slow", NULL);
	f_ip_output = fn(p, "ip_output", "ip_output", NULL);
	f_sendto = fn(p, "__sys_sendto", "__sys_sendto", NULL);

	/* compute inlined into spin: one location, two lines (innermost first) */
	l_spin = LOC(p, m_demo, 0x555555555180, 0x1180, { f_compute, 8 }, { f_spin, 14 });
	l_main_spin = LOC(p, m_demo, 0x555555555420, 0x1420, { f_main, 60 });
	l_start100 = LOC(p, m_libc100, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_read = LOC(p, m_libc100, 0x7f0000114a1d, 0x114a1d, { f_read, 0 });
	l_main_read = LOC(p, m_demo, 0x555555555400, 0x1400, { f_read_cfg, 35 }, { f_main, 50 });
	l_copy = LOC(p, m_kernel, 0xffffffff81a3c2b7, 0xa3c2b7, { f_copy, 0 });
	l_vfs_read = LOC(p, m_kernel, 0xffffffff8131c6e5, 0x31c6e5, { f_vfs_read, 0 });
	l_ksys_read = LOC(p, m_kernel, 0xffffffff8131d0b3, 0x31d0b3, { f_ksys_read, 0 });
	l_entry = LOC(p, m_kernel, 0xffffffff81c00087, 0xc00087, { f_entry, 0 });
	l_fib_leaf = LOC(p, m_worker, 0x560000001150, 0x1150, { f_fib, 3 });
	l_fib_rec = LOC(p, m_worker, 0x560000001172, 0x1172, { f_fib, 5 });
	l_wmain = LOC(p, m_worker, 0x560000001200, 0x1200, { f_wmain, 20 });
	l_send = LOC(p, m_libc200, 0x7f100012f0b2, 0x12f0b2, { f_send, 0 });
	l_nft = LOC(p, m_nft, 0xffffffffc0a0b3c4, 0xb3c4, { f_nft, 0 });
	l_hook = LOC(p, m_kernel, 0xffffffff81b2a1f3, 0xb2a1f3, { f_hook, 0 });
	l_ip_output = LOC(p, m_kernel, 0xffffffff81b9e0a6, 0xb9e0a6, { f_ip_output, 0 });
	l_sendto = LOC(p, m_kernel, 0xffffffff81a9d6c1, 0xa9d6c1, { f_sendto, 0 });
	l_kunknown = loc(p, m_kernel, 0xffffffff82100010, 0x1100010, NULL, 0);
	l_noaddr = loc(p, PROF_NONE, 0x7ffe12345678, 0, NULL, 0);

	/* pid 100: on the CPU in spin (compute inlined), and in the kernel copying a read */
	cpu_sample(p, STACK(l_spin, l_main_spin, l_start100), 120, 100);
	cpu_sample(p, STACK(l_copy, l_vfs_read, l_ksys_read, l_entry, l_read, l_main_read,
			    l_start100), 30, 100);
	/* pid 200: recursion (fib counted once per stack in its total), a module's frame under
	 * the send path, an unsymbolized kernel frame above a frame in no mapping, a lost stack */
	cpu_sample(p, STACK(l_fib_leaf, l_fib_rec, l_fib_rec, l_wmain), 50, 200);
	cpu_sample(p, STACK(l_nft, l_hook, l_ip_output, l_sendto, l_entry, l_send, l_wmain), 10,
		   200);
	cpu_sample(p, STACK(l_kunknown, l_noaddr), 1, 200);
	cpu_sample(p, NULL, 0, 1, 200);

	proc = profile__add_process(p, 100, "demo", "./demo --spin");
	assert_non_null(proc);
	proc = profile__add_process(p, 200, "worker", "./worker");
	assert_non_null(proc);
	assert_int_equal(profile__add_drop(p, "stacks_full", 1), 0);
	assert_int_equal(profile__add_drop(p, "lost", 3), 0);
	assert_int_equal(profile__add_note(p, "pid %d exited during the run", 200), 0);
	return p;
}

#endif
