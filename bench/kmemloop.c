/* kmemloop: a system-call-heavy workload for bench/kmem.sh. N rounds of open + close of
 * /dev/null and pipe + two closes: about twelve kernel allocations and as many frees a round
 * (names_cache, filp, pipe_inode_info, its buffers, inodes, dentries). Prints the mean ns per
 * round (CLOCK_MONOTONIC around the loop). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n;

	if (argc != 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: kmemloop N\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY), p[2];

		if (fd < 0 || pipe(p))
			return 1;
		close(fd);
		close(p[0]);
		close(p[1]);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
