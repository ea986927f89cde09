/* The events of `ebprof stacks -e`: parsing, resolving each to a way of probing it on this
 * kernel, listing them (-l), and tracefs when a classic tracepoint needs it. No libbpf state
 * here beyond reading the kernel's BTF. */
#ifndef EBPROF_STACKS_EVENTS_H
#define EBPROF_STACKS_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "core/log.h"

enum stacks_ev_kind {
	STACKS_EV_RAW_TP,	/* a tracepoint with a btf_trace_<name> type: raw_tp, no tracefs */
	STACKS_EV_SYS_ENTER,	/* syscalls:sys_enter_<sc>: raw sys_enter, by syscall number */
	STACKS_EV_SYS_EXIT,	/* syscalls:sys_exit_<sc> */
	STACKS_EV_TRACEFS,	/* a classic tracepoint through tracefs */
	STACKS_EV_UPROBE,	/* u:PATH:SYMBOL */
};

struct stacks_event {
	char *spec;		/* as the user wrote it: the event's name in reports */
	enum stacks_ev_kind kind;
	char *cat, *name;	/* tracepoints: category and name (cat NULL: a bare BTF name) */
	int nr;			/* syscalls: the x86_64 number */
	char *path, *sym;	/* uprobes: PATH (a path, or a bare name) and SYMBOL */
};

/* Split spec into ev (kind set to UPROBE for u:, else RAW_TP until resolved). 0, or -EINVAL
 * with a sentence in why. */
int stacks_event__parse(struct stacks_event *ev, const char *spec, char *why, size_t len);
void stacks_event__free(struct stacks_event *ev);

/* Decide how to probe a tracepoint event (uprobes are resolved per process at attach):
 * mounting tracefs when only it has the event (said with -v). 0; -ENOENT: no such event (said,
 * with close matches and a pointer to -l); another negative errno (said). */
int stacks_event__resolve(struct stacks_event *ev, const struct log_ctx *lc);

/* The file to probe for a uprobe event in process pid (0: none, -a): PATH itself when it has a
 * '/' (seen through /proc/PID/root), else the object mapped in pid whose base name is PATH or
 * starts with "PATH." or "PATH-", else a library of that name in the usual directories, else
 * an executable of that name in $PATH. 0, or -ENOENT. */
int stacks_event__uprobe_path(const struct stacks_event *ev, pid_t pid, char *out, size_t len);

/* A sentence on why SYMBOL cannot be probed in path (err from sym_elf_symbol_offset), in
 * buf; the path is shown as the process sees it (without /proc/PID/root). Returns buf. */
const char *stacks_event__symbol_error(const char *path, const char *sym, int err, char *buf,
				       size_t len);

/* Print the usable events matching pattern (a glob, or a substring when it has no glob
 * character; NULL: all) to f, one per line. Returns the exit status (0, or 1 when nothing
 * could be listed). */
int stacks_events__list(const char *pattern, FILE *f, const struct log_ctx *lc);

/* The tracefs directory, mounting tracefs at /sys/kernel/tracing when it is mounted nowhere
 * (said with -v). NULL (said) when that fails. */
const char *stacks_tracefs(const struct log_ctx *lc, bool quiet);

#endif
