/* Kernel text symbols from /proc/kallsyms, sorted once for binary search, each with its region:
 * the core kernel, a module, or BPF programs.
 *
 * The file is read whole into one buffer that also serves as the name storage (lines are cut
 * in place), so loading ~120k lines is one read loop, one parse pass and one sort.
 *
 * kallsyms gives no sizes, so "the closest symbol below" would name the last function of a
 * region for any address past it (data, freed init text, a module loaded after the read). Where
 * the end can be known it is used instead: _etext and _einittext end the core kernel's text
 * and init text, and /proc/modules gives each module's base and size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "util/util.h"

#define RANK_END 4	/* _etext, _einittext: where text ends, never a function */

struct ksym {
	uint64_t addr;
	const char *name;
	uint32_t region;	/* index into regions, 0 = the core kernel */
	int rank;		/* lower is preferred among symbols at one address */
};

struct kregion {
	const char *name;	/* NULL: the core kernel; "bpf"; a module's name */
	uint64_t lo, hi;	/* lowest and highest symbol address */
	uint64_t end_mark;	/* highest end marker (core kernel), 0: none */
	uint64_t base, size;	/* from the modules file; size 0: unknown */
	bool any;		/* has symbols */
};

struct ksyms {
	char *buf;
	struct ksym *syms;
	size_t nsyms;
	struct kregion *regions;
	uint32_t nregions, cap_regions;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

static int type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	default:
		return 3;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The region named `name` (NULL: the core kernel), added if new; UINT32_MAX on ENOMEM.
 * kallsyms lists a module's symbols together, so the last answer is tried first. */
static uint32_t region_of(struct ksyms *k, const char *name, uint32_t *last)
{
	uint32_t i;

	if (!name)
		return 0;
	if (*last && !strcmp(k->regions[*last].name, name))
		return *last;
	for (i = 1; i < k->nregions; i++)
		if (!strcmp(k->regions[i].name, name))
			return *last = i;
	if (k->nregions == k->cap_regions) {
		uint32_t cap = k->cap_regions * 2;
		struct kregion *n = realloc(k->regions, cap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		k->regions = n;
		k->cap_regions = cap;
	}
	k->regions[k->nregions] = (struct kregion){ .name = name };
	return *last = k->nregions++;
}

/* /proc/modules: "name size refs deps state 0xaddr ...". Bounds of modules without text symbols
 * are kept too: an address in them is still known to be theirs. */
static int load_modules(struct ksyms *k, const char *path, char **buf)
{
	uint32_t last = 0;
	char *line, *save = NULL;

	*buf = util_read_file(path, NULL);
	if (!*buf)
		return 0;
	for (line = strtok_r(*buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[6], *s2 = NULL, *tok;
		unsigned long long size, base;
		uint32_t r;
		int n = 0;

		for (tok = strtok_r(line, " ", &s2); tok && n < 6; tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		if (n < 6)
			continue;
		size = strtoull(f[1], NULL, 10);
		base = strtoull(f[5], NULL, 16);
		if (!size || !base)
			continue;
		r = region_of(k, f[0], &last);
		if (r == UINT32_MAX)
			return -ENOMEM;
		k->regions[r].base = base;
		k->regions[r].size = size;
	}
	return 0;
}

struct ksyms *ksyms__load_paths(const char *path, const char *modules)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	char *mods_buf = NULL;
	size_t len, cap = 0;
	bool any_addr = false;
	uint32_t last = 0;
	char *p, *end;
	int err = -ENOMEM;

	if (!k)
		goto err;
	k->cap_regions = 16;
	k->regions = calloc(k->cap_regions, sizeof(*k->regions));
	if (!k->regions)
		goto err;
	k->nregions = 1;
	k->buf = util_read_file(path ? path : "/proc/kallsyms", &len);
	if (!k->buf) {
		err = -errno;
		goto err;
	}
	/* About 40 bytes per line: a cheap upper bound that avoids regrowing. */
	cap = len / 24 + 16;
	k->syms = malloc(cap * sizeof(*k->syms));
	if (!k->syms)
		goto err;

	p = k->buf;
	end = k->buf + len;
	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p));
		char *q = p, *name, *nend, *mod = NULL;
		uint64_t addr = 0;
		uint32_t region;
		char type;
		int d, rank;

		if (!eol)
			eol = end;
		*eol = '\0';
		/* "ffffffff81000000 T _text" or "... t name\t[module]" */
		while ((d = hexval(*q)) >= 0) {
			addr = (addr << 4) | (uint64_t)d;
			q++;
		}
		if (q == p || q[0] != ' ' || !q[1] || q[2] != ' ')
			goto next;
		type = q[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			goto next;
		name = q + 3;
		nend = name;
		while (*nend && *nend != '\t' && *nend != ' ')
			nend++;
		if (nend == name)
			goto next;
		if (*nend) {
			char *m = nend + 1, *mend;

			while (*m == ' ' || *m == '\t')
				m++;
			if (*m == '[' && (mend = strchr(m, ']')) && mend > m + 1) {
				*mend = '\0';
				mod = m + 1;
			}
		}
		*nend = '\0';
		region = region_of(k, mod, &last);
		if (region == UINT32_MAX)
			goto err;
		rank = type_rank(type);
		if (!mod && (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))) {
			rank = RANK_END;
			if (addr > k->regions[0].end_mark)
				k->regions[0].end_mark = addr;
		}
		if (k->nsyms == cap) {
			struct ksym *n;

			cap *= 2;
			n = realloc(k->syms, cap * sizeof(*n));
			if (!n)
				goto err;
			k->syms = n;
		}
		if (addr)
			any_addr = true;
		k->syms[k->nsyms++] = (struct ksym){ addr, name, region, rank };
next:
		p = eol + 1;
	}
	/* kptr_restrict shows every address as 0: such a table would resolve everything to the
	 * first name, so refuse it. */
	if (k->nsyms && !any_addr) {
		err = -EPERM;
		goto err;
	}
	qsort(k->syms, k->nsyms, sizeof(*k->syms), ksym_cmp);
	for (size_t i = 0; i < k->nsyms; i++) {
		struct kregion *r = &k->regions[k->syms[i].region];

		if (!r->any || k->syms[i].addr < r->lo)
			r->lo = k->syms[i].addr;
		if (!r->any || k->syms[i].addr > r->hi)
			r->hi = k->syms[i].addr;
		r->any = true;
	}
	if (modules) {
		err = load_modules(k, modules, &mods_buf);
		if (err)
			goto err;
		/* the names of modules without text symbols point into mods_buf: keep it */
		for (uint32_t i = 1; i < k->nregions; i++) {
			if (!k->regions[i].any && k->regions[i].name) {
				char *copy = strdup(k->regions[i].name);

				if (!copy)
					goto err_mods;
				/* owned: ksyms__free frees the names of regions without symbols */
				k->regions[i].name = copy;
			}
		}
		free(mods_buf);
	}
	return k;
err_mods:
	err = -ENOMEM;
	free(mods_buf);
err:
	ksyms__free(k);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	/* module bounds belong to this kernel only: not with a file standing in for kallsyms */
	return ksyms__load_paths(path, path ? NULL : "/proc/modules");
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	for (uint32_t i = 1; i < k->nregions; i++)
		if (!k->regions[i].any)
			free((char *)k->regions[i].name);
	free(k->regions);
	free(k->syms);
	free(k->buf);
	free(k);
}

static void region_bounds(const struct kregion *r, uint64_t *start, uint64_t *end)
{
	if (r->size) {
		*start = r->base;
		*end = r->base + r->size;
	} else {
		*start = r->lo;
		*end = r->end_mark && r->end_mark >= r->hi ? r->end_mark : r->hi + 1;
	}
}

void ksyms__core_bounds(const struct ksyms *k, uint64_t *start, uint64_t *end)
{
	*start = *end = 0;
	if (k && k->regions[0].any)
		region_bounds(&k->regions[0], start, end);
}

/* The module whose bounds (from the modules file) hold addr, or NULL. */
static const struct kregion *sized_region_at(const struct ksyms *k, uint64_t addr)
{
	for (uint32_t i = 1; i < k->nregions; i++) {
		const struct kregion *r = &k->regions[i];

		if (r->size && addr >= r->base && addr - r->base < r->size)
			return r;
	}
	return NULL;
}

int ksyms__lookup(const struct ksyms *k, uint64_t addr, struct ksym_info *info)
{
	const struct kregion *in, *r;
	const struct ksym *s;
	size_t lo = 0, hi;
	uint64_t base;

	memset(info, 0, sizeof(*info));
	if (!k)
		return -ENOENT;
	in = sized_region_at(k, addr);
	hi = k->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		goto region_only;
	/* First (preferred) entry among aliases at that address. */
	base = k->syms[lo - 1].addr;
	lo--;
	while (lo > 0 && k->syms[lo - 1].addr == base)
		lo--;
	s = &k->syms[lo];
	r = &k->regions[s->region];
	/* past the end of the text the symbol is in: not that function */
	if (s->rank == RANK_END || (in && in != r) || (r->size && addr - r->base >= r->size))
		goto region_only;
	info->name = s->name;
	info->offset = addr - base;
	info->module = r->name;
	region_bounds(r, &info->start, &info->end);
	return 0;
region_only:
	if (in) {
		info->module = in->name;
		region_bounds(in, &info->start, &info->end);
	}
	return -ENOENT;
}

const char *ksyms__resolve_mod(const struct ksyms *k, uint64_t addr, uint64_t *offset,
			       const char **module)
{
	struct ksym_info info;

	ksyms__lookup(k, addr, &info);
	if (offset)
		*offset = info.offset;
	if (module)
		*module = info.module;
	return info.name;
}

const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	return ksyms__resolve_mod(k, addr, offset, NULL);
}
