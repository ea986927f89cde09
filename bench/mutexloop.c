/* mutexloop: a mutex-heavy workload for bench/lock.sh. T threads take one pthread mutex N times
 * each, with a little work inside and outside it, and every eighth time the holder yields its CPU
 * while it holds the mutex: the others wait for it in futex waits (and on the kernel's locks
 * behind them, the futex hash bucket's, the run queues'). Prints
 * the mean ns per acquisition (CLOCK_MONOTONIC around the whole, divided by T * N). */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static long n;

static void *worker(void *arg)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&mu);
		for (int j = 0; j < 200; j++)
			sink += j;
		/* now and then the holder gives its CPU away: the others block on the mutex */
		if (!(i & 7))
			sched_yield();
		pthread_mutex_unlock(&mu);
		for (int j = 0; j < 200; j++)
			sink -= j;
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t t[64];
	int nt;

	if (argc != 3 || (nt = atoi(argv[1])) < 1 || nt > 64 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: mutexloop THREADS N\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < nt; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (nt * n));
	return 0;
}
