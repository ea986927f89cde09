/* mem's readiness hooks (ready.c). */
#ifndef EBPROF_MEM_READY_H
#define EBPROF_MEM_READY_H

#include <sys/types.h>
#include "core/log.h"
#include "core/probes.h"

/* Why no allocator could be found in pid, as a phrase: a Go program, a stripped static
 * binary, ... (read from its executable). */
const char *mem__why_untraceable(pid_t pid);

/* Let a child stopped after exec run, syscall by syscall, until its allocator is mapped; the
 * child is left stopped (resumed without a signal). u: the unwinder, whose hold at the
 * loader's hook serves where pid has it (core/unwind.h). Returns 0 with *lib filled, -ENOENT
 * if it mapped none before running on, -ESRCH if it exited (its wait status in *status),
 * -ENOPKG when what it maps cannot be probed as asked (probes__last_error() says why). */
struct unwinder;
int mem__run_to_allocator(const struct log_ctx *lc, pid_t pid, struct unwinder *u,
			  struct alloc_lib *lib, int *status);

#endif
