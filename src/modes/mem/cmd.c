/* `ebprof mem`: options, the run loop, and the report.
 *
 * One thread drives everything: signals and child events arrive through a signalfd, the
 * duration through a timerfd, exits of processes we could not ptrace through pidfds. A process
 * is read out of the kernel when it stops at exit (its mappings are still there), or when the
 * run stops; the report is written before probes are detached, because detaching is the slow
 * part (one RCU grace period per link).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/leakscan.h"
#include "modes/mem/collect.h"
#include "core/preflight.h"
#include "core/target.h"
#include "output/output.h"
#include "output/render.h"
#include "util/util.h"

#define MAX_OUTPUTS 16
#define TICK_MS 100		/* sampling period of the live-bytes series */
#define MAX_PIDS 256
#define EXIT_LEAKED 23		/* --fail-on-leak, as LeakSanitizer's default exitcode */

struct mem_opts {
	pid_t pids[MAX_PIDS];
	int npids;
	char **argv;		/* command to launch, or NULL */
	double duration;	/* seconds, 0 = until the end */
	const char *outputs[MAX_OUTPUTS];
	int noutputs;
	struct output_opts out;
	struct mem_collector_opts col;
	bool quiet;
	bool follow;		/* -p: also trace the processes they create */
	bool all;		/* -a: every process using the C libraries found */
	bool leaks;		/* reachability scans at exit and at the end */
	unsigned heuristics;	/* memcheck's leak heuristics (bit set) */
	const char *suppressions;
	bool fail_on_leak;
	struct probes_opts probes;	/* --allocator, --lib, --symbol-prefix */
};

struct tgt {
	pid_t pid;
	pid_t ppid;
	bool traced;		/* ptrace-seized: exits stop */
	bool await_exec;	/* shares its parent's memory (vfork): traced from its exec on */
	bool done;		/* finalized */
	bool gone;		/* exited, reaped or not ours to reap */
	int pidfd;		/* for attached processes we could not seize, else -1 */
	int status;
};

struct run {
	struct mem_opts *o;
	struct log_ctx *lc;
	struct mem_collector *col;
	struct symbolizer *sym;
	struct profile *prof;
	struct tgt **t;		/* every process seen; stable pointers (the array grows) */
	int nt, capt;
	pid_t *thr;		/* threads of followed processes (traced: they may fork) */
	int nthr, capthr;
	pid_t child;		/* launched command, or 0 */
	int child_status;
	bool child_reaped;
	bool stop;
	int nsignals;
	uint64_t start_mono;	/* CLOCK_MONOTONIC at the start of tracing */
	uint64_t ticks;
	bool progress;		/* stderr is a terminal and no --quiet */
	bool progress_shown;
	bool scan_now;		/* SIGUSR1: scan every running process */
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
	"  -d, --duration SECS    stop after SECS seconds (with a command: stop tracing, report,\n"
	"                         and let it run on)\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE      write the report to FILE, format by extension: .txt (text),\n"
	"                         .json, .pb.gz (pprof), .folded (folded stacks), .svg (flame\n"
	"                         graph), .html (one-page report), .speedscope.json, .csv;\n"
	"                         repeatable; default: text to stdout\n"
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
	"      --max-live N       outstanding allocations tracked (default 2097152)\n"
	"      --max-stacks N     distinct call stacks and sites (default 32768)\n"
	"      --max-procs N      processes (default 1024)\n"
	"\n"
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

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int usage_err(const struct log_ctx *lc, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", lc->prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'ebprof mem --help'.\n");
	return 2;
}

static void on_child_event(struct run *r, pid_t pid, int status);
static void progress_clear(struct run *r);

static int parse_pids(const struct log_ctx *lc, struct mem_opts *o, char *arg)
{
	for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		uint64_t v;

		if (parse_u64(tok, &v) || v == 0 || v > INT_MAX)
			return usage_err(lc, "invalid PID '%s'", tok);
		if (o->npids == MAX_PIDS)
			return usage_err(lc, "too many PIDs (at most %s)", "256");
		o->pids[o->npids++] = v;
	}
	return 0;
}

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

static int check_modes(const struct log_ctx *lc, const struct mem_opts *o, bool temp_set);

static int parse_args(int argc, char **argv, struct log_ctx *lc, struct mem_opts *o)
{
	bool temp_set = false;
	enum { OPT_TOP = 256, OPT_SORT, OPT_MIN, OPT_MAX, OPT_MAXLIVE, OPT_MAXSTACKS,
	       OPT_MAXPROCS, OPT_VALUE, OPT_INVERTED, OPT_LEAKS, OPT_HEUR, OPT_SUPP, OPT_FAIL,
	       OPT_MINAGE, OPT_TEMP, OPT_ALLOCATOR, OPT_LIB, OPT_PREFIX, OPT_FOLLOW,
	       OPT_MMAP, OPT_MAXREGIONS, OPT_SAMPLE_BYTES, OPT_SAMPLE_EVERY, OPT_ALLOC_ONLY };
	bool all_given = false;
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "min-size", required_argument, NULL, OPT_MIN },
		{ "max-size", required_argument, NULL, OPT_MAX },
		{ "min-age", required_argument, NULL, OPT_MINAGE },
		{ "temp-threshold", required_argument, NULL, OPT_TEMP },
		{ "max-live", required_argument, NULL, OPT_MAXLIVE },
		{ "max-stacks", required_argument, NULL, OPT_MAXSTACKS },
		{ "max-procs", required_argument, NULL, OPT_MAXPROCS },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "leaks", no_argument, NULL, OPT_LEAKS },
		{ "scan", no_argument, NULL, OPT_LEAKS },
		{ "leak-heuristics", required_argument, NULL, OPT_HEUR },
		{ "suppressions", required_argument, NULL, OPT_SUPP },
		{ "fail-on-leak", no_argument, NULL, OPT_FAIL },
		{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
		{ "lib", required_argument, NULL, OPT_LIB },
		{ "symbol-prefix", required_argument, NULL, OPT_PREFIX },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "all-processes", no_argument, NULL, 'a' },
		{ "mmap", no_argument, NULL, OPT_MMAP },
		{ "max-regions", required_argument, NULL, OPT_MAXREGIONS },
		{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
		{ "sample-every", required_argument, NULL, OPT_SAMPLE_EVERY },
		{ "alloc-only", no_argument, NULL, OPT_ALLOC_ONLY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	int c, err;

	/* '+': stop at the first non-option, so the command's own options stay its own */
	while ((c = getopt_long(argc, argv, "+p:d:o:avqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_pids(lc, o, optarg);
			if (err)
				return err;
			break;
		case 'd': {
			char *end;

			o->duration = strtod(optarg, &end);
			if (end == optarg || *end || o->duration <= 0)
				return usage_err(lc, "invalid duration '%s' (seconds, > 0)", optarg);
			break;
		}
		case 'o':
			if (o->noutputs == MAX_OUTPUTS)
				return usage_err(lc, "too many outputs (at most %s)", "16");
			if (!output__for_path(optarg))
				return usage_err(lc, "cannot tell the format of '%s': use a .txt, "
						     ".json, .pb.gz, .folded, .svg, .html, "
						     ".speedscope.json or .csv file name", optarg);
			o->outputs[o->noutputs++] = optarg;
			break;
		case OPT_TOP:
			if (parse_u64(optarg, &v) || v > UINT32_MAX)
				return usage_err(lc, "invalid --top '%s'", optarg);
			o->out.top = v;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "bytes"))
				o->out.sort = OUTPUT_SORT_BYTES;
			else if (!strcmp(optarg, "count"))
				o->out.sort = OUTPUT_SORT_COUNT;
			else
				return usage_err(lc, "invalid --sort '%s' (bytes or count)", optarg);
			break;
		case OPT_VALUE:
			if (strcmp(optarg, "alloc_space") && strcmp(optarg, "alloc_objects") &&
			    strcmp(optarg, "inuse_space") && strcmp(optarg, "inuse_objects") &&
			    !is_leak_type(optarg) && !is_mmap_type(optarg))
				return usage_err(lc, "invalid --value '%s' (alloc_space, alloc_objects, "
						     "inuse_space, inuse_objects, or with --leaks "
						     "definite_space, possible_space, ...)", optarg);
			o->out.value_type = optarg;
			break;
		case OPT_ALLOCATOR:
			if (!probes__valid_kind(optarg))
				return usage_err(lc, "unknown allocator '%s': use glibc, jemalloc, "
						     "tcmalloc, mimalloc or static", optarg);
			o->probes.allocator = optarg;
			break;
		case OPT_LIB:
			/* a bare file name is matched against the mapped objects' names */
			if (!*optarg || (strchr(optarg, '/') && access(optarg, R_OK)))
				return usage_err(lc, "--lib %s: no such readable file", optarg);
			o->probes.lib = optarg;
			break;
		case OPT_PREFIX:
			if (!*optarg || strlen(optarg) > 32 || strchr(optarg, '/'))
				return usage_err(lc, "invalid --symbol-prefix '%s' (a symbol prefix "
						     "such as je_)", optarg);
			o->probes.prefix = optarg;
			break;
		case OPT_FOLLOW:
			o->follow = true;
			break;
		case 'a':
			o->all = all_given = true;
			o->col.trace_all = true;
			break;
		case OPT_INVERTED:
			o->out.inverted = true;
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
			if (parse_u64(optarg, &v) || v == 0 || v > (1u << 24))
				return usage_err(lc, "invalid --max-regions '%s' (1 to 16777216)",
						 optarg);
			o->col.max_regions = v;
			break;
		case OPT_SUPP:
			o->suppressions = optarg;
			o->leaks = true;
			break;
		case OPT_HEUR:
			if (parse_heuristics(optarg, &o->heuristics))
				return usage_err(lc, "invalid --leak-heuristics '%s' (all, none, or a "
						     "list of stdstring, length64, newarray, "
						     "multipleinheritance)", optarg);
			break;
		case OPT_MIN:
			if (parse_u64(optarg, &o->col.min_size))
				return usage_err(lc, "invalid --min-size '%s'", optarg);
			break;
		case OPT_MAX:
			if (parse_u64(optarg, &o->col.max_size))
				return usage_err(lc, "invalid --max-size '%s'", optarg);
			break;
		case OPT_TEMP:
			temp_set = true;
			if (!strcmp(optarg, "next-alloc"))
				o->col.temp_ns = 0;
			else if (util_parse_duration(optarg, &o->col.temp_ns) || !o->col.temp_ns)
				return usage_err(lc, "invalid --temp-threshold '%s' (next-alloc, or a "
						     "duration > 0: 100us, 1ms, ...)", optarg);
			break;
		case OPT_SAMPLE_BYTES:
		case OPT_SAMPLE_EVERY: {
			const char *name = c == OPT_SAMPLE_BYTES ? "--sample-bytes" : "--sample-every";
			uint64_t n;

			if (parse_u64(optarg, &n) || n == 0 || n > MEM_SAMPLE_MAX_PERIOD) {
				char why[128];

				snprintf(why, sizeof(why), "invalid %s '%s' (a whole number from 1 "
					 "to %llu)", name, optarg,
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
		case OPT_ALLOC_ONLY:
			if (o->col.sample_mode)
				return usage_err(lc, "%s", "give only one of --sample-bytes, "
						 "--sample-every and --alloc-only");
			o->col.sample_mode = MEM_SAMPLE_ALLOC_ONLY;
			break;
		case OPT_MINAGE:
			if (util_parse_duration(optarg, &o->col.min_age_ns))
				return usage_err(lc, "invalid --min-age '%s' (a duration: 500ms, "
						     "30s, 2m, or seconds)", optarg);
			break;
		case OPT_MAXLIVE:
		case OPT_MAXSTACKS:
		case OPT_MAXPROCS:
			if (parse_u64(optarg, &v) || v == 0 || v > (1u << 28))
				return usage_err(lc, "invalid table size '%s'", optarg);
			if (c == OPT_MAXLIVE)
				o->col.max_live = v;
			else if (c == OPT_MAXSTACKS)
				o->col.max_stacks = v;
			else
				o->col.max_procs = v;
			break;
		case 'v':
			lc->verbose++;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			fputs(mem_usage, stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'ebprof mem --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (all_given && (o->argv || o->npids))
		return usage_err(lc, "%s", "-a traces every process already: give no -p PID or "
				 "command with it");
	if (all_given && o->leaks)
		return usage_err(lc, "%s", "-a cannot be combined with --leaks: a leak scan stops a "
				 "process under ptrace, and -a traces processes without it");
	if (all_given && o->col.mmap)
		return usage_err(lc, "%s", "-a cannot be combined with --mmap: mappings are tracked "
				 "for processes ebprof attaches to, and -a adopts them at their first "
				 "malloc call");
	if (!o->argv && !o->npids && !all_given)
		return usage_err(lc, "%s", "nothing to trace: give -p PID, -a or -- CMD [ARGS...]");
	if (o->argv && o->npids)
		return usage_err(lc, "%s", "give either -p PID or a command, not both");
	if (o->follow && !o->npids)
		return usage_err(lc, "%s", "--follow is for -p PID (a launched command's children "
				 "are always followed)");
	if (o->out.value_type && is_leak_type(o->out.value_type) && !o->leaks)
		return usage_err(lc, "--value %s needs --leaks (the classes come from its scan)",
				 o->out.value_type);
	if (o->out.value_type && is_mmap_type(o->out.value_type) && !o->col.mmap)
		return usage_err(lc, "--value %s needs --mmap (mappings are traced only with it)",
				 o->out.value_type);
	if (o->leaks && (o->col.min_size || o->col.max_size != UINT64_MAX))
		return usage_err(lc, "%s", "--leaks cannot be combined with --min-size/--max-size: "
				 "the scan must know every block to follow pointers through it");
	if (o->col.min_size > o->col.max_size)
		return usage_err(lc, "%s", "--min-size is larger than --max-size");
	return check_modes(lc, o, temp_set);
}

/* Options a sampled or alloc-only run cannot honour. */
static int check_modes(const struct log_ctx *lc, const struct mem_opts *o, bool temp_set)
{
	const char *v = o->out.value_type;

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
	if (o->all)
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static struct tgt *tgt_of(struct run *r, pid_t pid)
{
	/* newest first: a recycled PID is its latest process */
	for (int i = r->nt - 1; i >= 0; i--)
		if (r->t[i]->pid == pid)
			return r->t[i];
	return NULL;
}

static struct tgt *tgt_add(struct run *r, pid_t pid)
{
	struct tgt *t;

	if (r->nt == r->capt) {
		int cap = r->capt ? r->capt * 2 : 16;
		struct tgt **nt = realloc(r->t, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		r->t = nt;
		r->capt = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->pidfd = -1;
	r->t[r->nt++] = t;
	return t;
}

static void finalize_image(struct run *r, struct tgt *t, bool exec)
{
	if (t->done)
		return;
	/* the last point of its series, then its final numbers */
	mem_collector__sample(r->col, r->prof, mono_ns() - r->start_mono, NULL);
	mem_collector__finalize(r->col, t->pid, r->prof, r->sym, mono_ns(), exec);
	t->done = true;
}

static void finalize(struct run *r, struct tgt *t)
{
	finalize_image(r, t, false);
}

static bool all_done(struct run *r)
{
	if (r->o->all)
		return false;	/* until -d, Ctrl-C or SIGTERM */
	for (int i = 0; i < r->nt; i++)
		if (!r->t[i]->gone)
			return false;
	return true;
}

/* A process whose allocator cannot be probed: say why, note it in the report, let it run. */
static void untraceable(struct run *r, struct tgt *t)
{
	char comm[32];
	const char *why = target__why_untraceable(t->pid);

	target__comm(t->pid, comm, sizeof(comm));
	progress_clear(r);
	pr_warn(r->lc, "PID %d (%s) cannot be traced: %s; it runs untraced", t->pid, comm, why);
	profile__add_note(r->prof, "PID %d (%s) was not traced: %s", t->pid, comm, why);
	t->done = true;
}

/* A new program image in a traced process: report the old one, trace the new one. The probes
 * stay when the new program maps the same allocator file (mem_collector__attach). */
static void on_exec(struct run *r, struct tgt *t)
{
	struct alloc_lib lib;
	int status = 0, err;

	finalize_image(r, t, true);
	t->await_exec = false;
	err = target__run_to_allocator(r->lc, t->pid, &lib, &status);
	if (err == -ESRCH) {
		t->gone = true;
		t->status = status;
		mem_collector__retire(r->col, t->pid);
		return;
	}
	if (err) {
		mem_collector__retire(r->col, t->pid);
		untraceable(r, t);
		return;
	}
	if (mem_collector__attach(r->col, t->pid, &lib) == 0)
		t->done = false;
}

/* A thread we trace (a followed process's, so that its forks are followed too), or -1. */
static int thread_of(struct run *r, pid_t tid)
{
	for (int i = 0; i < r->nthr; i++)
		if (r->thr[i] == tid)
			return i;
	return -1;
}

static void thread_add(struct run *r, pid_t tid)
{
	if (r->nthr == r->capthr) {
		int cap = r->capthr ? r->capthr * 2 : 16;
		pid_t *n = realloc(r->thr, cap * sizeof(*n));

		if (!n) {
			ptrace(PTRACE_DETACH, tid, 0, 0);	/* its forks go unfollowed */
			return;
		}
		r->thr = n;
		r->capthr = cap;
	}
	r->thr[r->nthr++] = tid;
	target__resume(tid, TARGET_STOP_OTHER, 0);
}

/* A stop or the end of one of those threads: it is let run as its stop requires. */
static void on_thread_event(struct run *r, int i, int status)
{
	int sig;
	enum target_stop how = target__classify(status, &sig);

	if (how == TARGET_GONE) {
		r->thr[i] = r->thr[--r->nthr];
		return;
	}
	target__resume(r->thr[i], how, sig);
}

/* Do two processes share one address space (vfork, clone(CLONE_VM))? */
static bool same_mm(pid_t a, pid_t b)
{
	return a > 0 && syscall(SYS_kcmp, a, b, 1 /* KCMP_VM */, 0, 0) == 0;
}

/*
 * A task we did not know stopped: a process or thread created by a traced one, stopped before
 * it ran its first instruction (its parent's fork event may come before or after this). Threads
 * stay traced, only so that the processes they create are followed (their process has its
 * probes already). A new process gets its probes now, before it
 * runs: it starts from nothing (its copy of the parent's heap is the parent's; frees of those
 * blocks count as unknown frees). One that shares its parent's memory (vfork) is traced from
 * its exec: a link of its own would see its parent's address space too.
 */
static void on_new_task(struct run *r, pid_t pid, int status)
{
	pid_t tgid, ppid, nspid;
	struct alloc_lib lib;
	struct tgt *t;

	if (!WIFSTOPPED(status))
		return;
	if (target__ids(pid, &tgid, &ppid, &nspid)) {
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	if (tgid != pid) {
		thread_add(r, pid);
		return;
	}
	if (tgt_of(r, pid))
		/* the report keys processes by PID: say so rather than pass two off as one */
		profile__add_note(r->prof, "PID %d was used by two processes during the run (the "
				  "kernel recycled it); their numbers are reported together", pid);
	t = tgt_add(r, pid);
	if (!t) {
		pr_warn(r->lc, "PID %d: out of memory; not tracing it", pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	t->traced = true;
	t->ppid = ppid;
	t->done = true;		/* until it is attached */
	if (same_mm(ppid, pid)) {
		t->await_exec = true;
		pr_debug(r->lc, "PID %d: shares PID %d's memory; traced from its exec", pid, ppid);
	} else if (probes__find_allocator(pid, &lib) == 0) {
		if (mem_collector__attach(r->col, pid, &lib) == 0)
			t->done = false;
	} else {
		pr_debug(r->lc, "PID %d: its parent's image maps no allocator; traced from its exec",
			 pid);
	}
	target__resume(pid, TARGET_STOP_OTHER, 0);
}


/* One line on stderr per on-demand scan: what it found, and what it cost the process. */
static void scan_line(struct run *r, pid_t pid, const struct prof_scan *ps)
{
	char b[PROF_LEAK__COUNT][32], el[32];

	progress_clear(r);
	for (int cl = 0; cl < PROF_LEAK__COUNT; cl++)
		render__bytes(ps->bytes[cl], b[cl], sizeof(b[cl]));
	fprintf(stderr, "ebprof: PID %d scanned: definitely lost %s in %llu blocks, indirectly "
		"%s in %llu, possibly %s in %llu, still reachable %s in %llu (stopped %s)\n", pid,
		b[0], (unsigned long long)ps->count[0], b[1], (unsigned long long)ps->count[1],
		b[2], (unsigned long long)ps->count[2], b[3], (unsigned long long)ps->count[3],
		render__duration(ps->stopped_ns, el, sizeof(el)));
}

/* A reachability scan of t; at_exit: it is held at its exit stop. */
static void scan(struct run *r, struct tgt *t, bool at_exit)
{
	int status;

	if (t->done || t->gone)
		return;
	if (!t->traced) {
		pr_warn(r->lc, "PID %d: not scanned for leaks: another tracer holds it, so ebprof "
			       "cannot stop it", t->pid);
		return;
	}
	if (mem_collector__scan(r->col, t->pid, at_exit, r->o->heuristics,
				mono_ns() - r->start_mono, &status))
		return;
	if (!at_exit && !r->stop)
		scan_line(r, t->pid, mem_collector__last_scan(r->col, t->pid));
	if (status != -1)
		on_child_event(r, t->pid, status);	/* it stopped at its exit meanwhile */
}

static void on_child_event(struct run *r, pid_t pid, int status)
{
	struct tgt *t = tgt_of(r, pid);
	int th = thread_of(r, pid);
	enum target_stop how;
	int sig;

	if (th >= 0) {
		pid_t tgid, ppid, nspid;

		/* a stale entry (a thread that vanished in an exec) whose TID is a new process */
		if (WIFSTOPPED(status) && target__ids(pid, &tgid, &ppid, &nspid) == 0 &&
		    tgid == pid) {
			r->thr[th] = r->thr[--r->nthr];
		} else {
			on_thread_event(r, th, status);
			return;
		}
	}
	if (!t || (t->gone && WIFSTOPPED(status))) {
		on_new_task(r, pid, status);
		return;
	}
	how = target__classify(status, &sig);
	switch (how) {
	case TARGET_GONE:
		if (!t->done)
			finalize(r, t);	/* killed without an exit stop: from the attach snapshot */
		mem_collector__retire(r->col, pid);
		t->gone = true;
		t->status = status;
		if (pid == r->child) {
			r->child_status = status;
			r->child_reaped = true;
		}
		return;
	case TARGET_STOP_EXIT:
		if (r->o->leaks && !t->done)
			scan(r, t, true);
		finalize(r, t);
		/* its links close on a worker thread: the run loop never waits for that */
		mem_collector__retire(r->col, pid);
		break;
	case TARGET_STOP_EXEC:
		on_exec(r, t);
		if (t->gone)
			return;
		break;
	default:
		break;
	}
	target__resume(pid, how, sig);
}

static void on_signal(struct run *r, const struct signalfd_siginfo *si)
{
	if (si->ssi_signo == SIGCHLD) {
		int status;
		pid_t pid;

		while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
			on_child_event(r, pid, status);
		return;
	}
	if (si->ssi_signo == SIGUSR1) {
		r->scan_now = true;
		return;
	}
	r->nsignals++;
	if (r->child && r->child_reaped) {
		/* the command is gone; what it left running (a daemon, children) is traced until
		 * a signal says stop */
		r->stop = true;
		return;
	}
	if (r->child && si->ssi_code == SI_USER && si->ssi_pid != (uint32_t)r->child &&
	    r->nsignals == 1) {
		/* sent to ebprof alone (kill, a supervisor): the command gets it too, and the
		 * report follows its exit; Ctrl-C reaches both through the terminal already */
		kill(r->child, si->ssi_signo);
		return;
	}
	if (r->child && r->nsignals == 1)
		return;	/* the command got the terminal's signal: wait for it to exit */
	r->stop = true;
}

static int setup_attach(struct run *r)
{
	for (int i = 0; i < r->o->npids; i++) {
		pid_t pid = r->o->pids[i];
		struct tgt *t;
		struct alloc_lib lib;
		int err;

		if (tgt_of(r, pid))
			continue;
		if (kill(pid, 0) && errno == ESRCH) {
			pr_err(r->lc, "cannot attach to PID %d: no such process", pid);
			return -ESRCH;
		}
		err = probes__find_allocator(pid, &lib);
		if (err == -ESRCH) {
			pr_err(r->lc, "cannot attach to PID %d: no such process", pid);
			return err;
		}
		if (err == -ENOPKG) {
			pr_err(r->lc, "cannot attach to PID %d: %s", pid, probes__last_error());
			return err;
		}
		if (err) {
			pr_err(r->lc, "cannot attach to PID %d: no malloc implementation found in its "
				      "mappings (%s)", pid, strerror(-err));
			return err;
		}
		t = tgt_add(r, pid);
		if (!t) {
			pr_err(r->lc, "out of memory");
			return -ENOMEM;
		}
		/* hold it at exit if we can; a process already under a debugger still works,
		 * symbolized from the mappings read now */
		if (target__seize(pid, r->o->follow) == 0) {
			t->traced = true;
		} else {
			pr_info(r->lc, "PID %d: cannot ptrace it (%s); its exit will not be held",
				pid, strerror(errno));
			t->pidfd = syscall(SYS_pidfd_open, pid, 0);
		}
		err = mem_collector__attach(r->col, pid, &lib);
		if (err)
			return err;
	}
	return 0;
}

/*
 * -a: one pair of links without a pid filter on every distinct C library (by inode: containers
 * bring their own) that a process maps now. Processes are reported as they call it.
 */
static int setup_all(struct run *r)
{
	struct { dev_t dev; ino_t ino; } seen[64];
	int nseen = 0, nproc = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		pr_err(r->lc, "cannot list processes in /proc: %s", strerror(errno));
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
		if (mem_collector__attach_all(r->col, &lib)) {
			closedir(d);
			return -EINVAL;
		}
		seen[nseen].dev = st.st_dev;
		seen[nseen++].ino = st.st_ino;
	}
	closedir(d);
	if (!nseen) {
		pr_err(r->lc, "-a: no process maps a C library ebprof can probe");
		return -ENOENT;
	}
	pr_warn(r->lc, "-a: tracing every process that uses %s%d C librar%s (%d processes now, "
		"and every one started until ebprof stops): each of their malloc-family calls pays "
		"a uprobe trap, about 1-3 us, on the whole machine", nseen == 1 ? "the " : "", nseen,
		nseen == 1 ? "y" : "ies", nproc);
	return 0;
}

static int setup_launch(struct run *r)
{
	struct tgt *t;
	struct alloc_lib lib;
	int status = 0, err;
	pid_t pid;

	err = target__spawn(r->lc, r->o->argv, &pid);
	if (err)
		return err;
	r->child = pid;
	t = tgt_add(r, pid);
	if (!t) {
		kill(pid, SIGKILL);
		return -ENOMEM;
	}
	t->traced = true;
	t->ppid = getpid();
	err = target__run_to_allocator(r->lc, pid, &lib, &status);
	if (err == -ESRCH) {
		t->gone = t->done = true;
		r->child_status = status;
		r->child_reaped = true;
		return 0;
	}
	if (err == -ENOPKG) {
		pr_err(r->lc, "cannot trace '%s': %s", r->o->argv[0], probes__last_error());
		kill(pid, SIGKILL);
		return err;
	}
	if (err) {
		untraceable(r, t);
		/* it may have stopped at its exit while we looked for an allocator */
		return target__resume(pid, TARGET_STOP_OTHER, 0);
	}
	err = mem_collector__attach(r->col, pid, &lib);
	if (err) {
		kill(pid, SIGKILL);
		return err;
	}
	return target__resume(pid, TARGET_STOP_OTHER, 0);
}

/* One progress line on stderr, rewritten in place (only on a terminal, unless --quiet). */
static void progress(struct run *r, const struct mem_totals *tot)
{
	char live[32], el[32];

	if (!r->progress)
		return;
	fprintf(stderr, "\r\033[Kebprof: %s  %llu calls  live %s in %llu blocks  drops %llu",
		render__duration(mono_ns() - r->start_mono, el, sizeof(el)),
		(unsigned long long)tot->calls, render__bytes(tot->live_bytes, live, sizeof(live)),
		(unsigned long long)tot->live_count, (unsigned long long)tot->drops);
	r->progress_shown = true;
}

static void progress_clear(struct run *r)
{
	if (r->progress_shown)
		fputs("\r\033[K", stderr);
	r->progress_shown = false;
}

/* Every tick: each process's live bytes into the profile's series, and the sites' live bytes
 * when a snapshot of them is due (about every second). Every second: the maps snapshots (for
 * processes that vanish without an exit stop) and the progress line. */
static void on_tick(struct run *r)
{
	struct mem_totals tot;

	/* -a: new callers join the report while their mappings can still be read */
	if (r->o->all)
		mem_collector__adopt_new(r->col);
	mem_collector__sample(r->col, r->prof, mono_ns() - r->start_mono, &tot);
	mem_collector__snapshot(r->col, mono_ns());
	if (++r->ticks % (1000 / TICK_MS))
		return;
	/* -a: ended ones are reported and forgotten */
	if (r->o->all)
		mem_collector__finalize_gone(r->col, r->prof, r->sym, mono_ns());
	mem_collector__refresh(r->col);
	progress(r, &tot);
}

static int loop(struct run *r, int sfd, int tfd, int ifd)
{
	struct pollfd pfd[3 + MAX_PIDS];

	while (!r->stop && !all_done(r)) {
		int n = 0, map[MAX_PIDS], ready;
		uint64_t ticks;

		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = ifd, .events = POLLIN };
		for (int i = 0; i < r->nt && n < 3 + MAX_PIDS; i++) {
			if (r->t[i]->pidfd < 0 || r->t[i]->gone)
				continue;
			map[n - 3] = i;
			pfd[n++] = (struct pollfd){ .fd = r->t[i]->pidfd, .events = POLLIN };
		}
		ready = poll(pfd, n, -1);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				on_signal(r, &si);
		}
		if ((pfd[1].revents & POLLIN) && read(tfd, &ticks, sizeof(ticks)) == sizeof(ticks)) {
			pr_info(r->lc, "duration reached");
			r->stop = true;
		}
		if ((pfd[2].revents & POLLIN) && read(ifd, &ticks, sizeof(ticks)) == sizeof(ticks))
			on_tick(r);
		if (r->scan_now) {
			r->scan_now = false;
			for (int i = 0; i < r->nt; i++)
				scan(r, r->t[i], false);
		}
		for (int k = 3; k < n; k++) {
			struct tgt *t = r->t[map[k - 3]];

			if (!(pfd[k].revents & (POLLIN | POLLHUP)))
				continue;
			finalize(r, t);
			t->gone = true;
		}
	}
	progress_clear(r);
	return 0;
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

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	for (int i = 0; s && i < argc; i++) {
		strcat(s, argv[i]);
		if (i + 1 < argc)
			strcat(s, " ");
	}
	return s;
}

int cmd_mem(int argc, char **argv, struct log_ctx *lc)
{
	struct mem_opts o = {
		.out = { .top = 10, .sort = OUTPUT_SORT_BYTES },
		.col = { .max_live = 1 << 21, .max_stacks = 1 << 15, .max_procs = 1024,
			 .min_size = 0, .max_size = UINT64_MAX },
		.heuristics = LEAK_HEUR_ALL,
	};
	struct run r = { .o = &o, .lc = lc };
	int rc, err, sfd = -1, tfd = -1, ifd = -1;
	char *command = NULL, *self = NULL;
	struct symbolizer_opts so = {};
	struct prof_suppressions *supp = NULL;
	bool leaked = false;
	uint64_t start_mono;
	int64_t start_wall;
	struct utsname u;
	sigset_t mask;

	rc = parse_args(argc, argv, lc, &o);
	if (rc)
		return rc;
	if (o.suppressions) {
		char why[512];

		supp = prof_suppressions__load(o.suppressions, why, sizeof(why));
		if (!supp) {
			pr_err(lc, "%s", why);
			return 2;
		}
		o.leaks = true;
	}
	o.col.lc = lc;
	probes__configure(&o.probes);
	if (preflight__check(lc))
		return 1;

	/* signals arrive as data; the launched command restores the default mask before exec */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ifd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (sfd < 0 || tfd < 0 || ifd < 0) {
		pr_err(lc, "cannot set up signal handling: %s", strerror(errno));
		return 1;
	}

	rc = 1;
	r.col = mem_collector__new(&o.col);
	r.sym = symbolizer__new(&so);
	r.prof = profile__new("mem");
	if (!r.col || !r.sym || !r.prof ||
	    (o.col.sample_mode == MEM_SAMPLE_ALLOC_ONLY ? mem_profile__init_alloc_only(r.prof)
							: mem_profile__init(r.prof, o.leaks)) ||
	    (o.col.mmap && mem_profile__add_mmap_types(r.prof))) {
		if (r.col && (!r.sym || !r.prof))
			pr_err(lc, "out of memory");
		goto out;
	}

	mode_notes(r.prof, &o.col);
	if (o.col.temp_ns)
		profile__add_note(r.prof, "temporary allocations: blocks freed within %llu ns of "
				  "their allocation (--temp-threshold)",
				  (unsigned long long)o.col.temp_ns);
	if (o.col.min_size || o.col.max_size != UINT64_MAX)
		profile__add_note(r.prof, "only allocations of %llu to %llu bytes are tracked "
				  "(--min-size/--max-size): totals leave the others out, and their frees "
				  "count as unknown frees", (unsigned long long)o.col.min_size,
				  (unsigned long long)o.col.max_size);
	if (o.col.min_age_ns) {
		char age[32];

		r.prof->min_age_ns = o.col.min_age_ns;
		profile__add_note(r.prof, "outstanding allocations younger than %s at the end are "
				  "not listed (--min-age); live totals count them",
				  render__duration(o.col.min_age_ns, age, sizeof(age)));
	}
	r.progress = !o.quiet && isatty(STDERR_FILENO);
	r.start_mono = start_mono = mono_ns();
	mem_collector__set_start(r.col, start_mono);
	start_wall = wall_ns();
	err = o.argv ? setup_launch(&r) : o.all ? setup_all(&r) : setup_attach(&r);
	if (err) {
		if (o.argv && err != -ENOENT && err != -EACCES)
			rc = 1;
		else if (o.argv)
			rc = err == -ENOENT ? 127 : 126;
		/* attach: what was attached is detached below; nothing is reported */
		goto out;
	}
	if (o.duration > 0) {
		struct itimerspec its = {};

		its.it_value.tv_sec = (time_t)o.duration;
		its.it_value.tv_nsec = (long)((o.duration - (time_t)o.duration) * 1e9);
		timerfd_settime(tfd, 0, &its, NULL);
	}

	{
		struct itimerspec tick = {
			.it_interval = { .tv_nsec = TICK_MS * 1000000L },
			.it_value = { .tv_nsec = TICK_MS * 1000000L },
		};

		timerfd_settime(ifd, 0, &tick, NULL);
	}
	err = loop(&r, sfd, tfd, ifd);
	if (err)
		pr_err(lc, "waiting for events failed: %s", strerror(-err));

	/* everything still running is read out now, while its mappings are live */
	for (int i = 0; o.leaks && i < r.nt; i++)
		scan(&r, r.t[i], false);
	mem_collector__quiesce(r.col);
	for (int i = 0; i < r.nt; i++)
		finalize(&r, r.t[i]);
	if (o.all) {
		mem_collector__adopt_new(r.col);
		mem_collector__finalize_all(r.col, r.prof, r.sym, mono_ns());
	}
	mem_collector__drops(r.col, r.prof);
	if (supp && profile__suppress(r.prof, supp))
		profile__add_note(r.prof, "leaks at sites matching %s are counted as suppressed",
				  o.suppressions);

	uname(&u);
	command = o.argv ? join_args(argc - (int)(o.argv - argv), o.argv) : NULL;
	self = join_args(argc, argv);
	profile__set_meta(r.prof, command, u.release, self, start_wall,
			  (int64_t)(mono_ns() - start_mono));
	rc = cli_write_outputs(lc, r.prof, &o.out, (char *const *)o.outputs, o.noutputs);
	if (o.fail_on_leak && definitely_lost(lc, r.prof) && rc == 0)
		leaked = true;

out:
	/* no probe left behind, no process left stopped */
	mem_collector__detach(r.col);
	for (int i = 0; i < r.nt; i++) {
		if (r.t[i]->traced && !r.t[i]->gone)
			target__detach(r.t[i]->pid);
		if (r.t[i]->pidfd >= 0)
			close(r.t[i]->pidfd);
		free(r.t[i]);
	}
	free(r.t);
	for (int i = 0; i < r.nthr; i++)
		target__detach(r.thr[i]);
	free(r.thr);
	if (r.child && !r.child_reaped) {
		/* launch mode stopped early (-d or a second signal): the command runs on and
		 * ebprof, like the command, ends when it does */
		while (waitpid(r.child, &r.child_status, 0) < 0 && errno == EINTR)
			;
		r.child_reaped = true;
	}
	if (r.child && r.child_reaped && rc == 0)
		rc = target__exit_code(r.child_status);
	if (leaked)
		rc = EXIT_LEAKED;
	mem_collector__free(r.col);
	symbolizer__free(r.sym);
	profile__free(r.prof);
	prof_suppressions__free(supp);
	free(command);
	free(self);
	if (sfd >= 0)
		close(sfd);
	if (tfd >= 0)
		close(tfd);
	if (ifd >= 0)
		close(ifd);
	return rc;
}
