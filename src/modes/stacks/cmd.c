/* `ebprof stacks`: count user and kernel stacks at kernel tracepoints and user functions.
 * Options here; the run is the shared session's (core/session.h), the collector collect.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/stacks/collect.h"

enum {
	OPT_MAX_STACKS = OPT_MODE_BASE,
};

static const char usage[] =
	"Usage: ebprof stacks -e EVENT [-e EVENT...] [OPTIONS] {-p PID | -a | -- CMD [ARGS...]}\n"
	"       ebprof stacks -l [PATTERN]\n"
	"\n"
	"Count the user and kernel stacks of the traced processes each time an event fires: a\n"
	"kernel tracepoint or a user function. The report's sample type is events (count); the\n"
	"leaf frame of every stack is the event's name, then the kernel frames, then the user\n"
	"frames, so a flame graph's tips say which event each stack hit.\n"
	"\n"
	"Events:\n"
	"  -e, --event EVENT      repeatable (up to 64):\n"
	"                           CATEGORY:NAME  a tracepoint (sched:sched_switch); through a raw\n"
	"                                          tracepoint when the kernel's BTF has one, else\n"
	"                                          through tracefs (mounted if need be)\n"
	"                           syscalls:sys_enter_NAME, syscalls:sys_exit_NAME  a syscall's\n"
	"                                          entry or exit (no tracefs needed)\n"
	"                           NAME           a raw tracepoint by its BTF name alone\n"
	"                           u:PATH:SYMBOL  a user function's entry; PATH is a file, or a\n"
	"                                          bare name matched against the target's mapped\n"
	"                                          objects (u:libc:malloc, u:myprog:handle,\n"
	"                                          u:myprog:ns::Class::method: C++ as written)\n"
	"  -l, --list [PATTERN]   list the events (a glob or a substring); needs no target\n"
	"      --max-stacks N     distinct stacks, and distinct (process, event, stacks) counted\n"
	"                         (default 16384; beyond: counted as drops, always reported)\n"
	"\n"
	"Targets (one kind):\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every process and kernel thread (ebprof itself excepted)\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof stacks -e syscalls:sys_enter_openat -- ./myprog    who opens files\n"
	"  sudo ebprof stacks -e sched:sched_switch -p 4242 -d 10 -o off.svg\n"
	"                                      where 4242 leaves the CPU, as a flame graph\n"
	"  sudo ebprof stacks -e u:libc:malloc -e syscalls:sys_enter_write -- ./myprog\n"
	"  sudo ebprof stacks -e block:block_rq_issue -a -d 5 -o io.folded\n"
	"  sudo ebprof stacks -l openat        the events whose names contain openat\n"
	"  sudo ebprof stacks -l 'sched:*'\n";

static const struct option longopts[] = {
	{ "event", required_argument, NULL, 'e' },
	{ "list", optional_argument, NULL, 'l' },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ 0 },
};

static int parse(void *mo, int c, const char *arg, struct session_opts *so,
		 const struct log_ctx *lc)
{
	struct stacks_opts *o = mo;
	char why[256];
	int err;

	switch (c) {
	case 'e':
		for (int i = 0; i < o->nevents; i++)
			if (!strcmp(o->events[i].spec, arg))
				return 0;	/* the same event twice counts once */
		if (o->nevents == STACKS_MAX_EVENTS)
			return cli_usage_err(lc, "stacks", "too many events: at most %d -e per run",
					     STACKS_MAX_EVENTS);
		err = stacks_event__parse(&o->events[o->nevents], arg, why, sizeof(why));
		if (err == -EINVAL)
			return cli_usage_err(lc, "stacks", "%s", why);
		if (err)
			return cli_usage_err(lc, "stacks", "out of memory");
		o->nevents++;
		return 0;
	case 'l':
		return 0;	/* handled before parsing (it needs no target) */
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "stacks", arg, 16, 1u << 24, &o->max_stacks);
	}
	return cli_usage_err(lc, "stacks", "unknown option");
}

static int check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct stacks_opts *o = mo;

	if (!o->nevents)
		return cli_usage_err(lc, "stacks", "no event: give one with -e (e.g. -e "
				     "sched:sched_switch); 'ebprof stacks -l' lists them");
	return 0;
}

static const struct mode_cli stacks_cli = {
	.name = "stacks",
	.usage = usage,
	.longopts = longopts,
	.shortopts = "e:l::",
	.parse = parse,
	.check = check,
	.no_sort = true,
};

/* -l [PATTERN] anywhere before "--": the listing needs no target, so it is handled before the
 * shared parsing (which requires one). Returns true and sets *pattern (NULL: all). */
static bool want_list(int argc, char **argv, const char **pattern)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return false;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return false;
		if (!strcmp(a, "-l") || !strcmp(a, "--list")) {
			*pattern = i + 1 < argc && argv[i + 1][0] != '-' ? argv[i + 1] : NULL;
			return true;
		}
		if (!strncmp(a, "--list=", 7)) {
			*pattern = a + 7;
			return true;
		}
		if (!strncmp(a, "-l", 2)) {
			*pattern = a + 2;
			return true;
		}
		/* the argument of an option taking one is not an option */
		if (!strcmp(a, "-e") || !strcmp(a, "--event") || !strcmp(a, "-o") ||
		    !strcmp(a, "-p") || !strcmp(a, "-d") || !strcmp(a, "--max-stacks"))
			i++;
	}
	return false;
}

static void stacks_defaults(void *mo, struct session_opts *so)
{
	((struct stacks_opts *)mo)->max_stacks = STACKS_DEFAULT_MAX_STACKS;
}

static int stacks_prepare(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	int err = stacks_opts__resolve(mo, lc);

	/* an unknown event is the user's to fix; a tracefs that cannot be mounted not */
	return err == -ENOENT ? 2 : err ? 1 : 0;
}

static void stacks_release(void *mo)
{
	stacks_opts__free(mo);
}

const struct mode_def stacks_def = {
	.cli = &stacks_cli,
	.ops = &stacks_mode_ops,
	.opts_size = sizeof(struct stacks_opts),
	.defaults = stacks_defaults,
	.prepare = stacks_prepare,
	.release = stacks_release,
};

int cmd_stacks(int argc, char **argv, struct log_ctx *lc)
{
	const char *pattern;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			lc->verbose++;
	if (want_list(argc, argv, &pattern))
		return stacks_events__list(pattern, stdout, lc);
	lc->verbose = 0;	/* cli_parse counts -v itself */
	return cli_run_mode(argc, argv, lc, &stacks_def);
}
