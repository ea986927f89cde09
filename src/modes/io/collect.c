/* The io mode collector.
 *
 * The BPF programs (bpf/io.bpf.c) are attached at open to the block layer's tracepoints for
 * the whole run and count nothing until tracing starts (the first attach); each request is
 * recorded where it starts, in the context of the task that submitted it (a traced process,
 * any with -a, or a kernel thread: writeback flushers and journal threads write the dirty
 * data of every process), and counted at its completion. Everything stays in the kernel until
 * the end: per (process, operation, stacks, disk) counters become samples, per (disk,
 * operation) histograms the profile's groups, and the requests left in the in-flight table
 * those still in flight when tracing stopped. An exec is the one event that reads a process
 * early: its old program's addresses mean nothing in the new one's mappings.
 */
#include <errno.h>
#include <stddef.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/bpfutil.h"
#include "core/collector.h"
#include "core/minbtf.h"
#include "core/procs.h"
#include "core/unwind.h"
#include "core/window.h"
#include "core/stacks.h"
#include "modes/io/collect.h"
#include "output/render.h"
#include "profile/profile.h"
#include "util/util.h"
#include "io.skel.h"

#define MAX_TARGETS	8192	/* traced processes at once (a launched tree) */
#define MAX_COMMS	32768	/* processes named (-a sees every one) */
#define MAX_INFLIGHT	16384	/* requests in flight at once (a queue holds 64-2048) */
#define MAX_DEVSTATS	256	/* (disk, operation) pairs */
#define MAX_PROCS	32768	/* processes with totals (-a sees every one) */
#define MAX_LOCS	(1 + 2 * STACK_MAX_DEPTH)

static const char *const stat_names[IO_STAT__COUNT] = {
	[IO_STAT_REQUESTS] = "requests",
	[IO_STAT_MERGED] = "merged",
	[IO_STAT_KEYS] = "keys",
	[IO_STAT_PIDS_REUSED] = "pids_reused",
	[IO_STAT_INFLIGHT_FULL] = "inflight_table_full",
	[IO_STAT_INFLIGHT_BUSY] = "inflight_table_busy",
	[IO_STAT_STACKS_FULL] = "stack_table_full",
	[IO_STAT_COUNTS_FULL] = "count_table_full",
	[IO_STAT_PROCS_FULL] = "process_totals_full",
	[IO_STAT_DEVS_FULL] = "device_table_full",
	[IO_STAT_NOTES_FULL] = "process_notes_lost",
	[IO_STAT_UNSEEN] = "completion_unseen",
	[IO_STAT_FLUSH_WAITERS] = "flush_waiters_unread",
};

static const char *const op_names[IO_OP__COUNT] = {
	[IO_OP_READ] = "read",
	[IO_OP_WRITE] = "write",
	[IO_OP_FLUSH] = "flush",
	[IO_OP_DISCARD] = "discard",
	[IO_OP_WRITE_ZEROES] = "write_zeroes",
	[IO_OP_SECURE_ERASE] = "secure_erase",
	[IO_OP_OTHER] = "other",
};

/* A kernel thread that started requests (proc_info.priv), for the report's notes. */
struct io_kthread {
	const char *role;	/* "writeback flusher", ...; NULL: neither */
	uint64_t requests, bytes;
};

struct io_collector {
	struct collector base;		/* first: the shared hooks take the collector */
	struct session_env env;
	struct io_opts opts;
	const struct log_ctx *lc;
	struct io_bpf *skel;
	struct prof_rate rate;		/* the timeline: requests counted, at each second */
	uint64_t window_ns;		/* CLOCK_MONOTONIC at the start of the window (0: the run's) */
	uint64_t window_stats[IO_STAT__COUNT];	/* the counters then */
	bool has_io_start, has_io_done;
	bool started, stopped;
	bool spilling;			/* a take into the run's profile (spill), not a window */
	uint64_t stop_ns;		/* CLOCK_MONOTONIC when tracing stopped */
};

const char *io_op_name(uint32_t op)
{
	return op < IO_OP__COUNT ? op_names[op] : "other";
}

/* ---- disks ------------------------------------------------------------------------------ */

int io_device(const char *name, uint32_t *dev, char *disk, size_t len)
{
	char path[PATH_MAX + 64], real[PATH_MAX], *s;
	const char *base = name;
	unsigned int ma, mi;
	int n;

	if (!name || !*name)
		return -ENOENT;
	if (name[0] == '/') {
		if (!realpath(name, real))
			return -ENOENT;
		base = strrchr(real, '/') + 1;
	}
	if (!*base || strchr(base, '/') || base[0] == '.')
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", base);
	s = util_read_file(path, NULL);
	n = s ? sscanf(s, "%u:%u", &ma, &mi) : 0;
	free(s);
	if (n != 2)
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/block/%s/partition", base);
	if (!access(path, F_OK)) {
		/* a partition's sysfs directory is inside its disk's */
		snprintf(path, sizeof(path), "/sys/class/block/%s/..", base);
		if (disk && realpath(path, real))
			snprintf(disk, len, "%s", strrchr(real, '/') + 1);
		else if (disk)
			snprintf(disk, len, "?");
		return -EXDEV;
	}
	if (disk)
		snprintf(disk, len, "%s", base);
	/* a disk without a request queue (zram, device-mapper, md: bio-based) has no request
	 * for the block tracepoints to report: its I/O reaches the disks below it, if any */
	snprintf(path, sizeof(path), "/sys/class/block/%s/mq", base);
	if (access(path, F_OK))
		return -EOPNOTSUPP;
	*dev = IO_DEV(ma, mi);
	return 0;
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* The machine's disks, sorted (in directory order, loop7 came before loop0) */
void io_disks(char *buf, size_t len)
{
	struct dirent **e = NULL;
	int k = scandir("/sys/block", &e, not_dot, versionsort);
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < k; i++) {
		if (n < len)
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "", e[i]->d_name);
		free(e[i]);
	}
	free(e);
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* A disk's name by number when the kernel did not give it: /sys/dev/block/MAJ:MIN's target. */
static void disk_name(uint32_t dev, char *buf, size_t len)
{
	char path[64], target[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", IO_DEV_MAJOR(dev), IO_DEV_MINOR(dev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = 0;
		snprintf(buf, len, "%.*s", (int)len - 1,
			 strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
	} else {
		snprintf(buf, len, "%u:%u", IO_DEV_MAJOR(dev), IO_DEV_MINOR(dev));
	}
}

/* ---- open ------------------------------------------------------------------------------- */

static void io_close(void *m);

/* The sample types of an io profile: the run's, or a window's. */
static int set_types(struct profile *prof)
{
	int err = profile__add_type(prof, "requests", "count");

	err = err ?: profile__add_type(prof, "io_bytes", "bytes");
	err = err ?: profile__add_type(prof, "latency", "nanoseconds");
	err = err ?: profile__add_type(prof, "queue", "nanoseconds");
	/* a process's row is its exact totals (the kernel's `procs`), not what the per-stack
	 * table kept */
	err = err ?: profile__set_type_proc_stat(prof, "requests", "requests");
	err = err ?: profile__set_type_proc_stat(prof, "io_bytes", "io_bytes");
	err = err ?: profile__set_type_proc_stat(prof, "latency", "latency_ns");
	err = err ?: profile__set_type_proc_stat(prof, "queue", "queue_ns");
	return err ?: profile__set_default_type(prof, "latency");
}

/* What refers to stacks when the stacks map is emptied (collector__reclaim): the requests in
 * flight (they count at their completion), then the counts made since the last take. */
static void set_stacks(struct io_collector *c)
{
	struct stack_ref_map refs[3] = {
		{ .fd = bpf_map__fd(c->skel->maps.inflight), .key_size = sizeof(__u64),
		  .val_size = sizeof(struct io_req), .n = 2,
		  .at = { STACK_REF_VAL(__u64, struct io_req, key.stack.ustack),
			  STACK_REF_VAL(__u64, struct io_req, key.stack.kstack) } },
		/* both generations (bpf/lib/take.bpf.h) */
		stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_0), sizeof(struct io_key),
				      sizeof(struct io_val)),
		stack_ref_map__counts(bpf_map__fd(c->skel->maps.counts_1), sizeof(struct io_key),
				      sizeof(struct io_val)),
	};

	collector__set_stacks(&c->base, bpf_map__fd(c->skel->maps.stacks), c->base.st, refs, 3);
}

static void io_readout(void *m, pid_t pid);

static void *io_open(const struct session_env *env, void *opts)
{
	struct io_collector *c = calloc(1, sizeof(*c));
	const struct io_opts *o = opts;
	struct io_bpf *sk;
	int err;

	if (!c)
		return NULL;
	c->env = *env;
	c->opts = *o;
	c->lc = env->lc;
	if (collector__init(&c->base, env, true))
		goto fail;
	/* a PID traced again as another process: the earlier one's counts first (core/procs.h) */
	proc_table__set_readout(c->base.procs, io_readout, c);
	/* the kernel's own I/O accounting tracepoints (6.5+): where a request starts */
	c->has_io_start = !o->legacy_tracepoints &&
			  bpfutil__has_tracepoint("block_io_start");
	c->has_io_done = !o->legacy_tracepoints &&
			 bpfutil__has_tracepoint("block_io_done");

	sk = c->skel = MINBTF_OPEN(c->lc, io_bpf);	/* CO-RE: core/minbtf.h */
	if (collector__opened(&c->base, sk))
		goto fail;
	sk->rodata->trace_all = env->all;
	sk->rodata->with_kthreads = !o->no_kthreads;
	sk->rodata->has_io_start = c->has_io_start;
	sk->rodata->self_tgid = getpid();
	sk->rodata->unwind_mode = env->unwind != UNWIND_FP;
	unwind__size_maps(sk->obj, env->unwind, 0, 0);
	sk->rodata->ndevs = o->ndevs;
	for (uint32_t i = 0; i < o->ndevs && i < IO_MAX_DEVS; i++)
		sk->rodata->devs[i] = o->devs[i];
	bpf_map__set_max_entries(sk->maps.targets, MAX_TARGETS);
	bpf_map__set_max_entries(sk->maps.comms, MAX_COMMS);
	bpf_map__set_max_entries(sk->maps.inflight, MAX_INFLIGHT);
	bpf_map__set_max_entries(sk->maps.devstats, MAX_DEVSTATS);
	COLLECTOR_SIZE(sk->maps, procs, o->max_procs ? o->max_procs : MAX_PROCS);
	COLLECTOR_SIZE(sk->maps, counts, o->max_stacks);
	bpf_map__set_max_entries(sk->maps.stacks, o->max_stacks);
	collector__size_notes(sk->maps.notes, env->all);
	bpf_program__set_autoload(sk->progs.io_start, c->has_io_start);
	bpf_program__set_autoload(sk->progs.io_insert, !c->has_io_start);
	bpf_program__set_autoload(sk->progs.io_complete, !o->no_completions);
	bpf_program__set_autoload(sk->progs.io_done, c->has_io_done && !o->no_completions);
	bpf_program__set_autoload(sk->progs.io_merge, bpfutil__has_tracepoint("block_rq_merge"));
	/* run at the end, over `inflight` (io_finish) */
	bpf_program__set_autoattach(sk->progs.io_sweep, false);
	if (collector__load(&c->base, env->unwind, true) ||
	    collector__notes(&c->base, sk->maps.notes, env->all))
		goto fail;
	set_stacks(c);
	/* attached for the whole run now (a machine without them fails before anything runs);
	 * they count from the first attach */
	err = io_bpf__attach(sk);
	if (err) {
		pr_err(c->lc, "cannot attach to the block layer's tracepoints: %s", strerror(-err));
		goto fail;
	}
	pr_info(c->lc, "tracepoints: %s, block_rq_issue, block_rq_complete%s",
		c->has_io_start ? "block_io_start" : "block_rq_insert",
		c->has_io_done ? ", block_io_done" : "");

	err = set_types(env->prof);
	if (err) {
		pr_err(c->lc, "cannot set up the profile: %s", strerror(-err));
		goto fail;
	}
	return c;
fail:
	io_close(c);
	return NULL;
}

/* Requests count from here on. */
static void start(struct io_collector *c)
{
	if (c->started)
		return;
	c->skel->bss->t0_ns = util_mono_ns();
	c->skel->bss->started = true;
	c->started = true;
	c->window_ns = util_mono_ns();	/* the first window starts with counting */
}

/* ---- attach ----------------------------------------------------------------------------- */

static int io_attach(void *m, pid_t pid, enum mode_attach how, int *status)
{
	struct io_collector *c = m;
	int err;

	*status = -1;
	err = collector__target(&c->base, pid, bpf_map__fd(c->skel->maps.targets), MAX_TARGETS);
	if (err)
		return err;
	(void)how;
	start(c);
	return 0;
}

static int io_attach_all(void *m)
{
	start(m);
	return 0;
}

/* ---- reading out ------------------------------------------------------------------------ */

struct count_entry {
	struct io_key k;
	struct io_val v;
};

static int count_cmp(const void *a, const void *b)
{
	const struct io_key *x = &((const struct count_entry *)a)->k;
	const struct io_key *y = &((const struct count_entry *)b)->k;

	if (x->stack.tgid != y->stack.tgid)
		return x->stack.tgid < y->stack.tgid ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->stack.aux != y->stack.aux)
		return x->stack.aux < y->stack.aux ? -1 : 1;
	if (x->stack.kstack != y->stack.kstack)
		return x->stack.kstack < y->stack.kstack ? -1 : 1;
	return x->stack.ustack < y->stack.ustack ? -1 : x->stack.ustack > y->stack.ustack;
}

/* The process as the report names it (the kernel's name when it is gone); its mappings,
 * fresh if it still runs. */
static struct proc_info *report_proc(struct io_collector *c, pid_t tgid, bool exec)
{
	struct io_comm cc = { .comm = "" };
	__u32 key = tgid;
	struct proc_info *p;

	bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &key, &cc);
	p = collector__report_proc(&c->base, tgid, exec, cc.comm, IO_COMM_LEN, cc.kthread);
	if (p && cc.kthread && !p->priv)
		p->priv = calloc(1, sizeof(struct io_kthread));
	return p;
}

/* What a kernel thread's stack says it does. */
static const char *kthread_role(const struct profile *prof, const uint32_t *locs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct prof_location *l = &prof->locations[locs[i]];

		for (uint32_t j = 0; j < l->nlines; j++) {
			const char *f = prof->functions[l->lines[j].function].name;

			if (!strcmp(f, "wb_workfn") || !strcmp(f, "wb_writeback"))
				return "writeback flusher";
			if (!strcmp(f, "kjournald2") ||
			    !strcmp(f, "jbd2_journal_commit_transaction"))
				return "journal thread (jbd2)";
		}
	}
	return NULL;
}

/* The leaf frame of a request's stack: its disk, operation and flags ("vda write (sync)"). */
/* Whether requests of op move data: a discard, a secure erase or a write of zeroes names a
 * range (its size) but transfers nothing: not in io_bytes (a dd over an old file counted its
 * truncation's discards: 125 MiB for 62.5 MiB written), in discard_bytes. */
static bool moves_data(uint32_t op)
{
	return op != IO_OP_DISCARD && op != IO_OP_SECURE_ERASE && op != IO_OP_WRITE_ZEROES;
}

static void leaf_name(uint32_t aux, const char *disk, char *buf, size_t len)
{
	static const char *const flags[] = { "sync", "meta", "fua", "preflush", "rahead" };
	uint32_t f = IO_AUX_FLAGS(aux);
	size_t n;

	n = snprintf(buf, len, "%s %s", disk, io_op_name(IO_AUX_OP(aux)));
	for (uint32_t i = 0, first = 1; i < sizeof(flags) / sizeof(flags[0]) && n < len; i++) {
		if (!(f & (1u << i)))
			continue;
		n += snprintf(buf + n, len - n, "%s%s", first ? " (" : "+", flags[i]);
		first = 0;
	}
	if (f && n < len)
		snprintf(buf + n, len - n, ")");
}

/* ---- processes -------------------------------------------------------------------------- */

/* One process's totals into its row: every request it started, whatever the per-stack table
 * kept (a full one cost stacks, and made the rows and totals short too). */
static int add_proc(struct io_collector *c, struct profile *prof, __u32 tgid,
		    const struct io_proc *v, bool exec, bool take)
{
	struct proc_info *p = report_proc(c, tgid, exec || take);
	struct prof_process *pp;
	struct io_kthread *kt;
	int err;

	if (!p)
		return -ENOMEM;
	pp = profile__add_process(prof, p->pid, p->comm[0] ? p->comm : NULL, p->cmdline);
	if (!pp)
		return -errno;
	err = prof_process__add_stat(prof, pp, "requests", v->requests);
	err = err ?: prof_process__add_stat(prof, pp, "io_bytes", v->bytes);
	if (v->discard_bytes)
		err = err ?: prof_process__add_stat(prof, pp, "discard_bytes", v->discard_bytes);
	err = err ?: prof_process__add_stat(prof, pp, "latency_ns", v->latency_ns);
	err = err ?: prof_process__add_stat(prof, pp, "queue_ns", v->queue_ns);
	/* a window's kernel threads are not noted */
	kt = take && !c->spilling ? NULL : p->priv;
	if (kt) {
		kt->requests += v->requests;
		kt->bytes += v->bytes;
	}
	return err;
}

struct procs_read {
	struct io_collector *c;
	struct profile *prof;
	bool exec, take;
};

static int on_proc(const void *k, const void *v, void *ctx)
{
	const struct procs_read *r = ctx;

	return add_proc(r->c, r->prof, *(const __u32 *)k, v, r->exec, r->take);
}

/* The processes' totals into prof (collector__read_procs: `only`'s at an exec, every one's
 * taken or read). */
static int drain_procs(struct io_collector *c, struct profile *prof, pid_t only, bool take)
{
	struct procs_read r = { .c = c, .prof = prof, .exec = only != 0, .take = take && !only };

	return COLLECTOR_READ_PROCS(&c->base, c->skel->maps, procs, sizeof(struct io_proc), only,
				    take, on_proc, &r);
}

/* Move the counts of process `only` (0: every process) into prof: the request's leaf frame,
 * its kernel frames where it started, then its user frames; `remove`: delete them from the
 * kernel (an exec: the same process counts on under its new program); `take`: every
 * process's, taken out of the kernel at once (a window). */
static int drain(struct io_collector *c, struct profile *prof, pid_t only, bool remove,
		 bool take)
{
	/* a take's: the generation its flip took away from the programs (collector__flip) */
	int fd = take ? COLLECTOR_TAKEN_FD(&c->base, c->skel->maps, counts)
		      : COLLECTOR_FD(&c->base, c->skel->maps, counts);
	int stacks_fd = bpf_map__fd(c->skel->maps.stacks);
	struct count_entry *ents;
	size_t nents;
	uint32_t locs[MAX_LOCS];
	char leaf[96], disk[IO_DISK_LEN];
	uint32_t last_dev = UINT32_MAX;
	int err;

	err = stack_records__read(fd, sizeof(struct io_key), sizeof(struct io_val),
				  sizeof(struct count_entry), offsetof(struct count_entry, v), only,
				  take, (void **)&ents, &nents);
	if (!take)
		err = err ?: stack_table__read(c->base.st, stacks_fd);
	/* a window fetches only the stacks it counted; the table is read whole at the end */
	if (take)
		stack_table__fetch_records(c->base.st, stacks_fd, ents, nents, sizeof(*ents));
	if (err)
		pr_warn(c->lc, "reading the kernel's request counts failed: %s; the report may be "
			"incomplete", strerror(-err));
	if (nents)
		qsort(ents, nents, sizeof(*ents), count_cmp);
	for (size_t i = 0; i < nents; i++) {
		const struct count_entry *e = &ents[i];
		bool data = moves_data(IO_AUX_OP(e->k.stack.aux));
		int64_t vals[4] = { e->v.requests, data ? e->v.bytes : 0, e->v.latency_ns,
				    e->v.queue_ns };
		struct proc_info *p = report_proc(c, e->k.stack.tgid, remove || take);

		/* a window's processes keep their snapshots; one seen for the first time gets one */
		if (p && take && !p->sp)
			proc_table__snapshot(c->base.procs, p);
		struct io_kthread *kt;
		uint32_t n = 0;

		if (!p) {
			err = -ENOMEM;
			break;
		}
		if (e->k.dev != last_dev)
			disk_name(e->k.dev, disk, sizeof(disk));
		last_dev = e->k.dev;
		leaf_name(e->k.stack.aux, disk, leaf, sizeof(leaf));
		locs[n++] = stacks__named_loc(prof, leaf);
		/* the programs run in the submitting task: the machinery's frames lead its stack */
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
		kt = take && !c->spilling ? NULL : p->priv;
		if (kt && !kt->role)
			kt->role = kthread_role(prof, locs, n);
		if (remove)
			bpf_map_delete_elem(fd, &e->k);
	}
	if (err)
		pr_warn(c->lc, "building the profile failed: %s", strerror(-err));
	free(ents);
	return err ?: drain_procs(c, prof, only, take);
}

/* ---- disks and operations --------------------------------------------------------------- */

struct dev_entry {
	struct io_dev_key k;
	struct io_dev_val *v;		/* NULL: only requests in flight */
	char disk[IO_DISK_LEN];
	uint64_t inflight, oldest_ns;
};

struct dev_read {
	struct io_collector *c;
	struct dev_entry *e;
	size_t n, cap;
};

static struct dev_entry *dev_entry(struct dev_read *r, uint32_t dev, uint32_t op)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->e[i].k.dev == dev && r->e[i].k.op == op)
			return &r->e[i];
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct dev_entry *e = realloc(r->e, cap * sizeof(*e));

		if (!e)
			return NULL;
		r->e = e;
		r->cap = cap;
	}
	r->e[r->n] = (struct dev_entry){ .k = { .dev = dev, .op = op } };
	disk_name(dev, r->e[r->n].disk, sizeof(r->e[r->n].disk));
	return &r->e[r->n++];
}

static int read_dev(const void *k, const void *v, void *ctx)
{
	const struct io_dev_key *key = k;
	struct dev_entry *e = dev_entry(ctx, key->dev, key->op);

	if (!e)
		return -ENOMEM;
	e->v = malloc(sizeof(*e->v));
	if (!e->v)
		return -ENOMEM;
	memcpy(e->v, v, sizeof(*e->v));
	if (e->v->disk[0])
		snprintf(e->disk, sizeof(e->disk), "%.*s", IO_DISK_LEN - 1, e->v->disk);
	return 0;
}

static int read_inflight(const void *k, const void *v, void *ctx)
{
	struct dev_read *r = ctx;
	const struct io_req *q = v;
	struct dev_entry *e;
	uint64_t age;

	/* counted, its entry left behind (see finish in io.bpf.c), or ended unseen */
	if (q->done == IO_REQ_ENDED)
		return 0;
	e = dev_entry(r, q->key.dev, IO_AUX_OP(q->key.stack.aux));
	if (!e)
		return -ENOMEM;
	e->inflight++;
	age = r->c->stop_ns > q->start_ns ? r->c->stop_ns - q->start_ns : 0;
	if (age > e->oldest_ns)
		e->oldest_ns = age;
	return 0;
}

static int dev_cmp(const void *a, const void *b)
{
	const struct dev_entry *x = a, *y = b;
	int d = strcmp(x->disk, y->disk);

	if (d)
		return d;
	return x->k.op < y->k.op ? -1 : x->k.op > y->k.op;
}

/* A quantile of a latency histogram, at most the largest latency seen (the interpolation in
 * the last slot may overshoot it). */
static int64_t quantile(const __u64 *counts, double q, uint64_t max)
{
	struct prof_hist h = { .sub = IO_LAT_SUB, .counts = (uint64_t *)(uintptr_t)counts,
			       .n = IO_LAT_SLOTS };
	double v = prof_hist__quantile(&h, q);

	return v > (double)max ? (int64_t)max : (int64_t)(v + 0.5);
}

static int add_group(struct profile *prof, const struct dev_entry *e)
{
	static const struct io_dev_val none;
	const struct io_dev_val *v = e->v ? e->v : &none;
	uint64_t n = v->requests;
	struct prof_group *g = profile__add_group(prof);
	int err;

	if (!g)
		return -errno;
	err = prof_group__add_label(prof, g, "device", e->disk);
	err = err ?: prof_group__add_label(prof, g, "op", io_op_name(e->k.op));
#define STAT(name, label, unit, val) \
	err = err ?: prof_group__add_stat(prof, g, name, label, unit, (int64_t)(val))
	STAT("requests", "REQUESTS", "count", n);
	STAT("bytes", "BYTES", "bytes", v->bytes);
	STAT("latency_avg_ns", "AVG", "nanoseconds", n ? v->latency_ns / n : 0);
	STAT("latency_p50_ns", "P50", "nanoseconds", quantile(v->latency, 0.50, v->max_latency_ns));
	STAT("latency_p90_ns", "P90", "nanoseconds", quantile(v->latency, 0.90, v->max_latency_ns));
	STAT("latency_p99_ns", "P99", "nanoseconds", quantile(v->latency, 0.99, v->max_latency_ns));
	STAT("latency_max_ns", "MAX", "nanoseconds", v->max_latency_ns);
	STAT("queue_avg_ns", "QUEUE", "nanoseconds", n ? v->queue_ns / n : 0);
	STAT("service_avg_ns", "SERVICE", "nanoseconds", n ? v->service_ns / n : 0);
	STAT("errors", "ERRORS", "count", v->errors);
	STAT("in_flight", "IN FLIGHT", "count", e->inflight);
	STAT("in_flight_oldest_ns", NULL, "nanoseconds", e->oldest_ns);
	STAT("latency_ns", NULL, "nanoseconds", v->latency_ns);
	STAT("queue_ns", NULL, "nanoseconds", v->queue_ns);
	STAT("service_ns", NULL, "nanoseconds", v->service_ns);
#undef STAT
	err = err ?: prof_group__add_hist(prof, g, "latency", "nanoseconds", IO_LAT_SUB,
					  (const uint64_t *)v->latency, IO_LAT_SLOTS);
	err = err ?: prof_group__add_hist(prof, g, "queue", "nanoseconds", IO_LAT_SUB,
					  (const uint64_t *)v->queue, IO_LAT_SLOTS);
	err = err ?: prof_group__add_hist(prof, g, "service", "nanoseconds", IO_LAT_SUB,
					  (const uint64_t *)v->service, IO_LAT_SLOTS);
	err = err ?: prof_group__add_hist(prof, g, "size", "bytes", 1, (const uint64_t *)v->size,
					  IO_SIZE_SLOTS);
	return err;
}

/* The (disk, operation) groups, with what was still in flight; the disks as a run fact.
 * Returns the requests in flight. */
static uint64_t add_groups(struct io_collector *c)
{
	struct profile *prof = c->env.prof;
	struct dev_read r = { .c = c };
	uint64_t inflight = 0, oldest = 0;
	char devs[512], buf[32];
	size_t len = 0;
	int err;

	err = bpfutil__map_for_each(bpf_map__fd(c->skel->maps.devstats), sizeof(struct io_dev_key),
				    sizeof(struct io_dev_val), read_dev, &r);
	err = err ?: bpfutil__map_for_each(bpf_map__fd(c->skel->maps.inflight), sizeof(__u64),
					   sizeof(struct io_req), read_inflight, &r);
	if (err)
		pr_warn(c->lc, "reading the kernel's disk statistics failed: %s; the report may be "
			"incomplete", strerror(-err));
	qsort(r.e, r.n, sizeof(*r.e), dev_cmp);
	devs[0] = 0;
	for (size_t i = 0; i < r.n; i++) {
		const struct dev_entry *e = &r.e[i];

		if (!err)
			err = add_group(prof, e);
		inflight += e->inflight;
		oldest = e->oldest_ns > oldest ? e->oldest_ns : oldest;
		/* each disk once (its operations are next to each other) */
		if ((!i || strcmp(r.e[i - 1].disk, e->disk)) && len < sizeof(devs))
			len += snprintf(devs + len, sizeof(devs) - len, "%s%s (%u:%u)",
					len ? ", " : "", e->disk, IO_DEV_MAJOR(e->k.dev),
					IO_DEV_MINOR(e->k.dev));
		free(e->v);
	}
	if (err)
		pr_warn(c->lc, "building the disk summary failed: %s", strerror(-err));
	free(r.e);
	profile__add_info(prof, "devices", "%s", devs[0] ? devs : "none");
	if (inflight)
		profile__add_note(prof, "%llu %s still in flight when tracing stopped (the "
				  "oldest for %s): %s in no number but in_flight",
				  (unsigned long long)inflight,
				  inflight == 1 ? "request was" : "requests were",
				  render__duration(oldest, buf, sizeof(buf)),
				  inflight == 1 ? "it is" : "they are");
	return inflight;
}

/* ---- the run ---------------------------------------------------------------------------- */

static uint64_t stat_sum(struct io_collector *c, enum io_stat s)
{
	return bpfutil__percpu_sum(bpf_map__fd(c->skel->maps.stats), s);
}

static int take_counts(void *m)
{
	struct io_collector *c = m;
	int err;

	c->spilling = true;
	err = drain(c, c->env.prof, 0, false, true);
	c->spilling = false;
	return err;
}

/* A per-stack table half used (a key brings two stacks to the stacks map of the same size), or
 * a table that refused something, is taken into the run's profile and the stacks map emptied
 * but for what requests in flight and newer counts refer to, so that counting goes on: with -a
 * the keys of the processes that ended stayed to the end (collector__spill). Not in a run cut
 * into windows: each window takes its counts. */
static void spill(struct io_collector *c)
{
	struct spill_check due = {
		.keys = { stat_sum(c, IO_STAT_KEYS) },
		.room = { (c->opts.max_stacks + 1) / 2 },
		.refused = stat_sum(c, IO_STAT_COUNTS_FULL) + stat_sum(c, IO_STAT_STACKS_FULL) +
			   stat_sum(c, IO_STAT_PROCS_FULL),
	};

	collector__spill(&c->base, &c->env, &due, take_counts, c);
}

static void io_tick(void *m, int64_t t_ns, bool second)
{
	struct io_collector *c = m;

	if (c->started && !c->stopped)
		spill(c);

	/* -a: each process that turned up, while its mappings are there: every tick, cheap
	 * when there are none */
	collector__consume_notes(&c->base);
	if (second) {
		proc_table__snapshot_attached(c->base.procs);
		/* the timeline: requests completed per second (pid 0: every request counted);
		 * not in windows: a point a second for ever in a profile nothing writes */
		if (!c->env.windows)
			profile__add_rate_point(c->env.prof, &c->rate, 0, "io_requests",
						"requests/s", t_ns,
						stat_sum(c, IO_STAT_REQUESTS), 1);
	}
	unwinder__tick(c->base.unwinder);
}

static void io_progress(void *m, char *buf, size_t len)
{
	struct io_collector *c = m;
	uint64_t drops = bpfutil__percpu_sum_range(bpf_map__fd(c->skel->maps.stats),
						   IO_STAT_FIRST_DROP, IO_STAT__COUNT);

	snprintf(buf, len, "%llu requests  drops %llu",
		 (unsigned long long)stat_sum(c, IO_STAT_REQUESTS), (unsigned long long)drops);
}

/* proc_table__set_readout: an earlier process's counts at pid, read out as an exec's are */
static void io_readout(void *m, pid_t pid)
{
	struct io_collector *c = m;

	drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

static void io_finalize(void *m, pid_t pid, bool exec)
{
	struct io_collector *c = m;

	if (collector__hold(&c->base, pid) && exec)
		drain(c, collector__readout(&c->base, &c->env), pid, true, false);
}

/* Not at its exit stop (retire): requests its exit path starts are its own too. */
static void io_reaped(void *m, pid_t pid)
{
	struct io_collector *c = m;

	proc_table__untarget(c->base.procs, pid, bpf_map__fd(c->skel->maps.targets));
}

static void io_started(void *m, uint64_t start_ns)
{
	struct io_collector *c = m;

	c->env.start_ns = start_ns;
}

static void io_stop(void *m)
{
	struct io_collector *c = m;

	if (c->stopped)
		return;
	/* every program returns at once from now on: what is in flight stays as it is, and the
	 * slow detach comes after the report */
	c->skel->bss->stopped = true;
	c->stopped = true;
	c->stop_ns = util_mono_ns();
	/* the timeline's last partial second, unless too short to say much (under a tick) */
	if (!c->env.windows && c->stop_ns >= c->env.start_ns + c->rate.last_t_ns + 100000000ull)
		profile__add_rate_point(c->env.prof, &c->rate, 0, "io_requests", "requests/s",
					(int64_t)(c->stop_ns - c->env.start_ns),
					stat_sum(c, IO_STAT_REQUESTS), 1);
	collector__consume_notes(&c->base);
}

/* Which kernel threads started requests, and what they are. */
static void kthread_notes(struct io_collector *c)
{
	struct profile *prof = c->env.prof;
	uint32_t n = 0;
	char b[32];

	for (uint32_t i = 0; i < proc_table__count(c->base.procs); i++) {
		const struct proc_info *p = proc_table__at(c->base.procs, i);
		const struct io_kthread *kt = p->priv;

		struct prof_process *pp = profile__find_process(prof, p->pid);
		char note[64];

		if (!kt || !kt->requests)
			continue;
		n++;
		snprintf(note, sizeof(note), "kernel thread%s%s", kt->role ? ": " : "",
			 kt->role ? kt->role : "");
		if (pp)
			prof_process__set_note(prof, pp, note);
		profile__add_note(prof, "%s (pid %d), a %s, started %llu request%s (%s): requests "
				  "of kernel threads are theirs, whoever's data they carry",
				  p->comm[0] ? p->comm : "?", p->pid,
				  kt->role ? kt->role : "kernel thread",
				  (unsigned long long)kt->requests, kt->requests == 1 ? "" : "s",
				  render__bytes(kt->bytes, b, sizeof(b)));
	}
	if (n && !c->env.all)
		profile__add_note(prof, "kernel threads' requests are counted with the traced "
				  "processes': writeback flushers and journal threads write their "
				  "dirty data too (--no-kthreads leaves them out)");
}

static void io_finish(void *m)
{
	struct io_collector *c = m;
	struct profile *prof = c->env.prof;
	uint64_t inflight, v[IO_STAT__COUNT];
	int err;

	drain(c, c->env.prof, 0, false, false);
	/* the records of requests that ended unseen are marked done (completion_unseen), so
	 * that what is left is what was in flight */
	err = bpfutil__run_task_iter(c->skel->progs.io_sweep, getpid());
	if (err)
		pr_warn(c->lc, "cannot tell the requests in flight from those whose completion went "
			"unseen: %s; in_flight may count both", strerror(-err));
	inflight = add_groups(c);
	collector__note_reused(prof, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, IO_STAT_PIDS_REUSED));
	unwinder__add_drops(c->base.unwinder, prof);
	collector__add_drops(prof, bpf_map__fd(c->skel->maps.stats), stat_names,
			     IO_STAT_FIRST_DROP, IO_STAT__COUNT,
			     c->env.all ? -1 : IO_STAT_NOTES_FULL, v);
	for (int s = IO_STAT_FIRST_DROP; s < IO_STAT__COUNT; s++) {
		uint64_t n = v[s];

		if (!n)
			continue;
		if (s == IO_STAT_INFLIGHT_FULL)
			profile__add_note(prof, "%llu %s not measured: more than %d were in "
					  "flight at once", (unsigned long long)n,
					  n == 1 ? "request was" : "requests were", MAX_INFLIGHT);
		else if (s == IO_STAT_INFLIGHT_BUSY)
			profile__add_note(prof, "%llu %s not measured: %s in an interrupt while "
					  "the table of requests in flight was being updated on the "
					  "same CPU", (unsigned long long)n,
					  n == 1 ? "request was" : "requests were",
					  n == 1 ? "it started" : "they started");
		else if (s == IO_STAT_STACKS_FULL)
			profile__add_note(prof, "%llu %s not kept: the stack table (--max-stacks %u) "
					  "was full, so %s requests count without %s; raise "
					  "--max-stacks", (unsigned long long)n,
					  n == 1 ? "stack was" : "stacks were", c->opts.max_stacks,
					  n == 1 ? "its" : "their", n == 1 ? "it" : "them");
		else if (s == IO_STAT_COUNTS_FULL)
			profile__add_note(prof, "%llu %s in the disks' and the processes' numbers "
					  "but not in any stack's: the table of (process, stacks) was "
					  "full (--max-stacks %u); raise --max-stacks",
					  (unsigned long long)n, n == 1 ? "request is" : "requests are",
					  c->opts.max_stacks);
		else if (s == IO_STAT_PROCS_FULL)
			collector__note_totals_full(prof, n, "request", "requests",
						    c->opts.max_procs ? c->opts.max_procs
								      : MAX_PROCS);
		else if (s == IO_STAT_DEVS_FULL)
			profile__add_note(prof, "%llu %s in the stacks' numbers but not in the "
					  "disks' histograms: more than %d (disk, operation) pairs",
					  (unsigned long long)n, n == 1 ? "request is" : "requests are",
					  MAX_DEVSTATS);
		else if (s == IO_STAT_NOTES_FULL)
			collector__note_notes_lost(prof, n);
		else if (s == IO_STAT_FLUSH_WAITERS)
			profile__add_note(prof, "%llu cache %s not counted: the first %d "
					  "requests waiting for each were not traced, and the ones "
					  "after them were not looked at", (unsigned long long)n,
					  n == 1 ? "flush was" : "flushes were", IO_FLUSH_WAITERS);
		else
			profile__add_note(prof, "%llu %s without the kernel reporting %s completion "
					  "(neither block_rq_complete nor block_io_done reached BPF: "
					  "some kernels deliver none while certain tasks run): %s in "
					  "no number", (unsigned long long)n,
					  n == 1 ? "request ended" : "requests ended",
					  n == 1 ? "its" : "their", n == 1 ? "it is" : "they are");
	}
	kthread_notes(c);
	profile__add_note(prof, "latency: from a request's start (where the kernel's own I/O "
			  "accounting starts, in the task that submitted it) to its completion; "
			  "queue: start to issue to the driver; service: issue to completion. "
			  "Percentiles are read from histograms with %u buckets per power of two",
			  IO_LAT_SUB);
	profile__add_info(prof, "tracepoints", "%s, block_rq_issue, block_rq_complete%s",
			  c->has_io_start ? "block_io_start" : "block_rq_insert",
			  c->has_io_done ? ", block_io_done" : "");
	profile__add_info(prof, "requests", "%llu",
			  (unsigned long long)stat_sum(c, IO_STAT_REQUESTS));
	profile__add_info(prof, "in_flight", "%llu", (unsigned long long)inflight);
	profile__add_info(prof, "merged", "%llu", (unsigned long long)stat_sum(c, IO_STAT_MERGED));
}

/* A window: the counts taken out of the kernel, the drops counted since the last one. */
static int io_window(void *m, struct profile *into)
{
	struct io_collector *c = m;
	struct collector_reused reused;
	uint64_t now = util_mono_ns();
	int err = 0;

	if (!into->ntypes)
		err = set_types(into);
	collector__reused_take(&reused, bpf_map__fd(c->skel->maps.reused),
			       stat_sum(c, IO_STAT_PIDS_REUSED), &c->window_stats[IO_STAT_PIDS_REUSED]);
	collector__flip(&c->base);	/* the tables counted into until now, no writer left */
	err = err ?: drain(c, into, 0, false, true);
	err = err ?: collector__window_readout(&c->base, into);	/* execs since the last */
	collector__reused_say(&reused, into);
	/* the windows' copy holds about what the map does: every stack a window counted */
	collector__reclaim_full(&c->base, c->opts.max_stacks);
	window__end(into, bpf_map__fd(c->skel->maps.stats), stat_names, IO_STAT_FIRST_DROP,
		    IO_STAT__COUNT, c->env.all ? -1 : IO_STAT_NOTES_FULL, c->window_stats,
		    c->base.procs, free, c->env.start_ns, &c->window_ns, now);
	return err;
}

static void io_close(void *m)
{
	struct io_collector *c = m;

	if (!c)
		return;
	collector__close(&c->base, free);
	free(c);
}

_Static_assert(offsetof(struct io_collector, base) == 0, "the shared hooks' collector");

const struct mode_ops io_mode_ops = {
	.name = "io",
	.vfork_children = true,	/* events by tgid: a vfork child's are its own */
	.kthreads = true,	/* -p of a flusher or a journal thread: its requests */
	.open = io_open,
	.close = io_close,
	.attach = io_attach,
	.attach_all = io_attach_all,
	.tick = io_tick,
	.wake_fd = collector__wake_fd,
	.wake = collector__wake,
	.progress = io_progress,
	.window = io_window,
	.finalize = io_finalize,
	.reaped = io_reaped,
	.started = io_started,
	.stop = io_stop,
	.finish = io_finish,
	.detach = collector__detach,
};
