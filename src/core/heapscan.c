/* The leak scan of a stopped process: roots from /proc/PID/maps and the threads, memory read
 * with process_vm_readv (the caller holds every thread stopped, so the memory is one
 * consistent cut). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "core/heapscan.h"
#include "symbolize/procmaps.h"
#include "util/util.h"

#define RED_ZONE 128		/* x86-64 ABI: below the stack pointer, still the frame's */
#define ARENA_HEAP (64ull << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit: arena heaps align to it */
#define CACHE_BYTES (256ull << 20)	/* blocks read up front when they fit (leak_scan_opts) */

static ssize_t proc_readv(void *ctx, const struct iovec *l, unsigned long nl,
			  const struct iovec *r, unsigned long nr)
{
	return process_vm_readv(*(pid_t *)ctx, l, nl, r, nr, 0);
}

static int cmp_addr(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Does [start, end) hold the start of a block? blocks sorted by address. */
static bool holds_block(const struct leak_block *b, size_t n, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && b[lo].addr < end;
}

/* glibc's non-main arenas live in heaps aligned to ARENA_HEAP whose first word points at the
 * arena's state, itself inside such a heap: free chunks there hold stale pointers. */
static bool is_arena_heap(pid_t pid, const struct sym_map *maps, size_t nmaps,
			  const struct sym_map *m)
{
	struct iovec l, r;
	uint64_t ar;

	if (m->kind != SYM_MAP_ANON || m->start % ARENA_HEAP)
		return false;
	l = (struct iovec){ &ar, sizeof(ar) };
	r = (struct iovec){ (void *)(uintptr_t)m->start, sizeof(ar) };
	if (process_vm_readv(pid, &l, 1, &r, 1, 0) != sizeof(ar))
		return false;
	for (size_t i = 0; i < nmaps; i++)
		if (maps[i].kind == SYM_MAP_ANON && maps[i].start == (ar & ~(ARENA_HEAP - 1)) &&
		    ar < maps[i].end)
			return true;
	return false;
}

static bool is_device(const struct sym_map *m)
{
	return m->kind == SYM_MAP_FILE && !strncmp(m->path, "/dev/", 5) &&
	       strcmp(m->path, "/dev/zero") && strncmp(m->path, "/dev/shm/", 9);
}

int heapscan__run(const struct heapscan_opts *o, struct leak_block *blocks, size_t n,
		  struct heapscan_result *res)
{
	struct leak_scan_opts so = {
		.readv = proc_readv, .heuristics = o->heuristics, .glibc_links = o->glibc,
		.cache_bytes = CACHE_BYTES,
	};
	struct leak_region *roots = NULL;
	struct leak_map *lmaps = NULL;
	struct sym_map *maps = NULL;
	uint64_t *regs = NULL;
	size_t nmaps = 0, nroots = 0, nregs = 0;
	char path[64], *text;
	pid_t pid = o->pid;
	int err;

	memset(res, 0, sizeof(*res));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	text = util_read_file(path, NULL);
	if (!text)
		return -errno;
	err = sym_maps__parse(text, &maps, &nmaps);
	free(text);
	if (err)
		return err;
	roots = calloc(nmaps ? nmaps : 1, sizeof(*roots));
	lmaps = calloc(nmaps ? nmaps : 1, sizeof(*lmaps));
	regs = calloc(o->frozen->n ? o->frozen->n * TARGET_NREGS : 1, sizeof(*regs));
	if (!roots || !lmaps || !regs) {
		err = -ENOMEM;
		goto out;
	}
	qsort(blocks, n, sizeof(*blocks), cmp_addr);

	for (size_t i = 0; i < o->frozen->n; i++) {
		const struct target_thread *th = &o->frozen->t[i];

		if (!th->have_regs) {
			res->threads_unknown++;
			continue;
		}
		res->threads++;
		memcpy(regs + nregs, th->regs, sizeof(th->regs));
		nregs += TARGET_NREGS;
	}

	for (size_t i = 0; i < nmaps; i++) {
		const struct sym_map *m = &maps[i];
		const struct sym_map *prev = i ? &maps[i - 1] : NULL;
		struct leak_region *rg;
		bool own;

		lmaps[i] = (struct leak_map){ m->start, m->end, m->kind == SYM_MAP_FILE,
					      m->perms[0] == 'r', m->perms[2] == 'x' };
		if (m->perms[0] != 'r' || m->perms[1] != 'w' || is_device(m))
			continue;
		if (m->kind == SYM_MAP_SPECIAL && !strcmp(m->path, "[heap]"))
			continue;
		if (holds_block(blocks, n, m->start, m->end))
			continue;
		if (o->glibc && is_arena_heap(pid, maps, nmaps, m))
			continue;
		/* the allocator's data, and the bss that continues it */
		own = o->alloc_path && ((m->kind == SYM_MAP_FILE && !strcmp(m->path, o->alloc_path)) ||
			(m->kind == SYM_MAP_ANON && prev && prev->end == m->start &&
			 prev->kind == SYM_MAP_FILE && !strcmp(prev->path, o->alloc_path)));
		rg = &roots[nroots++];
		*rg = (struct leak_region){ m->start, m->end, own ? LEAK_REGION_ALLOCATOR : 0 };
		for (size_t k = 0; k < o->frozen->n; k++) {
			const struct target_thread *th = &o->frozen->t[k];

			if (th->have_regs && th->sp >= m->start && th->sp < m->end &&
			    th->sp - RED_ZONE > rg->start)
				rg->start = th->sp - RED_ZONE;
		}
		res->root_bytes += rg->end - rg->start;
	}
	res->nroots = nroots;
	so.ctx = (void *)&o->pid;
	so.maps = lmaps;
	so.nmaps = nmaps;
	err = leak_scan(blocks, n, roots, nroots, regs, nregs, &so, &res->st);
out:
	free(roots);
	free(lmaps);
	free(regs);
	sym_maps__free(maps, nmaps);
	return err;
}
