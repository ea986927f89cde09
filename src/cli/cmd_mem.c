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
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli/cli.h"
#include "core/leakscan.h"
#include "core/mem_collect.h"
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
	bool leaks;		/* reachability scans at exit and at the end */
	unsigned heuristics;	/* memcheck's leak heuristics (bit set) */
	const char *suppressions;
	bool fail_on_leak;
};

struct tgt {
	pid_t pid;
	bool traced;		/* ptrace-seized: exits stop */
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
	struct tgt t[MAX_PIDS];
	int nt;
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
	"       ebprof mem [OPTIONS] -p PID[,PID...]\n"
	"\n"
	"Trace every call of the malloc family (malloc, calloc, realloc, reallocarray, free,\n"
	"aligned_alloc, memalign, posix_memalign, valloc, pvalloc) in a launched command or in\n"
	"running processes, aggregated in the kernel per call stack, and report the top\n"
	"allocation sites, outstanding (leaked) allocations and per-process totals.\n"
	"\n"
	"Targets:\n"
	"  -- CMD [ARGS...]       launch CMD (PATH lookup), trace it from its first allocation,\n"
	"                         report when it exits; ebprof exits with its status\n"
	"  -p, --pid PID[,PID]    attach to running processes (repeatable); stop on -d, Ctrl-C,\n"
	"                         SIGTERM, or when every target has exited\n"
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
	"                         reachable_space (and _objects)\n"
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
	"Limits (kernel tables; anything that does not fit is counted as a drop and reported):\n"
	"      --max-live N       outstanding allocations tracked (default 2097152)\n"
	"      --max-stacks N     distinct call stacks and sites (default 32768)\n"
	"      --max-procs N      processes (default 1024)\n"
	"\n"
	"  -q, --quiet            no progress line (shown on stderr only when it is a terminal)\n"
	"  -v, --verbose          say what is attached where (-vv: libbpf and debug messages)\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  sudo ebprof mem -- ./myprog arg1 arg2\n"
	"  sudo ebprof mem -p 4242 -d 30\n"
	"  sudo ebprof mem -p 4242,4243 -o out.txt -o out.json -o out.pb.gz\n"
	"  sudo ebprof mem --sort count --top 20 -- sqlite3 db.sqlite 'select ...'\n"
	"  sudo ebprof mem -p 4242 -d 5m --min-age 1m -o leaks.txt -o leaks.json\n"
	"  sudo ebprof mem --leaks --suppressions known.supp --fail-on-leak -- ./tests\n"
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
	       OPT_MINAGE, OPT_TEMP, OPT_SAMPLE_BYTES, OPT_SAMPLE_EVERY, OPT_ALLOC_ONLY };
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
	while ((c = getopt_long(argc, argv, "+p:d:o:vqh", longopts, NULL)) != -1) {
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
			    !is_leak_type(optarg))
				return usage_err(lc, "invalid --value '%s' (alloc_space, alloc_objects, "
						     "inuse_space, inuse_objects, or with --leaks "
						     "definite_space, possible_space, ...)", optarg);
			o->out.value_type = optarg;
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
	if (!o->argv && !o->npids)
		return usage_err(lc, "%s", "nothing to trace: give -p PID or -- CMD [ARGS...]");
	if (o->argv && o->npids)
		return usage_err(lc, "%s", "give either -p PID or a command, not both");
	if (o->out.value_type && is_leak_type(o->out.value_type) && !o->leaks)
		return usage_err(lc, "--value %s needs --leaks (the classes come from its scan)",
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
	for (int i = 0; i < r->nt; i++)
		if (r->t[i].pid == pid)
			return &r->t[i];
	return NULL;
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
	for (int i = 0; i < r->nt; i++)
		if (!r->t[i].gone)
			return false;
	return true;
}

/* A new program image in a traced process: report the old one, trace the new one. */
static void on_exec(struct run *r, struct tgt *t)
{
	struct alloc_lib lib;
	int status = 0, err;

	finalize_image(r, t, true);
	mem_collector__detach_pid(r->col, t->pid);
	err = target__run_to_allocator(r->lc, t->pid, &lib, &status);
	if (err == -ESRCH) {
		t->gone = true;
		t->status = status;
		return;
	}
	if (err) {
		pr_warn(r->lc, "PID %d: no malloc found after exec; not tracing it further", t->pid);
		return;
	}
	if (mem_collector__attach(r->col, t->pid, &lib) == 0)
		t->done = false;
}

static void on_child_event(struct run *r, pid_t pid, int status);
static void progress_clear(struct run *r);

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
	enum target_stop how;
	int sig;

	if (!t)
		return;
	how = target__classify(status, &sig);
	switch (how) {
	case TARGET_GONE:
		if (!t->done)
			finalize(r, t);	/* killed without an exit stop: from the attach snapshot */
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
		struct tgt *t = &r->t[r->nt];
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
		if (err) {
			pr_err(r->lc, "cannot attach to PID %d: no malloc implementation found in its "
				      "mappings (%s)", pid, strerror(-err));
			return err;
		}
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		t->pidfd = -1;
		/* hold it at exit if we can; a process already under a debugger still works,
		 * symbolized from the mappings read now */
		if (target__seize(pid) == 0) {
			t->traced = true;
		} else {
			pr_info(r->lc, "PID %d: cannot ptrace it (%s); its exit will not be held",
				pid, strerror(errno));
			t->pidfd = syscall(SYS_pidfd_open, pid, 0);
		}
		r->nt++;
		err = mem_collector__attach(r->col, pid, &lib);
		if (err)
			return err;
	}
	return 0;
}

static int setup_launch(struct run *r)
{
	struct tgt *t = &r->t[0];
	struct alloc_lib lib;
	int status = 0, err;
	pid_t pid;

	err = target__spawn(r->lc, r->o->argv, &pid);
	if (err)
		return err;
	r->child = pid;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->traced = true;
	t->pidfd = -1;
	r->nt = 1;
	err = target__run_to_allocator(r->lc, pid, &lib, &status);
	if (err == -ESRCH) {
		t->gone = t->done = true;
		r->child_status = status;
		r->child_reaped = true;
		return 0;
	}
	if (err) {
		pr_warn(r->lc, "'%s' (PID %d) maps no malloc implementation ebprof knows; running it "
			       "untraced", r->o->argv[0], pid);
		t->done = true;
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

	mem_collector__sample(r->col, r->prof, mono_ns() - r->start_mono, &tot);
	mem_collector__snapshot(r->col, mono_ns());
	if (++r->ticks % (1000 / TICK_MS))
		return;
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
		for (int i = 0; i < r->nt; i++) {
			if (r->t[i].pidfd < 0 || r->t[i].gone)
				continue;
			map[n - 3] = i;
			pfd[n++] = (struct pollfd){ .fd = r->t[i].pidfd, .events = POLLIN };
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
				scan(r, &r->t[i], false);
		}
		for (int k = 3; k < n; k++) {
			struct tgt *t = &r->t[map[k - 3]];

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
							: mem_profile__init(r.prof, o.leaks))) {
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
	err = o.argv ? setup_launch(&r) : setup_attach(&r);
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
		scan(&r, &r.t[i], false);
	for (int i = 0; i < r.nt; i++)
		finalize(&r, &r.t[i]);
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
		if (r.t[i].traced && !r.t[i].gone)
			target__detach(r.t[i].pid);
		if (r.t[i].pidfd >= 0)
			close(r.t[i].pidfd);
	}
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
