/* ebprof top: the modes' collectors side by side under one session, their windows read every
 * interval into the top model (src/top/model.h), drawn on the terminal or printed (--batch).
 *
 * The session sees one mode, this one; each hook goes on to every part (a mode top shows) through
 * core/modeset, each part with its own profile, never reported: top's output is the view, and
 * `w` writes a window. A mode joins by having a window hook (core/mode.h) and a line in
 * `parts_table` below: its columns (process stats of its windows) and its panel (the sample
 * type it ranks functions by).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/modeset.h"
#include "core/session.h"
#include "modes/top/top.h"
#include "profile/profile.h"
#include "top/model.h"
#include "top/view.h"
#include "util/util.h"

/* ---- the modes top shows ------------------------------------------------------------------ */

static const struct top_col cpu_cols[] = {
	{ "CPU%", "cpu_ns", TOP_COL_SHARE, TOP_UNIT_PERCENT, NULL },
};

static const struct top_source cpu_source = {
	.name = "cpu",
	.cols = cpu_cols,
	.ncols = sizeof(cpu_cols) / sizeof(cpu_cols[0]),
	.panel_type = "cpu",
	.panel_unit = TOP_UNIT_PERCENT,
};

/* mem: allocations per second and live bytes of the processes whose allocations are traced,
 * sampled; no panel yet (its windows carry sites with stacks since the agent needed them:
 * the panel could rank them by alloc_space) */
static const struct top_col mem_cols[] = {
	{ "ALLOC/s", "alloc_bytes", TOP_COL_RATE, TOP_UNIT_BYTES, NULL },
	{ "LIVE", "live_bytes", TOP_COL_GAUGE, TOP_UNIT_BYTES, NULL },
};

static const struct top_source mem_source = {
	.name = "mem",
	.cols = mem_cols,
	.ncols = sizeof(mem_cols) / sizeof(mem_cols[0]),
	.panel_type = "alloc_space",
	.panel_unit = TOP_UNIT_BYTES,
};

/* io: block requests per second and their mean latency, per process that started them (kernel
 * threads such as writeback flushers included); the panel ranks by latency */
static const struct top_col io_cols[] = {
	{ "IO/s", "requests", TOP_COL_RATE, TOP_UNIT_COUNT, NULL },
	{ "IOB/s", "io_bytes", TOP_COL_RATE, TOP_UNIT_BYTES, NULL },
	{ "IOLAT", "latency_ns", TOP_COL_MEAN, TOP_UNIT_NS, "requests" },
};

static const struct top_source io_source = {
	.name = "io",
	.cols = io_cols,
	.ncols = sizeof(io_cols) / sizeof(io_cols[0]),
	.panel_type = "latency",
	.panel_unit = TOP_UNIT_NS,
};

/* lock: contended waits per second (kernel locks and futex waits) and the time spent waiting,
 * in % of one thread's time; the panel ranks functions by that time */
static const struct top_col lock_cols[] = {
	{ "LOCK/s", "contentions", TOP_COL_RATE, TOP_UNIT_COUNT, NULL },
	{ "WAIT%", "delay_ns", TOP_COL_SHARE, TOP_UNIT_PERCENT, NULL },
};

static const struct top_source lock_source = {
	.name = "lock",
	.cols = lock_cols,
	.ncols = sizeof(lock_cols) / sizeof(lock_cols[0]),
	.panel_type = "delay",
	.panel_unit = TOP_UNIT_PERCENT,
};

/* offcpu: the time its threads spent off the CPU (asleep, blocked, waiting to run), in % of one
 * thread's time (a process of 4 sleeping threads: 400%), and its switches out per second; the
 * panel ranks functions by that time. A wait counts when it ends: in the window it ended in. */
static const struct top_col offcpu_cols[] = {
	{ "OFF-CPU%", "offcpu_ns", TOP_COL_SHARE, TOP_UNIT_PERCENT, NULL },
	{ "WAITS/s", "switches", TOP_COL_RATE, TOP_UNIT_COUNT, NULL },
};

static const struct top_source offcpu_source = {
	.name = "offcpu",
	.cols = offcpu_cols,
	.ncols = sizeof(offcpu_cols) / sizeof(offcpu_cols[0]),
	.panel_type = "offcpu",
	.panel_unit = TOP_UNIT_PERCENT,
};

struct part_def {
	const struct top_source *src;
	const struct mode_def *def;
	size_t opts_off;	/* its options' pointer inside struct top_opts (NULL: left out) */
};

/* The modes top runs (core/modeset), in this order: the first is the one every process is
 * attached to or the run fails; the others add what they can (their errors said at -v). mem,
 * made only for -p and launched targets (cmd.c: no uprobes on every process unless asked),
 * goes last: it runs a launched program forward to its allocator. kmem joins here as its
 * windows land. */
static const struct part_def parts_table[] = {
	{ &cpu_source, &cpu_def, offsetof(struct top_opts, cpu) },
	{ &offcpu_source, &offcpu_def, offsetof(struct top_opts, offcpu) },
	{ &lock_source, &lock_def, offsetof(struct top_opts, lock) },
	{ &io_source, &io_def, offsetof(struct top_opts, io) },
	{ &mem_source, &mem_def, offsetof(struct top_opts, mem) },
};

#define NPARTS (sizeof(parts_table) / sizeof(parts_table[0]))

/* ---- the mode ---------------------------------------------------------------------------- */

struct top {
	struct session_env env;
	struct top_opts o;
	struct modeset_opts set_opts;	/* the parts in the run, in parts_table's order */
	struct mode_ops set;		/* what each hook goes on to */
	void *sm;			/* the set's state */
	struct top_model *model;	/* source i: the set's member i */
	struct top_view *view;
	int64_t next_ns;	/* when the next window is read, since start_ns */
	uint64_t last_ns;	/* CLOCK_MONOTONIC of the last window */
	uint64_t windows;
	char target[128];	/* what is traced, for the header */
	pid_t cmd_pid;		/* the launched command's process, once attached; or 0 */
};

static void top_close(void *m);

static void *top_open(const struct session_env *env, void *opts)
{
	struct top *t = calloc(1, sizeof(*t));
	const struct top_source *srcs[NPARTS];
	struct modeset_opts *so;

	if (!t)
		return NULL;
	t->env = *env;
	t->o = *(struct top_opts *)opts;
	so = &t->set_opts;
	for (size_t i = 0; i < NPARTS; i++) {
		void *mo = *(void **)((char *)&t->o + parts_table[i].opts_off);

		if (!mo)
			continue;
		so->members[so->n] = (struct modeset_member){ parts_table[i].def->ops, mo, false };
		srcs[so->n++] = parts_table[i].src;
	}
	/* the parts' profiles are parts of top's own, never reported */
	so->lead = true;
	so->quiet_others = true;
	modeset__ops(&t->set, so);
	t->sm = t->set.open(env, so);
	if (!t->sm)
		goto fail;	/* a part said why */
	t->model = top_model__new(srcs, so->n);
	if (!t->model)
		goto nomem;
	if (env->all)
		snprintf(t->target, sizeof(t->target), "all processes");
	else if (env->argv)
		snprintf(t->target, sizeof(t->target), "command %s", env->argv[0]);
	else
		snprintf(t->target, sizeof(t->target), "the given processes");
	t->next_ns = t->o.interval_ns;
	t->last_ns = env->start_ns;
	if (!t->o.batch) {
		t->view = top_view__new(t->o.color);
		if (!t->view)
			goto fail;
	}
	return t;
nomem:
	pr_err(env->lc, "out of memory");
fail:
	/* a part or the terminal said why */
	top_close(t);
	return NULL;
}

static void top_close(void *m)
{
	struct top *t = m;

	if (!t)
		return;
	top_view__free(t->view);
	if (t->sm)
		t->set.close(t->sm);
	top_model__free(t->model);
	free(t);
}

/* The launched command's new program after an exec in place (sh -c 'exec prog'): the header
 * names it, as the recording modes' processes do. Its argv[0], as the header's first name was,
 * else its comm. */
static void command_exec(struct top *t, pid_t pid)
{
	char path[64], *s;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	s = util_read_file(path, &len);
	if (!s || !len || !*s) {
		free(s);
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		s = util_read_file(path, &len);
		if (s)
			s[strcspn(s, "\n")] = 0;
	}
	if (s && *s)
		snprintf(t->target, sizeof(t->target), "command %s", s);
	free(s);
}

static int top_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct top *t = m;

	/* the first program attached at its exec is the launched command's; an exec of the
	 * same process later is a new program in its place */
	if (t->env.argv && how == MODE_ATTACH_EXEC) {
		if (!t->cmd_pid)
			t->cmd_pid = pid;
		else if (pid == t->cmd_pid)
			command_exec(t, pid);
	}
	/* the others' columns stay empty for a process they cannot trace ("-") */
	return t->set.attach(t->sm, pid, how, status);
}

static const char *top_why_untraceable(void *m, pid_t pid)
{
	struct top *t = m;

	return t->set.why_untraceable(t->sm, pid);
}

static int top_attach_all(void *m)
{
	struct top *t = m;

	return t->set.attach_all ? t->set.attach_all(t->sm) : -EOPNOTSUPP;
}

static int top_wake_fd(void *m)
{
	struct top *t = m;

	return t->set.wake_fd(t->sm);
}

static void top_wake(void *m)
{
	struct top *t = m;

	t->set.wake(t->sm);
}

/* The PIDs the kernel gave another process in the window (its modes' pids_reused, the largest:
 * each mode that keys rows by PID counts them), said after the second header line: such a row
 * sums the processes under the last one's name. "" when none. */
static const char *reused_said(struct top *t, char *buf, size_t len)
{
	unsigned long long n = 0;

	for (int i = 0; i < top_model__nsources(t->model); i++) {
		const struct profile *w = top_model__window(t->model, i);
		const char *v = w ? profile__info(w, "pids_reused") : NULL;

		if (v && strtoull(v, NULL, 10) > n)
			n = strtoull(v, NULL, 10);
	}
	if (!n)
		return "";
	snprintf(buf, len, "; %llu PID%s recycled by the kernel in this window (a row sums the "
		 "processes that had its PID, under the last one's name)", n, n == 1 ? "" : "s");
	return buf;
}

static void headers(struct top *t, char *h1, size_t l1, char *h2, size_t l2)
{
	char *load = util_read_file("/proc/loadavg", NULL);
	const struct profile *w = top_model__window(t->model, 0);
	const char *rate = w ? profile__info(w, "rate") : NULL;
	const char *cpus = w ? profile__info(w, "cpus") : NULL;
	double busy = 0, la[3] = { 0 };
	uint32_t oncpu = 0;
	char clock[16], reasons[320], why[324], recycled[160];
	uint64_t drops;
	time_t now = time(NULL);
	struct tm tm;

	if (load)
		sscanf(load, "%lf %lf %lf", &la[0], &la[1], &la[2]);
	free(load);
	localtime_r(&now, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	/* every source's, each named: only the first source's were named before */
	drops = top_model__drops(t->model, reasons, sizeof(reasons));
	if (drops)
		snprintf(why, sizeof(why), " (%s)", reasons);
	else
		why[0] = 0;
	/* column 0 is cpu's: the first part's */
	for (uint32_t i = 0; i < top_model__nrows(t->model); i++) {
		const struct top_row *r = top_model__row(t->model, i);

		if (r->has[0]) {
			busy += r->v[0];
			oncpu++;
		}
	}
	snprintf(h1, l1, "ebprof top - %s  CPUs %s  load %.2f %.2f %.2f  cpu %s  window %.3f s  "
		 "drops %llu%s", clock, cpus ? cpus : "?", la[0], la[1], la[2], rate ? rate : "?",
		 top_model__secs(t->model), (unsigned long long)drops, why);
	snprintf(h2, l2, "tracing %s: %u processes sampled on CPU, %.1f%% of one CPU in all%s",
		 t->target, oncpu, busy, reused_said(t, recycled, sizeof(recycled)));
}

/* Every part's window, into the model (unless paused), then the screen or the batch table. */
static void read_windows(struct top *t)
{
	struct profile *wins[TOP_MAX_SOURCES] = { 0 };
	struct profile *win = profile__new("top");
	uint64_t now = util_mono_ns();
	double secs = (now - t->last_ns) / 1e9;
	char h1[512], h2[384];
	struct utsname u;
	int n = top_model__nsources(t->model);

	uname(&u);
	/* part i is source i's; one whose window failed (said) shows what it took */
	if ((win ? t->set.window(t->sm, win) : -ENOMEM) == -ENOMEM)
		pr_warn(t->env.lc, "ebprof top: out of memory");
	for (int i = 0; win && i < n && i < (int)win->nparts; i++) {
		wins[i] = win->parts[i];
		win->parts[i] = NULL;
		/* the mode's own window: the first starts when its counting did, not now */
		if (i == 0 && wins[i]->duration_nanos > 0)
			secs = wins[i]->duration_nanos / 1e9;
		profile__set_meta(wins[i], NULL, u.release, "ebprof top",
				  (int64_t)time(NULL) * 1000000000ll - wins[i]->duration_nanos,
				  wins[i]->duration_nanos);
	}
	if (win)
		win->nparts = 0;
	profile__free(win);
	t->last_ns = now;
	t->windows++;
	if (t->view && top_view__paused(t->view)) {
		for (int i = 0; i < n; i++)
			profile__free(wins[i]);
	} else if (top_model__update(t->model, wins, secs)) {
		pr_warn(t->env.lc, "ebprof top: out of memory");
	}
	headers(t, h1, sizeof(h1), h2, sizeof(h2));
	if (t->view)
		top_view__draw(t->view, t->model, h1, h2);
	else
	{
		char head[sizeof(h1) + sizeof(h2) + 2];

		snprintf(head, sizeof(head), "%s\n%s", h1, h2);
		top_model__print(t->model, stdout, head, t->o.rows);
	}
	if (t->o.iterations && t->windows >= t->o.iterations)
		session__request_stop(t->env.s);
}

/* w: the window shown of the view's mode, in the format of the path's extension. */
static void write_window(struct top *t, const char *path)
{
	const struct output_ops *ops = output__for_path(path);
	const struct profile *w = top_model__window(t->model, top_model__view(t->model));
	char why[256];
	int err;

	if (!ops) {
		top_view__status(t->view, "cannot tell the format of '%s': " OUTPUT_FORMAT_HINT,
				 path);
		return;
	}
	if (!w) {
		top_view__status(t->view, "no window yet: wait for the first interval");
		return;
	}
	if (output__check_path(path, why, sizeof(why))) {
		top_view__status(t->view, "cannot write '%s': %s", path, why);
		return;
	}
	err = output__write_path(ops, w, &t->o.out, path);
	if (err)
		top_view__status(t->view, "cannot write '%s': %s", path, strerror(-err));
	else
		top_view__status(t->view, "wrote %s (%s, the %.2f s window shown)", path, ops->name,
				 top_model__secs(t->model));
}

static void top_tick(void *m, int64_t t_ns, bool second)
{
	struct top *t = m;
	char path[256];

	t->set.tick(t->sm, t_ns, second);
	if (t->view) {
		switch (top_view__input(t->view, t->model, path, sizeof(path))) {
		case TOP_QUIT:
			session__request_stop(t->env.s);
			return;
		case TOP_WRITE:
			write_window(t, path);
			top_view__redraw(t->view, t->model);
			break;
		case TOP_NONE:
			break;
		}
	}
	if (t_ns >= t->next_ns) {
		read_windows(t);
		while (t->next_ns <= t_ns)
			t->next_ns += t->o.interval_ns;
	}
}

static void top_thread_exit(void *m, pid_t pid, pid_t tid)
{
	struct top *t = m;

	t->set.thread_exit(t->sm, pid, tid);
}

static bool top_held(void *m, pid_t pid, pid_t tid)
{
	struct top *t = m;

	return t->set.held && t->set.held(t->sm, pid, tid);
}

static void top_finalize(void *m, pid_t pid, bool exec)
{
	struct top *t = m;

	t->set.finalize(t->sm, pid, exec);
}

static void top_retire(void *m, pid_t pid)
{
	struct top *t = m;

	t->set.retire(t->sm, pid);
}

static void top_reaped(void *m, pid_t pid)
{
	struct top *t = m;

	t->set.reaped(t->sm, pid);
}

/* The terminal is given back first: quitting shows the shell at once. No finish: there is no
 * report. --batch prints the last, shorter window (sampling is off by then: one cut), so that
 * its tables add up to the whole run, unless -n ended it right after a window. However short:
 * a wait that ended in it counts there whole (a 100 ms nap ending 1 ms after the last window
 * was lost from the tables when windows under 10 ms were skipped). */
static void top_started(void *m, uint64_t start_ns)
{
	struct top *t = m;

	t->env.start_ns = start_ns;
	t->last_ns = start_ns;
	t->set.started(t->sm, start_ns);
}

static void top_stop(void *m)
{
	struct top *t = m;

	top_view__end(t->view);
	t->set.stop(t->sm);
	if (t->o.batch && !(t->o.iterations && t->windows >= t->o.iterations))
		read_windows(t);
}

static void top_detach(void *m)
{
	struct top *t = m;

	top_view__end(t->view);
	t->set.detach(t->sm);
}

const struct mode_ops top_mode_ops = {
	.name = "top",
	.kthreads = true,	/* cpu samples kernel threads */
	.open = top_open,
	.close = top_close,
	.attach = top_attach,
	.why_untraceable = top_why_untraceable,
	.attach_all = top_attach_all,
	.tick = top_tick,
	.wake_fd = top_wake_fd,
	.wake = top_wake,
	.thread_exit = top_thread_exit,
	.held = top_held,
	.finalize = top_finalize,
	.retire = top_retire,
	.reaped = top_reaped,
	.started = top_started,
	.stop = top_stop,
	.detach = top_detach,
};
