/* BPF-level tests of stacks: the collector (through its struct mode_ops) and its skeleton
 * loaded in this process, attached to this process itself, which then makes a known number of
 * syscalls, forks and calls; the profile read out must count each event exactly and keep the
 * events apart (each attachment's BPF cookie). Root required (run by tests/run-e2e.sh). */
#include <errno.h>
#include <limits.h>
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

/* Trace this process for the events while work() runs; the profile read out. */
static struct profile *trace_self(const char *const *specs, int n, void (*work)(void))
{
	struct log_ctx lc = { .prog = "test_stacks_bpf" };
	struct symbolizer_opts syo = { .no_lines = true };
	struct stacks_opts *o = calloc(1, sizeof(*o));
	struct session_env env = { .lc = &lc };
	const struct mode_ops *ops = &stacks_mode_ops;
	char why[256];
	void *m;

	assert_non_null(o);
	o->max_stacks = 1024;
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
	work();
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
	struct profile *p = trace_self(ev, 2, getppid_17);

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
	struct profile *p = trace_self(ev, 2, fork_5);

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
	p = trace_self(ev, 1, call_9);
	assert_int_equal(call_count(p, spec), 9);
	/* the caller comes from the return address at the stack pointer */
	assert_int_equal(events_at(p, spec, "call_9"), 9);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscall_enter_and_exit),
		cmocka_unit_test(test_raw_tracepoints_apart),
		cmocka_unit_test(test_uprobe_with_caller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
