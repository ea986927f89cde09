/* Reachability of outstanding blocks (see leakscan.h for the definitions).
 *
 * Memory is read in large pieces through the caller's readv (process_vm_readv on a stopped
 * process): roots in 4 MiB chunks, blocks popped from the mark stack in batches read as spans
 * of neighbouring blocks, one call per batch. Batching does not change the result: the classes are a fixpoint (a block
 * whose state improves is pushed again and rescanned), and each clique's traversal covers the
 * same blocks in any order; only the clique leaders' order matters, and it is the address
 * order, as in memcheck.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/leakscan.h"
#include "profile/profile.h"

#define CHUNK (4u << 20)
#define BATCH 1024		/* blocks popped at a time: at most one span each */
#define MAX_SPANS 1024		/* IOV_MAX */
#define SPAN_GAP 512		/* bytes between blocks read rather than split into two spans */
#define WORD 8u
#define PAGE 4096u
#define NO_CLIQUE SIZE_MAX
#define NO_CACHE UINT64_MAX
#define VTABLE_MAX_CHECK 20	/* words of a candidate vtable memcheck looks at */

enum { ST_UNREACHED, ST_POSSIBLE, ST_REACHABLE, ST_INDIRECT };

struct scan {
	struct leak_block *b;
	size_t n;
	uint64_t lo, hi;	/* no block outside [lo, hi) */
	size_t *stack;
	size_t top;
	char *cache;		/* every block's memory, read once up front, if it fits */
	const struct leak_scan_opts *o;
	struct leak_stats *st;
	char *buf;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The block p points into, or -1. */
static ssize_t find(const struct scan *s, uint64_t p)
{
	size_t lo = 0, hi = s->n;
	const struct leak_block *b;

	if (p < s->lo || p >= s->hi)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->b[mid].addr <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	b = &s->b[lo - 1];
	return p < b->addr + (b->size ? b->size : 1) ? (ssize_t)(lo - 1) : -1;
}

static bool read_mem(struct scan *s, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return s->o->readv(s->o->ctx, &l, 1, &r, 1) == (ssize_t)len;
}

static bool read_word(struct scan *s, uint64_t addr, uint64_t *w)
{
	return read_mem(s, addr, w, sizeof(*w));
}

static const struct leak_map *map_of(const struct scan *s, uint64_t a)
{
	size_t lo = 0, hi = s->o->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->o->maps[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || a >= s->o->maps[lo - 1].end)
		return NULL;
	return &s->o->maps[lo - 1];
}

/* memcheck's test: a readable file mapping whose first words hold at least two pointers into
 * executable file mappings (zero words skipped) before anything else. */
static bool is_vtable(struct scan *s, uint64_t a)
{
	const struct leak_map *m = map_of(s, a);
	uint64_t w[VTABLE_MAX_CHECK + 1], last;
	unsigned nfn = 0;
	size_t nw;

	if (!m || !m->file || !m->r)
		return false;
	last = a + VTABLE_MAX_CHECK * WORD;
	if (last > m->end - 1 - WORD)
		last = m->end - 1 - WORD;
	if (last < a)
		return false;
	nw = (last - a) / WORD + 1;
	if (!read_mem(s, a, w, nw * WORD))
		return false;
	for (size_t i = 0; i < nw; i++) {
		const struct leak_map *f;

		if (!w[i])
			continue;
		f = map_of(s, w[i]);
		if (!f || !f->file || !f->x)
			return false;
		if (++nfn == 2)
			return true;
	}
	return false;
}

/* Which of memcheck's heuristics accepts the interior pointer p into b (first match, in
 * memcheck's order). */
static uint8_t heuristic(struct scan *s, uint64_t p, const struct leak_block *b)
{
	unsigned h = s->o->heuristics;
	uint64_t w0, w1, inner;

	if ((h & 1u << LEAK_HEUR_STDSTRING) && p == b->addr + 3 * WORD &&
	    read_word(s, b->addr + WORD, &w1) && 3 * WORD + w1 + 1 == b->size &&
	    read_word(s, b->addr, &w0) && w0 <= w1)
		return LEAK_HEUR_STDSTRING;
	if ((h & 1u << LEAK_HEUR_LENGTH64) && p == b->addr + WORD &&
	    read_word(s, b->addr, &w0) && w0 > 0 && b->size - WORD == w0)
		return LEAK_HEUR_LENGTH64;
	if ((h & 1u << LEAK_HEUR_NEWARRAY) && p == b->addr + WORD &&
	    read_word(s, b->addr, &w0) && w0 > 0 && (b->size - WORD) % w0 == 0)
		return LEAK_HEUR_NEWARRAY;
	if ((h & 1u << LEAK_HEUR_MULTIPLE_INHERITANCE) && p % WORD == 0 &&
	    read_word(s, p, &inner) && inner % WORD == 0 && inner >= PAGE &&
	    read_word(s, b->addr, &w0) && w0 % WORD == 0 && w0 >= PAGE &&
	    is_vtable(s, inner) && is_vtable(s, w0))
		return LEAK_HEUR_MULTIPLE_INHERITANCE;
	return LEAK_HEUR_NONE;
}

/* glibc: the header of the chunk after b's (its size word sits just below the block; bit 1
 * marks an mmapped chunk, which has no neighbour). */
static bool is_allocator_link(struct scan *s, struct leak_block *b, uint64_t p)
{
	uint64_t size;

	if (!b->link_state) {
		b->link_state = 2;
		if (b->addr >= 2 * WORD && read_word(s, b->addr - WORD, &size) && !(size & 2)) {
			b->link = b->addr - 2 * WORD + (size & ~7ull);
			b->link_state = 1;
		}
	}
	return b->link_state == 1 && p == b->link;
}

static void push(struct scan *s, size_t i)
{
	if (s->b[i].pending)
		return;
	s->b[i].pending = 1;
	s->stack[s->top++] = i;
}

/* A word found in a root, or in a block while looking for what the roots reach. */
static void reach(struct scan *s, uint64_t p, bool definite, unsigned flags)
{
	ssize_t i = find(s, p);
	struct leak_block *b;
	bool via_start;

	if (i < 0)
		return;
	b = &s->b[i];
	if ((flags & LEAK_REGION_ALLOCATOR) && s->o->glibc_links && p != b->addr &&
	    is_allocator_link(s, b, p)) {
		s->st->allocator_links++;
		return;
	}
	if (b->state == ST_REACHABLE) {
		/* a start pointer makes a block reached through a heuristic plainly reachable */
		if (b->heuristic && p == b->addr)
			b->heuristic = LEAK_HEUR_NONE;
		return;
	}
	if (p == b->addr) {
		via_start = true;
	} else if (s->o->heuristics) {
		b->heuristic = heuristic(s, p, b);
		via_start = b->heuristic != LEAK_HEUR_NONE;
	} else {
		via_start = false;
	}
	if (via_start && definite) {
		b->state = ST_REACHABLE;
		push(s, i);
	} else if (b->state == ST_UNREACHED) {
		b->state = ST_POSSIBLE;
		push(s, i);
	}
}

/* A word found in an unreached block while gathering the clique led by block `clique`. */
static void gather(struct scan *s, uint64_t p, size_t clique)
{
	ssize_t i = find(s, p);

	if (i < 0 || (size_t)i == clique || s->b[i].state != ST_UNREACHED)
		return;
	s->b[i].state = ST_INDIRECT;
	push(s, i);
}

static void scan_words(struct scan *s, const char *buf, size_t len, size_t clique,
		       bool definite, unsigned flags)
{
	const uint64_t *w = (const uint64_t *)buf;

	s->st->scanned_bytes += len;
	for (size_t k = 0; k < len / WORD; k++) {
		if (w[k] < s->lo || w[k] >= s->hi)
			continue;
		if (clique == NO_CLIQUE)
			reach(s, w[k], definite, flags);
		else
			gather(s, w[k], clique);
	}
}

/* Scan the aligned words of [start, end), reading CHUNK bytes at a time; unreadable pages are
 * skipped and counted. */
static void scan_range(struct scan *s, uint64_t start, uint64_t end, size_t clique,
		       bool definite, unsigned flags)
{
	uint64_t a = (start + WORD - 1) & ~(uint64_t)(WORD - 1);

	end &= ~(uint64_t)(WORD - 1);
	while (a < end) {
		size_t len = end - a > CHUNK ? CHUNK : end - a;
		struct iovec l = { s->buf, len }, r = { (void *)(uintptr_t)a, len };
		ssize_t got = s->o->readv(s->o->ctx, &l, 1, &r, 1);
		uint64_t next;

		if (got < 0)
			got = 0;
		got &= ~(ssize_t)(WORD - 1);
		scan_words(s, s->buf, got, clique, definite, flags);
		if ((size_t)got == len) {
			a += len;
			continue;
		}
		next = ((a + got) & ~(uint64_t)(PAGE - 1)) + PAGE;
		s->st->unreadable_bytes += (next < end ? next : end) - (a + got);
		a = next;
	}
}

static int cmp_idx_addr(const void *a, const void *b, void *ctx)
{
	const struct leak_block *bl = ctx;
	uint64_t x = bl[*(const size_t *)a].addr, y = bl[*(const size_t *)b].addr;

	return x < y ? -1 : x > y;
}

/* Pop and scan everything on the mark stack. Small blocks are read in batches: a batch sorted
 * by address is read as spans of neighbouring blocks (heaps pack blocks densely, and the
 * kernel's cost is per span, not per byte), one span per iovec. */
static void process(struct scan *s, size_t clique)
{
	struct iovec l[MAX_SPANS], r[MAX_SPANS];
	size_t idx[BATCH], first[MAX_SPANS + 1];

	while (s->top) {
		size_t nb = 0, nspan = 0, bytes = 0, done = 0;
		ssize_t got;

		/* a batch: blocks whose own sizes fit the buffer */
		while (s->top && nb < BATCH) {
			size_t i = s->stack[s->top - 1];
			uint64_t sz = s->b[i].size;

			if (s->b[i].cache_off != NO_CACHE) {
				struct leak_block *b = &s->b[i];
				uint64_t start = b->addr & ~(uint64_t)(WORD - 1);
				uint64_t end = (b->addr + b->size) & ~(uint64_t)(WORD - 1);

				s->top--;
				b->pending = 0;
				scan_words(s, s->cache + b->cache_off, end > start ? end - start : 0,
					   clique, b->state != ST_POSSIBLE, 0);
				continue;
			}
			if (sz > CHUNK / 2) {
				if (nb)
					break;
				s->top--;
				s->b[i].pending = 0;
				scan_range(s, s->b[i].addr, s->b[i].addr + sz, clique,
					   s->b[i].state != ST_POSSIBLE, 0);
				continue;
			}
			if (bytes + sz > CHUNK / 2)
				break;
			s->top--;
			s->b[i].pending = 0;
			idx[nb++] = i;
			bytes += sz;
		}
		if (!nb)
			continue;
		qsort_r(idx, nb, sizeof(*idx), cmp_idx_addr, s->b);
		/* spans: a gap up to SPAN_GAP is read rather than split; the buffer bounds it */
		bytes = 0;
		for (size_t k = 0; k < nb; k++) {
			const struct leak_block *b = &s->b[idx[k]];
			uint64_t start = b->addr & ~(uint64_t)(WORD - 1);
			uint64_t end = (b->addr + b->size) & ~(uint64_t)(WORD - 1);
			uint64_t cur_end = nspan ? (uintptr_t)r[nspan - 1].iov_base +
						   r[nspan - 1].iov_len : 0;

			if (end < start)
				end = start;
			if (nspan && start <= cur_end + SPAN_GAP && end > cur_end &&
			    bytes + (end - cur_end) <= CHUNK) {
				bytes += end - cur_end;
				r[nspan - 1].iov_len += end - cur_end;
				l[nspan - 1].iov_len += end - cur_end;
				continue;
			}
			if (nspan && start >= (uintptr_t)r[nspan - 1].iov_base && end <= cur_end)
				continue;	/* inside the span already */
			if (nspan == MAX_SPANS || bytes + (end - start) > CHUNK)
				break;	/* cannot happen with the batch limits; be safe */
			first[nspan] = k;
			r[nspan] = (struct iovec){ (void *)(uintptr_t)start, end - start };
			l[nspan] = (struct iovec){ s->buf + bytes, end - start };
			bytes += end - start;
			nspan++;
		}
		first[nspan] = nb;
		got = s->o->readv(s->o->ctx, l, nspan, r, nspan);
		if (got < 0)
			got = 0;
		/* blocks of spans read whole are scanned from the buffer, the rest one by one */
		for (size_t sp = 0, k = 0; k < nb; k++) {
			struct leak_block *b = &s->b[idx[k]];
			uint64_t start = b->addr & ~(uint64_t)(WORD - 1);
			uint64_t end = (b->addr + b->size) & ~(uint64_t)(WORD - 1);
			bool definite = b->state != ST_POSSIBLE;

			while (sp + 1 < nspan && k >= first[sp + 1]) {
				done += l[sp].iov_len;
				sp++;
			}
			if (end < start)
				end = start;
			if (sp < nspan && k >= first[sp] && done + l[sp].iov_len <= (size_t)got &&
			    start >= (uintptr_t)r[sp].iov_base &&
			    end <= (uintptr_t)r[sp].iov_base + r[sp].iov_len)
				scan_words(s, (char *)l[sp].iov_base +
					   (start - (uintptr_t)r[sp].iov_base), end - start, clique,
					   definite, 0);
			else
				scan_range(s, b->addr, b->addr + b->size, clique, definite, 0);
		}
	}
}

/* Read every block once, in address order as spans of neighbours (gaps up to SPAN_GAP read
 * along), MAX_SPANS per call, when the spans fit in cache_bytes: then the mark phase and the
 * cliques, which follow pointers one block at a time (a linked list is a chain of single
 * reads), cost no system call per block. Blocks of spans that could not be read go the slow
 * way. */
static void fill_cache(struct scan *s, uint64_t budget)
{
	struct iovec l[MAX_SPANS], r[MAX_SPANS];
	size_t first[MAX_SPANS + 1], nspan = 0;
	uint64_t total = 0, cur_end = 0, off = 0;

	for (size_t k = 0; k < s->n; k++) {
		uint64_t start = s->b[k].addr & ~(uint64_t)(WORD - 1);
		uint64_t end = (s->b[k].addr + s->b[k].size) & ~(uint64_t)(WORD - 1);

		s->b[k].cache_off = NO_CACHE;
		if (end < start)
			end = start;
		if (k && start <= cur_end + SPAN_GAP) {
			if (end > cur_end) {
				total += end - cur_end;
				cur_end = end;
			}
		} else {
			total += end - start;
			cur_end = end;
		}
	}
	if (!budget || total > budget || !total)
		return;
	s->cache = malloc(total);
	if (!s->cache)
		return;

	for (size_t k = 0; k <= s->n; k++) {
		uint64_t start = 0, end = 0;

		if (k < s->n) {
			start = s->b[k].addr & ~(uint64_t)(WORD - 1);
			end = (s->b[k].addr + s->b[k].size) & ~(uint64_t)(WORD - 1);
			if (end < start)
				end = start;
		}
		if (k < s->n && nspan) {
			uint64_t span_end = (uintptr_t)r[nspan - 1].iov_base + r[nspan - 1].iov_len;

			if (start <= span_end + SPAN_GAP) {
				if (end > span_end) {
					r[nspan - 1].iov_len += end - span_end;
					l[nspan - 1].iov_len += end - span_end;
					off += end - span_end;
				}
				continue;
			}
		}
		/* a new span starts at k (or the end): read the full set first */
		if (nspan == MAX_SPANS || (k == s->n && nspan)) {
			ssize_t got = s->o->readv(s->o->ctx, l, nspan, r, nspan);
			size_t done = 0;

			first[nspan] = k;
			for (size_t sp = 0; sp < nspan; sp++) {
				bool whole = got >= 0 && done + l[sp].iov_len <= (size_t)got;

				for (size_t j = first[sp]; whole && j < first[sp + 1]; j++)
					s->b[j].cache_off = (char *)l[sp].iov_base - s->cache +
						((s->b[j].addr & ~(uint64_t)(WORD - 1)) -
						 (uintptr_t)r[sp].iov_base);
				done += l[sp].iov_len;
			}
			nspan = 0;
		}
		if (k == s->n)
			break;
		first[nspan] = k;
		r[nspan] = (struct iovec){ (void *)(uintptr_t)start, end - start };
		l[nspan] = (struct iovec){ s->cache + off, end - start };
		nspan++;
		off += end - start;
	}
}

int leak_scan(struct leak_block *blocks, size_t n, const struct leak_region *roots,
	      size_t nroots, const uint64_t *regs, size_t nregs, const struct leak_scan_opts *o,
	      struct leak_stats *st)
{
	struct scan s = { .b = blocks, .n = n, .o = o, .st = st, .lo = UINT64_MAX };

	memset(st, 0, sizeof(*st));
	if (!n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (blocks[i - 1].addr > blocks[i].addr) {
			qsort(blocks, n, sizeof(*blocks), cmp_addr);
			break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct leak_block *b = &blocks[i];
		uint64_t end = b->addr + (b->size ? b->size : 1);

		b->state = ST_UNREACHED;
		b->pending = 0;
		b->heuristic = LEAK_HEUR_NONE;
		b->link_state = 0;
		if (b->addr < s.lo)
			s.lo = b->addr;
		if (end > s.hi)
			s.hi = end;
	}
	s.stack = malloc(n * sizeof(*s.stack));
	s.buf = malloc(CHUNK);
	if (!s.stack || !s.buf) {
		free(s.stack);
		free(s.buf);
		return -ENOMEM;
	}
	fill_cache(&s, o->cache_bytes);

	/* what the roots reach */
	for (size_t k = 0; k < nroots; k++)
		scan_range(&s, roots[k].start, roots[k].end, NO_CLIQUE, true, roots[k].flags);
	for (size_t k = 0; k < nregs; k++)
		reach(&s, regs[k], true, 0);
	process(&s, NO_CLIQUE);

	/* the rest: cliques of lost blocks, leaders in address order */
	for (size_t i = 0; i < n; i++) {
		if (blocks[i].state != ST_UNREACHED)
			continue;
		push(&s, i);
		process(&s, i);
	}

	for (size_t i = 0; i < n; i++) {
		struct leak_block *b = &blocks[i];

		switch (b->state) {
		case ST_UNREACHED:
			b->cls = LEAK_DEFINITE;
			break;
		case ST_INDIRECT:
			b->cls = LEAK_INDIRECT;
			break;
		case ST_POSSIBLE:
			b->cls = LEAK_POSSIBLE;
			break;
		default:
			b->cls = LEAK_REACHABLE;
			if (b->heuristic) {
				st->heur_count[b->heuristic]++;
				st->heur_bytes[b->heuristic] += b->size;
			}
			break;
		}
		if (b->cls != LEAK_REACHABLE)
			b->heuristic = LEAK_HEUR_NONE;
		st->count[b->cls]++;
		st->bytes[b->cls] += b->size;
	}
	free(s.stack);
	free(s.buf);
	free(s.cache);
	return 0;
}

_Static_assert((int)LEAK__COUNT == (int)PROF_LEAK__COUNT, "leak classes match the profile's");
_Static_assert((int)LEAK_HEUR__COUNT == PROF_LEAK_HEURISTICS, "heuristics match the profile's");
