/* Closing file descriptors on worker threads (see closer.h): a pipe carries the numbers, each
 * worker reads one and closes it; end of file on the pipe ends the workers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/closer.h"

#define MAX_THREADS 16

struct fd_closer {
	int rfd, wfd;
	int n;
	pthread_t th[MAX_THREADS];
};

static void *worker(void *arg)
{
	struct fd_closer *cl = arg;
	int fd;

	/* a pipe write of 4 bytes is atomic, so each read gets one whole number */
	for (;;) {
		ssize_t r = read(cl->rfd, &fd, sizeof(fd));

		if (r == sizeof(fd))
			close(fd);
		else if (r < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	return NULL;
}

struct fd_closer *fd_closer__new(int nthreads)
{
	struct fd_closer *cl = calloc(1, sizeof(*cl));
	int p[2];

	if (!cl)
		return NULL;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	if (pipe2(p, O_CLOEXEC)) {
		free(cl);
		return NULL;
	}
	cl->rfd = p[0];
	cl->wfd = p[1];
	for (cl->n = 0; cl->n < nthreads; cl->n++)
		if (pthread_create(&cl->th[cl->n], NULL, worker, cl))
			break;
	if (!cl->n) {
		close(cl->rfd);
		close(cl->wfd);
		free(cl);
		errno = EAGAIN;
		return NULL;
	}
	return cl;
}

void fd_closer__close(struct fd_closer *cl, int fd)
{
	if (fd < 0)
		return;
	if (!cl || write(cl->wfd, &fd, sizeof(fd)) != sizeof(fd))
		close(fd);
}

void fd_closer__free(struct fd_closer *cl)
{
	if (!cl)
		return;
	close(cl->wfd);
	for (int i = 0; i < cl->n; i++)
		pthread_join(cl->th[i], NULL);
	close(cl->rfd);
	free(cl);
}
