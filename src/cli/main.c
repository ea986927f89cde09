/* ebprof: entry point and command table. */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/target.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct log_ctx *lc);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "mem", cmd_mem, "trace the malloc family: top allocation sites, leaks, per-process totals" },
	{ "cpu", cmd_cpu, "sample on-CPU stacks (kernel and user): where the CPU time goes" },
	{ "offcpu", cmd_offcpu, "off-CPU time by stack: where threads wait, who wakes them, run-queue latency" },
	{ "lock", cmd_lock, "lock contention, kernel locks and futex waits, by lock and waiter's stack" },
	{ "stacks", cmd_stacks, "count user and kernel stacks at tracepoints and user functions" },
	{ "kmem", cmd_kmem, "kernel allocations by stack: slab caches and waste, outstanding memory" },
	{ "io", cmd_io, "block I/O latency by disk, operation, process and stack" },
	{ "profile", cmd_profile, "every mode at once: one report, findings grounded in the numbers" },
	{ "top", cmd_top, "a live view: processes by CPU, their hottest functions and stacks" },
	{ "agent", cmd_agent, "continuous profiling: push windows of cpu profiles to Pyroscope or Parca" },
	{ "report", cmd_report, "load a saved pprof profile and write it in any output format" },
	{ "diff", cmd_diff, "compare two saved profiles: what changed, differential flame graph" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ebprof COMMAND [OPTIONS] [-p PID[,PID...] | -- CMD [ARGS...]]\n"
		"\n"
		"An eBPF profiler. Commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f,
		"\n"
		"Examples:\n"
		"  sudo ebprof mem -- ./myprog arg1 arg2       launch, trace, report at exit\n"
		"  sudo ebprof mem -p 4242 -d 30               attach for 30 s (or Ctrl-C)\n"
		"  sudo ebprof mem -p 4242 -o out.json -o out.pb.gz\n"
		"  sudo ebprof cpu -o flame.svg -- ./myprog    where its CPU time goes\n"
		"  sudo ebprof cpu -p 4242 -d 10 -o flame.svg  CPU time by stack, 10 s\n"
		"  sudo ebprof cpu -a -d 10                    the whole machine for 10 s\n"
		"  sudo ebprof stacks -e syscalls:sys_enter_openat -- ./myprog   who opens files\n"
		"  sudo ebprof kmem -d 10                      kernel allocations, whole machine\n"
		"  sudo ebprof io -a -d 10                     disk latency, and who waits on it\n"
		"  sudo ebprof top                             live: who uses the CPU, where\n"
		"  sudo ebprof agent -a --server http://pyroscope:4040   continuous profiling\n"
		"  sudo ebprof lock -- ./server                which locks its threads wait on\n"
		"  sudo ebprof profile -o report.html -- ./myprog   CPU, I/O and memory at once\n"
		"  sudo ebprof offcpu -o wait.svg -- ./myprog  where its threads wait, and how long\n"
		"  ebprof report out.pb.gz -o flame.svg        render a saved profile again\n"
		"  ebprof diff before.pb.gz after.pb.gz -o diff.svg\n"
		"\n"
		"Run 'ebprof COMMAND --help' for a command's options; 'man ebprof' for details.\n");
}

int main(int argc, char **argv)
{
	struct log_ctx lc = { .verbose = 0, .prog = "ebprof" };

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("ebprof %s\n", EBPROF_VERSION);
		return 0;
	}
	target__raise_nofile();
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1, &lc);
	fprintf(stderr, "ebprof: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
