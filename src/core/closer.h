/* Closing file descriptors off the caller's thread. Closing a uprobe link waits for RCU grace
 * periods (~115 ms here); a run loop that follows short-lived processes cannot pay that per
 * process, so their links are handed to threads that close them concurrently: the kernel
 * ends the grace periods of concurrent closes together, so the more closes wait at once, the
 * sooner the queue empties (200 processes of a shell loop: 400 links, 2.2 s of closing
 * after the command ended with 8 threads, 0.09 s with up to 48). Threads are made as the queue
 * needs them (a number queued while none is idle), up to the limit. */
#ifndef EBPROF_CLOSER_H
#define EBPROF_CLOSER_H

struct fd_closer;
/* The modes' limit: threads are made only as closes pile up, so it costs nothing until then */
#define FD_CLOSER_THREADS 48

/* Up to nthreads workers (at most 64), one made now. NULL and errno on failure; the caller
 * then closes synchronously. */
struct fd_closer *fd_closer__new(int nthreads);
/* Queue fd for closing (fd < 0: nothing). Without a closer, or if queuing fails, fd is closed
 * here and now. */
void fd_closer__close(struct fd_closer *cl, int fd);
/* Wait until every queued fd is closed, then free the closer. Accepts NULL. */
void fd_closer__free(struct fd_closer *cl);

#endif
