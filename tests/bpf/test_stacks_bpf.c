/* BPF-level tests of stacks: the collector (through its struct mode_ops) and its skeleton
 * loaded in this process, attached to this process itself, which then makes a known number of
 * syscalls, forks and calls; the profile read out must count each event exactly and keep the
 * events apart (each attachment's BPF cookie). Root required (run by tests/run-e2e.sh). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "modes/stacks/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

static volatile int sink;

__attribute__((noinline)) void stacks_probe_target(int x)
{
	sink += x;
	asm volatile("" : : : "memory");
}

static uint64_t call_count(const struct profile *p, const char *event)
{
	struct prof_process *pp = profile__find_process(p, getpid());
	uint64_t v = 0;

	return pp && prof_process__call(pp, event, &v) ? v : 0;
}

/* Sum of the samples whose leaf frame is the event and one of whose frames is fn (NULL: any). */
static int64_t events_at(const struct profile *p, const char *event, const char *fn)
{
	int64_t sum = 0;
	char buf[256];

	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		bool leaf, found = !fn;

		if (!s->nlocs)
			continue;
		leaf = !strcmp(profile__frame_name(p, &p->locations[s->locs[0]], 0, buf,
						   sizeof(buf)), event);
		for (uint32_t j = 1; j < s->nlocs && !found; j++) {
			const struct prof_location *l = &p->locations[s->locs[j]];

			for (uint32_t k = 0; k < l->nlines && !found; k++)
				found = !strcmp(profile__frame_name(p, l, k, buf, sizeof(buf)), fn);
		}
		if (leaf && found)
			sum += s->values[0];
	}
	return sum;
}

/* Trace this process for the events while work() runs (with the mode's ops and state, for a
 * test that drives its ticks: work_m); the profile read out. */
static struct profile *trace_self(const char *const *specs, int n, uint32_t max_stacks,
				  void (*work)(void), void (*work_m)(const struct mode_ops *, void *))
{
	struct log_ctx lc = { .prog = "test_stacks_bpf" };
	struct symbolizer_opts syo = { .no_lines = true };
	struct stacks_opts *o = calloc(1, sizeof(*o));
	struct session_env env = { .lc = &lc };
	const struct mode_ops *ops = &stacks_mode_ops;
	char why[256];
	void *m;

	assert_non_null(o);
	o->max_stacks = max_stacks;
	for (int i = 0; i < n; i++) {
		assert_int_equal(stacks_event__parse(&o->events[i], specs[i], why, sizeof(why)), 0);
		o->nevents++;
	}
	assert_int_equal(stacks_opts__resolve(o, &lc), 0);
	env.prof = profile__new("stacks");
	env.sym = symbolizer__new(&syo);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	m = ops->open(&env, o);
	assert_non_null(m);
	assert_int_equal(ops->attach(m, getpid(), MODE_ATTACH_PID, NULL), 0);
	if (work)
		work();
	else
		work_m(ops, m);
	ops->stop(m);
	ops->finalize(m, getpid(), false);
	ops->finish(m);
	ops->detach(m);
	ops->close(m);
	symbolizer__free(env.sym);
	stacks_opts__free(o);
	free(o);
	return env.prof;
}


static void getppid_17(void)
{
	for (int i = 0; i < 17; i++)
		syscall(SYS_getppid);
}

static void test_syscall_enter_and_exit(void **state)
{
	static const char *const ev[] = { "syscalls:sys_enter_getppid",
					  "syscalls:sys_exit_getppid" };
	struct profile *p = trace_self(ev, 2, 1024, getppid_17, NULL);

	assert_int_equal(call_count(p, ev[0]), 17);
	assert_int_equal(call_count(p, ev[1]), 17);
	/* the caller of libc's syscall() (no frame pointer there) is in the stack */
	assert_int_equal(events_at(p, ev[0], "trace_self"), 17);
	/* the mode's reasons, the unwinder's seven (core/unwind.c) and the symbolizer's four,
	 * unwind_outside_code, unwind_fp_broken, unwind_no_mappings and unwind_ambiguous_code
	 * (core/stacks.c) */
	assert_int_equal(p->ndrops, STACKS_DROP__COUNT + 11);
	for (uint32_t i = 0; i < p->ndrops; i++)
		assert_int_equal(p->drops[i].value, 0);
	profile__free(p);
}

static void fork_5(void)
{
	for (int i = 0; i < 5; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		waitpid(c, NULL, 0);
	}
}

/* Two raw tracepoints that fire together: the cookies keep them apart. */
static void test_raw_tracepoints_apart(void **state)
{
	static const char *const ev[] = { "sched:sched_process_fork", "task:task_newtask" };
	struct profile *p = trace_self(ev, 2, 1024, fork_5, NULL);

	assert_int_equal(call_count(p, ev[0]), 5);
	assert_int_equal(call_count(p, ev[1]), 5);
	assert_int_equal(events_at(p, ev[0], "kernel_clone"), 5);
	profile__free(p);
}

static void call_9(void)
{
	for (int i = 0; i < 9; i++)
		stacks_probe_target(i);
}

static void test_uprobe_with_caller(void **state)
{
	char exe[PATH_MAX], spec[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *ev[1] = { spec };
	struct profile *p;

	assert_true(n > 0);
	exe[n] = '\0';
	snprintf(spec, sizeof(spec), "u:%s:stacks_probe_target", exe);
	p = trace_self(ev, 1, 1024, call_9, NULL);
	assert_int_equal(call_count(p, spec), 9);
	/* the caller comes from the return address at the stack pointer */
	assert_int_equal(events_at(p, spec, "call_9"), 9);
	profile__free(p);
}

/* The take race (core/collector.c, a spill): a thread makes TAKE_CALLS system calls at full
 * speed on one CPU, from TAKE_DEPTHS call depths (as many stacks, so that the keys a spill
 * watches come back three quarters of --max-stacks within a few calls), while this one ticks
 * the mode as fast as it can on the other: a spill, which takes the count table out of the
 * kernel, every few calls. Every call must be in exactly one take. Before the tables were
 * double-buffered (bpf/lib/take.bpf.h) a program that looked its row up before a take's copy
 * and added to it after lost that add: 30-112 of 200,000 lost in a run here (10 runs, over
 * 60-108 thousand ticks). Each spill now waits for a grace period (~20 ms), so a quick run
 * makes a few hundred at most; EBPROF_TAKE_CALLS makes a long one (30,000,000 calls: 0 lost).
 * The calls whose stack a spill's reclaim deleted under them ("[stack lost]") are printed: 0
 * in every run so far, old code and new (core/stacks.h: stack_map__reclaim). */
#define TAKE_CALLS 200000
#define TAKE_DEPTHS 14

/* EBPROF_TAKE_CALLS: more calls (and takes) than a quick run makes, to measure how rare a loss
 * is: each take now waits for an RCU grace period, so the quick run makes few of them */
static long take_calls(void)
{
	const char *e = getenv("EBPROF_TAKE_CALLS");

	return e && atol(e) > 0 ? atol(e) : TAKE_CALLS;
}

static volatile bool take_done;

static __attribute__((noinline)) void getppid_at(int depth)
{
	if (depth > 0)
		getppid_at(depth - 1);
	else
		syscall(SYS_getppid);
	asm volatile("" : : : "memory");
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* one CPU only: no matter */
}

static void *take_caller(void *arg)
{
	(void)arg;
	pin(0);
	for (long i = 0, n = take_calls(); i < n; i++)
		getppid_at(i % TAKE_DEPTHS);
	take_done = true;
	return NULL;
}

static unsigned take_ticks;

static void calls_while_ticking(const struct mode_ops *ops, void *m)
{
	pthread_t t;

	take_done = false;
	take_ticks = 0;
	assert_int_equal(pthread_create(&t, NULL, take_caller, NULL), 0);
	pin(1);
	while (!take_done) {
		ops->tick(m, 0, false);
		take_ticks++;
	}
	pthread_join(t, NULL);
}

/* The samples with a "[stack lost]" frame (core/stacks.c: a count whose stack was not in the
 * stacks map when it was read). */
static int64_t stacks_lost(const struct profile *p)
{
	int64_t sum = 0;
	char buf[256];

	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		bool lost = false;

		for (uint32_t j = 0; j < s->nlocs && !lost; j++) {
			const struct prof_location *l = &p->locations[s->locs[j]];

			for (uint32_t k = 0; k < l->nlines && !lost; k++)
				lost = strstr(profile__frame_name(p, l, k, buf, sizeof(buf)),
					      "stack lost") != NULL;
		}
		if (lost)
			sum += s->values[0];
	}
	return sum;
}

static void test_spills_lose_nothing(void **state)
{
	static const char *const ev[] = { "syscalls:sys_enter_getppid" };
	struct profile *p;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t full = 0;

	(void)state;
	if (cpus < 2) {
		fprintf(stderr, "test_stacks_bpf: take race test skipped: needs 2 CPUs (%ld)\n",
			cpus);
		skip();
	}
	p = trace_self(ev, 1, 16, NULL, calls_while_ticking);
	fprintf(stderr, "take race: %u ticks, %lld of %ld calls counted, %llu in the totals, %lld "
		"without their stack\n", take_ticks, (long long)events_at(p, ev[0], NULL),
		take_calls(), (unsigned long long)call_count(p, ev[0]), (long long)stacks_lost(p));
	for (uint32_t i = 0; i < p->ndrops; i++) {
		if (p->drops[i].value)
			fprintf(stderr, "take race: drop %s %llu\n", p->drops[i].key,
				(unsigned long long)p->drops[i].value);
		if (!strcmp(p->drops[i].key, "counts_full"))
			full = (int64_t)p->drops[i].value;
	}
	/* a call the count table had no room for (its 16 keys: the 14 stacks, and the keys of
	 * those whose stack the stacks map, emptied at each spill, refused) is a counted drop;
	 * none in a quick run, 119,237 of 30,000,000 in a long one */
	assert_int_equal(events_at(p, ev[0], NULL) + full, take_calls());
	assert_int_equal((int64_t)call_count(p, ev[0]) + full, take_calls());
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscall_enter_and_exit),
		cmocka_unit_test(test_raw_tracepoints_apart),
		cmocka_unit_test(test_uprobe_with_caller),
		cmocka_unit_test(test_spills_lose_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
