/* The reachability scan on a simulated address space: one buffer is the process's memory,
 * blocks and roots are placed in it by hand, and each case checks one of memcheck's rules
 * (start vs interior pointers, possible propagation, cliques, cycles, registers, the four
 * heuristics, glibc's chunk links, unreadable memory, big blocks read in pieces). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/leakscan.h"

#define BASE 0x10000000ull
#define SPACE (16u << 20)	/* simulated memory: [BASE, BASE + SPACE) */
#define ROOT BASE		/* a root region at the start */
#define HEAP (BASE + 0x100000)	/* blocks from here */

static unsigned char *mem;
static uint64_t cache_budget;	/* leak_scan_opts.cache_bytes of every case */
static uint64_t hole_start, hole_end;	/* unreadable range */
static unsigned long nreads;	/* calls of fake_readv */

static ssize_t fake_readv(void *ctx, const struct iovec *l, unsigned long nl,
			  const struct iovec *r, unsigned long nr)
{
	ssize_t done = 0;

	(void)ctx;
	nreads++;
	assert_int_equal(nl, nr);
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t a = (uintptr_t)r[i].iov_base, len = r[i].iov_len;

		assert_int_equal(l[i].iov_len, len);
		if (a < BASE || a + len > BASE + SPACE ||
		    (a < hole_end && a + len > hole_start)) {
			/* like process_vm_readv: the readable prefix of the first bad element */
			if (a < hole_start && a >= BASE) {
				memcpy(l[i].iov_base, mem + (a - BASE), hole_start - a);
				done += hole_start - a;
			}
			return done ? done : -1;
		}
		memcpy(l[i].iov_base, mem + (a - BASE), len);
		done += len;
	}
	return done;
}

static void put(uint64_t addr, uint64_t v)
{
	memcpy(mem + (addr - BASE), &v, sizeof(v));
}

static int setup(void **state)
{
	(void)state;
	mem = calloc(1, SPACE);
	hole_start = hole_end = 0;
	return mem ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(mem);
	return 0;
}

static struct leak_scan_opts opts(unsigned heur)
{
	return (struct leak_scan_opts){ .readv = fake_readv, .heuristics = heur,
					 .cache_bytes = cache_budget };
}

/* Scan blocks (addr, size pairs; user = index) with one root region [ROOT, ROOT + 4096), and
 * put the classes back in input order. */
static struct leak_stats run(struct leak_block *b, size_t n, const struct leak_scan_opts *o,
			     const uint64_t *regs, size_t nregs, uint8_t *cls)
{
	struct leak_region root = { ROOT, ROOT + 4096, 0 };
	struct leak_stats st;

	for (size_t i = 0; i < n; i++)
		b[i].user = i;
	assert_int_equal(leak_scan(b, n, &root, 1, regs, nregs, o, &st), 0);
	for (size_t i = 0; i < n; i++)
		cls[b[i].user] = b[i].cls;
	return st;
}

#define BLK(a, s) { .addr = (a), .size = (s) }

static void test_basic_classes(void **state)
{
	/* 0: pointed at from the root (reachable); 1: pointed at by 0 (reachable);
	 * 2: nothing points at it (definite); 3: pointed at by 2 only (indirect);
	 * 4: interior pointer from the root (possible); 5: start pointer from 4 (possible) */
	struct leak_block b[] = {
		BLK(HEAP, 32), BLK(HEAP + 0x100, 16), BLK(HEAP + 0x200, 48),
		BLK(HEAP + 0x300, 24), BLK(HEAP + 0x400, 64), BLK(HEAP + 0x500, 8),
	};
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;
	uint8_t cls[6];

	(void)state;
	put(ROOT + 8, HEAP);
	put(HEAP + 16, HEAP + 0x100);
	put(HEAP + 0x200 + 40, HEAP + 0x300);
	put(ROOT + 64, HEAP + 0x400 + 12);
	put(HEAP + 0x400, HEAP + 0x500);
	st = run(b, 6, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_REACHABLE);
	assert_int_equal(cls[2], LEAK_DEFINITE);
	assert_int_equal(cls[3], LEAK_INDIRECT);
	assert_int_equal(cls[4], LEAK_POSSIBLE);
	assert_int_equal(cls[5], LEAK_POSSIBLE);
	assert_int_equal(st.count[LEAK_REACHABLE], 2);
	assert_int_equal(st.bytes[LEAK_REACHABLE], 48);
	assert_int_equal(st.bytes[LEAK_DEFINITE], 48);
	assert_int_equal(st.bytes[LEAK_INDIRECT], 24);
	assert_int_equal(st.count[LEAK_POSSIBLE], 2);
	assert_int_equal(st.bytes[LEAK_POSSIBLE], 72);
}

static void test_possible_upgraded(void **state)
{
	/* 0 first reached by an interior pointer, later by a start pointer from reachable 1:
	 * reachable in the end, whatever the order */
	struct leak_block b[] = { BLK(HEAP + 0x1000, 64), BLK(HEAP, 16) };
	struct leak_scan_opts o = opts(0);
	uint8_t cls[2];

	(void)state;
	put(ROOT, HEAP + 0x1000 + 8);
	put(ROOT + 4000, HEAP);
	put(HEAP + 8, HEAP + 0x1000);
	run(b, 2, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_REACHABLE);
}

static void test_cycle_and_chain(void **state)
{
	/* an unreferenced cycle 0 <-> 1: the lower address leads (definite), the other is
	 * indirect; a chain 4 -> 3 -> 2 where 2 is lowest: 4 is the only definite one */
	struct leak_block b[] = {
		BLK(HEAP, 16), BLK(HEAP + 0x40, 16),
		BLK(HEAP + 0x100, 16), BLK(HEAP + 0x140, 16), BLK(HEAP + 0x180, 16),
	};
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;
	uint8_t cls[5];

	(void)state;
	put(HEAP, HEAP + 0x40);
	put(HEAP + 0x40 + 8, HEAP + 4);		/* interior pointers count for cliques too */
	put(HEAP + 0x180, HEAP + 0x140);
	put(HEAP + 0x140, HEAP + 0x100);
	st = run(b, 5, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_DEFINITE);
	assert_int_equal(cls[1], LEAK_INDIRECT);
	assert_int_equal(cls[2], LEAK_INDIRECT);
	assert_int_equal(cls[3], LEAK_INDIRECT);
	assert_int_equal(cls[4], LEAK_DEFINITE);
	assert_int_equal(st.count[LEAK_DEFINITE], 2);
	assert_int_equal(st.count[LEAK_INDIRECT], 3);
}

static void test_registers_and_zero_size(void **state)
{
	/* a register holding a block's start makes it reachable; a zero-sized block has only
	 * its start: a pointer one past it is not into it */
	struct leak_block b[] = { BLK(HEAP, 32), BLK(HEAP + 0x40, 0), BLK(HEAP + 0x80, 0) };
	uint64_t regs[] = { 0, HEAP, 12345 };
	struct leak_scan_opts o = opts(0);
	uint8_t cls[3];

	(void)state;
	put(ROOT, HEAP + 0x80);
	put(ROOT + 8, HEAP + 0x41);
	run(b, 3, &o, regs, 3, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_DEFINITE);
	assert_int_equal(cls[2], LEAK_REACHABLE);
}

static void test_heuristics(void **state)
{
	/* length64: 8-byte length then data, pointer to the data; newarray: element count then
	 * elements; stdstring: length, capacity, refcount, chars; an interior pointer no
	 * heuristic accepts stays possible; with heuristics off all are possible */
	struct leak_block b[] = {
		BLK(HEAP, 8 + 100), BLK(HEAP + 0x100, 8 + 3 * 12), BLK(HEAP + 0x200, 24 + 20 + 1),
		BLK(HEAP + 0x300, 64),
	};
	struct leak_scan_opts o = opts(LEAK_HEUR_ALL);
	struct leak_stats st;
	uint8_t cls[4];

	(void)state;
	put(HEAP, 100);
	put(ROOT, HEAP + 8);
	put(HEAP + 0x100, 3);
	put(ROOT + 8, HEAP + 0x100 + 8);
	put(HEAP + 0x200, 5);
	put(HEAP + 0x208, 20);
	put(ROOT + 16, HEAP + 0x200 + 24);
	put(HEAP + 0x300, 5);
	put(ROOT + 24, HEAP + 0x300 + 8);
	st = run(b, 4, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_REACHABLE);
	assert_int_equal(cls[2], LEAK_REACHABLE);
	assert_int_equal(cls[3], LEAK_POSSIBLE);
	assert_int_equal(st.heur_count[LEAK_HEUR_LENGTH64], 1);
	assert_int_equal(st.heur_count[LEAK_HEUR_NEWARRAY], 1);
	assert_int_equal(st.heur_count[LEAK_HEUR_STDSTRING], 1);
	assert_int_equal(st.heur_bytes[LEAK_HEUR_STDSTRING], 45);

	o = opts(0);
	st = run(b, 4, &o, NULL, 0, cls);
	assert_int_equal(st.count[LEAK_POSSIBLE], 4);
}

static void test_multiple_inheritance(void **state)
{
	/* two vtables in a readable file mapping holding pointers into an executable one: an
	 * interior pointer to a word that holds a vtable address, in a block whose first word
	 * holds another, is accepted */
	struct leak_map maps[] = {
		{ BASE + 0x800000, BASE + 0x810000, true, true, true },		/* text */
		{ BASE + 0x900000, BASE + 0x910000, true, true, false },	/* rodata */
	};
	struct leak_block b[] = { BLK(HEAP, 32), BLK(HEAP + 0x100, 32) };
	struct leak_scan_opts o = opts(LEAK_HEUR_ALL);
	uint64_t vt1 = BASE + 0x900100, vt2 = BASE + 0x900200;
	uint8_t cls[2];

	(void)state;
	o.maps = maps;
	o.nmaps = 2;
	put(vt1, 0);
	put(vt1 + 8, BASE + 0x800010);
	put(vt1 + 16, BASE + 0x800020);
	put(vt2, BASE + 0x800030);
	put(vt2 + 8, BASE + 0x800040);
	put(HEAP, vt1);
	put(HEAP + 16, vt2);
	put(ROOT, HEAP + 16);
	/* the second block's "vtable" points at data: not accepted */
	put(HEAP + 0x100, vt1);
	put(HEAP + 0x110, BASE + 0x900300);
	put(BASE + 0x900300, BASE + 0x900000);
	put(ROOT + 8, HEAP + 0x110);
	run(b, 2, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_POSSIBLE);
}

static void test_glibc_links(void **state)
{
	/* a 24-byte block in a 32-byte chunk: the next chunk's header lies at +16, inside the
	 * requested 24 bytes. glibc's own pointer to it (its data) is not the program's; the
	 * same word elsewhere is an interior pointer */
	struct leak_block b[] = { BLK(HEAP + 0x10, 24) };
	struct leak_region roots[] = {
		{ ROOT, ROOT + 64, LEAK_REGION_ALLOCATOR },
		{ ROOT + 64, ROOT + 128, 0 },
	};
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;

	(void)state;
	o.glibc_links = true;
	put(HEAP + 0x8, 32 | 1);		/* size word, previous in use */
	put(ROOT + 8, HEAP + 0x20);		/* main_arena.top, say */
	b[0].user = 0;
	assert_int_equal(leak_scan(b, 1, roots, 1, NULL, 0, &o, &st), 0);
	assert_int_equal(b[0].cls, LEAK_DEFINITE);
	assert_int_equal(st.allocator_links, 1);

	put(ROOT + 72, HEAP + 0x20);
	assert_int_equal(leak_scan(b, 1, roots, 2, NULL, 0, &o, &st), 0);
	assert_int_equal(b[0].cls, LEAK_POSSIBLE);

	/* an mmapped chunk (bit 1) has no neighbour */
	put(ROOT + 72, 0);
	put(HEAP + 0x8, 32 | 2);
	assert_int_equal(leak_scan(b, 1, roots, 1, NULL, 0, &o, &st), 0);
	assert_int_equal(b[0].cls, LEAK_POSSIBLE);
	assert_int_equal(st.allocator_links, 0);
}

static void test_unreadable_and_big(void **state)
{
	/* a root with an unreadable page in the middle: the words after it are still scanned;
	 * a block bigger than one read chunk is read in pieces, and its last word counts */
	uint64_t big = HEAP + 0x1000, bigsz = (5u << 20) + 64;
	struct leak_block b[] = { BLK(HEAP, 16), BLK(big, bigsz), BLK(HEAP + 0x100, 16) };
	struct leak_region root = { ROOT, ROOT + 3 * 4096, 0 };
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;

	(void)state;
	hole_start = ROOT + 4096;
	hole_end = ROOT + 8192;
	put(ROOT + 8192 + 8, big);
	put(big + bigsz - 8, HEAP);
	for (size_t i = 0; i < 3; i++)
		b[i].user = i;
	assert_int_equal(leak_scan(b, 3, &root, 1, NULL, 0, &o, &st), 0);
	for (size_t i = 0; i < 3; i++) {
		if (b[i].user == 2)
			assert_int_equal(b[i].cls, LEAK_DEFINITE);
		else
			assert_int_equal(b[i].cls, LEAK_REACHABLE);
	}
	assert_int_equal(st.unreadable_bytes, 4096);
}

static void test_block_in_hole(void **state)
{
	/* a block whose memory cannot be read is still classified (nothing found in it), its
	 * neighbours read normally */
	struct leak_block b[] = { BLK(HEAP, 16), BLK(HEAP + 0x2000, 16), BLK(HEAP + 0x4000, 16) };
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;
	uint8_t cls[3];

	(void)state;
	hole_start = HEAP + 0x1000;
	hole_end = HEAP + 0x3000;
	put(ROOT, HEAP);
	put(HEAP + 8, HEAP + 0x2000);
	put(ROOT + 8, HEAP + 0x4000);
	put(HEAP + 0x4000, HEAP + 0x2000 + 8);
	st = run(b, 3, &o, NULL, 0, cls);
	assert_int_equal(cls[0], LEAK_REACHABLE);
	assert_int_equal(cls[1], LEAK_REACHABLE);
	assert_int_equal(cls[2], LEAK_REACHABLE);
	assert_true(st.unreadable_bytes > 0);
}

static void test_spans(void **state)
{
	/* pairs of neighbours far from the next pair: each pair one span of the up-front read;
	 * a chain through all of them from one root pointer */
	struct leak_block b[8];
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;
	uint8_t cls[8];

	(void)state;
	for (int i = 0; i < 8; i++) {
		b[i] = (struct leak_block)BLK(HEAP + (i / 2) * 0x2000 + (i % 2) * 32, 24);
		if (i < 7)
			put(b[i].addr + 16, HEAP + ((i + 1) / 2) * 0x2000 + ((i + 1) % 2) * 32);
	}
	put(ROOT, HEAP);
	st = run(b, 8, &o, NULL, 0, cls);
	assert_int_equal(st.count[LEAK_REACHABLE], 8);
}

static void test_many_blocks(void **state)
{
	/* a linked list of 20000 blocks from one root pointer, more than one read batch, and a
	 * second unreferenced list: reachable and one definite plus indirect */
	enum { N = 20000 };
	struct leak_block *b = calloc(2 * N, sizeof(*b));
	struct leak_scan_opts o = opts(0);
	struct leak_stats st;

	(void)state;
	assert_non_null(b);
	for (size_t i = 0; i < 2 * N; i++) {
		b[i].addr = HEAP + i * 32;
		b[i].size = 24;
		if (i + 1 != N && i + 1 != 2 * N)
			put(b[i].addr + 8, HEAP + (i + 1) * 32);
	}
	put(ROOT, HEAP);
	assert_int_equal(leak_scan(b, 2 * N, &(struct leak_region){ ROOT, ROOT + 8, 0 }, 1,
				   NULL, 0, &o, &st), 0);
	assert_int_equal(st.count[LEAK_REACHABLE], N);
	assert_int_equal(st.count[LEAK_DEFINITE], 1);
	assert_int_equal(st.count[LEAK_INDIRECT], N - 1);
	free(b);
}

static void test_heuristic_reads(void **state)
{
	/* 2000 blocks, each the target of 50 interior pointers from the root, half of them
	 * objects whose first word is a vtable address: the heuristics decide the same as ever,
	 * and with every block read up front they cost no read per pointer, only one per page of
	 * candidate vtables */
	enum { N = 2000, PTRS = 50 };
	struct leak_map maps[] = {
		{ BASE + 0x800000, BASE + 0x810000, true, true, true },		/* text */
		{ BASE + 0x900000, BASE + 0x910000, true, true, false },	/* rodata */
	};
	struct leak_block *b = calloc(N, sizeof(*b));
	uint64_t vt = BASE + 0x900100, k = 0;
	struct leak_region root = { ROOT, ROOT + N * PTRS * 8, 0 };
	struct leak_scan_opts o = opts(LEAK_HEUR_ALL);
	struct leak_stats st;
	unsigned long with, without;

	(void)state;
	assert_non_null(b);
	o.maps = maps;
	o.nmaps = 2;
	put(vt, BASE + 0x800010);
	put(vt + 8, BASE + 0x800020);
	for (size_t i = 0; i < N; i++) {
		b[i].addr = HEAP + i * 0x100;
		b[i].size = 0x100;
		if (i % 2)
			put(b[i].addr, vt);
		/* pointers at +8 .. +0x88: one at +16 of each object holds the vtable too, so
		 * multipleinheritance accepts that block */
		if (i % 4 == 1)
			put(b[i].addr + 16, vt);
		for (size_t j = 0; j < PTRS; j++)
			put(ROOT + 8 * k++, b[i].addr + 8 + 8 * (j % 17));
	}
	nreads = 0;
	assert_int_equal(leak_scan(b, N, &root, 1, NULL, 0, &o, &st), 0);
	with = nreads;
	assert_int_equal(st.read_calls, with);
	assert_int_equal(st.heur_count[LEAK_HEUR_MULTIPLE_INHERITANCE], N / 4);
	assert_int_equal(st.count[LEAK_REACHABLE], N / 4);
	assert_int_equal(st.count[LEAK_POSSIBLE], N - N / 4);

	o = opts(0);
	nreads = 0;
	assert_int_equal(leak_scan(b, N, &root, 1, NULL, 0, &o, &st), 0);
	without = nreads;
	assert_int_equal(st.count[LEAK_POSSIBLE], N);
	if (cache_budget >= (64u << 20))
		assert_true(with <= without + 1);	/* the one rodata page */
	else	/* a block's first two words once; then multipleinheritance's word at each
		 * pointer into an object with a vtable */
		assert_true(with <= without + 1 + 2 * N + N / 2 * PTRS);
	free(b);
}

/* the same cases with every block read up front (a budget that fits all), and with a budget
 * too small for them */
static int with_cache(void **state)
{
	cache_budget = 64u << 20;
	return setup(state);
}

static int with_small_cache(void **state)
{
	cache_budget = 100;
	return setup(state);
}

static int without_cache(void **state)
{
	cache_budget = 0;
	return setup(state);
}

#define EACH(fn) \
	cmocka_unit_test_setup_teardown(fn, without_cache, teardown), \
	cmocka_unit_test_setup_teardown(fn, with_cache, teardown), \
	cmocka_unit_test_setup_teardown(fn, with_small_cache, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		EACH(test_basic_classes),
		EACH(test_cycle_and_chain),
		EACH(test_unreadable_and_big),
		EACH(test_many_blocks),
		EACH(test_block_in_hole),
		EACH(test_spans),
		cmocka_unit_test_setup_teardown(test_possible_upgraded, without_cache, teardown),
		cmocka_unit_test_setup_teardown(test_registers_and_zero_size, without_cache, teardown),
		EACH(test_heuristics),
		EACH(test_multiple_inheritance),
		EACH(test_heuristic_reads),
		cmocka_unit_test_setup_teardown(test_glibc_links, without_cache, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
