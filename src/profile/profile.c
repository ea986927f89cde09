/* The profile model: growable arrays, interning tables and the memory that backs them.
 *
 * Strings are interned into one pool, so that equal strings share one copy and the other
 * interning keys can compare string pointers instead of contents. Strings, sample payloads
 * (locations, values, histograms) and location lines live in an arena that is released in one go
 * by profile__free: a profile only ever grows, nothing in it is freed on its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/util.h"

/* Open addressing with linear probing over indices into the profile's arrays. The hash is kept
 * in the slot so that growing never has to look at the keys again. */
struct hslot {
	uint32_t hash;
	uint32_t idx1;		/* index + 1; 0 = empty */
};

struct htab {
	struct hslot *slots;
	uint32_t cap;		/* power of two, or 0 */
	uint32_t n;
};

typedef bool (*htab_eq_fn)(const struct profile *p, uint32_t idx, const void *key);

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	/* 16 so that any payload type is aligned */
	_Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK (64 * 1024)

/* profile__memo_get's: open addressing over entries tagged with the owner's generation, so
 * that a new owner empties the memo by a new generation, not a pass */
struct memo_ent {
	uint64_t addr;
	uint32_t gen;		/* the memo's generation when put; another: an empty entry */
	uint32_t loc;
};

struct memo {
	struct memo_ent *ents;
	uint32_t cap, n, gen;	/* cap a power of two; n entries of generation gen */
	uint64_t owner;
};

struct prof_priv {
	struct arena_block *arena;
	const char **strs;	/* interned strings, arena-backed */
	uint32_t nstrs;
	struct htab str_tab, func_tab, map_tab, loc_tab, proc_tab;
	struct memo memo;	/* profile__memo_get */
	/* samples by (pid, locations), profile__find_sample's: samples[0, samp_upto) are in
	 * it, the rest put in at its next call (samples are only ever appended) */
	struct htab samp_tab;
	uint32_t samp_upto;
};

/* ---- small helpers ---------------------------------------------------------------------- */


static uint32_t hash_combine(uint64_t h, uint64_t v)
{
	return (uint32_t)util_hash_u64(h * 31 + util_hash_u64(v));
}


/*
 * Make room for element n of an array whose capacity is implied by its length: max(4, the
 * next power of two). This spares a capacity field for every array, including the public
 * per-process ones. Returns the (possibly moved) array, or NULL with errno set and the array
 * untouched.
 */
static void *grow_array(void *arr, uint32_t n, size_t elem)
{
	size_t cap;
	void *q;

	if (n == 0 && !arr)
		cap = 4;
	else if (n >= 4 && (n & (n - 1)) == 0)
		cap = (size_t)n * 2;
	else
		return arr;
	/* PROF_NONE is not a valid index */
	if (cap - 1 > UINT32_MAX - 1 || cap > SIZE_MAX / elem) {
		errno = EOVERFLOW;
		return NULL;
	}
	q = realloc(arr, cap * elem);
	if (!q)
		errno = ENOMEM;
	return q;
}

/* 0, or a negative errno with the array untouched. */
#define GROW(arr, n)                                                         \
	({                                                                   \
		void *_q = grow_array((arr), (n), sizeof(*(arr)));           \
		if (_q)                                                      \
			(arr) = _q;                                          \
		_q ? 0 : -errno;                                             \
	})

static struct prof_priv *priv(const struct profile *p)
{
	return p->priv;
}

static void *arena_alloc(struct profile *p, size_t size)
{
	struct prof_priv *pp = priv(p);
	struct arena_block *b = pp->arena;
	size_t bsize;

	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	if (b && b->size - b->used >= size) {
		void *r = b->data + b->used;

		b->used += size;
		return r;
	}
	bsize = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
	b = malloc(sizeof(*b) + bsize);
	if (!b)
		return NULL;
	b->size = bsize;
	b->used = size;
	if (bsize == size && pp->arena) {
		/* an oversized request gets its own block; keep serving from the current one */
		b->next = pp->arena->next;
		pp->arena->next = b;
	} else {
		b->next = pp->arena;
		pp->arena = b;
	}
	return b->data;
}

static void *arena_dup(struct profile *p, const void *src, size_t size)
{
	void *d = arena_alloc(p, size);

	if (d && size)
		memcpy(d, src, size);
	return d;
}

/* ---- hash tables ------------------------------------------------------------------------ */

static uint32_t htab_find(const struct profile *p, const struct htab *t, uint32_t hash,
			  htab_eq_fn eq, const void *key)
{
	uint32_t mask, i;

	if (!t->cap)
		return PROF_NONE;
	mask = t->cap - 1;
	for (i = hash & mask; t->slots[i].idx1; i = (i + 1) & mask) {
		if (t->slots[i].hash == hash && eq(p, t->slots[i].idx1 - 1, key))
			return t->slots[i].idx1 - 1;
	}
	return PROF_NONE;
}

static void htab_put(struct hslot *slots, uint32_t cap, uint32_t hash, uint32_t idx1)
{
	uint32_t mask = cap - 1, i;

	for (i = hash & mask; slots[i].idx1; i = (i + 1) & mask)
		;
	slots[i].hash = hash;
	slots[i].idx1 = idx1;
}

/* Call before appending the element, so that a failure leaves table and array consistent. */
static int htab_reserve(struct htab *t)
{
	struct hslot *ns;
	uint32_t ncap, i;

	/* keep the load factor at or below 3/4 */
	if (t->cap && (uint64_t)(t->n + 1) * 4 <= (uint64_t)t->cap * 3)
		return 0;
	if (t->cap > UINT32_MAX / 2)
		return -EOVERFLOW;
	ncap = t->cap ? t->cap * 2 : 64;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (t->slots[i].idx1)
			htab_put(ns, ncap, t->slots[i].hash, t->slots[i].idx1);
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static void htab_insert(struct htab *t, uint32_t hash, uint32_t idx)
{
	htab_put(t->slots, t->cap, hash, idx + 1);
	t->n++;
}

static void htab_free(struct htab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

/* ---- strings ---------------------------------------------------------------------------- */

static bool str_eq(const struct profile *p, uint32_t idx, const void *key)
{
	return strcmp(priv(p)->strs[idx], key) == 0;
}

/* The pool's copy of s; NULL for NULL. On failure returns NULL with *err set. */
static const char *intern(struct profile *p, const char *s, int *err)
{
	struct prof_priv *pp = priv(p);
	uint32_t h, idx;
	char *copy;
	int e;

	if (!s)
		return NULL;
	h = (uint32_t)util_hash_str(s);
	idx = htab_find(p, &pp->str_tab, h, str_eq, s);
	if (idx != PROF_NONE)
		return pp->strs[idx];

	e = htab_reserve(&pp->str_tab);
	if (!e)
		e = GROW(pp->strs, pp->nstrs);
	if (e) {
		*err = e;
		return NULL;
	}
	copy = arena_dup(p, s, strlen(s) + 1);
	if (!copy) {
		*err = -ENOMEM;
		return NULL;
	}
	pp->strs[pp->nstrs] = copy;
	htab_insert(&pp->str_tab, h, pp->nstrs);
	pp->nstrs++;
	return copy;
}

/* Intern s into *dst; a NULL s stores NULL. 0 or negative errno. */
static int intern_into(struct profile *p, const char **dst, const char *s)
{
	int err = 0;
	const char *r = intern(p, s, &err);

	if (err)
		return err;
	*dst = r;
	return 0;
}

/* ---- profile ---------------------------------------------------------------------------- */

struct profile *profile__new(const char *mode)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		goto err;
	p->priv = calloc(1, sizeof(struct prof_priv));
	if (!p->priv)
		goto err;
	if (intern_into(p, &p->mode, mode ? mode : ""))
		goto err;
	return p;
err:
	profile__free(p);
	errno = ENOMEM;
	return NULL;
}

void profile__free(struct profile *p)
{
	struct prof_priv *pp;
	uint32_t i;

	if (!p)
		return;
	pp = p->priv;
	for (i = 0; i < p->nprocesses; i++) {
		free(p->processes[i].calls);
		free(p->processes[i].stats);
		free(p->processes[i].alloc_objs);
	}
	free(p->types);
	free(p->samples);
	free(p->locations);
	free(p->functions);
	free(p->mappings);
	free(p->processes);
	free(p->drops);
	free(p->notes);
	free(p->note_counts);
	free(p->info);
	free(p->caches);
	for (i = 0; i < p->nseries; i++) {
		free(p->series[i].t_ns);
		free(p->series[i].v);
	}
	free(p->series);
	for (i = 0; i < p->ngroups; i++) {
		free(p->groups[i].labels);
		free(p->groups[i].stats);
		free(p->groups[i].hists);
	}
	free(p->groups);
	for (i = 0; i < p->nparts; i++)
		profile__free(p->parts[i]);
	free(p->parts);
	free(p->findings);
	if (pp) {
		struct arena_block *b, *next;

		for (b = pp->arena; b; b = next) {
			next = b->next;
			free(b);
		}
		free(pp->strs);
		htab_free(&pp->str_tab);
		htab_free(&pp->func_tab);
		htab_free(&pp->map_tab);
		htab_free(&pp->loc_tab);
		htab_free(&pp->proc_tab);
		htab_free(&pp->samp_tab);
		free(pp->memo.ents);
		free(pp);
	}
	free(p);
}

int profile__set_meta(struct profile *p, const char *command, const char *kernel,
		      const char *options, int64_t time_nanos, int64_t duration_nanos)
{
	const char *c = NULL, *k = NULL, *o = NULL;
	int err;

	/* all or nothing */
	err = intern_into(p, &c, command);
	if (!err)
		err = intern_into(p, &k, kernel);
	if (!err)
		err = intern_into(p, &o, options);
	if (err)
		return err;
	p->command = c;
	p->kernel = k;
	p->options = o;
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
	for (uint32_t i = 0; i < p->nparts; i++) {
		err = profile__set_meta(p->parts[i], command, kernel, options, time_nanos,
					duration_nanos);
		if (err)
			return err;
	}
	return 0;
}

int profile__add_part(struct profile *p, struct profile *part)
{
	int err = GROW(p->parts, p->nparts);

	if (err)
		return err;
	p->parts[p->nparts++] = part;
	return 0;
}

int profile__add_finding(struct profile *p, const struct prof_finding *f)
{
	struct prof_finding c = *f;
	int err = 0;

	err = intern_into(p, &c.mode, f->mode);
	if (!err)
		err = intern_into(p, &c.kind, f->kind);
	if (!err)
		err = intern_into(p, &c.subject, f->subject);
	if (!err)
		err = intern_into(p, &c.fact, f->fact);
	if (!err)
		err = intern_into(p, &c.threshold, f->threshold);
	if (!err)
		err = intern_into(p, &c.action, f->action);
	if (!err)
		err = intern_into(p, &c.unit, f->unit);
	if (!err)
		err = GROW(p->findings, p->nfindings);
	if (!err)
		p->findings[p->nfindings++] = c;
	return err;
}

int profile__add_type(struct profile *p, const char *type, const char *unit)
{
	struct prof_value_type vt;
	int err;

	if (!type || !unit)
		return -EINVAL;
	if (p->nsamples)
		return -EBUSY;
	err = intern_into(p, &vt.type, type);
	if (!err)
		err = intern_into(p, &vt.unit, unit);
	if (!err)
		err = GROW(p->types, p->ntypes);
	if (err)
		return err;
	p->types[p->ntypes++] = vt;
	return 0;
}

int profile__type_index(const struct profile *p, const char *type)
{
	uint32_t i;

	for (i = 0; type && i < p->ntypes; i++) {
		if (strcmp(p->types[i].type, type) == 0)
			return (int)i;
	}
	return -1;
}

int profile__set_type_proc_stat(struct profile *p, const char *type, const char *stat)
{
	int i = profile__type_index(p, type);

	if (i < 0)
		return -ENOENT;
	return intern_into(p, &p->types[i].proc_stat, stat);
}

int64_t profile__type_total(const struct profile *p, uint32_t i)
{
	const char *stat = i < p->ntypes ? p->types[i].proc_stat : NULL;
	int64_t sum = 0;
	uint64_t v;

	if (i >= p->ntypes)
		return 0;
	for (uint32_t j = 0; j < p->nsamples; j++) {
		const struct prof_process *proc = stat ? profile__find_process(p, p->samples[j].pid)
						       : NULL;

		if (!proc || !prof_process__stat(proc, stat, NULL))
			sum = prof_add(sum, p->samples[j].values[i]);
	}
	for (uint32_t k = 0; stat && k < p->nprocesses; k++)
		if (prof_process__stat(&p->processes[k], stat, &v))
			sum = prof_add(sum, v > INT64_MAX ? INT64_MAX : (int64_t)v);
	return sum;
}

int64_t *profile__process_sums(const struct profile *p)
{
	size_t n = (size_t)p->nprocesses * p->ntypes;
	int64_t *sums = calloc(n ? n : 1, sizeof(*sums));

	if (!sums)
		return NULL;
	for (uint32_t j = 0; p->ntypes && j < p->nsamples; j++) {
		const struct prof_process *proc = profile__find_process(p, p->samples[j].pid);
		int64_t *at;

		if (!proc)
			continue;
		at = sums + (size_t)(proc - p->processes) * p->ntypes;
		for (uint32_t i = 0; i < p->ntypes; i++)
			at[i] = prof_add(at[i], p->samples[j].values[i]);
	}
	return sums;
}

const char *const prof_leak_class_names[PROF_LEAK__COUNT] = {
	[PROF_LEAK_DEFINITE] = "definite",
	[PROF_LEAK_INDIRECT] = "indirect",
	[PROF_LEAK_POSSIBLE] = "possible",
	[PROF_LEAK_REACHABLE] = "reachable",
};

const char *const prof_leak_class_titles[PROF_LEAK__COUNT] = {
	[PROF_LEAK_DEFINITE] = "definitely lost",
	[PROF_LEAK_INDIRECT] = "indirectly lost",
	[PROF_LEAK_POSSIBLE] = "possibly lost",
	[PROF_LEAK_REACHABLE] = "still reachable",
};

const char *const prof_leak_heuristic_names[PROF_LEAK_HEURISTICS] = {
	"none", "stdstring", "length64", "newarray", "multipleinheritance",
};

int profile__leak_type(const struct profile *p, enum prof_leak_class c, bool bytes)
{
	char name[32];

	if ((unsigned)c >= PROF_LEAK__COUNT)
		return -1;
	snprintf(name, sizeof(name), "%s_%s", prof_leak_class_names[c], bytes ? "space" : "objects");
	return profile__type_index(p, name);
}

int profile__set_default_type(struct profile *p, const char *type)
{
	int i = profile__type_index(p, type);

	if (i < 0)
		return -ENOENT;
	p->default_type = (uint32_t)i;
	return 0;
}

/* ---- functions, mappings, locations ----------------------------------------------------- */

/* Keys hold interned pointers, so equality is pointer equality. */
struct func_key {
	const char *name, *system_name, *filename;
	bool cfi_named;
};

static bool func_eq(const struct profile *p, uint32_t idx, const void *key)
{
	const struct prof_function *f = &p->functions[idx];
	const struct func_key *k = key;

	return f->name == k->name && f->system_name == k->system_name &&
	       f->filename == k->filename && f->cfi_named == k->cfi_named;
}

static uint32_t fail(int err)
{
	errno = -err;
	return PROF_NONE;
}

static uint32_t function_intern(struct profile *p, const char *name, const char *system_name,
				const char *filename, bool cfi_named)
{
	struct prof_priv *pp = priv(p);
	struct func_key k = { .cfi_named = cfi_named };
	uint32_t h, idx;
	int err;

	if (!name)
		return fail(-EINVAL);
	err = intern_into(p, &k.name, name);
	if (!err)
		err = intern_into(p, &k.system_name, system_name);
	if (!err)
		err = intern_into(p, &k.filename, filename);
	if (err)
		return fail(err);

	h = hash_combine(hash_combine(hash_combine((uintptr_t)k.name, (uintptr_t)k.system_name),
				      (uintptr_t)k.filename), cfi_named);
	idx = htab_find(p, &pp->func_tab, h, func_eq, &k);
	if (idx != PROF_NONE)
		return idx;

	err = htab_reserve(&pp->func_tab);
	if (!err)
		err = GROW(p->functions, p->nfunctions);
	if (err)
		return fail(err);
	idx = p->nfunctions++;
	p->functions[idx] = (struct prof_function){
		.name = k.name, .system_name = k.system_name, .filename = k.filename,
		.cfi_named = cfi_named,
	};
	htab_insert(&pp->func_tab, h, idx);
	return idx;
}

uint32_t profile__function(struct profile *p, const char *name, const char *system_name,
			   const char *filename)
{
	return function_intern(p, name, system_name, filename, false);
}

uint32_t profile__function_cfi(struct profile *p, const char *name)
{
	return function_intern(p, name, name, NULL, true);
}

bool profile__is_cfi_name(const char *name)
{
	const char *sub = name ? strstr(name, "!sub_") : NULL;
	const char *h;

	if (!sub || sub == name || strcspn(name, "/!") != (size_t)(sub - name))
		return false;
	for (h = sub + 5; *h; h++)
		if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
			return false;
	return h > sub + 5;
}

struct map_key {
	uint32_t pid;
	uint64_t start;
	const char *file;
};

static bool map_eq(const struct profile *p, uint32_t idx, const void *key)
{
	const struct prof_mapping *m = &p->mappings[idx];
	const struct map_key *k = key;

	return m->pid == k->pid && m->start == k->start && m->file == k->file;
}

uint32_t profile__mapping(struct profile *p, uint32_t pid, uint64_t start, uint64_t limit,
			  uint64_t offset, const char *file, const char *build_id)
{
	struct prof_priv *pp = priv(p);
	struct map_key k = { .pid = pid, .start = start };
	const char *bid = NULL;
	uint32_t h, idx;
	int err;

	if (!file)
		return fail(-EINVAL);
	err = intern_into(p, &k.file, file);
	if (err)
		return fail(err);

	h = hash_combine(hash_combine(pid, start), (uintptr_t)k.file);
	idx = htab_find(p, &pp->map_tab, h, map_eq, &k);
	if (idx != PROF_NONE)
		return idx;

	err = intern_into(p, &bid, build_id);
	if (!err)
		err = htab_reserve(&pp->map_tab);
	if (!err)
		err = GROW(p->mappings, p->nmappings);
	if (err)
		return fail(err);
	idx = p->nmappings++;
	p->mappings[idx] = (struct prof_mapping){
		.start = start, .limit = limit, .offset = offset,
		.file = k.file, .build_id = bid, .pid = pid,
	};
	htab_insert(&pp->map_tab, h, idx);
	return idx;
}

/* The innermost function is part of the key: one address can carry two names (an alias such as
 * glibc's aligned_alloc = memalign, told apart by the caller), and pprof allows two locations
 * at one address. */
struct loc_key {
	uint32_t mapping;
	uint64_t address;
	uint32_t function;
};

static bool loc_eq(const struct profile *p, uint32_t idx, const void *key)
{
	const struct prof_location *l = &p->locations[idx];
	const struct loc_key *k = key;

	return l->mapping == k->mapping && l->address == k->address &&
	       (l->nlines ? l->lines[0].function : PROF_NONE) == k->function;
}

uint32_t profile__location(struct profile *p, uint32_t mapping, uint64_t address,
			   uint64_t module_offset, const struct prof_line *lines, uint32_t nlines)
{
	struct prof_priv *pp = priv(p);
	struct loc_key k = { .mapping = mapping, .address = address,
			     .function = nlines && lines ? lines[0].function : PROF_NONE };
	struct prof_line *copy = NULL;
	uint32_t h, idx, i;
	int err;

	if (mapping != PROF_NONE && mapping >= p->nmappings)
		return fail(-EINVAL);
	if (nlines && !lines)
		return fail(-EINVAL);
	for (i = 0; i < nlines; i++) {
		if (lines[i].function >= p->nfunctions)
			return fail(-EINVAL);
	}

	/* the function too: the synthetic frames all have address 0 */
	h = hash_combine(hash_combine(mapping, address), k.function);
	idx = htab_find(p, &pp->loc_tab, h, loc_eq, &k);
	if (idx != PROF_NONE)
		return idx;

	if (nlines) {
		copy = arena_dup(p, lines, sizeof(*lines) * nlines);
		if (!copy)
			return fail(-ENOMEM);
	}
	err = htab_reserve(&pp->loc_tab);
	if (!err)
		err = GROW(p->locations, p->nlocations);
	if (err)
		return fail(err);
	idx = p->nlocations++;
	p->locations[idx] = (struct prof_location){
		.mapping = mapping, .address = address, .module_offset = module_offset,
		.lines = copy, .nlines = nlines,
	};
	htab_insert(&pp->loc_tab, h, idx);
	return idx;
}

/* ---- the memo -------------------------------------------------------------------------- */

/* The memo as owner's: a new owner starts a new generation (the entries of the last are
 * empty then; all of them cleared when the generation would wrap to 0). */
static struct memo *memo_of(struct profile *p, uint64_t owner)
{
	struct memo *m = &priv(p)->memo;

	if (m->owner != owner || !m->gen) {
		m->owner = owner;
		m->n = 0;
		if (!++m->gen) {
			if (m->ents)
				memset(m->ents, 0, sizeof(*m->ents) * m->cap);
			m->gen = 1;
		}
	}
	return m;
}

/* Where addr is in m, or the empty entry where it would go (m->cap > 0). */
static struct memo_ent *memo_slot(struct memo *m, uint64_t addr)
{
	uint32_t i = (uint32_t)util_hash_u64(addr) & (m->cap - 1);

	while (m->ents[i].gen == m->gen && m->ents[i].addr != addr)
		i = (i + 1) & (m->cap - 1);
	return &m->ents[i];
}

uint32_t profile__memo_get(struct profile *p, uint64_t owner, uint64_t addr)
{
	struct memo *m = memo_of(p, owner);
	struct memo_ent *e;

	if (!m->n)
		return PROF_NONE;
	e = memo_slot(m, addr);
	return e->gen == m->gen ? e->loc : PROF_NONE;
}

void profile__memo_put(struct profile *p, uint64_t owner, uint64_t addr, uint32_t loc)
{
	struct memo *m = memo_of(p, owner);
	struct memo_ent *e;

	if ((m->n + 1) * 2 > m->cap) {	/* at most half full: grown, the current entries moved */
		struct memo old = *m;
		uint32_t cap = m->cap ? m->cap * 2 : 1024;

		m->ents = calloc(cap, sizeof(*m->ents));
		if (!m->ents) {
			*m = old;	/* a memo is only a shortcut: it stays as it was */
			return;
		}
		m->cap = cap;
		m->n = 0;
		m->gen = 1;
		for (uint32_t i = 0; i < old.cap; i++) {
			if (old.ents[i].gen != old.gen)
				continue;
			*memo_slot(m, old.ents[i].addr) = (struct memo_ent){
				.addr = old.ents[i].addr, .gen = 1, .loc = old.ents[i].loc };
			m->n++;
		}
		free(old.ents);
	}
	e = memo_slot(m, addr);
	if (e->gen != m->gen)
		m->n++;
	*e = (struct memo_ent){ .addr = addr, .gen = m->gen, .loc = loc };
}

/* ---- samples ---------------------------------------------------------------------------- */

struct sample_key {
	const uint32_t *locs;
	uint32_t nlocs, pid;
};

static uint32_t sample_hash(const uint32_t *locs, uint32_t nlocs, uint32_t pid)
{
	uint32_t h = hash_combine(pid, nlocs);

	for (uint32_t i = 0; i < nlocs; i++)
		h = hash_combine(h, locs[i]);
	return h;
}

static bool sample_eq(const struct profile *p, uint32_t idx, const void *key)
{
	const struct sample_key *k = key;
	const struct prof_sample *s = &p->samples[idx];

	return s->pid == k->pid && s->nlocs == k->nlocs &&
	       (!k->nlocs || !memcmp(s->locs, k->locs, k->nlocs * sizeof(*k->locs)));
}

uint32_t profile__find_sample(struct profile *p, const uint32_t *locs, uint32_t nlocs,
			      uint32_t pid)
{
	struct prof_priv *pp = p->priv;
	struct sample_key k = { .locs = locs, .nlocs = nlocs, .pid = pid };

	while (pp && pp->samp_upto < p->nsamples) {
		const struct prof_sample *s = &p->samples[pp->samp_upto];

		if (htab_reserve(&pp->samp_tab))
			break;
		htab_insert(&pp->samp_tab, sample_hash(s->locs, s->nlocs, s->pid), pp->samp_upto);
		pp->samp_upto++;
	}
	if (pp && pp->samp_upto == p->nsamples)
		return htab_find(p, &pp->samp_tab, sample_hash(locs, nlocs, pid), sample_eq, &k);
	/* no memory for the index: every sample looked at */
	for (uint32_t i = 0; i < p->nsamples; i++)
		if (sample_eq(p, i, &k))
			return i;
	return PROF_NONE;
}

struct prof_sample *profile__add_to_sample(struct profile *p, const uint32_t *locs,
					   uint32_t nlocs, const int64_t *values, uint32_t pid)
{
	uint32_t i = profile__find_sample(p, locs, nlocs, pid);
	struct prof_sample *s;

	if (i == PROF_NONE)
		return profile__add_sample(p, locs, nlocs, values, pid);
	s = &p->samples[i];
	for (uint32_t t = 0; values && t < p->ntypes; t++)
		s->values[t] = prof_add(s->values[t], values[t]);
	return s;
}

struct prof_sample *profile__add_sample(struct profile *p, const uint32_t *locs, uint32_t nlocs,
					const int64_t *values, uint32_t pid)
{
	struct prof_sample *s;
	uint32_t *lcopy = NULL;
	int64_t *vcopy = NULL;
	uint32_t i;
	int err;

	if (nlocs && !locs) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < nlocs; i++) {
		if (locs[i] >= p->nlocations) {
			errno = EINVAL;
			return NULL;
		}
	}
	if (nlocs) {
		lcopy = arena_dup(p, locs, sizeof(*locs) * nlocs);
		if (!lcopy)
			goto nomem;
	}
	if (p->ntypes) {
		vcopy = arena_alloc(p, sizeof(*vcopy) * p->ntypes);
		if (!vcopy)
			goto nomem;
		for (i = 0; i < p->ntypes; i++)
			vcopy[i] = values ? values[i] : 0;
	}
	err = GROW(p->samples, p->nsamples);
	if (err) {
		errno = -err;
		return NULL;
	}
	s = &p->samples[p->nsamples++];
	*s = (struct prof_sample){ .locs = lcopy, .nlocs = nlocs, .values = vcopy, .pid = pid };
	return s;
nomem:
	errno = ENOMEM;
	return NULL;
}

int prof_sample__set_hist(struct profile *p, struct prof_sample *s, const uint64_t *hist,
			  uint32_t n)
{
	uint64_t *copy = NULL;

	if (n && !hist)
		return -EINVAL;
	if (n) {
		copy = arena_dup(p, hist, sizeof(*hist) * n);
		if (!copy)
			return -ENOMEM;
	}
	s->hist = copy;
	s->nhist = n;
	return 0;
}

int prof_sample__set_life(struct profile *p, struct prof_sample *s, const uint64_t *life,
			  uint32_t n)
{
	uint64_t *copy = NULL;

	if (n && !life)
		return -EINVAL;
	if (n) {
		copy = arena_dup(p, life, sizeof(*life) * n);
		if (!copy)
			return -ENOMEM;
	}
	s->life = copy;
	s->nlife = n;
	return 0;
}

/* ---- processes -------------------------------------------------------------------------- */

static bool proc_eq(const struct profile *p, uint32_t idx, const void *key)
{
	return p->processes[idx].pid == *(const uint32_t *)key;
}

struct prof_process *profile__find_process(const struct profile *p, uint32_t pid)
{
	uint32_t idx = htab_find(p, &priv(p)->proc_tab, hash_combine(0, pid), proc_eq, &pid);

	return idx == PROF_NONE ? NULL : &p->processes[idx];
}

struct prof_process *profile__add_process(struct profile *p, uint32_t pid, const char *comm,
					  const char *cmdline)
{
	struct prof_priv *pp = priv(p);
	struct prof_process *proc = profile__find_process(p, pid);
	const char *c = NULL, *cl = NULL;
	int err;

	err = intern_into(p, &c, comm);
	if (!err)
		err = intern_into(p, &cl, cmdline);
	if (!err && !proc) {
		err = htab_reserve(&pp->proc_tab);
		if (!err)
			err = GROW(p->processes, p->nprocesses);
	}
	if (err) {
		errno = -err;
		return NULL;
	}
	if (!proc) {
		proc = &p->processes[p->nprocesses];
		*proc = (struct prof_process){ .pid = pid };
		htab_insert(&pp->proc_tab, hash_combine(0, pid), p->nprocesses);
		p->nprocesses++;
	}
	if (c)
		proc->comm = c;
	if (cl)
		proc->cmdline = cl;
	return proc;
}

/* Find or append `name` in a kv list; returns the entry or NULL with *err set. */
static struct prof_kv *kv_get(struct profile *p, struct prof_kv **kv, uint32_t *n,
			      const char *name, int *err)
{
	const char *key;
	uint32_t i;

	if (!name) {
		*err = -EINVAL;
		return NULL;
	}
	for (i = 0; i < *n; i++) {
		if (strcmp((*kv)[i].key, name) == 0)
			return &(*kv)[i];
	}
	key = intern(p, name, err);
	if (!key)
		return NULL;
	*err = GROW(*kv, *n);
	if (*err)
		return NULL;
	(*kv)[*n] = (struct prof_kv){ .key = key };
	return &(*kv)[(*n)++];
}

int prof_process__add_call(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v)
{
	int err = 0;
	struct prof_kv *e = kv_get(p, &proc->calls, &proc->ncalls, name, &err);

	if (!e)
		return err;
	e->value += v;
	return 0;
}

int prof_process__add_stat(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v)
{
	int err = 0;
	struct prof_kv *e = kv_get(p, &proc->stats, &proc->nstats, name, &err);

	if (!e)
		return err;
	e->value += v;
	return 0;
}

int prof_process__set_stat(struct profile *p, struct prof_process *proc, const char *name,
			   uint64_t v)
{
	int err = 0;
	struct prof_kv *e = kv_get(p, &proc->stats, &proc->nstats, name, &err);

	if (!e)
		return err;
	e->value = v;
	return 0;
}

int prof_process__set_note(struct profile *p, struct prof_process *proc, const char *note)
{
	return intern_into(p, &proc->note, note);
}

int prof_process__set_allocator(struct profile *p, struct prof_process *proc, const char *kind,
				const struct prof_alloc_obj *objs, uint32_t n)
{
	struct prof_alloc_obj *v = n ? calloc(n, sizeof(*v)) : NULL;
	int err = 0;

	if (n && !v)
		return -ENOMEM;
	for (uint32_t i = 0; i < n && !err; i++) {
		err = intern_into(p, &v[i].path, objs[i].path);
		err = err ?: intern_into(p, &v[i].kind, objs[i].kind);
		err = err ?: intern_into(p, &v[i].functions, objs[i].functions);
	}
	err = err ?: intern_into(p, &proc->allocator, kind);
	if (err) {
		free(v);
		return err;
	}
	free(proc->alloc_objs);
	proc->alloc_objs = v;
	proc->nalloc_objs = n;
	return 0;
}

static bool kv_find(const struct prof_kv *kv, uint32_t n, const char *name, uint64_t *v)
{
	uint32_t i;

	for (i = 0; name && i < n; i++) {
		if (strcmp(kv[i].key, name) == 0) {
			if (v)
				*v = kv[i].value;
			return true;
		}
	}
	return false;
}

bool prof_process__stat(const struct prof_process *proc, const char *name, uint64_t *v)
{
	return kv_find(proc->stats, proc->nstats, name, v);
}

bool prof_process__call(const struct prof_process *proc, const char *name, uint64_t *v)
{
	return kv_find(proc->calls, proc->ncalls, name, v);
}

/* ---- drops and notes -------------------------------------------------------------------- */

int profile__add_drop(struct profile *p, const char *reason, uint64_t count)
{
	int err = 0;
	struct prof_kv *e = kv_get(p, &p->drops, &p->ndrops, reason, &err);

	if (!e)
		return err;
	e->value += count;
	return 0;
}

int profile__add_cache(struct profile *p, const struct prof_cache *c)
{
	struct prof_cache *n = realloc(p->caches, (p->ncaches + 1) * sizeof(*n));
	int err = 0;

	if (!n)
		return -ENOMEM;
	p->caches = n;
	n[p->ncaches] = *c;
	n[p->ncaches].name = intern(p, c->name ? c->name : "?", &err);
	if (!n[p->ncaches].name)
		return err;
	p->ncaches++;
	return 0;
}

static int cache_order(const void *a, const void *b)
{
	const struct prof_cache *x = a, *y = b;

	return x->pid != y->pid ? (x->pid < y->pid ? -1 : 1) : strcmp(x->name, y->name);
}

void profile__merge_caches(struct profile *p)
{
	uint32_t n = 0;

	if (!p->ncaches)
		return;
	qsort(p->caches, p->ncaches, sizeof(*p->caches), cache_order);
	for (uint32_t i = 0; i < p->ncaches; i++) {
		struct prof_cache *c = &p->caches[i], *to = n ? &p->caches[n - 1] : NULL;

		if (to && !cache_order(to, c)) {
			to->allocs += c->allocs;
			to->frees += c->frees;
			to->bytes_req += c->bytes_req;
			to->bytes_alloc += c->bytes_alloc;
			to->live += c->live;
		} else {
			p->caches[n++] = *c;
		}
	}
	p->ncaches = n;
}

static int add_note(struct profile *p, bool once, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static int add_note(struct profile *p, bool once, const char *fmt, va_list ap)
{
	const char *copy;
	char *s = NULL;
	int err = 0, n;
	uint32_t i;

	n = vasprintf(&s, fmt, ap);
	if (n < 0)
		return -ENOMEM;
	/* interned: an equal note is the same pointer */
	copy = intern(p, s, &err);
	free(s);
	if (!copy)
		return err;
	for (i = 0; i < p->nnotes; i++) {
		if (p->notes[i] == copy) {
			if (!once)
				p->note_counts[i]++;
			return 0;
		}
	}
	err = GROW(p->notes, p->nnotes);
	if (!err)
		err = GROW(p->note_counts, p->nnotes);
	if (err)
		return err;
	p->notes[p->nnotes] = copy;
	p->note_counts[p->nnotes++] = 1;
	return 0;
}

int profile__add_note(struct profile *p, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = add_note(p, false, fmt, ap);
	va_end(ap);
	return err;
}

int profile__add_note_once(struct profile *p, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = add_note(p, true, fmt, ap);
	va_end(ap);
	return err;
}

const char *profile__note(const struct profile *p, uint32_t i, char *buf, size_t len)
{
	uint32_t count = p->note_counts ? p->note_counts[i] : 1;
	int n;

	if (count <= 1)
		return p->notes[i];
	n = snprintf(buf, len, "%s (%u times)", p->notes[i], count);
	return n < 0 || (size_t)n >= len ? p->notes[i] : buf;
}

int profile__add_info(struct profile *p, const char *key, const char *fmt, ...)
{
	const char *k = NULL, *v = NULL;
	char *s = NULL;
	va_list ap;
	uint32_t i;
	int err, n;

	if (!key || !*key || strchr(key, ':') || strchr(key, '\n'))
		return -EINVAL;
	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	err = intern_into(p, &v, s);
	free(s);
	if (err)
		return err;
	for (i = 0; i < p->ninfo; i++) {
		if (!strcmp(p->info[i].key, key)) {
			p->info[i].value = v;
			return 0;
		}
	}
	err = intern_into(p, &k, key);
	if (!err)
		err = GROW(p->info, p->ninfo);
	if (!err)
		p->info[p->ninfo++] = (struct prof_info){ k, v };
	return err;
}

const char *profile__info(const struct profile *p, const char *key)
{
	for (uint32_t i = 0; key && i < p->ninfo; i++)
		if (!strcmp(p->info[i].key, key))
			return p->info[i].value;
	return NULL;
}

int64_t profile__drop(const struct profile *p, const char *reason)
{
	for (uint32_t i = 0; reason && i < p->ndrops; i++)
		if (!strcmp(p->drops[i].key, reason))
			return (int64_t)p->drops[i].value;
	return -1;
}

int profile__set_period(struct profile *p, const char *type, const char *unit, int64_t period)
{
	const char *t = NULL, *u = NULL;
	int err;

	if (!type != !unit)
		return -EINVAL;
	err = intern_into(p, &t, type);
	if (!err)
		err = intern_into(p, &u, unit);
	if (err)
		return err;
	p->period_type.type = t;
	p->period_type.unit = u;
	p->period = t ? period : 0;
	return 0;
}

/* ---- series ----------------------------------------------------------------------------- */

int profile__add_rate_point(struct profile *p, struct prof_rate *r, uint32_t pid,
			    const char *name, const char *unit, int64_t t_ns, uint64_t total,
			    double scale)
{
	int64_t dt = t_ns - r->last_t_ns;
	uint64_t d = total - r->last;
	int err = 0;

	if (dt > 0)
		err = profile__add_point(p, pid, name, unit, r->last_t_ns + dt / 2,
					 (int64_t)((double)d * 1e9 / (double)dt * scale + 0.5));
	r->last = total;
	r->last_t_ns = t_ns;
	return err;
}

int profile__add_point(struct profile *p, uint32_t pid, const char *name, const char *unit,
		       int64_t t_ns, int64_t v)
{
	struct prof_series *s = NULL;
	int err = 0;

	if (!name || !unit)
		return -EINVAL;
	/* a handful of series per process: a linear search is the right size */
	for (uint32_t i = p->nseries; i-- > 0;) {
		if (p->series[i].pid == pid && !strcmp(p->series[i].name, name)) {
			s = &p->series[i];
			break;
		}
	}
	if (!s) {
		const char *n, *u;

		err = GROW(p->series, p->nseries);
		if (err)
			return err;
		n = intern(p, name, &err);
		u = n ? intern(p, unit, &err) : NULL;
		if (!u)
			return err ? err : -ENOMEM;
		s = &p->series[p->nseries++];
		*s = (struct prof_series){ .pid = pid, .name = n, .unit = u };
	}
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		int64_t *t = realloc(s->t_ns, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		s->t_ns = t;
		t = realloc(s->v, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->v = t;
		s->cap = cap;
	}
	s->t_ns[s->n] = t_ns;
	s->v[s->n++] = v;
	return 0;
}

/* ---- display ---------------------------------------------------------------------------- */

const char *profile__frame_name(const struct profile *p, const struct prof_location *loc,
				uint32_t line_idx, char *buf, size_t len)
{
	if (!len)
		return buf;
	if (line_idx < loc->nlines) {
		const struct prof_function *f = &p->functions[loc->lines[line_idx].function];
		const char *name = f->name && *f->name ? f->name : f->system_name;

		snprintf(buf, len, "%s", name && *name ? name : "??");
	} else if (loc->mapping != PROF_NONE) {
		const char *file = p->mappings[loc->mapping].file;
		const char *base = strrchr(file, '/');

		snprintf(buf, len, "%s+0x%" PRIx64, base && base[1] ? base + 1 : file,
			 loc->module_offset);
	} else {
		snprintf(buf, len, "0x%" PRIx64, loc->address);
	}
	return buf;
}

bool profile__mapping_is_kernel(const struct prof_mapping *m)
{
	size_t len;

	if (!m || !m->file)
		return false;
	if (!strcmp(m->file, "[kernel.kallsyms]") || !strcmp(m->file, "[bpf]"))
		return true;
	len = strlen(m->file);
	/* user mappings named in brackets ([vdso], [heap], [stack]) are in the lower half; the
	 * vsyscall page is in the upper half but runs in user mode */
	return len > 2 && m->file[0] == '[' && m->file[len - 1] == ']' &&
	       m->start >= 0x8000000000000000ULL && strcmp(m->file, "[vsyscall]") != 0;
}

bool profile__location_is_kernel(const struct profile *p, const struct prof_location *loc)
{
	return loc->mapping != PROF_NONE && loc->mapping < p->nmappings &&
	       profile__mapping_is_kernel(&p->mappings[loc->mapping]);
}

/* ---- peaks ------------------------------------------------------------------------------ */

int prof_process__set_peak(struct profile *p, struct prof_process *proc,
			   const struct prof_peak *peak)
{
	struct prof_peak_site *sites = NULL;
	uint32_t i;

	for (i = 0; i < peak->nsites; i++) {
		if (peak->sites[i].sample >= p->nsamples)
			return -EINVAL;
	}
	if (peak->nsites) {
		sites = arena_dup(p, peak->sites, sizeof(*sites) * peak->nsites);
		if (!sites)
			return -ENOMEM;
	}
	proc->peak = *peak;
	proc->peak.sites = sites;
	return 0;
}

/* ---- groups ----------------------------------------------------------------------------- */

struct prof_group *profile__add_group(struct profile *p)
{
	int err = GROW(p->groups, p->ngroups);

	if (err) {
		errno = -err;
		return NULL;
	}
	p->groups[p->ngroups] = (struct prof_group){ 0 };
	return &p->groups[p->ngroups++];
}

int prof_group__add_label(struct profile *p, struct prof_group *g, const char *key,
			  const char *value)
{
	const char *k = NULL, *v = NULL;
	int err;

	if (!key || !value)
		return -EINVAL;
	err = intern_into(p, &k, key);
	err = err ?: intern_into(p, &v, value);
	err = err ?: GROW(g->labels, g->nlabels);
	if (!err)
		g->labels[g->nlabels++] = (struct prof_info){ k, v };
	return err;
}

int prof_group__add_stat(struct profile *p, struct prof_group *g, const char *name,
			 const char *label, const char *unit, int64_t value)
{
	struct prof_group_stat st = { .value = value };
	int err;

	if (!name || !unit)
		return -EINVAL;
	err = intern_into(p, &st.name, name);
	err = err ?: intern_into(p, &st.label, label);
	err = err ?: intern_into(p, &st.unit, unit);
	err = err ?: GROW(g->stats, g->nstats);
	if (!err)
		g->stats[g->nstats++] = st;
	return err;
}

int prof_group__add_hist(struct profile *p, struct prof_group *g, const char *name,
			 const char *unit, uint32_t sub, const uint64_t *counts, uint32_t n)
{
	struct prof_hist h = { .sub = sub, .n = n };
	int err;

	if (!name || !unit || !counts || !n || !sub || (sub & (sub - 1)))
		return -EINVAL;
	err = intern_into(p, &h.name, name);
	err = err ?: intern_into(p, &h.unit, unit);
	if (err)
		return err;
	h.counts = arena_dup(p, counts, n * sizeof(*counts));
	if (!h.counts)
		return -ENOMEM;
	err = GROW(g->hists, g->nhists);
	if (!err)
		g->hists[g->nhists++] = h;
	return err;
}

const char *prof_group__label(const struct prof_group *g, const char *key)
{
	for (uint32_t i = 0; key && i < g->nlabels; i++)
		if (!strcmp(g->labels[i].key, key))
			return g->labels[i].value;
	return NULL;
}

int prof_group__set_note(struct profile *p, struct prof_group *g, const char *note)
{
	if (prof_group__nnames(g) < g->nlabels)
		return 0;
	return prof_group__add_label(p, g, "note", note);
}

uint32_t prof_group__nnames(const struct prof_group *g)
{
	return g->nlabels && !strcmp(g->labels[g->nlabels - 1].key, "note") ? g->nlabels - 1
									      : g->nlabels;
}
