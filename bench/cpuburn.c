/* cpuburn: the CPU-bound workload of bench/cpu.sh (`make bench-cpu`). Every unit of work goes
 * down a chain of 12 distinct functions (burn_1 .. burn_12, then one of three leaves chosen by
 * the unit's number, so the profile has several stacks), each level doing a little arithmetic of
 * its own, the leaf most of it. Built with frame pointers (-O1 -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer), so a frame-pointer unwinder sees 15 frames of its own (main or
 * thread_main, run_units, burn_1 .. burn_12, the leaf) under glibc's.
 *
 * Usage: cpuburn [-t THREADS] [UNITS]
 *   THREADS threads (default 1) each run UNITS units (default 60000, about 4 s of CPU here), so
 *   the program's CPU time is THREADS times one thread's. The work is fixed, not timed: the CPU
 *   time under a profiler is comparable with the CPU time alone. Prints a checksum.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define INNER 64000 /* leaf iterations per unit */

static long units = 60000;

/* three leaves, so the profile has distinct hot stacks; the compiler cannot fold their loops */
static NOINLINE uint64_t leaf_lcg(uint64_t x)
{
	for (int i = 0; i < INNER; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x ^= x >> 29;
	}
	return x;
}

static NOINLINE uint64_t leaf_div(uint64_t x)
{
	uint64_t d = (x | 3) & 0xffff;

	for (int i = 0; i < INNER / 8; i++) { /* a division is ~8x an lcg step */
		x = x / (d + (uint64_t)i) + (x << 7) + (uint64_t)i;
		d = (d * 33 + 1) & 0xffff;
	}
	return x;
}

static NOINLINE uint64_t leaf_fp(uint64_t x)
{
	double a = (double)(x & 0xffff) + 1.0, s = 0;

	for (int i = 0; i < INNER / 2; i++) {
		a = a * 1.0000001 + 0.5;
		s += a / (a + 1.0);
	}
	return x ^ (uint64_t)s;
}

static NOINLINE uint64_t burn_12(uint64_t x, long u)
{
	/* not a tail call: burn_12 keeps its own frame */
	switch (u % 3) {
	case 0:
		return leaf_lcg(x) ^ (uint64_t)u;
	case 1:
		return leaf_div(x) ^ (uint64_t)u;
	default:
		return leaf_fp(x) ^ (uint64_t)u;
	}
}

/* burn_N does a few steps of its own, then calls burn_N+1: a 12-deep chain of distinct frames */
#define LEVEL(n, next)                                                  \
	static NOINLINE uint64_t burn_##n(uint64_t x, long u)           \
	{                                                               \
		for (int i = 0; i < 64 * (n); i++)                      \
			x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ULL + n; \
		return burn_##next(x, u) + (uint64_t)n;                 \
	}
LEVEL(11, 12)
LEVEL(10, 11)
LEVEL(9, 10)
LEVEL(8, 9)
LEVEL(7, 8)
LEVEL(6, 7)
LEVEL(5, 6)
LEVEL(4, 5)
LEVEL(3, 4)
LEVEL(2, 3)
LEVEL(1, 2)

static NOINLINE uint64_t run_units(uint64_t seed)
{
	uint64_t x = seed;

	for (long u = 0; u < units; u++)
		x = burn_1(x, u);
	return x;
}

static void *thread_main(void *arg)
{
	uint64_t *x = arg;

	*x = run_units(*x);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, i = 1;
	uint64_t sum = 0;

	if (i + 1 < argc && !strcmp(argv[i], "-t")) {
		threads = atoi(argv[i + 1]);
		i += 2;
	}
	if (i < argc)
		units = atol(argv[i++]);
	if (threads < 1 || threads > 64 || units < 1 || i != argc) {
		fprintf(stderr, "usage: cpuburn [-t THREADS] [UNITS]\n");
		return 2;
	}
	if (threads == 1) {
		sum = run_units(1);
	} else {
		pthread_t tid[64];
		uint64_t seed[64];

		for (int t = 0; t < threads; t++) {
			seed[t] = (uint64_t)t + 1;
			if (pthread_create(&tid[t], NULL, thread_main, &seed[t])) {
				perror("pthread_create");
				return 1;
			}
		}
		for (int t = 0; t < threads; t++) {
			pthread_join(tid[t], NULL);
			sum ^= seed[t];
		}
	}
	printf("cpuburn: %d thread(s) x %ld units, checksum %016llx\n", threads, units,
	       (unsigned long long)sum);
	return 0;
}
