/* A hand-built off-CPU profile as `ebprof offcpu --wakers` makes it, for the renderer tests of
 * every format (test_offcpu_outputs.c): offcpu/nanoseconds (the default) and switches/count; a
 * server whose worker thread sleeps in nanosleep (woken by a timer interrupt) and blocks in a
 * pipe read (woken by another thread's write, whose frames are drawn upside down above a "--"
 * frame, the waker's name on top), and a preemption with no waker; one group per process with
 * its run-queue latency (count, average, p50, p99, max, total, a log2 histogram); the run's
 * facts, drops and notes. Include after cmocka.h and profile_builder.h. */
#ifndef EBPROF_TEST_OFFCPU_FIXTURE_H
#define EBPROF_TEST_OFFCPU_FIXTURE_H

#include "profile/profile.h"

#define OFF_RQ_SLOTS 48

static __attribute__((unused)) void off_sample(struct profile *p, const uint32_t *locs,
					       uint32_t n, int64_t ns, int64_t switches,
					       uint32_t pid)
{
	int64_t v[2] = { ns, switches };

	assert_non_null(profile__add_sample(p, locs, n, v, pid));
}

/* A process's run-queue waits: count[i] of lat[i] ns each. */
static __attribute__((unused)) void off_group(struct profile *p, const char *comm,
					      const char *pid, const uint64_t *lat,
					      const uint64_t *count, uint32_t n)
{
	uint64_t h[OFF_RQ_SLOTS] = { 0 }, waits = 0, total = 0, max = 0;
	struct prof_group *g = profile__add_group(p);
	struct prof_hist hist = { .sub = 1, .counts = h, .n = OFF_RQ_SLOTS };

	assert_non_null(g);
	for (uint32_t i = 0; i < n; i++) {
		h[1 + 63 - __builtin_clzll(lat[i])] += count[i];
		waits += count[i];
		total += lat[i] * count[i];
		max = lat[i] > max ? lat[i] : max;
	}
	assert_int_equal(prof_group__add_label(p, g, "process", comm), 0);
	assert_int_equal(prof_group__add_label(p, g, "pid", pid), 0);
	assert_int_equal(prof_group__add_stat(p, g, "runq_waits", "WAITS", "count", waits), 0);
	assert_int_equal(prof_group__add_stat(p, g, "runq_avg_ns", "AVG", "nanoseconds",
					      total / waits), 0);
	for (uint32_t i = 0; i < 2; i++) {
		static const char *const name[] = { "runq_p50_ns", "runq_p99_ns" };
		static const char *const label[] = { "P50", "P99" };
		static const double q[] = { 0.5, 0.99 };
		double v = prof_hist__quantile(&hist, q[i]);
		int64_t at = v > (double)max ? (int64_t)max : (int64_t)(v + 0.5);

		assert_int_equal(prof_group__add_stat(p, g, name[i], label[i], "nanoseconds", at),
				 0);
	}
	assert_int_equal(prof_group__add_stat(p, g, "runq_max_ns", "MAX", "nanoseconds", max), 0);
	assert_int_equal(prof_group__add_stat(p, g, "runq_total_ns", "TOTAL", "nanoseconds",
					      total), 0);
	assert_int_equal(prof_group__add_hist(p, g, "run-queue latency", "nanoseconds", 1, h,
					      OFF_RQ_SLOTS), 0);
}

static __attribute__((unused)) struct profile *offcpu_fixture(void)
{
	struct profile *p = profile__new("offcpu");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_srv, m_libc, m_kernel;
	uint32_t f_sched, f_schedule, f_nanosleep, f_hrnano, f_sysnano, f_entry, f_pipe_read;
	uint32_t f_vfs_read, f_ttwu, f_hrwake, f_hrint, f_asm_timer, f_pipe_write, f_vfs_write;
	uint32_t f_exit_loop, f_nap, f_worker, f_wait_job, f_post_job, f_producer, f_start;
	uint32_t f_waker_irq, f_waker_srv, f_sep, f_rawsys;
	uint32_t l_sched, l_schedule, l_nanosleep, l_hrnano, l_sysnano, l_entry, l_pipe_read;
	uint32_t l_vfs_read, l_ttwu, l_hrwake, l_hrint, l_asm_timer, l_pipe_write, l_vfs_write;
	uint32_t l_exit_loop, l_nap, l_worker, l_wait_job, l_post_job_up, l_producer, l_start;
	uint32_t l_waker_irq, l_waker_srv, l_sep, l_worker_compute;
	struct prof_process *proc;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./srv", "6.18.0",
					   "ebprof offcpu --wakers -o out.txt -- ./srv",
					   1700000000123456789LL, 2000000000LL), 0);
	assert_int_equal(profile__add_type(p, "offcpu", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "switches", "count"), 0);
	assert_int_equal(profile__set_default_type(p, "offcpu"), 0);
	assert_int_equal(profile__add_info(p, "tracepoints", "sched_switch, sched_wakeup, "
					   "sched_wakeup_new, sched_waking"), 0);
	assert_int_equal(profile__add_info(p, "states", "all"), 0);
	assert_int_equal(profile__add_info(p, "switches", "%d", 1621), 0);
	assert_int_equal(profile__add_info(p, "filtered", "%d", 0), 0);

	m_srv = profile__mapping(p, 400, 0x555555554000, 0x555555559000, 0, "/usr/bin/srv", NULL);
	m_libc = profile__mapping(p, 400, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_kernel = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82200000, 0,
				    "[kernel.kallsyms]", NULL);

	f_sched = fn(p, "__schedule", "__schedule", NULL);
	f_schedule = fn(p, "schedule", "schedule", NULL);
	f_nanosleep = fn(p, "do_nanosleep", "do_nanosleep", NULL);
	f_hrnano = fn(p, "hrtimer_nanosleep", "hrtimer_nanosleep", NULL);
	f_sysnano = fn(p, "__x64_sys_nanosleep", "__x64_sys_nanosleep", NULL);
	f_entry = fn(p, "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_after_hwframe", NULL);
	f_pipe_read = fn(p, "anon_pipe_read", "anon_pipe_read", NULL);
	f_vfs_read = fn(p, "vfs_read", "vfs_read", NULL);
	f_ttwu = fn(p, "try_to_wake_up", "try_to_wake_up", NULL);
	f_hrwake = fn(p, "hrtimer_wakeup", "hrtimer_wakeup", NULL);
	f_hrint = fn(p, "hrtimer_interrupt", "hrtimer_interrupt", NULL);
	f_asm_timer = fn(p, "asm_sysvec_apic_timer_interrupt", "asm_sysvec_apic_timer_interrupt",
			 NULL);
	f_pipe_write = fn(p, "anon_pipe_write", "anon_pipe_write", NULL);
	f_vfs_write = fn(p, "vfs_write", "vfs_write", NULL);
	f_exit_loop = fn(p, "exit_to_user_mode_loop", "exit_to_user_mode_loop", NULL);
	f_nap = fn(p, "nap", "nap", "srv.c");
	f_worker = fn(p, "worker", "worker", "srv.c");
	f_wait_job = fn(p, "wait_job", "wait_job", "srv.c");
	f_post_job = fn(p, "post_job", "post_job", "srv.c");
	f_rawsys = fn(p, "rawsys3", "rawsys3", "rawsys.h");
	f_producer = fn(p, "producer", "producer", "srv.c");
	f_start = fn(p, "start_thread", "start_thread", NULL);
	f_waker_irq = fn(p, "waker: interrupt", "waker: interrupt", NULL);
	f_waker_srv = fn(p, "waker: srv (400)", "waker: srv (400)", NULL);
	f_sep = fn(p, "--", "--", NULL);

	l_sched = LOC(p, m_kernel, 0xffffffff821facd8, 0x11facd8, { f_sched, 0 });
	l_schedule = LOC(p, m_kernel, 0xffffffff821fb643, 0x11fb643, { f_schedule, 0 });
	l_nanosleep = LOC(p, m_kernel, 0xffffffff822025be, 0x12025be, { f_nanosleep, 0 });
	l_hrnano = LOC(p, m_kernel, 0xffffffff81421cd4, 0x421cd4, { f_hrnano, 0 });
	l_sysnano = LOC(p, m_kernel, 0xffffffff81421d80, 0x421d80, { f_sysnano, 0 });
	l_entry = LOC(p, m_kernel, 0xffffffff82400087, 0x1400087, { f_entry, 0 });
	l_pipe_read = LOC(p, m_kernel, 0xffffffff8160a1c0, 0x60a1c0, { f_pipe_read, 0 });
	l_vfs_read = LOC(p, m_kernel, 0xffffffff8131c6e5, 0x31c6e5, { f_vfs_read, 0 });
	l_ttwu = LOC(p, m_kernel, 0xffffffff8117a3b0, 0x17a3b0, { f_ttwu, 0 });
	l_hrwake = LOC(p, m_kernel, 0xffffffff81420b11, 0x420b11, { f_hrwake, 0 });
	l_hrint = LOC(p, m_kernel, 0xffffffff814223f5, 0x4223f5, { f_hrint, 0 });
	l_asm_timer = LOC(p, m_kernel, 0xffffffff82401a4a, 0x1401a4a, { f_asm_timer, 0 });
	l_pipe_write = LOC(p, m_kernel, 0xffffffff8160a8f2, 0x60a8f2, { f_pipe_write, 0 });
	l_vfs_write = LOC(p, m_kernel, 0xffffffff8131d101, 0x31d101, { f_vfs_write, 0 });
	l_exit_loop = LOC(p, m_kernel, 0xffffffff811f0a27, 0x1f0a27, { f_exit_loop, 0 });
	l_nap = LOC(p, m_srv, 0x555555555210, 0x1210, { f_rawsys, 12 }, { f_nap, 30 });
	l_worker = LOC(p, m_srv, 0x555555555300, 0x1300, { f_worker, 51 });
	l_worker_compute = LOC(p, m_srv, 0x555555555344, 0x1344, { f_worker, 55 });
	l_wait_job = LOC(p, m_srv, 0x555555555280, 0x1280, { f_rawsys, 12 }, { f_wait_job, 41 });
	/* the waker's frames are drawn upside down: its inlined lines in reverse too */
	l_post_job_up = LOC(p, m_srv, 0x5555555552c0, 0x12c0, { f_post_job, 45 }, { f_rawsys, 12 });
	l_producer = LOC(p, m_srv, 0x555555555390, 0x1390, { f_producer, 62 });
	l_start = LOC(p, m_libc, 0x7f00000a2b0a, 0xa2b0a, { f_start, 0 });
	l_waker_irq = loc(p, PROF_NONE, 0, 0,
			  LINES({ f_waker_irq, 0 }), 1);
	l_waker_srv = loc(p, PROF_NONE, 0, 0,
			  LINES({ f_waker_srv, 0 }), 1);
	l_sep = loc(p, PROF_NONE, 0, 0, LINES({ f_sep, 0 }), 1);

	/* the worker's naps, woken by the timer interrupt */
	off_sample(p, STACK(l_waker_irq, l_asm_timer, l_hrint, l_hrwake, l_ttwu, l_sep, l_sched,
			    l_schedule, l_nanosleep, l_hrnano, l_sysnano, l_entry, l_nap, l_worker,
			    l_start),
		   1002045577, 20, 400);
	/* its waits for a job, woken by the producer's write */
	off_sample(p, STACK(l_waker_srv, l_start, l_producer, l_post_job_up, l_entry, l_vfs_write,
			    l_pipe_write, l_ttwu, l_sep, l_sched, l_schedule, l_pipe_read,
			    l_vfs_read, l_entry, l_wait_job, l_worker, l_start),
		   731000000, 1500, 400);
	/* preempted on its way back to user mode: no waker */
	off_sample(p, STACK(l_sched, l_schedule, l_exit_loop, l_entry, l_worker_compute, l_worker,
			    l_start),
		   2400000, 101, 400);

	proc = profile__add_process(p, 400, "srv", "./srv");
	assert_non_null(proc);
	assert_int_equal(prof_process__add_stat(p, proc, "offcpu_ns", 1735445577), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "switches", 1621), 0);

	off_group(p, "srv", "400", (const uint64_t[]){ 3000, 12000, 25000, 900000 },
		  (const uint64_t[]){ 600, 900, 120, 1 }, 4);

	assert_int_equal(profile__add_drop(p, "thread_table_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stack_table_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "count_table_full", 3), 0);
	assert_int_equal(profile__add_note(p, "3 off-CPU intervals were lost: the count table "
					   "(--max-stacks 16384) was full; raise --max-stacks"), 0);
	assert_int_equal(profile__add_drop(p, "switch_in_unseen", 2), 0);
	assert_int_equal(profile__add_note(p, "2 switch-ins were not reported by the kernel (no "
					   "tracepoint reaches BPF while some tasks run): each "
					   "such wait was counted, its end taken from the thread's "
					   "CPU time at its next switch-out (late by the interrupts' "
					   "time meanwhile, microseconds)"), 0);
	return p;
}

#endif
