/* cpuru.so: the CPU time of a profiled program and of its profiler while it ran, measured inside
 * the program (bench/cpu.sh). Preloaded into the workload (by `env LD_PRELOAD=... CMD`, so the
 * profiler itself is not preloaded; env's own constructor run is discarded by its exec). A
 * constructor reads, before main:
 *   - the program's rusage (RUSAGE_SELF: user and system time of every thread, dead or alive),
 *   - CLOCK_MONOTONIC,
 *   - the CPU time of its parent, i.e. of the profiler that launched it (perf record, bpftrace -c,
 *     ebprof cpu --): the sum of se.sum_exec_runtime over /proc/PPID/task/<tid>/sched, in ns;
 * and a destructor reads them again after exit() has run the program's own atexit work and
 * writes one line to $BENCH_RU_OUT:
 *   USER_S SYS_S WALL_S PARENT_CPU_S PARENT_COMM
 * the differences: the program's user and system time, its wall time, and the parent's CPU time
 * meanwhile (the profiler's steady-state cost; the threads of the parent that exited meanwhile are
 * missed). Only what happens between the two (not ld.so's start, not the kernel's exit teardown)
 * is counted: bench/cpu.sh measures the same window with no profiler and shows the difference.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static struct rusage ru0;
static struct timespec t0;
static double parent0;

/* the CPU time of process PID, summed over its live threads, in seconds; -1 if unreadable */
static double proc_cpu(pid_t pid)
{
	char path[64], line[256];
	struct dirent *de;
	double sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/sched", (int)pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			double ms;

			/* "se.sum_exec_runtime     :      1234.567890" (milliseconds) */
			if (!strncmp(line, "se.sum_exec_runtime", 19) &&
			    sscanf(strchr(line, ':') + 1, "%lf", &ms) == 1) {
				sum += ms / 1e3;
				break;
			}
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

__attribute__((constructor)) static void cpuru_start(void)
{
	parent0 = proc_cpu(getppid());
	getrusage(RUSAGE_SELF, &ru0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
}

__attribute__((destructor)) static void cpuru_stop(void)
{
	const char *out = getenv("BENCH_RU_OUT");
	char comm[64] = "?", path[64], line[256];
	struct timespec t1;
	struct rusage ru1;
	double parent1;
	FILE *f;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru1);
	parent1 = proc_cpu(getppid());
	if (!out)
		return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n ")] = 0;
		fclose(f);
	}
	n = snprintf(line, sizeof(line), "%.6f %.6f %.6f %.6f %s\n",
		     tv(ru1.ru_utime) - tv(ru0.ru_utime), tv(ru1.ru_stime) - tv(ru0.ru_stime),
		     (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		     parent0 < 0 || parent1 < 0 ? -1.0 : parent1 - parent0, comm[0] ? comm : "?");
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, n) != n)
		unlink(out);
	close(fd);
}
