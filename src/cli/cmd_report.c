/* `ebprof report`: load a saved pprof profile (ebprof's own or any other tool's) and render it
 * in every format ebprof writes, as `ebprof mem` would have. Also the loading and writing that
 * `ebprof diff` shares (cli.h). Needs no privileges: no BPF here. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "output/output.h"

#define MAX_OUTPUTS 16

static const char report_usage[] =
	"Usage: ebprof report [OPTIONS] FILE\n"
	"\n"
	"Load a saved pprof profile (a .pb.gz written by 'ebprof mem -o', or any pprof file,\n"
	"gzipped or not; FILE - reads standard input) and write it as a report, in any of the\n"
	"formats 'ebprof mem' writes.\n"
	"Per-process calls, size histograms and ages are not part of pprof: a report of a loaded\n"
	"profile has sites, stacks and values, and each process's sums of its sample types.\n"
	"\n"
	"  -o, --output FILE      write to FILE, format by extension: .txt (text), .json, .pb.gz\n"
	"                         (pprof), .folded (folded stacks), .svg (flame graph), .html,\n"
	"                         .speedscope.json, .csv; repeatable; default: text to stdout;\n"
	"                         FORMAT:PATH names the format (folded:- for a pipe)\n"
	"      --top N            sites shown in the text report (default 10, 0 = all)\n"
	"      --sort bytes|count rank sites by the default sample type (default) or by count\n"
	"      --value TYPE       the sample type .folded and .svg weigh frames by (default: the\n"
	"                         profile's default type, e.g. alloc_space for ebprof mem)\n"
	"      --inverted         draw the flame graph as an icicle (roots at the top)\n"
	"  -v, --verbose          say what is written\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  ebprof report mem.pb.gz\n"
	"  ebprof report mem.pb.gz -o flame.svg --value inuse_space\n"
	"  ebprof report mem.pb.gz -o report.txt -o report.json --top 0\n"
	"  ebprof report cpu.pprof -o cpu.folded\n";

static int usage_err(const struct log_ctx *lc, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", lc->prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'ebprof report --help'.\n");
	return 2;
}

struct profile *cli_load_profile(const struct log_ctx *lc, const char *path)
{
	struct profile *p;
	char why[256], name[PATH_MAX + 2];
	int err = 0;

	/* "-" is standard input */
	if (strcmp(path, "-"))
		snprintf(name, sizeof(name), "'%s'", path);
	else
		snprintf(name, sizeof(name), "standard input");
	p = profile__load_pprof(path, &err, why, sizeof(why));
	if (p) {
		pr_info(lc, "%s: %s profile, %u samples, %u sample types", path, p->mode,
			p->nsamples, p->ntypes);
		return p;
	}
	if (err == -EINVAL)
		pr_err(lc, "%s is not a valid pprof profile: %s", name, why);
	else if (err == -EFBIG)
		pr_err(lc, "cannot load %s: it is, or inflates to, more than 1 GiB", name);
	else if (err == -ENOMEM)
		pr_err(lc, "cannot load %s: out of memory", name);
	else
		pr_err(lc, "cannot read %s: %s", name, strerror(-err));
	return NULL;
}

/* "alloc_objects, alloc_space, ..." for messages. */
const char *cli_type_list(const struct profile *p, char *buf, size_t len)
{
	size_t used = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < p->ntypes && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? ", " : "", p->types[i].type);
	if (!p->ntypes)
		snprintf(buf, len, "none");
	return buf;
}

/* A diff profile's text is the table of changes; everything else by extension. */
int cmd_report(int argc, char **argv, struct log_ctx *lc)
{
	enum { OPT_TOP = 256, OPT_SORT, OPT_VALUE, OPT_INVERTED };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct output_opts out = { .top = 10, .sort = OUTPUT_SORT_BYTES };
	char *outputs[MAX_OUTPUTS];
	int noutputs = 0, c, rc;
	uint64_t v;
	struct profile *p;
	char types[512];

	while ((c = getopt_long(argc, argv, "o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (noutputs == MAX_OUTPUTS)
				return usage_err(lc, "too many outputs (at most %s)", "16");
			if (!output__for_path(optarg))
				return usage_err(lc, "cannot tell the format of '%s': "
						 OUTPUT_FORMAT_HINT, optarg);
			outputs[noutputs++] = optarg;
			break;
		case OPT_TOP:
			if (cli_parse_u64(optarg, &v) || v > UINT32_MAX)
				return usage_err(lc, "invalid --top '%s'", optarg);
			out.top = v;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "bytes"))
				out.sort = OUTPUT_SORT_BYTES;
			else if (!strcmp(optarg, "count"))
				out.sort = OUTPUT_SORT_COUNT;
			else
				return usage_err(lc, "invalid --sort '%s' (bytes or count)",
						 optarg);
			break;
		case OPT_VALUE:
			/* checked against the profile's types once it is loaded */
			out.value_type = optarg;
			break;
		case OPT_INVERTED:
			out.inverted = true;
			break;
		case 'v':
			lc->verbose++;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'ebprof report --help'.\n");
			return 2;
		}
	}
	if (optind == argc)
		return usage_err(lc, "%s", "no profile given: ebprof report FILE");
	if (argc - optind > 1)
		return usage_err(lc, "one profile at a time ('%s' is one too many); to compare "
				     "two, use ebprof diff", argv[optind + 1]);

	rc = session__check_outputs(lc, outputs, noutputs);
	if (rc)
		return rc;
	p = cli_load_profile(lc, argv[optind]);
	if (!p)
		return 1;
	if (out.value_type && profile__type_index(p, out.value_type) < 0) {
		fprintf(stderr, "%s: '%s' has no sample type '%s'; it has: %s\n"
			"Try 'ebprof report --help'.\n", lc->prog, argv[optind], out.value_type,
			cli_type_list(p, types, sizeof(types)));
		profile__free(p);
		return 2;
	}
	rc = session__write_outputs(lc, p, &out, outputs, noutputs);
	profile__free(p);
	return rc;
}
