/* ebprof lock: the command line of the lock mode (its own options; the shared ones are
 * cli/options.c's), run through the shared session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/options.h"
#include "core/session.h"
#include "modes/lock/collect.h"

#define DEFAULT_MAX_STACKS (1u << 14)
#define DEFAULT_MAX_LOCKS (1u << 14)

enum {
	OPT_KERNEL_ONLY = OPT_MODE_BASE,
	OPT_USER_ONLY,
	OPT_MAX_STACKS,
	OPT_MAX_LOCKS,
};

static const struct option lock_longopts[] = {
	{ "kernel-only", no_argument, NULL, OPT_KERNEL_ONLY },
	{ "user-only", no_argument, NULL, OPT_USER_ONLY },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "max-locks", required_argument, NULL, OPT_MAX_LOCKS },
	{ 0 },
};

static const char lock_usage[] =
	"Usage: ebprof lock [OPTIONS] -- CMD [ARGS...]\n"
	"       ebprof lock [OPTIONS] -p PID[,PID...] [-d TIME]\n"
	"       ebprof lock [OPTIONS] -a [-d TIME]\n"
	"\n"
	"Lock contention, kernel and user, each wait with the waiter's stacks, measured and\n"
	"aggregated in the kernel:\n"
	"  kernel locks  every lock:contention_begin to contention_end of a traced task\n"
	"                (spinlocks, rwlocks, mutexes, rwsems, semaphores, rtmutexes, percpu\n"
	"                rwsems), named by kernel data symbol (tasklist_lock) where the kernel\n"
	"                lists them, by what they are when they belong to the waiter's own\n"
	"                process (\"mmap_lock of 1234\"), else by address;\n"
	"  futex waits   every futex(2) FUTEX_WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2 and\n"
	"                WAIT_REQUEUE_PI and every futex_waitv(2), from the call to its return:\n"
	"                pthread mutexes, rwlocks, condition variables, barriers, C++\n"
	"                std::mutex; named by where the futex lives: the data symbol of a\n"
	"                program or library holding it (\"big_lock in server\", \"table+0x10 in\n"
	"                libfoo.so\"), a file's shared mapping at its offset (a process-shared\n"
	"                lock: \"futex /dev/shm/q+0x40\"), else its address and memory\n"
	"                (\"futex 0x55d0c0a04040 in [heap]\", \"in [stack]\", \"in [stack] of\n"
	"                thread 1234\", \"in [anon]\"). A wait that returns EAGAIN\n"
	"                (the futex's value had changed) did not wait: counted apart, as NO WAIT.\n"
	"                One that its timeout ended (ETIMEDOUT: nobody woke it; a timed\n"
	"                condition wait, an idle poll) is a timed wait, not contention:\n"
	"                counted apart, as TIMEOUTS, with its time (TIMEOUT WAIT).\n"
	"The report leads with a table per lock (its name, kind, process and address;\n"
	"contentions, total, mean and longest wait, NO WAIT, TIMEOUTS and their total wait)\n"
	"and each lock's log2 wait histogram (of its contentions); then the waiting stacks,\n"
	"kernel frames under user frames, under a leaf frame naming the lock and its kind\n"
	"(\"mmap_lock of 1234 (rwsem:W)\", \"big_lock in server (futex_wait)\"). Sample types:\n"
	"contentions (count) and delay (nanoseconds, the default), pprof's names for contention\n"
	"profiles: the waits that a wake or the lock's release ended; timeouts (count) and\n"
	"timeout_delay (nanoseconds): the futex waits that timed out.\n"
	"\n"
	"Targets:\n"
	OPTIONS_HELP_TARGETS
	"  -a, --all              every process and kernel thread (ebprof itself excepted)\n"
	"\n"
	"Locks:\n"
	"      --kernel-only      kernel locks only (an error on a kernel without the lock\n"
	"                         tracepoints, Linux before 5.19)\n"
	"      --user-only        futex waits only\n"
	"      --max-stacks N     distinct stacks kept, and (process, stacks, lock) counters\n"
	"                         (default 16384; preallocated, about 1 KiB each); past it, a\n"
	"                         wait loses its stack or its stack's counter, counted as a drop\n"
	"      --max-locks N      distinct locks kept (default 16384; about 0.4 KiB each)\n"
	"\n"
	"Output:\n"
	OPTIONS_HELP_OUTPUT
	"\n"
	OPTIONS_HELP_UNWIND
	OPTIONS_HELP_COMMON
	"\n"
	"Examples:\n"
	"  sudo ebprof lock -- ./server --threads 8     which locks its threads wait on\n"
	"  sudo ebprof lock -p 4242 -d 10 -o lock.svg   where 4242's threads wait, 10 s\n"
	"  sudo ebprof lock -a --kernel-only -d 10      the kernel's contended locks\n"
	"  sudo ebprof lock --value contentions -o lock.pb.gz -- ./bench\n"
	"\n"
	"Exit status: the command's, or 0; 1 when tracing fails; 2 on a usage error.\n";

static int lock_parse(void *mo, int c, const char *arg, struct session_opts *so,
		      const struct log_ctx *lc)
{
	struct lock_opts *o = mo;
	uint64_t v;

	switch (c) {
	case OPT_KERNEL_ONLY:
		o->user = false;
		o->kernel_asked = true;
		return 0;
	case OPT_USER_ONLY:
		o->kernel = false;
		return 0;
	case OPT_MAX_STACKS:
		return cli_parse_max_stacks(lc, "lock", arg, 1, 1u << 22, &o->max_stacks);
	case OPT_MAX_LOCKS:
		if (cli_parse_count(lc, "lock", "--max-locks", "locks", arg, 1, 1u << 22, &v))
			return 2;
		o->max_locks = v;
		return 0;
	}
	return cli_usage_err(lc, "lock", "unknown option");
}

static int lock_check(void *mo, struct session_opts *so, const struct log_ctx *lc)
{
	struct lock_opts *o = mo;

	if (!o->kernel && !o->user)
		return cli_usage_err(lc, "lock", "--kernel-only and --user-only exclude each "
				     "other: give one, or neither for both");
	return 0;
}

static const struct mode_cli lock_cli = {
	.name = "lock",
	.usage = lock_usage,
	.longopts = lock_longopts,
	.parse = lock_parse,
	.check = lock_check,
};

static void lock_defaults(void *mo, struct session_opts *so)
{
	struct lock_opts *o = mo;
	const char *t = getenv("EBPROF_TEST_NO_LOCK_TRACEPOINTS");

	o->max_stacks = DEFAULT_MAX_STACKS;
	o->max_locks = DEFAULT_MAX_LOCKS;
	o->kernel = o->user = true;
	o->pretend_no_tracepoints = t && !strcmp(t, "1");
}

const struct mode_def lock_def = {
	.cli = &lock_cli,
	.ops = &lock_mode_ops,
	.opts_size = sizeof(struct lock_opts),
	.defaults = lock_defaults,
};

int cmd_lock(int argc, char **argv, struct log_ctx *lc)
{
	return cli_run_mode(argc, argv, lc, &lock_def);
}
