/* `ebprof mem`: the malloc family, traced exactly per call stack. The mode's options, its
 * hooks into the shared session (core/mode.h: attach a process once its allocator is mapped,
 * the live-bytes series and snapshots every tick, the leak scan at exit, suppressions and
 * --fail-on-leak at the end), and the command. The run loop itself is core/session.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/leakscan.h"
#include "core/preflight.h"
#include "core/session.h"
#include "core/target.h"
#include "core/unwind.h"
#include "modes/mem/collect.h"
#include "modes/mem/ready.h"
#include "output/render.h"
#include "util/util.h"

#define EXIT_LEAKED 23		/* --fail-on-leak, as LeakSanitizer's default exitcode */

#define usage_err(lc, ...) cli_usage_err(lc, "mem", __VA_ARGS__)

struct mem_opts {
	struct mem_collector_opts col;
	bool leaks;		/* reachability scans at exit and at the end */
	unsigned heuristics;	/* memcheck's leak heuristics (bit set) */
	const char *suppressions;
	struct prof_suppressions *supp;
	bool fail_on_leak;
	bool temp_set;		/* --temp-threshold given */
	struct probes_opts probes;	/* --allocator, --lib, --symbol-prefix */
};

/* The mode's state during a run. */
struct mem_mode {
	const struct session_env *env;
	struct mem_opts *o;
	struct mem_collector *col;
	struct mem_totals tot;	/* at the last tick, for the progress line */
	bool launched;		/* the launched command has been attached (or failed to) */
	uint64_t win_ns;	/* CLOCK_MONOTONIC at the start of the window (0: the run's) */
};

static const char mem_usage[] =
	"Usage: ebprof mem [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof mem [OPTIONS] -p PID[,PID...] [--follow]\n"
	"       ebprof mem [OPTIONS] -a\n"
	"\n"
	"Trace every call of the malloc family (malloc, calloc, realloc, reallocarray, free,\n"
	"aligned_alloc, memalign, posix_memalign, valloc, pvalloc), of C++'s operator new,\n"
	"new[], delete and delete[] (every sized, aligned and nothrow variant) and of jemalloc's\n"
	"mallocx, rallocx, dallocx and sdallocx in a launched command or in running processes,\n"
	"aggregated in the kernel per call stack, and report the top allocation sites,\n"
	"outstanding (leaked) allocations and per-process totals.\n"
	"\n"
	"Targets:\n"
	"  -- CMD [ARGS...]       launch CMD (PATH lookup), trace it from its first allocation,\n"
	"                         report when it exits; ebprof exits with its status. Every\n"
	"                         process it creates (fork, vfork, clone) and every program they\n"
	"                         exec is traced too, from its start, and reported on its own\n"
	"                         (pid, parent, namespace pid, command line) with a total; a\n"
	"                         forked child counts from zero (its copy of the parent's heap\n"
	"                         is the parent's); a program that cannot be traced (static Go,\n"
	"                         stripped static binaries) gets a warning with the reason\n"
	"  -p, --pid PID[,PID]    attach to running processes (repeatable); stop on -d, Ctrl-C,\n"
	"                         SIGTERM, or when every target has exited\n"
	"      --follow           with -p: also trace the processes they create, as above\n"
	"  -a, --all-processes    every process that uses the machine's C libraries, and every\n"
	"                         one started until ebprof stops (-d, Ctrl-C, SIGTERM): each of\n"
	"                         their malloc-family calls pays a uprobe trap (1-3 us), machine-\n"
	"                         wide; no --leaks\n"
	"  -d, --duration TIME    stop after TIME: 500ms, 30s, 5m, 1h, or plain seconds (with a\n"
	"                         command: stop tracing, report, and let it run on)\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE      write the report to FILE, format by extension: .txt (text),\n"
	"                         .json, .pb.gz (pprof), .folded (folded stacks), .svg (flame\n"
	"                         graph), .html (one-page report), .speedscope.json, .csv;\n"
	"                         repeatable; default: text to stdout. FORMAT:PATH names the\n"
	"                         format (folded:- writes folded stacks to stdout)\n"
	"      --top N            allocation sites shown in the text report (default 10, 0 = all)\n"
	"      --sort bytes|count rank sites by bytes (default) or by number of allocations\n"
	"      --value TYPE       what .folded and .svg weigh frames by: alloc_space (default),\n"
	"                         alloc_objects, inuse_space or inuse_objects; with --leaks also\n"
	"                         definite_space, indirect_space, possible_space,\n"
	"                         reachable_space (and _objects); with --mmap also\n"
	"                         mmap_space, mmap_objects, mmap_inuse_space, mmap_inuse_objects\n"
	"      --inverted         draw the flame graph as an icicle (roots at the top)\n"
	"      --min-size BYTES   track only allocations of at least BYTES\n"
	"      --max-size BYTES   track only allocations of at most BYTES\n"
	"      --min-age DURATION list as outstanding (leak candidates) only blocks at least\n"
	"                         this old at the end: 500ms, 30s, 2m, or plain seconds;\n"
	"                         live totals still count every block (default 0)\n"
	"      --temp-threshold next-alloc|DURATION  what counts as a temporary allocation:\n"
	"                         freed before its thread's next allocation (next-alloc, the\n"
	"                         default, heaptrack's rule) or within DURATION (e.g. 1ms)\n"
	"\n"
	"Growth: while tracing, each site's live bytes are snapshotted every second (less often\n"
	"when that gets costly); with 3 or more snapshots the reports rank sites by growth rate\n"
	"(bytes/s over the later half of the run) with a trend: growing, plateau, shrinking or\n"
	"flat. Each process's peak live bytes are shown with when they happened and the sites\n"
	"that held memory in the snapshot nearest the peak.\n"
	"\n"
	"Cheaper modes (full tracking of every call is the default):\n"
	"      --sample-bytes N   sampled tracking: one allocation per N requested bytes on\n"
	"                         average (random exponential intervals per thread, as jemalloc's\n"
	"                         and tcmalloc's heap profilers); each sample is weighted so that\n"
	"                         every value is an unbiased estimate; only sampled blocks are\n"
	"                         tracked as live (e.g. 524288; at most 1073741824)\n"
	"      --sample-every N   sampled tracking of every Nth allocation of each thread\n"
	"                         (random phase), each standing for N\n"
	"      --alloc-only       entry probes only, no return or free probe: calls and requested\n"
	"                         bytes per call stack at the lowest cost; no live, freed or\n"
	"                         leaked values, failed calls count as calls\n"
	"\n"
	"Debugging:\n"
	"      --trace FILE       also write every counted call to FILE as JSON lines (time,\n"
	"                         pid/tid, function, size, pointer, result, stack id; each stack\n"
	"                         once), for short debugging runs: about +15-30% over full\n"
	"                         tracking; calls lost to a full buffer are counted as drops\n"
	"\n"
	"Leaks:\n"
	"      --leaks            classify outstanding blocks by reachability, as valgrind's\n"
	"                         memcheck does (definitely, indirectly and possibly lost, still\n"
	"                         reachable): each process is scanned when it exits, and those\n"
	"                         still running when tracing stops are stopped for a scan then;\n"
	"                         SIGUSR1 to ebprof scans the running ones at once (--scan is the\n"
	"                         same option)\n"
	"      --leak-heuristics LIST  memcheck's heuristics for interior pointers: all\n"
	"                         (default), none, or a comma-separated list of stdstring,\n"
	"                         length64, newarray, multipleinheritance\n"
	"      --suppressions FILE  leaks at sites matching a 'leak:PATTERN' line of FILE\n"
	"                         (LeakSanitizer's format) are reported as suppressed\n"
	"      --fail-on-leak     exit with status 23 when definitely lost blocks remain\n"
	"                         (after suppressions); implies --leaks\n"
	"\n"
	"Allocator (detected per process: glibc, jemalloc, tcmalloc, mimalloc, or a malloc in\n"
	"the executable; each function is probed in the object the dynamic linker binds it to,\n"
	"so a preloaded allocator and the C++ operators it defines are traced where they run):\n"
	"      --allocator KIND   probe the object of this kind first: glibc, jemalloc,\n"
	"                         tcmalloc, mimalloc or static (the executable)\n"
	"      --lib PATH         probe this mapped library first (a custom allocator)\n"
	"      --symbol-prefix P  the C functions are named P<name>: je_ traces je_malloc,\n"
	"                         je_free, ... (jemalloc built with a prefix)\n"
	"Mappings:\n"
	"      --mmap             also trace the program's own mmap, munmap, mremap and brk\n"
	"                         (anonymous mappings, private or shared) as a category of\n"
	"                         their own: sites with the leaf mmap, mremap or brk, mapped,\n"
	"                         unmapped, live and peak bytes per process, mappings still\n"
	"                         there at the end; never mixed into the malloc numbers (calls\n"
	"                         inside malloc, and glibc's munmap in free, are not counted).\n"
	"                         Off by default: it adds a little to every system call of\n"
	"                         every process while it runs (docs/PERFORMANCE.md)\n"
	"      --max-regions N    mapped regions tracked with --mmap (default 65536)\n"
	"\n"
	"Limits (kernel tables; anything that does not fit is counted as a drop and reported):\n"
	"      --max-live N       outstanding allocations tracked (default 2097152, 128 MiB;\n"
	"                         sampled 262144, 16 MiB)\n"
	"      --max-stacks N     distinct call stacks and sites of the processes running at\n"
	"                         once (default 32768; an ended process's are forgotten)\n"
	"      --max-procs N      processes (default 1024)\n"
	"\n"
	OPTIONS_HELP_UNWIND
	"  -q, --quiet            no progress line (shown on stderr only when it is a terminal)\n"
	"  -v, --verbose          say what is attached where, and where each function's probe\n"
	"                         went and why (-vv: libbpf and debug messages)\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  sudo ebprof mem -- ./myprog arg1 arg2\n"
	"  sudo ebprof mem -p 4242 -d 30\n"
	"  sudo ebprof mem -p 4242,4243 -o out.txt -o out.json -o out.pb.gz\n"
	"  sudo ebprof mem -o build.json -- make -j2        # every compiler process\n"
	"  sudo ebprof mem -p 4242 --follow -d 60           # a server and its workers\n"
	"  sudo ebprof mem -a -d 10 -o all.txt              # the whole machine, briefly\n"
	"  sudo ebprof mem --sort count --top 20 -- sqlite3 db.sqlite 'select ...'\n"
	"  sudo ebprof mem -p 4242 -d 5m --min-age 1m -o leaks.txt -o leaks.json\n"
	"  sudo ebprof mem --leaks --suppressions known.supp --fail-on-leak -- ./tests\n"
	"  sudo ebprof mem --allocator jemalloc -p $(pidof redis-server) -d 10\n"
	"  sudo ebprof mem --mmap -o out.json -- ./myprog\n"
	"  sudo ebprof mem -p 4242 -d 60 --sample-bytes 524288 -o heap.pb.gz\n"
	"  sudo ebprof mem --alloc-only -o flame.svg -- ./myprog\n";


/* definite_objects, definite_space, indirect_..., possible_..., reachable_... */
static bool is_leak_type(const char *t)
{
	char name[32];

	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		snprintf(name, sizeof(name), "%s_objects", prof_leak_class_names[c]);
		if (!strcmp(t, name))
			return true;
		snprintf(name, sizeof(name), "%s_space", prof_leak_class_names[c]);
		if (!strcmp(t, name))
			return true;
	}
	return false;
}

/* the --mmap category's sample types */
static bool is_mmap_type(const char *t)
{
	return !strcmp(t, "mmap_space") || !strcmp(t, "mmap_objects") ||
	       !strcmp(t, "mmap_inuse_space") || !strcmp(t, "mmap_inuse_objects");
}

/* "all", "none" or a comma-separated list of memcheck's heuristic names */
static int parse_heuristics(const char *arg, unsigned *set)
{
	char buf[256], *tok, *save = NULL;

	if (!strcmp(arg, "all")) {
		*set = LEAK_HEUR_ALL;
		return 0;
	}
	*set = 0;
	if (!strcmp(arg, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int h;

		for (h = 1; h < LEAK_HEUR__COUNT; h++)
			if (!strcmp(tok, prof_leak_heuristic_names[h]))
				break;
		if (h == LEAK_HEUR__COUNT)
			return -1;
		*set |= 1u << h;
	}
	return 0;
}


static int check_modes(const struct log_ctx *lc, const struct mem_opts *o,
		       const struct session_opts *so, bool temp_set);

enum {
	OPT_MIN = OPT_MODE_BASE, OPT_MAX, OPT_MAXLIVE, OPT_MAXSTACKS, OPT_MAXPROCS, OPT_LEAKS,
	OPT_HEUR, OPT_SUPP, OPT_FAIL, OPT_MINAGE, OPT_TEMP, OPT_ALLOCATOR, OPT_LIB, OPT_PREFIX,
	OPT_MMAP, OPT_MAXREGIONS, OPT_SAMPLE_BYTES, OPT_SAMPLE_EVERY, OPT_ALLOC_ONLY,
	OPT_TRACE,
};

static const struct option mem_longopts[] = {
	{ "min-size", required_argument, NULL, OPT_MIN },
	{ "max-size", required_argument, NULL, OPT_MAX },
	{ "min-age", required_argument, NULL, OPT_MINAGE },
	{ "temp-threshold", required_argument, NULL, OPT_TEMP },
	{ "max-live", required_argument, NULL, OPT_MAXLIVE },
	{ "max-stacks", required_argument, NULL, OPT_MAXSTACKS },
	{ "max-procs", required_argument, NULL, OPT_MAXPROCS },
	{ "leaks", no_argument, NULL, OPT_LEAKS },
	{ "scan", no_argument, NULL, OPT_LEAKS },
	{ "leak-heuristics", required_argument, NULL, OPT_HEUR },
	{ "suppressions", required_argument, NULL, OPT_SUPP },
	{ "fail-on-leak", no_argument, NULL, OPT_FAIL },
	{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
	{ "lib", required_argument, NULL, OPT_LIB },
	{ "symbol-prefix", required_argument, NULL, OPT_PREFIX },
	{ "mmap", no_argument, NULL, OPT_MMAP },
	{ "max-regions", required_argument, NULL, OPT_MAXREGIONS },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "sample-every", required_argument, NULL, OPT_SAMPLE_EVERY },
	{ "alloc-only", no_argument, NULL, OPT_ALLOC_ONLY },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{}
};

/* One of mem's own options. */
static int mem_parse(void *mv, int c, const char *arg, struct session_opts *so,
		     const struct log_ctx *lc)
{
	struct mem_opts *o = mv;
	uint64_t v;

	switch (c) {
		case OPT_ALLOCATOR:
			if (!probes__valid_kind(arg))
				return usage_err(lc, "unknown allocator '%s': use glibc, jemalloc, "
						     "tcmalloc, mimalloc or static", arg);
			o->probes.allocator = arg;
			break;
		case OPT_LIB:
			/* a bare file name is matched against the mapped objects' names */
			if (!*arg || (strchr(arg, '/') && access(arg, R_OK)))
				return usage_err(lc, "--lib %s: no such readable file", arg);
			o->probes.lib = arg;
			break;
		case OPT_PREFIX:
			if (!*arg || strlen(arg) > 32 || strchr(arg, '/'))
				return usage_err(lc, "invalid --symbol-prefix '%s' (a symbol prefix "
						     "such as je_)", arg);
			o->probes.prefix = arg;
			break;
		case OPT_LEAKS:
			o->leaks = true;
			break;
		case OPT_FAIL:
			o->leaks = o->fail_on_leak = true;
			break;
		case OPT_MMAP:
			o->col.mmap = true;
			break;
		case OPT_MAXREGIONS:
			if (cli_parse_u64(arg, &v) || v == 0 || v > (1u << 24))
				return usage_err(lc, "invalid --max-regions '%s' (1 to 16777216)",
						 arg);
			o->col.max_regions = v;
			break;
		case OPT_SUPP:
			o->suppressions = arg;
			o->leaks = true;
			break;
		case OPT_HEUR:
			if (parse_heuristics(arg, &o->heuristics))
				return usage_err(lc, "invalid --leak-heuristics '%s' (all, none, or a "
						     "list of stdstring, length64, newarray, "
						     "multipleinheritance)", arg);
			break;
		case OPT_MIN:
			if (cli_parse_u64(arg, &o->col.min_size))
				return usage_err(lc, "invalid --min-size '%s'", arg);
			break;
		case OPT_MAX:
			if (cli_parse_u64(arg, &o->col.max_size))
				return usage_err(lc, "invalid --max-size '%s'", arg);
			break;
		case OPT_TEMP:
			o->temp_set = true;
			if (!strcmp(arg, "next-alloc"))
				o->col.temp_ns = 0;
			else if (util_parse_duration(arg, &o->col.temp_ns) || !o->col.temp_ns)
				return usage_err(lc, "invalid --temp-threshold '%s' (next-alloc, or a "
						     "duration > 0: 100us, 1ms, ...)", arg);
			break;
		case OPT_SAMPLE_BYTES:
		case OPT_SAMPLE_EVERY: {
			const char *name = c == OPT_SAMPLE_BYTES ? "--sample-bytes" : "--sample-every";
			uint64_t n;

			if (cli_parse_u64(arg, &n) || n == 0 || n > MEM_SAMPLE_MAX_PERIOD) {
				char why[128];

				snprintf(why, sizeof(why), "invalid %s '%s' (a whole number from 1 "
					 "to %llu)", name, arg,
					 (unsigned long long)MEM_SAMPLE_MAX_PERIOD);
				return usage_err(lc, "%s", why);
			}
			if (o->col.sample_mode)
				return usage_err(lc, "%s", "give only one of --sample-bytes, "
						 "--sample-every and --alloc-only");
			o->col.sample_mode = c == OPT_SAMPLE_BYTES ? MEM_SAMPLE_BYTES
								    : MEM_SAMPLE_EVERY;
			o->col.sample_period = n;
			break;
		}
		case OPT_TRACE:
			o->col.trace_path = arg;
			break;
		case OPT_ALLOC_ONLY:
			if (o->col.sample_mode)
				return usage_err(lc, "%s", "give only one of --sample-bytes, "
						 "--sample-every and --alloc-only");
			o->col.sample_mode = MEM_SAMPLE_ALLOC_ONLY;
			break;
		case OPT_MINAGE:
			if (util_parse_duration(arg, &o->col.min_age_ns))
				return usage_err(lc, "invalid --min-age '%s' (a duration: 500ms, "
						     "30s, 2m, or seconds)", arg);
			break;
		case OPT_MAXLIVE:
		case OPT_MAXSTACKS:
		case OPT_MAXPROCS:
			if (cli_parse_u64(arg, &v) || v == 0 || v > (1u << 28))
				return usage_err(lc, "invalid table size '%s'", arg);
			if (c == OPT_MAXLIVE)
				o->col.max_live = v;
			else if (c == OPT_MAXSTACKS)
				o->col.max_stacks = v;
			else
				o->col.max_procs = v;
			break;
	default:
		return 2;
	}
	return 0;
}

/* The whole: what mem cannot combine. */
static int mem_check(void *mv, struct session_opts *so, const struct log_ctx *lc)
{
	struct mem_opts *o = mv;
	const char *v = so->out.value_type;

	o->col.trace_all = so->all;
	if (v && strcmp(v, "alloc_space") && strcmp(v, "alloc_objects") &&
	    strcmp(v, "inuse_space") && strcmp(v, "inuse_objects") && !is_leak_type(v) &&
	    !is_mmap_type(v))
		return usage_err(lc, "invalid --value '%s' (alloc_space, alloc_objects, "
				 "inuse_space, inuse_objects, or with --leaks definite_space, "
				 "possible_space, ...)", v);
	if (so->all && o->leaks)
		return usage_err(lc, "%s", "-a cannot be combined with --leaks: a leak scan stops a "
				 "process under ptrace, and -a traces processes without it");
	if (so->all && o->col.mmap)
		return usage_err(lc, "%s", "-a cannot be combined with --mmap: mappings are tracked "
				 "for processes ebprof attaches to, and -a adopts them at their first "
				 "malloc call");
	if (v && is_leak_type(v) && !o->leaks)
		return usage_err(lc, "--value %s needs --leaks (the classes come from its scan)", v);
	if (v && is_mmap_type(v) && !o->col.mmap)
		return usage_err(lc, "--value %s needs --mmap (mappings are traced only with it)", v);
	if (o->leaks && (o->col.min_size || o->col.max_size != UINT64_MAX))
		return usage_err(lc, "%s", "--leaks cannot be combined with --min-size/--max-size: "
				 "the scan must know every block to follow pointers through it");
	if (o->col.min_size > o->col.max_size)
		return usage_err(lc, "%s", "--min-size is larger than --max-size");
	return check_modes(lc, o, so, o->temp_set);
}

/* Options a sampled or alloc-only run cannot honour. */
static int check_modes(const struct log_ctx *lc, const struct mem_opts *o,
		       const struct session_opts *so, bool temp_set)
{
	const char *v = so->out.value_type;

	if (o->col.sample_mode && o->col.trace_path)
		return usage_err(lc, "%s", "--trace records every call: it cannot be combined with "
				 "--sample-bytes, --sample-every or --alloc-only");
	if (o->col.sample_mode == MEM_SAMPLE_BYTES || o->col.sample_mode == MEM_SAMPLE_EVERY) {
		if (o->leaks)
			return usage_err(lc, "%s", "--leaks cannot be combined with --sample-bytes/"
					 "--sample-every: the scan must know every block to follow "
					 "pointers through it; drop the sampling option");
		return 0;
	}
	if (o->col.sample_mode != MEM_SAMPLE_ALLOC_ONLY)
		return 0;
	if (o->col.mmap)
		return usage_err(lc, "%s", "--alloc-only cannot be combined with --mmap: without "
				 "return probes a mapping made inside malloc cannot be told from the "
				 "program's own");
	if (so->all)
		return usage_err(lc, "%s", "--alloc-only cannot be combined with -a: give -p PID or "
				 "a command");
	if (o->leaks)
		return usage_err(lc, "%s", "--alloc-only sees no frees, so it cannot find leaks: "
				 "drop --alloc-only, or --leaks/--fail-on-leak/--suppressions");
	if (temp_set || o->col.min_age_ns)
		return usage_err(lc, "%s", "--alloc-only sees no frees, so --temp-threshold and "
				 "--min-age mean nothing there: drop one or the other");
	if (o->col.min_size || o->col.max_size != UINT64_MAX)
		return usage_err(lc, "%s", "--alloc-only counts every request: --min-size/"
				 "--max-size cannot be combined with it");
	if (v && strcmp(v, "alloc_space") && strcmp(v, "alloc_objects"))
		return usage_err(lc, "--alloc-only has only alloc_space and alloc_objects to "
				 "weigh by, not --value %s", v);
	return 0;
}

/* What a sampled or alloc-only profile's values mean, in every output. */
static void mode_notes(struct profile *prof, const struct mem_collector_opts *col)
{
	unsigned long long n = col->sample_period;

	switch (col->sample_mode) {
	case MEM_SAMPLE_BYTES:
		prof->sampling = "bytes";
		prof->sample_period = n;
		profile__add_note(prof, "sampled tracking (--sample-bytes %llu): one allocation per "
				  "%llu requested bytes on average was recorded, each weighted by "
				  "1/(1-exp(-size/%llu)); every count and byte value is an estimate, "
				  "live and outstanding values cover the sampled blocks only", n, n, n);
		break;
	case MEM_SAMPLE_EVERY:
		prof->sampling = "every";
		prof->sample_period = n;
		profile__add_note(prof, "sampled tracking (--sample-every %llu): every %lluth "
				  "allocation of each thread was recorded, each standing for %llu; "
				  "every count and byte value is an estimate, live and outstanding "
				  "values cover the sampled blocks only", n, n, n);
		break;
	case MEM_SAMPLE_ALLOC_ONLY:
		prof->sampling = "alloc-only";
		profile__add_note(prof, "%s", "alloc-only (--alloc-only): entry probes only; calls "
				  "and requested bytes per stack, failed calls included; frees, live "
				  "blocks and failures are not seen");
		break;
	}
}

/* ---- the mode's hooks (core/mode.h) ----------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}


static void *mem_open(const struct session_env *env, void *opts)
{
	struct mem_mode *mm = calloc(1, sizeof(*mm));
	struct mem_opts *o = opts;
	struct profile *prof = env->prof;

	if (!mm) {
		pr_err(env->lc, "out of memory");
		return NULL;
	}
	mm->env = env;
	mm->o = o;
	o->col.lc = env->lc;
	o->col.unwind = env->unwind;
	o->col.windows = env->windows;
	mm->col = mem_collector__new(&o->col);
	if (!mm->col ||
	    (o->col.sample_mode == MEM_SAMPLE_ALLOC_ONLY ? mem_profile__init_alloc_only(prof)
							: mem_profile__init(prof, o->leaks)) ||
	    (o->col.mmap && mem_profile__add_mmap_types(prof))) {
		if (mm->col)
			pr_err(env->lc, "out of memory");
		mem_collector__free(mm->col);
		free(mm);
		return NULL;
	}
	mode_notes(prof, &o->col);
	if (o->col.temp_ns)
		profile__add_note(prof, "temporary allocations: blocks freed within %llu ns of "
				  "their allocation (--temp-threshold)",
				  (unsigned long long)o->col.temp_ns);
	if (o->col.min_size || o->col.max_size != UINT64_MAX)
		profile__add_note(prof, "only allocations of %llu to %llu bytes are tracked "
				  "(--min-size/--max-size): totals leave the others out, and their frees "
				  "count as unknown frees", (unsigned long long)o->col.min_size,
				  (unsigned long long)o->col.max_size);
	if (o->col.min_age_ns) {
		char age[32];

		prof->min_age_ns = o->col.min_age_ns;
		profile__add_note(prof, "outstanding allocations younger than %s at the end are "
				  "not listed (--min-age); live totals count them",
				  render__duration(o->col.min_age_ns, age, sizeof(age)));
	}
	mem_collector__set_start(mm->col, env->start_ns);
	return mm;
}

static void mem_close(void *mv)
{
	struct mem_mode *mm = mv;

	mem_collector__free(mm->col);
	free(mm);
}

/*
 * A launched program (or a traced one's new program) runs until its allocator is mapped; a
 * running process (-p) or a new child is probed through the allocator it maps now.
 */
static int mem_attach(void *mv, pid_t pid, enum mode_attach how, int *status)
{
	struct mem_mode *mm = mv;
	const struct log_ctx *lc = mm->env->lc;
	bool launch = how == MODE_ATTACH_EXEC && mm->env->argv && !mm->launched;
	struct alloc_lib lib;
	pid_t parent = 0;
	int err;

	switch (how) {
	case MODE_ATTACH_EXEC:
		mm->launched = true;
		err = mem__run_to_allocator(lc, pid, mem_collector__unwinder(mm->col), &lib,
					    status);
		if (err == -ESRCH)
			return err;
		if (err == -ENOPKG && launch) {
			pr_err(lc, "cannot trace '%s': %s", mm->env->argv[0], probes__last_error());
			return err;
		}
		if (err)
			return -ENOENT;
		break;
	case MODE_ATTACH_PID:
		err = probes__find_allocator(pid, &lib);
		if (err == -ESRCH)
			return err;
		if (err == -ENOPKG) {
			pr_err(lc, "cannot attach to PID %d: %s", pid, probes__last_error());
			return err;
		}
		/* -ENOENT: nothing serving malloc is mapped; why, in the words a launched
		 * program's warning uses (a Go program, a stripped static one) */
		if (err == -ENOENT) {
			pr_err(lc, "cannot attach to PID %d: %s", pid, mem__why_untraceable(pid));
			return -EINVAL;
		}
		if (err) {
			pr_err(lc, "cannot attach to PID %d: cannot read its mappings: %s", pid,
			       strerror(-err));
			return -EINVAL;
		}
		break;
	default: {	/* a child, forked from its parent: the blocks live then are its too */
		pid_t tgid, ns_pid;

		if (probes__find_allocator(pid, &lib))
			return -ENOENT;
		if (target__ids(pid, &tgid, &parent, &ns_pid))
			parent = 0;
		break;
	}
	}
	/* reported here; the session counts the process as not traced (E2BIG: --max-procs) */
	return mem_collector__attach(mm->col, pid, parent, &lib);
}

static const char *mem_why(void *mv, pid_t pid)
{
	return mem__why_untraceable(pid);
}

/*
 * -a: one pair of links without a pid filter on every distinct C library (by inode: containers
 * bring their own) that a process maps now. Processes are reported as they call it.
 */
static int mem_attach_all(void *mv)
{
	struct mem_mode *mm = mv;
	struct { dev_t dev; ino_t ino; } seen[64];
	int nseen = 0, nproc = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		pr_err(mm->env->lc, "cannot list processes in /proc: %s", strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		pid_t pid = atoi(de->d_name);
		struct alloc_lib lib;
		struct stat st;
		int i;

		if (pid <= 0 || pid == getpid() || probes__find_allocator(pid, &lib) ||
		    strcmp(lib.kind, "glibc") || stat(lib.open_path, &st))
			continue;
		/* the C library alone: whether libstdc++ is probed must not depend on which
		 * process is met first (its operators' inner malloc and free are counted) */
		for (uint32_t o = 0; o < lib.nobjs; o++)
			if (!strcmp(lib.objs[o].path, lib.path)) {
				if (o)
					lib.objs[0] = lib.objs[o];
				lib.nprobes = lib.objs[0].nprobes;
				lib.nobjs = 1;
				break;
			}
		nproc++;
		for (i = 0; i < nseen; i++)
			if (seen[i].dev == st.st_dev && seen[i].ino == st.st_ino)
				break;
		if (i < nseen || nseen == (int)(sizeof(seen) / sizeof(seen[0])))
			continue;
		if (mem_collector__attach_all(mm->col, &lib)) {
			closedir(d);
			return -EINVAL;
		}
		seen[nseen].dev = st.st_dev;
		seen[nseen++].ino = st.st_ino;
	}
	closedir(d);
	if (!nseen) {
		pr_err(mm->env->lc, "-a: no process maps a C library ebprof can probe");
		return -ENOENT;
	}
	pr_warn(mm->env->lc, "-a: tracing every process that uses %s%d C librar%s (%d processes now, "
		"and every one started until ebprof stops): each of their malloc-family calls pays "
		"a uprobe trap, about 1-3 us, on the whole machine", nseen == 1 ? "the " : "", nseen,
		nseen == 1 ? "y" : "ies", nproc);
	return 0;
}

/* Every tick: each process's live bytes into the profile's series, and the sites' live bytes
 * when a snapshot of them is due (about every second). Every second: the maps snapshots (for
 * processes that vanish without an exit stop). With -a, new callers join the report while
 * their mappings can still be read, and ended ones are reported and forgotten. */
static void mem_tick(void *mv, int64_t t_ns, bool second)
{
	struct mem_mode *mm = mv;

	if (mm->env->all)
		mem_collector__adopt_new(mm->col);
	mem_collector__sample(mm->col, mm->env->prof, t_ns, &mm->tot);
	mem_collector__snapshot(mm->col, mono_ns());
	mem_collector__poll(mm->col);
	mem_collector__unwind_tick(mm->col);
	if (!second)
		return;
	if (mm->env->all)
		mem_collector__finalize_gone(mm->col, mm->env->prof, mm->env->sym, mono_ns());
	mem_collector__refresh(mm->col);
}

/* the unwinder's news of code mapped since its tables were loaded (core/unwind.h) */
static int mem_wake_fd(void *mv)
{
	return mem_collector__unwind_fd(((struct mem_mode *)mv)->col);
}

static void mem_wake(void *mv)
{
	mem_collector__unwind_poll(((struct mem_mode *)mv)->col);
}

static bool mem_held(void *mv, pid_t pid, pid_t tid)
{
	return unwinder__held(mem_collector__unwinder(((struct mem_mode *)mv)->col), pid, tid);
}

static void mem_progress(void *mv, char *buf, size_t len)
{
	struct mem_mode *mm = mv;
	char live[32];

	snprintf(buf, len, "%llu calls  live %s in %llu blocks  drops %llu",
		 (unsigned long long)mm->tot.calls,
		 render__bytes(mm->tot.live_bytes, live, sizeof(live)),
		 (unsigned long long)mm->tot.live_count, (unsigned long long)mm->tot.drops);
}

/* One line on stderr per on-demand scan: what it found, and what it cost the process. */
static void scan_line(struct mem_mode *mm, pid_t pid, const struct prof_scan *ps)
{
	char b[PROF_LEAK__COUNT][32], el[32];

	session__clear_progress(mm->env->s);
	for (int cl = 0; cl < PROF_LEAK__COUNT; cl++)
		render__bytes(ps->bytes[cl], b[cl], sizeof(b[cl]));
	fprintf(stderr, "ebprof: PID %d scanned: definitely lost %s in %llu blocks, indirectly "
		"%s in %llu, possibly %s in %llu, still reachable %s in %llu (stopped %s)\n", pid,
		b[0], (unsigned long long)ps->count[0], b[1], (unsigned long long)ps->count[1],
		b[2], (unsigned long long)ps->count[2], b[3], (unsigned long long)ps->count[3],
		render__duration(ps->stopped_ns, el, sizeof(el)));
}

/* A reachability scan of pid (--leaks); at_exit: it is held at its exit stop. */
static int mem_inspect(void *mv, pid_t pid, bool at_exit, int *leader_status)
{
	struct mem_mode *mm = mv;
	int err = mem_collector__scan(mm->col, pid, at_exit, mm->o->heuristics,
				      mono_ns() - mm->env->start_ns, leader_status);

	if (err)
		return err;
	if (!at_exit && !session__stopping(mm->env->s))
		scan_line(mm, pid, mem_collector__last_scan(mm->col, pid));
	return 0;
}

static void mem_thread_exit(void *mv, pid_t pid, pid_t tid)
{
	struct mem_mode *mm = mv;

	if (mm->o->leaks)
		mem_collector__thread_exit(mm->col, pid, tid);
}

static void mem_finalize(void *mv, pid_t pid, bool exec)
{
	struct mem_mode *mm = mv;

	/* the last point of its series, then its final numbers */
	mem_collector__sample(mm->col, mm->env->prof, mono_ns() - mm->env->start_ns, NULL);
	mem_collector__finalize(mm->col, pid, mm->env->prof, mm->env->sym, mono_ns(), exec);
}

static void mem_retire(void *mv, pid_t pid)
{
	mem_collector__retire(((struct mem_mode *)mv)->col, pid);
}

static void mem_started(void *mv, uint64_t start_ns)
{
	mem_collector__set_start(((struct mem_mode *)mv)->col, start_ns);
}

static void mem_stop(void *mv)
{
	mem_collector__quiesce(((struct mem_mode *)mv)->col);
}

static void mem_finish(void *mv)
{
	struct mem_mode *mm = mv;
	struct profile *prof = mm->env->prof;

	if (mm->env->all) {
		mem_collector__adopt_new(mm->col);
		mem_collector__finalize_all(mm->col, prof, mm->env->sym, mono_ns());
	}
	mem_collector__trace_finish(mm->col);
	mem_collector__drops(mm->col, prof);
	if (mm->o->supp && profile__suppress(prof, mm->o->supp))
		profile__add_note(prof, "leaks at sites matching %s are counted as suppressed",
				  mm->o->suppressions);
}

/* --fail-on-leak: are definitely lost blocks left after suppressions? Says so on stderr. */
static bool definitely_lost(const struct log_ctx *lc, const struct profile *p)
{
	uint64_t count = 0, bytes = 0;

	for (uint32_t i = 0; i < p->nprocesses; i++) {
		const struct prof_scan *ps = &p->processes[i].scan;

		count += ps->count[PROF_LEAK_DEFINITE] - ps->suppressed_count[PROF_LEAK_DEFINITE];
		bytes += ps->bytes[PROF_LEAK_DEFINITE] - ps->suppressed_bytes[PROF_LEAK_DEFINITE];
	}
	if (count)
		pr_err(lc, "definitely lost: %llu bytes in %llu blocks; exiting with status %d "
			   "(--fail-on-leak)", (unsigned long long)bytes, (unsigned long long)count,
		       EXIT_LEAKED);
	return count > 0;
}

static int mem_verdict(void *mv)
{
	struct mem_mode *mm = mv;

	return mm->o->fail_on_leak && definitely_lost(mm->env->lc, mm->env->prof) ? EXIT_LEAKED
										  : 0;
}

/* A window for live views: the processes' allocations since the last one, what they hold. */
static int mem_window(void *mv, struct profile *into)
{
	struct mem_mode *mm = mv;
	uint64_t now = mono_ns(), from = mm->win_ns ? mm->win_ns : mm->env->start_ns;
	int err = 0;

	if (!into->ntypes) {
		/* what the values are: estimates of a sampled run (pprof's period says it) */
		into->sampling = mm->env->prof->sampling;
		into->sample_period = mm->env->prof->sample_period;
	}
	/* the processes finalized since the last window are in it too (fin_win): a run cut into
	 * windows puts nothing in the run's profile */
	err = mem_collector__window(mm->col, into, mm->env->sym);
	into->duration_nanos = now - from;
	profile__add_info(into, "window", "%.2f s", (now - from) / 1e9);
	mm->win_ns = now;
	return err;
}

static void mem_detach(void *mv)
{
	mem_collector__detach(((struct mem_mode *)mv)->col);
}

static const struct mode_ops mem_mode_ops = {
	.name = "mem",
	.preflight = PREFLIGHT_UPROBES,
	.open = mem_open,
	.close = mem_close,
	.attach = mem_attach,
	.why_untraceable = mem_why,
	.attach_all = mem_attach_all,
	.tick = mem_tick,
	.wake_fd = mem_wake_fd,
	.wake = mem_wake,
	.held = mem_held,
	.progress = mem_progress,
	.window = mem_window,
	.inspect = mem_inspect,
	.ptrace_pid = true,	/* its leak scan, exit hold and the loader's holds */
	.thread_exit = mem_thread_exit,
	.finalize = mem_finalize,
	.retire = mem_retire,
	.started = mem_started,
	.stop = mem_stop,
	.finish = mem_finish,
	.verdict = mem_verdict,
	.detach = mem_detach,
};

static const struct mode_cli mem_cli = {
	.name = "mem",
	.usage = mem_usage,
	.longopts = mem_longopts,
	.parse = mem_parse,
	.check = mem_check,
};

static void mem_defaults(void *mo, struct session_opts *so)
{
	struct mem_opts *o = mo;

	so->out.top = 10;
	so->out.sort = OUTPUT_SORT_BYTES;
	o->col.max_live = 0;	/* MEM_DEFAULT_MAX_LIVE, or _SAMPLED (collect.c) */
	o->col.max_stacks = 1 << 15;
	o->col.max_procs = 1024;
	o->col.min_size = 0;
	o->col.max_size = UINT64_MAX;
	o->heuristics = LEAK_HEUR_ALL;
}

static int mem_prepare(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct mem_opts *o = mo;

	if (o->suppressions) {
		char why[512];

		o->supp = prof_suppressions__load(o->suppressions, why, sizeof(why));
		if (!o->supp) {
			pr_err(lc, "%s", why);
			return 2;
		}
		o->leaks = true;
	}
	so->inspect = o->leaks;
	probes__configure(&o->probes);
	return 0;
}

static void mem_release(void *mo)
{
	prof_suppressions__free(((struct mem_opts *)mo)->supp);
}

const struct mode_def mem_def = {
	.cli = &mem_cli,
	.ops = &mem_mode_ops,
	.opts_size = sizeof(struct mem_opts),
	.defaults = mem_defaults,
	.prepare = mem_prepare,
	.release = mem_release,
};

int cmd_mem(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &mem_def);
}
