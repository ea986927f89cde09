/* Several modes in one session (`ebprof profile`): a mode_ops that hands every hook to each
 * member mode in turn, each member filling its own profile, a part of the session's profile
 * (profile.h: parts). The members share the session's targets, symbolizer and clock; each
 * keeps its own BPF objects, probes and tables, so no member pays for another. After the run,
 * the findings (profile/findings.h) are computed from the parts into the session's profile.
 */
#ifndef EBPROF_MODESET_H
#define EBPROF_MODESET_H

#include "core/mode.h"

#define MODESET_MAX 8

struct modeset_member {
	const struct mode_ops *ops;
	void *opts;			/* the member's own parsed options */
	/* a member that cannot open (its kernel features missing) is left out, with a
	 * warning, instead of failing the run (as long as one member opens) */
	bool optional;
};

/* The options of modeset_ops.open. Members attach in this order: a member that runs a
 * launched program forward (mem, to its allocator) goes last, so the others see it from its
 * exec on. */
struct modeset_opts {
	struct modeset_member members[MODESET_MAX];
	int n;
	bool findings;			/* compute findings at the end */
	/* the first member leads (ebprof top): a process is traced when the first member
	 * traces it; another member's attach error (but -ESRCH) leaves only that member without
	 * it, said at -v. Otherwise (ebprof profile): traced when any member traces it, a
	 * member's -ENOENT is a note in its part, any other error is the run's. */
	bool lead;
	/* the members after the first log nothing once open (their open errors are said), but
	 * at -v: their failures are not the run's (top says what it lacks) */
	bool quiet_others;
};

/* The set's mode_ops for these members: name "profile", the union of their preflight needs;
 * -a only when every member supports it; a window (core/mode.h) when one member has one: each
 * member's window goes into a part of its own of the window's profile, in member order (a
 * member without windows leaves its part empty, with a note, so that part i is member i's),
 * and the window's duration is its longest part's. */
void modeset__ops(struct mode_ops *ops, const struct modeset_opts *o);

#endif
