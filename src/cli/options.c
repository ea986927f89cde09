/* The options every recording mode shares, parsed in one place (see options.h). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/options.h"
#include "core/unwind.h"
#include "output/output.h"
#include "util/util.h"

int cli_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

int cli_usage_err(const struct log_ctx *lc, const char *mode, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", lc->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'ebprof %s --help'.\n", lc->cmd ? lc->cmd : mode);
	return 2;
}

int cli_parse_count(const struct log_ctx *lc, const char *mode, const char *opt,
		    const char *what, const char *arg, uint64_t min, uint64_t max, uint64_t *v)
{
	if (cli_parse_u64(arg, v) || *v < min || *v > max)
		return cli_usage_err(lc, mode, "%s takes a number of %s from %llu to %llu (got '%s')",
				     opt, what, (unsigned long long)min, (unsigned long long)max,
				     arg);
	return 0;
}

int cli_parse_max_stacks(const struct log_ctx *lc, const char *mode, const char *arg,
			 uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_count(lc, mode, "--max-stacks", "stacks", arg, min, max, &v))
		return 2;
	*out = v;
	return 0;
}

static int parse_pids(const struct log_ctx *lc, const char *mode, struct session_opts *so,
		      char *arg)
{
	char *tok = arg, *next;

	/* every item, empty ones too ("1,,2", "1,": a mistake to say, not to skip) */
	for (; tok; tok = next) {
		uint64_t v;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		if (!*tok)
			return cli_usage_err(lc, mode, "an empty item in the PID list of -p: PIDs are "
					     "separated by single commas (-p 12,34)");
		if (cli_parse_u64(tok, &v) || v == 0 || v > INT_MAX)
			return cli_usage_err(lc, mode, "invalid PID '%s'", tok);
		if (so->npids == SESSION_MAX_PIDS)
			return cli_usage_err(lc, mode, "too many PIDs (at most %d)",
					     SESSION_MAX_PIDS);
		so->pids[so->npids++] = v;
	}
	return 0;
}

enum {
	OPT_TOP = 256, OPT_SORT, OPT_VALUE, OPT_INVERTED, OPT_FOLLOW, OPT_UNWIND, OPT_UNWIND_PROCS,
	OPT_UNWIND_QUEUE, OPT_UNWIND_ROWS,
};

static const struct option shared_longopts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all-processes", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "follow", no_argument, NULL, OPT_FOLLOW },
	{ "output", required_argument, NULL, 'o' },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "value", required_argument, NULL, OPT_VALUE },
	{ "inverted", no_argument, NULL, OPT_INVERTED },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "unwind-procs", required_argument, NULL, OPT_UNWIND_PROCS },
	{ "unwind-queue", required_argument, NULL, OPT_UNWIND_QUEUE },
	{ "unwind-rows", required_argument, NULL, OPT_UNWIND_ROWS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
};

#define NSHARED (sizeof(shared_longopts) / sizeof(shared_longopts[0]))

/* A count option into *out: 0, or 2 (said, as cli_parse_count says it) */
static int parse_u32(const struct log_ctx *lc, const char *mode, const char *opt,
		     const char *what, const char *arg, uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t v;

	if (cli_parse_count(lc, mode, opt, what, arg, lo, hi, &v))
		return 2;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse(int argc, char **argv, struct log_ctx *lc, const struct mode_cli *mc,
	      struct session_opts *so, void *mo)
{
	const char *m = mc->name;
	struct option *longopts;
	char shortopts[64];
	size_t nmode = 0;
	bool all_given = false;
	uint64_t v;
	int c, rc = 0;

	while (mc->longopts && mc->longopts[nmode].name)
		nmode++;
	longopts = calloc(NSHARED + nmode + 1, sizeof(*longopts));
	if (!longopts) {
		pr_err(lc, "out of memory");
		return 1;
	}
	memcpy(longopts, shared_longopts, sizeof(shared_longopts));
	if (nmode)
		memcpy(longopts + NSHARED, mc->longopts, nmode * sizeof(*longopts));
	/* '+': stop at the first non-option, so the command's own options stay its own */
	snprintf(shortopts, sizeof(shortopts), "+p:ad:o:vqh%s", mc->shortopts ? mc->shortopts : "");
	so->self_argc = argc;
	so->self_argv = argv;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			rc = parse_pids(lc, m, so, optarg);
			break;
		case 'a':
			if (mc->no_all) {
				rc = cli_usage_err(lc, m, "-a is not supported by 'ebprof %s'", m);
				break;
			}
			so->all = all_given = true;
			break;
		case 'd': {
			uint64_t ns;

			if (util_parse_duration(optarg, &ns) || ns == 0) {
				rc = cli_usage_err(lc, m, "invalid duration '%s' (e.g. 500ms, 30s, "
						   "5m, 1h, or seconds; > 0)", optarg);
				break;
			}
			so->duration = ns / 1e9;
			break;
		}
		case OPT_FOLLOW:
			so->follow = true;
			break;
		case 'o':
			if (so->noutputs == SESSION_MAX_OUTPUTS) {
				rc = cli_usage_err(lc, m, "too many outputs (at most %d)",
						   SESSION_MAX_OUTPUTS);
				break;
			}
			if (!output__for_path(optarg)) {
				rc = cli_usage_err(lc, m, "cannot tell the format of '%s': "
						   OUTPUT_FORMAT_HINT, optarg);
				break;
			}
			so->outputs[so->noutputs++] = optarg;
			break;
		case OPT_TOP:
			if (cli_parse_u64(optarg, &v) || v > UINT32_MAX)
				rc = cli_usage_err(lc, m, "invalid --top '%s'", optarg);
			else
				so->out.top = v;
			break;
		case OPT_SORT:
			if (mc->no_sort)
				rc = cli_usage_err(lc, m, "'ebprof %s' has no --sort: its tables are "
						   "ranked by --value's sample type", m);
			else if (!strcmp(optarg, "bytes"))
				so->out.sort = OUTPUT_SORT_BYTES;
			else if (!strcmp(optarg, "count"))
				so->out.sort = OUTPUT_SORT_COUNT;
			else
				rc = cli_usage_err(lc, m, "invalid --sort '%s' (bytes or count)",
						   optarg);
			break;
		case OPT_VALUE:
			/* checked against the mode's sample types once they are known */
			so->out.value_type = optarg;
			break;
		case OPT_INVERTED:
			so->out.inverted = true;
			break;
		case OPT_UNWIND: {
			enum unwind_how how;

			if (unwind_how__parse(optarg, &how))
				rc = cli_usage_err(lc, m, "invalid --unwind '%s' (auto, dwarf or fp)",
						   optarg);
			else
				so->unwind = (int)how;
			break;
		}
		case OPT_UNWIND_PROCS:
			rc = parse_u32(lc, m, "--unwind-procs", "processes", optarg, 1,
				       UNWIND_MAX_PROCS, &so->unwind_procs) ?: rc;
			break;
		case OPT_UNWIND_QUEUE:
			rc = parse_u32(lc, m, "--unwind-queue", "processes", optarg, 1,
				       UNWIND_ASKED_QUEUE, &so->unwind_queue) ?: rc;
			break;
		case OPT_UNWIND_ROWS:
			rc = parse_u32(lc, m, "--unwind-rows", "rows", optarg, 4096, UNWIND_MAX_ROWS,
				       &so->unwind_rows) ?: rc;
			break;
		case 'v':
			lc->verbose++;
			break;
		case 'q':
			so->quiet = true;
			break;
		case 'h':
			fputs(mc->usage, stdout);
			free(longopts);
			return -1;
		case '?':
			fprintf(stderr, "Try 'ebprof %s --help'.\n", m);
			rc = 2;
			break;
		default:
			rc = mc->parse ? mc->parse(mo, c, optarg, so, lc) : 2;
			break;
		}
		if (rc)
			break;
	}
	free(longopts);
	if (rc)
		return rc;
	if (optind < argc)
		so->argv = argv + optind;
	if (all_given && (so->argv || so->npids))
		return cli_usage_err(lc, m, "-a traces every process already: give no -p PID or "
				     "command with it");
	if (!so->argv && !so->npids && !all_given && mc->default_all)
		so->all = all_given = true;
	if (!so->argv && !so->npids && !all_given)
		return cli_usage_err(lc, m, "nothing to trace: give -p PID, %s-- CMD [ARGS...]",
				     mc->no_all ? "" : "-a or ");
	if (so->argv && so->npids)
		return cli_usage_err(lc, m, "give either -p PID or a command, not both");
	if (so->follow && !so->npids)
		return cli_usage_err(lc, m, "--follow is for -p PID (a launched command's children "
				     "are always followed)");
	return mc->check ? mc->check(mo, so, lc) : 0;
}

void *cli_mode_opts_new(const struct mode_def *d, struct session_opts *so)
{
	void *mo = calloc(1, d->opts_size);

	if (mo && d->defaults)
		d->defaults(mo, so);
	return mo;
}

void cli_mode_opts_free(const struct mode_def *d, void *mo)
{
	if (!mo)
		return;
	if (d->release)
		d->release(mo);
	free(mo);
}

int cli_run_mode(int argc, char **argv, struct log_ctx *lc, const struct mode_def *d)
{
	/* --top's default, as every mode's --help says */
	struct session_opts so = { .out = { .top = 10 } };
	void *mo = cli_mode_opts_new(d, &so);
	int rc;

	if (!mo) {
		pr_err(lc, "out of memory");
		return 1;
	}
	rc = cli_parse(argc, argv, lc, d->cli, &so, mo);
	if (rc) {
		rc = rc < 0 ? 0 : rc;
		goto out;
	}
	if (d->prepare) {
		rc = d->prepare(mo, &so, lc);
		if (rc)
			goto out;
	}
	rc = session__run(&so, d->ops, mo, lc);
out:
	cli_mode_opts_free(d, mo);
	return rc;
}

int cli_mode_option(const struct mode_def *d, void *mo, const char *name, const char *arg,
		    struct session_opts *so, const struct log_ctx *lc)
{
	const struct option *o = d->cli->longopts;

	for (; o && o->name; o++)
		if (!strcmp(o->name, name))
			return d->cli->parse(mo, o->val, arg, so, lc);
	pr_err(lc, "internal error: 'ebprof %s' has no option --%s", d->cli->name, name);
	return 2;
}
