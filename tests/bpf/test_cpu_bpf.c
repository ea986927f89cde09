/* BPF-level tests of cpu: the collector (cpu_mode_ops) and its skeleton loaded in this process,
 * driven through the mode contract as the session drives it, attached to fixture processes
 * (tests/fixtures/cpuburn.c: a known 3:1 split of CPU time), then read out into a profile.
 * Root required (run by tests/run-e2e.sh).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/mode.h"
#include "core/stacks.h"
#include "modes/cpu/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

struct run {
	struct profile *prof;
	long cpu_ms;		/* the fixture's own CPU time, -1 if unknown */
	pid_t pid;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static const char *fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("FIX");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/fixtures", name);
	return path;
}

/*
 * Start argv (stdout to a pipe), attach cpu to it (or -a when all), tick as the session does
 * until it exits (or for secs with -a), then stop, finalize, finish. The child exits before
 * the read-out: its samples must survive that, symbolized from the snapshots.
 */
static struct run run_cpu(struct cpu_opts *o, bool all, char *const argv[], double secs)
{
	struct log_ctx lc = { .prog = "test_cpu_bpf", .verbose = getenv("TEST_VERBOSE") ? 2 : 0 };
	struct symbolizer_opts so = { .no_lines = true };
	struct session_env env = { .lc = &lc, .all = all };
	struct run r = { .cpu_ms = -1 };
	uint64_t t0, last_second;
	int out[2], status = -1;
	char buf[256] = "";
	void *m;
	ssize_t n;

	env.prof = profile__new("cpu");
	env.sym = symbolizer__new(&so);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	assert_int_equal(pipe(out), 0);
	env.start_ns = mono_ns();
	m = cpu_mode_ops.open(&env, o);
	assert_non_null(m);

	r.pid = fork();
	assert_true(r.pid >= 0);
	if (r.pid == 0) {
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	if (all)
		assert_int_equal(cpu_mode_ops.attach_all(m), 0);
	else
		assert_int_equal(cpu_mode_ops.attach(m, r.pid, MODE_ATTACH_PID, &status), 0);

	t0 = last_second = mono_ns();
	for (;;) {
		uint64_t now;
		bool second;

		usleep(20000);
		now = mono_ns();
		second = now - last_second >= 100000000ull;	/* more often than the session */
		if (second)
			last_second = now;
		cpu_mode_ops.tick(m, now - t0, second);
		if (all && now - t0 >= secs * 1e9)
			break;
		if (!all && waitpid(r.pid, &status, WNOHANG) == r.pid)
			break;
	}
	cpu_mode_ops.stop(m);
	if (all) {
		kill(r.pid, SIGKILL);
		waitpid(r.pid, &status, 0);
	}
	cpu_mode_ops.finalize(m, r.pid, false);
	cpu_mode_ops.finish(m);
	cpu_mode_ops.detach(m);
	cpu_mode_ops.close(m);
	n = read(out[0], buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		sscanf(buf, "cpu_ms %ld", &r.cpu_ms);
	}
	close(out[0]);
	symbolizer__free(env.sym);
	r.prof = env.prof;
	return r;
}

static struct cpu_opts default_opts(void)
{
	struct cpu_opts o = { .hz = 999, .max_stacks = 1 << 12 };

	return o;
}

static const char *loc_function(const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	return l->nlines ? p->functions[l->lines[0].function].name : NULL;
}

static bool has_function(const struct profile *p, const struct prof_sample *s, const char *fn)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const char *f = loc_function(p, s->locs[i]);

		if (f && !strcmp(f, fn))
			return true;
	}
	return false;
}

/* By address: kernel frames may be under the kernel's mapping, a module's or "[bpf]". */
static bool is_kernel(const struct profile *p, uint32_t loc)
{
	return p->locations[loc].address >= 0xffff800000000000ull;
}

/* The 3:1 split by function, the count against the fixture's own CPU time, the weights. */
static void test_split_and_count(void **state)
{
	char *argv[] = { (char *)fixture("cpuburn"), "1.5", NULL };
	struct cpu_opts o = default_opts();
	struct run r = run_cpu(&o, false, argv, 0);
	uint64_t heavy = 0, light = 0, total = 0, ns = 0, truncated = 0;
	double expect, share;

	assert_int_equal(r.prof->ntypes, 2);
	assert_string_equal(r.prof->types[0].type, "samples");
	assert_string_equal(r.prof->types[1].unit, "nanoseconds");
	for (uint32_t i = 0; i < r.prof->nsamples; i++) {
		const struct prof_sample *s = &r.prof->samples[i];

		assert_int_equal(s->pid, r.pid);
		assert_int_equal(s->values[1], s->values[0] * cpu_period_ns(o.hz));
		total += s->values[0];
		ns += s->values[1];
		/* the leaf user frame: both burn in their own body */
		if (s->nlocs && !is_kernel(r.prof, s->locs[0])) {
			const char *leaf = loc_function(r.prof, s->locs[0]);

			if (leaf && !strcmp(leaf, "burn_heavy"))
				heavy += s->values[0];
			else if (leaf && !strcmp(leaf, "burn_light"))
				light += s->values[0];
			/* the caller chain is complete to main; or it says it is not: attached
			 * as it execs, the process's tables may be its parent's image's until the
			 * next tick, and the new program's code is then no known file's
			 * (unwind_unmapped), never walked on by guess */
			if (leaf && !strncmp(leaf, "burn_", 5) && has_function(r.prof, s, "[truncated]"))
				truncated += s->values[0];
			else if (leaf && !strncmp(leaf, "burn_", 5))
				assert_true(has_function(r.prof, s, "burn") &&
					    has_function(r.prof, s, "main"));
		}
	}
	assert_true(r.cpu_ms > 1000);
	expect = r.cpu_ms * o.hz / 1000.0;
	print_message("samples %llu, expected %.0f from cpu_ms %ld; heavy %llu light %llu; "
		      "%llu truncated (attached as it exec'd)\n",
		      (unsigned long long)total, expect, r.cpu_ms, (unsigned long long)heavy,
		      (unsigned long long)light, (unsigned long long)truncated);
	/* until the harness's next tick reloads it (no wake-up here): a few ticks' worth */
	assert_true(truncated * 20 < total);
	assert_true(total > expect * 0.95 && total < expect * 1.05);
	assert_true(heavy + light > total * 0.9);
	share = (double)heavy / (heavy + light);
	assert_true(share > 0.70 && share < 0.80);
	assert_int_equal(profile__drop(r.prof, "stack_table_full"), 0);
	assert_int_equal(profile__drop(r.prof, "count_table_full"), 0);
	assert_non_null(profile__find_process(r.prof, r.pid));
	assert_string_equal(profile__find_process(r.prof, r.pid)->comm, "cpuburn");
	profile__free(r.prof);
}

/* A process making syscalls: kernel frames first (leaf), its user frames after them. */
static void test_kernel_under_user(void **state)
{
	char *argv[] = { "/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=64", "count=1500000",
			 "status=none", NULL };
	struct cpu_opts o = default_opts();
	struct run r = run_cpu(&o, false, argv, 0);
	uint64_t total = 0, mixed = 0;

	for (uint32_t i = 0; i < r.prof->nsamples; i++) {
		const struct prof_sample *s = &r.prof->samples[i];
		bool k = s->nlocs && is_kernel(r.prof, s->locs[0]);
		bool u = s->nlocs && !is_kernel(r.prof, s->locs[s->nlocs - 1]);

		total += s->values[0];
		if (k && u)
			mixed += s->values[0];
		/* never a user frame below a kernel frame */
		for (uint32_t j = 1; j < s->nlocs; j++)
			assert_false(is_kernel(r.prof, s->locs[j]) &&
				     !is_kernel(r.prof, s->locs[j - 1]));
	}
	print_message("dd: %llu samples, %llu with kernel and user frames\n",
		      (unsigned long long)total, (unsigned long long)mixed);
	assert_true(total > 50);
	assert_true(mixed * 2 > total);
	profile__free(r.prof);
}

/* --per-thread: each sample ends (at its root) in a "burn-N [tid]" frame. */
static void test_per_thread(void **state)
{
	char *argv[] = { (char *)fixture("cpuburn"), "0.4", "2", NULL };
	struct cpu_opts o = default_opts();
	bool seen[3] = { false };
	struct run r;

	o.per_thread = true;
	r = run_cpu(&o, false, argv, 0);
	assert_true(r.prof->nsamples > 0);
	for (uint32_t i = 0; i < r.prof->nsamples; i++) {
		const struct prof_sample *s = &r.prof->samples[i];
		const char *root;
		int n;

		assert_true(s->nlocs > 0);
		root = loc_function(r.prof, s->locs[s->nlocs - 1]);
		assert_non_null(root);
		assert_non_null(strstr(root, " ["));
		if (sscanf(root, "burn-%d [", &n) == 1 && n >= 1 && n <= 2)
			seen[n] = true;
	}
	assert_true(seen[1] && seen[2]);
	profile__free(r.prof);
}

/* A table too small: samples lost are counted as drops and said, never silently. */
static void test_counts_full(void **state)
{
	char *argv[] = { "/bin/dd", "if=/dev/zero", "of=/dev/null", "bs=64", "count=500000",
			 "status=none", NULL };
	struct cpu_opts o = default_opts();
	struct run r;
	bool noted = false;

	o.max_stacks = 2;
	r = run_cpu(&o, false, argv, 0);
	assert_true(profile__drop(r.prof, "count_table_full") + profile__drop(r.prof, "stack_table_full") > 0);
	for (uint32_t i = 0; i < r.prof->nnotes; i++)
		if (strstr(r.prof->notes[i], "--max-stacks"))
			noted = true;
	assert_true(noted);
	profile__free(r.prof);
}

/* Every sample is counted twice in the kernel, apart: in its process's total and under its
 * stacks; each count that finds its table full is a drop. So the processes' totals and their
 * drop, process_totals_full, make as many samples as the stacks and count_table_full (but for a
 * sample counted while a take had read its key and not yet deleted it: a few). */
static void totals_match_stacks(const struct profile *p, uint64_t *procs_sum)
{
	uint64_t stacks = 0, totals = 0, v;

	for (uint32_t i = 0; i < p->nsamples; i++)
		stacks += p->samples[i].values[0];
	for (uint32_t i = 0; i < p->nprocesses; i++)
		if (prof_process__stat(&p->processes[i], "samples", &v))
			totals += v;
	totals += profile__drop(p, "process_totals_full");
	stacks += profile__drop(p, "count_table_full");
	print_message("totals and their drop %llu, stacks and theirs %llu\n",
		      (unsigned long long)totals, (unsigned long long)stacks);
	assert_true(totals + 5 >= stacks && stacks + 5 >= totals);
	*procs_sum = totals - profile__drop(p, "process_totals_full");
}

/* The processes' totals count every sample whatever the count table keeps: a table of 2 (the
 * counts refused) leaves the process's total its CPU time at the rate, as the stacks were
 * when nothing was refused (test_split_and_count). */
static void test_totals_exact(void **state)
{
	char *argv[] = { (char *)fixture("cpuburn"), "0.6", NULL };
	struct cpu_opts o = default_opts();
	const struct prof_process *pp;
	uint64_t total, sum, ns;
	double expect;
	struct run r;

	o.max_stacks = 2;
	r = run_cpu(&o, false, argv, 0);
	pp = profile__find_process(r.prof, r.pid);
	assert_non_null(pp);
	assert_true(prof_process__stat(pp, "samples", &total));
	assert_true(prof_process__stat(pp, "cpu_ns", &ns));
	assert_int_equal(ns, total * cpu_period_ns(o.hz));
	totals_match_stacks(r.prof, &sum);
	assert_int_equal(sum, total);
	expect = r.cpu_ms * o.hz / 1000.0;
	print_message("samples %llu, expected %.0f from cpu_ms %ld; count_table_full %llu\n",
		      (unsigned long long)total, expect, r.cpu_ms,
		      (unsigned long long)profile__drop(r.prof, "count_table_full"));
	assert_true(profile__drop(r.prof, "count_table_full") > 0);
	assert_true(total > expect * 0.95 && total < expect * 1.05);
	/* the report's total is the processes' */
	assert_int_equal(profile__type_total(r.prof, 0), total);
	profile__free(r.prof);
}

/* A totals table too small (1 process, -a: several are sampled): the samples in no process's
 * total are a drop, said in a note; they keep their stacks. */
static void test_totals_full(void **state)
{
	char *argv[] = { (char *)fixture("cpuburn"), "5", NULL };
	struct cpu_opts o = default_opts();
	bool noted = false;
	uint64_t sum;
	struct run r;

	o.test_max_procs = 1;
	r = run_cpu(&o, true, argv, 0.3);
	print_message("process_totals_full %llu\n",
		      (unsigned long long)profile__drop(r.prof, "process_totals_full"));
	assert_true(profile__drop(r.prof, "process_totals_full") > 0);
	totals_match_stacks(r.prof, &sum);
	for (uint32_t i = 0; i < r.prof->nnotes; i++)
		if (strstr(r.prof->notes[i], " in no process's totals (") &&
		    strstr(r.prof->notes[i], "the table of processes' totals (1) was full"))
			noted = true;
	assert_true(noted);
	profile__free(r.prof);
}

/*
 * The oracle for idle samples: the kernel's own cpu-clock sampling through perf_event_open,
 * one event per CPU over the same window, counting samples of pid 0. Whether an idle CPU is
 * sampled at all depends on the kernel and the hypervisor (on a firecracker VM here, one of two
 * idle vCPUs is never sampled, by perf either); what ebprof must do is keep what it is given.
 */
struct idle_oracle {
	int fd[CPU_MAX_CPUS];
	void *ring[CPU_MAX_CPUS];
	int ncpu;
};

#define ORACLE_PAGES 64

static void idle_oracle_open(struct idle_oracle *o, int hz)
{
	long page = sysconf(_SC_PAGESIZE);

	o->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	assert_true(o->ncpu > 0 && o->ncpu <= CPU_MAX_CPUS);
	for (int c = 0; c < o->ncpu; c++) {
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
			.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1000000000ull / hz,
			.sample_type = PERF_SAMPLE_TID, .disabled = 1,
		};

		o->fd[c] = syscall(__NR_perf_event_open, &a, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		assert_true(o->fd[c] >= 0);
		o->ring[c] = mmap(NULL, (ORACLE_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED,
				  o->fd[c], 0);
		assert_true(o->ring[c] != MAP_FAILED);
		ioctl(o->fd[c], PERF_EVENT_IOC_ENABLE, 0);
	}
}

/* Samples of pid 0 on all CPUs; closes the events. */
static uint64_t idle_oracle_close(struct idle_oracle *o)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t idle = 0;

	for (int c = 0; c < o->ncpu; c++) {
		struct perf_event_mmap_page *m = o->ring[c];
		const char *data = (const char *)m + page;
		uint64_t size = ORACLE_PAGES * page, head, tail = m->data_tail;

		ioctl(o->fd[c], PERF_EVENT_IOC_DISABLE, 0);
		head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			uint32_t pid;

			memcpy(&h, data + tail % size, sizeof(h));
			if (!h.size)
				break;
			/* PERF_RECORD_SAMPLE with PERF_SAMPLE_TID: u32 pid, u32 tid after the header;
			 * records do not wrap mid-field at 8-byte alignment */
			if (h.type == PERF_RECORD_SAMPLE) {
				memcpy(&pid, data + (tail + sizeof(h)) % size, sizeof(pid));
				if (pid == 0)
					idle++;
			}
			tail += h.size;
		}
		munmap(o->ring[c], (ORACLE_PAGES + 1) * page);
		close(o->fd[c]);
	}
	return idle;
}

/* -a: other processes and kernel threads; the idle task only with --idle. */
static void test_all_idle(void **state)
{
	char *argv[] = { (char *)fixture("cpuburn"), "5", NULL };
	char *sleeper[] = { "/bin/sleep", "5", NULL };
	struct cpu_opts o = default_opts();
	struct idle_oracle oracle;
	uint64_t idle = 0, kernel_idle;
	bool burn = false;
	struct run r;

	/* a machine with idle time: only a sleeper launched */
	o.idle = true;
	idle_oracle_open(&oracle, o.hz);
	r = run_cpu(&o, true, sleeper, 0.5);
	kernel_idle = idle_oracle_close(&oracle);
	for (uint32_t i = 0; i < r.prof->nsamples; i++)
		if (r.prof->samples[i].pid == 0)
			idle += r.prof->samples[i].values[0];
	print_message("idle samples: ebprof %llu, perf_event_open in the same window %llu\n",
		      (unsigned long long)idle, (unsigned long long)kernel_idle);
	/* the oracle's window is wider than ebprof's (it also spans loading the BPF objects): a
	 * good share of its idle samples, not an equal count */
	if (kernel_idle >= 20)
		assert_true(idle >= kernel_idle / 4);
	assert_int_equal(profile__drop(r.prof, "process_notes_lost"), 0);
	profile__free(r.prof);

	o.idle = false;
	r = run_cpu(&o, true, argv, 0.3);
	for (uint32_t i = 0; i < r.prof->nsamples; i++) {
		assert_int_not_equal(r.prof->samples[i].pid, 0);
		if (r.prof->samples[i].pid == (uint32_t)r.pid &&
		    has_function(r.prof, &r.prof->samples[i], "burn_heavy"))
			burn = true;
	}
	assert_true(burn);
	profile__free(r.prof);
}

static void test_parse_list(void **state)
{
	bool set[CPU_MAX_CPUS];

	assert_int_equal(cpu_parse_list("0,2-3", set), 0);
	assert_true(set[0] && !set[1] && set[2] && set[3] && !set[4]);
	assert_int_equal(cpu_parse_list("1\n", set), 0);
	assert_true(set[1]);
	assert_int_equal(cpu_parse_list("", set), -1);
	assert_int_equal(cpu_parse_list("3-1", set), -1);
	assert_int_equal(cpu_parse_list("0,", set), -1);
	assert_int_equal(cpu_parse_list("x", set), -1);
	assert_int_equal(cpu_parse_list("4096", set), -1);
	assert_int_equal(cpu_period_ns(99), 10101010);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_list),
		cmocka_unit_test(test_split_and_count),
		cmocka_unit_test(test_kernel_under_user),
		cmocka_unit_test(test_per_thread),
		cmocka_unit_test(test_counts_full),
		cmocka_unit_test(test_totals_exact),
		cmocka_unit_test(test_totals_full),
		cmocka_unit_test(test_all_idle),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_cpu_bpf: skipped: needs root (loads BPF programs, opens "
			"CPU-wide perf events)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
