/* One run of any mode: targets (a launched command and its tree, -p PIDs with --follow, -a),
 * the run loop (signals, -d, a 100 ms tick, exit and exec stops, Ctrl-C and SIGTERM), the
 * progress line, holding processes at exit until the mode has read them, the outputs, and
 * leaving no probe and no stopped process behind. Modes plug in through core/mode.h.
 *
 * One thread drives everything: signals and child events arrive through a signalfd, the
 * duration through a timerfd, exits of processes we could not ptrace through pidfds. A process
 * is read out when it stops at exit (its mappings are still there), or when the run stops; the
 * report is written before probes are detached, because detaching is the slow part.
 */
#ifndef EBPROF_SESSION_H
#define EBPROF_SESSION_H

#include <stdbool.h>
#include <sys/types.h>
#include "core/log.h"
#include "core/mode.h"
#include "output/output.h"

#define SESSION_MAX_PIDS 256
#define SESSION_MAX_OUTPUTS 16

struct session_opts {
	pid_t pids[SESSION_MAX_PIDS];	/* -p */
	int npids;
	char **argv;			/* -- CMD ARGS, NULL-terminated, or NULL */
	double duration;		/* -d seconds, 0: until the targets end (or a signal) */
	const char *outputs[SESSION_MAX_OUTPUTS];	/* -o, format by extension */
	int noutputs;
	struct output_opts out;		/* --top, --sort, --value, --inverted */
	bool quiet;			/* -q: no progress line */
	bool follow;			/* --follow */
	bool all;			/* -a */
	bool inspect;			/* call the mode's inspect hook (mem --leaks) */
	bool no_report;			/* no report at the end (ebprof top: the view was it) */
	int unwind;			/* --unwind: enum unwind_how (core/unwind.h), 0 auto */
	uint32_t unwind_procs;		/* --unwind-procs, 0: the mode's */
	uint32_t unwind_queue;		/* --unwind-queue, 0: UNWIND_ASKED_QUEUE */
	uint32_t unwind_rows;		/* --unwind-rows, 0: planned or UNWIND_DEFAULT_ROWS */
	/* Continuous profiling (ebprof agent): every window_secs of wall-clock time, on the
	 * boundaries of that many seconds since the epoch (the first window starts with the run),
	 * the mode's window hook fills a new profile that goes to on_window, which owns it from
	 * then on; from/until: the window's wall-clock bounds (ns), each window's until the
	 * next one's from. After stop, a last window (until: now). No report is written at the
	 * end. 0: one profile for the whole run, written to the outputs. */
	double window_secs;
	void (*on_window)(void *ctx, struct profile *w, int64_t from_ns, int64_t until_ns);
	/* SIGHUP: called instead of stopping the run (NULL: SIGHUP stops it like SIGTERM) */
	void (*on_hup)(void *ctx);
	/* once a second, from the run loop (NULL: nothing) */
	void (*on_second)(void *ctx);
	/* The run is over, its outputs written and everything of it released (the modes' BPF
	 * programs and maps, the profiles, the symbolizer), before ebprof waits for a launched
	 * command that -d left running untraced, however long that takes (NULL: nothing). */
	void (*on_end)(void *ctx);
	void *ctx;
	/* ebprof's own command line, for the profile's metadata */
	int self_argc;
	char **self_argv;
};

struct session;

/* Run mode `ops` with its parsed options over the targets in so. Returns the exit status:
 * the launched command's, or 0, 1 (runtime failure), 2 (usage: e.g. --value names no sample
 * type of this mode), or the mode's verdict. */
int session__run(const struct session_opts *so, const struct mode_ops *ops, void *mode_opts,
		 const struct log_ctx *lc);

/* Write p to each path by extension (a diff's ".txt" is its table of changes), or as text to
 * stdout without paths. 0, or 1 when any failed (each failure said). */
int session__write_outputs(const struct log_ctx *lc, const struct profile *p,
			   const struct output_opts *o, char *const *paths, int npaths);

/* Every destination in paths can be written (output__check_path), checked before any work
 * (tracing, loading) so that its result is not lost: 0, or 2 (a usage error, said). */
int session__check_outputs(const struct log_ctx *lc, char *const *paths, int npaths);

/* Erase the progress line before printing to stderr. */
void session__clear_progress(struct session *s);
/* End the run from a mode (ebprof top's q), as -d does; a launched command still running is
 * sent SIGTERM, and the run ends with it. */
void session__request_stop(struct session *s);
/* Tracing is ending (a stop was asked or the duration reached). */
bool session__stopping(const struct session *s);
/* The run's end (CLOCK_MONOTONIC ns), once it has ended, else 0: what a mode counts the waits
 * still going on up to, so that none is longer than the run (its stop hook comes after the
 * processes are read out). */
uint64_t session__end_ns(const struct session *s);

#endif
