/* Kernel data symbols from /proc/kallsyms, for naming a kernel lock by its address
 * (tasklist_lock, rcu_state+0x40): the core kernel's data, bss and read-only data symbols (d,
 * D, b, B, r, R), sorted once. Only an address inside the kernel image's data is named: from
 * the lowest such symbol to _end (heap objects, a task's mm or a module's data are not in it).
 * Per-CPU symbols (their values are offsets, not addresses), modules' and section markers
 * (__start_*, __stop_*) are left out; a kernel built without CONFIG_KALLSYMS_ALL lists no data
 * object, and then none is named. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/symbolize.h"
#include "util/util.h"

/* fewer data symbols than this: the kernel lists no object (CONFIG_KALLSYMS_ALL is off) */
#define KDATA_MIN_SYMS 64

struct kdata_sym {
	uint64_t addr;
	const char *name;
};

struct kdata {
	char *buf;
	struct kdata_sym *syms;
	size_t n;
	uint64_t end;		/* _end: the image's last byte + 1, 0: unknown */
};

static int sym_cmp(const void *a, const void *b)
{
	const struct kdata_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct kdata *kdata__load(const char *path)
{
	struct kdata *k = calloc(1, sizeof(*k));
	size_t cap = 0;
	char *line, *next;

	if (!k)
		return NULL;
	k->buf = util_read_file(path ? path : "/proc/kallsyms", NULL);
	if (!k->buf)
		goto fail;
	for (line = k->buf; line && *line; line = next) {
		char *type, *name, *end;
		uint64_t addr;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		addr = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		type = end + 1;
		if (!type[0] || type[1] != ' ')
			continue;
		name = type + 2;
		/* a module's ("name\t[module]") */
		if (strchr(name, '\t') || strchr(name, ' '))
			continue;
		if (!strcmp(name, "_end")) {
			k->end = addr;
			continue;
		}
		if (!strchr("dDbBrR", type[0]) || addr < 0xffff000000000000ull)
			continue;
		/* section bounds, which every kernel lists: not names of objects */
		if (!strncmp(name, "__start_", 8) || !strncmp(name, "__stop_", 7) ||
		    !strncmp(name, "__end_", 6))
			continue;
		if (k->n == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			struct kdata_sym *s = realloc(k->syms, nc * sizeof(*s));

			if (!s)
				goto fail;
			k->syms = s;
			cap = nc;
		}
		k->syms[k->n].addr = addr;
		k->syms[k->n++].name = name;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), sym_cmp);
	/* without CONFIG_KALLSYMS_ALL the kernel lists only a few markers among its data: none
	 * of them names an object, and the nearest one below an address would mislead */
	if (k->n < KDATA_MIN_SYMS)
		k->n = 0;
	return k;
fail:
	kdata__free(k);
	return NULL;
}

void kdata__free(struct kdata *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->buf);
	free(k);
}

size_t kdata__count(const struct kdata *k)
{
	return k ? k->n : 0;
}

const char *kdata__resolve(const struct kdata *k, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;

	if (!k || !k->n || addr < k->syms[0].addr || (k->end && addr >= k->end) ||
	    (!k->end && addr > k->syms[k->n - 1].addr))
		return NULL;
	hi = k->n;
	/* the last symbol at or below addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	*offset = addr - k->syms[lo].addr;
	return k->syms[lo].name;
}
