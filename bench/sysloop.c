/* sysloop: the cost of a system call, for bench/mmap-cost.sh. Makes N calls of one kind and
 * prints the mean ns per call (CLOCK_MONOTONIC around the loop).
 *   sysloop getppid N     getppid(2) (not cached by glibc): any syscall, the tracepoints' floor
 *   sysloop mmap N        an anonymous 1-page mmap + munmap pair
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n;
	double ns;

	if (argc != 3 || (n = atol(argv[2])) <= 0 ||
	    (strcmp(argv[1], "getppid") && strcmp(argv[1], "mmap"))) {
		fprintf(stderr, "usage: sysloop getppid|mmap N\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (!strcmp(argv[1], "getppid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else {
		for (long i = 0; i < n; i++) {
			void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				return 1;
			munmap(p, 4096);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
	printf("%.1f\n", ns);
	return 0;
}
