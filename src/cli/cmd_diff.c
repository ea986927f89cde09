/* `ebprof diff`: compare two saved profiles stack by stack (profile__diff()) and show what
 * changed: a table of the largest changes, a differential flame graph, or the diff profile
 * itself in any other format. Needs no privileges: no BPF here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "core/session.h"
#include "output/output.h"

#define MAX_OUTPUTS 16

static const char diff_usage[] =
	"Usage: ebprof diff [OPTIONS] BASE NEW\n"
	"\n"
	"Compare two saved pprof profiles, e.g. two runs of 'ebprof mem -o run.pb.gz', stack by\n"
	"stack: stacks are matched by their functions' names and source files root to leaf, not\n"
	"by pids or addresses, so two runs of one program line up. Either may be - (standard\n"
	"input). Shows the stacks whose value changed most, or a differential flame graph:\n"
	"frames as wide as the larger of the two values, red where NEW has more, blue where it\n"
	"has less, grey where nothing changed.\n"
	"\n"
	"  -o, --output FILE      write to FILE, format by extension: .txt (the table of\n"
	"                         changes), .svg (differential flame graph), .html (both, on\n"
	"                         one page), .json, .folded, .pb.gz, .csv (the diff profile:\n"
	"                         per stack base, new, delta and their max); repeatable;\n"
	"                         default: the table to stdout;\n"
	"                         FORMAT:PATH names the format (folded:- for a pipe)\n"
	"      --value TYPE       the sample type to compare (default: BASE's default type,\n"
	"                         alloc_space for ebprof mem); both profiles must have it;\n"
	"                         profiles of two modes (kmem and mem) are compared only\n"
	"                         by a type named here\n"
	"      --top N            changes shown in the table (default 20, 0 = all)\n"
	"      --inverted         draw the flame graph as an icicle (roots at the top)\n"
	"  -v, --verbose          say what is loaded and written\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  ebprof diff before.pb.gz after.pb.gz\n"
	"  ebprof diff before.pb.gz after.pb.gz -o diff.svg -o diff.txt\n"
	"  ebprof diff --value inuse_space --top 0 before.pb.gz after.pb.gz\n";

static int usage_err(const struct log_ctx *lc, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", lc->prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'ebprof diff --help'.\n");
	return 2;
}

/* "base.pb.gz: mem profile of ./prog" for the notes of the diff. */
static int describe(struct profile *d, const char *role, const char *path,
		    const struct profile *p)
{
	if (p->command)
		return profile__add_note(d, "%s %s: %s profile of %s", role, path, p->mode,
					 p->command);
	return profile__add_note(d, "%s %s: %s profile", role, path, p->mode);
}

/* What was compared, for the reports: "BASE -> NEW" as the command, each input as a note. */
static int label_diff(struct profile *d, const char *paths[2], struct profile *p[2])
{
	char *cmp = NULL;
	int err;

	if (asprintf(&cmp, "%s -> %s", paths[0], paths[1]) < 0)
		return -ENOMEM;
	err = profile__set_meta(d, cmp, NULL, NULL, p[1]->time_nanos, p[1]->duration_nanos);
	free(cmp);
	if (!err)
		err = describe(d, "base", paths[0], p[0]);
	if (!err)
		err = describe(d, "new", paths[1], p[1]);
	return err;
}

/* Can the two be compared in `type`? If not, say why; returns 0, 1 (runtime) or 2 (usage). */
static int check_type(const struct log_ctx *lc, const char *type, bool asked,
		      const char *paths[2], const struct profile *p[2])
{
	char types[512];
	int i, ti[2];

	if (!type) {
		pr_err(lc, "'%s' has no sample types: nothing to compare", paths[0]);
		return 1;
	}
	if (!strcmp(type, "base") || !strcmp(type, "new") || !strcmp(type, "delta")) {
		pr_err(lc, "cannot compare a sample type named '%s': the diff uses that name "
		       "itself", type);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		ti[i] = profile__type_index(p[i], type);
		if (ti[i] >= 0)
			continue;
		cli_type_list(p[i], types, sizeof(types));
		if (asked) {
			fprintf(stderr, "%s: '%s' has no sample type '%s'; it has: %s\n"
				"Try 'ebprof diff --help'.\n", lc->prog, paths[i], type, types);
			return 2;
		}
		pr_err(lc, "'%s' has no sample type '%s' (BASE's default); it has: %s. Choose one "
		       "both have with --value", paths[i], type, types);
		return 1;
	}
	if (strcmp(p[0]->types[ti[0]].unit, p[1]->types[ti[1]].unit)) {
		pr_err(lc, "cannot compare '%s': it is in %s in '%s' but in %s in '%s'", type,
		       p[0]->types[ti[0]].unit, paths[0], p[1]->types[ti[1]].unit, paths[1]);
		return 1;
	}
	return 0;
}

/* Two of ebprof's modes can give one name to different measures: kmem's alloc_space is what the
 * kernel allocated, mem's what a program did. Compared by the default type, profiles of two
 * modes would be such a mix, so only --value compares them. Another tool's profile (mode
 * pprof) says nothing of its mode and may be compared with any. 0, or 1 (said why). */
static int check_modes(const struct log_ctx *lc, const char *type, bool asked,
		       const char *paths[2], const struct profile *p[2])
{
	const char *m0 = p[0]->mode ? p[0]->mode : "pprof", *m1 = p[1]->mode ? p[1]->mode : "pprof";

	if (asked || !strcmp(m0, m1) || !strcmp(m0, "pprof") || !strcmp(m1, "pprof"))
		return 0;
	pr_err(lc, "cannot compare '%s', a %s profile, with '%s', a %s profile: %s is not one "
	       "measure in two modes; give --value %s to compare them anyway", paths[0], m0,
	       paths[1], m1, type, type);
	return 1;
}

int cmd_diff(int argc, char **argv, struct log_ctx *lc)
{
	enum { OPT_TOP = 256, OPT_VALUE, OPT_INVERTED };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct output_opts out = { .top = 20, .sort = OUTPUT_SORT_BYTES };
	const struct profile *in[2] = { NULL, NULL };
	struct profile *p[2] = { NULL, NULL }, *d = NULL;
	const char *type = NULL, *paths[2];
	char *outputs[MAX_OUTPUTS], *end;
	int noutputs = 0, c, rc = 1, i;
	unsigned long long v;
	bool asked = false;

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
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-' || v > UINT32_MAX)
				return usage_err(lc, "invalid --top '%s'", optarg);
			out.top = (uint32_t)v;
			break;
		case OPT_VALUE:
			type = optarg;
			asked = true;
			break;
		case OPT_INVERTED:
			out.inverted = true;
			break;
		case 'v':
			lc->verbose++;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'ebprof diff --help'.\n");
			return 2;
		}
	}
	if (argc - optind != 2)
		return usage_err(lc, "%s", argc - optind < 2 ?
				 "give two profiles: ebprof diff BASE NEW" :
				 "too many arguments: ebprof diff BASE NEW");
	paths[0] = argv[optind];
	paths[1] = argv[optind + 1];
	if (!strcmp(paths[0], "-") && !strcmp(paths[1], "-"))
		return usage_err(lc, "%s", "only one of BASE and NEW can be - (standard input)");
	if (session__check_outputs(lc, outputs, noutputs))
		return 2;

	for (i = 0; i < 2; i++) {
		p[i] = cli_load_profile(lc, paths[i]);
		if (!p[i])
			goto out;
		in[i] = p[i];
	}
	if (!type && p[0]->ntypes)
		type = p[0]->types[p[0]->default_type].type;
	rc = check_type(lc, type, asked, paths, in);
	if (!rc)
		rc = check_modes(lc, type, asked, paths, in);
	if (rc)
		goto out;
	rc = 1;
	d = profile__diff(p[0], p[1], type);
	if (!d) {
		pr_err(lc, "cannot compare '%s' and '%s': %s", paths[0], paths[1], strerror(errno));
		goto out;
	}
	if (label_diff(d, paths, p)) {
		pr_err(lc, "out of memory");
		goto out;
	}
	/* the diff profile's default type is the one to draw; --value chose what to compare */
	rc = session__write_outputs(lc, d, &out, outputs, noutputs);
out:
	profile__free(d);
	profile__free(p[0]);
	profile__free(p[1]);
	return rc;
}
