/* Closing file descriptors off the caller's thread. Closing a uprobe link waits for an RCU
 * grace period (~115 ms here); a run loop that follows short-lived processes cannot pay that
 * per process, so their links are handed to a few threads that close them concurrently (the
 * grace periods of concurrent closes overlap). */
#ifndef EBPROF_CLOSER_H
#define EBPROF_CLOSER_H

struct fd_closer;

/* nthreads workers. NULL and errno on failure; the caller then closes synchronously. */
struct fd_closer *fd_closer__new(int nthreads);
/* Queue fd for closing (fd < 0: nothing). Without a closer, or if queuing fails, fd is closed
 * here and now. */
void fd_closer__close(struct fd_closer *cl, int fd);
/* Wait until every queued fd is closed, then free the closer. Accepts NULL. */
void fd_closer__free(struct fd_closer *cl);

#endif
