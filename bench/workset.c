/* workset: the benchmark's working-set workload (bench/run.sh). K live blocks of mixed sizes;
 * each step frees a block picked at random and allocates a new one of a random size in its
 * place, so every step is one malloc+free pair on a heap of K live blocks (a server's or a
 * compiler's heap, not the tight loop's single recycled chunk). Sizes: 70% 16-128 B, 25%
 * 128 B-4 KiB, 5% 4-64 KiB (all below glibc's mmap threshold). The sequence is deterministic
 * (xorshift, fixed seed). Prints the time per step around the steps only (not the initial fill
 * or the final frees): wall (CLOCK_MONOTONIC) and the process's CPU time (as bench/loop.c).
 *
 * Usage: workset [STEPS [LIVE [RESULT_FILE]]]   defaults 1,000,000 and 100,000. The line
 *   "workset: STEPS steps, LIVE live, X ns/pair wall, Y ns/pair cpu" goes to RESULT_FILE when
 *   given, else stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "pin.h"

/* external and volatile: the compiler may not elide the allocations */
void *volatile *volatile slots;

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t pick_size(void)
{
	uint64_t r = next();
	unsigned p = r % 100;

	r >>= 8;
	if (p < 70)
		return 16 + r % 113;
	if (p < 95)
		return 128 + r % (4096 - 128 + 1);
	return 4096 + r % (65536 - 4096 + 1);
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? atol(argv[1]) : 1000000;
	long live = argc > 2 ? atol(argv[2]) : 100000;
	struct timespec a, b, ca, cb;
	FILE *f = stdout;
	double ns, cpu;

	if (steps <= 0 || live <= 0) {
		fprintf(stderr, "usage: workset [STEPS [LIVE [RESULT_FILE]]]\n");
		return 2;
	}
	bench_pin();
	slots = calloc(live, sizeof(void *));
	if (!slots) {
		perror("workset: calloc");
		return 1;
	}
	for (long i = 0; i < live; i++)
		slots[i] = malloc(pick_size());

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < steps; i++) {
		long s = next() % live;

		free(slots[s]);
		slots[s] = malloc(pick_size());
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)steps;
	cpu = ((double)(cb.tv_sec - ca.tv_sec) * 1e9 + (double)(cb.tv_nsec - ca.tv_nsec)) /
	      (double)steps;

	for (long i = 0; i < live; i++)
		free(slots[i]);
	free((void *)slots);

	if (argc > 3 && !(f = fopen(argv[3], "w"))) {
		perror(argv[3]);
		return 1;
	}
	fprintf(f, "workset: %ld steps, %ld live, %.2f ns/pair wall, %.2f ns/pair cpu\n", steps,
		live, ns, cpu);
	return fclose(f) ? 1 : 0;
}
