/* The io mode collector: block I/O requests from their start to their completion (bpf/io.bpf.c
 * measures and aggregates them in the kernel), turned into samples per (process, operation,
 * stacks, disk) and a summary per (disk, operation) with histograms. The only user of the io
 * skeleton; the session drives it through io_mode_ops (core/mode.h). */
#ifndef EBPROF_IO_COLLECT_H
#define EBPROF_IO_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/mode.h"
#include "abi/io.h"

struct io_opts {
	uint32_t max_stacks;	/* --max-stacks: distinct stacks, (process, stacks) counters */
	uint32_t max_procs;	/* tests: processes with totals (0: the default) */
	bool no_kthreads;	/* --no-kthreads: with targets, no kernel thread's requests */
	uint32_t ndevs;		/* --device: only these disks */
	uint32_t devs[IO_MAX_DEVS];	/* IO_DEV(major, minor) */
	/* tests: as on kernels before 6.5, without block_io_start and block_io_done (requests
	 * start at their insertion or issue) */
	bool legacy_tracepoints;
	/* tests: the completion tracepoints' programs are not loaded, as when the kernel
	 * delivers no completion to BPF */
	bool no_completions;
};

/* The mode: open, attach, attach_all, tick, progress, finalize, retire, stop, finish, detach,
 * close. open takes a struct io_opts. */
extern const struct mode_ops io_mode_ops;

/*
 * A disk by name ("vda", "/dev/vda", a symbolic link to it) into *dev (IO_DEV). Returns 0;
 * -ENOENT: no such block device; -EXDEV: a partition, whose disk's name goes into disk
 * (ebprof io measures whole disks: the kernel queues requests per disk); -EOPNOTSUPP: a disk
 * without a request queue (bio-based: zram, device-mapper, md), its name in disk.
 */
int io_device(const char *name, uint32_t *dev, char *disk, size_t len);
/* The machine's disks, "vda, loop0, ..." (from /sys/block), for messages. */
void io_disks(char *buf, size_t len);
/* "read", "write", "flush", "discard", "write_zeroes", "secure_erase", "other". */
const char *io_op_name(uint32_t op);

#endif
