/* stamp: prints CLOCK_REALTIME in nanoseconds as the first thing main() does, so bench/run.sh
 * can measure the time from launching `ebprof mem -- stamp` until the traced program runs.
 *
 * Usage: stamp [RESULT_FILE]   (stdout when no file is given)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	FILE *f = stdout;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (argc > 1 && !(f = fopen(argv[1], "w"))) {
		perror(argv[1]);
		return 1;
	}
	fprintf(f, "%lld%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	return fclose(f) ? 1 : 0;
}
