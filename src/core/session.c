/* One run of any mode (see session.h): targets, the run loop, signals, progress, outputs. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "abi/unwind.h"
#include "core/preflight.h"
#include "core/procs.h"
#include "core/session.h"
#include "core/target.h"
#include "core/unwind.h"
#include "output/render.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "util/util.h"

#define TICK_MS 100		/* the modes' tick: series points, snapshots */

struct tgt {
	pid_t pid;
	pid_t ppid;
	bool traced;		/* ptrace-seized: exits stop */
	bool await_exec;	/* shares its parent's memory (vfork): traced from its exec on */
	bool done;		/* finalized (or never attached) */
	bool dropped;		/* counted once as a process not traced */
	int pending_err;	/* a child the mode could not attach to: counted as not traced
				 * if it ends (or the run does) before an exec gets it traced */
	bool gone;		/* exited, reaped or not ours to reap */
	int pidfd;		/* for attached processes we could not seize, else -1 */
	int status;
};

struct session {
	const struct session_opts *o;
	const struct mode_ops *ops;
	void *m;		/* the mode's state */
	struct session_env env;
	const struct log_ctx *lc;
	struct profile *prof;
	struct symbolizer *sym;
	uint64_t sym_gone;	/* the symbolizer's files_gone counted into a profile so far */
	unsigned sym_max_open;	/* its limit of open object files */
	struct tgt **t;		/* every process seen; stable pointers (the array grows) */
	int nt, capt;
	struct pid_index by_pid;	/* the newest tgt of each pid */
	int ngone;		/* of them gone */
	int pidfd_upto;		/* the tgts with pidfds (-p's) are among the first this many */
	pid_t *thr;		/* threads of followed processes (traced: they may fork) */
	int nthr, capthr;
	uint32_t reused;	/* PIDs the kernel gave a second traced process (one note) */
	pid_t reused_ex[4];	/* the first of them, for the note */
	pid_t child;		/* launched command, or 0 */
	int child_status;
	bool child_reaped;
	bool stop;
	int nsignals;
	uint64_t start_mono;	/* CLOCK_MONOTONIC at the start of tracing (the modes open) */
	uint64_t end_mono;	/* and at its end (the loop's) */
	uint64_t exit_mono;	/* when the last traced process to end reached its exit */
	int64_t start_wall;	/* and CLOCK_REALTIME */
	uint64_t ticks;
	bool progress;		/* stderr is a terminal and no --quiet */
	bool progress_shown;
	bool inspect_now;	/* SIGUSR1: inspect every running process */
	bool hup;		/* SIGHUP with an on_hup hook: call it */
	int64_t win_from;	/* continuous profiling: the current window's start (wall ns) */
	int64_t win_next;	/* and the boundary that ends it */
	int spawn_status;	/* the launched command could not run: 126, 127, or 1 */
};

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

void session__clear_progress(struct session *s)
{
	if (s && s->progress_shown)
		fputs("\r\033[K", stderr);
	if (s)
		s->progress_shown = false;
}

void session__request_stop(struct session *s)
{
	s->stop = true;
	if (s->child && !s->child_reaped)
		kill(s->child, SIGTERM);
}

bool session__stopping(const struct session *s)
{
	return s->stop;
}

uint64_t session__end_ns(const struct session *s)
{
	return s->end_mono;
}

static struct tgt *tgt_of(struct session *s, pid_t pid)
{
	/* a recycled PID is its latest process */
	return pid_index__get(&s->by_pid, pid);
}

/* t has exited (reaped, or not ours to reap). */
static void tgt_gone(struct session *s, struct tgt *t)
{
	if (!t->gone)
		s->ngone++;
	t->gone = true;
}

static struct tgt *tgt_add(struct session *s, pid_t pid)
{
	struct tgt *t;

	if (s->nt == s->capt) {
		int cap = s->capt ? s->capt * 2 : 16;
		struct tgt **nt = realloc(s->t, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		s->t = nt;
		s->capt = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t || pid_index__put(&s->by_pid, pid, t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->pidfd = -1;
	s->t[s->nt++] = t;
	return t;
}

static void finalize_image(struct session *s, struct tgt *t, bool exec)
{
	if (t->done)
		return;
	if (s->ops->finalize)
		s->ops->finalize(s->m, t->pid, exec);
	t->done = true;
}

static void finalize(struct session *s, struct tgt *t)
{
	finalize_image(s, t, false);
}

static void retire(struct session *s, pid_t pid)
{
	if (s->ops->retire)
		s->ops->retire(s->m, pid);
}

static void reaped(struct session *s, pid_t pid)
{
	if (s->ops->reaped)
		s->ops->reaped(s->m, pid);
}

static bool all_done(struct session *s)
{
	if (s->o->all)
		return false;	/* until -d, Ctrl-C or SIGTERM */
	return s->ngone == s->nt;
}

static const char *why_untraceable(struct session *s, pid_t pid)
{
	const char *why = s->ops->why_untraceable ? s->ops->why_untraceable(s->m, pid) : NULL;

	return why ? why : "this mode cannot trace it";
}

/*
 * A process that runs untraced (the mode cannot trace it, a table of the mode is full, its
 * attach failed): a drop counted by reason and a note in every output, not only a line on
 * stderr, or the report would look complete. A process counts once, however many of its
 * programs were missed. err: the mode's attach error (-ENOENT: cannot trace this process; the
 * mode reported the others itself).
 */
static void untraced(struct session *s, struct tgt *t, int err)
{
	const char *reason, *why;
	char comm[32], buf[160];

	target__comm(t->pid, comm, sizeof(comm));
	if (err == -ENOENT) {
		reason = "untraceable_process";
		why = why_untraceable(s, t->pid);
		session__clear_progress(s);
		pr_warn(s->lc, "PID %d (%s) cannot be traced: %s; it runs untraced", t->pid, comm,
			why);
	} else if (err == -E2BIG || err == -ENOSPC) {
		reason = "process_table_full";
		snprintf(buf, sizeof(buf), "the table of processes 'ebprof %s' traces at once was "
			 "full", s->ops->name);
		why = buf;
	} else {
		reason = "attach_failed";
		snprintf(buf, sizeof(buf), "attaching to it failed (%s)", strerror(-err));
		why = buf;
	}
	t->done = true;
	if (t->dropped)
		return;
	t->dropped = true;
	profile__add_drop(s->prof, reason, 1);
	/* no PID: the same program missed 50 times is one note with a count */
	profile__add_note(s->prof, "a process running '%s' was not traced: %s", comm, why);
}

/* A child that was never traced is counted when it ends, or when the run does. */
static void settle(struct session *s, struct tgt *t)
{
	if (t->pending_err)
		untraced(s, t, t->pending_err);
	t->pending_err = 0;
}

/* A new program image in a traced process: report the old one, trace the new one. */
static void on_exec(struct session *s, struct tgt *t)
{
	int status = -1, err;

	finalize_image(s, t, true);
	t->await_exec = false;
	err = s->ops->attach(s->m, t->pid, MODE_ATTACH_EXEC, &status);
	if (err == -ESRCH) {
		tgt_gone(s, t);
		t->status = status;
		retire(s, t->pid);
		reaped(s, t->pid);
		return;
	}
	if (err) {
		retire(s, t->pid);
		t->pending_err = 0;
		untraced(s, t, err);
		return;
	}
	t->pending_err = 0;
	t->done = false;
}

/* A thread we trace (a followed process's, so that its forks are followed too), or -1. */
static int thread_of(struct session *s, pid_t tid)
{
	for (int i = 0; i < s->nthr; i++)
		if (s->thr[i] == tid)
			return i;
	return -1;
}

static void thread_add(struct session *s, pid_t tid)
{
	if (s->nthr == s->capthr) {
		int cap = s->capthr ? s->capthr * 2 : 16;
		pid_t *n = realloc(s->thr, cap * sizeof(*n));

		if (!n) {
			ptrace(PTRACE_DETACH, tid, 0, 0);	/* its forks go unfollowed */
			return;
		}
		s->thr = n;
		s->capthr = cap;
	}
	s->thr[s->nthr++] = tid;
	target__resume(tid, TARGET_STOP_OTHER, 0);
}

_Static_assert(UNWIND_HOLD_SIG == SIGURG, "abi/unwind.h's hold signal is SIGURG");

/* The signal a stop of tid (pid's) holds, to resume it with: none when it is the unwinder's
 * hold at the loader's hook (abi/unwind.h), whose new code the mode has loaded now */
static int stop_sig(struct session *s, pid_t pid, pid_t tid, enum target_stop how, int sig)
{
	if (how == TARGET_STOP_SIGNAL && sig == UNWIND_HOLD_SIG && s->ops->held &&
	    s->ops->held(s->m, pid, tid))
		return 0;
	return sig;
}

/* A stop or the end of one of those threads: it is let run as its stop requires. */
static void on_thread_event(struct session *s, int i, int status)
{
	int sig;
	enum target_stop how = target__classify(status, &sig);

	if (how == TARGET_GONE) {
		s->thr[i] = s->thr[--s->nthr];
		return;
	}
	if (how == TARGET_STOP_EXIT && s->ops->thread_exit) {
		pid_t tgid, ppid, nspid;

		if (target__ids(s->thr[i], &tgid, &ppid, &nspid) == 0 && tgid != s->thr[i])
			s->ops->thread_exit(s->m, tgid, s->thr[i]);
	}
	if (how == TARGET_STOP_SIGNAL && sig == UNWIND_HOLD_SIG) {
		pid_t tgid, ppid, nspid;

		if (target__ids(s->thr[i], &tgid, &ppid, &nspid) == 0)
			sig = stop_sig(s, tgid, s->thr[i], how, sig);
	}
	target__resume(s->thr[i], how, sig);
}

/* Do two processes share one address space (vfork, clone(CLONE_VM))? */
static bool same_mm(pid_t a, pid_t b)
{
	return a > 0 && syscall(SYS_kcmp, a, b, 1 /* KCMP_VM */, 0, 0) == 0;
}

/*
 * A task we did not know stopped: a process or thread created by a traced one, stopped before
 * it ran its first instruction (its parent's fork event may come before or after this). Threads
 * stay traced, only so that the processes they create are followed (their process is traced
 * already). A new process is attached now, before it runs. One that shares its parent's memory
 * (vfork) is traced from its exec: the mode's probes on it would see its parent's address space.
 */
/* One note for the PIDs used twice, with the first few: a note each was 26,901 notes (3.3 MB of
 * a text report) over a tree of 120,000 short processes */
/* A run cut into windows writes no report: what its modes still put into the run's profile
 * (each part's) is never read, and over days it was memory that only grew (mem finalized every
 * ended process there). Said at -v, so that a test can check it stays empty. */
static void windows_leftover(struct session *s)
{
	struct profile *one = s->prof;
	struct profile **parts = s->prof->nparts ? s->prof->parts : &one;
	uint32_t nparts = s->prof->nparts ? s->prof->nparts : 1;

	for (uint32_t i = 0; i < nparts; i++) {
		uint64_t points = 0;

		for (uint32_t j = 0; j < parts[i]->nseries; j++)
			points += parts[i]->series[j].n;
		pr_info(s->lc, "windows: the run's own %s profile holds %u samples of %u "
			"processes, %llu series points", parts[i]->mode, parts[i]->nsamples,
			parts[i]->nprocesses, (unsigned long long)points);
	}
}

static void reused_note(struct session *s)
{
	uint32_t n = sizeof(s->reused_ex) / sizeof(s->reused_ex[0]);

	procs__note_reused(s->prof, s->reused, s->reused_ex, s->reused < n ? s->reused : n, false,
			   "run");
}

static void on_new_task(struct session *s, pid_t pid, int status)
{
	pid_t tgid, ppid, nspid;
	struct tgt *t;
	int st = -1, err;

	if (!WIFSTOPPED(status))
		return;
	if (target__ids(pid, &tgid, &ppid, &nspid)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	if (tgid != pid) {
		thread_add(s, pid);
		return;
	}
	if (tgt_of(s, pid) && s->reused++ < sizeof(s->reused_ex) / sizeof(s->reused_ex[0]))
		/* the report keys processes by PID: said (reused_note) rather than pass two off
		 * as one */
		s->reused_ex[s->reused - 1] = pid;
	t = tgt_add(s, pid);
	if (!t) {
		pr_warn(s->lc, "PID %d: out of memory; not tracing it", pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	t->traced = true;
	t->ppid = ppid;
	t->done = true;		/* until it is attached */
	if (!s->ops->vfork_children && same_mm(ppid, pid)) {
		t->await_exec = true;
		pr_debug(s->lc, "PID %d: shares PID %d's memory; traced from its exec", pid, ppid);
	} else if ((err = s->ops->attach(s->m, pid, MODE_ATTACH_CHILD, &st)) == 0) {
		t->done = false;
	} else {
		/* it runs its parent's program untraced; a later exec is tried again */
		pr_debug(s->lc, "PID %d: not traced in its parent's image; traced from its exec",
			 pid);
		t->pending_err = err;
	}
	target__resume(pid, TARGET_STOP_OTHER, 0);
}

static void on_child_event(struct session *s, pid_t pid, int status);

/* The mode's inspection of t (mem's leak scan); at_exit: it is held at its exit stop. */
static void inspect(struct session *s, struct tgt *t, bool at_exit)
{
	int status = -1;

	if (!s->o->inspect || !s->ops->inspect || t->done || t->gone)
		return;
	if (!t->traced) {
		pr_warn(s->lc, "PID %d: not scanned for leaks: another tracer holds it, so ebprof "
			       "cannot stop it", t->pid);
		return;
	}
	if (s->ops->inspect(s->m, t->pid, at_exit, &status))
		return;
	if (status != -1)
		on_child_event(s, t->pid, status);	/* it stopped at its exit meanwhile */
}

static void on_child_event(struct session *s, pid_t pid, int status)
{
	struct tgt *t = tgt_of(s, pid);
	int th = thread_of(s, pid);
	enum target_stop how;
	int sig;

	if (th >= 0) {
		pid_t tgid, ppid, nspid;

		/* a stale entry (a thread that vanished in an exec) whose TID is a new process */
		if (WIFSTOPPED(status) && target__ids(pid, &tgid, &ppid, &nspid) == 0 &&
		    tgid == pid) {
			s->thr[th] = s->thr[--s->nthr];
		} else {
			on_thread_event(s, th, status);
			return;
		}
	}
	if (!t || (t->gone && WIFSTOPPED(status))) {
		on_new_task(s, pid, status);
		return;
	}
	how = target__classify(status, &sig);
	switch (how) {
	case TARGET_GONE:
		s->exit_mono = util_mono_ns();
		settle(s, t);
		if (!t->done)
			finalize(s, t);	/* killed without an exit stop: from the attach snapshot */
		retire(s, pid);
		reaped(s, pid);
		tgt_gone(s, t);
		t->status = status;
		if (pid == s->child) {
			s->child_status = status;
			s->child_reaped = true;
		}
		return;
	case TARGET_STOP_EXIT:
		/* the run ends here if it is the last: what follows, its read-out while it is
		 * held at its exit (0.6 s at load 12), is ebprof's time, not the program's */
		s->exit_mono = util_mono_ns();
		settle(s, t);
		if (!t->done)
			inspect(s, t, true);
		finalize(s, t);
		/* its probes are released without waiting: the run loop never blocks on that */
		retire(s, pid);
		break;
	case TARGET_STOP_EXEC:
		on_exec(s, t);
		if (t->gone)
			return;
		break;
	case TARGET_STOP_SIGNAL:
		sig = stop_sig(s, pid, pid, how, sig);
		break;
	default:
		break;
	}
	target__resume(pid, how, sig);
}

static void on_signal(struct session *s, const struct signalfd_siginfo *si)
{
	if (si->ssi_signo == SIGCHLD) {
		int status;
		pid_t pid;

		while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
			on_child_event(s, pid, status);
		return;
	}
	if (si->ssi_signo == SIGUSR1) {
		s->inspect_now = true;
		return;
	}
	if (si->ssi_signo == SIGHUP && s->o->on_hup) {
		s->hup = true;
		return;
	}
	s->nsignals++;
	if (s->child && s->child_reaped) {
		/* the command is gone; what it left running (a daemon, children) is traced until
		 * a signal says stop */
		s->stop = true;
		return;
	}
	if (s->child && si->ssi_code == SI_USER && si->ssi_pid != (uint32_t)s->child &&
	    s->nsignals == 1) {
		/* sent to ebprof alone (kill, a supervisor): the command gets it too, and the
		 * report follows its exit; Ctrl-C reaches both through the terminal already */
		kill(s->child, si->ssi_signo);
		return;
	}
	if (s->child && s->nsignals == 1)
		return;	/* the command got the terminal's signal: wait for it to exit */
	s->stop = true;
}

/* tid, the end of which (or a stop) is `status`: a tracee ended or stopped after tracing did.
 * A stop is let go with the signal it holds (detached without it, a SIGTERM that came as
 * tracing stopped was lost: the command ran on); the launched command's end is kept. */
static void release_status(struct session *s, pid_t tid, int status)
{
	pid_t tgid = tid, ppid, nspid;
	enum target_stop how;
	int sig = 0;

	how = target__classify(status, &sig);
	if (how == TARGET_GONE) {
		if (tid == s->child) {
			s->child_status = status;
			s->child_reaped = true;
		}
		return;
	}
	if (how == TARGET_STOP_SIGNAL && sig == UNWIND_HOLD_SIG)
		target__ids(tid, &tgid, &ppid, &nspid);
	target__detach_stopped(tid, how == TARGET_STOP_SIGNAL ? stop_sig(s, tgid, tid, how, sig)
							      : 0);
}

static void drop_tid(pid_t *l, int *n, pid_t tid)
{
	for (int i = 0; i < *n; i++)
		if (l[i] == tid) {
			l[i] = l[--*n];
			return;
		}
}

/*
 * The end: every tracee still ours (followed threads, traced processes) is let go, none left
 * stopped, none left a zombie only its tracer can reap (a traced thread that exited: its
 * process's leader could not be reaped before it, and ebprof waited for the command forever).
 * Stops and ends the loop did not see are taken first (release_status); the rest are
 * interrupted and let go at that stop. At most ~5 s: a tracee that never stops is left.
 */
static void release_all(struct session *s)
{
	int n = 0, status;
	pid_t *l = malloc(sizeof(*l) * (s->nthr + s->nt + 1)), r;

	if (!l)
		return;
	for (int i = 0; i < s->nthr; i++)
		l[n++] = s->thr[i];
	for (int i = 0; i < s->nt; i++)
		if (s->t[i]->traced && !s->t[i]->gone)
			l[n++] = s->t[i]->pid;
	for (int round = 0; n && round < 500; round++) {
		while ((r = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
			release_status(s, r, status);
			drop_tid(l, &n, r);
		}
		for (int i = 0; i < n;) {
			if (round == 0)
				ptrace(PTRACE_INTERRUPT, l[i], 0, 0);
			/* gone (a zombie is still there to reap) */
			if (kill(l[i], 0) && errno == ESRCH)
				l[i] = l[--n];
			else
				i++;
		}
		if (n)
			poll(NULL, 0, 10);
	}
	free(l);
}

/*
 * Launch mode stopped early (-d or a second signal): the command runs on and ebprof, like the
 * command, ends when it does. Whatever else of ours ends meanwhile is reaped too: a thread we
 * traced that exited as we let go of it stays a zombie until its tracer reaps it, and its
 * process's leader cannot be reaped before (ebprof waited for the command forever, the
 * command a zombie: a SIGTERM after a Ctrl-C); a tracee that stops is let go with its signal.
 */
static void await_child(struct session *s)
{
	int status, sig;

	while (!s->child_reaped) {
		pid_t r = waitpid(-1, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;	/* nothing of ours left (ECHILD) */
		if (r == s->child && !WIFSTOPPED(status)) {
			s->child_status = status;
			s->child_reaped = true;
		} else if (WIFSTOPPED(status)) {
			target__classify(status, &sig);
			target__detach_stopped(r, sig);
		}
	}
	s->child_reaped = true;
}

/* -p of a thread that is not its process's (the BPF filters are by process: nothing of it
 * was traced), or of a zombie (nothing left to trace): both gave an empty report, exit 0. */
static int check_pid(struct session *s, pid_t pid)
{
	pid_t tgid = pid, ppid = 0;
	bool zombie = false;
	char comm[32];

	if (target__status(pid, &tgid, &ppid, &zombie))
		return 0;	/* gone meanwhile, or /proc unreadable: attach says why */
	target__comm(tgid, comm, sizeof(comm));
	if (tgid != pid) {
		pr_err(s->lc, "cannot attach to PID %d: it is a thread of process %d (%s); give -p %d, "
			      "which traces all its threads", pid, tgid, comm, tgid);
		return -EINVAL;
	}
	if (zombie) {
		pr_err(s->lc, "cannot attach to PID %d (%s): it has exited, and waits for its parent "
			      "(PID %d) to reap it (a zombie): nothing is left to trace", pid, comm,
		       ppid);
		return -ESRCH;
	}
	return 0;
}

static int setup_attach(struct session *s)
{
	for (int i = 0; i < s->o->npids; i++) {
		pid_t pid = s->o->pids[i];
		struct tgt *t;
		int err, st = -1;

		if (tgt_of(s, pid))
			continue;
		if (kill(pid, 0) && errno == ESRCH) {
			pr_err(s->lc, "cannot attach to PID %d: no such process", pid);
			return -ESRCH;
		}
		err = check_pid(s, pid);
		if (err)
			return err;
		if (!s->ops->kthreads && target__is_kthread(pid)) {
			char comm[32];

			target__comm(pid, comm, sizeof(comm));
			pr_err(s->lc, "cannot attach to PID %d (%s): it is a kernel thread, and "
				      "'ebprof %s' traces user processes only", pid, comm, s->ops->name);
			return -EINVAL;
		}
		t = tgt_add(s, pid);
		if (!t) {
			pr_err(s->lc, "out of memory");
			return -ENOMEM;
		}
		/* a mode that reads it at its exit (or stops it) holds it there if it can; a
		 * process already under a debugger still works, symbolized from the mappings read
		 * now. The others leave it alone (a pidfd tells its exit): under ptrace every
		 * signal it gets would stop it until ebprof let it go on. */
		if (!s->ops->ptrace_pid && !s->o->follow) {
			t->pidfd = syscall(SYS_pidfd_open, pid, 0);
			s->pidfd_upto = s->nt;
		} else if (target__seize(pid, s->o->follow) == 0) {
			t->traced = true;
		} else {
			pr_info(s->lc, "PID %d: cannot ptrace it (%s); its exit will not be held",
				pid, strerror(errno));
			t->pidfd = syscall(SYS_pidfd_open, pid, 0);
			s->pidfd_upto = s->nt;
		}
		err = s->ops->attach(s->m, pid, MODE_ATTACH_PID, &st);
		if (err == -ESRCH) {
			pr_err(s->lc, "cannot attach to PID %d: no such process", pid);
			return err;
		}
		if (err == -ENOENT) {
			pr_err(s->lc, "cannot attach to PID %d: %s", pid, why_untraceable(s, pid));
			return err;
		}
		if (err)
			return err;
	}
	return 0;
}

/* A launched command's release: the run starts here. Until now it was held at its exec while
 * the modes attached (0.5-1.2 s for profile's five on a machine at load 14), which is ebprof's
 * time, not the command's: a command asleep 1 s was 55-65% of such a run. The modes are told
 * (ops->started again): their rates and times count from here. */
static void release_start(struct session *s)
{
	s->start_mono = s->env.start_ns = util_mono_ns();
	s->start_wall = wall_ns();
	if (s->ops->started)
		s->ops->started(s->m, s->start_mono);
}

static int setup_launch(struct session *s)
{
	struct tgt *t;
	int status = -1, err;
	pid_t pid;

	err = target__spawn(s->lc, s->o->argv, &pid, &s->spawn_status);
	if (err)
		return err;
	s->child = pid;
	t = tgt_add(s, pid);
	if (!t) {
		kill(pid, SIGKILL);
		return -ENOMEM;
	}
	t->traced = true;
	t->ppid = getpid();
	err = s->ops->attach(s->m, pid, MODE_ATTACH_EXEC, &status);
	if (err == -ESRCH) {
		tgt_gone(s, t);
		t->done = true;
		s->child_status = status;
		s->child_reaped = true;
		return 0;
	}
	if (err == -ENOENT) {
		untraced(s, t, err);
		release_start(s);
		/* it may have stopped at its exit while the mode looked at it */
		return target__resume(pid, TARGET_STOP_OTHER, 0);
	}
	if (err) {
		kill(pid, SIGKILL);
		return err;
	}
	release_start(s);
	return target__resume(pid, TARGET_STOP_OTHER, 0);
}

/* One progress line on stderr, rewritten in place (only on a terminal, unless --quiet). */
static void progress(struct session *s)
{
	char el[32], text[256] = "";

	if (!s->progress)
		return;
	if (s->ops->progress)
		s->ops->progress(s->m, text, sizeof(text));
	fprintf(stderr, "\r\033[Kebprof: %s  %s",
		render__duration(util_mono_ns() - s->start_mono, el, sizeof(el)), text);
	s->progress_shown = true;
}

/* Continuous profiling: the window [win_from, until) goes to on_window, and the next one
 * starts at until. */
/* The files the symbolizer closed for its budget and could not open again since the last
 * call, into p (a window's or the run's profile): their frames are offsets, said. */
static void sym_drops(struct session *s, struct profile *p)
{
	struct symbolizer_stats st;

	symbolizer__stats(s->sym, &st);
	profile__add_drop(p, "symbol_file_gone", st.files_gone - s->sym_gone);
	if (st.files_gone > s->sym_gone)
		profile__add_note(p, "%" PRIu64 " object file%s closed to keep at most %u open "
				  "(EBPROF_MAX_OPEN_OBJECTS) could not be opened again (deleted "
				  "or replaced since, or %s process gone): %s frames are "
				  "offsets (symbol_file_gone)", st.files_gone - s->sym_gone,
				  st.files_gone - s->sym_gone == 1 ? "" : "s", s->sym_max_open,
				  st.files_gone - s->sym_gone == 1 ? "its" : "their",
				  st.files_gone - s->sym_gone == 1 ? "its" : "their");
	s->sym_gone = st.files_gone;
}

/* What symbolizing cost in files, at -v. */
static void sym_report(struct session *s)
{
	struct symbolizer_stats st;

	symbolizer__stats(s->sym, &st);
	pr_info(s->lc, "symbolizer: %" PRIu64 " object files opened (%" PRIu64 " again after "
		"being closed), at most %" PRIu64 " open at once (limit %u), %" PRIu64 " closed "
		"for the limit, %" PRIu64 " gone when needed again; %" PRIu64 " open at the end "
		"(%" PRIu64 " MiB)", st.opens, st.reopens, st.files_open_max, s->sym_max_open,
		st.closes, st.files_gone, st.files_open, st.bytes_open >> 20);
}

/* $EBPROF_MAX_OPEN_OBJECTS: how many object files the symbolizer keeps open at once (at
 * least 1; unset or not a number: SYM_MAX_OPEN_FILES, said when not a number). */
static unsigned sym_max_open_env(const struct log_ctx *lc)
{
	const char *v = getenv("EBPROF_MAX_OPEN_OBJECTS");
	unsigned long n;
	char *end;

	if (!v)
		return SYM_MAX_OPEN_FILES;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || !n || n > 1000000) {
		pr_warn(lc, "EBPROF_MAX_OPEN_OBJECTS=%s is not a number from 1 to 1000000; "
			"using %u", v, SYM_MAX_OPEN_FILES);
		return SYM_MAX_OPEN_FILES;
	}
	return (unsigned)n;
}

static void cut_window(struct session *s, int64_t until)
{
	struct profile *w = profile__new_like(s->prof);
	int err;

	if (!w) {
		pr_err(s->lc, "out of memory: a window is lost");
		goto next;
	}
	err = s->ops->window(s->m, w);
	if (err)
		pr_warn(s->lc, "reading the window failed: %s; it may be incomplete",
			strerror(-err));
	sym_drops(s, w);
	profile__set_meta(w, NULL, NULL, NULL, s->win_from, until - s->win_from);
	s->o->on_window(s->o->ctx, w, s->win_from, until);
next:
	s->win_from = until;
}

static void window_tick(struct session *s)
{
	int64_t period = (int64_t)(s->o->window_secs * 1e9), now = wall_ns();

	if (now < s->win_next)
		return;
	/* the boundary just passed (several, if the loop was held up: one longer window) */
	cut_window(s, now - now % period);
	s->win_next = s->win_from + period;
}

static void on_tick(struct session *s)
{
	bool second = ++s->ticks % (1000 / TICK_MS) == 0;

	if (s->ops->tick)
		s->ops->tick(s->m, util_mono_ns() - s->start_mono, second);
	if (s->o->on_window)
		window_tick(s);
	if (second && s->o->on_second)
		s->o->on_second(s->o->ctx);
	if (second)
		progress(s);
}

static int loop(struct session *s, int sfd, int tfd, int ifd)
{
	struct pollfd pfd[3 + SESSION_MAX_PIDS + 1];

	while (!s->stop && !all_done(s)) {
		int n = 0, map[SESSION_MAX_PIDS], ready, npid, wfd;
		uint64_t ticks;

		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = ifd, .events = POLLIN };
		for (int i = 0; i < s->pidfd_upto && n < 3 + SESSION_MAX_PIDS; i++) {
			if (s->t[i]->pidfd < 0 || s->t[i]->gone)
				continue;
			map[n - 3] = i;
			pfd[n++] = (struct pollfd){ .fd = s->t[i]->pidfd, .events = POLLIN };
		}
		npid = n;
		wfd = s->ops->wake_fd ? s->ops->wake_fd(s->m) : -1;
		if (wfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = wfd, .events = POLLIN };
		ready = poll(pfd, n, -1);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				on_signal(s, &si);
		}
		if ((pfd[1].revents & POLLIN) && read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks)) {
			pr_info(s->lc, "duration reached");
			s->stop = true;
		}
		if ((pfd[2].revents & POLLIN) && read(ifd, &ticks, sizeof(ticks)) == sizeof(ticks))
			on_tick(s);
		if (s->hup) {
			s->hup = false;
			s->o->on_hup(s->o->ctx);
		}
		if (s->inspect_now) {
			s->inspect_now = false;
			for (int i = 0; i < s->nt; i++)
				inspect(s, s->t[i], false);
		}
		if (wfd >= 0 && (pfd[npid].revents & POLLIN) && s->ops->wake)
			s->ops->wake(s->m);
		for (int k = 3; k < npid; k++) {
			struct tgt *t = s->t[map[k - 3]];

			if (!(pfd[k].revents & (POLLIN | POLLHUP)))
				continue;
			finalize(s, t);
			reaped(s, t->pid);
			tgt_gone(s, t);
		}
	}
	session__clear_progress(s);
	return 0;
}

static const struct output_ops *ops_for(const struct profile *p, const char *path)
{
	const struct output_ops *ops = path ? output__for_path(path) : &output_text;

	if (ops == &output_text && profile__is_diff(p))
		return &output_diff_text;
	return ops;
}

/* A run of several modes in a format that holds one: a file per part, named by its mode. */
static int write_parts(const struct log_ctx *lc, const struct profile *p,
		       const struct output_ops *ops, const struct output_opts *o, const char *path)
{
	char part[4096];
	int rc = 0, err;

	for (uint32_t i = 0; i < p->nparts; i++) {
		err = output__part_path(path, p->parts[i]->mode, part, sizeof(part));
		if (!err)
			err = output__write_path(ops, p->parts[i], o, part);
		if (err) {
			pr_err(lc, "cannot write '%s': %s", part, strerror(-err));
			rc = 1;
		} else {
			pr_info(lc, "wrote %s", part);
		}
	}
	return rc;
}

/* Does the format show the profile's drops (and the notes that say what each left out)? */
static bool shows_drops(const struct output_ops *ops)
{
	return ops == &output_text || ops == &output_diff_text || ops == &output_json ||
	       ops == &output_html || ops == &output_pprof;
}

/* "unwind_truncated 283, ..." of p's drops that are not 0 (a part's after its mode), appended
 * to buf; how many there were. */
static uint32_t list_drops(const struct profile *p, bool part, char *buf, size_t len,
			   size_t *at)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->ndrops; i++) {
		int w;

		if (!p->drops[i].value || *at >= len)
			continue;
		w = snprintf(buf + *at, len - *at, "%s%s%s%s %" PRIu64, *at ? ", " : "",
			     part ? p->mode : "", part ? " " : "", p->drops[i].key,
			     p->drops[i].value);
		*at += w > 0 ? (size_t)w : 0;
		n++;
	}
	for (uint32_t k = 0; k < p->nparts; k++)
		n += list_drops(p->parts[k], true, buf, len, at);
	return n;
}

/* Folded stacks, a flame graph, speedscope and CSV have no place for the drops: when those
 * are all that was written, the drops are said here, never silent. */
static void warn_unshown_drops(const struct log_ctx *lc, const struct profile *p,
			       char *const *paths, int npaths)
{
	char list[1024];
	size_t at = 0;

	for (int i = 0; i < npaths; i++)
		if (shows_drops(ops_for(p, paths[i])))
			return;
	if (!list_drops(p, false, list, sizeof(list), &at))
		return;
	if (at >= sizeof(list))
		strcpy(list + sizeof(list) - 5, "...");
	pr_warn(lc, "the output%s written cannot show the drops (%s): a .txt, .json or .html "
		"report says what each left out", npaths == 1 ? "" : "s", list);
}

int session__write_outputs(const struct log_ctx *lc, const struct profile *p,
			   const struct output_opts *o, char *const *paths, int npaths)
{
	int rc = 0, i, err;

	if (!npaths) {
		err = output__write_path(ops_for(p, NULL), p, o, "-");
		if (err)
			pr_err(lc, "cannot write the report to standard output: %s",
			       strerror(-err));
		return err ? 1 : 0;
	}
	for (i = 0; i < npaths; i++) {
		if (p->nparts && !output__shows_parts(ops_for(p, paths[i]))) {
			if (write_parts(lc, p, ops_for(p, paths[i]), o, paths[i]))
				rc = 1;
			continue;
		}
		err = output__write_path(ops_for(p, paths[i]), p, o, paths[i]);
		if (err) {
			pr_err(lc, "cannot write '%s': %s", paths[i], strerror(-err));
			rc = 1;
		} else {
			pr_info(lc, "wrote %s", paths[i]);
		}
	}
	if (!rc)
		warn_unshown_drops(lc, p, paths, npaths);
	return rc;
}

int session__check_outputs(const struct log_ctx *lc, char *const *paths, int npaths)
{
	char why[256];

	for (int i = 0; i < npaths; i++) {
		if (!output__check_path(paths[i], why, sizeof(why)))
			continue;
		fprintf(stderr, "%s: cannot write the report to '%s': %s\n", lc->prog, paths[i],
			why);
		return 2;
	}
	return 0;
}

/* An output that failed at the end (its directory removed, the disk full): the profile is
 * saved as a pprof where it can be found, $TMPDIR or /tmp, else the current directory, so
 * the run is not lost; 'ebprof report' renders it in any format. */
static void save_fallback(struct session *s)
{
	const char *dirs[] = { getenv("TMPDIR"), "/tmp", "." };
	char path[4096];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/ebprof-%s-%d.pb.gz", dirs[i], s->ops->name,
			 (int)getpid());
		/* a run of several modes: ebprof-profile-PID.MODE.pb.gz, one per mode */
		if (s->prof->nparts ? write_parts(s->lc, s->prof, &output_pprof, &s->o->out, path)
				    : output__write_path(&output_pprof, s->prof, &s->o->out, path))
			continue;
		if (s->prof->nparts)
			pr_err(s->lc, "the profiles are saved in %.*s.MODE.pb.gz, one per mode; "
			       "'ebprof report FILE -o OUT' writes one in any format",
			       (int)strlen(path) - 6, path);
		else
			pr_err(s->lc, "the profile is saved in %s; 'ebprof report %s -o FILE' writes "
			       "it in any format", path, path);
		return;
	}
	pr_err(s->lc, "the profile could not be saved anywhere ($TMPDIR, /tmp, the current "
	       "directory)");
}

/* A report for a program (folded stacks, JSON, pprof) to standard output while a launched
 * command writes there too: the command's output
 * lands in the same stream before the report (cpuburn's "cpu_ms 500" became a frame of the
 * flame graph that flamegraph.pl drew from 'folded:-'). Said before it runs. */
static void warn_shared_stdout(const struct log_ctx *lc, const struct session_opts *so)
{
	for (int i = 0; so->argv && i < so->noutputs; i++) {
		const char *f = output__file(so->outputs[i]);

		/* a text report after the command's output is how a terminal shows it */
		if ((strcmp(f, "-") && strcmp(f, "/dev/stdout")) ||
		    output__for_path(so->outputs[i]) == &output_text)
			continue;
		pr_warn(lc, "the command writes to the standard output that '%s' writes the report to: "
			"its output comes first, in the same stream; send it elsewhere (e.g. -- sh -c "
			"'CMD > out.txt') or write the report to a file", so->outputs[i]);
		return;
	}
}

/* --value must name one of the mode's sample types. */
static int check_value(struct session *s)
{
	const char *v = s->o->out.value_type;
	char list[512] = "";
	size_t len = 0;

	if (!v || profile__type_index(s->prof, v) >= 0)
		return 0;
	for (uint32_t i = 0; i < s->prof->ntypes && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				s->prof->types[i].type);
	fprintf(stderr, "%s: invalid --value '%s' (the %s mode's sample types: %s)\n"
		"Try 'ebprof %s --help'.\n",
		s->lc->prog, v, s->ops->name, list, s->ops->name);
	return 2;
}

int session__run(const struct session_opts *so, const struct mode_ops *ops, void *mode_opts,
		 const struct log_ctx *lc)
{
	struct session s = { .o = so, .ops = ops, .lc = lc };
	int rc, err, sfd = -1, tfd = -1, ifd = -1, verdict = 0;
	char *command = NULL, *self = NULL;
	struct symbolizer_opts symo = { .cache_dir = sym_cache_dir(),
					.max_open_files = sym_max_open_env(lc) };
	struct utsname u;
	sigset_t mask;

	rc = session__check_outputs(lc, (char *const *)so->outputs, so->noutputs);
	if (rc)
		return rc;
	warn_shared_stdout(lc, so);
	if (preflight__check(lc, ops->preflight | (so->npids || so->all ? PREFLIGHT_PTRACE : 0)))
		return 1;

	/* signals arrive as data; the launched command restores the default mask before exec */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ifd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || tfd < 0 || ifd < 0) {
		pr_err(lc, "cannot set up signal handling: %s", strerror(errno));
		rc = 1;
		goto out;
	}

	rc = 1;
	s.sym = symbolizer__new(&symo);
	s.sym_max_open = symo.max_open_files;
	s.prof = profile__new(ops->name);
	if (!s.sym || !s.prof) {
		pr_err(lc, "out of memory");
		goto out;
	}
	s.env = (struct session_env){
		.lc = lc, .prof = s.prof, .sym = s.sym, .all = so->all, .follow = so->follow,
		.windows = so->on_window != NULL, .unwind = so->unwind,
		.argv = so->argv, .s = &s,
	};
	s.progress = !so->quiet && isatty(STDERR_FILENO);
	if (so->argv && !so->all && so->unwind != UNWIND_FP)
		unwind__plan_launch(so->argv);	/* the rows maps' size, before the modes load */
	unwind__set_limits(so->unwind_procs, so->unwind_queue, so->unwind_rows);
	s.start_mono = s.env.start_ns = util_mono_ns();
	s.start_wall = wall_ns();
	s.m = ops->open(&s.env, mode_opts);
	if (!s.m)
		goto out;
	rc = check_value(&s);
	if (rc)
		goto out;
	rc = 1;
	/* the run starts now, not when the modes began to load: `ebprof profile` verifies
	 * programs for ~0.5 s, and its findings' shares of the run were diluted by that */
	s.start_mono = s.env.start_ns = util_mono_ns();
	s.start_wall = wall_ns();
	if (ops->started)
		ops->started(s.m, s.start_mono);
	if (so->on_window && !ops->window) {
		pr_err(lc, "'ebprof %s' cannot profile continuously (it has no window hook)",
		       ops->name);
		goto out;
	}
	if (so->all && !ops->attach_all) {
		pr_err(lc, "-a is not supported by 'ebprof %s'", ops->name);
		goto out;
	}
	err = so->argv ? setup_launch(&s) : so->all ? ops->attach_all(s.m) : setup_attach(&s);
	if (err) {
		if (so->argv && s.spawn_status)
			rc = s.spawn_status;
		/* attach: what was attached is detached below; nothing is reported */
		goto out;
	}
	if (so->duration > 0) {
		struct itimerspec its = {};

		its.it_value.tv_sec = (time_t)so->duration;
		its.it_value.tv_nsec = (long)((so->duration - (time_t)so->duration) * 1e9);
		timerfd_settime(tfd, 0, &its, NULL);
	}
	{
		/* ticks land 1 ms past each multiple of the tick in wall time, so that a
		 * continuous profile's window is read at its boundary, not up to a tick after
		 * it with that tick's samples in it (windows are aligned on whole seconds) */
		int64_t phase = TICK_MS * 1000000L - wall_ns() % (TICK_MS * 1000000L) + 1000000L;
		struct itimerspec tick = {
			.it_interval = { .tv_nsec = TICK_MS * 1000000L },
			.it_value = { .tv_sec = phase / 1000000000L, .tv_nsec = phase % 1000000000L },
		};

		timerfd_settime(ifd, 0, &tick, NULL);
	}
	if (so->on_window) {
		int64_t period = (int64_t)(so->window_secs * 1e9);

		/* the first window starts with the run: the modes count from their attach, above */
		s.win_from = s.start_wall;
		s.win_next = s.win_from - s.win_from % period + period;
	}
	s.stop = false;
	err = loop(&s, sfd, tfd, ifd);
	if (err)
		pr_err(lc, "waiting for events failed: %s", strerror(-err));
	s.end_mono = util_mono_ns();	/* the run's end: what follows reads it out */
	/* every traced process ended: the run ended with the last one's exit, before its
	 * read-out and reaping */
	if (!err && !s.stop && all_done(&s) && s.exit_mono > s.start_mono)
		s.end_mono = s.exit_mono;
	reused_note(&s);

	/* everything still running is read out now, while its mappings are live */
	s.stop = true;
	for (int i = 0; i < s.nt; i++)
		inspect(&s, s.t[i], false);
	if (ops->stop)
		ops->stop(s.m);
	for (int i = 0; i < s.nt; i++) {
		settle(&s, s.t[i]);
		finalize(&s, s.t[i]);
	}
	if (so->on_window)
		cut_window(&s, wall_ns());	/* the last one, cut short */
	/* before finish, which may use the run's duration (profile's findings) */
	uname(&u);
	/* as a shell reads them back: the words the command was given, on one line */
	command = so->argv ? util_shell_join(so->self_argc - (int)(so->argv - so->self_argv),
					     so->argv) : NULL;
	self = util_shell_join(so->self_argc, so->self_argv);
	profile__set_meta(s.prof, command, u.release, self, s.start_wall,
			  (int64_t)(s.end_mono - s.start_mono));
	if (ops->finish)
		ops->finish(s.m);
	sym_report(&s);
	if (so->on_window) {
		windows_leftover(&s);
		rc = 0;		/* the windows were the outputs */
		goto out;
	}

	sym_drops(&s, s.prof);
	rc = so->no_report ? 0 : session__write_outputs(lc, s.prof, &so->out,
						       (char *const *)so->outputs, so->noutputs);
	if (rc)
		save_fallback(&s);
	if (rc == 0 && ops->verdict)
		verdict = ops->verdict(s.m);

out:
	/* no probe left behind, no process left stopped */
	if (s.m && ops->detach)
		ops->detach(s.m);
	release_all(&s);
	for (int i = 0; i < s.nt; i++) {
		if (s.t[i]->pidfd >= 0)
			close(s.t[i]->pidfd);
		free(s.t[i]);
	}
	free(s.t);
	pid_index__free(&s.by_pid);
	free(s.thr);
	/* all released before a wait for the command (-d: it runs on untraced), which may last:
	 * an agent kept its 3 GB and every BPF map while it waited (sweep K, 2) */
	if (s.m)
		ops->close(s.m);
	symbolizer__free(s.sym);
	profile__free(s.prof);
	if (so->on_end)
		so->on_end(so->ctx);
	if (s.child && !s.child_reaped) {
		malloc_trim(0);	/* the freed heap's pages back to the system */
		pr_info(lc, "tracing is over; waiting for PID %d, which runs on untraced", s.child);
		await_child(&s);
	}
	if (s.child && s.child_reaped && rc == 0)
		rc = target__exit_code(s.child_status);
	if (verdict)
		rc = verdict;
	free(command);
	free(self);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (ifd >= 0)
		close(ifd);
	return rc;
}
