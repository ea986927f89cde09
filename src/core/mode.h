/* The contract between the session (core/session.c: targets, the run loop, signals, progress,
 * outputs) and a mode's collector (src/modes/<mode>/): what a new mode implements, and nothing
 * else. The lifecycle, in the spirit of perf's util/lock-contention.h:
 *
 *   open (load BPF, init the profile's sample types)
 *   -> attach (each target: launched, -p, new children; or attach_all for -a)
 *   -> tick (every 100 ms while tracing)
 *   -> window (any time while tracing, for live views and continuous profiling: what was
 *      counted since the last one)
 *   -> finalize (a process at its exit stop, before an exec, or at the end)
 *   -> stop (tracing ends: probes off) -> finish (drops, what is left) -> outputs
 *   -> detach -> close
 *
 * Every hook but open and close may be NULL when the mode has nothing to do there. Hooks report
 * their own errors (pr_err) and return negative errnos.
 */
#ifndef EBPROF_MODE_H
#define EBPROF_MODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/log.h"

struct profile;
struct symbolizer;
struct session;

/* What the session gives a mode: valid from open to close. */
struct session_env {
	const struct log_ctx *lc;
	struct profile *prof;		/* the run's profile (mode = the mode's name) */
	struct symbolizer *sym;		/* one symbolizer for the run */
	/* CLOCK_MONOTONIC when the run starts: once the modes are open (their BPF loaded and
	 * verified), before anything is attached; told to the modes by started(). Until then
	 * (in open) the moment open was called. Series, rates, windows and the run's duration
	 * count from it. */
	uint64_t start_ns;
	bool all;			/* -a */
	bool follow;			/* -p with --follow */
	bool windows;			/* the run is cut into windows (mode_ops.window): what a
					 * mode counts goes there, never into prof */
	int unwind;			/* --unwind: enum unwind_how (core/unwind.h) */
	char *const *argv;		/* the launched command, or NULL */
	struct session *s;		/* for session__clear_progress, session__stopping */
};

enum mode_attach {
	/* a launched command, or a traced process that exec'd a new program: stopped right
	 * after its exec, under ptrace; the mode may step it (mem runs it to its allocator) */
	MODE_ATTACH_EXEC,
	/* -p: a running process (ptrace-seized if possible, not stopped) */
	MODE_ATTACH_PID,
	/* a new process of a traced tree (fork, clone), stopped before its first instruction,
	 * running its parent's program */
	MODE_ATTACH_CHILD,
};

struct mode_ops {
	const char *name;		/* "mem", "cpu", ... (the profile's mode) */
	unsigned preflight;		/* what it needs beyond privileges and BTF (PREFLIGHT_*) */
	bool kthreads;			/* -p may name a kernel thread (cpu samples them) */
	/* -p's processes are kept under ptrace for the whole run: their exits and execs stop so
	 * that the mode reads them there, and it stops them itself (mem: the leak scan, the
	 * loader's holds). Without it (and without --follow, whose forks need the tracer) a -p
	 * process is not ptraced: it runs as it would untraced (no stop at each signal it gets,
	 * a debugger or strace can attach), its exit is seen through a pidfd, and the mode reads
	 * it from the snapshots of its mappings taken while it ran. */
	bool ptrace_pid;
	/* A new process of a traced tree that shares its parent's memory until it execs (vfork,
	 * posix_spawn) is attached at its birth like any child: its events are its own, its user
	 * stacks in its parent's image. Without it (mem: its probes would be its parent's
	 * memory's) such a child is traced from its exec: a sampling mode lost its exec's own
	 * time (dash runs its commands by vfork: 12% of a script's CPU). */
	bool vfork_children;

	/* Load the BPF side, set the profile's sample types and notes. opts: the mode's own
	 * parsed options. NULL on failure (reported). */
	void *(*open)(const struct session_env *env, void *opts);
	void (*close)(void *m);

	/*
	 * Trace pid. Returns 0; -ENOENT: this mode cannot trace this process (the session warns
	 * with why_untraceable's phrase and lets it run untraced; fatal for -p); -ESRCH: it
	 * exited while the mode prepared it (*status gets its wait status when it was a stopped
	 * tracee, else -1); any other negative errno is fatal for launch and -p (reported by the
	 * mode) and skips a child.
	 */
	int (*attach)(void *m, pid_t pid, enum mode_attach how, int *status);
	/* Why pid cannot be traced, as a phrase ("a Go program ..."); NULL: "not supported". */
	const char *(*why_untraceable)(void *m, pid_t pid);
	/* -a: trace every process (and the kernel, for modes that can). NULL: -a unsupported. */
	int (*attach_all)(void *m);

	/* Every 100 ms (t_ns since start_ns); `second`: once a second (re-read mappings, adopt
	 * processes seen system-wide, report those gone). */
	void (*tick)(void *m, int64_t t_ns, bool second);
	/* An fd the session polls besides its own (-1: none), and what to do when it is readable:
	 * the unwinder's news of code mapped since its tables were loaded (core/unwind.h). */
	int (*wake_fd)(void *m);
	void (*wake)(void *m);
	/* The progress line's text after the elapsed time, e.g. "1234 samples  drops 0". */
	void (*progress)(void *m, char *buf, size_t len);

	/* pid stopped (at_exit: held at its exit stop; else stopped by the mode itself now, as the
	 * run ends or on SIGUSR1) for an inspection of its memory: mem's leak scan. Called only
	 * when session_opts.inspect is set. *leader_status: a wait status the process reported
	 * meanwhile (its exit), for the session to handle, or -1. */
	int (*inspect)(void *m, pid_t pid, bool at_exit, int *leader_status);
	/* tid, a thread of pid that the session traces (a followed process's: a launched
	 * command's or -p --follow's new threads), is held at its exit stop: its registers can be
	 * read now, and not after. Threads killed with their process (exit_group) stop before
	 * their leader does or after, in any order; a thread the inspection at the leader's exit
	 * no longer finds is known only from this. */
	void (*thread_exit)(void *m, pid_t pid, pid_t tid);
	/* tid, a thread of pid that the session traces, stopped for UNWIND_HOLD_SIG: true when
	 * the mode's unwinder held it at the loader's hook (abi/unwind.h, unwinder__held) and has
	 * loaded its new code; the session then resumes it without the signal. NULL: never. */
	bool (*held)(void *m, pid_t pid, pid_t tid);

	/*
	 * Move what was counted since the last window (or the start) into `into`, a new empty
	 * profile, and start the next window: the mode's sample types (as open sets them on the
	 * run's profile), the samples, the processes with their stats, the drops counted in the
	 * window, its length in duration_nanos (from the start of counting, for the first) and
	 * as the run fact "window" ("1.00 s"). Counting goes on; what
	 * a window took is not in the run's profile at the end. Over a long run the mode keeps
	 * its tables from filling (processes gone, stacks no longer used). A sample the kernel
	 * counts while a window is taken lands in this window or the next; one that lands
	 * between the read and the delete of its counter can be lost (not counted twice). For
	 * live views (ebprof top, every interval) and continuous profiling (ebprof agent, every
	 * period and once more after stop). NULL: the mode has no windows. 0 or a negative
	 * errno.
	 */
	int (*window)(void *m, struct profile *into);

	/* Read pid out into the profile, while its mappings are still readable; `exec`: its old
	 * program is being replaced (the new one is attached next). */
	void (*finalize)(void *m, pid_t pid, bool exec);
	/* pid has ended: release its probes (without waiting for it). Called at its exit stop,
	 * and again when it is gone. */
	void (*retire)(void *m, pid_t pid);
	/* pid is gone (its exit was reported to the session): its number may come back as
	 * another process from now on. Between its exit stop and this, the kernel's exit path
	 * runs in it (exit_mmap, sched_process_exit): a mode whose events happen there keeps
	 * counting them for pid until this. */
	void (*reaped)(void *m, pid_t pid);

	/* The run starts now, at start_ns (session_env.start_ns): after open, before anything
	 * is attached. A mode that keeps its own copy of the session_env updates it. NULL: the
	 * mode reads the session's env through a pointer. */
	void (*started)(void *m, uint64_t start_ns);
	/* Tracing ends: stop counting (take probes off), before the remaining processes are
	 * finalized. */
	void (*stop)(void *m);
	/* After they are: processes known only to the mode (-a), drops, notes. */
	void (*finish)(void *m);
	/* After the outputs are written: an exit status that replaces 0 (mem's --fail-on-leak),
	 * or 0. */
	int (*verdict)(void *m);
	/* Remove every probe (no probe is left behind on any path). */
	void (*detach)(void *m);
};

#endif
