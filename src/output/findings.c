/* Findings of a run of several modes: output/findings.h, rules in docs/FINDINGS.md. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/findings.h"
#include "output/render.h"

/* One candidate of a rule, before the rule keeps its largest FIND_MAX_PER_RULE. Its subject
 * and fact are allocated: a C++ name can be longer than any fixed buffer, and a subject never
 * loses its (file:line). */
struct cand {
	struct prof_finding f;
	char *subject, *fact;
	const char *action;
};

struct rule_out {
	struct cand c[FIND_MAX_PER_RULE];
	int n;
	int crossed;		/* candidates that crossed the threshold, kept or not */
	int err;		/* a string could not be made: -ENOMEM */
};

static void cand_clear(struct cand *c)
{
	free(c->subject);
	free(c->fact);
	memset(c, 0, sizeof(*c));
}

/* Keep the FIND_MAX_PER_RULE largest by value, largest first. */
static struct cand *rule_slot(struct rule_out *ro, double value)
{
	int i;

	ro->crossed++;	/* every caller asks only for what crossed its threshold */
	if (ro->n == FIND_MAX_PER_RULE && value <= ro->c[ro->n - 1].f.value)
		return NULL;
	if (ro->n == FIND_MAX_PER_RULE)
		cand_clear(&ro->c[ro->n - 1]);
	i = ro->n < FIND_MAX_PER_RULE ? ro->n++ : ro->n - 1;
	while (i > 0 && ro->c[i - 1].f.value < value) {
		ro->c[i] = ro->c[i - 1];
		i--;
	}
	memset(&ro->c[i], 0, sizeof(ro->c[i]));
	ro->c[i].f.value = value;
	return &ro->c[i];
}

/* A new string, or NULL with ro->err set: the rule then adds nothing and fails. */
static __attribute__((format(printf, 2, 3))) char *ro_printf(struct rule_out *ro,
							      const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	if (ro->err)
		return NULL;	/* an argument may be a string that could not be made */
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		ro->err = -ENOMEM;
		return NULL;
	}
	return s;
}

/* Add the kept candidates to set, and free them. */
static int rule_emit(struct profile *set, struct rule_out *ro)
{
	int err = ro->err;

	/* the limit of a rule is said, on its last finding */
	if (!err && ro->crossed > ro->n && ro->n) {
		struct cand *last = &ro->c[ro->n - 1];
		char *fact = ro_printf(ro, "%s (%d more crossed this threshold: see the %s tab)",
				       last->fact, ro->crossed - ro->n, last->f.mode);

		free(last->fact);
		last->fact = fact;
		err = ro->err;
	}
	for (int i = 0; i < ro->n; i++) {
		struct cand *c = &ro->c[i];

		c->f.subject = c->subject;
		c->f.fact = c->fact;
		c->f.action = c->action;
		if (!err && (!c->subject || !c->fact))
			err = -ENOMEM;
		if (!err)
			err = profile__add_finding(set, &c->f);
		cand_clear(c);
	}
	ro->n = 0;
	return err;
}

/* "name (file.c:88)", "name (file.c)" or "name": the innermost function at a location */
static char *loc_name(struct rule_out *ro, const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];
	const struct prof_function *fn;

	if (!l->nlines)
		return ro_printf(ro, "0x%" PRIx64, l->address);
	fn = &p->functions[l->lines[0].function];
	if (fn->filename && l->lines[0].line > 0)
		return ro_printf(ro, "%s (%s:%" PRId64 ")", fn->name,
				 render__basename(fn->filename), l->lines[0].line);
	if (fn->filename)
		return ro_printf(ro, "%s (%s)", fn->name, render__basename(fn->filename));
	return ro_printf(ro, "%s", fn->name);
}

static int64_t loc_function(const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	return l->nlines ? (int64_t)l->lines[0].function : -1;
}

static const char *per_second(double bytes_per_sec, char *buf, size_t len)
{
	char b[32];

	snprintf(buf, len, "%s/s", render__bytes((uint64_t)(bytes_per_sec + 0.5), b, sizeof(b)));
	return buf;
}

/* ---- cpu: where the CPU time goes ---------------------------------------------------- */

/* A sample taken while the kernel handled a uprobe (a breakpoint of this run's mem probes, or
 * another tracer's): time the probes cost the program, not the program's own work. The kernel
 * enters uprobe handling through the int3 exception. */
static bool in_probe_handling(const struct profile *p, const struct prof_sample *s)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];
		const char *name;

		if (!l->nlines)
			continue;
		name = p->functions[l->lines[0].function].name;
		if (!strcmp(name, "asm_exc_int3") || !strcmp(name, "uprobe_notify_resume"))
			return true;
	}
	return false;
}

static int cpu_rules(struct profile *set, const struct profile *p)
{
	int ts = profile__type_index(p, "samples"), tc = profile__type_index(p, "cpu");
	uint64_t *self, *best, total = 0, probes = 0;
	uint32_t *best_loc;
	struct rule_out ro = { 0 };
	int err = -ENOMEM;

	if (ts < 0 || !p->nfunctions)
		return 0;
	self = calloc(p->nfunctions, sizeof(*self) * 2);
	best = calloc(p->nfunctions, sizeof(*best));
	best_loc = calloc(p->nfunctions, sizeof(*best_loc));
	if (!self || !best || !best_loc)
		goto out;
	/* self[f]: samples with f innermost at the leaf; self[nf + f]: their CPU time */
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t f = s->nlocs ? loc_function(p, s->locs[0]) : -1;
		uint64_t v = s->values[ts] > 0 ? (uint64_t)s->values[ts] : 0;

		if (in_probe_handling(p, s)) {
			probes += v;
			continue;
		}
		total += v;
		if (f < 0)
			continue;
		self[f] += v;
		if (tc >= 0 && s->values[tc] > 0)
			self[p->nfunctions + f] += (uint64_t)s->values[tc];
		/* the function's hottest location names its line */
		if (v > best[f]) {
			best[f] = v;
			best_loc[f] = s->locs[0];
		}
	}
	if (total < FIND_CPU_MIN_SAMPLES)
		goto done;
	for (uint32_t f = 0; f < p->nfunctions; f++) {
		double share = (double)self[f] / (double)total;
		char t[40], d[32], pr[96] = "";
		struct cand *c;

		if (share < FIND_CPU_SHARE || !(c = rule_slot(&ro, share * 100)))
			continue;
		c->subject = loc_name(&ro, p, best_loc[f]);
		if (tc >= 0)
			snprintf(t, sizeof(t), ", %s", render__duration(self[p->nfunctions + f], d,
									 sizeof(d)));
		else
			t[0] = '\0';
		if (probes)
			snprintf(pr, sizeof(pr), "; %" PRIu64 " more samples were in uprobe "
				 "handling, left out", probes);
		c->fact = ro_printf(&ro, "%s is %.0f%% of the CPU samples (%" PRIu64 " of %" PRIu64
				    "%s of CPU time, in the function itself%s)", c->subject,
				    share * 100, self[f], total, t, pr);
		c->action = "look at its callers in the cpu flame graph, and at the work it does "
			    "per call";
		c->f.mode = p->mode;
		c->f.kind = "cpu_hot_function";
		c->f.threshold = "a function with at least 20% of the CPU samples in itself, out "
				 "of at least 20 samples (samples in uprobe handling left out)";
		c->f.unit = "percent";
	}
done:
	err = rule_emit(set, &ro);
out:
	free(self);
	free(best);
	free(best_loc);
	return err;
}

/* ---- mem: who allocates fast, and for how long ------------------------------------- */

struct mem_fn {
	uint64_t bytes, objects, freed, short_freed;
	uint32_t loc;		/* where it calls the allocator */
	bool seen;
};

/* The first frame from the leaf that is not an allocator's: the allocation site's function */
static int64_t site_loc(const struct profile *p, const struct prof_sample *s)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		if (l->nlines && render__is_allocator(p->functions[l->lines[0].function].name))
			continue;
		return s->locs[i];
	}
	return -1;
}

static int mem_rules(struct profile *set, const struct profile *p, int64_t duration_ns)
{
	int tb = profile__type_index(p, "alloc_space"), to = profile__type_index(p, "alloc_objects");
	struct rule_out ro = { 0 };
	struct mem_fn *fn;
	uint64_t total = 0;
	double secs = duration_ns / 1e9;
	int err;

	if (tb < 0 || to < 0 || !p->nfunctions || secs <= 0)
		return 0;
	fn = calloc(p->nfunctions, sizeof(*fn));
	if (!fn)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t loc = site_loc(p, s), f = loc >= 0 ? loc_function(p, loc) : -1;
		uint64_t b = s->values[tb] > 0 ? (uint64_t)s->values[tb] : 0;

		total += b;
		if (f < 0)
			continue;
		if (!fn[f].seen || b > 0) {
			fn[f].seen = true;
			fn[f].loc = (uint32_t)loc;
		}
		fn[f].bytes += b;
		fn[f].objects += s->values[to] > 0 ? (uint64_t)s->values[to] : 0;
		for (uint32_t k = 0; k < s->nlife; k++) {
			uint64_t lo, hi;

			fn[f].freed += s->life[k];
			/* bucket k holds lifetimes up to 2^k - 1 ns (render__bucket) */
			if (render__bucket(k, s->nlife, &lo, &hi) && hi < FIND_MEM_SHORT_NS)
				fn[f].short_freed += s->life[k];
		}
	}
	for (uint32_t f = 0; total && f < p->nfunctions; f++) {
		double rate = fn[f].bytes / secs, share = (double)fn[f].bytes / total;
		double short_share = fn[f].freed ? (double)fn[f].short_freed / fn[f].freed : 0;
		char r[32], b[32], d[32], avg[32], life[96] = "";
		struct cand *c;

		if (rate < FIND_MEM_RATE || share < FIND_MEM_SHARE || !(c = rule_slot(&ro, rate)))
			continue;
		c->subject = loc_name(&ro, p, fn[f].loc);
		if (fn[f].freed)
			snprintf(life, sizeof(life), "; %.0f%% of its freed blocks lived less than "
				 "1.05 ms", short_share * 100);
		c->fact = ro_printf(&ro, "%s allocates %s%s (%s in %s, %" PRIu64 " blocks of %s on "
				    "average, %.0f%% of all bytes allocated)%s", c->subject,
				    p->sampling ? "about " : "", per_second(rate, r, sizeof(r)),
				    render__bytes(fn[f].bytes, b, sizeof(b)),
				    render__duration((uint64_t)duration_ns, d, sizeof(d)),
				    fn[f].objects,
				    /* rounded: sampled estimates are not whole multiples */
				    render__bytes(fn[f].objects ? (fn[f].bytes + fn[f].objects / 2) /
						  fn[f].objects : 0, avg, sizeof(avg)),
				    share * 100, life);
		if (fn[f].freed && short_share >= FIND_MEM_SHORT_SHARE)
			c->action = "most of its blocks are short-lived: reuse a buffer (or keep "
				    "them on the stack) instead of allocating each time";
		else
			c->action = "look at its callers in the mem flame graph (alloc_space): fewer "
				    "or smaller allocations there";
		c->f.mode = p->mode;
		c->f.kind = "mem_alloc_rate";
		c->f.threshold = "a function allocating at least 1 MiB/s and 10% of all bytes "
				 "allocated";
		c->f.unit = "bytes_per_second";
	}
	err = rule_emit(set, &ro);
	free(fn);
	return err;
}

/* Leaks (mem --leaks): the bytes at each allocating function that no pointer reached at the
 * process's exit. */
static int leak_rules(struct profile *set, const struct profile *p)
{
	int tb = profile__type_index(p, "definite_space");
	int to = profile__type_index(p, "definite_objects");
	struct rule_out ro = { 0 };
	uint64_t *bytes, *objs;
	uint32_t *site;
	int err;

	if (tb < 0 || to < 0 || !p->nfunctions)
		return 0;
	bytes = calloc(p->nfunctions, sizeof(*bytes));
	objs = calloc(p->nfunctions, sizeof(*objs));
	site = calloc(p->nfunctions, sizeof(*site));
	if (!bytes || !objs || !site) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t loc = site_loc(p, s), f = loc >= 0 ? loc_function(p, loc) : -1;

		if (f < 0 || s->values[tb] <= 0 || s->suppressed)
			continue;
		if (!bytes[f])
			site[f] = (uint32_t)loc;
		bytes[f] += (uint64_t)s->values[tb];
		objs[f] += s->values[to] > 0 ? (uint64_t)s->values[to] : 0;
	}
	for (uint32_t f = 0; f < p->nfunctions; f++) {
		char b[32];
		struct cand *c;

		if (bytes[f] < FIND_LEAK_BYTES || !(c = rule_slot(&ro, (double)bytes[f])))
			continue;
		c->subject = loc_name(&ro, p, site[f]);
		c->fact = ro_printf(&ro, "%s allocated %s (%" PRIu64 " bytes) in %" PRIu64 " blocks "
				    "that were definitely lost: no pointer reached them when the "
				    "process exited", c->subject, render__bytes(bytes[f], b, sizeof(b)),
				    bytes[f], objs[f]);
		c->action = "free them where they stop being used: their stacks are in the mem "
			    "report's leaks";
		c->f.mode = p->mode;
		c->f.kind = "mem_definitely_lost";
		c->f.threshold = "a function whose definitely lost blocks add up to at least 1 KiB "
				 "(suppressed ones left out)";
		c->f.unit = "bytes";
	}
	err = rule_emit(set, &ro);
out:
	free(bytes);
	free(objs);
	free(site);
	return err;
}

/* ---- the summary rows of a part (profile.h: groups) --------------------------------- */

static const char *group_label(const struct prof_group *g, const char *key)
{
	for (uint32_t i = 0; i < g->nlabels; i++)
		if (!strcmp(g->labels[i].key, key))
			return g->labels[i].value;
	return NULL;
}

static bool group_stat(const struct prof_group *g, const char *name, int64_t *v)
{
	for (uint32_t i = 0; i < g->nstats; i++) {
		if (!strcmp(g->stats[i].name, name)) {
			*v = g->stats[i].value;
			return true;
		}
	}
	return false;
}

/* ---- lock: contended locks ------------------------------------------------------------ */

/* The process of a lock's "process" label, "comm[pid]"; 0: none ("-") */
static uint32_t label_pid(const char *who)
{
	const char *b = who ? strrchr(who, '[') : NULL;
	unsigned long v;
	char *end;

	if (!b || b[1] < '0' || b[1] > '9')
		return 0;
	v = strtoul(b + 1, &end, 10);
	return end[0] == ']' && !end[1] && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* A frame of the C library or the dynamic loader: the program's own function is above it. */
static bool in_libc(const struct profile *p, const struct prof_location *l)
{
	const char *base;

	if (l->mapping == PROF_NONE || l->mapping >= p->nmappings)
		return false;
	base = render__basename(p->mappings[l->mapping].file);
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libpthread.so", 13) ||
	       !strncmp(base, "ld-linux", 8);
}

static bool is_kernel_loc(const struct profile *p, const struct prof_location *l)
{
	return l->address >= 0xffff800000000000ull;
}

/* The program's function in a waiting stack: the first frame from the leaf that is user code
 * outside the C library (the leaf itself is skipped when it is a pseudo-frame naming what was
 * waited on). -1: none. */
static int64_t waiter_loc(const struct profile *p, const struct prof_sample *s, uint32_t from)
{
	int64_t last_user = -1;

	for (uint32_t i = from; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		if (is_kernel_loc(p, l) || l->mapping == PROF_NONE || !l->nlines)
			continue;
		if (!in_libc(p, l))
			return s->locs[i];
		if (last_user < 0)
			last_user = s->locs[i];
	}
	return last_user;
}

/* ---- offcpu: where threads wait -------------------------------------------------------- */

/* A wait in the kernel's futex code: a lock's, a condition variable's, a join's. */
static bool futex_wait(const struct profile *p, const struct prof_sample *s)
{
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		if (l->nlines && is_kernel_loc(p, l) &&
		    !strcmp(p->functions[l->lines[0].function].name, "do_futex"))
			return true;
	}
	return false;
}

static int offcpu_rules(struct profile *set, const struct profile *p, int64_t duration_ns,
			bool with_lock)
{
	int tn = profile__type_index(p, "offcpu"), tc = profile__type_index(p, "switches");
	struct rule_out ro = { 0 };
	uint64_t *ns, *waits, left_out = 0;
	uint32_t *site;
	int err = -ENOMEM;

	if (tn < 0 || !p->nfunctions || duration_ns <= 0)
		return 0;
	ns = calloc(p->nfunctions, sizeof(*ns));
	waits = calloc(p->nfunctions, sizeof(*waits));
	site = calloc(p->nfunctions, sizeof(*site));
	if (!ns || !waits || !site)
		goto out;
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t loc, f;
		uint64_t v = s->values[tn] > 0 ? (uint64_t)s->values[tn] : 0;

		/* the lock mode's finding covers these, with the lock named */
		if (with_lock && futex_wait(p, s)) {
			left_out += v;
			continue;
		}
		loc = waiter_loc(p, s, 0);
		f = loc >= 0 ? loc_function(p, loc) : -1;
		if (f < 0)
			continue;
		if (!ns[f])
			site[f] = (uint32_t)loc;
		ns[f] += v;
		waits[f] += tc >= 0 && s->values[tc] > 0 ? (uint64_t)s->values[tc] : 0;
	}
	for (uint32_t f = 0; f < p->nfunctions; f++) {
		double share = (double)ns[f] / (double)duration_ns;
		char t[32], d[32];
		struct cand *c;

		if (ns[f] < FIND_OFFCPU_MIN_NS || share < FIND_OFFCPU_SHARE ||
		    !(c = rule_slot(&ro, (double)ns[f])))
			continue;
		c->subject = loc_name(&ro, p, site[f]);
		c->fact = ro_printf(&ro, "%s kept its threads off the CPU for %s in %" PRIu64 " waits, "
				    "%.0f%% of the run's %s%s", c->subject,
				    render__duration(ns[f], t, sizeof(t)), waits[f], share * 100,
				    render__duration((uint64_t)duration_ns, d, sizeof(d)),
				    left_out ? "; futex waits, the lock mode's, left out" : "");
		c->action = "if the wait is not meant (a sleep, a poll, a read), see what it waits "
			    "for in the offcpu tab; ebprof offcpu --wakers shows who ends it";
		c->f.mode = p->mode;
		c->f.kind = "offcpu_blocked";
		c->f.threshold = "a function whose threads were off the CPU (sleeping, in "
				 "uninterruptible waits or preempted) for at least 10% of the run and "
				 "100 ms in all";
		c->f.unit = "nanoseconds";
	}
	err = rule_emit(set, &ro);
out:
	free(ns);
	free(waits);
	free(site);
	return err;
}

static int lock_rules(struct profile *set, const struct profile *p, int64_t duration_ns)
{
	int td = profile__type_index(p, "delay");
	struct rule_out ro = { 0 };

	for (uint32_t i = 0; td >= 0 && i < p->ngroups; i++) {
		const struct prof_group *g = &p->groups[i];
		const char *lock = group_label(g, "lock"), *cls = group_label(g, "class");
		const char *who = group_label(g, "process");
		int64_t n, total, mean, max, best = 0, site = -1;
		char a[32], b[32], m[32], d[32];
		size_t len;
		struct cand *c;

		if (!lock || !group_stat(g, "contentions", &n) || !group_stat(g, "delay_ns", &total) ||
		    !group_stat(g, "delay_avg_ns", &mean) || !group_stat(g, "delay_max_ns", &max))
			continue;
		if (n < FIND_LOCK_MIN_CONTENTIONS || duration_ns <= 0 ||
		    (double)total < FIND_LOCK_SHARE * (double)duration_ns ||
		    !(c = rule_slot(&ro, (double)total)))
			continue;
		/* the function that waited longest on it: its stacks' leaf names the lock */
		len = strlen(lock);
		for (uint32_t k = 0; k < p->nsamples; k++) {
			const struct prof_sample *s = &p->samples[k];
			const struct prof_location *l = s->nlocs ? &p->locations[s->locs[0]] : NULL;
			const char *leaf;
			int64_t w;

			if (!l || !l->nlines || s->values[td] <= best)
				continue;
			leaf = p->functions[l->lines[0].function].name;
			if (strncmp(leaf, lock, len) || (leaf[len] && leaf[len] != ' '))
				continue;
			w = waiter_loc(p, s, 1);
			if (w >= 0) {
				best = s->values[td];
				site = w;
			}
		}
		c->subject = site >= 0 ? loc_name(&ro, p, (uint32_t)site) : ro_printf(&ro, "%s", lock);
		c->fact = ro_printf(&ro, "%s waited %s on %s (%s%s%s) over %" PRId64 " contentions "
				    "(mean %s, max %s), in a run of %s", site >= 0 ? c->subject :
				    "threads", render__duration((uint64_t)total, a, sizeof(a)), lock,
				    cls ? cls : "lock", who && strcmp(who, "-") ? ", " : "",
				    who && strcmp(who, "-") ? who : "", n,
				    render__duration((uint64_t)mean, b, sizeof(b)),
				    render__duration((uint64_t)max, m, sizeof(m)),
				    render__duration((uint64_t)duration_ns, d, sizeof(d)));
		c->action = "hold it for less time, or split what it guards; every waiter's stack "
			    "is in the lock tab";
		c->f.mode = p->mode;
		c->f.kind = "lock_contended";
		c->f.threshold = "a lock waited on at least 10 times, for at least 10% of the run's "
				 "duration in all";
		c->f.unit = "nanoseconds";
		c->f.pid = label_pid(who);
	}
	return rule_emit(set, &ro);
}

/* ---- io: slow disks ------------------------------------------------------------------ */

static int io_rules(struct profile *set, const struct profile *p)
{
	struct rule_out ro = { 0 };

	for (uint32_t i = 0; i < p->ngroups; i++) {
		const struct prof_group *g = &p->groups[i];
		const char *dev = group_label(g, "device"), *op = group_label(g, "op");
		int64_t n, p50, p99, max;
		char a[32], b[32], m[32];
		struct cand *c;

		if (!dev || !op || !group_stat(g, "requests", &n) ||
		    !group_stat(g, "latency_p99_ns", &p99) || !group_stat(g, "latency_p50_ns", &p50) ||
		    !group_stat(g, "latency_max_ns", &max))
			continue;
		if (n < FIND_IO_MIN_REQUESTS || p99 < (int64_t)FIND_IO_P99_NS ||
		    !(c = rule_slot(&ro, (double)p99)))
			continue;
		c->subject = ro_printf(&ro, "%s %s", dev, op);
		c->fact = ro_printf(&ro, "%s %ss: p99 %s over %" PRId64 " requests (p50 %s, max %s)",
				    dev, op, render__duration((uint64_t)p99, a, sizeof(a)), n,
				    render__duration((uint64_t)p50, b, sizeof(b)),
				    render__duration((uint64_t)max, m, sizeof(m)));
		c->action = "see which processes and stacks issue them (io tab) and whether the disk "
			    "queues them (its in-flight count, iostat -x)";
		c->f.mode = p->mode;
		c->f.kind = "io_slow_disk";
		c->f.threshold = "a disk and operation whose p99 latency is at least 10 ms over at "
				 "least 20 requests";
		c->f.unit = "nanoseconds";
	}
	return rule_emit(set, &ro);
}

static bool has_part(const struct profile *set, const char *mode)
{
	for (uint32_t i = 0; i < set->nparts; i++)
		if (!strcmp(set->parts[i]->mode, mode))
			return true;
	return false;
}

int findings__compute(struct profile *set, int64_t duration_ns)
{
	/* the order of the list: CPU, then waiting, then memory, then I/O */
	static const char *const order[] = { "cpu", "offcpu", "lock", "mem", "io" };
	int err = 0;

	set->nfindings = 0;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]) && !err; o++) {
		for (uint32_t i = 0; i < set->nparts && !err; i++) {
			const struct profile *p = set->parts[i];

			if (strcmp(p->mode, order[o]))
				continue;
			if (!strcmp(p->mode, "cpu"))
				err = cpu_rules(set, p);
			else if (!strcmp(p->mode, "mem"))
				err = leak_rules(set, p) ?: mem_rules(set, p, duration_ns);
			else if (!strcmp(p->mode, "io"))
				err = io_rules(set, p);
			else if (!strcmp(p->mode, "lock"))
				err = lock_rules(set, p, duration_ns);
			else if (!strcmp(p->mode, "offcpu"))
				err = offcpu_rules(set, p, duration_ns, has_part(set, "lock"));
		}
	}
	return err;
}
