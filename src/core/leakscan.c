/* Reachability of outstanding blocks (see leakscan.h for the definitions).
 *
 * Memory is read in large pieces through the caller's readv (process_vm_readv on a stopped
 * process): roots in 4 MiB chunks, blocks popped from the mark stack in batches read as spans
 * of neighbouring blocks, one call per batch. Batching does not change the result: the
 * classes are a fixpoint (a block whose state improves is pushed again and rescanned), and
 * each clique's traversal covers the same blocks in any order; only the clique leaders' order
 * matters, and it is the address order, as in memcheck. The heuristics read what they test
 * from the same cache of blocks, once per block, and candidate vtables a page at a time.
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

struct vpage {
	uint64_t page;
	char *data;		/* NULL: unreadable */
};

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
	struct vpage *vp;	/* file pages read by the vtable test */
	size_t nvp, capvp;
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

/* Every read of the process goes through here: a call costs about a microsecond however
 * little it reads, so calls, not bytes, are what a scan must keep few. */
static ssize_t rd(struct scan *s, const struct iovec *l, unsigned long nl, const struct iovec *r,
		  unsigned long nr)
{
	s->st->read_calls++;
	return s->o->readv(s->o->ctx, l, nl, r, nr);
}

static bool read_mem(struct scan *s, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return rd(s, &l, 1, &r, 1) == (ssize_t)len;
}

static bool read_word(struct scan *s, uint64_t addr, uint64_t *w)
{
	return read_mem(s, addr, w, sizeof(*w));
}

/* A word of block b: from the cache when the block was read up front (the pointer scan reads
 * every block anyway), else from the process. */
static bool block_word(struct scan *s, const struct leak_block *b, uint64_t a, uint64_t *w)
{
	uint64_t start = b->addr & ~(uint64_t)(WORD - 1);
	uint64_t end = (b->addr + b->size) & ~(uint64_t)(WORD - 1);

	if (b->cache_off != NO_CACHE && a >= start && a + WORD <= end) {
		memcpy(w, s->cache + b->cache_off + (a - start), WORD);
		return true;
	}
	return read_word(s, a, w);
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

/* The pages of file mappings the vtable test has read, by address (open addressing, 0 is an
 * empty slot: no candidate lies in page 0). Candidates cluster in a few pages of .data.rel.ro,
 * and a program can hold millions of pointers to them; the files themselves cannot serve, as
 * the dynamic linker relocates the vtables in memory. */
static struct vpage *vpage_get(struct scan *s, uint64_t page)
{
	size_t mask, i;
	char *data;

	if (2 * (s->nvp + 1) > s->capvp) {
		size_t cap = s->capvp ? 2 * s->capvp : 64;
		struct vpage *nv = calloc(cap, sizeof(*nv));

		if (!nv)
			return NULL;
		for (size_t k = 0; k < s->capvp; k++) {
			if (!s->vp[k].page)
				continue;
			i = (s->vp[k].page / PAGE) & (cap - 1);
			while (nv[i].page)
				i = (i + 1) & (cap - 1);
			nv[i] = s->vp[k];
		}
		free(s->vp);
		s->vp = nv;
		s->capvp = cap;
	}
	mask = s->capvp - 1;
	for (i = (page / PAGE) & mask; s->vp[i].page; i = (i + 1) & mask)
		if (s->vp[i].page == page)
			return &s->vp[i];
	data = malloc(PAGE);
	if (!data)
		return NULL;
	if (!read_mem(s, page, data, PAGE)) {
		free(data);
		data = NULL;	/* unreadable: every test in it fails, as a read would */
	}
	s->vp[i] = (struct vpage){ page, data };
	s->nvp++;
	return &s->vp[i];
}

/* [a, a + len) of the process, through the page cache; false if any of it is unreadable. */
static bool vtable_read(struct scan *s, uint64_t a, void *buf, size_t len)
{
	char *out = buf;

	while (len) {
		uint64_t page = a & ~(uint64_t)(PAGE - 1);
		size_t n = page + PAGE - a < len ? page + PAGE - a : len;
		struct vpage *v = vpage_get(s, page);

		if (!v)		/* out of memory: a plain read answers the same */
			return read_mem(s, a, out, len);
		if (!v->data)
			return false;
		memcpy(out, v->data + (a - page), n);
		out += n;
		a += n;
		len -= n;
	}
	return true;
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
	if (!vtable_read(s, a, w, nw * WORD))
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

/* What the heuristics need of a block's first words does not depend on the pointer: worked
 * out once per block, not once per interior pointer to it (a program can hold millions to one
 * block, e.g. perl's arenas of scalar bodies). */
#define HEAD_DONE	0x01
#define HEAD_STDSTRING	0x02	/* stdstring accepts a pointer at +24 */
#define HEAD_LENGTH64	0x04	/* length64 accepts a pointer at +8 */
#define HEAD_NEWARRAY	0x08	/* newarray accepts a pointer at +8 */
#define HEAD_VTABLE	0x10	/* its first word is a vtable's address (multipleinheritance) */

static unsigned head_checks(struct scan *s, struct leak_block *b)
{
	unsigned h = s->o->heuristics;
	uint64_t w0, w1;
	bool w0_ok;

	if (b->heads & HEAD_DONE)
		return b->heads;
	b->heads = HEAD_DONE;
	w0_ok = block_word(s, b, b->addr, &w0);
	if (!w0_ok)
		return b->heads;
	if ((h & 1u << LEAK_HEUR_STDSTRING) && b->size > 3 * WORD &&
	    block_word(s, b, b->addr + WORD, &w1) && 3 * WORD + w1 + 1 == b->size && w0 <= w1)
		b->heads |= HEAD_STDSTRING;
	if ((h & 1u << LEAK_HEUR_LENGTH64) && w0 > 0 && b->size - WORD == w0)
		b->heads |= HEAD_LENGTH64;
	if ((h & 1u << LEAK_HEUR_NEWARRAY) && w0 > 0 && (b->size - WORD) % w0 == 0)
		b->heads |= HEAD_NEWARRAY;
	if ((h & 1u << LEAK_HEUR_MULTIPLE_INHERITANCE) && w0 % WORD == 0 && w0 >= PAGE &&
	    is_vtable(s, w0))
		b->heads |= HEAD_VTABLE;
	return b->heads;
}

/* Which of memcheck's heuristics accepts the interior pointer p into b (first match, in
 * memcheck's order). Its tests are pure functions of the stopped process's memory, so their
 * order of evaluation and what is remembered of them do not change the answer. */
static uint8_t heuristic(struct scan *s, uint64_t p, struct leak_block *b)
{
	unsigned heads;
	uint64_t inner;

	/* stdstring wants +24, length64 and newarray +8, multipleinheritance an aligned word */
	if (p != b->addr + WORD && p != b->addr + 3 * WORD && p % WORD)
		return LEAK_HEUR_NONE;
	heads = head_checks(s, b);
	if ((heads & HEAD_STDSTRING) && p == b->addr + 3 * WORD)
		return LEAK_HEUR_STDSTRING;
	if ((heads & HEAD_LENGTH64) && p == b->addr + WORD)
		return LEAK_HEUR_LENGTH64;
	if ((heads & HEAD_NEWARRAY) && p == b->addr + WORD)
		return LEAK_HEUR_NEWARRAY;
	if ((heads & HEAD_VTABLE) && p % WORD == 0 && block_word(s, b, p, &inner) &&
	    inner % WORD == 0 && inner >= PAGE && is_vtable(s, inner))
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
		ssize_t got = rd(s, &l, 1, &r, 1);
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
		got = rd(s, l, nspan, r, nspan);
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
			ssize_t got = rd(s, l, nspan, r, nspan);
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
		b->heads = 0;
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
	for (size_t k = 0; k < s.capvp; k++)
		free(s.vp[k].data);
	free(s.vp);
	return 0;
}

_Static_assert((int)LEAK__COUNT == (int)PROF_LEAK__COUNT, "leak classes match the profile's");
_Static_assert((int)LEAK_HEUR__COUNT == PROF_LEAK_HEURISTICS, "heuristics match the profile's");
