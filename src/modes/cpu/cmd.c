/* ebprof cpu: the command line of the cpu mode (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/cpu/collect.h"
#include "modes/offcpu/collect.h"

#define DEFAULT_MAX_STACKS (1u << 14)

enum {
	OPT_IDLE = OPT_MODE_BASE,
	OPT_CPU,
	OPT_PER_THREAD,
	OPT_MAX_STACKS,
	OPT_OFFCPU,
	OPT_MAX_THREADS,
};

static const struct option cpu_longopts[] = {
	{ "frequency", required_argument, NULL, 'F' },
	{ "idle", no_argument, NULL, OPT_IDLE },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "offcpu", no_argument, NULL, OPT_OFFCPU },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ 0 },
};

static const char cpu_usage[] =
	"Usage: ebprof cpu [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof cpu [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof cpu [OPTIONS] -a [-d TIME]\n"
	"\n"
	"Sample on-CPU stacks (kernel and user frames) with a software cpu-clock timer on each\n"
	"CPU, aggregated in the kernel. Each sample stands for exactly one period of CPU time,\n"
	"1e9/HZ ns: the profile's sample types are samples (count, the default) and cpu\n"
	"(nanoseconds). User stacks are unwound by each object's call frame information\n"
	"(.eh_frame, as gdb does; --unwind), so code built without frame pointers (most\n"
	"distribution libraries) has whole stacks.\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              sample every task on the sampled CPUs, kernel threads\n"
	"                         included (not the idle task, see --idle)\n"
	"\n"
	"Sampling:\n"
	"  -F, --frequency HZ     samples per second of CPU time, on each CPU (default 99);\n"
	"                         the period is 1e9/HZ ns, rounded down. HZ above the machine's\n"
	"                         limit (/proc/sys/kernel/perf_event_max_sample_rate, and at\n"
	"                         most 100000: the timer's 10 us floor) is refused, not clamped\n"
	"      --cpu LIST         sample only these CPUs, e.g. 0,2-3 (default: every online CPU)\n"
	"      --idle             with -a: count the CPUs' idle time too (process \"idle\")\n"
	"      --per-thread       one frame per thread (\"name [tid]\") under each process,\n"
	"                         named as the thread was then (a rename splits it)\n"
	"      --max-stacks N     distinct stacks kept, and (process, stacks) counters (default\n"
	"                         16384; preallocated, about 1 KiB each); past it, a sample\n"
	"                         loses its stack or is left out of the stacks, counted as a\n"
	"                         drop either way (each process's totals stay exact); so\n"
	"                         many thread names too with --per-thread\n"
	"      --offcpu           a wall-clock profile: the samples (each one period) and the\n"
	"                         time threads spend off-CPU (ebprof offcpu's, by their stack\n"
	"                         at the switch-out, leaf __schedule) in one profile and one\n"
	"                         flame graph; sample types samples, cpu, offcpu and wall\n"
	"                         (nanoseconds, cpu + offcpu: the default)\n"
	"      --max-threads N    with --offcpu: threads off-CPU at once that can be measured\n"
	"                         (default 32768, as ebprof offcpu's)\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof cpu -- ./myprog arg              profile a command until it exits\n"
	"  sudo ebprof cpu -p 4242 -d 10 -o flame.svg   a running process for 10 s, flame graph\n"
	"  sudo ebprof cpu -a -d 5 -F 999 -o out.pb.gz  the whole machine, pprof output\n"
	"  sudo ebprof cpu -a --idle --cpu 0 -d 2       what CPU 0 does, idle included\n"
	"  sudo ebprof cpu --per-thread -p 4242 -d 5 -o threads.folded\n"
	"  sudo ebprof cpu --offcpu -o wall.svg -- ./myprog   where its wall-clock time went\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int cpu_parse(void *mo, int c, const char *arg, struct session_opts *so,
		     const struct log_ctx *lc)
{
	struct cpu_opts *o = mo;
	uint64_t v;

	switch (c) {
	case 'F':
		if (cli_parse_u64(arg, &v) || v == 0 || v > UINT32_MAX)
			return cli_usage_err(lc, "cpu", "-F takes a sampling rate in Hz above 0, "
					     "e.g. -F 99 (got '%s')", arg);
		o->hz = v;
		return 0;
	case OPT_IDLE:
		o->idle = true;
		return 0;
	case OPT_CPU:
		if (cpu_parse_list(arg, o->cpus))
			return cli_usage_err(lc, "cpu", "--cpu takes a list of CPU numbers and "
					     "ranges, e.g. --cpu 0,2-3 (got '%s')", arg);
		o->cpu_given = true;
		return 0;
	case OPT_PER_THREAD:
		o->per_thread = true;
		return 0;
	case OPT_OFFCPU:
		o->offcpu = true;
		return 0;
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "cpu", arg, 1, 1u << 22, &o->max_stacks);
	case OPT_MAX_THREADS:
		return offcpu_parse_max_threads(lc, "cpu", arg, &o->max_threads);
	}
	return cli_usage_err(lc, "cpu", "unknown option");
}

static int cpu_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct cpu_opts *o = mo;
	uint32_t max = cpu_max_hz();
	bool online[CPU_MAX_CPUS];

	if (o->hz > max)
		return cli_usage_err(lc, "cpu", "-F %u is above this machine's highest sampling "
				     "rate, %u Hz (kernel.perf_event_max_sample_rate, and the "
				     "cpu-clock timer's 10 us floor); use -F %u or less", o->hz, max,
				     max);
	if (o->idle && !so->all)
		return cli_usage_err(lc, "cpu", "--idle goes with -a: the idle task belongs to no "
				     "process");
	if (o->max_threads && !o->offcpu)
		return cli_usage_err(lc, "cpu", "--max-threads goes with --offcpu: it sizes the "
				     "table of threads off-CPU at once");
	if (o->offcpu && o->cpu_given)
		return cli_usage_err(lc, "cpu", "--offcpu goes without --cpu: off-CPU time is "
				     "counted on every CPU, so samples must be too");
	if (o->cpu_given && cpu_online(online) == 0) {
		for (int i = 0; i < CPU_MAX_CPUS; i++)
			if (o->cpus[i] && !online[i])
				return cli_usage_err(lc, "cpu", "--cpu names CPU %d, which is not "
						     "online (see /sys/devices/system/cpu/online)",
						     i);
	}
	return 0;
}

static const struct mode_cli cpu_cli = {
	.name = "cpu",
	.usage = cpu_usage,
	.longopts = cpu_longopts,
	.shortopts = "F:",
	.parse = cpu_parse,
	.check = cpu_check,
};

static void cpu_defaults(void *mo, struct session_opts *so)
{
	struct cpu_opts *o = mo;

	o->hz = CPU_DEFAULT_HZ;
	o->max_stacks = DEFAULT_MAX_STACKS;
}

static int cpu_prepare(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	/* Start-up allocates and frees a few multi-MB buffers (libbpf reads the kernel's BTF,
	 * ~6 MB, and copies it; the kernel symbols' cache): from the heap instead of one mmap
	 * each, freed pages stay for the next instead of being unmapped and faulted in again
	 * (~1.5 ms of a ~28 ms start-up). Memory is then only returned at exit. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	return 0;
}

const struct mode_def cpu_def = {
	.cli = &cpu_cli,
	.ops = &cpu_mode_ops,
	.opts_size = sizeof(struct cpu_opts),
	.defaults = cpu_defaults,
	.prepare = cpu_prepare,
};

int cmd_cpu(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &cpu_def);
}
