/* speedscope's own file format (".speedscope.json"), documented in docs/OUTPUTS.md and specified by
 * https://www.speedscope.app/file-format-schema.json: frames shared by all profiles, then one
 * "sampled" profile per (process, sample type), each sample a stack of frame indices, root first,
 * with its value as the weight.
 *
 * Unlike the folded file, this format has room for a frame's source file and line and needs no
 * escaping of names, so frames keep their raw names and are told apart by (name, file, line);
 * that is why the call tree of flame.h (frames interned by sanitized name, samples merged) does
 * not fit here. Inline frames are expanded the same way, outermost first. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_writer.h"
#include "output/output.h"
#include "output/render.h"
#include "util/util.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"
/* Kept equal to EBPROF_VERSION (src/cli/cli.h) by test_speedscope; output/ does not include the
 * CLI's headers. */
#define SPEEDSCOPE_EXPORTER "ebprof 0.1.0"
#define LOST_NAME "[no stack]"
#define NONE UINT32_MAX

struct ss_frame {
	char *name;
	const char *file;	/* owned by the profile, or NULL */
	int64_t line;		/* 0: unknown, not written */
	uint64_t hash;
};

struct ss {
	const struct profile *p;
	struct ss_frame *frames;
	uint32_t nframes, frames_cap;
	uint32_t *slots;	/* open addressing: frame index + 1, 0 = free */
	uint32_t nslots;
	uint32_t *loc_first;	/* per location: its first id in ids, NONE = not named yet */
	uint32_t *loc_n;
	uint32_t *ids;		/* frame ids of the named locations, root side first */
	uint32_t nids, ids_cap;
	uint32_t lost;		/* frame of a stack that was not recorded, NONE until used */

	uint32_t *pids;		/* distinct pids of the samples, ascending */
	uint32_t *rank;		/* per entry of pids: its place in the profiles' order */
	uint32_t npids;
	uint32_t *order;	/* per place: index into pids */
	/* per type: samples with a positive value, grouped by process, each group in
	 * render__sorted_samples order; group r is by_type[t][start[t][r] .. start[t][r + 1]) */
	uint32_t **by_type;
	uint32_t **start;
};

static int grow(void **arr, uint32_t *cap, uint64_t need, size_t size)
{
	uint64_t n = *cap ? *cap : 64;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		return -ENOMEM;
	a = realloc(*arr, n * size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	*cap = (uint32_t)n;
	return 0;
}

static uint64_t frame_hash(const char *name, const char *file, int64_t line)
{
	uint64_t h = util_hash_str(name);

	h = util_hash_u64(h ^ (file ? util_hash_str(file) : 0x9e3779b97f4a7c15ULL));
	return util_hash_u64(h ^ (uint64_t)line);
}

static bool frame_eq(const struct ss_frame *f, const char *name, const char *file, int64_t line)
{
	if (f->line != line || strcmp(f->name, name))
		return false;
	if (!f->file || !file)
		return f->file == file;
	return strcmp(f->file, file) == 0;
}

static int rehash(struct ss *ss)
{
	uint32_t cap = ss->nslots ? ss->nslots * 2 : 256, i, h;
	uint32_t *t;

	if (cap < ss->nslots)
		return -ENOMEM;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < ss->nframes; i++) {
		h = (uint32_t)ss->frames[i].hash & (cap - 1);
		while (t[h])
			h = (h + 1) & (cap - 1);
		t[h] = i + 1;
	}
	free(ss->slots);
	ss->slots = t;
	ss->nslots = cap;
	return 0;
}

/* Index of the frame (name, file, line), added if new; NONE when out of memory. */
static uint32_t frame_intern(struct ss *ss, const char *name, const char *file, int64_t line)
{
	uint64_t hash = frame_hash(name, file, line);
	struct ss_frame *f;
	uint32_t h;

	if ((uint64_t)(ss->nframes + 1) * 2 > ss->nslots && rehash(ss))
		return NONE;
	h = (uint32_t)hash & (ss->nslots - 1);
	while (ss->slots[h]) {
		f = &ss->frames[ss->slots[h] - 1];
		if (f->hash == hash && frame_eq(f, name, file, line))
			return ss->slots[h] - 1;
		h = (h + 1) & (ss->nslots - 1);
	}
	if (ss->nframes == NONE - 1 ||
	    grow((void **)&ss->frames, &ss->frames_cap, ss->nframes + 1, sizeof(*ss->frames)))
		return NONE;
	f = &ss->frames[ss->nframes];
	*f = (struct ss_frame){ .name = strdup(name), .file = file, .line = line, .hash = hash };
	if (!f->name)
		return NONE;
	ss->slots[h] = ++ss->nframes;
	return ss->nframes - 1;
}

/* Name the frames of location li once (many samples share a location), root side first. */
static int loc_frames(struct ss *ss, uint32_t li)
{
	const struct profile *p = ss->p;
	const struct prof_location *loc = &p->locations[li];
	const char *module = loc->mapping != PROF_NONE ? p->mappings[loc->mapping].file : NULL;
	uint32_t nl = loc->nlines ? loc->nlines : 1, j;
	char name[4096];

	if (ss->loc_first[li] != NONE)
		return 0;
	if (grow((void **)&ss->ids, &ss->ids_cap, (uint64_t)ss->nids + nl, sizeof(*ss->ids)))
		return -ENOMEM;
	for (j = 0; j < nl; j++) {
		/* lines are innermost first: the root side is the last */
		uint32_t line = nl - 1 - j, id;
		const char *file = module;
		int64_t lineno = 0;

		profile__frame_name(p, loc, line, name, sizeof(name));
		if (loc->nlines) {
			const struct prof_function *fn = &p->functions[loc->lines[line].function];

			/* without a source file, the module at least says where the code is */
			if (fn->filename)
				file = fn->filename;
			if (loc->lines[line].line > 0)
				lineno = loc->lines[line].line;
		}
		id = frame_intern(ss, name, file, lineno);
		if (id == NONE)
			return -ENOMEM;
		ss->ids[ss->nids + j] = id;
	}
	ss->loc_first[li] = ss->nids;
	ss->loc_n[li] = nl;
	ss->nids += nl;
	return 0;
}

static int sample_frames(struct ss *ss, const struct prof_sample *s)
{
	uint32_t i;
	int err;

	if (!s->nlocs && ss->lost == NONE) {
		/* say so rather than credit the value to no frame at all */
		ss->lost = frame_intern(ss, LOST_NAME, NULL, 0);
		if (ss->lost == NONE)
			return -ENOMEM;
	}
	for (i = s->nlocs; i-- > 0;) {
		err = loc_frames(ss, s->locs[i]);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of pid in ss->pids (it is there: the list is made from the samples). */
static uint32_t pid_index(const struct ss *ss, uint32_t pid)
{
	const uint32_t *e = bsearch(&pid, ss->pids, ss->npids, sizeof(pid), cmp_u32);

	return (uint32_t)(e - ss->pids);
}

/*
 * The processes that have samples, in the order of the profile's process list (the order of
 * the other reports), then those the list lacks (a process whose exit was missed), by pid.
 */
static int order_processes(struct ss *ss)
{
	const struct profile *p = ss->p;
	uint32_t i, k = 0, n = 0;

	ss->pids = malloc(sizeof(*ss->pids) * (p->nsamples + 1));
	ss->rank = malloc(sizeof(*ss->rank) * (p->nsamples + 1));
	ss->order = malloc(sizeof(*ss->order) * (p->nsamples + 1));
	if (!ss->pids || !ss->rank || !ss->order)
		return -ENOMEM;
	for (i = 0; i < p->nsamples; i++)
		ss->pids[i] = p->samples[i].pid;
	qsort(ss->pids, p->nsamples, sizeof(*ss->pids), cmp_u32);
	for (i = 0; i < p->nsamples; i++) {
		if (!n || ss->pids[n - 1] != ss->pids[i])
			ss->pids[n++] = ss->pids[i];
	}
	ss->npids = n;
	for (i = 0; i < n; i++)
		ss->rank[i] = NONE;
	for (i = 0; i < p->nprocesses; i++) {
		const uint32_t *e = bsearch(&p->processes[i].pid, ss->pids, n, sizeof(uint32_t),
					    cmp_u32);

		if (e && ss->rank[e - ss->pids] == NONE) {
			ss->rank[e - ss->pids] = k;
			ss->order[k++] = (uint32_t)(e - ss->pids);
		}
	}
	for (i = 0; i < n; i++) {
		if (ss->rank[i] == NONE) {
			ss->rank[i] = k;
			ss->order[k++] = i;
		}
	}
	return 0;
}

/* For each type, the samples worth a weight, grouped by process with a stable counting sort so
 * each group keeps the order of the other reports (largest first). */
static int group_samples(struct ss *ss)
{
	const struct profile *p = ss->p;
	uint32_t t, i, n, *idx, *pos = NULL;
	int err = -ENOMEM;

	ss->by_type = calloc(p->ntypes + 1, sizeof(*ss->by_type));
	ss->start = calloc(p->ntypes + 1, sizeof(*ss->start));
	pos = malloc(sizeof(*pos) * (ss->npids + 1));
	if (!ss->by_type || !ss->start || !pos)
		goto out;
	for (t = 0; t < p->ntypes; t++) {
		uint32_t *start, *out, k = 0;

		idx = render__sorted_samples(p, (int)t, true, &n);
		if (!idx) {
			err = errno ? -errno : -ENOMEM;
			goto out;
		}
		start = calloc(ss->npids + 1, sizeof(*start));
		out = malloc(sizeof(*out) * (n + 1));
		ss->start[t] = start;
		ss->by_type[t] = out;
		if (!start || !out) {
			free(idx);
			goto out;
		}
		/* a negative value (a diff) has no weight speedscope accepts */
		for (i = 0; i < n; i++) {
			if (p->samples[idx[i]].values[t] > 0)
				idx[k++] = idx[i];
		}
		for (i = 0; i < k; i++)
			start[ss->rank[pid_index(ss, p->samples[idx[i]].pid)] + 1]++;
		for (i = 0; i < ss->npids; i++)
			start[i + 1] += start[i];
		memcpy(pos, start, sizeof(*pos) * ss->npids);
		for (i = 0; i < k; i++)
			out[pos[ss->rank[pid_index(ss, p->samples[idx[i]].pid)]]++] = idx[i];
		free(idx);
	}
	err = 0;
out:
	free(pos);
	return err;
}

/* Name the frames in the order the profiles use them, so the file reads top-down. */
static int name_frames(struct ss *ss)
{
	const struct profile *p = ss->p;
	uint32_t r, t, i;
	int err;

	for (r = 0; r < ss->npids; r++) {
		for (t = 0; t < p->ntypes; t++) {
			for (i = ss->start[t][r]; i < ss->start[t][r + 1]; i++) {
				err = sample_frames(ss, &p->samples[ss->by_type[t][i]]);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static void ss_free(struct ss *ss)
{
	uint32_t i;

	for (i = 0; i < ss->nframes; i++)
		free(ss->frames[i].name);
	free(ss->frames);
	free(ss->slots);
	free(ss->loc_first);
	free(ss->loc_n);
	free(ss->ids);
	free(ss->pids);
	free(ss->rank);
	free(ss->order);
	for (i = 0; ss->by_type && i < ss->p->ntypes; i++)
		free(ss->by_type[i]);
	for (i = 0; ss->start && i < ss->p->ntypes; i++)
		free(ss->start[i]);
	free(ss->by_type);
	free(ss->start);
}

/* speedscope knows a few units; counts and anything else are plain numbers to it. */
static const char *ss_unit(const char *unit)
{
	static const char *const known[] = {
		"bytes", "nanoseconds", "microseconds", "milliseconds", "seconds",
	};
	size_t i;

	for (i = 0; unit && i < sizeof(known) / sizeof(known[0]); i++) {
		if (strcmp(unit, known[i]) == 0)
			return known[i];
	}
	return "none";
}

static void write_frames(struct json_writer *w, const struct ss *ss)
{
	uint32_t i;

	jsonw_name(w, "shared");
	jsonw_start_object(w);
	jsonw_name(w, "frames");
	jsonw_start_array(w);
	for (i = 0; i < ss->nframes; i++) {
		const struct ss_frame *f = &ss->frames[i];

		/* file and line are optional in the format: absent, not null */
		jsonw_start_object_flat(w);
		jsonw_string_field(w, "name", f->name);
		if (f->file)
			jsonw_string_field(w, "file", f->file);
		if (f->line > 0)
			jsonw_int_field(w, "line", f->line);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void write_stack(struct json_writer *w, const struct ss *ss, const struct prof_sample *s)
{
	uint32_t i, j;

	jsonw_start_array_flat(w);
	if (!s->nlocs)
		jsonw_uint(w, ss->lost);
	for (i = s->nlocs; i-- > 0;) {
		uint32_t first = ss->loc_first[s->locs[i]];

		for (j = 0; j < ss->loc_n[s->locs[i]]; j++)
			jsonw_uint(w, ss->ids[first + j]);
	}
	jsonw_end_array(w);
}

static void write_profile(struct json_writer *w, const struct ss *ss, uint32_t place, uint32_t t)
{
	const struct profile *p = ss->p;
	uint32_t pid = ss->pids[ss->order[place]];
	const struct prof_process *proc = profile__find_process(p, pid);
	const uint32_t *idx = ss->by_type[t] + ss->start[t][place];
	uint32_t n = ss->start[t][place + 1] - ss->start[t][place], i;
	uint64_t total = 0;
	char *name = NULL;

	for (i = 0; i < n; i++)
		total += (uint64_t)p->samples[idx[i]].values[t];
	if (asprintf(&name, "%s (%" PRIu32 "): %s",
		     proc && proc->comm && *proc->comm ? proc->comm : "[unknown]", pid,
		     p->types[t].type) < 0)
		name = NULL;

	jsonw_start_object(w);
	jsonw_string_field(w, "type", "sampled");
	jsonw_string_field(w, "name", name ? name : p->types[t].type);
	jsonw_string_field(w, "unit", ss_unit(p->types[t].unit));
	jsonw_uint_field(w, "startValue", 0);
	jsonw_uint_field(w, "endValue", total);
	jsonw_name(w, "samples");
	jsonw_start_array(w);
	for (i = 0; i < n; i++)
		write_stack(w, ss, &p->samples[idx[i]]);
	jsonw_end_array(w);
	jsonw_name(w, "weights");
	jsonw_start_array_flat(w);
	for (i = 0; i < n; i++)
		jsonw_int(w, p->samples[idx[i]].values[t]);
	jsonw_end_array(w);
	jsonw_end_object(w);
	free(name);
}

static int speedscope_write(const struct profile *p, const struct output_opts *o, FILE *f)
{
	struct ss ss = { .p = p, .lost = NONE };
	struct json_writer *w = NULL;
	uint32_t i, t;
	char *title = NULL;
	int err = -ENOMEM;

	ss.loc_first = malloc(sizeof(*ss.loc_first) * (p->nlocations + 1));
	ss.loc_n = malloc(sizeof(*ss.loc_n) * (p->nlocations + 1));
	if (!ss.loc_first || !ss.loc_n)
		goto out;
	memset(ss.loc_first, 0xff, sizeof(*ss.loc_first) * (p->nlocations + 1));
	err = order_processes(&ss);
	if (!err)
		err = group_samples(&ss);
	if (!err)
		err = name_frames(&ss);
	if (err)
		goto out;

	err = -ENOMEM;
	w = jsonw__new(f, true);
	if (!w)
		goto out;
	if (asprintf(&title, "ebprof %s%s%s", p->mode ? p->mode : "", p->command ? ": " : "",
		     p->command ? p->command : "") < 0) {
		title = NULL;
		goto out;
	}
	jsonw_start_object(w);
	jsonw_string_field(w, "$schema", SPEEDSCOPE_SCHEMA);
	jsonw_string_field(w, "name", title);
	jsonw_string_field(w, "exporter", SPEEDSCOPE_EXPORTER);
	/* the profiles of a process are in type order: its first is the default type's */
	if (ss.npids && p->ntypes)
		jsonw_uint_field(w, "activeProfileIndex", p->default_type);
	write_frames(w, &ss);
	jsonw_name(w, "profiles");
	jsonw_start_array(w);
	for (i = 0; i < ss.npids; i++) {
		for (t = 0; t < p->ntypes; t++)
			write_profile(w, &ss, i, t);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
	fputc('\n', f);
	err = jsonw__error(w);
out:
	free(title);
	jsonw__free(w);
	ss_free(&ss);
	return err;
}

const struct output_ops output_speedscope = {
	.name = "speedscope",
	.ext = ".speedscope.json",
	.write = speedscope_write,
};
