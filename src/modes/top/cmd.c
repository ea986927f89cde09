/* ebprof top: the command line of the live view (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/top/top.h"
#include "output/output.h"
#include "util/util.h"


enum {
	OPT_NO_COLOR = OPT_MODE_BASE,
	OPT_MAX_STACKS,
	OPT_NO_MEM,
	OPT_NO_IO,
	OPT_NO_LOCK,
	OPT_NO_OFFCPU,
};

static const struct option top_longopts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "batch", no_argument, NULL, 'b' },
	{ "iterations", required_argument, NULL, 'n' },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "frequency", required_argument, NULL, 'F' },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "no-mem", no_argument, NULL, OPT_NO_MEM },
	{ "no-io", no_argument, NULL, OPT_NO_IO },
	{ "no-lock", no_argument, NULL, OPT_NO_LOCK },
	{ "no-offcpu", no_argument, NULL, OPT_NO_OFFCPU },
	{ 0 },
};

static const char top_usage[] =
	"Usage: ebprof top [OPTIONS]                   every process (the default)\n"
	"       ebprof top [OPTIONS] -p PID[,PID...]\n"
	"       ebprof top [OPTIONS] -- CMD [ARGS...]\n"
	"\n"
	"A live view of where CPU, waiting and memory go, from the same BPF programs and stacks as\n"
	"the recording modes: a header (CPUs, load, sampling rate, drops, PIDs the kernel\n"
	"recycled in the window), a table of processes and a panel with the selected process's\n"
	"hottest functions, or its stacks. Refreshed every interval with what was counted\n"
	"during it (a window). Columns: CPU% (percent of\n"
	"one CPU, from cpu-clock sampling at 99 Hz on every CPU); with -p or a command also\n"
	"ALLOC/s and LIVE, the bytes allocated per second and held now, from sampled tracking of\n"
	"the malloc family (ebprof mem --sample-bytes 524288: estimates; never system-wide);\n"
	"OFF-CPU% and WAITS/s, the time the process's threads spent off the CPU (asleep,\n"
	"blocked or waiting to run), in % of one thread's time, and how often they left it per\n"
	"second (the offcpu mode's scheduler tracepoints; user threads; a wait counts in the\n"
	"interval it ends in); LOCK/s and WAIT%, contended lock waits per second and the time\n"
	"spent in them, in % of one thread's time (the lock mode: kernel locks and futex waits);\n"
	"IO/s, IOB/s and IOLAT, the block requests each process started per second, their bytes\n"
	"and their mean latency (the io mode's block tracepoints; writeback threads included).\n"
	"\n"
	"Keys: Up/Down or j/k select, Enter shows the selected process's stacks (again: its\n"
	"functions), Tab or 1-5 switch the view (1 cpu, 2 mem, 3 offcpu, 4 lock, 5 io: those in\n"
	"the run), s cycles the sort column, / filters by name, p pauses, w writes the window\n"
	"shown to a file (any format of -o, by extension), ? help, q quits (Ctrl-C too).\n"
	"\n"
	"Targets:\n"
	"  -a, --all              every process, kernel threads included (the default)\n"
	"  -p, --pid PID[,PID]    only these processes (repeatable)\n"
	"      --follow           with -p: also the processes they create\n"
	"  -d, --duration TIME    stop after TIME: 500ms, 30s, 5m, or plain seconds\n"
	"  -- CMD [ARGS...]       launch a command and watch it (q ends it: SIGTERM); its output\n"
	"                         goes to the same terminal, so redirect it inside a shell:\n"
	"                         -- sh -c 'CMD > out.log' (the shell's > would take top's)\n"
	"\n"
	"View:\n"
	"  -i, --interval SECS    refresh (and window) every SECS seconds (default 1; 0.1 to 3600)\n"
	"  -b, --batch            no screen: print the table every interval, as top -b (for a\n"
	"                         pipe or a file; the default when stdout is not a terminal is\n"
	"                         to refuse)\n"
	"  -n, --iterations N     stop after N intervals\n"
	"      --top N            rows printed per interval with --batch (default: all)\n"
	"      --no-color         no colours (also when NO_COLOR is set)\n"
	"      --inverted         flame graphs written with w are icicles\n"
	"\n"
	"Sampling:\n"
	"  -F, --frequency HZ     cpu samples per second of CPU time, on each CPU (default 99)\n"
	"      --max-stacks N     distinct stacks kept (default 16384); past it a sample loses\n"
	"                         its stack or is lost, counted as a drop in the header\n"
	"      --no-mem           no ALLOC/s and LIVE columns (no uprobes on the targets)\n"
	"      --no-io            no IO/s, IOB/s and IOLAT columns (no block tracepoints)\n"
	"      --no-lock          no LOCK/s and WAIT% columns (no lock and futex tracepoints)\n"
	"      --no-offcpu        no OFF-CPU% and WAITS/s columns (no scheduler tracepoints)\n"
	"\n"
	"  -q, --quiet            accepted, as in every mode (top has no progress line)\n"
	"  -v, --verbose          say what is attached where\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  sudo ebprof top                          every process\n"
	"  sudo ebprof top -p 4242                  one process, its hottest functions\n"
	"  sudo ebprof top -b -n 5 -i 2 > top.txt   five 2 s tables, no screen\n"
	"  sudo ebprof top -- sh -c './myprog > out.log'\n"
	"                                           launch a program and watch it, its output\n"
	"                                           in a file (> after -- CMD would take top's)\n"
	"\n"
	"Exit status: 0 (or the command's); 1 when tracing fails; 2 on a usage error.\n";

static int top_parse(void *mo, int c, const char *arg, struct session_opts *so,
		     const struct log_ctx *lc)
{
	struct top_opts *o = mo;
	uint64_t v;
	double d;
	char *end;

	switch (c) {
	case 'i':
		d = strtod(arg, &end);
		if (end == arg || *end || !(d >= 0.1 && d <= 3600))
			return cli_usage_err(lc, "top", "-i takes an interval in seconds from 0.1 "
					     "to 3600, e.g. -i 2 or -i 0.5 (got '%s')", arg);
		o->interval_ns = d * 1e9;
		return 0;
	case 'b':
		o->batch = true;
		return 0;
	case 'n':
		if (cli_parse_count(lc, "top", "-n", "intervals", arg, 1, 1000000000, &v))
			return 2;
		o->iterations = v;
		return 0;
	case OPT_NO_COLOR:
		o->color = false;
		return 0;
	case 'F':
		/* checked here for top's message; the cpu mode checks the machine's limit */
		if (cli_parse_u64(arg, &v) || v == 0 || v > UINT32_MAX)
			return cli_usage_err(lc, "top", "-F takes a sampling rate in Hz above 0, "
					     "e.g. -F 99 (got '%s')", arg);
		o->freq = arg;
		return 0;
	case OPT_MAX_STACKS:
		if (cli_parse_count(lc, "top", "--max-stacks", "stacks", arg, 1, 1u << 22, &v))
			return 2;
		o->max_stacks = arg;	/* cpu's, offcpu's and io's */
		return 0;
	case OPT_NO_MEM:
		o->no_mem = true;
		return 0;
	case OPT_NO_IO:
		o->no_io = true;
		return 0;
	case OPT_NO_LOCK:
		o->no_lock = true;
		return 0;
	case OPT_NO_OFFCPU:
		o->no_offcpu = true;
		return 0;
	}
	return cli_usage_err(lc, "top", "unknown option");
}

static int top_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct top_opts *o = mo;

	if (so->noutputs)
		return cli_usage_err(lc, "top", "ebprof top writes no report at the end: press w "
				     "in the view to write the window shown, or record with a mode "
				     "(e.g. ebprof cpu -o FILE)");
	if (!o->batch && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
		return cli_usage_err(lc, "top", "standard %s is not a terminal: use --batch (-b) "
				     "for a table every interval, or record with a mode (e.g. "
				     "ebprof cpu -a -d 10 -o FILE)",
				     isatty(STDOUT_FILENO) ? "input" : "output");
	return 0;
}

static const struct mode_cli top_cli = {
	.name = "top",
	.usage = top_usage,
	.longopts = top_longopts,
	.shortopts = "i:bn:F:",
	.parse = top_parse,
	.check = top_check,
	.no_sort = true,
	.default_all = true,
};

/* One part's options, made by its mode as `ebprof MODE` would, with what top sets (name,
 * value pairs, NULL-terminated), checked and prepared by the mode. 0 or the exit status. */
static int part_opts(const struct mode_def *d, void **out, struct session_opts *so,
		     const struct log_ctx *lc, const char *const *set)
{
	struct session_opts dso = { 0 };
	void *mo = cli_mode_opts_new(d, &dso);
	int rc = 0;

	if (!mo) {
		pr_err(lc, "out of memory");
		return 1;
	}
	*out = mo;
	for (; !rc && set && set[0]; set += 2)
		if (set[1])
			rc = cli_mode_option(d, mo, set[0], set[1], so, lc);
	if (!rc && d->cli->check)
		rc = d->cli->check(mo, so, lc);
	if (!rc && d->prepare)
		rc = d->prepare(mo, so, lc);
	return rc;
}

int cmd_top(int argc, char **argv, struct log_ctx *lc)
{
	struct session_opts so = { 0 };
	struct top_opts *o = calloc(1, sizeof(*o));
	const char *nc = getenv("NO_COLOR");
	struct mode_ops ops;
	int rc;

	if (!o) {
		fprintf(stderr, "ebprof: out of memory\n");
		return 1;
	}
	o->interval_ns = 1000000000ull;
	o->color = !(nc && *nc);
	/* the members' usage errors point to this command's help */
	lc->cmd = "top";
	rc = cli_parse(argc, argv, lc, &top_cli, &so, o);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	/* the parts, as their own commands would run: cpu always; offcpu, io and lock unless
	 * --no-...; mem, sampled, only on -p and launched targets (no uprobes on every process
	 * unless asked) */
	rc = part_opts(&cpu_def, &o->cpu, &so, lc, (const char *const[]){
		"frequency", o->freq, "max-stacks", o->max_stacks, NULL });
	if (!rc && !o->no_offcpu)
		rc = part_opts(&offcpu_def, &o->offcpu, &so, lc, (const char *const[]){
			"max-stacks", o->max_stacks, NULL });
	if (!rc && !o->no_io)
		rc = part_opts(&io_def, &o->io, &so, lc, (const char *const[]){
			"max-stacks", o->max_stacks, NULL });
	if (!rc && !o->no_lock)
		rc = part_opts(&lock_def, &o->lock, &so, lc, NULL);
	if (!rc && !o->no_mem && !so.all)
		rc = part_opts(&mem_def, &o->mem, &so, lc, (const char *const[]){
			"sample-bytes", TOP_MEM_SAMPLE_BYTES, NULL });
	if (rc)
		goto out;
	o->rows = so.out.top;
	o->out = so.out;
	if (!o->out.top)
		o->out.top = 10;	/* w's text report: the recording modes' default */
	so.quiet = true;	/* the view is the progress */
	so.no_report = true;
	so.inspect = false;
	/* as cpu: start-up's large buffers stay in the heap rather than mmap'd and unmapped */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	/* mem's part holds -p's processes under ptrace; without it they are not ptraced */
	ops = top_mode_ops;
	ops.ptrace_pid = !o->no_mem && !so.all;
	ops.vfork_children = o->no_mem || so.all;	/* mem's part attaches one at its exec */
	rc = session__run(&so, &ops, o, lc);
out:
	cli_mode_opts_free(&cpu_def, o->cpu);
	cli_mode_opts_free(&io_def, o->io);
	cli_mode_opts_free(&mem_def, o->mem);
	cli_mode_opts_free(&lock_def, o->lock);
	cli_mode_opts_free(&offcpu_def, o->offcpu);
	free(o);
	return rc;
}
