/* Small helpers any module may use: whole-file reads, the monotonic clock. */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "util/util.h"

uint64_t util_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

char *util_read_file(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 64 * 1024;
	char *buf = malloc(cap + 1), *nbuf;
	int fd, saved;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto err;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			cap *= 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				errno = ENOMEM;
				goto err_close;
			}
			buf = nbuf;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto err_close;
		if (!r)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
err_close:
	saved = errno;
	close(fd);
	errno = saved;
err:
	saved = errno;
	free(buf);
	errno = saved;
	return NULL;
}

void util_rcu_grace(unsigned fallback_ms)
{
	struct timespec ts = { fallback_ms / 1000, (long)(fallback_ms % 1000) * 1000000L };

	if (sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
	    syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
