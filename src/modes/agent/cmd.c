/*
 * ebprof agent: continuous profiling. The modes of --modes run as one set (core/modeset.h) on
 * the shared session in windows of --period seconds (session_opts.window_secs: each mode's
 * window hook reads and resets its counts at each boundary, into its part of the window);
 * each part becomes one pprof per service (the processes of one name, --app, in one
 * container), gzipped, queued, and pushed by the pusher's thread
 * (src/agent/push.c) to Pyroscope's /ingest or Parca's WriteRaw. SIGHUP reloads --config,
 * SIGTERM (or Ctrl-C) ends the current window, pushes what is queued (for a bounded time) and
 * exits 0.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent/agent.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "core/modeset.h"
#include "core/session.h"
#include "core/target.h"
#include "modes/cpu/collect.h"
#include "output/output.h"
#include "profile/profile.h"
#include "util/util.h"

#define MAX_CLI_SETTINGS 64

enum {
	OPT_SERVER = OPT_MODE_BASE,
	OPT_PROTOCOL,
	OPT_APP,
	OPT_TAGS,
	OPT_PERIOD,
	OPT_MODES,
	OPT_TOKEN_FILE,
	OPT_BASIC_AUTH_FILE,
	OPT_CA_FILE,
	OPT_TENANT,
	OPT_CONNECT_TIMEOUT,
	OPT_TIMEOUT,
	OPT_BACKOFF_MAX,
	OPT_QUEUE,
	OPT_STATUS_INTERVAL,
	OPT_CONFIG,
	OPT_COMM,
	OPT_SAMPLE_BYTES,
};

static const struct option agent_longopts[] = {
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "protocol", required_argument, NULL, OPT_PROTOCOL },
	{ "app", required_argument, NULL, OPT_APP },
	{ "tags", required_argument, NULL, OPT_TAGS },
	{ "period", required_argument, NULL, OPT_PERIOD },
	{ "frequency", required_argument, NULL, 'F' },
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "basic-auth-file", required_argument, NULL, OPT_BASIC_AUTH_FILE },
	{ "ca-file", required_argument, NULL, OPT_CA_FILE },
	{ "tenant", required_argument, NULL, OPT_TENANT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "backoff-max", required_argument, NULL, OPT_BACKOFF_MAX },
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "status-interval", required_argument, NULL, OPT_STATUS_INTERVAL },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "sample-bytes", required_argument, NULL, OPT_SAMPLE_BYTES },
	{ 0 },
};

static const char agent_usage[] =
	"Usage: ebprof agent --server URL [OPTIONS] [-a | -p PID[,PID...]]\n"
	"       ebprof agent --config /etc/ebprof/agent.conf\n"
	"\n"
	"Continuous profiling: sample on-CPU stacks (as 'ebprof cpu'), and with --modes block\n"
	"I/O, lock waits and sampled allocations too, in windows of --period seconds, and push\n"
	"each window to a profiling backend as one gzipped pprof per service and mode (a service:\n"
	"the processes of one name, or --app, in one container). Runs until SIGTERM or Ctrl-C\n"
	"(or -d): the current window is then pushed, with what is still queued, and the exit\n"
	"status is 0. SIGHUP reloads --config.\n"
	"\n"
	"Pyroscope (the default): POST URL/ingest?name=SERVICE{host=H,container_id=C,TAGS}&\n"
	"from=UNIX&until=UNIX&format=pprof&sampleRate=HZ&spyName=ebprof; windows are aligned on\n"
	"multiples of --period seconds, each one's until the next one's from. Each sample carries\n"
	"its process's pid (and name) as pprof labels. Every mode's pushes carry the same name;\n"
	"Pyroscope tells them apart by their sample types (cpu: samples, cpu; io: requests,\n"
	"io_bytes, latency, queue; lock: contentions, delay, timeouts, timeout_delay; mem:\n"
	"alloc_objects, alloc_space, inuse_objects, inuse_space; offcpu: offcpu, switches, and\n"
	"its run-queue waits in comments, 'info: runq_waits: N'). Parca (--protocol parca):\n"
	"POST URL/profiles/writeraw, a WriteRawRequest in JSON (its HTTP gateway), labels\n"
	"__name__=ebprof_MODE (ebprof_cpu, ebprof_lock...), service, host, container_id and the\n"
	"tags.\n"
	"\n"
	"Targets (default: -a):\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every task (kernel threads as service 'kernel')\n"
	"      --comm NAME[,NAME] push only the processes of these names (their name as the\n"
	"                         kernel has it, 15 characters at most); sampling stays -a's\n"
	"\n"
	"Profiling:\n"
	"  -F, --frequency HZ     cpu samples per second on each CPU (default 99)\n"
	"      --period SECONDS   the window a push covers (default 10)\n"
	"      --modes LIST       what to profile, of cpu, io, lock, mem, offcpu (default cpu):\n"
	"                         e.g. cpu,io,lock; mem (sampled allocations, as 'ebprof mem\n"
	"                         --sample-bytes') only on chosen processes (-p or a command),\n"
	"                         never with -a\n"
	"      --sample-bytes N   mem: one allocation recorded per N requested bytes on average\n"
	"                         (default 524288); values are estimates\n"
	"      --app NAME         the service name of every process (default: each process's\n"
	"                         name; unknown when it has no letter or digit)\n"
	"      --tags K=V,...     labels added to every push\n"
	"\n"
	"Pushing:\n"
	"      --server URL       http:// or https:// address of the backend (required; a URL\n"
	"                         libcurl refuses is a usage error: a space in it is %20)\n"
	"      --protocol P       pyroscope (default) or parca\n"
	"      --token-file FILE  send 'Authorization: Bearer <first line of FILE>'\n"
	"      --basic-auth-file FILE  HTTP basic auth, FILE holding user:password\n"
	"                         (secrets are read from files only, again at each push)\n"
	"      --ca-file FILE     CA certificates for https (default: the system's)\n"
	"      --tenant ID        X-Scope-OrgID header (Pyroscope multi-tenancy)\n"
	"      --connect-timeout S  seconds to connect (default 5)\n"
	"      --timeout S        seconds a whole push may take (default 15)\n"
	"      --backoff-max S    the longest wait between retries (default 30): a failed push\n"
	"                         (no connection, timeout, HTTP 5xx, 408, 429) is retried after\n"
	"                         0.5 s, 1 s, 2 s... up to S, each wait drawn from half of it to\n"
	"                         all of it; windows behind it wait their turn. Another 4xx\n"
	"                         (413: too large, 400, 401...) is not retried, and said\n"
	"      --queue N          windows kept while the server does not take them (default\n"
	"                         30); past it the oldest is dropped, counted and said\n"
	"      --status-interval S  seconds between status lines on stderr (default 60, 0: none)\n"
	"      --config FILE      read these settings from FILE first: 'key = value' lines, the\n"
	"                         keys being the long options above (server, period, tags...);\n"
	"                         the command line wins. SIGHUP reads it again (period,\n"
	"                         frequency, modes and sample-bytes change on a restart only)\n"
	"\n"
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof agent -a --server http://pyroscope:4040\n"
	"  sudo ebprof agent -a --server https://profiles.example.com \\\n"
	"       --token-file /etc/ebprof/token --tags env=prod,region=eu --period 15\n"
	"  sudo ebprof agent -p 4242 --app checkout --server http://127.0.0.1:4040\n"
	"  sudo ebprof agent -a --modes cpu,io,lock --server http://pyroscope:4040\n"
	"  sudo ebprof agent -p 4242 --modes cpu,lock,mem --server http://pyroscope:4040\n"
	"  sudo ebprof agent -a --protocol parca --server http://parca:7070\n"
	"  sudo ebprof agent --config /etc/ebprof/agent.conf   (docs/ebprof-agent.service)\n"
	"\n"
	"Exit status: 0 (stopped by a signal or -d); 1 when profiling cannot start; 2 on a usage\n"
	"error.\n";

struct agent_cli {
	const char *config;
	const char *keys[MAX_CLI_SETTINGS];
	const char *vals[MAX_CLI_SETTINGS];
	int n;
};

struct agent {
	const struct log_ctx *lc;
	struct agent_cli cli;
	struct agent_conf conf;
	char host[256];
	struct pusher *pusher;
	uint64_t seconds;
	uint64_t services;	/* pushes made from windows, for the status line */
	bool stopped;		/* the pusher finished and the last status said (agent_stop) */
};

/* The run is over (session_opts.on_end: before a wait for the command that -d left running):
 * what is queued gets one more attempt each, within one push's time, and the last status. */
static void agent_stop(void *ctx)
{
	struct agent *a = ctx;
	struct agent_stats st;

	if (a->stopped)
		return;
	a->stopped = true;
	pusher__finish(a->pusher, a->conf.connect_timeout + a->conf.timeout, &st);
	a->pusher = NULL;
	fprintf(stderr, "ebprof: agent stopped: windows %llu (sent %llu, refused %llu, dropped "
		"%llu, unsent %llu, empty %llu), pushes ok %llu, failed attempts %llu, rejected %llu, "
		"sent %llu bytes\n", (unsigned long long)st.windows,
		(unsigned long long)st.windows_sent, (unsigned long long)st.windows_refused,
		(unsigned long long)st.windows_dropped, (unsigned long long)st.windows_unsent,
		(unsigned long long)st.windows_empty,
		(unsigned long long)st.pushes_ok, (unsigned long long)st.attempts_failed,
		(unsigned long long)st.pushes_rejected, (unsigned long long)st.bytes_sent);
}

static const char *key_of(int c)
{
	for (const struct option *o = agent_longopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return NULL;
}

static int agent_parse(void *mo, int c, const char *arg, struct session_opts *so,
		       const struct log_ctx *lc)
{
	struct agent_cli *a = mo;
	struct agent_conf scratch;
	const char *key = key_of(c);
	char why[512];

	if (c == OPT_CONFIG) {
		a->config = arg;
		return 0;
	}
	if (!key)
		return cli_usage_err(lc, "agent", "unknown option");
	agent_conf__defaults(&scratch);
	if (agent_conf__set(&scratch, key, arg, why, sizeof(why)))
		return cli_usage_err(lc, "agent", "--%s", why);
	if (a->n == MAX_CLI_SETTINGS)
		return cli_usage_err(lc, "agent", "too many options");
	a->keys[a->n] = key;
	a->vals[a->n++] = arg;
	return 0;
}

/* defaults, then the config file, then the command line */
static int build_conf(const struct agent_cli *a, struct agent_conf *c, char *why, size_t len)
{
	agent_conf__defaults(c);
	if (a->config && agent_conf__load(c, a->config, why, len))
		return -1;
	for (int i = 0; i < a->n; i++)
		if (agent_conf__set(c, a->keys[i], a->vals[i], why, len))
			return -1;
	return agent_conf__check(c, why, len);
}

static int agent_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct agent_cli *a = mo;
	struct agent_conf c;
	char why[1024];

	if (so->noutputs)
		return cli_usage_err(lc, "agent", "-o does not go with 'ebprof agent': its windows "
				     "go to --server");
	if (build_conf(a, &c, why, sizeof(why)))
		return cli_usage_err(lc, "agent", "%s", why);
	/* the secrets are read again at each push (a rotated token is used at once); one that
	 * cannot be read at the start is a mistake to say now */
	if (c.token_file[0] && access(c.token_file, R_OK))
		return cli_usage_err(lc, "agent", "cannot read the token file '%s': %s",
				     c.token_file, strerror(errno));
	if (c.basic_auth_file[0] && access(c.basic_auth_file, R_OK))
		return cli_usage_err(lc, "agent", "cannot read the basic-auth file '%s': %s",
				     c.basic_auth_file, strerror(errno));
	if (c.ca_file[0] && access(c.ca_file, R_OK))
		return cli_usage_err(lc, "agent", "cannot read the CA file '%s': %s", c.ca_file,
				     strerror(errno));
	if ((c.modes & (1u << AGENT_MODE_MEM)) && so->all)
		return cli_usage_err(lc, "agent", "--modes mem traces chosen processes only (its "
				     "probes would cost every process of the machine): give -p "
				     "PID[,PID...] or a command, not -a%s", c.ncomms ? " (--comm "
				     "samples every process)" : "");
	if (c.hz > cpu_max_hz())
		return cli_usage_err(lc, "agent", "-F %u is above this machine's highest sampling "
				     "rate, %u Hz", c.hz, cpu_max_hz());
	/* a mode's option on the command line without the mode would be ignored without a word
	 * (a config file may hold settings for modes a host does not run) */
	for (int i = 0; i < a->n; i++) {
		static const struct {
			const char *key, *opt;
			int mode;
		} own[] = {
			{ "sample-bytes", "--sample-bytes", AGENT_MODE_MEM },
			{ "frequency", "-F", AGENT_MODE_CPU },
		};

		for (size_t k = 0; k < sizeof(own) / sizeof(own[0]); k++) {
			const char *m = agent_mode_names[own[k].mode];

			if (!strcmp(a->keys[i], own[k].key) && !(c.modes & (1u << own[k].mode)))
				return cli_usage_err(lc, "agent", "%s is an option of %s, and %s "
						     "is not among --modes: add it to --modes",
						     own[k].opt, m, m);
		}
	}
	return 0;
}

static const struct mode_cli agent_mode_cli = {
	.name = "agent",
	.usage = agent_usage,
	.longopts = agent_longopts,
	.shortopts = "F:",
	.parse = agent_parse,
	.check = agent_check,
	.no_sort = true,
	.default_all = true,
};

/* ---- windows into pushes ---------------------------------------------------------------- */

struct group {
	char service[128];
	char container[65];
	uint32_t *pids;
	size_t n;
};

static void service_of(struct agent *a, const struct profile *w, uint32_t pid, char *svc,
		       size_t len, char *container)
{
	const struct prof_process *pr = profile__find_process(w, pid);
	char path[64], *cg;

	container[0] = 0;
	if (a->conf.app[0])
		snprintf(svc, len, "%s", a->conf.app);
	else if (pid == 0 || target__is_kthread(pid))
		snprintf(svc, len, "kernel");
	else
		agent__service_name(pr ? pr->comm : NULL, svc, len);
	if (pid == 0)
		return;
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	cg = util_read_file(path, NULL);
	if (cg && !agent__container_id(cg, container))
		container[0] = 0;
	free(cg);
}

static int encode(const struct profile *p, uint8_t **buf, size_t *len)
{
	struct output_opts oo = { 0 };
	char *mem = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&mem, &n);
	int err;

	if (!f)
		return -errno;
	err = output_pprof.write(p, &oo, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(mem);
		return err;
	}
	*buf = (uint8_t *)mem;
	*len = n;
	return 0;
}

static void status_line(struct agent *a, const char *when);

/* offcpu's run-queue latency of a service's processes in the window (w's groups of those
 * pids, one per process): pprof has no place for histograms, so its pushes say the waits, their
 * total and the longest as facts (comments "info: runq_waits: N"...), which the pprof readers
 * keep (Pyroscope shows them with the profile; ebprof report reads them back). */
static int runq_facts(struct profile *sub, const struct profile *w, const uint32_t *pids,
		      size_t n)
{
	int64_t waits = 0, total = 0, max = 0;
	bool any = false;
	int err;

	for (uint32_t i = 0; i < w->ngroups; i++) {
		const struct prof_group *g = &w->groups[i];
		const char *pid = prof_group__label(g, "pid");
		size_t j;

		for (j = 0; pid && j < n && (uint32_t)strtoul(pid, NULL, 10) != pids[j]; j++)
			;
		if (!pid || j == n)
			continue;
		for (uint32_t k = 0; k < g->nstats; k++) {
			const struct prof_group_stat *st = &g->stats[k];

			if (!strcmp(st->name, "runq_waits")) {
				waits += st->value;
				any = true;
			} else if (!strcmp(st->name, "runq_total_ns")) {
				total += st->value;
			} else if (!strcmp(st->name, "runq_max_ns") && st->value > max) {
				max = st->value;
			}
		}
	}
	if (!any)
		return 0;
	err = profile__add_info(sub, "runq_waits", "%lld", (long long)waits);
	err = err ?: profile__add_info(sub, "runq_total_ns", "%lld", (long long)total);
	return err ?: profile__add_info(sub, "runq_max_ns", "%lld", (long long)max);
}

/* The pushes of one mode's profile of a window (w: the mode's part), one per service, appended
 * to (*pushes)[*np..]. Returns the bytes queued. */
static size_t part_pushes(struct agent *a, const struct profile *w, int64_t from_ns,
			  int64_t until_ns, struct agent_push **pushes, size_t *np)
{
	struct group *g = NULL;
	size_t ng = 0, bytes = 0;
	int64_t from = from_ns / 1000000000, until = (until_ns + 999999999) / 1000000000;
	uint32_t last = UINT32_MAX;

	if (until <= from)
		until = from + 1;
	for (uint32_t i = 0; i < w->nsamples; i++) {
		uint32_t pid = w->samples[i].pid;
		char svc[128], cont[65];
		size_t k;

		if (pid == last)
			continue;
		last = pid;
		if (a->conf.ncomms) {
			const struct prof_process *pr = profile__find_process(w, pid);

			if (!agent_conf__comm_ok(&a->conf, pr ? pr->comm : NULL))
				continue;
		}
		service_of(a, w, pid, svc, sizeof(svc), cont);
		for (k = 0; k < ng; k++) {
			bool seen = false;

			if (strcmp(g[k].service, svc) || strcmp(g[k].container, cont))
				continue;
			for (size_t j = 0; j < g[k].n && !seen; j++)
				seen = g[k].pids[j] == pid;
			if (seen)
				goto next;
			break;
		}
		if (k == ng) {
			struct group *n = realloc(g, (ng + 1) * sizeof(*n));

			if (!n)
				break;
			g = n;
			memset(&g[ng], 0, sizeof(g[ng]));
			snprintf(g[ng].service, sizeof(g[ng].service), "%s", svc);
			snprintf(g[ng].container, sizeof(g[ng].container), "%s", cont);
			ng++;
		}
		{
			uint32_t *n = realloc(g[k].pids, (g[k].n + 1) * sizeof(*n));

			if (!n)
				break;
			g[k].pids = n;
			g[k].pids[g[k].n++] = pid;
		}
next:;
	}
	if (ng) {
		struct agent_push *more = realloc(*pushes, (*np + ng) * sizeof(*more));

		if (!more)
			ng = 0;
		else
			*pushes = more;
	}
	for (size_t k = 0; k < ng; k++) {
		struct profile *sub = profile__pick(w, g[k].pids, g[k].n);
		struct agent_push *ap = &(*pushes)[*np];
		int err;

		memset(ap, 0, sizeof(*ap));
		if (!sub) {
			pr_warn(a->lc, "out of memory: the window's %s profile of '%s' is lost",
				w->mode, g[k].service);
			continue;
		}
		/* the window's facts, drops and notes, in each service's pprof comments; the
		 * drops are the whole window's (not told apart by process), which each of its
		 * pushes says so that they are not summed over services */
		for (uint32_t d = 0; d < w->ndrops; d++)
			profile__add_drop(sub, w->drops[d].key, w->drops[d].value);
		if (ng > 1)
			profile__add_info(sub, "drops_scope", "the window's: the same in each of its "
					  "%zu %s pushes", ng, w->mode);
		for (uint32_t d = 0; d < w->ninfo; d++)
			if (strcmp(w->info[d].key, "samples"))
				profile__add_info(sub, w->info[d].key, "%s", w->info[d].value);
		for (uint32_t d = 0; d < w->nnotes; d++)
			profile__add_note(sub, "%s", w->notes[d]);
		runq_facts(sub, w, g[k].pids, g[k].n);
		if (!strcmp(w->mode, "cpu")) {
			int64_t n = 0;

			for (uint32_t i = 0; i < sub->nsamples; i++)
				n += sub->samples[i].values[0];
			profile__add_info(sub, "samples", "%lld", (long long)n);
		}
		profile__set_meta(sub, NULL, NULL, NULL, from_ns, until_ns - from_ns);
		err = encode(sub, &ap->body, &ap->len);
		profile__free(sub);
		if (err) {
			pr_warn(a->lc, "cannot encode the window's %s profile of '%s': %s", w->mode,
				g[k].service, strerror(-err));
			continue;
		}
		for (int m = 0; m < AGENT_MODE__COUNT && !ap->mode; m++)
			if (w->mode && !strcmp(w->mode, agent_mode_names[m]))
				ap->mode = agent_mode_names[m];
		ap->service = strdup(g[k].service);
		ap->container = g[k].container[0] ? strdup(g[k].container) : NULL;
		ap->from = from;
		ap->until = until;
		bytes += ap->len;
		(*np)++;
	}
	for (size_t k = 0; k < ng; k++)
		free(g[k].pids);
	free(g);
	return bytes;
}

/* A window: one pprof per (service, mode) of it, queued as one window of pushes. */
static void on_window(void *ctx, struct profile *w, int64_t from_ns, int64_t until_ns)
{
	struct agent *a = ctx;
	struct agent_push *pushes = NULL;
	size_t np = 0, bytes = 0;

	/* a modeset's window has a part per mode */
	for (uint32_t i = 0; i < w->nparts; i++)
		bytes += part_pushes(a, w->parts[i], from_ns, until_ns, &pushes, &np);
	if (!w->nparts)
		bytes += part_pushes(a, w, from_ns, until_ns, &pushes, &np);
	profile__free(w);
	a->services += np;
	pr_info(a->lc, "window %lld-%lld: %zu pushes (services x modes), %zu bytes of pprof "
		"queued", (long long)(from_ns / 1000000000),
		(long long)((until_ns + 999999999) / 1000000000), np, bytes);
	if (!pushes)
		pushes = calloc(1, sizeof(*pushes));
	if (pushes)
		pusher__add_window(a->pusher, pushes, np);
	if (a->lc->verbose)
		status_line(a, "");
	/* a window allocates and frees a few MB (maps files, profiles, pprof encodings) from two
	 * threads: give the free pages back, or the heap's fragments stay resident for good */
	malloc_trim(0);
}

/* ---- the daemon's housekeeping ---------------------------------------------------------- */

static void status_line(struct agent *a, const char *when)
{
	struct agent_stats st;

	pusher__stats(a->pusher, &st);
	fprintf(stderr, "ebprof: agent%s: windows %llu (sent %llu, refused %llu, dropped %llu, "
		"empty %llu), pushes ok %llu, failed attempts %llu, rejected %llu, sent %llu bytes, "
		"queued %llu windows (%llu bytes)\n", when, (unsigned long long)st.windows,
		(unsigned long long)st.windows_sent, (unsigned long long)st.windows_refused,
		(unsigned long long)st.windows_dropped, (unsigned long long)st.windows_empty,
		(unsigned long long)st.pushes_ok, (unsigned long long)st.attempts_failed,
		(unsigned long long)st.pushes_rejected, (unsigned long long)st.bytes_sent,
		(unsigned long long)st.queued, (unsigned long long)st.queued_bytes);
}

static void on_second(void *ctx)
{
	struct agent *a = ctx;

	a->seconds++;
	if (a->conf.status_every && a->seconds % a->conf.status_every == 0)
		status_line(a, "");
}

static void on_hup(void *ctx)
{
	struct agent *a = ctx;
	struct agent_conf c;
	const char *fixed;
	char why[1024];

	if (!a->cli.config) {
		pr_warn(a->lc, "SIGHUP: no --config file to reload");
		return;
	}
	if (build_conf(&a->cli, &c, why, sizeof(why))) {
		pr_warn(a->lc, "SIGHUP: the config was not reloaded: %s; the settings in use stay",
			why);
		return;
	}
	fixed = agent_conf__needs_restart(&a->conf, &c);
	if (fixed)
		pr_warn(a->lc, "SIGHUP: a new %s takes effect only when the agent restarts", fixed);
	c.period = a->conf.period;
	c.hz = a->conf.hz;
	c.modes = a->conf.modes;
	c.sample_bytes = a->conf.sample_bytes;
	a->conf = c;
	gethostname(a->host, sizeof(a->host) - 1);
	pusher__configure(a->pusher, &c, a->host);
	pr_warn(a->lc, "SIGHUP: reloaded %s (server %s)", a->cli.config, c.server);
}

/* The mode_def of each mode the agent can push (enum agent_mode's order). */
static const struct mode_def *const agent_defs[AGENT_MODE__COUNT] = {
	[AGENT_MODE_CPU] = &cpu_def, [AGENT_MODE_IO] = &io_def, [AGENT_MODE_OFFCPU] = &offcpu_def,
	[AGENT_MODE_LOCK] = &lock_def, [AGENT_MODE_MEM] = &mem_def,
};

/* Each mode of --modes as a member of the set, by its mode_def: its defaults, the options the
 * agent sets by name (cpu -F, mem --sample-bytes), its own checks. A mode without a window
 * hook is left out, said. 0 or the exit status. */
static int members(struct agent *a, struct modeset_opts *ms, struct session_opts *so,
		   const struct log_ctx *lc)
{
	for (int i = 0; i < AGENT_MODE__COUNT; i++) {
		const struct mode_def *d = agent_defs[i];
		struct session_opts dso = { 0 };
		char num[16];
		void *mo;
		int rc = 0;

		if (!(a->conf.modes & (1u << i)))
			continue;
		if (!d->ops->window) {
			pr_warn(lc, "--modes %s: not yet: the %s mode has no windows in this "
				"build, so it cannot be pushed; it is left out",
				agent_mode_names[i], agent_mode_names[i]);
			continue;
		}
		mo = cli_mode_opts_new(d, &dso);
		if (!mo) {
			pr_err(lc, "out of memory");
			return 1;
		}
		ms->members[ms->n++] = (struct modeset_member){ .ops = d->ops, .opts = mo };
		if (i == AGENT_MODE_CPU) {
			snprintf(num, sizeof(num), "%u", a->conf.hz);
			rc = cli_mode_option(d, mo, "frequency", num, so, lc);
		} else if (i == AGENT_MODE_MEM) {
			snprintf(num, sizeof(num), "%u", a->conf.sample_bytes);
			rc = cli_mode_option(d, mo, "sample-bytes", num, so, lc);
		}
		if (!rc && d->cli->check)
			rc = d->cli->check(mo, so, lc);
		/* not cpu's prepare: it keeps freed memory in the heap for a one-shot run, the
		 * opposite of what a daemon wants */
		if (!rc && d->prepare && i != AGENT_MODE_CPU)
			rc = d->prepare(mo, so, lc);
		if (rc)
			return rc;
	}
	if (!ms->n) {
		pr_err(lc, "--modes: no mode left to push");
		return 1;
	}
	return 0;
}

static void members_free(struct modeset_opts *ms)
{
	for (int i = 0; i < ms->n; i++)
		for (int k = 0; k < AGENT_MODE__COUNT; k++)
			if (agent_defs[k]->ops == ms->members[i].ops)
				cli_mode_opts_free(agent_defs[k], ms->members[i].opts);
	ms->n = 0;
}

int cmd_agent(int argc, char **argv, struct log_ctx *lc)
{
	/* the modes pushed: each by its mode_def, its options set by name, in one session as
	 * `ebprof profile` runs its members (core/modeset.h); the set's window has a part per
	 * mode */
	struct session_opts so = { 0 };
	struct modeset_opts ms = { 0 };
	struct agent a = { .lc = lc };
	struct mode_ops ops;
	char why[1024], list[64] = "";
	int rc;

	/* the members' usage errors point to this command's help */
	lc->cmd = "agent";
	rc = cli_parse(argc, argv, lc, &agent_mode_cli, &so, &a.cli);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (build_conf(&a.cli, &a.conf, why, sizeof(why)))	/* checked already */
		return cli_usage_err(lc, "agent", "%s", why);
	rc = members(&a, &ms, &so, lc);
	if (rc) {
		members_free(&ms);
		return rc;
	}
	modeset__ops(&ops, &ms);
	for (int i = 0; i < ms.n; i++) {
		if (ms.members[i].ops->kthreads)
			ops.kthreads = true;	/* cpu samples kernel threads named by -p */
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "," : "",
			 ms.members[i].ops->name);
	}
	gethostname(a.host, sizeof(a.host) - 1);
	a.pusher = pusher__new(&a.conf, a.host, lc);
	if (!a.pusher) {
		members_free(&ms);
		return 1;
	}
	so.window_secs = a.conf.period;
	so.on_window = on_window;
	so.on_hup = on_hup;
	so.on_second = on_second;
	so.on_end = agent_stop;
	so.ctx = &a;
	so.quiet = true;	/* a daemon: status lines, not a progress line */
	pr_info(lc, "pushing %u-second windows of %s to %s (%s)", a.conf.period, list,
		a.conf.server, a.conf.protocol == AGENT_PARCA ? "parca" : "pyroscope");
	rc = session__run(&so, &ops, &ms, lc);
	agent_stop(&a);	/* when the session did not (it failed to start) */
	members_free(&ms);
	return rc;
}
