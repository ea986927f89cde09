/* Kernel text symbols from /proc/kallsyms, sorted once for binary search.
 *
 * The file is read whole into one buffer that also serves as the name storage (lines are cut
 * in place), so loading ~120k lines is one read loop, one parse pass and one sort.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "util/util.h"

struct ksym {
	uint64_t addr;
	const char *name;
	int rank;		/* lower is preferred among symbols at one address */
};

struct ksyms {
	char *buf;
	struct ksym *syms;
	size_t nsyms;
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

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *k = calloc(1, sizeof(*k));
	size_t len, cap = 0;
	bool any_addr = false;
	char *p, *end;
	int err = -ENOMEM;

	if (!k)
		goto err;
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
		char *q = p, *name, *nend;
		uint64_t addr = 0;
		char type;
		int d;

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
		*nend = '\0';
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
		k->syms[k->nsyms++] = (struct ksym){ addr, name, type_rank(type) };
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
	return k;
err:
	ksyms__free(k);
	errno = -err;
	return NULL;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->buf);
	free(k);
}

const char *ksyms__resolve(const struct ksyms *k, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;
	uint64_t base;

	if (!k)
		return NULL;
	hi = k->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* First (preferred) entry among aliases at that address. */
	base = k->syms[lo - 1].addr;
	lo--;
	while (lo > 0 && k->syms[lo - 1].addr == base)
		lo--;
	if (offset)
		*offset = addr - base;
	return k->syms[lo].name;
}
