/* Two profiles compared stack by stack (`ebprof diff`); see profile__diff() in profile.h.
 *
 * The result is itself a profile, of mode "diff", so the renderers and output__write_path()
 * take it like any other: its samples are the distinct stacks of both inputs with base, new,
 * delta and max(base, new) as four sample types.
 *
 * Stacks are matched on names alone. Two runs of one program differ in pids, load addresses
 * (ASLR) and often in line numbers after an edit, but not in function names, so every frame
 * becomes a diff-profile location keyed by its function (name and source file) and nothing
 * else; an unsymbolized frame by its module file and offset. Inline frames become frames of
 * their own. A stack is then the sequence of those locations, interned in a hash table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/util.h"

static const char *const diff_type_names[PROF_DIFF_NTYPES] = {
	[PROF_DIFF_BASE] = "base", [PROF_DIFF_NEW] = "new", [PROF_DIFF_DELTA] = "delta",
};

struct differ {
	struct profile *d;
	uint32_t *fn_loc;	/* per function of d: its location, PROF_NONE = none yet */
	uint32_t fn_loc_cap;
	uint32_t *slots;	/* stacks: sample index + 1, 0 = free; open addressing */
	uint32_t nslots;
	uint32_t *stack;	/* the stack being matched, leaf first */
	uint32_t stack_cap;
};

/* Per input profile: each source location's frames as diff locations, made once. */
struct side {
	const struct profile *p;
	int type;
	uint32_t *first, *n;	/* per source location; first == PROF_NONE: not yet */
	uint32_t *ids;
	uint32_t nids, ids_cap;
};

static int grow_u32(uint32_t **a, uint32_t *cap, uint64_t need, uint32_t fill)
{
	uint64_t n = *cap ? *cap : 64;
	uint32_t *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		return -EOVERFLOW;
	q = realloc(*a, n * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (uint64_t i = *cap; i < n; i++)
		q[i] = fill;
	*a = q;
	*cap = (uint32_t)n;
	return 0;
}

/* Does s[0..n) end with " " open DIGITS close? The length of that tail, else 0. */
static size_t number_tail(const char *s, size_t n, char open, char close)
{
	size_t i;

	if (n < 4 || s[n - 1] != close)
		return 0;
	for (i = n - 1; i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9'; i--)
		;
	if (i == n - 1 || i < 3 || s[i - 1] != open || s[i - 2] != ' ')
		return 0;
	return n - (i - 2);
}

/* In a waker's name without its "(PID)" (s[0..n)), "waker: NAME [TID] of COMM": where
 * " [TID]" starts (the first " [DIGITS] of " after "waker: "), *of where " of COMM" does;
 * else 0. */
static size_t waker_thread(const char *s, size_t n, size_t *of)
{
	for (size_t i = 7; i + 2 < n; i++) {
		size_t j = i + 2;

		if (s[i] != ' ' || s[i + 1] != '[')
			continue;
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
		if (j > i + 2 && j + 4 < n && !strncmp(s + j, "] of ", 5)) {
			*of = j + 1;
			return i;
		}
	}
	return 0;
}

static bool is_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++) {
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	}
	return true;
}

/*
 * The name of a synthetic frame (one the modes name, of no mapping and no source file) without
 * what differs from run to run: "waker: COMM (PID)" (offcpu --wakers) is "waker: COMM",
 * "waker: NAME [TID] of COMM (PID)" (--wakers --per-thread) "waker: NAME of COMM", a
 * thread "NAME [TID]" (--per-thread) "NAME", and lock's leaf "futex 0xADDR (CLASS)" is
 * "futex (CLASS)", one placed in memory without a name "futex 0xADDR in [heap] (CLASS)"
 * "futex in [heap] (CLASS)" (a thread's stack "... in [stack] of thread TID" "... of a
 * thread"), a kernel lock known by its address alone "lock (CLASS)", one known by its owner
 * "mmap_lock of PID (CLASS)" "mmap_lock (CLASS)". A lock named by its symbol keeps it
 * ("big_lock in server", "futex server+0x4040", "futex /dev/shm/q+0x40"): the same in every
 * run of the program.
 */
static const char *stable_name(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), t, cut;
	const char *open, *sp;

	if (!strncmp(name, "waker: ", 7) && (t = number_tail(name, n, '(', ')'))) {
		size_t of, tn = waker_thread(name, n - t, &of);

		if (tn) {
			/* "waker: NAME" and " of COMM", without " [TID]" between them */
			snprintf(buf, len, "%.*s%.*s", (int)tn, name, (int)(n - t - of), name + of);
			return buf;
		}
		snprintf(buf, len, "%.*s", (int)(n - t), name);
		return buf;
	}
	if ((t = number_tail(name, n, '[', ']'))) {
		snprintf(buf, len, "%.*s", (int)(n - t), name);
		return buf;
	}
	/* a lock: "WHAT (CLASS)", the class one word */
	open = strrchr(name, '(');
	if (!open || open == name || open[-1] != ' ' || name[n - 1] != ')' ||
	    strchr(open, ' '))
		return name;
	cut = (size_t)(open - 1 - name);
	if (cut > 6 && !strncmp(name, "futex ", 6) && is_address(name + 6, cut - 6)) {
		snprintf(buf, len, "futex %s", open);
		return buf;
	}
	sp = cut > 6 && !strncmp(name, "futex ", 6) ? memchr(name + 6, ' ', cut - 6) : NULL;
	if (sp && is_address(name + 6, (size_t)(sp - name) - 6) && !strncmp(sp, " in ", 4)) {
		size_t rest = cut - (size_t)(sp - name);
		const char *of = memmem(sp, rest, " of thread ", 11);

		/* "of thread TID" ending the place */
		if (of && of + 11 < name + cut &&
		    strspn(of + 11, "0123456789") == (size_t)(name + cut - (of + 11)))
			snprintf(buf, len, "futex%.*s of a thread %s", (int)(of - sp), sp, open);
		else
			snprintf(buf, len, "futex%.*s %s", (int)rest, sp, open);
		return buf;
	}
	if (is_address(name, cut)) {
		snprintf(buf, len, "lock %s", open);
		return buf;
	}
	/* "OWNER of PID" */
	sp = memchr(name, ' ', cut);
	if (sp && !strncmp(sp, " of ", 4)) {
		size_t i = (size_t)(sp + 4 - name);

		while (i < cut && name[i] >= '0' && name[i] <= '9')
			i++;
		if (i == cut && i > (size_t)(sp + 4 - name)) {
			snprintf(buf, len, "%.*s %s", (int)(sp - name), name, open);
			return buf;
		}
	}
	return name;
}

/* The diff location of a symbolized frame: one per function, whatever its address or line. */
static uint32_t function_loc(struct differ *df, const struct profile *p,
			     const struct prof_location *loc, uint32_t line, uint32_t map)
{
	const struct prof_function *f = &p->functions[loc->lines[line].function];
	const char *name = f->name && *f->name ? f->name : f->system_name;
	struct prof_line ln = {};
	char stable[512];
	uint32_t fi;

	if (!name || !*name)
		name = "??";
	/* a synthetic frame: the modes' names can hold a run's pids and addresses */
	if (loc->mapping == PROF_NONE && (!f->filename || !*f->filename))
		name = stable_name(name, stable, sizeof(stable));
	/* the system name stays out of the key: one name, one frame, however it was mangled */
	fi = f->cfi_named ? profile__function_cfi(df->d, name) :
			    profile__function(df->d, name, NULL, f->filename);
	if (fi == PROF_NONE)
		return PROF_NONE;
	if (grow_u32(&df->fn_loc, &df->fn_loc_cap, (uint64_t)fi + 1, PROF_NONE)) {
		errno = ENOMEM;
		return PROF_NONE;
	}
	if (df->fn_loc[fi] == PROF_NONE) {
		/* the mapping of the first sighting; it only names the module in renderers;
		 * address 0 without one is a synthetic frame's (profile__location_is_synthetic),
		 * which a real function without a known mapping (mem's leaf) is not */
		ln.function = fi;
		df->fn_loc[fi] = profile__location(df->d, map,
				map == PROF_NONE && !profile__location_is_synthetic(loc), 0, &ln, 1);
	}
	return df->fn_loc[fi];
}

/* The frames of source location li as diff locations, innermost (leaf side) first. */
static int loc_frames(struct differ *df, struct side *sd, uint32_t li, uint32_t *first,
		      uint32_t *n)
{
	const struct profile *p = sd->p;
	const struct prof_location *loc = &p->locations[li];
	uint32_t map = PROF_NONE, nl = loc->nlines ? loc->nlines : 1, j, id;
	int err;

	if (sd->first[li] != PROF_NONE)
		goto out;
	err = grow_u32(&sd->ids, &sd->ids_cap, (uint64_t)sd->nids + nl, 0);
	if (err)
		return err;
	if (loc->mapping != PROF_NONE) {
		map = profile__mapping(df->d, 0, 0, 0, 0, p->mappings[loc->mapping].file, NULL);
		if (map == PROF_NONE)
			return -errno;
	}
	for (j = 0; j < nl; j++) {
		if (loc->nlines)
			id = function_loc(df, p, loc, j, map);
		else if (map != PROF_NONE)
			/* "module+0xoff": the address is the offset, which a rerun keeps */
			id = profile__location(df->d, map, loc->module_offset, loc->module_offset,
					       NULL, 0);
		else
			id = profile__location(df->d, PROF_NONE, loc->address, 0, NULL, 0);
		if (id == PROF_NONE)
			return errno ? -errno : -ENOMEM;
		sd->ids[sd->nids + j] = id;
	}
	sd->first[li] = sd->nids;
	sd->n[li] = nl;
	sd->nids += nl;
out:
	*first = sd->first[li];
	*n = sd->n[li];
	return 0;
}

static uint32_t stack_hash(const uint32_t *locs, uint32_t n)
{
	return (uint32_t)util_hash_u64(util_hash_bytes(locs, (size_t)n * sizeof(*locs)));
}

static int rehash(struct differ *df)
{
	uint32_t cap = df->nslots ? df->nslots * 2 : 1024, i, h;
	uint32_t *t;

	if (cap < df->nslots)
		return -EOVERFLOW;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < df->d->nsamples; i++) {
		const struct prof_sample *s = &df->d->samples[i];

		for (h = stack_hash(s->locs, s->nlocs) & (cap - 1); t[h]; h = (h + 1) & (cap - 1))
			;
		t[h] = i + 1;
	}
	free(df->slots);
	df->slots = t;
	df->nslots = cap;
	return 0;
}

/* The sample of d with this stack, added (all values 0) if new; NULL with errno set. */
static struct prof_sample *stack_sample(struct differ *df, const uint32_t *locs, uint32_t n)
{
	struct profile *d = df->d;
	uint32_t h;

	if ((uint64_t)(d->nsamples + 1) * 2 > df->nslots) {
		int err = rehash(df);

		if (err) {
			errno = -err;
			return NULL;
		}
	}
	for (h = stack_hash(locs, n) & (df->nslots - 1); df->slots[h];
	     h = (h + 1) & (df->nslots - 1)) {
		struct prof_sample *s = &d->samples[df->slots[h] - 1];

		if (s->nlocs == n && (!n || !memcmp(s->locs, locs, n * sizeof(*locs))))
			return s;
	}
	if (!profile__add_sample(d, locs, n, NULL, 0))
		return NULL;
	df->slots[h] = d->nsamples;
	return &d->samples[d->nsamples - 1];
}

static int add_side(struct differ *df, struct side *sd, enum prof_diff_type which)
{
	const struct profile *p = sd->p;
	uint32_t i, k, j, first = 0, n = 0, depth;
	int err;

	sd->first = malloc(sizeof(*sd->first) * (p->nlocations + 1));
	sd->n = malloc(sizeof(*sd->n) * (p->nlocations + 1));
	if (!sd->first || !sd->n)
		return -ENOMEM;
	memset(sd->first, 0xff, sizeof(*sd->first) * (p->nlocations + 1));
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		int64_t v = s->values[sd->type];
		struct prof_sample *ds;

		if (!v)
			continue;
		for (k = depth = 0; k < s->nlocs; k++) {
			err = loc_frames(df, sd, s->locs[k], &first, &n);
			if (!err)
				err = grow_u32(&df->stack, &df->stack_cap, (uint64_t)depth + n, 0);
			if (err)
				return err;
			for (j = 0; j < n; j++)
				df->stack[depth++] = sd->ids[first + j];
		}
		ds = stack_sample(df, df->stack, depth);
		if (!ds)
			return -errno;
		ds->values[which] = prof_add(ds->values[which], v);
	}
	return 0;
}

static bool reserved_name(const char *type)
{
	for (int t = 0; t < PROF_DIFF_NTYPES; t++) {
		if (diff_type_names[t] && strcmp(diff_type_names[t], type) == 0)
			return true;
	}
	return false;
}

struct profile *profile__diff(const struct profile *base, const struct profile *new,
			      const char *type)
{
	struct side sb = { .p = base }, sn = { .p = new };
	struct differ df = {};
	const char *unit;
	uint32_t i;
	int err = -EINVAL, t;

	if (!base || !new)
		goto out;
	if (!type)
		type = base->ntypes ? base->types[base->default_type].type : NULL;
	sb.type = profile__type_index(base, type);
	sn.type = profile__type_index(new, type);
	if (sb.type < 0 || sn.type < 0 || reserved_name(type))
		goto out;
	unit = base->types[sb.type].unit;
	if (strcmp(unit, new->types[sn.type].unit))
		goto out;

	err = -ENOMEM;
	df.d = profile__new("diff");
	if (!df.d)
		goto out;
	for (t = 0; t < PROF_DIFF_NTYPES; t++) {
		err = profile__add_type(df.d, diff_type_names[t] ? diff_type_names[t] : type, unit);
		if (err)
			goto out;
	}
	df.d->default_type = PROF_DIFF_MAX;
	err = add_side(&df, &sb, PROF_DIFF_BASE);
	if (!err)
		err = add_side(&df, &sn, PROF_DIFF_NEW);
	if (err)
		goto out;
	for (i = 0; i < df.d->nsamples; i++) {
		int64_t *v = df.d->samples[i].values;

		v[PROF_DIFF_DELTA] = prof_sub(v[PROF_DIFF_NEW], v[PROF_DIFF_BASE]);
		v[PROF_DIFF_MAX] = v[PROF_DIFF_NEW] > v[PROF_DIFF_BASE] ? v[PROF_DIFF_NEW] :
									  v[PROF_DIFF_BASE];
	}
out:
	free(sb.first);
	free(sb.n);
	free(sb.ids);
	free(sn.first);
	free(sn.n);
	free(sn.ids);
	free(df.fn_loc);
	free(df.slots);
	free(df.stack);
	if (err) {
		profile__free(df.d);
		errno = -err;
		return NULL;
	}
	return df.d;
}

bool profile__is_diff(const struct profile *p)
{
	int t;

	if (!p || !p->mode || strcmp(p->mode, "diff") || p->ntypes != PROF_DIFF_NTYPES)
		return false;
	for (t = 0; t < PROF_DIFF_NTYPES; t++) {
		if (diff_type_names[t] && strcmp(p->types[t].type, diff_type_names[t]))
			return false;
	}
	return true;
}
