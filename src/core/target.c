/* Traced processes, for every mode.
 *
 * A launched command is seized before it execs (it waits on a pipe until then), so the first
 * stop we see is its exec: whatever the forked child does before exec is ebprof's, not the
 * command's. Exits are held (PTRACE_O_TRACEEXIT) so /proc/PID/maps is still there to symbolize
 * with. Nothing here knows what a mode traces (mem's "run until the allocator is mapped" is
 * modes/mem/ready.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <elf.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/target.h"
#include "util/util.h"

#define TRACE_OPTS (PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD)
/* New processes start traced and stopped: probes go in before they run. clone() of a thread
 * attaches it too (ptrace cannot tell them apart up front); the run loop lets threads go. */
#define FOLLOW_OPTS (PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE)

int target__find(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");
	int err = -ENOENT;
	struct stat st;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		if (stat(out, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(out, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int n = end - path;

		snprintf(out, len, "%.*s/%s", n ? n : 1, n ? path : ".", cmd);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			err = -EACCES;
		}
		path = *end ? end + 1 : end;
	}
	return err;
}

/* A shell's exit status for a command that could not be run: 127 when it does not exist, 126
 * when it exists but cannot be executed (no permission, no executable format, a directory). */
static int cannot_run_status(int err)
{
	return err == -ENOENT ? 127 : 126;
}

static struct rlimit nofile_before;	/* rlim_cur 0: not raised */

void target__raise_nofile(void)
{
	struct rlimit r;

	if (nofile_before.rlim_cur || getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur >= r.rlim_max)
		return;
	nofile_before = r;
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r))
		nofile_before.rlim_cur = 0;
}

int target__spawn(const struct log_ctx *lc, char *const argv[], pid_t *pidp, int *exit_code)
{
	char exe[4096];
	int go[2], errp[2], status, child_err = 0, err;
	pid_t pid;

	*exit_code = 1;
	err = target__find(argv[0], exe, sizeof(exe));
	if (err == -ENOENT && !strchr(argv[0], '/')) {
		pr_err(lc, "cannot run '%s': command not found", argv[0]);
		*exit_code = 127;
		return err;
	}
	if (err) {
		pr_err(lc, "cannot run '%s': %s", argv[0], strerror(-err));
		*exit_code = cannot_run_status(err);
		return err;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		pr_err(lc, "cannot create a pipe: %s", strerror(errno));
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		pr_err(lc, "cannot fork: %s", strerror(errno));
		close(go[0]); close(go[1]); close(errp[0]); close(errp[1]);
		return err;
	}
	if (pid == 0) {
		char c;
		sigset_t none;

		close(go[1]);
		close(errp[0]);
		/* the caller blocks signals it reads through signalfd; the command must not */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		/* the command's own open-file limit, not ebprof's raised one (select() and its
		 * FD_SETSIZE of 1024) */
		if (nofile_before.rlim_cur)
			setrlimit(RLIMIT_NOFILE, &nofile_before);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execv(exe, argv);
		c = errno;
		if (write(errp[1], &c, 1) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTS | FOLLOW_OPTS)) {
		err = -errno;
		pr_err(lc, "cannot trace the command (ptrace: %s)%s", strerror(errno),
		       errno == EPERM ? "; is ptrace restricted (kernel.yama.ptrace_scope)?" : "");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(go[1]); close(errp[0]);
		return err;
	}
	if (write(go[1], "g", 1) != 1)
		child_err = EPIPE;
	close(go[1]);

	for (;;) {
		if (waitpid(pid, &status, __WALL) < 0) {
			err = -errno;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			char c = 0;

			if (read(errp[0], &c, 1) == 1)
				child_err = c;
			err = -(child_err ? child_err : ENOEXEC);
			if (err == -ENOENT)
				pr_err(lc, "cannot run '%s': the interpreter its #! line names, or "
					   "the dynamic loader it needs, does not exist", argv[0]);
			else
				pr_err(lc, "cannot run '%s': %s", argv[0], strerror(-err));
			/* it was found: even ENOENT here is a missing interpreter or loader */
			*exit_code = 126;
			break;
		}
		if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
			err = 0;
			break;
		}
		/* the exit stop of a failed exec, or a stray stop before exec: keep going */
		ptrace(PTRACE_CONT, pid, 0, WIFSTOPPED(status) && (status >> 16) == 0 &&
		       WSTOPSIG(status) != SIGTRAP ? WSTOPSIG(status) : 0);
	}
	close(errp[0]);
	if (err == 0) {
		*pidp = pid;
		*exit_code = 0;
	}
	return err;
}

int target__seize(pid_t pid, bool follow)
{
	return ptrace(PTRACE_SEIZE, pid, 0, TRACE_OPTS | (follow ? FOLLOW_OPTS : 0)) ? -errno : 0;
}

enum target_stop target__classify(int status, int *sig)
{
	*sig = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return TARGET_GONE;
	if (!WIFSTOPPED(status))
		return TARGET_STOP_OTHER;
	switch (status >> 16) {
	case PTRACE_EVENT_EXIT:
		return TARGET_STOP_EXIT;
	case PTRACE_EVENT_EXEC:
		return TARGET_STOP_EXEC;
	case PTRACE_EVENT_STOP:
		/* with PTRACE_SEIZE, a group stop reports as PTRACE_EVENT_STOP with a stop signal */
		switch (WSTOPSIG(status)) {
		case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
			return TARGET_STOP_GROUP;
		}
		return TARGET_STOP_OTHER;
	case 0:
		if (WSTOPSIG(status) == (SIGTRAP | 0x80))
			return TARGET_STOP_OTHER;
		*sig = WSTOPSIG(status);
		return TARGET_STOP_SIGNAL;
	}
	return TARGET_STOP_OTHER;
}

int target__resume(pid_t pid, enum target_stop how, int sig)
{
	long r;

	if (how == TARGET_STOP_GROUP)
		r = ptrace(PTRACE_LISTEN, pid, 0, 0);
	else
		r = ptrace(PTRACE_CONT, pid, 0, how == TARGET_STOP_SIGNAL ? sig : 0);
	return r ? -errno : 0;
}

int target__detach_stopped(pid_t pid, int sig)
{
	return ptrace(PTRACE_DETACH, pid, 0, sig) ? -errno : 0;
}

int target__exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

void target__comm(pid_t pid, char *comm, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, len - 1);
		close(fd);
	}
	if (n <= 0)
		n = snprintf(comm, len, "?");
	comm[n] = 0;
	if (n && comm[n - 1] == '\n')
		comm[n - 1] = 0;
}

void target__cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	buf[n] = 0;
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
}

int target__ids(pid_t pid, pid_t *tgid, pid_t *ppid, pid_t *ns_pid)
{
	char path[64], line[256];
	FILE *f;

	*tgid = *ppid = 0;
	*ns_pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Tgid:", 5))
			*tgid = atoi(line + 5);
		else if (!strncmp(line, "PPid:", 5))
			*ppid = atoi(line + 5);
		else if (!strncmp(line, "NSpid:", 6)) {
			/* host PID first, then one per nested namespace: the last is its own */
			char *p = line + 6, *end;

			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				*ns_pid = v;
				p = end;
			}
		}
	}
	fclose(f);
	return *tgid ? 0 : -ESRCH;
}

/* ---- stopping a whole process for a memory scan ----------------------------------------- */

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void copy_regs(struct target_thread *th, const struct user_regs_struct *rp)
{
	const struct user_regs_struct r = *rp;

	th->regs[0] = r.rax;
	th->regs[1] = r.rbx;
	th->regs[2] = r.rcx;
	th->regs[3] = r.rdx;
	th->regs[4] = r.rsi;
	th->regs[5] = r.rdi;
	th->regs[6] = r.rbp;
	th->regs[7] = r.rsp;
	th->regs[8] = r.r8;
	th->regs[9] = r.r9;
	th->regs[10] = r.r10;
	th->regs[11] = r.r11;
	th->regs[12] = r.r12;
	th->regs[13] = r.r13;
	th->regs[14] = r.r14;
	th->regs[15] = r.r15;
	th->sp = r.rsp;
	th->have_regs = true;
}

static void read_regs(struct target_thread *th)
{
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &r) == 0)
		copy_regs(th, &r);
}

int target__exit_regs(pid_t tid, struct target_thread *th, bool *with_process)
{
	struct user_regs_struct r;

	memset(th, 0, sizeof(*th));
	th->tid = tid;
	if (ptrace(PTRACE_GETREGS, tid, 0, &r))
		return -errno;
	copy_regs(th, &r);
	/* the system call it was in: a thread ending on its own is in exit(); one in any other
	 * (exit_group included) or in none was killed with its process */
	*with_process = r.orig_rax != SYS_exit;
	return 0;
}

/* Wait for tid's next stop; 1 stopped (*status), 0 gone, negative errno. */
static int wait_stop(pid_t tid, int *status)
{
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return 0;
		if (WIFSTOPPED(*status))
			return 1;
	}
}

static int freeze_leader(struct target_frozen *f, struct target_thread *th)
{
	int status, sig, rc;
	enum target_stop how;

	if (ptrace(PTRACE_INTERRUPT, f->pid, 0, 0))
		return -errno;
	rc = wait_stop(f->pid, &status);
	if (rc <= 0)
		return rc ? rc : -ESRCH;
	how = target__classify(status, &sig);
	if (how == TARGET_STOP_EXIT || how == TARGET_STOP_EXEC) {
		f->leader_event = true;
		f->leader_status = status;
	} else {
		f->leader_interrupted = true;
		f->leader_status = status;
		th->resume_sig = how == TARGET_STOP_SIGNAL ? sig : 0;
	}
	return 0;
}

int target__freeze(pid_t pid, bool leader_stopped, struct target_frozen *f)
{
	char path[64];
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		struct target_thread *th;

		if (tid <= 0)
			continue;
		if (f->n == cap) {
			struct target_thread *nt;

			cap = cap ? cap * 2 : 16;
			nt = realloc(f->t, cap * sizeof(*nt));
			if (!nt) {
				err = -ENOMEM;
				break;
			}
			f->t = nt;
		}
		th = &f->t[f->n];
		memset(th, 0, sizeof(*th));
		th->tid = tid;
		if (tid == pid) {
			if (!leader_stopped && freeze_leader(f, th))
				continue;	/* gone: nothing to read */
		} else {
			int status;

			enum target_stop how;

			/* a thread of an exiting process may be gone already: skip it. EPERM:
			 * traced already, by us when a process tree is followed (its threads
			 * are ours), else by another tracer (then the interrupt fails) */
			if (ptrace(PTRACE_SEIZE, tid, 0, 0) == 0)
				th->seized = true;
			else if (errno != EPERM)
				continue;
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || wait_stop(tid, &status) <= 0) {
				if (th->seized)
					ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			th->ours = !th->seized;
			how = target__classify(status, &th->resume_sig);
			th->resume_how = how;
			if (how != TARGET_STOP_SIGNAL)
				th->resume_sig = 0;
		}
		read_regs(th);
		f->n++;
	}
	closedir(d);
	f->stopped_ns = mono_now();
	if (err)
		target__thaw(f);
	return err;
}

void target__thaw(struct target_frozen *f)
{
	for (size_t i = 0; i < f->n; i++) {
		struct target_thread *th = &f->t[i];

		if (th->seized)
			ptrace(PTRACE_DETACH, th->tid, 0, th->resume_sig);
		else if (th->ours)
			target__resume(th->tid, th->resume_how, th->resume_sig);
		else if (th->tid == f->pid && f->leader_interrupted) {
			int sig;
			enum target_stop how = target__classify(f->leader_status, &sig);

			target__resume(f->pid, how, sig);
		}
	}
	free(f->t);
	f->t = NULL;
	f->n = 0;
}

int target__status(pid_t pid, pid_t *tgid, pid_t *ppid, bool *zombie)
{
	char path[64], *text, *l;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	text = util_read_file(path, NULL);
	if (!text)
		return -errno;
	*zombie = false;
	for (l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "Tgid:", 5))
			found += sscanf(l + 5, "%d", tgid) == 1;
		else if (!strncmp(l, "PPid:", 5))
			found += sscanf(l + 5, "%d", ppid) == 1;
		else if (!strncmp(l, "State:", 6))
			*zombie = strstr(l, "zombie") != NULL;
	}
	free(text);
	return found == 2 ? 0 : -EINVAL;
}

bool target__is_kthread(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	p = strrchr(buf, ')');
	/* state ppid pgrp session tty_nr tpgid flags */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return flags & 0x00200000;	/* PF_KTHREAD */
}
