/* timeit.so: how long a real program runs, measured inside it (bench/run.sh). Preloaded into a
 * benchmark's real-program workload (sqlite3, jq): a constructor reads CLOCK_MONOTONIC before
 * main, a destructor reads it again after exit() has run the program's own atexit work, and
 * writes "WALL_NS CPU_NS" to $BENCH_TIME_OUT: the nanoseconds between them and the process's CPU
 * time meanwhile (CLOCK_PROCESS_CPUTIME_ID, as bench/loop.c). So a tracer's start-up, detach and
 * report never enter the figure, only what the program itself took. No allocation here.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "pin.h"

static struct timespec t0, c0;

__attribute__((constructor)) static void timeit_start(void)
{
	bench_pin();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
}

__attribute__((destructor)) static void timeit_stop(void)
{
	const char *out = getenv("BENCH_TIME_OUT");
	struct timespec t1, c1;
	char line[64];
	int fd, n;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	if (!out)
		return;
	n = snprintf(line, sizeof(line), "%lld %lld\n",
		     (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec),
		     (long long)(c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec));
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, n) != n)
		unlink(out);
	close(fd);
}
