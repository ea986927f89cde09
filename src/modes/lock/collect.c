/* The lock mode collector.
 *
 * The BPF programs (bpf/lock.bpf.c) are attached at open, for the whole run, to the kernel's
 * lock contention tracepoints and to the raw system call tracepoints (futex waits), and count
 * nothing until tracing starts (the first attach). Each wait is measured in the kernel, in the
 * waiting task, and added at its end to per (process, kind, stacks, lock) counters and to a
 * per-lock table with a log2 histogram. Everything stays in the kernel until the end (an exec
 * reads its process early: its old program's addresses mean nothing in the new one's
 * mappings), but for a table filling up, which a tick takes out as the run goes (the shared
 * spill, core/collector.h; the locks summed by lock here): the counters become samples (a
 * leaf frame naming the lock and its kind, the kernel frames of the wait, the user frames),
 * the locks the profile's groups.
 *
 * Naming a lock: a futex by where it lives in its process (its snapshot of mappings, through
 * sym_proc__resolve_data: a program's or library's data object, a file's shared mapping, else
 * its address and the memory it is in: name_futex); a kernel lock by the kernel data symbol it
 * is (tasklist_lock, from /proc/kallsyms, which lists data only with CONFIG_KALLSYMS_ALL),
 * else by what the program found it to be at the first wait (the waiting task's own
 * mm->mmap_lock, mm->page_table_lock, sighand->siglock, files->file_lock: "mmap_lock of
 * 1234"), else by address. Every lock's address is kept beside its name (the summary's
 * "address" label).
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/session.h"
#include "core/minbtf.h"
#include "core/procs.h"
#include "core/stacks.h"
#include "core/unwind.h"
#include "core/window.h"
#include "modes/lock/collect.h"
#include "output/render.h"
#include "profile/profile.h"
#include "symbolize/symbolize.h"
#include "core/target.h"
#include "util/util.h"
#include "abi/lock.h"
#include "lock.skel.h"

_Static_assert(LOCK_NR_FUTEX == SYS_futex, "futex(2)'s number");
_Static_assert(LOCK_NR_FUTEX_WAITV == 449, "futex_waitv(2)'s number");
_Static_assert(LOCK_NR32_FUTEX == 240 && LOCK_NR32_FUTEX_TIME64 == 422 &&
	       LOCK_NR32_RESTART_SYSCALL == 0, "the ia32 futex(2) numbers (asm/unistd_32.h)");
_Static_assert(LOCK_FUTEX_WAIT == FUTEX_WAIT && LOCK_FUTEX_LOCK_PI == FUTEX_LOCK_PI &&
	       LOCK_FUTEX_WAIT_BITSET == FUTEX_WAIT_BITSET &&
	       LOCK_FUTEX_WAIT_REQUEUE_PI == FUTEX_WAIT_REQUEUE_PI &&
	       LOCK_FUTEX_PRIVATE_FLAG == FUTEX_PRIVATE_FLAG &&
	       LOCK_FUTEX_CLOCK_REALTIME == FUTEX_CLOCK_REALTIME, "futex(2)'s commands");

#define MAX_TARGETS	8192	/* traced processes at once (a launched tree) */
#define MAX_COMMS	32768	/* processes named (-a sees every one) */
#define MAX_WAITS	65536	/* threads waiting at once, each table */
#define MAX_LOCS	(1 + 2 * STACK_MAX_DEPTH)
#define MAX_GROUPS	200	/* locks in the summary, the longest total waits first */
#define MAX_PROCS	32768	/* processes with totals (-a sees every one) */

static const char *const stat_names[LOCK_STAT__COUNT] = {
	[LOCK_STAT_KERNEL] = "kernel_contentions",
	[LOCK_STAT_FUTEX] = "futex_waits",
	[LOCK_STAT_NOWAIT] = "futex_nowait",
	[LOCK_STAT_TIMEDOUT] = "futex_timeouts",
	[LOCK_STAT_KEYS] = "keys",
	[LOCK_STAT_BEGUN] = "begun_before_start",
	[LOCK_STAT_LOCK_KEYS] = "lock_keys",
	[LOCK_STAT_EXITED] = "futex_waits_exited",
	[LOCK_STAT_PIDS_REUSED] = "pids_reused",
	[LOCK_STAT_NESTED] = "nested_contention",
	[LOCK_STAT_END_UNSEEN] = "end_unseen",
	[LOCK_STAT_WAITS_FULL] = "wait_table_full",
	[LOCK_STAT_STACKS_FULL] = "stack_table_full",
	[LOCK_STAT_NO_CALLER] = "direct_caller_unknown",
	[LOCK_STAT_COUNTS_FULL] = "count_table_full",
	[LOCK_STAT_PROCS_FULL] = "process_totals_full",
	[LOCK_STAT_LOCKS_FULL] = "lock_table_full",
	[LOCK_STAT_NOTES_FULL] = "process_notes_lost",
};

static const char *const owner_names[LOCK_OWNER__COUNT] = {
	[LOCK_OWNER_MMAP_LOCK] = "mmap_lock",
	[LOCK_OWNER_PAGE_TABLE_LOCK] = "page_table_lock",
	[LOCK_OWNER_SIGLOCK] = "siglock",
	[LOCK_OWNER_FILE_LOCK] = "file_lock",
};

struct lock_entry {
	struct lock_id id;
	struct lock_val v;
	char name[192];
	bool placed;		/* a futex named by where it lives (not its address alone) */
};

struct lock_read {
	struct lock_entry *e;
	size_t n, cap;
};

struct lock_collector {
	struct collector base;		/* first: the shared hooks take the collector */
	struct session_env env;
	struct lock_opts opts;
	const struct log_ctx *lc;
	struct lock_bpf *skel;
	struct kdata *kdata;		/* kernel data symbols, loaded at the first kernel lock */
	bool kdata_tried;
	bool kernel, user;		/* what is traced */
	bool started, stopped;
	uint64_t stop_ns;		/* CLOCK_MONOTONIC when counting stopped */
	uint64_t at_end;		/* waits going on then: each counted up to it */
	uint64_t at_end_lost;		/* of them, not counted: a table was full */
	uint64_t at_end_no_proc;	/* of them, in no process's totals: its table was full */
	struct lock_entry *locks;	/* read at the end, sorted by id */
	size_t nlocks;
	struct lock_read taken;		/* the per-lock table's entries spills took out, summed
					 * by lock, sorted by id (read_locks adds the table's) */
	uint64_t window_ns;		/* CLOCK_MONOTONIC at the start of the window (0: the run's) */
	uint64_t window_stats[LOCK_STAT__COUNT];	/* the counters then */
};

const char *lock_class_name(uint32_t aux)
{
	if (LOCK_AUX_IS_FUTEX(aux)) {
		switch (LOCK_AUX_FUTEX_CMD(aux)) {
		case LOCK_FUTEX_WAIT:
			return "futex_wait";
		case LOCK_FUTEX_WAIT_BITSET:
			return "futex_wait_bitset";
		case LOCK_FUTEX_LOCK_PI:
			return "futex_lock_pi";
		case LOCK_FUTEX_LOCK_PI2:
			return "futex_lock_pi2";
		case LOCK_FUTEX_WAIT_REQUEUE_PI:
			return "futex_wait_requeue_pi";
		case LOCK_FUTEX_WAITV:
			return "futex_waitv";
		}
		return "futex";
	}
	/* the kernel's combinations of LCB_F_* (kernel/locking/) */
	switch (aux & LOCK_LCB_F_MASK) {
	case 0:
		return "semaphore";
	case LOCK_LCB_F_SPIN:
		return "spinlock";
	case LOCK_LCB_F_SPIN | LOCK_LCB_F_READ:
		return "rwlock:R";
	case LOCK_LCB_F_SPIN | LOCK_LCB_F_WRITE:
		return "rwlock:W";
	case LOCK_LCB_F_READ:
		return "rwsem:R";
	case LOCK_LCB_F_WRITE:
		return "rwsem:W";
	case LOCK_LCB_F_RT:
		return "rtmutex";
	case LOCK_LCB_F_RT | LOCK_LCB_F_READ:
		return "rwlock-rt:R";
	case LOCK_LCB_F_RT | LOCK_LCB_F_WRITE:
		return "rwlock-rt:W";
	case LOCK_LCB_F_PERCPU | LOCK_LCB_F_READ:
		return "percpu-rwsem:R";
	case LOCK_LCB_F_PERCPU | LOCK_LCB_F_WRITE:
		return "percpu-rwsem:W";
	case LOCK_LCB_F_MUTEX:
		return "mutex";
	case LOCK_LCB_F_MUTEX | LOCK_LCB_F_SPIN:
		return "mutex-spin";
	}
	return "lock";
}

/* ---- open ------------------------------------------------------------------------------- */

static void lock_close(void *m);

/* The sample types of a lock profile: the run's, or a window's. contentions and delay are the
 * waits something ended (a wake, the lock taken), pprof's contention profile; timeouts and
 * timeout_delay the futex waits their timeout ended, nobody waking them (a timed condition
 * wait, an idle poll): waiting, but no contention, apart. */
static int set_types(struct profile *prof)
{
	int err = profile__add_type(prof, "contentions", "count");

	err = err ?: profile__add_type(prof, "delay", "nanoseconds");
	err = err ?: profile__add_type(prof, "timeouts", "count");
	err = err ?: profile__add_type(prof, "timeout_delay", "nanoseconds");
	/* a process's row is its exact totals (the kernel's `procs`), not what the per-stack
	 * table kept */
	err = err ?: profile__set_type_proc_stat(prof, "contentions", "contentions");
	err = err ?: profile__set_type_proc_stat(prof, "delay", "delay_ns");
	err = err ?: profile__set_type_proc_stat(prof, "timeouts", "timeouts");
	err = err ?: profile__set_type_proc_stat(prof, "timeout_delay", "timeout_delay_ns");
	return err ?: profile__set_default_type(prof, "delay");
}

/* What refers to stacks when the stacks map is emptied (collector__reclaim): the waits going
 * on (they count at their end: sleeping locks' and futex waits by thread, spinlocks' one a
 * CPU), then the counts made since the last take. */
static void set_stacks(struct lock_collector *c)
{
	struct stack_ref_map wait = {
		.key_size = sizeof(__u32), .val_size = sizeof(struct lock_wait), .n = 2,
		.at = { STACK_REF_VAL(__u32, struct lock_wait, ustack),
			STACK_REF_VAL(__u32, struct lock_wait, kstack) },
	};
	struct stack_ref_map refs[5] = { wait, wait, wait };

	refs[0].fd = bpf_map__fd(c->skel->maps.kwaits);
	refs[1].fd = bpf_map__fd(c->skel->maps.fwaits);
	refs[2].fd = bpf_map__fd(c->skel->maps.spinning);
	refs[2].percpu = true;
	/* both generations of counts (bpf/lib/take.bpf.h) */
	refs[3] = stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_0),
					sizeof(struct lock_key), sizeof(struct lock_count));
	refs[4] = stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_1),
					sizeof(struct lock_key), sizeof(struct lock_count));
	collector__set_stacks(&c->base, bpf_map__fd(c->skel->maps.stacks), c->base.st, refs, 5);
}

static void lock_readout(void *m, pid_t pid);

static void *lock_open(const struct session_env *env, void *opts)
{
	struct lock_collector *c = calloc(1, sizeof(*c));
	const struct lock_opts *o = opts;
	struct lock_bpf *sk;
	bool have_tp;
	int err;

	if (!c)
		return NULL;
	c->env = *env;
	c->opts = *o;
	c->lc = env->lc;
	if (collector__init(&c->base, env, true))
		goto fail;
	/* a PID traced again as another process: the earlier one's counts first (core/procs.h) */
	proc_table__set_readout(c->base.procs, lock_readout, c);
	have_tp = !o->pretend_no_tracepoints &&
		  bpfutil__has_tracepoint("contention_begin") &&
		  bpfutil__has_tracepoint("contention_end");
	c->kernel = o->kernel && have_tp;
	c->user = o->user;
	if (o->kernel && !have_tp) {
		if (o->kernel_asked) {
			pr_err(c->lc, "this kernel has no lock:contention_begin and contention_end "
			       "tracepoints (Linux 5.19 added them): kernel lock contention cannot be "
			       "traced here; 'ebprof lock --user-only' traces futex waits");
			goto fail;
		}
		pr_warn(c->lc, "this kernel has no lock:contention_begin and contention_end "
			"tracepoints (Linux 5.19 added them): only futex waits are traced, kernel "
			"locks are not");
	}

	sk = c->skel = MINBTF_OPEN(c->lc, lock_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&c->base, sk))
		goto fail;
	sk->rodata->trace_all = env->all;
	sk->rodata->self_tgid = getpid();
	sk->rodata->begun_stacks = !env->argv;	/* -p, -a: find_begun runs */
	sk->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(sk->obj, env->unwind, 0, 0);
	bpf_map__set_max_entries(sk->maps.targets, MAX_TARGETS);
	bpf_map__set_max_entries(sk->maps.comms, MAX_COMMS);
	bpf_map__set_max_entries(sk->maps.kwaits, MAX_WAITS);
	bpf_map__set_max_entries(sk->maps.fwaits, MAX_WAITS);
	COLLECTOR_SIZE(sk->maps, counts, o->max_stacks);
	bpf_map__set_max_entries(sk->maps.stacks, o->max_stacks);
	COLLECTOR_SIZE(sk->maps, locks, o->max_locks);
	COLLECTOR_SIZE(sk->maps, procs, o->max_procs ? o->max_procs : MAX_PROCS);
	collector__size_notes(sk->maps.notes, env->all);
	bpf_program__set_autoload(sk->progs.lock_begin, c->kernel);
	bpf_program__set_autoload(sk->progs.lock_end, c->kernel && !o->no_ends);
	bpf_program__set_autoload(sk->progs.futex_enter, c->user);
	bpf_program__set_autoload(sk->progs.futex_exit, c->user && !o->no_ends);
	bpf_program__set_autoload(sk->progs.lock_begun, c->user);
	bpf_program__set_autoload(sk->progs.lock_thread_exit, true);
	bpf_program__set_autoattach(sk->progs.lock_begun, false);	/* run: find_begun */
	if (collector__load(&c->base, env->unwind, true) ||
	    collector__notes(&c->base, sk->maps.notes, env->all))
		goto fail;
	set_stacks(c);
	err = lock_bpf__attach(sk);
	if (err) {
		pr_err(c->lc, "cannot attach to the %s tracepoints: %s",
		       c->kernel ? "lock and system call" : "system call", strerror(-err));
		goto fail;
	}
	pr_info(c->lc, "tracepoints: %s%s%s", c->kernel ? "contention_begin, contention_end" : "",
		c->kernel && c->user ? ", " : "", c->user ? "sys_enter, sys_exit (futex)" : "");

	err = set_types(env->prof);
	if (err) {
		pr_err(c->lc, "cannot set up the profile: %s", strerror(-err));
		goto fail;
	}
	return c;
fail:
	lock_close(c);
	return NULL;
}

static void start(struct lock_collector *c)
{
	if (c->started)
		return;
	c->skel->bss->started = true;
	c->started = true;
	c->window_ns = util_mono_ns();	/* the first window starts with counting */
}

/* ---- attach ----------------------------------------------------------------------------- */

/* The threads of pid (0: every task) in a futex wait now, since before counting started: each
 * gets a record as if its wait had begun at the run's start (bpf/lock.bpf.c: lock_begun). A launched
 * command has none: it was held at its exec until now. */
static void find_begun(struct lock_collector *c, pid_t pid)
{
	if (!c->user)
		return;
	c->skel->bss->begun_ns = c->env.start_ns;
	collector__find_begun(&c->base, c->skel->progs.lock_begun, pid, "futex waits");
}

static int lock_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct lock_collector *c = m;
	int err;

	*status = -1;
	err = collector__target(&c->base, pid, bpf_map__fd(c->skel->maps.targets), MAX_TARGETS);
	if (err)
		return err;
	start(c);
	if (how == MODE_ATTACH_PID)
		find_begun(c, pid);
	/* after find_begun: from here a wait going on before is counted (lock.bats waits for it) */
	pr_info(c->lc, "tracing PID %d's %s", pid, !c->user ? "kernel lock contentions" :
		c->kernel ? "lock contentions and futex waits" : "futex waits");
	return 0;
}

static int lock_attach_all(void *m)
{
	start(m);
	find_begun(m, 0);
	return 0;
}

/* ---- locks ------------------------------------------------------------------------------ */

static int read_lock(const void *k, const void *v, void *ctx)
{
	struct lock_read *r = ctx;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct lock_entry *e = realloc(r->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		r->e = e;
		r->cap = cap;
	}
	memset(&r->e[r->n], 0, sizeof(r->e[r->n]));
	r->e[r->n].id = *(const struct lock_id *)k;
	r->e[r->n++].v = *(const struct lock_val *)v;
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	const struct lock_id *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->aux < y->aux ? -1 : x->aux > y->aux;
}

/* A process as "comm[pid]" ("[pid]" when its name is unknown). */
static void proc_name(struct lock_collector *c, pid_t pid, char *buf, size_t len)
{
	struct proc_info *p = proc_table__find(c->base.procs, pid);
	struct lock_comm cc;
	__u32 key = pid;

	if (p && p->comm[0])
		snprintf(buf, len, "%s[%d]", p->comm, pid);
	else if (!bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &key, &cc))
		snprintf(buf, len, "%.*s[%d]", LOCK_COMM_LEN, cc.comm, pid);
	else
		snprintf(buf, len, "[%d]", pid);
}

static struct proc_info *report_proc(struct lock_collector *c, pid_t tgid, bool exec)
{
	struct lock_comm cc = { .comm = "" };
	__u32 key = tgid;

	bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &key, &cc);
	return collector__report_proc(&c->base, tgid, exec, cc.comm, LOCK_COMM_LEN, cc.kthread);
}

/* The thread of process pid whose stack pointer, as /proc/PID/task/TID/syscall shows it for a
 * thread blocked ("NR ARGS... SP PC", or "-1 SP PC"), lies in [start, end): whose stack that
 * is now; 0: none (the process or the thread is gone, or it is running). */
static pid_t stack_thread(pid_t pid, uint64_t start, uint64_t end)
{
	char path[64], *text, *last, *sp;
	struct dirent *d;
	pid_t found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && !found && (d = readdir(dir))) {
		unsigned long long v;

		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/syscall", pid, d->d_name);
		text = util_read_file(path, NULL);
		/* the second last word */
		last = text ? strrchr(text, ' ') : NULL;
		if (last) {
			*last = 0;
			sp = strrchr(text, ' ');
			if (sp && sscanf(sp + 1, "%llx", &v) == 1 && v >= start && v < end)
				found = atoi(d->d_name);
		}
		free(text);
	}
	if (dir)
		closedir(dir);
	return found;
}

/* A futex by where it lives in its process, as its mappings have it (now: its maps file read
 * for this naming, else its snapshots; a snapshot is renewed only when its code changed, not
 * when a thread's stack or the heap came since): a data object
 * of a program or library ("big_lock in server", "table+0x10 in libfoo.so"), the image of one
 * without a symbol ("futex server+0x4040"), a file's shared mapping ("futex /dev/shm/q+0x40":
 * a process-shared lock, the same name in every process mapping it), the heap, a stack,
 * anonymous memory (there with its address: "futex 0x55d0c0a04040 in [heap]"); its address
 * alone when its process left no snapshot. exec: the process's image was replaced (its
 * snapshot is the old program's, kept). */
static void name_futex(struct lock_collector *c, struct lock_entry *e, struct sym_proc *now,
		       bool exec, bool take)
{
	struct proc_info *p = report_proc(c, e->id.tgid, exec || take);
	unsigned long long a = e->id.addr;
	const char *mod = NULL, *base;
	struct sym_data d;
	pid_t tid;

	/* as drain: a window's processes keep their snapshots, one seen first gets one */
	if (p && take && !p->sp)
		proc_table__snapshot(c->base.procs, p);
	if ((!now || sym_proc__resolve_data(now, e->id.addr, &d)) &&
	    (!p || !p->sp || sym_proc__resolve_data(p->sp, e->id.addr, &d))) {
		snprintf(e->name, sizeof(e->name), "futex 0x%llx", a);
		return;
	}
	e->placed = true;
	mod = d.module ? d.module : "[anon]";
	base = strrchr(mod, '/') ? strrchr(mod, '/') + 1 : mod;
	switch (d.kind) {
	case SYM_DATA_MODULE:
		if (d.symbol && d.offset)
			snprintf(e->name, sizeof(e->name), "%s+0x%llx in %s", d.symbol,
				 (unsigned long long)d.offset, base);
		else if (d.symbol)
			snprintf(e->name, sizeof(e->name), "%s in %s", d.symbol, base);
		else
			snprintf(e->name, sizeof(e->name), "futex %s+0x%llx", base,
				 (unsigned long long)d.offset);
		break;
	case SYM_DATA_FILE:
		snprintf(e->name, sizeof(e->name), "futex %s+0x%llx", mod,
			 (unsigned long long)d.offset);
		break;
	case SYM_DATA_THREAD_STACK:
		tid = exec ? 0 : stack_thread(e->id.tgid, d.map_start, d.map_end);
		if (tid)
			snprintf(e->name, sizeof(e->name), "futex 0x%llx in [stack] of thread %d", a,
				 tid);
		else
			snprintf(e->name, sizeof(e->name), "futex 0x%llx in [stack] of a thread", a);
		break;
	default:
		snprintf(e->name, sizeof(e->name), "futex 0x%llx in %s", a, mod);
		break;
	}
}

static void name_lock(struct lock_collector *c, struct lock_entry *e, struct sym_proc *now,
		      bool exec, bool take)
{
	const char *sym;
	uint64_t off;

	if (LOCK_AUX_IS_FUTEX(e->id.aux)) {
		name_futex(c, e, now, exec, take);
		return;
	}
	if (!c->kdata_tried) {
		c->kdata_tried = true;
		c->kdata = kdata__load(NULL);
	}
	sym = kdata__resolve(c->kdata, e->id.addr, &off);
	if (sym && off)
		snprintf(e->name, sizeof(e->name), "%s+0x%llx", sym, (unsigned long long)off);
	else if (sym)
		snprintf(e->name, sizeof(e->name), "%s", sym);
	else if (e->v.owner && e->v.owner < LOCK_OWNER__COUNT)
		snprintf(e->name, sizeof(e->name), "%s of %u", owner_names[e->v.owner],
			 e->v.owner_tgid);
	else
		snprintf(e->name, sizeof(e->name), "0x%llx", (unsigned long long)e->id.addr);
}

/* The same lock counted in two takes (a spill's, the end's): v added to its numbers. */
static void add_lock_val(struct lock_val *to, const struct lock_val *v)
{
	to->count += v->count;
	to->delay_ns += v->delay_ns;
	if (v->max_ns > to->max_ns)
		to->max_ns = v->max_ns;
	to->nowait += v->nowait;
	to->timeouts += v->timeouts;
	to->timeout_ns += v->timeout_ns;
	if (!to->owner) {
		to->owner = v->owner;
		to->owner_tgid = v->owner_tgid;
	}
	for (int b = 0; b < LOCK_HIST_SLOTS; b++)
		to->hist[b] += v->hist[b];
}

/* r's entries sorted by id, each lock once: the numbers of one lock's entries summed. */
static void merge_locks(struct lock_read *r)
{
	size_t n = 0;

	if (r->n)
		qsort(r->e, r->n, sizeof(*r->e), id_cmp);
	for (size_t i = 0; i < r->n; i++) {
		if (n && !id_cmp(&r->e[n - 1].id, &r->e[i].id))
			add_lock_val(&r->e[n - 1].v, &r->e[i].v);
		else if (n++ != i)
			r->e[n - 1] = r->e[i];
	}
	r->n = n;
}

static int tgid_cmp(const void *a, const void *b)
{
	const struct lock_id *x = a, *y = b;

	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* Every lock, named, sorted by id (for lookups): what the spills took out and what the kernel's
 * table holds now, one entry a lock. A futex placed by an earlier read keeps its name: its
 * process may have exec'd since, its old program's addresses meaning nothing in the new one's
 * mappings. exec: process `exec` is exec'ing now (its snapshot is its old program's); take: a
 * window's (processes keep their snapshots). */
static int read_locks(struct lock_collector *c, pid_t exec, bool take)
{
	struct lock_read r = { 0 };
	struct sym_proc *now = NULL;
	uint32_t now_tgid = 0;
	int err = 0;

	for (size_t i = 0; i < c->taken.n && !err; i++)
		err = read_lock(&c->taken.e[i].id, &c->taken.e[i].v, &r);
	/* both generations (bpf/lib/take.bpf.h): a window flips the tables but takes no locks */
	err = err ?: bpfutil__map_for_each(bpf_map__fd(c->skel->maps.locks_0),
					   sizeof(struct lock_id), sizeof(struct lock_val),
					   read_lock, &r);
	err = err ?: bpfutil__map_for_each(bpf_map__fd(c->skel->maps.locks_1),
					   sizeof(struct lock_id), sizeof(struct lock_val),
					   read_lock, &r);
	if (err) {
		free(r.e);
		return err;
	}
	merge_locks(&r);
	/* by process: each one's maps read once */
	qsort(r.e, r.n, sizeof(*r.e), tgid_cmp);
	for (size_t i = 0; i < r.n; i++) {
		const struct lock_entry *old = bsearch(&r.e[i].id, c->locks, c->nlocks,
						       sizeof(*c->locks), id_cmp);
		uint32_t tgid = r.e[i].id.tgid;
		bool execing = exec && tgid == (uint32_t)exec;

		if (old && old->placed) {
			memcpy(r.e[i].name, old->name, sizeof(old->name));
			r.e[i].placed = true;
			continue;
		}
		/* a process exec'ing has its new program's maps: its old one's snapshot names */
		if (tgid && tgid != now_tgid && !execing && c->env.sym) {
			sym_proc__free(now);
			now = symbolizer__load_pid(c->env.sym, (pid_t)tgid);
			now_tgid = tgid;
		}
		name_lock(c, &r.e[i], tgid == now_tgid ? now : NULL, execing, take);
	}
	sym_proc__free(now);
	qsort(r.e, r.n, sizeof(*r.e), id_cmp);
	free(c->locks);
	c->locks = r.e;
	c->nlocks = r.n;
	return 0;
}

static const struct lock_entry *find_lock(const struct lock_collector *c, uint64_t addr,
					  uint32_t tgid, uint32_t aux)
{
	struct lock_id id = { .addr = addr, .tgid = LOCK_AUX_IS_FUTEX(aux) ? tgid : 0,
			      .aux = aux };

	return bsearch(&id, c->locks, c->nlocks, sizeof(*c->locks), id_cmp);
}

/* ---- samples ---------------------------------------------------------------------------- */

struct count_entry {
	struct lock_key k;
	struct lock_count v;
};

static int count_cmp(const void *a, const void *b)
{
	const struct lock_key *x = &((const struct count_entry *)a)->k;
	const struct lock_key *y = &((const struct count_entry *)b)->k;

	if (x->stack.tgid != y->stack.tgid)
		return x->stack.tgid < y->stack.tgid ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->stack.aux != y->stack.aux)
		return x->stack.aux < y->stack.aux ? -1 : 1;
	if (x->stack.kstack != y->stack.kstack)
		return x->stack.kstack < y->stack.kstack ? -1 : 1;
	return x->stack.ustack < y->stack.ustack ? -1 : x->stack.ustack > y->stack.ustack;
}


/* ---- processes -------------------------------------------------------------------------- */

/* One process's totals into its row: every wait of its, whatever the per-stack table kept (a
 * full one cost stacks, and made the rows and totals short too). */
static int add_proc(struct lock_collector *c, struct profile *prof, __u32 tgid,
		    const struct lock_proc *v, bool exec)
{
	struct proc_info *p = report_proc(c, tgid, exec);
	struct prof_process *pp;
	int err;

	if (!p)
		return -ENOMEM;
	pp = profile__add_process(prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline);
	if (!pp)
		return -errno;
	err = prof_process__add_stat(prof, pp, "contentions", v->kernel_count + v->futex_count);
	err = err ?: prof_process__add_stat(prof, pp, "delay_ns", v->kernel_ns + v->futex_ns);
	err = err ?: prof_process__add_stat(prof, pp, "timeouts", v->futex_timeouts);
	err = err ?: prof_process__add_stat(prof, pp, "timeout_delay_ns", v->futex_timeout_ns);
	if (v->futex_count)
		err = err ?: prof_process__add_stat(prof, pp, "futex_waits", v->futex_count);
	if (v->kernel_count)
		err = err ?: prof_process__add_stat(prof, pp, "kernel_contentions",
						    v->kernel_count);
	return err;
}

struct procs_read {
	struct lock_collector *c;
	struct profile *prof;
	bool exec;
};

static int on_proc(const void *k, const void *v, void *ctx)
{
	const struct procs_read *r = ctx;

	return add_proc(r->c, r->prof, *(const __u32 *)k, v, r->exec);
}

/* The processes' totals into prof (collector__read_procs: `only`'s at an exec, every one's
 * taken or read). */
static int drain_procs(struct lock_collector *c, struct profile *prof, pid_t only, bool take)
{
	struct procs_read r = { .c = c, .prof = prof, .exec = only || take };

	return COLLECTOR_READ_PROCS(&c->base, c->skel->maps, procs, sizeof(struct lock_proc), only,
				    take, on_proc, &r);
}

/* Move the counts of process `only` (0: every process) into prof: a leaf frame naming the lock
 * and its kind, the kernel frames of the wait, the user frames; `remove`: delete them from the
 * kernel (an exec); `take`: every process's, taken out of the kernel at once (a window). */
static int drain(struct lock_collector *c, struct profile *prof, pid_t only, bool remove,
		 bool take)
{
	/* a take's: the generation its flip took away from the programs (collector__flip) */
	int fd = take ? COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, counts)
		      : COLLECTOR_FD(&c->base, c->skel->maps, counts);
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	struct count_entry *ents;
	size_t nents;
	uint32_t locs[MAX_LOCS];
	char leaf[256];
	int err;

	err = stack_records__read(fd, sizeof(struct lock_key), sizeof(struct lock_count),
				  sizeof(struct count_entry), offsetof(struct count_entry, v), only,
				  take, (void **)&ents, &nents);
	if (!take)
		err = err ?: stack_table__read(c->base.st, stacks_fd);
	/* a window fetches only the stacks it counted; the table is read whole at the end */
	else
		stack_table__fetch_records(c->base.st, stacks_fd, ents, nents, sizeof(*ents));
	err = err ?: read_locks(c, remove ? only : 0, take);
	if (err)
		pr_warn(c->lc, "reading the kernel's lock counts failed: %s; the report may be "
			"incomplete", strerror(-err));
	if (nents)
		qsort(ents, nents, sizeof(*ents), count_cmp);
	for (size_t i = 0; i < nents; i++) {
		const struct count_entry *e = &ents[i];
		int64_t vals[4] = { e->v.count, e->v.delay_ns, e->v.timeouts, e->v.timeout_ns };
		struct proc_info *p = report_proc(c, e->k.stack.tgid, remove || take);
		const struct lock_entry *l = find_lock(c, e->k.addr, e->k.stack.tgid,
						       e->k.stack.aux);
		uint32_t n = 0;

		if (!p) {
			err = -ENOMEM;
			break;
		}
		/* a window's processes keep their snapshots; one seen for the first time gets one */
		if (take && !p->sp)
			proc_table__snapshot(c->base.procs, p);
		if (l)
			snprintf(leaf, sizeof(leaf), "%s (%s)", l->name,
				 lock_class_name(e->k.stack.aux));
		else
			snprintf(leaf, sizeof(leaf), "%s0x%llx (%s)",
				 LOCK_AUX_IS_FUTEX(e->k.stack.aux) ? "futex " : "",
				 (unsigned long long)e->k.addr, lock_class_name(e->k.stack.aux));
		locs[n++] = stacks__named_loc(prof, leaf);
		/* the programs run in the waiting task: the machinery's frames lead its stack */
		n += stacks__key_locs(prof, c->base.st,
				      e->k.stack.kstack ? stacks__ksyms(c->lc) : NULL, p->sp,
				      p->pid, &e->k.stack, true, locs + n);
		if (!profile__add_to_sample(prof, locs, n, vals, e->k.stack.tgid)) {
			err = -errno;
			break;
		}
		/* its row comes from its totals (drain_procs) */
		if (!profile__add_process(prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline)) {
			err = -errno;
			break;
		}
		if (remove)
			bpf_map_delete_elem(fd, &e->k);
	}
	if (err)
		pr_warn(c->lc, "building the profile failed: %s", strerror(-err));
	free(ents);
	return err ?: drain_procs(c, prof, only, take);
}

/* ---- the per-lock summary --------------------------------------------------------------- */

static int delay_cmp(const void *a, const void *b)
{
	const struct lock_entry *x = *(const struct lock_entry *const *)a;
	const struct lock_entry *y = *(const struct lock_entry *const *)b;

	if (x->v.delay_ns != y->v.delay_ns)
		return x->v.delay_ns > y->v.delay_ns ? -1 : 1;
	if (x->v.timeout_ns != y->v.timeout_ns)
		return x->v.timeout_ns > y->v.timeout_ns ? -1 : 1;
	if (x->v.nowait != y->v.nowait)
		return x->v.nowait > y->v.nowait ? -1 : 1;
	return id_cmp(&x->id, &y->id);
}

static int add_group(struct lock_collector *c, const struct lock_entry *e)
{
	struct profile *prof = c->env.prof;
	struct prof_group *g = profile__add_group(prof);
	uint64_t n = e->v.count;
	char who[48], addr[24];
	int err;

	if (!g)
		return -errno;
	snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)e->id.addr);
	if (LOCK_AUX_IS_FUTEX(e->id.aux))
		proc_name(c, e->id.tgid, who, sizeof(who));
	else if (e->v.owner)
		proc_name(c, e->v.owner_tgid, who, sizeof(who));
	else
		snprintf(who, sizeof(who), "-");
	err = prof_group__add_label(prof, g, "lock", e->name);
	err = err ?: prof_group__add_label(prof, g, "class", lock_class_name(e->id.aux));
	err = err ?: prof_group__add_label(prof, g, "process", who);
	/* the name may not hold it (a data object's, a file's offset) */
	err = err ?: prof_group__add_label(prof, g, "address", addr);
#define STAT(name, label, unit, val) \
	err = err ?: prof_group__add_stat(prof, g, name, label, unit, (int64_t)(val))
	STAT("contentions", "CONTENTIONS", "count", n);
	STAT("delay_ns", "TOTAL", "nanoseconds", e->v.delay_ns);
	STAT("delay_avg_ns", "MEAN", "nanoseconds", n ? e->v.delay_ns / n : 0);
	STAT("delay_max_ns", "MAX", "nanoseconds", e->v.max_ns);
	STAT("nowait", "NO WAIT", "count", e->v.nowait);
	STAT("timeouts", "TIMEOUTS", "count", e->v.timeouts);
	STAT("timeout_delay_ns", "TIMEOUT WAIT", "nanoseconds", e->v.timeout_ns);
#undef STAT
	err = err ?: prof_group__add_hist(prof, g, "wait", "nanoseconds", 1,
					  (const uint64_t *)e->v.hist, LOCK_HIST_SLOTS);
	return err;
}

static void add_groups(struct lock_collector *c)
{
	struct lock_entry **by = calloc(c->nlocks + 1, sizeof(*by));
	size_t n = 0;
	int err = 0;

	if (!by)
		return;
	for (size_t i = 0; i < c->nlocks; i++)
		by[i] = &c->locks[i];
	qsort(by, c->nlocks, sizeof(*by), delay_cmp);
	for (size_t i = 0; i < c->nlocks && !err; i++) {
		if (n == MAX_GROUPS)
			break;
		err = add_group(c, by[i]);
		n++;
	}
	if (err)
		pr_warn(c->lc, "building the lock summary failed: %s", strerror(-err));
	if (c->nlocks > MAX_GROUPS)
		/* more than MAX_GROUPS: never one */
		profile__add_note(c->env.prof, "%zu locks were contended: the summary shows the %d "
				  "with the longest total wait; every wait is in the stacks",
				  c->nlocks, MAX_GROUPS);
	profile__add_info(c->env.prof, "locks", "%zu", c->nlocks);
	free(by);
}

/* ---- the run ---------------------------------------------------------------------------- */

static uint64_t stat_sum(struct lock_collector *c, enum lock_stat s)
{
	return bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.stats), s);
}

static void lock_progress(void *m, char *buf, size_t len)
{
	struct lock_collector *c = m;
	uint64_t drops = bpfutil__percpu_sum_range(bpf_map__fd(c->skel->maps.stats),
						   LOCK_STAT_NESTED, LOCK_STAT__COUNT);

	snprintf(buf, len, "%llu kernel contentions  %llu futex waits  %llu timed out  drops %llu",
		 (unsigned long long)stat_sum(c, LOCK_STAT_KERNEL),
		 (unsigned long long)stat_sum(c, LOCK_STAT_FUTEX),
		 (unsigned long long)stat_sum(c, LOCK_STAT_TIMEDOUT), (unsigned long long)drops);
}

/* proc_table__set_readout: an earlier process's counts at pid, read out as an exec's are */
static void lock_readout(void *m, pid_t pid)
{
	struct lock_collector *c = m;

	drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

static void lock_finalize(void *m, pid_t pid, bool exec)
{
	struct lock_collector *c = m;

	if (collector__hold(&c->base, pid) && exec)
		drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

static void lock_reaped(void *m, pid_t pid)
{
	struct lock_collector *c = m;

	proc_table__untarget(c->base.procs, pid, bpf_map__fd(c->skel->maps.targets));
}

static void lock_started(void *m, uint64_t start_ns)
{
	struct lock_collector *c = m;

	c->env.start_ns = start_ns;
}

static bool waiter_gone(uint32_t tid, uint64_t start_ns);
static bool in_futex(uint32_t tid);

/* A wait going on when tracing stopped, w (of thread tid): counted up to the stop, under its
 * stacks (taken at its start) and its lock, as its end would have: a contention, or a timeout
 * when its end, seen after the stop, was its timeout. Left out, a deadlock was "contentions 0,
 * delay 0" (a note said the waits were in no number). */
static void count_open_wait(struct lock_collector *c, const struct lock_wait *w)
{
	pid_t tgid, ppid, nspid;
	bool futex = LOCK_AUX_IS_FUTEX(w->aux);
	bool timedout = futex && w->interrupted == LOCK_WAIT_TIMEDOUT_LATE;
	uint64_t d = c->stop_ns > w->start_ns ? c->stop_ns - w->start_ns : 0;
	struct lock_key k = { 0 };
	struct lock_count cnt = { 0 };
	struct lock_proc pv = { 0 };
	struct lock_val v = { 0 };
	struct lock_id id = { 0 };
	int cfd = COLLECTOR_FD(&c->base, c->skel->maps, counts);
	int lfd = COLLECTOR_FD(&c->base, c->skel->maps, locks);
	int pfd = COLLECTOR_FD(&c->base, c->skel->maps, procs);
	__u32 pk;
	unsigned s = 0;

	if (target__ids(w->tid, &tgid, &ppid, &nspid))
		tgid = w->tid;
	c->at_end++;
	/* its process's totals first: they do not depend on the per-stack table having room */
	pk = (__u32)tgid;
	if (!bpf_map_lookup_elem(pfd, &pk, &pv) || errno == ENOENT) {
		if (timedout) {
			pv.futex_timeouts++;
			pv.futex_timeout_ns += d;
		} else if (futex) {
			pv.futex_count++;
			pv.futex_ns += d;
		} else {
			pv.kernel_count++;
			pv.kernel_ns += d;
		}
		if (bpf_map_update_elem(pfd, &pk, &pv, BPF_ANY))
			c->at_end_no_proc++;
	} else {
		c->at_end_no_proc++;
	}
	k.stack.tgid = tgid;
	k.stack.aux = w->aux;
	k.stack.ustack = w->ustack;
	k.stack.kstack = w->kstack;
	k.stack.flags = w->flags;
	k.addr = w->lock;
	if (bpf_map_lookup_elem(cfd, &k, &cnt) && errno != ENOENT) {
		c->at_end_lost++;
		return;
	}
	if (timedout) {
		cnt.timeouts++;
		cnt.timeout_ns += d;
	} else {
		cnt.count++;
		cnt.delay_ns += d;
	}
	if (bpf_map_update_elem(cfd, &k, &cnt, BPF_ANY)) {
		c->at_end_lost++;
		return;
	}
	id.addr = w->lock;
	id.tgid = futex ? (uint32_t)tgid : 0;
	id.aux = w->aux;
	if (bpf_map_lookup_elem(lfd, &id, &v) && errno != ENOENT) {
		c->at_end_lost++;
		return;
	}
	if (timedout) {
		v.timeouts++;
		v.timeout_ns += d;
	} else {
		v.count++;
		v.delay_ns += d;
		if (d > v.max_ns)
			v.max_ns = d;
		/* slot 0: 0 ns; slot b: [2^(b-1), 2^b) */
		for (uint64_t x = d; x; x >>= 1)
			s++;
		v.hist[s < LOCK_HIST_SLOTS ? s : LOCK_HIST_SLOTS - 1]++;
	}
	if (bpf_map_update_elem(lfd, &id, &v, BPF_ANY))
		c->at_end_lost++;
}

/* The waits in map when tracing stopped that were going on then (a futex wait still in its
 * call, or one that ended after: LOCK_WAIT_ENDED_LATE or _TIMEDOUT_LATE; a kernel lock's whose
 * thread is there): counted up to the stop and taken out; what is left ended unseen
 * (lock_finish). */
static void count_open_waits(struct lock_collector *c, struct bpf_map *map, bool futex)
{
	int fd = bpf_map__fd(map);
	__u32 key, next, *prev = NULL, *going = NULL;
	size_t n = 0, cap = 0;
	struct lock_wait w;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &w) || !w.lock || w.start_ns >= c->stop_ns)
			continue;
		if (!(futex && (w.interrupted == LOCK_WAIT_ENDED_LATE ||
				w.interrupted == LOCK_WAIT_TIMEDOUT_LATE)) &&
		    (waiter_gone(key, w.start_ns) || (futex && !in_futex(key))))
			continue;
		count_open_wait(c, &w);
		if (n == cap) {
			__u32 *g = realloc(going, (cap = cap ? 2 * cap : 64) * sizeof(*g));

			if (!g)
				continue;
			going = g;
		}
		going[n++] = key;
	}
	/* out of the map after the walk, which deleting would disturb */
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &going[i]);
	free(going);
}

static void lock_stop(void *m)
{
	struct lock_collector *c = m;

	if (c->stopped)
		return;
	c->skel->bss->stopped = true;
	c->stopped = true;
	/* the run's end: a wait going on counts up to it, never longer than the run */
	c->stop_ns = c->env.s && session__end_ns(c->env.s) ? session__end_ns(c->env.s)
							    : util_mono_ns();
	if (c->kernel)
		count_open_waits(c, c->skel->maps.kwaits, false);
	if (c->user)
		count_open_waits(c, c->skel->maps.fwaits, true);
	collector__consume_notes(&c->base);
}

/* Whether thread tid, as /proc shows it now, cannot be the one that began a wait at start_ns
 * (CLOCK_MONOTONIC) still waiting: it is gone or dead (a zombie), or it is a later thread with
 * that number (started after). */
static bool waiter_gone(uint32_t tid, uint64_t start_ns)
{
	char path[64], *stat, *p, state;
	unsigned long long ticks;
	struct timespec mono, boot;
	long hz = sysconf(_SC_CLK_TCK);
	bool gone = true;

	snprintf(path, sizeof(path), "/proc/%u/stat", tid);
	stat = util_read_file(path, NULL);
	if (!stat)
		return true;
	/* starttime, field 22, in clock ticks since boot: the fields after comm's ')' */
	p = strrchr(stat, ')');
	if (p && hz > 0 && !clock_gettime(CLOCK_MONOTONIC, &mono) &&
	    !clock_gettime(CLOCK_BOOTTIME, &boot) &&
	    sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &state, &ticks) == 2) {
		int64_t boot_off = (boot.tv_sec - mono.tv_sec) * 1000000000LL +
				   (boot.tv_nsec - mono.tv_nsec);

		/* ticks round down: a thread started less than a tick after the wait passes */
		gone = state == 'Z' || state == 'X' ||
		       ticks * (1000000000ULL / (uint64_t)hz) > start_ns + boot_off;
	} else if (p) {
		gone = false;	/* there, but its start unreadable: taken as the waiter */
	}
	free(stat);
	return gone;
}

/* Whether thread tid is in a futex call now (/proc/TID/syscall: the number of the call it is
 * blocked in; "running" on a CPU, taken as in it: it may be on its way out of the call). */
static bool in_futex(uint32_t tid)
{
	char path[64], *text;
	long nr;
	bool in = true;

	snprintf(path, sizeof(path), "/proc/%u/syscall", tid);
	text = util_read_file(path, NULL);
	if (!text)
		return true;	/* unreadable: taken as still waiting */
	if (strncmp(text, "running", 7) && sscanf(text, "%ld", &nr) == 1)
		in = nr == LOCK_NR_FUTEX || nr == LOCK_NR_FUTEX_WAITV ||
		     nr == LOCK_NR_RESTART_SYSCALL ||
		     /* a 32-bit call's number is the ia32 table's (not its restart: 0 is read) */
		     nr == LOCK_NR32_FUTEX || nr == LOCK_NR32_FUTEX_TIME64;
	free(text);
	return in;
}

/* The waits left open in map at the end: those still going on (the thread is there and, for a
 * futex wait, still in the call) added to *going; returns the rest, the waits that ended
 * without their end event reaching a program: the thread is gone, or no longer in a futex call
 * (every wait has an end event: a thread killed in a futex wait still leaves its call, its
 * record then taken out at its exit, and a kernel lock's wait ends before the task can go). */
static uint64_t open_waits(struct bpf_map *map, bool futex, uint64_t *going)
{
	__u32 key, next, *prev = NULL;
	struct lock_wait w;
	uint64_t unseen = 0;
	int fd = bpf_map__fd(map);

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &w))
			continue;	/* ended meanwhile */
		if (waiter_gone(key, w.start_ns) || (futex && !in_futex(key)))
			unseen++;
		else
			(*going)++;
	}
	return unseen;
}

static void lock_finish(void *m)
{
	struct lock_collector *c = m;
	struct profile *prof = c->env.prof;
	uint64_t misses = bpfutil__recursion_misses(c->skel->obj), nowait, timeouts, waits, unseen;
	uint64_t exited;
	uint64_t v[LOCK_STAT__COUNT];

	drain(c, c->env.prof, 0, false, false);
	add_groups(c);
	collector__note_reused(prof, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, LOCK_STAT_PIDS_REUSED));
	unwinder__add_drops(c->base.unwinder, prof);
	collector__add_drops(prof, bpf_map__fd(c->skel->maps.stats), stat_names, LOCK_STAT_NESTED,
			     LOCK_STAT__COUNT, c->env.all ? -1 : LOCK_STAT_NOTES_FULL, v);
	/* the waits going on at the stop were counted up to it (lock_stop); what is left */
	waits = c->at_end;
	unseen = (c->kernel ? open_waits(c->skel->maps.kwaits, false, &waits) : 0) +
		 (c->user ? open_waits(c->skel->maps.fwaits, true, &waits) : 0);
	profile__add_drop(prof, stat_names[LOCK_STAT_END_UNSEEN], unseen);
	v[LOCK_STAT_END_UNSEEN] += unseen;
	profile__add_drop(prof, stat_names[LOCK_STAT_COUNTS_FULL], c->at_end_lost);
	v[LOCK_STAT_COUNTS_FULL] += c->at_end_lost;
	profile__add_drop(prof, stat_names[LOCK_STAT_PROCS_FULL], c->at_end_no_proc);
	v[LOCK_STAT_PROCS_FULL] += c->at_end_no_proc;
	for (int s = LOCK_STAT_NESTED; s < LOCK_STAT__COUNT; s++) {
		uint64_t n = v[s];

		if (!n)
			continue;
		if (s == LOCK_STAT_NESTED)
			profile__add_note(prof, "%llu spinlock contention%s inside another on the "
					  "same CPU (an interrupt's, while its task spun) %s not "
					  "measured", (unsigned long long)n, n == 1 ? "" : "s",
					  n == 1 ? "was" : "were");
		else if (s == LOCK_STAT_END_UNSEEN)
			profile__add_note(prof, "%llu %s (the kernel ran no program at it: see "
					  "recursion_misses): not counted", (unsigned long long)n,
					  n == 1 ? "wait never reported its end"
						 : "waits never reported their end");
		else if (s == LOCK_STAT_WAITS_FULL)
			profile__add_note(prof, "%llu %s not measured: more than %d threads waited "
					  "at once", (unsigned long long)n, n == 1 ? "wait was" : "waits were",
					  MAX_WAITS);
		else if (s == LOCK_STAT_STACKS_FULL)
			profile__add_note(prof, "%llu %s not kept: the stack table (--max-stacks %u) "
					  "was full, so %s waits count without %s; raise --max-stacks",
					  (unsigned long long)n, n == 1 ? "stack was" : "stacks were",
					  c->opts.max_stacks, n == 1 ? "its" : "their",
					  n == 1 ? "it" : "them");
		else if (s == LOCK_STAT_COUNTS_FULL)
			profile__add_note(prof, "%llu %s in the locks' and the processes' numbers "
					  "but not in any stack's: the table of (process, stacks, lock) "
					  "was full (--max-stacks %u); raise --max-stacks",
					  (unsigned long long)n, n == 1 ? "wait is" : "waits are",
					  c->opts.max_stacks);
		else if (s == LOCK_STAT_PROCS_FULL)
			collector__note_totals_full(prof, n, "wait", "waits",
						    c->opts.max_procs ? c->opts.max_procs
								      : MAX_PROCS);
		else if (s == LOCK_STAT_LOCKS_FULL)
			profile__add_note(prof, "%llu %s in the stacks' numbers but not in any "
					  "lock's: the lock table (--max-locks %u) filled up before a "
					  "tick could take it out (every 100 ms, once three quarters "
					  "full); raise --max-locks", (unsigned long long)n,
					  n == 1 ? "wait is" : "waits are", c->opts.max_locks);
		else if (s == LOCK_STAT_NO_CALLER)
			profile__add_note(prof, "%llu %s by frame pointers end%s in [truncated] "
					  "after the wait's function: the function that called into "
					  "its library (which keeps no frame pointer) could not be "
					  "found below %%rbp (a frame of more than 64 words, or its "
					  "mappings could not be read then), so what came after it "
					  "is not known; the tables' walk (no --unwind fp) finds it",
					  (unsigned long long)n, n == 1 ? "wait's stack walked" :
					  "waits' stacks walked", n == 1 ? "s" : "");
		else
			collector__note_notes_lost(prof, n);
	}
	profile__add_drop(prof, "recursion_misses", misses);
	nowait = stat_sum(c, LOCK_STAT_NOWAIT);
	if (c->user && nowait)
		profile__add_note(prof, "futex waits: from the futex(2) or futex_waitv(2) call to its "
				  "return; %llu %s EAGAIN at once (the futex's value had changed: "
				  "no wait) and %s counted apart, as NO WAIT, in no delay",
				  (unsigned long long)nowait, nowait == 1 ? "call returned"
									  : "calls returned",
				  nowait == 1 ? "is" : "are");
	else if (c->user)
		profile__add_note(prof, "futex waits: from the futex(2) or futex_waitv(2) call to its "
				  "return; a call that returns EAGAIN at once (the futex's value "
				  "had changed: no wait) would be counted apart, as NO WAIT: none "
				  "did");
	timeouts = stat_sum(c, LOCK_STAT_TIMEDOUT);
	if (c->user && timeouts)
		profile__add_note(prof, "%llu %s (ETIMEDOUT: nobody woke %s; a timed condition "
				  "wait, an idle poll, a timed lock given up): counted apart, as "
				  "TIMEOUTS and TIMEOUT WAIT (sample types timeouts and "
				  "timeout_delay), in no contention or delay",
				  (unsigned long long)timeouts,
				  timeouts == 1 ? "futex wait ended by its timeout"
						: "futex waits ended by their timeout",
				  timeouts == 1 ? "it" : "them");
	if (c->kernel)
		profile__add_note(prof, "kernel locks: from lock:contention_begin to contention_end "
				  "in the waiting task (spinlocks per CPU, sleeping locks per "
				  "thread)");
	if (!c->kernel && c->opts.kernel)
		profile__add_note(prof, "kernel locks were not traced: this kernel has no "
				  "lock:contention_begin and contention_end tracepoints");
	profile__add_info(prof, "tracepoints", "%s%s%s",
			  c->kernel ? "contention_begin, contention_end" : "",
			  c->kernel && c->user ? ", " : "",
			  c->user ? "sys_enter, sys_exit (futex, futex_waitv)" : "");
	profile__add_info(prof, "kernel_contentions", "%llu",
			  (unsigned long long)stat_sum(c, LOCK_STAT_KERNEL));
	profile__add_info(prof, "futex_waits", "%llu",
			  (unsigned long long)stat_sum(c, LOCK_STAT_FUTEX));
	profile__add_info(prof, "futex_nowait", "%llu", (unsigned long long)nowait);
	profile__add_info(prof, "futex_timeouts", "%llu", (unsigned long long)timeouts);
	profile__add_info(prof, "waiting_at_end", "%llu", (unsigned long long)waits);
	exited = stat_sum(c, LOCK_STAT_EXITED);
	if (c->user)
		profile__add_info(prof, "futex_waits_exited", "%llu", (unsigned long long)exited);
	if (c->user && exited)
		profile__add_note(prof, "%llu futex %s ended by a signal and not resumed before "
				  "%s thread exited (killed in the wait, its process exiting): "
				  "each counts up to the signal, as a wait given up on EINTR",
				  (unsigned long long)exited, exited == 1 ? "wait was" : "waits were",
				  exited == 1 ? "its" : "their");
	if (waits)
		profile__add_note(prof, "%llu %s going on when tracing stopped: each counts up "
				  "to the stop, under its stacks where it began",
				  (unsigned long long)waits, waits == 1 ? "wait was" : "waits were");
	collector__note_begun(prof, stat_sum(c, LOCK_STAT_BEGUN), "futex wait was",
			      "futex waits were", "going on", "each counts from the start, on the "
			      "futex its system call names",
			      "its user stack is read at its return; one still going on at the "
			      "stop, whose user stack could not be read (another task's), is "
			      "shown as [user stack not seen]");
	if (c->kernel)
		profile__add_info(prof, "kernel_data_symbols", "%s",
				  kdata__count(c->kdata) ? "kallsyms" :
				  "none (the kernel lists no data symbols: CONFIG_KALLSYMS_ALL is "
				  "off; kernel locks named by owner or address)");
}

/* A spill's take: the counts into the run's profile (their leaves named by the locks as they
 * are now), then the per-lock table into c->taken, summed by lock, so that locks met later
 * have room (a long run's locks filled it, and every wait on a lock met after was in no
 * lock's numbers: lock_table_full). */
static int take_counts(void *m)
{
	struct lock_collector *c = m;
	int err = drain(c, c->env.prof, 0, false, true);

	if (err)
		return err;
	collector__take(&c->base, COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, locks),
			sizeof(struct lock_id), sizeof(struct lock_val), read_lock, &c->taken,
			"the locks' totals");
	merge_locks(&c->taken);
	return 0;
}

/* A per-stack table half used (a key brings two stacks to the stacks map of the same size), a
 * per-lock table three quarters used, or a table that refused something, is taken into the
 * run's profile and the stacks map emptied but for what the waits going on and newer counts
 * refer to, so that counting goes on: with -a the keys of the processes that ended stayed to
 * the end (collector__spill). Not in a run cut into windows: each window takes its counts. */
static void spill(struct lock_collector *c)
{
	struct spill_check due = {
		.keys = { stat_sum(c, LOCK_STAT_KEYS), stat_sum(c, LOCK_STAT_LOCK_KEYS) },
		.room = { (c->opts.max_stacks + 1) / 2, c->opts.max_locks },
		.refused = stat_sum(c, LOCK_STAT_COUNTS_FULL) + stat_sum(c, LOCK_STAT_STACKS_FULL) +
			   stat_sum(c, LOCK_STAT_PROCS_FULL) + stat_sum(c, LOCK_STAT_LOCKS_FULL),
	};

	collector__spill(&c->base, &c->env, &due, take_counts, c);
}

static void lock_tick(void *m, int64_t t_ns, bool second)
{
	struct lock_collector *c = m;

	if (c->started && !c->stopped)
		spill(c);
	collector__tick(m, t_ns, second);
}

/* A window: the counts taken out of the kernel, the drops counted since the last one. */
static int lock_window(void *m, struct profile *into)
{
	struct lock_collector *c = m;
	struct collector_reused reused;
	uint64_t now = util_mono_ns();
	int err = 0;

	if (!into->ntypes)
		err = set_types(into);
	collector__reused_take(&reused, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, LOCK_STAT_PIDS_REUSED),
			       &c->window_stats[LOCK_STAT_PIDS_REUSED]);
	collector__flip(&c->base);	/* the tables counted into until now, no writer left */
	err = err ?: drain(c, into, 0, false, true);
	err = err ?: collector__window_readout(&c->base, into);	/* execs since the last */
	collector__reused_say(&reused, into);
	/* the windows' copy holds about what the map does: every stack a window counted */
	collector__reclaim_full(&c->base, c->opts.max_stacks);
	window__end(into, bpf_map__fd(c->skel->maps.stats), stat_names, LOCK_STAT_NESTED,
		    LOCK_STAT__COUNT, c->env.all ? -1 : LOCK_STAT_NOTES_FULL, c->window_stats,
		    c->base.procs, NULL, c->env.start_ns, &c->window_ns, now);
	return err;
}

static void lock_close(void *m)
{
	struct lock_collector *c = m;

	if (!c)
		return;
	collector__close(&c->base, NULL);
	kdata__free(c->kdata);
	free(c->locks);
	free(c->taken.e);
	free(c);
}

_Static_assert(offsetof(struct lock_collector, base) == 0, "the shared hooks' collector");

const struct mode_ops lock_mode_ops = {
	.name = "lock",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = true,	/* -p of a kernel thread: its kernel lock contention */
	.open = lock_open,
	.close = lock_close,
	.attach = lock_attach,
	.attach_all = lock_attach_all,
	.tick = lock_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = lock_progress,
	.window = lock_window,
	.finalize = lock_finalize,
	.reaped = lock_reaped,
	.started = lock_started,
	.stop = lock_stop,
	.finish = lock_finish,
	.detach = collector__detach,
};
