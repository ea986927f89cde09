/* mem's readiness: a launched program runs, system call by system call, until its allocator is
 * mapped, so probes are live before any library constructor allocates; and why a program has
 * no allocator mem can trace. The mode's `attach` hook (cmd.c) uses both.
 *
 * The allocator library is only mapped by the dynamic loader, after exec: the child runs
 * syscall by syscall until a library serving malloc is mapped (a few dozen stops), and only
 * then runs freely.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include "core/target.h"
#include "modes/mem/ready.h"

#define MAX_STARTUP_SYSCALLS 4000

/* Does the executable ask for a program interpreter (the dynamic loader)? 1 yes, 0 no (static:
 * nothing will be mapped later), negative errno if it cannot be read. */
static int has_interp(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
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
	}
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

int mem__run_to_allocator(const struct log_ctx *lc, pid_t pid, struct alloc_lib *lib,
			  int *status)
{
	struct __ptrace_syscall_info info;
	bool exec_mmap = false;
	int err, sig = 0;

	/* a static executable has its allocator mapped already, and will map no other */
	err = probes__find_allocator(pid, lib);
	if (err != -ENOENT || has_interp(pid) == 0)
		return err;

	for (int n = 0; n < MAX_STARTUP_SYSCALLS; n++) {
		if (ptrace(PTRACE_SYSCALL, pid, 0, sig))
			return -errno;
		sig = 0;
		if (waitpid(pid, status, __WALL) < 0)
			return -errno;
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return -ESRCH;
		if (!WIFSTOPPED(*status))
			continue;
		if (WSTOPSIG(*status) != (SIGTRAP | 0x80)) {
			enum target_stop how = target__classify(*status, &sig);

			if (how == TARGET_STOP_EXIT)
				return -ENOENT;	/* dying before mapping an allocator */
			if (how != TARGET_STOP_SIGNAL)
				sig = 0;
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

