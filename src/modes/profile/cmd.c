/* ebprof profile: several recording modes in one session (core/modeset.h), one report with
 * findings (output/findings.h). Each mode is the same as on its own (its BPF, its collector,
 * its defaults), set up through its struct mode_def; this file only chooses them and sets the
 * few options a combined run changes (mem: sampled by default). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/modeset.h"
#include "core/session.h"
#include "output/output.h"

#define DEFAULT_SAMPLE_BYTES "524288"

enum {
	OPT_MODES = OPT_MODE_BASE,
	OPT_SAMPLE_BYTES,
	OPT_MEM_EXACT,
	OPT_LEAKS,
};

/* The modes a profile can combine, in the order they attach: mem last (it runs a launched
 * program forward to its allocator; the others then see it from its exec on). */
static const struct {
	const char *name;
	const struct mode_def *def;
	bool system_wide;	/* in the default set with -a */
} known[] = {
	{ "cpu", &cpu_def, true },
	{ "io", &io_def, true },
	{ "offcpu", &offcpu_def, true },
	{ "lock", &lock_def, true },
	{ "mem", &mem_def, false },
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static size_t known_index(const char *name)
{
	size_t i = 0;

	while (i < NKNOWN - 1 && strcmp(known[i].name, name))
		i++;
	return i;
}

struct profile_opts {
	bool want[NKNOWN];
	bool modes_given;
	const char *sample_bytes;	/* mem --sample-bytes; NULL with --mem-exact */
	bool mem_exact;
	bool leaks;			/* mem --leaks (exact tracking) */
	bool sample_given;
	const char *freq;		/* cpu -F */
	/* the first mem option given ("--mem-exact"), or NULL */
	const char *mem_opt;
};

static const struct option profile_longopts[] = {
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ "mem-exact", no_argument, NULL, OPT_MEM_EXACT },
	{ "leaks", no_argument, NULL, OPT_LEAKS },
	{ "frequency", required_argument, NULL, 'F' },
	{ 0 },
};

static const char profile_usage[] =
	"Usage: ebprof profile [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof profile [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof profile [OPTIONS] -a -d TIME\n"
	"\n"
	"Every mode at once, one report: CPU samples (cpu), block I/O latency (io), off-CPU time\n"
	"(offcpu), lock contention (lock) and sampled allocations (mem) of the same run, each\n"
	"mode with its own probes and tables, exactly as on its own. The report leads with\n"
	"findings: each a fact the run measured that crossed a threshold (docs/FINDINGS.md),\n"
	"e.g. a function with 20% or more of the CPU samples, a process whose threads waited\n"
	"for a CPU a quarter of the time they ran or waited to run, a function whose threads\n"
	"were off the CPU for 10% of the run, a lock waited on for 10% of the run or more, a\n"
	"function allocating 1 MiB/s or more, a disk whose p99 latency is 10 ms or more, with\n"
	"one next step; nothing when nothing crosses one. Then each mode's own report.\n"

	"\n"
	"Outputs: text, .json and .html hold every mode (the HTML page: findings, then a tab per\n"
	"mode with its own tables and flame graphs); the other formats are written once per\n"
	"mode, named by it: -o out.pb.gz writes out.cpu.pb.gz, out.io.pb.gz, ...; to standard\n"
	"output (-o folded:-) only when one mode runs (--modes cpu -o folded:- | flamegraph.pl)\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              the whole machine: cpu, io, offcpu, lock (mem only if --modes\n"
	"                         names it: system-wide allocation probes cost every process)\n"
	"\n"
	"Modes:\n"
	"      --modes LIST       the modes to run, e.g. cpu,mem (default: cpu,io,offcpu,\n"
	"                         lock,mem; with -a the same without mem); a default mode that\n"
	"                         cannot run here is left out with a warning, a named one\n"
	"                         fails the run\n"
	"  -F, --frequency HZ     cpu: samples per second on each CPU (default 99)\n"
	"      --sample-bytes N   mem: one allocation recorded per N requested bytes on\n"
	"                         average, weighted (default 524288: 512 KiB)\n"
	"      --mem-exact        mem: record every allocation (full tracking, exact counts)\n"
	"      --leaks            mem: and scan each process at its exit for leaks, classified\n"
	"                         as valgrind does (implies --mem-exact; see ebprof mem)\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT_SET
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof profile -o report.html -- ./myprog   everything about one run\n"
	"  sudo ebprof profile -p 4242 -d 30 -o r.html -o r.json\n"
	"  sudo ebprof profile --modes cpu,mem --mem-exact -- ./myprog\n"
	"  sudo ebprof profile -a -d 10                     the whole machine, mem aside\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int parse_modes(struct profile_opts *o, const char *arg, const struct log_ctx *lc)
{
	char *list = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	if (!list)
		return cli_usage_err(lc, "profile", "out of memory");
	memset(o->want, 0, sizeof(o->want));
	for (tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < NKNOWN && strcmp(tok, known[i].name); i++)
			;
		if (i == NKNOWN)
			rc = cli_usage_err(lc, "profile", "--modes: unknown mode '%s' (the modes "
					   "are cpu, io, offcpu, lock and mem)", tok);
		else
			o->want[i] = true;
	}
	free(list);
	if (!rc) {
		size_t n = 0;

		for (size_t i = 0; i < NKNOWN; i++)
			n += o->want[i];
		if (!n)
			rc = cli_usage_err(lc, "profile", "--modes names no mode (cpu, io, offcpu, lock, mem)");
	}
	o->modes_given = true;
	return rc;
}

static int profile_parse(void *mo, int c, const char *arg, struct session_opts *so,
			 const struct log_ctx *lc)
{
	struct profile_opts *o = mo;

	switch (c) {
	case OPT_MODES:
		return parse_modes(o, arg, lc);
	case OPT_SAMPLE_BYTES:
		o->sample_bytes = arg;
		o->sample_given = true;
		o->mem_opt = o->mem_opt ?: "--sample-bytes";
		return 0;
	case OPT_MEM_EXACT:
		o->mem_exact = true;
		o->mem_opt = o->mem_opt ?: "--mem-exact";
		return 0;
	case OPT_LEAKS:
		o->leaks = o->mem_exact = true;
		o->mem_opt = o->mem_opt ?: "--leaks";
		return 0;
	case 'F':
		o->freq = arg;
		return 0;
	}
	return cli_usage_err(lc, "profile", "unknown option");
}

/* The modes of the run, "cpu, io, offcpu" */
static void modes_list(const struct profile_opts *o, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NKNOWN && n < len; i++)
		if (o->want[i])
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", known[i].name);
}

/* An option of a mode the run leaves out would be ignored without a word (--mem-exact asked
 * for exact counts and got no mem report): refused, as --leaks was. */
static int check_member_opt(const struct profile_opts *o, const struct session_opts *so,
			    const char *opt, const char *mode, const struct log_ctx *lc)
{
	char list[64];

	if (!opt || o->want[known_index(mode)])
		return 0;
	modes_list(o, list, sizeof(list));
	return cli_usage_err(lc, "profile", "%s is an option of %s, and %s is not among this "
			     "run's modes (%s%s): add %s to --modes", opt, mode, mode, list,
			     !o->modes_given && so->all ? ": -a's default" : "", mode);
}

/* A format written once per mode cannot go to one stream: the parts would follow each other
 * in it (two pprofs, two JSON documents; folded lines of samples and of nanoseconds that
 * flamegraph.pl adds up). Fine when one mode runs. */
static int check_streams(const struct profile_opts *o, const struct session_opts *so,
			 const struct log_ctx *lc)
{
	size_t n = 0;
	char list[64];

	for (size_t i = 0; i < NKNOWN; i++)
		n += o->want[i];
	if (n < 2)
		return 0;
	modes_list(o, list, sizeof(list));
	for (int i = 0; i < so->noutputs; i++) {
		const struct output_ops *ops = output__for_path(so->outputs[i]);

		/* every part into /dev/null is as good as one */
		if (!output__is_stream(so->outputs[i]) || output__shows_parts(ops) ||
		    !strcmp(output__file(so->outputs[i]), "/dev/null"))
			continue;
		return cli_usage_err(lc, "profile", "-o %s: a stream takes one mode's %s, and "
				     "this run has %zu modes (%s): name a file (-o out%s writes "
				     "out.cpu%s, ...), or run one mode (e.g. --modes cpu)",
				     so->outputs[i], ops->name, n, list, ops->ext, ops->ext);
	}
	return 0;
}

static int profile_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct profile_opts *o = mo;

	if (o->mem_exact && o->sample_given)
		return cli_usage_err(lc, "profile", "--%s records every allocation: it cannot be "
				     "combined with --sample-bytes", o->leaks ? "leaks" : "mem-exact");
	if (so->out.value_type)
		return cli_usage_err(lc, "profile", "--value picks one sample type of one mode, "
				     "and a profile has several modes; write a pprof (-o out.pb.gz) "
				     "and use 'ebprof report out.MODE.pb.gz --value TYPE'");
	if (!o->modes_given)
		for (size_t i = 0; i < NKNOWN; i++)
			o->want[i] = !so->all || known[i].system_wide;
	return check_member_opt(o, so, o->mem_opt, "mem", lc) ?:
	       check_member_opt(o, so, o->freq ? "-F" : NULL, "cpu", lc) ?:
	       check_streams(o, so, lc);
}

static const struct mode_cli profile_cli = {
	.name = "profile",
	.usage = profile_usage,
	.longopts = profile_longopts,
	.shortopts = "F:",
	.parse = profile_parse,
	.check = profile_check,
};

/* Each chosen mode's options: its defaults, what the profile sets, its own checks. */
static int members(struct profile_opts *o, struct modeset_opts *ms, struct session_opts *so,
		   const struct log_ctx *lc)
{
	for (size_t i = 0; i < NKNOWN; i++) {
		const struct mode_def *d = known[i].def;
		struct session_opts dso = { 0 };
		void *mo;
		int rc = 0;

		if (!o->want[i])
			continue;
		mo = cli_mode_opts_new(d, &dso);
		if (!mo) {
			pr_err(lc, "out of memory");
			return 1;
		}
		/* a mode the user did not name is left out if it cannot run here */
		ms->members[ms->n++] = (struct modeset_member){ .ops = d->ops, .opts = mo,
								.optional = !o->modes_given };
		if (d == &mem_def && !o->mem_exact)
			rc = cli_mode_option(d, mo, "sample-bytes",
					     o->sample_bytes ? o->sample_bytes : DEFAULT_SAMPLE_BYTES,
					     so, lc);
		if (!rc && d == &mem_def && o->leaks)
			rc = cli_mode_option(d, mo, "leaks", NULL, so, lc);
		if (!rc && d == &cpu_def && o->freq)
			rc = cli_mode_option(d, mo, "frequency", o->freq, so, lc);
		if (!rc && d->cli->check)
			rc = d->cli->check(mo, so, lc);
		if (!rc && d->prepare)
			rc = d->prepare(mo, so, lc);
		if (rc)
			return rc;
	}
	return 0;
}

int cmd_profile(int argc, char **argv, struct log_ctx *lc)
{
	struct session_opts so = { .out = { .top = 10 } };
	struct profile_opts o = { 0 };
	struct modeset_opts ms = { .findings = true };
	struct mode_ops ops;
	int rc;

	/* the members' usage errors point to this command's help */
	lc->cmd = "profile";
	rc = cli_parse(argc, argv, lc, &profile_cli, &so, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = members(&o, &ms, &so, lc);
	if (!rc) {
		modeset__ops(&ops, &ms);
		if (so.all && !ops.attach_all) {
			pr_err(lc, "-a: a mode of --modes cannot trace the whole machine");
			rc = 2;
		} else {
			rc = session__run(&so, &ops, &ms, lc);
		}
	}
	for (int i = 0; i < ms.n; i++)
		for (size_t k = 0; k < NKNOWN; k++)
			if (known[k].def->ops == ms.members[i].ops)
				cli_mode_opts_free(known[k].def, ms.members[i].opts);
	return rc;
}
