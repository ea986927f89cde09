/* loop: the workload of the overhead benchmark (bench/run.sh). N malloc(64)/free pairs in a
 * tight loop; prints the time per pair, measured with CLOCK_MONOTONIC around the loop only (not
 * start-up, not exit), and the CPU time the process used meanwhile (CLOCK_PROCESS_CPUTIME_ID:
 * user and system time, which includes the uprobe traps and BPF programs a tracer adds, but not
 * time spent waiting for a CPU another process holds, so it is steadier on a shared machine).
 *
 * Usage: loop [N [RESULT_FILE]]   N defaults to 2,000,000. The result line
 *   "loop: N pairs, X ns/pair wall, Y ns/pair cpu" goes to RESULT_FILE when given (so a tracer's
 *   own output on stdout can't get mixed in), else to stdout.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct timespec a, b, ca, cb;
	double ns, cpu;
	FILE *f = stdout;

	if (n <= 0) {
		fprintf(stderr, "usage: loop [N [RESULT_FILE]]\n");
		return 2;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);

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
	fprintf(f, "loop: %ld pairs, %.2f ns/pair wall, %.2f ns/pair cpu\n", n, ns, cpu);
	return fclose(f) ? 1 : 0;
}
