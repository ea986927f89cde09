/* ebprof kmem: the command line of the kmem mode (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/kmem/collect.h"
#include "util/util.h"

enum {
	OPT_MAX_STACKS = OPT_MODE_BASE,
	OPT_MAX_LIVE,
	OPT_MIN_AGE,
};

static const struct option kmem_longopts[] = {
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-live", required_argument, NULL, OPT_MAX_LIVE },
	{ "min-age", required_argument, NULL, OPT_MIN_AGE },
	{ 0 },
};

static const char kmem_usage[] =
	"Usage: ebprof kmem [OPTIONS] [-a] [-d TIME]\n"
	"       ebprof kmem [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof kmem [OPTIONS] -- CMD [ARGS...]\n"
	"\n"
	"Kernel memory allocations by the kernel and user stacks of the task that made them:\n"
	"kmalloc, slab caches (kmem_cache_alloc), pages (mm_page_alloc, by order) and per-CPU\n"
	"allocations, from the kmem tracepoints (tp_btf), counted in the kernel. Each allocation\n"
	"is followed by pointer to its free, by whichever task or CPU frees it, so what is still\n"
	"allocated at the end is listed with its age and stack. Sample types: alloc_objects,\n"
	"alloc_space (bytes allocated, the default), inuse_objects, inuse_space (still\n"
	"allocated at the end), waste_space (bytes allocated - bytes requested: slab waste).\n"
	"With no target, the whole machine (-a). A process is charged with what its own tasks\n"
	"allocate: kernel threads working on its behalf are not counted for it, and an\n"
	"interrupt's allocations count for whichever task it interrupted. With -p or a command,\n"
	"each stack's live bytes are also followed over time (growing, plateau, ...).\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every process and kernel thread (the default)\n"
	"\n"
	"Tracking:\n"
	"      --min-age TIME     list as outstanding only allocations at least TIME old at the\n"
	"                         end (500ms, 30s, ...); in-use totals still count the others\n"
	"      --max-live N       allocations followed to their free at once (default 262144;\n"
	"                         preallocated, 128 bytes each: 32 MiB); past it, an allocation\n"
	"                         is counted but not followed (the drop live_table_full)\n"
	"      --max-stacks N     distinct stacks kept (default 32768), and twice as many\n"
	"                         (process, kind, stacks) counters; preallocated, about 1.7 KiB\n"
	"                         per stack in all (55 MiB); as they fill they are taken into\n"
	"                         the report and counting goes on (checked every 100 ms); what\n"
	"                         comes faster loses its stack or its per-stack count (not its\n"
	"                         process's), counted as a drop either way\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"      --sort bytes|count rank stacks by alloc_space (default) or alloc_objects\n"
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof kmem -d 10                        the whole machine for 10 s\n"
	"  sudo ebprof kmem -o kmem.json -- ./myprog     what a command makes the kernel allocate\n"
	"  sudo ebprof kmem -p 4242 -d 1m --min-age 30s  kernel memory a process keeps\n"
	"  sudo ebprof kmem -d 5 --value waste_space -o waste.svg   slab waste by stack\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int kmem_parse(void *mo, int c, const char *arg, struct session_opts *so,
		      const struct log_ctx *lc)
{
	struct kmem_opts *o = mo;
	uint64_t v;

	(void)so;
	switch (c) {
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "kmem", arg, 1, 1u << 21, &o->max_stacks);
	case OPT_MAX_LIVE:
		if (cli_parse_count(lc, "kmem", "--max-live", "allocations", arg, 1, 1u << 26, &v))
			return 2;
		o->max_live = v;
		return 0;
	case OPT_MIN_AGE:
		if (util_parse_duration(arg, &o->min_age_ns))
			return cli_usage_err(lc, "kmem", "invalid --min-age '%s' (a duration: "
					     "500ms, 30s, 5m, 1h, or seconds)", arg);
		return 0;
	}
	return cli_usage_err(lc, "kmem", "unknown option");
}

static const struct mode_cli kmem_cli = {
	.name = "kmem",
	.usage = kmem_usage,
	.longopts = kmem_longopts,
	.parse = kmem_parse,
	.default_all = true,
};

static void kmem_defaults(void *mo, struct session_opts *so)
{
	struct kmem_opts *o = mo;
	const char *t = getenv("EBPROF_TEST_MAX_PROCS");

	o->test_max_procs = t ? (uint32_t)strtoul(t, NULL, 10) : 0;
	o->max_stacks = KMEM_DEFAULT_MAX_STACKS;
	o->max_live = KMEM_DEFAULT_MAX_LIVE;
}

const struct mode_def kmem_def = {
	.cli = &kmem_cli,
	.ops = &kmem_mode_ops,
	.opts_size = sizeof(struct kmem_opts),
	.defaults = kmem_defaults,
};

int cmd_kmem(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &kmem_def);
}
