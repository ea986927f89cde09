/* BPF-level tests of io: the collector (io_mode_ops) and its skeleton loaded in this process,
 * driven through the mode contract as the session drives it, attached to a forked child that
 * makes a known number of O_DIRECT reads of a file under /var/tmp (one block request each,
 * issued in the child: docs/PLATFORM facts), then read out into a profile: the child's
 * requests and bytes exactly, each with a latency, under the stack that issued it; a
 * --device filter that names another disk sees none of them; without completion events, each
 * request is said to have ended unseen, none in flight. Root required (run by
 * tests/run-e2e.sh); skipped, with the reason, when /var/tmp is on no block device.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/mode.h"
#include "modes/io/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

#define NREADS 300
#define BS 4096

static char path[64];
static uint32_t file_disk;	/* IO_DEV of the disk under /var/tmp */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The reads, in a function of their own (its frame is on the child's stack): every other
 * block from block 2 * first, so that no two children's reads are next to each other. Two
 * readers of adjacent blocks at once see the block layer merge one's bio into the other's
 * request (block_bio_frontmerge/backmerge): 4 of 600 reads were no request of their own, and
 * the test took them for lost. */
__attribute__((noinline)) static int direct_reads(int fd, void *buf, int first)
{
	for (int i = 0; i < NREADS; i++)
		if (pread(fd, buf, BS, (off_t)(2 * (first + i)) * BS) != BS)
			return 1;
	return 0;
}

/* Fork nchild children that wait for a byte on a pipe, then read the file NREADS times each
 * with O_DIRECT; attach io to them, let them go, tick until they exit, and read everything
 * out. */
static struct profile *run_readers(struct io_opts *o, int nchild, pid_t *child)
{
	struct log_ctx lc = { .prog = "test_io_bpf", .verbose = getenv("TEST_VERBOSE") ? 2 : 0 };
	struct symbolizer_opts so = { .no_lines = true };
	struct session_env env = { .lc = &lc };
	int go[2], status = -1, left = nchild;
	uint64_t last = 0;
	void *m;
	pid_t pid;

	env.prof = profile__new("io");
	env.sym = symbolizer__new(&so);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	assert_int_equal(pipe(go), 0);
	env.start_ns = mono_ns();
	m = io_mode_ops.open(&env, o);
	assert_non_null(m);

	for (int i = 0; i < nchild; i++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			void *buf;
			char c;
			int fd = open(path, O_RDONLY | O_DIRECT);

			close(go[1]);
			if (fd < 0 || posix_memalign(&buf, BS, BS) || read(go[0], &c, 1) != 1)
				_exit(2);
			_exit(direct_reads(fd, buf, i * NREADS));
		}
		child[i] = pid;
		assert_int_equal(io_mode_ops.attach(m, pid, MODE_ATTACH_PID, &status), 0);
	}
	close(go[0]);
	for (int i = 0; i < nchild; i++)
		assert_int_equal(write(go[1], "x", 1), 1);
	close(go[1]);
	while (left) {
		uint64_t now = mono_ns();
		bool second = now - last > 200000000ull;

		if (second)
			last = now;
		io_mode_ops.tick(m, now - env.start_ns, second);
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			assert_true(WIFEXITED(status));
			assert_int_equal(WEXITSTATUS(status), 0);
			left--;
			continue;
		}
		usleep(10000);
	}
	io_mode_ops.stop(m);
	for (int i = 0; i < nchild; i++)
		io_mode_ops.finalize(m, child[i], false);
	io_mode_ops.finish(m);
	io_mode_ops.detach(m);
	io_mode_ops.close(m);
	symbolizer__free(env.sym);
	return env.prof;
}

static struct profile *run_reads(struct io_opts *o, pid_t *child)
{
	return run_readers(o, 1, child);
}

static bool has_function(const struct profile *p, const struct prof_sample *s, const char *fn)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		for (uint32_t j = 0; j < l->nlines; j++)
			if (!strcmp(p->functions[l->lines[j].function].name, fn))
				return true;
	}
	return false;
}

static const struct prof_group *group(const struct profile *p, const char *op)
{
	for (uint32_t i = 0; i < p->ngroups; i++)
		if (!strcmp(prof_group__label(&p->groups[i], "op"), op))
			return &p->groups[i];
	return NULL;
}

static int64_t group_stat(const struct prof_group *g, const char *name)
{
	for (uint32_t i = 0; g && i < g->nstats; i++)
		if (!strcmp(g->stats[i].name, name))
			return g->stats[i].value;
	return -1;
}

/* The reads, again while the kernel skipped a completion event (heavy I/O load: a counted
 * drop, completion_unseen), at most 5 times. */
static struct profile *run_reads_seen(struct io_opts *o, pid_t *pid)
{
	struct profile *p = NULL;

	for (int try = 0; try < 5; try++) {
		profile__free(p);
		p = run_reads(o, pid);
		if (profile__drop(p, "completion_unseen") == 0)
			return p;
		print_message("%llu completions unseen: again\n",
			      (unsigned long long)profile__drop(p, "completion_unseen"));
	}
	return p;
}

static void test_direct_reads(void **state)
{
	struct io_opts o = { .max_stacks = 1024, .no_kthreads = true };
	int64_t requests = 0, bytes = 0, latency = 0, queue = 0;
	const struct prof_group *g;
	struct profile *p;
	uint64_t unseen;
	pid_t pid;

	if (!file_disk)
		skip();
	p = run_reads_seen(&o, &pid);
	unseen = profile__drop(p, "completion_unseen");
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		char leaf[128];

		if (s->pid != (uint32_t)pid)
			continue;
		/* the leaf names the disk and the operation */
		profile__frame_name(p, &p->locations[s->locs[0]], 0, leaf, sizeof(leaf));
		assert_non_null(strstr(leaf, " read"));
		requests += s->values[0];
		bytes += s->values[1];
		latency += s->values[2];
		queue += s->values[3];
		/* issued by the child's pread, in its own context */
		assert_true(has_function(p, s, "blk_mq_submit_bio"));
		assert_true(has_function(p, s, "vfs_read") || has_function(p, s, "ksys_pread64") ||
			    has_function(p, s, "__x64_sys_pread64"));
		assert_false(has_function(p, s, "bpf_trace_run1"));
	}
	/* every request is counted, or said to have ended unseen */
	assert_int_equal(requests + unseen, NREADS);
	assert_int_equal(bytes + unseen * BS, NREADS * BS);
	assert_true(latency > 0 && queue >= 0 && queue < latency);
	/* the (disk, read) group: every request with a latency in its histogram */
	g = group(p, "read");
	assert_non_null(g);
	assert_int_equal(group_stat(g, "requests"), requests);
	assert_int_equal(group_stat(g, "latency_ns"), latency);
	assert_int_equal(prof_hist__total(&g->hists[0]), NREADS);
	assert_true(g->hists[0].counts[0] == 0);	/* no request of 0 ns */
	assert_int_equal(group_stat(g, "in_flight"), 0);
	assert_true(group_stat(g, "latency_p50_ns") <= group_stat(g, "latency_p99_ns"));
	assert_true(group_stat(g, "latency_p99_ns") <= group_stat(g, "latency_max_ns"));
	profile__free(p);
}

/* The kernel delivers no completion (the completion programs are not loaded): every request
 * ended unseen, the last ones too, whose struct requests were freed and not used again; none
 * is in flight at the end (before the sweep at the end, those were). */
static void test_completions_unseen(void **state)
{
	struct io_opts o = { .max_stacks = 1024, .no_kthreads = true, .no_completions = true };
	int64_t requests = 0, inflight = 0;
	struct profile *p;
	pid_t pid;

	if (!file_disk)
		skip();
	p = run_reads(&o, &pid);
	for (uint32_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].pid == (uint32_t)pid)
			requests += p->samples[i].values[0];
	for (uint32_t i = 0; i < p->ngroups; i++)
		inflight += group_stat(&p->groups[i], "in_flight");
	assert_int_equal(requests, 0);
	assert_int_equal(inflight, 0);
	assert_string_equal(profile__info(p, "in_flight"), "0");
	assert_int_equal(profile__drop(p, "completion_unseen"), NREADS);
	profile__free(p);
}

static bool has_note(const struct profile *p, const char *text)
{
	for (uint32_t i = 0; i < p->nnotes; i++)
		if (strstr(p->notes[i], text))
			return true;
	return false;
}

static uint64_t proc_stat(const struct profile *p, pid_t pid, const char *name)
{
	const struct prof_process *proc = profile__find_process(p, pid);
	uint64_t v = 0;

	return proc && prof_process__stat(proc, name, &v) ? v : 0;
}

/* Each process's totals do not depend on the stack table: with one slot for stacks, the
 * child's row still has every request, its stacks counted lost. With room for one process's
 * totals, two children: the second child's requests are process_totals_full drops, said in a
 * note, and its stacks are still there. */
static void test_process_totals(void **state)
{
	struct io_opts o = { .max_stacks = 1, .no_kthreads = true };
	uint64_t unseen, rows, drop;
	int64_t samples = 0;
	struct profile *p;
	pid_t pid[2];

	if (!file_disk)
		skip();
	p = run_reads_seen(&o, pid);
	unseen = profile__drop(p, "completion_unseen");
	assert_true(profile__drop(p, "count_table_full") + profile__drop(p, "stack_table_full") > 0);
	assert_int_equal(proc_stat(p, pid[0], "requests") + unseen, NREADS);
	assert_int_equal(proc_stat(p, pid[0], "io_bytes") + unseen * BS, NREADS * BS);
	assert_true(proc_stat(p, pid[0], "latency_ns") > proc_stat(p, pid[0], "queue_ns"));
	assert_int_equal(profile__drop(p, "process_totals_full"), 0);
	profile__free(p);

	o.max_stacks = 1024;
	o.max_procs = 1;
	p = run_readers(&o, 2, pid);
	unseen = profile__drop(p, "completion_unseen");
	drop = profile__drop(p, "process_totals_full");
	rows = proc_stat(p, pid[0], "requests") + proc_stat(p, pid[1], "requests");
	for (uint32_t i = 0; i < p->nsamples; i++)
		samples += p->samples[i].values[0];
	print_message("rows %llu, process_totals_full %llu, unseen %llu, samples %lld\n",
		      (unsigned long long)rows, (unsigned long long)drop,
		      (unsigned long long)unseen, (long long)samples);
	/* the second child's requests dropped from the rows (its first at least: the table holds
	 * the first child's until a tick's spill takes it out and makes room), every one in the
	 * stacks */
	assert_true(drop > 0);
	assert_int_equal(rows + drop + unseen, 2 * NREADS);
	assert_int_equal(samples + unseen, 2 * NREADS);
	assert_true(has_note(p, "processes' totals (1) was full"));
	profile__free(p);
}

/* As on kernels without block_io_start: requests start at their insertion (mq-deadline) or
 * their issue; the same reads, the same numbers. */
static void test_legacy_tracepoints(void **state)
{
	struct io_opts o = { .max_stacks = 1024, .no_kthreads = true,
			     .legacy_tracepoints = true };
	int64_t requests = 0, bytes = 0;
	struct profile *p = NULL;
	pid_t pid;

	if (!file_disk)
		skip();
	/* an unseen completion is not detected without block_io_start (the next request at its
	 * address is taken for it): again while the count is short, at most 5 times */
	for (int try = 0; try < 5 && requests != NREADS; try++) {
		profile__free(p);
		p = run_reads(&o, &pid);
		requests = bytes = 0;
		for (uint32_t i = 0; i < p->nsamples; i++) {
			if (p->samples[i].pid != (uint32_t)pid)
				continue;
			requests += p->samples[i].values[0];
			bytes += p->samples[i].values[1];
			/* started in the child, inside its read (inserted as its plug is
			 * flushed, or issued directly) */
			assert_true(has_function(p, &p->samples[i], "vfs_read") ||
				    has_function(p, &p->samples[i], "ksys_pread64") ||
				    has_function(p, &p->samples[i], "__x64_sys_pread64"));
		}
	}
	assert_string_equal(profile__info(p, "tracepoints"),
			    "block_rq_insert, block_rq_issue, block_rq_complete");
	assert_int_equal(requests, NREADS);
	assert_int_equal(bytes, NREADS * BS);
	assert_int_equal(group_stat(group(p, "read"), "requests"), NREADS);
	assert_true(group_stat(group(p, "read"), "latency_ns") > 0);
	profile__free(p);
}

static void test_device_filter(void **state)
{
	struct io_opts o = { .max_stacks = 1024, .no_kthreads = true, .ndevs = 1 };
	struct profile *p;
	pid_t pid;

	if (!file_disk)
		skip();
	/* a disk number no disk has: nothing of the child's is counted */
	o.devs[0] = IO_DEV(4095, 4095);
	p = run_reads(&o, &pid);
	assert_int_equal(p->nsamples, 0);
	assert_int_equal(p->ngroups, 0);
	profile__free(p);
	/* its own disk: all of them */
	o.devs[0] = file_disk;
	p = run_reads_seen(&o, &pid);
	assert_non_null(group(p, "read"));
	assert_int_equal(group_stat(group(p, "read"), "requests") + profile__drop(p, "completion_unseen"),
			 NREADS);
	profile__free(p);
}

static void test_device_names(void **state)
{
	char disk[64];
	uint32_t dev;

	assert_int_equal(io_device("no-such-disk", &dev, disk, sizeof(disk)), -ENOENT);
	assert_int_equal(io_device("../block", &dev, disk, sizeof(disk)), -ENOENT);
	assert_int_equal(io_device("", &dev, disk, sizeof(disk)), -ENOENT);
	if (!access("/sys/class/block/loop0", F_OK)) {
		assert_int_equal(io_device("loop0", &dev, disk, sizeof(disk)), 0);
		assert_string_equal(disk, "loop0");
		assert_int_equal(IO_DEV_MAJOR(dev), 7);
		assert_int_equal(io_device("/dev/loop0", &dev, disk, sizeof(disk)), 0);
	}
	assert_string_equal(io_op_name(IO_OP_DISCARD), "discard");
	assert_string_equal(io_op_name(1000), "other");
}

/* The file, and the disk it is on; file_disk stays 0 when /var/tmp has none (tmpfs, overlay)
 * or does not take O_DIRECT. */
static int setup(void **state)
{
	char *buf = aligned_alloc(BS, BS), sys[96], disk[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/var/tmp/ebprof-test-io.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || !buf)
		return -1;
	memset(buf, 'x', BS);
	for (int i = 0; i < 4 * NREADS; i++)	/* two readers' blocks, with gaps */
		if (write(fd, buf, BS) != BS)
			return -1;
	fsync(fd);
	fstat(fd, &st);
	close(fd);
	free(buf);
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	fd = open(path, O_RDONLY | O_DIRECT);
	if (major(st.st_dev) == 0 || access(sys, F_OK) || fd < 0) {
		fprintf(stderr, "test_io_bpf: the request tests skip: /var/tmp is on no block "
			"device that takes O_DIRECT (device %u:%u)\n", major(st.st_dev),
			minor(st.st_dev));
	} else {
		/* the whole disk of a partition: what the kernel queues requests for */
		char real[512], *name;

		if (realpath(sys, real) && (name = strrchr(real, '/'))) {
			snprintf(sys, sizeof(sys), "/sys/class/block/%s/partition", name + 1);
			if (!access(sys, F_OK)) {
				*name = 0;
				name = strrchr(real, '/');
			}
			if (name && io_device(name + 1, &file_disk, disk, sizeof(disk)))
				file_disk = 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_names),
		cmocka_unit_test(test_direct_reads),
		cmocka_unit_test(test_legacy_tracepoints),
		cmocka_unit_test(test_completions_unseen),
		cmocka_unit_test(test_device_filter),
		cmocka_unit_test(test_process_totals),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_io_bpf: skipped: needs root (loads BPF programs)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
