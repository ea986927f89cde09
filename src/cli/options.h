/* The options every recording mode shares (-p -a -d --follow -o --top --sort --value
 * --inverted -q -v -h), parsed in one place with the same meaning everywhere; a mode adds its
 * own through a table of getopt_long options and one callback. */
#ifndef EBPROF_CLI_OPTIONS_H
#define EBPROF_CLI_OPTIONS_H

#include <getopt.h>
#include "core/log.h"
#include "core/session.h"

/* A mode's own long options use values from OPT_MODE_BASE up (shared ones are below it). */
#define OPT_MODE_BASE 1000

/* The help of the shared options, for a mode's --help text (one block per group). */
#define OPTIONS_HELP_TARGETS \
	"  -p, --pid PID[,PID]    attach to running processes (repeatable); stop on -d, Ctrl-C,\n" \
	"                         SIGTERM, or when every target has exited\n" \
	"      --follow           with -p: also trace the processes they create\n" \
	"  -d, --duration TIME    stop after TIME: 500ms, 30s, 5m, 1h, or plain seconds (with a\n" \
	"                         command: stop tracing, report, and let it run on)\n"
#define OPTIONS_HELP_OUTPUT OPTIONS_HELP_OUTPUT_FILES OPTIONS_HELP_VALUE OPTIONS_HELP_INVERTED
/* the same without --value: a run of several modes (ebprof profile) refuses it */
#define OPTIONS_HELP_OUTPUT_SET OPTIONS_HELP_OUTPUT_FILES OPTIONS_HELP_INVERTED
#define OPTIONS_HELP_OUTPUT_FILES \
	"  -o, --output FILE      write the report to FILE, format by extension: .txt (text),\n" \
	"                         .json, .pb.gz (pprof), .folded (folded stacks), .svg (flame\n" \
	"                         graph), .html (one-page report), .speedscope.json, .csv;\n" \
	"                         repeatable; default: text to stdout. FORMAT:PATH names the\n" \
	"                         format (folded:- writes folded stacks to stdout)\n" \
	"      --top N            entries shown per table in the text report (default 10, 0 = all)\n"
#define OPTIONS_HELP_VALUE \
	"      --value TYPE       the sample type .folded and .svg weigh frames by (default: the\n" \
	"                         mode's default sample type, named above)\n"
#define OPTIONS_HELP_INVERTED \
	"      --inverted         draw the flame graph as an icicle (roots at the top)\n"
#define OPTIONS_HELP_UNWIND \
	"      --unwind HOW       how user stacks are walked: auto (default) and dwarf: by the\n" \
	"                         call frame information (.eh_frame) of each object that has it,\n" \
	"                         frame pointers elsewhere; fp: frame pointers only (-v: which)\n" \
	"      --unwind-procs N   processes with tables at once (default 1024, stacks 8192, mem\n" \
	"                         --max-procs; more are walked by file: unwind_procs_full)\n" \
	"      --unwind-queue N   processes met without tables waiting to be loaded (-a; default\n" \
	"                         and most 1024; more are never loaded: unwind_loads_skipped)\n" \
	"      --unwind-rows N    table rows of all objects, 16 bytes each (default 1048576,\n" \
	"                         for a launched command more if its own need it; the tables\n" \
	"                         of objects no process maps are evicted for new ones; those\n" \
	"                         that still do not fit are walked by frame pointers:\n" \
	"                         unwind_rows_full)\n"
#define OPTIONS_HELP_COMMON \
	"  -q, --quiet            no progress line (shown on stderr only when it is a terminal)\n" \
	"  -v, --verbose          say what is attached where (-vv: libbpf and debug messages)\n" \
	"  -h, --help             this help\n"

struct mode_cli {
	const char *name;		/* "mem": for "Try 'ebprof mem --help'." */
	const char *usage;		/* the whole --help text */
	const struct option *longopts;	/* the mode's own, {0}-terminated; may be NULL */
	const char *shortopts;		/* the mode's own short options ("F:"), may be NULL */
	/* One of the mode's own options (c: its getopt value). 0, or 2 after cli_usage_err. */
	int (*parse)(void *mo, int c, const char *arg, struct session_opts *so,
		     const struct log_ctx *lc);
	/* After parsing: the mode's checks of the whole (e.g. options it cannot combine). 0 or
	 * 2. May be NULL. */
	int (*check)(void *mo, struct session_opts *so, const struct log_ctx *lc);
	/* What --sort takes (NULL: "bytes" and "count", the default type and the first count
	 * type, see output.h) */
	bool no_sort;			/* the mode has no --sort */
	bool no_all;			/* the mode has no -a */
	bool default_all;		/* no target given means -a (kmem) */
};

/* A recording mode as the command line knows it: its options (with their defaults), the hooks
 * around parsing, and its mode_ops. cli_run_mode runs one; `ebprof profile` runs several in one
 * session (core/modeset.h), with each mode's defaults and options set by name
 * (cli_mode_option). */
struct mode_def {
	const struct mode_cli *cli;
	const struct mode_ops *ops;
	size_t opts_size;		/* the mode's options struct, zeroed before defaults */
	/* Its defaults, before parsing (so: e.g. the text report's sort). May be NULL. */
	void (*defaults)(void *mo, struct session_opts *so);
	/* After parsing and the checks, before the session: what the options name is loaded
	 * (files, events). 0, or the exit status to end with (the error said). May be NULL. */
	int (*prepare)(void *mo, struct session_opts *so, const struct log_ctx *lc);
	/* Frees what parsing and prepare allocated inside the options. May be NULL. */
	void (*release)(void *mo);
};

/* The mode's options with their defaults (calloc'd; release with cli_mode_opts_free), or NULL
 * (out of memory). */
void *cli_mode_opts_new(const struct mode_def *d, struct session_opts *so);
void cli_mode_opts_free(const struct mode_def *d, void *mo);

/* `ebprof MODE ...`: parse, check, prepare, run the session. The exit status. */
int cli_run_mode(int argc, char **argv, struct log_ctx *lc, const struct mode_def *d);

/* Set one of a mode's own options by its long name ("sample-bytes"), as if given on its command
 * line. 0, or 2 (said; an unknown name is a bug: said as one). */
int cli_mode_option(const struct mode_def *d, void *mo, const char *name, const char *arg,
		    struct session_opts *so, const struct log_ctx *lc);

/* Parse argv (argv[0] is the mode's name) into so and the mode's options mo. Returns 0, or
 * the exit status to end with: 2 on a usage error (said), or -1 after --help (printed: exit 0).
 * Checks the shared rules: a target is given (-p, -a or a command) and only one kind of it;
 * --follow goes with -p; -d is a duration > 0. */
int cli_parse(int argc, char **argv, struct log_ctx *lc, const struct mode_cli *mc,
	      struct session_opts *so, void *mo);

/* Print "ebprof: <message>" and "Try 'ebprof MODE --help'." to stderr (lc->cmd's help when
 * set: the command the user ran); returns 2. */
int cli_usage_err(const struct log_ctx *lc, const char *mode, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A whole number (decimal or 0x hex), no sign: 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
/* The value of option `opt` (e.g. "--max-stacks"), a number of `what` from min to max, into
 * *v: 0, or 2 after "OPT takes a number of WHAT from MIN to MAX (got 'ARG')". */
int cli_parse_count(const struct log_ctx *lc, const char *mode, const char *opt,
		    const char *what, const char *arg, uint64_t min, uint64_t max, uint64_t *v);
/* --max-stacks, the size of a mode's stack tables (every recording mode has one): a number of
 * stacks from min to max into *out. 0, or 2 (said, as cli_parse_count says it). */
int cli_parse_max_stacks(const struct log_ctx *lc, const char *mode, const char *arg,
			 uint32_t min, uint32_t max, uint32_t *out);

#endif
