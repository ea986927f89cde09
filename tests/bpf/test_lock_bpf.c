/* BPF-level tests of lock: the collector (lock_mode_ops) and its skeleton loaded in this
 * process, driven through the mode contract as the session drives it, attached to a forked
 * child with known futex calls (waits another thread wakes, waits that time out, calls that find
 * another value: EAGAIN) or with threads contending on its mmap_lock, then read out into a
 * profile: the waits exactly, by kind, each under the child's stack; EAGAIN calls apart and in
 * no delay; timed-out waits apart, as timeouts, in no contention or delay; --kernel-only and
 * --user-only keep to their side; without the lock tracepoints (as on Linux before 5.19) open
 * fails when kernel locks were asked for, and traces futex waits alone otherwise; a wait left
 * open at the end is waiting_at_end while its thread is still in it, end_unseen otherwise; more
 * locks over a run than the per-lock table holds are all in the summary, each with its own
 * waits (the ticks take the table out as it fills). Root required (run by tests/run-e2e.sh).
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/mode.h"
#include "modes/lock/collect.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"

/* In a child: where a byte comes back once the test ticked after one it wrote to `ready` */
static int resume_fd = -1;
static uint32_t word = 1;
static uint32_t woke;			/* the woken waits' futex */
static int round_, woken_done;		/* woken_waiter's rounds begun; it is done (1: ok) */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* 3 waits on `woke`, each woken by the other thread (a 10 s timeout never reached) */
__attribute__((noinline)) static void *woken_waiter(void *arg)
{
	struct timespec ten_s = { 10, 0 };
	int ok = 1;

	for (int i = 0; i < 3 && ok; i++) {
		__atomic_store_n(&woke, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&round_, i + 1, __ATOMIC_SEQ_CST);
		ok = !syscall(SYS_futex, &woke, FUTEX_WAIT_PRIVATE, 1, &ten_s);
	}
	__atomic_store_n(&woken_done, ok ? 1 : 2, __ATOMIC_SEQ_CST);
	return arg;
}

/* Whether thread tid of this process sleeps in futex(2) on uaddr (/proc/self/task/TID/stat's
 * state S and .../syscall's number and first argument): its wait has begun */
static bool in_wait(pid_t tid, const void *uaddr)
{
	char path[64], buf[512], *p;
	unsigned long long nr = 0, a0 = 0;
	bool sleeping;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	sleeping = p && p[1] == ' ' && p[2] == 'S';
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu %llx", &nr, &a0) != 2)
		nr = 0;
	if (f)
		fclose(f);
	return sleeping && nr == SYS_futex && a0 == (uintptr_t)uaddr;
}

static pid_t waiter_tid;

static bool task_there(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	return !access(path, F_OK);
}

static void *start_waiter(void *arg)
{
	__atomic_store_n(&waiter_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	return woken_waiter(arg);
}

/* 40 calls that find another value, 4 waits that time out after 1 ms, 3 waits that another
 * thread wakes once the waiter sleeps (not joined: a join could wait too) */
__attribute__((noinline)) static int futex_calls(void)
{
	struct timespec one_ms = { 0, 1000000 };
	pthread_t t;

	for (int i = 0; i < 40; i++)
		if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL) != -1 || errno != EAGAIN)
			return 1;
	for (int i = 0; i < 4; i++)
		if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, &one_ms) != -1 ||
		    errno != ETIMEDOUT)
			return 1;
	if (pthread_create(&t, NULL, start_waiter, NULL))
		return 1;
	for (int i = 0; i < 3; i++) {
		int n = 0;
		pid_t tid;

		while (!(tid = __atomic_load_n(&waiter_tid, __ATOMIC_SEQ_CST)) ||
		       __atomic_load_n(&round_, __ATOMIC_SEQ_CST) != i + 1 || !in_wait(tid, &woke))
			if (++n > 10000 || __atomic_load_n(&woken_done, __ATOMIC_SEQ_CST))
				return 1;
			else
				usleep(1000);
		__atomic_store_n(&woke, 0, __ATOMIC_SEQ_CST);
		if (syscall(SYS_futex, &woke, FUTEX_WAKE_PRIVATE, 1) != 1)
			return 1;
	}
	for (int n = 0; !__atomic_load_n(&woken_done, __ATOMIC_SEQ_CST); n++)
		if (n > 10000)
			return 1;
		else
			usleep(1000);
	/* gone before the child goes on: not a thread still waiting at the end */
	for (int n = 0; task_there(waiter_tid); n++)
		if (n > 10000)
			return 1;
		else
			usleep(1000);
	return woken_done != 1;
}

/* MANY_LOCKS futexes, each waited on MANY_ROUNDS times by a thread that the other wakes (a
 * contention each), MANY_BATCH locks between two of the test's ticks */
#define MANY_LOCKS	48
#define MANY_ROUNDS	2
#define MANY_BATCH	2
static uint32_t many[MANY_LOCKS];
static int many_done, many_bad;		/* waits ended; one not ended by a wake */
static pid_t many_tid;

__attribute__((noinline)) static void *many_waiter(void *arg)
{
	__atomic_store_n(&many_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (int i = 0; i < MANY_LOCKS; i++)
		for (int r = 0; r < MANY_ROUNDS; r++) {
			if (syscall(SYS_futex, &many[i], FUTEX_WAIT_PRIVATE, 0, NULL))
				__atomic_store_n(&many_bad, 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&many_done, 1, __ATOMIC_SEQ_CST);
		}
	return arg;
}

static int many_locks(int ready)
{
	pthread_t t;
	char c;

	if (pthread_create(&t, NULL, many_waiter, NULL))
		return 1;
	for (int i = 0; i < MANY_LOCKS; i++) {
		for (int r = 0; r < MANY_ROUNDS; r++) {
			int n = 0;

			/* FUTEX_WAKE wakes one only once it waits */
			while (syscall(SYS_futex, &many[i], FUTEX_WAKE_PRIVATE, 1) != 1)
				if (++n > 100000 || __atomic_load_n(&many_bad, __ATOMIC_SEQ_CST))
					return 1;
				else
					usleep(100);
			/* its wait counted (at its return) before the next begins */
			for (n = 0; __atomic_load_n(&many_done, __ATOMIC_SEQ_CST) !=
				    i * MANY_ROUNDS + r + 1; n++)
				if (n > 100000)
					return 1;
				else
					usleep(100);
		}
		if ((i + 1) % MANY_BATCH == 0 &&
		    (write(ready, "x", 1) != 1 || read(resume_fd, &c, 1) != 1))
			return 1;
	}
	/* gone before the child goes on (not joined: a join could wait too) */
	for (int n = 0; task_there(many_tid); n++)
		if (n > 10000)
			return 1;
		else
			usleep(1000);
	return many_bad;
}

static void *mapper(void *arg)
{
	for (int i = 0; i < 5000; i++) {
		char *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);

		if (p == MAP_FAILED)
			return arg;
		p[0] = 1;
		munmap(p, 65536);
	}
	return NULL;
}

__attribute__((noinline)) static int mmap_threads(void)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, mapper, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Whether process pid is asleep (/proc/PID/stat's state S), waited for up to 10 s */
static bool asleep(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (int i = 0; i < 1000; i++) {
		f = fopen(path, "r");
		p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (p && p[1] == ' ' && p[2] == 'S')
			return true;
		usleep(10000);
	}
	return false;
}

/* Children run() forks, each running work (not alive: 1 or 2) */
static int nchild = 1;
static pid_t children[2];

/* Open lock with o, fork a child that waits for a byte, then runs work; attach, let it go.
 * Not alive: tick until it exits, read everything out; each byte work writes to fd `ready` is
 * answered, after one more tick, by a byte on resume_fd (a child that paces itself by the
 * ticks). Alive: work writes a byte to fd `ready`
 * and then blocks for good; tick until the byte comes and the child sleeps, stop and read
 * everything out while it is still there; then kill it. NULL when open failed. */
static struct profile *run(struct lock_opts *o, int (*work)(int ready), bool alive)
{
	struct log_ctx lc = { .prog = "test_lock_bpf", .verbose = getenv("TEST_VERBOSE") ? 2 : 0 };
	struct symbolizer_opts so = { .no_lines = true };
	struct session_env env = { .lc = &lc };
	int go[2], ready[2], resume[2], status = -1, left = nchild;
	char c;
	void *m;
	pid_t pid = -1;

	env.prof = profile__new("lock");
	env.sym = symbolizer__new(&so);
	assert_non_null(env.prof);
	assert_non_null(env.sym);
	env.start_ns = mono_ns();
	m = lock_mode_ops.open(&env, o);
	if (!m) {
		profile__free(env.prof);
		symbolizer__free(env.sym);
		return NULL;
	}
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(resume), 0);
	assert_true(nchild == 1 || (!alive && nchild == 2));
	for (int i = 0; i < nchild; i++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(go[1]);
			close(ready[0]);
			close(resume[1]);
			resume_fd = resume[0];
			if (read(go[0], &c, 1) != 1)
				_exit(2);
			_exit(work(ready[1]));
		}
		children[i] = pid;
		assert_int_equal(lock_mode_ops.attach(m, pid, MODE_ATTACH_PID, &status), 0);
	}
	close(go[0]);
	close(ready[1]);
	close(resume[0]);
	for (int i = 0; i < nchild; i++)
		assert_int_equal(write(go[1], "x", 1), 1);
	close(go[1]);
	if (alive) {
		lock_mode_ops.tick(m, mono_ns() - env.start_ns, false);
		assert_int_equal(read(ready[0], &c, 1), 1);
		/* after the byte, the child sleeps only in its last call */
		assert_true(asleep(pid));
		lock_mode_ops.tick(m, mono_ns() - env.start_ns, false);
	} else {
		while (left) {
			struct pollfd pf = { .fd = ready[0], .events = POLLIN };

			lock_mode_ops.tick(m, mono_ns() - env.start_ns, false);
			if (waitpid(-1, &status, WNOHANG) > 0) {
				assert_true(WIFEXITED(status));
				assert_int_equal(WEXITSTATUS(status), 0);
				left--;
				continue;
			}
			if (poll(&pf, 1, 10) != 1)
				continue;
			if ((pf.revents & POLLIN) && read(ready[0], &c, 1) == 1) {
				lock_mode_ops.tick(m, mono_ns() - env.start_ns, false);
				assert_int_equal(write(resume[1], "x", 1), 1);
			} else {
				usleep(10000);	/* the children closed it: they are exiting */
			}
		}
	}
	close(ready[0]);
	close(resume[1]);
	lock_mode_ops.stop(m);
	for (int i = 0; !alive && i < nchild; i++)
		lock_mode_ops.finalize(m, children[i], false);
	lock_mode_ops.finish(m);
	lock_mode_ops.detach(m);
	lock_mode_ops.close(m);
	if (alive) {
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	symbolizer__free(env.sym);
	return env.prof;
}

static int (*plain_work)(void);

static int call_plain(int ready)
{
	(void)ready;
	return plain_work();
}

/* run() of a child that runs work and exits */
static struct profile *run_child(struct lock_opts *o, int (*work)(void))
{
	plain_work = work;
	return run(o, call_plain, false);
}

static struct profile *run_alive(struct lock_opts *o, int (*work)(int ready))
{
	return run(o, work, true);
}

static struct lock_opts opts(bool kernel, bool user)
{
	return (struct lock_opts){ .max_stacks = 4096, .max_locks = 4096, .kernel = kernel,
				   .user = user };
}

/* 4 timed waits, then blocks in a futex wait that nothing wakes */
static int futex_then_block(int ready)
{
	uint32_t stay = 0;

	if (futex_calls() || write(ready, "r", 1) != 1)
		return 1;
	syscall(SYS_futex, &stay, FUTEX_WAIT_PRIVATE, 0, NULL);
	return 1;
}

/* 4 timed waits, then blocks in pause(2), no futex */
static int futex_then_pause(int ready)
{
	if (futex_calls() || write(ready, "r", 1) != 1)
		return 1;
	pause();
	return 1;
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

static const char *leaf(const struct profile *p, const struct prof_sample *s)
{
	const struct prof_location *l = &p->locations[s->locs[0]];

	return p->functions[l->lines[0].function].name;
}

/* this program's file name, as the symbolizer names its module */
static const char *self_name(void)
{
	static char path[256];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	path[n > 0 ? n : 0] = 0;
	return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

static const char *group_label(const struct prof_group *g, const char *k)
{
	const char *v = prof_group__label(g, k);

	return v ? v : "";
}

static int64_t group_stat(const struct prof_group *g, const char *name)
{
	for (uint32_t i = 0; i < g->nstats; i++)
		if (!strcmp(g->stats[i].name, name))
			return g->stats[i].value;
	fail_msg("no stat %s", name);
	return -1;
}

static uint64_t proc_stat(const struct profile *p, pid_t pid, const char *name)
{
	const struct prof_process *proc = profile__find_process(p, pid);
	uint64_t v = 0;

	return proc && prof_process__stat(proc, name, &v) ? v : 0;
}

static bool has_note(const struct profile *p, const char *text)
{
	for (uint32_t i = 0; i < p->nnotes; i++)
		if (strstr(p->notes[i], text))
			return true;
	return false;
}

/* The futex waits of futex_calls: on `word` 4 that timed out (timeouts, no contention) and 40
 * that did not wait; on `woke` 3 that the other thread woke (contentions), exactly. */
static void test_futex_waits(void **state)
{
	struct lock_opts o = opts(true, true);
	struct profile *p = run_child(&o, futex_calls);
	char want[320], want_woke[320], name[320];
	int64_t v[4] = { 0 }, w[4] = { 0 };
	int found = 0;

	assert_non_null(p);
	/* the statics named by their symbols, in this program */
	snprintf(want, sizeof(want), "word in %s (futex_wait)", self_name());
	snprintf(want_woke, sizeof(want_woke), "woke in %s (futex_wait)", self_name());
	assert_int_equal(p->ntypes, 4);
	assert_string_equal(p->types[2].type, "timeouts");
	assert_string_equal(p->types[3].type, "timeout_delay");
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		bool mine = !strcmp(leaf(p, s), want);

		if (!mine && strcmp(leaf(p, s), want_woke))
			continue;
		for (int k = 0; k < 4; k++)
			(mine ? v : w)[k] += s->values[k];
		if (mine)
			assert_true(has_function(p, s, "main") || has_function(p, s, "run_child"));
		else
			assert_true(has_function(p, s, "woken_waiter"));
	}
	/* the timed-out waits: apart, in no contention or delay */
	assert_int_equal(v[0], 0);
	assert_int_equal(v[1], 0);
	assert_int_equal(v[2], 4);
	assert_true(v[3] >= 4 * 1000000);
	/* the woken ones: contentions */
	assert_int_equal(w[0], 3);
	assert_true(w[1] > 0);
	assert_int_equal(w[2], 0);
	assert_int_equal(w[3], 0);
	snprintf(want, sizeof(want), "%p", (void *)&word);
	snprintf(want_woke, sizeof(want_woke), "%p", (void *)&woke);
	for (uint32_t g = 0; g < p->ngroups; g++) {
		const struct prof_group *gr = &p->groups[g];
		bool mine = !strcmp(group_label(gr, "address"), want);

		if (!mine && strcmp(group_label(gr, "address"), want_woke))
			continue;
		found++;
		snprintf(name, sizeof(name), "%s in %s", mine ? "word" : "woke", self_name());
		assert_string_equal(group_label(gr, "lock"), name);
		assert_string_equal(group_label(gr, "class"), "futex_wait");
		assert_int_equal(group_stat(gr, "contentions"), mine ? 0 : 3);
		assert_int_equal(group_stat(gr, "delay_ns"), mine ? 0 : w[1]);
		assert_int_equal(group_stat(gr, "nowait"), mine ? 40 : 0);
		assert_int_equal(group_stat(gr, "timeouts"), mine ? 4 : 0);
		assert_int_equal(group_stat(gr, "timeout_delay_ns"), mine ? v[3] : 0);
		if (mine)
			assert_int_equal(group_stat(gr, "delay_max_ns"), 0);
		else
			assert_true(group_stat(gr, "delay_max_ns") > 0);
	}
	assert_int_equal(found, 2);
	assert_string_equal(profile__info(p, "futex_nowait"), "40");
	assert_string_equal(profile__info(p, "futex_timeouts"), "4");
	assert_string_equal(profile__info(p, "futex_waits"), "3");
	assert_true(has_note(p, "4 futex waits ended by their timeout"));
	profile__free(p);
}

/* One call that finds another value and one wait that times out */
__attribute__((noinline)) static int one_futex_each(void)
{
	struct timespec one_ms = { 0, 1000000 };

	if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL) != -1 || errno != EAGAIN)
		return 1;
	if (syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1, &one_ms) != -1 || errno != ETIMEDOUT)
		return 1;
	return 0;
}

/* A note's count of one is one of a thing: it said "1 futex waits ended by their timeout" */
static void test_notes_of_one(void **state)
{
	struct lock_opts o = opts(true, true);
	struct profile *p = run_child(&o, one_futex_each);

	assert_non_null(p);
	assert_string_equal(profile__info(p, "futex_nowait"), "1");
	assert_string_equal(profile__info(p, "futex_timeouts"), "1");
	assert_true(has_note(p, "1 futex wait ended by its timeout (ETIMEDOUT: nobody woke it;"));
	assert_true(has_note(p, "; 1 call returned EAGAIN at once (the futex's value had "
			     "changed: no wait) and is counted apart"));
	profile__free(p);
}

static void test_kernel_only(void **state)
{
	struct lock_opts o = opts(true, false);
	struct profile *p = run_child(&o, mmap_threads);
	int64_t rwsem = 0;

	assert_non_null(p);
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const char *l = leaf(p, &p->samples[i]);

		assert_null(strstr(l, "futex"));
		if (strstr(l, "mmap_lock of ") && strstr(l, "(rwsem:"))
			rwsem += p->samples[i].values[0];
	}
	/* four threads mapping and unmapping 5000 times each contend on their mmap_lock */
	assert_true(rwsem > 0);
	assert_string_equal(profile__info(p, "futex_waits"), "0");
	profile__free(p);
}

static void test_user_only(void **state)
{
	struct lock_opts o = opts(false, true);
	struct profile *p = run_child(&o, mmap_threads);

	assert_non_null(p);
	assert_string_equal(profile__info(p, "kernel_contentions"), "0");
	for (uint32_t i = 0; i < p->nsamples; i++)
		assert_non_null(strstr(leaf(p, &p->samples[i]), "futex"));
	profile__free(p);
}

static void test_no_tracepoints(void **state)
{
	struct lock_opts o = opts(true, true);
	struct profile *p;

	o.pretend_no_tracepoints = true;
	o.kernel_asked = true;
	o.user = false;
	assert_null(run_child(&o, futex_calls));
	o.kernel_asked = false;
	o.user = true;
	p = run_child(&o, futex_calls);
	assert_non_null(p);
	assert_string_equal(profile__info(p, "tracepoints"), "sys_enter, sys_exit (futex, futex_waitv)");
	assert_string_equal(profile__info(p, "futex_waits"), "3");
	assert_string_equal(profile__info(p, "futex_timeouts"), "4");
	profile__free(p);
}

/* A wait that never reported its end (the kernel ran no program for it; here: none loaded) is
 * an end_unseen drop once its thread is gone, not a wait going on at the end. */
static void test_ends_unseen(void **state)
{
	struct lock_opts o = opts(false, true);
	struct profile *p;

	o.no_ends = true;
	p = run_child(&o, futex_calls);
	assert_non_null(p);
	/* each thread's calls, each over the last one's open wait: the last one is left, of the
	 * child's thread and of its waker's */
	assert_string_equal(profile__info(p, "waiting_at_end"), "0");
	assert_int_equal(profile__drop(p, "end_unseen"), 2);
	profile__free(p);
}

/* At the end, a thread still in its futex wait is waiting; one whose wait ended unseen and
 * that is now in another call is an end_unseen drop. */
static void test_open_at_stop(void **state)
{
	struct lock_opts o = opts(false, true);
	struct profile *p = run_alive(&o, futex_then_block);

	assert_non_null(p);
	assert_string_equal(profile__info(p, "waiting_at_end"), "1");
	assert_int_equal(profile__drop(p, "end_unseen"), 0);
	assert_string_equal(profile__info(p, "futex_waits"), "3");
	assert_string_equal(profile__info(p, "futex_timeouts"), "4");
	profile__free(p);
	o.no_ends = true;
	p = run_alive(&o, futex_then_pause);
	assert_non_null(p);
	assert_string_equal(profile__info(p, "waiting_at_end"), "0");
	/* the child's thread, now in pause(2), and its waker's, gone */
	assert_int_equal(profile__drop(p, "end_unseen"), 2);
	profile__free(p);
}

/* Each process's totals do not depend on the stack table: with one slot for stacks, the
 * child's row still has its 4 waits, its stacks counted lost. With room for one process's
 * totals, two children: the second one's waits are process_totals_full drops, said in a note,
 * and its stacks are still there. */
static void test_process_totals(void **state)
{
	struct lock_opts o = opts(false, true);
	struct profile *p;
	int64_t samples = 0, delay = 0, to_delay = 0;
	uint64_t rows;

	o.max_stacks = 1;
	p = run_child(&o, futex_calls);
	assert_non_null(p);
	assert_true(profile__drop(p, "count_table_full") + profile__drop(p, "stack_table_full") > 0);
	assert_int_equal(proc_stat(p, children[0], "contentions"), 3);
	assert_int_equal(proc_stat(p, children[0], "futex_waits"), 3);
	assert_int_equal(proc_stat(p, children[0], "timeouts"), 4);
	for (uint32_t g = 0; g < p->ngroups; g++) {
		delay += group_stat(&p->groups[g], "delay_ns");
		to_delay += group_stat(&p->groups[g], "timeout_delay_ns");
	}
	assert_int_equal(proc_stat(p, children[0], "delay_ns"), delay);
	assert_int_equal(proc_stat(p, children[0], "timeout_delay_ns"), to_delay);
	assert_int_equal(profile__drop(p, "process_totals_full"), 0);
	profile__free(p);

	o.max_stacks = 4096;
	o.max_procs = 1;
	nchild = 2;
	p = run_child(&o, futex_calls);
	nchild = 1;
	assert_non_null(p);
	rows = proc_stat(p, children[0], "contentions") + proc_stat(p, children[1], "contentions") +
	       proc_stat(p, children[0], "timeouts") + proc_stat(p, children[1], "timeouts");
	for (uint32_t i = 0; i < p->nsamples; i++)
		samples += p->samples[i].values[0];
	/* the second one's 3 woken and 4 timed-out waits dropped from the rows (its first at
	 * least: the table holds the first child's until a tick's spill takes it out and makes
	 * room), every wait in a row or a drop, every woken one in the stacks */
	assert_true(profile__drop(p, "process_totals_full") > 0);
	assert_int_equal(rows + profile__drop(p, "process_totals_full"), 14);
	assert_int_equal(samples, 6);
	assert_true(has_note(p, "processes' totals (1) was full"));
	profile__free(p);
}

/* The per-lock table is taken out as it fills, as the per-stack table is: with room for 8 locks,
 * 48 futexes contended one after another, 2 between two ticks, are each in the summary with
 * exactly their 2 contentions, and none is a lock_table_full drop (before, the 40 locks met
 * after the table filled were left out of the summary, their 80 waits dropped). */
static void test_locks_spilled(void **state)
{
	struct lock_opts o = opts(false, true);
	struct profile *p;
	int found[MANY_LOCKS] = { 0 };
	static char leaves[MANY_LOCKS][336];
	char want[320];
	int64_t delay = 0;

	o.max_locks = 8;
	p = run(&o, many_locks, false);
	assert_non_null(p);
	for (uint32_t g = 0; g < p->ngroups; g++) {
		const struct prof_group *gr = &p->groups[g];
		unsigned long long a;
		size_t i;

		if (sscanf(group_label(gr, "address"), "0x%llx", &a) != 1 ||
		    a < (uintptr_t)many || a >= (uintptr_t)(many + MANY_LOCKS))
			continue;
		i = (a - (uintptr_t)many) / sizeof(many[0]);
		found[i]++;
		/* named by its symbol, whichever take read it */
		if (i)
			snprintf(want, sizeof(want), "many+0x%zx in %s", i * sizeof(many[0]),
				 self_name());
		else
			snprintf(want, sizeof(want), "many in %s", self_name());
		assert_string_equal(group_label(gr, "lock"), want);
		snprintf(leaves[i], sizeof(leaves[i]), "%s (futex_wait)", want);
		assert_int_equal(group_stat(gr, "contentions"), MANY_ROUNDS);
		assert_int_equal(group_stat(gr, "nowait"), 0);
		assert_int_equal(group_stat(gr, "timeouts"), 0);
		assert_true(group_stat(gr, "delay_ns") > 0);
		delay += group_stat(gr, "delay_ns");
	}
	for (int i = 0; i < MANY_LOCKS; i++)
		if (found[i] != 1)
			fail_msg("futex %d of %d: %d rows in the lock summary", i, MANY_LOCKS,
				 found[i]);
	assert_int_equal(profile__drop(p, "lock_table_full"), 0);
	/* the same waits in the stacks, with the same total */
	for (uint32_t i = 0; i < p->nsamples; i++)
		for (int l = 0; l < MANY_LOCKS; l++)
			if (!strcmp(leaf(p, &p->samples[i]), leaves[l]))
				delay -= p->samples[i].values[1];
	assert_int_equal(delay, 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_futex_waits),
		cmocka_unit_test(test_notes_of_one),
		cmocka_unit_test(test_kernel_only),
		cmocka_unit_test(test_user_only),
		cmocka_unit_test(test_no_tracepoints),
		cmocka_unit_test(test_ends_unseen),
		cmocka_unit_test(test_open_at_stop),
		cmocka_unit_test(test_process_totals),
		cmocka_unit_test(test_locks_spilled),
	};

	if (geteuid()) {
		print_message("test_lock_bpf: skipped: needs root (loads BPF programs)\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
