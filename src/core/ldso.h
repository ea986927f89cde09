/* The dynamic loader of a process: where it is, and the hook it calls for debuggers.
 *
 * glibc's loader calls `_dl_debug_state` (struct r_debug's r_brk) with r_state RT_ADD before it
 * maps objects (the program's libraries, a dlopen's) and RT_CONSISTENT after, before any of
 * their constructors run; RT_DELETE and RT_CONSISTENT around a dlclose's unmapping. mem's
 * readiness (modes/mem/ready.c) runs a launched program to it; the unwinder (core/unwind.c)
 * holds a thread there while it loads the tables of the code just mapped.
 */
#ifndef EBPROF_CORE_LDSO_H
#define EBPROF_CORE_LDSO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The loader's hook and its struct r_debug, as addresses relative to its load address; the
 * hook's offset in its file too (for a uprobe) */
struct ldso_hook {
	uint64_t brk;		/* _dl_debug_state */
	uint64_t brk_off;	/* its file offset (0: not found) */
	uint64_t rdebug;	/* _r_debug */
};

/* Both symbols of the loader file at path (kept for the last file read: a tree runs one
 * loader). 0, or a negative errno (-ENOENT: it has no such symbols). */
int ldso__hook_of(const char *path, struct ldso_hook *out);

/* The loader's load address (AT_BASE) and its file as the process sees it
 * (/proc/PID/root/...); 0 or negative errno (-ENOENT: none, e.g. a static program, or the
 * loader run as a command) */
int ldso__of(pid_t pid, uint64_t *base, char *path, size_t len);

#endif
