/* The text report of a profile whose values are not allocations (cpu, stacks, and the modes to
 * come): the run with its facts, the functions that cost most by self and by total value, the
 * top stacks with their frames, and each process's share. Amounts are in the sample type's
 * unit (a duration for nanoseconds, a number for counts), each with its share of the whole.
 *
 * "Total" is inclusive: a function is counted once per stack however often it recurses in it,
 * so no function is over 100%.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"
#include "util/util.h"

#define NAME_LEN 512

struct tstacks {
	const struct profile *p;
	const struct output_opts *o;
	FILE *f;
	int key;		/* the type ranked by */
	int64_t total;		/* its total (profile__type_total: the processes' exact ones) */
};

/* One function (or unsymbolized frame) by its display name. */
struct func_row {
	char *name;
	const char *file;	/* source file, or NULL */
	bool kernel;
	int64_t self, total;
	uint32_t last;		/* sample index + 1 that last added to total */
};

struct func_table {
	struct func_row *rows;
	uint32_t n, cap;
	uint32_t *slots;	/* row + 1, 0 = empty */
	uint32_t nslots;
};

static void heading(const struct tstacks *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void heading(const struct tstacks *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render__text_vheading(t->f, t->o->color, fmt, ap);
	va_end(ap);
}

static double pct(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0.0;
}

static const char *type_unit(const struct profile *p, int type)
{
	return type >= 0 && (uint32_t)type < p->ntypes ? p->types[type].unit : NULL;
}

/* ---- header ----------------------------------------------------------------------------- */

/* The run's header (render__text_header), then the totals of every type */
static void print_header(const struct tstacks *t)
{
	const struct profile *p = t->p;
	char buf[64];

	render__text_header(t->f, p, t->o->color);
	if (p->ntypes)
		fputs("  Totals:   ", t->f);
	for (uint32_t i = 0; i < p->ntypes; i++) {
		/* the processes' exact totals where the mode keeps them (io, lock), which a full
		 * stack table does not make short */
		int64_t sum = profile__type_total(p, i);

		fprintf(t->f, "%s %s %s", i ? "," : "", p->types[i].type,
			render__amount(sum, p->types[i].unit, buf, sizeof(buf)));
		/* the exact number, for checking against other tools */
		if (strcmp(p->types[i].unit, "count"))
			fprintf(t->f, " (%" PRId64 " %s)", sum, p->types[i].unit);
	}
	if (p->ntypes)
		fputc('\n', t->f);
}

/* ---- functions -------------------------------------------------------------------------- */

static void func_table_free(struct func_table *ft)
{
	for (uint32_t i = 0; i < ft->n; i++)
		free(ft->rows[i].name);
	free(ft->rows);
	free(ft->slots);
}

static int func_rehash(struct func_table *ft)
{
	uint32_t n = ft->nslots ? ft->nslots * 2 : 256;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t j = (uint32_t)util_hash_str(ft->rows[i].name) & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i + 1;
	}
	free(ft->slots);
	ft->slots = slots;
	ft->nslots = n;
	return 0;
}

/* The row of a frame: functions are told apart by name, source file and kernel side, so one
 * function in two processes, or inlined in one place and called in another, is one row, and
 * two programs' main are two. */
static struct func_row *func_row(struct func_table *ft, const char *name, const char *file,
				 bool kernel)
{
	uint32_t j;

	if ((ft->n + 1) * 2 > ft->nslots && func_rehash(ft))
		return NULL;
	j = (uint32_t)util_hash_str(name) & (ft->nslots - 1);
	for (; ft->slots[j]; j = (j + 1) & (ft->nslots - 1)) {
		struct func_row *r = &ft->rows[ft->slots[j] - 1];

		if (r->kernel == kernel && !strcmp(r->name, name) &&
		    (r->file == file || (r->file && file && !strcmp(r->file, file))))
			return r;
	}
	if (ft->n == ft->cap) {
		uint32_t cap = ft->cap ? ft->cap * 2 : 64;
		struct func_row *q = realloc(ft->rows, cap * sizeof(*q));

		if (!q)
			return NULL;
		ft->rows = q;
		ft->cap = cap;
	}
	ft->rows[ft->n] = (struct func_row){ .name = strdup(name), .file = file,
					     .kernel = kernel };
	if (!ft->rows[ft->n].name)
		return NULL;
	ft->slots[j] = ++ft->n;
	return &ft->rows[ft->n - 1];
}

static int fill_functions(const struct tstacks *t, struct func_table *ft)
{
	const struct profile *p = t->p;
	char name[NAME_LEN];

	for (uint32_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t v = s->values[t->key];
		/* the frames above a "--" (offcpu's waker) are not where the time went */
		uint32_t own = render__own_leaf(p, s);

		for (uint32_t k = own; k < s->nlocs; k++) {
			const struct prof_location *loc = &p->locations[s->locs[k]];
			bool kernel = profile__location_is_kernel(p, loc);
			uint32_t nl = loc->nlines ? loc->nlines : 1;

			/* a synthetic frame is a subject as the leaf, where it names what the value
			 * is (a lock, a kind of allocation or request, an event); elsewhere (a
			 * thread's "name [tid]", [truncated]) it is no function */
			if (k != own && profile__location_is_synthetic(loc))
				continue;
			for (uint32_t j = 0; j < nl; j++) {
				const char *file = j < loc->nlines ?
					p->functions[loc->lines[j].function].filename : NULL;
				struct func_row *r;

				profile__frame_name(p, loc, j, name, sizeof(name));
				r = func_row(ft, name, file, kernel);
				if (!r)
					return -ENOMEM;
				/* the innermost frame of the leaf is where the time was spent */
				if (k == own && j == 0)
					r->self = prof_add(r->self, v);
				if (r->last != i + 1) {
					r->total = prof_add(r->total, v);
					r->last = i + 1;
				}
			}
		}
	}
	return 0;
}

static int by_self(const void *a, const void *b)
{
	const struct func_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_total(const void *a, const void *b)
{
	const struct func_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void print_function_rows(const struct tstacks *t, struct func_table *ft, bool self)
{
	const char *unit = type_unit(t->p, t->key), *type = t->p->types[t->key].type;
	uint32_t n = 0, shown;
	char b1[32], b2[32];

	qsort(ft->rows, ft->n, sizeof(*ft->rows), self ? by_self : by_total);
	for (uint32_t i = 0; i < ft->n; i++)
		n += (self ? ft->rows[i].self : ft->rows[i].total) != 0;
	shown = t->o->top && t->o->top < n ? t->o->top : n;
	fputc('\n', t->f);
	if (!n) {
		heading(t, "Top functions by %s %s: none", self ? "self" : "total", type);
		return;
	}
	/* "Top 1 function": --top 1, or a profile of one */
	if (shown < n)
		heading(t, "Top %" PRIu32 " function%s by %s %s (of %" PRIu32 ")", shown,
			shown == 1 ? "" : "s", self ? "self" : "total", type, n);
	else
		heading(t, "Top %" PRIu32 " function%s by %s %s", n, n == 1 ? "" : "s",
			self ? "self" : "total", type);
	fprintf(t->f, "  %12s %6s  %12s %6s  %s\n", "SELF", "%", "TOTAL", "%", "FUNCTION");
	for (uint32_t i = 0; i < shown; i++) {
		const struct func_row *r = &ft->rows[i];

		fprintf(t->f, "  %12s %5.1f%%  %12s %5.1f%%  %s",
			render__amount(r->self, unit, b1, sizeof(b1)), pct(r->self, t->total),
			render__amount(r->total, unit, b2, sizeof(b2)), pct(r->total, t->total),
			r->name);
		if (r->file)
			fprintf(t->f, " (%s)", render__basename(r->file));
		if (r->kernel)
			fputs(" [k]", t->f);
		fputc('\n', t->f);
	}
}

static int print_functions(const struct tstacks *t)
{
	struct func_table ft = {};
	int err = fill_functions(t, &ft);

	if (!err) {
		print_function_rows(t, &ft, true);
		print_function_rows(t, &ft, false);
	}
	func_table_free(&ft);
	return err;
}

/* ---- stacks ----------------------------------------------------------------------------- */

static void print_pid(const struct tstacks *t, uint32_t pid)
{
	const struct prof_process *proc = profile__find_process(t->p, pid);

	fprintf(t->f, "pid %" PRIu32, pid);
	if (proc && proc->comm)
		fprintf(t->f, " (%s)", proc->comm);
}

static void print_sample_line(const struct tstacks *t, uint32_t rank, const int64_t *values,
			      uint32_t pid)
{
	const struct profile *p = t->p;
	char b[32];

	fprintf(t->f, "#%-3" PRIu32 " %s %s (%.1f%%)", rank, p->types[t->key].type,
		render__amount(values[t->key], type_unit(p, t->key), b, sizeof(b)),
		pct(values[t->key], t->total));
	for (uint32_t i = 0; i < p->ntypes; i++) {
		if ((int)i == t->key)
			continue;
		fprintf(t->f, ", %s %s", p->types[i].type,
			render__amount(values[i], p->types[i].unit, b, sizeof(b)));
	}
	fputs(", ", t->f);
	print_pid(t, pid);
	fputc('\n', t->f);
}

/*
 * A stack as the report shows it: its frame lines. Samples of one process whose stacks read
 * the same (the same functions and lines at other addresses: a loop's samples at several of
 * its instructions) are one entry, their values summed; listed apart, the real top stack read
 * as several smaller ones (44%, 17% and 4% for one 65% stack).
 */
struct shown {
	char *frames;
	size_t len;
	uint32_t pid;
	uint32_t order;		/* its first sample's rank by value */
	int64_t *values;
};

static char *stack_text(const struct tstacks *t, const struct prof_sample *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	uint32_t no = 0;

	if (!f)
		return NULL;
	if (!s->nlocs)
		fputs("    (no stack)\n", f);
	for (uint32_t k = 0; k < s->nlocs; k++) {
		const struct prof_location *loc = &t->p->locations[s->locs[k]];
		uint32_t nl = loc->nlines ? loc->nlines : 1;

		for (uint32_t j = 0; j < nl; j++)
			render__text_frame(f, t->p, 4, no++, loc, j);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int by_text(const void *a, const void *b)
{
	const struct shown *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->frames, y->frames, x->len);
	return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

/* 0 when a and b are one stack of one process (by_text without the order) */
static int by_text_same(const struct shown *a, const struct shown *b)
{
	if (a->pid != b->pid || a->len != b->len)
		return 1;
	return memcmp(a->frames, b->frames, a->len) != 0;
}

static int by_value(const void *a, const void *b, void *ctx)
{
	const struct shown *x = a, *y = b;
	int key = *(const int *)ctx;

	size_t n = x->len < y->len ? x->len : y->len;
	int c;

	if (x->values[key] != y->values[key])
		return x->values[key] > y->values[key] ? -1 : 1;
	/* a tie by what the stacks read, then pid: not by the rank of a stack's first sample,
	 * which another encoder changes (Go's pprof -proto merges samples of one stack) */
	c = memcmp(x->frames, y->frames, n);
	if (c || x->len != y->len)
		return c ? c : (x->len < y->len ? -1 : 1);
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int print_stacks(const struct tstacks *t)
{
	const struct profile *p = t->p;
	const char *type = p->types[t->key].type;
	uint32_t *idx, n, m = 0, shown;
	struct shown *e = NULL;
	int64_t *vals = NULL;
	int err = 0;

	idx = render__sorted_samples(p, t->key, false, &n);
	if (!idx)
		return -errno;
	e = calloc(n ? n : 1, sizeof(*e));
	vals = calloc(n ? (size_t)n * p->ntypes : 1, sizeof(*vals));
	if (!e || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		e[i].frames = stack_text(t, s, &e[i].len);
		if (!e[i].frames) {
			err = -ENOMEM;
			goto out;
		}
		e[i].pid = s->pid;
		e[i].order = i;
		e[i].values = &vals[(size_t)i * p->ntypes];
		memcpy(e[i].values, s->values, p->ntypes * sizeof(*vals));
	}
	/* the same text: one entry, at its first sample's rank */
	qsort(e, n, sizeof(*e), by_text);
	for (uint32_t i = 0; i < n; i++) {
		if (m && !by_text_same(&e[m - 1], &e[i])) {
			for (uint32_t k = 0; k < p->ntypes; k++)
				e[m - 1].values[k] = prof_add(e[m - 1].values[k],
								e[i].values[k]);
			free(e[i].frames);
			continue;
		}
		e[m++] = e[i];
	}
	qsort_r(e, m, sizeof(*e), by_value, (void *)&t->key);

	shown = t->o->top && t->o->top < m ? t->o->top : m;
	fputc('\n', t->f);
	if (!m)
		heading(t, "Top stacks: none");
	else if (shown < m)
		heading(t, "Top %" PRIu32 " stack%s by %s (of %" PRIu32 ")", shown,
			shown == 1 ? "" : "s", type, m);
	else
		heading(t, "Top %" PRIu32 " stack%s by %s", m, m == 1 ? "" : "s", type);
	for (uint32_t i = 0; i < shown; i++) {
		fputc('\n', t->f);
		print_sample_line(t, i + 1, e[i].values, e[i].pid);
		fwrite(e[i].frames, 1, e[i].len, t->f);
	}
out:
	for (uint32_t i = 0; e && i < (m ? m : n); i++)
		free(e[i].frames);
	free(e);
	free(vals);
	free(idx);
	return err;
}

/* ---- processes -------------------------------------------------------------------------- */

struct proc_sum {
	uint32_t pid;
	const char *comm;	/* for the commands' table: the process's name, or "?" */
	const char *note;	/* the process's (a PID used by several processes, a kernel
				 * thread's work), under its row; NULL: none (commands: none) */
	uint32_t procs;		/* for the commands' table: processes of that name */
	int64_t *v;
};

static int proc_sum_cmp(const void *a, const void *b, void *ctx)
{
	const struct proc_sum *x = a, *y = b;
	int key = *(const int *)ctx;

	if (x->v[key] != y->v[key])
		return x->v[key] > y->v[key] ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int comm_cmp(const void *a, const void *b)
{
	const struct proc_sum *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	return c ? c : (x->pid < y->pid ? -1 : x->pid > y->pid);
}

static int pid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The table of n rows ranked, --top of them, under its heading: PID or COMMAND and PROCS, then
 * each type */
static void print_sums(const struct tstacks *t, struct proc_sum *ps, uint32_t n, bool commands)
{
	const struct profile *p = t->p;
	const char *what = commands ? "Commands" : "Processes";
	uint32_t shown = t->o->top && t->o->top < n ? t->o->top : n;
	char b[32];

	qsort_r(ps, n, sizeof(*ps), proc_sum_cmp, (void *)&t->key);
	if (shown < n)
		heading(t, "%s by %s (the top %" PRIu32 " of %" PRIu32 ")", what,
			p->types[t->key].type, shown, n);
	else
		heading(t, "%s by %s", what, p->types[t->key].type);

	if (commands)
		fprintf(t->f, "  %-16s  %8s", "COMMAND", "PROCS");
	else
		fprintf(t->f, "  %8s  %-16s", "PID", "COMM");
	for (uint32_t i = 0; i < p->ntypes; i++)
		fprintf(t->f, " %14s", p->types[i].type);
	fprintf(t->f, " %6s\n", "%");
	for (uint32_t k = 0; k < shown; k++) {
		/* padded in columns: a name of UTF-8 is fewer than its bytes */
		if (commands)
			fprintf(t->f, "  %-*s  %8" PRIu32, render__pad(ps[k].comm, 16), ps[k].comm,
				ps[k].procs);
		else
			fprintf(t->f, "  %8" PRIu32 "  %-*s", ps[k].pid,
				render__pad(ps[k].comm, 16), ps[k].comm);
		for (uint32_t i = 0; i < p->ntypes; i++)
			fprintf(t->f, " %14s",
				render__amount(ps[k].v[i], p->types[i].unit, b, sizeof(b)));
		fprintf(t->f, " %5.1f%%\n", pct(ps[k].v[t->key], t->total));
		if (!commands && ps[k].note)
			fprintf(t->f, "            note: %s\n", ps[k].note);
	}
}

/* Processes ranked (--top of them), then, when a name has several processes (-a: a build's
 * 102 cc1), the same by command: cc1's 81% was 102 rows of 1-4% */
static int print_processes(const struct tstacks *t)
{
	const struct profile *p = t->p;
	struct proc_sum *ps = NULL, *cs = NULL;
	uint32_t *pids = NULL, n = 0, nc = 0, i, k, np;
	size_t nt = (size_t)p->ntypes + 1;
	int64_t *vals = NULL, *cvals = NULL;
	bool shared = false;
	int err = 0;

	/* every process of a sample, and every process the profile lists: sorted pids, each
	 * one's sums found by a binary search */
	np = p->nprocesses + p->nsamples;
	pids = malloc((np + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < np; i++)
		pids[i] = i < p->nprocesses ? p->processes[i].pid
					    : p->samples[i - p->nprocesses].pid;
	qsort(pids, np, sizeof(*pids), pid_cmp);
	for (i = 0; i < np; i++)
		if (!n || pids[n - 1] != pids[i])
			pids[n++] = pids[i];
	ps = calloc(n + 1, sizeof(*ps));
	vals = calloc((n + 1) * nt, sizeof(*vals));
	if (!ps || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++) {
		const struct prof_process *proc = profile__find_process(p, pids[k]);

		ps[k].pid = pids[k];
		ps[k].comm = proc && proc->comm ? proc->comm : "?";
		ps[k].note = proc ? proc->note : NULL;
		ps[k].procs = 1;
		ps[k].v = vals + (size_t)k * nt;
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const uint32_t *at = bsearch(&s->pid, pids, n, sizeof(*pids), pid_cmp);

		if (!at)
			continue;
		for (uint32_t j = 0; j < p->ntypes; j++)
			ps[at - pids].v[j] = prof_add(ps[at - pids].v[j], s->values[j]);
	}
	/* a process's exact totals, where the mode keeps them apart from its samples (io, lock:
	 * a full stack table loses samples, not totals) */
	for (k = 0; k < n; k++) {
		const struct prof_process *proc = profile__find_process(p, pids[k]);
		uint64_t v;

		for (uint32_t j = 0; proc && j < p->ntypes; j++)
			if (p->types[j].proc_stat &&
			    prof_process__stat(proc, p->types[j].proc_stat, &v))
				ps[k].v[j] = (int64_t)v;
	}
	fputc('\n', t->f);
	if (!n) {
		heading(t, "Processes: none");
		goto out;
	}
	/* by command: the processes grouped by name */
	cs = calloc(n, sizeof(*cs));
	cvals = calloc((size_t)n * nt, sizeof(*cvals));
	if (!cs || !cvals) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(cs, ps, n * sizeof(*cs));
	qsort(cs, n, sizeof(*cs), comm_cmp);
	/* one row a name (sorted: a binary search finds it), then each process's sums into it */
	for (k = 0; k < n; k++) {
		if (nc && !strcmp(cs[nc - 1].comm, cs[k].comm)) {
			cs[nc - 1].procs++;
			shared = true;
			continue;
		}
		cs[nc] = cs[k];
		cs[nc].v = cvals + (size_t)nc * nt;
		nc++;
	}
	for (k = 0; k < n; k++) {
		uint32_t lo = 0, hi = nc;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (strcmp(cs[mid].comm, ps[k].comm) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (uint32_t j = 0; j < p->ntypes; j++)
			cs[lo].v[j] = prof_add(cs[lo].v[j], ps[k].v[j]);
	}
	print_sums(t, ps, n, false);
	if (shared) {
		fputc('\n', t->f);
		print_sums(t, cs, nc, true);
	}
out:
	free(pids);
	free(ps);
	free(vals);
	free(cs);
	free(cvals);
	return err;
}

/* ---- drops and notes -------------------------------------------------------------------- */


static int rank_key(const struct profile *p, const struct output_opts *o)
{
	return o->sort == OUTPUT_SORT_COUNT ? render__count_type(p) : (int)p->default_type;
}

int render__text_process_sums(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct tstacks t = { .p = p, .o = o, .f = f };

	if (!p->ntypes)
		return 0;
	t.key = rank_key(p, o);
	t.total = profile__type_total(p, (uint32_t)t.key);
	return print_processes(&t);
}

int render__text_stacks(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct tstacks t = { .p = p, .o = o, .f = f };
	int err = 0;

	t.key = rank_key(p, o);
	print_header(&t);
	/* a mode's summary leads (io's disks), and its top stacks come before the functions */
	err = render__text_groups(f, p, o->color, o->top);
	if (err)
		return err;
	if (p->ntypes) {
		/* shares of everything counted: of the processes' exact totals where the mode
		 * keeps them, so that stacks a full table lost are not shared out among the rest */
		t.total = profile__type_total(p, (uint32_t)t.key);
		if (p->ngroups) {
			err = print_stacks(&t);
			if (!err)
				err = print_processes(&t);
			if (!err)
				err = print_functions(&t);
		} else {
			err = print_functions(&t);
			if (!err)
				err = print_stacks(&t);
			if (!err)
				err = print_processes(&t);
		}
	} else {
		fputc('\n', f);
		heading(&t, "Top stacks: none (the profile has no sample types)");
	}
	if (err)
		return err;
	render__text_drops(t.f, t.p, t.o->color, "the notes say what each left out of the numbers above");
	render__text_notes(t.f, t.p, t.o->color);
	return ferror(f) ? -EIO : 0;
}
