/* A hand-built block I/O profile as `ebprof io` makes it, for the renderer tests of every format
 * (test_io_outputs.c): requests/count, io_bytes/bytes, latency/nanoseconds (the default) and
 * queue/nanoseconds; a database process reading (O_DIRECT pread) and fsyncing, a writeback
 * flusher (a kernel thread: kernel frames only) writing back; each stack under a leaf frame
 * naming the disk and operation; one group per (disk, operation) with its numbers and its
 * latency, queue, service and size histograms; the run's facts, drops and notes. Include after
 * cmocka.h and profile_builder.h. */
#ifndef EBPROF_TEST_IO_FIXTURE_H
#define EBPROF_TEST_IO_FIXTURE_H

#include "profile/profile.h"

/* latency histograms: 8 slots per power of two, 47 powers, an open slot (abi/io.h) */
#define IOF_SUB 8
#define IOF_LAT_SLOTS (1 + 47 * IOF_SUB + 1)
#define IOF_SIZE_SLOTS (1 + 40 + 1)

static __attribute__((unused)) uint32_t iof_slot(uint64_t v)
{
	uint32_t b = 63 - __builtin_clzll(v);

	return 1 + b * IOF_SUB + (uint32_t)((v >> (b - 3)) & 7);
}

static __attribute__((unused)) void io_sample(struct profile *p, const uint32_t *locs,
					      uint32_t n, int64_t requests, int64_t bytes,
					      int64_t latency, int64_t queue, uint32_t pid)
{
	int64_t v[4] = { requests, bytes, latency, queue };

	assert_non_null(profile__add_sample(p, locs, n, v, pid));
}

/* One (disk, operation): every request of it at the latencies lat[i] (count[i] each), queue
 * q ns and size `size` bytes, the rest in service. */
static __attribute__((unused)) void io_group(struct profile *p, const char *disk, const char *op,
					     const uint64_t *lat, const uint64_t *count,
					     uint32_t n, uint64_t q, uint64_t size,
					     uint64_t inflight)
{
	uint64_t hl[IOF_LAT_SLOTS] = { 0 }, hq[IOF_LAT_SLOTS] = { 0 }, hs[IOF_LAT_SLOTS] = { 0 };
	uint64_t hz[IOF_SIZE_SLOTS] = { 0 }, reqs = 0, sum = 0, max = 0;
	struct prof_group *g = profile__add_group(p);

	assert_non_null(g);
	for (uint32_t i = 0; i < n; i++) {
		hl[iof_slot(lat[i])] += count[i];
		hq[iof_slot(q)] += count[i];
		hs[iof_slot(lat[i] - q)] += count[i];
		hz[1 + 63 - __builtin_clzll(size)] += count[i];
		reqs += count[i];
		sum += lat[i] * count[i];
		max = lat[i] > max ? lat[i] : max;
	}
	assert_int_equal(prof_group__add_label(p, g, "device", disk), 0);
	assert_int_equal(prof_group__add_label(p, g, "op", op), 0);
	assert_int_equal(prof_group__add_stat(p, g, "requests", "REQUESTS", "count", reqs), 0);
	assert_int_equal(prof_group__add_stat(p, g, "bytes", "BYTES", "bytes", reqs * size), 0);
	assert_int_equal(prof_group__add_stat(p, g, "latency_avg_ns", "AVG", "nanoseconds",
					      sum / reqs), 0);
	for (uint32_t i = 0; i < 3; i++) {
		static const char *const name[] = { "latency_p50_ns", "latency_p90_ns",
						    "latency_p99_ns" };
		static const char *const label[] = { "P50", "P90", "P99" };
		static const double q[] = { 0.5, 0.9, 0.99 };
		struct prof_hist h = { .sub = IOF_SUB, .counts = hl, .n = IOF_LAT_SLOTS };
		double v = prof_hist__quantile(&h, q[i]);

		int64_t at = v > (double)max ? (int64_t)max : (int64_t)(v + 0.5);

		assert_int_equal(prof_group__add_stat(p, g, name[i], label[i], "nanoseconds", at),
				 0);
	}
	assert_int_equal(prof_group__add_stat(p, g, "latency_max_ns", "MAX", "nanoseconds", max),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "queue_avg_ns", "QUEUE", "nanoseconds", q), 0);
	assert_int_equal(prof_group__add_stat(p, g, "service_avg_ns", "SERVICE", "nanoseconds",
					      sum / reqs - q), 0);
	assert_int_equal(prof_group__add_stat(p, g, "in_flight", "IN FLIGHT", "count", inflight),
			 0);
	assert_int_equal(prof_group__add_stat(p, g, "latency_ns", NULL, "nanoseconds", sum), 0);
	assert_int_equal(prof_group__add_hist(p, g, "latency", "nanoseconds", IOF_SUB, hl,
					      IOF_LAT_SLOTS), 0);
	assert_int_equal(prof_group__add_hist(p, g, "queue", "nanoseconds", IOF_SUB, hq,
					      IOF_LAT_SLOTS), 0);
	assert_int_equal(prof_group__add_hist(p, g, "service", "nanoseconds", IOF_SUB, hs,
					      IOF_LAT_SLOTS), 0);
	assert_int_equal(prof_group__add_hist(p, g, "size", "bytes", 1, hz, IOF_SIZE_SLOTS), 0);
}

static __attribute__((unused)) struct profile *io_fixture(void)
{
	struct profile *p = profile__new("io");
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	uint32_t m_db, m_libc, m_kernel, f_leaf_read, f_leaf_write, f_leaf_flush;
	uint32_t f_main, f_load, f_commit, f_pread, f_fsync, f_start;
	uint32_t f_acct, f_submit, f_dio, f_vfs_read, f_sys_pread, f_sync_file, f_sys_fsync;
	uint32_t f_entry, f_writepages, f_wb_workfn, f_kthread, f_flush;
	uint32_t l_read, l_write, l_flush, l_main_load, l_load, l_commit, l_pread, l_fsync;
	uint32_t l_start, l_acct, l_submit, l_dio, l_vfs_read, l_sys_pread, l_sync_file;
	uint32_t l_sys_fsync, l_entry, l_writepages, l_wb_workfn, l_kthread, l_flushk;
	struct prof_process *proc;

	assert_non_null(p);
	assert_int_equal(profile__set_meta(p, "./db --load", "6.18.0",
					   "ebprof io -o out.txt -- ./db --load",
					   1700000000123456789LL, 2000000000LL), 0);
	assert_int_equal(profile__add_type(p, "requests", "count"), 0);
	assert_int_equal(profile__add_type(p, "io_bytes", "bytes"), 0);
	assert_int_equal(profile__add_type(p, "latency", "nanoseconds"), 0);
	assert_int_equal(profile__add_type(p, "queue", "nanoseconds"), 0);
	assert_int_equal(profile__set_default_type(p, "latency"), 0);
	assert_int_equal(profile__add_info(p, "devices", "vda (254:0)"), 0);
	assert_int_equal(profile__add_info(p, "requests", "%d", 2107), 0);
	assert_int_equal(profile__add_info(p, "in_flight", "%d", 1), 0);

	m_db = profile__mapping(p, 300, 0x555555554000, 0x555555559000, 0, "/usr/bin/db", NULL);
	m_libc = profile__mapping(p, 300, 0x7f0000028000, 0x7f00001bd000, 0x28000, libc,
				  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4");
	m_kernel = profile__mapping(p, 0, 0xffffffff81000000, 0xffffffff82200000, 0,
				    "[kernel.kallsyms]", NULL);

	/* the leaves, as the collector names them (synthetic frames, no mapping) */
	f_leaf_read = fn(p, "vda read (sync)", "vda read (sync)", NULL);
	f_leaf_write = fn(p, "vda write (sync)", "vda write (sync)", NULL);
	f_leaf_flush = fn(p, "vda write (sync+preflush)", "vda write (sync+preflush)", NULL);
	f_main = fn(p, "main", "main", "db.c");
	f_load = fn(p, "load_table", "load_table", "db.c");
	f_commit = fn(p, "commit", "commit", "db.c");
	f_pread = fn(p, "pread64", "__libc_pread64", NULL);
	f_fsync = fn(p, "fsync", "__libc_fsync", NULL);
	f_start = fn(p, "__libc_start_call_main", "__libc_start_call_main", NULL);
	f_acct = fn(p, "blk_account_io_start", "blk_account_io_start", NULL);
	f_submit = fn(p, "blk_mq_submit_bio", "blk_mq_submit_bio", NULL);
	f_dio = fn(p, "iomap_dio_rw", "iomap_dio_rw", NULL);
	f_vfs_read = fn(p, "vfs_read", "vfs_read", NULL);
	f_sys_pread = fn(p, "__x64_sys_pread64", "__x64_sys_pread64", NULL);
	f_sync_file = fn(p, "ext4_sync_file", "ext4_sync_file", NULL);
	f_sys_fsync = fn(p, "__x64_sys_fsync", "__x64_sys_fsync", NULL);
	f_entry = fn(p, "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_after_hwframe", NULL);
	f_writepages = fn(p, "do_writepages", "do_writepages", NULL);
	f_wb_workfn = fn(p, "wb_workfn", "wb_workfn", NULL);
	f_kthread = fn(p, "kthread", "kthread", NULL);
	f_flush = fn(p, "submit_bio_wait", "submit_bio_wait", NULL);

	l_read = loc(p, PROF_NONE, 0, 0,
		     LINES({ f_leaf_read, 0 }), 1);
	l_write = loc(p, PROF_NONE, 0, 0,
		      LINES({ f_leaf_write, 0 }), 1);
	l_flush = loc(p, PROF_NONE, 0, 0,
		      LINES({ f_leaf_flush, 0 }), 1);
	l_main_load = LOC(p, m_db, 0x555555555420, 0x1420, { f_main, 40 });
	l_load = LOC(p, m_db, 0x555555555180, 0x1180, { f_load, 12 });
	l_commit = LOC(p, m_db, 0x555555555300, 0x1300, { f_commit, 25 }, { f_main, 44 });
	l_pread = LOC(p, m_libc, 0x7f0000114b2d, 0x114b2d, { f_pread, 0 });
	l_fsync = LOC(p, m_libc, 0x7f0000118a3b, 0x118a3b, { f_fsync, 0 });
	l_start = LOC(p, m_libc, 0x7f0000029d90, 0x29d90, { f_start, 0 });
	l_acct = LOC(p, m_kernel, 0xffffffff8162a1b4, 0x62a1b4, { f_acct, 0 });
	l_submit = LOC(p, m_kernel, 0xffffffff8162f3c9, 0x62f3c9, { f_submit, 0 });
	l_dio = LOC(p, m_kernel, 0xffffffff814d2e11, 0x4d2e11, { f_dio, 0 });
	l_vfs_read = LOC(p, m_kernel, 0xffffffff8131c6e5, 0x31c6e5, { f_vfs_read, 0 });
	l_sys_pread = LOC(p, m_kernel, 0xffffffff8131d2a0, 0x31d2a0, { f_sys_pread, 0 });
	l_sync_file = LOC(p, m_kernel, 0xffffffff814a7742, 0x4a7742, { f_sync_file, 0 });
	l_sys_fsync = LOC(p, m_kernel, 0xffffffff8137a0d5, 0x37a0d5, { f_sys_fsync, 0 });
	l_entry = LOC(p, m_kernel, 0xffffffff81c00087, 0xc00087, { f_entry, 0 });
	l_writepages = LOC(p, m_kernel, 0xffffffff812a4c31, 0x2a4c31, { f_writepages, 0 });
	l_wb_workfn = LOC(p, m_kernel, 0xffffffff8138b0aa, 0x38b0aa, { f_wb_workfn, 0 });
	l_kthread = LOC(p, m_kernel, 0xffffffff810c5d94, 0xc5d94, { f_kthread, 0 });
	l_flushk = LOC(p, m_kernel, 0xffffffff8161e2f8, 0x61e2f8, { f_flush, 0 });

	/* pid 300: 2000 direct reads, then an fsync: its data, and the cache flush after it */
	io_sample(p, STACK(l_read, l_acct, l_submit, l_dio, l_vfs_read, l_sys_pread, l_entry,
			   l_pread, l_load, l_main_load, l_start),
		  2000, 8192000, 96000000, 10000000, 300);
	io_sample(p, STACK(l_write, l_acct, l_submit, l_writepages, l_sync_file, l_sys_fsync,
			   l_entry, l_fsync, l_commit, l_start),
		  96, 6291456, 48000000, 4000000, 300);
	io_sample(p, STACK(l_flush, l_acct, l_submit, l_flushk, l_sync_file, l_sys_fsync, l_entry,
			   l_fsync, l_commit, l_start),
		  1, 0, 900000, 100000, 300);
	/* pid 57, a writeback flusher: kernel frames only */
	io_sample(p, STACK(l_write, l_acct, l_submit, l_writepages, l_wb_workfn, l_kthread),
		  10, 40960, 3000000, 500000, 57);

	proc = profile__add_process(p, 300, "db", "./db --load");
	assert_non_null(proc);
	assert_int_equal(prof_process__add_stat(p, proc, "requests", 2097), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "io_bytes", 14483456), 0);
	proc = profile__add_process(p, 57, "kworker/u8:1", NULL);
	assert_non_null(proc);
	assert_int_equal(prof_process__add_stat(p, proc, "requests", 10), 0);
	assert_int_equal(prof_process__add_stat(p, proc, "io_bytes", 40960), 0);
	assert_int_equal(prof_process__set_note(p, proc, "kernel thread: writeback flusher"), 0);

	io_group(p, "vda", "read", (const uint64_t[]){ 40000, 52000, 900000 },
		 (const uint64_t[]){ 1500, 490, 10 }, 3, 5000, 4096, 0);
	io_group(p, "vda", "write", (const uint64_t[]){ 300000, 900000, 1500000 },
		 (const uint64_t[]){ 70, 30, 7 }, 3, 40000, 65536, 1);

	assert_int_equal(profile__add_drop(p, "inflight_table_full", 0), 0);
	assert_int_equal(profile__add_drop(p, "stack_table_full", 2), 0);
	assert_int_equal(profile__add_note(p, "kworker/u8:1 (pid 57), a writeback flusher, "
					   "started 10 requests (40.0 KiB)"), 0);
	return p;
}

#endif
