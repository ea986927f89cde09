/* The lock mode collector: kernel lock contention (lock:contention_begin/end) and futex waits
 * (futex, futex_waitv) measured and aggregated in the kernel by bpf/lock.bpf.c, turned into
 * samples per (process, kind, stacks, lock) and a summary per lock with a wait histogram. The
 * only user of the lock skeleton; the session drives it through lock_mode_ops (core/mode.h). */
#ifndef EBPROF_LOCK_COLLECT_H
#define EBPROF_LOCK_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/mode.h"

struct lock_opts {
	uint32_t max_stacks;	/* --max-stacks: distinct stacks, (process, stacks, lock) counters */
	uint32_t max_locks;	/* --max-locks: distinct locks */
	uint32_t max_procs;	/* tests: processes with totals (0: the default) */
	bool kernel;		/* trace kernel locks (not --user-only) */
	bool user;		/* trace futex waits (not --kernel-only) */
	bool kernel_asked;	/* --kernel-only: without the tracepoints it is an error */
	/* tests (EBPROF_TEST_NO_LOCK_TRACEPOINTS): act as on a kernel without lock:contention_* */
	bool pretend_no_tracepoints;
	/* tests: load no program for a wait's end (lock_end, futex_exit), as if the kernel had
	 * run none: every wait is left open */
	bool no_ends;
};

/* The mode: open, attach, attach_all, tick, progress, finalize, reaped, stop, finish, detach,
 * close. open takes a struct lock_opts. */
extern const struct mode_ops lock_mode_ops;

/* A kind of contention (stack_key.aux: a kernel lock's LCB_F_* flags, or a futex command) as
 * the report names it: "spinlock", "rwsem:W", "mutex", "futex_wait", ... */
const char *lock_class_name(uint32_t aux);

#endif
