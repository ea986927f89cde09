/* loop: the workload of the overhead benchmark (bench/run.sh). N malloc(64)/free pairs in a
 * tight loop (or, with SIZES "LO-HI", pairs whose sizes are spread uniformly over LO..HI bytes,
 * drawn by xorshift from a fixed seed: the same sequence every run, as in real programs whose
 * requests are of many sizes); prints the time per pair, measured with CLOCK_MONOTONIC around the loop only (not
 * start-up, not exit), and the CPU time the process used meanwhile (CLOCK_PROCESS_CPUTIME_ID:
 * user and system time, which includes the uprobe traps and BPF programs a tracer adds, but not
 * time spent waiting for a CPU another process holds, so it is steadier on a shared machine).
 *
 * Usage: loop [N [RESULT_FILE [SIZES]]]   N defaults to 2,000,000. The result line
 *   "loop: N pairs, X ns/pair wall, Y ns/pair cpu" goes to RESULT_FILE when given (so a tracer's
 *   own output on stdout can't get mixed in), else to stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "pin.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct timespec a, b, ca, cb;
	double ns, cpu;
	FILE *f = stdout;
	unsigned long lo = 64, hi = 64;
	int used = 0;

	if (argc > 3 && (sscanf(argv[3], "%lu-%lu%n", &lo, &hi, &used) != 2 || argv[3][used] ||
			 lo > hi))
		n = 0;
	if (n <= 0) {
		fprintf(stderr, "usage: loop [N [RESULT_FILE [LO-HI]]]\n");
		return 2;
	}
	bench_pin();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		/* one size: no draw, the loop the figures before the mixed one measured */
		void *p = malloc(lo == hi ? lo : lo + next() % (hi - lo + 1));

		/* p escapes: the compiler may not drop the malloc/free pair */
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
	cpu = ((double)(cb.tv_sec - ca.tv_sec) * 1e9 + (double)(cb.tv_nsec - ca.tv_nsec)) / (double)n;

	if (argc > 2 && !(f = fopen(argv[2], "w"))) {
		perror(argv[2]);
		return 1;
	}
	fprintf(f, "loop: %ld pairs of %lu-%lu B, %.2f ns/pair wall, %.2f ns/pair cpu\n", n, lo, hi, ns, cpu);
	return fclose(f) ? 1 : 0;
}
