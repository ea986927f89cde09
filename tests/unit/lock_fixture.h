/* A hand-built lock contention profile as `ebprof lock` makes it, for the renderer tests of
 * every format (test_lock_outputs.c): contentions/count and delay/nanoseconds (the default),
 * timeouts/count and timeout_delay/nanoseconds; a server process whose worker threads wait on a
 * pthread mutex, a global named by its data symbol (a futex_wait under __lll_lock_wait, through
 * the contending function) and on
 * their process's mmap_lock (munmap), a kernel spinlock named by its data symbol
 * (tasklist_lock) in a fork, and a condition variable in the heap that nobody signals (its
 * timed waits all timed out: timeouts, no contention); each stack under a
 * leaf frame naming the lock and its kind; one group per lock with its numbers and log2 wait
 * histogram; the run's facts, drops and notes. Include after cmocka.h and profile_builder.h. */
#ifndef EBPROF_TEST_LOCK_FIXTURE_H
#define EBPROF_TEST_LOCK_FIXTURE_H

#include "profile/profile.h"

#define LKF_SLOTS 48	/* abi/lock.h's LOCK_HIST_SLOTS: slot 0 is 0 ns, slot b [2^(b-1), 2^b) */

static __attribute__((unused)) void lock_sample(struct profile *p, const uint32_t *locs,
						uint32_t n, int64_t count, int64_t delay,
						int64_t timeouts, int64_t timeout_ns,
						uint32_t pid)
{
	int64_t v[4] = { count, delay, timeouts, timeout_ns };

	assert_non_null(profile__add_sample(p, locs, n, v, pid));
}

/* One lock: waits of delay[i] ns, count[i] each; nowait futex calls that did not wait;
 * `timeouts` futex waits that timed out, of timeout_ns in all. */
static __attribute__((unused)) void lock_group(struct profile *p, const char *lock,
					       const char *cls, const char *proc,
					       const char *addr, const uint64_t *delay, const uint64_t *count,
					       uint32_t n, uint64_t nowait, uint64_t timeouts,
					       uint64_t timeout_ns)
{
	uint64_t h[LKF_SLOTS] = { 0 }, waits = 0, sum = 0, max = 0;
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	for (uint32_t i = 0; i < n; i++) {
		h[1 + 63 - __builtin_clzll(delay[i])] += count[i];
		waits += count[i];
		sum += delay[i] * count[i];
		max = delay[i] > max ? delay[i] : max;
	}
	assert_int_equal(prof_group__add_label(p, g, "lock", lock), 0);
	assert_int_equal(prof_group__add_label(p, g, "class", cls), 0);
	assert_int_equal(prof_group__add_label(p, g, "process", proc), 0);
	assert_int_equal(prof_group__add_label(p, g, "address", addr), 0);
	assert_int_equal(prof_group__add_stat(p, g, "contentions", "CONTENTIONS", "count", waits),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_ns", "TOTAL", "nanoseconds", sum), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_avg_ns", "MEAN", "nanoseconds",
					      waits ? sum / waits : 0), 0);
	assert_int_equal(prof_group__add_stat(p, g, "delay_max_ns", "MAX", "nanoseconds", max), 0);
	assert_int_equal(prof_group__add_stat(p, g, "nowait", "NO WAIT", "count", nowait), 0);
	assert_int_equal(prof_group__add_stat(p, g, "timeouts", "TIMEOUTS", "count", timeouts), 0);
	assert_int_equal(prof_group__add_stat(p, g, "timeout_delay_ns", "TIMEOUT WAIT",
					      "nanoseconds", timeout_ns), 0);
	assert_int_equal(prof_group__add_hist(p, g, "wait", "nanoseconds", 1, h, LKF_SLOTS), 0);
}

static __attribute__((unused)) struct profile *lock_fixture(void)
{
	struct profile *p = profile__new("lock");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_srv, m_libc, m_kernel, f_leaf_mu, f_leaf_mmap, f_leaf_task, f_leaf_cond;
	uint32_t f_timedwait, f_housekeep, l_cond, l_timedwait, l_housekeep;
	uint32_t f_start_thread, f_worker, f_handle, f_lll, f_futex_wait, f_munmap, f_fork;
	uint32_t f_slow_w, f_down_w, f_vm_munmap, f_sys_munmap, f_entry, f_do_syscall;
	uint32_t f_spin_slow, f_raw_lock, f_copy_process, f_sys_clone;
	uint32_t l_mu, l_mmap, l_task, l_start_thread, l_worker, l_handle, l_lll, l_munmap;
	uint32_t l_fork, l_slow_w, l_down_w, l_vm_munmap, l_sys_munmap, l_do_syscall, l_entry;
	uint32_t l_spin_slow, l_raw_lock, l_copy_process, l_sys_clone;
	struct prof_process *proc;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./server --threads 4", "6.18.0",
					   "ebprof lock -o out.txt -- ./server --threads 4",
					   1700000000123456789LL, 3000000000LL), 0);
	assert_int_equal(profile__add_type(p, "contentions", "count"), 0);
	assert_int_equal(profile__add_type(p, "delay", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "timeouts", "count"), 0);
	assert_int_equal(profile__add_type(p, "timeout_delay", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "delay"), 0);
	assert_int_equal(profile__add_info(p, "locks", "%d", 4), 0);
	assert_int_equal(profile__add_info(p, "kernel_contentions", "%d", 1210), 0);
	assert_int_equal(profile__add_info(p, "futex_waits", "%d", 900), 0);
	assert_int_equal(profile__add_info(p, "futex_nowait", "%d", 4000), 0);
	assert_int_equal(profile__add_info(p, "futex_timeouts", "%d", 25), 0);

	m_srv = profile__mapping(p, 400, 0x555555554000, 0x555555559000, 0, "/usr/bin/server",
				 NULL);
	m_libc = profile__mapping(p, 400, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_kernel = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82200000, 0,
				    "[kernel.kallsyms]", NULL);

	/* the leaves, as the collector names them (synthetic frames, no mapping) */
	f_leaf_mu = fn(p, "request_lock in server (futex_wait)",
		       "request_lock in server (futex_wait)", NULL);
	f_leaf_mmap = fn(p, "mmap_lock of 400 (rwsem:W)", "mmap_lock of 400 (rwsem:W)", NULL);
	f_leaf_task = fn(p, "tasklist_lock (rwlock:W)", "tasklist_lock (rwlock:W)", NULL);
	f_leaf_cond = fn(p, "futex 0x55555555a2c4 in [heap] (futex_wait_bitset)",
			 "futex 0x55555555a2c4 in [heap] (futex_wait_bitset)", NULL);
	f_timedwait = fn(p, "pthread_cond_timedwait", "pthread_cond_timedwait", NULL);
	f_housekeep = fn(p, "housekeeping", "housekeeping", "server.c");
	f_start_thread = fn(p, "start_thread", "start_thread", NULL);
	f_worker = fn(p, "worker", "worker", "server.c");
	f_handle = fn(p, "handle_request", "handle_request", "server.c");
	f_lll = fn(p, "__lll_lock_wait", "__lll_lock_wait", NULL);
	f_futex_wait = fn(p, "futex_wait", "futex_wait", NULL);
	f_munmap = fn(p, "__munmap", "__munmap", NULL);
	f_fork = fn(p, "_Fork", "_Fork", NULL);
	f_slow_w = fn(p, "rwsem_down_write_slowpath", "rwsem_down_write_slowpath", NULL);
	f_down_w = fn(p, "down_write_killable", "down_write_killable", NULL);
	f_vm_munmap = fn(p, "__vm_munmap", "__vm_munmap", NULL);
	f_sys_munmap = fn(p, "__x64_sys_munmap", "__x64_sys_munmap", NULL);
	f_do_syscall = fn(p, "do_syscall_64", "do_syscall_64", NULL);
	f_entry = fn(p, "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_after_hwframe", NULL);
	f_spin_slow = fn(p, "queued_write_lock_slowpath", "queued_write_lock_slowpath", NULL);
	f_raw_lock = fn(p, "_raw_write_lock_irq", "_raw_write_lock_irq", NULL);
	f_copy_process = fn(p, "copy_process", "copy_process", NULL);
	f_sys_clone = fn(p, "__x64_sys_clone", "__x64_sys_clone", NULL);

	l_mu = loc(p, PROF_NONE, 0, 0, LINES({ f_leaf_mu, 0 }), 1);
	l_mmap = loc(p, PROF_NONE, 0, 0, LINES({ f_leaf_mmap, 0 }), 1);
	l_task = loc(p, PROF_NONE, 0, 0, LINES({ f_leaf_task, 0 }), 1);
	l_cond = loc(p, PROF_NONE, 0, 0, LINES({ f_leaf_cond, 0 }), 1);
	l_timedwait = LOC(p, m_libc, 0x7f0000097e3a, 0x97e3a, { f_timedwait, 0 });
	l_housekeep = LOC(p, m_srv, 0x555555555500, 0x1500, { f_housekeep, 60 });
	l_start_thread = LOC(p, m_libc, 0x7f00000a1b43, 0xa1b43, { f_start_thread, 0 });
	l_worker = LOC(p, m_srv, 0x555555555420, 0x1420, { f_worker, 40 });
	l_handle = LOC(p, m_srv, 0x555555555300, 0x1300, { f_handle, 25 });
	l_lll = LOC(p, m_libc, 0x7f000009812a, 0x9812a, { f_futex_wait, 146 }, { f_lll, 49 });
	l_munmap = LOC(p, m_libc, 0x7f0000126b7b, 0x126b7b, { f_munmap, 0 });
	l_fork = LOC(p, m_libc, 0x7f00000ea1f0, 0xea1f0, { f_fork, 0 });
	l_slow_w = LOC(p, m_kernel, 0xffffffff81b7e2b4, 0xb7e2b4, { f_slow_w, 0 });
	l_down_w = LOC(p, m_kernel, 0xffffffff81b7e6a9, 0xb7e6a9, { f_down_w, 0 });
	l_vm_munmap = LOC(p, m_kernel, 0xffffffff812f11d2, 0x2f11d2, { f_vm_munmap, 0 });
	l_sys_munmap = LOC(p, m_kernel, 0xffffffff812f1260, 0x2f1260, { f_sys_munmap, 0 });
	l_do_syscall = LOC(p, m_kernel, 0xffffffff81b6a0c8, 0xb6a0c8, { f_do_syscall, 0 });
	l_entry = LOC(p, m_kernel, 0xffffffff81c00087, 0xc00087, { f_entry, 0 });
	l_spin_slow = LOC(p, m_kernel, 0xffffffff8113a2f1, 0x13a2f1, { f_spin_slow, 0 });
	l_raw_lock = LOC(p, m_kernel, 0xffffffff81b7f0d4, 0xb7f0d4, { f_raw_lock, 0 });
	l_copy_process = LOC(p, m_kernel, 0xffffffff81093ac2, 0x93ac2, { f_copy_process, 0 });
	l_sys_clone = LOC(p, m_kernel, 0xffffffff81094f7e, 0x94f7e, { f_sys_clone, 0 });

	/* pid 400: its threads' futex waits for the request mutex, munmap's mmap_lock waits, and
	 * a fork waiting for tasklist_lock */
	lock_sample(p, STACK(l_mu, l_lll, l_handle, l_worker, l_start_thread), 900, 180000000, 0, 0,
		    400);
	lock_sample(p, STACK(l_mmap, l_slow_w, l_down_w, l_vm_munmap, l_sys_munmap, l_do_syscall,
			     l_entry, l_munmap, l_worker, l_start_thread),
		    1200, 80000000, 0, 0, 400);
	lock_sample(p, STACK(l_task, l_spin_slow, l_raw_lock, l_copy_process, l_sys_clone,
			     l_do_syscall, l_entry, l_fork, l_worker, l_start_thread),
		    10, 52000, 0, 0, 400);
	/* a housekeeping thread's timed waits on a condition variable nobody signals */
	lock_sample(p, STACK(l_cond, l_timedwait, l_housekeep, l_start_thread), 0, 0, 25,
		    2500000000, 400);

	proc = profile__add_process(p, 400, "server", "./server --threads 4");
	assert_non_null(proc);
	assert_int_equal(prof_process__add_stat(p, proc, "contentions", 2110), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "delay_ns", 260052000), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "timeouts", 25), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "timeout_delay_ns", 2500000000), 0);

	lock_group(p, "request_lock in server", "futex_wait", "server[400]", "0x555555558040",
		   (const uint64_t[]){ 50000, 300000, 2000000 }, (const uint64_t[]){ 700, 150, 50 },
		   3, 4000, 0, 0);
	lock_group(p, "mmap_lock of 400", "rwsem:W", "server[400]", "0xffff888103c5e0a0",
		   (const uint64_t[]){ 40000, 200000 }, (const uint64_t[]){ 1000, 200 }, 2, 0, 0,
		   0);
	lock_group(p, "tasklist_lock", "rwlock:W", "-", "0xffffffff83008040",
		   (const uint64_t[]){ 5200 }, (const uint64_t[]){ 10 }, 1, 0, 0, 0);
	lock_group(p, "futex 0x55555555a2c4 in [heap]", "futex_wait_bitset", "server[400]",
		   "0x55555555a2c4", NULL, NULL, 0, 0, 25, 2500000000);

	assert_int_equal(profile__add_drop(p, "nested_contention", 0), 0);
	assert_int_equal(profile__add_drop(p, "stack_table_full", 1), 0);
	assert_int_equal(profile__add_note(p, "futex waits: 4000 calls returned EAGAIN at once"),
			 0);
	assert_int_equal(profile__add_note(p, "25 futex waits ended by their timeout"), 0);
	return p;
}

#endif
