/* Closing file descriptors on worker threads (see closer.h): a pipe carries the numbers, each
 * worker reads one and closes it; end of file on the pipe ends the workers. Workers are made
 * as the queue needs them: a number is queued while none is idle, up to the limit. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/closer.h"

#define MAX_THREADS 64

struct fd_closer {
	int rfd, wfd;
	int n, max;		/* workers made, and the most there may be */
	int idle;		/* workers waiting for a number (atomic) */
	pthread_mutex_t lock;	/* n and th, against concurrent callers */
	pthread_t th[MAX_THREADS];
};

static void *worker(void *arg)
{
	struct fd_closer *cl = arg;
	int fd;

	/* a pipe write of 4 bytes is atomic, so each read gets one whole number */
	for (;;) {
		ssize_t r;

		__atomic_add_fetch(&cl->idle, 1, __ATOMIC_SEQ_CST);
		r = read(cl->rfd, &fd, sizeof(fd));
		__atomic_sub_fetch(&cl->idle, 1, __ATOMIC_SEQ_CST);
		if (r == sizeof(fd))
			close(fd);
		else if (r < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	return NULL;
}

/* One more worker, if the limit allows: 0, or -1 (none made) */
static int add_worker(struct fd_closer *cl)
{
	int err = -1;

	pthread_mutex_lock(&cl->lock);
	if (cl->n < cl->max && !pthread_create(&cl->th[cl->n], NULL, worker, cl)) {
		cl->n++;
		err = 0;
	}
	pthread_mutex_unlock(&cl->lock);
	return err;
}

struct fd_closer *fd_closer__new(int nthreads)
{
	struct fd_closer *cl = calloc(1, sizeof(*cl));
	int p[2];

	if (!cl)
		return NULL;
	cl->max = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
	pthread_mutex_init(&cl->lock, NULL);
	if (pipe2(p, O_CLOEXEC)) {
		pthread_mutex_destroy(&cl->lock);
		free(cl);
		return NULL;
	}
	cl->rfd = p[0];
	cl->wfd = p[1];
	if (add_worker(cl)) {
		close(cl->rfd);
		close(cl->wfd);
		pthread_mutex_destroy(&cl->lock);
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
	if (!cl || write(cl->wfd, &fd, sizeof(fd)) != sizeof(fd)) {
		close(fd);
		return;
	}
	/* every worker is in a close (waiting for its grace period): one more, so that this
	 * one's wait overlaps theirs instead of following them */
	if (!__atomic_load_n(&cl->idle, __ATOMIC_SEQ_CST))
		add_worker(cl);
}

void fd_closer__free(struct fd_closer *cl)
{
	if (!cl)
		return;
	close(cl->wfd);
	pthread_mutex_lock(&cl->lock);
	for (int i = 0; i < cl->n; i++)
		pthread_join(cl->th[i], NULL);
	pthread_mutex_unlock(&cl->lock);
	close(cl->rfd);
	pthread_mutex_destroy(&cl->lock);
	free(cl);
}
