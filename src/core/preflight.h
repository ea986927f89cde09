/* Start-up checks: privileges and kernel features, each failing with one actionable sentence. */
#ifndef EBPROF_PREFLIGHT_H
#define EBPROF_PREFLIGHT_H

#include "core/log.h"

#define PREFLIGHT_UPROBES	(1u << 0)	/* the mode attaches uprobe_multi links */
#define PREFLIGHT_PTRACE	(1u << 1)	/* processes ebprof did not start are traced (-p, -a) */

/* The effective capabilities (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN; CAP_SYS_PTRACE
 * with PREFLIGHT_PTRACE), BTF, and what `needs` names. Returns 0, or -1 after printing why ebprof
 * cannot run here. */
int preflight__check(const struct log_ctx *lc, unsigned needs);

#endif
