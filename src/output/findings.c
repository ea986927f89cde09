/* Findings of a run of several modes: output/findings.h, rules in docs/FINDINGS.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* A function's name as the reports show it (profile__frame_name's choice) */
static const char *fn_name(const struct prof_function *fn)
{
	const char *name = fn->name && *fn->name ? fn->name : fn->system_name;

	return name && *name ? name : "??";
}

/* The name of a frame without a symbol, as the reports show it: "module+0xoffset", or the
 * address outside any mapping. Allocated; NULL: out of memory. */
static char *unsym_name(const struct profile *p, const struct prof_location *l)
{
	const char *file = l->mapping != PROF_NONE && l->mapping < p->nmappings ?
			   p->mappings[l->mapping].file : NULL;
	size_t len = (file ? strlen(file) : 0) + 32;
	char *s = malloc(len);

	return s ? (char *)profile__frame_name(p, l, 0, s, len) : NULL;
}

/* "name (file.c:88)", "name (file.c)" or "name": the innermost function at a location; a frame
 * without a symbol: its name in the reports, "module+0xoffset". */
static char *loc_name(struct rule_out *ro, const struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];
	const struct prof_function *fn;
	char *s;

	if (!l->nlines) {
		if (!(s = unsym_name(p, l)))
			ro->err = -ENOMEM;
		return s;
	}
	fn = &p->functions[l->lines[0].function];
	if (fn->filename && l->lines[0].line > 0)
		return ro_printf(ro, "%s (%s:%" PRId64 ")", fn_name(fn),
				 render__basename(fn->filename), l->lines[0].line);
	if (fn->filename)
		return ro_printf(ro, "%s (%s)", fn_name(fn), render__basename(fn->filename));
	return ro_printf(ro, "%s", fn_name(fn));
}

/* ---- subjects: what a finding is about ------------------------------------------------ */

/* A rule sums its samples' values per subject: a function (the innermost at a location), or a
 * frame without a symbol, which is a subject of its own named as the reports name it
 * ("module+0xoffset"), never folded into a caller. Each location is at one place: its
 * innermost function and line, or its name when it has no symbol; each place belongs to one
 * subject. A finding names its subject by the place with the most of the rule's value. */
struct subjects {
	uint32_t *place;	/* per location: its place */
	uint32_t *subject;	/* per place: its subject (a function's index is its subject) */
	uint32_t *loc;		/* per place: a location of it, to name it by */
	uint32_t nplaces, n;	/* n: subjects */
};

struct place_key {
	uint32_t loc, fn;	/* fn: the innermost function, PROF_NONE: no symbol */
	int64_t line;
	char *name;		/* no symbol: its name */
};

static int place_cmp(const void *a, const void *b)
{
	const struct place_key *x = a, *y = b;
	int c;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	if (x->fn == PROF_NONE && (c = strcmp(x->name, y->name)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static void subjects__free(struct subjects *sj)
{
	free(sj->place);
	free(sj->subject);
	free(sj->loc);
	memset(sj, 0, sizeof(*sj));
}

static int subjects__init(struct subjects *sj, const struct profile *p)
{
	uint32_t n = p->nlocations, nunsym = 0;
	struct place_key *k = calloc(n ? n : 1, sizeof(*k));
	int err = -ENOMEM;

	memset(sj, 0, sizeof(*sj));
	sj->place = calloc(n ? n : 1, sizeof(*sj->place));
	sj->subject = calloc(n ? n : 1, sizeof(*sj->subject));
	sj->loc = calloc(n ? n : 1, sizeof(*sj->loc));
	if (!k || !sj->place || !sj->subject || !sj->loc)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_location *l = &p->locations[i];

		k[i].loc = i;
		if (l->nlines) {
			k[i].fn = l->lines[0].function;
			k[i].line = l->lines[0].line;
		} else {
			k[i].fn = PROF_NONE;
			if (!(k[i].name = unsym_name(p, l)))
				goto out;
		}
	}
	qsort(k, n, sizeof(*k), place_cmp);
	for (uint32_t i = 0; i < n; i++) {
		bool same = i && k[i].fn == k[i - 1].fn &&
			    (k[i].fn == PROF_NONE ? !strcmp(k[i].name, k[i - 1].name) :
						    k[i].line == k[i - 1].line);

		if (!same) {
			sj->loc[sj->nplaces] = k[i].loc;
			sj->subject[sj->nplaces] = k[i].fn != PROF_NONE ? k[i].fn :
						   p->nfunctions + nunsym++;
			sj->nplaces++;
		}
		sj->place[k[i].loc] = sj->nplaces - 1;
	}
	sj->n = p->nfunctions + nunsym;
	err = 0;
out:
	for (uint32_t i = 0; k && i < n; i++)
		free(k[i].name);
	free(k);
	if (err)
		subjects__free(sj);
	return err;
}

static bool subject_is_unsym(const struct profile *p, uint32_t subject)
{
	return subject >= p->nfunctions;
}

/* A function no symbol names, "MODULE!sub_HEX": named after the start of the call frame
 * information's range (FDE) holding its code, all of its addresses one subject */
static bool subject_is_cfi(const struct profile *p, uint32_t subject)
{
	return subject < p->nfunctions && p->functions[subject].cfi_named;
}

/* What a fact says of such a subject, after its numbers */
#define CFI_SAID "; no symbol covers that function: it is named by its call frame range"

#define PID_UNSEEN UINT32_MAX		/* a tally's pid before its first sample */
#define PID_MANY (UINT32_MAX - 1)	/* ... once two processes added to it */

/* What a rule sums per subject: its value (what it ranks by, and picks the subject's place
 * by), up to three numbers of its own, and the process its samples came from. */
struct tally {
	uint64_t value, more[3];
	uint32_t place;		/* the place with the most value */
	uint32_t pid;		/* the one process with value here, PID_UNSEEN or PID_MANY */
};

struct tallies {
	const struct subjects *sj;
	struct tally *t;	/* per subject */
	uint64_t *at;		/* per place: its value */
};

static int tallies__init(struct tallies *ts, const struct subjects *sj)
{
	ts->sj = sj;
	ts->t = calloc(sj->n ? sj->n : 1, sizeof(*ts->t));
	ts->at = calloc(sj->nplaces ? sj->nplaces : 1, sizeof(*ts->at));
	if (!ts->t || !ts->at) {
		free(ts->t);
		free(ts->at);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < sj->n; s++) {
		ts->t[s].place = PROF_NONE;
		ts->t[s].pid = PID_UNSEEN;
	}
	return 0;
}

static void tallies__free(struct tallies *ts)
{
	free(ts->t);
	free(ts->at);
}

/* Add value v of a sample of process pid at location loc; returns its subject's tally, for the
 * rule's own numbers. */
static struct tally *tally_add(struct tallies *ts, uint32_t loc, uint64_t v, uint32_t pid)
{
	uint32_t pl = ts->sj->place[loc];
	struct tally *t = &ts->t[ts->sj->subject[pl]];

	ts->at[pl] += v;
	if (v)
		t->pid = t->pid == PID_UNSEEN || t->pid == pid ? pid : PID_MANY;
	return t;
}

/* Each subject's value, and its place with the most of it (the first, by line, on a tie) */
static void tallies__sum(struct tallies *ts)
{
	for (uint32_t pl = 0; pl < ts->sj->nplaces; pl++) {
		struct tally *t = &ts->t[ts->sj->subject[pl]];

		t->value += ts->at[pl];
		if (t->place == PROF_NONE || ts->at[pl] > ts->at[t->place])
			t->place = pl;
	}
}

/* The finding's pid: the one process whose samples make it, 0: several (or none) */
static uint32_t tally_pid(const struct tally *t)
{
	return t->pid == PID_UNSEEN || t->pid == PID_MANY ? 0 : t->pid;
}

/* The subject's name: its place with the most value */
static char *tally_name(struct rule_out *ro, const struct profile *p, const struct tallies *ts,
			const struct tally *t)
{
	return loc_name(ro, p, ts->sj->loc[t->place]);
}

static const char *per_second(double bytes_per_sec, char *buf, size_t len)
{
	char b[32];

	snprintf(buf, len, "%s/s", render__bytes((uint64_t)(bytes_per_sec + 0.5), b, sizeof(b)));
	return buf;
}

/* ---- cpu: where the CPU time goes ---------------------------------------------------- */

/* What a CPU sample cost the program on behalf of tracing, not its own work: the time the
 * kernel spent handling a uprobe (a breakpoint of this run's mem probes, or another tracer's;
 * the kernel enters it through the int3 exception), or running a BPF program in the program's
 * context (this run's other modes' tracepoint programs, offcpu's sched_switch, lock's futex
 * calls, or another tool's: each reading the clock or a map; under load one fixture's hottest
 * "function" was pvclock_clocksource_read_nowd, 26% of its samples, read by such programs).
 * A program's frames are in "[bpf]" (the program and its trampoline); bpf_trace_run* is the
 * kernel's call into a tracepoint's programs. A uprobe's own BPF program counts as the uprobe's. */
enum own_cost { OWN_NONE, OWN_UPROBE, OWN_BPF };

static enum own_cost own_cost(const struct profile *p, const struct prof_sample *s)
{
	enum own_cost c = OWN_NONE;

	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];
		const char *name = l->nlines ? p->functions[l->lines[0].function].name : NULL;

		if (name && (!strcmp(name, "asm_exc_int3") || !strcmp(name, "uprobe_notify_resume")))
			return OWN_UPROBE;
		if ((l->mapping != PROF_NONE && !strcmp(p->mappings[l->mapping].file, "[bpf]")) ||
		    (name && !strncmp(name, "bpf_trace_run", 13)))
			c = OWN_BPF;
	}
	return c;
}

/* "; 50 more samples were in uprobe handling, left out", or in BPF programs, or both */
static void own_cost_said(char *buf, size_t len, uint64_t uprobes, uint64_t bpf)
{
	uint64_t n = uprobes + bpf;
	const char *s = n == 1 ? " was" : "s were";

	if (!n)
		buf[0] = '\0';
	else if (!bpf)
		snprintf(buf, len, "; %" PRIu64 " more sample%s in uprobe handling, left out", n, s);
	else if (!uprobes)
		snprintf(buf, len, "; %" PRIu64 " more sample%s in BPF programs, left out", n, s);
	else
		snprintf(buf, len, "; %" PRIu64 " more samples were in uprobe handling (%" PRIu64
			 ") or BPF programs (%" PRIu64 "), left out", n, uprobes, bpf);
}

static int cpu_rules(struct profile *set, const struct profile *p, const struct subjects *sj)
{
	int ts = profile__type_index(p, "samples"), tc = profile__type_index(p, "cpu");
	uint64_t total = 0, uprobes = 0, bpf = 0;
	struct rule_out ro = { 0 };
	struct tallies ta;
	int err;

	if (ts < 0 || !sj->n)
		return 0;
	if (tallies__init(&ta, sj))
		return -ENOMEM;
	/* a subject's value: its samples at the leaf; more[0]: their CPU time */
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t v = s->values[ts] > 0 ? (uint64_t)s->values[ts] : 0;
		struct tally *t;

		switch (own_cost(p, s)) {
		case OWN_UPROBE:
			uprobes += v;
			continue;
		case OWN_BPF:
			bpf += v;
			continue;
		case OWN_NONE:
			break;
		}
		total += v;
		if (!s->nlocs)
			continue;
		t = tally_add(&ta, s->locs[0], v, s->pid);
		if (tc >= 0 && s->values[tc] > 0)
			t->more[0] += (uint64_t)s->values[tc];
	}
	tallies__sum(&ta);
	for (uint32_t f = 0; total >= FIND_CPU_MIN_SAMPLES && f < sj->n; f++) {
		const struct tally *t = &ta.t[f];
		double share = (double)t->value / (double)total;
		char tm[40], d[32], pr[160];
		struct cand *c;

		if (share < FIND_CPU_SHARE || !(c = rule_slot(&ro, share * 100)))
			continue;
		c->subject = tally_name(&ro, p, &ta, t);
		if (tc >= 0)
			snprintf(tm, sizeof(tm), ", %s", render__duration(t->more[0], d, sizeof(d)));
		else
			tm[0] = '\0';
		own_cost_said(pr, sizeof(pr), uprobes, bpf);
		c->fact = ro_printf(&ro, "%s is %.0f%% of the CPU samples (%" PRIu64 " of %" PRIu64
				    "%s of CPU time, %s%s)", c->subject, share * 100, t->value,
				    total, tm, subject_is_unsym(p, f) ? "at that address, which no "
				    "symbol covers" : subject_is_cfi(p, f) ? "in the function itself, "
				    "which no symbol covers: it is named by its call frame range" :
				    "in the function itself", pr);
		c->action = "look at its callers in the cpu flame graph, and at the work it does "
			    "per call";
		c->f.mode = p->mode;
		c->f.kind = "cpu_hot_function";
		c->f.threshold = "a function with at least 20% of the CPU samples in itself, out "
				 "of at least 20 samples (samples in uprobe handling or in BPF "
				 "programs left out)";
		c->f.unit = "percent";
		c->f.pid = tally_pid(t);
	}
	err = rule_emit(set, &ro);
	tallies__free(&ta);
	return err;
}

/* ---- mem: who allocates fast, and for how long ------------------------------------- */

/* The first frame from the leaf that is not an allocator's: the allocation site */
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

static int mem_rules(struct profile *set, const struct profile *p, const struct subjects *sj,
		     int64_t duration_ns)
{
	int tb = profile__type_index(p, "alloc_space"), to = profile__type_index(p, "alloc_objects");
	struct rule_out ro = { 0 };
	struct tallies ta;
	uint64_t total = 0;
	double secs = duration_ns / 1e9;
	int err;

	if (tb < 0 || to < 0 || !sj->n || secs <= 0)
		return 0;
	if (tallies__init(&ta, sj))
		return -ENOMEM;
	/* a subject's value: the bytes it allocated; more: its blocks, its freed blocks, and
	 * those of them freed within FIND_MEM_SHORT_NS */
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t loc = site_loc(p, s);
		uint64_t b = s->values[tb] > 0 ? (uint64_t)s->values[tb] : 0;
		struct tally *t;

		total += b;
		if (loc < 0)
			continue;
		t = tally_add(&ta, (uint32_t)loc, b, s->pid);
		t->more[0] += s->values[to] > 0 ? (uint64_t)s->values[to] : 0;
		for (uint32_t k = 0; k < s->nlife; k++) {
			uint64_t lo, hi;

			t->more[1] += s->life[k];
			/* bucket k holds lifetimes up to 2^k - 1 ns (render__bucket) */
			if (render__bucket(k, s->nlife, &lo, &hi) && hi < FIND_MEM_SHORT_NS)
				t->more[2] += s->life[k];
		}
	}
	tallies__sum(&ta);
	for (uint32_t f = 0; total && f < sj->n; f++) {
		const struct tally *t = &ta.t[f];
		uint64_t bytes = t->value, objects = t->more[0], freed = t->more[1];
		double rate = bytes / secs, share = (double)bytes / total;
		double short_share = freed ? (double)t->more[2] / freed : 0;
		char r[32], b[32], d[32], avg[32], life[96] = "";
		struct cand *c;

		if (rate < FIND_MEM_RATE || share < FIND_MEM_SHARE || !(c = rule_slot(&ro, rate)))
			continue;
		c->subject = tally_name(&ro, p, &ta, t);
		if (freed)
			snprintf(life, sizeof(life), "; %.0f%% of its freed blocks lived less than "
				 "1.05 ms", short_share * 100);
		/* the average block rounded to the nearest byte: sampled estimates are not
		 * whole multiples */
		c->fact = ro_printf(&ro, "%s allocates %s%s (%s in %s, %" PRIu64 " block%s of %s%s, "
				    "%.0f%% of all bytes allocated)%s%s", c->subject,
				    p->sampling ? "about " : "", per_second(rate, r, sizeof(r)),
				    render__bytes(bytes, b, sizeof(b)),
				    render__duration((uint64_t)duration_ns, d, sizeof(d)), objects,
				    objects == 1 ? "" : "s",
				    render__bytes(objects ? (bytes + objects / 2) / objects : 0, avg,
						  sizeof(avg)), objects == 1 ? "" : " on average",
				    share * 100, life, subject_is_cfi(p, f) ? CFI_SAID : "");
		if (freed && short_share >= FIND_MEM_SHORT_SHARE)
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
		c->f.pid = tally_pid(t);
	}
	err = rule_emit(set, &ro);
	tallies__free(&ta);
	return err;
}

/* Leaks (mem --leaks): the bytes at each allocating function that no pointer reached at the
 * process's exit. */
static int leak_rules(struct profile *set, const struct profile *p, const struct subjects *sj)
{
	int tb = profile__type_index(p, "definite_space");
	int to = profile__type_index(p, "definite_objects");
	struct rule_out ro = { 0 };
	struct tallies ta;
	int err;

	if (tb < 0 || to < 0 || !sj->n)
		return 0;
	if (tallies__init(&ta, sj))
		return -ENOMEM;
	/* a subject's value: its bytes definitely lost; more[0]: their blocks */
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t loc = site_loc(p, s);
		struct tally *t;

		if (loc < 0 || s->values[tb] <= 0 || s->suppressed)
			continue;
		t = tally_add(&ta, (uint32_t)loc, (uint64_t)s->values[tb], s->pid);
		t->more[0] += s->values[to] > 0 ? (uint64_t)s->values[to] : 0;
	}
	tallies__sum(&ta);
	for (uint32_t f = 0; f < sj->n; f++) {
		const struct tally *t = &ta.t[f];
		char b[32];
		struct cand *c;

		if (t->value < FIND_LEAK_BYTES || !(c = rule_slot(&ro, (double)t->value)))
			continue;
		c->subject = tally_name(&ro, p, &ta, t);
		c->fact = ro_printf(&ro, "%s allocated %s (%" PRIu64 " bytes) in %" PRIu64 " blocks "
				    "that were definitely lost: no pointer reached them when the "
				    "process exited%s", c->subject, render__bytes(t->value, b, sizeof(b)),
				    t->value, t->more[0], subject_is_cfi(p, f) ? CFI_SAID : "");
		c->action = "free them where they stop being used: their stacks are in the mem "
			    "report's leaks";
		c->f.mode = p->mode;
		c->f.kind = "mem_definitely_lost";
		c->f.threshold = "a function whose definitely lost blocks add up to at least 1 KiB "
				 "(suppressed ones left out)";
		c->f.unit = "bytes";
		c->f.pid = tally_pid(t);
	}
	err = rule_emit(set, &ro);
	tallies__free(&ta);
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

/* A frame of the C library, the dynamic loader or the vDSO (the C library's clock_gettime
 * enters the kernel from there: a thread preempted at that syscall's exit was in its caller's
 * loop): the program's own function is above it. */
static bool in_libc(const struct profile *p, const struct prof_location *l)
{
	const char *base;

	if (l->mapping == PROF_NONE || l->mapping >= p->nmappings)
		return false;
	base = render__basename(p->mappings[l->mapping].file);
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libpthread.so", 13) ||
	       !strncmp(base, "ld-linux", 8) || !strcmp(base, "[vdso]");
}

static bool is_kernel_loc(const struct profile *p, const struct prof_location *l)
{
	return l->address >= 0xffff800000000000ull;
}

/* The program's frame in a waiting stack: the first frame from the leaf that is user code
 * outside the C library, with a symbol or not (the leaf itself is skipped when it is a
 * pseudo-frame naming what was waited on). -1: none. */
static int64_t waiter_loc(const struct profile *p, const struct prof_sample *s, uint32_t from)
{
	int64_t last_user = -1;

	for (uint32_t i = from; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		/* a frame without a symbol is the program's too: skipping it would name a
		 * distant caller */
		if (is_kernel_loc(p, l) || l->mapping == PROF_NONE)
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

/* ---- lock: which locks the lock rule names (lock_rules, and what offcpu_rules leaves out) */

/* A lock's (group's) numbers, and whether they cross the lock rule's threshold */
static bool lock_crosses(const struct prof_group *g, int64_t duration_ns, int64_t *n,
			 int64_t *total, int64_t *mean, int64_t *max)
{
	return group_label(g, "lock") && group_stat(g, "contentions", n) &&
	       group_stat(g, "delay_ns", total) && group_stat(g, "delay_avg_ns", mean) &&
	       group_stat(g, "delay_max_ns", max) && *n >= FIND_LOCK_MIN_CONTENTIONS &&
	       duration_ns > 0 && (double)*total >= FIND_LOCK_SHARE * (double)duration_ns;
}

/* A stack of the lock part waited on the lock named lock: its leaf names it */
static bool lock_stack_of(const struct profile *p, const struct prof_sample *s, const char *lock)
{
	const struct prof_location *l = s->nlocs ? &p->locations[s->locs[0]] : NULL;
	size_t len = strlen(lock);
	const char *leaf;

	if (!l || !l->nlines)
		return false;
	leaf = p->functions[l->lines[0].function].name;
	return leaf && !strncmp(leaf, lock, len) && (!leaf[len] || leaf[len] == ' ');
}

/* A waiting function as one key across the parts of a run (each part has tables of its own,
 * and its own line: a lock's wait and a sleep of one function are two lines): its name and
 * file, or a frame without a symbol's name; "" when the stack has no frame of the program's
 * (a wait begun before tracing started: its user stack not seen). NULL: out of memory. */
static char *waiter_key(const struct profile *p, int64_t loc)
{
	const struct prof_location *l = loc >= 0 ? &p->locations[loc] : NULL;
	const struct prof_function *fn;
	char *s;

	if (!l)
		return strdup("");
	if (!l->nlines)
		return unsym_name(p, l);
	fn = &p->functions[l->lines[0].function];
	return asprintf(&s, "%s\t%s", fn_name(fn), fn->filename ? fn->filename : "") < 0 ?
	       NULL : s;
}

/* The waiters the lock rule's findings cover: per process, the functions that waited on a lock
 * that crossed its threshold. A futex wait of theirs is the lock rule's; any other (a lock
 * waited on fewer times, however long: a deadlock's waits, one long hold, a join) is not. */
struct lock_waiters {
	struct lock_waiter {
		uint32_t pid;
		char *key;
	} *w;
	uint32_t n, cap;
};

static void lock_waiters__free(struct lock_waiters *lw)
{
	for (uint32_t i = 0; i < lw->n; i++)
		free(lw->w[i].key);
	free(lw->w);
	memset(lw, 0, sizeof(*lw));
}

static bool lock_waiters__has(const struct lock_waiters *lw, uint32_t pid, const char *key)
{
	for (uint32_t i = 0; i < lw->n; i++)
		if (lw->w[i].pid == pid && !strcmp(lw->w[i].key, key))
			return true;
	return false;
}

static int lock_waiters__init(struct lock_waiters *lw, const struct profile *lock,
			      int64_t duration_ns)
{
	memset(lw, 0, sizeof(*lw));
	for (uint32_t i = 0; lock && i < lock->ngroups; i++) {
		const struct prof_group *g = &lock->groups[i];
		const char *name = group_label(g, "lock");
		uint32_t pid = label_pid(group_label(g, "process"));
		int64_t n, total, mean, max;

		if (!lock_crosses(g, duration_ns, &n, &total, &mean, &max))
			continue;
		for (uint32_t k = 0; k < lock->nsamples; k++) {
			const struct prof_sample *s = &lock->samples[k];
			char *key;

			if ((pid && s->pid != pid) || !lock_stack_of(lock, s, name))
				continue;
			if (!(key = waiter_key(lock, waiter_loc(lock, s, 1))))
				goto nomem;
			if (lock_waiters__has(lw, s->pid, key)) {
				free(key);
				continue;
			}
			if (lw->n == lw->cap) {
				uint32_t cap = lw->cap ? 2 * lw->cap : 16;
				struct lock_waiter *w = realloc(lw->w, cap * sizeof(*w));

				if (!w) {
					free(key);
					goto nomem;
				}
				lw->w = w;
				lw->cap = cap;
			}
			lw->w[lw->n].pid = s->pid;
			lw->w[lw->n++].key = key;
		}
	}
	return 0;
nomem:
	lock_waiters__free(lw);
	return -ENOMEM;
}

/* A wait already going on when tracing started (-p, -a): the kernel stack where it waits and
 * a "[user stack not seen]" frame, no frame of the program's (another task's user stack cannot
 * be read). Its location to name it by: the kernel function it waits in, the first frame from
 * the leaf outside the scheduler (futex_do_wait, hrtimer_nanosleep). -1: not such a wait. */
static int64_t unseen_wait_loc(const struct profile *p, const struct prof_sample *s)
{
	int64_t kern = -1;

	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];
		const char *name = l->nlines ? p->functions[l->lines[0].function].name : NULL;

		if (is_kernel_loc(p, l)) {
			if (kern < 0 && name && strncmp(name, "__schedule", 10) &&
			    strncmp(name, "schedule", 8))
				kern = s->locs[i];
		} else if (l->mapping == PROF_NONE && name &&
			   !strcmp(name, "[user stack not seen]")) {
			return kern;
		}
	}
	return -1;
}

/* A process's waits begun before tracing started, which no function of its can be named for:
 * they are the process's (summed per kernel function, they would add up unrelated processes'
 * waits under -a) */
struct unseen {
	uint32_t pid;
	uint64_t value, waits, futex;
	int64_t loc;		/* where in the kernel the longest of them waited */
	uint64_t loc_value;
};

static struct unseen *unseen_add(struct unseen **u, uint32_t *n, uint32_t pid)
{
	struct unseen *w;

	for (uint32_t i = 0; i < *n; i++)
		if ((*u)[i].pid == pid)
			return &(*u)[i];
	if (!(w = realloc(*u, (*n + 1) * sizeof(**u))))
		return NULL;
	*u = w;
	w = &w[(*n)++];
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->loc = -1;
	return w;
}

/* A wait for a child process: in wait4/waitid (do_wait), or a vfork's parent until its child
 * execs or exits (kernel_clone's wait for the vfork's completion). A shell, make or a
 * supervisor is blocked so for most of a run, and the time is its children's work, in their
 * own processes: not the waiting function's finding. */
static bool child_wait(const struct profile *p, const struct prof_sample *s)
{
	bool completion = false;

	/* from the leaf, each frame and the functions inlined into it, innermost first */
	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		if (!is_kernel_loc(p, l))
			continue;
		for (uint32_t j = 0; j < l->nlines; j++) {
			const char *name = p->functions[l->lines[j].function].name;

			if (!name)
				continue;
			if (!strcmp(name, "do_wait") || !strcmp(name, "wait_for_vfork_done") ||
			    (completion && !strcmp(name, "kernel_clone")))
				return true;
			completion = !strncmp(name, "wait_for_completion", 19);
		}
	}
	return false;
}

static int offcpu_rules(struct profile *set, const struct profile *p, const struct subjects *sj,
			int64_t duration_ns, const struct profile *lock, bool all)
{
	int tn = profile__type_index(p, "offcpu"), tc = profile__type_index(p, "switches");
	int tr = profile__type_index(p, "runnable");
	struct rule_out ro = { 0 };
	uint64_t left_out = 0, children = 0;
	struct unseen *unseen = NULL;
	uint32_t nunseen = 0;
	struct lock_waiters lw;
	struct tallies ta;
	int err;

	if (tn < 0 || !sj->n || duration_ns <= 0)
		return 0;
	if (lock_waiters__init(&lw, lock, duration_ns))
		return -ENOMEM;
	if (tallies__init(&ta, sj)) {
		lock_waiters__free(&lw);
		return -ENOMEM;
	}
	/* a subject's value: its threads' time blocked, off the CPU and not runnable (the time
	 * waiting for a CPU, after a wakeup or a preemption, is the machine's load, not the
	 * function's wait: a hot loop preempted on a busy machine was this rule's biggest
	 * "wait"); more[0]: their waits; more[1]: the part of the value in futex waits that the
	 * lock rule does not name (with the lock mode) */
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t v = s->values[tn] > 0 ? (uint64_t)s->values[tn] : 0;
		uint64_t r = tr >= 0 && s->values[tr] > 0 ? (uint64_t)s->values[tr] : 0;
		bool futex = lock && futex_wait(p, s);
		struct tally *t;
		int64_t loc, un;

		v = r < v ? v - r : 0;
		if (!v)
			continue;

		loc = waiter_loc(p, s, 0);
		/* the lock mode's finding covers the waits of a function that waited on a lock the
		 * lock rule names, with the lock named; the others, fewer than it counts as
		 * contention however long (a deadlock's), are this rule's */
		if (futex) {
			char *key = waiter_key(p, loc);
			bool covered = key && lock_waiters__has(&lw, s->pid, key);

			free(key);
			if (!key) {
				err = -ENOMEM;
				goto out;
			}
			if (covered) {
				left_out += v;
				continue;
			}
		}
		if (child_wait(p, s)) {
			children += v;
			continue;
		}
		/* a wait begun before tracing started, without a frame of the program's: its
		 * process's (before, in no finding: a process attached to while deadlocked or
		 * asleep had none); under -a, every daemon asleep since before the start would be
		 * one: left out there */
		if (loc < 0 && !all && (un = unseen_wait_loc(p, s)) >= 0) {
			struct unseen *w = unseen_add(&unseen, &nunseen, s->pid);

			if (!w) {
				err = -ENOMEM;
				goto out;
			}
			w->value += v;
			w->waits += tc >= 0 && s->values[tc] > 0 ? (uint64_t)s->values[tc] : 0;
			w->futex += futex ? v : 0;
			if (w->loc < 0 || v > w->loc_value) {
				w->loc = un;
				w->loc_value = v;
			}
			continue;
		}
		if (loc < 0)
			continue;
		t = tally_add(&ta, (uint32_t)loc, v, s->pid);
		t->more[0] += tc >= 0 && s->values[tc] > 0 ? (uint64_t)s->values[tc] : 0;
		t->more[1] += futex ? v : 0;
	}
	tallies__sum(&ta);
	for (uint32_t f = 0; f < sj->n; f++) {
		const struct tally *t = &ta.t[f];
		double share = (double)t->value / (double)duration_ns;
		char tm[32], d[32], fx[32], futex[160] = "";
		struct cand *c;

		if (t->value < FIND_OFFCPU_MIN_NS || share < FIND_OFFCPU_SHARE ||
		    !(c = rule_slot(&ro, (double)t->value)))
			continue;
		if (t->more[1])
			snprintf(futex, sizeof(futex), ", %s of it in futex waits on locks the lock "
				 "rule does not name (waited on fewer times or less long: see the "
				 "lock tab)", render__duration(t->more[1], fx, sizeof(fx)));
		c->subject = tally_name(&ro, p, &ta, t);
		c->fact = ro_printf(&ro, "%s kept its threads blocked for %s in %" PRIu64 " wait%s, "
				    "%.0f%% of the run's %s%s%s%s%s", c->subject,
				    render__duration(t->value, tm, sizeof(tm)), t->more[0],
				    t->more[0] == 1 ? "" : "s",
				    share * 100, render__duration((uint64_t)duration_ns, d, sizeof(d)),
				    futex,
				    /* what the subject is, then what the rule left out */
				    subject_is_cfi(p, f) ? CFI_SAID : "",
				    left_out ? "; futex waits on locks a lock finding names left out" :
				    "",
				    children ? "; waits for child processes left out" : "");
		c->action = "if the wait is not meant (a sleep, a poll, a read), see what it waits "
			    "for in the offcpu tab; ebprof offcpu --wakers shows who ends it";
		c->f.mode = p->mode;
		c->f.kind = "offcpu_blocked";
		c->f.threshold = "a function whose threads were blocked off the CPU (sleeping or in "
				 "uninterruptible waits; the time runnable, waiting for a CPU, waits "
				 "for a child process and futex waits on locks a lock finding names "
				 "left out) for at least 10% of the run and 100 ms in all";
		c->f.unit = "nanoseconds";
		c->f.pid = tally_pid(t);
	}
	for (uint32_t i = 0; i < nunseen; i++) {
		const struct unseen *w = &unseen[i];
		const struct prof_process *pp = profile__find_process(p, w->pid);
		double share = (double)w->value / (double)duration_ns;
		char tm[32], d[32], fx[32], futex[160] = "";
		struct cand *c;
		char *where;

		if (w->value < FIND_OFFCPU_MIN_NS || share < FIND_OFFCPU_SHARE ||
		    !(c = rule_slot(&ro, (double)w->value)))
			continue;
		if (w->futex)
			snprintf(futex, sizeof(futex), ", %s of it in futex waits on locks the lock "
				 "rule does not name (see the lock tab)",
				 render__duration(w->futex, fx, sizeof(fx)));
		where = loc_name(&ro, p, (uint32_t)w->loc);
		c->subject = ro_printf(&ro, "%s[%u]", pp && pp->comm && *pp->comm ? pp->comm : "?",
				       w->pid);
		c->fact = ro_printf(&ro, "%s's threads were blocked for %s in %" PRIu64 " wait%s "
				    "begun before tracing started, %.0f%% of the run's %s%s; their "
				    "user stacks cannot be read (another task's), the longest waited "
				    "in the kernel's %s%s%s", c->subject,
				    render__duration(w->value, tm, sizeof(tm)), w->waits,
				    w->waits == 1 ? "" : "s", share * 100,
				    render__duration((uint64_t)duration_ns, d, sizeof(d)), futex,
				    where ? where : "",
				    left_out ? "; futex waits on locks a lock finding names left out" :
				    "",
				    children ? "; waits for child processes left out" : "");
		free(where);
		c->action = "see what it waits for in the offcpu tab (the kernel stack) and the "
			    "lock tab; a trace from its start (ebprof profile -- CMD) shows where "
			    "in the program";
		c->f.mode = p->mode;
		c->f.kind = "offcpu_blocked";
		c->f.threshold = "a function whose threads were blocked off the CPU (sleeping or in "
				 "uninterruptible waits; the time runnable, waiting for a CPU, waits "
				 "for a child process and futex waits on locks a lock finding names "
				 "left out) for at least 10% of the run and 100 ms in all; a process "
				 "for its waits begun before tracing started";
		c->f.unit = "nanoseconds";
		c->f.pid = w->pid;
	}
	err = rule_emit(set, &ro);
out:
	free(unseen);
	tallies__free(&ta);
	lock_waiters__free(&lw);
	return err;
}

/* ---- offcpu: threads waiting for a CPU -------------------------------------------------- */

/* Where a process's threads were when they left the CPU for the waits that ended runnable, by
 * function (the program's own frame, as offcpu_rules names it): a hot loop preempted, a sleep
 * whose wakeup waited for a CPU. The functions with at least FIND_CONTEND_WHERE of its
 * runnable time r, at most 3, largest first: "; where they left the CPU: spin (c.c:9) 97%".
 * "" when none has that much. */
static char *contention_where(struct rule_out *ro, const struct profile *p,
			      const struct subjects *sj, int tr, uint32_t pid, uint64_t r)
{
	struct tallies ta;
	uint32_t top[3];
	int ntop = 0;
	char *s = NULL;

	if (ro->err || tallies__init(&ta, sj)) {
		ro->err = -ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *smp = &p->samples[i];
		int64_t loc;

		if (smp->pid != pid || smp->values[tr] <= 0 || (loc = waiter_loc(p, smp, 0)) < 0)
			continue;
		tally_add(&ta, (uint32_t)loc, (uint64_t)smp->values[tr], pid);
	}
	tallies__sum(&ta);
	for (uint32_t f = 0; f < sj->n; f++) {
		int i;

		if ((double)ta.t[f].value < FIND_CONTEND_WHERE * (double)r)
			continue;
		if (ntop == 3 && ta.t[f].value <= ta.t[top[2]].value)
			continue;
		i = ntop < 3 ? ntop++ : 2;
		while (i > 0 && ta.t[top[i - 1]].value < ta.t[f].value) {
			top[i] = top[i - 1];
			i--;
		}
		top[i] = f;
	}
	s = ro_printf(ro, "%s", ntop ? "; where they left the CPU:" : "");
	for (int i = 0; i < ntop && s; i++) {
		char *name = tally_name(ro, p, &ta, &ta.t[top[i]]), *more;

		more = name ? ro_printf(ro, "%s%s %s %.0f%%", s, i ? "," : "", name,
					100.0 * (double)ta.t[top[i]].value / (double)r) : NULL;
		free(name);
		free(s);
		s = more;
	}
	tallies__free(&ta);
	return s;
}

/* A process whose threads spent a large share of the time they wanted a CPU waiting for one,
 * runnable but not running (offcpu's runnable: from a wakeup, or a preemption, to the
 * switch-in): the machine's CPUs were busy with other work, or the program ran more runnable
 * threads than there were CPUs. Its time on a CPU is the cpu mode's samples of it: without
 * that mode the share is unknown and the rule says nothing. */
static int contention_rules(struct profile *set, const struct profile *p,
			    const struct profile *cpu, const struct subjects *sj,
			    int64_t duration_ns)
{
	int tr = profile__type_index(p, "runnable");
	struct rule_out ro = { 0 };

	if (tr < 0 || !cpu || duration_ns <= 0)
		return 0;
	for (uint32_t i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pp = &p->processes[i];
		const struct prof_process *cp = profile__find_process(cpu, pp->pid);
		uint64_t r, on = 0, samples = 0, thr_n = 0, thr_ns = 0;
		char a[32], b[32], d[32], e[32], q[32], quota[128] = "";
		bool cg;
		double share;
		char *where;
		struct cand *c;

		if (!prof_process__stat(pp, "runnable_ns", &r) || !r)
			continue;
		if (cp) {
			prof_process__stat(cp, "cpu_ns", &on);
			prof_process__stat(cp, "samples", &samples);
		}
		share = (double)r / (double)(r + on);
		if (r < FIND_CONTEND_MIN_NS || share < FIND_CONTEND_SHARE ||
		    (double)r < FIND_CONTEND_RUN_SHARE * (double)duration_ns ||
		    !(c = rule_slot(&ro, (double)r)))
			continue;
		c->subject = ro_printf(&ro, "%s[%u]", pp->comm && *pp->comm ? pp->comm : "?",
				       pp->pid);
		/* its cgroup's CPU quota, when the run measured it (offcpu: a target's) */
		cg = prof_process__stat(pp, "cgroup_throttled", &thr_n) &&
		     prof_process__stat(pp, "cgroup_throttled_ns", &thr_ns);
		if (cg && thr_n)
			snprintf(quota, sizeof(quota), "; its cgroup's CPU quota throttled it %"
				 PRIu64 " time%s for %s", thr_n, thr_n == 1 ? "" : "s",
				 render__duration(thr_ns, q, sizeof(q)));
		else if (cg)
			snprintf(quota, sizeof(quota), "; its cgroup's CPU quota did not throttle it");
		where = contention_where(&ro, p, sj, tr, pp->pid, r);
		c->fact = ro_printf(&ro, "%s's threads waited %s for a CPU, runnable but not "
				    "running: %.0f%% of the %s they ran or waited to run (about %s on "
				    "a CPU, its %" PRIu64 " CPU sample%s); on average %.2f of its "
				    "threads waited throughout the run's %s%s%s", c->subject,
				    render__duration(r, a, sizeof(a)), share * 100,
				    render__duration(r + on, b, sizeof(b)),
				    render__duration(on, e, sizeof(e)), samples,
				    samples == 1 ? "" : "s", (double)r / (double)duration_ns,
				    render__duration((uint64_t)duration_ns, d, sizeof(d)), quota,
				    where ? where : "");
		free(where);
		if (cg && (double)thr_ns >= FIND_CONTEND_QUOTA * (double)r)
			c->action = "its cgroup's CPU quota throttled it: raise the quota (cpu.max; "
				    "cgroup v1: cpu.cfs_quota_us) or run fewer threads; for the rest, "
				    "see what else ran meanwhile (ebprof cpu -a)";
		else if (cg)
			c->action = "the CPUs were busy with other work, or the program ran more "
				    "runnable threads than there are CPUs (its cgroup's quota hardly "
				    "throttled it): see what else ran meanwhile (ebprof cpu -a), or run "
				    "fewer threads";
		else
			c->action = "the CPUs were busy with other work, the program ran more "
				    "runnable threads than there are CPUs, or its cgroup's CPU quota "
				    "throttled it (the cgroup's cpu.stat counts that: nr_throttled): see "
				    "what else ran meanwhile (ebprof cpu -a), or run fewer threads";
		c->f.mode = p->mode;
		c->f.kind = "cpu_contention";
		c->f.threshold = "a process whose threads were runnable, waiting for a CPU, for at "
				 "least 25% of the time they ran or waited to run, 10% of the run and "
				 "100 ms in all";
		c->f.unit = "nanoseconds";
		c->f.pid = pp->pid;
	}
	return rule_emit(set, &ro);
}

/* Contention only: a lock's contentions and delay are the waits that a wake or its release
 * ended. The futex waits that timed out (nobody woke them: a timed condition wait, an idle
 * poll) are the lock's apart, as its timeouts, and EAGAIN calls (no wait) its nowait: neither
 * counts here, and the stack's delay picks the waiting function for the same reason. */
static int lock_rules(struct profile *set, const struct profile *p, int64_t duration_ns)
{
	int td = profile__type_index(p, "delay");
	struct rule_out ro = { 0 };

	for (uint32_t i = 0; td >= 0 && i < p->ngroups; i++) {
		const struct prof_group *g = &p->groups[i];
		const char *lock = group_label(g, "lock"), *cls = group_label(g, "class");
		const char *who = group_label(g, "process");
		int64_t n, total, mean, max, best = 0, site = -1, to = 0, to_ns = 0;
		char a[32], b[32], m[32], d[32], t[32], tos[96] = "";
		struct cand *c;

		if (!lock_crosses(g, duration_ns, &n, &total, &mean, &max) ||
		    !(c = rule_slot(&ro, (double)total)))
			continue;
		/* the function that waited longest on it: its stacks' leaf names the lock */
		for (uint32_t k = 0; k < p->nsamples; k++) {
			const struct prof_sample *s = &p->samples[k];
			int64_t w;

			if (s->values[td] <= best || !lock_stack_of(p, s, lock))
				continue;
			w = waiter_loc(p, s, 1);
			if (w >= 0) {
				best = s->values[td];
				site = w;
			}
		}
		if (group_stat(g, "timeouts", &to) && to > 0 &&
		    group_stat(g, "timeout_delay_ns", &to_ns))
			snprintf(tos, sizeof(tos), "; its %" PRId64 " timed-out waits (%s) not "
				 "counted", to, render__duration((uint64_t)to_ns, t, sizeof(t)));
		c->subject = site >= 0 ? loc_name(&ro, p, (uint32_t)site) : ro_printf(&ro, "%s", lock);
		c->fact = ro_printf(&ro, "%s waited %s on %s (%s%s%s) over %" PRId64 " contentions "
				    "(mean %s, max %s), in a run of %s%s%s", site >= 0 ? c->subject :
				    "threads", render__duration((uint64_t)total, a, sizeof(a)), lock,
				    cls ? cls : "lock", who && strcmp(who, "-") ? ", " : "",
				    who && strcmp(who, "-") ? who : "", n,
				    render__duration((uint64_t)mean, b, sizeof(b)),
				    render__duration((uint64_t)max, m, sizeof(m)),
				    render__duration((uint64_t)duration_ns, d, sizeof(d)), tos,
				    site >= 0 && p->locations[site].nlines &&
				    subject_is_cfi(p, p->locations[site].lines[0].function) ?
				    CFI_SAID : "");
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

static const struct profile *find_part(const struct profile *set, const char *mode)
{
	for (uint32_t i = 0; i < set->nparts; i++)
		if (!strcmp(set->parts[i]->mode, mode))
			return set->parts[i];
	return NULL;
}

int findings__compute(struct profile *set, int64_t duration_ns, bool all)
{
	/* the order of the list: CPU, then waiting, then memory, then I/O */
	static const char *const order[] = { "cpu", "offcpu", "lock", "mem", "io" };
	int err = 0;

	set->nfindings = 0;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]) && !err; o++) {
		for (uint32_t i = 0; i < set->nparts && !err; i++) {
			const struct profile *p = set->parts[i];
			struct subjects sj;

			if (strcmp(p->mode, order[o]))
				continue;
			if (!strcmp(p->mode, "io")) {
				err = io_rules(set, p);
				continue;
			} else if (!strcmp(p->mode, "lock")) {
				err = lock_rules(set, p, duration_ns);
				continue;
			}
			err = subjects__init(&sj, p);
			if (err)
				break;
			if (!strcmp(p->mode, "cpu"))
				err = cpu_rules(set, p, &sj);
			else if (!strcmp(p->mode, "mem"))
				err = leak_rules(set, p, &sj) ?: mem_rules(set, p, &sj, duration_ns);
			else if (!strcmp(p->mode, "offcpu"))
				err = contention_rules(set, p, find_part(set, "cpu"), &sj,
							 duration_ns) ?:
				      offcpu_rules(set, p, &sj, duration_ns,
						   find_part(set, "lock"), all);
			subjects__free(&sj);
		}
	}
	return err;
}
