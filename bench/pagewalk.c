/* pagewalk: what a load into a 128 MiB table costs when the table is mapped with 4 KiB pages
 * (as the kernel maps an mmapable BPF array map: vmalloc) and when it is mapped with 2 MiB pages
 * (as kmalloc'd memory is, in the kernel's direct map), on this machine. The question it answers
 * (docs/PERFORMANCE.md): how much of the live table's miss is the page walk (the TLB) and how
 * much the cache line itself.
 *
 * Each load's address depends on the previous load's value and the loads are serialized, as the
 * live table's lookups are in a uprobe program (one a call, other work around it), so the figure
 * is a latency, not a throughput. The loads go to LINES distinct cache lines at random places of
 * the table (a program's live blocks, each in its own slot), in random order.
 *
 * Usage: pagewalk [LINES [ROUNDS]]   (200000 lines, 3 rounds of each page size, alternating)
 * Prints the median ns per load for each page size, and says so when the kernel did not give the
 * 2 MiB pages asked for (transparent huge pages set to "never").
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define TABLE (128UL << 20)
#define HUGE (2UL << 20)
#define LOADS 10000000UL

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* kB of anonymous huge pages the process maps now */
static long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ns per load over the table mapped with huge pages or not; *got_huge: whether it was */
static double run(int huge, const uint64_t *off, size_t lines, int *got_huge)
{
	char *map = mmap(NULL, TABLE + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *t;
	uint64_t v = 0, s = 0x9e3779b97f4a7c15ULL;
	double t0, t1;

	if (map == MAP_FAILED) {
		perror("pagewalk: mmap");
		exit(1);
	}
	t = (char *)(((uintptr_t)map + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (madvise(t, TABLE, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		perror("pagewalk: madvise");
		exit(1);
	}
	for (size_t i = 0; i < TABLE; i += 4096)
		t[i] = 0;	/* every page present before the clock starts; every line holds 0 */
	*got_huge = anon_huge_kb() > 0;
	t0 = now_ns();
	for (size_t i = 0; i < LOADS; i++) {
		/* v is always 0: the index depends on the last load without changing it */
		v = *(volatile uint64_t *)(t + off[(xorshift(&s) + v) % lines]);
		__asm__ volatile("lfence" ::: "memory");
	}
	t1 = now_ns();
	munmap(map, TABLE + HUGE);
	return (t1 - t0) / LOADS;
}

int main(int argc, char **argv)
{
	size_t lines = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, got[2] = { 1, 1 };
	uint64_t *off, s = 88172645463325252ULL;
	double *ns[2];

	if (!lines || lines > TABLE / 64 || rounds < 1) {
		fprintf(stderr, "usage: pagewalk [LINES (1..%lu) [ROUNDS]]\n", TABLE / 64);
		return 2;
	}
	off = malloc(lines * sizeof(*off));
	ns[0] = calloc(rounds, sizeof(double));
	ns[1] = calloc(rounds, sizeof(double));
	if (!off || !ns[0] || !ns[1])
		return 1;
	for (size_t i = 0; i < lines; i++)
		off[i] = xorshift(&s) % (TABLE / 64) * 64;
	for (int r = 0; r < rounds; r++)
		for (int huge = 0; huge < 2; huge++) {
			int g;

			ns[huge][r] = run(huge, off, lines, &g);
			got[huge] &= huge ? g : !g;
		}
	for (int huge = 0; huge < 2; huge++) {
		qsort(ns[huge], rounds, sizeof(double), cmp_double);
		printf("%s pages, %zu lines of a 128 MiB table: %.1f ns a load (median of %d)%s\n",
		       huge ? "2 MiB" : "4 KiB", lines, ns[huge][rounds / 2], rounds,
		       got[huge] ? "" : huge ? " [no huge pages were given: THP is off]" :
		       " [huge pages were given anyway]");
	}
	return 0;
}
