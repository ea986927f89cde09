/* BPF-level tests of offcpu: the collector (offcpu_mode_ops) and its skeleton loaded in this
 * process, driven through the mode contract as the session drives it, attached to a fixture
 * (tests/fixtures/offsleep.c: COUNT naps of MS in nap()) held before its exec until the
 * attach is done, then read out into a profile. One semantic per case. Root required (run by
 * tests/run-e2e.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/mode.h"
#include "modes/offcpu/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

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

/* What the last run_offcpu's fixture measured around its naps (its "slept_ns"). */
static int64_t fixture_slept_ns;

/* Run offsleep COUNT MS under offcpu with options o: the child waits on a pipe before its exec
 * until it is attached, so every nap is seen. Returns the profile. */
static struct profile *run_offcpu(struct offcpu_opts *o, const char *count, const char *ms)
{
	char out[] = "/tmp/test_offcpu_bpf.XXXXXX", line[128];
	FILE *f;
	struct log_ctx lc = { .prog = "test_offcpu_bpf",
			      .verbose = getenv("TEST_VERBOSE") ? 2 : 0 };
	struct symbolizer_opts so = { .no_lines = true };
	struct session_env env = { .lc = &lc };
	char *argv[] = { (char *)fixture("offsleep"), (char *)count, (char *)ms, NULL };
	int go[2], status = -1, null;
	uint64_t t0;
	pid_t pid;
	void *m;
	char c;

	env.prof = profile__new("offcpu");
	env.sym = symbolizer__new(&so);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	assert_int_equal(pipe(go), 0);
	null = mkstemp(out);
	assert_true(null >= 0);
	close(null);
	env.start_ns = mono_ns();
	m = offcpu_mode_ops.open(&env, o);
	assert_non_null(m);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		null = open(out, O_WRONLY);
		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	assert_int_equal(offcpu_mode_ops.attach(m, pid, MODE_ATTACH_PID, &status), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	t0 = mono_ns();
	while (waitpid(pid, &status, WNOHANG) != pid) {
		usleep(20000);
		offcpu_mode_ops.tick(m, mono_ns() - t0, true);
	}
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	offcpu_mode_ops.stop(m);
	offcpu_mode_ops.finalize(m, pid, false);
	offcpu_mode_ops.finish(m);
	offcpu_mode_ops.detach(m);
	offcpu_mode_ops.close(m);
	symbolizer__free(env.sym);
	fixture_slept_ns = -1;
	f = fopen(out, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "slept_ns %" SCNd64, &fixture_slept_ns);
	fclose(f);
	unlink(out);
	assert_true(fixture_slept_ns > 0);
	return env.prof;
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

/* (time, waits) of the samples through fn */
static void through(const struct profile *p, const char *fn, int64_t *ns, int64_t *waits)
{
	*ns = *waits = 0;
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!has_function(p, s, fn))
			continue;
		*ns += s->values[0];
		*waits += s->values[1];
	}
}

static const char *info(const struct profile *p, const char *key)
{
	for (uint32_t i = 0; i < p->ninfo; i++)
		if (!strcmp(p->info[i].key, key))
			return p->info[i].value;
	return NULL;
}

/* Every nap is one wait of at least its length and at most what the fixture measured around
 * it, its leaf the scheduler's. The child's read of the go pipe, asleep when it was attached,
 * is the one wait begun before the start: under the kernel stack it slept in (the kernel
 * leaves the scheduler's own functions out of a sleeping task's stack) and [user stack not
 * seen]. */
static void test_naps(void **state)
{
	struct offcpu_opts o;
	struct profile *p;
	int64_t ns, waits, begun_ns, begun;

	offcpu_default_opts(&o);
	/* sleeps only: a preemption inside nap (a loaded machine) is one more wait under it */
	o.states = OFFCPU_STATE_S;
	p = run_offcpu(&o, "10", "20");
	through(p, "nap", &ns, &waits);
	assert_int_equal(waits, 10);
	assert_true(ns >= 200000000);
	assert_true(ns <= fixture_slept_ns);
	through(p, "[user stack not seen]", &begun_ns, &begun);
	assert_true(begun <= 1);
	assert_int_equal(begun, atoi(info(p, "begun_before_start") ?: "0"));
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_location *leaf = &p->locations[p->samples[i].locs[0]];

		if (has_function(p, &p->samples[i], "[user stack not seen]")) {
			assert_true(has_function(p, &p->samples[i], "anon_pipe_read") ||
				    has_function(p, &p->samples[i], "pipe_read"));
			continue;
		}
		assert_string_equal(p->functions[leaf->lines[0].function].name, "__schedule");
	}
	assert_int_equal(p->ngroups, 1);
	profile__free(p);
}

/* A switch-in the kernel does not report (it reports none while some tasks run, e.g. this
 * VM's PID 1: the switch from one to a traced thread is never seen), here every third one
 * ignored by the program: each wait is still counted once, its end taken from the thread's CPU
 * time at its next switch-out, so the naps' time stays within what the fixture measured; each
 * such switch-in is a drop. */
static void test_unseen_switch_in(void **state)
{
	struct offcpu_opts o;
	struct profile *p;
	int64_t ns, waits;

	offcpu_default_opts(&o);
	o.test_hide_switch_in = 3;
	/* sleeps only: a preemption inside nap (a loaded machine) is one more wait under it */
	o.states = OFFCPU_STATE_S;
	p = run_offcpu(&o, "10", "20");
	through(p, "nap", &ns, &waits);
	print_message("nap: %" PRId64 " waits, %" PRId64 " ns; the fixture measured %" PRId64
		      " ns; %" PRId64 " switch-ins unseen\n", waits, ns, fixture_slept_ns,
		      profile__drop(p, "switch_in_unseen"));
	assert_int_equal(waits, 10);
	assert_true(ns >= 200000000);
	assert_true(ns <= fixture_slept_ns);
	/* the naps' 10 switch-ins and the exec's: a third of them at least */
	assert_true(profile__drop(p, "switch_in_unseen") >= 3);
	profile__free(p);
}

/* --state D: an interruptible sleep is not counted, and nothing else of the fixture is D. */
static void test_state_filter(void **state)
{
	struct offcpu_opts o;
	struct profile *p;
	int64_t ns, waits;

	offcpu_default_opts(&o);
	o.states = OFFCPU_STATE_D;
	p = run_offcpu(&o, "5", "10");
	through(p, "nap", &ns, &waits);
	assert_int_equal(waits, 0);
	assert_string_equal(info(p, "states"), "D");
	profile__free(p);
}

/* --min-block above the naps: each one is filtered, and counted as such. */
static void test_min_block(void **state)
{
	struct offcpu_opts o;
	struct profile *p;
	int64_t ns, waits;

	offcpu_default_opts(&o);
	o.min_ns = 1000000000;
	p = run_offcpu(&o, "5", "10");
	through(p, "nap", &ns, &waits);
	assert_int_equal(waits, 0);
	assert_true(strtoull(info(p, "filtered"), NULL, 10) >= 5);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_naps),
		cmocka_unit_test(test_unseen_switch_in),
		cmocka_unit_test(test_state_filter),
		cmocka_unit_test(test_min_block),
	};

	if (geteuid() != 0) {
		print_message("test_offcpu_bpf: needs root (loads BPF programs): skipped\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
