/* ebprof offcpu: the command line of the offcpu mode (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/offcpu/collect.h"
#include "util/util.h"

#define DEFAULT_MAX_STACKS (1u << 14)
#define DEFAULT_MAX_THREADS (1u << 15)

enum {
	OPT_MIN_BLOCK = OPT_MODE_BASE,
	OPT_MAX_BLOCK,
	OPT_STATE,
	OPT_KTHREADS,
	OPT_WAKERS,
	OPT_PER_THREAD,
	OPT_MAX_STACKS,
	OPT_MAX_THREADS,
};

static const struct option offcpu_longopts[] = {
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "kernel-threads", no_argument, NULL, OPT_KTHREADS },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ 0 },
};

static const char offcpu_usage[] =
	"Usage: ebprof offcpu [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof offcpu [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof offcpu [OPTIONS] -a [-d TIME]\n"
	"\n"
	"Where threads wait: the time each traced thread spends off-CPU, from its switch-out to\n"
	"its switch-in (the wait, then its run-queue latency), by its user and kernel stack at\n"
	"the switch-out, on the scheduler's tracepoints, aggregated in the kernel. The leaf\n"
	"frames are the kernel's scheduler (__schedule); the frames under them say why the\n"
	"thread went off-CPU (a sleep, a read, a lock). Sample types: offcpu (nanoseconds, the\n"
	"default), switches (count) and runnable (nanoseconds: of offcpu, the time runnable,\n"
	"waiting for a CPU). The report also shows each process's run-queue latency\n"
	"(time runnable but waiting for a CPU, after a wakeup or a preemption) as a table and\n"
	"log2 histograms.\n"
	"User stacks are unwound by each object's call frame information (.eh_frame; --unwind):\n"
	"code built without frame pointers has whole stacks.\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every user thread (ebprof itself excepted)\n"
	"\n"
	"Off-CPU:\n"
	"      --state S|D|R|all  which switch-outs count: S sleeping (interruptible), D\n"
	"                         uninterruptible (disk, some locks), R preempted, or a list\n"
	"                         (S,D); all (the default) also counts preemptions and stops\n"
	"      --min-block TIME   leave out waits shorter than TIME (e.g. 100us, 1ms)\n"
	"      --max-block TIME   leave out waits longer than TIME\n"
	"      --wakers           join each wait with the stack of the thread that woke it:\n"
	"                         the waker's frames above a \"--\" frame (an interrupt's\n"
	"                         wakeups, e.g. timers, name \"waker: interrupt\")\n"
	"      --kernel-threads   with -a: kernel threads too\n"
	"      --per-thread       one frame per thread (\"name [tid]\") under each process,\n"
	"                         named as the thread was then (a rename splits it); the\n"
	"                         waker's thread too with --wakers\n"
	"      --max-stacks N     distinct stacks kept, and counters (default 16384;\n"
	"                         preallocated, about 1 KiB each); past it a wait loses its\n"
	"                         stack, counted as a drop (its process's totals keep it);\n"
	"                         so many thread names too with --per-thread\n"
	"      --max-threads N    threads off-CPU at once that can be measured (default 32768)\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof offcpu -o flame.svg -- ./myprog   where its threads wait\n"
	"  sudo ebprof offcpu -p 4242 -d 10 --min-block 1ms   waits of 1 ms or more, 10 s\n"
	"  sudo ebprof offcpu --wakers -p 4242 -d 5 -o wake.svg   who woke them\n"
	"  sudo ebprof offcpu -a --state D -d 10          uninterruptible waits, every process\n"
	"  sudo ebprof cpu --offcpu -o wall.svg -- ./myprog   on-CPU and off-CPU time together\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int parse_block(const struct log_ctx *lc, const char *opt, const char *arg,
		       uint64_t *ns)
{
	if (util_parse_duration(arg, ns))
		return cli_usage_err(lc, "offcpu", "%s takes a duration, e.g. 500us, 10ms, 1s "
				     "(got '%s')", opt, arg);
	return 0;
}

static int offcpu_parse(void *mo, int c, const char *arg, struct session_opts *so,
			const struct log_ctx *lc)
{
	struct offcpu_opts *o = mo;

	switch (c) {
	case OPT_MIN_BLOCK:
		return parse_block(lc, "--min-block", arg, &o->min_ns);
	case OPT_MAX_BLOCK:
		if (parse_block(lc, "--max-block", arg, &o->max_ns))
			return 2;
		if (!o->max_ns)
			return cli_usage_err(lc, "offcpu", "--max-block takes a duration above 0 "
					     "(got '%s')", arg);
		return 0;
	case OPT_STATE:
		if (offcpu_parse_states(arg, &o->states))
			return cli_usage_err(lc, "offcpu", "--state takes S (sleeping), D "
					     "(uninterruptible), R (preempted), a list of them "
					     "(S,D) or all (got '%s')", arg);
		return 0;
	case OPT_KTHREADS:
		o->kthreads = true;
		return 0;
	case OPT_WAKERS:
		o->wakers = true;
		return 0;
	case OPT_PER_THREAD:
		o->per_thread = true;
		return 0;
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "offcpu", arg, 1, 1u << 22, &o->max_stacks);
	case OPT_MAX_THREADS:
		return offcpu_parse_max_threads(lc, "offcpu", arg, &o->max_threads);
	}
	return cli_usage_err(lc, "offcpu", "unknown option");
}

static int offcpu_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct offcpu_opts *o = mo;

	if (o->kthreads && !so->all)
		return cli_usage_err(lc, "offcpu", "--kernel-threads goes with -a: -p and a "
				     "command trace user processes");
	if (o->max_ns && o->min_ns > o->max_ns)
		return cli_usage_err(lc, "offcpu", "--min-block is above --max-block: no wait "
				     "would count");
	return 0;
}

static const struct mode_cli offcpu_cli = {
	.name = "offcpu",
	.usage = offcpu_usage,
	.longopts = offcpu_longopts,
	.parse = offcpu_parse,
	.check = offcpu_check,
};

int offcpu_parse_max_threads(const struct log_ctx *lc, const char *mode, const char *arg,
			     uint32_t *out)
{
	uint64_t v;

	if (cli_parse_count(lc, mode, "--max-threads", "threads", arg, 1, 1u << 22, &v))
		return 2;
	*out = v;
	return 0;
}

void offcpu_default_opts(struct offcpu_opts *o)
{
	const char *t = getenv("EBPROF_TEST_MAX_RUNQ");
	const char *d = getenv("EBPROF_TEST_SWITCH_DELAY_NS");
	const char *pr = getenv("EBPROF_TEST_MAX_PROCS");

	memset(o, 0, sizeof(*o));
	o->test_max_runq = t ? (uint32_t)strtoul(t, NULL, 10) : 0;
	o->test_max_procs = pr ? (uint32_t)strtoul(pr, NULL, 10) : 0;
	/* (at most 1 ms: the program runs with interrupts off) */
	o->test_switch_delay_ns = d ? strtoull(d, NULL, 10) : 0;
	if (o->test_switch_delay_ns > 1000000)
		o->test_switch_delay_ns = 1000000;
	o->max_stacks = DEFAULT_MAX_STACKS;
	o->max_threads = DEFAULT_MAX_THREADS;
	o->states = OFFCPU_STATE_ALL;
	o->ns_idx = o->switches_idx = o->runnable_idx = o->wall_idx = -1;
}

static void offcpu_defaults(void *mo, struct session_opts *so)
{
	offcpu_default_opts(mo);
}

const struct mode_def offcpu_def = {
	.cli = &offcpu_cli,
	.ops = &offcpu_mode_ops,
	.opts_size = sizeof(struct offcpu_opts),
	.defaults = offcpu_defaults,
};

int cmd_offcpu(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &offcpu_def);
}
