/* Traced processes: launching a command under ptrace, seizing running PIDs, holding them at
 * exit so their mappings can still be read, and classifying wait statuses. */
#ifndef EBPROF_TARGET_H
#define EBPROF_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/log.h"

/* Resolve argv[0] through PATH like execvp, fork, seize the child and let it exec. On return
 * the child is stopped right after its exec. It is traced with its descendants: the
 * processes and threads it creates start traced and stopped (see target__seize). Returns 0, or a
 * negative errno after printing why, with *exit_code the status to end with, as a shell's: 127
 * (command not found), 126 (found but cannot be executed: no permission, no executable format,
 * a directory), or 1 (ebprof itself failed: fork, ptrace). The signal mask in force is
 * restored in the child before exec. */
int target__spawn(const struct log_ctx *lc, char *const argv[], pid_t *pid, int *exit_code);
/* ebprof's own open-file limit raised to its hard limit, once, at start: it keeps a file open
 * per object it symbolizes and per probe, and systemd's default soft limit is 1024; a
 * launched command gets the limit ebprof had (target__spawn puts it back before the exec). */
void target__raise_nofile(void);

/* cmd's file as target__spawn finds it (through PATH without a '/') into out: 0 or a negative
 * errno (-ENOENT, -EACCES, -EISDIR) */
int target__find(const char *cmd, char *out, size_t len);

/* Seize a running process without stopping it, so that its exit and exec stop it (its
 * mappings are still there to read; a new program gets its probes) and a mode can step it
 * system call by system call. `follow`: the processes it creates (fork, vfork,
 * clone) start traced and stopped, as a launched command's do; so do its new threads, which
 * the caller should detach. Returns 0 or a negative errno. */
int target__seize(pid_t pid, bool follow);

enum target_stop {
	TARGET_STOP_EXIT,	/* PTRACE_EVENT_EXIT: exiting, mappings still readable */
	TARGET_STOP_EXEC,	/* PTRACE_EVENT_EXEC: a new program image */
	TARGET_STOP_SIGNAL,	/* signal-delivery stop: resume with the signal */
	TARGET_STOP_GROUP,	/* group stop (SIGSTOP etc.): PTRACE_LISTEN */
	TARGET_STOP_OTHER,	/* anything else: resume */
	TARGET_GONE,		/* exited or killed: status is final */
};

enum target_stop target__classify(int status, int *sig);
/* Resume a stopped tracee as its stop requires. */
int target__resume(pid_t pid, enum target_stop how, int sig);
/* Let a tracee that is in a stop go, delivering sig (0: none). 0 or a negative errno. */
int target__detach_stopped(pid_t pid, int sig);

/* Exit code a shell would give for a wait status (status, or 128 + signal). */
int target__exit_code(int status);

/* Is pid a kernel thread (kthreadd, kworkers: no user memory, no mappings)? */
bool target__is_kthread(pid_t pid);
/* What pid is, from /proc/PID/status: its process (Tgid; pid itself for a process, its
 * process's for another thread), its parent, and whether it is a zombie (it exited and its
 * parent has not reaped it). -errno when it cannot be read. */
int target__status(pid_t pid, pid_t *tgid, pid_t *ppid, bool *zombie);

/* comm and command line (argv joined by spaces) of a live process; buffers always terminated. */
void target__comm(pid_t pid, char *comm, size_t len);
void target__cmdline(pid_t pid, char *buf, size_t len);

/* From /proc/PID/status: the thread group (a thread's process), the parent, and the PID in
 * the innermost PID namespace (== pid when the process is in ours). 0 or a negative errno. */
int target__ids(pid_t pid, pid_t *tgid, pid_t *ppid, pid_t *ns_pid);

/* Every thread of a process stopped for a memory scan, with its registers. */
#define TARGET_NREGS 16		/* rax rbx rcx rdx rsi rdi rbp rsp r8..r15 */

struct target_thread {
	pid_t tid;
	bool have_regs;
	bool seized;		/* ptrace-attached for the freeze only: detached by thaw */
	bool ours;		/* traced already (a followed tree's thread): resumed by thaw */
	int resume_how;		/* enum target_stop of its stop, for resuming an `ours` thread */
	int resume_sig;		/* a signal its stop swallowed, delivered on thaw */
	uint64_t regs[TARGET_NREGS];
	uint64_t sp;
};

struct target_frozen {
	pid_t pid;
	struct target_thread *t;
	size_t n;
	bool leader_interrupted;	/* thaw resumes the leader */
	bool leader_event;		/* the leader stopped for an event of its own instead */
	int leader_status;		/* ... with this wait status, for the caller to handle */
	uint64_t stopped_ns;		/* CLOCK_MONOTONIC when every thread was stopped */
};

/* tid, a thread we trace, at its exit stop: its final registers and stack pointer, and
 * whether it dies with its whole process (exit_group, a fatal signal, another thread's exec)
 * rather than by ending itself (pthread_exit). 0 or a negative errno. */
int target__exit_regs(pid_t tid, struct target_thread *th, bool *with_process);

/*
 * Stop every thread of pid and read its registers. `leader_stopped`: pid is our tracee and
 * already stopped (at its exit); otherwise a tracee leader is interrupted, and if it stops for
 * an event of its own (exit, exec, a signal) that status is kept in leader_event/leader_status
 * for the caller (after thaw) instead of being lost. Threads that are not ours are seized for
 * the duration. Threads that exit meanwhile are skipped; threads whose registers cannot be read
 * have have_regs false. Returns 0 or a negative errno.
 */
int target__freeze(pid_t pid, bool leader_stopped, struct target_frozen *f);
/* Let every thread frozen by target__freeze run again (not a leader that was already stopped,
 * nor one whose own event the caller still has to handle). */
void target__thaw(struct target_frozen *f);

#endif
