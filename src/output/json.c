/* The JSON report: a stable contract for scripts, documented in docs/JSON.md. Anything that
 * changes a field's name or meaning here must change that document too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"
#include "output/output.h"
#include "output/render.h"

/* Field names of a process or a site that stats or sample types must not shadow. */
static const char *const process_fields[] = {
	"pid", "comm", "cmdline", "calls", "note", "leaks", "growth_window", "peak", "allocator", "mmap",
	"ppid", "ns_pid", "largest_request",
};
static const char *const site_fields[] = {
	"pid", "frames", "histogram", "outstanding", "temporary_count", "lifetimes", "leaks",
	"growth", "category",
};

static bool reserved(const char *const *list, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(list[i], name) == 0)
			return true;
	}
	return false;
}

#define RESERVED(list, name) reserved(list, sizeof(list) / sizeof(list[0]), name)

static void write_class(struct json_writer *w, const char *name, uint64_t count, uint64_t bytes)
{
	jsonw_name(w, name);
	jsonw_start_object_flat(w);
	jsonw_uint_field(w, "count", count);
	jsonw_uint_field(w, "bytes", bytes);
	jsonw_end_object(w);
}

/* A process's last reachability scan: valgrind's leak summary (classes without the suppressed
 * blocks, which are summed apart) and what the scan cost. */
/* Which allocator, and each object traced with the functions probed there. */
static void write_allocator(struct json_writer *w, const struct prof_process *proc)
{
	jsonw_name(w, "allocator");
	jsonw_start_object(w);
	jsonw_string_field(w, "kind", proc->allocator);
	jsonw_name(w, "objects");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < proc->nalloc_objs; i++) {
		const struct prof_alloc_obj *o = &proc->alloc_objs[i];
		const char *f = o->functions;
		char name[64];

		jsonw_start_object(w);
		jsonw_string_field(w, "path", o->path);
		jsonw_string_field(w, "kind", o->kind);
		jsonw_name(w, "functions");
		jsonw_start_array_flat(w);
		while (f && *f) {
			size_t n = strcspn(f, ",");

			snprintf(name, sizeof(name), "%.*s", (int)n, f);
			jsonw_string(w, name);
			f += n + (f[n] == ',');
		}
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void write_scan(struct json_writer *w, const struct prof_scan *sc)
{
	uint64_t sup_n = 0, sup_b = 0;

	jsonw_name(w, "leaks");
	jsonw_start_object(w);
	jsonw_bool_field(w, "at_exit", sc->at_exit);
	jsonw_int_field(w, "t_ns", sc->t_ns);
	jsonw_uint_field(w, "stopped_ns", sc->stopped_ns);
	jsonw_uint_field(w, "scanned_bytes", sc->scanned_bytes);
	jsonw_uint_field(w, "unreadable_bytes", sc->unreadable_bytes);
	jsonw_uint_field(w, "read_calls", sc->read_calls);
	jsonw_uint_field(w, "threads", sc->threads);
	jsonw_uint_field(w, "threads_without_registers", sc->threads_unknown);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		write_class(w, prof_leak_class_names[c], sc->count[c] - sc->suppressed_count[c],
			    sc->bytes[c] - sc->suppressed_bytes[c]);
		sup_n += sc->suppressed_count[c];
		sup_b += sc->suppressed_bytes[c];
	}
	write_class(w, "suppressed", sup_n, sup_b);
	jsonw_name(w, "reachable_via_heuristic");
	jsonw_start_object(w);
	for (int h = 1; h < PROF_LEAK_HEURISTICS; h++)
		if (sc->heur_count[h])
			write_class(w, prof_leak_heuristic_names[h], sc->heur_count[h],
				    sc->heur_bytes[h]);
	jsonw_end_object(w);
	jsonw_end_object(w);
}

static bool is_leak_type(const struct profile *p, uint32_t t)
{
	for (int c = 0; c < PROF_LEAK__COUNT; c++)
		if (profile__leak_type(p, c, false) == (int)t ||
		    profile__leak_type(p, c, true) == (int)t)
			return true;
	return false;
}

/* A site's blocks by class at the last scan (only in runs that scanned). */
static void write_site_leaks(struct json_writer *w, const struct profile *p,
			     const struct prof_sample *s)
{
	if (profile__leak_type(p, PROF_LEAK_DEFINITE, false) < 0)
		return;
	jsonw_name(w, "leaks");
	jsonw_start_object(w);
	for (int c = 0; c < PROF_LEAK__COUNT; c++) {
		int to = profile__leak_type(p, c, false), tb = profile__leak_type(p, c, true);

		write_class(w, prof_leak_class_names[c], to >= 0 ? s->values[to] : 0,
			    tb >= 0 ? s->values[tb] : 0);
	}
	jsonw_bool_field(w, "suppressed", s->suppressed);
	jsonw_end_object(w);
}

/* Which trend window a process's sites were fitted over: present once it was snapshotted. */
static void write_growth_window(struct json_writer *w, const struct prof_process *proc)
{
	if (!proc->nsnapshots)
		return;
	jsonw_name(w, "growth_window");
	jsonw_start_object_flat(w);
	jsonw_uint_field(w, "snapshots", proc->nsnapshots);
	if (proc->fit_to_ns > proc->fit_from_ns) {
		jsonw_int_field(w, "from_ns", proc->fit_from_ns);
		jsonw_int_field(w, "to_ns", proc->fit_to_ns);
	} else {
		jsonw_null_field(w, "from_ns");
		jsonw_null_field(w, "to_ns");
	}
	jsonw_end_object(w);
}

/* The process's peak; its sites by their index in the report's `sites` (pos: per sample). */
static void write_peak(struct json_writer *w, const struct prof_process *proc,
		       const uint32_t *pos)
{
	const struct prof_peak *pk = &proc->peak;
	uint32_t i;

	if (!pk->known)
		return;
	jsonw_name(w, "peak");
	jsonw_start_object(w);
	jsonw_uint_field(w, "bytes", pk->bytes);
	if (pk->t_ns >= 0)
		jsonw_int_field(w, "t_ns", pk->t_ns);
	else
		jsonw_null_field(w, "t_ns");
	if (pk->snapshot_t_ns >= 0) {
		jsonw_int_field(w, "snapshot_t_ns", pk->snapshot_t_ns);
		jsonw_uint_field(w, "snapshot_bytes", pk->snapshot_bytes);
	} else {
		jsonw_null_field(w, "snapshot_t_ns");
		jsonw_null_field(w, "snapshot_bytes");
	}
	jsonw_name(w, "sites");
	jsonw_start_array(w);
	for (i = 0; i < pk->nsites; i++) {
		jsonw_start_object_flat(w);
		jsonw_uint_field(w, "site", pos[pk->sites[i].sample]);
		jsonw_uint_field(w, "bytes", pk->sites[i].bytes);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
}

/* The process's largest request; its site by its index in the report's `sites`. */
static void write_largest(struct json_writer *w, const struct prof_process *proc,
			  const uint32_t *pos)
{
	const struct prof_largest *lg = &proc->largest;

	if (!lg->known)
		return;
	jsonw_name(w, "largest_request");
	jsonw_start_object_flat(w);
	jsonw_uint_field(w, "bytes", lg->bytes);
	if (lg->t_ns >= 0)
		jsonw_int_field(w, "t_ns", lg->t_ns);
	else
		jsonw_null_field(w, "t_ns");
	if (lg->sample != PROF_NONE)
		jsonw_uint_field(w, "site", pos[lg->sample]);
	else
		jsonw_null_field(w, "site");
	jsonw_end_object(w);
}

/* --mmap: the process's own mappings, a category apart from the malloc numbers: the stats
 * "mmap_calls_<fn>" as "calls", the other "mmap_<name>" as "<name>". */
static void write_process_maps(struct json_writer *w, const struct prof_process *proc)
{
	uint32_t j;

	if (!prof_process__stat(proc, "mmap_mapped_count", NULL))
		return;
	jsonw_name(w, "mmap");
	jsonw_start_object(w);
	jsonw_name(w, "calls");
	jsonw_start_object_flat(w);
	for (j = 0; j < proc->nstats; j++)
		if (!strncmp(proc->stats[j].key, "mmap_calls_", 11))
			jsonw_uint_field(w, proc->stats[j].key + 11, proc->stats[j].value);
	jsonw_end_object(w);
	for (j = 0; j < proc->nstats; j++)
		if (!strncmp(proc->stats[j].key, "mmap_", 5) &&
		    strncmp(proc->stats[j].key, "mmap_calls_", 11))
			jsonw_uint_field(w, proc->stats[j].key + 5, proc->stats[j].value);
	jsonw_end_object(w);
}

/* The stats "<group>_<name>" as an object "<group>" of "<name>" fields (kmem's counters). */
static void write_stat_group(struct json_writer *w, const struct prof_kv *stats, uint32_t n,
			     const char *group)
{
	size_t gl = strlen(group);
	bool any = false;
	uint32_t j;

	for (j = 0; j < n; j++) {
		if (strncmp(stats[j].key, group, gl) || stats[j].key[gl] != '_')
			continue;
		if (!any) {
			jsonw_name(w, group);
			jsonw_start_object(w);
			any = true;
		}
		jsonw_uint_field(w, stats[j].key + gl + 1, stats[j].value);
	}
	if (any)
		jsonw_end_object(w);
}

/* kmem: each process's use of each slab cache (and kmalloc size class); null in a kmem profile
 * read back, which has no place for them (not known, where an absent field said none). */
static void write_caches(struct json_writer *w, const struct profile *p)
{
	if (p->from_pprof && !strcmp(p->mode, "kmem")) {
		jsonw_name(w, "caches");
		jsonw_string(w, NULL);
		return;
	}
	if (!p->ncaches)
		return;
	jsonw_name(w, "caches");
	jsonw_start_array(w);
	for (uint32_t i = 0; i < p->ncaches; i++) {
		const struct prof_cache *c = &p->caches[i];

		jsonw_start_object_flat(w);
		jsonw_string_field(w, "name", c->name);
		jsonw_uint_field(w, "pid", c->pid);
		jsonw_uint_field(w, "allocs", c->allocs);
		jsonw_uint_field(w, "frees", c->frees);
		jsonw_uint_field(w, "bytes_req", c->bytes_req);
		jsonw_uint_field(w, "bytes_alloc", c->bytes_alloc);
		jsonw_uint_field(w, "live", c->live);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void write_processes(struct json_writer *w, const struct profile *p, const uint32_t *pos)
{
	uint32_t i, j;

	jsonw_name(w, "processes");
	jsonw_start_array(w);
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *proc = &p->processes[i];

		jsonw_start_object(w);
		jsonw_uint_field(w, "pid", proc->pid);
		if (proc->ppid)
			jsonw_uint_field(w, "ppid", proc->ppid);
		if (proc->ns_pid)
			jsonw_uint_field(w, "ns_pid", proc->ns_pid);
		jsonw_string_field(w, "comm", proc->comm);
		jsonw_string_field(w, "cmdline", proc->cmdline);
		/* a mode that traces no functions has no calls; a saved profile none known */
		if (proc->ncalls || (render__traces_calls(p) && !p->from_pprof)) {
			jsonw_name(w, "calls");
			jsonw_start_object_flat(w);
			for (j = 0; j < proc->ncalls; j++)
				jsonw_uint_field(w, proc->calls[j].key, proc->calls[j].value);
			jsonw_end_object(w);
		}
		for (j = 0; j < proc->nstats; j++) {
			if (!RESERVED(process_fields, proc->stats[j].key) &&
			    strncmp(proc->stats[j].key, "mmap_", 5) &&
			    strncmp(proc->stats[j].key, "kmem_", 5))
				jsonw_uint_field(w, proc->stats[j].key, proc->stats[j].value);
		}
		write_process_maps(w, proc);
		write_stat_group(w, proc->stats, proc->nstats, "kmem");
		if (proc->note)
			jsonw_string_field(w, "note", proc->note);
		if (proc->allocator)
			write_allocator(w, proc);
		if (proc->scan.done)
			write_scan(w, &proc->scan);
		write_growth_window(w, proc);
		write_peak(w, proc, pos);
		write_largest(w, proc, pos);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* Calls and statistics summed over every process (not peaks: each process peaked at its own
 * time; max_request is the largest of all). */
static void write_totals(struct json_writer *w, const struct profile *p)
{
	struct prof_kv *calls = NULL, *stats = NULL;
	uint32_t ncalls = 0, nstats = 0, i, j, k;

	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *proc = &p->processes[i];

		for (j = 0; j < proc->ncalls + proc->nstats; j++) {
			bool is_call = j < proc->ncalls;
			const struct prof_kv *kv = is_call ? &proc->calls[j]
							   : &proc->stats[j - proc->ncalls];
			struct prof_kv **list = is_call ? &calls : &stats;
			uint32_t *n = is_call ? &ncalls : &nstats;

			if (!is_call && (!strcmp(kv->key, "peak_live_bytes") ||
					 RESERVED(process_fields, kv->key)))
				continue;
			for (k = 0; k < *n && strcmp((*list)[k].key, kv->key); k++)
				;
			if (k == *n) {
				struct prof_kv *nl = realloc(*list, (*n + 1) * sizeof(**list));

				if (!nl)
					goto out;
				*list = nl;
				nl[k] = (struct prof_kv){ .key = kv->key, .value = 0 };
				(*n)++;
			}
			if (!is_call && !strcmp(kv->key, "max_request"))
				(*list)[k].value = kv->value > (*list)[k].value ? kv->value
									: (*list)[k].value;
			else
				(*list)[k].value += kv->value;
		}
	}
	jsonw_name(w, "totals");
	jsonw_start_object(w);
	jsonw_uint_field(w, "processes", p->nprocesses);
	if (ncalls || (render__traces_calls(p) && !p->from_pprof)) {
		jsonw_name(w, "calls");
		jsonw_start_object_flat(w);
		for (k = 0; k < ncalls; k++)
			jsonw_uint_field(w, calls[k].key, calls[k].value);
		jsonw_end_object(w);
	}
	for (k = 0; k < nstats; k++)
		if (strncmp(stats[k].key, "kmem_", 5))
			jsonw_uint_field(w, stats[k].key, stats[k].value);
	write_stat_group(w, stats, nstats, "kmem");
	jsonw_end_object(w);
out:
	free(calls);
	free(stats);
}

static void write_frames(struct json_writer *w, const struct profile *p,
			 const struct prof_sample *s)
{
	uint32_t i, j;

	jsonw_name(w, "frames");
	jsonw_start_array(w);
	for (i = 0; i < s->nlocs; i++) {
		const struct prof_location *loc = &p->locations[s->locs[i]];
		uint32_t n = loc->nlines ? loc->nlines : 1;
		const char *module = NULL;

		if (loc->mapping != PROF_NONE)
			module = p->mappings[loc->mapping].file;
		for (j = 0; j < n; j++) {
			const struct prof_function *fn = NULL;

			if (j < loc->nlines)
				fn = &p->functions[loc->lines[j].function];
			jsonw_start_object_flat(w);
			jsonw_string_field(w, "function", fn ? fn->name : NULL);
			jsonw_string_field(w, "file", fn ? fn->filename : NULL);
			if (fn && loc->lines[j].line > 0)
				jsonw_int_field(w, "line", loc->lines[j].line);
			else
				jsonw_null_field(w, "line");
			jsonw_string_field(w, "module", module);
			if (profile__location_is_synthetic(loc))
				jsonw_null_field(w, "address");
			else
				jsonw_hex_field(w, "address", loc->address);
			if (module)
				jsonw_hex_field(w, "offset", loc->module_offset);
			else
				jsonw_null_field(w, "offset");
			/* inlined into the next frame, which shares the address */
			if (j + 1 < loc->nlines)
				jsonw_bool_field(w, "inlined", true);
			if (profile__location_is_kernel(p, loc))
				jsonw_bool_field(w, "kernel", true);
			if (profile__location_is_synthetic(loc))
				jsonw_bool_field(w, "synthetic", true);
			if (fn && fn->cfi_named)
				jsonw_bool_field(w, "cfi_named", true);
			jsonw_end_object(w);
		}
	}
	jsonw_end_array(w);
}

/* A log2 histogram's non-empty buckets as [{min, max, count}] (max null: open-ended). */
static void write_buckets(struct json_writer *w, const char *name, const char *min_f,
			  const char *max_f, const uint64_t *c, uint32_t n)
{
	uint64_t min, max;
	uint32_t b;

	jsonw_name(w, name);
	jsonw_start_array(w);
	/* buckets past 64 cannot hold a 64-bit value */
	for (b = 0; c && b < n && b <= 64; b++) {
		if (!c[b])
			continue;
		jsonw_start_object_flat(w);
		if (render__bucket(b, n, &min, &max)) {
			jsonw_uint_field(w, min_f, min);
			jsonw_uint_field(w, max_f, max);
		} else {
			jsonw_uint_field(w, min_f, min);
			jsonw_null_field(w, max_f);
		}
		jsonw_uint_field(w, "count", c[b]);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static const struct {
	const char *alias, *type;
} aliases[] = {
	{ "alloc_count", "alloc_objects" },
	{ "alloc_bytes", "alloc_space" },
	{ "live_count", "inuse_objects" },
	{ "live_bytes", "inuse_space" },
};

static void write_growth(struct json_writer *w, const struct prof_growth *g)
{
	if (g->trend == PROF_TREND_NONE)
		return;
	jsonw_name(w, "growth");
	jsonw_start_object_flat(w);
	/* rounded: a rate below a byte a second says nothing */
	jsonw_int_field(w, "bytes_per_sec", (int64_t)(g->bytes_per_sec < 0 ? g->bytes_per_sec - 0.5 :
						     g->bytes_per_sec + 0.5));
	jsonw_string_field(w, "trend", prof_trend__name(g->trend));
	jsonw_int_field(w, "first_bytes", g->first_bytes);
	jsonw_int_field(w, "last_bytes", g->last_bytes);
	jsonw_int_field(w, "max_bytes", g->max_bytes);
	jsonw_end_object(w);
}

/* A mode's summary rows (io: a disk and an operation each): labels, numbers as fields of
 * their own, histograms with their non-empty slots. */
static void write_groups(struct json_writer *w, const struct profile *p)
{
	uint64_t min, max;

	jsonw_name(w, "groups");
	jsonw_start_array(w);
	for (uint32_t g = 0; g < p->ngroups; g++) {
		const struct prof_group *gr = &p->groups[g];

		jsonw_start_object(w);
		jsonw_name(w, "labels");
		jsonw_start_object_flat(w);
		for (uint32_t i = 0; i < gr->nlabels; i++)
			jsonw_string_field(w, gr->labels[i].key, gr->labels[i].value);
		jsonw_end_object(w);
		for (uint32_t i = 0; i < gr->nstats; i++) {
			const char *name = gr->stats[i].name;

			if (strcmp(name, "labels") && strcmp(name, "histograms"))
				jsonw_int_field(w, name, gr->stats[i].value);
		}
		jsonw_name(w, "histograms");
		jsonw_start_array(w);
		for (uint32_t h = 0; h < gr->nhists; h++) {
			const struct prof_hist *hi = &gr->hists[h];

			jsonw_start_object(w);
			jsonw_string_field(w, "name", hi->name);
			jsonw_string_field(w, "unit", hi->unit);
			jsonw_uint_field(w, "sub_buckets", hi->sub);
			jsonw_name(w, "buckets");
			jsonw_start_array(w);
			for (uint32_t i = 0; i < hi->n; i++) {
				if (!hi->counts[i])
					continue;
				jsonw_start_object_flat(w);
				if (prof_hist__slot(hi, i, &min, &max)) {
					jsonw_uint_field(w, "min", min);
					jsonw_uint_field(w, "max", max);
				} else {
					jsonw_uint_field(w, "min", min);
					jsonw_null_field(w, "max");
				}
				jsonw_uint_field(w, "count", hi->counts[i]);
				jsonw_end_object(w);
			}
			jsonw_end_array(w);
			jsonw_end_object(w);
		}
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* idx: the samples in the report's order (n of them). */
static int write_sites(struct json_writer *w, const struct profile *p, const uint32_t *idx,
		       uint32_t n)
{
	int mmap_objects = profile__type_index(p, "mmap_objects");
	bool alloc = render__is_alloc_profile(p);
	uint32_t i, t;
	size_t a;

	jsonw_name(w, "sites");
	jsonw_start_array(w);
	for (i = 0; i < n; i++) {
		const struct prof_sample *s = &p->samples[idx[i]];

		jsonw_start_object(w);
		jsonw_uint_field(w, "pid", s->pid);
		/* with --mmap, which category the site is of: its values are 0 in the other's */
		if (mmap_objects >= 0)
			jsonw_string_field(w, "category",
					   s->values[mmap_objects] > 0 ? "mmap" : "malloc");
		write_frames(w, p, s);
		for (t = 0; t < p->ntypes; t++) {
			if (!RESERVED(site_fields, p->types[t].type) && !is_leak_type(p, t))
				jsonw_int_field(w, p->types[t].type, s->values[t]);
		}
		for (a = 0; a < sizeof(aliases) / sizeof(aliases[0]); a++) {
			int ti = profile__type_index(p, aliases[a].type);

			if (ti >= 0 && profile__type_index(p, aliases[a].alias) < 0)
				jsonw_int_field(w, aliases[a].alias, s->values[ti]);
		}
		/* sizes, temporaries and lifetimes are allocations' only */
		if (alloc) {
			write_buckets(w, "histogram", "min", "max", s->hist, s->nhist);
			jsonw_uint_field(w, "temporary_count", s->temporary);
			write_buckets(w, "lifetimes", "min_ns", "max_ns", s->life, s->nlife);
		}
		if (s->out.count) {
			jsonw_name(w, "outstanding");
			jsonw_start_object_flat(w);
			jsonw_uint_field(w, "count", s->out.count);
			jsonw_uint_field(w, "bytes", s->out.bytes);
			jsonw_uint_field(w, "min_age_ns", s->out.min_age_ns);
			jsonw_uint_field(w, "max_age_ns", s->out.max_age_ns);
			jsonw_uint_field(w, "mean_age_ns", s->out.sum_age_ns / s->out.count);
			jsonw_end_object(w);
		}
		write_site_leaks(w, p, s);
		write_growth(w, &s->growth);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	return 0;
}

static int json_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct json_writer *w = jsonw__new(f, true);
	uint32_t *idx = NULL, *pos = NULL, n, i;
	int err;

	if (p->nparts) {
		jsonw__free(w);
		return render__set_json(p, o, f);
	}
	if (!w)
		return -ENOMEM;
	/* the sites' order first: a process's peak names its sites by their place in it */
	idx = render__sorted_samples(p, (int)p->default_type, false, &n);
	pos = malloc(sizeof(*pos) * (p->nsamples + 1));
	if (!idx || !pos) {
		err = idx ? -ENOMEM : -errno;
		goto out;
	}
	for (i = 0; i < n; i++)
		pos[idx[i]] = i;
	jsonw_start_object(w);
	jsonw_string_field(w, "mode", p->mode);
	jsonw_string_field(w, "command", p->command);
	jsonw_string_field(w, "kernel", p->kernel);
	jsonw_int_field(w, "time_nanos", p->time_nanos);
	jsonw_int_field(w, "duration_ns", p->duration_nanos);
	if (p->sampling) {
		/* values are estimates from sampled tracking (or alloc-only counts) */
		jsonw_name(w, "sampling");
		jsonw_start_object_flat(w);
		jsonw_string_field(w, "mode", p->sampling);
		if (strcmp(p->sampling, "alloc-only"))
			jsonw_uint_field(w, "period", p->sample_period);
		jsonw_bool_field(w, "estimated", strcmp(p->sampling, "alloc-only") != 0);
		jsonw_end_object(w);
	}
	if (p->period_type.type) {
		/* what one event of a sampled profile stands for (cpu: ns between samples) */
		jsonw_name(w, "period");
		jsonw_start_object_flat(w);
		jsonw_string_field(w, "type", p->period_type.type);
		jsonw_string_field(w, "unit", p->period_type.unit);
		jsonw_int_field(w, "value", p->period);
		jsonw_end_object(w);
	}
	if (p->ninfo) {
		/* the run's facts, as the collector worded them, in its order */
		jsonw_name(w, "info");
		jsonw_start_object(w);
		for (i = 0; i < p->ninfo; i++)
			jsonw_string_field(w, p->info[i].key, p->info[i].value);
		jsonw_end_object(w);
	}

	jsonw_name(w, "sample_types");
	jsonw_start_array(w);
	for (i = 0; i < p->ntypes; i++) {
		jsonw_start_object_flat(w);
		jsonw_string_field(w, "type", p->types[i].type);
		jsonw_string_field(w, "unit", p->types[i].unit);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_string_field(w, "default_sample_type",
			   p->ntypes ? p->types[p->default_type].type : NULL);

	write_processes(w, p, pos);
	write_totals(w, p);
	write_caches(w, p);
	if (p->ngroups)
		write_groups(w, p);

	jsonw_name(w, "drops");
	jsonw_start_object(w);
	for (i = 0; i < p->ndrops; i++)
		jsonw_uint_field(w, p->drops[i].key, p->drops[i].value);
	jsonw_end_object(w);

	jsonw_name(w, "notes");
	jsonw_start_array(w);
	for (i = 0; i < p->nnotes; i++) {
		char buf[PROF_NOTE_MAX];

		jsonw_string(w, profile__note(p, i, buf, sizeof(buf)));
	}
	jsonw_end_array(w);

	/* quantities sampled during the run: [t_ns since time_nanos, value] pairs */
	jsonw_name(w, "series");
	jsonw_start_array(w);
	for (i = 0; i < p->nseries; i++) {
		const struct prof_series *ps = &p->series[i];

		jsonw_start_object(w);
		jsonw_uint_field(w, "pid", ps->pid);
		jsonw_string_field(w, "name", ps->name);
		jsonw_string_field(w, "unit", ps->unit);
		jsonw_name(w, "points");
		jsonw_start_array_flat(w);
		for (uint32_t j = 0; j < ps->n; j++) {
			jsonw_start_array_flat(w);
			jsonw_int(w, ps->t_ns[j]);
			jsonw_int(w, ps->v[j]);
			jsonw_end_array(w);
		}
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_uint_field(w, "min_age_ns", p->min_age_ns);
	/* the bulk last: a reader that wants the run's summary (processes, totals, drops,
	 * notes) stops before the sites, however many (docs/JSON.md) */
	err = write_sites(w, p, idx, n);
	if (err)
		goto out;

	jsonw_end_object(w);
	fputc('\n', f);
	err = jsonw__error(w);
out:
	free(pos);
	free(idx);
	jsonw__free(w);
	return err;
}

const struct output_ops output_json = {
	.name = "json",
	.ext = ".json",
	.write = json_write,
};
