/* The default report, for humans: run header, per-process summary (with its peak), top sites with
 * their stacks and size histograms, outstanding allocations at exit, growth of live bytes per
 * site, drops and notes.
 *
 * Byte amounts are shown in binary units for reading and as exact numbers for checking; every
 * exact number of the profile that a reader may want to compare appears at least once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "output/render.h"

#define WRAP_COLS 100
#define OUTSTANDING_FRAMES 5
#define GROWTH_FRAMES 5
#define PEAK_SITES 5
#define LARGEST_FRAMES 8

struct text {
	const struct profile *p;
	const struct output_opts *o;
	FILE *f;
	/* memory types, -1 when absent */
	int alloc_objects, alloc_space, inuse_objects, inuse_space;
	/* --mmap's category, -1 when absent */
	int mmap_objects, mmap_space, mmap_inuse_objects, mmap_inuse_space;
};

/* A site of the mapping category (--mmap): listed in its own section, never among the
 * allocation sites. */
static bool is_map_sample(const struct text *t, const struct prof_sample *s)
{
	return t->mmap_objects >= 0 && s->values[t->mmap_objects] > 0;
}

static void heading(const struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void heading(const struct text *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	render__text_vheading(t->f, t->o->color, fmt, ap);
	va_end(ap);
}

/* A "label: a, b, c" line wrapped at WRAP_COLS with continuation lines aligned after the label. */
struct wrap {
	FILE *f;
	unsigned int col, indent, items;
};

static void wrap_begin(struct wrap *w, FILE *f, unsigned int indent, const char *label)
{
	w->f = f;
	w->items = 0;
	w->indent = indent + strlen(label) + 2;
	w->col = w->indent;
	fprintf(f, "%*s%s: ", indent, "", label);
}

static void wrap_item(struct wrap *w, const char *s)
{
	unsigned int len = strlen(s);

	if (w->items && w->col + 2 + len > WRAP_COLS) {
		fprintf(w->f, ",\n%*s", w->indent, "");
		w->col = w->indent;
	} else if (w->items) {
		fputs(", ", w->f);
		w->col += 2;
	}
	fputs(s, w->f);
	w->col += len;
	w->items++;
}

static void wrap_end(struct wrap *w)
{
	fputc('\n', w->f);
}

/* ---- processes -------------------------------------------------------------------------- */

struct stat_col {
	const char *key;
	const char *header;
	const char *exact;	/* label in the exact bytes line, NULL for counts */
};

static const struct stat_col stat_cols[] = {
	{ "alloc_count", "ALLOCS", NULL },
	{ "alloc_bytes", "ALLOC BYTES", "allocated" },
	{ "free_count", "FREES", NULL },
	{ "free_bytes", "FREED BYTES", "freed" },
	{ "live_count", "LIVE", NULL },
	{ "live_bytes", "LIVE BYTES", "live" },
	{ "peak_live_bytes", "PEAK LIVE", "peak live" },
	{ "max_request", "LARGEST", "largest request" },
	{ "unknown_frees", "UNKNOWN FREES", NULL },
	/* kmem: events of the process's tasks, and its allocations still live */
	{ "kmem_kmalloc", "KMALLOC", NULL },
	{ "kmem_kfree", "KFREE", NULL },
	{ "kmem_cache_alloc", "CACHE ALLOC", NULL },
	{ "kmem_cache_free", "CACHE FREE", NULL },
	{ "kmem_page_alloc", "PAGES", NULL },
	{ "kmem_page_free", "PAGE FREES", NULL },
	{ "kmem_percpu_alloc", "PERCPU", NULL },
	{ "kmem_percpu_free", "PERCPU FREES", NULL },
	{ "kmem_kmalloc_bytes_req", "KMALLOC REQ", "kmalloc requested" },
	{ "kmem_bytes_req", "REQUESTED", "requested" },
	{ "kmem_bytes_alloc", "ALLOCATED", "allocated" },
	{ "kmem_live_count", "LIVE", NULL },
	{ "kmem_live_bytes", "LIVE BYTES", "live" },
};

#define NSTAT_COLS (sizeof(stat_cols) / sizeof(stat_cols[0]))
#define CELL 48

static bool known_stat(const char *key)
{
	size_t i;

	for (i = 0; i < NSTAT_COLS; i++) {
		if (strcmp(stat_cols[i].key, key) == 0)
			return true;
	}
	return false;
}

/* A statistic summed over every process; false if no process has it. Peaks do not add up (each
 * process peaked at its own time): none for peak_live_bytes, the largest for max_request. */
static bool total_stat(const struct profile *p, const char *key, uint64_t *sum)
{
	bool any = false;
	uint64_t v;

	*sum = 0;
	if (!strcmp(key, "peak_live_bytes"))
		return false;
	for (uint32_t r = 0; r < p->nprocesses; r++) {
		if (!prof_process__stat(&p->processes[r], key, &v))
			continue;
		any = true;
		if (!strcmp(key, "max_request"))
			*sum = v > *sum ? v : *sum;
		else
			*sum += v;
	}
	return any;
}

/* The rows --top shows of the process table, in *idx (shown of them): every process in the
 * profile's order, or with more than --top the first --top by the first of these stats they
 * have, in its order (-a over 2 s: 700 processes, unsorted). Its name in *by (NULL: all). */
static const char *const rank_stats[][2] = {
	{ "kmem_bytes_alloc", "bytes allocated" },
	{ "alloc_bytes", "bytes allocated" },
};

struct rank_ctx {
	const struct profile *p;
	const char *key;
};

static int rank_cmp(const void *a, const void *b, void *ctx)
{
	const struct rank_ctx *rc = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t vi = 0, vj = 0;

	prof_process__stat(&rc->p->processes[i], rc->key, &vi);
	prof_process__stat(&rc->p->processes[j], rc->key, &vj);
	if (vi != vj)
		return vi > vj ? -1 : 1;
	return i < j ? -1 : i > j;
}

static uint32_t *process_order(const struct text *t, uint32_t *shown, const char **by)
{
	const struct profile *p = t->p;
	uint32_t *idx = malloc((p->nprocesses ? p->nprocesses : 1) * sizeof(*idx));

	*shown = p->nprocesses;
	*by = NULL;
	if (!idx)
		return NULL;
	for (uint32_t i = 0; i < p->nprocesses; i++)
		idx[i] = i;
	if (!t->o->top || p->nprocesses <= t->o->top)
		return idx;
	for (size_t k = 0; k < sizeof(rank_stats) / sizeof(rank_stats[0]); k++) {
		struct rank_ctx rc = { p, rank_stats[k][0] };
		uint64_t v;

		if (!total_stat(p, rc.key, &v))
			continue;
		qsort_r(idx, p->nprocesses, sizeof(*idx), rank_cmp, &rc);
		*by = rank_stats[k][1];
		break;
	}
	*shown = t->o->top;
	return idx;
}

static int print_process_table(const struct text *t, const uint32_t *idx, uint32_t shown)
{
	const struct profile *p = t->p;
	/* a run over several processes ends with their total */
	bool total = p->nprocesses > 1, ppids = false;
	uint32_t ncols = 2, nrows = shown + 1 + total, r, c;
	size_t cols[2 + NSTAT_COLS];	/* stat_cols index + 2, or 0/1 for pid/comm */
	unsigned int width[2 + NSTAT_COLS] = { 0 };
	char (*cell)[CELL];
	size_t i;
	int pw = 4;	/* PPID's width, within the COMM cell (left of the name); at most 10 */

	for (r = 0; r < p->nprocesses; r++) {
		char b[16];

		ppids |= p->processes[r].ppid != 0;
		if (snprintf(b, sizeof(b), "%" PRIu32, p->processes[r].ppid) > pw)
			pw = strlen(b) > 10 ? 10 : (int)strlen(b);
	}
	for (i = 0; i < NSTAT_COLS; i++) {
		for (r = 0; r < p->nprocesses; r++) {
			if (prof_process__stat(&p->processes[r], stat_cols[i].key, NULL)) {
				cols[ncols++] = i;
				break;
			}
		}
	}
	cell = calloc((size_t)nrows * ncols, CELL);
	if (!cell)
		return -ENOMEM;
	snprintf(cell[0], CELL, "PID");
	if (ppids)
		snprintf(cell[1], CELL, "%*s  COMM", pw, "PPID");
	else
		snprintf(cell[1], CELL, "COMM");
	for (c = 2; c < ncols; c++)
		snprintf(cell[c], CELL, "%s", stat_cols[cols[c]].header);
	for (r = 1; r < nrows; r++) {
		const struct prof_process *proc = r <= shown ? &p->processes[idx[r - 1]] : NULL;
		char (*row)[CELL] = &cell[(size_t)r * ncols];

		if (!proc) {
			snprintf(row[0], CELL, "total");
			snprintf(row[1], CELL, "%*s%" PRIu32 " processes", ppids ? pw + 2 : 0, "",
				 p->nprocesses);
		} else {
			/* a PID in its own namespace shows as HOST/NS, as in /proc's NSpid */
			if (proc->ns_pid)
				snprintf(row[0], CELL, "%" PRIu32 "/%" PRIu32, proc->pid, proc->ns_pid);
			else
				snprintf(row[0], CELL, "%" PRIu32, proc->pid);
			if (ppids) {
				static const char blanks[] = "          ";
				char pp[16];
				int len = proc->ppid ? snprintf(pp, sizeof(pp), "%" PRIu32, proc->ppid)
						     : snprintf(pp, sizeof(pp), "-");

				snprintf(row[1], CELL, "%.*s%.10s  %.15s", len < pw ? pw - len : 0,
					 blanks, pp, proc->comm ? proc->comm : "?");
			}
			else
				snprintf(row[1], CELL, "%s", proc->comm ? proc->comm : "?");
		}
		for (c = 2; c < ncols; c++) {
			const struct stat_col *sc = &stat_cols[cols[c]];
			uint64_t v;

			if (proc ? !prof_process__stat(proc, sc->key, &v) : !total_stat(p, sc->key, &v))
				snprintf(row[c], CELL, "-");
			else if (sc->exact)
				render__bytes(v, row[c], CELL);
			else
				snprintf(row[c], CELL, "%" PRIu64, v);
		}
	}
	for (r = 0; r < nrows; r++) {
		for (c = 0; c < ncols; c++) {
			/* in columns: a name of UTF-8 is fewer than its bytes */
			unsigned int l = render__width(cell[(size_t)r * ncols + c]);

			if (l > width[c])
				width[c] = l;
		}
	}
	for (r = 0; r < nrows; r++) {
		fputs("  ", t->f);
		for (c = 0; c < ncols; c++) {
			const char *s = cell[(size_t)r * ncols + c];

			/* COMM is text: left-aligned; the last column gets no trailing blanks */
			if (c == 1)
				fprintf(t->f, "  %-*s",
					c + 1 < ncols ? render__pad(s, width[c]) : 0, s);
			else
				fprintf(t->f, "%s%*s", c ? "  " : "", (int)width[c], s);
		}
		fputc('\n', t->f);
	}
	free(cell);
	return 0;
}

static void print_site_name(const struct text *t, const struct prof_sample *s);

/* "peak 7.8 MiB (8192000 bytes) at 22.2 ms", then the sites of the snapshot nearest it. */
static void print_process_peak(const struct text *t, const struct prof_process *proc)
{
	const struct prof_peak *pk = &proc->peak;
	char b1[32], b2[32];
	uint32_t i;

	if (proc->nsnapshots)
		fprintf(t->f, "    snapshots of the sites: %" PRIu32 "%s", proc->nsnapshots,
			proc->fit_to_ns > proc->fit_from_ns ? ", trends fitted from " : "\n");
	if (proc->nsnapshots && proc->fit_to_ns > proc->fit_from_ns)
		fprintf(t->f, "%s to %s\n",
			render__duration(proc->fit_from_ns, b1, sizeof(b1)),
			render__duration(proc->fit_to_ns, b2, sizeof(b2)));
	if (!pk->known)
		return;
	fprintf(t->f, "    peak %s (%" PRIu64 " bytes)", render__bytes(pk->bytes, b1, sizeof(b1)),
		pk->bytes);
	if (pk->t_ns >= 0)
		fprintf(t->f, " at %s", render__duration(pk->t_ns, b2, sizeof(b2)));
	fputc('\n', t->f);
	if (!pk->bytes)
		return;
	if (pk->snapshot_t_ns < 0) {
		fputs("    at peak: no snapshot of the sites was taken\n", t->f);
		return;
	}
	fprintf(t->f, "    at peak: the snapshot at %s holds %s (%" PRIu64 " bytes), %.1f%% of the "
		"peak%s\n", render__duration(pk->snapshot_t_ns, b1, sizeof(b1)),
		render__bytes(pk->snapshot_bytes, b2, sizeof(b2)), pk->snapshot_bytes,
		100.0 * pk->snapshot_bytes / pk->bytes, pk->nsites ? ":" : "");
	for (i = 0; i < pk->nsites && i < PEAK_SITES; i++) {
		fprintf(t->f, "      %10s  ", render__bytes(pk->sites[i].bytes, b1, sizeof(b1)));
		print_site_name(t, &t->p->samples[pk->sites[i].sample]);
		fputc('\n', t->f);
	}
	if (pk->nsites > PEAK_SITES)
		fprintf(t->f, "      ... %" PRIu32 " more site%s\n", pk->nsites - PEAK_SITES,
			pk->nsites - PEAK_SITES == 1 ? "" : "s");
}

static void print_stack(const struct text *t, unsigned int indent,
			const struct prof_sample *s, bool skip_alloc, uint32_t max);

/* "largest request 97.7 KiB (100000 bytes) at 12.3 ms, from:" and its stack (the allocator
 * function first: which one was asked matters here). */
static void print_process_largest(const struct text *t, const struct prof_process *proc)
{
	const struct prof_largest *lg = &proc->largest;
	char b1[32], b2[32];

	if (!lg->known)
		return;
	fprintf(t->f, "    largest request %s (%" PRIu64 " bytes)",
		render__bytes(lg->bytes, b1, sizeof(b1)), lg->bytes);
	if (lg->t_ns >= 0)
		fprintf(t->f, " at %s", render__duration(lg->t_ns, b2, sizeof(b2)));
	if (lg->sample == PROF_NONE) {
		fputs(", its site was not kept (see drops)\n", t->f);
		return;
	}
	fputs(", from:\n", t->f);
	print_stack(t, 6, &t->p->samples[lg->sample], false, LARGEST_FRAMES);
}

static uint64_t mstat(const struct prof_process *proc, const char *name)
{
	uint64_t v = 0;

	prof_process__stat(proc, name, &v);
	return v;
}

/* --mmap: the process's own mappings, apart from the malloc numbers. */
static void print_process_maps(const struct text *t, const struct prof_process *proc)
{
	char b1[32], b2[32];

	if (!prof_process__stat(proc, "mmap_mapped_count", NULL))
		return;
	fprintf(t->f, "    mappings (mmap, mremap, brk: a category apart, not in the numbers above):\n"
		"      calls: mmap %" PRIu64 ", munmap %" PRIu64 ", mremap %" PRIu64 ", brk %" PRIu64
		" (failed %" PRIu64 ", untracked %" PRIu64 ")\n",
		mstat(proc, "mmap_calls_mmap"), mstat(proc, "mmap_calls_munmap"),
		mstat(proc, "mmap_calls_mremap"), mstat(proc, "mmap_calls_brk"),
		mstat(proc, "mmap_failed"), mstat(proc, "mmap_untracked"));
	fprintf(t->f, "      bytes: mapped %" PRIu64 " in %" PRIu64 " regions, unmapped %" PRIu64
		" (%" PRIu64 " times), live %" PRIu64 " in %" PRIu64 " regions (%s), peak live %"
		PRIu64 " (%s)\n",
		mstat(proc, "mmap_mapped_bytes"), mstat(proc, "mmap_mapped_count"),
		mstat(proc, "mmap_unmapped_bytes"), mstat(proc, "mmap_unmapped_count"),
		mstat(proc, "mmap_live_bytes"), mstat(proc, "mmap_live_count"),
		render__bytes(mstat(proc, "mmap_live_bytes"), b1, sizeof(b1)),
		mstat(proc, "mmap_peak_live_bytes"),
		render__bytes(mstat(proc, "mmap_peak_live_bytes"), b2, sizeof(b2)));
}

/* mem: of a forked child's unknown frees, those of blocks its parent held when it forked */
static void print_process_inherited(const struct text *t, const struct prof_process *proc)
{
	uint64_t unknown, frees, bytes;
	char b[32];

	if (!prof_process__stat(proc, "unknown_frees", &unknown) ||
	    !prof_process__stat(proc, "inherited_frees", &frees) || !frees ||
	    !prof_process__stat(proc, "inherited_bytes", &bytes))
		return;
	fprintf(t->f, "    unknown frees: %" PRIu64 ", %s%" PRIu64 " of blocks its parent held when "
		"it forked (%s)\n", unknown, frees == unknown ? "all " : "", frees,
		render__bytes(bytes, b, sizeof(b)));
}

static void print_process_details(const struct text *t, const struct prof_process *proc)
{
	char item[CELL + 64];
	struct wrap w;
	uint32_t i, n;
	size_t k;

	fprintf(t->f, "  pid %" PRIu32, proc->pid);
	if (proc->ns_pid)
		fprintf(t->f, " (pid %" PRIu32 " in its namespace)", proc->ns_pid);
	if (proc->ppid)
		fprintf(t->f, " ppid %" PRIu32, proc->ppid);
	fprintf(t->f, " (%s)%s%s\n", proc->comm ? proc->comm : "?",
		proc->cmdline ? ": " : "", proc->cmdline ? proc->cmdline : "");

	if (proc->ncalls) {
		wrap_begin(&w, t->f, 4, "calls");
		for (i = n = 0; i < proc->ncalls; i++) {
			if (!proc->calls[i].value)
				continue;
			snprintf(item, sizeof(item), "%s %" PRIu64, proc->calls[i].key,
				 proc->calls[i].value);
			wrap_item(&w, item);
			n++;
		}
		if (!n)
			wrap_item(&w, "none");
		wrap_end(&w);
	}

	for (k = n = 0; k < NSTAT_COLS; k++) {
		uint64_t v;

		if (!stat_cols[k].exact || !prof_process__stat(proc, stat_cols[k].key, &v))
			continue;
		if (!n++)
			wrap_begin(&w, t->f, 4, "bytes");
		snprintf(item, sizeof(item), "%s %" PRIu64, stat_cols[k].exact, v);
		wrap_item(&w, item);
	}
	if (n)
		wrap_end(&w);

	print_process_inherited(t, proc);
	for (i = n = 0; i < proc->nstats; i++) {
		if (known_stat(proc->stats[i].key) || !strncmp(proc->stats[i].key, "mmap_", 5) ||
		    !strncmp(proc->stats[i].key, "inherited_", 10))
			continue;
		if (!n++)
			wrap_begin(&w, t->f, 4, "other");
		snprintf(item, sizeof(item), "%s %" PRIu64, proc->stats[i].key,
			 proc->stats[i].value);
		wrap_item(&w, item);
	}
	if (n)
		wrap_end(&w);

	print_process_maps(t, proc);
	print_process_peak(t, proc);
	print_process_largest(t, proc);
	if (proc->note)
		fprintf(t->f, "    note: %s\n", proc->note);
}

static int print_processes(const struct text *t)
{
	uint32_t i, shown, *idx;
	const char *by;
	int err;

	/* a saved profile: pprof keeps no calls or statistics of a process, only the pid and
	 * comm labels of its samples; their sums are what is known of it */
	if (t->p->from_pprof)
		return render__text_process_sums(t->p, t->o, t->f);
	fputc('\n', t->f);
	if (!t->p->nprocesses) {
		heading(t, "Processes: none");
		return 0;
	}
	idx = process_order(t, &shown, &by);
	if (!idx)
		return -ENOMEM;
	if (shown < t->p->nprocesses && by)
		heading(t, "Processes: the top %" PRIu32 " of %" PRIu32 " by %s (the total is all "
			"of them; --top 0 lists every one)", shown, t->p->nprocesses, by);
	else if (shown < t->p->nprocesses)
		heading(t, "Processes: the first %" PRIu32 " of %" PRIu32 " (the total is all of "
			"them; --top 0 lists every one)", shown, t->p->nprocesses);
	else
		heading(t, "Processes");
	err = print_process_table(t, idx, shown);
	if (!err) {
		fputc('\n', t->f);
		for (i = 0; i < shown; i++)
			print_process_details(t, &t->p->processes[idx[i]]);
	}
	free(idx);
	return err;
}

/* ---- sites ------------------------------------------------------------------------------ */

static const char *comm_of(const struct profile *p, uint32_t pid)
{
	const struct prof_process *proc = profile__find_process(p, pid);

	return proc && proc->comm ? proc->comm : NULL;
}

static void print_pid(const struct text *t, uint32_t pid)
{
	const char *comm = comm_of(t->p, pid);

	fprintf(t->f, "pid %" PRIu32, pid);
	if (comm)
		fprintf(t->f, " (%s)", comm);
}

static int64_t value(const struct prof_sample *s, int type)
{
	return type >= 0 ? s->values[type] : 0;
}

static uint64_t uvalue(const struct prof_sample *s, int type)
{
	int64_t v = value(s, type);

	return v > 0 ? (uint64_t)v : 0;
}

static bool is_mem(const struct text *t)
{
	return t->alloc_objects >= 0 && t->alloc_space >= 0;
}

static bool is_kmem(const struct text *t)
{
	return t->p->mode && !strcmp(t->p->mode, "kmem");
}

static void print_site_line(const struct text *t, uint32_t rank, const struct prof_sample *s)
{
	const struct profile *p = t->p;
	char b1[32], b2[32];
	uint32_t i;

	fprintf(t->f, "#%-3" PRIu32 " ", rank);
	if (is_mem(t)) {
		uint64_t bytes = uvalue(s, t->alloc_space), count = uvalue(s, t->alloc_objects);

		fprintf(t->f, "%s (%" PRIu64 " bytes) in %" PRIu64 " allocation%s",
			render__bytes(bytes, b1, sizeof(b1)), bytes, count, count == 1 ? "" : "s");
		if (t->inuse_objects >= 0 && t->inuse_space >= 0)
			fprintf(t->f, ", %" PRIu64 " live (%s)", uvalue(s, t->inuse_objects),
				render__bytes(uvalue(s, t->inuse_space), b2, sizeof(b2)));
		/* kmem: slab waste, bytes allocated beyond those requested */
		if (is_kmem(t) && profile__type_index(p, "waste_space") >= 0) {
			uint64_t w = uvalue(s, profile__type_index(p, "waste_space"));

			fprintf(t->f, ", waste %s (%" PRIu64 " bytes)",
				render__bytes(w, b2, sizeof(b2)), w);
		}
	} else {
		for (i = 0; i < p->ntypes; i++) {
			const char *unit = p->types[i].unit;
			int64_t v = s->values[i];

			fprintf(t->f, "%s%s ", i ? ", " : "", p->types[i].type);
			if (strcmp(unit, "bytes") == 0 && v >= 0)
				fprintf(t->f, "%s (%" PRId64 " bytes)",
					render__bytes(v, b1, sizeof(b1)), v);
			else if (strcmp(unit, "nanoseconds") == 0 && v >= 0)
				fprintf(t->f, "%s (%" PRId64 " ns)",
					render__duration(v, b1, sizeof(b1)), v);
			else if (strcmp(unit, "count") == 0)
				fprintf(t->f, "%" PRId64, v);
			else
				fprintf(t->f, "%" PRId64 " %s", v, unit);
		}
	}
	fputs(", ", t->f);
	print_pid(t, s->pid);
	fputc('\n', t->f);
}

/* One frame line (render__text_frame). */
static void print_frame(const struct text *t, unsigned int indent, uint32_t no,
			const struct prof_location *loc, uint32_t line)
{
	render__text_frame(t->f, t->p, indent, no, loc, line);
}

static bool frame_is_allocator(const struct profile *p, const struct prof_location *loc,
			       uint32_t line)
{
	if (line >= loc->nlines)
		return false;
	return render__is_allocator(p->functions[loc->lines[line].function].name);
}

/* Where the site asked for memory: its first frame that is not an allocator function (the leaf
 * if all are), with file:line. */
static void print_site_name(const struct text *t, const struct prof_sample *s)
{
	const struct profile *p = t->p;
	const struct prof_location *loc = NULL;
	uint32_t i, j = 0;
	char name[512];

	if (!s->nlocs) {
		fputs("(no stack)", t->f);
		return;
	}
	for (i = 0; i < s->nlocs && !loc; i++) {
		const struct prof_location *l = &p->locations[s->locs[i]];

		for (j = 0; j < (l->nlines ? l->nlines : 1); j++) {
			if (!frame_is_allocator(p, l, j)) {
				loc = l;
				break;
			}
		}
	}
	if (!loc) {
		loc = &p->locations[s->locs[0]];
		j = 0;
	}
	fputs(profile__frame_name(p, loc, j, name, sizeof(name)), t->f);
	if (j < loc->nlines) {
		const struct prof_function *fn = &p->functions[loc->lines[j].function];

		if (fn->filename && loc->lines[j].line > 0)
			fprintf(t->f, " (%s:%" PRId64 ")", render__basename(fn->filename),
				loc->lines[j].line);
		else if (fn->filename)
			fprintf(t->f, " (%s)", render__basename(fn->filename));
	}
}

/*
 * Print a stack leaf first, inline frames expanded (each numbered). With skip_alloc, start at
 * the first frame that is not an allocator function, where the program asked for memory, and
 * stop after max frames (0 = all).
 */
static void print_stack(const struct text *t, unsigned int indent,
			const struct prof_sample *s, bool skip_alloc, uint32_t max)
{
	const struct profile *p = t->p;
	uint32_t i, j, no = 0, shown = 0, total = 0;
	bool skipping = skip_alloc;

	if (!s->nlocs) {
		fprintf(t->f, "%*s(no stack)\n", indent, "");
		return;
	}
	for (i = 0; i < s->nlocs; i++) {
		const struct prof_location *loc = &p->locations[s->locs[i]];

		total += loc->nlines ? loc->nlines : 1;
	}
	/* a stack of nothing but allocator frames is shown whole */
	if (skipping) {
		bool all = true;

		for (i = 0; i < s->nlocs && all; i++) {
			const struct prof_location *loc = &p->locations[s->locs[i]];

			for (j = 0; j < (loc->nlines ? loc->nlines : 1) && all; j++)
				all = frame_is_allocator(p, loc, j);
		}
		skipping = !all;
	}
	for (i = 0; i < s->nlocs; i++) {
		const struct prof_location *loc = &p->locations[s->locs[i]];
		uint32_t n = loc->nlines ? loc->nlines : 1;

		for (j = 0; j < n; j++, no++) {
			if (skipping && frame_is_allocator(p, loc, j))
				continue;
			skipping = false;
			if (max && shown == max) {
				fprintf(t->f, "%*s... %" PRIu32 " more frame%s\n", indent, "",
					total - no, total - no == 1 ? "" : "s");
				return;
			}
			print_frame(t, indent, no, loc, j);
			shown++;
		}
	}
}

/* Temporaries (freed before their thread allocated again) and how long blocks lived. */
static void print_lifetimes(const struct text *t, const struct prof_sample *s)
{
	int ci = render__count_type(t->p);
	int64_t allocs = ci >= 0 ? s->values[ci] : 0;

	if (s->temporary && allocs > 0)
		fprintf(t->f, "    temporary: %" PRIu64 " of %" PRId64 " allocations (%.1f%%) freed "
			"before their thread allocated again\n", s->temporary, allocs,
			100.0 * s->temporary / allocs);
	if (s->life)
		render__text_buckets(t->f, "    ", "lifetimes", s->life, s->nlife,
				     render__life_bucket_label);
}

static int print_sites(const struct text *t, bool by_count)
{
	const struct profile *p = t->p;
	int key = by_count ? render__count_type(p) : (int)p->default_type;
	uint32_t *idx, n, shown, i;
	const char *what = is_mem(t) ? "allocation site" : "site";	/* "sites" when not one */
	const char *by;

	idx = render__sorted_samples(p, key, false, &n);
	if (!idx)
		return -errno;
	for (i = shown = 0; i < n; i++)
		if (!is_map_sample(t, &p->samples[idx[i]]))
			idx[shown++] = idx[i];
	n = shown;
	if (by_count)
		by = "count";
	/* "bytes" is alloc_space; any other type ranked by is named (--value inuse_space, kmem's
	 * waste_space, a Go heap profile's default inuse_space: "bytes" read as unsorted there,
	 * each line leading with the bytes allocated) */
	else if (p->ntypes && !strcmp(p->types[p->default_type].type, "alloc_space"))
		by = "bytes";
	else
		by = p->ntypes ? p->types[p->default_type].type : "order";

	shown = t->o->top && t->o->top < n ? t->o->top : n;
	fputc('\n', t->f);
	if (!n)
		heading(t, "Top %ss: none", what);
	else if (shown < n)
		heading(t, "Top %" PRIu32 " %s%s by %s (of %" PRIu32 ")", shown, what,
			shown == 1 ? "" : "s", by, n);
	else
		heading(t, "Top %" PRIu32 " %s%s by %s", n, what, n == 1 ? "" : "s", by);

	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		fputc('\n', t->f);
		print_site_line(t, i + 1, s);
		print_stack(t, 4, s, false, 0);
		if (s->hist)
			render__text_buckets(t->f, "    ", "sizes", s->hist, s->nhist,
					     render__size_bucket_label);
		print_lifetimes(t, s);
	}
	free(idx);
	return 0;
}

/* ---- kmem: slab caches ------------------------------------------------------------------ */

struct cache_row {
	const char *name;
	uint64_t allocs, frees, live, req, alloc;
};

static int cache_row_cmp(const void *a, const void *b)
{
	const struct cache_row *x = a, *y = b;

	if (x->alloc != y->alloc)
		return x->alloc < y->alloc ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Every process's use of each cache summed by name (JSON's caches[] has them per process),
 * slabtop-like with the waste, and the sizes requested over all stacks. */
static int print_caches(const struct text *t)
{
	const struct profile *p = t->p;
	struct cache_row *rows = calloc(p->ncaches + 1, sizeof(*rows));
	uint64_t hist[64] = { 0 };
	uint32_t n = 0, shown, i, j, nh = 0;
	char b1[32], b2[32], b3[32];

	if (!rows)
		return -ENOMEM;
	if (p->from_pprof) {
		/* pprof has no place for them: "none" would be false */
		free(rows);
		fputc('\n', t->f);
		heading(t, "Slab caches: not in a saved profile");
		fputc('\n', t->f);
		heading(t, "Allocation sizes (bytes requested): not in a saved profile");
		return 0;
	}
	for (i = 0; i < p->ncaches; i++) {
		const struct prof_cache *c = &p->caches[i];

		for (j = 0; j < n && strcmp(rows[j].name, c->name); j++)
			;
		if (j == n)
			rows[n++].name = c->name;
		rows[j].allocs += c->allocs;
		rows[j].frees += c->frees;
		rows[j].live += c->live;
		rows[j].req += c->bytes_req;
		rows[j].alloc += c->bytes_alloc;
	}
	qsort(rows, n, sizeof(*rows), cache_row_cmp);
	shown = t->o->top && t->o->top < n ? t->o->top : n;
	fputc('\n', t->f);
	if (!n) {
		heading(t, "Slab caches: none");
	} else {
		heading(t, "Slab caches by bytes allocated (%" PRIu32 " of %" PRIu32 "; kmalloc by "
			"size class)", shown, n);
		fprintf(t->f, "  %-24s %10s %10s %10s %12s %12s %12s %6s\n", "CACHE", "ALLOCS",
			"FREES", "LIVE", "REQUESTED", "ALLOCATED", "WASTE", "WASTE%");
	}
	for (i = 0; i < shown; i++) {
		const struct cache_row *r = &rows[i];
		uint64_t waste = r->alloc > r->req ? r->alloc - r->req : 0;

		fprintf(t->f, "  %-24s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12s %12s %12s "
			"%5.1f%%\n", r->name, r->allocs, r->frees, r->live,
			render__bytes(r->req, b1, sizeof(b1)), render__bytes(r->alloc, b2, sizeof(b2)),
			render__bytes(waste, b3, sizeof(b3)), r->alloc ? 100.0 * waste / r->alloc : 0);
	}
	free(rows);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];

		for (j = 0; j < s->nhist && j < 64; j++)
			hist[j] += s->hist[j];
		nh = s->nhist > nh ? s->nhist : nh;
	}
	fputc('\n', t->f);
	heading(t, "Allocation sizes (bytes requested), every stack");
	render__text_buckets(t->f, "    ", "sizes", hist, nh < 64 ? nh : 64,
			     render__size_bucket_label);
	return 0;
}

/* ---- outstanding ------------------------------------------------------------------------ */

static int print_outstanding(const struct text *t)
{
	const struct profile *p = t->p;
	uint64_t count = 0, bytes = 0;
	char b1[32], b2[32], b3[32], age[64] = "";
	uint32_t *idx, n, shown, i;

	if (p->min_age_ns)
		snprintf(age, sizeof(age), " (at least %s old)",
			 render__duration(p->min_age_ns, b1, sizeof(b1)));
	idx = render__sorted_samples(p, RENDER_KEY_OUTSTANDING, false, &n);
	if (!idx)
		return -errno;
	/* sites whose outstanding bytes are 0 may still hold objects (malloc(0)) */
	for (i = shown = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		if (!s->out.count || is_map_sample(t, s))
			continue;
		idx[shown++] = idx[i];
		count += s->out.count;
		bytes += s->out.bytes;
	}
	n = shown;
	if (!n && (t->inuse_objects < 0 || !strcmp(p->mode, "pprof"))) {
		/* not a profile that tracks memory, or another tool's, whose inuse values are its
		 * snapshot's (a Go heap profile), not what was left at an exit: nothing to say */
		free(idx);
		return 0;
	}

	fputc('\n', t->f);
	if (!n) {
		heading(t, "Outstanding allocations at %s%s: none", is_kmem(t) ? "the end" : "exit",
			age);
		free(idx);
		return 0;
	}
	heading(t, "Outstanding allocations at %s%s: %" PRIu64 " object%s, %s (%" PRIu64
		" bytes) at %" PRIu32 " site%s", is_kmem(t) ? "the end" : "exit", age, count, count == 1 ? "" : "s",
		render__bytes(bytes, b1, sizeof(b1)), bytes, n, n == 1 ? "" : "s");

	shown = t->o->top && t->o->top < n ? t->o->top : n;
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		fputc('\n', t->f);
		fprintf(t->f, "  %" PRIu64 " object%s, %s (%" PRIu64 " bytes), ", s->out.count,
			s->out.count == 1 ? "" : "s", render__bytes(s->out.bytes, b1, sizeof(b1)),
			s->out.bytes);
		print_pid(t, s->pid);
		/* a saved profile has no ages: "0 ns" would be false */
		if (p->from_pprof)
			fputc('\n', t->f);
		else
			fprintf(t->f, ", oldest %s, youngest %s\n",
				render__duration(s->out.max_age_ns, b2, sizeof(b2)),
				render__duration(s->out.min_age_ns, b3, sizeof(b3)));
		/* kernel stacks are deep: kmem's user frames (who made the kernel allocate)
		 * come after a dozen or more kernel ones */
		print_stack(t, 4, s, true, is_kmem(t) ? 0 : OUTSTANDING_FRAMES);
	}
	if (shown < n)
		fprintf(t->f, "\n  ... %" PRIu32 " more site%s not shown\n", n - shown,
			n - shown == 1 ? "" : "s");
	free(idx);
	return 0;
}

/* ---- mappings (--mmap) ------------------------------------------------------------------ */

static int map_out_cmp(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct prof_sample *x = &p->samples[*(const uint32_t *)a];
	const struct prof_sample *y = &p->samples[*(const uint32_t *)b];

	if (x->out.bytes != y->out.bytes)
		return x->out.bytes > y->out.bytes ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The mapping category: its sites by bytes mapped, then the regions still mapped at the end. */
static int print_mappings(const struct text *t)
{
	const struct profile *p = t->p;
	uint32_t *idx, n, i, k, shown;
	uint64_t count = 0, bytes = 0;
	char b1[32], b2[32], b3[32];

	if (t->mmap_objects < 0 || t->mmap_space < 0)
		return 0;
	idx = render__sorted_samples(p, t->mmap_space, false, &n);
	if (!idx)
		return -errno;
	for (i = k = 0; i < n; i++)
		if (is_map_sample(t, &p->samples[idx[i]]))
			idx[k++] = idx[i];
	n = k;
	shown = t->o->top && t->o->top < n ? t->o->top : n;
	fputc('\n', t->f);
	if (!n)
		heading(t, "Mapping sites (mmap, mremap, brk; apart from the allocations): none");
	else
		heading(t, "Top %" PRIu32 " mapping site%s by bytes (of %" PRIu32 "; mmap, mremap, "
			"brk: a category apart, not in the allocation numbers)", shown,
			shown == 1 ? "" : "s", n);
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];
		uint64_t c = uvalue(s, t->mmap_objects), by = uvalue(s, t->mmap_space);

		fputc('\n', t->f);
		fprintf(t->f, "#%-3" PRIu32 " %s (%" PRIu64 " bytes) in %" PRIu64 " region%s, %" PRIu64
			" live (%s), ", i + 1, render__bytes(by, b1, sizeof(b1)), by, c,
			c == 1 ? "" : "s", uvalue(s, t->mmap_inuse_objects),
			render__bytes(uvalue(s, t->mmap_inuse_space), b2, sizeof(b2)));
		print_pid(t, s->pid);
		fputc('\n', t->f);
		print_stack(t, 4, s, false, 0);
		if (s->hist)
			render__text_buckets(t->f, "    ", "sizes", s->hist, s->nhist,
					     render__size_bucket_label);
	}

	/* outstanding regions, by bytes */
	for (i = k = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		if (!s->out.count)
			continue;
		idx[k++] = idx[i];
		count += s->out.count;
		bytes += s->out.bytes;
	}
	qsort_r(idx, k, sizeof(*idx), map_out_cmp, (void *)p);
	fputc('\n', t->f);
	if (!k) {
		heading(t, "Mappings still mapped at exit: none");
		free(idx);
		return 0;
	}
	heading(t, "Mappings still mapped at exit: %" PRIu64 " region%s, %s (%" PRIu64 " bytes) at "
		"%" PRIu32 " site%s", count, count == 1 ? "" : "s",
		render__bytes(bytes, b1, sizeof(b1)), bytes, k, k == 1 ? "" : "s");
	shown = t->o->top && t->o->top < k ? t->o->top : k;
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		fputc('\n', t->f);
		fprintf(t->f, "  %" PRIu64 " region%s, %s (%" PRIu64 " bytes), ", s->out.count,
			s->out.count == 1 ? "" : "s", render__bytes(s->out.bytes, b1, sizeof(b1)),
			s->out.bytes);
		print_pid(t, s->pid);
		fprintf(t->f, ", oldest %s, youngest %s\n",
			render__duration(s->out.max_age_ns, b2, sizeof(b2)),
			render__duration(s->out.min_age_ns, b3, sizeof(b3)));
		print_stack(t, 4, s, false, OUTSTANDING_FRAMES);
	}
	if (shown < k)
		fprintf(t->f, "\n  ... %" PRIu32 " more site%s not shown\n", k - shown,
			k - shown == 1 ? "" : "s");
	free(idx);
	return 0;
}

/* ---- leaks (reachability scans) --------------------------------------------------------- */

static void print_leak_line(const struct text *t, const char *title, uint64_t bytes,
			    uint64_t count)
{
	fprintf(t->f, "    %15s: %" PRIu64 " bytes in %" PRIu64 " block%s\n", title, bytes, count,
		count == 1 ? "" : "s");
}

/* valgrind's LEAK SUMMARY, per scanned process; classes leave suppressed blocks out */
static void print_leak_summary(const struct text *t, const struct prof_process *proc)
{
	const struct prof_scan *sc = &proc->scan;
	char b1[32], b2[32], b3[32];
	uint64_t sup_n = 0, sup_b = 0;
	bool heur = false;

	fprintf(t->f, "\n  pid %" PRIu32 " (%s): scanned %s (%s into the run), stopped %s, %s read",
		proc->pid, proc->comm ? proc->comm : "?", sc->at_exit ? "at exit" : "while running",
		render__duration(sc->t_ns > 0 ? sc->t_ns : 0, b1, sizeof(b1)),
		render__duration(sc->stopped_ns, b2, sizeof(b2)),
		render__bytes(sc->scanned_bytes, b3, sizeof(b3)));
	if (sc->threads_unknown)
		fprintf(t->f, ", %" PRIu32 " thread%s without registers", sc->threads_unknown,
			sc->threads_unknown == 1 ? "" : "s");
	fputc('\n', t->f);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		print_leak_line(t, prof_leak_class_titles[c], sc->bytes[c] - sc->suppressed_bytes[c],
				sc->count[c] - sc->suppressed_count[c]);
		sup_n += sc->suppressed_count[c];
		sup_b += sc->suppressed_bytes[c];
		if (c != PROF_LEAK_REACHABLE)
			continue;
		for (int h = 1; h < PROF_LEAK_HEURISTICS; h++) {
			if (!sc->heur_count[h])
				continue;
			if (!heur)
				fprintf(t->f, "%21sof which reachable via heuristic:\n", "");
			heur = true;
			fprintf(t->f, "%23s%-19s: %" PRIu64 " bytes in %" PRIu64 " block%s\n", "",
				prof_leak_heuristic_names[h], sc->heur_bytes[h], sc->heur_count[h],
				sc->heur_count[h] == 1 ? "" : "s");
		}
	}
	print_leak_line(t, "suppressed", sup_b, sup_n);
}

static uint64_t lost_bytes(const struct text *t, const struct prof_sample *s, uint64_t *count)
{
	uint64_t b = 0;

	*count = 0;
	for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++) {
		*count += uvalue(s, profile__leak_type(t->p, c, false));
		b += uvalue(s, profile__leak_type(t->p, c, true));
	}
	return b;
}

struct lost_key {
	uint64_t bytes;
	uint32_t idx;
};

static int lost_cmp(const void *a, const void *b)
{
	const struct lost_key *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int print_leaks(const struct text *t)
{
	const struct profile *p = t->p;
	struct lost_key *keys;
	uint32_t n = 0, nscanned = 0, shown, i;
	char b1[32];

	for (i = 0; i < p->nprocesses; i++)
		nscanned += p->processes[i].scan.done;
	if (!nscanned || profile__leak_type(p, PROF_LEAK_DEFINITE, true) < 0)
		return 0;
	fputc('\n', t->f);
	heading(t, "Leak summary (reachability, as valgrind's memcheck classifies it)");
	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].scan.done)
			print_leak_summary(t, &p->processes[i]);

	keys = calloc(p->nsamples ? p->nsamples : 1, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++) {
		uint64_t count;
		uint64_t bytes = lost_bytes(t, &p->samples[i], &count);

		if (count && !p->samples[i].suppressed)
			keys[n++] = (struct lost_key){ bytes, i };
	}
	qsort(keys, n, sizeof(*keys), lost_cmp);
	fputc('\n', t->f);
	if (!n) {
		heading(t, "Lost blocks by site: none");
		free(keys);
		return 0;
	}
	heading(t, "Lost blocks by site (definitely, indirectly or possibly lost): %" PRIu32
		" site%s", n, n == 1 ? "" : "s");
	shown = t->o->top && t->o->top < n ? t->o->top : n;
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[keys[i].idx];
		const char *sep = "";

		uint32_t classes = 0;

		for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++)
			classes += uvalue(s, profile__leak_type(p, c, false)) > 0;
		fprintf(t->f, "\n  %s (%" PRIu64 " bytes): ", render__bytes(keys[i].bytes, b1,
			sizeof(b1)), keys[i].bytes);
		for (int c = PROF_LEAK_DEFINITE; c <= PROF_LEAK_POSSIBLE; c++) {
			uint64_t cn = uvalue(s, profile__leak_type(p, c, false));

			if (!cn)
				continue;
			fprintf(t->f, "%s%" PRIu64 " block%s %s", sep, cn, cn == 1 ? "" : "s",
				prof_leak_class_titles[c]);
			if (classes > 1)
				fprintf(t->f, " (%" PRIu64 " bytes)",
					uvalue(s, profile__leak_type(p, c, true)));
			sep = ", ";
		}
		fputs(", ", t->f);
		print_pid(t, s->pid);
		fputc('\n', t->f);
		/* kernel stacks are deep: kmem's user frames (who made the kernel allocate)
		 * come after a dozen or more kernel ones */
		print_stack(t, 4, s, true, is_kmem(t) ? 0 : OUTSTANDING_FRAMES);
	}
	if (shown < n)
		fprintf(t->f, "\n  ... %" PRIu32 " more site%s not shown\n", n - shown,
			n - shown == 1 ? "" : "s");
	free(keys);
	return 0;
}

/* ---- growth ----------------------------------------------------------------------------- */

/* Sites ranked by how fast their live bytes grew over the later half of the run; only when the
 * run was long enough for trends (see growth.c). */
static int print_growth(const struct text *t)
{
	const struct profile *p = t->p;
	uint32_t *idx, n, shown, i;
	char b1[32];

	idx = render__growth_order(p, &n);
	if (!idx)
		return -errno;
	if (!n) {
		free(idx);
		return 0;
	}
	shown = t->o->top && t->o->top < n ? t->o->top : n;
	fputc('\n', t->f);
	heading(t, "Growth of live bytes per site, fastest first (%" PRIu32 " site%s; rate and "
		"trend over the later half of the run)", n, n == 1 ? "" : "s");
	for (i = 0; i < shown; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];
		const struct prof_growth *g = &s->growth;

		fputc('\n', t->f);
		fprintf(t->f, "#%-3" PRIu32 " %s %s: %" PRId64 " -> %" PRId64 " bytes (max %" PRId64
			"), ", i + 1, render__rate(g->bytes_per_sec, b1, sizeof(b1)),
			prof_trend__name(g->trend), g->first_bytes, g->last_bytes, g->max_bytes);
		print_pid(t, s->pid);
		fputc('\n', t->f);
		print_stack(t, 4, s, true, GROWTH_FRAMES);
	}
	if (shown < n)
		fprintf(t->f, "\n  ... %" PRIu32 " more site%s not shown\n", n - shown,
			n - shown == 1 ? "" : "s");
	free(idx);
	return 0;
}

/* ---- drops and notes -------------------------------------------------------------------- */


static int text_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	static const struct output_opts defaults = { .top = 10 };
	struct text t = {
		.p = p, .o = o ? o : &defaults, .f = f,
		.alloc_objects = profile__type_index(p, "alloc_objects"),
		.alloc_space = profile__type_index(p, "alloc_space"),
		.inuse_objects = profile__type_index(p, "inuse_objects"),
		.inuse_space = profile__type_index(p, "inuse_space"),
		.mmap_objects = profile__type_index(p, "mmap_objects"),
		.mmap_space = profile__type_index(p, "mmap_space"),
		.mmap_inuse_objects = profile__type_index(p, "mmap_inuse_objects"),
		.mmap_inuse_space = profile__type_index(p, "mmap_inuse_space"),
	};
	int err;

	if (p->nparts)
		return render__set_text(p, o, f);
	/* values that are not allocations get a report of functions and stacks */
	if (!render__is_alloc_profile(p))
		return render__text_stacks(p, t.o, f);
	render__text_header(f, p, t.o->color);
	err = print_processes(&t);
	if (!err)
		err = print_sites(&t, t.o->sort == OUTPUT_SORT_COUNT);
	/* kmem: by count too (many small objects and few large pages rank differently) */
	if (!err && is_kmem(&t))
		err = print_sites(&t, t.o->sort != OUTPUT_SORT_COUNT);
	if (!err && is_kmem(&t))
		err = print_caches(&t);
	if (!err)
		err = print_outstanding(&t);
	if (!err)
		err = print_mappings(&t);
	if (!err)
		err = print_growth(&t);
	if (!err)
		err = print_leaks(&t);
	if (err)
		return err;
	render__text_drops(t.f, t.p, t.o->color, "these events were not fully accounted");
	render__text_notes(t.f, t.p, t.o->color);
	return ferror(f) ? -EIO : 0;
}

const struct output_ops output_text = {
	.name = "text",
	.ext = ".txt",
	.write = text_write,
};
