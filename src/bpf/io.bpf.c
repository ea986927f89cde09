// SPDX-License-Identifier: GPL-2.0
/* ebprof io: kernel side. Block requests from their start to their completion, on the block
 * layer's BTF tracepoints (tp_btf: the kernel's own struct request, fields read through BTF):
 *
 *   block_io_start    the request starts (the kernel's own I/O accounting starts here, in the
 *                     context of the task that submitted it): who, which stacks, which disk
 *   block_rq_insert   kernels without block_io_start: the request enters the queue
 *   block_rq_issue    it goes to the driver: the end of its queue time
 *   block_rq_complete it is done (the last part of it): latency, queue and service time
 *   block_io_done     the kernel's accounting ends: a request still open here is done too
 *
 * A write with a preflush or FUA on a disk with a volatile write cache is run by the flush
 * machinery as a sequence: a cache flush before it, its data, a flush after it (FUA the disk
 * lacks). The flushes are a request of the machinery's own (REQ_OP_FLUSH, one per queue,
 * never started: first seen at its issue), shared by every request waiting for it; the
 * request's data part completes (RQF_FLUSH_SEQ still set) before its last flush, and the
 * request completes again when the sequence ends. As /sys/block/DEV/stat counts them: the
 * request once, at its end (a write of no data with a preflush, an fsync's, is a write of 0
 * bytes), and each flush sent once, under the first traced request it serves.
 *
 * Per request, one entry in `inflight` from start to completion; at completion its numbers
 * are added to the (process, operation, stacks, disk) counters, to its process's totals (exact
 * when the per-stack table is full) and to the (disk, operation) histograms, and the entry
 * goes. Nothing is sent per request; userspace reads the tables
 * at the end, after io_sweep has told the requests whose completion went unseen from those
 * still in flight when tracing stopped.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "abi/io.h"
#include "bpf/lib/stack.bpf.h"
#include "bpf/lib/pidreuse.bpf.h"
#include "bpf/lib/take.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PF_KTHREAD	0x00200000

/* -a: every process and kernel thread (ebprof itself excepted) */
const volatile bool trace_all = false;
/* with targets: kernel threads' requests too (writeback flushers, journal threads) */
const volatile bool with_kthreads = true;
/* the kernel has block_io_start: requests are recorded there only */
const volatile bool has_io_start = false;
const volatile __u32 self_tgid = 0;
/* --device: only these disks (IO_DEV), when ndevs > 0 */
const volatile __u32 ndevs = 0;
const volatile __u32 devs[IO_MAX_DEVS] = {};

/* Set by the collector through the mmapped .bss: tracing has started (CLOCK_MONOTONIC
 * t0_ns), and has stopped (every program returns at once: detaching is slow, and what is
 * in flight then stays in `inflight` as it was). */
bool started;
bool stopped;
__u64 t0_ns;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);	/* sized by the collector */
	__type(key, __u32);		/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);		/* struct request * */
	__type(value, struct io_req);
} inflight SEC(".maps");

/* --max-stacks; this and procs are taken out as the run goes (a spill, a window), twice over
 * (bpf/lib/take.bpf.h) */
TAKE_TABLE(counts, BPF_MAP_TYPE_HASH, struct io_key, struct io_val, 1 << 14);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 14);	/* --max-stacks */
	__type(key, __u64);
	__type(value, struct stack_trace);
} stacks SEC(".maps");

/* Each process's totals (by tgid): its row in the report, exact whatever --max-stacks kept */
TAKE_TABLE(procs, BPF_MAP_TYPE_HASH, __u32, struct io_proc, 8192);	/* sized by the collector */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct io_dev_key);
	__type(value, struct io_dev_val);
} devstats SEC(".maps");

/* Each process (by tgid) as its first request started (struct io_comm). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);	/* sized by the collector */
	__type(key, __u32);
	__type(value, struct io_comm);
} comms SEC(".maps");

/* -a: processes seen for the first time (their tgid), or again under a PID given anew (tgid, 1) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IO_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* One stack scratch per hook that starts a record: an interrupt's issue may nest in a task's
 * insert on one CPU (a program never nests in itself). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IO_HOOK__COUNT);
	__type(key, __u32);
	__type(value, struct io_scratch);
} scratch SEC(".maps");

static const struct io_val zero_val;
static const struct io_proc zero_proc;
static const struct io_dev_val zero_dev;

/* kernels before 5.16 kept the disk in the request itself */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline void count_stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline struct gendisk *rq_disk(struct request *rq)
{
	if (bpf_core_field_exists(struct request_queue, disk))
		return BPF_CORE_READ(rq, q, disk);
	return BPF_CORE_READ((struct request___old *)rq, rq_disk);
}

/* The kernel's REQ_OP_* (the low 8 bits of cmd_flags), by their BTF values. */
static __always_inline __u32 req_op(__u32 cmd_flags)
{
	__u32 op = cmd_flags & 0xff;

	if (op == bpf_core_enum_value(enum req_op, REQ_OP_READ))
		return IO_OP_READ;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE))
		return IO_OP_WRITE;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_FLUSH))
		return IO_OP_FLUSH;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_DISCARD))
		return IO_OP_DISCARD;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_WRITE_ZEROES))
		return IO_OP_WRITE_ZEROES;
	if (op == bpf_core_enum_value(enum req_op, REQ_OP_SECURE_ERASE))
		return IO_OP_SECURE_ERASE;
	return IO_OP_OTHER;
}

#define REQ_BIT(name)	(1u << bpf_core_enum_value(enum req_flag_bits, name))

static __always_inline __u32 req_flags(__u32 cmd_flags)
{
	__u32 f = 0;

	if (cmd_flags & REQ_BIT(__REQ_SYNC))
		f |= IO_F_SYNC;
	if (cmd_flags & REQ_BIT(__REQ_META))
		f |= IO_F_META;
	if (cmd_flags & REQ_BIT(__REQ_FUA))
		f |= IO_F_FUA;
	if (cmd_flags & REQ_BIT(__REQ_PREFLUSH))
		f |= IO_F_PREFLUSH;
	if (cmd_flags & REQ_BIT(__REQ_RAHEAD))
		f |= IO_F_RAHEAD;
	return f;
}

static __always_inline bool dev_wanted(__u32 dev)
{
	for (__u32 i = 0; i < IO_MAX_DEVS; i++) {
		if (i >= ndevs)
			break;
		if (devs[i] == dev)
			return true;
	}
	return false;
}

/* rq->rq_flags & RQF_FLUSH_SEQ: the request is in a flush sequence (the flush machinery's own
 * flush, or a write whose sequence goes on). Kernels whose RQF_ flags are #defines (not in
 * BTF; before enum rqf_flags) had it at bit 4. */
static __always_inline bool in_flush_seq(struct request *rq)
{
	__u32 bit = 4;

	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		bit = bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
	return BPF_CORE_READ(rq, rq_flags) & (1u << bit);
}

/* The flush machinery's own request: a REQ_OP_FLUSH in a flush sequence (nothing else makes
 * a REQ_OP_FLUSH request). */
static __always_inline bool is_flush_rq(struct request *rq)
{
	return (BPF_CORE_READ(rq, cmd_flags) & 0xff) ==
		       bpf_core_enum_value(enum req_op, REQ_OP_FLUSH) && in_flush_seq(rq);
}

/* Without block_io_start, a request first seen at its insertion or issue is not ours when it
 * is in a flush sequence (the machinery's flush is counted at its issue, for the requests it
 * serves) or started before tracing did. */
static __always_inline bool foreign(struct request *rq)
{
	__u64 start = BPF_CORE_READ(rq, start_time_ns);

	if (in_flush_seq(rq))
		return true;
	return start && start < t0_ns;
}

/* Its record into `inflight`, and the record there (NULL: not recorded, counted as a drop) */
static __always_inline struct io_req *record(__u64 rqk, struct io_req *r)
{
	/* BPF_ANY: a request's address is reused once it is freed */
	long err = bpf_map_update_elem(&inflight, &rqk, r, BPF_ANY);

	if (err) {
		count_stat(err == -16 /* EBUSY */ ? IO_STAT_INFLIGHT_BUSY : IO_STAT_INFLIGHT_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&inflight, &rqk);
}

/* The flush queue whose own flush request rq is: the queue's (q->fq) or its hardware
 * context's (hctx->fq), whichever the kernel has whose flush_rq is rq. */
static __always_inline struct blk_flush_queue *flush_queue_of(struct request *rq)
{
	struct blk_flush_queue *fq = NULL;

	if (bpf_core_field_exists(struct request_queue, fq))
		fq = BPF_CORE_READ(rq, q, fq);
	if ((!fq || BPF_CORE_READ(fq, flush_rq) != rq) &&
	    bpf_core_field_exists(struct blk_mq_hw_ctx, fq))
		fq = BPF_CORE_READ(rq, mq_hctx, fq);
	if (!fq || BPF_CORE_READ(fq, flush_rq) != rq)
		return NULL;
	return fq;
}

/* The first of the requests a flush serves (those queued on its flush queue's running list,
 * through rq->queuelist, in the order they came) that is traced: its open record, or NULL
 * when none is, or none of the first IO_FLUSH_WAITERS with more after them (a counted drop). */
static __always_inline struct io_req *flush_waiter(struct blk_flush_queue *fq)
{
	__u64 off = bpf_core_field_offset(struct request, queuelist), k;
	struct list_head *head, *pos;
	struct io_req *w;

	if (BPF_CORE_READ_BITFIELD_PROBED(fq, flush_running_idx))
		head = &fq->flush_queue[1];
	else
		head = &fq->flush_queue[0];
	pos = BPF_CORE_READ(head, next);
	for (int i = 0; i < IO_FLUSH_WAITERS; i++) {
		if (!pos || pos == head)
			break;
		k = (__u64)pos - off;
		w = bpf_map_lookup_elem(&inflight, &k);
		if (w && w->done == IO_REQ_OPEN)
			return w;
		pos = BPF_CORE_READ(pos, next);
	}
	if (pos && pos != head)
		count_stat(IO_STAT_FLUSH_WAITERS);
	return NULL;
}

/* The flush machinery's flush is issued: its record, under the process and stacks of the
 * first traced request it serves, from the time it was made (blk_kick_flush); NULL when it
 * serves no traced request. Its struct request is the same for every flush of the queue: a
 * record there of another flush (an earlier start) is one whose completion went unseen; one
 * of this flush is kept (a flush issued again after a requeue). */
static __always_inline struct io_req *flush_begin(struct request *rq, struct io_req *old,
						  __u64 now)
{
	__u64 start = BPF_CORE_READ(rq, start_time_ns);
	struct blk_flush_queue *fq;
	struct io_req r = {}, *w;

	if (old && old->done == IO_REQ_OPEN) {
		if (!start || old->start_ns == start)
			return old;
		if (!__sync_val_compare_and_swap(&old->done, IO_REQ_OPEN, IO_REQ_ENDED))
			count_stat(IO_STAT_UNSEEN);
	}
	fq = flush_queue_of(rq);
	if (!fq)
		return NULL;
	w = flush_waiter(fq);
	if (!w)
		return NULL;
	r.key = w->key;
	/* REQ_PREFLUSH is what a flush is: not a flag of it */
	r.key.stack.aux = IO_AUX(IO_OP_FLUSH,
				 req_flags(BPF_CORE_READ(rq, cmd_flags)) & ~IO_F_PREFLUSH);
	r.disk = w->disk;
	r.start_ns = start && start <= now ? start : now;
	return record((__u64)rq, &r);
}

/* A process's name, once; with -a announced (waking the collector: its mappings are read
 * before it can exit). -a: a process that is not the one its PID's entry was made by is the PID
 * given again (bpf/lib/pidreuse.bpf.h): their rows (totals and per-stack counts, keyed by tgid)
 * are one, under the newest's name, and it is announced again (its mappings, name and command
 * line read anew). */
_Static_assert(sizeof(struct io_comm) == sizeof(struct pidreuse_kname) &&
	       __builtin_offsetof(struct io_comm, start) ==
	       __builtin_offsetof(struct pidreuse_kname, start), "pid_kname_note's entry");

static __always_inline void note_comm(struct task_struct *task, __u32 tgid)
{
	int r = pid_kname_note(&comms, &notes, task, tgid, task->flags & PF_KTHREAD, trace_all);

	if (r == PIDREUSE_REUSED || r == PIDREUSE_REUSED_UNSAID)
		count_stat(IO_STAT_PIDS_REUSED);
	if (r < 0)
		count_stat(IO_STAT_NOTES_FULL);
}

/* s's first nr frames interned (stack_intern): a global function, its hash loop over up to 127
 * frames verified once, not at each of begin's two stacks in each state it reaches them in
 * (io_start: ~4,600 instructions of the verifier's); a call more for each stack taken. */
__noinline __u64 intern_stack(struct stack_trace *s, __u64 nr)
{
	if (!s)
		return 0;
	return stack_intern(&stacks, s, nr, 0);
}

/* A request starts (in its submitter's context): is it traced, and if so its record, with
 * the process, its stacks and the disk. NULL when it is not traced or the table is full. */
static __always_inline struct io_req *begin(void *ctx, struct request *rq, __u32 hook,
					    __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid(), rqk = (__u64)rq, n;
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = id >> 32, cmd;
	struct io_req r = {};
	struct io_scratch *sc;
	struct gendisk *disk;
	struct pt_regs *regs;
	bool exact;

	if (tgid == self_tgid)
		return NULL;
	if (!trace_all && !bpf_map_lookup_elem(&targets, &tgid) &&
	    !(with_kthreads && (task->flags & PF_KTHREAD)))
		return NULL;
	disk = rq_disk(rq);
	if (!disk)
		return NULL;
	r.key.dev = IO_DEV(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
	if (ndevs && !dev_wanted(r.key.dev))
		return NULL;
	cmd = BPF_CORE_READ(rq, cmd_flags);
	r.start_ns = now;
	r.disk = (__u64)disk;
	r.bytes = BPF_CORE_READ(rq, __data_len);
	r.key.stack.tgid = tgid;
	r.key.stack.aux = IO_AUX(req_op(cmd), req_flags(cmd));
	sc = bpf_map_lookup_elem(&scratch, &hook);
	if (sc) {
		n = capture_kernel_stack(ctx, &sc->kern);
		if (n) {
			r.key.stack.kstack = intern_stack(&sc->kern, n);
			if (!r.key.stack.kstack)
				count_stat(IO_STAT_STACKS_FULL);
		}
		regs = user_regs(NULL, &exact);
		n = capture_user_stack(regs, &sc->user);
		if (n) {
			r.key.stack.ustack = intern_stack(&sc->user, n);
			if (!r.key.stack.ustack)
				count_stat(IO_STAT_STACKS_FULL);
			if (exact)
				r.key.stack.flags = STACK_KEY_USER_EXACT;
		}
	}
	note_comm(task, tgid);
	return record(rqk, &r);
}

/* hist[slot of v]++: slot 0 for 0, then IO_LAT_SUB slots per power of two, the last open */
static __always_inline __u32 lat_slot(__u64 v)
{
	__u32 b, j, s;

	if (!v)
		return 0;
	b = ilog2(v);
	if (b >= IO_LAT_POW)
		return IO_LAT_SLOTS - 1;
	if (b >= IO_LAT_SUB_BITS)
		j = (v >> (b - IO_LAT_SUB_BITS)) & (IO_LAT_SUB - 1);
	else
		j = (v << (IO_LAT_SUB_BITS - b)) & (IO_LAT_SUB - 1);
	s = 1 + b * IO_LAT_SUB + j;
	/* never false, but for the verifier: clang makes b * IO_LAT_SUB + j an OR, whose bound
	 * it knows only by bits (511, not 376), b being a number in [0, 46] (log2.bpf.h); the
	 * empty asm keeps clang from dropping a test it knows is true */
	asm volatile("" : "+r"(s));
	return s < IO_LAT_SLOTS ? s : IO_LAT_SLOTS - 1;
}

static __always_inline __u32 size_slot(__u64 v)
{
	__u32 b;

	if (!v)
		return 0;
	b = ilog2(v);
	return b >= IO_SIZE_POW ? IO_SIZE_SLOTS - 1 : 1 + b;
}

static __always_inline void add_max(__u64 *m, __u64 v)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = *m;

		if (v <= old || __sync_val_compare_and_swap(m, old, v) == old)
			return;
	}
}

/* The request is done: its numbers into the tables, its record out. */
static __always_inline void finish(struct request *rq, __u8 error)
{
	__u64 rqk = (__u64)rq, now = bpf_ktime_get_ns(), lat, queue;
	struct io_dev_key dk;
	struct io_dev_val *d;
	struct io_req *p, r;
	__u32 g = take_gen_now();
	void *counts = take_table(counts, g), *procs = take_table(procs, g);
	struct io_proc *pv;
	struct io_val *v;
	__u32 s, op;

	p = bpf_map_lookup_elem(&inflight, &rqk);
	/* whoever marks it done counts it (block_io_done after block_rq_complete, or on another
	 * CPU): not whoever deletes it, since a delete fails (-EBUSY) when this program
	 * interrupted another one updating the table on this CPU, typically a completion's
	 * interrupt arriving while a task starts a request. Such an entry stays, marked done,
	 * until its request's address is used again. */
	if (!p || __sync_val_compare_and_swap(&p->done, IO_REQ_OPEN, IO_REQ_ENDED))
		return;
	r = *p;
	bpf_map_delete_elem(&inflight, &rqk);
	lat = now > r.start_ns ? now - r.start_ns : 0;
	/* a request never issued (a write of no data with a preflush: the flush machinery's flush
	 * did its work): its whole time is service */
	queue = r.issue_ns > r.start_ns ? r.issue_ns - r.start_ns : 0;
	if (queue > lat)
		queue = lat;
	count_stat(IO_STAT_REQUESTS);

	v = bpf_map_lookup_elem(counts, &r.key);
	if (!v) {
		if (!bpf_map_update_elem(counts, &r.key, &zero_val, BPF_NOEXIST))
			count_stat(IO_STAT_KEYS);
		/* else full, or another CPU made it meanwhile */
		v = bpf_map_lookup_elem(counts, &r.key);
	}
	if (v) {
		__sync_fetch_and_add(&v->requests, 1);
		__sync_fetch_and_add(&v->bytes, r.bytes);
		__sync_fetch_and_add(&v->latency_ns, lat);
		__sync_fetch_and_add(&v->queue_ns, queue);
	} else {
		count_stat(IO_STAT_COUNTS_FULL);
	}
	/* the process's totals do not depend on the per-stack table having room */
	op = IO_AUX_OP(r.key.stack.aux);
	pv = lookup_or_init(procs, &r.key.stack.tgid, &zero_proc);
	if (pv) {
		__sync_fetch_and_add(&pv->requests, 1);
		if (op == IO_OP_DISCARD || op == IO_OP_SECURE_ERASE || op == IO_OP_WRITE_ZEROES)
			__sync_fetch_and_add(&pv->discard_bytes, r.bytes);
		else
			__sync_fetch_and_add(&pv->bytes, r.bytes);
		__sync_fetch_and_add(&pv->latency_ns, lat);
		__sync_fetch_and_add(&pv->queue_ns, queue);
	} else {
		count_stat(IO_STAT_PROCS_FULL);
	}

	dk.dev = r.key.dev;
	dk.op = op;
	d = lookup_or_init(&devstats, &dk, &zero_dev);
	if (!d) {
		count_stat(IO_STAT_DEVS_FULL);
		return;
	}
	if (!d->disk[0]) {
		struct gendisk *disk = (struct gendisk *)r.disk;

		BPF_CORE_READ_STR_INTO(&d->disk, disk, disk_name);
	}
	__sync_fetch_and_add(&d->requests, 1);
	__sync_fetch_and_add(&d->bytes, r.bytes);
	if (error)
		__sync_fetch_and_add(&d->errors, 1);
	__sync_fetch_and_add(&d->latency_ns, lat);
	__sync_fetch_and_add(&d->queue_ns, queue);
	__sync_fetch_and_add(&d->service_ns, lat - queue);
	add_max(&d->max_latency_ns, lat);
	s = lat_slot(lat);
	if (s < IO_LAT_SLOTS)
		__sync_fetch_and_add(&d->latency[s], 1);
	s = lat_slot(queue);
	if (s < IO_LAT_SLOTS)
		__sync_fetch_and_add(&d->queue[s], 1);
	s = lat_slot(lat - queue);
	if (s < IO_LAT_SLOTS)
		__sync_fetch_and_add(&d->service[s], 1);
	s = size_slot(r.bytes);
	if (s < IO_SIZE_SLOTS)
		__sync_fetch_and_add(&d->size[s], 1);
}

SEC("?tp_btf/block_io_start")
int BPF_PROG(io_start, struct request *rq)
{
	__u64 rqk = (__u64)rq;
	struct io_req *old;

	if (!started || stopped)
		return 0;
	/* A request at an address still recorded ends the previous one's record: that one
	 * ended, or this struct request would not be in use again, but neither completion
	 * tracepoint reported it (this kernel skips some under heavy load: a counted drop).
	 * Checked for every request, traced or not, so that no stale record is completed by
	 * another request. */
	old = bpf_map_lookup_elem(&inflight, &rqk);
	if (old && !__sync_val_compare_and_swap(&old->done, IO_REQ_OPEN, IO_REQ_ENDED))
		count_stat(IO_STAT_UNSEEN);
	begin(ctx, rq, IO_HOOK_START, bpf_ktime_get_ns());
	return 0;
}

/* loaded only without block_io_start */
SEC("?tp_btf/block_rq_insert")
int BPF_PROG(io_insert, struct request *rq)
{
	__u64 rqk = (__u64)rq;
	struct io_req *r;

	if (!started || stopped)
		return 0;
	/* a record that ended is no longer this request's */
	r = bpf_map_lookup_elem(&inflight, &rqk);
	if ((r && !r->done) || foreign(rq))
		return 0;
	begin(ctx, rq, IO_HOOK_INSERT, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(io_issue, struct request *rq)
{
	__u64 rqk = (__u64)rq, now;
	struct io_req *r;

	if (!started || stopped)
		return 0;
	now = bpf_ktime_get_ns();
	r = bpf_map_lookup_elem(&inflight, &rqk);
	if (is_flush_rq(rq)) {
		r = flush_begin(rq, r, now);
		if (!r)
			return 0;
	} else if (!r || r->done) {
		if (has_io_start || foreign(rq))
			return 0;
		r = begin(ctx, rq, IO_HOOK_ISSUE, now);
		if (!r)
			return 0;
	}
	/* the last issue counts (a requeued request is issued again); its size now, merges
	 * included */
	r->issue_ns = now;
	r->bytes = BPF_CORE_READ(rq, __data_len);
	return 0;
}

/* A request that completes after tracing stopped was in flight when it stopped: its record
 * says so, for io_sweep (which would take it for one whose completion went unseen). */
static __always_inline void ended_late(struct request *rq)
{
	__u64 rqk = (__u64)rq;
	struct io_req *p = bpf_map_lookup_elem(&inflight, &rqk);

	if (p)
		__sync_val_compare_and_swap(&p->done, IO_REQ_OPEN, IO_REQ_ENDED_LATE);
}

/* The data part of a write in a flush sequence has completed: the sequence goes on (a flush
 * after it), and the request completes again, RQF_FLUSH_SEQ cleared, at its end. */
static __always_inline bool seq_goes_on(struct request *rq)
{
	return in_flush_seq(rq) && !is_flush_rq(rq);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(io_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	if (!started)
		return 0;
	/* a partial completion: the rest of the request goes on */
	if (nr_bytes < BPF_CORE_READ(rq, __data_len) || seq_goes_on(rq))
		return 0;
	if (stopped)
		ended_late(rq);
	else
		finish(rq, error);
	return 0;
}

SEC("?tp_btf/block_io_done")
int BPF_PROG(io_done, struct request *rq)
{
	if (!started || seq_goes_on(rq))
		return 0;
	if (stopped)
		ended_late(rq);
	else
		finish(rq, 0);
	return 0;
}

/* A request merged into the one before or after it (attempt_merge traces the one that goes
 * away): its bios are the other's now, which completes for both, and it is freed with no
 * completion of its own. Its record ends here, counted as merged: before, it stayed open until
 * its struct request was used again or swept, and was counted as a completion_unseen drop,
 * though nothing was lost (its bytes are in the other's, read at issue). */
SEC("?tp_btf/block_rq_merge")
int BPF_PROG(io_merge, struct request *rq)
{
	__u64 rqk = (__u64)rq;
	struct io_req *r;

	if (!started)
		return 0;
	r = bpf_map_lookup_elem(&inflight, &rqk);
	if (r && __sync_val_compare_and_swap(&r->done, IO_REQ_OPEN, IO_REQ_ENDED) == IO_REQ_OPEN)
		count_stat(IO_STAT_MERGED);
	return 0;
}

/* Run by userspace once over `inflight` at the end, after `stopped`, before what is left is
 * read as in flight: a record whose completion reached no program (this kernel delivers none
 * while certain tasks run) and whose struct request was not used again stays there, open.
 * Its request tells whether it ended: __blk_mq_free_request clears mq_hctx (a batch of
 * completions drops the reference to 0 without clearing it), and a request started later at
 * the same address (one not traced, whose start went unseen as well) has a later
 * start_time_ns than the record's start, which comes after its allocation. Such a record is
 * marked ended and counted as completion_unseen; one that cannot be read is too. A request
 * still allocated, with its start, is in flight, and so is one that completed after tracing
 * stopped (IO_REQ_ENDED_LATE, skipped here). */
static long sweep_one(struct bpf_map *map, __u64 *key, struct io_req *r, void *data)
{
	__u64 start = 0;
	struct request *rq;
	void *hctx = NULL;
	int ref = 0;

	if (r->done != IO_REQ_OPEN)
		return 0;
	rq = (struct request *)*key;
	if (!bpf_core_read(&hctx, sizeof(hctx), &rq->mq_hctx) && hctx &&
	    !bpf_core_read(&ref, sizeof(ref), &rq->ref.counter) && ref > 0 &&
	    !bpf_core_read(&start, sizeof(start), &rq->start_time_ns) && start <= r->start_ns)
		return 0;
	/* a completion after the stop, on another CPU, marks its record before its request is
	 * freed: it may have done so since the check above */
	if (__sync_val_compare_and_swap(&r->done, IO_REQ_OPEN, IO_REQ_ENDED) == IO_REQ_OPEN)
		count_stat(IO_STAT_UNSEEN);
	return 0;
}

/* Run by the collector as a task iterator over its own process (bpfutil__run_task_iter): once,
 * at its main thread, over every record. Not a map iterator (iter/bpf_map_elem), which some
 * kernels refuse to load (EPERM, where iter/task loads), failing the whole mode. */
SEC("iter/task")
int io_sweep(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;

	if (t && t->pid == t->tgid)
		bpf_for_each_map_elem(&inflight, sweep_one, NULL, 0);
	return 0;
}
