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

/* The process being scanned, and how many reads finding its roots took (leak_scan counts its
 * own). */
struct proc {
	pid_t pid;
	uint64_t read_calls;
};

static ssize_t proc_readv(void *ctx, const struct iovec *l, unsigned long nl,
			  const struct iovec *r, unsigned long nr)
{
	return process_vm_readv(((struct proc *)ctx)->pid, l, nl, r, nr, 0);
}

static bool read_word(struct proc *pr, uint64_t addr, uint64_t *w)
{
	struct iovec l = { w, sizeof(*w) }, r = { (void *)(uintptr_t)addr, sizeof(*w) };

	pr->read_calls++;
	return proc_readv(pr, &l, 1, &r, 1) == sizeof(*w);
}

static int cmp_addr(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The first block at or after start; blocks sorted by address. */
static size_t first_block(const struct leak_block *b, size_t n, uint64_t start)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].addr < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* glibc's non-main arenas live in heaps aligned to ARENA_HEAP whose first word points at the
 * arena's state, itself inside such a heap: free chunks there hold stale pointers. */
static bool is_arena_heap(struct proc *pr, const struct sym_map *maps, size_t nmaps,
			  const struct sym_map *m)
{
	uint64_t ar;

	if (m->kind != SYM_MAP_ANON || m->start % ARENA_HEAP)
		return false;
	if (!read_word(pr, m->start, &ar))
		return false;
	for (size_t i = 0; i < nmaps; i++)
		if (maps[i].kind == SYM_MAP_ANON && maps[i].start == (ar & ~(ARENA_HEAP - 1)) &&
		    ar < maps[i].end)
			return true;
	return false;
}

struct range {
	uint64_t start, end;
};

struct ranges {
	struct range *r;
	size_t n, cap;
};

static int add_range(struct ranges *rs, uint64_t start, uint64_t end)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct range *nr = realloc(rs->r, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		rs->r = nr;
		rs->cap = cap;
	}
	rs->r[rs->n++] = (struct range){ start, end };
	return 0;
}

/* glibc's heap_info at the base of a non-main arena heap: its size, if it looks like one that
 * holds addr (ar_ptr set, size a sane multiple of pages covering addr). */
static uint64_t arena_heap_size(struct proc *pr, uint64_t base, uint64_t addr)
{
	uint64_t ar, size;

	if (!read_word(pr, base, &ar) || !ar || !read_word(pr, base + 16, &size))
		return 0;
	if (size < 4096 || size > ARENA_HEAP || size % 4096 || addr >= base + size)
		return 0;
	return size;
}

/*
 * The parts of mapping m that are the allocator's heap, as ranges (blocks sorted, [k, end) the
 * ones inside m). The kernel merges neighbouring anonymous mappings, so one mapping can hold a
 * glibc mmapped chunk next to the program's own memory, or an arena heap: only the heap parts
 * are cut out of the roots. With glibc: a block in a 64 MiB-aligned arena heap cuts the heap
 * (heap_info.size), a block in an mmapped chunk (size word with IS_MMAPPED) cuts the chunk;
 * otherwise (or another allocator) the whole mapping.
 */
static int heap_parts(struct proc *pr, bool glibc, const struct sym_map *m,
		      const struct leak_block *b, size_t k, size_t n, struct ranges *rs)
{
	uint64_t covered = 0;

	for (; k < n && b[k].addr < m->end; k++) {
		uint64_t a = b[k].addr, base = a & ~(ARENA_HEAP - 1), w, size;

		if (a < covered)
			continue;
		if (!glibc)
			return add_range(rs, m->start, m->end);
		if (base >= m->start && (size = arena_heap_size(pr, base, a))) {
			covered = base + size;
			if (add_range(rs, base, covered))
				return -ENOMEM;
			continue;
		}
		if (a >= 16 && read_word(pr, a - 8, &w) && (w & 2) &&
		    (w & ~7ull) >= b[k].size + 16 && a - 16 + (w & ~7ull) <= m->end) {
			covered = a - 16 + (w & ~7ull);
			if (add_range(rs, a - 16, covered))
				return -ENOMEM;
			continue;
		}
		return add_range(rs, m->start, m->end);
	}
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool is_device(const struct sym_map *m)
{
	return m->kind == SYM_MAP_FILE && !strncmp(m->path, "/dev/", 5) &&
	       strcmp(m->path, "/dev/zero") && strncmp(m->path, "/dev/shm/", 9);
}

static uint64_t cut_at_sp(const struct target_thread *t, size_t n, uint64_t start, uint64_t end)
{
	for (size_t k = 0; k < n; k++)
		if (t[k].have_regs && t[k].sp >= start && t[k].sp < end &&
		    t[k].sp - RED_ZONE > start)
			start = t[k].sp - RED_ZONE;
	return start;
}

/* A root region, less the dead part of a stack: a thread's stack pointer in it moves its start
 * up to the pointer less the red zone. A dead thread's final one does too: its stack stays
 * mapped after it, and below that pointer are frames it had left. */
static int add_root(struct leak_region **roots, size_t *n, size_t *cap, uint64_t start,
		    uint64_t end, unsigned flags, const struct heapscan_opts *o)
{
	struct leak_region *rg;

	start = cut_at_sp(o->frozen->t, o->frozen->n, start, end);
	start = cut_at_sp(o->dead, o->ndead, start, end);
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;

		rg = realloc(*roots, nc * sizeof(*rg));
		if (!rg)
			return -ENOMEM;
		*roots = rg;
		*cap = nc;
	}
	(*roots)[(*n)++] = (struct leak_region){ start, end, flags };
	return 0;
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
	struct ranges cut = {};
	uint64_t *regs = NULL;
	size_t nmaps = 0, nroots = 0, caproots = 0, nregs = 0;
	struct proc pr = { .pid = o->pid };
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
	lmaps = calloc(nmaps ? nmaps : 1, sizeof(*lmaps));
	regs = calloc((o->frozen->n + o->ndead + 1) * TARGET_NREGS, sizeof(*regs));
	if (!lmaps || !regs) {
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
	/* a dead thread's registers held what it was working on when killed: roots, as those of
	 * the threads stopped now are */
	for (size_t i = 0; i < o->ndead; i++) {
		res->threads++;
		memcpy(regs + nregs, o->dead[i].regs, sizeof(o->dead[i].regs));
		nregs += TARGET_NREGS;
	}

	for (size_t i = 0; i < nmaps; i++) {
		const struct sym_map *m = &maps[i];
		const struct sym_map *prev = i ? &maps[i - 1] : NULL;
		size_t k = first_block(blocks, n, m->start);
		unsigned flags;
		uint64_t a;

		lmaps[i] = (struct leak_map){ m->start, m->end, m->kind == SYM_MAP_FILE,
					      m->perms[0] == 'r', m->perms[2] == 'x' };
		if (m->perms[0] != 'r' || m->perms[1] != 'w' || is_device(m))
			continue;
		if (m->kind == SYM_MAP_SPECIAL && !strcmp(m->path, "[heap]"))
			continue;
		cut.n = 0;
		if (k < n && blocks[k].addr < m->end) {
			err = heap_parts(&pr, o->glibc, m, blocks, k, n, &cut);
			if (err)
				goto out;
		} else if (o->glibc && is_arena_heap(&pr, maps, nmaps, m)) {
			continue;
		}
		/* the allocator's data, and the bss that continues it */
		flags = o->alloc_path &&
			((m->kind == SYM_MAP_FILE && !strcmp(m->path, o->alloc_path)) ||
			 (m->kind == SYM_MAP_ANON && prev && prev->end == m->start &&
			  prev->kind == SYM_MAP_FILE && !strcmp(prev->path, o->alloc_path))) ?
			LEAK_REGION_ALLOCATOR : 0;
		/* the mapping less its heap parts */
		qsort(cut.r, cut.n, sizeof(*cut.r), cmp_range);
		a = m->start;
		for (size_t c = 0; c <= cut.n; c++) {
			uint64_t end = c < cut.n ? cut.r[c].start : m->end;

			if (end > m->end)
				end = m->end;
			if (end > a) {
				err = add_root(&roots, &nroots, &caproots, a, end, flags, o);
				if (err)
					goto out;
				res->root_bytes += roots[nroots - 1].end - roots[nroots - 1].start;
			}
			if (c < cut.n && cut.r[c].end > a)
				a = cut.r[c].end;
		}
	}
	res->nroots = nroots;
	so.ctx = &pr;
	so.maps = lmaps;
	so.nmaps = nmaps;
	err = leak_scan(blocks, n, roots, nroots, regs, nregs, &so, &res->st);
	res->st.read_calls += pr.read_calls;
out:
	free(roots);
	free(lmaps);
	free(regs);
	free(cut.r);
	sym_maps__free(maps, nmaps);
	return err;
}
