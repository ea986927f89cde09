/* mem --trace: every counted call as a JSON line, read from the kernel's ring buffer. The
 * collector owns one; docs/JSON.md describes the file. */
#ifndef EBPROF_MEM_TRACE_H
#define EBPROF_MEM_TRACE_H

#include <stdint.h>
#include <sys/types.h>
#include "symbolize/symbolize.h"

struct mem_trace;

/* Write to path (truncated) the records of the ring buffer map rb_fd; stacks come from the
 * stacks map stacks_fd; times count from start_ns (CLOCK_MONOTONIC). NULL and errno on
 * failure. */
struct mem_trace *mem_trace__new(const char *path, int rb_fd, int stacks_fd, uint64_t start_ns);
/* Times count from start_ns (CLOCK_MONOTONIC) from now on. */
void mem_trace__set_start(struct mem_trace *t, uint64_t start_ns);
/* Write every record waiting in the ring buffer. Returns the number written or a negative
 * errno. Call it every tick: the kernel asks for no wakeup. */
int mem_trace__poll(struct mem_trace *t);
/* Write the stacks pid's records named and not written yet, symbolized through sp (NULL:
 * addresses only). Call after mem_trace__poll, while pid's mappings can be read. */
void mem_trace__stacks(struct mem_trace *t, pid_t pid, struct sym_proc *sp);
/* The last records, the stacks still unwritten (addresses only) and the end line with the
 * calls written and those lost (dropped: the kernel's count of full buffers). Returns 0 or a
 * negative errno (a write error). */
int mem_trace__finish(struct mem_trace *t, uint64_t dropped);
/* Records written so far. */
uint64_t mem_trace__calls(const struct mem_trace *t);
void mem_trace__free(struct mem_trace *t);

#endif
