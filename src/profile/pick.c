/* A profile's shape in a new one, and the part of a profile that some processes make up:
 * continuous profiling (ebprof agent) cuts a run into windows, and each window into one
 * profile per service. */
#include <errno.h>
#include <stdlib.h>
#include "profile/profile.h"

struct profile *profile__new_like(const struct profile *src)
{
	struct profile *p = profile__new(src->mode);
	int err = 0;

	if (!p)
		return NULL;
	for (uint32_t i = 0; i < src->ntypes && !err; i++)
		err = profile__add_type(p, src->types[i].type, src->types[i].unit);
	if (!err && src->period_type.type)
		err = profile__set_period(p, src->period_type.type, src->period_type.unit,
					  src->period);
	if (err) {
		profile__free(p);
		errno = -err;
		return NULL;
	}
	p->default_type = src->default_type;
	p->sampling = src->sampling;
	p->sample_period = src->sample_period;
	p->time_nanos = src->time_nanos;
	p->duration_nanos = src->duration_nanos;
	return p;
}

static uint32_t copy_loc(struct profile *p, const struct profile *src, uint32_t li,
			 uint32_t *memo)
{
	const struct prof_location *l = &src->locations[li];
	struct prof_line lines[16], *lp = lines;
	uint32_t map = PROF_NONE, r;

	if (memo[li])
		return memo[li] - 1;
	if (l->nlines > 16 && !(lp = calloc(l->nlines, sizeof(*lp))))
		return PROF_NONE;
	if (l->mapping != PROF_NONE) {
		const struct prof_mapping *m = &src->mappings[l->mapping];

		map = profile__mapping(p, m->pid, m->start, m->limit, m->offset, m->file,
				       m->build_id);
	}
	for (uint32_t i = 0; i < l->nlines; i++) {
		const struct prof_function *f = &src->functions[l->lines[i].function];

		lp[i].function = f->cfi_named ? profile__function_cfi(p, f->name) :
				 profile__function(p, f->name, f->system_name, f->filename);
		lp[i].line = l->lines[i].line;
	}
	r = profile__location(p, map, l->address, l->module_offset, lp, l->nlines);
	if (lp != lines)
		free(lp);
	if (r != PROF_NONE)
		memo[li] = r + 1;
	return r;
}

int profile__copy_samples(struct profile *p, const struct profile *src, const uint32_t *pids,
			  size_t npids)
{
	uint32_t *memo = calloc(src->nlocations + 1, sizeof(*memo));
	uint32_t *locs = NULL, cap = 0;
	int err = -ENOMEM;

	if (!memo)
		goto out;
	for (uint32_t i = 0; i < src->nsamples; i++) {
		const struct prof_sample *s = &src->samples[i];
		bool keep = !pids;

		for (size_t j = 0; j < npids && !keep; j++)
			keep = s->pid == pids[j];
		if (!keep)
			continue;
		if (s->nlocs > cap) {
			uint32_t *n = realloc(locs, s->nlocs * sizeof(*n));

			if (!n)
				goto out;
			locs = n;
			cap = s->nlocs;
		}
		for (uint32_t k = 0; k < s->nlocs; k++) {
			locs[k] = copy_loc(p, src, s->locs[k], memo);
			if (locs[k] == PROF_NONE)
				goto out;
		}
		if (!profile__add_sample(p, locs, s->nlocs, s->values, s->pid))
			goto out;
	}
	err = 0;
out:
	free(memo);
	free(locs);
	return err;
}

struct profile *profile__pick(const struct profile *src, const uint32_t *pids, size_t npids)
{
	struct profile *p = profile__new_like(src);

	if (!p || profile__copy_samples(p, src, pids, npids))
		goto fail;
	for (size_t j = 0; j < npids; j++) {
		const struct prof_process *pr = profile__find_process(src, pids[j]);

		if (pr && !profile__add_process(p, pr->pid, pr->comm, pr->cmdline))
			goto fail;
	}
	return p;
fail:
	profile__free(p);
	errno = ENOMEM;
	return NULL;
}
