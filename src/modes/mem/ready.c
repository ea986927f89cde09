/* mem's readiness: a launched program runs until its allocator is mapped, so probes are live
 * before any library constructor allocates; and why a program has no allocator mem can trace.
 * The mode's `attach` hook (cmd.c) uses both.
 *
 * The allocator library is only mapped by the dynamic loader, after exec. The loader tells a
 * debugger when it has mapped the program's libraries: it calls its hook `_dl_debug_state`
 * (struct r_debug's r_brk) with r_state RT_ADD before mapping them and RT_CONSISTENT after,
 * before any constructor runs (glibc's rtld.c dl_main, then _dl_init). So the child runs to a
 * breakpoint there (one or two stops); a loader without the hook, or a program whose
 * libraries serve no malloc when they are consistent (an allocator dlopen'ed later), is run
 * system call by system call as before, until a library serving malloc is mapped (a few dozen
 * stops at ~0.1 ms each here: most of what following a short process's exec cost).
 *
 * A process the unwinder has hooked at its loader (core/unwind.h: a process it traced before
 * this exec, an exec in place or a forked child's) has the hook's uprobe at that address in
 * its new program too, and the kernel takes an int3 there for the uprobe's: a breakpoint of
 * ours would never be seen. The hook holds the thread instead (abi/unwind.h, UNWIND_HOLD_SIG)
 * at the same two calls, and readiness stops by the hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include "abi/unwind.h"
#include "core/ldso.h"
#include "core/log.h"
#include "core/target.h"
#include "core/unwind.h"
#include "modes/mem/ready.h"

#define MAX_STARTUP_SYSCALLS 4000

/* Does a dynamic segment (p_offset, p_filesz) name its object (DT_SONAME)? */
static bool has_soname(int fd, off_t off, uint64_t size)
{
	Elf64_Dyn d;

	for (uint64_t i = 0; i + sizeof(d) <= size && i < 64 * 1024; i += sizeof(d)) {
		if (pread(fd, &d, sizeof(d), off + (off_t)i) != sizeof(d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_SONAME)
			return true;
	}
	return false;
}

/* Will the dynamic loader map libraries into this executable? 1 yes: it asks for a program
 * interpreter, or it is the loader itself run as a program (`ld-linux-x86-64.so.2 ./prog`, to
 * run a program against another glibc: a shared object with no interpreter, named by its
 * DT_SONAME, which a static-pie program has not); 0 no (static: nothing will be mapped
 * later); negative errno if it cannot be read. */
static int has_interp(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph, dyn = { .p_type = PT_NULL };
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		close(fd);
		return -ENOEXEC;
	}
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP) {
			rc = 1;
			break;
		}
		if (ph.p_type == PT_DYNAMIC)
			dyn = ph;
	}
	if (!rc && eh.e_type == ET_DYN && dyn.p_type == PT_DYNAMIC &&
	    has_soname(fd, (off_t)dyn.p_offset, dyn.p_filesz))
		rc = 1;
	close(fd);
	return rc;
}

/* Is a section of this name in the ELF file? */
static bool has_section(int fd, const Elf64_Ehdr *eh, const char *name)
{
	Elf64_Shdr sh, strsh;
	char buf[64];
	size_t len = strlen(name) + 1;

	if (!eh->e_shoff || eh->e_shstrndx >= eh->e_shnum || len > sizeof(buf) ||
	    pread(fd, &strsh, sizeof(strsh), eh->e_shoff + (off_t)eh->e_shstrndx * eh->e_shentsize)
	    != sizeof(strsh))
		return false;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (pread(fd, &sh, sizeof(sh), eh->e_shoff + (off_t)i * eh->e_shentsize) != sizeof(sh))
			return false;
		if (sh.sh_name + len <= strsh.sh_size &&
		    pread(fd, buf, len, strsh.sh_offset + sh.sh_name) == (ssize_t)len &&
		    !memcmp(buf, name, len))
			return true;
	}
	return false;
}

const char *mem__why_untraceable(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	int fd, interp = has_interp(pid);
	const char *why;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		if (fd >= 0)
			close(fd);
		return "its executable cannot be read as a 64-bit ELF file";
	}
	if (has_section(fd, &eh, ".go.buildinfo") || has_section(fd, &eh, ".note.go.buildid"))
		why = "it is a Go program: Go's runtime allocates from its own heap, never through "
		      "malloc";
	else if (interp == 0 && !has_section(fd, &eh, ".symtab"))
		why = "it is statically linked and stripped: its own malloc has no symbol to put a "
		      "probe on";
	else if (interp == 0)
		why = "it is statically linked and defines no malloc and free ebprof knows";
	else
		why = "it maps no C library that serves malloc (an allocator ebprof does not know)";
	close(fd);
	return why;
}

/* Resume pid (PTRACE_CONT, _SYSCALL or _SINGLESTEP, with sig) and wait for its next stop:
 * 0, -ESRCH when it ended (*status final), or a negative errno. */
static int resume_wait(pid_t pid, enum __ptrace_request req, int sig, int *status)
{
	if (ptrace(req, pid, 0, sig) || waitpid(pid, status, __WALL) < 0)
		return -errno;
	return WIFEXITED(*status) || WIFSIGNALED(*status) ? -ESRCH : 0;
}

/* Set (int3) or clear the breakpoint's byte at addr, whose original word is *orig (read when
 * setting). 0 or negative errno. */
static int bp_set(pid_t pid, uint64_t addr, uint64_t *orig)
{
	long w;

	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, 0);
	if (errno)
		return -errno;
	/* an int3 there already: another tool's uprobe (the kernel would take our trap for its
	 * own, and the process would run past unseen) or breakpoint */
	if ((w & 0xff) == 0xcc)
		return -EBUSY;
	*orig = (uint64_t)w;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)(((uint64_t)w & ~0xffULL) | 0xcc)))
		return -errno;
	return 0;
}

static int bp_clear(pid_t pid, uint64_t addr, uint64_t orig)
{
	return ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)orig) ? -errno : 0;
}

enum {
	LDSO_STEP = 1,		/* run_to_ldso_hook: go on system call by system call */
	LDSO_NOT_YET,		/* consistent: the libraries are not mapped yet */
};

/* Resume pid with *sig and wait for its next signal stop (its other stops are let go on): 0
 * with *sig that stop's signal; -ENOENT when it is ending (before mapping an allocator),
 * LDSO_STEP at an exec (another image: no breakpoint of ours in it), or a negative errno
 * (-ESRCH: it ended, *status final) */
static int next_signal(pid_t pid, int *sig, int *status)
{
	for (;;) {
		enum target_stop how;
		int err = resume_wait(pid, PTRACE_CONT, *sig, status);

		if (err)
			return err;
		how = target__classify(*status, sig);
		if (how == TARGET_STOP_EXIT)
			return -ENOENT;
		if (how == TARGET_STOP_EXEC)
			return LDSO_STEP;
		if (how == TARGET_STOP_SIGNAL)
			return 0;
		*sig = 0;
	}
}

/* The signal a signal stop of pid (sig) is resumed with: none for the unwinder's hold, whose
 * note is taken */
static int deliver(struct unwinder *u, pid_t pid, int sig)
{
	return sig == UNWIND_HOLD_SIG && unwinder__take_hold(u, pid) ? 0 : sig;
}

/* Is the loader's r_state (at rstate) RT_CONSISTENT, with a library serving malloc mapped? 0
 * with *lib filled, LDSO_STEP when that cannot tell, LDSO_NOT_YET, or a negative errno
 * (-ENOPKG) */
static int consistent(const struct log_ctx *lc, pid_t pid, uint64_t rstate,
		      struct alloc_lib *lib, const char *how)
{
	long state;
	int err;

	/* r_debug's r_state (after r_version, r_map, r_brk): the libraries are mapped when it
	 * says RT_CONSISTENT (0); RT_ADD (1) is said before they are */
	errno = 0;
	state = ptrace(PTRACE_PEEKDATA, pid, (void *)rstate, 0);
	if (errno)
		return LDSO_STEP;
	if ((int)state)
		return LDSO_NOT_YET;
	err = probes__find_allocator(pid, lib);
	if (err != -ENOENT)
		pr_debug(lc, "pid %d: allocator mapped, found at the loader's _dl_debug_state%s",
			 pid, how);
	return err == -ENOENT ? LDSO_STEP : err;
}

/* run_to_ldso_hook's way where the unwinder's hook is on the loader: the process is run to its
 * holds there, and left in the consistent one's signal stop (resumed without the signal). */
static int run_to_hold(const struct log_ctx *lc, pid_t pid, struct unwinder *u,
		       uint64_t rstate, struct alloc_lib *lib, int *status)
{
	int err, sig = 0;

	for (;;) {
		err = next_signal(pid, &sig, status);
		if (err)
			return err;
		sig = deliver(u, pid, sig);
		if (sig)
			continue;	/* a signal of its own: delivered */
		err = consistent(lc, pid, rstate, lib, " (held there by the unwinder's hook)");
		if (err != LDSO_NOT_YET)
			return err;
	}
}

/*
 * Run pid (stopped at its exec) to the loader's hook until a library serving malloc is mapped:
 * 0 with the process stopped at the hook's first instruction, its code as it was; LDSO_STEP
 * when that cannot tell (no hook, or the libraries were consistent without an allocator: the
 * caller steps on from where the process is, the breakpoint gone, resuming it with *pending,
 * a signal its stop holds, or 0); -ESRCH, -ENOENT (it ends first) or another negative errno.
 */
static int run_to_ldso_hook(const struct log_ctx *lc, pid_t pid, struct unwinder *u,
			    struct alloc_lib *lib, int *status, int *pending)
{
	struct ldso_hook h = { 0 };
	char path[4096 + 64];
	uint64_t base, brk, orig;
	int err, sig = 0;

	*pending = 0;
	if (ldso__of(pid, &base, path, sizeof(path)) || ldso__hook_of(path, &h))
		return LDSO_STEP;
	brk = base + h.brk;
	err = bp_set(pid, brk, &orig);
	if (err == -EBUSY && unwinder__hooked(u, pid, path))
		return run_to_hold(lc, pid, u, base + h.rdebug + 24, lib, status);
	if (err)
		return LDSO_STEP;
	for (;;) {
		struct user_regs_struct regs;

		err = next_signal(pid, &sig, status);
		if (err)
			return err;
		if (sig != SIGTRAP) {
			sig = deliver(u, pid, sig);
			continue;
		}
		if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
			return -errno;
		if (regs.rip != brk + 1)
			continue;	/* another SIGTRAP: delivered */
		sig = 0;
		/* the hook's own code back, and the call made again from its start */
		regs.rip = brk;
		if (bp_clear(pid, brk, orig) || ptrace(PTRACE_SETREGS, pid, 0, &regs))
			return -errno;
		err = consistent(lc, pid, base + h.rdebug + 24, lib, "");
		if (err != LDSO_NOT_YET)
			return err;
		/* RT_ADD (or RT_DELETE): over the hook's first instruction, then set again */
		err = resume_wait(pid, PTRACE_SINGLESTEP, 0, status);
		if (err)
			return err;
		if (!WIFSTOPPED(*status) || WSTOPSIG(*status) != SIGTRAP || (*status >> 16)) {
			/* something else came first (a signal, an event): step on from here,
			 * the signal delivered */
			enum target_stop how = target__classify(*status, pending);

			if (how == TARGET_STOP_EXIT)
				return -ENOENT;
			if (how != TARGET_STOP_SIGNAL)
				*pending = 0;
			return LDSO_STEP;
		}
		if (bp_set(pid, brk, &orig))
			return LDSO_STEP;
	}
}

int mem__run_to_allocator(const struct log_ctx *lc, pid_t pid, struct unwinder *u,
			  struct alloc_lib *lib, int *status)
{
	struct __ptrace_syscall_info info;
	bool exec_mmap = false;
	int err, sig = 0;

	/* a static executable has its allocator mapped already, and will map no other */
	err = probes__find_allocator(pid, lib);
	if (err != -ENOENT || has_interp(pid) == 0)
		return err;
	err = run_to_ldso_hook(lc, pid, u, lib, status, &sig);
	if (err != LDSO_STEP)
		return err;

	for (int n = 0; n < MAX_STARTUP_SYSCALLS; n++) {
		err = resume_wait(pid, PTRACE_SYSCALL, sig, status);
		if (err)
			return err;
		sig = 0;
		if (!WIFSTOPPED(*status))
			continue;
		if (WSTOPSIG(*status) != (SIGTRAP | 0x80)) {
			enum target_stop how = target__classify(*status, &sig);

			if (how == TARGET_STOP_EXIT)
				return -ENOENT;	/* dying before mapping an allocator */
			sig = how == TARGET_STOP_SIGNAL ? deliver(u, pid, sig) : 0;
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(info), &info) <= 0)
			continue;
		if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
			/* code comes in by an executable mmap (the loader maps each library's text
			 * so); looking at every other system call cost more than the rest of a
			 * short process's tracing (a large executable's symbols, read again) */
			exec_mmap = info.entry.nr == __NR_mmap && (info.entry.args[2] & PROT_EXEC);
			continue;
		}
		if (info.op != PTRACE_SYSCALL_INFO_EXIT || info.exit.is_error || !exec_mmap)
			continue;
		exec_mmap = false;
		err = probes__find_allocator(pid, lib);
		if (err != -ENOENT)
			return err;
	}
	pr_debug(lc, "pid %d: no allocator after %d system calls", pid, MAX_STARTUP_SYSCALLS);
	return -ENOENT;
}

