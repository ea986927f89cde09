/* ebprof io: the command line of the io mode (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/io/collect.h"

#define DEFAULT_MAX_STACKS (1u << 14)

enum {
	OPT_DEVICE = OPT_MODE_BASE,
	OPT_NO_KTHREADS,
	OPT_MAX_STACKS,
};

static const struct option io_longopts[] = {
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "no-kthreads", no_argument, NULL, OPT_NO_KTHREADS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ 0 },
};

static const char io_usage[] =
	"Usage: ebprof io [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof io [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof io [OPTIONS] -a [-d TIME]\n"
	"\n"
	"Block I/O latency by disk, operation, process and stack: every request from its start\n"
	"(where the kernel starts accounting it, in the task that submitted it) to its\n"
	"completion, on the block layer's tracepoints, aggregated in the kernel. The report leads\n"
	"with a table per disk and operation (read, write, flush, discard...): requests, bytes,\n"
	"average, p50/p90/p99 and largest latency, average queue and service time, errors and\n"
	"requests still in flight at the end; then log2 histograms of latency, queue time,\n"
	"service time and request size; then the stacks that started the requests, kernel\n"
	"frames under user frames, under a leaf frame naming the disk and operation\n"
	"(\"vda write (sync)\"). Sample types: requests (count), io_bytes (bytes), latency\n"
	"(nanoseconds, the default) and queue (nanoseconds).\n"
	"\n"
	"Requests of kernel threads (writeback flushers writing any process's dirty pages,\n"
	"journal threads) are theirs, named as such in the report; with -p or a command they are\n"
	"counted beside the traced processes' unless --no-kthreads.\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every process and kernel thread (ebprof itself excepted)\n"
	"\n"
	"Requests:\n"
	"      --device DISK      only requests to this disk (vda, /dev/nvme0n1; a whole disk,\n"
	"                         not a partition); repeatable, up to 16\n"
	"      --no-kthreads      with -p or a command: leave kernel threads' requests out\n"
	"      --max-stacks N     distinct stacks kept, and (process, stacks) counters (default\n"
	"                         16384; preallocated, about 1 KiB each); past it, a request\n"
	"                         loses its stack or its stack's counter, counted as a drop\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof io -- dd if=big of=/dev/null bs=1M iflag=direct   one command's I/O\n"
	"  sudo ebprof io -a -d 10                      every disk, 10 s: is it the disk?\n"
	"  sudo ebprof io -a --device nvme0n1 -d 30 -o io.json\n"
	"  sudo ebprof io -p 4242 -d 10 -o flame.svg    who in 4242 waits on the disk\n"
	"  sudo ebprof io --value requests -o io.folded -- make -j8\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int io_parse(void *mo, int c, const char *arg, struct session_opts *so,
		    const struct log_ctx *lc)
{
	struct io_opts *o = mo;
	char disk[64], disks[512];
	uint32_t dev;
	int err;

	switch (c) {
	case OPT_DEVICE:
		err = io_device(arg, &dev, disk, sizeof(disk));
		if (err == -EXDEV)
			return cli_usage_err(lc, "io", "--device %s is a partition of %s: "
					     "ebprof io measures whole disks; use --device %s",
					     arg, disk, disk);
		if (err == -EOPNOTSUPP)
			return cli_usage_err(lc, "io", "--device %s makes no block requests (a "
					     "bio-based device, such as zram, device-mapper or md: "
					     "no /sys/block/%s/mq); ebprof io measures requests, "
					     "which the disks below it, if any, receive", arg, disk);
		if (err) {
			io_disks(disks, sizeof(disks));
			return cli_usage_err(lc, "io", "--device %s: no such block device (this "
					     "machine's disks: %s)", arg, disks);
		}
		for (uint32_t i = 0; i < o->ndevs; i++)
			if (o->devs[i] == dev)
				return 0;
		if (o->ndevs == IO_MAX_DEVS)
			return cli_usage_err(lc, "io", "too many disks: at most %d --device",
					     IO_MAX_DEVS);
		o->devs[o->ndevs++] = dev;
		return 0;
	case OPT_NO_KTHREADS:
		o->no_kthreads = true;
		return 0;
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "io", arg, 1, 1u << 22, &o->max_stacks);
	}
	return cli_usage_err(lc, "io", "unknown option");
}

static int io_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct io_opts *o = mo;

	if (o->no_kthreads && so->all)
		return cli_usage_err(lc, "io", "--no-kthreads goes with -p or a command: -a "
				     "counts every request");
	return 0;
}

static const struct mode_cli io_cli = {
	.name = "io",
	.usage = io_usage,
	.longopts = io_longopts,
	.parse = io_parse,
	.check = io_check,
};

static void io_defaults(void *mo, struct session_opts *so)
{
	((struct io_opts *)mo)->max_stacks = DEFAULT_MAX_STACKS;
}

const struct mode_def io_def = {
	.cli = &io_cli,
	.ops = &io_mode_ops,
	.opts_size = sizeof(struct io_opts),
	.defaults = io_defaults,
};

int cmd_io(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &io_def);
}
